/* SPDX-License-Identifier: MIT */
/*
 * Request metadata header values (see headers.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int sentinel(const char *value, size_t n)
{
    return n >= 11 && strncmp(value, "=?base64?", 9) == 0 && strcmp(value + n - 2, "?=") == 0;
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
        if ((n - 11) % 4 != 0)
            return NULL;
        unsigned char *raw = mcp__base64_decode(value + 9, n - 11, len);
        char *again = raw != NULL ? mcp__base64_encode(raw, *len) : NULL;
        int canonical =
            again != NULL && strlen(again) == n - 11 && memcmp(again, value + 9, n - 11) == 0;
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
