/* SPDX-License-Identifier: MIT */
/*
 * The JSON Schema keywords we know, the dialects, and $ref resolution within
 * one schema document. Nothing is ever fetched (basic/index, "$ref
 * Resolution": implementations MUST NOT dereference network URIs by default,
 * and a schema whose $ref stays unresolved SHOULD be rejected rather than
 * treated as permissive): a reference that leaves the document is an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/util.h"

#define B MCP__DIALECT_BOTH
#define N MCP__DIALECT_2020
#define O MCP__DIALECT_07

/* Sorted by length, then by name (memcmp), for bsearch: most comparisons are
 * then of lengths. */
static const mcp__kw_info keywords[] = {
    {"if", 2, KW_IF, KIND_SCHEMA, B},
    {"$id", 3, KW_ID, KIND_ID, B},
    {"not", 3, KW_NOT, KIND_SCHEMA, B},
    {"$ref", 4, KW_REF, KIND_REF, B},
    {"else", 4, KW_ELSE, KIND_SCHEMA, B},
    {"enum", 4, KW_ENUM, KIND_ARRAY, B},
    {"then", 4, KW_THEN, KIND_SCHEMA, B},
    {"type", 4, KW_TYPE, KIND_TYPE, B},
    {"$defs", 5, KW_DEFS, KIND_SCHEMA_MAP, B},
    {"allOf", 5, KW_ALL_OF, KIND_SCHEMA_ARRAY, B},
    {"anyOf", 5, KW_ANY_OF, KIND_SCHEMA_ARRAY, B},
    {"const", 5, KW_CONST, KIND_ANY, B},
    {"items", 5, KW_ITEMS, KIND_ITEMS, B},
    {"oneOf", 5, KW_ONE_OF, KIND_SCHEMA_ARRAY, B},
    {"$anchor", 7, KW_ANCHOR, KIND_ANCHOR, N},
    {"$schema", 7, KW_SCHEMA, KIND_STRING, B},
    {"maximum", 7, KW_MAXIMUM, KIND_NUMBER, B},
    {"minimum", 7, KW_MINIMUM, KIND_NUMBER, B},
    {"pattern", 7, KW_PATTERN, KIND_PATTERN, B},
    {"contains", 8, KW_CONTAINS, KIND_SCHEMA, B},
    {"maxItems", 8, KW_MAX_ITEMS, KIND_COUNT, B},
    {"minItems", 8, KW_MIN_ITEMS, KIND_COUNT, B},
    {"required", 8, KW_REQUIRED, KIND_STRINGS, B},
    {"maxLength", 9, KW_MAX_LENGTH, KIND_COUNT, B},
    {"minLength", 9, KW_MIN_LENGTH, KIND_COUNT, B},
    {"multipleOf", 10, KW_MULTIPLE_OF, KIND_POSITIVE, B},
    {"properties", 10, KW_PROPERTIES, KIND_SCHEMA_MAP, B},
    {"$dynamicRef", 11, KW_DYNAMIC_REF, KIND_REF, N},
    {"definitions", 11, KW_DEFINITIONS, KIND_SCHEMA_MAP, B},
    {"maxContains", 11, KW_MAX_CONTAINS, KIND_COUNT, N},
    {"minContains", 11, KW_MIN_CONTAINS, KIND_COUNT, N},
    {"prefixItems", 11, KW_PREFIX_ITEMS, KIND_SCHEMA_ARRAY, N},
    {"uniqueItems", 11, KW_UNIQUE_ITEMS, KIND_BOOLEAN, B},
    /* draft-07's, kept in 2020-12 too, as "definitions" is, for older schemas. */
    {"dependencies", 12, KW_DEPENDENCIES, KIND_DEPENDENCIES, B},
    {"maxProperties", 13, KW_MAX_PROPERTIES, KIND_COUNT, B},
    {"minProperties", 13, KW_MIN_PROPERTIES, KIND_COUNT, B},
    {"propertyNames", 13, KW_PROPERTY_NAMES, KIND_SCHEMA, B},
    {"$dynamicAnchor", 14, KW_DYNAMIC_ANCHOR, KIND_ANCHOR, N},
    {"additionalItems", 15, KW_ADDITIONAL_ITEMS, KIND_SCHEMA, O},
    {"dependentSchemas", 16, KW_DEPENDENT_SCHEMAS, KIND_SCHEMA_MAP, N},
    {"exclusiveMaximum", 16, KW_EXCLUSIVE_MAXIMUM, KIND_NUMBER, B},
    {"exclusiveMinimum", 16, KW_EXCLUSIVE_MINIMUM, KIND_NUMBER, B},
    {"unevaluatedItems", 16, KW_UNEVALUATED_ITEMS, KIND_SCHEMA, N},
    {"dependentRequired", 17, KW_DEPENDENT_REQUIRED, KIND_STRINGS_MAP, N},
    {"patternProperties", 17, KW_PATTERN_PROPERTIES, KIND_PATTERN_MAP, B},
    {"additionalProperties", 20, KW_ADDITIONAL_PROPERTIES, KIND_SCHEMA, B},
    {"unevaluatedProperties", 21, KW_UNEVALUATED_PROPERTIES, KIND_SCHEMA, N},
};

