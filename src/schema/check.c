/* SPDX-License-Identifier: MIT */
/*
 * JSON Schema validation of tool arguments (inputSchema) and structured
 * results (outputSchema): the assertions and applicators of JSON Schema
 * 2020-12 (and draft-07 when $schema names it), as the spec's "JSON Schema
 * Usage" (basic/index) asks. Annotations (title, description, default,
 * examples, format, content*, deprecated, readOnly...) assert nothing;
 * unknown keywords are ignored, as the specification says.
 *
 * One walk applies the schema to the instance. A failure inside anyOf, oneOf,
 * not, if or contains is expected, so those run quiet (no sentence); when they
 * fail as a whole, the closest branch runs again to name what went wrong.
 * unevaluatedProperties and unevaluatedItems are enforced: a schema object
 * collects which members or items it and its in-place subschemas ($ref,
 * allOf, anyOf, oneOf, if/then/else, dependentSchemas) evaluated, from the
 * subschemas that passed only, and only while some schema around the value
 * has an unevaluated* keyword. $dynamicRef follows the dynamic scope (the
 * schema resources entered on the way to it, outermost first). Against the
 * JSON-Schema-Test-Suite (draft2020-12, draft7) it disagrees only where a
 * schema needs another document (remote $ref, metaschemas, vocabularies) or
 * a \p{...} pattern, all of which mcp__schema_valid refuses.
 *
 * Bounds (schema_int.h): nesting of MCP__SCHEMA_MAX_DEPTH applications and a
 * work budget; running past one, an unresolvable $ref or a malformed keyword
 * ends the whole check at once with a sentence saying so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "schema/schema.h"
#include "util/util.h"

_Static_assert(KW_COUNT <= 64, "keywords are a 64-bit mask");

enum { OK = 0, FAIL = 1, FATAL = -1 };

#define REF_CACHE 16

typedef struct seg {
    const char *key; /* NULL: index */
    size_t index;
} seg;

typedef struct ctx {
    const json_t *root;
    const json_t *instance;
    const json_t *resource; /* the innermost schema resource ($id) */
    int dialect;
    int depth;
    size_t steps, max_steps;
    int quiet;        /* inside anyOf, oneOf, not, if, contains: failures write nothing */
    int fail_depth;   /* the path length of the last failure, to pick the closest branch */
    const char *what; /* "property name ": what the value at the path is */
    char *why;
    size_t why_len;
    int path_len;
    seg path[MCP__SCHEMA_MAX_DEPTH + 2];
    /* The dynamic scope: the resources entered, outermost first ($dynamicRef). */
    int nscope;
    const json_t *scope[2 * MCP__SCHEMA_MAX_DEPTH + 2];
    int nrefs;
    struct {
        const json_t *ref;
        const json_t *resource;
        mcp__ref_target target;
    } refs[REF_CACHE];
} ctx;

/* The keywords of one schema object. */
typedef struct kws {
    uint64_t have;
    const json_t *v[KW_COUNT];
} kws;

#define HAS(k, id) ((((k)->have) >> (id)) & 1u)
#define KW(k, id) (HAS(k, id) ? (k)->v[id] : NULL)

/* Which members of an object, or items of an array, were evaluated: bit i for
 * the i-th member (json_object_foreach order) or item. */
typedef struct ann {
    uint64_t *bits;
    size_t n;
    uint64_t inline_bits[2];
} ann;

static int apply(ctx *c, const json_t *s, const json_t *v, ann *out);

/* ---- Sentences ---- */

/* Appends to why, truncating at a UTF-8 character boundary. */
static void why_append(ctx *c, size_t *len, const char *s, size_t n)
{
    if (c->why_len == 0 || *len + 1 >= c->why_len)
        return;
    size_t room = c->why_len - 1 - *len;
    if (n > room) {
        n = room;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(c->why + *len, s, n);
    *len += n;
    c->why[*len] = '\0';
}

static void why_path(ctx *c, size_t *len)
{
    if (c->path_len == 0) {
        why_append(c, len, "(root)", 6);
        return;
    }
    char path[512];
    size_t n = 0;
    for (int i = 0; i < c->path_len && n + 1 < sizeof(path); i++) {
        path[n++] = '/';
        const char *key = c->path[i].key;
        char num[24];
        if (key == NULL) {
            mcp__u64_str(c->path[i].index, num);
            key = num;
        }
        /* RFC 6901: ~ is ~0 and / is ~1. */
        for (const char *p = key; *p && n + 2 < sizeof(path); p++) {
            if (*p == '~' || *p == '/') {
                path[n++] = '~';
                path[n++] = *p == '~' ? '0' : '1';
            } else {
                path[n++] = *p;
            }
        }
    }
    path[n < sizeof(path) ? n : sizeof(path) - 1] = '\0';
    char shown[MCP__SCHEMA_PATH_SHOWN + 1];
    mcp__schema_shorten(path, strlen(path), shown, sizeof(shown));
    why_append(c, len, shown, strlen(shown));
}

static int vfail(ctx *c, const char *fmt, va_list ap)
{
    c->fail_depth = c->path_len;
    if (c->quiet)
        return FAIL;
    char msg[320];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t len = 0;
    if (c->why_len > 0)
        c->why[0] = '\0';
    why_path(c, &len);
    why_append(c, &len, ": ", 2);
    if (c->what != NULL)
        why_append(c, &len, c->what, strlen(c->what));
    why_append(c, &len, msg, strlen(msg));
    return FAIL;
}

static int fail(ctx *c, const char *fmt, ...) MCP_PRINTF(2, 3);
static int fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, fmt, ap);
    va_end(ap);
    return FAIL;
}

