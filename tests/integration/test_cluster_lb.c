/* SPDX-License-Identifier: MIT */
/*
 * The cluster harness itself (cluster_host.h), with independent nodes that
 * share nothing: HAProxy sends each request of one kept-alive client
 * connection to the next node in turn, and the nodes' own answers show it (a
 * session made on one node is known there and nowhere else); an SSE event
 * comes through the balancer while its response is still open; a killed node
 * is passed over and serves again once restarted on its port; Redis stops and
 * starts again on the same port; neither a stopped cluster nor a test
 * process that dies leaves a process behind; and a repeated Mcp-Name cannot
 * slip past the balancer's rule that denies a tool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "cluster_host.h"
#include "harness.h"
#include "http_expect.h"

/* The deadline of one request or one event. */
#define STEP_MS 5000

static int teardown_failures;

static int setup_cluster(void **state, int n, ch_redis redis, const char *const args[])
{
    ch_cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    if (ch_start(c, n, redis, args) != 0) {
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

static int setup_three(void **state)
{
    return setup_cluster(state, 3, CH_NO_REDIS, NULL);
}

static int setup_one_streaming(void **state)
{
    /* Keep-alive comments every 300 ms, so an idle stream shows them within a second. */
    static const char *const args[] = {"--keepalive-ms", "300", NULL};
    return setup_cluster(state, 1, CH_NO_REDIS, args);
}

static int setup_redis_alone(void **state)
{
    return setup_cluster(state, 1, CH_REDIS_ALONE, NULL);
}

static int setup_three_and_redis(void **state)
{
    return setup_cluster(state, 3, CH_REDIS_ALONE, NULL);
}

static int teardown_cluster(void **state)
{
    ch_cluster *c = *state;
    if (c == NULL)
        return 0;
    int rc = ch_stop(c);
    free(c);
    *state = NULL;
    /* cmocka does not count a failed teardown: main() adds these. */
    if (rc != 0)
        teardown_failures++;
    return rc;
}

/* The headers of an MCP POST in a session of revision 2025-11-25. */
static void session_headers(char *out, size_t size, const char *session)
{
    snprintf(out, size,
             HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n",
             session);
}

/* Sends one request on the kept-alive connection and reads the whole answer; fails the
 * test when there is none. */
static void exchange(hc_conn *conn, int port, const char *method, const char *path,
                     const char *headers, const char *body, hc_response *r, const char *what)
{
    if (hc_send_request(conn, port, method, path, headers, body, STEP_MS) != 0 ||
        hc_read_response(conn, r, STEP_MS) != 0)
        fail_msg("%s: no answer through the balancer (connection %s)", what,
                 conn->eof ? "closed" : "open");
    if (conn->eof || harness_contains_ci(hc_header_get(r, "connection"), "close"))
        fail_msg("%s: the balancer closed the client connection; it must stay open", what);
}

static void test_each_request_of_one_kept_alive_connection_goes_to_the_next_node(void **state)
{
    ch_cluster *c = *state;
    printf("the balancer's configuration:\n%s", ch_lb_config(c));

    /* One session on each node, made there directly: only that node knows it. */
    char sessions[3][33];
    for (int i = 0; i < 3; i++)
        if (hc_mcp_initialize(ch_node_port(c, i), sessions[i], STEP_MS) != 0)
            fail_msg("cannot initialize a session on node%d directly", i);
    int before = ch_lb_wait_requests(c, 0, 0);

    /* Nine pings on one connection: three with node0's session, three with node1's, three
     * with node2's. Each group of three meets every node once, so exactly one ping of the
     * group finds its session: the one the balancer says went to the session's node. */
    hc_conn conn;
    assert_int_equal(hc_connect(&conn, ch_lb_port(c), STEP_MS), 0);
    int fd = conn.fd;
    int node[9], status[9];
    for (int k = 0; k < 9; k++) {
        char headers[512], body[128], what[64];
        session_headers(headers, sizeof(headers), sessions[k / 3]);
        snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", k + 1);
        snprintf(what, sizeof(what), "ping %d", k + 1);
        hc_response r;
        exchange(&conn, ch_lb_port(c), "POST", "/mcp", headers, body, &r, what);
        node[k] = ch_served_by(&r);
        status[k] = r.status;
        hc_response_free(&r);
        assert_int_equal(conn.fd, fd);
    }
    hc_close(&conn);

    printf("nine pings on one connection went to nodes");
    for (int k = 0; k < 9; k++)
        printf(" %d (HTTP %d)", node[k], status[k]);
    printf("\n");
    for (int k = 0; k < 9; k++) {
        if (node[k] < 0 || node[k] > 2)
            fail_msg("ping %d: no node named in X-Mcp-Node", k + 1);
        if (k > 0 && node[k] == node[k - 1])
            fail_msg("pings %d and %d both went to node%d: the balancer kept the node of the "
                     "connection",
                     k, k + 1, node[k]);
        if (k >= 3 && node[k] != node[k - 3])
            fail_msg("ping %d went to node%d, not node%d as in round robin", k + 1, node[k],
                     node[k - 3]);
        /* The node's own answer: 200 where the session lives, 404 elsewhere. */
        int owner = k / 3;
        int want = node[k] == owner ? 200 : 404;
        if (status[k] != want)
            fail_msg("ping %d with node%d's session, sent to node%d by the balancer, got HTTP %d "
                     "(expected %d): the balancer's X-Mcp-Node is not the node that answered",
                     k + 1, owner, node[k], status[k], want);
    }

    /* HAProxy's log names the same node for each of them, in the same order. */
    ch_lb_request log[64];
    int n = ch_lb_wait_requests(c, before + 9, STEP_MS);
    assert_true(n >= before + 9 && n <= 64);
    assert_int_equal(ch_lb_requests(c, log, 64), n);
    for (int k = 0; k < 9; k++) {
        const ch_lb_request *q = &log[before + k];
        if (q->node != node[k] || strcmp(q->method, "POST") != 0 || q->status != status[k] ||
            strcmp(q->session, sessions[k / 3]) != 0)
            fail_msg("ping %d: HAProxy logged node%d %s %d session %s; the client saw node%d %d",
                     k + 1, q->node, q->method, q->status, q->session, node[k], status[k]);
    }
}

/*
 * Calls notify (two notifications delay_ms apart, then the result) through the balancer
 * on a new connection, and checks that the first notification is read while the response
 * is open and well before the result. Returns how long after the request it came.
 */
static long long first_event_delay(int port, const char *session, long long id, int delay_ms)
{
    hc_conn conn;
    char headers[512], args[64];
    session_headers(headers, sizeof(headers), session);
    snprintf(args, sizeof(args), "{\"count\":2,\"delay_ms\":%d}", delay_ms);
    char *body = hc_tools_call_body(id, "notify", args);
    assert_int_equal(hc_connect(&conn, port, STEP_MS), 0);
    long long t0 = harness_now_ms();
    assert_int_equal(hc_send_request(&conn, port, "POST", "/mcp", headers, body, STEP_MS), 0);
    free(body);
    hc_response head;
    assert_int_equal(hc_read_head(&conn, &head, STEP_MS), 0);
    hx_expect_status(&head, 200, "tools/call notify through the balancer");
    const char *ct = hc_header_get(&head, "content-type");
    if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
        fail_msg("expected an SSE answer, got Content-Type %s", ct ? ct : "none");
    if (hc_header_get(&head, "content-encoding") != NULL)
        fail_msg("the balancer compressed the stream (Content-Encoding %s)",
                 hc_header_get(&head, "content-encoding"));
    hc_response_free(&head);

    int rc;
    json_t *first = hc_sse_next_json(&conn, delay_ms / 2, &rc);
    long long t_first = harness_now_ms();
    if (first == NULL)
        fail_msg("no event within %d ms of the response head (rc %d): the balancer holds the "
                 "stream back",
                 delay_ms / 2, rc);
    const char *method = json_string_value(json_object_get(first, "method"));
    if (method == NULL || strcmp(method, "notifications/message") != 0)
        fail_msg("the first event is not the first notification: %s", hx_dump(first));
    json_decref(first);
    if (conn.body_done || conn.eof)
        fail_msg("the response had ended when its first event was read");

    long long t_end = -1;
    for (int i = 0; i < 3 && t_end < 0; i++) {
        json_t *m = hc_sse_next_json(&conn, STEP_MS, &rc);
        if (m == NULL)
            fail_msg("the stream ended or stalled before the result (rc %d)", rc);
        if (json_integer_value(json_object_get(m, "id")) == id &&
            json_object_get(m, "result") != NULL)
            t_end = harness_now_ms();
        json_decref(m);
    }
    hc_close(&conn);
    printf("call %lld: the first event %lld ms after the request, the result %lld ms after it\n",
           id, t_first - t0, t_end - t_first);
    if (t_end - t_first < delay_ms / 2)
        fail_msg("the result came %lld ms after the first event; the tool waited %d ms between "
                 "them, so the first was not passed on when it was sent",
                 t_end - t_first, delay_ms);
    return t_first - t0;
}

static void test_an_sse_event_comes_through_before_its_response_ends(void **state)
{
    ch_cluster *c = *state;
    int port = ch_lb_port(c);
    char session[33];
    assert_int_equal(hc_mcp_initialize(port, session, STEP_MS), 0);

    /* The first event must also come at once, not held back in case more follows (as
     * HAProxy does without http-no-delay, 200 ms): the best of three calls, so that a
     * busy machine's pause does not count. */
    long long best = -1;
    for (int k = 0; k < 3; k++) {
        long long d = first_event_delay(port, session, 7 + k, 1000);
        if (best < 0 || d < best)
            best = d;
    }
    if (best >= 100)
        fail_msg("the first event of a stream came %lld ms after the request at best; the "
                 "balancer holds small writes back",
                 best);

    hc_conn conn;
    /* An idle standalone GET stream: keep-alive comments come through as they are sent. */
    hc_response get;
    hx_open_get_stream(&conn, port, session, &get);
    hc_response_free(&get);
    int comments = 0;
    long long deadline = harness_now_ms() + 3000;
    while (comments < 2 && harness_now_ms() < deadline) {
        hc_sse_event ev;
        if (hc_sse_next(&conn, &ev, harness_left_ms(deadline)) != 1)
            break;
        comments += ev.comment;
        hc_sse_event_free(&ev);
    }
    if (comments < 2)
        fail_msg("the idle GET stream showed %d keep-alive comments in 3 s (one every 300 ms "
                 "is sent)",
                 comments);
    hc_close(&conn);
}

/* n GET /healthz through the balancer on one connection; counts the answers per node. */
static void health_round(ch_cluster *c, int n, int per_node[3])
{
    hc_conn conn;
    memset(per_node, 0, 3 * sizeof(int));
    assert_int_equal(hc_connect(&conn, ch_lb_port(c), STEP_MS), 0);
    for (int k = 0; k < n; k++) {
        hc_response r;
        exchange(&conn, ch_lb_port(c), "GET", "/healthz", NULL, NULL, &r, "GET /healthz");
        hx_expect_status(&r, 200, "GET /healthz through the balancer");
        int node = ch_served_by(&r);
        assert_true(node >= 0 && node < 3);
        per_node[node]++;
        hc_response_free(&r);
    }
    hc_close(&conn);
}

static void test_a_killed_node_is_passed_over_and_serves_again_once_restarted(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 1), session, STEP_MS), 0);
    int port = ch_node_port(c, 1);
    pid_t old = c->nodes[1].proc.pid;

    assert_int_equal(ch_kill_node(c, 1), 0);
    assert_false(ch_node_alive(c, 1));
    hc_conn direct;
    if (hc_connect(&direct, port, STEP_MS) == 0)
        fail_msg("node1 was killed, yet its port %d takes connections", port);

    /* Every request still gets an answer: the dead node's turn goes to the next one. */
    int per_node[3];
    health_round(c, 6, per_node);
    printf("with node1 killed: %d, %d, %d answers from nodes 0, 1, 2\n", per_node[0], per_node[1],
           per_node[2]);
    assert_int_equal(per_node[1], 0);
    assert_true(per_node[0] > 0 && per_node[2] > 0);

    assert_int_equal(ch_restart_node(c, 1), 0);
    assert_int_equal(ch_node_port(c, 1), port);
    assert_true(c->nodes[1].proc.pid > 0 && c->nodes[1].proc.pid != old);
    health_round(c, 3, per_node);
    printf("node1 restarted on port %d: %d, %d, %d answers from nodes 0, 1, 2\n", port, per_node[0],
           per_node[1], per_node[2]);
    assert_int_equal(per_node[0], 1);
    assert_int_equal(per_node[1], 1);
    assert_int_equal(per_node[2], 1);

    /* A new process: without a shared store, the session it had is gone. */
    hc_response r;
    assert_int_equal(hc_mcp_post(port, session, "MCP-Protocol-Version: 2025-11-25\r\n",
                                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &r, STEP_MS),
                     0);
    hx_expect_status(&r, 404, "ping with the session of the killed node1, to the new node1");
    hc_response_free(&r);
}

