/* SPDX-License-Identifier: MIT */
/*
 * Writing responses: complete ones, streamed ones (chunked, or delimited by
 * the close for HTTP/1.0 clients) and the layer's own error answers. The
 * request accessors are in request.c.
 *
 * Every write goes to the socket with uv_try_write first; only what the
 * kernel does not take is copied and queued with uv_write. A failed write
 * never closes the connection from inside the caller's call: it marks the
 * connection broken, and the close (with its on_close callback) happens at
 * the next loop turn.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http_int.h"

/* ---- Writing ---- */

typedef struct write_req {
    uv_write_t w;
    size_t size;
    char data[];
} write_req;

static void on_write(uv_write_t *w, int status)
{
    mcp__http_conn *c = w->handle->data;
    write_req *wr = (write_req *)(void *)w;
    if (status == 0)
        c->to_kernel += wr->size - sizeof *wr;
    mcp__http_backlog_shrink(c, wr->size);
    mcp__mem_released(wr->size);
    free(wr);
    /* UV_ECANCELED: the handle is closing, which is already in hand. */
    if (status < 0 && !c->closing)
        mcp__http_conn_close(c);
    else if (status == 0)
        mcp__http_conn_wrote(c);
}

/* Writes now: uv_try_write, and what the socket does not take is queued. */
int mcp__http_conn_send_raw(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n)
{
    if (!c || c->closing || c->broken)
        return MCP_ECLOSED;
    size_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += bufs[i].len;
    if (total == 0)
        return MCP_OK;
    if (c->srv->before_write != NULL)
        c->srv->before_write(c->srv->before_write_arg);
    size_t done = 0;
    int r = uv_try_write((uv_stream_t *)&c->tcp, bufs, n);
    if (r >= 0) {
        done = (size_t)r;
        c->to_kernel += done;
    } else if (r != UV_EAGAIN && r != UV_ENOSYS) {
        mcp__http_conn_break(c);
        return MCP_ECLOSED;
    }
    if (done == total)
        return MCP_OK;

    write_req *wr = malloc(sizeof *wr + (total - done));
    if (wr)
        wr->size = sizeof *wr + (total - done);
    if (!wr) {
        mcp__http_conn_break(c);
        return MCP_ENOMEM;
    }
    size_t skip = done, off = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t len = bufs[i].len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(wr->data + off, bufs[i].base + skip, len - skip);
        off += len - skip;
        skip = 0;
    }
    uv_buf_t b = uv_buf_init(wr->data, (unsigned)off);
    if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0) {
        free(wr);
        mcp__http_conn_break(c);
        return MCP_ECLOSED;
    }
    mcp__http_backlog_grow(c, wr->size);
    return MCP_OK;
}

/* HTTPS encrypts first (tls.c), then sends the records as above. */
static int conn_write_now(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n)
{
    if (c != NULL && c->ssl != NULL && !c->closing && !c->broken)
        return mcp__tls_conn_send(c, bufs, n);
    return mcp__http_conn_send_raw(c, bufs, n);
}

#define MCP__HTTP_CORK_MAX (64u << 10)

static void undirty(mcp__http_conn *c)
{
    if (!c->dirty)
        return;
    for (mcp__http_conn **p = &c->srv->dirty; *p; p = &(*p)->dirty_next) {
        if (*p == c) {
            *p = c->dirty_next;
            break;
        }
    }
    c->dirty = 0;
    c->dirty_next = NULL;
}

int mcp__http_conn_write(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n)
{
    if (!c || c->closing || c->broken)
        return MCP_ECLOSED;
    for (unsigned i = 0; i < n; i++) {
        if (mcp__buf_append(&c->out, bufs[i].base, bufs[i].len) != MCP_OK) {
            mcp__http_conn_break(c);
            return MCP_ENOMEM;
        }
    }
    /* A large burst goes out at once: corking is for small pieces, and a cork
     * buffer must not hide a slow reader or grow without bound within one turn. */
    if (c->out.len >= MCP__HTTP_CORK_MAX) {
        mcp__http_conn_flush(c);
        return c->broken || c->closing ? MCP_ECLOSED : MCP_OK;
    }
    /* Anything more ends a hold: what waited goes out with it at the end of this turn. */
    c->hold_until = 0;
    mcp__http_server *srv = c->srv;
    if (!c->dirty && c->out.len > 0) {
        c->dirty = 1;
        c->dirty_next = srv->dirty;
        srv->dirty = c;
    }
    if (c->dirty) {
        /* The check phase catches what I/O callbacks wrote; the prepare phase,
         * before the loop blocks in poll, what timers and others wrote. */
        uv_check_start(&srv->flush, mcp__http_flush_all);
        uv_prepare_start(&srv->flush_prep, mcp__http_flush_prepared);
    }
    return MCP_OK;
}

void mcp__http_req_hold(mcp__http_req *req, unsigned ms)
{
    mcp__http_conn *c = req != NULL ? req->conn : NULL;
    if (c == NULL || c->closing || c->broken || !c->dirty || ms == 0)
        return;
    c->hold_until = uv_now(c->srv->loop) + ms;
}

