/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28's long-lived and cancelled requests, and the same requests over
 * stdio. subscriptions/listen: a filter of the wrong types is refused, the
 * acknowledgment keeps only what the server has, each change reaches each listener
 * that asked for it once, tagged with its subscription id; closing a listen's stream
 * ends it and leaves no session behind; a drain (SIGTERM) ends open listens with the
 * graceful result. Cancellation: closing a long call's response cancels its handler,
 * and the server serves the next request. stdio: a request with _meta before any
 * initialize is modern, one after it legacy; a listen ends with notifications/cancelled,
 * and with the end of input.
 *
 * HTTP runs against the in-process server of modern_host.h (its sessions and handler
 * runs are counted) and against mcp-everything --http (SIGTERM); stdio against
 * mcp-everything --stdio.
 */
#define _GNU_SOURCE
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

#include "harness.h"
#include "modern_host.h"

#define META_SUB "io.modelcontextprotocol/subscriptionId"

typedef struct stdio_peer stdio_peer;
static void stdio_kill(void);

/* The mcp-everything --http of the test running now, killed by the teardown when the
 * test failed before it could stop it. */
static hc_server *live_server;

static void server_kill(void)
{
    if (live_server != NULL)
        hc_server_free(live_server);
    live_server = NULL;
}

static void server_start(hc_server *srv, const char *const flags[])
{
    server_kill();
    assert_int_equal(hc_server_start(srv, flags, MH_WAIT_MS), 0);
    live_server = srv;
}

static int teardown(void **state)
{
    stdio_kill(); /* a failed test's servers */
    server_kill();
    return mh_group_teardown(state);
}

/* ---- Helpers ---- */

static json_t *listen_request(long long id, const char *filter_json)
{
    json_t *params = json_object();
    if (filter_json != NULL)
        json_object_set_new(params, "notifications", json_loads(filter_json, 0, NULL));
    return mh_request(id, "subscriptions/listen", params, NULL);
}

/* The next message of an open stream, failing the test when none comes in time. */
static json_t *next_event(hc_conn *c, const char *what)
{
    int rc = 0;
    json_t *m = hc_sse_next_json(c, MH_WAIT_MS, &rc);
    if (m == NULL)
        fail_msg("%s: no event within %d ms (%s)", what, MH_WAIT_MS,
                 rc == 0 ? "the stream ended" : "timeout or error");
    return m;
}

/* Opens a listen on c and returns its acknowledged filter (new reference). */
static json_t *open_listen(int port, hc_conn *c, long long id, const char *filter_json)
{
    json_t *req = listen_request(id, filter_json);
    hc_response head;
    if (mh_open(c, port, req, &head) != 0)
        fail_msg("listen %lld: no response head", id);
    json_decref(req);
    const char *ct = hc_header_get(&head, "content-type");
    if (head.status != 200 || ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
        fail_msg("listen %lld: expected 200 text/event-stream, got %d %s", id, head.status,
                 ct ? ct : "");
    hc_response_free(&head);
    json_t *ack = next_event(c, "the acknowledgment");
    const char *method = json_string_value(json_object_get(ack, "method"));
    json_t *params = json_object_get(ack, "params");
    json_t *sub = json_object_get(json_object_get(params, "_meta"), META_SUB);
    if (method == NULL || strcmp(method, "notifications/subscriptions/acknowledged") != 0 ||
        !json_is_integer(sub) || json_integer_value(sub) != id)
        fail_msg("listen %lld: the first message is not its acknowledgment", id);
    json_t *filter = json_incref(json_object_get(params, "notifications"));
    json_decref(ack);
    return filter;
}

/* Asserts the next event on c is method, tagged with the subscription id. */
static void expect_notification(hc_conn *c, const char *method, long long id, const char *what)
{
    json_t *m = next_event(c, what);
    const char *got = json_string_value(json_object_get(m, "method"));
    json_t *sub = json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), META_SUB);
    if (got == NULL || strcmp(got, method) != 0 || !json_is_integer(sub) ||
        json_integer_value(sub) != id) {
        char *s = json_dumps(m, JSON_COMPACT);
        fail_msg("%s: expected %s tagged with subscription %lld, got %s", what, method, id, s);
    }
    json_decref(m);
}

