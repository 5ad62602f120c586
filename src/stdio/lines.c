/* SPDX-License-Identifier: MIT */
/*
 * Newline-delimited JSON streams: see lines.h.
 */
#include "stdio/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A reader that never reads its output must not make us buffer without end. */
#define MCP__MAX_QUEUED (64u << 20)
#define MCP__READ_CHUNK (64u << 10)

typedef struct wreq {
    uv_write_t req;
    mcp__lstream *ls;
    size_t len;
    char data[];
} wreq;

/* Once closing and nothing is left in flight: free the buffers and tell the owner. */
static void maybe_closed(mcp__lstream *ls)
{
    if (ls->in_open || ls->out_open || !ls->closing || ls->fs_req.data != NULL ||
        ls->closed_notified)
        return;
    ls->closed_notified = 1;
    free(ls->rbuf);
    ls->rbuf = NULL;
    mcp__lines_free(&ls->lines);
    mcp__buf_free(&ls->cork);
    if (ls->cbs.on_closed != NULL)
        ls->cbs.on_closed(ls->user);
}

static void closed_one(uv_handle_t *h)
{
    mcp__lstream *ls = h->data;
    if (h == &ls->hin.handle)
        ls->in_open = 0;
    else
        ls->out_open = 0;
    maybe_closed(ls);
}

static void close_handle(mcp__lstream *ls, union mcp__stdio_handle *h, int *open)
{
    (void)ls;
    if (*open && !uv_is_closing(&h->handle))
        uv_close(&h->handle, closed_one);
}

/* Opens fd as a libuv stream when it is one; otherwise it is used as a plain file. */
static int open_side(mcp__lstream *ls, int fd, int readable, union mcp__stdio_handle *h,
                     uv_stream_t **stream, int *file_fd, int *open)
{
    int rc = 0;
    *stream = NULL;
    *file_fd = -1;
    switch (uv_guess_handle(fd)) {
    case UV_NAMED_PIPE:
        rc = uv_pipe_init(ls->loop, &h->pipe, 0);
        if (rc == 0 && (rc = uv_pipe_open(&h->pipe, fd)) != 0)
            uv_close(&h->handle, NULL);
        break;
    case UV_TTY:
        rc = uv_tty_init(ls->loop, &h->tty, fd, readable);
        break;
    case UV_TCP:
        rc = uv_tcp_init(ls->loop, &h->tcp);
        if (rc == 0 && (rc = uv_tcp_open(&h->tcp, fd)) != 0)
            uv_close(&h->handle, NULL);
        break;
    default:
        *file_fd = fd;
        return MCP_OK;
    }
    if (rc != 0) {
        mcp__error("cannot use file descriptor %d: %s", fd, uv_strerror(rc));
        return MCP_EIO;
    }
    h->handle.data = ls;
    *stream = &h->stream;
    *open = 1;
    return MCP_OK;
}

static void dropped(void *user, size_t seen)
{
    mcp__lstream *ls = user;
    if (!ls->closing && ls->cbs.on_dropped != NULL)
        ls->cbs.on_dropped(ls->user, &ls->lines.scan, seen);
}

static void setup(mcp__lstream *ls, uv_loop_t *loop, size_t max_line, const mcp__lstream_cbs *cbs,
                  void *user)
{
    memset(ls, 0, sizeof(*ls));
    ls->loop = loop;
    ls->cbs = *cbs;
    ls->user = user;
    ls->in_file_fd = ls->out_file_fd = -1;
    ls->max_queued = MCP__MAX_QUEUED;
    mcp__lines_init(&ls->lines, max_line);
    ls->lines.on_dropped = dropped;
}

int mcp__lstream_open(mcp__lstream *ls, uv_loop_t *loop, int in_fd, int out_fd, size_t max_line,
                      const mcp__lstream_cbs *cbs, void *user)
{
    setup(ls, loop, max_line, cbs, user);
    if (open_side(ls, in_fd, 1, &ls->hin, &ls->in, &ls->in_file_fd, &ls->in_open) != MCP_OK)
        return MCP_EIO;
    if (in_fd == out_fd && ls->in != NULL) {
        ls->out = ls->in; /* one socket both ways: one handle */
        return MCP_OK;
    }
    if (open_side(ls, out_fd, 0, &ls->hout, &ls->out, &ls->out_file_fd, &ls->out_open) != MCP_OK) {
        ls->closing = 1;
        close_handle(ls, &ls->hin, &ls->in_open);
        return MCP_EIO;
    }
    return MCP_OK;
}

