/* SPDX-License-Identifier: MIT */
/*
 * The `mcp` command-line client against a raw scripted HTTP server (raw_server.h)
 * over real 127.0.0.1 sockets, for what a well-behaved server never does:
 *
 * - revision 2026-07-28 has no resumption: a request whose connection fails before
 *   its answer (the server killed and restarted mid-request) is sent once more when
 *   it is safe to repeat (tools/list, a tool annotated idempotentHint), never for
 *   another tool, and not at all with --no-retry-safe;
 * - a server/discover probe answered by a 2025-era server with an SSE stream that
 *   ends after its priming event: a legacy server, initialized;
 * - an Mcp-Session-Id with a CR in it is refused, never sent back;
 * - a server that answers every resumption with a new event id alone and
 *   `retry: 0`: the client gives up after its retry limit, never faster than the
 *   retry floor.
 *
 * Each run of mcp is a real process bounded by a deadline (cli_run.c).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "client_watch.h"
#include "raw_server.h"

/* What the scripted server plays. */
typedef struct script {
    int modern;        /* answers server/discover as a 2026-07-28 server */
    int cut_first;     /* the first tools/list and the first call of each tool are cut */
    int priming_probe; /* server/discover: an SSE stream, a priming event, the end */
    int bad_session;   /* initialize gives a session id with a CR in it */
    int hostile_retry; /* a call's stream and every resumption: a new id alone, retry: 0 */
    pthread_mutex_t mu;
    json_t *seen; /* {"<method or tool>": count} */
} script;

static script sc;

static int seen_once_more(const char *what)
{
    pthread_mutex_lock(&sc.mu);
    json_int_t n = json_integer_value(json_object_get(sc.seen, what)) + 1;
    json_object_set_new(sc.seen, what, json_integer(n));
    pthread_mutex_unlock(&sc.mu);
    return (int)n;
}

static int seen(const char *what)
{
    pthread_mutex_lock(&sc.mu);
    int n = (int)json_integer_value(json_object_get(sc.seen, what));
    pthread_mutex_unlock(&sc.mu);
    return n;
}

/* A JSON answer to req whose result is the JSON text result. */
static void answer(rs_conn *c, const rs_request *req, const char *result)
{
    json_t *r = json_loads(result, 0, NULL);
    json_t *a = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
                          json_object_get(req->msg, "id"), "result", r);
    char *text = json_dumps(a, JSON_COMPACT);
    rs_respond(c, 200, "Content-Type: application/json\r\n", text);
    free(text);
    json_decref(a);
}

#define TOOLS                                                                                      \
    "{\"tools\":[{\"name\":\"idem\",\"inputSchema\":{\"type\":\"object\"},"                        \
    "\"annotations\":{\"idempotentHint\":true}},"                                                  \
    "{\"name\":\"plain\",\"inputSchema\":{\"type\":\"object\"}},"                                  \
    "{\"name\":\"stall\",\"inputSchema\":{\"type\":\"object\"}}]}"

static void handler(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    const char *m = rs_rpc_method(req);
    if (m != NULL && strcmp(m, "server/discover") == 0) {
        if (sc.modern) {
            answer(c, req,
                   "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
                   "\"serverInfo\":{\"name\":\"raw\",\"version\":\"1\"}}");
        } else if (sc.priming_probe) {
            /* A 2025-era server with resumability: a priming event, then the end. */
            rs_sse_head(c, NULL);
            rs_sse_event(c, "d1", 1000, "");
            if (sc.priming_probe == 2)
                rs_close_after(c); /* cut rather than ended */
            else
                rs_sse_end(c);
        } else {
            rs_respond(c, 400, NULL, "no session");
        }
        return;
    }
    if (m != NULL && strcmp(m, "initialize") == 0 && sc.bad_session) {
        rs_mcp_initialize(c, req, "abc\rX-Injected: yes");
        return;
    }
    if (strcmp(req->method, "GET") == 0 && rs_header(req, "last-event-id") != NULL &&
        sc.hostile_retry) {
        char id[32];
        snprintf(id, sizeof(id), "g%d", seen_once_more("resume"));
        rs_sse_head(c, NULL);
        rs_sse_event(c, id, 0, NULL);
        rs_sse_end(c);
        return;
    }
    if (rs_mcp_basic(c, req))
        return;
    if (m != NULL && strcmp(m, "tools/list") == 0) {
        if (seen_once_more("tools/list") == 1 && sc.cut_first) {
            /* The server dies as it answers. (A connection cut before any byte of the
             * answer is tried again by libcurl itself when it was a reused one.) */
            rs_write(c, "HTTP/1.1 200 OK\r\n", 17);
            rs_reset_after(c);
            return;
        }
        answer(c, req, TOOLS);
        return;
    }
    const char *tool =
        json_string_value(json_object_get(json_object_get(req->msg, "params"), "name"));
    if (m != NULL && strcmp(m, "tools/call") == 0 && tool != NULL) {
        int n = seen_once_more(tool);
        if (strcmp(tool, "stall") == 0 && sc.hostile_retry) {
            rs_sse_head(c, NULL);
            rs_sse_event(c, "p1", 0, NULL);
            rs_sse_end(c);
            return;
        }
        if (n == 1 && sc.cut_first) {
            /* The stream began, then the server died. */
            rs_sse_head(c, NULL);
            rs_pause(c, 50);
            rs_reset_after(c);
            return;
        }
        char *text = rs_call_result(req, "done");
        rs_respond(c, 200, "Content-Type: application/json\r\n", text);
        free(text);
        return;
    }
    rs_respond(c, 400, NULL, "unexpected");
}

