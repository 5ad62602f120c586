/* SPDX-License-Identifier: MIT */
/*
 * Tasks (io.modelcontextprotocol/tasks) from libmcp's client, against mcp-everything over
 * real sockets: a tool call the server makes a task of returns its result as if it came
 * at once (polled, its questions answered by the client's elicitation handler with
 * tasks/update), a cancelled call cancels the task, a task outlives its client (another
 * process, mcp, fetches its result), a task expires after its TTL; and on three nodes
 * sharing Redis, a task made through node 1 is answered by nodes 2 and 3, and one whose
 * node is killed is reported failed by the others within a few heartbeats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <mcp/client.h>

#include "cli_run.h"
#include "cluster_host.h"
#include "harness.h"
#include "http_client.h"

#define CONNECT_MS 10000
#define TASKS_EXT "io.modelcontextprotocol/tasks"

static hc_server *live;

/* The client's wait between two polls of its own. */
static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (live != NULL)
        rc = hc_server_stop_check(live, 10000);
    live = NULL;
    return rc;
}

static void start_server(const char *const flags[])
{
    static hc_server srv;
    memset(&srv, 0, sizeof srv);
    assert_int_equal(hc_server_start(&srv, flags, 10000), 0);
    live = &srv;
}

static char url_buf[64];

static const char *server_url(void)
{
    snprintf(url_buf, sizeof url_buf, "http://127.0.0.1:%d/mcp", live->port);
    return url_buf;
}

/* An elicitation handler that accepts with the content the question's schema asks
 * for: "confirm" true, "name" "Ada". Counts its calls. */
static int elicitations;

static json_t *accept_all(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err, (void)user;
    __atomic_add_fetch(&elicitations, 1, __ATOMIC_SEQ_CST);
    json_t *content = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(params, "requestedSchema"), "properties"),
                        key, v)
    {
        const char *type = json_string_value(json_object_get(v, "type"));
        json_object_set_new(content, key,
                            type != NULL && strcmp(type, "boolean") == 0 ? json_true()
                                                                         : json_string("Ada"));
    }
    return json_pack("{s:s, s:o}", "action", "accept", "content", content);
}

/* A client connected to url with elicitation handler (NULL: accept_all), declaring the
 * extension for every call when tasks_for_all. */
static mcp_client *client_with(const char *url, int tasks_for_all, mcp_client_request_fn handler)
{
    mcp_client *c = mcp_client_new("tasks-test", "1.0");
    assert_non_null(c);
    assert_int_equal(mcp_client_on_elicitation(c, handler != NULL ? handler : accept_all, NULL),
                     MCP_OK);
    if (tasks_for_all)
        assert_int_equal(mcp_client_set_extension(c, TASKS_EXT, NULL), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, url, NULL, CONNECT_MS), MCP_OK);
    assert_string_equal(mcp_client_protocol_version(c), "2026-07-28");
    return c;
}

static mcp_client *client_to(const char *url, int tasks_for_all)
{
    return client_with(url, tasks_for_all, NULL);
}

static char task_seen[64];

static void on_task(const char *id, void *user)
{
    (void)user;
    snprintf(task_seen, sizeof task_seen, "%s", id);
}

static const char *text_of(const json_t *result)
{
    const char *t = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    assert_non_null(t);
    return t;
}

/* Waits until on_task has told a task's id (into task_seen), within deadline. */
static void wait_task_seen(long long deadline)
{
    while (__atomic_load_n(&task_seen[0], __ATOMIC_SEQ_CST) == '\0' && harness_now_ms() < deadline)
        pause_ms(10);
    assert_int_equal(strlen(task_seen), 36);
}

/* A task of tool (args stolen) made through url by a client that then goes away (the task
 * stays): its id into out. */
static void make_task(const char *url, const char *tool, json_t *args, char out[64])
{
    mcp_client *c = client_to(url, 1);
    task_seen[0] = '\0';
    mcp_call_opts opts = {.size = sizeof opts, .on_task = on_task};
    long long id = -1;
    assert_int_equal(mcp_client_request_async(
                         c, "tools/call", json_pack("{s:s, s:o}", "name", tool, "arguments", args),
                         &opts, NULL, NULL, &id),
                     MCP_OK);
    long long deadline = harness_now_ms() + 10000;
    wait_task_seen(deadline);
    snprintf(out, 64, "%s", task_seen);
    mcp_client_free(c); /* the connection ends; the task goes on */
}

/* Polls the task through c until its status is want (new reference), failing at
 * deadline or on any status but want and `meanwhile` (NULL: any). */
