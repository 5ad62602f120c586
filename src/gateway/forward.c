/* SPDX-License-Identifier: MIT */
/*
 * The gateway's forwarder: an answerer whose sessions are served by stdio MCP
 * servers run as child processes (see gateway_int.h for the ids, mcp/gateway.h
 * for what a user sees).
 *
 * A child (gw_child) is a stdio client transport (ctransport/ctransport.h) and the
 * sessions it serves: one, or every session when it is shared. A request of a
 * client becomes a gw_req, in the table under its gateway id, in its session's
 * list and its child's; a request of a child becomes a gw_sreq. A shared child is
 * initialized by the gateway itself; sessions that arrive before it is ready, and
 * what they send, wait in their session (gw_sess.held).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/forward_int.h"
#include "gateway/modern_int.h"
#include "protocol/json.h"
#include "protocol/rpc.h"
#include "protocol/trace.h"

static const mcp__ctr_cbs child_cbs;
static void sess_forward(gw_sess *s, json_t *msg, uint64_t stream);
static void maybe_finish(gw *g);

/* ---- Log lines ---- */

/* Whether a line of this level would be written: the request path builds none else. */
int mcp__gw_logs(const gw *g, mcp_log_level level)
{
    return g->cfg.log != NULL && level >= g->cfg.log_level;
}

void mcp__gw_log(gw *g, mcp_log_level level, const char *fmt, ...)
{
    if (!mcp__gw_logs(g, level))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    g->cfg.log(g->cfg.log_user, level, line);
}

/* ---- Sending ---- */

static int write_text(const json_t *v, mcp__buf *b)
{
    return mcp__json_write(b, v);
}

/* To the client of s, on stream. */
int mcp__gw_to_client(gw_sess *s, uint64_t stream, const json_t *msg, unsigned flags)
{
    mcp__buf b = {0};
    int rc = write_text(msg, &b);
    if (rc == MCP_OK)
        rc = s->io->send(s->io_user, stream, b.data, b.len, flags);
    mcp__buf_free(&b);
    return rc;
}

int mcp__gw_to_child(gw_child *c, const json_t *msg)
{
    if (c->state == CH_GONE || c->closing || c->lost_pending)
        return MCP_ECLOSED;
    mcp__buf b = {0};
    int rc = write_text(msg, &b);
    if (rc == MCP_OK) {
        c->g->stats.bytes_out += b.len;
        rc = c->ctr->ops->send(c->ctr, msg, b.data, b.len);
    }
    mcp__buf_free(&b);
    return rc;
}

/* An answer to the client's request: on its own, or into its batch. */
void mcp__gw_answer(gw_sess *s, uint64_t stream, gw_batch *batch, json_t *msg)
{
    if (batch == NULL) {
        mcp__gw_to_client(s, stream, msg, MCP__SEND_RESPONSE);
        json_decref(msg);
        return;
    }
    json_array_append_new(batch->answers, msg);
    if (--batch->remaining == 0) {
        mcp__gw_to_client(s, batch->stream, batch->answers, MCP__SEND_RESPONSE);
        json_decref(batch->answers);
        free(batch);
    }
}

/* A batch member that will never be answered (its session is gone). */
static void batch_forget(gw_batch *batch)
{
    if (batch != NULL && --batch->remaining == 0) {
        json_decref(batch->answers);
        free(batch);
    }
}

void mcp__gw_answer_error(gw_sess *s, uint64_t stream, gw_batch *batch, const json_t *id, int code,
                          const char *message)
{
    mcp__gw_answer(s, stream, batch, mcp__error_message(id, code, message, NULL));
}

/* ---- The id table ---- */

/* The entry of map under the gateway id `id` (a JSON integer), or NULL. */
void *mcp__gw_gid_lookup(const mcp__map *map, const json_t *id)
{
    char key[24];
    if (!json_is_integer(id))
        return NULL;
    snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, json_integer_value(id));
    return mcp__map_get(map, key);
}

json_int_t mcp__gw_new_gid(gw *g, char key[24])
{
    json_int_t gid = ++g->next_gid;
    snprintf(key, 24, "%" JSON_INTEGER_FORMAT, gid);
    return gid;
}

/* Out of its session's list (a zombie, or one on its way out of everything). */
void mcp__gw_req_leave_session(gw_req *r)
{
    gw_sess *s = r->s;
    if (s == NULL)
        return;
    if (r->sprev != NULL)
        r->sprev->snext = r->snext;
    else
        s->reqs = r->snext;
    if (r->snext != NULL)
        r->snext->sprev = r->sprev;
    s->nreqs--;
    r->s = NULL;
    r->sprev = r->snext = NULL;
}

void mcp__gw_req_unlink(gw_req *r)
{
    gw *g = r->c->g;
    mcp__map_remove(&g->reqs, r->key);
    gw_child *c = r->c;
    if (r->cprev != NULL)
        r->cprev->cnext = r->cnext;
    else
        c->reqs = r->cnext;
    if (r->cnext != NULL)
        r->cnext->cprev = r->cprev;
    else
        c->reqs_tail = r->cprev;
    c->nreqs--;
    if (c->excl == r)
        c->excl = NULL;
    mcp__gw_req_leave_session(r);
}

void mcp__gw_req_free(gw_req *r)
{
    mcp__gw_mreq_free(r->m);
    json_decref(r->client_id);
    json_decref(r->token);
    free(r->method);
    free(r);
}

/* r is answered: one log line, and the session may have gone idle. */
void mcp__gw_req_done(gw_req *r, const json_t *error)
{
    gw *g = r->c->g;
    gw_sess *s = r->s;
    g->stats.requests++;
    g->stats.request_errors += error != NULL;
    g->stats.by_method[mcp__gw_method_index(r->method)]
                      [error != NULL ? MCP_GATEWAY_ERROR : MCP_GATEWAY_OK]++;
    if (mcp__gw_logs(g, MCP_LOG_INFO)) {
        char m[64], code[32] = "";
        if (error != NULL)
            snprintf(code, sizeof(code), " code=%" JSON_INTEGER_FORMAT,
                     json_integer_value(json_object_get(error, "code")));
        mcp__gw_log(g, MCP_LOG_INFO,
                    "event=request session=%s method=%s status=%s%s duration_ms=%.3f%s%s",
                    s != NULL && s->id[0] ? s->id : "-", mcp__gw_log_word(r->method, m, sizeof(m)),
                    error != NULL ? "error" : "ok", code, (double)(uv_hrtime() - r->t0) / 1e6,
                    r->trace_id[0] ? " trace_id=" : "", r->trace_id);
    }
    gw_child *c = r->c;
    mcp__gw_req_unlink(r);
    mcp__gw_req_free(r);
    if (s != NULL && s->nreqs == 0 && s->init != INIT_PENDING && s->io->idle != NULL)
        s->io->idle(s->io_user);
    if (c->pooled)
        mcp__gw_modern_pump(g);
}

/* A request that will get no answer from the child (its client cancelled it, or its
 * session is gone): the client's stream or batch is told it ended. A shared child's
 * request is kept as a zombie for a while, since the child may still be running it and
 * whatever it sends for it must not be taken for another client's (see route). */
