/* SPDX-License-Identifier: MIT */
/*
 * The built-in JWT verifier over real sockets: server_auth with --jwt-issuer fetches
 * the keys the test wrote (a JWKS file it serves at /jwks, read at each fetch), and
 * the test signs its own tokens with cjose. Good tokens of each algorithm get in;
 * "none", HMAC signed with the public key, a wrong typ, a tampered payload, an
 * unknown key and an expired token get 401 with their reasons; a storm of unknown
 * key ids costs one fetch; rotated keys are taken after one fetch, without a
 * restart; keys that cannot be fetched give 503.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjose/cjose.h>
#include <cmocka.h>

#include "harness.h"
#include "http_expect.h"
#include "jwt_tokens.h"

#define RESOURCE "https://mcp.example.test/mcp"
#define ISSUER "https://as.example.test"
#define METADATA_URL "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"

typedef struct jwt_fixture {
    hc_server srv;
    int port;
    hc_server everything; /* mcp-everything --auth-*, keys from srv (group "everything") */
    int eport;
    char jwks_path[64];
    cjose_jwk_t *rsa, *ec, *rsa2; /* rsa2: not in the JWKS until a rotation */
} jwt_fixture;

/* Writes the public keys to the fixture's JWKS file. */
static void write_jwks(jwt_fixture *f, cjose_jwk_t *const keys[], size_t n)
{
    jt_write_jwks(f->jwks_path, keys, n);
}

static json_t *claims_scoped(const char *sub, long long exp_in, const char *scope)
{
    return jt_claims(ISSUER, RESOURCE, sub, exp_in, scope);
}

static json_t *claims(const char *sub, long long exp_in)
{
    return claims_scoped(sub, exp_in, "mcp:tools");
}

static int start(void **state, int refresh_min_ms, int jwks_reachable)
{
    jwt_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->rsa = jt_make_key(1, "rsa-1");
    f->ec = jt_make_key(0, "ec-1");
    f->rsa2 = jt_make_key(1, "rsa-2");
    snprintf(f->jwks_path, sizeof(f->jwks_path), "/tmp/mcp-jwks-%d-%d-%d.json", (int)getpid(),
             refresh_min_ms, jwks_reachable);
    cjose_jwk_t *keys[] = {f->rsa, f->ec};
    write_jwks(f, keys, 2);
    int port = harness_free_port();
    char uri[128], refresh[24];
    /* Unreachable: a port of this server's where nothing serves /jwks (404). */
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/%s", port, jwks_reachable ? "jwks" : "nokeys");
    snprintf(refresh, sizeof(refresh), "%d", refresh_min_ms);
    const char *flags[] = {
        "--resource",  RESOURCE,     "--jwt-issuer",       ISSUER,  "--jwks-uri", uri,
        "--jwks-file", f->jwks_path, "--jwks-refresh-min", refresh, NULL};
    if (hc_server_start_program(&f->srv, "server_auth", port, flags, NULL, HX_START_MS) != 0) {
        free(f);
        return -1;
    }
    f->port = f->srv.port;
    *state = f;
    return 0;
}

static int setup_storm(void **state)
{
    return start(state, 60000, 1);
}

static int setup_rotation(void **state)
{
    return start(state, -1, 1); /* no minimum between fetches */
}

static int setup_unreachable(void **state)
{
    return start(state, -1, 0);
}

/* server_auth serves the keys; mcp-everything, configured by its flags alone, checks
 * tokens with them. */
static int setup_everything(void **state)
{
    if (start(state, -1, 1) != 0)
        return -1;
    jwt_fixture *f = *state;
    char uri[128];
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/jwks", f->port);
    const char *flags[] = {"--auth-resource",
                           RESOURCE,
                           "--auth-issuer",
                           ISSUER,
                           "--auth-jwks-uri",
                           uri,
                           "--auth-scope",
                           "mcp:tools",
                           NULL};
    if (hc_server_start(&f->everything, flags, HX_START_MS) != 0)
        return -1;
    f->eport = f->everything.port;
    return 0;
}

static int teardown(void **state)
{
    jwt_fixture *f = *state;
    int rc = 0;
    if (f->eport != 0 && hc_server_stop_check(&f->everything, HX_STOP_MS) != 0)
        rc = -1;
    if (hc_server_stop_check(&f->srv, HX_STOP_MS) != 0)
        rc = -1;
    unlink(f->jwks_path);
    cjose_jwk_release(f->rsa);
    cjose_jwk_release(f->ec);
    cjose_jwk_release(f->rsa2);
    free(f);
    if (rc != 0)
        hx_teardown_failures++;
    return rc;
}

