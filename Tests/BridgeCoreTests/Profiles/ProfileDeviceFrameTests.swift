import Testing

@testable import BridgeCore

/// Struct decodes of SPEC §15 profiles against bytes of the real devices, as the public drivers
/// give them (sources in /work/notes/profiles-research-A.md and -B.md: basnijholt/miflora's
/// test_parse.py, vrachieru/xiaomi-flower-care-api, sormy/radoneye's tests, Airthings/airthings-ble's
/// tests, rytilahti/python-eq3bt's tests, the SwitchBot BLE API's documented answers). Each expected
/// value is the one the source states.
@Suite struct ProfileDeviceFrameTests {
    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    static func decode(_ decode: ProfileStruct, _ hex: String) throws -> String {
        JSONValue.object(try decode.decode(bytes(hex))).jsonString
    }

    /// SPEC §15's example: `<hxIBh6x`, temperature `/10`, on the Mi Flora's 1a01 frame.
    static let miFlora = try! ProfileStruct(format: "<hxIBh6x", fields: [
        .init("temperature", .scale(numerator: 1, denominator: 10)),
        .init("illuminance"), .init("moisture"), .init("conductivity"),
    ])

    @Test(arguments: [
        ("25 01 00 F7 26 00 00 28 0E 01 00 00 00 00 00 00", #"{"temperature":29.3,"illuminance":9975,"moisture":40,"conductivity":270}"#),
        ("F2 00 00 79 00 00 00 10 65 00 00 00 00 00 00 00", #"{"temperature":24.2,"illuminance":121,"moisture":16,"conductivity":101}"#),
        ("ea 00 00 ab 00 00 00 15 b2 00 02 3c 00 fb 34 9b", #"{"temperature":23.4,"illuminance":171,"moisture":21,"conductivity":178}"#),
        ("0e 01 00 48 02 00 00 28 d0 00 02 3c 00 fb 34 9b", #"{"temperature":27.0,"illuminance":584,"moisture":40,"conductivity":208}"#),
        // Without the mode write A0 1F the device answers this constant: it decodes (a profile
        // cannot tell), to nonsense; the steps must write the mode first.
        ("aa bb cc dd ee ff 99 88 77 66 00 00 00 00 00 00", #"{"temperature":-1749.4,"illuminance":2583686877,"moisture":136,"conductivity":26231}"#),
    ])
    func miFloraSensors(hex: String, json: String) throws {
        #expect(try Self.decode(Self.miFlora, hex) == json)
    }

    /// Mi Flora 1a02: battery, a separator, the firmware as text (`<Bx5s`); SPEC's `<B` reads the
    /// battery alone, ignoring the rest.
    @Test func miFloraBatteryAndFirmware() throws {
        let info = try ProfileStruct(format: "<Bx5s", fields: [.init("battery"), .init("firmware")])
        #expect(try Self.decode(info, "64 2B 33 2E 32 2E 32") == #"{"battery":100,"firmware":"3.2.2"}"#)
        #expect(try Self.decode(info, "63 28 33 2e 31 2e 39") == #"{"battery":99,"firmware":"3.1.9"}"#)
        let battery = try ProfileStruct(format: "<B", fields: [.init("battery")])
        #expect(try Self.decode(battery, "5a 2b 33 2e 32 2e 32") == #"{"battery":90}"#)
    }

    /// LYWSD03MMC ccc1 notification (a real device's read): `<hBH`, /100 and /1000.
    @Test func lywsd03mmc() throws {
        let decode = try ProfileStruct(format: "<hBH", fields: [
            .init("temperature", .scale(numerator: 1, denominator: 100)), .init("humidity"),
            .init("voltage", .scale(numerator: 1, denominator: 1000)),
        ])
        #expect(try Self.decode(decode, "59 09 2b 9a 0a") == #"{"temperature":23.93,"humidity":43,"voltage":2.714}"#)
    }

    /// RadonEye RD200 V1 status frames (20 bytes, trailing garbage ignored), by first byte; the
    /// pCi/L floats scaled to Bq/m³ with `*37` (sormy/radoneye: 0.58 pCi/L = 21 Bq after rounding).
    @Test func radonEyeV1() throws {
        let dispatch = try ProfileFirstByte<ProfileStruct>([
            ("50", ProfileStruct(format: "<2xfffHH", fields: [
                .init("radon", .scale(numerator: 37, denominator: 1)),
                .init("radon_1day", .scale(numerator: 37, denominator: 1)),
                .init("radon_1month", .scale(numerator: 37, denominator: 1)),
                .init("radon_pulses"), .init("radon_pulses_previous"),
            ])),
            ("51", ProfileStruct(format: "<4xI4xf", fields: [
                .init("uptime_minutes"), .init("radon_peak", .scale(numerator: 37, denominator: 1)),
            ])),
            ("ac", ProfileStruct(format: "<2xBBfB", fields: [
                .init("unit", .map([0: "pCi/L", 1: "Bq/m3"])), .init("alarm", .map([0: "off", 1: "on"])),
                .init("alarm_level"), .init("alarm_interval", .scale(numerator: 10, denominator: 1)),
            ])),
        ])
        func json(_ hex: String) throws -> String { JSONValue.object(try dispatch.decode(Self.bytes(hex))).jsonString }
        #expect(try json("50 10 e1 7a 14 3f f6 28 bc 3f 00 00 00 00 01 00 04 00 00 00")
            == #"{"radon":21.46,"radon_1day":54.39,"radon_1month":0.0,"radon_pulses":1,"radon_pulses_previous":4}"#)
        #expect(try json("50 10 85 EB B9 40 00 00 00 00 00 00 00 00 22 00 25 00 00 00")
            == #"{"radon":214.97,"radon_1day":0.0,"radon_1month":0.0,"radon_pulses":34,"radon_pulses_previous":37}"#)
        #expect(try json("51 0e 02 00 c1 2d 00 00 3e 40 08 00 50 b1 0c 40 04 00 00 00")
            == #"{"uptime_minutes":11713,"radon_peak":81.3379251}"#)
        #expect(try json("ac 07 00 01 00 00 40 40 06 32 53 4e 30 31 35 39 08 00 00 00")
            == #"{"unit":"pCi/L","alarm":"on","alarm_level":3.0,"alarm_interval":60.0}"#)
        let unknown = try #require(throws: ProfileCodecError.self) { try json("a4 0e 32 30") }
        #expect(unknown.code == .unknownFirstByte)
        #expect(unknown.message.contains("0xa4") && unknown.message.contains("50, 51, ac"), "\(unknown.message)")
    }

    /// RadonEye RD200 V2 and V3 0x40 status (68 bytes): `<28xBBHBHHHHHI4xH`.
    @Test(arguments: [
        ("""
        40 42 32 32 30 31 30 33 52 55 32 30 33 38 33 06 52 44 32 30 30 4e 56 32 2e 30 2e 32 00 01 4a 00
        06 0a 00 08 00 00 00 03 00 01 00 79 30 00 00 e0 11 08 00 1c 00 02 00 00 00 38 22 00 5c 8f 42 3f
        a4 70 9d 3f
        """,
        #"{"unit":0,"alarm":1,"alarm_level":74,"alarm_interval":6,"radon":10,"radon_1day":8,"radon_1month":0,"radon_pulses":3,"radon_pulses_previous":1,"uptime_minutes":12409,"radon_peak":28}"#),
        ("""
        40 42 49 4a 30 31 52 45 30 30 31 34 30 34 07 52 44 32 30 30 56 33 56 33 2e 30 2e 31 00 00 94 00
        06 00 00 09 00 00 00 00 00 00 00 cd 11 00 00 00 00 00 00 14 00 02 00 00 00 4b 00 f2 00 00 00 00
        d7 a3 70 3f
        """,
        #"{"unit":0,"alarm":0,"alarm_level":148,"alarm_interval":6,"radon":0,"radon_1day":9,"radon_1month":0,"radon_pulses":0,"radon_pulses_previous":0,"uptime_minutes":4557,"radon_peak":20}"#),
    ])
    func radonEyeV2(hex: String, json: String) throws {
        let names = ["unit", "alarm", "alarm_level", "alarm_interval", "radon", "radon_1day", "radon_1month",
                     "radon_pulses", "radon_pulses_previous", "uptime_minutes", "radon_peak"]
        let decode = try ProfileStruct(format: "<28xBBHBHHHHHI4xH", fields: names.map { .init($0) })
        #expect(Self.bytes(hex).count == 68)
        #expect(try Self.decode(decode, hex) == json)
    }

    /// Airthings Wave Plus and Wave Radon current values: `<BBBxHHHHHH`.
    @Test func airthings() throws {
        let decode = try ProfileStruct(format: "<BBBxHHHHHH", fields: [
            .init("version"), .init("humidity", .scale(numerator: 1, denominator: 2)), .init("illuminance"),
            .init("radon_1day"), .init("radon_longterm"), .init("temperature", .scale(numerator: 1, denominator: 100)),
            .init("pressure", .scale(numerator: 1, denominator: 50)), .init("co2"), .init("voc"),
        ])
        #expect(try Self.decode(decode, "01380d800b002200bd094cc31d036c0000007d05")
            == #"{"version":1,"humidity":28.0,"illuminance":13,"radon_1day":11,"radon_longterm":34,"temperature":24.93,"pressure":999.92,"co2":797,"voc":108}"#)
        #expect(try Self.decode(decode, "013860f009001100a709ffffffffffff0000ffff")
            == #"{"version":1,"humidity":28.0,"illuminance":96,"radon_1day":9,"radon_longterm":17,"temperature":24.71,"pressure":1310.7,"co2":65535,"voc":65535}"#)
    }

    /// eQ-3 status answers of 6 and 10 bytes under one struct (`<2xBBxB`, bytes after it ignored).
    @Test func eq3Status() throws {
        let decode = try ProfileStruct(format: "<2xBBxB", fields: [
            .init("mode"), .init("valve"), .init("target_temperature", .scale(numerator: 1, denominator: 2)),
        ])
        #expect(try Self.decode(decode, "020100000428") == #"{"mode":0,"valve":0,"target_temperature":20.0}"#)
        #expect(try Self.decode(decode, "020100160428") == #"{"mode":0,"valve":22,"target_temperature":20.0}"#)
        #expect(try Self.decode(decode, "02 01 00 00 04 2d") == #"{"mode":0,"valve":0,"target_temperature":22.5}"#)
        #expect(try Self.decode(decode, "0201020004231d132e03") == #"{"mode":2,"valve":0,"target_temperature":17.5}"#)
    }

    /// SwitchBot Bot "get basic info" answer, big endian per its documentation: `>BBBBHHBBB`.
    @Test func switchBotBasicInfo() throws {
        let decode = try ProfileStruct(format: ">BBBBHHBBB", fields: [
            .init("status", .map([1: "ok"])), .init("battery"), .init("firmware", .scale(numerator: 1, denominator: 10)),
            .init("strength"), .init("adc"), .init("motor_calibration"), .init("timers"), .init("mode"), .init("hold_seconds"),
        ])
        #expect(try Self.decode(decode, "01 64 2C 64 00 00 00 A1 00 00 00 48 00")
            == #"{"status":"ok","battery":100,"firmware":4.4,"strength":100,"adc":0,"motor_calibration":161,"timers":0,"mode":0,"hold_seconds":0}"#)
    }

    /// The answers of a SwitchBot Bot as a command's `expect` (SPEC §15): a first-byte dispatch to names.
    @Test func switchBotAnswers() throws {
        let expect = try ProfileFirstByte<String>([
            ("01", "ok"), ("07", "password_required"), ("09", "wrong_password"),
        ])
        #expect(try expect.target(for: Self.bytes("01 FF 00")) == "ok")
        #expect(try expect.target(for: [0x07]) == "password_required")
        #expect(try expect.target(for: [0x09]) == "wrong_password")
        let addOn = try #require(throws: ProfileCodecError.self) { try expect.target(for: Self.bytes("05 48 C0")) }
        #expect(addOn.code == .unknownFirstByte)
    }
}