void mcp__gw_req_zombie_free(gw_req *r)
{
    gw_child *c = r->c;
    c->nzombies--;
    mcp__gw_req_unlink(r);
    mcp__gw_req_free(r);
    if (c->pooled)
        mcp__gw_modern_pump(c->g);
}

void mcp__gw_req_abandon(gw_req *r, int tell_client)
{
    gw_sess *s = r->s;
    gw_child *c = r->c;
    gw *g = c->g;
    if (tell_client && r->batch != NULL) {
        gw_batch *b = r->batch;
        if (--b->remaining == 0) {
            if (json_array_size(b->answers) > 0)
                mcp__gw_to_client(s, b->stream, b->answers, MCP__SEND_RESPONSE);
            else
                s->io->send(s->io_user, b->stream, NULL, 0, MCP__SEND_RESPONSE);
            json_decref(b->answers);
            free(b);
        }
    } else if (tell_client) {
        s->io->send(s->io_user, r->stream, NULL, 0, MCP__SEND_RESPONSE);
    } else {
        batch_forget(r->batch);
    }
    r->batch = NULL;
    g->stats.by_method[mcp__gw_method_index(r->method)][MCP_GATEWAY_CANCELLED]++;
    char m[64];
    if (mcp__gw_logs(g, MCP_LOG_INFO))
        mcp__gw_log(g, MCP_LOG_INFO,
                    "event=request session=%s method=%s status=cancelled duration_ms=%.3f%s%s",
                    s->id[0] ? s->id : "-", mcp__gw_log_word(r->method, m, sizeof(m)),
                    (double)(uv_hrtime() - r->t0) / 1e6, r->trace_id[0] ? " trace_id=" : "",
                    r->trace_id);
    if (!c->shared || c->state == CH_GONE) {
        mcp__gw_req_unlink(r);
        mcp__gw_req_free(r);
    } else {
        mcp__gw_req_leave_session(r); /* still in the child's list */
        r->zombie = 1;
        r->zombie_at = uv_now(g->loop);
        c->nzombies++;
        while (c->nzombies > MAX_ZOMBIES) {
            gw_req *z = c->reqs;
            while (z != NULL && !z->zombie)
                z = z->cnext;
            mcp__gw_req_zombie_free(z);
        }
    }
    if (tell_client && s->nreqs == 0 && s->init != INIT_PENDING && s->io->idle != NULL)
        s->io->idle(s->io_user);
}

/* r ends with an error of the gateway's (-32603, message), to its client. */
void mcp__gw_req_fail(gw_req *r, const char *message)
{
    json_t *err = mcp__error_message(r->client_id, MCP_RPC_INTERNAL_ERROR, message, NULL);
    mcp__gw_answer(r->s, r->stream, r->batch, json_incref(err));
    mcp__gw_req_done(r, json_object_get(err, "error"));
    json_decref(err);
}

static void sreq_free(gw *g, gw_sreq *q)
{
    mcp__map_remove(&g->sreqs, q->key);
    MCP__LIST_UNLINK(q->s->sreqs, q);
    q->s->nsreqs--;
    json_decref(q->child_id);
    free(q);
}

/* ---- Sessions and children ---- */

static void list_remove(gw_sess **head, gw_sess *s)
{
    MCP__LIST_UNLINK(*head, s);
    s->prev = s->next = NULL;
}

static void list_push(gw_sess **head, gw_sess *s)
{
    s->prev = NULL;
    s->next = *head;
    if (*head != NULL)
        (*head)->prev = s;
    *head = s;
}

void mcp__gw_attach(gw_sess *s, gw_child *c)
{
    list_remove(&s->g->loose, s);
    s->c = c;
    list_push(&c->sessions, s);
    c->nsessions++;
}

/* The session can no longer be served: the transport ends it. */
void mcp__gw_sess_end(gw_sess *s)
{
    if (s->ended)
        return;
    s->ended = 1;
    if (s->io->end != NULL)
        s->io->end(s->io_user);
}

/* Once its transport and its timer are closed: the child leaves the gateway. */
static void child_free_maybe(gw_child *c)
{
    if (!c->ctr_closed || c->timer_open)
        return;
    gw *g = c->g;
    MCP__LIST_UNLINK(g->children, c);
    json_decref(c->init_result);
    json_decref(c->server_info);
    free(c);
    maybe_finish(g);
}

static void init_timer_closed(uv_handle_t *h)
{
    gw_child *c = h->data;
    c->timer_open = 0;
    child_free_maybe(c);
}

static void on_init_timeout(uv_timer_t *t)
{
    gw_child *c = t->data;
    char why[96];
    snprintf(why, sizeof(why), "the server did not answer initialize within %d ms",
             c->g->cfg.init_timeout_ms);
    mcp__gw_child_lost(c, why);
}

int mcp__gw_children_full(const gw *g)
{
    /* Children being stopped do not count: they have closed their stdin and exit within
     * the kill grace. As many again may be on their way out, no more. */
    unsigned long max = (unsigned long)g->cfg.max_children;
    return g->nlive >= max || g->nchildren >= 2 * max;
}

gw_child *mcp__gw_child_start(gw *g, int shared)
{
    if (mcp__gw_children_full(g)) {
        mcp__gw_log(g, MCP_LOG_WARNING,
                    "event=child_refused reason=limit max_children=%d live=%lu stopping=%lu",
                    g->cfg.max_children, g->nlive, g->nchildren - g->nlive);
        return NULL;
    }
    gw_child *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->g = g;
    c->shared = shared;
    c->state = CH_STARTING;
    uv_timer_init(g->loop, &c->init_timer);
    c->init_timer.data = c;
    c->timer_open = 1;
    MCP__LIST_PUSH(g->children, c);
    g->nchildren++;
    g->nlive++;
    c->live = 1;
    g->stats.children_started++;
    int rc = mcp__stdio_ctr_new(g->loop, g->cfg.argv, g->cfg.max_message, &child_cbs, c, &c->ctr);
    if (rc != MCP_OK) {
        mcp__gw_log(g, MCP_LOG_ERROR, "event=child_failed reason=%s", mcp_strerror(rc));
        c->state = CH_GONE;
        mcp__gw_child_close(c);
        return NULL;
    }
    mcp__stdio_ctr_set_grace(c->ctr, g->cfg.kill_grace_ms);
    c->pid = mcp__stdio_ctr_pid(c->ctr);
    uv_timer_start(&c->init_timer, on_init_timeout, (uint64_t)g->cfg.init_timeout_ms, 0);
    mcp__gw_log(g, MCP_LOG_INFO, "event=child_start pid=%d shared=%d", c->pid, shared);
    return c;
}

/* Stops the child: its stdin is closed, then SIGTERM and SIGKILL (the transport's
 * close); the struct goes once the transport and the timer are closed. */
