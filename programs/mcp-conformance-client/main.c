/* SPDX-License-Identifier: MIT */
/*
 * mcp-conformance-client: the client side of the official MCP conformance
 * suite (its "client" mode). The suite starts a test server for one scenario
 * and runs this program with the scenario's name in MCP_CONFORMANCE_SCENARIO,
 * the revision it tests in MCP_CONFORMANCE_PROTOCOL_VERSION, what the scenario
 * wants done in MCP_CONFORMANCE_CONTEXT (JSON, for some scenarios) and the
 * server's URL as the last argument; the program acts the scenario out with
 * libmcp's HTTP client and exits 0 when every step worked.
 *
 * The revision: 2026-07-28 lets the client choose ("auto": server/discover
 * first); an older one pins the client to it (initialize offering it); none
 * (the 0.1 harness sets none) pins the legacy era.
 *
 * The auth/... scenarios connect with an OAuth provider (auth.c) and then list
 * the tools and call test-tool. Any scenario not listed in usage below exits 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

#include "conformance.h"

#define PROG "mcp-conformance-client"

/* Accepts every elicitation. Its content: "confirmed" for the MRTR scenario's
 * boolean, and nothing else, so that the library fills in the schema's defaults
 * (SEP-1034), which the defaults scenario checks. */
static json_t *accept_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err,
                                  void *user)
{
    (void)c, (void)err, (void)user;
    json_t *content = json_object();
    const json_t *props = json_object_get(json_object_get(params, "requestedSchema"), "properties");
    if (json_object_get(props, "confirmed") != NULL)
        json_object_set_new(content, "confirmed", json_true());
    return json_pack("{s:s, s:o}", "action", "accept", "content", content);
}

/* A sampling handler, for request-metadata's declared capabilities: never asked. */
static json_t *refuse_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    return NULL;
}

/* Calls a tool; 0 when it answered (an isError result too), 1 otherwise. */
static int call_tool(mcp_client *c, const char *name, json_t *args)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, name, args, NULL, &result, &err);
    if (rc != MCP_OK) {
        fprintf(stderr, PROG ": %s: %s%s%s\n", name, mcp_strerror(rc), err.message[0] ? ": " : "",
                err.message);
        mcp_rpc_error_clear(&err);
        return 1;
    }
    char *text = json_dumps(result, JSON_COMPACT);
    fprintf(stderr, PROG ": %s: %s\n", name, text ? text : "(result)");
    free(text);
    json_decref(result);
    return 0;
}

/* Every item of a list method, or NULL after saying why. */
static json_t *list_all(mcp_client *c, const char *method, const char *key)
{
    json_t *items = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, method, key, &items, &err);
    if (rc != MCP_OK) {
        fprintf(stderr, PROG ": %s: %s%s%s\n", method, mcp_strerror(rc), err.message[0] ? ": " : "",
                err.message);
        mcp_rpc_error_clear(&err);
        return NULL;
    }
    return items;
}

/* Lists the tools and calls each with args (copied per call). */
static int call_every_tool(mcp_client *c, const json_t *args)
{
    json_t *tools = list_all(c, "tools/list", "tools");
    if (tools == NULL)
        return 1;
    int failed = 0;
    size_t i;
    json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        if (name != NULL)
            failed |= call_tool(c, name, json_deep_copy(args));
    }
    json_decref(tools);
    return failed;
}

/* http-standard-headers: every method that carries Mcp-Name, on everything listed. */
static int every_named_request(mcp_client *c)
{
    json_t *empty = json_object();
    int failed = call_every_tool(c, empty);
    json_decref(empty);
    json_t *resources = list_all(c, "resources/list", "resources");
    json_t *prompts = list_all(c, "prompts/list", "prompts");
    failed |= resources == NULL || prompts == NULL;
    size_t i;
    json_t *item;
    json_array_foreach(resources, i, item)
    {
        json_t *result = NULL;
        const char *uri = json_string_value(json_object_get(item, "uri"));
        failed |= uri == NULL || mcp_client_read_resource(c, uri, &result, NULL) != MCP_OK;
        json_decref(result);
    }
    json_array_foreach(prompts, i, item)
    {
        json_t *result = NULL;
        const char *name = json_string_value(json_object_get(item, "name"));
        failed |= name == NULL || mcp_client_get_prompt(c, name, NULL, &result, NULL) != MCP_OK;
        json_decref(result);
    }
    json_decref(resources);
    json_decref(prompts);
    return failed;
}

