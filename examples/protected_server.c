/* SPDX-License-Identifier: MIT */
/* An MCP server behind OAuth 2.1, over HTTPS served by the endpoint itself: each
 * request needs a JWT access token that https://auth.example.com issued for
 * https://mcp.example.com/mcp with the scope mcp:tools. */
#include <mcp/mcp.h>
#include <stdio.h>

static json_t *whoami(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    const char *sub = mcp_principal_subject(mcp_ctx_principal(ctx));
    return mcp_text_result(sub != NULL ? sub : "(no subject)");
}

int main(void)
{
    mcp_server *srv = mcp_server_new("protected", "1.0.0");
    if (srv == NULL)
        return 1;
    int rc = mcp_server_add_tool(srv, "whoami", "Who the request acts for", NULL, whoami, NULL);
    mcp_jwt_opts jwt = {.size = sizeof(jwt)}; /* keys from the issuer's metadata */
    mcp_auth_opts auth = {
        .size = sizeof(auth),
        .resource = "https://mcp.example.com/mcp", /* this server, as clients reach it */
        .issuer = "https://auth.example.com",
        .authorization_servers = (const char *[]){"https://auth.example.com", NULL},
        .required_scopes = (const char *[]){"mcp:tools", NULL},
        .jwt = &jwt,
    };
    mcp_http_opts opts = {.size = sizeof(opts),
                          .listen = "0.0.0.0:8443",
                          .auth = &auth,
                          .tls_cert_file = "fullchain.pem",
                          .tls_key_file = "privkey.pem"};
    if (rc == MCP_OK)
        rc = mcp_serve_http(srv, &opts); /* SIGHUP reads the certificate files again */
    if (rc != MCP_OK)
        fprintf(stderr, "protected_server: %s\n", mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
