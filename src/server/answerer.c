/* SPDX-License-Identifier: MIT */
/*
 * The server core as an answerer (see server/answerer.h): an mcp_server
 * attached to one loop (its runtime), and its sessions behind the seam the
 * transports use.
 */
#include <stdlib.h>

#include "server/server_int.h"

typedef struct server_answerer {
    mcp__answerer base; /* first: the transports hold a pointer to it */
    mcp__srt *rt;
    int shutting_down;
    void (*done)(void *arg);
    void *done_arg;
} server_answerer;

static mcp__session *S(mcp__asession *s)
{
    return (mcp__session *)s;
}

static const mcp__session *CS(const mcp__asession *s)
{
    return (const mcp__session *)s;
}

static mcp__asession *sa_open(mcp__answerer *a, const mcp__session_io *io, void *io_user,
                              const char *id, unsigned flags)
{
    server_answerer *sa = (server_answerer *)a;
    if (sa->shutting_down)
        return NULL;
    mcp__session *s = mcp__session_new(sa->rt, io, io_user, id);
    if (s != NULL && (flags & MCP__OPEN_STATELESS))
        mcp__session_set_stateless(s);
    return (mcp__asession *)s;
}

static void sa_feed(mcp__asession *s, const char *text, size_t len, uint64_t stream)
{
    mcp__session_feed(S(s), text, len, stream);
}

static void sa_feed_value(mcp__asession *s, json_t *value, uint64_t stream)
{
    mcp__session_feed_value(S(s), value, stream);
}

static void sa_set_principal(mcp__asession *s, mcp_principal *p)
{
    mcp__session *sess = S(s);
    mcp__principal_ref(p);
    mcp__principal_unref(sess->principal);
    sess->principal = p;
}

static int sa_tool_scopes(mcp__answerer *a, const char *tool, char *buf, size_t len)
{
    return mcp__tool_scopes(((server_answerer *)a)->rt->srv, tool, buf, len);
}

static void sa_reject_oversized(mcp__asession *s, size_t seen, uint64_t stream)
{
    mcp__session_reject_oversized(S(s), seen, stream);
}

static void sa_assume_initialized(mcp__asession *s, const mcp__revision *rev)
{
    mcp__session_assume_initialized(S(s), rev);
}

static void sa_input_closed(mcp__asession *s)
{
    if (!S(s)->closed)
        mcp__rpc_input_closed(S(s)->rpc);
}

static void sa_close(mcp__asession *s)
{
    mcp__session_close(S(s));
}

static const mcp__revision *sa_revision(const mcp__asession *s)
{
    return mcp__session_revision(CS(s));
}

static int sa_initialized(const mcp__asession *s)
{
    return CS(s)->initialized;
}

static size_t sa_inflight(const mcp__asession *s)
{
    return mcp__rpc_inflight(CS(s)->rpc);
}

static int sa_all_paused(const mcp__asession *s)
{
    return mcp__session_all_paused(CS(s));
}

static void sa_stream_ready(mcp__asession *s, uint64_t stream)
{
    mcp__session_stream_ready(S(s), stream);
}

static int sa_cancel_paused(mcp__asession *s, uint64_t stream)
{
    return mcp__session_cancel_paused(S(s), stream);
}

static size_t sa_max_message(const mcp__answerer *a)
{
    return ((const server_answerer *)a)->rt->srv->max_message;
}

static unsigned sa_eras(const mcp__answerer *a)
{
    return ((const server_answerer *)a)->rt->srv->eras;
}

static void sa_cancel_stream(mcp__asession *s, uint64_t stream)
{
    if (!S(s)->closed)
        mcp__session_cancel_stream(S(s), stream);
}

static void sa_drain(mcp__asession *s)
{
    if (!S(s)->closed)
        mcp__listen_end_all(S(s), 1);
}

