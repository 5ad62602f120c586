/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures on demand (see failmalloc.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>
#include <uv.h>

#include "failmalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define FM_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FM_SANITIZER 1
#endif
#endif
#ifdef FM_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

_Thread_local int fm_exempt;
_Thread_local int fm_no_fail;
static atomic_int armed;
static atomic_long counted;
static atomic_long fail_at;
static atomic_long failures;
static atomic_int trace;

static int fail_now(void)
{
    if (fm_exempt || !atomic_load(&armed))
        return 0;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&fail_at) || fm_no_fail)
        return 0;
    atomic_fetch_add(&failures, 1);
#ifdef FM_SANITIZER
    if (atomic_load(&trace)) {
        fprintf(stderr, "failmalloc: failing allocation %ld here:\n", n);
        __sanitizer_print_stack_trace();
    }
#endif
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t size)
{
    return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    /* realloc(p, 0) frees p: failing it would leak for the wrong reason. */
    if (size == 0)
        return __real_realloc(p, size);
    return fail_now() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : __real_strndup(s, n);
}

void fm_arm(long n)
{
    atomic_store(&counted, 0);
    atomic_store(&failures, 0);
    atomic_store(&fail_at, n);
    atomic_store(&armed, 1);
}

void fm_disarm(void)
{
    atomic_store(&armed, 0);
    atomic_store(&fail_at, 0);
}

long fm_counted(void)
{
    return atomic_load(&counted);
}

long fm_failures(void)
{
    return atomic_load(&failures);
}

void fm_set_trace(int on)
{
    atomic_store(&trace, on);
}

static void *lib_malloc(size_t size)
{
    return __wrap_malloc(size);
}

static void *lib_calloc(size_t n, size_t size)
{
    return __wrap_calloc(n, size);
}

static void *lib_realloc(void *p, size_t size)
{
    return __wrap_realloc(p, size);
}

static void lib_free(void *p)
{
    free(p);
}

void fm_hook_libraries(void)
{
    uv_replace_allocator(lib_malloc, lib_realloc, lib_calloc, lib_free);
    json_set_alloc_funcs(lib_malloc, lib_free);
}
