import CCrypto

/// AES-128 for the simulator's own test traffic (BTHome v2 encryption, resolvable private addresses), called
/// straight on libcrypto's EVP interface. Every C call of the simulator's cryptography is in this file; it shares
/// no code with the bridge's decoders (BridgeCore's AES is its own Swift, `AES128`), so that a bug on one side shows
/// up as frames or addresses the other side refuses.
enum SimAES {
    /// The Bluetooth security function e (Core Vol 3 Part H §2.2.1): the 16-byte `block` encrypted with the
    /// 16-byte `key` (AES-128, one block, no padding), both given most significant octet first, as the
    /// specification writes them. Nil on wrong sizes or when libcrypto fails.
    static func encryptBlock(key: [UInt8], _ block: [UInt8]) -> [UInt8]? {
        guard key.count == 16, block.count == 16, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        // Room for a second block: EVP may write up to a block in the final step (it writes none without padding).
        var out = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        var tail: Int32 = 0
        guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, key, nil) == 1,
              EVP_CIPHER_CTX_set_padding(ctx, 0) == 1,
              EVP_EncryptUpdate(ctx, &out, &written, block, 16) == 1
        else { return nil }
        let finished = out.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(ctx, buffer.baseAddress.map { $0 + Int(written) }, &tail)
        }
        guard finished == 1, written + tail == 16 else { return nil }
        return Array(out[0..<16])
    }

    /// AES-128-CCM (NIST SP 800-38C) without associated data: `plaintext` (not empty) encrypted with the 16-byte
    /// `key` and `nonce` (7...13 bytes), and its authentication tag of `tagLength` bytes (4, 6, ..., 16). Nil on
    /// wrong sizes or when libcrypto fails.
    static func ccmEncrypt(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], tagLength: Int)
        -> (ciphertext: [UInt8], tag: [UInt8])?
    {
        guard key.count == 16, (7...13).contains(nonce.count), (4...16).contains(tagLength), tagLength % 2 == 0,
              !plaintext.isEmpty, plaintext.count <= Int(Int32.max), let ctx = EVP_CIPHER_CTX_new()
        else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagLength)
        var final = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        var tail: Int32 = 0
        // The nonce length and the tag length are set before the key and the nonce (EVP's order for CCM); without
        // associated data the plaintext length need not be announced first.
        guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ccm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), nil) == 1,
              EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1,
              EVP_EncryptUpdate(ctx, &ciphertext, &written, plaintext, Int32(plaintext.count)) == 1,
              Int(written) == plaintext.count,
              EVP_EncryptFinal_ex(ctx, &final, &tail) == 1, tail == 0,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &tag) == 1
        else { return nil }
        return (ciphertext, tag)
    }
}
