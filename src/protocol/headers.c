/* SPDX-License-Identifier: MIT */
/*
 * The request metadata headers of revision 2026-07-28 (see headers.h): their
 * values both ways, and the x-mcp-header annotations of tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/headers.h"
#include "util/util.h"

/* Whether value holds only what a header value may (visible ASCII, space and tab). */
static int header_text(const char *value, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < 0x20 || c > 0x7e) && c != '\t')
            return 0;
    }
    return 1;
}

/* Whether the n bytes at value have the shape of the Base64 sentinel (case-sensitive). */
static int sentinel(const char *value, size_t n)
{
    size_t p = sizeof(MCP__HEADER_B64_PREFIX) - 1, q = sizeof(MCP__HEADER_B64_SUFFIX) - 1;
    return n >= p + q && memcmp(value, MCP__HEADER_B64_PREFIX, p) == 0 &&
           memcmp(value + n - q, MCP__HEADER_B64_SUFFIX, q) == 0;
}

int mcp__header_value_is(const char *value, const char *s, size_t n)
{
    size_t vn = strlen(value);
    if (!sentinel(value, vn))
        return vn == n && header_text(value, vn) && memcmp(value, s, n) == 0;
    size_t len;
    char *decoded = mcp__header_value_decode(value, &len);
    int same = decoded != NULL && len == n && memcmp(decoded, s, n) == 0;
    free(decoded);
    return same;
}

char *mcp__header_value_decode(const char *value, size_t *len)
{
    size_t n = strlen(value);
    if (!header_text(value, n))
        return NULL;
    if (sentinel(value, n)) {
        /* Padded, as RFC 4648 spells it: a value that is not is refused. So is one whose
         * bits after the last byte are not zero ("Y291bnR=" decodes as "Y291bnQ=" does):
         * a value has one spelling, or a proxy comparing headers is fooled. */
        size_t p = sizeof(MCP__HEADER_B64_PREFIX) - 1,
               b64 = n - p - (sizeof(MCP__HEADER_B64_SUFFIX) - 1);
        if (b64 % 4 != 0)
            return NULL;
        unsigned char *raw = mcp__base64_decode(value + p, b64, len);
        char *again = raw != NULL ? mcp__base64_encode(raw, *len) : NULL;
        int canonical = again != NULL && strlen(again) == b64 && memcmp(again, value + p, b64) == 0;
        free(again);
        if (!canonical) {
            free(raw);
            return NULL;
        }
        return (char *)raw; /* NUL-terminated by the decoder */
    }
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, value, n + 1);
    *len = n;
    return copy;
}

/* ---- Values ---- */

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
    return !sentinel(s, len);
}

char *mcp__header_value_encode(const char *s, size_t len)
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
    char *out = mcp__asprintf(MCP__HEADER_B64_PREFIX "%s" MCP__HEADER_B64_SUFFIX, b64);
    free(b64);
    return out;
}

int mcp__header_arg_value(const json_t *v, char **out)
{
    *out = NULL;
    char num[32];
    switch (json_typeof(v)) {
    case JSON_NULL:
        return MCP_ENOENT;
    case JSON_STRING:
        *out = mcp__header_value_encode(json_string_value(v), json_string_length(v));
        return *out != NULL ? MCP_OK : MCP_ENOMEM;
    case JSON_TRUE:
    case JSON_FALSE:
        *out = mcp__strdup(json_is_true(v) ? "true" : "false");
        return *out != NULL ? MCP_OK : MCP_ENOMEM;
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        if (i > MCP__HEADER_MAX_SAFE_INT || i < -MCP__HEADER_MAX_SAFE_INT)
            return MCP_EINVAL;
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, i);
        break;
    }
    case JSON_REAL: {
        /* 42.0 is the integer 42; 3.5 has no header form. */
        double d = json_real_value(v);
        if (!(d >= (double)-MCP__HEADER_MAX_SAFE_INT && d <= (double)MCP__HEADER_MAX_SAFE_INT) ||
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
    mcp__header_tool *tool;
    char *why;
    size_t why_size;
    const char *chain[MCP__HEADER_MAX_DEPTH]; /* the properties leading here (borrowed) */
    char pointer[256];                        /* where we are, for messages */
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
    mcp__header_tool *t = w->tool;
    for (size_t i = 0; i < t->n; i++)
        if (strcasecmp(t->params[i].name, name) == 0)
            return refuse(w, MCP_EINVAL, "x-mcp-header \"%s\" is used twice (case-insensitively)",
                          name);
    if (t->n == MCP__HEADER_MAX_PARAMS)
        return refuse(w, MCP_ELIMIT, "more than %s x-mcp-header annotations", "64");
    mcp__header_param *np = realloc(t->params, (t->n + 1) * sizeof(*np));
    if (np == NULL)
        return MCP_ENOMEM;
    t->params = np;
    mcp__header_param *p = &np[t->n];
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
        if (chain && depth < MCP__HEADER_MAX_DEPTH)
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
        if (chain && depth > MCP__HEADER_MAX_DEPTH)
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

void mcp__header_tool_free(mcp__header_tool *t)
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

int mcp__header_tool_parse(const json_t *input_schema, mcp__header_tool **out, char *why,
                           size_t why_size)
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
        mcp__header_tool_free(w.tool);
        return rc;
    }
    *out = w.tool;
    return MCP_OK;
}

