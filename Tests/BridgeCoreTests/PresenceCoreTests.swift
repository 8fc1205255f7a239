import Testing

@testable import BridgeCore

/// The presence state machine (SPEC §12) over a fake clock.
@Suite struct PresenceCoreTests {
    typealias Core = PresenceCore<FakeInstant>
    static let epoch: Int64 = 1_700_000_000

    /// A harness: the core, and the time in seconds since its start.
    struct Run {
        var core: Core
        /// The last instant handed to the core: time never goes back.
        var now = FakeInstant.seconds(0)

        init(trackers: [BridgeConfig.Tracker] = [Run.phone], settings: PresenceSettings = PresenceSettings(bridgeID: "hall")) {
            core = Core(trackers: trackers, settings: settings, now: .seconds(0))
        }

        static let phone = BridgeConfig.Tracker(name: "phone", match: .address(BluetoothAddress("C0:FF:EE:00:00:09")!))

        @discardableResult
        mutating func at(_ seconds: Double, _ input: PresenceInput) -> [PresencePublication] {
            now = .seconds(seconds)
            return core.handle(input, now: now, unixTime: PresenceCoreTests.epoch + Int64(seconds))
        }

        /// Ticks at every deadline up to `seconds` (as the runtime's timer would), then at `seconds`.
        @discardableResult
        mutating func run(until seconds: Double) -> [PresencePublication] {
            var out: [PresencePublication] = []
            while let next = core.nextDeadline(after: now), next <= .seconds(seconds) {
                now = next
                out += core.handle(.tick, now: next, unixTime: PresenceCoreTests.epoch + next.offset.components.seconds)
            }
            return out + at(seconds, .tick)
        }
    }

    static func home(_ rssi: Int?, bridge: String = "hall", seen: Double) -> PresencePayload {
        PresencePayload(state: .home, rssi: rssi, bridge: bridge, lastSeen: epoch + Int64(seen))
    }

