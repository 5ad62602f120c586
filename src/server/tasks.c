/* SPDX-License-Identifier: MIT */
/*
 * Tasks: the extension io.modelcontextprotocol/tasks (SEP-2663, revision 2026-07-28) on
 * the server. A tools/call from a client that declared the extension may be answered with
 * a task's id (CreateTaskResult) while its handler runs on; the client polls tasks/get,
 * answers the handler's questions with tasks/update and stops it with tasks/cancel.
 *
 * The tasks themselves live in a task store (store/tasks.h): the server's memory store,
 * or the one an endpoint gives its runtime (Redis, shared by every node of a deployment),
 * so any node answers for a task any node made. What stays here is the handlers: each
 * run of a task's handler has an id ("<node>:<n>") that the record names while it runs,
 * and a context detached from the request that made it (answered at once), kept on the
 * runtime's task session, a session no transport serves: its messages go nowhere, and it
 * is closed, cancelling the handlers, when the runtime shuts down.
 *
 * A handler asks the client as in the modern era (mrtr.c): its unanswered questions
 * become the task's inputs when it returns; tasks/update files the answers and, once none
 * is outstanding, the handler runs again from the start under a new run, on the node that
 * took the last answer, finding them as a retry finds its answers. No worker waits for a
 * client, and a task waiting for input belongs to no node.
 *
 * A run whose node is gone (no heartbeat) is found by the next tasks/get of any node,
 * which files the task as failed for it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/json.h"
#include "server/server_int.h"
#include "store/tasks.h"

#define TASKS_EXT "io.modelcontextprotocol/tasks"
/* Runs of one task's handler that may end in questions. */
#define MAX_TASK_ROUNDS 32
#define SWEEP_MS 1000

/* A run of a handler on this process (srv->tasks->runs, by run id). */
typedef struct run {
    mcp_ctx *ctx;
    long long expires; /* wall clock: the task's */
} run;

struct mcp__tasks {
    mcp_tasks_opts o;        /* set before the server is served (mcp_server_set_tasks) */
    atomic_int offered;      /* the extension is declared */
    mcp__task_store *memory; /* the store of runtimes given none */
    uv_mutex_t lock;         /* guards runs and seq */
    mcp__map runs;
    unsigned long long seq;
};

int mcp__tasks_declared(const json_t *caps)
{
    return json_is_object(json_object_get(json_object_get(caps, "extensions"), TASKS_EXT));
}

int mcp__tasks_method(const char *method)
{
    return strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
           strcmp(method, "tasks/cancel") == 0;
}

/* ---- Settings ---- */

/* The settings' defaults for fields left zero. */
static void defaults(mcp_tasks_opts *o)
{
    if (o->ttl_ms == 0)
        o->ttl_ms = 60LL * 60 * 1000;
    if (o->poll_interval_ms == 0)
        o->poll_interval_ms = 1000;
    if (o->max_per_owner == 0)
        o->max_per_owner = 1000;
    if (o->max_total == 0)
        o->max_total = 10000;
    if (o->max_bytes == 0)
        o->max_bytes = (size_t)256 << 20;
    o->size = sizeof *o;
}

struct mcp__tasks *mcp__tasks_new(void)
{
    struct mcp__tasks *ts = calloc(1, sizeof(*ts));
    if (ts == NULL)
        return NULL;
    defaults(&ts->o);
    if (uv_mutex_init(&ts->lock) != 0) {
        free(ts);
        return NULL;
    }
    if ((ts->memory = mcp__task_memory_new(ts->o.max_bytes)) == NULL) {
        uv_mutex_destroy(&ts->lock);
        free(ts);
        return NULL;
    }
    return ts;
}

void mcp__tasks_free(struct mcp__tasks *ts)
{
    if (ts == NULL)
        return;
    mcp__task_memory_free(ts->memory);
    mcp__map_free(&ts->runs);
    uv_mutex_destroy(&ts->lock);
    free(ts);
}

int mcp__tasks_offered(mcp_server *srv)
{
    return atomic_load(&srv->tasks->offered);
}

