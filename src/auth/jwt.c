/* SPDX-License-Identifier: MIT */
/*
 * The built-in verifier of JWT access tokens (RFC 9068): a token's signature is
 * checked with cjose against the authorization server's keys (its JWKS, RFC 7517),
 * fetched on the loop with libcurl from a configured jwks_uri or from the issuer's
 * metadata (RFC 8414, then OpenID Connect discovery), kept, refetched when they are
 * old, and refreshed once when a token names a key that is not there (at most every
 * refresh_min_ms, so that a storm of unknown key ids costs one fetch). Only the
 * algorithms allowed are accepted, never "none" and never HMAC (whose secret would
 * be the public key), and a key is used only for the algorithms of its type. The
 * claims then go back to the gate, which checks audience, issuer and time.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjose/cjose.h>

#include "auth/auth.h"
#include "http/curl_loop.h"

#define DEFAULT_REFRESH_MIN_MS 10000
#define DEFAULT_KEYS_TTL_MS 3600000
#define DEFAULT_TIMEOUT_MS 5000
#define MAX_DOCUMENT (1024 * 1024)
#define MAX_PARKED 1024

typedef struct jwt_key {
    char *kid; /* NULL: none */
    char *alg; /* the key's own "alg", NULL: any of its type */
    int rsa;   /* 1: RSA, 0: EC P-256 */
    cjose_jwk_t *jwk;
} jwt_key;

/* A check waiting for the keys. */
typedef struct parked {
    struct parked *prev, *next;
    char *token;
    mcp_token_check *check;
} parked;

enum fetch_phase { FETCH_NONE, FETCH_RFC8414, FETCH_OIDC, FETCH_JWKS };

struct mcp__jwt {
    uv_loop_t *loop;
    mcp__curlm *curl;
    char *issuer, *jwks_uri; /* jwks_uri NULL until discovered */
    char **algs;
    int refresh_min_ms, keys_ttl_ms, timeout_ms, any_type;
    jwt_key *keys;
    size_t nkeys;
    uint64_t keys_at;       /* loop time the keys came; 0: never */
    uint64_t fetch_started; /* loop time of the last fetch; 0: never */
    enum fetch_phase phase;
    mcp__curl_req *xfer;
    mcp__buf doc;
    int too_big;
    parked *parked;
    size_t nparked;
    int fetch_failed; /* the last fetch found no keys: unknown ones cannot be judged */
    int closing;
    void (*closed)(void *arg);
    void *closed_arg;
};

static const char *const default_algs[] = {"RS256", "PS256", "ES256", NULL};

/* ---- Keys ---- */

static void keys_free(jwt_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(keys[i].kid);
        free(keys[i].alg);
        cjose_jwk_release(keys[i].jwk);
    }
    free(keys);
}

/* The signature keys of a JWKS document that this verifier can use: RSA keys, and EC
 * keys on P-256; keys for encryption ("use": "enc") and of other types are skipped. */
static int keys_parse(const char *text, size_t len, jwt_key **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    json_t *doc = json_loadb(text, len, 0, NULL);
    json_t *arr = json_object_get(doc, "keys");
    if (!json_is_array(arr)) {
        json_decref(doc);
        return MCP_EINVAL;
    }
    jwt_key *keys = calloc(json_array_size(arr) + 1, sizeof(*keys));
    size_t n = 0;
    for (size_t i = 0; keys != NULL && i < json_array_size(arr); i++) {
        json_t *k = json_array_get(arr, i);
        const char *kty = json_string_value(json_object_get(k, "kty"));
        const char *use = json_string_value(json_object_get(k, "use"));
        const char *crv = json_string_value(json_object_get(k, "crv"));
        if (kty == NULL || (use != NULL && strcmp(use, "sig") != 0))
            continue;
        int rsa = strcmp(kty, "RSA") == 0;
        if (!rsa && !(strcmp(kty, "EC") == 0 && crv != NULL && strcmp(crv, "P-256") == 0))
            continue;
        cjose_err err;
        cjose_jwk_t *jwk = cjose_jwk_import_json((cjose_header_t *)k, &err);
        if (jwk == NULL)
            continue;
        /* RSA below 2048 bits is forgeable (RFC 7518 3.3 requires 2048 at least). */
        if (rsa && cjose_jwk_get_keysize(jwk, &err) < 2048) {
            cjose_jwk_release(jwk);
            continue;
        }
        const char *kid = json_string_value(json_object_get(k, "kid"));
        const char *alg = json_string_value(json_object_get(k, "alg"));
        keys[n].rsa = rsa;
        keys[n].jwk = jwk;
        keys[n].kid = kid != NULL ? strdup(kid) : NULL;
        keys[n].alg = alg != NULL ? strdup(alg) : NULL;
        n++;
    }
    json_decref(doc);
    if (keys == NULL)
        return MCP_ENOMEM;
    *out = keys;
    *n_out = n;
    return MCP_OK;
}

