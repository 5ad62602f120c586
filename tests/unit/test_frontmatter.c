/* SPDX-License-Identifier: MIT */
/*
 * A SKILL.md's frontmatter read as JSON (src/protocol/frontmatter.c): the readings
 * the TypeScript SDK 2.4.0 gives (each pair below was read by its reader too, and is
 * compared here member by member with exact types), and what is refused rather than
 * read differently (each refusal names its line). That the whole skill then passes a
 * host's check is interop_skills' (the SDK's own SkillsClient reads our skills back).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <jansson.h>

#include "protocol/frontmatter.h"

/* The frontmatter (between the "---" lines) and its JSON. */
static const char *const readings[][2] = {
    {"name: pdf\ndescription: Work with PDFs\n",
     "{\"name\":\"pdf\",\"description\":\"Work with PDFs\"}"},
    {"a: 0x1F\nb: 0o17\nc: 1e-400\nd: -0\ne: 012\nf: 1.\ng: .5\nh: +1\ni: 1.5e3",
     "{\"a\":31,\"b\":15,\"c\":0,\"d\":0,\"e\":12,\"f\":1,\"g\":0.5,\"h\":1,\"i\":1500}"},
    {"a:\nb: ~\nc: null\nd: NULL\ne: true\nf: False\ng: yes\nh: on\ni: 0X1F\nj: 1_000\nk: "
     "2024-01-01",
     "{\"a\":null,\"b\":null,\"c\":null,\"d\":null,\"e\":true,\"f\":false,\"g\":\"yes\",\"h\":"
     "\"on\",\"i\":\"0X1F\",\"j\":\"1_000\",\"k\":\"2024-01-01\"}"},
    {"a: foo #bar\nb: foo#bar\nc: http://x/y\nd: Bash(git:*)",
     "{\"a\":\"foo\",\"b\":\"foo#bar\",\"c\":\"http://x/y\",\"d\":\"Bash(git:*)\"}"},
    {"a: >\n  f1\n  f2\n\n  p2\n", "{\"a\":\"f1 f2\\np2\\n\"}"},
    {"a: |-\n  x", "{\"a\":\"x\"}"},
    {"a: |\n  line 1\n    more\n  line 3\n\nb: 1",
     "{\"a\":\"line 1\\n  more\\nline 3\\n\",\"b\":1}"},
    {"a: |+\n  x\n\nb: 1", "{\"a\":\"x\\n\\n\",\"b\":1}"},
    {"a: [1, \"two\", three, 'fo''ur',]", "{\"a\":[1,\"two\",\"three\",\"fo'ur\"]}"},
    {"a: []\nb: {}", "{\"a\":[],\"b\":{}}"},
    {"description: Use this skill when\n  the user asks for\n\n  a PDF\nname: x",
     "{\"description\":\"Use this skill when the user asks for\\na PDF\",\"name\":\"x\"}"},
    {"metadata:\n  author: ada\n  version: \"1.0\"\n  nested:\n    deep: true",
     "{\"metadata\":{\"author\":\"ada\",\"version\":\"1.0\",\"nested\":{\"deep\":true}}}"},
    {"allowed-tools:\n  - Read\n  - Bash(git:*)\nlist:\n- 1\n- two",
     "{\"allowed-tools\":[\"Read\",\"Bash(git:*)\"],\"list\":[1,\"two\"]}"},
    {"q: \"tab\\there \\u00e9 \\x41 \\U0001F600 \\\\ \\\" \\/ \\N\" # c",
     "{\"q\":\"tab\\there \\u00e9 A \\ud83d\\ude00 \\\\ \\\" / \\u0085\"}"},
    {"# a comment\nname: x\n\n  # indented comment\ndescription: 'it''s'",
     "{\"name\":\"x\",\"description\":\"it's\"}"},
    {"", "{}"},
    {"a: .info files\nb: .nAn\nc: 0o777777777777777\nd: 0x000000000000001",
     "{\"a\":\".info files\",\"b\":\".nAn\",\"c\":35184372088831,\"d\":1}"},
};

/* Frontmatters refused (between the "---" lines): what the TypeScript SDK refuses too,
 * and what it reads but this reader leaves alone (flow mappings with members, nested
 * flows, quoted keys, an indented document, mappings in sequences, empty items, folded
 * scalars with blank or more-indented lines, numbers past 2^53, lone surrogates), where
 * readings could differ: such a skill is not served. */