/* ---- Filters ---- */

static void test_listen_filter_of_the_wrong_types_gets_32602(void **state)
{
    mh_host *h = *state;
    static const char *const filters[] = {
        "5",
        "\"tools\"",
        "[]",
        "{\"toolsListChanged\":\"yes\"}",
        "{\"toolsListChanged\":1}",
        "{\"promptsListChanged\":null}",
        "{\"resourcesListChanged\":{}}",
        "{\"resourceSubscriptions\":\"test://fixed\"}",
        "{\"resourceSubscriptions\":{}}",
        "{\"resourceSubscriptions\":[5]}",
        "{\"resourceSubscriptions\":[\"test://fixed\",null]}",
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        json_t *req = mh_request(
            10 + (long long)i, "subscriptions/listen",
            json_pack("{s:o}", "notifications", json_loads(filters[i], JSON_DECODE_ANY, NULL)),
            NULL);
        hc_response r;
        assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
        char what[160];
        snprintf(what, sizeof what, "listen with notifications %s", filters[i]);
        json_decref(mh_expect(&r, 200, -32602, 10 + (long long)i, what));
        hc_response_free(&r);
        json_decref(req);
    }
    /* 1001 URIs are too many; 1000 are not. */
    for (int n = 1001; n >= 1000; n--) {
        json_t *uris = json_array();
        for (int i = 0; i < n; i++) {
            char uri[64];
            snprintf(uri, sizeof uri, "test://items/%d", i);
            json_array_append_new(uris, json_string(uri));
        }
        json_t *req = mh_request(
            n, "subscriptions/listen",
            json_pack("{s:{s:o}}", "notifications", "resourceSubscriptions", uris), NULL);
        if (n == 1001) {
            hc_response r;
            assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
            json_decref(mh_expect(&r, 200, -32602, n, "a listen of 1001 URIs"));
            hc_response_free(&r);
        } else {
            hc_conn c;
            hc_response head;
            assert_int_equal(mh_open(&c, h->port, req, &head), 0);
            assert_int_equal(head.status, 200);
            hc_response_free(&head);
            json_t *ack = next_event(&c, "a listen of 1000 URIs");
            json_t *kept =
                json_object_get(json_object_get(json_object_get(ack, "params"), "notifications"),
                                "resourceSubscriptions");
            assert_int_equal(json_array_size(kept), 1000);
            json_decref(ack);
            hc_close(&c);
        }
        json_decref(req);
    }
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

static void test_acknowledgment_keeps_only_what_the_server_has(void **state)
{
    mh_host *h = *state;
    hc_conn c;
    json_t *ack = open_listen(h->port, &c, 20,
                              "{\"toolsListChanged\":true,\"promptsListChanged\":false,"
                              "\"resourcesListChanged\":true,\"resourceSubscriptions\":["
                              "\"test://fixed\",\"test://items/7\",\"test://nope\","
                              "\"other://x\",\"test://fixed\"]}");
    json_t *want = json_loads("{\"toolsListChanged\":true,\"resourcesListChanged\":true,"
                              "\"resourceSubscriptions\":[\"test://fixed\",\"test://items/7\"]}",
                              0, NULL);
    if (!json_equal(ack, want)) {
        char *s = json_dumps(ack, JSON_COMPACT);
        fail_msg("the acknowledgment should keep what the server has, once: %s", s);
    }
    json_decref(want);
    json_decref(ack);
    hc_close(&c);

    /* A server with tools only omits prompts and resources. */
    mh_host bare;
    mh_opts o = {.tools_only = 1};
    assert_int_equal(mh_start(&bare, &o), 0);
    ack =
        open_listen(bare.port, &c, 21,
                    "{\"toolsListChanged\":true,\"promptsListChanged\":true,"
                    "\"resourcesListChanged\":true,\"resourceSubscriptions\":[\"test://fixed\"]}");
    /* Nor resourceSubscriptions: a server without resources offers no subscribe
     * (subscriptions.mdx: types the server does not support are omitted). */
    want = json_loads("{\"toolsListChanged\":true}", 0, NULL);
    if (!json_equal(ack, want)) {
        char *s = json_dumps(ack, JSON_COMPACT);
        fail_msg("a server with tools only: the acknowledgment should name tools alone: %s", s);
    }
    json_decref(want);
    json_decref(ack);
    hc_close(&c);
    assert_int_equal(mh_stop(&bare, 1000), 0);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

/* ---- Notifications ---- */

static json_t *added_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return mcp_text_result("added");
}

static void test_each_change_reaches_each_listener_that_asked_once(void **state)
{
    mh_host *h = *state;
    hc_conn a, b;
    json_decref(
        open_listen(h->port, &a, 31,
                    "{\"toolsListChanged\":true,\"resourceSubscriptions\":[\"test://fixed\"]}"));
    json_decref(open_listen(h->port, &b, 32,
                            "{\"toolsListChanged\":true,\"promptsListChanged\":true,"
                            "\"resourceSubscriptions\":[\"test://items/1\"]}"));
    /* A real change of the tool list, and its undoing. */
    assert_int_equal(mcp_server_add_tool(h->srv, "added", "Added later", NULL, added_tool, NULL),
                     MCP_OK);
    expect_notification(&a, "notifications/tools/list_changed", 31, "listener a, a tool added");
    expect_notification(&b, "notifications/tools/list_changed", 32, "listener b, a tool added");
    assert_int_equal(mcp_server_remove_tool(h->srv, "added"), MCP_OK);
    expect_notification(&a, "notifications/tools/list_changed", 31, "listener a, a tool removed");
    expect_notification(&b, "notifications/tools/list_changed", 32, "listener b, a tool removed");
    /* Prompts: only b asked. Then a resource update each: the fence that shows nothing
     * else came before it. */
    assert_int_equal(mcp_server_notify(h->srv, "notifications/prompts/list_changed", NULL), MCP_OK);
    assert_int_equal(mcp_server_notify_resource_updated(h->srv, "test://fixed"), MCP_OK);
    assert_int_equal(mcp_server_notify_resource_updated(h->srv, "test://items/1"), MCP_OK);
    expect_notification(&a, "notifications/resources/updated", 31, "listener a, its resource");
    expect_notification(&b, "notifications/prompts/list_changed", 32, "listener b, prompts");
    expect_notification(&b, "notifications/resources/updated", 32, "listener b, its resource");
    /* Nothing of a request's own (logs) goes to a listener, even one of its level. */
    assert_int_equal(mcp_server_log(h->srv, MCP_LOG_EMERGENCY, NULL, json_string("x")), MCP_OK);
    assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed", NULL), MCP_OK);
    expect_notification(&a, "notifications/tools/list_changed", 31, "listener a after a log");
    hc_close(&a);
    hc_close(&b);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

/* Closing a listen's stream ends the subscription: its session goes, and so does its
 * connection's descriptor. */
static void test_closing_listen_streams_leaves_nothing_behind(void **state)
{
    mh_host *h = *state;
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    int fds = mh_wait_fds(0, 0);
    hc_conn c[8];
    for (int i = 0; i < 8; i++)
        json_decref(open_listen(h->port, &c[i], 40 + i, "{\"toolsListChanged\":true}"));
    /* Each listen is an HTTP session and a protocol session. */
    assert_int_equal(mh_sessions(h), 16);
    for (int i = 0; i < 8; i++) {
        if (i % 2)
            hc_close_reset(&c[i]);
        else
            hc_close(&c[i]);
    }
    size_t n = mh_wait_sessions(h, 0, MH_WAIT_MS);
    if (n != 0)
        fail_msg("closed listens left %zu sessions", n);
    int after = mh_wait_fds(fds, MH_WAIT_MS);
    if (after > fds)
        fail_msg("closed listens left %d file descriptors", after - fds);
    /* And the list change that follows has nobody to go to. */
    assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed", NULL), MCP_OK);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

/* ---- Cancellation ---- */

static void test_closing_a_long_call_cancels_its_handler(void **state)
{
    mh_host *h = *state;
    int cancelled = mh_count(h, &h->cancelled);
    for (int round = 0; round < 2; round++) {
        json_t *req = mh_request(
            50 + round, "tools/call",
            json_pack("{s:s, s:{s:i}}", "name", "sleepy", "arguments", "ms", 30000), NULL);
        hc_conn c;
        assert_int_equal(hc_connect(&c, h->port, MH_WAIT_MS), 0);
        assert_int_equal(mh_send(&c, h->port, req), 0);
        json_decref(req);
        assert_int_equal(mh_wait_count(h, &h->sleeping, 1, MH_WAIT_MS), 0);
        if (round == 0)
            hc_close(&c);
        else
            hc_close_reset(&c);
        if (mh_wait_count(h, &h->cancelled, cancelled + round + 1, MH_WAIT_MS) != 0)
            fail_msg("closing the response (%s) did not cancel the handler within %d ms",
                     round ? "reset" : "FIN", MH_WAIT_MS);
    }
    assert_int_equal(mh_count(h, &h->finished), 0);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    /* The next request is served. */
    hc_response r;
    json_t *req = mh_request(60, "tools/call", json_pack("{s:s}", "name", "count"), NULL);
    assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
    json_decref(mh_expect(&r, 200, 0, 60, "a call after the cancelled ones"));
    hc_response_free(&r);
    json_decref(req);
}

/* mcp-everything with one worker: long_running, cancelled by a closed response, gives
 * its worker back at once, so the next call on that worker is answered. */
static void test_everything_long_running_stops_when_its_response_closes(void **state)
{
    (void)state;
    static const char *const flags[] = {"--workers", "1", NULL};
    static hc_server srv;
    server_start(&srv, flags);
    json_t *req = mh_request(1, "tools/call",
                             json_pack("{s:s, s:{s:i, s:i}}", "name", "long_running", "arguments",
                                       "steps", 300, "delay_ms", 100),
                             NULL);
    json_object_set_new(json_object_get(json_object_get(req, "params"), "_meta"), "progressToken",
                        json_string("p"));
    hc_conn c;
    hc_response head;
    assert_int_equal(mh_open(&c, srv.port, req, &head), 0);
    json_decref(req);
    assert_int_equal(head.status, 200);
    hc_response_free(&head);
    /* Its first progress shows it runs on the one worker. */
    json_t *m = next_event(&c, "long_running's progress");
    assert_string_equal(json_string_value(json_object_get(m, "method")), "notifications/progress");
    json_decref(m);
    hc_close(&c);
    long long t0 = hc_now_ms();
    req = mh_request(2, "tools/call",
                     json_pack("{s:s, s:{s:s, s:i}}", "name", "slow_echo", "arguments", "text",
                               "next", "delay_ms", 0),
                     NULL);
    hc_response r;
    assert_int_equal(mh_post(srv.port, req, NULL, &r), 0);
    json_t *resp = mh_expect(&r, 200, 0, 2, "slow_echo after the cancelled long_running");
    assert_string_equal(mh_text(resp, "slow_echo"), "next");
    printf("the next call was answered %lld ms after the close\n", hc_now_ms() - t0);
    json_decref(resp);
    hc_response_free(&r);
    json_decref(req);
    assert_int_equal(hc_server_stop_check(&srv, MH_WAIT_MS), 0);
    live_server = NULL;
}

/* ---- Drain ---- */

/* SIGTERM: every open listen ends with the graceful result, then the server exits 0. */
static void test_sigterm_ends_open_listens_with_a_complete_result(void **state)
{
    (void)state;
    static const char *const flags[] = {"--drain-ms", "5000", NULL};
    static hc_server srv;
    server_start(&srv, flags);
    hc_conn c[3];
    for (int i = 0; i < 3; i++)
        json_decref(open_listen(srv.port, &c[i], 70 + i, "{\"toolsListChanged\":true}"));
    long long t0 = hc_now_ms();
    assert_int_equal(kill(srv.pid, SIGTERM), 0);
    for (int i = 0; i < 3; i++) {
        json_t *m = next_event(&c[i], "the listen's end");
        json_t *result = json_object_get(m, "result");
        const char *type = json_string_value(json_object_get(result, "resultType"));
        json_t *sub = json_object_get(json_object_get(result, "_meta"), META_SUB);
        if (json_integer_value(json_object_get(m, "id")) != 70 + i || type == NULL ||
            strcmp(type, "complete") != 0 || json_integer_value(sub) != 70 + i) {
            char *s = json_dumps(m, JSON_COMPACT);
            fail_msg("listen %d: expected {resultType: complete, _meta: {subscriptionId}}, got %s",
                     70 + i, s);
        }
        json_decref(m);
        int rc = 1;
        json_t *more = hc_sse_next_json(&c[i], MH_WAIT_MS, &rc);
        if (more != NULL || rc != 0)
            fail_msg("listen %d: the stream should end after its result", 70 + i);
        hc_close(&c[i]);
    }
    int status;
    assert_int_equal(hc_server_wait(&srv, MH_WAIT_MS, &status), 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    long long took = hc_now_ms() - t0;
    printf("the drain took %lld ms with three listens open\n", took);
    if (took >= 5000)
        fail_msg("the drain waited for its deadline (%lld ms): the listens held it", took);
    hc_server_free(&srv);
    live_server = NULL;
}

/* ---- stdio ---- */

struct stdio_peer {
    harness_proc p;
    json_t *notes; /* notifications read while looking for a response */
};

/* The peer of the stdio test running now, outside any test's frame: a test that fails
 * leaves it to the next test's start or the group's teardown, which kill it. */
static stdio_peer peer;
static int peer_live;

static void stdio_kill(void)
{
    if (!peer_live)
        return;
    harness_kill(&peer.p);
    json_decref(peer.notes);
    peer_live = 0;
}

static stdio_peer *stdio_start(void)
{
    char path[4096];
    stdio_kill();
    stdio_peer *s = &peer;
    memset(s, 0, sizeof(*s));
    peer_live = 1;
    assert_int_equal(harness_bin_path("mcp-everything", path, sizeof path), 0);
    const char *argv[] = {path, "--stdio", NULL};
    assert_int_equal(harness_spawn(&s->p, argv), 0);
    s->notes = json_array();
    return s;
}

static void stdio_send(stdio_peer *s, json_t *msg)
{
    assert_int_equal(harness_send_json(&s->p, msg, MH_WAIT_MS), 0);
    json_decref(msg);
}

/* The response to id: notifications before it are kept in s->notes. */
static json_t *stdio_response(stdio_peer *s, long long id)
{
    for (;;) {
        char *bad = NULL;
        json_t *m = harness_read_json(&s->p, MH_WAIT_MS, &bad);
        if (m == NULL)
            fail_msg("stdio: no response %lld within %d ms (%s)", id, MH_WAIT_MS,
                     bad ? bad : "nothing");
        if (json_object_get(m, "method") != NULL && json_object_get(m, "id") == NULL) {
            json_array_append_new(s->notes, m);
            continue;
        }
        if (json_integer_value(json_object_get(m, "id")) != id) {
            char *t = json_dumps(m, JSON_COMPACT);
            fail_msg("stdio: expected the response %lld, got %s", id, t);
        }
        return m;
    }
}

/* Sends req (stolen) and expects code (0: a result); returns the response. */
static json_t *stdio_call(stdio_peer *s, json_t *req, int code, const char *what)
{
    long long id = json_integer_value(json_object_get(req, "id"));
    stdio_send(s, req);
    json_t *resp = stdio_response(s, id);
    json_t *err = json_object_get(resp, "error");
    int got = err ? (int)json_integer_value(json_object_get(err, "code")) : 0;
    if (got != code || (code == 0 && !json_is_object(json_object_get(resp, "result")))) {
        char *t = json_dumps(resp, JSON_COMPACT);
        fail_msg("stdio, %s: expected %s %d, got %s", what, code ? "the error" : "a result", code,
                 t);
    }
    return resp;
}

static void stdio_stop(stdio_peer *s)
{
    harness_close_stdin(&s->p);
    int status = 0;
    if (harness_wait_exit(&s->p, MH_WAIT_MS, &status) != 0)
        fail_msg("stdio: the server did not exit within %d ms of the end of its input", MH_WAIT_MS);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    stdio_kill();
}

static void test_stdio_meta_before_initialize_is_modern_and_after_it_legacy(void **state)
{
    (void)state;
    stdio_peer *s = stdio_start();
    json_t *resp = stdio_call(s, mh_request(1, "server/discover", NULL, NULL), 0, "discover");
    assert_non_null(json_object_get(json_object_get(resp, "result"), "supportedVersions"));
    json_decref(resp);
    resp = stdio_call(
        s, mh_request(2, "tools/call", json_pack("{s:s}", "name", "test_simple_text"), NULL), 0,
        "a modern tools/call");
    const char *type =
        json_string_value(json_object_get(json_object_get(resp, "result"), "resultType"));
    assert_string_equal(type ? type : "(none)", "complete");
    json_decref(resp);
    /* Bad _meta, an unsupported version, and removed methods, as over HTTP. */
    static const struct {
        const char *meta;
        int code;
    } bad[] = {
        {"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}", -32602},
        /* Malformed, whatever the version names: -32602 before -32022. */
        {"{\"io.modelcontextprotocol/protocolVersion\":42,"
         "\"io.modelcontextprotocol/clientCapabilities\":{}}",
         -32602},
        {"{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\"}", -32602},

        {"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
         "\"io.modelcontextprotocol/clientCapabilities\":[]}",
         -32602},
        {"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
         "\"io.modelcontextprotocol/clientCapabilities\":{},"
         "\"io.modelcontextprotocol/clientInfo\":1}",
         -32602},
        {"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
         "\"io.modelcontextprotocol/clientCapabilities\":{},"
         "\"io.modelcontextprotocol/logLevel\":\"loud\"}",
         -32602},
        {"{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\","
         "\"io.modelcontextprotocol/clientCapabilities\":{}}",
         -32022},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *params = json_pack("{s:o}", "_meta", json_loads(bad[i].meta, 0, NULL));
        json_decref(stdio_call(s, mh_request(10 + (long long)i, "tools/list", params, NULL),
                               bad[i].code, bad[i].meta));
    }
    static const char *const removed[] = {"ping", "logging/setLevel", "resources/subscribe",
                                          "no/such"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
        json_decref(stdio_call(s, mh_request(20 + (long long)i, removed[i], NULL, NULL), -32601,
                               removed[i]));
    /* A Multi Round-Trip Request over stdio: the answer comes in the retry. */
    resp =
        stdio_call(s,
                   mh_request(30, "tools/call",
                              json_pack("{s:s}", "name", "test_input_required_result_elicitation"),
                              "{\"elicitation\":{}}"),
                   0, "an MRTR first round");
    json_t *result = json_object_get(resp, "result");
    const char *token = json_string_value(json_object_get(result, "requestState"));
    assert_non_null(token);
    json_t *retry = mh_request(31, "tools/call",
                               json_pack("{s:s, s:s, s:{s:{s:s, s:{s:s}}}}", "name",
                                         "test_input_required_result_elicitation", "requestState",
                                         token, "inputResponses", "user_name", "action", "accept",
                                         "content", "name", "Ada"),
                               "{\"elicitation\":{}}");
    json_decref(resp);
    resp = stdio_call(s, retry, 0, "the MRTR retry");
    const char *text = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(resp, "result"), "content"), 0), "text"));
    assert_string_equal(text ? text : "(none)", "Hello, Ada!");
    json_decref(resp);
    /* A request without _meta before initialize is the legacy era's. */
    json_decref(stdio_call(
        s, json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 40, "method", "tools/list"), -32600,
        "tools/list without _meta before initialize"));
    /* After initialize, _meta no longer makes a request modern. */
    json_decref(
        stdio_call(s,
                   json_pack("{s:s, s:i, s:s, s:{s:s, s:{}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id",
                             41, "method", "initialize", "params", "protocolVersion", "2025-11-25",
                             "capabilities", "clientInfo", "name", "t", "version", "1"),
                   0, "initialize"));
    stdio_send(s, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized"));
    resp = stdio_call(
        s, mh_request(42, "tools/call", json_pack("{s:s}", "name", "test_simple_text"), NULL), 0,
        "tools/call with _meta after initialize");
    if (json_object_get(json_object_get(resp, "result"), "resultType") != NULL)
        fail_msg("after initialize, a request with _meta was served as a modern one");
    json_decref(resp);
    json_decref(stdio_call(s, mh_request(43, "ping", NULL, NULL), 0, "ping after initialize"));
    stdio_stop(s);
}

/* The notifications/tools/list_changed kept in s->notes, for subscription id (-1: any). */
static int tool_changes(stdio_peer *s, long long id)
{
    int n = 0;
    size_t i;
    json_t *m;
    json_array_foreach(s->notes, i, m)
    {
        const char *method = json_string_value(json_object_get(m, "method"));
        json_t *sub =
            json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), META_SUB);
        if (method != NULL && strcmp(method, "notifications/tools/list_changed") == 0 &&
            (id < 0 || json_integer_value(sub) == id))
            n++;
    }
    return n;
}

