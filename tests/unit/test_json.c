/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the JSON codec (src/protocol/json.c), held to jansson's: every text
 * it reads gives the value json_loadb gives, every text json_loadb refuses it refuses,
 * and what it writes is byte for byte what json_dumps(JSON_COMPACT) writes. Fixed
 * cases for each rule, then generated values and mutated texts from a seeded PRNG.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "protocol/json.h"

/* jansson's answer and ours for the same bytes must agree. Returns ours. */
static json_t *parse_both(const char *text, size_t len, unsigned flags)
{
    json_error_t je, me;
    json_t *theirs = json_loadb(text, len, flags & MCP__JSON_ANY ? JSON_DECODE_ANY : 0, &je);
    json_t *ours = mcp__json_parse(text, len, flags, &me);
    if ((theirs == NULL) != (ours == NULL))
        fail_msg("%.*s: jansson %s (%s), ours %s (%s)", (int)len, text,
                 theirs ? "reads it" : "refuses it", theirs ? "" : je.text,
                 ours ? "reads it" : "refuses it", ours ? "" : me.text);
    if (theirs != NULL && !json_equal(theirs, ours))
        fail_msg("%.*s: read as another value", (int)len, text);
    if (ours == NULL) {
        assert_true(me.line >= 1);
        assert_true(me.column >= 1);
        assert_true(me.position >= 0 && (size_t)me.position <= len);
        assert_true(me.text[0] != '\0');
    }
    json_decref(theirs);
    return ours;
}

/* Our writing of v must be jansson's, byte for byte: as it comes, and with sorted keys. */
static void write_both(const json_t *v)
{
    for (int sorted = 0; sorted < 2; sorted++) {
        char *theirs =
            json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | (sorted ? JSON_SORT_KEYS : 0));
        mcp__buf b = {0};
        int rc = sorted ? mcp__json_write_sorted(&b, v) : mcp__json_write(&b, v);
        if (theirs == NULL) {
            assert_int_not_equal(rc, MCP_OK);
        } else {
            assert_int_equal(rc, MCP_OK);
            if (b.len != strlen(theirs) || memcmp(b.data, theirs, b.len) != 0)
                fail_msg("written%s as %.*s, jansson writes %s", sorted ? " sorted" : "",
                         (int)b.len, b.data, theirs);
        }
        free(theirs);
        mcp__buf_free(&b);
    }
}

static void check(const char *text)
{
    json_t *v = parse_both(text, strlen(text), MCP__JSON_ANY);
    if (v != NULL)
        write_both(v);
    json_decref(v);
    json_decref(parse_both(text, strlen(text), 0));
}

