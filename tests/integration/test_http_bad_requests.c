/* SPDX-License-Identifier: MIT */
/*
 * Bad requests to the Streamable HTTP endpoint: each gets its precise HTTP
 * status and JSON-RPC error code, and nothing else changes (the group's
 * session keeps working). The server runs as `mcp-everything --http
 * 127.0.0.1:0 --max-body 65536` and is spoken to over raw sockets.
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

#define MAX_BODY 65536
#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

static int setup(void **state)
{
    static const char *const flags[] = {"--max-body", "65536", NULL};
    return hx_setup(state, flags, 1);
}

/* Headers with the group's session plus extra lines. */
static const char *with_session(const hx_fixture *f, const char *extra, char *buf, size_t size)
{
    snprintf(buf, size, "Mcp-Session-Id: %s\r\n%s", f->session, extra ? extra : "");
    return buf;
}

/* The session still answers a ping: bad input changed nothing. */
static void assert_session_alive(const hx_fixture *f)
{
    hc_response r;
    hx_post(f->port, f->session, NULL, PING, &r, "ping after bad input");
    hx_expect_status(&r, 200, "ping after bad input");
    json_t *msgs = hx_messages(&r, "ping after bad input");
    hx_find_response(msgs, 1, "ping after bad input");
    json_decref(msgs);
    hc_response_free(&r);
}

/* Sends a raw request on a new connection and reads the whole answer. */
static void raw(const hx_fixture *f, const char *method, const char *headers, const char *body,
                hc_response *r, const char *what)
{
    if (hc_request(f->port, method, "/mcp", headers, body, r, HX_REQ_MS) != 0)
        fail_msg("%s: no complete response within %d ms (status %d)", what, HX_REQ_MS, r->status);
}

/* ---- Methods and content negotiation ---- */

static void test_unsupported_methods_get_405_with_allow_header(void **state)
{
    hx_fixture *f = *state;
    static const char *const methods[] = {"PUT", "PATCH", "OPTIONS"};
    char hdrs[256];
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        hx_expect_405(f->port, methods[i], "/mcp",
                      with_session(f, HC_MCP_POST_HEADERS, hdrs, sizeof(hdrs)),
                      "GET, POST, DELETE");
    assert_session_alive(f);
}

static void test_post_not_accepting_both_types_gets_406(void **state)
{
    hx_fixture *f = *state;
    static const char *const accepts[] = {
        "Accept: application/json\r\n",
        "Accept: text/event-stream\r\n",
        "Accept: text/html\r\n",
        "Accept: application/json, text/event-stream;q=0\r\n",
        "", /* no Accept at all */
    };
    for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
        char hdrs[512], what[128];
        hc_response r;
        snprintf(hdrs, sizeof(hdrs), "%sContent-Type: application/json\r\nMcp-Session-Id: %s\r\n",
                 accepts[i], f->session);
        snprintf(what, sizeof(what), "POST with '%.*s'", (int)strcspn(accepts[i], "\r"),
                 accepts[i]);
        raw(f, "POST", hdrs, PING, &r, what);
        json_decref(hx_expect_error(&r, 406, -32000, what));
        hc_response_free(&r);
    }
    /* A wildcard counts as accepting both. */
    char hdrs[512];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs),
             "Accept: */*\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\n", f->session);
    raw(f, "POST", hdrs, PING, &r, "POST with 'Accept: */*'");
    hx_expect_status(&r, 200, "POST with 'Accept: */*'");
    hc_response_free(&r);
}

static void test_get_not_accepting_event_stream_gets_406(void **state)
{
    hx_fixture *f = *state;
    char hdrs[256];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs), "Accept: application/json\r\nMcp-Session-Id: %s\r\n", f->session);
    raw(f, "GET", hdrs, NULL, &r, "GET with 'Accept: application/json'");
    json_decref(hx_expect_error(&r, 406, -32000, "GET with 'Accept: application/json'"));
    hc_response_free(&r);
}

