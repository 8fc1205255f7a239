/// One advertisement as BlueZ reports it: the `ServiceData` and `ManufacturerData` properties of
/// `org.bluez.Device1`.
public struct AdvertisementFrame: Sendable, Hashable {
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// Service data by service UUID (`fcd2` for BTHome, `181a` for the pvvx / ATC1441 formats).
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Manufacturer data by company identifier: BlueZ takes the first two bytes of the AD
    /// structure as the company id (little endian) and hands the rest as the value.
    public var manufacturerData: [UInt16: [UInt8]]
    /// The advertised (or, failing that, BlueZ's cached) local name, when known: families whose
    /// frames carry no real company id (Govee, Inkbird, ThermoPro, SensorPush) are told by it.
    public var name: String?
    /// The service UUIDs the device advertises (BlueZ's `UUIDs`): Mopeka is told by `fee5`.
    public var serviceUUIDs: [BluetoothUUID]

    /// Creates a frame.
    public init(
        address: BluetoothAddress, serviceData: [BluetoothUUID: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:],
        name: String? = nil, serviceUUIDs: [BluetoothUUID] = []
    ) {
        self.address = address
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.name = name
        self.serviceUUIDs = serviceUUIDs
    }
}

/// What a decoder read from an advertisement (SPEC §7: `decoder`, `packet_id`, `values`).
public struct DecodedAdvertisement: Sendable, Hashable {
    /// The decoder's name: `"bthome_v2"`, `"pvvx"`, `"atc1441"`, or a family of SPEC §13
    /// (`"xiaomi"`, `"govee"`, ...).
    public var decoder: String
    /// The maker, where the frame or the name tells it (SPEC §13: `"Govee"`, `"Xiaomi"`, ...).
    public var manufacturer: String?
    /// The model, where the frame or the name tells it (`"H5075"`, `"LYWSD03MMC"`, ...).
    public var model: String?
    /// BTHome's packet id (object 0x00), the pvvx / ATC1441 frame counter; nil when the frame has none.
    public var packetID: Int?
    /// The values in frame order, named as SPEC §7 says (`temperature`, `humidity`, `battery`, ...;
    /// repeated names get `_2`, `_3`, ...).
    public var values: JSONObject
    /// Whether the frame was encrypted (and so authenticated: its MIC verified).
    public var encrypted: Bool
    /// The counter of an encrypted frame (BTHome, MiBeacon, Victron), for ``BTHomeReplayGuard``;
    /// nil when not encrypted.
    public var counter: UInt32?
    /// How many low bits of ``counter`` the format sends: 32, or 8 for MiBeacon v2/v3, whose
    /// counter wraps at 256 (``BTHomeReplayGuard/accept(counter:bits:)`` compares it modulo 256).
    public var counterBits: Int
    /// BTHome's trigger-based flag (device-information bit 2): the device advertises on events,
    /// not at a regular interval.
    public var triggerBased: Bool

    /// Creates a result.
    public init(
        decoder: String, packetID: Int? = nil, values: JSONObject = JSONObject(), encrypted: Bool = false,
        counter: UInt32? = nil, counterBits: Int = 32, triggerBased: Bool = false, manufacturer: String? = nil,
        model: String? = nil
    ) {
        self.decoder = decoder
        self.manufacturer = manufacturer
        self.model = model
        self.packetID = packetID
        self.values = values
        self.encrypted = encrypted
        self.counter = counter
        self.counterBits = counterBits
        self.triggerBased = triggerBased
    }
}
