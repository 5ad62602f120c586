/* SPDX-License-Identifier: MIT */
/*
 * Chaos through a load balancer: three mcp-everything nodes sharing a
 * redis-server behind HAProxy (cluster_host.h), which sends every request to
 * the next node in turn, so each resume of a stream may land on another node
 * than the one running its request. Each test starts its own cluster.
 *
 * The load (cluster_load.h): client threads run poll_notify calls on a few
 * sessions, cut their connections at random moments and resume each stream
 * with GET and Last-Event-ID through the balancer. Every notification of every
 * call must arrive exactly once and in order, then its answer; the client
 * never deduplicates.
 *
 *   - With nothing else going on, every call completes, and the resumes were
 *     served by nodes other than the stream's owner (following the stream in
 *     Redis, replay then live).
 *   - A node killed (SIGKILL) mid-run, then restarted on its port: each call
 *     under way whose stream it ran ends, resumed through another node, with
 *     the JSON-RPC error of a node that is gone within 10 s of the kill (or
 *     with its result, when its tool had finished and stored it); every other
 *     call completes; the sessions made before still work on every node, the
 *     restarted one included.
 *   - Redis stopped mid-run, then started again (empty) on its port: while it
 *     is down a new initialize, and a request of a session a node does not
 *     hold, get 503 with a JSON-RPC error body; once it is back, new sessions
 *     initialize and complete calls on every node within 15 s; no node
 *     crashes, and each exits 0 on SIGTERM. Sessions made before are gone from
 *     Redis (it restarts empty): their requests may get 404, which is fine.
 *
 * Only registered with -DMCP_TEST_CLUSTER=ON (cmake/McpClusterTests.cmake).
 * The PRNG seed is printed; MCP_CHAOS_SEED=<n> replays a run's random choices
 * (thread timing aside), and MCP_CHAOS_TEST=<pattern> runs only the tests whose
 * name matches.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_host.h"
#include "cluster_load.h"
#include "harness.h"
#include "resume_check.h"

#define NODES 3
/* The deadline of one request, one event; of a whole call. */
#define STEP_MS 10000
#define CALL_MS 30000
/* The load: calls of COUNT notifications from THREADS threads on SESSIONS sessions. */
#define CALLS 200
#define COUNT 50
#define THREADS 12
#define SESSIONS 4
/* The whole load must end by then (it takes a few seconds, longer under ASan). */
#define RUN_LIMIT_MS 60000
/* A killed node's calls get their error by then. */
#define KILL_TO_ERROR_MS 10000
/* Redis back: full service by then. */
#define RECOVERY_MS 15000

static ch_cluster cluster;
static cl_run run;
static int run_started;
static int teardown_failures;

static int setup_cluster(void **state)
{
    (void)state;
    memset(&run, 0, sizeof(run));
    run_started = 0;
    if (ch_start(&cluster, NODES, CH_REDIS, NULL) != 0)
        return -1;
    printf("cluster: HAProxy on port %d in front of %d nodes sharing %s\n", ch_lb_port(&cluster),
           NODES, ch_redis_url(&cluster));
    return 0;
}

static int teardown_cluster(void **state)
{
    (void)state;
    if (run_started) {
        /* A test that failed midway: its clients end their calls (each has a deadline). */
        cl_stop(&run);
        if (cl_join(&run, CALL_MS + STEP_MS) != 0)
            fprintf(stderr, "a client thread is still running\n");
        cl_free(&run);
        run_started = 0;
    }
    int rc = ch_stop(&cluster);
    if (rc != 0)
        teardown_failures++;
    return rc;
}

/* ---- Helpers ---- */

/* A line with its long hex runs (session ids, tags) blanked, to tell repeats apart. */
static void line_shape(const char *line, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < size;) {
        size_t h = 0;
        while (i + h < len && strchr("0123456789abcdef", line[i + h]) != NULL)
            h++;
        if (h >= 16) {
            out[n++] = '*';
            i += h;
        } else {
            out[n++] = line[i++];
        }
    }
    out[n] = '\0';
}

/* The last max_lines lines of text to stderr, each run of lines of one shape as its first
 * line and a count, so that a flood of one warning does not hide the rest. */
static void print_tail(const char *text, int max_lines)
{
    enum { MAX = 4096 };
    static const char *start[MAX];
    static size_t len[MAX];
    static int repeats[MAX];
    int n = 0;
    char prev[512] = "", shape[512];
    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        line_shape(p, l, shape, sizeof(shape));
        if (n > 0 && strcmp(shape, prev) == 0) {
            repeats[(n - 1) % MAX]++;
        } else {
            start[n % MAX] = p;
            len[n % MAX] = l;
            repeats[n % MAX] = 0;
            n++;
            memcpy(prev, shape, sizeof(prev));
        }
        p = e ? e + 1 : NULL;
    }
    int from = n > max_lines ? n - max_lines : 0;
    if (from > 0)
        fprintf(stderr, "  (%d lines before)\n", from);
    for (int i = from; i < n; i++) {
        fprintf(stderr, "  %.*s\n", (int)len[i % MAX], start[i % MAX]);
        if (repeats[i % MAX] > 0)
            fprintf(stderr, "  (and %d more lines like it)\n", repeats[i % MAX]);
    }
}

