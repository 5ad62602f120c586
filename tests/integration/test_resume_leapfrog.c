/* SPDX-License-Identifier: MIT */
/*
 * The leapfrog scenario (rmcp's "SSE reconnect loops": GET streams that end each
 * other, for ever), over
 * real sockets for 30 s.
 *
 * A browser EventSource that read a completed POST stream with a priming
 * event reconnects with GET and Last-Event-ID = the last id of that stream.
 * Nothing was missed, so the server must keep that GET open as an idle stream
 * (keep-alive comments only): closing it makes EventSource loop every retry
 * interval, and letting it replace the standalone GET stream kills that one,
 * which then reconnects and kills the other in turn. Here the standalone GET
 * must survive, every resources/updated notification must arrive on it
 * exactly once, the reconnected GET must get nothing but comments, and no
 * stream may be closed by the server.
 *
 * With MCP_TEST_CLUSTER_NODES=N the same scenario runs through a load balancer
 * (cluster_host.h): HAProxy in front of N nodes sharing a redis-server, each
 * request sent to the next node in turn. Then, with N >= 3, the reconnected
 * GET must land on another node than the POST whose stream it names, and the
 * triggers on every node, so that each notification comes from wherever it
 * was triggered to the node that holds the standalone GET. With
 * MCP_TEST_CLUSTER_NO_REDIS=1 Redis is left out (independent nodes: with one
 * node the scenario must pass, which checks the plumbing).
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

#include "cluster_host.h"
#include "http_expect.h"
#include "resume_check.h"

#define STEP_MS 10000
#define RUN_MS 30000
#define TRIGGER_EVERY_MS 300
#define KEEPALIVE_MS 1000

/* The nodes behind the balancer ($MCP_TEST_CLUSTER_NODES), 0 for one server on its own. */
static int cluster_nodes(void)
{
    const char *v = getenv("MCP_TEST_CLUSTER_NODES");
    int n = v ? atoi(v) : 0;
    return n > 0 && n <= CH_MAX_NODES ? n : 0;
}

static ch_cluster cluster;
/* How many triggers each node answered (the balancer's X-Mcp-Node). */
static long long trigger_nodes[CH_MAX_NODES];

static int setup_leapfrog(void **state)
{
    static const char *const flags[] = {"--keepalive-ms", "1000", NULL};
    int n = cluster_nodes();
    if (n == 0)
        return hx_setup(state, flags, 1);
    const char *no_redis = getenv("MCP_TEST_CLUSTER_NO_REDIS");
    hx_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    if (ch_start(&cluster, n, no_redis && strcmp(no_redis, "1") == 0 ? CH_NO_REDIS : CH_REDIS,
                 flags) != 0) {
        free(f);
        return -1;
    }
    f->port = ch_lb_port(&cluster);
    if (hc_mcp_initialize(f->port, f->session, STEP_MS) != 0) {
        fprintf(stderr, "could not initialize a session through the balancer\n");
        ch_stop(&cluster);
        free(f);
        return -1;
    }
    printf("through HAProxy on port %d in front of %d node(s)%s%s\n", f->port, n,
           ch_redis_url(&cluster)[0] ? " sharing " : "", ch_redis_url(&cluster));
    *state = f;
    return 0;
}

static int teardown_leapfrog(void **state)
{
    if (cluster_nodes() == 0)
        return hx_teardown(state);
    free(*state);
    *state = NULL;
    int rc = ch_stop(&cluster);
    if (rc != 0)
        hx_teardown_failures++;
    return rc;
}

/* The node behind the balancer that answered on c, or -1 (none, or no balancer). */
static int node_of(const hc_conn *c)
{
    return ch_node_index(hc_header_get(&c->head, "x-mcp-node"));
}

/* What the test saw on one of the two GET streams. */
struct seen {
    const char *name;
    long long updates;    /* notifications/resources/updated */
    long long keepalives; /* comment blocks */
    long long primings;
    long long last_seq;
};

