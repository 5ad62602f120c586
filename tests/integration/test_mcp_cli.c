/* SPDX-License-Identifier: MIT */
/*
 * The `mcp` command-line client against server_cli_peer, a scripted server
 * that declares exactly the capabilities a test gives it and logs every
 * method it receives: the server's JSON-RPC errors are printed with code,
 * message and data; failures name the server command as the user typed it;
 * a command whose capability the server did not declare is refused with
 * "the server does not offer ..." and exit status 1, and nothing is sent.
 *
 * Then against `mcp-everything --http 127.0.0.1:0` by URL: tools over
 * Streamable HTTP with progress and log lines, --header reaching the server
 * (its Origin check sees it), malformed headers refused, the exit statuses of
 * a refused connection (4) and of an HTTP error status (5), and --http-sse.
 * HTTPS is test_mcp_cli_https.c.
 *
 * Each run of mcp is a real process with its stdout and stderr on pipes and
 * its server on real pipes, bounded by a deadline (cli_run.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <mcp/base.h>

#include "cli_run.h"
#include "harness.h"
#include "http_client.h"

#define MAX_ARGS 30

static char peer_path[4096];
static char log_path[64];

/* The whole log file of the peer (what it received), or "" when it wrote none. */
static char *read_log(void)
{
    return cr_read_file(log_path);
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(harness_bin_path("server_cli_peer", peer_path, sizeof peer_path), 0);
    snprintf(log_path, sizeof log_path, "/tmp/mcp-cli-peer-log-XXXXXX");
    int fd = mkstemp(log_path);
    assert_true(fd >= 0);
    close(fd);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(log_path);
    return 0;
}

/* Each test starts with an empty log. */
static int clear_log(void **state)
{
    (void)state;
    FILE *f = fopen(log_path, "w");
    assert_non_null(f);
    fclose(f);
    return 0;
}

static void test_initialize_error_is_printed_with_code_message_and_data(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {"--timeout",    "10000", "--",   peer_path,
                          "--init-error", "tools", "list", NULL};
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 3);
    /* In mcp's own words, not a library log line. */
    cr_expect_contains("stderr", r.err, "mcp: error: -32602 Unsupported protocol version");
    if (strstr(r.err, "libmcp:") != NULL)
        fail_msg("the library printed on its own:\n%s", r.err);
    cr_expect_contains("stderr", r.err,
                       "{\"supported\":[\"1999-01-01\"],\"requested\":\"2025-11-25\"}");
    char named[4200];
    snprintf(named, sizeof named, "(server: %s --init-error)", peer_path);
    cr_expect_contains("stderr", r.err, named);
    assert_string_equal(r.out, "");
    cr_run_free(&r);
}

static void test_server_exiting_before_initialize_is_named_as_typed(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {"--timeout", "10000", "--",    peer_path, "--exit-at-init",
                          "a label",   "it's",  "tools", "list",    NULL};
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "exited or closed its stdout before answering initialize");
    /* Every word as typed, quoted the way a shell would need it. */
    char named[4200];
    snprintf(named, sizeof named, "(server: %s --exit-at-init 'a label' 'it'\\''s')", peer_path);
    cr_expect_contains("stderr", r.err, named);
    cr_run_free(&r);
}

static void test_server_that_cannot_start_is_named_as_typed(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {"--", "/nonexistent/mcp-test-server", "--flag", "tools", "list", NULL};
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "cannot start the server");
    cr_expect_contains("stderr", r.err, "(server: /nonexistent/mcp-test-server --flag)");
    cr_run_free(&r);
}

/* Runs mcp COMMAND WORDS (NULL-terminated) against the peer declaring caps, its
 * log cleared first. */
static void run_with_caps(cr_run *r, const char *caps, const char *const *words)
{
    clear_log(NULL);
    /* The peer speaks the legacy era, whose requests the tests count. */
    const char *args[MAX_ARGS] = {"--timeout", "10000",  "--protocol", "legacy", "--",
                                  peer_path,   "--caps", caps,         "--log",  log_path};
    size_t n = 10;
    for (size_t w = 0; words[w] != NULL && n < MAX_ARGS - 1; w++)
        args[n++] = words[w];
    args[n] = NULL;
    cr_run_mcp(r, args);
}

