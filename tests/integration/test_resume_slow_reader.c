/* SPDX-License-Identifier: MIT */
/*
 * A slow reader over real sockets, with --max-queued 65536 and the event
 * store's default bounds (10,000 events per session). A tool sends 40,000
 * notifications to a client that keeps a small receive window and reads in
 * bursts, dropping its connection now and then and resuming with the last id
 * it read after the retry interval. The handler must wait for the client
 * instead: the server never cuts the reader off, the store never drops what
 * the client has not had (40,000 would not fit), and every notification
 * arrives exactly once and in order, then the result.
 *
 * And a handler that starts while its session's window is full only by the count of
 * a stream whose client has read everything is not held: it sends, and is answered.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_expect.h"
#include "resume_check.h"

#define STEP_MS 10000
#define COUNT 40000
#define COUNT_ARGS "{\"count\":40000,\"delay_ms\":0,\"close_after\":0}"
#define RESULT_TEXT "sent 40000"
/* Notifications read on each connection before it is dropped. */
#define BURST 7000
/* What the server says when it cuts a slow reader off (its stderr). */
#define CUT_MESSAGE "fell"

static int setup_slow(void **state)
{
    static const char *const flags[] = {"--max-queued", "65536", NULL};
    return hx_setup(state, flags, 1);
}

static void test_slow_reader_pauses_the_handler_and_loses_nothing(void **state)
{
    hx_fixture *f = *state;
    char *body = rc_call_body(100, "poll_notify", COUNT_ARGS, NULL);
    assert_non_null(body);
    hc_conn c;
    /* A small receive window: the server's bytes pile up on its side. */
    int status = hc_mcp_post_open(&c, f->port, f->session, body, 4096, STEP_MS);
    free(body);
    assert_int_equal(status, 200);

    rc_call call;
    rc_call_init(&call, 100, COUNT);
    int drops = 0, resumes = 0;
    for (;;) {
        int r = rc_call_read(&c, &call, BURST, STEP_MS);
        if (call.err[0] != '\0')
            fail_msg("after %lld notifications: %s", call.next - 1, call.err);
        if (r == 1)
            break;
        if (r == 0)
            fail_msg("after %lld notifications the stream ended (%s) without the result: the "
                     "server cut a reader that only reads slowly",
                     call.next - 1, c.body_done ? "cleanly" : "connection closed");
        if (r != 2)
            fail_msg("after %lld notifications: nothing within %d ms", call.next - 1, STEP_MS);
        /* Drop the connection and stay away for the retry interval: the tool
         * (well under a second for all of it) would send everything meanwhile
         * if it did not wait, and the store could not keep it. */
        hc_close(&c);
        drops++;
        if (call.last_id == NULL)
            fail_msg("no event id read before the drop: nothing to resume from");
        rc_wait_retry(call.retry < 0 ? 1000 : call.retry > 2000 ? 2000 : call.retry);
        if (++resumes > 50)
            fail_msg("no result after 50 resumes (%lld notifications)", call.next - 1);
        status = hc_mcp_get_open(&c, f->port, f->session, call.last_id, STEP_MS);
        if (status != 200)
            fail_msg("resume %d with Last-Event-ID %s (after %lld notifications): expected 200, "
                     "got %d (400: the store dropped events the client had not had)",
                     resumes, call.last_id, call.next - 1, status);
    }
    hc_sse_event ev;
    if (hc_sse_next_block(&c, &ev, STEP_MS) != 0 || !c.body_done)
        fail_msg("the stream did not end cleanly after the result");
    hc_close(&c);
    assert_int_equal(call.next - 1, COUNT);
    assert_string_equal(rc_result_text(call.result), RESULT_TEXT);
    if (hc_server_wait_count(&f->srv, CUT_MESSAGE, 1, 0) >= 0)
        fail_msg("the server cut a reader off although the handler could wait");
    printf("slow reader: %d drops and resumes, %lld notifications and the result, exactly once "
           "and in order\n",
           drops, call.next - 1);
    rc_call_free(&call);
}

/*
 * The other side of the limit: a client that reads promptly must never be
 * taken for a slow reader. A call closes its stream after one notification
 * and sends about 300 KiB more while the client is away; the resume after
 * the retry interval has all of it to replay at once, more than
 * --max-queued, to a client that reads as fast as it can.
 */
