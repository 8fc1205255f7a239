/// A change of an ``MQTTClient``'s connection to its broker.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// The broker accepted the connection (CONNACK success); remembered subscriptions were re-sent.
    case connected
    /// An established connection ended: lost, closed by the broker, or closed by ``MQTTClient/disconnect()``.
    /// Failed connection attempts are logged, not reported here.
    case disconnected(reason: String)
}
