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

void mcp__log(int level, const char *fmt, ...)
{
    uv_once(&threshold_once, read_threshold);
    if (level > threshold)
        return;
    /* Logging must not disturb the caller's errno, which it may be about to report. */
    int saved_errno = errno;

    /* The whole line goes out in one write(2) so that lines from several threads (or
     * processes sharing stderr) do not interleave. Most lines fit on the stack. */
    char stack[1024];
    char *line = stack;
    char *heap = NULL;
    const char *prefix = level_name(level);
    int hlen = snprintf(stack, sizeof stack, "libmcp: %s: ", prefix);
    if (hlen < 0 || (size_t)hlen >= sizeof stack) {
        errno = saved_errno;
        return;
    }
    size_t room = sizeof stack - (size_t)hlen - 1; /* one byte for the newline */
    va_list ap;
    va_start(ap, fmt);
    int mlen = vsnprintf(stack + hlen, room + 1, fmt, ap);
    va_end(ap);
    if (mlen < 0) {
        errno = saved_errno;
        return;
    }
    size_t total;
    if ((size_t)mlen <= room) {
        total = (size_t)hlen + (size_t)mlen;
    } else {
        heap = malloc((size_t)hlen + (size_t)mlen + 2);
        if (heap) {
            memcpy(heap, stack, (size_t)hlen);
            va_start(ap, fmt);
            vsnprintf(heap + hlen, (size_t)mlen + 1, fmt, ap);
            va_end(ap);
            line = heap;
            total = (size_t)hlen + (size_t)mlen;
        } else {
            /* Out of memory: a truncated line is better than none. */
            total = (size_t)hlen + room;
        }
    }
    /* A message that already ends in a newline does not get a second one. */
    if (total > (size_t)hlen && line[total - 1] == '\n')
        total--;
    line[total++] = '\n';
    write_all(line, total);
    free(heap);
    errno = saved_errno;
}