static void test_post_with_wrong_content_type_gets_415(void **state)
{
    hx_fixture *f = *state;
    static const char *const types[] = {"text/plain", "application/xml", "application/jsonx",
                                        "multipart/form-data"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        char hdrs[512], what[128];
        hc_response r;
        snprintf(hdrs, sizeof(hdrs),
                 "Accept: application/json, text/event-stream\r\nContent-Type: %s\r\n"
                 "Mcp-Session-Id: %s\r\n",
                 types[i], f->session);
        snprintf(what, sizeof(what), "POST with Content-Type %s", types[i]);
        raw(f, "POST", hdrs, PING, &r, what);
        json_decref(hx_expect_error(&r, 415, -32000, what));
        hc_response_free(&r);
    }
    /* Parameters do not change the media type. */
    char hdrs[512];
    hc_response r;
    snprintf(hdrs, sizeof(hdrs),
             "Accept: application/json, text/event-stream\r\n"
             "Content-Type: Application/JSON; charset=utf-8\r\nMcp-Session-Id: %s\r\n",
             f->session);
    raw(f, "POST", hdrs, PING, &r, "POST with Content-Type Application/JSON; charset=utf-8");
    hx_expect_status(&r, 200, "POST with Content-Type Application/JSON; charset=utf-8");
    hc_response_free(&r);
}

/* ---- Body size ---- */

static void test_content_length_over_limit_gets_413_before_the_body(void **state)
{
    hx_fixture *f = *state;
    char hdrs[512];
    hc_conn c;
    hc_response r;
    /* Only the head is sent: the server must refuse on the declared length. */
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\nContent-Length: %d\r\n",
             f->session, MAX_BODY + 1);
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&c, f->port, "POST", "/mcp", hdrs, NULL, HX_REQ_MS), 0);
    if (hc_read_response(&c, &r, HX_REQ_MS) != 0)
        fail_msg("POST declaring Content-Length %d (limit %d): no response within %d ms "
                 "(status %d)",
                 MAX_BODY + 1, MAX_BODY, HX_REQ_MS, r.status);
    hx_expect_status(&r, 413, "POST declaring a body over --max-body");
    hc_response_free(&r);
    hc_close(&c);
    assert_session_alive(f);
}

static void test_chunked_body_over_limit_gets_413(void **state)
{
    hx_fixture *f = *state;
    char hdrs[512];
    hc_conn c;
    hc_response r;
    snprintf(hdrs, sizeof(hdrs),
             HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\nTransfer-Encoding: chunked\r\n",
             f->session);
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&c, f->port, "POST", "/mcp", hdrs, NULL, HX_REQ_MS), 0);
    /* Chunks of 8 KiB of a JSON string until well past the limit; the server
     * may answer and close before all of them are written. */
    static char chunk[8192 + 16];
    int n = snprintf(chunk, sizeof(chunk), "2000\r\n");
    memset(chunk + n, 'a', 8192);
    memcpy(chunk + n + 8192, "\r\n", 2);
    size_t chunk_len = (size_t)n + 8192 + 2;
    static const char first[] = "10\r\n[\"aaaaaaaaaaaaaa\r\n";
    hc_send(&c, first, strlen(first), HX_REQ_MS);
    for (int i = 0; i < (2 * MAX_BODY) / 8192; i++)
        if (hc_send(&c, chunk, chunk_len, HX_REQ_MS) != 0)
            break;
    static const char last[] = "2\r\n\"]\r\n0\r\n\r\n";
    hc_send(&c, last, strlen(last), HX_REQ_MS);
    if (hc_read_response(&c, &r, HX_REQ_MS) != 0 && r.status == 0)
        fail_msg("chunked POST of %d bytes (limit %d): no response within %d ms", 2 * MAX_BODY,
                 MAX_BODY, HX_REQ_MS);
    hx_expect_status(&r, 413, "chunked POST over --max-body");
    hc_response_free(&r);
    hc_close(&c);
    assert_session_alive(f);
}

