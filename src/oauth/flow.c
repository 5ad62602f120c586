/* SPDX-License-Identifier: MIT */
/*
 * The OAuth client's flow: discovery (Protected Resource Metadata, then the
 * authorization server's metadata), the client's identity (pre-registered,
 * metadata document, or dynamic registration), and the grants (authorization
 * code with PKCE, client credentials, JWT bearer, enterprise-managed, refresh).
 * One step at a time, each an HTTP exchange on the loop whose end runs the next.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth_int.h"

#define GT_JWT_BEARER "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define GT_TOKEN_EXCHANGE "urn:ietf:params:oauth:grant-type:token-exchange"
#define TT_ID_JAG "urn:ietf:params:oauth:token-type:id-jag"
#define TT_ID_TOKEN "urn:ietf:params:oauth:token-type:id_token"
#define CA_JWT_BEARER "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

static void step(mcp_oauth *o);
static void token_request(mcp_oauth *o);
static enum ostep after_identity(const mcp_oauth *o);
static void refresh(mcp_oauth *o);

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int printable(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] >= 0x7f || n >= max)
            return 0;
    return n > 0;
}

static int http_url(const char *s)
{
    return s != NULL && printable(s, 2048) &&
           (strncmp(s, "https://", 8) == 0 || strncmp(s, "http://", 7) == 0);
}

/* An URL the flow may use: https (the authorization chapter's MUST), or plain http on
 * a loopback host, or when the MCP server itself is reached over plain http (a test or
 * a development setup, where nothing is protected anyway). */
static int secure_url(const mcp_oauth *o, const char *s)
{
    if (!http_url(s))
        return 0;
    if (strncmp(s, "https://", 8) == 0 || strncmp(o->server_url, "http://", 7) == 0)
        return 1;
    const char *h = s + 7;
    return strncmp(h, "127.0.0.1", 9) == 0 || strncmp(h, "localhost", 9) == 0 ||
           strncmp(h, "[::1]", 5) == 0;
}

/* Frees a secret string, wiped first. */
static void free_secret(char **p)
{
    if (*p != NULL) {
        memset(*p, 0, strlen(*p));
        free(*p);
        *p = NULL;
    }
}

/* Ends the flow in failure with a message made from fmt. */
static void fail(mcp_oauth *o, const char *fmt, ...) MCP_PRINTF(2, 3);
static void fail(mcp_oauth *o, const char *fmt, ...)
{
    mcp__buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    int rc = mcp__buf_vappendf(&b, fmt, ap);
    va_end(ap);
    mcp__ohttp_free(o->http);
    o->http = NULL;
    mcp__oauth_flow_end(o, MCP_EAUTH,
                        rc == MCP_OK && b.data != NULL ? b.data : "authorization failed");
    mcp__buf_free(&b);
}

static void fail_msg(mcp_oauth *o, char *msg)
{
    fail(o, "%s", msg != NULL ? msg : "out of memory");
    free(msg);
}

static void clear_cands(mcp_oauth *o)
{
    for (int i = 0; i < o->ncands; i++) {
        free(o->cands[i]);
        o->cands[i] = NULL;
    }
    o->ncands = o->icand = 0;
}

static void add_cand(mcp_oauth *o, char *url)
{
    if (url != NULL && o->ncands < OAUTH_MAX_CANDIDATES)
        o->cands[o->ncands++] = url;
    else
        free(url);
}

/* An error response of an authorization server (RFC 6749 §5.2) in words:
 * "error: description", the description made printable. malloc'd. */
static char *as_error(const mcp__ohttp *h, const char *what, const char *url)
{
    json_t *j = mcp__ohttp_json(h);
    const char *e = jstr(j, "error"), *d = jstr(j, "error_description");
    char *msg;
    if (h->rc == CURLE_OK && e != NULL) {
        char *pe = mcp__oauth_printable(e, 64);
        char *pd = d != NULL ? mcp__oauth_printable(d, 200) : NULL;
        msg = mcp__asprintf("%s at %s: HTTP %ld, %s%s%s", what, url, h->status,
                            pe != NULL ? pe : "", pd != NULL ? ": " : "", pd != NULL ? pd : "");
        free(pe);
        free(pd);
    } else {
        msg = mcp__ohttp_why(h, what, url);
    }
    json_decref(j);
    return msg;
}

/* Starts an exchange whose end runs done. */
static int exchange_as(mcp_oauth *o, const char *url, const char *body, const char *ctype,
                       struct curl_slist *hdrs, void (*done)(mcp__ohttp *h))
{
    mcp__ohttp_free(o->http);
    o->http = calloc(1, sizeof(*o->http));
    if (o->http == NULL) {
        curl_slist_free_all(hdrs);
        return MCP_ENOMEM;
    }
    o->http->o = o;
    o->http->done = done;
    o->http->may_repeat = o->step == OS_DEVICE_POLL || o->step == OS_REGISTER;
    int rc = mcp__ohttp_start(o, o->http, url, body, ctype, hdrs);
    if (rc != MCP_OK) {
        free(o->http);
        o->http = NULL;
    }
    return rc;
}

static int exchange(mcp_oauth *o, const char *url, const char *form, struct curl_slist *hdrs,
                    void (*done)(mcp__ohttp *h))
{
    return exchange_as(o, url, form, NULL, hdrs, done);
}

/* Moves on to step next. */
static void go(mcp_oauth *o, enum ostep next)
{
    clear_cands(o);
    o->step = next;
    step(o);
}

/* GETs the candidate URL of discovery at icand. */
static void fetch_cand(mcp_oauth *o, void (*done)(mcp__ohttp *h))
{
    struct curl_slist *hdrs = curl_slist_append(NULL, "MCP-Protocol-Version: 2025-11-25");
    if (exchange(o, o->cands[o->icand], NULL, hdrs, done) != MCP_OK)
        fail(o, "out of memory");
}

/* The exchange that ended, taken from o (the caller frees it). */
static mcp__ohttp *took(mcp__ohttp *h)
{
    if (h->o->http == h)
        h->o->http = NULL;
    return h;
}

/* A discovery candidate gave nothing: why, kept for the message if none does. */
static void missed(mcp_oauth *o, const mcp__ohttp *h, const char *url)
{
    char *why = h->rc == CURLE_OK && h->status >= 200 && h->status < 300
                    ? mcp__asprintf("%s: HTTP %ld, not a JSON object", url, h->status)
                    : mcp__ohttp_why(h, "GET", url);
    mcp__debug("oauth: discovery: %s", why != NULL ? why : url);
    free(o->last_why);
    o->last_why = why;
}

/* ---- Protected Resource Metadata (RFC 9728) ---- */

static void prm_next(mcp_oauth *o);

