/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/schema/: JSON Schema 2020-12 (and draft-07)
 * validation of tool arguments and structured results, the sentences that
 * name the bad place as a JSON pointer, the bounds against hostile schemas,
 * mcp__schema_valid, and registration refusing an unusable schema.
 *
 * Schemas and values are written with ' for " to stay readable (a literal
 * apostrophe would be \u0027).
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
#include <time.h>

#include <cmocka.h>

#include "schema/schema_int.h"
#include "schema/schema.h"
#include "server/server_int.h"

/* Parses text with ' for ". */
static json_t *load(const char *text)
{
    char *s = strdup(text);
    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t err;
    json_t *v = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (v == NULL)
        fail_msg("bad JSON in the test: %s: %s", err.text, s);
    free(s);
    return v;
}

/* Checks the value text against the schema text; returns the result and copies the
 * sentence into why. */
static int check_texts(const char *schema_text, const char *value_text, char *why, size_t n)
{
    json_t *schema = load(schema_text), *value = load(value_text);
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

/* Expects the exact sentence. */
static void expect_why(const char *schema, const char *value, const char *sentence)
{
    char why[256] = "";
    if (check_texts(schema, value, why, sizeof(why)) != -1)
        fail_msg("%s should not satisfy %s", value, schema);
    assert_string_equal(why, sentence);
}

static void expect_valid(const char *schema_text)
{
    json_t *schema = load(schema_text);
    char why[300] = "untouched";
    if (mcp__schema_valid(schema, why, sizeof(why)) != 0)
        fail_msg("%s should be a usable schema, but: %s", schema_text, why);
    assert_string_equal(why, "");
    json_decref(schema);
}

static void expect_invalid(const char *schema_text, const char *fragment)
{
    json_t *schema = load(schema_text);
    char why[300] = "";
    if (mcp__schema_valid(schema, why, sizeof(why)) != -1)
        fail_msg("%s should be refused", schema_text);
    if (strstr(why, fragment) == NULL)
        fail_msg("\"%s\" does not contain \"%s\" (schema %s)", why, fragment, schema_text);
    json_decref(schema);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- type, enum, const ---- */

static void test_type_keywords_accept_their_own_type_only(void **state)
{
    (void)state;
    expect_ok("{'type':'object'}", "{}");
    expect_ok("{'type':'array'}", "[]");
    expect_ok("{'type':'string'}", "''");
    expect_ok("{'type':'boolean'}", "false");
    expect_ok("{'type':'null'}", "null");
    expect_ok("{'type':'number'}", "1.5");
    expect_ok("{'type':'number'}", "7");
    expect_ok("{'type':'integer'}", "-3");
    expect_fail("{'type':'object'}", "[]", "expected an object, got an array", NULL);
    expect_fail("{'type':'array'}", "{}", "expected an array, got an object", NULL);
    expect_fail("{'type':'string'}", "1", "expected a string, got an integer", NULL);
    expect_fail("{'type':'boolean'}", "0", "expected a boolean", NULL);
    expect_fail("{'type':'null'}", "false", "expected a null, got a boolean", NULL);
    expect_fail("{'type':'number'}", "'1'", "expected a number, got a string", NULL);
    expect_fail("{'type':'integer'}", "1.5", "expected an integer, got a number", NULL);
    expect_fail("{'type':'integer'}", "true", "expected an integer", NULL);
}

static void test_integer_type_accepts_a_whole_real_number(void **state)
{
    (void)state;
    /* JSON Schema: 1.0 is an integer (a number with a zero fractional part). */
    expect_ok("{'type':'integer'}", "1.0");
    expect_ok("{'type':'integer'}", "2.0");
    expect_ok("{'type':'integer'}", "1e3");
    expect_ok("{'type':'integer'}", "1e300");
    expect_fail("{'type':'integer'}", "1.000001", "expected an integer", NULL);
}

static void test_unknown_type_name_makes_the_schema_invalid(void **state)
{
    (void)state;
    expect_fail("{'type':'uuid'}", "42", "invalid schema", "\"type\"", NULL);
    expect_fail("{'type':['string',3]}", "42", "invalid schema", NULL);
    expect_invalid("{'type':'uuid'}", "\"type\" must be one of");
    expect_invalid("{'type':[]}", "\"type\"");
    expect_invalid("{'type':['string','string']}", "\"type\"");
}

static void test_type_array_accepts_any_listed_type(void **state)
{
    (void)state;
    expect_ok("{'type':['string','null']}", "null");
    expect_ok("{'type':['string','null']}", "'x'");
    expect_ok("{'type':['integer','string']}", "4.0");
    expect_fail("{'type':['string','null']}", "3", "expected string or null, got an integer", NULL);
    expect_fail("{'type':['object','array','string']}", "2.5",
                "expected object, array or string, got a number", NULL);
}

static void test_root_failures_are_named_root(void **state)
{
    (void)state;
    expect_why("{'type':'object'}", "5", "(root): expected an object, got an integer");
}

static void test_enum_and_const_compare_json_values(void **state)
{
    (void)state;
    const char *e = "{'enum':['a',1,null,{'k':[1]}]}";
    expect_ok(e, "'a'");
    expect_ok(e, "{'k':[1]}");
    expect_ok(e, "null");
    expect_fail("{'enum':['a',1]}", "'b'", "(root): must be one of [\"a\",1]", NULL);
    expect_fail("{'enum':['a',1]}", "'1'", "must be one of", NULL);
    expect_ok("{'const':{'x':true}}", "{'x':true}");
    expect_fail("{'const':{'x':true}}", "{'x':false}", "must be {\"x\":true}", NULL);
    expect_fail("{'const':null}", "0", "must be null", NULL);
    expect_ok("{'const':null}", "null");
    /* false is not 0, nor true 1. */
    expect_fail("{'enum':[0]}", "false", "must be one of", NULL);
    expect_fail("{'const':1}", "true", "must be 1", NULL);
    /* Objects compare whatever their member order. */
    expect_ok("{'const':{'a':1,'b':2}}", "{'b':2,'a':1}");
    expect_fail("{'const':{'a':1,'b':2}}", "{'a':1}", "must be", NULL);
    expect_fail("{'const':[1,2]}", "[2,1]", "must be", NULL);
    /* A long value is shortened in the sentence. */
    expect_fail(
        "{'const':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}", "'b'",
        "...", NULL);
}

static void test_numbers_compare_by_value_one_equals_one_point_zero(void **state)
{
    (void)state;
    expect_ok("{'const':1}", "1.0");
    expect_ok("{'const':1.0}", "1");
    expect_ok("{'enum':[2.0,3]}", "2");
    expect_ok("{'const':[1,{'a':0}]}", "[1.0,{'a':0.0}]");
    expect_fail("{'const':1}", "1.5", "must be 1", NULL);
    /* Exact past 2^53, where a double cannot tell these apart. */
    expect_fail("{'const':9007199254740993}", "9007199254740992.0", "must be", NULL);
    expect_ok("{'const':9007199254740992}", "9007199254740992.0");
    expect_ok("{'uniqueItems':true}", "[1,1.5]");
    expect_fail("{'uniqueItems':true}", "[1,1.0]", "items 0 and 1 are equal", NULL);
}

/* ---- Numbers and strings ---- */

static void test_minimum_and_maximum_are_inclusive_exclusive_ones_are_not(void **state)
{
    (void)state;
    const char *s = "{'type':'number','minimum':1,'maximum':2.5}";
    expect_ok(s, "1");
    expect_ok(s, "2.5");
    expect_ok(s, "1.0");
    expect_fail(s, "0.999", "must be at least 1", NULL);
    expect_fail(s, "3", "must be at most 2.5", NULL);
    const char *x = "{'exclusiveMinimum':0,'exclusiveMaximum':10}";
    expect_ok(x, "0.001");
    expect_ok(x, "9");
    expect_fail(x, "0", "must be greater than 0", NULL);
    expect_fail(x, "0.0", "must be greater than 0", NULL);
    expect_fail(x, "10", "must be less than 10", NULL);
    expect_fail(x, "-5", "greater than", NULL);
    /* Bounds do not apply to other types. */
    expect_ok("{'minimum':10}", "'short'");
    /* Exact between large integers and reals. */
    expect_fail("{'maximum':9007199254740992}", "9007199254740993", "at most", NULL);
    expect_ok("{'maximum':9007199254740992.0}", "9007199254740992");
    expect_fail("{'maximum':true}", "1", "invalid schema: \"maximum\" must be a number", NULL);
    expect_invalid("{'exclusiveMinimum':true}", "\"exclusiveMinimum\" must be a number");
}

static void test_multiple_of_integers_and_decimals(void **state)
{
    (void)state;
    expect_ok("{'multipleOf':3}", "9");
    expect_ok("{'multipleOf':3}", "-9");
    expect_ok("{'multipleOf':3}", "0");
    expect_ok("{'multipleOf':3}", "9.0");
    expect_fail("{'multipleOf':3}", "10", "must be a multiple of 3", NULL);
    expect_ok("{'multipleOf':1.5}", "4.5");
    expect_fail("{'multipleOf':1.5}", "35", "multiple of 1.5", NULL);
    /* Decimal divisors have no exact double: rounding must not fail these. */
    expect_ok("{'multipleOf':0.01}", "0.07");
    expect_ok("{'multipleOf':0.01}", "19.99");
    expect_ok("{'multipleOf':0.0001}", "0.0075");
    expect_ok("{'multipleOf':0.1}", "0.3");
    expect_fail("{'multipleOf':0.01}", "0.075", "multiple of 0.01", NULL);
    expect_fail("{'multipleOf':0.123456789}", "1e308", "multiple of", NULL);
    expect_ok("{'multipleOf':0.5}", "1e308"); /* the quotient overflows; fmod does not */
    expect_ok("{'multipleOf':1}", "9223372036854775807");
    expect_fail("{'multipleOf':0}", "1", "invalid schema: \"multipleOf\"", NULL);
    expect_invalid("{'multipleOf':-2}", "\"multipleOf\" must be a number above 0");
}

static void test_string_lengths_count_code_points_not_bytes(void **state)
{
    (void)state;
    const char *s = "{'type':'string','minLength':2,'maxLength':4}";
    expect_ok(s, "'ab'");
    expect_ok(s, "'abcd'");
    expect_fail(s, "'a'", "must have at least 2 characters (it has 1)", NULL);
    expect_fail(s, "'abcde'", "must have at most 4 characters (it has 5)", NULL);
    /* "h\u00e9llo" is 5 characters and 6 UTF-8 bytes; the emoji is 1 and 4. */
    expect_ok("{'maxLength':5}", "'h\\u00e9llo'");
    expect_ok("{'maxLength':1}", "'\\ud83d\\ude00'");
    expect_fail("{'minLength':2}", "'\\ud83d\\ude00'", "(it has 1)", NULL);
    expect_ok("{'minLength':3,'maxLength':3}", "'\\u65e5\\u672c\\u8a9e'");
    expect_ok("{'maxLength':2.0}", "'ab'");
    expect_fail("{'maxLength':-1}", "'a'", "invalid schema: \"maxLength\" must be a non-negative",
                NULL);
    expect_invalid("{'minLength':1.5}", "\"minLength\" must be a non-negative integer");
}

static void test_pattern_follows_ecma_262_where_posix_can(void **state)
{
    (void)state;
    expect_ok("{'pattern':'^[a-z]+$'}", "'abc'");
    expect_fail("{'pattern':'^[a-z]+$'}", "'abC'", "does not match the pattern ^[a-z]+$", NULL);
    /* Not anchored unless the pattern says so. */
    expect_ok("{'pattern':'b'}", "'abc'");
    expect_ok("{'pattern':'^\\\\d{3}-\\\\d{4}$'}", "'555-1234'");
    expect_fail("{'pattern':'^\\\\d{3}-\\\\d{4}$'}", "'555-12345'", "does not match", NULL);
    expect_ok("{'pattern':'^\\\\w+@[\\\\w.-]+\\\\.[a-z]{2,}$'}", "'a_b@ex-ample.org'");
    expect_fail("{'pattern':'^\\\\S+$'}", "'a b'", "does not match", NULL);
    expect_ok("{'pattern':'^\\\\s*$'}", "' \\t\\n'");
    expect_ok("{'pattern':'^(?:ab)+$'}", "'abab'");
    expect_ok("{'pattern':'^(?<year>\\\\d{4})$'}", "'2026'");
    expect_ok("{'pattern':'^a+?b*?$'}", "'aab'");
    expect_ok("{'pattern':'^[\\\\]\\\\-]+$'}", "']-]'");
    expect_ok("{'pattern':'^[\\\\w-]+$'}", "'a-b_c'");
    expect_ok("{'pattern':'^\\\\/\\\\.\\\\*$'}", "'/.*'");
    expect_ok("{'pattern':'^{$'}", "'{'");
    expect_ok("{'pattern':'^a{2}$'}", "'aa'");
    expect_ok("{'pattern':'^[^a]$'}", "'^'");
    expect_ok("{'pattern':'^[\\\\^]$'}", "'^'");
    expect_ok("{'pattern':'\\\\bfoo\\\\b'}", "'a foo b'");
    expect_fail("{'pattern':'\\\\bfoo\\\\b'}", "'afoob'", "does not match", NULL);
    expect_ok("{'pattern':'^\\\\u0041\\\\x42$'}", "'AB'");
    /* . and classes match characters, not bytes, and . leaves out line ends. */
    expect_ok("{'pattern':'^.$'}", "'\\u00e9'");
    expect_ok("{'pattern':'^.{3}$'}", "'\\u65e5\\u672c\\u8a9e'");
    expect_ok("{'pattern':'^\\u00e9+$'}", "'\\u00e9\\u00e9'");
    expect_ok("{'pattern':'^[^a]$'}", "'\\u00e9'");
    expect_ok("{'pattern':'^[a\\u00e9]+$'}", "'a\\u00e9a'");
    expect_ok("{'pattern':'^\\\\D$'}", "'\\u00e9'");
    expect_fail("{'pattern':'^.$'}", "'\\n'", "does not match", NULL);
    /* A string holding NUL is matched whole. */
    expect_fail("{'pattern':'^a$'}", "'a\\u0000b'", "does not match", NULL);
    expect_ok("{'pattern':'^a\\\\0b$'}", "'a\\u0000b'");
    /* ECMA-262's own: [] matches nothing, [^] anything; \\s takes Unicode spaces. */
    expect_fail("{'pattern':'[]'}", "'x'", "does not match", NULL);
    expect_ok("{'pattern':'^[^]$'}", "'\\n'");
    expect_ok("{'pattern':'^\\\\s$'}", "'\\u3000'");
    expect_fail("{'pattern':'^\\\\w$'}", "'\\u00e9'", "does not match", NULL);
    expect_ok("{'pattern':'^(a|b|)+c$'}", "'abc'");
    expect_ok("{'pattern':'^(a*)*$'}", "'aaa'");
    expect_ok("{'pattern':'^x{0}y$'}", "'y'");
    expect_ok("{'pattern':'^(ab){2,3}$'}", "'ababab'");
    expect_fail("{'pattern':'^(ab){2,3}$'}", "'abababab'", "does not match", NULL);
    expect_ok("{'pattern':'^\\\\u{1F600}$'}", "'\\ud83d\\ude00'");
}

/* A long string with no match, against patterns that make backtracking or
 * lazily built DFA matchers (glibc's regexec) take quadratic time or build a
 * state per byte: the simulation is linear, and its work is in the budget. */
static void test_pattern_matching_is_linear_in_the_string(void **state)
{
    (void)state;
    const char *patterns[] = {
        ".*[0-9]{4}$", "^.*c.{20}$", "(a|b)*a(a|b){40}$", "^(a+)+$", "(x+x+)+y",
    };
    size_t n = 200000;
    char *text = malloc(n + 3);
    assert_non_null(text);
    text[0] = '"';
    for (size_t i = 1; i <= n; i++)
        text[i] = "ab"[i % 3 == 0];
    text[n - 1] = '!'; /* no pattern matches */
    text[n + 1] = '"';
    text[n + 2] = '\0';
    for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++) {
        json_t *schema = json_pack("{s:s}", "pattern", patterns[k]);
        json_t *value = json_loads(text, JSON_DECODE_ANY, NULL);
        assert_non_null(value);
        char why[256];
        double t0 = now_ms();
        int rc = mcp__schema_check(schema, value, why, sizeof(why));
        double took = now_ms() - t0;
        /* Either it fails to match, or it ran out of budget: never a long run. */
        assert_int_equal(rc, -1);
        if (strstr(why, "does not match") == NULL && strstr(why, "too complex") == NULL)
            fail_msg("%s: %s", patterns[k], why);
        if (took > 3000)
            fail_msg("%s took %.0f ms on %zu bytes", patterns[k], took, n);
        json_decref(schema);
        json_decref(value);
    }
    free(text);
}

static void test_pattern_that_cannot_compile_makes_the_schema_invalid(void **state)
{
    (void)state;
    expect_fail("{'pattern':'('}", "'x'", "invalid schema", "unclosed", NULL);
    expect_invalid("{'pattern':'('}", "\"pattern\" /(/");
    expect_invalid("{'pattern':'(a)\\\\1'}", "backreferences are not supported");
    expect_invalid("{'pattern':'a(?=b)'}", "lookahead");
    expect_invalid("{'pattern':'(?<!a)b'}", "lookbehind");
    expect_invalid("{'pattern':'a{2,1}'}", "below n");
    expect_invalid("{'pattern':'a{49999999999}'}", "above 10000");
    expect_invalid("{'pattern':'a{1,49999999999}'}", "above 10000");
    expect_ok("{'pattern':'^{99999999999$'}", "'{99999999999'");
    expect_invalid("{'pattern':'*a'}", "nothing to repeat");
    expect_invalid("{'pattern':'\\\\p{L}'}", "Unicode property");
    expect_invalid("{'pattern':'[z-a]'}", "out of order");
    expect_invalid("{'pattern':'\\\\'}", "backslash at the end");
    expect_invalid("{'pattern':'((a{100}){100}){100}'}", "more than 10000 instructions");
    expect_invalid("{'patternProperties':{'(':{}}}", "\"patternProperties\" /(/");
    expect_invalid("{'pattern':3}", "\"pattern\" must be a string");
    /* The instance is not what is wrong: it is never blamed. */
    char why[256];
    assert_int_equal(
        check_texts("{'properties':{'a':{'pattern':'['}}}", "{'a':'x'}", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "invalid schema"));
    assert_null(strstr(why, "does not match"));
}

/* ---- Arrays ---- */

static void test_min_and_max_items(void **state)
{
    (void)state;
    const char *s = "{'type':'array','minItems':1,'maxItems':2}";
    expect_ok(s, "[1]");
    expect_ok(s, "[1,2]");
    expect_fail(s, "[]", "must have at least 1 items (it has 0)", NULL);
    expect_fail(s, "[1,2,3]", "must have at most 2 items (it has 3)", NULL);
}

static void test_unique_items_small_and_large_arrays(void **state)
{
    (void)state;
    expect_ok("{'uniqueItems':true}", "[1,'1',true,null,[1],{'a':1},{'a':2}]");
    expect_fail("{'uniqueItems':true}", "[{'a':1,'b':2},3,{'b':2,'a':1}]",
                "(root): must not hold equal items (items 0 and 2 are equal)", NULL);
    expect_ok("{'uniqueItems':false}", "[1,1]");
    /* Past 16 items they are hashed first. */
    char big[600] = "[";
    for (int i = 0; i < 100; i++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), "%s%d", i ? "," : "", i);
    strcat(big, "]");
    expect_ok("{'uniqueItems':true}", big);
    big[strlen(big) - 1] = '\0';
    strcat(big, ",42.0]");
    expect_fail("{'uniqueItems':true}", big, "items 42 and 100 are equal", NULL);
    expect_fail("{'uniqueItems':1}", "[]", "invalid schema: \"uniqueItems\"", NULL);
}