int mcp__tasks_offer(mcp_server *srv)
{
    if (atomic_load(&srv->tasks->offered))
        return MCP_OK;
    json_t *settings = json_object();
    int rc = settings != NULL ? mcp_server_set_extension(srv, TASKS_EXT, settings) : MCP_ENOMEM;
    json_decref(settings);
    if (rc == MCP_OK)
        atomic_store(&srv->tasks->offered, 1);
    return rc;
}

int mcp_server_set_tasks(mcp_server *srv, const mcp_tasks_opts *opts)
{
    mcp_tasks_opts o = {0};
    if (srv == NULL || (opts != NULL && mcp__opts_copy(&o, sizeof o, opts, sizeof o) != MCP_OK) ||
        o.ttl_ms < 0 || o.poll_interval_ms < 0)
        return MCP_EINVAL;
    defaults(&o);
    int rc = mcp__tasks_offer(srv);
    if (rc != MCP_OK)
        return rc;
    srv->tasks->o = o;
    mcp__task_memory_set_budget(srv->tasks->memory, o.max_bytes);
    return MCP_OK;
}

/* ---- The runtime's side ---- */

/* The store of rt: the one its endpoint shares with other nodes, or the server's own. */
static mcp__task_store *store_of(mcp__srt *rt)
{
    return rt->task_link.store != NULL ? rt->task_link.store : rt->srv->tasks->memory;
}

/* An outcome the shared store could not take (its server out of reach): filed again each
 * tick until it takes it, while the store is the same; at most MAX_PENDING kept (past it,
 * the oldest's task stays "working" until its TTL). */
#define MAX_PENDING 10000

typedef struct pending {
    char *id, *run;
    json_t *outcome;
    mcp__srt *rt;
    struct pending *next;
} pending;

static void pending_free(pending *p)
{
    free(p->id);
    free(p->run);
    json_decref(p->outcome);
    free(p);
}

static void pending_clear(mcp__srt *rt)
{
    while (rt->task_pending != NULL) {
        pending *p = rt->task_pending;
        rt->task_pending = p->next;
        pending_free(p);
    }
    rt->task_npending = 0;
}

static void filed(void *arg, int status, const json_t *rec);

static void file_outcome(mcp__srt *rt, const char *id, const char *run, json_t *outcome)
{
    mcp__task_store *st = store_of(rt);
    pending *p = NULL;
    if (rt->task_link.store != NULL && (p = calloc(1, sizeof(*p))) != NULL) {
        p->id = mcp__strdup(id);
        p->run = mcp__strdup(run);
        p->outcome = json_incref(outcome);
        p->rt = rt;
        if (p->id == NULL || p->run == NULL) {
            pending_free(p);
            p = NULL;
        }
    }
    st->ops->finish(st->self, id, run, outcome, p != NULL ? filed : NULL, p);
}

static void filed(void *arg, int status, const json_t *rec)
{
    pending *p = arg;
    (void)rec;
    mcp__srt *rt = p->rt;
    if (status != MCP_ECLOSED || rt->tasks_closed || rt->task_link.store == NULL) {
        pending_free(p); /* filed, or no longer to be (another node's, expired, stopped) */
        return;
    }
    if (rt->task_npending >= MAX_PENDING) {
        pending_free(p);
        return;
    }
    p->next = rt->task_pending;
    rt->task_pending = p;
    rt->task_npending++;
}

/* The tick: the outcomes kept are filed again. */
static void pending_retry(mcp__srt *rt)
{
    pending *list = rt->task_pending;
    rt->task_pending = NULL;
    rt->task_npending = 0;
    while (list != NULL) {
        pending *p = list;
        list = p->next;
        p->next = NULL;
        mcp__task_store *st = rt->task_link.store;
        if (st == NULL) {
            pending_free(p);
            continue;
        }
        st->ops->finish(st->self, p->id, p->run, p->outcome, filed, p);
    }
}

/* Stops the local runs whose task expired, and lets the memory store forget. */
static void sweep_tick(uv_timer_t *timer)
{
    mcp__srt *rt = timer->data;
    struct mcp__tasks *ts = rt->srv->tasks;
    long long now = (long long)mcp__wall_ms();
    uv_mutex_lock(&ts->lock);
    size_t pos = 0;
    void *v;
    while (mcp__map_next(&ts->runs, &pos, NULL, &v)) {
        run *r = v;
        if (r->expires <= now && !atomic_load(&r->ctx->cancelled))
            mcp__ctx_cancel(r->ctx, "the task expired");
    }
    uv_mutex_unlock(&ts->lock);
    mcp__task_store *st = store_of(rt);
    if (st->ops->expire != NULL)
        st->ops->expire(st->self);
    pending_retry(rt);
}

