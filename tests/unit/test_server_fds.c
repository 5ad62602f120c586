/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the server as a whole over mcp_serve_fds: the server runs on a thread
 * of its own, serving one end of a socketpair; the test is the client on the other end
 * and speaks newline-delimited JSON-RPC to it byte for byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/server_int.h"

#define DEADLINE_MS 10000

/* ---- The client end ---- */

typedef struct conn {
    mcp_server *srv;
    int fd;        /* the test's end */
    int server_fd; /* the server's end, owned by mcp_serve_fds */
    uv_thread_t thread;
    uv_mutex_t lock;
    uv_cond_t cond;
    int done;
    int rc;
    mcp__buf in; /* bytes received and not yet split into messages */
    int eof;
    json_t *skipped; /* messages received while waiting for a response */
} conn;

static void serve_thread(void *arg)
{
    conn *c = arg;
    int rc = mcp_serve_fds(c->srv, c->server_fd, c->server_fd);
    uv_mutex_lock(&c->lock);
    c->rc = rc;
    c->done = 1;
    uv_cond_broadcast(&c->cond);
    uv_mutex_unlock(&c->lock);
}

static void conn_start(conn *c, mcp_server *srv)
{
    memset(c, 0, sizeof(*c));
    c->srv = srv;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    c->fd = sv[0];
    c->server_fd = sv[1];
    c->skipped = json_array();
    assert_int_equal(uv_mutex_init(&c->lock), 0);
    assert_int_equal(uv_cond_init(&c->cond), 0);
    assert_int_equal(uv_thread_create(&c->thread, serve_thread, c), 0);
}

static void send_text(conn *c, const char *text)
{
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t w = write(c->fd, text, n);
        if (w < 0 && errno == EINTR)
            continue;
        assert_true(w > 0);
        text += w;
        n -= (size_t)w;
    }
}

static void sendf(conn *c, const char *fmt, ...) MCP_PRINTF(2, 3);
static void sendf(conn *c, const char *fmt, ...)
{
    va_list ap;
    mcp__buf b = {0};
    va_start(ap, fmt);
    assert_int_equal(mcp__buf_vappendf(&b, fmt, ap), MCP_OK);
    va_end(ap);
    assert_int_equal(mcp__buf_appends(&b, "\n"), MCP_OK);
    send_text(c, b.data);
    mcp__buf_free(&b);
}

/* The next message from the server, or NULL at EOF; fails after timeout_ms. */
static json_t *recv_msg_within(conn *c, int timeout_ms)
{
    uint64_t end = mcp__now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        char *nl = c->in.len ? memchr(c->in.data, '\n', c->in.len) : NULL;
        if (nl != NULL) {
            size_t len = (size_t)(nl - c->in.data);
            json_error_t err;
            json_t *v = json_loadb(c->in.data, len, 0, &err);
            if (v == NULL)
                fail_msg("the server sent a line that is not JSON: %.*s", (int)len, c->in.data);
            mcp__buf_consume(&c->in, len + 1);
            return v;
        }
        if (c->eof) {
            assert_int_equal(c->in.len, 0); /* every message ends with its newline */
            return NULL;
        }
        uint64_t now = mcp__now_ms();
        if (now >= end)
            fail_msg("no message from the server within %d ms", timeout_ms);
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int pr = poll(&pfd, 1, (int)(end - now));
        if (pr <= 0)
            continue;
        char buf[65536];
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n == 0)
            c->eof = 1;
        else if (n > 0)
            assert_int_equal(mcp__buf_append(&c->in, buf, (size_t)n), MCP_OK);
        else
            assert_true(errno == EINTR);
    }
}

static json_t *recv_msg(conn *c)
{
    json_t *v = recv_msg_within(c, DEADLINE_MS);
    if (v == NULL)
        fail_msg("the server closed the connection");
    return v;
}

static int is_response_to(const json_t *m, const json_t *id)
{
    return json_object_get(m, "method") == NULL && json_equal(json_object_get(m, "id"), id);
}

/* Waits for the response to id; what comes before it goes to c->skipped. */
static json_t *await_response(conn *c, json_int_t id)
{
    json_t *want = json_integer(id);
    json_array_clear(c->skipped);
    for (;;) {
        json_t *m = recv_msg(c);
        if (is_response_to(m, want)) {
            json_decref(want);
            return m;
        }
        json_array_append_new(c->skipped, m);
    }
}

/* Sends a request and returns its response (the caller releases it). */
static json_t *request(conn *c, json_int_t id, const char *method, const char *params)
{
    if (params != NULL)
        sendf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\",\"params\":%s}", (long long)id,
              method, params);
    else
        sendf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\"}", (long long)id, method);
    return await_response(c, id);
}

static const json_t *result_of(const json_t *response)
{
    const json_t *r = json_object_get(response, "result");
    if (r == NULL) {
        char *d = json_dumps(response, JSON_COMPACT);
        fail_msg("not a result: %s", d ? d : "?");
    }
    return r;
}

static int error_code_of(const json_t *response)
{
    const json_t *e = json_object_get(response, "error");
    if (e == NULL) {
        char *d = json_dumps(response, JSON_COMPACT);
        fail_msg("not an error: %s", d ? d : "?");
    }
    return (int)json_integer_value(json_object_get(e, "code"));
}

