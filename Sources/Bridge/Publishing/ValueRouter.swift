import BridgeCore
import Logging
import RuntimeCore
import MQTT
import Synchronization

/// The notification hot path: maps a characteristic's object path to its value topic and
/// format, and publishes each value BlueZ reports. Called on the D-Bus I/O thread (BlueZ's value
/// handler); one clock reading, one lock, one dictionary lookup, one payload buffer, one
/// `mosquitto_publish`.
final class ValueRouter: Sendable {
    struct Route {
        var topic: String
        var format: ValueFormat
        /// The characteristic's presentation format (0x2904), which decodes before ``format``.
        var presentation: PresentationFormat?
        /// The device's topic segment (per-device counters for health).
        var device: String = ""
        /// A value just read by the bridge and already published: BlueZ echoes reads as
        /// `PropertiesChanged`, which is dropped once.
        var echo: [UInt8]?
        /// The last value that came as a signal, and when: a read whose `PropertiesChanged`
        /// echo overtook its reply is not published twice.
        var lastSignalled: [UInt8]?
        var lastSignalledAt = BridgeInstant(offset: .zero)
        /// A profile's `subscribe … decode:` (SPEC §15): every value is decoded to the values topic too.
        var decode: ProfileDecodeRoute?
        /// Notifications ``decode`` could not decode (the first is logged at notice, the others at debug).
        var decodeFailures = 0
        /// A profile run waits for this characteristic's notifications: they go to it instead of ``decode``.
        var waiter: (@Sendable (_ value: [UInt8]) -> Void)?
    }

    /// Where a profile's decode of a characteristic's values goes.
    struct ProfileDecodeRoute: Sendable {
        var decode: ProfileDecode
        /// `{base}/{device}/values`.
        var valuesTopic: String
        /// The profile's id (the payload's `"profile"`).
        var profile: String
    }

    /// How long after a signalled value a read's reply of the same value counts as its echo.
    static let echoWindow: Duration = .seconds(1)

    private struct State {
        var routes: [String: Route] = [:]
        var published: UInt64 = 0
        var failed: UInt64 = 0
        /// While the broker is away: the latest value per topic (bounded by the number of routes).
        var held: [String: [UInt8]] = [:]
        var dropped: UInt64 = 0
        /// Values published per device segment, and when the last one was.
        var perDevice: [String: DeviceValues] = [:]
        /// With Home Assistant discovery: the last payload per value topic, and its device.
        var last: [String: (device: String, payload: [UInt8])] = [:]
        /// Notifications a profile's decode route did not decode.
        var decodeFailures: UInt64 = 0
    }

    /// Values of one device (SPEC §9 `values`, `last_value_age_s`).
    struct DeviceValues: Sendable {
        var count: UInt64 = 0
        /// When the last value was published (nil: none yet).
        var last: BridgeInstant?
    }

    private let state = Mutex(State())
    private let mqtt: any MessageBroker
    /// The runtime's clock: when values came (echoes, health's `last_value_age_s`).
    private let clock: any BridgeClock
    /// Whether the last payload of each topic is kept for ``resendLast(devices:)``.
    private let keepsLast: Bool
    /// Where a profile's decode failures are told (nil: counted only).
    private let logger: Logger?

    /// Values published since start.
    var published: UInt64 { state.withLock { $0.published } }
    /// Values the broker did not take (away).
    var failed: UInt64 { state.withLock { $0.failed } }
    /// Notifications that a profile's decode route could not decode (too short, an unknown first byte).
    var decodeFailures: UInt64 { state.withLock { $0.decodeFailures } }

    init(mqtt: any MessageBroker, clock: any BridgeClock, keepsLast: Bool = false, logger: Logger? = nil) {
        self.mqtt = mqtt
        self.clock = clock
        self.keepsLast = keepsLast
        self.logger = logger
    }

    /// Drops the last values of a forgotten device (they are not sent again).
    func forgetLast(device: String) {
        locked { s in s.last = s.last.filter { $0.value.device != device } }
    }

    /// Publishes the last value of every characteristic of `devices` (`nil`: of all) again, for
    /// Home Assistant entities created after it was sent (advertisement packets included);
    /// returns how many. Under the lock the value path publishes under: a value that comes
    /// meanwhile is published after the resend, never before it (the resend would then put an
    /// older value after a newer one).
    func resendLast(devices: Set<String>?) -> Int {
        locked { s in
            var sent = 0
            for (topic, value) in s.last where devices?.contains(value.device) ?? true {
                if mqtt.publish(topic: topic, payload: value.payload, qos: 0, retain: false) == nil { sent += 1 }
            }
            return sent
        }
    }

    private func locked<R>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    func setRoute(path: String, topic: String, format: ValueFormat, device: String) {
        locked { $0.routes[path] = Route(topic: topic, format: format, device: device, echo: nil) }
    }

    /// Decodes a routed characteristic's values by its presentation format from now on.
    func setPresentation(path: String, _ presentation: PresentationFormat?) {
        locked { $0.routes[path]?.presentation = presentation }
    }

    /// Decodes the characteristic's notifications with a profile's `decode` to `valuesTopic` from now on (after
    /// the value topic's payload).
    func setDecode(path: String, _ decode: ProfileDecode, valuesTopic: String, profile: String) {
        locked { $0.routes[path]?.decode = ProfileDecodeRoute(decode: decode, valuesTopic: valuesTopic, profile: profile) }
    }

