import BridgeBase
import CMosquitto
import Logging
import Synchronization

/// The internal box that owns the libmosquitto handle and its callbacks, and drives the
/// connection as a ``PollParticipant`` of a ``PollLoop``: no thread of its own.
///
/// libmosquitto calls back with an `Unmanaged` pointer to this box as its `obj`.
///
/// **Threads.** Every libmosquitto call after `init` is made on the loop's thread (setup in `init`
/// happens before the session is on any loop). Other threads never call libmosquitto: their
/// publishes, subscriptions and stop requests go through ``commands`` (in order) and
/// `loop.wake()`, and the loop hands them over at the end of the turn it wakes for. This is the
/// safe choice with libmosquitto 2.0.11, whose mutexes do not cover everything a concurrent
/// `mosquitto_publish` touches: it reads `sock`, `max_qos`, `retain_available` and
/// `maximum_packet_size` unlocked while `handle__connack` / `net__socket_close` write them on
/// the loop thread, `mosquitto_want_write` reads `out_packet` unlocked while `packet__queue`
/// appends to it, and it would run our log callback on the publishing thread (upstream fixed one
/// such race later: `next_msg_out` in `mosquitto_loop`, 2.0.15). On the loop thread itself, the
/// value hot path, a publish goes straight to libmosquitto.
///
/// **Threaded mode.** `mosquitto_threaded_set(true)` (`mosq_ts_external`): with `false`,
/// `packet__queue` calls `packet__write` at once for every packet queued outside a callback, one
/// `write` per publish. In threaded mode it only queues, and the session writes the turn's packets
/// together when the turn ends (``PollParticipant/turnEnded()``).
///
/// State shared with other threads is in atomics and mutexes; the plain `var`s are touched on
/// the loop thread only, hence `@unchecked Sendable`.
final class MosquittoSession: @unchecked Sendable {
    enum Lifecycle {
        case idle, running, stopping, stopped
    }

    let configuration: MQTTConfiguration
    let logger: Logger
    let brokerURL: String
    let isV5: Bool
    let usesTLS: Bool
    let handle: OpaquePointer
    let keepAliveSeconds: Int32
    let messageContinuation: AsyncStream<MQTTMessage>.Continuation
    let eventContinuation: AsyncStream<MQTTConnectionEvent>.Continuation
    /// The loop that drives the connection.
    let loop: PollLoop
    /// The session created `loop` (no loop was given): it starts it and stops it with itself.
    let ownsLoop: Bool

    // Shared between threads.
    let connected = Atomic<Bool>(false)
    /// Set once the session is detached from its loop: nothing drives it any more.
    let exited = Atomic<Bool>(false)
    let lifecycle = Mutex(Lifecycle.idle)
    let tracker = Mutex(PublishTracker())
    let commands = CommandQueue()
    let connectedWaiters = WaiterList()
    let exitWaiters = WaiterList()

    // Loop thread only.
    var state: ConnectionState