static const char *error_message_of(const json_t *response)
{
    return json_string_value(json_object_get(json_object_get(response, "error"), "message"));
}

/* The text of the first content block of a tools/call result. */
static const char *text_of(const json_t *response)
{
    const json_t *content = json_object_get(result_of(response), "content");
    return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

static json_t *initialize(conn *c, const char *version)
{
    char params[256];
    snprintf(params, sizeof(params),
             "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"unit\",\"version\":\"0\"}}",
             version);
    json_t *r = request(c, 0, "initialize", params);
    sendf(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return r;
}

static void init_ok(conn *c, const char *version)
{
    json_t *r = initialize(c, version);
    assert_string_equal(json_string_value(json_object_get(result_of(r), "protocolVersion")),
                        version);
    json_decref(r);
}

/* Waits up to the deadline for the server thread to finish. */
static int wait_done(conn *c, uint64_t ms)
{
    uint64_t end = mcp__now_ms() + ms;
    uv_mutex_lock(&c->lock);
    while (!c->done) {
        uint64_t now = mcp__now_ms();
        if (now >= end)
            break;
        uv_cond_timedwait(&c->cond, &c->lock, (end - now) * 1000000u);
    }
    int done = c->done;
    uv_mutex_unlock(&c->lock);
    return done;
}

/*
 * Ends the client's input (the stdio shutdown), reads everything the server still
 * sends until it closes, and checks that mcp_serve_fds returned MCP_OK. Returns the
 * messages that came after the ones already read (the caller releases the array).
 */
static json_t *conn_finish(conn *c)
{
    assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
    json_t *tail = json_array();
    json_t *m;
    while ((m = recv_msg_within(c, DEADLINE_MS)) != NULL)
        json_array_append_new(tail, m);
    if (!wait_done(c, DEADLINE_MS))
        fail_msg("mcp_serve_fds did not return after EOF");
    assert_int_equal(uv_thread_join(&c->thread), 0);
    assert_int_equal(c->rc, MCP_OK);
    close(c->fd);
    mcp__buf_free(&c->in);
    json_decref(c->skipped);
    uv_cond_destroy(&c->cond);
    uv_mutex_destroy(&c->lock);
    return tail;
}

static void conn_finish_expect_nothing_more(conn *c)
{
    json_t *tail = conn_finish(c);
    if (json_array_size(tail) != 0) {
        char *d = json_dumps(tail, JSON_COMPACT);
        fail_msg("unexpected messages at the end: %s", d ? d : "?");
    }
    json_decref(tail);
}

/* ---- Handlers ---- */

/* What handlers that block tell the test, and what the test lets them do. */
static struct {
    uv_mutex_t lock;
    uv_cond_t cond;
    int started;
    int finished;
    int sleep_rc;
    int cancelled_seen;
    uint64_t slept_ms;
    int gate_open;
} hs;

static void hs_reset(void)
{
    uv_mutex_lock(&hs.lock);
    hs.started = hs.finished = hs.sleep_rc = hs.cancelled_seen = hs.gate_open = 0;
    hs.slept_ms = 0;
    uv_mutex_unlock(&hs.lock);
}

static void hs_set(int *field, int value)
{
    uv_mutex_lock(&hs.lock);
    *field = value;
    uv_cond_broadcast(&hs.cond);
    uv_mutex_unlock(&hs.lock);
}

/* Waits until *field is non-zero; fails after the deadline. */
static void hs_wait(const int *field)
{
    uint64_t end = mcp__now_ms() + DEADLINE_MS;
    uv_mutex_lock(&hs.lock);
    while (!*field) {
        uint64_t now = mcp__now_ms();
        if (now >= end) {
            uv_mutex_unlock(&hs.lock);
            fail_msg("a handler did not get there in time");
        }
        uv_cond_timedwait(&hs.cond, &hs.lock, (end - now) * 1000000u);
    }
    uv_mutex_unlock(&hs.lock);
}

/* Answers "<where>:<text>" where <where> is the thread the handler ran on. */
static json_t *where_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *text = json_string_value(json_object_get(args, "text"));
    char buf[256];
    snprintf(buf, sizeof(buf), "%s:%s", mcp__srt_on_loop(ctx->rt) ? "loop" : "worker",
             text ? text : "(none)");
    return mcp_text_result(buf);
}

/* Sends progress, a log and a notification, then answers "done". Handlers run on other
 * threads, where cmocka's assertions must not be used: a surprise is reported in the
 * result instead. */
static json_t *chatty_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    int has_token = json_object_get(mcp_ctx_meta(ctx), "progressToken") != NULL;
    if (mcp_ctx_progress(ctx, 1, 10, "one") != MCP_OK)
        return mcp_tool_error("progress 1 failed");
    if (mcp_ctx_log(ctx, MCP_LOG_INFO, "chatty", json_string("hello")) != MCP_OK)
        return mcp_tool_error("log failed");
    if (mcp_ctx_notify(ctx, "notifications/custom", json_pack("{s:i}", "k", 1)) != MCP_OK)
        return mcp_tool_error("notify failed");
    /* Progress must increase; without a token there is nothing to check or send. */
    if (mcp_ctx_progress(ctx, 1, 10, NULL) != (has_token ? MCP_EINVAL : MCP_OK))
        return mcp_tool_error("repeated progress was not refused");
    if (mcp_ctx_progress(ctx, 2.5, -1, NULL) != MCP_OK)
        return mcp_tool_error("progress 2.5 failed");
    return mcp_text_result("done");
}

