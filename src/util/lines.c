/* SPDX-License-Identifier: MIT */
/*
 * Newline-delimited framing, as used by the stdio transport: each JSON-RPC message is
 * one line, and a peer may send a line of any length.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Used when mcp__lines_init is given max 0, so that no caller gets an unbounded buffer
 * by accident. */
#define LINES_DEFAULT_MAX ((size_t)4 * 1024 * 1024)

void mcp__lines_init(mcp__lines *ls, size_t max)
{
    memset(ls, 0, sizeof *ls);
    /* Room is needed for max bytes, a held '\r' and the NUL; keep that from wrapping. */
    if (max == 0 || max > SIZE_MAX - 2)
        max = max == 0 ? LINES_DEFAULT_MAX : SIZE_MAX - 2;
    ls->max = max;
}

/*
 * Grows the buffer to hold `need` bytes, never past max + 2 (a line of max bytes, a
 * '\r' that may turn out to precede the newline, and the NUL), so that memory stays
 * bounded by the limit rather than by the next power of two above it.
 */
static int grow(mcp__lines *ls, size_t need)
{
    mcp__buf *b = &ls->buf;
    if (need <= b->cap)
        return MCP_OK;
    size_t limit = ls->max + 2;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need && cap < limit)
        cap = cap > limit / 2 ? limit : cap * 2;
    if (cap > limit)
        cap = limit;
    char *p = realloc(b->data, cap);
    if (!p)
        return MCP_ENOMEM;
    b->data = p;
    b->cap = cap;
    return MCP_OK;
}

/* Starts discarding the current line after telling the owner once. */
static void overflow(mcp__lines *ls, size_t seen, int ended, mcp__overflow_fn on_overflow,
                     void *user)
{
    mcp__buf_reset(&ls->buf);
    ls->discarding = !ended;
    ls->discarded = ended ? 0 : seen;
    if (on_overflow)
        on_overflow(user, seen);
}

int mcp__lines_feed(mcp__lines *ls, const char *data, size_t len, mcp__line_fn on_line,
                    mcp__overflow_fn on_overflow, void *user)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t seg = nl ? (size_t)(nl - data) : len;
        size_t step = nl ? seg + 1 : seg;

        if (ls->discarding) {
            ls->discarded += seg;
            mcp__rpc_scan_feed(&ls->scan, data, seg);
            if (nl) {
                size_t seen = ls->discarded;
                ls->discarding = 0;
                ls->discarded = 0;
                if (ls->on_dropped != NULL)
                    ls->on_dropped(user, seen);
            }
            data += step;
            len -= step;
            continue;
        }

        size_t held = ls->buf.len;
        size_t total = held + seg; /* bytes of this line so far, '\r' included */
        int too_long;
        if (total < held) {
            too_long = 1; /* wrapped */
        } else if (nl) {
            /* The line is complete: a final '\r' is not part of it. */
            char lastc = seg ? data[seg - 1] : (held ? ls->buf.data[held - 1] : '\0');
            size_t content = (total > 0 && lastc == '\r') ? total - 1 : total;
            too_long = content > ls->max;
        } else {
            /* Still open: one byte over the limit is allowed only when it is a '\r'
             * that the next byte may show to be part of a CRLF. */
            too_long = total > ls->max + 1 || (total == ls->max + 1 && data[seg - 1] != '\r');
        }
        if (too_long) {
            memset(&ls->scan, 0, sizeof(ls->scan));
            mcp__rpc_scan_feed(&ls->scan, ls->buf.data, held);
            mcp__rpc_scan_feed(&ls->scan, data, seg);
            overflow(ls, total, nl != NULL, on_overflow, user);
            if (nl != NULL && ls->on_dropped != NULL)
                ls->on_dropped(user, total);
            data += step;
            len -= step;
            continue;
        }

        if (seg > 0) {
            int rc = grow(ls, total + 1);
            if (rc != MCP_OK)
                return rc;
            memcpy(ls->buf.data + held, data, seg);
            ls->buf.len = total;
            ls->buf.data[total] = '\0';
        }
        data += step;
        len -= step;

        if (nl) {
            size_t n = ls->buf.len;
            if (n > 0 && ls->buf.data[n - 1] == '\r')
                ls->buf.data[--n] = '\0';
            if (n > 0 && on_line)
                on_line(user, ls->buf.data, n);
            mcp__buf_reset(&ls->buf);
        }
    }
    return MCP_OK;
}