    init(
        configuration: MQTTConfiguration,
        logger: Logger,
        loop: PollLoop?,
        messageContinuation: AsyncStream<MQTTMessage>.Continuation,
        eventContinuation: AsyncStream<MQTTConnectionEvent>.Continuation
    ) {
        precondition(Mosquitto.initialized, "mosquitto_lib_init failed")
        self.configuration = configuration
        self.logger = logger
        self.brokerURL = configuration.brokerURL
        self.isV5 = configuration.protocolVersion == .v5
        self.usesTLS = configuration.tls != nil
        self.messageContinuation = messageContinuation
        self.eventContinuation = eventContinuation
        self.loop = loop ?? PollLoop(name: "mqtt")
        self.ownsLoop = loop == nil
        let keepAlive = configuration.keepAlive.components.seconds
        self.keepAliveSeconds = Int32(clamping: min(max(keepAlive, 5), 65535))
        self.state = ConnectionState(
            backoff: Backoff(
                initial: configuration.reconnectDelay, maximum: configuration.maxReconnectDelay, multiplier: 2,
                jitter: 0, seed: 0))

        let id = configuration.clientID
        guard let handle = id.isEmpty ? mosquitto_new(nil, true, nil) : mosquitto_new(id, true, nil) else {
            fatalError("mosquitto_new failed: \(Mosquitto.describe(Mosquitto.errErrno))")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        configureHandle()
    }

    deinit {
        // Only reached once the loop no longer holds the session (never started, or detached).
        mosquitto_destroy(handle)
    }

    var isConnected: Bool {
        connected.load(ordering: .acquiring)
    }

    // MARK: - Operations (any thread)

    func start() {
        let shouldStart = lifecycle.withLock { state in
            guard case .idle = state else { return false }
            state = .running
            return true
        }
        guard shouldStart else {
            logger.debug("MQTT start() ignored: the client was already started")
            return
        }
        if ownsLoop { loop.start() }
        // The first turn that polls the session makes the first attempt (on the loop thread).
        loop.add(self)
    }

    /// Publishes: on the loop thread, queued in libmosquitto now and written when the turn ends;
    /// from another thread, validated now, then queued for the loop, which is woken.
    func publish(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, responseTopic: String?, correlationData: [UInt8]?
    ) -> MQTTError? {
        guard connected.load(ordering: .acquiring) else {
            return MQTTError.notConnected
        }
        if loop.isCurrentThread {
            // Commands other threads queued earlier go first (a subscribe before its probe).
            if commands.hasPending { runCommands() }
            return publishOnLoop(
                topic: topic, payload: payload, qos: qos, retain: retain, responseTopic: responseTopic,
                correlationData: correlationData)
        }
        if let error = Mosquitto.validatePublish(
            topic: topic, payloadCount: payload.count, qos: qos, responseTopic: responseTopic,
            correlationData: correlationData, isV5: isV5)
        {
            return error
        }
        commands.append(
            .publish(
                MQTTMessage(
                    topic: topic, payload: payload, qos: qos, retain: retain, responseTopic: responseTopic,
                    correlationData: correlationData)))
        loop.wake()
        return nil
    }

    func subscribe(_ filter: String, qos: Int) {
        let qosValue = Int32(clamping: min(max(qos, 0), 2))
        if loop.isCurrentThread {
            if commands.hasPending { runCommands() }
            subscribeOnLoop(filter, qos: qosValue)
        } else {
            commands.append(.subscribe(filter: filter, qos: qosValue))
            loop.wake()
        }
    }

    func waitUntilConnected() async {
        await connectedWaiters.wait { connected.load(ordering: .acquiring) || exited.load(ordering: .acquiring) }
    }

    /// Waits (at most `drainTimeout`) until every QoS 1/2 publish is acknowledged, sends DISCONNECT,
    /// detaches the session from its loop (and stops the loop if the session owns it) and finishes
    /// the streams.
    ///
    /// Runs in an unstructured task so that the caller's cancellation (a service shutting down)
    /// does not skip the drain; every wait is bounded anyway (on the loop).
    func disconnect(drainTimeout: Duration = .seconds(2)) async {
        await Task { await self.performDisconnect(drainTimeout: drainTimeout) }.value
    }

    func performDisconnect(drainTimeout: Duration) async {
        enum Action { case finishOnly, stop, waitForExit }
        let action = lifecycle.withLock { state -> Action in
            switch state {
            case .idle:
                state = .stopped
                return .finishOnly
            case .running:
                state = .stopping
                return .stop
            case .stopping, .stopped:
                return .waitForExit
            }
        }
        switch action {
        case .finishOnly:
            finishStreams()
            exited.store(true, ordering: .releasing)
            connectedWaiters.resumeAll()
            return
        case .waitForExit:
            await exitWaiters.wait { exited.load(ordering: .acquiring) }
            return
        case .stop:
            break
        }
        requestStop(force: false, drainTimeout: drainTimeout)
        await exitWaiters.wait { exited.load(ordering: .acquiring) }
        lifecycle.withLock { $0 = .stopped }
        finishStreams()
    }

    /// Stops without waiting (the owning client is being deinitialised): DISCONNECT is queued and
    /// written if the socket takes it at once.
    func abandon() {
        let wasRunning = lifecycle.withLock { state -> Bool in
            defer { state = .stopped }
            if case .running = state { return true }
            if case .stopping = state { return true }
            return false
        }
        if wasRunning {
            requestStop(force: true, drainTimeout: .zero)
        }
        finishStreams()
    }

    /// Hands a stop to the loop, after the commands queued before it.
    private func requestStop(force: Bool, drainTimeout: Duration) {
        commands.append(.stop(force: force, drainTimeout: drainTimeout))
        loop.wake()
        if !loop.isRunning {
            // Nothing runs the session (a shared loop that was never started or has stopped):
            // detach it now (`detached()` runs here, the loop being idle).
            loop.remove(self)
        }
    }

    /// Ends the TCP connection without a DISCONNECT packet, as a crash or a network failure would
    /// (the broker then publishes the will). The client reconnects as after any connection loss.
    func dropConnectionWithoutDisconnect() {
        if loop.isCurrentThread {
            dropConnectionOnLoop()
        } else {
            commands.append(.dropConnection)
            loop.wake()
        }
    }

    /// The number of QoS 1/2 publishes not yet acknowledged.
    var pendingAcknowledgements: Int {
        tracker.withLock { $0.pendingAcknowledgements }
    }

    func finishStreams() {
        messageContinuation.finish()
        eventContinuation.finish()
    }
}
