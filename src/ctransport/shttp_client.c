/* SPDX-License-Identifier: MIT */
/*
 * The HTTP client transport: Streamable HTTP (2025-03-26 to 2025-11-25) and the
 * HTTP+SSE transport (2024-11-05), on libcurl driven by the loop.
 *
 * Streamable HTTP: every message is a POST. A request's answer comes as JSON,
 * or as an SSE stream that may carry the server's notifications and requests
 * first. That stream is a `cstream`: a logical stream whose connection may
 * break and be resumed by GET with Last-Event-ID, as long as the request is
 * pending and the server gave an event id. The standalone stream (GET, opened
 * once notifications/initialized is sent) is a cstream too.
 *
 * Reconnection, the rules official clients get wrong:
 * - the delay is the stream's `retry` when the server gave one (no less than
 *   100 ms, no more than max_delay); else exponential backoff with jitter, capped;
 * - a connection that brings no event counts toward the retry limit, whether it
 *   ended cleanly or with an error; one that brings an event with data (or the
 *   stream's first event with an id, its priming event, once) resets the count,
 *   so SEP-1699 polling goes on as long as its request lives, and a server that
 *   keeps closing empty streams, or streams of a new id alone, cannot keep us
 *   reconnecting;
 * - at the limit the request fails with MCP_ELIMIT;
 * - the application may take over when a reconnection happens.
 *
 * A 404 for our session means the server forgot it: a new session is started
 * with the initialize we sent first, and every request still pending is sent
 * once more on it (unless turned off).
 *
 * HTTP+SSE: GET the SSE endpoint, wait for its `endpoint` event, POST
 * every message there; every answer comes on the GET stream. It is used when
 * asked for, or when the POST of initialize gets 400, 404 or 405.
 *
 * Lifetimes: curl callbacks may end up, through the engine, in request_done or
 * close, which cancel transfers. A transfer (xfer) being fed is marked busy and
 * freed only once its callback returns; a cstream is freed once it has neither
 * a transfer nor a timer.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/curl_loop.h"
#include "oauth/oauth.h"
#include "protocol/json.h"
#include "protocol/revision.h"
#include "sse/sse.h"
#include "ctransport/ctransport.h"
#include "protocol/headers.h"
#include "util/util.h"

#define DEFAULT_MAX_RETRIES 5
#define DEFAULT_INITIAL_DELAY_MS 1000
#define DEFAULT_MAX_DELAY_MS 30000
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
/* A POST of a notification or a response gets 202 at once; one that does not
 * answer in this time is given up (nothing waits for it). */
#define SMALL_POST_TIMEOUT_MS 30000
/* The DELETE that ends the session on close. */
#define DELETE_TIMEOUT_MS 2000
/* How long an answered request's stream may stay open before we close it. */
#define LINGER_MS 5000
/* Bytes of an error answer's body kept for the error message. */
#define ERROR_BODY_MAX 300
/* The same for a modern request, whose error body is a JSON-RPC error to read (an
 * UnsupportedProtocolVersion error's list of versions, say). */
#define MODERN_ERROR_BODY_MAX 65536
/* The shortest wait before a reconnection, whatever `retry` the server gave: `retry: 0`
 * would have us reconnect as fast as the loop turns. Its longest is max_delay. */
#define MIN_RETRY_MS 100
/* Why a session id is refused. */
#define SESSION_BAD                                                                                \
    "the server's Mcp-Session-Id holds a byte outside visible ASCII (0x21-0x7E): refused, "        \
    "never sent back"
/* Tools kept as safe to call again; past it, new ones are not (their calls are not
 * repeated). */
#define MAX_SAFE_TOOLS MCP__HEADER_MAX_TOOLS

struct mcp__shttp_cfg {
    char *url;
    char **headers; /* NULL-terminated */
    char *cacert, *cert, *key;
    int httpsse, max_retries, initial_delay, max_delay, no_renewal, connect_timeout;
    int no_retry_safe;
    mcp_reconnect_fn sched;
    void *sched_user;
    mcp_oauth *oauth; /* held: a reference */
};

typedef struct shttp_ctr shttp_ctr;
typedef struct cstream cstream;

enum xkind { X_POST, X_GET, X_DELETE, X_HTTPSSE_GET };
enum ctype { CT_NONE, CT_JSON, CT_SSE, CT_OTHER };

typedef struct xfer {
    shttp_ctr *t;
    mcp__curl_req *req;
    enum xkind kind;
    cstream *st;   /* the stream it feeds (a request's POST, a GET) */
    json_int_t id; /* the request it carries, when has_id (HTTP+SSE POSTs too) */
    int has_id;
    int is_renewal;  /* the POST of a renewal's initialize */
    int is_notified; /* the POST of notifications/initialized */
    long status;
    enum ctype ctype;
    char *session_hdr;
    int session_bad; /* an Mcp-Session-Id outside visible ASCII: refused */
    int head_done;   /* the final response's head has ended */
    mcp__buf body;   /* a JSON answer, or the start of an error's body */
    int body_over;
    mcp__sse_parser sse;
    int sse_inited;
    int modern; /* a request of revision 2026-07-28 */
    /* A POST's body. libcurl may send it again by itself (see mcp__curl_body): when
     * it is not a request, or a 2025-era one safe to repeat. */
    mcp__curl_body out;
    int events;       /* events (or ids) this connection brought */
    int reconnection; /* a GET made by reconnect_now, not a stream's first connection */
    int busy, dead;
    /* What it was started with, to start it again once authorized (copies kept only
     * with a provider: NULL otherwise). */
    char *url, *last_id;
    int with_session;
    long timeout_ms;
    char **extra;
    /* Authorization: the provider's waiter (parked: waiting for a token, with no
     * transfer running), the token generation it was sent with, and the
     * challenge of a refusal. */
    mcp__oauth_waiter aw;
    int parked;
    uint64_t auth_gen;
    mcp__buf www_auth;
    char *dpop_nonce;
    struct xfer *prev, *next;
} xfer;

struct cstream {
    shttp_ctr *t;
    int standalone;
    int modern;     /* a request of revision 2026-07-28: no resumption */
    int tools_list; /* its answer is a tools/list result, whose tools we read */
    int safe;       /* 2025 era: safe to repeat (repeat_safe), so libcurl may resend it */
    /* A modern request safe to repeat (see repeat_safe): its message and revision, to
     * send once more when its connection fails before any answer. */
    json_t *msg;
    const char *version;
    int repeated;
    json_int_t id; /* the request, when not standalone */
    char *text;    /* the request as sent, for a renewal's resend */
    size_t len;
    int renewed; /* sent once more on a new session already */
    int again;   /* renewed, and met a 404 once more */
    int answered, done;
    int resend; /* waiting for a renewal to be sent again */
    char *last_id;
    long retry_ms; /* the server's retry for this stream; -1: none */
    int primed;    /* an event with an id came: later ones alone are no progress */
    int attempts;  /* reconnections in a row that brought nothing */
    xfer *x;
    uv_timer_t timer;
    int timer_init, timer_closing;
    uint64_t reconnect_id; /* waiting for the application's mcp_client_reconnect */
    cstream *prev, *next;
};

/* A message that waits: for a renewal to end, or for the HTTP+SSE endpoint event. */
typedef struct queued {
    char *text;
    size_t len;
    cstream *st;
    json_int_t id;
    int has_id;
    struct queued *next;
} queued;

enum mode { MODE_STREAMABLE, MODE_HTTPSSE };

struct shttp_ctr {
    mcp__ctr base;
    mcp__shttp_cfg *cfg;
    size_t max_message;
    mcp__curlm *curl;
    int curl_open;
    enum mode mode;
    char *session_id;
    char *version; /* the negotiated revision, sent as MCP-Protocol-Version */
    json_t *init_msg;
    json_int_t init_id;
    int init_answered;
    int standalone_wanted, standalone_off;
    int standalone_gave_up; /* off after reconnections that brought nothing: a new session
                               (the server came back) opens it again */
    cstream *standalone;
    cstream *streams;
    xfer *xfers;
    queued *q_head, *q_tail;
    int renewing;
    unsigned renewals;
    char renew_id[40];
    char *post_url; /* HTTP+SSE: the endpoint event's URL */
    xfer *httpsse_get;
    int closing, lost, closed_reported, deleting;
    mcp__uv_group timers; /* ready_timer and the streams' timers */
    /* The connect waits until the standalone stream is open (or refused): a
     * client's first request must not race the stream that may carry what the
     * server sends for it. Bounded by the connect timeout. */
    int ready_wanted, ready_done;
    uv_timer_t ready_timer;
    uint64_t next_reconnect_id;
    uint64_t rng;
    int modern;                   /* the client speaks 2026-07-28 (set_modern) */
    mcp__header_tools tool_heads; /* the tools' x-mcp-header annotations */
    mcp_oauth *oauth;             /* attached to this connection, or NULL */
    mcp__map safe_tools;          /* names of the tools annotated readOnlyHint or idempotentHint */
};

static void xfer_done(void *user, CURLcode result, long status);
static int xfer_header(void *user, const char *line, size_t len);
static int xfer_data(void *user, const char *data, size_t len);
static const mcp__curl_cbs xfer_cbs = {xfer_header, xfer_data, xfer_done};
static void st_free_if_idle(cstream *st);
static cstream *st_find(shttp_ctr *t, json_int_t id);
static void st_finish(cstream *st);
static void st_broke(cstream *st, xfer *x);
static void start_renewal(shttp_ctr *t);
static void maybe_closed(void *arg);
static int open_get(cstream *st);
static void open_httpsse(shttp_ctr *t);
static void became_ready(shttp_ctr *t);

/* ---- Configuration ---- */

void mcp__shttp_cfg_free(mcp__shttp_cfg *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->url);
    for (char **h = cfg->headers; h != NULL && *h != NULL; h++)
        free(*h);
    free(cfg->headers);
    free(cfg->cacert);
    free(cfg->cert);
    free(cfg->key);
    mcp_oauth_free(cfg->oauth);
    free(cfg);
}