#undef B
#undef N
#undef O

typedef struct keyword_key {
    const char *name;
    size_t len;
} keyword_key;

static int keyword_cmp(const void *key, const void *entry)
{
    const keyword_key *k = key;
    const mcp__kw_info *e = entry;
    if (k->len != e->len)
        return k->len < e->len ? -1 : 1;
    return memcmp(k->name, e->name, k->len);
}

const mcp__kw_info *mcp__schema_keyword(const char *name, size_t len, int dialect)
{
    keyword_key key = {name, len};
    const mcp__kw_info *k = bsearch(&key, keywords, sizeof(keywords) / sizeof(keywords[0]),
                                    sizeof(keywords[0]), keyword_cmp);
    return k != NULL && (k->dialect & dialect) ? k : NULL;
}

/* Compares a $schema URI with a dialect's, ignoring http/https and an empty fragment. */
static int names_dialect(const char *uri, const char *tail)
{
    if (strncmp(uri, "https://", 8) == 0)
        uri += 8;
    else if (strncmp(uri, "http://", 7) == 0)
        uri += 7;
    else
        return 0;
    size_t n = strlen(tail);
    return strncmp(uri, tail, n) == 0 && (uri[n] == '\0' || strcmp(uri + n, "#") == 0);
}

int mcp__schema_dialect(const json_t *root, const char **name)
{
    const json_t *s = json_is_object(root) ? json_object_get(root, "$schema") : NULL;
    *name = json_string_value(s);
    if (s == NULL)
        return MCP__DIALECT_2020;
    if (*name == NULL)
        return 0;
    if (names_dialect(*name, "json-schema.org/draft/2020-12/schema"))
        return MCP__DIALECT_2020;
    if (names_dialect(*name, "json-schema.org/draft-07/schema"))
        return MCP__DIALECT_07;
    return 0;
}

int mcp__schema_is_resource(const json_t *s, int dialect)
{
    const char *id = json_string_value(json_object_get(s, "$id"));
    if (id == NULL || dialect != MCP__DIALECT_07)
        return id != NULL;
    return id[0] != '#' && json_object_get(s, "$ref") == NULL;
}

/* ---- URIs (RFC 3986) ---- */

static size_t scheme_length(const char *s, size_t n)
{
    if (n == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
        return 0;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (c == ':')
            return i;
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '+' &&
            c != '-' && c != '.')
            return 0;
    }
    return 0;
}

/* The length of uri without its fragment. */
static size_t without_fragment(const char *uri)
{
    const char *hash = strchr(uri, '#');
    return hash ? (size_t)(hash - uri) : strlen(uri);
}

