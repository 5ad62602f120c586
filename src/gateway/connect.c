/* SPDX-License-Identifier: MIT */
/*
 * The stdio gateway (mcp/gateway.h, mcp_gateway_stdio): one stdio client on a pair
 * of descriptors (stdio/lines.h), one remote server behind the HTTP client
 * transport (ctransport/ctransport.h, mcp__shttp_ctr), which resumes, reconnects
 * and renews the session by itself.
 *
 * Ids. The transport tracks a request by an integer id (its stream, its resend on
 * a new session), and a client may use strings, or reuse an id. So every request
 * of the client goes out under a gateway id (a positive integer, never reused), a
 * cn_req remembers the client's id, and the answer goes back under it. Requests of
 * the server keep the server's ids both ways: there is one client, nothing can
 * collide. Progress tokens are the client's own and pass as they are.
 *
 * Ending. Every change of phase that may come from inside a callback of the
 * transport or of the lines (a loss reported from inside a send, say) is done from
 * the loop (the `later` timer), so that no caller finds freed state when it
 * returns. The end: the requests still in flight are answered with errors, the
 * transport closes (DELETE), the output is flushed (5 s at most, or it is dropped),
 * the handles close, then done.
 *
 * Everything runs on the thread of the loop the gateway was made on.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway_int.h"

#include "protocol/json.h"
#include "protocol/revision.h"
#include "protocol/rpc.h"
#include "protocol/trace.h"
#include "ctransport/ctransport.h"
#include "stdio/lines.h"

#define DEFAULT_MAX_MESSAGE (4u << 20)
#define DEFAULT_MAX_PENDING 1024
/* Messages that may wait at once (behind initialize, or requests for room), and their
 * bytes by default (never less than twice the largest message). */
#define MAX_HELD 65536
#define MAX_HELD_BYTES (16u << 20)
/* The output queue by default: a client that does not read its stdout while the server
 * keeps sending ends the gateway past this (never less than twice the largest message). */
#define MAX_QUEUED (64u << 20)
/* How long the output may take to flush at the end before it is dropped. */
#define FLUSH_MS 5000
/* What the end of the input leaves requests in flight to be answered. */
#define EOF_DRAIN_MS 10000

enum phase { P_RUNNING, P_DRAINING, P_CLOSING, P_DONE };

typedef struct cn_req cn_req;
struct cn_req {
    json_int_t gid;
    char key[24]; /* gid in decimal: its key in the table */
    json_t *client_id;
    char *method;
    uint64_t t0;       /* uv_hrtime() when it came */
    char trace_id[33]; /* of its _meta.traceparent, for the log line; "" if none */
    uint64_t deadline; /* uv_now() past which it times out; 0: none */
    int is_init;
    cn_req *prev, *next; /* oldest first: the next deadline is the head's */
};

struct mcp_gateway_stdio {
    uv_loop_t *loop;
    char *url;
    size_t max_message;
    int max_pending, request_timeout_ms;
    mcp_log_level log_level;
    mcp_gateway_log_fn log;
    void *log_user;

    mcp__lstream ls;
    mcp__ctr *ctr;
    json_int_t next_gid;
    mcp__map reqs; /* gid -> cn_req */
    cn_req *head, *tail;
    size_t npending;
    json_t *held; /* the client's messages that wait, in order: [message, bytes] each */
    size_t held_bytes, max_held_bytes;
    int waiting_init;  /* initialize is not answered yet: what follows waits */
    int waiting_ready; /* the transport opens its standalone stream first */
    int stopping;      /* mcp_gateway_stdio_stop: no new request is taken */
    int initialized;   /* the server answered initialize */
    int modern_set;    /* the transport was told the client speaks revision 2026-07-28 */

    enum phase phase;
    int status;
    char why[256]; /* why it ends, when it is an error */
    int lost;      /* the transport reported the server lost */
    int close_wanted;
    int in_later;            /* on_later runs: kick() is not needed */
    uint64_t drain_deadline; /* uv_now(); UINT64_MAX: none */
    uv_timer_t req_timer;    /* the next request deadline */
    uv_timer_t later;        /* phase changes, from the loop */
    uv_timer_t drain_timer;  /* the drain's deadline, then the flush's */
    int ls_open, ctr_open;
    mcp__uv_group timers; /* req_timer, later and drain_timer */
    int free_when_done, in_done;
    mcp_endpoint_done_fn done;
    void *done_user;
};

