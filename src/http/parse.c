/* SPDX-License-Identifier: MIT */
/*
 * Parsing requests: llhttp's callbacks, which collect the request line, the
 * header fields and the body into the connection's request and enforce the
 * limits on them (431, 414, 413) and the rules a request must follow (one
 * Host, a Transfer-Encoding we can read, no obsolete line folding). See conn.c
 * for how parsed requests are handed over.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http_int.h"

/* ---- Parser callbacks ---- */

static int too_big(mcp__http_conn *c, size_t add, int status)
{
    c->header_bytes += add;
    if (c->header_bytes > c->srv->opts.max_header_bytes) {
        c->err_status = status;
        return 1;
    }
    return 0;
}

static int on_message_begin(llhttp_t *p)
{
    mcp__http_conn *c = p->data;
    c->header_bytes = 0;
    c->err_status = 0;
    c->msg_done = 0;
    c->in_value = 0;
    if (c->req) {
        /* Never happens: parsing stops while a request is with its owner. */
        c->err_status = 500;
        return HPE_USER;
    }
    mcp__http_req *req = calloc(1, sizeof *req);
    if (!req) {
        c->err_status = 503;
        return HPE_USER;
    }
    req->conn = c;
    req->state = REQ_RECEIVING;
    req->hdrs = c->spare_hdrs; /* the last request's buffer, or none */
    c->spare_hdrs = (mcp__buf){0};
    c->req = req;
    /* The first request's deadline runs from accept: a client that connects
     * and waits does not earn a fresh one with its first byte. */
    if (c->phase != PHASE_FIRST)
        mcp__http_conn_timer_set(c, c->srv->opts.header_timeout_ms);
    c->phase = PHASE_HEADERS;
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    mcp__http_conn *c = p->data;
    if (too_big(c, len, 414))
        return HPE_USER;
    if (mcp__buf_append(&c->req->target, at, len) != MCP_OK) {
        c->err_status = 503;
        return HPE_USER;
    }
    return 0;
}

/* Header fields are stored as "name\0value\0" in req->hdrs; c->in_value says
 * where the current one is: 0 none, 1 in its name, 2 name done, 3 in its
 * value, its last piece cut by the end of the input, 4 in its value, its last
 * piece ended by its line (see "obs-fold" below for those and 5 and 6). */
static int header_push(mcp__http_conn *c)
{
    mcp__http_req *req = c->req;
    size_t value = c->cur_name + strlen(req->hdrs.data + c->cur_name) + 1;
    /* llhttp drops leading whitespace; trailing whitespace is ours to drop. */
    while (req->hdrs.len > value &&
           (req->hdrs.data[req->hdrs.len - 1] == ' ' || req->hdrs.data[req->hdrs.len - 1] == '\t'))
        req->hdrs.len--;
    if (mcp__buf_append(&req->hdrs, "", 1) != MCP_OK)
        return -1;
    if (req->nhdr == req->caphdr) {
        size_t cap = req->caphdr ? req->caphdr * 2 : 16;
        mcp__http_hdr *h = realloc(req->hdr, cap * sizeof *h);
        if (!h)
            return -1;
        req->hdr = h;
        req->caphdr = cap;
    }
    req->hdr[req->nhdr].name = c->cur_name;
    req->hdr[req->nhdr].value = value;
    req->nhdr++;
    c->in_value = 0;
    return 0;
}

static int name_end(mcp__http_conn *c)
{
    if (mcp__buf_append(&c->req->hdrs, "", 1) != MCP_OK)
        return -1;
    c->in_value = 2;
    return 0;
}

