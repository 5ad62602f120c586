/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen's filter and tags (see subscriptions.h).
 */
#include <string.h>

#include "protocol/subscriptions.h"

int mcp__listen_wants(unsigned kinds, const json_t *uris, const char *method, const json_t *params)
{
    if (strcmp(method, "notifications/tools/list_changed") == 0)
        return (kinds & MCP__LISTEN_TOOLS) != 0;
    if (strcmp(method, "notifications/prompts/list_changed") == 0)
        return (kinds & MCP__LISTEN_PROMPTS) != 0;
    if (strcmp(method, "notifications/resources/list_changed") == 0)
        return (kinds & MCP__LISTEN_RESOURCES) != 0;
    if (strcmp(method, "notifications/resources/updated") == 0) {
        const char *uri = json_string_value(json_object_get(params, "uri"));
        return uri != NULL && json_object_get(uris, uri) != NULL;
    }
    return 0;
}

json_t *mcp__listen_tagged(const json_t *params, const json_t *id)
{
    json_t *p = json_is_object(params) ? json_deep_copy(params) : json_object();
    if (p == NULL)
        return NULL;
    json_t *meta = json_object_get(p, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(p, "_meta", meta);
    }
    json_object_set(meta, MCP__META_SUBSCRIPTION, (json_t *)id);
    return p;
}
