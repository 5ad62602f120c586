/* SPDX-License-Identifier: MIT */
/*
 * JSON values as JSON Schema compares and measures them: numbers by value
 * (1 equals 1.0, 2.0 is an integer), objects whatever their member order,
 * string lengths in Unicode code points.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schema/schema_int.h"

/* Values nested deeper than this are compared no further (taken as different):
 * jansson's parser stops at 2048 levels, so only a value built in code gets here. */
#define EQUAL_MAX_DEPTH 2048

/* 2^63, the first double past every json_int_t. */
#define INT_LIMIT 9223372036854775808.0

int mcp__schema_numcmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    if (json_is_integer(a) || json_is_integer(b)) {
        /* Exact even past 2^53, where a json_int_t does not fit a double. */
        int flip = json_is_integer(b);
        json_int_t i = json_integer_value(flip ? b : a);
        double d = json_real_value(flip ? a : b);
        int r; /* i compared with d */
        if (d >= INT_LIMIT) {
            r = -1;
        } else if (d < -INT_LIMIT) {
            r = 1;
        } else {
            double whole = trunc(d);
            json_int_t t = (json_int_t)whole;
            if (i != t)
                r = i < t ? -1 : 1;
            else
                r = d > whole ? -1 : d < whole ? 1 : 0;
        }
        return flip ? -r : r;
    }
    double x = json_number_value(a), y = json_number_value(b);
    return (x > y) - (x < y);
}

int mcp__schema_is_integral(const json_t *v)
{
    if (json_is_integer(v))
        return 1;
    if (!json_is_real(v))
        return 0;
    double d = json_real_value(v);
    return isfinite(d) && floor(d) == d;
}

int mcp__schema_multiple_of(const json_t *v, const json_t *m)
{
    if (json_is_integer(v) && json_is_integer(m))
        return json_integer_value(m) > 0 && json_integer_value(v) % json_integer_value(m) == 0;
    double x = json_number_value(v), d = json_number_value(m);
    if (!(d > 0) || !isfinite(x))
        return 0;
    if (floor(d) == d && floor(x) == x)
        return fmod(x, d) == 0; /* exact */
    /* A decimal divisor (0.01) has no exact double: allow the rounding of the
     * division, relative to the quotient, and never less than 1e-9. */
    double q = x / d;
    if (!isfinite(q))
        return fmod(x, d) == 0; /* exact, where the quotient overflows */
    double tolerance = fmax(1e-9, fabs(q) * 4 * DBL_EPSILON);
    return fabs(q - nearbyint(q)) <= tolerance;
}

static int equal(const json_t *a, const json_t *b, size_t *steps, int depth)
{
    (*steps)++;
    if (json_is_number(a) && json_is_number(b))
        return mcp__schema_numcmp(a, b) == 0;
    if (json_typeof(a) != json_typeof(b) || depth > EQUAL_MAX_DEPTH)
        return 0;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!equal(json_array_get(a, i), json_array_get(b, i), steps, depth + 1))
                return 0;
        return 1;
    }
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        const char *key;
        size_t key_len;
        json_t *av;
        json_object_keylen_foreach((json_t *)a, key, key_len, av)
        {
            const json_t *bv = json_object_getn(b, key, key_len);
            if (bv == NULL || !equal(av, bv, steps, depth + 1))
                return 0;
        }
        return 1;
    }
    default: /* true, false, null */
        return 1;
    }
}

int mcp__schema_equal(const json_t *a, const json_t *b, size_t *steps)
{
    return equal(a, b, steps, 0);
}

/* splitmix64's finaliser. */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
    return mix(h);
}

static uint64_t hash(const json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return mix((uint64_t)json_integer_value(v) ^ 0x1);
    case JSON_REAL: {
        double d = json_real_value(v);
        /* Equal to an integer: hash as that integer. */
        if (floor(d) == d && d >= -INT_LIMIT && d < INT_LIMIT)
            return mix((uint64_t)(json_int_t)d ^ 0x1);
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        return mix(bits ^ 0x2);
    }
    case JSON_STRING:
        return hash_bytes(json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        uint64_t h = mix(0x3 + json_array_size(v));
        if (depth < EQUAL_MAX_DEPTH)
            for (size_t i = 0; i < json_array_size(v); i++)
                h = mix(h ^ hash(json_array_get(v, i), depth + 1));
        return h;
    }
    case JSON_OBJECT: {
        /* A sum, so that member order does not count. */
        uint64_t h = mix(0x4 + json_object_size(v));
        const char *key;
        size_t key_len;
        json_t *m;
        if (depth < EQUAL_MAX_DEPTH)
            json_object_keylen_foreach((json_t *)v, key, key_len, m) h +=
                mix(hash_bytes(key, key_len) ^ hash(m, depth + 1));
        return h;
    }
    case JSON_TRUE:
        return 0x5;
    case JSON_FALSE:
        return 0x6;
    default:
        return 0x7;
    }
}

uint64_t mcp__schema_hash(const json_t *v)
{
    return hash(v, 0);
}

size_t mcp__schema_length(const json_t *s)
{
    /* Every byte but UTF-8 continuation bytes starts a code point. */
    const unsigned char *p = (const unsigned char *)json_string_value(s);
    size_t n = json_string_length(s), count = 0;
    for (size_t i = 0; i < n; i++)
        count += (p[i] & 0xC0) != 0x80;
    return count;
}

size_t mcp__schema_count_values(const json_t *v, int depth)
{
    size_t n = 1 + (json_is_string(v) ? json_string_length(v) / 64 : 0);
    if (depth <= 0)
        return n;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            n += mcp__schema_count_values(json_array_get(v, i), depth - 1);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *m;
        json_object_foreach((json_t *)v, key, m) n += mcp__schema_count_values(m, depth - 1);
    }
    return n;
}

const char *mcp__schema_type_name(const json_t *v)
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

/* Backs up from s + n to the start of a UTF-8 sequence. */
static size_t char_start(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

void mcp__schema_shorten(const char *s, size_t n, char *out, size_t out_len)
{
    if (out_len == 0)
        return;
    if (n <= MCP__SCHEMA_PATH_SHOWN) {
        snprintf(out, out_len, "%.*s", (int)n, s);
        return;
    }
    /* The head says where it starts, the tail where it ends. */
    size_t head = char_start(s, MCP__SCHEMA_PATH_SHOWN / 3);
    size_t tail = char_start(s, n - (MCP__SCHEMA_PATH_SHOWN - MCP__SCHEMA_PATH_SHOWN / 3 - 3));
    snprintf(out, out_len, "%.*s...%s", (int)head, s, s + tail);
}
