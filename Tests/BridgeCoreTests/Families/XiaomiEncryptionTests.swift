import ConfigLoader
import Testing

@testable import BridgeCore

/// MiBeacon encryption: v4/v5 (AES-CCM, 16-byte key, 4-byte MIC) and the legacy v2/v3 scheme
/// (12-byte key, 1-byte MIC), with frames sealed here; the 8-bit counter of v2/v3 through the
/// replay guard.
@Suite struct XiaomiEncryptionTests {
    static let address = BluetoothAddress("A4:C1:38:11:22:33")!
    static let macLE: [UInt8] = [0x33, 0x22, 0x11, 0x38, 0xC1, 0xA4]
    static let key16 = XiaomiDecoderTests.bytes("e9ea895fac7cca6d30532432a516f3a8")
    static let key12 = XiaomiDecoderTests.bytes("b853075158487ca39a5b5ea9")

    /// A v5 frame (MAC included) of `product` sealed with `key16`.
    static func v5(_ product: UInt16, counter: UInt8, ext: [UInt8], _ objects: [UInt8], version: UInt8 = 5) -> [UInt8] {
        let head: [UInt8] = [0x58, version << 4 | 0x08, UInt8(product & 0xFF), UInt8(product >> 8), counter]
        let nonce = macLE + head[2..<5] + ext
        let sealed = AESCCM(key: key16, tagLength: 4)!.encrypt(objects, nonce: nonce, aad: [0x11])!
        return head + macLE + sealed.ciphertext + ext + sealed.tag
    }

    /// A legacy v2/v3 frame (MAC included) of `product` sealed with `key12`: the key expanded to
    /// 16 bytes, the first byte of the 16-byte tag last.
    static func legacy(_ product: UInt16, counter: UInt8, _ objects: [UInt8], version: UInt8 = 3, key: [UInt8] = key12) -> [UInt8] {
        let head: [UInt8] = [0x58, version << 4, UInt8(product & 0xFF), UInt8(product >> 8), counter]
        let expanded = Array(key[0..<6]) + [0x8D, 0x3D, 0x3C, 0x97] + Array(key[6..<12])
        let random: [UInt8] = [0, 0, 0]
        let nonce = head + random + macLE[0..<5]
        let sealed = AESCCM(key: expanded, tagLength: 16)!.encrypt(objects, nonce: nonce, aad: [0x11])!
        return head + macLE + sealed.ciphertext + random + [sealed.tag[0]]
    }

    static func decode(_ data: [UInt8], key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        XiaomiDecoder.decode(AdvertisementFrame(address: address, serviceData: [XiaomiDecoderTests.fe95: data]), key: key)
    }

    @Test func v4AndV5() throws {
        // -5.3 °C (0x1004 = ffcb), extended counter 0x020100: counter 0x02010010.
        let frame = Self.v5(0x055B, counter: 0x10, ext: [0x00, 0x01, 0x02], [0x04, 0x10, 0x02, 0xCB, 0xFF])
        let d = try #require(try Self.decode(frame, key: Self.key16)?.get())
        #expect(d.model == "LYWSD03MMC" && d.encrypted && d.packetID == 0x10)
        #expect(d.counter == 0x0201_0010 && d.counterBits == 32)
        #expect(XiaomiDecoderTests.json(d) == #"{"temperature":-5.3}"#)
        #expect(Self.decode(frame, key: nil) == .failure(.encryptedWithoutKey))
        #expect(Self.decode(frame, key: Self.key12) == .failure(.invalidKey(12)))
        var wrong = Self.key16
        wrong[15] ^= 1
        #expect(Self.decode(frame, key: wrong) == .failure(.badMIC))
        // Cut inside the MIC: the MIC no longer verifies, or the frame is too short.
        for n in 11..<frame.count {
            if case .success? = Self.decode(Array(frame[..<n]), key: Self.key16) { Issue.record("prefix \(n) decoded") }
        }
        // v4, humidity 45.6 %.
        let v4 = Self.v5(0x055B, counter: 0xFF, ext: [7, 0, 0], [0x06, 0x10, 0x02, 0xC8, 0x01], version: 4)
        #expect(try Self.decode(v4, key: Self.key16)?.get().values["humidity"] == .number(45.6))
        // The frame counter wraps, the extended counter carries: still increasing.
        var guardian = BTHomeReplayGuard()
        let c1 = try #require(try Self.decode(Self.v5(0x055B, counter: 0xFF, ext: [7, 0, 0], [0x0A, 0x10, 0x01, 0x5D]), key: Self.key16)?.get())
        let c2 = try #require(try Self.decode(Self.v5(0x055B, counter: 0x00, ext: [8, 0, 0], [0x0A, 0x10, 0x01, 0x5D]), key: Self.key16)?.get())
        let first = guardian.accept(counter: c1.counter!, bits: c1.counterBits)
        let second = guardian.accept(counter: c2.counter!, bits: c2.counterBits)
        let replay = guardian.accept(counter: c1.counter!, bits: c1.counterBits)
        #expect(first && second && !replay)
    }

