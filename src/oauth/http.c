/* SPDX-License-Identifier: MIT */
/*
 * One HTTP exchange of the OAuth client with an authorization server (or a
 * metadata document's host): a GET or a form POST on the loop, its body kept up
 * to a bound, the few response headers the flow reads, redirects never
 * followed.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth_int.h"

/* Bytes of a response body kept: metadata and token responses are small. */
#define BODY_MAX (256 * 1024)

void mcp__ohttp_free(mcp__ohttp *h)
{
    if (h == NULL)
        return;
    if (h->req != NULL)
        mcp__curl_cancel(h->req);
    /* Bodies carry codes, refresh tokens, secrets and assertions: wiped. */
    if (h->body.data != NULL)
        memset(h->body.data, 0, h->body.len);
    mcp__buf_free(&h->body);
    if (h->out.data != NULL)
        memset(h->out.data, 0, h->out.len);
    mcp__curl_body_free(&h->out);
    free(h->dpop_nonce);
    free(h->location);
    free(h->www_auth);
    free(h->ctype);
    free(h);
}

/* A header's value when line is "name: value" (trimmed, malloc'd), else NULL. */
static char *header_value(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return NULL;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char *s = malloc((size_t)(end - v) + 1);
    if (s != NULL) {
        memcpy(s, v, (size_t)(end - v));
        s[end - v] = '\0';
    }
    return s;
}

static void keep(char **slot, char *v)
{
    if (v == NULL)
        return;
    free(*slot);
    *slot = v;
}

static int on_header(void *user, const char *line, size_t len)
{
    mcp__ohttp *h = user;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* A new response (an interim one came first): forget the last one's. */
        free(h->dpop_nonce), free(h->location), free(h->www_auth), free(h->ctype);
        h->dpop_nonce = h->location = h->www_auth = h->ctype = NULL;
        return 0;
    }
    keep(&h->dpop_nonce, header_value(line, len, "DPoP-Nonce"));
    keep(&h->location, header_value(line, len, "Location"));
    keep(&h->www_auth, header_value(line, len, "WWW-Authenticate"));
    keep(&h->ctype, header_value(line, len, "Content-Type"));
    return 0;
}

static int on_data(void *user, const char *data, size_t len)
{
    mcp__ohttp *h = user;
    if (h->body.len + len > BODY_MAX) {
        h->too_large = 1;
        return -1;
    }
    return mcp__buf_append(&h->body, data, len) == MCP_OK ? 0 : -1;
}

static void on_done(void *user, CURLcode rc, long status)
{
    mcp__ohttp *h = user;
    h->req = NULL;
    h->rc = rc;
    h->status = status;
    h->done(h);
}

static const mcp__curl_cbs cbs = {on_header, on_data, on_done};

int mcp__ohttp_start(mcp_oauth *o, mcp__ohttp *h, const char *url, const char *form,
                     const char *ctype, struct curl_slist *hdrs)
{
    CURL *e = mcp__curlm_easy(o->curl);
    if (e == NULL) {
        curl_slist_free_all(hdrs);
        return MCP_ENOMEM;
    }
    int bad = 0;
    struct curl_slist *n;
#define ADD(line)                                                                                  \
    do {                                                                                           \
        if ((n = curl_slist_append(hdrs, line)) == NULL)                                           \
            bad = 1;                                                                               \
        else                                                                                       \
            hdrs = n;                                                                              \
    } while (0)
    ADD("Accept: application/json");
    ADD("Expect:");
    if (form != NULL) {
        ADD(ctype != NULL ? ctype : "Content-Type: application/x-www-form-urlencoded");
        if (mcp__curl_body_set(e, &h->out, form, strlen(form)) != MCP_OK)
            bad = 1;
    }
#undef ADD
    if (bad) {
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(e);
        return MCP_ENOMEM;
    }
    /* libcurl sends a body again by itself on a fresh connection when a reused one was
     * closed under it: only for what is safe to repeat (a device poll, a registration;
     * never a code or a refresh token, which the first attempt may have spent). And a
     * connection idle for 4 s is not reused: servers close theirs at 5 s (Node's
     * default), and would cut the next request. */
    h->out.may_rewind = h->may_repeat;
    curl_easy_setopt(e, CURLOPT_MAXAGE_CONN, 4L);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)o->http_timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)o->http_timeout_ms);
    if (o->cacert != NULL)
        curl_easy_setopt(e, CURLOPT_CAINFO, o->cacert);
    return mcp__curlm_start(o->curl, e, hdrs, &cbs, h, &h->req);
}

char *mcp__ohttp_why(const mcp__ohttp *h, const char *what, const char *url)
{
    if (h->too_large)
        return mcp__asprintf("%s at %s: the response is larger than %d KiB", what, url,
                             BODY_MAX / 1024);
    if (h->rc != CURLE_OK)
        return mcp__asprintf("%s at %s: %s", what, url, curl_easy_strerror(h->rc));
    if (h->status >= 300 && h->status < 400)
        return mcp__asprintf("%s at %s: HTTP %ld, a redirect (never followed)", what, url,
                             h->status);
    return mcp__asprintf("%s at %s: HTTP %ld", what, url, h->status);
}

json_t *mcp__ohttp_json(const mcp__ohttp *h)
{
    if (h->rc != CURLE_OK || h->body.len == 0)
        return NULL;
    json_t *j = json_loadb(h->body.data, h->body.len, JSON_REJECT_DUPLICATES, NULL);
    if (j != NULL && !json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}