static json_t *failing_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    mcp_ctx_set_error(ctx, -32042, "Nope %d", 7);
    return NULL;
}

static json_t *null_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return NULL;
}

static json_t *structured_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    if (json_is_true(json_object_get(args, "bad")))
        return mcp_structured_result(json_pack("{s:s}", "n", "not a number"));
    if (json_is_true(json_object_get(args, "none")))
        return mcp_text_result("no structured content");
    return mcp_structured_result(json_pack("{s:i}", "n", 1));
}

static json_t *count_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    char buf[64];
    snprintf(buf, sizeof(buf), "count=%lld",
             (long long)json_integer_value(json_object_get(args, "count")));
    return mcp_text_result(buf);
}

/* Asks the client "test/ask" and reports how it went. */
static json_t *asker_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    int timeout = (int)json_integer_value(json_object_get(args, "timeout"));
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_request(ctx, "test/ask", json_pack("{s:i}", "q", 1), timeout, &result, &err);
    char buf[400];
    if (rc == MCP_OK)
        snprintf(buf, sizeof(buf), "ok:%lld",
                 (long long)json_integer_value(json_object_get(result, "answer")));
    else if (rc == MCP_ERPC)
        snprintf(buf, sizeof(buf), "rpc:%d:%s", err.code, err.message);
    else
        snprintf(buf, sizeof(buf), "rc:%d", rc);
    json_decref(result);
    mcp_rpc_error_clear(&err);
    return mcp_text_result(buf);
}

/* Sleeps args.ms (default 20 s) and records how that went. */
static json_t *sleeper_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    hs_set(&hs.started, 1);
    json_int_t ms = json_integer_value(json_object_get(args, "ms"));
    uint64_t start = mcp__now_ms();
    int rc = mcp_ctx_sleep(ctx, ms > 0 ? (int)ms : 20000);
    uv_mutex_lock(&hs.lock);
    hs.slept_ms = mcp__now_ms() - start;
    hs.sleep_rc = rc;
    hs.cancelled_seen = mcp_ctx_is_cancelled(ctx);
    hs.finished = 1;
    uv_cond_broadcast(&hs.cond);
    uv_mutex_unlock(&hs.lock);
    return mcp_text_result("slept");
}

static json_t *gate_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    hs_set(&hs.started, 1);
    hs_wait(&hs.gate_open);
    return mcp_text_result("gated");
}

static json_t *logger_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    mcp_ctx_log(ctx, MCP_LOG_DEBUG, NULL, json_string("debug"));
    mcp_ctx_log(ctx, MCP_LOG_INFO, NULL, json_string("info"));
    mcp_ctx_log(ctx, MCP_LOG_WARNING, NULL, json_string("warning"));
    mcp_ctx_logf(ctx, MCP_LOG_ERROR, "error %d", 5);
    return mcp_text_result("logged");
}

static json_t *resource_fn(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx;
    (void)vars;
    (void)user;
    return mcp_resource_text(uri, "text/plain", "content");
}

static void add_tool_def(mcp_server *srv, const char *name, const char *in_schema,
                         const char *out_schema, mcp_tool_fn fn, unsigned flags)
{
    mcp_tool_def def = {.name = name,
                        .input_schema = in_schema,
                        .output_schema = out_schema,
                        .fn = fn,
                        .flags = flags};
    assert_int_equal(mcp_server_add_tool_def(srv, &def), MCP_OK);
}

static mcp_server *make_server(void)
{
    mcp_server *srv = mcp_server_new("unit-server", "9.8.7");
    assert_non_null(srv);
    assert_int_equal(mcp_server_set_workers(srv, 4), MCP_OK);
    add_tool_def(srv, "where_inline", NULL, NULL, where_tool, MCP_HANDLER_INLINE);
    add_tool_def(srv, "where_worker", NULL, NULL, where_tool, 0);
    add_tool_def(srv, "where_modern", NULL, NULL, where_tool, MCP_HANDLER_INLINE_MODERN);
    add_tool_def(srv, "chatty_worker", NULL, NULL, chatty_tool, 0);
    add_tool_def(srv, "chatty_inline", NULL, NULL, chatty_tool, MCP_HANDLER_INLINE);
    add_tool_def(srv, "failing", NULL, NULL, failing_tool, 0);
    add_tool_def(srv, "null", NULL, NULL, null_tool, 0);
    add_tool_def(srv, "structured", NULL,
                 "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},"
                 "\"required\":[\"n\"]}",
                 structured_tool, 0);
    add_tool_def(srv, "count",
                 "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\"}},"
                 "\"required\":[\"count\"]}",
                 NULL, count_tool, 0);
    add_tool_def(srv, "asker", NULL, NULL, asker_tool, 0);
    add_tool_def(srv, "sleeper", NULL, NULL, sleeper_tool, 0);
    add_tool_def(srv, "gate", NULL, NULL, gate_tool, 0);
    add_tool_def(srv, "logger", NULL, NULL, logger_tool, 0);
    mcp_resource_def a = {.uri = "res://a", .name = "a", .fn = resource_fn};
    mcp_resource_def b = {.uri = "res://b", .name = "b", .fn = resource_fn};
    assert_int_equal(mcp_server_add_resource(srv, &a), MCP_OK);
    assert_int_equal(mcp_server_add_resource(srv, &b), MCP_OK);
    return srv;
}

