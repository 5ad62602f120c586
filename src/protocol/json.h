/* SPDX-License-Identifier: MIT */
/*
 * JSON text to jansson values and back, faster than jansson's own codec.
 *
 * jansson stays the data model (json_t is in the public API); only the two ends are
 * ours. Its reader takes every byte through a stream callback and a UTF-8 check and
 * saves it into a string buffer one at a time; its writer formats a pointer and
 * fills a hash table for every object and array it enters, to catch cycles. On the
 * request path (a 300-byte tools/call of revision 2026-07-28 in, its result out)
 * that was a third of the server's CPU.
 *
 * Both functions take and give what jansson's would, byte for byte and value for
 * value: tests/unit/test_json.c and fuzz/fuzz_json.c hold them to it.
 */
#ifndef MCP_PROTOCOL_JSON_H
#define MCP_PROTOCOL_JSON_H

#include <jansson.h>

#include "util/util.h"

/* mcp__json_parse's flags. */
#define MCP__JSON_ANY 1u /* any value at the top, as JSON_DECODE_ANY; else an object or array */

/*
 * Parses len bytes of JSON text as json_loadb(text, len, JSON_DECODE_ANY or 0, err)
 * does: the same value (integers exact in int64, later duplicate keys replacing
 * earlier ones, nesting to JSON_PARSER_MAX_DEPTH), and NULL for the same texts
 * (invalid UTF-8, control characters in strings, \u0000, lone surrogates, integers
 * beyond int64, reals that overflow, trailing bytes), and for every text with a NUL
 * byte (jansson takes one right after a number for the end of its buffer, so "3\0" is
 * 3 to it). On NULL, err (may be NULL) holds a message and the line, column and byte
 * position where the text went wrong. Reals are read in the C locale whatever the
 * host set. The value belongs to the caller.
 */
json_t *mcp__json_parse(const char *text, size_t len, unsigned flags, json_error_t *err);

/*
 * Appends v to b as json_dumpb(v, JSON_COMPACT | JSON_ENCODE_ANY) would write it,
 * without a NUL. MCP_OK, MCP_ENOMEM, or MCP_EINVAL for a value jansson would not
 * write either (a string that is not UTF-8) or one nested deeper than
 * JSON_PARSER_MAX_DEPTH (which a cycle is). On error b may hold part of the text.
 */
int mcp__json_write(mcp__buf *b, const json_t *v);
/* Appends the n bytes at s as a JSON string (quoted, escaped as mcp__json_write
 * escapes). MCP_OK, MCP_ENOMEM, or MCP_EINVAL when they are not UTF-8. */
int mcp__json_write_str(mcp__buf *b, const char *s, size_t n);
/* The same with every object's members in key order: json_dumps(JSON_COMPACT |
 * JSON_SORT_KEYS | JSON_ENCODE_ANY)'s text, byte for byte. */
int mcp__json_write_sorted(mcp__buf *b, const json_t *v);

/* The SHA-256 of v (NULL: null) in a canonical spelling (compact, sorted keys:
 * mcp__json_write_sorted), as 64 hex digits and a NUL: what a sealed requestState binds
 * the arguments by. MCP_OK, MCP_ENOMEM, or MCP_EINVAL for a value that cannot be
 * written. */
int mcp__json_digest_hex(const json_t *v, char out[65]);

#endif
