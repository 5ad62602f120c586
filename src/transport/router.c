/* SPDX-License-Identifier: MIT */
/*
 * The HTTP transports' router: DNS-rebinding protection (Host, Origin), CORS
 * preflights, and the dispatch of each request to Streamable HTTP, the HTTP+SSE
 * transport or an extra route (mcp_http_route). See shttp.h.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport/shttp.h"

/*
 * DNS rebinding protection (spec, Security Warning): a browser page on a
 * hostile origin must not reach a local server, so the Host must be ours and a
 * present Origin must be allowed. Answers 403 and returns -1 when not.
 */
static int check_host(shttp *t, mcp__http_req *req)
{
    char name[256];
    const char *host = mcp__http_header(req, "host");
    if (t->allowed_hosts != NULL || t->bound_loopback) {
        int ok = host != NULL && mcp__host_name(host, name, sizeof(name)) == 0 &&
                 (t->allowed_hosts ? mcp__shttp_list_has(t->allowed_hosts, name)
                                   : mcp__is_loopback_name(name));
        if (!ok) {
            char msg[320];
            snprintf(msg, sizeof(msg), "Forbidden: invalid Host header: %.256s",
                     host ? host : "(none)");
            mcp__shttp_error(t, req, 403, MCP_RPC_SERVER_ERROR, msg);
            return -1;
        }
    }
    return 0;
}

static int check_origin(shttp *t, mcp__http_req *req)
{
    char name[256];
    const char *origin = mcp__http_header(req, "origin");
    if (origin == NULL)
        return 0; /* not a browser, or a same-origin GET: nothing to check */
    int ok;
    if (t->allowed_origins != NULL)
        ok = mcp__shttp_list_has(t->allowed_origins, origin);
    else
        ok = mcp__shttp_list_has(t->cors_origins, origin) ||
             (mcp__origin_host(origin, name, sizeof(name)) == 0 && mcp__is_loopback_name(name));
    if (!ok) {
        char msg[320];
        snprintf(msg, sizeof(msg), "Forbidden: invalid Origin header: %.256s", origin);
        mcp__shttp_error(t, req, 403, MCP_RPC_SERVER_ERROR, msg);
        return -1;
    }
    return 0;
}

static void preflight(shttp *t, mcp__http_req *req)
{
    const char *hdrs[20];
    size_t n = mcp__shttp_cors(t, req, hdrs, 0);
    if (n == 0) {
        mcp__shttp_error(t, req, 403, MCP_RPC_SERVER_ERROR, "Forbidden: origin not allowed");
        return;
    }
    char allow[256];
    mcp__shttp_allowed_methods(t, mcp__http_req_path(req), allow, sizeof(allow));
    hdrs[n++] = "Access-Control-Allow-Methods";
    hdrs[n++] = allow;
    hdrs[n++] = "Access-Control-Allow-Headers";
    hdrs[n++] = "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, "
                "Last-Event-ID";
    hdrs[n++] = "Access-Control-Max-Age";
    hdrs[n++] = "86400";
    hdrs[n] = NULL;
    mcp__http_respond(req, 204, hdrs, NULL, 0);
}

/* ---- Extra routes ---- */

struct mcp_http_exchange {
    shttp *t;
    mcp__http_req *req;
    int answered;
};

static const shttp_route *find_route(const shttp *t, const char *method, const char *path,
                                     int exact_method)
{
    for (size_t i = 0; i < t->nroutes; i++) {
        const shttp_route *r = &t->routes[i];
        if (strcmp(r->path, path) != 0)
            continue;
        if (exact_method ? (r->method == NULL) == (method == NULL) &&
                               (method == NULL || strcmp(r->method, method) == 0)
                         : r->method == NULL || strcmp(r->method, method) == 0)
            return r;
    }
    return NULL;
}

static int reserved_path(const shttp *t, const char *path)
{
    const char *root = t->auth != NULL ? mcp__auth_metadata_root_path(t->auth) : NULL;
    return strcmp(path, t->path) == 0 ||
           (t->httpsse && (strcmp(path, "/sse") == 0 || strcmp(path, "/messages") == 0)) ||
           (t->auth != NULL && strcmp(path, mcp__auth_metadata_path(t->auth)) == 0) ||
           (root != NULL && strcmp(path, root) == 0);
}

