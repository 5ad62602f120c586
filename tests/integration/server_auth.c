/* SPDX-License-Identifier: MIT */
/*
 * An MCP server behind the authorization gate, for the tests of the gate
 * (test_auth_gate.c), with a scripted verifier: each token names what the verifier
 * says of it, so that a test can ask for every outcome.
 *
 *   server_auth --http HOST:PORT [--resource URL] [--scope S]... [--root]
 *               [--issuer ISS] [--cache-ttl MS]
 *
 * --resource URL  the resource identifier (default http://127.0.0.1/mcp)
 * --scope S       a required scope (repeatable; default none)
 * --root          serve the metadata document at the root too
 * --issuer ISS    tokens must come from ISS
 * --cache-ttl MS  how long a verification is trusted
 * --scope-error-as-result  a call without a tool's scopes gets a tool error, not 403
 * --jwt-issuer ISS         check tokens with the built-in JWT verifier instead, for
 *                          issuer ISS
 * --jwks-uri URL           where that verifier fetches the keys
 * --jwks-file F            serve file F at GET /jwks (read at each request, so that a
 *                          test can rotate the keys; each one logs "jwks served")
 * --jwks-refresh-min MS    the verifier's refresh_min_ms
 *
 * Tokens: "alice", "bob" (good: aud the resource, iss https://as.test, scope
 * "mcp:tools", an hour left); "alice-noscope" (scope "other"); "expired",
 * "wrongaud", "noaud", "future" (nbf in an hour), "otheriss" (iss
 * https://other.test); "rejected" (the verifier refuses it); "down" (the verifier
 * cannot decide); "slow-alice" (alice, accepted 300 ms later, from a timer);
 * anything else is refused.
 *
 * Methods: resources/list needs the scope mcp:admin (mcp_auth_opts.method_scopes).
 *
 * Tools: "admin" needs the scope mcp:admin and answers "done"; "whoami" answers "sub=S client=C
 * scopes=A,B" from its principal; "verifications" answers how many times the verifier was asked;
 * "ask" asks the client its name (elicitation; in revision 2026-07-28 a Multi Round-Trip Request)
 * and answers "NAME, for SUB".
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include <mcp/mcp.h>

static const char *resource = "http://127.0.0.1/mcp";
static int verifications;
static uv_loop_t loop;
static mcp_http_endpoint *endpoint;
static uv_signal_t sigterm;

static json_t *claims_for(const char *sub, const char *aud, const char *iss, const char *scope,
                          long long exp_in, long long nbf_in)
{
    long long now = (long long)time(NULL);
    json_t *c = json_pack("{s:s, s:s, s:s, s:I}", "sub", sub, "client_id", "test-client", "scope",
                          scope, "exp", (json_int_t)(now + exp_in));
    if (aud != NULL)
        json_object_set_new(c, "aud", json_string(aud));
    if (iss != NULL)
        json_object_set_new(c, "iss", json_string(iss));
    if (nbf_in != 0)
        json_object_set_new(c, "nbf", json_integer(now + nbf_in));
    return c;
}

typedef struct slow {
    uv_timer_t timer;
    mcp_token_check *check;
} slow;

static void slow_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_slow(uv_timer_t *t)
{
    slow *s = t->data;
    mcp_token_check_accept(s->check,
                           claims_for("alice", resource, "https://as.test", "mcp:tools", 3600, 0));
    uv_close((uv_handle_t *)t, slow_closed);
}

static void verify(void *user, const char *token, mcp_token_check *check)
{
    (void)user;
    verifications++;
    const char *iss = "https://as.test";
    if (strcmp(token, "root") == 0)
        mcp_token_check_accept(check,
                               claims_for("root", resource, iss, "mcp:tools mcp:admin", 3600, 0));
    else if (strcmp(token, "alice") == 0 || strcmp(token, "bob") == 0)
        mcp_token_check_accept(check, claims_for(token, resource, iss, "mcp:tools", 3600, 0));
    else if (strcmp(token, "alice-noscope") == 0)
        mcp_token_check_accept(check, claims_for("alice", resource, iss, "other", 3600, 0));
    else if (strcmp(token, "expired") == 0)
        mcp_token_check_accept(check, claims_for("alice", resource, iss, "mcp:tools", -3600, 0));
    else if (strcmp(token, "wrongaud") == 0)
        mcp_token_check_accept(
            check, claims_for("alice", "https://elsewhere/mcp", iss, "mcp:tools", 3600, 0));
    else if (strcmp(token, "noaud") == 0)
        mcp_token_check_accept(check, claims_for("alice", NULL, iss, "mcp:tools", 3600, 0));
    else if (strcmp(token, "future") == 0)
        mcp_token_check_accept(check, claims_for("alice", resource, iss, "mcp:tools", 7200, 3600));
    else if (strcmp(token, "otheriss") == 0)
        mcp_token_check_accept(
            check, claims_for("alice", resource, "https://other.test", "mcp:tools", 3600, 0));
    else if (strcmp(token, "down") == 0)
        mcp_token_check_unavailable(check, "the test's authorization server is down");
    else if (strcmp(token, "slow-alice") == 0) {
        slow *s = calloc(1, sizeof(*s));
        if (s == NULL) {
            mcp_token_check_unavailable(check, "out of memory");
            return;
        }
        s->check = check;
        uv_timer_init(&loop, &s->timer);
        s->timer.data = s;
        uv_timer_start(&s->timer, on_slow, 300, 0);
    } else if (strcmp(token, "rejected") == 0)
        mcp_token_check_reject(check, "The access token was revoked");
    else
        mcp_token_check_reject(check, NULL);
}

static json_t *tool_whoami(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const mcp_principal *p = mcp_ctx_principal(ctx);
    char text[512];
    int n = snprintf(text, sizeof(text), "sub=%s client=%s scopes=",
                     mcp_principal_subject(p) ? mcp_principal_subject(p) : "(none)",
                     mcp_principal_client_id(p) ? mcp_principal_client_id(p) : "(none)");
    for (const char *const *s = mcp_principal_scopes(p);
         *s != NULL && n > 0 && (size_t)n < sizeof(text); s++)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s",
                      s == mcp_principal_scopes(p) ? "" : ",", *s);
    return mcp_text_result(text);
}

static const char *jwks_file;

static void serve_jwks(mcp_http_exchange *x, void *user)
{
    (void)user;
    char buf[65536];
    FILE *f = fopen(jwks_file, "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof(buf), f) : 0;
    if (f != NULL)
        fclose(f);
    fprintf(stderr, "server_auth: jwks served\n");
    const char *hdrs[] = {"Content-Type", "application/json", NULL};
    mcp_http_exchange_respond(x, f != NULL ? 200 : 404, hdrs, buf, n);
}

static json_t *tool_ask(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *params =
        json_pack("{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "message", "Your name?", "requestedSchema",
                  "type", "object", "properties", "name", "type", "string", "required", "name");
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_ask(ctx, "name", "elicitation/create", params, 0, &answer, &err);
    mcp_rpc_error_clear(&err);
    if (rc != MCP_OK)
        return NULL; /* asked: the InputRequiredResult goes out */
    const char *name =
        json_string_value(json_object_get(json_object_get(answer, "content"), "name"));
    char text[256];
    snprintf(text, sizeof(text), "%s, for %s", name ? name : "(none)",
             mcp_principal_subject(mcp_ctx_principal(ctx)));
    json_decref(answer);
    return mcp_text_result(text);
}

