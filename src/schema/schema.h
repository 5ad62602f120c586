/* SPDX-License-Identifier: MIT */
/*
 * JSON Schema, as MCP uses it: tools' input and output schemas are checked
 * when they are registered (mcp__schema_valid) and arguments and structured
 * results against them (mcp__schema_check). Knows nothing of MCP: jansson
 * values in, a verdict and a sentence out. check.c checks instances, valid.c
 * schemas; what they share is in schema_int.h.
 */
#ifndef MCP_SCHEMA_SCHEMA_H
#define MCP_SCHEMA_SCHEMA_H

#include <stddef.h>

#include <jansson.h>

/*
 * Checks value against schema with the validation semantics of JSON Schema
 * 2020-12 (draft-07 when the root's $schema names it): every assertion and
 * applicator, $ref within the document (never fetched), unevaluatedProperties
 * and unevaluatedItems; format and the other annotations assert nothing.
 * Returns 0, or -1 with a sentence in why (always NUL-terminated when why_len
 * > 0, cut at a character boundary) that names the failing place as a JSON
 * pointer into value ("/items/2/name: expected a string, got an integer",
 * "(root)" for the value itself). A schema that is malformed where the check
 * goes, a $ref that does not resolve, or a check past the bounds of
 * schema_int.h (nesting, work) also gives -1, with "invalid schema: ..." or
 * "the schema is too complex to check: ...". A NULL schema accepts anything.
 * Thread-safe; allocates only for patterns (compiled once, then for long
 * programs), uniqueItems on more than 16 items, propertyNames, unevaluated*
 * on more than 128 members or items, and $ref to an embedded $id resource.
 */
int mcp__schema_check(const json_t *schema, const json_t *value, char *why, size_t why_len);
/*
 * Checks that schema can be used: an object or a boolean in a supported
 * dialect, each keyword's value of the type the specification gives it, every
 * $ref resolvable within the document, every pattern compilable, within the
 * bounds of schema_int.h, and no $ref cycle that consumes no instance.
 * Returns 0, or -1 with a sentence in why naming the place in the schema.
 */
int mcp__schema_valid(const json_t *schema, char *why, size_t why_len);

#endif
