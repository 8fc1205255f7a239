import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Helpers of the fault and known-peripheral tests: the simulator's control interface
/// (`scripts/sim/simctl`), restarts of the simulator and of the broker, and the checks every
/// fault test makes (recovery, no duplicate subscriptions, no leaked connections).
extension Harness {
    // MARK: - Simulator control

    /// `scripts/sim/simctl METHOD ARGS...` against this test's bus; returns its output.
    @discardableResult
    func simControl(_ method: String, _ arguments: String...) async throws -> String {
        try await simControl(method, arguments)
    }

    /// `scripts/sim/simctl METHOD ARGS...` against this test's bus; returns its output.
    @discardableResult
    func simControl(_ method: String, _ arguments: [String]) async throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        let (termination, output) = try await ChildProcess.run(
            FaultPaths.simctl, [method] + arguments, environment: environment, directory: directory,
            timeout: .seconds(40))
        guard termination == .exited(0) else {
            throw HarnessError("simctl \(method) \(arguments.joined(separator: " ")) failed (\(termination)): \(output)")
        }
        return output
    }

    /// The simulator's counters (`GetStats`).
    func simStats() async throws -> SimStats {
        let output = try await simControl("GetStats")
        guard let object = JSON.object(output) else { throw HarnessError("GetStats is not a JSON object: \(output)") }
        return SimStats(raw: object)
    }

    /// Restarts `bluez-sim` as bluetoothd restarts (SIGTERM, `down` away, started again with the
    /// same options; pass `--state-dir` in ``HarnessOptions/simulatorArguments`` so that it
    /// remembers the devices it knew, and `--append-logs` to keep its logs).
    func restartSimulator(down: Duration = .zero) async throws {
        if let simulator { await simulator.stop() }
        // `startSimulator` waits for "bluez-sim ready" in sim.out: start from an empty file.
        unlink("\(directory)/sim.out")
        if down > .zero { try await Task.sleep(for: down) }  // the outage itself, not a wait for an outcome
        try await startSimulator()
    }

    /// Stops the broker (and the observer), keeps it away for `down`, and starts it again on the
    /// same port with a new observer (which appends to the same output, so indices go on).
    /// `whileAway` runs while the broker is down.
    func restartBroker(down: Duration, whileAway: () async throws -> Void = {}) async throws {
        await observer.stop()
        if let broker { await broker.stop() }
        let away = ContinuousClock.now
        try await whileAway()
        let left = down - (ContinuousClock.now - away)
        if left > .zero { try await Task.sleep(for: left) }  // the outage itself, not a wait for an outcome
        try await startBroker()
    }

    // MARK: - Logs

    /// The bridge's log from byte `offset` on (to look at one run of a restarted bridge).
    func bridgeLog(from offset: Int) -> Substring {
        let log = bridgeLog
        let utf8 = log.utf8
        guard offset < utf8.count else { return "" }
        return Substring(log[utf8.index(utf8.startIndex, offsetBy: offset)...])
    }

    /// Waits until the bridge's log from byte `offset` on has a line satisfying `predicate`.
    @discardableResult
    func waitForBridgeLog(
        from offset: Int, timeout: Duration = .seconds(30), _ what: String, where predicate: (Substring) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = bridgeLog(from: offset).split(separator: "\n").first(where: predicate) { return String(line) }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("no line in the bridge log with \(what) within \(timeout)\n\(context())")
            }
            // The log is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: - The checks of every fault test

    /// The value topics of `segment` published before message index `before` (not commands or results).
    func valueTopics(of segment: String, before: Int) -> Set<String> {
        Set(
            observer.all.prefix(before).filter { message in
                let levels = message.topic.split(separator: "/")
                return levels.count == 4 && levels[1] == segment
            }.map(\.topic))
    }

    /// Waits until every device is online and has published its value topics after the
    /// connection (the first values of a connection, as the bridge publishes them).
    func waitUntilPublishing(_ segments: [String], timeout: Duration = .seconds(30)) async throws {
        for segment in segments {
            try await waitFor("ble/\(segment)/availability", timeout: timeout) { $0.payload == "online" }
        }
        // Every device publishes at least one value (read once after connecting, or notified).
        for segment in segments {
            try await waitFor("ble/\(segment)/+/+", timeout: timeout)
        }
    }

    /// Proves a device's recovery from a fault injected after message index `mark`: its
    /// availability goes `offline`, then `online` again, and every value topic it had published
    /// before the fault is published again. Returns the index of the `online` message.
    @discardableResult
    func expectRecovery(
        of segment: String, after mark: Int, topics: Set<String>, timeout: Duration = .seconds(30)
    ) async throws -> Int {
        let offline = try await waitFor("ble/\(segment)/availability", after: mark, timeout: timeout) {
            $0.payload == "offline"
        }
        let online = try await waitFor("ble/\(segment)/availability", after: offline.index + 1, timeout: timeout) {
            $0.payload == "online"
        }
        // Reads after connecting are published just before `online`, notifications after it.
        for topic in topics.sorted() {
            try await waitFor(topic, after: offline.index + 1, timeout: timeout)
        }
        #expect(runningBridge.isRunning, "the bridge exited: \(context())")
        return online.index
    }

    /// No duplicate subscriptions and no leaked connections, as the simulator counts them: for
    /// every device in `connected`, one connection, at most one notify session per characteristic
    /// (held by one client) and no more `StartNotify` calls per characteristic than connections;
    /// every other device of the scenario is not connected and not connecting.
    func expectNoDuplicateSubscriptionsOrLeaks(connected addresses: [String], sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        // A device that just came online may still be finishing its initial reads: give the
        // counters a moment to agree instead of failing on a transient state.
        let deadline = ContinuousClock.now + .seconds(10)
        var problems: [String] = []
        while true {
            let stats = try await simStats()
            problems = stats.subscriptionAndLeakProblems(connected: Set(addresses))
            if problems.isEmpty || ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(200))  // polling the simulator's counters
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(context())", sourceLocation: sourceLocation)
    }

    /// The last availability payload of each segment so far.
    func availability(_ segment: String) -> String? {
        observer.messages("ble/\(segment)/availability").last?.payload
    }
}

