/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the text/event-stream writer (src/sse/writer.c) and parser
 * (src/sse/parser.c), the parser against the
 * HTML standard's event stream interpretation. Every stream is parsed whole,
 * split at every point, split at every pair of points (short streams) and one
 * byte at a time, and each way must give the same record of callbacks and
 * errors as the expected one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sse/sse.h"

/* ---- A record of what the parser reported ---- */

typedef struct rec {
    mcp__buf log;
    int stop_after_block; /* on_block returns 1 */
    size_t blocks;
} rec;

/* Appends s[0..n) with bytes outside printable ASCII (and '\') as \xHH. */
static void log_bytes(mcp__buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            assert_int_equal(mcp__buf_append(b, s + i, 1), MCP_OK);
        else
            assert_int_equal(mcp__buf_appendf(b, "\\x%02X", c), MCP_OK);
    }
}

static int on_block(void *user, const mcp__sse_block *b)
{
    rec *r = user;
    r->blocks++;
    mcp__buf *l = &r->log;
    assert_int_equal(mcp__buf_appends(l, "block"), MCP_OK);
    if (b->data != NULL) {
        /* Strings are NUL-terminated at their lengths. */
        assert_int_equal(b->data[b->data_len], '\0');
        assert_int_equal(b->type[b->type_len], '\0');
        assert_int_equal(mcp__buf_appends(l, " type="), MCP_OK);
        log_bytes(l, b->type, b->type_len);
        assert_int_equal(mcp__buf_appends(l, " data="), MCP_OK);
        log_bytes(l, b->data, b->data_len);
    } else {
        assert_null(b->type);
        assert_int_equal(b->data_len, 0);
    }
    assert_int_equal(strlen(b->last_event_id), b->last_event_id_len);
    assert_int_equal(mcp__buf_appends(l, " id="), MCP_OK);
    log_bytes(l, b->last_event_id, b->last_event_id_len);
    assert_int_equal(mcp__buf_appendf(l, "%s%s f=%zu c=%zu\n", b->id_set ? " set" : "",
                                      b->dropped ? " dropped" : "", b->fields, b->comments),
                     MCP_OK);
    return r->stop_after_block;
}

static int on_retry(void *user, uint64_t ms)
{
    rec *r = user;
    assert_true(ms <= MCP__SSE_RETRY_MAX);
    assert_int_equal(mcp__buf_appendf(&r->log, "retry=%llu\n", (unsigned long long)ms), MCP_OK);
    return 0;
}

static int on_comment(void *user, const char *text, size_t len)
{
    rec *r = user;
    assert_int_equal(text[len], '\0');
    assert_int_equal(mcp__buf_appends(&r->log, "comment="), MCP_OK);
    log_bytes(&r->log, text, len);
    assert_int_equal(mcp__buf_appends(&r->log, "\n"), MCP_OK);
    return 0;
}

static const mcp__sse_callbacks rec_callbacks = {
    .on_block = on_block, .on_retry = on_retry, .on_comment = on_comment};

/* Feeds s[0..n) to p the way a consumer that goes on after errors does, and
 * records each error. */
static void feed_all(mcp__sse_parser *p, rec *r, const char *s, size_t n)
{
    while (n > 0) {
        size_t used = 0;
        int rc = mcp__sse_parser_feed(p, s, n, &used);
        assert_true(used <= n);
        if (rc == MCP_OK) {
            assert_int_equal(used, n);
        } else if (rc == MCP_ECANCELED) {
            assert_true(r->stop_after_block);
        } else {
            assert_int_equal(rc, MCP_ELIMIT);
            assert_int_equal(mcp__buf_appends(&r->log, "error=limit\n"), MCP_OK);
        }
        s += used;
        n -= used;
    }
}

/* Parses s[0..n) cut at the given offsets (ascending) and returns the record
 * (malloc'd, "" when nothing was reported). */
static char *parse_cut(const char *s, size_t n, size_t max, const size_t *cuts, size_t ncuts)
{
    rec r = {0};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, max, &rec_callbacks, &r);
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        feed_all(&p, &r, s + at, to - at);
        at = to;
    }
    mcp__sse_parser_free(&p);
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    return mcp__buf_steal(&r.log);
}

