import Foundation
import Testing

/// What ``RuntimeExecutor``'s idle count rests on, checked in the runtime's sources (the
/// `Bridge` module but `Service/`, which wraps the real BlueZ and MQTT clients and the live
/// clock, and which the harness does not run; and `RuntimeCore` when it exists): nothing wakes
/// the runtime but its own jobs and the test, and it reads no time but the ``BridgeClock``'s.
/// A task that does not inherit the harness's executor (`Task {}`, `Task.detached`), an actor
/// with an executor of its own, a real clock or a thread would do work the count cannot see,
/// and "idle" would be a guess again; a time read past the clock would not move with the
/// fake clock, and a test's timing would depend on the machine.
@Suite struct RuntimeIdleInvariantTests {
    /// Text that must not appear in a line of code (comments aside), and why.
    static let forbidden: [(text: String, why: String)] = [
        ("Task {", "an unstructured task does not inherit the executor"),
        ("Task(", "an unstructured task does not inherit the executor"),
        ("Task.detached", "a detached task does not inherit the executor"),
        ("Task.sleep", "real time: use the BridgeClock"),
        ("executorPreference", "another executor"),
        ("@MainActor", "the main actor's executor"),
        ("@globalActor", "a global actor's executor"),
        ("unownedExecutor", "an actor with an executor of its own"),
        ("ContinuousClock", "real time: use the BridgeClock"),
        ("SuspendingClock", "real time: use the BridgeClock"),
        ("clock_gettime", "real time: use the BridgeClock"),
        ("gettimeofday", "real time: use the BridgeClock"),
        ("time(", "wall time: use the BridgeClock's unixTime"),
        ("Date(", "wall time: use the BridgeClock's unixTime"),
        ("LiveClock(", "real time: the service passes the clock in"),
        ("DispatchQueue", "a queue of its own"),
        ("Thread", "a thread of its own"),
        ("pthread_create", "a thread of its own"),
    ]

    /// Where real time is allowed: the live clock itself.
    static let allowed: [String: Set<String>] = ["Support/BridgeClock.swift": ["ContinuousClock", "time("]]

    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized
    }

    static var bridgeSources: URL { sources.appendingPathComponent("Bridge") }

    /// The runtime's modules: `Bridge`, and `RuntimeCore` (the pure cores) when it exists.
    static let runtimeModules = ["Bridge", "RuntimeCore"]

    /// The runtime's files, named by their path in their module (`Support/Mailbox.swift`).
    static func runtimeFiles() throws -> [(name: String, text: String)] {
        var files: [(name: String, text: String)] = []
        for module in runtimeModules {
            let root = sources.appendingPathComponent(module)
            guard FileManager.default.fileExists(atPath: root.path) else { continue }
            let names = try FileManager.default.subpathsOfDirectory(atPath: root.path)
            files += try names.filter { $0.hasSuffix(".swift") && !(module == "Bridge" && $0.hasPrefix("Service/")) }.sorted()
                .map { name in (name, try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)) }
        }
        return files
    }

    /// The lines of `text` (a file `name` of the runtime) that break the rules, described.
    static func violations(name: String, text: String) -> [String] {
        var found: [String] = []
        let declarators: Set<Substring> = ["final", "public", "private", "fileprivate", "internal", "package", "distributed"]
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            let words = code.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" })
            if let i = words.firstIndex(of: "actor"), i == words.startIndex || declarators.contains(words[words.index(before: i)]) {
                found.append("\(name):\(number + 1): an actor (an executor of its own): \(line)")
            }
            for rule in forbidden where contains(code, token: rule.text) && !(allowed[name]?.contains(rule.text) ?? false) {
                found.append("\(name):\(number + 1): \(rule.text) (\(rule.why)): \(line)")
            }
        }
        return found
    }

    /// Whether `token` appears in `code` as a whole (`Task {` is not in `group.addTask {`).
    static func contains(_ code: Substring, token: String) -> Bool {
        func isIdentifier(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
        var rest = code[...]
        while let r = rest.range(of: token) {
            let before = r.lowerBound > code.startIndex ? code[code.index(before: r.lowerBound)] : nil
            let after = r.upperBound < code.endIndex ? code[r.upperBound] : nil
            let startsWord = !isIdentifier(token.first) || !isIdentifier(before)
            let endsWord = !isIdentifier(token.last) || !isIdentifier(after)
            if startsWord && endsWord { return true }
            rest = code[r.upperBound...]
        }
        return false
    }

    @Test("the runtime has no unstructured task, actor, real clock, queue or thread of its own")
    func nothingWakesTheRuntimeButItsJobs() throws {
        let files = try Self.runtimeFiles()
        #expect(files.count > 20, "the runtime's sources at \(Self.bridgeSources.path)")
        #expect(files.contains { $0.name == "Support/Mailbox.swift" })
        let found = files.flatMap { Self.violations(name: $0.name, text: $0.text) }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("the scan finds what it looks for, in code only")
    func scanFindsForbiddenCode() {
        let sample = """
            // A Task { } in a comment is fine.
            final actor Counter {}
            group.addTask { await y() }
            group.addTask { Task { await x() } }
            let t = isCurrentThread
            try await Task.sleep(for: .seconds(1))  // Task.sleep
            let clock = ContinuousClock()
            let t = Int64(time(nil))
            clock_gettime(CLOCK_MONOTONIC, &ts)
            let d = Date()
            let runtime = uptime(now)
            """
        let found = Self.violations(name: "Runtime/Sample.swift", text: sample)
        #expect(found.count == 7, "\(found)")
        #expect(!found.contains { $0.contains("uptime") }, "`uptime(` is not `time(`: \(found)")
        #expect(Self.violations(name: "Support/BridgeClock.swift", text: "ContinuousClock.now").isEmpty)
        #expect(Self.violations(name: "Support/BridgeClock.swift", text: "var unixTime: Int64 { Int64(time(nil)) }").isEmpty)
        #expect(Self.violations(name: "Publishing/ValueRouter.swift", text: "let t = time(nil)").count == 1)
    }
}
