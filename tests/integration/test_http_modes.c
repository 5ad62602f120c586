/* SPDX-License-Identifier: MIT */
/*
 * Server modes chosen by flags, each against its own mcp-everything:
 * --json-response, --stateless, --no-get, --cors-origin (and no CORS without
 * it), and the HTTP+SSE transport (2024-11-05) with the
 * regression: a disconnected /sse client's session is gone at once.
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

static void expect_content_type(const hc_response *r, const char *type, const char *what)
{
    const char *ct = hc_header_get(r, "content-type");
    if (ct == NULL || strncasecmp(ct, type, strlen(type)) != 0)
        fail_msg("%s: expected Content-Type %s, got %s", what, type, ct ? ct : "none");
}

/* ---- --json-response ---- */

static int setup_json(void **state)
{
    static const char *const flags[] = {"--json-response", NULL};
    return hx_setup(state, flags, 1);
}

static void test_json_response_mode_answers_with_application_json(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    char *body = hc_tools_call_body(5, "echo", "{\"text\":\"plain json\"}");
    hx_post(f->port, f->session, NULL, body, &r, "tools/call echo with --json-response");
    free(body);
    hx_expect_status(&r, 200, "tools/call echo with --json-response");
    expect_content_type(&r, "application/json", "tools/call echo with --json-response");
    json_error_t jerr;
    json_t *v = json_loadb(r.body, r.body_len, 0, &jerr);
    if (!json_is_object(v))
        fail_msg("--json-response: expected one JSON object, got %s", r.body);
    assert_int_equal(json_integer_value(json_object_get(v, "id")), 5);
    assert_string_equal(hx_result_text(v, "echo"), "plain json");
    json_decref(v);
    hc_response_free(&r);

    /* initialize too answers with JSON, and still names the session. */
    char *init = hc_initialize_body(NULL);
    hx_post(f->port, NULL, NULL, init, &r, "initialize with --json-response");
    free(init);
    hx_expect_status(&r, 200, "initialize with --json-response");
    expect_content_type(&r, "application/json", "initialize with --json-response");
    const char *sid = hc_header_get(&r, "mcp-session-id");
    assert_non_null(sid);
    assert_int_equal(strlen(sid), 32);
    char session[33];
    snprintf(session, sizeof(session), "%s", sid);
    hc_response_free(&r);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
}

static void test_json_response_batch_answers_with_an_array(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    if (hc_mcp_initialize_version(f->port, "2025-03-26", session, HX_REQ_MS) != 0)
        fail_msg("initialize with 2025-03-26 failed");
    hc_response r;
    hx_post(f->port, session, NULL,
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
            &r, "a batch of 2 pings with --json-response");
    hx_expect_status(&r, 200, "a batch of 2 pings with --json-response");
    expect_content_type(&r, "application/json", "a batch with --json-response");
    json_error_t jerr;
    json_t *v = json_loadb(r.body, r.body_len, 0, &jerr);
    if (!json_is_array(v) || json_array_size(v) != 2)
        fail_msg("batch with --json-response: expected an array of 2 responses, got %s", r.body);
    hx_find_response(v, 1, "batch");
    hx_find_response(v, 2, "batch");
    json_decref(v);
    hc_response_free(&r);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
}

/* POSTs body on a new connection (session may be NULL) and reads the response's head; the
 * caller reads the body, event by event. */
static void post_open(hc_conn *c, int port, const char *session, const char *body,
                      hc_response *head, const char *what)
{
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "%s%s%s", session ? "Mcp-Session-Id: " : "",
             session ? session : "", session ? "\r\n" : "");
    if (hc_connect(c, port, HX_REQ_MS) != 0 ||
        hc_send_request(c, port, "POST", "/mcp", hdrs, body, HX_REQ_MS) != 0 ||
        hc_read_head(c, head, HX_REQ_MS) != 0)
        fail_msg("%s: no response head within %d ms", what, HX_REQ_MS);
}

static int is_string(const json_t *v, const char *text)
{
    return json_is_string(v) && strcmp(json_string_value(v), text) == 0;
}

/* The next JSON-RPC message of an SSE body, failing with what when none comes. */
static json_t *next_message(hc_conn *c, const char *what)
{
    int rc;
    json_t *m = hc_sse_next_json(c, HX_EVENT_MS, &rc);
    if (m == NULL)
        fail_msg("%s: %s", what, rc == 0 ? "the stream ended" : "no event within the deadline");
    return m;
}

static void expect_stream_end(hc_conn *c, const char *what)
{
    int rc;
    json_t *m = hc_sse_next_json(c, HX_EVENT_MS, &rc);
    if (m != NULL || rc != 0) {
        char *s = m ? hx_dump(m) : strdup("(timeout)");
        fail_msg("%s: expected the stream to end after the answer, got %s", what, s);
    }
}

/*
 * The TypeScript client saw the last progress notification after the result when progress
 * went to the standalone GET stream: a request that sends messages of its own is answered
 * as an SSE stream, those messages first, and nothing of it reaches the GET stream.
 */