/* Ends the check: a malformed schema, a bound reached. Written even when quiet. */
static int fatal(ctx *c, const char *fmt, ...) MCP_PRINTF(2, 3);
static int fatal(ctx *c, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t len = 0;
    if (c->why_len > 0)
        c->why[0] = '\0';
    why_append(c, &len, msg, strlen(msg));
    if (c->path_len > 0) {
        why_append(c, &len, " (at ", 5);
        why_path(c, &len);
        why_append(c, &len, ")", 1);
    }
    return FATAL;
}

static int invalid(ctx *c, const char *keyword, const char *must)
{
    return fatal(c, "invalid schema: \"%s\" must be %s", keyword, must);
}

static int allow_instance(ctx *c);

static int spend(ctx *c, size_t steps)
{
    c->steps += steps;
    /* The allowance for the instance's size is counted only when it is needed. */
    if (c->steps <= c->max_steps || (allow_instance(c) && c->steps <= c->max_steps))
        return OK;
    return fatal(c, "the schema is too complex to check: more than %zu steps", c->max_steps);
}

/* A short JSON text of v for a sentence ("..." past 60 bytes). */
static void brief(const json_t *v, char *out, size_t n)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL) {
        snprintf(out, n, "the given value");
        return;
    }
    size_t len = strlen(text);
    if (len > 60) {
        len = 57;
        while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
            len--;
        snprintf(out, n, "%.*s...", (int)len, text);
    } else {
        snprintf(out, n, "%s", text);
    }
    free(text);
}

