/* SPDX-License-Identifier: MIT */
/*
 * RFC 6570 URI templates, levels 2 to 4, both ways: every example of the RFC's
 * section 3.2 expanded by mcp_uri_template_expand with the RFC's variables, and the
 * URIs read back by the resource-template matcher into the variables they came from
 * (where the expansion can be read back: the RFC's examples with one reading), plus
 * the readings a server's templates rely on (optional segments, queries in any order
 * and with parameters the template does not name). That the matcher stays linear is
 * test_registry's (steps counted on URIs of a megabyte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "server/uri_template.h"

/* The variables of RFC 6570, section 3.2. */
#define RFC_VARS                                                                                   \
    "{\"count\":[\"one\",\"two\",\"three\"],\"dom\":[\"example\",\"com\"],\"dub\":\"me/too\","     \
    "\"hello\":\"Hello World!\",\"half\":\"50%\",\"var\":\"value\",\"who\":\"fred\","              \
    "\"base\":\"http://example.com/home/\",\"path\":\"/foo/bar\",\"list\":[\"red\",\"green\","     \
    "\"blue\"],\"keys\":{\"semi\":\";\",\"dot\":\".\",\"comma\":\",\"},\"v\":\"6\",\"x\":"         \
    "\"1024\",\"y\":\"768\",\"empty\":\"\",\"empty_keys\":{},\"undef\":null}"

