/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/stdio/lines.c: newline-delimited message streams over a
 * socketpair, over pipes and over regular files. The test plays the peer on the other
 * end of the descriptors, reading and writing them directly.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "stdio/lines.h"

#define DEADLINE_MS 10000

typedef struct lfx {
    uv_loop_t loop;
    uv_timer_t tick; /* keeps UV_RUN_ONCE from blocking past a deadline check */
    mcp__lstream ls;
    int opened;
    char *lines[512];
    size_t nlines;
    int overflows;
    size_t overflow_seen;
    int eofs, eof_err;
    int write_errors, write_err;
    int closed;
} lfx;

static void on_line(void *user, char *line, size_t len)
{
    lfx *f = user;
    assert_int_equal(strlen(line), len);
    assert_true(f->nlines < 512);
    f->lines[f->nlines++] = strndup(line, len);
}

static void on_overflow(void *user, size_t seen)
{
    lfx *f = user;
    f->overflows++;
    f->overflow_seen = seen;
}

static void on_eof(void *user, int err)
{
    lfx *f = user;
    f->eofs++;
    f->eof_err = err;
}

static void on_write_error(void *user, int err)
{
    lfx *f = user;
    f->write_errors++;
    f->write_err = err;
}

static void on_closed(void *user)
{
    lfx *f = user;
    f->closed++;
}

static const mcp__lstream_cbs cbs = {
    .on_line = on_line,
    .on_overflow = on_overflow,
    .on_eof = on_eof,
    .on_write_error = on_write_error,
    .on_closed = on_closed,
};

static void tick_cb(uv_timer_t *t)
{
    (void)t;
}

static int setup(void **state)
{
    lfx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(uv_timer_init(&f->loop, &f->tick), 0);
    *state = f;
    return 0;
}

static void run_until(lfx *f, const int *flag);

static int teardown(void **state)
{
    lfx *f = *state;
    if (f->opened && !f->closed) {
        mcp__lstream_close(&f->ls);
        run_until(f, &f->closed);
    }
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    for (size_t i = 0; i < f->nlines; i++)
        free(f->lines[i]);
    free(f);
    return 0;
}

/* Runs the loop until *flag is non-zero, failing after the deadline. */
static void run_until(lfx *f, const int *flag)
{
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    uv_timer_start(&f->tick, tick_cb, 5, 5);
    while (!*flag) {
        if (mcp__now_ms() > end)
            fail_msg("timed out waiting for the lstream");
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    uv_timer_stop(&f->tick);
}

static void run_until_lines(lfx *f, size_t n)
{
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    uv_timer_start(&f->tick, tick_cb, 5, 5);
    while (f->nlines < n) {
        if (mcp__now_ms() > end)
            fail_msg("only %zu of %zu lines arrived", f->nlines, n);
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    uv_timer_stop(&f->tick);
}

static void open_ls(lfx *f, int in_fd, int out_fd, size_t max_line)
{
    assert_int_equal(mcp__lstream_open(&f->ls, &f->loop, in_fd, out_fd, max_line, &cbs, f), MCP_OK);
    f->opened = 1;
}

static void set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    assert_true(fl >= 0);
    assert_int_equal(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

static void write_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        assert_true(w > 0);
        s += w;
        n -= (size_t)w;
    }
}

/* ---- The test's end of the descriptors ---- */

typedef struct peer {
    int fd;
    mcp__buf got;
    int eof;
} peer;

/* One round: lets the loop write, then reads whatever the peer's fd has. */
static void peer_pump(lfx *f, peer *p)
{
    uv_run(&f->loop, UV_RUN_NOWAIT);
    struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
    if (poll(&pfd, 1, 5) <= 0)
        return;
    char buf[65536];
    for (;;) {
        ssize_t n = read(p->fd, buf, sizeof(buf));
        if (n > 0) {
            assert_int_equal(mcp__buf_append(&p->got, buf, (size_t)n), MCP_OK);
            continue;
        }
        if (n == 0)
            p->eof = 1;
        else
            assert_true(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
        return;
    }
}

static size_t count_newlines(const peer *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->got.len; i++)
        n += p->got.data[i] == '\n';
    return n;
}

static void peer_read_lines(lfx *f, peer *p, size_t n)
{
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    while (count_newlines(p) < n) {
        if (mcp__now_ms() > end)
            fail_msg("the peer got %zu of %zu lines", count_newlines(p), n);
        if (p->eof)
            fail_msg("EOF after %zu of %zu lines", count_newlines(p), n);
        peer_pump(f, p);
    }
}

static void peer_read_to_eof(lfx *f, peer *p)
{
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    while (!p->eof) {
        if (mcp__now_ms() > end)
            fail_msg("the peer never saw EOF (%zu bytes read)", p->got.len);
        peer_pump(f, p);
    }
}

/* The i-th message of a run: a recognisable prefix and size bytes of one letter. */
static char *message(size_t i, size_t size)
{
    char *m = malloc(size + 32);
    assert_non_null(m);
    int n = snprintf(m, 32, "m%zu:", i);
    memset(m + n, 'A' + (int)(i % 26), size);
    m[n + size] = '\0';
    return m;
}

/* Asserts that the peer got exactly messages 0..count-1 of the given size, each whole
 * and followed by its newline, in order. */
static void expect_messages(const peer *p, size_t count, size_t size)
{
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        char *m = message(i, size);
        size_t len = strlen(m);
        if (off + len + 1 > p->got.len || memcmp(p->got.data + off, m, len) != 0 ||
            p->got.data[off + len] != '\n')
            fail_msg("message %zu is not whole at offset %zu", i, off);
        off += len + 1;
        free(m);
    }
    assert_int_equal(off, p->got.len);
}

