/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of sealed tokens (src/util/seal.c): round trips, tampering, bindings,
 * keys and their rotation, expiry, malformed input, and the cost of a seal and unseal.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "util/seal.h"
#include "util/util.h"

static const unsigned char key1[MCP__SEAL_KEY_LEN] = "0123456789abcdef0123456789abcde";
static const unsigned char key2[MCP__SEAL_KEY_LEN] = "fedcba9876543210fedcba987654321";
static const unsigned char key3[MCP__SEAL_KEY_LEN] = "the third key, 31 bytes and NUL";

static const char binding[] = "tools/call\0echo\0<sha256 of the arguments>";
#define BINDING_LEN (sizeof binding - 1)

#define NOW 1700000000000ull
#define EXPIRY (NOW + 60000)

/* Seals with key1 (id 1) and the test binding; fails the test on error. */
static char *seal(const void *pt, size_t len, uint64_t expiry)
{
    char *t = NULL;
    assert_int_equal(mcp__seal(key1, 1, binding, BINDING_LEN, pt, len, expiry, &t), MCP_OK);
    assert_non_null(t);
    return t;
}

/* Unseals and drops the plaintext, after checking that a failure hands out nothing and
 * that a success is NUL-terminated. */
static int open_with(const unsigned char *key, uint8_t key_id, const char *token, const void *b,
                     size_t b_len, uint64_t now)
{
    unsigned char *pt = (unsigned char *)"not touched";
    size_t len = 99;
    int rc = mcp__unseal(key, key_id, token, b, b_len, now, &pt, &len);
    if (rc == MCP_OK) {
        assert_non_null(pt);
        assert_int_equal(pt[len], '\0');
    } else {
        assert_null(pt);
        assert_int_equal(len, 0);
    }
    free(pt);
    return rc;
}

/* With key1 (id 1) and the test binding, at now or NOW. */
static int unseal_at(const char *token, uint64_t now)
{
    return open_with(key1, 1, token, binding, BINDING_LEN, now);
}

static int unseal(const char *token)
{
    return unseal_at(token, NOW);
}

/* The decoded bytes of a token, malloc'd. */
static unsigned char *decode(const char *token, size_t *raw_len)
{
    size_t n = strlen(token) - 3;
    unsigned char *raw = malloc(n / 4 * 3 + 2);
    assert_non_null(raw);
    assert_memory_equal(token, "v1.", 3);
    assert_int_equal(mcp__base64url_decode(token + 3, n, raw, raw_len), MCP_OK);
    return raw;
}

/* A token made of raw bytes, malloc'd. */
static char *encode(const unsigned char *raw, size_t raw_len)
{
    char *t = malloc(3 + mcp__base64url_len(raw_len) + 1);
    assert_non_null(t);
    memcpy(t, "v1.", 3);
    mcp__base64url_encode(raw, raw_len, t + 3);
    return t;
}

static void fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + 7);
}

static void test_seal_round_trips_empty_small_and_60k_payloads(void **state)
{
    (void)state;
    static unsigned char big[60 * 1024];
    fill(big, sizeof big);
    const struct {
        const void *pt;
        size_t len;
    } cases[] = {{NULL, 0}, {"", 0}, {"{\"step\":1}", 10}, {big, sizeof big}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = seal(cases[i].pt, cases[i].len, EXPIRY);
        assert_memory_equal(t, "v1.", 3);
        assert_int_equal(strlen(t), 3 + mcp__base64url_len(MCP__SEAL_OVERHEAD + cases[i].len));
        /* Nothing of the plaintext shows through. */
        if (cases[i].len >= 4)
            assert_null(memmem(t, strlen(t), "step", 4));
        unsigned char *pt = NULL;
        size_t len = 99;
        assert_int_equal(mcp__unseal(key1, 1, t, binding, BINDING_LEN, NOW, &pt, &len), MCP_OK);
        assert_non_null(pt);
        assert_int_equal(len, cases[i].len);
        if (len > 0)
            assert_memory_equal(pt, cases[i].pt, len);
        assert_int_equal(pt[len], '\0');
        free(pt);
        free(t);
    }
}

