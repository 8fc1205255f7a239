import BridgeCore
import MQTT

#if canImport(Glibc)
import Glibc
#endif

/// The notification hot path: maps a characteristic's object path to its value topic and
/// format, and publishes each value BlueZ reports. Called on the D-Bus signal task; one lock,
/// one dictionary lookup, one payload buffer, one `mosquitto_publish`.
final class ValueRouter: @unchecked Sendable {
    struct Route {
        var topic: String
        var format: ValueFormat
        /// A value just read by the bridge and already published: BlueZ echoes reads as
        /// `PropertiesChanged`, which is dropped once.
        var echo: [UInt8]?
        /// The last value that came as a signal, and when (monotonic ns): a read whose
        /// `PropertiesChanged` echo overtook its reply is not published twice.
        var lastSignalled: [UInt8]?
        var lastSignalledAt: UInt64 = 0
    }

    static func nowNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    private var mutex = pthread_mutex_t()
    private var routes: [String: Route] = [:]
    private let mqtt: MQTTClient
    private(set) var published: UInt64 = 0
    private(set) var failed: UInt64 = 0
    /// While the broker is away: the latest value per topic (bounded by the number of routes).
    private var held: [String: [UInt8]] = [:]
    private(set) var dropped: UInt64 = 0

    init(mqtt: MQTTClient) {
        self.mqtt = mqtt
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    func setRoute(path: String, topic: String, format: ValueFormat) {
        locked { routes[path] = Route(topic: topic, format: format, echo: nil) }
    }

    func removeRoutes(below root: String) {
        locked { routes = routes.filter { !$0.key.hasPrefix(root + "/") } }
    }

    func route(_ path: String) -> Route? {
        locked { routes[path] }
    }

    /// Publishes a value the bridge read itself, and drops BlueZ's echo of it.
    func publishRead(path: String, value: [UInt8]) {
        let now = Self.nowNs()
        let route: Route? = locked {
            guard let r = routes[path] else { return nil }
            if r.lastSignalled == value && now &- r.lastSignalledAt < 1_000_000_000 {
                // BlueZ's PropertiesChanged for this read came first and was published.
                routes[path]?.lastSignalled = nil
                return nil
            }
            routes[path]?.echo = value
            return r
        }
        guard let route else { return }
        publish(route, value)
    }

    /// A value from BlueZ (notification, indication or read echo).
    func handle(path: String, value: [UInt8]) {
        let route: Route? = locked {
            guard var r = routes[path] else { return nil }
            if let echo = r.echo {
                r.echo = nil
                routes[path] = r
                if echo == value { return nil }
            }
            routes[path]!.lastSignalled = value
            routes[path]!.lastSignalledAt = Self.nowNs()
            return r
        }
        guard let route else { return }
        publish(route, value)
    }

    private func publish(_ route: Route, _ value: [UInt8]) {
        let payload = ValuePayload.make(raw: value, format: route.format)
        if mqtt.publish(topic: route.topic, payload: payload) == nil {
            locked { published &+= 1 }
        } else {
            // Keep the latest value of each characteristic until the broker is back.
            locked {
                failed &+= 1
                if held.updateValue(payload, forKey: route.topic) != nil { dropped &+= 1 }
            }
        }
    }

    /// Publishes the values held while the broker was away; returns (sent, dropped since last flush).
    func flushHeld() -> (sent: Int, dropped: UInt64) {
        let (values, lost): ([String: [UInt8]], UInt64) = locked {
            let v = held
            let d = dropped
            held = [:]
            dropped = 0
            return (v, d)
        }
        var sent = 0
        for (topic, payload) in values {
            if mqtt.publish(topic: topic, payload: payload) == nil {
                sent += 1
            } else {
                locked { if held[topic] == nil { held[topic] = payload } }
            }
        }
        return (sent, lost)
    }
}
