import Foundation
import Testing

/// Commands under load (issue 4): a burst of 1,000 mixed commands to two devices, a full
/// per-device queue, and a few thousand random and malformed payloads. Every command must get
/// exactly one result, in order per device, while notifications keep flowing.
@Suite(.timeLimit(.minutes(2)))
struct CommandLoadTests {
    typealias C = Commands

    // MARK: - Burst

    /// What the burst sends to one device; transactions are unique numbers (`base + 1 ...`).
    struct BurstPlan {
        var device: String
        var address: String
        var base: Int

        /// 300 writes to ``Commands/both``: response absent, false, true in turn; the bytes are
        /// the transaction as 2 bytes big-endian.
        var bothWrites: [String] {
            (1...300).map { index in
                let n = base + index
                let response = ["", #","response":false"#, #","response":true"#][index % 3]
                return #"{"raw":"\#(Self.hex16(n))"\#(response),"transaction":\#(n)}"#
            }
        }
        /// 100 writes of `{"value": n}` to ``Commands/number`` (uint16).
        var numberWrites: [String] { (301...400).map { #"{"value":\#(base + $0),"transaction":\#(base + $0)}"# } }
        /// 100 reads of ``Commands/both``.
        var reads: [String] { (401...500).map { #"{"transaction":\#(base + $0)}"# } }

        /// Which kind of write transaction `n` is: 0 response absent, 1 false, 2 true.
        func kind(_ n: Int) -> Int { (n - base) % 3 }

        static func hex16(_ n: Int) -> String { Commands.hex([UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]) }
        static func hex16LE(_ n: Int) -> String { Commands.hex([UInt8(n & 0xff), UInt8(n >> 8 & 0xff)]) }
    }

    @Test("1,000 mixed commands to two devices in a burst: 1,000 results, per-device order, write log, notifications flow")
    func burst() async throws {
        // Without Home Assistant discovery: its resend of the last values (2 s after the configs)
        // repeats the ticker's latest notification, which the order check below would count.
        try await Harness.with(C.options(timeout: "20s", logLevel: "info", homeAssistant: false)) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.echo2])
            let plans = [
                BurstPlan(device: C.echo1, address: C.echo1Address, base: 0),
                BurstPlan(device: C.echo2, address: C.echo2Address, base: 1000),
            ]
            for plan in plans { try await harness.waitFor(C.topic(plan.device, C.ticker)) }

            let mark = harness.observer.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for plan in plans {
                    group.addTask { try await harness.publishEachLine("\(C.topic(plan.device, C.both))/set", plan.bothWrites) }
                    group.addTask { try await harness.publishEachLine("\(C.topic(plan.device, C.number))/set", plan.numberWrites) }
                    group.addTask { try await harness.publishEachLine("\(C.topic(plan.device, C.both))/get", plan.reads) }
                }
                try await group.waitForAll()
            }

            var total = 0
            var firstIndex = Int.max
            var lastIndex = 0
            for plan in plans {
                let both = C.topic(plan.device, C.both)
                let number = C.topic(plan.device, C.number)
                _ = try await harness.waitForCommandResults(both, count: 400, after: mark)
                _ = try await harness.waitForCommandResults(number, count: 100, after: mark)
                // A last command queued after the burst: no result of the burst may come after it.
                let sentinel = try await harness.getCommand(both, #"{"transaction":"sentinel"}"#, transaction: "sentinel")
                #expect(sentinel.status == "ok", "\(sentinel)")
                let results = (try harness.commandResults(both, after: mark) + harness.commandResults(number, after: mark))
                    .filter { $0.message.index < sentinel.message.index }
                    .sorted { $0.message.index < $1.message.index }
                total += results.count
                #expect(results.count == 500, "\(plan.device): \(results.count) results for 500 commands")
                firstIndex = min(firstIndex, results.first?.message.index ?? firstIndex)
                lastIndex = max(lastIndex, results.last?.message.index ?? lastIndex)
                try checkBurst(plan, results, harness)
            }
            #expect(total == 1000)

            // Notifications flowed during the burst and still flow: the ticker (20/s) of each
            // device, its counter increasing, and the echo of every write to `both`.
            for plan in plans {
                let ticker = C.topic(plan.device, C.ticker)
                let during = harness.observer.all[firstIndex..<lastIndex].filter { $0.topic == ticker }
                #expect(during.count >= 2, "\(plan.device): \(during.count) notifications during the burst")
                var last = harness.observer.messages(ticker).last!.index
                for _ in 0..<5 { last = try await harness.waitFor(ticker, after: last + 1).index }
                let counters = harness.observer.all.dropFirst(mark).filter { $0.topic == ticker }.compactMap { message in
                    Hex.bytes(message.object?["raw"] as? String ?? "x").flatMap { Hex.uintLE($0, at: 0, size: 4) }
                }
                #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 < $1 }, "\(plan.device): ticker out of order")

                let expectedEchoes = Set((1...300).map { BurstPlan.hex16(plan.base + $0) })
                let echo = C.topic(plan.device, C.echoNotify)
                let deadline = ContinuousClock.now + .seconds(15)
                var echoed: Set<String> = []
                while true {
                    echoed = Set(harness.observer.all.dropFirst(mark).filter { $0.topic == echo }.compactMap { $0.object?["raw"] as? String })
                    if echoed.isSuperset(of: expectedEchoes) || ContinuousClock.now > deadline { break }
                    // The observer's output is a file: poll it at a short interval.
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(expectedEchoes.subtracting(echoed).isEmpty, "\(plan.device): \(expectedEchoes.subtracting(echoed).count) of 300 echo notifications missing")
            }
            #expect(harness.runningBridge.isRunning)
        }
    }

    /// One device's 500 burst results, in the order the bridge published them: all `ok`, each
    /// transaction once, each publisher's order kept, the write log in the same order with the
    /// same bytes and types, and every read returning the value written last before it.
    private func checkBurst(_ plan: BurstPlan, _ results: [CommandReply], _ harness: Harness) throws {
        let failed = results.filter { $0.status != "ok" }
        #expect(failed.isEmpty, "\(plan.device): \(failed.count) failed, e.g. \(failed.prefix(3))")
        let transactions = results.compactMap { JSON.integer($0.transaction) }
        #expect(transactions.sorted() == Array(plan.base + 1...plan.base + 500), "\(plan.device): transactions not each exactly once")
        for range in [1...300, 301...400, 401...500] {
            let stream = transactions.filter { range.contains($0 - plan.base) }
            #expect(stream == stream.sorted(), "\(plan.device): commands of one publisher reordered")
        }

        var expectedWrites: [String] = []
        var current = "0000"
        for result in results {
            let n = try #require(JSON.integer(result.transaction), "\(result)")
            switch n - plan.base {
            case 1...300:
                let withResponse = plan.kind(n) != 1
                #expect(result.op == "write" && result.response == withResponse, "\(result)")
                current = BurstPlan.hex16(n)
                expectedWrites.append("\(C.both) \(withResponse ? "request" : "command") \(current)")
            case 301...400:
                #expect(result.op == "write" && result.response == true, "\(result)")
                expectedWrites.append("\(C.number) request \(BurstPlan.hex16LE(n))")
            default:
                #expect(result.op == "read", "\(result)")
                #expect(result.raw == current && result.value as? String == current, "read \(n) saw \(result.raw ?? "nil"), the last write before it was \(current)")
            }
        }
        let logged = harness.writeLogEntries.filter { $0.address == plan.address }.map { "\($0.uuid) \($0.type) \($0.hex)" }
        #expect(logged.count == expectedWrites.count, "\(plan.device): \(logged.count) writes logged, \(expectedWrites.count) results")
        if let mismatch = zip(logged, expectedWrites).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record("\(plan.device): write \(mismatch.offset) logged as \(mismatch.element.0), the results say \(mismatch.element.1)")
        }
    }

    // MARK: - Queue overflow

    @Test("busy: commands beyond commands.queue are answered at once with busy, the others run in order")
    func busy() async throws {
        try await Harness.with(C.options(timeout: "10s", queue: 2)) { harness in
            try await harness.waitForCommandDevices([C.echo1])
            // Each write takes 1 s: the 8 commands arrive while the first one runs.
            try await Commands.simctl(harness, "SetCharacteristicDelay", C.echo1Address, C.writeRequest, "write", "1000")
            let topic = C.topic(C.echo1, C.writeRequest)
            let mark = harness.observer.count
            try await harness.publishEachLine("\(topic)/set", (1...8).map { #"{"raw":"b0\#(Commands.hex([UInt8($0)]))","transaction":\#($0)}"# })
            let results = try await harness.waitForCommandResults(topic, count: 8, after: mark)
            let sentinel = try await harness.setCommand(topic, #"{"raw":"5e","transaction":"sentinel"}"#, transaction: "sentinel")
            #expect(sentinel.status == "ok")
            let burst = try harness.commandResults(topic, after: mark).filter { $0.message.index < sentinel.message.index }
            #expect(burst.count == 8, "one result per command: \(burst)")

            let ok = burst.filter { $0.status == "ok" }.compactMap { JSON.integer($0.transaction) }
            let busy = burst.filter { $0.code == "busy" }
            #expect(ok.count + busy.count == 8, "only ok and busy expected: \(results)")
            // The first two always fit (one running or queued, one queued); a command arriving
            // after the first one started may fit again. Accepted ones run in arrival order.
            #expect(ok.count >= 2 && ok.prefix(2) == [1, 2] && ok == ok.sorted(), "accepted commands run in order: \(ok)")
            #expect(busy.count >= 1, "8 commands, a queue of 2, 1 s per write: some must be busy")
            #expect(busy.allSatisfy { $0.op == "write" && $0.transaction != nil && !($0.errorMessage ?? "").isEmpty }, "\(busy)")

            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "5e")
            let logged = harness.writeLogEntries.filter { $0.address == C.echo1Address }.map(\.hex)
            #expect(logged == ok.map { "b0" + Commands.hex([UInt8($0)]) } + ["5e"], "busy commands were written: \(logged)")
        }
    }

    // MARK: - Fuzz

    /// One fuzz payload and what its result must show (`nil`: anything valid).
    struct FuzzCommand {
        var payload: [UInt8]
        /// `"ok"` or an error code.
        var expected: String?
        var transaction: Int?

        var lineSafe: Bool { !payload.contains(0) && !payload.contains(0x0a) }
    }

    /// Every command sent to one topic, in order.
    struct FuzzTarget {
        var topic: String
        var operation: String
        var commands: [FuzzCommand]
        /// Checked for every `ok` result of this target.
        var okRaw: String?
    }

    @Test("fuzz: thousands of random and malformed payloads at /set and /get, one result each, still publishing")
    func fuzz() async throws {
        let seed = ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x4b1d_c0de
        var generator = CommandFuzzGenerator(seed: seed)
        let targets = [
            FuzzTarget(topic: C.topic(C.echo1, C.writeRequest), operation: "set", commands: generator.hexCommands(700)),
            FuzzTarget(topic: C.topic(C.echo1, C.number), operation: "set", commands: generator.uint16Commands(500)),
            FuzzTarget(topic: C.topic(C.echo1, C.text), operation: "set", commands: generator.utf8Commands(500)),
            FuzzTarget(topic: C.topic(C.echo2, C.both), operation: "get", commands: generator.readCommands(500), okRaw: "0000"),
            FuzzTarget(
                topic: "ble/0badc0ffee00/180d/2a39", operation: "set",
                commands: generator.junk(300, expected: "unknown_characteristic")),
            FuzzTarget(
                topic: C.topic(C.echo2, C.uuid(0xff)), operation: "get",
                commands: generator.junk(200, expected: "unknown_characteristic")),
        ]
        let total = targets.reduce(0) { $0 + $1.commands.count }
        try #require(total >= 2500, "a few thousand commands: \(total)")

        // The test is about answers, not speed: a deadline a stalled CI machine cannot miss (a write not answered in
        // 10 s there was answered timeout, rightly, and failed the test).
        try await Harness.with(C.options(timeout: "30s", queue: 10_000, logLevel: "info")) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.echo2])
            // The harness's observer also receives the commands (megabytes of junk); results and
            // notifications are followed by a second subscriber that sees only them.
            let observer = try await MQTTObserver.start(
                broker: try #require(harness.broker),
                filters: ["ble/+/+/+/result", "ble/+/+/\(C.ticker)", "ble/bridge/state"], directory: harness.directory,
                name: "results")
            do {
                try await sendAndCheck(targets, harness, observer, seed: seed)
            } catch {
                await observer.stop()
                throw error
            }
            await observer.stop()
        }
    }

