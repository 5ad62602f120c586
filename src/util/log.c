/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics on stderr. Never stdout: over stdio, stdout is the MCP channel.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static uv_once_t threshold_once = UV_ONCE_INIT;
static int threshold = 1;

static void read_threshold(void)
{
    /* Unset, empty or "0": warnings and errors only. Any other value turns on all
     * levels, so MCP_DEBUG=1 (or =yes) is enough when chasing a problem. */
    const char *v = getenv("MCP_DEBUG");
    if (v && *v && strcmp(v, "0") != 0)
        threshold = 3;
}

static const char *level_name(int level)
{
    if (level <= 0)
        return "error";
    switch (level) {
    case 1:
        return "warning";
    case 2:
        return "info";
    default:
        return "debug";
    }
}

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(STDERR_FILENO, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        p += r;
        n -= (size_t)r;
    }
}

/* The format of every line (mcp__log_set_format): 0 text, 1 logfmt, 2 JSON. */
static int log_format;

void mcp__log_set_format(int format)
{
    __atomic_store_n(&log_format, format, __ATOMIC_RELAXED);
}

int mcp__log_get_format(void)
{
    return __atomic_load_n(&log_format, __ATOMIC_RELAXED);
}

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len;
    unsigned min;
    unsigned cp;
    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xE0) == 0xC0)
        len = 2, min = 0x80, cp = p[0] & 0x1F;
    else if ((p[0] & 0xF0) == 0xE0)
        len = 3, min = 0x800, cp = p[0] & 0x0F;
    else if ((p[0] & 0xF8) == 0xF0)
        len = 4, min = 0x10000, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Appends s (n bytes) as the inside of a quoted string: JSON's escapes (json != 0) or
 * logfmt's (\" \\ \n \t and \xNN for other control bytes); bytes that do not begin
 * valid UTF-8 become U+FFFD, so a line is always valid UTF-8 and valid JSON. */
static int append_escaped(mcp__buf *b, const char *s, size_t n, int json)
{
    const unsigned char *p = (const unsigned char *)s;
    int rc = MCP_OK;
    for (size_t i = 0; i < n && rc == MCP_OK;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            rc = mcp__buf_append(b, e, 2), i++;
        } else if (c == '\n') {
            rc = mcp__buf_appends(b, "\\n"), i++;
        } else if (c == '\t') {
            rc = mcp__buf_appends(b, "\\t"), i++;
        } else if (c < 0x20 || c == 0x7F) {
            rc = json ? mcp__buf_appendf(b, "\\u%04x", c) : mcp__buf_appendf(b, "\\x%02x", c), i++;
        } else {
            size_t len = utf8_seq(p + i, n - i);
            if (len == 0)
                rc = mcp__buf_appends(b, "\xEF\xBF\xBD"), i++;
            else
                rc = mcp__buf_append(b, p + i, len), i += len;
        }
    }
    return rc;
}

/* Whether a logfmt value can go out bare: no space, quote, equals sign or control byte. */
static int bare(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7F || c >= 0x80)
            return 0;
    }
    return 1;
}

static int append_pair(mcp__buf *b, int format, int first, const char *key, size_t klen,
                       const char *val, size_t vlen)
{
    int rc = MCP_OK;
    if (format == 2) {
        rc = mcp__buf_appends(b, first ? "\"" : ",\"");
        if (rc == MCP_OK)
            rc = append_escaped(b, key, klen, 1);
        if (rc == MCP_OK)
            rc = mcp__buf_appends(b, "\":\"");
        if (rc == MCP_OK)
            rc = append_escaped(b, val, vlen, 1);
        return rc == MCP_OK ? mcp__buf_appends(b, "\"") : rc;
    }
    if (!first)
        rc = mcp__buf_appends(b, " ");
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, key, klen);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, "=");
    if (rc != MCP_OK || bare(val, vlen))
        return rc == MCP_OK ? mcp__buf_append(b, val, vlen) : rc;
    rc = mcp__buf_appends(b, "\"");
    if (rc == MCP_OK)
        rc = append_escaped(b, val, vlen, 0);
    return rc == MCP_OK ? mcp__buf_appends(b, "\"") : rc;
}

/* Appends the pairs of `fields`, logfmt text (key=value, a value bare or in double quotes
 * with \" and \\ escapes); a word without '=' is a key with an empty value. */