static void test_prefix_items_then_items_apply_in_turn(void **state)
{
    (void)state;
    const char *s = "{'prefixItems':[{'type':'string'},{'type':'integer'}],'items':false}";
    expect_ok(s, "['a',1]");
    expect_ok(s, "['a']");
    expect_ok(s, "[]");
    expect_fail(s, "[1,1]", "/0: expected a string", NULL);
    expect_fail(s, "['a',1,null]", "/2: is not allowed here", NULL);
    const char *t = "{'prefixItems':[{'const':0}],'items':{'type':'string'}}";
    expect_ok(t, "[0,'x','y']");
    expect_fail(t, "[0,'x',3]", "/2: expected a string", NULL);
    expect_fail("{'items':{'type':'string'}}", "['a',2]", "/1: expected a string, got an integer",
                NULL);
    /* 2020-12 has no array form of items. */
    expect_invalid("{'items':[{}]}", "prefixItems");
    expect_invalid("{'prefixItems':[]}", "\"prefixItems\" must be a non-empty array");
}

static void test_contains_with_min_and_max_contains(void **state)
{
    (void)state;
    const char *s = "{'contains':{'type':'integer'}}";
    expect_ok(s, "['a',1]");
    expect_fail(s, "['a','b']", "must hold at least 1 item matching contains (it has 0)", NULL);
    expect_fail(s, "[]", "(it has 0)", NULL);
    const char *m = "{'contains':{'type':'integer'},'minContains':2,'maxContains':3}";
    expect_ok(m, "[1,'x',2]");
    expect_ok(m, "[1,2,3]");
    expect_fail(m, "[1,'x']", "at least 2 items", NULL);
    expect_fail(m, "[1,2,3,4]", "at most 3 items", NULL);
    expect_ok("{'contains':{'type':'integer'},'minContains':0}", "['x']");
    /* Without contains, minContains asserts nothing. */
    expect_ok("{'minContains':5}", "[]");
}

