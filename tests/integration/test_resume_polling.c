/* SPDX-License-Identifier: MIT */
/*
 * Resumable POST streams over real sockets (SEP-1699 polling and
 * Last-Event-ID resumption), on a 2025-11-25 session:
 *
 * - the POST stream of a tool that closes it starts with a priming event
 *   (id, retry, empty data) and ends cleanly without the result; a GET with
 *   Last-Event-ID gets the result and then ends (the TypeScript SDK's
 *   "POST SSE polling with client reconnection" test, SEP-1699);
 * - the messages sent while the client was away are replayed in order, each
 *   once, then the result;
 * - two concurrent GETs resuming two POST streams each get only their own
 *   stream's events;
 * - a second resume of a stream still connected takes it over (the first
 *   socket is closed, no 409);
 * - a client dropping its POST stream does not cancel the request: the
 *   resume brings every progress notification and the result.
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

/* The deadline of one step (a head, an event, the end of a stream). */
#define STEP_MS 10000

static int setup_default(void **state)
{
    return hx_setup(state, NULL, 1);
}

/* POSTs a tools/call and asserts a 200 text/event-stream head. */
static void post_call(const hx_fixture *f, hc_conn *c, long long id, const char *tool,
                      const char *args, const char *token, const char *what)
{
    char *body = rc_call_body(id, tool, args, token);
    assert_non_null(body);
    int status = hc_mcp_post_open(c, f->port, f->session, body, 0, STEP_MS);
    free(body);
    if (status != 200)
        fail_msg("%s: POST tools/call %s %s: expected 200, got %d", what, tool, args ? args : "{}",
                 status);
    const char *ct = hc_header_get(&c->head, "content-type");
    if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
        fail_msg("%s: expected a text/event-stream answer, got %s", what, ct ? ct : "none");
}

/* Opens GET /mcp with Last-Event-ID and asserts 200 text/event-stream. */
static void resume(const hx_fixture *f, hc_conn *c, const char *last_id, const char *what)
{
    int status = hc_mcp_get_open(c, f->port, f->session, last_id, STEP_MS);
    if (status != 200) {
        if (status > 0)
            (void)hc_read_body(c, NULL, STEP_MS);
        fail_msg("%s: GET with Last-Event-ID %s: expected 200, got %d %s", what, last_id, status,
                 status > 0 && c->head.body ? c->head.body : "");
    }
    const char *ct = hc_header_get(&c->head, "content-type");
    if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
        fail_msg("%s: resume: expected text/event-stream, got %s", what, ct ? ct : "none");
}

/* Fails with the call's first problem, if any. */
static void check_call(const rc_call *call, const char *what)
{
    if (call->err[0] != '\0')
        fail_msg("%s: %s", what, call->err);
}

/* Reads c into call until the response; fails on anything else. */
static void read_to_result(hc_conn *c, rc_call *call, const char *what)
{
    int r = rc_call_read(c, call, 0, STEP_MS);
    check_call(call, what);
    if (r == 0)
        fail_msg("%s: the stream ended (%s) after %lld numbered messages, without the response",
                 what, c->body_done ? "cleanly" : "connection closed", call->next - 1);
    if (r != 1)
        fail_msg("%s: no response within %d ms (after %lld numbered messages)", what, STEP_MS,
                 call->next - 1);
}

/* Asserts the stream ends cleanly (chunked terminator) with no further event. */
static void expect_clean_end(hc_conn *c, const char *what)
{
    hc_sse_event ev;
    int r = hc_sse_next_block(c, &ev, STEP_MS);
    if (r == 1) {
        char shown[300];
        snprintf(shown, sizeof(shown), "id=%s data=%.200s", ev.id ? ev.id : "(none)",
                 ev.data ? ev.data : "(none)");
        hc_sse_event_free(&ev);
        fail_msg("%s: expected the stream to end, got another event: %s", what, shown);
    }
    if (r < 0)
        fail_msg("%s: the stream did not end within %d ms", what, STEP_MS);
    if (!c->body_done)
        fail_msg("%s: the connection was closed without the chunked terminator", what);
}

/* The retry a client honours: the server's value, bounded for the test's sake. */
static long retry_of(long announced)
{
    return announced < 0 ? 1000 : announced > 5000 ? 5000 : announced;
}

/* ---- 1. POST SSE polling with client reconnection (SEP-1699) ---- */

