/*
 * mcp-conformance-client: the client side of the official MCP conformance
 * suite (its "client" mode). The suite starts a test server for one scenario
 * and runs this program with the scenario's name in MCP_CONFORMANCE_SCENARIO
 * and the server's URL as the last argument; the program acts the scenario out
 * with libmcp's HTTP client and exits 0 when every step worked.
 *
 * Scenarios: initialize, tools_call, sse-retry,
 * elicitation-sep1034-client-defaults. The auth scenarios need an OAuth
 * client, which libmcp does not have: they exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

/* Accepts every elicitation and leaves every field out: the library fills in
 * the schema's defaults (SEP-1034), which is what the scenario checks. */
static json_t *accept_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err,
                                  void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    return json_pack("{s:s, s:{}}", "action", "accept", "content");
}

static int call_tool(mcp_client *c, const char *name, json_t *args)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, name, args, NULL, &result, &err);
    if (rc != MCP_OK) {
        fprintf(stderr, "mcp-conformance-client: %s: %s%s%s\n", name, mcp_strerror(rc),
                err.message[0] ? ": " : "", err.message);
        mcp_rpc_error_clear(&err);
        return 1;
    }
    char *text = json_dumps(result, JSON_COMPACT);
    fprintf(stderr, "mcp-conformance-client: %s: %s\n", name, text ? text : "(result)");
    free(text);
    json_decref(result);
    return 0;
}

static const char usage[] =
    "Usage: MCP_CONFORMANCE_SCENARIO=NAME mcp-conformance-client [--help] URL\n"
    "Acts out one client scenario of the official MCP conformance suite against the\n"
    "test server at URL (the suite's client mode runs it so):\n"
    "  initialize                           connect (initialize), then close\n"
    "  tools_call                           call add_numbers with a=5, b=3\n"
    "  sse-retry                            call test_reconnection, whose stream the\n"
    "                                       server closes: resumed after its retry\n"
    "  elicitation-sep1034-client-defaults  call test_client_elicitation_defaults and\n"
    "                                       accept its elicitation with the defaults\n"
    "Exit status: 0 when the scenario's steps all worked, 1 when one failed, 2 for\n"
    "a usage error or a scenario this client does not act out (auth/*).\n";

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
    if (argc < 2 || scenario == NULL || scenario[0] == '\0') {
        fputs(usage, stderr);
        return 2;
    }
    const char *url = argv[argc - 1];
    int known = strcmp(scenario, "initialize") == 0 || strcmp(scenario, "tools_call") == 0 ||
                strcmp(scenario, "sse-retry") == 0 ||
                strcmp(scenario, "elicitation-sep1034-client-defaults") == 0;
    if (!known) {
        fprintf(stderr, "mcp-conformance-client: scenario %s is not acted out by this client\n",
                scenario);
        return 2;
    }
    mcp_client *c = mcp_client_new("libmcp-conformance-client", MCP_VERSION_STRING);
    if (c == NULL) {
        fprintf(stderr, "mcp-conformance-client: out of memory\n");
        return 1;
    }
    mcp_client_set_timeout(c, 20000);
    if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0)
        mcp_client_on_elicitation(c, accept_elicitation, NULL);
    int rc = mcp_client_connect_http(c, url, NULL, 0);
    if (rc != MCP_OK) {
        mcp_rpc_error err = {0};
        mcp_client_connect_error(c, &err);
        fprintf(stderr, "mcp-conformance-client: connecting to %s: %s%s%s\n", url, mcp_strerror(rc),
                err.message[0] ? ": " : "", err.message);
        mcp_rpc_error_clear(&err);
        mcp_client_free(c);
        return 1;
    }
    int failed = 0;
    if (strcmp(scenario, "tools_call") == 0)
        failed = call_tool(c, "add_numbers", json_pack("{s:i, s:i}", "a", 5, "b", 3));
    else if (strcmp(scenario, "sse-retry") == 0)
        failed = call_tool(c, "test_reconnection", json_object());
    else if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0)
        failed = call_tool(c, "test_client_elicitation_defaults", json_object());
    mcp_client_free(c);
    return failed;
}