/* The tail of each node's output and of HAProxy's, for a failure's diagnosis. */
static void dump_logs(void)
{
    fflush(stdout);
    for (int i = 0; i < NODES; i++) {
        char *out = ch_node_output(&cluster, i);
        fprintf(stderr, "---- node%d (%s), its output since it started:\n", i,
                ch_node_alive(&cluster, i) ? "alive" : "not running");
        print_tail(out ? out : "", 60);
        free(out);
    }
    char *lb = ch_lb_output(&cluster);
    fprintf(stderr, "---- haproxy, the last of its output:\n");
    print_tail(lb ? lb : "", 20);
    free(lb);
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        dump_logs();                                                                               \
        fail_msg(__VA_ARGS__);                                                                     \
    } while (0)

static unsigned below(uint64_t *rng, unsigned n)
{
    return n == 0 ? 0 : (unsigned)(harness_rand(rng) % n);
}

/*
 * Initializes a session at port (the balancer or a node): initialize, then
 * notifications/initialized. Returns the initialize's status (the session is
 * usable when it is 200); *node gets the node that answered it, body (when not
 * NULL) its body.
 */
static int initialize(int port, char session[33], int *node, char *body, size_t size)
{
    hc_response r;
    char *req = hc_initialize_body(NULL);
    session[0] = '\0';
    *node = -1;
    if (body != NULL && size > 0)
        body[0] = '\0';
    int rc = req != NULL ? hc_mcp_post(port, NULL, NULL, req, &r, STEP_MS) : -1;
    free(req);
    if (rc != 0)
        return -1;
    int status = r.status;
    *node = ch_served_by(&r);
    if (body != NULL && size > 0)
        snprintf(body, size, "%s", r.body ? r.body : "");
    const char *id = hc_header_get(&r, "mcp-session-id");
    if (status == 200 && (id == NULL || strlen(id) != 32))
        status = -2;
    else if (status == 200)
        memcpy(session, id, 33);
    hc_response_free(&r);
    if (status != 200)
        return status;
    rc = hc_mcp_post(port, session, NULL,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r, STEP_MS);
    int ok = rc == 0 && r.status == 202;
    if (rc == 0)
        hc_response_free(&r);
    return ok ? 200 : -3;
}

/* Initializes run.sessions through the balancer. */
static void make_sessions(cl_run *r, int n)
{
    r->n_sessions = n;
    for (int i = 0; i < n; i++) {
        int node;
        int status = initialize(ch_lb_port(&cluster), r->sessions[i], &node, NULL, 0);
        if (status != 200)
            FAIL("initialize through the balancer: got %d", status);
    }
}

/* A ping with the session at port; returns the status, *node and body as initialize. */
static int ping(int port, const char *session, long long id, int *node, char *body, size_t size)
{
    char req[128];
    snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"ping\"}", id);
    hc_response r;
    *node = -1;
    body[0] = '\0';
    if (hc_mcp_post(port, session, "MCP-Protocol-Version: 2025-11-25\r\n", req, &r, STEP_MS) != 0)
        return -1;
    int status = r.status;
    *node = ch_served_by(&r);
    snprintf(body, size, "%s", r.body ? r.body : "");
    hc_response_free(&r);
    return status;
}

/*
 * One notify call (count notifications, then "sent <count>") with the
 * session through the balancer (direct < 0) or to node `direct`, read to its
 * end. Returns 0, or -1 with why in err; *node gets the node that served it.
 */
