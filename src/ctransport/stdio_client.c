/* SPDX-License-Identifier: MIT */
/*
 * The stdio client transport: the server is a child process, and each message
 * is one line on its stdin or stdout. Closing follows the spec's stdio
 * shutdown: close the child's stdin, wait, SIGTERM, wait, SIGKILL; the child is
 * always reaped.
 */
#include <signal.h>
#include <stdlib.h>

#include "ctransport/ctransport.h"
#include "stdio/lines.h"
#include "util/util.h"

#define MCP__CHILD_GRACE_MS 2000

typedef struct stdio_ctr {
    mcp__ctr base;
    mcp__lstream ls;
    int ls_open;
    uv_process_t proc;
    int proc_alive, proc_handle_open;
    uv_timer_t kill_timer;
    int kill_timer_open;
    int kill_stage;
    int grace_ms;
    int closing, lost, closed_reported;
} stdio_ctr;

static void lost(stdio_ctr *t, const char *why)
{
    if (t->lost)
        return;
    t->lost = 1;
    if (!t->closing)
        t->base.cbs->on_lost(t->base.user, MCP_ECLOSED, why);
}

/* Once closing began and every handle is closed: the end. */
static void maybe_closed(stdio_ctr *t)
{
    if (!t->closing || t->closed_reported || t->ls_open || t->proc_handle_open ||
        t->kill_timer_open)
        return;
    t->closed_reported = 1;
    const mcp__ctr_cbs *cbs = t->base.cbs;
    void *user = t->base.user;
    free(t);
    cbs->on_closed(user);
}

static void ls_on_line(void *user, char *line, size_t len)
{
    stdio_ctr *t = user;
    if (!t->lost && !t->closing)
        t->base.cbs->on_text(t->base.user, line, len);
}

static void ls_on_overflow(void *user, size_t seen)
{
    (void)user;
    mcp__warn("dropping a message from the server of at least %zu bytes (over the limit)", seen);
}

static void ls_on_dropped(void *user, const mcp__rpc_scan *scan, size_t seen)
{
    stdio_ctr *t = user;
    int response;
    long long id = mcp__rpc_scan_response_id(scan, &response);
    if (t->base.cbs->on_oversized != NULL && !t->lost && !t->closing)
        t->base.cbs->on_oversized(t->base.user, id, response, seen);
}

static void ls_on_eof(void *user, int err)
{
    stdio_ctr *t = user;
    if (err != 0)
        mcp__warn("reading from the server failed: %s", uv_strerror(err));
    lost(t, "the server closed its output");
    mcp__lstream_close(&t->ls);
}

static void ls_on_write_error(void *user, int err)
{
    stdio_ctr *t = user;
    mcp__warn("writing to the server failed: %s", uv_strerror(err));
    lost(t, "writing to the server failed");
    mcp__lstream_close(&t->ls);
}

static void ls_on_closed(void *user)
{
    stdio_ctr *t = user;
    t->ls_open = 0;
    maybe_closed(t);
}

static const mcp__lstream_cbs stdio_ls_cbs = {
    .on_line = ls_on_line,
    .on_overflow = ls_on_overflow,
    .on_dropped = ls_on_dropped,
    .on_eof = ls_on_eof,
    .on_write_error = ls_on_write_error,
    .on_closed = ls_on_closed,
};

static void proc_closed(uv_handle_t *h)
{
    stdio_ctr *t = h->data;
    t->proc_handle_open = 0;
    maybe_closed(t);
}

static void kill_timer_closed(uv_handle_t *h)
{
    stdio_ctr *t = h->data;
    t->kill_timer_open = 0;
    maybe_closed(t);
}

static void close_kill_timer(stdio_ctr *t)
{
    if (t->kill_timer_open && !uv_is_closing((uv_handle_t *)&t->kill_timer)) {
        uv_timer_stop(&t->kill_timer);
        uv_close((uv_handle_t *)&t->kill_timer, kill_timer_closed);
    }
}

static void on_child_exit(uv_process_t *p, int64_t status, int signum)
{
    stdio_ctr *t = p->data;
    mcp__debug("server process exited (status %lld, signal %d)", (long long)status, signum);
    t->proc_alive = 0;
    uv_close((uv_handle_t *)p, proc_closed);
    lost(t, "the server process exited");
    if (t->closing) {
        close_kill_timer(t);
        if (t->ls_open)
            mcp__lstream_close(&t->ls);
    }
}