/* The session the runtime's task handlers belong to, made on first use; NULL once the
 * runtime shuts down, or on ENOMEM. Loop thread. */
static mcp__session *task_session(mcp__srt *rt)
{
    if (rt->tasks_closed)
        return NULL;
    if (rt->task_sess == NULL) {
        uv_timer_t *timer = calloc(1, sizeof(*timer));
        mcp__session *s = timer != NULL ? mcp__session_new(rt, NULL, NULL, NULL) : NULL;
        if (s == NULL) {
            free(timer);
            return NULL;
        }
        mcp__session_set_stateless(s);
        s->modern = 1;
        uv_timer_init(rt->loop, timer);
        uv_unref((uv_handle_t *)timer);
        timer->data = rt;
        uv_timer_start(timer, sweep_tick, SWEEP_MS, SWEEP_MS);
        rt->task_sess = s;
        rt->task_timer = timer;
    }
    return rt->task_sess;
}

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

void mcp__tasks_rt_close(mcp__srt *rt)
{
    rt->tasks_closed = 1;
    pending_clear(rt);
    if (rt->task_sess == NULL)
        return;
    uv_close((uv_handle_t *)rt->task_timer, timer_closed);
    rt->task_timer = NULL;
    mcp__session *s = rt->task_sess;
    rt->task_sess = NULL;
    /* Its handlers are cancelled; their tasks fail as they return. */
    mcp__session_close(s);
}

void mcp__tasks_set_link(mcp__srt *rt, const mcp__task_link *link)
{
    pending_clear(rt); /* kept for a store that is no longer this runtime's */
    if (link != NULL)
        rt->task_link = *link;
    else
        memset(&rt->task_link, 0, sizeof rt->task_link);
}

/* A new run id of this node into out. */
static void new_run(mcp__srt *rt, char out[48])
{
    struct mcp__tasks *ts = rt->srv->tasks;
    uv_mutex_lock(&ts->lock);
    unsigned long long n = ++ts->seq;
    uv_mutex_unlock(&ts->lock);
    snprintf(out, 48, "%u:%llu", (unsigned)rt->task_link.node, n);
}

/* The node a run id names. */
static unsigned run_node(const char *run)
{
    return run != NULL ? (unsigned)strtoul(run, NULL, 10) : 0;
}

/* Enters ctx's run in the table (ctx->task_run set): MCP_OK or MCP_ENOMEM. */
static int run_add(mcp_ctx *ctx, long long expires)
{
    struct mcp__tasks *ts = ctx->rt->srv->tasks;
    run *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return MCP_ENOMEM;
    r->ctx = ctx;
    r->expires = expires;
    uv_mutex_lock(&ts->lock);
    int rc = mcp__map_put(&ts->runs, ctx->task_run, r);
    uv_mutex_unlock(&ts->lock);
    if (rc != MCP_OK)
        free(r);
    return rc;
}

void mcp__tasks_stop_run(mcp_server *srv, const char *run_id, const char *why)
{
    struct mcp__tasks *ts = srv->tasks;
    if (run_id == NULL)
        return;
    uv_mutex_lock(&ts->lock);
    run *r = mcp__map_get(&ts->runs, run_id);
    if (r != NULL)
        mcp__ctx_cancel(r->ctx, why);
    uv_mutex_unlock(&ts->lock);
}

static int owner_of(const mcp_principal *p, char out[65])
{
    out[0] = '\0';
    return p != NULL ? mcp__principal_owner(p, out) : MCP_OK;
}

static int new_id(char out[37])
{
    unsigned char b[16];
    if (mcp__random_bytes(b, sizeof b) != MCP_OK)
        return MCP_EIO;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* a version 4 UUID: 122 random bits */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char hex[33];
    mcp__hex(b, sizeof b, hex);
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    return MCP_OK;
}

static void iso8601(long long ms, char out[64])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* The Task a record shows (detailed: with what its status carries, as tasks/get gives
 * it), a new object. */
