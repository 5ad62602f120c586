/* SPDX-License-Identifier: MIT */
/*
 * The Streamable HTTP endpoint (spec 2025-11-25, Transports): POST carries
 * client messages and answers requests on an SSE stream (or one JSON body),
 * GET opens a standalone stream for server messages, DELETE ends a session.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/headers.h"
#include "protocol/json.h"
#include "protocol/meta.h"
#include "protocol/rpc.h"
#include "transport/shttp.h"

#define MAX_BATCH 100
/* How long a POST stream's head and priming event wait for its answer (see post). */
#define PRIME_HOLD_MS 2

json_t *mcp__shttp_parse_body(shttp *t, mcp__http_req *req, size_t *n_requests, int *has_init)
{
    size_t len;
    const char *body = mcp__http_req_body(req, &len);
    json_t *error = NULL;
    json_t *v = mcp__jsonrpc_parse(body, len, &error);
    *n_requests = 0;
    *has_init = 0;
    if (v == NULL) {
        mcp__shttp_error_body(t, req, 400, error);
        return NULL;
    }
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (json_is_array(v) && (count == 0 || count > MAX_BATCH)) {
        mcp__shttp_error_id(t, req, 400, NULL, MCP_RPC_INVALID_REQUEST,
                            count == 0 ? "Invalid Request: an empty batch"
                                       : "Invalid Request: a batch may hold at most 100 messages");
        json_decref(v);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *msg = json_is_array(v) ? json_array_get(v, i) : v;
        int code;
        const char *why;
        const json_t *echo_id;
        mcp__msg_kind kind = mcp__jsonrpc_classify(msg, &code, &why, &echo_id);
        if (kind == MCP__MSG_INVALID) {
            /* The spec: input the server cannot accept gets an HTTP error status, and
             * the body may carry the JSON-RPC error. */
            mcp__shttp_error_body(t, req, 400, mcp__error_message(echo_id, code, why, NULL));
            json_decref(v);
            return NULL;
        }
        if (kind == MCP__MSG_REQUEST) {
            (*n_requests)++;
            if (strcmp(json_string_value(json_object_get(msg, "method")), "initialize") == 0)
                (*has_init)++;
        }
    }
    if (*has_init && json_is_array(v)) {
        mcp__shttp_error_id(t, req, 400, NULL, MCP_RPC_INVALID_REQUEST,
                            "Invalid Request: initialize must not be part of a batch");
        json_decref(v);
        return NULL;
    }
    return v;
}

static int is_legacy(const mcp__revision *rev)
{
    return !rev->modern;
}

/*
 * The MCP-Protocol-Version header: an unsupported value is refused; a missing
 * one means 2025-03-26 (spec). What a session is sent is still decided by its
 * negotiated version, never by this header.
 */
static int check_version_header(shttp *t, mcp__http_req *req, const json_t *id)
{
    const char *v = mcp__http_header(req, "mcp-protocol-version");
    if (v == NULL || mcp__revision_find_legacy(v) != NULL)
        return 0;
    char msg[300], versions[128];
    snprintf(msg, sizeof(msg),
             "Bad Request: Unsupported protocol version: %.64s (supported versions: %s)", v,
             mcp__revision_list(versions, sizeof(versions), is_legacy));
    mcp__shttp_error_id(t, req, 400, id, MCP_RPC_SERVER_ERROR, msg);
    return -1;
}

/* Finds the session a request names: 400 without an id, 404 for an unknown or
 * ended one (never 401, which clients take for an authorization failure). */
static hsess *find_session(shttp *t, mcp__http_req *req, const json_t *rpc_id)
{
    const char *id = mcp__http_header(req, "mcp-session-id");
    if (id == NULL) {
        mcp__shttp_error_id(t, req, 400, rpc_id, MCP_RPC_SERVER_ERROR,
                            "Bad Request: Mcp-Session-Id header is required");
        return NULL;
    }
    hsess *hs = mcp__map_get(&t->sessions, id);
    /* Another principal's session is unknown to this one: the same 404, nothing that
     * tells it exists. */
    if (hs == NULL || hs->httpsse || hs->closing || !mcp__hsess_owned_by(hs, req)) {
        mcp__shttp_error_id(t, req, 404, rpc_id, MCP__SESSION_NOT_FOUND, "Session not found");
        return NULL;
    }
    mcp__hsess_touch(hs);
    if (t->share != NULL)
        t->share->touch(hs);
    return hs;
}

