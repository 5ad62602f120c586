/* SPDX-License-Identifier: MIT */
/*
 * Sealed tokens (seal.h): AES-256-GCM through libcrypto's EVP interface.
 *
 * AES-256-GCM rather than ChaCha20-Poly1305: both take a 12-byte nonce and give a
 * 16-byte tag, but AES-GCM runs on the AES and carry-less multiply instructions of the
 * machines servers run on, and is what a FIPS provider offers, so a deployment that
 * configures one can still seal.
 *
 * Nonces come from mcp__random_bytes (getrandom), like session ids, rather than from
 * RAND_bytes: the kernel's generator has no user-space state to get wrong across fork,
 * and its failure is an error we return, not a state of OpenSSL's DRBG.
 *
 * libcrypto reports failures on a per-thread error queue that libcurl and the host
 * program also read; every call here sets a mark on it first and pops back to the mark
 * at the end, so that nothing of ours is left behind whatever failed (OpenSSL 3.0 adds
 * nothing for a tag that does not match, but a failed allocation or a provider that
 * cannot be fetched does).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "seal.h"
#include "util.h"

/* The algorithms, fetched once: EVP_sha256() and EVP_aes_256_gcm() make OpenSSL 3 look
 * them up in its provider store (a lock and a search) at each use, which costs about
 * as much as hashing a token. Kept for the process's life; when a fetch fails, the
 * implicit lookup is used instead. */
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_md;
static EVP_CIPHER *aes_gcm;

static void fetch_algorithms(void)
{
    ERR_set_mark();
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    aes_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    ERR_pop_to_mark();
}

static const EVP_MD *md_sha256(void)
{
    pthread_once(&fetch_once, fetch_algorithms);
    return sha256_md != NULL ? sha256_md : EVP_sha256();
}

static const EVP_CIPHER *cipher_aes_gcm(void)
{
    pthread_once(&fetch_once, fetch_algorithms);
    return aes_gcm != NULL ? aes_gcm : EVP_aes_256_gcm();
}

#define VERSION 0x01
#define PREFIX "v1."
#define PREFIX_LEN 3
#define NONCE_LEN 12
#define TAG_LEN 16
/* Where each field of the decoded token starts. */
#define OFF_KEY_ID 0
#define OFF_NONCE 1
#define OFF_EXPIRY (OFF_NONCE + NONCE_LEN)
#define OFF_CIPHERTEXT (OFF_EXPIRY + 8)

/* The fixed part of the additional data: version, key id, expiry; the binding follows. */
static void header_aad(unsigned char aad[10], uint8_t key_id, const unsigned char expiry[8])
{
    aad[0] = VERSION;
    aad[1] = key_id;
    memcpy(aad + 2, expiry, 8);
}

/* Adds the additional data to a GCM context: the header, then the binding in pieces an
 * int can count. Returns 1 or 0 as EVP does. */
static int add_aad(EVP_CIPHER_CTX *ctx, int encrypt, uint8_t key_id, const unsigned char expiry[8],
                   const unsigned char *binding, size_t binding_len)
{
    unsigned char aad[10];
    int outl;
    header_aad(aad, key_id, expiry);
    int (*update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int) =
        encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate;
    if (!update(ctx, NULL, &outl, aad, sizeof aad))
        return 0;
    while (binding_len > 0) {
        int n = binding_len > INT_MAX ? INT_MAX : (int)binding_len;
        if (!update(ctx, NULL, &outl, binding, n))
            return 0;
        binding += n;
        binding_len -= (size_t)n;
    }
    return 1;
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Encrypts raw's plaintext field in place and writes the tag after it. */
static int encrypt_raw(const unsigned char *key, unsigned char *raw, size_t len,
                       const void *binding, size_t binding_len)
{
    int ok = 0, outl = 0, fin = 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL)
        return MCP_ENOMEM;
    unsigned char *ct = raw + OFF_CIPHERTEXT;
    /* GCM's default nonce length is 12 bytes, ours. */
    if (EVP_EncryptInit_ex(ctx, cipher_aes_gcm(), NULL, key, raw + OFF_NONCE) &&
        add_aad(ctx, 1, raw[OFF_KEY_ID], raw + OFF_EXPIRY, binding, binding_len) &&
        (len == 0 || EVP_EncryptUpdate(ctx, ct, &outl, ct, (int)len)) &&
        EVP_EncryptFinal_ex(ctx, ct + outl, &fin) &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, ct + len))
        ok = (size_t)outl + (size_t)fin == len;
    EVP_CIPHER_CTX_free(ctx);
    return ok ? MCP_OK : MCP_ENOMEM;
}

