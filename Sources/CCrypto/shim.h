// AES-128 through libcrypto's EVP interface (OpenSSL 3): CCM for BridgeCore's AESCCM, one ECB block
// for the Bluetooth security function e (the resolvable private address hash `ah`).
// The whole EVP sequence lives here, one function per operation, so that Swift sees neither the EVP
// macros nor the context's lifetime.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

/// Encrypts `plain_len` bytes with AES-128-CCM (16-byte key, nonce of 7...13 bytes, tag of
/// 4...16 even bytes): writes `plain_len` ciphertext bytes to `out` and the tag to `tag`.
/// Returns 1 on success, 0 on failure. Any pointer of a zero length may be NULL.
static inline int ccrypto_aes128_ccm_encrypt(
    const uint8_t *key, const uint8_t *nonce, size_t nonce_len,
    const uint8_t *aad, size_t aad_len,
    const uint8_t *plain, size_t plain_len,
    uint8_t *out, uint8_t *tag, size_t tag_len)
{
    static const uint8_t empty[1] = {0};
    uint8_t sink[1];
    if (nonce_len < 7 || nonce_len > 13 || tag_len < 4 || tag_len > 16 || (tag_len & 1) != 0) return 0;
    if (plain_len > 0x7fffffff || aad_len > 0x7fffffff) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_128_ccm(), NULL, NULL, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)nonce_len, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, NULL) != 1) goto done;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, key, nonce) != 1) goto done;
    // CCM needs the total plaintext length before the associated data.
    if (EVP_EncryptUpdate(ctx, NULL, &len, NULL, (int)plain_len) != 1) goto done;
    if (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, plain_len > 0 ? out : sink, &len, plain_len > 0 ? plain : empty, (int)plain_len) != 1)
        goto done;
    if (EVP_EncryptFinal_ex(ctx, sink, &len) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)tag_len, tag) != 1) goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/// Decrypts and verifies `cipher_len` bytes with AES-128-CCM: writes `cipher_len` plaintext bytes
/// to `out`. Returns 1 when the tag verifies, 0 otherwise (wrong tag, key, nonce or parameters).
/// Any pointer of a zero length may be NULL.
static inline int ccrypto_aes128_ccm_decrypt(
    const uint8_t *key, const uint8_t *nonce, size_t nonce_len,
    const uint8_t *aad, size_t aad_len,
    const uint8_t *cipher, size_t cipher_len,
    const uint8_t *tag, size_t tag_len, uint8_t *out)
{
    static const uint8_t empty[1] = {0};
    uint8_t sink[1];
    uint8_t tag_copy[16];
    if (nonce_len < 7 || nonce_len > 13 || tag_len < 4 || tag_len > 16 || (tag_len & 1) != 0) return 0;
    if (cipher_len > 0x7fffffff || aad_len > 0x7fffffff) return 0;
    for (size_t i = 0; i < tag_len; i++) tag_copy[i] = tag[i];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (EVP_DecryptInit_ex(ctx, EVP_aes_128_ccm(), NULL, NULL, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)nonce_len, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, tag_copy) != 1) goto done;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) != 1) goto done;
    if (EVP_DecryptUpdate(ctx, NULL, &len, NULL, (int)cipher_len) != 1) goto done;
    if (aad_len > 0 && EVP_DecryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1) goto done;
    // For CCM the one update with the data also checks the tag: it fails on a mismatch.
    if (EVP_DecryptUpdate(ctx, cipher_len > 0 ? out : sink, &len, cipher_len > 0 ? cipher : empty, (int)cipher_len) != 1)
        goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/// Encrypts one 16-byte block with AES-128 (ECB, no padding): the Bluetooth Core security function
/// e(key, plaintext) of Vol 3 Part H 2.2.1, with key[0], in[0] and out[0] the most significant octets.
/// Returns 1 on success, 0 on failure.
static inline int ccrypto_aes128_encrypt_block(const uint8_t *key, const uint8_t *in, uint8_t *out)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, len = 0, total = 0;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, out, &len, in, 16) != 1) goto done;
    total = len;
    if (EVP_EncryptFinal_ex(ctx, out + total, &len) != 1) goto done;
    total += len;
    ok = total == 16;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/// Encrypts (or, the same operation, decrypts) `len` bytes with AES-128 in CTR mode (NIST SP
/// 800-38A 6.5): `counter` is the 16-byte initial counter block, incremented as one 128-bit
/// big-endian integer per block. Writes `len` bytes to `out`. Returns 1 on success, 0 on failure.
/// `in` and `out` may be NULL when `len` is 0.
static inline int ccrypto_aes128_ctr(const uint8_t *key, const uint8_t *counter, const uint8_t *in, size_t len, uint8_t *out)
{
    static const uint8_t empty[1] = {0};
    uint8_t sink[16];
    if (len > 0x7fffffff) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, n = 0, total = 0;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, counter) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, len > 0 ? out : sink, &n, len > 0 ? in : empty, (int)len) != 1) goto done;
    total = n;
    if (EVP_EncryptFinal_ex(ctx, sink, &n) != 1) goto done;
    ok = (size_t)total == len && n == 0;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

#endif
