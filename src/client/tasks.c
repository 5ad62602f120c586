/* SPDX-License-Identifier: MIT */
/*
 * Tasks (the extension io.modelcontextprotocol/tasks) on the client: a tools/call whose
 * answer is a CreateTaskResult is followed to its end, so that the application's call
 * returns the tool's result as if it had come at once (the extension's "Backwards
 * Compatibility"). The client polls tasks/get every pollIntervalMs; a task that asks
 * (input_required) is answered by the same handlers as a Multi Round-Trip round
 * (elicitation, sampling, roots), each key once, with tasks/update; mcp_client_cancel
 * sends tasks/cancel. The task's id goes to mcp_call_opts.on_task first, so that another
 * process can fetch its result (mcp_client_task_result) if this one stops.
 *
 * Every function here runs on the client's loop thread.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"

#define TASKS_EXT "io.modelcontextprotocol/tasks"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
/* Bounds on what a server may ask the client to wait between two polls. */
#define MIN_POLL_MS 20
#define MAX_POLL_MS 60000
#define DEFAULT_POLL_MS 1000

static void poll_send(call *k);

int mcp__task_declare(json_t **params)
{
    if (*params == NULL && (*params = json_object()) == NULL)
        return MCP_ENOMEM;
    json_t *meta = json_object_get(*params, "_meta");
    if (meta == NULL) {
        meta = json_object();
        if (meta == NULL || json_object_set_new(*params, "_meta", meta) != 0)
            return MCP_ENOMEM;
    }
    if (!json_is_object(meta))
        return MCP_EINVAL;
    json_t *caps = json_object_get(meta, META_CAPS);
    if (caps == NULL) {
        caps = json_object();
        if (caps == NULL || json_object_set_new(meta, META_CAPS, caps) != 0)
            return MCP_ENOMEM;
    }
    json_t *ext = json_object_get(caps, "extensions");
    if (ext == NULL) {
        ext = json_object();
        if (ext == NULL || json_object_set_new(caps, "extensions", ext) != 0)
            return MCP_ENOMEM;
    }
    if (!json_is_object(caps) || !json_is_object(ext))
        return MCP_EINVAL;
    return json_object_set_new(ext, TASKS_EXT, json_object()) == 0 ? MCP_OK : MCP_ENOMEM;
}

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

void mcp__task_free(call *k)
{
    if (k->task_timer != NULL) {
        uv_close((uv_handle_t *)k->task_timer, timer_closed);
        k->task_timer = NULL;
    }
    free(k->task_id);
    k->task_id = NULL;
    json_decref(k->task_answered);
    k->task_answered = NULL;
}

/* The params of a request about k's task: its id and the extension declared. */
static json_t *task_params(call *k)
{
    json_t *p = json_pack("{s:s, s:{s:{s:{s:{}}}}}", "taskId", k->task_id, "_meta", META_CAPS,
                          "extensions", TASKS_EXT);
    if (p == NULL)
        return NULL;
    json_t *params = mcp__modern_params(k->c, k->c->rev, p);
    json_decref(p);
    return params;
}

static void ignore_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    (void)arg, (void)status, (void)result, (void)err;
}

/* Sends method about k's task (extra members added to its params, borrowed); reply
 * (ignore_reply: nothing waits for it) gets the answer, k in flight meanwhile. */
static int task_send(call *k, const char *method, const json_t *extra, mcp__reply_fn reply)
{
    mcp_client *c = k->c;
    if (c->rpc == NULL || c->closing || c->tr == NULL || c->tr_closing)
        return MCP_ECLOSED;
    json_t *params = task_params(k);
    if (params == NULL || (extra != NULL && json_object_update(params, (json_t *)extra) != 0)) {
        json_decref(params);
        return MCP_ENOMEM;
    }
    int timeout = k->opts.timeout_ms > 0 ? k->opts.timeout_ms : c->timeout_ms;
    json_int_t id;
    int tracked = reply != ignore_reply;
    int rc =
        mcp__rpc_request(c->rpc, method, params, 0, timeout, reply, NULL, tracked ? k : NULL, &id);
    if (rc == MCP_OK && tracked) {
        k->wire_id = id;
        k->in_flight = 1;
    }
    return rc;
}

void mcp__task_abandon(call *k)
{
    if (k->task_id != NULL)
        (void)task_send(k, "tasks/cancel", NULL, ignore_reply);
}

/* Ends k with a protocol failure (the server's task said something it may not). */
static void task_fail(call *k, int status, const char *why)
{
    mcp_rpc_error e = {0};
    snprintf(e.message, sizeof e.message, "task %.64s: %s", k->task_id ? k->task_id : "", why);
    if (status == MCP_ECANCELED)
        mcp__debug("%s", e.message);
    else
        mcp__warn("%s", e.message);
    mcp__call_reply(k, status, NULL, &e);
}

