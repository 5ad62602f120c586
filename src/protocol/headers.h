/*
 * Revision 2026-07-28's request metadata headers (streamable-http.mdx, Value
 * Encoding): values that are not plain header-safe ASCII travel as the Base64
 * sentinel "=?base64?<Base64 of the UTF-8>?=". Shared by the server, which checks
 * Mcp-Name and Mcp-Param-* against the body, and the client, which sends them.
 */
#ifndef MCP_PROTOCOL_HEADERS_H
#define MCP_PROTOCOL_HEADERS_H

#include <stddef.h>

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

#endif
