/* SPDX-License-Identifier: MIT */
/*
 * The built-in verifier of opaque tokens: OAuth 2.0 Token Introspection (RFC 7662).
 * Each token the cache does not know is posted to the authorization server's
 * introspection endpoint, with this server's client credentials (HTTP Basic, RFC 6749
 * §2.3.1); "active": true with its claims is a good token (the gate then checks
 * audience, issuer and time, and caches it), "active": false a bad one, anything else
 * an authorization server that cannot answer (503). The token goes to that endpoint
 * only, over a connection of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "http/curl_loop.h"

#define DEFAULT_TIMEOUT_MS 5000
#define MAX_ANSWER (256 * 1024)
#define MAX_IN_FLIGHT 256

typedef struct introspection {
    struct introspection *prev, *next;
    mcp__introspect *owner;
    mcp_token_check *check;
    mcp__curl_req *xfer;
    mcp__curl_body body;
    mcp__buf answer;
    int too_big;
} introspection;

struct mcp__introspect {
    mcp__curlm *curl;
    char *endpoint;
    char *userpwd; /* "id:secret", each form-urlencoded */
    int timeout_ms;
    introspection *live;
    size_t nlive;
    int closing;
    void (*closed)(void *arg);
    void *closed_arg;
};

static void introspection_free(introspection *x)
{
    mcp__curl_body_free(&x->body);
    mcp__buf_free(&x->answer);
    free(x);
}

static int on_data(void *user, const char *data, size_t len)
{
    introspection *x = user;
    if (x->answer.len + len > MAX_ANSWER) {
        x->too_big = 1;
        return -1;
    }
    return mcp__buf_append(&x->answer, data, len) == MCP_OK ? 0 : -1;
}

static void on_done(void *user, CURLcode result, long status)
{
    introspection *x = user;
    mcp__introspect *in = x->owner;
    MCP__LIST_UNLINK(in->live, x);
    in->nlive--;
    json_t *doc =
        result == CURLE_OK && status == 200 && !x->too_big
            ? json_loadb(x->answer.data != NULL ? x->answer.data : "", x->answer.len, 0, NULL)
            : NULL;
    json_t *active = json_object_get(doc, "active");
    json_t *refusal = NULL;
    if (result == CURLE_OK && status == 400 && !x->too_big)
        refusal = json_loadb(x->answer.data != NULL ? x->answer.data : "", x->answer.len, 0, NULL);
    if (json_is_string(json_object_get(refusal, "error"))) {
        /* A 400 with an OAuth error is about the request, that is the token (say, one the
         * server issued in a form it does not introspect): a bad token, not an outage. */
        mcp_token_check_reject(x->check, "The access token cannot be introspected");
        json_decref(doc);
    } else if (!json_is_boolean(active)) {
        /* What it said instead (an error object, never the token) helps its operator. */
        mcp__warn("the introspection endpoint %s gave no answer (%s, HTTP %ld: %.200s)",
                  in->endpoint, curl_easy_strerror(result), status,
                  x->answer.data != NULL ? x->answer.data : "");
        mcp_token_check_unavailable(x->check, "the introspection endpoint gave no answer");
        json_decref(doc);
    } else if (!json_is_true(active)) {
        mcp_token_check_reject(x->check, "The access token is not active");
        json_decref(doc);
    } else {
        json_object_del(doc, "active");
        mcp_token_check_accept(x->check, doc);
    }
    json_decref(refusal);
    introspection_free(x);
}

/* application/x-www-form-urlencoded, as RFC 6749 §2.3.1 wants credentials too. */
static int form_encode(mcp__buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = MCP_OK;
    for (const unsigned char *p = (const unsigned char *)s; rc == MCP_OK && *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '*') {
            rc = mcp__buf_append(b, p, 1);
        } else if (*p == ' ') {
            rc = mcp__buf_append(b, "+", 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = mcp__buf_append(b, e, 3);
        }
    }
    return rc;
}

