/* SPDX-License-Identifier: MIT */
/*
 * What the server offers (initialize, server/discover): the library's own capabilities
 * as the program chose them (mcp_server_set_caps), the extensions and experimental
 * capabilities it declares; and the request methods it adds (mcp_server_add_method).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/icons.h"
#include "server/server_int.h"

/* The layouts of the first release that has them (a size of 0 stands for these). */
#define CAPS_V1_SIZE (offsetof(mcp_server_caps, list_changed) + sizeof(mcp_cap))
#define METHOD_DEF_V1_SIZE (offsetof(mcp_method_def, name_param) + sizeof(const char *))

/* ---- The library's own capabilities ---- */

int mcp_server_set_caps(mcp_server *srv, const mcp_server_caps *given)
{
    mcp_server_caps caps = {0};
    if (srv == NULL ||
        (given != NULL && mcp__opts_copy(&caps, sizeof(caps), given, CAPS_V1_SIZE) != MCP_OK))
        return MCP_EINVAL;
    if (!mcp__cap_valid(caps.tools) || !mcp__cap_valid(caps.resources) ||
        !mcp__cap_valid(caps.prompts) || !mcp__cap_valid(caps.completions) ||
        !mcp__cap_valid(caps.logging) || !mcp__cap_valid(caps.subscribe) ||
        !mcp__cap_valid(caps.list_changed))
        return MCP_EINVAL;
    caps.size = sizeof(caps);
    uv_mutex_lock(&srv->lock);
    srv->caps = caps;
    atomic_store_explicit(&srv->caps_off,
                          caps.tools == MCP_CAP_OFF || caps.resources == MCP_CAP_OFF ||
                              caps.prompts == MCP_CAP_OFF || caps.completions == MCP_CAP_OFF ||
                              caps.logging == MCP_CAP_OFF || caps.subscribe == MCP_CAP_OFF,
                          memory_order_release);
    uv_mutex_unlock(&srv->lock);
    return MCP_OK;
}

/* Whether a kind with n items is offered (under lock). */
static int kind_offered(mcp_cap c, size_t n)
{
    return c == MCP_CAP_ON || (c == MCP_CAP_AUTO && n > 0);
}

json_t *mcp__server_capabilities(mcp_server *srv, int stateless)
{
    json_t *caps = json_object();
    if (caps == NULL)
        return NULL;
    uv_mutex_lock(&srv->lock);
    const mcp_server_caps *c = &srv->caps;
    int changes = !stateless && c->list_changed != MCP_CAP_OFF;
    int subscribe = !stateless && c->subscribe != MCP_CAP_OFF;
    if (c->logging != MCP_CAP_OFF)
        json_object_set_new(caps, "logging", json_object());
    if (kind_offered(c->tools, srv->tools.len))
        json_object_set_new(caps, "tools",
                            changes ? json_pack("{s:b}", "listChanged", 1) : json_object());
    if (kind_offered(c->resources, srv->resources.len + srv->templates.len)) {
        json_t *r = json_object();
        if (subscribe)
            json_object_set_new(r, "subscribe", json_true());
        if (changes)
            json_object_set_new(r, "listChanged", json_true());
        json_object_set_new(caps, "resources", r);
    }
    if (kind_offered(c->prompts, srv->prompts.len))
        json_object_set_new(caps, "prompts",
                            changes ? json_pack("{s:b}", "listChanged", 1) : json_object());
    if (kind_offered(c->completions, srv->complete_fn != NULL))
        json_object_set_new(caps, "completions", json_object());
    if (srv->extensions != NULL)
        json_object_set(caps, "extensions", srv->extensions);
    if (srv->experimental != NULL)
        json_object_set(caps, "experimental", srv->experimental);
    uv_mutex_unlock(&srv->lock);
    return caps;
}

unsigned mcp__server_declared(mcp_server *srv, int stateless)
{
    uv_mutex_lock(&srv->lock);
    int off = srv->caps.list_changed == MCP_CAP_OFF;
    unsigned declared = (srv->caps.tools != MCP_CAP_OFF ? MCP__CAP_TOOLS : 0) |
                        (srv->caps.resources != MCP_CAP_OFF ? MCP__CAP_RESOURCES : 0) |
                        (srv->caps.prompts != MCP_CAP_OFF ? MCP__CAP_PROMPTS : 0);
    uv_mutex_unlock(&srv->lock);
    return stateless || off ? 0 : declared;
}

static int prefixed(const char *method, const char *prefix)
{
    return strncmp(method, prefix, strlen(prefix)) == 0;
}

int mcp__server_serves(mcp_server *srv, const char *method)
{
    /* Every request asks: without a capability turned off, no lock is taken. */
    if (!atomic_load_explicit(&srv->caps_off, memory_order_acquire))
        return 1;
    uv_mutex_lock(&srv->lock);
    mcp_server_caps c = srv->caps;
    uv_mutex_unlock(&srv->lock);
    if (prefixed(method, "tools/"))
        return c.tools != MCP_CAP_OFF;
    if (strcmp(method, "resources/subscribe") == 0 || strcmp(method, "resources/unsubscribe") == 0)
        return c.resources != MCP_CAP_OFF && c.subscribe != MCP_CAP_OFF;
    if (prefixed(method, "resources/"))
        return c.resources != MCP_CAP_OFF;
    if (prefixed(method, "prompts/"))
        return c.prompts != MCP_CAP_OFF;
    if (strcmp(method, "completion/complete") == 0)
        return c.completions != MCP_CAP_OFF;
    if (strcmp(method, "logging/setLevel") == 0)
        return c.logging != MCP_CAP_OFF;
    return 1;
}

