/* SPDX-License-Identifier: MIT */
/*
 * A raw HTTP/1.1 client and a runner for the HTTP server under test; see
 * http_client.h.
 */
#define _GNU_SOURCE
#include "http_client.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sse/sse.h"

extern char **environ;

enum { HC_BODY_NONE, HC_BODY_LENGTH, HC_BODY_CHUNKED, HC_BODY_CLOSE };
enum { CS_SIZE, CS_DATA, CS_DATA_CRLF, CS_TRAILER };

/* A response head larger than this is treated as malformed. */
#define HC_MAX_HEAD (1024 * 1024)

long long hc_now_ms(void)
{
    return harness_now_ms();
}

static int left_ms(long long deadline)
{
    long long left = deadline - hc_now_ms();
    if (left <= 0)
        return 0;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/* ---- Responses ---- */

const char *hc_header_get(const hc_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

size_t hc_header_count(const hc_response *r, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            n++;
    return n;
}

int hc_has_header_prefix(const hc_response *r, const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < r->n_headers; i++)
        if (strncasecmp(r->headers[i].name, prefix, n) == 0)
            return 1;
    return 0;
}

void hc_headers_free(hc_header *headers, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(headers[i].name);
        free(headers[i].value);
    }
    free(headers);
}

void hc_response_free(hc_response *r)
{
    if (r == NULL)
        return;
    hc_headers_free(r->headers, r->n_headers);
    free(r->reason);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* ---- Connections ---- */

/* See hc_set_source(): the address connections are made from, or "". */
static char source_addr[INET_ADDRSTRLEN];

void hc_set_source(const char *ip)
{
    snprintf(source_addr, sizeof(source_addr), "%s", ip != NULL ? ip : "");
}

int hc_connect(hc_conn *c, int port, int timeout_ms)
{
    return hc_connect_rcvbuf(c, port, 0, timeout_ms);
}

int hc_connect_rcvbuf(hc_conn *c, int port, int rcvbuf, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    /* A server that vanished must show up as EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (source_addr[0] != '\0') {
        struct sockaddr_in from = {.sin_family = AF_INET};
        if (inet_pton(AF_INET, source_addr, &from.sin_addr) != 1 ||
            bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS) {
            close(fd);
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int r;
        do {
            r = poll(&pfd, 1, left_ms(deadline));
        } while (r < 0 && errno == EINTR);
        int err = 0;
        socklen_t elen = sizeof(err);
        if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
            close(fd);
            return -1;
        }
    }
    c->fd = fd;
    return 0;
}

void hc_close(hc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->in);
    free(c->dec);
    hc_sse_reader_free(c->sse);
    hc_response_free(&c->head);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

void hc_close_reset(hc_conn *c)
{
    if (c->fd >= 0) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    hc_close(c);
}

void hc_shutdown_write(hc_conn *c)
{
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_WR);
}

int hc_send(hc_conn *c, const void *data, size_t len, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    const char *d = data;
    if (c->fd < 0)
        return -1;
    while (len > 0) {
        ssize_t n = send(c->fd, d, len, MSG_NOSIGNAL);
        if (n > 0) {
            d += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        int left = left_ms(deadline);
        if (left <= 0)
            return -1;
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        if (poll(&pfd, 1, left) < 0 && errno != EINTR)
            return -1;
        if (pfd.revents & (POLLERR | POLLNVAL))
            return -1;
    }
    return 0;
}

/* Reads what the socket has (waiting until the deadline for something).
 * Returns 1 when bytes arrived, 0 at end of file, -1 on timeout or error. */
static int fill(hc_conn *c, long long deadline)
{
    if (c->fd < 0)
        return -1;
    if (c->eof)
        return 0;
    for (;;) {
        if (harness_reserve(&c->in, &c->in_cap, c->in_len, 65536) != 0)
            return -1;
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            c->in[c->in_len] = '\0';
            return 1;
        }
        if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE))) {
            c->eof = 1;
            c->reset = n < 0;
            return 0;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        int left = left_ms(deadline);
        if (left <= 0)
            return -1;
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int r = poll(&pfd, 1, left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r == 0)
            return -1;
    }
}