/* ---- Socketpair ---- */

static void test_socketpair_writes_every_message_whole_with_its_newline(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 0);
    peer p = {.fd = sv[1]};
    set_nonblocking(sv[1]);
    for (size_t i = 0; i < 3; i++) {
        char *m = message(i, i == 2 ? 300000 : 10 + i);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
    }
    peer_read_lines(f, &p, 3);
    size_t off = 0;
    for (size_t i = 0; i < 3; i++) {
        char *m = message(i, i == 2 ? 300000 : 10 + i);
        size_t len = strlen(m);
        assert_memory_equal(p.got.data + off, m, len);
        assert_int_equal(p.got.data[off + len], '\n');
        off += len + 1;
        free(m);
    }
    assert_int_equal(off, p.got.len);
    assert_int_equal(f->write_errors, 0);
    mcp__buf_free(&p.got);
    close(sv[1]);
}

static void test_socketpair_reads_lines_and_eof_delivers_an_unterminated_last_line(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    write_all(sv[1], "one\ntwo\r\n\n");
    run_until_lines(f, 2);
    write_all(sv[1], "thr");
    write_all(sv[1], "ee");
    assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
    run_until(f, &f->eofs);
    assert_int_equal(f->nlines, 3);
    assert_string_equal(f->lines[0], "one");
    assert_string_equal(f->lines[1], "two");
    assert_string_equal(f->lines[2], "three");
    assert_int_equal(f->eofs, 1);
    assert_int_equal(f->eof_err, 0);
    assert_int_equal(f->overflows, 0);
    close(sv[1]);
}

static void test_socketpair_overlong_line_is_reported_and_the_next_one_read(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 16);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    write_all(sv[1], "0123456789abcdef-too-long-for-sixteen\nok\n");
    run_until_lines(f, 1);
    assert_int_equal(f->overflows, 1);
    assert_true(f->overflow_seen > 16);
    assert_string_equal(f->lines[0], "ok");
    close(sv[1]);
    run_until(f, &f->eofs);
}

static void test_close_output_sends_eof_while_reading_goes_on(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    peer p = {.fd = sv[1]};
    set_nonblocking(sv[1]);
    assert_int_equal(mcp__lstream_write(&f->ls, "bye", 3), MCP_OK);
    mcp__lstream_close_output(&f->ls);
    peer_read_to_eof(f, &p);
    assert_int_equal(p.got.len, 4);
    assert_memory_equal(p.got.data, "bye\n", 4);
    write_all(sv[1], "late\n");
    run_until_lines(f, 1);
    assert_string_equal(f->lines[0], "late");
    mcp__buf_free(&p.got);
    close(sv[1]);
}

