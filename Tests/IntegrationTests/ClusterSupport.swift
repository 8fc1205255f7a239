import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One host of a cluster test (SPEC §10): its own dbus-daemon and `bluez-sim` (one adapter, `hci0`; the link
/// directory shared with the other hosts' simulators, so that a peripheral takes one link across them) and a
/// `ble-mqtt-bridge` with its own `bridge.id`, all under `{cluster directory}/{id}`.
final class ClusterNode: @unchecked Sendable {
    /// The bridge's `bridge.id`.
    let id: String
    /// This host's directory.
    let directory: String
    /// The simulator's scenario (written to `scenario.yaml`).
    let scenarioText: String

    private(set) var bus: ChildProcess?
    private(set) var busAddress = ""
    private(set) var simulator: ChildProcess?
    private(set) var bridge: ChildProcess?
    /// How many times the bridge was started (each start appends to the same log).
    private(set) var bridgeStarts = 0
    /// Set when the test signals the bridge.
    private var stopping = false

    init(id: String, directory: String, scenarioText: String) throws {
        self.id = id
        self.directory = directory
        self.scenarioText = scenarioText
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var configPath: String { "\(directory)/bridge.yaml" }
    var bridgeLogPath: String { "\(directory)/bridge.log" }
    var writesLogPath: String { "\(directory)/writes.log" }
    var notifyLogPath: String { "\(directory)/notify.log" }
    var simulatorLogPath: String { "\(directory)/bluez-sim.log" }

    /// The bridge's log (every start of it).
    var bridgeLog: String { ChildProcess.read(bridgeLogPath) }

    /// This simulator's write log, parsed.
    var writes: [CommandWriteLogEntry] {
        ChildProcess.read(writesLogPath).split(separator: "\n").compactMap(CommandWriteLogEntry.init)
    }

    /// Starts the private dbus-daemon (scripts/sim/dbus.conf) and waits for its address.
    func startBus(timeout: Duration = .seconds(10)) async throws {
        (bus, busAddress) = try await Launch.bus(in: directory, name: "dbus-daemon of \(id)", timeout: timeout)
    }

    /// Starts `bluez-sim` with ``scenarioText`` and `--link-dir linkDirectory`, and waits for `bluez-sim ready`.
    func startSimulator(linkDirectory: String, timeout: Duration = .seconds(20)) async throws {
        let scenario = "\(directory)/scenario.yaml"
        try scenarioText.write(toFile: scenario, atomically: true, encoding: .utf8)
        simulator = try await Launch.simulator(
            name: "bluez-sim of \(id)",
            arguments: [
                "--scenario", scenario, "--bus", busAddress, "--write-log", writesLogPath, "--notify-log", notifyLogPath,
                "--link-dir", linkDirectory,
            ],
            directory: directory, errorPath: simulatorLogPath, timeout: timeout)
    }

    /// Writes `config` to ``configPath`` and starts `ble-mqtt-bridge run` on this host's bus.
    @discardableResult
    func startBridge(config: String, logLevel: String) throws -> ChildProcess {
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        let process = try ChildProcess(
            name: "bridge \(id)", executable: Paths.bridge,
            arguments: ["run", "--config", configPath, "--log-level", logLevel],
            environment: environment, outputPath: bridgeLogPath)
        bridge = process
        bridgeStarts += 1
        stopping = false
        return process
    }

    /// Sends `signal` to the bridge, which may then end (``endedUnexpectedly`` stays false).
    func signalBridge(_ signal: Int32) {
        stopping = true
        runningBridge.send(signal)
    }

    /// Whether the bridge ended without the test stopping it.
    var endedUnexpectedly: Bool { !stopping && bridge?.isRunning == false }

    /// The running (or last) bridge process.
    var runningBridge: ChildProcess {
        guard let bridge else { fatalError("the bridge \(id) was not started") }
        return bridge
    }

    /// `scripts/sim/simctl METHOD ARGS...` against this host's simulator; returns its output.
    @discardableResult
    func simctl(_ arguments: [String]) async throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        let (termination, output) = try await ChildProcess.run(
            "\(Paths.root)/scripts/sim/simctl", arguments, environment: environment, directory: directory,
            timeout: .seconds(20))
        guard termination == .exited(0) else {
            throw HarnessError("simctl \(arguments.joined(separator: " ")) on \(id): \(termination): \(output)")
        }
        return output
    }

    /// The simulator's `GetStats` as JSON.
    func stats() async throws -> SimStats {
        let output = try await simctl(["GetStats"])
        guard let object = JSON.object(output) else { throw HarnessError("GetStats of \(id) is not a JSON object: \(output)") }
        return SimStats(raw: object)
    }

    /// Stops the bridge, the simulator and the bus.
    func stop() async {
        stopping = true
        if let bridge { await bridge.stop(grace: .seconds(10)) }
        if let simulator { await simulator.stop() }
        if let bus { await bus.stop() }
    }

    /// Log excerpts for failure messages.
    func context() -> String {
        var text = ""
        if let bridge {
            let state = bridge.termination.map { "ended: \($0)" } ?? "running"
            text += "---- bridge \(id) (\(state)), last lines of its log:\n\(bridge.tail(30))\n"
        }
        if let simulator { text += "---- bluez-sim \(id), last lines:\n\(simulator.tail(8))\n" }
        return text
    }
}

/// What the cluster tests read from a simulator's `GetStats` (scripts/sim/README.md, "Control interface"). A
/// counter GetStats does not report (a renamed statistic, an unknown device) is an issue of the test that reads it
/// and reads as -1, so that no `== 0` or `<= n` check passes on a statistic that is not there.
extension SimStats {
    /// `connects` of a device (successful connections since the start or the last `ResetStats`).
    func connects(_ address: String, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        Self.required(device(address), "connects", of: "device \(address)", sourceLocation)
    }

    /// `connect_attempts` of a device.
    func connectAttempts(_ address: String, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        Self.required(device(address), "connect_attempts", of: "device \(address)", sourceLocation)
    }

    /// Attempts that found a peripheral linked elsewhere (by another simulator, here).
    var linkConflicts: Int { Self.required(raw, "link_conflicts", of: "the simulator", #_sourceLocation) }

    /// The peripherals this simulator holds a link to.
    var links: Set<String> {
        guard let links = raw["links"] as? [String: Any] else {
            Issue.record("GetStats has no \"links\" object: \(raw.keys.sorted())")
            return []
        }
        return Set(links.keys)
    }

    /// Links, conflicts and connects per device, for failure messages.
    var clusterSummary: String {
        "links \(links.sorted()), link_conflicts \(linkConflicts), connects "
            + "\(addresses.map { "\($0)=\(connects($0))" })"
    }

    /// The integer `key` of `entry`; a missing or non-integer one is an issue (at `sourceLocation`) and reads -1.
    private static func required(
        _ entry: [String: Any], _ key: String, of what: String, _ sourceLocation: SourceLocation
    ) -> Int {
        if let value = JSON.integer(entry[key]) { return value }
        Issue.record("GetStats of \(what) has no integer \"\(key)\": \(entry.keys.sorted())", sourceLocation: sourceLocation)
        return -1
    }
}

/// One message as `mosquitto_sub -F '%U %r %t %p'` printed it: with the time the subscriber received it.
struct TimedMessage: Sendable, CustomStringConvertible {
    /// Unix time of receipt (s).
    var time: Double
    var message: MQTTMessage

    var topic: String { message.topic }
    var payload: String { message.payload }
    var description: String { String(format: "%.3f ", time) + message.description }

    init?(line: Substring, index: Int) {
        guard let space = line.firstIndex(of: " "), let time = Double(line[..<space]),
            let message = MQTTMessage(line: line[line.index(after: space)...], index: index)
        else { return nil }
        self.time = time
        self.message = message
    }
}

/// The cluster tests' peripherals, scenarios and bridge configuration.
enum Cluster {
    /// A peripheral of the scenario: its address and its topic segment (`devices[].name`).
    struct Device: Sendable, CustomStringConvertible {
        var address: String
        var segment: String
        var description: String { segment }
    }

    /// Three GATT peripherals, each a writable characteristic and a counter notified ``rate`` times a second.
    static let tick1 = Device(address: "C0:FF:EE:00:01:01", segment: "tick1")
    static let tick2 = Device(address: "C0:FF:EE:00:01:02", segment: "tick2")
    static let tick3 = Device(address: "C0:FF:EE:00:01:03", segment: "tick3")
    /// A BTHome v2 thermometer (advertisements every 500 ms, never connected).
    static let thermo = Device(address: "C0:FF:EE:00:02:01", segment: "thermo")
    static let ticks = [tick1, tick2, tick3]
    static let all = ticks + [thermo]

    /// The ticks' service (the demo Echo Sim's UUIDs).
    static let service = Demo.echoService
    /// `[read, write]`.
    static let writable = Commands.uuid(2)
    /// `[read, notify]`: a 4-byte little-endian counter.
    static let counter = Commands.uuid(10)
    /// Notifications per second of ``counter``.
    static let rate = 10

    /// `ble/{device}/{service}/{counter}`.
    static func valueTopic(_ device: Device) -> String { "ble/\(device.segment)/\(service)/\(counter)" }
    /// `ble/{device}/{service}/{writable}`.
    static func writableTopic(_ device: Device) -> String { "ble/\(device.segment)/\(service)/\(writable)" }

    /// A host's scenario: every device heard at the RSSI given for it (by segment); fast link timings.
    static func scenario(rssi: [String: Int]) -> String {
        var text = """
            settings:
              advertise_delay: 20ms
              advertise_jitter: 0ms
              rssi_interval: 200ms
              connect_delay: 50ms
              resolve_delay: 100ms
              resolve_delay_cached: 50ms
              gatt_objects_first: true
              disconnect_delay: 50ms
              connect_timeout: 1s
              seed: 17
            devices:

            """
        for device in ticks {
            text += """
                  - name: "Clu \(device.segment)"
                    address: "\(device.address)"
                    rssi: \(rssi[device.segment]!)
                    services:
                      - uuid: "\(service)"
                        characteristics:
                          - { uuid: "\(writable)", flags: [read, write], value: "00" }
                          - uuid: "\(counter)"
                            flags: [read, notify]
                            generator: { kind: counter, bytes: 4, start: 0, step: 1 }
                            rate: \(rate)

                """
        }
        text += """
              - name: SBHT-C101
                address: "\(thermo.address)"
                address_type: random
                rssi: \(rssi[thermo.segment]!)
                advertise: []
                broadcast: { kind: bthome_v2, interval: 500ms, temperature: 22.0, humidity: 40, battery: 90 }

            """
        return text
    }

    /// Two hosts, `alpha` and `beta`: alpha hears tick1, tick3 and the thermometer best (30 dB), beta tick2.
    static let hosts: [(id: String, scenario: String)] = [
        ("alpha", scenario(rssi: ["tick1": -50, "tick2": -80, "tick3": -52, "thermo": -55])),
        ("beta", scenario(rssi: ["tick1": -80, "tick2": -50, "tick3": -82, "thermo": -85])),
    ]

    /// The bridges' configuration: the cluster on, `mqtt.keepalive: 5s` (the shortest allowed: a crash shows as
    /// `offline` 7.5 s later), `commands.timeout: 2s`, the devices by address with their segments.
    static func config(switchMargin: Int = 10, switchAfter: String = "60s") -> @Sendable (String, Int) -> String {
        { id, port in
            var text = """
                mqtt:
                  url: mqtt://127.0.0.1:\(port)
                  client_id: bridge-\(id)
                  keepalive: 5s
                bridge:
                  id: \(id)
                cluster:
                  enabled: true
                  switch_margin: \(switchMargin)
                  switch_after: \(switchAfter)
                bluetooth:
                  adapter: hci0
                reconnect:
                  initial_delay: 200ms
                  max_delay: 1s
                commands:
                  timeout: 2s
                devices:

                """
            for device in ticks {
                text += "  - { match: { address: \"\(device.address)\" }, name: \(device.segment) }\n"
            }
            text += "  - { match: { address: \"\(thermo.address)\" }, name: \(thermo.segment), connection: advertisement }\n"
            return text
        }
    }

    /// Harness options with ``hosts`` and ``config(switchMargin:switchAfter:)``.
    static func options(switchMargin: Int = 10, switchAfter: String = "60s") -> ClusterOptions {
        ClusterOptions(nodes: hosts, config: config(switchMargin: switchMargin, switchAfter: switchAfter))
    }
}
