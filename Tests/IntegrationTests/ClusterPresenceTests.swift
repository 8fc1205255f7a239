import Foundation
import Testing

/// Trackers in a cluster (SPEC §10 rule 5, §12) on bluez-sim: two bridges hear a phone that rotates its private
/// address, alpha 30 dB better than beta. The presence names alpha as the room; when the strengths swap, the room
/// follows to beta only after `switch_after` (hysteresis); the tracker never goes `not_home` while a bridge hears
/// it, and goes `not_home` once neither does, within `away_after` and a few seconds.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ClusterPresenceTests {
    static let phone = "C0:FF:EE:00:19:11"
    static let irk = "ec0234a357c8ad05341010a60a397d9b"

    static func scenario(rssi: Int) -> String {
        """
        settings:
          advertise_delay: 20ms
          advertise_jitter: 0ms
          rssi_interval: 200ms
          temporary_timeout: 5s
          seed: 19
        devices:
          - { name: Phone, address: "\(phone)", irk: "\(irk)", rotate_every: 3s, rssi: \(rssi) }

        """
    }

    static func options() -> ClusterOptions {
        ClusterOptions(
            nodes: [("alpha", scenario(rssi: -50)), ("beta", scenario(rssi: -80))],
            config: { id, port in
                """
                mqtt: { url: "mqtt://127.0.0.1:\(port)", client_id: bridge-\(id), keepalive: 5s }
                bridge: { id: \(id) }
                cluster: { enabled: true, switch_margin: 10, switch_after: 3s }
                bluetooth: { adapter: hci0 }
                trackers:
                  - { name: alice_phone, match: { irk: "\(irk)" }, away_after: 6s }

                """
            })
    }

    static func presence(_ cluster: ClusterHarness, after mark: Int = 0) -> [MQTTMessage] {
        cluster.observer.messages("ble/alice_phone/presence").filter { $0.index >= mark }
    }

    @Test("the room follows the stronger bridge after switch_after; never not_home while heard; not_home once nobody hears it")
    func roomFollowsTheStrongerBridge() async throws {
        try await ClusterHarness.with(Self.options()) { cluster in
            let first = try await cluster.waitFor("ble/alice_phone/presence", timeout: .seconds(40)) {
                $0.object?["state"] as? String == "home"
            }
            #expect(first.object?["bridge"] as? String == "alpha", "\(first)")

            // The strengths swap: beta is the room once switch_after (3 s) has passed, not before.
            let mark = cluster.observer.count
            let swapped = ContinuousClock.now
            try await cluster.node("alpha").simctl(["SetRSSI", Self.phone, "", "-85"])
            try await cluster.node("beta").simctl(["SetRSSI", Self.phone, "", "-50"])
            let moved = try await cluster.waitFor("ble/alice_phone/presence", after: mark, timeout: .seconds(30)) {
                $0.object?["bridge"] as? String == "beta"
            }
            let took = ContinuousClock.now - swapped
            #expect(took >= .seconds(2.5), "the room moved after \(took): no hysteresis")
            #expect(moved.object?["state"] as? String == "home", "\(moved)")

            // Neither hears it: not_home within away_after (6 s) and the sightings' pace.
            let quiet = cluster.observer.count
            let silenced = ContinuousClock.now
            for node in cluster.nodes { try await node.simctl(["SetInRange", Self.phone, "false"]) }
            let outOfRange = ClusterHarness.now
            let away = try await cluster.waitFor("ble/alice_phone/presence", after: quiet, timeout: .seconds(40)) {
                $0.object?["state"] as? String == "not_home"
            }
            let awayAfter = ContinuousClock.now - silenced
            #expect(awayAfter >= .seconds(5) && awayAfter < .seconds(20), "not_home after \(awayAfter)")
            #expect(away.object?["rssi"] is NSNull, "\(away)")
            // Home all along until then.
            let before = Self.presence(cluster).filter { $0.index < away.index }.compactMap { $0.object?["state"] as? String }
            #expect(before.allSatisfy { $0 == "home" }, "\(before)")
            // Published by one bridge: one not_home, not one per bridge. The marker: each bridge's sightings from a
            // moment past its own not_home deadline (the last advertisement + away_after, 6 s; the sightings' heard-ago
            // in whole seconds, 1 s more), so that a not_home of its own would have come before them.
            let pastDeadline = Int(outOfRange.rounded(.up)) + 6 + 1 + 1
            for node in cluster.nodes {
                try await cluster.waitFor("ble/bridges/\(node.id)/sightings", after: quiet, timeout: .seconds(30)) {
                    JSON.integer($0.object?["t"]).map { $0 >= pastDeadline } == true
                }
            }
            let notHome = Self.presence(cluster, after: quiet).filter { $0.object?["state"] as? String == "not_home" }
            #expect(notHome.count == 1, "\(notHome)")
        }
    }
}
