/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28 through the gateway, translated children (see modern.c):
 * subscriptions/listen (basic/patterns/subscriptions.mdx) served by the gateway. It
 * acknowledges what the children's capabilities offer, delivers their list changes,
 * and holds the resource subscriptions at one child (sub_child) for every listener.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/modern_int.h"
#include "protocol/json.h"
#include "protocol/meta.h"
#include "protocol/rpc.h"
#include "protocol/subscriptions.h"
#include "util/seal.h"

/* ---- Subscriptions served by the gateway (translated children) ---- */

void mcp__gwm_listen_send(mlisten *l, const char *method, const json_t *params)
{
    json_t *p = mcp__listen_tagged(params, l->id);
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", p);
    if (n != NULL)
        mcp__gw_to_client(l->s, l->stream, n, 0);
    json_decref(n);
}

/* Takes l out; graceful: its client gets the completion result (subscriptions.mdx), else
 * nothing more goes to it. */
void mcp__gwm_listen_end(gw *g, mlisten *l, int graceful)
{
    gw_modern *m = g->modern;
    for (mlisten **p = &m->listens; *p != NULL; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    m->nlistens--;
    l->s->nlistens--;
    const char *uri;
    json_t *v;
    json_object_foreach(l->uris, uri, v)
    {
        m->uri_bytes -= strlen(uri);
        json_int_t n = json_integer_value(json_object_get(m->res_subs, uri)) - 1;
        if (n > 0) {
            json_object_set_new(m->res_subs, uri, json_integer(n));
            continue;
        }
        json_object_del(m->res_subs, uri);
        if (m->sub_child != NULL && m->sub_child->state == CH_READY)
            mcp__gwm_internal_request(m->sub_child, INT_SUB, "resources/unsubscribe",
                                      json_pack("{s:s}", "uri", uri));
    }
    gw_sess *s = l->s;
    if (graceful) {
        json_t *result = json_pack("{s:s, s:{s:O}}", "resultType", "complete", "_meta",
                                   MCP__META_SUBSCRIPTION, l->id);
        mcp__gwm_reply(
            s, l->stream,
            json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", l->id, "result", result));
    }
    json_decref(l->id);
    json_decref(l->uris);
    free(l);
    if (s->nreqs == 0 && s->nlistens == 0 && s->io->idle != NULL)
        s->io->idle(s->io_user);
}

static int bad_filter(gw_sess *s, uint64_t stream, const json_t *id, const char *why)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "Invalid params: \"notifications\" %s", why);
    mcp__gwm_reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS, msg, NULL);
    return -1;
}

/* subscriptions/listen (subscriptions.mdx) for a translated child: the gateway
 * acknowledges what the child's capabilities offer and delivers the children's
 * notifications; resource subscriptions are the gateway's at one child. */
void mcp__gwm_listen_open(gw_sess *s, gw_child *c, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    gw_modern *m = g->modern;
    json_t *id = json_object_get(msg, "id");
    json_t *f = json_object_get(json_object_get(msg, "params"), "notifications");
    if (m->nlistens >= MAX_LISTENS) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: too many subscriptions open on this server", NULL);
        return;
    }
    if (f != NULL && !json_is_object(f)) {
        bad_filter(s, stream, id, "must be an object");
        return;
    }
    json_t *caps = json_object_get(c->init_result, "capabilities");
    static const struct {
        const char *key, *cap;
        unsigned kind;
    } kinds[] = {{"toolsListChanged", "tools", MCP__LISTEN_TOOLS},
                 {"promptsListChanged", "prompts", MCP__LISTEN_PROMPTS},
                 {"resourcesListChanged", "resources", MCP__LISTEN_RESOURCES}};
    mlisten *l = calloc(1, sizeof(*l));
    json_t *ack = json_object();
    if (l == NULL || ack == NULL) {
        free(l);
        json_decref(ack);
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory",
                             NULL);
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(f, kinds[i].key);
        if (v == NULL)
            continue;
        if (!json_is_boolean(v)) {
            free(l);
            json_decref(ack);
            bad_filter(s, stream, id,
                       "fields toolsListChanged, promptsListChanged and "
                       "resourcesListChanged must be booleans");
            return;
        }
        json_t *cap = json_object_get(caps, kinds[i].cap);
        if (json_is_true(v) && json_is_true(json_object_get(cap, "listChanged"))) {
            l->kinds |= kinds[i].kind;
            json_object_set_new(ack, kinds[i].key, json_true());
        }
    }
    json_t *uris = json_object_get(f, "resourceSubscriptions");
    if (uris != NULL) {
        if (!json_is_array(uris) || json_array_size(uris) > MAX_LISTEN_URIS) {
            free(l);
            json_decref(ack);
            bad_filter(s, stream, id,
                       "resourceSubscriptions must be an array of at most 1000 URIs");
            return;
        }
        size_t i;
        json_t *u;
        json_array_foreach(uris, i, u)
        {
            if (!json_is_string(u)) {
                free(l);
                json_decref(ack);
                bad_filter(s, stream, id, "resourceSubscriptions must hold strings");
                return;
            }
        }
        json_t *kept = json_array();
        json_object_set_new(ack, "resourceSubscriptions", kept);
        int can = json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe"));
        if (can && m->sub_child == NULL)
            m->sub_child = c;
        l->uris = json_object();
        json_array_foreach(uris, i, u)
        {
            const char *uri = json_string_value(u);
            size_t len = strlen(uri);
            if (!can || m->sub_child == NULL || json_object_get(l->uris, uri) != NULL ||
                m->uri_bytes + len > MAX_LISTEN_URI_BYTES)
                continue; /* not honoured: left out of the acknowledgment */
            m->uri_bytes += len;
            json_object_set_new(l->uris, uri, json_true());
            json_array_append(kept, u);
            json_int_t n = json_integer_value(json_object_get(m->res_subs, uri));
            json_object_set_new(m->res_subs, uri, json_integer(n + 1));
            if (n == 0)
                mcp__gwm_internal_request(m->sub_child, INT_SUB, "resources/subscribe",
                                          json_pack("{s:s}", "uri", uri));
        }
    }
    l->s = s;
    l->stream = stream;
    l->id = json_incref(id);
    l->next = m->listens;
    m->listens = l;
    m->nlistens++;
    s->nlistens++;
    json_t *params =
        json_pack("{s:{s:O}, s:o}", "_meta", MCP__META_SUBSCRIPTION, id, "notifications", ack);
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                          "notifications/subscriptions/acknowledged", "params", params);
    if (n != NULL)
        mcp__gw_to_client(s, stream, n, 0);
    json_decref(n);
}
