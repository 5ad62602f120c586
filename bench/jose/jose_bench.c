/* SPDX-License-Identifier: MIT */
/*
 * Why cjose: Debian's two JOSE libraries side by side (cjose 0.6.2, libjwt 1.10.2),
 * verifying the same RS256 and ES256 tokens N times (signed by libjwt with the PEM
 * keys made below; cjose gets the same public keys as JWKs, as a JWKS gives them).
 * Not part of the build (libjwt is not a dependency):
 *
 *   apt-get install libcjose-dev libjwt-dev
 *   openssl genrsa -out rsa.pem 2048 && openssl rsa -in rsa.pem -pubout -out rsa.pub
 *   openssl ecparam -name prime256v1 -genkey -noout -out ec.pem
 *   openssl ec -in ec.pem -pubout -out ec.pub
 *   cc -O2 -o jose_bench jose_bench.c $(pkg-config --cflags --libs cjose libjwt libcrypto)
 *   ./jose_bench 3000
 */
#define _GNU_SOURCE
#include <cjose/cjose.h>
#include <jwt.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    static char b[8][8192];
    static int i;
    char *o = b[i++];
    size_t n = fread(o, 1, 8191, f);
    o[n] = 0;
    fclose(f);
    return o;
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 2000;
    const char *claims = "{\"iss\":\"https://as\",\"sub\":\"alice\",\"aud\":\"https://r/"
                         "mcp\",\"exp\":4000000000,\"scope\":\"mcp:tools\"}";
    const char *algs[2] = {"RS256", "ES256"};
    const char *priv[2] = {"rsa.pem", "ec.pem"}, *pub[2] = {"rsa.pub", "ec.pub"};
    for (int k = 0; k < 2; k++) {
        /* libjwt: sign and verify with PEM keys */
        jwt_t *j;
        jwt_new(&j);
        jwt_add_grants_json(j, claims);
        char *pk = slurp(priv[k]);
        jwt_set_alg(j, k ? JWT_ALG_ES256 : JWT_ALG_RS256, (unsigned char *)pk, strlen(pk));
        char *tok = jwt_encode_str(j);
        jwt_free(j);
        char *pubk = slurp(pub[k]);
        double t0 = now();
        int ok = 0;
        for (int i = 0; i < N; i++) {
            jwt_t *d = NULL;
            if (jwt_decode(&d, tok, (unsigned char *)pubk, strlen(pubk)) == 0)
                ok++;
            jwt_free(d);
        }
        double t1 = now();
        printf("libjwt %s: %d/%d verified, %.1f us each\n", algs[k], ok, N, (t1 - t0) * 1e6 / N);
        /* cjose: the same token, key as JWK made from the PEM (via OpenSSL's EVP -> cjose spec) */
        cjose_err err;
        cjose_jwk_t *jwk = NULL;
        FILE *f = fopen(pub[k], "r");
        EVP_PKEY *ek = PEM_read_PUBKEY(f, NULL, NULL, NULL);
        fclose(f);
        if (k == 0) {
            BIGNUM *n = NULL, *e = NULL;
            EVP_PKEY_get_bn_param(ek, OSSL_PKEY_PARAM_RSA_N, &n);
            EVP_PKEY_get_bn_param(ek, OSSL_PKEY_PARAM_RSA_E, &e);
            unsigned char nb[512], eb[8];
            int nl = BN_bn2bin(n, nb), el = BN_bn2bin(e, eb);
            cjose_jwk_rsa_keyspec s = {0};
            s.n = nb;
            s.nlen = nl;
            s.e = eb;
            s.elen = el;
            jwk = cjose_jwk_create_RSA_spec(&s, &err);
            BN_free(n);
            BN_free(e);
        } else {
            BIGNUM *x = NULL, *y = NULL;
            EVP_PKEY_get_bn_param(ek, OSSL_PKEY_PARAM_EC_PUB_X, &x);
            EVP_PKEY_get_bn_param(ek, OSSL_PKEY_PARAM_EC_PUB_Y, &y);
            unsigned char xb[32], yb[32];
            BN_bn2binpad(x, xb, 32);
            BN_bn2binpad(y, yb, 32);
            cjose_jwk_ec_keyspec s = {0};
            s.crv = CJOSE_JWK_EC_P_256;
            s.x = xb;
            s.xlen = 32;
            s.y = yb;
            s.ylen = 32;
            jwk = cjose_jwk_create_EC_spec(&s, &err);
            BN_free(x);
            BN_free(y);
        }
        EVP_PKEY_free(ek);
        if (!jwk) {
            printf("cjose key: %s\n", err.message);
            return 1;
        }
        t0 = now();
        ok = 0;
        for (int i = 0; i < N; i++) {
            cjose_jws_t *w = cjose_jws_import(tok, strlen(tok), &err);
            if (w && cjose_jws_verify(w, jwk, &err))
                ok++;
            cjose_jws_release(w);
        }
        t1 = now();
        printf("cjose  %s: %d/%d verified, %.1f us each\n", algs[k], ok, N, (t1 - t0) * 1e6 / N);
        cjose_jwk_release(jwk);
        free(tok);
    }
    return 0;
}
