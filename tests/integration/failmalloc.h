/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures on demand, for the failmalloc tests. An executable that uses
 * this is linked with --wrap=malloc,calloc,realloc,strdup,strndup, so that every
 * allocation made by the objects linked into it (libmcp's, from the static library)
 * goes through the wrappers here: once armed, they count allocations and fail the
 * chosen one (ENOMEM). Shared libraries' own allocations are out of reach of --wrap;
 * fm_hook_libraries() routes jansson's and libuv's through the wrappers too.
 */
#ifndef MCP_TESTS_FAILMALLOC_H
#define MCP_TESTS_FAILMALLOC_H

/* Counts allocations from now on, and fails the fail_at-th (1-based; 0: none). */
void fm_arm(long fail_at);
/* Stops counting and failing. */
void fm_disarm(void);
/* Allocations counted, and failures injected, since fm_arm. */
long fm_counted(void);
long fm_failures(void);
/* With a sanitizer, print the stack of each injected failure (stderr). */
void fm_set_trace(int on);
/* jansson and libuv allocate through the wrappers (their own allocator hooks). */
void fm_hook_libraries(void);

/* A thread whose allocations are never counted nor failed (a test's client, say). */
extern _Thread_local int fm_exempt;
/* While set (on a thread), allocations are counted but never failed. */
extern _Thread_local int fm_no_fail;

#endif
