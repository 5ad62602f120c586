/* SPDX-License-Identifier: MIT */
/*
 * The request context: how a handler, on a worker thread or inline on the
 * loop, sends progress, logs and notifications, asks the client something,
 * and learns that it was cancelled. Everything that touches the session is
 * done on the loop thread: a worker posts it through the runtime's mailbox,
 * in order, so its notifications always precede its result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/meta.h"
#include "server/server_int.h"

#define MCP__DEFAULT_REQUEST_TIMEOUT_MS 60000

static mcp_ctx *ctx_alloc(mcp__session *s)
{
    mcp_ctx *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return NULL;
    if (uv_mutex_init(&ctx->lock) != 0) {
        free(ctx);
        return NULL;
    }
    if (uv_cond_init(&ctx->cond) != 0) {
        uv_mutex_destroy(&ctx->lock);
        free(ctx);
        return NULL;
    }
    ctx->sess = s;
    ctx->rt = s->rt;
    return ctx;
}

/* The fields both kinds of context read off params. */
static void ctx_read_params(mcp_ctx *ctx)
{
    ctx->meta = json_object_get(ctx->params, "_meta");
    if (!json_is_object(ctx->meta))
        ctx->meta = NULL;
    json_t *token = json_object_get(ctx->meta, "progressToken");
    if (json_is_string(token) || json_is_integer(token))
        ctx->progress_token = token;
}

static void ctx_link(mcp_ctx *ctx)
{
    ctx->sess->refs++;
    MCP__LIST_PUSH(ctx->sess->ctxs, ctx);
}

mcp_ctx *mcp__ctx_new(mcp__session *s, mcp__inreq *req)
{
    mcp_ctx *ctx = ctx_alloc(s);
    if (ctx == NULL)
        return NULL;
    ctx->req = req;
    ctx->stream = req->stream;
    /* The context may outlive the request record, so it keeps its own references. */
    ctx->id = json_incref(req->id);
    ctx->params = json_incref(req->params);
    ctx->method = req->method;
    ctx->msg = json_incref(req->msg);
    ctx_read_params(ctx);
    ctx->modern = (req->flags & MCP__REQ_MODERN) != 0;
    ctx->rev = ctx->modern ? mcp__revision_modern() : s->rev;
    ctx->client_caps = mcp__req_client_caps(s, req);
    ctx->client_info = mcp__req_client_info(s, req);
    ctx->level = mcp__req_log_level(s, req);
    ctx->principal = mcp__principal_ref(s->principal);
    req->data = ctx;
    ctx_link(ctx);
    return ctx;
}

mcp_ctx *mcp__ctx_new_task(mcp__session *s, json_t *params, mcp_principal *principal)
{
    mcp_ctx *ctx = ctx_alloc(s);
    if (ctx == NULL)
        return NULL;
    ctx->id = json_null();
    ctx->params = json_incref(params);
    ctx->method = "tools/call";
    ctx_read_params(ctx);
    ctx->progress_token = NULL; /* a task has no progress */
    ctx->modern = 1;
    ctx->rev = mcp__revision_modern();
    mcp__meta m;
    mcp__meta_read(params, &m);
    ctx->client_caps = m.caps != NULL ? m.caps : s->rt->srv->empty;
    ctx->client_info = m.info != NULL ? m.info : s->rt->srv->empty;
    ctx->level = MCP_LOG_EMERGENCY + 1;
    ctx->principal = mcp__principal_ref(principal);
    ctx->round = 1;
    ctx_link(ctx);
    return ctx;
}

static void ctx_destroy(mcp_ctx *ctx)
{
    mcp__session *s = ctx->sess;
    MCP__LIST_UNLINK(s->ctxs, ctx);
    json_decref(ctx->id);
    json_decref(ctx->params);
    json_decref(ctx->msg);
    json_decref(ctx->args);
    json_decref(ctx->schema);
    json_decref(ctx->in_schema);
    json_decref(ctx->error_data);
    mcp__principal_unref(ctx->principal);
    mcp__mrtr_free(ctx);
    free(ctx->error_message);
    free(ctx->cancel_reason);
    free(ctx->uri);
    free(ctx->task_id);
    free(ctx->task_run);
    uv_cond_destroy(&ctx->cond);
    uv_mutex_destroy(&ctx->lock);
    free(ctx);
    int idle = !s->closed && mcp__rpc_inflight(s->rpc) == 0 && s->io != NULL && s->io->idle != NULL;
    if (idle)
        s->io->idle(s->io_user);
    mcp__session_unref(s);
}

