import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a ``ClusterHarness`` starts.
struct ClusterOptions: Sendable {
    /// The hosts: a bridge id and its simulator's scenario each.
    var nodes: [(id: String, scenario: String)]
    /// A bridge's configuration for its id and the broker's port.
    var config: @Sendable (_ id: String, _ port: Int) -> String
    /// The bridges' `--log-level`.
    var logLevel = "debug"
    /// The hosts whose bridge reaches the broker through a ``TCPRelay`` (a network the test can cut).
    var relayed: Set<String> = []
}

/// A cluster's world (SPEC §10): one mosquitto on a free loopback port, an ``MQTTObserver`` and a timestamped
/// subscriber on `ble/#`, and per host (``ClusterNode``) a dbus-daemon, a `bluez-sim` and a bridge; the simulators
/// share one link directory, so that a peripheral takes one link across every host. Everything lives in one
/// temporary directory, removed afterwards (kept with `KEEP_INTEGRATION_DIRS=1`).
final class ClusterHarness: @unchecked Sendable {
    let options: ClusterOptions
    let directory: String
    /// The simulators' shared `--link-dir`.
    let linkDirectory: String
    private(set) var port: Int
    private(set) var broker: Broker?
    private(set) var observerOrNil: MQTTObserver?
    private(set) var timedSubscriber: ChildProcess?
    /// The hosts, in the order of ``ClusterOptions/nodes``.
    private(set) var nodes: [ClusterNode] = []
    /// The relays of ``ClusterOptions/relayed``, by host id.
    private(set) var relays: [String: TCPRelay] = [:]

    private let lock = NSLock()
    private var timedParsedBytes = 0
    private var timedMessages: [TimedMessage] = []

    /// Runs `body` with a started cluster and always stops everything afterwards.
    static func with<T>(_ options: ClusterOptions, _ body: (ClusterHarness) async throws -> T) async throws -> T {
        try Paths.requireBuiltExecutables()
        let harness = try ClusterHarness(options: options)
        do {
            try await harness.start()
            let result = try await body(harness)
            await harness.stop()
            return result
        } catch {
            await harness.stop()
            throw error
        }
    }

    private init(options: ClusterOptions) throws {
        self.options = options
        directory = try Launch.temporaryDirectory("/tmp/ble-mqtt-bridge-cluster")
        linkDirectory = "\(directory)/links"
        port = try Broker.freePort()
    }

    private func start() async throws {
        var attempt = 1
        while true {
            do {
                broker = try await Broker.start(port: port, directory: directory)
                break
            } catch let error as HarnessError where error.description.contains("Address already in use") && attempt < 5 {
                attempt += 1
                port = try Broker.freePort()
            }
        }
        for id in options.relayed { relays[id] = try TCPRelay(upstreamPort: port) }
        observerOrNil = try await MQTTObserver.start(broker: broker!, directory: directory)
        try await startTimedSubscriber()
        for (id, scenario) in options.nodes {
            let node = try ClusterNode(id: id, directory: "\(directory)/\(id)", scenarioText: scenario)
            nodes.append(node)
            try await node.startBus()
            try await node.startSimulator(linkDirectory: linkDirectory)
        }
        for node in nodes { try startBridge(node) }
    }

    /// `mosquitto_sub -F '%U %r %t %p' -t 'ble/#'`: the receipt time of every message, for the measured times.
    private func startTimedSubscriber(timeout: Duration = .seconds(10)) async throws {
        let clientID = "timed-\(UInt32.random(in: 0...UInt32.max))"
        let process = try ChildProcess(
            name: "timed-subscriber", executable: Paths.mosquittoSub,
            arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-i", clientID, "-q", "1", "-F", "%U %r %t %p", "-t", "ble/#"],
            environment: ProcessInfo.processInfo.environment, outputPath: "\(directory)/timed.out",
            errorPath: "\(directory)/timed.err")
        timedSubscriber = process
        let deadline = ContinuousClock.now + timeout
        while !broker!.hasSubscription(client: clientID, topic: "ble/#") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw HarnessError("the timed mosquitto_sub did not subscribe within \(timeout): \(process.errorOutput)")
            }
            // The broker's log is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Starts (or restarts) a host's bridge with the options' configuration.
    @discardableResult
    func startBridge(_ node: ClusterNode) throws -> ChildProcess {
        try node.startBridge(config: options.config(node.id, relays[node.id]?.port ?? port), logLevel: options.logLevel)
    }

    /// The host whose bridge has `id`.
    func node(_ id: String) -> ClusterNode {
        guard let node = nodes.first(where: { $0.id == id }) else { fatalError("no cluster node \(id)") }
        return node
    }

