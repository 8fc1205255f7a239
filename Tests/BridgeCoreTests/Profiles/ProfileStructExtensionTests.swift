import Testing

@testable import BridgeCore

/// The decode additions of issue 31 (design §4.5–4.7): bit masks and `bits:` (eQ-3's mode byte,
/// AM43's `a7` flags), sentinels and valid ranges (iBBQ's unplugged probe, Airthings' 0xFFFF),
/// and repetition (iBBQ's 2, 4 or 6 probes), on the research vectors
/// (/work/notes/profiles-research-A.md §3.3, -B.md §3.4, §4.4, §5.3).
@Suite struct ProfileStructExtensionTests {
    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    static func decode(_ decode: ProfileStruct, _ hex: String) throws -> String {
        JSONValue.object(try decode.decode(bytes(hex))).jsonString
    }

    // MARK: bits

    @Test func parseMasks() throws {
        #expect(try ProfileFieldTransform.parse("&0x03") == .bits(mask: 3, asBool: false))
        #expect(try ProfileFieldTransform.parse("&0x20?") == .bits(mask: 0x20, asBool: true))
        #expect(try ProfileFieldTransform.parse(" &0XF0 ") == .bits(mask: 0xf0, asBool: false))
        #expect(try ProfileFieldTransform.parse("&4?") == .bits(mask: 4, asBool: true))
        #expect(try ProfileFieldTransform.parse("&0xffffffffffffffff") == .bits(mask: .max, asBool: false))
    }

    @Test(arguments: [
        ("& 0x01", 2, "needs a mask"),
        ("&0x", 4, "needs a mask"),
        ("&?", 2, "needs a mask"),
        ("&0", 2, "a mask of 0"),
        ("&0x00?", 2, "a mask of 0"),
        ("&0xg1", 4, "'g' in a mask"),
        ("&1a", 3, "'a' in a mask"),
        ("&0x20??", 7, "unexpected text"),
        ("&0x1ffffffffffffffff", 2, "wider than 64 bits"),
    ])
    func badMasks(text: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileFieldTransform.parse(text) }
        #expect(error.code == .badTransform)
        #expect(error.column == column, "\(error)")
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// eQ-3 status `02 01 MODE VALVE 04 TARGET`: the mode byte's flags by name (EQ3BT's fixtures
    /// and HECK's captures), the byte itself not published.
    static let eq3Status = try! ProfileStruct(
        format: "<2xBBxB",
        fields: [.init("_mode"), .init("valve"), .init("target_temperature", .scale(numerator: 1, denominator: 2))],
        bits: [
            .init(field: "_mode", values: [
                .init("manual", .bits(mask: 0x01, asBool: true)), .init("away", .bits(mask: 0x02, asBool: true)),
                .init("boost", .bits(mask: 0x04, asBool: true)), .init("window_open", .bits(mask: 0x10, asBool: true)),
                .init("locked", .bits(mask: 0x20, asBool: true)), .init("battery_low", .bits(mask: 0x80, asBool: true)),
            ])
        ])

    @Test(arguments: [
        ("020104000428", "boost"),
        ("020101000428", "manual"),
        ("020110000428", "window_open"),
        ("020180000428", "battery_low"),
        ("020102000423", "away"),
        ("020100000428", ""),
    ])
    func eq3ModeFlags(hex: String, set: String) throws {
        let values = try Self.eq3Status.decode(Self.bytes(hex))
        #expect(values["_mode"] == nil)
        for name in ["manual", "away", "boost", "window_open", "locked", "battery_low"] {
            #expect(values[name] == .bool(name == set), "\(name)")
        }
    }

