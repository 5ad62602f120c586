/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen (revision 2026-07-28, basic/patterns/subscriptions.mdx):
 * a long-lived request whose response stream carries the change notifications
 * the client opted in to. The server acknowledges with the subset it honours,
 * tags every notification with the subscription's id (the request's JSON-RPC id)
 * and answers the request only when it ends the subscription itself (a drain);
 * a client ends it by closing the stream (HTTP) or cancelling it (stdio).
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/subscriptions.h"
#include "server/server_int.h"

/* Bounds on what one subscription may ask for. */
#define MAX_LISTEN_URIS 1000
#define MAX_LISTENS_PER_SESSION 64

struct mcp__listen {
    mcp__inreq *req;
    unsigned kinds;
    json_t *uris; /* object used as a set, or NULL */
    mcp__listen *next;
};

static void listen_free(mcp__listen *l)
{
    json_decref(l->uris);
    free(l);
}

/* Takes l off its session's list. */
static void unlink_listen(mcp__session *s, mcp__listen *l)
{
    for (mcp__listen **p = &s->listens; *p != NULL; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            s->nlistens--;
            return;
        }
    }
}

static int bad_filter(mcp__inreq *req, const char *why)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "Invalid params: \"notifications\" %s", why);
    mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, msg, NULL);
    return -1;
}

static int offers(const json_t *caps, const char *kind, const char *flag)
{
    return json_is_true(json_object_get(json_object_get(caps, kind), flag));
}

/* Reads the filter into l and builds the acknowledged subset into ack. */
static int read_filter(mcp__session *s, mcp__inreq *req, mcp__listen *l, json_t *ack)
{
    mcp_server *srv = s->rt->srv;
    json_t *f = json_object_get(req->params, "notifications");
    if (f == NULL)
        return 0;
    if (!json_is_object(f))
        return bad_filter(req, "must be an object");
    static const struct {
        const char *key;
        unsigned kind;
    } flags[] = {{"toolsListChanged", MCP__LISTEN_TOOLS},
                 {"promptsListChanged", MCP__LISTEN_PROMPTS},
                 {"resourcesListChanged", MCP__LISTEN_RESOURCES}};
    /* What server/discover says now. */
    json_t *caps = mcp__server_capabilities(srv, 0);
    int has[3] = {offers(caps, "tools", "listChanged"), offers(caps, "prompts", "listChanged"),
                  offers(caps, "resources", "listChanged")};
    int subscribe = offers(caps, "resources", "subscribe");
    json_decref(caps);
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(f, flags[i].key);
        if (v == NULL)
            continue;
        if (!json_is_boolean(v))
            return bad_filter(req, "fields toolsListChanged, promptsListChanged and "
                                   "resourcesListChanged must be booleans");
        /* The server omits what it does not offer (subscriptions.mdx, Acknowledgment). */
        if (json_is_true(v) && has[i]) {
            l->kinds |= flags[i].kind;
            json_object_set_new(ack, flags[i].key, json_true());
        }
    }
    /* The tasks extension: notifications/tasks for taskIds. A client that asks for them
     * must declare the extension (-32021); this server sends none (they are a MAY: the
     * client polls), so it agrees to none, and says so. */
    json_t *task_ids = json_object_get(f, "taskIds");
    if (task_ids != NULL && mcp__tasks_offered(srv)) {
        if (!json_is_array(task_ids))
            return bad_filter(req, "taskIds must be an array of task ids");
        if (!mcp__tasks_declared(req->meta.caps)) {
            mcp__tasks_refuse(req);
            return -1;
        }
        json_object_set_new(ack, "taskIds", json_array());
    }
    json_t *uris = json_object_get(f, "resourceSubscriptions");
    if (uris == NULL || !subscribe)
        return 0;
    if (!json_is_array(uris) || json_array_size(uris) > MAX_LISTEN_URIS)
        return bad_filter(req, "resourceSubscriptions must be an array of at most 1000 URIs");
    json_t *kept = json_array();
    l->uris = json_object();
    if (kept == NULL || l->uris == NULL) {
        json_decref(kept);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return -1;
    }
    json_object_set_new(ack, "resourceSubscriptions", kept);
    size_t i;
    json_t *u;
    json_array_foreach(uris, i, u)
    {
        if (!json_is_string(u))
            return bad_filter(req, "resourceSubscriptions must hold strings");
        const char *uri = json_string_value(u);
        json_t *vars = NULL;
        uv_mutex_lock(&srv->lock);
        int known =
            mcp__find_resource(srv, uri) != NULL || mcp__match_template(srv, uri, &vars) != NULL;
        uv_mutex_unlock(&srv->lock);
        json_decref(vars);
        if (known && json_object_get(l->uris, uri) == NULL) {
            json_object_set_new(l->uris, uri, json_true());
            json_array_append(kept, u);
        }
    }
    return 0;
}