/* POSTs initialize with token; the response into r. */
static void initialize_with(int port, const char *token, hc_response *r)
{
    char *hdrs = NULL;
    assert_true(asprintf(&hdrs, "%sAuthorization: Bearer %s\r\n", HC_MCP_POST_HEADERS, token) > 0);
    char *body = hc_initialize_body(NULL);
    if (hc_request(port, "POST", "/mcp", hdrs, body, r, HX_REQ_MS) != 0)
        fail_msg("POST initialize: no response");
    free(body);
    free(hdrs);
}

static void expect_ok(int port, const char *token, const char *what)
{
    hc_response r;
    initialize_with(port, token, &r);
    hx_expect_status(&r, 200, what);
    hc_response_free(&r);
}

static void expect_invalid(int port, const char *token, const char *description, const char *what)
{
    hc_response r;
    initialize_with(port, token, &r);
    char want[400];
    snprintf(want, sizeof(want),
             "Bearer error=\"invalid_token\", error_description=\"%s\", "
             "resource_metadata=\"" METADATA_URL "\"",
             description);
    const char *got = hc_header_get(&r, "www-authenticate");
    if (r.status != 401 || got == NULL || strcmp(got, want) != 0)
        fail_msg("%s: %d, WWW-Authenticate %s\n  expected 401, %s", what, r.status,
                 got ? got : "(none)", want);
    hc_response_free(&r);
}

static int served(jwt_fixture *f)
{
    char *log = hc_server_stderr(&f->srv);
    int n = 0;
    for (const char *p = log; (p = strstr(p, "jwks served")) != NULL; p++)
        n++;
    free(log);
    return n;
}

/* served(), once at least n lines have been read off the server's stderr (its reader
 * thread may lag behind the answer that followed the line), or after 5 s. */
static int served_at_least(jwt_fixture *f, int n)
{
    int got = hc_server_wait_count(&f->srv, "jwks served", n, 5000);
    return got >= 0 ? got : served(f);
}

/* ---- Tokens ---- */

