/*
 * A slow reader over real sockets: with --max-queued 65536, a client that
 * does not read its POST stream (and keeps a small receive window) makes the
 * server cut it off rather than hold its messages without bound. The client
 * then reads what reached it and, after the retry interval, resumes with the
 * last id it actually read, again after every cut: every notification
 * arrives exactly once and in order, then the result.
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
#include "resume_client.h"

#define STEP_MS 10000
/*
 * On loopback Linux sizes the server's send buffer from the 64 KiB MSS, up to
 * tcp_wmem's 4 MiB, so a few hundred KiB vanish into the kernel and whether
 * the server's own queue passes --max-queued is a matter of timing. About
 * 6 MiB of notifications cannot fit: the cut is certain. The store must keep
 * them all (--store-max-events), or the resume would find its id expired.
 */
#define COUNT 40000
#define COUNT_ARGS "{\"count\":40000,\"delay_ms\":0,\"close_after\":0}"
#define RESULT_TEXT "sent 40000"
/* What the server says when it cuts a slow reader off (its stderr). */
#define CUT_MESSAGE "fell"

static int setup_slow(void **state)
{
    static const char *const flags[] = {"--max-queued", "65536", "--store-max-events", "100000",
                                        NULL};
    return hx_setup(state, flags, 1);
}

