/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server: options, listening, and stopping.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include "http/http_int.h"

#define DEFAULT_MAX_HEADER_BYTES (16 * 1024)
#define DEFAULT_MAX_BODY_BYTES (4 * 1024 * 1024)
#define DEFAULT_HEADER_TIMEOUT_MS 10000
#define DEFAULT_BODY_TIMEOUT_MS 30000
#define DEFAULT_IDLE_TIMEOUT_MS 60000
#define DEFAULT_MAX_CONNECTIONS 1024 /* when the fd limit cannot be read */
#define FD_RESERVE 64
#define DEFAULT_MAX_UNSENT_BYTES (256 * 1024)
#define DEFAULT_MAX_QUEUED_TOTAL (32u << 20)
#define DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS 10000
#define DEFAULT_MAX_HANDSHAKES 128
#define TRIM_CHECK_MS 1000
/* The kernel caps it at net.core.somaxconn. A short queue drops the SYNs of
 * normal clients under a connection flood, and they retry only after a second. */
#define LISTEN_BACKLOG 4096

/* Parses an IP literal (bracketed IPv6 allowed, "localhost" = 127.0.0.1). */
static int parse_addr(const char *host, int port, struct sockaddr_storage *ss)
{
    char buf[64];
    if (!host || !*host || strcmp(host, "localhost") == 0)
        host = "127.0.0.1";
    size_t n = strlen(host);
    if (host[0] == '[') {
        if (n < 3 || host[n - 1] != ']' || n - 2 >= sizeof buf)
            return MCP_EINVAL;
        memcpy(buf, host + 1, n - 2);
        buf[n - 2] = '\0';
        host = buf;
    }
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0)
        return MCP_OK;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0)
        return MCP_OK;
    return MCP_EINVAL;
}

/* Idle connections cost a few hundred bytes: the limit that matters is the
 * file descriptors, so the default follows them, leaving some for the rest of
 * the process (the store, logs, child processes). */
static unsigned default_max_connections(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return DEFAULT_MAX_CONNECTIONS;
    rlim_t n = rl.rlim_cur > 2 * FD_RESERVE ? rl.rlim_cur - FD_RESERVE : rl.rlim_cur / 2;
    return n > 1u << 24 ? 1u << 24 : n < 16 ? 16 : (unsigned)n;
}

/* Memory freed by a burst (answers nobody read, a closed crowd of connections)
 * goes back to the system within a second or so of the burst's end. */
static void on_trim(uv_timer_t *t)
{
    (void)t;
    mcp__mem_trim_maybe();
}

static void server_handle_closed(void *srv)
{
    mcp__http_server_maybe_done(srv);
}

int mcp__http_server_start(uv_loop_t *loop, const mcp__http_opts *opts, mcp__http_server **out)
{
    if (!out)
        return MCP_EINVAL;
    *out = NULL;
    if (!loop || !opts || !opts->on_request || opts->port < 0 || opts->port > 65535)
        return MCP_EINVAL;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (parse_addr(opts->host, opts->port, &ss) != MCP_OK)
        return MCP_EINVAL;

    /* A client that vanishes mid-write must not kill the process. */
    signal(SIGPIPE, SIG_IGN);

    mcp__http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return MCP_ENOMEM;
    srv->loop = loop;
    srv->opts = *opts;
    srv->opts.host = NULL;
    srv->opts.tls = NULL; /* srv->tls holds it, once listening */
    mcp__http_opts *o = &srv->opts;
    if (!o->max_header_bytes)
        o->max_header_bytes = DEFAULT_MAX_HEADER_BYTES;
    if (!o->max_body_bytes)
        o->max_body_bytes = DEFAULT_MAX_BODY_BYTES;
    if (!o->header_timeout_ms)
        o->header_timeout_ms = DEFAULT_HEADER_TIMEOUT_MS;
    if (!o->body_timeout_ms)
        o->body_timeout_ms = DEFAULT_BODY_TIMEOUT_MS;
    if (!o->idle_timeout_ms)
        o->idle_timeout_ms = DEFAULT_IDLE_TIMEOUT_MS;
    if (!o->max_connections)
        o->max_connections = default_max_connections();
    if (!o->max_unsent_bytes)
        o->max_unsent_bytes = DEFAULT_MAX_UNSENT_BYTES;
    if (!o->max_queued_total)
        o->max_queued_total = DEFAULT_MAX_QUEUED_TOTAL;
    if (!o->tls_handshake_timeout_ms)
        o->tls_handshake_timeout_ms = DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS;
    if (!o->max_handshakes)
        o->max_handshakes = DEFAULT_MAX_HANDSHAKES;
    mcp__http_settings_init(&srv->settings);

    if (uv_tcp_init(loop, &srv->listener) != 0) {
        free(srv);
        return MCP_EIO;
    }
    srv->listener.data = srv;
    int r = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&ss, 0);
    if (r == 0)
        r = uv_listen((uv_stream_t *)&srv->listener, LISTEN_BACKLOG, mcp__http_on_connection);
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    if (r == 0)
        r = uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&bound, &blen);
    if (r != 0) {
        mcp__warn("http: cannot listen on %s port %d: %s", opts->host ? opts->host : "127.0.0.1",
                  opts->port, uv_strerror(r));
        /* The handle's memory is srv: freed when libuv is done with it. */
        mcp__uv_close_free((uv_handle_t *)&srv->listener, srv);
        return MCP_EIO;
    }
    uv_check_init(loop, &srv->flush);
    uv_check_init(loop, &srv->accept_later);
    srv->accept_later.data = srv;
    uv_prepare_init(loop, &srv->flush_prep);
    uv_timer_init(loop, &srv->trim);
    uv_timer_init(loop, &srv->hold);
    srv->flush.data = srv->flush_prep.data = srv->trim.data = srv->hold.data = srv;
    srv->timers = (mcp__uv_group){5, server_handle_closed, srv};
    /* It must not keep a loop alive that has nothing else to do. */
    uv_timer_start(&srv->trim, on_trim, TRIM_CHECK_MS, TRIM_CHECK_MS);
    uv_unref((uv_handle_t *)&srv->trim);
    srv->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                            : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    srv->listener_open = 1;
    mcp__http_server_set_tls(srv, opts->tls);
    *out = srv;
    return MCP_OK;
}