    /// Stops every bridge first (they can still reach the broker and their buses), then the rest.
    func stop() async {
        await withTaskGroup(of: Void.self) { group in
            for node in nodes {
                if let bridge = node.bridge { group.addTask { await bridge.stop(grace: .seconds(10)) } }
            }
        }
        for node in nodes { await node.stop() }
        if let observerOrNil { await observerOrNil.stop() }
        if let timedSubscriber { await timedSubscriber.stop(grace: .seconds(2)) }
        for relay in relays.values { relay.stop() }
        if let broker { await broker.stop() }
        if ProcessInfo.processInfo.environment["KEEP_INTEGRATION_DIRS"] == "1" {
            print("cluster test directory kept: \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    // MARK: - Observing

    /// The `ble/#` observer.
    var observer: MQTTObserver {
        guard let observerOrNil else { fatalError("the observer was not started") }
        return observerOrNil
    }

    /// Log excerpts of every host, for failure messages.
    func context() -> String { nodes.map { $0.context() }.joined() }

    /// Waits for a message on the observer; a timeout error carries the logs of every host.
    @discardableResult
    func waitFor(
        _ filter: String, after: Int = 0, timeout: Duration = .seconds(30),
        where predicate: (MQTTMessage) -> Bool = { _ in true }
    ) async throws -> MQTTMessage {
        // In slices, to fail at once when a bridge ended that the test did not stop.
        let deadline = ContinuousClock.now + timeout
        while true {
            let slice = min(.seconds(1), deadline - ContinuousClock.now)
            do {
                return try await observer.waitFor(filter, after: after, timeout: max(slice, .zero), context: context, where: predicate)
            } catch is HarnessError {
                if let ended = nodes.first(where: { $0.endedUnexpectedly }) {
                    throw HarnessError("the bridge \(ended.id) ended while waiting for \(filter)\n\(context())")
                }
                guard ContinuousClock.now < deadline else {
                    let seen = observer.messages(filter).suffix(10).map(\.description).joined(separator: "\n")
                    throw HarnessError(
                        "no matching message on \(filter) within \(timeout); the last ones on that filter:\n\(seen)\n\(context())")
                }
            }
        }
    }

    /// Every message the timestamped subscriber received so far, in order.
    var timed: [TimedMessage] {
        lock.withLock {
            guard let path = timedSubscriber?.outputPath, let handle = FileHandle(forReadingAtPath: path) else {
                return timedMessages
            }
            defer { try? handle.close() }
            if (try? handle.seek(toOffset: UInt64(timedParsedBytes))) != nil, let data = try? handle.readToEnd(),
                let lastNewline = data.lastIndex(of: 0x0a)
            {
                let text = String(decoding: data[...lastNewline], as: UTF8.self)
                for line in text.split(separator: "\n") {
                    if let message = TimedMessage(line: line, index: timedMessages.count) { timedMessages.append(message) }
                }
                timedParsedBytes += lastNewline - data.startIndex + 1
            }
            return timedMessages
        }
    }

    /// Waits until the timestamped subscriber has received a message on `topic` after Unix time `after` that
    /// satisfies `predicate`, and returns it.
    @discardableResult
    func waitForTimed(
        _ filter: String, after: Double, timeout: Duration = .seconds(30), where predicate: (TimedMessage) -> Bool = { _ in true }
    ) async throws -> TimedMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = timed.first(where: {
                $0.time > after && MQTTObserver.topic($0.topic, matches: filter) && predicate($0)
            }) {
                return message
            }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("no message on \(filter) after \(after) within \(timeout)\n\(context())")
            }
            // mosquitto_sub writes to a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Now, as Unix time (the clock of the timestamped subscriber).
    static var now: Double { Date().timeIntervalSince1970 }

    // MARK: - MQTT

    /// What a new subscriber receives first on `topic` (the retained message), with its retain flag.
    func retained(_ topic: String, timeout: Int = 10) async throws -> MQTTMessage {
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoSub,
            ["-h", "127.0.0.1", "-p", "\(port)", "-C", "1", "-W", "\(timeout)", "-F", "%r %t %p", "-t", topic],
            directory: directory, timeout: .seconds(timeout + 5))
        guard termination == .exited(0), let line = output.split(separator: "\n").first,
            let message = MQTTMessage(line: line, index: 0)
        else {
            throw HarnessError("no retained message on \(topic) (\(termination)): \(output)\n\(context())")
        }
        return message
    }

    /// The retained owner claims, `mosquitto_sub -t 'ble/+/owner'` as a user runs it: every retained message it gets
    /// within `window` seconds of subscribing, by topic.
    func retainedOwners(window: Int = 2) async throws -> [String: MQTTMessage] {
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoSub,
            ["-h", "127.0.0.1", "-p", "\(port)", "-W", "\(window)", "--retained-only", "-F", "%r %t %p", "-t", "ble/+/owner"],
            directory: directory, timeout: .seconds(window + 10))
        // -W ends it with status 27 (timeout) once the retained messages are in.
        guard termination == .exited(0) || termination == .exited(27) else {
            throw HarnessError("mosquitto_sub -t 'ble/+/owner' failed (\(termination)): \(output)")
        }
        var owners: [String: MQTTMessage] = [:]
        for (index, line) in output.split(separator: "\n").enumerated() {
            if let message = MQTTMessage(line: line, index: index), message.retained { owners[message.topic] = message }
        }
        return owners
    }

