/* SPDX-License-Identifier: MIT */
/*
 * Whether a schema can be used (mcp__schema_valid): checked once, when a tool
 * is registered, so that a mistake shows then rather than as a failure of
 * every call. Each keyword of the dialect must have the JSON type the
 * specification gives it, every $ref must resolve within the document, every
 * pattern must compile, the schema must stay within the bounds of
 * schema_int.h, and no $ref may lead back to where it started without moving
 * into the instance ({"$ref":"#"}, which would never end).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "schema/schema.h"
#include "util/util.h"

/* Per subschema: walked, then its colour in the search for $ref cycles. */
enum { WALKED = 1, GREY, BLACK };

typedef struct node {
    const json_t *schema;
    unsigned char state;
    const json_t *ref[2];          /* targets of $ref and $dynamicRef */
    const json_t *ref_resource[2]; /* the resource of each target */
} node;

typedef struct vctx {
    const json_t *root;
    int dialect;
    size_t subschemas;
    size_t steps;
    node *nodes; /* open addressing on the schema pointer */
    size_t cap, len;
    char *why;
    size_t why_len;
    char path[512];
    size_t path_len;
} vctx;

static int bad(vctx *c, const char *fmt, ...) MCP_PRINTF(2, 3);
static int bad(vctx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char path[MCP__SCHEMA_PATH_SHOWN + 1];
    mcp__schema_shorten(c->path, c->path_len, path, sizeof(path));
    if (c->path_len == 0)
        snprintf(c->why, c->why_len, "invalid schema: %s", msg);
    else
        snprintf(c->why, c->why_len, "invalid schema at %s: %s", path, msg);
    return -1;
}

/* Appends "/key" (escaped as RFC 6901 says) or "/index" to the path; a path too
 * long to show whole ends with "...". Returns the length to restore. */
static size_t path_push(vctx *c, const char *key, size_t index)
{
    size_t saved = c->path_len, end = sizeof(c->path) - 4;
    char num[24];
    if (key == NULL) {
        snprintf(num, sizeof(num), "%zu", index);
        key = num;
    }
    size_t len = c->path_len;
    c->path[len < end ? len++ : end] = '/';
    for (const char *p = key; *p && len < end; p++) {
        if (*p == '~' || *p == '/') {
            c->path[len++] = '~';
            if (len < end)
                c->path[len++] = *p == '~' ? '0' : '1';
        } else {
            c->path[len++] = *p;
        }
    }
    if (len >= end) {
        memcpy(c->path + end, "...", 4);
        len = end + 3;
    } else {
        c->path[len] = '\0';
    }
    c->path_len = len;
    return saved;
}

static void path_pop(vctx *c, size_t saved)
{
    c->path_len = saved;
    c->path[saved] = '\0';
}

/* ---- A set of subschemas ---- */

static size_t slot_of(const vctx *c, const json_t *s)
{
    uintptr_t h = (uintptr_t)s;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ULL;
    size_t i = (size_t)(h >> 7) & (c->cap - 1);
    while (c->nodes[i].schema != NULL && c->nodes[i].schema != s)
        i = (i + 1) & (c->cap - 1);
    return i;
}

static node *find(const vctx *c, const json_t *s)
{
    if (c->cap == 0)
        return NULL;
    node *n = &c->nodes[slot_of(c, s)];
    return n->schema == s ? n : NULL;
}

static node *add(vctx *c, const json_t *s)
{
    if ((c->len + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        node *old = c->nodes;
        size_t old_cap = c->cap;
        if ((c->nodes = calloc(cap, sizeof(node))) == NULL) {
            c->nodes = old;
            return NULL;
        }
        c->cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].schema != NULL)
                c->nodes[slot_of(c, old[i].schema)] = old[i];
        free(old);
    }
    node *n = &c->nodes[slot_of(c, s)];
    if (n->schema == NULL) {
        n->schema = s;
        c->len++;
    }
    return n;
}

/* ---- Keyword values ---- */

static int is_count(const json_t *v)
{
    return mcp__schema_is_integral(v) && json_number_value(v) >= 0;
}

static int is_type_name(const json_t *t)
{
    static const char *const names[] = {"array",  "boolean", "integer", "null",
                                        "number", "object",  "string"};
    const char *s = json_string_value(t);
    for (size_t i = 0; s != NULL && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    return 0;
}

/* An array of strings (type names when types) with no two equal. */
static int is_unique_strings(const json_t *a, int types)
{
    if (!json_is_array(a))
        return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *s = json_array_get(a, i);
        if (!json_is_string(s) || (types && !is_type_name(s)))
            return 0;
        for (size_t j = 0; j < i; j++)
            if (json_equal(s, json_array_get(a, j)))
                return 0;
    }
    return 1;
}

