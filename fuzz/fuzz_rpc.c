/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: JSON-RPC decoding and dispatch. Each line of the input is
 * one message text (a message or a batch) fed to a fresh server session on a
 * private loop, as a transport would feed it, each on a stream of its own.
 * Every handler but completion's is inline, and the target waits for that one
 * before the next message, so one input always takes the same path.
 *
 * An input that begins with '!' gets a session that needs no initialize (as
 * stateless HTTP serves it); the byte after it picks the protocol revision.
 *
 * Oracles: the sanitizers, and every text the session sends must be one
 * JSON-RPC message (or a batch of them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"
#include "server/server_int.h"

static uv_loop_t loop;
static mcp_server *srv;
static mcp__srt *rt;

static int io_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    (void)io;
    (void)stream;
    (void)flags;
    if (text != NULL)
        fz_check_message(text, len);
    return MCP_OK;
}

static const mcp__session_io fuzz_io = {.send = io_send};

static void setup(void)
{
    if (uv_loop_init(&loop) != 0)
        abort();
    srv = fz_server_new();
    rt = mcp__srt_new(srv, &loop);
    if (rt == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (srv == NULL)
        setup();
    mcp__session *s = mcp__session_new(rt, &fuzz_io, NULL, "fuzz-session");
    if (s == NULL)
        abort();
    const char *p = (const char *)data, *end = p + size;
    if (size >= 2 && p[0] == '!') {
        mcp__session_assume_initialized(
            s, mcp__revision_at((unsigned char)p[1] % mcp__revision_count()));
        p += 2;
    }
    uint64_t stream = 1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        mcp__session_feed(s, p, (size_t)(line_end - p), stream++);
        /* What the handlers posted to the loop (broadcasts, list changes) runs between
         * messages, as it would between two reads. The completion handler runs on a
         * worker: waiting for it keeps one input on one path. */
        uv_run(&loop, UV_RUN_NOWAIT);
        while (s->ctxs != NULL)
            uv_run(&loop, UV_RUN_ONCE);
        p = nl ? nl + 1 : end;
    }
    mcp__session_close(s);
    /* What the handlers posted (their notifications) holds the session until the
     * loop has run it; inline handlers only, so nothing else can keep it. */
    for (int i = 0; i < 100 && mcp__srt_busy(rt); i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    if (mcp__srt_busy(rt)) {
        fprintf(stderr, "the closed session is still there after 100 loop turns\n");
        abort();
    }
    return 0;
}