static int simple_call(const char *session, long long id, int count, int direct, int *node,
                       char *err, size_t size)
{
    char args[64];
    snprintf(args, sizeof(args), "{\"count\":%d}", count);
    char *body = rc_call_body(id, "notify", args, NULL);
    hc_conn c;
    memset(&c, 0, sizeof(c));
    c.fd = -1;
    int port = direct < 0 ? ch_lb_port(&cluster) : ch_node_port(&cluster, direct);
    int status = body ? hc_mcp_post_open(&c, port, session, body, 0, STEP_MS) : -1;
    free(body);
    *node = direct >= 0  ? direct
            : status > 0 ? ch_node_index(hc_header_get(&c.head, "x-mcp-node"))
                         : -1;
    if (status != 200) {
        if (status > 0 && hc_read_body(&c, NULL, STEP_MS) == 0)
            snprintf(err, size, "call %lld: HTTP %d from node%d: %.200s", id, status, *node,
                     c.head.body ? c.head.body : "");
        else
            snprintf(err, size, "call %lld: HTTP %d", id, status);
        hc_close(&c);
        return -1;
    }
    rc_call call;
    rc_call_init(&call, id, count);
    int r = rc_call_read(&c, &call, 0, STEP_MS);
    char want[32];
    snprintf(want, sizeof(want), "sent %d", count);
    const char *text = r == 1 ? rc_result_text(call.result) : NULL;
    int rc = 0;
    if (r != 1 || text == NULL || strcmp(text, want) != 0) {
        snprintf(err, size, "call %lld on node%d: %s (read %d, %lld notifications, result %s)", id,
                 *node, call.err[0] ? call.err : "no result", r, call.next - 1,
                 text ? text : "(none)");
        rc = -1;
    }
    rc_call_free(&call);
    hc_close(&c);
    return rc;
}

/*
 * Calls with the session through the balancer until every node served one (at most
 * 3 * NODES calls), then on each node the balancer did not pick, directly (other
 * clients' requests share the round robin, and can leave a node out of ours):
 * 0, or -1 with why in err.
 */
static int calls_on_every_node(const char *session, long long *next_id, char *err, size_t size)
{
    int served[NODES] = {0}, seen = 0;
    for (int k = 0; k < 3 * NODES && seen < NODES; k++) {
        int node;
        if (simple_call(session, (*next_id)++, 5, -1, &node, err, size) != 0)
            return -1;
        if (node < 0 || node >= NODES) {
            snprintf(err, size, "a call's answer named no node");
            return -1;
        }
        if (served[node]++ == 0)
            seen++;
    }
    for (int i = 0; i < NODES; i++) {
        int node;
        if (served[i] == 0 && simple_call(session, (*next_id)++, 5, i, &node, err, size) != 0)
            return -1;
    }
    return 0;
}

/*
 * A poll_notify call through the balancer, cut and resumed until a node other
 * than its owner served a resume, then read to its end: every notification
 * once and in order. 0, or -1 with why in err.
 */
static int call_resumed_elsewhere(const char *session, long long id, char *err, size_t size)
{
    const int count = 30;
    char args[96];
    snprintf(args, sizeof(args), "{\"count\":%d,\"delay_ms\":10,\"close_after\":0}", count);
    char *body = rc_call_body(id, "poll_notify", args, NULL);
    hc_conn c;
    memset(&c, 0, sizeof(c));
    c.fd = -1;
    int status = body ? hc_mcp_post_open(&c, ch_lb_port(&cluster), session, body, 0, STEP_MS) : -1;
    free(body);
    if (status != 200) {
        snprintf(err, size, "poll_notify %lld: HTTP %d", id, status);
        hc_close(&c);
        return -1;
    }
    int owner = ch_node_index(hc_header_get(&c.head, "x-mcp-node"));
    rc_call call;
    rc_call_init(&call, id, count);
    int rc = -1, elsewhere = 0;
    for (int resumes = 0;; resumes++) {
        int r = rc_call_read(&c, &call, elsewhere || resumes >= 6 ? 0 : 3, STEP_MS);
        if (r == 1) {
            rc = 0;
            break;
        }
        if (r != 2) {
            snprintf(err, size, "poll_notify %lld: read %d after %lld notifications: %s", id, r,
                     call.next - 1, call.err);
            break;
        }
        hc_close(&c);
        status = hc_mcp_get_open(&c, ch_lb_port(&cluster), session, call.last_id, STEP_MS);
        int node = ch_node_index(hc_header_get(&c.head, "x-mcp-node"));
        if (status != 200) {
            if (status > 0)
                hc_read_body(&c, NULL, STEP_MS);
            snprintf(err, size, "poll_notify %lld: resume with %s: HTTP %d from node%d: %.200s", id,
                     call.last_id, status, node, c.head.body ? c.head.body : "");
            break;
        }
        elsewhere |= node >= 0 && node != owner;
    }
    if (rc == 0 && !elsewhere) {
        snprintf(err, size, "poll_notify %lld: no resume landed on another node than node%d", id,
                 owner);
        rc = -1;
    }
    rc_call_free(&call);
    hc_close(&c);
    return rc;
}

/* The load every test runs, before its own settings. */
static void run_init(cl_run *r, uint64_t seed, cl_mode mode, long long id_base)
{
    memset(r, 0, sizeof(*r));
    r->lb_port = ch_lb_port(&cluster);
    r->mode = mode;
    r->threads = THREADS;
    r->calls = CALLS;
    r->count = COUNT;
    r->min_delay_ms = 2;
    r->max_delay_ms = 6;
    r->cut_percent = 70;
    r->max_cuts = 8;
    r->seed = seed;
    r->id_base = id_base;
    r->step_ms = STEP_MS;
    r->call_ms = CALL_MS;
}