static json_t *tool_admin(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return mcp_text_result("done");
}

static json_t *tool_verifications(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    char text[32];
    snprintf(text, sizeof(text), "%d", verifications);
    return mcp_text_result(text);
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, "server_auth: listening on %s\n", url);
}

static void stopped(void *user, int status)
{
    (void)user, (void)status;
    mcp_http_endpoint_free(endpoint);
    endpoint = NULL;
    uv_close((uv_handle_t *)&sigterm, NULL);
}

static void on_sigterm(uv_signal_t *s, int sig)
{
    (void)sig;
    uv_signal_stop(s);
    mcp_http_endpoint_stop(endpoint, 0, stopped, NULL);
}

int main(int argc, char **argv)
{
    const char *listen = "127.0.0.1:0", *issuer = NULL, *jwt_issuer = NULL, *jwks_uri = NULL;
    int refresh_min = 0;
    const char *scopes[16] = {NULL};
    size_t nscopes = 0;
    int root = 0, ttl = 0, scope_error = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--http") == 0 && i + 1 < argc)
            listen = argv[++i];
        else if (strcmp(argv[i], "--resource") == 0 && i + 1 < argc)
            resource = argv[++i];
        else if (strcmp(argv[i], "--scope") == 0 && i + 1 < argc && nscopes < 15)
            scopes[nscopes++] = argv[++i];
        else if (strcmp(argv[i], "--root") == 0)
            root = 1;
        else if (strcmp(argv[i], "--scope-error-as-result") == 0)
            scope_error = 1;
        else if (strcmp(argv[i], "--issuer") == 0 && i + 1 < argc)
            issuer = argv[++i];
        else if (strcmp(argv[i], "--cache-ttl") == 0 && i + 1 < argc)
            ttl = atoi(argv[++i]);
        else if (strcmp(argv[i], "--jwt-issuer") == 0 && i + 1 < argc)
            jwt_issuer = argv[++i];
        else if (strcmp(argv[i], "--jwks-uri") == 0 && i + 1 < argc)
            jwks_uri = argv[++i];
        else if (strcmp(argv[i], "--jwks-file") == 0 && i + 1 < argc)
            jwks_file = argv[++i];
        else if (strcmp(argv[i], "--jwks-refresh-min") == 0 && i + 1 < argc)
            refresh_min = atoi(argv[++i]);
        else {
            fprintf(stderr, "server_auth: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    mcp_server *srv = mcp_server_new("auth-test", "1");
    if (srv == NULL ||
        mcp_server_add_tool(srv, "whoami", "Who the request acts for", NULL, tool_whoami, NULL) !=
            MCP_OK ||
        mcp_server_add_tool(srv, "verifications", "How many tokens were verified", NULL,
                            tool_verifications, NULL) != MCP_OK ||
        mcp_server_add_tool(srv, "ask", "Asks the client its name", NULL, tool_ask, NULL) !=
            MCP_OK ||
        mcp_server_add_tool_def(srv, &(mcp_tool_def){.size = sizeof(mcp_tool_def),
                                                     .name = "admin",
                                                     .fn = tool_admin,
                                                     .scopes = "mcp:admin"}) != MCP_OK)
        return 1;
    const mcp_method_scopes method_scopes[] = {{"resources/list", "mcp:admin"}, {NULL, NULL}};
    const char *as[] = {"https://as.test", NULL};
    const char *supported[] = {"mcp:tools", "other", NULL};
    mcp_auth_opts auth = {.size = sizeof(auth),
                          .resource = resource,
                          .authorization_servers = as,
                          .scopes_supported = supported,
                          .required_scopes = nscopes > 0 ? scopes : NULL,
                          .resource_name = "auth test",
                          .metadata_at_root = root,
                          .issuer = issuer,
                          .cache_ttl_ms = ttl,
                          .verifier = {.verify = verify},
                          .scope_error_as_result = scope_error,
                          .method_scopes = method_scopes};
    mcp_jwt_opts jwt = {.size = sizeof(jwt), .jwks_uri = jwks_uri, .refresh_min_ms = refresh_min};
    if (jwt_issuer != NULL) {
        auth.issuer = jwt_issuer;
        auth.verifier.verify = NULL;
        auth.jwt = &jwt;
    }
    mcp_http_route routes[] = {{.method = "GET", .path = "/jwks", .fn = serve_jwks},
                               {.path = NULL}};
    mcp_http_opts opts = {.size = sizeof(opts),
                          .listen = listen,
                          .on_listen = on_listen,
                          .auth = &auth,
                          .routes = jwks_file != NULL ? routes : NULL};
    uv_loop_init(&loop);
    int rc = mcp_http_endpoint_new(&loop, srv, &opts, &endpoint);
    if (rc != MCP_OK) {
        fprintf(stderr, "server_auth: %s\n", mcp_strerror(rc));
        return 1;
    }
    uv_signal_init(&loop, &sigterm);
    uv_signal_start(&sigterm, on_sigterm, SIGTERM);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    mcp_server_free(srv);
    return 0;
}
