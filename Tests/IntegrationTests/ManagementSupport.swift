import Foundation
import Testing

/// The peripherals of scripts/sim/management.yaml and the bridge configuration of the SPEC §14 tests (devices
/// added at run time).
enum Management {
    /// The management tests' scenario.
    static var scenario: String { "\(Paths.root)/scripts/sim/management.yaml" }

    /// In bridge.yaml as `strap` (GATT, connected all along): a heart rate every 250 ms.
    static let strapAddress = "C8:12:34:56:78:20"
    /// Not in bridge.yaml: a GATT device (temperature 181a/2a6e and battery 180f/2a19, each every 500 ms).
    static let pantryAddress = "D0:5A:00:00:AA:01"
    /// Its advertised custom service.
    static let pantryService = "6e5a0001-0000-4000-8000-00000000aa01"
    /// In bridge.yaml as `thermo` (`connection: advertisement`): pvvx firmware.
    static let pvvxAddress = "A4:C1:38:00:AA:05"
    /// ATC1441 firmware, not configured.
    static let atcAddress = "A4:C1:38:00:AA:06"
    /// BTHome v2, not encrypted (23 °C), not configured.
    static let bthomeAddress = "C0:FF:EE:00:AA:01"
    /// BTHome v2 with encrypted frames (12 °C; ``bindkey``), not configured.
    static let encryptedAddress = "C0:FF:EE:00:AA:02"
    /// A Govee H5075 (replayed frames).
    static let goveeAddress = "A4:C1:38:5E:AA:07"
    /// A phone: manufacturer data no decoder reads.
    static let phoneAddress = "7A:11:22:33:AA:08"
    /// The encrypted BTHome sensor's key.
    static let bindkey = "231d39c1d7cc1ab1aee224cd096db932"

    /// The strap's heart rate topic.
    static let strapValues = "ble/strap/180d/2a37"

    /// The temperature topic of the pantry device under `segment`.
    static func temperature(_ segment: String) -> String { "ble/\(segment)/181a/2a6e" }
    /// The battery topic of the pantry device under `segment`.
    static func battery(_ segment: String) -> String { "ble/\(segment)/180f/2a19" }

    /// The pantry device's Home Assistant config topic (prefix `ha`): by address, so a rename keeps it.
    static let pantryDiscoveryTopic = "ha/device/ble_d05a0000aa01/config"

