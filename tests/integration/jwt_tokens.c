/* SPDX-License-Identifier: MIT */
/*
 * Keys and JWT access tokens made by the tests, with cjose; see jwt_tokens.h.
 */
#define _GNU_SOURCE
#include "jwt_tokens.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

cjose_jwk_t *jt_make_key(int rsa, const char *kid)
{
    return rsa ? jt_make_rsa_key(2048, kid) : jt_make_ec_key(kid);
}

cjose_jwk_t *jt_make_rsa_key(size_t bits, const char *kid)
{
    cjose_err err;
    static const uint8_t e[] = {0x01, 0x00, 0x01};
    cjose_jwk_t *k = cjose_jwk_create_RSA_random(bits, e, sizeof(e), &err);
    assert_non_null(k);
    assert_true(cjose_jwk_set_kid(k, kid, strlen(kid), &err));
    return k;
}

cjose_jwk_t *jt_make_ec_key(const char *kid)
{
    cjose_err err;
    cjose_jwk_t *k = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
    assert_non_null(k);
    assert_true(cjose_jwk_set_kid(k, kid, strlen(kid), &err));
    return k;
}

void jt_write_jwks(const char *path, cjose_jwk_t *const keys[], size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        cjose_err err;
        char *text = cjose_jwk_to_json(keys[i], false, &err);
        assert_non_null(text);
        json_array_append_new(arr, json_loads(text, 0, NULL));
        free(text);
    }
    json_t *doc = json_pack("{s:o}", "keys", arr);
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    assert_int_equal(json_dump_file(doc, tmp, JSON_COMPACT), 0);
    assert_int_equal(rename(tmp, path), 0);
    json_decref(doc);
}

json_t *jt_claims(const char *iss, const char *aud, const char *sub, long long exp_in,
                  const char *scope)
{
    long long now = (long long)time(NULL);
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "iss", iss, "sub", sub, "aud", aud, "scope",
                     scope, "iat", (json_int_t)now, "exp", (json_int_t)(now + exp_in));
}

char *jt_sign(cjose_jwk_t *key, const char *alg, const char *typ, const char *kid, json_t *payload)
{
    cjose_err err;
    json_t *hdr = json_pack("{s:s}", "alg", alg);
    if (typ != NULL)
        json_object_set_new(hdr, "typ", json_string(typ));
    json_object_set_new(hdr, "kid", json_string(kid ? kid : cjose_jwk_get_kid(key, &err)));
    char *text = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    cjose_jws_t *jws =
        cjose_jws_sign(key, (cjose_header_t *)hdr, (const uint8_t *)text, strlen(text), &err);
    free(text);
    json_decref(hdr);
    assert_non_null(jws);
    const char *ser;
    assert_true(cjose_jws_export(jws, &ser, &err));
    char *out = strdup(ser);
    cjose_jws_release(jws);
    return out;
}
