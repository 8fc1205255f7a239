/// The retained `{base}/{tracker}/presence` payload (SPEC §12):
///
/// ```json
/// {"state": "home", "rssi": -67, "bridge": "kitchen", "last_seen": 1700000000}
/// ```
///
/// `rssi` is `null` when no valid reading is known (and always once `not_home`); `bridge` is the bridge that hears
/// the tracker best (the room; this bridge's id without a cluster), for `not_home` the one that heard it last;
/// `last_seen` is when it was last heard, in Unix seconds, `null` when never since the bridge started. Decoding
/// ignores other members, so that a later version may add some.
public struct PresencePayload: Sendable, Hashable {
    /// `home` or `not_home`: Home Assistant's `device_tracker` states.
    public enum State: String, Sendable, Hashable {
        /// Heard within `away_after`.
        case home
        /// Not heard (by any bridge) for `away_after`.
        case notHome = "not_home"
    }

    /// `state`.
    public var state: State
    /// `rssi` in dBm (smoothed), `nil` for `null`.
    public var rssi: Int?
    /// `bridge`: the id of the bridge that hears it best.
    public var bridge: String
    /// `last_seen` in Unix seconds, `nil` for `null`.
    public var lastSeen: Int64?

    /// Creates a payload.
    public init(state: State, rssi: Int?, bridge: String, lastSeen: Int64?) {
        self.state = state
        self.rssi = rssi
        self.bridge = bridge
        self.lastSeen = lastSeen
    }

    /// The JSON value, members in the SPEC's order.
    public var jsonValue: JSONValue {
        [
            "state": .string(state.rawValue), "rssi": rssi.map { .integer(Int64($0)) } ?? .null,
            "bridge": .string(bridge), "last_seen": lastSeen.map { .integer($0) } ?? .null,
        ]
    }

    /// The compact JSON text as UTF-8 bytes.
    public var jsonBytes: [UInt8] { jsonValue.jsonBytes }

    /// Decodes a payload (another bridge's, or this one's from before a restart), rejecting anything malformed.
    public init(bytes: [UInt8]) throws(ClusterPayloadError) {
        let object = try ClusterJSON.parse(bytes)
        let stateText = try ClusterJSON.string(try ClusterJSON.member(object, "state", ""), "state")
        guard let state = State(rawValue: stateText) else {
            throw ClusterPayloadError(.invalidValue, at: "state", "\"\(stateText)\" is neither home nor not_home")
        }
        self.state = state
        let rssi = try ClusterJSON.member(object, "rssi", "")
        self.rssi = rssi.isNull ? nil : Int(try ClusterJSON.integer(rssi, "rssi", in: SightingsPayload.rssiRange))
        bridge = try ClusterJSON.identifier(try ClusterJSON.member(object, "bridge", ""), "bridge")
        let seen = try ClusterJSON.member(object, "last_seen", "")
        lastSeen = seen.isNull ? nil : try ClusterJSON.integer(seen, "last_seen", in: 0...Int64(UInt32.max) * 64)
    }

    /// Decodes a retained message: `nil` for the empty payload that deletes the topic.
    public static func decodeRetained(_ bytes: [UInt8]) throws(ClusterPayloadError) -> PresencePayload? {
        bytes.isEmpty ? nil : try PresencePayload(bytes: bytes)
    }
}