static int is_anchor(const char *s)
{
    /* 2020-12: ^[A-Za-z_][-A-Za-z0-9._]*$ */
    if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && *s != '_')
        return 0;
    for (s++; *s; s++)
        if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
            strchr("-._", *s) == NULL)
            return 0;
    return 1;
}

static int check_pattern(vctx *c, const char *keyword, const char *pattern, size_t len)
{
    mcp__regex *re;
    char why[200];
    if (mcp__schema_regex_compile(pattern, len, &re, why, sizeof(why)) != 0)
        return bad(c, "\"%s\" /%s/: %s", keyword, pattern, why);
    mcp__schema_regex_free(re);
    return 0;
}

static int walk(vctx *c, const json_t *s, const json_t *resource, int depth);

static int walk_sub(vctx *c, const json_t *s, const json_t *resource, int depth, const char *key,
                    size_t index)
{
    size_t saved = path_push(c, key, index);
    int rc = walk(c, s, resource, depth);
    if (rc == 0)
        path_pop(c, saved);
    return rc;
}

static int walk_map(vctx *c, const mcp__kw_info *k, const json_t *map, const json_t *resource,
                    int depth)
{
    if (!json_is_object(map))
        return bad(c, "\"%s\" must be an object of schemas", k->name);
    const char *key;
    json_t *sub;
    json_object_foreach((json_t *)map, key, sub)
    {
        if (k->kind == KIND_PATTERN_MAP && check_pattern(c, k->name, key, strlen(key)) != 0)
            return -1;
        if (k->kind == KIND_DEPENDENCIES && json_is_array(sub)) {
            if (!is_unique_strings(sub, 0))
                return bad(c, "\"%s\" must hold schemas or arrays of unique strings", k->name);
            continue;
        }
        if (walk_sub(c, sub, resource, depth, key, 0) != 0)
            return -1;
    }
    return 0;
}

static int walk_array(vctx *c, const char *name, const json_t *a, const json_t *resource, int depth)
{
    if (!json_is_array(a) || json_array_size(a) == 0)
        return bad(c, "\"%s\" must be a non-empty array of schemas", name);
    for (size_t i = 0; i < json_array_size(a); i++)
        if (walk_sub(c, json_array_get(a, i), resource, depth, NULL, i) != 0)
            return -1;
    return 0;
}

static int check_ref(vctx *c, node *n, int which, const char *name, const json_t *ref,
                     const json_t *resource)
{
    if (!json_is_string(ref))
        return bad(c, "\"%s\" must be a string", name);
    mcp__ref_target t;
    char why[400];
    if (mcp__schema_resolve(c->root, c->dialect, resource, json_string_value(ref), &t, &c->steps,
                            why, sizeof(why)) != 0)
        return bad(c, "%s", why);
    n->ref[which] = t.schema;
    n->ref_resource[which] = t.resource;
    return 0;
}

