/* SPDX-License-Identifier: MIT */
/*
 * Header fields a server reads: media types in Accept and Content-Type, and the
 * host names of Host and Origin (see http.h).
 */
#include "http/http.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Length of s[0..n) without trailing whitespace. */
static size_t trim_len(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

static int token_eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* True when the parameters of one media range (after its first ';') set q to 0. */
static int q_is_zero(const char *params, size_t n)
{
    const char *end = params + n;
    const char *p = params;
    while (p < end) {
        p = skip_ws(p);
        if (p + 2 <= end && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            double q = strtod(p + 2, NULL);
            return q <= 0.0;
        }
        const char *semi = memchr(p, ';', (size_t)(end - p));
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    return 0;
}

int mcp__accepts(const char *accept, const char *type)
{
    if (accept == NULL)
        return 0;
    const char *slash = strchr(type, '/');
    size_t major_len = slash ? (size_t)(slash - type) : strlen(type);
    const char *p = accept;
    while (*p != '\0') {
        p = skip_ws(p);
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *semi = memchr(p, ';', n);
        size_t range_len = trim_len(p, semi ? (size_t)(semi - p) : n);
        int match = token_eq(p, range_len, type) || token_eq(p, range_len, "*/*") ||
                    (range_len == major_len + 2 && strncasecmp(p, type, major_len) == 0 &&
                     p[major_len] == '/' && p[major_len + 1] == '*');
        if (match && !(semi && q_is_zero(semi + 1, n - (size_t)(semi + 1 - p))))
            return 1;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return 0;
}

int mcp__media_type_is(const char *content_type, const char *type)
{
    if (content_type == NULL)
        return 0;
    const char *p = skip_ws(content_type);
    size_t n = strcspn(p, ";,");
    if (p[n] == ',')
        return 0; /* two values joined: not one media type */
    return token_eq(p, trim_len(p, n), type);
}

static int copy_lower(const char *s, size_t n, char *out, size_t out_len)
{
    if (n == 0 || n >= out_len)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || c == '/' || c == '@' || c == '?' || c == '#')
            return -1;
        out[i] = (char)tolower(c);
    }
    out[n] = '\0';
    return 0;
}

/* Parses "host[:port]" or "[v6]:port" of length n. */
static int authority_host(const char *s, size_t n, char *out, size_t out_len)
{
    size_t host_len;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (close == NULL)
            return -1;
        host_len = (size_t)(close - s) + 1;
    } else {
        const char *colon = memchr(s, ':', n);
        host_len = colon ? (size_t)(colon - s) : n;
    }
    if (host_len < n) {
        /* What follows the host must be ":digits". */
        if (s[host_len] != ':' || host_len + 1 == n)
            return -1;
        for (size_t i = host_len + 1; i < n; i++)
            if (!isdigit((unsigned char)s[i]))
                return -1;
    }
    return copy_lower(s, host_len, out, out_len);
}

int mcp__host_name(const char *host, char *out, size_t out_len)
{
    if (host == NULL)
        return -1;
    const char *p = skip_ws(host);
    return authority_host(p, trim_len(p, strlen(p)), out, out_len);
}

int mcp__origin_host(const char *origin, char *out, size_t out_len)
{
    if (origin == NULL)
        return -1;
    const char *p = skip_ws(origin);
    const char *sep = strstr(p, "://");
    if (sep == NULL || sep == p)
        return -1;
    const char *auth = sep + 3;
    size_t n = trim_len(auth, strlen(auth));
    const char *slash = memchr(auth, '/', n);
    if (slash != NULL)
        n = (size_t)(slash - auth);
    return authority_host(auth, n, out, out_len);
}

int mcp__is_loopback_name(const char *h)
{
    return strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "[::1]") == 0;
}
