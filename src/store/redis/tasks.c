/* SPDX-License-Identifier: MIT */
/*
 * The task store on Redis (store/tasks.h), shared by every node of a deployment: each
 * task a hash (P t:<id>) that expires with the task, whose members are the record's (its
 * JSON values as JSON texts), except that the questions outstanding and the answers are
 * one member each ("i:<key>", "a:<key>"): every change is then one Lua script that moves
 * members and never parses a JSON text (Redis's cjson would turn an empty array into an
 * object, and large integers into floats). Who holds how many unexpired tasks is a
 * sorted set per owner (P to:<owner>) and one for all (P tall), scored by expiry.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "redis_int.h"
#include "store/tasks.h"

/* The live-only members go when a task ends. */
#define LUA_END                                                                                    \
    "local function ending(k, status, now) "                                                       \
    "  local del = {'request', 'state', 'run'} "                                                   \
    "  for _, name in ipairs(redis.call('HKEYS', k)) do "                                          \
    "    local p = string.sub(name, 1, 2) "                                                        \
    "    if p == 'i:' or p == 'a:' then del[#del + 1] = name end "                                 \
    "  end "                                                                                       \
    "  redis.call('HDEL', k, unpack(del)) "                                                        \
    "  redis.call('HSET', k, 'status', status, 'updated', now) "                                   \
    "end "                                                                                         \
    "local function terminal(s) "                                                                  \
    "  return s == 'completed' or s == 'failed' or s == 'cancelled' "                              \
    "end "

/* KEYS: the task, its owner's set, the set of all. ARGV: now, expires, the owner's bound,
 * the store's, id, ttl ms, then the members. -3 at a bound. */
static const char create_lua[] =
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1]) "
    "redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1]) "
    "if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) or "
    "   redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[4]) then return -3 end "
    "redis.call('HSET', KEYS[1], unpack(ARGV, 7)) "
    "redis.call('PEXPIRE', KEYS[1], ARGV[6]) "
    "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5]) "
    "redis.call('PEXPIRE', KEYS[2], ARGV[6]) "
    "redis.call('ZADD', KEYS[3], ARGV[2], ARGV[5]) "
    "return 1";

/* The checks every change makes first: -2 no such task for this owner (ARGV[1]; "\1" for
 * any), -1 a terminal one (where that changes nothing). */
#define LUA_FIND(terminal_is_state)                                                                \
    "local f = redis.call('HMGET', KEYS[1], 'owner', 'status', 'run', 'cancel', 'rounds') "        \
    "if not f[2] or (ARGV[1] ~= '\\1' and f[1] ~= ARGV[1]) then return -2 end "                    \
    "if " terminal_is_state " and terminal(f[2]) then return -1 end "

/* ARGV: owner, now, the new run, then key and answer pairs. */
static const char answer_lua[] = LUA_END LUA_FIND(
    "true") "if f[2] ~= 'input_required' then return -1 end "
            "for i = 4, #ARGV, 2 do "
            "  if redis.call('HEXISTS', KEYS[1], 'i:' .. ARGV[i]) == 1 then "
            "    redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1]) "
            "    redis.call('HDEL', KEYS[1], 'i:' .. ARGV[i]) "
            "  end "
            "end "
            "local left = false "
            "for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do "
            "  if string.sub(name, 1, 2) == 'i:' then left = true break end "
            "end "
            "redis.call('HSET', KEYS[1], 'updated', ARGV[2]) "
            "if not left then redis.call('HSET', KEYS[1], 'status', 'working', 'run', ARGV[3]) end "
            "return redis.call('HGETALL', KEYS[1])";

/* ARGV: owner, now. */
static const char cancel_lua[] =
    LUA_END LUA_FIND("true") "redis.call('HSET', KEYS[1], 'cancel', '1') "
                             "if not f[3] then ending(KEYS[1], "
                             "'cancelled', ARGV[2]) end "
                             "return redis.call('HGETALL', KEYS[1])";

/* ARGV: "\1", now, run, status, then the outcome: the result or error (a JSON text), or the
 * state ("" for none) and key and question pairs. */
