/* SPDX-License-Identifier: MIT */
/*
 * Tasks: the extension io.modelcontextprotocol/tasks (SEP-2663, revision 2026-07-28) on
 * the server. A tools/call from a client that declared the extension may be answered with
 * a task's id (CreateTaskResult) while its handler runs on; the client polls tasks/get,
 * answers the handler's questions with tasks/update and stops it with tasks/cancel.
 *
 * A task's handler runs in a context of its own, detached from the request that made it
 * (which is answered at once) and kept on the runtime's task session, a session no
 * transport serves: its messages go nowhere, and it is closed, cancelling the handlers,
 * when the runtime shuts down. The handler asks the client as in the modern era
 * (mrtr.c): its unanswered questions become the task's inputRequests when it returns;
 * tasks/update files the answers and, once none is outstanding, the handler runs again
 * from the start, on the runtime that took the last answer, finding them as a retry finds
 * its answers. No worker waits for a client.
 *
 * The records live in the server, under their own lock (any runtime's loop thread reads
 * and changes them; a handler's thread never does), in a map by id and a list in order
 * of expiry: every task lives the same ttl_ms, so the order of creation is the order of
 * expiry, and the expired ones are always at the head.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/json.h"
#include "protocol/meta.h"
#include "server/server_int.h"

#define TASKS_EXT "io.modelcontextprotocol/tasks"
/* Runs of one task's handler that may end in questions. */
#define MAX_TASK_ROUNDS 32
#define SWEEP_MS 1000

enum { T_WORKING, T_INPUT, T_COMPLETED, T_FAILED, T_CANCELLED };
static const char *const status_name[] = {"working", "input_required", "completed", "failed",
                                          "cancelled"};

typedef struct task {
    char id[37];
    char owner[65]; /* "" on an endpoint without authorization */
    int status;
    uint64_t created, updated; /* wall clock, ms */
    uint64_t expires;          /* monotonic, ms */
    json_t *request;           /* the tools/call params that made it: name, arguments, _meta */
    json_t *result, *error;    /* completed, failed */
    json_t *inputs;            /* input_required: key -> {method, params} */
    json_t *answers;           /* key -> {"h": the question's digest, "a": the answer} */
    json_t *state;             /* mcp_ctx_keep_state of the run before */
    int rounds;
    int cancel_asked;
    mcp_ctx *ctx; /* the handler running it, or NULL */
    struct task *prev, *next;
} task;

struct mcp__tasks {
    uv_mutex_t lock;
    mcp_tasks_opts o;
    mcp__map by_id;
    mcp__map owners; /* owner -> how many tasks it holds */
    size_t total;
    task *head, *tail; /* the first to expire first */
};

static int terminal(int status)
{
    return status >= T_COMPLETED;
}

int mcp__tasks_declared(const json_t *caps)
{
    return json_is_object(json_object_get(json_object_get(caps, "extensions"), TASKS_EXT));
}

/* ---- Settings ---- */

static void task_free(task *t)
{
    json_decref(t->request);
    json_decref(t->result);
    json_decref(t->error);
    json_decref(t->inputs);
    json_decref(t->answers);
    json_decref(t->state);
    free(t);
}

void mcp__tasks_free(struct mcp__tasks *ts)
{
    if (ts == NULL)
        return;
    for (task *t = ts->head, *next; t != NULL; t = next) {
        next = t->next;
        task_free(t);
    }
    mcp__map_free(&ts->by_id);
    mcp__map_free(&ts->owners);
    uv_mutex_destroy(&ts->lock);
    free(ts);
}

static void defaults(mcp_tasks_opts *o)
{
    if (o->ttl_ms <= 0)
        o->ttl_ms = 60LL * 60 * 1000;
    if (o->poll_interval_ms <= 0)
        o->poll_interval_ms = 1000;
    if (o->max_per_owner == 0)
        o->max_per_owner = 1000;
    if (o->max_total == 0)
        o->max_total = 10000;
}

