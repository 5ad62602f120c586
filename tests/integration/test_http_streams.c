/* SPDX-License-Identifier: MIT */
/*
 * SSE streams of the Streamable HTTP endpoint: a request's notifications and
 * server->client requests travel on its own POST stream before its response,
 * and the stream ends right after the response; concurrent POSTs each get
 * their own answers; the standalone GET stream carries notifications not tied
 * to a request; keep-alive comments; a client dropping mid-stream leaves the
 * server healthy; pipelining and chunked request bodies.
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

#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

static int setup_default(void **state)
{
    return hx_setup(state, NULL, 1);
}

/* Opens a POST /mcp on c and reads its head, asserting a 200 SSE response. */
static void open_post(hc_conn *c, const hx_fixture *f, const char *body, hc_response *head,
                      const char *what)
{
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", f->session);
    if (hc_connect(c, f->port, HX_REQ_MS) != 0)
        fail_msg("%s: cannot connect", what);
    if (hc_send_request(c, f->port, "POST", "/mcp", hdrs, body, HX_REQ_MS) != 0)
        fail_msg("%s: cannot send", what);
    if (hc_read_head(c, head, HX_REQ_MS) != 0)
        fail_msg("%s: no response head within %d ms", what, HX_REQ_MS);
    hx_expect_status(head, 200, what);
    const char *ct = hc_header_get(head, "content-type");
    if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
        fail_msg("%s: expected text/event-stream, got %s", what, ct ? ct : "none");
}

/* The next JSON message on the stream, failing on timeout or end. */
static json_t *next_msg(hc_conn *c, const char *what)
{
    int rc;
    json_t *m = hc_sse_next_json(c, HX_EVENT_MS, &rc);
    if (m == NULL)
        fail_msg("%s: %s", what,
                 rc == 0 ? "the stream ended early" : "no event within the deadline");
    return m;
}

/* Asserts the stream ends (no further message) within the deadline. */
static void expect_stream_end(hc_conn *c, const char *what)
{
    hc_sse_event ev;
    int rc = hc_sse_next_event(c, &ev, HX_EVENT_MS);
    if (rc == 1) {
        char data[300];
        snprintf(data, sizeof(data), "%s", ev.data);
        hc_sse_event_free(&ev);
        fail_msg("%s: expected the stream to end after the response, got another event: %s", what,
                 data);
    }
    if (rc < 0)
        fail_msg("%s: the stream did not end within %d ms of the response", what, HX_EVENT_MS);
    if (!c->body_done)
        fail_msg("%s: the connection closed without the chunked terminator", what);
}

static const char *method_of(const json_t *m)
{
    return json_string_value(json_object_get(m, "method"));
}

static int is_response(const json_t *m, long long id)
{
    const json_t *mid = json_object_get(m, "id");
    return method_of(m) == NULL && json_is_integer(mid) && json_integer_value(mid) == id;
}

static void set_log_level(const hx_fixture *f, const char *level)
{
    char body[160];
    hc_response r;
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
             "\"%s\"}}",
             level);
    hx_post(f->port, f->session, NULL, body, &r, "logging/setLevel");
    hx_expect_status(&r, 200, "logging/setLevel");
    hc_response_free(&r);
}

/* ---- Request-scoped messages on the POST stream ---- */

static void test_progress_notifications_precede_result_and_stream_ends(void **state)
{
    hx_fixture *f = *state;
    const char *what = "tools/call test_tool_with_progress";
    hc_conn c;
    hc_response head;
    open_post(&c, f,
              "{\"jsonrpc\":\"2.0\",\"id\":51,\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"test_tool_with_progress\",\"arguments\":{},\"_meta\":{\"progressToken\":"
              "\"tok-51\"}}}",
              &head, what);
    if (strcmp(hc_header_get(&head, "mcp-session-id") ? hc_header_get(&head, "mcp-session-id") : "",
               f->session) != 0)
        fail_msg("%s: the stream does not carry the session's Mcp-Session-Id", what);
    static const double expected[] = {0, 50, 100};
    for (int i = 0; i < 3; i++) {
        json_t *m = next_msg(&c, what);
        const json_t *params = json_object_get(m, "params");
        if (method_of(m) == NULL || strcmp(method_of(m), "notifications/progress") != 0 ||
            !json_is_string(json_object_get(params, "progressToken")) ||
            strcmp(json_string_value(json_object_get(params, "progressToken")), "tok-51") != 0 ||
            json_number_value(json_object_get(params, "progress")) != expected[i]) {
            char *s = hx_dump(m);
            fail_msg("%s: event %d: expected progress %g with token tok-51, got %s", what, i + 1,
                     expected[i], s);
        }
        json_decref(m);
    }
    json_t *m = next_msg(&c, what);
    if (!is_response(m, 51)) {
        char *s = hx_dump(m);
        fail_msg("%s: expected the response with id 51 after 3 progress events, got %s", what, s);
    }
    assert_string_equal(hx_result_text(m, what), "tok-51");
    json_decref(m);
    expect_stream_end(&c, what);
    hc_response_free(&head);
    hc_close(&c);
}

