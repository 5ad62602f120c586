/* SPDX-License-Identifier: MIT */
/*
 * What the HTTP transports answer with, whatever the verb: JSON-RPC error bodies
 * with their HTTP status (and, for a 405, the Allow the path's methods make), the
 * CORS headers, and the id a request's body holds. Every verb and the router use
 * it; it uses none of them.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/json.h"
#include "protocol/rpc.h"
#include "transport/shttp.h"

/* The id to echo in an error about the message v (borrowed): a request's string or
 * integer id, even when the rest of it is invalid (JSON-RPC 2.0, Error object: null
 * only when the id could not be read). A response, a notification or a batch has none. */
const json_t *mcp__shttp_request_id(const json_t *v)
{
    const json_t *id = json_object_get(v, "id");
    if (!mcp__id_valid(id))
        return NULL;
    if (json_object_get(v, "method") == NULL &&
        (json_object_get(v, "result") != NULL || json_object_get(v, "error") != NULL))
        return NULL;
    return id;
}

json_t *mcp__shttp_body_id(mcp__http_req *req)
{
    size_t len;
    const char *body = mcp__http_req_body(req, &len);
    if (mcp__http_req_method(req) != MCP__HTTP_POST || len == 0)
        return NULL;
    json_t *v = mcp__json_parse(body, len, MCP__JSON_ANY, NULL);
    json_t *id = json_incref((json_t *)mcp__shttp_request_id(v));
    json_decref(v);
    return id;
}

void mcp__shttp_error_id(shttp *t, mcp__http_req *req, int status, const json_t *id, int code,
                         const char *message)
{
    /* Messages quote header values (Host, Origin, MCP-Protocol-Version), which may hold
     * any byte: as they came, one that is not UTF-8 would leave the error without its
     * body (json_pack refuses it). */
    char text[1024];
    mcp__shttp_error_body(
        t, req, status,
        mcp__error_message(id, code, mcp__quotable(text, sizeof(text), message), NULL));
}

static void add_method(char *out, size_t size, const char *method)
{
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s", len ? ", " : "", method);
}

/*
 * The methods a path allows, for a 405's Allow (RFC 9110 15.5.6: the answer lists
 * what the target supports, never the method it refuses) and a preflight's
 * Access-Control-Allow-Methods: the MCP endpoint as the mode and the eras served
 * make it, the HTTP+SSE transport's two paths, an extra route's methods.
 */
void mcp__shttp_allowed_methods(const shttp *t, const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int sessions = !t->stateless && (t->ans->ops->eras(t->ans) & MCP_ERA_LEGACY);
    int mcp = strcmp(path, t->path) == 0;
    int httpsse_get = !mcp && t->httpsse && strcmp(path, "/sse") == 0;
    int httpsse_post = !mcp && t->httpsse && strcmp(path, "/messages") == 0;
    if ((mcp && sessions && !t->disable_get) || httpsse_get)
        add_method(out, size, "GET");
    if (mcp || httpsse_post)
        add_method(out, size, "POST");
    if (mcp && sessions)
        add_method(out, size, "DELETE");
    if (!mcp && !httpsse_get && !httpsse_post)
        for (size_t i = 0; i < t->nroutes; i++)
            if (t->routes[i].method != NULL && strcmp(t->routes[i].path, path) == 0)
                add_method(out, size, t->routes[i].method);
    if (t->cors_origins != NULL && (mcp || httpsse_get || httpsse_post))
        add_method(out, size, "OPTIONS");
}

void mcp__shttp_error_body(shttp *t, mcp__http_req *req, int status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    const char *hdrs[16] = {"Content-Type", "application/json"};
    size_t n = mcp__shttp_cors(t, req, hdrs, 2);
    char allow[256];
    if (status == 405) {
        mcp__shttp_allowed_methods(t, mcp__http_req_path(req), allow, sizeof(allow));
        hdrs[n++] = "Allow";
        hdrs[n++] = allow;
    }
    hdrs[n] = NULL;
    mcp__http_respond(req, status, hdrs, text, text ? strlen(text) : 0);
    free(text);
}

void mcp__shttp_error(shttp *t, mcp__http_req *req, int status, int code, const char *message)
{
    /* Every error answer carries the request's id whenever it can be read. */
    json_t *id = mcp__shttp_body_id(req);
    mcp__shttp_error_id(t, req, status, id, code, message);
    json_decref(id);
}

int mcp__shttp_list_has(char **list, const char *value)
{
    for (char **p = list; p != NULL && *p != NULL; p++)
        if (strcasecmp(*p, value) == 0 || strcmp(*p, "*") == 0)
            return 1;
    return 0;
}

void mcp__shttp_auth_refuse(shttp *t, mcp__http_req *req, const mcp__auth_verdict *v)
{
    json_t *id = mcp__shttp_body_id(req);
    json_t *body = mcp__error_message(id, MCP_RPC_SERVER_ERROR, v->message, NULL);
    json_decref(id);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    const char *hdrs[16] = {"Content-Type", "application/json"};
    size_t n = mcp__shttp_cors(t, req, hdrs, 2);
    if (v->challenge != NULL) {
        hdrs[n++] = "WWW-Authenticate";
        hdrs[n++] = v->challenge;
    }
    hdrs[n] = NULL;
    mcp__http_respond(req, v->status, hdrs, text, text ? strlen(text) : 0);
    free(text);
}

size_t mcp__shttp_cors(shttp *t, mcp__http_req *req, const char **hdrs, size_t n)
{
    const char *origin = mcp__http_header(req, "origin");
    if (t->cors_origins == NULL || origin == NULL || !mcp__shttp_list_has(t->cors_origins, origin))
        return n;
    hdrs[n++] = "Access-Control-Allow-Origin";
    hdrs[n++] = origin;
    hdrs[n++] = "Vary";
    hdrs[n++] = "Origin";
    /* Browsers hide response headers from scripts unless they are exposed. */
    hdrs[n++] = "Access-Control-Expose-Headers";
    hdrs[n++] = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";
    return n;
}

/* The ids of the requests of a POST body (a new array). */
json_t *mcp__shttp_request_ids(const json_t *v)
{
    json_t *ids = json_array();
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    for (size_t i = 0; i < n && ids != NULL; i++) {
        const json_t *id = mcp__shttp_request_id(json_is_array(v) ? json_array_get(v, i) : v);
        if (id != NULL && json_object_get(json_is_array(v) ? json_array_get(v, i) : v, "method"))
            json_array_append(ids, (json_t *)id);
    }
    return ids;
}
