import DBusKit

/// BlueZ's D-Bus names.
public enum BlueZ {
    public static let service = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
}

/// A snapshot of an `org.bluez.Device1` object.
public struct BlueZDevice: Sendable, Hashable {
    public var path: String
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    public var name: String?
    public var alias: String?
    public var rssi: Int?
    /// Advertised or resolved service UUIDs, lowercase 128-bit.
    public var uuids: [String]
    public var connected: Bool
    public var servicesResolved: Bool
    public var adapter: String?

    /// Reads the snapshot from Device1 properties.
    public init(path: String, properties p: [String: DBusValue]) {
        self.path = path
        address = p["Address"]?.string ?? Self.address(fromPath: path)
        addressType = p["AddressType"]?.string ?? "public"
        name = p["Name"]?.string
        alias = p["Alias"]?.string
        rssi = p["RSSI"]?.int
        uuids = (p["UUIDs"]?.strings ?? []).map { $0.lowercased() }
        connected = p["Connected"]?.bool ?? false
        servicesResolved = p["ServicesResolved"]?.bool ?? false
        adapter = p["Adapter"]?.string
    }

    /// `/org/bluez/hci0/dev_AA_BB_...` → `AA:BB:...`.
    public static func address(fromPath path: String) -> String {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return "" }
        return last.dropFirst(4).replacingOccurrences(of: "_", with: ":")
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of a: Character, with b: Character) -> String {
        String(map { $0 == a ? b : $0 })
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of a: String, with b: String) -> String {
        replacingOccurrences(of: Character(a), with: Character(b))
    }
}

/// A snapshot of an `org.bluez.GattService1` object.
public struct GattService: Sendable, Hashable {
    public var path: String
    public var uuid: String
    public var primary: Bool

    public init(path: String, properties p: [String: DBusValue]) {
        self.path = path
        uuid = (p["UUID"]?.string ?? "").lowercased()
        primary = p["Primary"]?.bool ?? true
    }
}

/// A snapshot of an `org.bluez.GattCharacteristic1` object.
public struct GattCharacteristic: Sendable, Hashable {
    public var path: String
    public var uuid: String
    public var service: String
    public var flags: Set<String>
    public var notifying: Bool

    public init(path: String, properties p: [String: DBusValue]) {
        self.path = path
        uuid = (p["UUID"]?.string ?? "").lowercased()
        service = p["Service"]?.string ?? ("/" + path.split(separator: "/").dropLast().joined(separator: "/"))
        flags = Set(p["Flags"]?.strings ?? [])
        notifying = p["Notifying"]?.bool ?? false
    }

    public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    public var canRead: Bool { flags.contains("read") }
    public var canWrite: Bool { flags.contains("write") || flags.contains("reliable-write") }
    public var canWriteWithoutResponse: Bool { flags.contains("write-without-response") }
}
