/* SPDX-License-Identifier: MIT */
/*
 * The `mcp` command-line client against a real `mcp-everything --http` that is
 * killed (SIGKILL) in the middle of a request and restarted on its port, over real
 * 127.0.0.1 sockets. Revision 2026-07-28 has no resumption, so:
 *
 * - tools/list, and a call of a tool annotated idempotentHint (`add`), are sent
 *   once more and answered by the restarted server: exit 0;
 * - a call of a tool without it (`echo`) is not sent again, by the library or by
 *   libcurl (which by itself repeats a request whose reused connection closes
 *   before any answer), and the error says why: exit 3. Nor in revision
 *   2025-11-25, where a request whose stream brought no event id cannot resume.
 *
 * Between client and server, a TCP proxy (tcp_proxy.h) holds the request: it
 * reaches the server, nothing after it reaches the client, and the test kills the
 * server then. The proxy counts each time the request went to a server.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "client_watch.h"
#include "harness.h"
#include "http_client.h"
#include "tcp_proxy.h"

#define SERVER_START_MS 10000
#define SERVER_STOP_MS 10000
#define HOLD_MS 15000

static hc_server srv;
static tp_proxy *proxy;
static char url[64];

static int setup(void **state)
{
    (void)state;
    if (hc_server_start(&srv, NULL, SERVER_START_MS) != 0)
        return -1;
    if (tp_start(&proxy, srv.port, harness_chaos_seed(), 0) != 0)
        return -1;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", tp_port(proxy));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tp_stop(proxy);
    proxy = NULL;
    int status;
    int rc = hc_server_stop(&srv, SERVER_STOP_MS, &status);
    hc_server_free(&srv);
    return rc;
}

/* One run of mcp on a thread of its own. */
typedef struct bg_run {
    const char *const *args;
    cr_run r;
    pthread_t thread;
} bg_run;

static void *bg_main(void *arg)
{
    bg_run *b = arg;
    cr_run_mcp(&b->r, b->args);
    return NULL;
}

/*
 * Runs mcp with args while the proxy holds the first request that contains hold:
 * once it has reached the server, the server is killed and started again on its
 * port. Returns how many times the request went to a server; *r gets the run.
 */
static long long run_through_a_restart(const char *const *args, const char *hold, cr_run *r)
{
    tp_hold(proxy, hold);
    bg_run b = {.args = args};
    assert_int_equal(pthread_create(&b.thread, NULL, bg_main, &b), 0);
    int held = tp_wait_held(proxy, HOLD_MS);
    int port = srv.port, status;
    assert_int_equal(kill(srv.pid, SIGKILL), 0);
    assert_int_equal(hc_server_wait(&srv, SERVER_STOP_MS, &status), 0);
    hc_server_free(&srv);
    assert_int_equal(hc_server_start_on(&srv, port, NULL, SERVER_START_MS), 0);
    pthread_join(b.thread, NULL);
    *r = b.r;
    tp_stats st;
    tp_get_stats(proxy, &st);
    printf("# mcp");
    for (const char *const *a = args; *a != NULL; a++)
        printf(" %s", *a == url ? "URL" : *a);
    printf(": held %s, sent %lld time(s); exit %d; stderr: %s", held == 0 ? "yes" : "NO",
           st.matches, r->status, r->err[0] != '\0' ? r->err : "(empty)\n");
    assert_int_equal(held, 0);
    return st.matches;
}

/* run_through_a_restart, then: the exit status, stdout or stderr holding has, and how
 * many times the request went to a server. */
static void expect_restart(const char *const *args, const char *hold, int status,
                           const char *out_has, const char *err_has, long long sent)
{
    cr_run r;
    long long n = run_through_a_restart(args, hold, &r);
    cr_expect_status(&r, status);
    if (out_has != NULL)
        cr_expect_contains("stdout", r.out, out_has);
    if (err_has != NULL)
        cr_expect_contains("stderr", r.err, err_has);
    cr_run_free(&r);
    assert_int_equal(n, sent);
}

static void test_tools_list_is_sent_again_to_the_restarted_server(void **state)
{
    (void)state;
    const char *args[] = {url, "tools", "list", NULL};
    expect_restart(args, "\"method\":\"tools/list\"", 0, "long_running", "sent once more", 2);
}

static void test_idempotent_call_is_sent_again_to_the_restarted_server(void **state)
{
    (void)state;
    const char *args[] = {url, "tools", "call", "add", "a=2", "b=3", NULL};
    expect_restart(args, "\"name\":\"add\"", 0, "5", "sent once more", 2);
}

static void test_other_call_is_not_sent_again_and_says_why(void **state)
{
    (void)state;
    const char *args[] = {url, "tools", "call", "echo", "text=once", NULL};
    expect_restart(args, "\"name\":\"echo\"", 3, NULL, "not safe to repeat", 1);
}

static void test_other_call_of_2025_is_not_sent_again(void **state)
{
    (void)state;
    const char *args[] = {"--protocol", "2025-11-25", url,         "tools",
                          "call",       "echo",       "text=once", NULL};
    expect_restart(args, "\"name\":\"echo\"", 3, NULL, "the connection closed before any answer",
                   1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        T(test_tools_list_is_sent_again_to_the_restarted_server),
        T(test_idempotent_call_is_sent_again_to_the_restarted_server),
        T(test_other_call_is_not_sent_again_and_says_why),
        T(test_other_call_of_2025_is_not_sent_again),
    };
    return cmocka_run_group_tests_name("mcp_cli_restart", tests, NULL, NULL);
}