static int setup(void **state)
{
    hs_reset();
    *state = make_server();
    return 0;
}

static int teardown(void **state)
{
    mcp_server_free(*state);
    return 0;
}

static int method_is(const json_t *m, const char *method)
{
    const char *got = json_string_value(json_object_get(m, "method"));
    return got != NULL && strcmp(got, method) == 0;
}

/* ---- Lifecycle ---- */

static void test_initialize_echoes_a_supported_version_and_describes_the_server(void **state)
{
    conn c;
    conn_start(&c, *state);
    json_t *r = initialize(&c, "2025-06-18");
    const json_t *res = result_of(r);
    assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), "2025-06-18");
    const json_t *info = json_object_get(res, "serverInfo");
    assert_string_equal(json_string_value(json_object_get(info, "name")), "unit-server");
    assert_string_equal(json_string_value(json_object_get(info, "version")), "9.8.7");
    const json_t *caps = json_object_get(res, "capabilities");
    assert_non_null(json_object_get(caps, "tools"));
    assert_non_null(json_object_get(caps, "resources"));
    assert_non_null(json_object_get(caps, "logging"));
    assert_null(json_object_get(caps, "prompts"));
    json_decref(r);
    /* A second initialize is refused. */
    r = request(&c, 1, "initialize",
                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                "\"clientInfo\":{\"name\":\"u\",\"version\":\"0\"}}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_REQUEST);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_initialize_with_an_unknown_version_gets_the_latest(void **state)
{
    conn c;
    conn_start(&c, *state);
    json_t *r = initialize(&c, "1999-01-01");
    assert_string_equal(json_string_value(json_object_get(result_of(r), "protocolVersion")),
                        "2025-11-25");
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_initialize_without_a_version_is_invalid_params(void **state)
{
    conn c;
    conn_start(&c, *state);
    json_t *r = request(&c, 3, "initialize", "{\"capabilities\":{}}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message_of(r), "protocolVersion"));
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_ping_before_initialize_is_answered_and_other_requests_are_refused(void **state)
{
    conn c;
    conn_start(&c, *state);
    json_t *r = request(&c, 1, "ping", NULL);
    assert_true(json_is_object(result_of(r)));
    assert_int_equal(json_object_size(result_of(r)), 0);
    json_decref(r);
    r = request(&c, 2, "tools/list", NULL);
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_REQUEST);
    json_decref(r);
    init_ok(&c, "2025-11-25");
    r = request(&c, 3, "tools/list", NULL);
    assert_true(json_is_array(json_object_get(result_of(r), "tools")));
    json_decref(r);
    r = request(&c, 4, "no/such/method", NULL);
    assert_int_equal(error_code_of(r), MCP_RPC_METHOD_NOT_FOUND);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_malformed_line_gets_a_parse_error_and_the_session_goes_on(void **state)
{
    conn c;
    conn_start(&c, *state);
    send_text(&c, "{\"jsonrpc\":\"2.0\",\n");
    json_t *m = recv_msg(&c);
    assert_true(json_is_null(json_object_get(m, "id")));
    assert_int_equal(error_code_of(m), MCP_RPC_PARSE_ERROR);
    json_decref(m);
    json_t *r = request(&c, 1, "ping", NULL);
    assert_non_null(result_of(r));
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

/* ---- Batches follow the negotiated version ---- */

static void test_batches_are_answered_with_2025_03_26(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-03-26");
    sendf(&c, "[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"},"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"},"
              "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"where_worker\",\"arguments\":{\"text\":\"b\"}}}]");
    json_t *arr = recv_msg(&c);
    assert_true(json_is_array(arr));
    assert_int_equal(json_array_size(arr), 2);
    int seen10 = 0, seen11 = 0;
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m)
    {
        json_int_t id = json_integer_value(json_object_get(m, "id"));
        if (id == 10)
            seen10++;
        if (id == 11) {
            assert_string_equal(text_of(m), "worker:b");
            seen11++;
        }
    }
    assert_int_equal(seen10 + seen11, 2);
    assert_int_equal(seen10, 1);
    json_decref(arr);
    conn_finish_expect_nothing_more(&c);
}

static void test_batches_are_refused_with_2025_06_18(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-06-18");
    sendf(&c, "[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}]");
    json_t *m = recv_msg(&c);
    assert_true(json_is_object(m));
    assert_true(json_is_null(json_object_get(m, "id")));
    assert_int_equal(error_code_of(m), MCP_RPC_INVALID_REQUEST);
    json_decref(m);
    conn_finish_expect_nothing_more(&c);
}

static void test_batches_are_refused_with_2025_11_25(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}]");
    json_t *m = recv_msg(&c);
    assert_int_equal(error_code_of(m), MCP_RPC_INVALID_REQUEST);
    json_decref(m);
    conn_finish_expect_nothing_more(&c);
}

/* ---- Lists ---- */

