/* SPDX-License-Identifier: MIT */
/*
 * Our HTTP client (mcp_client_connect_http) against our server,
 * `mcp-everything --http` on a free 127.0.0.1 port, over real sockets:
 *
 * - SEP-1699 polling: a tool closes its stream twice mid-call; the client
 *   resumes each time after the server's retry (measured: the gap between the
 *   last notification before a close and the first after it), and gets every
 *   notification and the result exactly once; the application scheduler is told
 *   the server's retry;
 * - tools/list and tools/call, JSON responses, a server without a standalone
 *   stream (405), the HTTP+SSE transport (asked for, and found by the
 *   fallback), sampling and elicitation answered by the client's handlers;
 * - a server restarted on the same port forgets the session: the next request
 *   meets 404, the client starts a new session and sends it again (or, with
 *   no_session_renewal, fails it with MCP_EHTTP).
 *
 * Every wait has a deadline.
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

#include "client_watch.h"
#include "http_expect.h"

#define CONNECT_MS 10000
#define CALL_MS 10000
/* The retry a tool asks for when it closes its stream, and how far from it the
 * client's reconnection may come (the reconnection's own round trip included). */
#define RETRY_MS 200
/* Generous: only never before the retry is exact (a busy machine runs timers late). */
#define RETRY_SLACK_MS 1000

typedef struct fixture {
    hc_server srv;
    int srv_live; /* srv is started and not yet freed */
    cw_watch w;
    mcp_client *c;
    char url[96];
} fixture;

/* Starts the server; the fixture is the test's state, so teardown() cleans up
 * after a failed test too. */
static fixture *start(void **state, const char *const flags[], const char *path)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *state = f;
    cw_init(&f->w);
    if (hc_server_start(&f->srv, flags, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    f->srv_live = 1;
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d%s", f->srv.port, path);
    return f;
}

static void connect_ok(fixture *f, const mcp_http_client_opts *opts)
{
    int rc = cw_connect(&f->w, f->url, opts, CONNECT_MS, &f->c);
    if (rc != MCP_OK)
        fail_msg("connect to %s: %s", f->url, mcp_strerror(rc));
}

/* The client closes (DELETE), then the server must stop cleanly. */
static int teardown(void **state)
{
    fixture *f = *state;
    if (f == NULL)
        return 0;
    mcp_client_free(f->c);
    int rc = f->srv_live ? hc_server_stop_check(&f->srv, HX_STOP_MS) : 0;
    cw_free(&f->w);
    free(f);
    *state = NULL;
    return rc;
}

/* Calls tool with args (stolen) and returns the result (new reference), failing otherwise. */
static json_t *call(fixture *f, const char *tool, json_t *args)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    mcp_call_opts o = {.timeout_ms = CALL_MS};
    int rc = mcp_client_call_tool(f->c, tool, args, &o, &result, &err);
    if (rc != MCP_OK)
        fail_msg("tools/call %s: %s (%d %s)", tool, mcp_strerror(rc), err.code, err.message);
    mcp_rpc_error_clear(&err);
    return result;
}

/* Calls tool with args (stolen) and asserts its result's text. */
static void expect_text(fixture *f, const char *tool, json_t *args, const char *text)
{
    json_t *result = call(f, tool, args);
    assert_string_equal(cw_text(result), text);
    json_decref(result);
}

static void expect_echo(fixture *f, const char *text)
{
    expect_text(f, "echo", json_pack("{s:s}", "text", text), text);
}

/* poll_notify's arguments: count notifications at once, the stream closed after close_after. */
static json_t *poll_args(int count, int close_after)
{
    return json_pack("{s:i, s:i, s:i}", "count", count, "delay_ms", 0, "close_after", close_after);
}

/* ---- SEP-1699 polling ---- */

/* poll_notify: 10 notifications 100 ms apart, the stream closed after the 3rd and the 7th. */
static json_t *polling_args(void)
{
    return json_pack("{s:i, s:i, s:i, s:[i], s:i}", "count", 10, "delay_ms", 100, "close_after", 3,
                     "close_at", 7, "retry_ms", RETRY_MS);
}

/* The gap between notification `before` (the last one before a close) and the next. */
static long long resume_gap(fixture *f, long long before)
{
    long i = cw_find_numbered(&f->w, before);
    long j = cw_find_numbered(&f->w, before + 1);
    if (i < 0 || j < 0)
        fail_msg("notifications %lld and %lld not both seen", before, before + 1);
    return cw_note_at(&f->w, (size_t)j) - cw_note_at(&f->w, (size_t)i);
}