/* ---- Objects ---- */

static void test_required_names_the_missing_property_with_its_path(void **state)
{
    (void)state;
    const char *s = "{'type':'object','properties':{'user':{'type':'object',"
                    "'required':['name']}},'required':['user']}";
    expect_why(s, "{}", "/user: is required");
    expect_why(s, "{'user':{}}", "/user/name: is required");
    expect_ok(s, "{'user':{'name':null}}");
    expect_invalid("{'required':['a','a']}", "\"required\" must be an array of unique strings");
    expect_invalid("{'required':'a'}", "\"required\"");
}

static void test_min_and_max_properties(void **state)
{
    (void)state;
    const char *s = "{'minProperties':1,'maxProperties':2}";
    expect_ok(s, "{'a':1}");
    expect_fail(s, "{}", "must have at least 1 properties (it has 0)", NULL);
    expect_fail(s, "{'a':1,'b':2,'c':3}", "must have at most 2 properties (it has 3)", NULL);
}

static void test_dependent_required_and_dependent_schemas(void **state)
{
    (void)state;
    const char *r = "{'dependentRequired':{'card':['billing','cvv']}}";
    expect_ok(r, "{}");
    expect_ok(r, "{'billing':1}");
    expect_ok(r, "{'card':1,'billing':1,'cvv':1}");
    expect_why(r, "{'card':1,'billing':1}", "/cvv: is required when \"card\" is present");
    const char *d = "{'dependentSchemas':{'card':{'required':['billing'],"
                    "'properties':{'billing':{'type':'string'}}}}}";
    expect_ok(d, "{'billing':3}");
    expect_fail(d, "{'card':1}", "/billing: is required", NULL);
    expect_fail(d, "{'card':1,'billing':3}", "/billing: expected a string", NULL);
    expect_invalid("{'dependentRequired':{'a':'b'}}", "\"dependentRequired\"");
}

