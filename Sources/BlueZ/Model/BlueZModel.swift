import BridgeBase
import DBusKit

/// BlueZ's D-Bus names (BridgeBase's ``BlueZNames``, shared with the simulator), by the
/// module's short name: `BlueZ.device`, `BlueZ.gattCharacteristic`.
public typealias BlueZ = BlueZNames

/// `Device1.AddressType`.
public enum AddressType: String, Sendable, Hashable {
    case `public`
    case random
}

/// A snapshot of an `org.bluez.Device1` object.
public struct BlueZDevice: Sendable, Hashable {
    public var path: String
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var name: String?
    public var alias: String?
    public var rssi: Int?
    /// Advertised or resolved service UUIDs.
    public var uuids: [BluetoothUUID]
    public var connected: Bool
    public var servicesResolved: Bool
    /// `Paired` and `Bonded` (a bond: the keys are stored, the next connection encrypts without pairing).
    public var paired: Bool
    public var bonded: Bool
    public var adapter: String?
    /// `ServiceData`: advertised service data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// `ManufacturerData`: advertised manufacturer data by company id.
    public var manufacturerData: [UInt16: [UInt8]]

    /// Reads the snapshot from Device1 properties; nil without a valid address (in `Address` or
    /// the object path).
    public init?(path: String, properties p: [String: DBusValue]) {
        guard let address = p["Address"]?.string.flatMap({ BluetoothAddress($0) })
            ?? BluetoothAddress(Self.address(fromPath: path))
        else { return nil }
        self.path = path
        self.address = address
        addressType = p["AddressType"]?.string.flatMap(AddressType.init(rawValue:)) ?? .public
        name = p["Name"]?.string
        alias = p["Alias"]?.string
        rssi = p["RSSI"]?.int
        uuids = (p["UUIDs"]?.strings ?? []).compactMap { BluetoothUUID($0) }
        connected = p["Connected"]?.bool ?? false
        servicesResolved = p["ServicesResolved"]?.bool ?? false
        paired = p["Paired"]?.bool ?? false
        bonded = p["Bonded"]?.bool ?? false
        adapter = p["Adapter"]?.string
        serviceData = Self.serviceData(p["ServiceData"])
        manufacturerData = Self.manufacturerData(p["ManufacturerData"])
    }

    /// `ServiceData` (`a{sv}`, each value `ay`): entries with an invalid UUID or no bytes are skipped.
    public static func serviceData(_ value: DBusValue?) -> [BluetoothUUID: [UInt8]] {
        guard let entries = value?.dictEntries, !entries.isEmpty else { return [:] }
        var out: [BluetoothUUID: [UInt8]] = [:]
        for e in entries {
            guard let key = e.key.string, let uuid = BluetoothUUID(key), let bytes = e.value.bytes else { continue }
            out[uuid] = bytes
        }
        return out
    }

    /// `ManufacturerData` (`a{qv}`, each value `ay`).
    public static func manufacturerData(_ value: DBusValue?) -> [UInt16: [UInt8]] {
        guard let entries = value?.dictEntries, !entries.isEmpty else { return [:] }
        var out: [UInt16: [UInt8]] = [:]
        for e in entries {
            guard let key = e.key.int, let id = UInt16(exactly: key), let bytes = e.value.bytes else { continue }
            out[id] = bytes
        }
        return out
    }

    /// The device's name as advertised (SPEC §13: some families are told by it): `Name`, else
    /// `Alias` unless it is BlueZ's default for a device without a name (its address with `-`).
    public var localName: String? { BlueZNames.localName(name: name, alias: alias, address: address) }


    /// `/org/bluez/hci0/dev_AA_BB_...` → `AA:BB:...` (empty when the path is not a device's).
    public static func address(fromPath path: String) -> String { BlueZNames.address(fromDevicePath: path) }
}

/// A snapshot of an `org.bluez.GattService1` object.
public struct GattService: Sendable, Hashable {
    public var path: String
    public var uuid: BluetoothUUID
    public var primary: Bool

    /// Nil without a valid `UUID`.
    public init?(path: String, properties p: [String: DBusValue]) {
        guard let uuid = p["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { return nil }
        self.path = path
        self.uuid = uuid
        primary = p["Primary"]?.bool ?? true
    }
}

/// A snapshot of an `org.bluez.GattCharacteristic1` object.
public struct GattCharacteristic: Sendable, Hashable {
    public var path: String
    public var uuid: BluetoothUUID
    /// The service's object path.
    public var service: String
    /// What `Flags` allow.
    public var properties: CharacteristicProperties
    public var notifying: Bool

    /// Nil without a valid `UUID`.
    public init?(path: String, properties p: [String: DBusValue]) {
        guard let uuid = p["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { return nil }
        self.path = path
        self.uuid = uuid
        service = p["Service"]?.string ?? ("/" + path.split(separator: "/").dropLast().joined(separator: "/"))
        properties = CharacteristicProperties(bluezFlags: p["Flags"]?.strings ?? [])
        notifying = p["Notifying"]?.bool ?? false
    }

    public var canNotify: Bool { properties.canNotify }
    public var canRead: Bool { properties.canRead }
}

/// A snapshot of an `org.bluez.GattDescriptor1` object.
public struct GattDescriptor: Sendable, Hashable {
    public var path: String
    public var uuid: BluetoothUUID
    /// The characteristic's object path.
    public var characteristic: String

    /// Nil without a valid `UUID`.
    public init?(path: String, properties p: [String: DBusValue]) {
        guard let uuid = p["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { return nil }
        self.path = path
        self.uuid = uuid
        characteristic = p["Characteristic"]?.string ?? ("/" + path.split(separator: "/").dropLast().joined(separator: "/"))
    }
}