void mcp__gw_child_close(gw_child *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    if (c->live) {
        c->live = 0;
        c->g->nlive--;
    }
    if (c->g->shared == c)
        c->g->shared = NULL;
    if (c->timer_open && !uv_is_closing((uv_handle_t *)&c->init_timer)) {
        uv_timer_stop(&c->init_timer);
        uv_close((uv_handle_t *)&c->init_timer, init_timer_closed);
    }
    if (c->ctr != NULL) {
        c->ctr->ops->close(c->ctr);
    } else if (!c->ctr_closed) {
        /* Never made: nothing to wait for but the timer, and nothing to reap. */
        c->ctr_closed = 1;
        c->g->nchildren--;
        c->g->stats.children_exited++;
    }
}

/* Forgets everything of s's that is in flight: its requests (a shared child is told
 * they are cancelled) and the child's requests to its client (the child gets an
 * error answer). With `why`, the client gets that error for each request first. */
static void sess_drop_inflight(gw_sess *s, const char *why)
{
    gw_child *c = s->c;
    while (s->reqs != NULL) {
        gw_req *r = s->reqs;
        if (why != NULL) {
            mcp__gw_req_fail(r, why);
            continue;
        }
        if (c != NULL && c->shared && !c->closing && c->state == CH_READY) {
            json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
                                  "notifications/cancelled", "params", "requestId",
                                  (json_int_t)r->gid, "reason", "the client's session ended");
            if (n != NULL)
                mcp__gw_to_child(c, n);
            json_decref(n);
        }
        mcp__gw_req_abandon(r, 0);
    }
    while (s->sreqs != NULL) {
        gw_sreq *q = s->sreqs;
        if (c != NULL && !c->closing && c->state != CH_GONE) {
            json_t *e = mcp__error_message(q->child_id, MCP_RPC_INTERNAL_ERROR,
                                           "the client's session ended", NULL);
            mcp__gw_to_child(c, e);
            json_decref(e);
        }
        sreq_free(s->g, q);
    }
}

/* The child cannot serve any more (it exited, broke the protocol, or timed out): every
 * request in flight gets an error, and its sessions end. */
void mcp__gw_child_lost(gw_child *c, const char *why)
{
    if (c->state == CH_GONE)
        return;
    gw *g = c->g;
    c->state = CH_GONE;
    if (g->shared == c)
        g->shared = NULL;
    if (c->pooled)
        mcp__gw_modern_child_gone(c, why);
    mcp__gw_log(g, c->closing ? MCP_LOG_DEBUG : MCP_LOG_WARNING,
                "event=child_lost pid=%d reason=\"%s\"", c->pid, why);
    char msg[200];
    snprintf(msg, sizeof(msg), "Internal error: the server process is gone (%s)", why);
    /* The gateway's own initialize of a shared child, and zombies, have no session. */
    for (gw_req *r = c->reqs, *next; r != NULL; r = next) {
        next = r->cnext;
        if (r->s == NULL) {
            c->nzombies -= (size_t)r->zombie;
            mcp__gw_req_unlink(r);
            mcp__gw_req_free(r);
        }
    }
    for (gw_sess *s = c->sessions; s != NULL; s = s->next) {
        if (s->init_id != NULL) {
            mcp__gw_answer_error(s, s->init_stream, s->init_batch, s->init_id,
                                 MCP_RPC_INTERNAL_ERROR, msg);
            json_decref(s->init_id);
            s->init_id = NULL;
        }
        json_decref(s->held);
        s->held = NULL;
        sess_drop_inflight(s, msg);
        mcp__gw_sess_end(s);
    }
    mcp__gw_child_close(c);
}

/* ---- From a child ---- */

/* Where a message of the child that names no request goes: the session whose request
 * is the only one in flight, on that request's stream; else, when the child serves one
 * session, that session's standalone stream. 0 when it cannot be told. */
static int route(gw_child *c, gw_sess **s, uint64_t *stream)
{
    if (c->nreqs == 1 && c->reqs->s != NULL) {
        *s = c->reqs->s;
        *stream = c->reqs->stream;
        return 1;
    }
    /* A zombie may be what the child speaks of: its client is not this one. */
    if (c->nsessions == 1 && c->sessions->init == INIT_DONE && c->nzombies == 0) {
        *s = c->sessions;
        *stream = MCP__STREAM_STANDALONE;
        return 1;
    }
    return 0;
}

/* A list change concerns every session of the child. */
static void broadcast(gw_child *c, const json_t *msg)
{
    for (gw_sess *s = c->sessions; s != NULL; s = s->next)
        if (s->init == INIT_DONE && !s->stateless)
            mcp__gw_to_client(s, MCP__STREAM_STANDALONE, msg, 0);
}

static void shared_ready(gw_child *c, json_t *result);

static void child_response(gw_child *c, json_t *msg)
{
    gw *g = c->g;
    gw_req *r = mcp__gw_gid_lookup(&g->reqs, json_object_get(msg, "id"));
    if (r == NULL || r->c != c)
        goto unknown;
    if (r->zombie) {
        mcp__gw_req_zombie_free(r); /* cancelled: its answer is nobody's */
        return;
    }
    json_t *error = json_object_get(msg, "error");
    if (r->is_init) {
        if (!c->lost_pending)
            uv_timer_stop(&c->init_timer);
        json_t *result = json_object_get(msg, "result");
        mcp__gw_req_done(r, error);
        if (!json_is_object(result)) {
            mcp__gw_child_lost(c, "the server refused the gateway's initialize");
            return;
        }
        if (c->pooled)
            mcp__gw_modern_child_ready(c, result);
        else
            shared_ready(c, result);
        return;
    }
    if (c->pooled && mcp__gw_modern_response(c, r, msg))
        return;
    gw_sess *s = r->s;
    int is_initialize = strcmp(r->method, "initialize") == 0;
    if (is_initialize) {
        if (!c->lost_pending)
            uv_timer_stop(&c->init_timer);
        const json_t *result = json_object_get(msg, "result");
        if (json_is_object(result)) {
            const mcp__revision *rev = mcp__revision_find_legacy(
                json_string_value(json_object_get(result, "protocolVersion")));
            if (rev != NULL)
                s->rev = rev;
            s->init = INIT_DONE;
            c->state = CH_READY;
        }
    }
    json_object_set(msg, "id", r->client_id);
    mcp__gw_answer(s, r->stream, r->batch, json_incref(msg));
    int failed_init = is_initialize && s->init != INIT_DONE;
    mcp__gw_req_done(r, error);
    if (failed_init) {
        /* The server refused the session: it ends, and so does the child. */
        mcp__gw_sess_end(s);
        mcp__gw_child_close(c);
    }
    return;
unknown:
    mcp__debug("gateway: the server answered an id it was never sent; dropped");
}