static void test_post_sse_polling_with_client_reconnection(void **state)
{
    hx_fixture *f = *state;
    const char *what = "test_reconnection";
    hc_conn c;
    post_call(f, &c, 10, "test_reconnection", NULL, NULL, what);

    /* The very first block is the priming event: id, retry, empty data, no event name. */
    hc_sse_event ev;
    int r = hc_sse_next(&c, &ev, STEP_MS);
    if (r != 1)
        fail_msg("%s: no first event on the POST stream (rc %d)", what, r);
    if (ev.comment || ev.id == NULL || ev.retry < 0 || !ev.has_data || ev.data[0] != '\0' ||
        ev.event != NULL)
        fail_msg("%s: expected a priming event (id, retry, empty data, no event line) first, "
                 "got id=%s retry=%ld event=%s data=%s comment=%d",
                 what, ev.id ? ev.id : "(none)", ev.retry, ev.event ? ev.event : "(none)",
                 ev.data ? ev.data : "(none)", ev.comment);
    assert_int_equal(ev.retry, 1000); /* the server's default --retry-ms */
    rc_call call;
    rc_call_init(&call, 10, 0);
    assert_int_equal(rc_call_feed(&call, &ev), 0);
    hc_sse_event_free(&ev);

    /* The tool closes the stream: nothing but priming events, then a clean end. */
    long retry = 1000;
    for (;;) {
        r = hc_sse_next(&c, &ev, STEP_MS);
        if (r != 1)
            break;
        if (!ev.comment && !hc_sse_is_priming(&ev))
            fail_msg("%s: the POST stream carried a message before it was closed: %s", what,
                     ev.data);
        if (ev.retry >= 0)
            retry = ev.retry;
        assert_int_equal(rc_call_feed(&call, &ev), 0);
        hc_sse_event_free(&ev);
    }
    if (r < 0)
        fail_msg("%s: the POST stream did not end within %d ms", what, STEP_MS);
    if (!c.body_done)
        fail_msg("%s: the POST stream was cut, not ended with the chunked terminator", what);
    assert_false(call.got_result);
    assert_non_null(call.last_id);
    hc_close(&c);

    /* Come back after the announced retry, as a client does, with the last id seen. */
    rc_wait_retry(retry_of(retry));
    resume(f, &c, call.last_id, what);
    read_to_result(&c, &call, what);
    const char *text = rc_result_text(call.result);
    if (text == NULL || strstr(text, "Reconnection test completed successfully") == NULL)
        fail_msg("%s: unexpected result text %s", what, text ? text : "(none)");
    expect_clean_end(&c, "the resumed GET of test_reconnection");
    hc_close(&c);
    rc_call_free(&call);
}

/* ---- 2. Several messages sent while disconnected, replayed in order ---- */

static void test_messages_sent_while_disconnected_are_replayed_in_order(void **state)
{
    hx_fixture *f = *state;
    const char *what = "poll_notify count=20 delay_ms=5 close_after=3";
    hc_conn c;
    post_call(f, &c, 20, "poll_notify", "{\"count\":20,\"delay_ms\":5,\"close_after\":3}", NULL,
              what);
    rc_call call;
    rc_call_init(&call, 20, 20);
    int r = rc_call_read(&c, &call, 0, STEP_MS);
    check_call(&call, what);
    if (r != 0 || !c.body_done)
        fail_msg("%s: expected the POST stream to end cleanly before the result (rc %d)", what, r);
    if (call.next != 4)
        fail_msg("%s: the POST stream carried %lld notifications before closing, expected 3", what,
                 call.next - 1);
    if (call.primings < 2)
        fail_msg("%s: expected a priming event at the start and at the close, saw %lld", what,
                 call.primings);
    hc_close(&c);

    /* The tool needs about 100 ms more; the client comes back after the retry
     * interval (1000 ms), by which time everything is stored. */
    rc_wait_retry(1000);
    resume(f, &c, call.last_id, what);
    read_to_result(&c, &call, what);
    assert_string_equal(rc_result_text(call.result), "sent 20, closed the stream once");
    expect_clean_end(&c, "the resumed GET of poll_notify");
    hc_close(&c);
    rc_call_free(&call);
}

/* ---- 3. Concurrent GETs resuming different POST streams (SEP-1699) ---- */