void mcp__shttp_stream_closed(void *arg, mcp__http_req *req)
{
    hstream *st = arg;
    mcp__http_req_release(req);
    st->req = NULL;
    mcp__hsess_touch(st->hs);
    /* A POST stream stays until its requests are answered: disconnection is not
     * cancellation. A standalone or idle stream has nothing left to wait for; a
     * standalone one's later messages are stored under its id for its resume. */
    if (st->kind == HS_GET)
        st->hs->last_standalone = st->id;
    if (st->kind == HS_GET || st->kind == HS_IDLE || st->kind == HS_REMOTE)
        mcp__hstream_free(st);
    else
        mcp__hstream_maybe_ready(st); /* a handler waiting for it now only stores */
}

/* ---- Revision 2026-07-28: each request on its own ---- */

/*
 * Whether a POST body goes to the modern era: the era is decided per request
 * (versioning.mdx, Backward Compatibility). One request whose _meta names a
 * revision is modern; so is any request but initialize when the server speaks
 * only that era (its missing _meta then gets the modern error), or when the
 * MCP-Protocol-Version header names a modern revision and no session is named.
 * Everything else is the legacy era's, unchanged.
 */
static int goes_modern(shttp *t, mcp__http_req *req, const json_t *v, mcp__meta *meta)
{
    unsigned eras = t->ans->ops->eras(t->ans);
    if (!(eras & MCP_ERA_MODERN) || !json_is_object(v) || json_object_get(v, "method") == NULL)
        return 0;
    mcp__meta_read(json_object_get(v, "params"), meta);
    if (meta->version != NULL)
        return 1;
    if (!(eras & MCP_ERA_LEGACY))
        return 1; /* initialize too: it gets the versions the server speaks (-32022) */
    if (strcmp(json_string_value(json_object_get(v, "method")), "initialize") == 0)
        return 0; /* initialize opens the legacy era */
    const mcp__revision *rev = mcp__revision_find(mcp__http_header(req, "mcp-protocol-version"));
    return rev != NULL && rev->modern && mcp__http_header(req, "mcp-session-id") == NULL;
}

/* 400 with HeaderMismatch (-32020), naming the header and why. */
static int mismatch(shttp *t, mcp__http_req *req, const json_t *id, const char *header,
                    const char *why)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "Header mismatch: %s %s", header, why);
    mcp__shttp_error_id(t, req, 400, id, MCP_RPC_HEADER_MISMATCH, msg);
    return -1;
}

/*
 * Server Validation (streamable-http.mdx): MCP-Protocol-Version, Mcp-Method and, for
 * the methods that name something, Mcp-Name must be present and equal the body's
 * values. A version we do not speak, named alike in both, gets UnsupportedProtocolVersion
 * from the server core. The Mcp-Param-* headers depend on the tool's schema, so the core
 * checks them (io.header).
 */