/* ---- Bodies that are not valid JSON-RPC ---- */

static void test_unparseable_json_gets_400_parse_error_naming_line_and_column(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    const char *body = "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"method\": ping\n}";
    hx_post(f->port, f->session, NULL, body, &r, "POST with malformed JSON");
    json_t *err = hx_expect_error(&r, 400, -32700, "POST with malformed JSON");
    hx_expect_message_has(err, "line", "POST with malformed JSON");
    hx_expect_message_has(err, "column", "POST with malformed JSON");
    /* The error is on line 4. */
    hx_expect_message_has(err, "4", "POST with malformed JSON");
    assert_true(json_is_null(json_object_get(err, "id")));
    json_decref(err);
    hc_response_free(&r);

    static const char *const bad[] = {"", "{", "[1,2", "nul", "{\"a\":1}}", "\xff\xfe"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char what[64];
        snprintf(what, sizeof(what), "POST with body '%s'", bad[i]);
        hx_post(f->port, f->session, NULL, bad[i], &r, what);
        json_decref(hx_expect_error(&r, 400, -32700, what));
        hc_response_free(&r);
    }
    assert_session_alive(f);
}

static void test_invalid_message_gets_400_invalid_request(void **state)
{
    hx_fixture *f = *state;
    static const struct {
        const char *body;
        int echo_id; /* the id the error must carry; -1: null */
    } cases[] = {
        {"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}", 7},
        {"{\"id\":8,\"method\":\"ping\"}", 8},
        {"{\"jsonrpc\":\"2.0\",\"id\":9}", 9},
        {"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":42}", 10},
        {"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -1},
        {"42", -1},
        {"\"hello\"", -1},
        {"[1]", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[160];
        hc_response r;
        snprintf(what, sizeof(what), "POST %s", cases[i].body);
        hx_post(f->port, f->session, NULL, cases[i].body, &r, what);
        json_t *err = hx_expect_error(&r, 400, -32600, what);
        json_t *id = json_object_get(err, "id");
        if (cases[i].echo_id >= 0
                ? json_integer_value(id) != cases[i].echo_id || !json_is_integer(id)
                : !json_is_null(id)) {
            char *s = hx_dump(err);
            fail_msg("%s: expected the error to carry id %d, got %s", what, cases[i].echo_id, s);
        }
        json_decref(err);
        hc_response_free(&r);
    }
    assert_session_alive(f);
}

static void test_params_not_an_object_gets_400_invalid_params(void **state)
{
    hx_fixture *f = *state;
    static const char *const bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\",\"params\":[1,2]}",
        "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\",\"params\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        hc_response r;
        char what[160];
        snprintf(what, sizeof(what), "POST %s", bodies[i]);
        hx_post(f->port, f->session, NULL, bodies[i], &r, what);
        json_t *err = hx_expect_error(&r, 400, -32602, what);
        assert_int_equal(json_integer_value(json_object_get(err, "id")), 11);
        json_decref(err);
        hc_response_free(&r);
    }
}

static void test_empty_batch_gets_400_invalid_request(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    hx_post(f->port, f->session, NULL, "[]", &r, "POST []");
    json_decref(hx_expect_error(&r, 400, -32600, "POST []"));
    hc_response_free(&r);
}

/* A batch of n pings with ids 1..n. */
static char *ping_batch(int n)
{
    size_t cap = (size_t)n * 64 + 16, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[len++] = '[';
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}",
                                i > 1 ? "," : "", i);
    snprintf(s + len, cap - len, "]");
    return s;
}

