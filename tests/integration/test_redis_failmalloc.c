/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures in the cluster store (test_failmalloc.c is the model), with the
 * harness of failmalloc.c. The
 * executable is linked with --wrap=malloc,calloc,realloc,strdup,strndup, so every
 * allocation made by libmcp's objects is counted; hiredis's and libuv's are not
 * (they are shared libraries, and hiredis 0.14 has no allocator hooks). A clean
 * run of the scenario counts N of them; then, for every n in 1..N (and 5% more,
 * since heartbeats make the order vary a little), it runs again with only the n-th
 * failing:
 *
 *   two clusters attach; one writes a record, opens a stream and appends to it;
 *   the other reads the record, asks whether the first is alive, follows the
 *   stream while more is appended; bus messages to one node and to all; the
 *   stream gets its last event and its end; the second replays it; a session is
 *   deleted; both detach.
 *
 * Whatever fails, every callback asked for runs exactly once, nothing crashes, the
 * loop closes (uv_loop_close 0), and in the sanitizer build LeakSanitizer finds
 * nothing after each run.
 *
 * MCP_FAILMALLOC_FROM and _TO (environment) narrow the run to reproduce one n.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "failmalloc.h"
#include "harness.h"
#include "redis_host.h"
#include "store/cluster.h"

#if defined(__SANITIZE_ADDRESS__)
#define FM_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FM_LSAN 1
#endif
#endif
#ifdef FM_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define START_MS 10000
#define RUN_MS 2000

/* ---- The scenario ---- */

typedef struct sc {
    uv_loop_t loop;
    uv_timer_t wake;
    int asked_get, got_get, asked_alive, got_alive, asked_follow, got_follow, asked_replay,
        got_replay, emitted, messages;
} sc;

static void on_wake(uv_timer_t *t)
{
    (void)t;
}

static void on_get(void *arg, int status, const char *text, size_t len)
{
    (void)status, (void)text, (void)len;
    ((sc *)arg)->got_get++;
}

static void on_alive(void *arg, int alive)
{
    (void)alive;
    ((sc *)arg)->got_alive++;
}

static void on_emit(void *arg, uint64_t seq, const char *data, size_t len)
{
    (void)seq, (void)data, (void)len;
    ((sc *)arg)->emitted++;
}

static void on_follow_done(void *arg, int status, const char *text, size_t len)
{
    (void)status, (void)text, (void)len;
    ((sc *)arg)->got_follow++;
}

static void on_replay_done(void *arg, int status)
{
    (void)status;
    ((sc *)arg)->got_replay++;
}

static void on_message(void *user, const mcp__cluster_msg *m)
{
    (void)m;
    ((sc *)user)->messages++;
}

static int follow_over(const sc *s)
{
    return s->got_follow == s->asked_follow && s->got_get == s->asked_get &&
           s->got_alive == s->asked_alive && s->got_replay == s->asked_replay;
}

/* Runs the loop until done(s) or ms pass. */
static void run_until(sc *s, int (*done)(const sc *s), int ms)
{
    long long deadline = harness_now_ms() + ms;
    while (!done(s) && harness_now_ms() < deadline)
        uv_run(&s->loop, UV_RUN_ONCE);
}

static int three_emitted(const sc *s)
{
    return s->emitted >= 3 || s->got_follow == s->asked_follow;
}

static int alive_answered(const sc *s)
{
    return s->got_alive == s->asked_alive;
}

