/* SPDX-License-Identifier: MIT */
/*
 * The loopback redirect listener of a native client (RFC 8252 §7.3): an HTTP
 * listener on 127.0.0.1 for the time of the browser step, which takes the one
 * request to /callback that carries the awaited state, answers the browser with
 * a short page, and hands the URL to the flow. Anything else is answered and
 * closed at once; a few connections at most, the oldest dropped for a new one,
 * so that no one can hold the listener from the real browser.
 */
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth_int.h"

/* Connections open at once. */
#define MAX_CONNS 8
/* A request's head: a callback's query is under this. */
#define HEAD_MAX 8192

typedef struct lb_conn lb_conn;
struct lb_conn {
    uv_tcp_t tcp;
    mcp__loopback *lb;
    char buf[HEAD_MAX];
    size_t len;
    int done; /* answered or closing: reads are ignored */
    uv_write_t wr;
    char out[512]; /* the answer, until written */
    lb_conn *prev, *next;
};

struct mcp__loopback {
    mcp_oauth *o;
    uv_tcp_t tcp;
    int port;
    int handles; /* open handles: the listener's and its connections' */
    int closing;
    lb_conn *conns; /* newest first */
    int nconns;
};

static void lb_release(mcp__loopback *lb)
{
    if (--lb->handles > 0)
        return;
    mcp_oauth *o = lb->o;
    free(lb);
    mcp__oauth_unref(o);
}

static void conn_closed(uv_handle_t *h)
{
    lb_conn *c = h->data;
    mcp__loopback *lb = c->lb;
    free(c);
    lb_release(lb);
}

static void conn_close(lb_conn *c)
{
    if (uv_is_closing((uv_handle_t *)&c->tcp))
        return;
    c->done = 1;
    MCP__LIST_UNLINK(c->lb->conns, c);
    c->lb->nconns--;
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void written(uv_write_t *w, int status)
{
    (void)status;
    conn_close(w->data);
}

static void answer(lb_conn *c, const char *status, const char *text)
{
    int n = snprintf(c->out, sizeof(c->out),
                     "HTTP/1.1 %s\r\nContent-Type: text/html; charset=utf-8\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n"
                     "%s",
                     status, strlen(text), text);
    c->done = 1;
    uv_buf_t b = uv_buf_init(c->out, (unsigned)n);
    c->wr.data = c;
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, written) != 0)
        conn_close(c);
}

static const char page_ok[] =
    "<!doctype html><title>Signed in</title><p>Signed in. You can close this window.";
static const char page_failed[] =
    "<!doctype html><title>Not signed in</title><p>The sign-in did not complete: the program "
    "says why.";
static const char page_bad[] =
    "<!doctype html><title>Not awaited</title><p>This is not the sign-in this program awaits.";

/* A whole head arrived: its request line says what it wants. */
static void request(lb_conn *c)
{
    mcp_oauth *o = c->lb->o;
    char *sp = memchr(c->buf, ' ', c->len);
    if (sp == NULL || strncmp(c->buf, "GET ", 4) != 0) {
        answer(c, "405 Method Not Allowed", page_bad);
        return;
    }
    char *target = sp + 1;
    char *end = memchr(target, ' ', c->len - (size_t)(target - c->buf));
    if (end == NULL) {
        answer(c, "400 Bad Request", page_bad);
        return;
    }
    *end = '\0';
    if (strncmp(target, "/callback", 9) != 0 || (target[9] != '?' && target[9] != '\0')) {
        answer(c, "404 Not Found", page_bad);
        return;
    }
    char *state = target[9] == '?' ? mcp__form_get(target + 10, "state", NULL) : NULL;
    int ours = state != NULL && o->state != NULL && strcmp(state, o->state) == 0;
    free(state);
    if (!ours) {
        answer(c, "400 Bad Request", page_bad);
        return;
    }
    char *url = mcp__asprintf("http://127.0.0.1:%d%s", c->lb->port, target);
    if (url == NULL) {
        answer(c, "500 Internal Server Error", page_failed);
        return;
    }
    /* The flow reads the answer (state, iss, error, code) now; the page says what came
     * of it. The listener may be stopped meanwhile: this connection stays for its page. */
    c->done = 1;
    mcp__oauth_flow_callback(o, url);
    free(url);
    answer(c, "200 OK", o->flow != OF_NONE && o->step == OS_TOKEN ? page_ok : page_failed);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)suggested;
    lb_conn *c = h->data;
    *b = uv_buf_init(c->buf + c->len, (unsigned)(HEAD_MAX - 1 - c->len));
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    (void)b;
    lb_conn *c = s->data;
    if (c->done)
        return;
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    if (strstr(c->buf, "\r\n\r\n") != NULL) {
        uv_read_stop(s);
        request(c);
    } else if (c->len >= HEAD_MAX - 1) {
        uv_read_stop(s);
        answer(c, "431 Request Header Fields Too Large", page_bad);
    }
}

static void accepted(uv_stream_t *server, int status)
{
    mcp__loopback *lb = server->data;
    if (status != 0 || lb->closing)
        return;
    lb_conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return;
    c->lb = lb;
    uv_tcp_init(lb->o->loop, &c->tcp);
    c->tcp.data = c;
    lb->handles++;
    MCP__LIST_PUSH(lb->conns, c);
    lb->nconns++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
        conn_close(c);
        return;
    }
    /* Too many: the oldest goes, so that idle connections never shut the browser out. */
    if (lb->nconns > MAX_CONNS) {
        lb_conn *old = lb->conns;
        while (old->next != NULL)
            old = old->next;
        conn_close(old);
    }
}

static void listener_closed(uv_handle_t *h)
{
    lb_release(h->data);
}

int mcp__loopback_start(mcp_oauth *o, int port, mcp__loopback **out)
{
    mcp__loopback *lb = calloc(1, sizeof(*lb));
    if (lb == NULL)
        return MCP_ENOMEM;
    lb->o = o;
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", port, &addr);
    uv_tcp_init(o->loop, &lb->tcp);
    lb->tcp.data = lb;
    lb->handles = 1;
    mcp__oauth_ref(o);
    struct sockaddr_storage bound;
    int blen = sizeof(bound);
    if (uv_tcp_bind(&lb->tcp, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&lb->tcp, MAX_CONNS, accepted) != 0 ||
        uv_tcp_getsockname(&lb->tcp, (struct sockaddr *)&bound, &blen) != 0) {
        lb->closing = 1;
        uv_close((uv_handle_t *)&lb->tcp, listener_closed);
        return MCP_EIO;
    }
    lb->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    *out = lb;
    return MCP_OK;
}

int mcp__loopback_port(const mcp__loopback *lb)
{
    return lb->port;
}

void mcp__loopback_stop(mcp__loopback *lb)
{
    if (lb == NULL || lb->closing)
        return;
    lb->closing = 1;
    /* A connection being answered stays until its page is written. */
    for (lb_conn *c = lb->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (!c->done)
            conn_close(c);
    }
    uv_close((uv_handle_t *)&lb->tcp, listener_closed);
}
