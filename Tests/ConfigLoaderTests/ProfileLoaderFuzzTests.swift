import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// Random mutations of valid profiles (characters deleted, replaced, tokens of the grammar
/// inserted, lines swapped): the loader never traps, every refusal names the file and a position
/// inside it, and what loads holds together (each step's decode exists, each expect's
/// characteristic is subscribed).
@Suite struct ProfileLoaderFuzzTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE]

    static let tokens: [String] = [
        "{", "}", "[", "]", ":", ",", " ", "\n", "\"", "'", "- ", "  ", "x", "z", "<", ">", "h", "H", "B", "/10", "*0.01",
        "{options.password|crc32be}", "{position|u8}", "{unix}", "options.", "if: ", "unless: ", "decode: ", "first_byte: ",
        "\"01\": ", "subscribe: ", "wait_notify: ", "sleep: 1s", "temperature", "battery", "on", "off", "${X}", "#", "é", "\t",
        "0x", "100", "-1", "&", "*", "!", "|", ">-",
    ]

    static let profiles: [String] = [ProfileLoaderTests.bot] + ShippedProfiles.all.map(\.yaml) + [
        """
        id: lywsd
        connection: always
        values: { mode: {} }
        steps:
          - subscribe: { characteristic: "ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6", decode: live }
          - wait_notify: { characteristic: "ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6", timeout: 30s, decode: live }
          - { sleep: 500ms }
        decode:
          live: { struct: "<hBH", fields: { temperature: "*0.01", humidity: "", voltage: "/1000" } }
          status: { first_byte: { "01": live, "02": flags } }
          flags: { struct: "<xB", fields: { mode: { 0: "off", 1: "on" } } }
        cover: {}
        """
    ]

    static func mutate(_ text: String, _ random: inout SplitMix64) -> String {
        var scalars = Array(text.unicodeScalars)
        for _ in 0..<Int(1 + random.next() % 3) {
            guard !scalars.isEmpty else { break }
            let at = Int(random.next() % UInt64(scalars.count))
            switch random.next() % 4 {
            case 0:
                let length = min(Int(1 + random.next() % 6), scalars.count - at)
                scalars.removeSubrange(at..<(at + length))
            case 1:
                let token = tokens[Int(random.next() % UInt64(tokens.count))]
                scalars.insert(contentsOf: token.unicodeScalars, at: at)
            case 2:
                let token = tokens[Int(random.next() % UInt64(tokens.count))]
                scalars.replaceSubrange(at...at, with: token.unicodeScalars)
            default:
                var lines = String(String.UnicodeScalarView(scalars)).split(separator: "\n", omittingEmptySubsequences: false)
                guard lines.count > 1 else { continue }
                let a = Int(random.next() % UInt64(lines.count))
                let b = Int(random.next() % UInt64(lines.count))
                lines.swapAt(a, b)
                scalars = Array(lines.joined(separator: "\n").unicodeScalars)
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }

    @Test(arguments: seeds)
    func mutationsNeverCrashAndErrorsHavePositions(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var loaded = 0
        var refused = 0
        for _ in 0..<1500 {
            let base = Self.profiles[Int(random.next() % UInt64(Self.profiles.count))]
            let text = Self.mutate(base, &random)
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            do throws(ConfigError) {
                let profile = try ProfileCatalog.parseProfile(yaml: text, fileName: "fuzz.yaml")
                loaded += 1
                #expect(!profile.id.isEmpty)
                for step in profile.steps + profile.commands.flatMap(\.steps) {
                    if let decode = step.decode { #expect(profile.decodes[decode] != nil, "\(text)") }
                }
                _ = DeviceProfileBinding(profile: profile, options: ["password": "1"])
            } catch {
                refused += 1
                for e in error.all {
                    #expect(e.file == "fuzz.yaml")
                    #expect(e.line >= 1 && e.line <= lineCount + 1, "\(e) in:\n\(text)")
                    #expect(e.column >= 1, "\(e) in:\n\(text)")
                }
            }
        }
        // Both outcomes are exercised.
        #expect(loaded > 100)
        #expect(refused > 300)
    }
}