/* The record must be `want` however s is split. */
static void expect_stream_n(const char *s, size_t n, size_t max, const char *want)
{
    char *got = parse_cut(s, n, max, NULL, 0);
    assert_string_equal(got, want);
    free(got);
    for (size_t i = 0; i <= n; i++) {
        got = parse_cut(s, n, max, &i, 1);
        if (strcmp(got, want) != 0)
            fail_msg("split at %zu:\n%s\nexpected:\n%s", i, got, want);
        free(got);
    }
    if (n <= 64) {
        for (size_t i = 0; i <= n; i++) {
            for (size_t j = i; j <= n; j++) {
                size_t cuts[2] = {i, j};
                got = parse_cut(s, n, max, cuts, 2);
                if (strcmp(got, want) != 0)
                    fail_msg("split at %zu and %zu:\n%s\nexpected:\n%s", i, j, got, want);
                free(got);
            }
        }
    }
    size_t *every = malloc((n + 1) * sizeof(*every));
    assert_non_null(every);
    for (size_t i = 0; i < n; i++)
        every[i] = i + 1;
    got = parse_cut(s, n, max, every, n);
    if (strcmp(got, want) != 0)
        fail_msg("one byte at a time:\n%s\nexpected:\n%s", got, want);
    free(got);
    free(every);
}

static void expect_stream(const char *s, const char *want)
{
    expect_stream_n(s, strlen(s), 0, want);
}

static void expect_stream_max(const char *s, size_t max, const char *want)
{
    expect_stream_n(s, strlen(s), max, want);
}

static void feed_str(mcp__sse_parser *p, rec *r, const char *s)
{
    feed_all(p, r, s, strlen(s));
}

/* ---- Line ends ---- */

static void test_lf_crlf_cr_and_mixed_line_ends_are_the_same(void **state)
{
    (void)state;
    const char *want = "block type=message data=a\\x0Ab id= f=2 c=0\n"
                       "block type=message data=c id= f=1 c=0\n";
    expect_stream("data: a\ndata: b\n\ndata: c\n\n", want);
    expect_stream("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", want);
    expect_stream("data: a\rdata: b\r\rdata: c\r\r", want);
    expect_stream("data: a\r\ndata: b\r\rdata: c\n\r\n", want);
    expect_stream("data: a\ndata: b\r\n\rdata: c\r\n\n", want);
}

static void
test_cr_at_the_end_of_a_feed_and_lf_at_the_start_of_the_next_are_one_line_end(void **state)
{
    (void)state;
    rec r = {0};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 0, &rec_callbacks, &r);
    feed_all(&p, &r, "data: a\r", 8);
    feed_all(&p, &r, "\ndata: b\r", 9);
    assert_int_equal(r.blocks, 0); /* no blank line yet: the LF was not one */
    feed_all(&p, &r, "\n", 1);
    feed_all(&p, &r, "\r", 1);
    assert_int_equal(r.blocks, 1); /* CR then CR: a blank line */
    feed_all(&p, &r, "\n", 1);     /* the LF of that CRLF, not another blank line */
    feed_all(&p, &r, "\n", 1);
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    assert_string_equal(r.log.data, "block type=message data=a\\x0Ab id= f=2 c=0\n");
    mcp__sse_parser_free(&p);
    mcp__buf_free(&r.log);

    /* The same stream split everywhere. */
    expect_stream("data: a\r\ndata: b\r\n\r\n", "block type=message data=a\\x0Ab id= f=2 c=0\n");
}

static void test_nothing_is_dispatched_without_a_blank_line_at_the_end(void **state)
{
    (void)state;
    expect_stream("data: a\n", "");
    expect_stream("data: a\ndata: b", "");
    expect_stream("id: 1\ndata: a\r", "");
    expect_stream("data: a\n\ndata: b\n", "block type=message data=a id= f=1 c=0\n");
    expect_stream("", "");
}

/* ---- The byte order mark ---- */