static void test_log_notifications_precede_result_and_stream_ends(void **state)
{
    hx_fixture *f = *state;
    const char *what = "tools/call test_tool_with_logging";
    set_log_level(f, "debug");
    hc_conn c;
    hc_response head;
    char *body = hc_tools_call_body(52, "test_tool_with_logging", NULL);
    open_post(&c, f, body, &head, what);
    free(body);
    static const char *const lines[] = {"Tool execution started", "Tool processing data",
                                        "Tool execution completed"};
    for (int i = 0; i < 3; i++) {
        json_t *m = next_msg(&c, what);
        const json_t *params = json_object_get(m, "params");
        const json_t *data = json_object_get(params, "data");
        char *data_text = hx_dump(data);
        int data_ok = strstr(data_text, lines[i]) != NULL;
        free(data_text);
        if (method_of(m) == NULL || strcmp(method_of(m), "notifications/message") != 0 ||
            !data_ok) {
            char *s = hx_dump(m);
            fail_msg("%s: event %d: expected notifications/message '%s', got %s", what, i + 1,
                     lines[i], s);
        }
        json_decref(m);
    }
    json_t *m = next_msg(&c, what);
    if (!is_response(m, 52)) {
        char *s = hx_dump(m);
        fail_msg("%s: expected the response with id 52 after 3 log events, got %s", what, s);
    }
    assert_string_equal(hx_result_text(m, what), "Tool with logging executed successfully");
    json_decref(m);
    expect_stream_end(&c, what);
    hc_response_free(&head);
    hc_close(&c);
}

static void test_sampling_request_rides_the_call_stream_and_answer_completes_it(void **state)
{
    hx_fixture *f = *state;
    const char *what = "tools/call test_sampling";
    hc_conn c;
    hc_response head;
    char *body = hc_tools_call_body(53, "test_sampling", "{\"prompt\":\"What is 2+2?\"}");
    open_post(&c, f, body, &head, what);
    free(body);

    json_t *req = next_msg(&c, what);
    if (method_of(req) == NULL || strcmp(method_of(req), "sampling/createMessage") != 0 ||
        json_object_get(req, "id") == NULL) {
        char *s = hx_dump(req);
        fail_msg("%s: expected a sampling/createMessage request on the call's stream, got %s", what,
                 s);
    }
    const char *prompt = json_string_value(json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(req, "params"), "messages"), 0),
            "content"),
        "text"));
    assert_non_null(prompt);
    assert_string_equal(prompt, "What is 2+2?");

    /* The answer goes back by POST and gets 202. */
    json_t *answer =
        json_pack("{s:s,s:O,s:{s:s,s:{s:s,s:s},s:s,s:s}}", "jsonrpc", "2.0", "id",
                  json_object_get(req, "id"), "result", "role", "assistant", "content", "type",
                  "text", "text", "four", "model", "test-model", "stopReason", "endTurn");
    char *text = json_dumps(answer, JSON_COMPACT);
    hc_response r;
    hx_post(f->port, f->session, NULL, text, &r, "POST the sampling answer");
    hx_expect_status(&r, 202, "POST the sampling answer");
    hc_response_free(&r);
    free(text);
    json_decref(answer);
    json_decref(req);

    json_t *m = next_msg(&c, what);
    if (!is_response(m, 53)) {
        char *s = hx_dump(m);
        fail_msg("%s: expected the response with id 53 after the sampling answer, got %s", what, s);
    }
    assert_string_equal(hx_result_text(m, what), "LLM response: four");
    json_decref(m);
    expect_stream_end(&c, what);
    hc_response_free(&head);
    hc_close(&c);
}

