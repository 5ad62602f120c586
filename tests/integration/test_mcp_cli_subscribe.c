/* SPDX-License-Identifier: MIT */
/*
 * `mcp subscribe` against server_stdio_peer: the acknowledgement on stderr, one line
 * per notification on stdout (--json: one JSON object per line), in both eras; a
 * graceful end by the server exits 0, a server that goes away 3, SIGINT 0; usage.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "harness.h"

static char peer[512];

static void test_modern_subscription_prints_each_notification_until_the_server_ends_it(void **state)
{
    (void)state;
    const char *args[] = {"--timeout", "10000",     "--",    peer,      "--end-listen-after",
                          "3",         "subscribe", "tools", "prompts", NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "notifications/tools/list_changed\n"
                               "notifications/tools/list_changed\n"
                               "notifications/tools/list_changed\n");
    /* The peer has no prompts: it acknowledges the tools list alone. */
    cr_expect_contains("stderr", r.err, "mcp: subscribed to tools list changes\n");
    cr_expect_contains("stderr", r.err, "the server ended the subscription");
    cr_run_free(&r);

    const char *json[] = {"--json", "--", peer, "--end-listen-after", "1", "subscribe", NULL};
    cr_run_mcp(&r, json);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out,
                       "{\"method\":\"notifications/subscriptions/acknowledged\",\"params\":");
    cr_expect_contains("stdout", r.out,
                       "\n{\"method\":\"notifications/tools/list_changed\",\"params\":{\"_meta\":{"
                       "\"io.modelcontextprotocol/subscriptionId\":1}}}\n");
    cr_run_free(&r);
}

static void test_legacy_subscription_and_a_server_that_goes_away(void **state)
{
    (void)state;
    const char *args[] = {
        "--protocol", "legacy",    "--",    peer,        "--legacy", "--exit-after-subscribe",
        "2",          "subscribe", "tools", "file:///a", NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 3);
    assert_string_equal(r.out, "notifications/tools/list_changed\n"
                               "notifications/tools/list_changed\n"
                               "notifications/resources/updated file:///a\n");
    cr_expect_contains("stderr", r.err,
                       "mcp: subscribed to tools list changes, updates of file:///a\n");
    cr_expect_contains("stderr", r.err, "mcp: the subscription ended: ");
    cr_run_free(&r);
}

static void test_sigint_ends_a_subscription_with_status_0(void **state)
{
    (void)state;
    /* timeout sends SIGINT to mcp alone, a second later; the peer keeps the
     * subscription open. */
    char mcp[512];
    assert_int_equal(harness_bin_path("mcp", mcp, sizeof(mcp)), 0);
    const char *argv[] = {"timeout", "-s", "INT", "1", mcp, "--", peer, "subscribe", NULL};
    cr_run r;
    long long t0 = harness_now_ms();
    cr_run_program(&r, argv, CR_MCP_DEADLINE_MS);
    cr_expect_status(&r, 124); /* timeout's own status: it had to send the signal */
    assert_true(harness_now_ms() - t0 < 5000);
    cr_expect_contains("stderr", r.err, "mcp: subscribed to tools list changes");
    cr_run_free(&r);
    /* And mcp itself exits 0 on it: timeout --preserve-status passes its status on. */
    const char *keep[] = {"timeout", "--preserve-status", "-s", "INT", "1", mcp, "--",
                          peer,      "subscribe",         NULL};
    cr_run_program(&r, keep, CR_MCP_DEADLINE_MS);
    cr_expect_status(&r, 0);
    cr_run_free(&r);
}

static void test_subscribe_is_a_command_word(void **state)
{
    (void)state;
    /* It ends the server command, as the other command words do. */
    const char *args[] = {"--", "/nonexistent/server", "subscribe", NULL};
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, 3);
    cr_run_free(&r);
    const char *help[] = {"--help", NULL};
    cr_run_mcp(&r, help);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "subscribe [WHAT...]");
    cr_expect_contains("stdout", r.out, "--protocol P");
    cr_run_free(&r);
}

int main(void)
{
    if (harness_bin_path("server_stdio_peer", peer, sizeof(peer)) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_modern_subscription_prints_each_notification_until_the_server_ends_it),
        cmocka_unit_test(test_legacy_subscription_and_a_server_that_goes_away),
        cmocka_unit_test(test_sigint_ends_a_subscription_with_status_0),
        cmocka_unit_test(test_subscribe_is_a_command_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
