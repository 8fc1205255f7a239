import BridgeBase
import CMosquitto
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The internal box that owns the libmosquitto handle, its callbacks and the network thread.
///
/// libmosquitto calls back with `Unmanaged` pointer to this box as its `obj`. All callbacks run on
/// the network thread (the handle is in threaded mode, so `mosquitto_publish` & co. only queue
/// packets and wake the loop). State shared with other threads is in atomics and mutexes; the few
/// plain `var`s are touched by the network thread only, hence `@unchecked Sendable`.
///
/// The network thread is our own rather than `mosquitto_loop_start`'s: libmosquitto's built-in
/// reconnect loop (`mosquitto_loop_forever`) retries silently (a refused `mosquitto_reconnect`
/// calls no callback), only supports whole-second delays and grows them quadratically. Running
/// `mosquitto_loop` and `mosquitto_reconnect_async` ourselves lets us log every failed attempt
/// with its reason and back off from 500 ms.
final class MosquittoSession: @unchecked Sendable {
    enum Lifecycle {
        case idle, running, stopping, stopped
    }

    let configuration: MQTTConfiguration
    let logger: Logger
    let brokerURL: String
    let isV5: Bool
    let handle: OpaquePointer
    let keepAliveSeconds: Int32
    let messageContinuation: AsyncStream<MQTTMessage>.Continuation
    let eventContinuation: AsyncStream<MQTTConnectionEvent>.Continuation

    // Shared between threads.
    let connected = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let forceStop = Atomic<Bool>(false)
    let loopExited = Atomic<Bool>(false)
    let lifecycle = Mutex(Lifecycle.idle)
    let subscriptions = Mutex<[(filter: String, qos: Int32)]>([])
    let tracker = Mutex(PublishTracker())
    let connectedWaiters = WaiterList()
    let drainWaiters = WaiterList()
    let exitWaiters = WaiterList()
    /// A pipe that wakes the network thread from its backoff sleep: [read end, write end].
    let wakePipe: (read: Int32, write: Int32)

    // Network thread only.
    var attemptReason: String?
    /// The last OpenSSL error libmosquitto logged during this attempt (its own error code says only
    /// "A TLS error occurred.").
    var lastTLSError: String?
    var attemptConnected = false

