/* SPDX-License-Identifier: MIT */
/*
 * Tasks (the extension io.modelcontextprotocol/tasks) on the server, over real sockets
 * against mcp-everything --http: the extension text's own flow (create, poll, an input
 * round, cancel), partial answers, the errors it names (-32021 for a client that did not
 * declare it, -32602 for an unknown task or a bad answer, -32020 for an Mcp-Name that
 * names another task), expiry after the TTL, and the bound on tasks a principal
 * holds. Every wait polls with a deadline; nothing sleeps to synchronise.
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

#include "harness.h"
#include "inproc_host.h"
#include "modern_host.h"

#define TASKS_CAPS "{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
#define POLL_MS 50

static hc_server *live;

/* The client's wait between two tasks/get (the protocol's own polling). */
static void pause_between_polls(void)
{
    struct timespec ts = {0, POLL_MS * 1000000L};
    nanosleep(&ts, NULL);
}
static long long next_id = 1;

static int start(void **state, const char *const flags[])
{
    (void)state;
    static hc_server srv;
    memset(&srv, 0, sizeof srv);
    if (hc_server_start(&srv, flags, MH_WAIT_MS) != 0)
        return -1;
    live = &srv;
    return 0;
}

static int setup(void **state)
{
    return start(state, NULL);
}

static int teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (live != NULL)
        rc = hc_server_stop_check(live, MH_WAIT_MS);
    live = NULL;
    return rc;
}

/* A request of revision 2026-07-28 with the given capabilities; the response's result
 * (code 0) or error (code given), after the HTTP status is checked. */
static json_t *call_as(const char *caps, const char *method, json_t *params, int status, int code)
{
    long long id = next_id++;
    json_t *req = mh_request(id, method, params, caps);
    hc_response r;
    assert_int_equal(mh_post(live->port, req, NULL, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, status, code, id, method);
    hc_response_free(&r);
    json_t *out = json_incref(json_object_get(resp, code ? "error" : "result"));
    json_decref(resp);
    return out;
}

static json_t *call(const char *method, json_t *params)
{
    return call_as(TASKS_CAPS, method, params, 200, 0);
}

static json_t *tool(const char *name, const char *args_json)
{
    json_t *args = json_loads(args_json, 0, NULL);
    assert_non_null(args);
    return call("tools/call", json_pack("{s:s, s:o}", "name", name, "arguments", args));
}

static json_t *get(const char *id)
{
    return call("tasks/get", json_pack("{s:s}", "taskId", id));
}

static const char *str(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (v == NULL) {
        char *t = json_dumps(o, JSON_COMPACT);
        fail_msg("no string \"%s\" in %s", key, t);
    }
    return v;
}

/* Polls tasks/get until the status is want (or terminal), within timeout_ms. */
static json_t *wait_status(const char *id, const char *want, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        json_t *t = get(id);
        const char *s = str(t, "status");
        if (strcmp(s, want) == 0 || strcmp(s, "completed") == 0 || strcmp(s, "failed") == 0 ||
            strcmp(s, "cancelled") == 0 || harness_now_ms() > deadline)
            return t;
        json_decref(t);
        pause_between_polls();
    }
}

static char *create(const char *name, const char *args_json)
{
    json_t *r = tool(name, args_json);
    assert_string_equal(str(r, "resultType"), "task");
    char *id = strdup(str(r, "taskId"));
    json_decref(r);
    return id;
}

/* The CreateTaskResult is flat and exact (the extension's example): a v4 UUID id,
 * "working", two timestamps, integer ttlMs and pollIntervalMs, and nothing of a
 * DetailedTask or of MRTR. tasks/get right after finds it; it completes with the
 * tool's own result inlined. */
