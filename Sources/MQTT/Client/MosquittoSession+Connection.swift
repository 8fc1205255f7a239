import BridgeBase
import CMosquitto
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Connection attempts with logged, backed-off retries, the commands other threads hand over, and
/// the bounded stop: all on the loop thread.
///
/// Reconnecting is ours rather than libmosquitto's (`mosquitto_loop_forever`): its loop retries
/// silently (a refused `mosquitto_reconnect` calls no callback), only supports whole-second delays
/// and grows them quadratically. Calling `mosquitto_reconnect_async` ourselves lets us log every
/// failed attempt with its reason and back off from 500 ms.
extension MosquittoSession {
    // MARK: - Attempts

    /// Starts one connection attempt: `mosquitto_connect_async` / `_reconnect_async` resolve the
    /// host (`getaddrinfo`, blocking: instant for an IP address or `localhost`), start a
    /// non-blocking TCP connect, start the TLS handshake (`SSL_connect` on the non-blocking
    /// socket, which only wants to read or write) and queue CONNECT. The loop then polls for
    /// the connect's completion and the handshake's reads.
    func beginAttempt(first: Bool, nowMs: Int64) {
        state.attemptReason = nil
        state.cutOffReason = nil
        state.liveness = nil
        state.lastTLSError = nil
        state.attemptConnected = false
        state.writeBlocked = false
        setLogCallback(enabled: true)
        let fresh = first || state.handleReset
        state.handleReset = false
        let rc =
            fresh
            ? mosquitto_connect_async(handle, configuration.host, Int32(clamping: configuration.port), keepAliveSeconds)
            : mosquitto_reconnect_async(handle)
        if rc != Mosquitto.success {
            connectionFailed(reason: describeFailure(rc))
            return
        }
        state.phase = .connecting(established: false)
        state.attemptStartedMs = nowMs
        state.nextMiscMs = nowMs + Self.miscIntervalMs
    }

    /// How long an attempt may wait for CONNACK (TCP connect, TLS handshake, CONNECT) before it is
    /// given up and made again. Without it, an attempt whose CONNECT or CONNACK is lost (a broker
    /// that accepted the TCP connection while starting or stopping) waits until libmosquitto's
    /// keep-alive check closes it, a whole keep-alive (60 s by default) later.
    static let connectTimeoutMs: Int64 = 10_000

    /// Gives up an attempt that has had no CONNACK for ``connectTimeoutMs``.
    func checkAttemptTimeout(nowMs: Int64) {
        guard case .connecting = state.phase, nowMs - state.attemptStartedMs >= Self.connectTimeoutMs else { return }
        connectionFailed(reason: "no CONNACK within \(Self.connectTimeoutMs / 1000) s")
    }

    /// After a libmosquitto call: if the socket is gone (closed by libmosquitto, which called
    /// `on_disconnect` unless a TLS handshake failed), the connection or the attempt ended.
    func checkConnection(rc: Int32) {
        guard state.hasConnection, mosquitto_socket(handle) < 0 else { return }
        if !state.attemptConnected && state.attemptReason == nil {
            state.attemptReason = describeFailure(rc)
        }
        connectionEnded()
    }

    /// The attempt failed for `reason` (the socket may still exist; the next attempt closes it).
    func connectionFailed(reason: String) {
        if state.attemptReason == nil { state.attemptReason = reason }
        connectionEnded()
    }

    /// ``MQTTConfiguration/forgetUnsentOnLoss``: reinitialises the handle, which frees every message libmosquitto
    /// holds (it would send the unacknowledged QoS 1/2 ones again after reconnecting), and sets it up again; the
    /// next attempt starts afresh. Called after a loss, with no socket and outside libmosquitto's callbacks.
    func forgetUnsent() {
        let forgotten = tracker.withLock { $0.forgetAll() }
        let id = configuration.clientID
        let object = Unmanaged.passUnretained(self).toOpaque()
        let rc = id.isEmpty ? mosquitto_reinitialise(handle, nil, true, object) : mosquitto_reinitialise(handle, id, true, object)
        if rc != Mosquitto.success {
            logger.error("MQTT: cannot reset the client after the loss: \(Mosquitto.describe(rc))")
        }
        configureHandle()
        state.handleReset = true
        if forgotten > 0 {
            logger.info(
                "forgot \(forgotten) unacknowledged message(s): after a loss they are stale (the broker has published the will)",
                metadata: ["mqtt.broker": "\(brokerURL)"])
        }
    }