static void consume_in(hc_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
    if (c->in != NULL)
        c->in[c->in_len] = '\0';
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *dup_trimmed(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return dup_range(s, n);
}

static char *find_bytes(const char *hay, size_t hay_len, const char *needle, size_t n)
{
    return hay_len >= n ? memmem(hay, hay_len, needle, n) : NULL;
}

/* Parses the head in c->in[0..head_len) into r. Returns 0 or -1. */
static int parse_head(hc_response *r, const char *head, size_t head_len)
{
    const char *end = head + head_len;
    const char *eol = find_bytes(head, head_len, "\r\n", 2);
    if (eol == NULL || eol - head < 12 || strncmp(head, "HTTP/1.", 7) != 0)
        return -1;
    if (!isdigit((unsigned char)head[9]) || !isdigit((unsigned char)head[10]) ||
        !isdigit((unsigned char)head[11]))
        return -1;
    r->status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    r->reason = dup_trimmed(head + 12, (size_t)(eol - head - 12));
    if (r->reason == NULL)
        return -1;
    const char *p = eol + 2;
    while (p < end) {
        const char *le = find_bytes(p, (size_t)(end - p), "\r\n", 2);
        if (le == NULL)
            le = end;
        if (le == p)
            break;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon == NULL)
            return -1;
        hc_header *nh = realloc(r->headers, (r->n_headers + 1) * sizeof(*nh));
        if (nh == NULL)
            return -1;
        r->headers = nh;
        hc_header *h = &r->headers[r->n_headers];
        h->name = dup_trimmed(p, (size_t)(colon - p));
        h->value = dup_trimmed(colon + 1, (size_t)(le - colon - 1));
        if (h->name == NULL || h->value == NULL) {
            free(h->name);
            free(h->value);
            return -1;
        }
        r->n_headers++;
        p = le + 2;
    }
    return 0;
}

int hc_read_head(hc_conn *c, hc_response *r, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    if (r == NULL) {
        r = &c->head;
        hc_response_free(r);
    }
    memset(r, 0, sizeof(*r));
    for (;;) {
        char *end = find_bytes(c->in, c->in_len, "\r\n\r\n", 4);
        if (end == NULL) {
            if (c->in_len > HC_MAX_HEAD)
                return -1;
            if (fill(c, deadline) != 1)
                return -1;
            continue;
        }
        size_t head_len = (size_t)(end - c->in) + 4;
        hc_response_free(r);
        if (parse_head(r, c->in, head_len) != 0) {
            hc_response_free(r);
            return -1;
        }
        consume_in(c, head_len);
        if (r->status >= 100 && r->status < 200)
            continue; /* an interim response: the real one follows */
        break;
    }

    free(c->dec);
    c->dec = NULL;
    c->dec_len = c->dec_cap = 0;
    hc_sse_reader_free(c->sse); /* a new body is a new event stream */
    c->sse = NULL;
    c->body_done = 0;
    c->chunk_state = CS_SIZE;
    c->remaining = 0;
    const char *te = hc_header_get(r, "transfer-encoding");
    const char *cl = hc_header_get(r, "content-length");
    if (r->status == 204 || r->status == 304) {
        c->body_mode = HC_BODY_NONE;
    } else if (te != NULL && harness_contains_ci(te, "chunked")) {
        c->body_mode = HC_BODY_CHUNKED;
    } else if (cl != NULL) {
        char *e;
        errno = 0;
        unsigned long long v = strtoull(cl, &e, 10);
        if (errno != 0 || e == cl || *e != '\0')
            return -1;
        c->body_mode = HC_BODY_LENGTH;
        c->remaining = (size_t)v;
    } else {
        c->body_mode = HC_BODY_CLOSE;
    }
    if (c->body_mode == HC_BODY_NONE || (c->body_mode == HC_BODY_LENGTH && c->remaining == 0))
        c->body_done = 1;
    return 0;
}

static int append_dec(hc_conn *c, const char *data, size_t n)
{
    if (harness_reserve(&c->dec, &c->dec_cap, c->dec_len, n) != 0)
        return -1;
    memcpy(c->dec + c->dec_len, data, n);
    c->dec_len += n;
    c->dec[c->dec_len] = '\0';
    return 0;
}

