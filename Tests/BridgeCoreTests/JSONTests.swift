import Testing

@testable import BridgeCore

@Suite struct JSONWriterTests {
    @Test func writesScalars() {
        #expect(JSONValue.null.jsonString == "null")
        #expect(JSONValue.bool(true).jsonString == "true")
        #expect(JSONValue.bool(false).jsonString == "false")
        #expect(JSONValue.integer(0).jsonString == "0")
        #expect(JSONValue.integer(72).jsonString == "72")
        #expect(JSONValue.integer(-5).jsonString == "-5")
        #expect(JSONValue.integer(.max).jsonString == "9223372036854775807")
        #expect(JSONValue.integer(.min).jsonString == "-9223372036854775808")
        #expect(JSONValue.integer(1_000_000).jsonString == "1000000")
    }

    @Test func writesDoublesShortest() {
        #expect(JSONValue.number(21.5).jsonString == "21.5")
        #expect(JSONValue.number(0.1).jsonString == "0.1")
        #expect(JSONValue.number(-0.25).jsonString == "-0.25")
        #expect(JSONValue.number(1e-5).jsonString == "1e-05")
        #expect(JSONValue.number(1e300).jsonString == "1e+300")
        #expect(JSONValue.number(Double(2150) / 100).jsonString == "21.5")
        #expect(JSONValue.number(.infinity).jsonString == "null")
        #expect(JSONValue.number(-.infinity).jsonString == "null")
        #expect(JSONValue.number(.nan).jsonString == "null")
    }

    @Test func escapesStrings() {
        #expect(JSONValue.string("plain").jsonString == #""plain""#)
        #expect(JSONValue.string("a\"b\\c/d").jsonString == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\n\r\t\u{08}\u{0C}").jsonString == #""\n\r\t\b\f""#)
        #expect(JSONValue.string("\u{00}\u{01}\u{1F}").jsonString == #""\u0000\u0001\u001f""#)
        #expect(JSONValue.string("\u{7F}é😀").jsonString == "\"\u{7F}é😀\"")
        #expect(JSONValue.string("").jsonString == #""""#)
    }

    @Test func writesContainersInOrder() {
        let value: JSONValue = ["b": 1, "a": [true, nil, "x"], "c": ["k": 2.5]]
        #expect(value.jsonString == #"{"b":1,"a":[true,null,"x"],"c":{"k":2.5}}"#)
        #expect(JSONValue.array([]).jsonString == "[]")
        #expect(JSONValue.object([:]).jsonString == "{}")
    }

    @Test func objectAccessors() {
        var object: JSONObject = ["a": 1, "b": "x"]
        object["a"] = 2
        object["c"] = true
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == 2)
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        let value = JSONValue.object(object)
        #expect(value["c"]?.boolValue == true)
        #expect(value["missing"] == nil)
        #expect(JSONValue.number(3.0).int64Value == 3)
        #expect(JSONValue.number(3.5).int64Value == nil)
        #expect(JSONValue.number(1e30).int64Value == nil)
        #expect(JSONValue.integer(4).doubleValue == 4.0)
    }
}

@Suite struct JSONParserTests {
    func parse(_ text: String, maxSize: Int = JSONParser.defaultMaxSize, maxDepth: Int = JSONParser.defaultMaxDepth)
        throws -> JSONValue
    {
        try JSONParser.parse(Array(text.utf8), maxSize: maxSize, maxDepth: maxDepth)
    }

    func error(_ text: String, maxSize: Int = JSONParser.defaultMaxSize) -> JSONParseError? {
        do {
            _ = try JSONParser.parse(Array(text.utf8), maxSize: maxSize)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesScalars() throws {
        #expect(try parse("null") == .null)
        #expect(try parse(" true ") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse("0") == .integer(0))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("42") == .integer(42))
        #expect(try parse("-17") == .integer(-17))
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("9223372036854775808") == .number(9223372036854775808.0))
        #expect(try parse("1.5") == .number(1.5))
        #expect(try parse("-0.25e2") == .number(-25))
        #expect(try parse("1E3") == .number(1000))
        #expect(try parse("1e-2") == .number(0.01))
        #expect(try parse("\"hi\"") == .string("hi"))
    }

    @Test func parsesContainers() throws {
        let value = try parse(#" { "raw" : "01ff", "response": false, "transaction": [1, {"a": null}], "n": {} } "#)
        #expect(value == ["raw": "01ff", "response": false, "transaction": [1, ["a": nil]], "n": .object([:])])
        #expect(try parse("[]") == .array([]))
        #expect(try parse("[1,2,3]") == [1, 2, 3])
    }

    @Test func decodesEscapes() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse("\"é😀\"") == .string("é😀"))
    }

