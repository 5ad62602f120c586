/*
 * Unit tests for src/server/schema.c: the JSON Schema subset that checks tool
 * arguments and structured results, and the sentences that name the bad field.
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

#include "server/server_int.h"

/* Checks the JSON text value against the JSON text schema; returns the result and
 * copies the sentence into why (which must then name the field). */
static int check_texts(const char *schema_text, const char *value_text, char *why, size_t n)
{
    json_error_t err;
    json_t *schema = json_loads(schema_text, JSON_DECODE_ANY, &err);
    if (schema == NULL)
        fail_msg("bad schema in the test: %s", err.text);
    json_t *value = json_loads(value_text, JSON_DECODE_ANY, &err);
    if (value == NULL)
        fail_msg("bad value in the test: %s", err.text);
    int rc = mcp__schema_check(schema, value, why, n);
    json_decref(schema);
    json_decref(value);
    return rc;
}

static void expect_ok(const char *schema, const char *value)
{
    char why[256] = "untouched";
    if (check_texts(schema, value, why, sizeof(why)) != 0)
        fail_msg("%s should satisfy %s, but: %s", value, schema, why);
    assert_string_equal(why, "");
}

/* Expects a failure whose sentence contains each of the (NULL-terminated) fragments. */
static void expect_fail(const char *schema, const char *value, ...)
{
    char why[256] = "";
    if (check_texts(schema, value, why, sizeof(why)) != -1)
        fail_msg("%s should not satisfy %s", value, schema);
    va_list ap;
    va_start(ap, value);
    for (const char *frag = va_arg(ap, const char *); frag != NULL;
         frag = va_arg(ap, const char *)) {
        if (strstr(why, frag) == NULL) {
            va_end(ap);
            fail_msg("\"%s\" does not contain \"%s\" (value %s, schema %s)", why, frag, value,
                     schema);
        }
    }
    va_end(ap);
}

static void test_type_keywords_accept_their_own_type_only(void **state)
{
    (void)state;
    expect_ok("{\"type\":\"object\"}", "{}");
    expect_ok("{\"type\":\"array\"}", "[]");
    expect_ok("{\"type\":\"string\"}", "\"\"");
    expect_ok("{\"type\":\"boolean\"}", "false");
    expect_ok("{\"type\":\"null\"}", "null");
    expect_ok("{\"type\":\"number\"}", "1.5");
    expect_ok("{\"type\":\"number\"}", "7");
    expect_ok("{\"type\":\"integer\"}", "-3");
    expect_fail("{\"type\":\"object\"}", "[]", "must be an object", NULL);
    expect_fail("{\"type\":\"array\"}", "{}", "must be an array", NULL);
    expect_fail("{\"type\":\"string\"}", "1", "must be a string", NULL);
    expect_fail("{\"type\":\"boolean\"}", "0", "must be a boolean", NULL);
    expect_fail("{\"type\":\"null\"}", "false", "must be a null", NULL);
    expect_fail("{\"type\":\"number\"}", "\"1\"", "must be a number", NULL);
    expect_fail("{\"type\":\"integer\"}", "1.5", "must be an integer", NULL);
    expect_fail("{\"type\":\"integer\"}", "true", "must be an integer", NULL);
}

static void test_integer_type_accepts_a_whole_real_number(void **state)
{
    (void)state;
    /* JSON Schema: 2.0 is an integer (a number with a zero fractional part). */
    expect_ok("{\"type\":\"integer\"}", "2.0");
    expect_ok("{\"type\":\"integer\"}", "1e3");
}

static void test_unknown_type_name_is_taken_as_satisfied(void **state)
{
    (void)state;
    expect_ok("{\"type\":\"uuid\"}", "42");
}

static void test_type_array_accepts_any_listed_type(void **state)
{
    (void)state;
    expect_ok("{\"type\":[\"string\",\"null\"]}", "null");
    expect_ok("{\"type\":[\"string\",\"null\"]}", "\"x\"");
    expect_fail("{\"type\":[\"string\",\"null\"]}", "3", "wrong type", "an integer", NULL);
    expect_fail("{\"type\":[\"object\"]}", "2.5", "a number", NULL);
}

static void test_root_failures_name_the_arguments(void **state)
{
    (void)state;
    expect_fail("{\"type\":\"object\"}", "5", "\"(arguments)\"", NULL);
}

