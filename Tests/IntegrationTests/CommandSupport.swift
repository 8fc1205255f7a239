import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The peripherals of scripts/sim/commands.yaml and the bridge configuration of the command tests.
enum Commands {
    /// The command tests' scenario.
    static var scenario: String { "\(Paths.root)/scripts/sim/commands.yaml" }

    static let echo1Address = "D0:5A:00:00:EC:10"
    static let echo1 = "d05a0000ec10"
    static let echo2Address = "D0:5A:00:00:EC:11"
    static let echo2 = "d05a0000ec11"
    static let strapAddress = "C8:12:34:56:78:10"
    static let strap = "c81234567810"

    /// The echo devices' custom service (the demo Echo Sim's).
    static let service = Demo.echoService
    /// `5e1f000N-b5a3-4c1d-9e0a-ec40ec40ec40`.
    static func uuid(_ number: Int) -> String {
        "5e1f" + String(format: "%04x", number) + "-b5a3-4c1d-9e0a-ec40ec40ec40"
    }

    /// `[read, write]`, echoed on ``echoNotify``.
    static let writeRequest = uuid(2)
    /// `[write-without-response]`, echoed on ``echoNotify``.
    static let writeCommand = uuid(3)
    /// `[read, notify]`: what is written to ``writeRequest``, ``writeCommand`` or ``both``.
    static let echoNotify = uuid(4)
    /// `[read, write]`, every write refused with `NotPermitted`.
    static let refused = uuid(5)
    /// `[read, write]`, writes answered after 30 s.
    static let slow = uuid(6)
    /// `[read, write, write-without-response]`, start value `0000`, echoed on ``echoNotify``.
    static let both = uuid(7)
    /// `[read, write]`, start value `3412`; `format: uint16` in ``config(timeout:queue:)``.
    static let number = uuid(8)
    /// `[read, write]`, start value "hello"; `format: utf8` in ``config(timeout:queue:)``.
    static let text = uuid(9)
    /// `[read, notify]`: a 4-byte little-endian counter notified 20 times a second.
    static let ticker = uuid(10)

    /// `ble/{device}/{service}/{characteristic}` of an echo device.
    static func topic(_ device: String, _ characteristic: String) -> String {
        "ble/\(device)/\(service)/\(characteristic)"
    }

    /// The strap's control point 2A39 as the write log names it (the full 128-bit UUID).
    static let controlPoint = "00002a39-0000-1000-8000-00805f9b34fb"

    /// `ble/c81234567810/180d/{characteristic}` (2a38 readable, 2a39 the control point).
    static func strapTopic(_ characteristic: String) -> String {
        "ble/\(strap)/180d/\(characteristic)"
    }

    /// The error codes SPEC §4 and issue 4 define.
    static let errorCodes: Set<String> = [
        "invalid_payload", "unknown_characteristic", "not_writable", "not_readable", "unsupported_write_type",
        "not_connected", "timeout", "gatt_error", "busy", "not_allowed",
    ]