static int check_modern_headers(shttp *t, mcp__http_req *req, const json_t *v,
                                const mcp__meta *meta, const json_t *id)
{
    json_t *params = json_object_get(v, "params");
    const char *method = json_string_value(json_object_get(v, "method"));
    /* A legacy client's initialize, to a server of the modern era only: the server core
     * names the versions it speaks (UnsupportedProtocolVersion, 400; versioning.mdx). */
    if (strcmp(method, "initialize") == 0 && !meta->is_object)
        return 0;
    /* The request metadata first (basic/index.mdx, _meta): without it nothing else can be
     * judged. The server core judges the same on every transport; over HTTP the answer
     * carries 400. */
    const char *bad = mcp__meta_judge(meta);
    if (bad != NULL) {
        mcp__shttp_error_id(t, req, 400, id, MCP_RPC_INVALID_PARAMS, bad);
        return -1;
    }
    const char *version = json_string_value(meta->version);
    const char *hv = mcp__http_header(req, "mcp-protocol-version");
    if (hv == NULL)
        return mismatch(t, req, id, "MCP-Protocol-Version", "is required");
    if (strcmp(hv, version) != 0)
        return mismatch(t, req, id, "MCP-Protocol-Version", "does not match the body's _meta");
    const char *hm = mcp__http_header(req, "mcp-method");
    if (hm == NULL)
        return mismatch(t, req, id, "Mcp-Method", "is required");
    if (strcmp(hm, method) != 0)
        return mismatch(t, req, id, "Mcp-Method", "does not match the body's method");
    const char *field = NULL;
    if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
        field = "name";
    else if (strcmp(method, "resources/read") == 0)
        field = "uri";
    else if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
             strcmp(method, "tasks/cancel") == 0)
        field = "taskId"; /* the tasks extension's routing header */
    if (field == NULL)
        return 0;
    const char *hn = mcp__http_header(req, "mcp-name");
    json_t *body_name = json_object_get(params, field);
    /* The core protocol requires Mcp-Name of its own three methods; the tasks extension
     * asks its clients for it, and a server checks it when it comes (a method of the
     * program's own may be called tasks/get too). */
    if (hn == NULL && strcmp(field, "taskId") == 0)
        return 0;
    if (hn == NULL)
        return mismatch(t, req, id, "Mcp-Name", "is required");
    if (!json_is_string(body_name))
        return 0; /* the method's own check names the bad params */
    if (!mcp__header_value_is(hn, json_string_value(body_name), json_string_length(body_name)))
        return mismatch(t, req, id, "Mcp-Name",
                        strcmp(field, "uri") == 0      ? "does not match the body's params.uri"
                        : strcmp(field, "taskId") == 0 ? "does not match the body's params.taskId"
                                                       : "does not match the body's params.name");
    return 0;
}

/* The client closed a modern request's response: that cancels the request
 * (streamable-http.mdx, Cancellation), and its session, which was only that request,
 * goes once the handler has returned. */
static void modern_stream_closed(void *arg, mcp__http_req *req)
{
    hstream *st = arg;
    hsess *hs = st->hs;
    mcp__http_req_release(req);
    st->req = NULL;
    HS_ANS(hs)->cancel_stream(hs->sess, st->id);
}

static void post_modern(shttp *t, mcp__http_req *req, json_t *v, const mcp__meta *meta,
                        size_t n_requests)
{
    const json_t *id = mcp__shttp_request_id(v);
    if (n_requests == 0) {
        /* This revision sends no notification over HTTP (closing a stream cancels): one
         * is accepted and has nothing to act on. */
        const char *hdrs[12];
        size_t n = mcp__shttp_cors(t, req, hdrs, 0);
        hdrs[n] = NULL;
        mcp__http_respond(req, 202, hdrs, NULL, 0);
        return;
    }
    if (t->phase != EP_RUNNING) {
        mcp__shttp_error_id(t, req, 503, id, MCP_RPC_SERVER_ERROR,
                            "Service Unavailable: shutting down");
        return;
    }
    if (check_modern_headers(t, req, v, meta, id) != 0)
        return;
    if (t->share != NULL && t->share->relay(t, req, v))
        return; /* a retry of a request that waits on another node is served there */
    /* A subscription holds its connection as a GET stream does: together they may not
     * take more than half the connections, so that they never lock out short requests. */
    int listen =
        strcmp(json_string_value(json_object_get(v, "method")), "subscriptions/listen") == 0;
    if (listen && mcp__shttp_get_streams_full(t)) {
        mcp__shttp_error_id(t, req, 429, id, MCP_RPC_SERVER_ERROR,
                            "Too Many Requests: too many open streams on this server");
        return;
    }
    hsess *hs = mcp__hsess_new(t, 1, 0);
    hstream *st = hs != NULL ? mcp__hstream_new(hs, HS_POST_JSON, req) : NULL;
    if (st == NULL) {
        if (hs != NULL)
            mcp__hsess_close(hs);
        mcp__shttp_error_id(t, req, 500, id, MCP_RPC_INTERNAL_ERROR,
                            "Internal error: out of memory");
        return;
    }
    /* Answered as one JSON body, or as an SSE stream from the first message the request
     * sends before its answer (progress, logs, a subscription's notifications). */
    st->pending = 1;
    st->unstored = 1;
    st->long_lived = listen;
    if (listen)
        mcp__http_req_limit_sndbuf(req, MCP__NOTIFY_SNDBUF);
    mcp__http_req_on_close(req, modern_stream_closed, st);
    mcp__hsess_feed(hs, req, v, st->id);
}