static const char finish_lua[] = LUA_END LUA_FIND(
    "true") "if f[3] ~= ARGV[3] then return -1 end "
            "redis.call('HDEL', KEYS[1], 'run') "
            "if f[4] == '1' then "
            "  ending(KEYS[1], 'cancelled', ARGV[2]) "
            "elseif ARGV[4] == 'input_required' then "
            "  if ARGV[5] == '' then redis.call('HDEL', KEYS[1], 'state') "
            "  else redis.call('HSET', KEYS[1], 'state', ARGV[5]) end "
            "  for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], 'i:' .. ARGV[i], ARGV[i + 1]) "
            "end "
            "  redis.call('HSET', KEYS[1], 'status', 'input_required', 'updated', ARGV[2], "
            "             'rounds', (tonumber(f[5]) or 0) + 1) "
            "else "
            "  ending(KEYS[1], ARGV[4], ARGV[2]) "
            "  redis.call('HSET', KEYS[1], ARGV[4] == 'completed' and 'result' or 'error', "
            "ARGV[5]) "
            "end "
            "return redis.call('HGETALL', KEYS[1])";

/* ---- Requests ---- */

typedef struct treq {
    mcp__cluster *c;
    mcp__task_cb cb;
    void *arg;
    char owner[65]; /* get: the owner asked for */
} treq;

/* Members that hold JSON texts. */
static int json_member(const char *name)
{
    return strcmp(name, "request") == 0 || strcmp(name, "state") == 0 ||
           strcmp(name, "result") == 0 || strcmp(name, "error") == 0;
}

/* Members that hold integers. */
static int int_member(const char *name)
{
    return strcmp(name, "created") == 0 || strcmp(name, "updated") == 0 ||
           strcmp(name, "expires") == 0 || strcmp(name, "ttl") == 0 || strcmp(name, "rounds") == 0;
}

/* The record of an HGETALL reply (NULL when it is not one). */
static json_t *record_of(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 || r->elements % 2 != 0)
        return NULL;
    json_t *rec = json_object(), *inputs = json_object(), *answers = json_object();
    int ok = rec != NULL && inputs != NULL && answers != NULL;
    for (size_t i = 0; ok && i < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
            ok = 0;
            break;
        }
        const char *name = k->str;
        json_t *value;
        if (strncmp(name, "i:", 2) == 0 || strncmp(name, "a:", 2) == 0 || json_member(name))
            value = mcp__json_parse(v->str, v->len, MCP__JSON_ANY, NULL);
        else if (int_member(name))
            value = json_integer(strtoll(v->str, NULL, 10));
        else if (strcmp(name, "cancel") == 0)
            value = json_true();
        else
            value = json_stringn(v->str, v->len);
        if (value == NULL) {
            ok = 0;
            break;
        }
        if (strncmp(name, "i:", 2) == 0)
            json_object_set_new(inputs, name + 2, value);
        else if (strncmp(name, "a:", 2) == 0)
            json_object_set_new(answers, name + 2, value);
        else
            json_object_set_new(rec, name, value);
    }
    if (ok && json_object_size(inputs) > 0)
        json_object_set(rec, "inputs", inputs);
    if (ok && json_object_get(rec, "status") != NULL &&
        !mcp__task_terminal(json_string_value(json_object_get(rec, "status"))))
        json_object_set(rec, "answers", answers);
    json_decref(inputs);
    json_decref(answers);
    if (!ok || json_object_get(rec, "id") == NULL) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    treq *q = priv;
    redisReply *r = reply;
    if (r == NULL)
        mcp__rc_lost(q->c, ac);
    int status = MCP_ECLOSED;
    json_t *rec = NULL;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER) {
        status = r->integer == 1    ? MCP_OK
                 : r->integer == -1 ? MCP_ESTATE
                 : r->integer == -2 ? MCP_ENOENT
                 : r->integer == -3 ? MCP_ELIMIT
                                    : MCP_ECLOSED;
    } else if (r != NULL && r->type == REDIS_REPLY_ARRAY) {
        rec = record_of(r);
        /* An empty hash: no such task (expired, or never made). */
        status = rec != NULL ? MCP_OK : r->elements == 0 ? MCP_ENOENT : MCP_ECLOSED;
        if (rec != NULL && q->owner[0] != '\1' &&
            strcmp(json_string_value(json_object_get(rec, "owner")) ?: "", q->owner) != 0) {
            json_decref(rec); /* another owner's: not told apart from none */
            rec = NULL;
            status = MCP_ENOENT;
        }
    } else if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        mcp__warn("redis refused a task's change: %.200s", r->str);
    }
    if (q->cb != NULL)
        q->cb(q->arg, status, rec);
    json_decref(rec);
    free(q);
}

/* Sends a command of argc arguments; the callback (may be NULL) gets its answer, or the
 * error at once. */