static void check_polled_call(fixture *f, json_t *result)
{
    assert_string_equal(cw_text(result), "sent 10, closed the stream twice");
    char *problem = cw_check_numbered(&f->w, 0, 10);
    if (problem != NULL)
        fail_msg("the notifications of the polled call: %s", problem);
}

static void test_tool_closing_its_stream_twice_is_resumed_after_the_retry(void **state)
{
    fixture *f = start(state, NULL, "/mcp");
    connect_ok(f, NULL);
    json_t *result = call(f, "poll_notify", polling_args());
    check_polled_call(f, result);
    json_decref(result);
    long long gap1 = resume_gap(f, 3), gap2 = resume_gap(f, 7);
    printf("polling: the client came back %lld ms and %lld ms after the closes (retry %d ms)\n",
           gap1, gap2, RETRY_MS);
    long long gaps[2] = {gap1, gap2};
    for (int k = 0; k < 2; k++)
        if (gaps[k] < RETRY_MS - 5 || gaps[k] > RETRY_MS + RETRY_SLACK_MS)
            fail_msg("resumption %d came %lld ms after the close; the retry is %d ms", k + 1,
                     gaps[k], RETRY_MS);
}

static void test_application_scheduler_is_told_the_servers_retry(void **state)
{
    fixture *f = start(state, NULL, "/mcp");
    f->w.reconnect_at_once = 1;
    mcp_http_client_opts o = {.schedule_reconnect = cw_schedule, .schedule_user = &f->w};
    connect_ok(f, &o);
    json_t *result = call(f, "poll_notify", polling_args());
    check_polled_call(f, result);
    json_decref(result);
    pthread_mutex_lock(&f->w.mu);
    int n = f->w.n_sched;
    cw_sched s0 = f->w.sched[0], s1 = f->w.sched[1];
    pthread_mutex_unlock(&f->w.mu);
    printf("scheduler: %d reconnections, delay_ms %d and %d, attempt %d and %d\n", n, s0.delay_ms,
           s1.delay_ms, s0.attempt, s1.attempt);
    assert_int_equal(n, 2);
    assert_int_equal(s0.delay_ms, RETRY_MS);
    assert_int_equal(s1.delay_ms, RETRY_MS);
    assert_true(s0.id != s1.id);
    /* Each is the first reconnection after a stream that brought events. */
    assert_int_equal(s0.attempt, 1);
    assert_int_equal(s1.attempt, 1);
}

/* ---- The basics ---- */

static void test_list_tools_and_call_echo(void **state)
{
    fixture *f = start(state, NULL, "/mcp");
    connect_ok(f, NULL);
    assert_string_equal(mcp_client_protocol_version(f->c), "2025-11-25");
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_list_tools(f->c, NULL, &result, &err), MCP_OK);
    int seen = 0;
    size_t i;
    json_t *tool;
    json_array_foreach(json_object_get(result, "tools"), i, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        seen += strcmp(name, "echo") == 0 || strcmp(name, "poll_notify") == 0;
    }
    json_decref(result);
    assert_int_equal(seen, 2);
    expect_echo(f, "hello over Streamable HTTP");
}

static void test_json_responses(void **state)
{
    static const char *const flags[] = {"--json-response", NULL};
    fixture *f = start(state, flags, "/mcp");
    connect_ok(f, NULL);
    expect_echo(f, "hello in one JSON body");
    /* A tool that logs first gets an SSE stream even so. */
    expect_text(f, "poll_notify", poll_args(3, 0), "sent 3");
    char *problem = cw_check_numbered(&f->w, 0, 3);
    if (problem != NULL)
        fail_msg("%s", problem);
}

static void test_server_without_standalone_stream(void **state)
{
    static const char *const flags[] = {"--no-get", NULL};
    fixture *f = start(state, flags, "/mcp");
    long long t0 = hc_now_ms();
    connect_ok(f, NULL);
    long long took = hc_now_ms() - t0;
    /* The 405 ends the connect's wait for the stream at once, not its timeout. */
    if (took > 2000)
        fail_msg("the connect took %lld ms against a server that answers GET with 405", took);
    expect_echo(f, "no GET here");
}

static void test_http_sse_transport(void **state)
{
    fixture *f = start(state, NULL, "/sse");
    mcp_http_client_opts o = {.http_sse = 1};
    connect_ok(f, &o);
    expect_echo(f, "hello over HTTP+SSE");
}

static void test_fallback_to_http_sse(void **state)
{
    fixture *f = start(state, NULL, "/sse");
    /* Streamable HTTP first: the POST of initialize to /sse is refused, then the
     * client opens the SSE stream there. */
    connect_ok(f, NULL);
    expect_echo(f, "found by the fallback");
}

