// AES-128 through libcrypto's EVP interface (OpenSSL 3): CCM for BridgeCore's AESCCM, one ECB block
// for the Bluetooth security function e (the resolvable private address hash `ah`).
// The whole EVP sequence lives here, one function per operation, so that Swift sees neither the EVP
// macros nor the context's lifetime.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <openssl/evp.h>

// The cost of an operation is mostly EVP's set-up, not the AES of a 30-byte frame: a context
// allocated and freed, and with EVP_aes_128_*() an implicit fetch from the default provider (and
// a new provider context) at every init. So the ciphers are fetched once per process (never
// freed), and each thread keeps one context per kind of operation: the first operation of a
// thread initialises it with the cipher, the next ones re-initialise it with the cipher left NULL
// (EVP then keeps the provider's context and only sets the parameters, key and IV again). A
// context whose operation failed is reset, so that the next one starts from scratch. A thread's
// contexts are freed when it exits (a pthread key's destructor). Where any of this is not
// available (a failed fetch, allocation or key) an operation uses EVP_aes_128_*() and a context
// of its own, as before.

enum { CCRYPTO_CCM = 0, CCRYPTO_ECB = 1, CCRYPTO_CTR = 2, CCRYPTO_KINDS = 3 };

typedef struct {
    EVP_CIPHER *cipher[CCRYPTO_KINDS];  // fetched once, never freed; NULL when the fetch failed
    pthread_key_t key;                  // this thread's contexts, freed by its destructor
    int key_ok;
} ccrypto_process_t;

typedef struct {
    EVP_CIPHER_CTX *ctx[CCRYPTO_KINDS];
} ccrypto_thread_t;

static inline ccrypto_process_t *ccrypto_process(void)
{
    static ccrypto_process_t process;
    return &process;
}

static inline ccrypto_thread_t **ccrypto_thread_slot(void)
{
    static _Thread_local ccrypto_thread_t *mine = NULL;
    return &mine;
}

static inline void ccrypto_thread_free(void *p)
{
    ccrypto_thread_t *t = (ccrypto_thread_t *)p;
    for (int k = 0; k < CCRYPTO_KINDS; k++) EVP_CIPHER_CTX_free(t->ctx[k]);
    if (*ccrypto_thread_slot() == t) *ccrypto_thread_slot() = NULL;
    free(t);
}

static inline void ccrypto_process_init(void)
{
    ccrypto_process_t *p = ccrypto_process();
    p->cipher[CCRYPTO_CCM] = EVP_CIPHER_fetch(NULL, "AES-128-CCM", NULL);
    p->cipher[CCRYPTO_ECB] = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
    p->cipher[CCRYPTO_CTR] = EVP_CIPHER_fetch(NULL, "AES-128-CTR", NULL);
    p->key_ok = pthread_key_create(&p->key, ccrypto_thread_free) == 0;
}

static inline ccrypto_process_t *ccrypto_process_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ccrypto_process_init);
    return ccrypto_process();
}

/// The cipher of `kind`: the one fetched once, or EVP_aes_128_*() when that fetch failed.
static inline const EVP_CIPHER *ccrypto_cipher(int kind)
{
    const EVP_CIPHER *fetched = ccrypto_process_once()->cipher[kind];
    if (fetched != NULL) return fetched;
    switch (kind) {
    case CCRYPTO_CCM: return EVP_aes_128_ccm();
    case CCRYPTO_ECB: return EVP_aes_128_ecb();
    default: return EVP_aes_128_ctr();
    }
}

