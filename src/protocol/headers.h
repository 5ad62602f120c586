/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28's request metadata headers (streamable-http.mdx, Value
 * Encoding): values that are not plain header-safe ASCII travel as the Base64
 * sentinel "=?base64?<Base64 of the UTF-8>?=". Shared by the server, which checks
 * Mcp-Name and Mcp-Param-* against the body, and the client, which sends them.
 */
#ifndef MCP_PROTOCOL_HEADERS_H
#define MCP_PROTOCOL_HEADERS_H

#include <stddef.h>

#include <jansson.h>

/*
 * The value a header carries: the sentinel decoded (padded Base64 only), or the text as
 * it is. A new NUL-terminated string with its length in *len, or NULL when the value has
 * a byte a header value may not hold (only visible ASCII, space and tab) or the sentinel
 * is not valid Base64 (or out of memory).
 */
char *mcp__header_value_decode(const char *value, size_t *len);

/* Whether header value carries exactly the n bytes at s, as decoded above (a value that
 * cannot be decoded carries nothing); without allocating for a plain value. */
int mcp__header_value_is(const char *value, const char *s, size_t n);

/*
 * streamable-http.mdx, Server Behavior for Custom Headers: every parameter a tool's
 * inputSchema marks with x-mcp-header (at the end of a chain of "properties") and that
 * has a value in args (NULL: none) must come as the request header Mcp-Param-{name},
 * equal after decoding; such a header, when it comes, must be a valid header value even
 * where its parameter has no value. get(user, name) gives a request header by its
 * lower-case name, or NULL. 0, or -1 with the HeaderMismatch message in why (n bytes).
 */
int mcp__param_headers_check(const json_t *schema, const json_t *args,
                             const char *(*get)(void *user, const char *name), void *user,
                             char *why, size_t n);

#endif