/* A server that declares only tools: every other command is refused and not sent. */
static void test_commands_needing_undeclared_capabilities_are_refused_unsent(void **state)
{
    (void)state;
    static const struct {
        const char *words[6];
        const char *capability;
    } cases[] = {
        {{"prompts", "list"}, "prompts"},
        {{"prompts", "get", "greeting", "name=x"}, "prompts"},
        {{"resources", "list"}, "resources"},
        {{"resources", "templates"}, "resources"},
        {{"resources", "read", "x://y"}, "resources"},
        {{"complete", "prompt", "greeting", "name", "a"}, "completions"},
        {{"logging", "set", "info"}, "logging"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_run r;
        run_with_caps(&r, "{\"tools\":{}}", cases[i].words);
        cr_expect_status(&r, 1);
        char want[128];
        snprintf(want, sizeof want, "the server does not offer %s", cases[i].capability);
        cr_expect_contains("stderr", r.err, want);
        assert_string_equal(r.out, "");
        char *log = read_log();
        if (strcmp(log, "initialize\nnotifications/initialized\n") != 0)
            fail_msg("'%s %s' sent more than initialize; the server received:\n%s",
                     cases[i].words[0], cases[i].words[1], log);
        free(log);
        cr_run_free(&r);
    }
}

/* The same commands go through when the server declared what they need. */
static void test_commands_with_declared_capabilities_are_sent(void **state)
{
    (void)state;
    static const struct {
        const char *words[6];
        const char *method;
    } cases[] = {
        {{"tools", "list"}, "tools/list"},
        {{"prompts", "list"}, "prompts/list"},
        {{"resources", "list"}, "resources/list"},
        {{"complete", "prompt", "greeting", "name", "a"}, "completion/complete"},
        {{"logging", "set", "info"}, "logging/setLevel"},
    };
    const char *caps = "{\"tools\":{},\"prompts\":{},\"resources\":{},\"completions\":{},"
                       "\"logging\":{}}";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_run r;
        run_with_caps(&r, caps, cases[i].words);
        cr_expect_status(&r, 0);
        char *log = read_log();
        char want[128];
        snprintf(want, sizeof want, "\n%s\n", cases[i].method);
        cr_expect_contains("the server's log", log, want);
        free(log);
        cr_run_free(&r);
    }
}

/* completions has been a capability since 2025-03-26: a 2024-11-05 server is not asked for it. */
static void test_completion_on_a_2024_11_05_server_needs_no_declaration(void **state)
{
    (void)state;
    clear_log(NULL);
    const char *args[] = {"--timeout", "10000",      "--",       peer_path,
                          "--version", "2024-11-05", "--caps",   "{\"prompts\":{}}",
                          "--log",     log_path,     "complete", "prompt",
                          "greeting",  "name",       "a",        NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "done");
    char *log = read_log();
    cr_expect_contains("the server's log", log, "\ncompletion/complete\n");
    free(log);
    cr_run_free(&r);
}

static void test_log_level_without_logging_capability_warns_and_sends_nothing(void **state)
{
    (void)state;
    clear_log(NULL);
    const char *args[] = {"--timeout", "10000",  "--protocol", "legacy", "--log-level",
                          "debug",     "--",     peer_path,    "--caps", "{\"tools\":{}}",
                          "--log",     log_path, "tools",      "list",   NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 0);
    cr_expect_contains("stderr", r.err, "--log-level: the server does not offer logging");
    cr_expect_contains("stdout", r.out, "echo");
    char *log = read_log();
    assert_string_equal(log, "initialize\nnotifications/initialized\ntools/list\n");
    free(log);
    cr_run_free(&r);
}

static void test_tool_call_json_rpc_error_prints_code_message_and_data(void **state)
{
    (void)state;
    const char *args[] = {"--timeout",      "10000", "--",   peer_path, "--caps",
                          "{\"tools\":{}}", "tools", "call", "explode", NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 1);
    cr_expect_contains("stderr", r.err, "error: -32603 Tool exploded\n");
    cr_expect_contains("stderr", r.err, "data: {\"reason\":\"on purpose\",\"retry\":false}\n");
    cr_run_free(&r);
}

