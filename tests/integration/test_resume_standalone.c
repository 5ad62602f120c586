/* SPDX-License-Identifier: MIT */
/*
 * Standalone (GET) streams and resumption over real sockets: messages not
 * tied to a request go to exactly one live GET stream, the newest; when it
 * goes the next message takes the other; with none open, messages are kept
 * under the last standalone stream and a resume of that stream with its last
 * event id delivers them, while a plain GET gets no old events; before the
 * session's first GET they wait for it and go out on it.
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

static int setup_keepalive(void **state)
{
    /* Keep-alive comments every 300 ms let a test see "nothing else came" as an event. */
    static const char *const flags[] = {"--keepalive-ms", "300", NULL};
    return hx_setup(state, flags, 1);
}

/* A request on its own POST; the whole answer is read and must hold its response. */
static void call(const hx_fixture *f, const char *body, const char *what)
{
    hc_conn c;
    int status = hc_mcp_post_open(&c, f->port, f->session, body, 0, STEP_MS);
    if (status != 200)
        fail_msg("%s: expected 200, got %d", what, status);
    if (hc_read_body(&c, NULL, STEP_MS) != 0 || c.head.body == NULL ||
        strstr(c.head.body, "\"result\"") == NULL)
        fail_msg("%s: no result: %s", what, c.head.body ? c.head.body : "(none)");
    hc_close(&c);
}

static void trigger(const hx_fixture *f)
{
    call(f,
         "{\"jsonrpc\":\"2.0\",\"id\":70,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"trigger_resource_update\",\"arguments\":{\"uri\":\"test://watched-resource\"}}}",
         "tools/call trigger_resource_update");
}

/* Opens a GET (plain when last_id is NULL) and asserts 200. */
static void open_get(const hx_fixture *f, hc_conn *c, const char *last_id, const char *what)
{
    int status = hc_mcp_get_open(c, f->port, f->session, last_id, STEP_MS);
    if (status != 200)
        fail_msg("%s: expected 200, got %d", what, status);
}

/* The next block must be a priming event; returns its id (malloc'd). */
static char *expect_priming(hc_conn *c, const char *what)
{
    hc_sse_event ev;
    int r = hc_sse_next(c, &ev, STEP_MS);
    if (r != 1 || !hc_sse_is_priming(&ev))
        fail_msg("%s: expected a priming event first (rc %d, data %s)", what, r,
                 r == 1 && ev.data ? ev.data : "(none)");
    char *id = strdup(ev.id);
    assert_non_null(id);
    hc_sse_event_free(&ev);
    return id;
}

/* The next event with data must be the resources/updated notification; returns its id. */
static char *expect_updated(hc_conn *c, const char *what)
{
    hc_sse_event ev;
    for (;;) {
        int r = hc_sse_next_block(c, &ev, STEP_MS);
        if (r != 1)
            fail_msg("%s: expected notifications/resources/updated, got %s", what,
                     r == 0 ? "the end of the stream" : "nothing in time");
        if (!hc_sse_is_priming(&ev))
            break;
        hc_sse_event_free(&ev);
    }
    json_t *m = json_loads(ev.data, 0, NULL);
    const char *method = json_string_value(json_object_get(m, "method"));
    const char *uri = json_string_value(json_object_get(json_object_get(m, "params"), "uri"));
    if (method == NULL || strcmp(method, "notifications/resources/updated") != 0 || uri == NULL ||
        strcmp(uri, "test://watched-resource") != 0)
        fail_msg("%s: expected notifications/resources/updated for test://watched-resource, "
                 "got %s",
                 what, ev.data);
    json_decref(m);
    if (ev.id == NULL)
        fail_msg("%s: the notification has no event id", what);
    char *id = strdup(ev.id);
    assert_non_null(id);
    hc_sse_event_free(&ev);
    return id;
}

