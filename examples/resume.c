/* SPDX-License-Identifier: MIT */
/*
 * Resumption seen from the client: a call whose SSE stream the server closes
 * midway still brings every notification and its result, once each, in order.
 *
 * The server's tool "work" reports its progress in six steps, and after the
 * third closes the stream that carries its messages (SEP-1699 polling:
 * mcp_ctx_close_sse_stream with a short retry). It goes on working; what it
 * sends meanwhile is kept in the endpoint's event store. The client (Streamable
 * HTTP, revision 2025-11-25) needs no code for this: it reconnects with GET and
 * Last-Event-ID after the server's retry interval, gets the events it missed,
 * then the rest live, then the result. Here the program also takes the
 * optional schedule_reconnect hook, only to print when that happens: it then
 * starts the reconnection itself, after the same delay the library would wait.
 *
 * One program on one libuv loop: the server (a free port on 127.0.0.1) and the
 * client. It exits 0 when all six notifications and the result arrived, in
 * order and none twice, after at least one resumption.
 *
 * Usage: examples_resume
 */
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include <mcp/mcp.h>

#define STEPS 6
#define CLOSE_AFTER 3

typedef struct app {
    uv_loop_t loop;
    uv_timer_t resume; /* waits out the delay of a reconnection */
    uint64_t reconnect_id;
    mcp_server *server;
    mcp_http_endpoint *endpoint;
    mcp_client *client;
    int last;     /* the last progress received */
    int received; /* progress notifications received */
    int resumes;
    int in_order;
    int done; /* the result arrived and was right */
} app;

/* ---- The server's side: a tool on a worker thread ---- */

static json_t *tool_work(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    for (int step = 1; step <= STEPS; step++) {
        if (mcp_ctx_sleep(ctx, 40) != MCP_OK) /* the work; it wakes if cancelled */
            return NULL;
        char message[32];
        snprintf(message, sizeof(message), "step %d", step);
        int rc = mcp_ctx_progress(ctx, step, STEPS, message);
        if (rc == MCP_OK && step == CLOSE_AFTER)
            rc = mcp_ctx_close_sse_stream(ctx, 100); /* come back in 100 ms */
        if (rc != MCP_OK)
            return mcp_tool_error("step %d: %s", step, mcp_strerror(rc));
    }
    return mcp_text_result("all six steps done");
}

/* ---- The client's side: on the loop thread ---- */

static void on_progress(double progress, double total, const char *message, void *user)
{
    app *a = user;
    printf("progress %g/%g: %s\n", progress, total, message != NULL ? message : "");
    a->in_order &= progress == a->last + 1;
    a->last = (int)progress;
    a->received++;
}

static void on_resume_timer(uv_timer_t *t)
{
    app *a = t->data;
    printf("resuming: GET with Last-Event-ID\n");
    int rc = mcp_client_reconnect(a->client, a->reconnect_id);
    if (rc != MCP_OK)
        fprintf(stderr, "reconnect: %s\n", mcp_strerror(rc));
}

/* A stream broke: without this hook the client would wait delay_ms and resume by itself. */
static void on_reconnect(mcp_client *c, uint64_t reconnect_id, int delay_ms, int attempt,
                         void *user)
{
    app *a = user;
    if (uv_is_active((uv_handle_t *)&a->resume)) /* one still waiting: let it go now */
        mcp_client_reconnect(c, a->reconnect_id);
    printf("the stream closed after progress %d; resuming in %d ms (attempt %d)\n", a->last,
           delay_ms, attempt);
    a->resumes++;
    a->reconnect_id = reconnect_id;
    uv_timer_start(&a->resume, on_resume_timer, (uint64_t)delay_ms, 0);
}

static void endpoint_stopped(void *user, int status)
{
    app *a = user;
    (void)status;
    mcp_http_endpoint_free(a->endpoint);
    a->endpoint = NULL;
    uv_close((uv_handle_t *)&a->resume, NULL); /* ours is the last handle: uv_run returns */
}