int mcp_http_endpoint_route(mcp_http_endpoint *t, const char *method, const char *path,
                            mcp_http_route_fn fn, void *user)
{
    if (t == NULL || path == NULL || path[0] != '/' || fn == NULL ||
        (method != NULL && method[0] == '\0'))
        return MCP_EINVAL;
    if (reserved_path(t, path) || find_route(t, method, path, 1) != NULL)
        return MCP_EEXIST;
    shttp_route *routes = realloc(t->routes, (t->nroutes + 1) * sizeof(*routes));
    if (routes == NULL)
        return MCP_ENOMEM;
    t->routes = routes;
    shttp_route *r = &routes[t->nroutes];
    r->method = method ? mcp__strdup(method) : NULL;
    r->path = mcp__strdup(path);
    r->fn = fn;
    r->user = user;
    if (r->path == NULL || (method != NULL && r->method == NULL)) {
        free(r->method);
        free(r->path);
        return MCP_ENOMEM;
    }
    t->nroutes++;
    return MCP_OK;
}

void mcp__shttp_routes_free(shttp *t)
{
    for (size_t i = 0; i < t->nroutes; i++) {
        free(t->routes[i].method);
        free(t->routes[i].path);
    }
    free(t->routes);
    t->routes = NULL;
    t->nroutes = 0;
}

const char *mcp_http_exchange_method(const mcp_http_exchange *x)
{
    return mcp__http_req_method_name(x->req);
}

const char *mcp_http_exchange_path(const mcp_http_exchange *x)
{
    return mcp__http_req_path(x->req);
}

const char *mcp_http_exchange_query(const mcp_http_exchange *x)
{
    return mcp__http_req_query(x->req);
}

const char *mcp_http_exchange_header(const mcp_http_exchange *x, const char *name)
{
    return name != NULL ? mcp__http_header(x->req, name) : NULL;
}

const char *mcp_http_exchange_body(const mcp_http_exchange *x, size_t *len)
{
    return mcp__http_req_body(x->req, len);
}

mcp_http_endpoint *mcp_http_exchange_endpoint(const mcp_http_exchange *x)
{
    return x->t;
}

int mcp_http_exchange_respond(mcp_http_exchange *x, int status, const char *const *headers,
                              const void *body, size_t len)
{
    if (x == NULL)
        return MCP_EINVAL;
    if (x->answered)
        return MCP_ESTATE;
    if (status < 200 || status > 599)
        return MCP_EINVAL;
    /* The route's own headers, then CORS when configured. */
    const char *hdrs[48];
    size_t n = 0;
    for (const char *const *h = headers; h != NULL && h[0] != NULL; h += 2) {
        if (h[1] == NULL || n + 2 > 32)
            return MCP_EINVAL;
        hdrs[n++] = h[0];
        hdrs[n++] = h[1];
    }
    n = mcp__shttp_cors(x->t, x->req, hdrs, n);
    hdrs[n] = NULL;
    int rc = mcp__http_respond(x->req, status, hdrs, body, len);
    if (rc == MCP_EINVAL || rc == MCP_ESTATE)
        return MCP_EINVAL; /* a bad header: req is untouched, still to be answered */
    x->answered = 1;
    return rc;
}

static void serve_route(shttp *t, const shttp_route *r, mcp__http_req *req)
{
    mcp_http_exchange x = {.t = t, .req = req};
    /* r may move under the call (a route added from inside it): not used after. */
    r->fn(&x, r->user);
    if (!x.answered) {
        mcp__warn("the route for %s did not answer: 500", mcp__http_req_path(req));
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal Server Error");
    }
}

/* ---- Authorization ---- */

/* The Protected Resource Metadata document (RFC 9728): public, so readable from any
 * origin (browser clients discover the authorization server with it). */
