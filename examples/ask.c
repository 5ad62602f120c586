/* SPDX-License-Identifier: MIT */
/*
 * A tool handler that asks the client for input, written once for both eras of
 * the protocol.
 *
 * The tool "greet" asks the user for a name (elicitation, a form) and then asks
 * the client's model to greet that name (sampling), and returns both answers.
 * It asks with mcp_ctx_ask(), which does the right thing in each era:
 *
 * - revision 2026-07-28 (stateless): the server sends no request. A question
 *   without an answer yet makes mcp_ctx_ask() return MCP_EINPUT; the handler
 *   returns, the call is answered with an InputRequiredResult, and the client
 *   library answers it with its handlers and sends the call again with the
 *   answers. The handler runs again from the start and now finds them: here
 *   three rounds (no answer yet, the name, the name and the greeting).
 * - revision 2025-11-25 (initialize, a session): mcp_ctx_ask() sends the
 *   request on the call's stream and waits on the worker for the answer.
 *
 * One program on one libuv loop: it serves the tool over Streamable HTTP on
 * 127.0.0.1 (a free port) and, on the same loop, runs a client that declares
 * elicitation and sampling (its handlers give canned answers) and calls the
 * tool once in each era, one after the other. It exits 0 when both calls came
 * back with the canned answers and nothing of libmcp is left on the loop.
 *
 * Usage: examples_ask
 */
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include <mcp/mcp.h>

#define NAME "Ada"
#define GREETING "Welcome aboard!"

typedef struct app {
    uv_loop_t loop;
    mcp_server *server;
    mcp_http_endpoint *endpoint;
    mcp_client *client; /* the client of the era under way */
    int era;            /* index into protocols */
    int answered;       /* calls that came back right */
    int failed;
} app;

static const char *const protocols[] = {MCP_PROTOCOL_2026_07_28, MCP_PROTOCOL_2025_11_25};

/* ---- The server's side ---- */

static json_t *tool_greet(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *form = NULL, *reply = NULL, *result = NULL;
    mcp_rpc_error err = {0};
    char text[256];
    /* Keys name the questions, so that a retry's answers find them. */
    int rc = mcp_ctx_ask(ctx, "name", "elicitation/create",
                         json_pack("{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "message",
                                   "What is your name?", "requestedSchema", "type", "object",
                                   "properties", "name", "type", "string", "required", "name"),
                         0, &form, &err);
    const char *name = json_string_value(json_object_get(json_object_get(form, "content"), "name"));
    if (rc == MCP_OK && name != NULL) {
        snprintf(text, sizeof(text), "Greet %s in one short sentence.", name);
        rc = mcp_ctx_ask(ctx, "greeting", "sampling/createMessage",
                         json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user",
                                   "content", "type", "text", "text", text, "maxTokens", 50),
                         0, &reply, &err);
    }
    const char *greeting =
        json_string_value(json_object_get(json_object_get(reply, "content"), "text"));
    if (rc == MCP_EINPUT) {
        /* 2026-07-28: return NULL; the client is asked, and we run again with the answers. */
    } else if (rc != MCP_OK) {
        result = mcp_tool_error("cannot ask the client: %s %s", mcp_strerror(rc), err.message);
    } else if (name == NULL || greeting == NULL) {
        result = mcp_tool_error("the user gave no name, or the model no greeting");
    } else {
        snprintf(text, sizeof(text), "%s, the model says: \"%s\" (protocol %s, round %d)", name,
                 greeting, mcp_ctx_protocol_version(ctx), mcp_ctx_round(ctx));
        result = mcp_text_result(text);
    }
    mcp_rpc_error_clear(&err);
    json_decref(form);
    json_decref(reply);
    return result;
}

/* ---- The client's side: its handlers run on a worker thread of the client ---- */

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err, (void)user;
    printf("  client: the server asks \"%s\"; the user answers %s\n",
           json_string_value(json_object_get(params, "message")), NAME);
    return json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "name", NAME);
}

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err, (void)user;
    const json_t *msg = json_array_get(json_object_get(params, "messages"), 0);
    printf("  client: the model is asked \"%s\"\n",
           json_string_value(json_object_get(json_object_get(msg, "content"), "text")));
    return json_pack("{s:s, s:{s:s, s:s}, s:s}", "role", "assistant", "content", "type", "text",
                     "text", GREETING, "model", "canned-model");
}

