/// One advertisement as BlueZ reports it: the `ServiceData` and `ManufacturerData` properties of
/// `org.bluez.Device1`.
public struct AdvertisementFrame: Sendable, Hashable {
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// Service data by service UUID (`fcd2` for BTHome, `181a` for the pvvx / ATC1441 formats).
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Manufacturer data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]

    /// Creates a frame.
    public init(address: BluetoothAddress, serviceData: [BluetoothUUID: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:]) {
        self.address = address
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
    }
}

/// What a decoder read from an advertisement (SPEC §7: `decoder`, `packet_id`, `values`).
public struct DecodedAdvertisement: Sendable, Hashable {
    /// The decoder's name: `"bthome_v2"`, `"pvvx"` or `"atc1441"`.
    public var decoder: String
    /// BTHome's packet id (object 0x00), the pvvx / ATC1441 frame counter; nil when the frame has none.
    public var packetID: Int?
    /// The values in frame order, named as SPEC §7 says (`temperature`, `humidity`, `battery`, ...;
    /// repeated names get `_2`, `_3`, ...).
    public var values: JSONObject
    /// Whether the frame was encrypted (and so authenticated: its MIC verified).
    public var encrypted: Bool
    /// The counter of an encrypted BTHome frame, for ``BTHomeReplayGuard``; nil when not encrypted.
    public var counter: UInt32?
    /// BTHome's trigger-based flag (device-information bit 2): the device advertises on events,
    /// not at a regular interval.
    public var triggerBased: Bool

    /// Creates a result.
    public init(
        decoder: String, packetID: Int? = nil, values: JSONObject = JSONObject(), encrypted: Bool = false,
        counter: UInt32? = nil, triggerBased: Bool = false
    ) {
        self.decoder = decoder
        self.packetID = packetID
        self.values = values
        self.encrypted = encrypted
        self.counter = counter
        self.triggerBased = triggerBased
    }
}
