/* SPDX-License-Identifier: MIT */
/*
 * A scriptable raw HTTP/1.1 server for the client tests; see raw_server.h.
 */
#define _GNU_SOURCE
#include "raw_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* A request head or body larger than this closes the connection. */
#define RS_MAX_HEAD 65536
#define RS_MAX_BODY (4 * 1024 * 1024)

struct rs_conn {
    rs_server *s;
    int index;
    int fd;
    pthread_t thread;
    int ended; /* the thread is finished with fd */
    char *in;
    size_t in_len, in_cap;
    int close_after, reset_after;
    struct rs_conn *next;
};

struct rs_server {
    rs_listener l;
    rs_handler fn;
    void *user;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rs_conn *conns;
    int n_conns;
    rs_request **reqs;
    size_t n_reqs, cap_reqs;
};

/* ---- Requests ---- */

static void request_free(rs_request *r)
{
    hc_headers_free(r->headers, r->n_headers);
    free(r->method);
    free(r->path);
    free(r->body);
    json_decref(r->msg);
    free(r);
}

/* Parses a head (request line and headers, without the blank line). NULL when malformed. */
static rs_request *parse_head(const char *head, size_t len)
{
    rs_request *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    const char *end = head + len;
    const char *eol = memmem(head, len, "\r\n", 2);
    if (eol == NULL)
        eol = end;
    const char *sp1 = memchr(head, ' ', (size_t)(eol - head));
    const char *sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (sp2 == NULL)
        goto fail;
    r->method = strndup(head, (size_t)(sp1 - head));
    r->path = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    if (r->method == NULL || r->path == NULL)
        goto fail;
    for (const char *p = eol; p < end;) {
        p += 2;
        if (p >= end)
            break;
        const char *le = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (le == NULL)
            le = end;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon == NULL)
            goto fail;
        const char *v = colon + 1;
        while (v < le && (*v == ' ' || *v == '\t'))
            v++;
        hc_header *nh = realloc(r->headers, (r->n_headers + 1) * sizeof(*nh));
        if (nh == NULL)
            goto fail;
        r->headers = nh;
        nh[r->n_headers].name = strndup(p, (size_t)(colon - p));
        nh[r->n_headers].value = strndup(v, (size_t)(le - v));
        r->n_headers++;
        if (nh[r->n_headers - 1].name == NULL || nh[r->n_headers - 1].value == NULL)
            goto fail;
        p = le;
    }
    return r;
fail:
    request_free(r);
    return NULL;
}

const char *rs_header(const rs_request *req, const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

const char *rs_rpc_method(const rs_request *req)
{
    return json_string_value(json_object_get(req->msg, "method"));
}

int rs_is_call(const rs_request *req, const char *tool)
{
    const char *m = rs_rpc_method(req);
    const char *name =
        json_string_value(json_object_get(json_object_get(req->msg, "params"), "name"));
    return strcmp(req->method, "POST") == 0 && m != NULL && strcmp(m, "tools/call") == 0 &&
           name != NULL && strcmp(name, tool) == 0;
}

static int method_is(const rs_request *r, const char *method)
{
    return method == NULL || strcmp(r->method, method) == 0;
}

size_t rs_count(rs_server *s, const char *method)
{
    size_t n = 0;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_reqs; i++)
        n += method_is(s->reqs[i], method);
    pthread_mutex_unlock(&s->mu);
    return n;
}

const rs_request *rs_nth(rs_server *s, const char *method, size_t i)
{
    const rs_request *found = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t k = 0; k < s->n_reqs && found == NULL; k++)
        if (method_is(s->reqs[k], method) && i-- == 0)
            found = s->reqs[k];
    pthread_mutex_unlock(&s->mu);
    return found;
}

int rs_wait(rs_server *s, const char *method, size_t n, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    size_t have;
    for (;;) {
        have = 0;
        for (size_t i = 0; i < s->n_reqs; i++)
            have += method_is(s->reqs[i], method);
        if (have >= n || !harness_cond_wait_until(&s->cv, &s->mu, deadline))
            break;
    }
    pthread_mutex_unlock(&s->mu);
    return have >= n ? 0 : -1;
}

int rs_wait_done(rs_server *s, const rs_request *req, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    while (req->done_ms == 0 && harness_cond_wait_until(&s->cv, &s->mu, deadline))
        ;
    int done = req->done_ms != 0;
    pthread_mutex_unlock(&s->mu);
    return done ? 0 : -1;
}

