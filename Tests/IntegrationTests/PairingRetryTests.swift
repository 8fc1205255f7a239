import Foundation
import Testing

/// A failed pairing is not hammered (SPEC §11), on bluez-sim, which pairs on its own (as bluetoothd does) whenever a
/// read, StartNotify or AcquireNotify needs encryption on a link without a bond, and drops the link when that fails.
/// With a wrong passkey every connection could ask the agent again and again (the lock may lock itself after a few
/// wrong codes): one pairing attempt per connection, the next connection 30 s after the failure, then 60 s; a
/// `bridge/request/reconnect` starts the delays over.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PairingRetryTests {
    static let service = "6e5a0030-0000-4000-8000-00000000abcd"
    static let events = "6e5a0031-0000-4000-8000-00000000abcd"
    static let state = "6e5a0032-0000-4000-8000-00000000abcd"
    static let lock = "C0:FF:EE:00:01:03"

    static let scenario = """
        settings:
          advertise_delay: 100ms
          connect_delay: 50ms
          resolve_delay: 100ms
          resolve_delay_cached: 50ms
          gatt_export_time: 50ms
          disconnect_delay: 50ms
          pairing_failure_delay: 100ms
        adapters:
          - name: hci0
            address: "00:11:22:33:44:78"
        devices:
          - name: Keypad Sim
            address: "\(lock)"
            pairing: passkey
            passkey: "123456"
            advertise: ["\(service)"]
            services:
              - uuid: "\(service)"
                characteristics:
                  - { uuid: "\(events)", flags: [notify], security: authenticated, values: ["01"], interval: 1s }
                  - { uuid: "\(state)", flags: [read], security: authenticated, value: "2b" }

        """

    static var options: HarnessOptions {
        var options = HarnessOptions()
        options.scenarioText = scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
            reconnect: { initial_delay: 200ms, max_delay: 1s }
            devices:
              - { match: { address: "\(Self.lock)" }, name: keypad, pairing: passkey, passkey: "654321" }

            """
        }
        return options
    }

    /// The time of a bridge log line (`2026-11-28T11:18:42+0000 …`), as Unix seconds.
    static func logTime(_ line: Substring) -> Double? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        return formatter.date(from: String(line.prefix(24)))?.timeIntervalSince1970
    }

        /// The bridge's warnings of failed pairings (one per failed attempt).
    static func failed(_ line: Substring) -> Bool { line.contains("pairing failed") && line.contains(Self.lock) }

    /// Polls the simulator's counters (each `GetStats` is a `simctl` run) until `predicate` holds; the time it held.
    static func waitForStats(
        _ harness: Harness, _ what: String, timeout: Duration, _ predicate: (SimStats) -> Bool
    ) async throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        while true {
            let stats = try await harness.simStats()
            if predicate(stats) { return ContinuousClock.now }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("no \(what) within \(timeout): \(stats.device(Self.lock))\n\(harness.context())")
            }
            try await Task.sleep(for: .milliseconds(50))  // polling the simulator's counters
        }
    }

    /// Failed pairings of the keypad at least `n`.
    static func failures(_ n: Int) -> (SimStats) -> Bool { { $0.count(Self.lock, "pairing_failures") >= n } }

    /// Pairing attempts and links of the keypad so far, checked equal to `expected`: one attempt per connection.
    static func onePerConnection(_ harness: Harness, _ expected: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let stats = try await harness.simStats()
        let attempts = stats.count(Self.lock, "pairing_attempts"), links = stats.count(Self.lock, "connects")
        #expect(attempts == expected && links == expected, "pairing attempts \(attempts), links \(links): \(stats.device(Self.lock))",
                sourceLocation: sourceLocation)
        #expect(stats.count(Self.lock, "pairings") == 0, sourceLocation: sourceLocation)
    }

    @Test("a wrong passkey: one pairing attempt per connection; the next connection 30 s after the failure, then 60 s; reconnect starts over")
    func wrongPasskeyBacksOff() async throws {
        try await Harness.with(Self.options) { harness in
            _ = try await Self.waitForStats(harness, "failed pairing", timeout: .seconds(30), Self.failures(1))
            try await Self.onePerConnection(harness, 1)
            let secondAt = try await Self.waitForStats(harness, "second failed pairing", timeout: .seconds(45), Self.failures(2))
            try await Self.onePerConnection(harness, 2)
            // One warning per failed attempt, saying when the next one is. The delay is measured between the bridge's own
            // lines (its log's whole seconds): the instants the test saw the counters lag by as much as a loaded
            // machine delays a `simctl` run (CI saw 23 s between them for a 30 s delay).
            let lines = try await harness.waitForBridgeLogLines(count: 2, timeout: .seconds(5), "the failed pairings", where: Self.failed)
            #expect(lines.count == 2, "\(lines)")
            let times = lines.compactMap(Self.logTime)
            #expect(times.count == 2 && times[1] - times[0] >= 29, "the second failed pairing \(times) came too early: \(lines)")
            #expect(lines[0].contains("next attempt in 30.0 seconds") && lines[0].contains("is the passkey right?"), "\(lines[0])")
            #expect(lines[1].contains("next attempt in 60.0 seconds"), "\(lines[1])")
            #expect(harness.observer.all.allSatisfy { !$0.topic.hasPrefix("ble/keypad/\(Self.service)") }, "no value without the bond")

            // A reconnect request: a connection at once, and the delay after its failure is 30 s again.
            let answer = try await harness.bridgeRequest("reconnect", #""device": "keypad""#)
            #expect(answer["status"] as? String == "ok", "\(answer)")
            let thirdAt = try await Self.waitForStats(harness, "third failed pairing", timeout: .seconds(20), Self.failures(3))
            #expect(thirdAt - secondAt < .seconds(50), "reconnect did not wait for the 60 s delay")
            try await Self.onePerConnection(harness, 3)
            let third = try await harness.waitForBridgeLogLines(count: 3, timeout: .seconds(5), "the failed pairing after reconnect", where: Self.failed)
            #expect(third.count == 3 && third[2].contains("next attempt in 30.0 seconds"), "\(third)")
        }
    }
}