    @Test func homeAtTheFirstAdvertisement() {
        var run = Run()
        #expect(run.at(0, .brokerConnected).isEmpty)  // unknown: nothing to say yet
        #expect(run.at(1, .heard(tracker: "phone", rssi: -60)) == [.init(tracker: "phone", payload: Self.home(-60, seen: 1))])
        // Further advertisements at about the same strength, and last_seen alone, publish nothing.
        for t in 2...9 { #expect(run.at(Double(t), .heard(tracker: "phone", rssi: t % 2 == 0 ? -61 : -59)).isEmpty) }
        // A tracker that is not configured is ignored.
        #expect(run.at(10, .heard(tracker: "stranger", rssi: -40)).isEmpty)
        #expect(run.core.payload(of: "phone") == Self.home(-59, seen: 9))  // the median of -59, -61, -59, -61, -59
    }

    @Test func rssiIsAMedianAndRateLimited() {
        var run = Run()
        run.at(0, .brokerConnected)
        run.at(1, .heard(tracker: "phone", rssi: -60))
        // One outlier moves nothing (median over the 5 s window).
        #expect(run.at(2, .heard(tracker: "phone", rssi: -90)).isEmpty)
        #expect(run.at(3, .heard(tracker: "phone", rssi: -60)).isEmpty)
        #expect(run.core.trackers["phone"]?.window.median == -60)
        // The phone goes into a pocket: -70 from t=4 on. The median moves by 3 dB or more at t=5, inside the 10 s.
        for t in 4...10 { #expect(run.at(Double(t), .heard(tracker: "phone", rssi: -70)).isEmpty, "t=\(t)") }
        #expect(run.core.trackers["phone"]?.rssiMovePending == true)
        #expect(run.core.nextDeadline(after: .seconds(10)) == .seconds(11))
        #expect(run.at(11, .tick) == [.init(tracker: "phone", payload: Self.home(-70, seen: 10))])
        // Less than 3 dB: never published.
        for t in 12...40 { #expect(run.at(Double(t), .heard(tracker: "phone", rssi: -72)).isEmpty, "t=\(t)") }
        // 3 dB: at once, since the last publication is more than 10 s old.
        var out: [PresencePublication] = []
        for t in 41...45 { out += run.at(Double(t), .heard(tracker: "phone", rssi: -73)) }
        #expect(out == [.init(tracker: "phone", payload: Self.home(-73, seen: 43))])
    }

    @Test func invalidRSSIIsIgnored() {
        var run = Run()
        run.at(0, .brokerConnected)
        #expect(run.at(1, .heard(tracker: "phone", rssi: 127)) == [.init(tracker: "phone", payload: Self.home(nil, seen: 1))])
        #expect(run.at(2, .heard(tracker: "phone", rssi: nil)).isEmpty)
        // The first real reading: a move from unknown, rate-limited like any other.
        #expect(run.at(3, .heard(tracker: "phone", rssi: -65)).isEmpty)
        #expect(run.at(11, .tick) == [.init(tracker: "phone", payload: Self.home(-65, seen: 3))])
        #expect(run.at(12, .heard(tracker: "phone", rssi: 127)).isEmpty)
        #expect(run.core.trackers["phone"]?.window.median == -65)
    }

    @Test func notHomeAfterAwayAfterThenBackHome() {
        var run = Run()
        run.at(0, .brokerConnected)
        run.at(10, .heard(tracker: "phone", rssi: -60))
        #expect(run.core.nextDeadline(after: .seconds(10)) == .seconds(130))
        #expect(run.at(129.9, .tick).isEmpty)
        let away = PresencePayload(state: .notHome, rssi: nil, bridge: "hall", lastSeen: Self.epoch + 10)
        #expect(run.at(130, .tick) == [.init(tracker: "phone", payload: away)])
        #expect(run.at(200, .tick).isEmpty)
        #expect(run.core.nextDeadline(after: .seconds(200)) == nil)
        #expect(run.at(300, .heard(tracker: "phone", rssi: -80)) == [.init(tracker: "phone", payload: Self.home(-80, seen: 300))])
        #expect(run.core.nextDeadline(after: .seconds(300)) == .seconds(420))
    }

    @Test func awayAfterIsPerTracker() {
        let keys = BridgeConfig.Tracker(name: "keys", match: .address(BluetoothAddress("C0:FF:EE:00:00:0A")!), awayAfter: .seconds(30))
        var run = Run(trackers: [Run.phone, keys])
        run.at(0, .brokerConnected)
        run.at(1, .heard(tracker: "phone", rssi: -60))
        run.at(1, .heard(tracker: "keys", rssi: -60))
        let out = run.run(until: 121)
        #expect(out.map(\.tracker) == ["keys", "phone"])
        #expect(out.map(\.payload.state) == [.notHome, .notHome])
    }

    @Test func neverHeardIsNotHomeAfterAwayAfterFromTheStart() {
        var run = Run()
        run.at(0, .brokerConnected)
        #expect(run.core.nextDeadline(after: .seconds(0)) == .seconds(120))
        #expect(run.at(119, .tick).isEmpty)
        let away = PresencePayload(state: .notHome, rssi: nil, bridge: "hall", lastSeen: nil)
        #expect(run.at(120, .tick) == [.init(tracker: "phone", payload: away)])
        #expect(run.core.nextDeadline(after: .seconds(120)) == nil)
    }

    @Test func nothingWhileTheBrokerIsDownThenTheCurrentState() {
        var run = Run()
        #expect(run.at(1, .heard(tracker: "phone", rssi: -60)).isEmpty)
        #expect(run.at(2, .brokerConnected) == [.init(tracker: "phone", payload: Self.home(-60, seen: 1))])
        #expect(run.at(3, .brokerDisconnected).isEmpty)
        #expect(run.at(200, .tick).isEmpty)  // not_home, but the broker is down
        let away = PresencePayload(state: .notHome, rssi: nil, bridge: "hall", lastSeen: Self.epoch + 1)
        #expect(run.at(201, .brokerConnected) == [.init(tracker: "phone", payload: away)])
    }

    @Test func ownSightingForTheClusterSightings() {
        var run = Run()
        run.at(1, .heard(tracker: "phone", rssi: -60))
        run.at(2, .heard(tracker: "phone", rssi: -62))
        #expect(run.core.ownSighting(of: "phone", now: .seconds(5)) == RemoteSighting(rssi: -61, heardAgo: .seconds(3)))
        #expect(run.core.ownSighting(of: "phone", now: .seconds(62)) == nil)
        #expect(run.core.ownSighting(of: "keys", now: .seconds(5)) == nil)
    }
}