static void test_good_tokens_of_each_algorithm_get_in(void **state)
{
    jwt_fixture *f = *state;
    char *t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "RS256");
    free(t);
    t = jt_sign(f->rsa, "PS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "PS256");
    free(t);
    t = jt_sign(f->ec, "ES256", "application/at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "ES256 (typ application/at+jwt)");
    free(t);
}

static void test_bad_tokens_get_401_with_their_reasons(void **state)
{
    jwt_fixture *f = *state;
    /* alg none: a token anyone can make. */
    json_t *c = claims("mallory", 3600);
    char *payload = json_dumps(c, JSON_COMPACT);
    json_decref(c);
    char none[2048];
    cjose_err err;
    char *hdr_b64 = NULL, *pl_b64 = NULL;
    size_t hl, pl;
    const char *hdr = "{\"alg\":\"none\",\"typ\":\"at+jwt\"}";
    assert_true(cjose_base64url_encode((const uint8_t *)hdr, strlen(hdr), &hdr_b64, &hl, &err));
    assert_true(
        cjose_base64url_encode((const uint8_t *)payload, strlen(payload), &pl_b64, &pl, &err));
    snprintf(none, sizeof(none), "%s.%s.", hdr_b64, pl_b64);
    expect_invalid(f->port, none, "The access token's signature algorithm is not accepted",
                   "alg none");
    /* HS256 whose secret is the RSA public key's JSON text (the confusion attack). */
    char *pub = cjose_jwk_to_json(f->rsa, false, &err);
    cjose_jwk_t *oct = cjose_jwk_create_oct_spec((const uint8_t *)pub, strlen(pub), &err);
    assert_non_null(oct);
    char *t = jt_sign(oct, "HS256", "at+jwt", "rsa-1", claims("mallory", 3600));
    expect_invalid(f->port, t, "The access token's signature algorithm is not accepted",
                   "HS256 with the public key");
    free(t);
    cjose_jwk_release(oct);
    free(pub);
    /* Not an access token: no typ, or an ID token's. */
    t = jt_sign(f->rsa, "RS256", NULL, NULL, claims("alice", 3600));
    expect_invalid(f->port, t, "The token is not a JWT access token (typ at+jwt)", "no typ");
    free(t);
    t = jt_sign(f->rsa, "RS256", "JWT", NULL, claims("alice", 3600));
    expect_invalid(f->port, t, "The token is not a JWT access token (typ at+jwt)", "typ JWT");
    free(t);
    /* A payload changed after signing. */
    t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    char *dot = strchr(t, '.');
    char *swapped = NULL;
    assert_true(asprintf(&swapped, "%.*s.%s.%s", (int)(dot - t), t, pl_b64, strrchr(t, '.') + 1) >
                0);
    expect_invalid(f->port, swapped, "The access token's signature does not verify", "tampered");
    free(swapped);
    free(t);
    /* Expired, and signed by the right key for the wrong algorithm family. */
    t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", -3600));
    expect_invalid(f->port, t, "The access token expired", "expired");
    free(t);
    t = jt_sign(f->ec, "ES256", "at+jwt", "rsa-1", claims("alice", 3600));
    expect_invalid(f->port, t, "The access token was signed by an unknown key",
                   "ES256 naming an RSA key");
    free(t);
    /* Valid bearer syntax that cjose 0.6.2 asserts on (a padded last part of one
     * character's worth): it would abort the server; refused before cjose sees it. */
    expect_invalid(f->port, "eyJhbGciOiJSUzI1NiJ9.e30.c=", "The access token is not a signed JWT",
                   "a one-character padded signature");
    expect_invalid(f->port, "eyJhbGciOiJSUzI1NiJ9.e30.a==", "The access token is not a signed JWT",
                   "a padded signature");
    expect_invalid(f->port, "aaaaa.bbbbb.ccccc", "The access token is not a signed JWT",
                   "base64 parts of length 5");
    free(hdr_b64);
    free(pl_b64);
    free(payload);
}

static void test_a_storm_of_unknown_key_ids_costs_one_fetch(void **state)
{
    jwt_fixture *f = *state;
    char *t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "a good token first (the keys are fetched)");
    free(t);
    int before = served_at_least(f, 1);
    for (int i = 0; i < 50; i++) {
        char kid[32];
        snprintf(kid, sizeof(kid), "unknown-%d", i);
        t = jt_sign(f->rsa2, "RS256", "at+jwt", kid, claims("mallory", 3600));
        expect_invalid(f->port, t, "The access token was signed by an unknown key", kid);
        free(t);
    }
    int after = served(f);
    if (after - before > 1)
        fail_msg("50 unknown key ids fetched the keys %d times (at most once)", after - before);
}

static void test_rotated_keys_are_taken_after_one_fetch(void **state)
{
    jwt_fixture *f = *state;
    char *t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "the first key");
    free(t);
    /* The authorization server rotates: rsa-2 joins, rsa-1 leaves. */
    cjose_jwk_t *keys[] = {f->rsa2, f->ec};
    write_jwks(f, keys, 2);
    int before = served_at_least(f, 1); /* the first key's fetch */
    t = jt_sign(f->rsa2, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "a token of the new key");
    free(t);
    assert_int_equal(served_at_least(f, before + 1) - before, 1);
}

/* A JWKS may hold an RSA key too small to trust (1024 bits, which can be forged): it is
 * left out, and a token it signs is refused as one of an unknown key. */
static void test_rsa_keys_under_2048_bits_are_not_taken(void **state)
{
    jwt_fixture *f = *state;
    cjose_jwk_t *small = jt_make_rsa_key(1024, "rsa-1024");
    cjose_jwk_t *keys[] = {f->rsa, f->ec, small};
    write_jwks(f, keys, 3);
    int before = served(f);
    char *t = jt_sign(small, "RS256", "at+jwt", NULL, claims("mallory", 3600));
    expect_invalid(f->port, t, "The access token was signed by an unknown key", "a 1024-bit key");
    free(t);
    /* the keys were fetched, and it was not among them */
    assert_int_equal(served_at_least(f, before + 1) - before, 1);
    t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->port, t, "a 2048-bit key of the same document");
    free(t);
    cjose_jwk_release(small);
}

static void test_keys_that_cannot_be_fetched_give_503(void **state)
{
    jwt_fixture *f = *state;
    char *t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    hc_response r;
    initialize_with(f->port, t, &r);
    free(t);
    hx_expect_status(&r, 503, "no keys to be had");
    assert_null(hc_header_get(&r, "www-authenticate"));
    hc_response_free(&r);
    assert_int_equal(hc_server_wait_stderr(&f->srv, "could not be fetched", HX_REQ_MS), 0);
}

