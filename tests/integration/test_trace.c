/* SPDX-License-Identifier: MIT */
/*
 * Trace context and spans, over real 127.0.0.1 sockets in both eras:
 *   - a traceparent (with tracestate and baggage) our client puts in a request's _meta
 *     arrives at the handler of our server as it was sent; one not of the W3C form is
 *     dropped; mcp_client_set_trace gives every request a new, valid trace of its own;
 *   - the server's span hooks see every request, begun and ended once each, with the
 *     OpenTelemetry semantic-convention names for MCP (mcp.method.name,
 *     jsonrpc.request.id, mcp.protocol.version, mcp.session.id, gen_ai.tool.name,
 *     gen_ai.operation.name, gen_ai.prompt.name, mcp.resource.uri, network.*), the
 *     request's trace context as the parent, and the outcome (a result, a tool error,
 *     a JSON-RPC error's code);
 *   - through mcp-gateway (a program, in front of mcp-everything --stdio) the trace
 *     context reaches the server's handler too (its trace_context tool).
 * Every wait has a deadline.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "gateway_host.h"
#include "harness.h"
#include "http_client.h"
#include "inproc_host.h"

#define WAIT_MS 10000
#define MODERN "2026-07-28"
#define LEGACY "2025-11-25"
#define TP "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
#define TRACE_ID "0af7651916cd43dd8448eb211c80319c"
#define TS "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
#define BAGGAGE "userId=alice,serverNode=DF%2028"

/* ---- The spans the hooks saw ---- */

typedef struct span {
    json_t *start; /* {"name", "attrs": {...}, "traceparent", ...} */
    int ended;
    int code;
    char type[32];
} span;

static struct {
    pthread_mutex_t mu;
    span spans[256];
    int n;
} seen = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};

static void *on_start(const mcp_span_start *s, void *user)
{
    (void)user;
    json_t *attrs = json_object();
    for (size_t i = 0; i < s->nattrs; i++)
        json_object_set_new(attrs, s->attrs[i].name, json_string(s->attrs[i].value));
    json_t *rec =
        json_pack("{s:s, s:o, s:s?, s:s?, s:s?}", "name", s->name, "attrs", attrs, "traceparent",
                  s->traceparent, "tracestate", s->tracestate, "baggage", s->baggage);
    pthread_mutex_lock(&seen.mu);
    span *sp = seen.n < 256 ? &seen.spans[seen.n++] : NULL;
    if (sp != NULL)
        sp->start = rec;
    else
        json_decref(rec);
    pthread_mutex_unlock(&seen.mu);
    return sp;
}

static void on_end(void *handle, int code, const char *type, void *user)
{
    (void)user;
    span *sp = handle;
    pthread_mutex_lock(&seen.mu);
    if (sp != NULL) {
        sp->ended++;
        sp->code = code;
        snprintf(sp->type, sizeof(sp->type), "%s", type != NULL ? type : "");
    }
    pthread_mutex_unlock(&seen.mu);
}

static void seen_reset(void)
{
    pthread_mutex_lock(&seen.mu);
    for (int i = 0; i < seen.n; i++)
        json_decref(seen.spans[i].start);
    memset(seen.spans, 0, sizeof(seen.spans));
    seen.n = 0;
    pthread_mutex_unlock(&seen.mu);
}

/* The last span named name (NULL: none). Under seen.mu. */
static span *find(const char *name)
{
    for (int i = seen.n - 1; i >= 0; i--)
        if (strcmp(json_string_value(json_object_get(seen.spans[i].start, "name")), name) == 0)
            return &seen.spans[i];
    return NULL;
}

static const char *attr(const span *sp, const char *name)
{
    return json_string_value(json_object_get(json_object_get(sp->start, "attrs"), name));
}

/* ---- The server ---- */

static json_t *trace_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const char *tp = mcp_ctx_traceparent(ctx), *ts = mcp_ctx_tracestate(ctx),
               *bg = mcp_ctx_baggage(ctx);
    json_t *r = mcp_text_result("traced");
    json_object_set_new(
        r, "structuredContent",
        json_pack("{s:s?, s:s?, s:s?}", "traceparent", tp, "tracestate", ts, "baggage", bg));
    return r;
}

static json_t *failing_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    json_t *r = mcp_text_result("it went wrong");
    json_object_set_new(r, "isError", json_true());
    return r;
}

static json_t *get_prompt(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return json_pack("{s:[]}", "messages");
}

static json_t *read_res(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return mcp_resource_text(uri, "text/plain", "x");
}

