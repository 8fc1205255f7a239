import Testing

@testable import BridgeCore

/// The struct decode of SPEC §15: every code in both byte orders, floats, text, transforms, and
/// the payloads and field lists it refuses. Expected values are Python's `struct.unpack_from`.
@Suite struct ProfileStructTests {
    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    /// The values of `payload` under `format`, fields named a, b, c... without transforms.
    static func values(_ format: String, _ payload: String, _ transforms: [ProfileFieldTransform] = []) throws -> [JSONValue] {
        let layout = try ProfileStructLayout(format)
        let fields = layout.items.indices.map { index in
            ProfileStruct.Field("v\(index)", index < transforms.count ? transforms[index] : .none)
        }
        return try ProfileStruct(layout: layout, fields: fields).decode(bytes(payload)).map(\.value)
    }

    static let tenth = ProfileFieldTransform.scale(numerator: 1, denominator: 10)
    static let hundredth = ProfileFieldTransform.scale(numerator: 1, denominator: 100)

    /// `b B h H i I q Q` little endian: -1, 255, -2, 0x1234, -3, 0x12345678, -4, 2^63 + 1 (above
    /// Int64.max: a number).
    @Test func integersLittleEndian() throws {
        let payload = "ff ff feff 3412 fdffffff 78563412 fcffffffffffffff 0100000000000080"
        #expect(try Self.values("<bBhHiIqQ", payload) == [
            -1, 255, -2, 4660, -3, 305_419_896, -4, .number(9_223_372_036_854_775_809.0),
        ])
    }

    @Test func integersBigEndian() throws {
        let payload = "ff ff fffe 1234 fffffffd 12345678 fffffffffffffffc 8000000000000001 7fffffffffffffff"
        let expected: [JSONValue] = [-1, 255, -2, 4660, -3, 305_419_896, -4, .number(9_223_372_036_854_775_809.0), .integer(.max)]
        #expect(try Self.values(">bBhHiIqQQ", payload) == expected)
        #expect(try Self.values("!bBhHiIqQQ", payload) == expected)
    }

    /// `l`/`L` are 4 bytes (Python's standard size), `=` is little endian.
    @Test func longsAndNativeOrder() throws {
        #expect(try Self.values("=lL", "feffffff 01000080") == [-2, 2_147_483_649])
        #expect(try Self.values("<hH", "0080 ffff") == [-32768, 65535])
        #expect(try Self.values("<iI", "00000080 ffffffff") == [-2_147_483_648, 4_294_967_295])
        #expect(try Self.values("<q", "0000000000000080") == [.integer(.min)])
    }

    /// IEEE half floats: 0x3C00 is 1.0 in both byte orders; values print with the fewest decimals
    /// that give back the same half (0x5555 is 85.3125, read back from 85.3); inf and NaN are null.
    @Test func halfFloats() throws {
        #expect(try Self.values("<e", "003c") == [1.0])
        #expect(try Self.values(">e", "3c00") == [1.0])
        #expect(try Self.values("<e", "00c0") == [-2.0])
        #expect(try Self.values("<e", "0038") == [0.5])
        #expect(try Self.values("<e", "5555") == [85.3])
        #expect(try Self.values("<e", "ffbb") == [-0.9995])
        #expect(try Self.values("<e", "0100") == [6e-08])
        #expect(try Self.values("<e", "ff7b") == [65504.0])
        #expect(try Self.values("<eee", "007c 00fc ffff") == [nil, nil, nil])
    }

    /// Floats print as their shortest text (0.58, not 0.5799999833106995); doubles are exact.
    @Test func floatsAndDoubles() throws {
        #expect(try Self.values("<f", "0000c03f") == [1.5])
        #expect(try Self.values(">f", "3fc00000") == [1.5])
        #expect(try Self.values("<f", "e17a143f") == [0.58])
        #expect(try Self.values("<f", "cdcccc3d") == [0.1])
        #expect(try Self.values("<f", "0000807f") == [nil])
        #expect(try Self.values("<f", "ffff7f7f") == [.number(Double(Float.greatestFiniteMagnitude))])
        #expect(try Self.values("<d", "9a9999999999b93f") == [0.1])
        #expect(try Self.values(">d", "3ff8000000000000") == [1.5])
    }

    /// `?` is true for any non-zero byte, as in Python.
    @Test func booleans() throws {
        #expect(try Self.values("<???", "00 01 02") == [false, true, true])
    }

    /// Text loses its trailing NULs; invalid UTF-8 is the hex of the bytes; `0s` is empty.
    @Test func text() throws {
        #expect(try Self.values("<5s", "68656c6c6f") == ["hello"])
        #expect(try Self.values("<6s", "616263000000") == ["abc"])
        #expect(try Self.values("<4s", "00000000") == [""])
        #expect(try Self.values("<3s", "c3a961") == ["éa"])
        #expect(try Self.values("<2s", "fffe") == ["fffe"])
        #expect(try Self.values("<0sB", "07") == ["", 7])
        #expect(try Self.values("<sB", "4107") == ["A", 7])
    }

    /// Scales as one exact division: 215 `/10` is 21.5, 2149 `*0.01` 21.49; `*2` a number.
    @Test func scales() throws {
        #expect(try Self.values("<hh", "d700 29ff", [Self.tenth, Self.tenth]) == [21.5, -21.5])
        #expect(try Self.values("<H", "6508", [Self.hundredth]) == [21.49])
        #expect(try Self.values("<H", "6508", [ProfileFieldTransform.parse("/100")]) == [21.49])
        #expect(try Self.values("<H", "6508", [ProfileFieldTransform.parse("*0.01")]) == [21.49])
        #expect(try Self.values("<B", "15", [ProfileFieldTransform.parse("*2")]) == [.number(42)])
        #expect(try Self.values("<B", "15", [ProfileFieldTransform.parse("/0.5")]) == [.number(42)])
        #expect(try Self.values("<b", "15", [ProfileFieldTransform.parse("*-1")]) == [.number(-21)])
        #expect(try Self.values("<H", "a20b", [ProfileFieldTransform.parse("/1000")]) == [2.978])
        // A float's decimals are scaled: 0.58 × 37 is 21.46, not 21.459999999999997.
        #expect(try Self.values("<f", "e17a143f", [ProfileFieldTransform.parse("*37")]) == [21.46])
        #expect(try Self.values("<e", "003c", [Self.tenth]) == [0.1])
    }

    /// A scaled float that leaves the doubles is null, as an infinite float is, never an infinite
    /// number (which JSON cannot carry); one that only the product overflows is scaled
    /// (scripts/fuzz profile-decode found `!d` `*2` of the largest double giving infinity).
    @Test func scaledFloatsStayFinite() throws {
        #expect(try Self.values("!d", "7fefffffffffffff", [ProfileFieldTransform.parse("*2")]) == [nil])
        #expect(try Self.values("!d", "ffefffffffffffff", [ProfileFieldTransform.parse("*-1.5")]) == [nil])
        let largest = Double.greatestFiniteMagnitude
        #expect(try Self.values("!d", "7fefffffffffffff", [ProfileFieldTransform.parse("*0.1")]) == [.number(largest / 10)])
        #expect(try Self.values("!d", "7fefffffffffffff", [.scale(numerator: 10, denominator: 100)]) == [.number(largest / 100 * 10)])
    }

    /// A map names integers; an integer it does not name stays an integer.
    @Test func maps() throws {
        let onOff = ProfileFieldTransform.map([0: "off", 1: "on"])
        #expect(try Self.values("<BBB", "01 00 07", [onOff, onOff, onOff]) == ["on", "off", 7])
        #expect(try Self.values("<b", "ff", [.map([-1: "unknown"])]) == ["unknown"])
    }

    /// The text form of transforms.
    @Test func transformParsing() throws {
        #expect(try ProfileFieldTransform.parse("") == .none)
        #expect(try ProfileFieldTransform.parse("  ") == .none)
        #expect(try ProfileFieldTransform.parse("/10") == .scale(numerator: 1, denominator: 10))
        #expect(try ProfileFieldTransform.parse(" /10 ") == .scale(numerator: 1, denominator: 10))
        #expect(try ProfileFieldTransform.parse("*0.01") == .scale(numerator: 1, denominator: 100))
        #expect(try ProfileFieldTransform.parse("/100") == .scale(numerator: 1, denominator: 100))
        #expect(try ProfileFieldTransform.parse("*2") == .scale(numerator: 2, denominator: 1))
        #expect(try ProfileFieldTransform.parse("*12.5") == .scale(numerator: 25, denominator: 2))
        #expect(try ProfileFieldTransform.parse("/0.5") == .scale(numerator: 2, denominator: 1))
        #expect(try ProfileFieldTransform.parse("*-1") == .scale(numerator: -1, denominator: 1))
        #expect(try ProfileFieldTransform.parse("*.5") == .scale(numerator: 1, denominator: 2))
    }

    @Test(arguments: [
        ("10", 1, "a scale such as"),
        ("+10", 1, "a scale such as"),
        ("/", 2, "needs a number"),
        ("/-", 3, "needs a number"),
        ("/0", 2, "division by zero"),
        ("*0.00", 2, "a scale of 0"),
        ("/1x", 3, "'x' in a scale"),
        ("/1.2.3", 5, "'.' in a scale"),
        ("/10 x", 5, "unexpected text"),
        ("*1234567890123456789", 2, "too many digits"),
    ])
    func badTransforms(text: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileFieldTransform.parse(text) }
        #expect(error.code == .badTransform)
        #expect(error.column == column)
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// A transform its value cannot take is refused when compiled.
    @Test(arguments: [
        ("<4s", ProfileFieldTransform.scale(numerator: 1, denominator: 10), "a scale applies only to numbers"),
        ("<?", .scale(numerator: 1, denominator: 10), "a scale applies only to numbers"),
        ("<f", .map([0: "off"]), "a map applies only to integers"),
        ("<?", .map([0: "off"]), "a map applies only to integers"),
        ("<4s", .map([0: "off"]), "a map applies only to integers"),
        ("<B", .scale(numerator: 1, denominator: 0), "not usable"),
        ("<B", .scale(numerator: 0, denominator: 1), "not usable"),
    ])
    func transformsThatDoNotFit(format: String, transform: ProfileFieldTransform, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: format, fields: [.init("x", transform)])
        }
        #expect(error.code == .badTransform)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.message.contains("'x'"))
    }

    /// The field count must equal the value count (pad bytes have no value); the error names both.
    @Test func fieldCountMismatch() throws {
        let few = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<hxIBh6x", fields: [.init("temperature"), .init("illuminance"), .init("moisture")])
        }
        #expect(few.code == .fieldCount)
        #expect(few.message.contains("has 4 values"), "\(few.message)")
        #expect(few.message.contains("3 fields are named"), "\(few.message)")
        let many = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<B", fields: [.init("a"), .init("b")])
        }
        #expect(many.message.contains("has 1 value ") && many.message.contains("2 fields"), "\(many.message)")
        let none = try #require(throws: ProfileCodecError.self) { try ProfileStruct(format: "<3B", fields: []) }
        #expect(none.code == .fieldCount)
    }

    @Test func fieldNames() throws {
        let twice = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<BB", fields: [.init("battery"), .init("battery")])
        }
        #expect(twice.code == .badField)
        #expect(twice.message.contains("'battery' is named twice"))
        let empty = try #require(throws: ProfileCodecError.self) { try ProfileStruct(format: "<B", fields: [.init("")]) }
        #expect(empty.code == .badField)
    }

    /// A payload shorter than the struct is refused with both lengths; bytes after it are ignored.
    @Test func payloadLength() throws {
        let decode = try ProfileStruct(format: "<hxIBh6x", fields: [.init("t"), .init("l"), .init("m"), .init("c")])
        #expect(decode.size == 16)
        let short = try #require(throws: ProfileCodecError.self) { try decode.decode(Array(repeating: 0, count: 15)) }
        #expect(short.code == .tooShort)
        #expect(short.message.contains("payload of 15 bytes"), "\(short.message)")
        #expect(short.message.contains("needs 16"), "\(short.message)")
        #expect(short.column == 0)
        let empty = try #require(throws: ProfileCodecError.self) { try decode.decode([]) }
        #expect(empty.code == .tooShort)
        let long = try decode.decode(Self.bytes("2501 00 f7260000 28 0e01 000000000000 ffffffff"))
        #expect(JSONValue.object(long).jsonString == #"{"t":293,"l":9975,"m":40,"c":270}"#)
    }

    /// `decode(_:into:)` appends, and leaves the object alone when it refuses the payload.
    @Test func decodeIntoAppends() throws {
        let battery = try ProfileStruct(format: "<B", fields: [.init("battery")])
        var values: JSONObject = ["temperature": 21.5]
        try battery.decode([0x64], into: &values)
        #expect(JSONValue.object(values).jsonString == #"{"temperature":21.5,"battery":100}"#)
        #expect(throws: ProfileCodecError.self) { try battery.decode([], into: &values) }
        #expect(values.count == 2)
    }
}
