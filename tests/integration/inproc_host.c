/* SPDX-License-Identifier: MIT */
/*
 * A server served in the test process (inproc_host.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "inproc_host.h"

static void *run_loop(void *arg)
{
    ih_host *h = arg;
    uv_run(&h->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void on_stop(uv_async_t *a)
{
    ih_host *h = a->data;
    mcp_http_endpoint_free(h->ep);
    uv_close((uv_handle_t *)a, NULL);
}

void ih_start(ih_host *h, mcp_server *srv)
{
    memset(h, 0, sizeof(*h));
    assert_non_null(srv);
    h->srv = srv;
    assert_int_equal(uv_loop_init(&h->loop), 0);
    mcp_http_opts opts = {.size = sizeof(opts), .listen = "127.0.0.1:0"};
    assert_int_equal(mcp_http_endpoint_new(&h->loop, h->srv, &opts, &h->ep), MCP_OK);
    h->port = mcp_http_endpoint_port(h->ep);
    snprintf(h->url, sizeof(h->url), "http://127.0.0.1:%d/mcp", h->port);
    assert_int_equal(uv_async_init(&h->loop, &h->stop, on_stop), 0);
    h->stop.data = h;
    assert_int_equal(pthread_create(&h->thread, NULL, run_loop, h), 0);
}

void ih_stop(ih_host *h)
{
    uv_async_send(&h->stop);
    pthread_join(h->thread, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&h->loop), 0);
    mcp_server_free(h->srv);
    h->srv = NULL;
}
