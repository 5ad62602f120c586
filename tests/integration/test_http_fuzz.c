/* SPDX-License-Identifier: MIT */
/*
 * Randomised bad input over HTTP: a few thousand requests, each on a new
 * connection, made of random bytes, valid requests cut at random points,
 * requests with mutated headers, and valid heads with random or truncated
 * JSON bodies. Afterwards the server must still answer a valid initialize and
 * tools/call, and exit with status 0 on SIGTERM (under the sanitizer build the
 * server is sanitized too, so that also means no leak and no error report).
 *
 * The seed is printed at the start; MCP_FUZZ_SEED=<number> replays a run.
 * MCP_FUZZ_CASES overrides the number of cases. The run stops early (and
 * says so) when it nears its time budget.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_expect.h"

#define DEFAULT_SEED 0x6d63702d66757a7aULL
#define DEFAULT_CASES 5000
#define TIME_BUDGET_MS 45000
/* How long one case waits for the server's answer or close. */
#define CASE_READ_MS 500

/* ---- A small, reproducible PRNG (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* ---- A growable byte buffer ---- */

typedef struct buf {
    char *d;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const void *p, size_t n)
{
    if (b->cap - b->len <= n) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap - b->len <= n)
            ncap *= 2;
        char *nd = realloc(b->d, ncap);
        assert_non_null(nd);
        b->d = nd;
        b->cap = ncap;
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
    b->d[b->len] = '\0';
}

static void buf_str(buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_fmt(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_fmt(buf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void buf_free(buf *b)
{
    free(b->d);
    memset(b, 0, sizeof(*b));
}

/* ---- What the cases are made of ---- */

static int g_port;
static char g_session[33];

static const char *const json_bodies[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
    "\"arguments\":{\"text\":\"fuzz \\u00e9\\n\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"tools/call\",\"params\":{\"name\":\"add\","
    "\"arguments\":{\"a\":1e308,\"b\":-1.5}}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":"
    "\"test://static-text\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":"
    "\"test_prompt_with_arguments\",\"arguments\":{\"arg1\":\"a\",\"arg2\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"completion/"
    "complete\",\"params\":{\"ref\":{\"type\":"
    "\"ref/prompt\",\"name\":\"test_prompt_with_arguments\"},\"argument\":{\"name\":\"arg1\","
    "\"value\":\"te\"}}}",
    "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":"
    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}]",
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}",
    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"logging/"
    "setLevel\",\"params\":{\"level\":\"debug\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}",
};
#define N_BODIES (sizeof(json_bodies) / sizeof(json_bodies[0]))

static const char *const junk_tokens[] = {
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u",
    "\\ud800",
    "null",
    "true",
    "1e999999",
    "-0",
    "18446744073709551616",
    "\"jsonrpc\"",
    "\"2.0\"",
    "\"id\"",
    "\"method\"",
    "\"params\"",
    "\"tools/call\"",
    "\"initialize\"",
    "\xc3\x28",
    "\x00",
    "\xff",
    " ",
    "\n",
    "NaN",
};

/* A JSON-ish body: a real one cut or mutated, or tokens strung together, or deep nesting. */
static void random_body(buf *b)
{
    switch (below(5)) {
    case 0: { /* cut */
        const char *s = json_bodies[below(N_BODIES)];
        buf_add(b, s, below(strlen(s) + 1));
        break;
    }
    case 1: { /* mutated */
        const char *s = json_bodies[below(N_BODIES)];
        buf_str(b, s);
        for (size_t n = 1 + below(4); n > 0 && b->len > 0; n--)
            b->d[below(b->len)] = (char)below(256);
        break;
    }
    case 2: /* tokens */
        for (size_t n = below(40); n > 0; n--) {
            const char *t = junk_tokens[below(sizeof(junk_tokens) / sizeof(junk_tokens[0]))];
            buf_add(b, t, t[0] ? strlen(t) : 1);
        }
        break;
    case 3: { /* deep nesting */
        size_t depth = 1 + below(20000);
        char open = below(2) ? '[' : '{';
        for (size_t i = 0; i < depth; i++)
            buf_add(b, open == '[' ? "[" : "{\"a\":", open == '[' ? 1 : 5);
        break;
    }
    default: /* a valid body with a wrong shape */
        buf_fmt(b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":%s,\"params\":%s}",
                below(2) ? "null" : "[1]", below(2) ? "\"\"" : "\"tools/call\"",
                below(2) ? "{\"name\":{}}" : "{\"name\":\"echo\",\"arguments\":[]}");
        break;
    }
}