static json_t *task_json(mcp_server *srv, const json_t *rec, int detailed)
{
    char created[64], updated[64];
    iso8601(json_integer_value(json_object_get(rec, "created")), created);
    iso8601(json_integer_value(json_object_get(rec, "updated")), updated);
    const char *status = json_string_value(json_object_get(rec, "status"));
    json_t *o = json_pack("{s:O, s:s, s:s, s:s, s:O, s:i}", "taskId", json_object_get(rec, "id"),
                          "status", status != NULL ? status : "failed", "createdAt", created,
                          "lastUpdatedAt", updated, "ttlMs", json_object_get(rec, "ttl"),
                          "pollIntervalMs", srv->tasks->o.poll_interval_ms);
    if (o == NULL || !detailed || status == NULL)
        return o;
    if (strcmp(status, "completed") == 0) {
        json_object_set(o, "result", json_object_get(rec, "result"));
    } else if (strcmp(status, "failed") == 0) {
        json_t *err = json_object_get(rec, "error");
        json_object_set(o, "error", err);
        json_object_set(o, "statusMessage", json_object_get(err, "message"));
    } else if (strcmp(status, "input_required") == 0) {
        json_object_set(o, "inputRequests", json_object_get(rec, "inputs"));
    } else if (strcmp(status, "cancelled") == 0) {
        json_object_set_new(o, "statusMessage", json_string("The task was cancelled."));
    }
    return o;
}

/* ---- A task begins ---- */

typedef struct begin_op {
    mcp_ctx *ctx;
    int from_worker;
    json_t *created; /* the CreateTaskResult */
} begin_op;

/* Ends the begin: the worker that asked is woken with status, or the handler starts (or
 * its request is answered with the error). */
static void begin_end(mcp_ctx *ctx, int from_worker, int status)
{
    if (from_worker) {
        mcp__ctx_wake(ctx, status);
        return;
    }
    if (status != MCP_OK) {
        ctx->invoke = NULL;
        if (status == MCP_ELIMIT)
            mcp_ctx_set_error(ctx, MCP_RPC_SERVER_ERROR,
                              "Too many tasks: the caller holds as many unexpired tasks as it may "
                              "(or the server does); try again once some expire");
        else
            mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                              "Internal error: cannot create the task (%s)", mcp_strerror(status));
    }
    mcp__ctx_run(ctx, 0);
}

/* Moves ctx from its request's session to the task session. */
static void move_ctx(mcp_ctx *ctx, mcp__session *to)
{
    mcp__session *from = ctx->sess;
    MCP__LIST_UNLINK(from->ctxs, ctx);
    MCP__LIST_PUSH(to->ctxs, ctx);
    to->refs++;
    ctx->sess = to;
    ctx->stream = 0;
    /* A task has no stream: nothing of the request's holds its handler back any more, and
     * its progress and log messages go nowhere (the extension has none). */
    ctx->progress_token = NULL;
    ctx->level = MCP_LOG_EMERGENCY + 1;
    uv_mutex_lock(&ctx->lock);
    ctx->paused = 0;
    uv_cond_broadcast(&ctx->cond);
    uv_mutex_unlock(&ctx->lock);
    if (!from->closed && mcp__rpc_inflight(from->rpc) == 0 && from->io != NULL &&
        from->io->idle != NULL)
        from->io->idle(from->io_user);
    mcp__session_unref(from);
}

static void begun(void *arg, int status, const json_t *rec)
{
    begin_op *op = arg;
    mcp_ctx *ctx = op->ctx;
    mcp__session *ts_sess = task_session(ctx->rt);
    if (status == MCP_OK && ts_sess == NULL)
        status = ctx->rt->tasks_closed ? MCP_ECANCELED : MCP_ENOMEM;
    if (status == MCP_OK)
        status = run_add(ctx, json_integer_value(json_object_get(rec, "expires")));
    if (status != MCP_OK) {
        /* A record made and not used expires; its run never files anything. */
        free(ctx->task_id);
        free(ctx->task_run);
        ctx->task_id = ctx->task_run = NULL;
        json_decref(op->created);
        int from_worker = op->from_worker;
        free(op);
        begin_end(ctx, from_worker, status);
        return;
    }
    /* Answered now: the store has the task, so a tasks/get that follows finds it. */
    mcp__inreq *req = ctx->req;
    ctx->req = NULL;
    req->data = NULL;
    mcp__respond(ctx->sess, req, op->created);
    move_ctx(ctx, ts_sess);
    int from_worker = op->from_worker;
    free(op);
    begin_end(ctx, from_worker, MCP_OK);
}