/* "Name: value" with a token name and no line break anywhere. */
static int header_ok(const char *h)
{
    const char *colon = strchr(h, ':');
    if (colon == NULL || colon == h || strpbrk(h, "\r\n") != NULL)
        return 0;
    for (const char *p = h; p < colon; p++)
        if (!isalnum((unsigned char)*p) && strchr("!#$%&'*+-.^_`|~", *p) == NULL)
            return 0;
    return 1;
}

int mcp__shttp_cfg_httpsse(const mcp__shttp_cfg *cfg)
{
    return cfg->httpsse;
}

int mcp__shttp_cfg_new(const char *url, const mcp_http_client_opts *opts, mcp__shttp_cfg **out)
{
    *out = NULL;
    mcp_http_client_opts o;
    if (mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK)
        return MCP_EINVAL;
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
        return MCP_EINVAL;
    if (o.initial_delay_ms < 0 || o.max_delay_ms < 0 || o.connect_timeout_ms < 0)
        return MCP_EINVAL;
    size_t n = 0;
    while (o.headers != NULL && o.headers[n] != NULL) {
        if (!header_ok(o.headers[n]) ||
            (o.oauth != NULL && strncasecmp(o.headers[n], "Authorization:", 14) == 0))
            return MCP_EINVAL;
        n++;
    }
    mcp__shttp_cfg *cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL || (cfg->headers = calloc(n + 1, sizeof(char *))) == NULL) {
        free(cfg);
        return MCP_ENOMEM;
    }
    int bad = (cfg->url = mcp__strdup(url)) == NULL;
    for (size_t i = 0; i < n; i++)
        bad |= (cfg->headers[i] = mcp__strdup(o.headers[i])) == NULL;
    bad |= (o.cacert != NULL && (cfg->cacert = mcp__strdup(o.cacert)) == NULL);
    bad |= (o.client_cert != NULL && (cfg->cert = mcp__strdup(o.client_cert)) == NULL);
    bad |= (o.client_key != NULL && (cfg->key = mcp__strdup(o.client_key)) == NULL);
    if (bad) {
        mcp__shttp_cfg_free(cfg);
        return MCP_ENOMEM;
    }
    cfg->httpsse = o.http_sse != 0;
    cfg->max_retries = o.max_retries == 0 ? DEFAULT_MAX_RETRIES : o.max_retries;
    cfg->initial_delay = o.initial_delay_ms > 0 ? o.initial_delay_ms : DEFAULT_INITIAL_DELAY_MS;
    cfg->max_delay = o.max_delay_ms > 0 ? o.max_delay_ms : DEFAULT_MAX_DELAY_MS;
    if (cfg->max_delay < cfg->initial_delay)
        cfg->max_delay = cfg->initial_delay;
    cfg->no_renewal = o.no_session_renewal != 0;
    cfg->no_retry_safe = o.no_retry_safe != 0;
    cfg->connect_timeout =
        o.connect_timeout_ms > 0 ? o.connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
    cfg->sched = o.schedule_reconnect;
    cfg->sched_user = o.schedule_user;
    if (o.oauth != NULL) {
        mcp__oauth_ref(o.oauth);
        cfg->oauth = o.oauth;
    }
    *out = cfg;
    return MCP_OK;
}

/* ---- Failing things ---- */

/* An error whose message says what happened; code is the HTTP status or 0. */
static void fail_request(shttp_ctr *t, json_int_t id, int status, long http, const char *fmt, ...)
    MCP_PRINTF(5, 6);
static void fail_request(shttp_ctr *t, json_int_t id, int status, long http, const char *fmt, ...)
{
    mcp_rpc_error err = {0};
    err.code = (int)http;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof(err.message), fmt, ap);
    va_end(ap);
    mcp__debug("request %lld fails: %s", (long long)id, err.message);
    /* Its stream ends first: the engine's request_done then finds nothing, and
     * callers never touch a stream after failing its request. */
    cstream *st = st_find(t, id);
    if (st != NULL)
        st_finish(st);
    t->base.cbs->on_request_failed(t->base.user, id, status, &err, http);
}

/*
 * A modern request's HTTP error status whose body is a JSON-RPC error answer: the
 * request fails with that error (MCP_ERPC) and the status beside it. 0 when the
 * body holds no JSON-RPC error (nothing done).
 */
static int fail_request_rpc(shttp_ctr *t, json_int_t id, long http, const char *body, size_t len)
{
    json_t *msg = len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
    json_t *e = json_object_get(msg, "error");
    json_t *code = json_object_get(e, "code");
    if (!json_is_integer(code)) {
        json_decref(msg);
        return 0;
    }
    mcp_rpc_error err = {0};
    err.code = (int)json_integer_value(code);
    snprintf(err.message, sizeof(err.message), "%s",
             json_string_value(json_object_get(e, "message"))
                 ? json_string_value(json_object_get(e, "message"))
                 : "");
    err.data = json_object_get(e, "data"); /* borrowed for the call */
    mcp__debug("request %lld fails: HTTP %ld, JSON-RPC error %d %s", (long long)id, http, err.code,
               err.message);
    cstream *st = st_find(t, id);
    if (st != NULL)
        st_finish(st);
    t->base.cbs->on_request_failed(t->base.user, id, MCP_ERPC, &err, http);
    json_decref(msg);
    return 1;
}

static void lose(shttp_ctr *t, int status, const char *why)
{
    if (t->lost || t->closing)
        return;
    t->lost = 1;
    mcp__warn("%s", why);
    t->base.cbs->on_lost(t->base.user, status, why);
}

/* The status for a transfer that failed in curl. */
static int curl_status(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return MCP_ECONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return MCP_ETIMEDOUT;
    default:
        return MCP_EIO;
    }
}

/* The start of an error answer's body, printable, for messages. */
static const char *body_snippet(xfer *x)
{
    if (x->body.len == 0)
        return "";
    for (size_t i = 0; i < x->body.len; i++)
        if ((unsigned char)x->body.data[i] < 0x20)
            x->body.data[i] = ' ';
    return x->body.data;
}

/* ---- Streams ---- */

static cstream *st_new(shttp_ctr *t, int standalone)
{
    cstream *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    st->t = t;
    st->standalone = standalone;
    st->retry_ms = -1;
    MCP__LIST_PUSH(t->streams, st);
    return st;
}

static void st_unlink_free(cstream *st)
{
    shttp_ctr *t = st->t;
    MCP__LIST_UNLINK(t->streams, st);
    if (t->standalone == st)
        t->standalone = NULL;
    free(st->text);
    free(st->last_id);
    json_decref(st->msg);
    free(st);
}

static void timer_closed(uv_handle_t *h)
{
    cstream *st = h->data;
    shttp_ctr *t = st->t;
    st->timer_init = 0;
    st->timer_closing = 0;
    t->timers.open--;
    st_free_if_idle(st);
    maybe_closed(t);
}

/* Frees a finished stream that has nothing left on the loop. */
static void st_free_if_idle(cstream *st)
{
    if (!st->done || st->x != NULL || st->resend)
        return;
    if (st->timer_init) {
        if (!st->timer_closing) {
            st->timer_closing = 1;
            uv_timer_stop(&st->timer);
            uv_close((uv_handle_t *)&st->timer, timer_closed);
        }
        return;
    }
    st_unlink_free(st);
}

static cstream *st_find(shttp_ctr *t, json_int_t id)
{
    for (cstream *st = t->streams; st != NULL; st = st->next)
        if (!st->standalone && !st->done && st->id == id)
            return st;
    return NULL;
}

static void xfer_cancel(xfer *x);

/* The stream is over: its transfer is cancelled, its timer stopped. */
static void st_finish(cstream *st)
{
    st->done = 1;
    st->reconnect_id = 0;
    st->resend = 0;
    if (st->timer_init)
        uv_timer_stop(&st->timer);
    if (st->x != NULL)
        xfer_cancel(st->x);
    st_free_if_idle(st);
}

static int st_timer(cstream *st)
{
    if (st->timer_init)
        return MCP_OK;
    if (uv_timer_init(st->t->base.loop, &st->timer) != 0)
        return MCP_EIO;
    st->timer.data = st;
    st->timer_init = 1;
    st->t->timers.open++;
    return MCP_OK;
}

/* ---- Transfers ---- */

static void xfer_free(xfer *x)
{
    shttp_ctr *t = x->t;
    MCP__LIST_UNLINK(t->xfers, x);
    if (x->sse_inited)
        mcp__sse_parser_free(&x->sse);
    mcp__buf_free(&x->body);
    free(x->session_hdr);
    mcp__curl_body_free(&x->out);
    mcp__oauth_unwait(t->oauth, &x->aw);
    free(x->url);
    free(x->last_id);
    mcp__strv_free(x->extra);
    mcp__buf_free(&x->www_auth);
    free(x->dpop_nonce);
    free(x);
}

/* Detaches x from its stream and stops it; freed now, or when its callback returns. */
static void xfer_cancel(xfer *x)
{
    if (x->dead)
        return;
    x->dead = 1;
    if (x->st != NULL && x->st->x == x)
        x->st->x = NULL;
    x->st = NULL;
    if (x->t->httpsse_get == x)
        x->t->httpsse_get = NULL;
    mcp__curl_cancel(x->req);
    x->req = NULL;
    x->parked = 0;
    mcp__oauth_unwait(x->t->oauth, &x->aw);
    if (x->busy == 0)
        xfer_free(x);
}

static struct curl_slist *add_header(struct curl_slist *h, const char *line, int *bad)
{
    struct curl_slist *n = curl_slist_append(h, line);
    if (n == NULL)
        *bad = 1;
    return n != NULL ? n : h;
}

/*
 * Starts a transfer of kind to url. body (len bytes) is POSTed when not NULL.
 * last_id: the Last-Event-ID to send. with_session: the session's headers. extra:
 * more header lines (NULL-terminated, may be NULL). NULL on failure (nothing
 * started).
 */
static void xfer_authorized(mcp__oauth_waiter *w, int rc, const char *why);

/* Starts (or starts again) x's transfer from what it keeps: a new easy handle with
 * its headers, the provider's lines among them. MCP_OK, or MCP_ENOMEM (nothing
 * started; x unchanged). */
