/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the HTTP/1.1 server layer (src/http/), over real loopback
 * sockets. The server runs on a libuv loop in a thread of its own; the test
 * speaks HTTP to it with plain blocking sockets whose every read has a
 * deadline (SO_RCVTIMEO), and waits for server-side events on a condition
 * variable, with a deadline too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "http/http.h"

#define DEADLINE_MS 5000

/* ---- The server side: a loop in a thread, and a handler for every test ---- */

typedef struct fx fx;
typedef void (*loop_fn)(fx *f, void *arg);

struct fx {
    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t async;
    uv_mutex_t mu;
    uv_cond_t cv;
    mcp__http_server *srv;
    int port;
    loop_fn cmd;
    void *cmd_arg;
    int cmd_pending;
    int stopped;
    /* Counters and results, under mu. */
    int requests;
    int closes;
    int release_on_close;
    mcp__http_req *held;
    int rc[8];
    size_t n;
};

static void fx_signal(fx *f)
{
    uv_cond_broadcast(&f->cv);
}

/* Waits until *value >= want, at most DEADLINE_MS. Returns the last value. */
static int fx_wait(fx *f, const int *value, int want)
{
    uint64_t end = uv_hrtime() + (uint64_t)DEADLINE_MS * 1000000u;
    uv_mutex_lock(&f->mu);
    while (*value < want) {
        uint64_t now = uv_hrtime();
        if (now >= end || uv_cond_timedwait(&f->cv, &f->mu, end - now) != 0)
            if (uv_hrtime() >= end)
                break;
    }
    int v = *value;
    uv_mutex_unlock(&f->mu);
    return v;
}

static void on_async(uv_async_t *a)
{
    fx *f = a->data;
    uv_mutex_lock(&f->mu);
    loop_fn cmd = f->cmd;
    void *arg = f->cmd_arg;
    f->cmd = NULL;
    uv_mutex_unlock(&f->mu);
    if (!cmd)
        return;
    cmd(f, arg);
    uv_mutex_lock(&f->mu);
    f->cmd_pending = 0;
    fx_signal(f);
    uv_mutex_unlock(&f->mu);
}

/* Runs fn(f, arg) on the loop thread and waits for it to return. */
static void on_loop(fx *f, loop_fn fn, void *arg)
{
    uv_mutex_lock(&f->mu);
    f->cmd = fn;
    f->cmd_arg = arg;
    f->cmd_pending = 1;
    uv_mutex_unlock(&f->mu);
    uv_async_send(&f->async);
    uint64_t end = uv_hrtime() + (uint64_t)DEADLINE_MS * 1000000u;
    uv_mutex_lock(&f->mu);
    while (f->cmd_pending && uv_hrtime() < end)
        (void)uv_cond_timedwait(&f->cv, &f->mu, end - uv_hrtime());
    int pending = f->cmd_pending;
    uv_mutex_unlock(&f->mu);
    assert_int_equal(pending, 0);
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

static void on_held_close(void *arg, mcp__http_req *req)
{
    fx *f = arg;
    uv_mutex_lock(&f->mu);
    f->closes++;
    int release = f->release_on_close;
    if (release && f->held == req)
        f->held = NULL;
    fx_signal(f);
    uv_mutex_unlock(&f->mu);
    if (release)
        mcp__http_req_release(req);
}

static void send_stream(mcp__http_req *req)
{
    static const char *const hdrs[] = {"Content-Type", "text/event-stream", NULL};
    mcp__http_stream_begin(req, 200, hdrs);
    mcp__http_stream_write(req, "data: 1\n\n", 9);
    mcp__http_stream_write(req, "", 0);
    mcp__http_stream_write(req, "data: 2\n\n", 9);
    mcp__http_stream_write(req, "data: 3\n\n", 9);
    mcp__http_stream_end(req);
}

/*
 * /hold and /stream-hold keep the request for the test to finish later;
 * /stream streams three events; everything else echoes
 * "METHOD path query x-test body".
 */
static void on_request(void *user, mcp__http_req *req)
{
    fx *f = user;
    const char *path = mcp__http_req_path(req);
    int hold = strcmp(path, "/hold") == 0, stream_hold = strcmp(path, "/stream-hold") == 0;
    uv_mutex_lock(&f->mu);
    if (hold || stream_hold)
        f->held = req;
    f->requests++;
    fx_signal(f);
    uv_mutex_unlock(&f->mu);

    if (hold)
        return;
    if (stream_hold) {
        static const char *const hdrs[] = {"Content-Type", "text/event-stream", NULL};
        mcp__http_req_on_close(req, on_held_close, f);
        mcp__http_stream_begin(req, 200, hdrs);
        mcp__http_stream_write(req, "data: first\n\n", 13);
        return;
    }
    if (strcmp(path, "/stream") == 0) {
        send_stream(req);
        return;
    }
    if (strcmp(path, "/headers") == 0) {
        /* Every header as name=value; in arrival order. */
        char out[2048] = "";
        size_t used = 0;
        const char *name, *value;
        for (size_t i = 0;
             used < sizeof out && mcp__http_header_at(req, i, &name, &value) == MCP_OK; i++)
            used += (size_t)snprintf(out + used, sizeof out - used, "%s=%s;", name, value);
        /* No cmocka asserts on the loop thread: a wrong answer shows in the body. */
        if (mcp__http_header_at(req, mcp__http_header_count(req), &name, &value) != MCP_ENOENT)
            snprintf(out, sizeof out, "header_at past the end did not fail");
        mcp__http_respond(req, 200, NULL, out, strlen(out));
        return;
    }
    size_t len;
    const char *body = mcp__http_req_body(req, &len);
    char out[8192];
    int n = snprintf(out, sizeof out, "%s %s %s %s %.*s", mcp__http_req_method_name(req), path,
                     or_dash(mcp__http_req_query(req)), or_dash(mcp__http_header(req, "X-TEST")),
                     (int)len, body);
    static const char *const hdrs[] = {"Content-Type", "text/plain", NULL};
    mcp__http_respond(req, 200, hdrs, out, (size_t)n);
}

static void loop_thread(void *arg)
{
    fx *f = arg;
    uv_run(&f->loop, UV_RUN_DEFAULT);
}

static fx *fx_start(const mcp__http_opts *base)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(uv_mutex_init(&f->mu), 0);
    assert_int_equal(uv_cond_init(&f->cv), 0);
    assert_int_equal(uv_async_init(&f->loop, &f->async, on_async), 0);
    f->async.data = f;
    mcp__http_opts o = base ? *base : (mcp__http_opts){0};
    o.host = "127.0.0.1";
    o.port = 0;
    o.on_request = on_request;
    o.user = f;
    assert_int_equal(mcp__http_server_start(&f->loop, &o, &f->srv), MCP_OK);
    f->port = mcp__http_server_port(f->srv);
    assert_true(f->port > 0);
    assert_int_equal(uv_thread_create(&f->thread, loop_thread, f), 0);
    return f;
}