/* Decodes what c->in holds into c->dec. Returns 0, or -1 on a malformed body. */
static int decode(hc_conn *c)
{
    while (!c->body_done) {
        switch (c->body_mode) {
        case HC_BODY_LENGTH:
        case HC_BODY_CLOSE: {
            size_t n = c->in_len;
            if (c->body_mode == HC_BODY_LENGTH && n > c->remaining)
                n = c->remaining;
            if (n > 0 && append_dec(c, c->in, n) != 0)
                return -1;
            consume_in(c, n);
            if (c->body_mode == HC_BODY_LENGTH) {
                c->remaining -= n;
                if (c->remaining == 0)
                    c->body_done = 1;
            }
            return 0;
        }
        case HC_BODY_CHUNKED:
            switch (c->chunk_state) {
            case CS_SIZE: {
                char *eol = find_bytes(c->in, c->in_len, "\r\n", 2);
                if (eol == NULL)
                    return c->in_len > 1024 ? -1 : 0;
                char *e;
                errno = 0;
                unsigned long long size = strtoull(c->in, &e, 16);
                if (errno != 0 || e == c->in || (e != eol && *e != ';'))
                    return -1;
                consume_in(c, (size_t)(eol - c->in) + 2);
                c->remaining = (size_t)size;
                c->chunk_state = size == 0 ? CS_TRAILER : CS_DATA;
                break;
            }
            case CS_DATA: {
                size_t n = c->in_len < c->remaining ? c->in_len : c->remaining;
                if (n == 0)
                    return 0;
                if (append_dec(c, c->in, n) != 0)
                    return -1;
                consume_in(c, n);
                c->remaining -= n;
                if (c->remaining == 0)
                    c->chunk_state = CS_DATA_CRLF;
                break;
            }
            case CS_DATA_CRLF:
                if (c->in_len < 2)
                    return 0;
                if (c->in[0] != '\r' || c->in[1] != '\n')
                    return -1;
                consume_in(c, 2);
                c->chunk_state = CS_SIZE;
                break;
            case CS_TRAILER: {
                char *eol = find_bytes(c->in, c->in_len, "\r\n", 2);
                if (eol == NULL)
                    return 0;
                size_t n = (size_t)(eol - c->in);
                consume_in(c, n + 2);
                if (n == 0)
                    c->body_done = 1;
                break;
            }
            }
            break;
        default:
            c->body_done = 1;
            break;
        }
    }
    return 0;
}

/* Decodes what is there and reads more once. Returns 1 on progress or when the
 * body is done, 0 when the body ended early (EOF), -1 on timeout or error. */
static int pump(hc_conn *c, long long deadline)
{
    size_t before = c->dec_len;
    if (decode(c) != 0)
        return -1;
    /* Bytes already buffered are progress: the caller looks at them before
     * anything is waited for. */
    if (c->body_done || c->dec_len > before)
        return 1;
    int r = fill(c, deadline);
    if (r == 1)
        return decode(c) == 0 ? 1 : -1;
    if (r == 0) {
        if (decode(c) != 0)
            return -1;
        if (c->body_mode == HC_BODY_CLOSE) {
            c->body_done = 1;
            return 1;
        }
        return c->body_done ? 1 : 0;
    }
    return -1;
}

int hc_read_body(hc_conn *c, hc_response *r, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    if (r == NULL)
        r = &c->head;
    while (!c->body_done) {
        if (pump(c, deadline) != 1)
            break;
    }
    free(r->body);
    r->body = c->dec ? c->dec : strdup("");
    r->body_len = c->dec ? c->dec_len : 0;
    c->dec = NULL;
    c->dec_len = c->dec_cap = 0;
    return c->body_done && r->body != NULL ? 0 : -1;
}

int hc_pump(hc_conn *c)
{
    while (fill(c, 0) == 1) {
    }
    return decode(c);
}

int hc_read_response(hc_conn *c, hc_response *r, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    if (hc_read_head(c, r, timeout_ms) != 0)
        return -1;
    return hc_read_body(c, r, left_ms(deadline));
}

/* 1 when headers holds a line starting with name (e.g. "Host:"). */
static int has_line(const char *headers, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = headers; p != NULL && *p != '\0';) {
        if (strncasecmp(p, name, n) == 0)
            return 1;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return 0;
}

