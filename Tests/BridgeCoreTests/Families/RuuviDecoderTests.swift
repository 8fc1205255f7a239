import Testing

@testable import BridgeCore

/// RuuviTag data formats 3 and 5 (manufacturer data 0x0499): ruuvitag-ble's test frames and
/// Ruuvi's own format vectors, the not-available values, wrong lengths, other formats.
@Suite struct RuuviDecoderTests {
    static func frame(_ hex: String) -> AdvertisementFrame { MakerFrames.frame(md: [0x0499: hex]) }

    static func decoded(_ hex: String) throws -> DecodedAdvertisement {
        try #require(try MakerFrames.decode(Self.frame(hex))?.get())
    }

    static let g = 9.80665 / 1000  // m/s² per mG

    @Test func format3() throws {
        // ruuvitag-ble test_v3: 12.31 °C, 89 %, 1017.44 hPa, 2191 mV, (122, 38, 976) mG.
        let tag = try Self.decoded("03b20c1fca20007a002603d0088f")
        #expect(tag.decoder == "ruuvi" && tag.manufacturer == "Ruuvi Innovations Ltd." && tag.model == "RuuviTag")
        #expect(tag.packetID == nil && !tag.encrypted)
        #expect(
            MakerFrames.matches(
                tag,
                [
                    "temperature": 12.31, "humidity": 89, "pressure": 1017.44, "acceleration_x": 122 * Self.g,
                    "acceleration_y": 38 * Self.g, "acceleration_z": 976 * Self.g, "voltage": 2.191,
                ]))
        #expect(tag.values.keys == ["temperature", "humidity", "pressure", "acceleration_x", "acceleration_y", "acceleration_z", "voltage"])
        // Below zero (sign bit, then hundredths): -1.69 °C.
        #expect(MakerFrames.number(try Self.decoded("03b28145ca20007a002603d0088f"), "temperature") == -1.69)
        // Ruuvi's minimum vector: -127.99 °C, 0 %, 500 hPa, -32767 mG, 0 V.
        let minimum = try Self.decoded("0300FF6300008001800180010000")
        #expect(MakerFrames.number(minimum, "temperature") == -127.99)
        #expect(MakerFrames.number(minimum, "acceleration_x").map { abs($0 + 32767 * Self.g) < 1e-9 } == true)
        // The maximum vector's humidity byte (255, 127.5 %) is no humidity: absent, the rest stays.
        let maximum = try Self.decoded("03FF7F63FFFF7FFF7FFF7FFFFFFF")
        #expect(maximum.values["humidity"] == nil && MakerFrames.number(maximum, "temperature") == 127.99)
        #expect(MakerFrames.number(maximum, "pressure") == 1155.35 && MakerFrames.number(maximum, "voltage") == 65.535)
        // Hundredths above 99 are no temperature.
        #expect(MakerFrames.values(Self.frame("03b20c64ca20007a002603d0088f")) == "failure: malformed")
    }

    @Test func format5() throws {
        // ruuvitag-ble test_v5: 7.2 °C, 61.84 %, 1013.54 hPa, 2395 mV, 114 movements,
        // (-716, 652, -256) mG, measurement sequence 26998.
        let tag = try Self.decoded("0505a060a0c89afd34028cff006376726976dead7b3fefaf")
        #expect(tag.packetID == 26998 && tag.model == "RuuviTag")
        #expect(
            MakerFrames.matches(
                tag,
                [
                    "temperature": 7.2, "humidity": 61.84, "pressure": 1013.54, "acceleration_x": -716 * Self.g,
                    "acceleration_y": 652 * Self.g, "acceleration_z": -256 * Self.g, "voltage": 2.395, "movement_counter": 114,
                ]))
        #expect(tag.values["movement_counter"] == .integer(114))
        // One axis not available: no acceleration at all (ruuvitag-ble does the same).
        let noAxis = try Self.decoded("0505a060a0c89a8000028cff006376726976dead7b3fefaf")
        #expect(noAxis.values.keys == ["temperature", "humidity", "pressure", "voltage", "movement_counter"])
        // Ruuvi's maximum and minimum vectors.
        let maximum = try Self.decoded("057FFFFFFEFFFE7FFF7FFF7FFFFFDEFEFFFECBB8334C884F")
        #expect(MakerFrames.number(maximum, "temperature") == 163.835 && MakerFrames.number(maximum, "humidity") == 163.835)
        #expect(MakerFrames.number(maximum, "voltage") == 3.646 && maximum.packetID == 65534)
        #expect(maximum.values["movement_counter"] == .integer(254))
        let minimum = try Self.decoded("058001000000008001800180010000000000CBB8334C884F")
        #expect(MakerFrames.number(minimum, "temperature") == -163.835 && MakerFrames.number(minimum, "pressure") == 500)
        #expect(MakerFrames.number(minimum, "voltage") == 1.6 && minimum.packetID == 0)
        // Ruuvi's "invalid" vector: every field not available, no value, no packet id.
        let invalid = try Self.decoded("058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF")
        #expect(invalid.values.isEmpty && invalid.packetID == nil)
    }

    @Test func wrongLengthsAndOtherFormats() {
        #expect(MakerFrames.decode(Self.frame("")) == .failure(.truncated("Ruuvi data format")))
        for bad in [
            "03b20c1fca20007a002603d008", "03b20c1fca20007a002603d0088f00", "0505a060a0c89afd34028cff006376726976dead7b3fef",
            "0505a060a0c89afd34028cff006376726976dead7b3fefaf00", "06170c5668c79e0065007004bd11ca00c90a0213e0ac",
            "e1", "05",
        ] {
            #expect(MakerFrames.values(Self.frame(bad)) == "failure: malformed", "\(bad)")
        }
        // Another company's frame with the same bytes is not Ruuvi's.
        if case .success(let other)? = MakerFrames.decode(MakerFrames.frame(md: [0x0133: "03b20c1fca20007a002603d0088f"])) {
            #expect(other.decoder != "ruuvi")
        }
    }

    @Test func mutationsNeverTrapNorLeaveTheFamily() {
        for hex in ["03b20c1fca20007a002603d0088f", "0505a060a0c89afd34028cff006376726976dead7b3fefaf"] {
            #expect(MakerFrames.claimants(ofMutationsOf: Self.frame(hex)).isSubset(of: ["ruuvi", "failure"]))
        }
    }
}