/* Step-up: a tools/call whose token lacks the tool's scopes gets 403 insufficient_scope
 * naming every scope the request needs (MCP's scope challenge handling), before any of
 * its messages runs. 1 when req was answered. */
/* Adds scopes to need (space-separated) unless p has them all; *oom on failure. */
static void scopes_needed(mcp__buf *need, const mcp_principal *p, const char *scopes, int *oom)
{
    if (scopes == NULL || !mcp__principal_lacks(p, scopes))
        return;
    if ((need->len > 0 && mcp__buf_appends(need, " ") != MCP_OK) ||
        mcp__buf_appends(need, scopes) != MCP_OK)
        *oom = 1;
}

int mcp__shttp_scope_check(shttp *t, mcp__http_req *req, const json_t *v)
{
    if (t->auth == NULL)
        return 0;
    /* A tool's own scopes step up only when the server wants 403 for them; without,
     * the call is answered with a tool error (dispatch.c). A method's always do. */
    int tools = mcp__auth_step_up(t->auth) && t->ans->ops->tool_scopes != NULL;
    const mcp_principal *p = mcp__http_req_tag(req);
    mcp__buf need = {0};
    int oom = 0;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_is_array(v) ? json_array_get(v, i) : v;
        const char *method = json_string_value(json_object_get(m, "method"));
        scopes_needed(&need, p, mcp__auth_method_scopes(t->auth, method), &oom);
        const char *tool = json_string_value(json_object_get(json_object_get(m, "params"), "name"));
        char scopes[512];
        if (tools && method != NULL && strcmp(method, "tools/call") == 0 && tool != NULL &&
            t->ans->ops->tool_scopes(t->ans, tool, scopes, sizeof scopes))
            scopes_needed(&need, p, scopes, &oom);
    }
    if (oom) {
        /* Never let a request through unchecked. */
        mcp__buf_free(&need);
        mcp__shttp_error(t, req, 503, MCP_RPC_INTERNAL_ERROR, "Service Unavailable: out of memory");
        return 1;
    }
    if (need.len == 0) {
        mcp__buf_free(&need);
        return 0;
    }
    mcp__auth_verdict verdict;
    mcp__auth_scope_refusal(t->auth, need.data, &verdict);
    mcp__shttp_auth_refuse(t, req, &verdict);
    mcp__auth_verdict_clear(&verdict);
    mcp__buf_free(&need);
    return 1;
}