static int xfer_launch(xfer *x, const char *url, const char *last_id, char *const *extra)
{
    shttp_ctr *t = x->t;
    enum xkind kind = x->kind;
    CURL *e = mcp__curlm_easy(t->curl);
    if (e == NULL)
        return MCP_ENOMEM;
    if (kind == X_POST)
        mcp__curl_body_bind(e, &x->out);
    int bad = 0;
    struct curl_slist *h = NULL;
    char line[600];
    if (kind == X_POST) {
        h = add_header(h, "Content-Type: application/json", &bad);
        h = add_header(h,
                       t->mode == MODE_HTTPSSE ? "Accept: application/json"
                                               : "Accept: application/json, text/event-stream",
                       &bad);
    } else if (kind == X_GET || kind == X_HTTPSSE_GET) {
        h = add_header(h, "Accept: text/event-stream", &bad);
        h = add_header(h, "Cache-Control: no-cache", &bad);
    }
    if (x->with_session && t->session_id != NULL) {
        snprintf(line, sizeof(line), "Mcp-Session-Id: %s", t->session_id);
        h = add_header(h, line, &bad);
    }
    if (x->with_session && t->version != NULL) {
        snprintf(line, sizeof(line), "MCP-Protocol-Version: %s", t->version);
        h = add_header(h, line, &bad);
    }
    if (last_id != NULL) {
        snprintf(line, sizeof(line), "Last-Event-ID: %s", last_id);
        h = add_header(h, line, &bad);
    }
    for (char *const *eh = extra; eh != NULL && *eh != NULL; eh++)
        h = add_header(h, *eh, &bad);
    for (char **uh = t->cfg->headers; *uh != NULL; uh++)
        h = add_header(h, *uh, &bad);
    if (t->oauth != NULL) {
        static const char *const methods[] = {"POST", "GET", "DELETE", "GET"};
        char *auth[2];
        if (mcp__oauth_headers(t->oauth, methods[kind], url, auth, &x->auth_gen) != MCP_OK)
            bad = 1;
        for (int i = 0; i < 2; i++)
            if (auth[i] != NULL) {
                h = add_header(h, auth[i], &bad);
                memset(auth[i], 0, strlen(auth[i]));
                free(auth[i]);
            }
    }
    h = add_header(h, "Expect:", &bad); /* no 100-continue round trip for large bodies */
    if (bad) {
        curl_slist_free_all(h);
        curl_easy_cleanup(e);
        return MCP_ENOMEM;
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)t->cfg->connect_timeout);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (x->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, x->timeout_ms);
    if (t->cfg->cacert != NULL)
        curl_easy_setopt(e, CURLOPT_CAINFO, t->cfg->cacert);
    if (t->cfg->cert != NULL)
        curl_easy_setopt(e, CURLOPT_SSLCERT, t->cfg->cert);
    if (t->cfg->key != NULL)
        curl_easy_setopt(e, CURLOPT_SSLKEY, t->cfg->key);
    if (kind == X_DELETE) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    return mcp__curlm_start(t->curl, e, h, &xfer_cbs, x, &x->req);
}

/*
 * Starts a transfer of kind to url. body (len bytes) is POSTed when not NULL.
 * last_id: the Last-Event-ID to send. with_session: the session's headers. extra:
 * more header lines (NULL-terminated, may be NULL). NULL on failure (nothing
 * started). With a provider that has a token on its way, the transfer waits for
 * it (parked) before it starts.
 */
static xfer *xfer_start(shttp_ctr *t, enum xkind kind, const char *url, const char *body,
                        size_t len, const char *last_id, int with_session, long timeout_ms,
                        char *const *extra)
{
    xfer *x = calloc(1, sizeof(*x));
    int err = 0;
    if (x == NULL)
        return NULL;
    x->t = t;
    x->kind = kind;
    x->with_session = with_session;
    x->timeout_ms = timeout_ms;
    x->aw.done = xfer_authorized;
    if (t->oauth != NULL) {
        x->url = mcp__strdup(url);
        x->last_id = last_id != NULL ? mcp__strdup(last_id) : NULL;
        x->extra = extra != NULL ? mcp__strv_copy((const char *const *)extra, &err) : NULL;
        err |= x->url == NULL || (last_id != NULL && x->last_id == NULL);
    }
    if (kind == X_POST && (x->out.data = malloc(len > 0 ? len : 1)) != NULL) {
        memcpy(x->out.data, body, len);
        x->out.len = len;
    }
    if (err || (kind == X_POST && x->out.data == NULL)) {
        mcp__curl_body_free(&x->out);
        free(x->url);
        free(x->last_id);
        mcp__strv_free(x->extra);
        free(x);
        return NULL;
    }
    MCP__LIST_PUSH(t->xfers, x);
    if (t->oauth != NULL && kind != X_DELETE && mcp__oauth_wait_before(t->oauth, &x->aw)) {
        x->parked = 1;
        return x;
    }
    if (xfer_launch(x, url, last_id, extra) != MCP_OK) {
        xfer_free(x);
        return NULL;
    }
    return x;
}

/* What went wrong with x, in words: libcurl says "Out of memory" for a response header
 * line past its limit (100 KiB), which is what that is when the head never ended. */
static const char *xfer_strerror(const xfer *x, CURLcode rc)
{
    if (rc == CURLE_OUT_OF_MEMORY && !x->head_done)
        return "response header too large (a line over libcurl's limit of 100 KiB)";
    if (rc == CURLE_SEND_FAIL_REWIND)
        return "the connection closed before any answer";
    return curl_easy_strerror(rc);
}

/* ---- Incoming messages ---- */

/* A response to the initialize we sent: the revision and the session follow. */
static void saw_init_answer(shttp_ctr *t, json_t *msg, xfer *x)
{
    t->init_answered = 1;
    const char *v =
        json_string_value(json_object_get(json_object_get(msg, "result"), "protocolVersion"));
    if (v != NULL && t->version == NULL)
        t->version = mcp__strdup(v);
    if (x != NULL && x->session_hdr != NULL && t->session_id == NULL) {
        t->session_id = x->session_hdr;
        x->session_hdr = NULL;
    }
}

static int is_response(json_t *m)
{
    return json_is_object(m) && json_object_get(m, "method") == NULL &&
           (json_object_get(m, "result") != NULL || json_object_get(m, "error") != NULL);
}

static void renewal_answer(shttp_ctr *t, xfer *x, json_t *msg);

/* ---- x-mcp-header annotations of the tools (revision 2026-07-28) ---- */

static void tool_heads_free(shttp_ctr *t)
{
    mcp__header_tools_free(&t->tool_heads);
    mcp__map_free(&t->safe_tools);
}

/* A tool that says calling it again does no harm (readOnlyHint or idempotentHint) is
 * kept by name, for its calls to be sent once more after a failed connection; one that
 * no longer says so is forgotten. */
static void note_safe_tool(shttp_ctr *t, const char *name, const json_t *annotations)
{
    static char yes;
    int safe = json_is_true(json_object_get(annotations, "readOnlyHint")) ||
               json_is_true(json_object_get(annotations, "idempotentHint"));
    if (!safe)
        mcp__map_remove(&t->safe_tools, name);
    else if (mcp__map_get(&t->safe_tools, name) == NULL && t->safe_tools.len < MAX_SAFE_TOOLS)
        (void)mcp__map_put(&t->safe_tools, name, &yes); /* out of memory: not repeated */
}

/*
 * A tools/list result of the modern era: the tools whose x-mcp-header annotations are
 * invalid are taken out (mcp__header_tools_read), the others' are kept for their calls'
 * Mcp-Param headers, and those safe to call again are noted.
 */
static void read_tools(shttp_ctr *t, json_t *result)
{
    mcp__header_tools_read(&t->tool_heads, result);
    json_t *tools = json_object_get(result, "tools");
    for (size_t i = 0; i < json_array_size(tools); i++) {
        json_t *tool = json_array_get(tools, i);
        const char *name = json_string_value(json_object_get(tool, "name"));
        if (name != NULL)
            note_safe_tool(t, name, json_object_get(tool, "annotations"));
    }
}

/* One message from the server, on x. */
static void incoming(xfer *x, json_t *msg)
{
    shttp_ctr *t = x->t;
    if (t->closing || t->lost)
        return;
    if (x->is_renewal) {
        renewal_answer(t, x, msg);
        return;
    }
    if (x->session_bad && x->has_id && t->init_msg != NULL && !t->init_answered &&
        x->id == t->init_id) {
        fail_request(t, t->init_id, MCP_EPROTO, 0, "%s", SESSION_BAD);
        return;
    }
    size_t n = json_is_array(msg) ? json_array_size(msg) : 1;
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_is_array(msg) ? json_array_get(msg, i) : msg;
        if (!is_response(m))
            continue;
        json_t *id = json_object_get(m, "id");
        if (!json_is_integer(id))
            continue;
        if (t->init_msg != NULL && !t->init_answered && json_integer_value(id) == t->init_id)
            saw_init_answer(t, m, x);
        if (x->st != NULL && !x->st->standalone && x->st->id == json_integer_value(id)) {
            x->st->answered = 1;
            if (x->st->tools_list)
                read_tools(t, json_object_get(m, "result"));
        }
    }
    t->base.cbs->on_value(t->base.user, msg);
}

/* why (may be NULL) gets jansson's reason when text is not JSON. */
static void incoming_text_why(xfer *x, const char *text, size_t len, json_error_t *why)
{
    json_error_t jerr;
    json_t *msg = mcp__json_parse(text, len, 0, &jerr);
    if (msg == NULL) {
        mcp__warn("the server sent a message that is not JSON (%s); dropped", jerr.text);
        if (why != NULL)
            *why = jerr;
        return;
    }
    incoming(x, msg);
    json_decref(msg);
}

static void incoming_text(xfer *x, const char *text, size_t len)
{
    incoming_text_why(x, text, len, NULL);
}

/*
 * A 200 JSON answer to the request of x: read, and the request fails when the body
 * did not answer it (not JSON, or another message): nothing else would ever end it.
 */
