import Foundation

/// One message as `mosquitto_sub -F '%r %t %p'` printed it.
struct MQTTMessage: Sendable, CustomStringConvertible {
    /// Position in the observer's output (0-based), to wait for messages after another.
    var index: Int
    /// The retained flag as delivered (set for retained messages sent on subscribing).
    var retained: Bool
    var topic: String
    var payload: String

    /// The payload as a JSON object, if it is one.
    var object: [String: Any]? { JSON.object(payload) }

    /// `1 ble/bridge/state online` (retained flag, topic, payload).
    var description: String { "\(retained ? 1 : 0) \(topic) \(payload)" }

    /// Parses one output line of `mosquitto_sub -F '%r %t %p'`.
    init?(line: Substring, index: Int) {
        guard let firstSpace = line.firstIndex(of: " ") else { return nil }
        let flag = line[..<firstSpace]
        guard flag == "0" || flag == "1" else { return nil }
        let rest = line[line.index(after: firstSpace)...]
        let topicEnd = rest.firstIndex(of: " ") ?? rest.endIndex
        self.index = index
        retained = flag == "1"
        topic = String(rest[..<topicEnd])
        payload = topicEnd == rest.endIndex ? "" : String(rest[rest.index(after: topicEnd)...])
    }
}

/// A `mosquitto_sub` subscribed to the bridge's topics, as a user would watch them; tests await
/// messages from its output.
final class MQTTObserver: @unchecked Sendable {
    /// The subscriber process.
    let process: ChildProcess
    /// Its client id.
    let clientID: String

    private let lock = NSLock()
    private var parsedBytes = 0
    private var messages: [MQTTMessage] = []

    /// Starts `mosquitto_sub -F '%r %t %p' -t <filter>...` and returns once the broker's log shows
    /// every subscription (so nothing published afterwards can be missed).
    static func start(
        broker: Broker, filters: [String] = ["ble/#"], directory: String, name: String = "observer",
        timeout: Duration = .seconds(10)
    ) async throws -> MQTTObserver {
        let clientID = "\(name)-\(UInt32.random(in: 0...UInt32.max))"
        var arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-i", clientID, "-q", "1", "-F", "%r %t %p"]
        for filter in filters { arguments += ["-t", filter] }
        let process = try ChildProcess(
            name: name, executable: Paths.mosquittoSub, arguments: arguments,
            environment: ProcessInfo.processInfo.environment, outputPath: "\(directory)/\(name).out",
            errorPath: "\(directory)/\(name).err")
        let observer = MQTTObserver(process: process, clientID: clientID)
        let deadline = ContinuousClock.now + timeout
        while !filters.allSatisfy({ broker.hasSubscription(client: clientID, topic: $0) }) {
            guard process.isRunning else {
                throw HarnessError("mosquitto_sub exited (\(process.termination!)): \(process.errorOutput)")
            }
            guard ContinuousClock.now < deadline else {
                await process.stop()
                throw HarnessError("mosquitto_sub did not subscribe within \(timeout); broker log:\n\(broker.log)")
            }
            // The broker's log is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
        return observer
    }

    private init(process: ChildProcess, clientID: String) {
        self.process = process
        self.clientID = clientID
    }

    /// Every message received so far, in order.
    var all: [MQTTMessage] {
        lock.withLock {
            parseNewOutput()
            return messages
        }
    }

    /// How many messages have been received so far (an index for `waitFor(after:)`).
    var count: Int { all.count }

    /// The messages so far whose topic matches `filter` (MQTT wildcards `+` and `#` allowed).
    func messages(_ filter: String) -> [MQTTMessage] {
        all.filter { MQTTObserver.topic($0.topic, matches: filter) }
    }

    /// Waits for the first message at or after index `after` whose topic matches `filter` (MQTT
    /// wildcards allowed) and that satisfies `predicate`.
    @discardableResult
    func waitFor(
        _ filter: String, after: Int = 0, timeout: Duration = .seconds(30), context: () -> String = { "" },
        where predicate: (MQTTMessage) -> Bool = { _ in true }
    ) async throws -> MQTTMessage {
        let deadline = ContinuousClock.now + timeout
        var checked = after
        while true {
            let current = all
            while checked < current.count {
                let message = current[checked]
                checked += 1
                if MQTTObserver.topic(message.topic, matches: filter) && predicate(message) { return message }
            }
            guard ContinuousClock.now < deadline else {
                let seen = current.filter { MQTTObserver.topic($0.topic, matches: filter) }.suffix(10)
                throw HarnessError(
                    """
                    no matching message on \(filter) within \(timeout) (\(current.count) messages in all; \
                    last ones on that filter:\n\(seen.map(\.description).joined(separator: "\n")))
                    \(context())
                    """)
            }
            // mosquitto_sub writes to a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the subscriber.
    func stop() async {
        await process.stop(grace: .seconds(2))
    }

    /// Parses the complete lines written since the last call (call with `lock` held).
    private func parseNewOutput() {
        guard let handle = FileHandle(forReadingAtPath: process.outputPath) else { return }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(parsedBytes))) != nil,
            let data = try? handle.readToEnd(), !data.isEmpty
        else { return }
        let bytes = [UInt8](data)
        guard let lastNewline = bytes.lastIndex(of: 0x0a) else { return }
        let text = String(decoding: bytes[...lastNewline], as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if let message = MQTTMessage(line: line, index: messages.count) { messages.append(message) }
        }
        parsedBytes += lastNewline + 1
    }

    /// MQTT topic filter matching with `+` (one level) and `#` (the rest).
    static func topic(_ topic: String, matches filter: String) -> Bool {
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
        }
        return topicLevels.count == filterLevels.count
    }
}

/// JSON helpers for payloads.
enum JSON {
    /// The payload as a JSON object, if it is one.
    static func object(_ text: String) -> [String: Any]? {
        parse(text) as? [String: Any]
    }

    /// The payload as a JSON array, if it is one.
    static func array(_ text: String) -> [Any]? {
        parse(text) as? [Any]
    }

    /// Any JSON value (fragments allowed).
    static func parse(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// A JSON number as a Double (`NSNumber` booleans excluded).
    static func double(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, !isBool(number) else { return nil }
        return number.doubleValue
    }

    /// A JSON integer (a number without fraction).
    static func integer(_ value: Any?) -> Int? {
        guard let double = double(value), double == double.rounded(), abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// A JSON boolean.
    static func bool(_ value: Any?) -> Bool? {
        guard let number = value as? NSNumber, isBool(number) else { return nil }
        return number.boolValue
    }

    private static func isBool(_ number: NSNumber) -> Bool {
        // JSONSerialization gives booleans as __NSCFBoolean, whose objCType is "c" (numbers: "i", "q", "d").
        String(cString: number.objCType) == "c"
    }
}
