/* SPDX-License-Identifier: MIT */
/*
 * The server object: settings, the registry of tools, resources, templates
 * and prompts, and messages to every session.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/icons.h"
#include "schema/schema.h"
#include "server/server_int.h"
#include "server/uri_template.h"

int mcp__vec_push(mcp__vec *v, void *item)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void **items = realloc(v->items, cap * sizeof(*items));
        if (items == NULL)
            return MCP_ENOMEM;
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
    return MCP_OK;
}

static void vec_remove(mcp__vec *v, size_t i)
{
    memmove(&v->items[i], &v->items[i + 1], (v->len - i - 1) * sizeof(*v->items));
    v->len--;
}

mcp_server *mcp_server_new(const char *name, const char *version)
{
    if (name == NULL || version == NULL)
        return NULL;
    mcp_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL)
        return NULL;
    srv->name = mcp__strdup(name);
    srv->version = mcp__strdup(version);
    srv->empty = json_object();
    srv->info = json_pack("{s:s, s:s}", "name", name, "version", version);
    srv->info_meta = mcp__modern_info_meta(srv->info);
    srv->complete = json_string("complete");
    if (srv->name == NULL || srv->version == NULL || srv->empty == NULL || srv->info == NULL ||
        srv->info_meta == NULL || srv->complete == NULL || uv_mutex_init(&srv->lock) != 0)
        goto fail;
    srv->eras = MCP_ERA_LEGACY | MCP_ERA_MODERN;
    if (mcp__mrtr_init(srv) != MCP_OK || (srv->tasks = mcp__tasks_new()) == NULL) {
        uv_mutex_destroy(&srv->lock);
        goto fail;
    }
    srv->page_size = 100;
    srv->workers = 8;
    srv->max_message = 4u << 20;
    uv_once_t once = UV_ONCE_INIT;
    srv->pool_once = once;
    return srv;

fail:
    free(srv->name);
    free(srv->version);
    json_decref(srv->empty);
    json_decref(srv->info);
    json_decref(srv->info_meta);
    json_decref(srv->complete);
    free(srv);
    return NULL;
}

static void tool_free(mcp__tool *t)
{
    free(t->name);
    free(t->scopes);
    json_decref(t->listing);
    json_decref(t->input_schema);
    json_decref(t->output_schema);
    free(t);
}

static void resource_free(mcp__resource *r)
{
    free(r->uri);
    json_decref(r->listing);
    free(r);
}

static void template_free(mcp__template *t)
{
    mcp__uri_template_free(t->compiled);
    free(t->uri_template);
    json_decref(t->listing);
    free(t);
}

static void prompt_free(mcp__prompt *p)
{
    free(p->name);
    json_decref(p->listing);
    json_decref(p->required);
    free(p);
}

void mcp__registry_free(mcp_server *srv)
{
    for (size_t i = 0; i < srv->tools.len; i++)
        tool_free(srv->tools.items[i]);
    for (size_t i = 0; i < srv->resources.len; i++)
        resource_free(srv->resources.items[i]);
    for (size_t i = 0; i < srv->templates.len; i++)
        template_free(srv->templates.items[i]);
    for (size_t i = 0; i < srv->prompts.len; i++)
        prompt_free(srv->prompts.items[i]);
    free(srv->tools.items);
    free(srv->resources.items);
    free(srv->templates.items);
    free(srv->prompts.items);
    mcp__methods_free(srv);
}

void mcp_server_free(mcp_server *srv)
{
    if (srv == NULL)
        return;
    mcp__pool_free(srv->pool); /* waits for handlers still running */
    mcp__pool_free(srv->task_pool);
    mcp__tasks_free(srv->tasks);
    mcp__registry_free(srv);
    mcp__skills_free(srv->skills);
    mcp__apps_free(srv->apps);
    uv_mutex_destroy(&srv->lock);
    free(srv->name);
    free(srv->version);
    free(srv->title);
    free(srv->instructions);
    json_decref(srv->empty);
    json_decref(srv->info);
    json_decref(srv->info_meta);
    json_decref(srv->complete);
    mcp__sealer_clear(&srv->sealer);
    free(srv->used_states);
    free(srv);
}

static int replace_string(char **slot, const char *value)
{
    char *copy = NULL;
    if (value != NULL && (copy = mcp__strdup(value)) == NULL)
        return MCP_ENOMEM;
    free(*slot);
    *slot = copy;
    return MCP_OK;
}

