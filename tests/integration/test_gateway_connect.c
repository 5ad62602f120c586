/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway --connect URL: a remote server offered on stdio, over real loopback
 * sockets. The test is the stdio client: it writes lines to the gateway's stdin and
 * reads its stdout, with mcp-everything --http (or a scripted raw HTTP server) behind.
 *   - initialize (a string id), then, without waiting, notifications/initialized,
 *     tools/list and calls: every answer under the client's own id, a stream the
 *     server closes is resumed, a batch is answered member by member; stdin's end
 *     exits 0;
 *   - a script written whole, its input ended before initialize is answered: every
 *     answer, in order (one request in flight at a time), then exit 0;
 *   - every request carries the --header lines, and stdin's end ends the session
 *     with DELETE;
 *   - garbage, an over-long line, an empty batch and a bad id get their JSON-RPC
 *     errors, and the gateway goes on serving;
 *   - requests past --max-pending wait for room in order, while the client's answer to
 *     the server's request and its cancellation of one that waits go at once;
 *   - our own client in revision 2026-07-28 calls a tool through the gateway;
 *   - a server that is down at start: initialize gets an error that says so, and
 *     the gateway exits 1 with a message on stderr;
 *   - a server that never answers: --request-timeout-ms answers -32001 and cancels
 *     the request at the server; an initialize never answered ends the gateway;
 *   - a HTTP+SSE server (--http-sse) is served; its SSE stream's end is the
 *     server lost: the call in flight gets an error, the gateway exits 1;
 *   - a server killed and restarted on its port: the next call succeeds (a new
 *     session, with the client's initialize) with nothing done by the client;
 *   - SIGTERM answers the requests in flight with an error and exits 0;
 *   - a client that does not read stdout while the server sends: the gateway ends
 *     at --max-queued with status 1, its memory bounded;
 *   - hostile servers: a session id with a CR in it is refused (initialize gets an
 *     error, nothing carries it back); streams of a new event id alone with retry: 0
 *     are given up at the retry limit, the standalone stream as a call's; a 200 JSON
 *     answer that is no JSON gets a JSON-RPC error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_watch.h"
#include "harness.h"
#include "http_expect.h"
#include "raw_server.h"

#define LINE_MS 10000
#define EXIT_MS 10000

static char gateway[4096];

typedef struct gw {
    harness_proc p;
    char err_path[64]; /* the gateway's stderr */
} gw;

/* The gateway of the test running, killed by the teardown when the test failed
 * before it could end it (the test's own frame is gone then: a copy is kept). */
static pid_t current_pid;
static char current_err[64];

/* Starts `mcp-gateway --connect url flags...` with its stderr into a file. */
static void gw_start(gw *g, const char *url, const char *const flags[])
{
    snprintf(g->err_path, sizeof(g->err_path), "/tmp/gw-connect-err-XXXXXX");
    int fd = mkstemp(g->err_path);
    assert_true(fd >= 0);
    close(fd);
    char script[160];
    snprintf(script, sizeof(script), "exec \"$0\" \"$@\" 2>>%s", g->err_path);
    const char *argv[32] = {"/bin/sh", "-c", script, gateway, "--connect", url};
    size_t n = 6;
    for (size_t i = 0; flags != NULL && flags[i] != NULL && n < 31; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    if (harness_spawn(&g->p, argv) != 0)
        fail_msg("cannot start %s", gateway);
    current_pid = g->p.pid;
    snprintf(current_err, sizeof(current_err), "%s", g->err_path);
}

/* The gateway's stderr so far (malloc'd). */
static char *gw_stderr(gw *g)
{
    FILE *f = fopen(g->err_path, "r");
    char *buf = calloc(1, 1 << 20);
    if (f != NULL && buf != NULL) {
        size_t n = fread(buf, 1, (1 << 20) - 1, f);
        buf[n] = '\0';
    }
    if (f != NULL)
        fclose(f);
    return buf;
}

static void gw_free(gw *g)
{
    harness_kill(&g->p);
    unlink(g->err_path);
    current_pid = 0;
}

static int teardown(void **state)
{
    (void)state;
    if (current_pid > 0) {
        int status;
        /* Only a child still running (not one reaped already, whose pid may be reused). */
        if (waitpid(current_pid, &status, WNOHANG) == 0) {
            kill(current_pid, SIGKILL);
            harness_wait_pid(current_pid, 5000, &status);
        }
        unlink(current_err);
        current_pid = 0;
    }
    return 0;
}

static void send_line(gw *g, const char *line)
{
    if (harness_send_line(&g->p, line, LINE_MS) != 0)
        fail_msg("cannot write to the gateway: %.200s", line);
}

/* The next message the gateway writes. */
static json_t *next_msg(gw *g, int timeout_ms)
{
    char *bad = NULL;
    json_t *m = harness_read_json(&g->p, timeout_ms, &bad);
    if (m == NULL) {
        char *err = gw_stderr(g);
        fail_msg("no message from the gateway within %d ms (eof %d, line %.200s); stderr:\n%s",
                 timeout_ms, g->p.eof, bad != NULL ? bad : "-", err);
    }
    return m;
}

/* The next answer (a message with an id and no method), skipping notifications. */
static json_t *next_answer(gw *g, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        json_t *m = next_msg(g, harness_left_ms(deadline));
        if (json_object_get(m, "method") == NULL)
            return m;
        json_decref(m);
    }
}

/* Asserts that m answers id (a JSON text) with a result, and returns the result. */
static json_t *result_of(json_t *m, const char *id)
{
    json_t *want = json_loads(id, JSON_DECODE_ANY, NULL);
    if (!json_equal(json_object_get(m, "id"), want) || json_object_get(m, "result") == NULL) {
        char *t = json_dumps(m, JSON_COMPACT);
        fail_msg("expected a result for id %s, got %s", id, t);
    }
    json_decref(want);
    return json_object_get(m, "result");
}

/* Asserts that m answers id (a JSON text, "null" included) with error code. */
static void expect_error(json_t *m, const char *id, int code, const char *words)
{
    json_t *want = json_loads(id, JSON_DECODE_ANY, NULL);
    json_t *e = json_object_get(m, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (!json_equal(json_object_get(m, "id"), want) ||
        json_integer_value(json_object_get(e, "code")) != code ||
        (words != NULL && !harness_contains_ci(msg, words))) {
        char *t = json_dumps(m, JSON_COMPACT);
        fail_msg("expected error %d (\"%s\") for id %s, got %s", code, words ? words : "", id, t);
    }
    json_decref(want);
}

static const char *text_of(json_t *result)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

#define INIT(id)                                                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"initialize\",\"params\":{"                    \
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","       \
    "\"version\":\"1\"}}}"
#define INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"

/* initialize and notifications/initialized; the answer is checked. */
static void gw_init(gw *g)
{
    send_line(g, INIT("\"init\""));
    json_t *m = next_answer(g, LINE_MS);
    assert_string_equal(
        json_string_value(json_object_get(result_of(m, "\"init\""), "protocolVersion")),
        "2025-11-25");
    json_decref(m);
    send_line(g, INITIALIZED);
}

/* Closes stdin and expects exit status `code` within EXIT_MS. */
static void gw_expect_exit(gw *g, int code)
{
    harness_close_stdin(&g->p);
    int status = 0;
    if (harness_wait_exit(&g->p, EXIT_MS, &status) != 0) {
        char *err = gw_stderr(g);
        fail_msg("the gateway did not exit within %d ms; stderr:\n%s", EXIT_MS, err);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != code) {
        char *err = gw_stderr(g);
        fail_msg("the gateway's status is %d, not exit %d; stderr:\n%s", status, code, err);
    }
}

static void url_of(int port, char *buf, size_t size)
{
    snprintf(buf, size, "http://127.0.0.1:%d/mcp", port);
}

/* ---- Tests ---- */

static void test_initialize_list_call_resume_and_batch(void **state)
{
    (void)state;
    static const char *const sflags[] = {"--retry-ms", "100", NULL};
    hc_server s;
    if (hc_server_start(&s, sflags, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--log-level", "warning", NULL};
    gw_start(&g, url, flags);

    /* Everything in one write, as a script would: what follows initialize waits for
     * its answer in the gateway, so that notifications/initialized and the requests
     * find the session made. */
    static const char script[] = INIT(
        "\"init\"") "\n" INITIALIZED "\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":\"call-3\",\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"echo\",\"arguments\":{\"text\":\"through the gateway\"}}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"test_reconnection\",\"arguments\":{}}}\n"
                    "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"},"
                    "{\"jsonrpc\":\"2.0\",\"id\":\"six\",\"method\":\"ping\"}]\n";
    if (harness_write(&g.p, script, sizeof(script) - 1, LINE_MS) != 0)
        fail_msg("cannot write to the gateway");

    int seen = 0;
    while (seen != 0x3f) {
        json_t *m = next_answer(&g, LINE_MS);
        json_t *id = json_object_get(m, "id");
        if (json_is_string(id) && strcmp(json_string_value(id), "init") == 0) {
            assert_int_equal(seen, 0); /* the first answer */
            seen |= 1;
        } else if (json_integer_value(id) == 2) {
            json_t *tools = json_object_get(result_of(m, "2"), "tools");
            assert_true(json_array_size(tools) > 10);
            seen |= 2;
        } else if (json_is_string(id) && strcmp(json_string_value(id), "call-3") == 0) {
            assert_string_equal(text_of(result_of(m, "\"call-3\"")), "through the gateway");
            seen |= 4;
        } else if (json_integer_value(id) == 4) {
            const char *t = text_of(result_of(m, "4"));
            assert_non_null(t);
            assert_true(strncmp(t, "Reconnection test completed successfully", 40) == 0);
            seen |= 8;
        } else if (json_integer_value(id) == 5) {
            assert_int_equal(json_object_size(result_of(m, "5")), 0);
            seen |= 16;
        } else if (json_is_string(id) && strcmp(json_string_value(id), "six") == 0) {
            assert_int_equal(json_object_size(result_of(m, "\"six\"")), 0);
            seen |= 32;
        } else {
            char *t = json_dumps(m, JSON_COMPACT);
            fail_msg("an answer nobody asked for: %s", t);
        }
        json_decref(m);
    }
    gw_expect_exit(&g, 0);
    /* Nothing went wrong on the way: notifications/initialized, say, was not refused for
     * coming before the session. */
    char *err = gw_stderr(&g);
    if (harness_contains_ci(err, "warning") || harness_contains_ci(err, "error"))
        fail_msg("the gateway reported a problem:\n%s", err);
    free(err);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

/* The raw server: initialize and the rest as rs_mcp_basic answers them, a call with
 * its name as text, ping with {}. */
static void basic_handler(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    const char *m = rs_rpc_method(req);
    if (m != NULL && strcmp(m, "tools/call") == 0) {
        char *t = rs_call_result(req, "called");
        rs_respond(c, 200, "Content-Type: application/json\r\n", t);
        free(t);
    } else if (m != NULL && strcmp(m, "ping") == 0) {
        json_t *a = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id",
                              json_object_get(req->msg, "id"), "result");
        char *t = json_dumps(a, JSON_COMPACT);
        rs_respond(c, 200, "Content-Type: application/json\r\n", t);
        free(t);
        json_decref(a);
    } else {
        rs_respond(c, 400, NULL, NULL);
    }
}

static void test_script_written_whole_then_eof(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--max-pending", "1", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    /* printf ... | mcp-gateway --connect URL: the input ends before initialize is
     * answered, with requests that must wait for it, then for room, one at a time. */
    static const char script[] = INIT(
        "\"init\"") "\n" INITIALIZED "\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"slow_echo\",\"arguments\":{\"text\":\"one\",\"delay_ms\":100}}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"slow_echo\",\"arguments\":{\"text\":\"two\",\"delay_ms\":100}}}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n";
    if (harness_write(&g.p, script, sizeof(script) - 1, LINE_MS) != 0)
        fail_msg("cannot write to the gateway");
    harness_close_stdin(&g.p);
    long long t0 = harness_now_ms();
    static const char *const ids[] = {"\"init\"", "1", "2", "3"};
    for (size_t i = 0; i < 4; i++) {
        json_t *m = next_answer(&g, LINE_MS);
        json_t *r = result_of(m, ids[i]); /* one at a time: in order */
        if (i == 1)
            assert_string_equal(text_of(r), "one");
        if (i == 2)
            assert_string_equal(text_of(r), "two");
        json_decref(m);
    }
    int status = 0;
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0)
        fail_msg("the gateway did not exit after its input ended");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("# a script written whole: answered and ended in %lld ms\n", harness_now_ms() - t0);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

static void test_headers_on_every_request_and_delete_at_eof(void **state)
{
    (void)state;
    rs_server *rs;
    assert_int_equal(rs_start(&rs, basic_handler, NULL), 0);
    char url[64];
    rs_url(rs, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--header", "Authorization: Bearer t0ken", "--header",
                                        "X-Extra: two words", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"x\",\"arguments\":{}}}");
    json_t *m = next_answer(&g, LINE_MS);
    assert_string_equal(text_of(result_of(m, "1")), "called");
    json_decref(m);
    gw_expect_exit(&g, 0);
    assert_int_equal(rs_wait(rs, "DELETE", 1, HX_REQ_MS), 0);
    const rs_request *del = rs_nth(rs, "DELETE", 0);
    assert_string_equal(rs_header(del, "mcp-session-id"), RS_SESSION);
    size_t n = rs_count(rs, NULL);
    assert_true(n >= 4); /* initialize, initialized, the standalone GET, the call, DELETE */
    for (size_t i = 0; i < n; i++) {
        const rs_request *r = rs_nth(rs, NULL, i);
        assert_string_equal(rs_header(r, "authorization"), "Bearer t0ken");
        assert_string_equal(rs_header(r, "x-extra"), "two words");
    }
    rs_stop(rs);
    gw_free(&g);
}

static void test_bad_input_gets_errors_and_the_gateway_goes_on(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--max-message", "4096", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);

    send_line(&g, "this is not json");
    json_t *m = next_answer(&g, LINE_MS);
    expect_error(m, "null", -32700, "parse error");
    json_decref(m);

    char *huge = malloc(100001);
    assert_non_null(huge);
    memset(huge, 'x', 100000);
    huge[100000] = '\0';
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":"
                               "{\"pad\":\"";
    memcpy(huge, head, sizeof(head) - 1);
    send_line(&g, huge);
    free(huge);
    m = next_answer(&g, LINE_MS);
    expect_error(m, "null", -32600, "too large");
    json_decref(m);

    send_line(&g, "[]");
    m = next_answer(&g, LINE_MS);
    expect_error(m, "null", -32600, "empty batch");
    json_decref(m);

    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    expect_error(m, "null", -32600, NULL);
    json_decref(m);

    send_line(&g, "{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    expect_error(m, "7", -32600, NULL);
    json_decref(m);

    /* A cancellation of nothing known, an answer to no request: dropped. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                  "{\"requestId\":\"nobody\"}}");
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":{}}");

    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":\"still\",\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    assert_int_equal(json_object_size(result_of(m, "\"still\"")), 0);
    json_decref(m);
    gw_expect_exit(&g, 0);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

/* A port nothing listens on (it was free a moment ago). */
static int dead_port(void)
{
    rs_server *rs;
    assert_int_equal(rs_start(&rs, basic_handler, NULL), 0);
    int port = rs_port(rs);
    rs_stop(rs);
    return port;
}

static void test_requests_past_max_pending_wait_for_room(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--max-pending", "1", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);

    /* One request in flight at most: ping_client asks the client first, and the client's
     * answer must reach the server while the requests behind it wait for room. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"ping_client\",\"arguments\":{}}}");
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"slow_echo\",\"arguments\":{\"text\":\"two\",\"delay_ms\":200}}}");
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"slow_echo\",\"arguments\":{\"text\":\"three\",\"delay_ms\":"
                  "30000}}}");
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
    json_t *m = next_msg(&g, LINE_MS);
    if (json_string_value(json_object_get(m, "method")) == NULL ||
        strcmp(json_string_value(json_object_get(m, "method")), "ping") != 0) {
        char *t = json_dumps(m, JSON_COMPACT);
        fail_msg("expected the server's ping first, got %s", t);
    }
    json_t *answer =
        json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", json_object_get(m, "id"), "result");
    json_decref(m);
    char *t = json_dumps(answer, JSON_COMPACT);
    json_decref(answer);
    send_line(&g, t);
    free(t);
    /* The server's call 3 is never sent: the client cancels it while it waits. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                  "{\"requestId\":3}}");
    static const char *const order[] = {"1", "2", "4"};
    for (size_t i = 0; i < 3; i++) {
        m = next_answer(&g, LINE_MS);
        json_t *r = result_of(m, order[i]);
        if (i == 0)
            assert_string_equal(text_of(r), "pong");
        if (i == 1)
            assert_string_equal(text_of(r), "two");
        json_decref(m);
    }
    long long t0 = harness_now_ms();
    gw_expect_exit(&g, 0);
    assert_true(harness_now_ms() - t0 < 3000); /* nothing of call 3 was waited for */
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

static void test_modern_client_through_the_gateway(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64], mcp[4096], err_path[64], script[160];
    url_of(s.port, url, sizeof(url));
    assert_int_equal(harness_bin_path("mcp", mcp, sizeof(mcp)), 0);
    snprintf(err_path, sizeof(err_path), "/tmp/gw-connect-err-XXXXXX");
    int fd = mkstemp(err_path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(script, sizeof(script), "exec \"$0\" \"$@\" 2>>%s", err_path);
    /* Our own client in revision 2026-07-28 (no initialize, each request on its own),
     * with the gateway as its stdio server; the server command ends where mcp's own
     * words begin. */
    const char *argv[] = {
        mcp,     "--protocol",      "2026-07-28", "--",          "/bin/sh", "-c",    script,
        gateway, "--connect",       url,          "--log-level", "info",    "tools", "call",
        "echo",  "text=modern era", NULL};
    harness_proc p;
    assert_int_equal(harness_spawn(&p, argv), 0);
    char *out = harness_read_line(&p, LINE_MS, NULL);
    int status = 0;
    int exited = harness_wait_exit(&p, EXIT_MS, &status) == 0;
    gw g = {.p = {.pid = 0, .in_fd = -1, .out_fd = -1}};
    snprintf(g.err_path, sizeof(g.err_path), "%s", err_path);
    char *log = gw_stderr(&g);
    unlink(err_path);
    if (out == NULL || strcmp(out, "modern era") != 0 || !exited || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        fail_msg("mcp through the gateway: output %s, status %d; the gateway's log:\n%s",
                 out != NULL ? out : "(none)", status, log);
    free(out);
    /* Revision 2026-07-28 has no initialize: the gateway passed none. */
    if (strstr(log, "method=tools/call status=ok") == NULL ||
        strstr(log, "method=initialize") != NULL)
        fail_msg("the gateway's log does not show a modern call:\n%s", log);
    free(log);
    harness_kill(&p);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

static void test_server_down_at_start_is_an_error_and_exit_1(void **state)
{
    (void)state;
    char url[64];
    url_of(dead_port(), url, sizeof(url));
    gw g;
    gw_start(&g, url, NULL);
    long long t0 = harness_now_ms();
    send_line(&g, INIT("1"));
    json_t *m = next_answer(&g, LINE_MS);
    expect_error(m, "1", -32603, "connect");
    json_decref(m);
    int status = 0;
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0) /* without stdin's end */
        fail_msg("the gateway did not exit by itself");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    printf("# down at start: error and exit after %lld ms\n", harness_now_ms() - t0);
    char *err = gw_stderr(&g);
    if (!harness_contains_ci(err, "cannot be used") || !harness_contains_ci(err, url))
        fail_msg("stderr does not say why:\n%s", err);
    free(err);
    gw_free(&g);
}

/* initialize is answered; a call is never answered (the handler waits for the client
 * to give up); ping is. */
static void silent_handler(rs_conn *c, const rs_request *req, void *user)
{
    int *init_silent = user;
    const char *m = rs_rpc_method(req);
    if (m != NULL && strcmp(m, "initialize") == 0 && *init_silent) {
        rs_wait_peer_close(c, 30000);
        return;
    }
    if (m != NULL && strcmp(m, "tools/call") == 0) {
        rs_wait_peer_close(c, 30000);
        return;
    }
    basic_handler(c, req, NULL);
}

static void test_request_timeout_when_the_server_never_answers(void **state)
{
    (void)state;
    int init_silent = 0;
    rs_server *rs;
    assert_int_equal(rs_start(&rs, silent_handler, &init_silent), 0);
    char url[64];
    rs_url(rs, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--request-timeout-ms", "400", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    long long t0 = harness_now_ms();
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"x\",\"arguments\":{}}}");
    json_t *m = next_answer(&g, LINE_MS);
    long long took = harness_now_ms() - t0;
    expect_error(m, "\"slow\"", -32001, "timed out");
    json_decref(m);
    assert_true(took >= 390 && took < 5000);
    /* The server was told: notifications/cancelled for the gateway's id of the call. */
    long long deadline = harness_now_ms() + HX_REQ_MS;
    const rs_request *cancel = NULL;
    while (cancel == NULL && harness_now_ms() < deadline) {
        for (size_t i = 0; i < rs_count(rs, "POST"); i++) {
            const rs_request *r = rs_nth(rs, "POST", i);
            const char *meth = rs_rpc_method(r);
            if (meth != NULL && strcmp(meth, "notifications/cancelled") == 0)
                cancel = r;
        }
        if (cancel == NULL)
            rs_wait(rs, "POST", rs_count(rs, "POST") + 1, 200);
    }
    assert_non_null(cancel);
    const rs_request *call = NULL;
    for (size_t i = 0; i < rs_count(rs, "POST"); i++)
        if (rs_is_call(rs_nth(rs, "POST", i), "x"))
            call = rs_nth(rs, "POST", i);
    assert_non_null(call);
    assert_true(json_equal(json_object_get(json_object_get(cancel->msg, "params"), "requestId"),
                           json_object_get(call->msg, "id")));
    /* The gateway goes on. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    result_of(m, "3");
    json_decref(m);
    gw_expect_exit(&g, 0);
    gw_free(&g);
    rs_stop(rs);

    /* An initialize never answered ends the gateway. */
    init_silent = 1;
    assert_int_equal(rs_start(&rs, silent_handler, &init_silent), 0);
    rs_url(rs, url, sizeof(url));
    gw_start(&g, url, flags);
    send_line(&g, INIT("1"));
    m = next_answer(&g, LINE_MS);
    expect_error(m, "1", -32001, "timed out");
    json_decref(m);
    int status = 0;
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0)
        fail_msg("the gateway did not exit by itself");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    char *err = gw_stderr(&g);
    if (!harness_contains_ci(err, "did not answer initialize"))
        fail_msg("stderr does not say why:\n%s", err);
    free(err);
    gw_free(&g);
    rs_stop(rs);
}

static void test_http_sse_server_served_then_lost(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/sse", s.port);
    gw g;
    static const char *const flags[] = {"--http-sse", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    send_line(&g, INIT("\"init\""));
    json_t *m = next_answer(&g, LINE_MS);
    result_of(m, "\"init\"");
    json_decref(m);
    send_line(&g, INITIALIZED);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"echo\",\"arguments\":{\"text\":\"over sse\"}}}");
    m = next_answer(&g, LINE_MS);
    assert_string_equal(text_of(result_of(m, "1")), "over sse");
    json_decref(m);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"slow_echo\",\"arguments\":{\"text\":\"x\",\"delay_ms\":30000}}}");
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    result_of(m, "3");
    json_decref(m);
    /* The SSE stream that carries every answer ends: the call in flight gets an
     * error, and the gateway ends, having no way left to the server. */
    kill(s.pid, SIGKILL);
    int status;
    assert_int_equal(hc_server_wait(&s, HX_STOP_MS, &status), 0);
    m = next_answer(&g, LINE_MS);
    expect_error(m, "2", -32603, NULL);
    /* The SSE stream's end, or the call's own POST when the server died before it
     * answered 202: either way the error says what happened. */
    const char *why = json_string_value(json_object_get(json_object_get(m, "error"), "message"));
    if (!harness_contains_ci(why, "was lost") && !harness_contains_ci(why, "POST to the SSE"))
        fail_msg("the error does not say why: %s", why);
    json_decref(m);
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0)
        fail_msg("the gateway did not exit by itself");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    char *err = gw_stderr(&g);
    if (!harness_contains_ci(err, "was lost"))
        fail_msg("stderr does not say why:\n%s", err);
    free(err);
    gw_free(&g);
    hc_server_free(&s);
}

static void test_server_restart_renews_the_session(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    int port = s.port;
    char url[64];
    url_of(port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"echo\",\"arguments\":{\"text\":\"before\"}}}");
    json_t *m = next_answer(&g, LINE_MS);
    assert_string_equal(text_of(result_of(m, "1")), "before");
    json_decref(m);

    kill(s.pid, SIGKILL);
    int status;
    assert_int_equal(hc_server_wait(&s, HX_STOP_MS, &status), 0);
    hc_server_free(&s);
    if (hc_server_start_on(&s, port, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start again on port %d", port);

    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"echo\",\"arguments\":{\"text\":\"after\"}}}");
    m = next_answer(&g, LINE_MS);
    assert_string_equal(text_of(result_of(m, "2")), "after");
    json_decref(m);
    gw_expect_exit(&g, 0);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

/* Waits for the gateway's stderr to hold text. 0, or -1 at the deadline. */
static int gw_wait_stderr(gw *g, const char *text, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        char *err = gw_stderr(g);
        int found = harness_contains_ci(err, text);
        free(err);
        if (found)
            return 0;
        if (harness_now_ms() >= deadline)
            return -1;
        /* The log is a file: nothing to wait on but time, in small steps. */
        struct pollfd none;
        poll(&none, 0, 20);
    }
}

static void test_standalone_stream_reopened_on_the_new_session(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    int port = s.port;
    char url[64];
    url_of(port, url, sizeof(url));
    gw g;
    /* One reconnection that brings nothing, and the standalone stream is given up. */
    static const char *const flags[] = {"--max-retries", "1", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    json_t *m = next_answer(&g, LINE_MS);
    result_of(m, "1");
    json_decref(m);

    kill(s.pid, SIGKILL);
    int status;
    assert_int_equal(hc_server_wait(&s, HX_STOP_MS, &status), 0);
    hc_server_free(&s);
    if (gw_wait_stderr(&g, "not reopened", 15000) != 0) {
        char *err = gw_stderr(&g);
        fail_msg("the standalone stream was not given up; stderr:\n%s", err);
    }
    if (hc_server_start_on(&s, port, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start again on port %d", port);

    /* The first request meets the 404 and makes the new session; the subscription is
     * the client's to make again there (the server forgot it with the session). */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":"
                  "{\"uri\":\"test://watched-resource\"}}");
    m = next_answer(&g, LINE_MS);
    result_of(m, "2");
    json_decref(m);
    /* An update not tied to a request comes on the standalone stream, which the new
     * session must have again. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"trigger_resource_update\",\"arguments\":{\"uri\":"
                  "\"test://watched-resource\"}}}");
    int updated = 0, answered = 0;
    long long deadline = harness_now_ms() + LINE_MS;
    while (!(updated && answered)) {
        m = next_msg(&g, harness_left_ms(deadline));
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method != NULL && strcmp(method, "notifications/resources/updated") == 0)
            updated = 1;
        else if (method == NULL)
            answered = json_integer_value(json_object_get(m, "id")) == 3;
        json_decref(m);
    }
    gw_expect_exit(&g, 0);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

static void test_sigterm_answers_requests_in_flight_and_exits_0(void **state)
{
    (void)state;
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {"--drain-ms", "300", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"slow_echo\",\"arguments\":{\"text\":\"late\",\"delay_ms\":30000}}}");
    /* Lines are taken in order: once ping (sent after the call) is answered, the call is
     * in flight in the gateway. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    json_t *m = next_answer(&g, LINE_MS);
    result_of(m, "2");
    json_decref(m);
    long long t0 = harness_now_ms();
    kill(g.p.pid, SIGTERM); /* sh exec'd the gateway: same pid */
    m = next_answer(&g, LINE_MS);
    expect_error(m, "1", -32603, "stopping");
    json_decref(m);
    assert_true(harness_now_ms() - t0 < 5000);
    int status = 0;
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0)
        fail_msg("the gateway did not exit after SIGTERM");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

/* VmRSS of pid in KiB, or -1. */
static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    return kb;
}

/* Writes all of data to fd without reading anything back, within the deadline. */
static int write_all_blind(int fd, const char *data, size_t len, long long deadline)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, harness_left_ms(deadline)) <= 0)
            return -1;
    }
    return 0;
}

static void test_unread_stdout_ends_the_gateway_at_max_queued(void **state)
{
    (void)state;
    /* Under ASan, freed buffers of 200 KB sit in its quarantine and count in RSS: kept
     * small, so that the peak measures the gateway's queue, not ASan's. */
    hc_asan_small_quarantine(4);
    hc_server s;
    if (hc_server_start(&s, NULL, HX_START_MS) != 0)
        fail_msg("mcp-everything did not start");
    char url[64];
    url_of(s.port, url, sizeof(url));
    gw g;
    static const char *const flags[] = {
        "--max-message", "262144", "--max-queued", "1048576", "--log-level", "warning", NULL};
    gw_start(&g, url, flags);
    gw_init(&g);
    long idle = rss_kb(g.p.pid);
    /* 64 calls of 200,000 bytes each come back as 12.8 MB that nobody reads. */
    size_t tlen = 200000;
    char *line = malloc(tlen + 200);
    assert_non_null(line);
    int n = snprintf(line, 200,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                     "\"echo\",\"arguments\":{\"text\":\"");
    memset(line + n, 'y', tlen);
    memcpy(line + n + tlen, "\"}}}\n", 6);
    long long deadline = harness_now_ms() + 20000;
    long peak = idle;
    int status = 0, exited = 0;
    for (int i = 0; i < 64 && !exited; i++) {
        if (write_all_blind(g.p.in_fd, line, strlen(line), deadline) != 0)
            break; /* it is gone: EPIPE */
        long kb = rss_kb(g.p.pid);
        if (kb > peak)
            peak = kb;
        exited = harness_wait_pid(g.p.pid, 0, &status) == 0;
    }
    free(line);
    if (!exited && harness_wait_pid(g.p.pid, harness_left_ms(deadline), &status) != 0) {
        char *err = gw_stderr(&g);
        fail_msg("the gateway did not end while nobody read its stdout; stderr:\n%s", err);
    }
    g.p.pid = 0;
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    printf("# unread stdout: idle VmRSS %ld KiB, peak seen %ld KiB, --max-queued 1 MiB\n", idle,
           peak);
    assert_true(peak < idle + 32 * 1024);
    char *err = gw_stderr(&g);
    if (!harness_contains_ci(err, "does not read"))
        fail_msg("stderr does not say why:\n%s", err);
    free(err);
    gw_free(&g);
    assert_int_equal(hc_server_stop_check(&s, HX_STOP_MS), 0);
}

/* ---- Hostile servers ---- */

enum hostile { H_BAD_SESSION, H_RETRY_0, H_UNREADABLE };

typedef struct hostile_srv {
    enum hostile kind;
    pthread_mutex_t mu;
    int gets; /* GETs of the standalone stream and resumptions */
} hostile_srv;

/*
 * H_BAD_SESSION: initialize's answer names a session id with a CR in it.
 * H_RETRY_0: every GET (the standalone stream and each resumption) and the stream of
 * a call "stall" bring a new event id alone, with retry: 0, and end.
 * H_UNREADABLE: a call of "garbage" is answered 200 application/json that is no JSON.
 */
static void hostile_handler(rs_conn *c, const rs_request *req, void *user)
{
    hostile_srv *h = user;
    const char *m = rs_rpc_method(req);
    if (h->kind == H_BAD_SESSION && m != NULL && strcmp(m, "initialize") == 0) {
        rs_mcp_initialize(c, req, "abc\rX-Injected: yes");
        return;
    }
    if (h->kind == H_RETRY_0 && (strcmp(req->method, "GET") == 0 || rs_is_call(req, "stall"))) {
        pthread_mutex_lock(&h->mu);
        int n = ++h->gets;
        pthread_mutex_unlock(&h->mu);
        char id[32];
        snprintf(id, sizeof(id), "e%d", n);
        rs_sse_head(c, NULL);
        rs_sse_event(c, id, 0, NULL);
        rs_sse_end(c);
        return;
    }
    if (h->kind == H_UNREADABLE && rs_is_call(req, "garbage")) {
        rs_respond(c, 200, "Content-Type: application/json\r\n", "{\"jsonrpc\":\"2.0\", oops");
        return;
    }
    basic_handler(c, req, NULL);
}

/* Starts the hostile server h of kind, and a gateway in front of it. */
static rs_server *hostile_start(hostile_srv *h, enum hostile kind, gw *g)
{
    *h = (hostile_srv){.kind = kind};
    pthread_mutex_init(&h->mu, NULL);
    rs_server *rs;
    assert_int_equal(rs_start(&rs, hostile_handler, h), 0);
    char url[64];
    rs_url(rs, url, sizeof(url));
    gw_start(g, url, NULL);
    return rs;
}

static void hostile_stop(hostile_srv *h, rs_server *rs, gw *g)
{
    gw_free(g);
    rs_stop(rs);
    pthread_mutex_destroy(&h->mu);
}

static int hostile_gets(hostile_srv *h)
{
    pthread_mutex_lock(&h->mu);
    int n = h->gets;
    pthread_mutex_unlock(&h->mu);
    return n;
}

static void test_session_id_with_a_cr_is_refused(void **state)
{
    (void)state;
    hostile_srv h;
    gw g;
    rs_server *rs = hostile_start(&h, H_BAD_SESSION, &g);
    send_line(&g, INIT("1"));
    json_t *m = next_answer(&g, LINE_MS);
    expect_error(m, "1", -32603, "visible ASCII");
    json_decref(m);
    int status = 0;
    if (harness_wait_exit(&g.p, EXIT_MS, &status) != 0)
        fail_msg("the gateway did not exit by itself");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    for (size_t i = 0; i < rs_count(rs, NULL); i++) {
        const rs_request *q = rs_nth(rs, NULL, i);
        if (rs_header(q, "mcp-session-id") != NULL || rs_header(q, "x-injected") != NULL)
            fail_msg("request %zu (%s) carries the session id back", i, q->method);
    }
    hostile_stop(&h, rs, &g);
}

static void test_new_ids_alone_with_retry_0_are_given_up(void **state)
{
    (void)state;
    hostile_srv h;
    gw g;
    rs_server *rs = hostile_start(&h, H_RETRY_0, &g);
    gw_init(&g);
    /* The standalone stream: its first GET and 5 reconnections at most (the default
     * --max-retries), each no sooner than the 100 ms floor. */
    long long t0 = harness_now_ms();
    rs_wait(rs, "GET", 7, 1500); /* the window ends early when a 7th comes */
    int standalone = (int)rs_count(rs, "GET");
    printf("# retry: 0, a new id alone: %d standalone GETs in %lld ms\n", standalone,
           harness_now_ms() - t0);
    assert_true(standalone <= 6);
    while (hostile_gets(&h) < standalone) /* its handler has counted the last one */
        rs_wait(rs, "GET", (size_t)standalone + 1, 10);
    /* A call's stream: given up after 5 resumptions with an error. */
    t0 = harness_now_ms();
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"stall\",\"arguments\":{}}}");
    json_t *m = next_answer(&g, 5000);
    long long took = harness_now_ms() - t0;
    expect_error(m, "7", -32603, "gave up");
    json_decref(m);
    int call = hostile_gets(&h) - standalone;
    printf("# retry: 0, a new id alone: the call's stream and %d resumptions, given up after "
           "%lld ms\n",
           call - 1, took);
    assert_int_equal(call, 6);
    assert_true(took >= 5 * 100);
    gw_expect_exit(&g, 0);
    hostile_stop(&h, rs, &g);
}

static void test_unreadable_json_answer_gets_an_error(void **state)
{
    (void)state;
    hostile_srv h;
    gw g;
    rs_server *rs = hostile_start(&h, H_UNREADABLE, &g);
    gw_init(&g);
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":\"g\",\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"garbage\",\"arguments\":{}}}");
    json_t *m = next_answer(&g, 5000);
    expect_error(m, "\"g\"", -32603, "cannot be read");
    json_decref(m);
    /* The gateway goes on. */
    send_line(&g, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    m = next_answer(&g, LINE_MS);
    result_of(m, "3");
    json_decref(m);
    gw_expect_exit(&g, 0);
    hostile_stop(&h, rs, &g);
}

int main(void)
{
    if (harness_bin_path("mcp-gateway", gateway, sizeof(gateway)) != 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_initialize_list_call_resume_and_batch, teardown),
        cmocka_unit_test_teardown(test_script_written_whole_then_eof, teardown),
        cmocka_unit_test_teardown(test_headers_on_every_request_and_delete_at_eof, teardown),
        cmocka_unit_test_teardown(test_bad_input_gets_errors_and_the_gateway_goes_on, teardown),
        cmocka_unit_test_teardown(test_requests_past_max_pending_wait_for_room, teardown),
        cmocka_unit_test_teardown(test_modern_client_through_the_gateway, teardown),
        cmocka_unit_test_teardown(test_server_down_at_start_is_an_error_and_exit_1, teardown),
        cmocka_unit_test_teardown(test_request_timeout_when_the_server_never_answers, teardown),
        cmocka_unit_test_teardown(test_http_sse_server_served_then_lost, teardown),
        cmocka_unit_test_teardown(test_server_restart_renews_the_session, teardown),
        cmocka_unit_test_teardown(test_standalone_stream_reopened_on_the_new_session, teardown),
        cmocka_unit_test_teardown(test_sigterm_answers_requests_in_flight_and_exits_0, teardown),
        cmocka_unit_test_teardown(test_unread_stdout_ends_the_gateway_at_max_queued, teardown),
        cmocka_unit_test_teardown(test_session_id_with_a_cr_is_refused, teardown),
        cmocka_unit_test_teardown(test_new_ids_alone_with_retry_0_are_given_up, teardown),
        cmocka_unit_test_teardown(test_unreadable_json_answer_gets_an_error, teardown),
    };
    return cmocka_run_group_tests_name("gateway_connect", tests, NULL, NULL);
}
