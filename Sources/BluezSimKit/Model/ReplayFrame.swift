/// One captured advertisement a peripheral sends again (`replay:` of a scenario device): the
/// service data and manufacturer data of the frame, and the name and service UUIDs it advertised.
///
/// A device with frames advertises them in turn, one per advertisement, at its advertising
/// interval, and starts again after the last. As in BlueZ, each report replaces the entries of
/// the UUIDs and company ids it carries and leaves the others (`ServiceData` and
/// `ManufacturerData` keep what an earlier frame set); advertised UUIDs add up; the name is the
/// frame's, else the device's `name`.
public struct ReplayFrame: Sendable, Equatable {
    /// Service data by full 128-bit UUID.
    public var serviceData: [String: [UInt8]]
    /// Manufacturer data by company id (the bytes after the two bytes of the id, as BlueZ gives them).
    public var manufacturerData: [UInt16: [UInt8]]
    /// The local name this frame advertised; nil: the device's `name`.
    public var name: String?
    /// Service UUIDs this frame advertised (full 128-bit form).
    public var uuids: [String]

    /// Creates a frame.
    public init(serviceData: [String: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:],
                name: String? = nil, uuids: [String] = []) {
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.name = name
        self.uuids = uuids
    }
}
