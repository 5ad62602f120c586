/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/util: buffers, strings, randomness, base64, logging, the worker
 * pool, the mailbox and newline framing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/util.h"

/* ---- Buffers ---- */

static void test_buf_zeroed_struct_is_empty_and_grows_on_append(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__buf_appends(&b, "hello"), MCP_OK);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "hello");
    assert_true(b.cap > b.len);

    /* Many appends force several reallocations; the content must survive them. */
    for (int i = 0; i < 10000; i++)
        assert_int_equal(mcp__buf_append(&b, "x", 1), MCP_OK);
    assert_int_equal(b.len, 10005);
    assert_true(b.cap >= b.len + 1);
    assert_memory_equal(b.data, "hello", 5);
    assert_int_equal(b.data[10004], 'x');
    assert_int_equal(b.data[10005], '\0');
    mcp__buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
}

static void test_buf_appendf_formats_short_and_long_text(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__buf_appendf(&b, "%d-%s", 42, "abc"), MCP_OK);
    assert_string_equal(b.data, "42-abc");

    /* Longer than whatever room is left, so the second formatting pass is taken. */
    char big[5000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(mcp__buf_appendf(&b, "[%s]", big), MCP_OK);
    assert_int_equal(b.len, 6 + 2 + 4999);
    assert_int_equal(b.data[6], '[');
    assert_int_equal(b.data[b.len - 1], ']');
    assert_int_equal(b.data[b.len], '\0');
    mcp__buf_free(&b);
}

static void test_buf_consume_reset_and_steal(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__buf_appends(&b, "abcdef"), MCP_OK);
    mcp__buf_consume(&b, 2);
    assert_int_equal(b.len, 4);
    assert_string_equal(b.data, "cdef");
    mcp__buf_consume(&b, 100);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");

    assert_int_equal(mcp__buf_appends(&b, "xyz"), MCP_OK);
    size_t cap = b.cap;
    mcp__buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, cap);

    assert_int_equal(mcp__buf_appends(&b, "kept"), MCP_OK);
    char *s = mcp__buf_steal(&b);
    assert_string_equal(s, "kept");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    free(s);

    mcp__buf empty = {0};
    assert_null(mcp__buf_steal(&empty));
}

static void test_buf_reserve_refuses_sizes_that_would_wrap(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__buf_appends(&b, "a"), MCP_OK);
    assert_int_equal(mcp__buf_reserve(&b, SIZE_MAX), MCP_ENOMEM);
    assert_string_equal(b.data, "a");
    mcp__buf_free(&b);
}

/* ---- Strings ---- */

static void test_strdup_copies_and_accepts_null(void **state)
{
    (void)state;
    assert_null(mcp__strdup(NULL));
    char *s = mcp__strdup("copy me");
    assert_string_equal(s, "copy me");
    free(s);
}

static void test_asprintf_formats_into_new_memory(void **state)
{
    (void)state;
    char *s = mcp__asprintf("%s=%u", "n", 7u);
    assert_string_equal(s, "n=7");
    free(s);
    s = mcp__asprintf("%s", "");
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

static void test_hex_writes_lowercase_digits(void **state)
{
    (void)state;
    const unsigned char in[] = {0x00, 0x01, 0xab, 0xff, 0x7f};
    char out[2 * sizeof in + 1];
    mcp__hex(in, sizeof in, out);
    assert_string_equal(out, "0001abff7f");
    mcp__hex(in, 0, out);
    assert_string_equal(out, "");
}

/* ---- Randomness and time ---- */

static void test_random_gives_different_bytes_each_call(void **state)
{
    (void)state;
    unsigned char a[32], b[32];
    assert_int_equal(mcp__random_bytes(a, sizeof a), MCP_OK);
    assert_int_equal(mcp__random_bytes(b, sizeof b), MCP_OK);
    /* 256 bits colliding by chance is not a thing that happens. */
    assert_memory_not_equal(a, b, sizeof a);

    /* Past getrandom's 256-byte guarantee, so the short-read loop is exercised. */
    size_t n = 1 << 20;
    unsigned char *big = calloc(1, n);
    assert_non_null(big);
    assert_int_equal(mcp__random_bytes(big, n), MCP_OK);
    size_t zeros = 0;
    for (size_t i = 0; i < n; i++)
        zeros += big[i] == 0;
    /* About n/256 zero bytes are expected; all zeros would mean nothing was written. */
    assert_true(zeros < n / 128);
    free(big);
    assert_int_equal(mcp__random_bytes(a, 0), MCP_OK);
}

static void test_now_ms_is_monotonic(void **state)
{
    (void)state;
    uint64_t a = mcp__now_ms();
    uint64_t b = mcp__now_ms();
    assert_true(a > 0);
    assert_true(b >= a);
}

/* ---- Base64 ---- */

static void test_base64_encodes_rfc4648_vectors(void **state)
{
    (void)state;
    static const char *const vec[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char *e = mcp__base64_encode(vec[i][0], strlen(vec[i][0]));
        assert_string_equal(e, vec[i][1]);
        free(e);
        size_t n = 99;
        unsigned char *d = mcp__base64_decode(vec[i][1], strlen(vec[i][1]), &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(vec[i][0]));
        assert_memory_equal(d, vec[i][0], n);
        assert_int_equal(d[n], '\0');
        free(d);
    }
}

static void test_base64_round_trips_every_byte_value_and_length(void **state)
{
    (void)state;
    unsigned char in[300];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof in; len++) {
        char *e = mcp__base64_encode(in, len);
        assert_non_null(e);
        assert_int_equal(strlen(e), (len + 2) / 3 * 4);
        size_t n = 0;
        unsigned char *d = mcp__base64_decode(e, strlen(e), &n);
        assert_non_null(d);
        assert_int_equal(n, len);
        assert_memory_equal(d, in, len);
        free(d);

        /* The same text without its padding decodes to the same bytes. */
        size_t el = strlen(e);
        while (el > 0 && e[el - 1] == '=')
            el--;
        d = mcp__base64_decode(e, el, &n);
        assert_non_null(d);
        assert_int_equal(n, len);
        assert_memory_equal(d, in, len);
        free(d);
        free(e);
    }
}

