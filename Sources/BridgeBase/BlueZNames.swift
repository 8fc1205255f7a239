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

    /// `service000a`, `char000b`, `desc000d`: a prefix and the handle as four lowercase hex digits.
    public static func handleComponent(_ prefix: String, _ handle: UInt16) -> String {
        prefix + Hex.encode([UInt8(handle >> 8), UInt8(handle & 0xff)])
    }
}