/// The simulator's `GetStats` answer.
struct SimStats: @unchecked Sendable {
    /// The JSON object.
    var raw: [String: Any]

    /// The counters of one device (by address).
    func device(_ address: String) -> [String: Any] {
        (raw["devices"] as? [String: Any])?[address] as? [String: Any] ?? [:]
    }

    /// An integer counter of one device.
    func count(_ address: String, _ key: String) -> Int {
        JSON.integer(device(address)[key]) ?? -1
    }

    /// A boolean of one device.
    func flag(_ address: String, _ key: String) -> Bool {
        JSON.bool(device(address)[key]) ?? false
    }

    /// An adapter's entry.
    func adapter(_ name: String = "hci0") -> [String: Any] {
        (raw["adapters"] as? [String: Any])?[name] as? [String: Any] ?? [:]
    }

    /// The addresses of the scenario's devices.
    var addresses: [String] { ((raw["devices"] as? [String: Any])?.keys).map { Array($0).sorted() } ?? [] }

    /// What is wrong with the subscriptions and connections (empty when nothing is).
    func subscriptionAndLeakProblems(connected: Set<String>) -> [String] {
        var problems: [String] = []
        for address in connected.sorted() where !addresses.contains(address) {
            problems.append("\(address) is not among GetStats' devices \(addresses)")
        }
        for address in addresses {
            let device = device(address)
            guard let isConnected = JSON.bool(device["connected"]) else {
                problems.append("\(address): GetStats has no \"connected\": \(device.keys.sorted())")
                continue
            }
            if connected.contains(address) {
                if !isConnected { problems.append("\(address) is not connected") }
                // A statistic GetStats does not report (renamed, say) is a problem, not a pass.
                guard let connects = JSON.integer(device["connects"]),
                    let sessions = device["notify_sessions_by_uuid"] as? [String: Any],
                    let clients = device["notify_clients"] as? [Any],
                    let calls = device["start_notify_calls_by_uuid"] as? [String: Any]
                else {
                    problems.append("\(address): GetStats lacks connects, notify_sessions_by_uuid, notify_clients or "
                        + "start_notify_calls_by_uuid: \(device.keys.sorted())")
                    continue
                }
                for (uuid, count) in sessions where (JSON.integer(count) ?? 2) > 1 {
                    problems.append("\(address): \(count) notify sessions on \(uuid)")
                }
                if clients.count > 1 { problems.append("\(address): several notify clients \(clients)") }
                for (uuid, count) in calls where (JSON.integer(count) ?? connects + 1) > connects {
                    problems.append(
                        "\(address): \(count) StartNotify calls on \(uuid) for \(connects) connections (duplicate subscription)")
                }
            } else {
                if isConnected { problems.append("\(address) is connected although the bridge should not hold it (leak)") }
                if JSON.bool(device["connecting"]) == true { problems.append("\(address) is still connecting") }
            }
        }
        return problems
    }
}