static json_t *poll_until(mcp_client *c, const char *id, const char *want, const char *meanwhile,
                          long long deadline)
{
    mcp_rpc_error err = {0};
    for (;;) {
        json_t *task = NULL;
        assert_int_equal(mcp_client_task_get(c, id, &task, &err), MCP_OK);
        const char *s = json_string_value(json_object_get(task, "status"));
        assert_non_null(s);
        if (strcmp(s, want) == 0)
            return task;
        if (meanwhile != NULL)
            assert_string_equal(s, meanwhile);
        json_decref(task);
        assert_true(harness_now_ms() < deadline);
        pause_ms(50);
    }
}

/* The call declares the extension for itself: the server makes a task, the client
 * follows it and returns the tool's result; its id was told first. Without the flag the
 * same tool answers at once. A task-only tool without it is -32021. */
static void test_call_as_task(void **state)
{
    (void)state;
    start_server(NULL);
    mcp_client *c = client_to(server_url(), 0);
    task_seen[0] = '\0';
    mcp_call_opts opts = {.size = sizeof opts, .flags = MCP_CALL_TASKS, .on_task = on_task};
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc =
        mcp_client_call_tool(c, "slow_compute", json_pack("{s:i, s:s}", "seconds", 1, "label", "t"),
                             &opts, &result, &err);
    assert_int_equal(rc, MCP_OK);
    assert_string_equal(text_of(result), "Computed t in 1 s");
    assert_null(json_object_get(result, "taskId"));
    json_decref(result);
    assert_int_equal(strlen(task_seen), 36);

    /* The task is still there for anyone who holds its id. */
    json_t *task = NULL;
    assert_int_equal(mcp_client_task_get(c, task_seen, &task, &err), MCP_OK);
    assert_string_equal(json_string_value(json_object_get(task, "status")), "completed");
    json_decref(task);

    task_seen[0] = '\0';
    rc = mcp_client_call_tool(c, "slow_compute", json_pack("{s:i}", "seconds", 0), NULL, &result,
                              &err);
    assert_int_equal(rc, MCP_OK);
    assert_string_equal(text_of(result), "Computed the result in 0 s");
    json_decref(result);
    rc = mcp_client_call_tool(c, "failing_job", NULL, NULL, &result, &err);
    assert_int_equal(rc, MCP_ERPC);
    assert_int_equal(err.code, MCP_RPC_MISSING_CAPABILITY);
    mcp_rpc_error_clear(&err);

    /* A protocol error of the task's handler is the call's error; a tool error its
     * result. */
    rc = mcp_client_call_tool(c, "protocol_error_job", NULL, &opts, &result, &err);
    assert_int_equal(rc, MCP_ERPC);
    assert_int_equal(err.code, MCP_RPC_INTERNAL_ERROR);
    assert_non_null(strstr(err.message, "crashed"));
    mcp_rpc_error_clear(&err);
    rc = mcp_client_call_tool(c, "failing_job", NULL, &opts, &result, &err);
    assert_int_equal(rc, MCP_OK);
    assert_true(json_is_true(json_object_get(result, "isError")));
    json_decref(result);
    mcp_client_free(c);
}

/* The task's questions go to the client's elicitation handler, once each, and the answers
 * back with tasks/update: one question, then two at once. */
static void test_questions(void **state)
{
    (void)state;
    start_server(NULL);
    mcp_client *c = client_to(server_url(), 1);
    __atomic_store_n(&elicitations, 0, __ATOMIC_SEQ_CST);
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, "confirm_delete", json_pack("{s:s}", "filename", "x.txt"),
                                  NULL, &result, &err);
    assert_int_equal(rc, MCP_OK);
    assert_string_equal(text_of(result), "Deleted x.txt");
    json_decref(result);
    assert_int_equal(__atomic_load_n(&elicitations, __ATOMIC_SEQ_CST), 1);
    rc = mcp_client_call_tool(c, "multi_input", NULL, NULL, &result, &err);
    assert_int_equal(rc, MCP_OK);
    assert_string_equal(text_of(result), "Got both answers (name, confirmed)");
    json_decref(result);
    assert_int_equal(__atomic_load_n(&elicitations, __ATOMIC_SEQ_CST), 3);
    /* A Multi Round-Trip round first, then a task. */
    rc = mcp_client_call_tool(c, "test_tool_with_task", NULL, NULL, &result, &err);
    assert_int_equal(rc, MCP_OK);
    assert_string_equal(text_of(result), "Hello, Ada! (from a task)");
    json_decref(result);
    mcp_client_free(c);
}

