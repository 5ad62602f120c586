/* SPDX-License-Identifier: MIT */
/*
 * A loop of its own and the signals, for mcp_serve_http and mcp_serve_fds.
 * See serve.h.
 */
#include <signal.h>

#include "protocol/rpc.h"
#include "endpoint/serve.h"

static void on_signal(uv_signal_t *h, int signum);

int mcp__serve_init(mcp__serve *s, int drain_ms, void (*stop)(mcp__serve *s, int drain_ms))
{
    *s = (mcp__serve){.drain_ms = drain_ms, .stop = stop};
    if (uv_loop_init(&s->loop) != 0)
        return MCP_EIO;
    /* Before the endpoint exists: it says where it listens as it starts, and a
     * signal sent on reading that must find our handlers, not the default
     * action, which kills. They run only inside mcp__serve_run. */
    uv_signal_init(&s->loop, &s->sigint);
    uv_signal_init(&s->loop, &s->sigterm);
    s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    return MCP_OK;
}

static void on_hangup(uv_signal_t *h, int signum)
{
    (void)signum;
    mcp__serve *s = h->data;
    if (s->signals == 0 && s->ep != NULL)
        s->hangup(s);
}

void mcp__serve_on_hangup(mcp__serve *s, void (*hangup)(mcp__serve *s))
{
    s->hangup = hangup;
    uv_signal_init(&s->loop, &s->sighup);
    s->sighup.data = s;
    uv_signal_start(&s->sighup, on_hangup, SIGHUP);
    s->hup_installed = 1;
}

void mcp__serve_done(void *user, int status)
{
    mcp__serve *s = user;
    s->status = status;
    /* Unreferenced, the handlers stay installed but let uv_run return. */
    uv_unref((uv_handle_t *)&s->sigint);
    uv_unref((uv_handle_t *)&s->sigterm);
    if (s->hup_installed)
        uv_unref((uv_handle_t *)&s->sighup);
}

static void on_signal(uv_signal_t *h, int signum)
{
    mcp__serve *s = h->data;
    /* Said once the stop has begun, so that whoever reads it can rely on it. */
    if (s->signals++ == 0) {
        s->stop(s, s->drain_ms);
        mcp__warn("signal %d: draining (requests in flight have %d ms)", signum, s->drain_ms);
    } else {
        s->stop(s, 0);
        mcp__warn("signal %d again: stopping now", signum);
    }
}

void mcp__serve_run(mcp__serve *s)
{
    if (s->ep != NULL)
        uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    if (s->hup_installed)
        uv_close((uv_handle_t *)&s->sighup, NULL);
    uv_run(&s->loop, UV_RUN_DEFAULT);
}

void mcp__serve_close(mcp__serve *s)
{
    mcp__rpc_thread_cleanup();
    if (uv_loop_close(&s->loop) != 0)
        mcp__warn("the loop closed with handles still open");
}