static void test_properties_are_checked_with_a_json_pointer_path(void **state)
{
    (void)state;
    const char *s = "{'type':'object','properties':{'a':{'type':'object',"
                    "'properties':{'count':{'type':'integer','minimum':0}}}}}";
    expect_ok(s, "{'a':{'count':3}}");
    expect_why(s, "{'a':{'count':'3'}}", "/a/count: expected an integer, got a string");
    expect_why(s, "{'a':{'count':-1}}", "/a/count: must be at least 0");
    /* Properties the schema does not name are allowed by default. */
    expect_ok(s, "{'a':{'other':'x'},'b':[]}");
}

static void test_additional_properties_apply_to_unmatched_members_only(void **state)
{
    (void)state;
    const char *s = "{'properties':{'a':{}},'patternProperties':{'^x-':{'type':'string'}},"
                    "'additionalProperties':false}";
    expect_ok(s, "{'a':1,'x-y':'z'}");
    expect_why(s, "{'a':1,'zz':2}", "/zz: is not an allowed property");
    expect_fail(s, "{'x-y':2}", "/x-y: expected a string", NULL);
    const char *t = "{'properties':{'a':{}},'additionalProperties':{'type':'string'}}";
    expect_ok(t, "{'a':1,'b':'x'}");
    expect_fail(t, "{'a':1,'b':2}", "/b: expected a string", NULL);
    /* A member matched by properties and patternProperties meets both. */
    const char *both = "{'properties':{'ab':{'maxLength':3}},'patternProperties':{'b$':{"
                       "'minLength':2}}}";
    expect_ok(both, "{'ab':'xy'}");
    expect_fail(both, "{'ab':'x'}", "at least 2 characters", NULL);
    expect_fail(both, "{'ab':'xyzw'}", "at most 3 characters", NULL);
}

static void test_property_names(void **state)
{
    (void)state;
    const char *s = "{'propertyNames':{'pattern':'^[a-z]+$','maxLength':5}}";
    expect_ok(s, "{'abc':1,'de':[1]}");
    expect_why(s, "{'abc':1,'Bad':2}",
               "/Bad: the property name does not match the pattern ^[a-z]+$");
    expect_fail(s, "{'toolong':1}", "/toolong: the property name must have at most 5 characters",
                NULL);
    expect_fail("{'propertyNames':false}", "{'a':1}", "/a: the property name is not allowed", NULL);
    expect_ok("{'propertyNames':false}", "{}");
}

/* ---- Composition ---- */

static void test_all_of_any_of_one_of_not(void **state)
{
    (void)state;
    const char *all = "{'allOf':[{'type':'integer'},{'minimum':3}]}";
    expect_ok(all, "3");
    expect_why(all, "2", "(root): must be at least 3");
    const char *any = "{'anyOf':[{'type':'string'},{'type':'integer','minimum':0}]}";
    expect_ok(any, "'x'");
    expect_ok(any, "5");
    expect_fail(any, "-1", "matches no schema of anyOf", NULL);
    /* The sentence names the branch that got furthest into the value. */
    const char *deep = "{'properties':{'p':{'anyOf':[{'type':'string'},"
                       "{'type':'object','properties':{'q':{'type':'integer'}}}]}}}";
    expect_why(deep, "{'p':{'q':'no'}}",
               "/p: matches no schema of anyOf; the closest, anyOf[1], fails: /p/q: expected "
               "an integer, got a string");
    const char *one = "{'oneOf':[{'type':'integer'},{'minimum':2}]}";
    expect_ok(one, "1");
    expect_ok(one, "2.5");
    expect_fail(one, "3", "matches more than one schema of oneOf (oneOf[0] and oneOf[1])", NULL);
    expect_ok(one, "'x'"); /* minimum asserts nothing on a string */
    expect_fail("{'oneOf':[{'type':'string'},{'type':'null'}]}", "4",
                "matches no schema of oneOf; the closest", NULL);
    expect_ok("{'not':{'type':'string'}}", "1");
    expect_why("{'not':{'type':'string'}}", "'x'", "(root): must not match the schema of \"not\"");
    expect_invalid("{'anyOf':[]}", "\"anyOf\" must be a non-empty array of schemas");
    expect_invalid("{'allOf':{}}", "\"allOf\"");
    expect_invalid("{'not':3}", "a schema must be an object or a boolean");
}

static void test_if_then_else(void **state)
{
    (void)state;
    const char *s = "{'if':{'properties':{'kind':{'const':'circle'}},'required':['kind']},"
                    "'then':{'required':['radius']},'else':{'required':['width']}}";
    expect_ok(s, "{'kind':'circle','radius':1}");
    expect_ok(s, "{'kind':'square','width':1}");
    expect_why(s, "{'kind':'circle'}", "/radius: is required");
    expect_why(s, "{'kind':'square'}", "/width: is required");
    expect_ok("{'if':{'type':'string'}}", "1");
    expect_ok("{'then':false}", "1");
    expect_ok("{'if':true,'else':false}", "1");
    expect_fail("{'if':false,'else':false}", "1", "is not allowed here", NULL);
}

static void test_boolean_schemas(void **state)
{
    (void)state;
    expect_ok("true", "5");
    expect_why("false", "5", "(root): is not allowed here (the schema is false)");
    expect_ok("{'properties':{'a':true,'b':false}}", "{'a':1}");
    expect_why("{'properties':{'a':true,'b':false}}", "{'b':1}",
               "/b: is not allowed here (the schema is false)");
    expect_valid("true");
    expect_valid("false");
}

/* ---- $ref ---- */

static void test_ref_to_local_json_pointers(void **state)
{
    (void)state;
    const char *s = "{'$defs':{'pos':{'type':'integer','minimum':1},'a/b':{'const':'slash'},"
                    "'a~b':{'const':'tilde'},'a b':{'const':'space'}},"
                    "'definitions':{'old':{'type':'boolean'}},"
                    "'properties':{'n':{'$ref':'#/$defs/pos'},"
                    "'s':{'$ref':'#/$defs/a~1b'},'t':{'$ref':'#/$defs/a~0b'},"
                    "'u':{'$ref':'#/$defs/a%20b'},'o':{'$ref':'#/definitions/old'},"
                    "'list':{'items':{'type':'string'}},'l2':{'$ref':'#/properties/list/items'},"
                    "'tuple':{'prefixItems':[{},{'const':9}]},"
                    "'second':{'$ref':'#/properties/tuple/prefixItems/1'}}}";
    expect_valid(s);
    expect_ok(s, "{'n':1,'s':'slash','t':'tilde','u':'space','o':true,'l2':'x','second':9}");
    expect_why(s, "{'n':0}", "/n: must be at least 1");
    expect_fail(s, "{'s':'tilde'}", "/s: must be \"slash\"", NULL);
    expect_fail(s, "{'t':'slash'}", "/t: must be \"tilde\"", NULL);
    expect_fail(s, "{'u':1}", "/u: must be \"space\"", NULL);
    expect_fail(s, "{'o':1}", "/o: expected a boolean", NULL);
    expect_fail(s, "{'l2':1}", "/l2: expected a string", NULL);
    expect_fail(s, "{'second':8}", "/second: must be 9", NULL);
}

static void test_recursive_ref_to_the_root_follows_the_instance(void **state)
{
    (void)state;
    const char *tree = "{'type':'object','properties':{'name':{'type':'string'},"
                       "'children':{'type':'array','items':{'$ref':'#'}}},'required':['name']}";
    expect_valid(tree);
    expect_ok(tree, "{'name':'a','children':[{'name':'b','children':[{'name':'c'}]}]}");
    expect_why(tree, "{'name':'a','children':[{'name':'b','children':[{'name':3}]}]}",
               "/children/0/children/0/name: expected a string, got an integer");
}

