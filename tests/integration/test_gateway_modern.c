/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway serving revision 2026-07-28 in front of a stdio server that speaks only
 * the older revisions (server_gateway_peer), over real loopback sockets. The gateway
 * translates:
 *   - server/discover is answered from the child's initialize result, with the
 *     server's identity; a method the revision removed is 404;
 *   - a question of the child to its client (elicitation, sampling, roots) becomes an
 *     InputRequiredResult; the retry with the answers and the sealed requestState
 *     completes the call in the child, over as many rounds as it asks; a changed
 *     requestState, or a retry under the same id, is refused; a question the client's
 *     capabilities do not allow is answered with an error to the child;
 *   - a question never answered holds its child, but not the pool: the next request
 *     is served beside it; it expires in time, and its child is replaced;
 *   - a log reaches its request only at the level the request's _meta asked for;
 *   - a child that exits mid-call fails that call, and the next request is served.
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

#include "gateway_host.h"
#include "harness.h"
#include "http_expect.h"
#include "modern_host.h"

static char peer[4096];

static void start(hc_server *s, const char *const flags[])
{
    const char *cmd[] = {peer, NULL};
    gw_start(s, flags, cmd);
}

/* A tools/call of the peer's tool, with the client's capabilities, and more params
 * (stolen, may be NULL). */
/* POSTs req (stolen) and returns its one response, after checking it. */
static json_t *post(int port, json_t *req, int status, int code, const char *what)
{
    hc_response r;
    long long id = json_integer_value(json_object_get(req, "id"));
    assert_int_equal(mh_post(port, req, NULL, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, status, code, id, what);
    hc_response_free(&r);
    return resp;
}

/* The InputRequiredResult of resp: its one question (key and method checked). */
static const char *one_question(const json_t *resp, const char *method, json_t **state)
{
    json_t *result = json_object_get(resp, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    json_t *reqs = json_object_get(result, "inputRequests");
    assert_int_equal(json_object_size(reqs), 1);
    const char *key = json_object_iter_key(json_object_iter(reqs));
    assert_string_equal(json_string_value(json_object_get(json_object_get(reqs, key), "method")),
                        method);
    *state = json_object_get(result, "requestState");
    assert_true(json_is_string(*state));
    return key;
}

static void test_discover_answered_from_the_childs_initialize(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    json_t *resp = post(s.port, mh_request(1, "server/discover", NULL, NULL), 200, 0, "discover");
    json_t *result = json_object_get(resp, "result");
    char *text = json_dumps(json_object_get(result, "supportedVersions"), JSON_COMPACT);
    assert_non_null(strstr(text, "\"2026-07-28\""));
    assert_non_null(strstr(text, "\"2025-11-25\""));
    free(text);
    assert_true(json_is_object(json_object_get(json_object_get(result, "capabilities"), "tools")));
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    json_t *info =
        json_object_get(json_object_get(result, "_meta"), "io.modelcontextprotocol/serverInfo");
    assert_string_equal(json_string_value(json_object_get(info, "name")), "gateway-peer");
    json_decref(resp);
    /* ping is not part of the revision: 404 with -32601. */
    json_decref(post(s.port, mh_request(2, "ping", NULL, NULL), 404, -32601, "ping"));
    /* A plain call is translated and decorated. */
    resp = post(s.port, gw_call(3, "hello", NULL, NULL), 200, 0, "tools/call hello");
    assert_string_equal(mh_text(resp, "hello"), "hello");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(resp, "result"), "resultType")),
        "complete");
    json_decref(resp);
    gw_stop(&s);
}

/* A metadata header given twice is refused by the gateway too (a proxy reads the last). */
static void test_repeated_mcp_name_is_refused(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    hc_response r;
    json_t *req = gw_call(4, "hello", NULL, NULL);
    assert_int_equal(mh_post(s.port, req, "Mcp-Name: other\r\n", &r), 0);
    json_decref(req);
    json_decref(mh_expect(&r, 400, -32020, 4, "tools/call hello with a second Mcp-Name"));
    hc_response_free(&r);
    json_t *resp = post(s.port, gw_call(5, "hello", NULL, NULL), 200, 0, "tools/call hello after");
    assert_string_equal(mh_text(resp, "hello"), "hello");
    json_decref(resp);
    gw_stop(&s);
}

