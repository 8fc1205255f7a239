import Testing

@testable import BridgeCore

/// Write templates of SPEC §15 steps and commands: fixed hex, `{unix}`, options and parameters
/// through each conversion, and the templates, parameters and options refused.
@Suite struct ProfileTemplateTests {
    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    static func render(
        _ text: String, unixTime: Int64 = 0, options: [String: String] = [:], parameters: [String: JSONValue] = [:]
    ) throws -> String {
        let template = try ProfileTemplate(text)
        let bytes = try template.render(.init(unixTime: unixTime, options: options, parameters: parameters))
        #expect(bytes.count == template.size)
        return Hex.encode(bytes)
    }

    @Test func fixedHex() throws {
        #expect(try Self.render("a01f") == "a01f")
        #expect(try Self.render("A0 1F") == "a01f")
        #expect(try Self.render(" 57\t01 00 ") == "570100")
        #expect(try Self.render("") == "")
        #expect(try ProfileTemplate("a01f").parameters.isEmpty)
    }

    /// Each integer conversion, at both ends of its range.
    @Test(arguments: [
        ("u8", 0 as Int64, "00"), ("u8", 255, "ff"), ("i8", -1, "ff"), ("i8", -128, "80"), ("i8", 127, "7f"),
        ("u16le", 0x1234, "3412"), ("u16be", 0x1234, "1234"), ("u16le", 65535, "ffff"),
        ("i16le", -2, "feff"), ("i16be", -2, "fffe"), ("i16le", -32768, "0080"), ("i16be", 32767, "7fff"),
        ("u32le", 0x1234_5678, "78563412"), ("u32be", 0x1234_5678, "12345678"), ("u32le", 4_294_967_295, "ffffffff"),
        ("i32le", -3, "fdffffff"), ("i32be", -3, "fffffffd"), ("i32le", -2_147_483_648, "00000080"),
    ])
    func integerConversions(conversion: String, value: Int64, hex: String) throws {
        #expect(try Self.render("aa{v|\(conversion)}bb", parameters: ["v": .integer(value)]) == "aa\(hex)bb")
    }