int mcp__sha256_hex(const void *data, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[32];
    int rc = mcp__sha256(data, len, md);
    for (int i = 0; i < 32 && rc == MCP_OK; i++)
        out[2 * i] = hex[md[i] >> 4], out[2 * i + 1] = hex[md[i] & 15];
    out[rc == MCP_OK ? 64 : 0] = '\0';
    return rc;
}

int mcp__seal(const unsigned char key[MCP__SEAL_KEY_LEN], uint8_t key_id, const void *binding,
              size_t binding_len, const void *plaintext, size_t len, uint64_t expiry_ms, char **out)
{
    if (out != NULL)
        *out = NULL;
    if (key == NULL || out == NULL || (plaintext == NULL && len > 0) ||
        (binding == NULL && binding_len > 0))
        return MCP_EINVAL;
    if (len > MCP__SEAL_MAX_PLAINTEXT)
        return MCP_ELIMIT;
    size_t raw_len = MCP__SEAL_OVERHEAD + len;
    unsigned char *raw = malloc(raw_len);
    char *token = malloc(PREFIX_LEN + mcp__base64url_len(raw_len) + 1);
    int rc = MCP_ENOMEM;
    if (raw == NULL || token == NULL)
        goto fail;
    raw[OFF_KEY_ID] = key_id;
    rc = mcp__random_bytes(raw + OFF_NONCE, NONCE_LEN);
    if (rc != MCP_OK)
        goto fail;
    put_be64(raw + OFF_EXPIRY, expiry_ms);
    if (len > 0)
        memcpy(raw + OFF_CIPHERTEXT, plaintext, len);
    ERR_set_mark();
    rc = encrypt_raw(key, raw, len, binding, binding_len);
    ERR_pop_to_mark();
    if (rc != MCP_OK)
        goto fail;
    memcpy(token, PREFIX, PREFIX_LEN);
    mcp__base64url_encode(raw, raw_len, token + PREFIX_LEN);
    free(raw);
    *out = token;
    return MCP_OK;

fail:
    /* The plaintext is encrypted in place: a failure may leave it in raw. */
    if (raw != NULL)
        OPENSSL_cleanse(raw, raw_len);
    free(raw);
    free(token);
    return rc;
}

/* The parts of a token that are checked before any key is used. */
typedef struct parsed {
    unsigned char *raw; /* malloc'd, decoded */
    size_t raw_len;
} parsed;

/* MCP_OK, MCP_EINVAL (not a token) or MCP_ENOMEM. */
static int parse(const char *token, parsed *p)
{
    p->raw = NULL;
    p->raw_len = 0;
    if (token == NULL)
        return MCP_EINVAL;
    /* strnlen: an overlong token is refused without being read to its end. */
    size_t n = strnlen(token, MCP__SEAL_MAX_TOKEN + 1);
    if (n > MCP__SEAL_MAX_TOKEN || n < PREFIX_LEN || memcmp(token, PREFIX, PREFIX_LEN) != 0)
        return MCP_EINVAL;
    n -= PREFIX_LEN;
    unsigned char *raw = malloc(n / 4 * 3 + 2);
    if (raw == NULL)
        return MCP_ENOMEM;
    size_t raw_len = 0;
    if (mcp__base64url_decode(token + PREFIX_LEN, n, raw, &raw_len) != MCP_OK ||
        raw_len < MCP__SEAL_OVERHEAD) {
        free(raw);
        return MCP_EINVAL;
    }
    p->raw = raw;
    p->raw_len = raw_len;
    return MCP_OK;
}

/* Authenticates and decrypts a parsed token into pt (room for its plaintext). MCP_OK,
 * MCP_EPROTO or MCP_ENOMEM. */
static int decrypt_raw(const unsigned char *key, const parsed *p, const void *binding,
                       size_t binding_len, unsigned char *pt)
{
    size_t len = p->raw_len - MCP__SEAL_OVERHEAD;
    const unsigned char *raw = p->raw, *ct = raw + OFF_CIPHERTEXT;
    int rc = MCP_ENOMEM, outl = 0, fin = 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL)
        return MCP_ENOMEM;
    /* The tag is set before the data goes through; EVP_DecryptFinal_ex compares it in
     * constant time and fails on any difference. */
    if (EVP_DecryptInit_ex(ctx, cipher_aes_gcm(), NULL, key, raw + OFF_NONCE) &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, (void *)(ct + len)) &&
        add_aad(ctx, 0, raw[OFF_KEY_ID], raw + OFF_EXPIRY, binding, binding_len) &&
        (len == 0 || EVP_DecryptUpdate(ctx, pt, &outl, ct, (int)len)))
        rc = EVP_DecryptFinal_ex(ctx, pt + outl, &fin) && (size_t)outl + (size_t)fin == len
                 ? MCP_OK
                 : MCP_EPROTO;
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}

