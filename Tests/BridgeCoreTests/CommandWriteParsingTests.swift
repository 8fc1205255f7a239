import Testing

@testable import BridgeCore

/// `/set` payloads: every accepted form per format, every rejection, and the
/// transaction that error results echo.
@Suite struct CommandWriteParsingTests {
    static func parse(_ payload: String, _ format: ValueFormat) -> WriteCommand.Parsed {
        WriteCommand.parse(Array(payload.utf8), format: format)
    }

    // MARK: - Accepted bare payloads

    @Test(arguments: [
        ("01ff", [0x01, 0xFF] as [UInt8]),
        ("01 ff", [0x01, 0xFF]),
        ("0x01ff", [0x01, 0xFF]),
        ("0X01FF", [0x01, 0xFF]),
        ("  DeadBeef\n", [0xDE, 0xAD, 0xBE, 0xEF]),
        ("42", [0x42]),
        (#""01ff""#, [0x01, 0xFF]),
        (#" "0x0a 0b" "#, [0x0A, 0x0B]),
    ])
    func bareHex(payload: String, bytes: [UInt8]) throws {
        let parsed = Self.parse(payload, .hex)
        #expect(parsed.command == WriteCommand(bytes: bytes))
        #expect(parsed.transaction == nil)
    }

    @Test(arguments: [
        ("42", ValueFormat.uint8, [42] as [UInt8]),
        ("0", .uint8, [0]),
        ("255", .uint8, [255]),
        (" 7 \n", .uint8, [7]),
        ("1e2", .uint8, [100]),
        ("42.0", .uint8, [42]),
        ("-0", .uint8, [0]),
        ("258", .uint16, [0x02, 0x01]),
        ("65535", .uint16, [0xFF, 0xFF]),
        ("-3", .sint16, [0xFD, 0xFF]),
        ("-32768", .sint16, [0x00, 0x80]),
        ("32767", .sint16, [0xFF, 0x7F]),
        ("21.5", .float32, [0x00, 0x00, 0xAC, 0x41]),
        ("-1", .float32, [0x00, 0x00, 0x80, 0xBF]),
        ("0", .float32, [0, 0, 0, 0]),
        ("21.5", .temperature, [0x66, 0x08]),
        ("-3.25", .temperature, [0xBB, 0xFE]),
        ("null", .temperature, [0x00, 0x80]),
        ("75", .batteryLevel, [75]),
        ("45.5", .humidity, [0xC6, 0x11]),
    ])
    func bareNumbers(payload: String, format: ValueFormat, bytes: [UInt8]) {
        let parsed = Self.parse(payload, format)
        #expect(parsed.error == nil, "\(payload) as \(format): \(String(describing: parsed.error))")
        #expect(parsed.command == WriteCommand(bytes: bytes))
    }

    @Test(arguments: [
        ("hello", "hello"),
        (#""abc""#, "abc"),
        (#""a\nb\u00e9""#, "a\nbé"),
        ("héllo wörld ✓", "héllo wörld ✓"),
        ("42", "42"),
        ("true", "true"),
        ("null", "null"),
        (" spaced ", " spaced "),
        ("   ", "   "),
        (#""abc"#, #""abc"#),  // not a complete JSON string: the text itself
        (#""a" "b""#, #""a" "b""#),
        ("[1,2]", "[1,2]"),
    ])
    func bareUTF8(payload: String, text: String) {
        #expect(Self.parse(payload, .utf8).command == WriteCommand(bytes: Array(text.utf8)))
    }

    @Test func bareHeartRateObject() {
        #expect(Self.parse(#"{"bpm":72}"#, .heartRateMeasurement).command == WriteCommand(bytes: [0x00, 72]))
        #expect(
            Self.parse(#"{"bpm":300,"contact":true,"energy":5,"rr":[1]}"#, .heartRateMeasurement).command
                == WriteCommand(bytes: [0x1F, 0x2C, 0x01, 0x05, 0x00, 0x00, 0x04]))
    }

    // MARK: - Accepted command objects

    @Test(arguments: [
        (#"{"raw":"01ff"}"#, ValueFormat.hex, [0x01, 0xFF] as [UInt8]),
        (#"{"value":"01 ff"}"#, .hex, [0x01, 0xFF]),
        (#"{"raw":""}"#, .hex, []),
        (#"{"raw":"2a"}"#, .uint8, [42]),
        (#"{"value":42}"#, .uint8, [42]),
        (#"{"value":513}"#, .uint16, [0x01, 0x02]),
        (#"{"value":-2}"#, .sint16, [0xFE, 0xFF]),
        (#"{"value":"héllo"}"#, .utf8, Array("héllo".utf8)),
        (#"{"value":""}"#, .utf8, []),
        (#"{"raw":"6869"}"#, .utf8, Array("hi".utf8)),
        (#"{"value":21.5}"#, .float32, [0x00, 0x00, 0xAC, 0x41]),
        (#"{"value":20}"#, .temperature, [0xD0, 0x07]),
        (#"{"value":{"bpm":72,"contact":true}}"#, .heartRateMeasurement, [0x06, 72]),
        (#"{"raw":"0048"}"#, .heartRateMeasurement, [0x00, 0x48]),
        (#" {"raw" : "01"} "#, .hex, [0x01]),
    ])
    func commandObject(payload: String, format: ValueFormat, bytes: [UInt8]) {
        let parsed = Self.parse(payload, format)
        #expect(parsed.error == nil, "\(payload): \(String(describing: parsed.error))")
        #expect(parsed.command == WriteCommand(bytes: bytes))
    }

    @Test func responseAndTransaction() throws {
        let parsed = Self.parse(#"{"raw":"01ff","response":false,"transaction":42}"#, .hex)
        #expect(parsed.command == WriteCommand(bytes: [0x01, 0xFF], response: false, transaction: .integer(42)))
        #expect(parsed.transaction == .integer(42))
        #expect(Self.parse(#"{"response":true,"raw":"01"}"#, .hex).command?.response == true)
        #expect(Self.parse(#"{"raw":"01","response":null}"#, .hex).command == WriteCommand(bytes: [1], response: nil))
        #expect(Self.parse(#"{"raw":"01"}"#, .hex).command?.response == nil)
    }

    @Test(arguments: [
        (#"42"#, JSONValue.integer(42)),
        (#"-2.5"#, .number(-2.5)),
        (#""abc-1""#, .string("abc-1")),
        (#"{"id":[1,"x",null],"n":{}}"#, .object(["id": .array([1, "x", .null]), "n": .object([:])])),
        (#"null"#, .null),
        (#"false"#, .bool(false)),
        (#"[]"#, .array([])),
    ] as [(String, JSONValue)])
    func transactionIsEchoedAsGiven(json: String, expected: JSONValue) {
        let ok = Self.parse(#"{"value":7,"transaction":\#(json)}"#, .uint8)
        #expect(ok.command?.transaction == .some(expected))
        #expect(ok.transaction == .some(expected))
        // Also on every kind of invalid command object.
        for invalid in [
            #"{"value":300,"transaction":\#(json)}"#,
            #"{"raw":"zz","transaction":\#(json)}"#,
            #"{"transaction":\#(json)}"#,
            #"{"transaction":\#(json),"bogus":1}"#,
            #"{"raw":"01","value":1,"transaction":\#(json)}"#,
            #"{"raw":"01","response":"yes","transaction":\#(json)}"#,
        ] {
            let parsed = Self.parse(invalid, .uint8)
            #expect(parsed.error?.code == .invalidPayload, "\(invalid)")
            #expect(parsed.transaction == .some(expected), "\(invalid)")
        }
    }

    @Test func noTransactionWithoutOne() {
        #expect(Self.parse(#"{"raw":"01"}"#, .hex).transaction == nil)
        #expect(Self.parse("01", .hex).transaction == nil)
        #expect(Self.parse(#"{"raw":"01","transaction":1"#, .hex).transaction == nil)  // invalid JSON
        #expect(Self.parse(#"{"bpm":72}"#, .heartRateMeasurement).transaction == nil)
    }

    // MARK: - Rejections

    /// Every rejection is `invalid_payload` with a message that says what is wrong.
    @Test(arguments: [
        // Empty payloads: an explicit {"raw":""} is needed to write zero bytes.
        ("", ValueFormat.hex, "empty payload"),
        ("  \n", .hex, "empty payload"),
        ("", .uint8, "empty payload"),
        (" ", .temperature, "empty payload"),
        ("", .utf8, "empty payload"),
        // Hex.
        ("01f", .hex, "odd number of digits"),
        ("0 1", .hex, "odd number of digits"),
        ("zz", .hex, "invalid hex digit at offset 0"),
        ("01:ff", .hex, "invalid hex digit"),
        (#""zz""#, .hex, "invalid hex digit"),
        (#""01"#, .hex, "neither hex text"),
        ("[1]", .hex, "not hex"),
        // Integers.
        ("256", .uint8, "out of range 0...255"),
        ("-1", .uint8, "out of range 0...255"),
        ("1.5", .uint8, "not an integer"),
        ("abc", .uint8, "must be an integer such as 42"),
        ("0x10", .uint8, "invalid JSON"),
        ("42abc", .uint8, "invalid JSON"),
        ("+5", .uint8, "invalid JSON"),
        (#""42""#, .uint8, "must be an integer, not string"),
        ("true", .uint8, "not boolean"),
        ("[1]", .uint8, "not array"),
        ("65536", .uint16, "out of range 0...65535"),
        ("-1", .uint16, "out of range"),
        ("32768", .sint16, "out of range -32768...32767"),
        ("-32769", .sint16, "out of range -32768...32767"),
        ("1.5", .sint16, "not an integer"),
        ("101", .batteryLevel, "out of range 0...100"),
        ("1e999", .uint8, "number out of range"),
        // Floats.
        ("1e39", .float32, "does not fit a float32"),
        ("abc", .float32, "must be a number such as 21.5"),
        (#""1""#, .float32, "expected a number, not string"),
        ("400", .temperature, "out of range"),
        ("-400", .temperature, "out of range"),
        ("abc", .temperature, "invalid JSON"),
        // UTF-8 text that starts like an object must be one.
        ("{not json", .utf8, "invalid JSON"),
        // SIG objects.
        ("72", .heartRateMeasurement, "expected an object"),
        (#"{"bpm":72,"response":true}"#, .heartRateMeasurement, #"unknown key "bpm""#),
        (#"{"bpm":"x"}"#, .heartRateMeasurement, "must be an integer"),
        // Command objects.
        ("{}", .hex, #"missing "raw" (hex bytes) or "value""#),
        (#"{"response":true}"#, .hex, "missing"),
        (#"{"raw":"01","value":"02"}"#, .hex, "not both"),
        (#"{"raw":1}"#, .hex, #""raw" must be a hex string such as "01ff", not number"#),
        (#"{"raw":null}"#, .hex, "not null"),
        (#"{"raw":["01"]}"#, .hex, "not array"),
        (#"{"raw":"0g"}"#, .hex, #""raw" is not hex: invalid hex digit at offset 1"#),
        (#"{"raw":"012"}"#, .hex, "odd number"),
        (#"{"raw":"01","response":"yes"}"#, .hex, #""response" must be true or false, not string"#),
        (#"{"raw":"01","response":1}"#, .hex, "not number"),
        (#"{"raw":"01","foo":1}"#, .hex, #"unknown key "foo" (allowed: "raw", "value", "response", "transaction")"#),
        (#"{"RAW":"01"}"#, .hex, #"unknown key "RAW""#),
        (#"{"raw":"01","raw":"02"}"#, .hex, #"duplicate key "raw""#),
        (#"{"value":300}"#, .uint8, #""value" does not fit format uint8: value 300 is out of range 0...255"#),
        (#"{"value":"42"}"#, .uint8, "not string"),
        (#"{"value":42}"#, .utf8, "expected a string, not number"),
        (#"{"value":42}"#, .hex, "expected a hex string"),
        (#"{"value":"zz"}"#, .hex, "invalid hex digit"),
        (#"{"value":1e39}"#, .float32, "does not fit a float32"),
        (#"{"value":{"bpm":72,"x":1}}"#, .heartRateMeasurement, #"unknown field "x""#),
        (#"{"raw":"01""#, .hex, "invalid JSON: unexpected end of input"),
        (#"{"raw":"01"} x"#, .hex, "invalid JSON: unexpected data after the value"),
        (#"{'raw':'01'}"#, .hex, "invalid JSON"),
    ])
    func rejects(payload: String, format: ValueFormat, message: String) {
        let parsed = Self.parse(payload, format)
        #expect(parsed.command == nil, "\(payload) as \(format) was accepted")
        #expect(parsed.error?.code == .invalidPayload)
        let actual = parsed.error?.message ?? ""
        #expect(actual.contains(message), "\(payload) as \(format): \(actual)")
    }

    @Test(arguments: [ValueFormat.hex, .uint8, .sint16, .float32, .temperature])
    func rejectsInvalidUTF8(format: ValueFormat) {
        for payload: [UInt8] in [[0xFF], [0xC3], [0x34, 0xC3], [0xED, 0xA0, 0x80], [0x22, 0xFF, 0x22]] {
            let parsed = WriteCommand.parse(payload, format: format)
            #expect(parsed.error?.code == .invalidPayload, "\(payload) as \(format)")
        }
    }

    @Test func rejectsInvalidUTF8Text() {
        for payload: [UInt8] in [[0xFF], [0x68, 0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]] {
            let parsed = WriteCommand.parse(payload, format: .utf8)
            #expect(parsed.error == CommandError(.invalidPayload, "payload is not valid UTF-8 (format utf8)"))
        }
        // A JSON string with invalid UTF-8 inside is rejected too.
        let object: [UInt8] = [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]
        #expect(WriteCommand.parse(object, format: .utf8).error?.code == .invalidPayload)
    }

    @Test func valueLengthLimit() {
        let maxHex = String(repeating: "ab", count: 512)
        #expect(Self.parse(maxHex, .hex).command?.bytes.count == 512)
        #expect(Self.parse(#"{"raw":"\#(maxHex)"}"#, .hex).command?.bytes.count == 512)
        let tooLong = maxHex + "cd"
        let message = "the value is 513 bytes; a characteristic value holds at most 512"
        #expect(Self.parse(tooLong, .hex).error == .invalidPayload(message))
        #expect(Self.parse(#"{"raw":"\#(tooLong)","transaction":1}"#, .hex).error == .invalidPayload(message))
        #expect(Self.parse(#"{"raw":"\#(tooLong)","transaction":1}"#, .hex).transaction == .integer(1))
        #expect(Self.parse(String(repeating: "x", count: 513), .utf8).error == .invalidPayload(message))
        #expect(Self.parse(String(repeating: "x", count: 512), .utf8).command?.bytes.count == 512)
    }

    @Test func payloadSizeLimit() {
        let big = [UInt8](repeating: 0x61, count: (1 << 20) + 1)
        for format in [ValueFormat.hex, .utf8, .uint8] {
            let parsed = WriteCommand.parse(big, format: format)
            #expect(parsed.error == .invalidPayload("payload too large: 1048577 bytes (at most 1048576)"))
        }
        // A big transaction within the limit is still echoed.
        let transaction = String(repeating: "t", count: 500_000)
        let parsed = Self.parse(#"{"raw":"01","transaction":"\#(transaction)"}"#, .hex)
        #expect(parsed.command?.transaction == .string(transaction))
    }

    @Test func longKeysAreShortenedInMessages() throws {
        let key = String(repeating: "k", count: 10_000)
        let message = try #require(Self.parse(#"{"\#(key)":1}"#, .hex).error?.message)
        #expect(message.hasPrefix("unknown key \"" + String(repeating: "k", count: 40) + "…\""))
        #expect(message.utf8.count < 200)
        let control = try #require(Self.parse(#"{"a\nb":1}"#, .hex).error?.message)
        #expect(control.hasPrefix(#"unknown key "a\nb""#))
    }

    @Test func deepJSONIsRejectedNotCrashing() {
        let deep = #"{"raw":"01","transaction":"# + String(repeating: "[", count: 100_000)
        #expect(Self.parse(deep, .hex).error?.message.contains("nesting too deep") == true)
        let deepNumber = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(Self.parse(deepNumber, .uint8).error?.code == .invalidPayload)
        let nested = String(repeating: #"{"a":"#, count: 60) + "1" + String(repeating: "}", count: 60)
        let ok = Self.parse(#"{"raw":"01","transaction":\#(nested)}"#, .hex)
        #expect(ok.command?.bytes == [0x01])
        #expect(ok.transaction?.jsonString == nested)
    }
}

/// `/get` payloads: anything goes; a JSON object may carry a transaction.
@Suite struct CommandReadParsingTests {
    @Test(arguments: [
        ("", nil as JSONValue?),
        ("anything", nil),
        ("42", nil),
        (#""x""#, nil),
        ("{}", nil),
        (#"{"transaction":42}"#, .integer(42)),
        (#" {"transaction":"abc","other":[1]} "#, .string("abc")),
        (#"{"transaction":null}"#, .some(.null)),
        (#"{"transaction":{"id":[1,2.5]}}"#, .object(["id": .array([1, 2.5])])),
        (#"{"transaction":42"#, nil),
        (#"[{"transaction":42}]"#, nil),
    ] as [(String, JSONValue?)])
    func transaction(payload: String, expected: JSONValue?) {
        #expect(ReadCommand.parse(Array(payload.utf8)) == ReadCommand(transaction: expected))
    }

    @Test func neverFails() {
        #expect(ReadCommand.parse([0xFF, 0x7B]).transaction == nil)
        #expect(ReadCommand.parse([0x7B, 0xFF]).transaction == nil)
        #expect(ReadCommand.parse(Array(String(repeating: "{", count: 100_000).utf8)).transaction == nil)
        #expect(ReadCommand.parse([UInt8](repeating: 0x7B, count: (1 << 20) + 1)).transaction == nil)
    }
}
