/// BlueZ's D-Bus names and object paths: the one copy for the bridge's BlueZ client (where it is
/// also called `BlueZ`) and the simulator that plays bluetoothd.
public enum BlueZNames {
    /// The bus name bluetoothd owns.
    public static let service = "org.bluez"
    /// `org.bluez.Adapter1`.
    public static let adapter = "org.bluez.Adapter1"
    /// `org.bluez.Device1`.
    public static let device = "org.bluez.Device1"
    /// `org.bluez.GattService1`.
    public static let gattService = "org.bluez.GattService1"
    /// `org.bluez.GattCharacteristic1`.
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    /// `org.bluez.GattDescriptor1`.
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
    /// `org.bluez.Battery1` (bluetoothd's battery plugin, on the device object).
    public static let battery = "org.bluez.Battery1"
    /// `org.bluez.AgentManager1`.
    public static let agentManager = "org.bluez.AgentManager1"
    /// `org.bluez.Agent1`, exported by the client that registers a pairing agent.
    public static let agent1 = "org.bluez.Agent1"
    /// `org.bluez.ProfileManager1`.
    public static let profileManager = "org.bluez.ProfileManager1"
    /// `org.bluez.AdvertisementMonitorManager1`, on the adapter (passive scanning; experimental in 5.66).
    public static let advertisementMonitorManager = "org.bluez.AdvertisementMonitorManager1"
    /// `org.bluez.AdvertisementMonitor1`, exported by the client that registers a monitor.
    public static let advertisementMonitor = "org.bluez.AdvertisementMonitor1"
    /// The root of BlueZ's objects.
    public static let root = "/org/bluez"

    /// `/org/bluez/hci0`.
    public static func adapterPath(_ name: String) -> String {
        root + "/" + name
    }

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public static func devicePath(adapter: String, address: String) -> String {
        adapter + "/dev_" + String(address.uppercased().map { $0 == ":" ? "_" : $0 })
    }

    /// `/org/bluez/hci0/dev_AA_BB_...` → `AA:BB:...` (empty when the path is not a device's).
    public static func address(fromDevicePath path: String) -> String {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return "" }
        return String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
    }

    /// `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX/...` → the device's path (nil above or beside a device).
    public static func devicePath(of path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 4, parts[3].hasPrefix("dev_") else { return nil }
        return "/" + parts[0..<4].joined(separator: "/")
    }

    /// The adapter name in a BlueZ object path: `/org/bluez/hci1/dev_…` → `hci1`; the path itself when it is not
    /// below `/org/bluez/`.
    public static func adapterName(of path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0] == "org", parts[1] == "bluez" else { return path }
        return String(parts[2])
    }

    /// The device object of `address` below the adapter named `adapterName` (`hci0`).
    public static func devicePath(adapterName: String, address: String) -> String {
        devicePath(adapter: adapterPath(adapterName), address: address)
    }

    /// A device's name as advertised: `Name`, else `Alias` unless it is BlueZ's default for a device without a
    /// name (its address with `-`: `A4-C1-38-00-00-05`).
    public static func localName(name: String?, alias: String?, address: BluetoothAddress) -> String? {
        if let name, !name.isEmpty { return name }
        guard let alias, !alias.isEmpty else { return nil }
        if alias.utf8.count == 17, BluetoothAddress(String(alias.map { $0 == "-" ? ":" : $0 })) == address { return nil }
        return alias
    }

    /// `service000a`, `char000b`, `desc000d`: a prefix and the handle as four lowercase hex digits.
    public static func handleComponent(_ prefix: String, _ handle: UInt16) -> String {
        prefix + Hex.encode([UInt8(handle >> 8), UInt8(handle & 0xff)])
    }
}