char *hc_format_request(int port, const char *method, const char *path, const char *headers,
                        const char *body, size_t body_len, size_t *len)
{
    char host[64] = "";
    char clen[64] = "";
    if (!has_line(headers, "Host:"))
        snprintf(host, sizeof(host), "Host: 127.0.0.1:%d\r\n", port);
    if (body != NULL && !has_line(headers, "Content-Length:") &&
        !has_line(headers, "Transfer-Encoding:"))
        snprintf(clen, sizeof(clen), "Content-Length: %zu\r\n", body_len);
    const char *hdrs = headers ? headers : "";
    int n = snprintf(NULL, 0, "%s %s HTTP/1.1\r\n%s%s%s\r\n", method, path, host, hdrs, clen);
    if (n < 0)
        return NULL;
    size_t total = (size_t)n + (body ? body_len : 0);
    char *out = malloc(total + 1);
    if (out == NULL)
        return NULL;
    snprintf(out, (size_t)n + 1, "%s %s HTTP/1.1\r\n%s%s%s\r\n", method, path, host, hdrs, clen);
    if (body != NULL && body_len > 0)
        memcpy(out + n, body, body_len);
    out[total] = '\0';
    *len = total;
    return out;
}

int hc_send_request(hc_conn *c, int port, const char *method, const char *path, const char *headers,
                    const char *body, int timeout_ms)
{
    size_t len;
    char *req = hc_format_request(port, method, path, headers, body, body ? strlen(body) : 0, &len);
    if (req == NULL)
        return -1;
    int rc = hc_send(c, req, len, timeout_ms);
    free(req);
    return rc;
}

int hc_request(int port, const char *method, const char *path, const char *headers,
               const char *body, hc_response *r, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    hc_conn c;
    memset(r, 0, sizeof(*r));
    if (hc_connect(&c, port, timeout_ms) != 0)
        return -1;
    int rc = hc_send_request(&c, port, method, path, headers, body, left_ms(deadline));
    /* A server may answer (413, 431) before reading everything; read anyway. */
    (void)rc;
    int rr = hc_read_response(&c, r, left_ms(deadline));
    hc_close(&c);
    return rr;
}

/* ---- Server-sent events ---- */

void hc_sse_event_free(hc_sse_event *ev)
{
    if (ev == NULL)
        return;
    free(ev->event);
    free(ev->data);
    free(ev->id);
    free(ev->comment_text);
    memset(ev, 0, sizeof(*ev));
}

/* A larger event fails the reader: no test sends one. */
#define HC_SSE_MAX_EVENT ((size_t)64 * 1024 * 1024)

struct hc_sse_reader {
    mcp__sse_parser parser;
    hc_sse_event ev; /* the block being read: its comment and retry so far */
    int failed;      /* ENOMEM in a callback */
};

static int reader_comment(void *user, const char *text, size_t len)
{
    hc_sse_reader *r = user;
    if (r->ev.comment_text == NULL && (r->ev.comment_text = dup_trimmed(text, len)) == NULL)
        r->failed = 1;
    return 0;
}

static int reader_retry(void *user, uint64_t ms)
{
    hc_sse_reader *r = user;
    r->ev.retry = (long)ms;
    return 0;
}

/* A block ended: it is complete in r->ev, and the feed stops there. */
static int reader_block(void *user, const mcp__sse_block *b)
{
    hc_sse_reader *r = user;
    hc_sse_event *ev = &r->ev;
    int typed = b->data != NULL && strcmp(b->type, "message") != 0;
    ev->has_data = b->data != NULL;
    ev->data = b->data != NULL ? dup_range(b->data, b->data_len) : strdup("");
    ev->event = typed ? dup_range(b->type, b->type_len) : NULL;
    ev->id = b->id_set ? dup_range(b->last_event_id, b->last_event_id_len) : NULL;
    ev->comment = b->fields == 0;
    if (ev->data == NULL || (typed && ev->event == NULL) || (b->id_set && ev->id == NULL))
        r->failed = 1;
    return 1;
}

static const mcp__sse_callbacks reader_callbacks = {
    .on_block = reader_block, .on_retry = reader_retry, .on_comment = reader_comment};

hc_sse_reader *hc_sse_reader_new(void)
{
    hc_sse_reader *r = calloc(1, sizeof(*r));
    if (r != NULL) {
        mcp__sse_parser_init(&r->parser, HC_SSE_MAX_EVENT, &reader_callbacks, r);
        r->ev.retry = -1;
    }
    return r;
}

void hc_sse_reader_free(hc_sse_reader *r)
{
    if (r == NULL)
        return;
    mcp__sse_parser_free(&r->parser);
    hc_sse_event_free(&r->ev);
    free(r);
}

