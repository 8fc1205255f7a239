import Logging

/// An MQTT client for one broker, built on libmosquitto.
///
/// ```swift
/// let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1", clientID: "bridge"),
///                         logger: logger)
/// client.subscribe("ble/+/+/+/set")
/// client.start()
/// await client.waitUntilConnected()
/// client.publish(topic: "ble/bridge/state", payload: Array("online".utf8), qos: 1, retain: true)
/// for await message in client.messages { ... }
/// ```
///
/// The network I/O runs on a dedicated thread that drives libmosquitto; the client reconnects
/// forever with exponential backoff and re-subscribes after every reconnection. All methods are
/// thread-safe.
public final class MQTTClient: Sendable {
    /// The configuration the client was created with.
    public let configuration: MQTTConfiguration

    /// Incoming messages for the subscribed filters, in arrival order. Meant for one consumer;
    /// finishes after ``disconnect()``.
    public let messages: AsyncStream<MQTTMessage>

    /// Connection events: ``MQTTConnectionEvent/connected`` after every successful (re)connection,
    /// ``MQTTConnectionEvent/disconnected(reason:)`` when an established connection ends. Meant for
    /// one consumer; finishes after ``disconnect()``.
    public let events: AsyncStream<MQTTConnectionEvent>

    let session: MosquittoSession

    /// Creates a client. Nothing happens on the network until ``start()``.
    ///
    /// Invalid TLS file settings or a will that libmosquitto rejects are logged at error level.
    public init(configuration: MQTTConfiguration, logger: Logger) {
        self.configuration = configuration
        let (messages, messageContinuation) = AsyncStream.makeStream(of: MQTTMessage.self)
        let (events, eventContinuation) = AsyncStream.makeStream(of: MQTTConnectionEvent.self)
        self.messages = messages
        self.events = events
        self.session = MosquittoSession(
            configuration: configuration,
            logger: logger,
            messageContinuation: messageContinuation,
            eventContinuation: eventContinuation)
    }

    deinit {
        session.abandon()
    }

    /// Starts connecting in the background and returns at once.
    ///
    /// A broker that is not reachable is not an error: the client retries forever, waiting
    /// ``MQTTConfiguration/reconnectDelay`` after the first failure and doubling the delay up to
    /// ``MQTTConfiguration/maxReconnectDelay``. Each failed attempt is logged once at warning level
    /// with its reason; a successful connection is logged at info level as
    /// `connected to mqtt://host:port`. After a connection loss it reconnects the same way.
    /// Calling `start()` again, or after ``disconnect()``, does nothing.
    public func start() {
        session.start()
    }

    /// Publishes a message (its response topic and correlation data are sent as MQTT v5
    /// properties; with MQTT 3.1.1 they are ignored).
    ///
    /// Thread-safe and cheap: the message is queued for the network thread; this never waits for
    /// the network.
    ///
    /// - Returns: `nil` when queued; an error with code ``MQTTError/Code/noConnection`` while the
    ///   client is not connected (nothing is queued: buffer and publish again after
    ///   ``MQTTConnectionEvent/connected``), or another code if libmosquitto rejects the message
    ///   (invalid topic or QoS, oversized payload).
    @discardableResult
    public func publish(_ message: MQTTMessage) -> MQTTError? {
        session.publish(
            topic: message.topic,
            payload: message.payload,
            qos: message.qos,
            retain: message.retain,
            responseTopic: message.responseTopic,
            correlationData: message.correlationData)
    }

    /// Publishes `payload` on `topic`; see ``publish(_:)``.
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false) -> MQTTError? {
        session.publish(
            topic: topic, payload: payload, qos: qos, retain: retain, responseTopic: nil, correlationData: nil)
    }

    /// Subscribes to a topic filter: now if connected, and again after every reconnection (the
    /// filter is remembered). Subscribing again to the same filter updates its QoS. QoS is
    /// clamped to 0...2.
    public func subscribe(_ filter: String, qos: Int = 1) {
        session.subscribe(filter, qos: qos)
    }

    /// Returns when the client is connected (at once if it already is), when the task is
    /// cancelled, or when the client has been stopped with ``disconnect()``.
    public func waitUntilConnected() async {
        await session.waitUntilConnected()
    }

    /// Whether the broker has accepted the connection and it has not ended since.
    public var isConnected: Bool {
        session.isConnected
    }

    /// Disconnects cleanly: waits (at most ~2 s) until queued QoS 1/2 publishes are acknowledged,
    /// sends DISCONNECT (so the broker does not publish the will), stops the network thread and
    /// finishes ``messages`` and ``events``. The client cannot be started again afterwards.
    /// Cancelling the calling task does not cut the drain short; the whole call is bounded
    /// (about 2 s to drain, about 2 s more if the broker does not take the DISCONNECT).
    public func disconnect() async {
        await session.disconnect()
    }

    /// The number of QoS 1/2 publishes the broker has not acknowledged yet.
    public var pendingAcknowledgements: Int {
        session.pendingAcknowledgements
    }

    /// Test hook: ends the TCP connection without DISCONNECT, like a crash or a network failure
    /// (the broker publishes the will). The client then reconnects as after any connection loss.
    func dropConnectionWithoutDisconnect() {
        session.dropConnectionWithoutDisconnect()
    }
}
