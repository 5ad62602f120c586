/* SPDX-License-Identifier: MIT */
/*
 * The in-memory task store (store/tasks.h), and the rules every store applies to a
 * record. Records sit in a map by id and a list in order of expiry: one TTL serves a
 * server, so the order of creation is the order of expiry and the expired ones are
 * always at the head. Every operation runs under one lock, so that the runtimes of a
 * process share the store; callbacks run after it is released.
 */
#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include <mcp/common.h>

#include "store/tasks.h"
#include "util/util.h"

/* ---- Rules ---- */

int mcp__task_terminal(const char *status)
{
    return status != NULL && (strcmp(status, "completed") == 0 || strcmp(status, "failed") == 0 ||
                              strcmp(status, "cancelled") == 0);
}

void mcp__task_set_status(json_t *rec, const char *status, long long now_ms)
{
    json_object_set_new(rec, "status", json_string(status));
    json_object_set_new(rec, "updated", json_integer(now_ms));
    if (mcp__task_terminal(status)) {
        static const char *const live_only[] = {"request", "answers", "inputs", "state", "run"};
        for (size_t i = 0; i < sizeof live_only / sizeof *live_only; i++)
            json_object_del(rec, live_only[i]);
    }
    if (strcmp(status, "input_required") != 0)
        json_object_del(rec, "inputs");
}

static const char *status_of(const json_t *rec)
{
    return json_string_value(json_object_get(rec, "status"));
}

int mcp__task_apply_answer(json_t *rec, const json_t *answers, const char *run, long long now_ms)
{
    const char *status = status_of(rec);
    json_t *inputs = json_object_get(rec, "inputs");
    if (status == NULL || strcmp(status, "input_required") != 0 || !json_is_object(inputs))
        return MCP_ESTATE;
    json_t *filed = json_object_get(rec, "answers");
    if (!json_is_object(filed)) {
        filed = json_object();
        json_object_set_new(rec, "answers", filed);
    }
    const char *key;
    json_t *answer;
    json_object_foreach((json_t *)answers, key, answer)
    {
        if (json_object_get(inputs, key) == NULL)
            continue; /* not outstanding: never asked, or answered before */
        json_object_set(filed, key, answer);
        json_object_del(inputs, key);
    }
    if (json_object_size(inputs) > 0) {
        json_object_set_new(rec, "updated", json_integer(now_ms));
        return MCP_OK;
    }
    mcp__task_set_status(rec, "working", now_ms);
    json_object_set_new(rec, "run", json_string(run));
    return MCP_OK;
}

int mcp__task_apply_cancel(json_t *rec, long long now_ms)
{
    if (mcp__task_terminal(status_of(rec)))
        return MCP_ESTATE;
    json_object_set_new(rec, "cancel", json_true());
    if (json_object_get(rec, "run") == NULL)
        mcp__task_set_status(rec, "cancelled", now_ms); /* nothing runs: it waited */
    return MCP_OK;
}

int mcp__task_apply_finish(json_t *rec, const char *run, const json_t *outcome, long long now_ms)
{
    const char *mine = json_string_value(json_object_get(rec, "run"));
    const char *to = json_string_value(json_object_get(outcome, "status"));
    if (mine == NULL || strcmp(mine, run) != 0 || to == NULL || mcp__task_terminal(status_of(rec)))
        return MCP_ESTATE;
    json_object_del(rec, "run");
    if (json_is_true(json_object_get(rec, "cancel"))) {
        mcp__task_set_status(rec, "cancelled", now_ms);
    } else if (strcmp(to, "input_required") == 0) {
        json_object_set(rec, "inputs", json_object_get(outcome, "inputs"));
        json_t *state = json_object_get(outcome, "state");
        if (state != NULL)
            json_object_set(rec, "state", state);
        else
            json_object_del(rec, "state");
        json_int_t rounds = json_integer_value(json_object_get(rec, "rounds"));
        json_object_set_new(rec, "rounds", json_integer(rounds + 1));
        json_object_set_new(rec, "status", json_string("input_required"));
        json_object_set_new(rec, "updated", json_integer(now_ms));
    } else if (strcmp(to, "completed") == 0) {
        json_object_set(rec, "result", json_object_get(outcome, "result"));
        mcp__task_set_status(rec, "completed", now_ms);
    } else {
        json_object_set(rec, "error", json_object_get(outcome, "error"));
        mcp__task_set_status(rec, "failed", now_ms);
    }
    return MCP_OK;
}

/* ---- The store ---- */

/* A record is kept as its compact JSON text: a tree of small values costs many times its
 * text, and the budget counts what is kept. */
typedef struct mtask {
    char *text;
    size_t len;
    char *id;
    char *owner;
    long long expires;
    struct mtask *prev, *next;
} mtask;

typedef struct mstore {
    uv_mutex_t lock;
    mcp__map by_id;
    mcp__map owners; /* owner -> how many unexpired tasks it holds */
    size_t total;
    size_t bytes, max_bytes;
    mtask *head, *tail;
} mstore;