static void test_a_leading_byte_order_mark_is_skipped_once(void **state)
{
    (void)state;
    expect_stream("\xEF\xBB\xBF"
                  "data: a\n\n",
                  "block type=message data=a id= f=1 c=0\n");
    /* A second one is part of the first field's name: an unknown field. */
    expect_stream("\xEF\xBB\xBF\xEF\xBB\xBF"
                  "data: a\n\n",
                  "block id= f=1 c=0\n");
    /* Not at the start of the stream, a BOM is text. */
    expect_stream("data: \xEF\xBB\xBF"
                  "a\n\n\xEF\xBB\xBF"
                  "data: b\n\n",
                  "block type=message data=\\xEF\\xBB\\xBFa id= f=1 c=0\n"
                  "block id= f=1 c=0\n");
    /* The start of one that does not finish is text, and invalid UTF-8. */
    expect_stream("\xEF\xBB"
                  "data: a\n\n",
                  "block id= f=1 c=0\n");
    expect_stream("\xEF\xBB\n"
                  "data: a\n\n",
                  "block type=message data=a id= f=2 c=0\n");
    expect_stream("\xEF"
                  ":x\n\n",
                  "block id= f=1 c=0\n");
    expect_stream("\xEF\xBB\xBF\n\n", "");
}

static void test_reset_starts_a_new_stream(void **state)
{
    (void)state;
    rec r = {0};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 0, &rec_callbacks, &r);
    feed_str(&p, &r, "\xEF\xBB\xBFid: 7\ndata: a\n\ndata: unfinished");
    mcp__sse_parser_reset(&p);
    /* The BOM is looked for again, the unfinished block and the id are gone. */
    feed_str(&p, &r,
             "\xEF\xBB\xBF"
             "data: b\r");
    mcp__sse_parser_reset(&p); /* the CR's LF is not skipped in a new stream */
    feed_str(&p, &r, "\ndata: c\n\n");
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    assert_string_equal(r.log.data, "block type=message data=a id=7 set f=2 c=0\n"
                                    "block type=message data=c id= f=1 c=0\n");
    mcp__sse_parser_free(&p);
    mcp__sse_parser_free(&p); /* freeing twice is allowed */
    mcp__buf_free(&r.log);
}

/* ---- Fields ---- */

static void test_data_lines_are_joined_with_lf_and_the_last_lf_removed(void **state)
{
    (void)state;
    expect_stream("data: one\ndata: two\ndata: three\n\n",
                  "block type=message data=one\\x0Atwo\\x0Athree id= f=3 c=0\n");
    expect_stream("data: a\ndata:\n\n", "block type=message data=a\\x0A id= f=2 c=0\n");
    expect_stream("data\ndata\n\n", "block type=message data=\\x0A id= f=2 c=0\n");
    /* NUL bytes are data like any other. */
    expect_stream_n("data: a\0b\n\n", 11, 0, "block type=message data=a\\x00b id= f=1 c=0\n");
}

static void test_one_space_after_the_colon_is_removed(void **state)
{
    (void)state;
    expect_stream("data:a\n\ndata: a\n\ndata:  a\n\ndata:\ta\n\n",
                  "block type=message data=a id= f=1 c=0\n"
                  "block type=message data=a id= f=1 c=0\n"
                  "block type=message data= a id= f=1 c=0\n"
                  "block type=message data=\\x09a id= f=1 c=0\n");
    /* The field name ends at the first colon; the value may hold more. */
    expect_stream("data: a: b:c\n\n", "block type=message data=a: b:c id= f=1 c=0\n");
}

static void test_a_line_without_colon_is_a_field_name_with_an_empty_value(void **state)
{
    (void)state;
    /* "data" alone appends an LF: an event with empty data is dispatched. */
    expect_stream("data\n\n", "block type=message data= id= f=1 c=0\n");
    /* "event" alone leaves the type empty, so "message"; "id" alone sets "". */
    expect_stream("id: 5\n\nevent\nid\ndata\n\n", "block id=5 set f=1 c=0\n"
                                                  "block type=message data= id= set f=3 c=0\n");
    /* "retry" alone has no digits: ignored. */
    expect_stream("retry\n\n", "block id= f=1 c=0\n");
    /* A name that only begins like a known one is another field. */
    expect_stream("datax\ndata \nData: a\nDATA: b\n\n", "block id= f=4 c=0\n");
}

