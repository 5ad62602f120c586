/* SPDX-License-Identifier: MIT */
/*
 * Tasks (io.modelcontextprotocol/tasks) attacked. One principal creates tasks as fast as it
 * can: at the bound (--max-tasks) the rest are refused with -32000 and nothing is made,
 * the server's memory stays bounded, and once the TTL has passed the tasks are forgotten,
 * room is made again and RSS comes back near where it was. A principal that guesses task
 * ids, or holds another principal's, finds nothing of it (-32602, as for an id never
 * made) on one node (the memory store) and on three nodes sharing Redis, and cannot
 * answer or cancel it; its owner still can.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster_host.h"
#include "harness.h"
#include "http_expect.h"
#include "jwt_tokens.h"
#include "modern_host.h"

#define RESOURCE "https://mcp.example.test/mcp"
#define ISSUER "https://as.example.test"
#define TASKS_CAPS "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"

static long long next_id = 1;

/* One request (stolen) on an open keep-alive connection c to port, with extra headers: its
 * one response message (new reference). */
static json_t *exchange(hc_conn *c, int port, json_t *req, const char *extra)
{
    char headers[4096];
    mh_headers(req, extra, headers, sizeof headers);
    char *body = json_dumps(req, JSON_COMPACT);
    assert_non_null(body);
    assert_int_equal(hc_send_request(c, port, "POST", "/mcp", headers, body, 5000), 0);
    free(body);
    hc_response r;
    memset(&r, 0, sizeof r);
    assert_int_equal(hc_read_response(c, &r, 10000), 0);
    json_t *msgs = mh_messages(&r, json_string_value(json_object_get(req, "method")));
    hc_response_free(&r);
    json_decref(req);
    json_t *m = json_incref(json_array_get(msgs, json_array_size(msgs) - 1));
    json_decref(msgs);
    return m;
}

static json_t *slow_call(int seconds)
{
    return mh_request(
        next_id++, "tools/call",
        json_pack("{s:s, s:{s:i}}", "name", "slow_compute", "arguments", "seconds", seconds),
        TASKS_CAPS);
}

static long rss_after_settling(hc_server *s)
{
    /* The RSS of a process that has freed what it held settles within a few reads. */
    long best = hc_server_rss_kb(s);
    for (int i = 0; i < 5; i++) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        long v = hc_server_rss_kb(s);
        if (v < best)
            best = v;
    }
    return best;
}

/* Waits out the TTL of the last task made at last_ms (every task before it then has
 * expired too), then makes tasks until one is made again (the server's sweep, each
 * second, has forgotten them), within timeout_ms of then. */