static int resolve_uri_raw(const char *base, const char *ref, size_t n, mcp__buf *out);

/* RFC 3986 section 5.2.4 on the path of the URI in u: "a/./b/../c" is "a/c". */
static void remove_dot_segments(mcp__buf *u)
{
    if (u->len == 0)
        return;
    char *d = u->data;
    size_t scheme = scheme_length(d, u->len), start = scheme ? scheme + 1 : 0;
    if (u->len - start >= 2 && d[start] == '/' && d[start + 1] == '/')
        for (start += 2; start < u->len && d[start] != '/' && d[start] != '?';)
            start++;
    size_t end = start;
    while (end < u->len && d[end] != '?')
        end++;
    /* The output grows no faster than the input is read: rewrite in place. */
    size_t in = start, out = start;
    while (in < end) {
        size_t left = end - in;
        if (left >= 3 && memcmp(d + in, "../", 3) == 0) {
            in += 3;
        } else if (left >= 2 && memcmp(d + in, "./", 2) == 0) {
            in += 2;
        } else if ((left >= 3 && memcmp(d + in, "/./", 3) == 0) ||
                   (left == 2 && memcmp(d + in, "/.", 2) == 0)) {
            in += 2;
            d[in] = '/'; /* "/./x" goes on as "/x", "/." as "/" */
            if (left == 2) {
                d[out++] = '/';
                in = end;
            }
        } else if ((left >= 4 && memcmp(d + in, "/../", 4) == 0) ||
                   (left == 3 && memcmp(d + in, "/..", 3) == 0)) {
            while (out > start && d[out - 1] != '/')
                out--;
            if (out > start)
                out--;
            in += 3;
            if (left == 3) {
                d[out++] = '/';
                in = end;
            }
        } else if ((left == 1 && d[in] == '.') || (left == 2 && memcmp(d + in, "..", 2) == 0)) {
            in = end;
        } else {
            do
                d[out++] = d[in++];
            while (in < end && d[in] != '/');
        }
    }
    memmove(d + out, d + end, u->len - end + 1);
    u->len -= end - out;
}

/* Resolves ref (n bytes, no fragment) against base (absolute or empty, no
 * fragment) into out, as RFC 3986 section 5.2.2 does. Returns MCP_OK or
 * MCP_ENOMEM. */
static int resolve_uri(const char *base, const char *ref, size_t n, mcp__buf *out)
{
    int rc = resolve_uri_raw(base, ref, n, out);
    if (rc == MCP_OK && out->len > 0)
        remove_dot_segments(out);
    return rc;
}

static int resolve_uri_raw(const char *base, const char *ref, size_t n, mcp__buf *out)
{
    mcp__buf_reset(out);
    size_t blen = strlen(base), scheme = scheme_length(base, blen);
    if (scheme_length(ref, n) != 0 || blen == 0)
        return mcp__buf_append(out, ref, n);
    if (n == 0)
        return mcp__buf_append(out, base, blen);
    /* The base's parts: scheme ":" ["//" authority] path ["?" query]. */
    size_t auth_end = scheme + 1;
    int has_auth = scheme != 0 && strncmp(base + auth_end, "//", 2) == 0;
    if (has_auth) {
        auth_end += 2;
        while (auth_end < blen && strchr("/?", base[auth_end]) == NULL)
            auth_end++;
    }
    size_t path_end = auth_end;
    while (path_end < blen && base[path_end] != '?')
        path_end++;
    int rc;
    if (n >= 2 && ref[0] == '/' && ref[1] == '/') {
        rc = mcp__buf_append(out, base, scheme + 1);
    } else if (ref[0] == '/') {
        rc = mcp__buf_append(out, base, auth_end);
    } else if (ref[0] == '?') {
        rc = mcp__buf_append(out, base, path_end);
    } else {
        size_t slash = path_end;
        while (slash > auth_end && base[slash - 1] != '/')
            slash--;
        if (slash > auth_end || !has_auth) {
            rc = mcp__buf_append(out, base, slash > auth_end ? slash : scheme + 1);
        } else {
            rc = mcp__buf_append(out, base, auth_end);
            if (rc == MCP_OK)
                rc = mcp__buf_append(out, "/", 1);
        }
    }
    return rc == MCP_OK ? mcp__buf_append(out, ref, n) : rc;
}