static mcp_server *traced_server(void)
{
    mcp_server *srv = mcp_server_new("traced", "1.0.0");
    assert_non_null(srv);
    mcp_tool_def t1 = {.size = sizeof(t1), .name = "trace", .fn = trace_tool};
    mcp_tool_def t2 = {.size = sizeof(t2), .name = "failing", .fn = failing_tool};
    assert_int_equal(mcp_server_add_tool_def(srv, &t1), MCP_OK);
    assert_int_equal(mcp_server_add_tool_def(srv, &t2), MCP_OK);
    mcp_prompt_def p = {.size = sizeof(p), .name = "greet", .fn = get_prompt};
    assert_int_equal(mcp_server_add_prompt(srv, &p), MCP_OK);
    mcp_resource_def r = {
        .struct_size = sizeof(r), .uri = "test://one", .name = "one", .fn = read_res};
    assert_int_equal(mcp_server_add_resource(srv, &r), MCP_OK);
    mcp_span_hooks hooks = {.size = sizeof(hooks), .start = on_start, .end = on_end};
    assert_int_equal(mcp_server_set_span_hooks(srv, &hooks), MCP_OK);
    return srv;
}

/* tools/call tool with _meta (stolen, may be NULL): its structuredContent. */
static json_t *call(mcp_client *c, const char *tool, json_t *meta)
{
    json_t *params = json_pack("{s:s, s:{}}", "name", tool, "arguments");
    if (meta != NULL)
        json_object_set_new(params, "_meta", meta);
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, "tools/call", params, NULL, &result, &err);
    if (rc != MCP_OK)
        fail_msg("tools/call %s: %d %s", tool, rc, err.message);
    json_t *sc = json_incref(json_object_get(result, "structuredContent"));
    json_decref(result);
    return sc;
}

static void expect_str(const json_t *obj, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(obj, key));
    if (want == NULL ? got != NULL : got == NULL || strcmp(got, want) != 0)
        fail_msg("%s is %s, not %s", key, got ? got : "(none)", want ? want : "(none)");
}

static void trace_and_spans(const char *protocol)
{
    seen_reset();
    ih_host h;
    ih_start(&h, traced_server());
    mcp_client *c = mcp_client_new("trace-client", "1.0.0");
    assert_non_null(c);
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);

    /* The application's trace context, as sent. */
    json_t *sc =
        call(c, "trace",
             json_pack("{s:s, s:s, s:s}", "traceparent", TP, "tracestate", TS, "baggage", BAGGAGE));
    expect_str(sc, "traceparent", TP);
    expect_str(sc, "tracestate", TS);
    expect_str(sc, "baggage", BAGGAGE);
    json_decref(sc);
    /* Not of the W3C form: dropped, with what came with it. */
    static const char *const bad[] = {"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
                                      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                                      "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
                                      "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
                                      "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sc = call(c, "trace", json_pack("{s:s, s:s}", "traceparent", bad[i], "tracestate", TS));
        expect_str(sc, "traceparent", NULL);
        expect_str(sc, "tracestate", NULL);
        json_decref(sc);
    }
    /* A new trace for each request that has none. */
    sc = call(c, "trace", NULL);
    expect_str(sc, "traceparent", NULL);
    json_decref(sc);
    assert_int_equal(mcp_client_set_trace(c, 1), MCP_OK);
    json_t *a = call(c, "trace", NULL), *b = call(c, "trace", NULL);
    const char *ta = json_string_value(json_object_get(a, "traceparent"));
    const char *tb = json_string_value(json_object_get(b, "traceparent"));
    assert_true(mcp_traceparent_valid(ta));
    assert_true(mcp_traceparent_valid(tb));
    assert_true(strncmp(ta, tb, 35) != 0); /* another trace id */
    json_decref(a);
    json_decref(b);
    /* The application's still wins. */
    sc = call(c, "trace", json_pack("{s:s}", "traceparent", TP));
    expect_str(sc, "traceparent", TP);
    json_decref(sc);

    /* Spans of other methods and outcomes. */
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    sc = call(c, "failing", NULL);
    json_decref(sc);
    assert_int_equal(mcp_client_request(c, "tools/call",
                                        json_pack("{s:s, s:{}}", "name", "nope", "arguments"), NULL,
                                        &result, &err),
                     MCP_ERPC);
    mcp_rpc_error_clear(&err);
    assert_int_equal(mcp_client_get_prompt(c, "greet", json_object(), &result, &err), MCP_OK);
    json_decref(result);
    assert_int_equal(mcp_client_read_resource(c, "test://one", &result, &err), MCP_OK);
    json_decref(result);
    assert_int_equal(mcp_client_list_tools(c, NULL, &result, &err), MCP_OK);
    json_decref(result);
    mcp_client_free(c);
    ih_stop(&h);

    pthread_mutex_lock(&seen.mu);
    /* Every request began once and ended once. */
    for (int i = 0; i < seen.n; i++)
        if (seen.spans[i].ended != 1)
            fail_msg("span %s ended %d times",
                     json_string_value(json_object_get(seen.spans[i].start, "name")),
                     seen.spans[i].ended);
    span *sp = NULL;
    for (int i = 0; i < seen.n && sp == NULL; i++)
        if (json_is_string(json_object_get(seen.spans[i].start, "tracestate")))
            sp = &seen.spans[i];
    assert_non_null(sp);
    assert_string_equal(json_string_value(json_object_get(sp->start, "name")), "tools/call trace");
    expect_str(sp->start, "traceparent", TP);
    expect_str(sp->start, "baggage", BAGGAGE);
    assert_string_equal(attr(sp, "mcp.method.name"), "tools/call");
    assert_string_equal(attr(sp, "gen_ai.tool.name"), "trace");
    assert_string_equal(attr(sp, "gen_ai.operation.name"), "execute_tool");
    assert_string_equal(attr(sp, "mcp.protocol.version"), protocol);
    assert_non_null(attr(sp, "jsonrpc.request.id"));
    assert_string_equal(attr(sp, "network.transport"), "tcp");
    assert_string_equal(attr(sp, "network.protocol.name"), "http");
    if (strcmp(protocol, LEGACY) == 0)
        assert_int_equal(strlen(attr(sp, "mcp.session.id")), 32);
    else
        assert_null(attr(sp, "mcp.session.id"));
    assert_int_equal(sp->code, 0);
    assert_string_equal(sp->type, "");
    sp = find("tools/call failing");
    assert_non_null(sp);
    assert_string_equal(sp->type, "tool_error");
    sp = find("tools/call nope");
    assert_non_null(sp);
    assert_int_equal(sp->code, MCP_RPC_INVALID_PARAMS);
    assert_string_equal(sp->type, "-32602");
    sp = find("prompts/get greet");
    assert_non_null(sp);
    assert_string_equal(attr(sp, "gen_ai.prompt.name"), "greet");
    sp = find("resources/read");
    assert_non_null(sp);
    assert_string_equal(attr(sp, "mcp.resource.uri"), "test://one");
    assert_non_null(find("tools/list"));
    if (strcmp(protocol, LEGACY) == 0)
        assert_non_null(find("initialize"));
    else
        assert_non_null(find("server/discover"));
    pthread_mutex_unlock(&seen.mu);
    seen_reset();
}