static void test_batch_over_100_gets_400_and_100_is_served(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    /* Batches are a 2025-03-26 feature: the limit is checked on such a session. */
    char session[33];
    if (hc_mcp_initialize_version(f->port, "2025-03-26", session, HX_REQ_MS) != 0)
        fail_msg("initialize with protocol version 2025-03-26 failed");
    char *body = ping_batch(101);
    hx_post(f->port, session, NULL, body, &r, "POST a batch of 101 pings (2025-03-26 session)");
    json_decref(hx_expect_error(&r, 400, -32600, "POST a batch of 101 pings"));
    hc_response_free(&r);
    free(body);

    body = ping_batch(100);
    hx_post(f->port, session, NULL, body, &r, "POST a batch of 100 pings (2025-03-26 session)");
    hx_expect_status(&r, 200, "POST a batch of 100 pings");
    json_t *msgs = hx_messages(&r, "POST a batch of 100 pings");
    for (int i = 1; i <= 100; i++)
        hx_find_response(msgs, i, "POST a batch of 100 pings");
    json_decref(msgs);
    hc_response_free(&r);
    free(body);
    assert_int_equal(hc_mcp_delete(f->port, session, HX_REQ_MS), 200);
}

/*
 * A 2025-11-25 session does not take batches (they were removed in
 * 2025-06-18): the answer is a -32600 error, and like every answer it must be
 * complete, i.e. the POST's stream ends after it.
 */
static void test_batch_on_2025_11_25_session_gets_complete_invalid_request_answer(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    char *body = ping_batch(2);
    int rc = hc_mcp_post(f->port, f->session, NULL, body, &r, HX_REQ_MS);
    free(body);
    if (rc != 0) {
        char *got = r.body ? strdup(r.body) : NULL;
        fail_msg("POST [ping, ping] on a 2025-11-25 session: expected a complete answer "
                 "(400, or 200 whose stream ends after the -32600 error), got status %d and no "
                 "end of the response within %d ms; body so far: %s",
                 r.status, HX_REQ_MS, got ? got : "(head only)");
    }
    if (r.status == 400) {
        json_decref(hx_expect_error(&r, 400, -32600, "POST [ping, ping] on a 2025-11-25 session"));
    } else {
        hx_expect_status(&r, 200, "POST [ping, ping] on a 2025-11-25 session");
        json_t *msgs = hx_messages(&r, "POST [ping, ping] on a 2025-11-25 session");
        json_t *err = json_object_get(json_array_get(msgs, 0), "error");
        assert_int_equal(json_integer_value(json_object_get(err, "code")), -32600);
        json_decref(msgs);
    }
    hc_response_free(&r);
    assert_session_alive(f);
}

static void test_initialize_inside_batch_gets_400(void **state)
{
    hx_fixture *f = *state;
    char *init = hc_initialize_body(NULL);
    char body[1024];
    hc_response r;
    snprintf(body, sizeof(body), "[%s]", init);
    hx_post(f->port, NULL, NULL, body, &r, "POST [initialize]");
    json_decref(hx_expect_error(&r, 400, -32600, "POST [initialize]"));
    if (hc_header_get(&r, "mcp-session-id") != NULL)
        fail_msg("POST [initialize]: the 400 carries a session id %s",
                 hc_header_get(&r, "mcp-session-id"));
    hc_response_free(&r);
    snprintf(body, sizeof(body), "[%s,%s]", PING, init);
    hx_post(f->port, f->session, NULL, body, &r, "POST [ping, initialize]");
    json_decref(hx_expect_error(&r, 400, -32600, "POST [ping, initialize]"));
    hc_response_free(&r);
    free(init);
}

/* ---- Sessions and versions ---- */

static void test_request_without_session_id_gets_400(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    hx_post(f->port, NULL, NULL, PING, &r, "POST ping without Mcp-Session-Id");
    json_decref(hx_expect_error(&r, 400, -32000, "POST ping without Mcp-Session-Id"));
    hc_response_free(&r);
    raw(f, "GET", HC_SSE_ACCEPT, NULL, &r, "GET without Mcp-Session-Id");
    json_decref(hx_expect_error(&r, 400, -32000, "GET without Mcp-Session-Id"));
    hc_response_free(&r);
    raw(f, "DELETE", NULL, NULL, &r, "DELETE without Mcp-Session-Id");
    json_decref(hx_expect_error(&r, 400, -32000, "DELETE without Mcp-Session-Id"));
    hc_response_free(&r);
}

