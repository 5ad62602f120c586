/* SPDX-License-Identifier: MIT */
/*
 * Request metadata headers of Streamable HTTP, revision 2026-07-28: see
 * mcp_headers.h.
 */
#include "protocol/headers.h"
#include "transport/mcp_headers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

/* ---- Values ---- */

static int looks_like_sentinel(const char *s, size_t len)
{
    size_t p = sizeof(MCP__MH_B64_PREFIX) - 1, q = sizeof(MCP__MH_B64_SUFFIX) - 1;
    return len >= p + q && memcmp(s, MCP__MH_B64_PREFIX, p) == 0 &&
           memcmp(s + len - q, MCP__MH_B64_SUFFIX, q) == 0;
}

/* Plain when every byte is visible ASCII or an inner space (RFC 9110 field values
 * allow a tab too, but the spec's examples encode one, and so do we). */
static int plain_ok(const char *s, size_t len)
{
    if (len > 0 && (s[0] == ' ' || s[len - 1] == ' '))
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e)
            return 0;
    }
    return !looks_like_sentinel(s, len);
}

char *mcp__mh_encode(const char *s, size_t len)
{
    if (plain_ok(s, len)) {
        char *out = malloc(len + 1);
        if (out != NULL) {
            memcpy(out, s, len);
            out[len] = '\0';
        }
        return out;
    }
    char *b64 = mcp__base64_encode(s, len);
    if (b64 == NULL)
        return NULL;
    char *out = mcp__asprintf(MCP__MH_B64_PREFIX "%s" MCP__MH_B64_SUFFIX, b64);
    free(b64);
    return out;
}

char *mcp__mh_decode(const char *value, size_t *out_len)
{
    return mcp__header_value_decode(value, out_len); /* the server's reading, one rule */
}

int mcp__mh_value(const json_t *v, char **out)
{
    *out = NULL;
    char num[32];
    switch (json_typeof(v)) {
    case JSON_NULL:
        return MCP_ENOENT;
    case JSON_STRING:
        *out = mcp__mh_encode(json_string_value(v), json_string_length(v));
        return *out != NULL ? MCP_OK : MCP_ENOMEM;
    case JSON_TRUE:
    case JSON_FALSE:
        *out = mcp__strdup(json_is_true(v) ? "true" : "false");
        return *out != NULL ? MCP_OK : MCP_ENOMEM;
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        if (i > MCP__MH_MAX_SAFE_INT || i < -MCP__MH_MAX_SAFE_INT)
            return MCP_EINVAL;
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, i);
        break;
    }
    case JSON_REAL: {
        /* 42.0 is the integer 42; 3.5 has no header form. */
        double d = json_real_value(v);
        if (!(d >= (double)-MCP__MH_MAX_SAFE_INT && d <= (double)MCP__MH_MAX_SAFE_INT) ||
            d != (double)(long long)d)
            return MCP_EINVAL;
        snprintf(num, sizeof(num), "%lld", (long long)d);
        break;
    }
    default:
        return MCP_EINVAL;
    }
    *out = mcp__strdup(num);
    return *out != NULL ? MCP_OK : MCP_ENOMEM;
}

/* ---- x-mcp-header annotations ---- */

#define ANNOTATION "x-mcp-header"
/* Nesting of the whole schema we walk; a deeper one is refused rather than half read. */
#define MAX_SCHEMA_DEPTH 128

typedef struct walk {
    mcp__mh_tool *tool;
    char *why;
    size_t why_size;
    const char *chain[MCP__MH_MAX_DEPTH]; /* the properties leading here (borrowed) */
    char pointer[256];                    /* where we are, for messages */
} walk;

static int refuse(walk *w, int rc, const char *fmt, const char *arg)
{
    if (w->why_size > 0) {
        char text[200];
        snprintf(text, sizeof(text), fmt, arg);
        snprintf(w->why, w->why_size, "%s (at %s)", text, w->pointer[0] ? w->pointer : "/");
    }
    return rc;
}

/* RFC 9110 tchar. */
static int is_token(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("!#$%&'*+-.^_`|~", c) != NULL))
            return 0;
    }
    return 1;
}

