/* SPDX-License-Identifier: MIT */
/*
 * Growable byte buffer.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The smallest allocation, so that short strings do not realloc on every byte. */
#define BUF_MIN_CAP 64

int mcp__buf_reserve(mcp__buf *b, size_t extra)
{
    /* One spare byte is always kept for the terminating NUL. */
    if (extra > SIZE_MAX - b->len - 1)
        return MCP_ENOMEM;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return MCP_OK;
    size_t cap = b->cap ? b->cap : BUF_MIN_CAP;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p)
        return MCP_ENOMEM;
    b->data = p;
    b->cap = cap;
    return MCP_OK;
}

int mcp__buf_append(mcp__buf *b, const void *p, size_t n)
{
    int rc = mcp__buf_reserve(b, n);
    if (rc != MCP_OK)
        return rc;
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return MCP_OK;
}

int mcp__buf_appends(mcp__buf *b, const char *s)
{
    return mcp__buf_append(b, s, strlen(s));
}

int mcp__buf_vappendf(mcp__buf *b, const char *fmt, va_list ap)
{
    /* Try the space we already have first; most messages fit and need one pass. */
    int rc = mcp__buf_reserve(b, 0);
    if (rc != MCP_OK)
        return rc;
    size_t room = b->cap - b->len;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->data + b->len, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->data[b->len] = '\0';
        return MCP_EINVAL;
    }
    if ((size_t)n >= room) {
        rc = mcp__buf_reserve(b, (size_t)n);
        if (rc != MCP_OK) {
            b->data[b->len] = '\0';
            return rc;
        }
        va_copy(ap2, ap);
        n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
        va_end(ap2);
        if (n < 0) {
            b->data[b->len] = '\0';
            return MCP_EINVAL;
        }
    }
    b->len += (size_t)n;
    return MCP_OK;
}

int mcp__buf_appendf(mcp__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mcp__buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void mcp__buf_consume(mcp__buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data)
        b->data[b->len] = '\0';
}

void mcp__buf_reset(mcp__buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void mcp__buf_free(mcp__buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

char *mcp__buf_steal(mcp__buf *b)
{
    char *p = b->data;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

size_t mcp__u64_str(uint64_t v, char *out)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

int mcp__buf_append_u64(mcp__buf *b, uint64_t v)
{
    char tmp[21];
    size_t n = mcp__u64_str(v, tmp);
    return mcp__buf_append(b, tmp, n);
}