static void test_unknown_session_id_gets_404_session_not_found(void **state)
{
    hx_fixture *f = *state;
    static const char *const ids[] = {"0123456789abcdef0123456789abcdef", "nope", "x\"y"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        char hdrs[256], what[128];
        hc_response r;
        snprintf(what, sizeof(what), "POST with unknown session '%s'", ids[i]);
        hx_post(f->port, ids[i], NULL, PING, &r, what);
        json_t *err = hx_expect_error(&r, 404, -32600, what);
        hx_expect_message_has(err, "Session not found", what);
        json_decref(err);
        hc_response_free(&r);

        snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", ids[i]);
        snprintf(what, sizeof(what), "GET with unknown session '%s'", ids[i]);
        raw(f, "GET", hdrs, NULL, &r, what);
        json_decref(hx_expect_error(&r, 404, -32600, what));
        hc_response_free(&r);

        snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", ids[i]);
        snprintf(what, sizeof(what), "DELETE with unknown session '%s'", ids[i]);
        raw(f, "DELETE", hdrs, NULL, &r, what);
        json_decref(hx_expect_error(&r, 404, -32600, what));
        hc_response_free(&r);
    }
}

static void test_unsupported_protocol_version_header_gets_400(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    hx_post(f->port, f->session, "MCP-Protocol-Version: 1999-01-01\r\n", PING, &r,
            "POST with MCP-Protocol-Version: 1999-01-01");
    json_t *err = hx_expect_error(&r, 400, -32000, "POST with MCP-Protocol-Version: 1999-01-01");
    hx_expect_message_has(err, "1999-01-01", "POST with MCP-Protocol-Version: 1999-01-01");
    json_decref(err);
    hc_response_free(&r);

    static const char *const good[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char hdr[64], what[96];
        snprintf(hdr, sizeof(hdr), "MCP-Protocol-Version: %s\r\n", good[i]);
        snprintf(what, sizeof(what), "POST with MCP-Protocol-Version: %s", good[i]);
        hx_post(f->port, f->session, hdr, PING, &r, what);
        hx_expect_status(&r, 200, what);
        hc_response_free(&r);
    }
}

/* ---- DNS rebinding protection ---- */

static void test_non_loopback_host_gets_403(void **state)
{
    hx_fixture *f = *state;
    static const char *const hosts[] = {"evil.example.com", "evil.example.com:8080", "10.0.0.1",
                                        "localhost.evil.com"};
    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        char hdrs[512], what[128];
        hc_response r;
        snprintf(hdrs, sizeof(hdrs), "Host: %s\r\n" HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
                 hosts[i], f->session);
        snprintf(what, sizeof(what), "POST with Host: %s", hosts[i]);
        raw(f, "POST", hdrs, PING, &r, what);
        json_decref(hx_expect_error(&r, 403, -32000, what));
        hc_response_free(&r);
    }
    static const char *const loopback[] = {"localhost", "localhost:9", "127.0.0.1:1", "[::1]:80",
                                           "[::1]"};
    for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++) {
        char hdrs[512], what[128];
        hc_response r;
        snprintf(hdrs, sizeof(hdrs), "Host: %s\r\n" HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
                 loopback[i], f->session);
        snprintf(what, sizeof(what), "POST with Host: %s", loopback[i]);
        raw(f, "POST", hdrs, PING, &r, what);
        hx_expect_status(&r, 200, what);
        hc_response_free(&r);
    }
}

static void test_foreign_origin_gets_403(void **state)
{
    hx_fixture *f = *state;
    static const char *const origins[] = {"http://evil.example.com", "https://localhost.evil.com",
                                          "null", "http://10.0.0.1:3000"};
    for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]); i++) {
        char extra[256], what[128];
        hc_response r;
        snprintf(extra, sizeof(extra), "Origin: %s\r\n", origins[i]);
        snprintf(what, sizeof(what), "POST with Origin: %s", origins[i]);
        hx_post(f->port, f->session, extra, PING, &r, what);
        json_decref(hx_expect_error(&r, 403, -32000, what));
        hc_response_free(&r);
    }
}