static void test_enum_and_const_compare_json_values(void **state)
{
    (void)state;
    expect_ok("{\"enum\":[\"a\",1,null,{\"k\":[1]}]}", "\"a\"");
    expect_ok("{\"enum\":[\"a\",1,null,{\"k\":[1]}]}", "{\"k\":[1]}");
    expect_ok("{\"enum\":[\"a\",1,null,{\"k\":[1]}]}", "null");
    expect_fail("{\"enum\":[\"a\",1]}", "\"b\"", "one of the listed values", NULL);
    expect_fail("{\"enum\":[\"a\",1]}", "\"1\"", "listed values", NULL);
    expect_ok("{\"const\":{\"x\":true}}", "{\"x\":true}");
    expect_fail("{\"const\":{\"x\":true}}", "{\"x\":false}", "constant", NULL);
    expect_fail("{\"const\":null}", "0", "constant", NULL);
    expect_ok("{\"const\":null}", "null");
}

static void test_minimum_and_maximum_are_inclusive(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"number\",\"minimum\":1,\"maximum\":2.5}";
    expect_ok(s, "1");
    expect_ok(s, "2.5");
    expect_ok(s, "1.0");
    expect_fail(s, "0.999", "below the minimum", NULL);
    expect_fail(s, "3", "above the maximum", NULL);
    /* Bounds do not apply to other types. */
    expect_ok("{\"minimum\":10}", "\"short\"");
}

static void test_string_lengths(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"string\",\"minLength\":2,\"maxLength\":4}";
    expect_ok(s, "\"ab\"");
    expect_ok(s, "\"abcd\"");
    expect_fail(s, "\"a\"", "shorter than minLength", NULL);
    expect_fail(s, "\"abcde\"", "longer than maxLength", NULL);
}

static void test_string_lengths_count_characters_not_bytes(void **state)
{
    (void)state;
    /* JSON Schema: a string's length is its number of characters (code points).
     * "h\u00e9llo" is 5 characters and 6 UTF-8 bytes; the emoji is 1 and 4. */
    expect_ok("{\"type\":\"string\",\"maxLength\":5}", "\"h\\u00e9llo\"");
    expect_ok("{\"type\":\"string\",\"maxLength\":1}", "\"\\ud83d\\ude00\"");
    expect_fail("{\"type\":\"string\",\"minLength\":2}", "\"\\ud83d\\ude00\"", "minLength", NULL);
}

static void test_required_names_the_missing_property_with_its_path(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"user\":{\"type\":\"object\","
                    "\"required\":[\"name\"]}},\"required\":[\"user\"]}";
    expect_fail(s, "{}", "\"user\" is required", NULL);
    expect_fail(s, "{\"user\":{}}", "\"user.name\" is required", NULL);
    expect_ok(s, "{\"user\":{\"name\":null}}");
}

static void test_properties_are_checked_with_a_dotted_path(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
                    "\"properties\":{\"count\":{\"type\":\"integer\",\"minimum\":0}}}}}";
    expect_ok(s, "{\"a\":{\"count\":3}}");
    expect_fail(s, "{\"a\":{\"count\":\"3\"}}", "\"a.count\"", "must be an integer", NULL);
    expect_fail(s, "{\"a\":{\"count\":-1}}", "\"a.count\"", "below the minimum", NULL);
    /* Properties the schema does not name are allowed by default. */
    expect_ok(s, "{\"a\":{\"other\":\"x\"},\"b\":[]}");
}

static void test_additional_properties_false_names_the_extra_property(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{}},"
                    "\"additionalProperties\":false}";
    expect_ok(s, "{\"a\":1}");
    expect_fail(s, "{\"a\":1,\"zz\":2}", "\"zz\"", "not an allowed property", NULL);
}

static void test_additional_properties_schema_checks_the_extras(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{}},"
                    "\"additionalProperties\":{\"type\":\"string\"}}";
    expect_ok(s, "{\"a\":1,\"b\":\"x\"}");
    expect_fail(s, "{\"a\":1,\"b\":2}", "\"b\"", "must be a string", NULL);
}

static void test_items_are_checked_with_an_indexed_path(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"list\":{\"type\":\"array\","
                    "\"items\":{\"type\":\"object\",\"required\":[\"id\"]}}}}";
    expect_ok(s, "{\"list\":[{\"id\":1},{\"id\":2}]}");
    expect_fail(s, "{\"list\":[{\"id\":1},{}]}", "\"list[1].id\" is required", NULL);
    expect_fail("{\"items\":{\"type\":\"string\"}}", "[\"a\",2]", "\"[1]\"", "must be a string",
                NULL);
}

static void test_min_and_max_items(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"array\",\"minItems\":1,\"maxItems\":2}";
    expect_ok(s, "[1]");
    expect_ok(s, "[1,2]");
    expect_fail(s, "[]", "fewer items than minItems", NULL);
    expect_fail(s, "[1,2,3]", "more items than maxItems", NULL);
}

