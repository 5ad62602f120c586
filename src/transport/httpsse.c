/* SPDX-License-Identifier: MIT */
/*
 * The HTTP+SSE transport (protocol 2024-11-05), on the same server:
 * GET /sse opens the session's one event stream and names, in its first
 * `endpoint` event, where to POST; POST /messages?sessionId=... gets 202 and
 * the answer travels on the event stream.
 *
 * An HTTP+SSE session is forgotten when its stream ends: when the event stream's
 * client disconnects, the session is
 * removed at once, so a later POST to it gets 404 and nothing is left behind.
 */
#include <stdlib.h>
#include <string.h>

#include "sse/sse.h"
#include "transport/shttp.h"

static void on_httpsse_closed(void *arg, mcp__http_req *req)
{
    hstream *st = arg;
    mcp__http_req_release(req);
    st->req = NULL;
    mcp__hsess_close(st->hs);
}

void mcp__httpsse_accepted(shttp *t, mcp__http_req *req)
{
    const char *hdrs[12] = {"Content-Type", "text/plain"};
    size_t n = mcp__shttp_cors(t, req, hdrs, 2);
    hdrs[n] = NULL;
    mcp__http_respond(req, 202, hdrs, "Accepted", 8);
}

void mcp__httpsse_get(shttp *t, mcp__http_req *req)
{
    if (t->phase != EP_RUNNING) {
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR, "Service Unavailable: shutting down");
        return;
    }
    if (t->sessions.len >= (size_t)t->max_sessions && !mcp__shttp_evict_idle_session(t)) {
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR,
                         "Service Unavailable: too many open sessions, all of them busy");
        return;
    }
    if (mcp__shttp_get_streams_full(t)) {
        mcp__shttp_error(t, req, 429, MCP_RPC_SERVER_ERROR,
                         "Too Many Requests: too many open streams on this server");
        return;
    }
    hsess *hs = mcp__hsess_new(t, 0, 1);
    if (hs != NULL)
        (void)mcp__hsess_bind(hs, req);
    hstream *st = hs ? mcp__hstream_new(hs, HS_HTTPSSE, req) : NULL;
    if (st == NULL) {
        if (hs != NULL)
            mcp__hsess_close(hs);
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    mcp__http_req_on_close(req, on_httpsse_closed, st);
    mcp__http_req_limit_sndbuf(req, MCP__NOTIFY_SNDBUF);
    /* Shared with other nodes: the endpoint event goes out once they can find it. */
    if (t->share != NULL && t->share->httpsse_new(hs))
        return;
    mcp__httpsse_endpoint(hs);
}

void mcp__httpsse_endpoint(hsess *hs)
{
    hstream *st = hs->streams;
    if (st == NULL || st->req == NULL)
        return;
    char endpoint[96];
    snprintf(endpoint, sizeof(endpoint), "/messages?sessionId=%s", hs->id);
    mcp__buf b = {0};
    if (mcp__sse_event(&b, "endpoint", NULL, -1, endpoint, strlen(endpoint)) != MCP_OK ||
        mcp__hstream_write(st, b.data, b.len) != MCP_OK)
        mcp__hsess_close(hs);
    mcp__buf_free(&b);
}

/* The value of sessionId in a query string, copied into out. */
static int query_session_id(const char *query, char *out, size_t out_len)
{
    for (const char *p = query; p != NULL && *p != '\0';) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n > 10 && strncmp(p, "sessionId=", 10) == 0 && n - 10 < out_len) {
            memcpy(out, p + 10, n - 10);
            out[n - 10] = '\0';
            return 0;
        }
        p = amp ? amp + 1 : NULL;
    }
    return -1;
}

void mcp__httpsse_post(shttp *t, mcp__http_req *req)
{
    char id[80];
    if (query_session_id(mcp__http_req_query(req), id, sizeof(id)) != 0) {
        mcp__shttp_error(t, req, 400, MCP_RPC_SERVER_ERROR,
                         "Bad Request: the sessionId query parameter is required");
        return;
    }
    hsess *hs = mcp__map_get(&t->sessions, id);
    if (!mcp__media_type_is(mcp__http_header(req, "content-type"), "application/json")) {
        mcp__shttp_error(t, req, 415, MCP_RPC_SERVER_ERROR,
                         "Unsupported Media Type: Content-Type must be application/json");
        return;
    }
    /* Another node's session: its messages are sent there. */
    if (hs == NULL && t->share != NULL && strlen(id) == 32 && t->share->httpsse_post(t, req, id))
        return;
    if (hs == NULL || !hs->httpsse || hs->closing || !mcp__hsess_owned_by(hs, req)) {
        mcp__shttp_error(t, req, 404, MCP__SESSION_NOT_FOUND, "Session not found");
        return;
    }
    size_t n_requests;
    int has_init;
    json_t *v = mcp__shttp_parse_body(t, req, &n_requests, &has_init);
    if (v != NULL && mcp__shttp_scope_check(t, req, v)) {
        json_decref(v);
        return;
    }
    if (v == NULL)
        return;
    if (n_requests > 0 && t->phase != EP_RUNNING) {
        /* Stopping: answers to the server's requests still help those in flight. */
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR, "Service Unavailable: shutting down");
        json_decref(v);
        return;
    }
    mcp__hsess_touch(hs);
    if (t->share != NULL)
        t->share->touch(hs);
    /* Answer first: the messages' answers may travel on the event stream at once (req
     * is gone then: its principal goes to the session before). */
    mcp__hsess_set_principal(hs, req);
    mcp__httpsse_accepted(t, req);
    HS_ANS(hs)->feed_value(hs->sess, v, hs->streams ? hs->streams->id : 0);
    json_decref(v);
}