/* The key a token names (kid) for alg: with a kid, that key; without, the only key of
 * the right type. NULL when none fits. */
static const jwt_key *key_find(const mcp__jwt *j, const char *kid, const char *alg)
{
    int rsa = alg[0] == 'R' || alg[0] == 'P';
    const jwt_key *found = NULL;
    for (size_t i = 0; i < j->nkeys; i++) {
        const jwt_key *k = &j->keys[i];
        if (k->rsa != rsa || (k->alg != NULL && strcmp(k->alg, alg) != 0))
            continue;
        if (kid != NULL ? k->kid != NULL && strcmp(k->kid, kid) == 0 : found == NULL) {
            found = k;
            if (kid != NULL)
                break;
        } else if (kid == NULL) {
            return NULL; /* several keys could be meant: the token must say which */
        }
    }
    return found;
}

/* ---- Checking a token ---- */

enum outcome { DONE, NEED_KEYS };

static int alg_allowed(const mcp__jwt *j, const char *alg)
{
    for (char **a = j->algs; a != NULL && *a != NULL; a++)
        if (strcmp(*a, alg) == 0)
            return 1;
    return 0;
}

/* A JWS compact serialization's shape: three parts of unpadded base64url, none of a
 * length that leaves one character over. cjose 0.6.2 asserts on such a part (an abort
 * of the whole server for one request: found by fuzz_jwt), so nothing else reaches it. */
static int jws_shape_ok(const char *token)
{
    int parts = 1;
    size_t run = 0;
    for (const unsigned char *p = (const unsigned char *)token;; p++) {
        if (*p == '.' || *p == '\0') {
            if (run % 4 == 1)
                return 0;
            if (*p == '\0')
                return parts == 3;
            parts++;
            run = 0;
        } else if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                   (*p >= '0' && *p <= '9') || *p == '-' || *p == '_') {
            run++;
        } else {
            return 0;
        }
    }
}

int mcp__jwt_judge(mcp__jwt *j, const char *token, int may_fetch, const char **reason,
                   json_t **claims)
{
    *reason = NULL;
    *claims = NULL;
    cjose_err err;
    cjose_jws_t *jws = jws_shape_ok(token) ? cjose_jws_import(token, strlen(token), &err) : NULL;
    if (jws == NULL) {
        *reason = "The access token is not a signed JWT";
        return MCP__JWT_REJECT;
    }
    cjose_header_t *hdr = cjose_jws_get_protected(jws);
    const char *alg = cjose_header_get(hdr, "alg", &err);
    const char *typ = cjose_header_get(hdr, "typ", &err);
    const char *kid = cjose_header_get(hdr, "kid", &err);
    const jwt_key *key = NULL;
    if (alg == NULL || !alg_allowed(j, alg))
        *reason = "The access token's signature algorithm is not accepted";
    else if (!j->any_type && (typ == NULL || (strcasecmp(typ, "at+jwt") != 0 &&
                                              strcasecmp(typ, "application/at+jwt") != 0)))
        *reason = "The token is not a JWT access token (typ at+jwt)";
    else if ((key = key_find(j, kid, alg)) == NULL) {
        uint64_t now = uv_now(j->loop);
        int stale = j->keys_at == 0 || now - j->keys_at >= (uint64_t)j->keys_ttl_ms;
        int may_refresh =
            j->fetch_started == 0 || now - j->fetch_started >= (uint64_t)j->refresh_min_ms;
        cjose_jws_release(jws);
        if (may_fetch && (stale || may_refresh))
            return MCP__JWT_NEED_KEYS;
        if (j->keys_at == 0 || j->fetch_failed)
            return MCP__JWT_UNAVAILABLE;
        *reason = "The access token was signed by an unknown key";
        return MCP__JWT_REJECT;
    }
    uint8_t *payload = NULL;
    size_t len = 0;
    if (*reason == NULL && !cjose_jws_verify(jws, key->jwk, &err))
        *reason = "The access token's signature does not verify";
    if (*reason == NULL && !cjose_jws_get_plaintext(jws, &payload, &len, &err))
        *reason = "The access token's claims could not be read";
    json_t *c = *reason == NULL ? json_loadb((const char *)payload, len, 0, NULL) : NULL;
    cjose_jws_release(jws); /* the payload was the JWS's own */
    if (*reason == NULL && !json_is_object(c))
        *reason = "The access token's claims are not a JSON object";
    if (*reason != NULL) {
        json_decref(c);
        return MCP__JWT_REJECT;
    }
    *claims = c;
    return MCP__JWT_ACCEPT;
}

