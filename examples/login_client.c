/* SPDX-License-Identifier: MIT */
/* A client that signs in to a protected MCP server with OAuth 2.1: discovery,
 * registration, the browser step (the user opens the printed URL; the answer comes
 * back to a listener on 127.0.0.1), tokens kept in ~/.local/state/mcp/oauth and
 * refreshed, all done by the library. Usage: login_client URL */
#include <mcp/mcp.h>
#include <stdio.h>

static void open_url(mcp_oauth *o, const char *url, void *user)
{
    (void)o;
    (void)user;
    fprintf(stderr, "Sign in at:\n  %s\n", url); /* or start a browser on it */
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    mcp_token_store *store = NULL;
    mcp_oauth *oauth = NULL;
    mcp_oauth_opts auth = {.size = sizeof(auth),
                           .loopback_redirect = 1, /* http://127.0.0.1:PORT/callback */
                           .on_redirect = open_url};
    int rc = mcp_token_store_files(NULL, &store);
    if (rc == MCP_OK) {
        auth.store = store;
        rc = mcp_oauth_new(&auth, &oauth);
    }
    mcp_client *c = mcp_client_new("login-client", "1.0.0");
    mcp_http_client_opts http = {.size = sizeof(http), .oauth = oauth};
    json_t *tools = NULL;
    if (rc == MCP_OK && c != NULL) /* a 401 starts the sign-in; 5 minutes for the user */
        rc = mcp_client_connect_http(c, argv[1], &http, 300000);
    if (rc == MCP_OK)
        rc = mcp_client_list_all(c, "tools/list", "tools", &tools, NULL);
    if (rc == MCP_OK)
        printf("%zu tools\n", json_array_size(tools));
    else
        fprintf(stderr, "login_client: %s\n", mcp_strerror(rc)); /* MCP_EAUTH: no token */
    json_decref(tools);
    mcp_client_free(c);
    mcp_oauth_free(oauth); /* after the client: it holds the provider until freed */
    mcp_token_store_free(store);
    return rc == MCP_OK ? 0 : 1;
}
