import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `check-config` and `run` on good and bad configuration files, through the executable.
@Suite(.timeLimit(.minutes(2)))
struct ConfigFileTests {
    /// A malformed configuration and where its error is.
    struct BadConfig: Sendable, CustomStringConvertible {
        var description: String
        var yaml: String
        /// `line:column` of the error, or `nil` to accept any position.
        var position: String?
    }

    static let head = "mqtt:\n  url: mqtt://127.0.0.1:1883\n"

    static let badConfigs = [
        BadConfig(description: "unknown key", yaml: head + "  bas_topic: x\n", position: "3:3"),
        BadConfig(description: "wrong type", yaml: head + "bluetooth:\n  services: 180d\n", position: "4:13"),
        BadConfig(description: "bad duration", yaml: head + "commands:\n  timeout: 10\n", position: "4:12"),
        BadConfig(description: "bad UUID", yaml: head + "bluetooth:\n  services: [\"18zz\"]\n", position: "4:14"),
        BadConfig(description: "YAML syntax", yaml: "mqtt: {url: mqtt://x\n", position: nil),
        BadConfig(description: "missing mqtt.url", yaml: "bluetooth: {}\nmqtt:\n  base_topic: x\n", position: "2:1"),
    ]

    /// A temporary directory for this test's files.
    func temporaryDirectory() throws -> String {
        var template = Array("/tmp/ble-mqtt-bridge-config.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
        return String(cString: created)
    }

    @Test("a malformed config: check-config and run print file:line:column: and exit non-zero", arguments: badConfigs)
    func malformedConfig(_ bad: BadConfig) async throws {
        try Paths.requireBuiltExecutables()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/bad.yaml"
        try bad.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let prefix = try Regex("\(NSRegularExpression.escapedPattern(for: path)):\(bad.position ?? "[0-9]+:[0-9]+"): \\S")

        let check = try await ChildProcess.run(Paths.bridge, ["check-config", "--config", path], directory: directory)
        #expect(check.termination != .exited(0), "check-config accepted it: \(check.output)")
        #expect(check.termination.isExit, "check-config crashed: \(check.termination)")
        #expect(check.output.contains(prefix), "check-config printed: \(check.output)")

        // run refuses it the same way, without needing a bus or a broker.
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory)/no-bus"
        let run = try await ChildProcess.run(
            Paths.bridge, ["run", "--config", path], environment: environment, directory: directory, timeout: .seconds(20))
        #expect(run.termination != .exited(0), "run accepted it: \(run.output)")
        #expect(run.termination.isExit, "run crashed: \(run.termination)")
        #expect(run.output.contains(prefix), "run printed: \(run.output)")
    }

    @Test("check-config accepts the demo's bridge.yaml")
    func demoConfigIsValid() async throws {
        try Paths.requireBuiltExecutables()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await ChildProcess.run(Paths.bridge, ["check-config", "--config", Paths.demoConfig], directory: directory)
        #expect(result.termination == .exited(0), "\(result.termination): \(result.output)")
        #expect(result.output.contains("\(Paths.demoConfig): ok"), "\(result.output)")
    }

    @Test("every key shown commented out in bridge.yaml is accepted")
    func referenceKeysAreValid() async throws {
        try Paths.requireBuiltExecutables()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Uncomment "# key: value" lines (prose comments do not start with a lowercase key).
        let commentedKey = /(?<indent>\s*)# (?<entry>\s*[a-z_]+:(?: .*)?)/
        var uncommented = 0
        let lines = ChildProcess.read(Paths.demoConfig).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard let match = line.wholeMatch(of: commentedKey) else { return String(line) }
            uncommented += 1
            return String(match.output.indent + match.output.entry)
        }
        #expect(uncommented >= 15, "only \(uncommented) commented keys found in bridge.yaml")
        let path = "\(directory)/full.yaml"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["MQTT_PASSWORD"] = "secret"
        environment["BOT_PASSWORD"] = "1234"
        environment["WEB_TOKEN"] = "a-long-random-token"
        let result = try await ChildProcess.run(
            Paths.bridge, ["check-config", "--config", path], environment: environment, directory: directory)
        #expect(result.termination == .exited(0), "\(result.termination): \(result.output)\n\(lines.joined(separator: "\n"))")
        #expect(result.output.contains("\(path): ok"), "\(result.output)")
    }
}

extension ChildProcess.Termination {
    /// Whether the process exited (rather than being killed by a signal).
    var isExit: Bool {
        if case .exited = self { return true }
        return false
    }
}