/* Checks token and completes check, unless the keys are missing and may be fetched
 * (may_fetch): then NEED_KEYS, check untouched. */
static enum outcome check_token(mcp__jwt *j, const char *token, mcp_token_check *check,
                                int may_fetch)
{
    const char *reason;
    json_t *claims;
    switch (mcp__jwt_judge(j, token, may_fetch, &reason, &claims)) {
    case MCP__JWT_NEED_KEYS:
        return NEED_KEYS;
    case MCP__JWT_ACCEPT:
        mcp_token_check_accept(check, claims);
        break;
    case MCP__JWT_UNAVAILABLE:
        mcp_token_check_unavailable(check, "the authorization server's keys cannot be fetched");
        break;
    default:
        mcp_token_check_reject(check, reason);
        break;
    }
    return DONE;
}

/* ---- Fetching the keys ---- */

static void fetch_start(mcp__jwt *j, enum fetch_phase phase);

/* The issuer's metadata URL: RFC 8414 inserts the well-known path before the
 * issuer's path; OpenID Connect discovery appends it. */
static char *metadata_url(const char *issuer, enum fetch_phase phase)
{
    size_t scheme = strncmp(issuer, "https://", 8) == 0 ? 8 : 7;
    const char *path = strchr(issuer + scheme, '/');
    size_t origin = path != NULL ? (size_t)(path - issuer) : strlen(issuer);
    if (path == NULL || strcmp(path, "/") == 0)
        path = "";
    if (phase == FETCH_RFC8414)
        return mcp__asprintf("%.*s/.well-known/oauth-authorization-server%s", (int)origin, issuer,
                             path);
    size_t n = strlen(issuer);
    return mcp__asprintf("%.*s/.well-known/openid-configuration",
                         (int)(n > 0 && issuer[n - 1] == '/' ? n - 1 : n), issuer);
}

/* Every parked check, once the fetch is over (the keys as they are now). */
static void resume_parked(mcp__jwt *j)
{
    parked *list = j->parked;
    j->parked = NULL;
    j->nparked = 0;
    while (list != NULL) {
        parked *p = list;
        MCP__LIST_UNLINK(list, p);
        if (j->closing)
            mcp_token_check_unavailable(p->check, "the endpoint is stopping");
        else
            (void)check_token(j, p->token, p->check, 0);
        free(p->token);
        free(p);
    }
}

static int on_data(void *user, const char *data, size_t len)
{
    mcp__jwt *j = user;
    if (j->doc.len + len > MAX_DOCUMENT) {
        j->too_big = 1;
        return -1;
    }
    return mcp__buf_append(&j->doc, data, len) == MCP_OK ? 0 : -1;
}

