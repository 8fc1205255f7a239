/// The retained `{base}/bridges/{id}/sightings` payload (SPEC §10):
///
/// ```json
/// {"t": 1700000000, "adapters": {"hci0": {"free_slots": 3}},
///  "devices": {"c8123456789a": {"address": "C8:12:34:56:78:9A", "rssi": -61, "adapter": "hci0", "connected": true}}}
/// ```
///
/// `devices` holds every device the bridge's configuration wants that it heard in the last 60 s (or holds a link to),
/// each with the adapter the bridge would use for it (``AdapterChoice``) and the RSSI there; `rssi` is `null` when
/// unknown (a link made without a scan). Members other than these are ignored; an empty retained payload means
/// "no sightings" (``decodeRetained(_:)`` returns `nil`). Encoding writes adapters and devices sorted by key, so
/// equal payloads have equal bytes.
public struct SightingsPayload: Sendable, Hashable {
    /// One adapter of the bridge.
    public struct Adapter: Sendable, Hashable {
        /// Connection slots not in use (`max_connections` minus links connected or connecting).
        public var freeSlots: Int

        /// Creates an adapter entry.
        public init(freeSlots: Int) { self.freeSlots = freeSlots }
    }

    /// One device heard.
    public struct Device: Sendable, Hashable {
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: BluetoothAddress
        /// The RSSI in dBm on ``adapter``, `nil` when unknown.
        public var rssi: Int?
        /// The adapter that hears it (the one the bridge uses or would use).
        public var adapter: String
        /// Whether this bridge holds a link to it.
        public var connected: Bool
        /// `last_seen` (an addition to SPEC §10's entry, for trackers only): when ``rssi`` was heard, in Unix
        /// seconds. Without it an entry only says "heard in the last 60 s", and a tracker nobody hears any more would
        /// go `not_home` up to a minute late.
        public var lastSeen: Int64?

        /// Creates a device entry.
        public init(address: BluetoothAddress, rssi: Int?, adapter: String, connected: Bool, lastSeen: Int64? = nil) {
            self.address = address
            self.rssi = rssi
            self.adapter = adapter
            self.connected = connected
            self.lastSeen = lastSeen
        }
    }

    /// `t`: when the bridge built the payload, in Unix seconds.
    public var time: Int64
    /// The bridge's adapters by name.
    public var adapters: [String: Adapter]
    /// The devices heard, by topic segment.
    public var devices: [String: Device]

    /// Creates a payload.
    public init(time: Int64, adapters: [String: Adapter], devices: [String: Device]) {
        self.time = time
        self.adapters = adapters
        self.devices = devices
    }

    /// The RSSI range accepted from the broker (dBm).
    public static let rssiRange: ClosedRange<Int64> = -128...20

    /// Decodes a payload, rejecting anything malformed with a ``ClusterPayloadError``.
    public init(bytes: [UInt8]) throws(ClusterPayloadError) {
        let object = try ClusterJSON.parse(bytes)
        time = try ClusterJSON.integer(try ClusterJSON.member(object, "t", ""), "t", in: 0...Int64(UInt32.max) * 64)
        var adapters: [String: Adapter] = [:]
        for member in try ClusterJSON.object(try ClusterJSON.member(object, "adapters", ""), "adapters") {
            let path = "adapters.\(member.key)"
            guard BridgeID.isValid(member.key) else {
                throw ClusterPayloadError(.invalidValue, at: path, "adapter name is not [a-z0-9_-]+")
            }
            let entry = try ClusterJSON.object(member.value, path)
            let slots = try ClusterJSON.integer(
                try ClusterJSON.member(entry, "free_slots", path), "\(path).free_slots", in: 0...1000)
            adapters[member.key] = Adapter(freeSlots: Int(slots))
        }
        var devices: [String: Device] = [:]
        for member in try ClusterJSON.object(try ClusterJSON.member(object, "devices", ""), "devices") {
            let path = "devices.\(member.key)"
            guard !member.key.isEmpty else { throw ClusterPayloadError(.invalidValue, at: path, "empty device segment") }
            let entry = try ClusterJSON.object(member.value, path)
            let addressText = try ClusterJSON.string(try ClusterJSON.member(entry, "address", path), "\(path).address")
            guard let address = BluetoothAddress(addressText) else {
                throw ClusterPayloadError(.invalidValue, at: "\(path).address", "\"\(addressText)\" is not a Bluetooth address")
            }
            let rssiValue = try ClusterJSON.member(entry, "rssi", path)
            let rssi: Int? =
                rssiValue.isNull ? nil : Int(try ClusterJSON.integer(rssiValue, "\(path).rssi", in: Self.rssiRange))
            let adapter = try ClusterJSON.identifier(try ClusterJSON.member(entry, "adapter", path), "\(path).adapter")
            let connected = try ClusterJSON.bool(try ClusterJSON.member(entry, "connected", path), "\(path).connected")
            var lastSeen: Int64?
            if let value = entry["last_seen"], !value.isNull {
                lastSeen = try ClusterJSON.integer(value, "\(path).last_seen", in: 0...Int64(UInt32.max) * 64)
            }
            devices[member.key] = Device(address: address, rssi: rssi, adapter: adapter, connected: connected, lastSeen: lastSeen)
        }
        self.adapters = adapters
        self.devices = devices
    }

    /// Decodes a retained message: `nil` for the empty payload that deletes the topic.
    public static func decodeRetained(_ bytes: [UInt8]) throws(ClusterPayloadError) -> SightingsPayload? {
        bytes.isEmpty ? nil : try SightingsPayload(bytes: bytes)
    }

    /// The JSON value: `t`, `adapters`, `devices`, keys sorted.
    public var jsonValue: JSONValue {
        var adapterObject = JSONObject()
        for name in adapters.keys.sorted(by: BridgeID.sortsBefore) {
            adapterObject.append(name, ["free_slots": .integer(Int64(adapters[name]!.freeSlots))])
        }
        var deviceObject = JSONObject()
        for segment in devices.keys.sorted(by: BridgeID.sortsBefore) {
            let device = devices[segment]!
            var entry: JSONObject = [
                "address": .string(device.address.description),
                "rssi": device.rssi.map { .integer(Int64($0)) } ?? .null,
                "adapter": .string(device.adapter),
                "connected": .bool(device.connected),
            ]
            if let lastSeen = device.lastSeen { entry.append("last_seen", .integer(lastSeen)) }
            deviceObject.append(segment, .object(entry))
        }
        return ["t": .integer(time), "adapters": .object(adapterObject), "devices": .object(deviceObject)]
    }

    /// The compact JSON text as UTF-8 bytes.
    public var jsonBytes: [UInt8] { jsonValue.jsonBytes }

    /// Whether the bridge can take one more link on `adapter`.
    public func hasFreeSlot(on adapter: String) -> Bool {
        (adapters[adapter]?.freeSlots ?? 0) > 0
    }
}
