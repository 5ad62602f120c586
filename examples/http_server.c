/* SPDX-License-Identifier: MIT */
/*
 * An MCP server over Streamable HTTP, on a loop of its own (mcp_serve_http).
 *
 * It offers two tools, "add" (two numbers, checked against the input schema)
 * and "greet", and a fixed resource, info://server. Clients open sessions
 * (Mcp-Session-Id); answers come as SSE streams whose events are kept in the
 * in-memory event store, so a client whose stream breaks resumes it with
 * Last-Event-ID and loses nothing. Bound to a loopback address, the endpoint
 * takes only requests whose Host is a loopback name and whose Origin, when
 * there is one, is a loopback origin (403 otherwise): the defaults that stop
 * DNS rebinding, so a web page cannot reach the server through the browser.
 *
 * Once listening it says so on stderr ("http_server: listening on
 * http://127.0.0.1:PORT/mcp"; with port 0 the system picks the port). SIGTERM
 * or SIGINT stops it: requests in flight may finish for up to 5 seconds
 * (a second signal stops it at once), then it exits 0.
 *
 *   examples_http_server 127.0.0.1:8080 &
 *   mcp http://127.0.0.1:8080/mcp tools call add a=2 b=3
 *   mcp http://127.0.0.1:8080/mcp resources read info://server
 *
 * Usage: examples_http_server [HOST:PORT]   (default 127.0.0.1:8080)
 */
#include <stdio.h>

#include <mcp/mcp.h>

#define NAME "http_server"

static json_t *tool_add(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    double sum = json_number_value(json_object_get(args, "a")) +
                 json_number_value(json_object_get(args, "b"));
    char text[64];
    snprintf(text, sizeof(text), "%g", sum);
    return mcp_text_result(text);
}

static json_t *tool_greet(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *name = json_string_value(json_object_get(args, "name"));
    /* NULL without a session: revision 2026-07-28 has none, older ones open one. */
    const char *session = mcp_ctx_session_id(ctx);
    char text[256];
    snprintf(text, sizeof(text), "Hello, %s! (session %s)", name,
             session != NULL ? session : "none");
    return mcp_text_result(text);
}

static json_t *read_info(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)vars, (void)user;
    char text[128];
    snprintf(text, sizeof(text), "libmcp %s, protocol %s\n", MCP_VERSION_STRING,
             mcp_ctx_protocol_version(ctx));
    return mcp_resource_text(uri, "text/plain", text);
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, NAME ": listening on %s\n", url);
    fflush(stderr);
}

static int add_everything(mcp_server *srv)
{
    int rc = mcp_server_add_tool(srv, "add", "Returns a + b",
                                 "{\"type\":\"object\",\"properties\":{"
                                 "\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                                 "\"required\":[\"a\",\"b\"]}",
                                 tool_add, NULL);
    if (rc == MCP_OK)
        rc = mcp_server_add_tool(srv, "greet", "Greets someone by name",
                                 "{\"type\":\"object\",\"properties\":{"
                                 "\"name\":{\"type\":\"string\",\"minLength\":1}},"
                                 "\"required\":[\"name\"]}",
                                 tool_greet, NULL);
    mcp_resource_def info = {
        .struct_size = sizeof(info),
        .uri = "info://server",
        .name = "server",
        .description = "Which libmcp and which protocol revision serve this request",
        .mime_type = "text/plain",
        .fn = read_info,
    };
    if (rc == MCP_OK)
        rc = mcp_server_add_resource(srv, &info);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "Usage: examples_http_server [HOST:PORT]\n");
        return 2;
    }
    mcp_server *srv = mcp_server_new("http-example", "1.0.0");
    if (srv == NULL) {
        fprintf(stderr, NAME ": %s\n", mcp_strerror(MCP_ENOMEM));
        return 1;
    }
    int rc = add_everything(srv);
    if (rc != MCP_OK) {
        fprintf(stderr, NAME ": cannot register: %s\n", mcp_strerror(rc));
    } else {
        /* Everything not set keeps its default: sessions on, resumability on with an
         * in-memory event store (bounded here), loopback Host and Origin only. */
        mcp_http_opts opts = {
            .size = sizeof(opts),
            .listen = argc > 1 ? argv[1] : "127.0.0.1:8080",
            .memory_store = {.size = sizeof(mcp_memory_store_opts),
                             .max_events = 1000,
                             .ttl_ms = 60000},
            .drain_ms = 5000,
            .on_listen = on_listen,
        };
        rc = mcp_serve_http(srv, &opts); /* until SIGTERM or SIGINT */
        if (rc != MCP_OK)
            fprintf(stderr, NAME ": serving %s failed: %s\n", opts.listen, mcp_strerror(rc));
        else
            fprintf(stderr, NAME ": stopped\n");
    }
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
