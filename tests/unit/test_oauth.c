/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/oauth, the OAuth client's pieces: form encoding and query
 * reading, URLs split into origin and path, WWW-Authenticate challenges, the union
 * of scopes, text made printable, PKCE's S256, signed JWS (ES256, RS256) that
 * OpenSSL verifies, and the file token store's modes and atomic replacement.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "oauth/oauth.h"

static void test_form_values_are_percent_encoded_and_read_back(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__form_add(&b, "redirect_uri", "http://127.0.0.1:5/cb?x=1&y"), MCP_OK);
    assert_int_equal(mcp__form_add(&b, "scope", "a b+c"), MCP_OK);
    assert_int_equal(mcp__buf_append(&b, "", 1), MCP_OK);
    assert_string_equal(b.data, "redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb%3Fx%3D1%26y"
                                "&scope=a%20b%2Bc");
    char *v = mcp__form_get(b.data, "redirect_uri", NULL);
    assert_string_equal(v, "http://127.0.0.1:5/cb?x=1&y");
    free(v);
    v = mcp__form_get(b.data, "scope", NULL);
    assert_string_equal(v, "a b+c");
    free(v);
    mcp__buf_free(&b);
    /* '+' is a space in a form; a bad escape stays as it is; a name that is a prefix
     * of another is not it; a second occurrence is reported. */
    int dup = 0;
    v = mcp__form_get("code=a+b%2&codes=x&code=c", "code", &dup);
    assert_string_equal(v, "a b%2");
    assert_int_equal(dup, 1);
    free(v);
    v = mcp__form_get("codes=x", "code", &dup);
    assert_null(v);
    assert_int_equal(dup, 0);
    v = mcp__form_get("state=%41%4a%zz", "state", NULL);
    assert_string_equal(v, "AJ%zz");
    free(v);
}

static void test_urls_split_into_origin_and_path(void **state)
{
    (void)state;
    char *o, *p;
    assert_int_equal(mcp__url_split("HTTPS://Example.COM:443/Mcp/x?q=1#f", &o, &p), MCP_OK);
    assert_string_equal(o, "https://example.com");
    assert_string_equal(p, "/Mcp/x");
    free(o), free(p);
    assert_int_equal(mcp__url_split("http://127.0.0.1:8080/", &o, &p), MCP_OK);
    assert_string_equal(o, "http://127.0.0.1:8080");
    assert_string_equal(p, "");
    free(o), free(p);
    assert_int_equal(mcp__url_split("http://h:80?x", &o, &p), MCP_OK);
    assert_string_equal(o, "http://h");
    assert_string_equal(p, "");
    free(o), free(p);
    /* No scheme we speak, no host, or credentials in the URL: refused. */
    assert_int_equal(mcp__url_split("ftp://h/x", &o, &p), MCP_EINVAL);
    assert_int_equal(mcp__url_split("http:///x", &o, &p), MCP_EINVAL);
    assert_int_equal(mcp__url_split("https://user:pw@h/x", &o, &p), MCP_EINVAL);
}

static void test_challenges_are_read_as_rfc9110_lists(void **state)
{
    (void)state;
    mcp__challenge c;
    mcp__challenge_parse("Bearer resource_metadata=\"https://a/.well-known/x\", scope=\"a b\", "
                         "error=\"insufficient_scope\", error_description=\"say \\\"hi\\\"\"",
                         &c);
    assert_string_equal(c.scheme, "Bearer");
    assert_string_equal(c.resource_metadata, "https://a/.well-known/x");
    assert_string_equal(c.scope, "a b");
    assert_string_equal(c.error, "insufficient_scope");
    assert_string_equal(c.error_description, "say \"hi\"");
    mcp__challenge_free(&c);
    /* Another scheme first (its parameters are not ours), then DPoP with a token value. */
    mcp__challenge_parse("Basic realm=\"x\", scope=\"nope\", DPoP algs=\"ES256\", "
                         "error=use_dpop_nonce",
                         &c);
    assert_string_equal(c.scheme, "DPoP");
    assert_null(c.scope);
    assert_string_equal(c.error, "use_dpop_nonce");
    mcp__challenge_free(&c);
    /* Only the first challenge of ours counts. */
    mcp__challenge_parse("Bearer scope=\"one\", Bearer scope=\"two\"", &c);
    assert_string_equal(c.scope, "one");
    mcp__challenge_free(&c);
    /* Garbage gives what was read before it, and nothing past it. */
    mcp__challenge_parse("Bearer scope=\"unterminated", &c);
    assert_string_equal(c.scheme, "Bearer");
    assert_null(c.scope);
    mcp__challenge_free(&c);
    mcp__challenge_parse("", &c);
    assert_null(c.scheme);
    mcp__challenge_free(&c);
}