    /// Hands the characteristic's notifications to `deliver` (a profile run waiting for them) instead of its decode
    /// route, until ``disarm(path:)``. The value topic still gets them.
    func arm(path: String, deliver: @escaping @Sendable (_ value: [UInt8]) -> Void) {
        locked { $0.routes[path]?.waiter = deliver }
    }

    /// Ends ``arm(path:deliver:)``.
    func disarm(path: String) {
        locked { $0.routes[path]?.waiter = nil }
    }

    /// Per-device value counters.
    var perDevice: [String: DeviceValues] { locked { $0.perDevice } }


    func removeRoutes(below root: String) {
        locked { s in s.routes = s.routes.filter { !$0.key.hasPrefix(root + "/") } }
    }

    /// Publishes a value the bridge read itself, and drops BlueZ's echo of it.
    func publishRead(path: String, value: [UInt8]) {
        let now = clock.now
        let route: Route? = locked { s in
            guard let r = s.routes[path] else { return nil }
            if r.lastSignalled == value && r.lastSignalledAt.duration(to: now) < Self.echoWindow {
                // BlueZ's PropertiesChanged for this read came first and was published.
                s.routes[path]?.lastSignalled = nil
                return nil
            }
            s.routes[path]?.echo = value
            return r
        }
        guard let route else { return }
        publish(
            topic: route.topic, payload: ValuePayload.make(raw: value, format: route.format, presentation: route.presentation),
            device: route.device, at: now)
    }

    /// A value from BlueZ (notification, indication or read echo). The hot path: the route is
    /// updated in place (no copy of it under the lock) and only what the payload needs leaves it.
    func handle(path: String, value: [UInt8]) {
        let now = clock.now
        typealias Target = (
            topic: String, format: ValueFormat, presentation: PresentationFormat?, device: String, decode: ProfileDecodeRoute?,
            waiter: (@Sendable ([UInt8]) -> Void)?
        )
        let target: Target? = locked { s in
            guard let i = s.routes.index(forKey: path) else { return nil }
            if s.routes.values[i].echo != nil {
                let echoed = s.routes.values[i].echo == value
                s.routes.values[i].echo = nil
                if echoed { return nil }
            }
            s.routes.values[i].lastSignalled = value
            s.routes.values[i].lastSignalledAt = now
            let route = s.routes.values[i]
            return (route.topic, route.format, route.presentation, route.device, route.decode, route.waiter)
        }
        guard let target else { return }
        publish(
            topic: target.topic, payload: ValuePayload.make(raw: value, format: target.format, presentation: target.presentation),
            device: target.device, at: now)
        // A waiting profile run decodes the value itself (one frame is not published twice as values).
        if let waiter = target.waiter { return waiter(value) }
        if let route = target.decode { publishDecoded(value, route, path: path, topic: target.topic, device: target.device, at: now) }
    }

    /// Decodes a notification by a profile's decode route and publishes the values; counts what does not decode.
    private func publishDecoded(
        _ value: [UInt8], _ route: ProfileDecodeRoute, path: String, topic: String, device: String, at now: BridgeInstant
    ) {
        let values: JSONObject
        do {
            values = try route.decode.decode(value)
        } catch {
            let first = locked { s -> Bool in
                s.decodeFailures &+= 1
                guard s.routes[path] != nil else { return false }
                s.routes[path]!.decodeFailures += 1
                return s.routes[path]!.decodeFailures == 1
            }
            let message: Logger.Message = "profile \(route.profile): a notification on \(topic) (\(Hex.encode(value))) does not decode: \(error)"
            if first {
                logger?.notice("\(message); further ones are logged at debug", metadata: ["device": "\(device)"])
            } else {
                logger?.debug(message, metadata: ["device": "\(device)"])
            }
            return
        }
        publish(
            topic: route.valuesTopic, payload: ProfileValuesPayload.make(profile: route.profile, values: values), device: device,
            at: now)
    }

    /// Publishes a payload of `device` (a value, or an advertisement) that came at `now` (the
    /// caller's one clock reading for it) and counts it; while the broker is away the latest
    /// payload per topic is held.
    func publish(topic: String, payload: [UInt8], device: String, at now: BridgeInstant) {
        // Published under the lock: the resend and the flush of held values, which publish from
        // other threads, are ordered with this value (MQTT sends what another thread queued
        // first before a publish made on its loop).
        locked { s in
            if mqtt.publish(topic: topic, payload: payload, qos: 0, retain: false) == nil {
                s.published &+= 1
                s.perDevice[device, default: DeviceValues()].count &+= 1
                s.perDevice[device]!.last = now
                if keepsLast { s.last[topic] = (device, payload) }
                // A value held while the broker was away is older than this one.
                if !s.held.isEmpty { s.held[topic] = nil }
            } else {
                // Keep the latest value of each characteristic until the broker is back.
                s.failed &+= 1
                if s.held.updateValue(payload, forKey: topic) != nil { s.dropped &+= 1 }
                if keepsLast { s.last[topic] = (device, payload) }
            }
        }
    }

    /// Publishes the values held while the broker was away; returns (sent, dropped since last flush).
    func flushHeld() -> (sent: Int, dropped: UInt64) {
        // Under the lock, as the value path publishes: a newer value of a topic never goes out before its held one.
        locked { s in
            let values = s.held
            let lost = s.dropped
            s.held = [:]
            s.dropped = 0
            var sent = 0
            for (topic, payload) in values {
                if mqtt.publish(topic: topic, payload: payload, qos: 0, retain: false) == nil {
                    sent += 1
                } else {
                    s.held[topic] = payload
                }
            }
            return (sent, lost)
        }
    }
}