/* ---- Walking the subschemas of a document ---- */

typedef struct walk {
    int dialect;
    size_t *steps;
    int too_deep;
    int oom;
    /* find_base: the resource whose full URI we want. */
    const json_t *want;
    /* find_uri: the full URI a resource must have. */
    const char *uri;
    /* find_anchor: the name; anchors of nested resources are not ours. */
    const char *anchor;
    int dynamic_only; /* $dynamicAnchor only */
    const json_t *found;
    mcp__buf base; /* the current full URI; then the one found */
} walk;

static int visit(walk *w, const json_t *schema, int depth);

static int visit_all(walk *w, const json_t *container, int depth)
{
    if (json_is_array(container)) {
        for (size_t i = 0; i < json_array_size(container); i++)
            if (visit(w, json_array_get(container, i), depth))
                return 1;
    } else if (json_is_object(container)) {
        const char *key;
        json_t *sub;
        json_object_foreach((json_t *)container, key, sub)
        {
            if (visit(w, sub, depth))
                return 1;
        }
    }
    return 0;
}

static int visit_subschemas(walk *w, const json_t *schema, int depth)
{
    const char *key;
    size_t key_len;
    json_t *value;
    json_object_keylen_foreach((json_t *)schema, key, key_len, value)
    {
        const mcp__kw_info *k = mcp__schema_keyword(key, key_len, w->dialect);
        if (k == NULL)
            continue;
        int stop = 0;
        switch (k->kind) {
        case KIND_SCHEMA:
            stop = visit(w, value, depth);
            break;
        case KIND_ITEMS:
            stop = json_is_array(value) ? visit_all(w, value, depth) : visit(w, value, depth);
            break;
        case KIND_SCHEMA_MAP:
        case KIND_PATTERN_MAP:
        case KIND_SCHEMA_ARRAY:
        case KIND_DEPENDENCIES: /* its arrays of names are no schemas: visit skips them */
            stop = visit_all(w, value, depth);
            break;
        default:
            break;
        }
        if (stop)
            return 1;
    }
    return 0;
}

/* Visits schema and what it holds; returns 1 to stop (found, or an error set in w). */
static int visit(walk *w, const json_t *schema, int depth)
{
    if (!json_is_object(schema))
        return 0;
    (*w->steps)++;
    if (depth > MCP__SCHEMA_MAX_DEPTH) {
        w->too_deep = 1;
        return 1;
    }
    const json_t *id = json_object_get(schema, "$id");
    int resource = depth > 0 && mcp__schema_is_resource(schema, w->dialect);
    if (w->anchor != NULL) {
        if (resource)
            return 0; /* another resource's anchors */
        const char *a = json_string_value(json_object_get(schema, "$anchor"));
        const char *d = json_string_value(json_object_get(schema, "$dynamicAnchor"));
        const char *i = json_string_value(id);
        if (w->dynamic_only)
            a = i = NULL;
        if ((a != NULL && strcmp(a, w->anchor) == 0) || (d != NULL && strcmp(d, w->anchor) == 0) ||
            (w->dialect == MCP__DIALECT_07 && i != NULL && i[0] == '#' &&
             strcmp(i + 1, w->anchor) == 0)) {
            w->found = schema;
            return 1;
        }
        return visit_subschemas(w, schema, depth + 1);
    }
    char *saved = NULL;
    if (resource) {
        saved = mcp__strdup(w->base.data ? w->base.data : "");
        mcp__buf joined = {0};
        const char *s = json_string_value(id);
        if (saved == NULL || resolve_uri(saved, s, without_fragment(s), &joined) != MCP_OK ||
            (mcp__buf_reset(&w->base),
             mcp__buf_append(&w->base, joined.data ? joined.data : "", joined.len)) != MCP_OK) {
            mcp__buf_free(&joined);
            free(saved);
            w->oom = 1;
            return 1;
        }
        mcp__buf_free(&joined);
    }
    int stop;
    if (w->want != NULL
            ? schema == w->want
            : (resource || depth == 0) && strcmp(w->base.data ? w->base.data : "", w->uri) == 0) {
        w->found = schema;
        stop = 1;
    } else {
        stop = visit_subschemas(w, schema, depth + 1);
    }
    if (saved != NULL) {
        if (!stop) {
            mcp__buf_reset(&w->base);
            if (mcp__buf_appends(&w->base, saved) != MCP_OK) {
                w->oom = 1;
                stop = 1;
            }
        }
        free(saved);
    }
    return stop;
}