static void post(shttp *t, mcp__http_req *req)
{
    const char *accept = mcp__http_header(req, "accept");
    if (!mcp__accepts(accept, "application/json") || !mcp__accepts(accept, "text/event-stream")) {
        mcp__shttp_error(t, req, 406, MCP_RPC_SERVER_ERROR,
                         "Not Acceptable: Client must accept both application/json and "
                         "text/event-stream");
        return;
    }
    if (!mcp__media_type_is(mcp__http_header(req, "content-type"), "application/json")) {
        mcp__shttp_error(t, req, 415, MCP_RPC_SERVER_ERROR,
                         "Unsupported Media Type: Content-Type must be application/json");
        return;
    }
    size_t n_requests;
    int has_init;
    json_t *v = mcp__shttp_parse_body(t, req, &n_requests, &has_init);
    if (v == NULL)
        return;
    if (mcp__shttp_scope_check(t, req, v))
        goto out;
    mcp__meta meta;
    if (goes_modern(t, req, v, &meta)) {
        post_modern(t, req, v, &meta, n_requests);
        goto out;
    }
    /* From here on every refusal names the request it refuses. */
    const json_t *id = mcp__shttp_request_id(v);
    hsess *hs;
    if (n_requests > 0 && t->phase != EP_RUNNING) {
        /* Stopping: no new work, but notifications and the client's answers to the
         * server's requests still help those in flight finish. */
        mcp__shttp_error_id(t, req, 503, id, MCP_RPC_SERVER_ERROR,
                            "Service Unavailable: shutting down");
        goto out;
    }
    if (t->stateless) {
        if (check_version_header(t, req, id) != 0)
            goto out;
        hs = mcp__hsess_new(t, 1, 0);
        if (hs != NULL && !has_init) {
            /* Each stateless POST stands alone: it is served as an initialized
             * session of the version its header names (the latest without one). */
            const char *hv = mcp__http_header(req, "mcp-protocol-version");
            HS_ANS(hs)->assume_initialized(hs->sess, mcp__revision_find_legacy(hv));
        }
    } else if (has_init && mcp__http_header(req, "mcp-session-id") == NULL) {
        if (t->share != NULL && t->share->down(t, req))
            goto out; /* other nodes could not find the session: none is made until they can */
        if (t->sessions.len >= (size_t)t->max_sessions && !mcp__shttp_evict_idle_session(t)) {
            mcp__shttp_error_id(t, req, 503, id, MCP_RPC_SERVER_ERROR,
                                "Service Unavailable: too many open sessions, all of them busy");
            goto out;
        }
        hs = mcp__hsess_new(t, 0, 0);
        if (hs != NULL) {
            mcp__hsess_set_source(hs, req);
            /* A failed digest leaves the owner empty: no request finds the session. */
            (void)mcp__hsess_bind(hs, req);
        }
    } else {
        if ((hs = find_session(t, req, id)) == NULL || check_version_header(t, req, id) != 0)
            goto out;
        hs->used = 1;
    }
    if (hs == NULL) {
        mcp__shttp_error_id(t, req, 500, id, MCP_RPC_INTERNAL_ERROR,
                            "Internal error: out of memory");
        goto out;
    }
    if (json_is_array(v) && HS_ANS(hs)->initialized(hs->sess) &&
        !HS_ANS(hs)->revision(hs->sess)->batches) {
        char why[160];
        mcp__shttp_error_id(t, req, 400, id, MCP_RPC_INVALID_REQUEST,
                            mcp__revision_batch_refusal(why, sizeof(why)));
        if (hs->stateless)
            mcp__hsess_close(hs);
        goto out;
    }
    if (t->share != NULL)
        t->share->posted(hs, v); /* answers another node awaits, cancellations */
    if (n_requests == 0) {
        /* Only notifications and responses: 202 and no body (spec). */
        mcp__hsess_feed(hs, req, v, MCP__STREAM_STANDALONE);
        const char *hdrs[12];
        size_t n = mcp__shttp_cors(t, req, hdrs, 0);
        hdrs[n] = NULL;
        mcp__http_respond(req, 202, hdrs, NULL, 0);
        if (hs->stateless)
            mcp__hsess_close(hs);
        goto out;
    }
    hstream *st = mcp__hstream_new(hs, t->json_response ? HS_POST_JSON : HS_POST_SSE, req);
    if (st == NULL) {
        mcp__shttp_error_id(t, req, 500, id, MCP_RPC_INTERNAL_ERROR,
                            "Internal error: out of memory");
        if (hs->stateless || (has_init && !HS_ANS(hs)->initialized(hs->sess)))
            mcp__hsess_close(hs);
        goto out;
    }
    /* One POST body gets one answer: a response, or one array for a batch. */
    st->pending = 1;
    if (t->share != NULL && !has_init)
        t->share->post_stream(st, v); /* for a node that follows it, should this one die */
    /* initialize is answered at once and never resumed: keeping its answer would
     * only cost every session memory. */
    st->unstored = has_init;
    mcp__http_req_on_close(req, mcp__shttp_stream_closed, st);
    /* The priming event goes first, before any handler runs: a client whose
     * connection drops before the first message still has an id to resume from. */
    if (st->kind == HS_POST_SSE && !has_init && mcp__hsess_primes(hs))
        mcp__hstream_prime(st, -1);
    /* The head and the priming event wait a moment for the answer, which often follows
     * at once (a gateway's child answers within a turn or two): one write, not two. A
     * long call's client still has them within PRIME_HOLD_MS. */
    if (st->kind == HS_POST_SSE)
        mcp__http_req_hold(req, PRIME_HOLD_MS);
    mcp__hsess_feed(hs, req, v, st->id);
    if (has_init && !hs->stateless && !HS_ANS(hs)->initialized(hs->sess)) {
        /* initialize failed (bad params): the session never began. */
        mcp__hsess_close(hs);
    }
out:
    json_decref(v);
}