static void test_ping_json_rpc_error_prints_code_message_and_data(void **state)
{
    (void)state;
    const char *args[] = {"--timeout", "10000", "--", peer_path, "--ping-error", "ping", NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 1);
    cr_expect_contains("stderr", r.err, "error: -32000 Busy\n");
    cr_expect_contains("stderr", r.err, "data: {\"retryAfterMs\":250}\n");
    cr_run_free(&r);
}

/* ---- By URL, against mcp-everything --http ---- */

#define SERVER_START_MS 10000
#define SERVER_STOP_MS 10000

static hc_server http_srv;
static char mcp_url[128];

/* Starts mcp-everything --http with flags (NULL-terminated, may be NULL); mcp_url is its /mcp. */
static void start_everything(const char *const flags[])
{
    assert_int_equal(hc_server_start(&http_srv, flags, SERVER_START_MS), 0);
    snprintf(mcp_url, sizeof mcp_url, "http://127.0.0.1:%d/mcp", http_srv.port);
}

static int http_setup(void **state)
{
    (void)state;
    start_everything(NULL);
    return 0;
}

static int http_setup_allowing_evil_origin(void **state)
{
    (void)state;
    const char *flags[] = {"--allowed-origin", "http://evil.example", NULL};
    start_everything(flags);
    return 0;
}

/* The server must still be there and stop cleanly: mcp's DELETE and its
 * streams left it well. */
static int http_teardown(void **state)
{
    (void)state;
    return hc_server_stop_check(&http_srv, SERVER_STOP_MS);
}

/* The URL of path on the running server. */
static const char *server_url(char *buf, size_t size, const char *path)
{
    snprintf(buf, size, "http://127.0.0.1:%d%s", http_srv.port, path);
    return buf;
}

static void test_url_lists_and_calls_tools_over_streamable_http(void **state)
{
    (void)state;
    cr_run r;
    const char *list[] = {mcp_url, "tools", "list", NULL};
    cr_run_mcp(&r, list);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "echo");
    cr_expect_contains("stdout", r.out, "long_running");
    cr_run_free(&r);

    const char *call[] = {mcp_url, "tools", "call", "echo", "text=hi", NULL};
    cr_mcp_expect(call, 0, "hi\n", NULL);

    /* The scheme in any case, and a '--' before the command out of habit. */
    char upper[160];
    snprintf(upper, sizeof upper, "HTTP://127.0.0.1:%d/mcp", http_srv.port);
    const char *ping[] = {upper, "--", "ping", NULL};
    cr_run_mcp(&r, ping);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "pong");
    cr_run_free(&r);
}

/* mcp info: what the server said of itself, in both eras (the URL asks 2026-07-28 first,
 * --protocol 2025-11-25 initializes), and as JSON. */
static void test_info_shows_what_the_server_said_of_itself(void **state)
{
    (void)state;
    static const char *const protocols[] = {"2026-07-28", "2025-11-25"};
    for (size_t i = 0; i < 2; i++) {
        cr_run r;
        const char *info[] = {"--protocol", protocols[i], mcp_url, "info", NULL};
        cr_run_mcp(&r, info);
        cr_expect_status(&r, 0);
        cr_expect_contains("stdout", r.out,
                           "mcp-everything " MCP_VERSION_STRING " (MCP Everything Server)\n");
        char line[64];
        snprintf(line, sizeof line, "protocol: %s\n", protocols[i]);
        cr_expect_contains("stdout", r.out, line);
        cr_expect_contains("stdout", r.out, "tools (listChanged)");
        cr_expect_contains("stdout", r.out, "resources (subscribe listChanged)");
        cr_expect_contains("stdout", r.out, "completions");
        cr_expect_contains("stdout", r.out, "instructions:\n  A test server");
        cr_run_free(&r);
    }
    cr_run r;
    const char *json[] = {"--json", mcp_url, "info", NULL};
    cr_run_mcp(&r, json);
    cr_expect_status(&r, 0);
    json_t *v = json_loads(r.out, 0, NULL);
    assert_non_null(v);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(v, "serverInfo"), "name")),
        "mcp-everything");
    assert_true(json_is_object(json_object_get(json_object_get(v, "capabilities"), "tools")));
    json_decref(v);
    cr_run_free(&r);
    const char *extra[] = {mcp_url, "info", "more", NULL};
    cr_mcp_expect(extra, 2, "", "unexpected argument 'more' after info");
}