void mcp__task_begin(mcp_ctx *ctx, int from_worker)
{
    mcp_server *srv = ctx->rt->srv;
    struct mcp__tasks *ts = srv->tasks;
    if (!mcp__tasks_offered(srv)) {
        begin_end(ctx, from_worker, MCP_ENOTSUP);
        return;
    }
    char id[37], owner[65], run_id[48];
    if (new_id(id) != MCP_OK || owner_of(ctx->principal, owner) != MCP_OK) {
        begin_end(ctx, from_worker, MCP_ENOMEM);
        return;
    }
    new_run(ctx->rt, run_id);
    long long now = (long long)mcp__wall_ms();
    /* The answers this request already brought (MRTR rounds before the task) hold for
     * the task's later runs. */
    json_t *answers = ctx->prior != NULL ? json_deep_copy(ctx->prior) : json_object();
    if (answers != NULL && ctx->used != NULL)
        json_object_update(answers, ctx->used);
    json_t *rec = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{s:O?, s:O?, s:O?}, s:o?, s:i, s:s}", "id", id,
        "owner", owner, "status", "working", "created", (json_int_t)now, "updated", (json_int_t)now,
        "expires", (json_int_t)(now + ts->o.ttl_ms), "ttl", (json_int_t)ts->o.ttl_ms, "request",
        "name", json_object_get(ctx->params, "name"), "arguments",
        json_object_get(ctx->params, "arguments"), "_meta", json_object_get(ctx->params, "_meta"),
        "answers", answers, "rounds", ctx->round - 1, "run", run_id);
    begin_op *op = calloc(1, sizeof(*op));
    json_t *created = rec != NULL ? task_json(srv, rec, 0) : NULL;
    if (created != NULL)
        json_object_set_new(created, "resultType", json_string("task"));
    ctx->task_id = mcp__strdup(id);
    ctx->task_run = mcp__strdup(run_id);
    if (op == NULL || created == NULL || ctx->task_id == NULL || ctx->task_run == NULL) {
        free(ctx->task_id);
        free(ctx->task_run);
        ctx->task_id = ctx->task_run = NULL;
        free(op);
        json_decref(created);
        json_decref(rec);
        begin_end(ctx, from_worker, MCP_ENOMEM);
        return;
    }
    op->ctx = ctx;
    op->from_worker = from_worker;
    op->created = created;
    mcp__task_store *st = store_of(ctx->rt);
    st->ops->create(st->self, rec, ts->o.max_per_owner, ts->o.max_total, begun, op);
    json_decref(rec);
}

/* ---- A run ends ---- */

void mcp__task_finish(mcp_ctx *ctx, json_t *result)
{
    struct mcp__tasks *ts = ctx->rt->srv->tasks;
    uv_mutex_lock(&ts->lock);
    free(mcp__map_remove(&ts->runs, ctx->task_run));
    uv_mutex_unlock(&ts->lock);
    json_t *outcome = NULL;
    if (atomic_load(&ctx->cancelled) && ctx->cancel_reason != NULL &&
        strstr(ctx->cancel_reason, "tasks/cancel") == NULL) {
        char msg[600];
        snprintf(msg, sizeof msg, "Internal error: the task was stopped (%s)", ctx->cancel_reason);
        outcome = json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code",
                            MCP_RPC_INTERNAL_ERROR, "message", msg);
    } else if (!ctx->bad_answer && json_object_size(ctx->asked) > 0) {
        if (ctx->round >= MAX_TASK_ROUNDS)
            outcome = json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code",
                                MCP_RPC_INTERNAL_ERROR, "message",
                                "Internal error: the task's handler still asks for input "
                                "after 32 rounds");
        else
            outcome = json_pack("{s:s, s:O}", "status", "input_required", "inputs", ctx->asked);
        if (outcome != NULL && ctx->state_out != NULL && ctx->round < MAX_TASK_ROUNDS)
            json_object_set(outcome, "state", ctx->state_out);
    } else if (result != NULL && !ctx->bad_answer) {
        outcome = json_pack("{s:s, s:O}", "status", "completed", "result", result);
    } else {
        json_t *err = json_pack(
            "{s:i, s:s}", "code", ctx->error_code != 0 ? ctx->error_code : MCP_RPC_INTERNAL_ERROR,
            "message",
            ctx->error_message != NULL ? ctx->error_message
                                       : "Internal error: the handler returned no result");
        if (err != NULL && ctx->error_data != NULL)
            json_object_set(err, "data", ctx->error_data);
        outcome = json_pack("{s:s, s:o}", "status", "failed", "error", err);
    }
    json_decref(result);
    if (outcome == NULL) /* out of memory: the task stays "working" until its TTL */
        return;
    file_outcome(ctx->rt, ctx->task_id, ctx->task_run, outcome);
    json_decref(outcome);
}