    /// The bridge configuration: `strap` and `thermo`, short reconnect delays, `state_file` beside the
    /// configuration (so `devices_file` defaults to `devices.json` there), `management` as given (left out when
    /// `nil`: the default), Home Assistant discovery with prefix `ha` when `homeAssistant`.
    static func config(management: Bool? = nil, homeAssistant: Bool = false) -> @Sendable (Int) -> String {
        { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
            reconnect:
              initial_delay: 200ms
              max_delay: 1s
            state_file: peripherals.json
            homeassistant: { discovery: \(homeAssistant), prefix: ha }
            \(management.map { "management: \($0)" } ?? "")
            devices:
              - { match: { address: "\(strapAddress)" }, name: strap }
              - { match: { address: "\(pvvxAddress)" }, name: thermo, connection: advertisement }

            """
        }
    }

    /// Harness options: the management scenario and ``config(management:homeAssistant:)``.
    static func options(management: Bool? = nil, homeAssistant: Bool = false) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenario = scenario
        options.config = config(management: management, homeAssistant: homeAssistant)
        return options
    }

    /// The `device/add` payload of the pantry device: `connection: always`.
    static func pantryEntry(name: String = "pantry") -> [String: Any] {
        ["name": name, "match": ["address": pantryAddress], "connection": "always"]
    }

    /// The `device/add` payload of an advertisement sensor, with its bindkey when given.
    static func advertisementEntry(name: String, address: String, bindkey: String? = nil) -> [String: Any] {
        var entry: [String: Any] = ["name": name, "match": ["address": address], "connection": "advertisement"]
        if let bindkey { entry["advertisement"] = ["bindkey": bindkey] }
        return entry
    }

    /// The device entries in the JSON file at `path` (`devices_file`), whatever its layout: every object in it that
    /// has a string `name` and a `match` object. Empty when the file is missing or not JSON.
    static func entries(inFile path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let json = JSON.parse(text) else { return [] }
        var found: [[String: Any]] = []
        func visit(_ value: Any) {
            if let object = value as? [String: Any] {
                if object["name"] is String, object["match"] is [String: Any] { found.append(object) }
                for member in object.values { visit(member) }
            } else if let array = value as? [Any] {
                for element in array { visit(element) }
            }
        }
        visit(json)
        return found
    }

    /// The names of the entries in the file at `path` (``entries(inFile:)``).
    static func entryNames(inFile path: String) -> Set<String> {
        Set(entries(inFile: path).compactMap { $0["name"] as? String })
    }

    /// The addresses of the `peripherals` of the state file at `path` (SPEC §5), uppercased.
    static func knownPeripherals(inFile path: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let peripherals = JSON.object(text)?["peripherals"] as? [[String: Any]]
        else { return [] }
        return Set(peripherals.compactMap { ($0["address"] as? String)?.uppercased() })
    }

    /// Whether a `{base}/config/devices/{name}` payload is the entry `name` for `address` (JSON object, `name`,
    /// `match.address` in any case).
    static func isEntry(_ payload: String, name: String, address: String) -> Bool {
        guard let entry = JSON.object(payload) else { return false }
        let matched = ((entry["match"] as? [String: Any])?["address"] as? String)?.uppercased()
        return entry["name"] as? String == name && matched == address.uppercased()
    }

    /// The `unique_id`s of the components of a Home Assistant device config.
    static func uniqueIDs(_ config: [String: Any]) -> Set<String> {
        let components = config["components"] as? [String: Any] ?? [:]
        return Set(components.values.compactMap { ($0 as? [String: Any])?["unique_id"] as? String })
    }

    /// Every topic a Home Assistant device config names (`state_topic`, `command_topic`, ..., `availability`).
    static func topics(_ config: [String: Any]) -> [String] {
        var topics: [String] = []
        func visit(_ value: Any, key: String) {
            if let text = value as? String, key == "topic" || key.hasSuffix("_topic") {
                topics.append(text)
            } else if let object = value as? [String: Any] {
                for (k, v) in object { visit(v, key: k) }
            } else if let array = value as? [Any] {
                for element in array { visit(element, key: key) }
            }
        }
        visit(config, key: "")
        return topics
    }

    /// Polls `condition` (files the bridge writes and the simulator's counters have no event to await) until it
    /// holds; fails with `what` and `context()` after `timeout`.
    static func eventually(
        _ what: String, timeout: Duration = .seconds(15), context: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw HarnessError("not within \(timeout): \(what)\n\(context())") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // MARK: - Answers

    /// Expects a `{"status":"ok","data":{...}}` answer that echoes `transaction`; returns `data`.
    @discardableResult
    static func expectOK(
        _ reply: CommandReply, _ what: String, transaction: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String: Any] {
        #expect(reply.status == "ok", "\(what): expected status ok, got \(reply)", sourceLocation: sourceLocation)
        if let transaction {
            #expect(reply.hasTransaction(transaction), "\(what): transaction \(transaction) not echoed: \(reply)", sourceLocation: sourceLocation)
        }
        let data = reply.object["data"] as? [String: Any]
        #expect(data != nil, "\(what): no \"data\" object: \(reply)", sourceLocation: sourceLocation)
        return data ?? [:]
    }

    /// Expects `{"status":"error","data":{},"error":{"code":code,"message":"..."}}` echoing `transaction`; returns
    /// the message.
    @discardableResult
    static func expectError(
        _ reply: CommandReply, code: String, _ what: String, transaction: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        #expect(reply.status == "error", "\(what): expected status error (\(code)), got \(reply)", sourceLocation: sourceLocation)
        #expect(reply.code == code, "\(what): expected error code \(code), got \(reply)", sourceLocation: sourceLocation)
        let message = reply.errorMessage ?? ""
        #expect(!message.isEmpty, "\(what): the error has no message: \(reply)", sourceLocation: sourceLocation)
        #expect(reply.object["data"] is [String: Any], "\(what): an error answer carries \"data\": {}: \(reply)", sourceLocation: sourceLocation)
        if let transaction {
            #expect(reply.hasTransaction(transaction), "\(what): transaction \(transaction) not echoed: \(reply)", sourceLocation: sourceLocation)
        }
        return message
    }

    /// What `ble-mqtt-bridge check-config` says of a bridge.yaml whose only device is `entry` (JSON text is YAML):
    /// its error messages without the `file:line:column: ` prefix.
    static func checkConfigMessages(entry: String, directory: String) async throws -> [String] {
        let path = "\(directory)/check-\(UInt32.random(in: 0...UInt32.max)).yaml"
        try "mqtt:\n  url: mqtt://127.0.0.1:1883\ndevices:\n  - \(entry)\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let (termination, output) = try await ChildProcess.run(Paths.bridge, ["check-config", "--config", path], directory: directory)
        guard termination != .exited(0) else { throw HarnessError("check-config accepted the entry \(entry): \(output)") }
        let prefix = try Regex("^\(NSRegularExpression.escapedPattern(for: path)):[0-9]+:[0-9]+: ")
        return output.split(separator: "\n").compactMap { line in
            guard let match = line.firstMatch(of: prefix) else { return nil }
            return String(line[match.range.upperBound...])
        }
    }
}

/// What the SPEC §14 helpers need of a test world: one bridge (``Harness``) or a cluster (``ClusterHarness``).
protocol ManagementWorld: AnyObject, Sendable {
    var port: Int { get }
    var directory: String { get }
    var observer: MQTTObserver { get }
    func context() -> String
    func publish(_ topic: String, _ payload: String) async throws
    func waitFor(_ filter: String, after: Int, timeout: Duration, where predicate: (MQTTMessage) -> Bool) async throws
        -> MQTTMessage
}

extension Harness: ManagementWorld {}
extension ClusterHarness: ManagementWorld {}

extension ManagementWorld {
    /// Publishes `payload` plus a new `"transaction"` on `{prefix}/request/{command}` and returns the first answer
    /// on `{prefix}/response/{command}` after it, with that transaction (whether the answer echoes it is the
    /// caller's check).
    func request(
        _ command: String, _ payload: [String: Any], via prefix: String = "ble/bridge", timeout: Duration = .seconds(20)
    ) async throws -> (reply: CommandReply, transaction: String) {
        let transaction = "\(command)-\(UInt32.random(in: 0...UInt32.max))"
        var body = payload
        body["transaction"] = transaction
        let text = String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
        return (try await request(command, raw: text, via: prefix, timeout: timeout), transaction)
    }

    /// Publishes `raw` as it is on `{prefix}/request/{command}` and returns the first answer after it.
    func request(_ command: String, raw: String, via prefix: String = "ble/bridge", timeout: Duration = .seconds(20))
        async throws -> CommandReply
    {
        let mark = observer.count
        try await publish("\(prefix)/request/\(command)", raw)
        let message = try await waitFor("\(prefix)/response/\(command)", after: mark, timeout: timeout) { _ in true }
        return try CommandReply(message)
    }

    /// `mosquitto_pub -r -q 1 -t topic -m payload` (an empty payload clears the retained message).
    func publishRetained(_ topic: String, _ payload: String) async throws {
        let arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-r", "-t", topic] + (payload.isEmpty ? ["-n"] : ["-m", payload])
        let (termination, output) = try await ChildProcess.run(Paths.mosquittoPub, arguments, directory: directory, timeout: .seconds(15))
        guard termination == .exited(0) else { throw HarnessError("mosquitto_pub -r to \(topic) failed (\(termination)): \(output)") }
    }

    /// The retained message a new subscriber gets on `topic`, or nil when the broker holds none: subscribes to
    /// `topic` and then to `sentinel` (always retained) in one SUBSCRIBE; the broker sends the retained messages in
    /// the order of the filters, so the sentinel coming first means nothing is retained on `topic`.
    func retainedMessage(_ topic: String, sentinel: String = "ble/bridge/state") async throws -> MQTTMessage? {
        let (termination, output) = try await ChildProcess.run(
            Paths.mosquittoSub,
            ["-h", "127.0.0.1", "-p", "\(port)", "-C", "1", "-W", "10", "-F", "%r %t %p", "-t", topic, "-t", sentinel],
            directory: directory, timeout: .seconds(15))
        guard termination == .exited(0), let line = output.split(separator: "\n", omittingEmptySubsequences: false).first,
            let message = MQTTMessage(line: line, index: 0)
        else {
            throw HarnessError("no retained message on \(topic) nor on \(sentinel) (\(termination)): \(output)\n\(context())")
        }
        return message.topic == sentinel && topic != sentinel ? nil : message
    }

    /// Expects the retained message of `topic` to be cleared: an empty message on it after observer index `after`,
    /// and nothing retained there for a new subscriber.
    func expectCleared(
        _ topic: String, after: Int, timeout: Duration = .seconds(15), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        do {
            _ = try await waitFor(topic, after: after, timeout: timeout) { $0.payload.isEmpty }
        } catch {
            Issue.record("the retained \(topic) was not cleared (no empty message on it): \(error)", sourceLocation: sourceLocation)
            return
        }
        let left = try await retainedMessage(topic)
        #expect(left == nil, "\(topic) still holds a retained message: \(left.map(\.description) ?? "")", sourceLocation: sourceLocation)
    }
}