static void start_era(app *a);

static void endpoint_stopped(void *user, int status)
{
    app *a = user;
    (void)status;
    mcp_http_endpoint_free(a->endpoint);
    a->endpoint = NULL; /* nothing of ours is left on the loop: uv_run returns */
}

static void client_closed(void *user)
{
    app *a = user;
    a->client = NULL;
    if (!a->failed && ++a->era < 2)
        start_era(a);
    else
        mcp_http_endpoint_stop(a->endpoint, 1000, endpoint_stopped, a);
}

static void on_result(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                      void *user)
{
    app *a = user;
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    if (status != MCP_OK || text == NULL) {
        fprintf(stderr, "tools/call greet: %s %s\n", mcp_strerror(status),
                err != NULL ? err->message : "");
        a->failed = 1;
    } else {
        printf("%s: %s\n", protocols[a->era], text);
        a->answered += strstr(text, NAME) != NULL && strstr(text, GREETING) != NULL;
    }
    mcp_client_close(c, client_closed, a);
}

static void on_connected(mcp_client *c, int status, void *user)
{
    app *a = user;
    int rc = status;
    if (rc == MCP_OK) {
        printf("%s: connected, speaking %s\n", protocols[a->era], mcp_client_protocol_version(c));
        mcp_call_opts opts = {.size = sizeof(opts), .timeout_ms = 10000};
        rc = mcp_client_request_async(c, "tools/call",
                                      json_pack("{s:s, s:{}}", "name", "greet", "arguments"), &opts,
                                      on_result, a, NULL);
    }
    if (rc != MCP_OK) {
        fprintf(stderr, "%s: %s\n", protocols[a->era], mcp_strerror(rc));
        a->failed = 1;
        mcp_client_close(c, client_closed, a);
    }
}

/* A new client for each era: the era is the client's for its whole life. */
static void start_era(app *a)
{
    int rc = mcp_client_new_on_loop(&a->loop, "ask-example", "1.0.0", &a->client);
    if (rc == MCP_OK)
        rc = mcp_client_set_protocol(a->client, protocols[a->era]);
    if (rc == MCP_OK) /* declaring the capabilities comes with the handlers */
        rc = mcp_client_on_elicitation(a->client, on_elicitation, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_on_sampling(a->client, on_sampling, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_connect_http_async(a->client, mcp_http_endpoint_url(a->endpoint), NULL,
                                           10000, on_connected, a);
    if (rc != MCP_OK) {
        fprintf(stderr, "cannot start the client: %s\n", mcp_strerror(rc));
        a->failed = 1;
        if (a->client != NULL)
            mcp_client_close(a->client, client_closed, a);
        else
            mcp_http_endpoint_stop(a->endpoint, 0, endpoint_stopped, a);
    }
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "Usage: examples_ask\n");
        return 2;
    }
    app a = {0};
    if (uv_loop_init(&a.loop) != 0)
        return 1;
    a.server = mcp_server_new("ask-example", "1.0.0");
    int rc = a.server != NULL
                 ? mcp_server_add_tool(a.server, "greet", "Asks the user's name, then greets them",
                                       NULL, tool_greet, NULL)
                 : MCP_ENOMEM;
    mcp_http_opts opts = {.size = sizeof(opts), .listen = "127.0.0.1:0"};
    if (rc == MCP_OK)
        rc = mcp_http_endpoint_new(&a.loop, a.server, &opts, &a.endpoint);
    if (rc == MCP_OK)
        start_era(&a);
    else
        fprintf(stderr, "cannot serve: %s\n", mcp_strerror(rc));

    uv_run(&a.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&a.loop);
    printf("uv_loop_close: %d\n", closed);
    mcp_server_free(a.server);
    return rc == MCP_OK && !a.failed && a.answered == 2 && closed == 0 ? 0 : 1;
}