/// An operation's context: this thread's one for `kind` (`*owned` 0), or, when there is none, a
/// new one for this operation alone (`*owned` 1). `*cipher` is what the first init passes: the
/// cipher, or NULL for a context already initialised with it. NULL when no context can be made.
static inline EVP_CIPHER_CTX *ccrypto_begin(int kind, int *owned, const EVP_CIPHER **cipher)
{
    ccrypto_process_t *p = ccrypto_process_once();
    ccrypto_thread_t **slot = ccrypto_thread_slot();
    *cipher = ccrypto_cipher(kind);
    *owned = 0;
    if (*slot == NULL && p->key_ok) {
        ccrypto_thread_t *t = (ccrypto_thread_t *)calloc(1, sizeof *t);
        if (t != NULL && pthread_setspecific(p->key, t) == 0) *slot = t;
        else free(t);
    }
    if (*slot != NULL && p->cipher[kind] != NULL) {
        EVP_CIPHER_CTX **ctx = &(*slot)->ctx[kind];
        if (*ctx == NULL) *ctx = EVP_CIPHER_CTX_new();
        if (*ctx != NULL) {
            if (EVP_CIPHER_CTX_get0_cipher(*ctx) != NULL) *cipher = NULL;
            return *ctx;
        }
    }
    *owned = 1;
    return EVP_CIPHER_CTX_new();
}

/// Ends an operation begun with ccrypto_begin: frees a context of its own, resets the thread's
/// context after a failure (its next operation then initialises it with the cipher again).
static inline void ccrypto_end(EVP_CIPHER_CTX *ctx, int owned, int ok)
{
    if (owned) EVP_CIPHER_CTX_free(ctx);
    else if (!ok) EVP_CIPHER_CTX_reset(ctx);
}

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
    int owned;
    const EVP_CIPHER *evp_cipher;
    EVP_CIPHER_CTX *ctx = ccrypto_begin(CCRYPTO_CCM, &owned, &evp_cipher);
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (EVP_EncryptInit_ex(ctx, evp_cipher, NULL, NULL, NULL) != 1) goto done;
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
    ccrypto_end(ctx, owned, ok);
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
    int owned;
    const EVP_CIPHER *evp_cipher;
    EVP_CIPHER_CTX *ctx = ccrypto_begin(CCRYPTO_CCM, &owned, &evp_cipher);
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (EVP_DecryptInit_ex(ctx, evp_cipher, NULL, NULL, NULL) != 1) goto done;
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
    ccrypto_end(ctx, owned, ok);
    return ok;
}

/// Encrypts one 16-byte block with AES-128 (ECB, no padding): the Bluetooth Core security function
/// e(key, plaintext) of Vol 3 Part H 2.2.1, with key[0], in[0] and out[0] the most significant octets.
/// Returns 1 on success, 0 on failure.
static inline int ccrypto_aes128_encrypt_block(const uint8_t *key, const uint8_t *in, uint8_t *out)
{
    int owned;
    const EVP_CIPHER *evp_cipher;
    EVP_CIPHER_CTX *ctx = ccrypto_begin(CCRYPTO_ECB, &owned, &evp_cipher);
    if (ctx == NULL) return 0;
    int ok = 0, len = 0, total = 0;
    if (EVP_EncryptInit_ex(ctx, evp_cipher, NULL, key, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, out, &len, in, 16) != 1) goto done;
    total = len;
    if (EVP_EncryptFinal_ex(ctx, out + total, &len) != 1) goto done;
    total += len;
    ok = total == 16;
done:
    ccrypto_end(ctx, owned, ok);
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
    int owned;
    const EVP_CIPHER *evp_cipher;
    EVP_CIPHER_CTX *ctx = ccrypto_begin(CCRYPTO_CTR, &owned, &evp_cipher);
    if (ctx == NULL) return 0;
    int ok = 0, n = 0, total = 0;
    if (EVP_EncryptInit_ex(ctx, evp_cipher, NULL, key, counter) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, len > 0 ? out : sink, &n, len > 0 ? in : empty, (int)len) != 1) goto done;
    total = n;
    if (EVP_EncryptFinal_ex(ctx, sink, &n) != 1) goto done;
    ok = (size_t)total == len && n == 0;
done:
    ccrypto_end(ctx, owned, ok);
    return ok;
}

#endif