typedef struct async_box {
    int done;
    int status;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} async_box;

static void async_done(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                       void *user)
{
    (void)c, (void)result, (void)err;
    async_box *b = user;
    pthread_mutex_lock(&b->mu);
    b->status = status;
    b->done = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Waits for the asynchronous call's end: its status. */
static int box_wait(async_box *b, long long deadline)
{
    pthread_mutex_lock(&b->mu);
    while (!b->done)
        assert_int_equal(harness_cond_wait_until(&b->cv, &b->mu, deadline), 1);
    pthread_mutex_unlock(&b->mu);
    return b->status;
}

/* Calls tool `name` with args (stolen) on c without waiting, its answer going to b (made
 * ready here); on_task records the task's id. Returns the request's id. */
static long long call_async(mcp_client *c, async_box *b, const char *name, json_t *args)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
    harness_cond_init_monotonic(&b->cv);
    task_seen[0] = '\0';
    mcp_call_opts opts = {.size = sizeof opts, .on_task = on_task};
    long long id = -1;
    assert_int_equal(mcp_client_request_async(
                         c, "tools/call", json_pack("{s:s, s:o}", "name", name, "arguments", args),
                         &opts, async_done, b, &id),
                     MCP_OK);
    return id;
}

/* mcp_client_cancel of a call that follows a task cancels the task (tasks/cancel): the
 * call ends MCP_ECANCELED and the server's task ends "cancelled", long before its 60 s. */
static void test_cancel(void **state)
{
    (void)state;
    start_server(NULL);
    mcp_client *c = client_to(server_url(), 1);
    async_box b;
    long long id = call_async(c, &b, "slow_compute", json_pack("{s:i}", "seconds", 60));
    long long deadline = harness_now_ms() + 10000;
    wait_task_seen(deadline);
    assert_int_equal(mcp_client_cancel(c, id, "no longer needed"), MCP_OK);
    assert_int_equal(box_wait(&b, deadline), MCP_ECANCELED);
    json_decref(poll_until(c, task_seen, "cancelled", NULL, deadline));
    mcp_client_free(c);
}

/* An elicitation handler that holds its answer until the test lets it go (or 10 s). */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv;
static int held_in, held_go;

static json_t *holding(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    long long deadline = harness_now_ms() + 10000;
    pthread_mutex_lock(&held_mu);
    held_in = 1;
    pthread_cond_broadcast(&held_cv);
    while (!held_go && harness_cond_wait_until(&held_cv, &held_mu, deadline))
        ;
    pthread_mutex_unlock(&held_mu);
    return accept_all(c, params, err, user);
}

/* Cancelled while its handler answers the task's question: the call ends at once, the
 * handler's late answer is dropped (no tasks/update), and the task ends cancelled. */
static void test_cancel_while_answering(void **state)
{
    (void)state;
    start_server(NULL);
    harness_cond_init_monotonic(&held_cv);
    held_in = held_go = 0;
    mcp_client *c = client_with(server_url(), 1, holding);
    async_box b;
    long long id = call_async(c, &b, "confirm_delete", json_pack("{s:s}", "filename", "kept.txt"));
    long long deadline = harness_now_ms() + 10000;
    pthread_mutex_lock(&held_mu);
    while (!held_in)
        assert_int_equal(harness_cond_wait_until(&held_cv, &held_mu, deadline), 1);
    pthread_mutex_unlock(&held_mu);
    assert_int_equal(mcp_client_cancel(c, id, "changed my mind"), MCP_OK);
    assert_int_equal(box_wait(&b, deadline), MCP_ECANCELED); /* with the handler still holding */
    pthread_mutex_lock(&held_mu);
    held_go = 1;
    pthread_cond_broadcast(&held_cv);
    pthread_mutex_unlock(&held_mu);
    json_t *task = poll_until(c, task_seen, "cancelled", NULL, deadline);
    assert_null(json_object_get(task, "result")); /* never deleted */
    json_decref(task);
    mcp_client_free(c);
}

/* A task outlives the client that made it: another process (the mcp program) fetches its
 * result with its id; after the TTL it is gone (-32602). */
