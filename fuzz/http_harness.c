/* SPDX-License-Identifier: MIT */
/*
 * See http_harness.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <unistd.h>

#include <uv.h>

#include "fuzz_server.h"
#include "http_harness.h"

/* A turn of the loop: the fuzz thread sets `want`, the server thread runs the turn
 * and counts it in `done`. */
typedef struct fz_srv {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int port;
    int ready; /* the loop is waiting for turns */
    unsigned long want, done;
    mcp_server *srv;
    mcp_http_opts opts;
} fz_srv;

static fz_srv servers[FZ_NCONFIGS];
/* Set on a server's thread: its uv_run is the stepped one. */
static _Thread_local fz_srv *stepped;

int __real_uv_run(uv_loop_t *loop, uv_run_mode mode);
int __wrap_uv_run(uv_loop_t *loop, uv_run_mode mode);

int __wrap_uv_run(uv_loop_t *loop, uv_run_mode mode)
{
    fz_srv *s = stepped;
    if (s == NULL || mode != UV_RUN_DEFAULT)
        return __real_uv_run(loop, mode);
    stepped = NULL; /* nested or later runs (shutdown) are ordinary ones */
    pthread_mutex_lock(&s->mu);
    s->ready = 1;
    pthread_cond_broadcast(&s->cv);
    for (;;) {
        while (s->want == s->done)
            pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
        int alive = __real_uv_run(loop, UV_RUN_NOWAIT);
        if (!alive) {
            /* Only a signal stops the server (SIGINT, SIGTERM): so ends the fuzzing. */
            fprintf(stderr, "fuzz: the server's loop ended; stopping\n");
            _exit(1);
        }
        pthread_mutex_lock(&s->mu);
        s->done++;
        pthread_cond_broadcast(&s->cv);
    }
}

static void on_listen(const char *url, void *user)
{
    fz_srv *s = user;
    const char *colon = strrchr(url, ':');
    s->port = colon ? atoi(colon + 1) : 0; /* "http://127.0.0.1:PORT/mcp" */
}

static void *serve(void *arg)
{
    fz_srv *s = arg;
    stepped = s;
    int rc = mcp_serve_http(s->srv, &s->opts);
    fprintf(stderr, "fuzz: mcp_serve_http returned %d (%s)\n", rc, mcp_strerror(rc));
    _exit(1);
    return NULL;
}

static void start(int cfg)
{
    fz_srv *s = &servers[cfg];
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->srv = fz_server_new();
    static const char *const cors[] = {"http://example.com", NULL};
    mcp_http_opts *o = &s->opts;
    o->listen = "127.0.0.1:0";
    o->on_listen = on_listen;
    o->user = s;
    o->max_body = 64 * 1024;
    switch (cfg) {
    case FZ_JSON:
        o->json_response = 1;
        break;
    case FZ_STATELESS:
        o->stateless = 1;
        break;
    case FZ_CORS:
        o->cors_origins = cors;
        o->disable_get = 1;
        o->disable_resumability = 1;
        break;
    default:
        break;
    }
    if (pthread_create(&s->thread, NULL, serve, s) != 0)
        abort();
    pthread_mutex_lock(&s->mu);
    while (!s->ready)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (s->port <= 0)
        abort();
}

int fz_port(int cfg)
{
    if (!servers[cfg].ready)
        start(cfg);
    return servers[cfg].port;
}

void fz_step(int cfg)
{
    fz_srv *s = &servers[cfg];
    if (!s->ready)
        start(cfg); /* an input that never connected still turns its server's loop */
    pthread_mutex_lock(&s->mu);
    unsigned long target = ++s->want;
    pthread_cond_broadcast(&s->cv);
    while (s->done != target)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

void fz_conn_open(fz_conn *c, int cfg)
{
    memset(c, 0, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        abort();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)fz_port(cfg))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* The kernel completes the handshake from the listen backlog, without the server's
     * loop; libFuzzer's timers interrupt waits (EINTR), so wait with poll. */
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS &&
        errno != EINTR) {
        perror("fuzz: connect");
        abort();
    }
    struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
    int err = 0;
    socklen_t len = sizeof(err);
    int pr;
    while ((pr = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
        continue;
    if (pr != 1 || getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        fprintf(stderr, "fuzz: connect: %s\n", pr == 1 ? strerror(err) : "timed out");
        abort();
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* Closing resets instead of lingering: thousands of connections a second would
     * otherwise fill the table with TIME_WAIT sockets. */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

void fz_conn_close(fz_conn *c)
{
    /* FUZZ_VERBOSE=1 shows what each connection received (to check seeds). */
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose && c->in_len > 0)
        fprintf(stderr, "---- connection received %zu bytes:\n%.*s\n", c->in_len, (int)c->in_len,
                c->in);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->in);
    c->in = NULL;
    c->in_len = c->in_cap = c->scanned = 0;
}

size_t fz_conn_read(fz_conn *c)
{
    size_t total = 0;
    while (c->fd >= 0 && !c->eof) {
        char buf[16384];
        ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            c->eof = 1; /* closed or reset */
            break;
        }
        total += (size_t)n;
        size_t keep = c->in_len + (size_t)n <= FZ_KEEP ? (size_t)n : FZ_KEEP - c->in_len;
        if (keep > 0) {
            if (c->in_len + keep > c->in_cap) {
                size_t cap = c->in_cap ? c->in_cap * 2 : 4096;
                while (cap < c->in_len + keep)
                    cap *= 2;
                char *p = realloc(c->in, cap);
                if (p == NULL)
                    abort();
                c->in = p;
                c->in_cap = cap;
            }
            memcpy(c->in + c->in_len, buf, keep);
            c->in_len += keep;
        }
    }
    return total;
}