static void test_unknown_fields_are_ignored(void **state)
{
    (void)state;
    expect_stream("foo: bar\ndata: a\nbaz\n:\n\n", "comment=\n"
                                                   "block type=message data=a id= f=3 c=1\n");
}

static void test_event_type_defaults_to_message_and_lasts_one_block(void **state)
{
    (void)state;
    expect_stream("event: ping\ndata: 1\n\ndata: 2\n\nevent: a\nevent: b\ndata: 3\n\n"
                  "event:\ndata: 4\n\nevent: lost\n\ndata: 5\n\n",
                  "block type=ping data=1 id= f=2 c=0\n"
                  "block type=message data=2 id= f=1 c=0\n"
                  "block type=b data=3 id= f=3 c=0\n"
                  "block type=message data=4 id= f=2 c=0\n"
                  "block id= f=1 c=0\n"
                  "block type=message data=5 id= f=1 c=0\n");
}

static void test_comments_are_reported_and_dispatch_nothing(void **state)
{
    (void)state;
    expect_stream(": keepalive\n\n:\n\n:x: y\ndata: a\n: in between\n\n",
                  "comment= keepalive\n"
                  "block id= f=0 c=1\n"
                  "comment=\n"
                  "block id= f=0 c=1\n"
                  "comment=x: y\n"
                  "comment= in between\n"
                  "block type=message data=a id= f=1 c=2\n");
    /* Without an on_comment callback they are counted all the same. */
    rec r = {0};
    mcp__sse_callbacks cb = {.on_block = on_block};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 0, &cb, &r);
    feed_all(&p, &r, ": a\n: b\n\n", 9);
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    assert_string_equal(r.log.data, "block id= f=0 c=2\n");
    mcp__sse_parser_free(&p);
    mcp__buf_free(&r.log);
}

/* ---- Event ids ---- */

static void test_last_event_id_persists_across_blocks(void **state)
{
    (void)state;
    expect_stream("id: 1\ndata: a\n\ndata: b\n\n: c\n\nid: 2\nid: 3\ndata: d\n\ndata: e\n\n",
                  "block type=message data=a id=1 set f=2 c=0\n"
                  "block type=message data=b id=1 f=1 c=0\n"
                  "comment= c\n"
                  "block id=1 f=0 c=1\n"
                  "block type=message data=d id=3 set f=3 c=0\n"
                  "block type=message data=e id=3 f=1 c=0\n");
}

static void test_an_empty_id_resets_the_last_event_id(void **state)
{
    (void)state;
    expect_stream("id: 1\ndata: a\n\nid:\ndata: b\n\ndata: c\n\nid: 2\nid\ndata: d\n\n",
                  "block type=message data=a id=1 set f=2 c=0\n"
                  "block type=message data=b id= set f=2 c=0\n"
                  "block type=message data=c id= f=1 c=0\n"
                  "block type=message data=d id= set f=3 c=0\n");
}

static void test_an_id_with_a_nul_is_ignored(void **state)
{
    (void)state;
    static const char s[] = "id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\nid: \0\n\n";
    expect_stream_n(s, sizeof(s) - 1, 0,
                    "block type=message data=a id=1 set f=2 c=0\n"
                    "block type=message data=b id=1 f=2 c=0\n"
                    "block id=1 f=1 c=0\n");
}

static void test_an_id_only_block_tells_the_id_without_an_event(void **state)
{
    (void)state;
    /* Not dispatched (no data line), but the consumer learns the id. */
    expect_stream("id: prime-1\n\ndata: x\n\n", "block id=prime-1 set f=1 c=0\n"
                                                "block type=message data=x id=prime-1 f=1 c=0\n");
    /* A priming event: "data:" with an empty value is an event with data "". */
    expect_stream("id: s-1-0\nretry: 1000\ndata: \n\n",
                  "retry=1000\n"
                  "block type=message data= id=s-1-0 set f=3 c=0\n");
    expect_stream("id: s-1-0\nretry: 1000\ndata\n\n",
                  "retry=1000\n"
                  "block type=message data= id=s-1-0 set f=3 c=0\n");
}

/* ---- Retry ---- */

