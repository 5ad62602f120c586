/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/protocol/headers.c: the header values of revision
 * 2026-07-28 (plain, or the Base64 sentinel), with the spec's own examples and
 * the conformance suite's cases, and the x-mcp-header rules of a tool's
 * inputSchema, each way a tool can break them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/common.h>

#include "protocol/headers.h"

static void expect_encoded(const char *in, const char *want)
{
    char *got = mcp__header_value_encode(in, strlen(in));
    assert_non_null(got);
    assert_string_equal(got, want);
    size_t len = 0;
    char *back = mcp__header_value_decode(got, &len);
    assert_non_null(back);
    assert_int_equal(len, strlen(in));
    assert_memory_equal(back, in, len);
    free(back);
    free(got);
}

static void test_values_follow_the_spec_examples(void **state)
{
    (void)state;
    /* streamable-http.mdx, "Value Encoding". */
    expect_encoded("us-west1", "us-west1");
    expect_encoded("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?=");
    expect_encoded(" padded ", "=?base64?IHBhZGRlZCA=?=");
    expect_encoded("line1\nline2", "=?base64?bGluZTEKbGluZTI=?=");
    expect_encoded("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
}

static void test_values_of_the_conformance_cases(void **state)
{
    (void)state;
    expect_encoded("", "");
    expect_encoded("us west 1", "us west 1"); /* inner spaces stay plain */
    expect_encoded(" us-west1", "=?base64?IHVzLXdlc3Qx?=");
    expect_encoded("us-west1 ", "=?base64?dXMtd2VzdDEg?=");
    expect_encoded("\tindented", "=?base64?CWluZGVudGVk?=");
    expect_encoded("a\tb", "=?base64?YQli?=");
    expect_encoded("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?=");
    expect_encoded("x\x7f", "=?base64?eH8=?=");
    /* Only the whole sentinel shape is encoded: a prefix alone stays plain. */
    expect_encoded("=?base64?abc", "=?base64?abc");
    expect_encoded("file:///path/to/file%20name.txt", "file:///path/to/file%20name.txt");
}

static void test_decode_refuses_bad_base64(void **state)
{
    (void)state;
    size_t len;
    assert_null(mcp__header_value_decode("=?base64?not base64!?=", &len));
    assert_null(mcp__header_value_decode("=?base64?@@@@?=", &len));
    char *plain =
        mcp__header_value_decode("=?BASE64?abc?=", &len); /* case-sensitive: not a sentinel */
    assert_string_equal(plain, "=?BASE64?abc?=");
    free(plain);
}

static void expect_arg_value(const char *json, int want_rc, const char *want)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    char *out = NULL;
    assert_int_equal(mcp__header_arg_value(v, &out), want_rc);
    if (want != NULL)
        assert_string_equal(out, want);
    else
        assert_null(out);
    free(out);
    json_decref(v);
}

static void test_argument_values_by_type(void **state)
{
    (void)state;
    expect_arg_value("\"us-west1\"", MCP_OK, "us-west1");
    expect_arg_value("42", MCP_OK, "42");
    expect_arg_value("-7", MCP_OK, "-7");
    expect_arg_value("42.0", MCP_OK, "42");
    expect_arg_value("true", MCP_OK, "true");
    expect_arg_value("false", MCP_OK, "false");
    expect_arg_value("9007199254740991", MCP_OK, "9007199254740991");
    expect_arg_value("-9007199254740991", MCP_OK, "-9007199254740991");
    expect_arg_value("null", MCP_ENOENT, NULL);
    expect_arg_value("9007199254740992", MCP_EINVAL, NULL);
    expect_arg_value("3.14159", MCP_EINVAL, NULL);
    expect_arg_value("1e300", MCP_EINVAL, NULL);
    expect_arg_value("{}", MCP_EINVAL, NULL);
    expect_arg_value("[1]", MCP_EINVAL, NULL);
}

/* Parses schema text; returns the status, with the tool in *out. */
static int parse(const char *schema, mcp__header_tool **out, char *why, size_t why_size)
{
    json_t *s = json_loads(schema, 0, NULL);
    assert_non_null(s);
    int rc = mcp__header_tool_parse(s, out, why, why_size);
    json_decref(s);
    return rc;
}

static void expect_invalid(const char *schema, const char *why_part)
{
    mcp__header_tool *t = (mcp__header_tool *)1;
    char why[300];
    int rc = parse(schema, &t, why, sizeof(why));
    if (rc == MCP_OK)
        fail_msg("accepted: %s", schema);
    assert_null(t);
    if (strstr(why, why_part) == NULL)
        fail_msg("why \"%s\" does not say \"%s\"", why, why_part);
}