/* A valid request (head and body) of a random kind. */
static void valid_request(buf *b)
{
    const char *body = json_bodies[below(N_BODIES)];
    switch (below(10)) {
    case 0:
        buf_fmt(b,
                "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n"
                "Mcp-Session-Id: %s\r\n\r\n",
                g_port, g_session);
        break;
    case 1:
        buf_fmt(b,
                "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: %016llx%016llx\r\n\r\n",
                (unsigned long long)rnd(), (unsigned long long)rnd());
        break;
    case 2:
        buf_fmt(b, "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        break;
    case 3:
        buf_fmt(b,
                "POST /messages?sessionId=%016llx HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                (unsigned long long)rnd(), strlen(body), body);
        break;
    case 4: { /* chunked */
        size_t len = strlen(body), cut = below(len + 1);
        buf_fmt(b,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" HC_MCP_POST_HEADERS
                "Mcp-Session-Id: %s\r\nTransfer-Encoding: chunked\r\n\r\n",
                g_session);
        if (cut > 0)
            buf_fmt(b, "%zx\r\n%.*s\r\n", cut, (int)cut, body);
        if (len > cut)
            buf_fmt(b, "%zx\r\n%s\r\n", len - cut, body + cut);
        buf_str(b, "0\r\n\r\n");
        break;
    }
    case 5:
        buf_fmt(b, "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:1\r\n"
                   "Access-Control-Request-Method: POST\r\n\r\n");
        break;
    default: {
        int with_session = below(4) != 0;
        buf_fmt(b,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" HC_MCP_POST_HEADERS
                "%s%s%sMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %zu\r\n\r\n%s",
                g_port, with_session ? "Mcp-Session-Id: " : "", with_session ? g_session : "",
                with_session ? "\r\n" : "", strlen(body), body);
        break;
    }
    }
}

static const char *const header_junk[] = {
    "Content-Length: 99999999999999999999999\r\n",
    "Content-Length: -1\r\n",
    "Content-Length: 5\r\nContent-Length: 6\r\n",
    "Transfer-Encoding: chunked\r\n",
    "Transfer-Encoding: gzip, chunked\r\n",
    "Transfer-Encoding: identity\r\n",
    "Content-Length: 0\r\n",
    "Accept: \r\n",
    "Content-Type: application/json; charset=\"\r\n",
    "Mcp-Session-Id: \r\n",
    "MCP-Protocol-Version: \xff\xfe\r\n",
    "Origin: http://[::1\r\n",
    "Host: \r\n",
    "Host: [::1]:99999\r\n",
    "Expect: 100-continue\r\n",
    "Connection: close\r\n",
    "Connection: upgrade\r\nUpgrade: h2c\r\n",
    " folded-continuation\r\n",
    "X-No-Colon\r\n",
    ": empty-name\r\n",
    "X-Nul: a\0b\r\n",
    "Last-Event-ID: 0000\r\n",
};
#define N_HEADER_JUNK (sizeof(header_junk) / sizeof(header_junk[0]))

static const char *const methods[] = {"GET", "POST",   "DELETE", "PUT",     "OPTIONS", "HEAD",
                                      "PRI", "G\x01T", "",       "CONNECT", "post"};

/* A valid request with 1..3 mutations of its head or bytes. */
static void mutated_request(buf *b)
{
    buf v = {0};
    valid_request(&v);
    char *head_end = strstr(v.d, "\r\n\r\n");
    size_t head_len = head_end ? (size_t)(head_end - v.d) + 2 : v.len;
    for (size_t n = 1 + below(3); n > 0; n--) {
        buf w = {0};
        switch (below(7)) {
        case 0: /* a junk header line after the request line */
        case 1: {
            char *eol = strstr(v.d, "\r\n");
            size_t at = eol ? (size_t)(eol - v.d) + 2 : 0;
            const char *j = header_junk[below(N_HEADER_JUNK)];
            size_t jl = strcmp(j, "X-Nul: a\0b\r\n") == 0 ? 11 : strlen(j);
            buf_add(&w, v.d, at);
            buf_add(&w, j, jl);
            buf_add(&w, v.d + at, v.len - at);
            head_len += jl;
            break;
        }
        case 2: { /* another method */
            char *sp = memchr(v.d, ' ', v.len);
            size_t at = sp ? (size_t)(sp - v.d) : 0;
            buf_str(&w, methods[below(sizeof(methods) / sizeof(methods[0]))]);
            buf_add(&w, v.d + at, v.len - at);
            break;
        }
        case 3: /* random bytes flipped in the head */
            buf_add(&w, v.d, v.len);
            for (size_t k = 1 + below(3); k > 0 && head_len > 0; k--)
                w.d[below(head_len)] = (char)below(256);
            break;
        case 4: { /* a range deleted */
            size_t a = below(v.len + 1), l = below(v.len - a + 1);
            buf_add(&w, v.d, a);
            buf_add(&w, v.d + a + l, v.len - a - l);
            break;
        }
        case 5: { /* a huge header value or path */
            size_t big = below(2) ? 17000 : 1 + below(9000);
            char *eol = strstr(v.d, "\r\n");
            size_t at = eol ? (size_t)(eol - v.d) + 2 : 0;
            buf_add(&w, v.d, at);
            buf_str(&w, "X-Long: ");
            for (size_t i = 0; i < big; i++)
                buf_add(&w, "x", 1);
            buf_str(&w, "\r\n");
            buf_add(&w, v.d + at, v.len - at);
            break;
        }
        default: /* a bad version */
            buf_add(&w, v.d, v.len);
            {
                char *ver = strstr(w.d, "HTTP/1.1");
                if (ver != NULL)
                    memcpy(ver, below(2) ? "HTTP/9.9" : "HTTX/1.1", 8);
            }
            break;
        }
        buf_free(&v);
        v = w;
    }
    buf_add(b, v.d, v.len);
    buf_free(&v);
}

/* A valid head (correct Content-Length) with a random body. */
static void random_body_request(buf *b)
{
    buf body = {0};
    random_body(&body);
    const char *path = below(8) ? "/mcp" : "/messages?sessionId=00";
    int with_session = below(3) != 0;
    buf_fmt(b,
            "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" HC_MCP_POST_HEADERS "%s%s%s"
            "Content-Length: %zu\r\n\r\n",
            path, with_session ? "Mcp-Session-Id: " : "", with_session ? g_session : "",
            with_session ? "\r\n" : "", body.len);
    buf_add(b, body.d ? body.d : "", body.len);
    buf_free(&body);
}

static void random_bytes(buf *b)
{
    size_t n = below(2000);
    int printable = below(2);
    for (size_t i = 0; i < n; i++) {
        char ch = printable ? (below(10) == 0 ? (below(2) ? '\r' : '\n') : (char)(32 + below(95)))
                            : (char)below(256);
        buf_add(b, &ch, 1);
    }
}

/* Builds case number i into b; returns its kind for the statistics. */
static int make_case(buf *b)
{
    int kind = (int)below(5);
    switch (kind) {
    case 0:
        random_bytes(b);
        break;
    case 1: { /* a valid request cut at a random point */
        buf v = {0};
        valid_request(&v);
        buf_add(b, v.d, v.len ? 1 + below(v.len - 1 > 0 ? v.len - 1 : 1) : 0);
        buf_free(&v);
        break;
    }
    case 2:
        mutated_request(b);
        break;
    case 3:
        random_body_request(b);
        break;
    default: /* two requests pipelined, the second maybe bad */
        valid_request(b);
        if (below(2))
            mutated_request(b);
        else
            random_body_request(b);
        break;
    }
    return kind;
}

/* Answers seen, by status class (index status / 100; 0: no answer read). */
static int g_status_class[6];

/* Sends one case on a new connection and ends it in one of several ways. */
static int run_case(const buf *b, int *timed_out)
{
    hc_conn c;
    if (hc_connect(&c, g_port, HX_REQ_MS) != 0)
        return -1;
    /* Some cases arrive in pieces, to exercise partial parsing. */
    size_t pos = 0;
    while (pos < b->len) {
        size_t n = below(4) == 0 ? 1 + below(b->len - pos) : b->len - pos;
        if (hc_send(&c, b->d + pos, n, 1000) != 0)
            break; /* the server may close early on bad input */
        pos += n;
    }
    switch (below(4)) {
    case 0: /* abrupt reset */
        hc_close_reset(&c);
        return 0;
    case 1: /* plain close without reading */
        hc_close(&c);
        return 0;
    default: { /* half-close and read until the server closes or answers */
        hc_shutdown_write(&c);
        long long deadline = hc_now_ms() + CASE_READ_MS;
        hc_response r;
        /* Reading heads until none is left also walks pipelined answers. */
        for (;;) {
            int left = (int)(deadline - hc_now_ms());
            if (left <= 0) {
                (*timed_out)++;
                break;
            }
            if (hc_read_head(&c, &r, left) != 0) {
                if (!c.eof && (int)(deadline - hc_now_ms()) <= 0)
                    (*timed_out)++;
                hc_response_free(&r);
                break;
            }
            if (r.status >= 100 && r.status < 600)
                g_status_class[r.status / 100]++;
            /* A stream (GET, SSE) would go on; its head is enough. */
            const char *ct = hc_header_get(&r, "content-type");
            int stream = ct != NULL && strstr(ct, "event-stream") != NULL;
            if (stream || hc_read_body(&c, &r, (int)(deadline - hc_now_ms())) != 0) {
                hc_response_free(&r);
                break;
            }
            hc_response_free(&r);
        }
        hc_close(&c);
        return 0;
    }
    }
}

/* Prints a case escaped, for replaying a failure by hand. */
static void print_case(int i, const buf *b)
{
    fprintf(stderr, "case %d (%zu bytes): \"", i, b->len);
    for (size_t k = 0; k < b->len && k < 600; k++) {
        unsigned char ch = (unsigned char)b->d[k];
        if (ch == '\r')
            fputs("\\r", stderr);
        else if (ch == '\n')
            fputs("\\n", stderr);
        else if (ch == '"' || ch == '\\')
            fprintf(stderr, "\\%c", ch);
        else if (ch < 32 || ch >= 127)
            fprintf(stderr, "\\x%02x", ch);
        else
            fputc(ch, stderr);
    }
    fprintf(stderr, "%s\"\n", b->len > 600 ? "..." : "");
}

/* A fresh session answers a tools/call: the server is healthy. */
static void expect_healthy(int port, const char *when)
{
    char session[33];
    if (hc_mcp_initialize(port, session, HX_REQ_MS) != 0)
        fail_msg("%s: a valid initialize failed", when);
    hc_response r;
    char *call = hc_tools_call_body(42, "echo", "{\"text\":\"alive\"}");
    hx_post(port, session, NULL, call, &r, when);
    free(call);
    hx_expect_status(&r, 200, when);
    json_t *msgs = hx_messages(&r, when);
    assert_string_equal(hx_result_text(hx_find_response(msgs, 42, when), when), "alive");
    json_decref(msgs);
    hc_response_free(&r);
    assert_int_equal(hc_mcp_delete(port, session, HX_REQ_MS), 200);
}

static int setup(void **state)
{
    /* Fuzzed initializes create sessions; they must not fill the table. */
    static const char *const flags[] = {"--max-sessions", "1000000", NULL};
    return hx_setup(state, flags, 1);
}

static void test_random_and_truncated_requests_leave_server_healthy(void **state)
{
    hx_fixture *f = *state;
    uint64_t seed = DEFAULT_SEED;
    const char *env = getenv("MCP_FUZZ_SEED");
    if (env != NULL && *env != '\0')
        seed = strtoull(env, NULL, 0);
    int cases = DEFAULT_CASES;
    env = getenv("MCP_FUZZ_CASES");
    if (env != NULL && atoi(env) > 0)
        cases = atoi(env);
    print_message("fuzz seed %llu (0x%llx); replay with MCP_FUZZ_SEED=%llu\n",
                  (unsigned long long)seed, (unsigned long long)seed, (unsigned long long)seed);
    rng_state = seed;
    g_port = f->port;
    snprintf(g_session, sizeof(g_session), "%s", f->session);

    long long t0 = hc_now_ms();
    int kinds[5] = {0}, timed_out = 0, done = 0;
    for (int i = 0; i < cases; i++) {
        if (hc_now_ms() - t0 > TIME_BUDGET_MS) {
            print_message("time budget reached after %d of %d cases\n", i, cases);
            break;
        }
        buf b = {0};
        kinds[make_case(&b)]++;
        if (run_case(&b, &timed_out) != 0 || !hc_server_alive(&f->srv)) {
            print_case(i, &b);
            fail_msg("fuzz case %d (seed %llu): the server %s", i, (unsigned long long)seed,
                     hc_server_alive(&f->srv) ? "refused a connection" : "died");
        }
        if (i % 500 == 499) {
            char when[64];
            snprintf(when, sizeof(when), "health check after fuzz case %d", i);
            if (!hc_server_alive(&f->srv)) {
                print_case(i, &b);
                fail_msg("fuzz case %d: the server died", i);
            }
            expect_healthy(f->port, when);
        }
        buf_free(&b);
        done++;
    }
    print_message("%d cases in %lld ms (random bytes %d, cut %d, mutated heads %d, random bodies "
                  "%d, pipelined %d); %d waited the full %d ms for an answer or close\n",
                  done, hc_now_ms() - t0, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4],
                  timed_out, CASE_READ_MS);
    print_message("answers read: 2xx %d, 3xx %d, 4xx %d, 5xx %d\n", g_status_class[2],
                  g_status_class[3], g_status_class[4], g_status_class[5]);
    assert_true(hc_server_alive(&f->srv));
    expect_healthy(f->port, "initialize + tools/call after the fuzzing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_and_truncated_requests_leave_server_healthy),
    };
    int failed = cmocka_run_group_tests_name("http_fuzz", tests, setup, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
