/* SPDX-License-Identifier: MIT */
/*
 * The gate in front of the MCP endpoint: a request's bearer token read, looked up
 * in the cache or handed to the verifier, its claims checked, and a verdict (see
 * auth.h); and the Protected Resource Metadata document (RFC 9728).
 */
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"

#define DEFAULT_SKEW_S 60
#define DEFAULT_CACHE_MAX 10000
#define DEFAULT_CACHE_TTL_MS 300000
#define DEFAULT_MAX_TOKEN 8192
#define WELL_KNOWN "/.well-known/oauth-protected-resource"

struct mcp__auth {
    unsigned refs; /* the owner's, and one per check in progress */
    int freed;     /* the owner let go */
    char *resource, *issuer;
    char **required;     /* NULL-terminated */
    char *required_text; /* space-separated, NULL when none */
    char *metadata_url;  /* resource_metadata of the challenges */
    char *metadata_path, *metadata_root_path;
    char *metadata; /* the document */
    size_t metadata_len;
    int allow_no_audience, skew_s, ttl_ms, scope_error_as_result;
    size_t max_token;
    mcp_token_verifier verifier;
    mcp__jwt *jwt; /* the built-in verifiers, when they are the ones */
    mcp__introspect *introspect;
    int closing_parts; /* mcp__auth_close: built-in verifiers still closing */
    void (*closed)(void *arg);
    void *closed_arg;
    mcp__token_cache cache;
    mcp__auth_stats stats;
    mcp__map method_scopes; /* method -> its scopes (char *, space-separated) */
};

struct mcp_token_check {
    mcp__auth *a;
    mcp__http_req *req; /* NULL once its connection is gone */
    mcp__auth_done_fn done;
    void *arg;
    char key[65];
};

/* ---- Set-up ---- */

static int scopes_valid(const char *const *v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        if (!mcp__scope_token_valid(v[i]))
            return 0;
    return 1;
}

