/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway embedded: a stdio MCP server offered over Streamable HTTP.
 *
 * The command after `--` is an MCP server that speaks over its stdin and
 * stdout. The program serves it over Streamable HTTP with the library's
 * gateway endpoint (mcp/gateway.h) on a libuv loop of its own: the gateway
 * starts the command as a child process for each session (and a few for
 * requests of revision 2026-07-28), forwards every message, and stops each
 * child when its session ends. Its log lines go to stderr.
 *
 * SIGTERM or SIGINT stops it: requests in flight may finish for five seconds
 * (a second signal cuts that short), every child is stopped and reaped, and
 * the program exits 0 once nothing is left on its loop.
 *
 * Usage: examples_gateway [HOST:PORT] -- COMMAND [ARG]...
 * (default address 127.0.0.1:8080), for instance
 *   examples_gateway 127.0.0.1:8080 -- mcp-everything --stdio
 *   mcp http://127.0.0.1:8080/mcp tools call echo text=hello
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include <mcp/gateway.h>
#include <mcp/mcp.h>

enum { DRAIN_MS = 5000 };

typedef struct gateway {
    uv_loop_t loop;
    uv_signal_t sigterm, sigint;
    mcp_http_endpoint *endpoint;
    int signals;
    int status; /* how the stop ended */
} gateway;

static void stopped(void *user, int status)
{
    gateway *g = user;
    g->status = status;
    /* Freeing the endpoint from inside its done is allowed; with the signal
     * handles closed, nothing is left to keep the loop running. */
    mcp_http_endpoint_free(g->endpoint);
    g->endpoint = NULL;
    uv_close((uv_handle_t *)&g->sigterm, NULL);
    uv_close((uv_handle_t *)&g->sigint, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
    gateway *g = s->data;
    fprintf(stderr, "gateway: %s, stopping\n", strsignal(signum));
    /* The first signal drains; a second stops at once: a later stop only brings
     * the deadline forward (MCP_ESTATE), and its done is not called again. */
    mcp_http_endpoint_stop(g->endpoint, g->signals++ == 0 ? DRAIN_MS : 0, stopped, g);
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, "gateway: listening on %s\n", url);
}

static void on_log(void *user, mcp_log_level level, const char *line)
{
    (void)user, (void)level;
    fprintf(stderr, "gateway: %s\n", line);
}

int main(int argc, char **argv)
{
    /* [HOST:PORT] -- COMMAND [ARG]... */
    const char *listen = "127.0.0.1:8080";
    int dashes = argc > 1 && strcmp(argv[1], "--") == 0 ? 1 : 2;
    if (dashes == 2 && argc > 1)
        listen = argv[1];
    if (dashes >= argc || strcmp(argv[dashes], "--") != 0 || dashes + 1 >= argc) {
        fprintf(stderr, "usage: examples_gateway [HOST:PORT] -- COMMAND [ARG]...\n");
        return 2;
    }

    gateway g = {0};
    int rc = uv_loop_init(&g.loop);
    if (rc != 0) {
        fprintf(stderr, "gateway: uv_loop_init: %s\n", uv_strerror(rc));
        return 1;
    }
    /* The signal handlers come first: the endpoint says it listens from inside
     * mcp_gateway_http_new, and a signal sent right then must not kill us. They
     * only run inside uv_run, once g.endpoint is set. (Neither call can fail on a
     * loop that initialized, for these two signals.) */
    uv_signal_init(&g.loop, &g.sigterm);
    uv_signal_init(&g.loop, &g.sigint);
    g.sigterm.data = g.sigint.data = &g;
    uv_signal_start(&g.sigterm, on_signal, SIGTERM);
    uv_signal_start(&g.sigint, on_signal, SIGINT);

    mcp_gateway_opts gw = {.size = sizeof(gw),
                           .argv = (const char *const *)(argv + dashes + 1),
                           .log_level = MCP_LOG_INFO,
                           .log = on_log};
    mcp_http_opts http = {.size = sizeof(http), .listen = listen, .on_listen = on_listen};
    rc = mcp_gateway_http_new(&g.loop, &gw, &http, &g.endpoint);
    if (rc != MCP_OK) {
        fprintf(stderr, "gateway: cannot serve on %s: %s\n", listen, mcp_strerror(rc));
        /* Nothing to stop: what the endpoint made closes by itself as the loop runs. */
        uv_close((uv_handle_t *)&g.sigterm, NULL);
        uv_close((uv_handle_t *)&g.sigint, NULL);
        g.status = rc;
    }

    uv_run(&g.loop, UV_RUN_DEFAULT);
    rc = uv_loop_close(&g.loop);
    if (rc != 0)
        fprintf(stderr, "gateway: uv_loop_close: %s\n", uv_strerror(rc));
    else if (g.status == MCP_OK)
        fprintf(stderr, "gateway: stopped\n");
    return rc == 0 && g.status == MCP_OK ? 0 : 1;
}
