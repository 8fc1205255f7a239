import Testing

@testable import BridgeCore

/// The template additions of issue 31 (design §4.1–4.3): `{xor8}` (AM43), arithmetic
/// (`{100-position|u8}`, eQ-3's `*2`) and the local date and time (eQ-3's clock), on the research
/// vectors (/work/notes/profiles-research-B.md §3.3, §4.3).
@Suite struct ProfileTemplateExtensionTests {
    static func render(
        _ text: String, unixTime: Int64 = 0, utcOffset: Int32 = 0, options: [String: String] = [:],
        parameters: [String: JSONValue] = [:]
    ) throws -> String {
        let template = try ProfileTemplate(text)
        let bytes = try template.render(
            .init(unixTime: unixTime, utcOffset: utcOffset, options: options, parameters: parameters))
        #expect(bytes.count == template.size)
        return Hex.encode(bytes)
    }

    static func renderError(_ text: String, parameters: [String: JSONValue] = [:], options: [String: String] = [:])
        throws -> ProfileCodecError
    {
        try #require(throws: ProfileCodecError.self) { try render(text, options: options, parameters: parameters) }
    }

    // MARK: xor8

    /// AM43 frames: the XOR of every byte from `9a` on (captured: close, open, stop; computed: the pin).
    @Test func am43Checksums() throws {
        let position = "00ff0000 9a0d01 {100-position|u8} {xor8|from=4}"
        #expect(try Self.render(position, parameters: ["position": 0]) == "00ff00009a0d0164f2")
        #expect(try Self.render(position, parameters: ["position": 100]) == "00ff00009a0d010096")
        #expect(try Self.render("00ff00009a0a01cc{xor8|from=4}") == "00ff00009a0a01cc5d")
        #expect(try Self.render("00ff00009aa70101{xor8|from=4}") == "00ff00009aa701013d")
        #expect(
            try Self.render("00ff0000 9a 17 02 {options.pin|u16be} {xor8|from=4}", options: ["pin": "8888"])
                == "00ff00009a170222b815")
        // Without from, every byte before it: B2M's frame without the prefix.
        #expect(try Self.render("9a0d0164{xor8}") == "9a0d0164f2")
        // ESPHome's form: XOR over the prefix too, which is the same byte ^ 0xff.
        #expect(try Self.render("00ff00009a0d0164{xor8}") == "00ff00009a0d01640d")
        #expect(try Self.render("{xor8}") == "00")
        let template = try ProfileTemplate("00ff0000 9a0d01 {100-position|u8} {xor8|from=4}")
        #expect(template.placeholders.map(\.source) == [.parameter("position"), .xor8(from: 4)])
        #expect(template.parameters == ["position"])
        #expect(template.size == 9)
    }

    // MARK: arithmetic

    /// eQ-3 temperatures and offsets (HECK's captures: `41 2d` is 22.5 °C, `11 2b 23` 21.5 / 17.5).
    @Test func eq3Arithmetic() throws {
        let target = "41{temperature*2|u8}"
        #expect(try Self.render(target, parameters: ["temperature": 22.5]) == "412d")
        #expect(try Self.render(target, parameters: ["temperature": 21.5]) == "412b")
        #expect(try Self.render(target, parameters: ["temperature": 21]) == "412a")
        #expect(try Self.render(target, parameters: ["temperature": 4.5]) == "4109")
        #expect(try Self.render(target, parameters: ["temperature": 30]) == "413c")
        #expect(
            try Self.render("11{comfort*2|u8}{eco*2|u8}", parameters: ["comfort": 21.5, "eco": 17.5]) == "112b23")
        let offset = "13{offset*2+7|u8}"
        #expect(try Self.render(offset, parameters: ["offset": -3.5]) == "1300")
        #expect(try Self.render(offset, parameters: ["offset": 0]) == "1307")
        #expect(try Self.render(offset, parameters: ["offset": 3.5]) == "130e")
        // A decimal as written: 20.1 × 10 is 201, though the double 20.1 is not exactly 201/10.
        #expect(try Self.render("{t*10|u16le}", parameters: ["t": 20.1]) == "c900")
        #expect(try Self.render("{position/2|u8}", parameters: ["position": 64]) == "20")
        #expect(try Self.render("{200-position*2-1|u8}", parameters: ["position": 10]) == "b3")
        #expect(try Self.render("{options.pin+1|u16be}", options: ["pin": "8887"]) == "22b8")
        #expect(try Self.render("{now.hour*2+1|u8}", unixTime: 21 * 3600 + 30 * 60) == "2b")
        let template = try ProfileTemplate("{offset*2+7|u8}")
        #expect(
            template.placeholders.first?.arithmetic
                == ProfileAffine(negate: false, numerator: 2, denominator: 1, offset: 7, text: "offset*2+7"))
        #expect(try ProfileTemplate("{100-position|u8}").placeholders.first?.arithmetic?.negate == true)
        #expect(try ProfileTemplate("{position|u8}").placeholders.first?.arithmetic == nil)
    }

    /// A result with a fraction or out of the conversion's range is the payload's fault
    /// (`invalid_payload`), the message naming the parameter and the arithmetic.
    @Test func arithmeticRefusals() throws {
        let cases: [(String, JSONValue, ProfileCodecError.Code, String)] = [
            ("41{temperature*2|u8}", 21.3, .invalidParameter,
             "parameter 'temperature' is 21.3: temperature*2 is not a whole number, which u8 needs"),
            ("{position/2|u8}", 3, .invalidParameter, "parameter 'position' is 3: position/2 is not a whole number, which u8 needs"),
            ("{100-position|u8}", 120, .invalidParameter,
             "parameter 'position' is 120: 100-position is -20, out of range for u8 (0…255)"),
            ("{100-position|u8}", "50", .invalidParameter,
             "parameter 'position' is a string: 100-position takes a number and gives an integer in 0…255 for u8"),
        ]
        for (text, value, code, message) in cases {
            let name = text.contains("temperature") ? "temperature" : "position"
            let error = try Self.renderError(text, parameters: [name: value])
            #expect(error.code == code)
            #expect(error.commandErrorCode == .invalidPayload)
            #expect(error.message == message)
        }
        let huge = try Self.renderError("{temperature*2|u8}", parameters: ["temperature": 1e300])
        #expect(huge.code == .invalidParameter)
        #expect(huge.message.hasSuffix("temperature*2 takes a number and gives an integer in 0…255 for u8"))
        let missing = try Self.renderError("{100-position|u8}")
        #expect(missing.code == .missingParameter)
        #expect(missing.commandErrorCode == .invalidPayload)
        let option = try Self.renderError("{options.pin*2|u8}", options: ["pin": "200"])
        #expect(option.code == .invalidOption)
        #expect(option.message == "option 'pin' is 200: options.pin*2 is 400, out of range for u8 (0…255)")
        #expect(option.commandErrorCode == nil)
    }

    // MARK: local date and time

    /// eQ-3's clock write (HECK: `03 11 02 08 15 1f 05` = 2017-02-08 21:31:05 local time), here at
    /// UTC+1 and UTC-5.
    @Test func eq3Clock() throws {
        let clock = "03{now.year2|u8}{now.month|u8}{now.day|u8}{now.hour|u8}{now.minute|u8}{now.second|u8}"
        let utc: Int64 = 1_486_589_465  // 2017-02-08 21:31:05 UTC
        #expect(try Self.render(clock, unixTime: utc) == "0311020815" + "1f05")
        #expect(try Self.render(clock, unixTime: utc - 3600, utcOffset: 3600) == "03110208151f05")
        #expect(try Self.render(clock, unixTime: utc + 5 * 3600, utcOffset: -5 * 3600) == "03110208151f05")
        // u8 is the default conversion of now.*.
        #expect(try Self.render("03{now.year2}{now.month}{now.day}{now.hour}{now.minute}{now.second}", unixTime: utc) == "03110208151f05")
        #expect(try ProfileTemplate("{now.day}").placeholders.first?.source == .now(.day))
    }

    /// Calendar edges: leap days, century rules, before 1970, offsets across midnight and new year.
    @Test(arguments: [
        (0 as Int64, 0 as Int32, 1970 as Int64, 1 as Int64, 1 as Int64, 0 as Int64, 0 as Int64, 0 as Int64),
        (-1, 0, 1969, 12, 31, 23, 59, 59),
        (951_782_400, 0, 2000, 2, 29, 0, 0, 0),
        (1_709_251_199, 0, 2024, 2, 29, 23, 59, 59),
        (1_709_251_200, 0, 2024, 3, 1, 0, 0, 0),
        (4_107_542_400, 0, 2100, 3, 1, 0, 0, 0),  // 2100 is not a leap year: Feb 28 → Mar 1
        (4_107_542_399, 0, 2100, 2, 28, 23, 59, 59),
        (1_735_686_000, 3600, 2025, 1, 1, 0, 0, 0),  // 2024-12-31 23:00 UTC at UTC+1
        (1_735_689_600, -1800, 2024, 12, 31, 23, 30, 0),
        (-2_208_988_800, 0, 1900, 1, 1, 0, 0, 0),
    ])
    func calendar(
        unix: Int64, offset: Int32, year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64
    ) throws {
        let local = try #require(ProfileLocalTime(unixTime: unix, utcOffset: offset))
        #expect([local.year, local.month, local.day, local.hour, local.minute, local.second]
            == [year, month, day, hour, minute, second])
        #expect(local[.year2] == year % 100)
    }

    // MARK: malformed

    /// Malformed additions, with the column a loader turns into `file:line:column`.
    @Test(arguments: [
        ("{100-|u8}", 6, "a name is missing after '-'"),
        ("{position*|u8}", 11, "'*' needs a whole number after it"),
        ("{position/0|u8}", 11, "division by zero"),
        ("{position*0|u8}", 11, "a factor of 0"),
        ("{position*2*3|u8}", 12, "unexpected '*'"),
        ("{temperature*2.5|u8}", 15, "unexpected '.'"),
        ("{100-position|crc32be}", 15, "100-position is arithmetic"),
        ("{xor8|u8}", 7, "it takes no conversion"),
        ("{xor8|from=x}", 12, "from= needs a whole number"),
        ("{xor8|from=2x}", 13, "from= takes a byte offset"),
        ("00{xor8|from=3}", 3, "from is at most 1"),
        ("{xor8+1}", 2, "{xor8} takes no arithmetic"),
        ("{now.week|u8}", 6, "'now.week' is not a date or time"),
        ("{now.hour|crc32be}", 11, "{now.hour} is a number"),
        ("{position+99999999999999999999|u8}", 11, "too large"),
        ("{9lives+1|u8}", 2, "'9' in a name"),
    ])
    func malformed(text: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileTemplate(text) }
        #expect(error.code == .badTemplate)
        #expect(error.column == column, "\(error)")
        #expect(error.message.contains(message), "\(error.message)")
    }
}