static void test_concurrent_posts_on_one_session_get_their_own_answers(void **state)
{
    hx_fixture *f = *state;
    enum { N = 3 };
    hc_conn c[N];
    hc_response head[N];
    /* All three are sent before any is read, so they run at the same time. */
    for (int i = 0; i < N; i++) {
        char body[256], hdrs[256];
        snprintf(body, sizeof(body),
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"long_running\",\"arguments\":{\"steps\":3,\"delay_ms\":%d},\"_meta\":{"
                 "\"progressToken\":\"p%d\"}}}",
                 60 + i, 60 + 40 * i, i);
        snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", f->session);
        assert_int_equal(hc_connect(&c[i], f->port, HX_REQ_MS), 0);
        assert_int_equal(hc_send_request(&c[i], f->port, "POST", "/mcp", hdrs, body, HX_REQ_MS), 0);
    }
    for (int i = 0; i < N; i++) {
        char what[64], token[8];
        snprintf(what, sizeof(what), "concurrent long_running #%d", i);
        snprintf(token, sizeof(token), "p%d", i);
        if (hc_read_head(&c[i], &head[i], HX_REQ_MS) != 0)
            fail_msg("%s: no response head", what);
        hx_expect_status(&head[i], 200, what);
        int progress = 0;
        for (;;) {
            json_t *m = next_msg(&c[i], what);
            if (method_of(m) != NULL) {
                const json_t *tok = json_object_get(json_object_get(m, "params"), "progressToken");
                if (strcmp(method_of(m), "notifications/progress") != 0 || !json_is_string(tok) ||
                    strcmp(json_string_value(tok), token) != 0) {
                    char *s = hx_dump(m);
                    fail_msg("%s: a message for another request on this stream: %s", what, s);
                }
                progress++;
                json_decref(m);
                continue;
            }
            if (!is_response(m, 60 + i)) {
                char *s = hx_dump(m);
                fail_msg("%s: expected the response with id %d, got %s", what, 60 + i, s);
            }
            assert_string_equal(hx_result_text(m, what), "completed 3 steps");
            json_decref(m);
            break;
        }
        assert_int_equal(progress, 3);
        expect_stream_end(&c[i], what);
        hc_response_free(&head[i]);
        hc_close(&c[i]);
    }
}

/* ---- Subscriptions are bounded ---- */

/* resources/subscribe of uri; the JSON-RPC error code, or 0 for a result. */
static int subscribe(const hx_fixture *f, const char *session, const char *uri)
{
    size_t len = strlen(uri) + 128;
    char *body = malloc(len);
    assert_non_null(body);
    snprintf(body, len,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/subscribe\",\"params\":{"
             "\"uri\":\"%s\"}}",
             uri);
    hc_response r;
    hx_post(f->port, session, NULL, body, &r, "resources/subscribe");
    free(body);
    hx_expect_status(&r, 200, "resources/subscribe");
    json_t *msgs = hx_messages(&r, "resources/subscribe");
    json_t *res = hx_find_response(msgs, 5, "resources/subscribe");
    int code = 0;
    if (json_object_get(res, "result") == NULL)
        code = (int)json_integer_value(json_object_get(json_object_get(res, "error"), "code"));
    assert_true(code != 0 || json_object_get(res, "result") != NULL);
    json_decref(msgs);
    hc_response_free(&r);
    return code;
}

static void test_subscriptions_are_bounded_in_number_and_bytes(void **state)
{
    hx_fixture *f = *state;
    char uri[64], sess[33];
    /* 1,024 resources at most (in a session of its own: others subscribe too). */
    hx_new_session(f->port, sess);
    for (int i = 0; i < 1024; i++) {
        snprintf(uri, sizeof(uri), "test://template/%d/data", i);
        if (subscribe(f, sess, uri) != 0)
            fail_msg("subscription %d of 1024 was refused", i + 1);
    }
    assert_int_equal(subscribe(f, sess, "test://template/1024/data"), -32602);
    /* One held already is no new one; one given up makes room. */
    assert_int_equal(subscribe(f, sess, "test://template/7/data"), 0);
    char body[256];
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/unsubscribe\",\"params\":{"
             "\"uri\":\"test://template/7/data\"}}");
    hc_response r;
    hx_post(f->port, sess, NULL, body, &r, "resources/unsubscribe");
    hx_expect_status(&r, 200, "resources/unsubscribe");
    hc_response_free(&r);
    assert_int_equal(subscribe(f, sess, "test://template/1024/data"), 0);
    assert_int_equal(subscribe(f, sess, "test://template/1025/data"), -32602);

    /* 64 KiB of URIs at most, in another session. */
    char other[33];
    hx_new_session(f->port, other);
    size_t n = 30000;
    char *big = malloc(n + 64);
    assert_non_null(big);
    for (int i = 0; i < 3; i++) {
        int k = snprintf(big, n + 64, "test://template/%d", i);
        memset(big + k, 'x', n);
        strcpy(big + k + n, "/data");
        int code = subscribe(f, other, big);
        if (code != (i < 2 ? 0 : -32602))
            fail_msg("subscription %d of 30,000-byte URIs: code %d", i + 1, code);
    }
    free(big);
    assert_int_equal(subscribe(f, other, "test://template/1/data"), 0);
}