/* The PRM's resource names this server: the same origin, and its path is the
 * server's or a parent of it at a segment boundary. */
static int resource_matches(mcp_oauth *o, const char *resource)
{
    char *origin = NULL, *path = NULL;
    if (mcp__url_split(resource, &origin, &path) != MCP_OK)
        return 0;
    size_t n = strlen(path);
    if (n > 0 && path[n - 1] == '/')
        path[--n] = '\0';
    int ok = strcmp(origin, o->server_origin) == 0 && strncmp(o->server_path, path, n) == 0 &&
             (o->server_path[n] == '\0' || o->server_path[n] == '/');
    free(origin);
    free(path);
    return ok;
}

static void prm_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    const char *url = o->cands[o->icand];
    json_t *prm = h->status >= 200 && h->status < 300 ? mcp__ohttp_json(h) : NULL;
    if (prm == NULL) {
        missed(o, h, url);
        mcp__ohttp_free(h);
        o->icand++;
        prm_next(o);
        return;
    }
    mcp__ohttp_free(h);
    const char *resource = jstr(prm, "resource");
    const json_t *as = json_object_get(prm, "authorization_servers");
    const char *issuer = json_string_value(json_array_get(as, 0));
    if (resource == NULL || !resource_matches(o, resource)) {
        char *r = resource != NULL ? mcp__oauth_printable(resource, 200) : NULL;
        fail(o,
             "the server's Protected Resource Metadata (%s) names the resource %s%s%s, not this "
             "server (%s): refused",
             url, r != NULL ? "\"" : "none", r != NULL ? r : "", r != NULL ? "\"" : "",
             o->server_url);
        free(r);
        json_decref(prm);
        return;
    }
    if (!secure_url(o, issuer)) {
        fail(o, "the server's Protected Resource Metadata (%s) names no authorization server", url);
        json_decref(prm);
        return;
    }
    /* Another authorization server than the one the client was registered with:
     * that registration and its tokens are not for it. */
    if (o->client_issuer != NULL && strcmp(o->client_issuer, issuer) != 0 &&
        o->cfg_client_id == NULL)
        mcp__oauth_forget(o, 1);
    if (o->issuer != NULL && strcmp(o->issuer, issuer) != 0) {
        json_decref(o->as_meta);
        o->as_meta = NULL;
    }
    mcp__oauth_set(&o->issuer, issuer);
    mcp__oauth_set(&o->resource, resource);
    json_decref(o->prm_scopes);
    o->prm_scopes = json_incref(json_object_get(prm, "scopes_supported"));
    json_decref(prm);
    o->legacy = 0;
    go(o, OS_ASM);
}

static void prm_next(mcp_oauth *o)
{
    if (o->icand >= o->ncands) {
        if (o->rm_given) {
            fail(o, "the Protected Resource Metadata the server named cannot be had (%s)",
                 o->last_why != NULL ? o->last_why : o->cands[0]);
            return;
        }
        /* No metadata: a 2025-03-26 server, its own authorization server. */
        o->legacy = 1;
        mcp__oauth_set(&o->issuer, o->server_origin);
        mcp__oauth_set(&o->resource, NULL);
        go(o, OS_ASM);
        return;
    }
    fetch_cand(o, prm_done);
}

static void prm_start(mcp_oauth *o)
{
    clear_cands(o);
    o->rm_given = 0;
    if (secure_url(o, o->ch_rm)) {
        add_cand(o, mcp__strdup(o->ch_rm));
        o->rm_given = 1;
    } else {
        if (o->server_path[0] != '\0')
            add_cand(o, mcp__asprintf("%s/.well-known/oauth-protected-resource%s", o->server_origin,
                                      o->server_path));
        add_cand(o, mcp__asprintf("%s/.well-known/oauth-protected-resource", o->server_origin));
    }
    prm_next(o);
}

/* ---- Authorization server metadata (RFC 8414, OpenID Connect Discovery) ---- */

static void asm_next(mcp_oauth *o);

/* The metadata's issuer is the one expected: exactly, or the alias configured. */
static int issuer_ok(mcp_oauth *o, const char *got)
{
    return got != NULL && (strcmp(got, o->issuer) == 0 ||
                           (o->issuer_alias != NULL && strcmp(got, o->issuer_alias) == 0));
}

static void asm_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    const char *url = o->cands[o->icand];
    json_t *m = h->status >= 200 && h->status < 300 ? mcp__ohttp_json(h) : NULL;
    if (m == NULL)
        missed(o, h, url);
    mcp__ohttp_free(h);
    if (m == NULL) {
        o->icand++;
        asm_next(o);
        return;
    }
    const char *iss = jstr(m, "issuer");
    /* Revision 2025-03-26 names no issuer, only the server's origin, where the
     * metadata was found: an issuer on that origin is the one (RFC 8414's exact
     * match needs an identifier to match, which that revision does not give). */
    char *io = NULL, *ip = NULL;
    if (o->legacy && http_url(iss) && mcp__url_split(iss, &io, &ip) == MCP_OK &&
        strcmp(io, o->server_origin) == 0)
        mcp__oauth_set(&o->issuer, iss);
    free(io);
    free(ip);
    if (!issuer_ok(o, iss)) {
        char *p = iss != NULL ? mcp__oauth_printable(iss, 200) : NULL;
        fail(o,
             "the authorization server's metadata (%s) has the issuer %s%s%s, not %s: refused "
             "(issuer_alias accepts another spelling)",
             url, p != NULL ? "\"" : "none", p != NULL ? p : "", p != NULL ? "\"" : "", o->issuer);
        free(p);
        json_decref(m);
        return;
    }
    if (jstr(m, "token_endpoint") == NULL) {
        fail(o, "the authorization server's metadata (%s) has no token_endpoint", url);
        json_decref(m);
        return;
    }
    /* Every endpoint is an http(s) URL of printable characters: it goes into requests,
     * messages and the browser. */
    static const char *const endpoints[] = {"authorization_endpoint", "token_endpoint",
                                            "registration_endpoint",
                                            "device_authorization_endpoint"};
    for (size_t i = 0; i < sizeof(endpoints) / sizeof(*endpoints); i++) {
        const json_t *e = json_object_get(m, endpoints[i]);
        if (e != NULL && !secure_url(o, json_string_value(e))) {
            fail(o,
                 "the authorization server's metadata (%s) has a %s that is not an https URL "
                 "(or http on a loopback host): refused",
                 url, endpoints[i]);
            json_decref(m);
            return;
        }
    }
    json_decref(o->as_meta);
    o->as_meta = m;
    go(o, OS_REGISTER);
}

