/// AES's tables, computed once from their definitions in FIPS-197 rather than typed in: the S-box (§5.1.1: the
/// multiplicative inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then the affine transformation) and the
/// round table ``mix`` that ``AES128`` looks up.
enum AESTables {
    /// `b · x` in GF(2^8) (FIPS-197 §4.2.1, `xtime`).
    @inline(__always)
    static func times2(_ b: UInt8) -> UInt8 {
        b << 1 ^ (b & 0x80 != 0 ? 0x1B : 0)
    }

    /// The S-box: `sbox[b]` for every byte `b`.
    static let sbox: [UInt8] = {
        // Powers of the generator x + 1 (0x03) give every non-zero element once: log and antilog tables, with
        // which the inverse of g^i is g^(255 - i).
        var power = [UInt8](repeating: 0, count: 255)
        var log = [Int](repeating: 0, count: 256)
        var value: UInt8 = 1
        for i in 0..<255 {
            power[i] = value
            log[Int(value)] = i
            value = times2(value) ^ value
        }
        var table = [UInt8](repeating: 0, count: 256)
        for b in 0..<256 {
            let inverse: UInt8 = b == 0 ? 0 : power[(255 - log[b]) % 255]
            // b'_i = b_i ^ b_(i+4) ^ b_(i+5) ^ b_(i+6) ^ b_(i+7) ^ c_i, c = 0x63: the byte xor four left rotations.
            var affine = inverse ^ 0x63
            for shift: UInt8 in 1...4 { affine ^= inverse << shift | inverse >> (8 - shift) }
            table[b] = affine
        }
        return table
    }()

    /// For each byte `b`, with `s = sbox[b]`: the word `2s, s, s, 3s` (most significant first), the MixColumns matrix's
    /// first column times `s`. Rotated right by 8, 16 and 24 bits it is the second, third and fourth column times `s`.
    static let mix: [UInt32] = sbox.map { s in
        let two = times2(s)
        let three = two ^ s
        return UInt32(two) << 24 | UInt32(s) << 16 | UInt32(s) << 8 | UInt32(three)
    }
}