/* ---- The standalone GET stream ---- */

static void test_get_stream_receives_resource_updated_after_subscribe(void **state)
{
    hx_fixture *f = *state;
    const char *uri = "test://watched-resource";
    hc_conn g;
    hc_response ghead;
    hx_open_get_stream(&g, f->port, f->session, &ghead);

    char body[256];
    hc_response r;
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":71,\"method\":\"resources/subscribe\",\"params\":{"
             "\"uri\":\"%s\"}}",
             uri);
    hx_post(f->port, f->session, NULL, body, &r, "resources/subscribe");
    hx_expect_status(&r, 200, "resources/subscribe");
    json_t *msgs = hx_messages(&r, "resources/subscribe");
    json_t *res = hx_find_response(msgs, 71, "resources/subscribe");
    assert_non_null(json_object_get(res, "result"));
    json_decref(msgs);
    hc_response_free(&r);

    char args[128];
    snprintf(args, sizeof(args), "{\"uri\":\"%s\"}", uri);
    char *call = hc_tools_call_body(72, "trigger_resource_update", args);
    hx_post(f->port, f->session, NULL, call, &r, "tools/call trigger_resource_update");
    free(call);
    hx_expect_status(&r, 200, "tools/call trigger_resource_update");
    msgs = hx_messages(&r, "tools/call trigger_resource_update");
    res = hx_find_response(msgs, 72, "tools/call trigger_resource_update");
    assert_string_equal(hx_result_text(res, "trigger_resource_update"), "updated");
    json_decref(msgs);
    hc_response_free(&r);

    /* Other server notifications may come first; the update must come. */
    long long deadline = hc_now_ms() + HX_EVENT_MS;
    for (;;) {
        int rc;
        int left = (int)(deadline - hc_now_ms());
        json_t *m = left > 0 ? hc_sse_next_json(&g, left, &rc) : NULL;
        if (m == NULL)
            fail_msg("GET stream: no notifications/resources/updated within %d ms (%s)",
                     HX_EVENT_MS, left > 0 && rc == 0 ? "the stream ended" : "timeout");
        const char *method = method_of(m);
        if (method != NULL && strcmp(method, "notifications/resources/updated") == 0) {
            const char *got =
                json_string_value(json_object_get(json_object_get(m, "params"), "uri"));
            assert_non_null(got);
            assert_string_equal(got, uri);
            json_decref(m);
            break;
        }
        json_decref(m);
    }
    hc_response_free(&ghead);
    hc_close(&g);
}

/* ---- Dropped clients ---- */

static void test_client_dropping_mid_stream_leaves_server_healthy(void **state)
{
    hx_fixture *f = *state;
    const char *what = "tools/call long_running (dropped)";
    hc_conn c;
    hc_response head;
    open_post(&c, f,
              "{\"jsonrpc\":\"2.0\",\"id\":81,\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"long_running\",\"arguments\":{\"steps\":8,\"delay_ms\":100},\"_meta\":{"
              "\"progressToken\":\"drop\"}}}",
              &head, what);
    json_t *m = next_msg(&c, what);
    assert_string_equal(method_of(m), "notifications/progress");
    json_decref(m);
    hc_response_free(&head);
    hc_close(&c); /* mid-request: 7 steps still to go */

    /* The same session and the server keep serving while the tool runs on. */
    hc_response r;
    hx_post(f->port, f->session, NULL, PING, &r, "ping right after the drop");
    hx_expect_status(&r, 200, "ping right after the drop");
    hc_response_free(&r);

    /* slow_echo outlasts the dropped call, so it finishes while we wait for this. */
    char *call = hc_tools_call_body(82, "slow_echo", "{\"text\":\"still here\",\"delay_ms\":1200}");
    hx_post(f->port, f->session, NULL, call, &r, "slow_echo after the drop");
    free(call);
    hx_expect_status(&r, 200, "slow_echo after the drop");
    json_t *msgs = hx_messages(&r, "slow_echo after the drop");
    assert_string_equal(hx_result_text(hx_find_response(msgs, 82, "slow_echo"), "slow_echo"),
                        "still here");
    json_decref(msgs);
    hc_response_free(&r);

    /* Also an abrupt reset (RST) mid-stream. */
    open_post(&c, f,
              "{\"jsonrpc\":\"2.0\",\"id\":83,\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"long_running\",\"arguments\":{\"steps\":3,\"delay_ms\":50},\"_meta\":{"
              "\"progressToken\":\"rst\"}}}",
              &head, what);
    hc_response_free(&head);
    hc_close_reset(&c);

    assert_true(hc_server_alive(&f->srv));
    hx_post(f->port, f->session, NULL, PING, &r, "ping after the reset");
    hx_expect_status(&r, 200, "ping after the reset");
    hc_response_free(&r);
    char fresh[33];
    hx_new_session(f->port, fresh);
    assert_int_equal(hc_mcp_delete(f->port, fresh, HX_REQ_MS), 200);
}

