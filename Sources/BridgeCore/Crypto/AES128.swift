/// The AES-128 block cipher, forward direction only (FIPS-197): what CCM, CTR and the Bluetooth security
/// function `e` need, and nothing else (no decryption, no other key size). Written from the standard, in pure Swift,
/// so that BridgeCore has no C module below it.
///
/// ```swift
/// let aes = AES128(key: key)!                  // the key schedule, computed once and kept
/// let out = aes.encrypt(block)                 // one 16-byte block, SIMD16<UInt8>
/// ```
///
/// ## How
/// The state is four 32-bit words, one per column, the row-0 byte most significant (FIPS-197 §3.5 reads
/// the input column by column). A middle round is SubBytes, ShiftRows, MixColumns and AddRoundKey at once through
/// one 256-word table (``AESTables``): for an S-box output `s` the word is the MixColumns matrix's first column times
/// `s` (`2s, s, s, 3s`), and the other three columns are the same word rotated. The last round uses the S-box alone.
/// No allocation per block: the round keys are a fixed-size value, the state four locals.
///
/// Table lookups indexed by secret-dependent bytes are not constant-time: an attacker running code on the same CPU
/// and measuring cache timing could learn about the key. The bridge decrypts advertisements of its own devices on
/// its own machine; libcrypto (which this replaces) uses AES-NI where the CPU has it.
public struct AES128: Sendable {
    /// The block and key size in bytes.
    public static let blockSize = 16

    /// The key schedule (FIPS-197 §5.2): 44 words, `w[4r ..< 4r + 4]` the key of round `r`; 48 words of storage.
    let schedule: (SIMD16<UInt32>, SIMD16<UInt32>, SIMD16<UInt32>)

    /// The cipher of a 16-byte key; nil unless `key` has 16 bytes.
    public init?(key: [UInt8]) {
        guard let cipher = key.withUnsafeBufferPointer({ AES128(key: $0) }) else { return nil }
        self = cipher
    }

    /// The cipher of a 16-byte key; nil unless `key` has 16 bytes.
    public init?(key: UnsafeBufferPointer<UInt8>) {
        guard key.count == Self.blockSize, let base = key.baseAddress else { return nil }
        var schedule = (SIMD16<UInt32>(), SIMD16<UInt32>(), SIMD16<UInt32>())
        AESTables.sbox.withUnsafeBufferPointer { sbox in
            withUnsafeMutableBytes(of: &schedule) { raw in
                let w = raw.bindMemory(to: UInt32.self)
                // w[i] = w[i - 4] xor temp, four words (one round key) at a time: temp is w[i - 1], except for the
                // first word of a round key, where it is SubWord(RotWord(w[i - 1])) xor Rcon[i / 4]. RotWord takes
                // [a0, a1, a2, a3] to [a1, a2, a3, a0]; Rcon[i / 4] is x^(i / 4 - 1) in GF(2^8), in the top byte.
                var w0 = Self.word(base, 0)
                var w1 = Self.word(base, 4)
                var w2 = Self.word(base, 8)
                var w3 = Self.word(base, 12)
                var rcon: UInt8 = 0x01
                for round in 0..<11 {
                    if round > 0 {
                        w0 ^= Self.subWord(w3 << 8 | w3 >> 24, sbox) ^ UInt32(rcon) << 24
                        w1 ^= w0
                        w2 ^= w1
                        w3 ^= w2
                        rcon = AESTables.times2(rcon)
                    }
                    w[4 * round] = w0
                    w[4 * round + 1] = w1
                    w[4 * round + 2] = w2
                    w[4 * round + 3] = w3
                }
            }
        }
        self.schedule = schedule
    }