static void on_stopped(void *arg)
{
    fx *f = arg;
    uv_close((uv_handle_t *)&f->async, NULL);
    uv_mutex_lock(&f->mu);
    f->stopped = 1;
    fx_signal(f);
    uv_mutex_unlock(&f->mu);
}

static void do_stop(fx *f, void *arg)
{
    (void)arg;
    mcp__http_server_stop(f->srv, on_stopped, f);
    mcp__http_server_stop(f->srv, on_stopped, f); /* a second call is a no-op */
}

/* Stops the server, checks that every handle is closed, frees the fixture. */
static void fx_stop(fx *f)
{
    /* The command completes (and the async handle is closed by on_stopped)
     * on the loop thread; the loop ends when nothing is left. */
    uv_mutex_lock(&f->mu);
    f->cmd = do_stop;
    f->cmd_pending = 1;
    uv_mutex_unlock(&f->mu);
    uv_async_send(&f->async);
    assert_int_equal(fx_wait(f, &f->stopped, 1), 1);
    assert_int_equal(uv_thread_join(&f->thread), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    uv_mutex_destroy(&f->mu);
    uv_cond_destroy(&f->cv);
    free(f);
}

static void get_connections(fx *f, void *arg)
{
    *(size_t *)arg = mcp__http_server_connections(f->srv);
}

/* ---- The client side: blocking sockets with deadlines ---- */

typedef struct cli {
    int fd;
    char buf[65536];
    size_t len;
} cli;

typedef struct resp {
    int status;
    char head[4096];
    char body[16384];
    size_t body_len;
} resp;

static cli *cli_open(int port)
{
    cli *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(c->fd >= 0);
    struct timeval tv = {DEADLINE_MS / 1000, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof a), 0);
    return c;
}

static void cli_free(cli *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

static void cli_send(cli *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        assert_true(n > 0);
        data += n;
        len -= (size_t)n;
    }
}

static void cli_sends(cli *c, const char *s)
{
    cli_send(c, s, strlen(s));
}

/* Reads more bytes: >0 read, 0 EOF, -1 error or deadline. */
static ssize_t cli_fill(cli *c)
{
    if (c->len == sizeof c->buf)
        return -1;
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
    if (n > 0)
        c->len += (size_t)n;
    return n < 0 ? -1 : n;
}

static void cli_consume(cli *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* Offset just past the first `delim` in the buffer, reading as needed; 0 on failure. */
static size_t cli_until(cli *c, const char *delim)
{
    size_t dl = strlen(delim);
    for (;;) {
        char *p = memmem(c->buf, c->len, delim, dl);
        if (p)
            return (size_t)(p - c->buf) + dl;
        if (cli_fill(c) <= 0)
            return 0;
    }
}

static int cli_need(cli *c, size_t n)
{
    while (c->len < n)
        if (cli_fill(c) <= 0)
            return -1;
    return 0;
}

/* Value of header `name` in a response head, copied to out; 0 when found. */
static int head_value(const char *head, const char *name, char *out, size_t out_len)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = strcspn(v, "\r");
            if (vl >= out_len)
                vl = out_len - 1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 0;
        }
    }
    return -1;
}

/* Reads a status line and headers. 0 on success. */
static int cli_head(cli *c, resp *r)
{
    memset(r, 0, sizeof *r);
    size_t end = cli_until(c, "\r\n\r\n");
    if (end == 0 || end >= sizeof r->head)
        return -1;
    memcpy(r->head, c->buf, end);
    r->head[end] = '\0';
    cli_consume(c, end);
    if (sscanf(r->head, "HTTP/1.%*d %d", &r->status) != 1)
        return -1;
    return 0;
}