/// Paths of the fault tests.
enum FaultPaths {
    /// The simulator's control command.
    static var simctl: String { "\(Paths.root)/scripts/sim/simctl" }

    /// A new temporary directory (for state files and the simulator's state directory).
    static func temporaryDirectory(_ prefix: String = "ble-mqtt-bridge-fault") throws -> String {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
        return String(cString: created)
    }

    /// Removes a directory made by ``temporaryDirectory(_:)`` (kept with `KEEP_INTEGRATION_DIRS=1`).
    static func remove(_ directory: String) {
        if ProcessInfo.processInfo.environment["KEEP_INTEGRATION_DIRS"] == "1" {
            print("fault test directory kept: \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

/// Bridge configurations of the fault tests.
enum FaultConfig {
    /// The three demo devices the default configuration connects.
    static let connectedAddresses = [Demo.heartRateAddress, Demo.environmentAddress, Demo.echoAddress]

    /// The demo devices named by address (no service filter: the bridge scans only while one is
    /// missing), with a short scan watchdog; `extra` is appended (top-level YAML).
    static func byAddress(port: Int, scanWatchdog: String = "2s", extra: String = "") -> String {
        """
        mqtt:
          url: mqtt://127.0.0.1:\(port)
          client_id: bridge-under-test
        bluetooth:
          adapter: hci0
          scan_watchdog: \(scanWatchdog)
        reconnect:
          initial_delay: 200ms
          max_delay: 1s
        devices:
          - match: { address: "\(Demo.heartRateAddress)" }
          - match: { address: "\(Demo.environmentAddress)" }
          - match: { address: "\(Demo.echoAddress)" }
        \(extra)

        """
    }

    /// The harness's default configuration with a state file.
    static func withStateFile(_ path: String, services: [String] = ["180d", "181a", Demo.echoService]) -> String {
        """
        mqtt:
          url: mqtt://127.0.0.1:${MQTT_PORT}
          client_id: bridge-under-test
        bluetooth:
          adapter: hci0
          services: [\(services.map { "\"\($0)\"" }.joined(separator: ", "))]
        state_file: \(path)
        reconnect:
          initial_delay: 200ms
          max_delay: 1s

        """
    }
}

/// The state file's content (SPEC §5).
struct StateFileContent: @unchecked Sendable {
    /// The `peripherals` entries.
    var peripherals: [[String: Any]]

    /// Reads and parses it; `nil` when it is missing or not the SPEC's shape.
    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path),
            let object = JSON.object(String(decoding: data, as: UTF8.self)),
            let list = object["peripherals"] as? [Any]
        else { return nil }
        peripherals = list.compactMap { $0 as? [String: Any] }
    }

    /// The entry of `address`.
    func entry(_ address: String) -> [String: Any]? {
        peripherals.first { ($0["address"] as? String)?.uppercased() == address }
    }

    /// Waits until the file at `path` satisfies `predicate`.
    static func wait(
        _ path: String, timeout: Duration = .seconds(20), _ what: String, context: () -> String,
        where predicate: (StateFileContent) -> Bool
    ) async throws -> StateFileContent {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let content = StateFileContent(path: path), predicate(content) { return content }
            guard ContinuousClock.now < deadline else {
                let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? "(missing)"
                throw HarnessError("state file \(path): no \(what) within \(timeout); it holds: \(text)\n\(context())")
            }
            // The bridge writes it with a rename: poll at a short interval.
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