static int record(rs_server *s, rs_request *r)
{
    pthread_mutex_lock(&s->mu);
    if (s->n_reqs == s->cap_reqs) {
        size_t ncap = s->cap_reqs ? s->cap_reqs * 2 : 64;
        rs_request **n = realloc(s->reqs, ncap * sizeof(*n));
        if (n == NULL) {
            pthread_mutex_unlock(&s->mu);
            return -1;
        }
        s->reqs = n;
        s->cap_reqs = ncap;
    }
    r->seq = (int)s->n_reqs + 1;
    s->reqs[s->n_reqs++] = r;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void mark_done(rs_server *s, rs_request *r)
{
    pthread_mutex_lock(&s->mu);
    r->done_ms = hc_now_ms();
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---- Connections ---- */

/*
 * Waits for fd to be ready for events, or for the server to stop. 1 when ready,
 * 0 at the deadline, -1 when the server stops. timeout_ms < 0: no deadline.
 */
static int wait_fd(rs_server *s, int fd, short events, int timeout_ms)
{
    struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = s->l.wake[0], .events = POLLIN}};
    for (;;) {
        int n = poll(p, 2, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || p[1].revents != 0)
            return -1;
        return n == 0 ? 0 : 1;
    }
}

/* Reads more of the client's bytes. 1 when some came, 0 at end of file, -1 otherwise. */
static int fill(rs_conn *c, long long deadline)
{
    if (harness_reserve(&c->in, &c->in_cap, c->in_len, 4096) != 0)
        return -1;
    for (;;) {
        int w = wait_fd(c->s, c->fd, POLLIN, deadline < 0 ? -1 : harness_left_ms(deadline));
        if (w <= 0)
            return -1;
        ssize_t r = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return 0;
        c->in_len += (size_t)r;
        c->in[c->in_len] = '\0';
        return 1;
    }
}

static void consume(rs_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

/* The next request on c, or NULL when the client closed, the server stops, or it is malformed. */
static rs_request *read_request(rs_conn *c)
{
    char *end;
    while ((end = c->in_len > 0 ? memmem(c->in, c->in_len, "\r\n\r\n", 4) : NULL) == NULL) {
        if (c->in_len > RS_MAX_HEAD || fill(c, -1) <= 0)
            return NULL;
    }
    long long at = hc_now_ms();
    size_t head_len = (size_t)(end - c->in);
    rs_request *r = parse_head(c->in, head_len);
    if (r == NULL)
        return NULL;
    r->at_ms = at;
    consume(c, head_len + 4);
    const char *cl = rs_header(r, "content-length");
    size_t body_len = cl != NULL ? strtoul(cl, NULL, 10) : 0;
    if (body_len > RS_MAX_BODY) {
        request_free(r);
        return NULL;
    }
    while (c->in_len < body_len)
        if (fill(c, -1) <= 0) {
            request_free(r);
            return NULL;
        }
    r->body = strndup(c->in, body_len);
    r->body_len = body_len;
    consume(c, body_len);
    if (r->body == NULL) {
        request_free(r);
        return NULL;
    }
    r->msg = body_len > 0 ? json_loadb(r->body, body_len, 0, NULL) : NULL;
    return r;
}

static void *conn_main(void *arg)
{
    rs_conn *c = arg;
    rs_server *s = c->s;
    for (;;) {
        rs_request *r = read_request(c);
        if (r == NULL)
            break;
        r->conn = c->index;
        if (record(s, r) != 0) {
            request_free(r);
            break;
        }
        s->fn(c, r, s->user);
        mark_done(s, r);
        if (c->close_after || c->reset_after)
            break;
    }
    if (c->reset_after) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    pthread_mutex_lock(&s->mu);
    close(c->fd);
    c->fd = -1;
    c->ended = 1;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void on_accept(void *user, int fd)
{
    rs_server *s = user;
    rs_conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(fd);
        return;
    }
    c->s = s;
    c->fd = fd;
    pthread_mutex_lock(&s->mu);
    c->index = ++s->n_conns;
    c->next = s->conns;
    s->conns = c;
    if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
        c->ended = 1;
        c->thread = 0;
        close(fd);
        c->fd = -1;
    }
    pthread_mutex_unlock(&s->mu);
}