static void test_scopes_unite_in_order_each_once(void **state)
{
    (void)state;
    char *u = mcp__oauth_scope_union("mcp:basic  mcp:read", "mcp:write mcp:basic");
    assert_string_equal(u, "mcp:basic mcp:read mcp:write");
    free(u);
    u = mcp__oauth_scope_union(NULL, "a");
    assert_string_equal(u, "a");
    free(u);
    u = mcp__oauth_scope_union("ab", "a b");
    assert_string_equal(u, "ab a b");
    free(u);
    u = mcp__oauth_scope_union(NULL, NULL);
    assert_string_equal(u, "");
    free(u);
}

static void test_server_text_is_made_printable_and_bounded(void **state)
{
    (void)state;
    char *p = mcp__oauth_printable("\x1b[31mEVIL\r\nInjected: yes\x07\xc3\xa9", 100);
    assert_string_equal(p, "?[31mEVIL??Injected: yes???");
    free(p);
    p = mcp__oauth_printable("abcdef", 3);
    assert_string_equal(p, "abc");
    free(p);
}

static void test_pkce_s256_matches_rfc7636(void **state)
{
    (void)state;
    /* RFC 7636 Appendix B. */
    const char *verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    char *c = mcp__sha256_b64url(verifier, strlen(verifier));
    assert_string_equal(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    free(c);
    /* Random strings: base64url of n bytes, and never twice the same. */
    char *a = mcp__random_b64url(32), *b = mcp__random_b64url(32);
    assert_int_equal(strlen(a), 43);
    assert_string_not_equal(a, b);
    assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     43);
    free(a), free(b);
}

/* base64url text (no padding) decoded into a malloc'd buffer. */
static unsigned char *b64url(const char *s, size_t len, size_t *out_len)
{
    unsigned char *out = malloc(len);
    assert_non_null(out);
    assert_int_equal(mcp__base64url_decode(s, len, out, out_len), MCP_OK);
    return out;
}

/* Verifies a compact JWS against the key's PEM; returns its header as JSON. */
static json_t *verify_jws(const char *jws, const char *pem, int es256)
{
    const char *d1 = strchr(jws, '.'), *d2 = d1 != NULL ? strchr(d1 + 1, '.') : NULL;
    assert_non_null(d2);
    size_t hl, sl;
    unsigned char *h = b64url(jws, (size_t)(d1 - jws), &hl);
    unsigned char *sig = b64url(d2 + 1, strlen(d2 + 1), &sl);
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    assert_non_null(k);
    unsigned char *der = sig;
    size_t derlen = sl;
    if (es256) {
        /* JWS carries R||S (RFC 7518 §3.4); OpenSSL verifies DER. */
        assert_int_equal(sl, 64);
        ECDSA_SIG *es = ECDSA_SIG_new();
        ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
        der = NULL;
        derlen = (size_t)i2d_ECDSA_SIG(es, &der);
        ECDSA_SIG_free(es);
    }
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k), 1);
    assert_int_equal(
        EVP_DigestVerify(md, der, derlen, (const unsigned char *)jws, (size_t)(d2 - jws)), 1);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    if (der != sig)
        OPENSSL_free(der);
    free(sig);
    json_t *header = json_loadb((const char *)h, hl, 0, NULL);
    free(h);
    assert_non_null(header);
    return header;
}

static void test_jws_es256_and_rs256_verify_with_openssl(void **state)
{
    (void)state;
    mcp__jkey *k = NULL;
    assert_int_equal(mcp__jkey_new_es256(&k), MCP_OK);
    char *pem = mcp__jkey_pem(k);
    json_t *claims = json_pack("{s:s, s:i}", "htm", "POST", "iat", 1);
    json_t *hdr = json_pack("{s:s, s:o}", "typ", "dpop+jwt", "jwk", mcp__jkey_public_jwk(k));
    char *jws = mcp__jws_sign(k, hdr, claims);
    assert_non_null(jws);
    json_t *h = verify_jws(jws, pem, 1);
    assert_string_equal(json_string_value(json_object_get(h, "alg")), "ES256");
    json_t *jwk = json_object_get(h, "jwk");
    assert_string_equal(json_string_value(json_object_get(jwk, "crv")), "P-256");
    assert_int_equal(strlen(json_string_value(json_object_get(jwk, "x"))), 43);
    assert_null(json_object_get(jwk, "d")); /* the public key only */
    json_decref(h);
    json_decref(hdr);
    free(jws);
    /* The PEM loads back as the same kind of key. */
    mcp__jkey *k2 = NULL;
    assert_int_equal(mcp__jkey_from_pem(pem, "ES256", &k2), MCP_OK);
    assert_int_equal(mcp__jkey_from_pem(pem, "RS256", &k), MCP_EINVAL);
    mcp__jkey_free(k2);
    mcp__jkey_free(k);
    free(pem);

    /* RS256 from a 2048-bit key; a 1024-bit one and a P-384 one are refused. */
    EVP_PKEY *rsa = EVP_RSA_gen(2048), *small = EVP_RSA_gen(1024), *p384 = EVP_EC_gen("P-384");
    char *pems[3];
    EVP_PKEY *keys[3] = {rsa, small, p384};
    for (int i = 0; i < 3; i++) {
        BIO *bio = BIO_new(BIO_s_mem());
        PEM_write_bio_PrivateKey(bio, keys[i], NULL, NULL, 0, NULL, NULL);
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        pems[i] = strndup(data, (size_t)n);
        BIO_free(bio);
        EVP_PKEY_free(keys[i]);
    }
    assert_int_equal(mcp__jkey_from_pem(pems[0], NULL, &k), MCP_OK);
    hdr = json_pack("{s:s}", "typ", "JWT");
    jws = mcp__jws_sign(k, hdr, claims);
    h = verify_jws(jws, pems[0], 0);
    assert_string_equal(json_string_value(json_object_get(h, "alg")), "RS256");
    json_decref(h);
    json_decref(hdr);
    free(jws);
    mcp__jkey_free(k);
    assert_int_equal(mcp__jkey_from_pem(pems[1], NULL, &k), MCP_EINVAL);
    assert_int_equal(mcp__jkey_from_pem(pems[2], NULL, &k), MCP_EINVAL);
    assert_int_equal(mcp__jkey_from_pem("not a key", NULL, &k), MCP_EINVAL);
    /* An encrypted key is refused (never a passphrase prompt on the terminal). */
    EVP_PKEY *ek = EVP_EC_gen("P-256");
    BIO *eb = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_PrivateKey(eb, ek, EVP_aes_128_cbc(), (unsigned char *)"secret",
                                              6, NULL, NULL),
                     1);
    char *edata;
    long en = BIO_get_mem_data(eb, &edata);
    char *epem = strndup(edata, (size_t)en);
    assert_non_null(strstr(epem, "ENCRYPTED"));
    assert_int_equal(mcp__jkey_from_pem(epem, NULL, &k), MCP_EINVAL);
    free(epem);
    BIO_free(eb);
    EVP_PKEY_free(ek);
    for (int i = 0; i < 3; i++)
        free(pems[i]);
    json_decref(claims);
}