static int body_append(resp *r, const char *p, size_t n)
{
    if (r->body_len + n >= sizeof r->body)
        return -1;
    memcpy(r->body + r->body_len, p, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return 0;
}

/* Reads one chunk into r->body (appending). Returns its size, 0 for the last, -1 on error. */
static long cli_chunk(cli *c, resp *r)
{
    size_t line = cli_until(c, "\r\n");
    if (line == 0)
        return -1;
    long size = strtol(c->buf, NULL, 16);
    cli_consume(c, line);
    if (size < 0 || cli_need(c, (size_t)size + 2) != 0)
        return -1;
    if (size > 0 && body_append(r, c->buf, (size_t)size) != 0)
        return -1;
    cli_consume(c, (size_t)size + 2);
    return size;
}

/* Reads a whole response (no body for HEAD, 1xx, 204, 304). 0 on success. */
static int cli_response_ex(cli *c, resp *r, int head_only)
{
    if (cli_head(c, r) != 0)
        return -1;
    char v[64];
    if (head_only || r->status < 200 || r->status == 204 || r->status == 304)
        return 0;
    if (head_value(r->head, "transfer-encoding", v, sizeof v) == 0) {
        long n;
        while ((n = cli_chunk(c, r)) > 0)
            ;
        return n == 0 ? 0 : -1;
    }
    if (head_value(r->head, "content-length", v, sizeof v) == 0) {
        size_t n = strtoul(v, NULL, 10);
        if (cli_need(c, n) != 0 || body_append(r, c->buf, n) != 0)
            return -1;
        cli_consume(c, n);
        return 0;
    }
    /* Delimited by the close. */
    while (cli_fill(c) > 0)
        ;
    if (body_append(r, c->buf, c->len) != 0)
        return -1;
    c->len = 0;
    return 0;
}

static int cli_response(cli *c, resp *r)
{
    return cli_response_ex(c, r, 0);
}

/* True when the server closes the connection (EOF or reset) before the
 * deadline; bytes that arrive first are kept in the buffer. */
static int cli_closed(cli *c)
{
    for (;;) {
        if (c->len == sizeof c->buf)
            cli_consume(c, c->len);
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == ECONNRESET;
        c->len += (size_t)n;
    }
}

/* One GET on c, expecting 200 and the echo of it. */
static void get_echo(cli *c, const char *target)
{
    char req[512], want[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", target);
    cli_sends(c, req);
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    const char *q = strchr(target, '?');
    snprintf(want, sizeof want, "GET %.*s %s - ", (int)(q ? (size_t)(q - target) : strlen(target)),
             target, q ? q + 1 : "-");
    assert_string_equal(r.body, want);
}

/* Expects a response with `status` and then the close. */
static void expect_status_then_close(cli *c, int status)
{
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, status);
    assert_non_null(strstr(r.head, "Connection: close\r\n"));
    assert_true(cli_closed(c));
}

/* ---- Tests ---- */

static void test_get_and_post_with_content_length(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    resp r;
    char v[128];

    cli_sends(c, "GET /echo?a=1&b=2 HTTP/1.1\r\nHost: t\r\nX-Test:   Hello  \r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "GET /echo a=1&b=2 Hello ");
    assert_int_equal(head_value(r.head, "content-length", v, sizeof v), 0);
    assert_string_equal(v, "24");
    assert_int_equal(head_value(r.head, "content-type", v, sizeof v), 0);
    assert_string_equal(v, "text/plain");
    assert_int_equal(head_value(r.head, "date", v, sizeof v), 0);
    assert_non_null(strstr(v, " GMT"));

    cli_sends(c, "POST http://t/echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "POST /echo - - hello");

    cli_free(c);
    fx_stop(f);
}

static void test_headers_are_lowercased_and_kept_in_order(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    resp r;
    cli_sends(c, "GET /headers HTTP/1.1\r\nHost: t\r\nX-Rep: 1\r\nx-rep:2 \r\nEmpty:\r\n"
                 "Accept: text/event-stream\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_string_equal(r.body, "host=t;x-rep=1;x-rep=2;empty=;accept=text/event-stream;");
    cli_sends(c, "OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_string_equal(r.body, "OPTIONS * - - ");
    cli_free(c);
    fx_stop(f);
}

static void flood_then_abort(fx *f, void *arg)
{
    (void)arg;
    static char chunk[256 * 1024];
    mcp__http_req *req = f->held;
    f->rc[0] = MCP_OK;
    f->n = 0;
    /* The client does not read: sooner or later the socket stops taking data. */
    for (int i = 0; i < 400 && f->n == 0 && f->rc[0] == MCP_OK; i++) {
        f->rc[0] = mcp__http_stream_write(req, chunk, sizeof chunk);
        f->n = mcp__http_stream_queued(req);
    }
    mcp__http_req_abort(req);
    f->held = NULL;
}

static void test_slow_reader_shows_in_queued_bytes_and_can_be_aborted(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    cli_sends(c, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 1), 1);
    on_loop(f, flood_then_abort, NULL);
    assert_int_equal(f->rc[0], MCP_OK);
    assert_true(f->n > 0);
    assert_true(cli_closed(c));
    assert_int_equal(f->closes, 0); /* abort is the owner's own doing: no on_close */
    cli_free(c);
    fx_stop(f);
}

/* Writes 16 KiB pieces to req until at least `want` bytes wait in our queue (the
 * client reads nothing); the bytes queued, or 0 when the socket kept taking them. */
static size_t queue_at_least(mcp__http_req *req, size_t want)
{
    static char piece[16 * 1024];
    size_t queued = 0;
    for (int i = 0; i < 2000 && queued < want; i++) {
        if (mcp__http_stream_write(req, piece, sizeof piece) != MCP_OK)
            return 0;
        queued = mcp__http_stream_queued(req);
    }
    return queued >= want ? queued : 0;
}

static void flood_two_past_the_budget(fx *f, void *arg)
{
    mcp__http_req **two = arg;
    /* A budget of 1 MiB: the first 600 KiB behind, the second 200 KiB, then 250 KiB
     * more (450 KiB, still less than the first). */
    f->rc[0] = queue_at_least(two[0], 600 * 1024) > 0;
    f->rc[1] = queue_at_least(two[1], 200 * 1024) > 0;
    f->rc[2] = mcp__http_req_closed(two[0]) || mcp__http_req_closed(two[1]);
    f->rc[3] = queue_at_least(two[1], 450 * 1024) > 0;
}

static void check_two_after_the_cut(fx *f, void *arg)
{
    mcp__http_req **two = arg;
    f->rc[4] = mcp__http_req_closed(two[0]);
    f->rc[5] = mcp__http_req_closed(two[1]);
    f->rc[6] = mcp__http_stream_queued(two[1]) > 0;
    mcp__http_req_release(two[0]);
    mcp__http_req_abort(two[1]);
}

/* Two clients, a and b, each with a held stream (two[0], two[1]) of the server's. */
static void open_two_streams(fx *f, cli **a, cli **b, mcp__http_req *two[2])
{
    *a = cli_open(f->port);
    *b = cli_open(f->port);
    cli_sends(*a, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 1), 1);
    two[0] = f->held;
    cli_sends(*b, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 2), 2);
    two[1] = f->held;
    f->held = NULL;
}

/*
 * Past the server-wide budget of queued bytes (max_queued_total), the connection
 * furthest behind is cut, at the next loop turn (its on_close runs), and only as many
 * as bring the total back under the budget: the other one, less behind, stays.
 */
static void test_budget_cuts_the_connection_furthest_behind_first(void **state)
{
    (void)state;
    mcp__http_opts o = {.max_queued_total = 1 << 20};
    fx *f = fx_start(&o);
    cli *a, *b;
    mcp__http_req *two[2];
    open_two_streams(f, &a, &b, two);
    on_loop(f, flood_two_past_the_budget, two);
    assert_true(f->rc[0]);
    assert_true(f->rc[1]);
    assert_false(f->rc[2]); /* under the budget: nobody cut */
    assert_true(f->rc[3]);
    assert_int_equal(fx_wait(f, &f->closes, 1), 1);
    on_loop(f, check_two_after_the_cut, two);
    assert_true(f->rc[4]);  /* the one furthest behind was cut */
    assert_false(f->rc[5]); /* the other one is still served */
    assert_true(f->rc[6]);
    assert_int_equal(f->closes, 1);
    assert_true(cli_closed(a));
    cli_free(a);
    cli_free(b);
    fx_stop(f);
}

static void queue_on_first(fx *f, void *arg)
{
    mcp__http_req **two = arg;
    f->rc[0] = queue_at_least(two[0], 300 * 1024) > 0;
}

static void queue_more_on_second(fx *f, void *arg)
{
    mcp__http_req **two = arg;
    f->rc[1] = queue_at_least(two[1], 800 * 1024) > 0;
}

/*
 * A connection whose reader took nothing for a second is cut before one whose backlog
 * just began, however much larger that one is: a client reading a large answer is not
 * cut in place of one that reads nothing (the largest backlog alone would pick it).
 */
static void test_budget_cuts_a_stalled_connection_before_a_larger_fresh_one(void **state)
{
    (void)state;
    mcp__http_opts o = {.max_queued_total = 1 << 20};
    fx *f = fx_start(&o);
    cli *a, *b;
    mcp__http_req *two[2];
    open_two_streams(f, &a, &b, two);
    on_loop(f, queue_on_first, two);
    assert_true(f->rc[0]);
    /* What makes the first stalled is time without progress: a second of it. */
    poll(NULL, 0, 1200);
    on_loop(f, queue_more_on_second, two);
    assert_true(f->rc[1]);
    assert_int_equal(fx_wait(f, &f->closes, 1), 1);
    on_loop(f, check_two_after_the_cut, two);
    assert_true(f->rc[4]);  /* the stalled one was cut */
    assert_false(f->rc[5]); /* the larger, fresh one is still served */
    assert_int_equal(f->closes, 1);
    assert_true(cli_closed(a));
    cli_free(a);
    cli_free(b);
    fx_stop(f);
}

static void test_chunked_request_body_is_decoded(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    resp r;
    /* Split mid-chunk: the body streams in over two reads. */
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
    cli_sends(c, "lo\r\n6\r\n world\r\n0\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "POST /echo - - hello world");
    /* Trailer fields are not taken for header fields. */
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "2\r\nok\r\n0\r\nX-Test: trailer\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_string_equal(r.body, "POST /echo - - ok");
    cli_free(c);
    fx_stop(f);
}

static void test_keep_alive_reuses_one_connection(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    get_echo(c, "/one");
    get_echo(c, "/two?x");
    get_echo(c, "/three");
    size_t n = 0;
    on_loop(f, get_connections, &n);
    assert_int_equal(n, 1);
    assert_int_equal(f->requests, 3);
    cli_free(c);
    fx_stop(f);
}

static void respond_held(fx *f, void *arg)
{
    f->rc[0] = f->requests; /* the pipelined second request must still wait */
    f->rc[1] = mcp__http_respond(f->held, 200, NULL, arg, strlen(arg));
    f->held = NULL;
}

static void test_pipelined_requests_are_answered_in_order(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    cli_sends(c, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"
                 "GET /echo?second HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 1), 1);
    on_loop(f, respond_held, "first");
    assert_int_equal(f->rc[0], 1);
    assert_int_equal(f->rc[1], MCP_OK);
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_string_equal(r.body, "first");
    assert_int_equal(cli_response(c, &r), 0);
    assert_string_equal(r.body, "GET /echo second - ");
    assert_int_equal(f->requests, 2);
    cli_free(c);
    fx_stop(f);
}

static void test_streamed_response_sends_chunks_then_ends(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    resp r;
    char v[64];
    cli_sends(c, "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_head(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(head_value(r.head, "transfer-encoding", v, sizeof v), 0);
    assert_string_equal(v, "chunked");
    assert_int_equal(head_value(r.head, "content-type", v, sizeof v), 0);
    assert_string_equal(v, "text/event-stream");
    assert_int_equal(cli_chunk(c, &r), 9);
    assert_string_equal(r.body, "data: 1\n\n");
    assert_int_equal(cli_chunk(c, &r), 9);
    assert_int_equal(cli_chunk(c, &r), 9);
    assert_int_equal(cli_chunk(c, &r), 0);
    assert_string_equal(r.body, "data: 1\n\ndata: 2\n\ndata: 3\n\n");
    /* The connection is still good for another request. */
    get_echo(c, "/after");
    cli_free(c);

    /* HTTP/1.0 has no chunked coding: the body ends with the connection. */
    c = cli_open(f->port);
    cli_sends(c, "GET /stream HTTP/1.0\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(head_value(r.head, "transfer-encoding", v, sizeof v), -1);
    assert_string_equal(r.body, "data: 1\n\ndata: 2\n\ndata: 3\n\n");
    cli_free(c);
    fx_stop(f);
}

static void write_after_close(fx *f, void *arg)
{
    (void)arg;
    mcp__http_req *req = f->held;
    f->rc[0] = mcp__http_req_closed(req);
    f->rc[1] = mcp__http_stream_write(req, "data: late\n\n", 12);
    f->rc[2] = (int)mcp__http_stream_queued(req);
    f->rc[3] = strcmp(mcp__http_req_path(req), "/stream-hold"); /* still readable */
    f->rc[4] = mcp__http_stream_end(req);
    f->held = NULL;
}

static void test_client_drop_during_stream_fires_on_close(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    resp r;
    cli_sends(c, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_head(c, &r), 0);
    assert_int_equal(cli_chunk(c, &r), 13);
    assert_string_equal(r.body, "data: first\n\n");
    cli_free(c); /* the client leaves mid-stream */
    assert_int_equal(fx_wait(f, &f->closes, 1), 1);
    on_loop(f, write_after_close, NULL);
    assert_true(f->rc[0]);
    assert_int_equal(f->rc[1], MCP_ECLOSED);
    assert_int_equal(f->rc[2], 0);
    assert_int_equal(f->rc[3], 0);
    assert_int_equal(f->rc[4], MCP_ECLOSED);
    assert_int_equal(f->closes, 1);
    fx_stop(f);
}

static void test_header_too_large_gets_431(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_header_bytes = 1024});
    cli *c = cli_open(f->port);
    char big[4200];
    memset(big, 'a', sizeof big);
    cli_sends(c, "GET /echo HTTP/1.1\r\nHost: t\r\nX-Big: ");
    cli_send(c, big, sizeof big);
    cli_sends(c, "\r\n\r\n");
    expect_status_then_close(c, 431);
    cli_free(c);

    /* Just under the limit is fine. */
    c = cli_open(f->port);
    cli_sends(c, "GET /echo HTTP/1.1\r\nHost: t\r\nX-Big: ");
    cli_send(c, big, 900);
    cli_sends(c, "\r\n\r\n");
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    cli_free(c);
    fx_stop(f);
}

static void test_body_too_large_gets_413(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_body_bytes = 1000});
    char chunk[800];
    memset(chunk, 'b', sizeof chunk);

    /* Declared too large: refused before the body is sent. */
    cli *c = cli_open(f->port);
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n");
    expect_status_then_close(c, 413);
    cli_free(c);

    /* Chunked: refused once the body streaming in passes the limit. */
    c = cli_open(f->port);
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    cli_sends(c, "320\r\n");
    cli_send(c, chunk, sizeof chunk);
    cli_sends(c, "\r\n320\r\n");
    cli_send(c, chunk, sizeof chunk);
    cli_sends(c, "\r\n0\r\n\r\n");
    expect_status_then_close(c, 413);
    cli_free(c);

    /* Exactly the limit is fine. */
    c = cli_open(f->port);
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n");
    char body[1000];
    memset(body, 'c', sizeof body);
    cli_send(c, body, sizeof body);
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, strlen("POST /echo - - ") + 1000);
    cli_free(c);
    fx_stop(f);
}

static void test_bad_requests_get_4xx_or_501_and_close(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"\x01\x02garbage\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n\r\n", 400}, /* no Host */
        {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc", 400},
        {"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
         "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         400},
        {"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: t\r\nExpect: teapot\r\n\r\n", 417},
        {"GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli *c = cli_open(f->port);
        cli_sends(c, cases[i].req);
        print_message("case %zu\n", i);
        expect_status_then_close(c, cases[i].status);
        cli_free(c);
    }
    assert_int_equal(f->requests, 0);
    fx_stop(f);
}

/* Requests with an obs-fold (RFC 9112 §5.2): 400, whatever header it is in. */
static const char *const folded_requests[] = {
    /* An ordinary header, folded after a value, with a space or a tab. */
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test: a\r\n b\r\n\r\n",
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test: a\r\n\tb\r\nAccept: */*\r\n\r\n",
    /* After an empty first line, which llhttp takes for blanks. */
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test:\r\n b\r\n\r\n",
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test:  \r\n \t b\r\n\r\n",
    /* A fold of blanks only. */
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test: a\r\n \r\n\r\n",
    "GET /echo HTTP/1.1\r\nHost: t\r\nX-Test:\r\n \r\nAccept: */*\r\n\r\n",
    "GET /echo HTTP/1.1\r\nHost:\r\n t\r\n\r\n",
    /* Transfer-Encoding and Content-Length, both ways (smuggling). */
    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n"
    "3\r\nabc\r\n0\r\n\r\n",
    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:\r\n chunked\r\n\r\n"
    "3\r\nabc\r\n0\r\n\r\n",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n 0\r\n\r\nabc",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length:\r\n 3\r\n\r\nabc",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length:\r\n\t3\r\n\r\nabc",
};

static void test_obs_fold_gets_400_and_close(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    for (size_t i = 0; i < sizeof folded_requests / sizeof folded_requests[0]; i++) {
        print_message("case %zu\n", i);
        cli *c = cli_open(f->port);
        cli_sends(c, folded_requests[i]);
        expect_status_then_close(c, 400);
        cli_free(c);
    }
    uv_mutex_lock(&f->mu);
    assert_int_equal(f->requests, 0);
    uv_mutex_unlock(&f->mu);
    fx_stop(f);
}

/* True when fd is the server's end of c's connection (whose addresses are given). */
static int is_server_side(int fd, const cli *c, const struct sockaddr_in *me,
                          const struct sockaddr_in *peer)
{
    struct sockaddr_in a, b;
    socklen_t la = sizeof a, lb = sizeof b;
    return fd != c->fd && getsockname(fd, (struct sockaddr *)&a, &la) == 0 &&
           getpeername(fd, (struct sockaddr *)&b, &lb) == 0 && la == sizeof a && lb == sizeof b &&
           a.sin_family == AF_INET && b.sin_family == AF_INET && a.sin_port == peer->sin_port &&
           b.sin_port == me->sin_port;
}

/*
 * The server's socket of c's connection, found among the descriptors of this
 * process (the server runs in it) by its addresses, trying *fd first; -1 when
 * there is none.
 */
static int server_side(const cli *c, int fd)
{
    struct sockaddr_in me, peer;
    socklen_t len = sizeof me;
    assert_int_equal(getsockname(c->fd, (struct sockaddr *)&me, &len), 0);
    len = sizeof peer;
    assert_int_equal(getpeername(c->fd, (struct sockaddr *)&peer, &len), 0);
    if (fd >= 0 && is_server_side(fd, c, &me, &peer))
        return fd;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    fd = -1;
    for (struct dirent *e; fd < 0 && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.' && is_server_side(atoi(e->d_name), c, &me, &peer))
            fd = atoi(e->d_name);
    closedir(d);
    return fd;
}

/*
 * Waits until the server has read all that c sent: our kernel has passed it
 * on (nothing unsent in our queue; over loopback that puts it in the server's
 * queue), and nothing is left unread on the server's side. As the server
 * parses what it reads at once, the next send is a read of its own. Returns
 * early when the server has closed the connection. *sfd caches the server's
 * descriptor (-1: not known yet).
 */
static void wait_read_by_server(cli *c, int *sfd)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)DEADLINE_MS * 1000000;
    const struct timespec pause = {0, 20000};
    for (int seen = *sfd >= 0;; nanosleep(&pause, NULL)) {
        assert_true(uv_hrtime() < deadline);
        int unsent = 0, unread = 0;
        assert_int_equal(ioctl(c->fd, SIOCOUTQNSD, &unsent), 0);
        if (unsent > 0)
            continue;
        if ((*sfd = server_side(c, *sfd)) < 0) {
            if (seen)
                return; /* closed */
            continue;   /* not accepted yet */
        }
        seen = 1;
        if (ioctl(*sfd, FIONREAD, &unread) != 0 || unread == 0)
            return;
    }
}

/*
 * Sends req to the server in pieces ending at cuts[0..ncut) and at its end,
 * each read by the server alone. With `after`, the first piece follows a whole
 * request, so that the server parses it from its buffer of pipelined bytes.
 */
static void send_in_reads(cli *c, const char *req, const size_t *cuts, size_t ncut, int after)
{
    size_t len = strlen(req), from = 0;
    int sfd = -1;
    if (after) {
        resp r;
        cli_sends(c, "GET /echo HTTP/1.1\r\nHost: t\r\n\r\n");
        cli_send(c, req, ncut > 0 ? cuts[0] : len);
        assert_int_equal(cli_response(c, &r), 0);
        assert_int_equal(r.status, 200);
        from = ncut > 0 ? cuts[0] : len;
        cuts++, ncut -= ncut > 0;
    }
    for (size_t k = 0; k <= ncut && from < len; k++) {
        if (from > 0)
            wait_read_by_server(c, &sfd);
        size_t to = k < ncut ? cuts[k] : len;
        if (send(c->fd, req + from, to - from, MSG_NOSIGNAL) != (ssize_t)(to - from)) {
            /* The server refused the request and closed before it all arrived. */
            assert_true(errno == EPIPE || errno == ECONNRESET);
            return;
        }
        from = to;
    }
}

/*
 * Sends req cut every way in two (straight, and after a pipelined request),
 * and a byte per read; expects 400 and the close each time, or with want_body
 * the /headers answer want_body.
 */
static void expect_every_cut(fx *f, const char *req, const char *want_body)
{
    size_t len = strlen(req);
    size_t *bytes = calloc(len, sizeof *bytes);
    assert_non_null(bytes);
    for (size_t i = 0; i < len; i++)
        bytes[i] = i + 1;
    uv_mutex_lock(&f->mu);
    int requests = f->requests;
    uv_mutex_unlock(&f->mu);
    for (size_t i = 0; i < 2 * len + 1; i++) {
        size_t cut = i % len + 1;
        cli *c = cli_open(f->port);
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (i == 2 * len)
            send_in_reads(c, req, bytes, len - 1, 0);
        else
            send_in_reads(c, req, &cut, 1, i >= len);
        if (want_body == NULL) {
            expect_status_then_close(c, 400);
        } else {
            resp r;
            assert_int_equal(cli_response(c, &r), 0);
            assert_int_equal(r.status, 200);
            if (strcmp(r.body, want_body) != 0)
                fail_msg("cut %zu of %zu: got \"%s\", want \"%s\"", i, len, r.body, want_body);
        }
        cli_free(c);
    }
    /* The handler saw the pipelined requests, and the others only when not refused. */
    uv_mutex_lock(&f->mu);
    assert_int_equal(f->requests - requests, (int)len + (want_body ? 2 * (int)len + 1 : 0));
    uv_mutex_unlock(&f->mu);
    free(bytes);
}

static void test_obs_fold_is_refused_wherever_the_reads_cut_it(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    for (size_t i = 0; i < sizeof folded_requests / sizeof folded_requests[0]; i++) {
        print_message("case %zu\n", i);
        expect_every_cut(f, folded_requests[i], NULL);
    }
    /* A bare CR in the blanks after a colon, which llhttp takes for a line end. */
    expect_every_cut(f, "GET / HTTP/1.1\r\nHost: t\r\nX:\rZ b\r\n\r\n", NULL);

    /* Blanks, tabs, empty values and values with blanks inside are no folds. */
    expect_every_cut(f, "GET /headers HTTP/1.1\r\nHost: t\r\nA:   x y \r\nB:\r\n\r\n",
                     "host=t;a=x y;b=;");
    expect_every_cut(f, "GET /headers HTTP/1.1\r\nHost:\tt\r\nA: \t \r\nB:\t a\tb\r\nC:c\r\n\r\n",
                     "host=t;a=;b=a\tb;c=c;");
    expect_every_cut(f, "GET /headers HTTP/1.1\r\nA:\r\nB:  \r\nHost: t\r\n\r\n", "a=;b=;host=t;");
    fx_stop(f);
}

static void test_header_timeout_closes_a_slow_client(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.header_timeout_ms = 100});
    /* Headers trickle in and never end: 408, then the close. */
    cli *c = cli_open(f->port);
    cli_sends(c, "GET / HTTP/1.1\r\nHost: t\r\n");
    expect_status_then_close(c, 408);
    cli_free(c);
    /* A connection that sends nothing is closed silently. */
    c = cli_open(f->port);
    assert_true(cli_closed(c));
    assert_int_equal(c->len, 0);
    cli_free(c);
    fx_stop(f);
}