static void on_done(void *user, CURLcode result, long status)
{
    mcp__jwt *j = user;
    j->xfer = NULL;
    enum fetch_phase phase = j->phase;
    j->phase = FETCH_NONE;
    int ok = result == CURLE_OK && status == 200 && !j->too_big;
    if (phase == FETCH_JWKS) {
        jwt_key *keys;
        size_t n;
        if (ok &&
            keys_parse(j->doc.data != NULL ? j->doc.data : "", j->doc.len, &keys, &n) == MCP_OK) {
            keys_free(j->keys, j->nkeys);
            j->keys = keys;
            j->nkeys = n;
            j->keys_at = uv_now(j->loop) > 0 ? uv_now(j->loop) : 1;
            j->fetch_failed = 0;
        } else {
            j->fetch_failed = 1;
            mcp__warn("the authorization server's keys could not be fetched from %s (%s, HTTP %ld)",
                      j->jwks_uri, curl_easy_strerror(result), status);
        }
        mcp__buf_free(&j->doc);
        resume_parked(j);
        return;
    }
    /* Discovery: the metadata names the keys, and must be the configured issuer's. */
    json_t *meta =
        ok ? json_loadb(j->doc.data != NULL ? j->doc.data : "", j->doc.len, 0, NULL) : NULL;
    mcp__buf_free(&j->doc);
    const char *iss = json_string_value(json_object_get(meta, "issuer"));
    const char *uri = json_string_value(json_object_get(meta, "jwks_uri"));
    /* An https issuer's keys come over https: the metadata must not downgrade them. */
    int https = strncmp(j->issuer, "https://", 8) == 0;
    if (iss != NULL && strcmp(iss, j->issuer) == 0 && uri != NULL &&
        (strncmp(uri, "https://", 8) == 0 || (!https && strncmp(uri, "http://", 7) == 0))) {
        j->jwks_uri = strdup(uri);
        json_decref(meta);
        if (j->jwks_uri != NULL) {
            fetch_start(j, FETCH_JWKS);
            return;
        }
    } else {
        json_decref(meta);
        if (phase == FETCH_RFC8414) {
            fetch_start(j, FETCH_OIDC);
            return;
        }
        mcp__warn("the metadata of the authorization server %s names no usable jwks_uri",
                  j->issuer);
    }
    j->fetch_failed = 1;
    resume_parked(j);
}

static void fetch_start(mcp__jwt *j, enum fetch_phase phase)
{
    static const mcp__curl_cbs cbs = {.on_data = on_data, .on_done = on_done};
    char *url = phase == FETCH_JWKS ? strdup(j->jwks_uri) : metadata_url(j->issuer, phase);
    CURL *easy = url != NULL ? mcp__curlm_easy(j->curl) : NULL;
    if (easy == NULL) {
        free(url);
        j->fetch_failed = 1;
        resume_parked(j);
        return;
    }
    j->phase = phase;
    j->too_big = 0;
    mcp__buf_reset(&j->doc);
    j->fetch_started = uv_now(j->loop);
    if (j->fetch_started == 0)
        j->fetch_started = 1;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)j->timeout_ms);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "libmcp/" MCP_VERSION_STRING);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    free(url);
    if (mcp__curlm_start(j->curl, easy, hdrs, &cbs, j, &j->xfer) != MCP_OK) {
        j->phase = FETCH_NONE;
        j->fetch_failed = 1;
        resume_parked(j);
    }
}

/* ---- The verifier ---- */

static void jwt_verify(void *user, const char *token, mcp_token_check *check)
{
    mcp__jwt *j = user;
    if (j->closing) {
        mcp_token_check_unavailable(check, "the endpoint is stopping");
        return;
    }
    if (check_token(j, token, check, 1) == DONE)
        return;
    if (j->nparked >= MAX_PARKED) {
        mcp_token_check_unavailable(check,
                                    "too many tokens wait for the authorization server's keys");
        return;
    }
    parked *p = calloc(1, sizeof(*p));
    if (p == NULL || (p->token = strdup(token)) == NULL) {
        free(p);
        mcp_token_check_unavailable(check, "out of memory");
        return;
    }
    p->check = check;
    MCP__LIST_PUSH(j->parked, p);
    j->nparked++;
    if (j->phase == FETCH_NONE)
        fetch_start(j, j->jwks_uri != NULL ? FETCH_JWKS : FETCH_RFC8414);
}

