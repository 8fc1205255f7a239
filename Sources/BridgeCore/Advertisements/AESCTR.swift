/// AES-128 in CTR mode (NIST SP 800-38A 6.5) on ``AES128``: the cipher of
/// Victron's Instant Readout advertisements. Encryption and decryption are the same operation.
///
/// ```swift
/// let ctr = AESCTR(key: key)!                               // 16-byte key
/// let plain = ctr.apply(ciphertext, counterBlock: block)    // 16-byte initial counter block
/// ```
///
/// The counter block is incremented as one 128-bit big-endian integer per 16-byte block (the
/// standard's increment, and libcrypto's); a format that counts otherwise (Victron counts little
/// endian) calls ``apply(key:counterBlock:input:output:)`` once per block with its own blocks.
public struct AESCTR: Sendable, CustomStringConvertible {
    /// The 16-byte key.
    public let key: [UInt8]
    /// The key's schedule, computed once.
    let cipher: AES128

    /// Creates a cipher; nil unless `key` has 16 bytes.
    public init?(key: [UInt8]) {
        guard let cipher = AES128(key: key) else { return nil }
        self.key = key
        self.cipher = cipher
    }

    /// Names the mode, never the key.
    public var description: String { "AESCTR(AES-128)" }

    /// Encrypts or decrypts `input` from the 16-byte initial `counterBlock`: as many bytes as
    /// `input`, or nil when the counter block is not 16 bytes long.
    public func apply(_ input: [UInt8], counterBlock: [UInt8]) -> [UInt8]? {
        guard counterBlock.count == 16 else { return nil }
        var output = [UInt8](repeating: 0, count: input.count)
        let ok = counterBlock.withUnsafeBufferPointer { counter in
            input.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { output in
                    Self.run(cipher, counterBlock: counter, input: input, output: output)
                }
            }
        }
        return ok ? output : nil
    }

    /// The allocation-free form: encrypts or decrypts `input` into `output` (at least as long)
    /// with a 16-byte `key` and `counterBlock`. False when a length is wrong.
    public static func apply(
        key: UnsafeBufferPointer<UInt8>, counterBlock: UnsafeBufferPointer<UInt8>,
        input: UnsafeBufferPointer<UInt8>, output: UnsafeMutableBufferPointer<UInt8>
    ) -> Bool {
        guard let cipher = AES128(key: key) else { return false }
        return run(cipher, counterBlock: counterBlock, input: input, output: output)
    }

    /// CTR with `cipher`: block `i` of `input` xor the encryption of `counterBlock + i` (one 128-bit big-endian
    /// integer, wrapping). False when the counter block is not 16 bytes long or `output` is shorter than `input`.
    static func run(
        _ cipher: AES128, counterBlock: UnsafeBufferPointer<UInt8>, input: UnsafeBufferPointer<UInt8>,
        output: UnsafeMutableBufferPointer<UInt8>
    ) -> Bool {
        guard counterBlock.count == 16, output.count >= input.count, let base = counterBlock.baseAddress else { return false }
        // The counter as two big-endian halves.
        let raw = UnsafeRawPointer(base)
        var high = UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
        var low = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        var offset = 0
        while offset < input.count {
            let counter = unsafeBitCast(SIMD2<UInt64>(high.bigEndian, low.bigEndian), to: SIMD16<UInt8>.self)
            let stream = cipher.encrypt(counter)
            let count = min(16, input.count - offset)
            for byte in 0..<count { output[offset + byte] = input[offset + byte] ^ stream[byte] }
            offset += count
            low &+= 1
            if low == 0 { high &+= 1 }
        }
        return true
    }
}