int mcp_server_set_tasks(mcp_server *srv, const mcp_tasks_opts *opts)
{
    mcp_tasks_opts o = {0};
    if (srv == NULL || (opts != NULL && mcp__opts_copy(&o, sizeof o, opts, sizeof o) != MCP_OK) ||
        o.ttl_ms < 0 || o.poll_interval_ms < 0)
        return MCP_EINVAL;
    defaults(&o);
    o.size = sizeof o;
    if (srv->tasks == NULL) {
        struct mcp__tasks *ts = calloc(1, sizeof(*ts));
        if (ts == NULL)
            return MCP_ENOMEM;
        if (uv_mutex_init(&ts->lock) != 0) {
            free(ts);
            return MCP_ENOMEM;
        }
        json_t *settings = json_object();
        int rc = settings != NULL ? mcp_server_set_extension(srv, TASKS_EXT, settings) : MCP_ENOMEM;
        json_decref(settings);
        if (rc != MCP_OK) {
            mcp__tasks_free(ts);
            return rc;
        }
        srv->tasks = ts;
    }
    uv_mutex_lock(&srv->tasks->lock);
    srv->tasks->o = o;
    uv_mutex_unlock(&srv->tasks->lock);
    return MCP_OK;
}

/* ---- Records (under ts->lock) ---- */

static void owner_count(struct mcp__tasks *ts, const char *owner, int delta)
{
    uintptr_t n = (uintptr_t)mcp__map_get(&ts->owners, owner);
    n += (uintptr_t)(intptr_t)delta;
    if (n == 0)
        mcp__map_remove(&ts->owners, owner);
    else if (mcp__map_put(&ts->owners, owner, (void *)n) != MCP_OK && delta > 0)
        mcp__warn("out of memory counting a principal's tasks");
}

static void unlink_task(struct mcp__tasks *ts, task *t)
{
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        ts->head = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    else
        ts->tail = t->prev;
    mcp__map_remove(&ts->by_id, t->id);
    owner_count(ts, t->owner, -1);
    ts->total--;
}

/* Forgets the tasks whose time is up; a handler still running one is cancelled (it finds
 * nothing to file its outcome in). */
static void sweep(struct mcp__tasks *ts, uint64_t now)
{
    while (ts->head != NULL && ts->head->expires <= now) {
        task *t = ts->head;
        unlink_task(ts, t);
        if (t->ctx != NULL)
            mcp__ctx_cancel(t->ctx, "the task expired");
        task_free(t);
    }
}

/* The task id of another owner is not told apart from one that does not exist. */
static task *find(struct mcp__tasks *ts, const char *id, const char *owner)
{
    task *t = mcp__map_get(&ts->by_id, id);
    return t != NULL && strcmp(t->owner, owner) == 0 ? t : NULL;
}

static void iso8601(uint64_t ms, char out[64])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* The Task (detailed: with what its status carries, as tasks/get gives it), a new object
 * that shares nothing that may change. */
static json_t *task_json(const struct mcp__tasks *ts, const task *t, int detailed)
{
    char created[64], updated[64];
    iso8601(t->created, created);
    iso8601(t->updated, updated);
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:i}", "taskId", t->id, "status",
                  status_name[t->status], "createdAt", created, "lastUpdatedAt", updated, "ttlMs",
                  (json_int_t)ts->o.ttl_ms, "pollIntervalMs", ts->o.poll_interval_ms);
    if (o == NULL || !detailed)
        return o;
    if (t->status == T_COMPLETED) {
        json_object_set(o, "result", t->result); /* never changed once filed */
    } else if (t->status == T_FAILED) {
        json_object_set(o, "error", t->error);
        json_object_set(o, "statusMessage", json_object_get(t->error, "message"));
    } else if (t->status == T_INPUT) {
        json_object_set_new(o, "inputRequests", json_deep_copy(t->inputs));
    } else if (t->status == T_CANCELLED) {
        json_object_set_new(o, "statusMessage", json_string("The task was cancelled."));
    }
    return o;
}

static void set_status(task *t, int status)
{
    t->status = status;
    t->updated = mcp__wall_ms();
    if (terminal(status)) {
        /* Only the outcome is kept until the task expires. */
        json_decref(t->inputs);
        json_decref(t->answers);
        json_decref(t->state);
        json_decref(t->request);
        t->inputs = t->answers = t->state = t->request = NULL;
    }
}

static void fail(task *t, int code, const char *message, json_t *data)
{
    json_decref(t->error);
    t->error = json_pack("{s:i, s:s}", "code", code, "message", message);
    if (t->error != NULL && data != NULL)
        json_object_set(t->error, "data", data);
    set_status(t, T_FAILED);
}

/* ---- The runtime's task session ---- */