static void test_reads_every_kind_of_value_as_jansson_does(void **state)
{
    (void)state;
    static const char *texts[] = {
        "{}",
        "[]",
        "{\"a\":1}",
        "[1,2,3]",
        " \t\r\n{ \"a\" : [ true , false , null ] }\n",
        "0",
        "-0",
        "1",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "1.5",
        "-0.0",
        "1e10",
        "1E+10",
        "1e-10",
        "123.456e-7",
        "2.2250738585072014e-308",
        "4.9e-324",
        "1e-400",
        "1.7976931348623157e308",
        "\"\"",
        "\"abc\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\u20AC\\ud83d\\ude00\"",
        "\"é€😀\"",
        "\"\x7f\"",
        "true",
        "false",
        "null",
        "{\"a\":1,\"a\":2}",
        "{\"a\":{\"x\":1},\"a\":{\"y\":2}}",
        "{\"\":\"\"}",
        "{\"k\\u00e9y\":[{\"a\":[]},{}]}",
        "[[[[[]]]]]",
        "[\"a\",{\"b\":[1,2.5,\"c\"]},null]",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
        "\"arguments\":{\"text\":\"hello\"},\"_meta\":{\"io.modelcontextprotocol/"
        "protocolVersion\":\"2026-07-28\"}}}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        check(texts[i]);
}

static void test_refuses_what_jansson_refuses(void **state)
{
    (void)state;
    static const char *texts[] = {
        "",
        " ",
        "{",
        "[",
        "}",
        "]",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "[,1]",
        "{,}",
        "{1:2}",
        "{\"a\" 1}",
        "[1 2]",
        "01",
        "-",
        "-a",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "1e400",
        "-1e400",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u00zz\"",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\ud800x\"",
        "\"\t\"",
        "\"\x01\"",
        "\"\xff\"",
        "\"\xc0\x80\"",
        "\"\xe0\x80\x80\"",
        "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"",
        "\"\xc3\"",
        "\"\xe2\x82\"",
        "tru",
        "truex",
        "nul",
        "nullx",
        "True",
        "NaN",
        "Infinity",
        "[1] 2",
        "{} {}",
        "1 x",
        "[\xc3\xa9]",
        "'a'",
        "/* */1",
        "[1]]",
        "{\"a\":1}}",
        "\xef\xbb\xbf{}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *v = parse_both(texts[i], strlen(texts[i]), MCP__JSON_ANY);
        if (v != NULL)
            fail_msg("%s was read", texts[i]);
    }
    /* A NUL byte is one more byte no valid text holds, wherever it is. */
    static const char nul1[] = "[1,\0 2]", nul2[] = "\"a\0b\"", nul3[] = "{}\0";
    assert_null(parse_both(nul1, sizeof nul1 - 1, MCP__JSON_ANY));
    assert_null(parse_both(nul2, sizeof nul2 - 1, MCP__JSON_ANY));
    assert_null(parse_both(nul3, sizeof nul3 - 1, MCP__JSON_ANY));
    /* jansson reads "3\0" as 3 (the NUL ends its buffer); it is no JSON text. */
    assert_null(mcp__json_parse("3\0", 2, MCP__JSON_ANY, NULL));
    assert_null(mcp__json_parse("[3\0]", 4, MCP__JSON_ANY, NULL));
    /* Without MCP__JSON_ANY, only an object or an array at the top. */
    assert_null(parse_both("1", 1, 0));
    assert_null(parse_both("\"a\"", 3, 0));
    json_decref(parse_both(" [1]", 4, 0));
}

static void test_nests_as_deep_as_jansson_and_no_deeper(void **state)
{
    (void)state;
    const size_t max = JSON_PARSER_MAX_DEPTH;
    char *t = malloc(2 * (max + 2) + 8);
    assert_non_null(t);
    /* max arrays: the innermost at depth max, empty. */
    memset(t, '[', max);
    memset(t + max, ']', max);
    json_t *v = parse_both(t, 2 * max, MCP__JSON_ANY);
    assert_non_null(v);
    write_both(v);
    json_decref(v);
    /* max arrays and a scalar in the innermost: the scalar is one too deep. */
    memset(t, '[', max);
    t[max] = '1';
    memset(t + max + 1, ']', max);
    assert_null(parse_both(t, 2 * max + 1, MCP__JSON_ANY));
    /* max + 1 arrays. */
    memset(t, '[', max + 1);
    memset(t + max + 1, ']', max + 1);
    assert_null(parse_both(t, 2 * max + 2, MCP__JSON_ANY));
    free(t);
    /* Objects count as arrays do: max - 1 of {"a": and an empty one inside. */
    t = malloc(6 * max + 16);
    assert_non_null(t);
    size_t n = 0;
    for (size_t i = 0; i < max - 1; i++) {
        memcpy(t + n, "{\"a\":", 5);
        n += 5;
    }
    memcpy(t + n, "{}", 2);
    n += 2;
    memset(t + n, '}', max - 1);
    n += max - 1;
    v = parse_both(t, n, MCP__JSON_ANY);
    assert_non_null(v);
    json_decref(v);
    free(t);
}

static void test_error_names_line_column_and_position(void **state)
{
    (void)state;
    json_error_t e;
    const char *text = "{\n  \"a\": 1,\n  \"b\": x\n}";
    assert_null(mcp__json_parse(text, strlen(text), MCP__JSON_ANY, &e));
    assert_int_equal(e.line, 3);
    assert_int_equal(e.column, 8);
    assert_int_equal(e.position, (int)(strchr(text, 'x') - text));
    assert_int_equal(json_error_code(&e), json_error_invalid_syntax);
    assert_null(mcp__json_parse("[1,2", 4, MCP__JSON_ANY, &e));
    assert_int_equal(json_error_code(&e), json_error_premature_end_of_input);
    assert_null(mcp__json_parse("99999999999999999999", 20, MCP__JSON_ANY, &e));
    assert_int_equal(json_error_code(&e), json_error_numeric_overflow);
    assert_null(mcp__json_parse("{} 1", 4, MCP__JSON_ANY, &e));
    assert_int_equal(json_error_code(&e), json_error_end_of_input_expected);
    /* No error record asked for: still refused. */
    assert_null(mcp__json_parse("[", 1, MCP__JSON_ANY, NULL));
}

static void test_writes_what_jansson_writes(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:[b,b,n], s:{}}", "s",
                          "a\"b\\c/d\b\f\n\r\t\x01\x1f\x7f é€😀", "max", (json_int_t)INT64_MAX,
                          "min", (json_int_t)INT64_MIN, "r1", 1.0, "r2", -0.0, "r3", 1e300, "r4",
                          1.5e-300, "r5", 0.1, "l", 1, 0, "o");
    assert_non_null(v);
    write_both(v);
    json_decref(v);
    /* An embedded NUL, which json_stringn allows, is written escaped. */
    v = json_stringn("a\0b", 3);
    write_both(v);
    json_decref(v);
    /* Not UTF-8 (only the unchecked constructor makes one): refused by both. */
    v = json_stringn_nocheck("\xff", 1);
    write_both(v);
    json_decref(v);
    /* A cycle: jansson refuses it, so do we (as too deep). */
    json_t *a = json_array(), *inner = json_array();
    assert_int_equal(json_array_append_new(a, inner), 0);
    assert_int_equal(json_array_append(inner, a), 0);
    mcp__buf b = {0};
    assert_int_equal(mcp__json_write(&b, a), MCP_EINVAL);
    mcp__buf_free(&b);
    json_array_clear(inner);
    json_decref(a);
}

