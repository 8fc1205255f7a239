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
    private enum Lifecycle {
        case idle, running, stopping, stopped
    }

    let configuration: MQTTConfiguration
    let logger: Logger
    let brokerURL: String
    let isV5: Bool
    private let handle: OpaquePointer
    private let keepAliveSeconds: Int32
    private let messageContinuation: AsyncStream<MQTTMessage>.Continuation
    private let eventContinuation: AsyncStream<MQTTConnectionEvent>.Continuation

    // Shared between threads.
    private let connected = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let forceStop = Atomic<Bool>(false)
    private let loopExited = Atomic<Bool>(false)
    private let lifecycle = Mutex(Lifecycle.idle)
    private let subscriptions = Mutex<[(filter: String, qos: Int32)]>([])
    private let tracker = Mutex(PublishTracker())
    private let connectedWaiters = WaiterList()
    private let drainWaiters = WaiterList()
    private let exitWaiters = WaiterList()
    /// A pipe that wakes the network thread from its backoff sleep: [read end, write end].
    private let wakePipe: (read: Int32, write: Int32)

    // Network thread only.
    private var attemptReason: String?
    /// The last OpenSSL error libmosquitto logged during this attempt (its own error code says only
    /// "A TLS error occurred.").
    private var lastTLSError: String?
    private var attemptConnected = false

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

    private func configureHandle() {
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
    private func send(
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

    private func sendSubscribe(_ filter: String, qos: Int32) -> Int32 {
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

    private func performDisconnect(drainTimeout: Duration) async {
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

    private func waitForAcknowledgements(timeout: Duration) async {
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

    private func finishStreams() {
        messageContinuation.finish()
        eventContinuation.finish()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    // MARK: - Network thread

    private func runNetworkLoop() {
        _ = cmosquitto_set_thread_name("mqtt")
        var backoff = Backoff(
            initial: configuration.reconnectDelay, maximum: configuration.maxReconnectDelay, multiplier: 2, jitter: 0, seed: 0)
        var rc = beginAttempt(first: true)
        while !stopRequested.load(ordering: .acquiring) {
            if rc == Mosquitto.success {
                driveConnection()
            }
            if stopRequested.load(ordering: .acquiring) {
                break
            }
            let delay: Duration
            if attemptConnected {
                // The loss was logged and reported by handleDisconnect.
                backoff.reset()
                delay = backoff.next()
            } else {
                delay = backoff.next()
                let reason = attemptReason ?? "unknown error"
                logger.warning(
                    "connecting to \(brokerURL) failed: \(reason); retrying in \(delay.pollMilliseconds) ms",
                    metadata: ["mqtt.broker": "\(brokerURL)", "mqtt.reason": "\(reason)"])
            }
            sleepInterruptibly(for: delay)
            if stopRequested.load(ordering: .acquiring) {
                break
            }
            rc = beginAttempt(first: false)
        }
        finishNetworkLoop()
    }

    private func finishNetworkLoop() {
        connected.store(false, ordering: .releasing)
        loopExited.store(true, ordering: .releasing)
        exitWaiters.resumeAll()
        connectedWaiters.resumeAll()
        drainWaiters.resumeAll()
    }

    /// Starts one connection attempt (non-blocking TCP connect, CONNECT queued).
    private func beginAttempt(first: Bool) -> Int32 {
        attemptReason = nil
        lastTLSError = nil
        attemptConnected = false
        let rc =
            first
            ? mosquitto_connect_async(handle, configuration.host, Int32(clamping: configuration.port), keepAliveSeconds)
            : mosquitto_reconnect_async(handle)
        if rc != Mosquitto.success {
            attemptReason = describeFailure(rc)
        }
        return rc
    }

    /// libmosquitto's log: OpenSSL's reason for a TLS failure is only there.
    private func handleLog(_ line: String) {
        if line.hasPrefix("OpenSSL Error") { lastTLSError = line }
    }

    /// Why an attempt failed; for TLS, what OpenSSL said and what to check.
    private func describeFailure(_ rc: Int32) -> String {
        guard rc == Mosquitto.errTLS else { return Mosquitto.describe(rc) }
        let openssl = lastTLSError.map { ": " + $0 } ?? ""
        let ca = configuration.tls?.caFile.map { "the CA certificates of mqtt.tls.ca_file (\($0))" } ?? "the system's CA certificates"
        if lastTLSError?.includes("certificate verify failed") == true {
            return "TLS: the broker's certificate could not be verified against \(ca)\(openssl)"
        }
        return "TLS handshake failed\(openssl)"
    }

    /// Runs the libmosquitto loop until the connection (or the attempt) ends, or until a requested
    /// stop has had ~2 s to send DISCONNECT.
    private func driveConnection() {
        var stopDeadline: ContinuousClock.Instant?
        while true {
            let rc = mosquitto_loop(handle, 1000, 1)
            if rc != Mosquitto.success {
                if attemptReason == nil {
                    attemptReason = describeFailure(rc)
                }
                return
            }
            if stopRequested.load(ordering: .acquiring) {
                if forceStop.load(ordering: .acquiring) {
                    return
                }
                let now = ContinuousClock.now
                if let deadline = stopDeadline {
                    if now >= deadline { return }
                } else {
                    stopDeadline = now + .seconds(2)
                }
            }
        }
    }

    private func sleepInterruptibly(for delay: Duration) {
        var descriptor = pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + delay
        while !stopRequested.load(ordering: .acquiring) {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return }
            let ready = poll(&descriptor, 1, remaining.pollMilliseconds)
            if ready > 0 {
                var buffer = (UInt64(0), UInt64(0))
                _ = withUnsafeMutableBytes(of: &buffer) { read(wakePipe.read, $0.baseAddress, $0.count) }
            }
        }
    }

    // MARK: - Callbacks (network thread)

    private func handleConnect(rc: Int32) {
        guard rc == 0 else {
            attemptReason = Mosquitto.describeConnack(rc, v5: isV5)
            return
        }
        attemptConnected = true
        if stopRequested.load(ordering: .acquiring) {
            // disconnect() ran before this connection existed: close it cleanly now.
            _ = mosquitto_disconnect(handle)
        }
        let filters = subscriptions.withLock { list in
            connected.store(true, ordering: .releasing)
            return list
        }
        for (filter, qos) in filters {
            let subscribeRC = sendSubscribe(filter, qos: qos)
            if subscribeRC != Mosquitto.success {
                logger.warning("MQTT subscribe to '\(filter)' failed: \(Mosquitto.describe(subscribeRC))")
            }
        }
        logger.info("connected to \(brokerURL)", metadata: ["mqtt.broker": "\(brokerURL)"])
        eventContinuation.yield(.connected)
        connectedWaiters.resumeAll()
    }

    private func handleDisconnect(rc: Int32) {
        let reason = rc == 0 ? "disconnected by the client" : Mosquitto.describe(rc)
        let wasConnected = connected.exchange(false, ordering: .acquiringAndReleasing)
        tracker.withLock { $0.connectionLost() }
        drainWaiters.resumeAll()
        if wasConnected {
            if rc == 0 {
                logger.info("disconnected from \(brokerURL)", metadata: ["mqtt.broker": "\(brokerURL)"])
            } else {
                logger.warning(
                    "connection to \(brokerURL) lost: \(reason)",
                    metadata: ["mqtt.broker": "\(brokerURL)", "mqtt.reason": "\(reason)"])
            }
            eventContinuation.yield(.disconnected(reason: reason))
        } else if attemptReason == nil {
            attemptReason = reason
        }
    }

    private func handlePublished(mid: Int32) {
        let drained = tracker.withLock { tracker in
            tracker.completed(mid: mid)
            return tracker.pendingAcknowledgements == 0
        }
        if drained {
            drainWaiters.resumeAll()
        }
    }

    private func handleMessage(_ message: UnsafePointer<mosquitto_message>, properties: OpaquePointer?) {
        let raw = message.pointee
        guard let topicPointer = raw.topic else { return }
        let payload: [UInt8]
        if let bytes = raw.payload, raw.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(raw.payloadlen)))
        } else {
            payload = []
        }
        var responseTopic: String?
        var correlationData: [UInt8]?
        if isV5, let properties {
            var text: UnsafeMutablePointer<CChar>?
            if mosquitto_property_read_string(properties, Mosquitto.propertyResponseTopic, &text, false) != nil,
                let text
            {
                responseTopic = String(cString: text)
                free(text)
            }
            var data: UnsafeMutableRawPointer?
            var length: UInt16 = 0
            if mosquitto_property_read_binary(properties, Mosquitto.propertyCorrelationData, &data, &length, false)
                != nil
            {
                if let data {
                    correlationData = Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
                    free(data)
                } else {
                    correlationData = []
                }
            }
        }
        messageContinuation.yield(
            MQTTMessage(
                topic: String(cString: topicPointer),
                payload: payload,
                qos: Int(raw.qos),
                retain: raw.retain,
                responseTopic: responseTopic,
                correlationData: correlationData))
    }
}