void mcp__http_conn_flush(mcp__http_conn *c)
{
    undirty(c);
    if (c->out.len == 0)
        return;
    uv_buf_t b = uv_buf_init(c->out.data, (unsigned)c->out.len);
    (void)conn_write_now(c, &b, 1);
    /* Keep a small buffer for the next turn; give back a large one. */
    if (c->out.cap > (64u << 10))
        mcp__buf_free(&c->out);
    else
        mcp__buf_reset(&c->out);
}

void mcp__http_conn_uncork(mcp__http_conn *c)
{
    undirty(c);
    mcp__buf_free(&c->out);
}

static void flush_all(mcp__http_server *srv)
{
    uint64_t now = uv_now(srv->loop), next = 0;
    mcp__http_conn **p = &srv->dirty;
    while (*p != NULL) {
        mcp__http_conn *c = *p;
        if (c->hold_until > now) {
            /* Held back a little (mcp__http_req_hold): it waits for the timer. */
            if (next == 0 || c->hold_until < next)
                next = c->hold_until;
            p = &c->dirty_next;
            continue;
        }
        c->hold_until = 0;
        mcp__http_conn_flush(c); /* takes c off the list: *p is the next one */
    }
    uv_check_stop(&srv->flush);
    uv_prepare_stop(&srv->flush_prep);
    if (next != 0 && !srv->stopping)
        uv_timer_start(&srv->hold, mcp__http_flush_held, next - now, 0);
}

void mcp__http_flush_held(uv_timer_t *h)
{
    flush_all(h->data);
}

void mcp__http_flush_all(uv_check_t *h)
{
    flush_all(h->data);
}

void mcp__http_flush_prepared(uv_prepare_t *h)
{
    flush_all(h->data);
}

/* ---- Status lines and headers ---- */

const char *mcp__http_status_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 301:
        return "Moved Permanently";
    case 302:
        return "Found";
    case 303:
        return "See Other";
    case 304:
        return "Not Modified";
    case 307:
        return "Temporary Redirect";
    case 308:
        return "Permanent Redirect";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 417:
        return "Expectation Failed";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

/* Header names are tokens; neither names nor values may break the framing. */
static int headers_ok(const char *const *h)
{
    for (size_t i = 0; h && h[i]; i += 2) {
        const char *name = h[i], *value = h[i + 1];
        if (!value || !*name)
            return 0;
        for (const char *p = name; *p; p++)
            if (*p <= ' ' || *p == ':' || *p == 0x7f)
                return 0;
        if (strpbrk(value, "\r\n"))
            return 0;
        if (strcasecmp(name, "content-length") == 0 || strcasecmp(name, "transfer-encoding") == 0 ||
            strcasecmp(name, "connection") == 0)
            return 0;
    }
    return 1;
}

/* Status line, Date, the caller's headers, then `framing` (already formatted
 * lines) and the Connection header, and the blank line. */
static int build_head(mcp__buf *b, mcp__http_req *req, int status, const char *const *headers,
                      const char *framing, int closing)
{
    /* Appends rather than printf: this runs for every response. */
    int rc = mcp__buf_reserve(b, 256);
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "HTTP/1.1 ", 9);
    if (rc == MCP_OK)
        rc = mcp__buf_append_u64(b, (uint64_t)status);
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, " ", 1);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, mcp__http_status_reason(status));
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "\r\nDate: ", 8);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, mcp__http_date(req->conn->srv));
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "\r\n", 2);
    for (size_t i = 0; rc == MCP_OK && headers && headers[i]; i += 2) {
        rc = mcp__buf_appends(b, headers[i]);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, ": ", 2);
        if (rc == MCP_OK)
            rc = mcp__buf_appends(b, headers[i + 1]);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, "\r\n", 2);
    }
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, framing);
    if (rc == MCP_OK && closing)
        rc = mcp__buf_appends(b, "Connection: close\r\n");
    else if (rc == MCP_OK && req->version == 10)
        rc = mcp__buf_appends(b, "Connection: keep-alive\r\n");
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, "\r\n");
    return rc;
}

static int conn_usable(const mcp__http_req *req)
{
    return req->conn && !req->conn->closing && !req->conn->broken;
}

static int will_close(const mcp__http_req *req)
{
    return !req->keep_alive || req->conn->no_more || req->conn->srv->stopping ||
           req->conn->srv->quiescing;
}

/* ---- Complete responses ---- */

