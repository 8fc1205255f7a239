import Testing

@testable import BridgeCore

/// The pure-Swift AES-128 (``AES128``) and the modes on it (``AESCTR``, ``AESCCM``) against the standards' vectors:
/// FIPS-197 appendices A.1, B and C.1; SP 800-38A F.5.1 (CTR); SP 800-38C appendix C and RFC 3610 (CCM). Where a case
/// has no published vector (counter wrap-around, long messages, associated data of exactly one block's room), the
/// expected bytes were computed with Python's `cryptography` package (OpenSSL) and are marked so.
@Suite struct AES128Tests {
    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex.filter { $0 != " " })) ?? []
    }

    static func block(_ hex: String) -> SIMD16<UInt8> {
        let b = bytes(hex)
        var out = SIMD16<UInt8>()
        for index in 0..<16 { out[index] = b[index] }
        return out
    }

    /// The schedule's 44 words.
    static func words(_ aes: AES128) -> [UInt32] {
        withUnsafeBytes(of: aes.schedule) { Array($0.bindMemory(to: UInt32.self).prefix(44)) }
    }

    // MARK: The block cipher

    /// FIPS-197 §5.1.1's example (`{53}` → `{ed}`) and the corners of its S-box table (Figure 7).
    @Test func sboxFromItsDefinition() {
        #expect(AESTables.sbox[0x00] == 0x63)
        #expect(AESTables.sbox[0x01] == 0x7C)
        #expect(AESTables.sbox[0x53] == 0xED)
        #expect(AESTables.sbox[0xFF] == 0x16)
        #expect(Set(AESTables.sbox).count == 256)  // a permutation
    }

    /// FIPS-197 appendix A.1: the expansion of `2b7e1516…`, its first derived and last four words.
    @Test func keyExpansionAppendixA1() throws {
        let aes = try #require(AES128(key: Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")))
        let w = Self.words(aes)
        #expect(w[0] == 0x2B7E_1516)
        #expect(w[3] == 0x09CF_4F3C)
        #expect(Array(w[4..<8]) == [0xA0FA_FE17, 0x8854_2CB1, 0x23A3_3939, 0x2A6C_7605])
        #expect(Array(w[40..<44]) == [0xD014_F9A8, 0xC9EE_2589, 0xE13F_0CC8, 0xB663_0CA6])
    }

    /// FIPS-197 appendix B (the cipher example) and C.1 (AES-128 example vector).
    @Test func cipherAppendicesBAndC1() throws {
        let b = try #require(AES128(key: Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")))
        #expect(b.encrypt(Self.block("3243f6a8885a308d313198a2e0370734")) == Self.block("3925841d02dc09fbdc118597196a0b32"))
        let c1 = try #require(AES128(key: Self.bytes("000102030405060708090a0b0c0d0e0f")))
        #expect(c1.encrypt(Self.block("00112233445566778899aabbccddeeff")) == Self.block("69c4e0d86a7b0430d8cdb78070b4c55a"))
        // The raw-pointer form, in place.
        var inPlace = Self.bytes("00112233445566778899aabbccddeeff")
        inPlace.withUnsafeMutableBytes { c1.encrypt(UnsafeRawPointer($0.baseAddress!), into: $0.baseAddress!) }
        #expect(inPlace == Self.bytes("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    @Test func keysOfTheWrongSize() {
        #expect(AES128(key: [UInt8](repeating: 0, count: 15)) == nil)
        #expect(AES128(key: [UInt8](repeating: 0, count: 17)) == nil)
        #expect(AES128(key: []) == nil)
    }

    // MARK: CTR

    /// SP 800-38A F.5.1, CTR-AES128.Encrypt (four blocks; the counter's low byte carries from ff into the next).
    @Test func ctrF51() throws {
        let ctr = try #require(AESCTR(key: Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")))
        let plain = Self.bytes(
            "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710")
        let cipher = Self.bytes(
            "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff 5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee")
        let counter = Self.bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        #expect(ctr.apply(plain, counterBlock: counter) == cipher)
        #expect(ctr.apply(cipher, counterBlock: counter) == plain)  // F.5.2: decryption is the same operation
        // A partial last block: the prefix of the same stream.
        #expect(ctr.apply(Array(plain.prefix(37)), counterBlock: counter) == Array(cipher.prefix(37)))
    }

    /// The counter is one 128-bit big-endian integer: it carries from the low 64 bits into the high ones, and wraps
    /// from all ones to zero (expected bytes: Python `cryptography`, OpenSSL's CTR).
    @Test func ctrCarriesAcrossTheWholeBlock() throws {
        let ctr = try #require(AESCTR(key: Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")))
        let zeros = [UInt8](repeating: 0, count: 40)
        #expect(
            ctr.apply(zeros, counterBlock: Self.bytes("0011223344556677ffffffffffffffff"))
                == Self.bytes("f627ceadf02f7cb53bf11c061ff3bdfc6c9c04ee5fae03d668ef7ea65602d73a394b96350f516b84"))
        #expect(
            ctr.apply(Array(zeros.prefix(20)), counterBlock: [UInt8](repeating: 0xFF, count: 16))
                == Self.bytes("8af2860142f786f409307c1a3f7eaaac7df76b0c"))
    }

    // MARK: CCM

    /// SP 800-38C appendix C, examples 2 to 4 (example 1 is in AdvertisementEncryptionTests). Example 4's 65,536
    /// bytes of associated data take the `ff fe` + 4-byte length encoding.
    @Test func ccmSP80038CExamples() throws {
        let key = Self.bytes("404142434445464748494a4b4c4d4e4f")
        let cases: [(nonce: String, aad: [UInt8], plain: String, tag: Int, sealed: String)] = [
            (
                "1011121314151617", Self.bytes("000102030405060708090a0b0c0d0e0f"), "202122232425262728292a2b2c2d2e2f", 6,
                "d2a1f0e051ea5f62081a7792073d593d1fc64fbfaccd"
            ),
            (
                "101112131415161718191a1b", Self.bytes("000102030405060708090a0b0c0d0e0f10111213"),
                "202122232425262728292a2b2c2d2e2f3031323334353637", 8,
                "e3b201a9f5b71a7a9b1ceaeccd97e70b6176aad9a4428aa5484392fbc1b09951"
            ),
            (
                "101112131415161718191a1b1c", (0..<65536).map { UInt8(truncatingIfNeeded: $0) },
                "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f", 14,
                "69915dad1e84c6376a68c2967e4dab615ae0fd1faec44cc484828529463ccf72b4ac6bec93e8598e7f0dadbcea5b"
            ),
        ]
        for c in cases {
            try Self.checkCCM(key: key, nonce: c.nonce, aad: c.aad, plain: c.plain, tagLength: c.tag, sealed: c.sealed)
        }
    }

    /// RFC 3610 packet vectors #2 and #3 (#1 is in AdvertisementEncryptionTests): 13-byte nonces, 8-byte tags,
    /// plaintexts of 24 and 25 bytes (a partial last block).
    @Test func ccmRFC3610PacketVectors() throws {
        let key = Self.bytes("c0c1c2c3c4c5c6c7c8c9cacbcccdcecf")
        let aad = Self.bytes("0001020304050607")
        try Self.checkCCM(
            key: key, nonce: "00000004030201a0a1a2a3a4a5", aad: aad, plain: "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            tagLength: 8, sealed: "72c91a36e135f8cf291ca894085c87e3cc15c439c9e43a3ba091d56e10400916")
        try Self.checkCCM(
            key: key, nonce: "00000005040302a0a1a2a3a4a5", aad: aad, plain: "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
            tagLength: 8, sealed: "51b1e5f44a197d1da46b0f8e2d282ae871e838bb64da8596574adaa76fbd9fb0c5")
    }

    /// Cases without a published vector (expected bytes: Python `cryptography`): 100 bytes and a 16-byte tag without
    /// associated data; 14 bytes of associated data (with its 2-byte length, exactly one block) and a 7-byte nonce.
    @Test func ccmLongMessageAndOneBlockOfAssociatedData() throws {
        try Self.checkCCM(
            key: Self.bytes("000102030405060708090a0b0c0d0e0f"), nonce: String(repeating: "00", count: 13), aad: [],
            plain: Hex.encode((0..<100).map { UInt8($0) }), tagLength: 16,
            sealed: "7fe7e5f96f02f91e05a87eccdbc4fd6d5caccb1689a3847900bd22c069f7c895a0ebfbfc73a34acb4943decc651bb48603aa207c"
                + "dba14c6cd4769941970ae38272ef6e574d5e9b11630997e2dbd0698e8e1ff7365765b1614bec72d3c17f6f2c743aa1dfc77dcad9b0"
                + "93aad7ac6c4ef79c174ba6")
        try Self.checkCCM(
            key: Self.bytes("000102030405060708090a0b0c0d0e0f"), nonce: String(repeating: "01", count: 7),
            aad: (0..<14).map { UInt8($0) }, plain: "ababababab", tagLength: 10,
            sealed: "2d562f98ae83ce9d78236695e548bf")
    }

    /// The length field is `15 - nonce length` bytes: a 13-byte nonce leaves 2, so 65,536 bytes do not fit.
    @Test func ccmMessageTooLongForItsLengthField() throws {
        let ccm = try #require(AESCCM(key: [UInt8](repeating: 0, count: 16)))
        let nonce = [UInt8](repeating: 0, count: 13)
        #expect(ccm.encrypt([UInt8](repeating: 0, count: 65536), nonce: nonce) == nil)
        #expect(ccm.encrypt([UInt8](repeating: 0, count: 65535), nonce: nonce) != nil)
        #expect(ccm.encrypt([UInt8](repeating: 0, count: 65536), nonce: Array(nonce.prefix(12))) != nil)
    }

    /// Seals `plain` and checks ciphertext || tag against `sealed`, then opens it again and rejects a flipped tag bit.
    static func checkCCM(key: [UInt8], nonce: String, aad: [UInt8], plain: String, tagLength: Int, sealed: String) throws {
        let ccm = try #require(AESCCM(key: key, tagLength: tagLength))
        let nonce = bytes(nonce)
        let plain = bytes(plain)
        let result = try #require(ccm.encrypt(plain, nonce: nonce, aad: aad))
        #expect(result.ciphertext + result.tag == bytes(sealed))
        #expect(ccm.decrypt(result.ciphertext, nonce: nonce, tag: result.tag, aad: aad) == plain)
        var tag = result.tag
        tag[tag.count - 1] ^= 0x01
        #expect(ccm.decrypt(result.ciphertext, nonce: nonce, tag: tag, aad: aad) == nil)
    }
}