    /// A parameter out of its conversion's range is refused, naming it and the range.
    @Test(arguments: [
        ("u8", 300 as Int64, "0…255"), ("u8", -1, "0…255"), ("i8", 128, "-128…127"), ("i8", -129, "-128…127"),
        ("u16le", 65536, "0…65535"), ("u16be", -1, "0…65535"), ("i16le", -32769, "-32768…32767"),
        ("i16be", 32768, "-32768…32767"), ("u32le", 4_294_967_296, "0…4294967295"), ("u32be", -1, "0…4294967295"),
        ("i32le", 2_147_483_648, "-2147483648…2147483647"),
    ])
    func outOfRange(conversion: String, value: Int64, range: String) throws {
        let error = try #require(throws: ProfileCodecError.self) {
            try Self.render("{position|\(conversion)}", parameters: ["position": .integer(value)])
        }
        #expect(error.code == .invalidParameter)
        #expect(error.commandErrorCode == .invalidPayload)
        #expect(error.message == "parameter 'position' is \(value): out of range for \(conversion) (\(range))")
    }

    /// An integer conversion takes a JSON number without a fraction, nothing else.
    @Test func parameterTypes() throws {
        #expect(try Self.render("{position|u8}", parameters: ["position": 40.0]) == "28")
        let cases: [(JSONValue, String)] = [
            ("40", "parameter 'position' is a string: u8 takes an integer in 0…255"),
            (40.5, "parameter 'position' is 40.5: u8 takes an integer in 0…255"),
            (true, "parameter 'position' is a boolean: u8 takes an integer in 0…255"),
            (nil, "parameter 'position' is null: u8 takes an integer in 0…255"),
            ([1], "parameter 'position' is an array: u8 takes an integer in 0…255"),
        ]
        for (value, message) in cases {
            let error = try #require(throws: ProfileCodecError.self) {
                try Self.render("{position|u8}", parameters: ["position": value])
            }
            #expect(error.code == .invalidParameter)
            #expect(error.message == message)
        }
        let missing = try #require(throws: ProfileCodecError.self) { try Self.render("45{position|u8}", parameters: ["pos": 4]) }
        #expect(missing.code == .missingParameter)
        #expect(missing.commandErrorCode == .invalidPayload)
        #expect(missing.message == "parameter 'position' is missing: the command's payload needs it (u8 takes an integer in 0…255)")
    }

    /// CRC-32/ISO-HDLC's check value, and SwitchBot's password CRCs (crc32("1234") = 9be3e0a3).
    @Test func crc32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("1234".utf8)) == 0x9BE3_E0A3)
        #expect(CRC32.checksum(Array("1235".utf8)) == 0xECE4_D035)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
    }

    /// SwitchBot Bot press with a password (PSB's form `57 11 CRC 00`; the app's capture
    /// `57 11 9B E3 E0 A3` for password 1234), and the captured password change 1235 → 1234.
    @Test func switchBotPassword() throws {
        #expect(try Self.render("5711{options.password|crc32be}00", options: ["password": "1234"]) == "57119be3e0a300")
        #expect(try Self.render("5711{options.password|crc32le}", options: ["password": "1234"]) == "5711a3e0e39b")
        #expect(try Self.render("57 11 {options.password|crc32be}", options: ["password": "123456789"]) == "5711cbf43926")
        #expect(
            try Self.render("5717{options.old|crc32be}0104{options.password|crc32be}0000",
                options: ["old": "1235", "password": "1234"])
                == Hex.encode(Self.bytes("57 17 EC E4 D0 35 01 04 9B E3 E0 A3 00 00")))
        // A CRC of a parameter takes a string.
        #expect(try Self.render("{code|crc32be}", parameters: ["code": "1234"]) == "9be3e0a3")
        let number = try #require(throws: ProfileCodecError.self) { try Self.render("{code|crc32be}", parameters: ["code": 1234]) }
        #expect(number.message == "parameter 'code' is 1234: crc32be takes a string")
    }

    /// `{unix}` is the wall time passed in, u32 little endian unless converted otherwise.
    @Test func unixTime() throws {
        #expect(try Self.render("03{unix}", unixTime: 1_694_498_816) == "0300000065")
        #expect(try Self.render("{unix}", unixTime: 1_764_331_200) == "c08e2969")
        #expect(try Self.render("{unix|u32be}", unixTime: 0x0102_0304) == "01020304")
        #expect(try Self.render("{unix|i32le}", unixTime: 1) == "01000000")
        for time: Int64 in [-1, 4_294_967_296] {
            let error = try #require(throws: ProfileCodecError.self) { try Self.render("{unix}", unixTime: time) }
            #expect(error.code == .invalidTime)
            #expect(error.commandErrorCode == nil)
        }
    }

    /// Integer conversions of an option read its decimal text (an AM43 pin).
    @Test func options() throws {
        #expect(try Self.render("17{options.pin|u16le}", options: ["pin": "8888"]) == "17b822")
        let text = try #require(throws: ProfileCodecError.self) { try Self.render("{options.pin|u16le}", options: ["pin": "88a"]) }
        #expect(text.code == .invalidOption)
        #expect(text.message == #"option 'pin' is "88a": u16le takes an integer in 0…65535"#)
        let big = try #require(throws: ProfileCodecError.self) { try Self.render("{options.pin|u8}", options: ["pin": "256"]) }
        #expect(big.code == .invalidOption)
        let missing = try #require(throws: ProfileCodecError.self) { try Self.render("5711{options.password|crc32be}") }
        #expect(missing.code == .missingOption)
        #expect(missing.message == "option 'password' is not set: add it to the device's profile_options")
        #expect(missing.commandErrorCode == nil)
    }

    /// The compiled template names what it needs, each once in order of first use, and its size.
    @Test func needs() throws {
        let template = try ProfileTemplate("{a|u8}{options.p|crc32be}{a|u16le} {b|u8}{options.q|u8}{options.p|crc32le}{unix}")
        #expect(template.parameters == ["a", "b"])
        #expect(template.options == ["p", "q"])
        #expect(template.size == 1 + 4 + 2 + 1 + 1 + 4 + 4)
        #expect(template.placeholders.map(\.column) == [1, 7, 26, 36, 42, 56, 75])
        #expect(template.placeholders.map(\.source) == [
            .parameter("a"), .option("p"), .parameter("a"), .parameter("b"), .option("q"), .option("p"), .unix,
        ])
        #expect(template.placeholders.last?.conversion == .u32le)
        let rendered = try template.render(.init(
            unixTime: 1, options: ["p": "1234", "q": "7"], parameters: ["a": 1, "b": 2]))
        #expect(Hex.encode(rendered) == "01" + "9be3e0a3" + "0100" + "02" + "07" + "a3e0e39b" + "01000000")
    }

    /// Malformed templates, with the column a loader turns into `file:line:column`.
    @Test(arguments: [
        ("a0{", 3, "'{' is never closed"),
        ("a0}", 3, "'}' without a '{'"),
        ("a0{x{y}", 5, "'{' inside the placeholder opened at column 3"),
        ("a0{}", 3, "empty placeholder"),
        ("a0{position}", 3, "{position} needs a conversion, such as {position|u8}"),
        ("a0{options.password}", 3, "needs a conversion"),
        ("a0{position|u12}", 13, "unknown conversion 'u12'"),
        ("a0{position|}", 13, "a conversion name is missing"),
        ("a0{position|u8|u8}", 15, "one conversion"),
        ("a0{unix|crc32be}", 9, "{unix} is a number"),
        ("a01", 3, "odd number of hex digits"),
        ("a 01", 1, "odd number of hex digits"),
        ("a0 1{x|u8}", 4, "odd number of hex digits"),
        ("a0zz", 3, "'z' is neither a hex digit nor a placeholder"),
        ("0xa0", 2, "'x' is neither"),
        ("{opts.x|u8}", 2, "'opts.x' is not a source"),
        ("{options.|u8}", 10, "an option name is missing"),
        ("{|u8}", 2, "a name is missing"),
        ("{9lives|u8}", 2, "'9' in a name"),
        ("{pos ition|u8}", 5, "' ' in a name"),
        ("{options.pass-word|crc32be}", 14, "'-' in a name"),
        ("a0é", 3, "'é' is neither"),
    ])
    func malformed(text: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileTemplate(text) }
        #expect(error.code == .badTemplate)
        #expect(error.column == column, "\(error)")
        #expect(error.message.contains(message), "\(error.message)")
    }
}
