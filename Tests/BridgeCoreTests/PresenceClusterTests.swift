import Testing

@testable import BridgeCore

/// Presence with the cluster on (SPEC §10, §12): the owner publishes, the room follows the stronger bridge with the
/// switch rule's hysteresis, and `not_home` only when no bridge heard the tracker.
@Suite struct PresenceClusterTests {
    typealias Run = PresenceCoreTests.Run
    static let settings = PresenceSettings(bridgeID: "hall", cluster: true, switchRule: SwitchRule(margin: 10, after: .seconds(30)))

    /// The owner "hall", online at 0, hearing the phone at -75 from t=1.
    func owner() -> Run {
        var run = Run(settings: Self.settings)
        run.at(0, .brokerConnected)
        return run
    }

    func kitchen(_ rssi: Int?) -> PresenceInput { .sightings(bridge: "kitchen", trackers: ["phone": RemoteSighting(rssi: rssi)]) }

    @Test func onlyTheOwnerPublishes() {
        var run = owner()
        #expect(run.at(1, .heard(tracker: "phone", rssi: -60)).isEmpty)
        #expect(run.at(200, .tick).isEmpty)
        let payload = PresencePayload(state: .notHome, rssi: nil, bridge: "hall", lastSeen: PresenceCoreTests.epoch + 1)
        #expect(run.at(201, .ownership(tracker: "phone", owned: true)) == [.init(tracker: "phone", payload: payload)])
        #expect(run.at(202, .heard(tracker: "phone", rssi: -60)).map(\.payload.state) == [.home])
        // Handed over: silent again; gained back: the current state at once.
        #expect(run.at(203, .ownership(tracker: "phone", owned: false)).isEmpty)
        #expect(run.at(204, .heard(tracker: "phone", rssi: -80)).isEmpty)
        #expect(run.at(205, .ownership(tracker: "phone", owned: true)).map(\.payload.rssi) == [-70])
    }

    @Test func roomFollowsTheStrongerBridgeWithHysteresis() {
        var run = owner()
        run.at(0, .ownership(tracker: "phone", owned: true))
        #expect(run.at(1, .heard(tracker: "phone", rssi: -75)).map(\.payload) == [PresenceCoreTests.home(-75, seen: 1)])
        // The kitchen hears it 5 dB stronger: below the margin, never a switch.
        var out: [PresencePublication] = []
        for t in stride(from: 2.0, through: 60, by: 1) {
            out += run.at(t, .heard(tracker: "phone", rssi: -75))
            if Int(t) % 5 == 0 { out += run.at(t, kitchen(-70)) }
        }
        #expect(out.isEmpty)
        // 12 dB stronger from t=65: the room moves after switch_after (30 s), with the kitchen's RSSI.
        for t in stride(from: 61.0, through: 120, by: 1) {
            out += run.at(t, .heard(tracker: "phone", rssi: -75))
            if Int(t) % 5 == 0 { out += run.at(t, kitchen(-63)) }
        }
        #expect(out.map(\.payload.bridge) == ["kitchen"])
        #expect(out.first?.payload.rssi == -63)
        #expect(out.first.map { $0.payload.lastSeen! - PresenceCoreTests.epoch } == 95)
        // The hall 13 dB stronger for 20 s out of every 30: each run ends before switch_after, so the room stays
        // (a person walking between two rooms does not make it flap).
        out = []
        for t in stride(from: 121.0, through: 300, by: 1) {
            out += run.at(t, .heard(tracker: "phone", rssi: Int(t) % 30 < 20 ? -55 : -75))
            if Int(t) % 5 == 0 { out += run.at(t, kitchen(-68)) }
        }
        #expect(out.allSatisfy { $0.payload.bridge == "kitchen" })
        // 13 dB stronger for good: back to the hall after 30 s.
        out = []
        for t in stride(from: 301.0, through: 360, by: 1) {
            out += run.at(t, .heard(tracker: "phone", rssi: -55))
            if Int(t) % 5 == 0 { out += run.at(t, kitchen(-68)) }
        }
        let switched = out.first { $0.payload.bridge == "hall" }
        #expect(switched?.payload.rssi == -55)
        #expect(switched.map { $0.payload.lastSeen! - PresenceCoreTests.epoch }.map { (330...335).contains($0) } == true)
    }

    @Test func notHomeOnlyWhenNoBridgeHeardIt() {
        var run = owner()
        run.at(0, .ownership(tracker: "phone", owned: true))
        run.at(1, .heard(tracker: "phone", rssi: -75))
        // The hall stops hearing it; the kitchen goes on reporting it every 5 s for ten minutes.
        var out: [PresencePublication] = []
        for t in stride(from: 5.0, through: 600, by: 5) {
            out += run.run(until: t)
            out += run.at(t, kitchen(-80))
        }
        #expect(!out.contains { $0.payload.state == .notHome })
        // The room moved to the kitchen once the hall's reading no longer counted (60 s).
        #expect(out.map(\.payload.bridge).last == "kitchen")
        // The kitchen goes offline: away_after after its last report.
        out = run.at(601, .bridgeGone(bridge: "kitchen"))
        #expect(out.isEmpty)
        out = run.run(until: 719)
        #expect(out.isEmpty)
        out = run.run(until: 720)
        #expect(out.map(\.payload) == [PresencePayload(state: .notHome, rssi: nil, bridge: "kitchen", lastSeen: PresenceCoreTests.epoch + 600)])
    }

    @Test func aReportThatSaysHowLongAgoCounts() {
        var run = owner()
        run.at(0, .ownership(tracker: "phone", owned: true))
        let report = PresenceInput.sightings(bridge: "kitchen", trackers: ["phone": RemoteSighting(rssi: -70, heardAgo: .seconds(50))])
        #expect(run.at(100, report).map(\.payload) == [PresencePayload(state: .home, rssi: -70, bridge: "kitchen", lastSeen: PresenceCoreTests.epoch + 50)])
        // Heard at 50: not_home at 170, although the report arrived at 100.
        #expect(run.core.nextDeadline(after: .seconds(100)) == .seconds(115))  // the report's freshness
        #expect(run.run(until: 170).map(\.payload.state) == [.notHome])
        // Its own reports are ignored (the runtime may deliver the bridge's own sightings).
        #expect(run.at(171, .sightings(bridge: "hall", trackers: ["phone": RemoteSighting(rssi: -50)])).isEmpty)
    }
}