int mcp__jwt_new(uv_loop_t *loop, const char *issuer, const mcp_jwt_opts *opts, mcp__jwt **out)
{
    *out = NULL;
    mcp_jwt_opts o;
    if (loop == NULL || issuer == NULL ||
        mcp__opts_copy(&o, sizeof(o), opts, sizeof(mcp_jwt_opts)) != MCP_OK)
        return MCP_EINVAL;
    if (strncmp(issuer, "https://", 8) != 0 && strncmp(issuer, "http://", 7) != 0)
        return MCP_EINVAL;
    for (const char *const *a = o.algorithms; a != NULL && *a != NULL; a++)
        if (strcmp(*a, "RS256") != 0 && strcmp(*a, "RS384") != 0 && strcmp(*a, "RS512") != 0 &&
            strcmp(*a, "PS256") != 0 && strcmp(*a, "PS384") != 0 && strcmp(*a, "PS512") != 0 &&
            strcmp(*a, "ES256") != 0)
            return MCP_EINVAL; /* never none or HMAC; EdDSA is not offered by cjose */
    mcp__jwt *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return MCP_ENOMEM;
    int err = 0;
    j->loop = loop;
    j->issuer = strdup(issuer);
    j->jwks_uri = mcp__strdup(o.jwks_uri);
    j->algs = mcp__strv_copy(o.algorithms != NULL ? o.algorithms : default_algs, &err);
    j->refresh_min_ms = o.refresh_min_ms > 0    ? o.refresh_min_ms
                        : o.refresh_min_ms == 0 ? DEFAULT_REFRESH_MIN_MS
                                                : 0;
    j->keys_ttl_ms = o.keys_ttl_ms > 0 ? o.keys_ttl_ms : DEFAULT_KEYS_TTL_MS;
    j->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : DEFAULT_TIMEOUT_MS;
    j->any_type = o.any_type;
    int rc = err || j->issuer == NULL || (o.jwks_uri != NULL && j->jwks_uri == NULL) ? MCP_ENOMEM
                                                                                     : MCP_OK;
    if (rc == MCP_OK)
        rc = mcp__curlm_new(loop, &j->curl);
    if (rc != MCP_OK) {
        j->curl = NULL;
        mcp__jwt_close(j, NULL, NULL);
        return rc;
    }
    *out = j;
    return MCP_OK;
}

mcp_token_verifier mcp__jwt_verifier(mcp__jwt *j)
{
    return (mcp_token_verifier){.verify = jwt_verify, .user = j};
}

int mcp__jwt_load_keys(mcp__jwt *j, const char *jwks)
{
    jwt_key *keys;
    size_t n;
    int rc = keys_parse(jwks, strlen(jwks), &keys, &n);
    if (rc != MCP_OK)
        return rc;
    keys_free(j->keys, j->nkeys);
    j->keys = keys;
    j->nkeys = n;
    j->keys_at = uv_now(j->loop) > 0 ? uv_now(j->loop) : 1;
    return MCP_OK;
}

static void jwt_free(mcp__jwt *j)
{
    keys_free(j->keys, j->nkeys);
    mcp__buf_free(&j->doc);
    mcp__strv_free(j->algs);
    free(j->issuer);
    free(j->jwks_uri);
    free(j);
}

static void curl_closed(void *arg)
{
    mcp__jwt *j = arg;
    void (*closed)(void *) = j->closed;
    void *closed_arg = j->closed_arg;
    jwt_free(j);
    if (closed != NULL)
        closed(closed_arg);
}

int mcp__jwt_close(mcp__jwt *j, void (*closed)(void *arg), void *arg)
{
    if (j == NULL)
        return 0;
    j->closing = 1;
    if (j->xfer != NULL) {
        mcp__curl_cancel(j->xfer);
        j->xfer = NULL;
    }
    resume_parked(j);
    if (j->curl == NULL) {
        jwt_free(j);
        return 0;
    }
    j->closed = closed;
    j->closed_arg = arg;
    mcp__curlm_close(j->curl, curl_closed, j);
    return 1;
}