/*
 * --json-response answers a request with one application/json body, but a request
 * that sends progress, logs or requests of its own before its answer is answered
 * as an SSE stream instead, from its first such message on. Those messages belong
 * on the request's stream (spec, Transports: a POST's SSE stream MAY carry requests
 * and notifications before the response, and they SHOULD relate to that request;
 * the standalone GET stream's SHOULD be unrelated to any running request). On the
 * standalone stream they raced the answer on another connection, and were lost
 * without one: the last progress notification reached clients after the result.
 * Every client supports both forms (the POST's Accept must list both), and requests
 * that send nothing but their answer, nearly all of them, still get plain JSON.
 */
void mcp__hstream_json_to_sse(hstream *st)
{
    st->kind = HS_POST_SSE;
    /* As in SSE mode, the first event names a place to resume from. */
    if (mcp__hsess_primes(st->hs))
        mcp__hstream_prime(st, -1);
}

static void get(shttp *t, mcp__http_req *req)
{
    if (!mcp__accepts(mcp__http_header(req, "accept"), "text/event-stream")) {
        mcp__shttp_error(t, req, 406, MCP_RPC_SERVER_ERROR,
                         "Not Acceptable: Client must accept text/event-stream");
        return;
    }
    if (t->stateless || t->disable_get || !(t->ans->ops->eras(t->ans) & MCP_ERA_LEGACY)) {
        mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
        return;
    }
    const char *last = mcp__http_header(req, "last-event-id");
    if (t->phase != EP_RUNNING && (last == NULL || t->store == NULL)) {
        /* Draining: no new stream, but a resume may fetch an answer in flight. */
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR, "Service Unavailable: shutting down");
        return;
    }
    hsess *hs = find_session(t, req, NULL);
    if (hs == NULL || check_version_header(t, req, NULL) != 0)
        return;
    int open_gets = 0;
    for (hstream *p = hs->streams; p != NULL; p = p->next)
        open_gets +=
            (p->kind == HS_GET || p->kind == HS_IDLE || p->kind == HS_REMOTE) && p->req != NULL;
    open_gets += mcp__shttp_resumes_running(hs);
    if (open_gets >= t->max_get_streams && !mcp__shttp_idle_give_way(hs, last)) {
        mcp__shttp_error(t, req, 429, MCP_RPC_SERVER_ERROR,
                         "Too Many Requests: too many open GET streams in this session");
        return;
    }
    if (mcp__shttp_get_streams_full(t)) {
        mcp__shttp_error(t, req, 429, MCP_RPC_SERVER_ERROR,
                         "Too Many Requests: too many open streams on this server");
        return;
    }
    if (last != NULL && t->store != NULL) {
        mcp__shttp_resume(t, hs, req, last);
        return;
    }
    /* GET streams must not replace each other: a new standalone stream never ends an
     * older one (whose client would reconnect and end the new one, in a loop); they stay
     * open, and the newest carries the session's messages. It gets no old events. */
    hstream *st = mcp__hstream_new(hs, HS_GET, req);
    if (st == NULL) {
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    hs->last_standalone = st->id;
    if (t->share != NULL)
        t->share->standalone_here(hs, st->id);
    mcp__http_req_on_close(req, mcp__shttp_stream_closed, st);
    mcp__http_req_limit_sndbuf(req, MCP__NOTIFY_SNDBUF);
    /* Headers go out at once, so the client knows its stream is open. */
    if (mcp__hsess_primes(hs))
        mcp__hstream_prime(st, -1);
    else
        mcp__hstream_write(st, NULL, 0);
    /* Then what the session sent before there was a stream to carry it. */
    mcp__outbox_deliver(hs, st);
}

