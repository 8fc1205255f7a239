import Testing

@testable import BridgeCore

/// Govee (SPEC §13): frames captured from real devices in govee-ble's and Theengs Decoder's test
/// suites, with the values those references read from them; edge values; frames of the models
/// outside our list, foreign frames and mutations.
@Suite struct GoveeDecoderTests {
    typealias F = ByteFrames
    static let ec88: UInt16 = 0xEC88
    static let ibeacon = "0215494e54454c4c495f524f434b535f48575075f2ffc2"

    static func decoded(_ frame: AdvertisementFrame) throws -> DecodedAdvertisement {
        let result = try #require(F.decode(frame))
        return try result.get()
    }

    @Test func h5075PackedFormat() throws {
        // govee-ble: GVH5075_DBF8 → 21.6 °C, 49.8 %, 100 %.
        let d = try Self.decoded(F.frame(name: "GVH5075_DBF8", [Self.ec88: "00034db26400"]))
        #expect(d.decoder == "govee" && d.manufacturer == "Govee" && d.model == "H5075" && d.packetID == nil)
        #expect(JSONValue.object(d.values).jsonString == #"{"temperature":21.6,"humidity":49.8,"battery":100}"#)
        // 20.0 °C, 64.9 %, 53 %; the iBeacon glued into the same AD structure is cut off.
        #expect(F.values(F.frame(name: "GVH5075_2762", [Self.ec88: "00030fc93500"])) == #"{"temperature":20.0,"humidity":64.9,"battery":53}"#)
        #expect(
            F.values(F.frame(name: "GVH5075_2762", [Self.ec88: "000341c264004c000215494e54454c4c495f524f434b535f48575075f2ff0c"]))
                == #"{"temperature":21.3,"humidity":44.2,"battery":100}"#)
        // Theengs: below zero (sign bit) −7.3 °C, 48.1 %.
        #expect(F.values(F.whole(name: "GVH5075_1234", "88ec00811f096400")) == #"{"temperature":-7.3,"humidity":48.1,"battery":100}"#)
        #expect(F.values(F.whole(name: "GVH5072_1234", "88ec0004344b6400")) == #"{"temperature":27.5,"humidity":53.1,"battery":100}"#)
        #expect(try Self.decoded(F.whole(name: "GVH5072_1234", "88ec0004344b6400")).model == "H5072")
    }

    @Test func packedErrorAndRangeGiveTheBatteryOnly() throws {
        // govee-ble's frame 00bc00043e27: 0xbc0004 has the sign bit: −481.2 °C, out of range.
        #expect(F.values(F.frame(name: "GVH5075_2762", [Self.ec88: "00bc00043e27"])) == #"{"battery":62}"#)
        #expect(F.values(F.frame(name: "GVH5075_2762", [Self.ec88: "004a00283b00"])) == #"{"battery":59}"#)
        // The error flag (bit 7 of the battery byte).
        #expect(F.values(F.frame(name: "GVH5075_X", [Self.ec88: "00034db2e400"])) == #"{"battery":100}"#)
        // The range ends: −40.0 and 100.0 °C are published, −40.1 and 100.1 are not.
        #expect(F.values(F.frame(name: nil, [Self.ec88: "00861a806400"])) == #"{"temperature":-40.0,"humidity":0.0,"battery":100}"#)
        #expect(F.values(F.frame(name: nil, [Self.ec88: "00861e686400"])) == #"{"battery":100}"#)
        #expect(F.values(F.frame(name: nil, [Self.ec88: "000f42406400"])) == #"{"temperature":100.0,"humidity":0.0,"battery":100}"#)
        #expect(F.values(F.frame(name: nil, [Self.ec88: "000f46286400"])) == #"{"battery":100}"#)
    }