size_t mcp__lines_pending(const mcp__lines *ls)
{
    return ls->buf.len;
}

void mcp__lines_free(mcp__lines *ls)
{
    mcp__buf_free(&ls->buf);
    ls->discarding = 0;
    ls->discarded = 0;
}

/* ---- What an oversized message was ---- */

enum { KEY_OTHER, KEY_ID, KEY_METHOD, KEY_ANSWER };

static void key_done(mcp__rpc_scan *s)
{
    static const struct {
        const char *name;
        int kind;
    } keys[] = {
        {"id", KEY_ID}, {"method", KEY_METHOD}, {"result", KEY_ANSWER}, {"error", KEY_ANSWER}};
    s->last_key = KEY_OTHER;
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys) && !s->key_over; i++)
        if (s->key_len == strlen(keys[i].name) && memcmp(s->key, keys[i].name, s->key_len) == 0)
            s->last_key = keys[i].kind;
    s->method |= s->last_key == KEY_METHOD;
    s->answer |= s->last_key == KEY_ANSWER;
}

/* The value of "id" ends at ch (or goes on): a run of digits alone is the id. */
static void id_byte(mcp__rpc_scan *s, char ch)
{
    if (ch >= '0' && ch <= '9' && s->id_digits >= 0) {
        if (s->id_digits++ >= 18)
            s->id_digits = -1; /* past what the gateway's ids reach */
        else
            s->id_num = s->id_num * 10 + (ch - '0');
    } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
        if (s->id_digits > 0) {
            s->id = s->id_num;
            s->in_id = 0;
        }
    } else if ((ch == ',' || ch == '}') && s->id_digits > 0) {
        s->id = s->id_num;
        s->in_id = 0;
    } else {
        s->id_digits = -1; /* a string, a negative or fractional number: not ours */
        s->in_id = 0;
    }
}

void mcp__rpc_scan_feed(mcp__rpc_scan *s, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (s->in_str) {
            if (s->esc)
                s->esc = 0;
            else if (ch == '\\')
                s->esc = 1;
            else if (ch == '"') {
                s->in_str = 0;
                if (s->expect_key && s->depth == 1)
                    key_done(s);
                continue;
            }
            if (s->expect_key && s->depth == 1) {
                if (s->key_len < sizeof(s->key))
                    s->key[s->key_len++] = ch;
                else
                    s->key_over = 1;
            }
            continue;
        }
        if (s->in_id) {
            id_byte(s, ch);
            if (s->in_id || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
                continue;
        }
        switch (ch) {
        case '"':
            s->in_str = 1;
            s->key_len = 0;
            s->key_over = 0;
            break;
        case '{':
        case '[':
            s->depth++;
            s->expect_key = s->depth == 1 && ch == '{';
            break;
        case '}':
        case ']':
            s->depth--;
            break;
        case ',':
            s->expect_key = s->depth == 1;
            break;
        case ':':
            if (s->depth == 1 && s->expect_key) {
                s->expect_key = 0;
                if (s->last_key == KEY_ID) {
                    s->in_id = 1;
                    s->id_digits = 0;
                    s->id_num = 0;
                }
            }
            break;
        default:
            break;
        }
    }
}

long long mcp__rpc_scan_response_id(const mcp__rpc_scan *s, int *response)
{
    *response = s->answer && !s->method;
    return *response ? s->id : 0;
}
