/*
 * The stdio server transport: one session over stdin and stdout.
 *
 * End of input is the client's way to shut the server down (the spec's stdio
 * shutdown). Requests already running still get their answers, but requests
 * to the client fail at once since nobody can answer them any more; then the
 * server flushes and returns. SIGTERM and SIGINT cancel what runs and return.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"
#include "transport/lines.h"

typedef struct stdio_server {
    uv_loop_t loop;
    mcp__srt *rt;
    mcp__session *sess;
    mcp__lstream ls;
    uv_signal_t sigterm, sigint;
    int stopping;
    int result;
} stdio_server;

static void stop(stdio_server *st);

static int io_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    stdio_server *st = io;
    (void)stream;
    (void)flags;
    if (text == NULL)
        return MCP_OK; /* a cancelled request: nothing to write */
    return mcp__lstream_write(&st->ls, text, len);
}

static void io_idle(void *io)
{
    stdio_server *st = io;
    if (st->ls.eof)
        stop(st);
}

static const mcp__session_io stdio_io = {.send = io_send, .idle = io_idle};

static void on_line(void *user, char *line, size_t len)
{
    stdio_server *st = user;
    mcp__session_feed(st->sess, line, len, MCP__STREAM_STANDALONE);
}

static void on_overflow(void *user, size_t seen)
{
    stdio_server *st = user;
    mcp__session_reject_oversized(st->sess, seen, MCP__STREAM_STANDALONE);
}

static void on_eof(void *user, int err)
{
    stdio_server *st = user;
    if (err != 0)
        mcp__warn("reading stdin failed: %s", uv_strerror(err));
    if (st->sess == NULL || st->stopping)
        return;
    mcp__rpc_input_closed(st->sess->rpc);
    if (mcp__rpc_inflight(st->sess->rpc) == 0)
        stop(st);
}

static void on_write_error(void *user, int err)
{
    stdio_server *st = user;
    mcp__warn("writing stdout failed: %s", uv_strerror(err));
    st->result = MCP_EIO;
    stop(st);
}

static void on_closed(void *user)
{
    (void)user; /* the loop ends once every handle is closed */
}

static const mcp__lstream_cbs lstream_cbs = {
    .on_line = on_line,
    .on_overflow = on_overflow,
    .on_eof = on_eof,
    .on_write_error = on_write_error,
    .on_closed = on_closed,
};

/* The last session is gone (every handler has returned): close what is left. */
static void on_empty(void *arg)
{
    stdio_server *st = arg;
    st->sess = NULL;
    mcp__srt *rt = st->rt;
    st->rt = NULL;
    mcp__srt_close(rt);
    mcp__lstream_close(&st->ls);
}

static void stop(stdio_server *st)
{
    if (st->stopping)
        return;
    st->stopping = 1;
    uv_close((uv_handle_t *)&st->sigterm, NULL);
    uv_close((uv_handle_t *)&st->sigint, NULL);
    if (st->sess != NULL)
        mcp__session_close(st->sess); /* on_empty follows once handlers return */
}

static void on_signal(uv_signal_t *h, int signum)
{
    stdio_server *st = h->data;
    mcp__info("signal %d: shutting down", signum);
    stop(st);
}

int mcp_serve_fds(mcp_server *srv, int in_fd, int out_fd)
{
    if (srv == NULL || in_fd < 0 || out_fd < 0)
        return MCP_EINVAL;
    /* A vanished reader must give EPIPE, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    stdio_server *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return MCP_ENOMEM;
    if (uv_loop_init(&st->loop) != 0) {
        free(st);
        return MCP_EIO;
    }
    int rc = MCP_OK;
    st->rt = mcp__srt_new(srv, &st->loop);
    if (st->rt == NULL) {
        rc = MCP_ENOMEM;
        goto fail_loop;
    }
    st->rt->empty_cb = on_empty;
    st->rt->empty_arg = st;
    if (mcp__lstream_open(&st->ls, &st->loop, in_fd, out_fd, srv->max_message, &lstream_cbs, st) !=
        MCP_OK) {
        rc = MCP_EIO;
        goto fail_rt;
    }
    st->sess = mcp__session_new(st->rt, &stdio_io, st, NULL);
    if (st->sess == NULL) {
        rc = MCP_ENOMEM;
        goto fail_ls;
    }
    uv_signal_init(&st->loop, &st->sigterm);
    uv_signal_init(&st->loop, &st->sigint);
    st->sigterm.data = st->sigint.data = st;
    uv_signal_start(&st->sigterm, on_signal, SIGTERM);
    uv_signal_start(&st->sigint, on_signal, SIGINT);
    if (mcp__lstream_start(&st->ls) != MCP_OK) {
        st->result = MCP_EIO;
        stop(st);
    }
    uv_run(&st->loop, UV_RUN_DEFAULT);
    mcp__rpc_thread_cleanup();
    rc = st->result;
    if (uv_loop_close(&st->loop) != 0)
        mcp__warn("the stdio loop closed with handles still open");
    free(st);
    return rc;

fail_ls:
    mcp__lstream_close(&st->ls);
fail_rt:
    st->rt->empty_cb = NULL;
    mcp__srt_close(st->rt);
fail_loop:
    uv_run(&st->loop, UV_RUN_DEFAULT);
    uv_loop_close(&st->loop);
    free(st);
    return rc;
}

int mcp_serve_stdio(mcp_server *srv)
{
    return mcp_serve_fds(srv, 0, 1);
}
