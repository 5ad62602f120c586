/* SPDX-License-Identifier: MIT */
/*
 * The HTTP ceiling for the benchmarks: our HTTP layer (src/http) with no MCP on
 * top. Every request gets the same small JSON answer, about the size of a
 * tools/call echo result, so a wrk run against it shows what the MCP path could
 * reach at best on this machine: parsing, the loop and the socket, nothing else.
 *
 *   http_ceiling [PORT]     listens on 127.0.0.1:PORT (0 or absent: a free port)
 *
 * Prints "http_ceiling: listening on http://127.0.0.1:PORT/" on stderr, like
 * mcp-everything, and stops cleanly on SIGINT or SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":"
                           "\"text\",\"text\":\"hello\"}]}}";

typedef struct ceiling {
    uv_loop_t *loop;
    mcp__http_server *srv;
    uv_signal_t sigint;
    uv_signal_t sigterm;
} ceiling;

static void on_request(void *user, mcp__http_req *req)
{
    (void)user;
    static const char *const headers[] = {"Content-Type", "application/json", NULL};
    /* A refused answer (connection already gone, out of memory) finishes req too,
     * so there is nothing left to clean up whatever it returns. */
    (void)mcp__http_respond(req, 200, headers, body, sizeof body - 1);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    ceiling *c = sig->data;
    (void)signum;
    if (c->srv) {
        mcp__http_server_stop(c->srv, NULL, NULL);
        c->srv = NULL;
    }
    uv_close((uv_handle_t *)&c->sigint, NULL);
    uv_close((uv_handle_t *)&c->sigterm, NULL);
}

int main(int argc, char **argv)
{
    ceiling c = {.loop = uv_default_loop()};
    int port = 0;
    if (argc > 1) {
        char *end = NULL;
        long p = strtol(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0' || p < 0 || p > 65535) {
            fprintf(stderr, "usage: http_ceiling [PORT]\n");
            return 2;
        }
        port = (int)p;
    }
    mcp__http_opts opts = {.host = "127.0.0.1", .port = port, .on_request = on_request};
    int rc = mcp__http_server_start(c.loop, &opts, &c.srv);
    if (rc != MCP_OK) {
        fprintf(stderr, "http_ceiling: cannot listen: %s\n", mcp_strerror(rc));
        uv_run(c.loop, UV_RUN_DEFAULT);
        return 1;
    }
    uv_signal_init(c.loop, &c.sigint);
    uv_signal_init(c.loop, &c.sigterm);
    c.sigint.data = &c;
    c.sigterm.data = &c;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    fprintf(stderr, "http_ceiling: listening on http://127.0.0.1:%d/\n",
            mcp__http_server_port(c.srv));
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);
    return 0;
}