/* ---- mcp-everything's flags ---- */

static void test_mcp_everything_checks_tokens_from_its_flags_alone(void **state)
{
    jwt_fixture *f = *state;
    hc_response r;
    assert_int_equal(hc_mcp_post(f->eport, NULL, NULL,
                                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &r,
                                 HX_REQ_MS),
                     0);
    hx_expect_status(&r, 401, "no token");
    assert_string_equal(hc_header_get(&r, "www-authenticate"),
                        "Bearer resource_metadata=\"" METADATA_URL "\", scope=\"mcp:tools\"");
    hc_response_free(&r);
    char *t = jt_sign(f->rsa, "RS256", "at+jwt", NULL, claims("alice", 3600));
    expect_ok(f->eport, t, "a good token");
    free(t);
    t = jt_sign(f->ec, "ES256", "at+jwt", NULL, claims_scoped("alice", 3600, "other"));
    initialize_with(f->eport, t, &r);
    free(t);
    hx_expect_status(&r, 403, "a token without mcp:tools");
    hc_response_free(&r);
}

/* ---- Hostile tokens ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* xorshift64*: reproducible from the seed the test prints. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* len random characters of alphabet into out (NUL-terminated). */
static void random_text(char *out, size_t len, const char *alphabet)
{
    size_t k = strlen(alphabet);
    for (size_t i = 0; i < len; i++)
        out[i] = alphabet[rng() % k];
    out[len] = '\0';
}

#define B64URL "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#define HOSTILE_POOL 64
/* Requests sent before their answers are read, on one keep-alive connection. */
#define HOSTILE_BATCH 16

/*
 * The next hostile token of kind (0 to 7) into out (at least 13000 bytes): random text
 * of a few lengths, up to past the verifier's 8192-byte bound; three random
 * base64url parts; a header naming RS256 and a random key id; tokens signed
 * properly but by a key the server never had, or by its own key for another
 * audience (from the pools, signing being slow). 2 (for kind 7) when it may be
 * refused as a malformed request (400) rather than 401.
 */
static int hostile_token(int kind, char *out, char *const unknown[], char *const wrong_aud[])
{
    switch (kind) {
    case 0:
        random_text(out, 10 + rng() % 190, B64URL);
        return 1;
    case 1:
        random_text(out, 4000 + rng() % 4192, B64URL);
        return 1;
    case 2:
        random_text(out, 8193 + rng() % 4000, B64URL);
        return 1;
    case 3: {
        char a[200], b[600], c[400];
        random_text(a, 4 * (1 + rng() % 40), B64URL);
        random_text(b, 4 * (1 + rng() % 140), B64URL);
        random_text(c, 4 * (1 + rng() % 90), B64URL);
        snprintf(out, 1300, "%s.%s.%s", a, b, c);
        return 1;
    }
    case 4: {
        char kid[40], hdr[100], b[400], c[400];
        random_text(kid, 32, B64URL);
        snprintf(hdr, sizeof(hdr), "{\"alg\":\"RS256\",\"typ\":\"at+jwt\",\"kid\":\"%s\"}", kid);
        char *h64 = NULL;
        size_t hl;
        cjose_err err;
        assert_true(cjose_base64url_encode((const uint8_t *)hdr, strlen(hdr), &h64, &hl, &err));
        random_text(b, 4 * (1 + rng() % 90), B64URL);
        random_text(c, 340, B64URL);
        snprintf(out, 1300, "%s.%s.%s", h64, b, c);
        free(h64);
        return 1;
    }
    case 5:
        snprintf(out, 13000, "%s", unknown[rng() % HOSTILE_POOL]);
        return 1;
    case 6:
        snprintf(out, 13000, "%s", wrong_aud[rng() % HOSTILE_POOL]);
        return 1;
    default:
        /* Characters a bearer token may not hold, spaces and quotes among them. */
        random_text(out, 1 + rng() % 300, B64URL "!#$%&()*,:;<>?@[]^`{|} \"'");
        return 2;
    }
}

static long server_rss(jwt_fixture *f)
{
    return hc_server_rss_kb(&f->everything);
}