static void test_seal_with_an_empty_binding_needs_an_empty_binding(void **state)
{
    (void)state;
    char *t = NULL;
    assert_int_equal(mcp__seal(key1, 1, NULL, 0, "x", 1, EXPIRY, &t), MCP_OK);
    assert_int_equal(open_with(key1, 1, t, NULL, 0, NOW), MCP_OK);
    assert_int_equal(open_with(key1, 1, t, "", 0, NOW), MCP_OK);
    assert_int_equal(open_with(key1, 1, t, "t", 1, NOW), MCP_EPROTO);
    free(t);
}

static void test_seal_every_single_bit_flip_fails_authentication(void **state)
{
    (void)state;
    char *t = seal("{\"answers\":[1,2]}", 17, EXPIRY);
    size_t raw_len = 0;
    unsigned char *raw = decode(t, &raw_len);
    assert_int_equal(raw_len, MCP__SEAL_OVERHEAD + 17);
    /* In the decoded bytes: key id, nonce, expiry, ciphertext and tag alike. */
    for (size_t i = 0; i < raw_len; i++) {
        for (int b = 0; b < 8; b++) {
            raw[i] ^= (unsigned char)(1u << b);
            char *bad = encode(raw, raw_len);
            if (unseal(bad) != MCP_EPROTO)
                fail_msg("flipping bit %d of byte %zu was not an authentication failure", b, i);
            free(bad);
            raw[i] ^= (unsigned char)(1u << b);
        }
    }
    /* In the text: a character outside the alphabet is malformed, any other spelling
     * fails authentication; none opens. */
    size_t n = strlen(t);
    for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < 8; b++) {
            t[i] ^= (char)(1u << b);
            int rc = unseal(t);
            if (rc != MCP_EINVAL && rc != MCP_EPROTO)
                fail_msg("flipping bit %d of character %zu gave %d", b, i, rc);
            t[i] ^= (char)(1u << b);
        }
    }
    assert_int_equal(unseal(t), MCP_OK);
    free(raw);
    free(t);
}

static void test_seal_truncated_tokens_never_open(void **state)
{
    (void)state;
    char *t = seal("some state", 10, EXPIRY);
    size_t n = strlen(t);
    size_t raw_len = MCP__SEAL_OVERHEAD + 10;
    for (size_t cut = 0; cut < n; cut++) {
        char *p = strndup(t, cut);
        assert_non_null(p);
        int rc = unseal(p);
        /* Shorter than the fixed fields: malformed; longer: malformed when the cut
         * leaves a spelling no encoding gives, else the tag no longer matches. */
        if (cut < 3 + mcp__base64url_len(MCP__SEAL_OVERHEAD))
            assert_int_equal(rc, MCP_EINVAL);
        else
            assert_true(rc == MCP_EINVAL || rc == MCP_EPROTO);
        free(p);
    }
    /* Whole bytes cut from either end of the decoded token. */
    size_t len = 0;
    unsigned char *raw = decode(t, &len);
    assert_int_equal(len, raw_len);
    for (size_t cut = 1; cut < raw_len; cut++) {
        int want = raw_len - cut < MCP__SEAL_OVERHEAD ? MCP_EINVAL : MCP_EPROTO;
        char *bad = encode(raw + cut, raw_len - cut);
        assert_int_equal(unseal(bad), want);
        free(bad);
        bad = encode(raw, raw_len - cut);
        assert_int_equal(unseal(bad), want);
        free(bad);
    }
    free(raw);
    free(t);
}

static void test_seal_wrong_binding_fails_authentication(void **state)
{
    (void)state;
    char *t = seal("state", 5, EXPIRY);
    /* Another tool, one byte more or less, or no binding at all. */
    static const char other[] = "tools/call\0eval\0<sha256 of the arguments>";
    assert_int_equal(open_with(key1, 1, t, other, sizeof other - 1, NOW), MCP_EPROTO);
    assert_int_equal(open_with(key1, 1, t, binding, BINDING_LEN - 1, NOW), MCP_EPROTO);
    assert_int_equal(open_with(key1, 1, t, binding, BINDING_LEN + 1, NOW), MCP_EPROTO);
    assert_int_equal(open_with(key1, 1, t, NULL, 0, NOW), MCP_EPROTO);
    /* The failed check leaves nothing on libcrypto's error queue of this thread, which
     * libcurl and the host program read too. */
    assert_int_equal(ERR_peek_error(), 0);
    assert_int_equal(unseal(t), MCP_OK);
    free(t);
}