/* ---- tasks/get, tasks/update, tasks/cancel ---- */

/* One of them under way: the session is held until it is answered. */
typedef struct task_req {
    mcp__session *s;
    mcp__inreq *req;
    char id[256];
    char owner[65];
    char run[48];
    json_t *answers; /* tasks/update's, checked */
    json_t *lost;    /* the record whose run's node is being asked about */
} task_req;

static void treq_end(task_req *q)
{
    mcp__session *s = q->s;
    json_decref(q->answers);
    json_decref(q->lost);
    free(q);
    mcp__session_unref(s);
}

static void treq_error(task_req *q, int status)
{
    if (status == MCP_ENOENT)
        mcp__rpc_respond_error(q->req, MCP_RPC_INVALID_PARAMS,
                               "Failed to retrieve task: Task not found (or expired)", NULL);
    else
        mcp__rpc_respond_error(
            q->req, MCP_RPC_INTERNAL_ERROR,
            status == MCP_ELIMIT    ? "Internal error: the server keeps no more for its tasks now"
            : status == MCP_ECLOSED ? "Internal error: the task store cannot be reached"
                                    : "Internal error: out of memory",
            NULL);
    treq_end(q);
}

static void treq_ack(task_req *q)
{
    json_t *ack = json_object();
    if (ack != NULL)
        mcp__respond(q->s, q->req, ack);
    else
        mcp__rpc_respond_error(q->req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory",
                               NULL);
    treq_end(q);
}

static void treq_task(task_req *q, const json_t *rec)
{
    json_t *t = task_json(q->s->rt->srv, rec, 1);
    if (t == NULL) {
        treq_error(q, MCP_ENOMEM);
        return;
    }
    mcp__respond(q->s, q->req, t);
    treq_end(q);
}

static void got_after_lost(void *arg, int status, const json_t *rec)
{
    task_req *q = arg;
    if (status == MCP_OK || status == MCP_ESTATE) {
        /* Filed, or another node did first: read it again. */
        mcp__task_store *st = store_of(q->s->rt);
        json_decref(q->lost);
        q->lost = NULL;
        if (status == MCP_OK) {
            treq_task(q, rec);
            return;
        }
        st->ops->get(st->self, q->id, q->owner, got_after_lost, q);
        return;
    }
    treq_error(q, status);
}

static void run_alive(void *arg, int alive)
{
    task_req *q = arg;
    if (alive != 0) { /* alive, or not known: as it stands */
        treq_task(q, q->lost);
        return;
    }
    const char *r = json_string_value(json_object_get(q->lost, "run"));
    char msg[200];
    snprintf(msg, sizeof msg,
             "Internal error: the server node that ran the task (%u) stopped before it ended",
             run_node(r));
    json_t *outcome = json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code",
                                MCP_RPC_INTERNAL_ERROR, "message", msg);
    if (outcome == NULL || r == NULL) {
        json_decref(outcome);
        treq_task(q, q->lost);
        return;
    }
    snprintf(q->run, sizeof q->run, "%s", r);
    mcp__task_store *st = store_of(q->s->rt);
    st->ops->finish(st->self, q->id, q->run, outcome, got_after_lost, q);
    json_decref(outcome);
}

