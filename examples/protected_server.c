/* SPDX-License-Identifier: MIT */
/*
 * An MCP server behind OAuth 2.1: each request needs a JWT access token that the
 * authorization server ISSUER issued for this server (RESOURCE: its URL, as clients
 * reach it) with the scope mcp:tools. The library checks the token against the
 * issuer's keys, serves the Protected Resource Metadata document that clients find the
 * issuer with, and answers a request without a good token with 401 (or 403 when a
 * scope is missing). The tool whoami says who the token was issued to.
 *
 * Usage: examples_protected_server [--issuer URL] [--resource URL] [--listen HOST:PORT]
 *                                  [--cert FILE --key FILE]
 * Defaults: https://auth.example.com, https://mcp.example.com/mcp and 127.0.0.1:8080.
 * With --cert and --key (PEM files: the certificate with its chain, and its key) the
 * server speaks HTTPS itself, and SIGHUP reads the files again. SIGINT or SIGTERM stops.
 */
#include <mcp/mcp.h>
#include <stdio.h>
#include <string.h>

static json_t *whoami(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    const mcp_principal *p = mcp_ctx_principal(ctx);
    const char *who = mcp_principal_subject(p); /* a user, or the client acting for itself */
    if (who == NULL)
        who = mcp_principal_client_id(p);
    return mcp_text_result(who != NULL ? who : "(nobody)");
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, "protected_server: listening on %s\n", url);
}

int main(int argc, char **argv)
{
    const char *issuer = "https://auth.example.com";
    const char *resource = "https://mcp.example.com/mcp";
    const char *listen = "127.0.0.1:8080", *cert = NULL, *key = NULL;
    struct {
        const char *name, **value;
    } flags[] = {{"--issuer", &issuer},
                 {"--resource", &resource},
                 {"--listen", &listen},
                 {"--cert", &cert},
                 {"--key", &key}};
    const size_t n = sizeof(flags) / sizeof(flags[0]);
    for (int i = 1; i < argc; i += 2) {
        size_t f = 0;
        while (f < n && strcmp(argv[i], flags[f].name) != 0)
            f++;
        if (f == n || i + 1 == argc) {
            fprintf(stderr,
                    "Usage: %s [--issuer URL] [--resource URL] [--listen HOST:PORT] "
                    "[--cert FILE --key FILE]\n",
                    argv[0]);
            return 2;
        }
        *flags[f].value = argv[i + 1];
    }
    if ((cert == NULL) != (key == NULL)) {
        fprintf(stderr, "protected_server: --cert and --key go together\n");
        return 2;
    }

    mcp_server *srv = mcp_server_new("protected", "1.0.0");
    if (srv == NULL) {
        fprintf(stderr, "protected_server: %s\n", mcp_strerror(MCP_ENOMEM));
        return 1;
    }
    int rc = mcp_server_add_tool(srv, "whoami", "Who the request acts for", NULL, whoami, NULL);
    mcp_jwt_opts jwt = {.size = sizeof(jwt)}; /* keys from the issuer's metadata */
    mcp_auth_opts auth = {
        .size = sizeof(auth),
        .resource = resource, /* the audience tokens must name */
        .issuer = issuer,
        .authorization_servers = (const char *[]){issuer, NULL},
        .required_scopes = (const char *[]){"mcp:tools", NULL},
        .jwt = &jwt,
    };
    mcp_http_opts opts = {.size = sizeof(opts),
                          .listen = listen,
                          .auth = &auth,
                          .tls_cert_file = cert, /* NULL: plain HTTP */
                          .tls_key_file = key,
                          .on_listen = on_listen};
    if (rc == MCP_OK)
        rc = mcp_serve_http(srv, &opts); /* until SIGINT or SIGTERM */
    if (rc != MCP_OK)
        fprintf(stderr, "protected_server: %s\n", mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