/* http-custom-headers: the calls the scenario's context lists ({"toolCalls":[{name,
 * arguments}]}), after tools/list taught the client the tools' x-mcp-header names. */
static int context_calls(mcp_client *c)
{
    const char *text = getenv("MCP_CONFORMANCE_CONTEXT");
    json_t *ctx = text != NULL ? json_loads(text, 0, NULL) : NULL;
    json_t *calls = json_object_get(ctx, "toolCalls");
    json_t *tools = list_all(c, "tools/list", "tools");
    int failed = tools == NULL || !json_is_array(calls);
    if (!json_is_array(calls))
        fprintf(stderr, PROG ": MCP_CONFORMANCE_CONTEXT holds no toolCalls\n");
    size_t i;
    json_t *call;
    json_array_foreach(calls, i, call)
    {
        const char *name = json_string_value(json_object_get(call, "name"));
        json_t *args = json_object_get(call, "arguments");
        failed |= name == NULL || call_tool(c, name, args ? json_incref(args) : json_object());
    }
    json_decref(tools);
    json_decref(ctx);
    return failed;
}

/* json-schema-2020-12-preservation: the focal tool's inputSchema, as the client
 * received it, goes back through the echo tool. */
static int echo_schema(mcp_client *c)
{
    json_t *tools = list_all(c, "tools/list", "tools");
    if (tools == NULL)
        return 1;
    json_t *schema = NULL;
    size_t i;
    json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        if (name != NULL && strcmp(name, "json_schema_2020_12_tool") == 0)
            schema = json_incref(json_object_get(tool, "inputSchema"));
    }
    json_decref(tools);
    if (schema == NULL) {
        fprintf(stderr, PROG ": tools/list has no json_schema_2020_12_tool\n");
        return 1;
    }
    return call_tool(c, "json_schema_echo", json_pack("{s:o}", "schema", schema));
}

static const char usage[] =
    "Usage: MCP_CONFORMANCE_SCENARIO=NAME " PROG " [--help] URL\n"
    "Acts out one client scenario of the official MCP conformance suite against the\n"
    "test server at URL (the suite's client mode runs it so):\n"
    "  initialize                           connect (initialize), then close\n"
    "  tools_call                           call add_numbers with a=5, b=3\n"
    "  sse-retry                            call test_reconnection, whose stream the\n"
    "                                       server closes: resumed after its retry\n"
    "  elicitation-sep1034-client-defaults  call test_client_elicitation_defaults and\n"
    "                                       accept its elicitation with the defaults\n"
    "  request-metadata                     connect with every capability declared\n"
    "                                       (the server refuses the first request's\n"
    "                                       version once), list the tools\n"
    "  sep-2322-client-request-state        call the test_mrtr_* tools, answering their\n"
    "                                       elicitations (input_required rounds)\n"
    "  http-standard-headers                list and call every tool, list and read\n"
    "                                       every resource, list and get every prompt\n"
    "  http-custom-headers                  list the tools, then make the tool calls\n"
    "                                       MCP_CONFORMANCE_CONTEXT lists\n"
    "  http-invalid-tool-headers            list the tools and call each one listed\n"
    "  json-schema-ref-no-deref             list the tools\n"
    "  json-schema-2020-12-preservation     list the tools, echo the focal tool's\n"
    "                                       inputSchema through json_schema_echo\n"
    "  auth/*                               connect with OAuth (the provider set up\n"
    "                                       from MCP_CONFORMANCE_CONTEXT), list the\n"
    "                                       tools, call test-tool\n"
    "MCP_CONFORMANCE_PROTOCOL_VERSION: 2026-07-28 (the client probes with\n"
    "server/discover), an older version (the client is pinned to it), or unset (the\n"
    "legacy era).\n"
    "Exit status: 0 when the scenario's steps all worked, 1 when one failed, 2 for\n"
    "a usage error or a scenario this client does not act out.\n";

static const char *const scenarios[] = {
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
};

static int is(const char *scenario, const char *name)
{
    return strcmp(scenario, name) == 0;
}

