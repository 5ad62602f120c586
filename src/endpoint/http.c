/* SPDX-License-Identifier: MIT */
/*
 * The Streamable HTTP endpoint's life: options, start on the caller's loop,
 * stop and drain, free; and mcp_serve_http, which owns a loop and the signals.
 *
 * A stop goes through phases (enum shttp_phase). DRAINING: every connection
 * closes once its request is answered, new work (requests, new sessions, new
 * streams) gets 503, but what helps the requests in flight finish is still
 * taken, on new connections too: the client's answers to the server's requests,
 * notifications (cancellation), and resumes of streams (GET with Last-Event-ID)
 * that lost their connection. The requests in flight may finish until the
 * deadline. CLOSING,
 * once none is left or the deadline passed, always from a timer callback (so
 * that a stop from inside any callback of ours is safe): sessions close (their
 * streams end cleanly, handlers still running are cancelled), connections get
 * what is left of the deadline to send what they hold, then the HTTP server
 * stops, the answerer detaches once its handlers have returned, our own
 * handles close, and done runs.
 */
#include <stdlib.h>
#include <string.h>

#include "endpoint/serve.h"
#include "transport/cluster/cluster.h"
#include "transport/shttp.h"

#define DEFAULT_KEEPALIVE_MS 15000
#define DEFAULT_MAX_SESSIONS 1000
#define DEFAULT_IDLE_MS (30 * 60 * 1000)
/* Bytes a slow reader may leave queued on one stream before it is cut off. */
#define DEFAULT_MAX_QUEUED (4u << 20)
/* A handler's stream with more unsent bytes than this pauses the handler. */
#define DEFAULT_PAUSE_BYTES (256u << 10)
/* Events (and bytes) a handler may send that its client has not confirmed having,
 * before it pauses; a quarter of the in-memory store's default per session. */
#define DEFAULT_MAX_UNCONFIRMED 2500
/* How far back a session's oldest unconfirmed event may lie: half the in-memory
 * store's default per session. */
#define DEFAULT_WINDOW_EVENTS 5000
#define DEFAULT_WINDOW_BYTES (8u << 20)
#define DEFAULT_MAX_UNCONFIRMED_BYTES (4u << 20)
#define DEFAULT_RETRY_MS 1000
/* GET connections one session may hold open: enough for every client seen (they
 * open one to three), and a bound on what one session can take. */
#define DEFAULT_MAX_GET_STREAMS 16

/* What SIGTERM and SIGINT give requests in flight under mcp_serve_http. */
#define DEFAULT_DRAIN_MS 10000

/* Splits "HOST:PORT" / "[V6]:PORT" into host (brackets removed) and port. */
static int parse_listen(const char *listen, char *host, size_t host_len, int *port)
{
    const char *colon;
    const char *h = listen;
    size_t hl;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (close == NULL || close[1] != ':')
            return -1;
        h = listen + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (colon == NULL)
            return -1;
        hl = (size_t)(colon - listen);
    }
    if (hl == 0 || hl >= host_len)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

static int is_loopback_host(const char *host)
{
    return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
           strncmp(host, "127.", 4) == 0;
}

/* dflt, or less when our own in-memory store has a bound (store_bound, 0: its
 * default) whose share (1/div) is smaller. */
static uint64_t within_store(const mcp_http_opts *o, uint64_t dflt, uint64_t store_bound,
                             uint64_t div)
{
    if (o->store != NULL || store_bound == 0 || store_bound / div >= dflt)
        return dflt;
    return store_bound / div + 1;
}

static void endpoint_free(shttp *t)
{
    mcp_event_store_free(t->own_store);
    if (t->share != NULL)
        t->share->free(t);
    mcp__map_free(&t->sessions);
    mcp__map_free(&t->session_sources);
    free(t->path);
    free(t->url);
    mcp__strv_free(t->allowed_origins);
    mcp__strv_free(t->allowed_hosts);
    mcp__strv_free(t->cors_origins);
    mcp__auth_free(t->auth);
    mcp__shttp_routes_free(t);
    free(t->tls_cert);
    free(t->tls_key);
    free(t);
}