static void asm_next(mcp_oauth *o)
{
    if (o->icand >= o->ncands) {
        if (!o->legacy) {
            fail(o,
                 "no metadata for the authorization server %s (RFC 8414 and OpenID Connect "
                 "discovery both tried; the last: %s)",
                 o->issuer, o->last_why != NULL ? o->last_why : "none");
            return;
        }
        /* 2025-03-26: the default endpoints at the server's root. */
        json_decref(o->as_meta);
        o->as_meta =
            json_pack("{s:s, s:s+, s:s+, s:s+}", "issuer", o->issuer, "authorization_endpoint",
                      o->server_origin, "/authorize", "token_endpoint", o->server_origin, "/token",
                      "registration_endpoint", o->server_origin, "/register");
        if (o->as_meta == NULL) {
            fail(o, "out of memory");
            return;
        }
        go(o, OS_REGISTER);
        return;
    }
    fetch_cand(o, asm_done);
}

static void asm_start(mcp_oauth *o)
{
    clear_cands(o);
    char *origin = NULL, *path = NULL;
    if (mcp__url_split(o->issuer, &origin, &path) != MCP_OK) {
        fail(o, "the authorization server %s is not an http(s) URL", o->issuer);
        return;
    }
    size_t n = strlen(path);
    if (n > 0 && path[n - 1] == '/')
        path[n - 1] = '\0';
    if (path[0] != '\0') {
        add_cand(o, mcp__asprintf("%s/.well-known/oauth-authorization-server%s", origin, path));
        add_cand(o, mcp__asprintf("%s/.well-known/openid-configuration%s", origin, path));
        add_cand(o, mcp__asprintf("%s%s/.well-known/openid-configuration", origin, path));
    } else {
        add_cand(o, mcp__asprintf("%s/.well-known/oauth-authorization-server", origin));
        add_cand(o, mcp__asprintf("%s/.well-known/openid-configuration", origin));
    }
    free(origin);
    free(path);
    asm_next(o);
}

/* ---- The client's identity ---- */

static int as_supports(const mcp_oauth *o, const char *field, const char *value)
{
    const json_t *list = json_object_get(o->as_meta, field);
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v) if (json_is_string(v) &&
                                       strcmp(json_string_value(v), value) == 0) return 1;
    return 0;
}

static int is_loopback_uri(const char *uri)
{
    char *origin = NULL, *path = NULL;
    if (uri == NULL || mcp__url_split(uri, &origin, &path) != MCP_OK)
        return 0;
    const char *h = strstr(origin, "://") + 3;
    int lb = strncmp(h, "localhost", 9) == 0 || strncmp(h, "127.0.0.1", 9) == 0 ||
             strncmp(h, "[::1]", 5) == 0;
    free(origin);
    free(path);
    return lb;
}

static void register_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    const char *url = jstr(o->as_meta, "registration_endpoint");
    json_t *r = h->status >= 200 && h->status < 300 ? mcp__ohttp_json(h) : NULL;
    if (r == NULL || jstr(r, "client_id") == NULL) {
        char *msg = as_error(h, "dynamic client registration", url);
        mcp__ohttp_free(h);
        json_decref(r);
        fail_msg(o, msg);
        return;
    }
    mcp__ohttp_free(h);
    mcp__oauth_set(&o->client_id, jstr(r, "client_id"));
    mcp__oauth_set(&o->client_secret, jstr(r, "client_secret"));
    mcp__oauth_set(&o->client_auth, jstr(r, "token_endpoint_auth_method"));
    mcp__oauth_set(&o->client_issuer, o->issuer);
    mcp__oauth_set(&o->client_redirect, o->redirect_uri);
    json_decref(r);
    mcp__oauth_save(o);
    go(o, after_identity(o));
}

/* The step after the client's identity is known. */
static enum ostep after_identity(const mcp_oauth *o)
{
    switch (o->grant) {
    case MCP_OAUTH_AUTHORIZATION_CODE:
        return OS_BROWSER;
    case MCP_OAUTH_DEVICE:
        return OS_DEVICE;
    case MCP_OAUTH_ENTERPRISE:
        return OS_IDP_EXCHANGE;
    default:
        return OS_TOKEN;
    }
}

/* The loopback listener, when the library is to take the redirect itself: on the
 * port the client was registered with when that is free, else on any (and a
 * registration made for another port is not reused). */
static int loopback(mcp_oauth *o)
{
    if (!o->loopback || o->grant != MCP_OAUTH_AUTHORIZATION_CODE || o->lb != NULL)
        return MCP_OK;
    int port = o->loopback_port;
    const char *prev = o->client_redirect;
    const char *p = prev != NULL ? strstr(prev, "://127.0.0.1:") : NULL;
    if (port == 0 && p != NULL && mcp__loopback_start(o, atoi(p + 13), &o->lb) == MCP_OK)
        port = -1;
    if (port != -1 && mcp__loopback_start(o, port, &o->lb) != MCP_OK)
        return MCP_EIO;
    char *uri = mcp__asprintf("http://127.0.0.1:%d/callback", mcp__loopback_port(o->lb));
    if (uri == NULL)
        return MCP_ENOMEM;
    free(o->redirect_uri);
    o->redirect_uri = uri;
    if (prev != NULL && strcmp(prev, uri) != 0 && o->cfg_client_id == NULL)
        mcp__oauth_forget(o, 1);
    return MCP_OK;
}

/* Dynamic client registration (RFC 7591): a public client when the server allows it. */
static void register_client(mcp_oauth *o)
{
    int code = o->grant == MCP_OAUTH_AUTHORIZATION_CODE, device = o->grant == MCP_OAUTH_DEVICE;
    /* The grants it will use: a user's (with refresh tokens), or an assertion's. */
    json_t *grants = code     ? json_pack("[s,s]", "authorization_code", "refresh_token")
                     : device ? json_pack("[s,s]", "urn:ietf:params:oauth:grant-type:device_code",
                                          "refresh_token")
                              : json_pack("[s]", GT_JWT_BEARER);
    json_t *md = json_pack("{s:s, s:o, s:s, s:s}", "client_name", o->client_name, "grant_types",
                           grants, "token_endpoint_auth_method", "none", "application_type",
                           device || (code && is_loopback_uri(o->redirect_uri)) ? "native" : "web");
    if (md != NULL) {
        json_object_set_new(md, "redirect_uris",
                            code && o->redirect_uri != NULL ? json_pack("[s]", o->redirect_uri)
                                                            : json_array());
        json_object_set_new(md, "response_types", code ? json_pack("[s]", "code") : json_array());
    }
    if (md != NULL && !as_supports(o, "token_endpoint_auth_methods_supported", "none") &&
        json_object_get(o->as_meta, "token_endpoint_auth_methods_supported") != NULL)
        json_object_set_new(md, "token_endpoint_auth_method",
                            json_string(as_supports(o, "token_endpoint_auth_methods_supported",
                                                    "client_secret_basic")
                                            ? "client_secret_basic"
                                            : "client_secret_post"));
    char *body = md != NULL ? json_dumps(md, JSON_COMPACT) : NULL;
    json_decref(md);
    if (body == NULL ||
        exchange_as(o, jstr(o->as_meta, "registration_endpoint"), body,
                    "Content-Type: application/json", NULL, register_done) != MCP_OK)
        fail(o, "out of memory");
    free(body);
}