static void test_ref_applies_with_its_siblings_in_2020_12_not_in_draft_07(void **state)
{
    (void)state;
    const char *now = "{'$defs':{'s':{'type':'string'}},'$ref':'#/$defs/s','maxLength':2}";
    expect_ok(now, "'ab'");
    expect_fail(now, "'abc'", "at most 2 characters", NULL);
    expect_fail(now, "1", "expected a string", NULL);
    const char *old = "{'$schema':'http://json-schema.org/draft-07/schema#',"
                      "'definitions':{'s':{'type':'string'}},"
                      "'properties':{'p':{'$ref':'#/definitions/s','maxLength':2}}}";
    expect_valid(old);
    expect_ok(old, "{'p':'abc'}");
    expect_fail(old, "{'p':1}", "/p: expected a string", NULL);
}

static void test_anchors_and_embedded_ids(void **state)
{
    (void)state;
    const char *a = "{'$defs':{'n':{'$anchor':'positive','type':'integer','minimum':1}},"
                    "'properties':{'x':{'$ref':'#positive'}}}";
    expect_valid(a);
    expect_ok(a, "{'x':3}");
    expect_fail(a, "{'x':0}", "/x: must be at least 1", NULL);
    /* Embedded resources: a fragment resolves within the resource that holds the $ref,
     * and a relative URI against the $id of the resources around it. */
    const char *e = "{'$id':'https://example.com/schemas/root.json',"
                    "'$defs':{'t':{'const':'root-t'},"
                    "'item':{'$id':'item.json','$defs':{'t':{'const':'item-t'}},"
                    "'properties':{'v':{'$ref':'#/$defs/t'}}}},"
                    "'properties':{'i':{'$ref':'item.json'},"
                    "'j':{'$ref':'https://example.com/schemas/item.json#/$defs/t'},"
                    "'k':{'$ref':'/schemas/root.json#/$defs/t'},"
                    "'r':{'$ref':'#/$defs/t'}}}";
    expect_valid(e);
    expect_ok(e, "{'i':{'v':'item-t'},'j':'item-t','k':'root-t','r':'root-t'}");
    expect_fail(e, "{'i':{'v':'root-t'}}", "/i/v: must be \"item-t\"", NULL);
    expect_fail(e, "{'j':'root-t'}", "/j: must be \"item-t\"", NULL);
    expect_fail(e, "{'k':'item-t'}", "/k: must be \"root-t\"", NULL);
    /* draft-07 anchors are $id fragments. */
    const char *d7 = "{'$schema':'http://json-schema.org/draft-07/schema#',"
                     "'definitions':{'a':{'$id':'#flag','type':'boolean'}},'items':{'$ref':"
                     "'#flag'}}";
    expect_valid(d7);
    expect_ok(d7, "[true]");
    expect_fail(d7, "[1]", "/0: expected a boolean", NULL);
    /* RFC 3986: dot segments are removed before comparing. */
    const char *dots = "{'$id':'https://example.com/a/root.json','$defs':{'b':{'$id':'b.json',"
                       "'type':'integer'}},'properties':{'x':{'$ref':'./b.json'},"
                       "'y':{'$ref':'sub/../b.json'},'z':{'$ref':'../a/./b.json'}}}";
    expect_valid(dots);
    expect_ok(dots, "{'x':1,'y':2,'z':3}");
    expect_fail(dots, "{'y':'no'}", "/y: expected an integer", NULL);
    /* draft-07: a $ref hides the $id beside it, which then changes no base URI. */
    const char *hidden = "{'$schema':'http://json-schema.org/draft-07/schema#',"
                         "'$id':'http://example.com/base/','definitions':{"
                         "'s':{'$id':'http://example.com/a.json','type':'string'},"
                         "'n':{'$id':'a.json','type':'number'}},"
                         "'allOf':[{'$id':'http://example.com/','$ref':'a.json'}]}";
    expect_valid(hidden);
    expect_ok(hidden, "1");
    expect_fail(hidden, "'x'", "expected a number", NULL);
    expect_invalid("{'$anchor':'1bad'}", "\"$anchor\" must be a name");
    expect_invalid("{'$id':'#frag'}", "must not have a fragment in 2020-12");
}

static void test_dynamic_ref_takes_the_outermost_dynamic_anchor_in_scope(void **state)
{
    (void)state;
    /* A generic list whose items an outer resource decides: "list" alone takes
     * anything, reached from "root" its items must be strings. */
    const char *root = "{'$id':'https://example.com/root','$ref':'list','$defs':{"
                       "'item':{'$dynamicAnchor':'item','type':'string'},"
                       "'list':{'$id':'list','type':'array','items':{'$dynamicRef':'#item'},"
                       "'$defs':{'any':{'$dynamicAnchor':'item'}}}}}";
    expect_valid(root);
    expect_ok(root, "['a','b']");
    expect_why(root, "['a',1]", "/1: expected a string, got an integer");
    const char *alone = "{'$id':'https://example.com/list','type':'array','items':{"
                        "'$dynamicRef':'#item'},'$defs':{'any':{'$dynamicAnchor':'item'}}}";
    expect_ok(alone, "['a',1]");
    /* Without a $dynamicAnchor at its first target, it is a plain $ref. */
    expect_ok("{'$defs':{'s':{'$anchor':'s','type':'string'}},'$dynamicRef':'#s'}", "'x'");
    expect_fail("{'$defs':{'s':{'$anchor':'s','type':'string'}},'$dynamicRef':'#s'}", "1",
                "expected a string", NULL);
}

static void test_unresolvable_ref_is_an_error_never_a_fetch(void **state)
{
    (void)state;
    /* basic/index "$ref Resolution": never dereference a network URI, and reject
     * rather than treat as permissive. */
    const char *remote = "{'properties':{'p':{'$ref':'https://example.com/profile.json'}}}";
    expect_fail(remote, "{'p':1}", "invalid schema",
                "$ref \"https://example.com/profile.json\" cannot be resolved", "not fetched",
                NULL);
    expect_invalid(remote, "invalid schema at /properties/p: $ref "
                           "\"https://example.com/profile.json\" cannot be resolved");
    /* Even where the instance never goes: valid() looks at every $ref. */
    expect_ok(remote, "{}");
    expect_invalid("{'$ref':'#/$defs/missing'}", "no such place in the schema");
    expect_fail("{'$ref':'#/$defs/missing'}", "1", "invalid schema", "#/$defs/missing", NULL);
    expect_invalid("{'$ref':'#nowhere'}", "no anchor \"nowhere\"");
    expect_invalid("{'$ref':'other.json'}", "cannot be resolved");
    expect_invalid("{'$defs':{'x':3},'$ref':'#/$defs/x'}", "a schema must be an object");
    expect_invalid("{'$ref':'#/$defs/a~2'}", "no such place");
    expect_invalid("{'$ref':'#/$defs/%zz'}", "no such place");
    /* A failed $ref inside anyOf ends the check; it is not a branch that failed. */
    expect_fail("{'anyOf':[{'$ref':'#/nope'},{}]}", "1", "invalid schema", NULL);
}

static void test_ref_target_outside_known_keywords_is_checked_too(void **state)
{
    (void)state;
    expect_valid("{'x-lib':{'t':{'type':'string'}},'$ref':'#/x-lib/t'}");
    expect_ok("{'x-lib':{'t':{'type':'string'}},'$ref':'#/x-lib/t'}", "'a'");
    expect_invalid("{'x-lib':{'t':{'type':7}},'$ref':'#/x-lib/t'}",
                   "invalid schema at the target of \"#/x-lib/t\"");
}

/* ---- Bounds against hostile schemas ---- */

static void test_ref_cycle_that_consumes_no_instance_is_bounded(void **state)
{
    (void)state;
    const char *cycles[] = {
        "{'$ref':'#'}",
        "{'anyOf':[{'type':'string'},{'$ref':'#'}]}",
        "{'$defs':{'a':{'$ref':'#/$defs/b'},'b':{'allOf':[{'$ref':'#/$defs/a'}]}},'$ref':'#/$defs/"
        "a'}",
        "{'not':{'$ref':'#'}}",
        "{'$defs':{'a':{'if':{'$ref':'#/$defs/a'},'then':{}}},'properties':{'p':{'$ref':'#/$defs/"
        "a'}}}",
    };
    for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++) {
        expect_fail(cycles[i], "{'p':1}", "the schema is too complex to check", "deep", NULL);
        expect_invalid(cycles[i], "leads back to where it started");
    }
    /* A cycle through properties or items moves into the instance: fine. */
    expect_valid("{'properties':{'next':{'$ref':'#'}}}");
    expect_valid("{'$defs':{'l':{'items':{'$ref':'#/$defs/l'}}},'$ref':'#/$defs/l'}");
}