static void json_answer(xfer *x, long status)
{
    shttp_ctr *t = x->t;
    json_int_t id = x->id;
    json_error_t why = {0};
    incoming_text_why(x, x->body.data ? x->body.data : "", x->body.len, &why);
    /* The engine ended the stream when the answer came; one that is still here got
     * none. */
    if (!x->has_id || t->closing || t->lost || st_find(t, id) == NULL)
        return;
    if (why.text[0] != '\0')
        fail_request(t, id, MCP_EPROTO, status,
                     "HTTP %ld with a JSON body that cannot be read (line %d column %d: %s)",
                     status, why.line, why.column, why.text);
    else
        fail_request(t, id, MCP_EPROTO, status,
                     "HTTP %ld with a JSON body that is not the request's answer", status);
}

/* ---- SSE ---- */

static int httpsse_endpoint(shttp_ctr *t, const char *data, size_t len);

static int sse_block(void *user, const mcp__sse_block *b)
{
    xfer *x = user;
    if (x->dead)
        return 1;
    cstream *st = x->st;
    /* Progress is an event that carries data, or the first event of a stream that names
     * an id (its priming event), once: a server that sends a new id alone on every
     * connection must not keep us reconnecting for ever. */
    int progress = b->data != NULL && b->data_len > 0;
    if (st != NULL && b->id_set && !st->primed) {
        st->primed = 1;
        progress = 1;
    }
    if (progress)
        x->events++;
    if (st != NULL) {
        if (progress)
            st->attempts = 0; /* the stream delivers: SEP-1699 polling may go on */
        if (b->id_set) {
            free(st->last_id);
            st->last_id = b->last_event_id_len > 0 ? mcp__strdup(b->last_event_id) : NULL;
        }
    }
    if (b->data == NULL || b->data_len == 0)
        return 0; /* a priming event, or an id alone */
    if (x->kind == X_HTTPSSE_GET && strcmp(b->type, "endpoint") == 0)
        return httpsse_endpoint(x->t, b->data, b->data_len) == MCP_OK ? 0 : 1;
    if (strcmp(b->type, "message") != 0)
        return 0; /* an event type of no meaning to MCP */
    incoming_text(x, b->data, b->data_len);
    return x->dead ? 1 : 0;
}

static int sse_retry(void *user, uint64_t ms)
{
    xfer *x = user;
    if (x->st != NULL)
        x->st->retry_ms = (long)ms;
    return 0;
}

static const mcp__sse_callbacks sse_cbs = {.on_block = sse_block, .on_retry = sse_retry};

/* ---- curl callbacks ---- */

/* Every byte in 0x21-0x7E. */
static int visible_ascii(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

/* A WWW-Authenticate or DPoP-Nonce header of a refusal, kept for the provider (values
 * up to 8 KiB in all): 1 when it was one of those. */
static int t_oauth_header(xfer *x, const char *name, size_t nlen, const char *v, size_t vlen)
{
    if (x->t->oauth == NULL)
        return 0;
    /* A DPoP nonce may come with any answer (RFC 9449 §9): the next proof carries it. */
    if (nlen == 10 && strncasecmp(name, "dpop-nonce", 10) == 0 && vlen < 1024) {
        free(x->dpop_nonce);
        if ((x->dpop_nonce = malloc(vlen + 1)) != NULL) {
            memcpy(x->dpop_nonce, v, vlen);
            x->dpop_nonce[vlen] = '\0';
            if (x->status < 400)
                mcp__oauth_server_nonce(x->t->oauth, x->dpop_nonce);
        }
        return 1;
    }
    if (x->status != 401 && x->status != 403)
        return 0;
    if (nlen == 16 && strncasecmp(name, "www-authenticate", 16) == 0) {
        if (x->www_auth.len + vlen + 2 < 8192 &&
            (x->www_auth.len == 0 || mcp__buf_append(&x->www_auth, ", ", 2) == MCP_OK) &&
            mcp__buf_append(&x->www_auth, v, vlen) == MCP_OK &&
            mcp__buf_reserve(&x->www_auth, 1) == MCP_OK)
            x->www_auth.data[x->www_auth.len] = '\0';
        return 1;
    }
    return 0;
}

/* Forgets what a response's head said (a new response begins). */
static void head_reset(xfer *x)
{
    x->status = 0;
    x->ctype = CT_NONE;
    free(x->session_hdr);
    x->session_hdr = NULL;
    x->session_bad = 0;
    x->head_done = 0;
    mcp__buf_reset(&x->www_auth);
    free(x->dpop_nonce);
    x->dpop_nonce = NULL;
}

static int xfer_header(void *user, const char *line, size_t len)
{
    xfer *x = user;
    if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new response (after an interim one): start over. */
        const char *sp = memchr(line, ' ', len);
        head_reset(x);
        x->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
        return 0;
    }
    const char *colon = memchr(line, ':', len);
    if (colon == NULL) {
        if (x->status >= 200)
            x->head_done = 1; /* the end of the final response's head */
        if (x->kind == X_GET && x->st != NULL && x->st->standalone && x->status >= 200)
            became_ready(x->t); /* the end of the standalone stream's head */
        return 0;
    }
    size_t nlen = (size_t)(colon - line);
    const char *v = colon + 1;
    const char *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
    if (nlen == 12 && strncasecmp(line, "content-type", 12) == 0) {
        if (vlen >= 16 && strncasecmp(v, "application/json", 16) == 0)
            x->ctype = CT_JSON;
        else if (vlen >= 17 && strncasecmp(v, "text/event-stream", 17) == 0)
            x->ctype = CT_SSE;
        else
            x->ctype = CT_OTHER;
    } else if (t_oauth_header(x, line, nlen, v, vlen)) {
        /* kept for the provider */
    } else if (nlen == 14 && strncasecmp(line, "mcp-session-id", 14) == 0 && vlen > 0 &&
               vlen < 512) {
        free(x->session_hdr);
        x->session_hdr = NULL;
        /* Visible ASCII only (2025-11-25 transports, "Session Management"): a CR or a
         * control byte would go back into every request's head. */
        x->session_bad = !visible_ascii(v, vlen);
        if (!x->session_bad && (x->session_hdr = malloc(vlen + 1)) != NULL) {
            memcpy(x->session_hdr, v, vlen);
            x->session_hdr[vlen] = '\0';
        }
    }
    return 0;
}

static int xfer_data(void *user, const char *data, size_t len)
{
    xfer *x = user;
    shttp_ctr *t = x->t;
    if (x->dead)
        return -1;
    if (x->status < 200 || x->status >= 300) {
        /* An error's body: keep its start for the message (a modern one whole, up to a
         * bound, for its JSON-RPC error). */
        size_t max = x->modern ? MODERN_ERROR_BODY_MAX : ERROR_BODY_MAX;
        if (x->body.len < max) {
            size_t n = max - x->body.len;
            mcp__buf_append(&x->body, data, len < n ? len : n);
        }
        return 0;
    }
    if (x->ctype == CT_JSON) {
        if (x->body.len + len > t->max_message) {
            x->body_over = 1;
            return -1;
        }
        return mcp__buf_append(&x->body, data, len) == MCP_OK ? 0 : -1;
    }
    if (x->ctype != CT_SSE)
        return 0; /* a 202's body, say: nothing to read there */
    if (!x->sse_inited) {
        mcp__sse_parser_init(&x->sse, t->max_message, &sse_cbs, x);
        x->sse_inited = 1;
    }
    x->busy++;
    size_t off = 0;
    int rc = MCP_OK;
    while (off < len && !x->dead) {
        size_t used = 0;
        rc = mcp__sse_parser_feed(&x->sse, data + off, len - off, &used);
        off += used;
        if (rc == MCP_ELIMIT)
            mcp__warn("dropped an SSE event from the server over %zu bytes", t->max_message);
        else if (rc != MCP_OK)
            break;
    }
    x->busy--;
    if (x->dead) {
        if (x->busy == 0) {
            xfer_free(x);
            maybe_closed(t);
        }
        return -1;
    }
    return rc == MCP_OK || rc == MCP_ELIMIT ? 0 : -1;
}

/* ---- Reconnection ---- */

static uint64_t next_random(shttp_ctr *t)
{
    /* xorshift64*: jitter needs no secrecy, just spread. */
    t->rng ^= t->rng >> 12;
    t->rng ^= t->rng << 25;
    t->rng ^= t->rng >> 27;
    return t->rng * 2685821657736338717ull;
}

/* The wait before reconnection number `attempt` (1 for the first) of st. */
static long reconnect_delay(cstream *st, int attempt)
{
    shttp_ctr *t = st->t;
    if (st->retry_ms >= 0) /* the server said: that, within bounds */
        return st->retry_ms < MIN_RETRY_MS        ? MIN_RETRY_MS
               : st->retry_ms > t->cfg->max_delay ? t->cfg->max_delay
                                                  : st->retry_ms;
    long d = t->cfg->initial_delay;
    for (int i = 1; i < attempt && d < t->cfg->max_delay; i++)
        d *= 2;
    if (d > t->cfg->max_delay)
        d = t->cfg->max_delay;
    long jitter = d / 5;
    if (jitter > 0)
        d -= (long)(next_random(t) % (uint64_t)(jitter + 1));
    return d;
}

static void reconnect_now(cstream *st)
{
    if (st->done || st->t->closing || st->t->renewing)
        return;
    if (open_get(st) == MCP_OK) {
        st->x->reconnection = 1;
        return;
    }
    if (st->standalone)
        st_finish(st);
    else
        fail_request(st->t, st->id, MCP_ENOMEM, 0, "out of memory reconnecting the stream");
}

static void on_reconnect_timer(uv_timer_t *tm)
{
    reconnect_now(tm->data);
}

