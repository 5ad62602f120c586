/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything --http stops by draining: SIGTERM lets the call in flight
 * finish and deliver its result, then the process exits 0 within the drain
 * deadline; a second SIGTERM stops at once. GET /healthz answers 200 while it
 * serves and 503 to a request that arrives while it drains.
 */
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

#include "http_client.h"

#define WAIT_MS 10000

static void start(hc_server *s, const char *drain_ms)
{
    const char *const flags[] = {"--drain-ms", drain_ms, NULL};
    assert_int_equal(hc_server_start(s, flags, WAIT_MS), 0);
}

/* Starts a tools/call on its own connection and reads the response head. */
static void call_tool(hc_conn *c, hc_response *r, int port, const char *sid, const char *tool,
                      const char *args)
{
    char *body = hc_tools_call_body(5, tool, args);
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", sid);
    assert_int_equal(hc_connect(c, port, WAIT_MS), 0);
    assert_int_equal(hc_send_request(c, port, "POST", "/mcp", hdrs, body, WAIT_MS), 0);
    free(body);
    assert_int_equal(hc_read_head(c, r, WAIT_MS), 0);
    assert_int_equal(r->status, 200);
}

static void call_slow_echo(hc_conn *c, hc_response *r, int port, const char *sid, int delay_ms)
{
    char args[96];
    snprintf(args, sizeof(args), "{\"text\":\"drained\",\"delay_ms\":%d}", delay_ms);
    call_tool(c, r, port, sid, "slow_echo", args);
}

static void test_sigterm_lets_the_call_in_flight_finish_then_exits_0(void **state)
{
    (void)state;
    hc_server s;
    start(&s, "8000");
    char sid[33];
    assert_int_equal(hc_mcp_initialize(s.port, sid, WAIT_MS), 0);
    hc_conn c = {.fd = -1};
    hc_response r = {0};
    call_slow_echo(&c, &r, s.port, sid, 700);
    long long t0 = hc_now_ms();
    int status;
    /* SIGTERM, then the wait for the exit, within the drain deadline. */
    assert_int_equal(hc_server_stop(&s, 8000, &status), 0);
    long long took = hc_now_ms() - t0;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The result reached the client before the exit, and the stream ended cleanly. */
    json_t *msg = hc_sse_next_json(&c, WAIT_MS, NULL);
    assert_non_null(msg);
    json_t *text = json_object_get(
        json_array_get(json_object_get(json_object_get(msg, "result"), "content"), 0), "text");
    assert_string_equal(json_string_value(text), "drained");
    json_decref(msg);
    hc_sse_event ev;
    assert_int_equal(hc_sse_next_event(&c, &ev, WAIT_MS), 0);
    char *err = hc_server_stderr(&s);
    assert_non_null(strstr(err, "draining"));
    print_message("exited %lld ms after SIGTERM (the call needed 700 ms)\n", took);
    free(err);
    hc_response_free(&r);
    hc_close(&c);
    hc_server_free(&s);
}