/* ---- Stopping ---- */

/* One of the endpoint's handles (t->handles) has closed: done once all are, and the
 * HTTP server and the answerer too. */
static void maybe_done(void *arg)
{
    shttp *t = arg;
    if (t->phase != EP_CLOSING || t->handles.open > 0 || t->http_open || t->ans_open)
        return;
    t->phase = EP_DONE;
    mcp_endpoint_done_fn done = t->done;
    t->in_done = 1;
    if (done != NULL)
        done(t->done_user, MCP_OK);
    t->in_done = 0;
    if (t->free_when_done)
        endpoint_free(t);
}

static void close_handle(shttp *t, void *h)
{
    mcp__uv_close_counted(&t->handles, h);
}

/* The HTTP server and the answerer are gone: the drain timer is the last of ours. */
static void maybe_finish(shttp *t)
{
    if (!t->http_open && !t->ans_open)
        close_handle(t, &t->drain_timer);
}

static void on_http_stopped(void *arg)
{
    shttp *t = arg;
    t->http = NULL;
    t->http_open = 0;
    maybe_finish(t);
}

static void on_ans_closed(void *arg)
{
    shttp *t = arg;
    t->ans = NULL;
    t->ans_open = 0;
    maybe_finish(t);
}

static void http_stop(shttp *t)
{
    if (t->http != NULL && !mcp__http_server_stopping(t->http))
        mcp__http_server_stop(t->http, on_http_stopped, t);
}

/* Every connection has closed after its last answer. */
static void on_http_quiet(void *arg)
{
    shttp *t = arg;
    if (t->phase == EP_CLOSING)
        http_stop(t);
}

static void on_drain_timer(uv_timer_t *h);

static void auth_closed(void *arg)
{
    shttp *t = arg;
    mcp__uv_group_left(&t->handles);
}

static void begin_closing(shttp *t)
{
    t->phase = EP_CLOSING;
    mcp__http_server_stop_listening(t->http);
    close_handle(t, &t->keepalive_timer);
    close_handle(t, &t->sweep_timer);
    close_handle(t, &t->deferred_idle);
    t->deferred = NULL; /* closed below with every other session */
    /* A node that stops ends its copies only: other nodes serve the sessions on. */
    if (t->share != NULL)
        for (hsess *hs = t->all; hs != NULL; hs = hs->next)
            t->share->leaving(hs, MCP__LEAVE_STOPPING);
    while (t->all != NULL)
        mcp__hsess_close(t->all);
    close_handle(t, &t->outbox_timer); /* what waited was answered with its session */
    if (t->store_attached) {
        t->store_attached = 0;
        mcp_event_store_detach(t->store, t->loop);
    }
    if (t->share != NULL)
        t->share->stop(t);
    if (mcp__auth_close(t->auth, auth_closed, t))
        t->handles.open++; /* the JWT verifier's fetches, until auth_closed */
    t->ans->ops->shutdown(t->ans, on_ans_closed, t);
    /* The streams just ended are sent within what is left of the deadline. */
    uint64_t now = uv_now(t->loop);
    if (mcp__http_server_connections(t->http) == 0 || t->deadline <= now)
        http_stop(t);
    else if (t->deadline != UINT64_MAX)
        uv_timer_start(&t->drain_timer, on_drain_timer, t->deadline - now, 0);
}

/* The drain is over (its deadline, or nothing left in flight), or, once closing,
 * the connections' time to send what they hold is. */
static void on_drain_timer(uv_timer_t *h)
{
    shttp *t = h->data;
    if (t->phase == EP_DRAINING)
        begin_closing(t);
    else if (t->phase == EP_CLOSING)
        http_stop(t);
}

