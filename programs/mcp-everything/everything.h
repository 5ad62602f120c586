/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the private interface between the program's files.
 *
 * The server offers every MCP feature the official conformance suite tests
 * (reference/conformance.md section 5), plus a few tools of our own for the
 * project's tests and demos. main.c only parses the command line; the server
 * itself is built by everything_server_new() from the parts below.
 */
#ifndef MCP_EVERYTHING_H
#define MCP_EVERYTHING_H

#include <mcp/mcp.h>

#include <stddef.h>

#define EVERYTHING_NAME "mcp-everything"

/* A 1x1 red PNG and a minimal WAV, as the conformance reference sends them. */
#define EVERYTHING_PNG_BASE64                                                                      \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJg" \
    "gg=="
#define EVERYTHING_WAV_BASE64 "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

/* The same PNG as raw bytes (what EVERYTHING_PNG_BASE64 decodes to). */
extern const unsigned char everything_png[70];

/*
 * Returns a new server with every tool, resource, template, prompt and the
 * completion handler registered, or NULL after printing the reason to stderr.
 * The caller owns it and frees it with mcp_server_free().
 */
mcp_server *everything_server_new(void);

/*
 * Each registers its part on srv and returns MCP_OK, or the first error of
 * mcp_server_add_* after printing which item failed to stderr. A partial
 * registration is left for the caller to free with the server.
 */
int everything_add_tools(mcp_server *srv);
int everything_add_resources(mcp_server *srv);
int everything_add_prompts(mcp_server *srv);
int everything_set_completion(mcp_server *srv);
/* A text CallToolResult made with printf formatting; NULL on ENOMEM. */
json_t *text_resultf(const char *fmt, ...) MCP_PRINTF(1, 2);

/* Registers n tools, printing which one failed (as the everything_add_* do). */
int everything_register_tools(mcp_server *srv, const mcp_tool_def *defs, size_t n);

/* The app (MCP Apps): the tool app_sum and its view ui://everything/sum.html (app.c). */
int everything_add_app(mcp_server *srv);

/* Revision 2026-07-28's conformance tools and prompt (modern.c). */
int everything_add_modern_tools(mcp_server *srv);
int everything_add_modern_prompts(mcp_server *srv);

/* The tasks extension's conformance tools (tasks.c). */
int everything_add_task_tools(mcp_server *srv);

#endif