static void test_seal_wrong_key_or_key_id_fails_authentication(void **state)
{
    (void)state;
    char *t = seal("state", 5, EXPIRY);
    assert_int_equal(open_with(key2, 1, t, binding, BINDING_LEN, NOW), MCP_EPROTO);
    assert_int_equal(open_with(key1, 2, t, binding, BINDING_LEN, NOW), MCP_EPROTO);
    unsigned char nearly[MCP__SEAL_KEY_LEN];
    memcpy(nearly, key1, sizeof nearly);
    nearly[31] ^= 1;
    assert_int_equal(open_with(nearly, 1, t, binding, BINDING_LEN, NOW), MCP_EPROTO);
    free(t);
}

/* Seals "id <n>" with the sealer's current key. */
static char *sealer_seal(const mcp__sealer *s, const char *text)
{
    char *t = NULL;
    assert_int_equal(mcp__sealer_seal(s, binding, BINDING_LEN, text, strlen(text), EXPIRY, &t),
                     MCP_OK);
    return t;
}

/* MCP_OK only when the token opens to text. */
static int sealer_open(const mcp__sealer *s, const char *token, const char *text)
{
    unsigned char *pt = NULL;
    size_t len = 0;
    int rc = mcp__sealer_unseal(s, token, binding, BINDING_LEN, NOW, &pt, &len);
    if (rc == MCP_OK) {
        assert_int_equal(len, strlen(text));
        assert_memory_equal(pt, text, len);
    }
    free(pt);
    return rc;
}

static void test_sealer_opens_the_previous_key_and_not_the_one_before(void **state)
{
    (void)state;
    mcp__sealer s;
    mcp__sealer_init(&s, 1, key1);
    char *t1 = sealer_seal(&s, "under key 1");
    assert_int_equal(sealer_open(&s, t1, "under key 1"), MCP_OK);
    /* The token names its key: the low-level call with that key and id opens it. */
    assert_int_equal(unseal(t1), MCP_OK);

    assert_int_equal(mcp__sealer_rotate(&s, 1, key2), MCP_EINVAL); /* ids must differ */
    assert_int_equal(mcp__sealer_rotate(&s, 2, key2), MCP_OK);
    char *t2 = sealer_seal(&s, "under key 2");
    assert_int_equal(sealer_open(&s, t1, "under key 1"), MCP_OK);
    assert_int_equal(sealer_open(&s, t2, "under key 2"), MCP_OK);

    assert_int_equal(mcp__sealer_rotate(&s, 3, key3), MCP_OK);
    char *t3 = sealer_seal(&s, "under key 3");
    assert_int_equal(sealer_open(&s, t1, "under key 1"), MCP_EPROTO);
    assert_int_equal(sealer_open(&s, t2, "under key 2"), MCP_OK);
    assert_int_equal(sealer_open(&s, t3, "under key 3"), MCP_OK);

    /* An id used again names the new key only: the old token fails authentication. */
    static const unsigned char key4[MCP__SEAL_KEY_LEN] = "a fourth key that reuses id 1..";
    assert_int_equal(mcp__sealer_rotate(&s, 1, key4), MCP_OK);
    assert_int_equal(sealer_open(&s, t1, "under key 1"), MCP_EPROTO);
    assert_int_equal(sealer_open(&s, t2, "under key 2"), MCP_EPROTO);
    assert_int_equal(sealer_open(&s, t3, "under key 3"), MCP_OK);

    mcp__sealer_clear(&s);
    static const mcp__sealer zero;
    assert_memory_equal(&s, &zero, sizeof s);
    free(t1);
    free(t2);
    free(t3);
}