static void number_text(const json_t *v, char *out, size_t n)
{
    if (json_is_integer(v))
        snprintf(out, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        snprintf(out, n, "%.15g", json_real_value(v));
}

/* ---- Evaluated members and items ---- */

static int ann_init(ctx *c, ann *a, const json_t *v)
{
    a->n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    a->bits = a->inline_bits;
    a->inline_bits[0] = a->inline_bits[1] = 0;
    if (a->n > 128 && (a->bits = calloc((a->n + 63) / 64, sizeof(uint64_t))) == NULL)
        return fatal(c, "out of memory");
    return OK;
}

static void ann_free(ann *a)
{
    if (a->bits != a->inline_bits)
        free(a->bits);
}

static void ann_mark(ann *a, size_t i)
{
    if (a != NULL && i < a->n)
        a->bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static int ann_has(const ann *a, size_t i)
{
    return (a->bits[i / 64] >> (i % 64)) & 1;
}

static void ann_merge(ann *dst, const ann *src)
{
    for (size_t i = 0; i < (src->n + 63) / 64; i++)
        dst->bits[i] |= src->bits[i];
}

/* ---- Keyword values ---- */

static void collect(ctx *c, const json_t *s, kws *k)
{
    const char *key;
    size_t key_len;
    json_t *value;
    k->have = 0;
    json_object_keylen_foreach((json_t *)s, key, key_len, value)
    {
        const mcp__kw_info *info = mcp__schema_keyword(key, key_len, c->dialect);
        if (info != NULL) {
            k->have |= (uint64_t)1 << info->id;
            k->v[info->id] = value;
        }
    }
}

/* A count keyword (maxLength...): a non-negative integer (2.0 too). */
static int count(ctx *c, const json_t *kw, const char *name, size_t *out)
{
    if (!mcp__schema_is_integral(kw) || json_number_value(kw) < 0)
        return invalid(c, name, "a non-negative integer");
    if (json_is_integer(kw)) {
        *out = (size_t)json_integer_value(kw);
        if ((json_int_t)*out != json_integer_value(kw))
            *out = SIZE_MAX;
    } else
        *out = json_real_value(kw) >= (double)SIZE_MAX ? SIZE_MAX : (size_t)json_real_value(kw);
    return OK;
}

/* maxItems/minItems, maxProperties/minProperties, maxLength/minLength: n
 * items, properties or characters (unit) against the pair given by ids. */
static int check_size(ctx *c, const kws *k, int max_id, int min_id, size_t n, const char *unit)
{
    static const char *const names[KW_COUNT] = {
        [KW_MAX_ITEMS] = "maxItems",           [KW_MIN_ITEMS] = "minItems",
        [KW_MAX_PROPERTIES] = "maxProperties", [KW_MIN_PROPERTIES] = "minProperties",
        [KW_MAX_LENGTH] = "maxLength",         [KW_MIN_LENGTH] = "minLength",
    };
    const json_t *kw;
    size_t bound;
    if ((kw = KW(k, max_id)) != NULL) {
        if (count(c, kw, names[max_id], &bound) != OK)
            return FATAL;
        if (n > bound)
            return fail(c, "must have at most %zu %s (it has %zu)", bound, unit, n);
    }
    if ((kw = KW(k, min_id)) != NULL) {
        if (count(c, kw, names[min_id], &bound) != OK)
            return FATAL;
        if (n < bound)
            return fail(c, "must have at least %zu %s (it has %zu)", bound, unit, n);
    }
    return OK;
}

static int push(ctx *c, const char *key, size_t index)
{
    c->path[c->path_len].key = key;
    c->path[c->path_len].index = index;
    c->path_len++;
    return OK;
}

static void pop(ctx *c)
{
    c->path_len--;
}

/* Adds the allowance for the instance's size to the budget, once. */
static int allow_instance(ctx *c)
{
    if (c->max_steps != MCP__SCHEMA_MAX_STEPS)
        return 0;
    c->max_steps +=
        MCP__SCHEMA_STEPS_PER_VALUE * mcp__schema_count_values(c->instance, MCP__SCHEMA_MAX_DEPTH);
    return 1;
}

/* 1 when the pattern matches s, 0 when not, FATAL. */
static int matches(ctx *c, const char *pattern, size_t plen, const char *s, size_t slen)
{
    char why[200];
    int m;
    do {
        if (spend(c, 1) != OK)
            return FATAL;
        size_t left = (c->max_steps - c->steps) * MCP__SCHEMA_OPS_PER_STEP, budget = left;
        m = mcp__schema_pattern_match(pattern, plen, s, slen, &budget, why, sizeof(why));
        c->steps += (left - budget) / MCP__SCHEMA_OPS_PER_STEP;
        /* Out of budget before the allowance for a big instance: again with it. */
    } while (m == -2 && allow_instance(c));
    if (m == -2)
        return fatal(c,
                     "the schema is too complex to check: more than %zu steps (a pattern "
                     "on a string of %zu bytes)",
                     c->max_steps, slen);
    return m >= 0 ? m : fatal(c, "invalid schema: %s", why);
}

/* ---- Assertions ---- */

/* 1, 0, or -1 for a name that is no type. */
static int type_is(const char *t, const json_t *v)
{
    switch (t[0]) {
    case 'o':
        return strcmp(t, "object") == 0 ? json_is_object(v) : -1;
    case 'a':
        return strcmp(t, "array") == 0 ? json_is_array(v) : -1;
    case 's':
        return strcmp(t, "string") == 0 ? json_is_string(v) : -1;
    case 'b':
        return strcmp(t, "boolean") == 0 ? json_is_boolean(v) : -1;
    case 'n':
        if (strcmp(t, "null") == 0)
            return json_is_null(v);
        return strcmp(t, "number") == 0 ? json_is_number(v) : -1;
    case 'i':
        return strcmp(t, "integer") == 0 ? mcp__schema_is_integral(v) : -1;
    default:
        return -1;
    }
}

static int check_type(ctx *c, const json_t *type, const json_t *v)
{
    const char *bad = "a type name or an array of type names";
    if (json_is_string(type)) {
        int is = type_is(json_string_value(type), v);
        if (is < 0)
            return invalid(c, "type", bad);
        if (is)
            return OK;
        const char *t = json_string_value(type);
        return fail(c, "expected %s %s, got %s", strchr("aeiou", t[0]) ? "an" : "a", t,
                    mcp__schema_type_name(v));
    }
    if (!json_is_array(type))
        return invalid(c, "type", bad);
    int any = 0;
    for (size_t i = 0; i < json_array_size(type); i++) {
        const json_t *t = json_array_get(type, i);
        int is = json_is_string(t) ? type_is(json_string_value(t), v) : -1;
        if (is < 0)
            return invalid(c, "type", bad);
        any |= is;
    }
    if (any)
        return OK;
    char names[160] = "";
    size_t len = 0;
    for (size_t i = 0; i < json_array_size(type) && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
                                i == 0                           ? ""
                                : i + 1 == json_array_size(type) ? " or "
                                                                 : ", ",
                                json_string_value(json_array_get(type, i)));
    return fail(c, "expected %s, got %s", names, mcp__schema_type_name(v));
}

/* enum (one_of: v equals a value of the array allowed) or const (v equals allowed). */
static int check_equal(ctx *c, const json_t *allowed, int one_of, const json_t *v)
{
    if (one_of && !json_is_array(allowed))
        return invalid(c, "enum", "an array");
    size_t n = one_of ? json_array_size(allowed) : 1;
    for (size_t i = 0; i < n; i++) {
        size_t steps = 0;
        int eq = mcp__schema_equal(one_of ? json_array_get(allowed, i) : allowed, v, &steps);
        if (spend(c, steps) != OK)
            return FATAL;
        if (eq)
            return OK;
    }
    if (c->quiet)
        return fail(c, "-");
    char text[80];
    brief(allowed, text, sizeof(text));
    return fail(c, one_of ? "must be one of %s" : "must be %s", text);
}

static int check_number(ctx *c, const kws *k, const json_t *v)
{
    static const struct {
        int id;
        const char *name, *must;
        int bad_sign; /* the comparison of value with bound that fails */
        int inclusive;
    } bounds[] = {
        {KW_MAXIMUM, "maximum", "at most", 1, 1},
        {KW_EXCLUSIVE_MAXIMUM, "exclusiveMaximum", "less than", 1, 0},
        {KW_MINIMUM, "minimum", "at least", -1, 1},
        {KW_EXCLUSIVE_MINIMUM, "exclusiveMinimum", "greater than", -1, 0},
    };
    char num[40];
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
        const json_t *b = KW(k, bounds[i].id);
        if (b == NULL)
            continue;
        if (!json_is_number(b))
            return invalid(c, bounds[i].name, "a number");
        int cmp = mcp__schema_numcmp(v, b);
        if (cmp == bounds[i].bad_sign || (cmp == 0 && !bounds[i].inclusive)) {
            number_text(b, num, sizeof(num));
            return fail(c, "must be %s %s", bounds[i].must, num);
        }
    }
    const json_t *m = KW(k, KW_MULTIPLE_OF);
    if (m != NULL) {
        if (!json_is_number(m) || !(json_number_value(m) > 0))
            return invalid(c, "multipleOf", "a number above 0");
        if (!mcp__schema_multiple_of(v, m)) {
            number_text(m, num, sizeof(num));
            return fail(c, "must be a multiple of %s", num);
        }
    }
    return OK;
}

static int check_string(ctx *c, const kws *k, const json_t *v)
{
    if (HAS(k, KW_MAX_LENGTH) || HAS(k, KW_MIN_LENGTH)) {
        int rc =
            check_size(c, k, KW_MAX_LENGTH, KW_MIN_LENGTH, mcp__schema_length(v), "characters");
        if (rc != OK)
            return rc;
    }
    const json_t *pattern = KW(k, KW_PATTERN);
    if (pattern != NULL) {
        if (!json_is_string(pattern))
            return invalid(c, "pattern", "a string");
        int m = matches(c, json_string_value(pattern), json_string_length(pattern),
                        json_string_value(v), json_string_length(v));
        if (m == FATAL)
            return FATAL;
        if (!m)
            return fail(c, "does not match the pattern %s", json_string_value(pattern));
    }
    return OK;
}

/* ---- Objects ---- */

static int check_required(ctx *c, const json_t *req, const json_t *v, const char *name,
                          const char *because)
{
    if (!json_is_array(req))
        return invalid(c, name, "an array of strings");
    for (size_t i = 0; i < json_array_size(req); i++) {
        const json_t *r = json_array_get(req, i);
        if (!json_is_string(r))
            return invalid(c, name, "an array of strings");
        if (json_object_get(v, json_string_value(r)) == NULL) {
            push(c, json_string_value(r), 0);
            int rc = because ? fail(c, "is required when \"%s\" is present", because)
                             : fail(c, "is required");
            pop(c);
            return rc;
        }
    }
    return OK;
}

/* dependentRequired, dependentSchemas, and draft-07 dependencies (either). */
static int check_dependents(ctx *c, const json_t *deps, const json_t *v, const char *name, ann *col)
{
    if (!json_is_object(deps))
        return invalid(c, name, "an object");
    const char *key;
    json_t *dep;
    json_object_foreach((json_t *)deps, key, dep)
    {
        if (json_object_get(v, key) == NULL)
            continue;
        int rc;
        if (json_is_array(dep) && strcmp(name, "dependentSchemas") != 0)
            rc = check_required(c, dep, v, name, key);
        else if (strcmp(name, "dependentRequired") == 0)
            rc = invalid(c, name, "an object of arrays of strings");
        else
            rc = apply(c, dep, v, col);
        if (rc != OK)
            return rc;
    }
    return OK;
}

static int property_names(ctx *c, const json_t *names, const json_t *v)
{
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)v, key, member)
    {
        json_t *name = json_string(key);
        if (name == NULL)
            return fatal(c, "out of memory");
        push(c, key, 0);
        const char *saved = c->what;
        c->what = "the property name ";
        int rc = apply(c, names, name, NULL);
        c->what = saved;
        pop(c);
        json_decref(name);
        if (rc != OK)
            return rc;
    }
    return OK;
}

