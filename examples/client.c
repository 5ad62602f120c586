/* SPDX-License-Identifier: MIT */
/*
 * An MCP client with the synchronous API: the client runs its own loop on a
 * thread of its own, and each call below blocks the calling thread until the
 * server has answered.
 *
 * It connects to a server, over Streamable HTTP when given a URL, or over
 * stdio to a server program it starts; lists the server's tools, one
 * "tool: NAME" line each; calls the tool "echo" with a text and prints the
 * text of its result; reads the first resource the server lists and prints
 * its text; then closes the connection (for stdio: the server's stdin, and
 * the child is reaped) and frees the client. Any failure is printed, with the
 * server's error when it gave one, and the exit status is then 1.
 *
 *   examples_client -- mcp-everything --stdio
 *   examples_client http://127.0.0.1:8080/mcp
 *
 * Usage: examples_client URL
 *        examples_client -- CMD [ARGS...]
 */
#include <stdio.h>
#include <string.h>

#include <mcp/mcp.h>

#define NAME "client"
#define ECHO_TEXT "hello from examples_client"
#define TIMEOUT_MS 30000

/* Prints why `what` failed: the library's reason, and the server's error when it sent one. */
static int fail(const char *what, int rc, const mcp_rpc_error *err)
{
    if (err != NULL && err->code != 0) /* a JSON-RPC error code, or an HTTP status */
        fprintf(stderr, NAME ": %s: %s (%d %s)\n", what, mcp_strerror(rc), err->code, err->message);
    else if (err != NULL && err->message[0] != '\0')
        fprintf(stderr, NAME ": %s: %s (%s)\n", what, mcp_strerror(rc), err->message);
    else
        fprintf(stderr, NAME ": %s: %s\n", what, mcp_strerror(rc));
    return rc;
}

/* A string member of a JSON object, or "?" when the server left it out. */
static const char *member(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL ? s : "?";
}

static int connect_server(mcp_client *c, char **argv)
{
    int rc;
    if (strcmp(argv[1], "--") == 0) /* argv[argc] is NULL: the server's argv as it is */
        rc = mcp_client_connect_stdio(c, (const char *const *)&argv[2], TIMEOUT_MS);
    else
        rc = mcp_client_connect_http(c, argv[1], NULL, TIMEOUT_MS);
    if (rc != MCP_OK) {
        /* For MCP_ERPC, MCP_EHTTP and MCP_ECONNECT the connect kept what went wrong. */
        mcp_rpc_error err = {0};
        int have = mcp_client_connect_error(c, &err) == MCP_OK;
        fail("cannot connect", rc, have ? &err : NULL);
        mcp_rpc_error_clear(&err);
        return rc;
    }
    const json_t *info = mcp_client_server_info(c);
    printf("connected to %s %s (protocol %s)\n", member(info, "name"), member(info, "version"),
           mcp_client_protocol_version(c));
    return MCP_OK;
}

static int list_tools(mcp_client *c)
{
    json_t *tools = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, "tools/list", "tools", &tools, &err); /* every page */
    if (rc != MCP_OK) {
        fail("tools/list", rc, &err);
        mcp_rpc_error_clear(&err);
        return rc;
    }
    size_t i;
    json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        printf("tool: %s\n", member(tool, "name"));
    }
    json_decref(tools);
    return MCP_OK;
}

/* The text of the first content block of a tool result, or "?". */
static const char *first_text(const json_t *result)
{
    return member(json_array_get(json_object_get(result, "content"), 0), "text");
}

static int call_echo(mcp_client *c)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, "echo", json_pack("{s:s}", "text", ECHO_TEXT), NULL, &result,
                                  &err); /* the arguments are stolen */
    if (rc != MCP_OK) {
        fail("tools/call echo", rc, &err);
        mcp_rpc_error_clear(&err);
        return rc;
    }
    /* A tool that fails answers with a result too, marked isError. */
    if (json_is_true(json_object_get(result, "isError"))) {
        fprintf(stderr, NAME ": echo failed: %s\n", first_text(result));
        rc = MCP_ERPC;
    } else {
        printf("echo: %s\n", first_text(result));
    }
    json_decref(result);
    return rc;
}

static int read_first_resource(mcp_client *c)
{
    json_t *resources = NULL, *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, "resources/list", "resources", &resources, &err);
    const char *uri = json_string_value(json_object_get(json_array_get(resources, 0), "uri"));
    if (rc == MCP_OK && uri == NULL) {
        printf("the server lists no resource\n");
    } else if (rc == MCP_OK && (rc = mcp_client_read_resource(c, uri, &result, &err)) == MCP_OK) {
        const json_t *contents = json_array_get(json_object_get(result, "contents"), 0);
        const char *text = json_string_value(json_object_get(contents, "text"));
        if (text != NULL)
            printf("resource %s: %s\n", uri, text);
        else /* a blob: base64 */
            printf("resource %s: binary\n", uri);
    }
    if (rc != MCP_OK)
        fail(uri != NULL ? uri : "resources/list", rc, &err);
    mcp_rpc_error_clear(&err);
    json_decref(result);
    json_decref(resources);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "--") == 0 ? argc < 3 : argc != 2)) {
        fprintf(stderr, "Usage: examples_client URL\n"
                        "       examples_client -- CMD [ARGS...]\n");
        return 2;
    }
    mcp_client *c = mcp_client_new("example-client", "1.0.0");
    if (c == NULL) {
        fprintf(stderr, NAME ": %s\n", mcp_strerror(MCP_ENOMEM));
        return 1;
    }
    int rc = connect_server(c, argv);
    if (rc == MCP_OK)
        rc = list_tools(c);
    if (rc == MCP_OK)
        rc = call_echo(c);
    if (rc == MCP_OK)
        rc = read_first_resource(c);
    /* Closes the connection (a session over HTTP ends with DELETE; a child is reaped)
     * and frees the client, waiting for both. */
    mcp_client_free(c);
    if (rc == MCP_OK)
        printf("closed\n");
    return rc == MCP_OK ? 0 : 1;
}
