/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway on several nodes sharing a real redis-server, behind a real HAProxy
 * that sends every request to the next node (cluster_host.h): a gateway session
 * lives on the node whose child serves it, and a request that reaches another node
 * is relayed there, its response streamed back.
 *
 *   - every request of a session is answered whatever node it reaches: calls with
 *     their notifications each once and in order, a stream closed by SEP-1699
 *     polling resumed through the balancer, and DELETE, after which every node
 *     answers 404; one child serves the session, on one node;
 *   - a client that names a node itself (Mcp-Cluster-Node) is never relayed, and
 *     gets 404 where the session is not;
 *   - an HTTP+SSE session's POSTs reach its stream from any node, and once the
 *     stream is gone every node answers 404 (forgotten on disconnect);
 *   - a node that stops answering (SIGSTOP) has the streams relayed from it cut once
 *     its heartbeat lapses, and serves again once it goes on;
 *   - a node that is killed takes its sessions with it: the other nodes answer 503
 *     while its heartbeat lives, then 404, never anything else and never late; new
 *     sessions are served by the nodes left;
 *   - revision 2026-07-28: a retry that reaches another node than the one whose
 *     child waits for it is relayed there and completes (the nodes share the
 *     requestState key), and once that node is gone, it gets -32602; a server that
 *     speaks the revision itself, sharing the key, serves a retry on any node.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster_host.h"
#include "gateway_host.h"
#include "harness.h"
#include "http_expect.h"
#include "modern_host.h"
#include "resume_check.h"

/* The deadline of one request or one event. */
#define STEP_MS 5000
/* How long a killed node's sessions may take to be known gone everywhere: its
 * heartbeat lives three periods of 1 s. */
#define GONE_MS 10000

static char everything[4096], peer[4096];
static char key_path[64];
static int teardown_failures;

