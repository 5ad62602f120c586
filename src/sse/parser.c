/* SPDX-License-Identifier: MIT */
/*
 * The text/event-stream parser; see sse.h. Section references are to the HTML
 * standard's "Server-sent events", 9.2.5 and 9.2.6 ("Parsing an event stream",
 * "Interpreting an event stream").
 */
#include <string.h>

#include "sse.h"

/* The UTF-8 byte order mark, skipped once at the start of a stream. */
static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
#define BOM_DONE 3
/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
static const char replacement[3] = {'\xEF', '\xBF', '\xBD'};

/* ---- UTF-8 decoding (the Encoding standard's UTF-8 decoder) ---- */

/*
 * The length (1 to 4) of the valid UTF-8 sequence at s[0..n), or 0 when s
 * starts an invalid one; *bad then gets the length of its maximal subpart: the
 * lead byte and the continuation bytes that were right so far, which the
 * decoder replaces with one U+FFFD before it looks at the next byte again.
 * The ranges are the decoder's: no overlong forms, no surrogates, nothing
 * past U+10FFFF.
 */
static size_t utf8_sequence(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned char b = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF) {
        need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 2;
        lo = b == 0xE0 ? 0xA0 : 0x80;
        hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3;
        lo = b == 0xF0 ? 0x90 : 0x80;
        hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

/* The length of the longest valid UTF-8 prefix of s[0..n). */
static size_t utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, bad;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_sequence(u + i, n - i, &bad);
        if (k == 0)
            break;
        i += k;
    }
    return i;
}

/*
 * Appends s[0..n) to b decoded: valid UTF-8 as it is, each maximal subpart of
 * an invalid sequence as U+FFFD. Decoding a line (or a part of one that ends
 * at a ':' or a space) on its own gives what decoding the whole stream first
 * would: CR, LF, ':' and ' ' are never inside a sequence, so an unfinished
 * sequence before them is replaced either way. MCP_OK or MCP_ENOMEM.
 */
static int utf8_append(mcp__buf *b, const char *s, size_t n)
{
    for (;;) {
        size_t ok = utf8_valid_prefix(s, n);
        /* A zero-length append still NUL-terminates b. */
        if (mcp__buf_append(b, s, ok) != MCP_OK)
            return MCP_ENOMEM;
        if (ok == n)
            return MCP_OK;
        size_t bad = 1; /* utf8_sequence sets it; at least one byte is replaced */
        (void)utf8_sequence((const unsigned char *)s + ok, n - ok, &bad);
        if (mcp__buf_append(b, replacement, sizeof(replacement)) != MCP_OK)
            return MCP_ENOMEM;
        s += ok + bad;
        n -= ok + bad;
    }
}

/* ---- Blocks ---- */

/* Starts dropping the current block (err says why: MCP_ELIMIT or MCP_ENOMEM):
 * its data and type go, and the rest of it, up to its blank line, is skipped. */
static int drop(mcp__sse_parser *p, int err)
{
    p->discarding = 1;
    p->partial = 0;
    p->dropped = 1;
    p->line.len = 0;
    p->data.len = 0;
    p->type.len = 0;
    return err;
}

/*
 * A blank line: "dispatch the event" (9.2.6). The last event id buffer is not
 * reset, so it persists into later blocks; the data and event type buffers
 * are. The buffers' lengths are reset before on_block runs, but not their
 * bytes, which the block points to: nothing writes them until the callback has
 * returned, and a callback that returns non-zero may free the parser.
 */
