/* SPDX-License-Identifier: MIT */
/*
 * Keys and JWT access tokens made by the tests with cjose: the authorization server's
 * side of what the built-in JWT verifier checks. Failures are cmocka assertions.
 */
#ifndef MCP_TESTS_INTEGRATION_JWT_TOKENS_H
#define MCP_TESTS_INTEGRATION_JWT_TOKENS_H

#include <cjose/cjose.h>
#include <jansson.h>
#include <stddef.h>

/* A new signing key: RSA 2048 (rsa) or EC P-256, with kid. */
cjose_jwk_t *jt_make_key(int rsa, const char *kid);
/* An RSA key of bits bits; an EC P-256 key. */
cjose_jwk_t *jt_make_rsa_key(size_t bits, const char *kid);
cjose_jwk_t *jt_make_ec_key(const char *kid);
/* Writes the public keys as a JWKS document to path (through a rename: readers see the
 * old document or the new one). */
void jt_write_jwks(const char *path, cjose_jwk_t *const keys[], size_t n);
/* Claims of an access token: iss, sub, aud, scope, iat now, exp exp_in seconds later. */
json_t *jt_claims(const char *iss, const char *aud, const char *sub, long long exp_in,
                  const char *scope);
/* A compact JWS of payload (stolen) signed with key and alg; typ NULL: none; kid NULL:
 * the key's. malloc'd. */
char *jt_sign(cjose_jwk_t *key, const char *alg, const char *typ, const char *kid, json_t *payload);

#endif