static void test_body_timeout_gets_408(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.body_timeout_ms = 100});
    cli *c = cli_open(f->port);
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    expect_status_then_close(c, 408);
    cli_free(c);
    fx_stop(f);
}

static void test_idle_keep_alive_connection_is_closed(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.idle_timeout_ms = 100});
    cli *c = cli_open(f->port);
    get_echo(c, "/x");
    assert_true(cli_closed(c));
    assert_int_equal(c->len, 0);
    cli_free(c);
    fx_stop(f);
}

static void test_connection_close_and_http10_close_after_the_response(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    resp r;
    char v[64];
    cli *c = cli_open(f->port);
    cli_sends(c, "GET /a HTTP/1.0\r\n\r\n");
    expect_status_then_close(c, 200);
    cli_free(c);

    c = cli_open(f->port);
    cli_sends(c, "GET /b HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    expect_status_then_close(c, 200);
    cli_free(c);

    /* HTTP/1.0 with keep-alive stays open. */
    c = cli_open(f->port);
    for (int i = 0; i < 2; i++) {
        cli_sends(c, "GET /c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert_int_equal(cli_response(c, &r), 0);
        assert_int_equal(r.status, 200);
        assert_int_equal(head_value(r.head, "connection", v, sizeof v), 0);
        assert_string_equal(v, "keep-alive");
    }
    cli_free(c);

    /* HEAD: Content-Length but no body; the next response follows at once. */
    c = cli_open(f->port);
    cli_sends(c, "HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_response_ex(c, &r, 1), 0);
    assert_int_equal(head_value(r.head, "content-length", v, sizeof v), 0);
    assert_string_equal(v, "12"); /* "HEAD /h - - " */
    get_echo(c, "/next");
    cli_free(c);
    fx_stop(f);
}

/* A connection the server refuses: closed, after a 503 if the socket took it. */
static void assert_refused(cli *c)
{
    assert_true(cli_closed(c));
    c->buf[c->len < sizeof c->buf ? c->len : sizeof c->buf - 1] = '\0';
    assert_non_null(strstr(c->buf, "HTTP/1.1 503 "));
}

/*
 * At the limit a newcomer takes the place of a connection with no request in
 * hand (idle, or headers not complete), the oldest of the source holding the
 * most; only when every connection is busy with a request is it refused.
 */
static void test_max_connections_evicts_idle_then_refuses(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_connections = 2});
    f->release_on_close = 1;
    cli *a = cli_open(f->port), *b = cli_open(f->port);
    get_echo(a, "/a");
    get_echo(b, "/b");
    cli *c = cli_open(f->port);
    get_echo(c, "/c");
    assert_true(cli_closed(a)); /* the oldest idle one gave way */
    cli_free(a);
    get_echo(b, "/still-fine");

    cli_sends(b, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    cli_sends(c, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 6), 6);
    cli *d = cli_open(f->port);
    assert_refused(d);
    cli_free(d);
    cli_free(b);
    cli_free(c);
    assert_int_equal(fx_wait(f, &f->closes, 2), 2);
    fx_stop(f);
}

/* A slow body gives way before an idle connection: its request is not in hand. */
static void test_max_connections_evicts_a_slow_body_first(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_connections = 2});
    cli *a = cli_open(f->port), *b = cli_open(f->port);
    get_echo(b, "/b");
    cli_sends(a, "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    cli *c = cli_open(f->port);
    get_echo(c, "/c");
    assert_true(cli_closed(a));
    get_echo(b, "/still-fine");
    cli_free(a);
    cli_free(b);
    cli_free(c);
    fx_stop(f);
}