static void test_question_becomes_input_required_and_retry_completes(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    const char *caps = "{\"elicitation\":{}}";
    json_t *first = post(s.port, gw_call(10, "ask", caps, NULL), 200, 0, "ask");
    json_t *rs;
    const char *key = one_question(first, "elicitation/create", &rs);
    json_t *question =
        json_object_get(json_object_get(json_object_get(first, "result"), "inputRequests"), key);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(question, "params"), "message")),
        "your name?");
    json_t *answer =
        json_pack("{s:{s:s, s:{s:s}}}", key, "action", "accept", "content", "name", "Alice");

    /* A changed requestState is refused, and so is a retry under the first id. */
    char *bad = NULL;
    assert_true(asprintf(&bad, "%sx", json_string_value(rs)) > 0);
    json_decref(
        post(s.port,
             gw_call(11, "ask", caps,
                     json_pack("{s:O, s:s}", "inputResponses", answer, "requestState", bad)),
             200, -32602, "a changed requestState"));
    free(bad);
    json_decref(post(s.port,
                     gw_call(10, "ask", caps,
                             json_pack("{s:O, s:O}", "inputResponses", answer, "requestState", rs)),
                     200, -32602, "a retry under the first id"));

    json_t *done =
        post(s.port,
             gw_call(12, "ask", caps,
                     json_pack("{s:O, s:O}", "inputResponses", answer, "requestState", rs)),
             200, 0, "the retry");
    const char *text = mh_text(done, "the retry");
    assert_non_null(strstr(text, "answer:"));
    assert_non_null(strstr(text, "Alice"));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(done, "result"), "resultType")),
        "complete");
    json_decref(done);
    json_decref(answer);
    json_decref(first);
    /* Two rounds of one call in /metrics; the refused retries never reached the child. */
    assert_int_equal(gw_metric(s.port, "mcp_gateway_method_requests_total{method=\"tools/call\","
                                       "outcome=\"input_required\"}"),
                     1);
    assert_int_equal(
        gw_metric(s.port,
                  "mcp_gateway_method_requests_total{method=\"tools/call\",outcome=\"ok\"}"),
        1);
    assert_true(gw_metric(s.port, "mcp_http_messages_sent_total") >= 4);
    gw_stop(&s);
}

static void test_two_rounds_of_questions(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    const char *caps = "{\"elicitation\":{},\"sampling\":{}}";
    json_t *r1 = post(s.port, gw_call(20, "ask2", caps, NULL), 200, 0, "ask2 round 1");
    json_t *rs1;
    const char *k1 = one_question(r1, "elicitation/create", &rs1);
    json_t *a1 = json_pack("{s:{s:s, s:{s:s}}}", k1, "action", "accept", "content", "name", "Bob");
    json_t *r2 = post(s.port,
                      gw_call(21, "ask2", caps,
                              json_pack("{s:O, s:O}", "inputResponses", a1, "requestState", rs1)),
                      200, 0, "ask2 round 2");
    json_t *rs2;
    const char *k2 = one_question(r2, "sampling/createMessage", &rs2);
    assert_string_not_equal(json_string_value(rs1), json_string_value(rs2));
    json_t *a2 = json_pack("{s:{s:s, s:{s:s, s:s}, s:s}}", k2, "role", "assistant", "content",
                           "type", "text", "text", "four", "model", "m");
    json_t *done = post(s.port,
                        gw_call(22, "ask2", caps,
                                json_pack("{s:O, s:O}", "inputResponses", a2, "requestState", rs2)),
                        200, 0, "ask2 done");
    const char *text = mh_text(done, "ask2 done");
    assert_non_null(strstr(text, "Bob"));
    assert_non_null(strstr(text, "four"));
    json_decref(done);
    json_decref(a1);
    json_decref(a2);
    json_decref(r1);
    json_decref(r2);
    gw_stop(&s);
}

static void test_question_outside_the_clients_capabilities_fails_in_the_child(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    /* The client declared sampling only: the child's elicitation gets an error. */
    json_t *resp = post(s.port, gw_call(30, "ask", "{\"sampling\":{}}", NULL), 200, 0, "ask");
    const char *text = mh_text(resp, "ask without elicitation");
    assert_non_null(strstr(text, "error:"));
    assert_non_null(strstr(text, "elicitation"));
    json_decref(resp);
    gw_stop(&s);
}

