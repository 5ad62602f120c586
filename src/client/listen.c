/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen for the application (mcp_client_listen), in both eras.
 *
 * The modern era (basic/patterns/subscriptions.mdx): a subscriptions/listen
 * request with no timeout; the server's notifications that name it in
 * _meta["io.modelcontextprotocol/subscriptionId"] go to its callback, the first
 * being notifications/subscriptions/acknowledged; its result is a graceful end,
 * a notifications/cancelled naming it (stdio) an end by the server, and its
 * failure (a broken stream, the connection's end) a drop. mcp_client_cancel()
 * cancels the request as any other: the stream closes over HTTP,
 * notifications/cancelled goes over stdio.
 *
 * The legacy era has no such request: the subscription is the client's own. Its
 * URIs get resources/subscribe, its acknowledgement says what the server declared
 * (and which URIs it took), and the session's list changes and resource updates
 * that match it go to its callback. Its id is one the engine gives out without a
 * request, so that mcp_client_cancel() finds it.
 */
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "protocol/subscriptions.h"

#define ACKNOWLEDGED "notifications/subscriptions/acknowledged"

struct mcp__client_listen {
    mcp__mail mail; /* first: the posted start, then the deferred acknowledgement */
    mcp_client *c;
    json_int_t id;
    mcp_listen_fn fn;
    void *user;
    json_t *filter; /* the SubscriptionFilter asked for */
    int legacy;
    int linked, acked, ended;
    int ack_queued; /* legacy: its mail is in the mailbox: freed when it comes */
    int pending;    /* legacy: resources/subscribe requests still out */
    json_t *ack;    /* legacy: the filter it honours */
    json_t *uris;   /* legacy: the URIs the server took */
    waiter *w;      /* a start posted from another thread: its caller waits for the id */
    mcp__client_listen *prev, *next;
};

static void listen_free(mcp__client_listen *l)
{
    json_decref(l->filter);
    json_decref(l->ack);
    json_decref(l->uris);
    free(l);
}

static void unlink_listen(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    if (!l->linked)
        return;
    MCP__LIST_UNLINK(c->listens, l);
    l->linked = 0;
}

static void deliver(mcp__client_listen *l, mcp_listen_kind kind, const char *method,
                    const json_t *params)
{
    mcp_listen_event ev = {
        .kind = kind, .subscription_id = l->id, .method = method, .params = params};
    l->fn(l->c, &ev, l->user);
}

/* The last event: the listen is unlinked and freed. */
static void end(mcp__client_listen *l, int status, const json_t *result, const mcp_rpc_error *err)
{
    if (l->ended)
        return;
    l->ended = 1;
    unlink_listen(l);
    mcp_listen_event ev = {.kind = MCP_LISTEN_ENDED,
                           .subscription_id = l->id,
                           .params = result,
                           .status = status,
                           .err = err};
    l->fn(l->c, &ev, l->user);
    if (!l->ack_queued)
        listen_free(l);
}

static mcp__client_listen *find(mcp_client *c, json_int_t id)
{
    for (mcp__client_listen *l = c->listens; l != NULL; l = l->next)
        if (l->id == id)
            return l;
    return NULL;
}

static void link_listen(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    l->prev = NULL;
    MCP__LIST_PUSH(c->listens, l);
    l->linked = 1;
}

/* ---- The modern era ---- */

static void listen_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    end(arg, status, result, err);
}

static int start_modern(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    json_t *base = json_pack("{s:O}", "notifications", l->filter);
    json_t *params = base != NULL ? mcp__modern_params(c, c->rev, base) : NULL;
    json_decref(base);
    if (params == NULL)
        return MCP_ENOMEM;
    /* No timeout: a subscription lives until it ends. */
    int rc = mcp__rpc_request(c->rpc, "subscriptions/listen", params, 0, 0, listen_reply, NULL, l,
                              &l->id);
    if (rc == MCP_OK)
        link_listen(l);
    return rc;
}

/* ---- The legacy era ---- */

/* What a capability of the server's declares: caps[name][key] is true. */
static int declared(mcp_client *c, const char *name, const char *key)
{
    return json_is_true(json_object_get(json_object_get(c->server_caps, name), key));
}