int rs_start(rs_server **out, rs_handler fn, void *user)
{
    *out = NULL;
    rs_server *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -1;
    s->fn = fn;
    s->user = user;
    pthread_mutex_init(&s->mu, NULL);
    harness_cond_init_monotonic(&s->cv);
    if (rs_listener_start(&s->l, on_accept, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int rs_port(const rs_server *s)
{
    return s->l.port;
}

void rs_url(const rs_server *s, char *buf, size_t size)
{
    snprintf(buf, size, "http://127.0.0.1:%d/mcp", s->l.port);
}

void rs_stop(rs_server *s)
{
    if (s == NULL)
        return;
    rs_listener_stop(&s->l);
    /* No connection is accepted any more: s->conns is stable. */
    for (rs_conn *c = s->conns; c != NULL; c = c->next) {
        pthread_mutex_lock(&s->mu);
        if (!c->ended)
            shutdown(c->fd, SHUT_RDWR);
        pthread_mutex_unlock(&s->mu);
        if (c->thread != 0)
            pthread_join(c->thread, NULL);
    }
    while (s->conns != NULL) {
        rs_conn *c = s->conns;
        s->conns = c->next;
        free(c->in);
        free(c);
    }
    for (size_t i = 0; i < s->n_reqs; i++)
        request_free(s->reqs[i]);
    free(s->reqs);
    rs_listener_close(&s->l);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- The listener ---- */

static void *listener_main(void *arg)
{
    rs_listener *l = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = l->fd, .events = POLLIN},
                              {.fd = l->wake[0], .events = POLLIN}};
        int n = poll(p, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || p[1].revents != 0)
            break;
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            break;
        }
        /* Small writes go out at once, as a server's flushed events do. */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        l->on_accept(l->user, fd);
    }
    return NULL;
}

int rs_listener_start(rs_listener *l, void (*on_accept)(void *user, int fd), void *user)
{
    signal(SIGPIPE, SIG_IGN);
    memset(l, 0, sizeof(*l));
    l->wake[0] = l->wake[1] = -1;
    l->on_accept = on_accept;
    l->user = user;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0 || pipe2(l->wake, O_CLOEXEC) != 0 ||
        bind(l->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l->fd, 128) != 0 ||
        getsockname(l->fd, (struct sockaddr *)&a, &alen) != 0 ||
        pthread_create(&l->thread, NULL, listener_main, l) != 0) {
        rs_listener_close(l);
        return -1;
    }
    l->port = ntohs(a.sin_port);
    return 0;
}

void rs_listener_stop(rs_listener *l)
{
    if (write(l->wake[1], "x", 1) != 1)
        perror("rs_listener_stop: write");
    pthread_join(l->thread, NULL);
}

void rs_listener_close(rs_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    for (int i = 0; i < 2; i++)
        if (l->wake[i] >= 0)
            close(l->wake[i]);
    l->fd = l->wake[0] = l->wake[1] = -1;
}

/* ---- Answering ---- */

int rs_write(rs_conn *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = send(c->fd, data, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            if (wait_fd(c->s, c->fd, POLLOUT, -1) <= 0)
                return -1;
            continue;
        }
        if (w <= 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 500:
        return "Internal Server Error";
    default:
        return "Status";
    }
}

int rs_respond(rs_conn *c, int status, const char *headers, const char *body)
{
    size_t blen = body != NULL ? strlen(body) : 0;
    char head[2048];
    int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n%sContent-Length: %zu\r\n\r\n", status,
                     reason(status), headers != NULL ? headers : "", blen);
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    if (rs_write(c, head, (size_t)n) != 0)
        return -1;
    return blen > 0 ? rs_write(c, body, blen) : 0;
}

int rs_sse_head(rs_conn *c, const char *headers)
{
    char head[2048];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: "
                     "no-cache\r\nTransfer-Encoding: chunked\r\n%s\r\n",
                     headers != NULL ? headers : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    return rs_write(c, head, (size_t)n);
}

static int chunk_n(rs_conn *c, const char *text, size_t len)
{
    char size[32];
    int n = snprintf(size, sizeof(size), "%zx\r\n", len);
    if (rs_write(c, size, (size_t)n) != 0 || rs_write(c, text, len) != 0)
        return -1;
    return rs_write(c, "\r\n", 2);
}

int rs_chunk(rs_conn *c, const char *text)
{
    size_t len = strlen(text);
    return len > 0 ? chunk_n(c, text, len) : 0;
}