static json_t *string_array(const char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && v != NULL && v[i] != NULL; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The document: the members the options name, then metadata_extra's others. */
static int build_metadata(mcp__auth *a, const mcp_auth_opts *o)
{
    json_t *doc = json_object();
    if (doc == NULL)
        return MCP_ENOMEM;
    int bad = json_object_set_new(doc, "resource", json_string(a->resource)) != 0;
    if (o->authorization_servers != NULL)
        bad |= json_object_set_new(doc, "authorization_servers",
                                   string_array(o->authorization_servers)) != 0;
    if (o->scopes_supported != NULL)
        bad |= json_object_set_new(doc, "scopes_supported", string_array(o->scopes_supported)) != 0;
    const char *const header_only[] = {"header", NULL};
    bad |= json_object_set_new(doc, "bearer_methods_supported", string_array(header_only)) != 0;
    if (o->resource_name != NULL)
        bad |= json_object_set_new(doc, "resource_name", json_string(o->resource_name)) != 0;
    int rc = bad ? MCP_ENOMEM : MCP_OK;
    if (rc == MCP_OK && o->metadata_extra != NULL) {
        json_t *extra = json_loads(o->metadata_extra, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(extra))
            rc = MCP_EINVAL;
        else if (json_object_update_missing(doc, extra) != 0)
            rc = MCP_ENOMEM;
        json_decref(extra);
    }
    if (rc == MCP_OK) {
        a->metadata = json_dumps(doc, JSON_COMPACT);
        rc = a->metadata != NULL ? MCP_OK : MCP_ENOMEM;
        a->metadata_len = a->metadata != NULL ? strlen(a->metadata) : 0;
    }
    json_decref(doc);
    return rc;
}

/* From the resource URL: the document's path(s) and its URL. */
static int metadata_location(mcp__auth *a, int at_root)
{
    const char *r = a->resource;
    size_t scheme = strncmp(r, "https://", 8) == 0 ? 8 : strncmp(r, "http://", 7) == 0 ? 7 : 0;
    if (scheme == 0 || strpbrk(r, "#? \t\r\n") != NULL)
        return MCP_EINVAL;
    const char *path = strchr(r + scheme, '/');
    size_t origin = path != NULL ? (size_t)(path - r) : strlen(r);
    if (origin == scheme)
        return MCP_EINVAL; /* no host */
    if (path == NULL || strcmp(path, "/") == 0)
        path = "";
    a->metadata_path = mcp__asprintf("%s%s", WELL_KNOWN, path);
    a->metadata_url = mcp__asprintf("%.*s%s", (int)origin, r, a->metadata_path);
    if (at_root && path[0] != '\0')
        a->metadata_root_path = strdup(WELL_KNOWN);
    if (a->metadata_path == NULL || a->metadata_url == NULL ||
        (at_root && path[0] != '\0' && a->metadata_root_path == NULL))
        return MCP_ENOMEM;
    return MCP_OK;
}

static void auth_unref(mcp__auth *a)
{
    if (--a->refs > 0)
        return;
    mcp__token_cache_free(&a->cache);
    size_t pos = 0;
    const char *method;
    void *scopes;
    while (mcp__map_next(&a->method_scopes, &pos, &method, &scopes))
        free(scopes);
    mcp__map_free(&a->method_scopes);
    free(a->resource);
    free(a->issuer);
    mcp__strv_free(a->required);
    free(a->required_text);
    free(a->metadata_url);
    free(a->metadata_path);
    free(a->metadata_root_path);
    free(a->metadata);
    free(a);
}

static void builtin_verify(void *user, const char *token, mcp_token_check *check);

static int method_scopes_valid(const mcp_method_scopes *m)
{
    for (; m != NULL && m->method != NULL; m++)
        if (m->method[0] == '\0' || m->scopes == NULL || !mcp__scope_list_valid(m->scopes))
            return 0;
    return 1;
}

static int method_scopes_copy(mcp__auth *a, const mcp_method_scopes *m)
{
    for (; m != NULL && m->method != NULL; m++) {
        char *s = strdup(m->scopes);
        free(mcp__map_remove(&a->method_scopes, m->method)); /* a later entry wins */
        if (s == NULL || mcp__map_put(&a->method_scopes, m->method, s) != MCP_OK) {
            free(s);
            return MCP_ENOMEM;
        }
    }
    return MCP_OK;
}

const char *mcp__auth_method_scopes(const mcp__auth *a, const char *method)
{
    return method != NULL ? mcp__map_get(&a->method_scopes, method) : NULL;
}

int mcp__auth_new(uv_loop_t *loop, const mcp_auth_opts *opts, mcp__auth **out)
{
    *out = NULL;
    mcp_auth_opts o;
    if (opts == NULL || mcp__opts_copy(&o, sizeof(o), opts, sizeof(mcp_auth_opts)) != MCP_OK)
        return MCP_EINVAL;
    int builtin = o.verifier.verify == NULL;
    if (o.resource == NULL || (builtin && o.jwt == NULL && o.introspection == NULL) ||
        (builtin && o.jwt != NULL && o.issuer == NULL) || !scopes_valid(o.required_scopes) ||
        !scopes_valid(o.scopes_supported) || !method_scopes_valid(o.method_scopes))
        return MCP_EINVAL;
    mcp__auth *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return MCP_ENOMEM;
    a->refs = 1;
    a->verifier = o.verifier;
    a->allow_no_audience = o.allow_no_audience;
    a->scope_error_as_result = o.scope_error_as_result;
    a->skew_s = o.clock_skew_s == 0 ? DEFAULT_SKEW_S : o.clock_skew_s < 0 ? 0 : o.clock_skew_s;
    a->ttl_ms = o.cache_ttl_ms > 0 ? o.cache_ttl_ms : DEFAULT_CACHE_TTL_MS;
    a->max_token = o.max_token > 0 ? o.max_token : DEFAULT_MAX_TOKEN;
    mcp__token_cache_init(&a->cache, o.cache_max > 0 ? o.cache_max : DEFAULT_CACHE_MAX);
    int rc = MCP_OK;
    a->resource = strdup(o.resource);
    if (o.issuer != NULL && (a->issuer = strdup(o.issuer)) == NULL)
        rc = MCP_ENOMEM;
    if (a->resource == NULL)
        rc = MCP_ENOMEM;
    int err = 0;
    a->required = mcp__strv_copy(o.required_scopes, &err);
    if (rc == MCP_OK && err)
        rc = MCP_ENOMEM;
    if (rc == MCP_OK && a->required != NULL && a->required[0] != NULL) {
        mcp__buf b = {0};
        for (size_t i = 0; rc == MCP_OK && a->required[i] != NULL; i++) {
            if (i > 0)
                rc = mcp__buf_appends(&b, " ");
            if (rc == MCP_OK)
                rc = mcp__buf_appends(&b, a->required[i]);
        }
        a->required_text = mcp__buf_steal(&b);
        if (rc == MCP_OK && a->required_text == NULL)
            rc = MCP_ENOMEM;
    }
    if (rc == MCP_OK)
        rc = method_scopes_copy(a, o.method_scopes);
    if (rc == MCP_OK)
        rc = metadata_location(a, o.metadata_at_root);
    if (rc == MCP_OK)
        rc = build_metadata(a, &o);
    if (rc == MCP_OK && builtin && o.jwt != NULL)
        rc = mcp__jwt_new(loop, o.issuer, o.jwt, &a->jwt);
    if (rc == MCP_OK && builtin && o.introspection != NULL)
        rc = mcp__introspect_new(loop, o.introspection, &a->introspect);
    if (rc == MCP_OK && builtin)
        a->verifier = (mcp_token_verifier){.verify = builtin_verify, .user = a};
    if (rc != MCP_OK) {
        auth_unref(a);
        return rc;
    }
    *out = a;
    return MCP_OK;
}

static void part_closed(void *arg)
{
    mcp__auth *a = arg;
    if (--a->closing_parts > 0)
        return;
    void (*closed)(void *) = a->closed;
    void *closed_arg = a->closed_arg;
    auth_unref(a);
    if (closed != NULL)
        closed(closed_arg);
}

int mcp__auth_close(mcp__auth *a, void (*closed)(void *arg), void *arg)
{
    if (a == NULL || (a->jwt == NULL && a->introspect == NULL))
        return 0;
    mcp__jwt *j = a->jwt;
    mcp__introspect *in = a->introspect;
    a->jwt = NULL;
    a->introspect = NULL;
    a->verifier = (mcp_token_verifier){0};
    /* Their close callbacks never run inside these calls: counting after is safe. */
    int pending = mcp__jwt_close(j, part_closed, a) + mcp__introspect_close(in, part_closed, a);
    if (pending == 0)
        return 0;
    a->closing_parts = pending;
    a->closed = closed;
    a->closed_arg = arg;
    a->refs++; /* until the last part is closed */
    return 1;
}

void mcp__auth_free(mcp__auth *a)
{
    if (a == NULL)
        return;
    (void)mcp__auth_close(a, NULL, NULL);
    a->freed = 1;
    auth_unref(a);
}

const char *mcp__auth_metadata_path(const mcp__auth *a)
{
    return a->metadata_path;
}

const char *mcp__auth_metadata_root_path(const mcp__auth *a)
{
    return a->metadata_root_path;
}

const char *mcp__auth_metadata(const mcp__auth *a, size_t *len)
{
    if (len != NULL)
        *len = a->metadata_len;
    return a->metadata;
}

int mcp__auth_step_up(const mcp__auth *a)
{
    return !a->scope_error_as_result;
}

void mcp__auth_scope_refusal(mcp__auth *a, const char *scopes, mcp__auth_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->status = 403;
    v->message = "Forbidden: insufficient scope";
    char *all = mcp__asprintf("%s%s%s", a->required_text ? a->required_text : "",
                              a->required_text ? " " : "", scopes);
    v->challenge = mcp__bearer_challenge("insufficient_scope",
                                         "The access token lacks a scope this request needs",
                                         all != NULL ? all : scopes, a->metadata_url);
    free(all);
    /* The gate let this request in (counted as passed); it is refused after all, and
     * counts under this outcome alone. */
    if (a->stats.passed > 0)
        a->stats.passed--;
    a->stats.insufficient_scope++;
}

const mcp__auth_stats *mcp__auth_stats_get(const mcp__auth *a)
{
    return &a->stats;
}

void mcp__auth_verdict_clear(mcp__auth_verdict *v)
{
    free(v->challenge);
    mcp__principal_unref(v->principal);
    memset(v, 0, sizeof(*v));
}

/* The built-in verifiers: a JWS-shaped token (three parts) to the JWT verifier, any
 * other to introspection, each when there is one. */
static void builtin_verify(void *user, const char *token, mcp_token_check *check)
{
    mcp__auth *a = user;
    const char *dot = strchr(token, '.');
    int jws = dot != NULL && strchr(dot + 1, '.') != NULL;
    if (a->jwt != NULL && (jws || a->introspect == NULL))
        mcp__jwt_verifier(a->jwt).verify(a->jwt, token, check);
    else if (a->introspect != NULL)
        mcp__introspect_verifier(a->introspect).verify(a->introspect, token, check);
    else
        mcp_token_check_unavailable(check, "the endpoint is stopping");
}

/* ---- Verdicts ---- */

static void refuse(mcp__auth *a, mcp__http_req *req, mcp__auth_done_fn done, void *arg, int status,
                   const char *error, const char *description, const char *message)
{
    mcp__auth_verdict v = {.status = status, .message = message};
    if (status != 503) {
        int scope = error == NULL || strcmp(error, "insufficient_scope") == 0;
        v.challenge = mcp__bearer_challenge(error, description, scope ? a->required_text : NULL,
                                            a->metadata_url);
    }
    switch (status) {
    case 400:
        a->stats.bad_request++;
        break;
    case 403:
        a->stats.insufficient_scope++;
        break;
    case 503:
        a->stats.unavailable++;
        break;
    default:
        if (error == NULL)
            a->stats.no_token++;
        else
            a->stats.invalid++;
        break;
    }
    done(arg, req, &v);
}

/* What a connection's last credential was found to be (mcp__http_req_set_conn_memo):
 * its Authorization value exactly, the principal and until when the cache vouches for
 * it. Only for credentials up to MEMO_MAX bytes, so that a connection holds little. */
#define MEMO_MAX 4096

typedef struct conn_memo {
    const mcp__auth *auth;
    mcp_principal *principal;
    uint64_t deadline_ms;
    char value[];
} conn_memo;

static void memo_drop(void *memo)
{
    conn_memo *m = memo;
    mcp__principal_unref(m->principal);
    free(m);
}

static void remember(const mcp__auth *a, mcp__http_req *req, const char *value, mcp_principal *p,
                     uint64_t deadline_ms)
{
    size_t n = strlen(value);
    if (n > MEMO_MAX)
        return;
    conn_memo *m = malloc(sizeof(*m) + n + 1);
    if (m == NULL)
        return; /* only a shortcut lost */
    m->auth = a;
    m->principal = mcp__principal_ref(p);
    m->deadline_ms = deadline_ms;
    memcpy(m->value, value, n + 1);
    mcp__http_req_set_conn_memo(req, m, memo_drop);
}

/* A principal whose claims hold: let in, unless a required scope is missing. */
static void admit(mcp__auth *a, mcp__http_req *req, mcp__auth_done_fn done, void *arg,
                  mcp_principal *p)
{
    for (size_t i = 0; a->required != NULL && a->required[i] != NULL; i++)
        if (!mcp_principal_has_scope(p, a->required[i])) {
            refuse(a, req, done, arg, 403, "insufficient_scope",
                   "The access token lacks a scope this server requires",
                   "Forbidden: insufficient scope");
            return;
        }
    mcp__auth_verdict v = {.status = 0, .principal = mcp__principal_ref(p)};
    a->stats.passed++;
    done(arg, req, &v);
}

static void check_req_closed(void *arg, mcp__http_req *req)
{
    mcp_token_check *check = arg;
    mcp__http_req_release(req);
    check->req = NULL;
}

/* Takes check out of its request; NULL when the request is gone (then check is freed). */
static mcp__http_req *check_end(mcp_token_check *check)
{
    mcp__http_req *req = check->req;
    if (req != NULL)
        mcp__http_req_on_close(req, NULL, NULL);
    return req;
}

static void check_free(mcp_token_check *check)
{
    auth_unref(check->a);
    free(check);
}

void mcp__auth_check(mcp__auth *a, mcp__http_req *req, mcp__auth_done_fn done, void *arg)
{
    if (mcp__bearer_in_query(mcp__http_req_query(req))) {
        refuse(a, req, done, arg, 400, "invalid_request",
               "Access tokens are not accepted in the query string",
               "Bad Request: access token in the query string");
        return;
    }
    const char *value = NULL;
    size_t n = 0;
    for (size_t i = 0, count = mcp__http_header_count(req); i < count; i++) {
        const char *name, *v;
        if (mcp__http_header_at(req, i, &name, &v) == MCP_OK &&
            strcmp(name, "authorization") == 0) {
            value = v;
            n++;
        }
    }
    if (n > 1) {
        refuse(a, req, done, arg, 400, "invalid_request", "More than one Authorization header",
               "Bad Request: more than one Authorization header");
        return;
    }
    /* The same credential as this connection's last: what it was found to be then,
     * while that holds (the cache's deadline), with no parse, digest or lookup. */
    conn_memo *m = value != NULL ? mcp__http_req_conn_memo(req) : NULL;
    if (m != NULL && m->auth == a && strcmp(m->value, value) == 0 &&
        mcp__wall_ms() < m->deadline_ms) {
        a->stats.cached++;
        admit(a, req, done, arg, m->principal);
        return;
    }
    const char *token;
    size_t len;
    switch (mcp__bearer_parse(value, a->max_token, &token, &len)) {
    case MCP__BEARER_NONE:
        refuse(a, req, done, arg, 401, NULL, NULL, "Unauthorized: an access token is required");
        return;
    case MCP__BEARER_MALFORMED:
        refuse(a, req, done, arg, 401, "invalid_token", "The access token is malformed",
               "Unauthorized: invalid access token");
        return;
    case MCP__BEARER_TOO_LONG:
        refuse(a, req, done, arg, 401, "invalid_token", "The access token is too long",
               "Unauthorized: invalid access token");
        return;
    case MCP__BEARER_TOKEN:
        break;
    }
    char key[65];
    if (mcp__token_key(token, len, key) != MCP_OK) {
        refuse(a, req, done, arg, 503, NULL, NULL,
               "Service Unavailable: the access token cannot be checked now");
        return;
    }
    uint64_t deadline = 0;
    mcp_principal *p = mcp__token_cache_get(&a->cache, key, mcp__wall_ms(), &deadline);
    if (p != NULL) {
        a->stats.cached++;
        remember(a, req, value, p, deadline);
        admit(a, req, done, arg, p);
        return;
    }
    mcp_token_check *check = calloc(1, sizeof(*check));
    if (check == NULL) {
        refuse(a, req, done, arg, 503, NULL, NULL,
               "Service Unavailable: the access token cannot be checked now");
        return;
    }
    a->refs++;
    check->a = a;
    check->req = req;
    check->done = done;
    check->arg = arg;
    memcpy(check->key, key, sizeof(key));
    mcp__http_req_on_close(req, check_req_closed, check);
    /* The token ends the header value (mcp__bearer_parse saw to it): NUL-terminated. */
    if (a->verifier.verify == NULL)
        mcp_token_check_unavailable(check, "the endpoint is stopping");
    else
        a->verifier.verify(a->verifier.user, token, check);
}

void mcp_token_check_accept(mcp_token_check *check, json_t *claims)
{
    if (check == NULL) {
        json_decref(claims);
        return;
    }
    mcp__auth *a = check->a;
    mcp__http_req *req = check_end(check);
    mcp_principal *p = mcp__principal_new(claims);
    uint64_t now_ms = mcp__wall_ms();
    const char *reason = p == NULL
                             ? "The access token's claims could not be read"
                             : mcp__principal_check(p, a->resource, a->allow_no_audience, a->issuer,
                                                    (int64_t)(now_ms / 1000), a->skew_s);
    if (reason == NULL && !a->freed) {
        /* Trusted for ttl_ms at most, and never past the token's own expiry. */
        uint64_t deadline = now_ms + (uint64_t)a->ttl_ms;
        int64_t exp = mcp_principal_expires(p);
        if (exp > 0 && (uint64_t)exp * 1000 < deadline)
            deadline = (uint64_t)exp * 1000;
        (void)mcp__token_cache_put(&a->cache, check->key, p, deadline);
    }
    if (req != NULL && !a->freed) {
        if (reason != NULL)
            refuse(a, req, check->done, check->arg, 401, "invalid_token", reason,
                   "Unauthorized: invalid access token");
        else
            admit(a, req, check->done, check->arg, p);
    } else if (req != NULL) {
        mcp__http_req_release(req);
    }
    mcp__principal_unref(p);
    check_free(check);
}

void mcp_token_check_reject(mcp_token_check *check, const char *description)
{
    if (check == NULL)
        return;
    mcp__auth *a = check->a;
    mcp__http_req *req = check_end(check);
    if (req != NULL && !a->freed)
        refuse(a, req, check->done, check->arg, 401, "invalid_token",
               description != NULL ? description : "The access token is not valid",
               "Unauthorized: invalid access token");
    else if (req != NULL)
        mcp__http_req_release(req);
    check_free(check);
}

void mcp_token_check_unavailable(mcp_token_check *check, const char *description)
{
    if (check == NULL)
        return;
    /* A 503 carries no challenge: the reason goes to the log (never a token: the
     * verifier's descriptions hold none). */
    mcp__warn("an access token could not be checked: %s",
              description != NULL ? description : "the verifier is unavailable");
    mcp__auth *a = check->a;
    mcp__http_req *req = check_end(check);
    if (req != NULL && !a->freed)
        refuse(a, req, check->done, check->arg, 503, NULL, NULL,
               "Service Unavailable: the access token cannot be checked now");
    else if (req != NULL)
        mcp__http_req_release(req);
    check_free(check);
}
