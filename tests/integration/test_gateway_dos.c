/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway against a hostile client, over real loopback sockets, in front
 * of server_gateway_peer (a stdio server of the older revisions):
 *   - questions a client never answers (2026-07-28 calls parked on an
 *     InputRequiredResult) hold no child that others need: with 4, then 40 of them, a
 *     normal client's calls are served (>= 99% of its probes), the children they hold
 *     stay within their budget, and the newest parked call still completes;
 *   - bare initializes (never followed by anything) give their child up to newcomers:
 *     after 120, then 1,000 of them (300 in the sanitizer build) with --max-children 8, a
 *     normal client is served (>= 99%),
 *     and never more than 16 server processes ran (8 live, 8 on their way out);
 *   - an answer of the child over --max-message ends its request with an error, the
 *     id first or last in it;
 *   - requests of a child to a client that never answers them are bounded per session;
 *   - --help names each flag once.
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

/* A probe of the normal client may take this long on a busy machine. */
#define PROBE_MS 15000
#define NPROBES 100

static char peer[4096];

static void start(hc_server *s, const char *const flags[])
{
    const char *cmd[] = {peer, NULL};
    gw_start(s, flags, cmd);
}

/* ---- The normal client ---- */

typedef struct probes {
    int tried, ok;
    long long worst_ms;
    char first_failure[256];
} probes;

static void probe_result(probes *p, int good, long long took, const char *what)
{
    p->tried++;
    p->worst_ms = took > p->worst_ms ? took : p->worst_ms;
    if (good && took <= PROBE_MS)
        p->ok++;
    else if (!p->first_failure[0])
        snprintf(p->first_failure, sizeof(p->first_failure), "%s: %s after %lld ms", what,
                 good ? "answered too late" : "failed", took);
}

/* Whether so many probes failed already that 99% of NPROBES cannot be reached. */
static int hopeless(const probes *p)
{
    return (p->tried - p->ok) * 100 > NPROBES;
}

static void expect_served(const probes *p, const char *attack)
{
    printf("%s: the normal client succeeded %d of %d times (worst %lld ms)\n", attack, p->ok,
           p->tried, p->worst_ms);
    if (p->tried == 0 || p->ok * 100 < NPROBES * 99)
        fail_msg("%s: the normal client succeeded only %d of %d times; first failure: %s", attack,
                 p->ok, p->tried, p->first_failure);
}

/* A 2026-07-28 tools/call of the peer's tool, with the client's capabilities. */
/* The normal client of revision 2026-07-28: a call that does not ask. */
static void modern_probe(int port, probes *p, long long id)
{
    json_t *req = gw_call(id, "hello", NULL, NULL);
    char hdrs[4096];
    char *body = json_dumps(req, JSON_COMPACT);
    hc_response r;
    long long t0 = harness_now_ms();
    int rc = hc_request(port, "POST", "/mcp", mh_headers(req, NULL, hdrs, sizeof hdrs), body, &r,
                        PROBE_MS);
    long long took = harness_now_ms() - t0;
    int good = rc == 0 && r.status == 200 && r.body != NULL &&
               strstr(r.body, "\"text\":\"hello\"") != NULL && strstr(r.body, "\"error\"") == NULL;
    hc_response_free(&r);
    free(body);
    json_decref(req);
    probe_result(p, good, took, "2026-07-28 tools/call");
}

/* The normal client of the older revisions: initialize, a call, DELETE. */
static void session_probe(int port, probes *p)
{
    char session[33];
    long long t0 = harness_now_ms();
    if (hc_mcp_initialize(port, session, PROBE_MS) != 0) {
        probe_result(p, 0, harness_now_ms() - t0, "initialize");
        return;
    }
    char *body = hc_tools_call_body(2, "hello", NULL);
    hc_response r;
    int rc = hc_mcp_post(port, session, NULL, body, &r, PROBE_MS);
    free(body);
    int good = rc == 0 && r.status == 200 && r.body != NULL &&
               strstr(r.body, "\"text\":\"hello\"") != NULL;
    hc_response_free(&r);
    probe_result(p, good, harness_now_ms() - t0, "initialize and tools/call");
    (void)hc_mcp_delete(port, session, PROBE_MS);
}

