/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/auth: bearer credentials, challenges byte for byte, principals
 * and their claim checks, the cache of verified tokens, and the metadata document.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/auth.h"

/* ---- Credentials ---- */

static void test_bearer_header_is_read_by_rfc6750_syntax(void **state)
{
    (void)state;
    const char *tok;
    size_t len;
    assert_int_equal(mcp__bearer_parse("Bearer abc.DEF-_~+/9==", 100, &tok, &len),
                     MCP__BEARER_TOKEN);
    assert_int_equal(len, strlen("abc.DEF-_~+/9=="));
    assert_memory_equal(tok, "abc.DEF-_~+/9==", len);
    /* The scheme is case-insensitive; several spaces are tolerated. */
    assert_int_equal(mcp__bearer_parse("bEARER   xyz", 100, &tok, &len), MCP__BEARER_TOKEN);
    assert_int_equal(len, 3);
    /* No header, or another scheme: no bearer token at all. */
    assert_int_equal(mcp__bearer_parse(NULL, 100, &tok, &len), MCP__BEARER_NONE);
    assert_int_equal(mcp__bearer_parse("Basic dXNlcjpwYXNz", 100, &tok, &len), MCP__BEARER_NONE);
    assert_int_equal(mcp__bearer_parse("Bearerxyz", 100, &tok, &len), MCP__BEARER_NONE);
    /* A Bearer header whose token is missing or has characters a b64token has not. */
    assert_int_equal(mcp__bearer_parse("Bearer", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer ", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer a b", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer a,b", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer =abc", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer ab=c", 100, &tok, &len), MCP__BEARER_MALFORMED);
    assert_int_equal(mcp__bearer_parse("Bearer \"abc\"", 100, &tok, &len), MCP__BEARER_MALFORMED);
    /* Longer than the bound. */
    assert_int_equal(mcp__bearer_parse("Bearer abcdef", 5, &tok, &len), MCP__BEARER_TOO_LONG);
    assert_int_equal(mcp__bearer_parse("Bearer abcde", 5, &tok, &len), MCP__BEARER_TOKEN);
}

static void test_access_token_in_the_query_is_found(void **state)
{
    (void)state;
    assert_true(mcp__bearer_in_query("access_token=x"));
    assert_true(mcp__bearer_in_query("a=1&access_token=x&b=2"));
    assert_true(mcp__bearer_in_query("a=1&access_token"));
    assert_false(mcp__bearer_in_query(NULL));
    assert_false(mcp__bearer_in_query(""));
    assert_false(mcp__bearer_in_query("my_access_token=x"));
    assert_false(mcp__bearer_in_query("access_tokens=x"));
}

static void expect_challenge(const char *error, const char *desc, const char *scope, const char *rm,
                             const char *want)
{
    char *got = mcp__bearer_challenge(error, desc, scope, rm);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_challenges_are_written_byte_for_byte(void **state)
{
    (void)state;
    const char *rm = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    /* No token: resource_metadata, then scope, as MCP's example. */
    expect_challenge(NULL, NULL, "files:read", rm,
                     "Bearer resource_metadata=\"https://mcp.example.com/.well-known/"
                     "oauth-protected-resource/mcp\", scope=\"files:read\"");
    expect_challenge(NULL, NULL, NULL, rm,
                     "Bearer resource_metadata=\"https://mcp.example.com/.well-known/"
                     "oauth-protected-resource/mcp\"");
    expect_challenge("invalid_token", "The access token expired", NULL, rm,
                     "Bearer error=\"invalid_token\", error_description=\"The access token "
                     "expired\", resource_metadata=\"https://mcp.example.com/.well-known/"
                     "oauth-protected-resource/mcp\"");
    /* insufficient_scope: error, scope, resource_metadata, error_description. */
    expect_challenge("insufficient_scope", "Need more", "a b", rm,
                     "Bearer error=\"insufficient_scope\", scope=\"a b\", resource_metadata="
                     "\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", "
                     "error_description=\"Need more\"");
    /* error_description takes only %x20-21 / %x23-5B / %x5D-7E: others become spaces. */
    expect_challenge("invalid_token", "a\"b\\c\r\nd\xc3\xa9", NULL, NULL,
                     "Bearer error=\"invalid_token\", error_description=\"a b c  d  \"");
    /* Other values are quoted strings: '"' and '\' escaped, control characters dropped. */
    expect_challenge(NULL, NULL, NULL, "https://x/\"q\\\r\n",
                     "Bearer resource_metadata=\"https://x/\\\"q\\\\\"");
}

static void test_scope_tokens_are_checked(void **state)
{
    (void)state;
    assert_true(mcp__scope_token_valid("files:read"));
    assert_true(mcp__scope_token_valid("https://x/y!#[]"));
    assert_false(mcp__scope_token_valid(""));
    assert_false(mcp__scope_token_valid(NULL));
    assert_false(mcp__scope_token_valid("a b"));
    assert_false(mcp__scope_token_valid("a\"b"));
    assert_false(mcp__scope_token_valid("a\\b"));
    assert_false(mcp__scope_token_valid("caf\xc3\xa9"));
}

/* ---- Principals ---- */

static mcp_principal *principal(const char *json)
{
    json_t *claims = json_loads(json, 0, NULL);
    assert_non_null(claims);
    mcp_principal *p = mcp__principal_new(claims);
    assert_non_null(p);
    return p;
}

static void test_principal_reads_the_standard_claims(void **state)
{
    (void)state;
    mcp_principal *p = principal("{\"sub\":\"alice\",\"client_id\":\"app\",\"iss\":\"https://as\","
                                 "\"scope\":\"  read  write \",\"aud\":[\"https://r/mcp\",\"x\"],"
                                 "\"exp\":2000000000,\"nbf\":1000000000,\"extra\":1}");
    assert_string_equal(mcp_principal_subject(p), "alice");
    assert_string_equal(mcp_principal_client_id(p), "app");
    assert_string_equal(mcp_principal_issuer(p), "https://as");
    const char *const *s = mcp_principal_scopes(p);
    assert_string_equal(s[0], "read");
    assert_string_equal(s[1], "write");
    assert_null(s[2]);
    assert_true(mcp_principal_has_scope(p, "write"));
    assert_false(mcp_principal_has_scope(p, "writ"));
    assert_int_equal(mcp_principal_expires(p), 2000000000);
    assert_int_equal(mcp__principal_not_before(p), 1000000000);
    assert_string_equal(mcp__principal_audiences(p)[1], "x");
    assert_int_equal(json_integer_value(json_object_get(mcp_principal_claims(p), "extra")), 1);
    mcp__principal_unref(p);

    /* "azp" when there is no client_id; "scp" as an array; "aud" as a string. */
    p = principal("{\"azp\":\"app2\",\"scp\":[\"a\",\"b\"],\"aud\":\"https://r/mcp\"}");
    assert_string_equal(mcp_principal_client_id(p), "app2");
    assert_string_equal(mcp_principal_scopes(p)[1], "b");
    assert_string_equal(mcp__principal_audiences(p)[0], "https://r/mcp");
    assert_null(mcp__principal_audiences(p)[1]);
    mcp__principal_unref(p);

    /* A NULL principal reads as an empty one. */
    assert_null(mcp_principal_subject(NULL));
    assert_null(mcp_principal_scopes(NULL)[0]);
    assert_false(mcp_principal_has_scope(NULL, "a"));
    assert_null(mcp__principal_new(json_string("not an object")));
}

static const char *check(const char *json, const char *issuer, int allow_no_aud, int64_t now)
{
    static char reason[200];
    mcp_principal *p = principal(json);
    const char *r = mcp__principal_check(p, "https://r/mcp", allow_no_aud, issuer, now, 60);
    snprintf(reason, sizeof(reason), "%s", r != NULL ? r : "ok");
    mcp__principal_unref(p);
    return reason;
}

static void test_claim_checks_hold_audience_expiry_and_issuer(void **state)
{
    (void)state;
    int64_t now = 1800000000;
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"exp\":1800000100}", NULL, 0, now),
                        "ok");
    assert_string_equal(check("{\"aud\":[\"o\",\"https://r/mcp\"]}", NULL, 0, now), "ok");
    assert_string_equal(check("{\"aud\":\"https://r/other\"}", NULL, 0, now),
                        "The access token was issued for another resource");
    assert_string_equal(check("{\"aud\":\"https://r/mcp/\"}", NULL, 0, now),
                        "The access token was issued for another resource");
    assert_string_equal(check("{\"sub\":\"a\"}", NULL, 0, now),
                        "The access token names no audience");
    assert_string_equal(check("{\"sub\":\"a\"}", NULL, 1, now), "ok");
    assert_string_equal(check("{\"aud\":\"x\"}", NULL, 1, now),
                        "The access token was issued for another resource");
    /* exp and nbf with 60 s of tolerance. */
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"exp\":1799999941}", NULL, 0, now),
                        "ok");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"exp\":1799999940}", NULL, 0, now),
                        "The access token expired");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"nbf\":1800000060}", NULL, 0, now),
                        "ok");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"nbf\":1800000061}", NULL, 0, now),
                        "The access token is not valid yet");
    assert_string_equal(
        check("{\"aud\":\"https://r/mcp\",\"iss\":\"https://as\"}", "https://as", 0, now), "ok");
    assert_string_equal(
        check("{\"aud\":\"https://r/mcp\",\"iss\":\"https://as/\"}", "https://as", 0, now),
        "The access token was issued by another authorization server");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\"}", "https://as", 0, now),
                        "The access token was issued by another authorization server");
    /* Claims of the wrong type are refused, not guessed at. */
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"exp\":\"soon\"}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
    assert_string_equal(check("{\"aud\":[\"https://r/mcp\",7]}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"scope\":[\"a\"]}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"sub\":5}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"scp\":[\"a b\"]}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
    assert_string_equal(check("{\"aud\":\"https://r/mcp\",\"scp\":[\"\"]}", NULL, 0, now),
                        "The access token has a claim of the wrong type");
}

/* ---- The cache ---- */

static void test_cache_is_keyed_by_digest_bounded_and_expires(void **state)
{
    (void)state;
    char k1[65], k2[65], k3[65];
    assert_int_equal(mcp__token_key("one", 3, k1), MCP_OK);
    assert_int_equal(mcp__token_key("two", 3, k2), MCP_OK);
    assert_int_equal(mcp__token_key("three", 5, k3), MCP_OK);
    /* SHA-256("one"), in hex: the token itself is never the key. */
    assert_string_equal(k1, "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed");
    mcp__token_cache c;
    mcp__token_cache_init(&c, 2);
    mcp_principal *p = principal("{\"sub\":\"a\"}");
    assert_int_equal(mcp__token_cache_put(&c, k1, p, 1000), MCP_OK);
    assert_int_equal(mcp__token_cache_put(&c, k2, p, 1000), MCP_OK);
    assert_ptr_equal(mcp__token_cache_get(&c, k1, 10, NULL), p); /* k1 is now the most recent */
    assert_int_equal(mcp__token_cache_put(&c, k3, p, 1000), MCP_OK);
    assert_int_equal(c.len, 2);
    assert_null(mcp__token_cache_get(&c, k2, 10, NULL)); /* the least recently used went */
    assert_ptr_equal(mcp__token_cache_get(&c, k3, 10, NULL), p);
    /* Past its deadline an entry is gone. */
    assert_null(mcp__token_cache_get(&c, k1, 1000, NULL));
    assert_int_equal(c.len, 1);
    /* Putting a key again replaces it. */
    assert_int_equal(mcp__token_cache_put(&c, k3, p, 5000), MCP_OK);
    assert_int_equal(c.len, 1);
    assert_ptr_equal(mcp__token_cache_get(&c, k3, 4999, NULL), p);
    mcp__token_cache_free(&c);
    mcp__principal_unref(p);
}

/* ---- The gate's set-up and document ---- */

static void never(void *user, const char *token, mcp_token_check *check)
{
    (void)user;
    (void)token;
    mcp_token_check_reject(check, NULL);
}

static void test_metadata_document_and_paths_follow_rfc9728(void **state)
{
    (void)state;
    const char *as[] = {"https://as.example.com", NULL};
    const char *scopes[] = {"read", "write", NULL};
    mcp_auth_opts o = {.resource = "https://mcp.example.com/mcp",
                       .authorization_servers = as,
                       .scopes_supported = scopes,
                       .resource_name = "Example",
                       .metadata_extra =
                           "{\"resource_documentation\":\"https://d\",\"resource\":\"x\"}",
                       .metadata_at_root = 1,
                       .verifier = {.verify = never}};
    mcp__auth *a;
    assert_int_equal(mcp__auth_new(NULL, &o, &a), MCP_OK);
    assert_string_equal(mcp__auth_metadata_path(a), "/.well-known/oauth-protected-resource/mcp");
    assert_string_equal(mcp__auth_metadata_root_path(a), "/.well-known/oauth-protected-resource");
    size_t len;
    json_t *doc = json_loads(mcp__auth_metadata(a, &len), 0, NULL);
    assert_non_null(doc);
    /* The extra members cannot replace the resource. */
    assert_string_equal(json_string_value(json_object_get(doc, "resource")),
                        "https://mcp.example.com/mcp");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(doc, "authorization_servers"), 0)),
        "https://as.example.com");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(doc, "scopes_supported"), 1)), "write");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(doc, "bearer_methods_supported"), 0)),
        "header");
    assert_string_equal(json_string_value(json_object_get(doc, "resource_name")), "Example");
    assert_string_equal(json_string_value(json_object_get(doc, "resource_documentation")),
                        "https://d");
    json_decref(doc);
    mcp__auth_free(a);

    /* A resource at the root has one document, at the root. */
    mcp_auth_opts r = {
        .resource = "http://127.0.0.1:8080", .metadata_at_root = 1, .verifier = {.verify = never}};
    assert_int_equal(mcp__auth_new(NULL, &r, &a), MCP_OK);
    assert_string_equal(mcp__auth_metadata_path(a), "/.well-known/oauth-protected-resource");
    assert_null(mcp__auth_metadata_root_path(a));
    mcp__auth_free(a);

    /* Refused: no resource, no verifier, not an http(s) URL, a fragment or query, a
     * scope that is not a scope-token, extra members that are not an object. */
    mcp_auth_opts bad = {.resource = "https://x/mcp", .verifier = {.verify = never}};
    bad.resource = NULL;
    assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
    bad.resource = "https://x/mcp";
    bad.verifier.verify = NULL;
    assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
    bad.verifier.verify = never;
    const char *const bad_resources[] = {"ftp://x/mcp", "https:///mcp", "https://x/mcp#f",
                                         "https://x/mcp?q=1", "mcp"};
    for (size_t i = 0; i < sizeof(bad_resources) / sizeof(*bad_resources); i++) {
        bad.resource = bad_resources[i];
        assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
    }
    bad.resource = "https://x/mcp";
    const char *bad_scope[] = {"ok", "not ok", NULL};
    bad.required_scopes = bad_scope;
    assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
    bad.required_scopes = NULL;
    bad.metadata_extra = "[1]";
    assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
    bad.metadata_extra = "{\"a\":1,\"a\":2}";
    assert_int_equal(mcp__auth_new(NULL, &bad, &a), MCP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bearer_header_is_read_by_rfc6750_syntax),
        cmocka_unit_test(test_access_token_in_the_query_is_found),
        cmocka_unit_test(test_challenges_are_written_byte_for_byte),
        cmocka_unit_test(test_scope_tokens_are_checked),
        cmocka_unit_test(test_principal_reads_the_standard_claims),
        cmocka_unit_test(test_claim_checks_hold_audience_expiry_and_issuer),
        cmocka_unit_test(test_cache_is_keyed_by_digest_bounded_and_expires),
        cmocka_unit_test(test_metadata_document_and_paths_follow_rfc9728),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