static void test_stdio_listen_ends_with_notifications_cancelled(void **state)
{
    (void)state;
    stdio_peer *s = stdio_start();
    stdio_send(s, listen_request(1, "{\"toolsListChanged\":true}"));
    stdio_send(s, listen_request(2, "{\"toolsListChanged\":true}"));
    /* A trigger's broadcast is queued before its answer, so it precedes it. */
    json_decref(stdio_call(
        s,
        mh_request(3, "tools/call", json_pack("{s:s}", "name", "test_trigger_tool_change"), NULL),
        0, "the first trigger"));
    assert_int_equal(tool_changes(s, 1), 1);
    assert_int_equal(tool_changes(s, 2), 1);
    stdio_send(s, json_pack("{s:s, s:s, s:{s:i}}", "jsonrpc", "2.0", "method",
                            "notifications/cancelled", "params", "requestId", 1));
    json_decref(stdio_call(
        s,
        mh_request(4, "tools/call", json_pack("{s:s}", "name", "test_trigger_tool_change"), NULL),
        0, "the second trigger"));
    assert_int_equal(tool_changes(s, 1), 1);
    assert_int_equal(tool_changes(s, 2), 2);
    /* Nothing answers a cancelled listen: no response 1 came. */
    stdio_send(s, json_pack("{s:s, s:s, s:{s:i}}", "jsonrpc", "2.0", "method",
                            "notifications/cancelled", "params", "requestId", 2));
    json_decref(stdio_call(s, mh_request(5, "server/discover", NULL, NULL), 0, "discover"));
    stdio_stop(s);
}

