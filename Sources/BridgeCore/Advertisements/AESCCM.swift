/// AES-128 in CCM mode (NIST SP 800-38C, RFC 3610) on ``AES128``: the cipher of encrypted BTHome
/// advertisements (13-byte nonce, 4-byte tag) and of Xiaomi's MiBeacon.
///
/// ```swift
/// let ccm = AESCCM(key: bindkey)!                         // 16-byte key, 4-byte tag
/// let plain = ccm.decrypt(ciphertext, nonce: nonce, tag: mic)   // nil: wrong tag/key/nonce
/// ```
///
/// CCM is CBC-MAC over the formatted nonce and lengths (`B0`), the associated data and the plaintext, and CTR
/// encryption of the plaintext and of the MAC with counter blocks `A0`, `A1`, ... (SP 800-38C §6, appendix A).
public struct AESCCM: Sendable, CustomStringConvertible {
    /// The 16-byte key.
    public let key: [UInt8]
    /// The tag (MIC) length in bytes: 4, 6, ..., 16.
    public let tagLength: Int
    /// The key's schedule, computed once.
    let cipher: AES128

    /// Creates a cipher; nil unless `key` has 16 bytes and `tagLength` is one of 4, 6, ..., 16.
    public init?(key: [UInt8], tagLength: Int = 4) {
        guard (4...16).contains(tagLength), tagLength % 2 == 0, let cipher = AES128(key: key) else { return nil }
        self.key = key
        self.tagLength = tagLength
        self.cipher = cipher
    }

    /// Names the mode and tag length, never the key.
    public var description: String { "AESCCM(AES-128, \(tagLength)-byte tag)" }