int rs_chunk_trickle(rs_conn *c, const char *text, int gap_ms)
{
    for (const char *p = text; *p != '\0'; p++) {
        if (p != text && rs_pause(c, gap_ms) != 0)
            return -1;
        if (chunk_n(c, p, 1) != 0)
            return -1;
    }
    return 0;
}

int rs_sse_end(rs_conn *c)
{
    return rs_write(c, "0\r\n\r\n", 5);
}

int rs_sse_event(rs_conn *c, const char *id, long retry, const char *data)
{
    size_t len = 64 + (id != NULL ? strlen(id) : 0) + (data != NULL ? strlen(data) : 0);
    char *ev = malloc(len);
    if (ev == NULL)
        return -1;
    size_t n = 0;
    if (id != NULL)
        n += (size_t)snprintf(ev + n, len - n, "id: %s\n", id);
    if (retry >= 0)
        n += (size_t)snprintf(ev + n, len - n, "retry: %ld\n", retry);
    if (data != NULL)
        n += (size_t)snprintf(ev + n, len - n, "data: %s\n", data);
    snprintf(ev + n, len - n, "\n");
    int rc = rs_chunk(c, ev);
    free(ev);
    return rc;
}

void rs_close_after(rs_conn *c)
{
    c->close_after = 1;
}

void rs_reset_after(rs_conn *c)
{
    c->reset_after = 1;
}

int rs_pause(rs_conn *c, int ms)
{
    long long deadline = hc_now_ms() + ms;
    for (;;) {
        struct pollfd p = {.fd = c->s->l.wake[0], .events = POLLIN};
        int left = harness_left_ms(deadline);
        if (left == 0)
            return 0;
        int n = poll(&p, 1, left);
        if (n > 0)
            return -1;
    }
}

int rs_wait_peer_close(rs_conn *c, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    for (;;) {
        int w = wait_fd(c->s, c->fd, POLLIN, harness_left_ms(deadline));
        if (w <= 0)
            return -1;
        char buf[4096];
        ssize_t r = read(c->fd, buf, sizeof(buf));
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) {
            c->close_after = 1;
            return 0;
        }
    }
}

/* ---- MCP ---- */

int rs_mcp_initialize(rs_conn *c, const rs_request *req, const char *session)
{
    json_t *answer =
        json_pack("{s:s, s:O, s:{s:s, s:{s:{}}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id",
                  json_object_get(req->msg, "id"), "result", "protocolVersion", "2025-11-25",
                  "capabilities", "tools", "serverInfo", "name", "raw", "version", "1");
    char *text = answer != NULL ? json_dumps(answer, JSON_COMPACT) : NULL;
    json_decref(answer);
    char head[1024];
    snprintf(head, sizeof(head), "Content-Type: application/json\r\nMcp-Session-Id: %s\r\n",
             session);
    int rc = rs_respond(c, 200, head, text);
    free(text);
    return rc;
}

int rs_mcp_basic(rs_conn *c, const rs_request *req)
{
    if (strcmp(req->method, "DELETE") == 0)
        return rs_respond(c, 200, NULL, NULL), 1;
    if (strcmp(req->method, "GET") == 0 && rs_header(req, "last-event-id") == NULL)
        return rs_respond(c, 405, "Allow: POST, DELETE\r\n", NULL), 1;
    if (strcmp(req->method, "POST") != 0)
        return 0;
    const char *m = rs_rpc_method(req);
    json_t *id = json_object_get(req->msg, "id");
    if (m != NULL && strcmp(m, "initialize") == 0) {
        rs_mcp_initialize(c, req, RS_SESSION);
        return 1;
    }
    if (m == NULL || id == NULL) {
        rs_respond(c, 202, NULL, NULL); /* a notification or a response */
        return 1;
    }
    return 0;
}

char *rs_call_result(const rs_request *req, const char *text)
{
    json_t *answer = json_pack("{s:s, s:O, s:{s:[{s:s, s:s}]}}", "jsonrpc", "2.0", "id",
                               json_object_get(req->msg, "id"), "result", "content", "type", "text",
                               "text", text);
    char *s = answer != NULL ? json_dumps(answer, JSON_COMPACT) : NULL;
    json_decref(answer);
    return s;
}

char *rs_log_message(const char *text)
{
    json_t *note = json_pack("{s:s, s:s, s:{s:s, s:s}}", "jsonrpc", "2.0", "method",
                             "notifications/message", "params", "level", "info", "data", text);
    char *s = note != NULL ? json_dumps(note, JSON_COMPACT) : NULL;
    json_decref(note);
    return s;
}