static void no_user(mcp_oauth *o);

static void identity(mcp_oauth *o)
{
    int code = o->grant == MCP_OAUTH_AUTHORIZATION_CODE;
    if (code && o->on_redirect == NULL) {
        no_user(o);
        return;
    }
    if (loopback(o) != MCP_OK) {
        fail(o, "cannot listen on 127.0.0.1 for the browser's redirect");
        return;
    }
    if (o->cfg_client_id == NULL && o->grant == MCP_OAUTH_CLIENT_CREDENTIALS) {
        /* Client credentials kept from an earlier sign-in: for their issuer only. */
        if (o->client_id == NULL || o->client_issuer == NULL ||
            strcmp(o->client_issuer, o->issuer) != 0) {
            fail(o,
                 "the server now names the authorization server %s, which the client "
                 "credentials kept are not for: log in again",
                 o->issuer);
            return;
        }
    } else if (o->cfg_client_id != NULL) {
        mcp__oauth_set(&o->client_id, o->cfg_client_id);
        mcp__oauth_set(&o->client_secret, o->cfg_client_secret);
        mcp__oauth_set(&o->client_auth, o->cfg_auth_method);
        mcp__oauth_set(&o->client_issuer, o->issuer);
    } else if (o->client_id != NULL && o->client_issuer != NULL &&
               strcmp(o->client_issuer, o->issuer) == 0) {
        /* Registered with this authorization server before. */
    } else if (o->client_metadata_url != NULL &&
               json_is_true(json_object_get(o->as_meta, "client_id_metadata_document_supported"))) {
        mcp__oauth_set(&o->client_id, o->client_metadata_url);
        mcp__oauth_set(&o->client_secret, NULL);
        mcp__oauth_set(&o->client_auth, "none");
        mcp__oauth_set(&o->client_issuer, o->issuer);
    } else if (jstr(o->as_meta, "registration_endpoint") != NULL) {
        if (code && o->redirect_uri == NULL)
            fail(o, "no redirect_uri to register: the authorization code grant needs one");
        else
            register_client(o);
        return;
    } else {
        fail(o,
             "the authorization server %s offers no way to register this client (no "
             "registration endpoint, no client ID metadata documents): give a client_id",
             o->issuer);
        return;
    }
    go(o, after_identity(o));
}

/* ---- The scope to ask for ---- */

/* 1 when the space-separated list holds scope. */
static int has_scope(const char *list, const char *scope)
{
    size_t n = strlen(scope);
    for (const char *p = list; p != NULL && *p != '\0';) {
        p += strspn(p, " ");
        size_t m = strcspn(p, " ");
        if (m == n && strncmp(p, scope, n) == 0)
            return 1;
        p += m;
    }
    return 0;
}

static char *chosen_scope(mcp_oauth *o)
{
    const char *s = o->want_scope != NULL    ? o->want_scope
                    : o->cfg_scope != NULL   ? o->cfg_scope
                    : o->ch_scope != NULL    ? o->ch_scope
                    : o->asked_scope != NULL ? o->asked_scope
                                             : NULL;
    mcp__buf b = {0};
    if (s != NULL && mcp__buf_appends(&b, s) != MCP_OK)
        return NULL;
    if (s == NULL && json_array_size(o->prm_scopes) > 0) {
        size_t i;
        const json_t *v;
        json_array_foreach(o->prm_scopes, i, v) if (json_is_string(v))
        {
            if ((b.len > 0 && mcp__buf_append(&b, " ", 1) != MCP_OK) ||
                mcp__buf_appends(&b, json_string_value(v)) != MCP_OK) {
                mcp__buf_free(&b);
                return NULL;
            }
        }
    }
    /* A refresh token, when the authorization server offers one that way. */
    if (o->grant == MCP_OAUTH_AUTHORIZATION_CODE &&
        as_supports(o, "scopes_supported", "offline_access")) {
        if (!has_scope(b.data, "offline_access") &&
            ((b.len > 0 && mcp__buf_append(&b, " ", 1) != MCP_OK) ||
             mcp__buf_appends(&b, "offline_access") != MCP_OK)) {
            mcp__buf_free(&b);
            return NULL;
        }
    }
    if (b.data == NULL)
        return mcp__strdup("");
    return mcp__buf_steal(&b);
}

/* The resource parameter (RFC 8707), or NULL when none is sent. */
static const char *resource_param(const mcp_oauth *o)
{
    if (o->omit_resource)
        return NULL;
    if (o->cfg_resource != NULL)
        return o->cfg_resource;
    return o->resource != NULL ? o->resource : o->server_url;
}

/* ---- The browser step ---- */

static void timer_fired(uv_timer_t *t)
{
    mcp_oauth *o = t->data;
    if (o->flow == OF_NONE)
        return;
    if (o->step == OS_BROWSER)
        fail(o, "the browser step did not come back within %d s", o->redirect_timeout_ms / 1000);
    else if (o->step == OS_DEVICE_POLL)
        token_request(o);
    else if (o->step == OS_REFRESH)
        refresh(o);
}

/* The flow's timer fires in ms: the browser step's deadline, or the device grant's
 * next poll. */
static void arm(mcp_oauth *o, uint64_t ms)
{
    if (o->timer == NULL) {
        if ((o->timer = malloc(sizeof(*o->timer))) == NULL) {
            fail(o, "out of memory");
            return;
        }
        uv_timer_init(o->loop, o->timer);
        o->timer->data = o;
        mcp__oauth_ref(o); /* the timer's, until it is closed */
    }
    uv_timer_start(o->timer, timer_fired, ms, 0);
}

/* The authorization code grant needs a user, and the provider has no way to ask one:
 * the flow fails, naming the scope a sign-in would need. */
static void no_user(mcp_oauth *o)
{
    char *scope = chosen_scope(o);
    char *p = scope != NULL ? mcp__oauth_printable(scope, 300) : NULL;
    int named = p != NULL && p[0] != '\0';
    fail(o,
         "the server needs a user to sign in%s%s%s, and this client cannot ask one (no "
         "on_redirect): sign in first%s",
         named ? " with the scope \"" : "", named ? p : "", named ? "\"" : "",
         o->asked_scope != NULL || o->scope != NULL ? " (the sign-in kept does not have that scope)"
                                                    : "");
    free(p);
    free(scope);
}