/* Takes info as serverInfo (stolen). */
static int set_info(mcp_server *srv, json_t *info, const char *title)
{
    json_t *info_meta = mcp__modern_info_meta(info);
    int rc = info_meta != NULL ? replace_string(&srv->title, title) : MCP_ENOMEM;
    if (rc != MCP_OK) {
        json_decref(info);
        json_decref(info_meta);
        return rc;
    }
    json_decref(srv->info);
    srv->info = info;
    json_decref(srv->info_meta);
    srv->info_meta = info_meta;
    return MCP_OK;
}

int mcp_server_set_title(mcp_server *srv, const char *title)
{
    if (srv == NULL)
        return MCP_EINVAL;
    /* The other members stay as they are. */
    json_t *info = json_deep_copy(srv->info);
    if (info != NULL && (title != NULL ? json_object_set_new(info, "title", json_string(title))
                                       : (json_object_del(info, "title"), 0)) != 0)
        json_decref(info), info = NULL;
    return set_info(srv, info, title);
}

int mcp_server_set_implementation(mcp_server *srv, const mcp_implementation *impl)
{
    if (srv == NULL)
        return MCP_EINVAL;
    int rc;
    json_t *info = mcp__implementation(srv->name, srv->version, impl, &rc);
    if (info == NULL)
        return rc;
    return set_info(srv, info, json_string_value(json_object_get(info, "title")));
}

int mcp_server_set_instructions(mcp_server *srv, const char *instructions)
{
    return srv == NULL ? MCP_EINVAL : replace_string(&srv->instructions, instructions);
}

int mcp_server_set_page_size(mcp_server *srv, int page_size)
{
    if (srv == NULL || page_size < 1 || page_size > 10000)
        return MCP_EINVAL;
    srv->page_size = page_size;
    return MCP_OK;
}

int mcp_server_set_workers(mcp_server *srv, int workers)
{
    if (srv == NULL || workers < 1 || workers > 256 || srv->pool != NULL)
        return MCP_EINVAL;
    srv->workers = workers;
    return MCP_OK;
}

int mcp_server_set_max_message_size(mcp_server *srv, size_t bytes)
{
    if (srv == NULL || bytes < 1024)
        return MCP_EINVAL;
    srv->max_message = bytes;
    return MCP_OK;
}

int mcp_server_set_completion(mcp_server *srv, mcp_complete_fn fn, void *user)
{
    if (srv == NULL)
        return MCP_EINVAL;
    srv->complete_fn = fn;
    srv->complete_user = user;
    return MCP_OK;
}

int mcp_server_on_notification(mcp_server *srv, mcp_server_notification_fn fn, void *user)
{
    if (srv == NULL)
        return MCP_EINVAL;
    srv->notify_fn = fn;
    srv->notify_user = user;
    return MCP_OK;
}

/* ---- Building listings ---- */

/* Parses a JSON text that must be an object; NULL text gives NULL with MCP_OK. */
static int parse_object(const char *text, json_t **out)
{
    *out = NULL;
    if (text == NULL)
        return MCP_OK;
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!json_is_object(v)) {
        json_decref(v);
        mcp__warn("invalid JSON object in a definition: %s", v ? "not an object" : e.text);
        return MCP_EINVAL;
    }
    *out = v;
    return MCP_OK;
}

/* MCP_EINVAL, with a warning naming the tool, for a schema mcp__schema_valid refuses. */
static int check_schema(const char *tool, const char *which, const json_t *schema)
{
    char why[300];
    if (mcp__schema_valid(schema, why, sizeof(why)) == 0)
        return MCP_OK;
    mcp__warn("tool \"%s\": unusable %s: %s", tool, which, why);
    return MCP_EINVAL;
}

static void set_opt_string(json_t *obj, const char *key, const char *value)
{
    if (value != NULL)
        json_object_set_new(obj, key, json_string(value));
}

mcp__tool *mcp__find_tool(mcp_server *srv, const char *name)
{
    for (size_t i = 0; i < srv->tools.len; i++) {
        mcp__tool *t = srv->tools.items[i];
        if (strcmp(t->name, name) == 0)
            return t;
    }
    return NULL;
}

mcp__resource *mcp__find_resource(mcp_server *srv, const char *uri)
{
    for (size_t i = 0; i < srv->resources.len; i++) {
        mcp__resource *r = srv->resources.items[i];
        if (strcmp(r->uri, uri) == 0)
            return r;
    }
    return NULL;
}