static void test_write_after_close_is_refused_and_close_twice_is_harmless(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    mcp__lstream_close(&f->ls);
    mcp__lstream_close(&f->ls);
    assert_int_equal(mcp__lstream_write(&f->ls, "x", 1), MCP_ECLOSED);
    run_until(f, &f->closed);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->eofs, 0); /* closing is not end of input */
    /* The peer sees the socket go away. */
    char c;
    assert_int_equal(read(sv[1], &c, 1), 0);
    close(sv[1]);
}

static void test_peer_gone_makes_writes_fail_with_an_error_callback(void **state)
{
    lfx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    open_ls(f, sv[0], sv[0], 0);
    close(sv[1]);
    int rc = MCP_OK;
    /* The first write may still be taken by the kernel; soon one fails. */
    for (int i = 0; i < 10 && rc == MCP_OK; i++) {
        rc = mcp__lstream_write(&f->ls, "hello", 5);
        if (rc == MCP_OK)
            uv_run(&f->loop, UV_RUN_NOWAIT);
    }
    if (rc == MCP_OK)
        run_until(f, &f->write_errors);
    assert_int_equal(f->write_errors, 1);
    assert_true(f->write_err == UV_EPIPE || f->write_err == UV_ECONNRESET);
    assert_int_equal(mcp__lstream_write(&f->ls, "x", 1), MCP_ECLOSED);
    assert_int_equal(f->write_errors, 1); /* reported once */
}

/* ---- A reader that stops reading ---- */

/* A socketpair whose buffers are as small as the kernel allows, so that writes queue. */
static void small_socketpair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int small = 4096;
    assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
}

#define BIG 65536

static void test_writes_queue_while_the_reader_is_not_reading_and_arrive_whole(void **state)
{
    lfx *f = *state;
    int sv[2];
    small_socketpair(sv);
    open_ls(f, sv[0], sv[0], 0);
    size_t count = 0;
    while (f->ls.queued == 0 && count < 200) {
        char *m = message(count, BIG);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
        count++;
    }
    assert_true(f->ls.queued > 0);
    /* Messages written while others wait in the queue go behind them, never between. */
    for (size_t i = 0; i < 5; i++, count++) {
        char *m = message(count, i % 2 ? 3 : BIG);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
    }
    peer p = {.fd = sv[1]};
    set_nonblocking(sv[1]);
    peer_read_lines(f, &p, count);
    /* Check them: the odd ones of the last five were short. */
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        size_t size = i >= count - 5 && (i - (count - 5)) % 2 ? 3 : BIG;
        char *m = message(i, size);
        size_t len = strlen(m);
        if (off + len + 1 > p.got.len || memcmp(p.got.data + off, m, len) != 0 ||
            p.got.data[off + len] != '\n')
            fail_msg("message %zu is not whole at offset %zu", i, off);
        off += len + 1;
        free(m);
    }
    assert_int_equal(off, p.got.len);
    /* The write callbacks give the queue back as the reader drains it. */
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    while (f->ls.queued != 0 && mcp__now_ms() < end)
        uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(f->ls.queued, 0);
    assert_int_equal(f->write_errors, 0);
    mcp__buf_free(&p.got);
    close(sv[1]);
}