static int act(mcp_client *c, const char *s)
{
    if (is(s, "tools_call"))
        return call_tool(c, "add_numbers", json_pack("{s:i, s:i}", "a", 5, "b", 3));
    if (is(s, "sse-retry"))
        return call_tool(c, "test_reconnection", json_object());
    if (is(s, "elicitation-sep1034-client-defaults"))
        return call_tool(c, "test_client_elicitation_defaults", json_object());
    if (is(s, "request-metadata") || is(s, "json-schema-ref-no-deref")) {
        json_t *tools = list_all(c, "tools/list", "tools");
        json_decref(tools);
        return tools == NULL;
    }
    if (is(s, "sep-2322-client-request-state")) {
        int failed = 0;
        static const char *const tools[] = {"test_mrtr_echo_state", "test_mrtr_no_state",
                                            "test_mrtr_unrelated", "test_mrtr_no_result_type"};
        for (size_t i = 0; i < sizeof(tools) / sizeof(*tools); i++)
            failed |= call_tool(c, tools[i], json_object());
        return failed;
    }
    if (is(s, "http-standard-headers"))
        return every_named_request(c);
    if (is(s, "http-custom-headers"))
        return context_calls(c);
    if (is(s, "http-invalid-tool-headers")) {
        json_t *args = json_pack("{s:s}", "region", "us-west1");
        int failed = call_every_tool(c, args);
        json_decref(args);
        return failed;
    }
    if (is(s, "json-schema-2020-12-preservation"))
        return echo_schema(c);
    if (strncmp(s, "auth/", 5) == 0) {
        json_t *tools = list_all(c, "tools/list", "tools");
        json_decref(tools);
        return tools == NULL || call_tool(c, "test-tool", json_object());
    }
    return 0; /* initialize: the connect was the scenario */
}

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
    int known = 0;
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(*scenarios); i++)
        known |= is(scenario, scenarios[i]);
    known |= strncmp(scenario, "auth/", 5) == 0;
    if (!known) {
        fprintf(stderr, PROG ": scenario %s is not acted out by this client\n", scenario);
        return 2;
    }
    const char *version = getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
    const char *protocol = "legacy";
    if (version != NULL && version[0] != '\0')
        protocol = strcmp(version, MCP_PROTOCOL_2026_07_28) == 0 ? "auto" : version;
    mcp_client *c = mcp_client_new("libmcp-conformance-client", MCP_VERSION_STRING);
    if (c == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    if (mcp_client_set_protocol(c, protocol) != MCP_OK) {
        fprintf(stderr, PROG ": protocol version %s is not one libmcp speaks\n", protocol);
        mcp_client_free(c);
        return 2;
    }
    mcp_client_set_timeout(c, 20000);
    if (is(scenario, "elicitation-sep1034-client-defaults") ||
        is(scenario, "sep-2322-client-request-state") || is(scenario, "request-metadata"))
        mcp_client_on_elicitation(c, accept_elicitation, NULL);
    if (is(scenario, "request-metadata")) {
        /* Every capability, for the checks of how each is declared. */
        mcp_client_on_sampling(c, refuse_sampling, NULL);
        json_t *roots = json_pack("[{s:s}]", "uri", "file:///tmp");
        mcp_client_set_roots(c, roots);
        json_decref(roots);
    }
    mcp_http_client_opts hopts = {.size = sizeof(hopts)};
    json_t *ctx = NULL;
    if (strncmp(scenario, "auth/", 5) == 0) {
        const char *text = getenv("MCP_CONFORMANCE_CONTEXT");
        ctx = text != NULL ? json_loads(text, 0, NULL) : NULL;
        hopts.oauth = conformance_oauth(scenario, ctx);
        json_decref(ctx);
        if (hopts.oauth == NULL) {
            mcp_client_free(c);
            return 1;
        }
    }
    int rc = mcp_client_connect_http(c, url, &hopts, 0);
    mcp_oauth_free(hopts.oauth);
    if (rc != MCP_OK) {
        mcp_rpc_error err = {0};
        mcp_client_connect_error(c, &err);
        fprintf(stderr, PROG ": connecting to %s: %s%s%s\n", url, mcp_strerror(rc),
                err.message[0] ? ": " : "", err.message);
        mcp_rpc_error_clear(&err);
        mcp_client_free(c);
        return 1;
    }
    fprintf(stderr, PROG ": %s: connected, protocol %s\n", scenario,
            mcp_client_protocol_version(c));
    int failed = act(c, scenario);
    mcp_client_free(c);
    return failed;
}