/* The next block must be a keep-alive comment: no message is pending on this stream. */
static void expect_quiet(hc_conn *c, const char *what)
{
    hc_sse_event ev;
    int r = hc_sse_next(c, &ev, STEP_MS);
    if (r != 1)
        fail_msg("%s: expected a keep-alive comment, got %s", what,
                 r == 0 ? "the end of the stream" : "nothing in time");
    if (!ev.comment)
        fail_msg("%s: expected no message (only a keep-alive comment), got id=%s data=%s", what,
                 ev.id ? ev.id : "(none)", ev.data ? ev.data : "(none)");
    hc_sse_event_free(&ev);
}

static void test_standalone_failover_and_resume_of_the_last_stream(void **state)
{
    hx_fixture *f = *state;
    call(f,
         "{\"jsonrpc\":\"2.0\",\"id\":71,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
         "\"test://watched-resource\"}}",
         "resources/subscribe");

    hc_conn a, b, plain, resumed;
    open_get(f, &a, NULL, "GET A");
    char *a_last = expect_priming(&a, "GET A");
    open_get(f, &b, NULL, "GET B");
    char *b_last = expect_priming(&b, "GET B");

    /* Two open: the newest (B) carries the notification, A gets nothing. */
    trigger(f);
    free(b_last);
    b_last = expect_updated(&b, "GET B (the newest of two)");
    expect_quiet(&a, "GET A while B is the newest");

    /* B goes: the next notification takes A. */
    hc_close(&b);
    trigger(f);
    free(a_last);
    a_last = expect_updated(&a, "GET A after B was closed");
    expect_quiet(&a, "GET A after its notification");

    /* None open: the notification is kept under A, the last standalone stream. */
    hc_close(&a);
    trigger(f);

    /* A plain GET gets no old events. */
    open_get(f, &plain, NULL, "plain GET while a notification is kept");
    char *plain_priming = expect_priming(&plain, "plain GET");
    expect_quiet(&plain, "plain GET (no Last-Event-ID) must not get old events");
    hc_close(&plain);

    /* Resuming A with its last event id delivers the kept notification, once. */
    open_get(f, &resumed, a_last, "resume of A");
    char *kept =
        expect_updated(&resumed, "resume of A (the notification sent while none was open)");
    if (rc_id_seq(kept) <= rc_id_seq(a_last))
        fail_msg("resume of A: the replayed notification's id %s is not after %s", kept, a_last);
    expect_quiet(&resumed, "resume of A after the kept notification");

    /* And A is live again: the next notification comes to it. */
    trigger(f);
    char *live = expect_updated(&resumed, "resumed A, live");
    if (rc_id_seq(live) <= rc_id_seq(kept))
        fail_msg("resumed A: ids not increasing (%s after %s)", live, kept);
    expect_quiet(&resumed, "resumed A after the live notification");
    hc_close(&resumed);

    free(a_last);
    free(b_last);
    free(plain_priming);
    free(kept);
    free(live);
}

/* A message sent before the session's first GET (clients open it only after their
 * notifications/initialized was accepted) waits for it and goes out on it, under an event
 * id that a resume replays. It used to be dropped: nothing to resume yet. */
static void test_notification_before_the_first_get_goes_out_on_it(void **state)
{
    hx_fixture g = *(hx_fixture *)*state;
    hx_new_session(g.port, g.session);
    call(&g,
         "{\"jsonrpc\":\"2.0\",\"id\":71,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
         "\"test://watched-resource\"}}",
         "resources/subscribe");
    trigger(&g);

    hc_conn first, resumed;
    open_get(&g, &first, NULL, "first GET");
    char *priming = expect_priming(&first, "first GET");
    char *sent = expect_updated(&first, "first GET (the notification sent before it)");
    expect_quiet(&first, "first GET after the notification that waited");
    hc_close(&first);

    open_get(&g, &resumed, priming, "resume of the first GET");
    char *replayed = expect_updated(&resumed, "resume of the first GET from its priming event");
    assert_string_equal(replayed, sent);
    expect_quiet(&resumed, "resume of the first GET after the replay");
    hc_close(&resumed);
    free(priming);
    free(sent);
    free(replayed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standalone_failover_and_resume_of_the_last_stream),
        cmocka_unit_test(test_notification_before_the_first_get_goes_out_on_it),
    };
    int failed =
        cmocka_run_group_tests_name("resume_standalone", tests, setup_keepalive, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