static int check_keyword(vctx *c, node *n, const mcp__kw_info *k, const json_t *v,
                         const json_t *resource, int depth)
{
    switch (k->kind) {
    case KIND_SCHEMA:
        return walk_sub(c, v, resource, depth, k->name, 0);
    case KIND_SCHEMA_MAP:
    case KIND_PATTERN_MAP:
    case KIND_DEPENDENCIES: {
        size_t saved = path_push(c, k->name, 0);
        int rc = walk_map(c, k, v, resource, depth);
        if (rc == 0)
            path_pop(c, saved);
        return rc;
    }
    case KIND_ITEMS:
        if (json_is_array(v) && c->dialect == MCP__DIALECT_2020)
            return bad(c, "\"items\" must be a schema in 2020-12 (a tuple is \"prefixItems\")");
        if (!json_is_array(v))
            return walk_sub(c, v, resource, depth, k->name, 0);
        /* draft-07's tuple form */
        /* fall through */
    case KIND_SCHEMA_ARRAY: {
        size_t saved = path_push(c, k->name, 0);
        int rc = walk_array(c, k->name, v, resource, depth);
        if (rc == 0)
            path_pop(c, saved);
        return rc;
    }
    case KIND_NUMBER:
        return json_is_number(v) ? 0 : bad(c, "\"%s\" must be a number", k->name);
    case KIND_POSITIVE:
        return json_is_number(v) && json_number_value(v) > 0
                   ? 0
                   : bad(c, "\"%s\" must be a number above 0", k->name);
    case KIND_COUNT:
        return is_count(v) ? 0 : bad(c, "\"%s\" must be a non-negative integer", k->name);
    case KIND_BOOLEAN:
        return json_is_boolean(v) ? 0 : bad(c, "\"%s\" must be true or false", k->name);
    case KIND_STRING:
        return json_is_string(v) ? 0 : bad(c, "\"%s\" must be a string", k->name);
    case KIND_STRINGS:
        return is_unique_strings(v, 0)
                   ? 0
                   : bad(c, "\"%s\" must be an array of unique strings", k->name);
    case KIND_STRINGS_MAP: {
        const char *key;
        json_t *names;
        if (!json_is_object(v))
            return bad(c, "\"%s\" must be an object of arrays of unique strings", k->name);
        json_object_foreach((json_t *)v, key, names)
        {
            if (!is_unique_strings(names, 0))
                return bad(c, "\"%s\" must be an object of arrays of unique strings", k->name);
        }
        return 0;
    }
    case KIND_TYPE:
        if (is_type_name(v) || (is_unique_strings(v, 1) && json_array_size(v) > 0))
            return 0;
        return bad(c, "\"type\" must be one of array, boolean, integer, null, number, object, "
                      "string, or a non-empty array of them without repeats");
    case KIND_ARRAY:
        return json_is_array(v) ? 0 : bad(c, "\"%s\" must be an array", k->name);
    case KIND_PATTERN:
        if (!json_is_string(v))
            return bad(c, "\"%s\" must be a string", k->name);
        return check_pattern(c, k->name, json_string_value(v), json_string_length(v));
    case KIND_REF:
        return check_ref(c, n, k->id == KW_REF ? 0 : 1, k->name, v, resource);
    case KIND_ANCHOR:
        return json_is_string(v) && is_anchor(json_string_value(v))
                   ? 0
                   : bad(c,
                         "\"%s\" must be a name (a letter or _, then letters, digits, "
                         "'-', '.' or '_')",
                         k->name);
    case KIND_ID: {
        const char *id = json_string_value(v);
        if (id == NULL)
            return bad(c, "\"$id\" must be a string");
        const char *hash = strchr(id, '#');
        if (c->dialect == MCP__DIALECT_2020 && hash != NULL && hash[1] != '\0')
            return bad(c, "\"$id\" must not have a fragment in 2020-12 (use \"$anchor\")");
        return 0;
    }
    default: /* KIND_ANY */
        return 0;
    }
}

static int walk(vctx *c, const json_t *s, const json_t *resource, int depth)
{
    if (json_is_boolean(s))
        return 0;
    if (!json_is_object(s))
        return bad(c, "a schema must be an object or a boolean, not %s", mcp__schema_type_name(s));
    if (++c->subschemas > MCP__SCHEMA_MAX_SUBSCHEMAS)
        return bad(c, "the schema is too large: more than %d subschemas",
                   MCP__SCHEMA_MAX_SUBSCHEMAS);
    if (depth > MCP__SCHEMA_MAX_DEPTH)
        return bad(c, "the schema is too deep: subschemas nested more than %d deep",
                   MCP__SCHEMA_MAX_DEPTH);
    node *n = add(c, s);
    if (n == NULL)
        return bad(c, "out of memory");
    if (n->state != 0)
        return 0; /* reached before, through a $ref */
    n->state = WALKED;
    if (mcp__schema_is_resource(s, c->dialect))
        resource = s;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v)
    {
        const mcp__kw_info *k = mcp__schema_keyword(key, strlen(key), c->dialect);
        /* check_keyword may grow the table: look n up again after. */
        if (k != NULL && check_keyword(c, n, k, v, resource, depth + 1) != 0)
            return -1;
        n = find(c, s);
    }
    return 0;
}

/* Walks the targets of $ref that the walk of the tree did not reach (inside an
 * unknown keyword), and theirs, until none is left. */
static int walk_ref_targets(vctx *c)
{
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < c->cap && !again; i++) {
            for (int which = 0; which < 2 && !again; which++) {
                const json_t *target = c->nodes[i].ref[which];
                if (!json_is_object(target) || find(c, target) != NULL)
                    continue;
                /* The walk may grow the table: start the scan over after it. */
                const json_t *resource = c->nodes[i].ref_resource[which];
                const char *ref = json_string_value(
                    json_object_get(c->nodes[i].schema, which ? "$dynamicRef" : "$ref"));
                int n = snprintf(c->path, sizeof(c->path), "the target of \"%s\"", ref ? ref : "");
                c->path_len =
                    n < 0 || (size_t)n >= sizeof(c->path) ? sizeof(c->path) - 1 : (size_t)n;
                if (walk(c, target, resource, 0) != 0)
                    return -1;
                again = 1;
            }
        }
    }
    return 0;
}

