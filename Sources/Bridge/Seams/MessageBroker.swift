import MQTT

/// What the runtime needs of the MQTT client: publishing. ``MQTTClient`` is the real one; tests
/// record what is published.
public protocol MessageBroker: Sendable {
    /// Queues a message; nil when taken, an error while the broker is away (nothing queued).
    @discardableResult
    func publish(_ message: MQTTMessage) -> MQTTError?
    /// Queues `payload` on `topic`; see ``publish(_:)``.
    @discardableResult
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) -> MQTTError?
}

extension MQTTClient: MessageBroker {}

extension MessageBroker {
    /// Publishes text with QoS 1; false when the broker did not take it.
    @discardableResult
    func publish(_ topic: String, text: String, retain: Bool) -> Bool {
        publish(topic: topic, payload: Array(text.utf8), qos: 1, retain: retain) == nil
    }
}