int mcp__lstream_init_pipes(mcp__lstream *ls, uv_loop_t *loop, size_t max_line,
                            const mcp__lstream_cbs *cbs, void *user)
{
    setup(ls, loop, max_line, cbs, user);
    if (uv_pipe_init(loop, &ls->hin.pipe, 0) != 0)
        return MCP_EIO;
    if (uv_pipe_init(loop, &ls->hout.pipe, 0) != 0) {
        uv_close(&ls->hin.handle, NULL);
        return MCP_EIO;
    }
    ls->hin.handle.data = ls->hout.handle.data = ls;
    ls->in = &ls->hin.stream;
    ls->out = &ls->hout.stream;
    ls->in_open = ls->out_open = 1;
    return MCP_OK;
}

/* ---- Reading ---- */

static void deliver(void *user, char *line, size_t len)
{
    mcp__lstream *ls = user;
    if (!ls->closing)
        ls->cbs.on_line(ls->user, line, len);
}

static void overflow(void *user, size_t seen)
{
    mcp__lstream *ls = user;
    if (!ls->closing)
        ls->cbs.on_overflow(ls->user, seen);
}

static void feed(mcp__lstream *ls, const char *data, size_t len)
{
    if (mcp__lines_feed(&ls->lines, data, len, deliver, overflow, ls) != MCP_OK)
        mcp__error("out of memory while reading a message");
}

static void at_eof(mcp__lstream *ls, int err)
{
    if (ls->eof)
        return;
    ls->eof = 1;
    ls->reading = 0;
    /* A last message without its newline is still a message. */
    if (err == 0 && mcp__lines_pending(&ls->lines) > 0)
        feed(ls, "\n", 1);
    if (!ls->closing && ls->cbs.on_eof != NULL)
        ls->cbs.on_eof(ls->user, err);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    mcp__lstream *ls = h->data;
    (void)suggested;
    if (ls->rbuf == NULL)
        ls->rbuf = malloc(MCP__READ_CHUNK);
    buf->base = ls->rbuf;
    buf->len = ls->rbuf ? MCP__READ_CHUNK : 0;
}

static void cork_flush(mcp__lstream *ls);
/* Answers gathered at most before they go out: a few, so that a client that keeps
 * many requests in flight reads the first answers while the next are made (measured
 * with bench/stdio_bench at 16 in flight: 2 per write 335k round trips/s, 4 per write
 * 353k-374k, 8 per write 349k; all of a read's together 195k-198k; one each 229k-246k). */
#define CORK_MAX_MESSAGES 4
/* A message this large is written at once (after what was gathered), not copied. */
#define CORK_COPY_MAX (16u << 10)

/* Feeds a read's bytes with the output corked: the answers of its lines go out together. */
static void feed_corked(mcp__lstream *ls, const char *p, size_t n)
{
    ls->corked = 1;
    feed(ls, p, n);
    ls->corked = 0;
    cork_flush(ls);
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    mcp__lstream *ls = s->data;
    (void)buf;
    if (n > 0)
        feed_corked(ls, ls->rbuf, (size_t)n);
    /* The buffer goes back after each read: a stream that waits (a gateway holds one
     * per child) keeps none, and the next read of any stream reuses the memory. */
    free(ls->rbuf);
    ls->rbuf = NULL;
    if (n < 0) {
        uv_read_stop(s);
        at_eof(ls, n == UV_EOF ? 0 : (int)n);
    }
}

static void fs_read_cb(uv_fs_t *req);

static void fs_read_next(mcp__lstream *ls)
{
    if (ls->rbuf == NULL && (ls->rbuf = malloc(MCP__READ_CHUNK)) == NULL) {
        at_eof(ls, UV_ENOMEM);
        return;
    }
    uv_buf_t b = uv_buf_init(ls->rbuf, MCP__READ_CHUNK);
    ls->fs_req.data = ls;
    if (uv_fs_read(ls->loop, &ls->fs_req, ls->in_file_fd, &b, 1, -1, fs_read_cb) != 0) {
        ls->fs_req.data = NULL;
        at_eof(ls, UV_EIO);
    }
}