    private func sendAndCheck(_ targets: [FuzzTarget], _ harness: Harness, _ observer: MQTTObserver, seed: UInt64) async throws {
        // One topic after the other (so that the broker never queues more than one target's
        // commands for the bridge: mosquitto drops messages beyond max_queued_messages, 1000),
        // in order: the line-safe payloads with `mosquitto_pub -l`, then every other one with
        // its own `mosquitto_pub -f`.
        for target in targets {
            let topic = "\(target.topic)/\(target.operation)"
            let lines = target.commands.prefix { $0.lineSafe }
            try await harness.publishEachLine(topic, lines.map(\.payload))
            for command in target.commands.dropFirst(lines.count) {
                try await harness.publishPayloadFile(topic, command.payload)
            }
            _ = try await harness.waitForCommandResults(
                target.topic, count: target.commands.count, observer: observer, timeout: .seconds(60))
            // A last command on the topic: no result of the fuzz commands may come after it.
            let mark = observer.count
            try await harness.publish(
                "\(target.topic)/\(target.operation)",
                target.operation == "set" && target.topic.hasPrefix("ble/\(C.echo1)")
                    ? #"{"raw":"5e","transaction":"sentinel"}"# : #"{"transaction":"sentinel"}"#)
            let sentinel = try await observer.waitFor("\(target.topic)/result", after: mark, context: harness.context) {
                $0.object?["transaction"] as? String == "sentinel"
            }
            let results = try harness.commandResults(target.topic, observer: observer).filter { $0.message.index < sentinel.index }
            #expect(
                results.count == target.commands.count,
                "\(target.topic)/\(target.operation): \(results.count) results for \(target.commands.count) commands (seed \(seed))")
            var failures = 0
            for (number, (command, result)) in zip(target.commands, results).enumerated() where failures < 5 {
                if let problem = Self.problem(command, result, target) {
                    failures += 1
                    let shown = String(decoding: command.payload.prefix(120), as: UTF8.self)
                    // The first one with what the simulator wrote and the logs say (when BlueZ answered, if late).
                    let written = failures > 1 ? "" : "; the simulator's writes of it: \(harness.writeLogEntries.filter { !$0.hex.isEmpty && shown.contains($0.hex) }.map(\.description))\n\(harness.context())"
                    Issue.record(
                        "\(target.topic)/\(target.operation) command \(number) (seed \(seed)) \(shown.debugDescription): \(problem): \(result.message.payload.prefix(300))\(written)")
                }
            }
        }

        // Still alive and publishing.
        #expect(harness.runningBridge.isRunning, "the bridge ended: \(harness.context())")
        let after = observer.count
        for device in [C.echo1, C.echo2] {
            let first = try await observer.waitFor(C.topic(device, C.ticker), after: after, context: harness.context)
            try await observer.waitFor(C.topic(device, C.ticker), after: first.index + 1, context: harness.context)
        }
        let state = observer.messages("ble/bridge/state").last
        #expect(state?.payload == "online", "\(String(describing: state))")
    }