static void got(void *arg, int status, const json_t *rec)
{
    task_req *q = arg;
    if (status != MCP_OK) {
        treq_error(q, status);
        return;
    }
    /* A run of another node: alive? (The extension: never left "working" for ever.) */
    const char *r = json_string_value(json_object_get(rec, "run"));
    mcp__srt *rt = q->s->rt;
    if (r != NULL && run_node(r) != rt->task_link.node && rt->task_link.node_alive != NULL &&
        (q->lost = json_deep_copy(rec)) != NULL) {
        rt->task_link.node_alive(rt->task_link.user, run_node(r), run_alive, q);
        return;
    }
    treq_task(q, rec);
}

/* Runs the handler of the task rec again under the run rec names, now that every
 * question has its answer: on this runtime, with the answers, its state and the request
 * that made it. */
static void rerun(mcp__session *s, const json_t *rec)
{
    mcp__srt *rt = s->rt;
    mcp__session *ts_sess = task_session(rt);
    const char *id = json_string_value(json_object_get(rec, "id"));
    const char *run_id = json_string_value(json_object_get(rec, "run"));
    mcp_ctx *ctx = ts_sess != NULL
                       ? mcp__ctx_new_task(ts_sess, json_object_get(rec, "request"), s->principal)
                       : NULL;
    int rc = ctx != NULL ? MCP_OK : rt->tasks_closed ? MCP_ECANCELED : MCP_ENOMEM;
    if (rc == MCP_OK) {
        ctx->task_id = mcp__strdup(id);
        ctx->task_run = mcp__strdup(run_id);
        ctx->prior = json_deep_copy(json_object_get(rec, "answers"));
        ctx->state_in = json_deep_copy(json_object_get(rec, "state"));
        ctx->round = (int)json_integer_value(json_object_get(rec, "rounds")) + 1;
        if (ctx->task_id == NULL || ctx->task_run == NULL || ctx->prior == NULL ||
            run_add(ctx, json_integer_value(json_object_get(rec, "expires"))) != MCP_OK)
            rc = MCP_ENOMEM;
    }
    if (rc == MCP_OK) {
        mcp__tool_prepare(ctx);
        mcp__ctx_run(ctx, 0);
        return;
    }
    /* It cannot run here: the task fails (its run is this one). */
    json_t *outcome =
        json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code",
                  MCP_RPC_INTERNAL_ERROR, "message",
                  rc == MCP_ECANCELED ? "Internal error: the server is stopping"
                                      : "Internal error: out of memory resuming the task");
    mcp__task_store *st = store_of(rt);
    if (outcome != NULL && id != NULL && run_id != NULL)
        st->ops->finish(st->self, id, run_id, outcome, NULL, NULL);
    json_decref(outcome);
    if (ctx != NULL) {
        free(ctx->task_id);
        ctx->task_id = NULL;
        ctx->invoke = NULL;
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "Internal error: not resumed");
        mcp__ctx_run(ctx, 0); /* ends at once: nothing to answer */
    }
}

static void answered(void *arg, int status, const json_t *rec)
{
    task_req *q = arg;
    if (status == MCP_ESTATE) { /* no longer waiting for input: nothing to file */
        treq_ack(q);
        return;
    }
    if (status != MCP_OK) {
        treq_error(q, status);
        return;
    }
    const char *r = json_string_value(json_object_get(rec, "run"));
    int again = r != NULL && strcmp(r, q->run) == 0;
    mcp__session *s = q->s;
    s->refs++;
    treq_ack(q);
    if (again)
        rerun(s, rec);
    mcp__session_unref(s);
}

/* tasks/update: the answers are checked against the questions outstanding, then filed
 * (the key's question never changes in a task's life, so what was checked holds). */