static void test_json_response_progress_comes_before_the_result_on_the_requests_stream(void **state)
{
    hx_fixture *f = *state;
    hc_conn g, c;
    hc_response ghead, head, r;
    hx_open_get_stream(&g, f->port, f->session, &ghead);
    hx_post(f->port, f->session, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
            "\"test://watched-resource\"}}",
            &r, "resources/subscribe");
    hx_expect_status(&r, 200, "resources/subscribe");
    hc_response_free(&r);

    post_open(&c, f->port, f->session,
              "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"long_running\",\"arguments\":{\"steps\":3,\"delay_ms\":10},\"_meta\":{"
              "\"progressToken\":\"tok\"}}}",
              &head, "long_running with progress, --json-response");
    hx_expect_status(&head, 200, "long_running with progress, --json-response");
    expect_content_type(&head, "text/event-stream", "long_running with progress");
    if (hc_header_get(&head, "mcp-session-id") == NULL)
        fail_msg("long_running with progress: the SSE answer lacks Mcp-Session-Id");
    int progress = 0;
    for (;;) {
        json_t *m = next_message(&c, "long_running with progress, --json-response");
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method == NULL) {
            assert_int_equal(json_integer_value(json_object_get(m, "id")), 8);
            assert_non_null(json_object_get(m, "result"));
            json_decref(m);
            break;
        }
        char *s = hx_dump(m);
        if (strcmp(method, "notifications/progress") != 0)
            fail_msg("long_running: expected progress before the result, got %s", s);
        json_t *params = json_object_get(m, "params");
        if (!is_string(json_object_get(params, "progressToken"), "tok") ||
            json_integer_value(json_object_get(params, "progress")) != progress + 1)
            fail_msg("long_running: progress %d out of order or for another token: %s",
                     progress + 1, s);
        free(s);
        progress++;
        json_decref(m);
    }
    assert_int_equal(progress, 3);
    expect_stream_end(&c, "long_running with progress, --json-response");
    hc_response_free(&head);
    hc_close(&c);

    /* A request that sends nothing but its answer still gets one JSON body. */
    char *body =
        hc_tools_call_body(9, "trigger_resource_update", "{\"uri\":\"test://watched-resource\"}");
    hx_post(f->port, f->session, NULL, body, &r, "trigger_resource_update, --json-response");
    free(body);
    hx_expect_status(&r, 200, "trigger_resource_update, --json-response");
    expect_content_type(&r, "application/json", "trigger_resource_update, --json-response");
    hc_response_free(&r);
    /* The GET stream's first message is that update, sent after the call: none of the
     * call's progress went there. */
    json_t *m = next_message(&g, "the standalone GET stream");
    char *s = hx_dump(m);
    if (!is_string(json_object_get(m, "method"), "notifications/resources/updated"))
        fail_msg("--json-response: the GET stream carried %s before the resource update", s);
    free(s);
    json_decref(m);
    hc_response_free(&ghead);
    hc_close(&g);
}

/* A request to the client made by a handler travels on the request's own stream too, so it
 * needs no GET stream, and the answer follows once the client has answered it. */
static void test_json_response_server_request_comes_on_the_requests_stream(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    hc_response head, r;
    char *body = hc_tools_call_body(21, "test_sampling", "{\"prompt\":\"json mode\"}");
    post_open(&c, f->port, f->session, body, &head, "test_sampling, --json-response");
    free(body);
    hx_expect_status(&head, 200, "test_sampling, --json-response");
    expect_content_type(&head, "text/event-stream", "test_sampling, --json-response");
    json_t *ask = next_message(&c, "test_sampling: sampling/createMessage");
    char *s = hx_dump(ask);
    if (!is_string(json_object_get(ask, "method"), "sampling/createMessage") ||
        !json_is_integer(json_object_get(ask, "id")))
        fail_msg("test_sampling: expected sampling/createMessage first, got %s", s);
    free(s);
    char answer[256];
    snprintf(answer, sizeof(answer),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"model\":\"m\",\"role\":"
             "\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"sampled\"}}}",
             (long long)json_integer_value(json_object_get(ask, "id")));
    json_decref(ask);
    hx_post(f->port, f->session, NULL, answer, &r, "the client's sampling answer");
    hx_expect_status(&r, 202, "the client's sampling answer");
    hc_response_free(&r);
    json_t *res = next_message(&c, "test_sampling: the result");
    assert_int_equal(json_integer_value(json_object_get(res, "id")), 21);
    assert_string_equal(hx_result_text(res, "test_sampling"), "LLM response: sampled");
    json_decref(res);
    expect_stream_end(&c, "test_sampling, --json-response");
    hc_response_free(&head);
    hc_close(&c);
}

/* ---- --stateless ---- */

static int setup_stateless(void **state)
{
    static const char *const flags[] = {"--stateless", NULL};
    return hx_setup(state, flags, 0);
}