    /// Why `result` is not a valid answer to `command`, or `nil`.
    static func problem(_ command: FuzzCommand, _ result: CommandReply, _ target: FuzzTarget) -> String? {
        let op = target.operation == "set" ? "write" : "read"
        guard result.op == op else { return "op is not \(op)" }
        switch result.status {
        case "ok":
            guard result.error == nil else { return "ok with an error" }
            if let okRaw = target.okRaw, result.raw != okRaw { return "read \(result.raw ?? "nil"), not \(okRaw)" }
        case "error":
            guard let code = result.code, Commands.errorCodes.contains(code) else { return "unknown error code" }
            guard let message = result.errorMessage, !message.isEmpty else { return "no error message" }
        default:
            return "status is neither ok nor error"
        }
        if let expected = command.expected {
            let got = result.status == "ok" ? "ok" : result.code ?? "?"
            guard got == expected else { return "expected \(expected), got \(got)" }
        }
        if let transaction = command.transaction, JSON.integer(result.transaction) != transaction {
            return "transaction \(transaction) not echoed"
        }
        return nil
    }
}

/// Random and malformed payloads, reproducible from a seed. Line-safe payloads (no NUL, no
/// newline) come first in each list; the rest need `mosquitto_pub -f`.
struct CommandFuzzGenerator {
    var random: CommandFuzzRandom
    private var nextTransaction = 1