static void test_tools_list_is_paged_with_the_cursor(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("paged", "1");
    assert_non_null(srv);
    assert_int_equal(mcp_server_set_page_size(srv, 2), MCP_OK);
    const char *names[] = {"t0", "t1", "t2", "t3", "t4"};
    for (size_t i = 0; i < 5; i++)
        add_tool_def(srv, names[i], NULL, NULL, where_tool, 0);
    conn c;
    conn_start(&c, srv);
    init_ok(&c, "2025-11-25");

    json_t *cursor = NULL;
    size_t seen = 0;
    for (int page = 0; page < 3; page++) {
        json_t *r;
        if (cursor == NULL) {
            r = request(&c, 10 + page, "tools/list", NULL);
        } else {
            char params[256];
            snprintf(params, sizeof(params), "{\"cursor\":\"%s\"}", json_string_value(cursor));
            r = request(&c, 10 + page, "tools/list", params);
        }
        const json_t *tools = json_object_get(result_of(r), "tools");
        assert_int_equal(json_array_size(tools), page < 2 ? 2 : 1);
        for (size_t i = 0; i < json_array_size(tools); i++, seen++)
            assert_string_equal(
                json_string_value(json_object_get(json_array_get(tools, i), "name")), names[seen]);
        json_decref(cursor);
        cursor = json_incref(json_object_get(result_of(r), "nextCursor"));
        if (page < 2)
            assert_true(json_is_string(cursor));
        else
            assert_null(cursor);
        json_decref(r);
    }
    assert_int_equal(seen, 5);

    json_t *r = request(&c, 20, "tools/list", "{\"cursor\":\"not-a-cursor\"}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message_of(r), "cursor"));
    json_decref(r);
    r = request(&c, 21, "tools/list", "{\"cursor\":7}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
    mcp_server_free(srv);
}

/* ---- tools/call ---- */

/* MCP_HANDLER_INLINE_MODERN: on the loop thread for a request of revision 2026-07-28,
 * where asking never waits; the other handlers where they always run. */
static void test_tools_call_of_revision_2026_runs_inline_modern_handlers_on_the_loop(void **state)
{
    conn c;
    conn_start(&c, *state);
    const char *meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                       "\"io.modelcontextprotocol/clientCapabilities\":{}}";
    const char *tools[] = {"where_modern", "where_inline", "where_worker"};
    const char *want[] = {"loop:m", "loop:m", "worker:m"};
    for (int i = 0; i < 3; i++) {
        char params[512];
        snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":{\"text\":\"m\"},%s}",
                 tools[i], meta);
        json_t *r = request(&c, 20 + i, "tools/call", params);
        assert_string_equal(text_of(r), want[i]);
        json_decref(r);
    }
    conn_finish_expect_nothing_more(&c);
}

static void test_tools_call_runs_inline_and_worker_handlers(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r =
        request(&c, 1, "tools/call", "{\"name\":\"where_inline\",\"arguments\":{\"text\":\"hi\"}}");
    assert_string_equal(text_of(r), "loop:hi");
    json_decref(r);
    r = request(&c, 2, "tools/call", "{\"name\":\"where_worker\",\"arguments\":{\"text\":\"ho\"}}");
    assert_string_equal(text_of(r), "worker:ho");
    json_decref(r);
    /* MCP_HANDLER_INLINE_MODERN: on a worker in the legacy era, where asking waits. */
    r = request(&c, 7, "tools/call", "{\"name\":\"where_modern\",\"arguments\":{\"text\":\"hu\"}}");
    assert_string_equal(text_of(r), "worker:hu");
    json_decref(r);
    /* Without arguments the handler gets an empty object. */
    r = request(&c, 3, "tools/call", "{\"name\":\"where_worker\"}");
    assert_string_equal(text_of(r), "worker:(none)");
    json_decref(r);
    r = request(&c, 4, "tools/call", "{\"name\":\"nonexistent\"}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message_of(r), "nonexistent"));
    json_decref(r);
    r = request(&c, 5, "tools/call", "{\"arguments\":{}}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message_of(r), "name"));
    json_decref(r);
    r = request(&c, 6, "tools/call", "{\"name\":\"where_worker\",\"arguments\":[1]}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message_of(r), "arguments"));
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void expect_chatty_messages(conn *c, const char *tool)
{
    char params[200];
    snprintf(params, sizeof(params), "{\"name\":\"%s\",\"_meta\":{\"progressToken\":\"tok\"}}",
             tool);
    json_t *r = request(c, 7, "tools/call", params);
    assert_string_equal(text_of(r), "done");
    json_decref(r);
    /* Everything the handler sent came before its result, in the order it was sent. */
    assert_int_equal(json_array_size(c->skipped), 4);
    json_t *p1 = json_array_get(c->skipped, 0);
    json_t *log = json_array_get(c->skipped, 1);
    json_t *custom = json_array_get(c->skipped, 2);
    json_t *p2 = json_array_get(c->skipped, 3);
    assert_true(method_is(p1, "notifications/progress"));
    const json_t *pp = json_object_get(p1, "params");
    assert_string_equal(json_string_value(json_object_get(pp, "progressToken")), "tok");
    assert_int_equal(json_integer_value(json_object_get(pp, "progress")), 1);
    assert_int_equal(json_integer_value(json_object_get(pp, "total")), 10);
    assert_string_equal(json_string_value(json_object_get(pp, "message")), "one");
    assert_true(method_is(log, "notifications/message"));
    const json_t *lp = json_object_get(log, "params");
    assert_string_equal(json_string_value(json_object_get(lp, "level")), "info");
    assert_string_equal(json_string_value(json_object_get(lp, "logger")), "chatty");
    assert_string_equal(json_string_value(json_object_get(lp, "data")), "hello");
    assert_true(method_is(custom, "notifications/custom"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(custom, "params"), "k")),
                     1);
    assert_true(method_is(p2, "notifications/progress"));
    pp = json_object_get(p2, "params");
    assert_true(json_real_value(json_object_get(pp, "progress")) == 2.5);
    assert_null(json_object_get(pp, "total"));
    assert_null(json_object_get(pp, "message"));
}

static void test_worker_handler_messages_arrive_before_its_result(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    for (int i = 0; i < 5; i++)
        expect_chatty_messages(&c, "chatty_worker");
    conn_finish_expect_nothing_more(&c);
}

static void test_inline_handler_messages_arrive_before_its_result(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    expect_chatty_messages(&c, "chatty_inline");
    conn_finish_expect_nothing_more(&c);
}

static void test_progress_without_a_token_sends_nothing(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 8, "tools/call", "{\"name\":\"chatty_worker\"}");
    assert_string_equal(text_of(r), "done");
    json_decref(r);
    assert_int_equal(json_array_size(c.skipped), 2); /* the log and the custom notification */
    assert_true(method_is(json_array_get(c.skipped, 0), "notifications/message"));
    assert_true(method_is(json_array_get(c.skipped, 1), "notifications/custom"));
    conn_finish_expect_nothing_more(&c);
}

static void test_set_error_becomes_the_jsonrpc_error(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 1, "tools/call", "{\"name\":\"failing\"}");
    assert_int_equal(error_code_of(r), -32042);
    assert_string_equal(error_message_of(r), "Nope 7");
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_null_result_without_error_is_an_internal_error(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 1, "tools/call", "{\"name\":\"null\"}");
    assert_int_equal(error_code_of(r), MCP_RPC_INTERNAL_ERROR);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_output_schema_violation_is_an_internal_error(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 1, "tools/call", "{\"name\":\"structured\"}");
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(result_of(r), "structuredContent"), "n")),
                     1);
    json_decref(r);
    r = request(&c, 2, "tools/call", "{\"name\":\"structured\",\"arguments\":{\"bad\":true}}");
    assert_int_equal(error_code_of(r), MCP_RPC_INTERNAL_ERROR);
    assert_non_null(strstr(error_message_of(r), "outputSchema"));
    assert_non_null(strstr(error_message_of(r), "/n: "));
    json_decref(r);
    r = request(&c, 3, "tools/call", "{\"name\":\"structured\",\"arguments\":{\"none\":true}}");
    assert_int_equal(error_code_of(r), MCP_RPC_INTERNAL_ERROR);
    assert_non_null(strstr(error_message_of(r), "structuredContent"));
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_input_schema_violation_is_a_tool_error_naming_the_field(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 1, "tools/call", "{\"name\":\"count\",\"arguments\":{\"count\":3}}");
    assert_string_equal(text_of(r), "count=3");
    json_decref(r);
    r = request(&c, 2, "tools/call", "{\"name\":\"count\",\"arguments\":{\"count\":\"3\"}}");
    assert_true(json_is_true(json_object_get(result_of(r), "isError")));
    assert_non_null(strstr(text_of(r), "count"));
    assert_non_null(strstr(text_of(r), "integer"));
    json_decref(r);
    r = request(&c, 3, "tools/call", "{\"name\":\"count\",\"arguments\":{}}");
    assert_true(json_is_true(json_object_get(result_of(r), "isError")));
    assert_non_null(strstr(text_of(r), "/count: is required"));
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