static void schedule_reconnect(cstream *st)
{
    shttp_ctr *t = st->t;
    int attempt = st->attempts + 1; /* this reconnection's number in the run */
    long delay = reconnect_delay(st, attempt);
    if (t->cfg->sched != NULL) {
        st->reconnect_id = ++t->next_reconnect_id;
        mcp__debug("stream reconnection %llu handed to the application (%ld ms, attempt %d)",
                   (unsigned long long)st->reconnect_id, delay, attempt);
        t->cfg->sched(t->base.client, st->reconnect_id, (int)delay, attempt, t->cfg->sched_user);
        return;
    }
    if (st_timer(st) != MCP_OK) {
        if (!st->standalone)
            fail_request(t, st->id, MCP_EIO, 0, "cannot start a timer to reconnect");
        else
            st_finish(st);
        return;
    }
    uv_timer_start(&st->timer, on_reconnect_timer, (uint64_t)delay, 0);
}

static int shttp_reconnect(mcp__ctr *base, uint64_t id)
{
    shttp_ctr *t = (shttp_ctr *)base;
    if (id == 0 || t->closing)
        return MCP_ENOENT;
    for (cstream *st = t->streams; st != NULL; st = st->next) {
        if (st->reconnect_id == id && !st->done) {
            st->reconnect_id = 0;
            reconnect_now(st);
            return MCP_OK;
        }
    }
    return MCP_ENOENT;
}

/*
 * The connection x of st ended before the stream's request was answered (or,
 * for the standalone stream, at all). Decide: reconnect after the delay, or give
 * up. A reconnection that brought nothing counts toward the limit: after
 * max_retries of them in a row, no more. (A stream's first connection is no
 * reconnection: a request's POST that brought nothing has no id to resume from,
 * and the standalone stream's first GET is followed by max_retries
 * reconnections at most, as any other.)
 */
static void st_broke(cstream *st, xfer *x)
{
    shttp_ctr *t = st->t;
    if (st->done || t->closing)
        return;
    if (x->events == 0 && x->reconnection)
        st->attempts++;
    if (!st->standalone && st->last_id == NULL) {
        fail_request(t, st->id, MCP_ECLOSED, 0,
                     "the server closed the request's stream before answering, and gave no "
                     "event id to resume it from");
        return;
    }
    if (t->cfg->max_retries < 0 || st->attempts >= t->cfg->max_retries) {
        if (st->standalone) {
            mcp__warn("the server's standalone stream ended, and %d reconnections in a row "
                      "brought nothing; not reopened",
                      st->attempts);
            t->standalone_off = 1;
            t->standalone_gave_up = 1;
            st_finish(st);
        } else if (t->cfg->max_retries < 0) {
            fail_request(t, st->id, MCP_ELIMIT, 0,
                         "the request's stream ended before its answer, and reconnection is off");
        } else {
            fail_request(t, st->id, MCP_ELIMIT, 0,
                         "gave up resuming the request's stream: %d reconnections in a row "
                         "brought no event",
                         st->attempts);
        }
        return;
    }
    schedule_reconnect(st);
}

/* A GET that resumes st (from its last event id) or opens the standalone stream. */
static int open_get(cstream *st)
{
    shttp_ctr *t = st->t;
    xfer *x = xfer_start(t, X_GET, t->cfg->url, NULL, 0, st->last_id, 1, 0, NULL);
    if (x == NULL)
        return MCP_ENOMEM;
    x->st = st;
    st->x = x;
    return MCP_OK;
}

static void became_ready(shttp_ctr *t)
{
    if (t->ready_done)
        return;
    t->ready_done = 1;
    uv_timer_stop(&t->ready_timer);
    if (t->ready_wanted && !t->closing)
        t->base.cbs->on_ready(t->base.user);
}

static void on_ready_timer(uv_timer_t *tm)
{
    became_ready(tm->data);
}

static int shttp_await_ready(mcp__ctr *base)
{
    shttp_ctr *t = (shttp_ctr *)base;
    if (t->ready_done || t->mode != MODE_STREAMABLE || t->closing || t->lost)
        return 0;
    t->ready_wanted = 1;
    uv_timer_start(&t->ready_timer, on_ready_timer, (uint64_t)t->cfg->connect_timeout, 0);
    return 1;
}

static void open_standalone(shttp_ctr *t)
{
    if (t->standalone != NULL || t->standalone_off || t->mode != MODE_STREAMABLE || t->closing) {
        became_ready(t);
        return;
    }
    cstream *st = st_new(t, 1);
    if (st == NULL || open_get(st) != MCP_OK) {
        mcp__warn("cannot open the standalone stream: out of memory");
        became_ready(t);
        if (st != NULL) {
            st->done = 1;
            st_free_if_idle(st);
        }
        return;
    }
    t->standalone = st;
}

/* ---- Sending ---- */

/* POSTs text; a modern one (revision 2026-07-28) goes with the extra headers and
 * without the session's. */
static int post_ex(shttp_ctr *t, const char *text, size_t len, cstream *st, int has_id,
                   json_int_t id, int modern, char *const *extra, xfer **out)
{
    const char *url = t->mode == MODE_HTTPSSE ? t->post_url : t->cfg->url;
    xfer *x = xfer_start(t, X_POST, url, text, len, NULL, !modern,
                         st == NULL ? SMALL_POST_TIMEOUT_MS : 0, extra);
    if (x == NULL)
        return MCP_ENOMEM;
    x->modern = modern;
    x->st = st;
    /* A modern request safe to repeat is repeated by modern_repeat, once, after the
     * reconnection delay (a restarting server is listening again by then). */
    x->out.may_rewind = !has_id || (st != NULL && st->safe);
    x->has_id = has_id;
    x->id = id;
    if (st != NULL)
        st->x = x;
    if (out != NULL)
        *out = x;
    return MCP_OK;
}

static int post(shttp_ctr *t, const char *text, size_t len, cstream *st, int has_id, json_int_t id,
                xfer **out)
{
    return post_ex(t, text, len, st, has_id, id, 0, NULL, out);
}

static int enqueue(shttp_ctr *t, const char *text, size_t len, cstream *st, int has_id,
                   json_int_t id)
{
    queued *q = calloc(1, sizeof(*q));
    if (q == NULL || (q->text = malloc(len + 1)) == NULL) {
        free(q);
        return MCP_ENOMEM;
    }
    memcpy(q->text, text, len);
    q->text[len] = '\0';
    q->len = len;
    q->st = st;
    q->has_id = has_id;
    q->id = id;
    if (t->q_tail != NULL)
        t->q_tail->next = q;
    else
        t->q_head = q;
    t->q_tail = q;
    return MCP_OK;
}

/* Sends what waited: requests to resend first (a renewal), then the queue. */
/*
 * The first stream waiting for a resend, or NULL. Loops that call back into the
 * client (fail_request) look again from the start after each call, since the
 * client may end or start other requests meanwhile.
 */
static cstream *next_resend(shttp_ctr *t)
{
    if (t->closing)
        return NULL;
    for (cstream *st = t->streams; st != NULL; st = st->next)
        if (st->resend && !st->done)
            return st;
    return NULL;
}

/* Fails every request waiting for a resend. */
static void fail_resends(shttp_ctr *t, int status, long http, const char *why)
{
    cstream *st;
    while ((st = next_resend(t)) != NULL) {
        st->resend = 0;
        fail_request(t, st->id, status, http, "%s", why);
    }
}

static void flush(shttp_ctr *t)
{
    cstream *st;
    while ((st = next_resend(t)) != NULL) {
        st->resend = 0;
        if (post(t, st->text, st->len, st, 1, st->id, NULL) != MCP_OK)
            fail_request(t, st->id, MCP_ENOMEM, 0, "out of memory resending the request");
    }
    while (t->q_head != NULL && !t->renewing && !t->closing) {
        queued *q = t->q_head;
        t->q_head = q->next;
        if (t->q_head == NULL)
            t->q_tail = NULL;
        int rc = MCP_OK;
        if (q->st == NULL || !q->st->done)
            rc = post(t, q->text, q->len, q->st, q->has_id, q->id, NULL);
        if (rc != MCP_OK && q->has_id) {
            fail_request(t, q->id, rc, 0, "out of memory sending the request");
        }
        free(q->text);
        free(q);
    }
}

/* ---- Sending in the modern era ---- */

/* Header lines being gathered: NULL-terminated, each malloc'd. */
typedef struct hlines {
    char *v[MCP__HEADER_MAX_PARAMS + 8];
    size_t n;
} hlines;

static void hlines_free(hlines *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i]);
    h->n = 0;
}

/* Adds "Name: value", or "Name;" for an empty value (curl drops "Name:" lines). */
static int hlines_add(hlines *h, const char *name, const char *value)
{
    if (h->n + 1 >= sizeof(h->v) / sizeof(*h->v))
        return MCP_ELIMIT;
    char *line =
        value[0] != '\0' ? mcp__asprintf("%s: %s", name, value) : mcp__asprintf("%s;", name);
    if (line == NULL)
        return MCP_ENOMEM;
    h->v[h->n++] = line;
    h->v[h->n] = NULL;
    return MCP_OK;
}

static int hlines_add_cb(void *user, const char *name, const char *value)
{
    return hlines_add(user, name, value);
}

/* The request metadata headers of a modern message (mcp__header_request). */
static int modern_headers(shttp_ctr *t, const json_t *msg, const char *version, hlines *h)
{
    return mcp__header_request(&t->tool_heads, msg, version, hlines_add_cb, h);
}

