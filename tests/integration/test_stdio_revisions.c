/* SPDX-License-Identifier: MIT */
/*
 * What the server asks of a client follows the protocol version they
 * negotiated, not only what the client declared: elicitation/create exists from
 * 2025-06-18 on, so a 2025-03-26 client that declares elicitation anyway is
 * never sent one (the tool learns MCP_ENOTSUP). And revision 2026-07-28 has no
 * requests to the client at all: a request of that revision is never followed by
 * one (stdio.mdx: the server MUST NOT write JSON-RPC requests to stdout), the tool
 * learns MCP_ENOTSUP at once, on every transport. Raw JSON lines against
 * mcp-everything --stdio.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "harness.h"

#define WAIT_MS 10000

static int setup(void **state)
{
    char path[4096];
    harness_proc *p = calloc(1, sizeof(*p));
    if (p == NULL || harness_bin_path("mcp-everything", path, sizeof(path)) != 0) {
        free(p);
        return -1;
    }
    const char *argv[] = {path, "--stdio", NULL};
    if (harness_spawn(p, argv) != 0) {
        free(p);
        return -1;
    }
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    harness_proc *p = *state;
    harness_kill(p);
    free(p);
    return 0;
}

/* The next message from the server, failing the test when none comes in time. */
static json_t *next_message(harness_proc *p)
{
    char *bad = NULL;
    json_t *msg = harness_read_json(p, WAIT_MS, &bad);
    if (msg == NULL)
        fail_msg("no JSON message from the server within %d ms (got: %s)", WAIT_MS,
                 bad ? bad : "nothing");
    return msg;
}

/* Initializes as a client of `version` that declares elicitation, then calls the
 * test_elicitation tool. */
static void initialize_and_call_elicitation_tool(harness_proc *p, const char *version)
{
    char line[512];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"%s\",\"capabilities\":{\"elicitation\":{}},"
             "\"clientInfo\":{\"name\":\"revisions-test\",\"version\":\"1\"}}}",
             version);
    assert_int_equal(harness_send_line(p, line, WAIT_MS), 0);
    json_t *msg = next_message(p);
    const char *got = NULL;
    if (json_unpack(msg, "{s:{s:s}}", "result", "protocolVersion", &got) != 0 ||
        strcmp(got, version) != 0)
        fail_msg("initialize %s: the server did not agree to the version", version);
    json_decref(msg);
    assert_int_equal(
        harness_send_line(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                          WAIT_MS),
        0);
    assert_int_equal(harness_send_line(p,
                                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                       "\"params\":{\"name\":\"test_elicitation\","
                                       "\"arguments\":{\"message\":\"Who are you?\"}}}",
                                       WAIT_MS),
                     0);
}

/* The text of the first content block of the tools/call result (id 2) msg. */
static const char *result_text(const json_t *msg)
{
    assert_int_equal(json_integer_value(json_object_get(msg, "id")), 2);
    const json_t *first =
        json_array_get(json_object_get(json_object_get(msg, "result"), "content"), 0);
    const char *text = json_string_value(json_object_get(first, "text"));
    assert_non_null(text);
    return text;
}

static void test_no_elicitation_for_a_2025_03_26_client_that_declares_it(void **state)
{
    harness_proc *p = *state;
    initialize_and_call_elicitation_tool(p, "2025-03-26");
    /* The first message after the call is its result: no elicitation/create came. */
    json_t *msg = next_message(p);
    if (json_object_get(msg, "method") != NULL)
        fail_msg("the server sent %s to a 2025-03-26 client",
                 json_string_value(json_object_get(msg, "method")));
    assert_true(json_is_true(json_object_get(json_object_get(msg, "result"), "isError")));
    const char *text = result_text(msg);
    if (strstr(text, mcp_strerror(MCP_ENOTSUP)) == NULL)
        fail_msg("expected the tool to report MCP_ENOTSUP, got: %s", text);
    json_decref(msg);
}

static void test_elicitation_for_a_2025_06_18_client_that_declares_it(void **state)
{
    harness_proc *p = *state;
    initialize_and_call_elicitation_tool(p, "2025-06-18");
    json_t *req = next_message(p);
    assert_string_equal(json_string_value(json_object_get(req, "method")), "elicitation/create");
    json_t *answer = json_pack("{s:s, s:O, s:{s:s}}", "jsonrpc", "2.0", "id",
                               json_object_get(req, "id"), "result", "action", "decline");
    assert_non_null(answer);
    assert_int_equal(harness_send_json(p, answer, WAIT_MS), 0);
    json_decref(answer);
    json_decref(req);
    json_t *msg = next_message(p);
    const char *text = result_text(msg);
    if (strstr(text, "action=decline") == NULL)
        fail_msg("expected the tool to report the declined elicitation, got: %s", text);
    json_decref(msg);
}

/* ping_client in a request of revision 2026-07-28 (no initialize): its result comes
 * next, and no ping request before it. */
static void test_no_request_to_a_2026_07_28_client(void **state)
{
    harness_proc *p = *state;
    assert_int_equal(
        harness_send_line(p,
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                          "\"params\":{\"name\":\"ping_client\",\"arguments\":{},\"_meta\":{"
                          "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                          "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
                          WAIT_MS),
        0);
    json_t *msg = next_message(p);
    if (json_object_get(msg, "method") != NULL)
        fail_msg("the server sent %s to a 2026-07-28 client",
                 json_string_value(json_object_get(msg, "method")));
    assert_true(json_is_true(json_object_get(json_object_get(msg, "result"), "isError")));
    const char *text = result_text(msg);
    if (strstr(text, mcp_strerror(MCP_ENOTSUP)) == NULL)
        fail_msg("expected the tool to report MCP_ENOTSUP, got: %s", text);
    json_decref(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_no_elicitation_for_a_2025_03_26_client_that_declares_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elicitation_for_a_2025_06_18_client_that_declares_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_request_to_a_2026_07_28_client, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
