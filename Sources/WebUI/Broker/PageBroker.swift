import MQTT

/// The one thing the server does to the broker: publish. A seam, so that tests can stand in for the broker.
public protocol PageBroker: Sendable {
    /// Publishes `payload` on `topic` (QoS 1, not retained); nil when queued, else why not.
    func publish(topic: String, payload: [UInt8]) -> WebError?
}

/// The broker through the project's ``MQTTClient``.
public struct MQTTPageBroker: PageBroker {
    /// The client.
    public let client: MQTTClient

    /// Wraps a client.
    public init(client: MQTTClient) {
        self.client = client
    }

    public func publish(topic: String, payload: [UInt8]) -> WebError? {
        guard let error = client.publish(topic: topic, payload: payload, qos: 1, retain: false) else { return nil }
        if error.code == .noConnection { return WebError(.notConnected, "the broker is not connected") }
        return WebError(.invalidPayload, error.message)
    }
}
