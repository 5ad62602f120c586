/* SPDX-License-Identifier: MIT */
/*
 * The stdio server transport: one session over a pair of file descriptors
 * (stdin and stdout), on the caller's loop (mcp_stdio_endpoint) or on a loop of
 * its own (mcp_serve_fds, mcp_serve_stdio).
 *
 * End of input is the client's way to shut the server down (the spec's stdio
 * shutdown). Requests already running still get their answers, but requests
 * to the client fail at once since nobody can answer them any more, and
 * subscriptions end with their graceful result; then the endpoint flushes and
 * ends. A stop drains the same way, with a deadline after
 * which what still runs is cancelled.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/rpc.h"
#include "server/answerer.h"
#include "stdio/lines.h"
#include "endpoint/serve.h"

#include <mcp/server.h>

enum { SE_RUNNING, SE_ENDING, SE_DONE };

/* How long the output may take to flush once the endpoint ends, when no drain
 * deadline is left to bound it. */
#define STDIO_FLUSH_MS 5000

struct mcp_stdio_endpoint {
    uv_loop_t *loop;
    mcp__answerer *ans;
    mcp__asession *sess; /* NULL once closed */
    mcp__lstream ls;
    uv_timer_t drain_timer;
    int phase;
    int status;
    uint64_t deadline; /* loop time the drain ends at; UINT64_MAX: none */
    int ls_open, ans_open, timer_open;
    int free_when_done, in_done;
    mcp_endpoint_done_fn done;
    void *done_user;
};

typedef struct mcp_stdio_endpoint stdio_ep;

static void maybe_done(stdio_ep *ep)
{
    if (ep->phase != SE_ENDING || ep->ls_open || ep->ans_open || ep->timer_open)
        return;
    ep->phase = SE_DONE;
    ep->in_done = 1;
    if (ep->done != NULL)
        ep->done(ep->done_user, ep->status);
    ep->in_done = 0;
    if (ep->free_when_done)
        free(ep);
}

static void on_timer_closed(uv_handle_t *h)
{
    stdio_ep *ep = h->data;
    ep->timer_open = 0;
    maybe_done(ep);
}

/* The output could not be flushed in time (its reader does not read): drop it. */
static void on_flush_timeout(uv_timer_t *h)
{
    stdio_ep *ep = h->data;
    mcp__warn("stdout was not taken in time: dropping what is queued");
    mcp__lstream_abort(&ep->ls);
}

static void on_ans_closed(void *arg)
{
    stdio_ep *ep = arg;
    ep->ans = NULL;
    ep->ans_open = 0;
    /* Every answer is written: the output may close now, once it is flushed, which
     * a reader that does not read could hold for ever: the rest of the deadline
     * (a few seconds without one) bounds it. */
    uint64_t now = uv_now(ep->loop);
    uint64_t left = ep->deadline == UINT64_MAX ? STDIO_FLUSH_MS
                    : ep->deadline > now       ? ep->deadline - now
                                               : 0;
    uv_timer_start(&ep->drain_timer, on_flush_timeout, left, 0);
    mcp__lstream_close(&ep->ls);
}

/* Closes the session (what still runs is cancelled; its answers are still written)
 * and waits for the answerer to let go of the loop. */
static void close_session(stdio_ep *ep)
{
    if (ep->sess == NULL)
        return;
    mcp__asession *s = ep->sess;
    ep->sess = NULL;
    ep->ans->ops->close(s);
    ep->ans->ops->shutdown(ep->ans, on_ans_closed, ep);
}

static void on_drain_timer(uv_timer_t *h)
{
    close_session(h->data);
}

/* Ends the endpoint: requests in flight may finish for drain_ms (< 0: as long as
 * they take), then the session closes; at once when none is in flight. A later
 * call only ever brings the deadline forward. */
