/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/protocol/common.c: error strings, versions, log levels and the
 * content and result builders.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/common.h>

/* Fails unless `got` equals the JSON text `want`; releases `got`. */
static void expect_json(json_t *got, const char *want)
{
    json_error_t err;
    json_t *w = json_loads(want, 0, &err);
    if (!w)
        fail_msg("bad expected JSON at %d: %s", err.position, err.text);
    if (!got)
        fail_msg("builder returned NULL, wanted %s", want);
    if (!json_equal(got, w)) {
        char *dump = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        print_error("got  %s\nwant %s\n", dump ? dump : "(dump failed)", want);
        free(dump);
        json_decref(w);
        json_decref(got);
        fail();
    }
    json_decref(w);
    json_decref(got);
}

/* ---- Errors, versions, levels ---- */

static void test_strerror_has_a_distinct_sentence_for_every_code(void **state)
{
    (void)state;
    const char *seen[1 - MCP_ECONNECT];
    for (int code = MCP_OK; code >= MCP_ECONNECT; code--) {
        const char *s = mcp_strerror(code);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        assert_string_not_equal(s, mcp_strerror(-1000));
        for (int j = 0; j < -code; j++)
            assert_string_not_equal(s, seen[j]);
        seen[-code] = s;
    }
    assert_string_equal(mcp_strerror(MCP_ENOMEM), "Out of memory");
    assert_non_null(mcp_strerror(1));
    assert_non_null(mcp_strerror(INT32_MIN));
}

static void test_rpc_error_clear_releases_data_and_zeroes(void **state)
{
    (void)state;
    mcp_rpc_error e = {.code = MCP_RPC_INVALID_PARAMS, .data = json_object()};
    snprintf(e.message, sizeof e.message, "%s", "bad");
    mcp_rpc_error_clear(&e);
    assert_int_equal(e.code, 0);
    assert_string_equal(e.message, "");
    assert_null(e.data);
    mcp_rpc_error_clear(&e); /* clearing an empty one is fine */
    mcp_rpc_error_clear(NULL);
}

static void test_protocol_versions_supported_are_exactly_the_five(void **state)
{
    (void)state;
    static const char *const ok[] = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
                                     "2024-11-05"};
    for (size_t i = 0; i < 5; i++) {
        char copy[16];
        snprintf(copy, sizeof copy, "%s", ok[i]);
        const char *v = mcp_protocol_version_supported(copy);
        assert_non_null(v);
        assert_string_equal(v, ok[i]);
        assert_ptr_not_equal(v, copy); /* a static string, not the argument */
    }
    assert_string_equal(mcp_protocol_version_supported(MCP_PROTOCOL_LATEST), "2025-11-25");
    static const char *const bad[] = {"",          "2024-10-07", "2026-07-29", "2025-11-25 ",
                                      "2025-11-2", "latest"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(mcp_protocol_version_supported(bad[i]));
    assert_null(mcp_protocol_version_supported(NULL));
}

static void test_log_level_names_round_trip(void **state)
{
    (void)state;
    static const char *const names[] = {"debug", "info",     "notice", "warning",
                                        "error", "critical", "alert",  "emergency"};
    for (int i = MCP_LOG_DEBUG; i <= MCP_LOG_EMERGENCY; i++) {
        assert_string_equal(mcp_log_level_name((mcp_log_level)i), names[i]);
        assert_int_equal(mcp_log_level_parse(names[i]), i);
    }
    assert_null(mcp_log_level_name((mcp_log_level)8));
    assert_null(mcp_log_level_name((mcp_log_level)-1));
    assert_int_equal(mcp_log_level_parse("verbose"), MCP_EINVAL);
    assert_int_equal(mcp_log_level_parse(""), MCP_EINVAL);
    assert_int_equal(mcp_log_level_parse(NULL), MCP_EINVAL);
}

/* ---- Content blocks ---- */

static void test_text_image_audio_and_embedded_content_blocks(void **state)
{
    (void)state;
    expect_json(mcp_text_content("hi \"there\""),
                "{\"type\":\"text\",\"text\":\"hi \\\"there\\\"\"}");
    expect_json(mcp_image_content("iVBORw0=", "image/png"),
                "{\"type\":\"image\",\"data\":\"iVBORw0=\",\"mimeType\":\"image/png\"}");
    expect_json(mcp_audio_content("UklGRg==", "audio/wav"),
                "{\"type\":\"audio\",\"data\":\"UklGRg==\",\"mimeType\":\"audio/wav\"}");
    expect_json(mcp_embedded_text_content("file:///a.txt", "text/plain", "body"),
                "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///a.txt\","
                "\"mimeType\":\"text/plain\",\"text\":\"body\"}}");
    expect_json(
        mcp_embedded_text_content("file:///a.txt", NULL, "body"),
        "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///a.txt\",\"text\":\"body\"}}");
}