static int start(void **state, const char *const args[])
{
    ch_cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    if (ch_start_program(c, "mcp-gateway", 3, CH_REDIS, args) != 0) {
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

/* Gateways in front of mcp-everything, whose streams close after 100 ms (SEP-1699). */
static int setup_everything(void **state)
{
    const char *const args[] = {"--log-level", "warning",  "--poll-ms", "100",
                                "--",          everything, "--stdio",   NULL};
    return start(state, args);
}

/* Gateways sharing the requestState key in front of mcp-everything, which speaks
 * revision 2026-07-28 itself (requests pass through) and shares the key too. */
static int setup_everything_keyed(void **state)
{
    const char *const args[] = {"--log-level", "warning", "--state-key-file", key_path, "--",
                                everything,    "--stdio", "--state-key-file", key_path, NULL};
    return start(state, args);
}

/* Gateways sharing the requestState key, in front of the peer that asks its client. */
static int setup_peer(void **state)
{
    const char *const args[] = {"--log-level", "warning", "--state-key-file", key_path, "--",
                                peer,          NULL};
    return start(state, args);
}

static int teardown(void **state)
{
    ch_cluster *c = *state;
    if (c == NULL)
        return 0;
    if (ch_stop(c) != 0)
        teardown_failures++;
    free(c);
    *state = NULL;
    return 0;
}

/* The node whose gateway holds the one session there is, failing unless exactly one
 * node holds one (and one child serves it). */
static int holder(ch_cluster *c)
{
    int found = -1;
    for (int i = 0; i < c->n; i++) {
        long long sessions = gw_metric(ch_node_port(c, i), "mcp_gateway_sessions");
        long long children = gw_metric(ch_node_port(c, i), "mcp_gateway_children");
        if (sessions < 0 || children < 0)
            fail_msg("node%d: no /metrics", i);
        if (sessions != children)
            fail_msg("node%d: %lld sessions, %lld children", i, sessions, children);
        if (sessions > 1 || (sessions == 1 && found >= 0))
            fail_msg("a second session on node%d: one client made one", i);
        if (sessions == 1)
            found = i;
    }
    if (found < 0)
        fail_msg("no node holds the session");
    return found;
}

/* A tools/call of "notify" through port: its n notifications each once and in order,
 * then its result. Returns the node that answered (X-Mcp-Node), -1 without one. */
static int notify_call(int port, const char *session, long long id, int n)
{
    char args[48];
    snprintf(args, sizeof(args), "{\"count\":%d}", n);
    char *body = rc_call_body(id, "notify", args, NULL);
    hc_conn conn;
    int status = hc_mcp_post_open(&conn, port, session, body, 0, STEP_MS);
    free(body);
    if (status != 200)
        fail_msg("call %lld: HTTP %d", id, status);
    const char *via = hc_header_get(&conn.head, "x-mcp-node");
    int node = via != NULL ? ch_node_index(via) : -1;
    rc_call call;
    rc_call_init(&call, id, n);
    int rc = rc_call_read(&conn, &call, 0, STEP_MS);
    if (rc != 1)
        fail_msg("call %lld: %s after %lld of %d notifications (%s)", id,
                 rc == -1 ? "timed out" : "ended", call.next - 1, n, call.err);
    char want[32];
    snprintf(want, sizeof(want), "sent %d", n);
    assert_string_equal(rc_result_text(call.result), want);
    rc_call_free(&call);
    hc_close(&conn);
    return node;
}

/* POSTs tools/list to port for session: the HTTP status. */
static int list_status(int port, const char *session, const char *extra)
{
    hc_response r;
    memset(&r, 0, sizeof(r));
    int rc = hc_mcp_post(port, session, extra,
                         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}", &r, STEP_MS);
    int status = rc == 0 ? r.status : -1;
    hc_response_free(&r);
    return status;
}

static void test_every_request_of_a_session_is_served_whatever_node_it_reaches(void **state)
{
    ch_cluster *c = *state;
    int lb = ch_lb_port(c);
    char session[33];
    assert_int_equal(hc_mcp_initialize(lb, session, STEP_MS), 0);
    int h = holder(c);

    /* Calls through the balancer, each on a connection of its own: every node gets
     * some, and only h runs them. */
    int served[CH_MAX_NODES] = {0};
    for (int i = 0; i < 9; i++) {
        int node = notify_call(lb, session, 100 + i, 30);
        assert_true(node >= 0 && node < c->n);
        served[node]++;
    }
    for (int i = 0; i < c->n; i++)
        if (served[i] == 0)
            fail_msg("node%d answered none of 9 calls through the balancer", i);
    assert_int_equal(holder(c), h);

    /* SEP-1699: the call's stream closes after its priming event (--poll-ms 100), and
     * its GET resumes it through the balancer, on whatever node that is. */
    char *body = rc_call_body(200, "slow_echo", "{\"text\":\"polled\",\"delay_ms\":600}", NULL);
    hc_conn post;
    assert_int_equal(hc_mcp_post_open(&post, lb, session, body, 0, STEP_MS), 200);
    free(body);
    rc_call call;
    rc_call_init(&call, 200, 0);
    int rc = rc_call_read(&post, &call, 0, STEP_MS);
    hc_close(&post);
    if (rc != 0 || call.got_result || call.last_id == NULL)
        fail_msg("the polled call's stream should end after its priming event (%d, %s)", rc,
                 call.err);
    for (int round = 0; !call.got_result && round < 5; round++) {
        rc_wait_retry(call.retry > 0 ? call.retry : 100);
        hc_conn get;
        assert_int_equal(hc_mcp_get_open(&get, lb, session, call.last_id, STEP_MS), 200);
        rc = rc_call_read(&get, &call, 0, STEP_MS);
        hc_close(&get);
        if (rc < 0)
            fail_msg("the resumed call: %s", call.err);
    }
    assert_true(call.got_result);
    assert_string_equal(rc_result_text(call.result), "polled");
    rc_call_free(&call);

    /* A client that names a node itself is served only where the session is. */
    int other = (h + 1) % c->n;
    assert_int_equal(list_status(ch_node_port(c, other), session, "Mcp-Cluster-Node: 1\r\n"), 404);
    assert_int_equal(list_status(ch_node_port(c, h), session, "Mcp-Cluster-Node: 1\r\n"), 200);

    /* DELETE through another node ends it: 404 on every node, and its child is gone. */
    assert_int_equal(hc_mcp_delete(ch_node_port(c, other), session, STEP_MS), 200);
    for (int i = 0; i < c->n; i++)
        assert_int_equal(list_status(ch_node_port(c, i), session, NULL), 404);
    gw_await_metric(ch_node_port(c, h), "mcp_gateway_children", 0, STEP_MS);
}

static void test_a_killed_nodes_sessions_are_gone_and_the_others_serve_on(void **state)
{
    ch_cluster *c = *state;
    int lb = ch_lb_port(c);
    char session[33];
    assert_int_equal(hc_mcp_initialize(lb, session, STEP_MS), 0);
    int h = holder(c);
    assert_int_equal(list_status(ch_node_port(c, (h + 1) % c->n), session, NULL), 200);
    assert_int_equal(ch_kill_node(c, h), 0);

    /* 503 while its heartbeat lives (its address refuses), then 404: the session went
     * with its child. Nothing else, and within the bound. */
    long long deadline = harness_now_ms() + GONE_MS;
    for (int k = 1; k < c->n; k++) {
        int port = ch_node_port(c, (h + k) % c->n);
        int status;
        while ((status = list_status(port, session, NULL)) == 503 && harness_now_ms() < deadline)
            usleep(100 * 1000); /* the heartbeat expires by itself: nothing to await */
        if (status != 404)
            fail_msg("node%d answered %d for a session of the killed node%d", (h + k) % c->n,
                     status, h);
    }
    /* The nodes left serve new sessions. */
    char fresh[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, (h + 1) % c->n), fresh, STEP_MS), 0);
    notify_call(ch_node_port(c, (h + 2) % c->n), fresh, 300, 10);
    assert_int_equal(ch_restart_node(c, h), 0);
}