static void on_kill_timer(uv_timer_t *timer)
{
    stdio_ctr *t = timer->data;
    if (!t->proc_alive)
        return;
    t->kill_stage++;
    int sig = t->kill_stage == 1 ? SIGTERM : SIGKILL;
    mcp__debug("server did not exit; sending signal %d", sig);
    uv_process_kill(&t->proc, sig);
    if (t->kill_stage == 1)
        uv_timer_start(&t->kill_timer, on_kill_timer, (uint64_t)t->grace_ms, 0);
}

static int stdio_send(mcp__ctr *base, const json_t *msg, const char *text, size_t len)
{
    stdio_ctr *t = (stdio_ctr *)base;
    (void)msg;
    if (!t->ls_open || t->lost || t->closing)
        return MCP_ECLOSED;
    if (text == NULL)
        return MCP_OK; /* a cancelled request: nothing to write */
    return mcp__lstream_write(&t->ls, text, len);
}

static void stdio_close(mcp__ctr *base)
{
    stdio_ctr *t = (stdio_ctr *)base;
    if (t->closing)
        return;
    t->closing = 1;
    /* Its stdin closes once what is queued is written; its stdout is still read (and
     * what comes dropped) until it exits, so that what it writes on its way out
     * does not fail on a closed pipe. */
    if (t->ls_open && t->proc_alive)
        mcp__lstream_close_output(&t->ls);
    else if (t->ls_open)
        mcp__lstream_close(&t->ls);
    if (t->proc_alive)
        uv_timer_start(&t->kill_timer, on_kill_timer, (uint64_t)t->grace_ms, 0);
    else
        close_kill_timer(t);
    maybe_closed(t);
}

static const mcp__ctr_ops stdio_ops = {
    .send = stdio_send,
    .close = stdio_close,
};

int mcp__stdio_ctr_new(uv_loop_t *loop, char *const argv[], size_t max_message,
                       const mcp__ctr_cbs *cbs, void *user, mcp__ctr **out)
{
    *out = NULL;
    stdio_ctr *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return MCP_ENOMEM;
    t->base.ops = &stdio_ops;
    t->base.cbs = cbs;
    t->base.user = user;
    t->base.loop = loop;
    t->grace_ms = MCP__CHILD_GRACE_MS;
    if (mcp__lstream_init_pipes(&t->ls, loop, max_message, &stdio_ls_cbs, t) != MCP_OK) {
        free(t);
        return MCP_EIO;
    }
    t->ls_open = 1;
    uv_timer_init(loop, &t->kill_timer);
    t->kill_timer.data = t;
    t->kill_timer_open = 1;
    *out = &t->base;

    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = &t->ls.hout.stream;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = &t->ls.hin.stream;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    uv_process_options_t opts = {0};
    opts.file = argv[0];
    opts.args = (char **)argv;
    opts.exit_cb = on_child_exit;
    opts.stdio_count = 3;
    opts.stdio = stdio;
    t->proc.data = t;
    int rc = uv_spawn(loop, &t->proc, &opts);
    t->proc_handle_open = 1; /* libuv wants the handle closed even when spawn failed */
    if (rc != 0) {
        mcp__error("cannot start %s: %s", argv[0], uv_strerror(rc));
        uv_close((uv_handle_t *)&t->proc, proc_closed);
        t->lost = 1;
        return MCP_EIO;
    }
    t->proc_alive = 1;
    if (mcp__lstream_start(&t->ls) != MCP_OK) {
        t->lost = 1;
        return MCP_EIO;
    }
    return MCP_OK;
}

void mcp__stdio_ctr_set_grace(mcp__ctr *base, int grace_ms)
{
    ((stdio_ctr *)base)->grace_ms = grace_ms > 0 ? grace_ms : MCP__CHILD_GRACE_MS;
}

int mcp__stdio_ctr_pid(const mcp__ctr *base)
{
    const stdio_ctr *t = (const stdio_ctr *)base;
    return t->proc_alive ? t->proc.pid : 0;
}
