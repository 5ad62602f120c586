/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the built-in JWT verifier's judgement of a token (src/auth/jwt.c,
 * mcp__jwt_judge), with the RSA and EC P-256 public keys below loaded as the
 * authorization server's JWKS and nothing fetched. The input, NUL-terminated, is the
 * token. The seeds in fuzz/corpus/jwt/ are tokens those keys' private halves signed
 * (RS256, PS256, ES256), and the shapes of the attacks (alg none, HMAC).
 *
 * Oracles: the sanitizers; the verdict is one of the documented ones, with claims (a
 * JSON object) exactly when it accepts and a reason exactly when it refuses; without
 * keys to judge by it is never an acceptance; and the gate's checks of the claims of an
 * accepted token and of the claims as read by a principal run clean.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"

static const char jwks[] =
    "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"fuzz-rsa\",\"e\":\"AQAB\",\"n\":\"sFnEl-o9_MkT7OJ"
    "Q75izjS-R2ytkjI0thZ9EuWqvGkbo_8Mj8HigwJGL7_KaVuyeHq0cEdbJeczwoPbQ-ZaVc"
    "y7vAr1zyxA5ceSZfJ2Lqo60jPJIjiKS8czwESbfLlzqGsGBy3Vn9Qw9K4p4Z4uLzYXZ__c"
    "8qJ_ZMFQMeJYNp1rMUoyOnaXOWgmJPTHwStS04e7-Gv4va9sZaQVS3vAhUcWqyXCogAMwR"
    "PgAWCe7voNBwLKE8OdqMwPHW3f2Ps_iRPeSa4skJ-ld7DZI3G7osPXoyoWJaqb6WNgJUWL"
    "1TFe_RLh1RfLmudY-zQipBSbyMntRppnBLNFOvRU4q_5O3w\"},{\"kty\":\"EC\",\"kid\":\"f"
    "uzz-ec\",\"crv\":\"P-256\",\"x\":\"5N0JfpHN4PkhbgyOZ9VjkhKqBxElwvY_qgglXmObXW4"
    "\",\"y\":\"WZmnWVpHlz1I4R82f8Dchd71p01aNADOurGGuElT0n4\"}]}";

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_jwt: %s\n", what);
        abort();
    }
}

static mcp__jwt *verifier(void)
{
    static mcp__jwt *j;
    if (j == NULL) {
        const char *algs[] = {"RS256", "PS256", "ES256", NULL};
        mcp_jwt_opts o = {
            .size = sizeof(o), .jwks_uri = "http://127.0.0.1:9/jwks", .algorithms = algs};
        check(mcp__jwt_new(uv_default_loop(), "https://as.fuzz", &o, &j) == MCP_OK, "new");
        check(mcp__jwt_load_keys(j, jwks) == MCP_OK, "keys");
    }
    return j;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcp__jwt *j = verifier();
    char *token = malloc(size + 1);
    check(token != NULL, "out of memory");
    memcpy(token, data, size);
    token[size] = '\0';
    const char *reason;
    json_t *claims;
    int v = mcp__jwt_judge(j, token, 0, &reason, &claims);
    check(v == MCP__JWT_ACCEPT || v == MCP__JWT_REJECT, "a verdict other than accept or reject");
    check((v == MCP__JWT_ACCEPT) == (claims != NULL), "claims exactly when accepted");
    check((v == MCP__JWT_REJECT) == (reason != NULL), "a reason exactly when refused");
    if (claims != NULL) {
        check(json_is_object(claims), "claims that are not an object");
        mcp_principal *p = mcp__principal_new(claims);
        check(p != NULL, "principal");
        (void)mcp__principal_check(p, "https://r/mcp", 0, "https://as.fuzz", 1800000000, 60);
        char owner[65];
        check(mcp__principal_owner(p, owner) == MCP_OK && strlen(owner) == 64, "owner");
        mcp__principal_unref(p);
    }
    free(token);
    return 0;
}