/* ---- $ref cycles that consume no instance ---- */

/* The subschemas that apply to the same value as s: allOf, anyOf, oneOf, not,
 * if, then, else, dependentSchemas, dependencies, $ref, $dynamicRef. */
static int each_in_place(vctx *c, const json_t *s, const char *via, int depth);

static int visit_in_place(vctx *c, const json_t *s, const char *via, int depth)
{
    if (!json_is_object(s))
        return 0;
    node *n = find(c, s);
    if (n == NULL || n->state == BLACK)
        return 0;
    if (n->state == GREY)
        return bad(c,
                   "$ref \"%s\" leads back to where it started without moving into the value "
                   "checked: checking would never end",
                   via);
    if (depth > MCP__SCHEMA_MAX_DEPTH)
        return bad(c,
                   "more than %d subschemas ($ref, allOf, anyOf...) apply to one value, one "
                   "inside the other",
                   MCP__SCHEMA_MAX_DEPTH);
    if (++c->steps > MCP__SCHEMA_MAX_STEPS * 10)
        return bad(c, "the schema is too complex to check");
    n->state = GREY;
    int rc = each_in_place(c, s, via, depth);
    if (rc == 0 && (n = find(c, s)) != NULL)
        n->state = BLACK;
    return rc;
}

static int each_in_place(vctx *c, const json_t *s, const char *via, int depth)
{
    if (c->dialect == MCP__DIALECT_07 && json_object_get(s, "$ref") != NULL) {
        const node *n = find(c, s);
        return visit_in_place(c, n->ref[0], json_string_value(json_object_get(s, "$ref")),
                              depth + 1);
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v)
    {
        const mcp__kw_info *k = mcp__schema_keyword(key, strlen(key), c->dialect);
        if (k == NULL)
            continue;
        int rc = 0;
        switch (k->id) {
        case KW_ALL_OF:
        case KW_ANY_OF:
        case KW_ONE_OF:
            for (size_t i = 0; i < json_array_size(v) && rc == 0; i++)
                rc = visit_in_place(c, json_array_get(v, i), via, depth + 1);
            break;
        case KW_NOT:
        case KW_IF:
        case KW_THEN:
        case KW_ELSE:
            rc = visit_in_place(c, v, via, depth + 1);
            break;
        case KW_DEPENDENT_SCHEMAS:
        case KW_DEPENDENCIES: {
            const char *name;
            json_t *sub;
            json_object_foreach(v, name, sub)
            {
                if ((rc = visit_in_place(c, sub, via, depth + 1)) != 0)
                    break;
            }
            break;
        }
        case KW_REF:
        case KW_DYNAMIC_REF: {
            const node *n = find(c, s);
            rc =
                visit_in_place(c, n->ref[k->id == KW_REF ? 0 : 1], json_string_value(v), depth + 1);
            break;
        }
        default:
            break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int find_cycles(vctx *c)
{
    for (size_t i = 0; i < c->cap; i++) {
        /* visit_in_place never grows the table: i stays valid. */
        if (c->nodes[i].schema != NULL && c->nodes[i].state == WALKED) {
            c->path_len = 0;
            c->path[0] = '\0';
            if (visit_in_place(c, c->nodes[i].schema, "", 0) != 0)
                return -1;
        }
    }
    return 0;
}

int mcp__schema_valid(const json_t *schema, char *why, size_t why_len)
{
    vctx c;
    memset(&c, 0, sizeof(c));
    c.root = schema;
    c.why = why;
    c.why_len = why_len;
    if (why_len > 0)
        why[0] = '\0';
    const char *name;
    if (!json_is_object(schema) && !json_is_boolean(schema))
        return bad(&c, "a schema must be an object or a boolean, not %s",
                   schema ? mcp__schema_type_name(schema) : "nothing");
    if ((c.dialect = mcp__schema_dialect(schema, &name)) == 0)
        return bad(&c, "the dialect %s is not supported (2020-12 and draft-07 are)",
                   name ? name : "(a $schema that is not a string)");
    size_t values = mcp__schema_count_values(schema, 4 * MCP__SCHEMA_MAX_DEPTH);
    if (values > MCP__SCHEMA_MAX_VALUES)
        return bad(&c, "the schema is too large: more than %d JSON values", MCP__SCHEMA_MAX_VALUES);
    int rc = walk(&c, schema, schema, 0);
    if (rc == 0)
        rc = walk_ref_targets(&c);
    if (rc == 0)
        rc = find_cycles(&c);
    free(c.nodes);
    return rc == 0 ? 0 : -1;
}
