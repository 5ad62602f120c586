/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/protocol/revision.c: the table of protocol revisions, its
 * order, and each rule as the spec of each revision has it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/common.h>

#include "protocol/revision.h"

/* What the spec says of each revision we speak, newest first. */
static const struct {
    const char *version;
    int batches, priming, protocol_version_header, elicitation, modern, resource_not_found;
} expected[] = {
    {"2026-07-28", 0, 0, 1, 1, 1, MCP_RPC_INVALID_PARAMS},
    {"2025-11-25", 0, 1, 1, 1, 0, MCP_RPC_RESOURCE_NOT_FOUND},
    {"2025-06-18", 0, 0, 1, 1, 0, MCP_RPC_RESOURCE_NOT_FOUND},
    {"2025-03-26", 1, 0, 0, 0, 0, MCP_RPC_RESOURCE_NOT_FOUND},
    {"2024-11-05", 0, 0, 0, 0, 0, MCP_RPC_RESOURCE_NOT_FOUND},
};

#define NEXPECTED (sizeof expected / sizeof expected[0])

static void test_find_gives_the_row_of_each_version_we_speak(void **state)
{
    (void)state;
    for (size_t i = 0; i < NEXPECTED; i++) {
        /* A copy: the lookup compares text, not pointers. */
        char copy[16];
        snprintf(copy, sizeof copy, "%s", expected[i].version);
        const mcp__revision *rev = mcp__revision_find(copy);
        assert_non_null(rev);
        assert_string_equal(rev->version, expected[i].version);
        assert_ptr_equal(mcp__revision_find(rev->version), rev);
        /* The public lookup answers with the row's own static string. */
        assert_ptr_equal(mcp_protocol_version_supported(copy), rev->version);
    }
}

static void test_find_refuses_unknown_versions_and_null(void **state)
{
    (void)state;
    static const char *const unknown[] = {
        "",           "2025-11-2",  "2025-11-250", " 2025-11-25", "2025-11-25 ",
        "2024-10-07", "2026-07-27", "1999-01-01",  "latest",      "2025-11-25\n",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_null(mcp__revision_find(unknown[i]));
        assert_null(mcp_protocol_version_supported(unknown[i]));
    }
    assert_null(mcp__revision_find(NULL));
    assert_null(mcp_protocol_version_supported(NULL));
}

static void test_table_is_newest_first_and_the_latest_is_the_public_one(void **state)
{
    (void)state;
    /* The latest is the newest legacy revision, what initialize offers; the modern one
     * comes first in the table. */
    assert_string_equal(mcp__revision_latest()->version, MCP_PROTOCOL_LATEST);
    assert_false(mcp__revision_latest()->modern);
    assert_ptr_equal(mcp__revision_at(1), mcp__revision_latest());
    assert_ptr_equal(mcp__revision_at(0), mcp__revision_modern());
    assert_string_equal(mcp__revision_modern()->version, MCP_PROTOCOL_2026_07_28);
    assert_null(mcp__revision_find_legacy(MCP_PROTOCOL_2026_07_28));
    assert_ptr_equal(mcp__revision_find_legacy(MCP_PROTOCOL_LATEST), mcp__revision_latest());
    assert_null(mcp__revision_find_legacy(NULL));
    assert_int_equal(mcp__revision_count(), NEXPECTED);
    for (size_t i = 0; i < NEXPECTED; i++) {
        const mcp__revision *rev = mcp__revision_at(i);
        assert_non_null(rev);
        assert_string_equal(rev->version, expected[i].version);
        /* Dates as YYYY-MM-DD sort as text. */
        if (i > 0)
            assert_true(strcmp(mcp__revision_at(i - 1)->version, rev->version) > 0);
    }
    assert_null(mcp__revision_at(NEXPECTED));
    assert_null(mcp__revision_at((size_t)-1));
}

static void test_rules_of_each_revision_follow_its_spec(void **state)
{
    (void)state;
    for (size_t i = 0; i < NEXPECTED; i++) {
        const mcp__revision *rev = mcp__revision_find(expected[i].version);
        assert_non_null(rev);
        assert_int_equal(!!rev->batches, expected[i].batches);
        assert_int_equal(!!rev->priming, expected[i].priming);
        assert_int_equal(!!rev->protocol_version_header, expected[i].protocol_version_header);
        assert_int_equal(!!rev->elicitation, expected[i].elicitation);
        assert_int_equal(!!rev->modern, expected[i].modern);
        /* -32002 until 2026-07-28, which makes it -32602. */
        assert_int_equal(rev->resource_not_found, expected[i].resource_not_found);
    }
}

static int only_priming(const mcp__revision *rev)
{
    return rev->priming;
}

static int none(const mcp__revision *rev)
{
    (void)rev;
    return 0;
}

static void test_list_names_the_kept_rows_newest_first(void **state)
{
    (void)state;
    char out[128];
    assert_string_equal(mcp__revision_list(out, sizeof out, NULL),
                        "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05");
    assert_string_equal(mcp__revision_list(out, sizeof out, only_priming), "2025-11-25");
    assert_string_equal(mcp__revision_list(out, sizeof out, none), "");
}

static void test_list_leaves_out_what_does_not_fit_whole(void **state)
{
    (void)state;
    char out[64];
    /* "2026-07-28, 2025-11-25" is 22 bytes: with its NUL it needs 23. */
    memset(out, 'x', sizeof out);
    assert_string_equal(mcp__revision_list(out, 23, NULL), "2026-07-28, 2025-11-25");
    memset(out, 'x', sizeof out);
    assert_string_equal(mcp__revision_list(out, 22, NULL), "2026-07-28");
    memset(out, 'x', sizeof out);
    assert_string_equal(mcp__revision_list(out, 5, NULL), "");
    /* Nothing is written where there is no room at all. */
    memset(out, 'x', sizeof out);
    mcp__revision_list(out, 0, NULL);
    assert_int_equal(out[0], 'x');
}

static void test_batch_refusal_names_the_revisions_with_batches(void **state)
{
    (void)state;
    char out[160];
    assert_string_equal(
        mcp__revision_batch_refusal(out, sizeof out),
        "Invalid Request: JSON-RPC batches are only allowed with protocol version 2025-03-26");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_gives_the_row_of_each_version_we_speak),
        cmocka_unit_test(test_find_refuses_unknown_versions_and_null),
        cmocka_unit_test(test_table_is_newest_first_and_the_latest_is_the_public_one),
        cmocka_unit_test(test_rules_of_each_revision_follow_its_spec),
        cmocka_unit_test(test_list_names_the_kept_rows_newest_first),
        cmocka_unit_test(test_list_leaves_out_what_does_not_fit_whole),
        cmocka_unit_test(test_batch_refusal_names_the_revisions_with_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
