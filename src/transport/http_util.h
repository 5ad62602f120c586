/* SPDX-License-Identifier: MIT */
/*
 * Small pieces of HTTP the MCP transports need: media types in Accept and
 * Content-Type, Host and Origin checks against DNS rebinding, header values
 * made fit to quote in an error message, and the SSE event format.
 */
#ifndef MCP_TRANSPORT_HTTP_UTIL_H
#define MCP_TRANSPORT_HTTP_UTIL_H

#include "util/util.h"

/*
 * True when the Accept header value lets `type` ("text/event-stream") through:
 * a media range equal to it, or a wildcard range covering it, without q=0.
 */
int mcp__accepts(const char *accept, const char *type);
/* True when a Content-Type value's media type (parameters ignored) is `type`. */
int mcp__media_type_is(const char *content_type, const char *type);

/*
 * Copies the host name of a Host header value ("example.com:8080",
 * "[::1]:3000") into out, lowercased and without the port; IPv6 keeps its
 * brackets. Returns 0, or -1 for a malformed value.
 */
int mcp__host_name(const char *host, char *out, size_t out_len);
/* The same for the host of an Origin value ("http://localhost:3000"). "null" is malformed. */
int mcp__origin_host(const char *origin, char *out, size_t out_len);
/* True for localhost, 127.0.0.1 and [::1]. */
int mcp__is_loopback_name(const char *host_name);

/*
 * Appends one SSE event: optional "event:" and "id:" lines, an optional
 * "retry:" (retry_ms >= 0), and the data (which must hold no newline: our
 * JSON never does), ended by a blank line. With data NULL, writes "data: "
 * so parsers dispatch the event (a priming event).
 */
int mcp__sse_event(mcp__buf *b, const char *event, const char *id, int retry_ms, const char *data,
                   size_t len);

#endif