    @Test func littleEndianFormats() throws {
        // H5074 (govee-ble and Theengs): 25.34 °C, 47.96 %; −13.76 °C.
        let d = try Self.decoded(F.frame(name: "Govee_H5074_5FF4", [Self.ec88: "00e609bc126402", 0x004C: Self.ibeacon]))
        #expect(d.model == "H5074")
        #expect(JSONValue.object(d.values).jsonString == #"{"temperature":25.34,"humidity":47.96,"battery":100}"#)
        #expect(F.values(F.whole(name: "Govee_H5074_1234", "88ec00a0facc176402")) == #"{"temperature":-13.76,"humidity":60.92,"battery":100}"#)
        // H5179 (0x8801, at offset 4): 25.7 °C, 17 %, 100 %; Theengs: 20.3 °C, 57.2 %, 65 %.
        let h5179 = try Self.decoded(F.frame(name: "Govee_H5179_3CD5", [0x8801: "ec0001010a0aa40664"]))
        #expect(h5179.model == "H5179")
        #expect(JSONValue.object(h5179.values).jsonString == #"{"temperature":25.7,"humidity":17.0,"battery":100}"#)
        #expect(F.values(F.whole(name: "Govee_H5179_1234", "0188ec000101ee07581641")) == #"{"temperature":20.3,"humidity":57.2,"battery":65}"#)
        // H5051 without a name (9 bytes on 0xEC88), H5052 by name.
        let h5051 = try Self.decoded(F.frame(name: "", [Self.ec88: "00ba0af90f63020101"]))
        #expect(h5051.model == "H5051")
        #expect(JSONValue.object(h5051.values).jsonString == #"{"temperature":27.46,"humidity":40.89,"battery":99}"#)
        #expect(try Self.decoded(F.frame(name: "Govee_H5052_E81B", [Self.ec88: "001c01a7143b000002"])).model == "H5052")
    }