static void test_text_content_replaces_invalid_utf8_instead_of_failing(void **state)
{
    (void)state;
    expect_json(mcp_text_content("ok \xff \xc3\xa9 \xe2\x82"),
                "{\"type\":\"text\",\"text\":\"ok \\ufffd \\u00e9 \\ufffd\\ufffd\"}");
    /* Surrogates encoded in UTF-8 and overlong forms are not valid either. */
    expect_json(mcp_text_content("\xed\xa0\x80\xc0\xaf"),
                "{\"type\":\"text\",\"text\":\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"}");
}

static void test_builders_refuse_null_required_arguments(void **state)
{
    (void)state;
    assert_null(mcp_text_content(NULL));
    assert_null(mcp_image_content(NULL, "image/png"));
    assert_null(mcp_audio_content("AAAA", NULL));
    assert_null(mcp_embedded_text_content(NULL, "text/plain", "x"));
    assert_null(mcp_text_result(NULL));
    assert_null(mcp_content_result(NULL));
    assert_null(mcp_structured_result(NULL));
    assert_null(mcp_resource_text(NULL, NULL, "x"));
    assert_null(mcp_resource_blob("a:b", NULL, NULL, 3));
    assert_null(mcp_message("user", NULL));
    assert_null(mcp_prompt_result("d", NULL));
    /* Stolen arguments are released even when the builder fails (ASan checks this). */
    assert_null(mcp_message(NULL, mcp_text_content("dropped")));
}

/* ---- Results ---- */

static void test_text_and_content_results(void **state)
{
    (void)state;
    expect_json(mcp_text_result("done"), "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
    json_t *arr = json_array();
    json_array_append_new(arr, mcp_text_content("a"));
    json_array_append_new(arr, mcp_image_content("AAAA", "image/gif"));
    expect_json(mcp_content_result(arr),
                "{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/gif\"}]}");
}

static void test_structured_result_carries_object_and_its_compact_text(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:i,s:[s,b]}", "sum", 3, "list", "x", 1);
    assert_non_null(obj);
    json_t *r = mcp_structured_result(obj);
    assert_non_null(r);
    /* The text is the compact dump, byte for byte, in insertion order. */
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
    assert_string_equal(text, "{\"sum\":3,\"list\":[\"x\",true]}");
    expect_json(r,
                "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"sum\\\":3,\\\"list\\\":"
                "[\\\"x\\\",true]}\"}],\"structuredContent\":{\"sum\":3,\"list\":[\"x\",true]}}");
}

