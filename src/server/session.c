/* SPDX-License-Identifier: MIT */
/*
 * Server sessions: one per stdio connection or Streamable HTTP session. A
 * session owns its JSON-RPC engine and knows its negotiated revision, the
 * client's capabilities, its logging level and its subscriptions.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

static int sess_send(void *user, uint64_t stream, const json_t *msg, const char *text, size_t len,
                     unsigned flags)
{
    mcp__session *s = user;
    if (s->closed || s->io == NULL)
        return MCP_ECLOSED;
    if (s->modern && (flags & MCP__SEND_RESPONSE) && msg != NULL) {
        /* Revision 2026-07-28 gives some errors their own HTTP status (streamable-http.mdx:
         * Protocol Version Header, Server Validation, Backward Compatibility). */
        json_int_t code =
            json_integer_value(json_object_get(json_object_get(msg, "error"), "code"));
        if (code == MCP_RPC_HEADER_MISMATCH || code == MCP_RPC_UNSUPPORTED_VERSION ||
            code == MCP_RPC_MISSING_CAPABILITY)
            flags |= MCP__SEND_HTTP_400;
        else if (code == MCP_RPC_METHOD_NOT_FOUND)
            flags |= MCP__SEND_HTTP_404;
    }
    return s->io->send(s->io_user, stream, text, len, flags);
}

static void sess_on_request(void *user, mcp__inreq *req)
{
    mcp__span_begin(user, req);
    mcp__dispatch(user, req);
}

static void sess_on_answered(void *user, mcp__inreq *req, const json_t *msg)
{
    (void)user;
    mcp__span_end(req, msg);
}

static void sess_on_notification(void *user, const char *method, const json_t *params,
                                 uint64_t stream)
{
    mcp__session *s = user;
    (void)stream;
    if (strcmp(method, "notifications/initialized") == 0)
        return; /* nothing waits for it: requests are served once initialize is answered */
    mcp_server *srv = s->rt->srv;
    if (srv->notify_fn != NULL)
        srv->notify_fn(srv, s->id, method, params, srv->notify_user);
}

static void sess_on_cancelled(void *user, mcp__inreq *req, const char *reason)
{
    if (req->flags & MCP__REQ_LISTEN)
        mcp__listen_cancel(user, req);
    else if (req->data != NULL)
        mcp__ctx_cancel(req->data, reason != NULL
                                       ? reason
                                       : "the client cancelled the request (no reason given)");
}

static const mcp__rpc_cbs session_cbs = {
    .send = sess_send,
    .on_request = sess_on_request,
    .on_notification = sess_on_notification,
    .on_cancelled = sess_on_cancelled,
    .on_answered = sess_on_answered,
};

mcp__session *mcp__session_new(mcp__srt *rt, const mcp__session_io *io, void *io_user,
                               const char *id)
{
    mcp__session *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->rt = rt;
    s->io = io;
    s->io_user = io_user;
    s->refs = 1;
    s->level = MCP_LOG_DEBUG;
    s->rpc = mcp__rpc_new(rt->loop, &session_cbs, s);
    /* subscriptions is made on the first resources/subscribe: most sessions never do. */
    if (s->rpc == NULL || (id != NULL && !(s->id = mcp__strdup(id)))) {
        mcp__rpc_free(s->rpc);
        free(s);
        return NULL;
    }
    MCP__LIST_PUSH(rt->sessions, s);
    rt->nsessions++;
    return s;
}

void mcp__session_feed(mcp__session *s, const char *text, size_t len, uint64_t stream)
{
    if (!s->closed)
        mcp__rpc_feed(s->rpc, text, len, stream);
}

void mcp__session_feed_value(mcp__session *s, json_t *value, uint64_t stream)
{
    if (!s->closed)
        mcp__rpc_feed_value(s->rpc, value, stream);
}

void mcp__session_set_stateless(mcp__session *s)
{
    s->stateless = 1;
}

void mcp__session_assume_initialized(mcp__session *s, const mcp__revision *rev)
{
    s->rev = rev ? rev : mcp__revision_latest();
    if (s->client_caps == NULL)
        s->client_caps = json_object();
    if (s->client_info == NULL)
        s->client_info = json_object();
    s->initialized = 1;
    /* No initialize told this client listChanged (a stateless one could not get it). */
    s->declared = mcp__server_declared(s->rt->srv, s->stateless);
    mcp__rpc_allow_batch(s->rpc, s->rev->batches);
}

const mcp__revision *mcp__session_revision(const mcp__session *s)
{
    return s->rev;
}

void mcp__session_reject_oversized(mcp__session *s, size_t seen, uint64_t stream)
{
    if (!s->closed)
        mcp__rpc_reject_oversized(s->rpc, seen, s->rt->srv->max_message, stream);
}

/* ---- Sharing a session between nodes ---- */

json_t *mcp__session_export(const mcp__session *s)
{
    if (!s->initialized || s->stateless || s->rev == NULL)
        return NULL;
    return json_pack("{s:s, s:O, s:O, s:i, s:i, s:O?}", "rev", s->rev->version, "caps",
                     s->client_caps, "info", s->client_info, "level", (int)s->level, "declared",
                     (int)s->declared, "subs", s->subscriptions);
}