    /// ``MQTTConfiguration/probeTopic``: sends the probe when due, and ends a connection whose probes have gone
    /// unanswered for a keep-alive (``BrokerLiveness``). Called every turn the session handles.
    func checkLiveness(nowMs: Int64) {
        guard state.phase == .connected, state.stop == nil, var liveness = state.liveness,
            let topic = configuration.probeTopic
        else { return }
        if liveness.isCutOff(atMs: nowMs) {
            let reason =
                "no answer to the keep-alive probes for \(nowMs - liveness.confirmedMs) ms (keep-alive \(keepAliveSeconds) s)"
            state.liveness = nil
            state.cutOffReason = reason
            closeSocket()
            checkConnection(rc: Mosquitto.success)
            return
        }
        if liveness.probeDue(atMs: nowMs) {
            var mid: Int32 = 0
            let rc = isV5 ? mosquitto_unsubscribe_v5(handle, &mid, topic, nil) : mosquitto_unsubscribe(handle, &mid, topic)
            if rc == Mosquitto.success {
                liveness.probeSent(mid: mid, atMs: nowMs)
                state.queuedSinceFlush += 1
            } else {
                liveness.probeFailed(atMs: nowMs)
                logger.warning("MQTT: the keep-alive probe on '\(topic)' failed: \(Mosquitto.describe(rc))")
            }
        }
        state.liveness = liveness
    }

    /// Waits before the next attempt (logged unless the connection had been established: its
    /// loss was logged and reported by `handleDisconnect`), or stops if a stop is in progress.
    func connectionEnded() {
        connected.store(false, ordering: .releasing)
        state.liveness = nil
        if configuration.forgetUnsentOnLoss && state.attemptConnected { forgetUnsent() }
        if state.stop != nil {
            finishOnLoop()
            return
        }
        let delay: Duration
        if state.attemptConnected {
            state.backoff.reset()
            delay = state.backoff.next()
        } else {
            delay = state.backoff.next()
            let reason = state.attemptReason ?? "unknown error"
            logger.warning(
                "connecting to \(brokerURL) failed: \(reason); retrying in \(delay.pollMilliseconds) ms",
                metadata: ["mqtt.broker": "\(brokerURL)", "mqtt.reason": "\(reason)"])
        }
        state.phase = .waiting(untilMs: PollLoop.nowMs() + Int64(delay.pollMilliseconds))
    }

    /// Why an attempt failed; for TLS, what OpenSSL said and what to check. Reads `errno` for
    /// `MOSQ_ERR_ERRNO`: call it right after the failing call.
    func describeFailure(_ rc: Int32) -> String {
        guard rc == Mosquitto.errTLS else { return Mosquitto.describe(rc) }
        let openssl = state.lastTLSError.map { ": " + $0 } ?? ""
        let ca =
            configuration.tls?.caFile.map { "the CA certificates of mqtt.tls.ca_file (\($0))" }
            ?? "the system's CA certificates"
        if state.lastTLSError?.includes("certificate verify failed") == true {
            return "TLS: the broker's certificate could not be verified against \(ca)\(openssl)"
        }
        return "TLS handshake failed\(openssl)"
    }

    // MARK: - Publishing and subscribing (loop thread)

