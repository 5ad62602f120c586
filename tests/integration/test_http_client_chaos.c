/* SPDX-License-Identifier: MIT */
/*
 * Chaos with our client (the variant of test_resume_chaos.c where mcp_client
 * makes the calls): 8 clients, each on its own thread, make 200 tool calls in
 * all (poll_notify count=50, delay_ms 0 to 2, and in a third of them the server
 * closes the stream itself after a random notification, SEP-1699 polling)
 * against `mcp-everything --http --retry-ms 10`, through a TCP proxy
 * (tcp_proxy.h) that cuts 70% of the SSE streams at a random point after an
 * event, with a FIN or a RST. Every call must succeed, and every one of its 50
 * notifications must reach the client's notification hook exactly once and in
 * order, before the result.
 *
 * The PRNG seed is printed; MCP_CHAOS_SEED=<n> replays its choices.
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

#include <cmocka.h>

#include "client_watch.h"
#include "harness.h"
#include "http_expect.h"
#include "tcp_proxy.h"

#define CLIENTS 8
#define COUNT 50
#define CUT_PERCENT 70
#define CALLS 200
#define CALL_MS 20000
/* The whole run must end by then (it takes a few seconds). */
#define RUN_LIMIT_MS 60000

typedef struct worker {
    int index;
    const char *url;
    uint64_t rng;
    long long t_end;
    cw_watch w;
    long long calls, notifications, results, server_closes;
    char err[512]; /* the first failure, "" when none */
} worker;

static void *run_worker(void *arg)
{
    worker *k = arg;
    mcp_client *c = NULL;
    int rc = cw_connect(&k->w, k->url, NULL, CALL_MS, &c);
    if (rc != MCP_OK) {
        snprintf(k->err, sizeof(k->err), "client %d: connect: %s", k->index, mcp_strerror(rc));
        mcp_client_free(c);
        return NULL;
    }
    for (int i = k->index; i < CALLS && k->err[0] == '\0'; i += CLIENTS) {
        int close_after =
            harness_rand(&k->rng) % 3 == 0 ? 1 + (int)(harness_rand(&k->rng) % COUNT) : 0;
        json_t *args = json_pack("{s:i, s:i, s:i}", "count", COUNT, "delay_ms",
                                 (int)(harness_rand(&k->rng) % 3), "close_after", close_after);
        size_t from = cw_notes(&k->w);
        json_t *result = NULL;
        mcp_rpc_error err = {0};
        mcp_call_opts o = {.timeout_ms = CALL_MS};
        rc = mcp_client_call_tool(c, "poll_notify", args, &o, &result, &err);
        k->calls++;
        if (rc != MCP_OK) {
            snprintf(k->err, sizeof(k->err), "client %d, call %d: %s (%d %s)", k->index, i,
                     mcp_strerror(rc), err.code, err.message);
        } else if (strncmp(cw_text(result), "sent 50", 7) != 0) {
            snprintf(k->err, sizeof(k->err), "client %d, call %d: result %s", k->index, i,
                     cw_text(result));
        } else {
            char *problem = cw_check_numbered(&k->w, from, COUNT);
            if (problem != NULL)
                snprintf(k->err, sizeof(k->err), "client %d, call %d: %s", k->index, i, problem);
            free(problem);
            k->results++;
            k->server_closes += close_after > 0;
        }
        k->notifications += (long long)(cw_notes(&k->w) - from);
        json_decref(result);
        mcp_rpc_error_clear(&err);
        if (k->err[0] == '\0' && hc_now_ms() > k->t_end)
            snprintf(k->err, sizeof(k->err), "client %d: the run took longer than %d ms", k->index,
                     RUN_LIMIT_MS);
    }
    mcp_client_free(c);
    return NULL;
}

typedef struct fixture {
    hc_server srv;
    tp_proxy *proxy;
    worker ws[CLIENTS];
} fixture;

static int setup(void **state)
{
    static const char *const flags[] = {"--retry-ms", "10", NULL};
    fixture *f = calloc(1, sizeof(*f));
    if (f == NULL || hc_server_start(&f->srv, flags, HX_START_MS) != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tp_stop(f->proxy);
    int rc = hc_server_stop_check(&f->srv, HX_STOP_MS);
    for (int i = 0; i < CLIENTS; i++)
        cw_free(&f->ws[i].w);
    free(f);
    return rc;
}

static void test_random_cuts_lose_nothing_for_our_client(void **state)
{
    fixture *f = *state;
    uint64_t seed = harness_chaos_seed();
    assert_int_equal(tp_start(&f->proxy, f->srv.port, seed, CUT_PERCENT), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", tp_port(f->proxy));

    pthread_t th[CLIENTS];
    long long t0 = hc_now_ms();
    for (int i = 0; i < CLIENTS; i++) {
        worker *k = &f->ws[i];
        k->index = i;
        k->url = url;
        k->rng = (seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)) | 1;
        k->t_end = t0 + RUN_LIMIT_MS;
        cw_init(&k->w);
        assert_int_equal(pthread_create(&th[i], NULL, run_worker, k), 0);
    }
    worker sum = {0};
    const char *first_err = NULL;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        sum.calls += f->ws[i].calls;
        sum.results += f->ws[i].results;
        sum.notifications += f->ws[i].notifications;
        sum.server_closes += f->ws[i].server_closes;
        if (first_err == NULL && f->ws[i].err[0] != '\0')
            first_err = f->ws[i].err;
    }
    long long elapsed = hc_now_ms() - t0;
    tp_stats st;
    tp_get_stats(f->proxy, &st);
    printf("chaos: %lld calls, %lld results, %lld notifications (of %d) in %lld ms; the server "
           "closed %lld streams itself; the proxy saw %lld connections and %lld SSE streams, and "
           "cut %lld (%lld closes, %lld resets)\n",
           sum.calls, sum.results, sum.notifications, CALLS * COUNT, elapsed, sum.server_closes,
           st.connections, st.streams, st.closes + st.resets, st.closes, st.resets);
    if (first_err != NULL)
        fail_msg("chaos (seed %" PRIu64 "): %s", seed, first_err);
    assert_int_equal(sum.results, CALLS);
    assert_int_equal(sum.notifications, (long long)CALLS * COUNT);
    /* The chaos happened. */
    assert_true(st.closes > 0 && st.resets > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_cuts_lose_nothing_for_our_client, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("http_client_chaos", tests, NULL, NULL);
}
