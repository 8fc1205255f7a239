import BridgeBase
import BridgeCore
import Testing

@testable import ConfigLoader

/// Every shipped profile's decodes and command bytes against frames captured from the real devices
/// (or the vendors' documents) that the profile files' comments name.
@Suite struct ShippedProfileVectorTests {
    static func profile(_ id: String) throws -> DeviceProfile {
        try #require(try ProfileCatalog.shipped().profiles[id], "no shipped profile \(id)")
    }

    static func decode(_ id: String, _ decode: String, _ hex: String) throws -> JSONObject {
        let profile = try profile(id)
        let decoder = try #require(profile.decodes[decode], "\(id) has no decode \(decode)")
        return try decoder.decode(try Hex.decode(hex))
    }

    /// The bytes of `command`'s write steps (bound with `options`), rendered with `parameters`.
    static func written(
        _ id: String, _ command: String, options: [String: String] = [:], _ parameters: [String: JSONValue] = [:],
        unixTime: Int64 = 0, utcOffset: Int32 = 0
    ) throws -> [String] {
        let binding = DeviceProfileBinding(profile: try profile(id), options: options)
        let steps = command.isEmpty ? binding.steps : try #require(binding.command(command), "no command \(command)").steps
        return try steps.compactMap { step in
            guard case .write(_, let template, _) = step.action else { return nil }
            let context = ProfileTemplate.Context(
                unixTime: unixTime, utcOffset: utcOffset, options: options, parameters: parameters)
            return Hex.encode(try template.render(context))
        }
    }

