/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the text/event-stream parser (src/sse/parser.c). The
 * input is two bytes that choose a split point (little-endian, modulo the
 * stream's length plus one), one byte that chooses max_event (0: 64 bytes,
 * n: n * 16 bytes), then the stream itself.
 *
 * The stream is parsed four ways: in one piece; cut at the chosen point; one
 * byte at a time; and in one piece with every block stopping the feed (the
 * rest fed again from where it stopped). Each way records every callback and
 * every error in order, and the records must be equal: the parser's output
 * may not depend on how the bytes arrive.
 *
 * Other oracles: the sanitizers; every string handed out is valid UTF-8 and
 * NUL-terminated at its length, an id holds no NUL, a block without data has
 * no type, a retry is at most MCP__SSE_RETRY_MAX, a feed returns only
 * MCP_OK, MCP_ECANCELED (when a callback asked) or MCP_ELIMIT, and the data
 * buffer plus the unfinished line never pass max_event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse/sse.h"

#define SSE_MAX_INPUT 4096

typedef struct record {
    mcp__buf log;
    int stop;
} record;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_sse: %s\n", what);
        abort();
    }
}

/* 1 when s[0..n) is valid UTF-8 (RFC 3629: shortest forms, no surrogates,
 * nothing past U+10FFFF). Written apart from the parser's decoder on purpose. */
static int valid_utf8(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k;
        if (u[i] < 0x80) {
            i++;
            continue;
        } else if ((u[i] & 0xE0) == 0xC0) {
            cp = u[i] & 0x1F;
            k = 2;
        } else if ((u[i] & 0xF0) == 0xE0) {
            cp = u[i] & 0x0F;
            k = 3;
        } else if ((u[i] & 0xF8) == 0xF0) {
            cp = u[i] & 0x07;
            k = 4;
        } else {
            return 0;
        }
        if (n - i < k)
            return 0;
        for (size_t j = 1; j < k; j++) {
            if ((u[i + j] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (u[i + j] & 0x3F);
        }
        static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k;
    }
    return 1;
}

static void text(record *r, char tag, const char *s, size_t n)
{
    check(s != NULL && s[n] == '\0', "a string is not NUL-terminated at its length");
    check(valid_utf8(s, n), "a string is not valid UTF-8");
    check(mcp__buf_append(&r->log, &tag, 1) == MCP_OK, "ENOMEM");
    check(mcp__buf_append(&r->log, &n, sizeof(n)) == MCP_OK, "ENOMEM");
    check(mcp__buf_append(&r->log, s, n) == MCP_OK, "ENOMEM");
}

static int on_block(void *user, const mcp__sse_block *b)
{
    record *r = user;
    if (b->data != NULL) {
        text(r, 'd', b->data, b->data_len);
        text(r, 't', b->type, b->type_len);
        check(b->type_len > 0 && !b->dropped, "an event without a type, or a dropped one");
    } else {
        check(b->type == NULL && b->data_len == 0, "a type without data");
    }
    text(r, 'i', b->last_event_id, b->last_event_id_len);
    check(strlen(b->last_event_id) == b->last_event_id_len, "an id with a NUL");
    size_t flags[4] = {(size_t)b->id_set, (size_t)b->dropped, b->fields, b->comments};
    check(b->fields + b->comments > 0 || b->dropped, "an empty block");
    check(mcp__buf_append(&r->log, flags, sizeof(flags)) == MCP_OK, "ENOMEM");
    return r->stop;
}

static int on_retry(void *user, uint64_t ms)
{
    record *r = user;
    check(ms <= MCP__SSE_RETRY_MAX, "a retry over the cap");
    check(mcp__buf_append(&r->log, "r", 1) == MCP_OK, "ENOMEM");
    check(mcp__buf_append(&r->log, &ms, sizeof(ms)) == MCP_OK, "ENOMEM");
    return 0;
}

static int on_comment(void *user, const char *s, size_t n)
{
    text(user, 'c', s, n);
    return 0;
}

static const mcp__sse_callbacks callbacks = {
    .on_block = on_block, .on_retry = on_retry, .on_comment = on_comment};

/* Parses s[0..n) into r: cut at cut, or in pieces of step bytes when step is
 * not 0, each piece fed again from where a stop or an error left it. */
static void parse(record *r, size_t max, const char *s, size_t n, size_t cut, size_t step)
{
    mcp__sse_parser p;
    mcp__sse_parser_init(&p, max, &callbacks, r);
    size_t at = 0;
    while (at < n) {
        size_t end = step > 0 ? (n - at < step ? n : at + step) : (at < cut ? cut : n);
        while (at < end) {
            size_t used = 0;
            int rc = mcp__sse_parser_feed(&p, s + at, end - at, &used);
            check(used <= end - at, "used past the input");
            if (rc == MCP_ELIMIT)
                check(mcp__buf_append(&r->log, "E", 1) == MCP_OK, "ENOMEM");
            else if (rc == MCP_ECANCELED)
                check(r->stop, "MCP_ECANCELED without a stop");
            else
                check(rc == MCP_OK && used == end - at, "an unexpected result");
            check(p.data.len + p.line.len <= p.max_event, "the event passed max_event");
            at += used;
        }
    }
    mcp__sse_parser_free(&p);
}

static int same(const record *a, const record *b)
{
    return a->log.len == b->log.len &&
           (a->log.len == 0 || memcmp(a->log.data, b->log.data, a->log.len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > SSE_MAX_INPUT)
        return 0;
    const char *s = (const char *)data + 3;
    size_t n = size - 3;
    size_t cut = ((size_t)data[0] | (size_t)data[1] << 8) % (n + 1);
    size_t max = data[2] == 0 ? 64 : (size_t)data[2] * 16;

    record whole = {0}, split = {0}, bytes = {0}, stops = {.stop = 1};
    parse(&whole, max, s, n, 0, 0);
    parse(&split, max, s, n, cut, 0);
    parse(&bytes, max, s, n, 0, 1);
    parse(&stops, max, s, n, 0, 0);
    check(same(&split, &whole), "cut at one point, the stream gave other events");
    check(same(&bytes, &whole), "one byte at a time, the stream gave other events");
    check(same(&stops, &whole), "stopped after each block, the stream gave other events");
    mcp__buf_free(&whole.log);
    mcp__buf_free(&split.log);
    mcp__buf_free(&bytes.log);
    mcp__buf_free(&stops.log);
    return 0;
}