    /// Harness options: the commands scenario and ``config(timeout:queue:)``.
    static func options(
        timeout: String = "3s", queue: Int? = nil, logLevel: String = "debug", homeAssistant: Bool = true
    ) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenario = scenario
        options.config = config(timeout: timeout, queue: queue, homeAssistant: homeAssistant)
        options.logLevel = logLevel
        return options
    }

    /// The bridge configuration: both services of the scenario, `uint16` and `utf8` formats on
    /// the echo devices' ``number`` and ``text``, short reconnect delays, `commands.timeout`
    /// (and `commands.queue` when given).
    /// `homeAssistant: false` turns discovery off, and with it the resend of every topic's last
    /// value 2 s after the configs (a repeat of the latest notification, which a test counting a
    /// stream's order would see).
    static func config(timeout: String, queue: Int?, homeAssistant: Bool = true) -> @Sendable (Int) -> String {
        { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            homeassistant: { discovery: \(homeAssistant) }
            bluetooth:
              adapter: hci0
              services: ["180d", "\(service)"]
            reconnect:
              initial_delay: 200ms
              max_delay: 500ms
            commands:
              timeout: \(timeout)
            \(queue.map { "  queue: \($0)" } ?? "")
            devices:
              - match: { name: "Cmd Echo*" }
                characteristics:
                  - uuid: "\(number)"
                    format: uint16
                  - uuid: "\(text)"
                    format: utf8

            """
        }
    }
}

/// A command's result as the bridge published it on `.../result` (SPEC §4).
struct CommandReply: CustomStringConvertible {
    /// The MQTT message (its index in the observer's output).
    var message: MQTTMessage
    /// The payload as a JSON object.
    var object: [String: Any]

    init(_ message: MQTTMessage, sourceLocation: SourceLocation = #_sourceLocation) throws {
        self.message = message
        object = try #require(message.object, "a result is not a JSON object: \(message)", sourceLocation: sourceLocation)
    }

    var status: String? { object["status"] as? String }
    var op: String? { object["op"] as? String }
    /// `"response"`; `nil` when absent or not a boolean.
    var response: Bool? { JSON.bool(object["response"]) }
    var hasResponse: Bool { object["response"] != nil }
    var transaction: Any? { object["transaction"] }
    var raw: String? { object["raw"] as? String }
    var value: Any? { object["value"] }
    var error: [String: Any]? { object["error"] as? [String: Any] }
    var code: String? { error?["code"] as? String }
    var errorMessage: String? { error?["message"] as? String }

    var description: String { "\(message.topic) \(message.payload)" }

    /// Whether `"transaction"` is the JSON value `expected` (any JSON, compared as parsed).
    func hasTransaction(_ expected: Any) -> Bool {
        guard let transaction else { return false }
        return Commands.jsonEqual(transaction, expected)
    }
}

extension Commands {
    /// Whether two JSON values (as `JSONSerialization` parses them, or Swift literals of
    /// strings, numbers, booleans, `NSNull`, arrays and dictionaries) are the same JSON.
    static func jsonEqual(_ a: Any?, _ b: Any?) -> Bool {
        func canonical(_ value: Any?) -> Data? {
            guard let value else { return nil }
            return try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        }
        guard let left = canonical(a), let right = canonical(b) else { return false }
        return left == right
    }

    /// Lowercase hex of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// `scripts/sim/simctl METHOD ARGS...` against `harness`'s simulator; fails unless it succeeds.
    static func simctl(_ harness: Harness, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = harness.busAddress
        let (termination, output) = try await ChildProcess.run(
            "\(Paths.root)/scripts/sim/simctl", arguments, environment: environment, directory: harness.directory,
            timeout: .seconds(20))
        try #require(
            termination == .exited(0), "simctl \(arguments.joined(separator: " ")): \(termination): \(output)",
            sourceLocation: sourceLocation)
    }
}

/// One line of bluez-sim's write log: `<unix_ns> <address> <uuid> <type> <offset> <hex>`.
struct CommandWriteLogEntry: Equatable, CustomStringConvertible {
    var nanoseconds: UInt64
    var address: String
    var uuid: String
    /// `request`, `command` or `reliable`.
    var type: String
    var offset: Int
    /// The bytes written, lowercase hex.
    var hex: String

    init?(_ line: Substring) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 5 || fields.count == 6,
            let nanoseconds = UInt64(fields[0]), let offset = Int(fields[4])
        else { return nil }
        self.nanoseconds = nanoseconds
        address = String(fields[1])
        uuid = String(fields[2])
        type = String(fields[3])
        self.offset = offset
        hex = fields.count == 6 ? String(fields[5]) : ""
    }

    var description: String { "\(address) \(uuid) \(type) \(offset) \(hex)" }
}

/// A `mosquitto_sub -V mqttv5 -F '%t|%D|%p'` on some filters: shows each message's topic,
/// Correlation Data and payload, as a user checking the MQTT v5 response topic would.
final class CommandV5Subscriber: @unchecked Sendable {
    struct Message: CustomStringConvertible {
        var topic: String
        /// The Correlation Data as text (empty when the message has none).
        var correlationData: String
        var payload: String

        var description: String { "\(topic) correlation=\(correlationData) \(payload)" }
    }

    let process: ChildProcess

    private init(process: ChildProcess) { self.process = process }

    /// Starts the subscriber and returns once the broker's log shows its subscriptions.
    static func start(_ harness: Harness, filters: [String], timeout: Duration = .seconds(10)) async throws -> CommandV5Subscriber {
        let broker = try #require(harness.broker)
        let clientID = "v5-\(UInt32.random(in: 0...UInt32.max))"
        var arguments = [
            "-h", "127.0.0.1", "-p", "\(harness.port)", "-V", "mqttv5", "-i", clientID, "-q", "1", "-F", "%t|%D|%p",
        ]
        for filter in filters { arguments += ["-t", filter] }
        let process = try ChildProcess(
            name: "v5-subscriber", executable: Paths.mosquittoSub, arguments: arguments,
            environment: ProcessInfo.processInfo.environment, outputPath: "\(harness.directory)/\(clientID).out",
            errorPath: "\(harness.directory)/\(clientID).err")
        let deadline = ContinuousClock.now + timeout
        while !filters.allSatisfy({ broker.hasSubscription(client: clientID, topic: $0) }) {
            guard process.isRunning else {
                throw HarnessError("mosquitto_sub -V mqttv5 exited (\(process.termination!)): \(process.errorOutput)")
            }
            guard ContinuousClock.now < deadline else {
                await process.stop()
                throw HarnessError("mosquitto_sub -V mqttv5 did not subscribe within \(timeout)")
            }
            // The broker's log is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
        return CommandV5Subscriber(process: process)
    }

    /// Every complete line so far.
    var messages: [Message] {
        let text = process.output
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return Message(topic: String(parts[0]), correlationData: String(parts[1]), payload: String(parts[2]))
        }
    }

    /// Waits for a message satisfying `predicate`.
    func waitFor(
        timeout: Duration = .seconds(15), _ what: String, context: () -> String,
        where predicate: (Message) -> Bool
    ) async throws -> Message {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = messages.first(where: predicate) { return message }
            guard ContinuousClock.now < deadline else {
                throw HarnessError(
                    "no \(what) within \(timeout); the v5 subscriber got:\n\(messages.map(\.description).joined(separator: "\n"))\n\(context())")
            }
            // mosquitto_sub writes to a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() async { await process.stop(grace: .seconds(2)) }
}

extension Harness {
    /// Waits until the echo devices and the strap are `online` (connected and subscribed).
    func waitForCommandDevices(_ devices: [String] = [Commands.echo1, Commands.echo2, Commands.strap]) async throws {
        for device in devices {
            try await waitFor("ble/\(device)/availability") { $0.payload == "online" }
        }
    }

    /// Publishes `payload` on `{characteristic}/set` and waits for the command's result on
    /// `{characteristic}/result`: the first one published after the command, or, when
    /// `transaction` is given, the first that echoes it.
    func setCommand(
        _ characteristicTopic: String, _ payload: String, transaction: Any? = nil, timeout: Duration = .seconds(20),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CommandReply {
        try await send(
            characteristicTopic, "set", payload, transaction: transaction, timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Publishes `payload` on `{characteristic}/get` and waits for the command's result, as
    /// ``setCommand(_:_:transaction:timeout:sourceLocation:)`` does.
    func getCommand(
        _ characteristicTopic: String, _ payload: String = "", transaction: Any? = nil, timeout: Duration = .seconds(20),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CommandReply {
        try await send(
            characteristicTopic, "get", payload, transaction: transaction, timeout: timeout, sourceLocation: sourceLocation)
    }

    private func send(
        _ characteristicTopic: String, _ operation: String, _ payload: String, transaction: Any?, timeout: Duration,
        sourceLocation: SourceLocation
    ) async throws -> CommandReply {
        let mark = observer.count
        try await publish("\(characteristicTopic)/\(operation)", payload)
        let message = try await waitFor("\(characteristicTopic)/result", after: mark, timeout: timeout) { message in
            guard let transaction else { return true }
            return Commands.jsonEqual(message.object?["transaction"], transaction)
        }
        return try CommandReply(message, sourceLocation: sourceLocation)
    }

    /// The results published so far on `{characteristicTopic}/result`, from index `after` on,
    /// as `observer` (default: the harness's `ble/#` observer) received them.
    func commandResults(_ characteristicTopic: String, after: Int = 0, observer: MQTTObserver? = nil) throws -> [CommandReply] {
        try (observer ?? self.observer).all.dropFirst(after).filter { $0.topic == "\(characteristicTopic)/result" }
            .map { try CommandReply($0) }
    }

    /// Waits until at least `count` results were published on `{characteristicTopic}/result`
    /// after index `after` of `observer` (default: the harness's), and returns them.
    func waitForCommandResults(
        _ characteristicTopic: String, count: Int, after: Int = 0, observer: MQTTObserver? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> [CommandReply] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let results = try commandResults(characteristicTopic, after: after, observer: observer)
            if results.count >= count { return results }
            guard ContinuousClock.now < deadline else {
                throw HarnessError(
                    "\(results.count) of \(count) results on \(characteristicTopic)/result within \(timeout); last ones:\n"
                        + results.suffix(5).map(\.description).joined(separator: "\n") + "\n\(context())")
            }
            // The observer's output is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The simulator's write log, parsed.
    var writeLogEntries: [CommandWriteLogEntry] {
        writesLog.split(separator: "\n").compactMap(CommandWriteLogEntry.init)
    }

    /// Waits until the write log holds a write of `hex` to `uuid` of `address`, and returns it.
    @discardableResult
    func waitForLoggedWrite(
        _ address: String, _ uuid: String, _ hex: String, timeout: Duration = .seconds(10)
    ) async throws -> CommandWriteLogEntry {
        let line = try await waitForLine(in: writesLogPath, timeout: timeout, "\(address) \(uuid) … \(hex)") { line in
            guard let entry = CommandWriteLogEntry(line) else { return false }
            return entry.address == address && entry.uuid == uuid && entry.hex == hex
        }
        return CommandWriteLogEntry(Substring(line))!
    }

    /// `mosquitto_pub -q 1 -t topic -l < file`: one message per line of `lines` (which must not
    /// hold NUL or newline bytes), in order, over one connection.
    func publishEachLine(_ topic: String, _ lines: [[UInt8]], timeout: Duration = .seconds(60)) async throws {
        let path = "\(directory)/lines-\(UInt64.random(in: 0...UInt64.max)).txt"
        var bytes: [UInt8] = []
        for line in lines {
            precondition(!line.contains(0) && !line.contains(0x0a), "not line-safe")
            bytes += line
            bytes.append(0x0a)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let (termination, output) = try await ChildProcess.run(
            "/bin/sh",
            ["-c", "exec \"$0\" -h 127.0.0.1 -p \"$1\" -q 1 -t \"$2\" -l < \"$3\"", Paths.mosquittoPub, "\(port)", topic, path],
            directory: directory, timeout: timeout)
        guard termination == .exited(0) else {
            throw HarnessError("mosquitto_pub -l to \(topic) failed (\(termination)): \(output)")
        }
    }

    /// Text lines for ``publishEachLine(_:_:timeout:)``.
    func publishEachLine(_ topic: String, _ lines: [String], timeout: Duration = .seconds(60)) async throws {
        try await publishEachLine(topic, lines.map { Array($0.utf8) }, timeout: timeout)
    }

    /// `mosquitto_pub -q 1 -t topic -f file`: any bytes as one message.
    func publishPayloadFile(_ topic: String, _ payload: [UInt8]) async throws {
        let path = "\(directory)/payload-\(UInt64.random(in: 0...UInt64.max)).bin"
        try Data(payload).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-f", path],
            directory: directory, timeout: .seconds(30))
        guard termination == .exited(0) else {
            throw HarnessError("mosquitto_pub -f to \(topic) failed (\(termination)): \(output)")
        }
    }

    /// `mosquitto_pub -V mqttv5 -q 1 -t topic -m payload -D publish response-topic R
    /// [-D publish correlation-data C]`.
    func publishWithResponseTopic(_ topic: String, _ payload: String, responseTopic: String, correlationData: String?) async throws {
        var arguments = [
            "-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload,
            "-D", "publish", "response-topic", responseTopic,
        ]
        if let correlationData { arguments += ["-D", "publish", "correlation-data", correlationData] }
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoPub, arguments, directory: directory, timeout: .seconds(15))
        guard termination == .exited(0) else {
            throw HarnessError("mosquitto_pub -V mqttv5 to \(topic) failed (\(termination)): \(output)")
        }
    }
}

/// A small deterministic generator (SplitMix64) for reproducible fuzz payloads.
struct CommandFuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
