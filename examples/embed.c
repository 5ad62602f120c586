/* SPDX-License-Identifier: MIT */
/*
 * Embedding libmcp in a program that already runs a libuv loop.
 *
 * The host owns the loop and keeps its own repeating timer. On that same loop
 * it serves an MCP server over Streamable HTTP and runs an MCP client that
 * talks to a server over HTTP: by default the host's own endpoint (it asks its
 * own server how often the timer ticked), or the Streamable HTTP URL given.
 * No thread of libmcp runs a loop of its own: the client's HTTP transfers run
 * on the host's loop too. When the host has what it wants (the answer, and a
 * few ticks of its own timer) it stops everything, and once the last done
 * callback has run, nothing of libmcp is left on the loop: uv_loop_close
 * returns 0.
 *
 * Usage: examples_embed [URL]
 * (default: the host's own endpoint; with a URL, its server's echo tool is
 * called)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <mcp/mcp.h>

typedef struct host {
    uv_loop_t loop;
    uv_timer_t tick;
    int ticks;
    mcp_server *server;
    mcp_http_endpoint *endpoint;
    mcp_client *client;
    const char *url; /* the server the client talks to; NULL: our own */
    char *answer;    /* the server's answer, once it came */
    int pending;     /* endpoint and client still stopping */
    int stopping;
    int failed;
} host;

/* A tool of the host's own server, as any program would offer. */
static json_t *tool_ticks(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args;
    host *h = user;
    char text[64];
    snprintf(text, sizeof(text), "the host's timer ticked %d times", h->ticks);
    return mcp_text_result(text);
}

static void maybe_close_loop(host *h)
{
    if (h->pending == 0) {
        /* Ours is the last handle: once it is closed, uv_run returns. */
        uv_close((uv_handle_t *)&h->tick, NULL);
    }
}

static void endpoint_stopped(void *user, int status)
{
    host *h = user;
    printf("endpoint stopped: %s\n", mcp_strerror(status));
    mcp_http_endpoint_free(h->endpoint);
    h->endpoint = NULL;
    h->pending--;
    maybe_close_loop(h);
}

static void client_closed(void *user)
{
    host *h = user;
    printf("client closed\n");
    h->client = NULL; /* mcp_client_close freed it */
    h->pending--;
    maybe_close_loop(h);
}

/* The host's own condition to stop: called from its timer. */
static void stop_everything(host *h)
{
    if (h->stopping)
        return;
    h->stopping = 1;
    uv_timer_stop(&h->tick);
    h->pending = 2;
    /* Requests in flight on the endpoint may finish for a second. */
    mcp_http_endpoint_stop(h->endpoint, 1000, endpoint_stopped, h);
    mcp_client_close(h->client, client_closed, h);
}

static void on_tick(uv_timer_t *t)
{
    host *h = t->data;
    h->ticks++;
    if ((h->answer != NULL && h->ticks >= 3) || h->failed || h->ticks >= 300)
        stop_everything(h);
}

static void on_answer(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                      void *user)
{
    (void)c;
    host *h = user;
    if (status != MCP_OK) {
        fprintf(stderr, "tools/call failed: %s %s\n", mcp_strerror(status),
                err ? err->message : "");
        h->failed = 1;
        return;
    }
    const json_t *text =
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");
    h->answer = strdup(json_string_value(text) ? json_string_value(text) : "");
    printf("the server answered: %s\n", h->answer);
}

static void on_connected(mcp_client *c, int status, void *user)
{
    host *h = user;
    if (status != MCP_OK) {
        fprintf(stderr, "cannot connect: %s\n", mcp_strerror(status));
        h->failed = 1;
        return;
    }
    printf("connected to %s\n",
           json_string_value(json_object_get(mcp_client_server_info(c), "name")));
    json_t *params = h->url != NULL ? json_pack("{s:s, s:{s:s}}", "name", "echo", "arguments",
                                                "text", "hello from the host's loop")
                                    : json_pack("{s:s, s:{}}", "name", "ticks", "arguments");
    int rc = mcp_client_request_async(c, "tools/call", params, NULL, on_answer, h, NULL);
    if (rc != MCP_OK) {
        fprintf(stderr, "tools/call: %s\n", mcp_strerror(rc));
        h->failed = 1;
    }
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    printf("serving MCP at %s\n", url);
}

int main(int argc, char **argv)
{
    host h = {0};
    h.url = argc > 1 ? argv[1] : NULL;
    if (uv_loop_init(&h.loop) != 0)
        return 1;
    uv_timer_init(&h.loop, &h.tick);
    h.tick.data = &h;
    uv_timer_start(&h.tick, on_tick, 20, 20);

    h.server = mcp_server_new("embedded", "1.0.0");
    if (h.server == NULL ||
        mcp_server_add_tool(h.server, "ticks", "How often the host's timer ticked", NULL,
                            tool_ticks, &h) != MCP_OK)
        return 1;
    mcp_http_opts opts = {.size = sizeof(opts), .listen = "127.0.0.1:0", .on_listen = on_listen};
    int rc = mcp_http_endpoint_new(&h.loop, h.server, &opts, &h.endpoint);
    if (rc == MCP_OK)
        rc = mcp_client_new_on_loop(&h.loop, "embed-example", "1.0.0", &h.client);
    if (rc == MCP_OK) {
        /* Over HTTP to the given server, or to our own endpoint on this same loop. */
        const char *url = h.url != NULL ? h.url : mcp_http_endpoint_url(h.endpoint);
        rc = mcp_client_connect_http_async(h.client, url, NULL, 10000, on_connected, &h);
    }
    if (rc != MCP_OK) {
        fprintf(stderr, "cannot start: %s\n", mcp_strerror(rc));
        h.failed = 1;
        if (h.endpoint == NULL || h.client == NULL) {
            /* Nothing to stop politely: free what was made and let handles close. */
            mcp_http_endpoint_free(h.endpoint);
            mcp_client_free(h.client);
            uv_close((uv_handle_t *)&h.tick, NULL);
        }
    }

    uv_run(&h.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&h.loop);
    printf("timer ticks: %d; uv_loop_close: %d\n", h.ticks, closed);
    mcp_server_free(h.server);
    int ok = !h.failed && h.answer != NULL && closed == 0;
    free(h.answer);
    return ok ? 0 : 1;
}
