import Foundation
import Testing

/// Trackers (SPEC §12) on bluez-sim: a phone whose resolvable private address changes every 2 s
/// stays one tracker, `home`; quiet for `away_after` it goes `not_home`, and comes back; an
/// iBeacon tracker; advertisers no tracker names are never published.
@Suite(.timeLimit(.minutes(2)))
struct PresenceTests {
    static let irk = "ec0234a357c8ad05341010a60a397d9b"
    static let beacon = "fda50693-a4e2-4fb1-afcf-c6eb07647825"
    static let phone = "C0:FF:EE:00:19:01"

    static let scenario = """
        settings:
          advertise_delay: 100ms
          advertise_jitter: 50ms
          rssi_interval: 500ms
          temporary_timeout: 4s
        adapters:
          - name: hci0
            address: "00:11:22:33:44:77"
        devices:
          - { name: Phone, address: "\(phone)", irk: "\(irk)", rotate_every: 2s, rssi: -60 }
          - { address: "C0:FF:EE:00:19:02", ibeacon: "\(beacon):1:2", rssi: -70 }
          - { address: "C0:FF:EE:00:19:03", ibeacon: "\(beacon):9:9", rssi: -50 }
          - { name: Stranger, address: "5A:00:00:00:19:04", address_type: random, rssi: -40, advertise: ["180f"] }

        """

    static func options() -> HarnessOptions {
        var options = HarnessOptions()
        options.scenarioText = scenario
        options.config = { port in
            """
            mqtt: { url: "mqtt://127.0.0.1:\(port)", client_id: bridge-under-test }
            bluetooth: { adapter: hci0 }
            trackers:
              - { name: alice_phone, match: { irk: "\(irk)" }, away_after: 4s }
              - { name: beacon, match: { ibeacon: "\(beacon):1:2" } }

            """
        }
        return options
    }

    static func states(_ harness: Harness, _ tracker: String) -> [String] {
        harness.observer.messages("ble/\(tracker)/presence").compactMap { $0.object?["state"] as? String }
    }

    @Test("a rotating phone stays one tracker and home; quiet → not_home after away_after; an iBeacon; strangers never published")
    func phoneAndBeacon() async throws {
        try await Harness.with(Self.options()) { harness in
            let home = try await harness.waitFor("ble/alice_phone/presence", timeout: .seconds(20)) {
                $0.object?["state"] as? String == "home"
            }
            #expect((home.object?["rssi"] as? Int).map { (-70 ... -50).contains($0) } == true, "\(home)")
            #expect(home.object?["last_seen"] as? Int != nil, "\(home)")
            let beacon = try await harness.waitFor("ble/beacon/presence", timeout: .seconds(20))
            #expect(beacon.object?["state"] as? String == "home", "\(beacon)")

            // Three rotations: new addresses, the same tracker, still home (never not_home). The marker: after the
            // simulator's third rotation, the phone's RSSI moves, and only a bridge that resolves the address it
            // advertises from then (the old ones are silent) can publish the move; by then away_after (4 s) has
            // passed since the first rotation, so a tracker lost at a rotation would have gone not_home before.
            let rotations = harness.simulatorLog.utf8.count
            try await harness.waitForSimulatorLogLines(
                count: 3, after: rotations, timeout: .seconds(20), "the phone's address rotated"
            ) { $0.contains("private address rotated") && $0.contains(Self.phone) }
            let louder = harness.observer.count
            try await harness.simControl("SetRSSI", Self.phone, "", "-35")
            let moved = try await harness.waitFor("ble/alice_phone/presence", after: louder, timeout: .seconds(30)) {
                ($0.object?["rssi"] as? Int).map { $0 >= -45 } == true
            }
            let states = Self.states(harness, "alice_phone")
            #expect(states.count >= 2 && states.allSatisfy { $0 == "home" }, "\(states), the move: \(moved)")
            let resolved = ChildProcess.read(harness.bridgeLogPath).split(separator: "\n").filter {
                $0.contains("tracker alice_phone: heard")
            }
            #expect(resolved.count == 1, "one tracker, logged once: \(resolved)")

            // Out of range: not_home after away_after (4 s), with no RSSI; back: home.
            let mark = harness.observer.count
            let silenced = ContinuousClock.now
            try await harness.simControl("SetInRange", Self.phone, "false")
            let away = try await harness.waitFor("ble/alice_phone/presence", after: mark, timeout: .seconds(15)) {
                $0.object?["state"] as? String == "not_home"
            }
            let took = ContinuousClock.now - silenced
            // Not before away_after (4 s, less the time since the last report the bridge saw: 0.5 s apart, up to a
            // second on a busy machine, seen at 1.013 s); how late is bounded by the wait above (15 s).
            #expect(took >= .milliseconds(2500), "not_home after \(took)")
            #expect(away.object?["rssi"] is NSNull, "\(away)")
            #expect(Self.states(harness, "beacon").allSatisfy { $0 == "home" }, "the beacon is still heard")
            let back = harness.observer.count
            try await harness.simControl("SetInRange", Self.phone, "true")
            _ = try await harness.waitFor("ble/alice_phone/presence", after: back, timeout: .seconds(15)) {
                $0.object?["state"] as? String == "home"
            }

            let retained = try await harness.retained("ble/alice_phone/presence")
            #expect(retained.object?["state"] as? String == "home", "retained: \(retained)")

            // Only the configured trackers, and nothing for the others (no entity per passer-by).
            let presence = Set(harness.observer.all.map(\.topic).filter { $0.hasSuffix("/presence") })
            #expect(presence == ["ble/alice_phone/presence", "ble/beacon/presence"], "\(presence)")
            let strangers = harness.observer.all.map(\.topic).filter {
                $0.contains("5a0000001904") || $0.contains("c0ffee001903") || $0.contains("c0ffee001901")
            }
            #expect(strangers.isEmpty, "\(strangers)")
        }
    }