static void test_create_poll_complete(void **state)
{
    (void)state;
    json_t *r = tool("slow_compute", "{\"seconds\":1,\"label\":\"vector\"}");
    assert_string_equal(str(r, "resultType"), "task");
    assert_string_equal(str(r, "status"), "working");
    const char *id = str(r, "taskId");
    assert_int_equal(strlen(id), 36);
    assert_int_equal(id[14], '4');
    assert_true(strchr("89ab", id[19]) != NULL);
    assert_int_equal(strlen(str(r, "createdAt")), 24);
    assert_true(str(r, "createdAt")[10] == 'T' && str(r, "lastUpdatedAt")[23] == 'Z');
    assert_true(json_is_integer(json_object_get(r, "ttlMs")));
    assert_int_equal(json_integer_value(json_object_get(r, "ttlMs")), 3600000);
    assert_int_equal(json_integer_value(json_object_get(r, "pollIntervalMs")), 1000);
    const char *forbidden[] = {"task",         "result", "error",       "inputRequests",
                               "requestState", "ttl",    "pollInterval"};
    for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++)
        if (json_object_get(r, forbidden[i]) != NULL)
            fail_msg("CreateTaskResult carries \"%s\"", forbidden[i]);
    char *tid = strdup(id);
    json_decref(r);

    json_t *t = get(tid);
    assert_string_equal(str(t, "resultType"), "complete");
    assert_string_equal(str(t, "taskId"), tid);
    assert_string_equal(str(t, "status"), "working");
    assert_null(json_object_get(t, "result"));
    json_decref(t);

    t = wait_status(tid, "completed", 10000);
    assert_string_equal(str(t, "status"), "completed");
    json_t *res = json_object_get(t, "result");
    assert_string_equal(str(json_array_get(json_object_get(res, "content"), 0), "text"),
                        "Computed vector in 1 s");
    assert_null(json_object_get(t, "error"));
    json_decref(t);
    free(tid);
}

/* The extension's example flow: a question from inside the task (input_required, the
 * same inputRequests on every poll), tasks/update with the answer (an empty ack), then
 * the result that used it. */
static void test_input_round(void **state)
{
    (void)state;
    char *id = create("confirm_delete", "{\"filename\":\"notes.txt\"}");
    json_t *t = wait_status(id, "input_required", 10000);
    assert_string_equal(str(t, "status"), "input_required");
    json_t *q = json_object_get(json_object_get(t, "inputRequests"), "confirm");
    assert_non_null(q);
    assert_string_equal(str(q, "method"), "elicitation/create");
    json_t *again = get(id);
    assert_true(
        json_equal(json_object_get(t, "inputRequests"), json_object_get(again, "inputRequests")));
    json_decref(again);
    json_decref(t);

    json_t *ack = call("tasks/update",
                       json_pack("{s:s, s:{s:{s:s, s:{s:b}}}}", "taskId", id, "inputResponses",
                                 "confirm", "action", "accept", "content", "confirm", 1));
    assert_string_equal(str(ack, "resultType"), "complete");
    assert_null(json_object_get(ack, "taskId"));
    assert_null(json_object_get(ack, "status"));
    json_decref(ack);
    t = wait_status(id, "completed", 10000);
    assert_string_equal(str(t, "status"), "completed");
    assert_string_equal(
        str(json_array_get(json_object_get(json_object_get(t, "result"), "content"), 0), "text"),
        "Deleted notes.txt");
    json_decref(t);
    free(id);
}

/* Two questions at once: answering one leaves the other outstanding (and the task
 * input_required); an answer of the wrong shape is refused whole and changes nothing;
 * unknown keys are ignored; the second answer completes it. */