static void test_stateless_call_works_without_initialize_or_session(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    char *body = hc_tools_call_body(7, "echo", "{\"text\":\"no session\"}");
    hx_post(f->port, NULL, NULL, body, &r, "stateless tools/call without initialize");
    free(body);
    hx_expect_status(&r, 200, "stateless tools/call without initialize");
    if (hc_header_get(&r, "mcp-session-id") != NULL)
        fail_msg("--stateless: a response carries Mcp-Session-Id %s",
                 hc_header_get(&r, "mcp-session-id"));
    json_t *msgs = hx_messages(&r, "stateless tools/call");
    assert_string_equal(hx_result_text(hx_find_response(msgs, 7, "stateless"), "stateless"),
                        "no session");
    json_decref(msgs);
    hc_response_free(&r);

    char *init = hc_initialize_body(NULL);
    hx_post(f->port, NULL, NULL, init, &r, "stateless initialize");
    free(init);
    hx_expect_status(&r, 200, "stateless initialize");
    assert_null(hc_header_get(&r, "mcp-session-id"));
    hc_response_free(&r);
}

/* Without sessions there is nothing to GET or DELETE: each 405 allows only POST. */
static void test_stateless_get_and_delete_get_405(void **state)
{
    hx_fixture *f = *state;
    hx_expect_405(f->port, "GET", "/mcp", HC_SSE_ACCEPT, "POST");
    hx_expect_405(f->port, "DELETE", "/mcp", "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n",
                  "POST");
    hx_expect_405(f->port, "PUT", "/mcp", NULL, "POST");
}

#define STATELESS_REASON "Stateless server: requests to the client are not possible"

/*
 * A tool that asks the client something cannot be served without a session: the client's
 * answer would come in another POST, which reaches no session (it used to get 202 and be
 * dropped, so ping waited 60 s), and the client's capabilities are never known (so
 * elicitation and roots said the client had not declared them). Each fails at once, and
 * says why.
 */
static void test_stateless_requests_to_the_client_fail_at_once_saying_why(void **state)
{
    hx_fixture *f = *state;
    static const struct {
        const char *tool, *args;
    } calls[] = {
        {"ping_client", NULL},
        {"list_roots", NULL},
        {"test_sampling", "{\"prompt\":\"stateless\"}"},
        {"test_elicitation", "{\"message\":\"stateless\"}"},
    };
    /* The client declares every capability: that is not what stops these. */
    hc_response r;
    char *init = hc_initialize_body(NULL);
    hx_post(f->port, NULL, NULL, init, &r, "stateless initialize");
    free(init);
    hx_expect_status(&r, 200, "stateless initialize");
    hc_response_free(&r);
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        char *body = hc_tools_call_body(30 + (long long)i, calls[i].tool, calls[i].args);
        long long t0 = hc_now_ms();
        hx_post(f->port, NULL, NULL, body, &r, calls[i].tool);
        long long took = hc_now_ms() - t0;
        free(body);
        hx_expect_status(&r, 200, calls[i].tool);
        json_t *msgs = hx_messages(&r, calls[i].tool);
        json_t *res = hx_find_response(msgs, 30 + (long long)i, calls[i].tool);
        const char *text = hx_result_text(res, calls[i].tool);
        if (!json_is_true(json_object_get(json_object_get(res, "result"), "isError")) ||
            strstr(text, STATELESS_REASON) == NULL)
            fail_msg("--stateless %s: expected an error result saying \"" STATELESS_REASON
                     "\", got %s",
                     calls[i].tool, text);
        /* Nothing was sent to the client: only the answer came. */
        assert_int_equal(json_array_size(msgs), 1);
        if (took > 2000)
            fail_msg("--stateless %s: failed for the right reason, but after %lld ms",
                     calls[i].tool, took);
        json_decref(msgs);
        hc_response_free(&r);
    }
}

/* What cannot be delivered is not offered: list changes and resource updates need a
 * standalone stream, hence a session. Logging and progress travel in the answer. */
static void test_stateless_initialize_offers_no_list_changed_and_no_subscribe(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    char *init = hc_initialize_body(NULL);
    hx_post(f->port, NULL, NULL, init, &r, "stateless initialize");
    free(init);
    hx_expect_status(&r, 200, "stateless initialize");
    json_t *msgs = hx_messages(&r, "stateless initialize");
    json_t *caps = json_object_get(
        json_object_get(hx_find_response(msgs, 1, "stateless initialize"), "result"),
        "capabilities");
    char *s = hx_dump(caps);
    static const char *const features[] = {"tools", "resources", "prompts"};
    for (size_t i = 0; i < 3; i++) {
        json_t *feat = json_object_get(caps, features[i]);
        if (!json_is_object(feat) || json_object_get(feat, "listChanged") != NULL ||
            json_object_get(feat, "subscribe") != NULL)
            fail_msg("--stateless initialize: %s must be offered without listChanged and "
                     "subscribe: %s",
                     features[i], s);
    }
    if (!json_is_object(json_object_get(caps, "logging")))
        fail_msg("--stateless initialize: logging is deliverable and must be offered: %s", s);
    free(s);
    json_decref(msgs);
    hc_response_free(&r);
}

/* ---- --no-get ---- */

static int setup_no_get(void **state)
{
    static const char *const flags[] = {"--no-get", NULL};
    return hx_setup(state, flags, 1);
}

static void test_no_get_flag_makes_get_405(void **state)
{
    hx_fixture *f = *state;
    char hdrs[160];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", f->session);
    hx_expect_405(f->port, "GET", "/mcp", hdrs, "POST, DELETE");
    /* POST still works. */
    hx_post(f->port, f->session, NULL, PING, &r, "ping with --no-get");
    hx_expect_status(&r, 200, "ping with --no-get");
    hc_response_free(&r);
}

