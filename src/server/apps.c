/* SPDX-License-Identifier: MIT */
/*
 * MCP Apps (SEP-1865, the extension "io.modelcontextprotocol/ui", stable 2026-01-26):
 * no method of its own, only what goes on the core protocol's definitions, as the
 * TypeScript helpers of @modelcontextprotocol/ext-apps write it:
 *
 *   - an app is a resource ui://..., of MIME type text/html;profile=mcp-app, whose
 *     listing and read contents carry _meta.ui (csp, permissions, domain,
 *     prefersBorder: the read's wins for a host);
 *   - a tool is linked to it by _meta.ui.resourceUri (with its visibility, "model"
 *     and/or "app") and by the older flat _meta["ui/resourceUri"] that VS Code reads;
 *   - a host says it renders apps by the extension in its capabilities, with the MIME
 *     type in "mimeTypes"; the server declares the extension too.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

struct mcp__app {
    json_t *item; /* the read's one content, built once (read only: shared by every read) */
    struct mcp__app *next;
};

void mcp__apps_free(struct mcp__app *a)
{
    while (a != NULL) {
        struct mcp__app *next = a->next;
        json_decref(a->item);
        free(a);
        a = next;
    }
}

static json_t *read_app(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)uri, (void)vars;
    /* A result of its own each time: the library adds to a result's top level (revision
     * 2026-07-28's resultType, caching hints), which must not stick to the next one. */
    return json_pack("{s:[O]}", "contents", ((struct mcp__app *)user)->item);
}

/* The JSON object of text (NULL: none), or NULL with *bad set when it is not one. */
static json_t *object_of(const char *text, int *bad)
{
    if (text == NULL)
        return NULL;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        *bad = 1;
        return NULL;
    }
    return v;
}

int mcp_server_add_app(mcp_server *srv, const mcp_app_def *given)
{
    mcp_app_def def = {0};
    if (srv == NULL || given == NULL || mcp__opts_copy(&def, sizeof(def), given, sizeof(def)) ||
        def.uri == NULL || strncmp(def.uri, "ui://", 5) != 0 || def.uri[5] == '\0' ||
        def.name == NULL || def.html == NULL)
        return MCP_EINVAL;
    int bad = 0;
    json_t *ui = object_of(def.ui, &bad);
    json_t *html = json_string(def.html);
    if (bad || html == NULL) { /* not an object, or not UTF-8 */
        json_decref(ui);
        json_decref(html);
        return MCP_EINVAL;
    }
    struct mcp__app *a = calloc(1, sizeof(*a));
    json_t *item =
        json_pack("{s:s, s:s, s:o}", "uri", def.uri, "mimeType", MCP_APPS_MIME_TYPE, "text", html);
    json_t *meta = ui != NULL ? json_pack("{s:O}", "ui", ui) : NULL;
    char *meta_text = meta != NULL ? json_dumps(meta, JSON_COMPACT) : NULL;
    if (item != NULL && meta != NULL)
        json_object_set(item, "_meta", meta);
    if (a != NULL)
        a->item = json_incref(item);
    int rc =
        a != NULL && a->item != NULL && (ui == NULL || meta_text != NULL) ? MCP_OK : MCP_ENOMEM;
    json_decref(item);
    json_decref(meta);
    json_decref(ui);
    if (rc == MCP_OK) {
        mcp_resource_def r = {.struct_size = sizeof(r),
                              .uri = def.uri,
                              .name = def.name,
                              .title = def.title,
                              .description = def.description,
                              .mime_type = MCP_APPS_MIME_TYPE,
                              .size = (long long)strlen(def.html),
                              .fn = read_app,
                              .user = a,
                              .flags = MCP_HANDLER_INLINE,
                              .meta = meta_text,
                              .icons = def.icons};
        rc = mcp_server_add_resource(srv, &r);
    }
    free(meta_text);
    if (rc != MCP_OK) {
        mcp__apps_free(a);
        return rc;
    }
    uv_mutex_lock(&srv->lock);
    a->next = srv->apps;
    srv->apps = a;
    uv_mutex_unlock(&srv->lock);
    return mcp_server_set_extension(srv, MCP_APPS_EXTENSION, NULL);
}

int mcp_server_add_app_tool(mcp_server *srv, const mcp_tool_def *given, const char *resource_uri,
                            unsigned visibility)
{
    mcp_tool_def def = {0};
    if (srv == NULL || given == NULL || mcp__opts_copy(&def, sizeof(def), given, sizeof(def)) ||
        resource_uri == NULL || strncmp(resource_uri, "ui://", 5) != 0 ||
        (visibility & ~(unsigned)(MCP_APP_VISIBLE_MODEL | MCP_APP_VISIBLE_APP)) != 0)
        return MCP_EINVAL;
    int bad = 0;
    json_t *meta = object_of(def.meta, &bad);
    if (bad)
        return MCP_EINVAL;
    if (meta == NULL)
        meta = json_object();
    json_t *ui = json_object_get(meta, "ui");
    if (ui != NULL && !json_is_object(ui)) {
        json_decref(meta);
        return MCP_EINVAL;
    }
    ui = ui != NULL ? json_incref(ui) : json_object();
    json_object_set_new(ui, "resourceUri", json_string(resource_uri));
    if (visibility != 0) {
        json_t *v = json_array();
        if (visibility & MCP_APP_VISIBLE_MODEL)
            json_array_append_new(v, json_string("model"));
        if (visibility & MCP_APP_VISIBLE_APP)
            json_array_append_new(v, json_string("app"));
        json_object_set_new(ui, "visibility", v);
    }
    json_object_set_new(meta, "ui", ui);
    json_object_set_new(meta, MCP_APPS_RESOURCE_URI_KEY, json_string(resource_uri));
    char *text = json_dumps(meta, JSON_COMPACT);
    json_decref(meta);
    if (text == NULL)
        return MCP_ENOMEM;
    def.meta = text;
    int rc = mcp_server_add_tool_def(srv, &def);
    free(text);
    return rc;
}

int mcp_ctx_client_supports_apps(const mcp_ctx *ctx)
{
    const json_t *ext = mcp_ctx_client_extension(ctx, MCP_APPS_EXTENSION);
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(ext, "mimeTypes"), i, m)
    {
        if (json_is_string(m) && strcmp(json_string_value(m), MCP_APPS_MIME_TYPE) == 0)
            return 1;
    }
    return 0;
}