/* ---- Requests to the client ---- */

/* Receives the server's test/ask request and returns its id. */
static json_t *expect_ask(conn *c)
{
    json_t *m = recv_msg(c);
    if (!method_is(m, "test/ask")) {
        char *d = json_dumps(m, JSON_COMPACT);
        fail_msg("expected test/ask, got %s", d ? d : "?");
    }
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "params"), "q")), 1);
    json_t *id = json_incref(json_object_get(m, "id"));
    assert_true(json_is_integer(id));
    json_decref(m);
    return id;
}

static void test_ctx_request_reaches_the_client_and_returns_its_answer(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"asker\",\"arguments\":{\"timeout\":10000}}}");
    json_t *id = expect_ask(&c);
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"answer\":42}}",
          (long long)json_integer_value(id));
    json_decref(id);
    json_t *r = await_response(&c, 1);
    assert_string_equal(text_of(r), "ok:42");
    json_decref(r);

    /* An error answer comes back to the handler as MCP_ERPC with the code and message. */
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"asker\",\"arguments\":{\"timeout\":10000}}}");
    id = expect_ask(&c);
    sendf(&c,
          "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no "
          "asking\"}}",
          (long long)json_integer_value(id));
    json_decref(id);
    r = await_response(&c, 2);
    assert_string_equal(text_of(r), "rpc:-32601:no asking");
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_ctx_request_timeout_sends_cancelled_and_fails_with_timedout(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"asker\",\"arguments\":{\"timeout\":100}}}");
    json_t *id = expect_ask(&c);
    /* The test does not answer: after 100 ms the server gives up, and says so. */
    json_t *m = recv_msg(&c);
    assert_true(method_is(m, "notifications/cancelled"));
    assert_true(json_equal(json_object_get(json_object_get(m, "params"), "requestId"), id));
    json_decref(m);
    json_t *r = await_response(&c, 1);
    char want[32];
    snprintf(want, sizeof(want), "rc:%d", MCP_ETIMEDOUT);
    assert_string_equal(text_of(r), want);
    json_decref(r);
    /* A late answer is ignored. */
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"answer\":1}}",
          (long long)json_integer_value(id));
    json_decref(id);
    r = request(&c, 2, "ping", NULL);
    assert_non_null(result_of(r));
    assert_int_equal(json_array_size(c.skipped), 0);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

