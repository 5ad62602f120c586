/* SPDX-License-Identifier: MIT */
/*
 * The YAML frontmatter of a skill's SKILL.md (SEP-2640), read as JSON (frontmatter.c).
 */
#ifndef MCP_PROTOCOL_FRONTMATTER_H
#define MCP_PROTOCOL_FRONTMATTER_H

#include <stddef.h>

#include <jansson.h>

/*
 * The frontmatter of text (len bytes of UTF-8: a SKILL.md) as a JSON object, or NULL
 * with a sentence in why (why_size bytes) saying where and what was refused. Only a
 * conservative subset of YAML is read (see frontmatter.c); whatever is outside it is
 * refused rather than read differently from other SDKs.
 */
json_t *mcp__frontmatter_parse(const char *text, size_t len, char *why, size_t why_size);

#endif