static void wait_for_room(hc_conn *c, int port, long long last_ms, int ttl_ms, int timeout_ms)
{
    long long expired = last_ms + ttl_ms;
    while (harness_now_ms() < expired) {
        long long left = expired - harness_now_ms();
        struct timespec ts = {left / 1000, (left % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        json_t *req = slow_call(0);
        json_t *m = exchange(c, port, req, NULL);
        int ok = json_object_get(m, "error") == NULL;
        json_decref(m);
        if (ok)
            return;
        assert_true(harness_now_ms() < deadline);
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* 100,000 creations from one principal (the anonymous one), at --max-tasks 1000 and a TTL
 * of 10 s: the first 1,000 make tasks and the next are refused, and over the whole flood
 * no more than 1,000 are made in any TTL; memory stays bounded; after the TTL every task
 * is forgotten, there is room again, and RSS comes back. */
static void test_a_flood_of_creations_stops_at_the_bound(void **state)
{
    (void)state;
    static hc_server srv;
    hc_asan_small_quarantine(4);
    const int ttl_ms = 10000, bound = 1000;
    const char *flags[] = {"--max-tasks", "1000", "--task-ttl", "10000", NULL};
    assert_int_equal(hc_server_start(&srv, flags, 10000), 0);
    hc_conn c;
    assert_int_equal(hc_connect(&c, srv.port, 5000), 0);
    /* The code paths warmed up with the anonymous principal's first task. */
    long long first = harness_now_ms();
    json_decref(exchange(&c, srv.port, slow_call(0), NULL));
    long idle = rss_after_settling(&srv);
    const int n = UNDER_ASAN ? 20000 : 100000;
    int made = 1, refused = 0, other = 0, first_refused = 0;
    long long t0 = harness_now_ms(), last_made = t0;
    long peak = idle;
    for (int i = 1; i < n; i++) {
        json_t *m = exchange(&c, srv.port, slow_call(0), NULL);
        json_t *err = json_object_get(m, "error");
        const char *type =
            json_string_value(json_object_get(json_object_get(m, "result"), "resultType"));
        if (err == NULL && type != NULL && strcmp(type, "task") == 0) {
            made++;
            last_made = harness_now_ms();
        } else if (err != NULL && json_integer_value(json_object_get(err, "code")) == -32000 &&
                   strstr(json_string_value(json_object_get(err, "message")) ?: "",
                          "Too many tasks") != NULL) {
            if (refused++ == 0)
                first_refused = i;
        } else {
            other++;
        }
        json_decref(m);
        if (i % 5000 == 0) {
            long v = hc_server_rss_kb(&srv);
            if (v > peak)
                peak = v;
        }
    }
    long long took = harness_now_ms() - t0;
    printf("%d creations from one principal in %lld ms: %d tasks made, %d refused with -32000 "
           "(the first at #%d), %d other; RSS idle %ld KiB, peak %ld KiB\n",
           n, took, made, refused, first_refused, other, idle, peak);
    assert_int_equal(other, 0);
    assert_int_equal(first_refused, bound);
    /* Since the first was made: at most the bound alive at once, so at most the bound
     * for each TTL begun. */
    assert_true(made <= bound * (int)((harness_now_ms() - first) / ttl_ms + 1));
    /* Small records: a few MiB at most (the byte budget bounds bigger ones). */
    assert_true(peak - idle < 32 * 1024);

    /* After the TTL of the last one made and the server's sweep (each second): every
     * task is forgotten, and a new one can be made. */
    wait_for_room(&c, srv.port, last_made, ttl_ms, 20000);
    long base = rss_after_settling(&srv);

    /* Large tasks: 999 with 16 KiB arguments (and as large a result), about 32 MiB of
     * records. After their TTL the memory goes back. */
    char *label = malloc(16385);
    assert_non_null(label);
    memset(label, 'x', 16384);
    label[16384] = '\0';
    int big = 0;
    for (int i = 0; i < bound - 1; i++) {
        json_t *req = mh_request(next_id++, "tools/call",
                                 json_pack("{s:s, s:{s:i, s:s}}", "name", "slow_compute",
                                           "arguments", "seconds", 0, "label", label),
                                 TASKS_CAPS);
        json_t *m = exchange(&c, srv.port, req, NULL);
        big += json_object_get(m, "error") == NULL;
        last_made = harness_now_ms();
        json_decref(m);
    }
    free(label);
    /* Their results are in once each handler has run: wait for the last one. */
    long loaded = 0;
    for (int i = 0; i < 20; i++) {
        long v = rss_after_settling(&srv);
        if (v > loaded)
            loaded = v;
    }
    wait_for_room(&c, srv.port, last_made, ttl_ms, 20000);
    hc_close(&c);
    long after = rss_after_settling(&srv);
    printf("%d tasks of 16 KiB arguments and results: RSS %ld KiB before, %ld KiB with them, %ld "
           "KiB after their TTL\n",
           big, base, loaded, after);
    assert_int_equal(big, bound - 1);
    assert_true(loaded - base > 16 * 1024);
    /* Under the sanitizers the allocator is ASan's, which keeps what is freed (its
     * quarantine, its own caches): what goes back to the system is the normal build's. */
    if (!UNDER_ASAN)
        assert_true(after - base < (loaded - base) / 4);
    assert_int_equal(hc_server_stop_check(&srv, 10000), 0);
}

/* ---- Two principals ---- */

typedef struct fixture {
    hc_server keys; /* server_auth serving the JWKS */
    ch_cluster cluster;
    char jwks_path[64];
    cjose_jwk_t *key;
    int nodes;
} fixture;

static int start_auth(void **state, int nodes)
{
    fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->nodes = nodes;
    f->key = jt_make_key(1, "tasks-key");
    snprintf(f->jwks_path, sizeof(f->jwks_path), "/tmp/mcp-tasks-jwks-%d.json", (int)getpid());
    jt_write_jwks(f->jwks_path, &f->key, 1);
    const char *kflags[] = {"--jwks-file", f->jwks_path, NULL};
    if (hc_server_start_program(&f->keys, "server_auth", 0, kflags, NULL, HX_START_MS) != 0)
        return -1;
    char uri[128];
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/jwks", f->keys.port);
    const char *args[] = {
        "--auth-resource", RESOURCE, "--auth-issuer", ISSUER, "--auth-jwks-uri", uri, NULL};
    if (ch_start(&f->cluster, nodes, nodes > 1 ? CH_REDIS : CH_NO_REDIS, args) != 0) {
        hc_server_stop_check(&f->keys, HX_STOP_MS);
        return -1;
    }
    *state = f;
    return 0;
}

static int setup_one(void **state)
{
    return start_auth(state, 1);
}

static int setup_three(void **state)
{
    return start_auth(state, 3);
}

static int teardown_auth(void **state)
{
    fixture *f = *state;
    int rc = ch_stop(&f->cluster);
    if (hc_server_stop_check(&f->keys, HX_STOP_MS) != 0)
        rc = -1;
    unlink(f->jwks_path);
    cjose_jwk_release(f->key);
    free(f);
    return rc;
}

/* "Authorization: Bearer ...\r\n" for sub (malloc'd). */
static char *auth_header(fixture *f, const char *sub)
{
    char *token = jt_sign(f->key, "RS256", "at+jwt", NULL,
                          jt_claims(ISSUER, RESOURCE, sub, 600, "mcp:tools"));
    char *h = NULL;
    assert_true(asprintf(&h, "Authorization: Bearer %s\r\n", token) > 0);
    free(token);
    return h;
}

/* One request as sub to node i: its response message. */
static json_t *as(fixture *f, const char *sub, int node, json_t *req)
{
    int port = ch_node_port(&f->cluster, node);
    hc_conn c;
    assert_int_equal(hc_connect(&c, port, 5000), 0);
    char *h = auth_header(f, sub);
    json_t *m = exchange(&c, port, req, h);
    free(h);
    hc_close(&c);
    return m;
}

static json_t *task_req(const char *method, const char *id)
{
    json_t *params = json_pack("{s:s}", "taskId", id);
    if (strcmp(method, "tasks/update") == 0)
        json_object_set_new(params, "inputResponses",
                            json_pack("{s:{s:s}}", "confirm", "action", "accept"));
    return mh_request(next_id++, method, params, TASKS_CAPS);
}

static int error_code(const json_t *m)
{
    return (int)json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
}

static void test_another_principals_task_is_not_there(void **state)
{
    fixture *f = *state;
    json_t *m = as(f, "alice", 0, slow_call(60));
    const char *id0 = json_string_value(json_object_get(json_object_get(m, "result"), "taskId"));
    assert_non_null(id0);
    char id[64];
    snprintf(id, sizeof id, "%s", id0);
    json_decref(m);
    m = as(
        f, "alice", 0,
        mh_request(next_id++, "tools/call",
                   json_pack("{s:s, s:{s:s}}", "name", "confirm_delete", "arguments", "filename",
                             "alice.txt"),
                   "{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"));
    char asking[64];
    snprintf(asking, sizeof asking, "%s",
             json_string_value(json_object_get(json_object_get(m, "result"), "taskId")));
    json_decref(m);

    /* Bob, on every node: each method finds nothing, with the words of an unknown id. */
    const char *methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
    for (int node = 0; node < f->nodes; node++) {
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 2; k++) {
                m = as(f, "bob", node, task_req(methods[i], k == 0 ? id : asking));
                assert_int_equal(error_code(m), MCP_RPC_INVALID_PARAMS);
                json_decref(m);
            }
        }
    }
    /* Guessing: ids near Alice's (one digit changed) and random ones. */
    int found = 0;
    const int guesses = UNDER_ASAN ? 300 : 2000;
    hc_conn c;
    int port = ch_node_port(&f->cluster, f->nodes - 1);
    assert_int_equal(hc_connect(&c, port, 5000), 0);
    char *h = auth_header(f, "bob");
    for (int g = 0; g < guesses; g++) {
        char guess[64];
        snprintf(guess, sizeof guess, "%s", id);
        if (g < 32) {
            int at = g + (g >= 8) + (g >= 12) + (g >= 16) + (g >= 20);
            guess[at] = guess[at] == '0' ? '1' : '0';
        } else {
            snprintf(guess, sizeof guess, "%08x-%04x-4%03x-a%03x-%012llx", (unsigned)random(),
                     (unsigned)random() & 0xffff, (unsigned)random() & 0xfff,
                     (unsigned)random() & 0xfff,
                     ((unsigned long long)random() << 16 | (unsigned)random()) & 0xffffffffffffULL);
        }
        json_t *req = task_req("tasks/get", guess);
        m = exchange(&c, port, req, h);
        if (json_object_get(m, "result") != NULL)
            found++;
        else
            assert_int_equal(error_code(m), MCP_RPC_INVALID_PARAMS);
        json_decref(m);
    }
    free(h);
    hc_close(&c);
    printf("%d nodes: %d guesses of task ids by another principal, %d found\n", f->nodes, guesses,
           found);
    assert_int_equal(found, 0);

    /* Alice still has both, untouched, on every node, and cancels them. */
    for (int node = 0; node < f->nodes; node++) {
        m = as(f, "alice", node, task_req("tasks/get", id));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(m, "result"), "status")), "working");
        json_decref(m);
    }
    for (int k = 0; k < 2; k++) {
        m = as(f, "alice", f->nodes - 1, task_req("tasks/cancel", k == 0 ? id : asking));
        assert_null(json_object_get(m, "error"));
        json_decref(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_flood_of_creations_stops_at_the_bound),
        cmocka_unit_test_setup_teardown(test_another_principals_task_is_not_there, setup_one,
                                        teardown_auth),
        cmocka_unit_test_setup_teardown(test_another_principals_task_is_not_there, setup_three,
                                        teardown_auth),
    };
    return cmocka_run_group_tests_name("tasks_hostile", tests, NULL, NULL) ? 1 : 0;
}