const json_t *mcp__header_param_arg(const mcp__header_param *p, const json_t *args)
{
    const json_t *v = args;
    for (size_t i = 0; i < p->depth && v != NULL; i++)
        v = json_is_object(v) ? json_object_get(v, p->path[i]) : NULL;
    return v;
}

/* ---- Custom headers from tool parameters (2026-07-28, x-mcp-header) ---- */

/* A JSON number as RFC 8259 spells it: how a client writes an integer argument into its
 * header, and the 42.0 a server takes for 42. Not hexadecimal, infinity or nan, no '+',
 * no space: what a proxy routing on the header would not read as that number. */
static int json_number_text(const char *p)
{
    p += *p == '-';
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p += p[1] == '+' || p[1] == '-';
        if (*++p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* Whether a header's text (decoded, len bytes, which may hold a NUL) says the same as the
 * argument v. Numbers compare as numbers (42 and 42.0 are one), booleans as true and
 * false. */
static int header_matches(const char *h, size_t len, const json_t *v)
{
    if (json_is_string(v))
        return len == json_string_length(v) && memcmp(h, json_string_value(v), len) == 0;
    if (len != strlen(h))
        return 0; /* a NUL inside: nothing but a string can hold one */
    if (json_is_boolean(v))
        return strcmp(h, json_is_true(v) ? "true" : "false") == 0;
    if (json_is_number(v))
        return json_number_text(h) && strtod(h, NULL) == json_number_value(v);
    return 1; /* no header stands for any other type (the annotation is invalid there) */
}

/*
 * streamable-http.mdx, Server Behavior for Custom Headers: every parameter the tool's
 * inputSchema marks with x-mcp-header (at the end of a chain of "properties") and that
 * has a value in the arguments (args may be NULL: none) must come as Mcp-Param-{name},
 * equal after decoding; and such a header, when it comes, must be a valid header value
 * even where its parameter has no value. 0, or -1 with why.
 */
static int check(const json_t *schema, const json_t *args, const char *(*get)(void *, const char *),
                 void *user, int depth, char *why, size_t n)
{
    json_t *props = json_object_get(schema, "properties");
    if (!json_is_object(props) || depth > 32)
        return 0;
    const char *key;
    json_t *sub;
    json_object_foreach(props, key, sub)
    {
        json_t *v = json_object_get(args, key);
        if (json_is_null(v))
            v = NULL;
        const char *name = json_string_value(json_object_get(sub, "x-mcp-header"));
        if (name != NULL) {
            char header[160];
            snprintf(header, sizeof header, "mcp-param-%.128s", name);
            const char *h = get(user, header);
            size_t len = 0;
            char *value = h != NULL ? mcp__header_value_decode(h, &len) : NULL;
            const char *bad = NULL;
            if (h != NULL && value == NULL)
                bad = "is not a valid header value";
            else if (v != NULL && h == NULL)
                bad = "is required, the argument has a value";
            else if (v != NULL && !header_matches(value, len, v))
                bad = "does not match the argument";
            free(value);
            if (bad != NULL) {
                snprintf(why, n, "Header mismatch: Mcp-Param-%.128s %s", name, bad);
                return -1;
            }
        }
        /* Into objects, and past absent ones: their parameters' headers are checked too. */
        if ((v == NULL || json_is_object(v)) && check(sub, v, get, user, depth + 1, why, n) != 0)
            return -1;
    }
    return 0;
}

int mcp__param_headers_check(const json_t *schema, const json_t *args,
                             const char *(*get)(void *user, const char *name), void *user,
                             char *why, size_t n)
{
    return check(schema, args, get, user, 0, why, n);
}

/* ---- A client's request headers ---- */

void mcp__header_tools_free(mcp__header_tools *ts)
{
    size_t pos = 0;
    const char *key;
    void *v;
    while (mcp__map_next(&ts->by_name, &pos, &key, &v))
        mcp__header_tool_free(v);
    mcp__map_free(&ts->by_name);
}

void mcp__header_tools_read(mcp__header_tools *ts, json_t *result)
{
    json_t *tools = json_object_get(result, "tools");
    if (!json_is_array(tools))
        return;
    for (size_t i = 0; i < json_array_size(tools);) {
        json_t *tool = json_array_get(tools, i);
        const char *name = json_string_value(json_object_get(tool, "name"));
        mcp__header_tool *heads = NULL;
        char why[300];
        int rc =
            mcp__header_tool_parse(json_object_get(tool, "inputSchema"), &heads, why, sizeof(why));
        if (rc == MCP_EINVAL || rc == MCP_ELIMIT) {
            char q[160];
            mcp__warn("tools/list: tool \"%s\" left out: its x-mcp-header annotations are "
                      "invalid: %s",
                      mcp__quotable(q, sizeof(q), name != NULL ? name : "(no name)"), why);
            json_array_remove(tools, i);
            continue;
        }
        i++;
        if (name == NULL || rc != MCP_OK) {
            mcp__header_tool_free(heads);
            continue;
        }
        mcp__header_tool_free(mcp__map_remove(&ts->by_name, name));
        if (heads == NULL)
            continue;
        if (ts->by_name.len >= MCP__HEADER_MAX_TOOLS ||
            mcp__map_put(&ts->by_name, name, heads) != MCP_OK) {
            if (!ts->full_warned)
                mcp__warn("tools/list: more than %d tools with x-mcp-header annotations; "
                          "the others' are not kept",
                          MCP__HEADER_MAX_TOOLS);
            ts->full_warned = 1;
            mcp__header_tool_free(heads);
        }
    }
}

/* A value that goes into a header as it is: visible ASCII only. */
static int header_safe(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

/* The Mcp-Param headers of a tools/call, from the tool's x-mcp-header annotations. */
static int param_headers(const mcp__header_tools *ts, const char *tool, const json_t *args,
                         int (*add)(void *, const char *, const char *), void *user)
{
    const mcp__header_tool *heads = mcp__map_get(&ts->by_name, tool);
    for (size_t i = 0; heads != NULL && i < heads->n; i++) {
        const mcp__header_param *p = &heads->params[i];
        char *value = NULL;
        const json_t *v = mcp__header_param_arg(p, args);
        int rc = v != NULL ? mcp__header_arg_value(v, &value) : MCP_ENOENT;
        if (rc == MCP_ENOENT)
            continue; /* absent or null: the header is left out */
        if (rc == MCP_EINVAL)
            mcp__warn("tools/call %s: the argument of x-mcp-header \"%s\" has no header "
                      "form (an integer past 2^53, a fraction, an object or an array): not sent",
                      tool, p->name);
        if (rc == MCP_OK) {
            char name[160];
            snprintf(name, sizeof(name), "Mcp-Param-%s", p->name);
            rc = add(user, name, value);
        }
        free(value);
        if (rc != MCP_OK)
            return rc;
    }
    return MCP_OK;
}

int mcp__header_request(const mcp__header_tools *ts, const json_t *msg, const char *version,
                        int (*add)(void *user, const char *name, const char *value), void *user)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    const json_t *params = json_object_get(msg, "params");
    if (version == NULL || method == NULL || !header_safe(version) || !header_safe(method)) {
        mcp__warn("a method or protocol version that cannot go into a header: not sent");
        return MCP_EINVAL;
    }
    int rc = add(user, "MCP-Protocol-Version", version);
    if (rc == MCP_OK)
        rc = add(user, "Mcp-Method", method);
    const char *key = NULL;
    if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
        key = "name";
    else if (strcmp(method, "resources/read") == 0)
        key = "uri";
    else if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
             strcmp(method, "tasks/cancel") == 0)
        key = "taskId"; /* the tasks extension: a balancer routes a task's calls by its id */
    const json_t *name = key != NULL ? json_object_get(params, key) : NULL;
    if (rc == MCP_OK && json_is_string(name)) {
        char *value = mcp__header_value_encode(json_string_value(name), json_string_length(name));
        rc = value != NULL ? add(user, "Mcp-Name", value) : MCP_ENOMEM;
        free(value);
        if (rc == MCP_OK && strcmp(method, "tools/call") == 0)
            rc = param_headers(ts, json_string_value(name), json_object_get(params, "arguments"),
                               add, user);
    }
    return rc;
}