static void fs_read_cb(uv_fs_t *req)
{
    mcp__lstream *ls = req->data;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    req->data = NULL;
    if (ls->closing) {
        maybe_closed(ls);
        return;
    }
    if (n > 0) {
        feed_corked(ls, ls->rbuf, (size_t)n);
        if (!ls->closing)
            fs_read_next(ls);
        else
            maybe_closed(ls);
    } else {
        at_eof(ls, n == 0 ? 0 : (int)n);
    }
}

int mcp__lstream_start(mcp__lstream *ls)
{
    ls->reading = 1;
    if (ls->in != NULL) {
        int rc = uv_read_start(ls->in, alloc_cb, read_cb);
        if (rc != 0) {
            mcp__error("cannot read: %s", uv_strerror(rc));
            return MCP_EIO;
        }
        return MCP_OK;
    }
    if (ls->in_file_fd >= 0) {
        fs_read_next(ls);
        return MCP_OK;
    }
    return MCP_EIO;
}

/* ---- Writing ---- */

static void write_failed(mcp__lstream *ls, int err)
{
    if (ls->write_failed)
        return;
    ls->write_failed = 1;
    if (!ls->closing && ls->cbs.on_write_error != NULL)
        ls->cbs.on_write_error(ls->user, err);
}

static void write_cb(uv_write_t *req, int status)
{
    wreq *w = (wreq *)req;
    mcp__lstream *ls = w->ls;
    ls->queued -= w->len;
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        write_failed(ls, status);
}

static int write_file(mcp__lstream *ls, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(ls->out_file_fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            write_failed(ls, -errno);
            return MCP_EIO;
        }
        p += w;
        n -= (size_t)w;
    }
    return MCP_OK;
}

/* Writes the bytes of bufs (nbufs of them, total bytes in all): at once without copying
 * where the pipe takes them, and what it does not take queued. */
static int write_bytes(mcp__lstream *ls, const uv_buf_t *bufs, unsigned nbufs, size_t total)
{
    size_t done = 0;
    if (ls->queued == 0) {
        int n = uv_try_write(ls->out, bufs, nbufs);
        if (n > 0)
            done = (size_t)n;
        else if (n != UV_EAGAIN && n != UV_ENOSYS) {
            write_failed(ls, n);
            return MCP_ECLOSED;
        }
    }
    if (done == total)
        return MCP_OK;
    size_t rest = total - done;
    if (ls->queued + rest > ls->max_queued) {
        mcp__error("the reader is not reading: %zu bytes queued", ls->queued);
        write_failed(ls, UV_ENOBUFS);
        return MCP_ELIMIT;
    }
    wreq *w = malloc(sizeof(*w) + rest);
    if (w == NULL)
        return MCP_ENOMEM;
    w->ls = ls;
    w->len = rest;
    size_t off = 0, skip = done;
    for (unsigned i = 0; i < nbufs; i++) {
        if (skip >= bufs[i].len) {
            skip -= bufs[i].len;
            continue;
        }
        memcpy(w->data + off, bufs[i].base + skip, bufs[i].len - skip);
        off += bufs[i].len - skip;
        skip = 0;
    }
    uv_buf_t b = uv_buf_init(w->data, (unsigned)rest);
    int rc = uv_write(&w->req, ls->out, &b, 1, write_cb);
    if (rc != 0) {
        free(w);
        write_failed(ls, rc);
        return MCP_ECLOSED;
    }
    ls->queued += rest;
    return MCP_OK;
}