static void sweep_tick(uv_timer_t *timer)
{
    mcp__srt *rt = timer->data;
    struct mcp__tasks *ts = rt->srv->tasks;
    uv_mutex_lock(&ts->lock);
    sweep(ts, mcp__now_ms());
    int empty = ts->head == NULL;
    uv_mutex_unlock(&ts->lock);
    if (empty)
        uv_timer_stop(timer);
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
        rt->task_sess = s;
        rt->task_timer = timer;
    }
    if (!uv_is_active((uv_handle_t *)rt->task_timer))
        uv_timer_start(rt->task_timer, sweep_tick, SWEEP_MS, SWEEP_MS);
    return rt->task_sess;
}

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

void mcp__tasks_rt_close(mcp__srt *rt)
{
    rt->tasks_closed = 1;
    if (rt->task_sess == NULL)
        return;
    uv_close((uv_handle_t *)rt->task_timer, timer_closed);
    rt->task_timer = NULL;
    mcp__session *s = rt->task_sess;
    rt->task_sess = NULL;
    /* Its handlers are cancelled; their tasks fail as they return. */
    mcp__session_close(s);
}

/* Moves ctx from its request's session to the task session ts. */
static void move_ctx(mcp_ctx *ctx, mcp__session *to)
{
    mcp__session *from = ctx->sess;
    MCP__LIST_UNLINK(from->ctxs, ctx);
    MCP__LIST_PUSH(to->ctxs, ctx);
    to->refs++;
    ctx->sess = to;
    ctx->stream = 0;
    if (!from->closed && mcp__rpc_inflight(from->rpc) == 0 && from->io != NULL &&
        from->io->idle != NULL)
        from->io->idle(from->io_user);
    mcp__session_unref(from);
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

static int owner_of(const mcp_principal *p, char out[65])
{
    out[0] = '\0';
    return p != NULL ? mcp__principal_owner(p, out) : MCP_OK;
}

int mcp__task_begin(mcp_ctx *ctx)
{
    struct mcp__tasks *ts = ctx->rt->srv->tasks;
    if (ts == NULL)
        return MCP_ENOTSUP;
    mcp__session *ts_sess = task_session(ctx->rt);
    if (ts_sess == NULL)
        return ctx->rt->tasks_closed ? MCP_ECANCELED : MCP_ENOMEM;
    task *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return MCP_ENOMEM;
    int rc = new_id(t->id);
    if (rc == MCP_OK)
        rc = owner_of(ctx->principal, t->owner);
    if (rc != MCP_OK) {
        free(t);
        return rc;
    }
    t->request = json_pack("{s:O?, s:O?, s:O?}", "name", json_object_get(ctx->params, "name"),
                           "arguments", json_object_get(ctx->params, "arguments"), "_meta",
                           json_object_get(ctx->params, "_meta"));
    /* The answers this request already brought (MRTR rounds before the task) hold for
     * the task's later runs. */
    t->answers = ctx->prior != NULL ? json_deep_copy(ctx->prior) : json_object();
    if (t->answers != NULL && ctx->used != NULL)
        json_object_update(t->answers, ctx->used);
    if (t->request == NULL || t->answers == NULL) {
        task_free(t);
        return MCP_ENOMEM;
    }
    t->created = t->updated = mcp__wall_ms();
    t->rounds = ctx->round - 1;
    uv_mutex_lock(&ts->lock);
    uint64_t now = mcp__now_ms();
    sweep(ts, now);
    t->expires = now + (uint64_t)ts->o.ttl_ms;
    if (ts->total >= ts->o.max_total ||
        (uintptr_t)mcp__map_get(&ts->owners, t->owner) >= ts->o.max_per_owner) {
        uv_mutex_unlock(&ts->lock);
        task_free(t);
        return MCP_ELIMIT;
    }
    if (mcp__map_put(&ts->by_id, t->id, t) != MCP_OK) {
        uv_mutex_unlock(&ts->lock);
        task_free(t);
        return MCP_ENOMEM;
    }
    t->prev = ts->tail;
    if (ts->tail != NULL)
        ts->tail->next = t;
    else
        ts->head = t;
    ts->tail = t;
    ts->total++;
    owner_count(ts, t->owner, 1);
    t->ctx = ctx;
    json_t *created = task_json(ts, t, 0);
    uv_mutex_unlock(&ts->lock);
    ctx->task_id = mcp__strdup(t->id);
    if (created != NULL)
        json_object_set_new(created, "resultType", json_string("task"));
    /* Answered now: the task exists, so a tasks/get that follows finds it. */
    mcp__inreq *req = ctx->req;
    ctx->req = NULL;
    req->data = NULL;
    if (created != NULL && ctx->task_id != NULL)
        mcp__respond(ctx->sess, req, created);
    else
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    move_ctx(ctx, ts_sess);
    return MCP_OK;
}

void mcp__task_finish(mcp_ctx *ctx, json_t *result)
{
    struct mcp__tasks *ts = ctx->rt->srv->tasks;
    uv_mutex_lock(&ts->lock);
    task *t = mcp__map_get(&ts->by_id, ctx->task_id);
    if (t == NULL || t->ctx != ctx) {
        uv_mutex_unlock(&ts->lock); /* expired meanwhile */
        json_decref(result);
        return;
    }
    t->ctx = NULL;
    if (ctx->used != NULL && t->answers != NULL)
        json_object_update(t->answers, ctx->used);
    if (t->cancel_asked) {
        set_status(t, T_CANCELLED);
    } else if (atomic_load(&ctx->cancelled)) {
        char msg[600];
        snprintf(msg, sizeof msg, "Internal error: the task was stopped (%s)",
                 ctx->cancel_reason != NULL ? ctx->cancel_reason : "cancelled");
        fail(t, MCP_RPC_INTERNAL_ERROR, msg, NULL);
    } else if (!ctx->bad_answer && json_object_size(ctx->asked) > 0) {
        if (t->rounds + 1 >= MAX_TASK_ROUNDS) {
            fail(t, MCP_RPC_INTERNAL_ERROR,
                 "Internal error: the task's handler still asks for input after 32 rounds", NULL);
        } else {
            json_decref(t->inputs);
            json_decref(t->state);
            t->inputs = ctx->asked;
            t->state = ctx->state_out;
            ctx->asked = ctx->state_out = NULL;
            t->rounds++;
            set_status(t, T_INPUT);
        }
    } else if (result != NULL && !ctx->bad_answer) {
        t->result = result;
        result = NULL;
        set_status(t, T_COMPLETED);
    } else {
        fail(t, ctx->error_code != 0 ? ctx->error_code : MCP_RPC_INTERNAL_ERROR,
             ctx->error_message != NULL ? ctx->error_message
                                        : "Internal error: the handler returned no result",
             ctx->error_data);
    }
    uv_mutex_unlock(&ts->lock);
    json_decref(result);
}

/* ---- tasks/get, tasks/update, tasks/cancel ---- */

/* Runs the handler of task id again, now that every question has its answer: on this
 * runtime, with the answers, its state and the request that made it. */
static void rerun(mcp__session *s, const char *id)
{
    mcp_server *srv = s->rt->srv;
    struct mcp__tasks *ts = srv->tasks;
    mcp__session *ts_sess = task_session(s->rt);
    char owner[65];
    json_t *request = NULL, *answers = NULL, *state = NULL;
    int round = 0;
    uv_mutex_lock(&ts->lock);
    task *t = owner_of(s->principal, owner) == MCP_OK ? find(ts, id, owner) : NULL;
    if (t != NULL && t->status == T_WORKING && t->ctx == NULL) {
        request = json_incref(t->request);
        answers = json_deep_copy(t->answers);
        state = json_incref(t->state);
        round = t->rounds + 1;
    }
    uv_mutex_unlock(&ts->lock);
    if (request == NULL)
        return; /* cancelled or gone meanwhile */
    mcp_ctx *ctx = ts_sess != NULL ? mcp__ctx_new_task(ts_sess, request, s->principal) : NULL;
    json_decref(request);
    int rc = ctx != NULL && answers != NULL ? MCP_OK : MCP_ENOMEM;
    if (rc == MCP_OK) {
        ctx->task_id = mcp__strdup(id);
        ctx->prior = answers;
        ctx->state_in = state;
        ctx->round = round;
        answers = state = NULL;
        if (ctx->task_id == NULL)
            rc = MCP_ENOMEM;
        else
            mcp__tool_prepare(ctx);
    }
    json_decref(answers);
    json_decref(state);
    uv_mutex_lock(&ts->lock);
    t = find(ts, id, owner);
    if (t != NULL && t->status == T_WORKING && t->ctx == NULL) {
        if (rc == MCP_OK) {
            t->ctx = ctx;
        } else {
            fail(t, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory resuming the task",
                 NULL);
        }
    } else if (ctx != NULL) {
        rc = MCP_ECANCELED; /* cancelled meanwhile: nothing runs */
    }
    uv_mutex_unlock(&ts->lock);
    if (ctx == NULL)
        return;
    if (rc != MCP_OK) {
        free(ctx->task_id);
        ctx->task_id = NULL;
        ctx->invoke = NULL;
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "Internal error: not resumed");
    }
    mcp__ctx_run(ctx, 0);
}