static void test_partial_and_bad_answers(void **state)
{
    (void)state;
    char *id = create("multi_input", "{}");
    json_t *t = wait_status(id, "input_required", 10000);
    assert_int_equal(json_object_size(json_object_get(t, "inputRequests")), 2);
    json_decref(t);

    json_t *err = call_as(
        TASKS_CAPS, "tasks/update",
        json_pack("{s:s, s:{s:{s:s}}}", "taskId", id, "inputResponses", "name", "action", "maybe"),
        200, MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(str(err, "message"), "inputResponses.name"));
    json_decref(err);
    t = get(id);
    assert_int_equal(json_object_size(json_object_get(t, "inputRequests")), 2);
    json_decref(t);

    json_decref(
        call("tasks/update", json_pack("{s:s, s:{s:{s:s, s:{s:s}}, s:{s:b}}}", "taskId", id,
                                       "inputResponses", "name", "action", "accept", "content",
                                       "name", "Ada", "never-asked", "ignored", 1)));
    t = get(id);
    assert_string_equal(str(t, "status"), "input_required");
    json_t *left = json_object_get(t, "inputRequests");
    assert_int_equal(json_object_size(left), 1);
    assert_non_null(json_object_get(left, "confirm"));
    json_decref(t);

    json_decref(call("tasks/update", json_pack("{s:s, s:{s:{s:s}}}", "taskId", id, "inputResponses",
                                               "confirm", "action", "decline")));
    t = wait_status(id, "completed", 10000);
    assert_string_equal(
        str(json_array_get(json_object_get(json_object_get(t, "result"), "content"), 0), "text"),
        "Got both answers (name, not confirmed)");
    json_decref(t);
    free(id);
}

/* tasks/cancel: an empty ack, the handler sees it, the task ends cancelled; cancelling
 * it again (terminal) is the same ack; a task waiting for input is cancelled at once. */
static void test_cancel(void **state)
{
    (void)state;
    char *id = create("slow_compute", "{\"seconds\":60}");
    long long t0 = harness_now_ms();
    json_t *ack = call("tasks/cancel", json_pack("{s:s}", "taskId", id));
    assert_string_equal(str(ack, "resultType"), "complete");
    assert_int_equal(json_object_size(ack), 2); /* resultType and _meta */
    json_decref(ack);
    json_t *t = wait_status(id, "cancelled", 10000);
    assert_string_equal(str(t, "status"), "cancelled");
    assert_true(harness_now_ms() - t0 < 30000);
    json_decref(t);
    json_decref(call("tasks/cancel", json_pack("{s:s}", "taskId", id)));
    free(id);

    id = create("confirm_delete", "{\"filename\":\"x\"}");
    json_decref(wait_status(id, "input_required", 10000));
    json_decref(call("tasks/cancel", json_pack("{s:s}", "taskId", id)));
    t = get(id);
    assert_string_equal(str(t, "status"), "cancelled");
    assert_null(json_object_get(t, "inputRequests"));
    json_decref(t);
    free(id);
}

/* A tool error is "completed" with isError; a JSON-RPC error of the handler is "failed"
 * with that error and no result. */
static void test_failures(void **state)
{
    (void)state;
    char *id = create("failing_job", "{}");
    json_t *t = wait_status(id, "completed", 10000);
    assert_string_equal(str(t, "status"), "completed");
    assert_true(json_is_true(json_object_get(json_object_get(t, "result"), "isError")));
    json_decref(t);
    free(id);
    id = create("protocol_error_job", "{}");
    t = wait_status(id, "failed", 10000);
    assert_string_equal(str(t, "status"), "failed");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(t, "error"), "code")),
                     MCP_RPC_INTERNAL_ERROR);
    assert_null(json_object_get(t, "result"));
    json_decref(t);
    free(id);
}

/* A client that did not declare the extension: the tasks methods and a task-only tool are -32021
 * (HTTP 400) naming it, an optional one runs at once; unknown ids are -32602 and a
 * routing header that names another task -32020. */