/* A schema nested n deep in properties, and a value as deep. */
static void nested(int n, char **schema, char **value)
{
    mcp__buf sb = {0}, vb = {0};
    for (int i = 0; i < n; i++) {
        assert_int_equal(mcp__buf_appends(&sb, "{\"properties\":{\"a\":"), MCP_OK);
        assert_int_equal(mcp__buf_appends(&vb, "{\"a\":"), MCP_OK);
    }
    assert_int_equal(mcp__buf_appends(&sb, "{\"type\":\"string\"}"), MCP_OK);
    assert_int_equal(mcp__buf_appends(&vb, "1"), MCP_OK);
    for (int i = 0; i < n; i++) {
        assert_int_equal(mcp__buf_appends(&sb, "}}"), MCP_OK);
        assert_int_equal(mcp__buf_appends(&vb, "}"), MCP_OK);
    }
    *schema = mcp__buf_steal(&sb);
    *value = mcp__buf_steal(&vb);
}

static void test_deep_nesting_stops_at_the_depth_bound(void **state)
{
    (void)state;
    char *s, *v, why[256];
    /* Within the bound, the failure at the bottom is found. */
    nested(100, &s, &v);
    assert_int_equal(check_texts(s, v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "expected a string"));
    assert_non_null(strstr(why, "/a/a/a/"));
    expect_valid(s);
    free(s);
    free(v);
    /* Past it: a clear refusal, not a crash, nor a pass. */
    nested(MCP__SCHEMA_MAX_DEPTH + 10, &s, &v);
    assert_int_equal(check_texts(s, v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "the schema is too complex to check: subschemas applied more "
                                "than 128 deep"));
    expect_invalid(s, "too deep");
    free(s);
    free(v);
    /* A recursive schema against a value nested past the bound. */
    mcp__buf vb = {0};
    for (int i = 0; i < 300; i++)
        assert_int_equal(mcp__buf_appends(&vb, "["), MCP_OK);
    for (int i = 0; i < 300; i++)
        assert_int_equal(mcp__buf_appends(&vb, "]"), MCP_OK);
    expect_fail("{'type':'array','items':{'$ref':'#'}}", vb.data, "too complex", NULL);
    mcp__buf_free(&vb);
}

static void test_exponential_composition_runs_out_of_steps_quickly(void **state)
{
    (void)state;
    /* d0 = anyOf[d1, d1], d1 = anyOf[d2, d2]... and the bottom never matches: 2^30
     * branches unless the work is bounded. */
    const char *kinds[] = {"anyOf", "oneOf", "allOf"};
    for (size_t k = 0; k < 3; k++) {
        mcp__buf sb = {0};
        assert_int_equal(mcp__buf_appends(&sb, "{\"$defs\":{"), MCP_OK);
        for (int i = 0; i < 30; i++)
            assert_int_equal(mcp__buf_appendf(&sb,
                                              "\"d%d\":{\"%s\":[{\"$ref\":\"#/$defs/d%d\"},"
                                              "{\"$ref\":\"#/$defs/d%d\"}]},",
                                              i, kinds[k], i + 1, i + 1),
                             MCP_OK);
        /* allOf fails at once on its first branch; make its bottom pass instead. */
        assert_int_equal(mcp__buf_appendf(&sb,
                                          "\"d30\":{\"type\":\"%s\"}},\"$ref\":\"#/$defs/d0\"}",
                                          k == 2 ? "integer" : "string"),
                         MCP_OK);
        char why[256];
        double t0 = now_ms();
        assert_int_equal(check_texts(sb.data, "1", why, sizeof(why)), -1);
        double took = now_ms() - t0;
        if (strstr(why, "the schema is too complex to check: more than") == NULL)
            fail_msg("%s: %s", kinds[k], why);
        if (took > 2000)
            fail_msg("%s took %.0f ms", kinds[k], took);
        expect_valid(sb.data); /* well-formed: only checking it costs */
        mcp__buf_free(&sb);
    }
}

static void test_huge_enum_is_bounded(void **state)
{
    (void)state;
    mcp__buf sb = {0};
    assert_int_equal(mcp__buf_appends(&sb, "{\"enum\":["), MCP_OK);
    for (int i = 0; i < 200000; i++)
        assert_int_equal(mcp__buf_appendf(&sb, "%s%d", i ? "," : "", i), MCP_OK);
    assert_int_equal(mcp__buf_appends(&sb, "]}"), MCP_OK);
    char why[256];
    /* Found early: fine. Not found: too much work for one value. */
    assert_int_equal(check_texts(sb.data, "5", why, sizeof(why)), 0);
    assert_int_equal(check_texts(sb.data, "-1", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "too complex to check"));
    expect_invalid(sb.data, "the schema is too large: more than 100000 JSON values");
    mcp__buf_free(&sb);
}

static void test_work_allowance_grows_with_the_instance(void **state)
{
    (void)state;
    /* 20,000 items, each checked by a few subschemas: a legitimate big value. */
    mcp__buf vb = {0};
    assert_int_equal(mcp__buf_appends(&vb, "["), MCP_OK);
    for (int i = 0; i < 20000; i++)
        assert_int_equal(mcp__buf_appendf(&vb, "%s{\"id\":%d,\"tag\":\"t\"}", i ? "," : "", i),
                         MCP_OK);
    assert_int_equal(mcp__buf_appends(&vb, "]"), MCP_OK);
    expect_ok("{'type':'array','items':{'type':'object','required':['id'],'properties':{"
              "'id':{'anyOf':[{'type':'string'},{'type':'integer'}]},'tag':{'type':'string'}}}}",
              vb.data);
    mcp__buf_free(&vb);
}

/* ---- unevaluatedProperties and unevaluatedItems ---- */

static void test_unevaluated_properties_sees_through_in_place_applicators(void **state)
{
    (void)state;
    const char *s = "{'allOf':[{'properties':{'a':{}}}],'properties':{'b':{}},"
                    "'unevaluatedProperties':false}";
    expect_ok(s, "{'a':1,'b':2}");
    expect_why(s, "{'a':1,'c':3}", "/c: is not an allowed property");
    /* Only branches that pass count. */
    const char *any = "{'anyOf':[{'properties':{'a':{'type':'string'}}},{'properties':{'b':{}}}],"
                      "'unevaluatedProperties':false}";
    expect_ok(any, "{'a':'x','b':1}");
    expect_fail(any, "{'a':1,'b':1}", "/a: is not an allowed property", NULL);
    /* Through $ref, if/then, dependentSchemas and patternProperties. */
    const char *ref = "{'$defs':{'base':{'properties':{'id':{}}}},'$ref':'#/$defs/base',"
                      "'if':{'properties':{'k':{'const':1}},'required':['k']},"
                      "'then':{'properties':{'extra':{}}},"
                      "'dependentSchemas':{'id':{'properties':{'dep':{}}}},"
                      "'patternProperties':{'^x-':{}},'unevaluatedProperties':false}";
    expect_ok(ref, "{'id':1,'k':1,'extra':2,'dep':3,'x-a':4}");
    expect_fail(ref, "{'id':1,'extra':1}", "/extra: is not an allowed property", NULL);
    /* An if that fails gives nothing: its properties are not evaluated either. */
    expect_fail(ref, "{'k':2}", "/k: is not an allowed property", NULL);
    expect_fail(ref, "{'dep':1}", "/dep: is not an allowed property", NULL);
    /* A schema form checks what nothing else did. */
    const char *schema_form = "{'properties':{'a':{}},'unevaluatedProperties':{'type':'integer'}}";
    expect_ok(schema_form, "{'a':'x','b':1}");
    expect_fail(schema_form, "{'a':'x','b':'y'}", "/b: expected an integer", NULL);
    /* Unlike additionalProperties, it sees the properties of allOf. */
    expect_fail("{'allOf':[{'properties':{'a':{}}}],'additionalProperties':false}", "{'a':1}",
                "/a: is not an allowed property", NULL);
    /* A nested object is another instance location: its own properties only. */
    expect_fail("{'properties':{'o':{'unevaluatedProperties':false}},'allOf':[{'properties':"
                "{'o':{'properties':{'x':{}}}}}]}",
                "{'o':{'x':1}}", "/o/x: is not an allowed property", NULL);
    /* Many members (the evaluated set is then allocated). */
    mcp__buf vb = {0};
    assert_int_equal(mcp__buf_appends(&vb, "{"), MCP_OK);
    for (int i = 0; i < 300; i++)
        assert_int_equal(mcp__buf_appendf(&vb, "%s\"p%d\":%d", i ? "," : "", i, i), MCP_OK);
    assert_int_equal(mcp__buf_appends(&vb, "}"), MCP_OK);
    expect_ok("{'allOf':[{'patternProperties':{'^p[0-9]+$':{'type':'integer'}}}],"
              "'unevaluatedProperties':false}",
              vb.data);
    expect_fail("{'allOf':[{'patternProperties':{'^p[0-9]?[0-9]$':{}}}],"
                "'unevaluatedProperties':false}",
                vb.data, "/p100: is not an allowed property", NULL);
    mcp__buf_free(&vb);
}