static void test_loopback_origin_is_accepted(void **state)
{
    hx_fixture *f = *state;
    static const char *const origins[] = {"http://localhost", "http://localhost:3000",
                                          "https://127.0.0.1:8443", "http://[::1]:5173"};
    for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]); i++) {
        char extra[256], what[128];
        hc_response r;
        snprintf(extra, sizeof(extra), "Origin: %s\r\n", origins[i]);
        snprintf(what, sizeof(what), "POST with Origin: %s", origins[i]);
        hx_post(f->port, f->session, extra, PING, &r, what);
        hx_expect_status(&r, 200, what);
        /* Without --cors-origin no CORS header is ever sent. */
        if (hc_has_header_prefix(&r, "access-control-"))
            fail_msg("%s: Access-Control-* header sent without --cors-origin", what);
        hc_response_free(&r);
    }
}

/* ---- Errors that quote what the client sent ---- */

/*
 * The error quotes the header value; whatever its bytes, the answer keeps its
 * JSON-RPC body, with U+FFFD for what is not UTF-8 or is a control character,
 * and the request id.
 */
static void expect_quoting_error(const hc_response *r, int status, const char *what)
{
    json_t *body = hx_expect_error(r, status, -32000, what);
    hx_expect_message_has(body, "\xEF\xBF\xBD", what);
    const char *msg = json_string_value(json_object_get(json_object_get(body, "error"), "message"));
    for (const char *c = msg; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20)
            fail_msg("%s: a control character in the message: %s", what, msg);
    if (json_integer_value(json_object_get(body, "id")) != 1)
        fail_msg("%s: the error does not carry the request's id 1", what);
    json_decref(body);
}

static void test_header_values_that_are_not_utf8_still_get_their_error_body(void **state)
{
    hx_fixture *f = *state;
    /* Not UTF-8: stray bytes, an overlong '/', a surrogate, a truncated sequence; a tab;
     * and a value whose quote (256 bytes) cuts a two-byte character in half. */
    char long_value[400] = "x";
    for (size_t i = 1; i + 2 < sizeof(long_value); i += 2)
        memcpy(long_value + i, "\xC3\xA9", 3);
    const char *const values[] = {"\xFF\xFE",         "a\xC0\xAFz", "\xED\xA0\x80.example",
                                  "evil\xE2\x82.com", "a\tb",       long_value};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char hdrs[1024], extra[512], what[128];
        hc_response r;
        snprintf(what, sizeof(what), "POST with Host number %zu", i);
        snprintf(hdrs, sizeof(hdrs), "Host: %s\r\n" HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n",
                 values[i], f->session);
        raw(f, "POST", hdrs, PING, &r, what);
        expect_quoting_error(&r, 403, what);
        hc_response_free(&r);

        snprintf(what, sizeof(what), "POST with Origin number %zu", i);
        snprintf(extra, sizeof(extra), "Origin: %s\r\n", values[i]);
        hx_post(f->port, f->session, extra, PING, &r, what);
        expect_quoting_error(&r, 403, what);
        hc_response_free(&r);

        snprintf(what, sizeof(what), "POST with MCP-Protocol-Version number %zu", i);
        snprintf(extra, sizeof(extra), "MCP-Protocol-Version: %s\r\n", values[i]);
        hx_post(f->port, f->session, extra, PING, &r, what);
        expect_quoting_error(&r, 400, what);
        hc_response_free(&r);
    }
    assert_session_alive(f);
}

/* ---- Limits of the HTTP layer ---- */