int hc_sse_reader_take(hc_sse_reader *r, const char *buf, size_t len, size_t *used,
                       hc_sse_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->retry = -1;
    *used = 0;
    if (r->failed)
        return -1;
    int rc = mcp__sse_parser_feed(&r->parser, buf, len, used);
    if (rc == MCP_OK)
        return r->failed ? -1 : 0;
    if (rc != MCP_ECANCELED || r->failed)
        return -1;
    *ev = r->ev;
    memset(&r->ev, 0, sizeof(r->ev));
    r->ev.retry = -1;
    return 1;
}

int hc_sse_take(hc_conn *c, hc_sse_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->retry = -1;
    if (c->sse == NULL && (c->sse = hc_sse_reader_new()) == NULL)
        return 0;
    size_t used = 0;
    int got = c->dec_len ? hc_sse_reader_take(c->sse, c->dec, c->dec_len, &used, ev) : 0;
    if (used > 0) {
        memmove(c->dec, c->dec + used, c->dec_len - used);
        c->dec_len -= used;
        c->dec[c->dec_len] = '\0';
    }
    return got == 1;
}

int hc_sse_is_priming(const hc_sse_event *ev)
{
    return ev->id != NULL && !ev->comment && ev->data[0] == '\0';
}

int hc_sse_next(hc_conn *c, hc_sse_event *ev, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    if (c->sse == NULL && (c->sse = hc_sse_reader_new()) == NULL)
        return -1;
    for (;;) {
        if (hc_sse_take(c, ev))
            return 1;
        if (c->body_done)
            return 0;
        int r = pump(c, deadline);
        if (r == 0)
            return 0; /* the server closed mid-body: no more events */
        if (r < 0)
            return -1;
    }
}

int hc_sse_next_block(hc_conn *c, hc_sse_event *ev, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    for (;;) {
        int r = hc_sse_next(c, ev, left_ms(deadline));
        if (r != 1 || !ev->comment)
            return r;
        hc_sse_event_free(ev);
    }
}

int hc_sse_next_event(hc_conn *c, hc_sse_event *ev, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    for (;;) {
        int r = hc_sse_next(c, ev, left_ms(deadline));
        if (r != 1 || (!ev->comment && ev->data[0] != '\0'))
            return r;
        hc_sse_event_free(ev);
    }
}

json_t *hc_sse_next_json(hc_conn *c, int timeout_ms, int *rc)
{
    hc_sse_event ev;
    int r = hc_sse_next_event(c, &ev, timeout_ms);
    if (rc != NULL)
        *rc = r;
    if (r != 1)
        return NULL;
    json_error_t jerr;
    json_t *v = json_loads(ev.data, JSON_DECODE_ANY, &jerr);
    hc_sse_event_free(&ev);
    return v;
}

json_t *hc_sse_parse_all(const char *body, size_t len)
{
    json_t *arr = json_array();
    hc_sse_reader *r = hc_sse_reader_new();
    size_t pos = 0;
    if (arr == NULL || r == NULL || body == NULL) {
        json_decref(arr);
        hc_sse_reader_free(r);
        return NULL;
    }
    for (;;) {
        hc_sse_event ev;
        size_t used;
        int got = hc_sse_reader_take(r, body + pos, len - pos, &used, &ev);
        pos += used;
        if (got != 1)
            break;
        if (!ev.comment && ev.data[0] != '\0') {
            json_error_t jerr;
            json_t *v = json_loads(ev.data, JSON_DECODE_ANY, &jerr);
            json_array_append_new(arr, v ? v : json_string(ev.data));
        }
        hc_sse_event_free(&ev);
    }
    hc_sse_reader_free(r);
    return arr;
}

/* ---- MCP over HTTP ---- */

int hc_mcp_post(int port, const char *session, const char *extra_headers, const char *body,
                hc_response *r, int timeout_ms)
{
    char hdrs[4096];
    int n = snprintf(hdrs, sizeof(hdrs), "%s%s%s%s%s", HC_MCP_POST_HEADERS,
                     session ? "Mcp-Session-Id: " : "", session ? session : "",
                     session ? "\r\n" : "", extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof(hdrs)) {
        memset(r, 0, sizeof(*r));
        return -1;
    }
    return hc_request(port, "POST", "/mcp", hdrs, body, r, timeout_ms);
}

