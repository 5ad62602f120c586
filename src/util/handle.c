/* SPDX-License-Identifier: MIT */
/*
 * Closing libuv handles: one whose memory goes with it, or one of a group an owner
 * waits for (see util.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "util.h"

static void close_free(uv_handle_t *h)
{
    free(h->data);
}

void mcp__uv_close_free(uv_handle_t *h, void *mem)
{
    h->data = mem;
    uv_close(h, close_free);
}

void mcp__uv_group_left(mcp__uv_group *g)
{
    g->open--;
    g->closed(g->owner);
}

static void close_counted(uv_handle_t *h)
{
    mcp__uv_group_left(h->data);
}

void mcp__uv_close_counted(mcp__uv_group *g, uv_handle_t *h)
{
    if (uv_is_closing(h))
        return;
    h->data = g;
    uv_close(h, close_counted);
}
