import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a ``Harness`` starts.
struct HarnessOptions: Sendable {
    /// The simulator's scenario.
    var scenario = Paths.demoScenario
    /// A scenario given as text: written into the test's directory and used instead of
    /// ``scenario``.
    var scenarioText: String?
    /// Extra `bluez-sim` options.
    var simulatorArguments: [String] = []
    /// Start `bluez-sim` (else only the bus runs; start it later with ``Harness/startSimulator()``).
    var startSimulator = true
    /// Start mosquitto and the observer (else later with ``Harness/startBroker()``).
    var startBroker = true
    /// Start the bridge (else later with ``Harness/startBridge()``).
    var startBridge = true
    /// The bridge configuration for a broker port; ignored when ``configFile`` is set.
    var config: @Sendable (_ port: Int) -> String = Harness.defaultConfig
    /// An existing configuration file to run the bridge with (e.g. the demo's `bridge.yaml`).
    var configFile: String?
    /// Extra environment of the bridge (`MQTT_PORT` is always set to the broker's port).
    var bridgeEnvironment: [String: String] = [:]
    /// The bridge's `--log-level`.
    var logLevel = "debug"
    /// More broker listeners (mosquitto.conf text) for the test's directory, e.g. a TLS one.
    var brokerListeners: @Sendable (_ directory: String) -> String = { _ in "" }
}

/// One test's world: a private dbus-daemon, `bluez-sim` on it, a mosquitto broker on a free
/// loopback port, an ``MQTTObserver`` subscribed to `ble/#`, and `ble-mqtt-bridge run`, all in
/// a temporary directory that is removed afterwards (kept with `KEEP_INTEGRATION_DIRS=1`).
///
/// ```swift
/// try await Harness.with { harness in
///     try await harness.observer.waitFor("ble/bridge/state") { $0.payload == "online" }
/// }
/// ```
final class Harness: @unchecked Sendable {
    let options: HarnessOptions
    /// The temporary directory of this test.
    let directory: String
    /// The broker's port (chosen before anything listens on it).
    private(set) var port: Int
    /// The bridge's configuration file.
    let configPath: String

    private(set) var bus: ChildProcess?
    private(set) var busAddress = ""
    private(set) var simulator: ChildProcess?
    private(set) var broker: Broker?
    private(set) var observerOrNil: MQTTObserver?
    private(set) var bridge: ChildProcess?

    /// The `ble/#` subscriber (requires the broker).
    var observer: MQTTObserver {
        guard let observerOrNil else { fatalError("the broker and observer were not started") }
        return observerOrNil
    }

