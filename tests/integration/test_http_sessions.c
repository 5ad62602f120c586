/* SPDX-License-Identifier: MIT */
/*
 * Session life on the Streamable HTTP endpoint: initialize creates a session
 * with a 128-bit id, a failed initialize creates none, notifications get 202,
 * DELETE ends a session everywhere, idle sessions expire, and --max-sessions
 * caps the table. Three servers: default flags, --session-idle-ms 1500
 * --max-sessions 1, and --max-sessions 3.
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
#include "resume_check.h"

#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

static int setup_default(void **state)
{
    return hx_setup(state, NULL, 0);
}

static int is_session_id(const char *id)
{
    if (id == NULL || strlen(id) != 32)
        return 0;
    for (const char *p = id; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

/* Status of a POST ping on the session. */
static int ping_status(int port, const char *session)
{
    hc_response r;
    int rc = hc_mcp_post(port, session, NULL, PING, &r, HX_REQ_MS);
    int status = rc == 0 ? r.status : -1;
    hc_response_free(&r);
    return status;
}

/* ---- Creating sessions ---- */

static void test_initialize_creates_session_with_32_hex_id(void **state)
{
    hx_fixture *f = *state;
    char *body = hc_initialize_body(NULL);
    char ids[2][33];
    for (int i = 0; i < 2; i++) {
        hc_response r;
        hx_post(f->port, NULL, NULL, body, &r, "POST initialize");
        hx_expect_status(&r, 200, "POST initialize");
        const char *ct = hc_header_get(&r, "content-type");
        if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
            fail_msg("initialize: expected text/event-stream, got %s", ct ? ct : "none");
        const char *id = hc_header_get(&r, "mcp-session-id");
        if (!is_session_id(id))
            fail_msg("initialize: expected Mcp-Session-Id of 32 lowercase hex chars, got '%s'",
                     id ? id : "(none)");
        snprintf(ids[i], sizeof(ids[i]), "%s", id);
        const char *cc = hc_header_get(&r, "cache-control");
        if (cc == NULL || strstr(cc, "no-cache") == NULL)
            fail_msg("initialize: expected Cache-Control: no-cache, got %s", cc ? cc : "none");
        json_t *msgs = hx_messages(&r, "POST initialize");
        /* The one event of the stream is the initialize result. */
        assert_int_equal(json_array_size(msgs), 1);
        json_t *res = hx_find_response(msgs, 1, "POST initialize");
        const char *ver =
            json_string_value(json_object_get(json_object_get(res, "result"), "protocolVersion"));
        assert_non_null(ver);
        assert_string_equal(ver, "2025-11-25");
        json_decref(msgs);
        hc_response_free(&r);
    }
    free(body);
    assert_string_not_equal(ids[0], ids[1]);
    for (int i = 0; i < 2; i++)
        assert_int_equal(hc_mcp_delete(f->port, ids[i], HX_REQ_MS), 200);
}

static void test_failed_initialize_creates_no_session(void **state)
{
    hx_fixture *f = *state;
    static const char *const bodies[] = {
        /* No protocolVersion: -32602. */
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
        /* No params at all. */
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}",
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        hc_response r;
        char what[96];
        snprintf(what, sizeof(what), "failed initialize #%zu", i + 1);
        hx_post(f->port, NULL, NULL, bodies[i], &r, what);
        const char *id = hc_header_get(&r, "mcp-session-id");
        if (id != NULL) {
            /* Even if an id leaked into the header, it must not name a live session. */
            char copy[80];
            snprintf(copy, sizeof(copy), "%s", id);
            int st = ping_status(f->port, copy);
            fail_msg("%s: the response (status %d) carries Mcp-Session-Id %s (a ping on it gets "
                     "%d); a failed initialize must create no session",
                     what, r.status, copy, st);
        }
        if (r.status == 200) {
            json_t *msgs = hx_messages(&r, what);
            json_t *res = hx_find_response(msgs, 1, what);
            json_t *err = json_object_get(res, "error");
            if (json_integer_value(json_object_get(err, "code")) != -32602) {
                char *s = hx_dump(res);
                fail_msg("%s: expected a -32602 error in the stream, got %s", what, s);
            }
            json_decref(msgs);
        } else {
            json_decref(hx_expect_error(&r, 400, -32602, what));
        }
        hc_response_free(&r);
    }
}