static void test_unevaluated_items(void **state)
{
    (void)state;
    const char *s = "{'allOf':[{'prefixItems':[{'type':'string'}]}],'unevaluatedItems':false}";
    expect_ok(s, "['a']");
    expect_why(s, "['a',1]", "/1: is not allowed: no schema evaluates this item");
    expect_ok("{'items':true,'unevaluatedItems':false}", "[1,2]");
    /* contains marks the items it matched. */
    const char *c = "{'contains':{'type':'integer'},'unevaluatedItems':{'type':'string'}}";
    expect_ok(c, "[1,'a',2]");
    expect_fail(c, "[1,null]", "/1: expected a string", NULL);
    expect_fail(
        "{'oneOf':[{'prefixItems':[true,true]},{'type':'string'}],'unevaluatedItems':false}",
        "[1,2,3]", "/2: is not allowed", NULL);
}

/* ---- Dialects, annotations, unknown keywords ---- */

static void test_dialects_2020_12_and_draft_07_others_refused(void **state)
{
    (void)state;
    expect_ok("{'$schema':'https://json-schema.org/draft/2020-12/schema','type':'string'}", "'x'");
    expect_valid("{'$schema':'https://json-schema.org/draft/2020-12/schema#'}");
    expect_valid("{'$schema':'http://json-schema.org/draft-07/schema'}");
    const char *old = "{'$schema':'http://json-schema.org/draft-07/schema#',"
                      "'items':[{'type':'string'}],'additionalItems':false,"
                      "'dependencies':{'a':['b'],'c':{'required':['d']}}}";
    expect_valid(old);
    expect_ok(old, "['x']");
    expect_fail(old, "['x',1]", "/1: is not allowed", NULL);
    expect_ok(old, "{'a':1,'b':1}");
    expect_fail(old, "{'a':1}", "/b: is required when \"a\" is present", NULL);
    expect_fail(old, "{'c':1}", "/d: is required", NULL);
    /* prefixItems is no draft-07 keyword: ignored there. */
    expect_ok("{'$schema':'http://json-schema.org/draft-07/schema#','prefixItems':[false]}", "[1]");
    const char *v4 = "{'$schema':'http://json-schema.org/draft-04/schema#'}";
    expect_fail(v4, "1",
                "invalid schema: the dialect http://json-schema.org/draft-04/schema# is "
                "not supported",
                NULL);
    expect_invalid(v4, "is not supported (2020-12 and draft-07 are)");
    expect_invalid("{'$schema':'https://json-schema.org/draft/2019-09/schema'}", "not supported");
    expect_invalid("{'$schema':5}", "not supported");
}

static void test_annotations_and_unknown_keywords_assert_nothing(void **state)
{
    (void)state;
    expect_ok("{'format':'email','title':'t','description':'d','default':1,'examples':[2],"
              "'deprecated':true,'readOnly':true,'contentMediaType':'text/plain',"
              "'x-mcp-header':'Region','$comment':'c','unknownKeyword':{'type':'integer'}}",
              "'not an email'");
    expect_valid("{'format':'email','x-anything':[1,2],'$comment':'c'}");
    /* In 2020-12, draft-07's additionalItems is an unknown keyword; its dependencies
     * is kept, as definitions is, for older schemas. */
    expect_ok("{'additionalItems':false}", "[1]");
    expect_fail("{'dependencies':{'a':['b']}}", "{'a':1}", "/b: is required when \"a\"", NULL);
}

/* ---- Sentences ---- */

static void test_sentences_name_the_place_as_a_json_pointer(void **state)
{
    (void)state;
    const char *s = "{'properties':{'items':{'type':'array','items':{'type':'object',"
                    "'properties':{'name':{'type':'string'}}}}}}";
    expect_why(s, "{'items':[{'name':'a'},{'name':'b'},{'name':7}]}",
               "/items/2/name: expected a string, got an integer");
    /* RFC 6901: ~ and / in a name are ~0 and ~1. */
    expect_why("{'properties':{'a/b':{'properties':{'c~d':{'type':'null'}}}}}", "{'a/b':{'c~d':1}}",
               "/a~1b/c~0d: expected a null, got an integer");
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
    assert_memory_equal(why, "/nnnnnnnnnn", sizeof(why) - 1);
    /* A cut never splits a character: \u00e9 is 2 bytes. */
    char small[5];
    assert_int_equal(
        check_texts("{'required':['\\u00e9\\u00e9\\u00e9']}", "{}", small, sizeof(small)), -1);
    assert_string_equal(small, "/\xc3\xa9:");
    /* A zero-sized buffer is left alone. */
    assert_int_equal(check_texts("{'type':'null'}", "1", why, 0), -1);
}

static void test_very_long_property_paths_do_not_overflow(void **state)
{
    (void)state;
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
    assert_int_equal(why[0], '/');
    expect_valid(schema);
}

/* ---- mcp__schema_valid ---- */

static void test_schema_valid_accepts_real_tool_schemas(void **state)
{
    (void)state;
    /* mcp-everything's SEP-1613 tool, and the spec's examples. */
    expect_valid("{'$schema':'https://json-schema.org/draft/2020-12/schema','type':'object',"
                 "'$defs':{'address':{'type':'object','properties':{'street':{'type':'string'},"
                 "'city':{'type':'string'}}}},'properties':{'name':{'type':'string'},"
                 "'address':{'$ref':'#/$defs/address'}},'additionalProperties':false}");
    expect_valid("{'$schema':'http://json-schema.org/draft-07/schema#','type':'object',"
                 "'properties':{'a':{'type':'number'},'b':{'type':'number'}},"
                 "'required':['a','b']}");
    expect_valid("{'type':'object','additionalProperties':false}");
    expect_valid("{'type':'object','properties':{'location':{'type':'string',"
                 "'description':'City name or zip code'}},'required':['location']}");
    expect_valid("{'type':'object','$defs':{'userId':{'type':'string','pattern':"
                 "'^[a-z0-9-]+$'}},'properties':{'id':{'$ref':'#/$defs/userId'}},"
                 "'required':['id']}");
}

static void test_schema_valid_refuses_malformed_keywords(void **state)
{
    (void)state;
    expect_invalid("[]", "a schema must be an object or a boolean, not an array");
    expect_invalid("{'properties':{'a':3}}",
                   "invalid schema at /properties/a: a schema must be an object or a boolean");
    expect_invalid("{'properties':[]}", "\"properties\" must be an object of schemas");
    expect_invalid("{'items':{'items':{'minItems':'2'}}}",
                   "invalid schema at /items/items: \"minItems\" must be a non-negative integer");
    expect_invalid("{'enum':3}", "\"enum\" must be an array");
    expect_invalid("{'additionalProperties':'no'}", "a schema must be an object or a boolean");
    expect_invalid("{'uniqueItems':'yes'}", "\"uniqueItems\" must be true or false");
    expect_invalid("{'$ref':1}", "\"$ref\" must be a string");
    expect_invalid("{'oneOf':[{},5]}", "invalid schema at /oneOf/1");
}