/* properties, patternProperties and additionalProperties, in one pass over the members. */
static int check_members(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *props = KW(k, KW_PROPERTIES), *patterns = KW(k, KW_PATTERN_PROPERTIES),
                 *extra = KW(k, KW_ADDITIONAL_PROPERTIES);
    if (props != NULL && !json_is_object(props))
        return invalid(c, "properties", "an object");
    if (patterns != NULL && !json_is_object(patterns))
        return invalid(c, "patternProperties", "an object");
    const char *key;
    json_t *member;
    size_t i = 0;
    json_object_foreach((json_t *)v, key, member)
    {
        int evaluated = 0, rc = OK;
        push(c, key, 0);
        const json_t *sub = props ? json_object_get(props, key) : NULL;
        if (sub != NULL) {
            evaluated = 1;
            rc = apply(c, sub, member, NULL);
        }
        if (patterns != NULL && rc == OK) {
            const char *pattern;
            json_t *psub;
            json_object_foreach((json_t *)patterns, pattern, psub)
            {
                int m = matches(c, pattern, strlen(pattern), key, strlen(key));
                if (m == 1) {
                    evaluated = 1;
                    rc = apply(c, psub, member, NULL);
                } else if (m == FATAL) {
                    rc = FATAL;
                }
                if (rc != OK)
                    break;
            }
        }
        if (!evaluated && extra != NULL && rc == OK) {
            evaluated = 1;
            rc = json_is_false(extra) ? fail(c, "is not an allowed property")
                                      : apply(c, extra, member, NULL);
        }
        pop(c);
        if (rc != OK)
            return rc;
        if (evaluated)
            ann_mark(col, i);
        i++;
    }
    return OK;
}

