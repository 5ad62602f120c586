/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the resources and the resource template
 * (reference/conformance.md section 5.3).
 *
 * Subscriptions (resources/subscribe and unsubscribe) are kept by the
 * library; the trigger_resource_update tool sends the updates.
 */
#include "everything.h"
#include "log_flag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *read_static_text(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return mcp_resource_text(uri, "text/plain", "This is the content of the static text resource.");
}

static json_t *read_static_binary(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    /* The raw bytes go through the library's encoder; the blob equals EVERYTHING_PNG_BASE64. */
    return mcp_resource_blob(uri, "image/png", everything_png, sizeof everything_png);
}

static json_t *read_watched(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return mcp_resource_text(uri, "text/plain", "Watched resource content");
}

/* test://template/{id}/data: a JSON text that names the id it was read with. */
static json_t *read_template(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)user;
    const char *id = json_string_value(json_object_get(vars, "id"));
    if (!id) {
        /* The library matched the template, so this is our own invariant failing. */
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "template variable 'id' is missing");
        return NULL;
    }

    /* Allocated rather than truncated: a cut could split a UTF-8 sequence. */
    size_t size = strlen(id) + sizeof "Data for ID: ";
    char *data = malloc(size);
    if (!data)
        return NULL;
    snprintf(data, size, "Data for ID: %s", id);
    json_t *doc = json_pack("{s:s,s:b,s:s}", "id", id, "templateTest", 1, "data", data);
    free(data);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    json_t *result = text ? mcp_resource_text(uri, "application/json", text) : NULL;
    free(text);
    return result;
}

static const mcp_resource_def resources[] = {
    {.uri = "test://static-text",
     .name = "static-text",
     .title = "Static Text Resource",
     .description = "A static text resource for testing",
     .mime_type = "text/plain",
     .fn = read_static_text,
     .flags = MCP_HANDLER_INLINE},
    {.uri = "test://static-binary",
     .name = "static-binary",
     .title = "Static Binary Resource",
     .description = "A static binary resource (image) for testing",
     .mime_type = "image/png",
     .size = (long long)sizeof everything_png,
     .fn = read_static_binary,
     .flags = MCP_HANDLER_INLINE},
    {.uri = "test://watched-resource",
     .name = "watched-resource",
     .title = "Watched Resource",
     .description = "A resource to subscribe to; the trigger_resource_update tool announces "
                    "updates of it",
     .mime_type = "text/plain",
     .fn = read_watched,
     .flags = MCP_HANDLER_INLINE},
};

static const mcp_resource_template_def templates[] = {
    {.uri_template = "test://template/{id}/data",
     .name = "template",
     .title = "Resource Template",
     .description = "A resource template with parameter substitution",
     .mime_type = "application/json",
     .fn = read_template,
     .flags = MCP_HANDLER_INLINE},
};

int everything_add_resources(mcp_server *srv)
{
    for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++) {
        int rc = mcp_server_add_resource(srv, &resources[i]);
        if (rc != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot register the resource %s: %s",
                     resources[i].uri, mcp_strerror(rc));
            return rc;
        }
    }
    for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++) {
        int rc = mcp_server_add_resource_template(srv, &templates[i]);
        if (rc != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot register the resource template %s: %s",
                     templates[i].uri_template, mcp_strerror(rc));
            return rc;
        }
    }
    return MCP_OK;
}