static void test_tool_error_formats_message_and_sets_is_error(void **state)
{
    (void)state;
    expect_json(mcp_tool_error("argument '%s' must be %d or more", "n", 1),
                "{\"content\":[{\"type\":\"text\",\"text\":\"argument 'n' must be 1 or more\"}],"
                "\"isError\":true}");
    char big[3000];
    memset(big, 'e', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    json_t *r = mcp_tool_error("%s!", big);
    assert_non_null(r);
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
    assert_int_equal(strlen(text), 3000);
    assert_int_equal(text[2999], '!');
    assert_true(json_is_true(json_object_get(r, "isError")));
    json_decref(r);
}

static void test_resource_text_and_blob_results(void **state)
{
    (void)state;
    expect_json(mcp_resource_text("test://static/1", "text/plain", "hello"),
                "{\"contents\":[{\"uri\":\"test://static/1\",\"mimeType\":\"text/plain\","
                "\"text\":\"hello\"}]}");
    expect_json(mcp_resource_text("test://static/1", NULL, "hello"),
                "{\"contents\":[{\"uri\":\"test://static/1\",\"text\":\"hello\"}]}");
    expect_json(mcp_resource_blob("test://bin", "application/octet-stream", "foobar", 6),
                "{\"contents\":[{\"uri\":\"test://bin\",\"mimeType\":\"application/octet-stream\","
                "\"blob\":\"Zm9vYmFy\"}]}");
    const unsigned char bytes[] = {0x00, 0xff, 0x10};
    expect_json(mcp_resource_blob("test://bin", NULL, bytes, sizeof bytes),
                "{\"contents\":[{\"uri\":\"test://bin\",\"blob\":\"AP8Q\"}]}");
    expect_json(mcp_resource_blob("test://empty", NULL, NULL, 0),
                "{\"contents\":[{\"uri\":\"test://empty\",\"blob\":\"\"}]}");
}

static void test_message_and_prompt_result(void **state)
{
    (void)state;
    expect_json(mcp_message("user", mcp_text_content("hi")),
                "{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}");

    json_t *msgs = json_array();
    json_array_append_new(msgs, mcp_message("user", mcp_text_content("q")));
    json_array_append_new(msgs, mcp_message("assistant", mcp_text_content("a")));
    expect_json(mcp_prompt_result("A simple prompt", msgs),
                "{\"description\":\"A simple prompt\",\"messages\":["
                "{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"q\"}},"
                "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"a\"}}]}");

    /* Without a description the key is left out, not sent as null. */
    expect_json(mcp_prompt_result(NULL, json_array()), "{\"messages\":[]}");
}

static void test_base64_encode_is_public_and_padded(void **state)
{
    (void)state;
    char *s = mcp_base64_encode("fo", 2);
    assert_string_equal(s, "Zm8=");
    free(s);
    s = mcp_base64_encode("", 0);
    assert_string_equal(s, "");
    free(s);
}

/* ---- Allocation failure ---- */

/* Fails the allocation numbered fail_at (0-based) once armed; counts them all. */
static long alloc_count;
static long fail_at = -1;

static void *failing_malloc(size_t n)
{
    if (fail_at >= 0 && alloc_count++ == fail_at)
        return NULL;
    return malloc(n);
}

static json_t *build(int which)
{
    switch (which) {
    case 0:
        return mcp_text_result("t");
    case 1:
        return mcp_tool_error("e %d", 1);
    case 2:
        return mcp_structured_result(json_pack("{s:[i,i]}", "a", 1, 2));
    case 3:
        return mcp_resource_blob("u:x", "m/t", "abc", 3);
    case 4:
        return mcp_resource_text("u:x", NULL, "t");
    case 5:
        return mcp_prompt_result("d", json_pack("[o]", mcp_message("user", mcp_text_content("q"))));
    case 6:
        return mcp_embedded_text_content("u:x", "m/t", "t");
    default:
        return mcp_content_result(json_pack("[o,o]", mcp_image_content("AAAA", "image/png"),
                                            mcp_audio_content("AAAA", "audio/wav")));
    }
}

static void test_builders_fail_cleanly_at_every_allocation(void **state)
{
    (void)state;
    /* Each builder is run with its 1st, 2nd, ... jansson allocation failing until one
     * run completes; every failed run must return NULL and leak nothing (ASan's leak
     * checker sees to that), stolen arguments included. */
    json_set_alloc_funcs(failing_malloc, free);
    for (int which = 0; which < 8; which++) {
        for (long i = 0;; i++) {
            alloc_count = 0;
            fail_at = i;
            json_t *r = build(which);
            long used = alloc_count;
            fail_at = -1;
            if (used <= i) {
                /* Nothing failed this time: the builder must have succeeded. */
                assert_non_null(r);
                /* Every builder makes several JSON values, so several runs failed. */
                assert_true(i >= 3);
                json_decref(r);
                break;
            }
            json_decref(r);
            assert_true(i < 1000);
        }
    }
    json_set_alloc_funcs(malloc, free);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror_has_a_distinct_sentence_for_every_code),
        cmocka_unit_test(test_rpc_error_clear_releases_data_and_zeroes),
        cmocka_unit_test(test_protocol_versions_supported_are_exactly_the_five),
        cmocka_unit_test(test_log_level_names_round_trip),
        cmocka_unit_test(test_text_image_audio_and_embedded_content_blocks),
        cmocka_unit_test(test_text_content_replaces_invalid_utf8_instead_of_failing),
        cmocka_unit_test(test_builders_refuse_null_required_arguments),
        cmocka_unit_test(test_text_and_content_results),
        cmocka_unit_test(test_structured_result_carries_object_and_its_compact_text),
        cmocka_unit_test(test_tool_error_formats_message_and_sets_is_error),
        cmocka_unit_test(test_resource_text_and_blob_results),
        cmocka_unit_test(test_message_and_prompt_result),
        cmocka_unit_test(test_base64_encode_is_public_and_padded),
        cmocka_unit_test(test_builders_fail_cleanly_at_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