static int check_object(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *kw;
    int rc =
        check_size(c, k, KW_MAX_PROPERTIES, KW_MIN_PROPERTIES, json_object_size(v), "properties");
    if (rc == OK && (kw = KW(k, KW_REQUIRED)) != NULL)
        rc = check_required(c, kw, v, "required", NULL);
    if (rc == OK && (kw = KW(k, KW_DEPENDENT_REQUIRED)) != NULL)
        rc = check_dependents(c, kw, v, "dependentRequired", NULL);
    if (rc == OK && (kw = KW(k, KW_DEPENDENCIES)) != NULL)
        rc = check_dependents(c, kw, v, "dependencies", col);
    if (rc == OK && (HAS(k, KW_PROPERTIES) || HAS(k, KW_PATTERN_PROPERTIES) ||
                     HAS(k, KW_ADDITIONAL_PROPERTIES)))
        rc = check_members(c, k, v, col);
    if (rc == OK && (kw = KW(k, KW_PROPERTY_NAMES)) != NULL && !json_is_true(kw))
        rc = property_names(c, kw, v);
    if (rc == OK && (kw = KW(k, KW_DEPENDENT_SCHEMAS)) != NULL)
        rc = check_dependents(c, kw, v, "dependentSchemas", col);
    return rc;
}

/* ---- Arrays ---- */

typedef struct hashed {
    uint64_t hash;
    size_t index;
} hashed;