static int end_block(mcp__sse_parser *p)
{
    if (p->fields == 0 && p->comments == 0 && !p->dropped)
        return MCP_OK; /* a blank line after a blank line: nothing to tell */
    mcp__sse_block b = {0};
    if (p->data.len > 0) {
        /* The data buffer ends with the LF of its last data line: remove it. */
        b.data_len = p->data.len - 1;
        p->data.data[b.data_len] = '\0';
        b.data = p->data.data;
        b.type = p->type.len > 0 ? p->type.data : "message";
        b.type_len = p->type.len > 0 ? p->type.len : strlen("message");
    }
    b.last_event_id = p->id.len > 0 ? p->id.data : "";
    b.last_event_id_len = p->id.len;
    b.id_set = p->id_set;
    b.dropped = p->dropped;
    b.fields = p->fields;
    b.comments = p->comments;

    p->data.len = 0;
    p->type.len = 0;
    p->fields = p->comments = 0;
    p->id_set = p->dropped = p->discarding = 0;
    if (p->cb.on_block != NULL && p->cb.on_block(p->user, &b) != 0)
        return MCP_ECANCELED;
    return MCP_OK;
}

/* Decodes s[0..n) into p->scratch, NUL-terminated. MCP_OK or MCP_ENOMEM. */
static int decode_scratch(mcp__sse_parser *p, const char *s, size_t n)
{
    p->scratch.len = 0;
    return utf8_append(&p->scratch, s, n);
}

/* Makes the decoded scratch the new content of *dst (no copy, nothing to fail). */
static void take_scratch(mcp__sse_parser *p, mcp__buf *dst)
{
    mcp__buf t = *dst;
    *dst = p->scratch;
    p->scratch = t;
}

/* "retry": only ASCII digits, at least one; the value saturates at the cap. */
static int retry_field(mcp__sse_parser *p, const char *v, size_t n)
{
    uint64_t ms = 0;
    if (n == 0)
        return MCP_OK;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return MCP_OK; /* not a number: the field is ignored */
        unsigned d = (unsigned)(v[i] - '0');
        ms = ms > (MCP__SSE_RETRY_MAX - d) / 10 ? MCP__SSE_RETRY_MAX : ms * 10 + d;
    }
    if (p->cb.on_retry != NULL && p->cb.on_retry(p->user, ms) != 0)
        return MCP_ECANCELED;
    return MCP_OK;
}

/* "Process the field" (9.2.6) for a line that is not blank and not a comment. */
static int field(mcp__sse_parser *p, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon != NULL ? (size_t)(colon - s) : n;
    const char *v = colon != NULL ? colon + 1 : s + n;
    size_t vlen = (size_t)(s + n - v);
    if (vlen > 0 && v[0] == ' ') {
        v++;
        vlen--;
    }
    p->fields++;
    if (name_len == 4 && memcmp(s, "data", 4) == 0) {
        /* Decoding never makes text shorter, so the raw length may refuse early. */
        if (vlen + 1 > p->max_event - p->data.len)
            return drop(p, MCP_ELIMIT);
        if (utf8_append(&p->data, v, vlen) != MCP_OK ||
            mcp__buf_append(&p->data, "\n", 1) != MCP_OK)
            return drop(p, MCP_ENOMEM);
        if (p->data.len > p->max_event)
            return drop(p, MCP_ELIMIT);
    } else if (name_len == 5 && memcmp(s, "event", 5) == 0) {
        if (decode_scratch(p, v, vlen) != MCP_OK)
            return drop(p, MCP_ENOMEM);
        take_scratch(p, &p->type);
    } else if (name_len == 2 && memcmp(s, "id", 2) == 0) {
        /* An id with a NUL is ignored (a NUL byte is always the character). */
        if (memchr(v, '\0', vlen) != NULL)
            return MCP_OK;
        if (decode_scratch(p, v, vlen) != MCP_OK)
            return drop(p, MCP_ENOMEM);
        take_scratch(p, &p->id);
        p->id_set = 1;
    } else if (name_len == 5 && memcmp(s, "retry", 5) == 0) {
        return retry_field(p, v, vlen);
    }
    return MCP_OK; /* any other field is ignored */
}

/* One whole line, without its line end, outside a dropped block. */
static int line(mcp__sse_parser *p, const char *s, size_t n)
{
    if (n == 0)
        return end_block(p);
    /* The line of a feed that ended inside it was checked as it grew. */
    if (n > p->max_event - p->data.len)
        return drop(p, MCP_ELIMIT);
    if (s[0] != ':')
        return field(p, s, n);
    p->comments++;
    if (p->cb.on_comment == NULL)
        return MCP_OK;
    if (decode_scratch(p, s + 1, n - 1) != MCP_OK)
        return drop(p, MCP_ENOMEM);
    if (p->cb.on_comment(p->user, p->scratch.data, p->scratch.len) != 0)
        return MCP_ECANCELED;
    return MCP_OK;
}