static rs_server *srv;
static char url[64];

static int setup(void **state)
{
    (void)state;
    json_decref(sc.seen);
    sc = (script){.seen = json_object()};
    pthread_mutex_init(&sc.mu, NULL);
    if (rs_start(&srv, handler, NULL) != 0)
        return -1;
    rs_url(srv, url, sizeof(url));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rs_stop(srv);
    srv = NULL;
    json_decref(sc.seen);
    sc.seen = NULL;
    pthread_mutex_destroy(&sc.mu);
    return 0;
}

/* Runs mcp with args and returns how long it took. */
static long long run(cr_run *r, const char *const *args)
{
    long long t0 = hc_now_ms();
    cr_run_mcp(r, args);
    long long took = hc_now_ms() - t0;
    printf("# mcp ... %s %s: exit %d in %lld ms; stderr: %s", args[2], args[3] ? args[3] : "",
           r->status, took, r->err[0] ? r->err : "(empty)\n");
    return took;
}

static void test_safe_requests_are_sent_once_more_after_a_failed_connection(void **state)
{
    (void)state;
    sc.modern = 1;
    sc.cut_first = 1;
    cr_run r;
    /* tools/list cut before its answer: sent once more, on a new connection. */
    const char *list[] = {url, "tools", "list", NULL};
    run(&r, list);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "idem");
    cr_expect_contains("stderr", r.err, "sent once more");
    cr_run_free(&r);
    assert_int_equal(seen("tools/list"), 2);

    /* tools/call of an idempotentHint tool whose stream breaks: sent once more. */
    const char *idem[] = {url, "tools", "call", "idem", NULL};
    run(&r, idem);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "done");
    cr_expect_contains("stderr", r.err, "sent once more");
    cr_run_free(&r);
    assert_int_equal(seen("idem"), 2);
}

static void test_unsafe_call_is_not_sent_again_and_says_why(void **state)
{
    (void)state;
    sc.modern = 1;
    sc.cut_first = 1;
    cr_run r;
    const char *plain[] = {url, "tools", "call", "plain", NULL};
    run(&r, plain);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "not safe to repeat");
    cr_run_free(&r);
    assert_int_equal(seen("plain"), 1);
}

static void test_no_retry_safe_turns_it_off(void **state)
{
    (void)state;
    sc.modern = 1;
    sc.cut_first = 1;
    cr_run r;
    const char *list[] = {"--no-retry-safe", url, "tools", "list", NULL};
    run(&r, list);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "repeating safe requests is off");
    cr_run_free(&r);
    assert_int_equal(seen("tools/list"), 1);
}

static void test_probe_answered_by_a_priming_event_alone_is_a_legacy_server(void **state)
{
    (void)state;
    cr_run r;
    const char *list[] = {url, "tools", "list", NULL};
    for (int how = 1; how <= 2; how++) { /* the stream ends, or is cut */
        sc.priming_probe = how;
        run(&r, list);
        cr_expect_status(&r, 0);
        cr_expect_contains("stdout", r.out, "idem");
        cr_run_free(&r);
    }
    assert_int_equal(rs_count(srv, NULL) > 0, 1);
}

static void test_session_id_with_a_cr_is_refused_never_sent(void **state)
{
    (void)state;
    sc.bad_session = 1;
    cr_run r;
    const char *list[] = {url, "tools", "list", NULL};
    run(&r, list);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "visible ASCII");
    cr_run_free(&r);
    for (size_t i = 0; i < rs_count(srv, NULL); i++) {
        const rs_request *q = rs_nth(srv, NULL, i);
        if (rs_header(q, "mcp-session-id") != NULL || rs_header(q, "x-injected") != NULL)
            fail_msg("request %zu (%s %s) carries the session id back", i, q->method,
                     rs_rpc_method(q) ? rs_rpc_method(q) : "");
    }
    assert_int_equal(seen("tools/list"), 0);
}

static void test_new_ids_alone_with_retry_0_are_given_up_at_the_limit(void **state)
{
    (void)state;
    sc.hostile_retry = 1;
    cr_run r;
    const char *call[] = {"--timeout", "15000", url, "tools", "call", "stall", NULL};
    long long took = run(&r, call);
    int resumes = seen("resume");
    printf("# retry: 0 and a new id each time: %d resumptions, given up after %lld ms\n", resumes,
           took);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "gave up resuming");
    cr_run_free(&r);
    /* The default limit, 5 reconnections that brought nothing; each after the floor. */
    assert_int_equal(resumes, 5);
    assert_true(took >= 5 * 100);
    assert_true(took < 10000);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        T(test_safe_requests_are_sent_once_more_after_a_failed_connection),
        T(test_unsafe_call_is_not_sent_again_and_says_why),
        T(test_no_retry_safe_turns_it_off),
        T(test_probe_answered_by_a_priming_event_alone_is_a_legacy_server),
        T(test_session_id_with_a_cr_is_refused_never_sent),
        T(test_new_ids_alone_with_retry_0_are_given_up_at_the_limit),
    };
    return cmocka_run_group_tests_name("mcp_cli_raw", tests, NULL, NULL);
}