/* Connects, sends a request for /mcp and reads its head into c->head. */
static int open_exchange(hc_conn *c, int port, const char *method, const char *headers,
                         const char *body, int rcvbuf, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    if (hc_connect_rcvbuf(c, port, rcvbuf, timeout_ms) != 0)
        return -1;
    if (hc_send_request(c, port, method, "/mcp", headers, body, left_ms(deadline)) != 0 ||
        hc_read_head(c, NULL, left_ms(deadline)) != 0) {
        hc_close(c);
        return -1;
    }
    return c->head.status;
}

int hc_mcp_post_open(hc_conn *c, int port, const char *session, const char *body, int rcvbuf,
                     int timeout_ms)
{
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "%s%s%.256s%s", HC_MCP_POST_HEADERS,
             session ? "Mcp-Session-Id: " : "", session ? session : "", session ? "\r\n" : "");
    return open_exchange(c, port, "POST", hdrs, body, rcvbuf, timeout_ms);
}

int hc_mcp_get_open(hc_conn *c, int port, const char *session, const char *last_id, int timeout_ms)
{
    size_t n = 128 + (session ? strlen(session) : 0) + (last_id ? strlen(last_id) : 0);
    char *hdrs = malloc(n);
    if (hdrs == NULL) {
        memset(c, 0, sizeof(*c));
        c->fd = -1;
        return -1;
    }
    snprintf(hdrs, n, "%s%s%s%s%s%s%s", HC_SSE_ACCEPT, session ? "Mcp-Session-Id: " : "",
             session ? session : "", session ? "\r\n" : "", last_id ? "Last-Event-ID: " : "",
             last_id ? last_id : "", last_id ? "\r\n" : "");
    int status = open_exchange(c, port, "GET", hdrs, NULL, 0, timeout_ms);
    free(hdrs);
    return status;
}

json_t *hc_messages(const hc_response *r)
{
    const char *ct = hc_header_get(r, "content-type");
    if (r->body == NULL || ct == NULL)
        return NULL;
    if (harness_contains_ci(ct, "text/event-stream"))
        return hc_sse_parse_all(r->body, r->body_len);
    if (harness_contains_ci(ct, "application/json")) {
        json_error_t jerr;
        json_t *v = json_loadb(r->body, r->body_len, 0, &jerr);
        if (v == NULL || json_is_array(v))
            return v;
        json_t *arr = json_array();
        if (arr == NULL || json_array_append_new(arr, v) != 0) {
            json_decref(arr);
            return NULL;
        }
        return arr;
    }
    return NULL;
}

char *hc_initialize_body(const char *ver)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"%s\",\"capabilities\":{\"sampling\":{},\"elicitation\":{},"
             "\"roots\":{\"listChanged\":true}},\"clientInfo\":{\"name\":\"libmcp-http-tests\","
             "\"version\":\"1.0.0\"}}}",
             ver ? ver : "2025-11-25");
    return strdup(buf);
}

int hc_mcp_initialize(int port, char session[33], int timeout_ms)
{
    return hc_mcp_initialize_version(port, NULL, session, timeout_ms);
}

int hc_mcp_initialize_version(int port, const char *ver, char session[33], int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    hc_response r;
    char *body = hc_initialize_body(ver);
    session[0] = '\0';
    if (body == NULL)
        return -1;
    int rc = hc_mcp_post(port, NULL, NULL, body, &r, timeout_ms);
    free(body);
    const char *id = rc == 0 && r.status == 200 ? hc_header_get(&r, "mcp-session-id") : NULL;
    if (id == NULL || strlen(id) != 32) {
        hc_response_free(&r);
        return -1;
    }
    memcpy(session, id, 33);
    hc_response_free(&r);
    rc = hc_mcp_post(port, session, NULL,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r,
                     left_ms(deadline));
    int status = r.status;
    hc_response_free(&r);
    return rc == 0 && status == 202 ? 0 : -1;
}

int hc_mcp_delete(int port, const char *session, int timeout_ms)
{
    char hdrs[128];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", session);
    int rc = hc_request(port, "DELETE", "/mcp", hdrs, NULL, &r, timeout_ms);
    int status = rc == 0 ? r.status : -1;
    hc_response_free(&r);
    return status;
}

char *hc_tools_call_body(long long id, const char *tool, const char *args_json)
{
    const char *args = args_json ? args_json : "{}";
    const char *fmt = "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":{"
                      "\"name\":\"%s\",\"arguments\":%s}}";
    int n = snprintf(NULL, 0, fmt, id, tool, args);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s != NULL)
        snprintf(s, (size_t)n + 1, fmt, id, tool, args);
    return s;
}