/* ---- Registration ---- */

static json_t *tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return mcp_text_result("ok");
}

static void test_registration_refuses_an_unusable_schema(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("t", "1");
    assert_non_null(srv);
    mcp_tool_def bad_in = {.name = "a",
                           .fn = tool_fn,
                           .input_schema = "{\"type\":\"object\",\"properties\":{"
                                           "\"p\":{\"$ref\":\"https://example.com/x.json\"}}}"};
    assert_int_equal(mcp_server_add_tool_def(srv, &bad_in), MCP_EINVAL);
    mcp_tool_def bad_out = {
        .name = "b", .fn = tool_fn, .output_schema = "{\"type\":\"object\",\"minProperties\":-1}"};
    assert_int_equal(mcp_server_add_tool_def(srv, &bad_out), MCP_EINVAL);
    mcp_tool_def cycle = {.name = "c", .fn = tool_fn, .input_schema = "{\"$ref\":\"#\"}"};
    assert_int_equal(mcp_server_add_tool_def(srv, &cycle), MCP_EINVAL);
    /* The listing shows a good schema exactly as given. */
    const char *text = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                       "\"type\":\"object\",\"$defs\":{\"n\":{\"type\":\"integer\"}},"
                       "\"properties\":{\"n\":{\"$ref\":\"#/$defs/n\"}},"
                       "\"additionalProperties\":false}";
    mcp_tool_def good = {.name = "d", .fn = tool_fn, .input_schema = text, .output_schema = text};
    assert_int_equal(mcp_server_add_tool_def(srv, &good), MCP_OK);
    mcp__tool *t = mcp__find_tool(srv, "d");
    assert_non_null(t);
    json_t *want = json_loads(text, 0, NULL);
    assert_true(json_equal(json_object_get(t->listing, "inputSchema"), want));
    assert_true(json_equal(json_object_get(t->listing, "outputSchema"), want));
    json_decref(want);
    assert_null(mcp__find_tool(srv, "a"));
    mcp_server_free(srv);
}

/* ---- Cost ---- */

static void test_benchmark_typical_tool_arguments(void **state)
{
    (void)state;
    /* Not asserted: prints what one check of typical arguments costs. */
    json_t *schema = load("{'type':'object','properties':{'query':{'type':'string','minLength':1,"
                          "'maxLength':200},'limit':{'type':'integer','minimum':1,'maximum':100},"
                          "'tags':{'type':'array','items':{'type':'string'},'uniqueItems':true},"
                          "'mode':{'enum':['fast','exact']}},'required':['query'],"
                          "'additionalProperties':false}");
    json_t *args = load("{'query':'weather in Paris','limit':10,'tags':['a','b'],'mode':'fast'}");
    json_t *with_ref = load("{'$defs':{'q':{'type':'string','minLength':1}},'type':'object',"
                            "'properties':{'query':{'$ref':'#/$defs/q'},'limit':{'anyOf':["
                            "{'type':'integer'},{'type':'null'}]}},'required':['query']}");
    json_t *with_pattern = load("{'type':'object','properties':{'query':{'type':'string',"
                                "'pattern':'^[a-zA-Z ]+$'}}}");
    const struct {
        const char *name;
        json_t *schema;
    } cases[] = {{"plain", schema}, {"$ref+anyOf", with_ref}, {"pattern", with_pattern}};
    char why[256];
    for (size_t k = 0; k < 3; k++) {
        int n = 20000;
        double t0 = now_ms();
        for (int i = 0; i < n; i++)
            assert_int_equal(mcp__schema_check(cases[k].schema, args, why, sizeof(why)), 0);
        double ns = (now_ms() - t0) * 1e6 / n;
        print_message("schema check of typical tool arguments (%s): %.0f ns per check\n",
                      cases[k].name, ns);
    }
    json_decref(schema);
    json_decref(args);
    json_decref(with_ref);
    json_decref(with_pattern);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_keywords_accept_their_own_type_only),
        cmocka_unit_test(test_integer_type_accepts_a_whole_real_number),
        cmocka_unit_test(test_unknown_type_name_makes_the_schema_invalid),
        cmocka_unit_test(test_type_array_accepts_any_listed_type),
        cmocka_unit_test(test_root_failures_are_named_root),
        cmocka_unit_test(test_enum_and_const_compare_json_values),
        cmocka_unit_test(test_numbers_compare_by_value_one_equals_one_point_zero),
        cmocka_unit_test(test_minimum_and_maximum_are_inclusive_exclusive_ones_are_not),
        cmocka_unit_test(test_multiple_of_integers_and_decimals),
        cmocka_unit_test(test_string_lengths_count_code_points_not_bytes),
        cmocka_unit_test(test_pattern_follows_ecma_262_where_posix_can),
        cmocka_unit_test(test_pattern_that_cannot_compile_makes_the_schema_invalid),
        cmocka_unit_test(test_pattern_matching_is_linear_in_the_string),
        cmocka_unit_test(test_min_and_max_items),
        cmocka_unit_test(test_unique_items_small_and_large_arrays),
        cmocka_unit_test(test_prefix_items_then_items_apply_in_turn),
        cmocka_unit_test(test_contains_with_min_and_max_contains),
        cmocka_unit_test(test_required_names_the_missing_property_with_its_path),
        cmocka_unit_test(test_min_and_max_properties),
        cmocka_unit_test(test_dependent_required_and_dependent_schemas),
        cmocka_unit_test(test_properties_are_checked_with_a_json_pointer_path),
        cmocka_unit_test(test_additional_properties_apply_to_unmatched_members_only),
        cmocka_unit_test(test_property_names),
        cmocka_unit_test(test_all_of_any_of_one_of_not),
        cmocka_unit_test(test_if_then_else),
        cmocka_unit_test(test_boolean_schemas),
        cmocka_unit_test(test_ref_to_local_json_pointers),
        cmocka_unit_test(test_recursive_ref_to_the_root_follows_the_instance),
        cmocka_unit_test(test_ref_applies_with_its_siblings_in_2020_12_not_in_draft_07),
        cmocka_unit_test(test_anchors_and_embedded_ids),
        cmocka_unit_test(test_dynamic_ref_takes_the_outermost_dynamic_anchor_in_scope),
        cmocka_unit_test(test_unresolvable_ref_is_an_error_never_a_fetch),
        cmocka_unit_test(test_ref_target_outside_known_keywords_is_checked_too),
        cmocka_unit_test(test_ref_cycle_that_consumes_no_instance_is_bounded),
        cmocka_unit_test(test_deep_nesting_stops_at_the_depth_bound),
        cmocka_unit_test(test_exponential_composition_runs_out_of_steps_quickly),
        cmocka_unit_test(test_huge_enum_is_bounded),
        cmocka_unit_test(test_work_allowance_grows_with_the_instance),
        cmocka_unit_test(test_unevaluated_properties_sees_through_in_place_applicators),
        cmocka_unit_test(test_unevaluated_items),
        cmocka_unit_test(test_dialects_2020_12_and_draft_07_others_refused),
        cmocka_unit_test(test_annotations_and_unknown_keywords_assert_nothing),
        cmocka_unit_test(test_sentences_name_the_place_as_a_json_pointer),
        cmocka_unit_test(test_sentence_is_truncated_to_the_buffer),
        cmocka_unit_test(test_very_long_property_paths_do_not_overflow),
        cmocka_unit_test(test_schema_valid_accepts_real_tool_schemas),
        cmocka_unit_test(test_schema_valid_refuses_malformed_keywords),
        cmocka_unit_test(test_registration_refuses_an_unusable_schema),
        cmocka_unit_test(test_benchmark_typical_tool_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