static int append_fields(mcp__buf *b, int format, const char *fields)
{
    const char *p = fields;
    int rc = MCP_OK;
    while (rc == MCP_OK && *p != '\0') {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        const char *key = p;
        while (*p != '\0' && *p != '=' && *p != ' ')
            p++;
        size_t klen = (size_t)(p - key);
        mcp__buf val = {0};
        if (*p == '=') {
            p++;
            if (*p == '"') {
                for (p++; *p != '\0' && *p != '"' && rc == MCP_OK; p++) {
                    if (*p == '\\' && p[1] != '\0')
                        p++;
                    rc = mcp__buf_append(&val, p, 1);
                }
                if (*p == '"')
                    p++;
            } else {
                const char *v = p;
                while (*p != '\0' && *p != ' ')
                    p++;
                rc = mcp__buf_append(&val, v, (size_t)(p - v));
            }
        }
        if (rc == MCP_OK && klen > 0)
            rc = append_pair(b, format, 0, key, klen, val.len ? (const char *)val.data : "",
                             val.len);
        mcp__buf_free(&val);
    }
    return rc;
}

void mcp__log_emit(const char *level, const char *source, const char *msg, size_t msg_len,
                   const char *fields)
{
    int saved_errno = errno;
    int format = mcp__log_get_format();
    mcp__buf b = {0};
    int rc = MCP_OK;
    if (format == 0) {
        /* Text, as before there were formats: "source: level: message fields". */
        if (source != NULL)
            rc = mcp__buf_appendf(&b, "%s: ", source);
        if (rc == MCP_OK && level != NULL)
            rc = mcp__buf_appendf(&b, "%s: ", level);
        if (rc == MCP_OK && msg != NULL)
            rc = mcp__buf_append(&b, msg, msg_len);
        if (rc == MCP_OK && fields != NULL && *fields != '\0')
            rc = mcp__buf_appendf(&b, "%s%s", msg != NULL ? " " : "", fields);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char when[40];
        size_t w = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + w, sizeof when - w, ".%03ldZ", ts.tv_nsec / 1000000);
        if (format == 2)
            rc = mcp__buf_appends(&b, "{");
        if (rc == MCP_OK)
            rc = append_pair(&b, format, 1, "ts", 2, when, strlen(when));
        if (rc == MCP_OK && level != NULL)
            rc = append_pair(&b, format, 0, "level", 5, level, strlen(level));
        if (rc == MCP_OK && source != NULL)
            rc = append_pair(&b, format, 0, "source", 6, source, strlen(source));
        if (rc == MCP_OK && msg != NULL)
            rc = append_pair(&b, format, 0, "msg", 3, msg, msg_len);
        if (rc == MCP_OK && fields != NULL)
            rc = append_fields(&b, format, fields);
        if (rc == MCP_OK && format == 2)
            rc = mcp__buf_appends(&b, "}");
    }
    if (rc == MCP_OK)
        rc = mcp__buf_appends(&b, "\n");
    if (rc == MCP_OK) {
        /* The whole line in one write(2), so that lines from several threads (or
         * processes sharing stderr) do not interleave. */
        write_all((const char *)b.data, b.len);
    } else if (msg != NULL) {
        /* Out of memory: the message alone is better than nothing. */
        write_all(msg, msg_len);
        write_all("\n", 1);
    }
    mcp__buf_free(&b);
    errno = saved_errno;
}

void mcp__log(int level, const char *fmt, ...)
{
    uv_once(&threshold_once, read_threshold);
    if (level > threshold)
        return;
    /* Logging must not disturb the caller's errno, which it may be about to report. */
    int saved_errno = errno;
    char stack[1024];
    char *heap = NULL;
    const char *msg = stack;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(stack, sizeof stack, fmt, ap);
    va_end(ap);
    if (len < 0) {
        errno = saved_errno;
        return;
    }
    if ((size_t)len >= sizeof stack) {
        heap = malloc((size_t)len + 1);
        if (heap != NULL) {
            va_start(ap, fmt);
            vsnprintf(heap, (size_t)len + 1, fmt, ap);
            va_end(ap);
            msg = heap;
        } else {
            len = (int)sizeof stack - 1; /* out of memory: a truncated line is better than none */
        }
    }
    /* A message that already ends in a newline does not get a second one. */
    if (len > 0 && msg[len - 1] == '\n')
        len--;
    mcp__log_emit(level_name(level), "libmcp", msg, (size_t)len, NULL);
    free(heap);
    errno = saved_errno;
}