static void child_request(gw_child *c, json_t *msg)
{
    gw *g = c->g;
    if (c->pooled) {
        mcp__gw_modern_child_request(c, msg);
        return;
    }
    gw_sess *s;
    uint64_t stream;
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *child_id = json_object_get(msg, "id");
    int routed = route(c, &s, &stream);
    if (!routed || s->stateless) {
        json_t *e;
        if (routed)
            /* Nothing can carry the client's answer back (--stateless). */
            e = mcp__error_message(child_id, MCP_RPC_INTERNAL_ERROR, mcp_strerror(MCP_ESTATELESS),
                                   NULL);
        else if (strcmp(method, "ping") == 0)
            e = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", child_id, "result");
        else
            e = mcp__error_message(child_id, MCP_RPC_INTERNAL_ERROR,
                                   "the gateway cannot tell which client this request is for: "
                                   "requests of several clients are in flight",
                                   NULL);
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    if (s->nsreqs >= MAX_SREQS) {
        /* Its client has as many of them to answer as a session may hold. */
        json_t *e = mcp__error_message(child_id, MCP_RPC_INTERNAL_ERROR,
                                       "the client has too many requests of the server to "
                                       "answer",
                                       NULL);
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    gw_sreq *q = calloc(1, sizeof(*q));
    if (q == NULL)
        return;
    q->gid = mcp__gw_new_gid(g, q->key);
    q->child_id = json_incref(child_id);
    q->c = c;
    q->s = s;
    q->stream = stream;
    if (mcp__map_put(&g->sreqs, q->key, q) != MCP_OK) {
        json_decref(q->child_id);
        free(q);
        return;
    }
    MCP__LIST_PUSH(s->sreqs, q);
    s->nsreqs++;
    json_object_set_new(msg, "id", json_integer(q->gid));
    mcp__gw_to_client(s, stream, msg, 0);
}

static void child_notification(gw_child *c, json_t *msg)
{
    gw *g = c->g;
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params");
    if (strcmp(method, "notifications/progress") == 0) {
        gw_req *r = mcp__gw_gid_lookup(&g->reqs, json_object_get(params, "progressToken"));
        if (r == NULL || r->c != c || r->s == NULL || r->token == NULL)
            return;
        json_object_set(params, "progressToken", r->token);
        mcp__gw_to_client(r->s, r->stream, msg, 0);
        return;
    }
    if (c->pooled) {
        mcp__gw_modern_notification(c, msg, method);
        return;
    }
    if (strcmp(method, "notifications/cancelled") == 0) {
        /* The child gave up a request of its own to a client. */
        json_t *rid = json_object_get(params, "requestId");
        for (gw_sess *s = c->sessions; s != NULL; s = s->next)
            for (gw_sreq *q = s->sreqs; q != NULL; q = q->next)
                if (json_equal(q->child_id, rid)) {
                    json_object_set_new(params, "requestId", json_integer(q->gid));
                    mcp__gw_to_client(s, q->stream, msg, 0);
                    sreq_free(g, q);
                    return;
                }
        return;
    }
    if (strncmp(method, "notifications/", 14) == 0 && strstr(method, "/list_changed") != NULL) {
        broadcast(c, msg);
        return;
    }
    if (strcmp(method, "notifications/resources/updated") == 0) {
        /* To the sessions that subscribed to the resource. */
        const char *uri = json_string_value(json_object_get(params, "uri"));
        for (gw_sess *s = c->sessions; s != NULL && uri != NULL; s = s->next)
            if (s->init == INIT_DONE && json_object_get(s->subs, uri) != NULL)
                mcp__gw_to_client(s, MCP__STREAM_STANDALONE, msg, 0);
        return;
    }
    gw_sess *s;
    uint64_t stream;
    if (route(c, &s, &stream))
        mcp__gw_to_client(s, stream, msg, 0);
    else
        mcp__debug("gateway: a notification of a shared server concerns one of several "
                   "clients, or none; dropped");
}

static void child_message(gw_child *c, json_t *msg)
{
    int code;
    const char *why;
    const json_t *echo;
    switch (mcp__jsonrpc_classify(msg, &code, &why, &echo)) {
    case MCP__MSG_RESPONSE:
        child_response(c, msg);
        break;
    case MCP__MSG_REQUEST:
        child_request(c, msg);
        break;
    case MCP__MSG_NOTIFICATION:
        child_notification(c, msg);
        break;
    default:
        mcp__gw_log(c->g, MCP_LOG_WARNING, "event=child_invalid_message pid=%d reason=\"%s\"",
                    c->pid, why);
        break;
    }
}

static void cb_on_text(void *user, const char *text, size_t len)
{
    gw_child *c = user;
    if (c->state == CH_GONE)
        return;
    c->g->stats.bytes_in += len;
    json_t *v = mcp__json_parse(text, len, 0, NULL);
    if (v == NULL) {
        mcp__gw_log(c->g, MCP_LOG_WARNING, "event=child_invalid_json pid=%d bytes=%zu", c->pid,
                    len);
        return;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && c->state != CH_GONE; i++)
            if (json_is_object(json_array_get(v, i)))
                child_message(c, json_array_get(v, i));
    } else {
        child_message(c, v);
    }
    json_decref(v);
}

/* A message of the child over --max-message was dropped: the request it answers (named
 * by its id, read as it went by, or the child's only one in flight when it had none) ends
 * with an error, as if the child had sent that, rather than wait for ever. */
static void cb_on_oversized(void *user, long long gid, int response, size_t seen)
{
    gw_child *c = user;
    gw *g = c->g;
    if (c->state == CH_GONE || c->lost_pending)
        return;
    gw_req *r = NULL;
    if (gid > 0) {
        char key[24];
        snprintf(key, sizeof(key), "%lld", gid);
        r = mcp__map_get(&g->reqs, key);
    } else if (response && c->nreqs == 1) {
        r = c->reqs;
    }
    mcp__gw_log(g, MCP_LOG_WARNING, "event=child_message_too_large pid=%d bytes=%zu request=%s",
                c->pid, seen, r != NULL && r->c == c ? r->key : "-");
    if (r == NULL || r->c != c)
        return;
    char msg[160];
    snprintf(msg, sizeof(msg),
             "Internal error: the server's answer of %zu bytes is over the gateway's "
             "limit of %zu",
             seen, g->cfg.max_message);
    json_t *id = json_integer(r->gid);
    json_t *e = mcp__error_message(id, MCP_RPC_INTERNAL_ERROR, msg, NULL);
    json_decref(id);
    if (e != NULL)
        child_message(c, e);
    json_decref(e);
}

static void on_deferred_lost(uv_timer_t *t)
{
    gw_child *c = t->data;
    mcp__gw_child_lost(c, c->lost_why);
}

void mcp__gw_child_lost_later(gw_child *c, const char *why)
{
    if (c->state == CH_GONE || c->lost_pending)
        return;
    c->lost_pending = 1;
    snprintf(c->lost_why, sizeof(c->lost_why), "%s", why != NULL ? why : "the server is gone");
    if (c->timer_open && !uv_is_closing((uv_handle_t *)&c->init_timer))
        uv_timer_start(&c->init_timer, on_deferred_lost, 0, 0);
    else if (!c->closing)
        mcp__gw_child_lost(c, c->lost_why);
    /* else it is being stopped: its transport's close reports the end */
}

/* The transport may report the loss from inside a write of ours (EPIPE), when the
 * caller still holds what child_lost frees: it runs from the loop instead. */
static void cb_on_lost(void *user, int status, const char *why)
{
    (void)status;
    mcp__gw_child_lost_later(user, why);
}

static void cb_on_closed(void *user)
{
    gw_child *c = user;
    gw *g = c->g;
    c->ctr_closed = 1;
    c->ctr = NULL;
    mcp__gw_child_lost(c, "the server was stopped");
    g->nchildren--;
    g->stats.children_exited++;
    mcp__gw_log(g, MCP_LOG_INFO, "event=child_exit pid=%d", c->pid);
    /* Its sessions are ended; they may still be open in the transport until it closes
     * them: they forget this child. */
    while (c->sessions != NULL) {
        gw_sess *s = c->sessions;
        list_remove(&c->sessions, s);
        s->c = NULL;
        list_push(&g->loose, s);
    }
    child_free_maybe(c);
}

static const mcp__ctr_cbs child_cbs = {
    .on_text = cb_on_text,
    .on_oversized = cb_on_oversized,
    .on_lost = cb_on_lost,
    .on_closed = cb_on_closed,
};

/* ---- The shared child ---- */

static const char *client_caps_json = "{\"sampling\":{},\"elicitation\":{\"form\":{},\"url\":{}},"
                                      "\"roots\":{\"listChanged\":true}}";

int mcp__gw_req_register(gw_req *r)
{
    gw_child *c = r->c;
    if (mcp__map_put(&c->g->reqs, r->key, r) != MCP_OK)
        return MCP_ENOMEM;
    r->cprev = c->reqs_tail;
    if (c->reqs_tail != NULL)
        c->reqs_tail->cnext = r;
    else
        c->reqs = r;
    c->reqs_tail = r;
    c->nreqs++;
    return MCP_OK;
}

gw_req *mcp__gw_child_request(gw_child *c, const char *method, json_t *params)
{
    gw *g = c->g;
    gw_req *r = calloc(1, sizeof(*r));
    if (r == NULL || params == NULL) {
        free(r);
        json_decref(params);
        mcp__gw_child_lost_later(c, "out of memory");
        return NULL;
    }
    r->gid = mcp__gw_new_gid(g, r->key);
    r->c = c;
    r->method = mcp__strdup(method);
    r->t0 = uv_hrtime();
    json_t *msg = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)r->gid,
                            "method", method, "params", params);
    if (msg == NULL || r->method == NULL || mcp__gw_req_register(r) != MCP_OK) {
        json_decref(msg);
        free(r->method);
        free(r);
        mcp__gw_child_lost_later(c, "out of memory");
        return NULL;
    }
    int rc = mcp__gw_to_child(c, msg);
    json_decref(msg);
    if (rc != MCP_OK) {
        mcp__gw_child_lost_later(c, "cannot write to the server");
        return NULL;
    }
    return r;
}

