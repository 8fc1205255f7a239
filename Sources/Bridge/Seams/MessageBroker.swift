import MQTT

/// What the runtime needs of the MQTT client: publishing, subscribing, the messages of the
/// subscriptions and the connection's changes. ``MQTTClient`` is the real one; tests use an
/// in-memory fake that records what is published and delivers what a test sends.
public protocol MessageBroker: Sendable {
    /// Queues a message; nil when taken, an error while the broker is away (nothing queued).
    @discardableResult
    func publish(_ message: MQTTMessage) -> MQTTError?
    /// Queues `payload` on `topic`; see ``publish(_:)``.
    @discardableResult
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) -> MQTTError?
    /// Subscribes to a topic filter: now if connected, and again after every reconnection.
    func subscribe(_ filter: String, qos: Int)
    /// Whether the broker has accepted the connection and it has not ended since.
    var isConnected: Bool { get }
    /// The messages of the subscriptions, in arrival order. One consumer.
    var messages: AsyncStream<MQTTMessage> { get }
    /// The connection's changes: `connected` after every (re)connection, `disconnected` when an
    /// established connection ends. One consumer.
    var events: AsyncStream<MQTTConnectionEvent> { get }
}

extension MQTTClient: MessageBroker {}

extension MessageBroker {
    /// Publishes text with QoS 1; false when the broker did not take it.
    @discardableResult
    func publish(_ topic: String, text: String, retain: Bool) -> Bool {
        publish(topic: topic, payload: Array(text.utf8), qos: 1, retain: retain) == nil
    }
}