static int walk_failed(const walk *w, const char *ref, char *why, size_t why_len)
{
    if (w->oom)
        snprintf(why, why_len, "out of memory while resolving $ref \"%s\"", ref);
    else if (w->too_deep)
        snprintf(why, why_len,
                 "the schema is too complex to check: subschemas nested more "
                 "than %d deep",
                 MCP__SCHEMA_MAX_DEPTH);
    else
        return 0;
    return -1;
}

/* The resource that the URI part of ref (n bytes) names, seen from resource. */
static int find_resource(const json_t *root, int dialect, const json_t *resource, const char *ref,
                         size_t n, const json_t **out, size_t *steps, char *why, size_t why_len)
{
    walk w = {.dialect = dialect, .steps = steps};
    mcp__buf target = {0};
    int rc = -1;
    /* The full URI of the resource the reference sits in. */
    const char *root_id = json_string_value(json_object_get(root, "$id"));
    if (mcp__buf_append(&w.base, root_id ? root_id : "", root_id ? without_fragment(root_id) : 0))
        w.oom = 1;
    if (!w.oom && resource != root) {
        w.want = resource;
        visit(&w, root, 0);
    }
    if (walk_failed(&w, ref, why, why_len) != 0)
        goto done;
    if (resolve_uri(w.base.data ? w.base.data : "", ref, n, &target) != MCP_OK ||
        mcp__buf_append(&target, "", 0) != MCP_OK) {
        w.oom = 1;
        walk_failed(&w, ref, why, why_len);
        goto done;
    }
    /* The resource with that full URI. */
    walk v = {.dialect = dialect, .steps = steps, .uri = target.data ? target.data : ""};
    if (mcp__buf_append(&v.base, root_id ? root_id : "", root_id ? without_fragment(root_id) : 0))
        v.oom = 1;
    else
        visit(&v, root, 0);
    if (walk_failed(&v, ref, why, why_len) == 0) {
        if (v.found == NULL)
            snprintf(why, why_len,
                     "$ref \"%s\" cannot be resolved: it names no schema in this document, and "
                     "references to other documents are not fetched",
                     ref);
        else
            rc = 0;
        *out = v.found;
    }
    mcp__buf_free(&v.base);
done:
    mcp__buf_free(&w.base);
    mcp__buf_free(&target);
    return rc;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Follows the JSON pointer frag (a URI fragment: percent-encoded) from base. */
static int follow_pointer(const json_t *base, int dialect, const char *ref, const char *frag,
                          mcp__ref_target *out, size_t *steps, char *why, size_t why_len)
{
    size_t n = strlen(frag);
    char small[256];
    char *p = n < sizeof(small) ? small : malloc(n + 1);
    if (p == NULL) {
        snprintf(why, why_len, "out of memory while resolving $ref \"%s\"", ref);
        return -1;
    }
    /* Percent-decoding first (RFC 6901 section 6), then ~1 and ~0 per token. */
    size_t len = 0;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (frag[i] != '%') {
            p[len++] = frag[i];
        } else if (i + 2 < n + 0 && hex_digit(frag[i + 1]) >= 0 && hex_digit(frag[i + 2]) >= 0) {
            p[len++] = (char)(hex_digit(frag[i + 1]) * 16 + hex_digit(frag[i + 2]));
            bad = p[len - 1] == '\0';
            i += 2;
        } else {
            bad = 1;
        }
    }
    const json_t *cur = base, *resource = base;
    size_t i = 0;
    while (!bad && i < len) {
        /* p[i] is the '/' before a token. */
        size_t start = ++i, out_len = 0;
        while (i < len && p[i] != '/') {
            char c = p[i++];
            if (c == '~') {
                char e = i < len ? p[i++] : '\0';
                if (e != '0' && e != '1') {
                    bad = 1;
                    break;
                }
                c = e == '0' ? '~' : '/';
            }
            p[start + out_len++] = c;
        }
        const char *tok = p + start;
        (*steps)++;
        if (bad) {
            cur = NULL;
        } else if (json_is_object(cur)) {
            cur = json_object_getn(cur, tok, out_len);
        } else if (json_is_array(cur) && out_len > 0 && out_len < 10 &&
                   (tok[0] != '0' || out_len == 1)) {
            size_t index = 0;
            for (size_t k = 0; k < out_len && cur != NULL; k++) {
                if (tok[k] < '0' || tok[k] > '9')
                    cur = NULL;
                else
                    index = index * 10 + (size_t)(tok[k] - '0');
            }
            cur = cur ? json_array_get(cur, index) : NULL;
        } else {
            cur = NULL;
        }
        if (cur == NULL) {
            bad = 1;
        } else if (json_is_object(cur) && mcp__schema_is_resource(cur, dialect)) {
            resource = cur;
        }
    }
    if (p != small)
        free(p);
    if (bad || !(json_is_object(cur) || json_is_boolean(cur))) {
        snprintf(why, why_len,
                 bad ? "$ref \"%s\" cannot be resolved: no such place in the schema"
                     : "$ref \"%s\" points at something that is not a schema",
                 ref);
        return -1;
    }
    out->schema = cur;
    out->resource = resource;
    return 0;
}

