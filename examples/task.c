/* SPDX-License-Identifier: MIT */
/*
 * A long tool call run as a task (the extension io.modelcontextprotocol/tasks of
 * revision 2026-07-28).
 *
 * The server's tool slow_sum adds the whole numbers 1 to n, one a step, a tenth of a
 * second each. It is marked MCP_TOOL_TASK_REQUIRED: a client that declared the extension
 * is answered at once with the id of a task, the handler works on (on a worker of the
 * tasks' own) and the client fetches the result with tasks/get; a call from a client that
 * did not declare it is refused (-32021). The handler waits with mcp_ctx_sleep(), which
 * wakes as soon as the task is cancelled (tasks/cancel), and then stops at that step.
 *
 * By default the program serves over Streamable HTTP on 127.0.0.1 (a free port) from a
 * libuv loop of its own, and a client on that same loop calls slow_sum as a task
 * (MCP_CALL_TASKS): it prints the task's id as soon as the server has made it, and the
 * sum once it has followed the task to its end (the client polls tasks/get by itself);
 * then everything stops. With --serve it only serves, until SIGINT or SIGTERM, and any
 * client of the extension may call it, e.g. the mcp program:
 *   mcp http://127.0.0.1:8080/mcp tools call --task slow_sum n=20
 *
 * Usage: examples_task [N]
 *        examples_task --serve [HOST:PORT]
 * (N: how many numbers to add, 1 to 1000, default 10; HOST:PORT default 127.0.0.1:8080)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <mcp/mcp.h>

#define STEP_MS 100

/* ---- The server ---- */

static json_t *slow_sum(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    json_int_t n = json_integer_value(json_object_get(args, "n")); /* the schema checked it */
    json_int_t sum = 0;
    for (json_int_t i = 1; i <= n; i++) {
        if (mcp_ctx_sleep(ctx, STEP_MS) != MCP_OK) {
            /* Cancelled: the task ends "cancelled" whatever we return. */
            fprintf(stderr, "slow_sum: task %s cancelled at step %lld of %lld\n",
                    mcp_ctx_task_id(ctx), (long long)i, (long long)n);
            mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "cancelled at step %lld", (long long)i);
            return NULL;
        }
        sum += i;
    }
    char text[128];
    snprintf(text, sizeof(text), "the sum of 1 to %lld is %lld", (long long)n, (long long)sum);
    return mcp_text_result(text);
}

static mcp_server *server_new(void)
{
    mcp_server *srv = mcp_server_new("task-example", "1.0.0");
    if (srv == NULL)
        return NULL;
    /* Clients are told to poll every 100 ms; a task is kept 10 minutes. */
    mcp_tasks_opts tasks = {.size = sizeof(tasks), .ttl_ms = 600000, .poll_interval_ms = 100};
    mcp_tool_def tool = {
        .size = sizeof(tool),
        .name = "slow_sum",
        .description = "Adds 1 to n, a tenth of a second a number; runs as a task",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\","
                        "\"minimum\":1,\"maximum\":1000}},\"required\":[\"n\"]}",
        .fn = slow_sum,
        .flags = MCP_TOOL_TASK_REQUIRED,
    };
    int rc = mcp_server_set_tasks(srv, &tasks);
    if (rc == MCP_OK)
        rc = mcp_server_add_tool_def(srv, &tool);
    if (rc != MCP_OK) {
        fprintf(stderr, "examples_task: cannot make the server: %s\n", mcp_strerror(rc));
        mcp_server_free(srv);
        return NULL;
    }
    return srv;
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, "examples_task: listening on %s\n", url);
    fflush(stderr);
}

/* ---- The server and a client on one loop ---- */

typedef struct self {
    uv_loop_t loop;
    mcp_http_endpoint *endpoint;
    mcp_client *client;
    long long n;
    int stopping;
    int ok; /* the task's result came, and it is no tool error */
} self;

static void endpoint_stopped(void *user, int status)
{
    (void)status;
    self *s = user;
    mcp_http_endpoint_free(s->endpoint);
    s->endpoint = NULL;
}

/* Ends the client and the endpoint; uv_run returns once both are gone. */
static void stop(self *s)
{
    if (s->stopping)
        return;
    s->stopping = 1;
    if (s->client != NULL)
        mcp_client_close(s->client, NULL, NULL);
    s->client = NULL;
    if (s->endpoint != NULL &&
        mcp_http_endpoint_stop(s->endpoint, 1000, endpoint_stopped, s) != MCP_OK) {
        mcp_http_endpoint_free(s->endpoint);
        s->endpoint = NULL;
    }
}