    /// Bytes `at ..< at + 4` of the key as a big-endian word.
    @inline(__always)
    static func word(_ bytes: UnsafePointer<UInt8>, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    /// The S-box applied to each byte of a word.
    @inline(__always)
    static func subWord(_ word: UInt32, _ sbox: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(sbox[Int(word >> 24)]) << 24 | UInt32(sbox[Int(word >> 16 & 0xFF)]) << 16
            | UInt32(sbox[Int(word >> 8 & 0xFF)]) << 8 | UInt32(sbox[Int(word & 0xFF)])
    }

    /// Encrypts one block (FIPS-197 §5.1, Nr = 10).
    public func encrypt(_ block: SIMD16<UInt8>) -> SIMD16<UInt8> {
        AESTables.mix.withUnsafeBufferPointer { t in
            AESTables.sbox.withUnsafeBufferPointer { sbox in
                withUnsafeBytes(of: schedule) { raw in
                    let k = raw.bindMemory(to: UInt32.self)
                    var s0 = Self.word(block, 0) ^ k[0]
                    var s1 = Self.word(block, 4) ^ k[1]
                    var s2 = Self.word(block, 8) ^ k[2]
                    var s3 = Self.word(block, 12) ^ k[3]
                    for round in 1..<10 {
                        let r = 4 * round
                        // Output column c takes row j from input column c + j (ShiftRows), then MixColumns.
                        let n0 = Self.column(s0, s1, s2, s3, t) ^ k[r]
                        let n1 = Self.column(s1, s2, s3, s0, t) ^ k[r + 1]
                        let n2 = Self.column(s2, s3, s0, s1, t) ^ k[r + 2]
                        let n3 = Self.column(s3, s0, s1, s2, t) ^ k[r + 3]
                        s0 = n0
                        s1 = n1
                        s2 = n2
                        s3 = n3
                    }
                    let o0 = Self.lastColumn(s0, s1, s2, s3, sbox) ^ k[40]
                    let o1 = Self.lastColumn(s1, s2, s3, s0, sbox) ^ k[41]
                    let o2 = Self.lastColumn(s2, s3, s0, s1, sbox) ^ k[42]
                    let o3 = Self.lastColumn(s3, s0, s1, s2, sbox) ^ k[43]
                    return Self.block(o0, o1, o2, o3)
                }
            }
        }
    }

    /// Encrypts the 16 bytes at `input` into the 16 bytes at `output` (which may be the same).
    public func encrypt(_ input: UnsafeRawPointer, into output: UnsafeMutableRawPointer) {
        output.storeBytes(of: encrypt(input.loadUnaligned(as: SIMD16<UInt8>.self)), as: SIMD16<UInt8>.self)
    }

    /// Bytes `at ..< at + 4` of `block` as a big-endian word (a column, row 0 most significant).
    @inline(__always)
    static func word(_ block: SIMD16<UInt8>, _ at: Int) -> UInt32 {
        UInt32(bigEndian: unsafeBitCast(block, to: SIMD4<UInt32>.self)[at >> 2])
    }

    /// Four columns back into a block.
    @inline(__always)
    static func block(_ c0: UInt32, _ c1: UInt32, _ c2: UInt32, _ c3: UInt32) -> SIMD16<UInt8> {
        unsafeBitCast(SIMD4<UInt32>(c0.bigEndian, c1.bigEndian, c2.bigEndian, c3.bigEndian), to: SIMD16<UInt8>.self)
    }

    /// SubBytes, ShiftRows and MixColumns for one output column: row 0 from `a`, row 1 from `b`, row 2 from `c`,
    /// row 3 from `d`; the table word of row `j` rotated right by `8j` bits is the matrix's column `j` times `s`.
    @inline(__always)
    static func column(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ t: UnsafeBufferPointer<UInt32>) -> UInt32 {
        let r0 = t[Int(a >> 24)]
        let r1 = t[Int(b >> 16 & 0xFF)]
        let r2 = t[Int(c >> 8 & 0xFF)]
        let r3 = t[Int(d & 0xFF)]
        return r0 ^ (r1 >> 8 | r1 << 24) ^ (r2 >> 16 | r2 << 16) ^ (r3 >> 24 | r3 << 8)
    }

    /// SubBytes and ShiftRows for one output column of the last round (no MixColumns).
    @inline(__always)
    static func lastColumn(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ sbox: UnsafeBufferPointer<UInt8>)
        -> UInt32
    {
        UInt32(sbox[Int(a >> 24)]) << 24 | UInt32(sbox[Int(b >> 16 & 0xFF)]) << 16
            | UInt32(sbox[Int(c >> 8 & 0xFF)]) << 8 | UInt32(sbox[Int(d & 0xFF)])
    }
}