    init(seed: UInt64) { random = CommandFuzzRandom(seed: seed) }

    typealias Command = CommandLoadTests.FuzzCommand

    mutating func transaction() -> Int {
        defer { nextTransaction += 1 }
        return nextTransaction
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func bytes(_ count: Int, lineSafe: Bool) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count + 8)
        while result.count < count {
            var word = random.next()
            for _ in 0..<8 {
                let byte = UInt8(truncatingIfNeeded: word)
                word >>= 8
                if !lineSafe || (byte != 0 && byte != 0x0a) { result.append(byte) }
            }
        }
        return Array(result.prefix(count))
    }

    mutating func hex(_ count: Int, uppercase: Bool = false) -> String {
        let text = Commands.hex(bytes(count, lineSafe: false))
        return uppercase ? text.uppercased() : text
    }

    /// Letters of several scripts (valid UTF-8, no JSON or line specials), starting with a letter.
    mutating func text(_ scalars: Int) -> String {
        let alphabets: [ClosedRange<UInt32>] = [0x61...0x7a, 0x41...0x5a, 0xe0...0xff, 0x3b1...0x3c9, 0x4e00...0x4e80, 0x1f600...0x1f64f]
        var result = String(UnicodeScalar(UInt8(int(0x61...0x7a))))
        for _ in 1..<max(1, scalars) {
            let alphabet = alphabets[int(0...alphabets.count - 1)]
            result.unicodeScalars.append(UnicodeScalar(UInt32.random(in: alphabet, using: &random))!)
        }
        return result
    }