/* ---- --max-get-streams ---- */

static int setup_max_gets(void **state)
{
    static const char *const flags[] = {"--max-get-streams", "2", NULL};
    return hx_setup(state, flags, 1);
}

static void test_get_streams_past_the_limit_get_429_until_one_closes(void **state)
{
    hx_fixture *f = *state;
    hc_conn a, b;
    hc_response head;
    hx_open_get_stream(&a, f->port, f->session, &head);
    hc_response_free(&head);
    hx_open_get_stream(&b, f->port, f->session, &head);
    hc_response_free(&head);
    char hdrs[160];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", f->session);
    assert_int_equal(hc_request(f->port, "GET", "/mcp", hdrs, NULL, &r, HX_REQ_MS), 0);
    json_decref(hx_expect_error(&r, 429, -32000, "a third GET with --max-get-streams 2"));
    hc_response_free(&r);
    /* Another session is not limited by this one's streams. */
    char other[33];
    hx_new_session(f->port, other);
    hc_conn c;
    hx_open_get_stream(&c, f->port, other, &head);
    hc_response_free(&head);
    hc_close(&c);
    /* Once a stream closes, a new one is allowed (the server notices the close first). */
    hc_close(&a);
    long long deadline = hc_now_ms() + 5000;
    int status = 0;
    while (hc_now_ms() < deadline) {
        hc_conn d;
        assert_int_equal(hc_connect(&d, f->port, HX_REQ_MS), 0);
        assert_int_equal(hc_send_request(&d, f->port, "GET", "/mcp", hdrs, NULL, HX_REQ_MS), 0);
        assert_int_equal(hc_read_head(&d, &r, HX_REQ_MS), 0);
        status = r.status;
        hc_response_free(&r);
        hc_close(&d);
        if (status == 200)
            break;
        assert_int_equal(status, 429);
    }
    assert_int_equal(status, 200);
    hc_close(&b);
}

/* ---- CORS ---- */

#define APP_ORIGIN "http://app.example.com"

static int setup_cors(void **state)
{
    static const char *const flags[] = {"--cors-origin", APP_ORIGIN, NULL};
    return hx_setup(state, flags, 1);
}

static void test_cors_preflight_answers_204_with_allow_headers(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    assert_int_equal(hc_request(f->port, "OPTIONS", "/mcp",
                                "Origin: " APP_ORIGIN "\r\n"
                                "Access-Control-Request-Method: POST\r\n"
                                "Access-Control-Request-Headers: content-type, mcp-session-id\r\n",
                                NULL, &r, HX_REQ_MS),
                     0);
    hx_expect_status(&r, 204, "CORS preflight");
    const char *acao = hc_header_get(&r, "access-control-allow-origin");
    const char *methods = hc_header_get(&r, "access-control-allow-methods");
    const char *headers = hc_header_get(&r, "access-control-allow-headers");
    if (acao == NULL || strcmp(acao, APP_ORIGIN) != 0)
        fail_msg("preflight: expected Access-Control-Allow-Origin " APP_ORIGIN ", got %s",
                 acao ? acao : "none");
    if (methods == NULL || strstr(methods, "POST") == NULL || strstr(methods, "DELETE") == NULL)
        fail_msg("preflight: Access-Control-Allow-Methods lacks POST/DELETE: %s",
                 methods ? methods : "none");
    if (headers == NULL || strcasestr(headers, "mcp-session-id") == NULL ||
        strcasestr(headers, "content-type") == NULL)
        fail_msg("preflight: Access-Control-Allow-Headers lacks Mcp-Session-Id/Content-Type: %s",
                 headers ? headers : "none");
    hc_response_free(&r);
}

/* With CORS, each path's 405 and preflight name OPTIONS too, and only that path's methods. */
static void test_cors_405_and_preflight_name_the_paths_own_methods(void **state)
{
    hx_fixture *f = *state;
    hx_expect_405(f->port, "PUT", "/mcp", "Origin: " APP_ORIGIN "\r\n",
                  "GET, POST, DELETE, OPTIONS");
    hx_expect_405(f->port, "POST", "/sse", "Origin: " APP_ORIGIN "\r\n", "GET, OPTIONS");
    hx_expect_405(f->port, "GET", "/messages", "Origin: " APP_ORIGIN "\r\n", "POST, OPTIONS");
    static const struct {
        const char *path, *methods;
    } preflights[] = {{"/mcp", "GET, POST, DELETE, OPTIONS"},
                      {"/sse", "GET, OPTIONS"},
                      {"/messages", "POST, OPTIONS"}};
    for (size_t i = 0; i < sizeof(preflights) / sizeof(preflights[0]); i++) {
        hc_response r;
        assert_int_equal(hc_request(f->port, "OPTIONS", preflights[i].path,
                                    "Origin: " APP_ORIGIN "\r\n"
                                    "Access-Control-Request-Method: POST\r\n",
                                    NULL, &r, HX_REQ_MS),
                         0);
        hx_expect_status(&r, 204, preflights[i].path);
        const char *methods = hc_header_get(&r, "access-control-allow-methods");
        if (methods == NULL || strcmp(methods, preflights[i].methods) != 0)
            fail_msg("preflight of %s: expected Access-Control-Allow-Methods '%s', got %s",
                     preflights[i].path, preflights[i].methods, methods ? methods : "none");
        hc_response_free(&r);
    }
}