int mcp__schema_resolve(const json_t *root, int dialect, const json_t *resource, const char *ref,
                        mcp__ref_target *out, size_t *steps, char *why, size_t why_len)
{
    size_t uri_len = without_fragment(ref);
    const char *frag = ref[uri_len] == '#' ? ref + uri_len + 1 : "";
    const json_t *base = resource;
    if (uri_len > 0 &&
        find_resource(root, dialect, resource, ref, uri_len, &base, steps, why, why_len) != 0)
        return -1;
    if (frag[0] == '\0') {
        out->schema = base;
        out->resource = base;
        return 0;
    }
    if (frag[0] == '/')
        return follow_pointer(base, dialect, ref, frag, out, steps, why, why_len);
    walk w = {.dialect = dialect, .steps = steps, .anchor = frag};
    visit(&w, base, 0);
    if (walk_failed(&w, ref, why, why_len) != 0)
        return -1;
    if (w.found == NULL) {
        snprintf(why, why_len, "$ref \"%s\" cannot be resolved: no anchor \"%s\" in its resource",
                 ref, frag);
        return -1;
    }
    out->schema = w.found;
    out->resource = base;
    return 0;
}

const json_t *mcp__schema_dynamic_anchor(const json_t *resource, int dialect, const char *name,
                                         size_t *steps)
{
    walk w = {.dialect = dialect, .steps = steps, .anchor = name, .dynamic_only = 1};
    visit(&w, resource, 0);
    return w.found;
}