static void test_unanswered_question_expires_and_the_pool_goes_on(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {
        "--pool-size", "1", "--input-timeout-ms", "300", "--kill-grace-ms", "200", NULL};
    start(&s, flags);
    json_t *first = post(s.port, gw_call(40, "ask", "{\"elicitation\":{}}", NULL), 200, 0, "ask");
    json_t *rs;
    const char *key = one_question(first, "elicitation/create", &rs);
    /* The only child waits for that answer; this call does not wait for it: a child
     * held by a parked call is not one of the pool's, and another starts. */
    long long t0 = harness_now_ms();
    json_t *resp = post(s.port, gw_call(41, "hello", NULL, NULL), 200, 0, "hello while asking");
    assert_string_equal(mh_text(resp, "hello"), "hello");
    print_message("served after %lld ms, beside a parked question\n", harness_now_ms() - t0);
    json_decref(resp);
    /* The question expires: its child is replaced. */
    gw_await_metric(s.port, "mcp_gateway_children_exited_total", 1, HX_REQ_MS);
    /* The answer comes too late: its requestState has expired. */
    json_t *answer =
        json_pack("{s:{s:s, s:{s:s}}}", key, "action", "accept", "content", "name", "Late");
    json_t *late =
        post(s.port,
             gw_call(42, "ask", "{\"elicitation\":{}}",
                     json_pack("{s:O, s:O}", "inputResponses", answer, "requestState", rs)),
             200, -32602, "a late retry");
    hx_expect_message_has(late, "expired", "a late retry");
    json_decref(late);
    json_decref(answer);
    json_decref(first);
    gw_await_metric(s.port, "mcp_gateway_children_started_total", 2, HX_REQ_MS);
    gw_stop(&s);
}

static void test_log_reaches_its_request_at_its_level(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    hc_response r;
    json_t *req = gw_call(50, "log", NULL, NULL);
    json_object_set_new(json_object_get(json_object_get(req, "params"), "_meta"),
                        "io.modelcontextprotocol/logLevel", json_string("info"));
    assert_int_equal(mh_post(s.port, req, NULL, &r), 0);
    json_decref(req);
    json_t *msgs = mh_messages(&r, "log at info");
    assert_int_equal(json_array_size(msgs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "method")),
                        "notifications/message");
    json_decref(msgs);
    hc_response_free(&r);
    /* Without a logLevel the client did not opt in: only the result. */
    req = gw_call(51, "log", NULL, NULL);
    assert_int_equal(mh_post(s.port, req, NULL, &r), 0);
    json_decref(req);
    msgs = mh_messages(&r, "log without a level");
    assert_int_equal(json_array_size(msgs), 1);
    json_decref(msgs);
    hc_response_free(&r);
    gw_stop(&s);
}

static void test_child_exit_fails_the_call_and_the_next_is_served(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    json_t *resp = post(s.port, gw_call(60, "exit", NULL, NULL), 200, -32603, "exit");
    hx_expect_message_has(resp, "server process is gone", "exit");
    json_decref(resp);
    resp = post(s.port, gw_call(61, "hello", NULL, NULL), 200, 0, "hello after exit");
    assert_string_equal(mh_text(resp, "hello"), "hello");
    json_decref(resp);
    gw_stop(&s);
}

/* A retry needs no free child: it goes at once to the child that waits for it, while
 * another client's call is in flight (served beside it: a child held by a parked call is
 * not one of the pool's). */
static void test_retry_goes_before_calls_waiting_for_its_child(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--pool-size", "1", NULL};
    start(&s, flags);
    const char *caps = "{\"elicitation\":{}}";
    json_t *first = post(s.port, gw_call(70, "ask", caps, NULL), 200, 0, "ask");
    json_t *rs;
    const char *key = one_question(first, "elicitation/create", &rs);
    /* Another client's call, sent before the retry. */
    hc_conn waiting;
    json_t *other = gw_call(71, "hello", NULL, NULL);
    assert_int_equal(hc_connect(&waiting, s.port, HX_REQ_MS), 0);
    assert_int_equal(mh_send(&waiting, s.port, other), 0);
    json_decref(other);
    json_t *answer =
        json_pack("{s:{s:s, s:{s:s}}}", key, "action", "accept", "content", "name", "Carol");
    json_t *done =
        post(s.port,
             gw_call(72, "ask", caps,
                     json_pack("{s:O, s:O}", "inputResponses", answer, "requestState", rs)),
             200, 0, "the retry, while a call waits");
    assert_non_null(strstr(mh_text(done, "the retry"), "Carol"));
    json_decref(done);
    hc_response r;
    assert_int_equal(hc_read_response(&waiting, &r, HX_REQ_MS), 0);
    json_t *resp = mh_expect(&r, 200, 0, 71, "the waiting call");
    assert_string_equal(mh_text(resp, "the waiting call"), "hello");
    json_decref(resp);
    hc_response_free(&r);
    hc_close(&waiting);
    json_decref(answer);
    json_decref(first);
    gw_stop(&s);
}