int mcp__gw_child_initialize(gw_child *c)
{
    json_t *params = json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion", MCP_PROTOCOL_LATEST,
                               "capabilities", json_loads(client_caps_json, 0, NULL), "clientInfo",
                               "name", "mcp-gateway", "version", MCP_VERSION_STRING);
    gw_req *r = mcp__gw_child_request(c, "initialize", params);
    if (r == NULL)
        return MCP_ECLOSED;
    r->is_init = 1;
    return MCP_OK;
}

static gw_child *shared_child(gw *g)
{
    if (g->shared != NULL)
        return g->shared;
    gw_child *c = mcp__gw_child_start(g, 1);
    if (c == NULL || mcp__gw_child_initialize(c) != MCP_OK)
        return NULL;
    g->shared = c;
    return c;
}

/* The answer to a session's initialize, from the shared child's. */
static json_t *shared_init_answer(gw_sess *s, const json_t *id)
{
    json_t *result = json_copy(s->c->init_result);
    const mcp__revision *rev = mcp__revision_find_legacy(s->init_version);
    const char *child_version = json_string_value(json_object_get(result, "protocolVersion"));
    if (rev == NULL)
        rev = mcp__revision_find_legacy(child_version);
    if (rev == NULL)
        rev = mcp__revision_latest();
    s->rev = rev;
    json_object_set_new(result, "protocolVersion", json_string(rev->version));
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static void sess_ready(gw_sess *s)
{
    if (s->init_id != NULL) {
        mcp__gw_answer(s, s->init_stream, s->init_batch, shared_init_answer(s, s->init_id));
        json_decref(s->init_id);
        s->init_id = NULL;
    }
    s->init = INIT_DONE;
    json_t *held = s->held;
    s->held = NULL;
    size_t i;
    json_t *pair;
    json_array_foreach(held, i, pair)
    {
        if (s->c == NULL || s->c->state != CH_READY)
            break;
        sess_forward(s, json_array_get(pair, 1),
                     (uint64_t)json_integer_value(json_array_get(pair, 0)));
    }
    json_decref(held);
    if (s->nreqs == 0 && s->init_id == NULL && s->io->idle != NULL)
        s->io->idle(s->io_user);
}

static void shared_ready(gw_child *c, json_t *result)
{
    c->init_result = json_incref(result);
    c->state = CH_READY;
    json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized");
    mcp__gw_to_child(c, n);
    json_decref(n);
    for (gw_sess *s = c->sessions; s != NULL; s = s->next)
        if (s->init == INIT_PENDING)
            sess_ready(s);
}

/* ---- From a client ---- */

/* A request, to the child under a gateway id (the caller made sure s has a ready or
 * starting child of its own). */
gw_req *mcp__gw_forward_request(gw_sess *s, json_t *msg, uint64_t stream, gw_batch *batch)
{
    gw *g = s->g;
    gw_child *c = s->c;
    json_t *id = json_object_get(msg, "id");
    gw_req *r = calloc(1, sizeof(*r));
    json_t *out = r != NULL ? json_copy(msg) : NULL;
    if (out == NULL) {
        free(r);
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: out of memory");
        return NULL;
    }
    r->gid = mcp__gw_new_gid(g, r->key);
    r->s = s;
    r->c = c;
    r->client_id = json_incref(id);
    r->stream = stream;
    r->batch = batch;
    r->method = mcp__strdup(json_string_value(json_object_get(msg, "method")));
    r->t0 = uv_hrtime();
    json_object_set_new(out, "id", json_integer(r->gid));
    json_t *params = json_object_get(msg, "params");
    mcp__trace_id(params, r->trace_id);
    json_t *meta = json_object_get(params, "_meta");
    json_t *token = json_object_get(meta, "progressToken");
    if (token != NULL) {
        /* Tokens of different clients could collide in a shared child: the request's
         * gateway id stands for it. */
        r->token = json_incref(token);
        json_t *p2 = json_copy(params), *m2 = json_copy(meta);
        json_object_set_new(m2, "progressToken", json_integer(r->gid));
        json_object_set_new(p2, "_meta", m2);
        json_object_set_new(out, "params", p2);
    }
    if (r->method == NULL || mcp__gw_req_register(r) != MCP_OK) {
        json_decref(out);
        json_decref(r->client_id);
        json_decref(r->token);
        free(r->method);
        free(r);
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: out of memory");
        return NULL;
    }
    r->snext = s->reqs;
    if (r->snext != NULL)
        r->snext->sprev = r;
    s->reqs = r;
    s->nreqs++;
    int rc = mcp__gw_to_child(c, out);
    json_decref(out);
    if (rc != MCP_OK) {
        mcp__gw_req_fail(r, "Internal error: cannot write to the server");
        return NULL;
    }
    return r;
}

/* initialize: a child of the session's own, or the shared child's answer. */
static void client_initialize(gw_sess *s, json_t *msg, uint64_t stream, gw_batch *batch)
{
    gw *g = s->g;
    json_t *id = json_object_get(msg, "id");
    json_t *params = json_object_get(msg, "params");
    const char *version = json_string_value(json_object_get(params, "protocolVersion"));
    if (s->init != INIT_NONE) {
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INVALID_REQUEST,
                             "Invalid Request: the session is already initialized");
        return;
    }
    if (!json_is_object(params) || version == NULL) {
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: initialize needs params.protocolVersion, a string");
        return;
    }
    if (g->shutting_down) {
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: the gateway is stopping");
        return;
    }
    if (g->cfg.shared_child) {
        gw_child *c = shared_child(g);
        if (c == NULL) {
            mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                                 "Internal error: the server cannot be started");
            return;
        }
        free(s->init_version);
        s->init_version = mcp__strdup(version);
        s->rev = mcp__revision_find_legacy(version);
        if (s->rev == NULL)
            s->rev = mcp__revision_latest();
        mcp__gw_attach(s, c);
        s->init = INIT_PENDING;
        s->init_id = json_incref(id);
        s->init_stream = stream;
        s->init_batch = batch;
        if (c->state == CH_READY)
            sess_ready(s);
        return;
    }
    gw_child *c = mcp__gw_child_start(g, 0);
    /* An idle session of another client gives its server up (never used ones first, as
     * the transport's table makes room); one without a child frees none: a few tries. */
    for (int tries = 0; c == NULL && tries < 8 && mcp__gw_children_full(g) &&
                        s->io->make_room != NULL && s->io->make_room(s->io_user);
         tries++)
        c = mcp__gw_child_start(g, 0);
    if (c == NULL) {
        char why[120];
        snprintf(why, sizeof(why), "Internal error: the server cannot be started%s",
                 mcp__gw_children_full(g) ? " (the gateway runs as many servers as it may)" : "");
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR, why);
        return;
    }
    mcp__gw_attach(s, c);
    s->rev = mcp__revision_find_legacy(version);
    if (s->rev == NULL)
        s->rev = mcp__revision_latest();
    s->init = INIT_PENDING;
    mcp__gw_forward_request(s, msg, stream, batch);
}