static void test_queue_past_max_queued_fails_with_elimit_and_keeps_what_was_taken(void **state)
{
    lfx *f = *state;
    int sv[2];
    small_socketpair(sv);
    open_ls(f, sv[0], sv[0], 0);
    f->ls.max_queued = 4 * BIG;
    size_t accepted = 0;
    int rc = MCP_OK;
    while (rc == MCP_OK && accepted < 1000) {
        char *m = message(accepted, BIG);
        rc = mcp__lstream_write(&f->ls, m, strlen(m));
        free(m);
        if (rc == MCP_OK)
            accepted++;
    }
    assert_int_equal(rc, MCP_ELIMIT);
    assert_true(f->ls.queued <= f->ls.max_queued);
    assert_int_equal(f->write_errors, 1);
    assert_int_equal(f->write_err, UV_ENOBUFS);
    assert_int_equal(mcp__lstream_write(&f->ls, "x", 1), MCP_ECLOSED);
    assert_int_equal(f->write_errors, 1);
    /* What was accepted before the limit still reaches the reader whole. */
    peer p = {.fd = sv[1]};
    set_nonblocking(sv[1]);
    peer_read_lines(f, &p, accepted);
    expect_messages(&p, accepted, BIG);
    mcp__buf_free(&p.got);
    close(sv[1]);
}