static void test_base64_decode_rejects_bad_input(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Zm9v!",            /* outside the alphabet */
        "Zm 9v",            /* whitespace is not in the alphabet either */
        "Zm9v\n",           /* nor is a newline */
        "Z",                /* one leftover character carries no byte */
        "Zm9vY",            /* the same after a full quantum */
        "Zg=",              /* padding that does not complete the quantum */
        "Zg===",            /* too much padding */
        "Z===",             /* three pad characters */
        "Zg==Zg==",         /* padding in the middle */
        "=",        "-_8=", /* the URL-safe alphabet is a different encoding */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = 0;
        unsigned char *d = mcp__base64_decode(bad[i], strlen(bad[i]), &n);
        if (d)
            fail_msg("accepted bad base64 \"%s\"", bad[i]);
    }
    /* A NUL inside the given length is a bad character, not the end of the text. */
    size_t n = 0;
    assert_null(mcp__base64_decode("Zm\0v", 4, &n));
}

static void test_base64url_encodes_without_padding_in_the_url_safe_alphabet(void **state)
{
    (void)state;
    static const char *const vec[][2] = {
        {"", ""},
        {"f", "Zg"},
        {"fo", "Zm8"},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg"},
        {"fooba", "Zm9vYmE"},
        {"foobar", "Zm9vYmFy"},
        {"\xfb\xff\xbf", "-_-_"}, /* "+/+/" in the standard alphabet */
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        size_t len = strlen(vec[i][0]);
        char out[16];
        assert_int_equal(mcp__base64url_len(len), strlen(vec[i][1]));
        assert_int_equal(mcp__base64url_encode(vec[i][0], len, out), strlen(vec[i][1]));
        assert_string_equal(out, vec[i][1]);
        unsigned char d[16];
        size_t n = 99;
        assert_int_equal(mcp__base64url_decode(out, strlen(out), d, &n), MCP_OK);
        assert_int_equal(n, len);
        assert_memory_equal(d, vec[i][0], n);
    }
}

static void test_base64url_round_trips_every_length(void **state)
{
    (void)state;
    unsigned char in[300];
    char out[404];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof in; len++) {
        size_t el = mcp__base64url_encode(in, len, out);
        assert_int_equal(el, mcp__base64url_len(len));
        assert_int_equal(strlen(out), el);
        unsigned char d[sizeof in + 2];
        size_t n = 0;
        assert_int_equal(mcp__base64url_decode(out, el, d, &n), MCP_OK);
        assert_int_equal(n, len);
        assert_memory_equal(d, in, len);
    }
}

static void test_base64url_decode_accepts_one_spelling_only(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Zg==", "Zm8=",           /* no padding */
        "+/+/", "Zm9v+",  "Zm/v", /* the standard alphabet is a different encoding */
        "Z",    "Zm9vY",          /* one leftover character carries no byte */
        "Zh",   "Zm9",            /* nonzero bits after the last byte: "Zg" and "Zm8" only */
        "Zm 9", "Zm9v\n", "Zm.v",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char d[16];
        size_t n = 0;
        if (mcp__base64url_decode(bad[i], strlen(bad[i]), d, &n) != MCP_EINVAL)
            fail_msg("accepted bad base64url \"%s\"", bad[i]);
    }
    unsigned char d[16];
    size_t n = 0;
    assert_int_equal(mcp__base64url_decode("Zm\0v", 4, d, &n), MCP_EINVAL);
}