    @Test func the0001FamilyNeedsTheName() throws {
        let cases: [(String, String, String, String)] = [
            ("GVH5100_7738", "010103465464", "H5100", #"{"temperature":21.4,"humidity":61.2,"battery":100}"#),
            ("GVH5102_1234", "010103590e64", "H5102", #"{"temperature":21.9,"humidity":40.6,"battery":100}"#),
            ("GVH5104_311C", "01010203d95e", "H5104", #"{"temperature":13.2,"humidity":5.7,"battery":94}"#),
            ("GVH5105_7336", "010103325e64", "H5105", #"{"temperature":20.9,"humidity":50.2,"battery":100}"#),
            ("GVH5110_4A33", "010182f7fd64", "H5110", #"{"temperature":-19.4,"humidity":55.7,"battery":100}"#),
            ("GVH5174_1234", "0101811a6764", "H5174", #"{"temperature":-7.2,"humidity":29.5,"battery":100}"#),
            ("GVH5177_2EC8", "0101033626644c000215494e54454c4c495f524f434b535f48575177f2ffc2", "H5177",
             #"{"temperature":21.0,"humidity":47.0,"battery":100}"#),
            ("GV5179_6319", "010103b31464", "H5179", #"{"temperature":24.2,"humidity":45.2,"battery":100}"#),
            ("GV51085242", "010103c730640000", "H5108", #"{"temperature":24.7,"humidity":60.0,"battery":100}"#),
        ]
        for (name, hex, model, values) in cases {
            let d = try Self.decoded(F.frame(name: name, [0x0001: hex, 0x004C: Self.ibeacon]))
            #expect(d.model == model, "\(name)")
            #expect(JSONValue.object(d.values).jsonString == values, "\(name)")
            // 0x0001 is Ericsson's: without the Govee name (not known yet, or another device's) it is not claimed.
            #expect(F.decode(F.frame(name: nil, [0x0001: hex])) == nil)
            #expect(F.decode(F.frame(name: "RZSS", [0x0001: hex])) == nil)
        }
        // H5108's 8 bytes need the H5108 name; "G" (a truncated name) is not enough.
        #expect(F.decode(F.frame(name: "G", [0x0001: "010103c730640000"])) == nil)
    }

    @Test func h5055Probes() throws {
        let uuid = ["00005550-0000-1000-8000-00805f9b34fb"]
        let one = try Self.decoded(F.frame(name: "", [0xAF2F: "55006401201a00ffffffff201900ffffffff0000", 0x004C: Self.ibeacon], uuids: uuid))
        #expect(one.model == "H5055")
        #expect(JSONValue.object(one.values).jsonString == #"{"battery":100,"temperature_probe_1":26.0}"#)
        #expect(
            F.values(F.frame(name: "", [0xAF2F: "5500644c201a00ffffffff2019001400b1000000"], uuids: uuid))
                == #"{"battery":100,"temperature_probe_3":26.0,"temperature_probe_4":25.0}"#)
        #expect(
            F.values(F.frame(name: "", [0xAF2F: "550064bf201a00ffffb100201900ffffffff0000"], uuids: uuid))
                == #"{"battery":100,"temperature_probe_5":26.0,"temperature_probe_6":25.0}"#)
        // Probe group 3 does not exist: Govee's frame, malformed.
        #expect(F.values(F.frame(name: "", [0xAF2F: "550064fb201a00ffffb100201900ffffffff0000"], uuids: uuid)) == "failure")
        // Without the 5550 service UUID the bytes say nothing.
        #expect(F.decode(F.frame(name: "GVH5055", [0xAF2F: "55006401201a00ffffffff201900ffffffff0000"])) == nil)
    }

    @Test func modelsOutsideTheListAreNotClaimed() {
        // H5106 (pm2.5), H5140 (CO2), H5112, H5178, meat thermometers, H512x (encrypted), H5127.
        #expect(F.decode(F.frame(name: "GVH5106_4E05", [0x0001: "01010ed13298"])) == nil)
        #expect(F.decode(F.frame(name: "GV5140303A", [0x0001: "0101033dee023e00"])) == nil)
        #expect(F.decode(F.frame(name: "GV5112AC3D", [0x0001: "0101033d70640041"])) == nil)
        #expect(F.decode(F.frame(name: "B51782BC8", [0x0001: "010101002af7640003"])) == nil)
        #expect(F.decode(F.frame(name: "GVH5183_2EC8", [0x67DD: "ef01000101e401800834ffff0000"])) == nil)
        #expect(F.decode(F.frame(name: "GV5121195A", [0xEF88: "59940000f0b91937ae50b6372c866ac2f3d061e717c02cef"])) == nil)
        #expect(F.decode(F.frame(name: "GVH51275E3F", [0x8803: "ec0001010111"])) == nil)
        // An H5122's 0xEC88 entry beside its encrypted 0xEF88 one, even cut to 6 bytes, is no reading.
        #expect(F.decode(F.frame(name: "GV51225634", [0xEC88: "0108f30ad232", 0xEF88: "f30a0000648248e86020622588c02fd258cb3f1b8544d930"])) == nil)
    }

    @Test func modelFromName() {
        #expect(GoveeDecoder.modelCode("GVH5075_2762") == 5075)
        #expect(GoveeDecoder.modelCode("Govee_H5179_3CD5") == 5179)
        #expect(GoveeDecoder.modelCode("GV5179_6319") == 5179)
        #expect(GoveeDecoder.modelCode("GV51085242") == 5108)
        #expect(GoveeDecoder.modelCode("ihoment_H6160_1234") == nil)
        #expect(GoveeDecoder.modelCode("Govee_ABCD") == nil)
        #expect(GoveeDecoder.modelCode("H50") == nil)
        #expect(GoveeDecoder.modelCode("") == nil)
        #expect(GoveeDecoder.modelCode(nil) == nil)
    }

    @Test func otherFamiliesFramesAreNotGovee() {
        // An Inkbird sps at −50.48 °C starts 88 ec: the name makes it Inkbird's.
        #expect(F.claimant(F.frame(name: "sps", [Self.ec88: "b80b0010805908"])) == "inkbird")
        // The other families' frames (with their names, or none): never Govee.
        let foreign: [AdvertisementFrame] = [
            F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c"]),
            F.frame(name: "tps", [0x0848: "000000c66e0d06"]),
            F.frame(name: "iBBQ", [0x0000: "0000aabbccddeeff18014001"]),
            F.frame(name: "iBBQ", [0x0001: "0000ffeeddccbbaadc00cf00"]),
            F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546"]),
            F.frame(name: nil, [0x0499: "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"]),  // Ruuvi
            F.frame(name: nil, [0x0969: "aabbccddeeff2c0d6400"]),  // SwitchBot
        ]
        for frame in foreign { #expect(F.claimant(frame) != "govee") }
    }

    @Test func mutationsNeverTrap() {
        let frames = [
            F.frame(name: "GVH5075_DBF8", [Self.ec88: "00034db26400"]),
            F.frame(name: nil, [Self.ec88: "00e609bc126402"]),
            F.frame(name: "Govee_H5179_3CD5", [0x8801: "ec0001010a0aa40664"]),
            F.frame(name: "GVH5102_1234", [0x0001: "010103590e64"]),
            F.frame(name: "", [0xAF2F: "55006401201a00ffffffff201900ffffffff0000"], uuids: ["5550"]),
        ]
        for frame in frames {
            for claimant in F.mutations(of: frame) { #expect(claimant == nil || claimant == "govee") }
        }
    }
}