/* A listen still open when the input ends, or at SIGTERM, does not keep the server
 * alive: it ends (with its graceful result) and the server exits at once. */
static void test_stdio_end_of_input_ends_open_listens(void **state)
{
    (void)state;
    stdio_peer *s = stdio_start();
    stdio_send(s, listen_request(1, "{\"toolsListChanged\":true}"));
    json_decref(stdio_call(s, mh_request(2, "server/discover", NULL, NULL), 0, "discover"));
    harness_close_stdin(&s->p);
    json_t *resp = stdio_response(s, 1);
    const char *type =
        json_string_value(json_object_get(json_object_get(resp, "result"), "resultType"));
    assert_string_equal(type ? type : "(none)", "complete");
    json_decref(resp);
    stdio_stop(s);

    /* SIGTERM does not wait for them either (its drain has 10 s). */
    s = stdio_start();
    stdio_send(s, listen_request(1, "{\"toolsListChanged\":true}"));
    json_decref(stdio_call(s, mh_request(2, "server/discover", NULL, NULL), 0, "discover"));
    long long t0 = hc_now_ms();
    assert_int_equal(kill(s->p.pid, SIGTERM), 0);
    resp = stdio_response(s, 1);
    json_decref(resp);
    stdio_stop(s);
    long long took = hc_now_ms() - t0;
    if (took > 2000)
        fail_msg("SIGTERM with a listen open took %lld ms to end the server", took);
}