/* ---- Logging ---- */

/* Runs fn with stderr redirected into a pipe and returns what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fds[1], STDERR_FILENO) >= 0);
    close(fds[1]);
    fn();
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    /* The write end is closed everywhere now, so reading stops at EOF. */
    static char out[8192];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], out + got, sizeof out - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    out[got] = '\0';
    return out;
}

static void log_some(void)
{
    errno = 1234;
    mcp__error("bad %s", "thing");
    assert_int_equal(errno, 1234);
    mcp__warn("careful\n");
}

static void test_log_writes_prefixed_lines_to_stderr_and_keeps_errno(void **state)
{
    (void)state;
    char *out = capture_stderr(log_some);
    assert_string_equal(out, "libmcp: error: bad thing\nlibmcp: warning: careful\n");
}

static void log_long(void)
{
    char msg[3000];
    memset(msg, 'm', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    mcp__error("%s", msg);
}

static void test_log_writes_lines_longer_than_its_stack_buffer_whole(void **state)
{
    (void)state;
    char *out = capture_stderr(log_long);
    size_t n = strlen(out);
    assert_int_equal(n, strlen("libmcp: error: ") + 2999 + 1);
    assert_memory_equal(out, "libmcp: error: mmm", 18);
    assert_int_equal(out[n - 1], '\n');
    assert_int_equal(out[n - 2], 'm');
}

/* A message with what a line must escape: quotes, a backslash, a newline, a control byte,
 * a byte that begins no UTF-8, and UTF-8 that must go through as it is. */
static const char hostile_msg[] = "say \"hi\"\\ now\nnext\x01 \xff caf\xc3\xa9";

static void log_json(void)
{
    mcp__log_set_format(2);
    errno = 77;
    mcp__log_emit("warning", "libmcp", hostile_msg, sizeof hostile_msg - 1,
                  "event=x q=\"a \\\"b\\\"\" empty= bare");
    assert_int_equal(errno, 77);
    mcp__log_set_format(0);
}

static void log_logfmt(void)
{
    mcp__log_set_format(1);
    mcp__log_emit("error", "libmcp", hostile_msg, sizeof hostile_msg - 1, "event=x q=\"a b\"");
    mcp__log_emit(NULL, NULL, "plain", 5, NULL);
    mcp__log_set_format(0);
}

/* The time is the only part that changes: 2026-12-08T01:02:03.456Z. */
static void assert_time_at(const char *p)
{
    assert_int_equal(strlen(p) >= 24, 1);
    for (int i = 0; i < 24; i++) {
        if (i == 4 || i == 7)
            assert_int_equal(p[i], '-');
        else if (i == 10)
            assert_int_equal(p[i], 'T');
        else if (i == 13 || i == 16)
            assert_int_equal(p[i], ':');
        else if (i == 19)
            assert_int_equal(p[i], '.');
        else if (i == 23)
            assert_int_equal(p[i], 'Z');
        else
            assert_true(p[i] >= '0' && p[i] <= '9');
    }
}

static void test_log_json_lines_escape_everything_and_stay_utf8(void **state)
{
    (void)state;
    char *out = capture_stderr(log_json);
    assert_memory_equal(out, "{\"ts\":\"", 7);
    assert_time_at(out + 7);
    assert_string_equal(
        out + 7 + 24, "\",\"level\":\"warning\",\"source\":\"libmcp\",\"msg\":\"say \\\"hi\\\"\\\\ "
                      "now\\nnext\\u0001 \xef\xbf\xbd caf\xc3\xa9\",\"event\":\"x\",\"q\":\"a "
                      "\\\"b\\\"\",\"empty\":\"\",\"bare\":\"\"}\n");
}

static void test_log_logfmt_lines_quote_what_is_not_bare(void **state)
{
    (void)state;
    char *out = capture_stderr(log_logfmt);
    char *second = strchr(out, '\n');
    assert_non_null(second);
    *second++ = '\0';
    assert_memory_equal(out, "ts=", 3);
    assert_time_at(out + 3);
    assert_string_equal(out + 3 + 24,
                        " level=error source=libmcp msg=\"say \\\"hi\\\"\\\\ now\\nnext\\x01 "
                        "\xef\xbf\xbd caf\xc3\xa9\" event=x q=\"a b\"");
    /* No level, source or fields: the time and the message alone. */
    assert_memory_equal(second, "ts=", 3);
    assert_time_at(second + 3);
    assert_string_equal(second + 3 + 24, " msg=plain\n");
}

/* ---- Worker pool ---- */

typedef struct counter {
    uv_mutex_t lock;
    int runs;
    uv_thread_t seen[8];
    int nseen;
} counter;

static void count_job(void *arg)
{
    counter *c = arg;
    uv_thread_t self = uv_thread_self();
    uv_mutex_lock(&c->lock);
    c->runs++;
    int known = 0;
    for (int i = 0; i < c->nseen; i++)
        known |= uv_thread_equal(&c->seen[i], &self);
    if (!known && c->nseen < 8)
        c->seen[c->nseen++] = self;
    uv_mutex_unlock(&c->lock);
}

static void test_pool_runs_1000_jobs_on_4_threads_and_free_drains(void **state)
{
    (void)state;
    counter c = {0};
    assert_int_equal(uv_mutex_init(&c.lock), 0);
    mcp__pool *p = mcp__pool_new(4);
    assert_non_null(p);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(mcp__pool_submit(p, count_job, &c), MCP_OK);
    /* Free right away: jobs still queued must run before it returns. */
    mcp__pool_free(p);
    assert_int_equal(c.runs, 1000);
    assert_true(c.nseen >= 1 && c.nseen <= 4);
    uv_thread_t self = uv_thread_self();
    for (int i = 0; i < c.nseen; i++)
        assert_false(uv_thread_equal(&c.seen[i], &self));
    uv_mutex_destroy(&c.lock);
}

typedef struct gate {
    uv_mutex_t lock;
    uv_cond_t cond;
    int open;
    int started;
    int done;
} gate;

static void gated_job(void *arg)
{
    gate *g = arg;
    uv_mutex_lock(&g->lock);
    g->started++;
    uv_cond_broadcast(&g->cond);
    while (!g->open)
        uv_cond_wait(&g->cond, &g->lock);
    g->done++;
    uv_mutex_unlock(&g->lock);
}

static void test_pool_uses_all_threads_at_once(void **state)
{
    (void)state;
    gate g = {0};
    assert_int_equal(uv_mutex_init(&g.lock), 0);
    assert_int_equal(uv_cond_init(&g.cond), 0);
    mcp__pool *p = mcp__pool_new(4);
    assert_non_null(p);
    for (int i = 0; i < 4; i++)
        assert_int_equal(mcp__pool_submit(p, gated_job, &g), MCP_OK);
    /* All four jobs must be blocked in parallel before any is let go. */
    uint64_t deadline = uv_hrtime() + 10ull * 1000000000ull;
    uv_mutex_lock(&g.lock);
    while (g.started < 4) {
        uint64_t now = uv_hrtime();
        assert_true(now < deadline);
        uv_cond_timedwait(&g.cond, &g.lock, deadline - now);
    }
    g.open = 1;
    uv_cond_broadcast(&g.cond);
    uv_mutex_unlock(&g.lock);
    mcp__pool_free(p);
    assert_int_equal(g.done, 4);
    uv_cond_destroy(&g.cond);
    uv_mutex_destroy(&g.lock);
}

static void test_pool_rejects_bad_thread_counts(void **state)
{
    (void)state;
    assert_null(mcp__pool_new(0));
    assert_null(mcp__pool_new(-1));
    assert_null(mcp__pool_new(257));
    mcp__pool_free(NULL);
}

/* ---- Mailbox ---- */

#define POSTERS 4
#define MAILS_PER_POSTER 1000

typedef struct box_test {
    mcp__mailbox mb;
    uv_thread_t loop_thread;
    int next[POSTERS];
    int delivered;
    int wrong_thread;
    int out_of_order;
    int closed;
} box_test;

typedef struct test_mail {
    mcp__mail mail; /* first, so a mail pointer is a test_mail pointer */
    box_test *t;
    int poster;
    int seq;
} test_mail;

static void on_mail(mcp__mail *m)
{
    test_mail *tm = (test_mail *)m;
    box_test *t = tm->t;
    uv_thread_t self = uv_thread_self();
    if (!uv_thread_equal(&self, &t->loop_thread))
        t->wrong_thread++;
    if (tm->seq != t->next[tm->poster])
        t->out_of_order++;
    t->next[tm->poster] = tm->seq + 1;
    t->delivered++;
    free(tm);
    if (t->delivered == POSTERS * MAILS_PER_POSTER)
        mcp__mailbox_close(&t->mb, NULL);
}

typedef struct poster_arg {
    box_test *t;
    int poster;
    int failures;
} poster_arg;

static void poster(void *arg)
{
    poster_arg *pa = arg;
    for (int i = 0; i < MAILS_PER_POSTER; i++) {
        test_mail *tm = malloc(sizeof *tm);
        if (!tm) {
            pa->failures++;
            continue;
        }
        tm->mail.fn = on_mail;
        tm->t = pa->t;
        tm->poster = pa->poster;
        tm->seq = i;
        if (mcp__mailbox_post(&pa->t->mb, &tm->mail) != MCP_OK) {
            free(tm);
            pa->failures++;
        }
    }
}

static void on_deadline(uv_timer_t *timer)
{
    /* Reached only when the test hangs: make it fail instead of waiting forever. */
    (void)timer;
    fail_msg("mailbox test did not finish within its deadline");
}

static void test_mailbox_delivers_4000_mails_from_4_threads_in_order_on_loop(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    box_test *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->loop_thread = uv_thread_self();
    assert_int_equal(mcp__mailbox_init(&t->mb, &loop), MCP_OK);

    uv_timer_t deadline;
    assert_int_equal(uv_timer_init(&loop, &deadline), 0);
    assert_int_equal(uv_timer_start(&deadline, on_deadline, 10000, 0), 0);
    uv_unref((uv_handle_t *)&deadline);

    uv_thread_t threads[POSTERS];
    poster_arg args[POSTERS];
    for (int i = 0; i < POSTERS; i++) {
        args[i] = (poster_arg){.t = t, .poster = i};
        assert_int_equal(uv_thread_create(&threads[i], poster, &args[i]), 0);
    }
    /* The loop runs until the last mail closes the mailbox, its only live handle. */
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    for (int i = 0; i < POSTERS; i++) {
        assert_int_equal(uv_thread_join(&threads[i]), 0);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(t->delivered, POSTERS * MAILS_PER_POSTER);
    assert_int_equal(t->wrong_thread, 0);
    assert_int_equal(t->out_of_order, 0);
    for (int i = 0; i < POSTERS; i++)
        assert_int_equal(t->next[i], MAILS_PER_POSTER);

    uv_close((uv_handle_t *)&deadline, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    free(t);
}

typedef struct close_test {
    mcp__mailbox mb;
    int ran;
    int close_cb_runs;
    int ran_at_close_cb;
} close_test;

typedef struct plain_mail {
    mcp__mail mail;
    close_test *t;
} plain_mail;

static void count_mail(mcp__mail *m)
{
    plain_mail *pm = (plain_mail *)m;
    pm->t->ran++;
}

static void on_box_closed(mcp__mailbox *mb)
{
    close_test *t = (close_test *)mb;
    t->close_cb_runs++;
    t->ran_at_close_cb = t->ran;
}

static void test_mailbox_close_runs_queued_mails_and_refuses_later_posts(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    close_test t = {0};
    assert_int_equal(mcp__mailbox_init(&t.mb, &loop), MCP_OK);
    t.mb.async.data = &t; /* the owner's field must be left alone */

    plain_mail m[3];
    for (int i = 0; i < 3; i++) {
        m[i] = (plain_mail){.mail = {.fn = count_mail}, .t = &t};
        assert_int_equal(mcp__mailbox_post(&t.mb, &m[i].mail), MCP_OK);
    }
    /* Closed before the loop ever ran: the three mails still run, synchronously. */
    mcp__mailbox_close(&t.mb, on_box_closed);
    assert_int_equal(t.ran, 3);
    assert_int_equal(t.close_cb_runs, 0);

    plain_mail late = {.mail = {.fn = count_mail}, .t = &t};
    assert_int_equal(mcp__mailbox_post(&t.mb, &late.mail), MCP_ECLOSED);

    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(t.close_cb_runs, 1);
    assert_int_equal(t.ran_at_close_cb, 3);
    assert_int_equal(t.ran, 3);
    assert_ptr_equal(t.mb.async.data, &t);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A mail that closes the mailbox while mails posted after it are still queued. */
typedef struct order_test {
    mcp__mailbox mb;
    int order[4];
    int n;
    int closed;
} order_test;

typedef struct order_mail {
    mcp__mail mail;
    order_test *t;
    int id;
    int close_box;
} order_mail;

static void order_closed(mcp__mailbox *mb)
{
    ((order_test *)mb)->closed++;
}

static void record_mail(mcp__mail *m)
{
    order_mail *om = (order_mail *)m;
    om->t->order[om->t->n++] = om->id;
    if (om->close_box)
        mcp__mailbox_close(&om->t->mb, order_closed);
}

static void test_mailbox_close_from_a_mail_keeps_posting_order(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    order_test t = {0};
    assert_int_equal(mcp__mailbox_init(&t.mb, &loop), MCP_OK);
    order_mail m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = (order_mail){.mail = {.fn = record_mail}, .t = &t, .id = i, .close_box = i == 1};
        assert_int_equal(mcp__mailbox_post(&t.mb, &m[i].mail), MCP_OK);
    }
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(t.n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(t.order[i], i);
    assert_int_equal(t.closed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- Line framing ---- */

typedef struct collected {
    char lines[16][64];
    size_t lens[16];
    int n;
    int overflows;
    size_t overflow_seen;
    size_t long_line_len;
} collected;

static void collect_line(void *user, char *line, size_t len)
{
    collected *c = user;
    assert_int_equal(strlen(line), len); /* NUL-terminated, no embedded NUL here */
    if (len >= sizeof c->lines[0]) {
        c->long_line_len = len;
        return;
    }
    assert_true(c->n < 16);
    memcpy(c->lines[c->n], line, len + 1);
    c->lens[c->n] = len;
    c->n++;
}

static void collect_overflow(void *user, size_t seen)
{
    collected *c = user;
    c->overflows++;
    c->overflow_seen = seen;
}

static const char stream[] = "first\nsecond line\r\n\n\r\nthird\rwith cr\n{\"jsonrpc\":\"2.0\"}\n";

static void expect_stream_lines(const collected *c)
{
    assert_int_equal(c->n, 4);
    assert_string_equal(c->lines[0], "first");
    assert_string_equal(c->lines[1], "second line");
    assert_string_equal(c->lines[2], "third\rwith cr");
    assert_string_equal(c->lines[3], "{\"jsonrpc\":\"2.0\"}");
    assert_int_equal(c->overflows, 0);
}

static void test_lines_splits_whole_input_strips_cr_and_skips_empty_lines(void **state)
{
    (void)state;
    mcp__lines ls;
    mcp__lines_init(&ls, 1024);
    collected c = {0};
    assert_int_equal(
        mcp__lines_feed(&ls, stream, strlen(stream), collect_line, collect_overflow, &c), MCP_OK);
    expect_stream_lines(&c);
    assert_int_equal(mcp__lines_pending(&ls), 0);
    mcp__lines_free(&ls);
}

static void test_lines_same_result_for_every_chunk_size_and_byte_by_byte(void **state)
{
    (void)state;
    size_t total = strlen(stream);
    for (size_t chunk = 1; chunk <= total; chunk++) {
        mcp__lines ls;
        mcp__lines_init(&ls, 1024);
        collected c = {0};
        for (size_t off = 0; off < total; off += chunk) {
            size_t n = total - off < chunk ? total - off : chunk;
            assert_int_equal(
                mcp__lines_feed(&ls, stream + off, n, collect_line, collect_overflow, &c), MCP_OK);
        }
        expect_stream_lines(&c);
        mcp__lines_free(&ls);
    }
}

static void test_lines_keeps_unterminated_tail_pending(void **state)
{
    (void)state;
    mcp__lines ls;
    mcp__lines_init(&ls, 1024);
    collected c = {0};
    assert_int_equal(mcp__lines_feed(&ls, "a\npartial", 9, collect_line, NULL, &c), MCP_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(mcp__lines_pending(&ls), 7);
    assert_int_equal(mcp__lines_feed(&ls, "\r", 1, collect_line, NULL, &c), MCP_OK);
    assert_int_equal(mcp__lines_feed(&ls, "\n", 1, collect_line, NULL, &c), MCP_OK);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.lines[1], "partial");
    assert_int_equal(mcp__lines_pending(&ls), 0);
    mcp__lines_free(&ls);
}

static void test_lines_line_of_exactly_max_bytes_is_delivered_even_with_crlf(void **state)
{
    (void)state;
    char line[40];
    memset(line, 'a', 32);
    memcpy(line + 32, "\r\n", 2);
    /* Byte by byte, so the '\r' is held past the limit before its '\n' arrives. */
    mcp__lines ls;
    mcp__lines_init(&ls, 32);
    collected c = {0};
    for (size_t i = 0; i < 34; i++)
        assert_int_equal(mcp__lines_feed(&ls, line + i, 1, collect_line, collect_overflow, &c),
                         MCP_OK);
    assert_int_equal(c.overflows, 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.lens[0], 32);
    assert_true(ls.buf.cap <= 32 + 2);

    /* One byte more is too long, whether or not a '\r' follows. */
    line[32] = 'a';
    memcpy(line + 33, "\r\n", 2);
    assert_int_equal(mcp__lines_feed(&ls, line, 35, collect_line, collect_overflow, &c), MCP_OK);
    assert_int_equal(c.overflows, 1);
    assert_int_equal(c.overflow_seen, 34);
    assert_int_equal(c.n, 1);
    mcp__lines_free(&ls);
}

static void test_lines_overlong_line_is_reported_once_and_skipped(void **state)
{
    (void)state;
    const size_t max = 1024 * 1024;
    const size_t chunk = 64 * 1024;
    const size_t huge = 10 * 1024 * 1024;
    char *buf = malloc(chunk);
    assert_non_null(buf);
    memset(buf, 'z', chunk);

    mcp__lines ls;
    mcp__lines_init(&ls, max);
    collected c = {0};
    assert_int_equal(mcp__lines_feed(&ls, "before\n", 7, collect_line, collect_overflow, &c),
                     MCP_OK);
    for (size_t sent = 0; sent < huge; sent += chunk) {
        assert_int_equal(mcp__lines_feed(&ls, buf, chunk, collect_line, collect_overflow, &c),
                         MCP_OK);
        /* Memory stays bounded by the limit, not by the line. */
        assert_true(ls.buf.cap <= max + 2);
        assert_true(mcp__lines_pending(&ls) <= max + 1);
    }
    assert_int_equal(c.overflows, 1);
    assert_true(c.overflow_seen > max);
    assert_true(c.overflow_seen <= max + chunk);

    /* The end of the long line and the next line arrive in one chunk. */
    static const char tail[] = "zzzz\r\nafter\n";
    assert_int_equal(mcp__lines_feed(&ls, tail, strlen(tail), collect_line, collect_overflow, &c),
                     MCP_OK);
    assert_int_equal(c.overflows, 1);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.lines[0], "before");
    assert_string_equal(c.lines[1], "after");
    assert_int_equal(c.long_line_len, 0);

    /* A second long line is reported again: "once" is per line. */
    memset(buf, 'q', chunk);
    buf[chunk - 1] = '\n';
    for (size_t sent = 0; sent < 2 * max; sent += chunk)
        assert_int_equal(mcp__lines_feed(&ls, buf, chunk, collect_line, collect_overflow, &c),
                         MCP_OK);
    assert_int_equal(c.overflows, 1);
    /* Each of those chunks was its own 64 KiB line, under the limit. */
    assert_int_equal(c.long_line_len, chunk - 1);

    buf[chunk - 1] = 'q';
    for (size_t sent = 0; sent < 2 * max; sent += chunk)
        assert_int_equal(mcp__lines_feed(&ls, buf, chunk, collect_line, collect_overflow, &c),
                         MCP_OK);
    assert_int_equal(mcp__lines_feed(&ls, "\nlast\n", 6, collect_line, collect_overflow, &c),
                     MCP_OK);
    assert_int_equal(c.overflows, 2);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.lines[2], "last");
    mcp__lines_free(&ls);
    free(buf);
}

static void test_lines_overlong_line_in_one_chunk_does_not_swallow_the_next(void **state)
{
    (void)state;
    mcp__lines ls;
    mcp__lines_init(&ls, 8);
    collected c = {0};
    static const char in[] = "0123456789abcdef\nok\n";
    assert_int_equal(mcp__lines_feed(&ls, in, strlen(in), collect_line, collect_overflow, &c),
                     MCP_OK);
    assert_int_equal(c.overflows, 1);
    assert_int_equal(c.overflow_seen, 16);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0], "ok");
    mcp__lines_free(&ls);
}

/* What mcp__lines_feed reported of the last oversized line: its scan when it ended. */
static long long dropped_id = -1;
static int dropped_response = -1;
static mcp__lines *dropped_ls;

static void collect_dropped(void *user, size_t seen)
{
    (void)user;
    (void)seen;
    dropped_id = mcp__rpc_scan_response_id(&dropped_ls->scan, &dropped_response);
}

/* Feeds line (a newline added) to lines of max 8 bytes in chunks of chunk bytes: the id
 * and kind its scan gave once it ended. */
static long long scan_line(const char *line, size_t chunk, int *response)
{
    mcp__lines ls;
    mcp__lines_init(&ls, 8);
    ls.on_dropped = collect_dropped;
    dropped_ls = &ls;
    dropped_id = -1;
    dropped_response = -1;
    collected c = {0};
    char *text = mcp__asprintf("%s\n", line);
    size_t len = strlen(text);
    for (size_t at = 0; at < len; at += chunk)
        assert_int_equal(mcp__lines_feed(&ls, text + at, len - at < chunk ? len - at : chunk,
                                         collect_line, collect_overflow, &c),
                         MCP_OK);
    free(text);
    assert_int_equal(c.overflows, 1);
    mcp__lines_free(&ls);
    *response = dropped_response;
    return dropped_id;
}

static void test_lines_oversized_line_is_read_for_its_top_level_id(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        long long id;
        int response;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"id\":7,\"t\":\"xxxxxxxx\"}}", 12, 1},
        {"{\"result\":{\"content\":[{\"id\":7}],\"s\":\"a\\\"id\\\":9\"},\"id\" : 345 }", 345, 1},
        {"{\"error\":{\"code\":-1,\"data\":{\"id\":3}},\"jsonrpc\":\"2.0\",\"id\":41}", 41, 1},
        {"{\"result\":{},\"id\":\"5\"}", 0, 1},                          /* a string id: not ours */
        {"{\"result\":{},\"id\":-5}", 0, 1},                             /* nor a negative one */
        {"{\"result\":{},\"id\":5.5}", 0, 1},                            /* nor a fraction */
        {"{\"id\":3,\"params\":{\"result\":1},\"method\":\"m\"}", 0, 0}, /* a request */
        {"{\"method\":\"notifications/message\",\"params\":{\"id\":8}}", 0, 0},
        {"{\"idx\":4,\"result\":{}}", 0, 1},
        {"{\"result\":{\"x\":[1,{\"id\":2}]},\"id\":1234567890123}", 1234567890123LL, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        for (size_t chunk = 1; chunk <= strlen(cases[i].line) + 1; chunk += 7) {
            int response;
            long long id = scan_line(cases[i].line, chunk, &response);
            if (id != cases[i].id || response != cases[i].response)
                fail_msg("%s in chunks of %zu: id %lld response %d, expected %lld %d",
                         cases[i].line, chunk, id, response, cases[i].id, cases[i].response);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_zeroed_struct_is_empty_and_grows_on_append),
        cmocka_unit_test(test_buf_appendf_formats_short_and_long_text),
        cmocka_unit_test(test_buf_consume_reset_and_steal),
        cmocka_unit_test(test_buf_reserve_refuses_sizes_that_would_wrap),
        cmocka_unit_test(test_strdup_copies_and_accepts_null),
        cmocka_unit_test(test_asprintf_formats_into_new_memory),
        cmocka_unit_test(test_hex_writes_lowercase_digits),
        cmocka_unit_test(test_random_gives_different_bytes_each_call),
        cmocka_unit_test(test_now_ms_is_monotonic),
        cmocka_unit_test(test_base64_encodes_rfc4648_vectors),
        cmocka_unit_test(test_base64_round_trips_every_byte_value_and_length),
        cmocka_unit_test(test_base64_decode_rejects_bad_input),
        cmocka_unit_test(test_base64url_encodes_without_padding_in_the_url_safe_alphabet),
        cmocka_unit_test(test_base64url_round_trips_every_length),
        cmocka_unit_test(test_base64url_decode_accepts_one_spelling_only),
        cmocka_unit_test(test_log_writes_prefixed_lines_to_stderr_and_keeps_errno),
        cmocka_unit_test(test_log_writes_lines_longer_than_its_stack_buffer_whole),
        cmocka_unit_test(test_log_json_lines_escape_everything_and_stay_utf8),
        cmocka_unit_test(test_log_logfmt_lines_quote_what_is_not_bare),
        cmocka_unit_test(test_pool_runs_1000_jobs_on_4_threads_and_free_drains),
        cmocka_unit_test(test_pool_uses_all_threads_at_once),
        cmocka_unit_test(test_pool_rejects_bad_thread_counts),
        cmocka_unit_test(test_mailbox_delivers_4000_mails_from_4_threads_in_order_on_loop),
        cmocka_unit_test(test_mailbox_close_runs_queued_mails_and_refuses_later_posts),
        cmocka_unit_test(test_mailbox_close_from_a_mail_keeps_posting_order),
        cmocka_unit_test(test_lines_splits_whole_input_strips_cr_and_skips_empty_lines),
        cmocka_unit_test(test_lines_same_result_for_every_chunk_size_and_byte_by_byte),
        cmocka_unit_test(test_lines_keeps_unterminated_tail_pending),
        cmocka_unit_test(test_lines_line_of_exactly_max_bytes_is_delivered_even_with_crlf),
        cmocka_unit_test(test_lines_overlong_line_is_reported_once_and_skipped),
        cmocka_unit_test(test_lines_overlong_line_in_one_chunk_does_not_swallow_the_next),
        cmocka_unit_test(test_lines_oversized_line_is_read_for_its_top_level_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
