/* SPDX-License-Identifier: MIT */
/*
 * A client that signs in to a protected MCP server with OAuth 2.1, lists its tools and
 * calls one. The server's first 401 starts the sign-in, and the library does it all:
 * discovery of the authorization server, registration, the grant, and the tokens kept
 * in $XDG_STATE_HOME/mcp/oauth (else ~/.local/state/mcp/oauth) and refreshed, so that
 * the next run finds them and signs in no more.
 *
 * A user signs in with a browser: the program prints the URL to open, and the answer
 * comes back to a listener on 127.0.0.1. With --client-id, the client signs in as
 * itself, with no user: the client credentials grant, its secret in $MCP_CLIENT_SECRET.
 *
 * Usage: examples_login_client [--client-id ID] URL [TOOL]
 * (TOOL: a tool to call with no arguments, e.g. whoami of examples_protected_server)
 */
#include <mcp/mcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void open_url(mcp_oauth *o, const char *url, void *user)
{
    (void)o;
    (void)user;
    fprintf(stderr, "Sign in at:\n  %s\n", url); /* or start a browser on it */
}

/* Says why rc, with the message err holds, and clears err. */
static void report(int rc, mcp_rpc_error *err)
{
    fprintf(stderr, "login_client: %s%s%s\n", mcp_strerror(rc), err->message[0] ? ": " : "",
            err->message);
    mcp_rpc_error_clear(err);
}

/* Lists the server's tools, then calls tool (if not NULL) and prints its text. */
static int use_server(mcp_client *c, const char *tool)
{
    json_t *tools = NULL, *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, "tools/list", "tools", &tools, &err);
    for (size_t i = 0; rc == MCP_OK && i < json_array_size(tools); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(tools, i), "name"));
        printf("tool: %s\n", name != NULL ? name : "?");
    }
    if (rc == MCP_OK && tool != NULL)
        rc = mcp_client_call_tool(c, tool, NULL, NULL, &result, &err);
    if (rc == MCP_OK && result != NULL) {
        json_t *first = json_array_get(json_object_get(result, "content"), 0);
        const char *text = json_string_value(json_object_get(first, "text"));
        if (json_is_true(json_object_get(result, "isError"))) {
            fprintf(stderr, "login_client: %s failed: %s\n", tool, text != NULL ? text : "");
            rc = MCP_ERPC;
        } else {
            printf("%s: %s\n", tool, text != NULL ? text : "");
        }
    } else if (rc != MCP_OK) {
        report(rc, &err);
    }
    json_decref(result);
    json_decref(tools);
    return rc;
}

int main(int argc, char **argv)
{
    const char *client_id = NULL;
    if (argc >= 3 && strcmp(argv[1], "--client-id") == 0) {
        client_id = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc < 2 || argc > 3 || argv[1][0] == '-') {
        fprintf(stderr, "Usage: examples_login_client [--client-id ID] URL [TOOL]\n");
        return 2;
    }
    mcp_oauth_opts auth = {.size = sizeof(auth)};
    if (client_id != NULL) {
        /* No user: the client's own credentials. */
        auth.grant = MCP_OAUTH_CLIENT_CREDENTIALS;
        auth.client_id = client_id;
        auth.client_secret = getenv("MCP_CLIENT_SECRET");
    } else {
        /* A user, with a browser: the authorization code grant with PKCE. */
        auth.loopback_redirect = 1; /* http://127.0.0.1:PORT/callback */
        auth.on_redirect = open_url;
    }
    mcp_token_store *store = NULL;
    mcp_oauth *oauth = NULL;
    mcp_client *c = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_token_store_files(NULL, &store);
    if (rc == MCP_OK) {
        auth.store = store;
        rc = mcp_oauth_new(&auth, &oauth);
    }
    if (rc == MCP_OK && (c = mcp_client_new("login-client", "1.0.0")) == NULL)
        rc = MCP_ENOMEM;
    if (rc == MCP_OK) { /* a 401 starts the sign-in; 5 minutes for the user */
        mcp_http_client_opts http = {.size = sizeof(http), .oauth = oauth};
        rc = mcp_client_connect_http(c, argv[1], &http, 300000);
        if (rc == MCP_OK) {
            rc = use_server(c, argc == 3 ? argv[2] : NULL);
        } else {
            mcp_client_connect_error(c, &err); /* MCP_EAUTH: why no token could be had */
            report(rc, &err);
        }
    } else {
        report(rc, &err);
    }
    mcp_client_free(c);
    mcp_oauth_free(oauth); /* after the client: it holds the provider until freed */
    mcp_token_store_free(store);
    return rc == MCP_OK ? 0 : 1;
}
