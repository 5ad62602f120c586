/*
 * libmcp - the Model Context Protocol in C. Include this one header.
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include <mcp/common.h>
#include <mcp/store.h>
#include <mcp/server.h>
#include <mcp/client.h>

#endif