static void poll_timer(uv_timer_t *t)
{
    call *k = t->data;
    poll_send(k);
}

/* The next poll after the interval, or the end when the task outlived its TTL. */
static void poll_later(call *k, const json_t *task)
{
    json_t *interval = json_object_get(task, "pollIntervalMs");
    if (json_is_integer(interval)) {
        json_int_t ms = json_integer_value(interval);
        k->task_poll_ms = (int)(ms < MIN_POLL_MS   ? MIN_POLL_MS
                                : ms > MAX_POLL_MS ? MAX_POLL_MS
                                                   : ms);
    }
    if (k->task_deadline > 0 && (long long)mcp__wall_ms() >= k->task_deadline) {
        task_fail(k, MCP_ETIMEDOUT, "the task outlived its ttlMs without an end");
        return;
    }
    if (k->task_timer == NULL) {
        uv_timer_t *t = calloc(1, sizeof(*t));
        if (t == NULL) {
            task_fail(k, MCP_ENOMEM, "out of memory");
            return;
        }
        uv_timer_init(k->c->loop, t);
        t->data = k;
        k->task_timer = t;
    }
    uv_timer_start(k->task_timer, poll_timer, (uint64_t)k->task_poll_ms, 0);
}

/* A DetailedTask (tasks/get) of k's task. */
static void task_seen(call *k, const json_t *task)
{
    const char *status = json_string_value(json_object_get(task, "status"));
    const char *id = json_string_value(json_object_get(task, "taskId"));
    if (status == NULL || id == NULL || strcmp(id, k->task_id) != 0) {
        task_fail(k, MCP_EPROTO, "tasks/get answered with no status, or for another task");
        return;
    }
    if (strcmp(status, "working") == 0) {
        poll_later(k, task);
    } else if (strcmp(status, "completed") == 0) {
        json_t *result = json_object_get(task, "result");
        if (!json_is_object(result))
            task_fail(k, MCP_EPROTO, "a completed task without its result");
        else
            mcp__call_reply(k, MCP_OK, result, NULL);
    } else if (strcmp(status, "failed") == 0) {
        json_t *error = json_object_get(task, "error");
        mcp_rpc_error e = {0};
        e.code = json_is_integer(json_object_get(error, "code"))
                     ? (int)json_integer_value(json_object_get(error, "code"))
                     : MCP_RPC_INTERNAL_ERROR;
        snprintf(e.message, sizeof e.message, "%s",
                 json_string_value(json_object_get(error, "message"))
                     ?: "the task failed without saying why");
        e.data = json_incref(json_object_get(error, "data"));
        mcp__call_reply(k, MCP_ERPC, NULL, &e);
        json_decref(e.data);
    } else if (strcmp(status, "cancelled") == 0) {
        task_fail(k, MCP_ECANCELED, "the task was cancelled");
    } else if (strcmp(status, "input_required") == 0) {
        /* Each question once: those answered already are left out (the server shows them
         * until it has taken the answer in). */
        json_t *requests = json_object_get(task, "inputRequests");
        if (!json_is_object(requests)) {
            task_fail(k, MCP_EPROTO, "an input_required task without inputRequests");
            return;
        }
        json_t *fresh = json_object();
        const char *key;
        json_t *q;
        json_object_foreach(requests, key, q)
        {
            if (json_object_get(k->task_answered, key) == NULL)
                json_object_set(fresh, key, q);
        }
        if (json_object_size(fresh) == 0) {
            json_decref(fresh);
            poll_later(k, task);
            return;
        }
        if (json_object_size(requests) > MCP__CLIENT_MAX_INPUTS) {
            json_decref(fresh);
            mcp__task_abandon(k);
            task_fail(k, MCP_ELIMIT,
                      "the task asked for more inputs at once than the client takes");
            return;
        }
        if (k->rounds >= k->c->max_rounds) {
            json_decref(fresh);
            mcp__task_abandon(k);
            task_fail(k, MCP_ELIMIT, "the task asked for input too many times; it is given up");
            return;
        }
        k->rounds++;
        mcp__input_start(k, fresh);
        json_decref(fresh);
    } else {
        task_fail(k, MCP_EPROTO, "a task status this client does not know");
    }
}

static void polled(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    call *k = arg;
    k->in_flight = 0;
    if (k->finished)
        return;
    if (k->task_cancelled) {
        (void)task_send(k, "tasks/cancel", NULL, ignore_reply);
        task_fail(k, MCP_ECANCELED, "cancelled by the application (tasks/cancel sent)");
        return;
    }
    if (status != MCP_OK) {
        mcp__call_reply(k, status, NULL, err);
        return;
    }
    task_seen(k, result);
}