static void test_max_connections_per_source_refuses_extra_ones(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_connections_per_source = 2});
    cli *a = cli_open(f->port), *b = cli_open(f->port);
    get_echo(a, "/a");
    get_echo(b, "/b");
    cli *c = cli_open(f->port);
    assert_refused(c);
    cli_free(c);
    get_echo(a, "/still-fine");
    cli_free(a);
    cli_free(b);
    fx_stop(f);
}

static void test_expect_100_continue(void **state)
{
    (void)state;
    fx *f = fx_start(&(mcp__http_opts){.max_body_bytes = 100});
    cli *c = cli_open(f->port);
    resp r;
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
                 "Expect: 100-continue\r\n\r\n");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 100);
    cli_sends(c, "hello");
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "POST /echo - - hello");
    cli_free(c);

    /* Too large: 413 instead of 100, and the body is never asked for. */
    c = cli_open(f->port);
    cli_sends(c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n"
                 "Expect: 100-continue\r\n\r\n");
    expect_status_then_close(c, 413);
    cli_free(c);
    fx_stop(f);
}

static void test_stop_with_open_connections_frees_everything(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    f->release_on_close = 1;
    cli *idle = cli_open(f->port);
    get_echo(idle, "/idle");
    cli *partial = cli_open(f->port);
    cli_sends(partial, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    cli *streaming = cli_open(f->port);
    cli_sends(streaming, "GET /stream-hold HTTP/1.1\r\nHost: t\r\n\r\n");
    resp r;
    assert_int_equal(cli_head(streaming, &r), 0);
    assert_int_equal(cli_chunk(streaming, &r), 13);
    cli *pipelined = cli_open(f->port);
    cli_sends(pipelined, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\nGET /x HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 3), 3);

    /* /hold has no on_close: its owner releases it after the stop, and the
     * fixture checks the loop is empty all the same. */
    mcp__http_req *held = f->held;
    assert_non_null(held);
    fx_stop(f); /* frees f: its fields are gone from here */
    mcp__http_req_release(held);
    assert_true(cli_closed(idle));
    assert_true(cli_closed(partial));
    assert_true(cli_closed(streaming));
    assert_true(cli_closed(pipelined));
    cli_free(idle);
    cli_free(partial);
    cli_free(streaming);
    cli_free(pipelined);
}