static void test_notifications_and_responses_get_202_with_empty_body(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    hx_new_session(f->port, session);
    static const char *const bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
        ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
         "\"params\":{\"requestId\":99}}"),
        /* A response to nothing the server asked: accepted and dropped. */
        "{\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":{}}",
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        hc_response r;
        char what[160];
        snprintf(what, sizeof(what), "POST %s", bodies[i]);
        hx_post(f->port, session, NULL, bodies[i], &r, what);
        hx_expect_status(&r, 202, what);
        if (r.body_len != 0)
            fail_msg("%s: expected an empty 202 body, got '%s'", what, r.body);
        hc_response_free(&r);
    }
    assert_int_equal(ping_status(f->port, session), 200);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
}

/* ---- Ending sessions ---- */

static void test_delete_ends_session_then_404_for_post_get_and_delete(void **state)
{
    hx_fixture *f = *state;
    char session[33], hdrs[160];
    hc_response r;
    hx_new_session(f->port, session);

    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", session);
    assert_int_equal(hc_request(f->port, "DELETE", "/mcp", hdrs, NULL, &r, HX_REQ_MS), 0);
    hx_expect_status(&r, 200, "DELETE /mcp");
    assert_int_equal(r.body_len, 0);
    hc_response_free(&r);

    hx_post(f->port, session, NULL, PING, &r, "POST after DELETE");
    json_decref(hx_expect_error(&r, 404, -32600, "POST after DELETE"));
    hc_response_free(&r);

    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", session);
    assert_int_equal(hc_request(f->port, "GET", "/mcp", hdrs, NULL, &r, HX_REQ_MS), 0);
    json_decref(hx_expect_error(&r, 404, -32600, "GET after DELETE"));
    hc_response_free(&r);

    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", session);
    assert_int_equal(hc_request(f->port, "DELETE", "/mcp", hdrs, NULL, &r, HX_REQ_MS), 0);
    json_decref(hx_expect_error(&r, 404, -32600, "DELETE after DELETE"));
    hc_response_free(&r);
}

static void test_delete_ends_the_open_standalone_stream(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    hc_conn c;
    hc_response head;
    hx_new_session(f->port, session);
    hx_open_get_stream(&c, f->port, session, &head);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
    /* The stream ends (terminator or close); keep-alive comments may come first. */
    hc_sse_event ev;
    int rc = hc_sse_next_event(&c, &ev, HX_EVENT_MS);
    if (rc != 0)
        fail_msg("GET stream of a deleted session: expected it to end, got %s",
                 rc < 0 ? "no end within the deadline" : ev.data);
    hc_response_free(&head);
    hc_close(&c);
}

/* ---- Idle expiry (server 2: --session-idle-ms 1500 --max-sessions 1) ---- */

static int setup_idle(void **state)
{
    static const char *const flags[] = {"--session-idle-ms", "1500", NULL};
    /* The server says when a session expires (an info line, shown with MCP_DEBUG). */
    setenv("MCP_DEBUG", "1", 1);
    int rc = hx_setup(state, flags, 0);
    unsetenv("MCP_DEBUG");
    return rc;
}

/*
 * Every request naming a session refreshes it, so the session's expiry cannot
 * be watched through its own id: the server's own line says when it expired,
 * then the old id must get 404.
 */