static void test_cors_headers_on_responses_to_allowed_origin(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    char *init = hc_initialize_body(NULL);
    hx_post(f->port, NULL, "Origin: " APP_ORIGIN "\r\n", init, &r, "initialize from " APP_ORIGIN);
    free(init);
    hx_expect_status(&r, 200, "initialize from " APP_ORIGIN);
    const char *acao = hc_header_get(&r, "access-control-allow-origin");
    const char *expose = hc_header_get(&r, "access-control-expose-headers");
    if (acao == NULL || strcmp(acao, APP_ORIGIN) != 0)
        fail_msg("initialize from " APP_ORIGIN ": Access-Control-Allow-Origin is %s",
                 acao ? acao : "missing");
    if (expose == NULL || strcasestr(expose, "mcp-session-id") == NULL ||
        strcasestr(expose, "mcp-protocol-version") == NULL)
        fail_msg("initialize from " APP_ORIGIN ": Access-Control-Expose-Headers is %s",
                 expose ? expose : "missing");
    char session[33];
    snprintf(session, sizeof(session), "%s", hc_header_get(&r, "mcp-session-id"));
    hc_response_free(&r);

    /* Error answers carry them too. */
    hx_post(f->port, "0123456789abcdef0123456789abcdef", "Origin: " APP_ORIGIN "\r\n", PING, &r,
            "POST to an unknown session from " APP_ORIGIN);
    json_decref(hx_expect_error(&r, 404, -32600, "unknown session from " APP_ORIGIN));
    assert_non_null(hc_header_get(&r, "access-control-allow-origin"));
    hc_response_free(&r);

    /* Another origin gets 403 and no CORS headers. */
    hx_post(f->port, session, "Origin: http://other.example.com\r\n", PING, &r,
            "POST from a foreign origin");
    json_decref(hx_expect_error(&r, 403, -32000, "POST from a foreign origin"));
    assert_false(hc_has_header_prefix(&r, "access-control-"));
    hc_response_free(&r);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
}

/* ---- --allowed-host and --allowed-origin ---- */

static int setup_allowed(void **state)
{
    static const char *const flags[] = {"--allowed-host", "mcp.example.test", "--allowed-origin",
                                        "https://app.example.test", NULL};
    return hx_setup(state, flags, 0);
}

static void test_allowed_host_and_origin_lists_are_honoured(void **state)
{
    hx_fixture *f = *state;
    char hdrs[512];
    hc_response r;
    /* Whether loopback names stay allowed beside the list is left open; every
     * request here names an allowed host. */
    char *init = hc_initialize_body(NULL);
    assert_int_equal(hc_request(f->port, "POST", "/mcp",
                                "Host: mcp.example.test\r\n" HC_MCP_POST_HEADERS, init, &r,
                                HX_REQ_MS),
                     0);
    free(init);
    hx_expect_status(&r, 200, "initialize with Host: mcp.example.test (in --allowed-host)");
    assert_non_null(hc_header_get(&r, "mcp-session-id"));
    snprintf(f->session, sizeof(f->session), "%s", hc_header_get(&r, "mcp-session-id"));
    hc_response_free(&r);
    snprintf(hdrs, sizeof(hdrs),
             "Host: mcp.example.test:8080\r\n" HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
             f->session);
    assert_int_equal(hc_request(f->port, "POST", "/mcp", hdrs, PING, &r, HX_REQ_MS), 0);
    hx_expect_status(&r, 200, "POST with Host: mcp.example.test (in --allowed-host)");
    hc_response_free(&r);

    snprintf(hdrs, sizeof(hdrs),
             "Host: other.example.test\r\n" HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
             f->session);
    assert_int_equal(hc_request(f->port, "POST", "/mcp", hdrs, PING, &r, HX_REQ_MS), 0);
    json_decref(hx_expect_error(&r, 403, -32000, "POST with Host: other.example.test"));
    hc_response_free(&r);

    snprintf(hdrs, sizeof(hdrs),
             "Host: mcp.example.test\r\nOrigin: https://app.example.test\r\n" HC_MCP_POST_HEADERS
             "Mcp-Session-Id: %s\r\n",
             f->session);
    assert_int_equal(hc_request(f->port, "POST", "/mcp", hdrs, PING, &r, HX_REQ_MS), 0);
    hx_expect_status(&r, 200, "POST with Origin: https://app.example.test (in --allowed-origin)");
    hc_response_free(&r);

    snprintf(hdrs, sizeof(hdrs),
             "Host: mcp.example.test\r\nOrigin: https://evil.example.test\r\n" HC_MCP_POST_HEADERS
             "Mcp-Session-Id: %s\r\n",
             f->session);
    assert_int_equal(hc_request(f->port, "POST", "/mcp", hdrs, PING, &r, HX_REQ_MS), 0);
    json_decref(hx_expect_error(&r, 403, -32000, "POST with Origin: https://evil.example.test"));
    hc_response_free(&r);
}

/* ---- Defaults: no CORS, HTTP+SSE on ---- */