static void test_burst_of_200_connections(void **state)
{
    (void)state;
    enum { N = 200 };
    fx *f = fx_start(NULL);
    cli **c = calloc(N, sizeof *c);
    assert_non_null(c);
    for (int i = 0; i < N; i++)
        c[i] = cli_open(f->port);
    for (int i = 0; i < N; i++) {
        char req[128];
        snprintf(req, sizeof req, "GET /burst?%d HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                 i);
        cli_sends(c[i], req);
    }
    for (int i = 0; i < N; i++) {
        resp r;
        char want[64];
        snprintf(want, sizeof want, "GET /burst %d - ", i);
        assert_int_equal(cli_response(c[i], &r), 0);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.body, want);
        assert_true(cli_closed(c[i]));
        cli_free(c[i]);
    }
    free(c);
    assert_int_equal(f->requests, N);
    fx_stop(f);
}

static void test_2000_sequential_keep_alive_requests(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    for (int i = 0; i < 2000; i++) {
        char req[128];
        int n = snprintf(req, sizeof req,
                         "POST /seq HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%d",
                         (int)snprintf(NULL, 0, "%d", i), i);
        cli_send(c, req, (size_t)n);
        resp r;
        assert_int_equal(cli_response(c, &r), 0);
        assert_int_equal(r.status, 200);
        char want[64];
        snprintf(want, sizeof want, "POST /seq - - %d", i);
        assert_string_equal(r.body, want);
    }
    size_t n = 0;
    on_loop(f, get_connections, &n);
    assert_int_equal(n, 1);
    cli_free(c);
    assert_int_equal(f->requests, 2000);
    fx_stop(f);
}