int mcp__session_import(mcp__session *s, const json_t *state)
{
    const char *version = NULL;
    json_t *caps = NULL, *info = NULL, *subs = NULL;
    int level = 0, declared = 0;
    /* caps and info may be left out of a change to an initialized session's state (they
     * never change after initialize). */
    if (json_unpack((json_t *)state, "{s:s, s?o, s?o, s:i, s:i, s?o}", "rev", &version, "caps",
                    &caps, "info", &info, "level", &level, "declared", &declared, "subs",
                    &subs) != 0)
        return MCP_EINVAL;
    const mcp__revision *rev = mcp__revision_find_legacy(version);
    if (rev == NULL || (caps != NULL && !json_is_object(caps)) ||
        (info != NULL && !json_is_object(info)) ||
        (!s->initialized && (caps == NULL || info == NULL)) ||
        (subs != NULL && !json_is_object(subs) && !json_is_null(subs)) ||
        mcp_log_level_name((mcp_log_level)level) == NULL || declared < 0)
        return MCP_EINVAL;
    json_t *new_subs = json_is_object(subs) ? json_deep_copy(subs) : NULL;
    if (json_is_object(subs) && new_subs == NULL)
        return MCP_ENOMEM;
    /* What initialize settled never changes after it, and requests in flight borrow it:
     * an initialized session keeps its own. */
    if (!s->initialized) {
        json_decref(s->client_caps);
        json_decref(s->client_info);
        s->client_caps = json_incref(caps);
        s->client_info = json_incref(info);
        s->rev = rev;
    }
    json_decref(s->subscriptions);
    s->subscriptions = new_subs;
    s->level = (mcp_log_level)level;
    s->declared = (unsigned)declared & (MCP__CAP_TOOLS | MCP__CAP_RESOURCES | MCP__CAP_PROMPTS);
    s->initialized = 1;
    mcp__rpc_allow_batch(s->rpc, s->rev->batches);
    return MCP_OK;
}

void mcp__session_changed(mcp__session *s)
{
    if (!s->closed && s->io != NULL && s->io->changed != NULL)
        s->io->changed(s->io_user);
}

int mcp__session_notify(mcp__session *s, const char *method, json_t *params)
{
    if (s->closed) {
        json_decref(params);
        return MCP_ECLOSED;
    }
    return mcp__rpc_notify(s->rpc, method, params, MCP__STREAM_STANDALONE);
}

void mcp__session_stream_ready(mcp__session *s, uint64_t stream)
{
    for (struct mcp_ctx *c = s->ctxs; c != NULL; c = c->next)
        if (c->stream == stream)
            mcp__ctx_resume(c);
}

int mcp__session_cancel_paused(mcp__session *s, uint64_t stream)
{
    int n = 0;
    for (struct mcp_ctx *c = s->ctxs; c != NULL; c = c->next) {
        if (c->stream == stream && c->paused && !atomic_load(&c->cancelled)) {
            mcp__ctx_cancel(c, "the client stayed away from the request's stream too long");
            n++;
        }
    }
    return n;
}

void mcp__session_cancel_stream(mcp__session *s, uint64_t stream)
{
    mcp__listen_cancel_stream(s, stream);
    for (struct mcp_ctx *c = s->ctxs; c != NULL; c = c->next) {
        if (c->stream != stream)
            continue;
        if (c->req != NULL)
            c->req->cancelled = 1; /* its answer is not sent */
        mcp__ctx_cancel(c, "the client closed the request's stream");
    }
}

int mcp__session_all_paused(const mcp__session *s)
{
    size_t n = 0;
    for (const struct mcp_ctx *c = s->ctxs; c != NULL; c = c->next, n++)
        if (!c->paused)
            return 0;
    /* A request without a context (being answered by the engine) is work too. */
    return n > 0 && mcp__rpc_inflight(s->rpc) <= n;
}

void mcp__session_close(mcp__session *s)
{
    if (s->closed)
        return;
    s->closed = 1;
    s->io = NULL;
    s->io_user = NULL;
    mcp__listen_end_all(s, 0);
    for (struct mcp_ctx *c = s->ctxs; c != NULL; c = c->next)
        mcp__ctx_cancel(c, "the session ended");
    mcp__rpc_close(s->rpc);
    mcp__session_unref(s);
}

void mcp__session_unref(mcp__session *s)
{
    if (--s->refs > 0)
        return;
    mcp__srt *rt = s->rt;
    MCP__LIST_UNLINK(rt->sessions, s);
    rt->nsessions--;
    mcp__rpc_free(s->rpc);
    json_decref(s->client_caps);
    json_decref(s->client_info);
    json_decref(s->subscriptions);
    mcp__principal_unref(s->principal);
    free(s->id);
    free(s);
    if (rt->sessions == NULL && rt->empty_cb != NULL)
        rt->empty_cb(rt->empty_arg);
}
