/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway in front of stdio servers, over real loopback sockets:
 *   - with --shared-child, 16 sessions send requests at the same moment with the same
 *     JSON-RPC ids and the same progress tokens: each gets its own answer and its own
 *     progress, on its own stream (the gateway's ids keep them apart in the child);
 *   - a child that exits ends its session: the call in flight gets an error that
 *     says so, then the session is gone (404);
 *   - a child that answers ids it was never sent changes nothing; one that never
 *     answers initialize is given up after --init-timeout-ms; one that stops reading
 *     (the next write fails at once) ends its session with an error, never a crash;
 *   - --poll-ms never closes the stream of an initialize, however slow the server is
 *     to start;
 *   - a cancelled request ends its stream and leaves its session idle (it expires);
 *   - 1,000 sessions (250 in the sanitizer build) created and deleted leave no child
 *     behind, nor do those open
 *     when SIGTERM drains the gateway, nor sessions that expire.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "gateway_host.h"
#include "harness.h"
#include "http_expect.h"

#define NSESS 16

static char everything[4096], peer[4096];

/* The processes whose parent is pid, from /proc. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < max) {
        char path[300], buf[512];
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')');
        char state;
        int ppid;
        if (rp != NULL && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == pid)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* ---- Shared child: the same ids from 16 sessions at once ---- */

static void test_shared_child_same_ids_from_16_sessions(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--shared-child", NULL};
    const char *cmd[] = {everything, "--stdio", NULL};
    gw_start(&s, flags, cmd);
    char sess[NSESS][33];
    for (int i = 0; i < NSESS; i++)
        if (hc_mcp_initialize(s.port, sess[i], HX_REQ_MS) != 0)
            fail_msg("session %d could not initialize", i);
    for (int round = 0; round < 4; round++) {
        hc_conn c[NSESS];
        /* Every request is on the wire before any answer is read. */
        for (int i = 0; i < NSESS; i++) {
            char hdrs[1024], body[512];
            snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", sess[i]);
            if (round % 2 == 0)
                snprintf(body, sizeof(body),
                         "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                         "{\"name\":\"slow_echo\",\"arguments\":{\"text\":\"s%d-r%d\","
                         "\"delay_ms\":20}}}",
                         i, round);
            else
                snprintf(body, sizeof(body),
                         "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":"
                         "{\"name\":\"long_running\",\"arguments\":{\"steps\":3,\"delay_ms\":"
                         "%d},\"_meta\":{\"progressToken\":\"tok\"}}}",
                         5 + i % 3);
            assert_int_equal(hc_connect(&c[i], s.port, HX_REQ_MS), 0);
            assert_int_equal(hc_send_request(&c[i], s.port, "POST", "/mcp", hdrs, body, HX_REQ_MS),
                             0);
        }
        for (int i = 0; i < NSESS; i++) {
            hc_response r;
            if (hc_read_response(&c[i], &r, HX_REQ_MS) != 0 || r.status != 200)
                fail_msg("round %d, session %d: no whole answer (status %d)", round, i, r.status);
            json_t *msgs = hc_messages(&r);
            assert_non_null(msgs);
            size_t k, results = 0, progress = 0;
            json_t *m;
            json_array_foreach(msgs, k, m)
            {
                json_t *id = json_object_get(m, "id");
                if (json_object_get(m, "result") != NULL) {
                    results++;
                    if (round % 2 == 0) {
                        char want[32];
                        snprintf(want, sizeof(want), "s%d-r%d", i, round);
                        assert_true(json_is_integer(id) && json_integer_value(id) == 7);
                        assert_string_equal(hx_result_text(m, "slow_echo"), want);
                    } else {
                        assert_true(json_is_string(id) && strcmp(json_string_value(id), "x") == 0);
                    }
                } else if (json_object_get(m, "error") != NULL) {
                    fail_msg("round %d, session %d: an error: %s", round, i, hx_dump(m));
                } else {
                    const char *method = json_string_value(json_object_get(m, "method"));
                    json_t *params = json_object_get(m, "params");
                    if (method != NULL && strcmp(method, "notifications/progress") == 0) {
                        assert_string_equal(
                            json_string_value(json_object_get(params, "progressToken")), "tok");
                        progress++;
                        assert_int_equal(json_integer_value(json_object_get(params, "progress")),
                                         (json_int_t)progress);
                    }
                }
            }
            assert_int_equal(results, 1);
            assert_int_equal(progress, round % 2 == 0 ? 0 : 3);
            json_decref(msgs);
            hc_response_free(&r);
            hc_close(&c[i]);
        }
    }
    /* One child served them all. */
    assert_int_equal(gw_metric(s.port, "mcp_gateway_children_started_total"), 1);
    gw_stop(&s);
}

/* ---- A child that exits, lies or stalls ---- */

static void test_child_exit_ends_session_with_error(void **state)
{
    (void)state;
    hc_server s;
    const char *cmd[] = {peer, NULL};
    gw_start(&s, NULL, cmd);
    char sess[33];
    assert_int_equal(hc_mcp_initialize(s.port, sess, HX_REQ_MS), 0);
    hc_response r;
    char *body = hc_tools_call_body(5, "bad_ids", NULL);
    hx_post(s.port, sess, NULL, body, &r, "tools/call bad_ids");
    free(body);
    json_t *msgs = hx_messages(&r, "tools/call bad_ids");
    assert_int_equal(json_array_size(msgs), 1);
    assert_string_equal(hx_result_text(hx_find_response(msgs, 5, "bad_ids"), "bad_ids"), "ok");
    json_decref(msgs);
    hc_response_free(&r);

    body = hc_tools_call_body(6, "exit", NULL);
    hx_post(s.port, sess, NULL, body, &r, "tools/call exit");
    free(body);
    msgs = hx_messages(&r, "tools/call exit");
    json_t *err = json_object_get(hx_find_response(msgs, 6, "exit"), "error");
    assert_non_null(err);
    assert_int_equal(json_integer_value(json_object_get(err, "code")), -32603);
    hx_expect_message_has(hx_find_response(msgs, 6, "exit"), "server process is gone",
                          "tools/call exit");
    json_decref(msgs);
    hc_response_free(&r);
    /* The session ended with its server. */
    hx_post(s.port, sess, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &r, "ping");
    hx_expect_status(&r, 404, "ping after the server exited");
    hc_response_free(&r);
    gw_await_metric(s.port, "mcp_gateway_children", 0, HX_REQ_MS);
    gw_stop(&s);
}

static void test_child_that_never_initializes_is_given_up(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--init-timeout-ms", "300", "--kill-grace-ms", "100", NULL};
    const char *cmd[] = {peer, "--no-init", NULL};
    gw_start(&s, flags, cmd);
    char *body = hc_initialize_body(NULL);
    hc_response r;
    long long t0 = harness_now_ms();
    hx_post(s.port, NULL, NULL, body, &r, "initialize");
    free(body);
    json_t *msgs = hx_messages(&r, "initialize");
    hx_expect_message_has(hx_find_response(msgs, 1, "initialize"), "did not answer initialize",
                          "initialize");
    print_message("initialize given up after %lld ms\n", harness_now_ms() - t0);
    json_decref(msgs);
    hc_response_free(&r);
    gw_await_metric(s.port, "mcp_gateway_children", 0, HX_REQ_MS);
    assert_int_equal(gw_metric(s.port, "mcp_gateway_sessions"), 0);
    gw_stop(&s);
}

/* --poll-ms closes the SSE stream of a long call, never that of initialize: the client
 * has no session to come back to yet, and a server slow to start would leave it
 * waiting for good. */
static void test_slow_initialize_is_not_polled(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--poll-ms", "20", NULL};
    const char *cmd[] = {peer, "--init-delay-ms", "300", NULL};
    gw_start(&s, flags, cmd);
    char sess[33];
    assert_int_equal(hc_mcp_initialize(s.port, sess, HX_REQ_MS), 0);
    hc_response r;
    char *body = hc_tools_call_body(2, "hello", NULL);
    hx_post(s.port, sess, NULL, body, &r, "tools/call hello");
    free(body);
    json_t *msgs = hx_messages(&r, "tools/call hello");
    assert_string_equal(hx_result_text(hx_find_response(msgs, 2, "hello"), "hello"), "hello");
    json_decref(msgs);
    hc_response_free(&r);
    gw_stop(&s);
}

static void test_child_that_stops_reading_ends_its_session(void **state)
{
    (void)state;
    hc_server s;
    const char *cmd[] = {peer, NULL};
    gw_start(&s, NULL, cmd);
    char sess[33];
    assert_int_equal(hc_mcp_initialize(s.port, sess, HX_REQ_MS), 0);
    hc_response r;
    char *body = hc_tools_call_body(2, "close_stdin", NULL);
    hx_post(s.port, sess, NULL, body, &r, "tools/call close_stdin");
    free(body);
    hc_response_free(&r);
    /* The next write to the child fails at once (EPIPE): an error, never a crash. */
    body = hc_tools_call_body(3, "echo", NULL);
    hx_post(s.port, sess, NULL, body, &r, "tools/call after close_stdin");
    free(body);
    json_t *msgs = hx_messages(&r, "tools/call after close_stdin");
    json_t *err = json_object_get(hx_find_response(msgs, 3, "echo"), "error");
    assert_non_null(err);
    assert_int_equal(json_integer_value(json_object_get(err, "code")), -32603);
    json_decref(msgs);
    hc_response_free(&r);
    hx_post(s.port, sess, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &r, "ping");
    hx_expect_status(&r, 404, "ping after the server stopped reading");
    hc_response_free(&r);
    assert_true(hc_server_alive(&s));
    gw_stop(&s);
}

static void test_cancelled_request_frees_its_session(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--session-idle-ms", "600", NULL};
    const char *cmd[] = {peer, NULL};
    gw_start(&s, flags, cmd);
    char sess[33];
    assert_int_equal(hc_mcp_initialize(s.port, sess, HX_REQ_MS), 0);
    /* A call the server never answers, then its cancellation: the call's stream ends
     * without an answer, and the session is idle again, so it expires. */
    char hdrs[1024];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", sess);
    char *body = hc_tools_call_body(9, "hang", NULL);
    hc_conn c;
    assert_int_equal(hc_connect(&c, s.port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&c, s.port, "POST", "/mcp", hdrs, body, HX_REQ_MS), 0);
    free(body);
    hc_response head, r;
    assert_int_equal(hc_read_head(&c, &head, HX_REQ_MS), 0);
    hx_post(s.port, sess, NULL,
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
            "{\"requestId\":9,\"reason\":\"test\"}}",
            &r, "notifications/cancelled");
    hx_expect_status(&r, 202, "notifications/cancelled");
    hc_response_free(&r);
    int rc = hc_read_body(&c, &head, HX_REQ_MS);
    hc_close(&c);
    if (rc != 0)
        fail_msg("the cancelled call's stream did not end");
    json_t *msgs = hc_messages(&head);
    for (size_t i = 0; i < json_array_size(msgs); i++)
        if (json_object_get(json_array_get(msgs, i), "id") != NULL)
            fail_msg("the cancelled call was answered: %s", hx_dump(json_array_get(msgs, i)));
    json_decref(msgs);
    hc_response_free(&head);
    gw_await_metric(s.port, "mcp_gateway_sessions", 0, 10000);
    gw_await_metric(s.port, "mcp_gateway_children", 0, 10000);
    gw_stop(&s);
}

/* ---- No child left behind ---- */

static void test_thousand_sessions_leave_no_child(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--max-children", "64", NULL};
    const char *cmd[] = {everything, "--stdio", "--workers", "1", NULL};
    gw_start(&s, flags, cmd);
    /* Deleted: 1,000 sessions, 50 at a time (250 in the sanitizer build, where each child
     * costs about 300 ms of a busy machine: 1,000 took 302 s of the test's 360). */
    char ids[50][33];
    const int waves = UNDER_ASAN ? 5 : 20;
    long long t0 = harness_now_ms();
    for (int wave = 0; wave < waves; wave++) {
        for (int i = 0; i < 50; i++)
            if (hc_mcp_initialize(s.port, ids[i], HX_REQ_MS) != 0)
                fail_msg("wave %d: session %d could not initialize", wave, i);
        for (int i = 0; i < 50; i++)
            assert_int_equal(hc_mcp_delete(s.port, ids[i], HX_REQ_MS), 200);
    }
    gw_await_metric(s.port, "mcp_gateway_children", 0, 20000);
    assert_int_equal(gw_metric(s.port, "mcp_gateway_children_exited_total"), waves * 50);
    pid_t kids[256];
    assert_int_equal(children_of(s.pid, kids, 256), 0);
    print_message("%d sessions created and deleted in %lld ms; no child left\n", waves * 50,
                  harness_now_ms() - t0);

    /* Drained: SIGTERM with 20 sessions open. */
    for (int i = 0; i < 20; i++)
        assert_int_equal(hc_mcp_initialize(s.port, ids[i], HX_REQ_MS), 0);
    size_t n = children_of(s.pid, kids, 256);
    assert_int_equal(n, 20);
    gw_stop(&s);
    for (size_t i = 0; i < n; i++)
        if (kill(kids[i], 0) == 0 || errno != ESRCH)
            fail_msg("child %d outlived the gateway", (int)kids[i]);
}

static void test_expired_sessions_leave_no_child(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--session-idle-ms", "400", NULL};
    const char *cmd[] = {everything, "--stdio", "--workers", "1", NULL};
    gw_start(&s, flags, cmd);
    /* Idle for 400 ms, swept within a second or so. */
    char id[33];
    for (int i = 0; i < 20; i++)
        assert_int_equal(hc_mcp_initialize(s.port, id, HX_REQ_MS), 0);
    gw_await_metric(s.port, "mcp_gateway_sessions", 0, 10000);
    gw_await_metric(s.port, "mcp_gateway_children", 0, 10000);
    assert_int_equal(gw_metric(s.port, "mcp_gateway_children_exited_total"), 20);
    pid_t kids[64];
    assert_int_equal(children_of(s.pid, kids, 64), 0);
    gw_stop(&s);
}

/* ---- Signals ---- */

/* A SIGTERM sent the moment the gateway says it listens (what a supervisor or a test
 * harness does) finds its handlers: it drains and exits 0, never killed by the default
 * action. 20 rounds: the window was the rest of the endpoint's start. */
static void test_sigterm_as_it_says_it_listens_drains(void **state)
{
    (void)state;
    const char *cmd[] = {everything, "--stdio", NULL};
    for (int i = 0; i < 20; i++) {
        hc_server s;
        gw_start(&s, NULL, cmd);
        gw_stop(&s);
    }
}

int main(void)
{
    if (harness_bin_path("mcp-everything", everything, sizeof(everything)) != 0 ||
        harness_bin_path("server_gateway_peer", peer, sizeof(peer)) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_child_same_ids_from_16_sessions),
        cmocka_unit_test(test_child_exit_ends_session_with_error),
        cmocka_unit_test(test_child_that_never_initializes_is_given_up),
        cmocka_unit_test(test_child_that_stops_reading_ends_its_session),
        cmocka_unit_test(test_slow_initialize_is_not_polled),
        cmocka_unit_test(test_cancelled_request_frees_its_session),
        cmocka_unit_test(test_thousand_sessions_leave_no_child),
        cmocka_unit_test(test_expired_sessions_leave_no_child),
        cmocka_unit_test(test_sigterm_as_it_says_it_listens_drains),
    };
    return cmocka_run_group_tests_name("gateway", tests, NULL, NULL);
}