static const char *const refusals[] = {
    "a: b: c", /* ": " in a plain value */
    "description: Use when: x",
    "\tname: x", /* tab indentation */
    "a: &anchor x",
    "a: *alias",
    "a: !tag x",
    "a: |2\n  x", /* indentation indicator */
    "a: {b: 1}",
    "a: [[1]]",
    "a: [1",
    "\"quoted\": key",
    "1: one",
    "true: yes",
    "null: x",
    "__proto__: x",
    "a: 1\na: 2",
    "a: .inf",
    "a: 1e400",
    "a: 0x1FFFFFFFFFFFFFF",
    "a: \"\\ud800\"",
    "a: \"unterminated",
    "a: 'x' y",
    "a: x\n  - y",      /* a continuation line that looks like an item */
    "a: x # c\n  more", /* a continuation after a comment */
    "  a: x",           /* the document is not a mapping at column 0 */
    "- a",
    "a: >\n\n  x",      /* a folded scalar that begins blank */
    "a: >\n  x\n    y", /* a folded scalar with a more-indented line */
    "a:\n  b: 1\n c: 2",
    "a: - x",
    "? a",
    "a: \"x\"\n  b",
    "a:\n  - k: v",
    "a:\n  -",
    "a: %x",
};

static json_t *parse_doc(const char *yaml, char *why, size_t size)
{
    char doc[4096];
    snprintf(doc, sizeof doc, "---\n%s\n---\nbody\n", yaml);
    return mcp__frontmatter_parse(doc, strlen(doc), why, size);
}

static void test_readings_match_the_typescript_sdks(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof readings / sizeof readings[0]; i++) {
        char why[256];
        json_t *got = parse_doc(readings[i][0], why, sizeof why);
        json_t *want = json_loads(readings[i][1], 0, NULL);
        assert_non_null(want);
        if (got == NULL)
            fail_msg("refused %s: %s", readings[i][0], why);
        if (!json_equal(got, want)) {
            char *text = json_dumps(got, JSON_COMPACT);
            fail_msg("%s read as %s, not %s", readings[i][0], text, readings[i][1]);
        }
        /* Exact types: 1 is not 1.0 for a host comparing with ===, but both are the
         * same double; what matters is that integers stay integers. */
        json_decref(got);
        json_decref(want);
    }
}

static void test_what_is_not_read_is_refused_with_its_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        char why[256] = "";
        json_t *got = parse_doc(refusals[i], why, sizeof why);
        if (got != NULL) {
            char *text = json_dumps(got, JSON_COMPACT);
            fail_msg("read %s as %s", refusals[i], text);
        }
        if (strncmp(why, "frontmatter line ", 17) != 0)
            fail_msg("%s: why is \"%s\"", refusals[i], why);
    }
}

static void test_the_frame_of_the_frontmatter(void **state)
{
    (void)state;
    char why[256];
    /* A byte order mark and CRLF lines. */
    const char crlf[] = "\xEF\xBB\xBF---\r\nname: x\r\ndescription: y\r\n---  \r\nbody";
    json_t *got = mcp__frontmatter_parse(crlf, sizeof crlf - 1, why, sizeof why);
    assert_non_null(got);
    assert_string_equal(json_string_value(json_object_get(got, "description")), "y");
    json_decref(got);
    /* No frontmatter, no end to it, a NUL, a lone CR, U+2028. */
    const char *const bad[] = {"# Title\n", "---\nname: x\n", "--- \nname: x\n---\n",
                               "---\nname: x\rdescription: y\n---\n",
                               "---\nname: x \xE2\x80\xA8 y\n---\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        got = mcp__frontmatter_parse(bad[i], strlen(bad[i]), why, sizeof why);
        if (got != NULL)
            fail_msg("read %s", bad[i]);
        assert_true(why[0] != '\0');
    }
    const char nul[] = "---\nname: x\0\n---\n";
    assert_null(mcp__frontmatter_parse(nul, sizeof nul - 1, why, sizeof why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readings_match_the_typescript_sdks),
        cmocka_unit_test(test_what_is_not_read_is_refused_with_its_line),
        cmocka_unit_test(test_the_frame_of_the_frontmatter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