static int hashed_cmp(const void *a, const void *b)
{
    const hashed *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int check_unique(ctx *c, const json_t *v)
{
    size_t n = json_array_size(v), first = 0, second = 0, steps = 0;
    int dup = 0;
    if (n <= 16) {
        for (size_t i = 0; i < n && !dup; i++)
            for (size_t j = i + 1; j < n && !dup; j++)
                if (mcp__schema_equal(json_array_get(v, i), json_array_get(v, j), &steps))
                    dup = 1, first = i, second = j;
    } else {
        /* Sorted by hash, only neighbours with the same hash are compared. */
        hashed *h = malloc(n * sizeof(*h));
        if (h == NULL)
            return fatal(c, "out of memory");
        for (size_t i = 0; i < n; i++)
            h[i] = (hashed){mcp__schema_hash(json_array_get(v, i)), i};
        qsort(h, n, sizeof(*h), hashed_cmp);
        steps += n;
        for (size_t i = 0; i + 1 < n && !dup; i++)
            for (size_t j = i + 1; j < n && h[j].hash == h[i].hash && !dup; j++)
                if (mcp__schema_equal(json_array_get(v, h[i].index), json_array_get(v, h[j].index),
                                      &steps))
                    dup = 1, first = h[i].index, second = h[j].index;
        free(h);
    }
    if (spend(c, steps) != OK)
        return FATAL;
    if (dup)
        return fail(c, "must not hold equal items (items %zu and %zu are equal)", first, second);
    return OK;
}

static int check_contains(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *sub = KW(k, KW_CONTAINS), *kw;
    size_t min = 1, max = SIZE_MAX, found = 0, n = json_array_size(v);
    if ((kw = KW(k, KW_MIN_CONTAINS)) != NULL && count(c, kw, "minContains", &min) != OK)
        return FATAL;
    if ((kw = KW(k, KW_MAX_CONTAINS)) != NULL && count(c, kw, "maxContains", &max) != OK)
        return FATAL;
    c->quiet++;
    int rc = OK;
    for (size_t i = 0; i < n; i++) {
        push(c, NULL, i);
        rc = apply(c, sub, json_array_get(v, i), NULL);
        pop(c);
        if (rc == FATAL)
            break;
        if (rc == OK) {
            found++;
            ann_mark(col, i);
        }
        rc = OK;
        if (col == NULL && max == SIZE_MAX && found >= min)
            break;
        if (found > max)
            break;
    }
    c->quiet--;
    if (rc == FATAL)
        return FATAL;
    if (found < min)
        return fail(c, "must hold at least %zu item%s matching contains (it has %zu)", min,
                    min == 1 ? "" : "s", found);
    if (found > max)
        return fail(c, "must hold at most %zu item%s matching contains (it has more)", max,
                    max == 1 ? "" : "s");
    return OK;
}

static int items_from(ctx *c, const json_t *sub, const json_t *v, size_t from, ann *col)
{
    for (size_t i = from; i < json_array_size(v); i++) {
        push(c, NULL, i);
        int rc = apply(c, sub, json_array_get(v, i), NULL);
        pop(c);
        if (rc != OK)
            return rc;
        ann_mark(col, i);
    }
    return OK;
}

static int check_array(ctx *c, const kws *k, const json_t *v, ann *col)
{
    size_t n = json_array_size(v);
    const json_t *kw;
    int size_rc = check_size(c, k, KW_MAX_ITEMS, KW_MIN_ITEMS, n, "items");
    if (size_rc != OK)
        return size_rc;
    if ((kw = KW(k, KW_UNIQUE_ITEMS)) != NULL) {
        if (!json_is_boolean(kw))
            return invalid(c, "uniqueItems", "a boolean");
        int rc = json_is_true(kw) ? check_unique(c, v) : OK;
        if (rc != OK)
            return rc;
    }
    /* A tuple: prefixItems, or draft-07's array form of items. */
    const json_t *items = KW(k, KW_ITEMS), *tuple = KW(k, KW_PREFIX_ITEMS), *rest = items;
    if (c->dialect == MCP__DIALECT_07 && json_is_array(items)) {
        tuple = items;
        rest = KW(k, KW_ADDITIONAL_ITEMS);
    }
    size_t prefix = 0;
    if (tuple != NULL) {
        if (!json_is_array(tuple))
            return invalid(c, "prefixItems", "an array of schemas");
        prefix = json_array_size(tuple) < n ? json_array_size(tuple) : n;
        for (size_t i = 0; i < prefix; i++) {
            push(c, NULL, i);
            int rc = apply(c, json_array_get(tuple, i), json_array_get(v, i), NULL);
            pop(c);
            if (rc != OK)
                return rc;
            ann_mark(col, i);
        }
    }
    if (rest != NULL) {
        if (json_is_array(rest))
            return invalid(c, "items", "a schema (a tuple is prefixItems in 2020-12)");
        int rc = items_from(c, rest, v, prefix, col);
        if (rc != OK)
            return rc;
    }
    if (HAS(k, KW_CONTAINS))
        return check_contains(c, k, v, col);
    return OK;
}

/* ---- In-place applicators ---- */

/* Enters resource (when it is not the current one) for the rest of an application. */
static const json_t *enter(ctx *c, const json_t *resource)
{
    const json_t *saved = c->resource;
    if (resource != saved) {
        c->scope[c->nscope++] = resource;
        c->resource = resource;
    }
    return saved;
}

static void leave(ctx *c, const json_t *saved)
{
    if (c->resource != saved) {
        c->nscope--;
        c->resource = saved;
    }
}

/*
 * 2020-12 $dynamicRef: when the target that "#name" resolves to has
 * "$dynamicAnchor": "name" itself, the outermost resource of the dynamic scope
 * with such an anchor is the target instead.
 */
static void dynamic_target(ctx *c, const char *ref, mcp__ref_target *t)
{
    const char *name = strchr(ref, '#');
    const char *own = json_string_value(json_object_get(t->schema, "$dynamicAnchor"));
    if (name == NULL || name[1] == '\0' || name[1] == '/' || own == NULL ||
        strcmp(own, name + 1) != 0)
        return;
    for (int i = 0; i < c->nscope; i++) {
        size_t steps = 0;
        const json_t *found = mcp__schema_dynamic_anchor(c->scope[i], c->dialect, name + 1, &steps);
        c->steps += steps;
        if (found != NULL) {
            t->schema = found;
            t->resource = c->scope[i];
            return;
        }
    }
}

static int apply_ref(ctx *c, const json_t *ref, int dynamic, const json_t *v, ann *col)
{
    if (!json_is_string(ref))
        return invalid(c, dynamic ? "$dynamicRef" : "$ref", "a string");
    mcp__ref_target t;
    int i;
    for (i = 0; i < c->nrefs; i++)
        if (c->refs[i].ref == ref && c->refs[i].resource == c->resource)
            break;
    if (i < c->nrefs) {
        t = c->refs[i].target;
    } else {
        char why[300];
        size_t steps = 0;
        int rc = mcp__schema_resolve(c->root, c->dialect, c->resource, json_string_value(ref), &t,
                                     &steps, why, sizeof(why));
        if (spend(c, steps) != OK)
            return FATAL;
        if (rc != 0)
            return fatal(c, "invalid schema: %s", why);
        if (c->nrefs < REF_CACHE) {
            c->refs[c->nrefs].ref = ref;
            c->refs[c->nrefs].resource = c->resource;
            c->refs[c->nrefs].target = t;
            c->nrefs++;
        }
    }
    if (dynamic) {
        dynamic_target(c, json_string_value(ref), &t);
        if (spend(c, 0) != OK)
            return FATAL;
    }
    const json_t *saved = enter(c, t.resource);
    int rc = apply(c, t.schema, v, col);
    leave(c, saved);
    return rc;
}

static int check_array_of_schemas(ctx *c, const json_t *kw, const char *name)
{
    if (!json_is_array(kw) || json_array_size(kw) == 0)
        return invalid(c, name, "a non-empty array of schemas");
    return OK;
}

/* Writes "<path>: <what>; the closest, <name>[<index>], fails: <its sentence>" by
 * running that branch again, loud. */
static int explain_branches(ctx *c, const json_t *branches, size_t closest, const json_t *v,
                            const char *name, const char *what)
{
    c->quiet--;
    int rc = apply(c, json_array_get(branches, closest), v, NULL);
    if (rc != FATAL) {
        char inner[256];
        snprintf(inner, sizeof(inner), "%s", c->why_len > 0 ? c->why : "");
        int depth = c->fail_depth;
        rc = fail(c, "%s; the closest, %s[%zu], fails: %s", what, name, closest, inner);
        c->fail_depth = depth;
    }
    c->quiet++;
    return rc;
}

static int check_any_of(ctx *c, const json_t *any, const json_t *v, ann *col)
{
    if (check_array_of_schemas(c, any, "anyOf") != OK)
        return FATAL;
    size_t n = json_array_size(any), closest = 0;
    int passed = 0, best = -1, rc = OK;
    c->quiet++;
    for (size_t i = 0; i < n; i++) {
        rc = apply(c, json_array_get(any, i), v, col);
        if (rc == FATAL)
            break;
        if (rc == OK) {
            passed = 1;
            if (col == NULL)
                break; /* no annotations wanted: the others need not run */
        } else if (c->fail_depth > best) {
            best = c->fail_depth;
            closest = i;
        }
    }
    if (rc != FATAL && !passed)
        rc = c->quiet > 1
                 ? fail(c, "-")
                 : explain_branches(c, any, closest, v, "anyOf", "matches no schema of anyOf");
    else if (rc != FATAL)
        rc = OK;
    c->quiet--;
    if (rc == FAIL && best >= 0 && c->fail_depth < best)
        c->fail_depth = best;
    return rc;
}

static int check_one_of(ctx *c, const json_t *one, const json_t *v, ann *col)
{
    if (check_array_of_schemas(c, one, "oneOf") != OK)
        return FATAL;
    size_t n = json_array_size(one), closest = 0, first = 0, second = 0;
    int passed = 0, best = -1, rc = OK;
    ann mine, *keep = NULL;
    if (col != NULL) {
        if (ann_init(c, &mine, v) != OK)
            return FATAL;
        keep = &mine;
    }
    c->quiet++;
    for (size_t i = 0; i < n && passed < 2; i++) {
        /* Only the branch that passes alone gives its annotations. */
        rc = apply(c, json_array_get(one, i), v, passed == 0 ? keep : NULL);
        if (rc == FATAL)
            break;
        if (rc == OK) {
            if (passed++ == 0)
                first = i;
            else
                second = i;
        } else if (c->fail_depth > best) {
            best = c->fail_depth;
            closest = i;
        }
    }
    if (rc != FATAL) {
        if (passed == 1) {
            rc = OK;
        } else if (c->quiet > 1) {
            rc = fail(c, "-");
        } else if (passed == 0) {
            rc = explain_branches(c, one, closest, v, "oneOf", "matches no schema of oneOf");
        } else {
            c->quiet--;
            rc = fail(c, "matches more than one schema of oneOf (oneOf[%zu] and oneOf[%zu])", first,
                      second);
            c->quiet++;
        }
    }
    c->quiet--;
    if (rc == OK && keep != NULL)
        ann_merge(col, keep);
    if (keep != NULL)
        ann_free(keep);
    return rc;
}

static int check_not(ctx *c, const json_t * not, const json_t *v)
{
    c->quiet++;
    int rc = apply(c, not, v, NULL);
    c->quiet--;
    if (rc == FATAL)
        return FATAL;
    return rc == OK ? fail(c, "must not match the schema of \"not\"") : OK;
}

static int check_if(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *then = KW(k, KW_THEN), *els = KW(k, KW_ELSE);
    if (then == NULL && els == NULL && col == NULL)
        return OK; /* if alone asserts nothing */
    c->quiet++;
    int rc = apply(c, KW(k, KW_IF), v, col);
    c->quiet--;
    if (rc == FATAL)
        return FATAL;
    const json_t *next = rc == OK ? then : els;
    return next != NULL ? apply(c, next, v, col) : OK;
}

static int check_in_place(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *kw;
    int rc = OK;
    if ((kw = KW(k, KW_ALL_OF)) != NULL) {
        if (check_array_of_schemas(c, kw, "allOf") != OK)
            return FATAL;
        for (size_t i = 0; i < json_array_size(kw) && rc == OK; i++)
            rc = apply(c, json_array_get(kw, i), v, col);
    }
    if (rc == OK && (kw = KW(k, KW_ANY_OF)) != NULL)
        rc = check_any_of(c, kw, v, col);
    if (rc == OK && (kw = KW(k, KW_ONE_OF)) != NULL)
        rc = check_one_of(c, kw, v, col);
    if (rc == OK && (kw = KW(k, KW_NOT)) != NULL)
        rc = check_not(c, kw, v);
    if (rc == OK && HAS(k, KW_IF))
        rc = check_if(c, k, v, col);
    return rc;
}

static int check_unevaluated(ctx *c, const kws *k, const json_t *v, ann *col)
{
    const json_t *kw;
    if (json_is_object(v) && (kw = KW(k, KW_UNEVALUATED_PROPERTIES)) != NULL) {
        const char *key;
        json_t *member;
        size_t i = 0;
        json_object_foreach((json_t *)v, key, member)
        {
            if (!ann_has(col, i)) {
                push(c, key, 0);
                int rc = json_is_false(kw) ? fail(c, "is not an allowed property")
                                           : apply(c, kw, member, NULL);
                pop(c);
                if (rc != OK)
                    return rc;
                ann_mark(col, i);
            }
            i++;
        }
    }
    if (json_is_array(v) && (kw = KW(k, KW_UNEVALUATED_ITEMS)) != NULL) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (ann_has(col, i))
                continue;
            push(c, NULL, i);
            int rc = json_is_false(kw) ? fail(c, "is not allowed: no schema evaluates this item")
                                       : apply(c, kw, json_array_get(v, i), NULL);
            pop(c);
            if (rc != OK)
                return rc;
            ann_mark(col, i);
        }
    }
    return OK;
}

