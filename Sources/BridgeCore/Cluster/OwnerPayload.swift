/// The retained `{base}/{device}/owner` payload (SPEC §10):
/// `{"bridge": "kitchen", "adapter": "hci1", "since": <unix s>}`.
///
/// An empty retained payload (the topic deleted) means "no owner"; ``decodeRetained(_:)`` returns `nil` for it.
/// Members other than these three are ignored, so that a later version may add some.
public struct OwnerPayload: Sendable, Hashable {
    /// The id of the owning bridge.
    public var bridge: String
    /// The adapter through which the owner connects (or listens to) the device.
    public var adapter: String
    /// When the claim or handover was published, in Unix seconds (informational: bridges' clocks are not compared).
    public var since: Int64

    /// Creates a payload.
    public init(bridge: String, adapter: String, since: Int64) {
        self.bridge = bridge
        self.adapter = adapter
        self.since = since
    }

    /// Decodes a payload, rejecting anything malformed with a ``ClusterPayloadError``.
    public init(bytes: [UInt8]) throws(ClusterPayloadError) {
        let object = try ClusterJSON.parse(bytes)
        bridge = try ClusterJSON.identifier(try ClusterJSON.member(object, "bridge", ""), "bridge")
        adapter = try ClusterJSON.identifier(try ClusterJSON.member(object, "adapter", ""), "adapter")
        since = try ClusterJSON.integer(try ClusterJSON.member(object, "since", ""), "since", in: 0...Int64(UInt32.max) * 64)
    }

    /// Decodes a retained message: `nil` for the empty payload that deletes the topic.
    public static func decodeRetained(_ bytes: [UInt8]) throws(ClusterPayloadError) -> OwnerPayload? {
        bytes.isEmpty ? nil : try OwnerPayload(bytes: bytes)
    }

    /// The JSON value, members in the SPEC's order.
    public var jsonValue: JSONValue {
        ["bridge": .string(bridge), "adapter": .string(adapter), "since": .integer(since)]
    }

    /// The compact JSON text as UTF-8 bytes.
    public var jsonBytes: [UInt8] { jsonValue.jsonBytes }
}
