import Testing

@testable import BridgeCore

/// Mopeka (manufacturer data 0x0059 with service UUID fee5): mopeka-iot-ble's and
/// theengs/decoder's frames, reading qualities, Nordic frames without fee5, wrong lengths.
@Suite struct MopekaDecoderTests {
    static func frame(_ hex: String, fee5: Bool = true) -> AdvertisementFrame {
        MakerFrames.frame(md: [0x0059: hex], uuids: fee5 ? [0xFEE5] : [])
    }

    static func decoded(_ hex: String) throws -> DecodedAdvertisement {
        try #require(try MakerFrames.decode(Self.frame(hex))?.get())
    }

    @Test func proPlusAndProCheck() throws {
        // mopeka-iot-ble PRO_INSTALLED_SERVICE_INFO: 27 °C, level 950 at quality 3 -> 341 mm of
        // propane, 3.5 V (battery clamped to 100 %).
        let pro = try Self.decoded("087043b6c3e0f509fae3")
        #expect(pro.decoder == "mopeka" && pro.manufacturer == "Mopeka" && pro.model == "Pro Plus")
        #expect(pro.packetID == nil && !pro.encrypted)
        #expect(JSONValue.object(pro.values).jsonString == #"{"temperature":27,"tank_level":341,"battery":100.0,"voltage":3.5}"#)
        // The same bytes from a Pro Check Universal, a Lippert BottleCheck, a Pro Check.
        #expect(try Self.decoded("0c7043b6c3e0f509fae3").model == "Pro Check Universal")
        #expect(try Self.decoded("067043b6c3e0f509fae3").model == "Lippert BottleCheck")
        // theengs' Pro Check: 25 °C, 154 mm (its 15.41 cm), 2.90625 V.
        let check = try Self.decoded("035d41a4c150a8cc0323")
        #expect(check.model == "Pro Check")
        #expect(JSONValue.object(check.values).jsonString == #"{"temperature":25,"tank_level":154,"battery":100.0,"voltage":2.90625}"#)
        // Pro-200B: 9 °C, 806 mm.
        let pro200 = try Self.decoded("125f3178c7cce52ba83f")
        #expect(pro200.model == "Pro-200B" && pro200.values["tank_level"] == .integer(806))
    }

    @Test func readingQualityAndBattery() throws {
        // Quality 0 (PRO_SERVICE_BAD_QUALITY_INFO): no level; quality 1 (LOW): the level.
        let bad = try Self.decoded("0872460030e0f509f0d8")
        #expect(bad.values["tank_level"] == nil && bad.values["temperature"] == .integer(30))
        let low = try Self.decoded("0872460040e0f509f0d8")
        #expect(low.values["tank_level"] == .integer(0))
        // Battery: (V - 2.2) / 0.65, clamped: 2.2 V and below -> 0 %, 2.5 V -> 46.15 %.
        let flat = try Self.decoded("0346 00 0000 e0f509 0000".filter { $0 != " " })
        #expect(flat.values["battery"] == .number(0) && flat.values["temperature"] == .integer(-40))
        let half = try Self.decoded("0350 7f ff ff e0f509 0000".filter { $0 != " " })
        #expect(MakerFrames.number(half, "battery").map { abs($0 - 0.3 / 0.65 * 100) < 1e-9 } == true)
        // The coldest and hottest raw temperatures, the largest level.
        #expect(half.values["temperature"] == .integer(87))
        let largest = Int64(Double(0x3FFF) * (0.573045 - 0.002822 * 127 - 0.000_005_35 * (127 * 127)))
        #expect(half.values["tank_level"] == .integer(largest))
    }

    @Test func foreignFramesAndWrongLengths() {
        // Without fee5 the frame is Nordic's company id, not Mopeka's: not claimed.
        #expect(MakerFrames.decode(Self.frame("087043b6c3e0f509fae3", fee5: false)) == nil)
        #expect(MakerFrames.decode(MakerFrames.frame(uuids: [0xFEE5])) == nil)
        for hex in ["", "087043b6c3e0f509fa", "087043b6c3e0f509fae300", "017043b6c3e0f509fae3", "ff7043b6c3e0f509fae3"] {
            #expect(MakerFrames.values(Self.frame(hex)) == "failure: malformed", "\(hex)")
        }
    }

    @Test func mutationsNeverTrapNorLeaveTheFamily() {
        for hex in ["087043b6c3e0f509fae3", "035d41a4c150a8cc0323"] {
            #expect(MakerFrames.claimants(ofMutationsOf: Self.frame(hex)).isSubset(of: ["mopeka", "failure"]))
        }
    }
}