    /// Runs `body` with a started harness and always stops everything afterwards.
    static func with<T>(
        _ options: HarnessOptions = HarnessOptions(), _ body: (Harness) async throws -> T
    ) async throws -> T {
        try Paths.requireBuiltExecutables()
        let harness = try Harness(options: options)
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

    private init(options: HarnessOptions) throws {
        self.options = options
        directory = try Launch.temporaryDirectory("/tmp/ble-mqtt-bridge-it")
        port = try Broker.freePort()
        configPath = options.configFile ?? "\(directory)/bridge.yaml"
    }

    private func start() async throws {
        try await startBus()
        if options.startSimulator { try await startSimulator() }
        if options.startBroker { try await startBroker() }
        if options.startBridge { try startBridge() }
    }

    // MARK: - Starting the parts

    /// Starts the private dbus-daemon (scripts/sim/dbus.conf) and waits for its address.
    func startBus(timeout: Duration = .seconds(10)) async throws {
        (bus, busAddress) = try await Launch.bus(in: directory, name: "dbus-daemon", timeout: timeout)
    }

    /// Starts `bluez-sim` with the scenario and waits for its `bluez-sim ready` line.
    func startSimulator(timeout: Duration = .seconds(20)) async throws {
        var scenario = options.scenario
        if let text = options.scenarioText {
            scenario = "\(directory)/scenario.yaml"
            try text.write(toFile: scenario, atomically: true, encoding: .utf8)
        }
        simulator = try await Launch.simulator(
            name: "bluez-sim",
            arguments: [
                "--scenario", scenario, "--bus", busAddress, "--write-log", writesLogPath,
                "--notify-log", "\(directory)/notify.log",
            ] + options.simulatorArguments,
            directory: directory, errorPath: simulatorLogPath, timeout: timeout)
    }

    /// Starts mosquitto on ``port`` and the observer subscribed to `ble/#`.
    func startBroker() async throws {
        var attempt = 1
        var broker: Broker
        while true {
            do {
                broker = try await Broker.start(port: port, directory: directory, listeners: options.brokerListeners(directory))
                break
            } catch let error as HarnessError where error.description.contains("Address already in use") {
                // Taken since it was chosen: take another one unless the bridge already knows it.
                guard bridge == nil, attempt < 5 else { throw error }
                attempt += 1
                port = try Broker.freePort()
            }
        }
        self.broker = broker
        observerOrNil = try await MQTTObserver.start(broker: broker, directory: directory)
    }

    /// Writes the configuration (unless ``HarnessOptions/configFile`` is set) and starts
    /// `ble-mqtt-bridge run`.
    @discardableResult
    func startBridge() throws -> ChildProcess {
        if options.configFile == nil {
            try options.config(port).write(toFile: configPath, atomically: true, encoding: .utf8)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        environment["MQTT_PORT"] = "\(port)"
        environment.merge(options.bridgeEnvironment) { $1 }
        let process = try ChildProcess(
            name: "bridge", executable: Paths.bridge,
            arguments: ["run", "--config", configPath, "--log-level", options.logLevel],
            environment: environment, outputPath: bridgeLogPath)
        bridge = process
        return process
    }

    /// The running bridge.
    var runningBridge: ChildProcess {
        guard let bridge else { fatalError("the bridge was not started") }
        return bridge
    }

    // MARK: - Stopping

    /// Stops everything (bridge first, so it can still reach the broker and the bus), then removes
    /// the directory.
    func stop() async {
        if let bridge { await bridge.stop(grace: .seconds(10)) }
        if let observerOrNil { await observerOrNil.stop() }
        if let broker { await broker.stop() }
        if let simulator { await simulator.stop() }
        if let bus { await bus.stop() }
        if ProcessInfo.processInfo.environment["KEEP_INTEGRATION_DIRS"] == "1" {
            print("integration test directory kept: \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    // MARK: - Logs

    var bridgeLogPath: String { "\(directory)/bridge.log" }
    var simulatorLogPath: String { "\(directory)/bluez-sim.log" }
    var writesLogPath: String { "\(directory)/writes.log" }

    /// The bridge's log (stdout and stderr).
    var bridgeLog: String { ChildProcess.read(bridgeLogPath) }
    /// The simulator's log (stderr).
    var simulatorLog: String { ChildProcess.read(simulatorLogPath) }
    /// The simulator's write log: `<unix_ns> <address> <uuid> <type> <offset> <hex>` per write.
    var writesLog: String { ChildProcess.read(writesLogPath) }

    /// Log excerpts for failure messages.
    func context() -> String {
        var text = ""
        if let bridge {
            let state = bridge.termination.map { "ended: \($0)" } ?? "running"
            text += "---- bridge (\(state)), last lines of its log:\n\(bridge.tail(40))\n"
        }
        if let simulator { text += "---- bluez-sim, last lines:\n\(simulator.tail(15))\n" }
        return text
    }

    /// Waits for a message on the observer; a timeout error carries the logs.
    @discardableResult
    func waitFor(
        _ filter: String, after: Int = 0, timeout: Duration = .seconds(30),
        where predicate: (MQTTMessage) -> Bool = { _ in true }
    ) async throws -> MQTTMessage {
        try await observer.waitFor(filter, after: after, timeout: timeout, context: context, where: predicate)
    }

    /// Waits until a line of the file at `path` satisfies `predicate`, and returns it.
    @discardableResult
    func waitForLine(
        in path: String, timeout: Duration = .seconds(30), _ what: String, where predicate: (Substring) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = ChildProcess.read(path).split(separator: "\n").first(where: predicate) { return String(line) }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("no line in \((path as NSString).lastPathComponent) with \(what) within \(timeout)\n\(context())")
            }
            // Logs are files: poll them at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the bridge logs a line satisfying `predicate`.
    @discardableResult
    func waitForBridgeLog(
        timeout: Duration = .seconds(30), _ what: String, where predicate: (Substring) -> Bool
    ) async throws -> String {
        try await waitForLine(in: bridgeLogPath, timeout: timeout, what, where: predicate)
    }

    // MARK: - MQTT

    /// What a new subscriber receives first on `topic` (the retained message), with its retain
    /// flag: `mosquitto_sub -C 1 -F '%r %t %p' -t topic`.
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

    /// `mosquitto_pub -q 1 -t topic -m payload`.
    func publish(_ topic: String, _ payload: String) async throws {
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload],
            directory: directory, timeout: .seconds(15))
        guard termination == .exited(0) else { throw HarnessError("mosquitto_pub to \(topic) failed (\(termination)): \(output)") }
    }

    // MARK: - Configuration

    /// The tests' default configuration: the demo's services, names from addresses and UUIDs,
    /// short reconnect delays.
    @Sendable static func defaultConfig(port: Int) -> String {
        """
        mqtt:
          url: mqtt://127.0.0.1:\(port)
          client_id: bridge-under-test
        bluetooth:
          adapter: hci0
          services: ["180d", "181a", "\(Demo.echoService)"]
        reconnect:
          initial_delay: 200ms
          max_delay: 1s

        """
    }
}

/// The peripherals of scripts/sim/demo.yaml.
enum Demo {
    static let heartRateAddress = "C8:12:34:56:78:9A"
    static let heartRate = "c8123456789a"
    static let environmentAddress = "E4:5F:01:AB:CD:EF"
    static let environment = "e45f01abcdef"
    static let echoAddress = "D0:5A:00:00:EC:01"
    static let echo = "d05a0000ec01"
    static let otherAddress = "5C:F3:70:11:22:33"
    static let other = "5cf370112233"

    static let echoService = "5e1f0001-b5a3-4c1d-9e0a-ec40ec40ec40"
    static let echoWrite = "5e1f0002-b5a3-4c1d-9e0a-ec40ec40ec40"
    static let echoWriteCommand = "5e1f0003-b5a3-4c1d-9e0a-ec40ec40ec40"
    static let echoNotify = "5e1f0004-b5a3-4c1d-9e0a-ec40ec40ec40"

    /// The three devices the default configuration connects, by topic segment.
    static let connectedSegments = [heartRate, environment, echo]
}