/* RFC 9110 §5.6.2 token characters. */
static int is_tchar(char ch)
{
    if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
        return 1;
    return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/*
 * obs-fold (RFC 9112 §5.2), a header line that begins with a space or a tab
 * and continues the previous one, is refused with 400: a proxy in front of us
 * that unfolds a Transfer-Encoding or Content-Length differently, or not at
 * all, would read other requests than ours (smuggling). The llhttp 8 we compile
 * in accepts it two ways, whatever its lenient flags:
 *
 * - After a value ("Transfer-Encoding: gzip,\r\n chunked"), as one more piece
 *   of the value. llhttp hands over a piece cut by the end of the input from
 *   llhttp_execute with the span still open (_span_pos0 set), and a piece
 *   ended by its line after closing it: a piece after one that ended its line
 *   (c->in_value 4) is a fold.
 * - After an empty first line ("Transfer-Encoding:\r\n chunked"), as blanks
 *   before the value, skipped without any callback, even when the reads end
 *   in the middle. So from the colon to the value we keep a span of our own
 *   open: llhttp restarts an open span at the start of every input and reports
 *   it at the end (llparse's spans), which shows us the bytes between colon and
 *   value in every input but the value's; starting the value's span ends ours.
 *   c->in_value is then 2 while they are all in the colon's input, 6 when some
 *   were in an earlier input, all blanks, and 5 when those held a line end.
 */
static int gap_span(llhttp_t *p, const char *start, const char *end)
{
    mcp__http_conn *c = p->data;
    if (c->in_value == 2)
        c->in_value = 6;
    for (const char *q = start; q < end; q++) {
        if (*q == '\r' || *q == '\n') {
            c->in_value = 5;
        } else if (c->in_value == 5) {
            /* Blanks after the end of the line: a fold (or a bare CR). */
            c->err_status = 400;
            return HPE_USER;
        }
    }
    return 0;
}

/* The colon at `colon` ended a header name: opens the span between it and the value. */
static void gap_open(llhttp_t *p, const char *colon)
{
    p->_span_pos0 = (void *)(uintptr_t)(colon + 1);
    p->_span_cb0 = (void *)gap_span;
}

/*
 * The bytes llhttp is parsing, of which at is one: a read, which on_alloc puts
 * at the start of srv->rbuf, or c->in, which conn_feed parses from its start.
 * at itself when it is in neither.
 */
static const char *input_start(const mcp__http_conn *c, const char *at)
{
    uintptr_t a = (uintptr_t)at, r = (uintptr_t)c->srv->rbuf, i = (uintptr_t)c->in.data;
    if (a >= r && a < r + sizeof c->srv->rbuf)
        return c->srv->rbuf;
    if (c->in.data != NULL && a >= i && a < i + c->in.len)
        return c->in.data;
    return at;
}

/*
 * True when the first piece of a value (at, len) follows a fold llhttp took
 * for blanks. Between the colon and a value there may be only blanks; before
 * an empty value, which llhttp places past the end of its line, blanks and
 * that end. The part in the value's own input lies before at.
 */
static int folded_before(const mcp__http_conn *c, const char *at, size_t len, int line_ended)
{
    int empty = len == 0 && line_ended;
    if (c->in_value == 2) {
        /* The colon is in this input too, so everything back to it is readable. */
        const char *q = at;
        if (empty && q[-1] == '\n')
            q--;
        if (empty && q[-1] == '\r')
            q--;
        while (q[-1] == ' ' || q[-1] == '\t')
            q--;
        return q[-1] != ':';
    }
    const char *start = input_start(c, at), *q = at;
    if (empty && q > start && q[-1] == '\n')
        q--;
    if (empty && q > start && q[-1] == '\r')
        q--;
    const char *line_end = q;
    while (q > start && (q[-1] == ' ' || q[-1] == '\t'))
        q--;
    if (q > start)
        return 1; /* a line end after the colon's input, with blanks or a value after it */
    /* All blanks since the colon; or its line ended, which is no fold only for an
     * empty value whose own end of line that was. */
    return c->in_value == 5 && (!empty || line_end != start);
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    mcp__http_conn *c = p->data;
    mcp__http_req *req = c->req;
    if (too_big(c, len + 4, 431))
        return HPE_USER;
    /* Trailer fields of a chunked body are counted but not kept: nothing in
     * MCP uses them, and they must not pass for header fields. */
    if (c->phase == PHASE_BODY)
        return 0;
    if (c->in_value >= 2 && header_push(c) != 0)
        goto nomem;
    if (c->in_value == 0) {
        c->cur_name = req->hdrs.len;
        c->in_value = 1;
    }
    if (mcp__buf_reserve(&req->hdrs, len) != MCP_OK)
        goto nomem;
    for (size_t i = 0; i < len; i++) {
        char ch = at[i];
        /* llhttp's lenient build lets spaces into names ("Bad Header: x");
         * RFC 9112 §5.1 says to refuse them, or a proxy in front of us may read
         * the request differently (smuggling). */
        if (!is_tchar(ch)) {
            c->err_status = 400;
            return HPE_USER;
        }
        req->hdrs.data[req->hdrs.len++] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    req->hdrs.data[req->hdrs.len] = '\0';
    /* The last piece of a name ends at its colon (a closed span, as above). */
    if (p->_span_pos0 == NULL)
        gap_open(p, at + len);
    return 0;
nomem:
    c->err_status = 503;
    return HPE_USER;
}

static int on_header_field_complete(llhttp_t *p)
{
    mcp__http_conn *c = p->data;
    if (c->phase == PHASE_BODY)
        return 0;
    if (c->in_value == 1 && name_end(c) != 0) {
        c->err_status = 503;
        return HPE_USER;
    }
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    mcp__http_conn *c = p->data;
    if (too_big(c, len, 431))
        return HPE_USER;
    if (c->phase == PHASE_BODY)
        return 0;
    if (c->in_value == 1 && name_end(c) != 0)
        goto nomem;
    int line_ended = p->_span_pos0 == NULL; /* see "obs-fold" above */
    if (c->in_value == 4 || (c->in_value != 3 && folded_before(c, at, len, line_ended))) {
        c->err_status = 400;
        return HPE_USER;
    }
    c->in_value = line_ended ? 4 : 3;
    if (mcp__buf_append(&c->req->hdrs, at, len) != MCP_OK)
        goto nomem;
    return 0;
nomem:
    c->err_status = 503;
    return HPE_USER;
}

static int on_header_value_complete(llhttp_t *p)
{
    mcp__http_conn *c = p->data;
    if (c->phase == PHASE_BODY)
        return 0;
    if (c->in_value == 1 && name_end(c) != 0)
        goto nomem;
    if (c->in_value >= 2 && header_push(c) != 0)
        goto nomem;
    return 0;
nomem:
    c->err_status = 503;
    return HPE_USER;
}

static mcp__http_method method_of(uint8_t m)
{
    switch (m) {
    case HTTP_GET:
        return MCP__HTTP_GET;
    case HTTP_POST:
        return MCP__HTTP_POST;
    case HTTP_DELETE:
        return MCP__HTTP_DELETE;
    case HTTP_OPTIONS:
        return MCP__HTTP_OPTIONS;
    case HTTP_HEAD:
        return MCP__HTTP_HEAD;
    case HTTP_PUT:
        return MCP__HTTP_PUT;
    case HTTP_PATCH:
        return MCP__HTTP_PATCH;
    default:
        return MCP__HTTP_OTHER;
    }
}

/* Splits the request target into path and query, in place. */
static int split_target(mcp__http_req *req)
{
    if (!req->target.data && mcp__buf_append(&req->target, "", 0) != MCP_OK)
        return -1;
    char *t = req->target.data;
    /* Absolute form (RFC 9112 §3.2.2): keep the path of it. */
    if (strncasecmp(t, "http://", 7) == 0 || strncasecmp(t, "https://", 8) == 0) {
        char *auth = strstr(t, "//") + 2;
        size_t n = strcspn(auth, "/?");
        if (auth[n] == '/') {
            t = auth + n;
        } else {
            /* No path: it is "/", and the query (if any) follows. */
            mcp__buf nb = {0};
            if (mcp__buf_appends(&nb, "/") != MCP_OK || mcp__buf_appends(&nb, auth + n) != MCP_OK) {
                mcp__buf_free(&nb);
                return -1;
            }
            mcp__buf_free(&req->target);
            req->target = nb;
            t = nb.data;
        }
    }
    char *q = strchr(t, '?');
    if (q) {
        *q = '\0';
        req->query = q + 1;
    }
    req->path = t;
    return 0;
}

static size_t header_count_of(const mcp__http_req *req, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < req->nhdr; i++)
        if (strcmp(req->hdrs.data + req->hdr[i].name, name) == 0)
            n++;
    return n;
}

static int on_headers_complete(llhttp_t *p)
{
    mcp__http_conn *c = p->data;
    mcp__http_req *req = c->req;
    const mcp__http_opts *o = &c->srv->opts;

    if (c->in_value >= 1 && ((c->in_value == 1 && name_end(c) != 0) || header_push(c) != 0)) {
        c->err_status = 503;
        return HPE_USER;
    }
    if (p->http_major != 1) {
        c->err_status = 505;
        return HPE_USER;
    }
    req->version = 10 + (p->http_minor >= 1);
    req->method = method_of(p->method);
    req->method_name = llhttp_method_name((llhttp_method_t)p->method);
    req->keep_alive = llhttp_should_keep_alive(p);
    if (split_target(req) != 0) {
        c->err_status = 400;
        return HPE_USER;
    }
    if (p->method == HTTP_CONNECT) {
        c->err_status = 405;
        return HPE_USER;
    }
    /* RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one before. */
    size_t hosts = header_count_of(req, "host");
    if (hosts > 1 || (hosts == 0 && req->version >= 11)) {
        c->err_status = 400;
        return HPE_USER;
    }
    /* Only plain chunked coding is understood; anything else (gzip, a coding
     * list) is 501 (RFC 9112 §6.1). llhttp already refuses Transfer-Encoding
     * together with Content-Length (request smuggling). */
    if (p->flags & F_TRANSFER_ENCODING) {
        const char *te = mcp__http_header(req, "transfer-encoding");
        if (header_count_of(req, "transfer-encoding") != 1 || !te ||
            strcasecmp(te, "chunked") != 0) {
            c->err_status = 501;
            return HPE_USER;
        }
    }
    int has_body = (p->flags & F_CHUNKED) || ((p->flags & F_CONTENT_LENGTH) && p->content_length);
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > o->max_body_bytes) {
        c->err_status = 413;
        return HPE_USER;
    }
    const char *expect = mcp__http_header(req, "expect");
    if (expect && req->version >= 11) {
        if (strcasecmp(expect, "100-continue") != 0) {
            c->err_status = 417;
            return HPE_USER;
        }
        if (has_body) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            uv_buf_t b = uv_buf_init((char *)cont, sizeof cont - 1);
            (void)mcp__http_conn_write(c, &b, 1);
        }
    }
    if (has_body) {
        c->phase = PHASE_BODY;
        mcp__http_conn_timer_set(c, o->body_timeout_ms);
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    mcp__http_conn *c = p->data;
    mcp__http_req *req = c->req;
    if (len > c->srv->opts.max_body_bytes - req->body.len) {
        c->err_status = 413;
        return HPE_USER;
    }
    if (mcp__buf_append(&req->body, at, len) != MCP_OK) {
        c->err_status = 503;
        return HPE_USER;
    }
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    mcp__http_conn *c = p->data;
    c->msg_done = 1;
    uv_timer_stop(&c->timer);
    /* Stop here: the next pipelined request waits until this one is finished. */
    return HPE_PAUSED;
}

void mcp__http_settings_init(llhttp_settings_t *s)
{
    llhttp_settings_init(s);
    s->on_message_begin = on_message_begin;
    s->on_url = on_url;
    s->on_header_field = on_header_field;
    s->on_header_field_complete = on_header_field_complete;
    s->on_header_value = on_header_value;
    s->on_header_value_complete = on_header_value_complete;
    s->on_headers_complete = on_headers_complete;
    s->on_body = on_body;
    s->on_message_complete = on_message_complete;
}