/* Loop thread: answers the request with what the handler produced. */
static void ctx_finish(mcp_ctx *ctx, json_t *result)
{
    mcp__inreq *req = ctx->req;
    ctx->req = NULL;
    if (ctx->task_id != NULL) {
        /* Its request was answered when the task began: the outcome is the task's. */
        mcp__task_finish(ctx, result);
        ctx_destroy(ctx);
        return;
    }
    /* A request whose answer goes nowhere (its client closed it) seals no state. */
    if (req != NULL && ctx->modern && mcp__mrtr_method(ctx->method))
        result = mcp__mrtr_finish(ctx, result);
    if (req != NULL) {
        req->data = NULL;
        if (result != NULL) {
            mcp__respond(ctx->sess, req, result);
            result = NULL;
        } else if (ctx->error_code != 0) {
            mcp__rpc_respond_error(req, ctx->error_code,
                                   ctx->error_message ? ctx->error_message : "Error",
                                   json_incref(ctx->error_data));
        } else {
            mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR,
                                   "Internal error: the handler returned no result", NULL);
        }
    }
    json_decref(result);
    ctx_destroy(ctx);
}

static void ctx_done_mail(mcp__mail *m)
{
    mcp_ctx *ctx = (mcp_ctx *)((char *)m - offsetof(mcp_ctx, done_mail));
    ctx_finish(ctx, ctx->result);
}

static void ctx_job(void *arg)
{
    mcp_ctx *ctx = arg;
    ctx->result = ctx->invoke(ctx);
    ctx->done_mail.fn = ctx_done_mail;
    if (mcp__mailbox_post(&ctx->rt->mb, &ctx->done_mail) != MCP_OK)
        mcp__error("a handler finished after its runtime closed; its result is lost");
}

/* The workers of calls, or of tasks: a flood of long tasks never holds up the calls. */
static mcp__pool *server_pool(mcp_server *srv, int task)
{
    uv_mutex_lock(&srv->lock);
    mcp__pool **slot = task ? &srv->task_pool : &srv->pool;
    if (*slot == NULL)
        *slot = mcp__pool_new(srv->workers);
    mcp__pool *p = *slot;
    uv_mutex_unlock(&srv->lock);
    return p;
}

void mcp__ctx_run(mcp_ctx *ctx, int inline_handler)
{
    if (ctx->invoke == NULL) {
        ctx_finish(ctx, NULL); /* the dispatcher set the error */
        return;
    }
    if (inline_handler) {
        ctx->on_loop = 1;
        ctx_finish(ctx, ctx->invoke(ctx));
        return;
    }
    /* The shared store behind the stream may already be unable to take more: then the
     * handler's first message waits too, not only those after one was sent. */
    mcp__session *s = ctx->sess;
    if (s->io != NULL && s->io->backlogged != NULL && s->io->backlogged(s->io_user, ctx->stream))
        ctx->paused = 1;
    mcp__pool *pool = server_pool(ctx->rt->srv, ctx->task_id != NULL);
    if (pool == NULL || mcp__pool_submit(pool, ctx_job, ctx) != MCP_OK) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "Internal error: no worker available");
        ctx_finish(ctx, NULL);
    }
}

void mcp__ctx_resume(mcp_ctx *ctx)
{
    uv_mutex_lock(&ctx->lock);
    if (ctx->paused) {
        ctx->paused = 0;
        uv_cond_broadcast(&ctx->cond);
    }
    uv_mutex_unlock(&ctx->lock);
}

/* A client's reason is kept up to this many bytes. */
#define MAX_CANCEL_REASON 512

/* The first max bytes of s at most, not cutting a UTF-8 sequence (NULL on ENOMEM). */
static char *copy_prefix(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    char *copy = malloc(n + 1);
    if (copy != NULL) {
        memcpy(copy, s, n);
        copy[n] = '\0';
    }
    return copy;
}

void mcp__ctx_cancel(mcp_ctx *ctx, const char *why)
{
    uv_mutex_lock(&ctx->lock);
    if (ctx->cancel_reason == NULL && why != NULL)
        ctx->cancel_reason = copy_prefix(why, MAX_CANCEL_REASON);
    atomic_store(&ctx->cancelled, 1);
    uv_cond_broadcast(&ctx->cond);
    uv_mutex_unlock(&ctx->lock);
    if (ctx->out_pending)
        mcp__rpc_cancel(ctx->sess->rpc, ctx->out_id, "The request that asked was cancelled");
}

/* ---- Accessors ---- */

const json_t *mcp_ctx_request_id(const mcp_ctx *ctx)
{
    return ctx->id;
}

const char *mcp_ctx_method(const mcp_ctx *ctx)
{
    return ctx->method;
}

const json_t *mcp_ctx_params(const mcp_ctx *ctx)
{
    return ctx->params;
}

const json_t *mcp_ctx_meta(const mcp_ctx *ctx)
{
    return ctx->meta;
}

