import BlueZ
import BridgeCore
import RuntimeCore
import Logging
import Synchronization

/// Trackers (SPEC §12) on the advertisement path: every advertisement BlueZ reports is matched
/// against the configured trackers (address, iBeacon, IRK: ``TrackerMatcher``, one AES per new
/// address and key), what matches feeds the ``PresenceCore``, and the retained
/// `{base}/{tracker}/presence` payloads it decides are published from here, on the I/O thread,
/// as advertisement values are.
///
/// The core's timers (`not_home` after `away_after`, a waiting RSSI move) run on the
/// supervisor's loop: ``deadline`` is the instant it must call ``tick()``; when an advertisement
/// moves that instant earlier the supervisor is woken (``SupervisorInput/presence``).
final class PresenceRouter: Sendable {
    private struct State: Sendable {
        var matcher: TrackerMatcher
        var core: PresenceCore<BridgeInstant>
        /// The instant the supervisor waits for (``deadline``).
        var armed: BridgeInstant?
        /// The state last published per tracker (what the log reports as a change).
        var published: [String: PresencePayload.State] = [:]
        /// Trackers heard at least once (the first sighting is logged).
        var heard: Set<String> = []
        /// What was last told to the cluster of each tracker: when and at which address.
        var forwarded: [String: (at: BridgeInstant, address: BluetoothAddress)] = [:]
    }

    private let state: Mutex<State>
    private let broker: any MessageBroker
    private let topics: TopicMapper
    private let clock: any BridgeClock
    private let logger: Logger
    private let wake: @Sendable () -> Void
    private let forward: (@Sendable (_ tracker: String, _ address: BluetoothAddress, _ path: String, _ rssi: Int) -> Void)?

    /// How often a tracker's sighting is told to the cluster (and at each new address).
    static let forwardInterval: Duration = .seconds(1)

    /// A router for `config.trackers`; `wake` tells the supervisor that ``deadline`` moved earlier; `forward` (cluster)
    /// gets the trackers heard, with a valid RSSI, at most every ``forwardInterval`` each.
    init(
        config: BridgeConfig, broker: any MessageBroker, topics: TopicMapper, clock: any BridgeClock, logger: Logger,
        wake: @escaping @Sendable () -> Void,
        forward: (@Sendable (_ tracker: String, _ address: BluetoothAddress, _ path: String, _ rssi: Int) -> Void)? = nil
    ) {
        let now = clock.now
        let core = PresenceCore<BridgeInstant>(trackers: config.trackers, settings: PresenceSettings(config: config), now: now)
        state = Mutex(State(matcher: TrackerMatcher(config: config), core: core, armed: core.nextDeadline(after: now)))
        self.broker = broker
        self.topics = topics
        self.clock = clock
        self.logger = logger
        self.wake = wake
        self.forward = forward
    }

    /// When the supervisor must call ``tick()``.
    var deadline: BridgeInstant? { state.withLock { $0.armed } }

    /// An advertisement (or RSSI report) from BlueZ; whether it was a tracker's.
    @discardableResult
    func handle(_ ad: BlueZAdvertisement) -> Bool {
        let now = clock.now, unixTime = clock.unixTime
        var first: [String] = []
        var toForward: [String] = []
        let rssi = ad.rssi.flatMap { RSSIWindow<BridgeInstant>.isValid($0) ? $0 : nil }
        let (publications, earlier, matched) = state.withLock { s -> ([Sent], Bool, Bool) in
            let names = s.matcher.match(
                address: ad.address, isRandom: ad.addressType == .random, manufacturerData: ad.manufacturerData)
            guard !names.isEmpty else { return ([], false, false) }
            var out: [PresencePublication] = []
            for name in names {
                if s.heard.insert(name).inserted { first.append(name) }
                out += s.core.handle(.heard(tracker: name, rssi: ad.rssi), now: now, unixTime: unixTime)
                if forward != nil, rssi != nil {
                    let last = s.forwarded[name]
                    if last == nil || last!.address != ad.address || now >= last!.at.advanced(by: Self.forwardInterval) {
                        s.forwarded[name] = (now, ad.address)
                        toForward.append(name)
                    }
                }
            }
            return (send(out, &s), Self.rearm(&s, now: now), true)
        }
        if let forward, let rssi {
            for name in toForward { forward(name, ad.address, ad.path, rssi) }
        }
        for name in first {
            logger.info("tracker \(name): heard (\(ad.address)\(ad.rssi.map { $0 == 127 ? "" : ", \($0) dBm" } ?? ""))")
        }
        log(publications)
        if earlier { wake() }
        return matched
    }

    /// The core's timers at ``deadline``: publishes what they decide.
    func tick() {
        step(.tick)
    }

    /// The broker connection came up (every known state is published again) or went down.
    func broker(up: Bool) {
        step(up ? .brokerConnected : .brokerDisconnected)
    }

    /// Feeds one input to the core and publishes its decisions.
    func step(_ input: PresenceInput) {
        let now = clock.now, unixTime = clock.unixTime
        var ticking = false
        if case .tick = input { ticking = true }
        let (publications, earlier) = state.withLock { s -> ([Sent], Bool) in
            let out = s.core.handle(input, now: now, unixTime: unixTime)
            if ticking { s.armed = nil }
            return (send(out, &s), Self.rearm(&s, now: now))
        }
        log(publications)
        // The supervisor's loop itself ticks, and reads ``deadline`` right after.
        if earlier && !ticking { wake() }
    }

    /// The presence payload a tracker has now, if known.
    func payload(of tracker: String) -> PresencePayload? {
        state.withLock { $0.core.payload(of: tracker) }
    }

    /// Arms the core's next deadline; true when it is earlier than the one the supervisor waits for.
    private static func rearm(_ s: inout State, now: BridgeInstant) -> Bool {
        guard let next = s.core.nextDeadline(after: now) else { return false }
        guard let armed = s.armed, armed <= next else {
            s.armed = next
            return true
        }
        return false
    }

    /// A publication sent, and whether it changed the tracker's state.
    private typealias Sent = (publication: PresencePublication, changed: Bool)

    /// Publishes under the lock: the I/O thread (an advertisement) and the supervisor's loop (a timer) both decide,
    /// and the broker must get their payloads in the order the core decided them (a `home` overtaken by an older
    /// `not_home` would stay retained).
    private func send(_ publications: [PresencePublication], _ s: inout State) -> [Sent] {
        publications.map { p in
            _ = broker.publish(topic: topics.presence(tracker: p.tracker), payload: p.payload.jsonBytes, qos: 1, retain: true)
            defer { s.published[p.tracker] = p.payload.state }
            return (p, s.published[p.tracker] != p.payload.state)
        }
    }

    private func log(_ sent: [Sent]) {
        for (p, changed) in sent {
            let rssi = p.payload.rssi.map { ", \($0) dBm" } ?? ""
            if changed {
                logger.info("tracker \(p.tracker): \(p.payload.state.rawValue) (bridge \(p.payload.bridge)\(rssi))")
            } else {
                logger.debug("tracker \(p.tracker): \(p.payload.state.rawValue)\(rssi)")
            }
        }
    }
}