static int setup_default(void **state)
{
    return hx_setup(state, NULL, 1);
}

static void test_no_cors_headers_or_preflight_without_cors_origin(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    hx_post(f->port, f->session, "Origin: http://localhost:3000\r\n", PING, &r,
            "ping from a loopback origin without --cors-origin");
    hx_expect_status(&r, 200, "ping from a loopback origin without --cors-origin");
    if (hc_has_header_prefix(&r, "access-control-"))
        fail_msg("an Access-Control-* header was sent without --cors-origin");
    hc_response_free(&r);
    assert_int_equal(hc_request(f->port, "OPTIONS", "/mcp",
                                "Origin: http://localhost:3000\r\n"
                                "Access-Control-Request-Method: POST\r\n",
                                NULL, &r, HX_REQ_MS),
                     0);
    hx_expect_status(&r, 405, "OPTIONS without --cors-origin");
    assert_false(hc_has_header_prefix(&r, "access-control-"));
    hc_response_free(&r);
}

/* Opens GET /sse, checks the endpoint event and returns the session id in id. */
static void open_httpsse(hc_conn *c, const hx_fixture *f, char *id, size_t id_size)
{
    hc_response head;
    assert_int_equal(hc_connect(c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(c, f->port, "GET", "/sse", HC_SSE_ACCEPT, NULL, HX_REQ_MS), 0);
    if (hc_read_head(c, &head, HX_REQ_MS) != 0)
        fail_msg("GET /sse: no response head within %d ms", HX_REQ_MS);
    hx_expect_status(&head, 200, "GET /sse");
    expect_content_type(&head, "text/event-stream", "GET /sse");
    hc_response_free(&head);
    hc_sse_event ev;
    int rc = hc_sse_next_event(c, &ev, HX_EVENT_MS);
    if (rc != 1)
        fail_msg("GET /sse: no endpoint event (%s)", rc == 0 ? "the stream ended" : "timeout");
    if (ev.event == NULL || strcmp(ev.event, "endpoint") != 0)
        fail_msg("GET /sse: the first event is '%s', not 'endpoint'", ev.event ? ev.event : "");
    const char *prefix = "/messages?sessionId=";
    if (strncmp(ev.data, prefix, strlen(prefix)) != 0 || strlen(ev.data) <= strlen(prefix))
        fail_msg("GET /sse: endpoint data '%s' is not /messages?sessionId=<id>", ev.data);
    snprintf(id, id_size, "%s", ev.data + strlen(prefix));
    hc_sse_event_free(&ev);
}

static void httpsse_post(const hx_fixture *f, const char *id, const char *body, hc_response *r,
                         const char *what)
{
    char path[160];
    snprintf(path, sizeof(path), "/messages?sessionId=%s", id);
    if (hc_request(f->port, "POST", path, "Content-Type: application/json\r\n", body, r,
                   HX_REQ_MS) != 0)
        fail_msg("%s: no complete response", what);
}

/* The next message event on the HTTP+SSE stream, with the id given. */
static void expect_httpsse_answer(hc_conn *c, long long id, const char *what)
{
    hc_sse_event ev;
    if (hc_sse_next_event(c, &ev, HX_EVENT_MS) != 1)
        fail_msg("%s: no answer on the /sse stream within %d ms", what, HX_EVENT_MS);
    if (ev.event != NULL && strcmp(ev.event, "message") != 0)
        fail_msg("%s: expected 'event: message', got '%s'", what, ev.event);
    json_error_t jerr;
    json_t *m = json_loads(ev.data, 0, &jerr);
    if (m == NULL || json_integer_value(json_object_get(m, "id")) != id)
        fail_msg("%s: expected the response with id %lld on /sse, got %s", what, id, ev.data);
    json_decref(m);
    hc_sse_event_free(&ev);
}

/*
 * Each 405 lists what its path allows (RFC 9110 15.5.6), never the method it refuses:
 * the HTTP+SSE transport's /sse only GET, /messages only POST, and /mcp without CORS no
 * OPTIONS (every 405 used to say "GET, POST, DELETE").
 */
static void test_each_405_allows_what_its_path_serves(void **state)
{
    hx_fixture *f = *state;
    hx_expect_405(f->port, "PUT", "/mcp", NULL, "GET, POST, DELETE");
    hx_expect_405(f->port, "OPTIONS", "/mcp", NULL, "GET, POST, DELETE");
    hx_expect_405(f->port, "POST", "/sse", NULL, "GET");
    hx_expect_405(f->port, "DELETE", "/sse", NULL, "GET");
    hx_expect_405(f->port, "GET", "/messages", NULL, "POST");
    hx_expect_405(f->port, "DELETE", "/messages", NULL, "POST");
}

static void test_httpsse_post_gets_202_and_answer_on_sse_stream(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    char id[80];
    hc_response r;
    open_httpsse(&c, f, id, sizeof(id));

    char *init = hc_initialize_body("2024-11-05");
    httpsse_post(f, id, init, &r, "HTTP+SSE initialize");
    free(init);
    hx_expect_status(&r, 202, "HTTP+SSE POST initialize");
    assert_string_equal(r.body, "Accepted");
    hc_response_free(&r);
    expect_httpsse_answer(&c, 1, "HTTP+SSE initialize");

    httpsse_post(f, id, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r,
                 "HTTP+SSE notifications/initialized");
    hx_expect_status(&r, 202, "HTTP+SSE notifications/initialized");
    hc_response_free(&r);

    char *call = hc_tools_call_body(8, "echo", "{\"text\":\"legacy\"}");
    httpsse_post(f, id, call, &r, "HTTP+SSE tools/call");
    free(call);
    hx_expect_status(&r, 202, "HTTP+SSE tools/call");
    hc_response_free(&r);
    expect_httpsse_answer(&c, 8, "HTTP+SSE tools/call");
    hc_close(&c);
}

static void test_httpsse_post_without_or_with_unknown_session_id(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    assert_int_equal(hc_request(f->port, "POST", "/messages", "Content-Type: application/json\r\n",
                                PING, &r, HX_REQ_MS),
                     0);
    json_decref(hx_expect_error(&r, 400, -32000, "POST /messages without sessionId"));
    hc_response_free(&r);
    httpsse_post(f, "0123456789abcdef0123456789abcdef", PING, &r, "POST /messages unknown id");
    json_decref(hx_expect_error(&r, 404, -32600, "POST /messages with an unknown sessionId"));
    hc_response_free(&r);
    /* A Streamable HTTP session id is not an HTTP+SSE one. */
    httpsse_post(f, f->session, PING, &r, "POST /messages with a Streamable HTTP session id");
    hx_expect_status(&r, 404, "POST /messages with a Streamable HTTP session id");
    hc_response_free(&r);
}

/*
 * An HTTP+SSE session is forgotten on disconnect: after the /sse client
 * disconnects, a POST to its session must get
 * 404, not 202 into a dead session. The server learns of the close
 * asynchronously, so this polls with a deadline; every answer before the 404
 * must be a 202 (the close not yet seen), never anything else.
 */
static void test_http_sse_disconnect_removes_session(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    char id[80];
    hc_response r;
    open_httpsse(&c, f, id, sizeof(id));
    char *init = hc_initialize_body("2024-11-05");
    httpsse_post(f, id, init, &r, "HTTP+SSE initialize");
    free(init);
    hx_expect_status(&r, 202, "HTTP+SSE initialize");
    hc_response_free(&r);
    expect_httpsse_answer(&c, 1, "HTTP+SSE initialize");
    hc_close(&c);

    long long deadline = hc_now_ms() + 3000;
    int status = 0, tries = 0;
    while (hc_now_ms() < deadline) {
        httpsse_post(f, id, PING, &r, "POST /messages after the /sse client left");
        status = r.status;
        hc_response_free(&r);
        tries++;
        if (status == 404)
            break;
        if (status != 202)
            fail_msg("POST /messages after the /sse client left: expected 404 (or 202 before "
                     "the close is seen), got %d",
                     status);
    }
    if (status != 404)
        fail_msg("HTTP+SSE: POST /messages?sessionId=%s still gets %d 3 s after the /sse client "
                 "disconnected (%d tries); expected 404",
                 id, status, tries);
}

/*
 * JSON-RPC 2.0 (Error object): the id is null only when it could not be read. A transport
 * refusal of a body that holds a request (wrong session, header, media type, Host) names
 * that request, as the engine's own refusals do; a body that is not JSON, an id of a wrong
 * type, and messages that are not requests get null.
 */
static void test_error_answers_carry_the_request_id_whenever_it_can_be_read(void **state)
{
    hx_fixture *f = *state;
    char with_session[200], bad_version[300];
    snprintf(with_session, sizeof(with_session), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
             f->session);
    snprintf(bad_version, sizeof(bad_version), "%sMCP-Protocol-Version: 1999-01-01\r\n",
             with_session);
    static const char unknown[] =
        HC_MCP_POST_HEADERS "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n";
    char no_sse[200], text_plain[200], evil_host[300];
    snprintf(no_sse, sizeof(no_sse),
             "Accept: application/json\r\nContent-Type: application/json\r\nMcp-Session-Id: "
             "%s\r\n",
             f->session);
    snprintf(text_plain, sizeof(text_plain),
             "Accept: application/json, text/event-stream\r\nContent-Type: text/plain\r\n"
             "Mcp-Session-Id: %s\r\n",
             f->session);
    snprintf(evil_host, sizeof(evil_host), "Host: evil.example.com\r\n%s", with_session);
    const struct {
        const char *what, *headers, *body;
        int status;
        const char *id; /* JSON text of the id expected */
    } cases[] = {
        {"an unknown session", unknown, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", 404,
         "7"},
        {"no Mcp-Session-Id", HC_MCP_POST_HEADERS,
         "{\"jsonrpc\":\"2.0\",\"id\":\"s8\",\"method\":\"ping\"}", 400, "\"s8\""},
        {"an unsupported MCP-Protocol-Version", bad_version,
         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}", 400, "9"},
        {"an Accept without text/event-stream", no_sse,
         "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}", 406, "10"},
        {"Content-Type text/plain", text_plain,
         "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\"}", 415, "11"},
        {"a foreign Host", evil_host, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}", 403,
         "12"},
        {"jsonrpc 1.0", with_session, "{\"jsonrpc\":\"1.0\",\"id\":13,\"method\":\"ping\"}", 400,
         "13"},
        {"params that are not an object", with_session,
         "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/list\",\"params\":[]}", 400, "14"},
        {"a body that is not JSON", with_session, "{\"jsonrpc\":\"2.0\",\"id\":15,", 400, "null"},
        {"an id of a wrong type", with_session,
         "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", 400, "null"},
        {"a response to an unknown session", unknown,
         "{\"jsonrpc\":\"2.0\",\"id\":16,\"result\":{}}", 404, "null"},
        {"a notification to an unknown session", unknown,
         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 404, "null"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hc_response r;
        if (hc_request(f->port, "POST", "/mcp", cases[i].headers, cases[i].body, &r, HX_REQ_MS) !=
            0)
            fail_msg("%s: no complete response", cases[i].what);
        hx_expect_status(&r, cases[i].status, cases[i].what);
        json_t *got = json_loadb(r.body ? r.body : "", r.body_len, 0, NULL);
        json_t *want = json_loads(cases[i].id, JSON_DECODE_ANY, NULL);
        json_t *id = json_object_get(got, "id");
        if (json_object_get(got, "error") == NULL || id == NULL || !json_equal(id, want))
            fail_msg("%s: expected an error answer with id %s, got %s", cases[i].what, cases[i].id,
                     r.body ? r.body : "(no body)");
        json_decref(want);
        json_decref(got);
        hc_response_free(&r);
    }
}

/* ---- --protocol modern ---- */

static int setup_modern_only(void **state)
{
    static const char *const flags[] = {"--protocol", "modern", NULL};
    return hx_setup(state, flags, 0);
}

/* Revision 2026-07-28 alone has no sessions: GET and DELETE allow only POST. */
static void test_modern_only_get_and_delete_allow_only_post(void **state)
{
    hx_fixture *f = *state;
    hx_expect_405(f->port, "GET", "/mcp", HC_SSE_ACCEPT, "POST");
    hx_expect_405(f->port, "DELETE", "/mcp", NULL, "POST");
}

int main(void)
{
    const struct CMUnitTest json_mode[] = {
        cmocka_unit_test(test_json_response_mode_answers_with_application_json),
        cmocka_unit_test(test_json_response_batch_answers_with_an_array),
        cmocka_unit_test(
            test_json_response_progress_comes_before_the_result_on_the_requests_stream),
        cmocka_unit_test(test_json_response_server_request_comes_on_the_requests_stream),
    };
    const struct CMUnitTest stateless[] = {
        cmocka_unit_test(test_stateless_call_works_without_initialize_or_session),
        cmocka_unit_test(test_stateless_get_and_delete_get_405),
        cmocka_unit_test(test_stateless_requests_to_the_client_fail_at_once_saying_why),
        cmocka_unit_test(test_stateless_initialize_offers_no_list_changed_and_no_subscribe),
    };
    const struct CMUnitTest no_get[] = {
        cmocka_unit_test(test_no_get_flag_makes_get_405),
    };
    const struct CMUnitTest max_gets[] = {
        cmocka_unit_test(test_get_streams_past_the_limit_get_429_until_one_closes),
    };
    const struct CMUnitTest cors[] = {
        cmocka_unit_test(test_cors_preflight_answers_204_with_allow_headers),
        cmocka_unit_test(test_cors_405_and_preflight_name_the_paths_own_methods),
        cmocka_unit_test(test_cors_headers_on_responses_to_allowed_origin),
    };
    const struct CMUnitTest allowed[] = {
        cmocka_unit_test(test_allowed_host_and_origin_lists_are_honoured),
    };
    const struct CMUnitTest defaults[] = {
        cmocka_unit_test(test_no_cors_headers_or_preflight_without_cors_origin),
        cmocka_unit_test(test_error_answers_carry_the_request_id_whenever_it_can_be_read),
        cmocka_unit_test(test_each_405_allows_what_its_path_serves),
        cmocka_unit_test(test_httpsse_post_gets_202_and_answer_on_sse_stream),
        cmocka_unit_test(test_httpsse_post_without_or_with_unknown_session_id),
        cmocka_unit_test(test_http_sse_disconnect_removes_session),
    };
    const struct CMUnitTest modern_only[] = {
        cmocka_unit_test(test_modern_only_get_and_delete_allow_only_post),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("http_json_response", json_mode, setup_json, hx_teardown);
    failed +=
        cmocka_run_group_tests_name("http_stateless", stateless, setup_stateless, hx_teardown);
    failed += cmocka_run_group_tests_name("http_no_get", no_get, setup_no_get, hx_teardown);
    failed +=
        cmocka_run_group_tests_name("http_max_get_streams", max_gets, setup_max_gets, hx_teardown);
    failed += cmocka_run_group_tests_name("http_cors", cors, setup_cors, hx_teardown);
    failed +=
        cmocka_run_group_tests_name("http_allowed_lists", allowed, setup_allowed, hx_teardown);
    failed += cmocka_run_group_tests_name("http_defaults_and_httpsse", defaults, setup_default,
                                          hx_teardown);
    failed += cmocka_run_group_tests_name("http_modern_only", modern_only, setup_modern_only,
                                          hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
