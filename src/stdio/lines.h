/* SPDX-License-Identifier: MIT */
/*
 * Newline-delimited JSON over a pair of file descriptors or pipes: the
 * framing of the stdio transport, for the server (our stdin and stdout) and
 * the client (the child's stdout and stdin).
 *
 * Every message is written whole, with its newline, in one write request, so
 * messages never interleave and each is flushed as soon as the descriptor
 * takes it. Reads accept pipes, sockets, terminals and regular files.
 */
#ifndef MCP_STDIO_LINES_H
#define MCP_STDIO_LINES_H

#include "util/util.h"

typedef struct mcp__lstream mcp__lstream;

typedef struct mcp__lstream_cbs {
    void (*on_line)(void *user, char *line, size_t len);
    void (*on_overflow)(void *user, size_t seen);
    /* That line's newline came: lines.scan tells what it was. May be NULL. */
    void (*on_dropped)(void *user, const mcp__rpc_scan *scan, size_t seen);
    /* End of input (err 0) or a read error. Reading has stopped. */
    void (*on_eof)(void *user, int err);
    /* Output failed (EPIPE...) or its queue passed the limit. Writes stop. */
    void (*on_write_error)(void *user, int err);
    /* Every handle is closed; the lstream may be freed now. */
    void (*on_closed)(void *user);
} mcp__lstream_cbs;

union mcp__stdio_handle {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_pipe_t pipe;
    uv_tty_t tty;
    uv_tcp_t tcp;
};

struct mcp__lstream {
    uv_loop_t *loop;
    mcp__lstream_cbs cbs;
    void *user;
    union mcp__stdio_handle hin, hout;
    uv_stream_t *in, *out; /* NULL when the side is a file or absent */
    int in_file_fd, out_file_fd;
    int in_open, out_open; /* handles still to close */
    uv_fs_t fs_req;
    char *rbuf;
    mcp__lines lines;
    size_t queued, max_queued;
    /* While a read's lines are fed, what they answer is gathered here and written in one
     * go once they all are (mcp__lstream_write): one system call for a batch of requests,
     * not one per answer. */
    int corked;
    unsigned corked_n; /* messages in cork */
    mcp__buf cork;
    int reading, eof, write_failed, closing, closed_notified;
    uv_shutdown_t shutdown_req;
};

/*
 * Opens in_fd for reading and out_fd for writing (they may be the same
 * socket). max_line bounds an incoming message. MCP_OK or MCP_EIO.
 */
int mcp__lstream_open(mcp__lstream *ls, uv_loop_t *loop, int in_fd, int out_fd, size_t max_line,
                      const mcp__lstream_cbs *cbs, void *user);
/*
 * Prepares two pipe handles for uv_spawn: &ls->hout.pipe is the child's stdin
 * (we write), &ls->hin.pipe its stdout (we read). Call mcp__lstream_start
 * after a successful spawn, or mcp__lstream_close after a failed one.
 */
int mcp__lstream_init_pipes(mcp__lstream *ls, uv_loop_t *loop, size_t max_line,
                            const mcp__lstream_cbs *cbs, void *user);
int mcp__lstream_start(mcp__lstream *ls);
/* Writes text and a newline. MCP_OK, MCP_ECLOSED, MCP_ENOMEM, MCP_ELIMIT. */
int mcp__lstream_write(mcp__lstream *ls, const char *text, size_t len);
/* Closes the writing side once queued writes are flushed (the peer sees EOF). */
void mcp__lstream_close_output(mcp__lstream *ls);
/* Stops reading, flushes what is queued, closes everything, then on_closed. */
void mcp__lstream_close(mcp__lstream *ls);
/* Like mcp__lstream_close, or after it, but drops what is still queued: a peer that
 * does not read cannot hold the close. */
void mcp__lstream_abort(mcp__lstream *ls);

#endif
