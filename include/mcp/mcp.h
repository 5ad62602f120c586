/* SPDX-License-Identifier: MIT */
/*
 * libmcp - the Model Context Protocol in C. Include this one header.
 *
 * base.h: attribute macros, the version and error codes. common.h: JSON-RPC
 * error codes, protocol versions, logging levels, and the builders
 * of content and results. store.h: the event stores that make Streamable HTTP
 * streams resumable. server.h: the server, its handlers' request context, and
 * the endpoints that serve it. client.h: the client. gateway.h: a stdio MCP
 * server offered over Streamable HTTP.
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include <mcp/base.h>
#include <mcp/common.h>
#include <mcp/store.h>
#include <mcp/auth.h>
#include <mcp/server.h>
#include <mcp/client.h>
#include <mcp/gateway.h>

#endif