static void test_close_flushes_queued_writes_before_closing_a_socket(void **state)
{
    lfx *f = *state;
    int sv[2];
    small_socketpair(sv);
    open_ls(f, sv[0], sv[0], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    size_t count = 0;
    while (f->ls.queued < 3 * BIG && count < 1000) {
        char *m = message(count, BIG);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
        count++;
    }
    assert_true(f->ls.queued >= 3 * BIG);
    mcp__lstream_close(&f->ls);
    assert_int_equal(f->closed, 0); /* not before the queue is written */
    peer p = {.fd = sv[1]};
    set_nonblocking(sv[1]);
    peer_read_to_eof(f, &p);
    expect_messages(&p, count, BIG);
    run_until(f, &f->closed);
    assert_int_equal(f->closed, 1);
    mcp__buf_free(&p.got);
    close(sv[1]);
}

/* ---- Pipes ---- */

static void test_pipes_carry_lines_both_ways_and_eof(void **state)
{
    lfx *f = *state;
    int to_ls[2], from_ls[2];
    assert_int_equal(pipe(to_ls), 0);
    assert_int_equal(pipe(from_ls), 0);
    open_ls(f, to_ls[0], from_ls[1], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    peer p = {.fd = from_ls[0]};
    set_nonblocking(from_ls[0]);
    for (size_t i = 0; i < 4; i++) {
        char *m = message(i, 1000);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
    }
    peer_read_lines(f, &p, 4);
    expect_messages(&p, 4, 1000);

    write_all(to_ls[1], "{\"a\":1}\n{\"b\":2}");
    close(to_ls[1]);
    run_until(f, &f->eofs);
    assert_int_equal(f->nlines, 2);
    assert_string_equal(f->lines[0], "{\"a\":1}");
    assert_string_equal(f->lines[1], "{\"b\":2}");
    assert_int_equal(f->eof_err, 0);
    /* Output still works after end of input (answers to requests still running). */
    assert_int_equal(mcp__lstream_write(&f->ls, "after", 5), MCP_OK);
    peer_read_lines(f, &p, 5);
    mcp__lstream_close(&f->ls);
    run_until(f, &f->closed);
    peer_read_to_eof(f, &p);
    mcp__buf_free(&p.got);
    close(from_ls[0]);
}

static void test_close_flushes_queued_writes_before_closing_a_pipe(void **state)
{
    lfx *f = *state;
    int to_ls[2], from_ls[2];
    assert_int_equal(pipe(to_ls), 0);
    assert_int_equal(pipe(from_ls), 0);
    open_ls(f, to_ls[0], from_ls[1], 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    size_t count = 0;
    while (f->ls.queued < 3 * BIG && count < 1000) {
        char *m = message(count, BIG);
        assert_int_equal(mcp__lstream_write(&f->ls, m, strlen(m)), MCP_OK);
        free(m);
        count++;
    }
    assert_true(f->ls.queued > 0);
    mcp__lstream_close(&f->ls);
    peer p = {.fd = from_ls[0]};
    set_nonblocking(from_ls[0]);
    peer_read_to_eof(f, &p);
    expect_messages(&p, count, BIG);
    run_until(f, &f->closed);
    mcp__buf_free(&p.got);
    close(from_ls[0]);
    close(to_ls[1]);
}

/* ---- Regular files ---- */

static int temp_file(const char *content)
{
    char path[] = "/tmp/test_lines_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    write_all(fd, content);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

static void test_regular_file_input_is_read_to_the_end(void **state)
{
    lfx *f = *state;
    int in = temp_file("{\"id\":1}\n\n{\"id\":2}\r\n{\"id\":3}");
    int out = temp_file("");
    open_ls(f, in, out, 0);
    assert_null(f->ls.in);
    assert_null(f->ls.out);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    run_until(f, &f->eofs);
    assert_int_equal(f->nlines, 3);
    assert_string_equal(f->lines[0], "{\"id\":1}");
    assert_string_equal(f->lines[1], "{\"id\":2}");
    assert_string_equal(f->lines[2], "{\"id\":3}");
    assert_int_equal(f->eof_err, 0);
    mcp__lstream_close(&f->ls);
    run_until(f, &f->closed);
    close(in);
    close(out);
}

static void test_regular_file_input_larger_than_one_read(void **state)
{
    lfx *f = *state;
    mcp__buf b = {0};
    for (size_t i = 0; i < 50; i++) {
        char *m = message(i, 5000);
        assert_int_equal(mcp__buf_appendf(&b, "%s\n", m), MCP_OK);
        free(m);
    }
    int in = temp_file(b.data);
    mcp__buf_free(&b);
    int out = temp_file("");
    open_ls(f, in, out, 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    run_until(f, &f->eofs);
    assert_int_equal(f->nlines, 50);
    for (size_t i = 0; i < 50; i++) {
        char *m = message(i, 5000);
        assert_string_equal(f->lines[i], m);
        free(m);
    }
    close(in);
    close(out);
}

static void test_regular_file_output_gets_every_message_with_its_newline(void **state)
{
    lfx *f = *state;
    int in = temp_file("");
    int out = temp_file("");
    open_ls(f, in, out, 0);
    assert_int_equal(mcp__lstream_write(&f->ls, "{\"a\":1}", 7), MCP_OK);
    assert_int_equal(mcp__lstream_write(&f->ls, "", 0), MCP_OK);
    assert_int_equal(mcp__lstream_write(&f->ls, "[2]", 3), MCP_OK);
    mcp__lstream_close(&f->ls);
    run_until(f, &f->closed);
    char buf[64] = {0};
    assert_int_equal(pread(out, buf, sizeof(buf) - 1, 0), 13);
    assert_string_equal(buf, "{\"a\":1}\n\n[2]\n");
    close(in);
    close(out);
}

/* Closing while a file read is in flight waits for it before on_closed. */
static void test_close_during_a_file_read_waits_for_it(void **state)
{
    lfx *f = *state;
    int in = temp_file("a\nb\n");
    int out = temp_file("");
    open_ls(f, in, out, 0);
    assert_int_equal(mcp__lstream_start(&f->ls), MCP_OK);
    mcp__lstream_close(&f->ls);
    run_until(f, &f->closed);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->nlines, 0); /* nothing is delivered once closing began */
    close(in);
    close(out);
}

int main(void)
{
    /* A vanished reader must give EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_socketpair_writes_every_message_whole_with_its_newline),
        T(test_socketpair_reads_lines_and_eof_delivers_an_unterminated_last_line),
        T(test_socketpair_overlong_line_is_reported_and_the_next_one_read),
        T(test_close_output_sends_eof_while_reading_goes_on),
        T(test_write_after_close_is_refused_and_close_twice_is_harmless),
        T(test_peer_gone_makes_writes_fail_with_an_error_callback),
        T(test_writes_queue_while_the_reader_is_not_reading_and_arrive_whole),
        T(test_queue_past_max_queued_fails_with_elimit_and_keeps_what_was_taken),
        T(test_close_flushes_queued_writes_before_closing_a_socket),
        T(test_pipes_carry_lines_both_ways_and_eof),
        T(test_close_flushes_queued_writes_before_closing_a_pipe),
        T(test_regular_file_input_is_read_to_the_end),
        T(test_regular_file_input_larger_than_one_read),
        T(test_regular_file_output_gets_every_message_with_its_newline),
        T(test_close_during_a_file_read_waits_for_it),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