/* Opens a parsed token with key: the rest of mcp__unseal once the key is chosen. */
static int open_parsed(const unsigned char *key, const parsed *p, const void *binding,
                       size_t binding_len, uint64_t now_ms, unsigned char **plaintext, size_t *len)
{
    size_t n = p->raw_len - MCP__SEAL_OVERHEAD;
    unsigned char *pt = malloc(n + 1);
    if (pt == NULL)
        return MCP_ENOMEM;
    ERR_set_mark();
    int rc = decrypt_raw(key, p, binding, binding_len, pt);
    ERR_pop_to_mark();
    /* Only now is the expiry known to be the one that was sealed. */
    if (rc == MCP_OK && now_ms > get_be64(p->raw + OFF_EXPIRY))
        rc = MCP_ETIMEDOUT;
    if (rc != MCP_OK) {
        /* GCM decrypts before the tag is checked: what pt holds may be the sealed
         * plaintext with a few bits changed, which is no one's to see. */
        OPENSSL_cleanse(pt, n + 1);
        free(pt);
        return rc;
    }
    pt[n] = '\0';
    *plaintext = pt;
    *len = n;
    return MCP_OK;
}

/* What both unseals do: check the arguments, parse, pick the key by the token's id
 * (NULL: no key of ours has it), open. */
static int unseal_with(const unsigned char *key, uint8_t key_id, const unsigned char *other,
                       uint8_t other_id, const char *token, const void *binding, size_t binding_len,
                       uint64_t now_ms, unsigned char **plaintext, size_t *len)
{
    if (plaintext != NULL)
        *plaintext = NULL;
    if (len != NULL)
        *len = 0;
    if (key == NULL || plaintext == NULL || len == NULL || (binding == NULL && binding_len > 0))
        return MCP_EINVAL;
    parsed p;
    int rc = parse(token, &p);
    if (rc != MCP_OK)
        return rc;
    /* The key id is in the clear and authenticated with the rest: choosing by it leaks
     * nothing an attacker does not already see. */
    const unsigned char *k = p.raw[OFF_KEY_ID] == key_id                      ? key
                             : other != NULL && p.raw[OFF_KEY_ID] == other_id ? other
                                                                              : NULL;
    rc = k != NULL ? open_parsed(k, &p, binding, binding_len, now_ms, plaintext, len) : MCP_EPROTO;
    free(p.raw);
    return rc;
}

int mcp__unseal(const unsigned char key[MCP__SEAL_KEY_LEN], uint8_t key_id, const char *token,
                const void *binding, size_t binding_len, uint64_t now_ms, unsigned char **plaintext,
                size_t *len)
{
    return unseal_with(key, key_id, NULL, 0, token, binding, binding_len, now_ms, plaintext, len);
}

void mcp__sealer_init(mcp__sealer *s, uint8_t key_id, const unsigned char key[MCP__SEAL_KEY_LEN])
{
    mcp__sealer_clear(s);
    memcpy(s->current, key, MCP__SEAL_KEY_LEN);
    s->current_id = key_id;
}

int mcp__sealer_rotate(mcp__sealer *s, uint8_t key_id, const unsigned char key[MCP__SEAL_KEY_LEN])
{
    if (key_id == s->current_id)
        return MCP_EINVAL;
    memcpy(s->previous, s->current, MCP__SEAL_KEY_LEN);
    s->previous_id = s->current_id;
    s->has_previous = 1;
    memcpy(s->current, key, MCP__SEAL_KEY_LEN);
    s->current_id = key_id;
    return MCP_OK;
}

void mcp__sealer_clear(mcp__sealer *s)
{
    OPENSSL_cleanse(s, sizeof *s);
}

int mcp__sealer_seal(const mcp__sealer *s, const void *binding, size_t binding_len,
                     const void *plaintext, size_t len, uint64_t expiry_ms, char **out)
{
    return mcp__seal(s->current, s->current_id, binding, binding_len, plaintext, len, expiry_ms,
                     out);
}

int mcp__sealer_unseal(const mcp__sealer *s, const char *token, const void *binding,
                       size_t binding_len, uint64_t now_ms, unsigned char **plaintext, size_t *len)
{
    return unseal_with(s->current, s->current_id, s->has_previous ? s->previous : NULL,
                       s->previous_id, token, binding, binding_len, now_ms, plaintext, len);
}

int mcp__sha256(const void *data, size_t len, unsigned char out[32])
{
    if (out == NULL || (data == NULL && len > 0))
        return MCP_EINVAL;
    ERR_set_mark();
    int ok = EVP_Digest(len > 0 ? data : "", len, out, NULL, md_sha256(), NULL);
    ERR_pop_to_mark();
    return ok ? MCP_OK : MCP_ENOMEM;
}