/* notifications/cancelled names the client's id: the child knows the gateway's. */
static void client_cancel(gw_sess *s, json_t *msg)
{
    json_t *params = json_object_get(msg, "params");
    json_t *rid = json_object_get(params, "requestId");
    for (gw_req *r = s->reqs; r != NULL; r = r->snext) {
        if (!json_equal(r->client_id, rid))
            continue;
        json_t *out = json_copy(msg), *p2 = json_copy(params);
        json_object_set_new(p2, "requestId", json_integer(r->gid));
        json_object_set_new(out, "params", p2);
        mcp__gw_to_child(s->c, out);
        json_decref(out);
        /* A server does not answer a cancelled request (the spec): the request is over
         * for the client now, and no longer holds the session busy. initialize cannot be
         * cancelled. */
        if (strcmp(r->method, "initialize") != 0)
            mcp__gw_req_abandon(r, 1);
        return;
    }
}

/* A client's answer to a request of the child. */
static void client_response(gw_sess *s, json_t *msg)
{
    gw_sreq *q = mcp__gw_gid_lookup(&s->g->sreqs, json_object_get(msg, "id"));
    if (q == NULL || q->s != s)
        return;
    json_t *out = json_copy(msg);
    json_object_set(out, "id", q->child_id);
    if (q->c == s->c)
        mcp__gw_to_child(q->c, out);
    json_decref(out);
    sreq_free(s->g, q);
}

/* resources/subscribe and unsubscribe: the gateway keeps each session's subscriptions,
 * so that an update goes only to the sessions that asked for it, and one session's
 * unsubscribe from a shared child does not end another's subscription. 0 when the
 * request was answered here. */
static int track_subscription(gw_sess *s, json_t *msg, const char *method, uint64_t stream)
{
    int sub = strcmp(method, "resources/subscribe") == 0;
    if (!sub && strcmp(method, "resources/unsubscribe") != 0)
        return 1;
    json_t *id = json_object_get(msg, "id");
    const char *uri = json_string_value(json_object_get(json_object_get(msg, "params"), "uri"));
    if (uri == NULL)
        return 1; /* the server names the bad params */
    if (sub) {
        if (s->subs == NULL)
            s->subs = json_object();
        if (json_object_get(s->subs, uri) == NULL && json_object_size(s->subs) >= MAX_SUBS) {
            mcp__gw_answer_error(s, stream, NULL, id, MCP_RPC_INTERNAL_ERROR,
                                 "Internal error: too many subscriptions in this session");
            return 0;
        }
        json_object_set_new(s->subs, uri, json_true());
        return 1;
    }
    json_object_del(s->subs, uri);
    for (gw_sess *o = s->c->sessions; o != NULL; o = o->next)
        if (o != s && json_object_get(o->subs, uri) != NULL) {
            /* Another session still wants it: the child keeps its subscription. */
            mcp__gw_answer(s, stream, NULL,
                           json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result"));
            return 0;
        }
    return 1;
}

/* One valid message of a client, on a session whose child is ready (or, for the
 * session's own initialize, about to start). */
static void sess_forward(gw_sess *s, json_t *msg, uint64_t stream)
{
    if (json_object_get(msg, "method") == NULL) {
        client_response(s, msg);
        return;
    }
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *id = json_object_get(msg, "id");
    if (id != NULL) {
        if (track_subscription(s, msg, method, stream))
            mcp__gw_forward_request(s, msg, stream, NULL);
        return;
    }
    if (strcmp(method, "notifications/cancelled") == 0) {
        client_cancel(s, msg);
        return;
    }
    /* The gateway initialized a shared child itself; any other notification of one
     * client (roots changed, say) would be taken as every client's. */
    if (s->c->shared)
        return;
    mcp__gw_to_child(s->c, msg);
}

/* Whether s can take msg now: 0 when it was answered or held here. */
static int sess_usable(gw_sess *s, json_t *msg, uint64_t stream, gw_batch *batch)
{
    json_t *id = json_object_get(msg, "id");
    int request = json_object_get(msg, "method") != NULL && id != NULL;
    if (s->c != NULL && s->c->state == CH_READY && s->init == INIT_DONE)
        return 1;
    if (s->c != NULL && s->c->state != CH_GONE && s->init == INIT_PENDING && s->c->shared &&
        batch == NULL) {
        /* A stateless session, or a request racing initialize: it waits for the child.
         * Notifications would be dropped there anyway; requests wait, a few. */
        if (!request)
            return 0;
        if (json_array_size(s->held) >= MAX_HELD) {
            mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                                 "Internal error: too many requests wait for the server to start");
            return 0;
        }
        json_t *pair = json_pack("[I, O]", (json_int_t)stream, msg);
        if (s->held == NULL)
            s->held = json_array();
        if (pair != NULL && s->held != NULL && json_array_append_new(s->held, pair) == 0)
            return 0;
        json_decref(pair);
    }
    if (s->c != NULL && s->c->state == CH_STARTING && !s->c->shared)
        return 1; /* the child queues what it is sent before its initialize is answered */
    if (request)
        mcp__gw_answer_error(s, stream, batch, id, MCP_RPC_INTERNAL_ERROR,
                             s->init == INIT_NONE
                                 ? "Invalid Request: the session is not initialized"
                                 : "Internal error: the server is gone");
    return 0;
}