/* ---- The server under test ---- */

static void *stderr_reader(void *arg)
{
    hc_server *s = arg;
    char chunk[4096];
    for (;;) {
        ssize_t n = read(s->err_fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        pthread_mutex_lock(&s->mu);
        if (n <= 0) {
            s->err_eof = 1;
        } else if (harness_reserve(&s->err, &s->err_cap, s->err_len, (size_t)n) == 0) {
            memcpy(s->err + s->err_len, chunk, (size_t)n);
            s->err_len += (size_t)n;
            s->err[s->err_len] = '\0';
        }
        pthread_cond_broadcast(&s->cv);
        int done = s->err_eof;
        pthread_mutex_unlock(&s->mu);
        if (done)
            return NULL;
    }
}

/* The port of the "listening on http://127.0.0.1:PORT/mcp" line (https:// when the
 * server speaks TLS), or 0. */
static int find_port(const char *text)
{
    const char *p = text ? strstr(text, "listening on http") : NULL;
    if (p == NULL)
        return 0;
    p += strlen("listening on http");
    if (*p == 's')
        p++;
    if (strncmp(p, "://127.0.0.1:", strlen("://127.0.0.1:")) != 0)
        return 0;
    p += strlen("://127.0.0.1:");
    char *e;
    long port = strtol(p, &e, 10);
    if (e == p || strncmp(e, "/mcp", 4) != 0 || port <= 0 || port > 65535)
        return 0;
    return (int)port;
}

int hc_server_start(hc_server *s, const char *const flags[], int timeout_ms)
{
    return hc_server_start_on(s, 0, flags, timeout_ms);
}

int hc_server_start_on(hc_server *s, int port_wanted, const char *const flags[], int timeout_ms)
{
    return hc_server_start_program(s, "mcp-everything", port_wanted, flags, NULL, timeout_ms);
}

int hc_server_start_program(hc_server *s, const char *program, int port_wanted,
                            const char *const flags[], const char *const tail[], int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    char path[4096];
    const char *argv[64];
    size_t argc = 0;
    int errp[2] = {-1, -1};
    posix_spawn_file_actions_t fa;

    memset(s, 0, sizeof(*s));
    s->err_fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    harness_cond_init_monotonic(&s->cv);
    signal(SIGPIPE, SIG_IGN);

    if (harness_bin_path(program, path, sizeof(path)) != 0)
        return -1;
    argv[argc++] = path;
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port_wanted);
    argv[argc++] = "--http";
    argv[argc++] = addr;
    for (size_t i = 0; flags != NULL && flags[i] != NULL && argc < 62; i++)
        argv[argc++] = flags[i];
    for (size_t i = 0; tail != NULL && tail[i] != NULL && argc < 62; i++)
        argv[argc++] = tail[i];
    argv[argc] = NULL;

    if (pipe2(errp, O_CLOEXEC) != 0)
        return -1;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(errp[0]);
        close(errp[1]);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    /* It dies with this thread, whatever becomes of the test. */
    const char *args[70];
    int src = harness_dying_argv(args, 70, argv) != 0
                  ? E2BIG
                  : posix_spawn(&s->pid, args[0], &fa, NULL, (char *const *)args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(errp[1]);
    if (src != 0) {
        s->pid = 0;
        close(errp[0]);
        fprintf(stderr, "cannot start %s: %s\n", path, strerror(src));
        return -1;
    }
    s->err_fd = errp[0];
    if (pthread_create(&s->reader, NULL, stderr_reader, s) != 0) {
        hc_server_free(s);
        return -1;
    }
    s->reader_started = 1;

    pthread_mutex_lock(&s->mu);
    while ((s->port = find_port(s->err)) == 0 && !s->err_eof &&
           harness_cond_wait_until(&s->cv, &s->mu, deadline))
        ;
    int port = s->port;
    pthread_mutex_unlock(&s->mu);
    if (port == 0) {
        char *err = hc_server_stderr(s);
        fprintf(stderr, "%s did not say where it listens within %d ms; stderr:\n%s\n", program,
                timeout_ms, err ? err : "");
        free(err);
        hc_server_free(s);
        return -1;
    }
    return 0;
}

char *hc_server_stderr(hc_server *s)
{
    pthread_mutex_lock(&s->mu);
    char *copy = s->err ? strdup(s->err) : strdup("");
    pthread_mutex_unlock(&s->mu);
    return copy;
}

int hc_server_alive(hc_server *s)
{
    if (s->pid <= 0)
        return 0;
    /* WNOWAIT: look without reaping, so that hc_server_stop still gets the status. */
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return 0;
    return si.si_pid == 0;
}

/* Waits for the child to exit until the deadline; returns 0 once reaped. */
static int wait_exit(hc_server *s, long long deadline, int *status)
{
    if (harness_wait_pid(s->pid, left_ms(deadline), status) != 0)
        return -1;
    s->pid = 0;
    return 0;
}

int hc_server_stop(hc_server *s, int timeout_ms, int *status)
{
    long long deadline = hc_now_ms() + timeout_ms;
    *status = -1;
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    int rc = wait_exit(s, deadline, status);
    if (rc != 0) {
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, status, 0) < 0 && errno == EINTR)
            ;
        s->pid = 0;
    }
    /* The exit closed the pipe: let the reader collect the last words. */
    if (s->reader_started) {
        pthread_join(s->reader, NULL);
        s->reader_started = 0;
    }
    return rc;
}

