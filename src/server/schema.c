/*
 * The subset of JSON Schema that tool input and output schemas use in
 * practice. It exists so that bad arguments get an answer naming the field
 * before a handler sees them; keywords it does not know are taken as
 * satisfied rather than refused.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server/server_int.h"

static int type_matches(const char *type, const json_t *v)
{
    if (strcmp(type, "object") == 0)
        return json_is_object(v);
    if (strcmp(type, "array") == 0)
        return json_is_array(v);
    if (strcmp(type, "string") == 0)
        return json_is_string(v);
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(type, "null") == 0)
        return json_is_null(v);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    if (strcmp(type, "integer") == 0)
        return json_is_integer(v) ||
               (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v));
    return 1;
}

/* JSON Schema counts characters (code points), not bytes: skip UTF-8 continuation bytes. */
static size_t utf8_length(const json_t *v)
{
    const unsigned char *p = (const unsigned char *)json_string_value(v);
    size_t n = json_string_length(v), count = 0;
    for (size_t i = 0; i < n; i++)
        count += (p[i] & 0xC0) != 0x80;
    return count;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int fail(char *why, size_t n, const char *path, const char *fmt, const char *detail)
{
    char what[200];
    snprintf(what, sizeof(what), fmt, detail);
    snprintf(why, n, "\"%s\" %s", path[0] ? path : "(arguments)", what);
    return -1;
}

static int check(const json_t *schema, const json_t *v, const char *path, char *why, size_t n,
                 int depth)
{
    if (!json_is_object(schema) || depth > 32)
        return 0;
    json_t *type = json_object_get(schema, "type");
    if (json_is_string(type) && !type_matches(json_string_value(type), v)) {
        char expected[64];
        snprintf(expected, sizeof(expected), "must be %s%s",
                 strchr("aeiou", json_string_value(type)[0]) ? "an " : "a ",
                 json_string_value(type));
        return fail(why, n, path, "%s", expected);
    }
    if (json_is_array(type)) {
        size_t i;
        json_t *t;
        int any = 0;
        json_array_foreach(type, i, t) any |=
            json_is_string(t) && type_matches(json_string_value(t), v);
        if (!any)
            return fail(why, n, path, "has the wrong type (%s)", type_name(v));
    }
    json_t *en = json_object_get(schema, "enum");
    if (json_is_array(en)) {
        size_t i;
        json_t *e;
        int found = 0;
        json_array_foreach(en, i, e) found |= json_equal(e, v);
        if (!found)
            return fail(why, n, path, "must be one of the listed values%s", "");
    }
    json_t *cn = json_object_get(schema, "const");
    if (cn != NULL && !json_equal(cn, v))
        return fail(why, n, path, "must equal the constant value%s", "");
    if (json_is_number(v)) {
        json_t *min = json_object_get(schema, "minimum");
        json_t *max = json_object_get(schema, "maximum");
        if (json_is_number(min) && json_number_value(v) < json_number_value(min))
            return fail(why, n, path, "is below the minimum%s", "");
        if (json_is_number(max) && json_number_value(v) > json_number_value(max))
            return fail(why, n, path, "is above the maximum%s", "");
    }
    if (json_is_string(v)) {
        json_t *minl = json_object_get(schema, "minLength");
        json_t *maxl = json_object_get(schema, "maxLength");
        size_t len = utf8_length(v);
        if (json_is_integer(minl) && (json_int_t)len < json_integer_value(minl))
            return fail(why, n, path, "is shorter than minLength%s", "");
        if (json_is_integer(maxl) && (json_int_t)len > json_integer_value(maxl))
            return fail(why, n, path, "is longer than maxLength%s", "");
    }
    char sub[512];
    if (json_is_object(v)) {
        json_t *props = json_object_get(schema, "properties");
        json_t *req = json_object_get(schema, "required");
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r)
        {
            if (json_is_string(r) && json_object_get(v, json_string_value(r)) == NULL) {
                snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "",
                         json_string_value(r));
                return fail(why, n, sub, "is required%s", "");
            }
        }
        const char *key;
        json_t *val;
        json_t *addl = json_object_get(schema, "additionalProperties");
        json_object_foreach((json_t *)v, key, val)
        {
            snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
            json_t *ps = json_object_get(props, key);
            if (ps != NULL) {
                if (check(ps, val, sub, why, n, depth + 1) != 0)
                    return -1;
            } else if (json_is_false(addl)) {
                return fail(why, n, sub, "is not an allowed property%s", "");
            } else if (json_is_object(addl) && check(addl, val, sub, why, n, depth + 1) != 0) {
                return -1;
            }
        }
    }
    if (json_is_array(v)) {
        json_t *items = json_object_get(schema, "items");
        json_t *mini = json_object_get(schema, "minItems");
        json_t *maxi = json_object_get(schema, "maxItems");
        if (json_is_integer(mini) && (json_int_t)json_array_size(v) < json_integer_value(mini))
            return fail(why, n, path, "has fewer items than minItems%s", "");
        if (json_is_integer(maxi) && (json_int_t)json_array_size(v) > json_integer_value(maxi))
            return fail(why, n, path, "has more items than maxItems%s", "");
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            if (check(items, el, sub, why, n, depth + 1) != 0)
                return -1;
        }
    }
    return 0;
}

int mcp__schema_check(const json_t *schema, const json_t *value, char *why, size_t why_len)
{
    why[0] = '\0';
    return check(schema, value, "", why, why_len, 0);
}
