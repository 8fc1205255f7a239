import CCrypto

/// AES-128 in CTR mode (NIST SP 800-38A 6.5) through libcrypto's EVP interface: the cipher of
/// Victron's Instant Readout advertisements. Encryption and decryption are the same operation.
///
/// ```swift
/// let ctr = AESCTR(key: key)!                               // 16-byte key
/// let plain = ctr.apply(ciphertext, counterBlock: block)    // 16-byte initial counter block
/// ```
///
/// The counter block is incremented as one 128-bit big-endian integer per 16-byte block (the
/// standard's and libcrypto's increment); a format that counts otherwise (Victron counts little
/// endian) calls ``apply(key:counterBlock:input:output:)`` once per block with its own blocks.
public struct AESCTR: Sendable, CustomStringConvertible {
    /// The 16-byte key.
    public let key: [UInt8]

    /// Creates a cipher; nil unless `key` has 16 bytes.
    public init?(key: [UInt8]) {
        guard key.count == 16 else { return nil }
        self.key = key
    }

    /// Names the mode, never the key.
    public var description: String { "AESCTR(AES-128)" }

    /// Encrypts or decrypts `input` from the 16-byte initial `counterBlock`: as many bytes as
    /// `input`, or nil when the counter block is not 16 bytes long (or libcrypto fails).
    public func apply(_ input: [UInt8], counterBlock: [UInt8]) -> [UInt8]? {
        guard counterBlock.count == 16 else { return nil }
        var output = [UInt8](repeating: 0, count: input.count)
        let ok = key.withUnsafeBufferPointer { key in
            counterBlock.withUnsafeBufferPointer { counter in
                input.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { output in
                        Self.apply(key: key, counterBlock: counter, input: input, output: output)
                    }
                }
            }
        }
        return ok ? output : nil
    }

    /// The allocation-free form: encrypts or decrypts `input` into `output` (at least as long)
    /// with a 16-byte `key` and `counterBlock`. False when a length is wrong or libcrypto fails.
    public static func apply(
        key: UnsafeBufferPointer<UInt8>, counterBlock: UnsafeBufferPointer<UInt8>,
        input: UnsafeBufferPointer<UInt8>, output: UnsafeMutableBufferPointer<UInt8>
    ) -> Bool {
        guard key.count == 16, counterBlock.count == 16, output.count >= input.count,
            let keyBase = key.baseAddress, let counterBase = counterBlock.baseAddress
        else { return false }
        return ccrypto_aes128_ctr(keyBase, counterBase, input.baseAddress, input.count, output.baseAddress) == 1
    }
}