static void test_errors(void **state)
{
    (void)state;
    const char *plain = "{\"elicitation\":{}}";
    const char *methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
    for (int i = 0; i < 3; i++) {
        json_t *e =
            call_as(plain, methods[i], json_pack("{s:s, s:{}}", "taskId", "x", "inputResponses"),
                    400, MCP_RPC_MISSING_CAPABILITY);
        assert_non_null(json_object_get(
            json_object_get(json_object_get(json_object_get(e, "data"), "requiredCapabilities"),
                            "extensions"),
            "io.modelcontextprotocol/tasks"));
        json_decref(e);
    }
    json_decref(call_as(plain, "tools/call",
                        json_pack("{s:s, s:{}}", "name", "failing_job", "arguments"), 400,
                        MCP_RPC_MISSING_CAPABILITY));
    json_t *r = call_as(
        plain, "tools/call",
        json_pack("{s:s, s:{s:i}}", "name", "slow_compute", "arguments", "seconds", 0), 200, 0);
    assert_string_equal(str(r, "resultType"), "complete");
    assert_null(json_object_get(r, "taskId"));
    json_decref(r);
    json_decref(call_as(TASKS_CAPS, "tasks/get",
                        json_pack("{s:s}", "taskId", "00000000-0000-4000-8000-000000000000"), 200,
                        MCP_RPC_INVALID_PARAMS));
    long long nid = next_id++;
    json_t *nreq = mh_request(nid, "tasks/get", json_pack("{s:i}", "taskId", 7), TASKS_CAPS);
    hc_response nr;
    assert_int_equal(mh_post(live->port, nreq, "Mcp-Name: 7\r\n", &nr), 0);
    json_decref(mh_expect(&nr, 200, MCP_RPC_INVALID_PARAMS, nid, "a taskId that is a number"));
    hc_response_free(&nr);
    json_decref(nreq);
    json_decref(call_as(TASKS_CAPS, "tasks/list", NULL, 404, MCP_RPC_METHOD_NOT_FOUND));
    json_decref(call_as(TASKS_CAPS, "tasks/result", json_pack("{s:s}", "taskId", "x"), 404,
                        MCP_RPC_METHOD_NOT_FOUND));

    char *id = create("slow_compute", "{\"seconds\":0}");
    long long rid = next_id++;
    json_t *req = mh_request(rid, "tasks/get", json_pack("{s:s}", "taskId", id), TASKS_CAPS);
    char headers[2048];
    /* mh_headers names the task; a second Mcp-Name would be ambiguous, so write them. */
    snprintf(headers, sizeof headers,
             HC_MCP_POST_HEADERS "MCP-Protocol-Version: " MH_VERSION "\r\n"
                                 "Mcp-Method: tasks/get\r\nMcp-Name: another-task\r\n");
    char *body = json_dumps(req, JSON_COMPACT);
    hc_response resp;
    assert_int_equal(mh_post_raw(live->port, headers, body, &resp), 0);
    json_decref(mh_expect(&resp, 400, MCP_RPC_HEADER_MISMATCH, rid, "a wrong Mcp-Name"));
    hc_response_free(&resp);
    snprintf(headers, sizeof headers,
             HC_MCP_POST_HEADERS "MCP-Protocol-Version: " MH_VERSION "\r\n"
                                 "Mcp-Method: tasks/get\r\n");
    /* Without one it is served (a server checks the routing header when it comes). */
    assert_int_equal(mh_post_raw(live->port, headers, body, &resp), 0);
    json_decref(mh_expect(&resp, 200, 0, rid, "no Mcp-Name"));
    hc_response_free(&resp);
    free(body);
    json_decref(req);
    free(id);
}

/* A task and its result are kept ttlMs, then forgotten (-32602); a running handler is
 * cancelled at its expiry. With --max-tasks 3, a fourth task is refused with -32000 and
 * nothing is made, until the first ones expire. */