static int add_param(walk *w, const char *name, size_t depth)
{
    mcp__mh_tool *t = w->tool;
    for (size_t i = 0; i < t->n; i++)
        if (strcasecmp(t->params[i].name, name) == 0)
            return refuse(w, MCP_EINVAL, "x-mcp-header \"%s\" is used twice (case-insensitively)",
                          name);
    if (t->n == MCP__MH_MAX_PARAMS)
        return refuse(w, MCP_ELIMIT, "more than %s x-mcp-header annotations", "64");
    mcp__mh_param *np = realloc(t->params, (t->n + 1) * sizeof(*np));
    if (np == NULL)
        return MCP_ENOMEM;
    t->params = np;
    mcp__mh_param *p = &np[t->n];
    memset(p, 0, sizeof(*p));
    p->name = mcp__strdup(name);
    p->path = calloc(depth, sizeof(char *));
    if (p->name == NULL || p->path == NULL) {
        free(p->name);
        free(p->path);
        return MCP_ENOMEM;
    }
    t->n++;
    for (size_t i = 0; i < depth; i++) {
        if ((p->path[i] = mcp__strdup(w->chain[i])) == NULL)
            return MCP_ENOMEM; /* the tool is freed whole by the caller */
        p->depth = i + 1;
    }
    return MCP_OK;
}

/* The annotation of a property reached by properties alone (depth >= 1). */
static int annotated_property(walk *w, const json_t *schema, const json_t *ann, size_t depth)
{
    const char *name = json_string_value(ann);
    if (name == NULL)
        return refuse(w, MCP_EINVAL, "x-mcp-header is not a string%s", "");
    if (name[0] == '\0')
        return refuse(w, MCP_EINVAL, "x-mcp-header is empty%s", "");
    if (!is_token(name))
        return refuse(w, MCP_EINVAL,
                      "x-mcp-header \"%s\" is not an HTTP token (a space, a colon, a control "
                      "character or a non-ASCII byte)",
                      name);
    const char *type = json_string_value(json_object_get(schema, "type"));
    if (type == NULL || (strcmp(type, "string") != 0 && strcmp(type, "integer") != 0 &&
                         strcmp(type, "boolean") != 0))
        return refuse(w, MCP_EINVAL,
                      "x-mcp-header \"%s\" is on a property whose type is not string, integer "
                      "or boolean",
                      name);
    return add_param(w, name, depth);
}

static int walk_schema(walk *w, const json_t *schema, int chain, size_t depth, size_t nesting);

/* Appends "/key" to the pointer for the duration of a call; returns the old length. */
static size_t push(walk *w, const char *key)
{
    size_t len = strlen(w->pointer);
    snprintf(w->pointer + len, sizeof(w->pointer) - len, "/%s", key);
    return len;
}

static int walk_map(walk *w, const json_t *map, const char *kw, int chain, size_t depth,
                    size_t nesting)
{
    if (!json_is_object(map))
        return MCP_OK;
    size_t mark = push(w, kw);
    const char *key;
    const json_t *sub;
    int rc = MCP_OK;
    json_object_foreach((json_t *)map, key, sub)
    {
        size_t mark2 = push(w, key);
        if (chain && depth < MCP__MH_MAX_DEPTH)
            w->chain[depth] = key;
        rc = walk_schema(w, sub, chain, chain ? depth + 1 : depth, nesting + 1);
        w->pointer[mark2] = '\0';
        if (rc != MCP_OK)
            break;
    }
    w->pointer[mark] = '\0';
    return rc;
}

static int walk_list(walk *w, const json_t *v, const char *kw, size_t depth, size_t nesting)
{
    size_t mark = push(w, kw);
    int rc = MCP_OK;
    if (json_is_array(v)) {
        size_t i;
        const json_t *sub;
        json_array_foreach(v, i, sub)
        {
            char idx[24];
            snprintf(idx, sizeof(idx), "%zu", i);
            size_t mark2 = push(w, idx);
            rc = walk_schema(w, sub, 0, depth, nesting + 1);
            w->pointer[mark2] = '\0';
            if (rc != MCP_OK)
                break;
        }
    } else {
        rc = walk_schema(w, v, 0, depth, nesting + 1);
    }
    w->pointer[mark] = '\0';
    return rc;
}