static void test_retry_takes_only_ascii_digits(void **state)
{
    (void)state;
    expect_stream("retry: 100\nretry: 1a\nretry:\nretry: \nretry:  5\nretry: -1\nretry: +1\n"
                  "retry: 1.5\nretry: 0\nretry: 007\nretry:42\n\n",
                  "retry=100\n"
                  "retry=0\n"
                  "retry=7\n"
                  "retry=42\n"
                  "block id= f=11 c=0\n");
    /* The reconnection time is set when the field comes, blank line or not. */
    expect_stream("retry: 3000\n", "retry=3000\n");
}

static void test_a_huge_retry_is_capped(void **state)
{
    (void)state;
    expect_stream("retry: 4294967295\nretry: 4294967296\nretry: 18446744073709551616\n"
                  "retry: 99999999999999999999999999999999999999999999\nretry: 1\n\n",
                  "retry=4294967295\n"
                  "retry=4294967295\n"
                  "retry=4294967295\n"
                  "retry=4294967295\n"
                  "retry=1\n"
                  "block id= f=5 c=0\n");
}

/* ---- UTF-8 ---- */

static void test_invalid_utf8_becomes_replacement_characters(void **state)
{
    (void)state;
    /* Valid sequences of every length pass as they are. */
    expect_stream(
        "data: \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\n\n",
        "block type=message data=\\xC3\\xA9\\xE2\\x82\\xAC\\xF0\\x9F\\x98\\x80 id= f=1 c=0\n");
    /* A stray continuation byte, an overlong form, a surrogate, a code point
     * past U+10FFFF and a lone lead byte: each maximal subpart is one U+FFFD. */
    expect_stream("data: a\x80"
                  "b\xC0\xAF"
                  "c\xED\xA0\x80"
                  "d\xF4\x90\x80\x80"
                  "e\xE2\x82\n\n",
                  "block type=message data=a\\xEF\\xBF\\xBDb\\xEF\\xBF\\xBD\\xEF\\xBF\\xBDc"
                  "\\xEF\\xBF\\xBD\\xEF\\xBF\\xBD\\xEF\\xBF\\xBDd\\xEF\\xBF\\xBD\\xEF\\xBF\\xBD"
                  "\\xEF\\xBF\\xBD\\xEF\\xBF\\xBDe\\xEF\\xBF\\xBD id= f=1 c=0\n");
    /* In ids, event types and comments too. */
    expect_stream("id: \xFF\nevent: \xE2\x82\n:\xFE\ndata: x\n\n",
                  "comment=\\xEF\\xBF\\xBD\n"
                  "block type=\\xEF\\xBF\\xBD data=x id=\\xEF\\xBF\\xBD set f=3 c=1\n");
}

/* ---- The limit ---- */

static void test_a_block_over_the_limit_is_reported_once_and_dropped(void **state)
{
    (void)state;
    /* max 8: "data: 12345678" is a 14-byte line, over the limit however it
     * comes. The id before it stays; the one after it is skipped with the rest. */
    expect_stream_max("id: 1\ndata: 12345678\ndata: more\nid: 2\n\ndata: ok\n\n", 8,
                      "error=limit\n"
                      "block id=1 set dropped f=1 c=0\n"
                      "block type=message data=ok id=1 f=1 c=0\n");
    /* The data buffer plus the line: "data:a" and "data:b" (6 bytes each) fit
     * in 8 while the data buffer holds 0, then 2 bytes; "data:c" after 4 does
     * not. */
    expect_stream_max("data:a\ndata:b\ndata:c\ndata:d\n\ndata:ef\n\n", 8,
                      "error=limit\n"
                      "block id= dropped f=2 c=0\n"
                      "block type=message data=ef id= f=1 c=0\n");
    /* Exactly at the limit is allowed. */
    expect_stream_max("data:1234567\n\n", 12, "block type=message data=1234567 id= f=1 c=0\n");
    expect_stream_max("data:12345678\n\n", 12, "error=limit\nblock id= dropped f=0 c=0\n");
    /* The data buffer counts decoded bytes: three U+FFFD and an LF are 10. */
    expect_stream_max("data:\xFF\xFF\xFF\n\n", 10,
                      "block type=message data=\\xEF\\xBF\\xBD\\xEF\\xBF\\xBD\\xEF\\xBF\\xBD id= "
                      "f=1 c=0\n");
    expect_stream_max("data:\xFF\xFF\xFF\n\n", 9, "error=limit\nblock id= dropped f=1 c=0\n");
    /* A long comment counts as well; the CR and LF of the dropped block's
     * lines are still line ends, and a blank line ends it. */
    expect_stream_max(": a long comment\r\nfoo\r\rdata: x\r\r", 8,
                      "error=limit\n"
                      "block id= dropped f=0 c=0\n"
                      "block type=message data=x id= f=1 c=0\n");
    /* Two blocks over the limit: two errors. */
    expect_stream_max("data: 123456789\n\ndata: 123456789\n\n", 8,
                      "error=limit\nblock id= dropped f=0 c=0\n"
                      "error=limit\nblock id= dropped f=0 c=0\n");
    /* Even a limit smaller than a partial byte order mark holds. */
    expect_stream_max("\xEF\xBB\n\ndata:\n\n", 1,
                      "error=limit\nblock id= dropped f=0 c=0\n"
                      "error=limit\nblock id= dropped f=0 c=0\n");
}

