/*
 * Revision 2026-07-28's request metadata (see meta.h).
 */
#include "protocol/meta.h"

#include <mcp/common.h>

const char *mcp__meta_invalid(const json_t *params)
{
    const json_t *meta = json_object_get(params, "_meta");
    if (!json_is_object(meta))
        return "Invalid params: \"_meta\" with the request's protocol version and client "
               "capabilities is required";
    if (!json_is_string(json_object_get(meta, MCP__META_VERSION)))
        return "Invalid params: _meta \"" MCP__META_VERSION "\" must be a string";
    if (!json_is_object(json_object_get(meta, MCP__META_CAPS)))
        return "Invalid params: _meta \"" MCP__META_CAPS "\" must be an object (the client's "
               "capabilities for this request, {} for none)";
    const json_t *info = json_object_get(meta, MCP__META_INFO);
    if (info != NULL && !json_is_object(info))
        return "Invalid params: _meta \"" MCP__META_INFO "\" must be an object";
    const json_t *level = json_object_get(meta, MCP__META_LEVEL);
    if (level != NULL && mcp_log_level_parse(json_string_value(level)) < 0)
        return "Invalid params: _meta \"" MCP__META_LEVEL "\" is not a logging level";
    return NULL;
}
