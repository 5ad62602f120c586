/* SPDX-License-Identifier: MIT */
/*
 * Clocks: monotonic for timeouts, wall-clock for what another machine reads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "util.h"

uint64_t mcp__now_ms(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; fall back to libuv's
     * clock anyway rather than return garbage. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return uv_hrtime() / 1000000u;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t mcp__wall_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