static void test_ctx_request_after_the_client_input_ends_fails_at_once(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"asker\",\"arguments\":{\"timeout\":60000}}}");
    json_t *id = expect_ask(&c);
    json_decref(id);
    /* EOF: nobody can answer any more, so the handler hears MCP_ECLOSED and the
     * call still gets its answer before the server returns. */
    json_t *tail = conn_finish(&c);
    assert_int_equal(json_array_size(tail), 1);
    json_t *r = json_array_get(tail, 0);
    char want[32];
    snprintf(want, sizeof(want), "rc:%d", MCP_ECLOSED);
    assert_string_equal(text_of(r), want);
    json_decref(tail);
}

/* ---- Cancellation from the client ---- */

static void test_cancelled_from_the_client_wakes_the_handler_and_sends_no_response(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"sleeper\"}}");
    hs_wait(&hs.started);
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":5,\"reason\":\"changed my mind\"}}");
    hs_wait(&hs.finished);
    assert_int_equal(hs.sleep_rc, MCP_ECANCELED);
    assert_true(hs.cancelled_seen);
    assert_true(hs.slept_ms < 15000); /* woken early, not at the end of its 20 s */
    /* The session goes on, and nothing ever answers id 5 (the end drains everything). */
    json_t *r = request(&c, 6, "ping", NULL);
    assert_non_null(result_of(r));
    json_decref(r);
    json_t *id5 = json_integer(5);
    for (size_t i = 0; i < json_array_size(c.skipped); i++)
        assert_false(is_response_to(json_array_get(c.skipped, i), id5));
    json_t *tail = conn_finish(&c);
    for (size_t i = 0; i < json_array_size(tail); i++)
        assert_false(is_response_to(json_array_get(tail, i), id5));
    json_decref(tail);
    json_decref(id5);
}

static void test_sleep_without_cancellation_sleeps_its_time_and_answers(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 5, "tools/call", "{\"name\":\"sleeper\",\"arguments\":{\"ms\":50}}");
    assert_string_equal(text_of(r), "slept");
    json_decref(r);
    assert_int_equal(hs.sleep_rc, MCP_OK);
    assert_false(hs.cancelled_seen);
    assert_true(hs.slept_ms >= 50);
    conn_finish_expect_nothing_more(&c);
}

/* ---- Logging ---- */

static void test_set_level_filters_log_messages(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    json_t *r = request(&c, 1, "tools/call", "{\"name\":\"logger\"}");
    assert_int_equal(json_array_size(c.skipped), 4); /* the default lets everything through */
    json_decref(r);

    r = request(&c, 2, "logging/setLevel", "{\"level\":\"warning\"}");
    assert_int_equal(json_object_size(result_of(r)), 0);
    json_decref(r);
    r = request(&c, 3, "tools/call", "{\"name\":\"logger\"}");
    assert_string_equal(text_of(r), "logged");
    assert_int_equal(json_array_size(c.skipped), 2);
    const json_t *p0 = json_object_get(json_array_get(c.skipped, 0), "params");
    const json_t *p1 = json_object_get(json_array_get(c.skipped, 1), "params");
    assert_string_equal(json_string_value(json_object_get(p0, "level")), "warning");
    assert_string_equal(json_string_value(json_object_get(p1, "level")), "error");
    assert_string_equal(json_string_value(json_object_get(p1, "data")), "error 5");
    json_decref(r);

    /* Server-wide logs follow the same level. */
    mcp_server *srv = *state;
    assert_int_equal(mcp_server_log(srv, MCP_LOG_INFO, NULL, json_string("hidden")), MCP_OK);
    assert_int_equal(mcp_server_log(srv, MCP_LOG_CRITICAL, "srv", json_string("shown")), MCP_OK);
    json_t *m = recv_msg(&c);
    assert_true(method_is(m, "notifications/message"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "params"), "data")),
                        "shown");
    json_decref(m);

    r = request(&c, 4, "logging/setLevel", "{\"level\":\"loud\"}");
    assert_int_equal(error_code_of(r), MCP_RPC_INVALID_PARAMS);
    json_decref(r);
    conn_finish_expect_nothing_more(&c);
}

/* ---- Resources ---- */

