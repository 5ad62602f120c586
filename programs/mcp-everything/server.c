/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: building the server from its parts.
 */
#include "everything.h"
#include "log_flag.h"

#include <stdio.h>

const unsigned char everything_png[70] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
    0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78,
    0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8,
    0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

mcp_server *everything_server_new(void)
{
    mcp_server *srv = mcp_server_new(EVERYTHING_NAME, MCP_VERSION_STRING);
    if (!srv) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "%s", mcp_strerror(MCP_ENOMEM));
        return NULL;
    }

    int rc = mcp_server_set_title(srv, "MCP Everything Server");
    if (rc == MCP_OK)
        rc = mcp_server_set_instructions(
            srv, "A test server that offers every MCP feature: call its tools, read its "
                 "resources and templates, get its prompts, and ask it for completions.");
    if (rc != MCP_OK) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME,
                 "cannot set the server's title or instructions: %s", mcp_strerror(rc));
        goto fail;
    }

    /* The add functions print which item failed; here only the exit is left. */
    if (everything_add_tools(srv) != MCP_OK || everything_add_resources(srv) != MCP_OK ||
        everything_add_prompts(srv) != MCP_OK || everything_set_completion(srv) != MCP_OK ||
        everything_add_modern_tools(srv) != MCP_OK ||
        everything_add_modern_prompts(srv) != MCP_OK || everything_add_app(srv) != MCP_OK ||
        everything_add_task_tools(srv) != MCP_OK)
        goto fail;
    return srv;

fail:
    mcp_server_free(srv);
    return NULL;
}