typedef struct mcp_gateway_stdio cn;

static void kick(cn *g);
static void handle_client(cn *g, json_t *msg, size_t bytes);
static void release_held(cn *g);

/* ---- Log lines ---- */

static int logs(const cn *g, mcp_log_level level)
{
    return g->log != NULL && level >= g->log_level;
}

static void logf_(cn *g, mcp_log_level level, const char *fmt, ...) MCP_PRINTF(3, 4);
static void logf_(cn *g, mcp_log_level level, const char *fmt, ...)
{
    if (!logs(g, level))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    g->log(g->log_user, level, line);
}

/* A sentence as a quoted logfmt value: without quotes, backslashes or control bytes. */
static const char *log_text(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s != NULL && *s != '\0' && n + 1 < size; s++)
        out[n++] = ((unsigned char)*s < ' ' || *s == '"' || *s == '\\') ? '\'' : *s;
    out[n] = '\0';
    return out;
}

/* ---- To the client ---- */

static void to_client(cn *g, const json_t *msg)
{
    if (g->phase == P_DONE || msg == NULL)
        return;
    mcp__buf b = {0};
    if (mcp__json_write(&b, msg) == MCP_OK)
        (void)mcp__lstream_write(&g->ls, b.data, b.len); /* a failure comes as on_write_error */
    mcp__buf_free(&b);
}

/* An error answer to the client's id (NULL: null). data is stolen. */
static void error_to_client(cn *g, const json_t *id, int code, const char *message, json_t *data)
{
    json_t *e = mcp__error_message(id, code, message, data);
    to_client(g, e);
    json_decref(e);
}

static mcp__msg_kind kind_of(const json_t *msg)
{
    int code;
    const char *why;
    const json_t *echo;
    return mcp__jsonrpc_classify(msg, &code, &why, &echo);
}

/* Takes entry i ([message, bytes]) out of what waits. */
static void held_remove(cn *g, size_t i)
{
    g->held_bytes -= (size_t)json_integer_value(json_array_get(json_array_get(g->held, i), 1));
    json_array_remove(g->held, i);
}

/* ---- The table of requests ---- */

static void on_req_timer(uv_timer_t *t);

/* The timer at the next request's deadline, or stopped. */
static void arm_req_timer(cn *g)
{
    if (g->phase == P_DONE || uv_is_closing((uv_handle_t *)&g->req_timer))
        return;
    cn_req *r = g->head;
    while (r != NULL && r->deadline == 0)
        r = r->next;
    if (r == NULL) {
        uv_timer_stop(&g->req_timer);
        return;
    }
    uint64_t now = uv_now(g->loop);
    uv_timer_start(&g->req_timer, on_req_timer, r->deadline > now ? r->deadline - now : 0, 0);
}

static cn_req *req_find(cn *g, json_int_t gid)
{
    char key[24];
    snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, gid);
    return mcp__map_get(&g->reqs, key);
}

static cn_req *req_new(cn *g, const json_t *client_id, const char *method)
{
    cn_req *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->gid = ++g->next_gid;
    snprintf(r->key, sizeof(r->key), "%" JSON_INTEGER_FORMAT, r->gid);
    r->client_id = json_deep_copy(client_id);
    r->method = mcp__strdup(method);
    if (r->client_id == NULL || r->method == NULL || mcp__map_put(&g->reqs, r->key, r) != MCP_OK) {
        json_decref(r->client_id);
        free(r->method);
        free(r);
        return NULL;
    }
    r->t0 = uv_hrtime();
    r->is_init = strcmp(method, "initialize") == 0;
    if (g->request_timeout_ms > 0)
        r->deadline = uv_now(g->loop) + (uint64_t)g->request_timeout_ms;
    r->prev = g->tail;
    if (g->tail != NULL)
        g->tail->next = r;
    else
        g->head = r;
    g->tail = r;
    g->npending++;
    if (r->deadline != 0 && !uv_is_active((uv_handle_t *)&g->req_timer))
        arm_req_timer(g);
    return r;
}