static int in_flight(const shttp *t)
{
    for (const hsess *hs = t->all; hs != NULL; hs = hs->next)
        if (HS_ANS(hs)->inflight(hs->sess) > 0)
            return 1;
    return 0;
}

/* A session has no more requests in flight: a drain may be over. */
static void drain_check(shttp *t)
{
    /* Never from here: this may run deep inside a session's callbacks. */
    if (t->phase == EP_DRAINING && !in_flight(t))
        uv_timer_start(&t->drain_timer, on_drain_timer, 0, 0);
}

/* A later stop, or a free, may bring the deadline forward. */
static void bring_forward(shttp *t, int drain_ms)
{
    if (drain_ms < 0 || t->phase >= EP_DONE)
        return;
    uint64_t now = uv_now(t->loop);
    if (now + (uint64_t)drain_ms >= t->deadline)
        return;
    t->deadline = now + (uint64_t)drain_ms;
    if (t->phase == EP_DRAINING || t->http_open)
        uv_timer_start(&t->drain_timer, on_drain_timer, (uint64_t)drain_ms, 0);
}

int mcp_http_endpoint_stop(mcp_http_endpoint *t, int drain_ms, mcp_endpoint_done_fn done,
                           void *user)
{
    if (t == NULL)
        return MCP_EINVAL;
    if (t->phase != EP_RUNNING) {
        bring_forward(t, drain_ms);
        return MCP_ESTATE;
    }
    t->phase = EP_DRAINING;
    t->done = done;
    t->done_user = user;
    t->deadline = drain_ms < 0 ? UINT64_MAX : uv_now(t->loop) + (uint64_t)drain_ms;
    mcp__http_server_quiesce(t->http, on_http_quiet, t);
    if (drain_ms >= 0)
        uv_timer_start(&t->drain_timer, on_drain_timer, (uint64_t)drain_ms, 0);
    /* Long-lived requests (subscriptions/listen) end now, gracefully: the drain would
     * otherwise wait for them until its deadline. A session may close under the call. */
    hsess *next;
    for (hsess *hs = t->all; hs != NULL; hs = next) {
        next = hs->next;
        if (!hs->closing && HS_ANS(hs)->drain != NULL)
            HS_ANS(hs)->drain(hs->sess);
    }
    drain_check(t);
    return MCP_OK;
}

int mcp_http_endpoint_stopping(const mcp_http_endpoint *t)
{
    return t != NULL && t->phase != EP_RUNNING;
}

void mcp_http_endpoint_free(mcp_http_endpoint *t)
{
    if (t == NULL)
        return;
    if (t->phase == EP_DONE) {
        if (t->in_done)
            t->free_when_done = 1; /* maybe_done frees it once done returns */
        else
            endpoint_free(t);
        return;
    }
    t->free_when_done = 1;
    if (t->phase == EP_RUNNING)
        mcp_http_endpoint_stop(t, 0, NULL, NULL);
    else
        bring_forward(t, 0);
}

const char *mcp_http_endpoint_url(const mcp_http_endpoint *t)
{
    return t != NULL ? t->url : NULL;
}

int mcp_http_endpoint_stats_get(const mcp_http_endpoint *t, mcp_http_stats *out)
{
    if (t == NULL || out == NULL || out->size < sizeof(out->size))
        return MCP_EINVAL;
    size_t size = out->size;
    mcp_http_stats st = t->stats;
    st.size = size;
    if (t->auth != NULL) {
        const mcp__auth_stats *a = mcp__auth_stats_get(t->auth);
        st.auth_passed = a->passed;
        st.auth_cached = a->cached;
        st.auth_no_token = a->no_token;
        st.auth_invalid_token = a->invalid;
        st.auth_insufficient_scope = a->insufficient_scope;
        st.auth_bad_request = a->bad_request;
        st.auth_unavailable = a->unavailable;
    }
    if (t->http != NULL) {
        uint64_t dropped = 0;
        st.tls_handshakes = (unsigned long)mcp__http_server_handshakes(t->http, &dropped);
        st.tls_handshakes_dropped = dropped;
    }
    memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
    return MCP_OK;
}