static void test_slow_reader_is_cut_and_resumes_without_loss(void **state)
{
    hx_fixture *f = *state;
    char *body = rc_call_body(100, "poll_notify", COUNT_ARGS, NULL);
    assert_non_null(body);
    int cuts_before = rc_wait_stderr(&f->srv, CUT_MESSAGE, 0, 0);
    rc_conn c;
    /* A small receive window: the server's bytes pile up on its side. */
    int status = rc_post(&c, f->port, f->session, body, 4096, STEP_MS);
    free(body);
    assert_int_equal(status, 200);

    /* Read nothing until the server reports it cut a reader off. */
    if (rc_wait_stderr(&f->srv, CUT_MESSAGE, cuts_before + 1, 30000) < 0) {
        char *err = hc_server_stderr(&f->srv);
        fail_msg("poll_notify count=%d, not read, --max-queued 65536: the server did not cut the "
                 "stream within 30 s; stderr:\n%s",
                 COUNT, err ? err : "");
    }

    rc_call call;
    rc_call_init(&call, 100, COUNT);
    int r = rc_call_read(&c, &call, 0, STEP_MS);
    if (call.err[0] != '\0')
        fail_msg("the cut POST stream: %s", call.err);
    if (r == 1)
        fail_msg("the POST stream was reported cut but still delivered the result");
    if (r != 0)
        fail_msg("the cut POST stream did not end within %d ms", STEP_MS);
    if (c.done)
        fail_msg("the cut POST stream ended with the chunked terminator: it was not cut");
    long long on_post = call.next - 1;
    rc_close(&c);

    /* Come back after the retry interval of the priming event, as a client
     * does after losing its connection; by then the tool has long finished
     * (it takes well under a second), so the resume has the whole rest to
     * replay at once. */
    if (call.retry < 0)
        fail_msg("the POST stream's priming event announced no retry interval");
    rc_wait_retry(call.retry > 5000 ? 5000 : call.retry);

    /* Resume with the last id read, again after every further cut, as long as
     * each resume makes progress. */
    int resumes = 0, cuts = 1, stalled = 0;
    while (!call.got_result) {
        if (call.last_id == NULL)
            fail_msg("the client read no event id before the cut: nothing to resume from");
        if (++resumes > 100)
            fail_msg("no result after 100 resumes (%lld notifications so far)", call.next - 1);
        long long before = call.next;
        int logged = rc_wait_stderr(&f->srv, CUT_MESSAGE, 0, 0);
        status = rc_get(&c, f->port, f->session, call.last_id, STEP_MS);
        if (status < 0) {
            /* No head at all: was this resume cut off too? */
            int now = rc_wait_stderr(&f->srv, CUT_MESSAGE, logged + 1, 2000);
            if (now < 0)
                fail_msg("resume %d with Last-Event-ID %s: no answer within %d ms", resumes,
                         call.last_id, STEP_MS);
            cuts++;
            if (++stalled >= 5) {
                char *err = hc_server_stderr(&f->srv);
                fprintf(stderr, "server stderr:\n%s\n", err ? err : "");
                free(err);
                fail_msg("resume with Last-Event-ID %s (a backlog of %lld notifications, about "
                         "%lld KiB): %d resumes in a row were closed by the server before any "
                         "response head, each logged as a slow-reader cut. The replay itself "
                         "goes over --max-queued before the socket can drain, so the client can "
                         "never catch up. Expected: every resume makes progress (the replay "
                         "paced by the socket, or not counted against the limit).",
                         call.last_id, COUNT - (call.next - 1),
                         (COUNT - (call.next - 1)) * 150 / 1024, stalled);
            }
            continue;
        }
        if (status != 200)
            fail_msg("resume %d with Last-Event-ID %s: expected 200, got %d", resumes, call.last_id,
                     status);
        r = rc_call_read(&c, &call, 0, STEP_MS);
        if (call.err[0] != '\0')
            fail_msg("resume %d: %s", resumes, call.err);
        if (r < 0)
            fail_msg("resume %d: no event within %d ms", resumes, STEP_MS);
        if (r == 0 && c.done)
            fail_msg("resume %d: the stream ended cleanly without the result", resumes);
        if (r == 0)
            cuts++;
        if (r == 1) {
            rc_event ev;
            if (rc_next_event(&c, &ev, STEP_MS) != 0 || !c.done)
                fail_msg("resume %d: the stream did not end cleanly after the result", resumes);
        }
        stalled = call.next == before ? stalled + 1 : 0;
        if (stalled >= 5)
            fail_msg("5 resumes in a row made no progress (at Last-Event-ID %s)", call.last_id);
        rc_close(&c);
    }
    assert_string_equal(rc_result_text(call.result), RESULT_TEXT);
    printf("slow reader: %lld notifications read before the first cut, %d resumes, %d cuts, "
           "%lld notifications and the result in all\n",
           on_post, resumes, cuts, call.next - 1);
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
    rc_conn c;
    int status = rc_post(&c, f->port, f->session, body, 0, STEP_MS);
    free(body);
    assert_int_equal(status, 200);
    rc_call call;
    rc_call_init(&call, 101, 2000);
    int r = rc_call_read(&c, &call, 0, STEP_MS);
    if (call.err[0] != '\0' || r != 0 || !c.done || call.next != 2)
        fail_msg("%s: expected the POST stream to end cleanly after notification 1 (rc %d, %lld "
                 "notifications) %s",
                 what, r, call.next - 1, call.err);
    rc_close(&c);
    rc_wait_retry(call.retry < 0 ? 1000 : call.retry > 5000 ? 5000 : call.retry);

    int logged = rc_wait_stderr(&f->srv, CUT_MESSAGE, 0, 0);
    status = rc_get(&c, f->port, f->session, call.last_id, STEP_MS);
    if (status != 200) {
        int cut = rc_wait_stderr(&f->srv, CUT_MESSAGE, logged + 1, 2000) >= 0;
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
                 r < 0    ? "timeout"
                 : c.done ? "cleanly"
                          : "connection closed",
                 call.next - 1);
    assert_string_equal(rc_result_text(call.result), "sent 2000, closed the stream once");
    rc_close(&c);
    rc_call_free(&call);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_reader_is_cut_and_resumes_without_loss),
        cmocka_unit_test(test_large_backlog_replays_to_a_prompt_reader),
    };
    int failed = cmocka_run_group_tests_name("resume_slow_reader", tests, setup_slow, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