/* ---- One schema object ---- */

static int apply_keywords(ctx *c, const kws *k, const json_t *v, ann *out)
{
    /* Draft-07: a $ref makes its siblings ignored. */
    if (c->dialect == MCP__DIALECT_07 && HAS(k, KW_REF))
        return apply_ref(c, KW(k, KW_REF), 0, v, out);
    ann mine, *col = NULL;
    int want = out != NULL || (json_is_object(v) && HAS(k, KW_UNEVALUATED_PROPERTIES)) ||
               (json_is_array(v) && HAS(k, KW_UNEVALUATED_ITEMS));
    if (want && (json_is_object(v) || json_is_array(v))) {
        if (ann_init(c, &mine, v) != OK)
            return FATAL;
        col = &mine;
    }
    const json_t *kw;
    int rc = OK;
    if ((kw = KW(k, KW_TYPE)) != NULL)
        rc = check_type(c, kw, v);
    if (rc == OK && (kw = KW(k, KW_ENUM)) != NULL)
        rc = check_equal(c, kw, 1, v);
    if (rc == OK && (kw = KW(k, KW_CONST)) != NULL)
        rc = check_equal(c, kw, 0, v);
    if (rc == OK && json_is_number(v))
        rc = check_number(c, k, v);
    else if (rc == OK && json_is_string(v))
        rc = check_string(c, k, v);
    if (rc == OK && (kw = KW(k, KW_REF)) != NULL)
        rc = apply_ref(c, kw, 0, v, col);
    if (rc == OK && (kw = KW(k, KW_DYNAMIC_REF)) != NULL)
        rc = apply_ref(c, kw, 1, v, col);
    if (rc == OK && json_is_object(v))
        rc = check_object(c, k, v, col);
    else if (rc == OK && json_is_array(v))
        rc = check_array(c, k, v, col);
    if (rc == OK)
        rc = check_in_place(c, k, v, col);
    if (rc == OK && col != NULL)
        rc = check_unevaluated(c, k, v, col);
    if (rc == OK && out != NULL && col != NULL)
        ann_merge(out, col);
    if (col != NULL)
        ann_free(col);
    return rc;
}