static void end(stdio_ep *ep, int drain_ms)
{
    uint64_t now = uv_now(ep->loop);
    int began = ep->phase == SE_RUNNING;
    if (began) {
        ep->phase = SE_ENDING;
        ep->deadline = UINT64_MAX;
    }
    if (ep->sess == NULL)
        return; /* closing already */
    /* Long-lived requests (subscriptions/listen) would hold the end for ever, or to the
     * deadline: they end now with their graceful result, which the client may still
     * read (the spec's stdio shutdown: the server exits promptly once its input ends). */
    if (began && ep->ans->ops->drain != NULL)
        ep->ans->ops->drain(ep->sess);
    if (drain_ms >= 0 && now + (uint64_t)drain_ms < ep->deadline) {
        ep->deadline = now + (uint64_t)drain_ms;
        uv_timer_start(&ep->drain_timer, on_drain_timer, (uint64_t)drain_ms, 0);
    }
    if (ep->ans->ops->inflight(ep->sess) == 0)
        uv_timer_start(&ep->drain_timer, on_drain_timer, 0, 0);
}

static int io_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    stdio_ep *ep = io;
    (void)stream;
    (void)flags;
    if (text == NULL)
        return MCP_OK; /* a cancelled request: nothing to write */
    return mcp__lstream_write(&ep->ls, text, len);
}

static void io_idle(void *io)
{
    stdio_ep *ep = io;
    if (ep->phase == SE_ENDING)
        end(ep, -1); /* nothing in flight any more: closes now */
}

static const mcp__session_io stdio_io = {.send = io_send, .idle = io_idle};

/* Ending: a new request is refused (a client that keeps sending must not keep the
 * endpoint alive); 1 when line was one and got its error. */
static int refuse_request(stdio_ep *ep, const char *line, size_t len)
{
    json_t *msg = json_loadb(line, len, 0, NULL);
    const json_t *id = json_object_get(msg, "id");
    int request = json_is_object(msg) && json_is_string(json_object_get(msg, "method")) &&
                  (json_is_string(id) || json_is_integer(id));
    if (request) {
        json_t *err = mcp__error_message(id, MCP_RPC_SERVER_ERROR,
                                         "Server shutting down: no new request is taken", NULL);
        char *text = err ? json_dumps(err, JSON_COMPACT) : NULL;
        if (text != NULL)
            (void)mcp__lstream_write(&ep->ls, text, strlen(text));
        free(text);
        json_decref(err);
    }
    json_decref(msg);
    return request;
}

static void on_line(void *user, char *line, size_t len)
{
    stdio_ep *ep = user;
    /* While ending, the client's answers to our requests and its notifications
     * (cancellation) still go in: the requests in flight may need them. */
    if (ep->sess != NULL && (ep->phase == SE_RUNNING || !refuse_request(ep, line, len)))
        ep->ans->ops->feed(ep->sess, line, len, MCP__STREAM_STANDALONE);
}

static void on_overflow(void *user, size_t seen)
{
    stdio_ep *ep = user;
    if (ep->sess != NULL)
        ep->ans->ops->reject_oversized(ep->sess, seen, MCP__STREAM_STANDALONE);
}

static void on_eof(void *user, int err)
{
    stdio_ep *ep = user;
    if (err != 0)
        mcp__warn("reading stdin failed: %s", uv_strerror(err));
    if (ep->sess == NULL || ep->phase != SE_RUNNING)
        return;
    ep->ans->ops->input_closed(ep->sess);
    end(ep, -1);
}

static void on_write_error(void *user, int err)
{
    stdio_ep *ep = user;
    mcp__warn("writing stdout failed: %s", uv_strerror(err));
    ep->status = MCP_EIO;
    end(ep, 0);
}

static void on_closed(void *user)
{
    stdio_ep *ep = user;
    ep->ls_open = 0;
    if (ep->timer_open && !uv_is_closing((uv_handle_t *)&ep->drain_timer))
        uv_close((uv_handle_t *)&ep->drain_timer, on_timer_closed);
    maybe_done(ep);
}

static const mcp__lstream_cbs lstream_cbs = {
    .on_line = on_line,
    .on_overflow = on_overflow,
    .on_eof = on_eof,
    .on_write_error = on_write_error,
    .on_closed = on_closed,
};

