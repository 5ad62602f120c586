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