static void test_valid_annotations_give_their_paths(void **state)
{
    (void)state;
    mcp__header_tool *t = NULL;
    char why[200];
    assert_int_equal(parse("{\"type\":\"object\",\"properties\":{"
                           "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
                           "\"query\":{\"type\":\"string\"},"
                           "\"opts\":{\"type\":\"object\",\"properties\":{"
                           "\"level\":{\"type\":\"integer\",\"x-mcp-header\":\"Level\"}}}}}",
                           &t, why, sizeof(why)),
                     MCP_OK);
    assert_non_null(t);
    assert_int_equal(t->n, 2);
    json_t *args =
        json_pack("{s:s, s:{s:i}, s:s}", "region", "eu", "opts", "level", 3, "query", "SELECT");
    for (size_t i = 0; i < t->n; i++) {
        const json_t *v = mcp__header_param_arg(&t->params[i], args);
        if (strcmp(t->params[i].name, "Region") == 0) {
            assert_int_equal(t->params[i].depth, 1);
            assert_string_equal(json_string_value(v), "eu");
        } else {
            assert_string_equal(t->params[i].name, "Level");
            assert_int_equal(t->params[i].depth, 2);
            assert_int_equal(json_integer_value(v), 3);
        }
    }
    /* Absent values: no header. */
    json_t *empty = json_object();
    assert_null(mcp__header_param_arg(&t->params[0], empty));
    json_decref(empty);
    json_decref(args);
    mcp__header_tool_free(t);

    /* No annotation: nothing to keep. */
    t = (mcp__header_tool *)1;
    assert_int_equal(parse("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}", &t,
                           why, sizeof(why)),
                     MCP_OK);
    assert_null(t);
}

static void test_invalid_annotations_of_the_conformance_suite(void **state)
{
    (void)state;
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"\"}}}", "empty");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"object\",\"x-mcp-header\":\"Data\"}}}",
                   "type");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
                   "\"x-mcp-header\":\"Items\"}}}",
                   "type");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"null\",\"x-mcp-header\":\"Nil\"}}}", "type");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"number\",\"x-mcp-header\":\"Score\"}}}",
                   "type");
    expect_invalid("{\"properties\":{\"v\":{\"x-mcp-header\":\"NoType\"}}}", "type");
    expect_invalid("{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
                   "\"b\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"}}}",
                   "twice");
    expect_invalid("{\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"MyField\"},"
                   "\"b\":{\"type\":\"string\",\"x-mcp-header\":\"myfield\"}}}",
                   "twice");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"My Region\"}}}",
                   "token");
    expect_invalid(
        "{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"Region:Primary\"}}}",
        "token");
    expect_invalid(
        "{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"R\\u00e9gion\"}}}",
        "token");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"Region\\t1\"}}}",
                   "token");
    expect_invalid("{\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":7}}}",
                   "not a string");
}

static void test_annotations_off_the_properties_chain_make_the_tool_invalid(void **state)
{
    (void)state;
    expect_invalid("{\"type\":\"object\",\"x-mcp-header\":\"Root\"}", "root");
    expect_invalid("{\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
                   "\"x-mcp-header\":\"Item\"}}}}",
                   "not reached");
    expect_invalid("{\"properties\":{\"l\":{\"anyOf\":[{\"type\":\"string\","
                   "\"x-mcp-header\":\"Any\"}]}}}",
                   "/properties/l/anyOf/0");
    expect_invalid("{\"$defs\":{\"r\":{\"type\":\"string\",\"x-mcp-header\":\"Ref\"}},"
                   "\"properties\":{\"l\":{\"$ref\":\"#/$defs/r\"}}}",
                   "not reached");
    expect_invalid("{\"if\":{\"properties\":{\"a\":{\"type\":\"string\","
                   "\"x-mcp-header\":\"Cond\"}}}}",
                   "not reached");
    expect_invalid("{\"properties\":{\"o\":{\"type\":\"object\",\"additionalProperties\":{"
                   "\"type\":\"string\",\"x-mcp-header\":\"Extra\"}}}}",
                   "not reached");
    /* A property named x-mcp-header, and the word in data, are no annotation. */
    mcp__header_tool *t = (mcp__header_tool *)1;
    assert_int_equal(parse("{\"properties\":{\"x-mcp-header\":{\"type\":\"string\","
                           "\"default\":{\"x-mcp-header\":\"Data\"}}}}",
                           &t, NULL, 0),
                     MCP_OK);
    assert_null(t);
}

static void test_hostile_schemas_are_bounded(void **state)
{
    (void)state;
    /* 200 levels of anyOf: refused, not recursed through for ever. */
    char *deep = calloc(1, 200 * 24 + 64);
    assert_non_null(deep);
    size_t n = 0;
    for (int i = 0; i < 200; i++)
        n += (size_t)sprintf(deep + n, "{\"anyOf\":[");
    n += (size_t)sprintf(deep + n, "{}");
    for (int i = 0; i < 200; i++)
        n += (size_t)sprintf(deep + n, "]}");
    expect_invalid(deep, "deeper");
    free(deep);

    /* 65 annotations: more than a tool may make us keep. */
    char *many = calloc(1, 65 * 80 + 64);
    assert_non_null(many);
    n = (size_t)sprintf(many, "{\"properties\":{");
    for (int i = 0; i < 65; i++)
        n += (size_t)sprintf(many + n, "%s\"p%d\":{\"type\":\"string\",\"x-mcp-header\":\"H%d\"}",
                             i ? "," : "", i, i);
    sprintf(many + n, "}}");
    expect_invalid(many, "more than 64");
    free(many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_follow_the_spec_examples),
        cmocka_unit_test(test_values_of_the_conformance_cases),
        cmocka_unit_test(test_decode_refuses_bad_base64),
        cmocka_unit_test(test_argument_values_by_type),
        cmocka_unit_test(test_valid_annotations_give_their_paths),
        cmocka_unit_test(test_invalid_annotations_of_the_conformance_suite),
        cmocka_unit_test(test_annotations_off_the_properties_chain_make_the_tool_invalid),
        cmocka_unit_test(test_hostile_schemas_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