static void test_idle_session_expires_then_404(void **state)
{
    hx_fixture *f = *state;
    char old[33];
    hx_new_session(f->port, old);
    assert_int_equal(ping_status(f->port, old), 200);
    long long last_use = hc_now_ms();
    char expired[80];
    snprintf(expired, sizeof(expired), "session %s expired", old);
    if (hc_server_wait_count(&f->srv, expired, 1, 10000) < 0)
        fail_msg("the idle session did not expire within 10 s of --session-idle-ms 1500");
    long long elapsed = hc_now_ms() - last_use;
    if (elapsed < 1400)
        fail_msg("the session expired after %lld ms of idleness, before --session-idle-ms 1500",
                 elapsed);
    assert_int_equal(ping_status(f->port, old), 404);
}

/* ---- The session cap (server 3: --max-sessions 3) ---- */

static int setup_cap(void **state)
{
    static const char *const flags[] = {"--max-sessions", "3", NULL};
    return hx_setup(state, flags, 0);
}

static int new_session_status(int port, char out[33])
{
    char *init = hc_initialize_body(NULL);
    hc_response r;
    hx_post(port, NULL, NULL, init, &r, "initialize with --max-sessions 3");
    free(init);
    int status = r.status;
    const char *id = hc_header_get(&r, "mcp-session-id");
    snprintf(out, 33, "%s", status == 200 && id ? id : "");
    if (status == 503) {
        json_decref(hx_expect_error(&r, 503, -32000, "initialize with every session busy"));
        assert_null(hc_header_get(&r, "mcp-session-id"));
    }
    hc_response_free(&r);
    return status;
}

/*
 * A full session table does not lock newcomers out (1,000 initialize
 * calls that never came back made every new client get 503 for 30 minutes):
 * the least recently used idle session makes room. Only when every session is
 * busy (here each holds an open GET stream) does a newcomer get 503.
 */
static void test_full_table_evicts_the_least_recently_used_idle_session(void **state)
{
    hx_fixture *f = *state;
    char s[3][33], fresh[33];
    for (int i = 0; i < 3; i++)
        hx_new_session(f->port, s[i]);
    /* s[0] is used last, so s[1] is the least recently used. */
    assert_int_equal(ping_status(f->port, s[2]), 200);
    assert_int_equal(ping_status(f->port, s[0]), 200);
    assert_int_equal(new_session_status(f->port, fresh), 200);
    assert_int_equal(ping_status(f->port, s[1]), 404);
    assert_int_equal(ping_status(f->port, s[0]), 200);
    assert_int_equal(ping_status(f->port, s[2]), 200);
    assert_int_equal(ping_status(f->port, fresh), 200);

    /* Every session busy: 503, and nobody is evicted. */
    const char *live[3] = {s[0], s[2], fresh};
    hc_conn gets[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(hc_mcp_get_open(&gets[i], f->port, live[i], NULL, HX_REQ_MS), 200);
    char none[33];
    assert_int_equal(new_session_status(f->port, none), 503);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ping_status(f->port, live[i]), 200);
    for (int i = 0; i < 3; i++)
        hc_close(&gets[i]);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hc_mcp_delete(f->port, live[i], HX_REQ_MS), 200);
}

int main(void)
{
    const struct CMUnitTest basic[] = {
        cmocka_unit_test(test_initialize_creates_session_with_32_hex_id),
        cmocka_unit_test(test_failed_initialize_creates_no_session),
        cmocka_unit_test(test_notifications_and_responses_get_202_with_empty_body),
        cmocka_unit_test(test_delete_ends_session_then_404_for_post_get_and_delete),
        cmocka_unit_test(test_delete_ends_the_open_standalone_stream),
    };
    const struct CMUnitTest idle[] = {
        cmocka_unit_test(test_idle_session_expires_then_404),
    };
    const struct CMUnitTest cap[] = {
        cmocka_unit_test(test_full_table_evicts_the_least_recently_used_idle_session),
    };
    int failed = cmocka_run_group_tests_name("http_sessions", basic, setup_default, hx_teardown);
    failed += cmocka_run_group_tests_name("http_sessions_idle", idle, setup_idle, hx_teardown);
    failed += cmocka_run_group_tests_name("http_sessions_cap", cap, setup_cap, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
