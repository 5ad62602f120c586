/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what the authorization gate reads from a request and writes back
 * (src/auth/bearer.c, principal.c): the input, NUL-terminated, is at once an
 * Authorization header value, a query string, the text of a challenge's
 * error_description, scope and resource_metadata, a claims document and a list of
 * scopes. The seeds in fuzz/corpus/bearer/ are such headers and claims.
 *
 * Oracles: the sanitizers; a token read from a header lies at the header's end, is no
 * longer than the bound and holds only b64token characters; a challenge holds no
 * control character, begins with "Bearer" and every one of its quoted strings ends
 * (escapes included) before the next parameter; a principal read from any JSON object
 * answers every accessor, has NULL-terminated scopes and audiences, and its checks and
 * owner digest run clean.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"

#define MAX_TOKEN 64

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_bearer: %s\n", what);
        abort();
    }
}

static int b64token_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

/* Walks a challenge: "Bearer" then `name="value"` parameters separated by ", ". */
static void check_challenge(const char *c)
{
    check(strncmp(c, "Bearer", 6) == 0, "a challenge that does not begin with Bearer");
    for (const unsigned char *p = (const unsigned char *)c; *p; p++)
        check(*p >= 0x20 && *p != 0x7F, "a control character in a challenge");
    const char *p = c + 6;
    while (*p != '\0') {
        check(*p == ' ' || (p[0] == ',' && p[1] == ' '), "parameters not separated");
        p += *p == ',' ? 2 : 1;
        const char *eq = strchr(p, '=');
        check(eq != NULL && eq[1] == '"', "a parameter without a quoted value");
        p = eq + 2;
        while (*p != '"') {
            check(*p != '\0', "a quoted string that does not end");
            p += *p == '\\' ? 2 : 1;
        }
        p++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    check(in != NULL, "out of memory");
    memcpy(in, data, size);
    in[size] = '\0';

    const char *token;
    size_t len;
    enum mcp__bearer_kind k = mcp__bearer_parse(in, MAX_TOKEN, &token, &len);
    if (k == MCP__BEARER_TOKEN) {
        check(token > in && token + len == in + strlen(in), "a token not at the header's end");
        check(len > 0 && len <= MAX_TOKEN, "a token of the wrong length");
        for (size_t i = 0; i < len; i++)
            check(b64token_char((unsigned char)token[i]), "a token with a foreign character");
    } else {
        check(token == NULL && len == 0, "a token given with another kind");
    }
    (void)mcp__bearer_in_query(in);

    const char *scope = mcp__scope_token_valid(in) ? in : "fuzz";
    char *c = mcp__bearer_challenge("invalid_token", in, scope, in);
    check(c != NULL, "challenge");
    check_challenge(c);
    free(c);
    c = mcp__bearer_challenge("insufficient_scope", in, scope, in);
    check(c != NULL, "challenge");
    check_challenge(c);
    free(c);

    json_t *claims = json_loads(in, JSON_DECODE_ANY, NULL);
    if (json_is_object(claims)) {
        mcp_principal *p = mcp__principal_new(claims);
        check(p != NULL, "principal");
        /* Scopes that are not scope-tokens make the token's claims refused. */
        int bad = 0;
        for (const char *const *s = mcp_principal_scopes(p); *s != NULL; s++)
            bad |= !mcp__scope_token_valid(*s);
        check(!bad || mcp__principal_check(p, "https://r/mcp", 1, NULL, 1800000000, 60) != NULL,
              "claims with a scope that is not a scope-token pass the checks");
        for (const char *const *a = mcp__principal_audiences(p); *a != NULL; a++)
            (void)strlen(*a);
        (void)mcp_principal_subject(p);
        (void)mcp_principal_client_id(p);
        (void)mcp_principal_issuer(p);
        (void)mcp_principal_expires(p);
        (void)mcp__principal_check(p, "https://r/mcp", 0, "https://as", 1800000000, 60);
        (void)mcp__principal_lacks(p, "a b  c");
        char owner[65];
        check(mcp__principal_owner(p, owner) == MCP_OK && strlen(owner) == 64, "owner");
        mcp__principal_unref(p);
    } else {
        json_decref(claims);
    }
    free(in);
    return 0;
}