static void test_outlives_the_client_then_expires(void **state)
{
    (void)state;
    const char *flags[] = {"--task-ttl", "3000", NULL};
    start_server(flags);
    char id_text[64];
    make_task(server_url(), "slow_compute", json_pack("{s:i, s:s}", "seconds", 1, "label", "kept"),
              id_text);
    mcp_rpc_error err = {0};
    const char *args[] = {"--quiet", server_url(), "tasks", "result", id_text, NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 0);
    cr_expect_contains("mcp tasks result", r.out, "Computed kept in 1 s");
    cr_run_free(&r);

    mcp_client *c = client_to(server_url(), 1);
    long long gone_by = harness_now_ms() + 10000;
    for (;;) {
        json_t *task = NULL;
        int rc = mcp_client_task_get(c, id_text, &task, &err);
        json_decref(task);
        if (rc == MCP_ERPC) {
            assert_int_equal(err.code, MCP_RPC_INVALID_PARAMS);
            mcp_rpc_error_clear(&err);
            break;
        }
        assert_int_equal(rc, MCP_OK);
        assert_true(harness_now_ms() < gone_by);
        pause_ms(100);
    }
    mcp_client_free(c);
}

/* Three nodes sharing Redis: a task made through node 1 is polled through nodes 2 and 3
 * (its questions answered there, and its handler run again wherever the answer came),
 * cancelled through another; a node killed while its tasks run has them reported failed by
 * the others within about three heartbeats. */
static void test_on_three_nodes(void **state)
{
    (void)state;
    static ch_cluster cl;
    memset(&cl, 0, sizeof cl);
    assert_int_equal(ch_start(&cl, 3, CH_REDIS, NULL), 0);
    mcp_client *c1 = client_to(ch_node_url(&cl, 0), 1);
    mcp_client *c2 = client_to(ch_node_url(&cl, 1), 1);
    mcp_client *c3 = client_to(ch_node_url(&cl, 2), 1);

    /* Made on node 1, its question answered and its result fetched through node 3, while
     * node 2 is asked. */
    char made[64];
    make_task(ch_node_url(&cl, 0), "confirm_delete", json_pack("{s:s}", "filename", "spread.txt"),
              made);
    json_t *task = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_task_get(c2, made, &task, &err), MCP_OK);
    json_decref(task);
    json_t *result = NULL;
    assert_int_equal(mcp_client_task_result(c3, made, NULL, &result, &err), MCP_OK);
    assert_string_equal(text_of(result), "Deleted spread.txt");
    json_decref(result);
    assert_int_equal(mcp_client_task_get(c2, made, &task, &err), MCP_OK);
    assert_string_equal(json_string_value(json_object_get(task, "status")), "completed");
    json_decref(task);

    /* Cancelled through node 3 while it runs on node 2. */
    char running[64];
    make_task(ch_node_url(&cl, 1), "slow_compute", json_pack("{s:i}", "seconds", 600), running);
    assert_int_equal(mcp_client_task_cancel(c3, running, &err), MCP_OK);
    long long t0 = harness_now_ms();
    json_decref(poll_until(c1, running, "cancelled", NULL, t0 + 10000));

    /* Node 1 runs two long tasks and is killed: nodes 2 and 3 report them failed. */
    char doomed[2][64];
    for (int i = 0; i < 2; i++)
        make_task(ch_node_url(&cl, 0), "slow_compute", json_pack("{s:i}", "seconds", 600),
                  doomed[i]);
    mcp_client_free(c1);
    assert_int_equal(ch_kill_node(&cl, 0), 0);
    long long killed = harness_now_ms();
    long long seen[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        mcp_client *asker = i == 0 ? c2 : c3;
        /* A heartbeat is 1 s and a node is gone after three missed; a generous bound. */
        task = poll_until(asker, doomed[i], "failed", "working", killed + 20000);
        const char *m =
            json_string_value(json_object_get(json_object_get(task, "error"), "message"));
        assert_non_null(strstr(m, "stopped before it ended"));
        json_decref(task);
        seen[i] = harness_now_ms() - killed;
    }
    printf("the killed node's tasks were reported failed after %lld and %lld ms\n", seen[0],
           seen[1]);
    mcp_client_free(c2);
    mcp_client_free(c3);
    ch_stop(&cl); /* node 1 died by SIGKILL: its exit is not 0 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_call_as_task, teardown),
        cmocka_unit_test_teardown(test_questions, teardown),
        cmocka_unit_test_teardown(test_cancel, teardown),
        cmocka_unit_test_teardown(test_cancel_while_answering, teardown),
        cmocka_unit_test_teardown(test_outlives_the_client_then_expires, teardown),
        cmocka_unit_test(test_on_three_nodes),
    };
    return cmocka_run_group_tests_name("client_tasks", tests, NULL, NULL) ? 1 : 0;
}