/* ---- HTTP/1.1 features ---- */

static void test_pipelined_requests_are_answered_in_order(void **state)
{
    hx_fixture *f = *state;
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", f->session);
    /* The first is slow and the second fast: the answers must still come in order. */
    char *b1 = hc_tools_call_body(91, "slow_echo", "{\"text\":\"first\",\"delay_ms\":300}");
    char *b2 = hc_tools_call_body(92, "echo", "{\"text\":\"second\"}");
    size_t l1, l2;
    char *r1 = hc_format_request(f->port, "POST", "/mcp", hdrs, b1, strlen(b1), &l1);
    char *r2 = hc_format_request(f->port, "POST", "/mcp", hdrs, b2, strlen(b2), &l2);
    char *both = malloc(l1 + l2);
    assert_non_null(both);
    memcpy(both, r1, l1);
    memcpy(both + l1, r2, l2);
    hc_conn c;
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send(&c, both, l1 + l2, HX_REQ_MS), 0); /* one write */
    static const long long ids[] = {91, 92};
    static const char *const texts[] = {"first", "second"};
    for (int i = 0; i < 2; i++) {
        hc_response r;
        char what[64];
        snprintf(what, sizeof(what), "pipelined request #%d", i + 1);
        if (hc_read_response(&c, &r, HX_REQ_MS) != 0)
            fail_msg("%s: no complete response on the connection within %d ms", what, HX_REQ_MS);
        hx_expect_status(&r, 200, what);
        json_t *msgs = hx_messages(&r, what);
        json_t *m = json_array_get(msgs, json_array_size(msgs) - 1);
        if (!is_response(m, ids[i])) {
            char *s = hx_dump(msgs);
            fail_msg("%s: expected the response with id %lld, got %s", what, ids[i], s);
        }
        assert_string_equal(hx_result_text(m, what), texts[i]);
        json_decref(msgs);
        hc_response_free(&r);
    }
    hc_close(&c);
    free(both);
    free(r1);
    free(r2);
    free(b1);
    free(b2);
}

static void test_chunked_request_body_is_accepted(void **state)
{
    hx_fixture *f = *state;
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs),
             HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\nTransfer-Encoding: chunked\r\n",
             f->session);
    char *body = hc_tools_call_body(93, "echo", "{\"text\":\"in three chunks\"}");
    size_t len = strlen(body), cut1 = len / 3, cut2 = 2 * len / 3;
    hc_conn c;
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&c, f->port, "POST", "/mcp", hdrs, NULL, HX_REQ_MS), 0);
    /* Each chunk in its own write (one with an extension), then the terminator. */
    size_t starts[] = {0, cut1, cut2, len};
    for (int i = 0; i < 3; i++) {
        char line[64];
        size_t n = starts[i + 1] - starts[i];
        int m = snprintf(line, sizeof(line), i == 1 ? "%zx;ext=1\r\n" : "%zx\r\n", n);
        assert_int_equal(hc_send(&c, line, (size_t)m, HX_REQ_MS), 0);
        assert_int_equal(hc_send(&c, body + starts[i], n, HX_REQ_MS), 0);
        assert_int_equal(hc_send(&c, "\r\n", 2, HX_REQ_MS), 0);
    }
    assert_int_equal(hc_send(&c, "0\r\n\r\n", 5, HX_REQ_MS), 0);
    hc_response r;
    if (hc_read_response(&c, &r, HX_REQ_MS) != 0)
        fail_msg("chunked POST: no complete response within %d ms (status %d)", HX_REQ_MS,
                 r.status);
    hx_expect_status(&r, 200, "chunked POST");
    json_t *msgs = hx_messages(&r, "chunked POST");
    assert_string_equal(hx_result_text(hx_find_response(msgs, 93, "chunked POST"), "chunked POST"),
                        "in three chunks");
    json_decref(msgs);
    hc_response_free(&r);
    hc_close(&c);
    free(body);
}