static void test_an_endless_line_keeps_memory_bounded(void **state)
{
    (void)state;
    rec r = {0};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 1024, &rec_callbacks, &r);
    char chunk[4096];
    memset(chunk, 'x', sizeof(chunk));
    memcpy(chunk, "data: ", 6);
    size_t used;
    assert_int_equal(mcp__sse_parser_feed(&p, chunk, sizeof(chunk), &used), MCP_ELIMIT);
    assert_int_equal(used, sizeof(chunk));
    /* Reported once: the rest of the line, however long, is skipped. */
    for (int i = 0; i < 2560; i++) /* 10 MiB */
        assert_int_equal(mcp__sse_parser_feed(&p, chunk, sizeof(chunk), &used), MCP_OK);
    assert_true(p.line.cap <= 2048);
    assert_true(p.data.cap <= 2048);
    feed_all(&p, &r, "\n\ndata: fine\n\n", 14);
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    assert_string_equal(r.log.data, "block id= dropped f=0 c=0\n"
                                    "block type=message data=fine id= f=1 c=0\n");
    mcp__sse_parser_free(&p);
    mcp__buf_free(&r.log);

    /* Many data lines each under the limit: their sum is bounded too. */
    r = (rec){0};
    mcp__sse_parser_init(&p, 1024, &rec_callbacks, &r);
    int errors = 0;
    for (int i = 0; i < 100000; i++) {
        int rc = mcp__sse_parser_feed(&p, "data: 0123456789\n", 17, NULL);
        errors += rc == MCP_ELIMIT;
        assert_true(rc == MCP_OK || rc == MCP_ELIMIT);
    }
    assert_int_equal(errors, 1);
    assert_true(p.data.cap <= 2048);
    mcp__sse_parser_free(&p);
    mcp__buf_free(&r.log);
}

/* ---- Callbacks ---- */

static void test_a_callback_can_stop_the_feed_and_the_rest_goes_on_later(void **state)
{
    (void)state;
    static const char s[] = "data: a\r\n\r\ndata: b\r\rdata: c\n\n";
    rec r = {.stop_after_block = 1};
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 0, &rec_callbacks, &r);
    size_t used, at = 0;
    assert_int_equal(mcp__sse_parser_feed(&p, s, sizeof(s) - 1, &used), MCP_ECANCELED);
    assert_int_equal(used, 11); /* just after the CRLF of the blank line */
    assert_int_equal(r.blocks, 1);
    at += used;
    assert_int_equal(mcp__sse_parser_feed(&p, s + at, sizeof(s) - 1 - at, &used), MCP_ECANCELED);
    assert_int_equal(at + used, 20); /* just after the CR of the blank line */
    at += used;
    assert_int_equal(mcp__sse_parser_feed(&p, s + at, sizeof(s) - 1 - at, &used), MCP_ECANCELED);
    at += used;
    assert_int_equal(at, sizeof(s) - 1);
    assert_int_equal(r.blocks, 3);
    assert_int_equal(mcp__buf_append(&r.log, "", 0), MCP_OK);
    assert_string_equal(r.log.data, "block type=message data=a id= f=1 c=0\n"
                                    "block type=message data=b id= f=1 c=0\n"
                                    "block type=message data=c id= f=1 c=0\n");
    mcp__sse_parser_free(&p);
    mcp__buf_free(&r.log);
}