static void test_sampling_and_elicitation_are_answered(void **state)
{
    fixture *f = start(state, NULL, "/mcp");
    f->c = mcp_client_new("http-client-test", "1.0");
    assert_non_null(f->c);
    mcp_client_set_protocol(f->c, "legacy");
    f->w.c = f->c;
    assert_int_equal(mcp_client_on_sampling(f->c, cw_on_sampling, &f->w), MCP_OK);
    assert_int_equal(mcp_client_on_elicitation(f->c, cw_on_elicitation, &f->w), MCP_OK);
    assert_int_equal(mcp_client_connect_http(f->c, f->url, NULL, CONNECT_MS), MCP_OK);
    json_t *result = call(f, "test_sampling", json_pack("{s:s}", "prompt", "2+2?"));
    if (strstr(cw_text(result), "sampled") == NULL)
        fail_msg("test_sampling: %s", cw_text(result));
    json_decref(result);
    result = call(f, "test_elicitation", json_pack("{s:s}", "message", "Who are you?"));
    if (strstr(cw_text(result), "accept") == NULL ||
        strstr(cw_text(result), "c@example.com") == NULL)
        fail_msg("test_elicitation: %s", cw_text(result));
    json_decref(result);
    assert_int_equal(f->w.sampling_calls, 1);
    assert_int_equal(f->w.elicitation_calls, 1);
}

static void test_no_fallback_without_httpsse_endpoints(void **state)
{
    /* The same URL on a server that does not serve /sse: what worked above was the
     * HTTP+SSE transport. */
    static const char *const flags[] = {"--no-http-sse", NULL};
    fixture *f = start(state, flags, "/sse");
    int rc = cw_connect(&f->w, f->url, NULL, CONNECT_MS, &f->c);
    if (rc != MCP_EHTTP)
        fail_msg("expected MCP_EHTTP, got %s", mcp_strerror(rc));
}

/* ---- A server that restarts ---- */

/* Kills the server and starts it again on the same port: it forgets every session. */
static void restart(fixture *f, const char *const flags[])
{
    int port = f->srv.port;
    f->srv_live = 0;
    hc_server_free(&f->srv); /* SIGKILL: a crash, not a drain */
    if (hc_server_start_on(&f->srv, port, flags, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start again on port %d", port);
    f->srv_live = 1;
}

static void test_restarted_server_gets_a_new_session(void **state)
{
    /* No standalone stream: the request is the first to meet the 404. */
    static const char *const flags[] = {"--no-get", NULL};
    fixture *f = start(state, flags, "/mcp");
    connect_ok(f, NULL);
    expect_echo(f, "before the restart");
    restart(f, flags);
    expect_echo(f, "after the restart");
    expect_echo(f, "and on the new session");
}

static void test_restarted_server_gets_a_new_session_for_both_streams(void **state)
{
    /* With the standalone stream: it breaks with the crash, and whichever of its
     * reconnection and the request meets the 404 first starts the new session. */
    fixture *f = start(state, NULL, "/mcp");
    connect_ok(f, NULL);
    expect_echo(f, "before the restart");
    restart(f, NULL);
    expect_echo(f, "after the restart");
    expect_text(f, "poll_notify", poll_args(2, 1), "sent 2, closed the stream once");
}

static void test_restarted_server_without_session_renewal(void **state)
{
    static const char *const flags[] = {"--no-get", NULL};
    fixture *f = start(state, flags, "/mcp");
    mcp_http_client_opts o = {.no_session_renewal = 1};
    connect_ok(f, &o);
    expect_echo(f, "before the restart");
    restart(f, flags);
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc =
        mcp_client_call_tool(f->c, "echo", json_pack("{s:s}", "text", "lost"), NULL, &result, &err);
    if (rc != MCP_EHTTP || err.code != 404)
        fail_msg("expected MCP_EHTTP with code 404, got %s (%d %s)", mcp_strerror(rc), err.code,
                 err.message);
    mcp_rpc_error_clear(&err);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        T(test_tool_closing_its_stream_twice_is_resumed_after_the_retry),
        T(test_application_scheduler_is_told_the_servers_retry),
        T(test_list_tools_and_call_echo),
        T(test_json_responses),
        T(test_server_without_standalone_stream),
        T(test_http_sse_transport),
        T(test_fallback_to_http_sse),
        T(test_no_fallback_without_httpsse_endpoints),
        T(test_sampling_and_elicitation_are_answered),
        T(test_restarted_server_gets_a_new_session),
        T(test_restarted_server_gets_a_new_session_for_both_streams),
        T(test_restarted_server_without_session_renewal),
    };
    return cmocka_run_group_tests_name("http_client", tests, NULL, NULL);
}
