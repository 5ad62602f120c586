/* SPDX-License-Identifier: MIT */
/*
 * hiredis on a libuv loop: the event hooks of a redisAsyncContext, on a uv_poll_t.
 *
 * Ours rather than hiredis 0.14's hiredis/adapters/libuv.h, for two faults of that
 * one. When the socket has an error (a refused connect, a reset), libuv stops the
 * poll handle and calls back with a status of UV_EBADF; that adapter then returns
 * without telling hiredis, so the context waits forever: a connection made again
 * while the server is still down would never fail, and never succeed. Here hiredis
 * is made to read and write, which is how it learns of the error and frees the
 * context. And that adapter sets its hooks before it allocates its state, so a
 * failed allocation leaves a cleanup hook that reads NULL when the context is freed.
 *
 * The poll handle is closed by the cleanup hook, which hiredis calls when it frees
 * the context; its memory goes in the close callback.
 */
#include <stdlib.h>

#include "redis_int.h"

typedef struct rpoll {
    redisAsyncContext *ac; /* NULL once hiredis freed it */
    uv_poll_t handle;
    int events;
} rpoll;

static void on_poll(uv_poll_t *h, int status, int events)
{
    rpoll *p = h->data;
    if (status < 0) {
        /* The error is read from the socket by whichever of hiredis's handlers runs
         * first; if the context survives that, polling goes on. */
        events = UV_READABLE | UV_WRITABLE;
    }
    /* One read (16 KiB at most) a turn, as the clients' sockets get: a node whose
     * replies come faster than that is one whose writes Redis has not all taken, and
     * its handlers wait for that (mcp__cluster_congested), which bounds what piles up
     * before its heartbeat's reply. Reading on while the socket held more made the
     * clients wait: p99 of echo on the Redis store went from 2 to 11 ms (bench/run). */
    if (p->ac != NULL && (events & UV_READABLE))
        redisAsyncHandleRead(p->ac);
    if (p->ac != NULL && (events & UV_WRITABLE)) {
        redisAsyncHandleWrite(p->ac);
        if (p->ac != NULL)
            mcp__rc_wrote(p->ac);
    }
    if (status < 0 && p->ac != NULL && p->events != 0)
        uv_poll_start(&p->handle, p->events, on_poll);
}

static void set_events(rpoll *p, int events)
{
    p->events = events;
    if (events != 0)
        uv_poll_start(&p->handle, events, on_poll);
    else
        uv_poll_stop(&p->handle);
}

static void add_read(void *data)
{
    rpoll *p = data;
    set_events(p, p->events | UV_READABLE);
}

static void del_read(void *data)
{
    rpoll *p = data;
    set_events(p, p->events & ~UV_READABLE);
}

static void add_write(void *data)
{
    rpoll *p = data;
    set_events(p, p->events | UV_WRITABLE);
}

static void del_write(void *data)
{
    rpoll *p = data;
    set_events(p, p->events & ~UV_WRITABLE);
}

static void cleanup(void *data)
{
    rpoll *p = data;
    p->ac = NULL;
    mcp__uv_close_free((uv_handle_t *)&p->handle, p);
}

int mcp__rc_adapter_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    rpoll *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return MCP_ENOMEM;
    if (uv_poll_init(loop, &p->handle, ac->c.fd) != 0) {
        free(p);
        return MCP_EIO;
    }
    p->handle.data = p;
    p->ac = ac;
    ac->ev.data = p;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    return MCP_OK;
}