void mcp__tasks_refuse(mcp__inreq *req)
{
    json_t *data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", TASKS_EXT);
    mcp__rpc_respond_error(req, MCP_RPC_MISSING_CAPABILITY,
                           "Missing required client capability: the extension " TASKS_EXT, data);
}

int mcp__tasks_method(const char *method)
{
    return strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
           strcmp(method, "tasks/cancel") == 0;
}

/* Checks the answers of tasks/update against the questions outstanding: NULL when they
 * may be filed, else the message of the -32602 that refuses them all. */
static const char *check_answers(const task *t, const json_t *responses, char *msg, size_t len)
{
    const char *key;
    json_t *answer;
    json_object_foreach((json_t *)responses, key, answer)
    {
        json_t *q = json_object_get(t->inputs, key);
        if (q == NULL)
            continue; /* not outstanding: ignored (never issued, or answered before) */
        const char *method = json_string_value(json_object_get(q, "method"));
        if (!mcp__mrtr_answer_valid(method != NULL ? method : "", answer)) {
            snprintf(msg, len, "Invalid params: inputResponses.%.200s is not a result of %s", key,
                     method != NULL ? method : "its request");
            return msg;
        }
    }
    return NULL;
}

/* Files the answers (checked); 1 when none is outstanding any more. */
static int file_answers(task *t, const json_t *responses)
{
    const char *key;
    json_t *answer;
    void *tmp;
    json_object_foreach_safe((json_t *)responses, tmp, key, answer)
    {
        json_t *q = json_object_get(t->inputs, key);
        char digest[65];
        if (q == NULL || mcp__json_digest_hex(q, digest) != MCP_OK)
            continue;
        json_object_set_new(t->answers, key, json_pack("{s:s, s:O}", "h", digest, "a", answer));
        json_object_del(t->inputs, key);
    }
    if (json_object_size(t->inputs) > 0) {
        t->updated = mcp__wall_ms();
        return 0;
    }
    set_status(t, T_WORKING);
    return 1;
}