/* Takes r out of the table and frees it; the transport is told it ended. */
static void req_end(cn *g, cn_req *r, const char *status)
{
    if (logs(g, MCP_LOG_INFO)) {
        char m[64];
        double ms = (double)(uv_hrtime() - r->t0) / 1e6;
        logf_(g, MCP_LOG_INFO, "event=request method=%s status=%s duration_ms=%.3f%s%s",
              mcp__gw_log_word(r->method, m, sizeof(m)), status, ms,
              r->trace_id[0] ? " trace_id=" : "", r->trace_id);
    }
    mcp__map_remove(&g->reqs, r->key);
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        g->head = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    else
        g->tail = r->prev;
    g->npending--;
    json_int_t gid = r->gid;
    if (r->is_init && strcmp(status, "ok") == 0)
        g->initialized = 1;
    if (r->is_init && g->waiting_init) {
        g->waiting_init = 0;
        kick(g); /* what waited goes out from the loop */
    }
    json_decref(r->client_id);
    free(r->method);
    free(r);
    if (g->ctr != NULL && g->ctr->ops->request_done != NULL)
        g->ctr->ops->request_done(g->ctr, gid);
    arm_req_timer(g);
    if ((g->phase == P_DRAINING && g->npending == 0) || json_array_size(g->held) > 0)
        kick(g); /* the end, or room for what waits */
}

/* Answers r with an error and ends it. data is stolen. */
static void req_fail(cn *g, cn_req *r, int code, const char *message, json_t *data)
{
    error_to_client(g, r->client_id, code, message, data);
    req_end(g, r, "error");
}

static void on_req_timer(uv_timer_t *t)
{
    cn *g = t->data;
    uint64_t now = uv_now(g->loop);
    for (cn_req *r = g->head, *next; r != NULL; r = next) {
        next = r->next;
        if (r->deadline == 0 || r->deadline > now)
            continue;
        json_int_t gid = r->gid;
        char msg[128];
        snprintf(msg, sizeof(msg), "Request timed out: no answer from the server in %d ms",
                 g->request_timeout_ms);
        int init = r->is_init;
        req_fail(g, r, MCP_RPC_REQUEST_TIMEOUT, msg, NULL);
        /* The server stops working on it (the spec's cancellation). */
        if (g->ctr != NULL && !g->lost && g->phase < P_CLOSING) {
            json_t *c = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
                                  "notifications/cancelled", "params", "requestId", (json_int_t)gid,
                                  "reason", "timed out at the gateway");
            mcp__buf b = {0};
            if (c != NULL && mcp__json_write(&b, c) == MCP_OK)
                (void)g->ctr->ops->send(g->ctr, c, b.data, b.len);
            mcp__buf_free(&b);
            json_decref(c);
        }
        if (init && g->status == MCP_OK) {
            g->status = MCP_ETIMEDOUT;
            snprintf(g->why, sizeof(g->why), "the server at %s did not answer initialize in %d ms",
                     g->url, g->request_timeout_ms);
            g->close_wanted = 1;
            kick(g);
        }
        next = g->head; /* the lists may have changed: look again */
    }
    arm_req_timer(g);
}

/* ---- Ending ---- */

static void cn_free(cn *g)
{
    json_decref(g->held);
    mcp__map_free(&g->reqs);
    free(g->url);
    free(g);
}

static void maybe_done(void *arg)
{
    cn *g = arg;
    if (g->phase != P_CLOSING || g->ctr_open || g->ls_open || g->timers.open)
        return;
    g->phase = P_DONE;
    g->in_done = 1;
    if (g->done != NULL)
        g->done(g->done_user, g->status);
    g->in_done = 0;
    if (g->free_when_done)
        cn_free(g);
}

static void close_timers(cn *g)
{
    mcp__uv_close_counted(&g->timers, (uv_handle_t *)&g->req_timer);
    mcp__uv_close_counted(&g->timers, (uv_handle_t *)&g->later);
    mcp__uv_close_counted(&g->timers, (uv_handle_t *)&g->drain_timer);
}

static void on_ls_closed(void *user)
{
    cn *g = user;
    g->ls_open = 0;
    close_timers(g);
    maybe_done(g);
}

/* A start that failed before the lines were open: the handles libuv was closing for
 * them are gone by the time this runs. */
static void on_start_failed(uv_timer_t *t)
{
    close_timers(t->data);
}

static void on_flush_timeout(uv_timer_t *t)
{
    cn *g = t->data;
    logf_(g, MCP_LOG_WARNING, "event=output_dropped reason=\"stdout was not read in time\"");
    mcp__lstream_abort(&g->ls);
}

/* The transport is gone: the output is flushed and closed (bounded), then the rest. */
static void after_ctr(cn *g)
{
    json_decref(g->held);
    g->held = NULL;
    uv_timer_start(&g->drain_timer, on_flush_timeout, FLUSH_MS, 0);
    mcp__lstream_close(&g->ls);
}