int mcp__http_respond(mcp__http_req *req, int status, const char *const *headers, const void *body,
                      size_t len)
{
    if (!req || status < 200 || status > 999 || (len > 0 && !body) || len > UINT32_MAX ||
        !headers_ok(headers))
        return MCP_EINVAL;
    if (req->state != REQ_OWNED)
        return MCP_ESTATE;
    if (!conn_usable(req)) {
        mcp__http_req_finish(req, 1);
        return MCP_ECLOSED;
    }
    int closing = will_close(req);
    /* RFC 9110 §6.4.1: 204 and 304 have no content; 1xx are refused above. */
    int no_content = status == 204 || status == 304;
    char framing[48] = "";
    if (!no_content) {
        memcpy(framing, "Content-Length: ", 16);
        size_t n = 16 + mcp__u64_str((uint64_t)len, framing + 16);
        memcpy(framing + n, "\r\n", 3);
    }
    mcp__buf head = {0};
    if (build_head(&head, req, status, headers, framing, closing) != MCP_OK) {
        mcp__buf_free(&head);
        mcp__http_req_abort(req);
        return MCP_ENOMEM;
    }
    uv_buf_t bufs[2] = {uv_buf_init(head.data, (unsigned)head.len),
                        uv_buf_init((char *)body, (unsigned)len)};
    unsigned n = (no_content || req->method == MCP__HTTP_HEAD || len == 0) ? 1 : 2;
    int rc = mcp__http_conn_write(req->conn, bufs, n);
    mcp__buf_free(&head);
    mcp__http_req_finish(req, closing || rc != MCP_OK);
    return rc;
}

/* ---- Streamed responses ---- */

int mcp__http_stream_begin(mcp__http_req *req, int status, const char *const *headers)
{
    if (!req || status < 200 || status > 999 || !headers_ok(headers))
        return MCP_EINVAL;
    if (req->state != REQ_OWNED)
        return MCP_ESTATE;
    req->state = REQ_STREAMING;
    if (!conn_usable(req))
        return MCP_ECLOSED;
    /* HTTP/1.0 has no chunked coding: the close ends the body. */
    req->chunked_out = req->version >= 11;
    if (!req->chunked_out)
        req->conn->no_more = 1;
    int closing = will_close(req);
    mcp__buf head = {0};
    if (build_head(&head, req, status, headers,
                   req->chunked_out ? "Transfer-Encoding: chunked\r\n" : "", closing) != MCP_OK) {
        mcp__buf_free(&head);
        mcp__http_conn_break(req->conn);
        return MCP_ENOMEM;
    }
    uv_buf_t b = uv_buf_init(head.data, (unsigned)head.len);
    int rc = mcp__http_conn_write(req->conn, &b, 1);
    mcp__buf_free(&head);
    return rc;
}

int mcp__http_stream_write(mcp__http_req *req, const void *data, size_t len)
{
    if (!req || (len > 0 && !data) || len > UINT32_MAX)
        return MCP_EINVAL;
    if (req->state != REQ_STREAMING)
        return MCP_ESTATE;
    if (!conn_usable(req))
        return MCP_ECLOSED;
    /* A zero-length chunk would end the body; HEAD responses have none. */
    if (len == 0 || req->method == MCP__HTTP_HEAD)
        return MCP_OK;
    if (!req->chunked_out) {
        uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
        return mcp__http_conn_write(req->conn, &b, 1);
    }
    /* The chunk's size in hex, then CRLF (not snprintf: this runs for every event). */
    char size[24];
    int n = 0;
    for (int shift = 60; shift >= 0; shift -= 4) {
        unsigned d = (unsigned)(len >> shift) & 0xfu;
        if (d != 0 || n > 0 || shift == 0)
            size[n++] = "0123456789abcdef"[d];
    }
    size[n++] = '\r';
    size[n++] = '\n';
    uv_buf_t bufs[3] = {uv_buf_init(size, (unsigned)n), uv_buf_init((char *)data, (unsigned)len),
                        uv_buf_init((char *)"\r\n", 2)};
    return mcp__http_conn_write(req->conn, bufs, 3);
}

int mcp__http_stream_end(mcp__http_req *req)
{
    if (!req)
        return MCP_EINVAL;
    if (req->state != REQ_STREAMING)
        return MCP_ESTATE;
    if (!conn_usable(req)) {
        mcp__http_req_finish(req, 1);
        return MCP_ECLOSED;
    }
    int rc = MCP_OK;
    if (req->chunked_out && req->method != MCP__HTTP_HEAD) {
        uv_buf_t b = uv_buf_init((char *)"0\r\n\r\n", 5);
        rc = mcp__http_conn_write(req->conn, &b, 1);
    }
    mcp__http_req_finish(req, !req->chunked_out || rc != MCP_OK);
    return rc;
}

size_t mcp__http_stream_queued(const mcp__http_req *req)
{
    if (!req || !conn_usable(req))
        return 0;
    /* Only what the socket refused: corked bytes were not offered to it yet, and a
     * burst written in one loop turn says nothing about the reader. */
    return uv_stream_get_write_queue_size((const uv_stream_t *)&req->conn->tcp);
}

/* ---- The layer's own error answers ---- */

void mcp__http_conn_fail(mcp__http_conn *c, int status)
{
    if (c->closing || c->phase == PHASE_LINGER)
        return;
    if (c->req && c->req->state == REQ_RECEIVING) {
        mcp__http_req_free(c->req);
        c->req = NULL;
    }
    const char *reason = mcp__http_status_reason(status);
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: text/plain\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                     status, reason, mcp__http_date(c->srv), strlen(reason) + 1, reason);
    if (n > 0 && (size_t)n < sizeof msg) {
        uv_buf_t b = uv_buf_init(msg, (unsigned)n);
        (void)mcp__http_conn_write(c, &b, 1);
    }
    mcp__http_conn_linger(c);
}