int mcp_http_endpoint_port(const mcp_http_endpoint *t)
{
    return t != NULL && t->http != NULL ? mcp__http_server_port(t->http) : 0;
}

/* ---- Starting ---- */

static int configure(shttp *t, const mcp_http_opts *opts)
{
    mcp_http_opts o;
    if (mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK)
        return MCP_EINVAL;
    int err = 0;
    t->path = mcp__strdup(o.path ? o.path : "/mcp");
    t->json_response = o.json_response;
    t->stateless = o.stateless;
    t->disable_get = o.disable_get;
    t->httpsse = !o.disable_http_sse;
    t->keepalive_ms = o.keepalive_ms == 0 ? DEFAULT_KEEPALIVE_MS : o.keepalive_ms;
    t->max_sessions = o.max_sessions > 0 ? o.max_sessions : DEFAULT_MAX_SESSIONS;
    t->idle_ms = o.session_idle_ms > 0 ? o.session_idle_ms : DEFAULT_IDLE_MS;
    t->max_queued = o.max_queued ? o.max_queued : DEFAULT_MAX_QUEUED;
    t->pause_bytes = DEFAULT_PAUSE_BYTES;
    if (t->max_queued / 2 < t->pause_bytes)
        t->pause_bytes = t->max_queued / 2;
    /* What is held back for clients stays well inside what our in-memory store
     * keeps (its bounds, when set): the events a client has not confirmed
     * (a quarter per stream, half per session), and the time an absent client is
     * waited for (the session idle time, a minute at most, half the events' TTL). */
    uint64_t idle = t->idle_ms < 60000 ? (uint64_t)t->idle_ms : 60000;
    t->away_limit_ms = within_store(&o, idle, (uint64_t)o.memory_store.ttl_ms, 2);
    t->window_events = within_store(&o, DEFAULT_WINDOW_EVENTS, o.memory_store.max_events, 2);
    t->window_bytes = within_store(&o, DEFAULT_WINDOW_BYTES, o.memory_store.max_bytes, 2);
    t->max_unconfirmed = within_store(&o, DEFAULT_MAX_UNCONFIRMED, o.memory_store.max_events, 4);
    t->max_unconfirmed_bytes =
        within_store(&o, DEFAULT_MAX_UNCONFIRMED_BYTES, o.memory_store.max_bytes, 4);
    t->max_get_streams = o.max_get_streams > 0 ? o.max_get_streams : DEFAULT_MAX_GET_STREAMS;
    t->retry_ms = o.retry_ms > 0 ? o.retry_ms : DEFAULT_RETRY_MS;
    if (!o.disable_resumability && !o.stateless && o.redis_url == NULL) {
        t->store = o.store;
        if (t->store == NULL)
            t->store = t->own_store = mcp_memory_store_new(&o.memory_store);
        if (t->store == NULL)
            err = 1;
    }
    t->allowed_origins = mcp__strv_copy(o.allowed_origins, &err);
    t->allowed_hosts = mcp__strv_copy(o.allowed_hosts, &err);
    t->cors_origins = mcp__strv_copy(o.cors_origins, &err);
    if (t->path == NULL || err)
        return MCP_ENOMEM;
    if ((o.tls_cert_file != NULL) != (o.tls_key_file != NULL)) {
        mcp__error("https needs both a certificate file and a key file");
        return MCP_EINVAL;
    }
    if (o.tls_cert_file != NULL) {
        t->tls_cert = mcp__strdup(o.tls_cert_file);
        t->tls_key = mcp__strdup(o.tls_key_file);
        if (t->tls_cert == NULL || t->tls_key == NULL)
            return MCP_ENOMEM;
    }
    if (o.auth != NULL) {
        int rc = mcp__auth_new(t->loop, o.auth, &t->auth);
        if (rc != MCP_OK)
            return rc;
    }
    for (const mcp_http_route *r = o.routes; r != NULL && r->path != NULL; r++) {
        int rc = mcp_http_endpoint_route(t, r->method, r->path, r->fn, r->user);
        if (rc != MCP_OK)
            return rc;
    }
    return MCP_OK;
}

