/* SPDX-License-Identifier: MIT */
/*
 * The ground the Redis store stands on, over real loopback sockets: Debian's
 * redis-server, started by the test on a free port, and Debian's hiredis driven
 * by a libuv loop through its adapter (hiredis/adapters/libuv.h). A command and
 * its reply travel on the loop, and a pipelined write of several commands is
 * answered in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "harness.h"
#include "redis_host.h"

#define START_MS 10000
#define RUN_MS 5000

typedef struct {
    uv_loop_t loop;
    uv_timer_t deadline;
    redisAsyncContext *ac;
    char replies[8][64];
    size_t lens[8];
    int nreplies, want, timed_out;
} run;

static void on_deadline(uv_timer_t *t)
{
    run *r = t->data;
    r->timed_out = 1;
    redisAsyncDisconnect(r->ac);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    run *r = priv;
    redisReply *rep = reply;
    (void)ac;
    if (r->nreplies < 8 && rep != NULL && rep->type == REDIS_REPLY_STRING)
        r->lens[r->nreplies] = rep->len;
    if (r->nreplies < 8)
        snprintf(r->replies[r->nreplies], sizeof r->replies[0], "%s",
                 rep == NULL                                                          ? "(none)"
                 : rep->type == REDIS_REPLY_STRING || rep->type == REDIS_REPLY_STATUS ? rep->str
                 : rep->type == REDIS_REPLY_INTEGER                                   ? "(integer)"
                                                                                      : "(other)");
    if (++r->nreplies == r->want) {
        uv_timer_stop(&r->deadline);
        uv_close((uv_handle_t *)&r->deadline, NULL);
        redisAsyncDisconnect(ac);
    }
}

static void test_commands_and_a_pipeline_on_the_loop(void **state)
{
    (void)state;
    rh_server srv;
    assert_int_equal(rh_start(&srv, START_MS), 0);
    run r = {.want = 5};
    assert_int_equal(uv_loop_init(&r.loop), 0);
    r.ac = redisAsyncConnect("127.0.0.1", srv.port);
    assert_non_null(r.ac);
    assert_int_equal(r.ac->err, 0);
    assert_int_equal(redisLibuvAttach(r.ac, &r.loop), REDIS_OK);
    uv_timer_init(&r.loop, &r.deadline);
    r.deadline.data = &r;
    uv_timer_start(&r.deadline, on_deadline, RUN_MS, 0);
    /* Five commands written before any reply is read: answered in order. */
    redisAsyncCommand(r.ac, on_reply, &r, "PING");
    redisAsyncCommand(r.ac, on_reply, &r, "SET %s %s", "mcp:k", "v1");
    redisAsyncCommand(r.ac, on_reply, &r, "GET %s", "mcp:k");
    redisAsyncCommand(r.ac, on_reply, &r, "SET %s %b", "mcp:k", "v\0two", (size_t)5);
    redisAsyncCommand(r.ac, on_reply, &r, "GET %s", "mcp:k");
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_false(r.timed_out);
    assert_int_equal(r.nreplies, 5);
    assert_string_equal(r.replies[0], "PONG");
    assert_string_equal(r.replies[1], "OK");
    assert_string_equal(r.replies[2], "v1");
    assert_string_equal(r.replies[3], "OK");
    /* A value with a NUL inside comes back whole. */
    assert_string_equal(r.replies[4], "v");
    assert_int_equal(r.lens[4], 5);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    assert_int_equal(rh_stop(&srv, START_MS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands_and_a_pipeline_on_the_loop),
    };
    return cmocka_run_group_tests_name("redis_loop", tests, NULL, NULL);
}