static void introspect_verify(void *user, const char *token, mcp_token_check *check)
{
    mcp__introspect *in = user;
    if (in->closing) {
        mcp_token_check_unavailable(check, "the endpoint is stopping");
        return;
    }
    if (in->nlive >= MAX_IN_FLIGHT) {
        mcp_token_check_unavailable(check, "too many tokens wait for the introspection endpoint");
        return;
    }
    introspection *x = calloc(1, sizeof(*x));
    mcp__buf form = {0};
    CURL *easy = x != NULL ? mcp__curlm_easy(in->curl) : NULL;
    int rc = easy != NULL ? mcp__buf_appends(&form, "token=") : MCP_ENOMEM;
    if (rc == MCP_OK)
        rc = form_encode(&form, token);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(&form, "&token_type_hint=access_token");
    if (rc == MCP_OK)
        rc = mcp__curl_body_set(easy, &x->body, form.data, form.len);
    mcp__buf_free(&form); /* it held the token: gone once copied */
    if (rc != MCP_OK) {
        if (easy != NULL)
            curl_easy_cleanup(easy);
        free(x);
        mcp_token_check_unavailable(check, "out of memory");
        return;
    }
    x->owner = in;
    x->check = check;
    curl_easy_setopt(easy, CURLOPT_URL, in->endpoint);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)in->timeout_ms);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(easy, CURLOPT_USERPWD, in->userpwd);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "libmcp/" MCP_VERSION_STRING);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    hdrs = curl_slist_append(hdrs, "Content-Type: application/x-www-form-urlencoded");
    static const mcp__curl_cbs cbs = {.on_data = on_data, .on_done = on_done};
    MCP__LIST_PUSH(in->live, x);
    in->nlive++;
    if (mcp__curlm_start(in->curl, easy, hdrs, &cbs, x, &x->xfer) != MCP_OK) {
        MCP__LIST_UNLINK(in->live, x);
        in->nlive--;
        introspection_free(x);
        mcp_token_check_unavailable(check, "the introspection request could not start");
    }
}

int mcp__introspect_new(uv_loop_t *loop, const mcp_introspection_opts *opts, mcp__introspect **out)
{
    *out = NULL;
    mcp_introspection_opts o;
    if (loop == NULL ||
        mcp__opts_copy(&o, sizeof(o), opts, sizeof(mcp_introspection_opts)) != MCP_OK ||
        o.endpoint == NULL || o.client_id == NULL || o.client_secret == NULL ||
        (strncmp(o.endpoint, "https://", 8) != 0 && strncmp(o.endpoint, "http://", 7) != 0))
        return MCP_EINVAL;
    mcp__introspect *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return MCP_ENOMEM;
    mcp__buf up = {0};
    int rc = form_encode(&up, o.client_id);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(&up, ":");
    if (rc == MCP_OK)
        rc = form_encode(&up, o.client_secret);
    in->userpwd = mcp__buf_steal(&up);
    in->endpoint = strdup(o.endpoint);
    in->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : DEFAULT_TIMEOUT_MS;
    if (rc == MCP_OK && (in->userpwd == NULL || in->endpoint == NULL))
        rc = MCP_ENOMEM;
    if (rc == MCP_OK)
        rc = mcp__curlm_new(loop, &in->curl);
    if (rc != MCP_OK) {
        in->curl = NULL;
        (void)mcp__introspect_close(in, NULL, NULL);
        return rc;
    }
    *out = in;
    return MCP_OK;
}

mcp_token_verifier mcp__introspect_verifier(mcp__introspect *in)
{
    return (mcp_token_verifier){.verify = introspect_verify, .user = in};
}

static void introspect_free(mcp__introspect *in)
{
    if (in->userpwd != NULL)
        memset(in->userpwd, 0, strlen(in->userpwd));
    free(in->userpwd);
    free(in->endpoint);
    free(in);
}

static void curl_closed(void *arg)
{
    mcp__introspect *in = arg;
    void (*closed)(void *) = in->closed;
    void *closed_arg = in->closed_arg;
    introspect_free(in);
    if (closed != NULL)
        closed(closed_arg);
}

int mcp__introspect_close(mcp__introspect *in, void (*closed)(void *arg), void *arg)
{
    if (in == NULL)
        return 0;
    in->closing = 1;
    while (in->live != NULL) {
        introspection *x = in->live;
        MCP__LIST_UNLINK(in->live, x);
        in->nlive--;
        mcp__curl_cancel(x->xfer);
        mcp_token_check_unavailable(x->check, "the endpoint is stopping");
        introspection_free(x);
    }
    if (in->curl == NULL) {
        introspect_free(in);
        return 0;
    }
    in->closed = closed;
    in->closed_arg = arg;
    mcp__curlm_close(in->curl, curl_closed, in);
    return 1;
}