static void test_second_sigterm_stops_at_once(void **state)
{
    (void)state;
    hc_server s;
    start(&s, "60000");
    char sid[33];
    assert_int_equal(hc_mcp_initialize(s.port, sid, WAIT_MS), 0);
    hc_conn c = {.fd = -1};
    hc_response r = {0};
    call_slow_echo(&c, &r, s.port, sid, 50000);
    kill(s.pid, SIGTERM);
    assert_int_equal(hc_server_wait_stderr(&s, "draining", WAIT_MS), 0);
    long long t0 = hc_now_ms();
    int status;
    /* The second SIGTERM: not the 50 s of the call, nor the minute of the drain. */
    assert_int_equal(hc_server_stop(&s, 5000, &status), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    print_message("exited %lld ms after the second SIGTERM\n", hc_now_ms() - t0);
    /* The call never got a result. */
    json_t *msg;
    while ((msg = hc_sse_next_json(&c, WAIT_MS, NULL)) != NULL) {
        assert_null(json_object_get(msg, "result"));
        json_decref(msg);
    }
    hc_response_free(&r);
    hc_close(&c);
    hc_server_free(&s);
}

static void test_healthz_answers_200_then_503_while_draining(void **state)
{
    (void)state;
    hc_server s;
    start(&s, "8000");
    hc_response r = {0};
    assert_int_equal(hc_request(s.port, "GET", "/healthz", NULL, NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    hc_response_free(&r);
    assert_int_equal(hc_request(s.port, "POST", "/healthz", NULL, "", &r, WAIT_MS), 0);
    assert_int_equal(r.status, 405);
    hc_response_free(&r);

    /* A call holds the drain open; a request whose headers were under way when
     * SIGTERM came is answered, with 503. */
    char sid[33];
    assert_int_equal(hc_mcp_initialize(s.port, sid, WAIT_MS), 0);
    hc_conn c = {.fd = -1};
    hc_response cr = {0};
    call_slow_echo(&c, &cr, s.port, sid, 1500);
    hc_conn h = {.fd = -1};
    assert_int_equal(hc_connect(&h, s.port, WAIT_MS), 0);
    const char *part1 = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    assert_int_equal(hc_send(&h, part1, strlen(part1), WAIT_MS), 0);
    kill(s.pid, SIGTERM);
    assert_int_equal(hc_server_wait_stderr(&s, "draining", WAIT_MS), 0);
    assert_int_equal(hc_send(&h, "\r\n", 2, WAIT_MS), 0);
    assert_int_equal(hc_read_response(&h, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "draining\n");
    assert_non_null(hc_header_get(&r, "connection"));
    hc_response_free(&r);
    hc_close(&h);
    json_t *msg = hc_sse_next_json(&c, WAIT_MS, NULL);
    assert_non_null(json_object_get(msg, "result"));
    json_decref(msg);
    hc_response_free(&cr);
    hc_close(&c);
    /* The drain ends by itself: exit 0, with no second signal. */
    int status;
    assert_int_equal(hc_server_wait(&s, WAIT_MS, &status), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    hc_server_free(&s);
}

/* A call waiting for the client's answer (elicitation) when SIGTERM comes gets it:
 * the answer is POSTed on a new connection during the drain, and the result comes
 * on the call's stream; then exit 0. */
static void test_drain_takes_the_answer_a_call_waits_for(void **state)
{
    (void)state;
    hc_server s;
    start(&s, "8000");
    char sid[33];
    assert_int_equal(hc_mcp_initialize(s.port, sid, WAIT_MS), 0);
    hc_conn c = {.fd = -1};
    hc_response r = {0};
    call_tool(&c, &r, s.port, sid, "test_elicitation", "{\"message\":\"name?\"}");
    json_t *ask = hc_sse_next_json(&c, WAIT_MS, NULL);
    assert_non_null(ask);
    assert_string_equal(json_string_value(json_object_get(ask, "method")), "elicitation/create");
    kill(s.pid, SIGTERM);
    assert_int_equal(hc_server_wait_stderr(&s, "draining", WAIT_MS), 0);
    /* New work is refused... */
    hc_response x = {0};
    char *init = hc_initialize_body(NULL);
    assert_int_equal(hc_mcp_post(s.port, NULL, NULL, init, &x, WAIT_MS), 0);
    free(init);
    assert_int_equal(x.status, 503);
    hc_response_free(&x);
    /* ...but the answer the call waits for is taken. */
    json_t *answer = json_pack("{s:s, s:O, s:{s:s, s:{s:s}}}", "jsonrpc", "2.0", "id",
                               json_object_get(ask, "id"), "result", "action", "accept", "content",
                               "name", "drain");
    char *text = json_dumps(answer, JSON_COMPACT);
    assert_int_equal(hc_mcp_post(s.port, sid, NULL, text, &x, WAIT_MS), 0);
    assert_int_equal(x.status, 202);
    hc_response_free(&x);
    free(text);
    json_decref(answer);
    json_decref(ask);
    json_t *msg = hc_sse_next_json(&c, WAIT_MS, NULL);
    assert_non_null(json_object_get(msg, "result"));
    json_decref(msg);
    hc_close(&c);
    int status;
    assert_int_equal(hc_server_wait(&s, 8000, &status), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    hc_response_free(&r);
    hc_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigterm_lets_the_call_in_flight_finish_then_exits_0),
        cmocka_unit_test(test_second_sigterm_stops_at_once),
        cmocka_unit_test(test_healthz_answers_200_then_503_while_draining),
        cmocka_unit_test(test_drain_takes_the_answer_a_call_waits_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