    /// Payloads that are wrong for any format, each line-safe: random bytes, invalid UTF-8,
    /// broken and deep JSON, huge strings, odd numbers.
    mutating func junkPayload() -> [UInt8] {
        switch int(0...11) {
        case 0, 1: return bytes(int(1...64), lineSafe: true)
        case 2: return Array("01".utf8) + [0xff, 0xfe] + Array("02".utf8)
        case 3: return [[0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xff]][int(0...4)]
        case 4: return Array(String(repeating: "[", count: int(1_000...20_000)).utf8)
        case 5: return Array((#"{"raw":"# + String(repeating: "[", count: int(1_000...10_000))).utf8)
        case 6: return Array(String(repeating: #"{"a":"#, count: int(200...4_000)).utf8)
        case 7: return Array((#"{"raw":""# + String(repeating: "ab", count: int(600...5_000)) + #""}"#).utf8)
        case 8: return Array(String(repeating: "z", count: int(1_000...20_000)).utf8)
        case 9: return Array(["1e999", "-0", "NaN", "Infinity", "0x", "null", "true", "[]", "{}", "\"\"", "{\"raw\":"][int(0...10)].utf8)
        case 10: return Array(#"{"raw":"01"#.utf8) + [0xff] + Array(#"","transaction":1}"#.utf8)
        default: return Array("{\"\(text(int(1...20)))\":\(int(-5...5)),".utf8)
        }
    }

    /// `count` junk commands with one expected outcome, plus binary ones.
    mutating func junk(_ count: Int, expected: String?) -> [Command] {
        var commands = (0..<count).map { _ in Command(payload: junkPayload(), expected: expected) }
        commands += binary(10).map { Command(payload: $0, expected: expected) }
        return commands
    }

    /// Payloads that need `-f`: NUL bytes, newlines, full-range random bytes; with `huge`, a
    /// 2 MiB one and one just over the bridge's 1 MiB limit.
    mutating func binary(_ count: Int, huge: Bool = false) -> [[UInt8]] {
        var payloads: [[UInt8]] = [[0], [0x0a], [0x30, 0x31, 0x00, 0x32, 0x33], Array("01\nff".utf8)]
        if huge {
            payloads.append(bytes(2 * 1024 * 1024, lineSafe: false))
            payloads.append(Array(repeating: UInt8(ascii: "a"), count: 1024 * 1024 + 1) + [0x0a])
        }
        while payloads.count < count { payloads.append(bytes(int(1...300), lineSafe: false) + [0]) }
        return payloads
    }

    /// To a hex characteristic with `write` only.
    mutating func hexCommands(_ count: Int) -> [Command] {
        var commands: [Command] = []
        for _ in 0..<count {
            switch int(0...19) {
            case 0...4: commands.append(Command(payload: junkPayload(), expected: nil))
            case 5...7: commands.append(Command(payload: Array(hex(int(1...40), uppercase: chance(30)).utf8), expected: "ok"))
            case 8: commands.append(Command(payload: Array(hex(int(1...40)).dropLast().utf8), expected: "invalid_payload"))
            case 9: commands.append(Command(payload: Array(hex(int(513...2000)).utf8), expected: "invalid_payload"))
            case 10, 11:
                let n = transaction()
                commands.append(Command(payload: Array(#"{"raw":"\#(hex(int(0...60)))","transaction":\#(n)}"#.utf8), expected: "ok", transaction: n))
            case 12:
                let n = transaction()
                let value = ["1", "[\"01\"]", "{\"x\":\"01\"}", "true", "null", "\"0g\"", "\"abc\""][int(0...6)]
                commands.append(Command(payload: Array(#"{"raw":\#(value),"transaction":\#(n)}"#.utf8), expected: "invalid_payload", transaction: n))
            case 13:
                let n = transaction()
                commands.append(Command(payload: Array(#"{"raw":"\#(hex(int(1...8)))","response":false,"transaction":\#(n)}"#.utf8), expected: "unsupported_write_type", transaction: n))
            case 14:
                let n = transaction()
                commands.append(Command(payload: Array(#"{"\#(text(int(1...8)))":1,"transaction":\#(n)}"#.utf8), expected: "invalid_payload", transaction: n))
            case 15:
                let n = transaction()
                commands.append(Command(payload: Array(#"{"raw":"\#(hex(int(513...5000)))","transaction":\#(n)}"#.utf8), expected: "invalid_payload", transaction: n))
            case 16: commands.append(Command(payload: Array(["", " ", "\t", "  \r "][int(0...3)].utf8), expected: "invalid_payload"))
            default: commands.append(Command(payload: junkPayload(), expected: nil))
            }
        }
        let n = transaction()
        commands += binary(40, huge: true).map { Command(payload: $0, expected: nil) }
        commands.append(Command(payload: Array("{\n\"raw\": \"0102\",\n\"transaction\": \(n)\n}".utf8), expected: "ok", transaction: n))
        return commands
    }

    /// To a characteristic configured with `format: uint16`.
    mutating func uint16Commands(_ count: Int) -> [Command] {
        var commands: [Command] = []
        for _ in 0..<count {
            switch int(0...9) {
            case 0...3:
                let value = int(-70_000...140_000)
                commands.append(Command(payload: Array("\(value)".utf8), expected: (0...65535).contains(value) ? "ok" : "invalid_payload"))
            case 4, 5:
                let value = int(-70_000...140_000)
                let n = transaction()
                commands.append(Command(
                    payload: Array(#"{"value":\#(value),"transaction":\#(n)}"#.utf8),
                    expected: (0...65535).contains(value) ? "ok" : "invalid_payload", transaction: n))
            case 6: commands.append(Command(payload: Array("\(int(0...1000)).5".utf8), expected: "invalid_payload"))
            default: commands.append(Command(payload: junkPayload(), expected: nil))
            }
        }
        commands += binary(40).map { Command(payload: $0, expected: nil) }
        return commands
    }

    /// To a characteristic configured with `format: utf8`.
    mutating func utf8Commands(_ count: Int) -> [Command] {
        var commands: [Command] = []
        for _ in 0..<count {
            switch int(0...9) {
            case 0...3:
                let text = text(int(1...300))
                commands.append(Command(payload: Array(text.utf8), expected: text.utf8.count <= 512 ? "ok" : "invalid_payload"))
            case 4, 5:
                let text = text(int(1...200))
                let n = transaction()
                commands.append(Command(
                    payload: Array(#"{"value":"\#(text)","transaction":\#(n)}"#.utf8),
                    expected: text.utf8.count <= 512 ? "ok" : "invalid_payload", transaction: n))
            case 6, 7:
                var payload = Array(text(int(1...20)).utf8)
                payload.insert([0xff, 0xc3, 0xed][int(0...2)], at: int(0...payload.count))
                commands.append(Command(payload: payload, expected: "invalid_payload"))
            default: commands.append(Command(payload: junkPayload(), expected: nil))
            }
        }
        commands += binary(40).map { Command(payload: $0, expected: nil) }
        return commands
    }

    /// To `/get` of a readable characteristic: every payload is a read.
    mutating func readCommands(_ count: Int) -> [Command] {
        var commands: [Command] = []
        for _ in 0..<count {
            if chance(30) {
                let n = transaction()
                commands.append(Command(payload: Array(#"{"transaction":\#(n)}"#.utf8), expected: "ok", transaction: n))
            } else {
                commands.append(Command(payload: junkPayload(), expected: "ok"))
            }
        }
        commands += binary(40, huge: true).map { Command(payload: $0, expected: "ok") }
        return commands
    }
}