/* Handles everything already received on c; fails on anything unexpected. */
static void drain(hc_conn *c, struct seen *s, int updates_allowed, long long t0)
{
    if (hc_pump(c) != 0)
        fail_msg("%s: a read error", s->name);
    hc_sse_event ev;
    while (hc_sse_take(c, &ev) == 1) {
        if (ev.comment) {
            s->keepalives++;
        } else if (hc_sse_is_priming(&ev)) {
            s->primings++;
        } else {
            if (!updates_allowed)
                fail_msg("%s got a message at %lld ms; it must stay idle: %s", s->name,
                         hc_now_ms() - t0, ev.data);
            if (strstr(ev.data, "\"notifications/resources/updated\"") == NULL)
                fail_msg("%s: unexpected message %s", s->name, ev.data);
            s->updates++;
        }
        if (ev.id != NULL) {
            long long seq = rc_id_seq(ev.id);
            if (seq <= s->last_seq)
                fail_msg("%s: event ids not increasing (%s after seq %lld)", s->name, ev.id,
                         s->last_seq);
            s->last_seq = seq;
        }
        hc_sse_event_free(&ev);
    }
    if (c->eof || c->body_done)
        fail_msg("%s was closed by the server at %lld ms (%s) after %lld notifications and %lld "
                 "keep-alives",
                 s->name, hc_now_ms() - t0, c->body_done ? "cleanly" : "connection closed",
                 s->updates, s->keepalives);
}

/* Waits up to ms for either stream to have bytes, handling them. */
static void wait_streams(hc_conn *sg, struct seen *g, hc_conn *rg, struct seen *r, int ms,
                         long long t0)
{
    long long deadline = hc_now_ms() + ms;
    for (;;) {
        long long left = deadline - hc_now_ms();
        if (left <= 0)
            return;
        struct pollfd pfd[2] = {{.fd = sg->fd, .events = POLLIN}, {.fd = rg->fd, .events = POLLIN}};
        int n = poll(pfd, 2, (int)left);
        if (n <= 0)
            continue;
        if (pfd[0].revents)
            drain(sg, g, 1, t0);
        if (pfd[1].revents)
            drain(rg, r, 0, t0);
    }
}

static void trigger(const hx_fixture *f, long long id)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"trigger_resource_update\",\"arguments\":{\"uri\":\"test://watched-resource\"}}}",
             id);
    hc_conn c;
    int status = hc_mcp_post_open(&c, f->port, f->session, body, 0, STEP_MS);
    if (status != 200 || hc_read_body(&c, NULL, STEP_MS) != 0 || c.head.body == NULL ||
        strstr(c.head.body, "\"updated\"") == NULL)
        fail_msg("trigger %lld: expected 200 and the tool's result, got %d %s", id, status,
                 c.head.body ? c.head.body : "");
    int node = node_of(&c);
    if (node >= 0)
        trigger_nodes[node]++;
    hc_close(&c);
}

/*
 * Through the balancer: which node served what, as the answers' X-Mcp-Node say and
 * HAProxy's log agrees for the reconnected GET. With three nodes or more, that GET is on
 * another node than the POST it names (only the standalone GET comes between them in the
 * round robin: with two nodes it would come back to the POST's), and every node took
 * triggers.
 */
static void check_nodes(int n, int post_node, int sg_node, int rg_node, const char *last_id)
{
    printf("subscribe POST on node%d, standalone GET on node%d, reconnected GET on node%d; "
           "triggers per node:",
           post_node, sg_node, rg_node);
    for (int i = 0; i < n; i++)
        printf(" %lld", trigger_nodes[i]);
    printf("\n");
    if (post_node < 0 || sg_node < 0 || rg_node < 0)
        fail_msg("an answer through the balancer did not name its node");
    ch_lb_request log[512];
    int got = ch_lb_requests(&cluster, log, 512), found = 0;
    for (int k = 0; k < got && k < 512; k++) {
        if (strcmp(log[k].last_id, last_id) != 0)
            continue;
        found++;
        if (log[k].node != rg_node || strcmp(log[k].method, "GET") != 0)
            fail_msg("HAProxy logged the reconnected GET as %s on node%d; its answer named node%d",
                     log[k].method, log[k].node, rg_node);
    }
    if (found != 1)
        fail_msg("HAProxy logged %d requests with Last-Event-ID %s, expected 1", found, last_id);
    if (n < 3)
        return;
    if (rg_node == post_node)
        fail_msg("the reconnected GET went to node%d, the node of the POST it names: the "
                 "scenario did not cross nodes",
                 rg_node);
    for (int i = 0; i < n; i++)
        if (trigger_nodes[i] == 0)
            fail_msg("node%d took no trigger: the notifications did not come from every node", i);
}