static void run_start(cl_run *r)
{
    if (cl_start(r) != 0)
        FAIL("the client threads did not start");
    run_started = 1;
}

/* Stops taking calls and waits for the threads; a hung client fails the test. */
static void run_end(cl_run *r)
{
    cl_stop(r);
    if (cl_join(r, CALL_MS + STEP_MS) != 0)
        FAIL("a client thread hangs: its call did not end within %d ms", CALL_MS + STEP_MS);
}

/* The first failed call, printed and failed. */
static void expect_no_failure(const cl_run *r, uint64_t seed)
{
    for (int i = 0; i < r->n_recs; i++) {
        const cl_call *k = &r->recs[i];
        if (k->outcome == CL_FAILED)
            FAIL("chaos (seed %" PRIu64 "): call %lld (session %d, POST on node%d, stream of node "
                 "number %lld): %s",
                 seed, k->id, k->session, k->post_node, k->owner, k->err);
    }
}

/* Totals over the calls taken. */
typedef struct totals {
    int calls, by_outcome[CL_FAILED + 1];
    long long notifications, cuts, server_cuts, clean_ends, resumes, lb_retries, unavailable;
    long long resumes_on[NODES];
    long long owned_by[NODES];      /* streams whose POST each node took */
    long long foreign[NODES];       /* resumes a node served of a stream another node owned */
    long long matrix[NODES][NODES]; /* [owner's node][node that served the resume] */
} totals;

static void sum_up(const cl_run *r, totals *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < r->n_recs; i++) {
        const cl_call *k = &r->recs[i];
        if (k->outcome == CL_PENDING)
            continue; /* never taken */
        t->calls++;
        t->by_outcome[k->outcome]++;
        t->notifications += k->notifications;
        t->cuts += k->cuts;
        t->server_cuts += k->server_cuts;
        t->clean_ends += k->clean_ends;
        t->resumes += k->resumes;
        t->lb_retries += k->lb_retries;
        t->unavailable += k->unavailable;
        int owner = k->post_node;
        if (owner >= 0 && owner < NODES)
            t->owned_by[owner]++;
        for (int n = 0; n < NODES; n++) {
            t->resumes_on[n] += k->resumes_on[n];
            if (owner >= 0 && owner < NODES) {
                t->matrix[owner][n] += k->resumes_on[n];
                if (n != owner)
                    t->foreign[n] += k->resumes_on[n];
            }
        }
    }
}

static void print_totals(const char *name, const totals *t, long long elapsed)
{
    printf("%s: %d calls in %lld ms: %lld notifications; outcomes:", name, t->calls, elapsed,
           t->notifications);
    for (int o = CL_RESULT; o <= CL_FAILED; o++)
        if (t->by_outcome[o] > 0)
            printf(" %d %s,", t->by_outcome[o], cl_outcome_name((cl_outcome)o));
    printf(" the clients cut %lld connections, the server side %lld (%lld streams ended cleanly "
           "without the answer); %lld resumes (%lld answered by the balancer alone, %lld refused "
           "with 503 and asked again)\n",
           t->cuts, t->server_cuts, t->clean_ends, t->resumes, t->lb_retries, t->unavailable);
    printf("%s: resumes served by each node (rows: the node that took the POST, which owns the "
           "stream):\n",
           name);
    for (int o = 0; o < NODES; o++) {
        printf("  streams of node%d (%lld):", o, t->owned_by[o]);
        for (int n = 0; n < NODES; n++)
            printf(" node%d %lld%s", n, t->matrix[o][n], n == o ? " (own)" : "");
        printf("\n");
    }
    printf("  in all:");
    for (int n = 0; n < NODES; n++)
        printf(" node%d %lld (%lld of other nodes' streams)", n, t->resumes_on[n], t->foreign[n]);
    printf("\n");
}

/* Node numbers (random below 2^20) and the balancer's nodes they belong to. */
#define MAX_NUMBERS 16
typedef struct num_map {
    long long num[MAX_NUMBERS];
    int node[MAX_NUMBERS];
    int n;
} num_map;

/*
 * Each node number of the event ids belongs to one node of the balancer: the
 * node that took the POST owns the stream. Fills m.
 */
static void check_owners(const cl_run *r, num_map *m)
{
    m->n = 0;
    for (int i = 0; i < r->n_recs; i++) {
        const cl_call *k = &r->recs[i];
        if (k->owner < 0 || k->post_node < 0)
            continue;
        int j = 0;
        while (j < m->n && m->num[j] != k->owner)
            j++;
        if (j == m->n) {
            if (m->n == MAX_NUMBERS)
                FAIL("call %lld: node number %lld, more numbers than this test expects", k->id,
                     k->owner);
            m->num[j] = k->owner;
            m->node[j] = k->post_node;
            m->n++;
        } else if (m->node[j] != k->post_node) {
            FAIL("call %lld: its stream is node number %lld's, which node%d ran before; its POST "
                 "went to node%d",
                 k->id, k->owner, m->node[j], k->post_node);
        }
    }
}

