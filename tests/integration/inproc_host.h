/* SPDX-License-Identifier: MIT */
/*
 * A server of the test's own, built in the test process, served over Streamable HTTP
 * on 127.0.0.1 (a free port) by a loop on a thread of its own, for tests that drive it
 * with our client or raw HTTP and look at the server's side directly.
 */
#ifndef MCP_TESTS_INPROC_HOST_H
#define MCP_TESTS_INPROC_HOST_H

#include <pthread.h>
#include <uv.h>

#include <mcp/mcp.h>

typedef struct ih_host {
    uv_loop_t loop;
    uv_async_t stop;
    pthread_t thread;
    mcp_server *srv;
    mcp_http_endpoint *ep;
    int port;
    char url[128]; /* http://127.0.0.1:PORT/mcp */
} ih_host;

/* Serves srv (the host's from now on: ih_stop frees it); fails the test when it cannot. */
void ih_start(ih_host *h, mcp_server *srv);
/* Stops the endpoint, joins the loop's thread and frees the server. */
void ih_stop(ih_host *h);

#endif
