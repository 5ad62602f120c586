/*
 * The leapfrog scenario of seed 001 (rmcp's "SSE reconnect loops"), over
 * real sockets for 30 s.
 *
 * A browser EventSource that read a completed POST stream with a priming
 * event reconnects with GET and Last-Event-ID = the last id of that stream.
 * Nothing was missed, so the server must keep that GET open as an idle stream
 * (keep-alive comments only): closing it makes EventSource loop every retry
 * interval, and letting it replace the standalone GET stream kills that one,
 * which then reconnects and kills the other in turn. Here the standalone GET
 * must survive, every resources/updated notification must arrive on it
 * exactly once, the reconnected GET must get nothing but comments, and no
 * stream may be closed by the server.
 */
#define _GNU_SOURCE
#include <poll.h>
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
#define RUN_MS 30000
#define TRIGGER_EVERY_MS 300
#define KEEPALIVE_MS 1000

static int setup_leapfrog(void **state)
{
    static const char *const flags[] = {"--keepalive-ms", "1000", NULL};
    return hx_setup(state, flags, 1);
}

/* What the test saw on one of the two GET streams. */
struct seen {
    const char *name;
    long long updates;    /* notifications/resources/updated */
    long long keepalives; /* comment blocks */
    long long primings;
    long long last_seq;
};

/* Handles everything already received on c; fails on anything unexpected. */
static void drain(rc_conn *c, struct seen *s, int updates_allowed, long long t0)
{
    if (rc_pump(c) != 0)
        fail_msg("%s: a read error", s->name);
    rc_event ev;
    while (rc_take(c, &ev) == 1) {
        if (ev.comment) {
            s->keepalives++;
        } else if (rc_event_is_priming(&ev)) {
            s->primings++;
        } else {
            if (!updates_allowed)
                fail_msg("%s got a message at %lld ms; it must stay idle: %s", s->name,
                         rc_now_ms() - t0, ev.data);
            if (strstr(ev.data, "\"notifications/resources/updated\"") == NULL)
                fail_msg("%s: unexpected message %s", s->name, ev.data);
            s->updates++;
        }
        if (ev.id != NULL) {
            long long seq = rc_id_seq(ev.id);
            if (seq <= s->last_seq)
                fail_msg("%s: event ids not increasing (%s after seq %lld)", s->name, ev.id,
                         s->last_seq);
            s->last_seq = seq;
        }
        rc_event_free(&ev);
    }
    if (c->eof || c->done)
        fail_msg("%s was closed by the server at %lld ms (%s) after %lld notifications and %lld "
                 "keep-alives",
                 s->name, rc_now_ms() - t0, c->done ? "cleanly" : "connection closed", s->updates,
                 s->keepalives);
}

/* Waits up to ms for either stream to have bytes, handling them. */
static void wait_streams(rc_conn *sg, struct seen *g, rc_conn *rg, struct seen *r, int ms,
                         long long t0)
{
    long long deadline = rc_now_ms() + ms;
    for (;;) {
        long long left = deadline - rc_now_ms();
        if (left <= 0)
            return;
        struct pollfd pfd[2] = {{.fd = sg->fd, .events = POLLIN}, {.fd = rg->fd, .events = POLLIN}};
        int n = poll(pfd, 2, (int)left);
        if (n <= 0)
            continue;
        if (pfd[0].revents)
            drain(sg, g, 1, t0);
        if (pfd[1].revents)
            drain(rg, r, 0, t0);
    }
}

static void trigger(const hx_fixture *f, long long id)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"trigger_resource_update\",\"arguments\":{\"uri\":\"test://watched-resource\"}}}",
             id);
    rc_conn c;
    int status = rc_post(&c, f->port, f->session, body, 0, STEP_MS);
    if (status != 200 || rc_read_body(&c, STEP_MS) != 0 || c.body == NULL ||
        strstr(c.body, "\"updated\"") == NULL)
        fail_msg("trigger %lld: expected 200 and the tool's result, got %d %s", id, status,
                 c.body ? c.body : "");
    rc_close(&c);
}

static void test_reconnected_get_of_a_finished_post_stream_does_not_leapfrog(void **state)
{
    hx_fixture *f = *state;

    /* A POST stream that completes, with its priming event: the subscription. */
    rc_conn post;
    int status = rc_post(&post, f->port, f->session,
                         "{\"jsonrpc\":\"2.0\",\"id\":1001,\"method\":\"resources/subscribe\","
                         "\"params\":{\"uri\":\"test://watched-resource\"}}",
                         0, STEP_MS);
    assert_int_equal(status, 200);
    rc_call sub;
    rc_call_init(&sub, 1001, 0);
    int r = rc_call_read(&post, &sub, 0, STEP_MS);
    if (sub.err[0] != '\0' || r != 1 || sub.primings < 1 || sub.last_id == NULL)
        fail_msg("resources/subscribe: expected a priming event and the result (rc %d) %s", r,
                 sub.err);
    rc_event ev;
    if (rc_next_event(&post, &ev, STEP_MS) != 0 || !post.done)
        fail_msg("resources/subscribe: the POST stream did not end after its result");
    rc_close(&post);

    /* The standalone GET, then the EventSource of the POST coming back with its last id. */
    rc_conn sg, rg;
    struct seen g = {.name = "the standalone GET", .last_seq = -1};
    struct seen rs = {.name = "the reconnected GET (Last-Event-ID of the finished POST)",
                      .last_seq = -1};
    if (rc_get(&sg, f->port, f->session, NULL, STEP_MS) != 200)
        fail_msg("standalone GET: expected 200");
    status = rc_get(&rg, f->port, f->session, sub.last_id, STEP_MS);
    if (status != 200)
        fail_msg("GET with the finished POST stream's last id %s: expected 200 (an idle stream), "
                 "got %d",
                 sub.last_id, status);

    long long t0 = rc_now_ms();
    long long triggers = 0;
    while (rc_now_ms() - t0 < RUN_MS) {
        trigger(f, 2000 + triggers);
        triggers++;
        wait_streams(&sg, &g, &rg, &rs, TRIGGER_EVERY_MS, t0);
    }

    /* Every notification arrives on the standalone GET, then no more. */
    long long deadline = rc_now_ms() + STEP_MS;
    while (g.updates < triggers && rc_now_ms() < deadline)
        wait_streams(&sg, &g, &rg, &rs, 100, t0);
    wait_streams(&sg, &g, &rg, &rs, KEEPALIVE_MS + 500, t0);
    printf("leapfrog: %lld s, %lld triggers; standalone GET: %lld notifications, %lld "
           "keep-alives, %lld priming; reconnected GET: %lld keep-alives, %lld priming\n",
           (rc_now_ms() - t0) / 1000, triggers, g.updates, g.keepalives, g.primings, rs.keepalives,
           rs.primings);
    if (g.updates != triggers)
        fail_msg("the standalone GET got %lld notifications for %lld triggers", g.updates,
                 triggers);
    /* The idle stream is kept alive all along (one comment a second when nothing else). */
    if (rs.keepalives < RUN_MS / KEEPALIVE_MS / 2)
        fail_msg("the reconnected GET got only %lld keep-alive comments in %d s", rs.keepalives,
                 RUN_MS / 1000);
    rc_close(&sg);
    rc_close(&rg);
    rc_call_free(&sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconnected_get_of_a_finished_post_stream_does_not_leapfrog),
    };
    int failed = cmocka_run_group_tests_name("resume_leapfrog", tests, setup_leapfrog, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
