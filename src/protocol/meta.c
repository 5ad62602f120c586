/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28's request metadata (see meta.h).
 */
#include "protocol/meta.h"

#include <stddef.h>
#include <string.h>

#include <mcp/common.h>

#define KEY(s) s, sizeof(s) - 1

void mcp__meta_read(const json_t *params, mcp__meta *m)
{
    static const struct {
        const char *key;
        size_t len;
        size_t at;
    } keys[] = {
        {KEY(MCP__META_VERSION), offsetof(mcp__meta, version)},
        {KEY(MCP__META_CAPS), offsetof(mcp__meta, caps)},
        {KEY(MCP__META_INFO), offsetof(mcp__meta, info)},
        {KEY(MCP__META_LEVEL), offsetof(mcp__meta, level)},
    };
    memset(m, 0, sizeof(*m));
    json_t *meta = json_object_get(params, "_meta");
    if (!json_is_object(meta))
        return;
    m->is_object = 1;
    for (void *it = json_object_iter(meta); it != NULL; it = json_object_iter_next(meta, it)) {
        const char *k = json_object_iter_key(it);
        size_t n = json_object_iter_key_len(it);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            if (n == keys[i].len && memcmp(k, keys[i].key, n) == 0) {
                *(const json_t **)((char *)m + keys[i].at) = json_object_iter_value(it);
                break;
            }
        }
    }
}

const char *mcp__meta_judge(const mcp__meta *m)
{
    if (!m->is_object)
        return "Invalid params: \"_meta\" with the request's protocol version and client "
               "capabilities is required";
    if (!json_is_string(m->version))
        return "Invalid params: _meta \"" MCP__META_VERSION "\" must be a string";
    if (!json_is_object(m->caps))
        return "Invalid params: _meta \"" MCP__META_CAPS "\" must be an object (the client's "
               "capabilities for this request, {} for none)";
    if (m->info != NULL && !json_is_object(m->info))
        return "Invalid params: _meta \"" MCP__META_INFO "\" must be an object";
    const json_t *level = m->level;
    if (level != NULL && mcp_log_level_parse(json_string_value(level)) < 0)
        return "Invalid params: _meta \"" MCP__META_LEVEL "\" is not a logging level";
    return NULL;
}
