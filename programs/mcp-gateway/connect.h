/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway --connect URL: the reverse of the gateway, a remote Streamable HTTP
 * (or HTTP+SSE) server offered on stdio (mcp/gateway.h, mcp_gateway_stdio).
 */
#ifndef MCP_GATEWAY_PROGRAM_CONNECT_H
#define MCP_GATEWAY_PROGRAM_CONNECT_H

#include <stdio.h>

/* True when the arguments ask for --connect (before any "--"). */
int connect_wanted(int argc, char **argv);
/* The help text of --connect and its options. */
void connect_help(FILE *out);
/* Runs mcp-gateway --connect; returns the exit status. */
int connect_main(int argc, char **argv);

#endif