int hc_server_wait(hc_server *s, int timeout_ms, int *status)
{
    *status = -1;
    if (s->pid <= 0)
        return -1;
    int rc = wait_exit(s, hc_now_ms() + timeout_ms, status);
    if (rc == 0 && s->reader_started) {
        pthread_join(s->reader, NULL);
        s->reader_started = 0;
    }
    return rc;
}

int hc_server_wait_stderr(hc_server *s, const char *text, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    int found;
    while (!(found = s->err != NULL && strstr(s->err, text) != NULL) && !s->err_eof &&
           harness_cond_wait_until(&s->cv, &s->mu, deadline))
        ;
    pthread_mutex_unlock(&s->mu);
    return found ? 0 : -1;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay ? strstr(hay, needle) : NULL; p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

int hc_server_wait_count(hc_server *s, const char *text, int count, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    int n;
    while ((n = count_of(s->err, text)) < count && !s->err_eof &&
           harness_cond_wait_until(&s->cv, &s->mu, deadline))
        ;
    pthread_mutex_unlock(&s->mu);
    return n >= count ? n : -1;
}

long hc_proc_value(const char *path, const char *line_prefix, const char *key)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[512];
    long v = -1;
    size_t n = strlen(line_prefix);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, line_prefix, n) == 0) {
            const char *at = key != NULL ? strstr(line + n, key) : line + n;
            if (at != NULL)
                v = strtol(at + (key != NULL ? strlen(key) : 0), NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

void hc_asan_small_quarantine(int mb)
{
    if (!UNDER_ASAN)
        return;
    const char *old = getenv("ASAN_OPTIONS");
    if (old != NULL && strstr(old, "quarantine_size_mb") != NULL)
        return;
    char opts[1024];
    snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=%d", old ? old : "",
             old != NULL && *old != '\0' ? ":" : "", mb);
    setenv("ASAN_OPTIONS", opts, 1);
}

long hc_server_rss_kb(const hc_server *s)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
    return hc_proc_value(path, "VmRSS:", NULL);
}

void hc_server_free(hc_server *s)
{
    if (s->pid > 0) {
        int status;
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
            ;
        s->pid = 0;
    }
    if (s->reader_started) {
        pthread_join(s->reader, NULL);
        s->reader_started = 0;
    }
    if (s->err_fd >= 0) {
        close(s->err_fd);
        s->err_fd = -1;
    }
    free(s->err);
    s->err = NULL;
    s->err_len = s->err_cap = 0;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

int hc_server_stop_check(hc_server *s, int timeout_ms)
{
    int status = -1;
    int rc = hc_server_stop(s, timeout_ms, &status);
    int ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        char *err = hc_server_stderr(s);
        if (rc != 0)
            fprintf(stderr, "mcp-everything did not exit within %d ms of SIGTERM\n", timeout_ms);
        else if (WIFEXITED(status))
            fprintf(stderr, "mcp-everything exited with status %d after SIGTERM\n",
                    WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            fprintf(stderr, "mcp-everything was killed by signal %d\n", WTERMSIG(status));
        fprintf(stderr, "---- its stderr ----\n%s\n---- end ----\n", err ? err : "");
        free(err);
    }
    hc_server_free(s);
    return ok ? 0 : -1;
}