static void test_ttl_and_bound(void **state)
{
    (void)state;
    assert_int_equal(teardown(state), 0);
    const char *flags[] = {"--task-ttl", "1500", "--max-tasks", "3", NULL};
    assert_int_equal(start(state, flags), 0);
    char *done = create("slow_compute", "{\"seconds\":0}");
    char *running = create("slow_compute", "{\"seconds\":600}");
    char *third = create("slow_compute", "{\"seconds\":0}");
    json_t *t = wait_status(done, "completed", 5000);
    assert_int_equal(json_integer_value(json_object_get(t, "ttlMs")), 1500);
    json_decref(t);
    json_t *e =
        call_as(TASKS_CAPS, "tools/call",
                json_pack("{s:s, s:{s:i}}", "name", "slow_compute", "arguments", "seconds", 0), 200,
                MCP_RPC_SERVER_ERROR);
    assert_non_null(strstr(str(e, "message"), "Too many tasks"));
    json_decref(e);
    /* Expired: every id is unknown, and there is room again. */
    long long deadline = harness_now_ms() + 10000;
    const char *ids[] = {done, running, third};
    for (int i = 0; i < 3; i++) {
        for (;;) {
            long long id = next_id++;
            json_t *req =
                mh_request(id, "tasks/get", json_pack("{s:s}", "taskId", ids[i]), TASKS_CAPS);
            hc_response r;
            assert_int_equal(mh_post(live->port, req, NULL, &r), 0);
            json_decref(req);
            json_t *msgs = mh_messages(&r, "tasks/get");
            json_t *err = json_object_get(json_array_get(msgs, 0), "error");
            int gone = err != NULL &&
                       json_integer_value(json_object_get(err, "code")) == MCP_RPC_INVALID_PARAMS;
            json_decref(msgs);
            hc_response_free(&r);
            if (gone)
                break;
            if (harness_now_ms() > deadline)
                fail_msg("task %d not forgotten after its TTL", i);
            pause_between_polls();
        }
    }
    char *again = create("slow_compute", "{\"seconds\":0}");
    free(again);
    free(done);
    free(running);
    free(third);
}

/* ---- The extension's own example ("Example Message Flow"), as test vectors ---- */

/* hello_world: takes no arguments, asks the user's name, greets them. */
static json_t *hello_world(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    json_t *ask = json_loads("{\"mode\":\"form\",\"message\":\"Please enter your name.\","
                             "\"requestedSchema\":{\"type\":\"object\",\"properties\":"
                             "{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}",
                             0, NULL);
    int rc = mcp_ctx_ask(ctx, "name", "elicitation/create", ask, 0, &answer, &err);
    mcp_rpc_error_clear(&err);
    if (rc != MCP_OK)
        return NULL; /* asked: the task waits for the answer */
    /* The example's answer carries the name as "input". */
    const char *name =
        json_string_value(json_object_get(json_object_get(answer, "content"), "input"));
    char text[256];
    snprintf(text, sizeof text, "Hello, %.200s!", name != NULL ? name : "stranger");
    json_decref(answer);
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     0);
}

/* The example's JSON (from specification/draft/tasks.md) with what varies taken out: ids,
 * the task id, the times and _meta (the server's identity). */
static json_t *vector(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (v == NULL)
        fail_msg("test vector: %s", e.text);
    return v;
}

static void strip(json_t *result)
{
    static const char *const varying[] = {"taskId", "createdAt", "lastUpdatedAt", "_meta"};
    for (size_t i = 0; i < sizeof varying / sizeof *varying; i++)
        json_object_del(result, varying[i]);
}

static void expect_vector(json_t *got, const char *want_text, const char *what)
{
    json_t *want = vector(want_text);
    strip(got);
    strip(want);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("%s: got %s, the extension's example has %s", what, g, w);
    }
    json_decref(want);
    json_decref(got);
}