static void test_headers_over_16k_get_431(void **state)
{
    hx_fixture *f = *state;
    size_t big = 17 * 1024;
    char *hdrs = malloc(big + 512);
    assert_non_null(hdrs);
    int n = snprintf(hdrs, 512, HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\nX-Big: ", f->session);
    memset(hdrs + n, 'b', big);
    memcpy(hdrs + n + big, "\r\n", 3);
    hc_response r;
    raw(f, "POST", hdrs, PING, &r, "POST with a 17 KiB header");
    hx_expect_status(&r, 431, "POST with a 17 KiB header");
    hc_response_free(&r);

    /* Many small headers add up the same way. */
    size_t len =
        (size_t)snprintf(hdrs, 512, HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", f->session);
    for (int i = 0; len + 40 < big + 400; i++)
        len += (size_t)snprintf(hdrs + len, big + 512 - len, "X-H%d: %020d\r\n", i, i);
    raw(f, "POST", hdrs, PING, &r, "POST with ~17 KiB of small headers");
    hx_expect_status(&r, 431, "POST with ~17 KiB of small headers");
    hc_response_free(&r);
    free(hdrs);
    assert_session_alive(f);
}

/*
 * Slowloris: a head that never completes gets 408 once the 10 s header
 * timeout passes, and the connection is closed. The wait is for that answer,
 * with a deadline a little past the timeout.
 */
static void test_incomplete_head_gets_408_after_header_timeout_and_close(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    hc_response r;
    char partial[128];
    int n = snprintf(partial, sizeof(partial), "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAcc",
                     f->port);
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    long long t0 = hc_now_ms();
    assert_int_equal(hc_send(&c, partial, (size_t)n, HX_REQ_MS), 0);
    if (hc_read_response(&c, &r, 15000) != 0 && r.status == 0)
        fail_msg("an incomplete head: no answer within 15 s (header timeout is 10 s)");
    long long took = hc_now_ms() - t0;
    hx_expect_status(&r, 408, "an incomplete head left waiting");
    if (took < 9000)
        fail_msg("an incomplete head got 408 after %lld ms, before the 10 s header timeout", took);
    hc_response_free(&r);
    /* Then the server closes the connection. */
    hc_response more;
    if (hc_read_head(&c, &more, HX_REQ_MS) == 0 || !c.eof)
        fail_msg("after the 408 the connection was not closed");
    hc_response_free(&more);
    hc_close(&c);
    assert_session_alive(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unsupported_methods_get_405_with_allow_header),
        cmocka_unit_test(test_post_not_accepting_both_types_gets_406),
        cmocka_unit_test(test_get_not_accepting_event_stream_gets_406),
        cmocka_unit_test(test_post_with_wrong_content_type_gets_415),
        cmocka_unit_test(test_content_length_over_limit_gets_413_before_the_body),
        cmocka_unit_test(test_chunked_body_over_limit_gets_413),
        cmocka_unit_test(test_unparseable_json_gets_400_parse_error_naming_line_and_column),
        cmocka_unit_test(test_invalid_message_gets_400_invalid_request),
        cmocka_unit_test(test_params_not_an_object_gets_400_invalid_params),
        cmocka_unit_test(test_empty_batch_gets_400_invalid_request),
        cmocka_unit_test(test_batch_over_100_gets_400_and_100_is_served),
        cmocka_unit_test(test_batch_on_2025_11_25_session_gets_complete_invalid_request_answer),
        cmocka_unit_test(test_initialize_inside_batch_gets_400),
        cmocka_unit_test(test_request_without_session_id_gets_400),
        cmocka_unit_test(test_unknown_session_id_gets_404_session_not_found),
        cmocka_unit_test(test_unsupported_protocol_version_header_gets_400),
        cmocka_unit_test(test_non_loopback_host_gets_403),
        cmocka_unit_test(test_foreign_origin_gets_403),
        cmocka_unit_test(test_loopback_origin_is_accepted),
        cmocka_unit_test(test_header_values_that_are_not_utf8_still_get_their_error_body),
        cmocka_unit_test(test_headers_over_16k_get_431),
        cmocka_unit_test(test_incomplete_head_gets_408_after_header_timeout_and_close),
    };
    int failed = cmocka_run_group_tests_name("http_bad_requests", tests, setup, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
