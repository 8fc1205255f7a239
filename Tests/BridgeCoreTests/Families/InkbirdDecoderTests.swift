import Testing

@testable import BridgeCore

/// Inkbird (SPEC §13): frames from inkbird-ble's and Theengs Decoder's test suites with the
/// values they read; edge values, corrupt, truncated, ambiguous and foreign frames.
@Suite struct InkbirdDecoderTests {
    typealias F = ByteFrames
    static let fff0 = ["0000fff0-0000-1000-8000-00805f9b34fb"]

    @Test func capturedFrames() throws {
        let cases: [(AdvertisementFrame, String, String)] = [
            (F.frame(name: "sps", [0x07FC: "c71200c83d5606"], uuids: Self.fff0), "IBS-TH", #"{"temperature":20.44,"humidity":48.07,"battery":86}"#),
            (F.frame(name: "sps", [0x08C8: "84140088996406"], uuids: Self.fff0), "IBS-TH", #"{"temperature":22.48,"humidity":52.52,"battery":100}"#),
            (F.whole(name: "sps", "660a03150010805908"), "IBS-TH", #"{"temperature":26.62,"humidity":53.79,"battery":89}"#),
            (F.whole(name: "sps", "e300bb070093c36406"), "IBS-TH", #"{"temperature":2.27,"humidity":19.79,"battery":100}"#),
            (F.frame(name: "tps", [0x0848: "000000c66e0d06"], uuids: Self.fff0), "IBS-TH2/P01B", #"{"temperature":21.2,"battery":13}"#),
            (F.whole(name: "tps", "76fb00000010805908"), "IBS-TH2/P01B", #"{"temperature":-11.62,"battery":89}"#),
            (F.whole(name: "tps", "660a19200010805908"), "IBS-TH2/P01B", #"{"temperature":26.62,"humidity":82.17,"battery":89}"#),
            (F.whole(name: "tps", "840affff00a6066008"), "IBS-TH2/P01B", #"{"temperature":26.92,"battery":96}"#),
            (F.frame(name: "ITH-11-B", [0x2449: "0812005efeff48036400640800000000"], uuids: Self.fff0), "ITH-11-B",
             #"{"temperature":-0.2,"humidity":84.0,"battery":100}"#),
            (F.frame(name: "ITH-21-B", [0x2449: "07110098d80013026401900400000000"], uuids: Self.fff0), "ITH-21-B",
             #"{"temperature":21.6,"humidity":53.1,"battery":100}"#),
            (F.frame(name: "IBS-P02B", [0x2449: "11180065760100005f00000100000000"], uuids: Self.fff0), "IBS-P02B",
             #"{"temperature":37.4,"battery":95}"#),
            (F.frame(name: "iBBQ", [0x0000: "000030e2837db502cefffa000401fa00"], uuids: Self.fff0), "iBBQ-4",
             #"{"temperature_probe_1":-5.0,"temperature_probe_2":25.0,"temperature_probe_3":26.0,"temperature_probe_4":25.0}"#),
            (F.frame(name: "xBBQ", [0x0001: "0000561100007f73f800ffff"], uuids: Self.fff0), "xBBQ-2", #"{"temperature_probe_1":24.8}"#),
            (F.whole(name: "iBBQ", "00000000aabbccddeeffd200c800f6ffd200f6fff6ff"), "iBBQ-6",
             #"{"temperature_probe_1":21.0,"temperature_probe_2":20.0,"temperature_probe_3":-1.0,"temperature_probe_4":21.0,"temperature_probe_5":-1.0,"temperature_probe_6":-1.0}"#),
            (F.whole(name: "iBBQ", "01000000ffeeddccbbaaffff4f01"), "iBBQ-2", #"{"temperature_probe_2":33.5}"#),
            // Every probe unplugged: the device is there, with nothing to publish.
            (F.frame(name: "xBBQ", [0x0001: "00002c1100006dd3ffffffff"]), "xBBQ-2", "{}"),
        ]
        for (frame, model, values) in cases {
            let d = try #require(try F.decode(frame)?.get())
            #expect(d.decoder == "inkbird" && d.manufacturer == "Inkbird" && d.model == model && d.packetID == nil)
            #expect(JSONValue.object(d.values).jsonString == values)
        }
    }

    @Test func corruptFramesFail() {
        // Humidity ffff on an ITH-11-B (655.35 %), battery 0xff on an sps, humidity above 100 % on an sps.
        #expect(F.values(F.frame(name: "ITH-11-B", [0x2449: "0812005e0000ffff6400640800000000"])) == "failure")
        #expect(F.values(F.frame(name: "sps", [0x07FC: "c71200c83dff06"])) == "failure")
        #expect(F.values(F.frame(name: "sps", [0x07FC: "11270000006406"])) == "failure")
        #expect(F.values(F.frame(name: "sps", [0x07FC: "10270000006406"])) == #"{"temperature":20.44,"humidity":100.0,"battery":100}"#)
    }

    @Test func notClaimedWhenUnsure() {
        // No name: the bytes alone are anybody's.
        #expect(F.decode(F.frame(name: nil, [0x07FC: "c71200c83d5606"], uuids: Self.fff0)) == nil)
        // A length other than the format's (inkbird-ble reads this 8-byte frame, shifted, as 2.74 % and 6 % battery).
        #expect(F.decode(F.frame(name: "sps", [0x0823: "120171086406"], uuids: Self.fff0)) == nil)
        // Several entries kept by BlueZ.
        #expect(F.decode(F.frame(name: "tps", [0x0898: "00000007bc0008", 0x08C0: "00000026710008"])) == nil)
        #expect(F.decode(F.frame(name: "xBBQ", [0x0001: "00002c1100006dd311011201", 0x0002: "00002c1100006dd3da03da03"])) == nil)
        // iBBQ of no known probe count; other Inkbird models outside our list.
        #expect(F.decode(F.frame(name: "iBBQ", [0x0000: "0000aabbccddeeff18"])) == nil)
        #expect(F.decode(F.frame(name: "Ink@IAM-T1", [0x3154: "41432d363230306131336361650000"])) == nil)
    }

    @Test func foreignFramesAreNotInkbird() {
        let foreign: [AdvertisementFrame] = [
            F.frame(name: "GVH5075_DBF8", [0xEC88: "00034db26400"]),
            F.frame(name: "GVH5102_1234", [0x0001: "010103590e64"]),
            F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c"]),
            F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546"]),
            F.frame(name: nil, [0x0000: "0000aabbccddeeff18014001"]),
        ]
        for frame in foreign { #expect(F.claimant(frame) != "inkbird") }
    }

    @Test func mutationsNeverTrap() {
        let frames = [
            F.frame(name: "sps", [0x07FC: "c71200c83d5606"]),
            F.frame(name: "tps", [0x0848: "000000c66e0d06"]),
            F.frame(name: "ITH-11-B", [0x2449: "0812005efeff48036400640800000000"]),
            F.frame(name: "iBBQ", [0x0000: "000030e2837db5020401fa000401fa00"]),
        ]
        for frame in frames {
            for claimant in F.mutations(of: frame) { #expect(claimant == nil || claimant == "inkbird") }
        }
    }
}