static void scenario(const char *url, long id, sc *s)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "fm%ld:", id);
    mcp__cluster_opts o = {.url = url, .prefix = prefix, .heartbeat_ms = 50};
    mcp__cluster_cbs cbs = {.message = on_message, .user = s};
    mcp__cluster *a = NULL, *b = NULL;
    if (mcp__cluster_new(&o, &cbs, &a, NULL, 0) != MCP_OK ||
        mcp__cluster_attach(a, &s->loop) != MCP_OK ||
        mcp__cluster_new(&o, &cbs, &b, NULL, 0) != MCP_OK ||
        mcp__cluster_attach(b, &s->loop) != MCP_OK)
        goto out;
    mcp_event_store *sa = mcp__cluster_event_store(a), *sb = mcp__cluster_event_store(b);
    mcp__cluster_session_put(a, "s", "record", 6, 60000, 0, NULL, NULL);
    mcp__cluster_open_next(a, "open", 4);
    for (uint64_t seq = 1; seq <= 5; seq++)
        mcp_event_store_append(sa, "s", 1, seq, seq == 3 ? "" : "data", seq == 3 ? 0 : 4);
    /* a's writes done before b reads (an answer to a comes after them). */
    s->asked_alive++;
    mcp__cluster_node_alive(a, mcp__cluster_node(a), on_alive, s);
    run_until(s, alive_answered, RUN_MS);

    s->asked_get++;
    mcp__cluster_session_get(b, "s", on_get, s);
    s->asked_alive++;
    mcp__cluster_node_alive(b, mcp__cluster_node(a), on_alive, s);
    if (mcp__cluster_follow_start(b, "s", 1, mcp__cluster_node(a), 1, on_emit, on_follow_done, s) !=
        NULL)
        s->asked_follow++;
    /* Appended while the follower subscribes and replays: heard live, kept. */
    for (uint64_t seq = 6; seq <= 8; seq++)
        mcp_event_store_append(sa, "s", 1, seq, "more", 4);
    char long_session[200];
    memset(long_session, 'l', sizeof long_session - 1);
    long_session[sizeof long_session - 1] = '\0';
    mcp__cluster_send(a, mcp__cluster_node(b), 'x', long_session, "data", 4);
    mcp__cluster_send(a, 0, 'y', "", NULL, 0);
    run_until(s, three_emitted, RUN_MS);

    mcp_event_store_append(sa, "s", 1, 9, "last", 4);
    mcp__cluster_stream_end(a, "s", 1, 9);
    s->asked_alive++;
    mcp__cluster_node_alive(a, mcp__cluster_node(a), on_alive, s);
    run_until(s, alive_answered, RUN_MS);
    if (mcp_event_store_replay(sb, "s", 1, 1, on_emit, on_replay_done, s) == MCP_OK)
        s->asked_replay++;
    run_until(s, follow_over, RUN_MS);
    mcp_event_store_drop_session(sa, "gone");
    mcp__cluster_session_delete(a, "s", 60000);
    mcp__cluster_session_touch(a, "s", 1000, NULL, NULL);
    s->asked_alive++;
    mcp__cluster_node_alive(a, mcp__cluster_node(a), on_alive, s);
    run_until(s, follow_over, RUN_MS);
out:
    /* Whatever is still under way ends inside the detach. */
    mcp__cluster_free(a);
    mcp__cluster_free(b);
}

/* One run on a loop of its own: 0 when every callback came once and the loop closed. */
static int run_once(const char *url, long id, long fail_at, char *why, size_t why_len)
{
    sc s;
    memset(&s, 0, sizeof s);
    uv_loop_init(&s.loop);
    uv_timer_init(&s.loop, &s.wake);
    uv_timer_start(&s.wake, on_wake, 5, 5);
    fm_arm(fail_at);
    scenario(url, id, &s);
    fm_disarm();
    uv_close((uv_handle_t *)&s.wake, NULL);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&s.loop);
    if (closed != 0)
        snprintf(why, why_len, "uv_loop_close: %s", uv_strerror(closed));
    else if (!follow_over(&s))
        snprintf(why, why_len,
                 "callbacks: get %d/%d, alive %d/%d, follow %d/%d, replay %d/%d (done/asked)",
                 s.got_get, s.asked_get, s.got_alive, s.asked_alive, s.got_follow, s.asked_follow,
                 s.got_replay, s.asked_replay);
    else if (fail_at == 0 && (s.emitted < 14 || s.asked_follow != 1))
        snprintf(why, why_len, "the clean run did not get through: %d events emitted", s.emitted);
    else
        return 0;
    return -1;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static rh_server srv;

static int srv_start(void **state)
{
    (void)state;
    return rh_start(&srv, START_MS);
}

static int srv_stop(void **state)
{
    (void)state;
    return rh_stop(&srv, START_MS);
}

static void test_every_allocation_of_the_cluster_fails_cleanly(void **state)
{
    (void)state;
    char url[64], why[256] = "";
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", srv.port);

    if (run_once(url, 0, 0, why, sizeof why) != 0)
        fail_msg("clean run: %s", why);
    long n_allocs = fm_counted();
    assert_true(n_allocs > 50);

    long from = env_long("MCP_FAILMALLOC_FROM", 1);
    long to = env_long("MCP_FAILMALLOC_TO", n_allocs + n_allocs / 20);
    long runs = 0, injected = 0;
    long long t0 = harness_now_ms();
    for (long n = from; n <= to; n++) {
        int rc = run_once(url, n, n, why, sizeof why);
        runs++;
        injected += fm_failures() > 0;
        if (rc != 0)
            fail_msg("with allocation %ld of %ld failing: %s", n, n_allocs, why);
#ifdef FM_LSAN
        if (__lsan_do_recoverable_leak_check() != 0)
            fail_msg("with allocation %ld of %ld failing: a leak (report above)", n, n_allocs);
#endif
    }
    printf("[ failmalloc ] cluster: %ld allocations in a clean run; %ld runs, %ld with a failure "
           "injected, in %lld ms\n",
           n_allocs, runs, injected, harness_now_ms() - t0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_of_the_cluster_fails_cleanly),
    };
    return cmocka_run_group_tests_name("redis_failmalloc", tests, srv_start, srv_stop);
}
