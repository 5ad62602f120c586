/* SPDX-License-Identifier: MIT */
/*
 * Closing a libuv handle whose memory goes with it (see util.h).
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
