/* SPDX-License-Identifier: MIT */
/* An MCP server with one tool, "echo", served over stdin and stdout. */
#include <mcp/mcp.h>
#include <stdio.h>

static json_t *echo(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    const char *text = json_string_value(json_object_get(args, "text"));
    if (text == NULL)
        return mcp_tool_error("argument 'text' must be a string");
    return mcp_text_result(text); /* {"content":[{"type":"text","text":...}]} */
}

int main(void)
{
    mcp_server *srv = mcp_server_new("echo", "1.0.0");
    if (srv == NULL)
        return 1;
    int rc = mcp_server_add_tool(srv, "echo", "Echo the text back",
                                 "{\"type\":\"object\","
                                 "\"properties\":{\"text\":{\"type\":\"string\"}},"
                                 "\"required\":[\"text\"]}",
                                 echo, NULL);
    if (rc == MCP_OK)
        rc = mcp_serve_stdio(srv); /* until stdin closes or SIGINT/SIGTERM */
    if (rc != MCP_OK)
        fprintf(stderr, "echo_server: %s\n", mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