    init(
        configuration: MQTTConfiguration,
        logger: Logger,
        messageContinuation: AsyncStream<MQTTMessage>.Continuation,
        eventContinuation: AsyncStream<MQTTConnectionEvent>.Continuation
    ) {
        precondition(Mosquitto.initialized, "mosquitto_lib_init failed")
        self.configuration = configuration
        self.logger = logger
        self.brokerURL = configuration.brokerURL
        self.isV5 = configuration.protocolVersion == .v5
        self.messageContinuation = messageContinuation
        self.eventContinuation = eventContinuation
        let keepAlive = configuration.keepAlive.components.seconds
        self.keepAliveSeconds = Int32(clamping: min(max(keepAlive, 5), 65535))

        let id = configuration.clientID
        guard let handle = id.isEmpty ? mosquitto_new(nil, true, nil) : mosquitto_new(id, true, nil) else {
            fatalError("mosquitto_new failed: \(Mosquitto.describe(Mosquitto.errErrno))")
        }
        self.handle = handle

        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 {
            fatalError("pipe failed: \(Mosquitto.describe(Mosquitto.errErrno))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        self.wakePipe = (fds[0], fds[1])

        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        configureHandle()
    }

    deinit {
        // Only reached when the network thread (which retains the session) has exited.
        mosquitto_destroy(handle)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    var isConnected: Bool {
        connected.load(ordering: .acquiring)
    }

    // MARK: - Setup

    func configureHandle() {
        _ = mosquitto_threaded_set(handle, true)
        let version = isV5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(version))
        _ = mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)

        mosquitto_connect_v5_callback_set(handle) { _, object, rc, _, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleConnect(rc: rc)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, object, rc, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleDisconnect(rc: rc)
        }
        mosquitto_publish_v5_callback_set(handle) { _, object, mid, _, _ in
            guard let object else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handlePublished(mid: mid)
        }
        mosquitto_log_callback_set(handle) { _, object, _, text in
            guard let object, let text else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue().handleLog(String(cString: text))
        }
        mosquitto_message_v5_callback_set(handle) { _, object, message, properties in
            guard let object, let message else { return }
            Unmanaged<MosquittoSession>.fromOpaque(object).takeUnretainedValue()
                .handleMessage(message, properties: properties)
        }

        if let username = configuration.username {
            let rc = mosquitto_username_pw_set(handle, username, configuration.password)
            if rc != Mosquitto.success {
                logger.error("MQTT: cannot set the user name: \(Mosquitto.describe(rc))")
            }
        }

        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, will.topic, Int32(clamping: bytes.count), bytes.baseAddress, Int32(clamping: will.qos),
                    will.retain)
            }
            if rc != Mosquitto.success {
                logger.error("MQTT: cannot set the last will on '\(will.topic)': \(Mosquitto.describe(rc))")
            }
        }

        if let tls = configuration.tls {
            if tls.caFile == nil {
                _ = mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            }
            if tls.caFile != nil || tls.certFile != nil {
                let rc = mosquitto_tls_set(handle, tls.caFile, nil, tls.certFile, tls.keyFile, nil)
                if rc != Mosquitto.success {
                    logger.error(
                        "MQTT: invalid TLS settings (ca_file, cert_file, key_file): \(Mosquitto.describe(rc))")
                }
            }
        }
    }

    // MARK: - Public operations (any thread)

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
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { context in
                let session = Unmanaged<MosquittoSession>.fromOpaque(context!).takeRetainedValue()
                session.runNetworkLoop()
                return nil
            }, context)
        if rc != 0 {
            Unmanaged<MosquittoSession>.fromOpaque(context).release()
            logger.critical("MQTT: cannot start the network thread (pthread_create error \(rc))")
            finishNetworkLoop()
            return
        }
        pthread_detach(thread)
    }

    func publish(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, responseTopic: String?, correlationData: [UInt8]?
    ) -> MQTTError? {
        guard connected.load(ordering: .acquiring) else {
            return MQTTError.notConnected
        }
        guard payload.count <= Int(Int32.max) else {
            return MQTTError(code: .payloadTooLarge, message: "payload of \(payload.count) bytes")
        }
        let qosValue = Int32(truncatingIfNeeded: qos)
        var mid: Int32 = 0
        var rc: Int32
        if isV5 && (responseTopic != nil || correlationData != nil) {
            var properties: OpaquePointer? = nil
            defer { mosquitto_property_free_all(&properties) }
            if let responseTopic {
                rc = mosquitto_property_add_string(&properties, Mosquitto.propertyResponseTopic, responseTopic)
                if rc != Mosquitto.success { return MQTTError(mosquittoCode: rc) }
            }
            if let correlationData {
                guard correlationData.count <= Int(UInt16.max) else {
                    return MQTTError(code: .payloadTooLarge, message: "correlation data longer than 65535 bytes")
                }
                rc = correlationData.withUnsafeBytes { bytes in
                    mosquitto_property_add_binary(
                        &properties, Mosquitto.propertyCorrelationData, bytes.baseAddress, UInt16(bytes.count))
                }
                if rc != Mosquitto.success { return MQTTError(mosquittoCode: rc) }
            }
            rc = send(&mid, topic, payload, qosValue, retain, properties)
        } else {
            rc = send(&mid, topic, payload, qosValue, retain, nil)
        }
        if rc != Mosquitto.success {
            return rc == Mosquitto.errNoConnection ? MQTTError.notConnected : MQTTError(mosquittoCode: rc)
        }
        tracker.withLock { $0.published(mid: mid, qos: qos) }
        return nil
    }

    @inline(__always)
    func send(
        _ mid: inout Int32, _ topic: String, _ payload: [UInt8], _ qos: Int32, _ retain: Bool,
        _ properties: OpaquePointer?
    ) -> Int32 {
        topic.withCString { topicPointer in
            payload.withUnsafeBytes { bytes in
                if isV5 {
                    return mosquitto_publish_v5(
                        handle, &mid, topicPointer, Int32(bytes.count), bytes.baseAddress, qos, retain, properties)
                }
                return mosquitto_publish(handle, &mid, topicPointer, Int32(bytes.count), bytes.baseAddress, qos, retain)
            }
        }
    }

    func subscribe(_ filter: String, qos: Int) {
        let qosValue = Int32(clamping: min(max(qos, 0), 2))
        let subscribeNow = subscriptions.withLock { list in
            if let index = list.firstIndex(where: { $0.filter == filter }) {
                list[index].qos = qosValue
            } else {
                list.append((filter, qosValue))
            }
            return connected.load(ordering: .acquiring)
        }
        if subscribeNow {
            let rc = sendSubscribe(filter, qos: qosValue)
            if rc != Mosquitto.success && rc != Mosquitto.errNoConnection {
                logger.warning("MQTT subscribe to '\(filter)' failed: \(Mosquitto.describe(rc))")
            }
        }
    }

    func sendSubscribe(_ filter: String, qos: Int32) -> Int32 {
        isV5
            ? mosquitto_subscribe_v5(handle, nil, filter, qos, 0, nil)
            : mosquitto_subscribe(handle, nil, filter, qos)
    }

    func waitUntilConnected() async {
        await connectedWaiters.wait { connected.load(ordering: .acquiring) || loopExited.load(ordering: .acquiring) }
    }

    /// Waits (at most `drainTimeout`) until every QoS 1/2 publish is acknowledged, sends DISCONNECT,
    /// stops the network thread and finishes the streams.
    ///
    /// Runs in an unstructured task so that the caller's cancellation (a service shutting down)
    /// does not skip the drain; every wait is bounded anyway.
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
            loopExited.store(true, ordering: .releasing)
            connectedWaiters.resumeAll()
            return
        case .waitForExit:
            await exitWaiters.wait { loopExited.load(ordering: .acquiring) }
            return
        case .stop:
            break
        }
        if isConnected {
            await waitForAcknowledgements(timeout: drainTimeout)
        }
        stopRequested.store(true, ordering: .releasing)
        // Queues DISCONNECT and wakes the loop's select(); MOSQ_ERR_NO_CONN when there is no socket.
        _ = mosquitto_disconnect(handle)
        wake()
        await exitWaiters.wait { loopExited.load(ordering: .acquiring) }
        lifecycle.withLock { $0 = .stopped }
        finishStreams()
    }

    func waitForAcknowledgements(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await self.drainWaiters.wait {
                    !self.connected.load(ordering: .acquiring)
                        || self.tracker.withLock { $0.pendingAcknowledgements == 0 }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Stops the network thread without waiting (the owning client is being deinitialised).
    func abandon() {
        let wasRunning = lifecycle.withLock { state -> Bool in
            defer { state = .stopped }
            if case .running = state { return true }
            if case .stopping = state { return true }
            return false
        }
        if wasRunning {
            stopRequested.store(true, ordering: .releasing)
            forceStop.store(true, ordering: .releasing)
            _ = mosquitto_disconnect(handle)
            wake()
        }
        finishStreams()
    }

    /// Ends the TCP connection without a DISCONNECT packet, as a crash or a network failure would
    /// (the broker then publishes the will). The client reconnects as after any connection loss.
    func dropConnectionWithoutDisconnect() {
        let socket = mosquitto_socket(handle)
        if socket >= 0 {
            _ = shutdown(socket, Int32(SHUT_RDWR))
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

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

}
