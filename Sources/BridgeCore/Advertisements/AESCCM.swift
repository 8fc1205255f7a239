import CCrypto

/// AES-128 in CCM mode (NIST SP 800-38C, RFC 3610) through libcrypto's EVP interface: the cipher
/// of encrypted BTHome advertisements (13-byte nonce, 4-byte tag).
///
/// ```swift
/// let ccm = AESCCM(key: bindkey)!                         // 16-byte key, 4-byte tag
/// let plain = ccm.decrypt(ciphertext, nonce: nonce, tag: mic)   // nil: wrong tag/key/nonce
/// ```
public struct AESCCM: Sendable, CustomStringConvertible {
    /// The 16-byte key.
    public let key: [UInt8]
    /// The tag (MIC) length in bytes: 4, 6, ..., 16.
    public let tagLength: Int

    /// Creates a cipher; nil unless `key` has 16 bytes and `tagLength` is one of 4, 6, ..., 16.
    public init?(key: [UInt8], tagLength: Int = 4) {
        guard key.count == 16, (4...16).contains(tagLength), tagLength % 2 == 0 else { return nil }
        self.key = key
        self.tagLength = tagLength
    }

    /// Names the mode and tag length, never the key.
    public var description: String { "AESCCM(AES-128, \(tagLength)-byte tag)" }

    /// Encrypts `plaintext`: the ciphertext (as long as the plaintext) and the tag, or nil when
    /// the nonce is not 7...13 bytes long (or libcrypto fails).
    public func encrypt(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8] = []) -> (ciphertext: [UInt8], tag: [UInt8])? {
        guard (7...13).contains(nonce.count) else { return nil }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagLength)
        let tagLength = self.tagLength
        let ok = key.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                aad.withUnsafeBufferPointer { aad in
                    plaintext.withUnsafeBufferPointer { plain in
                        ciphertext.withUnsafeMutableBufferPointer { out in
                            tag.withUnsafeMutableBufferPointer { tag in
                                ccrypto_aes128_ccm_encrypt(
                                    key.baseAddress, nonce.baseAddress, nonce.count, aad.baseAddress, aad.count,
                                    plain.baseAddress, plain.count, out.baseAddress, tag.baseAddress, tagLength)
                            }
                        }
                    }
                }
            }
        }
        return ok == 1 ? (ciphertext, tag) : nil
    }

    /// Decrypts `ciphertext` and verifies `tag`: the plaintext, or nil when the tag does not
    /// verify (wrong key, nonce, data or tag), the tag is not ``tagLength`` bytes long, or the
    /// nonce is not 7...13 bytes long.
    public func decrypt(_ ciphertext: [UInt8], nonce: [UInt8], tag: [UInt8], aad: [UInt8] = []) -> [UInt8]? {
        guard (7...13).contains(nonce.count), tag.count == tagLength else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let ok = key.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                aad.withUnsafeBufferPointer { aad in
                    ciphertext.withUnsafeBufferPointer { cipher in
                        tag.withUnsafeBufferPointer { tag in
                            plaintext.withUnsafeMutableBufferPointer { out in
                                ccrypto_aes128_ccm_decrypt(
                                    key.baseAddress, nonce.baseAddress, nonce.count, aad.baseAddress, aad.count,
                                    cipher.baseAddress, cipher.count, tag.baseAddress, tag.count, out.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        return ok == 1 ? plaintext : nil
    }
}
