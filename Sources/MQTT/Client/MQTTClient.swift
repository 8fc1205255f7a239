import BridgeBase
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
/// The network I/O runs on a ``PollLoop``: one given to ``init(configuration:logger:loop:)``
/// and shared with other participants (the bridge's D-Bus connection), or, without one, a loop of
/// the client's own. libmosquitto starts no thread. The client reconnects forever with exponential
/// backoff and re-subscribes after every reconnection. All methods are thread-safe.
///
/// Publishing on the loop's thread (from a participant's `handle`, where BLE notifications are
/// read) queues the message and writes it when the turn ends, together with the turn's other
/// publishes: no extra wake-up. Publishing from any other thread hands the message to the loop
/// and wakes it; it is written in the turn that wake-up starts.
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
    ///
    /// - Parameter loop: the loop that runs the client's I/O. Its owner starts and stops it;
    ///   ``disconnect()`` only detaches the client from it. If the loop stops first, the client
    ///   stops too (it reports no disconnection event then). `nil` (the default): the client
    ///   creates a loop of its own (its thread is named `mqtt`), starts it in ``start()`` and stops
    ///   it in ``disconnect()``.
    public init(configuration: MQTTConfiguration, logger: Logger, loop: PollLoop? = nil) {
        self.configuration = configuration
        let (messages, messageContinuation) = AsyncStream.makeStream(of: MQTTMessage.self)
        let (events, eventContinuation) = AsyncStream.makeStream(of: MQTTConnectionEvent.self)
        self.messages = messages
        self.events = events
        self.session = MosquittoSession(
            configuration: configuration,
            logger: logger,
            loop: loop,
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
    /// Thread-safe and cheap; never waits for the network. On the loop's thread the message is
    /// queued in libmosquitto and written when the turn ends (one write for the turn's
    /// publishes); from another thread it is validated, handed to the loop, and the loop is woken.
    ///
    /// - Returns: `nil` when queued; an error with code ``MQTTError/Code/noConnection`` while the
    ///   client is not connected (nothing is queued: buffer and publish again after
    ///   ``MQTTConnectionEvent/connected``), or another code if the message is invalid (topic,
    ///   QoS, payload size) or, on the loop's thread, rejected by libmosquitto for this broker
    ///   (QoS or packet size above its maximum). A message handed over from another thread that
    ///   libmosquitto rejects on the loop is logged at warning level; if the connection is lost
    ///   before the loop takes it, a QoS 0 message is dropped (as libmosquitto drops queued QoS 0
    ///   packets) and a QoS 1/2 message is sent after the reconnection.
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
    /// sends DISCONNECT (so the broker does not publish the will), detaches the client from its
    /// loop (stopping the loop only if the client created it) and finishes ``messages`` and
    /// ``events``. Publishes made before the call, from any thread, are sent first. The client
    /// cannot be started again afterwards. A shared loop must be running for DISCONNECT to be sent
    /// (if it is not, the client is detached at once).
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