static void test_seal_expiry_is_checked_only_once_authentic(void **state)
{
    (void)state;
    char *t = seal("state", 5, EXPIRY);
    /* Valid up to and including its expiry. */
    assert_int_equal(unseal_at(t, EXPIRY), MCP_OK);
    assert_int_equal(unseal_at(t, EXPIRY + 1), MCP_ETIMEDOUT);
    assert_int_equal(unseal_at(t, UINT64_MAX), MCP_ETIMEDOUT);
    /* Expired and not authentic: the authentication failure, whatever the time. */
    assert_int_equal(open_with(key1, 1, t, "other", 5, EXPIRY + 1), MCP_EPROTO);
    assert_int_equal(open_with(key2, 1, t, binding, BINDING_LEN, EXPIRY + 1), MCP_EPROTO);
    /* A later expiry written into the token is a forgery, not a renewal. */
    size_t raw_len = 0;
    unsigned char *raw = decode(t, &raw_len);
    memset(raw + 1 + 12, 0xff, 8);
    char *forged = encode(raw, raw_len);
    assert_int_equal(unseal_at(forged, EXPIRY + 1), MCP_EPROTO);
    free(forged);
    free(raw);
    free(t);

    /* An expiry of 0 or the largest value survives the trip. */
    t = seal("a", 1, UINT64_MAX);
    assert_int_equal(unseal_at(t, UINT64_MAX), MCP_OK);
    free(t);
    t = seal("a", 1, 0);
    assert_int_equal(unseal_at(t, 0), MCP_OK);
    assert_int_equal(unseal_at(t, 1), MCP_ETIMEDOUT);
    free(t);

    /* With the wall clock, as a server would. */
    uint64_t now = mcp__wall_ms();
    assert_true(now > NOW);
    assert_int_equal(mcp__seal(key1, 1, NULL, 0, "w", 1, now + 60000, &t), MCP_OK);
    assert_int_equal(open_with(key1, 1, t, NULL, 0, mcp__wall_ms()), MCP_OK);
    free(t);
}