int mcp_stdio_endpoint_new(uv_loop_t *loop, mcp_server *srv, int in_fd, int out_fd,
                           mcp_endpoint_done_fn done, void *user, mcp_stdio_endpoint **out)
{
    if (out != NULL)
        *out = NULL;
    if (loop == NULL || srv == NULL || out == NULL || in_fd < 0 || out_fd < 0)
        return MCP_EINVAL;
    /* A vanished reader must give EPIPE, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    stdio_ep *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return MCP_ENOMEM;
    ep->loop = loop;
    ep->done = done;
    ep->done_user = user;
    ep->ans = mcp__server_answerer_new(srv, loop);
    if (ep->ans == NULL) {
        free(ep);
        return MCP_ENOMEM;
    }
    int rc = MCP_EIO;
    if (mcp__lstream_open(&ep->ls, loop, in_fd, out_fd, ep->ans->ops->max_message(ep->ans),
                          &lstream_cbs, ep) != MCP_OK)
        goto fail_ans;
    ep->sess = ep->ans->ops->open(ep->ans, &stdio_io, ep, NULL, 0);
    if (ep->sess == NULL) {
        rc = MCP_ENOMEM;
        goto fail_ls;
    }
    if (mcp__lstream_start(&ep->ls) != MCP_OK)
        goto fail_sess;
    uv_timer_init(loop, &ep->drain_timer);
    ep->drain_timer.data = ep;
    ep->ls_open = ep->ans_open = ep->timer_open = 1;
    *out = ep;
    return MCP_OK;

fail_sess:
    ep->ans->ops->close(ep->sess);
fail_ls:
    /* The lstream's handles close by themselves; its callbacks then find nothing
     * to do but this: ep must outlive them, so it is freed by on_closed. */
    ep->phase = SE_ENDING;
    ep->free_when_done = 1;
    ep->done = NULL;
    ep->ls_open = 1;
    ep->ans->ops->shutdown(ep->ans, NULL, NULL);
    ep->ans = NULL;
    mcp__lstream_close(&ep->ls);
    return rc;
fail_ans:
    ep->ans->ops->shutdown(ep->ans, NULL, NULL);
    free(ep);
    return rc;
}

int mcp_stdio_endpoint_stop(mcp_stdio_endpoint *ep, int drain_ms)
{
    if (ep == NULL)
        return MCP_EINVAL;
    int rc = ep->phase == SE_RUNNING ? MCP_OK : MCP_ESTATE;
    end(ep, drain_ms);
    return rc;
}

void mcp_stdio_endpoint_free(mcp_stdio_endpoint *ep)
{
    if (ep == NULL)
        return;
    if (ep->phase == SE_DONE) {
        if (ep->in_done)
            ep->free_when_done = 1;
        else
            free(ep);
        return;
    }
    ep->free_when_done = 1;
    end(ep, 0);
}

/* ---- mcp_serve_fds: a loop of its own, and the signals (serve.c) ---- */

/* What SIGTERM and SIGINT give requests in flight. */
#define STDIO_DRAIN_MS 10000

static void serve_stop(mcp__serve *s, int drain_ms)
{
    mcp_stdio_endpoint_stop(s->ep, drain_ms);
}

int mcp_serve_fds(mcp_server *srv, int in_fd, int out_fd)
{
    if (srv == NULL || in_fd < 0 || out_fd < 0)
        return MCP_EINVAL;
    mcp__serve s;
    if (mcp__serve_init(&s, STDIO_DRAIN_MS, serve_stop) != MCP_OK)
        return MCP_EIO;
    mcp_stdio_endpoint *ep = NULL;
    int rc = mcp_stdio_endpoint_new(&s.loop, srv, in_fd, out_fd, mcp__serve_done, &s, &ep);
    s.ep = ep;
    mcp__serve_run(&s);
    mcp_stdio_endpoint_free(ep);
    mcp__serve_close(&s);
    return rc != MCP_OK ? rc : s.status;
}

int mcp_serve_stdio(mcp_server *srv)
{
    return mcp_serve_fds(srv, 0, 1);
}
