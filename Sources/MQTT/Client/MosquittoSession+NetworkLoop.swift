import BridgeBase
import CMosquitto
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The network thread (our own loop around `mosquitto_loop`, with logged, backed-off reconnects)
/// and libmosquitto's callbacks, which run on it.
extension MosquittoSession {
    // MARK: - Network thread

    func runNetworkLoop() {
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

    func finishNetworkLoop() {
        connected.store(false, ordering: .releasing)
        loopExited.store(true, ordering: .releasing)
        exitWaiters.resumeAll()
        connectedWaiters.resumeAll()
        drainWaiters.resumeAll()
    }

    /// Starts one connection attempt (non-blocking TCP connect, CONNECT queued).
    func beginAttempt(first: Bool) -> Int32 {
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
    func handleLog(_ line: String) {
        if line.hasPrefix("OpenSSL Error") { lastTLSError = line }
    }

    /// Why an attempt failed; for TLS, what OpenSSL said and what to check.
    func describeFailure(_ rc: Int32) -> String {
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
    func driveConnection() {
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

    func sleepInterruptibly(for delay: Duration) {
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

    func handleConnect(rc: Int32) {
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

    func handleDisconnect(rc: Int32) {
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

    func handlePublished(mid: Int32) {
        let drained = tracker.withLock { tracker in
            tracker.completed(mid: mid)
            return tracker.pendingAcknowledgements == 0
        }
        if drained {
            drainWaiters.resumeAll()
        }
    }

    func handleMessage(_ message: UnsafePointer<mosquitto_message>, properties: OpaquePointer?) {
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