/* One connection may hold 64 subscriptions; more are refused. */
static void test_stdio_listens_per_connection_are_bounded(void **state)
{
    (void)state;
    stdio_peer *s = stdio_start();
    for (int i = 0; i < 64; i++)
        stdio_send(s, listen_request(100 + i, "{\"toolsListChanged\":true}"));
    json_decref(stdio_call(s, listen_request(200, "{\"toolsListChanged\":true}"), -32600,
                           "the 65th listen"));
    for (int i = 0; i < 64; i++)
        stdio_send(s, json_pack("{s:s, s:s, s:{s:i}}", "jsonrpc", "2.0", "method",
                                "notifications/cancelled", "params", "requestId", 100 + i));
    /* With those ended there is room again. */
    stdio_send(s, listen_request(201, "{\"toolsListChanged\":true}"));
    json_decref(stdio_call(
        s,
        mh_request(202, "tools/call", json_pack("{s:s}", "name", "test_trigger_tool_change"), NULL),
        0, "a trigger"));
    assert_int_equal(tool_changes(s, 201), 1);
    stdio_send(s, json_pack("{s:s, s:s, s:{s:i}}", "jsonrpc", "2.0", "method",
                            "notifications/cancelled", "params", "requestId", 201));
    stdio_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_filter_of_the_wrong_types_gets_32602),
        cmocka_unit_test(test_acknowledgment_keeps_only_what_the_server_has),
        cmocka_unit_test(test_each_change_reaches_each_listener_that_asked_once),
        cmocka_unit_test(test_closing_listen_streams_leaves_nothing_behind),
        cmocka_unit_test(test_closing_a_long_call_cancels_its_handler),
        cmocka_unit_test(test_everything_long_running_stops_when_its_response_closes),
        cmocka_unit_test(test_sigterm_ends_open_listens_with_a_complete_result),
        cmocka_unit_test(test_stdio_meta_before_initialize_is_modern_and_after_it_legacy),
        cmocka_unit_test(test_stdio_listen_ends_with_notifications_cancelled),
        cmocka_unit_test(test_stdio_end_of_input_ends_open_listens),
        cmocka_unit_test(test_stdio_listens_per_connection_are_bounded),
    };
    return cmocka_run_group_tests_name("modern_listen", tests, mh_group_setup, teardown) ? 1 : 0;
}