static void test_unknown_keywords_and_non_object_schemas_are_satisfied(void **state)
{
    (void)state;
    expect_ok("{\"pattern\":\"^a$\",\"format\":\"email\",\"oneOf\":[]}", "\"zzz\"");
    expect_ok("{}", "{\"anything\":[1,2,3]}");
    expect_ok("true", "5");
    expect_ok("[1]", "\"x\"");
}

static void test_deeply_nested_value_does_not_recurse_without_end(void **state)
{
    (void)state;
    /* A schema 40 levels deep against a value as deep: checking stops at a fixed depth
     * instead of following any depth down the stack, and what lies below it is taken as
     * satisfied (the string schema at the bottom never sees the 1). */
    mcp__buf sb = {0}, vb = {0};
    for (int i = 0; i < 40; i++) {
        assert_int_equal(mcp__buf_appends(&sb, "{\"type\":\"array\",\"items\":"), MCP_OK);
        assert_int_equal(mcp__buf_appends(&vb, "["), MCP_OK);
    }
    assert_int_equal(mcp__buf_appends(&sb, "{\"type\":\"string\"}"), MCP_OK);
    assert_int_equal(mcp__buf_appends(&vb, "1"), MCP_OK);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(mcp__buf_appends(&sb, "}"), MCP_OK);
        assert_int_equal(mcp__buf_appends(&vb, "]"), MCP_OK);
    }
    char why[256];
    assert_int_equal(check_texts(sb.data, vb.data, why, sizeof(why)), 0);
    /* A failure within the depth limit is still found. */
    expect_fail("{\"items\":{\"items\":{\"items\":{\"type\":\"string\"}}}}", "[[[\"a\",1]]]",
                "\"[0][0][1]\"", NULL);
    mcp__buf_free(&sb);
    mcp__buf_free(&vb);
}

static void test_sentence_is_truncated_to_the_buffer(void **state)
{
    (void)state;
    char why[12];
    memset(why, 'x', sizeof(why));
    char name[300];
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    char schema[400];
    snprintf(schema, sizeof(schema), "{\"required\":[\"%s\"]}", name);
    assert_int_equal(check_texts(schema, "{}", why, sizeof(why)), -1);
    assert_int_equal(strlen(why), sizeof(why) - 1);
    assert_memory_equal(why, "\"nnnnnnnnnn", sizeof(why) - 1);
}

static void test_very_long_property_paths_do_not_overflow(void **state)
{
    (void)state;
    /* Keys long enough that the dotted path passes every internal buffer. */
    char key[700];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    char schema[2000], value[2000];
    snprintf(schema, sizeof(schema),
             "{\"properties\":{\"%s\":{\"properties\":{\"%s\":{\"type\":\"string\"}}}}}", key, key);
    snprintf(value, sizeof(value), "{\"%s\":{\"%s\":1}}", key, key);
    char why[256];
    assert_int_equal(check_texts(schema, value, why, sizeof(why)), -1);
    assert_true(strlen(why) < sizeof(why));
    assert_int_equal(why[0], '"');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_keywords_accept_their_own_type_only),
        cmocka_unit_test(test_integer_type_accepts_a_whole_real_number),
        cmocka_unit_test(test_unknown_type_name_is_taken_as_satisfied),
        cmocka_unit_test(test_type_array_accepts_any_listed_type),
        cmocka_unit_test(test_root_failures_name_the_arguments),
        cmocka_unit_test(test_enum_and_const_compare_json_values),
        cmocka_unit_test(test_minimum_and_maximum_are_inclusive),
        cmocka_unit_test(test_string_lengths),
        cmocka_unit_test(test_string_lengths_count_characters_not_bytes),
        cmocka_unit_test(test_required_names_the_missing_property_with_its_path),
        cmocka_unit_test(test_properties_are_checked_with_a_dotted_path),
        cmocka_unit_test(test_additional_properties_false_names_the_extra_property),
        cmocka_unit_test(test_additional_properties_schema_checks_the_extras),
        cmocka_unit_test(test_items_are_checked_with_an_indexed_path),
        cmocka_unit_test(test_min_and_max_items),
        cmocka_unit_test(test_unknown_keywords_and_non_object_schemas_are_satisfied),
        cmocka_unit_test(test_deeply_nested_value_does_not_recurse_without_end),
        cmocka_unit_test(test_sentence_is_truncated_to_the_buffer),
        cmocka_unit_test(test_very_long_property_paths_do_not_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