/* The revision a request names in its _meta, when it is a modern one. */
static const char *modern_version(const json_t *msg)
{
    const json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
    const mcp__revision *rev = mcp__revision_find(
        json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion")));
    return rev != NULL && rev->modern ? rev->version : NULL;
}

/*
 * Whether a request may be sent again when its connection fails before any answer:
 * by us (revision 2026-07-28 has no resumption), or by libcurl, which repeats a request
 * whose reused connection closed first. Safe: what only reads (lists, reads, gets,
 * completions, ping, server/discover), and tools/call of a tool whose annotations say
 * readOnlyHint or idempotentHint (as the last tools/list gave them). RFC 9110 §9.2.2.
 */
static int repeat_safe(shttp_ctr *t, const char *method, const json_t *msg)
{
    if (t->cfg->no_retry_safe)
        return 0;
    static const char *const reads[] = {
        "tools/list",          "resources/list", "resources/templates/list",
        "resources/read",      "prompts/list",   "prompts/get",
        "completion/complete", "ping",           "server/discover"};
    /* A retry that carries a requestState spends it (a server takes each once): sent
     * again, it could only be refused. */
    if (json_object_get(json_object_get(msg, "params"), "requestState") != NULL)
        return 0;
    for (size_t i = 0; i < sizeof(reads) / sizeof(*reads); i++)
        if (strcmp(method, reads[i]) == 0)
            return 1;
    const char *tool = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
    return strcmp(method, "tools/call") == 0 && tool != NULL &&
           mcp__map_get(&t->safe_tools, tool) != NULL;
}

static int post_modern(shttp_ctr *t, const json_t *msg, const char *text, size_t len,
                       const char *version, cstream *st)
{
    hlines h = {0};
    int rc = modern_headers(t, msg, version, &h);
    if (rc == MCP_OK)
        rc = post_ex(t, text, len, st, st != NULL, st != NULL ? st->id : 0, 1, h.v, NULL);
    hlines_free(&h);
    return rc;
}

/* Sends a message of the modern era: a request (version: the one its _meta names) or a
 * notification. */
static int send_modern(shttp_ctr *t, const json_t *msg, const char *text, size_t len,
                       const char *version)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *idv = json_object_get(msg, "id");
    int is_request = method != NULL && json_is_integer(idv);
    if (!is_request && method != NULL && strcmp(method, "notifications/cancelled") == 0)
        return MCP_OK; /* the request's stream has closed: that is the cancellation */
    if (method == NULL)
        return MCP_EINVAL; /* a client sends no responses in this revision */
    cstream *st = NULL;
    if (is_request) {
        if ((st = st_new(t, 0)) == NULL)
            return MCP_ENOMEM;
        st->id = json_integer_value(idv);
        st->modern = 1;
        st->tools_list = strcmp(method, "tools/list") == 0;
        if (repeat_safe(t, method, msg)) {
            st->text = malloc(len + 1);
            if (st->text != NULL) { /* out of memory: not repeated */
                memcpy(st->text, text, len);
                st->text[len] = '\0';
                st->len = len;
                st->msg = json_incref((json_t *)msg);
                st->version = version;
            }
        }
    }
    int rc = post_modern(t, msg, text, len, version, st);
    if (rc != MCP_OK && st != NULL)
        st_unlink_free(st);
    return rc;
}

static void on_repeat_timer(uv_timer_t *tm)
{
    cstream *st = tm->data;
    shttp_ctr *t = st->t;
    if (st->done || t->closing || t->lost)
        return;
    int rc = post_modern(t, st->msg, st->text, st->len, st->version, st);
    if (rc != MCP_OK)
        fail_request(t, st->id, rc, 0, "cannot send the request once more: %s", mcp_strerror(rc));
}

/*
 * A modern request whose connection failed before any answer: sent once more after the
 * reconnection delay when it is safe to repeat (see repeat_safe) and that is not off.
 * 1 when it will be; 0 when the caller fails it.
 */
static int modern_repeat(cstream *st, const char *why)
{
    shttp_ctr *t = st->t;
    if (st->msg == NULL || st->repeated || st->answered || t->closing || t->lost ||
        st_timer(st) != MCP_OK)
        return 0;
    st->repeated = 1;
    long delay = reconnect_delay(st, 1);
    mcp__warn("request %lld (%s) failed before its answer (%s): safe to repeat, sent once more "
              "in %ld ms",
              (long long)st->id, json_string_value(json_object_get(st->msg, "method")), why, delay);
    uv_timer_start(&st->timer, on_repeat_timer, (uint64_t)delay, 0);
    return 1;
}

static int shttp_send(mcp__ctr *base, const json_t *msg, const char *text, size_t len)
{
    shttp_ctr *t = (shttp_ctr *)base;
    if (t->closing || t->lost)
        return MCP_ECLOSED;
    const char *version = modern_version(msg);
    if (version != NULL || t->modern)
        return send_modern(t, msg, text, len,
                           version != NULL ? version : mcp__revision_modern()->version);
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *idv = json_object_get(msg, "id");
    int is_request = method != NULL && json_is_integer(idv);
    json_int_t id = is_request ? json_integer_value(idv) : 0;
    if (is_request && strcmp(method, "initialize") == 0 && t->init_msg == NULL) {
        t->init_msg = json_deep_copy(msg);
        t->init_id = id;
        if (t->init_msg == NULL)
            return MCP_ENOMEM;
    }
    int notified = method != NULL && strcmp(method, "notifications/initialized") == 0;
    cstream *st = NULL;
    if (is_request && t->mode == MODE_STREAMABLE) {
        st = st_new(t, 0);
        if (st == NULL || (st->text = malloc(len + 1)) == NULL) {
            if (st != NULL)
                st_unlink_free(st);
            return MCP_ENOMEM;
        }
        memcpy(st->text, text, len);
        st->text[len] = '\0';
        st->len = len;
        st->id = id;
        st->safe = repeat_safe(t, method, msg);
    }
    int rc;
    xfer *x = NULL;
    if (t->renewing || (t->mode == MODE_HTTPSSE && t->post_url == NULL))
        rc = enqueue(t, text, len, st, is_request, id);
    else
        rc = post(t, text, len, st, is_request, id, &x);
    if (rc != MCP_OK) {
        if (st != NULL)
            st_unlink_free(st);
        return rc;
    }
    if (notified) {
        t->standalone_wanted = 1;
        if (x != NULL)
            x->is_notified = 1;
        else
            open_standalone(t); /* queued behind it: the order holds */
    }
    return MCP_OK;
}

/* An answered request's stream that the server did not end in time. */
static void on_linger(uv_timer_t *tm)
{
    cstream *st = tm->data;
    if (st->x != NULL)
        xfer_cancel(st->x);
    st_free_if_idle(st);
}

static void shttp_request_done(mcp__ctr *base, json_int_t id)
{
    shttp_ctr *t = (shttp_ctr *)base;
    cstream *st = st_find(t, id);
    if (st == NULL)
        return;
    if (st->answered && st->x != NULL && !t->closing) {
        /* The server ends the stream after the answer; give it a moment rather
         * than break the connection (which could then not be reused). */
        st->done = 1;
        if (st_timer(st) == MCP_OK)
            uv_timer_start(&st->timer, on_linger, LINGER_MS, 0);
        else
            st_finish(st);
        return;
    }
    st_finish(st);
}

/* ---- Session renewal (a 404 for our session) ---- */

static void renewal_failed(shttp_ctr *t, int status, long http, const char *why)
{
    t->renewing = 0;
    char msg[300];
    snprintf(msg, sizeof(msg),
             "the server forgot the session, and a new one could not be started: %s", why);
    fail_resends(t, status, http, msg);
    lose(t, status, "the server forgot the session, and a new one could not be started");
}

static void renewal_answer(shttp_ctr *t, xfer *x, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    if (!is_response(msg) || !json_is_string(id) || strcmp(json_string_value(id), t->renew_id) != 0)
        return; /* the server's own messages during initialize: nothing to answer for */
    json_t *err = json_object_get(msg, "error");
    const char *v =
        json_string_value(json_object_get(json_object_get(msg, "result"), "protocolVersion"));
    x->is_renewal = 0; /* answered */
    if (x->session_bad) {
        renewal_failed(t, MCP_EPROTO, 0, SESSION_BAD);
        return;
    }
    if (err != NULL || v == NULL || t->version == NULL || strcmp(v, t->version) != 0) {
        renewal_failed(t, MCP_EPROTO, 0,
                       err != NULL ? "initialize was refused" : "the revision changed");
        return;
    }
    t->session_id = x->session_hdr;
    x->session_hdr = NULL;
    mcp__debug("new session started after a 404");
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    t->renewing = 0;
    post(t, note, sizeof(note) - 1, NULL, 0, 0, NULL);
    flush(t);
    if (t->standalone_gave_up) {
        /* Given up while the server was away; it is back, with a new session. */
        t->standalone_off = 0;
        t->standalone_gave_up = 0;
    }
    if (t->standalone_wanted)
        open_standalone(t);
}

/*
 * The server answered 404 to our session: every pending request goes out once
 * more on a new session, the standalone stream is reopened there.
 */
static void start_renewal(shttp_ctr *t)
{
    if (t->renewing)
        return;
    t->renewing = 1; /* what the client sends meanwhile waits */
    free(t->session_id);
    t->session_id = NULL;
    /* First without calling back: every stream stops; requests wait for a resend,
     * or fail if they were resent once already. */
    for (cstream *st = t->streams, *next; st != NULL; st = next) {
        next = st->next;
        if (st->done)
            continue;
        if (st->x != NULL)
            xfer_cancel(st->x);
        if (st->timer_init)
            uv_timer_stop(&st->timer);
        st->reconnect_id = 0;
        free(st->last_id);
        st->last_id = NULL;
        st->attempts = 0;
        st->retry_ms = -1;
        st->primed = 0;
        if (st->standalone) {
            st_finish(st);
        } else {
            st->resend = 1;
            st->again = st->renewed;
            st->renewed = 1;
        }
    }
    for (cstream *st = t->streams; st != NULL;) {
        if (t->closing)
            return;
        if (!st->resend || !st->again || st->done) {
            st = st->next;
            continue;
        }
        st->resend = 0;
        fail_request(t, st->id, MCP_EHTTP, 404,
                     "the server forgot the session again after the request was resent on a "
                     "new one");
        st = t->streams; /* the client may have changed the list */
    }
    if (t->cfg->no_renewal) {
        t->renewing = 0;
        fail_resends(t, MCP_EHTTP, 404, "the server forgot the session (HTTP 404)");
        lose(t, MCP_EHTTP, "the server forgot the session (HTTP 404)");
        return;
    }
    if (t->closing || t->lost)
        return;
    json_t *init = json_deep_copy(t->init_msg);
    snprintf(t->renew_id, sizeof(t->renew_id), "libmcp-renew-%u", ++t->renewals);
    char *text = NULL;
    if (init != NULL && json_object_set_new(init, "id", json_string(t->renew_id)) == 0)
        text = json_dumps(init, JSON_COMPACT);
    json_decref(init);
    char *version = t->version;
    t->version = NULL; /* initialize goes without the header */
    xfer *x = NULL;
    int rc = text != NULL ? post(t, text, strlen(text), NULL, 0, 0, &x) : MCP_ENOMEM;
    t->version = version;
    free(text);
    if (rc != MCP_OK) {
        renewal_failed(t, rc, 0, "out of memory");
        return;
    }
    x->is_renewal = 1;
}