static int serve_metadata(shttp *t, mcp__http_req *req, const char *path)
{
    const char *root = mcp__auth_metadata_root_path(t->auth);
    if (strcmp(path, mcp__auth_metadata_path(t->auth)) != 0 &&
        (root == NULL || strcmp(path, root) != 0))
        return 0;
    mcp__http_method m = mcp__http_req_method(req);
    if (m == MCP__HTTP_OPTIONS) {
        const char *hdrs[] = {"Access-Control-Allow-Origin",
                              "*",
                              "Access-Control-Allow-Methods",
                              "GET, HEAD, OPTIONS",
                              "Access-Control-Allow-Headers",
                              "*",
                              "Access-Control-Max-Age",
                              "86400",
                              NULL};
        mcp__http_respond(req, 204, hdrs, NULL, 0);
    } else if (m == MCP__HTTP_GET || m == MCP__HTTP_HEAD) {
        size_t len;
        const char *doc = mcp__auth_metadata(t->auth, &len);
        const char *hdrs[] = {"Content-Type",
                              "application/json",
                              "Access-Control-Allow-Origin",
                              "*",
                              "Cache-Control",
                              "max-age=3600",
                              NULL};
        mcp__http_respond(req, 200, hdrs, m == MCP__HTTP_HEAD ? NULL : doc,
                          m == MCP__HTTP_HEAD ? 0 : len);
    } else {
        const char *hdrs[] = {"Content-Type", "application/json", "Allow", "GET, HEAD, OPTIONS",
                              NULL};
        static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,"
                                   "\"message\":\"Method not allowed\"}}";
        mcp__http_respond(req, 405, hdrs, body, sizeof(body) - 1);
    }
    return 1;
}

static void route_mcp(shttp *t, mcp__http_req *req);

/* The gate's verdict on a request for the MCP endpoint or the HTTP+SSE ones. */
static void authorized(void *arg, mcp__http_req *req, mcp__auth_verdict *v)
{
    shttp *t = arg;
    if (v->status != 0) {
        mcp__shttp_auth_refuse(t, req, v);
    } else {
        /* The request carries its principal from here on (the verbs hand it to the
         * session with what it feeds). */
        mcp__http_req_set_tag(req, v->principal, (void (*)(void *))mcp__principal_unref);
        v->principal = NULL;
        route_mcp(t, req);
    }
    mcp__auth_verdict_clear(v);
}

/* ---- Routing ---- */

void mcp__shttp_on_request(void *user, mcp__http_req *req)
{
    shttp *t = user;
    if (t->phase >= EP_CLOSING) {
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR, "Service Unavailable: shutting down");
        return;
    }
    if (check_host(t, req) != 0)
        return;
    const char *path = mcp__http_req_path(req);
    if (t->auth != NULL && serve_metadata(t, req, path))
        return;
    if (check_origin(t, req) != 0)
        return;
    mcp__http_method m = mcp__http_req_method(req);
    const shttp_route *route = find_route(t, mcp__http_req_method_name(req), path, 0);
    if (route != NULL) {
        serve_route(t, route, req);
        return;
    }
    int is_mcp = strcmp(path, t->path) == 0;
    if (m == MCP__HTTP_OPTIONS && t->cors_origins != NULL &&
        (is_mcp || (t->httpsse && (strcmp(path, "/sse") == 0 || strcmp(path, "/messages") == 0)))) {
        preflight(t, req);
        return;
    }
    int gated =
        is_mcp || (t->httpsse && (strcmp(path, "/sse") == 0 || strcmp(path, "/messages") == 0));
    if (gated && t->auth != NULL) {
        mcp__auth_check(t->auth, req, authorized, t);
        return;
    }
    route_mcp(t, req);
}

/* The MCP endpoint, the HTTP+SSE endpoints and what is left: past the gate. */
static void route_mcp(shttp *t, mcp__http_req *req)
{
    const char *path = mcp__http_req_path(req);
    mcp__http_method m = mcp__http_req_method(req);
    if (strcmp(path, t->path) == 0) {
        mcp__shttp_mcp_request(t, req);
    } else if (t->httpsse && strcmp(path, "/sse") == 0 && m == MCP__HTTP_GET) {
        mcp__httpsse_get(t, req);
    } else if (t->httpsse && strcmp(path, "/messages") == 0 && m == MCP__HTTP_POST) {
        mcp__httpsse_post(t, req);
    } else if (t->httpsse && (strcmp(path, "/sse") == 0 || strcmp(path, "/messages") == 0)) {
        mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
    } else {
        int routed = 0; /* the path has routes, for other methods */
        for (size_t i = 0; i < t->nroutes && !routed; i++)
            routed = strcmp(t->routes[i].path, path) == 0;
        if (routed)
            mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
        else
            mcp__shttp_error(t, req, 404, MCP_RPC_SERVER_ERROR, "Not Found");
    }
}