int mcp__server_offers_completions(mcp_server *srv)
{
    uv_mutex_lock(&srv->lock);
    int on = srv->caps.completions == MCP_CAP_ON;
    uv_mutex_unlock(&srv->lock);
    return on;
}

int mcp__server_logs(mcp_server *srv)
{
    uv_mutex_lock(&srv->lock);
    int on = srv->caps.logging != MCP_CAP_OFF;
    uv_mutex_unlock(&srv->lock);
    return on;
}

/* ---- Extensions and experimental capabilities ---- */

static int set_member(mcp_server *srv, json_t **slot, const char *key, const json_t *value,
                      int remove)
{
    uv_mutex_lock(&srv->lock);
    int rc = mcp__members_set(slot, key, value, remove);
    uv_mutex_unlock(&srv->lock);
    return rc;
}

int mcp_server_set_extension(mcp_server *srv, const char *id, const json_t *settings)
{
    if (srv == NULL || !mcp__extension_id_valid(id) ||
        (settings != NULL && !json_is_object(settings)))
        return MCP_EINVAL;
    return set_member(srv, &srv->extensions, id, settings, 0);
}

int mcp_server_remove_extension(mcp_server *srv, const char *id)
{
    if (srv == NULL || id == NULL)
        return MCP_EINVAL;
    return set_member(srv, &srv->extensions, id, NULL, 1);
}

int mcp_server_set_experimental(mcp_server *srv, const char *name, const json_t *settings)
{
    if (srv == NULL || name == NULL || name[0] == '\0' || strlen(name) > 255 ||
        (settings != NULL && !json_is_object(settings)))
        return MCP_EINVAL;
    int rc = set_member(srv, &srv->experimental, name, settings, settings == NULL);
    return rc == MCP_ENOENT ? MCP_OK : rc;
}

/* ---- Methods of one's own ---- */

/* The methods the library answers itself (and their families). */
static int library_method(const char *m)
{
    static const char *const exact[] = {"initialize",          "ping",
                                        "server/discover",     "subscriptions/listen",
                                        "completion/complete", "logging/setLevel"};
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strcmp(m, exact[i]) == 0)
            return 1;
    return prefixed(m, "tools/") || prefixed(m, "resources/") || prefixed(m, "prompts/") ||
           prefixed(m, "notifications/") || prefixed(m, "rpc.");
}

/* Printable ASCII without spaces (it goes into the Mcp-Method header), 1 to 255 bytes. */
static int method_name_valid(const char *m)
{
    size_t n = m != NULL ? strlen(m) : 0;
    if (n == 0 || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)m[i] <= 0x20 || (unsigned char)m[i] >= 0x7f)
            return 0;
    return 1;
}

static void method_free(mcp__method *m)
{
    if (m == NULL)
        return;
    free(m->method);
    free(m->name_param);
    free(m);
}

mcp__method *mcp__find_method(mcp_server *srv, const char *method)
{
    for (size_t i = 0; i < srv->methods.len; i++) {
        mcp__method *m = srv->methods.items[i];
        if (strcmp(m->method, method) == 0)
            return m;
    }
    return NULL;
}

void mcp__methods_free(mcp_server *srv)
{
    for (size_t i = 0; i < srv->methods.len; i++)
        method_free(srv->methods.items[i]);
    free(srv->methods.items);
    json_decref(srv->extensions);
    json_decref(srv->experimental);
}

/* library: the library's own extensions may register under its families
 * (resources/directory/read). */
static int add_method(mcp_server *srv, const mcp_method_def *given, int library)
{
    mcp_method_def def = {0};
    if (srv == NULL || given == NULL ||
        mcp__opts_copy(&def, sizeof(def), given, METHOD_DEF_V1_SIZE) != MCP_OK ||
        !method_name_valid(def.method) || (!library && library_method(def.method)) ||
        def.fn == NULL ||
        (def.name_param != NULL && (def.name_param[0] == '\0' || strlen(def.name_param) > 255)))
        return MCP_EINVAL;
    mcp__method *m = calloc(1, sizeof(*m));
    if (m == NULL || (m->method = mcp__strdup(def.method)) == NULL ||
        (def.name_param != NULL && (m->name_param = mcp__strdup(def.name_param)) == NULL)) {
        method_free(m);
        return MCP_ENOMEM;
    }
    m->fn = def.fn;
    m->user = def.user;
    m->flags = def.flags;
    uv_mutex_lock(&srv->lock);
    int rc =
        mcp__find_method(srv, m->method) != NULL ? MCP_EEXIST : mcp__vec_push(&srv->methods, m);
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK)
        method_free(m);
    return rc;
}

int mcp_server_add_method(mcp_server *srv, const mcp_method_def *def)
{
    if (def != NULL && (def->flags & MCP__TASK_FLAGS))
        return MCP_EINVAL; /* tools only */
    return add_method(srv, def, 0);
}

int mcp__add_library_method(mcp_server *srv, const mcp_method_def *def)
{
    return add_method(srv, def, 1);
}

int mcp_server_remove_method(mcp_server *srv, const char *method)
{
    if (srv == NULL || method == NULL)
        return MCP_EINVAL;
    mcp__method *found = NULL;
    uv_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->methods.len && found == NULL; i++) {
        mcp__method *m = srv->methods.items[i];
        if (strcmp(m->method, method) == 0) {
            found = m;
            memmove(&srv->methods.items[i], &srv->methods.items[i + 1],
                    (srv->methods.len - i - 1) * sizeof(*srv->methods.items));
            srv->methods.len--;
        }
    }
    uv_mutex_unlock(&srv->lock);
    method_free(found);
    return found != NULL ? MCP_OK : MCP_ENOENT;
}