    @Test func eq3StatusWhole() throws {
        #expect(
            try Self.decode(Self.eq3Status, "020104000428")
                == #"{"manual":false,"away":false,"boost":true,"window_open":false,"locked":false,"battery_low":false,"valve":0,"target_temperature":20.0}"#)
        // HECK: `45 ff` → boost and manual, valve 80 %, 22.0 °C.
        let values = try Self.eq3Status.decode(Self.bytes("02 01 05 50 04 2c"))
        #expect(values["boost"] == true && values["manual"] == true && values["locked"] == false)
        #expect(values["valve"] == 80 && values["target_temperature"] == 22.0)
        #expect(Self.eq3Status.valueNames == [
            "manual", "away", "boost", "window_open", "locked", "battery_low", "valve", "target_temperature",
        ])
    }

    /// AM43 `a7` answer: flags (bit0 direction, bit1 operation mode, bit2/3 limits, bit4 light
    /// sensor), speed, position, the roller type in the high nibble (B2M's captures).
    @Test func am43Settings() throws {
        let settings = try ProfileStruct(
            format: ">3xBBB3xB",
            fields: [.init("flags"), .init("speed"), .init("position"), .init("_roller")],
            bits: [
                .init(field: "flags", values: [
                    .init("direction", .bits(mask: 0x01, asBool: false)), .init("mode", .bits(mask: 0x02, asBool: false)),
                    .init("top_limit", .bits(mask: 0x04, asBool: true)), .init("bottom_limit", .bits(mask: 0x08, asBool: true)),
                    .init("light_sensor", .bits(mask: 0x10, asBool: true)),
                ]),
                .init(field: "_roller", values: [.init("roller_type", .bits(mask: 0xf0, asBool: false))]),
            ])
        #expect(
            try Self.decode(settings, "9a a7 07 0e 32 00 00 00 00 30 36")
                == #"{"flags":14,"direction":0,"mode":1,"top_limit":true,"bottom_limit":true,"light_sensor":false,"speed":50,"position":0,"roller_type":3}"#)
        let moved = try settings.decode(Self.bytes("9a a7 07 0f 32 4e 00 00 00 30 79"))
        #expect(moved["position"] == 78 && moved["direction"] == 1)
    }

    /// Masks on a signed value take its two's complement; a mask wider than the value is refused.
    @Test func masksOnSizes() throws {
        let signed = try ProfileStruct(format: "<h", fields: [.init("x", .bits(mask: 0xf000, asBool: false))])
        #expect(try Self.decode(signed, "0080") == #"{"x":8}"#)
        let wide = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<B", fields: [.init("x", .bits(mask: 0x100, asBool: true))])
        }
        #expect(wide.code == .badTransform)
        #expect(wide.message.contains("wider than its 1 byte"), "\(wide.message)")
        let float = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<f", fields: [.init("x", .bits(mask: 1, asBool: true))])
        }
        #expect(float.message.contains("a mask applies only to integers"), "\(float.message)")
    }

    @Test func badBits() throws {
        let cases: [(String, [ProfileStruct.Field], [ProfileStruct.Bits], ProfileCodecError.Code, String)] = [
            ("<B", [.init("flags")], [.init(field: "mode", values: [.init("a", .bits(mask: 1, asBool: true))])],
             .badField, "bits of 'mode': the struct has no field of that name"),
            ("<f", [.init("flags")], [.init(field: "flags", values: [.init("a", .bits(mask: 1, asBool: true))])],
             .badTransform, "bits apply only to integers"),
            ("<BB", [.init("flags"), .init("a")], [.init(field: "flags", values: [.init("a", .bits(mask: 1, asBool: true))])],
             .badField, "field 'a' is named twice"),
            ("<B", [.init("flags")], [.init(field: "flags", values: [.init("a", .bits(mask: 1, asBool: false), absentIf: [0])])],
             .badField, "absent_if and valid apply to the struct's fields"),
            ("<B", [.init("flags")], [.init(field: "flags", values: [.init("a", .bits(mask: 0x100, asBool: false))])],
             .badTransform, "wider than its 1 byte"),
        ]
        for (format, fields, bits, code, message) in cases {
            let error = try #require(throws: ProfileCodecError.self) {
                try ProfileStruct(format: format, fields: fields, bits: bits)
            }
            #expect(error.code == code)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    // MARK: sentinels and valid ranges

    /// Airthings Wave Radon (ATB's fixtures): CO₂, VOC and pressure are 0xFFFF, so absent; radon
    /// outside 0…16383 is absent too. The Wave Plus frame has every value.
    static let airthings = try! ProfileStruct(format: "<BBBxHHHHHH", fields: [
        .init("_version"), .init("humidity", .scale(numerator: 1, denominator: 2)), .init("illuminance"),
        .init("radon_1day", valid: 0...16383), .init("radon_longterm", valid: 0...16383),
        .init("temperature", .scale(numerator: 1, denominator: 100)),
        .init("pressure", .scale(numerator: 1, denominator: 50), absentIf: [0xffff]),
        .init("co2", absentIf: [0xffff]), .init("voc", absentIf: [0xffff]),
    ])

    @Test func airthingsSentinels() throws {
        #expect(
            try Self.decode(Self.airthings, "013860f009001100a709ffffffffffff0000ffff")
                == #"{"humidity":28.0,"illuminance":96,"radon_1day":9,"radon_longterm":17,"temperature":24.71}"#)
        #expect(
            try Self.decode(Self.airthings, "01380d800b002200bd094cc31d036c0000007d05")
                == #"{"humidity":28.0,"illuminance":13,"radon_1day":11,"radon_longterm":34,"temperature":24.93,"pressure":999.92,"co2":797,"voc":108}"#)
        let noRadon = try Self.airthings.decode(Self.bytes("013860f0ffff0040a709ffffffffffff0000ffff"))
        #expect(noRadon["radon_1day"] == nil)
        #expect(noRadon["radon_longterm"] == nil)  // 0x4000 = 16384, just past the range
        #expect(noRadon["temperature"] == 24.71)
        #expect(Self.airthings.valueNames.first == "humidity")
    }

    /// A valid range on a float, NaN outside every range; absent_if and valid only where they mean something.
    @Test func validOnFloatsAndRefusals() throws {
        let float = try ProfileStruct(format: "<f", fields: [.init("x", valid: -40...125)])
        #expect(try Self.decode(float, "0000c841") == #"{"x":25.0}"#)
        #expect(try Self.decode(float, "00001643") == "{}")  // 150.0
        #expect(try Self.decode(float, "0000c07f") == "{}")  // NaN
        let absentOnFloat = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<f", fields: [.init("x", absentIf: [0])])
        }
        #expect(absentOnFloat.code == .badTransform)
        #expect(absentOnFloat.message.contains("absent_if applies only to integers"))
        let validOnText = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<4s", fields: [.init("x", valid: 0...1)])
        }
        #expect(validOnText.message.contains("valid applies only to numbers"))
    }

    // MARK: repetition

    /// iBBQ probes (ble_monitor's captures of the same encoding): signed tenths of °C, -10 (F6 FF)
    /// for an unplugged probe, as many probes as the payload holds.
    static let ibbq = try! ProfileStruct(
        format: "<h", fields: [.init("temperature_probe", .scale(numerator: 1, denominator: 10), absentIf: [-10])],
        repeating: .init(limit: 6))

    @Test func ibbqProbes() throws {
        #expect(try Self.decode(Self.ibbq, "D2 00 F6 FF F6 FF F6 FF F6 FF F6 FF") == #"{"temperature_probe_1":21.0}"#)
        #expect(try Self.decode(Self.ibbq, "c8 00 d2 00") == #"{"temperature_probe_1":20.0,"temperature_probe_2":21.0}"#)
        #expect(
            try Self.decode(Self.ibbq, "c8 00 f6 ff 38 ff d2 00")
                == #"{"temperature_probe_1":20.0,"temperature_probe_3":-20.0,"temperature_probe_4":21.0}"#)
        // A partial last item and items past the limit are ignored; less than one item is refused.
        #expect(try Self.decode(Self.ibbq, "c8 00 d2") == #"{"temperature_probe_1":20.0}"#)
        let seven = try Self.ibbq.decode(Self.bytes(String(repeating: "6400", count: 7)))
        #expect(seven.count == 6)
        #expect(seven["temperature_probe_6"] == 10.0)
        let short = try #require(throws: ProfileCodecError.self) { try Self.ibbq.decode([0xc8]) }
        #expect(short.code == .tooShort)
        #expect(Self.ibbq.valueNames == (1...6).map { "temperature_probe_\($0)" })
        #expect(ProfileDecode.structure(Self.ibbq).valueNames.count == 6)
    }

    @Test func badRepetitions() throws {
        let two = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<hh", fields: [.init("a"), .init("b")], repeating: .init(limit: 2))
        }
        #expect(two.code == .badFormat)
        #expect(two.message.contains("repeat needs a struct of one number"))
        let text = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<2s", fields: [.init("a")], repeating: .init(limit: 2))
        }
        #expect(text.code == .badFormat)
        let zero = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<h", fields: [.init("a")], repeating: .init(limit: 0))
        }
        #expect(zero.code == .badField)
        let withBits = try #require(throws: ProfileCodecError.self) {
            try ProfileStruct(
                format: "<B", fields: [.init("a")], bits: [.init(field: "a", values: [.init("b", .bits(mask: 1, asBool: true))])],
                repeating: .init(limit: 2))
        }
        #expect(withBits.message.contains("bits cannot be used with repeat"))
    }
}
