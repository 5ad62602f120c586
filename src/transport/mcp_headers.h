/* SPDX-License-Identifier: MIT */
/*
 * The request metadata headers of Streamable HTTP in revision 2026-07-28
 * (basic/transports/streamable-http.mdx, "Request Metadata"; server/tools.mdx,
 * "x-mcp-header"): the values of Mcp-Name and Mcp-Param-{Name}, with the Base64
 * sentinel `=?base64?...?=` for a value that is not plain header-safe ASCII, and
 * the x-mcp-header annotations of a tool's inputSchema, which name the tool
 * call's arguments that are mirrored into Mcp-Param-{Name} headers.
 *
 * Pure functions of their arguments: any thread. Nothing here knows HTTP
 * beyond the shape of a header value.
 */
#ifndef MCP_TRANSPORT_MCP_HEADERS_H
#define MCP_TRANSPORT_MCP_HEADERS_H

#include <stddef.h>

#include <mcp/common.h>

/* The sentinel of a Base64-encoded value, case-sensitive. */
#define MCP__MH_B64_PREFIX "=?base64?"
#define MCP__MH_B64_SUFFIX "?="

/*
 * The header value that carries the len bytes of s (UTF-8 text): s as it is
 * when every byte is visible ASCII (0x21-0x7E) or an inner space, and it does
 * not itself look like the sentinel; else "=?base64?<Base64 of s>?=". The
 * value of the conformance suite's examples: "us-west1" as is, " padded " and
 * "Hello, 世界" and "line1\nline2" and a tab anywhere encoded. Returns a
 * malloc'd string (possibly ""), or NULL on ENOMEM.
 */
char *mcp__mh_encode(const char *s, size_t len);

/*
 * The reverse, for servers and tests: the text a header value carries (the
 * decoded bytes of a sentinel value, else the value itself) as a malloc'd
 * string with its length in *out_len. NULL for a sentinel whose Base64 is
 * invalid, or on ENOMEM.
 */
char *mcp__mh_decode(const char *value, size_t *out_len);

/* The largest integer an Mcp-Param header may carry (2^53 - 1, and its negative). */
#define MCP__MH_MAX_SAFE_INT 9007199254740991LL

/*
 * The header value of one tool argument (string, integer, boolean; a number
 * with an integral value within the safe range counts as an integer), as
 * mcp__mh_encode gives it, into *out (malloc'd). MCP_OK; MCP_ENOENT when the
 * value is null (the header is left out); MCP_EINVAL for an integer outside
 * the safe range or a value of another type (an object, an array, a
 * fractional number); MCP_ENOMEM.
 */
int mcp__mh_value(const json_t *v, char **out);

/* ---- x-mcp-header annotations ---- */

/* One annotated property: its header name and where its value is in the arguments. */
typedef struct mcp__mh_param {
    char *name;   /* the annotation, "Region": the header is Mcp-Param-Region */
    char **path;  /* the chain of property names from the arguments' root */
    size_t depth; /* entries of path, 1 or more */
} mcp__mh_param;

/* The annotations of one tool. */
typedef struct mcp__mh_tool {
    mcp__mh_param *params;
    size_t n;
} mcp__mh_tool;

/* Bounds on what a tool's schema may make us keep. */
#define MCP__MH_MAX_PARAMS 64 /* annotated properties of one tool */
#define MCP__MH_MAX_DEPTH 32  /* properties in a chain */

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
int mcp__mh_tool_parse(const json_t *input_schema, mcp__mh_tool **out, char *why, size_t why_size);
void mcp__mh_tool_free(mcp__mh_tool *t);

/*
 * The value in args (a tool call's "arguments", borrowed) at p's path, or NULL
 * when absent (the header is then left out). Borrowed from args.
 */
const json_t *mcp__mh_param_arg(const mcp__mh_param *p, const json_t *args);

#endif
