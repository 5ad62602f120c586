/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: a small MCP server with one of everything
 * (tools with input and output schemas, a tool that sends notifications, a
 * failing tool, a resource, templates, a prompt with a required argument,
 * completion), every handler inline so that one input always takes the same
 * path, and a check that a text the server sends is one JSON-RPC message.
 */
#ifndef MCP_FUZZ_SERVER_H
#define MCP_FUZZ_SERVER_H

#include <stddef.h>

#include <mcp/server.h>

/* A new server with the handlers above; aborts when it cannot be made. */
mcp_server *fz_server_new(void);

/* Aborts unless text is one JSON-RPC 2.0 message (an object with
 * "jsonrpc":"2.0") or, for batches, an array of such objects. */
void fz_check_message(const char *text, size_t len);

#endif