    @Test func legacyV2AndV3() throws {
        // CGG1 (0x0347): -1.2 °C, 55.5 %.
        let frame = Self.legacy(0x0347, counter: 0x42, [0x0D, 0x10, 0x04, 0xF4, 0xFF, 0x2B, 0x02])
        let d = try #require(try Self.decode(frame, key: Self.key12)?.get())
        #expect(d.model == "CGG1" && d.encrypted && d.packetID == 0x42 && d.counter == 0x42 && d.counterBits == 8)
        #expect(XiaomiDecoderTests.json(d) == #"{"temperature":-1.2,"humidity":55.5}"#)
        #expect(Self.decode(frame, key: nil) == .failure(.encryptedWithoutKey))
        #expect(Self.decode(frame, key: Self.key16) == .failure(.invalidKey(16)))
        // The wrong key (one digit off, xiaomi-ble's test_bindkey_wrong_legacy key): the 1-byte MIC fails.
        let wrong = XiaomiDecoderTests.bytes("b853075158487aa39a5b5ea9")
        #expect(Self.decode(frame, key: wrong) == .failure(.badMIC))
        var flipped = frame
        flipped[12] ^= 0x01
        #expect(Self.decode(flipped, key: Self.key12) == .failure(.badMIC))
        // v2, battery 80 %.
        let v2 = Self.legacy(0x0347, counter: 0x43, [0x0A, 0x10, 0x01, 0x50], version: 2)
        #expect(try Self.decode(v2, key: Self.key12)?.get().values["battery"] == .integer(80))
        // xiaomi-ble's test_Xiaomi_YLKG07YL_press: a dimmer press (0x1001, not read here) with the
        // right key: no reading (nil); with the wrong key: the MIC byte (0x99) does not match.
        let press = XiaomiDecoderTests.bytes("5830b603d28b98c54124f8c3491476757e00000099")
        let dimmer = AdvertisementFrame(address: BluetoothAddress("F8:24:41:C5:98:8B")!, serviceData: [XiaomiDecoderTests.fe95: press])
        #expect(XiaomiDecoder.decode(dimmer, key: Self.key12) == nil)
        #expect(XiaomiDecoder.decode(dimmer, key: wrong) == .failure(.badMIC))
    }

    @Test func legacyCounterWrapsThroughTheReplayGuard() throws {
        var guardian = BTHomeReplayGuard()
        var counters: [UInt32] = []
        for c: UInt8 in [0xFE, 0xFF, 0x00, 0x01] {
            let d = try #require(try Self.decode(Self.legacy(0x0347, counter: c, [0x0A, 0x10, 0x01, 0x50]), key: Self.key12)?.get())
            counters.append(d.counter!)
            let accepted = guardian.accept(counter: d.counter!, bits: d.counterBits)
            #expect(accepted, "counter \(c)")
        }
        #expect(counters == [0xFE, 0xFF, 0x00, 0x01])
        let verdicts = [
            guardian.accept(counter: 0x01, bits: 8),  // repeat
            guardian.accept(counter: 0x00, bits: 8),  // older
            guardian.accept(counter: 0x82, bits: 8),  // 129 ahead: taken as behind
            guardian.accept(counter: 0x80, bits: 8),  // 127 ahead
        ]
        #expect(verdicts == [false, false, false, true])
        #expect(guardian.lastCounter == 0x80)
        // The 32-bit behaviour is unchanged.
        var plain = BTHomeReplayGuard()
        let wide = [
            plain.accept(counter: 5), plain.accept(counter: 5), plain.accept(counter: 4), plain.accept(counter: 0xFFFF_FFFF),
            plain.accept(counter: 0, bits: 32),
        ]
        #expect(wide == [true, false, false, true, false])
    }

    @Test func configAcceptsTheTwelveByteKey() throws {
        let yaml = """
            mqtt: { url: mqtt://h }
            devices:
              - match: { address: "A4:C1:38:11:22:33" }
                connection: advertisement
                advertisement: { bindkey: "b853075158487ca39a5b5ea9" }

            """
        let config = try BridgeConfig.parse(yaml: yaml, fileName: "b.yaml", environment: [:], hostName: "h")
        #expect(config.devices[0].connection == .advertisement(bindkey: Self.key12, timeout: .seconds(600)))
    }
}