/* A hiredis connection to the cluster's Redis, or NULL. */
static redisContext *redis_connect(const ch_cluster *c)
{
    struct timeval tv = {.tv_sec = STEP_MS / 1000};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", c->redis_port, tv);
    if (r != NULL && r->err == 0 && redisSetTimeout(r, tv) == REDIS_OK)
        return r;
    if (r != NULL)
        redisFree(r);
    return NULL;
}

/* The reply to a command as text ("(nil)" or "(error)" otherwise), malloc'd. */
static char *redis_say(redisContext *r, const char *fmt, const char *arg)
{
    redisReply *reply = arg ? redisCommand(r, fmt, arg) : redisCommand(r, fmt);
    char *text;
    if (reply == NULL)
        text = strdup("(no reply)");
    else if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS)
        text = strdup(reply->str);
    else if (reply->type == REDIS_REPLY_NIL)
        text = strdup("(nil)");
    else
        text = strdup("(other)");
    if (reply != NULL)
        freeReplyObject(reply);
    return text;
}

static void test_redis_stops_and_starts_again_on_the_same_port(void **state)
{
    ch_cluster *c = *state;
    int port = c->redis_port;
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
    assert_string_equal(ch_redis_url(c), url);

    redisContext *r = redis_connect(c);
    assert_non_null(r);
    char *s = redis_say(r, "SET mcp:cluster:probe %s", "1");
    assert_string_equal(s, "OK");
    free(s);

    assert_int_equal(ch_stop_redis(c), 0);
    /* The old connection fails, and nothing takes new ones on that port. */
    redisReply *reply = redisCommand(r, "PING");
    if (reply != NULL)
        fail_msg("a command on the connection to the stopped Redis got a reply");
    redisFree(r);
    assert_null(redis_connect(c));

    assert_int_equal(ch_start_redis(c), 0);
    assert_int_equal(c->redis_port, port);
    assert_string_equal(ch_redis_url(c), url);
    r = redis_connect(c);
    assert_non_null(r);
    s = redis_say(r, "PING", NULL);
    assert_string_equal(s, "PONG");
    free(s);
    /* Nothing is persisted: the new server starts empty. */
    s = redis_say(r, "GET %s", "mcp:cluster:probe");
    assert_string_equal(s, "(nil)");
    free(s);
    redisFree(r);
}

