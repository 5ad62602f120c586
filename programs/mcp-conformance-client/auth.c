/* SPDX-License-Identifier: MIT */
/*
 * The auth/... scenarios: an OAuth provider set up from the scenario's name and
 * context, and the browser of the authorization code grant. The suite's
 * authorization servers approve at once: their authorization endpoint answers
 * with a redirect to redirect_uri, where nothing listens; this "browser" makes
 * that request and hands the redirect's Location back, as a real browser hands
 * its last URL to a loopback listener.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

#include "conformance.h"

#define REDIRECT_URI "http://localhost:3000/callback"
#define CIMD_URL "https://conformance-test.local/client-metadata.json"

typedef struct visit {
    mcp_oauth *o;
    char *url;
} visit;

static size_t discard(char *p, size_t size, size_t n, void *user)
{
    (void)p, (void)user;
    return size * n;
}

static void *browse(void *arg)
{
    visit *v = arg;
    char *back = NULL;
    CURL *e = curl_easy_init();
    if (e != NULL) {
        curl_easy_setopt(e, CURLOPT_URL, v->url);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
        char *loc = NULL;
        if (curl_easy_perform(e) == CURLE_OK &&
            curl_easy_getinfo(e, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc != NULL)
            back = strdup(loc);
        curl_easy_cleanup(e);
    }
    if (back == NULL)
        fprintf(stderr, "mcp-conformance-client: the authorization endpoint did not redirect\n");
    mcp_oauth_complete(v->o, back != NULL ? back : REDIRECT_URI "?error=access_denied");
    free(back);
    free(v->url);
    free(v);
    return NULL;
}

/* The redirect hook: the request is made on a thread of its own (never on the
 * client's loop). */
static void open_browser(mcp_oauth *o, const char *url, void *user)
{
    (void)user;
    visit *v = calloc(1, sizeof(*v));
    pthread_t th;
    if (v == NULL || (v->url = strdup(url)) == NULL) {
        free(v);
        mcp_oauth_complete(o, REDIRECT_URI "?error=server_error");
        return;
    }
    v->o = o;
    if (pthread_create(&th, NULL, browse, v) != 0) {
        free(v->url);
        free(v);
        mcp_oauth_complete(o, REDIRECT_URI "?error=server_error");
        return;
    }
    pthread_detach(th);
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

mcp_oauth *conformance_oauth(const char *scenario, json_t *ctx)
{
    const char *str_client_id = json_string_value(json_object_get(ctx, "client_id"));
    const char *secret = json_string_value(json_object_get(ctx, "client_secret"));
    mcp_oauth_opts opts = {
        .size = sizeof(opts),
        .grant = MCP_OAUTH_AUTHORIZATION_CODE,
        .client_name = "libmcp-conformance-client",
        .redirect_uri = REDIRECT_URI,
        .on_redirect = open_browser,
        .client_metadata_url = CIMD_URL,
        .client_id = str_client_id,
        .client_secret = secret,
        .dpop = starts(scenario, "auth/dpop"),
    };
    if (starts(scenario, "auth/client-credentials-")) {
        opts.grant = MCP_OAUTH_CLIENT_CREDENTIALS;
        opts.private_key_pem = json_string_value(json_object_get(ctx, "private_key_pem"));
        opts.signing_alg = json_string_value(json_object_get(ctx, "signing_algorithm"));
    } else if (strcmp(scenario, "auth/enterprise-managed-authorization") == 0) {
        opts.grant = MCP_OAUTH_ENTERPRISE;
        opts.idp_token_endpoint = json_string_value(json_object_get(ctx, "idp_token_endpoint"));
        opts.idp_id_token = json_string_value(json_object_get(ctx, "idp_id_token"));
        opts.idp_client_id = json_string_value(json_object_get(ctx, "idp_client_id"));
    } else if (strcmp(scenario, "auth/wif-jwt-bearer") == 0) {
        opts.grant = MCP_OAUTH_JWT_BEARER;
        opts.assertion = json_string_value(json_object_get(ctx, "valid_jwt"));
    }
    mcp_oauth *o = NULL;
    int rc = mcp_oauth_new(&opts, &o);
    if (rc != MCP_OK)
        fprintf(stderr, "mcp-conformance-client: %s: the OAuth provider: %s\n", scenario,
                mcp_strerror(rc));
    return o;
}
