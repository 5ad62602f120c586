/* SPDX-License-Identifier: MIT */
/* An MCP server with one tool, "echo", over stdin and stdout.
 * Usage: examples_echo_server   (try: mcp -- examples_echo_server tools call echo text=hi) */
#include <mcp/mcp.h>

static json_t *echo(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    const char *text = json_string_value(json_object_get(args, "text"));
    return text ? mcp_text_result(text) : mcp_tool_error("argument 'text' must be a string");
}

int main(void)
{
    mcp_server *srv = mcp_server_new("echo", "1.0.0");
    int rc =
        srv ? mcp_server_add_tool(srv, "echo", "Echo the text back", NULL, echo, NULL) : MCP_ENOMEM;
    if (rc == MCP_OK)
        rc = mcp_serve_stdio(srv); /* until stdin closes, or SIGINT or SIGTERM */
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
