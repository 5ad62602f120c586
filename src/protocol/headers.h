/* SPDX-License-Identifier: MIT */
/*
 * The request metadata headers of Streamable HTTP in revision 2026-07-28
 * (basic/transports/streamable-http.mdx, "Request Metadata" and "Value
 * Encoding"; server/tools.mdx, "x-mcp-header"): the values of Mcp-Name and
 * Mcp-Param-{Name}, with the Base64 sentinel `=?base64?...?=` for a value that
 * is not plain header-safe ASCII, both ways; and the x-mcp-header annotations of
 * a tool's inputSchema, which name the tool call's arguments that are mirrored
 * into Mcp-Param-{Name} headers. Shared by the server, which checks Mcp-Name and
 * Mcp-Param-* against the body, and the client, which sends them.
 *
 * Pure functions of their arguments: any thread. Nothing here knows HTTP
 * beyond the shape of a header value.
 */
#ifndef MCP_PROTOCOL_HEADERS_H
#define MCP_PROTOCOL_HEADERS_H

#include <stddef.h>

#include <jansson.h>

#include <mcp/common.h>

#include "util/util.h"

/* The sentinel of a Base64-encoded value, case-sensitive. */
#define MCP__HEADER_B64_PREFIX "=?base64?"
#define MCP__HEADER_B64_SUFFIX "?="

/*
 * The header value that carries the len bytes of s (UTF-8 text): s as it is
 * when every byte is visible ASCII (0x21-0x7E) or an inner space, and it does
 * not itself look like the sentinel; else "=?base64?<Base64 of s>?=". The
 * value of the conformance suite's examples: "us-west1" as is, " padded " and
 * "Hello, 世界" and "line1\nline2" and a tab anywhere encoded. Returns a
 * malloc'd string (possibly ""), or NULL on ENOMEM.
 */
char *mcp__header_value_encode(const char *s, size_t len);

/* The largest integer an Mcp-Param header may carry (2^53 - 1, and its negative). */
#define MCP__HEADER_MAX_SAFE_INT 9007199254740991LL

/*
 * The header value of one tool argument (string, integer, boolean; a number
 * with an integral value within the safe range counts as an integer), as
 * mcp__header_value_encode gives it, into *out (malloc'd). MCP_OK; MCP_ENOENT when the
 * value is null (the header is left out); MCP_EINVAL for an integer outside
 * the safe range or a value of another type (an object, an array, a
 * fractional number); MCP_ENOMEM.
 */
int mcp__header_arg_value(const json_t *v, char **out);

/* ---- x-mcp-header annotations ---- */

/* One annotated property: its header name and where its value is in the arguments. */
typedef struct mcp__header_param {
    char *name;   /* the annotation, "Region": the header is Mcp-Param-Region */
    char **path;  /* the chain of property names from the arguments' root */
    size_t depth; /* entries of path, 1 or more */
} mcp__header_param;

/* The annotations of one tool. */
typedef struct mcp__header_tool {
    mcp__header_param *params;
    size_t n;
} mcp__header_tool;

/* Bounds on what a tool's schema may make us keep. */
#define MCP__HEADER_MAX_PARAMS 64 /* annotated properties of one tool */
#define MCP__HEADER_MAX_DEPTH 32  /* properties in a chain */

/*
 * Reads the x-mcp-header annotations of a tool's inputSchema (borrowed) by the
 * rules of server/tools.mdx: each annotation is a non-empty HTTP token
 * (RFC 9110 tchar: no space, colon, control character or non-ASCII byte),
 * unique among the schema's annotations case-insensitively, on a property
 * whose "type" is "string", "integer" or "boolean", reached from the root by a
 * chain of "properties" keys only. An annotation anywhere else in the schema
 * (under items, an applicator such as anyOf or $ref's target in $defs, a
 * conditional) makes the tool invalid.
 *
 * Returns MCP_OK with *out set (NULL when the schema has no annotation: nothing
 * to free); MCP_EINVAL when the tool is invalid, with a sentence saying why in
 * why (why_size bytes, may be 0); MCP_ELIMIT past the bounds above (also with
 * why); MCP_ENOMEM.
 */
int mcp__header_tool_parse(const json_t *input_schema, mcp__header_tool **out, char *why,
                           size_t why_size);
void mcp__header_tool_free(mcp__header_tool *t);

/*
 * The value in args (a tool call's "arguments", borrowed) at p's path, or NULL
 * when absent (the header is then left out). Borrowed from args.
 */
const json_t *mcp__header_param_arg(const mcp__header_param *p, const json_t *args);

/*
 * The reverse of mcp__header_value_encode, by which a server reads a header: the value a header
 * carries: the sentinel decoded (padded Base64 only), or the text as it is. A new NUL-terminated
 * string with its length in *len, or NULL when the value has a byte a header value may not hold
 * (only visible ASCII, space and tab) or the sentinel is not valid Base64 (or out of memory).
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

/* ---- A client's request headers ---- */

/* Tools whose x-mcp-header annotations a client keeps; past it, new ones are not kept
 * (their calls go without Mcp-Param headers, and a HeaderMismatch reads them again). */
#define MCP__HEADER_MAX_TOOLS 10000

/* The x-mcp-header annotations of the tools a client has listed, by tool name. A
 * zeroed struct is empty; one loop thread at a time. */
typedef struct mcp__header_tools {
    mcp__map by_name; /* tool name -> mcp__header_tool */
    int full_warned;
} mcp__header_tools;

/*
 * A tools/list result (modified): each tool's annotations are kept for its calls'
 * Mcp-Param headers (replacing what an earlier list said), and a tool whose annotations
 * are invalid is taken out of the result, with a warning naming it and why
 * (server/tools.mdx: a client of Streamable HTTP MUST exclude it).
 */
void mcp__header_tools_read(mcp__header_tools *ts, json_t *result);
void mcp__header_tools_free(mcp__header_tools *ts);

/*
 * The request metadata headers of a 2026-07-28 message (streamable-http.mdx, "Request
 * Metadata"), each given to add(user, name, value), which returns MCP_OK or an error
 * that stops the walk: MCP-Protocol-Version (version), Mcp-Method, Mcp-Name for
 * tools/call, resources/read and prompts/get (the sentinel when needed) and for the
 * tasks extension's tasks/get, tasks/update and tasks/cancel (their taskId), and a
 * tools/call's Mcp-Param headers from the tool's annotations in ts (an argument with no
 * header form is left out with a warning). MCP_EINVAL when the method or version cannot
 * go into a header (nothing is sent then), or what add returned.
 */
int mcp__header_request(const mcp__header_tools *ts, const json_t *msg, const char *version,
                        int (*add)(void *user, const char *name, const char *value), void *user);

#endif
