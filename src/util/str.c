/* SPDX-License-Identifier: MIT */
/*
 * String helpers.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *mcp__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *mcp__asprintf(const char *fmt, ...)
{
    mcp__buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    int rc = mcp__buf_vappendf(&b, fmt, ap);
    va_end(ap);
    if (rc != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    /* An empty result still has its one byte of storage from the reserve. */
    return mcp__buf_steal(&b);
}

void mcp__hex(const void *data, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 0x0f];
    }
    out[2 * n] = '\0';
}

/* Length of the valid UTF-8 sequence at s (RFC 3629, Table 3-7 of Unicode), 0 if none. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    size_t n;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

char *mcp__quotable(char *out, size_t out_len, const char *s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    const unsigned char *p = (const unsigned char *)s;
    size_t used = 0, fits = 0; /* fits: where "..." can go, at a character boundary */
    while (*p != '\0') {
        size_t n = utf8_len(p);
        const char *ch = (const char *)p;
        int control = n == 1 ? (*p < 0x20 || *p == 0x7F) : n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
        if (n == 0 || control) {
            ch = replacement;
            p += n ? n : 1;
            n = 3;
        } else {
            p += n;
        }
        if (used + n > out_len - 1) {
            memcpy(out + fits, "...", 4);
            return out;
        }
        memcpy(out + used, ch, n);
        used += n;
        if (used <= out_len - 4)
            fits = used;
    }
    out[used] = '\0';
    return out;
}

char **mcp__strv_copy(const char *const *v, int *err)
{
    if (v == NULL)
        return NULL;
    size_t n = 0;
    while (v[n] != NULL)
        n++;
    char **copy = calloc(n + 1, sizeof(*copy));
    for (size_t i = 0; copy != NULL && i < n; i++)
        if ((copy[i] = strdup(v[i])) == NULL)
            *err = 1;
    if (copy == NULL)
        *err = 1;
    return copy;
}

void mcp__strv_free(char **v)
{
    for (char **p = v; p != NULL && *p != NULL; p++)
        free(*p);
    free(v);
}