/* The child answers a call while its question waits for the client: the retry gets that
 * answer, and a call whose client never retries is forgotten in time, so the child
 * serves others. */
static void test_call_answered_while_its_question_waits(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--pool-size", "1", "--input-timeout-ms", "300", NULL};
    start(&s, flags);
    const char *caps = "{\"elicitation\":{}}";
    json_t *first = post(s.port, gw_call(80, "ask_answer", caps, NULL), 200, 0, "ask_answer");
    json_t *rs;
    const char *key = one_question(first, "elicitation/create", &rs);
    json_t *answer = json_pack("{s:{s:s}}", key, "action", "decline");
    json_t *done =
        post(s.port,
             gw_call(81, "ask_answer", caps,
                     json_pack("{s:O, s:O}", "inputResponses", answer, "requestState", rs)),
             200, 0, "the retry");
    assert_string_equal(mh_text(done, "the retry"), "done");
    json_decref(done);
    json_decref(answer);
    json_decref(first);
    /* Again, and the client never comes back: the next call is served once the
     * question has expired, not after the wait limit (30 s). */
    first = post(s.port, gw_call(82, "ask_answer", caps, NULL), 200, 0, "ask_answer again");
    long long t0 = harness_now_ms();
    json_t *resp = post(s.port, gw_call(83, "hello", NULL, NULL), 200, 0, "hello after it");
    assert_string_equal(mh_text(resp, "hello"), "hello");
    print_message("served after %lld ms\n", harness_now_ms() - t0);
    json_decref(resp);
    json_decref(first);
    gw_stop(&s);
}

/* A subscription to resources of a child that cannot be written to any more: the
 * gateway neither crashes nor leaks, and exits 0 (ASan build). */
static void test_listen_on_a_child_that_stopped_reading(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--pool-size", "1", "--kill-grace-ms", "200", NULL};
    const char *cmd[] = {peer, "--subscribe", NULL};
    gw_start(&s, flags, cmd);
    json_decref(post(s.port, gw_call(90, "close_stdin", NULL, NULL), 200, 0, "close_stdin"));
    for (int i = 0; i < 2; i++) {
        json_t *params = json_pack("{s:{s:[s, s]}}", "notifications", "resourceSubscriptions",
                                   i ? "file:///c" : "file:///a", i ? "file:///d" : "file:///b");
        hc_conn c;
        hc_response head;
        json_t *req = mh_request(91 + i, "subscriptions/listen", params, NULL);
        if (mh_open(&c, s.port, req, &head) == 0) {
            hc_response_free(&head);
        }
        hc_close(&c);
        json_decref(req);
    }
    gw_stop(&s);
}

int main(void)
{
    if (harness_bin_path("server_gateway_peer", peer, sizeof(peer)) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discover_answered_from_the_childs_initialize),
        cmocka_unit_test(test_repeated_mcp_name_is_refused),
        cmocka_unit_test(test_question_becomes_input_required_and_retry_completes),
        cmocka_unit_test(test_two_rounds_of_questions),
        cmocka_unit_test(test_question_outside_the_clients_capabilities_fails_in_the_child),
        cmocka_unit_test(test_unanswered_question_expires_and_the_pool_goes_on),
        cmocka_unit_test(test_log_reaches_its_request_at_its_level),
        cmocka_unit_test(test_child_exit_fails_the_call_and_the_next_is_served),
        cmocka_unit_test(test_retry_goes_before_calls_waiting_for_its_child),
        cmocka_unit_test(test_call_answered_while_its_question_waits),
        cmocka_unit_test(test_listen_on_a_child_that_stopped_reading),
    };
    return cmocka_run_group_tests_name("gateway_modern", tests, NULL, NULL);
}