/*
 * 100,000 requests (25,000 in the sanitizer build) with random and oversized tokens
 * to mcp-everything checking JWTs: each one is refused (401, or 400 for a token with
 * characters a token cannot hold, or 431 for one past the header limit), nothing is
 * kept for any of them, and the server's memory afterwards is within 10% of what it
 * was before (not checked under ASan, whose allocator keeps its own pools); a good
 * token still gets in.
 */
static void test_random_and_oversized_tokens_leave_memory_where_it_was(void **state)
{
    jwt_fixture *f = *state;
    const int total = UNDER_ASAN ? 25000 : 100000;
    rng_state = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL | 1;
    printf("# hostile tokens: seed %llu\n", (unsigned long long)rng_state);
    char *good = jt_sign(f->ec, "ES256", "at+jwt", NULL, claims("alice", 3600));
    for (int i = 0; i < 200; i++)
        expect_ok(f->eport, good, "a good token, before");
    long idle = server_rss(f);
    cjose_jwk_t *stranger = jt_make_key(0, "stranger");
    char *unknown[HOSTILE_POOL], *wrong_aud[HOSTILE_POOL];
    for (int i = 0; i < HOSTILE_POOL; i++) {
        char sub[24], kid[40];
        random_text(sub, 16, B64URL);
        random_text(kid, 24, B64URL);
        unknown[i] = jt_sign(stranger, "ES256", "at+jwt", kid, claims(sub, 3600));
        wrong_aud[i] =
            jt_sign(f->ec, "ES256", "at+jwt", NULL,
                    jt_claims(ISSUER, "https://elsewhere.test/mcp", sub, 3600, "mcp:tools"));
    }
    char *token = malloc(13000), *big = malloc(20001);
    assert_non_null(token);
    assert_non_null(big);
    random_text(big, 20000, B64URL);
    int counts[600] = {0}, sent = 0, oversized = 0, batches = 0;
    long peak = idle;
    long long t0 = harness_now_ms();
    hc_conn c;
    assert_int_equal(hc_connect(&c, f->eport, HX_REQ_MS), 0);
    char *body = hc_initialize_body(NULL);
    while (sent < total) {
        if (batches++ % 63 == 62) {
            /* Past the header limit: 431, and that connection ends. */
            char *hdrs = NULL;
            assert_true(
                asprintf(&hdrs, "%sAuthorization: Bearer %s\r\n", HC_MCP_POST_HEADERS, big) > 0);
            hc_response r;
            assert_int_equal(hc_request(f->eport, "POST", "/mcp", hdrs, body, &r, HX_REQ_MS), 0);
            free(hdrs);
            counts[r.status >= 0 && r.status < 600 ? r.status : 0]++;
            if (r.status != 431)
                fail_msg("a 20,000-byte token: %d, not 431", r.status);
            hc_response_free(&r);
            sent++;
            oversized++;
            continue;
        }
        int n = total - sent < HOSTILE_BATCH ? total - sent : HOSTILE_BATCH;
        int kinds[HOSTILE_BATCH];
        for (int i = 0; i < n; i++) {
            kinds[i] = (sent + i) % 8;
            int may_400 = hostile_token(kinds[i], token, unknown, wrong_aud) == 2;
            kinds[i] = may_400 ? -1 : kinds[i];
            char *hdrs = NULL;
            assert_true(
                asprintf(&hdrs, "%sAuthorization: Bearer %s\r\n", HC_MCP_POST_HEADERS, token) > 0);
            assert_int_equal(hc_send_request(&c, f->eport, "POST", "/mcp", hdrs, body, HX_REQ_MS),
                             0);
            free(hdrs);
        }
        for (int i = 0; i < n; i++) {
            hc_response r;
            if (hc_read_response(&c, &r, HX_REQ_MS) != 0)
                fail_msg("request %d: no answer", sent + i);
            counts[r.status >= 0 && r.status < 600 ? r.status : 0]++;
            if (r.status != 401 && !(kinds[i] < 0 && r.status == 400))
                fail_msg("request %d (kind %d): %d, not 401", sent + i, kinds[i], r.status);
            hc_response_free(&r);
        }
        sent += n;
        if (sent % 10000 < HOSTILE_BATCH) {
            long rss = server_rss(f);
            peak = rss > peak ? rss : peak;
        }
    }
    hc_close(&c);
    long long elapsed = harness_now_ms() - t0;
    long after = server_rss(f);
    /* Freed memory goes back to the system once a burst is over (util/mem.c's trim),
     * a little later: wait for it, to a deadline. */
    long long deadline = harness_now_ms() + 5000;
    while (!UNDER_ASAN && after > idle + idle / 10 && harness_now_ms() < deadline) {
        poll(NULL, 0, 50);
        after = server_rss(f);
    }
    printf(
        "# hostile tokens: %d requests in %lld ms (%d with a 20,000-byte token): 401 %d, 400 %d, "
        "431 %d; server RSS %ld KiB idle, %ld KiB at most while sampled, %ld KiB after\n",
        sent, elapsed, oversized, counts[401], counts[400], counts[431], idle, peak, after);
    assert_int_equal(counts[401] + counts[400] + counts[431], total);
    if (!UNDER_ASAN && after > idle + idle / 10)
        fail_msg("the server grew from %ld KiB to %ld KiB (more than 10%%)", idle, after);
    expect_ok(f->eport, good, "a good token, after");
    free(body);
    free(token);
    free(big);
    for (int i = 0; i < HOSTILE_POOL; i++) {
        free(unknown[i]);
        free(wrong_aud[i]);
    }
    cjose_jwk_release(stranger);
    free(good);
}