    /// `mosquitto_pub -q 1 -t topic -m payload`.
    func publish(_ topic: String, _ payload: String) async throws {
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload],
            directory: directory, timeout: .seconds(15))
        guard termination == .exited(0) else { throw HarnessError("mosquitto_pub to \(topic) failed (\(termination)): \(output)") }
    }
}

// MARK: - Cluster checks

extension ClusterHarness {
    /// The bridge the latest `owner` message of `device` names (as the observer saw it), `nil` before any.
    func owner(of device: Cluster.Device) -> String? {
        observer.messages("ble/\(device.segment)/owner").last?.object?["bridge"] as? String
    }

    /// Waits until every bridge is `online`, every device has an owner (the one `expected` names, when given), and
    /// every tick is `online` after its latest claim with values flowing (three); returns the owners by segment.
    /// Competing claims come within a claim wait (1 s) of each other, and only the last one's bridge connects.
    @discardableResult
    func waitForSettled(owners expected: [String: String]? = nil, timeout: Duration = .seconds(40)) async throws -> [String: String] {
        for node in nodes {
            try await waitFor("ble/bridges/\(node.id)/state", timeout: timeout) { $0.payload == "online" }
        }
        for device in Cluster.all {
            try await waitFor("ble/\(device.segment)/owner", timeout: timeout) { _ in
                guard let owner = self.owner(of: device) else { return false }
                return expected == nil || owner == expected?[device.segment]
            }
        }
        for device in Cluster.ticks {
            let claimed = observer.messages("ble/\(device.segment)/owner").last!.index
            let online = try await waitFor("ble/\(device.segment)/availability", after: claimed, timeout: timeout) {
                $0.payload == "online"
            }
            try await waitForValues(device, count: 3, after: online.index)
        }
        let claimed = observer.messages("ble/\(Cluster.thermo.segment)/owner").last!.index
        try await waitFor("ble/\(Cluster.thermo.segment)/advertisement", after: claimed, timeout: timeout)
        var owners: [String: String] = [:]
        for device in Cluster.all { owners[device.segment] = owner(of: device) }
        return owners
    }

    /// Waits until at least `count` messages arrived on `topic` after observer index `after`, and returns them all.
    @discardableResult
    func waitForMessages(_ topic: String, count: Int, after: Int, timeout: Duration = .seconds(20)) async throws -> [MQTTMessage] {
        _ = try await waitFor(topic, after: after, timeout: timeout) { _ in
            self.observer.messages(topic).filter { $0.index >= after }.count >= count
        }
        return observer.messages(topic).filter { $0.index >= after }
    }

    /// ``waitForMessages(_:count:after:timeout:)`` on a tick's counter.
    @discardableResult
    func waitForValues(_ device: Cluster.Device, count: Int, after: Int, timeout: Duration = .seconds(20)) async throws -> [MQTTMessage] {
        try await waitForMessages(Cluster.valueTopic(device), count: count, after: after, timeout: timeout)
    }

    /// Both simulators' stats, by bridge id.
    func stats() async throws -> [String: SimStats] {
        var result: [String: SimStats] = [:]
        for node in nodes { result[node.id] = try await node.stats() }
        return result
    }

    /// Zeroes every simulator's counters (links stay).
    func resetStats() async throws {
        for node in nodes { try await node.simctl(["ResetStats"]) }
    }

    /// Checks that every tick is linked by exactly one simulator, that of `owners[segment]`, and that no connect
    /// ever found a peripheral linked by the other simulator (a second link was never even attempted).
    func expectOneLinkEach(owners: [String: String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let stats = try await stats()
        for device in Cluster.ticks {
            let holders = stats.filter { $0.value.links.contains(device.address) }.map(\.key).sorted()
            #expect(holders == [owners[device.segment]!], "\(device) is linked by \(holders)", sourceLocation: sourceLocation)
        }
        for (id, stat) in stats {
            #expect(stat.linkConflicts == 0, "\(id): a connect found a peripheral linked elsewhere: \(stat.clusterSummary)", sourceLocation: sourceLocation)
            #expect(
                stat.connectAttempts(Cluster.thermo.address) == 0, "\(id) connected to the advertisement device",
                sourceLocation: sourceLocation)
        }
    }
}
