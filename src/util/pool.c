/* SPDX-License-Identifier: MIT */
/*
 * A fixed set of worker threads running jobs in FIFO order.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "util.h"

typedef struct job {
    struct job *next;
    mcp__job_fn fn;
    void *arg;
} job;

struct mcp__pool {
    uv_mutex_t lock;
    uv_cond_t cond; /* signalled when a job is queued or closing begins */
    job *head, *tail;
    int closing;
    int nthreads;
    uv_thread_t *threads;
};

static void worker(void *arg)
{
    mcp__pool *p = arg;
    uv_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->closing)
            uv_cond_wait(&p->cond, &p->lock);
        job *j = p->head;
        /* Closing only ends a worker once the queue is empty, so free drains it. */
        if (!j)
            break;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        uv_mutex_unlock(&p->lock);
        j->fn(j->arg);
        free(j);
        uv_mutex_lock(&p->lock);
    }
    uv_mutex_unlock(&p->lock);
}

static void stop_and_join(mcp__pool *p, int started)
{
    uv_mutex_lock(&p->lock);
    p->closing = 1;
    uv_cond_broadcast(&p->cond);
    uv_mutex_unlock(&p->lock);
    for (int i = 0; i < started; i++)
        uv_thread_join(&p->threads[i]);
}

mcp__pool *mcp__pool_new(int nthreads)
{
    if (nthreads < 1 || nthreads > 256)
        return NULL;
    mcp__pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->threads = calloc((size_t)nthreads, sizeof *p->threads);
    if (!p->threads)
        goto fail_threads;
    if (uv_mutex_init(&p->lock) != 0)
        goto fail_mutex;
    if (uv_cond_init(&p->cond) != 0)
        goto fail_cond;
    p->nthreads = nthreads;
    for (int i = 0; i < nthreads; i++) {
        if (uv_thread_create(&p->threads[i], worker, p) != 0) {
            stop_and_join(p, i);
            goto fail_start;
        }
    }
    return p;

fail_start:
    uv_cond_destroy(&p->cond);
fail_cond:
    uv_mutex_destroy(&p->lock);
fail_mutex:
    free(p->threads);
fail_threads:
    free(p);
    return NULL;
}

int mcp__pool_submit(mcp__pool *p, mcp__job_fn fn, void *arg)
{
    if (!p || !fn)
        return MCP_EINVAL;
    job *j = malloc(sizeof *j);
    if (!j)
        return MCP_ENOMEM;
    j->next = NULL;
    j->fn = fn;
    j->arg = arg;
    uv_mutex_lock(&p->lock);
    if (p->closing) {
        uv_mutex_unlock(&p->lock);
        free(j);
        return MCP_ECLOSED;
    }
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    uv_cond_signal(&p->cond);
    uv_mutex_unlock(&p->lock);
    return MCP_OK;
}

void mcp__pool_free(mcp__pool *p)
{
    if (!p)
        return;
    stop_and_join(p, p->nthreads);
    /* The workers only exit on an empty queue, so nothing is left to free here. */
    uv_cond_destroy(&p->cond);
    uv_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}