    @Test("scan shows the iBeacons and, with --irk, the addresses that resolve to the key")
    func scanShowsTrackers() async throws {
        var options = Self.options()
        options.startBroker = false
        options.startBridge = false
        try await Harness.with(options) { harness in
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = harness.busAddress
            let scan = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "3", "--irk", "00112233445566778899aabbccddeeff", "--irk", Self.irk],
                environment: environment, directory: harness.directory)
            #expect(scan.termination == .exited(0), "\(scan.termination): \(scan.output)")
            let lines = scan.output.split(separator: "\n")
            #expect(lines.contains { $0.contains("ibeacon \(Self.beacon):1:2") }, "\(scan.output)")
            #expect(lines.contains { $0.contains("ibeacon \(Self.beacon):9:9") }, "\(scan.output)")
            let phone = lines.filter { $0.contains("irk 2") }
            #expect(!phone.isEmpty && phone.allSatisfy { $0.contains("random") }, "\(scan.output)")
            #expect(!lines.contains { $0.contains("irk 1") }, "the other key resolves nothing: \(scan.output)")
            // The key as BlueZ stores it (least significant byte first): recognised, with the hex to configure.
            let reversed = String(decoding: Array(Self.irk.utf8).chunked2().reversed().joined(), as: UTF8.self)
            let flipped = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "3", "--irk", reversed], environment: environment, directory: harness.directory)
            #expect(flipped.output.contains("irk 1 in the other byte order: configure irk \"\(Self.irk)\""), "\(flipped.output)")
            #expect(!lines.contains { $0.hasPrefix("5A:00:00:00:19:04") && $0.contains("irk") }, "\(scan.output)")
            let bad = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "1", "--irk", "xyz"], environment: environment, directory: harness.directory)
            #expect(bad.termination == .exited(2), "\(bad.termination): \(bad.output)")
            #expect(bad.output.contains("--irk takes 32 hex digits"), "\(bad.output)")
        }
    }
}

extension Array where Element == UInt8 {
    /// The hex digits in pairs (one byte each).
    fileprivate func chunked2() -> [[UInt8]] {
        stride(from: 0, to: count, by: 2).map { Array(self[$0..<Swift.min($0 + 2, count)]) }
    }
}