static void test_resource_updates_go_only_to_subscribed_sessions(void **state)
{
    mcp_server *srv = *state;
    conn a, b;
    conn_start(&a, srv);
    conn_start(&b, srv);
    init_ok(&a, "2025-11-25");
    init_ok(&b, "2025-11-25");
    json_t *r = request(&a, 1, "resources/subscribe", "{\"uri\":\"res://a\"}");
    assert_int_equal(json_object_size(result_of(r)), 0);
    json_decref(r);
    r = request(&a, 2, "resources/subscribe", "{\"uri\":\"res://none\"}");
    assert_int_equal(error_code_of(r), MCP_RPC_RESOURCE_NOT_FOUND);
    json_decref(r);

    assert_int_equal(mcp_server_notify_resource_updated(srv, "res://b"), MCP_OK);
    assert_int_equal(mcp_server_notify_resource_updated(srv, "res://a"), MCP_OK);
    json_t *m = recv_msg(&a);
    assert_true(method_is(m, "notifications/resources/updated"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "params"), "uri")),
                        "res://a");
    json_decref(m);

    /* After unsubscribing, no more updates. */
    r = request(&a, 3, "resources/unsubscribe", "{\"uri\":\"res://a\"}");
    assert_int_equal(json_array_size(a.skipped), 0);
    json_decref(r);
    assert_int_equal(mcp_server_notify_resource_updated(srv, "res://a"), MCP_OK);

    r = request(&a, 4, "resources/read", "{\"uri\":\"res://a\"}");
    const json_t *contents = json_object_get(result_of(r), "contents");
    assert_string_equal(json_string_value(json_object_get(json_array_get(contents, 0), "text")),
                        "content");
    json_decref(r);
    assert_int_equal(json_array_size(a.skipped), 0);

    /* Session b never subscribed: nothing at all reaches it. */
    conn_finish_expect_nothing_more(&b);
    conn_finish_expect_nothing_more(&a);
}

/* ---- End of input ---- */

static void test_eof_waits_for_running_requests_then_returns_ok(void **state)
{
    conn c;
    conn_start(&c, *state);
    init_ok(&c, "2025-11-25");
    sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"gate\"}}");
    hs_wait(&hs.started);
    assert_int_equal(shutdown(c.fd, SHUT_WR), 0);
    /* The handler is held at its gate, so the server cannot have returned; give it every
     * chance to go wrong by waiting a little before opening the gate. */
    assert_false(wait_done(&c, 100));
    hs_set(&hs.gate_open, 1);
    json_t *r = recv_msg(&c);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 9);
    assert_string_equal(text_of(r), "gated");
    json_decref(r);
    assert_null(recv_msg_within(&c, DEADLINE_MS)); /* then the server closes */
    if (!wait_done(&c, DEADLINE_MS))
        fail_msg("mcp_serve_fds did not return");
    assert_int_equal(uv_thread_join(&c.thread), 0);
    assert_int_equal(c.rc, MCP_OK);
    close(c.fd);
    mcp__buf_free(&c.in);
    json_decref(c.skipped);
    uv_cond_destroy(&c.cond);
    uv_mutex_destroy(&c.lock);
}

static void test_eof_with_nothing_running_returns_ok_at_once(void **state)
{
    conn c;
    conn_start(&c, *state);
    conn_finish_expect_nothing_more(&c);
}

static void test_serve_fds_refuses_bad_arguments(void **state)
{
    assert_int_equal(mcp_serve_fds(NULL, 0, 1), MCP_EINVAL);
    assert_int_equal(mcp_serve_fds(*state, -1, 1), MCP_EINVAL);
    assert_int_equal(mcp_serve_fds(*state, 0, -1), MCP_EINVAL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(uv_mutex_init(&hs.lock), 0);
    assert_int_equal(uv_cond_init(&hs.cond), 0);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_initialize_echoes_a_supported_version_and_describes_the_server),
        T(test_initialize_with_an_unknown_version_gets_the_latest),
        T(test_initialize_without_a_version_is_invalid_params),
        T(test_ping_before_initialize_is_answered_and_other_requests_are_refused),
        T(test_malformed_line_gets_a_parse_error_and_the_session_goes_on),
        T(test_batches_are_answered_with_2025_03_26),
        T(test_batches_are_refused_with_2025_06_18),
        T(test_batches_are_refused_with_2025_11_25),
        T(test_tools_list_is_paged_with_the_cursor),
        T(test_tools_call_runs_inline_and_worker_handlers),
        T(test_tools_call_of_revision_2026_runs_inline_modern_handlers_on_the_loop),
        T(test_worker_handler_messages_arrive_before_its_result),
        T(test_inline_handler_messages_arrive_before_its_result),
        T(test_progress_without_a_token_sends_nothing),
        T(test_set_error_becomes_the_jsonrpc_error),
        T(test_null_result_without_error_is_an_internal_error),
        T(test_output_schema_violation_is_an_internal_error),
        T(test_input_schema_violation_is_a_tool_error_naming_the_field),
        T(test_ctx_request_reaches_the_client_and_returns_its_answer),
        T(test_ctx_request_timeout_sends_cancelled_and_fails_with_timedout),
        T(test_ctx_request_after_the_client_input_ends_fails_at_once),
        T(test_cancelled_from_the_client_wakes_the_handler_and_sends_no_response),
        T(test_sleep_without_cancellation_sleeps_its_time_and_answers),
        T(test_set_level_filters_log_messages),
        T(test_resource_updates_go_only_to_subscribed_sessions),
        T(test_eof_waits_for_running_requests_then_returns_ok),
        T(test_eof_with_nothing_running_returns_ok_at_once),
        T(test_serve_fds_refuses_bad_arguments),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