/* Waits until at most `most` server processes run; fails after the deadline. */
static void await_children_at_most(int port, long long most, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms, v = -1;
    while (harness_now_ms() < deadline) {
        if ((v = gw_metric(port, "mcp_gateway_children")) >= 0 && v <= most)
            return;
        /* The children exit on their own time: /metrics is polled. */
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("%lld server processes still run, expected at most %lld within %d ms", v, most,
             timeout_ms);
}

/* ---- Parked questions ---- */

/* A call whose child asks the client, who never comes back: its requestState. */
static json_t *park(int port, long long id)
{
    hc_response r;
    json_t *req = gw_call(id, "ask", "{\"elicitation\":{}}", NULL);
    assert_int_equal(mh_post(port, req, NULL, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, 200, 0, id, "a call that asks");
    hc_response_free(&r);
    json_t *result = json_object_get(resp, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    json_t *rs = json_incref(json_object_get(result, "requestState"));
    json_t *reqs = json_incref(json_object_get(result, "inputRequests"));
    json_decref(resp);
    json_t *out = json_pack("{s:o, s:o}", "requestState", rs, "inputRequests", reqs);
    assert_non_null(out);
    return out;
}

static void test_parked_questions_leave_children_to_others(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL); /* a pool of 4, questions wait 60 s for their retry */
    long long id = 1000;
    json_t *last = NULL;
    for (int i = 0; i < 4; i++) {
        json_decref(last);
        last = park(s.port, id++);
    }
    probes p = {0};
    for (int i = 0; i < NPROBES && !hopeless(&p); i++)
        modern_probe(s.port, &p, id++);
    expect_served(&p, "4 parked questions");

    /* 36 more, between the probes: 40 in all. */
    probes q = {0};
    for (int i = 0; i < NPROBES && !hopeless(&q); i++) {
        if (i % 3 == 0 && i / 3 < 36) {
            json_decref(last);
            last = park(s.port, id++);
        }
        modern_probe(s.port, &q, id++);
    }
    expect_served(&q, "40 parked questions");
    /* The parked ones hold at most their budget (4 per pool child), beside the pool. */
    await_children_at_most(s.port, 4 + 16, PROBE_MS);

    /* The newest parked call is still there for its client's retry. */
    const char *key =
        json_object_iter_key(json_object_iter(json_object_get(last, "inputRequests")));
    json_t *answer =
        json_pack("{s:{s:s, s:{s:s}}}", key, "action", "accept", "content", "name", "Dora");
    hc_response r;
    json_t *retry = gw_call(id, "ask", "{\"elicitation\":{}}",
                            json_pack("{s:o, s:O}", "inputResponses", answer, "requestState",
                                      json_object_get(last, "requestState")));
    assert_int_equal(mh_post(s.port, retry, NULL, &r), 0);
    json_decref(retry);
    json_t *done = mh_expect(&r, 200, 0, id, "the retry of the newest parked call");
    assert_non_null(strstr(mh_text(done, "the retry"), "Dora"));
    json_decref(done);
    hc_response_free(&r);
    json_decref(last);
    gw_stop(&s);
}

/* ---- Bare initializes ---- */

/* An initialize and nothing after it: 1 when it was answered with a session. */
static int bare_initialize(int port)
{
    char *body = hc_initialize_body(NULL);
    hc_response r;
    int rc = hc_mcp_post(port, NULL, NULL, body, &r, PROBE_MS);
    free(body);
    int ok = rc == 0 && r.status == 200 && hc_header_get(&r, "Mcp-Session-Id") != NULL &&
             r.body != NULL && strstr(r.body, "\"error\"") == NULL;
    hc_response_free(&r);
    return ok;
}

static void test_bare_initializes_give_their_children_up(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--max-children", "8", "--kill-grace-ms", "500", NULL};
    start(&s, flags);
    /* A 2026-07-28 call first: the pool's child counts against --max-children too. */
    probes warm = {0};
    modern_probe(s.port, &warm, 1);
    assert_int_equal(warm.ok, 1);
    /* 1,000 (300 in the sanitizer build, where each child costs about a quarter of a second
     * of a busy machine: 1,000 took 243 s of the test's 360). */
    const int bare = UNDER_ASAN ? 300 : 1000;
    int answered = 0;
    long long most = 0, t0 = harness_now_ms();
    for (int i = 0; i < bare; i++) {
        answered += bare_initialize(s.port);
        if (i % 50 == 49 || i == 119) {
            long long n = gw_metric(s.port, "mcp_gateway_children");
            most = n > most ? n : most;
        }
        if (i == 119) {
            /* Fifteen times the pool: every child has been taken by a bare initialize. */
            probes early = {0};
            for (int k = 0; k < NPROBES && !hopeless(&early); k++)
                session_probe(s.port, &early);
            expect_served(&early, "120 bare initializes");
        }
    }
    printf("%d bare initializes: %d answered in %lld ms, at most %lld server processes seen\n",
           bare, answered, harness_now_ms() - t0, most);
    if (most > 16)
        fail_msg("%lld server processes ran at once with --max-children 8", most);
    probes p = {0};
    for (int i = 0; i < NPROBES && !hopeless(&p); i++)
        session_probe(s.port, &p);
    char what[64];
    snprintf(what, sizeof what, "%d bare initializes", bare);
    expect_served(&p, what);
    gw_stop(&s);
}

/* ---- An answer over --max-message ---- */

static void expect_too_large(int port, const char *session, const char *tool)
{
    char *body = hc_tools_call_body(5, tool, NULL);
    hc_response r;
    assert_int_equal(hc_mcp_post(port, session, NULL, body, &r, HX_REQ_MS), 0);
    free(body);
    assert_int_equal(r.status, 200);
    json_t *msgs = hc_messages(&r);
    assert_non_null(msgs);
    json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
    json_t *err = json_object_get(last, "error");
    if (err == NULL)
        fail_msg("%s: no error, but %s", tool, r.body);
    assert_int_equal(json_integer_value(json_object_get(err, "code")), -32603);
    assert_non_null(strstr(json_string_value(json_object_get(err, "message")), "over the"));
    assert_int_equal(json_integer_value(json_object_get(last, "id")), 5);
    json_decref(msgs);
    hc_response_free(&r);
}

static void test_answer_over_max_message_ends_its_request(void **state)
{
    (void)state;
    hc_server s;
    static const char *const flags[] = {"--max-message", "16384", NULL};
    start(&s, flags);
    char session[33];
    assert_int_equal(hc_mcp_initialize(s.port, session, HX_REQ_MS), 0);
    /* A notification over the limit, the child's one call in flight: the call is not
     * taken for what it answers, and completes. */
    char *note = hc_tools_call_body(8, "big_note", NULL);
    hc_response nr;
    assert_int_equal(hc_mcp_post(s.port, session, NULL, note, &nr, HX_REQ_MS), 0);
    free(note);
    if (nr.body == NULL || strstr(nr.body, "\"text\":\"done\"") == NULL)
        fail_msg("a call whose child sent a notification over --max-message: expected its "
                 "answer \"done\", got %s",
                 nr.body ? nr.body : "nothing");
    hc_response_free(&nr);
    expect_too_large(s.port, session, "big");
    expect_too_large(s.port, session, "big_id_last");
    /* With another call in flight, the answer's id names it: in its first bytes, or
     * after its result (read as the line went by). */
    hc_conn hang;
    char hdrs[1024];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", session);
    char *body = hc_tools_call_body(9, "hang", NULL);
    assert_int_equal(hc_connect(&hang, s.port, HX_REQ_MS), 0);
    assert_int_equal(hc_send_request(&hang, s.port, "POST", "/mcp", hdrs, body, HX_REQ_MS), 0);
    free(body);
    expect_too_large(s.port, session, "big");
    expect_too_large(s.port, session, "big_id_last");
    hc_close(&hang);
    /* The session goes on. */
    body = hc_tools_call_body(6, "hello", NULL);
    hc_response r;
    assert_int_equal(hc_mcp_post(s.port, session, NULL, body, &r, HX_REQ_MS), 0);
    free(body);
    assert_non_null(strstr(r.body, "\"text\":\"hello\""));
    hc_response_free(&r);
    /* And so does a 2026-07-28 call. */
    json_t *req = gw_call(7, "big", NULL, NULL);
    assert_int_equal(mh_post(s.port, req, NULL, &r), 0);
    json_decref(req);
    json_decref(mh_expect(&r, 200, -32603, 7, "a 2026-07-28 call answered too large"));
    hc_response_free(&r);
    assert_int_equal(hc_mcp_delete(s.port, session, HX_REQ_MS), 200); /* and its hanging call */
    gw_stop(&s);
}

/* ---- Requests of a child to a client ---- */

static void test_child_requests_to_a_client_are_bounded(void **state)
{
    (void)state;
    hc_server s;
    start(&s, NULL);
    char session[33];
    assert_int_equal(hc_mcp_initialize(s.port, session, HX_REQ_MS), 0);
    /* 1,124 roots/list requests the client never answers: 1,024 reach it. */
    char *body = hc_tools_call_body(2, "flood", NULL);
    hc_response r;
    assert_int_equal(hc_mcp_post(s.port, session, NULL, body, &r, HX_REQ_MS), 0);
    free(body);
    json_t *msgs = hc_messages(&r);
    assert_non_null(msgs);
    size_t i, requests = 0;
    json_t *m;
    json_array_foreach(msgs, i, m) requests += json_object_get(m, "method") != NULL;
    json_decref(msgs);
    hc_response_free(&r);
    printf("the client got %zu of the child's 1124 requests\n", requests);
    assert_int_equal(requests, 1024);
    /* The child got an error for each of the other 100, before this call. */
    body = hc_tools_call_body(3, "flood_count", NULL);
    assert_int_equal(hc_mcp_post(s.port, session, NULL, body, &r, HX_REQ_MS), 0);
    free(body);
    msgs = hc_messages(&r);
    assert_string_equal(hx_result_text(json_array_get(msgs, json_array_size(msgs) - 1), "count"),
                        "100");
    json_decref(msgs);
    hc_response_free(&r);
    gw_stop(&s);
}

/* ---- --help ---- */

static void test_help_names_each_flag_once(void **state)
{
    (void)state;
    char gw[4096], cmd[4200];
    assert_int_equal(harness_bin_path("mcp-gateway", gw, sizeof(gw)), 0);
    snprintf(cmd, sizeof(cmd), "'%s' --help", gw);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char line[512];
    int queued = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        queued += strstr(line, "--max-queued BYTES  what the client") != NULL;
    assert_int_equal(pclose(f), 0);
    assert_int_equal(queued, 1);
}

int main(void)
{
    if (harness_bin_path("server_gateway_peer", peer, sizeof(peer)) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parked_questions_leave_children_to_others),
        cmocka_unit_test(test_bare_initializes_give_their_children_up),
        cmocka_unit_test(test_answer_over_max_message_ends_its_request),
        cmocka_unit_test(test_child_requests_to_a_client_are_bounded),
        cmocka_unit_test(test_help_names_each_flag_once),
    };
    return cmocka_run_group_tests_name("gateway_dos", tests, NULL, NULL);
}
