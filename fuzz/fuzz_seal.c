/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sealed tokens (src/util/seal.c). The input, NUL-terminated, is a
 * token handed to mcp__sealer_unseal as a retried request's requestState would be, at
 * FUZZ_NOW, with a sealer whose current key (id 2) is 32 bytes of 0x22 and previous
 * key (id 1) 32 bytes of 0x11, and the binding "tools/call\0fuzz". The seeds in
 * fuzz/corpus/seal/ were sealed with those keys and that binding.
 *
 * Oracles: the sanitizers; unseal returns only its documented codes, and NULL and 0
 * unless it opened; a token that opens fails with another binding, and is expired
 * once the clock passes every expiry. Then the input itself is sealed as a plaintext
 * and must open to the same bytes, and to nothing with another binding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/seal.h"

#define FUZZ_NOW 1700000000000ull

static const char binding[] = "tools/call\0fuzz";
static const char other[] = "tools/call\0fuzy";

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_seal: %s\n", what);
        abort();
    }
}

static const mcp__sealer *sealer(void)
{
    static mcp__sealer s;
    static int ready;
    if (!ready) {
        unsigned char k[MCP__SEAL_KEY_LEN];
        memset(k, 0x11, sizeof k);
        mcp__sealer_init(&s, 1, k);
        memset(k, 0x22, sizeof k);
        check(mcp__sealer_rotate(&s, 2, k) == MCP_OK, "rotate");
        ready = 1;
    }
    return &s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const mcp__sealer *s = sealer();
    char *token = malloc(size + 1);
    check(token != NULL, "out of memory");
    memcpy(token, data, size);
    token[size] = '\0';

    unsigned char *pt = NULL;
    size_t len = 0;
    int rc = mcp__sealer_unseal(s, token, binding, sizeof binding - 1, FUZZ_NOW, &pt, &len);
    check(rc == MCP_OK || rc == MCP_EINVAL || rc == MCP_EPROTO || rc == MCP_ETIMEDOUT,
          "unseal returned an undocumented code");
    if (rc == MCP_OK) {
        check(pt != NULL && pt[len] == '\0', "an opened token's plaintext is not terminated");
        unsigned char *again = NULL;
        size_t n = 0;
        check(mcp__sealer_unseal(s, token, other, sizeof other - 1, FUZZ_NOW, &again, &n) ==
                  MCP_EPROTO,
              "a token opened with another binding");
        int late =
            mcp__sealer_unseal(s, token, binding, sizeof binding - 1, UINT64_MAX, &again, &n);
        check(late == MCP_ETIMEDOUT || (late == MCP_OK && n == len), "the clock changed a token");
        free(again);
    } else {
        check(pt == NULL && len == 0, "a failed unseal handed out a plaintext");
    }
    free(pt);

    if (size <= MCP__SEAL_MAX_PLAINTEXT) {
        char *sealed = NULL;
        check(mcp__sealer_seal(s, binding, sizeof binding - 1, data, size, FUZZ_NOW + 1000,
                               &sealed) == MCP_OK,
              "seal failed");
        check(mcp__sealer_unseal(s, sealed, binding, sizeof binding - 1, FUZZ_NOW, &pt, &len) ==
                      MCP_OK &&
                  len == size && (size == 0 || memcmp(pt, data, size) == 0),
              "a sealed input did not open to itself");
        free(pt);
        pt = NULL;
        check(mcp__sealer_unseal(s, sealed, other, sizeof other - 1, FUZZ_NOW, &pt, &len) ==
                  MCP_EPROTO,
              "a sealed input opened with another binding");
        free(sealed);
    }
    free(token);
    return 0;
}