static void owner_count(mstore *m, const char *owner, int delta)
{
    uintptr_t n = (uintptr_t)mcp__map_get(&m->owners, owner) + (uintptr_t)(intptr_t)delta;
    if (n == 0)
        mcp__map_remove(&m->owners, owner);
    else
        (void)mcp__map_put(&m->owners, owner, (void *)n); /* the key exists: no allocation */
}

static void task_release(mtask *t)
{
    free(t->text);
    free(t->id);
    free(t->owner);
    free(t);
}

static void drop(mstore *m, mtask *t)
{
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        m->head = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    else
        m->tail = t->prev;
    mcp__map_remove(&m->by_id, t->id);
    owner_count(m, t->owner, -1);
    m->total--;
    m->bytes -= t->len;
    task_release(t);
}

/* Forgets what has expired; returns the bytes freed. */
static size_t sweep(mstore *m)
{
    size_t before = m->bytes;
    long long now = (long long)mcp__wall_ms();
    while (m->head != NULL && m->head->expires <= now)
        drop(m, m->head);
    return before - m->bytes;
}

/* After the lock: records are many blocks, which the allocator keeps for the process once
 * freed; after a large expiry the memory goes back to the system. */
static void trimmed(size_t freed)
{
#ifdef __GLIBC__
    if (freed >= (64u << 10))
        malloc_trim(0);
#else
    (void)freed;
#endif
}

/* Under the lock: the task id of owner (NULL: any), or NULL (another owner's is not told
 * apart). */
static mtask *find(mstore *m, const char *id, const char *owner)
{
    mtask *t = mcp__map_get(&m->by_id, id);
    if (t != NULL && t->expires <= (long long)mcp__wall_ms()) {
        /* Expired out of order (its TTL was shorter than one before it): gone now. */
        drop(m, t);
        return NULL;
    }
    return t != NULL && (owner == NULL || strcmp(t->owner, owner) == 0) ? t : NULL;
}

/* Whether v nests deeper than a record that can be read back (jansson's parser stops at
 * 2048 levels): such a record is not kept. */
static int too_deep(const json_t *v, int depth)
{
    if (depth > 2000)
        return 1;
    const char *key;
    json_t *item;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            if (too_deep(item, depth + 1))
                return 1;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            if (too_deep(item, depth + 1))
                return 1;
        }
    }
    return 0;
}

static char *dump(const json_t *rec, size_t *len)
{
    char *text = too_deep(rec, 0) ? NULL : json_dumps(rec, JSON_COMPACT);
    *len = text != NULL ? strlen(text) : 0;
    return text;
}

static void m_create(void *self, const json_t *rec, size_t max_owner, size_t max_total,
                     mcp__task_cb cb, void *arg)
{
    mstore *m = self;
    const char *id = json_string_value(json_object_get(rec, "id"));
    const char *owner = json_string_value(json_object_get(rec, "owner"));
    mtask *t = calloc(1, sizeof(*t));
    if (t == NULL || id == NULL || owner == NULL || (t->owner = mcp__strdup(owner)) == NULL ||
        (t->id = mcp__strdup(id)) == NULL || (t->text = dump(rec, &t->len)) == NULL) {
        if (t != NULL)
            task_release(t);
        cb(arg, MCP_ENOMEM, NULL);
        return;
    }
    t->expires = json_integer_value(json_object_get(rec, "expires"));
    uv_mutex_lock(&m->lock);
    size_t freed = sweep(m);
    int rc = MCP_OK;
    uintptr_t held = (uintptr_t)mcp__map_get(&m->owners, owner);
    if (m->total >= max_total || held >= max_owner || m->bytes + t->len > m->max_bytes)
        rc = MCP_ELIMIT;
    else if (mcp__map_put(&m->owners, owner, (void *)(held + 1)) != MCP_OK)
        rc = MCP_ENOMEM;
    else if (mcp__map_put(&m->by_id, t->id, t) != MCP_OK) {
        owner_count(m, owner, -1);
        rc = MCP_ENOMEM;
    }
    if (rc == MCP_OK) {
        t->prev = m->tail;
        if (m->tail != NULL)
            m->tail->next = t;
        else
            m->head = t;
        m->tail = t;
        m->total++;
        m->bytes += t->len;
    }
    uv_mutex_unlock(&m->lock);
    trimmed(freed);
    if (rc != MCP_OK)
        task_release(t);
    cb(arg, rc, rc == MCP_OK ? rec : NULL);
}

/* A change of a record (rec, parsed; a, b its arguments): MCP_OK (rec changed), or why
 * not. */
typedef int (*change_fn)(json_t *rec, const void *a, const void *b, long long now);

/* Runs change on the record under the lock and keeps the result, within the budget;
 * over_budget (may be NULL) is the change made instead of one that does not fit. cb gets
 * the record after. */