    @Test(arguments: [
        ("", JSONParseError.Code.unexpectedEnd, 0),
        ("   ", .unexpectedEnd, 3),
        ("nul", .unexpectedEnd, 3),
        ("nulx", .unexpectedCharacter, 3),
        ("tru e", .unexpectedCharacter, 3),
        ("[1,]", .unexpectedCharacter, 3),
        ("[1 2]", .unexpectedCharacter, 3),
        ("{\"a\" 1}", .unexpectedCharacter, 5),
        ("{\"a\":1,}", .unexpectedCharacter, 7),
        ("{a:1}", .unexpectedCharacter, 1),
        ("{\"a\":1", .unexpectedEnd, 6),
        ("[", .unexpectedEnd, 1),
        ("01", .invalidNumber, 1),
        ("-", .unexpectedEnd, 1),
        ("-a", .invalidNumber, 1),
        ("1.", .unexpectedEnd, 2),
        ("1.e5", .invalidNumber, 2),
        ("1e", .unexpectedEnd, 2),
        ("1e+", .unexpectedEnd, 3),
        (".5", .unexpectedCharacter, 0),
        ("+1", .unexpectedCharacter, 0),
        ("1e400", .numberOutOfRange, 0),
        ("NaN", .unexpectedCharacter, 0),
        ("1 2", .trailingData, 2),
        ("{} x", .trailingData, 3),
        ("\"abc", .unexpectedEnd, 4),
        ("\"a\tb\"", .controlCharacterInString, 2),
        ("\"a\nb\"", .controlCharacterInString, 2),
        ("\"\\x\"", .invalidEscape, 1),
        ("\"\\u12g4\"", .invalidUnicodeEscape, 5),
        ("\"\\ud83d\"", .invalidUnicodeEscape, 1),
        ("\"\\ud83d\\u0041\"", .invalidUnicodeEscape, 1),
        ("\"\\ude00\"", .invalidUnicodeEscape, 1),
        ("\"\\u12", .unexpectedEnd, 5),
        ("'a'", .unexpectedCharacter, 0),
        ("\u{FEFF}1", .unexpectedCharacter, 0),
    ])
    func rejectsMalformed(text: String, code: JSONParseError.Code, offset: Int) {
        #expect(error(text) == JSONParseError(code, at: offset))
    }

    @Test func rejectsInvalidUTF8() {
        func check(_ bytes: [UInt8], offset: Int) {
            #expect(throws: JSONParseError(.invalidUTF8, at: offset)) { try JSONParser.parse(bytes) }
        }
        check([0x22, 0xFF, 0x22], offset: 1)
        check([0x22, 0x61, 0xC3, 0x22], offset: 2)  // truncated 2-byte sequence
        check([0x22, 0xC0, 0xAF, 0x22], offset: 1)  // overlong "/"
        check([0x22, 0xE0, 0x80, 0xAF, 0x22], offset: 1)  // overlong
        check([0x22, 0xED, 0xA0, 0x80, 0x22], offset: 1)  // UTF-8 encoded surrogate
        check([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], offset: 1)  // above U+10FFFF
        check([0x22, 0x80, 0x22], offset: 1)  // lone continuation byte
        // Non-ASCII outside strings is a grammar error, not a crash.
        #expect(throws: JSONParseError(.unexpectedCharacter, at: 0)) { try JSONParser.parse([0xC3, 0xA9]) }
    }

    @Test func enforcesDepthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(ok) }
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(error(tooDeep) == JSONParseError(.depthLimitExceeded, at: 64))
        let objects = String(repeating: #"{"a":"#, count: 100_000)
        #expect(error(objects)?.code == .depthLimitExceeded)
        #expect(try parse("[[1]]", maxDepth: 2) == [[1]])
        #expect(throws: JSONParseError(.depthLimitExceeded, at: 2)) { try parse("[[[1]]]", maxDepth: 2) }
    }

    @Test func enforcesSizeLimit() {
        #expect(error("[1,2,3]", maxSize: 6) == JSONParseError(.sizeLimitExceeded, at: 6))
        #expect(error("[1,2,3]", maxSize: 7) == nil)
    }

    @Test func rejectsOverlongNumbers() {
        let long = String(repeating: "1", count: 600)
        #expect(error(long)?.code == .numberOutOfRange)
        let longFraction = "0." + String(repeating: "1", count: 600)
        #expect(error(longFraction)?.code == .numberOutOfRange)
    }

    @Test func handlesHugeStrings() throws {
        let big = String(repeating: "x", count: 500_000)
        #expect(try parse("\"\(big)\"") == .string(big))
        let escaped = String(repeating: "\\n", count: 100_000)
        #expect(try parse("\"\(escaped)\"") == .string(String(repeating: "\n", count: 100_000)))
    }

    @Test func describesErrorsWithOffset() {
        #expect(JSONParseError(.trailingData, at: 7).description == "invalid JSON: unexpected data after the value at byte 7")
    }

    @Test func roundTrips() throws {
        let values: [JSONValue] = [
            ["raw": "01ff", "value": ["bpm": 72, "contact": true, "energy": 120, "rr": [0.8095703125, 0.5]]],
            .string("\u{0}\u{1F}\"\\/é😀\u{2028}"),
            .array([.integer(.min), .integer(.max), .number(-1.5e-300), .number(123.456), .null, false]),
            .object(JSONObject([.init(key: "dup", value: 1), .init(key: "dup", value: 2)])),
        ]
        for value in values {
            #expect(try JSONParser.parse(value.jsonBytes) == value)
        }
        #expect(try parse(#"{"dup":1,"dup":2}"#)["dup"] == 2)
    }
}