static void acknowledge(mcp__client_listen *l)
{
    if (l->acked || l->ended)
        return;
    l->acked = 1;
    if (json_array_size(l->uris) > 0)
        json_object_set(l->ack, "resourceSubscriptions", l->uris);
    json_t *params = json_pack("{s:O}", "notifications", l->ack);
    deliver(l, MCP_LISTEN_ACKNOWLEDGED, ACKNOWLEDGED, params);
    json_decref(params);
}

/* The acknowledgement of a legacy listen with nothing to subscribe, after the call. */
static void ack_mail(mcp__mail *m)
{
    mcp__client_listen *l = (mcp__client_listen *)m;
    l->ack_queued = 0;
    if (l->ended)
        listen_free(l); /* it ended meanwhile: freed now that the mail is back */
    else
        acknowledge(l);
}

typedef struct sub_req {
    mcp_client *c;
    json_int_t listen;
    char *uri;
} sub_req;

static void sub_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    sub_req *s = arg;
    (void)result;
    mcp__client_listen *l = find(s->c, s->listen);
    if (l != NULL) {
        if (status == MCP_OK)
            json_array_append_new(l->uris, json_string(s->uri));
        else
            mcp__warn("listen: resources/subscribe %s: %s%s%s", s->uri, mcp_strerror(status),
                      err != NULL ? ": " : "", err != NULL ? err->message : "");
        if (--l->pending == 0)
            acknowledge(l);
    }
    free(s->uri);
    free(s);
}