static void test_reals_ignore_the_hosts_numeric_locale(void **state)
{
    (void)state;
    /* A host that sets a locale with a decimal comma must still get '.' both ways. */
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *set = NULL;
    for (size_t i = 0; i < 4 && set == NULL; i++)
        set = setlocale(LC_NUMERIC, locales[i]);
    json_t *v = mcp__json_parse("[1.5,2e3]", 9, MCP__JSON_ANY, NULL);
    assert_non_null(v);
    assert_true(json_real_value(json_array_get(v, 0)) == 1.5);
    mcp__buf b = {0};
    assert_int_equal(mcp__json_write(&b, v), MCP_OK);
    assert_string_equal(b.data, "[1.5,2000.0]");
    mcp__buf_free(&b);
    json_decref(v);
    setlocale(LC_NUMERIC, "C");
    if (set == NULL)
        print_message("no decimal-comma locale here: checked in the C locale only\n");
}

/* ---- Generated values and mutated texts ------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_string(char *s, size_t *n)
{
    static const char *pieces[] = {"a",
                                   "Z",
                                   "0",
                                   " ",
                                   "\"",
                                   "\\",
                                   "/",
                                   "\b",
                                   "\n",
                                   "\t",
                                   "\x01",
                                   "\x1f",
                                   "\x7f",
                                   "é",
                                   "€",
                                   "😀",
                                   "\xf4\x8f\xbf\xbf",
                                   "u",
                                   "\\u",
                                   "{",
                                   "]"};
    size_t len = 0, k = next() % 12;
    for (size_t i = 0; i < k; i++) {
        const char *p = pieces[next() % (sizeof(pieces) / sizeof(pieces[0]))];
        memcpy(s + len, p, strlen(p));
        len += strlen(p);
    }
    s[len] = '\0';
    *n = len;
}

static json_t *random_value(int depth)
{
    char s[64];
    size_t n;
    switch (next() % (depth > 5 ? 6 : 9)) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(next() & 1);
    case 2: {
        static const json_int_t edges[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1000000007};
        return json_integer(next() & 1 ? edges[next() % 6] : (json_int_t)next());
    }
    case 3: {
        double d;
        do {
            uint64_t bits = next();
            memcpy(&d, &bits, sizeof d);
        } while (!isfinite(d));
        return json_real(next() & 1 ? d : (double)(int32_t)next() / 8.0);
    }
    case 4:
    case 5:
        random_string(s, &n);
        return json_stringn(s, n);
    case 6:
    case 7: {
        json_t *o = json_object();
        for (size_t i = next() % 5; i > 0; i--) {
            random_string(s, &n);
            json_object_setn_new(o, s, n, random_value(depth + 1));
        }
        return o;
    }
    default: {
        json_t *a = json_array();
        for (size_t i = next() % 5; i > 0; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    }
}

static void test_generated_values_round_trip_as_jansson_does(void **state)
{
    (void)state;
    static const char mutations[] = "\"\\{}[],:0123456789-+.eEtfnu \x01\x80\xbf\xc3\xed\xff";
    /* More members than the sorted writer holds on its stack, keys sharing prefixes. */
    json_t *wide = json_object();
    assert_non_null(wide);
    for (int i = 0; i < 40; i++) {
        char key[16];
        snprintf(key, sizeof key, "%.*s%d", i % 3, "kkk", (i * 7919) % 97);
        json_object_set_new(wide, key, json_integer(i));
    }
    write_both(wide);
    json_decref(wide);
    for (int i = 0; i < 3000; i++) {
        json_t *v = random_value(0);
        assert_non_null(v);
        write_both(v);
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_non_null(text);
        size_t len = strlen(text);
        json_t *back = parse_both(text, len, MCP__JSON_ANY);
        assert_non_null(back);
        assert_true(json_equal(back, v));
        json_decref(back);
        /* The same text with a few bytes changed, dropped or cut short. */
        for (int m = 0; m < 4 && len > 0; m++) {
            char *t = strdup(text);
            assert_non_null(t);
            size_t tl = len;
            for (int k = 0; k <= (int)(next() % 3); k++) {
                size_t at = next() % tl;
                switch (next() % 3) {
                case 0:
                    t[at] = mutations[next() % (sizeof mutations - 1)];
                    break;
                case 1:
                    memmove(t + at, t + at + 1, tl - at);
                    tl--;
                    break;
                default:
                    tl = at;
                    break;
                }
                if (tl == 0)
                    break;
            }
            json_t *w = parse_both(t, tl, MCP__JSON_ANY);
            if (w != NULL)
                write_both(w);
            json_decref(w);
            free(t);
        }
        free(text);
        json_decref(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_every_kind_of_value_as_jansson_does),
        cmocka_unit_test(test_refuses_what_jansson_refuses),
        cmocka_unit_test(test_nests_as_deep_as_jansson_and_no_deeper),
        cmocka_unit_test(test_error_names_line_column_and_position),
        cmocka_unit_test(test_writes_what_jansson_writes),
        cmocka_unit_test(test_reals_ignore_the_hosts_numeric_locale),
        cmocka_unit_test(test_generated_values_round_trip_as_jansson_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
