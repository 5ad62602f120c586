/* SPDX-License-Identifier: MIT */
/*
 * The OAuth client's provider: its options, its tokens and what the store
 * keeps of them, the requests that wait for it, and what a refusal from the
 * MCP server starts (see <mcp/oauth.h>). The steps of discovery and of each
 * grant are in flow.c.
 */
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth_int.h"

/* A token this close to its expiry is refreshed before it is used. */
#define EXPIRY_MARGIN_MS 30000
/* The longest token or secret kept (a token response's fields). */
#define TOKEN_MAX (16 * 1024)

int mcp__oauth_set(char **slot, const char *v)
{
    char *c = NULL;
    if (v != NULL && (c = mcp__strdup(v)) == NULL)
        return MCP_ENOMEM;
    free(*slot);
    *slot = c;
    return MCP_OK;
}

static void free_state(mcp_oauth *o)
{
    char **strs[] = {&o->client_redirect, &o->device_code,   &o->issuer,        &o->resource,
                     &o->client_id,       &o->client_secret, &o->client_auth,   &o->client_issuer,
                     &o->access_token,    &o->token_type,    &o->refresh_token, &o->scope,
                     &o->as_nonce,        &o->rs_nonce,      &o->want_scope,    &o->ch_scope,
                     &o->ch_rm,           &o->asked_scope,   &o->last_why};
    for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    json_decref(o->as_meta);
    json_decref(o->prm_scopes);
    o->as_meta = o->prm_scopes = NULL;
}