/* A node that stops answering without dying (SIGSTOP): a stream relayed from it is cut
 * once its heartbeat has lapsed, never held forever; it serves again once it goes on. */
static void test_a_relayed_stream_of_a_stalled_node_is_cut(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    int other = 1;
    char *body = rc_call_body(7, "slow_echo", "{\"text\":\"late\",\"delay_ms\":60000}", NULL);
    hc_conn conn;
    assert_int_equal(hc_mcp_post_open(&conn, ch_node_port(c, other), session, body, 0, STEP_MS),
                     200);
    free(body);
    hc_sse_event ev;
    assert_int_equal(hc_sse_next_block(&conn, &ev, STEP_MS), 1); /* the priming event */
    hc_sse_event_free(&ev);
    pid_t pid = c->nodes[0].proc.pid;
    assert_int_equal(kill(pid, SIGSTOP), 0);
    long long t0 = harness_now_ms();
    int rc = hc_sse_next_block(&conn, &ev, GONE_MS + STEP_MS);
    long long waited = harness_now_ms() - t0;
    kill(pid, SIGCONT);
    if (rc == 1) {
        hc_sse_event_free(&ev);
        fail_msg("an event came from the stopped node");
    }
    if (rc == -1)
        fail_msg("the relayed stream of a stopped node was still open after %lld ms", waited);
    hc_close(&conn);
    /* Going on, it holds the session still: served through the other node again. */
    long long deadline = harness_now_ms() + GONE_MS;
    int status;
    while ((status = list_status(ch_node_port(c, other), session, NULL)) != 200 &&
           harness_now_ms() < deadline)
        usleep(100 * 1000); /* its heartbeat comes back by itself: nothing to await */
    assert_int_equal(status, 200);
}

/* ---- The HTTP+SSE transport (2024-11-05) ---- */

/* POSTs body to the HTTP+SSE session id on port: the HTTP status. */
static int httpsse_post(int port, const char *id, const char *body)
{
    char path[96];
    snprintf(path, sizeof(path), "/messages?sessionId=%s", id);
    hc_response r;
    memset(&r, 0, sizeof(r));
    int rc =
        hc_request(port, "POST", path, "Content-Type: application/json\r\n", body, &r, STEP_MS);
    int status = rc == 0 ? r.status : -1;
    hc_response_free(&r);
    return status;
}

/* The next event of the HTTP+SSE stream: the message with this id. */
static void expect_answer(hc_conn *conn, long long id, const char *what)
{
    json_t *m = NULL;
    int rc;
    if ((m = hc_sse_next_json(conn, STEP_MS, &rc)) == NULL ||
        json_integer_value(json_object_get(m, "id")) != id || json_object_get(m, "result") == NULL)
        fail_msg("%s: no answer %lld on the /sse stream (%d)", what, id, rc);
    json_decref(m);
}

