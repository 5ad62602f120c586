/* SPDX-License-Identifier: MIT */
/* mcp-conformance-client's parts. */
#ifndef MCP_CONFORMANCE_CLIENT_H
#define MCP_CONFORMANCE_CLIENT_H

#include <mcp/mcp.h>

/* The OAuth provider of an auth/... scenario, from its context (may be NULL); NULL
 * after saying why. */
mcp_oauth *conformance_oauth(const char *scenario, json_t *ctx);

#endif