void mcp__listen_open(mcp__session *s, mcp__inreq *req)
{
    if (s->nlistens >= MAX_LISTENS_PER_SESSION) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_REQUEST,
                               "Invalid Request: too many subscriptions open on this connection",
                               NULL);
        return;
    }
    mcp__listen *l = calloc(1, sizeof(*l));
    json_t *ack = json_object();
    if (l == NULL || ack == NULL) {
        free(l);
        json_decref(ack);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    if (read_filter(s, req, l, ack) != 0) {
        json_decref(ack);
        listen_free(l);
        return;
    }
    l->req = req;
    req->flags |= MCP__REQ_LISTEN;
    req->data = l;
    l->next = s->listens;
    s->listens = l;
    s->nlistens++;
    /* The acknowledgment comes first, before any notification of the subscription. */
    json_t *params =
        json_pack("{s:{s:O}, s:o}", "_meta", MCP__META_SUBSCRIPTION, req->id, "notifications", ack);
    mcp__rpc_notify(s->rpc, "notifications/subscriptions/acknowledged", params, req->stream);
}

/* The subscription's end, by the client or the session's end: no answer goes out. */
void mcp__listen_cancel(mcp__session *s, mcp__inreq *req)
{
    mcp__listen *l = req->data;
    unlink_listen(s, l);
    req->data = NULL;
    req->cancelled = 1;
    mcp__rpc_respond(req, NULL); /* dropped: the request was cancelled */
    listen_free(l);
}

/* The server ends a subscription: its graceful completion result (subscriptions.mdx). */
static void listen_complete(mcp__session *s, mcp__listen *l)
{
    mcp__inreq *req = l->req;
    unlink_listen(s, l);
    req->data = NULL;
    json_t *result = json_pack("{s:{s:O}}", "_meta", MCP__META_SUBSCRIPTION, req->id);
    mcp__respond(s, req, result);
    listen_free(l);
}

void mcp__listen_end_all(mcp__session *s, int graceful)
{
    while (s->listens != NULL) {
        if (graceful)
            listen_complete(s, s->listens);
        else
            mcp__listen_cancel(s, s->listens->req);
    }
}

void mcp__listen_cancel_stream(mcp__session *s, uint64_t stream)
{
    mcp__listen *next;
    for (mcp__listen *l = s->listens; l != NULL; l = next) {
        next = l->next;
        if (l->req->stream == stream)
            mcp__listen_cancel(s, l->req);
    }
}

void mcp__listen_deliver(mcp__session *s, const char *method, const json_t *params)
{
    for (mcp__listen *l = s->listens; l != NULL; l = l->next) {
        if (!mcp__listen_wants(l->kinds, l->uris, method, params))
            continue;
        json_t *p = mcp__listen_tagged(params, l->req->id);
        if (p != NULL)
            mcp__rpc_notify(s->rpc, method, p, l->req->stream);
    }
}