/* HAProxy logged the resumes (GET with Last-Event-ID) on the nodes the clients saw. */
static void check_lb_log(const totals *t, int expected_lines)
{
    int got = ch_lb_wait_requests(&cluster, expected_lines, STEP_MS);
    if (got < 0)
        FAIL("HAProxy logged fewer than %d requests", expected_lines);
    ch_lb_request *log = calloc((size_t)got + 64, sizeof(*log));
    assert_non_null(log);
    int n = ch_lb_requests(&cluster, log, (size_t)got + 64);
    long long per_node[NODES] = {0}, total = 0;
    for (int k = 0; k < n && k < got + 64; k++) {
        if (strcmp(log[k].method, "GET") != 0 || log[k].last_id[0] == '\0')
            continue;
        total++;
        if (log[k].node >= 0 && log[k].node < NODES)
            per_node[log[k].node]++;
    }
    free(log);
    printf("HAProxy logged %lld resumes: node0 %lld, node1 %lld, node2 %lld\n", total, per_node[0],
           per_node[1], per_node[2]);
    if (total != t->resumes)
        FAIL("HAProxy logged %lld GETs with Last-Event-ID; the clients sent %lld", total,
             t->resumes);
    for (int i = 0; i < NODES; i++)
        if (per_node[i] != t->resumes_on[i])
            FAIL("HAProxy logged %lld resumes on node%d; the clients saw %lld answered there",
                 per_node[i], i, t->resumes_on[i]);
}

/* Every node is still running, and exits 0 on SIGTERM. */
static void expect_clean_stop(void)
{
    for (int i = 0; i < NODES; i++)
        if (!ch_node_alive(&cluster, i))
            FAIL("node%d is not running any more", i);
    if (ch_stop(&cluster) != 0)
        fail_msg("a node did not exit 0 on SIGTERM (its output is above)");
}

/* ---- 1. Cuts and resumes across nodes ---- */

static void test_chaos_every_event_exactly_once_in_order_across_nodes(void **state)
{
    (void)state;
    uint64_t seed = harness_chaos_seed();
    run_init(&run, seed, CL_STRICT, 1000);
    make_sessions(&run, SESSIONS);
    int lines_before = ch_lb_requests(&cluster, NULL, 0);

    long long t0 = harness_now_ms();
    run_start(&run);
    int done = cl_wait_done(&run, CALLS, RUN_LIMIT_MS);
    run_end(&run);
    long long elapsed = harness_now_ms() - t0;

    totals t;
    sum_up(&run, &t);
    print_totals("chaos", &t, elapsed);
    expect_no_failure(&run, seed);
    if (done < 0 || t.calls != CALLS)
        FAIL("chaos (seed %" PRIu64 "): %d calls of %d ended within %d ms", seed, t.calls, CALLS,
             RUN_LIMIT_MS);
    assert_int_equal(t.by_outcome[CL_RESULT], CALLS);
    assert_int_equal(t.notifications, (long long)CALLS * COUNT);

    num_map nums;
    check_owners(&run, &nums);
    printf("node numbers in the event ids:");
    for (int n = 0; n < nums.n; n++)
        printf(" %lld is node%d", nums.num[n], nums.node[n]);
    printf("\n");

    /* The resumes crossed nodes: each node's streams were resumed on both other nodes. */
    int crossing = 0;
    for (int n = 0; n < NODES; n++)
        crossing += t.foreign[n] > 0;
    if (crossing < 2)
        FAIL("resumes of other nodes' streams landed on %d node(s); expected at least 2", crossing);
    for (int o = 0; o < NODES; o++)
        for (int n = 0; n < NODES; n++)
            if (n != o && t.matrix[o][n] == 0)
                FAIL("no stream of node%d was resumed on node%d (seed %" PRIu64 ")", o, n, seed);
    check_lb_log(&t, lines_before + CALLS + (int)t.resumes);
    expect_clean_stop();
}

/* ---- 2. A node killed mid-run ---- */

/* The node to kill: the one running the most calls that began less than 100 ms ago (their
 * tool has at least 50 notifications, a few ms apart, left to send), -1 when none. */
typedef struct victim {
    long long now;
    uint64_t *rng;
    int node;
    int in_flight[NODES];
} victim;