static void got_for_update(void *arg, int status, const json_t *rec)
{
    task_req *q = arg;
    if (status != MCP_OK) {
        treq_error(q, status);
        return;
    }
    json_t *inputs = json_object_get(rec, "inputs");
    json_t *responses = json_object_get(q->req->params, "inputResponses");
    const char *status_s = json_string_value(json_object_get(rec, "status"));
    if (status_s == NULL || strcmp(status_s, "input_required") != 0 || !json_is_object(inputs)) {
        treq_ack(q); /* nothing outstanding: every answer is ignored */
        return;
    }
    json_t *filed = json_object();
    const char *key;
    json_t *answer;
    json_object_foreach(responses, key, answer)
    {
        json_t *question = json_object_get(inputs, key);
        if (question == NULL)
            continue; /* never asked, or answered before: ignored */
        const char *method = json_string_value(json_object_get(question, "method"));
        char digest[65];
        if (!mcp__mrtr_answer_valid(method != NULL ? method : "", answer)) {
            char msg[300];
            snprintf(msg, sizeof msg, "Invalid params: inputResponses.%.200s is not a result of %s",
                     key, method != NULL ? method : "its request");
            json_decref(filed);
            mcp__rpc_respond_error(q->req, MCP_RPC_INVALID_PARAMS, msg, NULL);
            treq_end(q);
            return;
        }
        if (filed == NULL || mcp__json_digest_hex(question, digest) != MCP_OK) {
            json_decref(filed);
            treq_error(q, MCP_ENOMEM);
            return;
        }
        json_object_set_new(filed, key, json_pack("{s:s, s:O}", "h", digest, "a", answer));
    }
    if (json_object_size(filed) == 0) {
        json_decref(filed);
        treq_ack(q);
        return;
    }
    q->answers = filed;
    new_run(q->s->rt, q->run);
    mcp__task_store *st = store_of(q->s->rt);
    st->ops->answer(st->self, q->id, q->owner, q->answers, q->run, answered, q);
}

static void cancelled(void *arg, int status, const json_t *rec)
{
    task_req *q = arg;
    if (status == MCP_ESTATE) { /* terminal: the same ack (cooperative, idempotent) */
        treq_ack(q);
        return;
    }
    if (status != MCP_OK) {
        treq_error(q, status);
        return;
    }
    /* Its run, wherever it is, is told. */
    const char *r = json_string_value(json_object_get(rec, "run"));
    mcp__srt *rt = q->s->rt;
    if (r != NULL && run_node(r) == rt->task_link.node)
        mcp__tasks_stop_run(rt->srv, r, "the client cancelled the task (tasks/cancel)");
    else if (r != NULL && rt->task_link.stop_remote != NULL)
        rt->task_link.stop_remote(rt->task_link.user, run_node(r), r);
    treq_ack(q);
}

void mcp__tasks_refuse(mcp__inreq *req)
{
    json_t *data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", TASKS_EXT);
    mcp__rpc_respond_error(req, MCP_RPC_MISSING_CAPABILITY,
                           "Missing required client capability: the extension " TASKS_EXT, data);
}

void mcp__tasks_dispatch(mcp__session *s, mcp__inreq *req)
{
    const char *m = req->method;
    if (!mcp__tasks_declared(req->meta.caps)) {
        mcp__tasks_refuse(req);
        return;
    }
    const char *id = json_string_value(json_object_get(req->params, "taskId"));
    if (id == NULL || strlen(id) >= 256) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS,
                               id == NULL ? "Invalid params: \"taskId\" must be a string"
                                          : "Failed to retrieve task: Task not found (or expired)",
                               NULL);
        return;
    }
    if (strcmp(m, "tasks/update") == 0 &&
        !json_is_object(json_object_get(req->params, "inputResponses"))) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS,
                               "Invalid params: \"inputResponses\" must be an object of answers",
                               NULL);
        return;
    }
    task_req *q = calloc(1, sizeof(*q));
    if (q == NULL || owner_of(s->principal, q->owner) != MCP_OK) {
        free(q);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    q->s = s;
    q->req = req;
    snprintf(q->id, sizeof q->id, "%s", id);
    s->refs++;
    mcp__task_store *st = store_of(s->rt);
    if (strcmp(m, "tasks/get") == 0)
        st->ops->get(st->self, q->id, q->owner, got, q);
    else if (strcmp(m, "tasks/update") == 0)
        st->ops->get(st->self, q->id, q->owner, got_for_update, q);
    else
        st->ops->cancel(st->self, q->id, q->owner, cancelled, q);
}

/* ---- Public ---- */

const char *mcp_ctx_task_id(const mcp_ctx *ctx)
{
    return ctx->task_id;
}
