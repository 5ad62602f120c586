/* SPDX-License-Identifier: MIT */
/*
 * The raw HTTP/1.1 + SSE client of the resumability tests; see
 * resume_client.h.
 */
#define _GNU_SOURCE
#include "resume_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { PHASE_SIZE, PHASE_DATA, PHASE_DATA_END, PHASE_TRAILER, PHASE_END };

long long rc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(long long deadline)
{
    long long left = deadline - rc_now_ms();
    return left <= 0 ? 0 : left > 3600000 ? 3600000 : (int)left;
}

/* Makes room for need more bytes and a NUL. */
static int reserve(char **buf, size_t *cap, size_t len, size_t need)
{
    if (len + need + 1 <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 4096;
    while (ncap < len + need + 1)
        ncap *= 2;
    char *nb = realloc(*buf, ncap);
    if (nb == NULL)
        return -1;
    *buf = nb;
    *cap = ncap;
    return 0;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void rc_event_free(rc_event *ev)
{
    if (ev == NULL)
        return;
    free(ev->id);
    free(ev->event);
    free(ev->data);
    memset(ev, 0, sizeof(*ev));
    ev->retry = -1;
}

int rc_event_is_priming(const rc_event *ev)
{
    return ev->id != NULL && !ev->comment && (ev->data == NULL || ev->data[0] == '\0');
}

/* ---- Connections ---- */

static void free_headers(rc_conn *c)
{
    for (size_t i = 0; i < c->n_headers; i++) {
        free(c->headers[i].name);
        free(c->headers[i].value);
    }
    free(c->headers);
    c->headers = NULL;
    c->n_headers = 0;
}

static void conn_free(rc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free_headers(c);
    free(c->in);
    free(c->body);
    hc_sse_reader_free(c->sse);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

int rc_connect(rc_conn *c, int port, int rcvbuf, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    memset(c, 0, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    if (rcvbuf > 0)
        (void)setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    int one = 1;
    (void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS) {
            conn_free(c);
            return -1;
        }
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        int err = 0;
        socklen_t len = sizeof(err);
        if (poll(&pfd, 1, left_ms(deadline)) != 1 ||
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            conn_free(c);
            return -1;
        }
    }
    return 0;
}

void rc_close(rc_conn *c)
{
    conn_free(c);
}

void rc_reset(rc_conn *c)
{
    if (c->fd >= 0) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        (void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    conn_free(c);
}

static int send_all(rc_conn *c, const char *data, size_t len, long long deadline)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        int left = left_ms(deadline);
        if (left <= 0 || poll(&pfd, 1, left) <= 0 || (pfd.revents & (POLLERR | POLLNVAL)))
            return -1;
    }
    return 0;
}

int rc_send_request(rc_conn *c, int port, const char *method, const char *headers, const char *body,
                    int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    if (c->fd < 0)
        return -1;
    size_t body_len = body ? strlen(body) : 0;
    char clen[64] = "";
    if (body != NULL)
        snprintf(clen, sizeof(clen), "Content-Length: %zu\r\n", body_len);
    int n = snprintf(NULL, 0, "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s\r\n", method, port,
                     headers ? headers : "", clen);
    if (n < 0)
        return -1;
    char *req = malloc((size_t)n + body_len + 1);
    if (req == NULL)
        return -1;
    snprintf(req, (size_t)n + 1, "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s\r\n", method, port,
             headers ? headers : "", clen);
    if (body_len > 0)
        memcpy(req + n, body, body_len);
    int rc = send_all(c, req, (size_t)n + body_len, deadline);
    free(req);
    return rc;
}

/* Reads what the socket has, waiting until the deadline for something.
 * Returns 1 when bytes arrived, 0 at end of file (or reset), -1 on timeout/error. */
static int fill(rc_conn *c, long long deadline, int wait)
{
    if (c->fd < 0)
        return -1;
    if (c->eof)
        return 0;
    for (;;) {
        if (reserve(&c->in, &c->in_cap, c->in_len, 65536) != 0)
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
        if (!wait)
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

static void consume_in(rc_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
    c->in[c->in_len] = '\0';
}

static int parse_head(rc_conn *c, const char *head, size_t len)
{
    const char *eol = memchr(head, '\n', len);
    if (eol == NULL || strncmp(head, "HTTP/1.", 7) != 0 || len < 12)
        return -1;
    c->status = atoi(head + 9);
    const char *p = eol + 1;
    const char *end = head + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (e == NULL)
            e = end;
        size_t l = (size_t)(e - p);
        if (l > 0 && p[l - 1] == '\r')
            l--;
        const char *colon = memchr(p, ':', l);
        if (colon != NULL) {
            rc_header *nh = realloc(c->headers, (c->n_headers + 1) * sizeof(*nh));
            if (nh == NULL)
                return -1;
            c->headers = nh;
            const char *v = colon + 1;
            while (v < p + l && (*v == ' ' || *v == '\t'))
                v++;
            size_t vl = (size_t)(p + l - v);
            while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            nh[c->n_headers].name = dup_range(p, (size_t)(colon - p));
            nh[c->n_headers].value = dup_range(v, vl);
            if (nh[c->n_headers].name == NULL || nh[c->n_headers].value == NULL) {
                free(nh[c->n_headers].name);
                free(nh[c->n_headers].value);
                return -1;
            }
            c->n_headers++;
        }
        p = e + 1;
    }
    return 0;
}

const char *rc_header_get(const rc_conn *c, const char *name)
{
    for (size_t i = 0; i < c->n_headers; i++)
        if (strcasecmp(c->headers[i].name, name) == 0)
            return c->headers[i].value;
    return NULL;
}

int rc_read_head(rc_conn *c, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    for (;;) {
        char *end = c->in ? strstr(c->in, "\r\n\r\n") : NULL;
        if (end != NULL) {
            size_t head_len = (size_t)(end - c->in);
            free_headers(c);
            if (parse_head(c, c->in, head_len) != 0)
                return -1;
            consume_in(c, head_len + 4);
            if (c->status / 100 == 1) /* interim: read the next head */
                continue;
            hc_sse_reader_free(c->sse); /* a new body is a new event stream */
            c->sse = NULL;
            const char *te = rc_header_get(c, "transfer-encoding");
            const char *cl = rc_header_get(c, "content-length");
            if (te != NULL && strcasestr(te, "chunked") != NULL) {
                c->framing = RC_FRAMING_CHUNKED;
                c->chunk_phase = PHASE_SIZE;
            } else if (cl != NULL) {
                c->framing = RC_FRAMING_LENGTH;
                c->left = strtoull(cl, NULL, 10);
                c->done = c->left == 0;
            } else if (c->status == 204 || c->status == 304) {
                c->framing = RC_FRAMING_LENGTH;
                c->done = 1;
            } else {
                c->framing = RC_FRAMING_CLOSE;
            }
            return 0;
        }
        if (fill(c, deadline, 1) != 1)
            return -1;
    }
}

static int append_body(rc_conn *c, const char *data, size_t n)
{
    if (reserve(&c->body, &c->body_cap, c->body_len, n) != 0)
        return -1;
    memcpy(c->body + c->body_len, data, n);
    c->body_len += n;
    c->body[c->body_len] = '\0';
    return 0;
}

/* Moves raw bytes into the decoded body as far as they go. Returns 0 or -1. */
static int decode(rc_conn *c)
{
    while (c->in_len > 0 && !c->done) {
        if (c->framing == RC_FRAMING_CLOSE || c->framing == RC_FRAMING_LENGTH) {
            size_t n = c->in_len;
            if (c->framing == RC_FRAMING_LENGTH && n > c->left)
                n = (size_t)c->left;
            if (append_body(c, c->in, n) != 0)
                return -1;
            consume_in(c, n);
            if (c->framing == RC_FRAMING_LENGTH) {
                c->left -= n;
                c->done = c->left == 0;
            }
            continue;
        }
        if (c->chunk_phase == PHASE_DATA) {
            size_t n = c->in_len < c->left ? c->in_len : (size_t)c->left;
            if (append_body(c, c->in, n) != 0)
                return -1;
            consume_in(c, n);
            c->left -= n;
            if (c->left == 0)
                c->chunk_phase = PHASE_DATA_END;
            continue;
        }
        char *eol = memchr(c->in, '\n', c->in_len);
        if (eol == NULL)
            return 0;
        size_t line_len = (size_t)(eol - c->in) + 1;
        if (c->chunk_phase == PHASE_SIZE) {
            char *e;
            errno = 0;
            unsigned long long size = strtoull(c->in, &e, 16);
            if (e == c->in || errno != 0)
                return -1;
            c->left = size;
            c->chunk_phase = size == 0 ? PHASE_TRAILER : PHASE_DATA;
        } else if (c->chunk_phase == PHASE_DATA_END) {
            if (line_len > 2 || (line_len == 2 && c->in[0] != '\r'))
                return -1;
            c->chunk_phase = PHASE_SIZE;
        } else if (c->chunk_phase == PHASE_TRAILER) {
            if (line_len <= 2) {
                c->chunk_phase = PHASE_END;
                c->done = 1;
            }
        }
        consume_in(c, line_len);
    }
    return 0;
}

int rc_read_body(rc_conn *c, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    for (;;) {
        if (decode(c) != 0)
            return -1;
        if (c->done)
            return 0;
        int r = fill(c, deadline, 1);
        if (r == 0)
            return c->framing == RC_FRAMING_CLOSE ? 0 : -1;
        if (r < 0)
            return -1;
    }
}

int rc_pump(rc_conn *c)
{
    for (;;) {
        int r = fill(c, 0, 0);
        if (r != 1)
            break;
    }
    return decode(c);
}

int rc_take(rc_conn *c, rc_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->retry = -1;
    if (c->sse == NULL && (c->sse = hc_sse_reader_new()) == NULL)
        return 0;
    hc_sse_event hev;
    size_t used = 0;
    int got = c->body_len ? hc_sse_reader_take(c->sse, c->body, c->body_len, &used, &hev) : 0;
    if (used > 0) {
        memmove(c->body, c->body + used, c->body_len - used);
        c->body_len -= used;
        c->body[c->body_len] = '\0';
    }
    if (got != 1)
        return 0;
    /* The strings move over; data is NULL when the block had no data line. */
    ev->id = hev.id;
    ev->event = hev.event;
    ev->data = hev.has_data ? hev.data : NULL;
    ev->retry = hev.retry;
    ev->comment = hev.comment;
    if (!hev.has_data)
        free(hev.data);
    free(hev.comment_text);
    return 1;
}

int rc_next(rc_conn *c, rc_event *ev, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    for (;;) {
        if (decode(c) != 0)
            return -1;
        if (rc_take(c, ev) == 1)
            return 1;
        if (c->done || c->eof)
            return 0;
        int r = fill(c, deadline, 1);
        if (r < 0)
            return -1;
    }
}

int rc_next_event(rc_conn *c, rc_event *ev, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    for (;;) {
        int r = rc_next(c, ev, left_ms(deadline));
        if (r != 1 || !ev->comment)
            return r;
        rc_event_free(ev);
    }
}

/* ---- MCP over HTTP ---- */

int rc_post(rc_conn *c, int port, const char *session, const char *body, int rcvbuf, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs),
             "Accept: application/json, text/event-stream\r\nContent-Type: "
             "application/json\r\n%s%s%s",
             session ? "Mcp-Session-Id: " : "", session ? session : "", session ? "\r\n" : "");
    if (rc_connect(c, port, rcvbuf, timeout_ms) != 0)
        return -1;
    if (rc_send_request(c, port, "POST", hdrs, body, left_ms(deadline)) != 0 ||
        rc_read_head(c, left_ms(deadline)) != 0) {
        rc_close(c);
        return -1;
    }
    return c->status;
}

int rc_get(rc_conn *c, int port, const char *session, const char *last_id, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    size_t n = 128 + (session ? strlen(session) : 0) + (last_id ? strlen(last_id) : 0);
    char *hdrs = malloc(n);
    if (hdrs == NULL)
        return -1;
    snprintf(hdrs, n, "Accept: text/event-stream\r\n%s%s%s%s%s%s",
             session ? "Mcp-Session-Id: " : "", session ? session : "", session ? "\r\n" : "",
             last_id ? "Last-Event-ID: " : "", last_id ? last_id : "", last_id ? "\r\n" : "");
    if (rc_connect(c, port, 0, timeout_ms) != 0) {
        free(hdrs);
        return -1;
    }
    int rc = rc_send_request(c, port, "GET", hdrs, NULL, left_ms(deadline));
    free(hdrs);
    if (rc != 0 || rc_read_head(c, left_ms(deadline)) != 0) {
        rc_close(c);
        return -1;
    }
    return c->status;
}

long long rc_id_seq(const char *id)
{
    const char *dash = id ? strrchr(id, '-') : NULL;
    if (dash == NULL || dash[1] == '\0')
        return -1;
    char *e;
    long long v = strtoll(dash + 1, &e, 10);
    return *e == '\0' ? v : -1;
}

long long rc_id_stream(const char *id)
{
    const char *first = id ? strchr(id, '-') : NULL;
    if (first == NULL)
        return -1;
    char *e;
    long long v = strtoll(first + 1, &e, 10);
    return *e == '-' ? v : -1;
}

long long rc_notification_number(const json_t *msg)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (method == NULL || strcmp(method, "notifications/message") != 0)
        return -1;
    const char *data = json_string_value(json_object_get(json_object_get(msg, "params"), "data"));
    if (data == NULL || strncmp(data, "notification ", 13) != 0)
        return -1;
    char *e;
    long long n = strtoll(data + 13, &e, 10);
    return *e == '\0' ? n : -1;
}