static int start_legacy(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    l->legacy = 1;
    l->id = mcp__rpc_take_id(c->rpc);
    l->ack = json_object();
    l->uris = json_array();
    if (l->ack == NULL || l->uris == NULL)
        return MCP_ENOMEM;
    static const struct {
        const char *key, *cap;
    } kinds[] = {{"toolsListChanged", "tools"},
                 {"promptsListChanged", "prompts"},
                 {"resourcesListChanged", "resources"}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
        if (json_is_true(json_object_get(l->filter, kinds[i].key)) &&
            declared(c, kinds[i].cap, "listChanged"))
            json_object_set_new(l->ack, kinds[i].key, json_true());
    link_listen(l);
    const json_t *uris = json_object_get(l->filter, "resourceSubscriptions");
    if (declared(c, "resources", "subscribe")) {
        size_t i;
        const json_t *u;
        json_array_foreach(uris, i, u)
        {
            sub_req *s = calloc(1, sizeof(*s));
            json_t *params = json_pack("{s:O}", "uri", u);
            if (s == NULL || params == NULL ||
                (s->uri = mcp__strdup(json_string_value(u))) == NULL) {
                free(s);
                json_decref(params);
                continue;
            }
            s->c = c;
            s->listen = l->id;
            l->pending++;
            if (mcp__rpc_request(c->rpc, "resources/subscribe", params, 0, c->timeout_ms, sub_reply,
                                 NULL, s, NULL) != MCP_OK) {
                l->pending--;
                free(s->uri);
                free(s);
            }
        }
    }
    if (l->pending == 0) {
        l->mail.fn = ack_mail; /* never from inside mcp_client_listen */
        l->ack_queued = mcp__mailbox_post(&c->mb, &l->mail) == MCP_OK;
        if (!l->ack_queued)
            acknowledge(l);
    }
    return MCP_OK;
}

/* Unsubscribes the URIs of l that no other legacy listen holds. */
static void unsubscribe(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    size_t i;
    const json_t *u;
    json_array_foreach(l->uris, i, u)
    {
        int held = 0;
        for (mcp__client_listen *k = c->listens; k != NULL && !held; k = k->next) {
            size_t j;
            const json_t *v;
            if (k == l || !k->legacy)
                continue;
            json_array_foreach(k->uris, j, v) held |= json_equal(u, v);
        }
        if (!held && c->rpc != NULL)
            mcp__rpc_request(c->rpc, "resources/unsubscribe", json_pack("{s:O}", "uri", u), 0,
                             c->timeout_ms, NULL, NULL, NULL, NULL);
    }
}

/* Whether a legacy listen l takes the session's notification method (params). */
static int takes(const mcp__client_listen *l, const char *method, const json_t *params)
{
    if (!l->acked)
        return 0;
    const char *key = NULL;
    if (strcmp(method, "notifications/tools/list_changed") == 0)
        key = "toolsListChanged";
    else if (strcmp(method, "notifications/prompts/list_changed") == 0)
        key = "promptsListChanged";
    else if (strcmp(method, "notifications/resources/list_changed") == 0)
        key = "resourcesListChanged";
    if (key != NULL)
        return json_is_true(json_object_get(l->ack, key));
    if (strcmp(method, "notifications/resources/updated") != 0)
        return 0;
    /* "This might be a sub-resource of the one that the client actually subscribed to." */
    const char *uri = json_string_value(json_object_get(params, "uri"));
    size_t i;
    const json_t *u;
    json_array_foreach(l->uris, i, u)
    {
        const char *s = json_string_value(u);
        if (uri != NULL && strncmp(uri, s, strlen(s)) == 0)
            return 1;
    }
    return 0;
}

static int legacy_notification(mcp_client *c, const char *method, const json_t *params)
{
    /* The ids first: a callback may cancel listens (and free them). */
    size_t n = 0, cap = 0;
    json_int_t *ids = NULL;
    for (mcp__client_listen *l = c->listens; l != NULL; l = l->next) {
        if (!l->legacy || !takes(l, method, params))
            continue;
        if (n == cap) {
            json_int_t *more = realloc(ids, (cap = cap ? cap * 2 : 8) * sizeof(*ids));
            if (more == NULL)
                break;
            ids = more;
        }
        ids[n++] = l->id;
    }
    for (size_t i = 0; i < n; i++) {
        mcp__client_listen *l = find(c, ids[i]);
        if (l != NULL)
            deliver(l, MCP_LISTEN_NOTIFICATION, method, params);
    }
    free(ids);
    return n > 0;
}

/* ---- Both eras ---- */

int mcp__client_listen_note(mcp_client *c, const char *method, const json_t *params)
{
    if (c->listens == NULL || !c->connected)
        return 0;
    if (!mcp__client_modern(c))
        return legacy_notification(c, method, params);
    const json_t *sub = json_object_get(json_object_get(params, "_meta"), MCP__META_SUBSCRIPTION);
    if (sub == NULL) {
        /* Over stdio the server ends a subscription with notifications/cancelled. */
        const json_t *rid = json_object_get(params, "requestId");
        mcp__client_listen *l =
            strcmp(method, "notifications/cancelled") == 0 && json_is_integer(rid)
                ? find(c, json_integer_value(rid))
                : NULL;
        if (l == NULL || l->legacy)
            return 0;
        mcp_rpc_error err = {0};
        snprintf(err.message, sizeof(err.message), "the server ended the subscription%s%.200s",
                 json_is_string(json_object_get(params, "reason")) ? ": " : "",
                 json_string_value(json_object_get(params, "reason"))
                     ? json_string_value(json_object_get(params, "reason"))
                     : "");
        if (mcp__rpc_fail(c->rpc, l->id, MCP_ECLOSED, &err) != MCP_OK)
            end(l, MCP_ECLOSED, NULL, &err);
        return 1;
    }
    mcp__client_listen *l = json_is_integer(sub) ? find(c, json_integer_value(sub)) : NULL;
    if (l == NULL || l->legacy) {
        mcp__debug("%s for a subscription the client does not have: dropped", method);
        return 1;
    }
    if (strcmp(method, ACKNOWLEDGED) == 0) {
        if (l->acked)
            return 1; /* once */
        l->acked = 1;
        deliver(l, MCP_LISTEN_ACKNOWLEDGED, method, params);
        return 1;
    }
    deliver(l, MCP_LISTEN_NOTIFICATION, method, params);
    return 1;
}

int mcp__client_listen_cancel(mcp_client *c, json_int_t id)
{
    mcp__client_listen *l = find(c, id);
    if (l == NULL || !l->legacy)
        return 0; /* a modern listen is a request of the engine's: cancelled as one */
    unsubscribe(l);
    end(l, MCP_ECANCELED, NULL, NULL);
    return 1;
}

void mcp__client_listen_fail_all(mcp_client *c, int status, const char *why)
{
    mcp_rpc_error err = {0};
    snprintf(err.message, sizeof(err.message), "%s", why != NULL ? why : mcp_strerror(status));
    while (c->listens != NULL)
        end(c->listens, status, NULL, &err);
}

/* ---- Opening one ---- */

static int start(mcp__client_listen *l)
{
    mcp_client *c = l->c;
    if (c->rpc == NULL || !c->connected || c->closing || mcp__rpc_closed(c->rpc))
        return MCP_ECLOSED;
    return mcp__client_modern(c) ? start_modern(l) : start_legacy(l);
}

/* A listen posted by another thread, which waits for its id. */
static void start_mail(mcp__mail *m)
{
    mcp__client_listen *l = (mcp__client_listen *)m;
    waiter *w = l->w;
    l->w = NULL;
    int rc = start(l);
    json_int_t id = l->id;
    if (rc != MCP_OK) {
        unlink_listen(l);
        listen_free(l);
    }
    w->status = rc; /* read by the poster once the id is set, under its lock */
    mcp__waiter_set_id(w, id);
}

/* The filter as JSON; NULL when a URI is not UTF-8 or memory runs out. */
static json_t *filter_json(const mcp_listen_filter *f)
{
    json_t *j = json_object();
    if (j == NULL)
        return NULL;
    if (f->tools_list_changed)
        json_object_set_new(j, "toolsListChanged", json_true());
    if (f->prompts_list_changed)
        json_object_set_new(j, "promptsListChanged", json_true());
    if (f->resources_list_changed)
        json_object_set_new(j, "resourcesListChanged", json_true());
    if (f->resource_uris != NULL) {
        json_t *uris = json_array();
        for (size_t i = 0; uris != NULL && f->resource_uris[i] != NULL; i++) {
            json_t *u = json_string(f->resource_uris[i]);
            if (u == NULL || json_array_append_new(uris, u) != 0) {
                json_decref(uris);
                uris = NULL;
            }
        }
        if (uris == NULL || json_object_set_new(j, "resourceSubscriptions", uris) != 0) {
            json_decref(j);
            return NULL;
        }
    }
    return j;
}

int mcp_client_listen(mcp_client *c, const mcp_listen_filter *filter, mcp_listen_fn fn, void *user,
                      long long *subscription_id)
{
    mcp_listen_filter f;
    if (c == NULL || fn == NULL || mcp__opts_copy(&f, sizeof(f), filter, sizeof(f)) != MCP_OK)
        return MCP_EINVAL;
    if (!c->connected || c->closing)
        return MCP_ECLOSED;
    mcp__client_listen *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return MCP_ENOMEM;
    l->c = c;
    l->fn = fn;
    l->user = user;
    if ((l->filter = filter_json(&f)) == NULL) {
        free(l);
        return MCP_EINVAL;
    }
    int rc;
    json_int_t id = -1;
    uv_thread_t self = uv_thread_self();
    if (c->running && uv_thread_equal(&self, &c->thread)) {
        rc = start(l);
        id = l->id;
        if (rc != MCP_OK) {
            unlink_listen(l);
            listen_free(l);
        }
    } else {
        waiter w;
        if (mcp__waiter_init(&w) != MCP_OK) {
            listen_free(l);
            return MCP_EIO;
        }
        l->w = &w;
        l->mail.fn = start_mail;
        rc = mcp__mailbox_post(&c->mb, &l->mail);
        if (rc != MCP_OK) {
            listen_free(l);
        } else {
            uv_mutex_lock(&w.lock);
            while (!w.id_set)
                uv_cond_wait(&w.cond, &w.lock);
            uv_mutex_unlock(&w.lock);
            rc = w.status;
            id = w.id;
        }
        mcp__waiter_destroy(&w);
    }
    if (rc == MCP_OK && subscription_id != NULL)
        *subscription_id = id;
    return rc;
}