/* The server made a task of the call: the client now polls it. */
static void on_task(const char *task_id, void *user)
{
    (void)user;
    printf("task created: %s\n", task_id);
    fflush(stdout);
}

/* The task has ended: this is the tool's result, as if it had come at once. */
static void on_result(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                      void *user)
{
    (void)c;
    self *s = user;
    const json_t *text =
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");
    if (status != MCP_OK) {
        fprintf(stderr, "examples_task: slow_sum failed: %s %s\n", mcp_strerror(status),
                err != NULL ? err->message : "");
    } else if (json_is_true(json_object_get(result, "isError"))) {
        fprintf(stderr, "examples_task: slow_sum failed: %s\n", json_string_value(text));
    } else {
        printf("result: %s\n", json_string_value(text));
        s->ok = 1;
    }
    stop(s);
}

static void on_connected(mcp_client *c, int status, void *user)
{
    self *s = user;
    if (status != MCP_OK) {
        fprintf(stderr, "examples_task: cannot connect: %s\n", mcp_strerror(status));
        stop(s);
        return;
    }
    json_t *params =
        json_pack("{s:s, s:{s:I}}", "name", "slow_sum", "arguments", "n", (json_int_t)s->n);
    /* MCP_CALL_TASKS declares the extension for this call: the server may make it a task. */
    mcp_call_opts opts = {.size = sizeof(opts), .flags = MCP_CALL_TASKS, .on_task = on_task};
    int rc = mcp_client_request_async(c, "tools/call", params, &opts, on_result, s, NULL);
    if (rc != MCP_OK) {
        fprintf(stderr, "examples_task: tools/call: %s\n", mcp_strerror(rc));
        stop(s);
    }
}

static int run_self(mcp_server *srv, long long n)
{
    self s = {.n = n};
    int rc = uv_loop_init(&s.loop);
    if (rc != 0) {
        fprintf(stderr, "examples_task: uv_loop_init: %s\n", uv_strerror(rc));
        return 1;
    }
    mcp_http_opts opts = {.size = sizeof(opts), .listen = "127.0.0.1:0", .on_listen = on_listen};
    rc = mcp_http_endpoint_new(&s.loop, srv, &opts, &s.endpoint);
    if (rc == MCP_OK)
        rc = mcp_client_new_on_loop(&s.loop, "task-example-client", "1.0.0", &s.client);
    /* Tasks are of revision 2026-07-28: speak it, or fail the connect. */
    if (rc == MCP_OK)
        rc = mcp_client_set_protocol(s.client, MCP_PROTOCOL_2026_07_28);
    if (rc == MCP_OK)
        rc = mcp_client_connect_http_async(s.client, mcp_http_endpoint_url(s.endpoint), NULL, 10000,
                                           on_connected, &s);
    if (rc != MCP_OK) {
        fprintf(stderr, "examples_task: cannot start: %s\n", mcp_strerror(rc));
        stop(&s);
    }
    uv_run(&s.loop, UV_RUN_DEFAULT);
    rc = uv_loop_close(&s.loop);
    if (rc != 0)
        fprintf(stderr, "examples_task: uv_loop_close: %s\n", uv_strerror(rc));
    return s.ok && rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int serve = argc > 1 && strcmp(argv[1], "--serve") == 0;
    long long n = 10;
    if (argc > 2 + serve || (argc > 1 && argv[1][0] == '-' && !serve)) {
        fprintf(stderr, "Usage: examples_task [N]\n       examples_task --serve [HOST:PORT]\n");
        return 2;
    }
    if (!serve && argc > 1) {
        char *end;
        n = strtoll(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0') {
            fprintf(stderr, "examples_task: N must be a whole number, not '%s'\n", argv[1]);
            return 2;
        }
    }
    mcp_server *srv = server_new();
    if (srv == NULL)
        return 1;
    int status;
    if (serve) {
        mcp_http_opts opts = {.size = sizeof(opts),
                              .listen = argc > 2 ? argv[2] : "127.0.0.1:8080",
                              .on_listen = on_listen};
        int rc = mcp_serve_http(srv, &opts); /* until SIGINT or SIGTERM */
        if (rc != MCP_OK)
            fprintf(stderr, "examples_task: %s\n", mcp_strerror(rc));
        status = rc == MCP_OK ? 0 : 1;
    } else {
        status = run_self(srv, n);
    }
    mcp_server_free(srv);
    return status;
}