    /// Encrypts `plaintext`: the ciphertext (as long as the plaintext) and the tag, or nil when
    /// the nonce is not 7...13 bytes long or the plaintext too long for its length field (15 minus the nonce's length
    /// bytes).
    public func encrypt(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8] = []) -> (ciphertext: [UInt8], tag: [UInt8])? {
        guard Self.fits(plaintext.count, nonce: nonce.count) else { return nil }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        let mac = nonce.withUnsafeBufferPointer { nonce in
            aad.withUnsafeBufferPointer { aad in
                plaintext.withUnsafeBufferPointer { plain in
                    ciphertext.withUnsafeMutableBufferPointer { out in
                        seal(nonce: nonce, aad: aad, input: plain, output: out, decrypting: false)
                    }
                }
            }
        }
        return (ciphertext, (0..<tagLength).map { mac[$0] })
    }

    /// Decrypts `ciphertext` and verifies `tag`: the plaintext, or nil when the tag does not
    /// verify (wrong key, nonce, data or tag), the tag is not ``tagLength`` bytes long, or the
    /// nonce is not 7...13 bytes long (or the ciphertext too long for its length field).
    public func decrypt(_ ciphertext: [UInt8], nonce: [UInt8], tag: [UInt8], aad: [UInt8] = []) -> [UInt8]? {
        guard tag.count == tagLength, Self.fits(ciphertext.count, nonce: nonce.count) else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let mac = nonce.withUnsafeBufferPointer { nonce in
            aad.withUnsafeBufferPointer { aad in
                ciphertext.withUnsafeBufferPointer { cipher in
                    plaintext.withUnsafeMutableBufferPointer { out in
                        seal(nonce: nonce, aad: aad, input: cipher, output: out, decrypting: true)
                    }
                }
            }
        }
        // Every byte compared, whatever the first difference.
        var difference: UInt8 = 0
        for index in 0..<tagLength { difference |= mac[index] ^ tag[index] }
        return difference == 0 ? plaintext : nil
    }

    /// Whether a nonce of `nonceLength` bytes is allowed (7...13) and leaves a length field (`15 - nonceLength`
    /// bytes) that holds `count`.
    static func fits(_ count: Int, nonce nonceLength: Int) -> Bool {
        guard (7...13).contains(nonceLength) else { return false }
        let lengthBytes = 15 - nonceLength
        return lengthBytes >= 8 || count >> (8 * lengthBytes) == 0
    }

    /// CTR over `input` into `output` and CBC-MAC over the plaintext (`input` when encrypting, `output` when
    /// decrypting): the encrypted MAC, of which the tag is the first ``tagLength`` bytes.
    func seal(
        nonce: UnsafeBufferPointer<UInt8>, aad: UnsafeBufferPointer<UInt8>, input: UnsafeBufferPointer<UInt8>,
        output: UnsafeMutableBufferPointer<UInt8>, decrypting: Bool
    ) -> SIMD16<UInt8> {
        let lengthBytes = 15 - nonce.count
        // A_i: flags L - 1, the nonce, i in the last L bytes.
        var counter = SIMD16<UInt8>()
        counter[0] = UInt8(lengthBytes - 1)
        for index in 0..<nonce.count { counter[1 + index] = nonce[index] }
        let s0 = cipher.encrypt(counter)
        var offset = 0
        var index: UInt64 = 1
        while offset < input.count {
            for byte in 0..<min(lengthBytes, 8) { counter[15 - byte] = UInt8(truncatingIfNeeded: index >> (8 * byte)) }
            let stream = cipher.encrypt(counter)
            let count = min(16, input.count - offset)
            for byte in 0..<count { output[offset + byte] = input[offset + byte] ^ stream[byte] }
            offset += count
            index += 1
        }
        // B0: flags (Adata, (t - 2) / 2, L - 1), the nonce, the message length in the last L bytes.
        var b0 = SIMD16<UInt8>()
        b0[0] = (aad.isEmpty ? 0 : 0x40) | UInt8((tagLength - 2) / 2) << 3 | UInt8(lengthBytes - 1)
        for index in 0..<nonce.count { b0[1 + index] = nonce[index] }
        for byte in 0..<min(lengthBytes, 8) { b0[15 - byte] = UInt8(truncatingIfNeeded: input.count >> (8 * byte)) }
        var mac = cipher.encrypt(b0)
        if !aad.isEmpty { mac = macAssociatedData(aad, mac) }
        let plaintext = decrypting ? UnsafeBufferPointer(output) : input
        offset = 0
        while offset < plaintext.count {
            var block = SIMD16<UInt8>()
            let count = min(16, plaintext.count - offset)
            for byte in 0..<count { block[byte] = plaintext[offset + byte] }
            mac = cipher.encrypt(mac ^ block)
            offset += count
        }
        return mac ^ s0
    }

    /// The CBC-MAC continued over the associated data: its length (2 bytes below 2^16 - 2^8; else 0xFFFE and 4 bytes,
    /// or 0xFFFF and 8), then the data, zero-padded to a whole block (SP 800-38C A.2.2).
    func macAssociatedData(_ aad: UnsafeBufferPointer<UInt8>, _ start: SIMD16<UInt8>) -> SIMD16<UInt8> {
        var mac = start
        var block = SIMD16<UInt8>()
        var fill = 0
        let length = UInt64(aad.count)
        if length < 0xFF00 {
            block[0] = UInt8(truncatingIfNeeded: length >> 8)
            block[1] = UInt8(truncatingIfNeeded: length)
            fill = 2
        } else {
            let size = length >> 32 == 0 ? 4 : 8
            block[0] = 0xFF
            block[1] = size == 4 ? 0xFE : 0xFF
            for byte in 0..<size { block[2 + byte] = UInt8(truncatingIfNeeded: length >> UInt64(8 * (size - 1 - byte))) }
            fill = 2 + size
        }
        for byte in aad {
            block[fill] = byte
            fill += 1
            if fill == 16 {
                mac = cipher.encrypt(mac ^ block)
                block = SIMD16<UInt8>()
                fill = 0
            }
        }
        if fill > 0 { mac = cipher.encrypt(mac ^ block) }
        return mac
    }
}