/* ---- Keep-alive comments (server 2: --keepalive-ms 200) ---- */

static int setup_keepalive(void **state)
{
    static const char *const flags[] = {"--keepalive-ms", "200", NULL};
    return hx_setup(state, flags, 1);
}

/* Waits for a ": keepalive" comment on c, skipping other blocks. */
static void expect_keepalive(hc_conn *c, int timeout_ms, const char *what)
{
    long long deadline = hc_now_ms() + timeout_ms;
    for (;;) {
        hc_sse_event ev;
        int left = (int)(deadline - hc_now_ms());
        int rc = left > 0 ? hc_sse_next(c, &ev, left) : -1;
        if (rc != 1)
            fail_msg("%s: no keep-alive comment within %d ms (%s)", what, timeout_ms,
                     rc == 0 ? "the stream ended" : "timeout");
        int ok = ev.comment && ev.comment_text && strcmp(ev.comment_text, "keepalive") == 0;
        hc_sse_event_free(&ev);
        if (ok)
            return;
    }
}

static void test_keepalive_comments_arrive_on_open_streams(void **state)
{
    hx_fixture *f = *state;
    hc_conn g;
    hc_response ghead;
    hx_open_get_stream(&g, f->port, f->session, &ghead);
    long long t0 = hc_now_ms();
    for (int i = 0; i < 3; i++)
        expect_keepalive(&g, 2000, "GET stream with --keepalive-ms 200");
    long long took = hc_now_ms() - t0;
    /* Three comments at 200 ms intervals: not a flood, not late. */
    if (took < 300)
        fail_msg("3 keep-alive comments came within %lld ms of --keepalive-ms 200", took);
    hc_response_free(&ghead);
    hc_close(&g);

    /* A POST stream waiting for a slow answer gets them too. */
    hc_conn c;
    hc_response head;
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", f->session);
    char *body = hc_tools_call_body(94, "slow_echo", "{\"text\":\"late\",\"delay_ms\":1000}");
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&c, f->port, "POST", "/mcp", hdrs, body, HX_REQ_MS), 0);
    free(body);
    assert_int_equal(hc_read_head(&c, &head, HX_REQ_MS), 0);
    hx_expect_status(&head, 200, "slow_echo with --keepalive-ms 200");
    expect_keepalive(&c, 2000, "POST stream of slow_echo with --keepalive-ms 200");
    json_t *m = hc_sse_next_json(&c, HX_EVENT_MS, NULL);
    assert_non_null(m);
    assert_string_equal(hx_result_text(m, "slow_echo"), "late");
    json_decref(m);
    expect_stream_end(&c, "slow_echo with --keepalive-ms 200");
    hc_response_free(&head);
    hc_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_notifications_precede_result_and_stream_ends),
        cmocka_unit_test(test_log_notifications_precede_result_and_stream_ends),
        cmocka_unit_test(test_sampling_request_rides_the_call_stream_and_answer_completes_it),
        cmocka_unit_test(test_concurrent_posts_on_one_session_get_their_own_answers),
        cmocka_unit_test(test_get_stream_receives_resource_updated_after_subscribe),
        cmocka_unit_test(test_subscriptions_are_bounded_in_number_and_bytes),
        cmocka_unit_test(test_client_dropping_mid_stream_leaves_server_healthy),
        cmocka_unit_test(test_pipelined_requests_are_answered_in_order),
        cmocka_unit_test(test_chunked_request_body_is_accepted),
    };
    const struct CMUnitTest keepalive[] = {
        cmocka_unit_test(test_keepalive_comments_arrive_on_open_streams),
    };
    int failed = cmocka_run_group_tests_name("http_streams", tests, setup_default, hx_teardown);
    failed += cmocka_run_group_tests_name("http_streams_keepalive", keepalive, setup_keepalive,
                                          hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