static void browser(mcp_oauth *o)
{
    if (o->on_redirect == NULL || o->redirect_uri == NULL) {
        no_user(o);
        return;
    }
    const char *ep = jstr(o->as_meta, "authorization_endpoint");
    if (ep == NULL) {
        fail(o, "the authorization server's metadata has no authorization_endpoint");
        return;
    }
    if (!o->legacy && !as_supports(o, "code_challenge_methods_supported", "S256")) {
        fail(o, "the authorization server does not support PKCE with S256 "
                "(code_challenge_methods_supported): refused");
        return;
    }
    free_secret(&o->verifier);
    free(o->state);
    o->verifier = mcp__random_b64url(32);
    o->state = mcp__random_b64url(24);
    char *challenge = o->verifier != NULL ? mcp__sha256_b64url(o->verifier, 43) : NULL;
    char *scope = chosen_scope(o);
    mcp__buf q = {0};
    const char *res = resource_param(o);
    int bad =
        challenge == NULL || scope == NULL || o->state == NULL ||
        mcp__form_add(&q, "response_type", "code") != MCP_OK ||
        mcp__form_add(&q, "client_id", o->client_id) != MCP_OK ||
        mcp__form_add(&q, "redirect_uri", o->redirect_uri) != MCP_OK ||
        mcp__form_add(&q, "state", o->state) != MCP_OK ||
        mcp__form_add(&q, "code_challenge", challenge) != MCP_OK ||
        mcp__form_add(&q, "code_challenge_method", "S256") != MCP_OK ||
        (scope[0] != '\0' && mcp__form_add(&q, "scope", scope) != MCP_OK) ||
        /* A refresh token is granted only with the user's consent (OpenID
         * Connect Core §11): ask for it when offline_access is asked. */
        (has_scope(scope, "offline_access") && mcp__form_add(&q, "prompt", "consent") != MCP_OK) ||
        (res != NULL && mcp__form_add(&q, "resource", res) != MCP_OK) ||
        mcp__buf_append(&q, "", 1) != MCP_OK;
    free(o->want_scope);
    o->want_scope = scope; /* what the token will be for, when the response says nothing */
    free(challenge);
    char *url =
        bad ? NULL : mcp__asprintf("%s%c%s", ep, strchr(ep, '?') != NULL ? '&' : '?', q.data);
    mcp__buf_free(&q);
    if (url == NULL) {
        fail(o, "out of memory");
        return;
    }
    free(o->browser_url);
    o->browser_url = url;
    arm(o, (uint64_t)o->redirect_timeout_ms);
    o->on_redirect(o, url, o->redirect_user);
}

void mcp__oauth_flow_callback(mcp_oauth *o, const char *url)
{
    if (o->flow == OF_NONE || o->step != OS_BROWSER) {
        mcp__warn("oauth: a browser callback arrived when none was awaited: ignored");
        return;
    }
    if (o->timer != NULL)
        uv_timer_stop(o->timer);
    const char *q = strchr(url, '?');
    char *query = q != NULL ? mcp__strdup(q + 1) : mcp__strdup("");
    if (query != NULL)
        query[strcspn(query, "#")] = '\0';
    int dup_state = 0, dup_code = 0, dup_iss = 0;
    char *state = query != NULL ? mcp__form_get(query, "state", &dup_state) : NULL;
    char *code = query != NULL ? mcp__form_get(query, "code", &dup_code) : NULL;
    char *iss = query != NULL ? mcp__form_get(query, "iss", &dup_iss) : NULL;
    char *err = query != NULL ? mcp__form_get(query, "error", NULL) : NULL;
    char *desc = query != NULL ? mcp__form_get(query, "error_description", NULL) : NULL;
    free(query);
    int iss_required =
        json_is_true(json_object_get(o->as_meta, "authorization_response_iss_parameter_supported"));
    if (state == NULL || o->state == NULL || dup_state || strcmp(state, o->state) != 0) {
        fail(o,
             "the browser came back with %s state: not the answer to this client's "
             "authorization request (refused)",
             state == NULL ? "no" : "another");
    } else if (!o->legacy &&
               (dup_iss || (iss != NULL && !issuer_ok(o, iss)) || (iss == NULL && iss_required))) {
        /* RFC 9207: a response from another authorization server (mix-up). */
        char *p = iss != NULL ? mcp__oauth_printable(iss, 200) : NULL;
        fail(o,
             "the authorization response's iss is %s%s%s where %s was expected (RFC 9207): "
             "refused",
             p != NULL ? "\"" : "missing", p != NULL ? p : "", p != NULL ? "\"" : "", o->issuer);
        free(p);
    } else if (err != NULL) {
        char *pe = mcp__oauth_printable(err, 64);
        char *pd = desc != NULL ? mcp__oauth_printable(desc, 200) : NULL;
        fail(o, "the authorization server refused the authorization: %s%s%s", pe != NULL ? pe : "",
             pd != NULL ? ": " : "", pd != NULL ? pd : "");
        free(pe);
        free(pd);
    } else if (code == NULL || code[0] == '\0' || dup_code) {
        fail(o, "the browser came back without an authorization code");
    } else {
        free_secret(&o->browser_url);
        o->browser_url = code; /* the code, until the token request is made */
        code = NULL;
        o->step = OS_TOKEN;
        step(o);
    }
    free(state);
    if (code != NULL) {
        memset(code, 0, strlen(code));
        free(code);
    }
    free(iss);
    free(err);
    free(desc);
}

/* ---- The device authorization grant (RFC 8628) ---- */

/* Bounds on what a device authorization response may say. */
#define DEVICE_CODE_MAX 4096
#define USER_CODE_MAX 64
#define DEVICE_INTERVAL_MAX_S 60

