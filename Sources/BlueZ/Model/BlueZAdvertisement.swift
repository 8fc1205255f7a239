import BridgeBase

/// What BlueZ reported of one advertisement of a device: its `Device1` `RSSI`, `ServiceData` and
/// `ManufacturerData` after a `PropertiesChanged` that touched any of them.
///
/// BlueZ 5.66 with `DuplicateData: true` signals every advertising report: `RSSI` with the
/// `ServiceData` (or `ManufacturerData`) it carried, also when the bytes did not change; reports
/// without data change only `RSSI`. ``dataChanged`` tells the two apart. BlueZ never clears the
/// `ManufacturerData` or `ServiceData` entries a later report lacks, and a device that rotates
/// advertisement sets makes the values alternate.
public struct BlueZAdvertisement: Sendable, Hashable {
    /// The device object's path.
    public var path: String
    /// The device's address.
    public var address: BluetoothAddress
    /// The advertisement's RSSI (dBm), when BlueZ has one.
    public var rssi: Int?
    /// Service data by service UUID (all BlueZ holds, not only what changed).
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Manufacturer data by company id.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Whether `ServiceData` or `ManufacturerData` was part of the change.
    public var dataChanged: Bool
    /// The address's type (`Device1.AddressType`): a resolvable private address is `random`.
    public var addressType: AddressType
    /// The device's advertised name (``BlueZDevice/localName``: `Name`, else a non-default
    /// `Alias`); it rarely changes, and is parsed again only when it does.
    public var name: String?
    /// The service UUIDs the device advertises (`UUIDs`), parsed again only when they change.
    public var serviceUUIDs: [BluetoothUUID]

    /// Creates a report.
    public init(
        path: String, address: BluetoothAddress, rssi: Int?, serviceData: [BluetoothUUID: [UInt8]],
        manufacturerData: [UInt16: [UInt8]], dataChanged: Bool, addressType: AddressType = .public,
        name: String? = nil, serviceUUIDs: [BluetoothUUID] = []
    ) {
        self.name = name
        self.serviceUUIDs = serviceUUIDs
        self.path = path
        self.address = address
        self.rssi = rssi
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.dataChanged = dataChanged
        self.addressType = addressType
    }
}