int rc_is_response(const json_t *msg, long long id)
{
    const json_t *mid = json_object_get(msg, "id");
    return json_object_get(msg, "method") == NULL && json_is_integer(mid) &&
           json_integer_value(mid) == id;
}

const char *rc_result_text(const json_t *msg)
{
    const json_t *content = json_object_get(json_object_get(msg, "result"), "content");
    return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

char *rc_call_body(long long id, const char *tool, const char *args_json, const char *token)
{
    char meta[160] = "";
    if (token != NULL)
        snprintf(meta, sizeof(meta), ",\"_meta\":{\"progressToken\":\"%s\"}", token);
    const char *fmt = "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"%s\",\"arguments\":%s%s}}";
    const char *args = args_json ? args_json : "{}";
    int n = snprintf(NULL, 0, fmt, id, tool, args, meta);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s != NULL)
        snprintf(s, (size_t)n + 1, fmt, id, tool, args, meta);
    return s;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay ? strstr(hay, needle) : NULL; p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

int rc_wait_stderr(hc_server *s, const char *needle, int count, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    int n;
    while ((n = count_of(s->err, needle)) < count && !s->err_eof && left_ms(deadline) > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ms = left_ms(deadline);
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (ms % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return n >= count ? n : -1;
}

/* ---- Following one tool call across its streams ---- */

void rc_call_init(rc_call *call, long long req_id, long long expect)
{
    memset(call, 0, sizeof(*call));
    call->req_id = req_id;
    call->expect = expect;
    call->next = 1;
    call->last_seq = -1;
    call->retry = -1;
}

void rc_call_free(rc_call *call)
{
    json_decref(call->result);
    free(call->last_id);
    call->result = NULL;
    call->last_id = NULL;
}

static int call_fail(rc_call *call, const char *fmt, const char *a, long long x, long long y)
{
    if (call->err[0] == '\0')
        snprintf(call->err, sizeof(call->err), fmt, a ? a : "", x, y);
    return -1;
}

/* The number of a numbered message, or -1. */
static long long message_number(const json_t *msg)
{
    long long n = rc_notification_number(msg);
    if (n >= 0)
        return n;
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (method != NULL && strcmp(method, "notifications/progress") == 0) {
        const json_t *p = json_object_get(json_object_get(msg, "params"), "progress");
        if (json_is_number(p))
            return (long long)json_number_value(p);
    }
    return -1;
}

int rc_call_feed(rc_call *call, const rc_event *ev)
{
    if (ev->comment)
        return 0;
    char shown[300];
    snprintf(shown, sizeof(shown), "id=%s data=%.220s", ev->id ? ev->id : "(none)",
             ev->data ? ev->data : "(none)");
    if (call->got_result)
        return call_fail(call, "an event after the response: %s (%lld %lld)", shown, 0, 0);
    if (ev->id != NULL) {
        long long seq = rc_id_seq(ev->id);
        if (seq < 0)
            return call_fail(call, "an event id without a numeric seq: %s (%lld %lld)", shown, 0,
                             0);
        if (seq <= call->last_seq)
            return call_fail(call, "event ids not strictly increasing: %s after seq %lld (%lld)",
                             shown, call->last_seq, 0);
        call->last_seq = seq;
        free(call->last_id);
        call->last_id = strdup(ev->id);
        if (call->last_id == NULL)
            return call_fail(call, "ENOMEM (%s %lld %lld)", "", 0, 0);
    }
    if (ev->retry >= 0)
        call->retry = ev->retry;
    if (rc_event_is_priming(ev) || ev->data == NULL || ev->data[0] == '\0') {
        call->primings++;
        return 0;
    }
    call->events++;
    json_t *msg = json_loads(ev->data, 0, NULL);
    if (msg == NULL)
        return call_fail(call, "event data that is not JSON: %s (%lld %lld)", shown, 0, 0);
    int rc = 0;
    long long n = message_number(msg);
    if (rc_is_response(msg, call->req_id)) {
        if (call->expect >= 0 && call->next != call->expect + 1)
            rc = call_fail(call,
                           "the response came (%s) after %lld numbered messages, "
                           "expected %lld",
                           NULL, call->next - 1, call->expect);
        call->got_result = 1;
        call->result = msg;
        return rc == 0 ? 1 : -1;
    }
    if (n < 0)
        rc = call_fail(call, "an unexpected message: %s (expected number %lld %lld)", shown,
                       call->next, 0);
    else if (n != call->next)
        rc = call_fail(call, "numbered message %s out of order: expected %lld, got %lld", shown,
                       call->next, n);
    else
        call->next++;
    json_decref(msg);
    return rc;
}

int rc_call_read(rc_conn *c, rc_call *call, int max_events, int timeout_ms)
{
    long long deadline = rc_now_ms() + timeout_ms;
    int processed = 0;
    for (;;) {
        if (max_events > 0 && processed >= max_events)
            return 2;
        rc_event ev;
        int r = rc_next(c, &ev, left_ms(deadline));
        if (r != 1)
            return r == 0 ? 0 : -1;
        if (!ev.comment)
            processed++;
        int f = rc_call_feed(call, &ev);
        rc_event_free(&ev);
        if (f < 0)
            return -2;
        if (f == 1)
            return 1;
    }
}

void rc_wait_retry(long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
