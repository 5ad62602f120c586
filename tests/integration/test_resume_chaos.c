/* SPDX-License-Identifier: MIT */
/*
 * Chaos over real sockets: 200 tool calls (poll_notify count=50, delay_ms 0
 * to 2, the server never closes the stream) from 8 client threads on 4
 * sessions. The clients cut their connections at random points (a close or
 * a reset, after a random number of events, bytes already received but not
 * yet processed being thrown away) and resume with the last id they
 * processed, sometimes at once (the server then takes a stream over from a
 * socket it may not yet know is dead), sometimes a few ms later. Every one of
 * the 50 notifications of every call and every result must arrive exactly
 * once and in order.
 *
 * The PRNG seed is printed; MCP_CHAOS_SEED=<n> replays a run.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "http_expect.h"
#include "resume_check.h"

#define CALLS 200
#define THREADS 8
#define SESSIONS 4
#define COUNT 50
#define STEP_MS 10000
/* The whole run must end by then (it takes a few seconds). */
#define RUN_LIMIT_MS 60000
/* A call gets at most this many cuts, so that every call finishes. */
#define MAX_CUTS_PER_CALL 8

static int setup_chaos(void **state)
{
    return hx_setup(state, NULL, 1);
}

typedef struct worker {
    int index;
    int port;
    const char *session;
    uint64_t rng;
    long long t_end;
    /* Totals. */
    long long calls, notifications, results, closes, resets, resumes, immediate;
    char err[1024]; /* the first failure, "" when none */
} worker;

static unsigned below(worker *w, unsigned n)
{
    return (unsigned)(harness_rand(&w->rng) % n);
}

static int failw(worker *w, long long id, const char *fmt, const char *a, long long x)
{
    if (w->err[0] == '\0') {
        char msg[900];
        snprintf(msg, sizeof(msg), fmt, a ? a : "", x);
        snprintf(w->err, sizeof(w->err), "thread %d, call %lld: %s", w->index, id, msg);
    }
    return -1;
}

/* One call, from its POST to its result, through any number of cuts and resumes. */
static int one_call(worker *w, long long id)
{
    char args[96];
    snprintf(args, sizeof(args), "{\"count\":%d,\"delay_ms\":%u,\"close_after\":0}", COUNT,
             below(w, 3));
    char *body = rc_call_body(id, "poll_notify", args, NULL);
    if (body == NULL)
        return failw(w, id, "ENOMEM%s%lld", "", 0);
    hc_conn c;
    int status = hc_mcp_post_open(&c, w->port, w->session, body, 0, STEP_MS);
    free(body);
    if (status != 200)
        return failw(w, id, "POST tools/call poll_notify%s: expected 200, got %lld", "", status);

    rc_call call;
    rc_call_init(&call, id, COUNT);
    int cuts = 0, rc = 0;
    for (;;) {
        /* A cut after 1 to (events left + 2) events: the priming event counts,
         * so there is always an id to resume from; more than there are left
         * means no cut. */
        int cut_after = 0;
        long long left = COUNT - (call.next - 1) + 1;
        if (cuts < MAX_CUTS_PER_CALL && below(w, 100) < 80)
            cut_after = 1 + (int)below(w, (unsigned)left + 2);
        int r = rc_call_read(&c, &call, cut_after, STEP_MS);
        if (r == -2) {
            rc = failw(w, id, "%s%lld", call.err, 0);
            break;
        }
        if (r == -1) {
            rc = failw(w, id, "no event within the deadline after %s notifications %lld", "",
                       call.next - 1);
            break;
        }
        if (r == 0) {
            rc = failw(w, id,
                       "the server ended the stream (%s) after notification %lld without the "
                       "result",
                       c.body_done ? "cleanly" : "connection closed", call.next - 1);
            break;
        }
        if (r == 1) {
            hc_sse_event ev;
            int e = hc_sse_next_block(&c, &ev, STEP_MS);
            if (e == 1) {
                rc_call_feed(&call, &ev);
                hc_sse_event_free(&ev);
                rc = failw(w, id, "an event after the result: %s%lld", call.err, 0);
            } else if (e < 0 || !c.body_done) {
                rc = failw(w, id, "the stream did not end cleanly after the result%s%lld", "", 0);
            }
            const char *text = rc_result_text(call.result);
            if (rc == 0 && (text == NULL || strcmp(text, "sent 50") != 0))
                rc = failw(w, id, "unexpected result text %s%lld", text ? text : "(none)", 0);
            break;
        }
        /* The client cuts its connection here. */
        cuts++;
        if (below(w, 2) == 0) {
            hc_close_reset(&c);
            w->resets++;
        } else {
            hc_close(&c);
            w->closes++;
        }
        if (below(w, 2) == 0)
            w->immediate++;
        else
            rc_wait_retry((long)below(w, 6));
        if (hc_now_ms() > w->t_end) {
            rc = failw(w, id, "the run took longer than its limit%s%lld", "", 0);
            break;
        }
        status = hc_mcp_get_open(&c, w->port, w->session, call.last_id, STEP_MS);
        w->resumes++;
        if (status != 200) {
            char detail[300];
            if (status > 0 && hc_read_body(&c, NULL, STEP_MS) == 0)
                snprintf(detail, sizeof(detail),
                         "resume with %s after notification %lld: got "
                         "%d %.150s",
                         call.last_id, call.next - 1, status, c.head.body ? c.head.body : "");
            else
                snprintf(detail, sizeof(detail), "resume with %s after notification %lld: got %d",
                         call.last_id, call.next - 1, status);
            rc = failw(w, id, "%s%lld", detail, 0);
            break;
        }
    }
    hc_close(&c);
    w->calls++;
    w->notifications += call.next - 1;
    w->results += call.got_result;
    rc_call_free(&call);
    return rc;
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    for (long long id = 1000 + w->index; id < 1000 + CALLS; id += THREADS)
        if (one_call(w, id) != 0)
            break;
    return NULL;
}