static void test_file_store_keeps_secrets_private(void **state)
{
    (void)state;
    char dir[] = "/tmp/mcp-unit-oauth-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *sub = mcp__asprintf("%s/a/b", dir);
    mcp_token_store *s = NULL;
    assert_int_equal(mcp_token_store_files(sub, &s), MCP_OK);
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    char *text = NULL;
    assert_int_equal(s->load(s->user, "https://x/mcp", &text), MCP_ENOENT);
    const char *doc = "{\"version\":1,\"server\":\"https://x/mcp\",\"tokens\":{\"access_token\":"
                      "\"AT\",\"refresh_token\":\"RT\",\"expires_at\":5000,\"scope\":\"a\"}}";
    assert_int_equal(s->save(s->user, "https://x/mcp", doc), MCP_OK);
    assert_int_equal(s->load(s->user, "https://x/mcp", &text), MCP_OK);
    assert_string_equal(text, doc);
    free(text);
    /* Described without a secret; listed by its server. */
    json_t *d = NULL;
    assert_int_equal(mcp_token_store_describe(s, "https://x/mcp", &d), MCP_OK);
    char *dump = json_dumps(d, JSON_COMPACT);
    assert_null(strstr(dump, "AT\""));
    assert_null(strstr(dump, "RT"));
    assert_true(json_is_true(json_object_get(d, "refresh_token")));
    assert_int_equal(json_integer_value(json_object_get(d, "expires_at")), 5);
    free(dump);
    json_decref(d);
    char **keys = NULL;
    assert_int_equal(s->keys(s->user, &keys), MCP_OK);
    assert_string_equal(keys[0], "https://x/mcp");
    assert_null(keys[1]);
    mcp__strv_free(keys);
    /* The file is 0600, and one others can read is refused. */
    char *glob_dir = mcp__asprintf("ls %s/*.json", sub);
    FILE *f = popen(glob_dir, "r");
    char path[512] = "";
    assert_non_null(fgets(path, sizeof(path), f));
    pclose(f);
    path[strcspn(path, "\n")] = '\0';
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(s->load(s->user, "https://x/mcp", &text), MCP_EIO);
    /* Saving again makes it 0600 once more. */
    assert_int_equal(s->save(s->user, "https://x/mcp", doc), MCP_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(mcp_token_store_forget(s, "https://x/mcp"), MCP_OK);
    assert_int_equal(mcp_token_store_forget(s, "https://x/mcp"), MCP_ENOENT);
    free(glob_dir);
    mcp_token_store_free(s);
    char *rm = mcp__asprintf("rm -rf %s", dir);
    assert_int_equal(system(rm), 0);
    free(rm);
    free(sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_values_are_percent_encoded_and_read_back),
        cmocka_unit_test(test_urls_split_into_origin_and_path),
        cmocka_unit_test(test_challenges_are_read_as_rfc9110_lists),
        cmocka_unit_test(test_scopes_unite_in_order_each_once),
        cmocka_unit_test(test_server_text_is_made_printable_and_bounded),
        cmocka_unit_test(test_pkce_s256_matches_rfc7636),
        cmocka_unit_test(test_jws_es256_and_rs256_verify_with_openssl),
        cmocka_unit_test(test_file_store_keeps_secrets_private),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