static int setup_hostile(void **state)
{
    hc_asan_small_quarantine(4);
    return setup_everything(state);
}

/* mcp-everything with args exits with status 2 (a usage error) at once. */
static void expect_usage_error(const char *const args[], const char *what)
{
    char path[4096];
    assert_int_equal(harness_bin_path("mcp-everything", path, sizeof(path)), 0);
    const char *argv[16] = {path, "--http", "127.0.0.1:0"};
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    harness_proc p;
    assert_int_equal(harness_spawn(&p, argv), 0);
    int status = 0;
    int waited = harness_wait_exit(&p, HX_START_MS, &status);
    harness_kill(&p); /* reaped already: this frees what it read */
    if (waited != 0)
        fail_msg("%s: mcp-everything did not exit", what);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2)
        fail_msg("%s: exit status %d, expected 2", what, status);
}

static void test_auth_flags_that_do_not_go_together_are_usage_errors(void **state)
{
    (void)state;
    const char *no_resource[] = {"--auth-scope", "x", NULL};
    expect_usage_error(no_resource, "--auth-scope without --auth-resource");
    const char *no_issuer[] = {"--auth-resource", RESOURCE, NULL};
    expect_usage_error(no_issuer, "--auth-resource without --auth-issuer");
    const char *bad_url[] = {"--auth-resource", "ftp://x/mcp", "--auth-issuer", ISSUER, NULL};
    expect_usage_error(bad_url, "an ftp resource");
    const char *bad_scope[] = {
        "--auth-resource", RESOURCE, "--auth-issuer", ISSUER, "--auth-scope", "a b", NULL};
    expect_usage_error(bad_scope, "a scope with a space");
}

int main(void)
{
    const struct CMUnitTest storm[] = {
        cmocka_unit_test(test_good_tokens_of_each_algorithm_get_in),
        cmocka_unit_test(test_bad_tokens_get_401_with_their_reasons),
        cmocka_unit_test(test_a_storm_of_unknown_key_ids_costs_one_fetch),
    };
    const struct CMUnitTest rotation[] = {
        cmocka_unit_test(test_rotated_keys_are_taken_after_one_fetch),
        cmocka_unit_test(test_rsa_keys_under_2048_bits_are_not_taken),
    };
    const struct CMUnitTest unreachable[] = {
        cmocka_unit_test(test_keys_that_cannot_be_fetched_give_503),
    };
    const struct CMUnitTest everything[] = {
        cmocka_unit_test(test_mcp_everything_checks_tokens_from_its_flags_alone),
        cmocka_unit_test(test_auth_flags_that_do_not_go_together_are_usage_errors),
    };
    const struct CMUnitTest hostile[] = {
        cmocka_unit_test(test_random_and_oversized_tokens_leave_memory_where_it_was),
    };
    int failed = cmocka_run_group_tests_name("storm", storm, setup_storm, teardown);
    failed += cmocka_run_group_tests_name("hostile", hostile, setup_hostile, teardown);
    failed += cmocka_run_group_tests_name("everything", everything, setup_everything, teardown);
    failed += cmocka_run_group_tests_name("rotation", rotation, setup_rotation, teardown);
    failed += cmocka_run_group_tests_name("unreachable", unreachable, setup_unreachable, teardown);
    return failed + hx_teardown_failures;
}