/* The request's own (see mcp_ctx.rev): set before the handler runs, never changed. */
const char *mcp_ctx_protocol_version(const mcp_ctx *ctx)
{
    return ctx->rev->version;
}

const json_t *mcp_ctx_client_capabilities(const mcp_ctx *ctx)
{
    return ctx->client_caps;
}

const json_t *mcp_ctx_client_extension(const mcp_ctx *ctx, const char *id)
{
    if (id == NULL)
        return NULL;
    const json_t *v = json_object_get(json_object_get(ctx->client_caps, "extensions"), id);
    return json_is_object(v) ? v : NULL;
}

const json_t *mcp_ctx_client_info(const mcp_ctx *ctx)
{
    return ctx->client_info;
}

const char *mcp_ctx_session_id(const mcp_ctx *ctx)
{
    return ctx->sess->id;
}

const mcp_principal *mcp_ctx_principal(const mcp_ctx *ctx)
{
    return ctx->principal;
}

mcp_server *mcp_ctx_server(const mcp_ctx *ctx)
{
    return ctx->rt->srv;
}

const char *mcp_ctx_cancel_reason(const mcp_ctx *ctx)
{
    mcp_ctx *c = (mcp_ctx *)ctx;
    uv_mutex_lock(&c->lock);
    const char *why = atomic_load(&c->cancelled) ? c->cancel_reason : NULL;
    uv_mutex_unlock(&c->lock);
    return why;
}

int mcp_ctx_is_cancelled(const mcp_ctx *ctx)
{
    return atomic_load(&((mcp_ctx *)ctx)->cancelled);
}

int mcp_ctx_sleep(mcp_ctx *ctx, int ms)
{
    if (ctx->on_loop)
        return MCP_ESTATE;
    uint64_t deadline = mcp__now_ms() + (uint64_t)(ms > 0 ? ms : 0);
    uv_mutex_lock(&ctx->lock);
    while (!atomic_load(&ctx->cancelled)) {
        uint64_t now = mcp__now_ms();
        if (now >= deadline)
            break;
        uv_cond_timedwait(&ctx->cond, &ctx->lock, (deadline - now) * 1000000u);
    }
    uv_mutex_unlock(&ctx->lock);
    return atomic_load(&ctx->cancelled) ? MCP_ECANCELED : MCP_OK;
}

static int set_error(mcp_ctx *ctx, int code, json_t *data, const char *fmt, va_list ap)
{
    mcp__buf b = {0};
    int rc = mcp__buf_vappendf(&b, fmt, ap);
    if (rc != MCP_OK) {
        mcp__buf_free(&b);
        json_decref(data);
        return rc;
    }
    free(ctx->error_message);
    ctx->error_message = mcp__buf_steal(&b);
    ctx->error_code = code;
    json_decref(ctx->error_data);
    ctx->error_data = data;
    return MCP_OK;
}