static void test_random_cuts_and_resumes_lose_nothing(void **state)
{
    hx_fixture *f = *state;
    uint64_t seed = harness_chaos_seed();

    char sessions[SESSIONS][33];
    memcpy(sessions[0], f->session, sizeof(sessions[0]));
    for (int i = 1; i < SESSIONS; i++)
        hx_new_session(f->port, sessions[i]);

    static worker ws[THREADS];
    pthread_t th[THREADS];
    long long t0 = hc_now_ms();
    for (int i = 0; i < THREADS; i++) {
        memset(&ws[i], 0, sizeof(ws[i]));
        ws[i].index = i;
        ws[i].port = f->port;
        ws[i].session = sessions[i % SESSIONS];
        ws[i].rng = (seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)) | 1;
        ws[i].t_end = t0 + RUN_LIMIT_MS;
        assert_int_equal(pthread_create(&th[i], NULL, run_worker, &ws[i]), 0);
    }
    worker sum = {0};
    const char *first_err = NULL;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        sum.calls += ws[i].calls;
        sum.notifications += ws[i].notifications;
        sum.results += ws[i].results;
        sum.closes += ws[i].closes;
        sum.resets += ws[i].resets;
        sum.resumes += ws[i].resumes;
        sum.immediate += ws[i].immediate;
        if (first_err == NULL && ws[i].err[0] != '\0')
            first_err = ws[i].err;
    }
    long long elapsed = hc_now_ms() - t0;
    printf("chaos: %lld calls, %lld notifications (of %d), %lld results in %lld ms; the clients "
           "cut %lld connections (%lld closes, %lld resets) and resumed %lld times (%lld at "
           "once)\n",
           sum.calls, sum.notifications, CALLS * COUNT, sum.results, elapsed,
           sum.closes + sum.resets, sum.closes, sum.resets, sum.resumes, sum.immediate);
    if (first_err != NULL)
        fail_msg("chaos (seed %" PRIu64 "): %s", seed, first_err);
    assert_int_equal(sum.calls, CALLS);
    assert_int_equal(sum.results, CALLS);
    assert_int_equal(sum.notifications, (long long)CALLS * COUNT);
    if (elapsed > RUN_LIMIT_MS)
        fail_msg("chaos took %lld ms, more than %d", elapsed, RUN_LIMIT_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cuts_and_resumes_lose_nothing),
    };
    int failed = cmocka_run_group_tests_name("resume_chaos", tests, setup_chaos, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