static void test_large_backlog_replays_to_a_prompt_reader(void **state)
{
    hx_fixture *f = *state;
    const char *what = "poll_notify count=2000 delay_ms=0 close_after=1, resumed after the retry";
    char *body =
        rc_call_body(101, "poll_notify", "{\"count\":2000,\"delay_ms\":0,\"close_after\":1}", NULL);
    assert_non_null(body);
    hc_conn c;
    int status = hc_mcp_post_open(&c, f->port, f->session, body, 0, STEP_MS);
    free(body);
    assert_int_equal(status, 200);
    rc_call call;
    rc_call_init(&call, 101, 2000);
    int r = rc_call_read(&c, &call, 0, STEP_MS);
    if (call.err[0] != '\0' || r != 0 || !c.body_done || call.next != 2)
        fail_msg("%s: expected the POST stream to end cleanly after notification 1 (rc %d, %lld "
                 "notifications) %s",
                 what, r, call.next - 1, call.err);
    hc_close(&c);
    rc_wait_retry(call.retry < 0 ? 1000 : call.retry > 5000 ? 5000 : call.retry);

    int logged = hc_server_wait_count(&f->srv, CUT_MESSAGE, 0, 0);
    status = hc_mcp_get_open(&c, f->port, f->session, call.last_id, STEP_MS);
    if (status != 200) {
        int cut = hc_server_wait_count(&f->srv, CUT_MESSAGE, logged + 1, 2000) >= 0;
        fail_msg("%s: GET with Last-Event-ID %s (a backlog of 1999 notifications, about 290 "
                 "KiB, all stored): expected 200 and the replay, got %s%s",
                 what, call.last_id,
                 status < 0 ? "the connection closed without a response head" : "an error status",
                 cut ? "; the server logged it as a slow reader cut off, although the client "
                       "had not had a chance to read: the replay goes over --max-queued "
                       "within one loop turn"
                     : "");
    }
    r = rc_call_read(&c, &call, 0, STEP_MS);
    if (call.err[0] != '\0')
        fail_msg("%s: %s", what, call.err);
    if (r != 1)
        fail_msg("%s: the resume ended (%s) after notification %lld without the result", what,
                 r < 0         ? "timeout"
                 : c.body_done ? "cleanly"
                               : "connection closed",
                 call.next - 1);
    assert_string_equal(rc_result_text(call.result), "sent 2000, closed the stream once");
    hc_close(&c);
    rc_call_free(&call);
}

static void test_a_handler_starting_behind_a_stale_window_is_not_held(void **state)
{
    (void)state;
    /* A window of 51 events (half the store's 100). */
    static const char *const flags[] = {"--store-max-events", "100", NULL};
    hc_server srv;
    assert_int_equal(hc_server_start(&srv, flags, STEP_MS), 0);
    char session[33];
    /* (Of 2025-06-18: no priming event that would count as unsent.) */
    assert_int_equal(hc_mcp_initialize_version(srv.port, "2025-06-18", session, STEP_MS), 0);
    /* A call whose client reads its first notification, then waits a minute: that one
     * stays counted as unconfirmed until something looks at its stream again. */
    char *body = rc_call_body(3, "notify", "{\"count\":2,\"delay_ms\":60000}", NULL);
    hc_conn held;
    assert_int_equal(hc_mcp_post_open(&held, srv.port, session, body, 0, STEP_MS), 200);
    free(body);
    rc_call call;
    rc_call_init(&call, 3, 2);
    assert_int_equal(rc_call_read(&held, &call, 1, STEP_MS), 2);
    rc_call_free(&call);
    /* 60 answers stored (more than the window) while it is counted. */
    for (int i = 0; i < 60; i++) {
        hc_response r;
        char echo[128];
        snprintf(echo, sizeof(echo),
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"echo\",\"arguments\":{\"text\":\"x\"}}}",
                 100 + i);
        assert_int_equal(hc_mcp_post(srv.port, session, NULL, echo, &r, STEP_MS), 0);
        assert_int_equal(r.status, 200);
        hc_response_free(&r);
    }
    /* A handler that sends: it must not wait for the held call's next move. */
    long long t0 = hc_now_ms();
    body = rc_call_body(4, "notify", "{\"count\":3}", NULL);
    hc_conn c;
    assert_int_equal(hc_mcp_post_open(&c, srv.port, session, body, 0, 3000), 200);
    free(body);
    rc_call_init(&call, 4, 3);
    int rc = rc_call_read(&c, &call, 0, 3000);
    long long took = hc_now_ms() - t0;
    rc_call_free(&call);
    hc_close(&c);
    /* The held call is cancelled, so that the server stops without waiting for it. */
    hc_response r;
    assert_int_equal(hc_mcp_post(srv.port, session, NULL,
                                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                                 "\"params\":{\"requestId\":3}}",
                                 &r, STEP_MS),
                     0);
    assert_int_equal(r.status, 202);
    hc_response_free(&r);
    rc_call_init(&call, 3, -1);
    /* Its stream ends (a cancelled request is not answered). */
    assert_int_equal(rc_call_read(&held, &call, 0, STEP_MS), 0);
    rc_call_free(&call);
    hc_close(&held);
    assert_int_equal(hc_server_stop_check(&srv, STEP_MS), 0);
    hc_server_free(&srv);
    if (rc != 1)
        fail_msg("the call was not answered within 3 s (%lld ms)", took);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_reader_pauses_the_handler_and_loses_nothing),
        cmocka_unit_test(test_large_backlog_replays_to_a_prompt_reader),
        cmocka_unit_test(test_a_handler_starting_behind_a_stale_window_is_not_held),
    };
    int failed = cmocka_run_group_tests_name("resume_slow_reader", tests, setup_slow, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