static void device_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    const char *ep = jstr(o->as_meta, "device_authorization_endpoint");
    json_t *j = h->status >= 200 && h->status < 300 ? mcp__ohttp_json(h) : NULL;
    if (j == NULL) {
        char *msg = as_error(h, "the device authorization request", ep);
        mcp__ohttp_free(h);
        fail_msg(o, msg);
        return;
    }
    mcp__ohttp_free(h);
    const char *dc = jstr(j, "device_code"), *uc = jstr(j, "user_code");
    const char *vu = jstr(j, "verification_uri"), *vc = jstr(j, "verification_uri_complete");
    const json_t *exp = json_object_get(j, "expires_in"), *iv = json_object_get(j, "interval");
    if (dc == NULL || !printable(dc, DEVICE_CODE_MAX) || uc == NULL ||
        !printable(uc, USER_CODE_MAX) || !http_url(vu) || (vc != NULL && !http_url(vc)) ||
        !json_is_integer(exp) || json_integer_value(exp) <= 0 ||
        (iv != NULL && (!json_is_integer(iv) || json_integer_value(iv) < 0))) {
        json_decref(j);
        fail(o,
             "the device authorization response at %s is not one (device_code, user_code, "
             "an http(s) verification_uri and a positive expires_in are needed)",
             ep);
        return;
    }
    json_int_t secs = json_integer_value(exp);
    if (secs > 86400)
        secs = 86400; /* a day at most: the wait is bounded by redirect_timeout_ms anyway */
    json_int_t every = iv != NULL ? json_integer_value(iv) : 5;
    if (every < 1)
        every = 1;
    if (every > DEVICE_INTERVAL_MAX_S)
        every = DEVICE_INTERVAL_MAX_S;
    uint64_t wait = secs * 1000 < o->redirect_timeout_ms ? (uint64_t)secs * 1000
                                                         : (uint64_t)o->redirect_timeout_ms;
    mcp__oauth_set(&o->device_code, dc);
    o->device_interval_ms = (int)every * 1000;
    o->device_deadline = mcp__now_ms() + wait;
    o->step = OS_DEVICE_POLL;
    arm(o, (uint64_t)o->device_interval_ms);
    o->on_device_code(o, vu, uc, vc, o->device_user);
    json_decref(j);
}

static int client_auth(mcp_oauth *o, const char *client_id, const char *secret, const char *method,
                       mcp__buf *form, struct curl_slist **hdrs);
static const char *auth_method(mcp_oauth *o);
static const char *resource_param(const mcp_oauth *o);
static void post_form(mcp_oauth *o, const char *url, mcp__buf *form, struct curl_slist *hdrs,
                      int bad, void (*done)(mcp__ohttp *h));

static void device_start(mcp_oauth *o)
{
    const char *ep = jstr(o->as_meta, "device_authorization_endpoint");
    if (ep == NULL) {
        fail(o,
             "the authorization server %s has no device_authorization_endpoint: it does "
             "not offer the device grant",
             o->issuer);
        return;
    }
    mcp__buf form = {0};
    struct curl_slist *hdrs = NULL;
    char *scope = chosen_scope(o);
    const char *res = resource_param(o);
    int bad =
        scope == NULL || (scope[0] != '\0' && mcp__form_add(&form, "scope", scope) != MCP_OK) ||
        (res != NULL && mcp__form_add(&form, "resource", res) != MCP_OK) ||
        client_auth(o, o->client_id, o->client_secret, auth_method(o), &form, &hdrs) != MCP_OK ||
        mcp__buf_append(&form, "", 1) != MCP_OK;
    free(o->want_scope);
    o->want_scope = scope;
    post_form(o, ep, &form, hdrs, bad, device_done);
}

/* A poll's answer says to wait (RFC 8628 §3.5): 1 when the next poll is armed or the
 * flow failed, 0 when the answer is something else. */
static int device_wait(mcp_oauth *o, const char *err)
{
    if (o->step != OS_DEVICE_POLL || err == NULL)
        return 0;
    int slow = strcmp(err, "slow_down") == 0;
    if (!slow && strcmp(err, "authorization_pending") != 0)
        return 0;
    if (slow && o->device_interval_ms < DEVICE_INTERVAL_MAX_S * 1000)
        o->device_interval_ms += 5000;
    if (mcp__now_ms() + (uint64_t)o->device_interval_ms > o->device_deadline) {
        fail(o,
             "the sign-in on the other device was not approved in time (the device code "
             "expired, or the wait limit of %d s was reached%s)",
             o->redirect_timeout_ms / 1000, slow ? "; the server kept saying slow_down" : "");
        return 1;
    }
    arm(o, (uint64_t)o->device_interval_ms);
    return 1;
}

/* ---- The token endpoint ---- */

/* The client's authentication at the token endpoint: which method. */
static const char *auth_method(mcp_oauth *o)
{
    if (o->client_key != NULL)
        return "private_key_jwt";
    if (o->client_auth != NULL)
        return o->client_auth;
    if (o->client_secret == NULL)
        return "none";
    if (json_object_get(o->as_meta, "token_endpoint_auth_methods_supported") == NULL ||
        as_supports(o, "token_endpoint_auth_methods_supported", "client_secret_basic"))
        return "client_secret_basic";
    return "client_secret_post";
}

/* A private_key_jwt assertion (RFC 7523 §3): aud is the issuer. */
static char *client_assertion(mcp_oauth *o)
{
    char *jti = mcp__random_b64url(18);
    json_int_t now = (json_int_t)(mcp__wall_ms() / 1000);
    json_t *claims = jti != NULL ? json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "iss", o->client_id,
                                             "sub", o->client_id, "aud", o->issuer, "jti", jti,
                                             "iat", now, "exp", now + 300)
                                 : NULL;
    json_t *header = json_pack("{s:s}", "typ", "JWT");
    char *jws =
        claims != NULL && header != NULL ? mcp__jws_sign(o->client_key, header, claims) : NULL;
    json_decref(claims);
    json_decref(header);
    free(jti);
    return jws;
}