    @Test func miFlora() throws {
        #expect(try Self.decode("xiaomi_miflora", "sensors", "250100f7260000280e01000000000000")
            == ["temperature": .number(29.3), "illuminance": .integer(9975), "moisture": .integer(40), "conductivity": .integer(270)])
        #expect(try Self.decode("xiaomi_miflora", "sensors", "ea0000ab0000001 5b200023c00fb349b".replacingOccurrences(of: " ", with: ""))
            == ["temperature": .number(23.4), "illuminance": .integer(171), "moisture": .integer(21), "conductivity": .integer(178)])
        #expect(try Self.decode("xiaomi_miflora", "info", "642b332e322e32") == ["battery": .integer(100)])
        #expect(try Self.written("xiaomi_miflora", "") == ["a01f"])
        #expect(try Self.written("xiaomi_miflora", "blink") == ["fdff"])
    }

    @Test func lywsd03mmc() throws {
        #expect(try Self.decode("xiaomi_lywsd03mmc", "live", "f8074ad60b")
            == ["temperature": .number(20.4), "humidity": .integer(74), "voltage": .number(3.03)])
        #expect(try Self.decode("xiaomi_lywsd03mmc", "live", "59092b9a0a")
            == ["temperature": .number(23.93), "humidity": .integer(43), "voltage": .number(2.714)])
        #expect(try Self.decode("xiaomi_lywsd03mmc", "battery", "64") == ["battery": .integer(100)])
    }

    @Test func switchBotBot() throws {
        #expect(try Self.decode("switchbot_bot", "info", "01642c64000000a10000004800") == ["battery": .integer(100)])
        #expect(try Self.decode("switchbot_bot", "info", "07") == [:])
        #expect(try Self.written("switchbot_bot", "press") == ["570100"])
        #expect(try Self.written("switchbot_bot", "on") == ["570101"])
        #expect(try Self.written("switchbot_bot", "off") == ["570102"])
        // SwitchBot's app with the password 1234: 57 11 9b e3 e0 a3 (a capture); the CRC-32 of "1234".
        #expect(try Self.written("switchbot_bot", "press", options: ["password": "1234"]) == ["57119be3e0a300"])
        #expect(try Self.written("switchbot_bot", "", options: ["password": "1234"]) == ["57129be3e0a3"])
        let press = try #require(try Self.profile("switchbot_bot").command("press")?.expect)
        #expect(try press.answer(for: try Hex.decode("01ff00")) == "ok")
        #expect(try press.answer(for: try Hex.decode("07")) == "password_required")
        #expect(try press.answer(for: try Hex.decode("09")) == "wrong_password")
    }

    @Test func switchBotCurtain() throws {
        // basic info: position 0 on the device (open) is 100 in Home Assistant
        #expect(try Self.decode("switchbot_curtain", "info", "015a2c0100040000")
            == ["battery": .integer(90), "position": .integer(100)])
        #expect(try Self.written("switchbot_curtain", "open") == ["570f4501010100"])
        #expect(try Self.written("switchbot_curtain", "close") == ["570f4501010164"])
        #expect(try Self.written("switchbot_curtain", "position", ["position": .integer(30)]) == ["570f4501010146"])
        #expect(try Self.written("switchbot_curtain", "stop", options: ["password": "1234"]) == ["571f9be3e0a3450100ff"])
    }

    @Test func am43() throws {
        #expect(try Self.decode("am43_blind", "battery", "9aa205000000005 16c".replacingOccurrences(of: " ", with: ""))
            == ["battery": .integer(81)])
        #expect(try Self.decode("am43_blind", "position", "9aa7070e320000000 03036".replacingOccurrences(of: " ", with: ""))
            == ["position": .integer(100)])
        #expect(try Self.decode("am43_blind", "position", "9aa7070f324e0000003079") == ["position": .integer(22)])
        // captured: set position 100 (closed) and 0 (open), stop
        #expect(try Self.written("am43_blind", "close") == ["00ff00009a0d0164f2"])
        #expect(try Self.written("am43_blind", "open") == ["00ff00009a0d010096"])
        #expect(try Self.written("am43_blind", "stop") == ["00ff00009a0a01cc5d"])
        #expect(try Self.written("am43_blind", "position", ["position": .integer(0)]) == ["00ff00009a0d0164f2"])
        #expect(try Self.written("am43_blind", "position", ["position": .integer(100)]) == ["00ff00009a0d010096"])
        // PIN 8888 by default (22b8, checksum 15); another PIN checksummed the same way
        #expect(try Self.written("am43_blind", "").first == "00ff00009a170222b815")
        #expect(try Self.written("am43_blind", "", options: ["pin": "8888"]).first == "00ff00009a170222b815")
        let ack = try #require(try Self.profile("am43_blind").command("open")?.expect)
        #expect(try ack.answer(for: try Hex.decode("9a0d015acc")) == "ok")
        #expect(try ack.answer(for: try Hex.decode("9a0d01a533")) == "refused")
    }

    @Test func eq3() throws {
        #expect(try Self.decode("eq3_thermostat", "answer", "02010000042a") == [
            "manual": .bool(false), "away": .bool(false), "boost": .bool(false), "window": .bool(false),
            "locked": .bool(false), "battery_low": .bool(false), "valve": .integer(0), "target_temperature": .number(21),
        ])
        let boost = try Self.decode("eq3_thermostat", "answer", "020104000428")
        #expect(boost["boost"] == .bool(true) && boost["manual"] == .bool(false))
        let window = try Self.decode("eq3_thermostat", "answer", "020110000428")
        #expect(window["window"] == .bool(true))
        #expect(try Self.decode("eq3_thermostat", "answer", "020100160428")["valve"] == .integer(22))
        #expect(try Self.written("eq3_thermostat", "set_temperature", ["temperature": .number(22.5)]) == ["412d"])
        #expect(try Self.written("eq3_thermostat", "set_temperature", ["temperature": .number(4.5)]) == ["4109"])
        #expect(throws: ProfileCodecError.self) {
            try Self.written("eq3_thermostat", "set_temperature", ["temperature": .number(22.3)])
        }
        // Heckie75's capture 03 11 02 08 15 1f 05: 2017-02-08 21:31:05 local time (here UTC+1).
        #expect(try Self.written("eq3_thermostat", "", unixTime: 1_486_585_865, utcOffset: 3600) == ["031102081 51f05".replacingOccurrences(of: " ", with: "")])
    }

    @Test func airthingsWavePlus() throws {
        #expect(try Self.decode("airthings_wave_plus", "current", "01380d800b002200bd094cc31d036c0000007d05") == [
            "humidity": .number(28), "radon_1day": .integer(11), "radon_longterm": .integer(34),
            "temperature": .number(24.93), "pressure": .number(999.92), "co2": .integer(797), "voc": .integer(108),
        ])
        // a Wave Radon's frame: no CO2, VOC or pressure (ffff), radon 9 / 17
        let radon = try Self.decode("airthings_wave_plus", "current", "013860f009001100a709ffffffffffff0000ffff")
        #expect(radon["radon_1day"] == .integer(9) && radon["co2"] == nil && radon["voc"] == nil)
        #expect(try Self.decode("airthings_wave_plus", "command", "6d00600c04000100008211ff00000000c04c20001f3560007006b80b0900")
            == ["battery_voltage": .number(3)])
        #expect(throws: ProfileCodecError.self) { try Self.decode("airthings_wave_plus", "current", "02380d80") }
    }

    @Test func radonEye() throws {
        let v2 = "4042323230313033525532303338330652443230304e56322e302e3200014a00060a00080000000300010079300000e01108001c00020000003822005c8f423fa4709d3f"
        #expect(try Self.decode("radoneye_rd200", "status", v2)
            == ["radon": .integer(10), "radon_1day": .integer(8), "radon_1month": .integer(0), "radon_peak": .integer(28)])
        // the RD200V3's capture: radon 0, day 9, month 0, peak 20
        let v3 = "4042494a30315245303031343034075244323030563356332e302e31000094000600000900000000000000cd110000000000001400020000004b00f200000000d7a3703f"
        #expect(try Self.decode("radoneye_rd200", "status", v3)
            == ["radon": .integer(0), "radon_1day": .integer(9), "radon_1month": .integer(0), "radon_peak": .integer(20)])
        let v1 = try Self.decode("radoneye_rd200_v1", "frame", "5010e17a143ff628bc3f00000000010004000000")
        #expect(abs((v1["radon"]?.doubleValue ?? 0) - 0.58 * 37) < 1e-6, "\(v1)")
        #expect(abs((v1["radon_1day"]?.doubleValue ?? 0) - 1.47 * 37) < 1e-6, "\(v1)")
        let peak = try Self.decode("radoneye_rd200_v1", "frame", "510e0200c12d00003e40080050b10c4004000000")
        #expect(abs((peak["radon_peak"]?.doubleValue ?? 0) - 81.338) < 0.001, "2.19832 pCi/L: \(peak)")
    }

    @Test func ibbq() throws {
        #expect(try Self.decode("inkbird_ibbq", "probes", "c800d200")
            == ["temperature_probe_1": .number(20), "temperature_probe_2": .number(21)])
        // IBT-6X: probe 1 21.0 °C, probes 2-6 unplugged (f6 ff): left out
        #expect(try Self.decode("inkbird_ibbq", "probes", "d200f6fff6fff6fff6fff6ff") == ["temperature_probe_1": .number(21)])
        #expect(try Self.written("inkbird_ibbq", "") == ["2107060504030201b8220000000000", "0b0100000000"])
    }
}