static void test_seal_garbage_and_overlong_tokens_are_malformed(void **state)
{
    (void)state;
    char *t = seal("state", 5, EXPIRY);
    char buf[256];
    static const char *const garbage[] = {
        "",         "v",       "v1",           "v1.",  "v1.A", "v2.",         "V1.AAAA",
        " v1.AAAA", "v1 AAAA", "v1.AAAA AAAA", "v1.=", "{}",   "v1.\xc3\xa9", "v1.AAAA\n",
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        if (unseal(garbage[i]) != MCP_EINVAL)
            fail_msg("\"%s\" was not malformed", garbage[i]);
    /* A well-formed token with the wrong version, or anything after it. */
    snprintf(buf, sizeof buf, "v2.%s", t + 3);
    assert_int_equal(unseal(buf), MCP_EINVAL);
    snprintf(buf, sizeof buf, "%s=", t);
    assert_int_equal(unseal(buf), MCP_EINVAL);
    snprintf(buf, sizeof buf, "%s ", t);
    assert_int_equal(unseal(buf), MCP_EINVAL);
    snprintf(buf, sizeof buf, "v1.v1.%s", t + 3);
    assert_int_equal(unseal(buf), MCP_EINVAL);
    /* Too short for the fixed fields, though valid base64url. */
    unsigned char raw[MCP__SEAL_OVERHEAD] = {1};
    char *shrt = encode(raw, MCP__SEAL_OVERHEAD - 1);
    assert_int_equal(unseal(shrt), MCP_EINVAL);
    free(shrt);
    char *fixed = encode(raw, MCP__SEAL_OVERHEAD); /* long enough: a forgery */
    assert_int_equal(unseal(fixed), MCP_EPROTO);
    free(fixed);
    free(t);

    /* NULL arguments. */
    unsigned char *pt = NULL;
    size_t len = 0;
    assert_int_equal(unseal(NULL), MCP_EINVAL);
    assert_int_equal(mcp__unseal(NULL, 1, "v1.", NULL, 0, NOW, &pt, &len), MCP_EINVAL);
    assert_int_equal(mcp__unseal(key1, 1, "v1.", NULL, 1, NOW, &pt, &len), MCP_EINVAL);
    assert_int_equal(mcp__unseal(key1, 1, "v1.", NULL, 0, NOW, NULL, &len), MCP_EINVAL);
    assert_int_equal(mcp__unseal(key1, 1, "v1.", NULL, 0, NOW, &pt, NULL), MCP_EINVAL);
    assert_int_equal(mcp__seal(NULL, 1, NULL, 0, "", 0, EXPIRY, &t), MCP_EINVAL);
    assert_null(t);
    assert_int_equal(mcp__seal(key1, 1, NULL, 0, NULL, 1, EXPIRY, &t), MCP_EINVAL);
    assert_int_equal(mcp__seal(key1, 1, NULL, 1, "", 0, EXPIRY, &t), MCP_EINVAL);
    assert_int_equal(mcp__seal(key1, 1, NULL, 0, "", 0, EXPIRY, NULL), MCP_EINVAL);

    /* The largest plaintext makes the longest token, which opens; one byte more is
     * refused by seal, and one character more by unseal before it decodes anything. */
    unsigned char *big = malloc(MCP__SEAL_MAX_PLAINTEXT + 1);
    assert_non_null(big);
    fill(big, MCP__SEAL_MAX_PLAINTEXT + 1);
    assert_int_equal(mcp__seal(key1, 1, NULL, 0, big, MCP__SEAL_MAX_PLAINTEXT + 1, EXPIRY, &t),
                     MCP_ELIMIT);
    assert_null(t);
    t = seal(big, MCP__SEAL_MAX_PLAINTEXT, EXPIRY);
    assert_int_equal(strlen(t), MCP__SEAL_MAX_TOKEN);
    assert_int_equal(unseal(t), MCP_OK);
    free(big);
    char *longer = malloc(MCP__SEAL_MAX_TOKEN + 2);
    assert_non_null(longer);
    memcpy(longer, t, MCP__SEAL_MAX_TOKEN);
    memcpy(longer + MCP__SEAL_MAX_TOKEN, "A", 2);
    assert_int_equal(unseal(longer), MCP_EINVAL);
    free(longer);
    free(t);
    /* Not even NUL-terminated: unseal reads one character past the limit, no further
     * (AddressSanitizer watches the end of this buffer). */
    char *unterminated = malloc(MCP__SEAL_MAX_TOKEN + 1);
    assert_non_null(unterminated);
    memcpy(unterminated, "v1.", 3);
    memset(unterminated + 3, 'A', MCP__SEAL_MAX_TOKEN - 2);
    assert_int_equal(unseal(unterminated), MCP_EINVAL);
    free(unterminated);
    /* A megabyte of base64url is refused as quickly as a short one. */
    char *huge = malloc(1 << 20);
    assert_non_null(huge);
    memcpy(huge, "v1.", 3);
    memset(huge + 3, 'A', (1 << 20) - 4);
    huge[(1 << 20) - 1] = '\0';
    assert_int_equal(unseal(huge), MCP_EINVAL);
    free(huge);
}

static void test_seal_token_uses_the_url_safe_alphabet_in_one_spelling(void **state)
{
    (void)state;
    /* 61 KiB of sealed bytes hold every base64url character, '-' and '_' included. */
    static unsigned char big[61 * 1024];
    fill(big, sizeof big);
    char *t = seal(big, sizeof big, EXPIRY);
    assert_non_null(strchr(t + 3, '-'));
    assert_non_null(strchr(t + 3, '_'));
    assert_null(strpbrk(t, "+/="));
    assert_int_equal(unseal(t), MCP_OK);
    /* The standard alphabet's spelling of the same bytes is not a token. */
    char *std = strdup(t);
    assert_non_null(std);
    for (char *p = std + 3; *p != '\0'; p++)
        *p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
    assert_int_equal(unseal(std), MCP_EINVAL);
    free(std);
    free(t);

    /* A token whose last character carries unused bits: raw length 1 mod 3 leaves four,
     * 2 mod 3 leaves two. Setting any of them is another spelling of the same bytes,
     * refused as malformed. */
    for (size_t extra = 0; extra < 3; extra++) {
        t = seal("abc", extra + 1, EXPIRY);
        size_t raw_len = MCP__SEAL_OVERHEAD + extra + 1;
        size_t n = strlen(t);
        int unused = raw_len % 3 == 1 ? 4 : raw_len % 3 == 2 ? 2 : 0;
        static const char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int v = (int)(strchr(alphabet, t[n - 1]) - alphabet);
        for (int bit = 0; bit < unused; bit++) {
            char saved = t[n - 1];
            t[n - 1] = alphabet[v ^ (1 << bit)];
            assert_int_equal(unseal(t), MCP_EINVAL);
            t[n - 1] = saved;
        }
        assert_int_equal(unseal(t), MCP_OK);
        free(t);
    }
}

static void test_seal_nonces_differ_between_two_seals_of_the_same_input(void **state)
{
    (void)state;
    char *a = seal("same", 4, EXPIRY);
    char *b = seal("same", 4, EXPIRY);
    assert_string_not_equal(a, b);
    size_t la = 0, lb = 0;
    unsigned char *ra = decode(a, &la), *rb = decode(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_not_equal(ra + 1, rb + 1, 12);
    /* Same key id and expiry in the clear; the rest differs with the nonce. */
    assert_int_equal(ra[0], 1);
    assert_memory_equal(ra + 13, rb + 13, 8);
    assert_memory_not_equal(ra + 21, rb + 21, la - 21);
    free(ra);
    free(rb);
    free(a);
    free(b);
}

static void test_sha256_gives_the_fips_180_vectors(void **state)
{
    (void)state;
    unsigned char d[32];
    char hex[65];
    assert_int_equal(mcp__sha256(NULL, 0, d), MCP_OK);
    mcp__hex(d, 32, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(mcp__sha256("abc", 3, d), MCP_OK);
    mcp__hex(d, 32, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    static const char m[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(mcp__sha256(m, sizeof m - 1, d), MCP_OK);
    mcp__hex(d, 32, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_int_equal(mcp__sha256(NULL, 1, d), MCP_EINVAL);
    assert_int_equal(mcp__sha256("", 0, NULL), MCP_EINVAL);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Printed, not asserted: what one seal and unseal of a 1 KiB state costs. */
static void test_seal_and_unseal_of_1k_cost(void **state)
{
    (void)state;
    unsigned char pt[1024];
    fill(pt, sizeof pt);
    unsigned char digest[32];
    assert_int_equal(mcp__sha256(binding, BINDING_LEN, digest), MCP_OK);
    enum { ROUNDS = 2000 };
    double best = 0;
    for (int run = 0; run < 3; run++) {
        double t0 = now_us();
        for (int i = 0; i < ROUNDS; i++) {
            char *t = NULL;
            unsigned char *out = NULL;
            size_t len = 0;
            assert_int_equal(mcp__seal(key1, 1, digest, 32, pt, sizeof pt, EXPIRY, &t), MCP_OK);
            assert_int_equal(mcp__unseal(key1, 1, t, digest, 32, NOW, &out, &len), MCP_OK);
            free(out);
            free(t);
        }
        double us = (now_us() - t0) / ROUNDS;
        if (run == 0 || us < best)
            best = us;
    }
    printf("seal+unseal of 1 KiB (token %zu characters): %.2f us (best of 3 runs of %d)\n",
           3 + mcp__base64url_len(MCP__SEAL_OVERHEAD + sizeof pt), best, (int)ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal_round_trips_empty_small_and_60k_payloads),
        cmocka_unit_test(test_seal_with_an_empty_binding_needs_an_empty_binding),
        cmocka_unit_test(test_seal_every_single_bit_flip_fails_authentication),
        cmocka_unit_test(test_seal_truncated_tokens_never_open),
        cmocka_unit_test(test_seal_wrong_binding_fails_authentication),
        cmocka_unit_test(test_seal_wrong_key_or_key_id_fails_authentication),
        cmocka_unit_test(test_sealer_opens_the_previous_key_and_not_the_one_before),
        cmocka_unit_test(test_seal_expiry_is_checked_only_once_authentic),
        cmocka_unit_test(test_seal_garbage_and_overlong_tokens_are_malformed),
        cmocka_unit_test(test_seal_token_uses_the_url_safe_alphabet_in_one_spelling),
        cmocka_unit_test(test_seal_nonces_differ_between_two_seals_of_the_same_input),
        cmocka_unit_test(test_sha256_gives_the_fips_180_vectors),
        cmocka_unit_test(test_seal_and_unseal_of_1k_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
