import Testing

@testable import BridgeCore

/// Victron Instant Readout (manufacturer data 0x02e1, AES-128-CTR): victron-ble's frames and
/// keys, right key / wrong key / no key, frames encrypted here, truncations, other records.
@Suite struct VictronDecoderTests {
    static func frame(_ hex: String) -> AdvertisementFrame { MakerFrames.frame(md: [0x02E1: hex]) }

    static let shunt = "100289a302b040af925d09a4d89aa0128bdef48c6298a9"
    static let shuntKey = "aff4d0995b7d1e176c0c33ecb9e70dcd"

    static func decoded(_ hex: String, key: String) throws -> DecodedAdvertisement {
        try #require(try MakerFrames.decode(Self.frame(hex), key: key)?.get())
    }

    /// A frame built here: header, key check byte, `plain` encrypted from the counter block.
    static func encrypt(type: UInt8, product: UInt16, counter: UInt16, key: [UInt8], plain: [UInt8]) -> String {
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = UInt8(counter & 0xFF)
        block[1] = UInt8(counter >> 8)
        let cipher = AESCTR(key: key)?.apply(plain, counterBlock: block) ?? []
        let header: [UInt8] = [0x10, 0x00, UInt8(product & 0xFF), UInt8(product >> 8), type, block[0], block[1], key[0]]
        return Hex.encode(header + cipher)
    }

    @Test func smartShunt() throws {
        // victron-ble test_battery_monitor end to end: 12.53 V, 0 A, 50 %; data counter 0x40b0.
        let shunt = try Self.decoded(Self.shunt, key: Self.shuntKey)
        #expect(shunt.decoder == "victron" && shunt.manufacturer == "Victron Energy" && shunt.model == "Battery Monitor")
        #expect(shunt.encrypted && shunt.counter == 0x40B0 && shunt.packetID == 0x40B0)
        #expect(JSONValue.object(shunt.values).jsonString == #"{"battery_voltage":12.53,"battery_current":0.0,"state_of_charge":50.0}"#)
    }

    @Test func solarChargerOrionAndBatterySense() throws {
        // victron-ble test_solar_charger: 13.88 V, 1.4 A, 30 Wh today, 19 W.
        let solar = try Self.decoded("100242a0016207adceb37b605d7e0ee21b24df5c", key: "adeccb947395801a4dd45a2eaa44bf17")
        #expect(solar.model == "Solar Charger" && solar.counter == 0x0762)
        #expect(
            JSONValue.object(solar.values).jsonString
                == #"{"battery_voltage":13.88,"battery_current":1.4,"yield_today":0.03,"solar_power":19}"#)
        // test_dcdc_converter: input 13.15 V, output not available (absent).
        let orion = try Self.decoded("1000c0a304121d64ca8d442b90bbdf6a8cba", key: "64ba49f1a8562e45197a8e1fe50d7658")
        #expect(orion.model == "DC/DC Converter" && JSONValue.object(orion.values).jsonString == #"{"voltage":13.15}"#)
        // test_battery_sense: 12.22 V, 22.5 °C; its current (0x1FFFFF) and state of charge (0x3FF)
        // are "not available": absent.
        let sense = try Self.decoded("1000a4a3025f150d8dcbff517f30eb65e76b22a04ac4e1", key: "0da694539597f9cf6c613cde60d7bf05")
        #expect(sense.model == "Smart Battery Sense")
        #expect(JSONValue.object(sense.values).jsonString == #"{"battery_voltage":12.22,"temperature":22.5}"#)
    }