static void sa_closed(void *arg)
{
    server_answerer *sa = arg;
    void (*done)(void *) = sa->done;
    void *done_arg = sa->done_arg;
    free(sa);
    if (done != NULL)
        done(done_arg);
}

/* The last session is gone (every handler has returned). */
static void sa_empty(void *arg)
{
    server_answerer *sa = arg;
    mcp__srt *rt = sa->rt;
    rt->empty_cb = NULL;
    rt->closed_cb = sa_closed;
    rt->closed_arg = sa;
    mcp__srt_close(rt);
}

static void sa_shutdown(mcp__answerer *a, void (*done)(void *arg), void *arg)
{
    server_answerer *sa = (server_answerer *)a;
    if (sa->shutting_down)
        return;
    sa->shutting_down = 1;
    sa->done = done;
    sa->done_arg = arg;
    sa->rt->empty_cb = sa_empty;
    sa->rt->empty_arg = sa;
    mcp__tasks_rt_close(sa->rt);
    if (!mcp__srt_busy(sa->rt))
        sa_empty(sa);
}

static json_t *sa_export_state(const mcp__asession *s)
{
    return mcp__session_export(CS(s));
}

static int sa_import_state(mcp__asession *s, const json_t *state)
{
    return S(s)->closed ? MCP_ESTATE : mcp__session_import(S(s), state);
}

static void sa_set_id_base(mcp__asession *s, json_int_t base)
{
    mcp__rpc_set_id_base(S(s)->rpc, base);
}

static void sa_set_fanout(mcp__answerer *a,
                          void (*fn)(void *user, const char *method, const json_t *params,
                                     const char *uri, int level, const char *session),
                          void *user)
{
    server_answerer *sa = (server_answerer *)a;
    sa->rt->fanout = fn;
    sa->rt->fanout_user = user;
}

static void sa_deliver(mcp__answerer *a, const char *method, const json_t *params, const char *uri,
                       int level, const char *session)
{
    mcp__broadcast_remote(((server_answerer *)a)->rt, method, params, uri, level, session);
}

static void sa_set_tasks(mcp__answerer *a, const mcp__task_link *link)
{
    mcp__tasks_set_link(((server_answerer *)a)->rt, link);
}

static void sa_stop_task_run(mcp__answerer *a, const char *run)
{
    mcp__tasks_stop_run(((server_answerer *)a)->rt->srv, run,
                        "the client cancelled the task (tasks/cancel, on another node)");
}

static const mcp__answerer_ops server_answerer_ops = {
    .open = sa_open,
    .feed = sa_feed,
    .feed_value = sa_feed_value,
    .set_principal = sa_set_principal,
    .tool_scopes = sa_tool_scopes,
    .reject_oversized = sa_reject_oversized,
    .assume_initialized = sa_assume_initialized,
    .input_closed = sa_input_closed,
    .close = sa_close,
    .revision = sa_revision,
    .initialized = sa_initialized,
    .inflight = sa_inflight,
    .all_paused = sa_all_paused,
    .stream_ready = sa_stream_ready,
    .cancel_paused = sa_cancel_paused,
    .max_message = sa_max_message,
    .eras = sa_eras,
    .cancel_stream = sa_cancel_stream,
    .drain = sa_drain,
    .shutdown = sa_shutdown,
    .export_state = sa_export_state,
    .import_state = sa_import_state,
    .set_id_base = sa_set_id_base,
    .set_fanout = sa_set_fanout,
    .deliver = sa_deliver,
    .set_tasks = sa_set_tasks,
    .stop_task_run = sa_stop_task_run,
};

mcp__answerer *mcp__server_answerer_new(struct mcp_server *srv, uv_loop_t *loop)
{
    server_answerer *sa = calloc(1, sizeof(*sa));
    if (sa == NULL)
        return NULL;
    sa->base.ops = &server_answerer_ops;
    sa->rt = mcp__srt_new(srv, loop);
    if (sa->rt == NULL) {
        free(sa);
        return NULL;
    }
    return &sa->base;
}