static void test_reconnected_get_of_a_finished_post_stream_does_not_leapfrog(void **state)
{
    hx_fixture *f = *state;

    /* A POST stream that completes, with its priming event: the subscription. */
    hc_conn post;
    int status =
        hc_mcp_post_open(&post, f->port, f->session,
                         "{\"jsonrpc\":\"2.0\",\"id\":1001,\"method\":\"resources/subscribe\","
                         "\"params\":{\"uri\":\"test://watched-resource\"}}",
                         0, STEP_MS);
    assert_int_equal(status, 200);
    rc_call sub;
    rc_call_init(&sub, 1001, 0);
    int r = rc_call_read(&post, &sub, 0, STEP_MS);
    if (sub.err[0] != '\0' || r != 1 || sub.primings < 1 || sub.last_id == NULL)
        fail_msg("resources/subscribe: expected a priming event and the result (rc %d) %s", r,
                 sub.err);
    hc_sse_event ev;
    if (hc_sse_next_block(&post, &ev, STEP_MS) != 0 || !post.body_done)
        fail_msg("resources/subscribe: the POST stream did not end after its result");
    int post_node = node_of(&post);
    hc_close(&post);

    /* The standalone GET, then the EventSource of the POST coming back with its last id. */
    hc_conn sg, rg;
    struct seen g = {.name = "the standalone GET", .last_seq = -1};
    struct seen rs = {.name = "the reconnected GET (Last-Event-ID of the finished POST)",
                      .last_seq = -1};
    if (hc_mcp_get_open(&sg, f->port, f->session, NULL, STEP_MS) != 200)
        fail_msg("standalone GET: expected 200");
    status = hc_mcp_get_open(&rg, f->port, f->session, sub.last_id, STEP_MS);
    if (status != 200)
        fail_msg("GET with the finished POST stream's last id %s: expected 200 (an idle stream), "
                 "got %d",
                 sub.last_id, status);
    int sg_node = node_of(&sg), rg_node = node_of(&rg);

    long long t0 = hc_now_ms();
    long long triggers = 0;
    while (hc_now_ms() - t0 < RUN_MS) {
        trigger(f, 2000 + triggers);
        triggers++;
        wait_streams(&sg, &g, &rg, &rs, TRIGGER_EVERY_MS, t0);
    }

    /* Every notification arrives on the standalone GET, then no more. */
    long long deadline = hc_now_ms() + STEP_MS;
    while (g.updates < triggers && hc_now_ms() < deadline)
        wait_streams(&sg, &g, &rg, &rs, 100, t0);
    wait_streams(&sg, &g, &rg, &rs, KEEPALIVE_MS + 500, t0);
    printf("leapfrog: %lld s, %lld triggers; standalone GET: %lld notifications, %lld "
           "keep-alives, %lld priming; reconnected GET: %lld keep-alives, %lld priming\n",
           (hc_now_ms() - t0) / 1000, triggers, g.updates, g.keepalives, g.primings, rs.keepalives,
           rs.primings);
    if (g.updates != triggers)
        fail_msg("the standalone GET got %lld notifications for %lld triggers", g.updates,
                 triggers);
    /* The idle stream is kept alive all along (one comment a second when nothing else). */
    if (rs.keepalives < RUN_MS / KEEPALIVE_MS / 2)
        fail_msg("the reconnected GET got only %lld keep-alive comments in %d s", rs.keepalives,
                 RUN_MS / 1000);
    int n = cluster_nodes();
    if (n > 0)
        check_nodes(n, post_node, sg_node, rg_node, sub.last_id);
    hc_close(&sg);
    hc_close(&rg);
    rc_call_free(&sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconnected_get_of_a_finished_post_stream_does_not_leapfrog),
    };
    int failed =
        cmocka_run_group_tests_name("resume_leapfrog", tests, setup_leapfrog, teardown_leapfrog);
    return failed + hx_teardown_failures ? 1 : 0;
}