static const char *const expansions[][2] = {
    /* 3.2.1 Variable Expansion */
    {"{count}", "one,two,three"},
    {"{count*}", "one,two,three"},
    {"{/count}", "/one,two,three"},
    {"{/count*}", "/one/two/three"},
    {"{;count}", ";count=one,two,three"},
    {"{;count*}", ";count=one;count=two;count=three"},
    {"{?count}", "?count=one,two,three"},
    {"{?count*}", "?count=one&count=two&count=three"},
    {"{&count*}", "&count=one&count=two&count=three"},
    /* 3.2.2 Simple String Expansion */
    {"{var}", "value"},
    {"{hello}", "Hello%20World%21"},
    {"{half}", "50%25"},
    {"O{empty}X", "OX"},
    {"O{undef}X", "OX"},
    {"{x,y}", "1024,768"},
    {"{x,hello,y}", "1024,Hello%20World%21,768"},
    {"?{x,empty}", "?1024,"},
    {"?{x,undef}", "?1024"},
    {"?{undef,y}", "?768"},
    {"{var:3}", "val"},
    {"{var:30}", "value"},
    {"{list}", "red,green,blue"},
    {"{list*}", "red,green,blue"},
    {"{keys}", "semi,%3B,dot,.,comma,%2C"},
    {"{keys*}", "semi=%3B,dot=.,comma=%2C"},
    /* 3.2.3 Reserved Expansion */
    {"{+var}", "value"},
    {"{+hello}", "Hello%20World!"},
    {"{+half}", "50%25"},
    {"{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
    {"{+base}index", "http://example.com/home/index"},
    {"O{+empty}X", "OX"},
    {"O{+undef}X", "OX"},
    {"{+path}/here", "/foo/bar/here"},
    {"here?ref={+path}", "here?ref=/foo/bar"},
    {"up{+path}{var}/here", "up/foo/barvalue/here"},
    {"{+x,hello,y}", "1024,Hello%20World!,768"},
    {"{+path,x}/here", "/foo/bar,1024/here"},
    {"{+path:6}/here", "/foo/b/here"},
    {"{+list}", "red,green,blue"},
    {"{+list*}", "red,green,blue"},
    {"{+keys}", "semi,;,dot,.,comma,,"},
    {"{+keys*}", "semi=;,dot=.,comma=,"},
    /* 3.2.4 Fragment Expansion */
    {"{#var}", "#value"},
    {"{#hello}", "#Hello%20World!"},
    {"{#half}", "#50%25"},
    {"foo{#empty}", "foo#"},
    {"foo{#undef}", "foo"},
    {"{#x,hello,y}", "#1024,Hello%20World!,768"},
    {"{#path,x}/here", "#/foo/bar,1024/here"},
    {"{#path:6}/here", "#/foo/b/here"},
    {"{#list}", "#red,green,blue"},
    {"{#list*}", "#red,green,blue"},
    {"{#keys}", "#semi,;,dot,.,comma,,"},
    {"{#keys*}", "#semi=;,dot=.,comma=,"},
    /* 3.2.5 Label Expansion with Dot-Prefix */
    {"{.who}", ".fred"},
    {"{.who,who}", ".fred.fred"},
    {"{.half,who}", ".50%25.fred"},
    {"www{.dom*}", "www.example.com"},
    {"X{.var}", "X.value"},
    {"X{.empty}", "X."},
    {"X{.undef}", "X"},
    {"X{.var:3}", "X.val"},
    {"X{.list}", "X.red,green,blue"},
    {"X{.list*}", "X.red.green.blue"},
    {"X{.keys}", "X.semi,%3B,dot,.,comma,%2C"},
    {"X{.keys*}", "X.semi=%3B.dot=..comma=%2C"},
    {"X{.empty_keys}", "X"},
    {"X{.empty_keys*}", "X"},
    /* 3.2.6 Path Segment Expansion */
    {"{/who}", "/fred"},
    {"{/who,who}", "/fred/fred"},
    {"{/half,who}", "/50%25/fred"},
    {"{/who,dub}", "/fred/me%2Ftoo"},
    {"{/var}", "/value"},
    {"{/var,empty}", "/value/"},
    {"{/var,undef}", "/value"},
    {"{/var,x}/here", "/value/1024/here"},
    {"{/var:1,var}", "/v/value"},
    {"{/list}", "/red,green,blue"},
    {"{/list*}", "/red/green/blue"},
    {"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
    {"{/keys}", "/semi,%3B,dot,.,comma,%2C"},
    {"{/keys*}", "/semi=%3B/dot=./comma=%2C"},
    /* 3.2.7 Path-Style Parameter Expansion */
    {"{;who}", ";who=fred"},
    {"{;half}", ";half=50%25"},
    {"{;empty}", ";empty"},
    {"{;v,empty,who}", ";v=6;empty;who=fred"},
    {"{;v,bar,who}", ";v=6;who=fred"},
    {"{;x,y}", ";x=1024;y=768"},
    {"{;x,y,empty}", ";x=1024;y=768;empty"},
    {"{;x,y,undef}", ";x=1024;y=768"},
    {"{;hello:5}", ";hello=Hello"},
    {"{;list}", ";list=red,green,blue"},
    {"{;list*}", ";list=red;list=green;list=blue"},
    {"{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"},
    {"{;keys*}", ";semi=%3B;dot=.;comma=%2C"},
    /* 3.2.8 Form-Style Query Expansion */
    {"{?who}", "?who=fred"},
    {"{?half}", "?half=50%25"},
    {"{?x,y}", "?x=1024&y=768"},
    {"{?x,y,empty}", "?x=1024&y=768&empty="},
    {"{?x,y,undef}", "?x=1024&y=768"},
    {"{?var:3}", "?var=val"},
    {"{?list}", "?list=red,green,blue"},
    {"{?list*}", "?list=red&list=green&list=blue"},
    {"{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"},
    {"{?keys*}", "?semi=%3B&dot=.&comma=%2C"},
    /* 3.2.9 Form-Style Query Continuation */
    {"{&who}", "&who=fred"},
    {"{&half}", "&half=50%25"},
    {"?fixed=yes{&x}", "?fixed=yes&x=1024"},
    {"{&x,y,empty}", "&x=1024&y=768&empty="},
    {"{&var:3}", "&var=val"},
    {"{&list}", "&list=red,green,blue"},
    {"{&list*}", "&list=red&list=green&list=blue"},
    {"{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"},
    {"{&keys*}", "&semi=%3B&dot=.&comma=%2C"},
};

static json_t *parse_json(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (v == NULL)
        fail_msg("bad JSON in the test: %s (%s)", text, e.text);
    return v;
}

static void test_every_example_of_the_rfc_expands_as_the_rfc_says(void **state)
{
    (void)state;
    json_t *vars = parse_json(RFC_VARS);
    for (size_t i = 0; i < sizeof(expansions) / sizeof(expansions[0]); i++) {
        char *got = mcp_uri_template_expand(expansions[i][0], vars);
        if (got == NULL || strcmp(got, expansions[i][1]) != 0)
            fail_msg("%s: expanded to %s, the RFC says %s", expansions[i][0], got ? got : "(NULL)",
                     expansions[i][1]);
        free(got);
    }
    /* Not a template, or values of no kind RFC 6570 has. */
    assert_null(mcp_uri_template_expand("{unclosed", vars));
    assert_null(mcp_uri_template_expand("{=x}", vars));
    json_t *odd = parse_json("{\"x\":{\"a\":[1]},\"b\":true}");
    assert_null(mcp_uri_template_expand("{x}", odd));
    assert_null(mcp_uri_template_expand("{b}", odd));
    json_decref(odd);
    char *none = mcp_uri_template_expand("a{/b}{?c}", NULL);
    assert_string_equal(none, "a");
    free(none);
    json_decref(vars);
}

/* Template, URI, and the variables the match gives (NULL: no match). */
static const char *const readings[][3] = {
    /* The RFC's examples read back. */
    {"{hello}", "Hello%20World%21", "{\"hello\":\"Hello World!\"}"},
    {"{x,y}", "1024,768", "{\"x\":\"1024\",\"y\":\"768\"}"},
    {"{x,hello,y}", "1024,Hello%20World%21,768",
     "{\"x\":\"1024\",\"hello\":\"Hello World!\",\"y\":\"768\"}"},
    {"{var:3}", "val", "{\"var\":\"val\"}"},
    {"{+base}index", "http://example.com/home/index", "{\"base\":\"http://example.com/home/\"}"},
    {"{+path}/here", "/foo/bar/here", "{\"path\":\"/foo/bar\"}"},
    {"here?ref={+path}", "here?ref=/foo/bar", "{\"path\":\"/foo/bar\"}"},
    {"{+hello}", "Hello%20World!", "{\"hello\":\"Hello World!\"}"},
    {"{#var}", "#value", "{\"var\":\"value\"}"},
    {"{#x,hello,y}", "#1024,Hello%20World!,768",
     "{\"x\":\"1024\",\"hello\":\"Hello World!\",\"y\":\"768\"}"},
    {"foo{#undef}", "foo", "{}"},
    {"{.who}", ".fred", "{\"who\":\"fred\"}"},
    {"{.half,who}", ".50%25.fred", "{\"half\":\"50%\",\"who\":\"fred\"}"},
    {"www{.dom*}", "www.example.com", "{\"dom\":[\"example\",\"com\"]}"},
    {"X{.var}", "X.value", "{\"var\":\"value\"}"},
    {"X{.undef}", "X", "{}"},
    {"X{.list*}", "X.red.green.blue", "{\"list\":[\"red\",\"green\",\"blue\"]}"},
    {"{/who}", "/fred", "{\"who\":\"fred\"}"},
    {"{/half,who}", "/50%25/fred", "{\"half\":\"50%\",\"who\":\"fred\"}"},
    {"{/who,dub}", "/fred/me%2Ftoo", "{\"who\":\"fred\",\"dub\":\"me/too\"}"},
    {"{/var,x}/here", "/value/1024/here", "{\"var\":\"value\",\"x\":\"1024\"}"},
    {"{/list*}", "/red/green/blue", "{\"list\":[\"red\",\"green\",\"blue\"]}"},
    {"{/keys*}", "/semi=%3B/dot=./comma=%2C",
     "{\"keys\":{\"semi\":\";\",\"dot\":\".\",\"comma\":\",\"}}"},
    {"{;who}", ";who=fred", "{\"who\":\"fred\"}"},
    {"{;half}", ";half=50%25", "{\"half\":\"50%\"}"},
    {"{;v,empty,who}", ";v=6;empty;who=fred", "{\"v\":\"6\",\"empty\":\"\",\"who\":\"fred\"}"},
    {"{;x,y}", ";x=1024;y=768", "{\"x\":\"1024\",\"y\":\"768\"}"},
    {"{;list*}", ";list=red;list=green;list=blue", "{\"list\":[\"red\",\"green\",\"blue\"]}"},
    {"{;keys*}", ";semi=%3B;dot=.;comma=%2C",
     "{\"keys\":{\"semi\":\";\",\"dot\":\".\",\"comma\":\",\"}}"},
    {"{?who}", "?who=fred", "{\"who\":\"fred\"}"},
    {"{?x,y}", "?x=1024&y=768", "{\"x\":\"1024\",\"y\":\"768\"}"},
    {"{?x,y,empty}", "?x=1024&y=768&empty=", "{\"x\":\"1024\",\"y\":\"768\",\"empty\":\"\"}"},
    {"{?list*}", "?list=red&list=green&list=blue", "{\"list\":[\"red\",\"green\",\"blue\"]}"},
    {"{?keys*}", "?semi=%3B&dot=.&comma=%2C",
     "{\"keys\":{\"semi\":\";\",\"dot\":\".\",\"comma\":\",\"}}"},
    {"{&who}", "&who=fred", "{\"who\":\"fred\"}"},
    {"?fixed=yes{&x}", "?fixed=yes&x=1024", "{\"x\":\"1024\"}"},
    /* What servers' templates rely on. */
    {"file:///{+path}", "file:///src/lib/a%20b.c", "{\"path\":\"src/lib/a b.c\"}"},
    {"search{?q,lang}", "search", "{}"},
    {"search{?q,lang}", "search?lang=en&q=a%20b", "{\"q\":\"a b\",\"lang\":\"en\"}"},
    {"search{?q,lang}", "search?q=cat&utm=x", "{\"q\":\"cat\"}"},
    {"search{?q}", "search?q=1#frag", NULL},
    {"repo://{owner}/{repo}{/path*}", "repo://a/b", "{\"owner\":\"a\",\"repo\":\"b\"}"},
    {"repo://{owner}/{repo}{/path*}", "repo://a/b/src/main.c",
     "{\"owner\":\"a\",\"repo\":\"b\",\"path\":[\"src\",\"main.c\"]}"},
    {"repo://{owner}/{repo}{/path*}{?ref}", "repo://a/b/x?ref=v1",
     "{\"owner\":\"a\",\"repo\":\"b\",\"path\":[\"x\"],\"ref\":\"v1\"}"},
    {"{/who}", "/fred/x", NULL},
    {"X{.var}", "Y.value", NULL},
    {"{/a}{/b}{/c}", "/1/2", "{\"a\":\"1\",\"b\":\"2\"}"},
    {"{/a}{/b}{/c}", "/1/2/3", "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}"},
    {"{/a}{/b}{/c}", "/1/2/3/4", NULL},
    {"{+a}-{+b}.json", "x/y-z-w.json", "{\"a\":\"x/y\",\"b\":\"z-w\"}"},
    {"{x,y}", "1,2,3", NULL},
    {"{?q}", "?q=%FF", NULL}, /* not UTF-8 once decoded */
};

static void test_expansions_are_read_back_by_the_matcher(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(readings) / sizeof(readings[0]); i++) {
        json_t *vars = json_object();
        size_t steps = 0;
        int got = mcp__uri_template_match(readings[i][0], readings[i][1], vars, &steps);
        if (readings[i][2] == NULL) {
            if (got != 0) {
                char *s = json_dumps(vars, JSON_COMPACT);
                fail_msg("%s matched %s: %s", readings[i][0], readings[i][1], s);
            }
        } else {
            json_t *want = parse_json(readings[i][2]);
            if (got != 1 || !json_equal(vars, want)) {
                char *s = json_dumps(vars, JSON_COMPACT);
                fail_msg("%s against %s: %d %s, want %s", readings[i][0], readings[i][1], got, s,
                         readings[i][2]);
            }
            /* And forth again: the variables expand to the URI (where the reading is
             * the RFC's, one to one). */
            char *again = mcp_uri_template_expand(readings[i][0], want);
            assert_non_null(again);
            if (strcmp(readings[i][0], "search{?q,lang}") != 0 &&
                strcmp(readings[i][0], "file:///{+path}") != 0 &&
                strcmp(again, readings[i][1]) != 0)
                fail_msg("%s: %s read back expands to %s", readings[i][0], readings[i][1], again);
            free(again);
            json_decref(want);
        }
        json_decref(vars);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_example_of_the_rfc_expands_as_the_rfc_says),
        cmocka_unit_test(test_expansions_are_read_back_by_the_matcher),
    };
    return cmocka_run_group_tests_name("uri_templates", tests, NULL, NULL);
}
