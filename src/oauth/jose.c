/* SPDX-License-Identifier: MIT */
/*
 * What the OAuth client signs: DPoP proofs (RFC 9449) and client assertions
 * (RFC 7523, private_key_jwt), as compact JWS with ES256 or RS256, by OpenSSL;
 * and the hashes and random strings of PKCE and state.
 */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth.h"

struct mcp__jkey {
    EVP_PKEY *pkey;
    int es256; /* else RS256 */
};

void mcp__jkey_free(mcp__jkey *k)
{
    if (k == NULL)
        return;
    EVP_PKEY_free(k->pkey);
    free(k);
}

static int jkey_wrap(EVP_PKEY *pkey, int es256, mcp__jkey **out)
{
    mcp__jkey *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        EVP_PKEY_free(pkey);
        return MCP_ENOMEM;
    }
    k->pkey = pkey;
    k->es256 = es256;
    *out = k;
    return MCP_OK;
}

static int no_passphrase(char *buf, int size, int rwflag, void *user)
{
    (void)buf, (void)size, (void)rwflag, (void)user;
    return 0;
}

int mcp__jkey_from_pem(const char *pem, const char *alg, mcp__jkey **out)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    if (bio == NULL)
        return MCP_ENOMEM;
    /* An encrypted key is refused, never prompted for on a terminal. */
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (pkey == NULL)
        return MCP_EINVAL;
    int es256;
    if (EVP_PKEY_is_a(pkey, "EC")) {
        char group[64] = "";
        size_t glen = 0;
        if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
                                            &glen) ||
            strcmp(group, "prime256v1") != 0)
            goto bad; /* ES256 is P-256 only */
        es256 = 1;
    } else if (EVP_PKEY_is_a(pkey, "RSA")) {
        if (EVP_PKEY_get_bits(pkey) < 2048)
            goto bad;
        es256 = 0;
    } else {
        goto bad;
    }
    if (alg != NULL && strcmp(alg, es256 ? "ES256" : "RS256") != 0)
        goto bad;
    return jkey_wrap(pkey, es256, out);
bad:
    EVP_PKEY_free(pkey);
    return MCP_EINVAL;
}

int mcp__jkey_new_es256(mcp__jkey **out)
{
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    if (pkey == NULL)
        return MCP_ENOMEM;
    return jkey_wrap(pkey, 1, out);
}

char *mcp__jkey_pem(const mcp__jkey *k)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL)
        return NULL;
    char *out = NULL;
    if (PEM_write_bio_PrivateKey(bio, k->pkey, NULL, NULL, 0, NULL, NULL)) {
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        if (n > 0 && (out = malloc((size_t)n + 1)) != NULL) {
            memcpy(out, data, (size_t)n);
            out[n] = '\0';
        }
    }
    BIO_free(bio);
    return out;
}

static json_t *b64url_json(const unsigned char *data, size_t len)
{
    char *s = malloc(mcp__base64url_len(len) + 1);
    if (s == NULL)
        return NULL;
    mcp__base64url_encode(data, len, s);
    json_t *j = json_string(s);
    free(s);
    return j;
}

/* A big number parameter of the key, big-endian on width bytes (0: its own). */
static json_t *bn_param(const EVP_PKEY *pkey, const char *name, size_t width)
{
    BIGNUM *bn = NULL;
    if (!EVP_PKEY_get_bn_param(pkey, name, &bn))
        return NULL;
    size_t n = width != 0 ? width : (size_t)BN_num_bytes(bn);
    unsigned char buf[1024];
    json_t *j = NULL;
    if (n > 0 && n <= sizeof(buf) && BN_bn2binpad(bn, buf, (int)n) == (int)n)
        j = b64url_json(buf, n);
    BN_free(bn);
    return j;
}

json_t *mcp__jkey_public_jwk(const mcp__jkey *k)
{
    if (k->es256)
        return json_pack("{s:s, s:s, s:o*, s:o*}", "kty", "EC", "crv", "P-256", "x",
                         bn_param(k->pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32), "y",
                         bn_param(k->pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32));
    return json_pack("{s:s, s:o*, s:o*}", "kty", "RSA", "n",
                     bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_N, 0), "e",
                     bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_E, 0));
}

static char *b64url_of(const void *data, size_t len)
{
    char *s = malloc(mcp__base64url_len(len) + 1);
    if (s != NULL)
        mcp__base64url_encode(data, len, s);
    return s;
}

/* The JWS signature of input: raw R||S for ES256 (RFC 7518 §3.4), PKCS#1 v1.5 for RS256. */
static char *sign_input(const mcp__jkey *k, const char *input, size_t len)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char *sig = NULL;
    size_t siglen = 0;
    char *out = NULL;
    if (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k->pkey) != 1 ||
        EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)input, len) != 1 ||
        (sig = malloc(siglen)) == NULL ||
        EVP_DigestSign(md, sig, &siglen, (const unsigned char *)input, len) != 1)
        goto done;
    if (k->es256) {
        const unsigned char *p = sig;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
        unsigned char raw[64];
        if (es == NULL)
            goto done;
        int ok = BN_bn2binpad(ECDSA_SIG_get0_r(es), raw, 32) == 32 &&
                 BN_bn2binpad(ECDSA_SIG_get0_s(es), raw + 32, 32) == 32;
        ECDSA_SIG_free(es);
        if (ok)
            out = b64url_of(raw, sizeof(raw));
    } else {
        out = b64url_of(sig, siglen);
    }
done:
    free(sig);
    EVP_MD_CTX_free(md);
    return out;
}

char *mcp__jws_sign(const mcp__jkey *k, json_t *header, const json_t *claims)
{
    if (json_object_set_new(header, "alg", json_string(k->es256 ? "ES256" : "RS256")) != 0)
        return NULL;
    char *h = json_dumps(header, JSON_COMPACT);
    char *c = json_dumps(claims, JSON_COMPACT);
    char *hb = h != NULL ? b64url_of(h, strlen(h)) : NULL;
    char *cb = c != NULL ? b64url_of(c, strlen(c)) : NULL;
    free(h);
    free(c);
    char *input = hb != NULL && cb != NULL ? mcp__asprintf("%s.%s", hb, cb) : NULL;
    free(hb);
    free(cb);
    if (input == NULL)
        return NULL;
    char *sig = sign_input(k, input, strlen(input));
    char *jws = sig != NULL ? mcp__asprintf("%s.%s", input, sig) : NULL;
    free(sig);
    free(input);
    return jws;
}

char *mcp__sha256_b64url(const char *s, size_t len)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)s, len, d);
    return b64url_of(d, sizeof(d));
}

char *mcp__random_b64url(size_t n)
{
    unsigned char buf[64];
    if (n > sizeof(buf) || mcp__random_bytes(buf, n) != MCP_OK)
        return NULL;
    return b64url_of(buf, n);
}