/* ---- HTTP+SSE (2024-11-05) ---- */

static int httpsse_endpoint(shttp_ctr *t, const char *data, size_t len)
{
    if (t->post_url != NULL)
        return MCP_OK; /* the first one counts */
    CURLU *u = curl_url();
    char *rel = malloc(len + 1);
    char *abs = NULL;
    if (u != NULL && rel != NULL) {
        memcpy(rel, data, len);
        rel[len] = '\0';
        if (curl_url_set(u, CURLUPART_URL, t->cfg->url, 0) == CURLUE_OK &&
            curl_url_set(u, CURLUPART_URL, rel, 0) == CURLUE_OK)
            curl_url_get(u, CURLUPART_URL, &abs, 0);
    }
    free(rel);
    curl_url_cleanup(u);
    if (abs == NULL) {
        lose(t, MCP_EPROTO, "the server's endpoint event does not hold a usable URL");
        return MCP_EPROTO;
    }
    t->post_url = mcp__strdup(abs);
    curl_free(abs);
    if (t->post_url == NULL) {
        lose(t, MCP_ENOMEM, "out of memory");
        return MCP_ENOMEM;
    }
    mcp__debug("HTTP+SSE endpoint: %s", t->post_url);
    flush(t);
    return MCP_OK;
}

static void open_httpsse(shttp_ctr *t)
{
    t->mode = MODE_HTTPSSE;
    xfer *x = xfer_start(t, X_HTTPSSE_GET, t->cfg->url, NULL, 0, NULL, 0, 0, NULL);
    if (x == NULL) {
        lose(t, MCP_ENOMEM, "out of memory opening the SSE stream");
        return;
    }
    t->httpsse_get = x;
}

/* ---- The end of a transfer ---- */

/*
 * The end of a modern POST: no resumption, no session. A stream that breaks or ends
 * before the answer fails its request; an HTTP error carrying a JSON-RPC error fails
 * it with that error.
 */
static void post_done_modern(xfer *x, CURLcode rc, long status)
{
    shttp_ctr *t = x->t;
    cstream *st = x->st;
    if (!x->has_id) {
        if (rc != CURLE_OK)
            mcp__warn("POST of a notification failed: %s", xfer_strerror(x, rc));
        else if (status < 200 || status >= 300)
            mcp__warn("HTTP %ld to the POST of a notification: %s", status, body_snippet(x));
        return;
    }
    if (st == NULL || st->done)
        return; /* answered, cancelled or failed already */
    if (rc != CURLE_OK) {
        if (st->answered || modern_repeat(st, xfer_strerror(x, rc)))
            return;
        const char *repeat = st->repeated      ? "it was sent once more already"
                             : st->msg != NULL ? "it could not be sent once more"
                             : t->cfg->no_retry_safe
                                 ? "repeating safe requests is off"
                                 : "it is not safe to repeat (only reads, and tools marked "
                                   "readOnlyHint or idempotentHint, are)";
        if (x->ctype == CT_SSE || x->ctype == CT_JSON)
            fail_request(t, x->id, MCP_ECLOSED, x->status,
                         "the request's stream broke before its answer (%s); revision %s has no "
                         "resumption, and %s",
                         xfer_strerror(x, rc), mcp__revision_modern()->version, repeat);
        else
            fail_request(t, x->id, curl_status(rc), 0,
                         "POST failed: %s; revision %s has no resumption, and %s",
                         xfer_strerror(x, rc), mcp__revision_modern()->version, repeat);
        return;
    }
    if (status < 200 || status >= 300) {
        if (!fail_request_rpc(t, x->id, status, x->body.data, x->body.len))
            fail_request(t, x->id, MCP_EHTTP, status, "HTTP %ld from POST: %s", status,
                         body_snippet(x));
        return;
    }
    if (x->ctype == CT_JSON) {
        if (x->body_over) {
            fail_request(t, x->id, MCP_ELIMIT, 0, "the answer is longer than %zu bytes",
                         t->max_message);
            return;
        }
        json_answer(x, status);
        return;
    }
    if (st->answered)
        return;
    if (x->ctype == CT_SSE)
        fail_request(t, x->id, MCP_ECLOSED, status,
                     "the server ended the request's stream before answering; revision %s has "
                     "no resumption: the request may be sent again as a new one",
                     mcp__revision_modern()->version);
    else
        fail_request(t, x->id, MCP_EPROTO, status,
                     "HTTP %ld without an answer (no JSON and no event stream)", status);
}

static void post_done(xfer *x, CURLcode rc, long status)
{
    shttp_ctr *t = x->t;
    cstream *st = x->st;
    if (x->modern) {
        post_done_modern(x, rc, status);
        return;
    }
    if (x->is_renewal) {
        if (rc != CURLE_OK)
            renewal_failed(t, curl_status(rc), 0, xfer_strerror(x, rc));
        else if (status < 200 || status >= 300)
            renewal_failed(t, MCP_EHTTP, status, "HTTP error");
        else if (x->ctype == CT_JSON)
            incoming_text(x, x->body.data ? x->body.data : "", x->body.len);
        if (x->is_renewal && t->renewing)
            renewal_failed(t, MCP_EPROTO, 0, "initialize was not answered");
        return;
    }
    if (rc == CURLE_OK && status == 404 && t->session_id != NULL && t->mode == MODE_STREAMABLE) {
        start_renewal(t);
        return;
    }
    if (rc == CURLE_OK && (status == 400 || status == 404 || status == 405) && x->has_id &&
        t->mode == MODE_STREAMABLE && t->session_id == NULL && t->init_msg != NULL &&
        x->id == t->init_id && !t->init_answered) {
        /* The spec's fallback: this server speaks the 2024-11-05 transport. */
        mcp__debug("POST of initialize got %ld: trying the HTTP+SSE transport", status);
        if (st != NULL) {
            st->done = 1;
            x->st = NULL;
            st->x = NULL;
            st_free_if_idle(st);
        }
        char *text = json_dumps(t->init_msg, JSON_COMPACT);
        if (text == NULL || enqueue(t, text, strlen(text), NULL, 1, t->init_id) != MCP_OK)
            fail_request(t, t->init_id, MCP_ENOMEM, 0, "out of memory");
        free(text);
        open_httpsse(t);
        return;
    }
    const char *what = t->mode == MODE_HTTPSSE ? "POST to the SSE endpoint" : "POST";
    if (rc != CURLE_OK) {
        if (st != NULL && x->ctype == CT_SSE && !st->answered) {
            st_broke(st, x); /* it may be resumed */
            return;
        }
        if (x->has_id && (st == NULL || !st->answered)) {
            fail_request(t, x->id, curl_status(rc), 0, "%s failed: %s", what, xfer_strerror(x, rc));
        } else if (!x->has_id) {
            mcp__warn("%s of a message failed: %s", what, xfer_strerror(x, rc));
        }
        return;
    }
    if (status < 200 || status >= 300) {
        if (x->has_id) {
            fail_request(t, x->id, MCP_EHTTP, status, "HTTP %ld from %s: %s", status, what,
                         body_snippet(x));
        } else {
            mcp__warn("HTTP %ld from %s of a message: %s", status, what, body_snippet(x));
        }
        return;
    }
    if (x->is_notified)
        open_standalone(t);
    if (x->ctype == CT_JSON) {
        if (x->body_over) {
            if (x->has_id) {
                fail_request(t, x->id, MCP_ELIMIT, 0, "the answer is longer than %zu bytes",
                             t->max_message);
            }
            return;
        }
        json_answer(x, status);
        return;
    }
    if (st == NULL || st->done)
        return;
    if (x->ctype == CT_SSE) {
        if (!st->answered)
            st_broke(st, x);
        return;
    }
    /* 202 or a body we cannot read for a request: its answer may come on the
     * standalone stream; its own timeout bounds the wait. */
    mcp__debug("request %lld got HTTP %ld without an answer", (long long)st->id, status);
    st->done = 1;
}

static void get_done(xfer *x, CURLcode rc, long status)
{
    shttp_ctr *t = x->t;
    cstream *st = x->st;
    if (st != NULL && st->standalone)
        became_ready(t);
    if (st == NULL || st->done)
        return;
    if (rc == CURLE_OK && status == 404 && t->session_id != NULL) {
        start_renewal(t);
        return;
    }
    if (rc == CURLE_OK && status == 405 && st->standalone) {
        mcp__debug("the server offers no standalone stream (405)");
        t->standalone_off = 1;
        st_finish(st);
        return;
    }
    if (rc == CURLE_OK && status >= 400 && status < 500) {
        if (st->standalone) {
            mcp__warn("HTTP %ld for the standalone stream: %s", status, body_snippet(x));
            t->standalone_off = 1;
            st_finish(st);
        } else {
            fail_request(t, st->id, MCP_EHTTP, status, "HTTP %ld resuming the request's stream: %s",
                         status, body_snippet(x));
        }
        return;
    }
    if (rc == CURLE_OK && status >= 200 && status < 300 && x->ctype != CT_SSE) {
        if (st->standalone) {
            mcp__warn("the standalone GET was answered %ld without an SSE stream", status);
            t->standalone_off = 1;
            st_finish(st);
        } else {
            fail_request(t, st->id, MCP_EPROTO, status,
                         "the server answered a resumption with HTTP %ld but no SSE stream",
                         status);
        }
        return;
    }
    if (!st->standalone && st->answered)
        return;
    st_broke(st, x); /* ended, cleanly or not, or a 5xx: counts if it brought nothing */
}

static void xfer_end(xfer *x, CURLcode rc, long status);

/* Detaches x and frees it (a cancel meanwhile only marked it): its stream lives on
 * (a reconnection) or is finished. */
