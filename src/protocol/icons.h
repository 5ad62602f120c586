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
 * An Implementation (serverInfo, clientInfo) from name and version and the optional
 * members of impl (may be NULL): a new object, or NULL (*rc: MCP_EINVAL for an invalid
 * member, MCP_ENOMEM).
 */
json_t *mcp__implementation(const char *name, const char *version, const mcp_implementation *impl,
                            int *rc);

#endif
