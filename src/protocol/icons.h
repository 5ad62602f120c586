/* SPDX-License-Identifier: MIT */
/*
 * What definitions may carry beside their own fields (schema.ts, Icons and _meta):
 * icons, checked as the schema says, and a _meta object; and the optional members of
 * an Implementation (serverInfo, clientInfo). Shared by the server's registry and the
 * client.
 */
#ifndef MCP_PROTOCOL_ICONS_H
#define MCP_PROTOCOL_ICONS_H

#include <jansson.h>

#include <mcp/common.h>

/*
 * icons: JSON text of an array of Icon objects: "src" an http(s) URL or a data: URI
 * (never javascript: or another scheme a consumer could run), "mimeType" a string,
 * "sizes" an array of strings ("48x48" or "any"), "theme" "light" or "dark". *out is
 * the parsed array (NULL when text is NULL). MCP_OK or MCP_EINVAL (with a warning
 * that names what: def, a tool's name, say).
 */
int mcp__icons_parse(const char *text, const char *what, json_t **out);
/* meta: JSON text of an object (a definition's _meta). As above. */
int mcp__meta_parse(const char *text, const char *what, json_t **out);
/*
 * Adds to obj the members a definition may carry besides its own (each when given):
 * "_meta" from meta_text and "icons" from icons_text. MCP_OK, MCP_EINVAL (invalid
 * text: obj untouched), MCP_ENOMEM.
 */
int mcp__add_meta_icons(json_t *obj, const char *meta_text, const char *icons_text,
                        const char *what);
/*
 * Non-zero for an extension identifier: a _meta key with its prefix (basic/index.mdx):
 * dot-separated labels (a letter first, a letter or digit last, hyphens between), '/',
 * then a name that begins and ends with a letter or digit, with '-', '_', '.' between;
 * 255 bytes at most.
 */
int mcp__extension_id_valid(const char *id);
/* Non-zero for a value of mcp_cap. */
int mcp__cap_valid(mcp_cap c);
/*
 * Capabilities' maps (extensions, experimental): *slot, an object that is replaced,
 * never changed (NULL: none), becomes a copy with key set to a deep copy of value ({}
 * when NULL), or with key removed (remove; *slot NULL once empty). The caller holds
 * whatever lock guards *slot. MCP_OK, MCP_ENOENT (removing a key not there), MCP_EINVAL
 * (a key that is not UTF-8), MCP_ENOMEM.
 */
int mcp__members_set(json_t **slot, const char *key, const json_t *value, int remove);
/*
 * An Implementation (serverInfo, clientInfo) from name and version and the optional
 * members of impl (may be NULL): a new object, or NULL (*rc: MCP_EINVAL for an invalid
 * member, MCP_ENOMEM).
 */
json_t *mcp__implementation(const char *name, const char *version, const mcp_implementation *impl,
                            int *rc);

#endif