/* Keeps n more bytes of a line whose end has not come yet (skips them in a
 * dropped block). */
static int line_add(mcp__sse_parser *p, const char *s, size_t n)
{
    int rc = MCP_OK;
    if (p->discarding) {
        p->partial |= n > 0;
        return MCP_OK;
    }
    if (n > p->max_event - p->data.len - p->line.len)
        rc = MCP_ELIMIT;
    else if (mcp__buf_append(&p->line, s, n) != MCP_OK)
        rc = MCP_ENOMEM;
    if (rc != MCP_OK) {
        drop(p, rc);
        p->partial = 1;
    }
    return rc;
}

/* ---- The parser ---- */

void mcp__sse_parser_init(mcp__sse_parser *p, size_t max_event, const mcp__sse_callbacks *cb,
                          void *user)
{
    memset(p, 0, sizeof(*p));
    p->max_event = max_event > 0 ? max_event : MCP__SSE_DEFAULT_MAX_EVENT;
    if (cb != NULL)
        p->cb = *cb;
    p->user = user;
}

int mcp__sse_parser_feed(mcp__sse_parser *p, const char *data, size_t len, size_t *used)
{
    size_t pos = 0;
    int rc = MCP_OK;
    while (pos < len && rc == MCP_OK) {
        if (p->bom < BOM_DONE) {
            /* 9.2.5: one leading BOM is skipped. Bytes that began like one but
             * were not are the start of the first line. */
            if (data[pos] == bom[p->bom]) {
                p->bom++;
                pos++;
                continue;
            }
            unsigned seen = p->bom;
            p->bom = BOM_DONE;
            if (seen > 0)
                rc = line_add(p, bom, seen);
            continue;
        }
        if (p->after_cr) {
            p->after_cr = 0;
            if (data[pos] == '\n') { /* the LF of a CRLF split across feeds */
                pos++;
                continue;
            }
        }
        size_t e = pos;
        while (e < len && data[e] != '\n' && data[e] != '\r')
            e++;
        if (e == len) { /* the line goes on in a later feed */
            rc = line_add(p, data + pos, len - pos);
            pos = len;
            break;
        }
        size_t end = e + 1;
        if (data[e] == '\r') {
            if (end == len)
                p->after_cr = 1;
            else if (data[end] == '\n')
                end++;
        }
        const char *s = data + pos;
        size_t n = e - pos;
        pos = end;
        if (p->discarding) {
            /* A dropped block: only its blank line matters. */
            int blank = n == 0 && !p->partial;
            p->partial = 0;
            if (blank)
                rc = end_block(p);
            continue;
        }
        if (p->line.len > 0) {
            rc = line_add(p, s, n);
            if (rc != MCP_OK) {
                p->partial = 0; /* that line has ended */
                break;
            }
            s = p->line.data;
            n = p->line.len;
            p->line.len = 0; /* its bytes stay put until the next line_add */
        }
        rc = line(p, s, n);
    }
    if (used != NULL)
        *used = pos;
    return rc;
}

void mcp__sse_parser_reset(mcp__sse_parser *p)
{
    mcp__sse_callbacks cb = p->cb;
    void *user = p->user;
    size_t max_event = p->max_event;
    mcp__sse_parser_free(p);
    mcp__sse_parser_init(p, max_event, &cb, user);
}

void mcp__sse_parser_free(mcp__sse_parser *p)
{
    if (p == NULL)
        return;
    mcp__buf_free(&p->line);
    mcp__buf_free(&p->data);
    mcp__buf_free(&p->type);
    mcp__buf_free(&p->id);
    mcp__buf_free(&p->scratch);
    memset(p, 0, sizeof(*p));
}
