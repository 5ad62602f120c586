/* SPDX-License-Identifier: MIT */
/*
 * A thread-safe queue into a libuv loop.
 *
 * uv_async_send() coalesces: many sends before the loop wakes give one callback. So
 * each callback runs everything queued at that moment, not one mail per wake-up.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <string.h>

#include "util.h"

static mcp__mailbox *from_async(uv_async_t *h)
{
    return (mcp__mailbox *)(void *)((char *)h - offsetof(mcp__mailbox, async));
}

/* Takes the first mail off the queue, or NULL when it is empty. */
static mcp__mail *pop(mcp__mailbox *mb)
{
    uv_mutex_lock(&mb->lock);
    mcp__mail *m = mb->head;
    if (m) {
        mb->head = m->next;
        if (!mb->head)
            mb->tail = NULL;
    }
    uv_mutex_unlock(&mb->lock);
    if (m)
        m->next = NULL;
    return m;
}

/* Runs the mails of the batch, in order, until it is empty or the mailbox closes (a
 * mail may close it: mcp__mailbox_close then runs the rest). */
static void run_batch(mcp__mailbox *mb)
{
    while (mb->batch != NULL && !mb->closing) {
        mcp__mail *m = mb->batch;
        mb->batch = m->next;
        m->next = NULL;
        m->fn(m); /* m belongs to fn from here on and may be freed already */
    }
}

static void on_async(uv_async_t *h)
{
    mcp__mailbox *mb = from_async(h);
    /*
     * Runs every mail queued when we woke, but not mails posted while we run: a busy
     * poster must not keep the loop from its I/O. They are taken off the queue in one
     * go (one lock, however many), and kept in mb->batch while they run, so that a mail
     * which calls mcp__mailbox_close() has close run, in order, everything behind it.
     */
    uv_mutex_lock(&mb->lock);
    mb->batch = mb->head;
    mb->head = mb->tail = NULL;
    uv_mutex_unlock(&mb->lock);
    run_batch(mb);
}

int mcp__mailbox_init(mcp__mailbox *mb, uv_loop_t *loop)
{
    /* async.data is left alone: the owner may have set it already. */
    mb->head = NULL;
    mb->tail = NULL;
    mb->batch = NULL;
    mb->closing = 0;
    mb->close_cb = NULL;
    if (uv_mutex_init(&mb->lock) != 0)
        return MCP_EIO;
    if (uv_async_init(loop, &mb->async, on_async) != 0) {
        uv_mutex_destroy(&mb->lock);
        return MCP_EIO;
    }
    return MCP_OK;
}

int mcp__mailbox_post(mcp__mailbox *mb, mcp__mail *m)
{
    m->next = NULL;
    uv_mutex_lock(&mb->lock);
    if (mb->closing) {
        uv_mutex_unlock(&mb->lock);
        return MCP_ECLOSED;
    }
    int was_empty = mb->head == NULL;
    if (mb->tail)
        mb->tail->next = m;
    else
        mb->head = m;
    mb->tail = m;
    /* Only the post that finds the queue empty wakes the loop: the others come before
     * the loop takes the queue, which that wake-up makes it do. Sent under the lock:
     * once close has set `closing` (under the same lock) no poster can still be inside
     * uv_async_send, so the handle is safe to close and free. */
    if (was_empty)
        uv_async_send(&mb->async);
    uv_mutex_unlock(&mb->lock);
    return MCP_OK;
}

static void on_close(uv_handle_t *h)
{
    mcp__mailbox *mb = from_async((uv_async_t *)h);
    void (*cb)(mcp__mailbox *) = mb->close_cb;
    uv_mutex_destroy(&mb->lock);
    if (cb)
        cb(mb);
}

void mcp__mailbox_close(mcp__mailbox *mb, void (*close_cb)(mcp__mailbox *mb))
{
    uv_mutex_lock(&mb->lock);
    if (mb->closing) {
        /* Closing twice (say, from a mail run by the first close) is a no-op. */
        uv_mutex_unlock(&mb->lock);
        return;
    }
    mb->closing = 1;
    uv_mutex_unlock(&mb->lock);

    /* What a running batch had left first (it stops: closing is set), then the queue. */
    while (mb->batch != NULL) {
        mcp__mail *m = mb->batch;
        mb->batch = m->next;
        m->next = NULL;
        m->fn(m);
    }
    mcp__mail *m;
    while ((m = pop(mb)) != NULL)
        m->fn(m);

    /* Posts are refused from here on, so head and tail stay empty. */
    mb->close_cb = close_cb;
    uv_close((uv_handle_t *)&mb->async, on_close);
}