int mcp__http_server_port(const mcp__http_server *srv)
{
    return srv->port;
}

void mcp__http_server_before_write(mcp__http_server *srv, void (*fn)(void *arg), void *arg)
{
    srv->before_write = fn;
    srv->before_write_arg = arg;
}

size_t mcp__http_server_connections(const mcp__http_server *srv)
{
    return srv->nconns;
}

size_t mcp__http_server_max_connections(const mcp__http_server *srv)
{
    return srv->opts.max_connections;
}

void mcp__http_server_maybe_done(mcp__http_server *srv)
{
    if (srv->quiescing && srv->quiesced_cb != NULL && !srv->listener_open && srv->nconns == 0 &&
        srv->nrefused == 0) {
        mcp__http_done_fn cb = srv->quiesced_cb;
        srv->quiesced_cb = NULL;
        cb(srv->quiesced_arg); /* it may stop the server */
        return;
    }
    if (!srv->stopping || srv->listener_open || srv->timers.open || srv->nconns > 0 ||
        srv->nrefused > 0)
        return;
    mcp__http_done_fn cb = srv->done_cb;
    void *arg = srv->done_arg;
    mcp__map_free(&srv->sources);
    mcp__http_server_set_tls(srv, NULL);
    free(srv);
    if (cb)
        cb(arg);
}

static void on_listener_close(uv_handle_t *h)
{
    mcp__http_server *srv = h->data;
    srv->listener_open = 0;
    mcp__http_server_maybe_done(srv);
}

static void close_listener(mcp__http_server *srv)
{
    if (srv->listener_closing)
        return;
    srv->listener_closing = 1;
    uv_close((uv_handle_t *)&srv->listener, on_listener_close);
}

void mcp__http_server_quiesce(mcp__http_server *srv, mcp__http_done_fn empty_cb, void *arg)
{
    if (!srv || srv->stopping || srv->quiescing)
        return;
    srv->quiescing = 1;
    srv->quiesced_cb = empty_cb;
    srv->quiesced_arg = arg;
    /* A connection waiting for a request closes now, unless the client already sent
     * bytes we have not read (its request is arriving: it gets its answer); one with
     * a request under way closes once its response is out (see mcp__http_req_finish
     * and conn_next). */
    for (mcp__http_conn *c = srv->conns; c; c = c->next)
        if (!c->closing && (c->phase == PHASE_FIRST || c->phase == PHASE_IDLE) &&
            !mcp__http_conn_has_input(c))
            mcp__http_conn_close(c);
}

void mcp__http_server_stop_listening(mcp__http_server *srv)
{
    if (srv != NULL && !srv->stopping)
        close_listener(srv);
}

int mcp__http_server_stopping(const mcp__http_server *srv)
{
    return srv->stopping;
}

int mcp__http_server_quiescing(const mcp__http_server *srv)
{
    return srv->quiescing;
}

void mcp__http_server_stop(mcp__http_server *srv, mcp__http_done_fn done_cb, void *arg)
{
    if (!srv || srv->stopping)
        return;
    srv->stopping = 1;
    srv->quiesced_cb = NULL;
    srv->done_cb = done_cb;
    srv->done_arg = arg;
    close_listener(srv);
    mcp__uv_close_counted(&srv->timers, (uv_handle_t *)&srv->flush);
    mcp__uv_close_counted(&srv->timers, (uv_handle_t *)&srv->flush_prep);
    mcp__uv_close_counted(&srv->timers, (uv_handle_t *)&srv->trim);
    mcp__uv_close_counted(&srv->timers, (uv_handle_t *)&srv->hold);
    mcp__uv_close_counted(&srv->timers, (uv_handle_t *)&srv->accept_later);
    /* Connections leave the list only in their close callbacks, later, so
     * the list stays intact while on_close callbacks run from here. */
    for (mcp__http_conn *c = srv->conns; c; c = c->next)
        mcp__http_conn_close(c);
}