static int apply(ctx *c, const json_t *s, const json_t *v, ann *out)
{
    if (json_is_true(s))
        return OK;
    if (json_is_false(s))
        return fail(c, "is not allowed here (the schema is false)");
    if (!json_is_object(s))
        return fatal(c, "invalid schema: a subschema must be an object or a boolean");
    if (spend(c, 1) != OK)
        return FATAL;
    if (c->depth >= MCP__SCHEMA_MAX_DEPTH)
        return fatal(c, "the schema is too complex to check: subschemas applied more than %d deep",
                     MCP__SCHEMA_MAX_DEPTH);
    kws k;
    collect(c, s, &k);
    const json_t *saved = c->resource;
    if (HAS(&k, KW_ID) && mcp__schema_is_resource(s, c->dialect))
        enter(c, s);
    c->depth++;
    int rc = apply_keywords(c, &k, v, out);
    c->depth--;
    leave(c, saved);
    return rc;
}

int mcp__schema_check(const json_t *schema, const json_t *value, char *why, size_t why_len)
{
    if (why_len > 0)
        why[0] = '\0';
    if (schema == NULL)
        return 0;
    ctx c;
    c.root = schema;
    c.resource = schema;
    c.depth = 0;
    c.steps = 0;
    c.instance = value;
    c.max_steps = MCP__SCHEMA_MAX_STEPS;
    c.quiet = 0;
    c.fail_depth = 0;
    c.what = NULL;
    c.why = why;
    c.why_len = why_len;
    c.path_len = 0;
    c.nscope = 1;
    c.scope[0] = schema;
    c.nrefs = 0;
    const char *name;
    if ((c.dialect = mcp__schema_dialect(schema, &name)) == 0) {
        fatal(&c, "invalid schema: the dialect %s is not supported (2020-12 and draft-07 are)",
              name ? name : "(a $schema that is not a string)");
        return -1;
    }
    int rc = apply(&c, schema, value, NULL);
    if (rc == OK)
        return 0;
    if (why_len > 0 && why[0] == '\0')
        snprintf(why, why_len, "does not match the schema");
    return -1;
}
