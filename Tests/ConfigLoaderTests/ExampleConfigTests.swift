import Foundation
import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// The repository's `bridge.yaml` is the demo's working configuration and, as its header says, a
/// reference of every key: each key the decoder knows (``ConfigKeys``) must be there, commented out
/// or not, and no key it shows may be unknown.
@Suite struct ExampleConfigTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../bridge.yaml").standardizedFileURL.path

    static func text() throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The file with its commented-out YAML uncommented: a comment line whose text (after `# `)
    /// is `key:` or `key: value`, or a list item `- key: ...` or `- {...}`, becomes that line at the
    /// comment's indentation; prose comments stay comments.
    static func uncommented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let indent = line.prefix { $0 == " " }
            var rest = line.dropFirst(indent.count)
            guard rest.first == "#" else { return String(line) }
            rest = rest.dropFirst()
            if rest.first == " " { rest = rest.dropFirst() }
            let candidate = String(indent) + rest
            var content = Substring(candidate).drop { $0 == " " }
            if content.hasPrefix("- {") { return candidate }
            if content.hasPrefix("- ") { content = content.dropFirst(2) }
            let key = content.prefix { ("a"..."z").contains($0) || $0 == "_" }
            let after = content.dropFirst(key.count)
            guard !key.isEmpty, after.first == ":", after.count == 1 || after.dropFirst().first == " " else {
                return String(line)
            }
            return candidate
        }.joined(separator: "\n")
    }

    /// The decoder's keys that `text` lacks, and the keys it shows that the decoder does not know.
    static func compare(_ text: String) throws -> (missing: [String], unknown: [String]) {
        let shown = try ConfigKeys.paths(inYAML: uncommented(text))
        return (ConfigKeys.allPaths.subtracting(shown).sorted(), shown.subtracting(ConfigKeys.allPaths).sorted())
    }

    @Test func listsEveryKey() throws {
        let (missing, unknown) = try Self.compare(Self.text())
        #expect(missing == [], "keys the configuration knows but bridge.yaml does not show")
        #expect(unknown == [], "keys bridge.yaml shows but the configuration does not know")
    }

    @Test func isAWorkingConfiguration() throws {
        let config = try BridgeConfig.parse(yaml: Self.text(), fileName: "bridge.yaml", environment: [:], hostName: "h")
        #expect(config.mqtt.url == BrokerURL(scheme: .mqtt, host: "127.0.0.1", port: 1883))
        #expect(config.devices.count == 3)
        #expect(config.warnings.isEmpty)
    }

    /// The comparison sees a key that is only in a comment, and misses one that is gone.
    @Test func comparisonFindsAMissingKey() throws {
        let text = try Self.text()
        #expect(text.contains("#   metrics_file:"))
        let without = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("metrics_file:") }.joined(separator: "\n")
        #expect(try Self.compare(without).missing == ["health.metrics_file"])
        let misspelt = text.replacingOccurrences(of: "#   metrics_file:", with: "#   metric_file:")
        #expect(try Self.compare(misspelt) == (missing: ["health.metrics_file"], unknown: ["health.metric_file"]))
    }

    @Test func uncommentsOnlyYAML() {
        let text = """
            a:
              # Default: none, see below
              # b: 1   # trailing
              #   mosquitto_pub -t x -m y
              # {connection: poll}.
            # c:
            #   - d: 2
            #   - { e: 3 }
            """
        #expect(Self.uncommented(text) == """
            a:
              # Default: none, see below
              b: 1   # trailing
              #   mosquitto_pub -t x -m y
              # {connection: poll}.
            c:
              - d: 2
              - { e: 3 }
            """)
    }
}