static void feed_one(gw_sess *s, json_t *msg, uint64_t stream, gw_batch *batch)
{
    int code;
    const char *why;
    const json_t *echo;
    mcp__msg_kind kind = mcp__jsonrpc_classify(msg, &code, &why, &echo);
    if (kind == MCP__MSG_INVALID) {
        json_t *e = mcp__error_message(echo, code, why, NULL);
        if (batch != NULL)
            mcp__gw_answer(s, stream, batch, e);
        else {
            mcp__gw_to_client(s, stream, e, echo != NULL ? MCP__SEND_RESPONSE : 0);
            json_decref(e);
        }
        return;
    }
    /* Revision 2026-07-28: a request on its own, in a session of its own. */
    if (kind == MCP__MSG_REQUEST && batch == NULL && s->stateless && s->init == INIT_NONE &&
        mcp__gw_is_modern(msg)) {
        mcp__gw_modern_request(s, msg, stream);
        return;
    }
    if (kind == MCP__MSG_REQUEST &&
        strcmp(json_string_value(json_object_get(msg, "method")), "initialize") == 0) {
        client_initialize(s, msg, stream, batch);
        return;
    }
    if (!sess_usable(s, msg, stream, batch))
        return;
    if (kind == MCP__MSG_REQUEST && batch != NULL)
        mcp__gw_forward_request(s, msg, stream, batch);
    else
        sess_forward(s, msg, stream);
}

/* ---- The answerer ---- */

static gw *G(mcp__answerer *a)
{
    return (gw *)a;
}

static mcp__asession *ga_open(mcp__answerer *a, const mcp__session_io *io, void *io_user,
                              const char *id, unsigned flags)
{
    gw *g = G(a);
    if (g->shutting_down)
        return NULL;
    gw_sess *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->g = g;
    s->io = io;
    s->io_user = io_user;
    snprintf(s->id, sizeof(s->id), "%s", id != NULL ? id : "");
    s->stateless = (flags & MCP__OPEN_STATELESS) != 0;
    list_push(&g->loose, s);
    g->nsessions++;
    if (!s->stateless)
        mcp__gw_log(g, MCP_LOG_INFO, "event=session_open session=%s", s->id[0] ? s->id : "-");
    return (mcp__asession *)s;
}

static void ga_feed_value(mcp__asession *as, json_t *value, uint64_t stream)
{
    gw_sess *s = (gw_sess *)as;
    if (!json_is_array(value)) {
        if (json_is_object(value))
            feed_one(s, value, stream, NULL);
        return;
    }
    size_t n = 0, i;
    json_t *m;
    json_array_foreach(value, i, m)
    {
        int code;
        const char *why;
        const json_t *echo;
        mcp__msg_kind k = mcp__jsonrpc_classify(m, &code, &why, &echo);
        n += k == MCP__MSG_REQUEST || (k == MCP__MSG_INVALID && echo != NULL);
    }
    gw_batch *b = NULL;
    if (n > 0) {
        b = calloc(1, sizeof(*b));
        if (b == NULL || (b->answers = json_array()) == NULL) {
            free(b);
            json_t *e = mcp__error_message(NULL, MCP_RPC_INTERNAL_ERROR,
                                           "Internal error: out of memory", NULL);
            mcp__gw_to_client(s, stream, e, MCP__SEND_RESPONSE);
            json_decref(e);
            return;
        }
        b->stream = stream;
        b->remaining = n;
    }
    json_array_foreach(value, i, m)
    {
        int code;
        const char *why;
        const json_t *echo;
        mcp__msg_kind k = mcp__jsonrpc_classify(m, &code, &why, &echo);
        feed_one(s, m, stream, k == MCP__MSG_REQUEST || echo != NULL ? b : NULL);
    }
}

static void ga_feed(mcp__asession *as, const char *text, size_t len, uint64_t stream)
{
    gw_sess *s = (gw_sess *)as;
    json_t *error = NULL;
    json_t *v = mcp__jsonrpc_parse(text, len, &error);
    if (v == NULL) {
        mcp__gw_to_client(s, stream, error, 0);
        json_decref(error);
        return;
    }
    ga_feed_value(as, v, stream);
    json_decref(v);
}

static void ga_reject_oversized(mcp__asession *as, size_t seen, uint64_t stream)
{
    gw_sess *s = (gw_sess *)as;
    char msg[96];
    snprintf(msg, sizeof(msg), "Invalid Request: a message of at least %zu bytes is too large",
             seen);
    json_t *e = mcp__error_message(NULL, MCP_RPC_INVALID_REQUEST, msg, NULL);
    mcp__gw_to_client(s, stream, e, 0);
    json_decref(e);
}

static void ga_assume_initialized(mcp__asession *as, const mcp__revision *rev)
{
    gw_sess *s = (gw_sess *)as;
    gw_child *c = shared_child(s->g);
    s->rev = rev != NULL ? rev : mcp__revision_latest();
    if (c == NULL)
        return; /* its requests get "the server is gone" */
    mcp__gw_attach(s, c);
    s->init = c->state == CH_READY ? INIT_DONE : INIT_PENDING;
}

static void ga_input_closed(mcp__asession *as)
{
    (void)as;
}

static void ga_close(mcp__asession *as)
{
    gw_sess *s = (gw_sess *)as;
    gw *g = s->g;
    gw_child *c = s->c;
    if (!s->stateless)
        mcp__gw_log(g, MCP_LOG_INFO, "event=session_close session=%s", s->id[0] ? s->id : "-");
    if (s->init_id != NULL)
        batch_forget(s->init_batch);
    json_decref(s->init_id);
    json_decref(s->held);
    json_decref(s->subs);
    free(s->init_version);
    mcp__gw_modern_sess_close(s);
    sess_drop_inflight(s, NULL);
    if (c != NULL) {
        list_remove(&c->sessions, s);
        c->nsessions--;
        if (!c->shared)
            mcp__gw_child_close(c);
    } else {
        list_remove(&g->loose, s);
    }
    g->nsessions--;
    free(s);
    maybe_finish(g);
}

static const mcp__revision *ga_revision(const mcp__asession *as)
{
    return ((const gw_sess *)as)->rev;
}

