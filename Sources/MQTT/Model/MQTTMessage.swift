/// An MQTT application message, published or received.
public struct MQTTMessage: Sendable, Hashable {
    /// The topic name (publishing) or the topic the message was published to (receiving).
    public var topic: String
    /// The payload bytes.
    public var payload: [UInt8]
    /// The quality of service: 0, 1 or 2.
    public var qos: Int
    /// Publishing: ask the broker to retain the message. Receiving: the message was retained.
    public var retain: Bool
    /// MQTT v5 Response Topic property; ignored (and never set) with MQTT 3.1.1.
    public var responseTopic: String?
    /// MQTT v5 Correlation Data property (at most 65535 bytes); ignored (and never set) with MQTT 3.1.1.
    public var correlationData: [UInt8]?

    /// Creates a message.
    public init(
        topic: String,
        payload: [UInt8],
        qos: Int = 0,
        retain: Bool = false,
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.responseTopic = responseTopic
        self.correlationData = correlationData
    }
}