static void send_cmd(mcp__cluster *c, int argc, const char **argv, const size_t *lens,
                     const char *owner, mcp__task_cb cb, void *arg)
{
    treq *q = calloc(1, sizeof(*q));
    int rc = q != NULL ? MCP_OK : MCP_ENOMEM;
    if (q != NULL) {
        q->c = c;
        q->cb = cb;
        q->arg = arg;
        snprintf(q->owner, sizeof q->owner, "%s", owner);
        rc = mcp__rc_ask_argv(c, on_reply, q, argc, argv, lens);
    }
    if (rc != MCP_OK) {
        free(q);
        if (cb != NULL)
            cb(arg, rc, NULL);
    }
}

/* An argument list, grown as needed; strings are copied (freed with it). */
typedef struct args {
    const char **v;
    size_t *len;
    char **own;
    int n, cap, nown;
    int failed;
} args;

static void add_n(args *a, const char *s, size_t len, int copy)
{
    if (a->failed)
        return;
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 32;
        const char **v = realloc(a->v, (size_t)cap * sizeof(*v));
        if (v != NULL)
            a->v = v;
        size_t *l = v != NULL ? realloc(a->len, (size_t)cap * sizeof(*l)) : NULL;
        if (l != NULL)
            a->len = l;
        char **o = l != NULL ? realloc(a->own, (size_t)cap * sizeof(*o)) : NULL;
        if (o == NULL) {
            a->failed = 1;
            return;
        }
        a->own = o;
        a->cap = cap;
    }
    if (copy) {
        char *d = malloc(len + 1);
        if (d == NULL) {
            a->failed = 1;
            return;
        }
        memcpy(d, s, len);
        d[len] = '\0';
        a->own[a->nown++] = d;
        s = d;
    }
    a->v[a->n] = s;
    a->len[a->n++] = len;
}

static void add(args *a, const char *s)
{
    add_n(a, s, strlen(s), 1);
}

static void add_int(args *a, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    add(a, b);
}

/* A JSON value as a compact text argument. */
static void add_json(args *a, const json_t *v)
{
    char *t = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (t == NULL) {
        a->failed = 1;
        return;
    }
    add(a, t);
    free(t);
}

static void add_key(args *a, mcp__cluster *c, const char *kind, const char *name)
{
    mcp__buf b = {0};
    if (mcp__rc_key(c, &b, kind, name) != MCP_OK)
        a->failed = 1;
    else
        add_n(a, b.data, b.len, 1);
    mcp__buf_free(&b);
}

static void args_free(args *a)
{
    for (int i = 0; i < a->nown; i++)
        free(a->own[i]);
    free(a->v);
    free(a->len);
    free(a->own);
}

/* Sends the command of a, or fails cb with MCP_ENOMEM; frees a. */
static void send_args(mcp__cluster *c, args *a, const char *owner, mcp__task_cb cb, void *arg)
{
    if (a->failed) {
        args_free(a);
        if (cb != NULL)
            cb(arg, MCP_ENOMEM, NULL);
        return;
    }
    send_cmd(c, a->n, a->v, a->len, owner, cb, arg);
    args_free(a);
}

/* EVAL script 1 P t:<id> ARGV... (the first argument of ARGV: owner). */
static void eval_on_task(args *a, mcp__cluster *c, const char *script, const char *id,
                         const char *owner)
{
    add(a, "EVAL");
    add(a, script);
    add(a, "1");
    add_key(a, c, "t:", id);
    add(a, owner);
    add_int(a, (long long)mcp__wall_ms());
}

/* ---- Operations ---- */

/* Answers' keys and questions' keys become member names: mcp_ctx_ask refuses keys longer
 * than 200 bytes; a longer one (from no handler of ours) is left out. */
static int key_ok(const char *key)
{
    return strlen(key) < 256;
}

/* The create script answers 1: its callback gets the record it was given. */
typedef struct created {
    mcp__task_cb cb;
    void *arg;
    json_t *rec;
} created;

static void on_created(void *arg, int status, const json_t *rec)
{
    created *w = arg;
    (void)rec;
    w->cb(w->arg, status, status == MCP_OK ? w->rec : NULL);
    json_decref(w->rec);
    free(w);
}