static int ga_initialized(const mcp__asession *as)
{
    return ((const gw_sess *)as)->init != INIT_NONE;
}

static size_t ga_inflight(const mcp__asession *as)
{
    const gw_sess *s = (const gw_sess *)as;
    return s->nreqs + (s->init_id != NULL) + json_array_size(s->held) + s->nlistens +
           (s->waiting != NULL);
}

static int ga_all_paused(const mcp__asession *as)
{
    (void)as;
    return 0;
}

static void ga_stream_ready(mcp__asession *as, uint64_t stream)
{
    (void)as;
    (void)stream;
}

static int ga_cancel_paused(mcp__asession *as, uint64_t stream)
{
    (void)as;
    (void)stream;
    return 0;
}

static size_t ga_max_message(const mcp__answerer *a)
{
    return ((const gw *)a)->cfg.max_message;
}

static unsigned ga_eras(const mcp__answerer *a)
{
    (void)a;
    return MCP_ERA_LEGACY | MCP_ERA_MODERN;
}

static void ga_cancel_stream(mcp__asession *as, uint64_t stream)
{
    mcp__gw_modern_cancel_stream((gw_sess *)as, stream);
}

static void ga_drain(mcp__asession *as)
{
    mcp__gw_modern_drain((gw_sess *)as);
}

/* SEP-1699 polling: the SSE stream of a request that has run poll_ms is closed, once;
 * the client comes back for the rest with GET and Last-Event-ID after the retry
 * interval, and a connection is not held for a long call. Each child's requests are
 * in the order they came, so the sweep stops at the first younger one. */
static void on_tick(uv_timer_t *t)
{
    gw *g = t->data;
    /* Zombies are forgotten after a while: a child that ran them has long answered. */
    uint64_t ms = uv_now(g->loop);
    for (gw_child *c = g->children; c != NULL; c = c->next) {
        for (gw_req *r = c->reqs, *next; r != NULL && c->nzombies > 0; r = next) {
            next = r->cnext;
            if (r->zombie && ms - r->zombie_at >= ZOMBIE_MS)
                mcp__gw_req_zombie_free(r);
        }
    }
    mcp__gw_modern_tick(g);
    if (g->cfg.poll_ms <= 0)
        return;
    uint64_t now = uv_hrtime(), limit = (uint64_t)g->cfg.poll_ms * 1000000u;
    for (gw_child *c = g->children; c != NULL; c = c->next) {
        for (gw_req *r = c->reqs; r != NULL && now - r->t0 >= limit; r = r->cnext) {
            gw_sess *s = r->s;
            /* Never initialize: the client has no session to come back to yet (a
             * server that is slow to start would leave it waiting for good). */
            if (r->polled || s == NULL || s->stateless || s->init != INIT_DONE ||
                s->io->close_stream == NULL)
                continue;
            r->polled = 1;
            s->io->close_stream(s->io_user, r->stream, -1);
        }
    }
}

static void end_timer_closed(uv_handle_t *h)
{
    gw *g = h->data;
    void (*done)(void *) = g->done;
    void *arg = g->done_arg;
    mcp__gw_modern_free(g);
    mcp__map_free(&g->reqs);
    mcp__map_free(&g->sreqs);
    mcp__gw_cfg_free(&g->cfg);
    free(g);
    if (done != NULL)
        done(arg);
}

/* Once shut down, with no session and no child left: the end. */
static void maybe_finish(gw *g)
{
    if (!g->shutting_down || g->nsessions > 0 || g->children != NULL ||
        uv_is_closing((uv_handle_t *)&g->timer))
        return;
    uv_close((uv_handle_t *)&g->timer, end_timer_closed);
}

static void ga_shutdown(mcp__answerer *a, void (*done)(void *arg), void *arg)
{
    gw *g = G(a);
    if (g->shutting_down)
        return;
    g->shutting_down = 1;
    g->done = done;
    g->done_arg = arg;
    for (gw_child *c = g->children; c != NULL; c = c->next)
        if (c->shared)
            mcp__gw_child_close(c);
    maybe_finish(g);
}

static void ga_set_node(mcp__answerer *a, uint32_t node, const char *addr)
{
    gw *g = (gw *)a;
    g->node = node;
    snprintf(g->addr, sizeof(g->addr), "%s", addr != NULL ? addr : "");
    /* Ids of the gateway's own never meet another node's: a server of revision 2026-07-28
     * behind several nodes tells a retry from the request it retries by its id. */
    json_int_t base = (json_int_t)node << 32;
    if (g->next_gid < base)
        g->next_gid = base;
}

static uint32_t ga_home(mcp__answerer *a, const json_t *msg, char *addr, size_t size)
{
    return mcp__gwm_home((gw *)a, msg, addr, size);
}

static const mcp__answerer_ops gw_ops = {
    .open = ga_open,
    .feed = ga_feed,
    .feed_value = ga_feed_value,
    .reject_oversized = ga_reject_oversized,
    .assume_initialized = ga_assume_initialized,
    .input_closed = ga_input_closed,
    .close = ga_close,
    .revision = ga_revision,
    .initialized = ga_initialized,
    .inflight = ga_inflight,
    .all_paused = ga_all_paused,
    .stream_ready = ga_stream_ready,
    .cancel_paused = ga_cancel_paused,
    .max_message = ga_max_message,
    .eras = ga_eras,
    .cancel_stream = ga_cancel_stream,
    .drain = ga_drain,
    .shutdown = ga_shutdown,
    .set_node = ga_set_node,
    .home = ga_home,
};

mcp__answerer *mcp__gw_answerer_new(uv_loop_t *loop, mcp__gw_cfg *cfg)
{
    gw *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        mcp__gw_cfg_free(cfg);
        return NULL;
    }
    g->base.ops = &gw_ops;
    g->loop = loop;
    g->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    if (mcp__gw_modern_new(g) != MCP_OK) {
        mcp__gw_cfg_free(&g->cfg);
        free(g);
        return NULL;
    }
    uv_timer_init(loop, &g->timer);
    g->timer.data = g;
    /* It polls streams (--poll-ms), forgets old zombies, and gives up unanswered
     * questions of 2026-07-28 requests in time. */
    uint64_t every = g->cfg.poll_ms > 0 ? (uint64_t)g->cfg.poll_ms / 4 : 1000;
    if ((uint64_t)g->cfg.input_timeout_ms / 4 < every)
        every = (uint64_t)g->cfg.input_timeout_ms / 4;
    every = every < 10 ? 10 : every > 1000 ? 1000 : every;
    uv_timer_start(&g->timer, on_tick, every, every);
    return &g->base;
}

int mcp__gw_stats(const mcp__answerer *a, mcp_gateway_stats *out)
{
    if (a == NULL || a->ops != &gw_ops)
        return MCP_EINVAL;
    const gw *g = (const gw *)a;
    size_t size = out->size;
    mcp_gateway_stats st = g->stats;
    st.size = size;
    st.sessions = g->nsessions;
    st.children = g->nchildren;
    memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
    return MCP_OK;
}