/* Progress and log lines come from the same client callbacks as over stdio. */
static void test_url_tool_call_prints_progress_and_server_log_lines(void **state)
{
    (void)state;
    cr_run r;
    const char *progress[] = {mcp_url,   "tools",       "call", "long_running",
                              "steps=3", "delay_ms=10", NULL};
    cr_run_mcp(&r, progress);
    cr_expect_long_running(&r, 3);
    cr_run_free(&r);

    const char *logs[] = {"--log-level", "debug", mcp_url, "tools", "call", "log_all_levels", NULL};
    cr_run_mcp(&r, logs);
    cr_expect_status(&r, 0);
    cr_expect_contains("stderr", r.err, "[debug] debug\n");
    cr_expect_contains("stderr", r.err, "[emergency] emergency\n");
    cr_run_free(&r);
}

/*
 * The server checks Origin: a header it refuses shows that --header reaches
 * it, and gives exit status 5 with the HTTP status and the server's message.
 */
static void test_header_reaches_the_server_and_its_403_exits_5(void **state)
{
    (void)state;
    cr_run r;
    const char *evil[] = {"--header", "Origin: http://evil.example", mcp_url, "tools", "list",
                          NULL};
    cr_run_mcp(&r, evil);
    cr_expect_connect_failure(&r, 5, "HTTP 403", mcp_url);
    cr_expect_contains("stderr", r.err, "invalid Origin header: http://evil.example");
    cr_run_free(&r);

    const char *auth[] = {"--header", "Authorization: Bearer x",
                          "--header", "X-Trace: 1",
                          mcp_url,    "tools",
                          "call",     "echo",
                          "text=hi",  NULL};
    cr_mcp_expect(auth, 0, "hi\n", NULL);
}

static void test_header_allowed_by_the_server_goes_through(void **state)
{
    (void)state;
    const char *evil[] = {"--header", "Origin: http://evil.example", mcp_url, "ping", NULL};
    cr_mcp_expect(evil, 0, NULL, NULL);
}

/*
 * Malformed headers and misplaced HTTP options are usage errors, found before
 * connecting (the URL has nothing behind it: connecting would exit 4).
 */