static void cb_closed(void *user)
{
    cn *g = user;
    g->ctr = NULL;
    g->ctr_open = 0;
    after_ctr(g);
}

/* Answers whatever is pending with an error, closes the transport. */
static void close_now(cn *g)
{
    if (g->phase >= P_CLOSING)
        return;
    g->phase = P_CLOSING;
    uv_timer_stop(&g->drain_timer);
    const char *why = g->why[0] != '\0' ? g->why : "the gateway is stopping";
    while (g->head != NULL)
        req_fail(g, g->head, MCP_RPC_INTERNAL_ERROR, why, NULL);
    /* Held messages: their requests get the same answer. */
    size_t i;
    json_t *e;
    json_array_foreach(g->held, i, e)
    {
        json_t *m = json_array_get(e, 0);
        if (kind_of(m) == MCP__MSG_REQUEST)
            error_to_client(g, json_object_get(m, "id"), MCP_RPC_INTERNAL_ERROR, why, NULL);
    }
    json_array_clear(g->held);
    g->held_bytes = 0;
    if (g->status != MCP_OK && g->why[0] != '\0') {
        char q[300];
        logf_(g, MCP_LOG_ERROR, "event=end status=error reason=\"%s\"",
              log_text(g->why, q, sizeof(q)));
    } else {
        logf_(g, MCP_LOG_INFO, "event=end status=ok");
    }
    if (g->ctr != NULL)
        g->ctr->ops->close(g->ctr); /* DELETE; then cb_closed */
    else
        after_ctr(g);
}

static void on_later(uv_timer_t *t)
{
    cn *g = t->data;
    if (g->phase >= P_CLOSING)
        return;
    /* What this pass does needs no other pass: a kick meanwhile is not taken (a timer
     * of 0 ms started again from its own callback would run again before libuv looks
     * at anything else, for ever when nothing can move). */
    g->in_later = 1;
    if (!g->close_wanted && json_array_size(g->held) > 0)
        release_held(g);
    g->in_later = 0;
    if (g->phase >= P_CLOSING)
        return;
    if (g->close_wanted ||
        (g->phase == P_DRAINING && g->npending == 0 && json_array_size(g->held) == 0))
        close_now(g);
}

/* Runs on_later from the loop, after the current callback has returned. */
static void kick(cn *g)
{
    if (g->phase < P_CLOSING && !g->in_later)
        uv_timer_start(&g->later, on_later, 0, 0);
}

static void on_drain_timer(uv_timer_t *t)
{
    cn *g = t->data;
    close_now(g);
}

/* Ends: requests in flight may be answered for drain_ms (< 0: no deadline), then the
 * rest. A later call only brings the deadline forward. */
static void end(cn *g, int drain_ms)
{
    if (g->phase >= P_CLOSING)
        return;
    if (g->phase == P_RUNNING) {
        g->phase = P_DRAINING;
        g->drain_deadline = UINT64_MAX;
    }
    uint64_t now = uv_now(g->loop);
    if (drain_ms >= 0 && now + (uint64_t)drain_ms < g->drain_deadline) {
        g->drain_deadline = now + (uint64_t)drain_ms;
        uv_timer_start(&g->drain_timer, on_drain_timer, (uint64_t)drain_ms, 0);
    }
    kick(g);
}

/* Something that cannot go on: ends at once with status and why. */
static void fail_all(cn *g, int status, const char *fmt, ...) MCP_PRINTF(3, 4);
static void fail_all(cn *g, int status, const char *fmt, ...)
{
    if (g->status == MCP_OK) {
        g->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->why, sizeof(g->why), fmt, ap);
        va_end(ap);
    }
    g->close_wanted = 1;
    kick(g);
}

/* ---- From the server ---- */

