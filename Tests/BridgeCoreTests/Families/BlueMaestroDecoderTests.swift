import Testing

@testable import BridgeCore

/// BlueMaestro Tempo Disc (manufacturer data 0x0133): bluemaestro-ble's and theengs/decoder's
/// frames, the Maxi formats, truncations, unknown versions, ranges.
@Suite struct BlueMaestroDecoderTests {
    static func frame(_ hex: String) -> AdvertisementFrame { MakerFrames.frame(md: [0x0133: hex]) }

    static func decoded(_ hex: String) throws -> DecodedAdvertisement {
        try #require(try MakerFrames.decode(Self.frame(hex))?.get())
    }

    @Test func tempoDiscs() throws {
        // bluemaestro-ble test_temp_disc_thd: 100 %, 24.2 °C, 49.8 %, dew point 13.1 °C (and the
        // statistics after the readings).
        let thd = try Self.decoded("17640e10000200f201f20083010001" + "0d02ab00f201f2010d02ab00f201f200ff024e0000000000")
        #expect(thd.decoder == "bluemaestro" && thd.manufacturer == "BlueMaestro" && thd.model == "Tempo Disc THD")
        #expect(thd.packetID == nil && !thd.encrypted)
        #expect(JSONValue.object(thd.values).jsonString == #"{"battery":100,"temperature":24.2,"humidity":49.8,"dew_point":13.1}"#)
        // theengs: a THD (legacy 0x16) below zero, a THPD (4-in-1) with pressure, a T (1-in-1).
        #expect(
            MakerFrames.values(Self.frame("16430e10061eff5d030fff400100"))
                == #"{"battery":67,"temperature":-16.3,"humidity":78.3,"dew_point":-19.2}"#)
        let thpd = try Self.decoded("1b3a0e10061e00df02f727970100")
        #expect(thpd.model == "Tempo Disc THPD")
        #expect(JSONValue.object(thpd.values).jsonString == #"{"battery":58,"temperature":22.3,"humidity":75.9,"pressure":1013.5}"#)
        let t = try Self.decoded("0d6402580ad100fc0100")
        #expect(t.model == "Tempo Disc T" && JSONValue.object(t.values).jsonString == #"{"battery":100,"temperature":25.2}"#)
        // Exactly up to the last field is enough.
        #expect(MakerFrames.values(Self.frame("080a0e100002fe0c")) == #"{"battery":10,"temperature":-50.0}"#)
    }

    @Test func maxi() throws {
        let padding = String(repeating: "00", count: 13)
        // Maxi THPD: -12.34 °C, 50 %, 1013.25 hPa (little endian hundredths); no dew point (not carried).
        let thpd = try Self.decoded("2b50" + padding + "2efb" + "8813" + "cd8b0100")
        #expect(thpd.model == "Tempo Disc Maxi THPD")
        #expect(JSONValue.object(thpd.values).jsonString == #"{"battery":80,"temperature":-12.34,"humidity":50.0,"pressure":1013.25}"#)
        #expect(MakerFrames.values(Self.frame("2a00" + padding + "d209" + "1027")) == #"{"battery":0,"temperature":25.14,"humidity":100.0}"#)
        #expect(MakerFrames.values(Self.frame("2964" + padding + "0000")) == #"{"battery":100,"temperature":0.0}"#)
        // Humidity outside 0...100 %.
        #expect(MakerFrames.values(Self.frame("2a00" + padding + "d209" + "1127")) == "failure: malformed")
        #expect(MakerFrames.values(Self.frame("2a00" + padding + "d209" + "ffff")) == "failure: malformed")
    }

    @Test func truncatedUnknownAndOutOfRange() {
        #expect(MakerFrames.decode(Self.frame("")) == .failure(.truncated("BlueMaestro version")))
        for hex in ["17640e10000200f201f200", "0d6402580ad100", "1b3a0e10061e00df02f727", "2b50" + String(repeating: "00", count: 20)] {
            #expect(MakerFrames.values(Self.frame(hex)) == "failure: truncated", "\(hex)")
        }
        // Unknown version, battery above 100 %, humidity above 100 %.
        for hex in ["99640e10000200f201f20083", "17650e10000200f201f20083", "17640e10000200f203e90083"] {
            #expect(MakerFrames.values(Self.frame(hex)) == "failure: malformed", "\(hex)")
        }
        // Another company id: not BlueMaestro's.
        if case .success(let other)? = MakerFrames.decode(MakerFrames.frame(md: [0x0134: "17640e10000200f201f20083"])) {
            #expect(other.decoder != "bluemaestro")
        }
    }

    @Test func mutationsNeverTrapNorLeaveTheFamily() {
        for hex in ["17640e10000200f201f20083010001", "1b3a0e10061e00df02f727970100", "2b50" + String(repeating: "00", count: 13) + "2efb8813cd8b0100"] {
            #expect(MakerFrames.claimants(ofMutationsOf: Self.frame(hex)).isSubset(of: ["bluemaestro", "failure"]))
        }
    }
}
