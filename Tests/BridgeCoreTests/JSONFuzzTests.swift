import Testing

@testable import BridgeCore

/// Feeds the parser thousands of random and malformed inputs: it must never
/// trap or hang, every error must point inside the input, and everything it
/// accepts must survive a write/parse round trip unchanged.
@Suite struct JSONFuzzTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE]

    static let corpus: [String] = [
        #"{"raw":"01ff","response":true,"transaction":{"id":[1,2.5,-3e2,null,false]}}"#,
        #"[{"a":"\u00e9\ud83d\ude00\n"},[],{},"x",0,-0.5,1E+2]"#,
        #"{"value":{"bpm":72,"contact":true,"energy":120,"rr":[0.81,0.5]}}"#,
        #""tab\tquote\"slash\/back\\""#,
        "   12345678901234567890   ",
        "true", "null", "[]",
    ]

    /// Bytes that matter to the grammar, plus UTF-8 lead and continuation bytes.
    static let alphabet: [UInt8] = Array(#"{}[]:,"\/ tfnrueals0123456789.-+eE"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]

    func check(_ input: [UInt8]) throws {
        do {
            let value = try JSONParser.parse(input, maxSize: 1 << 16, maxDepth: 16)
            let written = value.jsonBytes
            let reparsed = try JSONParser.parse(written, maxSize: 1 << 20, maxDepth: 16)
            #expect(reparsed == value, "round trip failed for \(input)")
        } catch {
            #expect(error.offset >= 0 && error.offset <= input.count, "offset out of range for \(input)")
        }
    }

    @Test(arguments: seeds)
    func randomBytes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<3000 {
            let length = Int(random.next() % 48)
            var input: [UInt8] = []
            for _ in 0..<length {
                if random.next() % 4 == 0 {
                    input.append(UInt8(truncatingIfNeeded: random.next()))
                } else {
                    input.append(Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))])
                }
            }
            try check(input)
        }
    }

    @Test(arguments: seeds)
    func mutatedDocuments(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var accepted = 0
        for _ in 0..<3000 {
            var input = Array(Self.corpus[Int(random.next() % UInt64(Self.corpus.count))].utf8)
            for _ in 0..<(1 + random.next() % 3) {
                let position = input.isEmpty ? 0 : Int(random.next() % UInt64(input.count))
                switch random.next() % 5 {
                case 0 where !input.isEmpty:
                    input[position] = Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                case 1:
                    input.insert(Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))], at: position)
                case 2 where !input.isEmpty:
                    input.remove(at: position)
                case 3:
                    input = Array(input.prefix(position))
                default:
                    if !input.isEmpty { input[position] ^= UInt8(1 << (random.next() % 8)) }
                }
            }
            if (try? JSONParser.parse(input, maxSize: 1 << 16, maxDepth: 16)) != nil { accepted += 1 }
            try check(input)
        }
        // Mutations keep some documents valid: the round-trip property was really exercised.
        #expect(accepted > 0)
    }

    @Test func deepAndWideInputs() throws {
        for depth in [15, 16, 17, 100, 10_000] {
            for open in ["[", #"{"k":"#] {
                let input = Array(String(repeating: open, count: depth).utf8)
                #expect(throws: JSONParseError.self) { try JSONParser.parse(input, maxDepth: 16) }
            }
        }
        let nested = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        #expect(try JSONParser.parse(Array(nested.utf8), maxDepth: 16) != .null)
        let wide = "[" + Array(repeating: "0", count: 50_000).joined(separator: ",") + "]"
        #expect(try JSONParser.parse(Array(wide.utf8)).arrayValue?.count == 50_000)
        let unterminated = "\"" + String(repeating: "a", count: 100_000)
        #expect(throws: JSONParseError(.unexpectedEnd, at: 100_001)) { try JSONParser.parse(Array(unterminated.utf8)) }
    }
}
