import Testing

@testable import BridgeCore

/// Throws thousands of random and malformed payloads at the command parsers:
/// they must never trap or hang, must answer every write payload with a command
/// or an `invalid_payload` error, and the result built from either must be valid JSON.
@Suite struct CommandFuzzTests {
    static let seeds: [UInt64] = [11, 12, 13]
    static let formats: [ValueFormat] = ValueFormat.allCases

    static let corpus: [String] = [
        #"{"raw":"01ff","response":true,"transaction":{"id":[1,2.5,-3e2,null,false]}}"#,
        #"{"value":42,"transaction":"t"}"#,
        #"{"value":{"bpm":72,"contact":true,"energy":120,"rr":[0.81,0.5]}}"#,
        #"{"bpm":72,"rr":[1]}"#,
        #"{"value":"héllo","response":false}"#,
        #""01ff""#,
        "01 ff", "0x01ff", "42", "-3", "21.5", "1e2", "null", "true", "hello",
    ]

    /// Bytes that matter to the grammars, plus UTF-8 lead and continuation bytes.
    static let alphabet: [UInt8] =
        Array(#"{}[]:,"\/ tfnrueals0123456789abcdefABCDEFxX.-+eE"#.utf8)
        + [0x00, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]

    /// Parses `payload` in every format and checks the invariants; returns how many formats accepted it.
    @discardableResult
    static func check(_ payload: [UInt8], formats: [ValueFormat] = formats) throws -> Int {
        var accepted = 0
        let json = try? JSONParser.parse(payload)
        for format in formats {
            let parsed = WriteCommand.parse(payload, format: format)
            switch parsed.result {
            case .success(let command):
                accepted += 1
                #expect(command.bytes.count <= WriteCommand.maxValueLength)
                #expect(command.transaction == parsed.transaction)
                let result = CommandResult.writeSucceeded(
                    response: command.response ?? true, transaction: command.transaction)
                let reparsed = try JSONParser.parse(result.jsonBytes)
                #expect(reparsed["status"] == "ok")
            case .failure(let error):
                #expect(error.code == .invalidPayload)
                #expect(!error.message.isEmpty)
                let result = CommandResult.failed(.write, error: error, transaction: parsed.transaction)
                let reparsed = try JSONParser.parse(result.jsonBytes)
                #expect(reparsed["error"]?["code"] == "invalid_payload")
                #expect(reparsed["transaction"] == parsed.transaction)
            }
            // A transaction only ever comes from a JSON object that has one.
            if let transaction = parsed.transaction {
                #expect(json?["transaction"] == transaction)
            }
        }
        let read = ReadCommand.parse(payload)
        if let transaction = read.transaction {
            #expect(json?["transaction"] == transaction)
        } else if case .object(let object)? = json {
            #expect(object["transaction"] == nil)
        }
        return accepted
    }

    @Test(arguments: seeds)
    func randomBytes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let length = Int(random.next() % 40)
            var payload: [UInt8] = []
            for _ in 0..<length {
                if random.next() % 4 == 0 {
                    payload.append(UInt8(truncatingIfNeeded: random.next()))
                } else {
                    payload.append(Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))])
                }
            }
            try Self.check(payload)
        }
    }

    @Test(arguments: seeds)
    func mutatedCommands(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var accepted = 0
        var rejected = 0
        for _ in 0..<2000 {
            var payload = Array(Self.corpus[Int(random.next() % UInt64(Self.corpus.count))].utf8)
            for _ in 0..<(random.next() % 3) {
                let position = payload.isEmpty ? 0 : Int(random.next() % UInt64(payload.count))
                switch random.next() % 5 {
                case 0 where !payload.isEmpty:
                    payload[position] = Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                case 1:
                    payload.insert(Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))], at: position)
                case 2 where !payload.isEmpty:
                    payload.remove(at: position)
                case 3:
                    payload = Array(payload.prefix(position))
                default:
                    if !payload.isEmpty { payload[position] ^= UInt8(1 << (random.next() % 8)) }
                }
            }
            let count = try Self.check(payload)
            accepted += count
            rejected += Self.formats.count - count
        }
        // Both paths were really exercised.
        #expect(accepted > 100)
        #expect(rejected > 100)
    }

    @Test func hugeAndDeepPayloads() throws {
        var random = SplitMix64(seed: 99)
        let huge: [[UInt8]] = [
            Array(String(repeating: "[", count: 200_000).utf8),
            Array(String(repeating: #"{"a":"#, count: 50_000).utf8),
            Array(
                (#"{"raw":"01","transaction":"# + String(repeating: "[", count: 70)
                    + String(repeating: "]", count: 70) + "}").utf8),
            Array((#"{"raw":"01","transaction":""# + String(repeating: "x", count: 900_000) + #""}"#).utf8),
            Array((#"{""# + String(repeating: "k", count: 500_000) + #"":1}"#).utf8),
            Array(String(repeating: "ab", count: 400_000).utf8),
            Array(String(repeating: "ab ", count: 300_000).utf8),
            Array(String(repeating: "9", count: 100_000).utf8),
            Array(("-0." + String(repeating: "1", count: 5_000)).utf8),
            Array((#"""# + String(repeating: "\\u00e9", count: 100_000) + #"""#).utf8),
            [UInt8](repeating: 0x7B, count: (1 << 20) + 1),
            [UInt8](repeating: 0xFF, count: 300_000),
            (0..<300_000).map { _ in UInt8(truncatingIfNeeded: random.next()) },
            [0xEF, 0xBB, 0xBF] + Array(#"{"raw":"01"}"#.utf8),  // a byte order mark is not JSON
        ]
        for payload in huge {
            // One format of each parsing path is enough for inputs this large.
            try Self.check(payload, formats: [.hex, .utf8, .uint16, .temperature, .heartRateMeasurement])
        }
    }

    @Test func invalidUTF8Everywhere() throws {
        let bad: [[UInt8]] = [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xC3], [0xE2, 0x82]]
        for sequence in bad {
            let templates = [
                #"{"raw":"@"}"#, #"{"value":"@","transaction":1}"#, #"{"@":1,"transaction":2}"#, "@", #""@""#, "01@",
            ]
            for template in templates {
                var payload: [UInt8] = []
                for byte in template.utf8 {
                    if byte == 0x40 { payload += sequence } else { payload.append(byte) }
                }
                let accepted = try Self.check(payload)
                #expect(accepted == 0, "\(payload) accepted")
            }
        }
    }
}