static void test_an_httpsse_sessions_posts_reach_its_stream_from_any_node(void **state)
{
    ch_cluster *c = *state;
    hc_conn sse;
    hc_response head;
    assert_int_equal(hc_connect(&sse, ch_node_port(c, 0), STEP_MS), 0);
    assert_int_equal(
        hc_send_request(&sse, ch_node_port(c, 0), "GET", "/sse", HC_SSE_ACCEPT, NULL, STEP_MS), 0);
    assert_int_equal(hc_read_head(&sse, &head, STEP_MS), 0);
    assert_int_equal(head.status, 200);
    hc_response_free(&head);
    hc_sse_event ev;
    assert_int_equal(hc_sse_next_event(&sse, &ev, STEP_MS), 1);
    const char *prefix = "/messages?sessionId=";
    assert_true(ev.data != NULL && strncmp(ev.data, prefix, strlen(prefix)) == 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", ev.data + strlen(prefix));
    hc_sse_event_free(&ev);

    char *init = hc_initialize_body("2024-11-05");
    assert_int_equal(httpsse_post(ch_node_port(c, 1), id, init), 202);
    free(init);
    expect_answer(&sse, 1, "initialize posted to node1");
    assert_int_equal(httpsse_post(ch_node_port(c, 2), id,
                                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                     202);
    char *call = hc_tools_call_body(2, "echo", "{\"text\":\"legacy\"}");
    assert_int_equal(httpsse_post(ch_node_port(c, 2), id, call), 202);
    expect_answer(&sse, 2, "tools/call posted to node2");
    assert_int_equal(holder(c), 0);

    /* The session goes with its stream, on every node. */
    hc_close(&sse);
    gw_await_metric(ch_node_port(c, 0), "mcp_gateway_sessions", 0, STEP_MS);
    for (int i = 0; i < c->n; i++)
        assert_int_equal(httpsse_post(ch_node_port(c, i), id, call), 404);
    free(call);
}

/* ---- Revision 2026-07-28 ---- */

/* The peer's tool "ask" as a 2026-07-28 tools/call, with the elicitation capability
 * and more params (stolen, may be NULL). */
static json_t *ask(long long id, json_t *more)
{
    json_t *params = json_pack("{s:s, s:{}}", "name", "ask", "arguments");
    if (more != NULL) {
        json_object_update(params, more);
        json_decref(more);
    }
    return mh_request(id, "tools/call", params, "{\"elicitation\":{}}");
}

/* POSTs req (stolen) to port: its one response, status and error code checked. */
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

/* Asks on port: the question's key and the requestState (new references). */
static void first_round(int port, long long id, char **key, json_t **rs)
{
    json_t *first = post(port, ask(id, NULL), 200, 0, "ask");
    json_t *result = json_object_get(first, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    json_t *reqs = json_object_get(result, "inputRequests");
    assert_int_equal(json_object_size(reqs), 1);
    *key = strdup(json_object_iter_key(json_object_iter(reqs)));
    *rs = json_incref(json_object_get(result, "requestState"));
    assert_true(json_is_string(*rs));
    json_decref(first);
}

static json_t *retry_of(long long id, const char *key, json_t *rs)
{
    json_t *answer =
        json_pack("{s:{s:s, s:{s:s}}}", key, "action", "accept", "content", "name", "Alice");
    return ask(id, json_pack("{s:o, s:O}", "inputResponses", answer, "requestState", rs));
}

static void test_a_retry_reaching_another_node_goes_to_the_child_that_waits(void **state)
{
    ch_cluster *c = *state;
    char *key;
    json_t *rs;
    first_round(ch_node_port(c, 0), 10, &key, &rs);
    /* node1 holds no such request: it sends the retry to node0, where the child asked. */
    json_t *done = post(ch_node_port(c, 1), retry_of(11, key, rs), 200, 0, "the retry on node1");
    const char *text = mh_text(done, "the retry on node1");
    if (strstr(text, "Alice") == NULL)
        fail_msg("the retry relayed to node0 answered \"%s\"", text);
    json_decref(done);
    json_decref(rs);
    free(key);

    /* Once node0 is gone, its waiting request is too: the retry gets -32602 (503 while
     * node0's heartbeat lives). */
    first_round(ch_node_port(c, 0), 20, &key, &rs);
    assert_int_equal(ch_kill_node(c, 0), 0);
    long long deadline = harness_now_ms() + GONE_MS;
    for (long long id = 21;; id++) {
        hc_response r;
        json_t *req = retry_of(id, key, rs);
        assert_int_equal(mh_post(ch_node_port(c, 2), req, NULL, &r), 0);
        json_decref(req);
        int status = r.status;
        if (status == 503 && harness_now_ms() < deadline) {
            hc_response_free(&r);
            usleep(100 * 1000); /* the heartbeat expires by itself: nothing to await */
            continue;
        }
        json_t *resp = mh_expect(&r, 200, -32602, id, "the retry of a gone node's request");
        hc_response_free(&r);
        const char *msg =
            json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
        assert_non_null(strstr(msg, "gone"));
        json_decref(resp);
        break;
    }
    json_decref(rs);
    free(key);
    assert_int_equal(ch_restart_node(c, 0), 0);
}

/* A server of revision 2026-07-28 behind the gateways seals its own requestState: a
 * retry served by another node's process opens it there (one key), and the ids the
 * gateways give never meet (the process tells a retry from what it retries by id). */
static void test_a_passed_through_retry_is_served_by_any_node(void **state)
{
    ch_cluster *c = *state;
    json_t *params =
        json_pack("{s:s, s:{s:s}}", "name", "test_elicitation", "arguments", "message", "name?");
    json_t *first =
        post(ch_node_port(c, 0), mh_request(10, "tools/call", params, "{\"elicitation\":{}}"), 200,
             0, "test_elicitation on node0");
    json_t *result = json_object_get(first, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    const char *key =
        json_object_iter_key(json_object_iter(json_object_get(result, "inputRequests")));
    assert_non_null(key);
    json_t *answer = json_pack("{s:{s:s, s:{s:s, s:s}}}", key, "action", "accept", "content",
                               "username", "alice", "email", "a@b.c");
    params = json_pack("{s:s, s:{s:s}, s:o, s:O}", "name", "test_elicitation", "arguments",
                       "message", "name?", "inputResponses", answer, "requestState",
                       json_object_get(result, "requestState"));
    /* The first request node1 sees. */
    json_t *done =
        post(ch_node_port(c, 1), mh_request(11, "tools/call", params, "{\"elicitation\":{}}"), 200,
             0, "the retry on node1");
    const char *text = mh_text(done, "the retry on node1");
    if (strstr(text, "alice") == NULL)
        fail_msg("the retry on node1 answered \"%s\"", text);
    json_decref(done);
    json_decref(first);
}

int main(void)
{
    if (harness_bin_path("mcp-everything", everything, sizeof(everything)) != 0 ||
        harness_bin_path("server_gateway_peer", peer, sizeof(peer)) != 0)
        return 1;
    /* The requestState key the nodes of setup_peer share: 64 hex digits. */
    snprintf(key_path, sizeof(key_path), "/tmp/mcp-gw-key-XXXXXX");
    int fd = mkstemp(key_path);
    unsigned char raw[32];
    char hex[65];
    FILE *ur = fopen("/dev/urandom", "rb");
    if (fd < 0 || ur == NULL || fread(raw, 1, sizeof(raw), ur) != sizeof(raw))
        return 1;
    fclose(ur);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    if (write(fd, hex, 64) != 64)
        return 1;
    close(fd);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_every_request_of_a_session_is_served_whatever_node_it_reaches, setup_everything,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_killed_nodes_sessions_are_gone_and_the_others_serve_on, setup_everything,
            teardown),
        cmocka_unit_test_setup_teardown(test_a_relayed_stream_of_a_stalled_node_is_cut,
                                        setup_everything, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_httpsse_sessions_posts_reach_its_stream_from_any_node, setup_everything,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_retry_reaching_another_node_goes_to_the_child_that_waits, setup_peer, teardown),
        cmocka_unit_test_setup_teardown(test_a_passed_through_retry_is_served_by_any_node,
                                        setup_everything_keyed, teardown),
    };
    int failed = cmocka_run_group_tests_name("cluster_gateway", tests, NULL, NULL);
    unlink(key_path);
    return failed || teardown_failures ? 1 : 0;
}
