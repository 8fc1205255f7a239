import Testing

@testable import BridgeCore

/// AES-CCM (``AESCCM``, pure Swift) against published test vectors, and encrypted BTHome: the format's own
/// encryption example, wrong MIC / key / address, missing or malformed keys, downgrades, replays.
@Suite struct AdvertisementEncryptionTests {
    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex)) ?? []
    }

    // MARK: AES-CCM

    /// NIST SP 800-38C, appendix C, example 1: 7-byte nonce, 8-byte associated data, 4-byte tag.
    @Test func nistExample1() throws {
        let ccm = try #require(AESCCM(key: Self.bytes("404142434445464748494a4b4c4d4e4f"), tagLength: 4))
        let nonce = Self.bytes("10111213141516")
        let aad = Self.bytes("0001020304050607")
        let sealed = try #require(ccm.encrypt(Self.bytes("20212223"), nonce: nonce, aad: aad))
        #expect(sealed.ciphertext == Self.bytes("7162015b"))
        #expect(sealed.tag == Self.bytes("4dac255d"))
        #expect(ccm.decrypt(Self.bytes("7162015b"), nonce: nonce, tag: Self.bytes("4dac255d"), aad: aad) == Self.bytes("20212223"))
        #expect(ccm.decrypt(Self.bytes("7162015b"), nonce: nonce, tag: Self.bytes("4dac255e"), aad: aad) == nil)
        #expect(ccm.decrypt(Self.bytes("7162015c"), nonce: nonce, tag: Self.bytes("4dac255d"), aad: aad) == nil)
        #expect(ccm.decrypt(Self.bytes("7162015b"), nonce: nonce, tag: Self.bytes("4dac255d"), aad: []) == nil)
    }

    /// RFC 3610, packet vector #1: 13-byte nonce, 8-byte associated data, 8-byte tag.
    @Test func rfc3610PacketVector1() throws {
        let ccm = try #require(AESCCM(key: Self.bytes("c0c1c2c3c4c5c6c7c8c9cacbcccdcecf"), tagLength: 8))
        let nonce = Self.bytes("00000003020100a0a1a2a3a4a5")
        let aad = Self.bytes("0001020304050607")
        let plaintext = Self.bytes("08090a0b0c0d0e0f101112131415161718191a1b1c1d1e")
        let sealed = try #require(ccm.encrypt(plaintext, nonce: nonce, aad: aad))
        #expect(sealed.ciphertext == Self.bytes("588c979a61c663d2f066d0c2c0f989806d5f6b61dac384"))
        #expect(sealed.tag == Self.bytes("17e8d12cfdf926e0"))
        #expect(ccm.decrypt(sealed.ciphertext, nonce: nonce, tag: sealed.tag, aad: aad) == plaintext)
    }

    @Test func emptyPlaintextAndParameterChecks() throws {
        let ccm = try #require(AESCCM(key: [UInt8](repeating: 0, count: 16)))
        let nonce = [UInt8](repeating: 0, count: 13)
        // The tag of nothing (checked against Python's cryptography package).
        let sealed = try #require(ccm.encrypt([], nonce: nonce))
        #expect(sealed.ciphertext.isEmpty)
        #expect(sealed.tag == Self.bytes("b3c06721"))
        #expect(ccm.decrypt([], nonce: nonce, tag: sealed.tag) == [])
        #expect(ccm.decrypt([], nonce: nonce, tag: Self.bytes("b3c06722")) == nil)
        // Keys, tags and nonces of the wrong size.
        #expect(AESCCM(key: [UInt8](repeating: 0, count: 15)) == nil)
        #expect(AESCCM(key: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(AESCCM(key: [UInt8](repeating: 0, count: 16), tagLength: 5) == nil)
        #expect(AESCCM(key: [UInt8](repeating: 0, count: 16), tagLength: 18) == nil)
        #expect(ccm.encrypt([1], nonce: [UInt8](repeating: 0, count: 6)) == nil)
        #expect(ccm.encrypt([1], nonce: [UInt8](repeating: 0, count: 14)) == nil)
        #expect(ccm.decrypt([1], nonce: nonce, tag: [1, 2, 3]) == nil)
        #expect(!ccm.description.contains("00000000"))
    }

    // MARK: Encrypted BTHome

    /// bthome.io/encryption's example: MAC 54:48:E6:8F:80:A5, bindkey 231d39c1…, temperature
    /// 25.06 °C and humidity 50.55 % (02CA09 03BF13) sealed with counter bytes 00 11 22 33.
    static let exampleAddress = BluetoothAddress("54:48:E6:8F:80:A5")!
    static let exampleKey = bytes("231d39c1d7cc1ab1aee224cd096db932")
    static let exampleFrame = bytes("41a47266c95f730011223378237214")

    static func decode(_ data: [UInt8], bindkey: [UInt8]?, address: BluetoothAddress = exampleAddress)
        -> Result<DecodedAdvertisement, AdvertisementDecodeError>?
    {
        AdvertisementDecoder.decode(
            AdvertisementFrame(address: address, serviceData: [BluetoothUUID(uuid16: 0xFCD2): data], manufacturerData: [:]),
            bindkey: bindkey)
    }

    @Test func documentationExampleDecrypts() throws {
        let decoded = try #require(try Self.decode(Self.exampleFrame, bindkey: Self.exampleKey)?.get())
        #expect(decoded.decoder == "bthome_v2")
        #expect(decoded.encrypted)
        #expect(decoded.counter == 0x3322_1100)
        #expect(!decoded.triggerBased)
        #expect(JSONValue.object(decoded.values).jsonString == #"{"temperature":25.06,"humidity":50.55}"#)
    }

    @Test func encoderReproducesTheDocumentationExample() throws {
        let sealed = BTHomeEncoder.encrypt(
            Self.bytes("02CA0903BF13"), key: Self.exampleKey, counter: 0x3322_1100, address: Self.exampleAddress)
        #expect(sealed == Self.exampleFrame)
    }

    @Test func wrongMICKeyOrAddressIsRejected() {
        for index in Self.exampleFrame.indices.dropFirst() {
            var tampered = Self.exampleFrame
            tampered[index] ^= 0x01
            #expect(Self.decode(tampered, bindkey: Self.exampleKey) == .failure(.badMIC), "byte \(index) flipped")
        }
        var wrongKey = Self.exampleKey
        wrongKey[0] ^= 0x80
        #expect(Self.decode(Self.exampleFrame, bindkey: wrongKey) == .failure(.badMIC))
        #expect(
            Self.decode(Self.exampleFrame, bindkey: Self.exampleKey, address: BluetoothAddress("54:48:E6:8F:80:A6")!)
                == .failure(.badMIC))
        // The device-information byte is part of the nonce: setting the trigger bit breaks the MIC.
        var info = Self.exampleFrame
        info[0] |= 0x04
        #expect(Self.decode(info, bindkey: Self.exampleKey) == .failure(.badMIC))
    }

    @Test func keyProblems() {
        #expect(Self.decode(Self.exampleFrame, bindkey: nil) == .failure(.encryptedWithoutKey))
        #expect(Self.decode(Self.exampleFrame, bindkey: Array(Self.exampleKey.prefix(15))) == .failure(.invalidKey(15)))
        #expect(Self.decode(Self.exampleFrame, bindkey: []) == .failure(.invalidKey(0)))
        // A plaintext frame from a device with a key: a downgrade.
        #expect(Self.decode(Self.bytes("4002CA09"), bindkey: Self.exampleKey) == .failure(.unencryptedWithKey))
        // Too short for counter and MIC.
        #expect(Self.decode(Self.bytes("41 00112233 782372"), bindkey: Self.exampleKey) == .failure(.truncated("encryption counter and MIC")))
        #expect(Self.decode(Self.bytes("41"), bindkey: Self.exampleKey) == .failure(.truncated("encryption counter and MIC")))
    }

    @Test func encryptedFrameWithIncludedMAC() throws {
        // Bit 1: the nonce uses the MAC in the frame, not the advertiser's (random) address.
        let mac = Self.exampleAddress.bytes
        let counter = Self.bytes("05000000")
        let nonce = mac + [0xD2, 0xFC, 0x43] + counter
        let sealed = try #require(AESCCM(key: Self.exampleKey)?.encrypt(Self.bytes("0161"), nonce: nonce))
        let frame = [0x43] + mac.reversed() + sealed.ciphertext + counter + sealed.tag
        let decoded = try #require(
            try Self.decode(frame, bindkey: Self.exampleKey, address: BluetoothAddress("C0:00:00:00:00:01")!)?.get())
        #expect(decoded.counter == 5)
        #expect(JSONValue.object(decoded.values).jsonString == #"{"battery":97}"#)
    }

    @Test func encryptedRoundTripWithEveryFlag() throws {
        let key = Self.bytes("00112233445566778899aabbccddeeff")
        let address = BluetoothAddress("C8:12:34:56:78:9A")!
        let objects = [
            BTHomeEncoder.Object(id: 0x00, raw: 200), try #require(BTHomeEncoder.Object(id: 0x02, value: -12.5)),
            try #require(BTHomeEncoder.Object.button("press")),
        ]
        for trigger in [false, true] {
            let data = try #require(
                BTHomeEncoder.encryptedServiceData(objects, key: key, counter: 0xFFFF_FFFE, address: address, triggerBased: trigger))
            #expect(data.count == 1 + 2 + 3 + 2 + 8)
            let decoded = try #require(try Self.decode(data, bindkey: key, address: address)?.get())
            #expect(decoded.packetID == 200)
            #expect(decoded.counter == 0xFFFF_FFFE)
            #expect(decoded.triggerBased == trigger)
            #expect(decoded.encrypted)
            #expect(JSONValue.object(decoded.values).jsonString == #"{"temperature":-12.5,"button":"press"}"#)
        }
        #expect(BTHomeEncoder.encryptedServiceData(objects, key: [1, 2, 3], counter: 1, address: address) == nil)
        // Objects that do not decode still encrypt; the MIC verifies, then decoding fails on them.
        let unknown = try #require(BTHomeEncoder.encrypt([0x30, 0x01], key: key, counter: 9, address: address))
        #expect(Self.decode(unknown, bindkey: key, address: address) == .failure(.unknownObject(0x30)))
        let empty = try #require(BTHomeEncoder.encrypt([], key: key, counter: 9, address: address))
        #expect(try Self.decode(empty, bindkey: key, address: address)?.get().values == JSONObject())
    }

    // MARK: Replay guard

    @Test func replayGuardWantsIncreasingCounters() {
        var guardian = BTHomeReplayGuard()
        #expect(guardian.lastCounter == nil)
        // The first counter is accepted whatever it is; then a repeat (the same advertisement
        // again, or a replay) and older counters are not.
        let counters: [UInt32] = [100, 100, 99, 0, 101, 5000, .max, .max]
        let accepted = counters.map { guardian.accept(counter: $0) }
        #expect(accepted == [true, false, false, false, true, true, true, false])
        #expect(guardian.lastCounter == .max)
        guardian.reset()
        #expect(guardian.lastCounter == nil)
        let afterReset = guardian.accept(counter: 0)
        #expect(afterReset)
    }

    @Test func replayedFrameIsCaughtEndToEnd() throws {
        var guardian = BTHomeReplayGuard()
        let first = try #require(try Self.decode(Self.exampleFrame, bindkey: Self.exampleKey)?.get())
        let firstAccepted = guardian.accept(counter: try #require(first.counter))
        #expect(firstAccepted)
        // The same bytes again decode fine (the MIC is valid): the guard is what rejects them.
        let replayed = try #require(try Self.decode(Self.exampleFrame, bindkey: Self.exampleKey)?.get())
        let replayAccepted = guardian.accept(counter: try #require(replayed.counter))
        #expect(!replayAccepted)
        let next = try #require(
            BTHomeEncoder.encrypt(
                Self.bytes("02CA09"), key: Self.exampleKey, counter: 0x3322_1101, address: Self.exampleAddress))
        let decoded = try #require(try Self.decode(next, bindkey: Self.exampleKey)?.get())
        let nextAccepted = guardian.accept(counter: try #require(decoded.counter))
        #expect(nextAccepted)
    }
}