static void test_malformed_headers_and_http_options_without_url_are_usage_errors(void **state)
{
    (void)state;
    const char *nowhere = "http://127.0.0.1:1/mcp";
    static const struct {
        const char *header;
        const char *message;
    } cases[] = {
        {"NoColon", "expected 'Name: value'"},
        {": value", "the name before ':' is empty"},
        {"Bad Name: value", "invalid --header name 'Bad Name'"},
        {"X-Empty:   ", "the value is empty"},
        {"X-Broken: a\r\nInjected: b", "holds a line break"},
        {"accept: text/plain", "mcp sets it itself"},
        {"Mcp-Session-Id: 123", "mcp sets it itself"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_run r;
        const char *args[] = {"--header", cases[i].header, nowhere, "ping", NULL};
        cr_run_mcp(&r, args);
        cr_expect_status(&r, 2);
        cr_expect_contains("stderr", r.err, cases[i].message);
        assert_string_equal(r.out, "");
        cr_run_free(&r);
    }
    static const struct {
        const char *option;
        const char *args[6];
    } need_url[] = {
        {"--header", {"--header", "Authorization: Bearer x", "--", "server", "ping"}},
        {"--cacert", {"--cacert", "/nonexistent/ca.pem", "--", "server", "ping"}},
        {"--http-sse", {"--http-sse", "--", "server", "ping"}},
    };
    for (size_t i = 0; i < sizeof need_url / sizeof need_url[0]; i++) {
        cr_run r;
        cr_run_mcp(&r, need_url[i].args);
        cr_expect_status(&r, 2);
        char want[128];
        snprintf(want, sizeof want, "option '%s' needs a server URL", need_url[i].option);
        cr_expect_contains("stderr", r.err, want);
        cr_run_free(&r);
    }
    const char *key_alone[] = {"--key", "/nonexistent/key.pem", nowhere, "ping", NULL};
    cr_mcp_expect(key_alone, 2, NULL, "--key needs --cert");
    const char *extra[] = {nowhere, "--flag", "ping", NULL};
    cr_mcp_expect(extra, 2, NULL, "a URL server takes no arguments");
}

/* A port with a socket bound to it but not listening refuses every connection. */
static void test_connection_refused_exits_4(void **state)
{
    (void)state;
    int port;
    int fd = cr_bind_loopback(&port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);

    cr_run r;
    const char *args[] = {url, "tools", "list", NULL};
    cr_run_mcp(&r, args);
    cr_expect_connect_failure(&r, 4, "the server cannot be reached", url);
    cr_run_free(&r);

    const char *httpsse[] = {"--http-sse", url, "tools", "list", NULL};
    cr_mcp_expect(httpsse, 4, NULL, NULL);
    close(fd);
}

/*
 * A path the server does not serve: the POST of initialize gets 404, the
 * client falls back to HTTP+SSE as the spec says, its GET gets 404 too: exit
 * status 5, and the message names the status.
 */
static void test_wrong_path_exits_5_naming_the_404(void **state)
{
    (void)state;
    char url[160];
    cr_run r;
    const char *args[] = {server_url(url, sizeof url, "/nowhere"), "tools", "list", NULL};
    cr_run_mcp(&r, args);
    cr_expect_connect_failure(&r, 5, "HTTP 404", url);
    cr_run_free(&r);
}

static void test_http_sse_talks_to_the_sse_endpoint(void **state)
{
    (void)state;
    char url[160];
    cr_run r;
    const char *call[] = {"--http-sse",   server_url(url, sizeof url, "/sse"),
                          "tools",        "call",
                          "long_running", "steps=2",
                          "delay_ms=10",  NULL};
    cr_run_mcp(&r, call);
    cr_expect_long_running(&r, 2);
    cr_run_free(&r);

    /* The flag is honoured: the Streamable HTTP endpoint is no SSE endpoint. */
    const char *wrong[] = {"--http-sse", mcp_url, "ping", NULL};
    cr_mcp_expect(wrong, 5, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initialize_error_is_printed_with_code_message_and_data),
        cmocka_unit_test(test_server_exiting_before_initialize_is_named_as_typed),
        cmocka_unit_test(test_server_that_cannot_start_is_named_as_typed),
        cmocka_unit_test(test_commands_needing_undeclared_capabilities_are_refused_unsent),
        cmocka_unit_test(test_commands_with_declared_capabilities_are_sent),
        cmocka_unit_test(test_completion_on_a_2024_11_05_server_needs_no_declaration),
        cmocka_unit_test(test_log_level_without_logging_capability_warns_and_sends_nothing),
        cmocka_unit_test(test_tool_call_json_rpc_error_prints_code_message_and_data),
        cmocka_unit_test(test_ping_json_rpc_error_prints_code_message_and_data),
        cmocka_unit_test_setup_teardown(test_url_lists_and_calls_tools_over_streamable_http,
                                        http_setup, http_teardown),
        cmocka_unit_test_setup_teardown(test_info_shows_what_the_server_said_of_itself, http_setup,
                                        http_teardown),
        cmocka_unit_test_setup_teardown(test_url_tool_call_prints_progress_and_server_log_lines,
                                        http_setup, http_teardown),
        cmocka_unit_test_setup_teardown(test_header_reaches_the_server_and_its_403_exits_5,
                                        http_setup, http_teardown),
        cmocka_unit_test_setup_teardown(test_header_allowed_by_the_server_goes_through,
                                        http_setup_allowing_evil_origin, http_teardown),
        cmocka_unit_test_setup_teardown(
            test_malformed_headers_and_http_options_without_url_are_usage_errors, http_setup,
            http_teardown),
        cmocka_unit_test_setup_teardown(test_connection_refused_exits_4, http_setup, http_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_path_exits_5_naming_the_404, http_setup,
                                        http_teardown),
        cmocka_unit_test_setup_teardown(test_http_sse_talks_to_the_sse_endpoint, http_setup,
                                        http_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