static void pick_victim(cl_run *r, void *arg)
{
    victim *v = arg;
    int recent[NODES] = {0};
    memset(v->in_flight, 0, sizeof(v->in_flight));
    for (int i = 0; i < r->next; i++) {
        const cl_call *k = &r->recs[i];
        if (k->t_first == 0 || k->t_end != 0 || k->post_node < 0 || k->post_node >= NODES)
            continue;
        v->in_flight[k->post_node]++;
        if (v->now - k->t_first < 100)
            recent[k->post_node]++;
    }
    v->node = -1;
    int start = (int)below(v->rng, NODES);
    for (int j = 0; j < NODES; j++) {
        int n = (start + j) % NODES;
        if (recent[n] > 0 && (v->node < 0 || recent[n] > recent[v->node]))
            v->node = n;
    }
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void test_node_killed_mid_run(void **state)
{
    (void)state;
    uint64_t seed = harness_chaos_seed();
    uint64_t rng = seed | 1;
    run_init(&run, seed, CL_NODE_DIES, 5000);
    /* Longer calls than in the first test: a call that began shortly before the kill is
     * surely still running then. */
    run.min_delay_ms = 3;
    run.max_delay_ms = 6;
    run.cut_percent = 50;
    run.max_cuts = 4;
    make_sessions(&run, SESSIONS);

    long long t0 = harness_now_ms();
    run_start(&run);
    /* The moment: once a random number of calls (a fifth to a half of them) ended. */
    int at = CALLS / 5 + (int)below(&rng, CALLS * 3 / 10);
    victim v = {.rng = &rng, .node = -1};
    for (int tries = 0; v.node < 0; tries++) {
        if (at + tries >= CALLS)
            FAIL("no node had a call that began less than 100 ms before, all along");
        if (cl_wait_done(&run, at + tries, RUN_LIMIT_MS) < 0) {
            run_end(&run);
            expect_no_failure(&run, seed);
            FAIL("the load ended before the kill (seed %" PRIu64 ")", seed);
        }
        /* No POST between its sending and its first event: such a POST, its node dying,
         * has no event id to resume from (another case than this test's). */
        if (cl_gate_close(&run, STEP_MS) != 0)
            FAIL("POSTs under way did not get their first event within %d ms", STEP_MS);
        v.now = harness_now_ms();
        cl_locked(&run, pick_victim, &v);
        if (v.node < 0)
            cl_gate_open(&run); /* then again once one more call ended */
    }
    cl_trouble(&run);
    long long t_kill = harness_now_ms();
    if (ch_kill_node(&cluster, v.node) != 0)
        FAIL("node%d could not be killed", v.node);
    cl_gate_open(&run);
    printf("killed node%d (SIGKILL) %lld ms into the run, after %d calls ended; it was running "
           "%d calls (node0 %d, node1 %d, node2 %d)\n",
           v.node, t_kill - t0, at, v.in_flight[v.node], v.in_flight[0], v.in_flight[1],
           v.in_flight[2]);
    if (ch_restart_node(&cluster, v.node) != 0)
        FAIL("node%d did not start again on port %d", v.node, ch_node_port(&cluster, v.node));
    long long restart_ms = harness_now_ms() - t_kill;

    int done = cl_wait_done(&run, CALLS, RUN_LIMIT_MS);
    run_end(&run);
    long long elapsed = harness_now_ms() - t0;

    totals t;
    sum_up(&run, &t);
    print_totals("node killed", &t, elapsed);
    expect_no_failure(&run, seed);
    if (done < 0 || t.calls != CALLS)
        FAIL("node killed (seed %" PRIu64 "): %d calls of %d ended within %d ms", seed, t.calls,
             CALLS, RUN_LIMIT_MS);

    /* The killed node's number: that of the streams it ran before the kill. */
    num_map nums;
    check_owners(&run, &nums);
    long long killed = -1;
    for (int i = 0; i < run.n_recs; i++) {
        const cl_call *k = &run.recs[i];
        if (k->post_node != v.node || k->t_first == 0 || k->t_first > t_kill)
            continue;
        if (killed >= 0 && k->owner != killed)
            FAIL("node%d ran streams of node numbers %lld and %lld before the kill", v.node, killed,
                 k->owner);
        killed = k->owner;
    }
    if (killed < 0)
        FAIL("no stream of node%d began before the kill", v.node);

    /* Its calls under way end with the error (or, when the tool had finished, the result
     * from Redis); every other call with its result. */
    long long owned = 0, errors = 0, results = 0;
    static long long delays[CALLS];
    for (int i = 0; i < run.n_recs; i++) {
        const cl_call *k = &run.recs[i];
        int in_flight = k->owner == killed && k->t_end > t_kill;
        if (in_flight)
            owned++;
        if (k->outcome == CL_NODE_GONE) {
            if (k->owner != killed)
                FAIL("call %lld (stream of node number %lld, on node%d) ended with the error of "
                     "a node that is gone; node number %lld was killed",
                     k->id, k->owner, k->post_node, killed);
            long long delay = k->t_answer - t_kill;
            if (delay < 0 || delay > KILL_TO_ERROR_MS)
                FAIL("call %lld got the error of its gone node %lld ms after the kill (at most "
                     "%d)",
                     k->id, delay, KILL_TO_ERROR_MS);
            delays[errors++] = delay;
        } else if (k->outcome == CL_RESULT) {
            if (k->notifications != COUNT)
                FAIL("call %lld: %lld notifications", k->id, k->notifications);
            results += in_flight;
        } else {
            FAIL("call %lld ended with %s", k->id, cl_outcome_name(k->outcome));
        }
    }
    qsort(delays, (size_t)errors, sizeof(delays[0]), cmp_ll);
    printf("node killed: node%d was node number %lld, restarted in %lld ms; %lld calls of its "
           "streams were under way: %lld ended with the error of a gone node, %lld with their "
           "result (their tool had finished); kill to error: ",
           v.node, killed, restart_ms, owned, errors, results);
    if (errors > 0)
        printf("min %lld ms, median %lld ms, max %lld ms\n", delays[0], delays[errors / 2],
               delays[errors - 1]);
    else
        printf("none\n");
    if (errors == 0)
        FAIL("no call of the killed node's streams ended with the error of a gone node");

    /* The sessions made before the kill work on every node, the restarted one included. */
    long long id = 90000;
    for (int s = 0; s < run.n_sessions; s++) {
        char err[600];
        if (calls_on_every_node(run.sessions[s], &id, err, sizeof(err)) != 0)
            FAIL("session %d (made before the kill) after the restart: %s", s, err);
    }
    printf("node killed: the %d sessions made before the kill completed calls on every node "
           "after it\n",
           run.n_sessions);
    expect_clean_stop();
}

/* ---- 3. Redis stopped and started again mid-run ---- */

/* A node's answer while Redis is away must be 503 with a JSON-RPC error body. */
static void expect_unavailable(int status, int node, const char *body, const char *what)
{
    long long code = 0;
    if (status != 503 || !cl_is_rpc_error(body, &code))
        FAIL("%s while Redis is down: expected 503 with a JSON-RPC error body, got %d from node%d: "
             "%.300s",
             what, status, node, body);
}

static void test_redis_restart_mid_run(void **state)
{
    (void)state;
    uint64_t seed = harness_chaos_seed();
    uint64_t rng = seed | 1;
    run_init(&run, seed, CL_STORE_DOWN, 20000);
    /* Calls go on until the test says stop. */
    run.calls = 0;
    run.max_calls = 5000;
    run.threads = 8;
    run.min_delay_ms = 2;
    run.max_delay_ms = 5;
    run.cut_percent = 50;
    run.max_cuts = 4;
    make_sessions(&run, SESSIONS);

    /* A session made on node0 and used only there: nodes 1 and 2 do not hold it. */
    char held[33], body[1024];
    int node;
    if (initialize(ch_node_port(&cluster, 0), held, &node, NULL, 0) != 200)
        FAIL("initialize on node0 directly failed");

    run_start(&run);
    if (cl_wait_done(&run, 20, RUN_LIMIT_MS) < 0) {
        run_end(&run);
        expect_no_failure(&run, seed);
        FAIL("the load did not get going (seed %" PRIu64 ")", seed);
    }

    cl_trouble(&run);
    long long t_stop = harness_now_ms();
    if (ch_stop_redis(&cluster) != 0)
        FAIL("redis-server did not exit on SIGTERM");
    long long down_ms = 1000 + below(&rng, 1001);
    long long noticed[NODES];
    for (int i = 0; i < NODES; i++) {
        if (ch_node_wait_output(&cluster, i, "the shared session store cannot be reached", 1,
                                STEP_MS) < 0)
            FAIL("node%d did not say that it lost Redis within %d ms", i, STEP_MS);
        noticed[i] = harness_now_ms() - t_stop;
    }

    /* A new initialize through the balancer, on each node. */
    int init_503 = 0, seen[NODES] = {0}, n_seen = 0;
    for (int k = 0; k < 6 * NODES && n_seen < NODES; k++) {
        char session[33];
        int status = initialize(ch_lb_port(&cluster), session, &node, body, sizeof(body));
        expect_unavailable(status, node, body, "a new initialize through the balancer");
        init_503++;
        if (node >= 0 && node < NODES && seen[node]++ == 0)
            n_seen++;
    }
    if (n_seen < NODES)
        FAIL("%d initializes through the balancer reached %d nodes only", init_503, n_seen);
    /* A request of a session the node does not hold, on each such node. */
    int held_503 = 0;
    for (int i = 1; i < NODES; i++) {
        int status = ping(ch_node_port(&cluster, i), held, 3000 + i, &node, body, sizeof(body));
        expect_unavailable(status, i, body,
                           "a ping of a session node0 holds, sent to another node");
        held_503++;
    }
    int held_status = ping(ch_node_port(&cluster, 0), held, 3000, &node, body, sizeof(body));
    long long checked = harness_now_ms() - t_stop;
    printf("redis down: the nodes said so after %lld, %lld, %lld ms; %d new initializes through "
           "the balancer got 503 (each node answered), %d pings of a session held elsewhere got "
           "503; node0, which holds it, answered its ping %d (%lld ms after the stop)\n",
           noticed[0], noticed[1], noticed[2], init_503, held_503, held_status, checked);

    /* Down for 1 to 2 s (a chosen duration, not a synchronisation). */
    long long left = t_stop + down_ms - harness_now_ms();
    if (left > 0)
        rc_wait_retry((long)left);
    if (ch_start_redis(&cluster) != 0)
        FAIL("redis-server did not start again on port %d", cluster.redis_port);
    long long t_back = harness_now_ms();
    printf("redis down for %lld ms, started again (empty)\n", t_back - t_stop);

    /* Full service: a new session initializes, completes calls on every node, and a stream
     * resumed on another node than its own; asked again (as a client would) until then. */
    long long deadline = t_back + RECOVERY_MS, id = 40000, t_ok = -1;
    int attempts = 0;
    char err[700] = "";
    char fresh[33];
    while (harness_now_ms() < deadline) {
        attempts++;
        int status = initialize(ch_lb_port(&cluster), fresh, &node, body, sizeof(body));
        if (status != 200) {
            snprintf(err, sizeof(err), "initialize through the balancer: %d from node%d: %.300s",
                     status, node, body);
        } else if (calls_on_every_node(fresh, &id, err, sizeof(err)) == 0 &&
                   call_resumed_elsewhere(fresh, id++, err, sizeof(err)) == 0) {
            t_ok = harness_now_ms();
            break;
        }
        rc_wait_retry(100);
    }
    if (t_ok < 0)
        FAIL("redis back (seed %" PRIu64 "): no full service within %d ms (%d attempts); the "
             "last: %s",
             seed, RECOVERY_MS, attempts, err);
    /* Then at once, for more new sessions. */
    for (int s = 0; s < 2; s++) {
        int status = initialize(ch_lb_port(&cluster), fresh, &node, body, sizeof(body));
        if (status != 200)
            FAIL("a new session once Redis was back: initialize got %d from node%d: %.300s", status,
                 node, body);
        if (calls_on_every_node(fresh, &id, err, sizeof(err)) != 0)
            FAIL("a new session once Redis was back: %s", err);
    }
    printf("redis back: full service %lld ms after the restart (%d attempts): new sessions "
           "complete calls on every node, and a stream resumed on another node\n",
           t_ok - t_back, attempts);

    run_end(&run);
    totals t;
    sum_up(&run, &t);
    print_totals("redis restart", &t, harness_now_ms() - t_stop);
    expect_no_failure(&run, seed);

    /* The sessions made before: gone from Redis with its data, written again by the nodes
     * that hold them once it was back, so every node serves them. */
    printf("sessions made before the restart, pinged on each node directly:");
    for (int s = 0; s < run.n_sessions; s++) {
        printf(" session %d:", s);
        for (int i = 0; i < NODES; i++) {
            int status = ping(ch_node_port(&cluster, i), run.sessions[s], 3100 + s * NODES + i,
                              &node, body, sizeof(body));
            if (status != 200)
                FAIL("a ping of a session made before the restart got %d from node%d: %.300s",
                     status, i, body);
            printf(" %d", status);
        }
    }
    printf("; the session only node0 holds:");
    for (int i = 0; i < NODES; i++) {
        int status = ping(ch_node_port(&cluster, i), held, 3200 + i, &node, body, sizeof(body));
        if (status != 200)
            FAIL("a ping of the session node0 holds, after the restart, got %d from node%d: %.300s",
                 status, i, body);
        printf(" %d", status);
    }
    printf("\n");
    expect_clean_stop();
}

int main(void)
{
    /* MCP_CHAOS_TEST=<pattern>: only the tests whose name matches (to replay one). */
    const char *only = getenv("MCP_CHAOS_TEST");
    if (only != NULL && *only != '\0')
        cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chaos_every_event_exactly_once_in_order_across_nodes,
                                        setup_cluster, teardown_cluster),
        cmocka_unit_test_setup_teardown(test_node_killed_mid_run, setup_cluster, teardown_cluster),
        cmocka_unit_test_setup_teardown(test_redis_restart_mid_run, setup_cluster,
                                        teardown_cluster),
    };
    int failed = cmocka_run_group_tests_name("cluster_chaos", tests, NULL, NULL);
    return failed + teardown_failures ? 1 : 0;
}
