/* SPDX-License-Identifier: MIT */
/*
 * Trace context and spans on the server: a request's W3C trace context for its
 * handler, and the program's span hooks called as each request comes and is answered,
 * with the OpenTelemetry semantic-convention names for MCP. Without hooks, nothing
 * here runs beyond one test per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/trace.h"
#include "server/server_int.h"

/* What a request's span needs at its end: the hooks it began with. */
typedef struct span_rec {
    void *span;
    void (*end)(void *span, int error_code, const char *error_type, void *user);
    void *user;
} span_rec;

int mcp_server_set_span_hooks(mcp_server *srv, const mcp_span_hooks *given)
{
    mcp_span_hooks h = {0};
    if (srv == NULL || (given != NULL && mcp__opts_copy(&h, sizeof(h), given, sizeof(h)) != MCP_OK))
        return MCP_EINVAL;
    uv_mutex_lock(&srv->lock);
    srv->spans = h;
    atomic_store_explicit(&srv->spans_on, h.start != NULL || h.end != NULL, memory_order_release);
    uv_mutex_unlock(&srv->lock);
    return MCP_OK;
}

static const char *traced(const mcp_ctx *ctx, int which)
{
    mcp__trace t;
    mcp__trace_read(ctx->meta, &t);
    return which == 0 ? t.traceparent : which == 1 ? t.tracestate : t.baggage;
}

const char *mcp_ctx_traceparent(const mcp_ctx *ctx)
{
    return traced(ctx, 0);
}

const char *mcp_ctx_tracestate(const mcp_ctx *ctx)
{
    return traced(ctx, 1);
}

const char *mcp_ctx_baggage(const mcp_ctx *ctx)
{
    return traced(ctx, 2);
}

#define MAX_ATTRS 12

static void attr(mcp_span_attr *a, size_t *n, const char *name, const char *value)
{
    if (value != NULL && *n < MAX_ATTRS)
        a[(*n)++] = (mcp_span_attr){name, value};
}

void mcp__span_begin(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    if (!atomic_load_explicit(&srv->spans_on, memory_order_acquire))
        return; /* no hooks: nothing to pay */
    uv_mutex_lock(&srv->lock);
    mcp_span_hooks h = srv->spans;
    uv_mutex_unlock(&srv->lock);
    if (h.start == NULL && h.end == NULL)
        return;
    span_rec *rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return; /* no span for it: tracing never fails a request */
    const json_t *params = req->params;
    const json_t *meta = json_object_get(params, "_meta");
    const char *m = req->method;
    mcp_span_attr a[MAX_ATTRS];
    size_t n = 0;
    char id[64];
    if (json_is_integer(req->id))
        snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT, json_integer_value(req->id));
    else
        snprintf(id, sizeof(id), "%.60s", json_string_value(req->id));
    const char *version =
        json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion"));
    if (version == NULL && strcmp(m, "initialize") == 0)
        version = json_string_value(json_object_get(params, "protocolVersion"));
    if (version == NULL && s->initialized && s->rev != NULL)
        version = s->rev->version;
    const char *target = NULL;
    attr(a, &n, "mcp.method.name", m);
    attr(a, &n, "jsonrpc.request.id", id);
    attr(a, &n, "mcp.protocol.version", version);
    attr(a, &n, "mcp.session.id", s->id);
    if (strcmp(m, "tools/call") == 0) {
        target = json_string_value(json_object_get(params, "name"));
        attr(a, &n, "gen_ai.tool.name", target);
        attr(a, &n, "gen_ai.operation.name", "execute_tool");
    } else if (strcmp(m, "prompts/get") == 0) {
        target = json_string_value(json_object_get(params, "name"));
        attr(a, &n, "gen_ai.prompt.name", target);
    } else if (strncmp(m, "resources/", 10) == 0) {
        attr(a, &n, "mcp.resource.uri", json_string_value(json_object_get(params, "uri")));
    }
    int http = s->io != NULL && s->io->header != NULL;
    attr(a, &n, "network.transport", http ? "tcp" : "pipe");
    if (http)
        attr(a, &n, "network.protocol.name", "http");
    char name[320];
    snprintf(name, sizeof(name), "%s%s%.256s", m, target != NULL ? " " : "",
             target != NULL ? target : "");
    mcp__trace t;
    mcp__trace_read(meta, &t);
    mcp_span_start info = {.name = name,
                           .attrs = a,
                           .nattrs = n,
                           .traceparent = t.traceparent,
                           .tracestate = t.tracestate,
                           .baggage = t.baggage};
    rec->span = h.start != NULL ? h.start(&info, h.user) : NULL;
    rec->end = h.end;
    rec->user = h.user;
    req->span = rec;
}

void mcp__span_end(mcp__inreq *req, const json_t *msg)
{
    span_rec *rec = req->span;
    if (rec == NULL)
        return;
    req->span = NULL;
    const json_t *error = json_object_get(msg, "error");
    int code = 0;
    const char *type = NULL;
    char code_text[24];
    if (req->cancelled) {
        type = "cancelled";
    } else if (msg == NULL || error != NULL) {
        code = msg == NULL ? MCP_RPC_INTERNAL_ERROR
                           : (int)json_integer_value(json_object_get(error, "code"));
        snprintf(code_text, sizeof(code_text), "%d", code);
        type = code_text;
    } else if (strcmp(req->method, "tools/call") == 0 &&
               json_is_true(json_object_get(json_object_get(msg, "result"), "isError"))) {
        type = "tool_error";
    }
    if (rec->end != NULL)
        rec->end(rec->span, code, type, rec->user);
    free(rec);
}
