import Testing

@testable import BridgeCore

/// ThermoPro (SPEC §13): frames from thermopro-ble's and Theengs Decoder's test suites with the
/// values they read; edge values, truncated, ambiguous and foreign frames.
@Suite struct ThermoProDecoderTests {
    typealias F = ByteFrames

    @Test func capturedFrames() throws {
        let cases: [(AdvertisementFrame, String, String)] = [
            (F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c"]), "TP357", #"{"temperature":24.1,"humidity":29,"battery":100}"#),
            (F.frame(name: "TP357S (2142)", [0xEEC2: "0029220b01"]), "TP357S", #"{"temperature":23.8,"humidity":41,"battery":100}"#),
            (F.frame(name: "TP393 (9376)", [0xF2C2: "0035022c"]), "TP393", #"{"temperature":24.2,"humidity":53,"battery":100}"#),
            (F.frame(name: "TP358 (2142)", [0xF1C2: "001d022c"]), "TP358", #"{"temperature":24.1,"humidity":29,"battery":100}"#),
            (F.whole(name: "TP359", "c2ff0035012c"), "TP359", #"{"temperature":25.5,"humidity":53,"battery":50}"#),
            (F.whole(name: "TP357", "c276014a022c"), "TP357", #"{"temperature":37.4,"humidity":74,"battery":100}"#),
            (F.whole(name: "TP357S", "c2d60043220b01"), "TP357S", #"{"temperature":21.4,"humidity":67,"battery":100}"#),
            // No reading (ff ff ff): the battery only.
            (F.frame(name: "TP357S (3C62)", [0xFFC2: "ffff220b01"]), "TP357S", #"{"battery":100}"#),
            // Below zero (−5.0 °C = ffce), battery low (level 0 → 1 %), level 3 (not given).
            (F.frame(name: "TP357", [0xCEC2: "ff2a002c"]), "TP357", #"{"temperature":-5.0,"humidity":42,"battery":1}"#),
            (F.frame(name: "TP357", [0x00C2: "80630300"]), "TP357", #"{"temperature":-3276.8,"humidity":99}"#),
        ]
        for (frame, model, values) in cases {
            let d = try #require(try F.decode(frame)?.get())
            #expect(d.decoder == "thermopro" && d.manufacturer == "ThermoPro" && d.model == model && d.packetID == nil)
            #expect(JSONValue.object(d.values).jsonString == values)
        }
    }

    @Test func notClaimedWithoutTheNameOrWithSeveralEntries() {
        #expect(F.decode(F.frame(name: nil, [0xF1C2: "001d022c"])) == nil)
        #expect(F.decode(F.frame(name: "Thermometer", [0xF1C2: "001d022c"])) == nil)
        // TP96x / TP97x meat thermometers: another format, not ours.
        #expect(F.decode(F.frame(name: "TP960R (0000)", [0x3A00: "0030083800"])) == nil)
        // BlueZ kept older values under other ids: which is the newest is unknown.
        #expect(F.decode(F.frame(name: "TP357S (2142)", [0xEEC2: "0029220b01", 0xEDC2: "0029220b01"])) == nil)
        // An iBeacon beside it does not count.
        #expect(F.values(F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c", 0x004C: "0215"])) == #"{"temperature":24.1,"humidity":29,"battery":100}"#)
    }

    @Test func truncatedFramesFail() {
        #expect(F.values(F.frame(name: "TP357 (2142)", [0xF1C2: "001d02"])) == "failure")
        #expect(F.values(F.frame(name: "TP357 (2142)", [0xF1C2: ""])) == "failure")
        // No reading and battery level 3: nothing in the frame.
        #expect(F.values(F.frame(name: "TP357S (3C62)", [0xFFC2: "ffff230b01"])) == "failure")
    }

    @Test func foreignFramesAreNotThermoPro() {
        let foreign: [AdvertisementFrame] = [
            F.frame(name: "GVH5075_DBF8", [0xEC88: "00034db26400"]),
            F.frame(name: "sps", [0x07FC: "c71200c83d5606"]),
            F.frame(name: "iBBQ", [0x0000: "0000aabbccddeeff18014001"]),
            F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546"]),
            F.frame(name: nil, [0xF1C2: "001d022c"]),
        ]
        for frame in foreign { #expect(F.claimant(frame) != "thermopro") }
    }

    @Test func mutationsNeverTrap() {
        for frame in [F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c"]), F.frame(name: "TP357S", [0xEEC2: "0029220b01"])] {
            for claimant in F.mutations(of: frame) { #expect(claimant == "thermopro") }
        }
    }
}