mcp__prompt *mcp__find_prompt(mcp_server *srv, const char *name)
{
    for (size_t i = 0; i < srv->prompts.len; i++) {
        mcp__prompt *p = srv->prompts.items[i];
        if (strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

mcp__template *mcp__match_template(mcp_server *srv, const char *uri, json_t **vars)
{
    for (size_t i = 0; i < srv->templates.len; i++) {
        mcp__template *t = srv->templates.items[i];
        json_t *v = json_object();
        if (v == NULL)
            return NULL;
        /* Linear in the URI's length (uri_template.c), so a long URI cannot hold the
         * loop: the message size limit is its only bound. */
        size_t steps = 0;
        int m = t->compiled != NULL ? mcp__uri_template_match_compiled(t->compiled, uri, v, &steps)
                                    : mcp__uri_template_match(t->uri_template, uri, v, NULL);
        if (m == 1) {
            *vars = v;
            return t;
        }
        json_decref(v);
    }
    return NULL;
}

/* ---- Registration ---- */

/* Reads a caller's definition into copy (size bytes, this release's layout): a program
 * built against an older header leaves the fields it did not know of zero, and one
 * built against a newer header has its extra fields ignored. MCP_EINVAL for NULL or a
 * size shorter than the size field. */
static int read_def(void *copy, size_t size, const void *given)
{
    if (given == NULL)
        return MCP_EINVAL;
    return mcp__opts_copy(copy, size, given, size);
}

int mcp__tool_scopes(mcp_server *srv, const char *tool, char *buf, size_t len)
{
    buf[0] = '\0';
    uv_mutex_lock(&srv->lock);
    mcp__tool *t = tool != NULL ? mcp__find_tool(srv, tool) : NULL;
    int some = t != NULL && t->scopes != NULL && strlen(t->scopes) < len;
    if (some)
        memcpy(buf, t->scopes, strlen(t->scopes) + 1);
    uv_mutex_unlock(&srv->lock);
    return some;
}

int mcp_server_add_tool_def(mcp_server *srv, const mcp_tool_def *given)
{
    mcp_tool_def copy;
    const mcp_tool_def *def = &copy;
    if (srv == NULL || read_def(&copy, sizeof(copy), given) != MCP_OK || def->name == NULL ||
        def->fn == NULL)
        return MCP_EINVAL;
    unsigned task_flags = def->flags & MCP__TASK_FLAGS;
    if (task_flags == MCP__TASK_FLAGS ||
        (task_flags != 0 && (def->flags & (MCP_HANDLER_INLINE | MCP_HANDLER_INLINE_MODERN))))
        return MCP_EINVAL;
    if (task_flags != 0) {
        int rc = mcp__tasks_offer(srv);
        if (rc != MCP_OK)
            return rc;
    }
    mcp__tool *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return MCP_ENOMEM;
    json_t *annotations = NULL;
    int rc = parse_object(def->input_schema, &t->input_schema);
    if (rc == MCP_OK)
        rc = parse_object(def->output_schema, &t->output_schema);
    if (rc == MCP_OK)
        rc = parse_object(def->annotations, &annotations);
    if (rc != MCP_OK)
        goto fail;
    if (t->input_schema == NULL)
        t->input_schema = json_pack("{s:s, s:{}}", "type", "object", "properties");
    if (!json_is_object(t->input_schema)) {
        rc = MCP_EINVAL;
        goto fail;
    }
    /* basic/index, "Schema Validation": schemas MUST be valid in their dialect. A
     * schema we cannot use would fail every call; refuse it here instead. */
    rc = check_schema(def->name, "inputSchema", t->input_schema);
    if (rc == MCP_OK && t->output_schema != NULL)
        rc = check_schema(def->name, "outputSchema", t->output_schema);
    if (rc != MCP_OK)
        goto fail;
    t->name = mcp__strdup(def->name);
    t->listing = json_pack("{s:s, s:O}", "name", def->name, "inputSchema", t->input_schema);
    if (t->name == NULL || t->listing == NULL) {
        rc = MCP_ENOMEM;
        goto fail;
    }
    set_opt_string(t->listing, "title", def->title);
    set_opt_string(t->listing, "description", def->description);
    if (t->output_schema != NULL)
        json_object_set(t->listing, "outputSchema", t->output_schema);
    if (annotations != NULL)
        json_object_set(t->listing, "annotations", annotations);
    rc = mcp__add_meta_icons(t->listing, def->meta, def->icons, def->name);
    if (rc != MCP_OK)
        goto fail;
    t->fn = def->fn;
    t->user = def->user;
    t->flags = def->flags;
    if (def->scopes != NULL && def->scopes[0] != '\0') {
        if (!mcp__scope_list_valid(def->scopes)) {
            rc = MCP_EINVAL;
            goto fail;
        }
        if ((t->scopes = strdup(def->scopes)) == NULL) {
            rc = MCP_ENOMEM;
            goto fail;
        }
    }

    uv_mutex_lock(&srv->lock);
    if (mcp__find_tool(srv, def->name) != NULL)
        rc = MCP_EEXIST;
    else
        rc = mcp__vec_push(&srv->tools, t);
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK)
        goto fail;
    json_decref(annotations);
    mcp__broadcast(srv, "notifications/tools/list_changed", NULL, NULL, -1);
    return MCP_OK;
fail:
    json_decref(annotations);
    tool_free(t);
    return rc;
}

int mcp_server_add_tool(mcp_server *srv, const char *name, const char *description,
                        const char *input_schema, mcp_tool_fn fn, void *user)
{
    mcp_tool_def def = {.name = name,
                        .description = description,
                        .input_schema = input_schema,
                        .fn = fn,
                        .user = user};
    return mcp_server_add_tool_def(srv, &def);
}

int mcp_server_remove_tool(mcp_server *srv, const char *name)
{
    if (srv == NULL || name == NULL)
        return MCP_EINVAL;
    mcp__tool *found = NULL;
    uv_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->tools.len; i++) {
        mcp__tool *t = srv->tools.items[i];
        if (strcmp(t->name, name) == 0) {
            found = t;
            vec_remove(&srv->tools, i);
            break;
        }
    }
    uv_mutex_unlock(&srv->lock);
    if (found == NULL)
        return MCP_ENOENT;
    tool_free(found);
    mcp__broadcast(srv, "notifications/tools/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

/* The fields resources and templates share. */
static json_t *resource_listing(const char *key, const char *uri, const char *name,
                                const char *title, const char *description, const char *mime,
                                const char *annotations_text, const char *meta, const char *icons)
{
    json_t *annotations = NULL;
    if (parse_object(annotations_text, &annotations) != MCP_OK)
        return NULL;
    json_t *l = json_pack("{s:s, s:s}", key, uri, "name", name);
    if (l == NULL) {
        json_decref(annotations);
        return NULL;
    }
    set_opt_string(l, "title", title);
    set_opt_string(l, "description", description);
    set_opt_string(l, "mimeType", mime);
    if (annotations != NULL)
        json_object_set_new(l, "annotations", annotations);
    if (mcp__add_meta_icons(l, meta, icons, name) != MCP_OK) {
        json_decref(l);
        return NULL;
    }
    return l;
}

int mcp_server_add_resource(mcp_server *srv, const mcp_resource_def *given)
{
    mcp_resource_def copy;
    const mcp_resource_def *def = &copy;
    if (srv == NULL || read_def(&copy, sizeof(copy), given) != MCP_OK || def->uri == NULL ||
        def->name == NULL || def->fn == NULL || (def->flags & MCP__TASK_FLAGS))
        return MCP_EINVAL;
    mcp__resource *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return MCP_ENOMEM;
    r->uri = mcp__strdup(def->uri);
    r->listing = resource_listing("uri", def->uri, def->name, def->title, def->description,
                                  def->mime_type, def->annotations, def->meta, def->icons);
    if (r->uri == NULL || r->listing == NULL) {
        resource_free(r);
        return MCP_EINVAL;
    }
    if (def->size > 0)
        json_object_set_new(r->listing, "size", json_integer(def->size));
    r->fn = def->fn;
    r->user = def->user;
    r->flags = def->flags;
    uv_mutex_lock(&srv->lock);
    int rc =
        mcp__find_resource(srv, def->uri) != NULL ? MCP_EEXIST : mcp__vec_push(&srv->resources, r);
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK) {
        resource_free(r);
        return rc;
    }
    mcp__broadcast(srv, "notifications/resources/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

int mcp_server_remove_resource(mcp_server *srv, const char *uri)
{
    if (srv == NULL || uri == NULL)
        return MCP_EINVAL;
    mcp__resource *found = NULL;
    uv_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->resources.len; i++) {
        mcp__resource *r = srv->resources.items[i];
        if (strcmp(r->uri, uri) == 0) {
            found = r;
            vec_remove(&srv->resources, i);
            break;
        }
    }
    uv_mutex_unlock(&srv->lock);
    if (found == NULL)
        return MCP_ENOENT;
    resource_free(found);
    mcp__broadcast(srv, "notifications/resources/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

int mcp_server_remove_resource_template(mcp_server *srv, const char *uri_template)
{
    if (srv == NULL || uri_template == NULL)
        return MCP_EINVAL;
    mcp__template *found = NULL;
    uv_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->templates.len && found == NULL; i++) {
        mcp__template *t = srv->templates.items[i];
        if (strcmp(t->uri_template, uri_template) == 0) {
            found = t;
            vec_remove(&srv->templates, i);
        }
    }
    uv_mutex_unlock(&srv->lock);
    if (found == NULL)
        return MCP_ENOENT;
    template_free(found);
    mcp__broadcast(srv, "notifications/resources/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

int mcp_server_add_resource_template(mcp_server *srv, const mcp_resource_template_def *given)
{
    mcp_resource_template_def copy;
    const mcp_resource_template_def *def = &copy;
    if (srv == NULL || read_def(&copy, sizeof(copy), given) != MCP_OK ||
        def->uri_template == NULL || def->name == NULL || def->fn == NULL ||
        (def->flags & MCP__TASK_FLAGS) || !mcp__uri_template_valid(def->uri_template))
        return MCP_EINVAL;
    mcp__template *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return MCP_ENOMEM;
    t->uri_template = mcp__strdup(def->uri_template);
    t->listing =
        resource_listing("uriTemplate", def->uri_template, def->name, def->title, def->description,
                         def->mime_type, def->annotations, def->meta, def->icons);
    if (t->uri_template != NULL && mcp__uri_template_has_ops(t->uri_template))
        t->compiled = mcp__uri_template_compile(t->uri_template);
    if (t->uri_template == NULL || t->listing == NULL ||
        (t->compiled == NULL && mcp__uri_template_has_ops(t->uri_template))) {
        template_free(t);
        return MCP_EINVAL;
    }
    t->fn = def->fn;
    t->user = def->user;
    t->flags = def->flags;
    uv_mutex_lock(&srv->lock);
    int rc = MCP_OK;
    for (size_t i = 0; i < srv->templates.len && rc == MCP_OK; i++)
        if (strcmp(((mcp__template *)srv->templates.items[i])->uri_template, def->uri_template) ==
            0)
            rc = MCP_EEXIST;
    if (rc == MCP_OK)
        rc = mcp__vec_push(&srv->templates, t);
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK) {
        template_free(t);
        return rc;
    }
    mcp__broadcast(srv, "notifications/resources/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

int mcp_server_add_prompt(mcp_server *srv, const mcp_prompt_def *given)
{
    mcp_prompt_def copy;
    const mcp_prompt_def *def = &copy;
    if (srv == NULL || read_def(&copy, sizeof(copy), given) != MCP_OK || def->name == NULL ||
        def->fn == NULL || (def->flags & MCP__TASK_FLAGS))
        return MCP_EINVAL;
    mcp__prompt *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return MCP_ENOMEM;
    p->name = mcp__strdup(def->name);
    p->listing = json_pack("{s:s}", "name", def->name);
    p->required = json_array();
    json_t *args = json_array();
    if (p->name == NULL || p->listing == NULL || p->required == NULL || args == NULL) {
        json_decref(args);
        prompt_free(p);
        return MCP_ENOMEM;
    }
    set_opt_string(p->listing, "title", def->title);
    set_opt_string(p->listing, "description", def->description);
    for (const mcp_prompt_arg *a = def->args; a != NULL && a->name != NULL; a++) {
        json_t *arg = json_pack("{s:s}", "name", a->name);
        if (arg == NULL)
            continue;
        set_opt_string(arg, "title", a->title);
        set_opt_string(arg, "description", a->description);
        json_object_set_new(arg, "required", json_boolean(a->required));
        json_array_append_new(args, arg);
        if (a->required)
            json_array_append_new(p->required, json_string(a->name));
    }
    json_object_set_new(p->listing, "arguments", args);
    int arc = mcp__add_meta_icons(p->listing, def->meta, def->icons, def->name);
    if (arc != MCP_OK) {
        prompt_free(p);
        return arc;
    }
    p->fn = def->fn;
    p->user = def->user;
    p->flags = def->flags;
    uv_mutex_lock(&srv->lock);
    int rc =
        mcp__find_prompt(srv, def->name) != NULL ? MCP_EEXIST : mcp__vec_push(&srv->prompts, p);
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK) {
        prompt_free(p);
        return rc;
    }
    mcp__broadcast(srv, "notifications/prompts/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

int mcp_server_remove_prompt(mcp_server *srv, const char *name)
{
    if (srv == NULL || name == NULL)
        return MCP_EINVAL;
    mcp__prompt *found = NULL;
    uv_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->prompts.len; i++) {
        mcp__prompt *p = srv->prompts.items[i];
        if (strcmp(p->name, name) == 0) {
            found = p;
            vec_remove(&srv->prompts, i);
            break;
        }
    }
    uv_mutex_unlock(&srv->lock);
    if (found == NULL)
        return MCP_ENOENT;
    prompt_free(found);
    mcp__broadcast(srv, "notifications/prompts/list_changed", NULL, NULL, -1);
    return MCP_OK;
}

/* ---- Messages to every session ---- */

typedef struct broadcast_mail {
    mcp__mail mail;
    mcp__srt *rt;
    char *method;
    json_t *params;
    char *filter_uri;
    int level;
    char *session; /* only this session's (NULL: every session's) */
} broadcast_mail;

/* Delivers a server-wide notification to rt's sessions; remote: another node raised it. */
static void deliver(mcp__srt *rt, const char *method, const json_t *params, const char *filter_uri,
                    int level, int remote, const char *session)
{
    for (mcp__session *s = rt->sessions; s != NULL; s = s->next) {
        if (s->closed || (session != NULL && (s->id == NULL || strcmp(s->id, session) != 0)))
            continue;
        if (s->listens != NULL && level < 0 && session == NULL) /* logs: never a subscription's */
            mcp__listen_deliver(s, method, params);
        if (!s->initialized)
            continue;
        /* A session shared with other nodes gets it once: from the node of its standalone
         * stream, or, with none, from the node it was raised on. */
        int here = s->io != NULL && s->io->here != NULL ? s->io->here(s->io_user) : MCP__HERE_OWNER;
        if (here == MCP__HERE_ELSEWHERE || (remote && here != MCP__HERE_OWNER))
            continue;
        if (filter_uri != NULL && json_object_get(s->subscriptions, filter_uri) == NULL)
            continue;
        if (level >= 0 && level < (int)s->level)
            continue;
        /* The spec: list_changed only where initialize declared listChanged. */
        if ((strcmp(method, "notifications/tools/list_changed") == 0 &&
             !(s->declared & MCP__CAP_TOOLS)) ||
            (strcmp(method, "notifications/resources/list_changed") == 0 &&
             !(s->declared & MCP__CAP_RESOURCES)) ||
            (strcmp(method, "notifications/prompts/list_changed") == 0 &&
             !(s->declared & MCP__CAP_PROMPTS)))
            continue;
        mcp__session_notify(s, method, json_incref((json_t *)params));
    }
}

void mcp__broadcast_remote(mcp__srt *rt, const char *method, const json_t *params,
                           const char *filter_uri, int level, const char *session)
{
    deliver(rt, method, params, filter_uri, level, 1, session);
}

static void broadcast_run(mcp__mail *m)
{
    broadcast_mail *b = (broadcast_mail *)m;
    if (b->rt->fanout != NULL)
        b->rt->fanout(b->rt->fanout_user, b->method, b->params, b->filter_uri, b->level,
                      b->session);
    deliver(b->rt, b->method, b->params, b->filter_uri, b->level, 0, b->session);
    free(b->method);
    free(b->filter_uri);
    free(b->session);
    json_decref(b->params);
    free(b);
}

static int broadcast(mcp_server *srv, const char *method, json_t *params, const char *filter_uri,
                     int level, const char *session)
{
    int rc = MCP_OK;
    uv_mutex_lock(&srv->lock);
    for (mcp__srt *rt = srv->runtimes; rt != NULL; rt = rt->next) {
        broadcast_mail *b = calloc(1, sizeof(*b));
        if (b == NULL) {
            rc = MCP_ENOMEM;
            break;
        }
        b->mail.fn = broadcast_run;
        b->rt = rt;
        b->method = mcp__strdup(method);
        b->params = json_incref(params);
        b->filter_uri = mcp__strdup(filter_uri);
        b->level = level;
        b->session = mcp__strdup(session);
        /* Out of memory: a copy missing would send to the wrong sessions, or crash. */
        int copied = b->method != NULL && (filter_uri == NULL || b->filter_uri != NULL) &&
                     (session == NULL || b->session != NULL);
        if (!copied)
            rc = MCP_ENOMEM;
        if (!copied || mcp__mailbox_post(&rt->mb, &b->mail) != MCP_OK) {
            free(b->method);
            free(b->filter_uri);
            free(b->session);
            json_decref(b->params);
            free(b);
        }
    }
    uv_mutex_unlock(&srv->lock);
    json_decref(params);
    return rc;
}

int mcp__broadcast(mcp_server *srv, const char *method, json_t *params, const char *filter_uri,
                   int level)
{
    return broadcast(srv, method, params, filter_uri, level, NULL);
}

int mcp_server_notify_session(mcp_server *srv, const char *session_id, const char *method,
                              json_t *params)
{
    if (srv == NULL || session_id == NULL || method == NULL) {
        json_decref(params);
        return MCP_EINVAL;
    }
    return broadcast(srv, method, params, NULL, -1, session_id);
}

int mcp_server_notify_resource_updated(mcp_server *srv, const char *uri)
{
    if (srv == NULL || uri == NULL)
        return MCP_EINVAL;
    return mcp__broadcast(srv, "notifications/resources/updated", json_pack("{s:s}", "uri", uri),
                          uri, -1);
}

int mcp_server_log(mcp_server *srv, mcp_log_level level, const char *logger, json_t *data)
{
    const char *name = mcp_log_level_name(level);
    if (srv == NULL || name == NULL) {
        json_decref(data);
        return MCP_EINVAL;
    }
    if (!mcp__server_logs(srv)) {
        json_decref(data);
        return MCP_OK; /* the logging capability is off */
    }
    json_t *params = json_pack("{s:s, s:o}", "level", name, "data", data ? data : json_null());
    if (params != NULL && logger != NULL)
        json_object_set_new(params, "logger", json_string(logger));
    return mcp__broadcast(srv, "notifications/message", params, NULL, (int)level);
}

int mcp_server_notify(mcp_server *srv, const char *method, json_t *params)
{
    if (srv == NULL || method == NULL) {
        json_decref(params);
        return MCP_EINVAL;
    }
    return mcp__broadcast(srv, method, params, NULL, -1);
}

/* ---- Runtimes ---- */

mcp__srt *mcp__srt_new(mcp_server *srv, uv_loop_t *loop)
{
    mcp__srt *rt = calloc(1, sizeof(*rt));
    if (rt == NULL)
        return NULL;
    rt->srv = srv;
    rt->loop = loop;
    rt->loop_thread = uv_thread_self();
    if (mcp__mailbox_init(&rt->mb, loop) != MCP_OK) {
        free(rt);
        return NULL;
    }
    rt->mb.async.data = rt;
    uv_mutex_lock(&srv->lock);
    rt->next = srv->runtimes;
    srv->runtimes = rt;
    uv_mutex_unlock(&srv->lock);
    return rt;
}

static void srt_mailbox_closed(mcp__mailbox *mb)
{
    mcp__srt *rt = mb->async.data;
    void (*cb)(void *) = rt->closed_cb;
    void *arg = rt->closed_arg;
    free(rt);
    if (cb != NULL)
        cb(arg);
}

void mcp__srt_close(mcp__srt *rt)
{
    mcp_server *srv = rt->srv;
    uv_mutex_lock(&srv->lock);
    for (mcp__srt **p = &srv->runtimes; *p != NULL; p = &(*p)->next) {
        if (*p == rt) {
            *p = rt->next;
            break;
        }
    }
    uv_mutex_unlock(&srv->lock);
    mcp__mailbox_close(&rt->mb, srt_mailbox_closed);
}

int mcp__srt_busy(const mcp__srt *rt)
{
    return rt->sessions != NULL;
}

int mcp__srt_on_loop(const mcp__srt *rt)
{
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, &rt->loop_thread);
}