static void bad_calls(fx *f, void *arg)
{
    (void)arg;
    mcp__http_req *req = f->held;
    static const char *const crlf[] = {"X-A", "b\r\nInjected: yes", NULL};
    static const char *const framing[] = {"Content-Length", "3", NULL};
    f->rc[0] = mcp__http_respond(req, 200, crlf, "x", 1);
    f->rc[1] = mcp__http_respond(req, 200, framing, "x", 1);
    f->rc[2] = mcp__http_respond(req, 99, NULL, NULL, 0);
    f->rc[3] = mcp__http_stream_write(req, "x", 1);
    f->rc[4] = mcp__http_stream_end(req);
    f->rc[5] = mcp__http_respond(req, 404, NULL, NULL, 0);
    f->held = NULL;
}

static void test_invalid_calls_leave_the_request_untouched(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cli *c = cli_open(f->port);
    cli_sends(c, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(fx_wait(f, &f->requests, 1), 1);
    on_loop(f, bad_calls, NULL);
    assert_int_equal(f->rc[0], MCP_EINVAL);
    assert_int_equal(f->rc[1], MCP_EINVAL);
    assert_int_equal(f->rc[2], MCP_EINVAL);
    assert_int_equal(f->rc[3], MCP_ESTATE);
    assert_int_equal(f->rc[4], MCP_ESTATE);
    assert_int_equal(f->rc[5], MCP_OK);
    resp r;
    assert_int_equal(cli_response(c, &r), 0);
    assert_int_equal(r.status, 404);
    assert_null(strstr(r.head, "Injected"));
    get_echo(c, "/after");
    cli_free(c);
    fx_stop(f);
}

static void test_start_rejects_bad_options(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    mcp__http_server *srv = (mcp__http_server *)&loop;
    mcp__http_opts o = {.on_request = on_request};
    o.host = "not-an-ip";
    assert_int_equal(mcp__http_server_start(&loop, &o, &srv), MCP_EINVAL);
    assert_null(srv);
    o.host = "127.0.0.1";
    o.port = 70000;
    assert_int_equal(mcp__http_server_start(&loop, &o, &srv), MCP_EINVAL);
    o.port = 0;
    o.on_request = NULL;
    assert_int_equal(mcp__http_server_start(&loop, &o, &srv), MCP_EINVAL);

    /* Two servers on one port: the second fails and cleans up with the loop. */
    o.on_request = on_request;
    o.host = "localhost";
    mcp__http_server *first;
    assert_int_equal(mcp__http_server_start(&loop, &o, &first), MCP_OK);
    o.port = mcp__http_server_port(first);
    assert_int_equal(mcp__http_server_start(&loop, &o, &srv), MCP_EIO);
    assert_null(srv);
    mcp__http_server_stop(first, NULL, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_and_post_with_content_length),
        cmocka_unit_test(test_headers_are_lowercased_and_kept_in_order),
        cmocka_unit_test(test_chunked_request_body_is_decoded),
        cmocka_unit_test(test_slow_reader_shows_in_queued_bytes_and_can_be_aborted),
        cmocka_unit_test(test_budget_cuts_the_connection_furthest_behind_first),
        cmocka_unit_test(test_budget_cuts_a_stalled_connection_before_a_larger_fresh_one),
        cmocka_unit_test(test_keep_alive_reuses_one_connection),
        cmocka_unit_test(test_pipelined_requests_are_answered_in_order),
        cmocka_unit_test(test_streamed_response_sends_chunks_then_ends),
        cmocka_unit_test(test_client_drop_during_stream_fires_on_close),
        cmocka_unit_test(test_header_too_large_gets_431),
        cmocka_unit_test(test_body_too_large_gets_413),
        cmocka_unit_test(test_bad_requests_get_4xx_or_501_and_close),
        cmocka_unit_test(test_obs_fold_gets_400_and_close),
        cmocka_unit_test(test_obs_fold_is_refused_wherever_the_reads_cut_it),
        cmocka_unit_test(test_header_timeout_closes_a_slow_client),
        cmocka_unit_test(test_body_timeout_gets_408),
        cmocka_unit_test(test_idle_keep_alive_connection_is_closed),
        cmocka_unit_test(test_connection_close_and_http10_close_after_the_response),
        cmocka_unit_test(test_max_connections_evicts_idle_then_refuses),
        cmocka_unit_test(test_max_connections_evicts_a_slow_body_first),
        cmocka_unit_test(test_max_connections_per_source_refuses_extra_ones),
        cmocka_unit_test(test_expect_100_continue),
        cmocka_unit_test(test_stop_with_open_connections_frees_everything),
        cmocka_unit_test(test_burst_of_200_connections),
        cmocka_unit_test(test_2000_sequential_keep_alive_requests),
        cmocka_unit_test(test_invalid_calls_leave_the_request_untouched),
        cmocka_unit_test(test_start_rejects_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
