/* SPDX-License-Identifier: MIT */
/*
 * Giving memory back to the system once a burst is over.
 *
 * glibc keeps freed small blocks in its heaps (one per thread that allocated:
 * the loop and every worker), so a burst of queued output or stored events
 * leaves the process large long after the memory was freed. malloc_trim()
 * returns the free pages of every heap; it walks the heaps, so it is called
 * only once a burst (256 KiB or more) was released and has wound down, from a
 * timer of the loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h> /* defines __GLIBC__ on glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "util.h"

#define TRIM_AFTER_BYTES (256u << 10)

static atomic_size_t released;

void mcp__mem_released(size_t n)
{
    atomic_fetch_add_explicit(&released, n, memory_order_relaxed);
}

void mcp__mem_trim_maybe(void)
{
    /* Called about once a second. Under steady load memory is freed and taken
     * again at once: trimming would only make the next allocations fault pages
     * back in. So it waits for the burst to wind down: less freed in the last
     * period than a quarter of all freed since the last trim. */
    static atomic_size_t at_last_check;
    size_t total = atomic_load_explicit(&released, memory_order_relaxed);
    size_t recent = total - atomic_exchange_explicit(&at_last_check, total, memory_order_relaxed);
    if (total < TRIM_AFTER_BYTES || recent * 4 > total)
        return;
    atomic_fetch_sub_explicit(&released, total, memory_order_relaxed);
    atomic_store_explicit(&at_last_check, 0, memory_order_relaxed);
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