static void oauth_destroy(mcp_oauth *o)
{
    free_state(o);
    char *opts[] = {
        o->client_name,     o->redirect_uri,  o->cfg_client_id,       o->cfg_client_secret,
        o->cfg_auth_method, o->signing_alg,   o->client_metadata_url, o->cfg_scope,
        o->cfg_resource,    o->issuer_alias,  o->assertion,           o->idp_token_endpoint,
        o->idp_id_token,    o->idp_client_id, o->idp_client_secret,   o->cacert,
        o->server_url,      o->server_origin, o->server_path,         o->cfg_redirect_uri};
    for (size_t i = 0; i < sizeof(opts) / sizeof(*opts); i++)
        free(opts[i]);
    mcp__jkey_free(o->client_key);
    mcp__jkey_free(o->dpop_key);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

void mcp__oauth_ref(mcp_oauth *o)
{
    pthread_mutex_lock(&o->lock);
    o->refs++;
    pthread_mutex_unlock(&o->lock);
}

void mcp__oauth_unref(mcp_oauth *o)
{
    pthread_mutex_lock(&o->lock);
    int last = --o->refs == 0;
    pthread_mutex_unlock(&o->lock);
    if (last)
        oauth_destroy(o);
}

int mcp_oauth_new(const mcp_oauth_opts *opts_in, mcp_oauth **out)
{
    if (out == NULL)
        return MCP_EINVAL;
    *out = NULL;
    mcp_oauth_opts opts;
    if (mcp__opts_copy(&opts, sizeof(opts), opts_in, sizeof(opts)) != MCP_OK)
        return MCP_EINVAL;
    if ((int)opts.grant < MCP_OAUTH_AUTHORIZATION_CODE || opts.grant > MCP_OAUTH_DEVICE ||
        opts.max_step_ups < 0 || opts.max_reauthorizations < 0 || opts.http_timeout_ms < 0 ||
        opts.redirect_timeout_ms < 0)
        return MCP_EINVAL;
    if (opts.grant == MCP_OAUTH_CLIENT_CREDENTIALS && opts.client_id == NULL)
        return MCP_EINVAL;
    if (opts.grant == MCP_OAUTH_JWT_BEARER && opts.assertion == NULL && opts.on_assertion == NULL)
        return MCP_EINVAL;
    if (opts.grant == MCP_OAUTH_ENTERPRISE &&
        (opts.idp_token_endpoint == NULL || opts.idp_id_token == NULL || opts.client_id == NULL))
        return MCP_EINVAL;
    if (opts.client_secret != NULL && opts.client_id == NULL)
        return MCP_EINVAL;
    if (opts.grant == MCP_OAUTH_DEVICE && opts.on_device_code == NULL)
        return MCP_EINVAL;
    if (opts.loopback_redirect &&
        (opts.redirect_uri != NULL || opts.loopback_port < 0 || opts.loopback_port > 65535))
        return MCP_EINVAL;
    mcp_oauth *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return MCP_ENOMEM;
    pthread_mutex_init(&o->lock, NULL);
    o->refs = 1;
    o->grant = opts.grant;
    o->on_redirect = opts.on_redirect;
    o->redirect_user = opts.redirect_user;
    o->on_assertion = opts.on_assertion;
    o->assertion_user = opts.assertion_user;
    o->on_device_code = opts.on_device_code;
    o->device_user = opts.device_user;
    o->loopback = opts.loopback_redirect != 0;
    o->loopback_port = opts.loopback_port;
    o->omit_resource = opts.omit_resource != 0;
    o->dpop = opts.dpop != 0;
    o->max_step_ups = opts.max_step_ups > 0 ? opts.max_step_ups : 2;
    o->max_reauths = opts.max_reauthorizations > 0 ? opts.max_reauthorizations : 2;
    o->http_timeout_ms = opts.http_timeout_ms > 0 ? opts.http_timeout_ms : 30000;
    o->redirect_timeout_ms = opts.redirect_timeout_ms > 0 ? opts.redirect_timeout_ms : 300000;
    if (opts.store != NULL) {
        o->store = *opts.store;
        o->has_store = o->store.load != NULL && o->store.save != NULL;
    }
    struct {
        char **slot;
        const char *v;
    } s[] = {{&o->client_name, opts.client_name != NULL ? opts.client_name : "libmcp"},
             {&o->redirect_uri, opts.redirect_uri},
             {&o->cfg_redirect_uri, opts.redirect_uri},
             {&o->cfg_client_id, opts.client_id},
             {&o->cfg_client_secret, opts.client_secret},
             {&o->cfg_auth_method, opts.token_endpoint_auth_method},
             {&o->signing_alg, opts.signing_alg},
             {&o->client_metadata_url, opts.client_metadata_url},
             {&o->cfg_scope, opts.scope},
             {&o->cfg_resource, opts.resource},
             {&o->issuer_alias, opts.issuer_alias},
             {&o->assertion, opts.assertion},
             {&o->idp_token_endpoint, opts.idp_token_endpoint},
             {&o->idp_id_token, opts.idp_id_token},
             {&o->idp_client_id, opts.idp_client_id},
             {&o->idp_client_secret, opts.idp_client_secret},
             {&o->cacert, opts.cacert}};
    for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
        if (mcp__oauth_set(s[i].slot, s[i].v) != MCP_OK) {
            oauth_destroy(o);
            return MCP_ENOMEM;
        }
    if (opts.private_key_pem != NULL) {
        int rc = mcp__jkey_from_pem(opts.private_key_pem, opts.signing_alg, &o->client_key);
        if (rc != MCP_OK) {
            oauth_destroy(o);
            return rc;
        }
    }
    *out = o;
    return MCP_OK;
}

void mcp_oauth_free(mcp_oauth *o)
{
    if (o != NULL)
        mcp__oauth_unref(o);
}

/* ---- The store ---- */

static const char *const grant_names[] = {"authorization_code", "client_credentials", "jwt_bearer",
                                          "enterprise", "device"};

static json_t *str_or_null(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

void mcp__oauth_save(mcp_oauth *o)
{
    if (!o->has_store || o->server_url == NULL)
        return;
    json_t *doc = json_object();
    char *pem = o->dpop_key != NULL ? mcp__jkey_pem(o->dpop_key) : NULL;
    if (doc == NULL || json_object_set_new(doc, "version", json_integer(1)) != 0 ||
        json_object_set_new(doc, "server", json_string(o->server_url)) != 0 ||
        json_object_set_new(doc, "issuer", str_or_null(o->issuer)) != 0 ||
        json_object_set_new(doc, "grant", json_string(grant_names[o->grant])) != 0 ||
        json_object_set_new(doc, "resource", str_or_null(o->resource)) != 0 ||
        json_object_set(doc, "authorization_server",
                        o->as_meta != NULL ? o->as_meta : json_null()) != 0 ||
        json_object_set_new(
            doc, "client",
            json_pack("{s:o, s:o, s:o, s:o, s:o}", "client_id", str_or_null(o->client_id),
                      "client_secret", str_or_null(o->client_secret), "auth_method",
                      str_or_null(o->client_auth), "issuer", str_or_null(o->client_issuer),
                      "redirect_uri", str_or_null(o->client_redirect))) != 0 ||
        json_object_set_new(
            doc, "tokens",
            json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:I}", "asked_scope",
                      str_or_null(o->asked_scope), "obtained_at", (json_int_t)o->obtained_at,
                      "access_token", str_or_null(o->access_token), "token_type",
                      str_or_null(o->token_type), "refresh_token", str_or_null(o->refresh_token),
                      "scope", str_or_null(o->scope), "expires_at", (json_int_t)o->expires_at)) !=
            0 ||
        json_object_set_new(doc, "dpop_key", str_or_null(pem)) != 0) {
        mcp__warn("oauth: out of memory saving the tokens of %s", o->server_url);
        json_decref(doc);
        free(pem);
        return;
    }
    if (pem != NULL) {
        memset(pem, 0, strlen(pem));
        free(pem);
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    int rc = text != NULL ? o->store.save(o->store.user, o->server_url, text) : MCP_ENOMEM;
    if (text != NULL) {
        memset(text, 0, strlen(text));
        free(text);
    }
    if (rc != MCP_OK)
        mcp__warn("oauth: the token store did not save the tokens of %s: %s", o->server_url,
                  mcp_strerror(rc));
}

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Reads what the store kept for the server. */
/* The store's document for the server, or NULL. */
static json_t *read_doc(mcp_oauth *o)
{
    char *text = NULL;
    if (!o->has_store || o->store.load(o->store.user, o->server_url, &text) != MCP_OK ||
        text == NULL)
        return NULL;
    json_t *doc = json_loads(text, 0, NULL);
    memset(text, 0, strlen(text));
    free(text);
    if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "version")) != 1 ||
        strcmp(jstr(doc, "server") != NULL ? jstr(doc, "server") : "", o->server_url) != 0) {
        if (doc != NULL)
            mcp__warn("oauth: the stored tokens of %s are unreadable: ignored", o->server_url);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Takes the token set of the document. MCP_OK or MCP_ENOMEM. */
static int take_stored_tokens(mcp_oauth *o, const json_t *doc)
{
    const json_t *tk = json_object_get(doc, "tokens");
    if (mcp__oauth_set(&o->access_token, jstr(tk, "access_token")) != MCP_OK ||
        mcp__oauth_set(&o->token_type, jstr(tk, "token_type")) != MCP_OK ||
        mcp__oauth_set(&o->refresh_token, jstr(tk, "refresh_token")) != MCP_OK ||
        mcp__oauth_set(&o->scope, jstr(tk, "scope")) != MCP_OK ||
        (jstr(tk, "asked_scope") != NULL &&
         mcp__oauth_set(&o->asked_scope, jstr(tk, "asked_scope")) != MCP_OK))
        return MCP_ENOMEM;
    o->expires_at = (uint64_t)json_integer_value(json_object_get(tk, "expires_at"));
    o->obtained_at = (uint64_t)json_integer_value(json_object_get(tk, "obtained_at"));
    o->access_refused = 0;
    return MCP_OK;
}

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int mcp__oauth_reload(mcp_oauth *o)
{
    json_t *doc = read_doc(o);
    if (doc == NULL)
        return 0;
    const json_t *tk = json_object_get(doc, "tokens");
    const json_t *cl = json_object_get(doc, "client");
    /* Tokens another process got since: for the same authorization server and client,
     * and not the ones held. */
    int newer = jstr(tk, "access_token") != NULL && same(jstr(doc, "issuer"), o->issuer) &&
                same(jstr(cl, "client_id"), o->client_id) &&
                (!same(jstr(tk, "access_token"), o->access_token) ||
                 !same(jstr(tk, "refresh_token"), o->refresh_token));
    if (newer && take_stored_tokens(o, doc) == MCP_OK)
        o->generation++;
    else
        newer = 0;
    json_decref(doc);
    return newer;
}

static void load(mcp_oauth *o)
{
    json_t *doc = read_doc(o);
    if (doc == NULL)
        return;
    const json_t *cl = json_object_get(doc, "client");
    const json_t *as = json_object_get(doc, "authorization_server");
    int bad = mcp__oauth_set(&o->issuer, jstr(doc, "issuer")) != MCP_OK ||
              mcp__oauth_set(&o->resource, jstr(doc, "resource")) != MCP_OK ||
              mcp__oauth_set(&o->client_id, jstr(cl, "client_id")) != MCP_OK ||
              mcp__oauth_set(&o->client_secret, jstr(cl, "client_secret")) != MCP_OK ||
              mcp__oauth_set(&o->client_auth, jstr(cl, "auth_method")) != MCP_OK ||
              mcp__oauth_set(&o->client_issuer, jstr(cl, "issuer")) != MCP_OK ||
              mcp__oauth_set(&o->client_redirect, jstr(cl, "redirect_uri")) != MCP_OK ||
              take_stored_tokens(o, doc) != MCP_OK;
    if (json_is_object(as))
        o->as_meta = json_incref((json_t *)as);
    /* Tokens bound to a key need that key, whatever the options said. */
    const char *pem = jstr(doc, "dpop_key");
    int bound = o->token_type != NULL && strcmp(o->token_type, "DPoP") == 0;
    if ((o->dpop || bound) && pem != NULL && o->dpop_key == NULL &&
        mcp__jkey_from_pem(pem, "ES256", &o->dpop_key) != MCP_OK)
        o->dpop_key = NULL; /* a new one is made */
    if (o->dpop_key != NULL)
        o->dpop = 1;
    /* A provider that cannot sign a user in takes a grant that needs none: the client
     * kept, bound to the issuer that registered it (never offered to another). */
    const char *grant = jstr(doc, "grant");
    if (o->grant == MCP_OAUTH_AUTHORIZATION_CODE && o->on_redirect == NULL &&
        o->cfg_client_id == NULL && grant != NULL && strcmp(grant, "client_credentials") == 0 &&
        o->client_id != NULL && o->client_secret != NULL && o->client_issuer != NULL)
        o->grant = MCP_OAUTH_CLIENT_CREDENTIALS;
    json_decref(doc);
    if (bad)
        mcp__oauth_forget(o, 1);
    else if (o->access_token != NULL || o->refresh_token != NULL)
        o->generation++;
}

void mcp__oauth_forget(mcp_oauth *o, int forget_client)
{
    mcp__oauth_set(&o->access_token, NULL);
    mcp__oauth_set(&o->token_type, NULL);
    mcp__oauth_set(&o->refresh_token, NULL);
    o->expires_at = o->obtained_at = 0;
    if (forget_client) {
        mcp__oauth_set(&o->client_id, NULL);
        mcp__oauth_set(&o->client_secret, NULL);
        mcp__oauth_set(&o->client_auth, NULL);
        mcp__oauth_set(&o->client_issuer, NULL);
        mcp__oauth_set(&o->client_redirect, NULL);
    }
}

/* ---- Attaching to a connection ---- */

static void mb_closed(mcp__mailbox *mb)
{
    mcp_oauth *o = mb->async.data;
    free(mb);
    mcp__oauth_unref(o);
}

static void curl_closed(void *user)
{
    mcp__oauth_unref(user);
}

int mcp__oauth_attach(mcp_oauth *o, uv_loop_t *loop, const char *server_url, const char *cacert)
{
    if (o->attached)
        return MCP_ESTATE;
    if (o->cacert == NULL && cacert != NULL && mcp__oauth_set(&o->cacert, cacert) != MCP_OK)
        return MCP_ENOMEM;
    char *origin = NULL, *path = NULL;
    int rc = mcp__url_split(server_url, &origin, &path);
    if (rc != MCP_OK)
        return rc;
    if (mcp__oauth_set(&o->server_url, server_url) != MCP_OK) {
        free(origin);
        free(path);
        return MCP_ENOMEM;
    }
    free(o->server_origin);
    free(o->server_path);
    o->server_origin = origin;
    o->server_path = path;
    if (mcp__curlm_new(loop, &o->curl) != MCP_OK)
        return MCP_ENOMEM;
    mcp__mailbox *mb = calloc(1, sizeof(*mb));
    if (mb == NULL || mcp__mailbox_init(mb, loop) != MCP_OK) {
        free(mb);
        mcp__curlm_close(o->curl, NULL, NULL);
        o->curl = NULL;
        return MCP_EIO;
    }
    mb->async.data = o;
    o->mb = mb;
    o->loop = loop;
    pthread_mutex_lock(&o->lock);
    o->refs += 2; /* the mailbox's and the curl driver's */
    o->mb_open = 1;
    pthread_mutex_unlock(&o->lock);
    o->attached = 1;
    /* What a store kept for another server is not this one's. */
    free_state(o);
    load(o);
    if (o->dpop && o->dpop_key == NULL && mcp__jkey_new_es256(&o->dpop_key) != MCP_OK) {
        mcp__oauth_detach(o);
        return MCP_ENOMEM;
    }
    return MCP_OK;
}

void mcp__oauth_detach(mcp_oauth *o)
{
    if (o == NULL || !o->attached)
        return;
    o->attached = 0;
    mcp__oauth_flow_cancel(o);
    for (mcp__oauth_waiter *w = o->waiters; w != NULL; w = w->next)
        w->waiting = 0, w->list = NULL;
    o->waiters = NULL;
    pthread_mutex_lock(&o->lock);
    o->mb_open = 0;
    pthread_mutex_unlock(&o->lock);
    mcp__mailbox_close(o->mb, mb_closed);
    o->mb = NULL; /* freed once closed: a next attachment has its own */
    mcp__curlm_close(o->curl, curl_closed, o);
    o->curl = NULL;
}

/* ---- What requests carry ---- */

char *mcp__oauth_dpop_proof(mcp_oauth *o, const char *method, const char *url, const char *token,
                            const char *nonce)
{
    char *jti = mcp__random_b64url(16);
    char *ath = token != NULL ? mcp__sha256_b64url(token, strlen(token)) : NULL;
    /* htu: the URL without query and fragment (RFC 9449 §4.2). */
    size_t ulen = strcspn(url, "?#");
    char *htu = malloc(ulen + 1);
    json_t *jwk = mcp__jkey_public_jwk(o->dpop_key);
    json_t *header = jwk != NULL ? json_pack("{s:s, s:o}", "typ", "dpop+jwt", "jwk", jwk) : NULL;
    json_t *claims = NULL;
    char *proof = NULL;
    if (jti != NULL && htu != NULL && header != NULL && (token == NULL || ath != NULL)) {
        memcpy(htu, url, ulen);
        htu[ulen] = '\0';
        claims = json_pack("{s:s, s:s, s:s, s:I}", "jti", jti, "htm", method, "htu", htu, "iat",
                           (json_int_t)(mcp__wall_ms() / 1000));
        if (claims != NULL && ath != NULL)
            json_object_set_new(claims, "ath", json_string(ath));
        if (claims != NULL && nonce != NULL)
            json_object_set_new(claims, "nonce", json_string(nonce));
        if (claims != NULL)
            proof = mcp__jws_sign(o->dpop_key, header, claims);
    }
    json_decref(header);
    json_decref(claims);
    free(jti);
    free(ath);
    free(htu);
    return proof;
}

static int is_dpop_token(const mcp_oauth *o)
{
    return o->dpop_key != NULL && o->token_type != NULL && strcasecmp(o->token_type, "DPoP") == 0;
}

int mcp__oauth_headers(mcp_oauth *o, const char *method, const char *url, char *lines[2],
                       uint64_t *generation)
{
    lines[0] = lines[1] = NULL;
    *generation = o->generation;
    if (o->access_token == NULL)
        return MCP_OK;
    /* Never to another origin than the server's. */
    char *origin = NULL, *path = NULL;
    if (mcp__url_split(url, &origin, &path) != MCP_OK || strcmp(origin, o->server_origin) != 0) {
        free(origin);
        free(path);
        return MCP_OK;
    }
    free(origin);
    free(path);
    if (is_dpop_token(o)) {
        char *proof = mcp__oauth_dpop_proof(o, method, url, o->access_token, o->rs_nonce);
        lines[0] = mcp__asprintf("Authorization: DPoP %s", o->access_token);
        lines[1] = proof != NULL ? mcp__asprintf("DPoP: %s", proof) : NULL;
        free(proof);
        if (lines[0] == NULL || lines[1] == NULL)
            goto nomem;
        return MCP_OK;
    }
    lines[0] = mcp__asprintf("Authorization: Bearer %s", o->access_token);
    if (lines[0] == NULL)
        goto nomem;
    return MCP_OK;
nomem:
    free(lines[0]);
    free(lines[1]);
    lines[0] = lines[1] = NULL;
    return MCP_ENOMEM;
}

void mcp__oauth_unlock(mcp_oauth *o)
{
    if (o->store_lock != NULL && o->store.unlock != NULL)
        o->store.unlock(o->store.user, o->store_lock);
    o->store_lock = NULL;
}

void mcp__oauth_server_nonce(mcp_oauth *o, const char *nonce)
{
    if (o->dpop_key != NULL && nonce != NULL && nonce[0] != '\0')
        mcp__oauth_set(&o->rs_nonce, nonce);
}

/* ---- Waiters ---- */

static void enqueue(mcp_oauth *o, mcp__oauth_waiter *w)
{
    if (w->waiting)
        return;
    w->waiting = 1;
    w->list = &o->waiters;
    MCP__LIST_PUSH(o->waiters, w);
}

void mcp__oauth_unwait(mcp_oauth *o, mcp__oauth_waiter *w)
{
    (void)o;
    if (!w->waiting)
        return;
    MCP__LIST_UNLINK(*w->list, w);
    w->waiting = 0;
    w->list = NULL;
}

/* The waiters of a flow that ended, told from the loop (never inside a call that
 * may have started the flow). */
typedef struct batch {
    mcp__mail m;
    mcp_oauth *o;
    mcp__oauth_waiter *head;
    int rc;
    char *why;
} batch;

static void batch_run(mcp__mail *m)
{
    batch *b = (batch *)m;
    /* Each waiter is taken out before it is told: what it does (send again, fail,
     * end its request) may take others out too. */
    while (b->head != NULL) {
        mcp__oauth_waiter *w = b->head;
        MCP__LIST_UNLINK(b->head, w);
        w->waiting = 0;
        w->list = NULL;
        if (b->o->attached)
            w->done(w, b->rc, b->why);
    }
    free(b->why);
    free(b);
}

void mcp__oauth_flow_end(mcp_oauth *o, int rc, const char *why)
{
    o->flow = OF_NONE;
    mcp__loopback_stop(o->lb);
    o->lb = NULL;
    mcp__oauth_unlock(o);
    mcp__oauth_set(&o->device_code, NULL);
    if (o->timer != NULL)
        uv_timer_stop(o->timer);
    if (rc == MCP_OK)
        o->generation++;
    else
        mcp__info("oauth: authorization for %s failed: %s", o->server_url, why);
    batch *b = calloc(1, sizeof(*b));
    if (b != NULL && why != NULL && (b->why = mcp__strdup(why)) == NULL) {
        free(b);
        b = NULL;
    }
    if (b == NULL) {
        /* Out of memory: the waiters stay queued for the next flow's end. */
        mcp__warn("oauth: out of memory ending an authorization");
        return;
    }
    b->m.fn = batch_run;
    b->o = o;
    b->rc = rc;
    b->head = o->waiters;
    o->waiters = NULL;
    for (mcp__oauth_waiter *w = b->head; w != NULL; w = w->next)
        w->list = &b->head;
    if (o->mb == NULL || mcp__mailbox_post(o->mb, &b->m) != MCP_OK) {
        for (mcp__oauth_waiter *w = b->head; w != NULL; w = w->next)
            w->waiting = 0, w->list = NULL;
        free(b->why);
        free(b);
    }
}

/* Starts a flow of kind for w (or joins the one under way). */
static void need(mcp_oauth *o, enum oflow kind, mcp__oauth_waiter *w)
{
    enqueue(o, w);
    if (o->flow != OF_NONE)
        return;
    o->flow = kind;
    o->refresh_failed = 0;
    mcp__oauth_flow_start(o);
}

/* A token is refreshed this long before it expires: 30 s, or a quarter of its life
 * when that is shorter (a token living 10 s is not refreshed before every request). */
static uint64_t margin(const mcp_oauth *o)
{
    uint64_t life = o->obtained_at != 0 && o->expires_at > o->obtained_at
                        ? o->expires_at - o->obtained_at
                        : 4 * (uint64_t)EXPIRY_MARGIN_MS;
    return life / 4 < EXPIRY_MARGIN_MS ? life / 4 : EXPIRY_MARGIN_MS;
}

int mcp__oauth_usable(const mcp_oauth *o)
{
    return o->access_token != NULL && !o->access_refused &&
           (o->expires_at == 0 || mcp__wall_ms() + margin(o) < o->expires_at);
}

int mcp__oauth_wait_before(mcp_oauth *o, mcp__oauth_waiter *w)
{
    if (o->flow != OF_NONE) {
        enqueue(o, w); /* a token is on its way */
        return 1;
    }
    if (mcp__oauth_usable(o) || o->as_meta == NULL)
        return 0;
    /* Another process may have renewed the tokens kept. */
    if (mcp__oauth_reload(o) && mcp__oauth_usable(o))
        return 0;
    /* Renewed before it is sent: by the refresh token, or by a grant that needs no
     * user. A token known to have expired is not sent to be refused. */
    int no_user = o->grant == MCP_OAUTH_CLIENT_CREDENTIALS || o->grant == MCP_OAUTH_JWT_BEARER ||
                  o->grant == MCP_OAUTH_ENTERPRISE;
    if (o->refresh_token == NULL && !no_user)
        return 0;
    need(o, OF_REFRESH, w);
    return 1;
}

/* The union of two space-separated scope lists, in order, each once; malloc'd. */
char *mcp__oauth_scope_union(const char *a, const char *b)
{
    mcp__buf out = {0};
    const char *lists[2] = {a, b};
    if (mcp__buf_append(&out, " ", 1) != MCP_OK)
        return NULL;
    for (int l = 0; l < 2; l++)
        for (const char *p = lists[l]; p != NULL && *(p += strspn(p, " ")) != '\0';) {
            size_t n = strcspn(p, " ");
            /* out is " a b c " at every step: a scope is in it when " s " is. */
            char *needle = mcp__asprintf(" %.*s ", (int)n, p);
            if (needle == NULL || mcp__buf_reserve(&out, 1) != MCP_OK) {
                free(needle);
                mcp__buf_free(&out);
                return NULL;
            }
            out.data[out.len] = '\0';
            int seen = strstr(out.data, needle) != NULL;
            free(needle);
            if (!seen && (mcp__buf_append(&out, p, n) != MCP_OK ||
                          mcp__buf_append(&out, " ", 1) != MCP_OK)) {
                mcp__buf_free(&out);
                return NULL;
            }
            p += n;
        }
    /* Without the spaces around. */
    size_t len = out.len > 1 ? out.len - 2 : 0;
    char *r = malloc(len + 1);
    if (r != NULL) {
        memcpy(r, out.data + 1, len);
        r[len] = '\0';
    }
    mcp__buf_free(&out);
    return r;
}

int mcp__oauth_refused(mcp_oauth *o, const mcp__oauth_refusal *r, mcp__oauth_waiter *w, char **why)
{
    *why = NULL;
    mcp__challenge ch;
    mcp__challenge_parse(r->www_auth != NULL ? r->www_auth : "", &ch);
    int res = MCP__OAUTH_FINAL;
    int insufficient = ch.error != NULL && strcmp(ch.error, "insufficient_scope") == 0;
    if (r->status == 403 && !insufficient)
        goto out;
    if (r->status != 401 && r->status != 403)
        goto out;
    /* The challenge is remembered for discovery. */
    if (ch.resource_metadata != NULL)
        mcp__oauth_set(&o->ch_rm, ch.resource_metadata);
    mcp__oauth_set(&o->ch_scope, ch.scope);
    /* DPoP: the server wants a nonce in the proof (RFC 9449 §9). */
    if (ch.error != NULL && strcmp(ch.error, "use_dpop_nonce") == 0 && r->dpop_nonce != NULL &&
        o->dpop_key != NULL) {
        int fresh = o->rs_nonce == NULL || strcmp(o->rs_nonce, r->dpop_nonce) != 0;
        mcp__oauth_set(&o->rs_nonce, r->dpop_nonce);
        /* Twice per request at most: a server that changes its nonce on every answer
         * does not get a request sent for ever. */
        if (fresh && ++w->nonce_retries <= 2) {
            res = MCP__OAUTH_RETRY;
            goto out;
        }
    }
    if (r->dpop_nonce != NULL && o->dpop_key != NULL)
        mcp__oauth_set(&o->rs_nonce, r->dpop_nonce);
    if (insufficient) {
        /* A flow under way (a refresh, say) ends first; the request, sent again with
         * its token, meets this again if it still lacks the scope: no step-up is
         * counted or joined to that flow. */
        if (o->flow != OF_NONE) {
            enqueue(o, w);
            res = MCP__OAUTH_WAIT;
            goto out;
        }
        if (++w->step_ups > o->max_step_ups) {
            *why = mcp__asprintf("the server asked for more scope again after %d step-up%s "
                                 "(max_step_ups): the authorization server does not grant it",
                                 o->max_step_ups, o->max_step_ups == 1 ? "" : "s");
            res = MCP__OAUTH_FAIL;
            goto out;
        }
        /* Everything asked before and what the challenge names: a refresh cannot add
         * scope, so this is a new authorization. */
        char *held = mcp__oauth_scope_union(o->asked_scope, o->scope);
        char *u = held != NULL ? mcp__oauth_scope_union(held, ch.scope) : NULL;
        free(held);
        if (u == NULL) {
            *why = mcp__strdup("out of memory");
            res = MCP__OAUTH_FAIL;
            goto out;
        }
        free(o->want_scope);
        o->want_scope = u;
        need(o, OF_AUTHORIZE, w);
        res = MCP__OAUTH_WAIT;
        goto out;
    }
    /* 401. A newer token than the one the request carried (got here, or by another
     * process sharing the store): try that first. */
    if (o->flow == OF_NONE)
        mcp__oauth_reload(o);
    if (r->generation != o->generation && o->access_token != NULL && o->flow == OF_NONE) {
        res = MCP__OAUTH_RETRY;
        goto out;
    }
    if (o->flow != OF_NONE) {
        enqueue(o, w);
        res = MCP__OAUTH_WAIT;
        goto out;
    }
    if (++w->reauths > o->max_reauths) {
        char *e = ch.error != NULL ? mcp__oauth_printable(ch.error, 64) : NULL;
        *why = mcp__asprintf("the server refused %d new token%s in a row "
                             "(max_reauthorizations)%s%s",
                             o->max_reauths, o->max_reauths == 1 ? "" : "s", e != NULL ? ": " : "",
                             e != NULL ? e : "");
        free(e);
        res = MCP__OAUTH_FAIL;
        goto out;
    }
    /* The token it carried is no good (kept, marked, so that the same token read back
     * from the store is not taken for a newer one): a refresh when there is a refresh
     * token, else an authorization. */
    o->access_refused = 1;
    need(o, o->refresh_token != NULL && o->as_meta != NULL ? OF_REFRESH : OF_AUTHORIZE, w);
    res = MCP__OAUTH_WAIT;
out:
    mcp__challenge_free(&ch);
    if (res == MCP__OAUTH_FAIL && *why == NULL)
        *why = mcp__strdup("out of memory");
    return res;
}

/* ---- Tokens ---- */

int mcp__oauth_take_tokens(mcp_oauth *o, const json_t *resp, const char *asked_scope, char **why)
{
    const char *at = jstr(resp, "access_token");
    const char *tt = jstr(resp, "token_type");
    const char *rt = jstr(resp, "refresh_token");
    const char *sc = jstr(resp, "scope");
    const json_t *exp = json_object_get(resp, "expires_in");
    if (at == NULL || at[0] == '\0' || strlen(at) > TOKEN_MAX || tt == NULL ||
        (rt != NULL && strlen(rt) > TOKEN_MAX)) {
        *why = mcp__strdup(at == NULL || at[0] == '\0' ? "the token response has no access_token"
                           : tt == NULL                ? "the token response has no token_type"
                                        : "the token response holds a token over 16 KiB");
        return MCP_EAUTH;
    }
    /* A token is sent in a header: only the characters of a b64token. */
    for (const char *p = at; *p != '\0'; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              strchr("-._~+/=", *p) != NULL)) {
            *why = mcp__strdup("the token response's access_token has characters a bearer "
                               "token cannot have");
            return MCP_EAUTH;
        }
    int dpop = strcasecmp(tt, "DPoP") == 0;
    if (!dpop && strcasecmp(tt, "Bearer") != 0) {
        char *p = mcp__oauth_printable(tt, 40);
        *why = mcp__asprintf("the token response's token_type is \"%s\", neither Bearer nor DPoP",
                             p != NULL ? p : "");
        free(p);
        return MCP_EAUTH;
    }
    if (dpop && o->dpop_key == NULL) {
        *why = mcp__strdup("the authorization server issued a DPoP token to a client that "
                           "did not ask for one");
        return MCP_EAUTH;
    }
    if (exp != NULL && (!json_is_number(exp) || json_number_value(exp) <= 0)) {
        *why = mcp__strdup("the token response's expires_in is not a positive number");
        return MCP_EAUTH;
    }
    if (mcp__oauth_set(&o->access_token, at) != MCP_OK ||
        mcp__oauth_set(&o->token_type, dpop ? "DPoP" : "Bearer") != MCP_OK ||
        (rt != NULL && mcp__oauth_set(&o->refresh_token, rt) != MCP_OK) ||
        mcp__oauth_set(&o->scope, sc != NULL ? sc : asked_scope) != MCP_OK) {
        *why = mcp__strdup("out of memory");
        return MCP_ENOMEM;
    }
    double secs = exp != NULL ? json_number_value(exp) : 0;
    o->obtained_at = mcp__wall_ms();
    o->access_refused = 0;
    o->expires_at = exp != NULL && secs < 1e9 ? o->obtained_at + (uint64_t)(secs * 1000) : 0;
    mcp__oauth_save(o);
    return MCP_OK;
}

/* ---- The browser step's way back ---- */

typedef struct callback_mail {
    mcp__mail m;
    mcp_oauth *o;
    char *url;
} callback_mail;

static void callback_arrived(mcp__mail *m)
{
    callback_mail *cm = (callback_mail *)m;
    if (cm->o->attached)
        mcp__oauth_flow_callback(cm->o, cm->url);
    free(cm->url);
    free(cm);
}

int mcp_oauth_complete(mcp_oauth *o, const char *callback_url)
{
    if (o == NULL || callback_url == NULL)
        return MCP_EINVAL;
    callback_mail *cm = calloc(1, sizeof(*cm));
    if (cm == NULL || (cm->url = mcp__strdup(callback_url)) == NULL) {
        free(cm);
        return MCP_ENOMEM;
    }
    cm->o = o;
    cm->m.fn = callback_arrived;
    pthread_mutex_lock(&o->lock);
    int rc = o->mb_open ? mcp__mailbox_post(o->mb, &cm->m) : MCP_ESTATE;
    pthread_mutex_unlock(&o->lock);
    if (rc != MCP_OK) {
        free(cm->url);
        free(cm);
        return rc == MCP_ECLOSED ? MCP_ESTATE : rc;
    }
    return MCP_OK;
}