void mcp__tasks_dispatch(mcp__session *s, mcp__inreq *req)
{
    struct mcp__tasks *ts = s->rt->srv->tasks;
    const char *m = req->method;
    if (!mcp__tasks_declared(req->meta.caps)) {
        mcp__tasks_refuse(req);
        return;
    }
    const char *id = json_string_value(json_object_get(req->params, "taskId"));
    if (id == NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS,
                               "Invalid params: \"taskId\" must be a string", NULL);
        return;
    }
    json_t *responses = json_object_get(req->params, "inputResponses");
    if (strcmp(m, "tasks/update") == 0 && !json_is_object(responses)) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS,
                               "Invalid params: \"inputResponses\" must be an object of answers",
                               NULL);
        return;
    }
    char owner[65];
    if (owner_of(s->principal, owner) != MCP_OK) {
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    json_t *result = NULL;
    char msg[300];
    const char *refused = NULL;
    int again = 0;
    uv_mutex_lock(&ts->lock);
    sweep(ts, mcp__now_ms());
    task *t = find(ts, id, owner);
    if (t == NULL) {
        refused = "Failed to retrieve task: Task not found (or expired)";
    } else if (strcmp(m, "tasks/get") == 0) {
        result = task_json(ts, t, 1);
    } else if (strcmp(m, "tasks/update") == 0) {
        if (t->status == T_INPUT &&
            (refused = check_answers(t, responses, msg, sizeof msg)) == NULL)
            again = file_answers(t, responses) && t->ctx == NULL;
    } else if (!terminal(t->status)) { /* tasks/cancel: cooperative, an ack whatever comes */
        t->cancel_asked = 1;
        if (t->ctx != NULL)
            mcp__ctx_cancel(t->ctx, "the client cancelled the task (tasks/cancel)");
        else
            set_status(t, T_CANCELLED); /* nothing runs: it waited for input */
    }
    uv_mutex_unlock(&ts->lock);
    if (refused != NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, refused, NULL);
        return;
    }
    if (result == NULL && strcmp(m, "tasks/get") != 0)
        result = json_object(); /* the update's and cancel's ack: resultType alone */
    if (result == NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    mcp__respond(s, req, result);
    if (again)
        rerun(s, id);
}

/* ---- Public ---- */

const char *mcp_ctx_task_id(const mcp_ctx *ctx)
{
    return ctx->task_id;
}