/* Adds the client's authentication to a token request. */
static int client_auth(mcp_oauth *o, const char *client_id, const char *secret, const char *method,
                       mcp__buf *form, struct curl_slist **hdrs)
{
    if (strcmp(method, "private_key_jwt") == 0 && o->client_key != NULL) {
        char *a = client_assertion(o);
        int rc = a != NULL && mcp__form_add(form, "client_id", client_id) == MCP_OK &&
                         mcp__form_add(form, "client_assertion_type", CA_JWT_BEARER) == MCP_OK &&
                         mcp__form_add(form, "client_assertion", a) == MCP_OK
                     ? MCP_OK
                     : MCP_ENOMEM;
        free(a);
        return rc;
    }
    if (strcmp(method, "client_secret_basic") == 0 && secret != NULL) {
        /* RFC 6749 §2.3.1: each form-encoded, then Basic. */
        mcp__buf cred = {0};
        mcp__buf tmp = {0};
        int rc = MCP_ENOMEM;
        if (mcp__form_add(&tmp, "u", client_id) == MCP_OK &&
            mcp__buf_append(&cred, tmp.data + 2, tmp.len - 2) == MCP_OK &&
            mcp__buf_append(&cred, ":", 1) == MCP_OK) {
            mcp__buf_reset(&tmp);
            if (mcp__form_add(&tmp, "s", secret) == MCP_OK &&
                mcp__buf_append(&cred, tmp.data + 2, tmp.len - 2) == MCP_OK) {
                char *b64 = mcp__base64_encode(cred.data, cred.len);
                char *line = b64 != NULL ? mcp__asprintf("Authorization: Basic %s", b64) : NULL;
                struct curl_slist *n = line != NULL ? curl_slist_append(*hdrs, line) : NULL;
                if (n != NULL) {
                    *hdrs = n;
                    rc = MCP_OK;
                }
                if (line != NULL)
                    memset(line, 0, strlen(line));
                free(line);
                free(b64);
            }
        }
        if (cred.data != NULL)
            memset(cred.data, 0, cred.len);
        mcp__buf_free(&cred);
        mcp__buf_free(&tmp);
        return rc;
    }
    if (mcp__form_add(form, "client_id", client_id) != MCP_OK)
        return MCP_ENOMEM;
    if (strcmp(method, "client_secret_post") == 0 && secret != NULL &&
        mcp__form_add(form, "client_secret", secret) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

static void token_done(mcp__ohttp *h);

/* POSTs form (NUL-terminated; wiped and freed) with hdrs (owned) to url, unless bad
 * (the request could not be made: out of memory). */
static void post_form(mcp_oauth *o, const char *url, mcp__buf *form, struct curl_slist *hdrs,
                      int bad, void (*done)(mcp__ohttp *h))
{
    int rc = bad ? MCP_ENOMEM : exchange(o, url, form->data, hdrs, done);
    if (bad)
        curl_slist_free_all(hdrs);
    if (form->data != NULL)
        memset(form->data, 0, form->len);
    mcp__buf_free(form);
    if (rc != MCP_OK)
        fail(o, "out of memory");
}

/* The token request of the step (code, client credentials, jwt-bearer, refresh). */
static void token_request(mcp_oauth *o)
{
    const char *ep = jstr(o->as_meta, "token_endpoint");
    mcp__buf form = {0};
    struct curl_slist *hdrs = NULL;
    char *scope = NULL, *assertion = NULL;
    int bad = 0;
    if (o->step == OS_REFRESH) {
        bad = mcp__form_add(&form, "grant_type", "refresh_token") != MCP_OK ||
              mcp__form_add(&form, "refresh_token", o->refresh_token) != MCP_OK;
    } else if (o->step == OS_DEVICE_POLL) {
        bad = mcp__form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:device_code") !=
                  MCP_OK ||
              mcp__form_add(&form, "device_code", o->device_code) != MCP_OK;
    } else if (o->grant == MCP_OAUTH_AUTHORIZATION_CODE) {
        bad = mcp__form_add(&form, "grant_type", "authorization_code") != MCP_OK ||
              mcp__form_add(&form, "code", o->browser_url) != MCP_OK ||
              mcp__form_add(&form, "redirect_uri", o->redirect_uri) != MCP_OK ||
              mcp__form_add(&form, "code_verifier", o->verifier) != MCP_OK;
    } else {
        scope = chosen_scope(o);
        if (o->grant == MCP_OAUTH_CLIENT_CREDENTIALS) {
            bad = mcp__form_add(&form, "grant_type", "client_credentials") != MCP_OK;
        } else {
            assertion = o->grant == MCP_OAUTH_ENTERPRISE ? mcp__strdup(o->idp_jag)
                        : o->assertion != NULL           ? mcp__strdup(o->assertion)
                                               : o->on_assertion(o, o->issuer, o->assertion_user);
            if (assertion == NULL) {
                mcp__buf_free(&form);
                free(scope);
                fail(o, "no assertion for the jwt-bearer grant");
                return;
            }
            bad = mcp__form_add(&form, "grant_type", GT_JWT_BEARER) != MCP_OK ||
                  mcp__form_add(&form, "assertion", assertion) != MCP_OK;
        }
        bad = bad || scope == NULL ||
              (scope[0] != '\0' && mcp__form_add(&form, "scope", scope) != MCP_OK);
        free(o->want_scope);
        o->want_scope = scope;
    }
    const char *res = resource_param(o);
    bad = bad || (res != NULL && mcp__form_add(&form, "resource", res) != MCP_OK) ||
          client_auth(o, o->client_id, o->client_secret, auth_method(o), &form, &hdrs) != MCP_OK;
    if (!bad && o->dpop_key != NULL) {
        char *proof = mcp__oauth_dpop_proof(o, "POST", ep, NULL, o->as_nonce);
        char *line = proof != NULL ? mcp__asprintf("DPoP: %s", proof) : NULL;
        struct curl_slist *n = line != NULL ? curl_slist_append(hdrs, line) : NULL;
        if (n != NULL)
            hdrs = n;
        else
            bad = 1;
        free(proof);
        free(line);
    }
    bad = bad || mcp__buf_append(&form, "", 1) != MCP_OK;
    if (assertion != NULL) {
        memset(assertion, 0, strlen(assertion));
        free(assertion);
    }
    post_form(o, ep, &form, hdrs, bad, token_done);
}

static void token_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    const char *ep = jstr(o->as_meta, "token_endpoint");
    if (h->dpop_nonce != NULL && o->dpop_key != NULL)
        mcp__oauth_set(&o->as_nonce, h->dpop_nonce);
    json_t *j = mcp__ohttp_json(h);
    const char *err = jstr(j, "error");
    /* RFC 9449 §8: the authorization server wants a nonce in the proof; once. */
    if (h->status == 400 && err != NULL && strcmp(err, "use_dpop_nonce") == 0 &&
        h->dpop_nonce != NULL && o->dpop_key != NULL && !o->nonce_retried) {
        o->nonce_retried = 1;
        json_decref(j);
        mcp__ohttp_free(h);
        token_request(o);
        return;
    }
    o->nonce_retried = 0;
    if (h->status == 400 && device_wait(o, err)) {
        json_decref(j);
        mcp__ohttp_free(h);
        return;
    }
    if (h->status < 200 || h->status >= 300 || j == NULL) {
        int refresh = o->step == OS_REFRESH;
        int dead = refresh && err != NULL && strcmp(err, "invalid_grant") == 0;
        char *msg =
            j == NULL && h->rc == CURLE_OK && h->status >= 200 && h->status < 300
                ? mcp__asprintf("%s at %s: HTTP %ld, and its body is not a JSON object",
                                refresh ? "the token refresh" : "the token request", ep, h->status)
                : as_error(h, refresh ? "the token refresh" : "the token request", ep);
        json_decref(j);
        mcp__ohttp_free(h);
        if (dead && mcp__oauth_reload(o) && mcp__oauth_usable(o)) {
            /* Another process refreshed first (its tokens are in the store): taken. */
            free(msg);
            mcp__oauth_flow_end(o, MCP_OK, NULL);
            return;
        }
        if (dead) {
            /* The refresh token is dead (revoked, expired, rotated away). */
            mcp__oauth_forget(o, 0);
            mcp__oauth_save(o);
            if (o->grant != MCP_OAUTH_AUTHORIZATION_CODE || o->on_redirect != NULL) {
                free(msg);
                o->flow = OF_AUTHORIZE;
                o->step = OS_PRM;
                step(o);
                return;
            }
            fail(o, "%s; the stored sign-in is no longer valid: log in again", msg);
            free(msg);
            return;
        }
        fail_msg(o, msg);
        return;
    }
    mcp__ohttp_free(h);
    char *why = NULL;
    /* What was asked is kept with the tokens (saved by take_tokens): a renewal by a grant
     * that needs no user asks for it again. */
    if (o->want_scope != NULL)
        mcp__oauth_set(&o->asked_scope, o->want_scope);
    /* A refresh that does not say its scope has the scope the token had. */
    int rc = mcp__oauth_take_tokens(o, j, o->want_scope != NULL ? o->want_scope : o->scope, &why);
    json_decref(j);
    if (rc != MCP_OK) {
        fail_msg(o, why);
        return;
    }
    free(o->want_scope);
    o->want_scope = NULL;
    free_secret(&o->browser_url);
    free_secret(&o->verifier);
    mcp__oauth_flow_end(o, MCP_OK, NULL);
}

/* ---- Enterprise-managed authorization: the identity provider's exchange ---- */

static void idp_done(mcp__ohttp *h)
{
    mcp_oauth *o = h->o;
    took(h);
    json_t *j = h->status >= 200 && h->status < 300 ? mcp__ohttp_json(h) : NULL;
    const char *jag = jstr(j, "access_token");
    const char *itt = jstr(j, "issued_token_type");
    if (jag == NULL || itt == NULL || strcmp(itt, TT_ID_JAG) != 0) {
        char *msg =
            j == NULL ? as_error(h, "the identity provider's token exchange", o->idp_token_endpoint)
                      : mcp__asprintf("the identity provider's token exchange at %s "
                                      "gave no identity assertion grant (issued_token_"
                                      "type %s)",
                                      o->idp_token_endpoint, TT_ID_JAG);
        json_decref(j);
        mcp__ohttp_free(h);
        fail_msg(o, msg);
        return;
    }
    mcp__ohttp_free(h);
    mcp__oauth_set(&o->idp_jag, jag);
    json_decref(j);
    o->step = OS_TOKEN;
    step(o);
}

static void idp_exchange(mcp_oauth *o)
{
    mcp__buf form = {0};
    struct curl_slist *hdrs = NULL;
    char *scope = chosen_scope(o);
    const char *res = resource_param(o);
    int bad = scope == NULL || mcp__form_add(&form, "grant_type", GT_TOKEN_EXCHANGE) != MCP_OK ||
              mcp__form_add(&form, "requested_token_type", TT_ID_JAG) != MCP_OK ||
              mcp__form_add(&form, "audience", o->issuer) != MCP_OK ||
              (res != NULL && mcp__form_add(&form, "resource", res) != MCP_OK) ||
              mcp__form_add(&form, "subject_token", o->idp_id_token) != MCP_OK ||
              mcp__form_add(&form, "subject_token_type", TT_ID_TOKEN) != MCP_OK ||
              (scope[0] != '\0' && mcp__form_add(&form, "scope", scope) != MCP_OK) ||
              client_auth(o, o->idp_client_id != NULL ? o->idp_client_id : o->client_id,
                          o->idp_client_secret,
                          o->idp_client_secret != NULL ? "client_secret_post" : "none", &form,
                          &hdrs) != MCP_OK ||
              mcp__buf_append(&form, "", 1) != MCP_OK;
    free(scope);
    post_form(o, o->idp_token_endpoint, &form, hdrs, bad, idp_done);
}

/* ---- The steps ---- */

static void step(mcp_oauth *o)
{
    switch (o->step) {
    case OS_PRM:
        prm_start(o);
        break;
    case OS_ASM:
        asm_start(o);
        break;
    case OS_REGISTER:
        identity(o);
        break;
    case OS_BROWSER:
        browser(o);
        break;
    case OS_DEVICE:
        device_start(o);
        break;
    case OS_IDP_EXCHANGE:
        idp_exchange(o);
        break;
    case OS_TOKEN:
    case OS_REFRESH:
    case OS_DEVICE_POLL:
        token_request(o);
        break;
    }
}

/* Attempts at the store's lock while another process refreshes (100 ms apart). */
#define LOCK_TRIES 50

/* A refresh, once no other process is at it: the store is read again first (another
 * process may have refreshed already: its tokens are taken, and the refresh token it
 * spent is not spent twice, which reuse detection would punish by revoking the grant),
 * and while the lock is held. */
static void refresh(mcp_oauth *o)
{
    if (mcp__oauth_reload(o) && mcp__oauth_usable(o)) {
        mcp__oauth_flow_end(o, MCP_OK, NULL);
        return;
    }
    if (o->store_lock == NULL && o->has_store && o->store.lock != NULL) {
        int rc = o->store.lock(o->store.user, o->server_url, &o->store_lock);
        if (rc == MCP_ESTATE && ++o->lock_tries <= LOCK_TRIES) {
            arm(o, 100);
            return;
        }
        if (rc != MCP_OK)
            o->store_lock = NULL; /* refreshed without it */
        else if (mcp__oauth_reload(o) && mcp__oauth_usable(o)) {
            mcp__oauth_flow_end(o, MCP_OK, NULL);
            return;
        }
    }
    if (o->refresh_token == NULL) {
        /* A grant that needs no user, or the other process's token expired too. */
        o->flow = OF_AUTHORIZE;
        o->step = OS_PRM;
        step(o);
        return;
    }
    token_request(o);
}

void mcp__oauth_flow_start(mcp_oauth *o)
{
    o->nonce_retried = 0;
    o->lock_tries = 0;
    if (o->flow == OF_REFRESH && o->as_meta != NULL) {
        o->step = OS_REFRESH;
        refresh(o);
        return;
    }
    o->flow = OF_AUTHORIZE;
    o->step = OS_PRM;
    step(o);
}

static void timer_closed(uv_handle_t *h)
{
    mcp_oauth *o = h->data;
    free(h);
    mcp__oauth_unref(o);
}

void mcp__oauth_flow_cancel(mcp_oauth *o)
{
    mcp__ohttp_free(o->http);
    o->http = NULL;
    clear_cands(o);
    o->flow = OF_NONE;
    free_secret(&o->verifier);
    free(o->state);
    o->state = NULL;
    free_secret(&o->browser_url);
    free_secret(&o->idp_jag);
    mcp__loopback_stop(o->lb);
    o->lb = NULL;
    mcp__oauth_unlock(o);
    if (o->timer != NULL) {
        uv_close((uv_handle_t *)o->timer, timer_closed);
        o->timer = NULL;
    }
}
