/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28, the modern era, on the server: a request that names its
 * revision in _meta is served on its own, with no initialize and nothing of a
 * session (changelog, versioning.mdx). This file decides a request's era,
 * checks its _meta, answers server/discover and the methods the revision
 * removed, and gives results what the revision adds to them: resultType, the
 * server's identity in _meta, and caching hints.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/meta.h"
#include "server/server_int.h"

#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* The methods whose results carry caching hints (CacheableResult), in the order of
 * mcp_server.cache. */
static const char *const cacheable[MCP__CACHE_N] = {
    "tools/list",     "prompts/list",    "resources/list", "resources/templates/list",
    "resources/read", "server/discover",
};

int mcp__cache_index(const char *method)
{
    for (int i = 0; i < MCP__CACHE_N; i++)
        if (strcmp(method, cacheable[i]) == 0)
            return i;
    return -1;
}

int mcp_server_set_cache_hint(mcp_server *srv, const char *method, long long ttl_ms,
                              int public_scope)
{
    if (srv == NULL || ttl_ms < 0)
        return MCP_EINVAL;
    int i = method != NULL ? mcp__cache_index(method) : -1;
    if (method != NULL && i < 0)
        return MCP_EINVAL;
    for (int k = 0; k < MCP__CACHE_N; k++) {
        if (method != NULL && k != i)
            continue;
        srv->cache[k].ttl_ms = ttl_ms;
        srv->cache[k].public_scope = public_scope != 0;
    }
    return MCP_OK;
}

int mcp_server_set_eras(mcp_server *srv, unsigned eras)
{
    if (srv == NULL || eras == 0 || (eras & ~(MCP_ERA_LEGACY | MCP_ERA_MODERN)) != 0)
        return MCP_EINVAL;
    srv->eras = eras;
    return MCP_OK;
}

/* The versions the server speaks, newest first, as the -32022 error and server/discover
 * list them. */
static json_t *supported_versions(const mcp_server *srv)
{
    json_t *list = json_array();
    for (size_t i = 0; i < mcp__revision_count(); i++) {
        const mcp__revision *rev = mcp__revision_at(i);
        if (srv->eras & (rev->modern ? MCP_ERA_MODERN : MCP_ERA_LEGACY))
            json_array_append_new(list, json_string(rev->version));
    }
    return list;
}

void mcp__respond_unsupported_version(mcp_server *srv, mcp__inreq *req, const char *requested)
{
    json_t *data = json_pack("{s:o}", "supported", supported_versions(srv));
    if (data != NULL && requested != NULL)
        json_object_set_new(data, "requested", json_string(requested));
    char msg[200];
    snprintf(msg, sizeof(msg), "Unsupported protocol version: %.64s",
             requested != NULL ? requested : "(none)");
    mcp__rpc_respond_error(req, MCP_RPC_UNSUPPORTED_VERSION, msg, data);
}

json_t *mcp__modern_info_meta(json_t *info)
{
    return info != NULL ? json_pack("{s:O}", META_SERVER_INFO, info) : NULL;
}

json_t *mcp__modern_decorate(mcp_server *srv, const char *method, json_t *result)
{
    if (!json_is_object(result))
        return result;
    json_t *type_v = json_object_get(result, "resultType");
    if (type_v == NULL)
        json_object_set(result, "resultType", type_v = srv->complete);
    const char *type = json_string_value(type_v);
    json_t *meta = json_object_get(result, "_meta");
    if (!json_is_object(meta)) {
        /* The shared {serverInfo}: nothing changes a result once it is decorated, it is
         * only written and dropped. */
        json_object_set(result, "_meta", srv->info_meta);
    } else if (json_object_get(meta, META_SERVER_INFO) == NULL) {
        json_object_set(meta, META_SERVER_INFO, srv->info);
    }
    /* Caching hints go on complete results only (caching.mdx). */
    int i = mcp__cache_index(method);
    if (i >= 0 && type != NULL && strcmp(type, "complete") == 0) {
        if (json_object_get(result, "ttlMs") == NULL)
            json_object_set_new(result, "ttlMs", json_integer(srv->cache[i].ttl_ms));
        if (json_object_get(result, "cacheScope") == NULL)
            json_object_set_new(result, "cacheScope",
                                json_string(srv->cache[i].public_scope ? "public" : "private"));
    }
    return result;
}

/* What server/discover says the server offers: in this revision listChanged and
 * subscribe mean that subscriptions/listen delivers those notifications, which it does
 * on every transport. */
static void do_discover(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    json_t *result = json_pack("{s:o, s:o}", "supportedVersions", supported_versions(srv),
                               "capabilities", mcp__server_capabilities(srv, 0));
    if (result != NULL && srv->instructions != NULL)
        json_object_set_new(result, "instructions", json_string(srv->instructions));
    mcp__respond(s, req, result);
}

void mcp__dispatch_modern(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    req->flags |= MCP__REQ_MODERN;
    s->modern = 1;
    /* A malformed request is refused whatever version it names (basic/index.mdx, _meta):
     * the same judgement as the HTTP transport's, before it looks at the headers. */
    const char *bad = mcp__meta_judge(&req->meta);
    if (bad != NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, bad, NULL);
        return;
    }
    const char *version = json_string_value(req->meta.version);
    const mcp__revision *rev = mcp__revision_find(version);
    if (rev == NULL || !rev->modern || !(srv->eras & MCP_ERA_MODERN)) {
        mcp__respond_unsupported_version(srv, req, version);
        return;
    }
    const char *m = req->method;
    if (strcmp(m, "server/discover") == 0) {
        do_discover(s, req);
    } else if (strcmp(m, "subscriptions/listen") == 0) {
        mcp__listen_open(s, req);
    } else if (mcp__tasks_offered(srv) && mcp__tasks_method(m)) {
        mcp__tasks_dispatch(s, req);
    } else if (mcp__revision_removed_method(m)) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Method not found: %s (not part of protocol version %s)", m,
                 rev->version);
        mcp__rpc_respond_error(req, MCP_RPC_METHOD_NOT_FOUND, msg, NULL);
    } else {
        mcp__dispatch_method(s, req);
    }
}

/* The level below which a request's logs are not sent: its _meta's in this revision (none
 * without one: the client did not opt in), the session's before. */
int mcp__req_log_level(const mcp__session *s, const mcp__inreq *req)
{
    if (!(req->flags & MCP__REQ_MODERN))
        return (int)s->level;
    int level = mcp_log_level_parse(json_string_value(req->meta.level));
    return level >= 0 ? level : MCP_LOG_EMERGENCY + 1;
}

const json_t *mcp__req_client_caps(const mcp__session *s, const mcp__inreq *req)
{
    if (!(req->flags & MCP__REQ_MODERN))
        return s->client_caps;
    return req->meta.caps;
}

const json_t *mcp__req_client_info(const mcp__session *s, const mcp__inreq *req)
{
    if (!(req->flags & MCP__REQ_MODERN))
        return s->client_info;
    return req->meta.info != NULL ? req->meta.info : s->rt->srv->empty;
}