static void test_a_stopped_cluster_leaves_no_process_behind(void **state)
{
    ch_cluster *c = *state;
    pid_t pids[CH_MAX_NODES + 4];
    size_t n = ch_pids(c, pids, sizeof(pids) / sizeof(pids[0]));
    /* Three nodes, HAProxy's master and worker, Redis. */
    assert_int_equal(n, 6);
    assert_int_equal(ch_stop(c), 0);
    for (size_t i = 0; i < n; i++)
        if (ch_wait_gone(pids[i], STEP_MS) != 0)
            fail_msg("process %d is still running after ch_stop", (int)pids[i]);
}

/* Reads exactly size bytes from fd within timeout_ms. 0 or -1. */
static int read_all(int fd, void *buf, size_t size, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    size_t got = 0;
    while (got < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, harness_left_ms(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(fd, (char *)buf + got, size - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

static void test_a_test_process_that_dies_takes_its_cluster_with_it(void **state)
{
    (void)state;
    int pids_pipe[2], hold[2];
    assert_int_equal(pipe(pids_pipe), 0);
    assert_int_equal(pipe(hold), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The test process that dies: it starts a cluster, says which processes it runs,
         * and waits (bounded, should nobody kill it) to be killed. */
        close(pids_pipe[0]);
        close(hold[1]);
        ch_cluster c;
        pid_t pids[CH_MAX_NODES + 4];
        size_t n = 0;
        if (ch_start(&c, 3, CH_REDIS_ALONE, NULL) == 0)
            n = ch_pids(&c, pids, sizeof(pids) / sizeof(pids[0]));
        if (write(pids_pipe[1], &n, sizeof(n)) != sizeof(n) ||
            write(pids_pipe[1], pids, n * sizeof(pid_t)) != (ssize_t)(n * sizeof(pid_t)))
            _exit(1);
        struct pollfd p = {.fd = hold[0], .events = POLLIN};
        poll(&p, 1, 60000);
        _exit(0);
    }
    close(pids_pipe[1]);
    close(hold[0]);
    size_t n = 0;
    pid_t pids[CH_MAX_NODES + 4];
    int ok = read_all(pids_pipe[0], &n, sizeof(n), CH_START_MS * 2) == 0 && n == 6 &&
             read_all(pids_pipe[0], pids, n * sizeof(pid_t), STEP_MS) == 0;
    kill(child, SIGKILL);
    int status;
    harness_wait_pid(child, STEP_MS, &status);
    close(pids_pipe[0]);
    close(hold[1]);
    if (!ok)
        fail_msg("the child did not start its cluster of six processes (got %zu)", n);
    for (size_t i = 0; i < n; i++)
        if (ch_wait_gone(pids[i], STEP_MS) != 0) {
            kill(pids[i], SIGKILL);
            fail_msg("process %d outlived the test process that started it", (int)pids[i]);
        }
}

/*
 * tests/cluster/haproxy.cfg denies the tool admin_shutdown by its Mcp-Name, which HAProxy
 * reads from the header's last field line. "Mcp-Name: admin_shutdown" then "Mcp-Name:
 * echo" passes that rule; the node read the first line, which matched the body, so the
 * call ran. A repeated metadata header is now refused by the node (400, -32020).
 */
static void test_a_repeated_mcp_name_cannot_slip_past_the_balancers_rule(void **state)
{
    ch_cluster *c = *state;
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                       "\"name\":\"admin_shutdown\",\"_meta\":{"
                       "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                       "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"
                       "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
#define MODERN_CALL                                                                                \
    HC_MCP_POST_HEADERS "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
    hc_response r;
    assert_int_equal(hc_request(ch_lb_port(c), "POST", "/mcp",
                                MODERN_CALL "Mcp-Name: admin_shutdown\r\n", body, &r, STEP_MS),
                     0);
    if (r.status != 403)
        fail_msg("the balancer's rule: expected 403 for Mcp-Name admin_shutdown, got %d %s",
                 r.status, r.body ? r.body : "");
    hc_response_free(&r);
    static const char *const repeats[] = {
        "Mcp-Name: admin_shutdown\r\nMcp-Name: echo\r\n",
        "Mcp-Name: admin_shutdown\r\nmcp-name: echo\r\n",
    };
    for (size_t i = 0; i < sizeof(repeats) / sizeof(repeats[0]); i++) {
        char headers[512];
        snprintf(headers, sizeof(headers), MODERN_CALL "%s", repeats[i]);
        assert_int_equal(hc_request(ch_lb_port(c), "POST", "/mcp", headers, body, &r, STEP_MS), 0);
        json_t *v = json_loadb(r.body ? r.body : "", r.body_len, 0, NULL);
        json_t *code = json_object_get(json_object_get(v, "error"), "code");
        if (r.status != 400 || json_integer_value(code) != -32020 || ch_served_by(&r) < 0)
            fail_msg("a repeated Mcp-Name past the balancer (case %zu): expected the node's 400 "
                     "with -32020, got %d %s",
                     i + 1, r.status, r.body ? r.body : "");
        json_decref(v);
        hc_response_free(&r);
    }
#undef MODERN_CALL
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_each_request_of_one_kept_alive_connection_goes_to_the_next_node, setup_three,
            teardown_cluster),
        cmocka_unit_test_setup_teardown(test_an_sse_event_comes_through_before_its_response_ends,
                                        setup_one_streaming, teardown_cluster),
        cmocka_unit_test_setup_teardown(
            test_a_killed_node_is_passed_over_and_serves_again_once_restarted, setup_three,
            teardown_cluster),
        cmocka_unit_test_setup_teardown(test_redis_stops_and_starts_again_on_the_same_port,
                                        setup_redis_alone, teardown_cluster),
        cmocka_unit_test_setup_teardown(test_a_stopped_cluster_leaves_no_process_behind,
                                        setup_three_and_redis, teardown_cluster),
        cmocka_unit_test(test_a_test_process_that_dies_takes_its_cluster_with_it),
        cmocka_unit_test_setup_teardown(
            test_a_repeated_mcp_name_cannot_slip_past_the_balancers_rule, setup_one_streaming,
            teardown_cluster),
    };
    int failed = cmocka_run_group_tests_name("cluster_lb", tests, NULL, NULL);
    return failed + teardown_failures ? 1 : 0;
}