static char *endpoint_url(const char *scheme, const char *host, int port, const char *path)
{
    int v6 = strchr(host, ':') != NULL;
    return mcp__asprintf("%s://%s%s%s:%d%s", scheme, v6 ? "[" : "", host, v6 ? "]" : "", port,
                         path);
}

int mcp_http_endpoint_reload_tls(mcp_http_endpoint *t)
{
    if (t == NULL || t->tls_cert == NULL || t->http == NULL)
        return MCP_EINVAL;
    struct ssl_ctx_st *ctx = NULL;
    int rc = mcp__tls_ctx_load(t->tls_cert, t->tls_key, &ctx);
    if (rc != MCP_OK) {
        mcp__warn("https: the certificate in use stays");
        return rc;
    }
    mcp__http_server_set_tls(t->http, ctx);
    mcp__tls_ctx_free(ctx);
    /* Said as a stop is said (a warning): it answers an operator's signal. */
    mcp__warn("https: certificate reloaded from %s", t->tls_cert);
    return MCP_OK;
}

int mcp__http_endpoint_new(uv_loop_t *loop, mcp__answerer *ans, const mcp_http_opts *opts,
                           mcp_http_endpoint **out)
{
    *out = NULL;
    mcp_http_opts o;
    char host[256];
    int port;
    if (mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK ||
        parse_listen(o.listen ? o.listen : "127.0.0.1:8080", host, sizeof(host), &port) != 0 ||
        (o.path != NULL && o.path[0] != '/')) {
        ans->ops->shutdown(ans, NULL, NULL);
        return MCP_EINVAL;
    }
    shttp *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        ans->ops->shutdown(ans, NULL, NULL);
        return MCP_ENOMEM;
    }
    t->ans = ans;
    t->loop = loop;
    t->drain_check = drain_check;
    t->deadline = UINT64_MAX;
    t->bound_loopback = is_loopback_host(host);
    int rc = configure(t, opts);
    if (rc != MCP_OK)
        goto fail;
    if (o.redis_url != NULL && !o.stateless && (rc = mcp__shttp_cluster_start(t, &o)) != MCP_OK)
        goto fail;
    if (o.disable_resumability)
        t->store = NULL; /* sessions are still shared; their streams are not resumable */
    if (t->store != NULL) {
        if (mcp_event_store_attach(t->store, loop) != MCP_OK) {
            mcp__error("the event store cannot attach to the loop");
            rc = MCP_EIO;
            goto fail;
        }
        t->store_attached = 1;
    }
    mcp__http_opts ho = {0};
    ho.host = host;
    ho.port = port;
    ho.on_request = mcp__shttp_on_request;
    ho.user = t;
    ho.max_body_bytes = o.max_body ? o.max_body : ans->ops->max_message(ans);
    ho.max_connections = o.max_connections;
    ho.max_connections_per_source = o.max_connections_per_source;
    ho.max_queued_total = o.max_queued_total;
    ho.tls_handshake_timeout_ms = o.tls_handshake_timeout_ms;
    ho.max_handshakes = o.tls_max_handshakes;
    if (t->tls_cert != NULL && (rc = mcp__tls_ctx_load(t->tls_cert, t->tls_key, &ho.tls)) != MCP_OK)
        goto fail;
    rc = mcp__http_server_start(loop, &ho, &t->http);
    mcp__tls_ctx_free(ho.tls);
    if (rc != MCP_OK) {
        mcp__error("cannot listen on %s: %s", o.listen ? o.listen : "127.0.0.1:8080",
                   mcp_strerror(rc));
        goto fail;
    }
    t->url = endpoint_url(t->tls_cert != NULL ? "https" : "http", host,
                          mcp__http_server_port(t->http), t->path);
    if (t->url == NULL) {
        mcp__http_server_stop(t->http, NULL, NULL);
        rc = MCP_ENOMEM;
        goto fail;
    }
    if (t->share != NULL)
        mcp__shttp_cluster_listening(t, &o, host, mcp__http_server_port(t->http));
    t->http_open = t->ans_open = 1;
    uv_timer_init(loop, &t->keepalive_timer);
    uv_timer_init(loop, &t->sweep_timer);
    uv_timer_init(loop, &t->drain_timer);
    uv_timer_init(loop, &t->outbox_timer);
    uv_idle_init(loop, &t->deferred_idle);
    t->handles = (mcp__uv_group){5, maybe_done, t};
    t->keepalive_timer.data = t->sweep_timer.data = t->drain_timer.data = t;
    t->outbox_timer.data = t;
    t->deferred_idle.data = t;
    if (t->keepalive_ms > 0)
        uv_timer_start(&t->keepalive_timer, mcp__shttp_keepalive, (uint64_t)t->keepalive_ms,
                       (uint64_t)t->keepalive_ms);
    uint64_t sweep = (uint64_t)t->idle_ms / 2;
    sweep = sweep < 1000 ? 1000 : sweep > 60000 ? 60000 : sweep;
    uv_timer_start(&t->sweep_timer, mcp__shttp_sweep, sweep, sweep);
    *out = t;
    if (o.on_listen != NULL)
        o.on_listen(t->url, o.user);
    return MCP_OK;