    /// Queues a message in libmosquitto; it is written when the turn ends. Allocates nothing
    /// beyond libmosquitto's packet (and the properties of an MQTT v5 request or response).
    ///
    /// With `evenIfDisconnected`, a QoS 1/2 message is handed over without a connection too:
    /// libmosquitto keeps it (`message__queue` before `send__publish` fails) and sends it after
    /// reconnecting; it is tracked then.
    func publishOnLoop(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, responseTopic: String?, correlationData: [UInt8]?,
        evenIfDisconnected: Bool = false
    ) -> MQTTError? {
        guard evenIfDisconnected || connected.load(ordering: .relaxed) else { return MQTTError.notConnected }
        guard payload.count <= Int(Int32.max) else {
            return MQTTError(code: .payloadTooLarge, message: "payload of \(payload.count) bytes")
        }
        let qosValue = Int32(clamping: qos)
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
        if rc == Mosquitto.success {
            if qos > 0 { tracker.withLock { $0.published(mid: mid, qos: qos) } }
            state.queuedSinceFlush += 1
            return nil
        }
        if rc == Mosquitto.errNoConnection && qos > 0 && evenIfDisconnected {
            tracker.withLock { $0.published(mid: mid, qos: qos) }
            return nil
        }
        return rc == Mosquitto.errNoConnection ? MQTTError.notConnected : MQTTError(mosquittoCode: rc)
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

    func subscribeOnLoop(_ filter: String, qos: Int32) {
        if let index = state.subscriptions.firstIndex(where: { $0.filter == filter }) {
            state.subscriptions[index].qos = qos
        } else {
            state.subscriptions.append((filter, qos))
        }
        guard connected.load(ordering: .relaxed) else { return }
        let rc = sendSubscribe(filter, qos: qos)
        if rc == Mosquitto.success {
            state.queuedSinceFlush += 1
        } else if rc != Mosquitto.errNoConnection {
            logger.warning("MQTT subscribe to '\(filter)' failed: \(Mosquitto.describe(rc))")
        }
    }

    func sendSubscribe(_ filter: String, qos: Int32) -> Int32 {
        isV5
            ? mosquitto_subscribe_v5(handle, nil, filter, qos, 0, nil)
            : mosquitto_subscribe(handle, nil, filter, qos)
    }

    // MARK: - Commands from other threads

    /// Runs what other threads queued, in order. Swaps buffers: no allocation once warm.
    func runCommands() {
        var batch: [SessionCommand] = []
        swap(&batch, &state.spareCommands)
        commands.takeAll(into: &batch)
        for command in batch {
            switch command {
            case .publish(let message):
                runPublish(message)
            case .subscribe(let filter, let qos):
                subscribeOnLoop(filter, qos: qos)
            case .dropConnection:
                dropConnectionOnLoop()
            case .stop(let force, let drainTimeout):
                beginStop(force: force, drainTimeout: drainTimeout)
            }
        }
        // A burst's buffer is not kept (RSS); the usual few commands reuse theirs.
        batch.removeAll(keepingCapacity: batch.capacity <= Self.keptCommandCapacity)
        swap(&batch, &state.spareCommands)
    }

    /// The largest command buffer kept between turns.
    static let keptCommandCapacity = 1024

    /// A publish accepted on another thread (validated there). If the connection was lost
    /// meanwhile, a QoS 0 message is dropped (as libmosquitto drops the QoS 0 packets queued at a
    /// loss) and a QoS 1/2 message is still handed over: libmosquitto keeps it and sends it
    /// after reconnecting.
    private func runPublish(_ message: MQTTMessage) {
        let keep = message.qos > 0 && !configuration.forgetUnsentOnLoss
        guard state.phase != .stopped, keep || connected.load(ordering: .relaxed) else { return }
        if let error = publishOnLoop(
            topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
            responseTopic: message.responseTopic, correlationData: message.correlationData, evenIfDisconnected: true)
        {
            logger.warning("MQTT publish to '\(message.topic)' failed: \(error.message)")
        }
    }

    // MARK: - Stopping

    /// Starts a stop: drain (connected, QoS 1/2 pending), then DISCONNECT, then detach.
    func beginStop(force: Bool, drainTimeout: Duration) {
        let now = PollLoop.nowMs()
        if force {
            if mosquitto_socket(handle) >= 0 {
                _ = mosquitto_disconnect(handle)
                _ = mosquitto_loop_write(handle, 1)  // best effort: DISCONNECT if the socket takes it now
            }
            finishOnLoop()
            return
        }
        guard state.stop == nil else { return }
        switch state.phase {
        case .idle, .waiting, .stopped:
            finishOnLoop()
        case .connecting:
            // CONNECT may already be on its way: DISCONNECT follows it, so that the broker does
            // not publish the will.
            closeGracefully(nowMs: now)
        case .connected:
            if pendingAcknowledgements > 0 {
                state.stop = .draining(deadlineMs: now + drainTimeout.inMilliseconds)
            } else {
                closeGracefully(nowMs: now)
            }
        }
    }

    /// Moves a stop on: drained (or no longer connected, or too late), then DISCONNECT written
    /// (or ~2 s passed).
    func advanceStop(nowMs: Int64) {
        switch state.stop {
        case .draining(let deadline):
            if !connected.load(ordering: .relaxed) || pendingAcknowledgements == 0 || nowMs >= deadline {
                closeGracefully(nowMs: nowMs)
            }
        case .closing(let deadline):
            if mosquitto_socket(handle) < 0 || nowMs >= deadline {
                finishOnLoop()
            }
        case nil:
            break
        }
    }

    /// Queues DISCONNECT (it is written at the end of the turn; libmosquitto closes the socket
    /// once it is written) and gives it ~2 s.
    private func closeGracefully(nowMs: Int64) {
        let rc = mosquitto_disconnect(handle)
        if rc != Mosquitto.success || mosquitto_socket(handle) < 0 {
            finishOnLoop()
            return
        }
        state.stop = .closing(deadlineMs: nowMs + 2000)
        state.writeBlocked = false
        if state.phase == .connected {
            checkConnection(rc: write())
        }
    }

    /// The session stops: the socket is closed and the session leaves the loop
    /// (``detached()`` then reports the exit).
    func finishOnLoop() {
        guard state.phase != .stopped else { return }
        closeSocket()
        state.phase = .stopped
        state.stop = nil
        connected.store(false, ordering: .releasing)
        loop.remove(self)
    }
}