static void r_create(void *self, const json_t *rec, size_t max_owner, size_t max_total,
                     mcp__task_cb cb, void *arg)
{
    mcp__cluster *c = self;
    const char *id = json_string_value(json_object_get(rec, "id"));
    const char *owner = json_string_value(json_object_get(rec, "owner"));
    long long expires = json_integer_value(json_object_get(rec, "expires"));
    long long ttl = json_integer_value(json_object_get(rec, "ttl"));
    args a = {0};
    add(&a, "EVAL");
    add(&a, create_lua);
    add(&a, "3");
    add_key(&a, c, "t:", id != NULL ? id : "");
    add_key(&a, c, "to:", owner != NULL ? owner : "");
    add_key(&a, c, "tall", "");
    add_int(&a, (long long)mcp__wall_ms());
    add_int(&a, expires);
    add_int(&a, max_owner > (size_t)LLONG_MAX ? LLONG_MAX : (long long)max_owner);
    add_int(&a, max_total > (size_t)LLONG_MAX ? LLONG_MAX : (long long)max_total);
    add(&a, id != NULL ? id : "");
    add_int(&a, ttl > 0 ? ttl : 1);
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)rec, name, v)
    {
        if (strcmp(name, "answers") == 0) {
            const char *key;
            json_t *answer;
            json_object_foreach(v, key, answer)
            {
                char field[300];
                if (!key_ok(key))
                    continue;
                snprintf(field, sizeof field, "a:%s", key);
                add(&a, field);
                add_json(&a, answer);
            }
            continue;
        }
        add(&a, name);
        if (json_is_string(v))
            add(&a, json_string_value(v));
        else if (json_is_integer(v))
            add_int(&a, json_integer_value(v));
        else if (json_is_true(v))
            add(&a, "1");
        else
            add_json(&a, v);
    }
    created *w = calloc(1, sizeof(*w));
    if (w == NULL || (w->rec = json_deep_copy(rec)) == NULL) {
        free(w);
        args_free(&a);
        cb(arg, MCP_ENOMEM, NULL);
        return;
    }
    w->cb = cb;
    w->arg = arg;
    send_args(c, &a, "\1", on_created, w);
}

static void r_get(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg)
{
    mcp__cluster *c = self;
    args a = {0};
    add(&a, "HGETALL");
    add_key(&a, c, "t:", id);
    send_args(c, &a, owner, cb, arg);
}

static void r_answer(void *self, const char *id, const char *owner, const json_t *answers,
                     const char *run, mcp__task_cb cb, void *arg)
{
    mcp__cluster *c = self;
    args a = {0};
    eval_on_task(&a, c, answer_lua, id, owner);
    add(&a, run);
    const char *key;
    json_t *answer;
    json_object_foreach((json_t *)answers, key, answer)
    {
        if (!key_ok(key))
            continue;
        add(&a, key);
        add_json(&a, answer);
    }
    send_args(c, &a, owner, cb, arg);
}

static void r_cancel(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg)
{
    mcp__cluster *c = self;
    args a = {0};
    eval_on_task(&a, c, cancel_lua, id, owner);
    send_args(c, &a, owner, cb, arg);
}

static void r_finish(void *self, const char *id, const char *run, const json_t *outcome,
                     mcp__task_cb cb, void *arg)
{
    mcp__cluster *c = self;
    const char *to = json_string_value(json_object_get(outcome, "status"));
    args a = {0};
    eval_on_task(&a, c, finish_lua, id, "\1");
    add(&a, run);
    add(&a, to != NULL ? to : "failed");
    if (to != NULL && strcmp(to, "input_required") == 0) {
        json_t *state = json_object_get(outcome, "state");
        if (state != NULL && !json_is_null(state))
            add_json(&a, state);
        else
            add(&a, "");
        const char *key;
        json_t *q;
        json_object_foreach(json_object_get(outcome, "inputs"), key, q)
        {
            if (!key_ok(key))
                continue;
            add(&a, key);
            add_json(&a, q);
        }
    } else {
        add_json(&a, json_object_get(
                         outcome, to != NULL && strcmp(to, "completed") == 0 ? "result" : "error"));
    }
    send_args(c, &a, "\1", cb, arg);
}

static const mcp__task_store_ops redis_ops = {
    .create = r_create,
    .get = r_get,
    .answer = r_answer,
    .cancel = r_cancel,
    .finish = r_finish,
    .expire = NULL, /* Redis expires keys itself */
};

mcp__task_store *mcp__cluster_task_store(mcp__cluster *c)
{
    if (c->tasks == NULL && (c->tasks = calloc(1, sizeof(*c->tasks))) != NULL) {
        c->tasks->ops = &redis_ops;
        c->tasks->self = c;
    }
    return c->tasks;
}