static void poll_send(call *k)
{
    int rc = task_send(k, "tasks/get", NULL, polled);
    if (rc != MCP_OK)
        mcp__call_reply(k, rc, NULL, NULL);
}

static void updated(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    call *k = arg;
    k->in_flight = 0;
    (void)result;
    if (k->finished)
        return;
    if (k->task_cancelled) {
        polled(arg, MCP_OK, NULL, NULL);
        return;
    }
    if (status != MCP_OK) {
        mcp__call_reply(k, status, NULL, err);
        return;
    }
    poll_send(k); /* the answers are in: see at once what they led to */
}

void mcp__task_answered(call *k, json_t *responses)
{
    if (k->task_answered == NULL && (k->task_answered = json_object()) == NULL) {
        task_fail(k, MCP_ENOMEM, "out of memory");
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach(responses, key, v)
    {
        json_object_set_new(k->task_answered, key, json_true());
    }
    json_t *extra = json_pack("{s:O}", "inputResponses", responses);
    int rc = extra != NULL ? task_send(k, "tasks/update", extra, updated) : MCP_ENOMEM;
    json_decref(extra);
    if (rc != MCP_OK)
        mcp__call_reply(k, rc, NULL, NULL);
}

int mcp__task_cancel(call *k, const char *reason)
{
    (void)reason;
    if (k->in_flight) {
        k->task_cancelled = 1; /* after the request under way: see polled */
        if (k->c->rpc != NULL)
            mcp__rpc_cancel(k->c->rpc, k->wire_id, "cancelled by the application");
        return 1;
    }
    /* Now, also while the handlers answer its questions: what they answer is dropped
     * (input_done frees the call it finds finished). */
    (void)task_send(k, "tasks/cancel", NULL, ignore_reply);
    task_fail(k, MCP_ECANCELED, "cancelled by the application (tasks/cancel sent)");
    return 1;
}

/* k becomes the follower of the task task describes (a CreateTaskResult or a
 * DetailedTask). */
static int task_adopt(call *k, const json_t *task)
{
    const char *id = json_string_value(json_object_get(task, "taskId"));
    if (id == NULL || id[0] == '\0' || strlen(id) > 1024) {
        mcp__call_reply(k, MCP_EPROTO, NULL, NULL);
        return 0;
    }
    if (k->task_id == NULL && (k->task_id = mcp__strdup(id)) == NULL) {
        mcp__call_reply(k, MCP_ENOMEM, NULL, NULL);
        return 0;
    }
    k->task_poll_ms = DEFAULT_POLL_MS;
    json_t *ttl = json_object_get(task, "ttlMs");
    long long now = (long long)mcp__wall_ms();
    if (json_is_integer(ttl) && json_integer_value(ttl) > 0)
        k->task_deadline =
            json_integer_value(ttl) > LLONG_MAX - now ? LLONG_MAX : now + json_integer_value(ttl);
    return 1;
}

int mcp__task_reply(call *k, int status, const json_t *result, const mcp_rpc_error *err)
{
    (void)err;
    if (k->task_follow) {
        /* mcp_client_task_result: the first tasks/get. */
        if (status != MCP_OK) {
            mcp__call_reply(k, status, NULL, err);
            return 1;
        }
        k->task_follow = 0;
        const char *want = json_string_value(json_object_get(k->params, "taskId"));
        const char *got = json_string_value(json_object_get(result, "taskId"));
        if (want == NULL || got == NULL || strcmp(want, got) != 0) {
            mcp_rpc_error e = {0};
            snprintf(e.message, sizeof e.message, "tasks/get answered for another task");
            mcp__call_reply(k, MCP_EPROTO, NULL, &e);
            return 1;
        }
        if (task_adopt(k, result))
            task_seen(k, result);
        return 1;
    }
    const char *type = json_string_value(json_object_get(result, "resultType"));
    if (status != MCP_OK || type == NULL || strcmp(type, "task") != 0)
        return 0;
    if (strcmp(k->method, "tools/call") != 0) {
        /* The extension: a CreateTaskResult to a request that cannot have one is an
         * invalid answer. */
        mcp_rpc_error e = {0};
        snprintf(e.message, sizeof e.message, "%s answered with a task, which it cannot have",
                 k->method);
        mcp__call_reply(k, MCP_EPROTO, NULL, &e);
        return 1;
    }
    if (!task_adopt(k, result))
        return 1;
    /* The poll is armed first: on_task may cancel the call (and so free k). */
    void (*on_task)(const char *, void *) = k->opts.on_task;
    void *user = k->opts.user;
    char *id = on_task != NULL ? mcp__strdup(k->task_id) : NULL;
    poll_later(k, result);
    if (id != NULL)
        on_task(id, user);
    free(id);
    return 1;
}
