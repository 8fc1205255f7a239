import BridgeCore

/// A device object as the cores decide on it: what the executor read of BlueZ's `Device1` properties
/// (the executors translate the BlueZ client's snapshots into it).
package struct DeviceSnapshot: Sendable, Hashable {
    /// The object path (`/org/bluez/hci0/dev_…`).
    package var path: String
    package var address: BluetoothAddress
    /// `public` or `random`.
    package var addressType: String
    package var name: String?
    package var alias: String?
    /// The last RSSI BlueZ reported (127: the controller could not measure it).
    package var rssi: Int?
    /// Advertised or resolved service UUIDs.
    package var uuids: [BluetoothUUID]
    /// `Connected`.
    package var connected: Bool
    /// `ServicesResolved`.
    package var servicesResolved: Bool
    /// `Paired` and `Bonded`.
    package var paired: Bool
    package var bonded: Bool
    /// `ServiceData`: advertised service data by service UUID.
    package var serviceData: [BluetoothUUID: [UInt8]]
    /// `ManufacturerData`: advertised manufacturer data by company id.
    package var manufacturerData: [UInt16: [UInt8]]

    /// A snapshot with these properties.
    package init(
        path: String, address: BluetoothAddress, addressType: String = "public", name: String? = nil,
        alias: String? = nil, rssi: Int? = nil, uuids: [BluetoothUUID] = [], connected: Bool = false,
        servicesResolved: Bool = false, paired: Bool = false, bonded: Bool = false,
        serviceData: [BluetoothUUID: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:]
    ) {
        self.path = path
        self.address = address
        self.addressType = addressType
        self.name = name
        self.alias = alias
        self.rssi = rssi
        self.uuids = uuids
        self.connected = connected
        self.servicesResolved = servicesResolved
        self.paired = paired
        self.bonded = bonded
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
    }

    /// The device's name as advertised: `Name`, else `Alias` unless it is BlueZ's default for a device
    /// without a name (``BlueZNames/localName(name:alias:address:)``).
    package var localName: String? { BlueZNames.localName(name: name, alias: alias, address: address) }

    /// The RSSI when the controller measured it (not 127).
    package var validRSSI: Int? { rssi.flatMap { $0 == 127 ? nil : $0 } }
}