static void test_concurrent_gets_resume_their_own_post_streams(void **state)
{
    hx_fixture *f = *state;
    const char *what_a = "call A (poll_notify count=12 close_after=2)";
    const char *what_b = "call B (poll_notify count=17 close_after=4)";
    hc_conn a, b;
    post_call(f, &a, 31, "poll_notify", "{\"count\":12,\"delay_ms\":20,\"close_after\":2}", NULL,
              what_a);
    post_call(f, &b, 32, "poll_notify", "{\"count\":17,\"delay_ms\":15,\"close_after\":4}", NULL,
              what_b);
    rc_call ca, cb;
    rc_call_init(&ca, 31, 12);
    rc_call_init(&cb, 32, 17);
    int ra = rc_call_read(&a, &ca, 0, STEP_MS);
    int rb = rc_call_read(&b, &cb, 0, STEP_MS);
    check_call(&ca, what_a);
    check_call(&cb, what_b);
    if (ra != 0 || rb != 0 || !a.body_done || !b.body_done)
        fail_msg("calls A and B: expected both POST streams to end cleanly (rc %d %d)", ra, rb);
    assert_int_equal(ca.next, 3);
    assert_int_equal(cb.next, 5);
    hc_close(&a);
    hc_close(&b);

    /* Both GETs are open before either is read; both tools are still running. */
    resume(f, &a, ca.last_id, what_a);
    resume(f, &b, cb.last_id, what_b);
    read_to_result(&b, &cb, what_b);
    read_to_result(&a, &ca, what_a);
    assert_string_equal(rc_result_text(ca.result), "sent 12, closed the stream once");
    assert_string_equal(rc_result_text(cb.result), "sent 17, closed the stream once");
    expect_clean_end(&a, what_a);
    expect_clean_end(&b, what_b);
    hc_close(&a);
    hc_close(&b);
    rc_call_free(&ca);
    rc_call_free(&cb);
}

/* ---- 6. Takeover: a second resume of a connected stream ---- */

static void test_second_resume_takes_over_and_closes_the_first(void **state)
{
    hx_fixture *f = *state;
    const char *what = "takeover (poll_notify count=30 delay_ms=30 close_after=1)";
    hc_conn post, g1, g2;
    post_call(f, &post, 60, "poll_notify", "{\"count\":30,\"delay_ms\":30,\"close_after\":1}", NULL,
              what);
    rc_call call;
    rc_call_init(&call, 60, 30);
    int r = rc_call_read(&post, &call, 0, STEP_MS);
    check_call(&call, what);
    if (r != 0 || !post.body_done)
        fail_msg("%s: expected the POST stream to end cleanly after notification 1", what);
    hc_close(&post);

    resume(f, &g1, call.last_id, "first resume");
    r = rc_call_read(&g1, &call, 2, STEP_MS);
    check_call(&call, "first resume");
    if (r != 2)
        fail_msg("first resume: expected two live notifications, rc %d", r);

    /* The first GET is still connected: the second takes over, no 409. */
    int status = hc_mcp_get_open(&g2, f->port, f->session, call.last_id, STEP_MS);
    if (status != 200) {
        if (status > 0)
            (void)hc_read_body(&g2, NULL, STEP_MS);
        fail_msg("second resume of a connected stream: expected 200 (takeover), got %d %s", status,
                 status > 0 && g2.head.body ? g2.head.body : "");
    }

    /* The server closes the first socket; what it still carried is ignored
     * (the client has moved on to the second). */
    hc_sse_event ev;
    while ((r = hc_sse_next(&g1, &ev, STEP_MS)) == 1)
        hc_sse_event_free(&ev);
    if (r < 0)
        fail_msg("takeover: the first GET was not closed by the server within %d ms", STEP_MS);

    read_to_result(&g2, &call, "second resume");
    assert_string_equal(rc_result_text(call.result), "sent 30, closed the stream once");
    expect_clean_end(&g2, "second resume");
    hc_close(&g1);
    hc_close(&g2);
    rc_call_free(&call);
}

/* ---- 8. Disconnection is not cancellation ---- */

static void test_dropped_post_stream_is_not_cancelled(void **state)
{
    hx_fixture *f = *state;
    const char *what = "long_running steps=10 delay_ms=50, dropped after the priming event";
    hc_conn c;
    post_call(f, &c, 80, "long_running", "{\"steps\":10,\"delay_ms\":50}", "tok-80", what);
    hc_sse_event ev;
    int r = hc_sse_next(&c, &ev, STEP_MS);
    if (r != 1 || !hc_sse_is_priming(&ev))
        fail_msg("%s: expected a priming event first (rc %d)", what, r);
    rc_call call;
    rc_call_init(&call, 80, 10);
    assert_int_equal(rc_call_feed(&call, &ev), 0);
    long retry = ev.retry;
    hc_sse_event_free(&ev);
    hc_close_reset(&c); /* the client goes away abruptly */

    rc_wait_retry(retry_of(retry));
    resume(f, &c, call.last_id, what);
    read_to_result(&c, &call, what);
    assert_string_equal(rc_result_text(call.result), "completed 10 steps");
    expect_clean_end(&c, what);
    hc_close(&c);
    rc_call_free(&call);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_sse_polling_with_client_reconnection),
        cmocka_unit_test(test_messages_sent_while_disconnected_are_replayed_in_order),
        cmocka_unit_test(test_concurrent_gets_resume_their_own_post_streams),
        cmocka_unit_test(test_second_resume_takes_over_and_closes_the_first),
        cmocka_unit_test(test_dropped_post_stream_is_not_cancelled),
    };
    int failed = cmocka_run_group_tests_name("resume_polling", tests, setup_default, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
