import Testing

@testable import BridgeCore

/// AES-128-CTR against NIST SP 800-38A's known-answer vectors (F.5.1 encrypt, F.5.2 decrypt).
@Suite struct AESCTRTests {
    static let key = MakerFrames.bytes("2b7e151628aed2a6abf7158809cf4f3c")
    static let counter = MakerFrames.bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
    static let plain = MakerFrames.bytes(
        "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
            + " 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710")
    static let cipher = MakerFrames.bytes(
        "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
            + " 5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee")

    @Test func nistF51Encrypt() throws {
        let ctr = try #require(AESCTR(key: Self.key))
        #expect(ctr.apply(Self.plain, counterBlock: Self.counter) == Self.cipher)
        // A partial last block: the keystream's first bytes.
        #expect(ctr.apply(Array(Self.plain[0..<21]), counterBlock: Self.counter) == Array(Self.cipher[0..<21]))
        #expect(ctr.apply([], counterBlock: Self.counter) == [])
    }

    @Test func nistF52Decrypt() throws {
        let ctr = try #require(AESCTR(key: Self.key))
        #expect(ctr.apply(Self.cipher, counterBlock: Self.counter) == Self.plain)
        // The third block alone, from the third counter block (…fdff + 2 = …ff01: the carry).
        let third = MakerFrames.bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdff01")
        #expect(ctr.apply(Array(Self.cipher[32..<48]), counterBlock: third) == Array(Self.plain[32..<48]))
    }

    @Test func wrongLengthsAreRefused() {
        #expect(AESCTR(key: Array(Self.key[0..<15])) == nil)
        #expect(AESCTR(key: Self.key + [0]) == nil)
        #expect(AESCTR(key: Self.key)?.apply(Self.plain, counterBlock: Array(Self.counter[0..<15])) == nil)
        #expect(AESCTR(key: Self.key)?.description == "AESCTR(AES-128)")
    }
}