void fz_conn_send(fz_conn *c, int cfg, const void *data, size_t len)
{
    const char *p = data;
    int stalls = 0;
    while (len > 0 && c->fd >= 0 && !c->eof) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            stalls = 0;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && ++stalls < 1000) {
            fz_step(cfg); /* let the server read (it may also stop reading: limits) */
            fz_conn_read(c);
            continue;
        }
        break; /* reset, or the server stopped reading for good */
    }
}

void fz_settle(int cfg, fz_conn *conns, size_t n)
{
    int quiet = 0;
    for (int turn = 0; turn < 200 && quiet < 2; turn++) {
        fz_step(cfg);
        size_t got = 0;
        for (size_t i = 0; i < n; i++)
            got += fz_conn_read(&conns[i]);
        quiet = got ? 0 : quiet + 1;
    }
}

/* Case-insensitive search for needle in [p, end). */
static const char *find_ci(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    for (; p + n <= end; p++)
        if (strncasecmp(p, needle, n) == 0)
            return p;
    return NULL;
}

void fz_scan(fz_conn *c, fz_seen *seen)
{
    if (c->in == NULL)
        return;
    const char *begin = c->in + c->scanned, *end = c->in + c->in_len;
    /* Streamable HTTP sessions in a header, legacy ones in the endpoint event. */
    static const char *const marks[] = {"\nmcp-session-id:", "?sessionId="};
    for (size_t m = 0; m < 2; m++) {
        for (const char *p = begin; (p = find_ci(p, end, marks[m])) != NULL; p++) {
            const char *v = p + strlen(marks[m]);
            while (v < end && *v == ' ')
                v++;
            size_t len = 0;
            while (v + len < end && len < 32 && v[len] && strchr("0123456789abcdef", v[len]))
                len++;
            if (len != 32)
                continue;
            int known = 0;
            for (size_t i = 0; i < seen->nsessions; i++)
                known |= memcmp(seen->session[i], v, 32) == 0;
            if (!known && seen->nsessions < 8) {
                memcpy(seen->session[seen->nsessions], v, 32);
                seen->session[seen->nsessions++][32] = '\0';
            }
        }
    }
    for (const char *p = begin; (p = find_ci(p, end, "\nid: ")) != NULL; p++) {
        const char *v = p + strlen("\nid: ");
        size_t len = 0;
        while (v + len < end && v[len] != '\n' && v[len] != '\r' &&
               len + 1 < sizeof(seen->event_id))
            len++;
        if (v + len < end && v[len] == '\n') {
            memcpy(seen->event_id, v, len);
            seen->event_id[len] = '\0';
        }
    }
    /* A header or an id cut at the end of what arrived is seen next time. */
    c->scanned = c->in_len > 200 ? c->in_len - 200 : 0;
    if (c->scanned < (size_t)(begin - c->in))
        c->scanned = (size_t)(begin - c->in);
}

void fz_delete_sessions(int cfg, fz_seen *seen)
{
    for (size_t i = 0; i < seen->nsessions; i++) {
        fz_conn c;
        fz_conn_open(&c, cfg);
        char req[256];
        int n = snprintf(req, sizeof(req),
                         "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: %s\r\n"
                         "Connection: close\r\n\r\n",
                         seen->session[i]);
        fz_conn_send(&c, cfg, req, (size_t)n);
        fz_settle(cfg, &c, 1);
        fz_conn_close(&c);
    }
    seen->nsessions = 0;
}