int mcp_ctx_set_error(mcp_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = set_error(ctx, code, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int mcp_ctx_set_error_data(mcp_ctx *ctx, int code, json_t *data, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = set_error(ctx, code, data, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- Operations posted to the loop ---- */

/* OP_NOTIFY and OP_LOG name notifications in batches (note_batch), the others ops. */
enum op_kind { OP_NOTIFY, OP_LOG, OP_REQUEST, OP_CLOSE_STREAM, OP_CLOSE_STANDALONE, OP_START_TASK };

typedef struct ctx_op {
    mcp__mail mail;
    mcp_ctx *ctx;
    enum op_kind kind;
    int timeout_ms;
    int all;
    char *method;
    json_t *params;
} ctx_op;

static void op_free(ctx_op *op)
{
    free(op->method);
    json_decref(op->params);
    free(op);
}

static void wake(mcp_ctx *ctx, int status, const json_t *result, const mcp_rpc_error *err)
{
    uv_mutex_lock(&ctx->lock);
    ctx->wait_status = status;
    ctx->wait_result = json_incref((json_t *)result);
    if (err != NULL) {
        ctx->wait_err.code = err->code;
        memcpy(ctx->wait_err.message, err->message, sizeof(err->message));
        ctx->wait_err.data = json_incref(err->data);
    }
    ctx->wait_done = 1;
    uv_cond_broadcast(&ctx->cond);
    uv_mutex_unlock(&ctx->lock);
}

void mcp__ctx_wake(mcp_ctx *ctx, int status)
{
    wake(ctx, status, NULL, NULL);
}

static void request_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    mcp_ctx *ctx = arg;
    ctx->out_pending = 0;
    wake(ctx, status, result, err);
}

/*
 * How many of a handler's messages may wait for the loop at once. With the
 * pause on a congested stream, this is what keeps a handler that outruns its
 * client from growing memory: it waits here instead (backpressure). A handler that
 * waits for room is woken once half of them went, not after each: one wake-up per
 * MAX_QUEUED_OPS / 2 messages rather than one per message.
 */
#define MAX_QUEUED_OPS 256

/* Loop thread: n messages of the handler's went out (or were dropped); the handler
 * may post the next ones, unless its stream says it cannot take more for now. */
static void ops_sent(mcp_ctx *ctx, int live, int n)
{
    mcp__session *s = ctx->sess;
    int congested = live && s->io != NULL && s->io->congested != NULL &&
                    s->io->congested(s->io_user, ctx->stream);
    /* No lock unless the handler waits: these are atomic, and the handler sets
     * room_waiting before it reads them (see op_wait_room). */
    int left = atomic_fetch_sub(&ctx->queued_ops, n) - n;
    ctx->paused = congested; /* the latest word on the stream */
    if (ctx->room_waiting && !congested && left <= MAX_QUEUED_OPS / 2) {
        uv_mutex_lock(&ctx->lock);
        if (ctx->room_waiting) {
            ctx->room_waiting = 0; /* one wake-up per wait */
            uv_cond_broadcast(&ctx->cond);
        }
        uv_mutex_unlock(&ctx->lock);
    }
}

/* Loop thread. */
static void op_run(ctx_op *op)
{
    mcp_ctx *ctx = op->ctx;
    mcp__session *s = ctx->sess;
    int live = !s->closed && ctx->req != NULL && !atomic_load(&ctx->cancelled);
    switch (op->kind) {
    case OP_NOTIFY:
    case OP_LOG:
        break; /* notifications go in batches (note_batch) */
    case OP_CLOSE_STREAM:
    case OP_CLOSE_STANDALONE: {
        int rc = MCP_ENOTSUP;
        if (!live)
            rc = MCP_ECLOSED;
        else if (op->kind == OP_CLOSE_STREAM && s->io->close_stream != NULL)
            rc = s->io->close_stream(s->io_user, ctx->stream, op->timeout_ms);
        else if (op->kind == OP_CLOSE_STANDALONE && s->io->close_standalone != NULL)
            rc = s->io->close_standalone(s->io_user, op->all, op->timeout_ms);
        wake(ctx, rc, NULL, NULL);
        break;
    }
    case OP_START_TASK:
        if (live)
            mcp__task_begin(ctx, 1); /* wakes the handler when the task exists (or not) */
        else
            wake(ctx, MCP_ECANCELED, NULL, NULL);
        break;
    case OP_REQUEST: {
        if (!live) {
            wake(ctx, atomic_load(&ctx->cancelled) ? MCP_ECANCELED : MCP_ECLOSED, NULL, NULL);
            break;
        }
        json_int_t id;
        int rc = mcp__rpc_request(s->rpc, op->method, json_incref(op->params), ctx->stream,
                                  op->timeout_ms, request_reply, NULL, ctx, &id);
        if (rc != MCP_OK) {
            /* The engine does not call request_reply for a request it refused. */
            wake(ctx, rc, NULL, NULL);
        } else {
            /* Only now is the id known: a cancel before this point has nothing to name. */
            ctx->out_pending = 1;
            ctx->out_id = id;
        }
        break;
    }
    }
    op_free(op);
}

static void op_mail(mcp__mail *m)
{
    op_run((ctx_op *)m);
}

/* Worker thread: waits until the handler may post another message, or it is
 * cancelled (then MCP_ECANCELED: the message would be dropped anyway). The handler's
 * thread is the only one that adds to queued_ops: with room, no lock at all. */
static int op_wait_room(mcp_ctx *ctx)
{
    if (!ctx->paused && ctx->queued_ops < MAX_QUEUED_OPS && !atomic_load(&ctx->cancelled)) {
        ctx->queued_ops++;
        return MCP_OK;
    }
    int rc = MCP_OK;
    uv_mutex_lock(&ctx->lock);
    /* room_waiting is set before paused and queued_ops are read again: ops_sent, which
     * changes them before it reads room_waiting, then either sees it or is seen. */
    while ((ctx->paused || ctx->queued_ops >= MAX_QUEUED_OPS) && !atomic_load(&ctx->cancelled)) {
        ctx->room_waiting = 1;
        if (!ctx->paused && ctx->queued_ops < MAX_QUEUED_OPS)
            break;
        uv_cond_wait(&ctx->cond, &ctx->lock);
    }
    ctx->room_waiting = 0;
    if (atomic_load(&ctx->cancelled))
        rc = MCP_ECANCELED;
    else
        ctx->queued_ops++;
    uv_mutex_unlock(&ctx->lock);
    return rc;
}

/* Runs op now on the loop thread, or posts it there. Takes op. */
static int op_submit(ctx_op *op)
{
    mcp_ctx *ctx = op->ctx;
    if (ctx->on_loop || mcp__srt_on_loop(ctx->rt)) {
        /* A handler on the loop cannot wait for the loop: it is trusted to be short. */
        op_run(op);
        return MCP_OK;
    }
    /* Posted after the notifications before it: later ones go in a batch after it. */
    uv_mutex_lock(&ctx->lock);
    ctx->note_batch = NULL;
    uv_mutex_unlock(&ctx->lock);
    op->mail.fn = op_mail;
    int rc = mcp__mailbox_post(&ctx->rt->mb, &op->mail);
    if (rc != MCP_OK)
        op_free(op);
    return rc;
}

#define APPEND_LIT(b, lit) mcp__buf_append((b), (lit), sizeof(lit) - 1)

/*
 * A handler's notifications, posted to the loop in batches: each is written on the
 * handler's thread (note_submit) and appended to the batch the loop has not taken
 * yet, so that the loop gets many in one mail, one allocation and one free, rather
 * than one of each per notification (a free of another thread's memory contends for
 * its arena's lock). A batch keeps its place among the handler's other messages: it is
 * posted when made, and an other message posted closes it (op_submit).
 */
typedef struct note_batch {
    mcp__mail mail;
    mcp_ctx *ctx;
    int n;         /* notifications in recs */
    mcp__buf recs; /* each: note_rec, then its text */
} note_batch;

typedef struct note_rec {
    int kind, level;
    size_t len;
} note_rec;

/* Loop thread: sends one of the handler's notifications (len bytes of text), unless
 * its request is over or, for a log message, below the level. Whether it was live. */
static int note_send(mcp_ctx *ctx, const note_rec *r, const char *text)
{
    mcp__session *s = ctx->sess;
    int live = !s->closed && ctx->req != NULL && !atomic_load(&ctx->cancelled);
    /* A legacy session's level may change while the request runs (logging/setLevel). */
    if (live && (r->kind == OP_NOTIFY || r->level >= (ctx->modern ? ctx->level : (int)s->level)))
        mcp__rpc_notify_text(s->rpc, text, r->len, ctx->stream);
    return live;
}

/* Loop thread: sends a batch's notifications, in order. */
static void batch_mail(mcp__mail *m)
{
    note_batch *nb = (note_batch *)(void *)m;
    mcp_ctx *ctx = nb->ctx;
    uv_mutex_lock(&ctx->lock);
    if (ctx->note_batch == nb)
        ctx->note_batch = NULL; /* taken: what comes next goes in another */
    uv_mutex_unlock(&ctx->lock);
    int live = 0;
    for (size_t off = 0; off < nb->recs.len;) {
        note_rec r;
        memcpy(&r, nb->recs.data + off, sizeof(r));
        live = note_send(ctx, &r, nb->recs.data + off + sizeof(r));
        off += sizeof(r) + r.len;
    }
    ops_sent(ctx, live, nb->n);
    mcp__buf_free(&nb->recs);
    free(nb);
}

/* Handler's thread: adds the notification text (len bytes) to the open batch, or to a
 * new one posted now. Counted in queued_ops by the caller. */
static int batch_add(mcp_ctx *ctx, enum op_kind kind, int level, const char *text, size_t len)
{
    note_rec r = {.kind = (int)kind, .level = level, .len = len};
    uv_mutex_lock(&ctx->lock);
    note_batch *nb = ctx->note_batch;
    int made = nb == NULL;
    if (made && (nb = calloc(1, sizeof(*nb))) != NULL) {
        nb->mail.fn = batch_mail;
        nb->ctx = ctx;
        ctx->note_batch = nb;
    }
    int rc = nb == NULL ? MCP_ENOMEM : mcp__buf_reserve(&nb->recs, sizeof(r) + len);
    if (rc == MCP_OK) {
        mcp__buf_append(&nb->recs, &r, sizeof(r));
        mcp__buf_append(&nb->recs, text, len);
        nb->n++;
    } else if (made && nb != NULL) {
        ctx->note_batch = NULL;
        free(nb);
        nb = NULL;
    }
    uv_mutex_unlock(&ctx->lock);
    if (rc != MCP_OK || !made)
        return rc;
    rc = mcp__mailbox_post(&ctx->rt->mb, &nb->mail);
    if (rc != MCP_OK) {
        /* Nothing else went into it: only this thread adds, and it is here. */
        uv_mutex_lock(&ctx->lock);
        if (ctx->note_batch == nb)
            ctx->note_batch = NULL;
        uv_mutex_unlock(&ctx->lock);
        mcp__buf_free(&nb->recs);
        free(nb);
    }
    return rc;
}

/* Sends the notification `method` whose params write(b, arg) writes, as text written
 * here: the loop only sends it. MCP_OK or why not. */
static int note_submit(mcp_ctx *ctx, enum op_kind kind, int level, const char *method,
                       int (*write)(mcp__buf *b, const void *arg), const void *arg)
{
    /* Written in the thread's serialisation buffer, then copied once. */
    mcp__buf local = {0}, *b = mcp__rpc_scratch_take();
    if (b == NULL)
        b = &local;
    int rc = APPEND_LIT(b, "{\"jsonrpc\":\"2.0\",\"method\":");
    if (rc == MCP_OK)
        rc = mcp__json_write_str(b, method, strlen(method));
    if (rc == MCP_OK)
        rc = APPEND_LIT(b, ",\"params\":");
    if (rc == MCP_OK)
        rc = write(b, arg);
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "}", 1);
    if (rc == MCP_OK && !ctx->on_loop && !mcp__srt_on_loop(ctx->rt)) {
        rc = op_wait_room(ctx);
        if (rc == MCP_OK && (rc = batch_add(ctx, kind, level, b->data, b->len)) != MCP_OK)
            ctx->queued_ops--;
    } else if (rc == MCP_OK) {
        /* A handler on the loop: sent now (it cannot wait for the loop). */
        note_rec r = {.kind = (int)kind, .level = level, .len = b->len};
        ctx->queued_ops++;
        ops_sent(ctx, note_send(ctx, &r, b->data), 1);
    }
    if (b != &local)
        mcp__rpc_scratch_give(b);
    mcp__buf_free(&local);
    return rc;
}

static int write_value(mcp__buf *b, const void *arg)
{
    return mcp__json_write(b, arg);
}

/* Sends the notification `method` with params (taken). */
static int notify_json(mcp_ctx *ctx, const char *method, json_t *params)
{
    int rc =
        params != NULL ? note_submit(ctx, OP_NOTIFY, 0, method, write_value, params) : MCP_ENOMEM;
    json_decref(params);
    return rc;
}

/* Whole numbers go out as JSON integers ("50", not "50.0"), as other SDKs send them. */
static json_t *number(double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

int mcp_ctx_progress(mcp_ctx *ctx, double progress, double total, const char *message)
{
    if (ctx->progress_token == NULL)
        return MCP_OK;
    if (!isfinite(progress) || (ctx->sent_progress && progress <= ctx->last_progress))
        return MCP_EINVAL; /* the spec: progress must increase with each notification */
    ctx->sent_progress = 1;
    ctx->last_progress = progress;
    json_t *params =
        json_pack("{s:O, s:o}", "progressToken", ctx->progress_token, "progress", number(progress));
    if (params != NULL && total >= 0)
        json_object_set_new(params, "total", number(total));
    if (params != NULL && message != NULL)
        json_object_set_new(params, "message", json_string(message));
    return notify_json(ctx, "notifications/progress", params);
}

typedef struct log_params {
    const char *level;
    const json_t *data;
    const char *logger;
} log_params;

/* {"level": ..., "data": ...[, "logger": ...]}: the order json_pack gave them. */
static int write_log(mcp__buf *b, const void *arg)
{
    const log_params *p = arg;
    int rc = APPEND_LIT(b, "{\"level\":");
    if (rc == MCP_OK)
        rc = mcp__json_write_str(b, p->level, strlen(p->level));
    if (rc == MCP_OK)
        rc = APPEND_LIT(b, ",\"data\":");
    if (rc == MCP_OK)
        rc = mcp__json_write(b, p->data);
    if (rc == MCP_OK && p->logger != NULL) {
        /* A logger name that is not UTF-8 is left out, as jansson left it out. */
        size_t at = b->len;
        rc = APPEND_LIT(b, ",\"logger\":");
        if (rc == MCP_OK)
            rc = mcp__json_write_str(b, p->logger, strlen(p->logger));
        if (rc == MCP_EINVAL) {
            b->len = at;
            rc = MCP_OK;
        }
    }
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "}", 1);
    return rc;
}

int mcp_ctx_log(mcp_ctx *ctx, mcp_log_level level, const char *logger, json_t *data)
{
    const char *name = mcp_log_level_name(level);
    if (name == NULL) {
        json_decref(data);
        return MCP_EINVAL;
    }
    if (!mcp__server_logs(ctx->rt->srv)) {
        json_decref(data);
        return MCP_OK; /* the logging capability is off */
    }
    log_params p = {.level = name, .data = data != NULL ? data : json_null(), .logger = logger};
    int rc = note_submit(ctx, OP_LOG, (int)level, "notifications/message", write_log, &p);
    json_decref(data);
    return rc;
}

int mcp_ctx_logf(mcp_ctx *ctx, mcp_log_level level, const char *fmt, ...)
{
    va_list ap;
    mcp__buf b = {0};
    va_start(ap, fmt);
    int rc = mcp__buf_vappendf(&b, fmt, ap);
    va_end(ap);
    if (rc != MCP_OK) {
        mcp__buf_free(&b);
        return rc;
    }
    json_t *data = json_string(b.data ? b.data : "");
    mcp__buf_free(&b);
    return mcp_ctx_log(ctx, level, NULL, data);
}

int mcp_ctx_notify(mcp_ctx *ctx, const char *method, json_t *params)
{
    if (method == NULL) {
        json_decref(params);
        return MCP_EINVAL;
    }
    return notify_json(ctx, method, params ? params : json_object());
}

/*
 * Runs op on the loop (posting it from a worker) and waits until the loop calls
 * wake(): the status, and the result and error it was given (handed over).
 */
static int submit_and_wait(mcp_ctx *ctx, ctx_op *op, json_t **result, mcp_rpc_error *err)
{
    uv_mutex_lock(&ctx->lock);
    ctx->wait_done = 0;
    uv_mutex_unlock(&ctx->lock);
    int rc = op_submit(op);
    if (rc != MCP_OK)
        return rc;
    uv_mutex_lock(&ctx->lock);
    while (!ctx->wait_done)
        uv_cond_wait(&ctx->cond, &ctx->lock);
    rc = ctx->wait_status;
    *result = ctx->wait_result;
    ctx->wait_result = NULL;
    *err = ctx->wait_err;
    memset(&ctx->wait_err, 0, sizeof(ctx->wait_err));
    uv_mutex_unlock(&ctx->lock);
    return rc;
}

int mcp_ctx_request(mcp_ctx *ctx, const char *method, json_t *params, int timeout_ms,
                    json_t **result, mcp_rpc_error *err)
{
    if (result != NULL)
        *result = NULL;
    if (ctx->modern) {
        /* Revision 2026-07-28 has no requests to the client at all, on any transport
         * (stdio.mdx: the server MUST NOT write JSON-RPC requests; mrtr.mdx): its
         * questions are mcp_ctx_ask's InputRequiredResult, and its client drops a request
         * it is sent. */
        json_decref(params);
        return MCP_ENOTSUP;
    }
    if (ctx->sess->stateless) {
        /* Not even sent: no answer could ever come back (the client's POST would reach
         * no session), so waiting would only end in the timeout. */
        json_decref(params);
        return MCP_ESTATELESS;
    }
    if (ctx->on_loop || mcp__srt_on_loop(ctx->rt)) {
        json_decref(params);
        return MCP_ESTATE; /* waiting here would stall the loop that must carry the answer */
    }
    if (method == NULL) {
        json_decref(params);
        return MCP_EINVAL;
    }
    if (atomic_load(&ctx->cancelled)) {
        json_decref(params);
        return MCP_ECANCELED;
    }
    ctx_op *op = calloc(1, sizeof(*op));
    if (op == NULL || (op->method = mcp__strdup(method)) == NULL) {
        free(op);
        json_decref(params);
        return MCP_ENOMEM;
    }
    op->ctx = ctx;
    op->kind = OP_REQUEST;
    op->params = params;
    op->timeout_ms = timeout_ms > 0 ? timeout_ms : MCP__DEFAULT_REQUEST_TIMEOUT_MS;
    json_t *res = NULL;
    mcp_rpc_error e = {0};
    int rc = submit_and_wait(ctx, op, &res, &e);
    if (rc == MCP_OK && result != NULL)
        *result = res;
    else
        json_decref(res);
    if (err != NULL)
        *err = e;
    else
        json_decref(e.data);
    return rc;
}

/* Runs an operation on the loop (a close, the start of a task) and waits for its result. */
static int loop_op(mcp_ctx *ctx, enum op_kind kind, int all, int retry_ms)
{
    ctx_op *op = calloc(1, sizeof(*op));
    if (op == NULL)
        return MCP_ENOMEM;
    op->ctx = ctx;
    op->kind = kind;
    op->all = all;
    op->timeout_ms = retry_ms;
    json_t *res = NULL;
    mcp_rpc_error e = {0};
    int rc = submit_and_wait(ctx, op, &res, &e);
    json_decref(res);
    json_decref(e.data);
    return rc;
}

int mcp_ctx_start_task(mcp_ctx *ctx)
{
    if (ctx->task_id != NULL)
        return MCP_OK;
    if (!ctx->modern || strcmp(ctx->method, "tools/call") != 0 ||
        !mcp__tasks_offered(ctx->rt->srv) || !mcp__tasks_declared(ctx->client_caps))
        return MCP_ENOTSUP;
    if (ctx->on_loop || mcp__srt_on_loop(ctx->rt))
        return MCP_ESTATE;
    if (atomic_load(&ctx->cancelled))
        return MCP_ECANCELED;
    return loop_op(ctx, OP_START_TASK, 0, 0);
}

int mcp_ctx_close_sse_stream(mcp_ctx *ctx, int retry_ms)
{
    return loop_op(ctx, OP_CLOSE_STREAM, 0, retry_ms);
}

int mcp_ctx_close_standalone_streams(mcp_ctx *ctx, int all, int retry_ms)
{
    return loop_op(ctx, OP_CLOSE_STANDALONE, all, retry_ms);
}

/* The capability a question of the client needs, or NULL for a method that is not one. */
static const char *capability_of(const char *method)
{
    if (strcmp(method, "elicitation/create") == 0)
        return "elicitation";
    if (strcmp(method, "sampling/createMessage") == 0)
        return "sampling";
    if (strcmp(method, "roots/list") == 0)
        return "roots";
    return NULL;
}

/*
 * Whether the client declared what this question needs beyond the capability itself:
 * the elicitation's mode (url, or form: declared as "form", or by an elicitation
 * capability with neither mode, as clients before 2025-11-25 declare it), a sampling
 * request's tools and its includeContext other than "none".
 */
static int declared_for(const json_t *caps, const char *capability, const json_t *params)
{
    const json_t *c = json_object_get(caps, capability);
    if (strcmp(capability, "elicitation") == 0) {
        const char *mode = json_string_value(json_object_get(params, "mode"));
        if (mode != NULL && strcmp(mode, "url") == 0)
            return json_object_get(c, "url") != NULL;
        return json_object_get(c, "form") != NULL || json_object_get(c, "url") == NULL;
    }
    if (strcmp(capability, "sampling") == 0) {
        const char *context = json_string_value(json_object_get(params, "includeContext"));
        if (json_object_get(params, "tools") != NULL && json_object_get(c, "tools") == NULL)
            return 0;
        if (context != NULL && strcmp(context, "none") != 0 &&
            json_object_get(c, "context") == NULL)
            return 0;
    }
    return 1;
}

int mcp_ctx_ask(mcp_ctx *ctx, const char *key, const char *method, json_t *params, int timeout_ms,
                json_t **result, mcp_rpc_error *err)
{
    if (result != NULL)
        *result = NULL;
    const char *capability = method != NULL ? capability_of(method) : NULL;
    /* A key names a question on the wire and in a task's record: 200 bytes at most. */
    if (capability == NULL || (params != NULL && !json_is_object(params)) ||
        (key != NULL && (key[0] == '\0' || strlen(key) > 200))) {
        json_decref(params);
        return MCP_EINVAL;
    }
    if (params == NULL && (params = json_object()) == NULL)
        return MCP_ENOMEM;
    if (ctx->modern) {
        /* Only these methods may answer with an InputRequiredResult (mrtr.mdx), and only
         * what the client declared for this request may be asked (mrtr.mdx, Server
         * Requirements). */
        if (!mcp__mrtr_method(ctx->method) ||
            json_object_get(ctx->client_caps, capability) == NULL ||
            !declared_for(ctx->client_caps, capability, params)) {
            json_decref(params);
            return MCP_ENOTSUP;
        }
        return mcp__mrtr_ask(ctx, key, method, params, result);
    }
    /* A stateless session never learns the client's capabilities, and could not ask
     * anyway: that reason comes first. */
    int rc = ctx->sess->stateless ? MCP_ESTATELESS
             : json_object_get(ctx->client_caps, capability) != NULL &&
                     declared_for(ctx->client_caps, capability, params)
                 ? MCP_OK
                 : MCP_ENOTSUP;
    /* elicitation/create does not exist before 2025-06-18: a client of an older
     * revision could not take it, whatever it declared. */
    if (rc == MCP_OK && strcmp(capability, "elicitation") == 0 && !ctx->rev->elicitation)
        rc = MCP_ENOTSUP;
    if (rc != MCP_OK) {
        json_decref(params);
        return rc;
    }
    return mcp_ctx_request(ctx, method, params, timeout_ms, result, err);
}

int mcp_ctx_create_message(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                           mcp_rpc_error *err)
{
    return mcp_ctx_ask(ctx, NULL, "sampling/createMessage", params, timeout_ms, result, err);
}

int mcp_ctx_elicit(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                   mcp_rpc_error *err)
{
    return mcp_ctx_ask(ctx, NULL, "elicitation/create", params, timeout_ms, result, err);
}

int mcp_ctx_list_roots(mcp_ctx *ctx, int timeout_ms, json_t **result, mcp_rpc_error *err)
{
    return mcp_ctx_ask(ctx, NULL, "roots/list", json_object(), timeout_ms, result, err);
}