static void test_trace_context_and_spans_legacy(void **state)
{
    (void)state;
    trace_and_spans(LEGACY);
}

static void test_trace_context_and_spans_2026_07_28(void **state)
{
    (void)state;
    trace_and_spans(MODERN);
}

static void through_the_gateway(const char *protocol)
{
    char everything[4096];
    assert_int_equal(harness_bin_path("mcp-everything", everything, sizeof(everything)), 0);
    const char *cmd[] = {everything, "--stdio", NULL};
    const char *flags[] = {"--log-level", "info", NULL};
    hc_server gw;
    gw_start(&gw, flags, cmd);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", gw.port);
    mcp_client *c = mcp_client_new("trace-client", "1.0.0");
    assert_non_null(c);
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, url, NULL, WAIT_MS), MCP_OK);
    json_t *sc =
        call(c, "trace_context",
             json_pack("{s:s, s:s, s:s}", "traceparent", TP, "tracestate", TS, "baggage", BAGGAGE));
    expect_str(sc, "traceparent", TP);
    expect_str(sc, "tracestate", TS);
    expect_str(sc, "baggage", BAGGAGE);
    json_decref(sc);
    /* The gateway's line for that request carries the trace id (TP's second field); a
     * request without a traceparent (initialize, here) has none. */
    const char *line = "method=tools/call status=ok duration_ms=";
    assert_int_equal(hc_server_wait_stderr(&gw, "trace_id=" TRACE_ID, WAIT_MS), 0);
    char *err = hc_server_stderr(&gw);
    const char *at = strstr(err, line);
    assert_non_null(at);
    const char *eol = strchr(at, '\n');
    const char *id = strstr(at, "trace_id=" TRACE_ID);
    assert_true(id != NULL && (eol == NULL || id < eol));
    const char *init = strstr(err, "method=initialize");
    if (init != NULL) { /* 2025-11-25: the session's initialize went through it */
        eol = strchr(init, '\n');
        assert_true(eol != NULL && memmem(init, (size_t)(eol - init), "trace_id=", 9) == NULL);
    }
    free(err);
    mcp_client_free(c);
    gw_stop(&gw);
}

static void test_trace_context_through_the_gateway_legacy(void **state)
{
    (void)state;
    through_the_gateway(LEGACY);
}

static void test_trace_context_through_the_gateway_2026_07_28(void **state)
{
    (void)state;
    through_the_gateway(MODERN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_context_and_spans_legacy),
        cmocka_unit_test(test_trace_context_and_spans_2026_07_28),
        cmocka_unit_test(test_trace_context_through_the_gateway_legacy),
        cmocka_unit_test(test_trace_context_through_the_gateway_2026_07_28),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