static void client_closed(void *user)
{
    app *a = user;
    a->client = NULL;
    mcp_http_stats stats = {.size = sizeof(stats)};
    if (mcp_http_endpoint_stats_get(a->endpoint, &stats) == MCP_OK)
        printf("the endpoint took %llu resume(s) and replayed %llu event(s)\n", stats.resumes,
               stats.replayed_events);
    mcp_http_endpoint_stop(a->endpoint, 1000, endpoint_stopped, a);
}

/* A reconnection still waiting would outlive the client: drop it. */
static void close_client(app *a, mcp_client *c)
{
    uv_timer_stop(&a->resume);
    mcp_client_close(c, client_closed, a);
}

static void on_result(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                      void *user)
{
    app *a = user;
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    if (status == MCP_OK && text != NULL) {
        printf("result: %s\n", text);
        a->done = strcmp(text, "all six steps done") == 0;
    } else {
        fprintf(stderr, "tools/call work: %s %s\n", mcp_strerror(status),
                err != NULL ? err->message : "");
    }
    close_client(a, c);
}

static void on_connected(mcp_client *c, int status, void *user)
{
    app *a = user;
    int rc = status;
    if (rc == MCP_OK) {
        printf("connected, speaking %s\n", mcp_client_protocol_version(c));
        mcp_call_opts opts = {
            .size = sizeof(opts), .timeout_ms = 10000, .on_progress = on_progress, .user = a};
        rc = mcp_client_request_async(c, "tools/call",
                                      json_pack("{s:s, s:{}}", "name", "work", "arguments"), &opts,
                                      on_result, a, NULL);
    }
    if (rc != MCP_OK) {
        fprintf(stderr, "cannot call the tool: %s\n", mcp_strerror(rc));
        close_client(a, c);
    }
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "Usage: examples_resume\n");
        return 2;
    }
    app a = {.in_order = 1};
    if (uv_loop_init(&a.loop) != 0)
        return 1;
    uv_timer_init(&a.loop, &a.resume);
    a.resume.data = &a;

    a.server = mcp_server_new("resume-example", "1.0.0");
    int rc = a.server != NULL
                 ? mcp_server_add_tool(a.server, "work", "Six steps of work", NULL, tool_work, NULL)
                 : MCP_ENOMEM;
    mcp_http_opts opts = {.size = sizeof(opts), .listen = "127.0.0.1:0"};
    if (rc == MCP_OK)
        rc = mcp_http_endpoint_new(&a.loop, a.server, &opts, &a.endpoint);
    if (rc == MCP_OK)
        rc = mcp_client_new_on_loop(&a.loop, "resume-example", "1.0.0", &a.client);
    if (rc == MCP_OK)
        rc = mcp_client_set_protocol(a.client, MCP_PROTOCOL_2025_11_25);
    mcp_http_client_opts copts = {
        .size = sizeof(copts), .schedule_reconnect = on_reconnect, .schedule_user = &a};
    if (rc == MCP_OK)
        rc = mcp_client_connect_http_async(a.client, mcp_http_endpoint_url(a.endpoint), &copts,
                                           10000, on_connected, &a);
    if (rc != MCP_OK) {
        fprintf(stderr, "cannot start: %s\n", mcp_strerror(rc));
        if (a.client != NULL)
            mcp_client_close(a.client, client_closed, &a);
        else if (a.endpoint != NULL)
            mcp_http_endpoint_stop(a.endpoint, 0, endpoint_stopped, &a);
        else
            uv_close((uv_handle_t *)&a.resume, NULL);
    }

    uv_run(&a.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&a.loop);
    printf("notifications: %d of %d, %s; resumed %d time(s); uv_loop_close: %d\n", a.received,
           STEPS, a.in_order ? "in order, none twice" : "OUT OF ORDER OR REPEATED", a.resumes,
           closed);
    mcp_server_free(a.server);
    int ok = rc == MCP_OK && a.done && a.in_order && a.received == STEPS && a.resumes > 0;
    return ok && closed == 0 ? 0 : 1;
}
