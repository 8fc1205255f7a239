import BridgeBase
import CMosquitto
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libmosquitto's callbacks. They run inside `mosquitto_loop_read` / `_write` / `_misc`, which the
/// session calls on its loop's thread only.
extension MosquittoSession {
    func handleConnect(rc: Int32) {
        guard rc == 0 else {
            state.attemptReason = Mosquitto.describeConnack(rc, v5: isV5)
            return
        }
        state.attemptConnected = true
        state.phase = .connected
        state.writeBlocked = false
        setLogCallback(enabled: false)
        connected.store(true, ordering: .releasing)
        for (filter, qos) in state.subscriptions {
            let subscribeRC = sendSubscribe(filter, qos: qos)
            if subscribeRC != Mosquitto.success {
                logger.warning("MQTT subscribe to '\(filter)' failed: \(Mosquitto.describe(subscribeRC))")
            }
        }
        state.queuedSinceFlush += state.subscriptions.count
        if configuration.probeTopic != nil {
            state.liveness = BrokerLiveness(keepAliveMs: Int64(keepAliveSeconds) * 1000, connectedAtMs: PollLoop.nowMs())
        }
        logger.info("connected to \(brokerURL)", metadata: ["mqtt.broker": "\(brokerURL)"])
        eventContinuation.yield(.connected)
        connectedWaiters.resumeAll()
    }

    func handleDisconnect(rc: Int32) {
        let reason = state.cutOffReason ?? (rc == 0 ? "disconnected by the client" : Mosquitto.describe(rc))
        let wasConnected = connected.exchange(false, ordering: .acquiringAndReleasing)
        if wasConnected {
            if rc == 0 {
                logger.info("disconnected from \(brokerURL)", metadata: ["mqtt.broker": "\(brokerURL)"])
            } else {
                logger.warning(
                    "connection to \(brokerURL) lost: \(reason)",
                    metadata: ["mqtt.broker": "\(brokerURL)", "mqtt.reason": "\(reason)"])
            }
            eventContinuation.yield(.disconnected(reason: reason))
        } else if state.attemptReason == nil {
            state.attemptReason = reason
        }
    }

    /// An UNSUBACK: the answer to a keep-alive probe (the session unsubscribes from nothing else).
    func handleUnsubscribed(mid: Int32) {
        state.liveness?.answered(mid: mid)
    }

    func handlePublished(mid: Int32) {
        tracker.withLock { _ = $0.completed(mid: mid) }
    }

    /// Only OpenSSL's reason for a TLS failure is kept (a `String` is made for those lines only).
    func handleLog(_ text: UnsafePointer<CChar>) {
        let prefix = "OpenSSL Error"
        let matches = prefix.withCString { strncmp(text, $0, strlen($0)) == 0 }
        if matches { state.lastTLSError = String(cString: text) }
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