static int free_parser(void *user, const mcp__sse_block *b)
{
    mcp__sse_parser *p = user;
    assert_string_equal(b->data, "a");
    mcp__sse_parser_free(p);
    free(p);
    return 1;
}

static void test_a_callback_that_stops_may_free_the_parser(void **state)
{
    (void)state;
    /* Under ASan, any touch of the parser after the callback fails the test. */
    mcp__sse_parser *p = malloc(sizeof(*p));
    assert_non_null(p);
    mcp__sse_callbacks cb = {.on_block = free_parser};
    mcp__sse_parser_init(p, 0, &cb, p);
    size_t used;
    assert_int_equal(mcp__sse_parser_feed(p, "data: a\n\ndata: b\n\n", 18, &used), MCP_ECANCELED);
    assert_int_equal(used, 9);
}

static void test_no_callbacks_at_all_is_allowed(void **state)
{
    (void)state;
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, 0, NULL, NULL);
    assert_int_equal(mcp__sse_parser_feed(&p, ": c\nretry: 1\nid: 1\ndata: a\n\n", 28, NULL),
                     MCP_OK);
    mcp__sse_parser_free(&p);
    mcp__sse_parser_free(NULL);
}

/* ---- The writer ---- */

static void test_sse_events_are_byte_exact(void **state)
{
    (void)state;
    mcp__buf b = {0};
    assert_int_equal(mcp__sse_event(&b, "message", "s1:7", -1, "{\"a\":1}", 7), MCP_OK);
    assert_string_equal(b.data, "event: message\nid: s1:7\ndata: {\"a\":1}\n\n");
    mcp__buf_reset(&b);
    /* A priming event: an id, retry, and an empty data line so parsers dispatch it. */
    assert_int_equal(mcp__sse_event(&b, NULL, "s1:0", 5000, NULL, 0), MCP_OK);
    assert_string_equal(b.data, "id: s1:0\nretry: 5000\ndata: \n\n");
    mcp__buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lf_crlf_cr_and_mixed_line_ends_are_the_same),
        cmocka_unit_test(
            test_cr_at_the_end_of_a_feed_and_lf_at_the_start_of_the_next_are_one_line_end),
        cmocka_unit_test(test_nothing_is_dispatched_without_a_blank_line_at_the_end),
        cmocka_unit_test(test_a_leading_byte_order_mark_is_skipped_once),
        cmocka_unit_test(test_reset_starts_a_new_stream),
        cmocka_unit_test(test_data_lines_are_joined_with_lf_and_the_last_lf_removed),
        cmocka_unit_test(test_one_space_after_the_colon_is_removed),
        cmocka_unit_test(test_a_line_without_colon_is_a_field_name_with_an_empty_value),
        cmocka_unit_test(test_unknown_fields_are_ignored),
        cmocka_unit_test(test_event_type_defaults_to_message_and_lasts_one_block),
        cmocka_unit_test(test_comments_are_reported_and_dispatch_nothing),
        cmocka_unit_test(test_last_event_id_persists_across_blocks),
        cmocka_unit_test(test_an_empty_id_resets_the_last_event_id),
        cmocka_unit_test(test_an_id_with_a_nul_is_ignored),
        cmocka_unit_test(test_an_id_only_block_tells_the_id_without_an_event),
        cmocka_unit_test(test_retry_takes_only_ascii_digits),
        cmocka_unit_test(test_a_huge_retry_is_capped),
        cmocka_unit_test(test_invalid_utf8_becomes_replacement_characters),
        cmocka_unit_test(test_a_block_over_the_limit_is_reported_once_and_dropped),
        cmocka_unit_test(test_an_endless_line_keeps_memory_bounded),
        cmocka_unit_test(test_a_callback_can_stop_the_feed_and_the_rest_goes_on_later),
        cmocka_unit_test(test_a_callback_that_stops_may_free_the_parser),
        cmocka_unit_test(test_no_callbacks_at_all_is_allowed),
        cmocka_unit_test(test_sse_events_are_byte_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