/* What a read's lines answered, written in one go (see corked). */
static void cork_flush(mcp__lstream *ls)
{
    ls->corked_n = 0;
    if (ls->cork.len == 0)
        return;
    if (!ls->write_failed) {
        uv_buf_t b = uv_buf_init(ls->cork.data, (unsigned)ls->cork.len);
        /* A failure comes as on_write_error; out of memory for what the pipe did not
         * take, the stream cannot go on without those messages either. */
        if (write_bytes(ls, &b, 1, ls->cork.len) == MCP_ENOMEM)
            write_failed(ls, UV_ENOMEM);
    }
    /* Keep a small buffer for the next read; give back a large one. */
    if (ls->cork.cap > (64u << 10))
        mcp__buf_free(&ls->cork);
    else
        mcp__buf_reset(&ls->cork);
}

int mcp__lstream_write(mcp__lstream *ls, const char *text, size_t len)
{
    if (ls->write_failed || ls->closing)
        return MCP_ECLOSED;
    if (ls->out == NULL) {
        if (ls->out_file_fd < 0)
            return MCP_ECLOSED;
        int rc = write_file(ls, text, len);
        return rc == MCP_OK ? write_file(ls, "\n", 1) : rc;
    }
    if (ls->corked && len < CORK_COPY_MAX) {
        /* Gathered for the end of the read (the room for the message and its newline
         * first, so that a message is gathered whole or not at all); a batch goes out
         * once it holds a few, so the buffer stays small and a slow reader is found as
         * soon as without it. */
        if (mcp__buf_reserve(&ls->cork, len + 1) != MCP_OK)
            return MCP_ENOMEM;
        (void)mcp__buf_append(&ls->cork, text, len);
        (void)mcp__buf_append(&ls->cork, "\n", 1);
        if (++ls->corked_n >= CORK_MAX_MESSAGES)
            cork_flush(ls);
        return ls->write_failed ? MCP_ECLOSED : MCP_OK;
    }
    /* A large message is not copied: what was gathered goes first, then it. */
    cork_flush(ls);
    if (ls->write_failed)
        return MCP_ECLOSED;
    uv_buf_t bufs[2] = {uv_buf_init((char *)text, (unsigned)len), uv_buf_init("\n", 1)};
    return write_bytes(ls, bufs, 2, len + 1);
}

/* ---- Closing ---- */

static void shutdown_cb(uv_shutdown_t *req, int status)
{
    mcp__lstream *ls = req->data;
    (void)status;
    if (ls->out != ls->in)
        close_handle(ls, &ls->hout, &ls->out_open);
    else if (ls->closing)
        close_handle(ls, &ls->hin, &ls->in_open);
    req->data = NULL;
}

void mcp__lstream_close_output(mcp__lstream *ls)
{
    cork_flush(ls); /* what is gathered goes before the end */
    if (ls->out == NULL || ls->shutdown_req.data != NULL)
        return;
    if (ls->out == ls->in ? !ls->in_open : !ls->out_open)
        return;
    ls->shutdown_req.data = ls;
    if (uv_shutdown(&ls->shutdown_req, ls->out, shutdown_cb) != 0) {
        ls->shutdown_req.data = NULL;
        if (ls->out != ls->in)
            close_handle(ls, &ls->hout, &ls->out_open);
    }
}

void mcp__lstream_close(mcp__lstream *ls)
{
    if (ls->closing)
        return;
    cork_flush(ls); /* the peer must get every answer */
    ls->closing = 1;
    if (ls->in != NULL && ls->reading)
        uv_read_stop(ls->in);
    ls->reading = 0;
    /* Flush what is queued before the handles go: the peer must get every answer. */
    if (ls->out != NULL && !ls->write_failed && ls->shutdown_req.data == NULL)
        mcp__lstream_close_output(ls);
    if (ls->shutdown_req.data == NULL) {
        close_handle(ls, &ls->hout, &ls->out_open);
        close_handle(ls, &ls->hin, &ls->in_open);
    } else if (ls->out != ls->in) {
        close_handle(ls, &ls->hin, &ls->in_open);
    }
    if (ls->fs_req.data != NULL)
        uv_cancel((uv_req_t *)&ls->fs_req);
    maybe_closed(ls);
}

void mcp__lstream_abort(mcp__lstream *ls)
{
    mcp__lstream_close(ls);
    /* Queued writes and a pending shutdown are cancelled with their handle. */
    close_handle(ls, &ls->hout, &ls->out_open);
    close_handle(ls, &ls->hin, &ls->in_open);
}