static json_t *call_port(int port, const char *method, json_t *params)
{
    long long id = next_id++;
    json_t *req = mh_request(id, method, params, TASKS_CAPS);
    hc_response r;
    assert_int_equal(mh_post(port, req, NULL, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, 200, 0, id, method);
    hc_response_free(&r);
    json_t *out = json_incref(json_object_get(resp, "result"));
    json_decref(resp);
    return out;
}

static void test_the_extensions_example_flow(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("example", "1.0.0");
    assert_non_null(srv);
    mcp_tasks_opts o = {.size = sizeof o, .ttl_ms = 3600000, .poll_interval_ms = 5000};
    assert_int_equal(mcp_server_set_tasks(srv, &o), MCP_OK);
    mcp_tool_def def = {.size = sizeof def,
                        .name = "hello_world",
                        .fn = hello_world,
                        .flags = MCP_TOOL_TASK_OPTIONAL};
    /* A task's handler may wait: never one that runs on the loop thread. */
    unsigned on_loop[] = {MCP_HANDLER_INLINE, MCP_HANDLER_INLINE_MODERN};
    for (int i = 0; i < 2; i++) {
        mcp_tool_def bad = def;
        bad.flags |= on_loop[i];
        assert_int_equal(mcp_server_add_tool_def(srv, &bad), MCP_EINVAL);
    }
    assert_int_equal(mcp_server_add_tool_def(srv, &def), MCP_OK);
    ih_host h;
    ih_start(&h, srv);

    json_t *created = call_port(h.port, "tools/call",
                                json_pack("{s:s, s:{}}", "name", "hello_world", "arguments"));
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(created, "taskId")));
    expect_vector(created,
                  "{\"resultType\": \"task\", \"taskId\": \"786512e2-9e0d-44bd-8f29-789f320fe840\","
                  " \"status\": \"working\", \"createdAt\": \"2025-11-25T10:30:00Z\","
                  " \"lastUpdatedAt\": \"2025-11-25T10:50:00Z\", \"ttlMs\": 3600000,"
                  " \"pollIntervalMs\": 5000}",
                  "CreateTaskResult");

    /* Polled until the question shows (the handler runs meanwhile): the same input
     * request on every poll, as the example's ids 4 and 5. */
    long long deadline = harness_now_ms() + 10000;
    json_t *t;
    for (;;) {
        t = call_port(h.port, "tasks/get", json_pack("{s:s}", "taskId", id));
        if (strcmp(json_string_value(json_object_get(t, "status")), "input_required") == 0)
            break;
        json_decref(t);
        assert_true(harness_now_ms() < deadline);
        pause_between_polls();
    }
    const char *asking =
        "{\"resultType\": \"complete\", \"status\": \"input_required\", \"ttlMs\": 3600000,"
        " \"pollIntervalMs\": 5000, \"inputRequests\": {\"name\": {\"method\":"
        " \"elicitation/create\", \"params\": {\"mode\": \"form\", \"message\":"
        " \"Please enter your name.\", \"requestedSchema\": {\"type\": \"object\","
        " \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]}}}}}";
    expect_vector(t, asking, "tasks/get, input_required");
    expect_vector(call_port(h.port, "tasks/get", json_pack("{s:s}", "taskId", id)), asking,
                  "tasks/get again before the answer");

    expect_vector(call_port(h.port, "tasks/update",
                            json_pack("{s:s, s:{s:{s:s, s:{s:s}}}}", "taskId", id, "inputResponses",
                                      "name", "action", "accept", "content", "input", "Luca")),
                  "{\"resultType\": \"complete\"}", "tasks/update ack");

    for (;;) {
        t = call_port(h.port, "tasks/get", json_pack("{s:s}", "taskId", id));
        const char *st = json_string_value(json_object_get(t, "status"));
        if (strcmp(st, "completed") == 0)
            break;
        assert_true(strcmp(st, "working") == 0 || strcmp(st, "input_required") == 0);
        json_decref(t);
        assert_true(harness_now_ms() < deadline);
        pause_between_polls();
    }
    expect_vector(t,
                  "{\"resultType\": \"complete\", \"status\": \"completed\", \"ttlMs\": 3600000,"
                  " \"pollIntervalMs\": 5000, \"result\": {\"content\": [{\"type\": \"text\","
                  " \"text\": \"Hello, Luca!\"}], \"isError\": false}}",
                  "tasks/get, completed");
    ih_stop(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_extensions_example_flow),
        cmocka_unit_test(test_create_poll_complete),
        cmocka_unit_test(test_input_round),
        cmocka_unit_test(test_partial_and_bad_answers),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_ttl_and_bound),
    };
    return cmocka_run_group_tests_name("tasks", tests, setup, teardown) ? 1 : 0;
}