static void with_record(mstore *m, const char *id, const char *owner, change_fn fn, const void *a,
                        const void *b, change_fn over_budget, mcp__task_cb cb, void *arg)
{
    uv_mutex_lock(&m->lock);
    size_t freed = sweep(m);
    mtask *t = find(m, id, owner);
    int rc = t != NULL ? MCP_OK : MCP_ENOENT;
    json_t *rec = t != NULL ? json_loadb(t->text, t->len, 0, NULL) : NULL;
    if (t != NULL && rec == NULL)
        rc = MCP_ENOMEM;
    long long now = (long long)mcp__wall_ms();
    if (rc == MCP_OK && fn != NULL && (rc = fn(rec, a, b, now)) == MCP_OK) {
        size_t len;
        char *text = dump(rec, &len);
        if ((text == NULL || m->bytes - t->len + len > m->max_bytes) && over_budget != NULL) {
            /* What does not fit is not kept: the change made instead. */
            free(text);
            json_decref(rec);
            rec = json_loadb(t->text, t->len, 0, NULL);
            rc = rec != NULL ? over_budget(rec, a, b, now) : MCP_ENOMEM;
            text = rc == MCP_OK ? dump(rec, &len) : NULL;
        }
        if (rc == MCP_OK && text == NULL)
            rc = MCP_ENOMEM;
        else if (rc == MCP_OK && m->bytes - t->len + len > m->max_bytes)
            rc = MCP_ELIMIT;
        if (rc == MCP_OK) {
            m->bytes = m->bytes - t->len + len;
            free(t->text);
            t->text = text;
            t->len = len;
        } else {
            free(text);
        }
    }
    uv_mutex_unlock(&m->lock);
    trimmed(freed);
    if (cb != NULL)
        cb(arg, rc, rc == MCP_OK ? rec : NULL);
    json_decref(rec);
}

static void m_get(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg)
{
    with_record(self, id, owner, NULL, NULL, NULL, NULL, cb, arg);
}

static int do_answer(json_t *rec, const void *a, const void *b, long long now)
{
    return mcp__task_apply_answer(rec, a, b, now);
}

static void m_answer(void *self, const char *id, const char *owner, const json_t *answers,
                     const char *run, mcp__task_cb cb, void *arg)
{
    with_record(self, id, owner, do_answer, answers, run, NULL, cb, arg);
}

static int do_cancel(json_t *rec, const void *a, const void *b, long long now)
{
    (void)a, (void)b;
    return mcp__task_apply_cancel(rec, now);
}

static void m_cancel(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg)
{
    with_record(self, id, owner, do_cancel, NULL, NULL, NULL, cb, arg);
}

static int do_finish(json_t *rec, const void *a, const void *b, long long now)
{
    return mcp__task_apply_finish(rec, a, b, now);
}

/* A result or questions too large to keep: the task fails, saying so. */
static int do_finish_too_large(json_t *rec, const void *a, const void *b, long long now)
{
    (void)b;
    json_t *failed = json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code",
                               MCP_RPC_INTERNAL_ERROR, "message",
                               "Internal error: what the task's handler returned is more than "
                               "the server keeps for its tasks now");
    int rc = failed != NULL ? mcp__task_apply_finish(rec, a, failed, now) : MCP_ENOMEM;
    json_decref(failed);
    return rc;
}

static void m_finish(void *self, const char *id, const char *run, const json_t *outcome,
                     mcp__task_cb cb, void *arg)
{
    with_record(self, id, NULL, do_finish, run, outcome, do_finish_too_large, cb, arg);
}

static void m_expire(void *self)
{
    mstore *m = self;
    uv_mutex_lock(&m->lock);
    size_t freed = sweep(m);
    uv_mutex_unlock(&m->lock);
    trimmed(freed);
}

static const mcp__task_store_ops memory_ops = {
    .create = m_create,
    .get = m_get,
    .answer = m_answer,
    .cancel = m_cancel,
    .finish = m_finish,
    .expire = m_expire,
};

mcp__task_store *mcp__task_memory_new(size_t max_bytes)
{
    mcp__task_store *s = calloc(1, sizeof(*s));
    mstore *m = calloc(1, sizeof(*m));
    if (s == NULL || m == NULL || uv_mutex_init(&m->lock) != 0) {
        free(s);
        free(m);
        return NULL;
    }
    m->max_bytes = max_bytes;
    s->ops = &memory_ops;
    s->self = m;
    return s;
}

void mcp__task_memory_set_budget(mcp__task_store *store, size_t max_bytes)
{
    mstore *m = store->self;
    uv_mutex_lock(&m->lock);
    m->max_bytes = max_bytes;
    uv_mutex_unlock(&m->lock);
}

void mcp__task_memory_free(mcp__task_store *store)
{
    if (store == NULL)
        return;
    mstore *m = store->self;
    while (m->head != NULL)
        drop(m, m->head);
    mcp__map_free(&m->by_id);
    mcp__map_free(&m->owners);
    uv_mutex_destroy(&m->lock);
    free(m);
    free(store);
}

size_t mcp__task_memory_count(mcp__task_store *store, size_t *bytes)
{
    mstore *m = store->self;
    uv_mutex_lock(&m->lock);
    size_t n = m->total;
    if (bytes != NULL)
        *bytes = m->bytes;
    uv_mutex_unlock(&m->lock);
    return n;
}
