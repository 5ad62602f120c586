/* SPDX-License-Identifier: MIT */
/*
 * The server every protocol-level fuzz target serves. See fuzz_server.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"

static json_t *text_result(const char *text)
{
    return json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text);
}

static json_t *echo_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    const char *text = json_string_value(json_object_get(args, "text"));
    return text_result(text ? text : "");
}

static json_t *add_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    double sum = json_number_value(json_object_get(args, "a")) +
                 json_number_value(json_object_get(args, "b"));
    json_t *r = text_result("sum");
    json_object_set_new(r, "structuredContent", json_pack("{s:f}", "sum", sum));
    return r;
}

/* Progress (when the request asked for it), a log message and a custom
 * notification before the result: events on the request's stream. */
static json_t *notify_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    json_int_t n = json_integer_value(json_object_get(args, "count"));
    if (n < 1 || n > 8)
        n = 2;
    for (json_int_t i = 1; i <= n; i++) {
        mcp_ctx_progress(ctx, (double)i, (double)n, "working");
        mcp_ctx_logf(ctx, MCP_LOG_INFO, "step %lld", (long long)i);
    }
    mcp_ctx_notify(ctx, "notifications/fuzz", json_pack("{s:I}", "n", n));
    if (json_is_true(json_object_get(args, "close")))
        mcp_ctx_close_sse_stream(ctx, 10);
    return text_result("done");
}

static json_t *fail_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "this tool always fails");
    return NULL;
}

/* A tool whose result breaks its own output schema. */
static json_t *bad_output_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    json_t *r = text_result("bad");
    json_object_set_new(r, "structuredContent", json_pack("{s:s}", "sum", "not a number"));
    return r;
}

static json_t *read_resource(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx;
    (void)user;
    json_t *r = json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType", "text/plain",
                          "text", "resource");
    if (vars != NULL) {
        char *d = json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS);
        if (d != NULL)
            json_object_set_new(json_array_get(json_object_get(r, "contents"), 0), "text",
                                json_string(d));
        free(d);
    }
    return r;
}

static json_t *greet_prompt(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    const char *name = json_string_value(json_object_get(args, "name"));
    return json_pack("{s:[{s:s, s:{s:s, s:s}}]}", "messages", "role", "user", "content", "type",
                     "text", "text", name ? name : "");
}

static json_t *complete(mcp_ctx *ctx, const json_t *ref, const char *arg_name,
                        const char *arg_value, const json_t *context_args, void *user)
{
    (void)ctx;
    (void)ref;
    (void)arg_name;
    (void)context_args;
    (void)user;
    json_t *values = json_array();
    static const char *const names[] = {"alice", "bob", "carol"};
    for (size_t i = 0; i < 3; i++)
        if (arg_value == NULL || strncmp(names[i], arg_value, strlen(arg_value)) == 0)
            json_array_append_new(values, json_string(names[i]));
    return values;
}

static void must(int rc, const char *what)
{
    if (rc != MCP_OK) {
        fprintf(stderr, "fuzz server: %s: %s\n", what, mcp_strerror(rc));
        abort();
    }
}

mcp_server *fz_server_new(void)
{
    mcp_server *srv = mcp_server_new("fuzz", "1.0.0");
    if (srv == NULL)
        abort();
    must(mcp_server_set_instructions(srv, "A server for fuzzing."), "instructions");
    must(mcp_server_set_page_size(srv, 2), "page size"); /* so that lists have cursors */
    must(mcp_server_set_completion(srv, complete, NULL), "completion");
    const mcp_tool_def tools[] = {
        {.name = "echo",
         .description = "Echoes its text.",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
                         "\"minLength\":1,\"maxLength\":64},\"tags\":{\"type\":\"array\","
                         "\"items\":{\"enum\":[\"a\",\"b\"]},\"maxItems\":3}},"
                         "\"required\":[\"text\"],\"additionalProperties\":false}",
         .annotations = "{\"readOnlyHint\":true}",
         .fn = echo_tool,
         .flags = MCP_HANDLER_INLINE},
        {.name = "add",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\","
                         "\"minimum\":-1000},\"b\":{\"type\":\"integer\",\"maximum\":1000}},"
                         "\"required\":[\"a\",\"b\"]}",
         .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},"
                          "\"required\":[\"sum\"]}",
         .fn = add_tool,
         .flags = MCP_HANDLER_INLINE},
        {.name = "notify", .fn = notify_tool, .flags = MCP_HANDLER_INLINE},
        {.name = "fail", .fn = fail_tool, .flags = MCP_HANDLER_INLINE},
        {.name = "bad_output",
         .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}}}",
         .fn = bad_output_tool,
         .flags = MCP_HANDLER_INLINE},
    };
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
        must(mcp_server_add_tool_def(srv, &tools[i]), tools[i].name);
    const mcp_resource_def res = {.uri = "test://static",
                                  .name = "static",
                                  .mime_type = "text/plain",
                                  .fn = read_resource,
                                  .flags = MCP_HANDLER_INLINE};
    must(mcp_server_add_resource(srv, &res), "resource");
    const mcp_resource_template_def tpls[] = {
        {.uri_template = "test://items/{id}",
         .name = "item",
         .fn = read_resource,
         .flags = MCP_HANDLER_INLINE},
        {.uri_template = "test://{a}/{b}.json",
         .name = "pair",
         .fn = read_resource,
         .flags = MCP_HANDLER_INLINE},
    };
    for (size_t i = 0; i < sizeof(tpls) / sizeof(tpls[0]); i++)
        must(mcp_server_add_resource_template(srv, &tpls[i]), tpls[i].name);
    static const mcp_prompt_arg args[] = {
        {.name = "name", .required = 1}, {.name = "style"}, {.name = NULL}};
    const mcp_prompt_def prompt = {
        .name = "greet", .args = args, .fn = greet_prompt, .flags = MCP_HANDLER_INLINE};
    must(mcp_server_add_prompt(srv, &prompt), "prompt");
    return srv;
}

static int is_message(const json_t *m)
{
    const char *v = json_string_value(json_object_get(m, "jsonrpc"));
    return json_is_object(m) && v != NULL && strcmp(v, "2.0") == 0;
}

void fz_check_message(const char *text, size_t len)
{
    json_error_t err;
    json_t *v = json_loadb(text, len, 0, &err);
    int ok = v != NULL;
    if (ok && json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m) ok = ok && is_message(m);
    } else if (ok) {
        ok = is_message(v);
    }
    if (!ok) {
        fprintf(stderr, "the server sent something that is not a JSON-RPC message: %.*s\n",
                (int)(len > 2000 ? 2000 : len), text);
        abort();
    }
    json_decref(v);
}