static void server_message(cn *g, json_t *m)
{
    int code;
    const char *why;
    const json_t *echo;
    mcp__msg_kind k = mcp__jsonrpc_classify(m, &code, &why, &echo);
    if (k != MCP__MSG_RESPONSE) {
        if (k == MCP__MSG_INVALID)
            logf_(g, MCP_LOG_WARNING, "event=server_invalid_message reason=\"%s\"", why);
        else
            to_client(g, m); /* its requests and notifications, as they are */
        return;
    }
    json_t *id = json_object_get(m, "id");
    cn_req *r = json_is_integer(id) ? req_find(g, json_integer_value(id)) : NULL;
    if (r == NULL) {
        /* The answer to a request that timed out or was cancelled: nobody waits. */
        logf_(g, MCP_LOG_DEBUG, "event=late_answer");
        return;
    }
    json_t *out = json_copy(m);
    if (out == NULL || json_object_set(out, "id", r->client_id) != 0) {
        json_decref(out);
        req_fail(g, r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    to_client(g, out);
    json_decref(out);
    req_end(g, r, json_object_get(m, "error") != NULL ? "error" : "ok");
}

static void cb_value(void *user, json_t *msg)
{
    cn *g = user;
    if (g->phase >= P_CLOSING)
        return;
    if (json_is_array(msg)) {
        size_t i;
        json_t *m;
        json_array_foreach(msg, i, m) server_message(g, m);
    } else {
        server_message(g, msg);
    }
}

static void cb_text(void *user, const char *text, size_t len)
{
    cn *g = user;
    json_t *v = mcp__json_parse(text, len, 0, NULL);
    if (v == NULL) {
        logf_(g, MCP_LOG_WARNING, "event=server_invalid_json bytes=%zu", len);
        return;
    }
    cb_value(g, v);
    json_decref(v);
}

static void cb_request_failed(void *user, json_int_t gid, int status, const mcp_rpc_error *err,
                              long http)
{
    cn *g = user;
    cn_req *r = req_find(g, gid);
    if (r == NULL)
        return;
    const char *message =
        err != NULL && err->message[0] != '\0' ? err->message : mcp_strerror(status);
    if (status == MCP_ERPC && err != NULL) {
        /* The server's own JSON-RPC error (revision 2026-07-28 over an HTTP error). */
        json_t *data = err->data != NULL ? json_deep_copy(err->data) : NULL;
        req_fail(g, r, err->code, message, data);
        return;
    }
    if (logs(g, MCP_LOG_WARNING)) {
        char m[64], q[300];
        logf_(g, MCP_LOG_WARNING, "event=request_failed method=%s http_status=%ld reason=\"%s\"",
              mcp__gw_log_word(r->method, m, sizeof(m)), http, log_text(message, q, sizeof(q)));
    }
    json_t *data = json_pack("{s:s}", "transport", mcp_strerror(status));
    if (data != NULL && http != 0)
        json_object_set_new(data, "httpStatus", json_integer(http));
    int init = r->is_init;
    req_fail(g, r, MCP_RPC_INTERNAL_ERROR, message, data);
    if (init) /* nothing can be served */
        fail_all(g, status, "initialize failed, the server at %s cannot be used: %s", g->url,
                 message);
}

static void cb_lost(void *user, int status, const char *why)
{
    cn *g = user;
    if (g->lost)
        return;
    g->lost = 1;
    (void)status;
    if (g->initialized)
        fail_all(g, MCP_ECLOSED, "the server at %s was lost: %s", g->url, why != NULL ? why : "");
    else
        fail_all(g, MCP_ECLOSED, "initialize failed, the server at %s cannot be used: %s", g->url,
                 why != NULL ? why : "");
}

static void cb_ready(void *user)
{
    cn *g = user;
    if (!g->waiting_ready)
        return;
    g->waiting_ready = 0;
    logf_(g, MCP_LOG_DEBUG, "event=ready held=%zu", json_array_size(g->held));
    kick(g); /* from the loop: this may run inside a transfer's callback */
}

static const mcp__ctr_cbs ctr_cbs = {
    .on_text = cb_text,
    .on_value = cb_value,
    .on_request_failed = cb_request_failed,
    .on_lost = cb_lost,
    .on_ready = cb_ready,
    .on_closed = cb_closed,
};

/* ---- From the client ---- */

/* Sends msg to the server as it is. */
static int to_server(cn *g, const json_t *msg)
{
    if (g->ctr == NULL || g->lost)
        return MCP_ECLOSED;
    mcp__buf b = {0};
    int rc = mcp__json_write(&b, msg);
    if (rc == MCP_OK && b.len > g->max_message)
        rc = MCP_ELIMIT;
    if (rc == MCP_OK)
        rc = g->ctr->ops->send(g->ctr, msg, b.data, b.len);
    mcp__buf_free(&b);
    return rc;
}

/* A revision 2026-07-28 request (its _meta names it) other than server/discover: the
 * client speaks that era, and the transport is told so once. */
static void note_era(cn *g, const json_t *msg, const char *method)
{
    if (g->modern_set || g->ctr->ops->set_modern == NULL || strcmp(method, "server/discover") == 0)
        return;
    const json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
    const mcp__revision *rev = mcp__revision_find(
        json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion")));
    if (rev != NULL && rev->modern) {
        g->modern_set = 1;
        g->ctr->ops->set_modern(g->ctr);
    }
}

static void client_request(cn *g, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (g->stopping || g->phase >= P_CLOSING) {
        error_to_client(g, id, MCP_RPC_SERVER_ERROR,
                        "Server shutting down: the gateway takes no new request", NULL);
        return;
    }
    cn_req *r = req_new(g, id, method);
    if (r == NULL) {
        error_to_client(g, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    json_int_t gid = r->gid;
    mcp__trace_id(json_object_get(msg, "params"), r->trace_id);
    note_era(g, msg, method);
    json_t *out = json_copy(msg);
    int rc = out != NULL && json_object_set_new(out, "id", json_integer(gid)) == 0
                 ? to_server(g, out)
                 : MCP_ENOMEM;
    json_decref(out);
    if (rc == MCP_OK) {
        /* What the client sends next waits for the answer: notifications/initialized
         * must not reach the server before the session exists. */
        if (req_find(g, gid) != NULL && req_find(g, gid)->is_init)
            g->waiting_init = 1;
        return;
    }
    /* The transport may have called back meanwhile: look the request up again. */
    if ((r = req_find(g, gid)) == NULL)
        return;
    char m[160];
    snprintf(m, sizeof(m), "The request could not be sent to the server: %s",
             rc == MCP_ELIMIT ? "it is larger than --max-message" : mcp_strerror(rc));
    req_fail(g, r, MCP_RPC_INTERNAL_ERROR, m, NULL);
}

static void client_cancel(cn *g, json_t *msg)
{
    json_t *params = json_object_get(msg, "params");
    json_t *rid = json_object_get(params, "requestId");
    cn_req *r = g->head;
    while (r != NULL && !json_equal(r->client_id, rid))
        r = r->next;
    if (r == NULL) {
        /* A request that waits for room is not sent at all. */
        for (size_t i = 0; i < json_array_size(g->held); i++) {
            json_t *m = json_array_get(json_array_get(g->held, i), 0);
            if (kind_of(m) == MCP__MSG_REQUEST && json_equal(json_object_get(m, "id"), rid)) {
                held_remove(g, i);
                break;
            }
        }
        return; /* answered already, or never known */
    }
    json_t *out = json_deep_copy(msg);
    json_object_set_new(json_object_get(out, "params"), "requestId", json_integer(r->gid));
    json_int_t gid = r->gid;
    int init = r->is_init;
    (void)to_server(g, out);
    json_decref(out);
    /* The server does not answer a cancelled request (the spec), and the transport stops
     * resuming its stream. initialize cannot be cancelled. */
    if (!init && (r = req_find(g, gid)) != NULL)
        req_end(g, r, "cancelled");
}

/* Sends one valid message of the client on its way. */
static void dispatch(cn *g, json_t *msg, mcp__msg_kind k)
{
    if (k == MCP__MSG_REQUEST) {
        client_request(g, msg);
        return;
    }
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (k == MCP__MSG_NOTIFICATION && strcmp(method, "notifications/cancelled") == 0) {
        client_cancel(g, msg);
        return;
    }
    /* Its other notifications, its answers to the server's requests. */
    int rc = to_server(g, msg);
    if (rc != MCP_OK)
        logf_(g, MCP_LOG_WARNING, "event=not_sent method=%s reason=\"%s\"",
              method != NULL ? method : "response", mcp_strerror(rc));
    else if (k == MCP__MSG_NOTIFICATION && strcmp(method, "notifications/initialized") == 0 &&
             g->ctr != NULL && g->ctr->ops->await_ready != NULL &&
             g->ctr->ops->await_ready(g->ctr) == 1)
        g->waiting_ready = 1; /* the standalone stream opens before the next request */
}

/* Whether a message may go now, or must wait behind initialize or the transport's
 * readiness (everything waits then, in order), or for room (a request past
 * max_pending; a stop refuses it at once instead). */
static int may_go(cn *g, mcp__msg_kind k)
{
    if (g->waiting_init || g->waiting_ready || g->phase >= P_CLOSING)
        return 0;
    return k != MCP__MSG_REQUEST || g->npending < (size_t)g->max_pending || g->stopping;
}

/* Sends what waits, in the client's order, as far as it may go. */
static void release_held(cn *g)
{
    while (json_array_size(g->held) > 0) {
        json_t *m = json_incref(json_array_get(json_array_get(g->held, 0), 0));
        mcp__msg_kind k = kind_of(m);
        if (!may_go(g, k)) {
            json_decref(m);
            break;
        }
        held_remove(g, 0);
        dispatch(g, m, k);
        json_decref(m);
    }
}

/* One valid-or-not message of the client, `bytes` long on the wire. */
static void handle_client(cn *g, json_t *msg, size_t bytes)
{
    int code;
    const char *why;
    const json_t *echo;
    mcp__msg_kind k = mcp__jsonrpc_classify(msg, &code, &why, &echo);
    if (k == MCP__MSG_INVALID) {
        error_to_client(g, echo, code, why, NULL);
        return;
    }
    /* Only requests wait for room: the client's answers to the server's requests and
     * its notifications (a cancellation that makes room) go at once, or what is in
     * flight could wait on what waits behind it. */
    int queue_first = g->waiting_init || g->waiting_ready ||
                      (k == MCP__MSG_REQUEST && json_array_size(g->held) > 0);
    if (!queue_first && may_go(g, k)) {
        dispatch(g, msg, k);
        return;
    }
    /* Bounded in count and bytes: past it a request is refused, anything else dropped. */
    json_t *entry = NULL;
    if (json_array_size(g->held) >= MAX_HELD || g->held_bytes + bytes > g->max_held_bytes ||
        (entry = json_pack("[O,I]", msg, (json_int_t)bytes)) == NULL ||
        json_array_append_new(g->held, entry) != 0) {
        if (k == MCP__MSG_REQUEST)
            error_to_client(g, json_object_get(msg, "id"), MCP_RPC_INTERNAL_ERROR,
                            "Too many requests waiting: the server answers slower than they "
                            "come",
                            NULL);
        else
            logf_(g, MCP_LOG_WARNING, "event=dropped reason=\"too many messages waiting\"");
        return;
    }
    g->held_bytes += bytes;
}

static void on_line(void *user, char *line, size_t len)
{
    cn *g = user;
    if (g->phase >= P_CLOSING)
        return;
    json_t *error = NULL;
    json_t *v = mcp__jsonrpc_parse(line, len, &error);
    if (v == NULL) {
        to_client(g, error);
        json_decref(error);
        return;
    }
    if (json_is_array(v) && json_array_size(v) == 0) {
        error_to_client(g, NULL, MCP_RPC_INVALID_REQUEST, "Invalid Request: an empty batch", NULL);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            if (g->phase >= P_CLOSING)
                break;
            handle_client(g, m, len / json_array_size(v) + 1);
        }
    } else {
        handle_client(g, v, len);
    }
    json_decref(v);
}

static void on_overflow(void *user, size_t seen)
{
    cn *g = user;
    char m[128];
    snprintf(m, sizeof(m), "Invalid Request: a message of at least %zu bytes is too large", seen);
    logf_(g, MCP_LOG_WARNING, "event=client_message_too_large bytes=%zu", seen);
    error_to_client(g, NULL, MCP_RPC_INVALID_REQUEST, m, NULL);
}

static void on_eof(void *user, int err)
{
    cn *g = user;
    if (err != 0)
        logf_(g, MCP_LOG_WARNING, "event=input_error reason=\"%s\"", uv_strerror(err));
    else
        logf_(g, MCP_LOG_DEBUG, "event=input_end pending=%zu", g->npending);
    end(g, EOF_DRAIN_MS);
}

static void on_write_error(void *user, int err)
{
    cn *g = user;
    fail_all(g, err == UV_ENOBUFS ? MCP_ELIMIT : MCP_EIO, "writing to the client failed: %s",
             err == UV_ENOBUFS ? "it does not read what it is sent" : uv_strerror(err));
}

static const mcp__lstream_cbs ls_cbs = {
    .on_line = on_line,
    .on_overflow = on_overflow,
    .on_eof = on_eof,
    .on_write_error = on_write_error,
    .on_closed = on_ls_closed,
};

/* ---- The public functions ---- */

int mcp_gateway_stdio_new(uv_loop_t *loop, const mcp_gateway_connect_opts *opts, int in_fd,
                          int out_fd, mcp_endpoint_done_fn done, void *user,
                          mcp_gateway_stdio **out)
{
    if (out != NULL)
        *out = NULL;
    mcp_gateway_connect_opts o;
    if (loop == NULL || opts == NULL || out == NULL || in_fd < 0 || out_fd < 0 ||
        mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK || o.url == NULL ||
        o.max_pending < 0 || o.request_timeout_ms < 0 || (int)o.log_level < 0 ||
        o.log_level > MCP_LOG_EMERGENCY || (o.http != NULL && o.http->schedule_reconnect != NULL))
        return MCP_EINVAL;
    mcp__shttp_cfg *cfg = NULL;
    int rc = mcp__shttp_cfg_new(o.url, o.http, &cfg);
    if (rc != MCP_OK)
        return rc;
    /* A vanished reader must give EPIPE, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    cn *g = calloc(1, sizeof(*g));
    if (g == NULL || (g->url = mcp__strdup(o.url)) == NULL || (g->held = json_array()) == NULL) {
        if (g != NULL)
            free(g->url);
        free(g);
        mcp__shttp_cfg_free(cfg);
        return MCP_ENOMEM;
    }
    g->loop = loop;
    g->max_message = o.max_message ? o.max_message : DEFAULT_MAX_MESSAGE;
    g->max_pending = o.max_pending ? o.max_pending : DEFAULT_MAX_PENDING;
    g->request_timeout_ms = o.request_timeout_ms;
    g->max_held_bytes = MAX_HELD_BYTES > 2 * g->max_message ? MAX_HELD_BYTES : 2 * g->max_message;
    g->log_level = o.log_level;
    g->log = o.log;
    g->log_user = o.log_user;
    g->done_user = user;
    int httpsse = mcp__shttp_cfg_httpsse(cfg);
    uv_timer_init(loop, &g->req_timer);
    uv_timer_init(loop, &g->later);
    uv_timer_init(loop, &g->drain_timer);
    g->req_timer.data = g->later.data = g->drain_timer.data = g;
    g->timers = (mcp__uv_group){3, maybe_done, g};
    /* From here on, a failure ends the gateway as it would end anyway (its handles
     * close, then it is freed), without done. */
    g->done = NULL;
    g->free_when_done = 1;
    g->phase = P_CLOSING;
    if (mcp__lstream_open(&g->ls, loop, in_fd, out_fd, g->max_message, &ls_cbs, g) != MCP_OK) {
        mcp__shttp_cfg_free(cfg);
        g->ls_open = g->ls.in_open; /* closing: on_ls_closed comes */
        if (!g->ls_open)
            uv_timer_start(&g->later, on_start_failed, 0, 0);
        return MCP_EIO;
    }
    g->ls_open = 1;
    g->ls.max_queued = o.max_queued ? o.max_queued : MAX_QUEUED;
    if (g->ls.max_queued < 2 * g->max_message + 2)
        g->ls.max_queued = 2 * g->max_message + 2;
    rc = mcp__shttp_ctr_new(loop, cfg, g->max_message, &ctr_cbs, g, &g->ctr); /* takes cfg */
    if (rc != MCP_OK) {
        g->ctr = NULL;
        mcp__lstream_close(&g->ls);
        return rc;
    }
    g->ctr_open = 1;
    if (mcp__lstream_start(&g->ls) != MCP_OK) {
        g->ctr->ops->close(g->ctr); /* then the lines close */
        return MCP_EIO;
    }
    g->phase = P_RUNNING;
    g->done = done;
    g->free_when_done = 0;
    logf_(g, MCP_LOG_INFO, "event=start url=%s transport=%s", g->url,
          httpsse ? "sse" : "streamable_http");
    *out = g;
    return MCP_OK;
}

int mcp_gateway_stdio_stop(mcp_gateway_stdio *g, int drain_ms)
{
    if (g == NULL)
        return MCP_EINVAL;
    int rc = g->phase == P_RUNNING && !g->stopping ? MCP_OK : MCP_ESTATE;
    g->stopping = 1;
    end(g, drain_ms);
    return rc;
}

void mcp_gateway_stdio_free(mcp_gateway_stdio *g)
{
    if (g == NULL)
        return;
    if (g->phase == P_DONE) {
        if (g->in_done)
            g->free_when_done = 1;
        else
            cn_free(g);
        return;
    }
    g->free_when_done = 1;
    g->done = NULL;
    end(g, 0);
}