    @Test func recordsEncryptedHere() throws {
        let key = MakerFrames.bytes("00112233445566778899aabbccddeeff")
        // victron-ble's decrypted MPPT 100 record: 25.55 V, 10.1 A, 500 Wh, 265 W.
        let mppt = Self.encrypt(type: 0x01, product: 0xA053, counter: 0xFFFF, key: key, plain: MakerFrames.bytes("0300fb09650032000901ffff"))
        let solar = try Self.decoded(mppt, key: Hex.encode(key))
        #expect(solar.counter == 0xFFFF)
        #expect(
            JSONValue.object(solar.values).jsonString
                == #"{"battery_voltage":25.55,"battery_current":10.1,"yield_today":0.5,"solar_power":265}"#)
        // A discharging shunt: -12.345 A, 12.00 V, 99.9 %, aux in temperature mode at 298.15 K.
        var plain = [UInt8](repeating: 0, count: 15)
        plain[2] = 0xB0; plain[3] = 0x04  // 1200 × 0.01 V
        plain[6] = UInt8(29815 & 0xFF); plain[7] = UInt8(29815 >> 8)
        let amps = UInt32(bitPattern: Int32(-12345)) & 0x3F_FFFF
        plain[8] = 0x02 | UInt8((amps << 2) & 0xFF)
        plain[9] = UInt8((amps >> 6) & 0xFF)
        plain[10] = UInt8((amps >> 14) & 0xFF)
        plain[13] = UInt8((999 & 0x0F) << 4)
        plain[14] = UInt8(999 >> 4)
        let frame = Self.encrypt(type: 0x02, product: 0xA389, counter: 7, key: key, plain: plain)
        let shunt = try Self.decoded(frame, key: Hex.encode(key))
        #expect(
            JSONValue.object(shunt.values).jsonString
                == #"{"battery_voltage":12.0,"battery_current":-12.345,"state_of_charge":99.9,"temperature":25.0}"#)
        // Every field "not available" (signed: the largest positive value; unsigned: all ones): no value.
        let empty = Self.encrypt(
            type: 0x02, product: 0xA389, counter: 8, key: key, plain: MakerFrames.bytes("ffff ff7f 0000 ffff ff ff 7f ffff ff ff"))
        #expect(MakerFrames.values(Self.frame(empty), key: Hex.encode(key)) == "{}")
        let negative = Self.encrypt(type: 0x04, product: 0xA3C0, counter: 9, key: key, plain: MakerFrames.bytes("0000 ffff 0080 00000000"))
        #expect(MakerFrames.values(Self.frame(negative), key: Hex.encode(key)) == #"{"battery_voltage":-327.68}"#)
    }

    @Test func keys() {
        // No key, a key of the wrong length, the wrong key (victron-ble's key-mismatch frame):
        // refused; a wrong key that shares the first byte decodes noise (the format has no MIC).
        #expect(MakerFrames.decode(Self.frame(Self.shunt)) == .failure(.encryptedWithoutKey))
        #expect(MakerFrames.decode(Self.frame(Self.shunt), key: "aff4d0995b7d1e176c0c33ec") == .failure(.invalidKey(12)))
        #expect(MakerFrames.decode(Self.frame("100289a302bb01af129087600b9b97bc2c32867c8238da"), key: String(repeating: "ff", count: 16)) == .failure(.badMIC))
        #expect(MakerFrames.decode(Self.frame(Self.shunt), key: "00" + Self.shuntKey.dropFirst(2)) == .failure(.badMIC))
        if case .success(let noise)? = MakerFrames.decode(Self.frame(Self.shunt), key: "af" + String(repeating: "00", count: 15)) {
            #expect(noise.values != (try? Self.decoded(Self.shunt, key: Self.shuntKey).values))
        }
    }

    @Test func truncatedAndOtherRecords() {
        for length in [0, 1, 7] {
            #expect(
                MakerFrames.decode(Self.frame(String(Self.shunt.prefix(2 * length))), key: Self.shuntKey)
                    == .failure(.truncated("Victron Instant Readout header")))
        }
        // The record cut short (15 bytes needed after the header).
        #expect(MakerFrames.decode(Self.frame(String(Self.shunt.dropLast(2))), key: Self.shuntKey) == .failure(.truncated("Battery Monitor record")))
        // Not a product advertisement; records this decoder does not read (AC charger, VE.Bus).
        for hex in ["110289a302b040af925d09a4d89aa0128bdef48c6298a9", "100030a308f926c1b5170a0d2280335bf12d5ed083", "100380270c1252dad26f0b8eb39162074d140df410"] {
            #expect(MakerFrames.values(Self.frame(hex), key: Self.shuntKey) == "failure: malformed", "\(hex)")
        }
    }

    @Test func mutationsNeverTrapNorLeaveTheFamily() {
        #expect(MakerFrames.claimants(ofMutationsOf: Self.frame(Self.shunt), key: Self.shuntKey).isSubset(of: ["victron", "failure"]))
        #expect(MakerFrames.claimants(ofMutationsOf: Self.frame(Self.shunt)).isSubset(of: ["failure"]))
    }
}