/* Keywords whose values are schemas, or maps or lists of schemas (JSON Schema 2020-12,
 * with draft-07's definitions, dependencies and additionalItems). */
static const char *const map_keywords[] = {"patternProperties", "$defs", "definitions",
                                           "dependentSchemas", "dependencies"};
static const char *const schema_keywords[] = {"items",
                                              "prefixItems",
                                              "additionalItems",
                                              "additionalProperties",
                                              "unevaluatedProperties",
                                              "unevaluatedItems",
                                              "contains",
                                              "propertyNames",
                                              "not",
                                              "if",
                                              "then",
                                              "else",
                                              "allOf",
                                              "anyOf",
                                              "oneOf",
                                              "contentSchema"};

/*
 * schema is reached from the root by properties alone when chain is 1 (depth of
 * them: 0 for the root). nesting counts every level, for the bound.
 */
static int walk_schema(walk *w, const json_t *schema, int chain, size_t depth, size_t nesting)
{
    if (!json_is_object(schema))
        return MCP_OK; /* true, false, or not a schema at all */
    if (nesting > MAX_SCHEMA_DEPTH)
        return refuse(w, MCP_ELIMIT, "the inputSchema nests deeper than %s levels", "128");
    const json_t *ann = json_object_get(schema, ANNOTATION);
    if (ann != NULL) {
        int rc;
        if (chain && depth > MCP__MH_MAX_DEPTH)
            rc = refuse(w, MCP_ELIMIT, "x-mcp-header deeper than %s properties", "32");
        else if (chain && depth > 0)
            rc = annotated_property(w, schema, ann, depth);
        else if (depth == 0 && chain)
            rc =
                refuse(w, MCP_EINVAL, "x-mcp-header on the schema's root, not on a property%s", "");
        else
            rc = refuse(w, MCP_EINVAL,
                        "x-mcp-header on a property not reached from the root by \"properties\" "
                        "alone%s",
                        "");
        if (rc != MCP_OK)
            return rc;
    }
    int rc =
        walk_map(w, json_object_get(schema, "properties"), "properties", chain, depth, nesting);
    for (size_t i = 0; rc == MCP_OK && i < sizeof(map_keywords) / sizeof(*map_keywords); i++)
        rc = walk_map(w, json_object_get(schema, map_keywords[i]), map_keywords[i], 0, depth,
                      nesting);
    for (size_t i = 0; rc == MCP_OK && i < sizeof(schema_keywords) / sizeof(*schema_keywords);
         i++) {
        const json_t *v = json_object_get(schema, schema_keywords[i]);
        if (v != NULL)
            rc = walk_list(w, v, schema_keywords[i], depth, nesting);
    }
    return rc;
}

void mcp__mh_tool_free(mcp__mh_tool *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        for (size_t k = 0; k < t->params[i].depth; k++)
            free(t->params[i].path[k]);
        free(t->params[i].path);
        free(t->params[i].name);
    }
    free(t->params);
    free(t);
}

int mcp__mh_tool_parse(const json_t *input_schema, mcp__mh_tool **out, char *why, size_t why_size)
{
    *out = NULL;
    if (why_size > 0)
        why[0] = '\0';
    walk w = {.why = why, .why_size = why_size};
    if ((w.tool = calloc(1, sizeof(*w.tool))) == NULL)
        return MCP_ENOMEM;
    int rc = walk_schema(&w, input_schema, 1, 0, 0);
    if (rc == MCP_ENOMEM && why_size > 0)
        snprintf(why, why_size, "out of memory");
    if (rc != MCP_OK || w.tool->n == 0) {
        mcp__mh_tool_free(w.tool);
        return rc;
    }
    *out = w.tool;
    return MCP_OK;
}

const json_t *mcp__mh_param_arg(const mcp__mh_param *p, const json_t *args)
{
    const json_t *v = args;
    for (size_t i = 0; i < p->depth && v != NULL; i++)
        v = json_is_object(v) ? json_object_get(v, p->path[i]) : NULL;
    return v;
}