fail:
    if (t->store_attached)
        mcp_event_store_detach(t->store, loop);
    if (t->share != NULL)
        t->share->stop(t);
    ans->ops->shutdown(ans, NULL, NULL);
    endpoint_free(t);
    return rc;
}

int mcp_http_endpoint_new(uv_loop_t *loop, mcp_server *srv, const mcp_http_opts *opts,
                          mcp_http_endpoint **out)
{
    if (out != NULL)
        *out = NULL;
    if (loop == NULL || srv == NULL || out == NULL)
        return MCP_EINVAL;
    mcp__answerer *ans = mcp__server_answerer_new(srv, loop);
    if (ans == NULL)
        return MCP_ENOMEM;
    return mcp__http_endpoint_new(loop, ans, opts, out);
}

/* ---- mcp_serve_http: a loop of its own, and the signals (serve.c) ---- */

static void serve_stop(mcp__serve *s, int drain_ms)
{
    mcp_http_endpoint_stop(s->ep, drain_ms, mcp__serve_done, s);
}

static void serve_reload(mcp__serve *s)
{
    (void)mcp_http_endpoint_reload_tls(s->ep);
}

int mcp_serve_http(mcp_server *srv, const mcp_http_opts *opts)
{
    mcp_http_opts o;
    if (srv == NULL || mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK)
        return MCP_EINVAL;
    mcp__serve s;
    if (mcp__serve_init(&s, o.drain_ms == 0 ? DEFAULT_DRAIN_MS : o.drain_ms, serve_stop) != MCP_OK)
        return MCP_EIO;
    /* Before the endpoint says it listens: a SIGHUP sent on reading that must find
     * our handler, not the default action, which kills. */
    if (o.tls_cert_file != NULL)
        mcp__serve_on_hangup(&s, serve_reload);
    mcp_http_endpoint *ep = NULL;
    int rc = mcp_http_endpoint_new(&s.loop, srv, opts, &ep);
    s.ep = ep;
    mcp__serve_run(&s);
    mcp_http_endpoint_free(ep);
    mcp__serve_close(&s);
    return rc;
}