static void delete (shttp *t, mcp__http_req *req)
{
    if (t->stateless || !(t->ans->ops->eras(t->ans) & MCP_ERA_LEGACY)) {
        mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
        return;
    }
    hsess *hs = find_session(t, req, NULL);
    if (hs == NULL || check_version_header(t, req, NULL) != 0)
        return;
    if (t->share != NULL && t->share->delete (t, hs, req))
        return;
    mcp__hsess_close(hs);
    mcp__shttp_deleted(t, req);
}

void mcp__shttp_deleted(shttp *t, mcp__http_req *req)
{
    const char *hdrs[12];
    size_t n = mcp__shttp_cors(t, req, hdrs, 0);
    hdrs[n] = NULL;
    mcp__http_respond(req, 200, hdrs, NULL, 0);
}

/* The request metadata headers (and the session's): what names a request and its target. */
static int metadata_header(const char *name)
{
    return strcmp(name, "mcp-protocol-version") == 0 || strcmp(name, "mcp-method") == 0 ||
           strcmp(name, "mcp-name") == 0 || strcmp(name, "mcp-session-id") == 0 ||
           strncmp(name, "mcp-param-", 10) == 0;
}

#define MAX_METADATA_HEADERS 64

/*
 * A metadata header given twice is refused (400): we read the first field line, while
 * HAProxy and most proxies read the last, so "Mcp-Name: add" then "Mcp-Name: echo"
 * passed a rule that denies add, and add ran. Returns -1 when it answered.
 */
static int refuse_repeated_metadata(shttp *t, mcp__http_req *req)
{
    size_t seen[MAX_METADATA_HEADERS], nseen = 0;
    const char *name, *other;
    for (size_t i = 0; mcp__http_header_at(req, i, &name, NULL) == MCP_OK; i++) {
        if (!metadata_header(name))
            continue;
        const char *why = NULL;
        if (nseen == MAX_METADATA_HEADERS)
            why = "Bad Request: too many Mcp-* header fields";
        for (size_t k = 0; k < nseen && why == NULL; k++)
            if (mcp__http_header_at(req, seen[k], &other, NULL) == MCP_OK &&
                strcmp(other, name) == 0)
                why = "";
        if (why == NULL) {
            seen[nseen++] = i;
            continue;
        }
        char msg[200];
        if (why[0] == '\0')
            snprintf(msg, sizeof(msg), "Bad Request: the header %.128s is repeated", name);
        /* The session's header is not request metadata: a plain invalid request. */
        int code =
            strcmp(name, "mcp-session-id") == 0 ? MCP_RPC_INVALID_REQUEST : MCP_RPC_HEADER_MISMATCH;
        mcp__shttp_error(t, req, 400, code, why[0] ? why : msg);
        return -1;
    }
    return 0;
}

void mcp__shttp_mcp_request(shttp *t, mcp__http_req *req)
{
    if (refuse_repeated_metadata(t, req) != 0)
        return;
    if (t->share != NULL && t->share->filter(t, req))
        return;
    mcp__shttp_mcp_request_local(t, req);
}

void mcp__shttp_mcp_request_local(shttp *t, mcp__http_req *req)
{
    switch (mcp__http_req_method(req)) {
    case MCP__HTTP_POST:
        post(t, req);
        break;
    case MCP__HTTP_GET:
        get(t, req);
        break;
    case MCP__HTTP_DELETE:
        delete (t, req);
        break;
    default:
        mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
        break;
    }
}
