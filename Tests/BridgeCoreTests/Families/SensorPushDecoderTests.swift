import Testing

@testable import BridgeCore

/// SensorPush (SPEC §13): frames from sensorpush-ble's test suite (HT.w, TC.x: with the values the
/// format carries, which sensorpush-ble rounds to 0.01; HT1: its values), HTP.xw
/// frames packed here (checked against sensorpush-ble), edge values, other pages, truncated,
/// ambiguous and foreign frames.
@Suite struct SensorPushDecoderTests {
    typealias F = ByteFrames
    static let v2 = ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"]
    static let ht1 = ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"]

    @Test func capturedAndPackedFrames() throws {
        let cases: [(AdvertisementFrame, String, String)] = [
            (F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546"], uuids: Self.v2), "HT.w", #"{"temperature":20.53,"humidity":44.895}"#),
            (F.frame(name: "SensorPush HT.w 0CA1", [0x7504: "536446"], uuids: Self.v2), "HT.w", #"{"temperature":20.48,"humidity":44.7325}"#),
            (F.frame(name: "s", [0x4834: "6205"], uuids: Self.ht1), "HT1", #"{"temperature":13.94,"humidity":58.09}"#),
            (F.frame(name: "s", [0xFFFF: "ff07"], uuids: Self.ht1), "HT1", #"{"temperature":128.86,"humidity":100.0}"#),
            (F.frame(name: "s", [0x0000: "0004"], uuids: Self.ht1), "HT1", #"{"temperature":-46.85,"humidity":0.0}"#),
            (F.frame(name: "SensorPush TC.x EEFF", [0xF908: "0d0000"], uuids: Self.v2), "TC.x", #"{"temperature":23.5625}"#),
            (F.frame(name: "SensorPush TC EEFF", [0x0008: "000000"], uuids: Self.v2), "TC.x", #"{"temperature":-200.0}"#),
            // The v2 service UUID alone (no name yet) is enough.
            (F.frame(name: nil, [0x9A04: "c9a546"], uuids: Self.v2), "HT.w", #"{"temperature":20.53,"humidity":44.895}"#),
            // HTP.xw packed here: 22.5 °C, 45 %, 101325 Pa; the minimum; the maximum; single 0.0025 steps,
            // published as the decimal the frame carries (no rounding to 0.01).
            (F.frame(name: "SensorPush HTP.xw 1234", [0x1500: "821c4dd5ba"]), "HTP.xw", #"{"temperature":22.5,"humidity":45.0,"pressure":1013.25}"#),
            (F.frame(name: "SensorPush HTP.xw 1234", [0x0000: "0000000000"]), "HTP.xw", #"{"temperature":-40.0,"humidity":0.0,"pressure":300.0}"#),
            (F.frame(name: "SensorPush HTP.xw 1234", [0x9800: "7cad9cd9f8"]), "HTP.xw", #"{"temperature":140.0,"humidity":100.0,"pressure":1250.0}"#),
            (F.frame(name: "SensorPush HTP.xw 1234", [0xC300: "1eacab0000"]), "HTP.xw", #"{"temperature":-39.9975,"humidity":0.0025,"pressure":300.01}"#),
            (F.frame(name: "SensorPush HTP.xw 1234", [0x8300: "1a244a5620"]), "HTP.xw", #"{"temperature":-39.9925,"humidity":0.0175,"pressure":423.45}"#),
        ]
        for (frame, model, values) in cases {
            let d = try #require(try F.decode(frame)?.get())
            #expect(d.decoder == "sensorpush" && d.manufacturer == "SensorPush" && d.model == model && d.packetID == nil)
            #expect(JSONValue.object(d.values).jsonString == values)
        }
    }

    /// The HT1's rounding (sensorpush-ble's `round(x, 2)`).
    @Test func pythonRounding() {
        #expect(ByteFamilySupport.round2(-39.9975) == -40.0)
        #expect(ByteFamilySupport.round2(-39.9925) == -39.99)
        #expect(ByteFamilySupport.round2(0.0175) == 0.02)
        #expect(ByteFamilySupport.round2(0.125) == 0.12)
        #expect(ByteFamilySupport.round2(0.375) == 0.38)
        #expect(ByteFamilySupport.round2(-0.125) == -0.12)
        #expect(ByteFamilySupport.round2(2.675) == 2.67)
        #expect(ByteFamilySupport.round2(20.53) == 20.53)
    }

    @Test func otherPagesTypesAndLengthsFail() {
        // Page 1, 2, 3 of a TC.x carry no readings.
        #expect(F.values(F.frame(name: "SensorPush TC.x EEFF", [0xF909: "0d0000"])) == "failure")
        #expect(F.values(F.frame(name: "SensorPush TC.x EEFF", [0xF90B: "0d0000"])) == "failure")
        // Device type 67 is unknown.
        #expect(F.values(F.frame(name: "SensorPush X", [0xF90C: "0d0000"])) == "failure")
        // Too long for any packed reading; an HT1 of 3 bytes; an HT1 whose type bits are not 1.
        #expect(F.values(F.frame(name: "SensorPush HT.w", [0x9A04: "c9a54600000000ff"])) == "failure")
        // Each model has its length: an HT.w cut to 4 bytes, an HTP.xw of 6.
        #expect(F.values(F.frame(name: "SensorPush HT.w", [0x9A04: "c9a5"])) == "failure")
        #expect(F.values(F.frame(name: "SensorPush HTP.xw 1234", [0x1500: "821c4dd5"])) == "failure")
        #expect(F.values(F.frame(name: "s", [0x4834: "62"], uuids: Self.ht1)) == "failure")
        #expect(F.values(F.frame(name: "s", [0x4834: "6209"], uuids: Self.ht1)) == "failure")
    }

    @Test func notClaimedWhenUnsure() {
        #expect(F.decode(F.frame(name: nil, [0x9A04: "c9a546"])) == nil)
        #expect(F.decode(F.frame(name: "s", [0x4834: "6205"])) == nil)  // "s" without the HT1 UUID
        #expect(F.decode(F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546", 0x7504: "536446"])) == nil)
    }

    @Test func foreignFramesAreNotSensorPush() {
        let foreign: [AdvertisementFrame] = [
            F.frame(name: "GVH5075_DBF8", [0xEC88: "00034db26400"]),
            F.frame(name: "sps", [0x07FC: "c71200c83d5606"]),
            F.frame(name: "TP357 (2142)", [0xF1C2: "001d022c"]),
            F.frame(name: "iBBQ", [0x0000: "0000aabbccddeeff18014001"]),
            F.frame(name: "TCL TV", [0xF908: "0d0000"]),
        ]
        for frame in foreign { #expect(F.claimant(frame) != "sensorpush") }
    }

    @Test func mutationsNeverTrap() {
        let frames = [
            F.frame(name: "SensorPush HT.w 0CA1", [0x9A04: "c9a546"]),
            F.frame(name: "SensorPush HTP.xw 1234", [0x1500: "821c4dd5ba"]),
            F.frame(name: "s", [0x4834: "6205"], uuids: Self.ht1),
        ]
        for frame in frames {
            for claimant in F.mutations(of: frame) { #expect(claimant == nil || claimant == "sensorpush") }
        }
    }
}