static void xfer_retire(xfer *x)
{
    shttp_ctr *t = x->t;
    cstream *st = x->st;
    if (st != NULL && st->x == x)
        st->x = NULL;
    if (t->httpsse_get == x)
        t->httpsse_get = NULL;
    xfer_free(x);
    if (st != NULL)
        st_free_if_idle(st);
    maybe_closed(t);
}

/* Forgets the response of a transfer that is made again. */
static void xfer_reset(xfer *x)
{
    head_reset(x);
    mcp__buf_reset(&x->body);
    x->body_over = 0;
    if (x->sse_inited) {
        mcp__sse_parser_free(&x->sse);
        x->sse_inited = 0;
    }
    x->events = 0;
}

/* x could not be authorized: its request (or stream) fails with MCP_EAUTH and why,
 * and x ends. */
static void xfer_auth_failed(xfer *x, const char *why)
{
    shttp_ctr *t = x->t;
    cstream *st = x->st;
    long status = x->status;
    x->busy++;
    if (!t->closing && !x->dead) {
        if (x->kind == X_POST && x->is_renewal)
            renewal_failed(t, MCP_EAUTH, status, why);
        else if (x->kind == X_POST && x->has_id && (st == NULL || !st->done))
            fail_request(t, x->id, MCP_EAUTH, status, "authorization: %s", why);
        else if (x->kind == X_POST)
            mcp__warn("authorization of a message to the server failed: %s", why);
        else if (x->kind == X_HTTPSSE_GET && t->httpsse_get == x)
            lose(t, MCP_EAUTH, why);
        else if (x->kind == X_GET && st != NULL && st->standalone) {
            mcp__warn("authorization of the standalone stream failed: %s", why);
            t->standalone_off = 1;
            became_ready(t);
            st_finish(st);
        } else if (x->kind == X_GET && st != NULL && !st->done)
            fail_request(t, st->id, MCP_EAUTH, status, "authorization: %s", why);
    }
    x->busy--;
    xfer_retire(x);
}

/* The provider is done with x's wait: start it (again), or fail it. */
static void xfer_authorized(mcp__oauth_waiter *w, int rc, const char *why)
{
    xfer *x = (xfer *)((char *)w - offsetof(xfer, aw));
    x->parked = 0;
    if (x->dead || x->t->closing) {
        if (x->busy == 0)
            xfer_free(x);
        return;
    }
    if (rc == MCP_OK) {
        xfer_reset(x);
        if (xfer_launch(x, x->url, x->last_id, x->extra) == MCP_OK)
            return;
        why = "out of memory sending the request again";
    }
    xfer_auth_failed(x, why != NULL ? why : "no token");
}

/* x met a 401 or 403: 1 when the provider took it (it waits, or was sent again). */
static int xfer_refused(xfer *x, long status)
{
    shttp_ctr *t = x->t;
    mcp__oauth_refusal r = {status, x->www_auth.len > 0 ? x->www_auth.data : NULL, x->dpop_nonce,
                            x->auth_gen};
    char *why = NULL;
    switch (mcp__oauth_refused(t->oauth, &r, &x->aw, &why)) {
    case MCP__OAUTH_RETRY:
        xfer_reset(x);
        if (xfer_launch(x, x->url, x->last_id, x->extra) == MCP_OK)
            return 1;
        xfer_auth_failed(x, "out of memory sending the request again");
        return 1;
    case MCP__OAUTH_WAIT:
        x->parked = 1;
        return 1;
    case MCP__OAUTH_FAIL:
        xfer_auth_failed(x, why);
        free(why);
        return 1;
    default:
        return 0;
    }
}

static void xfer_done(void *user, CURLcode rc, long status)
{
    xfer *x = user;
    x->req = NULL;
    if (x->t->oauth != NULL && !x->t->closing && !x->dead && rc == CURLE_OK &&
        (status == 401 || status == 403) && x->kind != X_DELETE && xfer_refused(x, status))
        return;
    xfer_end(x, rc, status);
}

/* x ended (and no provider took it): what it brought is handled, and it is freed. */
static void xfer_end(xfer *x, CURLcode rc, long status)
{
    shttp_ctr *t = x->t;
    x->busy++;
    if (x->is_notified && (rc != CURLE_OK || status < 200 || status >= 300))
        became_ready(t); /* no standalone stream will open */
    if (!t->closing) {
        switch (x->kind) {
        case X_POST:
            post_done(x, rc, status);
            break;
        case X_GET:
            get_done(x, rc, status);
            break;
        case X_HTTPSSE_GET:
            if (t->httpsse_get == x) {
                t->httpsse_get = NULL;
                if (rc != CURLE_OK)
                    lose(t, curl_status(rc), "the SSE stream of the server failed");
                else if (status >= 400) {
                    /* on_lost carries no code: the message names the HTTP status. */
                    char why[64];
                    snprintf(why, sizeof(why), "HTTP %ld: the server refused the SSE stream",
                             status);
                    lose(t, MCP_EHTTP, why);
                } else
                    lose(t, MCP_ECLOSED, "the server closed the SSE stream");
            }
            break;
        case X_DELETE:
            break;
        }
    }
    x->busy--;
    xfer_retire(x);
}

/* ---- Closing ---- */

static void curl_closed(void *user)
{
    shttp_ctr *t = user;
    t->curl_open = 0;
    maybe_closed(t);
}

/* Once the DELETE is done (or none was needed): stop curl, then the timers. */
static void maybe_closed(void *arg)
{
    shttp_ctr *t = arg;
    if (!t->closing || t->closed_reported)
        return;
    if (t->deleting) {
        for (xfer *x = t->xfers; x != NULL; x = x->next)
            if (x->kind == X_DELETE && !x->dead)
                return;
        t->deleting = 0;
    }
    if (t->curl != NULL) {
        mcp__curlm *m = t->curl;
        t->curl = NULL;
        for (xfer *x = t->xfers, *next; x != NULL; x = next) {
            next = x->next;
            xfer_cancel(x); /* one being fed goes when its callback returns */
        }
        for (cstream *st = t->streams; st != NULL; st = st->next) {
            st->done = 1;
            st->resend = 0;
        }
        for (cstream *st = t->streams, *next; st != NULL; st = next) {
            next = st->next;
            st_free_if_idle(st);
        }
        mcp__curlm_close(m, curl_closed, t);
        return;
    }
    if (t->curl_open || t->timers.open > 0 || t->streams != NULL || t->xfers != NULL)
        return;
    t->closed_reported = 1;
    while (t->q_head != NULL) {
        queued *q = t->q_head;
        t->q_head = q->next;
        free(q->text);
        free(q);
    }
    const mcp__ctr_cbs *cbs = t->base.cbs;
    void *user = t->base.user;
    json_decref(t->init_msg);
    tool_heads_free(t);
    free(t->session_id);
    free(t->version);
    free(t->post_url);
    mcp__shttp_cfg_free(t->cfg);
    free(t);
    cbs->on_closed(user);
}

static void shttp_close(mcp__ctr *base)
{
    shttp_ctr *t = (shttp_ctr *)base;
    if (t->closing)
        return;
    t->closing = 1;
    /* Everything in flight stops; the session ends by DELETE (a 405 is fine). */
    for (xfer *x = t->xfers, *next; x != NULL; x = next) {
        next = x->next;
        xfer_cancel(x);
    }
    int had_oauth = t->oauth != NULL;
    for (cstream *st = t->streams; st != NULL; st = st->next)
        if (st->timer_init)
            uv_timer_stop(&st->timer);
    mcp__uv_close_counted(&t->timers, (uv_handle_t *)&t->ready_timer);
    if (t->session_id != NULL && t->mode == MODE_STREAMABLE && t->curl != NULL &&
        xfer_start(t, X_DELETE, t->cfg->url, NULL, 0, NULL, 1, DELETE_TIMEOUT_MS, NULL) != NULL)
        t->deleting = 1;
    /* The DELETE went with the token held (refused, the session is left to expire:
     * nothing waits for a new token now). */
    if (had_oauth) {
        mcp__oauth_detach(t->oauth);
        t->oauth = NULL;
    }
    maybe_closed(t);
}

static void shttp_set_modern(mcp__ctr *base)
{
    shttp_ctr *t = (shttp_ctr *)base;
    t->modern = 1;
}

static const mcp__ctr_ops shttp_ops = {
    .send = shttp_send,
    .await_ready = shttp_await_ready,
    .request_done = shttp_request_done,
    .close = shttp_close,
    .reconnect = shttp_reconnect,
    .set_modern = shttp_set_modern,
};

int mcp__shttp_ctr_new(uv_loop_t *loop, mcp__shttp_cfg *cfg, size_t max_message,
                       const mcp__ctr_cbs *cbs, void *user, mcp__ctr **out)
{
    *out = NULL;
    shttp_ctr *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        mcp__shttp_cfg_free(cfg);
        return MCP_ENOMEM;
    }
    int rc =
        cfg->oauth != NULL ? mcp__oauth_attach(cfg->oauth, loop, cfg->url, cfg->cacert) : MCP_OK;
    if (rc == MCP_OK && (rc = mcp__curlm_new(loop, &t->curl)) != MCP_OK)
        mcp__oauth_detach(cfg->oauth);
    if (rc != MCP_OK) {
        mcp__shttp_cfg_free(cfg);
        free(t);
        return rc;
    }
    t->curl_open = 1;
    uv_timer_init(loop, &t->ready_timer);
    t->ready_timer.data = t;
    t->timers = (mcp__uv_group){1, maybe_closed, t};
    t->base.ops = &shttp_ops;
    t->base.cbs = cbs;
    t->base.user = user;
    t->base.loop = loop;
    t->cfg = cfg;
    t->max_message = max_message;
    t->oauth = cfg->oauth;
    if (mcp__random_bytes(&t->rng, sizeof(t->rng)) != MCP_OK || t->rng == 0)
        t->rng = 0x9e3779b97f4a7c15ull ^ mcp__now_ms();
    *out = &t->base;
    if (cfg->httpsse)
        open_httpsse(t);
    return MCP_OK;
}
