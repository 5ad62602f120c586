/* SPDX-License-Identifier: MIT */
/*
 * Icons, _meta and the optional members of an Implementation (see icons.h).
 */
#include <string.h>
#include <strings.h>

#include "protocol/icons.h"
#include "util/util.h"

/* 1 when src may be fetched or shown by a consumer: http(s), or data: (base64). */
static int icon_src_ok(const char *src)
{
    return strncasecmp(src, "https://", 8) == 0 || strncasecmp(src, "http://", 7) == 0 ||
           strncasecmp(src, "data:", 5) == 0;
}

static int icon_ok(const json_t *icon, const char **why)
{
    const char *src = json_string_value(json_object_get(icon, "src"));
    const json_t *mime = json_object_get(icon, "mimeType");
    const json_t *sizes = json_object_get(icon, "sizes");
    const json_t *theme = json_object_get(icon, "theme");
    if (!json_is_object(icon))
        return *why = "an icon is not an object", 0;
    if (src == NULL || src[0] == '\0')
        return *why = "an icon has no \"src\"", 0;
    if (!icon_src_ok(src))
        return *why = "an icon's \"src\" is neither an http(s) URL nor a data: URI", 0;
    if (mime != NULL && !json_is_string(mime))
        return *why = "an icon's \"mimeType\" is not a string", 0;
    if (sizes != NULL) {
        size_t i;
        const json_t *s;
        if (!json_is_array(sizes))
            return *why = "an icon's \"sizes\" is not an array", 0;
        json_array_foreach(sizes, i, s) if (!json_is_string(s)) return *why =
            "an icon's \"sizes\" holds something else than strings",
                                                                       0;
    }
    if (theme != NULL &&
        (!json_is_string(theme) || (strcmp(json_string_value(theme), "light") != 0 &&
                                    strcmp(json_string_value(theme), "dark") != 0)))
        return *why = "an icon's \"theme\" is neither \"light\" nor \"dark\"", 0;
    return 1;
}

int mcp__icons_parse(const char *text, const char *what, json_t **out)
{
    *out = NULL;
    if (text == NULL)
        return MCP_OK;
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    const char *why = v == NULL ? e.text : !json_is_array(v) ? "icons is not an array" : NULL;
    size_t i;
    json_t *icon;
    json_array_foreach(v, i, icon) if (why == NULL && !icon_ok(icon, &why)) break;
    if (why != NULL) {
        mcp__warn("invalid icons of %s: %s", what, why);
        json_decref(v);
        return MCP_EINVAL;
    }
    *out = v;
    return MCP_OK;
}

int mcp__meta_parse(const char *text, const char *what, json_t **out)
{
    *out = NULL;
    if (text == NULL)
        return MCP_OK;
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!json_is_object(v)) {
        mcp__warn("invalid _meta of %s: %s", what, v != NULL ? "not an object" : e.text);
        json_decref(v);
        return MCP_EINVAL;
    }
    *out = v;
    return MCP_OK;
}

int mcp__add_meta_icons(json_t *obj, const char *meta_text, const char *icons_text,
                        const char *what)
{
    json_t *meta = NULL, *icons = NULL;
    int rc = mcp__meta_parse(meta_text, what, &meta);
    if (rc == MCP_OK)
        rc = mcp__icons_parse(icons_text, what, &icons);
    if (rc == MCP_OK && ((meta != NULL && json_object_set(obj, "_meta", meta) != 0) ||
                         (icons != NULL && json_object_set(obj, "icons", icons) != 0)))
        rc = MCP_ENOMEM;
    json_decref(meta);
    json_decref(icons);
    return rc;
}

json_t *mcp__implementation(const char *name, const char *version, const mcp_implementation *given,
                            int *rc)
{
    mcp_implementation impl;
    *rc = mcp__opts_copy(&impl, sizeof(impl), given, sizeof(impl));
    if (*rc != MCP_OK)
        return NULL;
    json_t *info = json_pack("{s:s, s:s}", "name", name, "version", version);
    if (info == NULL) {
        *rc = MCP_ENOMEM;
        return NULL;
    }
    const char *url = impl.website_url;
    if (url != NULL && strncasecmp(url, "https://", 8) != 0 &&
        strncasecmp(url, "http://", 7) != 0) {
        mcp__warn("invalid websiteUrl of %s: not an http(s) URL", name);
        *rc = MCP_EINVAL;
    }
    if (*rc == MCP_OK &&
        ((impl.title != NULL && json_object_set_new(info, "title", json_string(impl.title)) != 0) ||
         (impl.description != NULL &&
          json_object_set_new(info, "description", json_string(impl.description)) != 0) ||
         (url != NULL && json_object_set_new(info, "websiteUrl", json_string(url)) != 0)))
        *rc = MCP_ENOMEM;
    if (*rc == MCP_OK)
        *rc = mcp__add_meta_icons(info, NULL, impl.icons, name);
    if (*rc != MCP_OK) {
        json_decref(info);
        return NULL;
    }
    return info;
}

int mcp__members_set(json_t **slot, const char *key, const json_t *value, int remove)
{
    json_t *probe = json_string(key); /* a key is UTF-8 */
    if (probe == NULL)
        return MCP_EINVAL;
    json_decref(probe);
    json_t *next = *slot != NULL ? json_copy(*slot) : json_object();
    json_t *copy = remove ? NULL : value != NULL ? json_deep_copy(value) : json_object();
    int rc = next == NULL || (!remove && copy == NULL) ? MCP_ENOMEM : MCP_OK;
    if (rc == MCP_OK && !remove)
        rc = json_object_set(next, key, copy) == 0 ? MCP_OK : MCP_ENOMEM;
    else if (rc == MCP_OK)
        rc = json_object_del(next, key) == 0 ? MCP_OK : MCP_ENOENT;
    if (rc == MCP_OK) {
        json_decref(*slot);
        *slot = json_object_size(next) > 0 ? json_incref(next) : NULL;
    }
    json_decref(next);
    json_decref(copy);
    return rc;
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_alnum(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9');
}

int mcp__cap_valid(mcp_cap c)
{
    return c == MCP_CAP_AUTO || c == MCP_CAP_ON || c == MCP_CAP_OFF;
}

int mcp__extension_id_valid(const char *id)
{
    const char *slash = id != NULL ? strchr(id, '/') : NULL;
    if (slash == NULL || slash == id || strlen(id) > 255)
        return 0;
    /* The prefix: labels. */
    for (const char *p = id; p < slash;) {
        const char *end = memchr(p, '.', (size_t)(slash - p));
        if (end == NULL)
            end = slash;
        if (end == p || !is_alpha(p[0]) || !is_alnum(end[-1]))
            return 0;
        for (const char *q = p; q < end; q++)
            if (!is_alnum(*q) && *q != '-')
                return 0;
        p = end < slash ? end + 1 : end;
        if (end < slash && p == slash)
            return 0; /* a trailing dot */
    }
    /* The name. */
    const char *name = slash + 1;
    size_t n = strlen(name);
    if (n == 0 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            return 0;
    return 1;
}
