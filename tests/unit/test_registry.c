/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/server/registry.c: server settings, registering, finding and
 * removing tools, resources, templates and prompts, RFC 6570 level-1 template matching
 * (against a backtracking matcher, and in linear time),
 * and the list_changed and other broadcasts (with no runtime, and to sessions on one).
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

#include "server/server_int.h"
#include "server/uri_template.h"

static json_t *tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return mcp_text_result("tool");
}

static json_t *other_tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return mcp_text_result("other");
}

static json_t *resource_fn(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx;
    (void)vars;
    (void)user;
    return mcp_resource_text(uri, NULL, "x");
}

static json_t *prompt_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return mcp_prompt_result(NULL, json_array());
}

static int setup(void **state)
{
    mcp_server *srv = mcp_server_new("test", "1.2.3");
    assert_non_null(srv);
    *state = srv;
    return 0;
}

static int teardown(void **state)
{
    mcp_server_free(*state);
    return 0;
}

/* The find functions expect the registry lock held, as the dispatcher holds it. */
static mcp__tool *find_tool(mcp_server *srv, const char *name)
{
    uv_mutex_lock(&srv->lock);
    mcp__tool *t = mcp__find_tool(srv, name);
    uv_mutex_unlock(&srv->lock);
    return t;
}

static mcp__template *match(mcp_server *srv, const char *uri, json_t **vars)
{
    *vars = NULL;
    uv_mutex_lock(&srv->lock);
    mcp__template *t = mcp__match_template(srv, uri, vars);
    uv_mutex_unlock(&srv->lock);
    if (t == NULL)
        assert_null(*vars);
    else
        assert_true(json_is_object(*vars));
    return t;
}

static void expect_json(const json_t *got, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    assert_non_null(w);
    if (!json_equal(got, w)) {
        char *dump = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got %s, want %s", dump ? dump : "(null)", want);
    }
    json_decref(w);
}

/* ---- Server object and settings ---- */

static void test_server_new_refuses_null_name_or_version(void **state)
{
    (void)state;
    assert_null(mcp_server_new(NULL, "1"));
    assert_null(mcp_server_new("n", NULL));
    mcp_server_free(NULL);
}

static void test_settings_check_their_ranges(void **state)
{
    mcp_server *srv = *state;
    assert_int_equal(srv->page_size, 100);
    assert_int_equal(mcp_server_set_page_size(srv, 0), MCP_EINVAL);
    assert_int_equal(mcp_server_set_page_size(srv, 10001), MCP_EINVAL);
    assert_int_equal(mcp_server_set_page_size(srv, 2), MCP_OK);
    assert_int_equal(srv->page_size, 2);
    assert_int_equal(mcp_server_set_page_size(NULL, 2), MCP_EINVAL);

    assert_int_equal(mcp_server_set_workers(srv, 0), MCP_EINVAL);
    assert_int_equal(mcp_server_set_workers(srv, 257), MCP_EINVAL);
    assert_int_equal(mcp_server_set_workers(srv, 3), MCP_OK);
    assert_int_equal(srv->workers, 3);

    assert_int_equal(mcp_server_set_max_message_size(srv, 1023), MCP_EINVAL);
    assert_int_equal(mcp_server_set_max_message_size(srv, 1024), MCP_OK);
    assert_int_equal(srv->max_message, 1024);

    assert_int_equal(mcp_server_set_title(srv, "T"), MCP_OK);
    assert_string_equal(srv->title, "T");
    assert_int_equal(mcp_server_set_title(srv, NULL), MCP_OK);
    assert_null(srv->title);
    assert_int_equal(mcp_server_set_instructions(srv, "Use the tools."), MCP_OK);
    assert_string_equal(srv->instructions, "Use the tools.");
    assert_int_equal(mcp_server_set_instructions(NULL, "x"), MCP_EINVAL);
    assert_int_equal(mcp_server_set_completion(NULL, NULL, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_on_notification(NULL, NULL, NULL), MCP_EINVAL);
}

/* ---- Tools ---- */

static void test_add_tool_builds_the_listing_and_can_be_found(void **state)
{
    mcp_server *srv = *state;
    int user = 7;
    mcp_tool_def def = {
        .name = "add",
        .title = "Add",
        .description = "Adds two numbers",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}},"
                        "\"required\":[\"a\"]}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}}}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = tool_fn,
        .user = &user,
        .flags = MCP_HANDLER_INLINE,
    };
    assert_int_equal(mcp_server_add_tool_def(srv, &def), MCP_OK);
    mcp__tool *t = find_tool(srv, "add");
    assert_non_null(t);
    assert_ptr_equal(t->fn, tool_fn);
    assert_ptr_equal(t->user, &user);
    assert_int_equal(t->flags, MCP_HANDLER_INLINE);
    expect_json(t->listing,
                "{\"name\":\"add\",\"title\":\"Add\",\"description\":\"Adds two numbers\","
                "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                "\"number\"}},\"required\":[\"a\"]},\"outputSchema\":{\"type\":\"object\","
                "\"properties\":{\"sum\":{\"type\":\"number\"}}},\"annotations\":{"
                "\"readOnlyHint\":true}}");
    assert_non_null(t->output_schema);
    assert_null(find_tool(srv, "ad"));
    assert_null(find_tool(srv, "add "));
}

static void test_add_tool_without_schema_gets_an_empty_object_schema(void **state)
{
    mcp_server *srv = *state;
    assert_int_equal(mcp_server_add_tool(srv, "noargs", NULL, NULL, tool_fn, NULL), MCP_OK);
    mcp__tool *t = find_tool(srv, "noargs");
    assert_non_null(t);
    expect_json(t->input_schema, "{\"type\":\"object\",\"properties\":{}}");
    expect_json(t->listing,
                "{\"name\":\"noargs\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}");
    assert_null(t->output_schema);
}

static void test_add_tool_refuses_missing_fields_and_bad_json(void **state)
{
    mcp_server *srv = *state;
    assert_int_equal(mcp_server_add_tool(NULL, "a", NULL, NULL, tool_fn, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_add_tool(srv, NULL, NULL, NULL, tool_fn, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_add_tool(srv, "a", NULL, NULL, NULL, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_add_tool_def(srv, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_add_tool(srv, "a", NULL, "{\"type\":", tool_fn, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_add_tool(srv, "a", NULL, "[1]", tool_fn, NULL), MCP_EINVAL);
    mcp_tool_def bad_out = {.name = "a", .fn = tool_fn, .output_schema = "nope"};
    assert_int_equal(mcp_server_add_tool_def(srv, &bad_out), MCP_EINVAL);
    mcp_tool_def bad_ann = {.name = "a", .fn = tool_fn, .annotations = "3"};
    assert_int_equal(mcp_server_add_tool_def(srv, &bad_ann), MCP_EINVAL);
    assert_int_equal(srv->tools.len, 0);
    assert_null(find_tool(srv, "a"));
}

static void test_tool_defs_are_read_with_size_0_sizeof_or_a_later_release_size(void **state)
{
    mcp_server *srv = *state;
    mcp_tool_def def = {.name = "zero", .fn = tool_fn, .flags = MCP_HANDLER_INLINE};
    assert_int_equal(mcp_server_add_tool_def(srv, &def), MCP_OK);
    def.size = sizeof(mcp_tool_def);
    def.name = "full";
    assert_int_equal(mcp_server_add_tool_def(srv, &def), MCP_OK);
    /* A program built against a later header: its definition goes on past ours, with
     * fields this release knows nothing of and ignores. */
    const size_t later = sizeof(def) + 8 * sizeof(void *);
    unsigned char *buf = malloc(later);
    assert_non_null(buf);
    memset(buf, 0xa5, later);
    def.size = later;
    def.name = "later";
    memcpy(buf, &def, sizeof(def));
    assert_int_equal(mcp_server_add_tool_def(srv, (const mcp_tool_def *)buf), MCP_OK);
    free(buf);
    const char *names[] = {"zero", "full", "later"};
    for (size_t i = 0; i < 3; i++) {
        mcp__tool *t = find_tool(srv, names[i]);
        assert_non_null(t);
        assert_ptr_equal(t->fn, tool_fn);
        assert_int_equal(t->flags, MCP_HANDLER_INLINE);
    }
    expect_json(find_tool(srv, "later")->listing,
                "{\"name\":\"later\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}");
}

static void test_definitions_shorter_than_their_size_field_are_refused(void **state)
{
    mcp_server *srv = *state;
    for (size_t size = 1; size < sizeof(size_t); size++) {
        const mcp_tool_def tool = {.size = size, .name = "t", .fn = tool_fn};
        assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_EINVAL);
        const mcp_resource_def res = {
            .struct_size = size, .uri = "a://b", .name = "b", .fn = resource_fn};
        assert_int_equal(mcp_server_add_resource(srv, &res), MCP_EINVAL);
        const mcp_resource_template_def tpl = {
            .size = size, .uri_template = "a://{b}", .name = "b", .fn = resource_fn};
        assert_int_equal(mcp_server_add_resource_template(srv, &tpl), MCP_EINVAL);
        const mcp_prompt_def prompt = {.size = size, .name = "p", .fn = prompt_fn};
        assert_int_equal(mcp_server_add_prompt(srv, &prompt), MCP_EINVAL);
    }
    assert_int_equal(srv->tools.len + srv->resources.len + srv->templates.len + srv->prompts.len,
                     0);
}

static void test_add_tool_twice_is_refused_and_keeps_the_first(void **state)
{
    mcp_server *srv = *state;
    assert_int_equal(mcp_server_add_tool(srv, "t", "first", NULL, tool_fn, NULL), MCP_OK);
    assert_int_equal(mcp_server_add_tool(srv, "t", "second", NULL, other_tool_fn, NULL),
                     MCP_EEXIST);
    assert_int_equal(srv->tools.len, 1);
    mcp__tool *t = find_tool(srv, "t");
    assert_ptr_equal(t->fn, tool_fn);
    assert_string_equal(json_string_value(json_object_get(t->listing, "description")), "first");
}

static void test_remove_tool_removes_only_that_tool(void **state)
{
    mcp_server *srv = *state;
    char name[16];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        assert_int_equal(mcp_server_add_tool(srv, name, NULL, NULL, tool_fn, NULL), MCP_OK);
    }
    assert_int_equal(mcp_server_remove_tool(srv, "t5"), MCP_OK);
    assert_int_equal(mcp_server_remove_tool(srv, "t5"), MCP_ENOENT);
    assert_int_equal(mcp_server_remove_tool(srv, "nope"), MCP_ENOENT);
    assert_int_equal(mcp_server_remove_tool(srv, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_remove_tool(NULL, "t1"), MCP_EINVAL);
    assert_null(find_tool(srv, "t5"));
    assert_int_equal(srv->tools.len, 19);
    /* The others keep their registration order (pagination depends on it). */
    int expect = 0;
    for (size_t i = 0; i < srv->tools.len; i++, expect++) {
        if (expect == 5)
            expect++;
        snprintf(name, sizeof(name), "t%d", expect);
        assert_string_equal(((mcp__tool *)srv->tools.items[i])->name, name);
    }
    /* A removed name may be registered again. */
    assert_int_equal(mcp_server_add_tool(srv, "t5", NULL, NULL, other_tool_fn, NULL), MCP_OK);
    assert_ptr_equal(find_tool(srv, "t5")->fn, other_tool_fn);
}

typedef struct adder {
    mcp_server *srv;
    int base;
    int failures;
} adder;

static void add_many(void *arg)
{
    adder *a = arg;
    char name[32];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof(name), "w%d_%d", a->base, i);
        if (mcp_server_add_tool(a->srv, name, NULL, NULL, tool_fn, NULL) != MCP_OK)
            a->failures++;
        /* Everyone also races for one shared name: exactly one may win it. */
        if (i == 25 && mcp_server_add_tool(a->srv, "shared", NULL, NULL, tool_fn, NULL) == MCP_OK)
            a->failures += 1000;
    }
}

static void test_registration_from_several_threads_loses_nothing(void **state)
{
    mcp_server *srv = *state;
    uv_thread_t th[4];
    adder a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (adder){.srv = srv, .base = i};
        assert_int_equal(uv_thread_create(&th[i], add_many, &a[i]), 0);
    }
    int winners = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(uv_thread_join(&th[i]), 0);
        winners += a[i].failures / 1000;
        assert_int_equal(a[i].failures % 1000, 0);
    }
    assert_int_equal(winners, 1);
    assert_int_equal(srv->tools.len, 201);
    assert_non_null(find_tool(srv, "w3_49"));
    assert_non_null(find_tool(srv, "shared"));
}

/* ---- Resources, templates, prompts ---- */

static void test_add_resource_builds_the_listing_and_refuses_duplicates(void **state)
{
    mcp_server *srv = *state;
    mcp_resource_def def = {
        .struct_size = sizeof(mcp_resource_def),
        .uri = "file:///readme.md",
        .name = "readme",
        .title = "README",
        .description = "The readme",
        .mime_type = "text/markdown",
        .annotations = "{\"priority\":0.5}",
        .size = 1234,
        .fn = resource_fn,
    };
    assert_int_equal(mcp_server_add_resource(srv, &def), MCP_OK);
    assert_int_equal(mcp_server_add_resource(srv, &def), MCP_EEXIST);
    uv_mutex_lock(&srv->lock);
    mcp__resource *r = mcp__find_resource(srv, "file:///readme.md");
    mcp__resource *none = mcp__find_resource(srv, "file:///README.md");
    uv_mutex_unlock(&srv->lock);
    assert_non_null(r);
    assert_null(none);
    expect_json(r->listing, "{\"uri\":\"file:///readme.md\",\"name\":\"readme\",\"title\":"
                            "\"README\",\"description\":\"The readme\",\"mimeType\":"
                            "\"text/markdown\",\"annotations\":{\"priority\":0.5},\"size\":1234}");

    mcp_resource_def no_name = {.uri = "a://b", .fn = resource_fn};
    assert_int_equal(mcp_server_add_resource(srv, &no_name), MCP_EINVAL);
    mcp_resource_def bad_ann = {.uri = "a://b", .name = "b", .fn = resource_fn, .annotations = "{"};
    assert_int_equal(mcp_server_add_resource(srv, &bad_ann), MCP_EINVAL);
    assert_int_equal(mcp_server_add_resource(srv, NULL), MCP_EINVAL);

    assert_int_equal(mcp_server_remove_resource(srv, "file:///readme.md"), MCP_OK);
    assert_int_equal(mcp_server_remove_resource(srv, "file:///readme.md"), MCP_ENOENT);
    assert_int_equal(srv->resources.len, 0);
}

static void test_add_prompt_lists_arguments_and_remembers_the_required_ones(void **state)
{
    mcp_server *srv = *state;
    const mcp_prompt_arg args[] = {
        {.name = "topic", .description = "What about", .required = 1},
        {.name = "tone", .title = "Tone"},
        {.name = "length", .required = 1},
        {.name = NULL},
    };
    mcp_prompt_def def = {.name = "write", .description = "Writes", .args = args, .fn = prompt_fn};
    assert_int_equal(mcp_server_add_prompt(srv, &def), MCP_OK);
    assert_int_equal(mcp_server_add_prompt(srv, &def), MCP_EEXIST);
    uv_mutex_lock(&srv->lock);
    mcp__prompt *p = mcp__find_prompt(srv, "write");
    uv_mutex_unlock(&srv->lock);
    assert_non_null(p);
    expect_json(p->listing, "{\"name\":\"write\",\"description\":\"Writes\",\"arguments\":["
                            "{\"name\":\"topic\",\"description\":\"What about\",\"required\":true},"
                            "{\"name\":\"tone\",\"title\":\"Tone\",\"required\":false},"
                            "{\"name\":\"length\",\"required\":true}]}");
    expect_json(p->required, "[\"topic\",\"length\"]");

    mcp_prompt_def bare = {.size = sizeof(mcp_prompt_def), .name = "bare", .fn = prompt_fn};
    assert_int_equal(mcp_server_add_prompt(srv, &bare), MCP_OK);
    uv_mutex_lock(&srv->lock);
    p = mcp__find_prompt(srv, "bare");
    uv_mutex_unlock(&srv->lock);
    expect_json(p->listing, "{\"name\":\"bare\",\"arguments\":[]}");

    mcp_prompt_def no_fn = {.name = "x"};
    assert_int_equal(mcp_server_add_prompt(srv, &no_fn), MCP_EINVAL);
    assert_int_equal(mcp_server_remove_prompt(srv, "write"), MCP_OK);
    assert_int_equal(mcp_server_remove_prompt(srv, "write"), MCP_ENOENT);
    assert_int_equal(srv->prompts.len, 1);
}

static void add_template(mcp_server *srv, const char *tpl, void *user)
{
    mcp_resource_template_def def = {
        .uri_template = tpl, .name = tpl, .fn = resource_fn, .user = user};
    assert_int_equal(mcp_server_add_resource_template(srv, &def), MCP_OK);
}

static void test_add_template_builds_the_listing_and_refuses_duplicates(void **state)
{
    mcp_server *srv = *state;
    mcp_resource_template_def def = {.size = sizeof(mcp_resource_template_def),
                                     .uri_template = "file:///{path}",
                                     .name = "files",
                                     .mime_type = "text/plain",
                                     .fn = resource_fn};
    assert_int_equal(mcp_server_add_resource_template(srv, &def), MCP_OK);
    assert_int_equal(mcp_server_add_resource_template(srv, &def), MCP_EEXIST);
    def.name = NULL;
    def.uri_template = "other://{x}";
    assert_int_equal(mcp_server_add_resource_template(srv, &def), MCP_EINVAL);
    assert_int_equal(srv->templates.len, 1);
    expect_json(((mcp__template *)srv->templates.items[0])->listing,
                "{\"uriTemplate\":\"file:///{path}\",\"name\":\"files\","
                "\"mimeType\":\"text/plain\"}");
}

/* ---- Template matching (RFC 6570 level 1) ---- */

static void test_match_template_extracts_one_variable(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "file:///{path}", NULL);
    json_t *vars;
    mcp__template *t = match(srv, "file:///notes.txt", &vars);
    assert_non_null(t);
    assert_string_equal(t->uri_template, "file:///{path}");
    expect_json(vars, "{\"path\":\"notes.txt\"}");
    json_decref(vars);
}

static void test_match_template_extracts_several_variables(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "users://{id}/posts/{post}", NULL);
    json_t *vars;
    assert_non_null(match(srv, "users://42/posts/7", &vars));
    expect_json(vars, "{\"id\":\"42\",\"post\":\"7\"}");
    json_decref(vars);
}

static void test_match_template_variable_never_spans_a_slash(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "file:///{path}", NULL);
    add_template(srv, "users://{id}/posts/{post}", NULL);
    json_t *vars;
    assert_null(match(srv, "file:///a/b.txt", &vars));
    assert_null(match(srv, "users://42/posts/7/comments", &vars));
    assert_null(match(srv, "users://4/2/posts/7", &vars));
}

static void test_match_template_variable_is_never_empty(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "file:///{path}", NULL);
    add_template(srv, "users://{id}/posts/{post}", NULL);
    json_t *vars;
    assert_null(match(srv, "file:///", &vars));
    assert_null(match(srv, "users:///posts/7", &vars));
    assert_null(match(srv, "users://42/posts/", &vars));
}

static void test_match_template_literals_must_match_exactly(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "users://{id}/posts/{post}", NULL);
    add_template(srv, "static://fixed", NULL);
    json_t *vars;
    assert_null(match(srv, "users://42/post/7", &vars));
    assert_null(match(srv, "Users://42/posts/7", &vars));
    assert_null(match(srv, "users://42", &vars));
    assert_null(match(srv, "", &vars));
    assert_null(match(srv, "static://fixed2", &vars));
    assert_null(match(srv, "static://fixe", &vars));
    mcp__template *t = match(srv, "static://fixed", &vars);
    assert_non_null(t);
    expect_json(vars, "{}");
    json_decref(vars);
}

static void test_match_template_backtracks_over_a_separator_inside_a_value(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "x://{a}-{b}.json", NULL);
    json_t *vars;
    /* "{a}" takes the shortest value that lets the rest match. */
    assert_non_null(match(srv, "x://1-2-3.json", &vars));
    expect_json(vars, "{\"a\":\"1\",\"b\":\"2-3\"}");
    json_decref(vars);
    assert_non_null(match(srv, "x://v1.2-archive.tar.json", &vars));
    expect_json(vars, "{\"a\":\"v1.2\",\"b\":\"archive.tar\"}");
    json_decref(vars);
    assert_null(match(srv, "x://1-2.txt", &vars));
}

static void test_a_malformed_template_is_refused_and_matches_nothing(void **state)
{
    mcp_server *srv = *state;
    static const char *const bad[] = {"bad://{unclosed", "empty://{}", "x://{a,}",
                                      "x://{=a}",        "x://{a:0}",  "x://{a:x}",
                                      "x://}",           "x://{a{b}}", NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        mcp_resource_template_def def = {.uri_template = bad[i], .name = "bad", .fn = resource_fn};
        if (mcp_server_add_resource_template(srv, &def) != MCP_EINVAL)
            fail_msg("the template %s was taken", bad[i]);
        json_t *vars = json_object();
        assert_int_equal(mcp__uri_template_match(bad[i], "bad://x", vars, NULL), 0);
        json_decref(vars);
    }
    assert_int_equal(srv->templates.len, 0);
    add_template(srv, "t://{x}", NULL);
    assert_int_equal(mcp_server_remove_resource_template(srv, "t://{x}"), MCP_OK);
    assert_int_equal(mcp_server_remove_resource_template(srv, "t://{x}"), MCP_ENOENT);
    assert_int_equal(srv->templates.len, 0);
}

static void test_match_template_takes_the_first_registered_match(void **state)
{
    mcp_server *srv = *state;
    int generic, literal;
    add_template(srv, "db://{table}", &generic);
    add_template(srv, "db://users", &literal); /* a literal registered later */
    json_t *vars;
    mcp__template *t = match(srv, "db://users", &vars);
    assert_non_null(t);
    assert_ptr_equal(t->user, &generic);
    json_decref(vars);
    t = match(srv, "db://orders", &vars);
    assert_ptr_equal(t->user, &generic);
    expect_json(vars, "{\"table\":\"orders\"}");
    json_decref(vars);
}

static void test_match_template_with_no_templates_finds_nothing(void **state)
{
    mcp_server *srv = *state;
    json_t *vars;
    assert_null(match(srv, "file:///x", &vars));
}

static void test_match_template_splits_adjacent_variables_one_character_first(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "v://{major}{minor}/x", NULL);
    json_t *vars;
    assert_non_null(match(srv, "v://312/x", &vars));
    expect_json(vars, "{\"major\":\"3\",\"minor\":\"12\"}");
    json_decref(vars);
    /* One character is a whole UTF-8 sequence, never a part of one. */
    assert_non_null(match(srv, "v://\xc3\xa9t\xc3\xa9/x", &vars));
    expect_json(vars, "{\"major\":\"\xc3\xa9\",\"minor\":\"t\xc3\xa9\"}");
    json_decref(vars);
    assert_null(match(srv, "v://3/x", &vars));
}

static void test_match_template_places_a_literal_holding_a_slash_at_the_first_slash(void **state)
{
    mcp_server *srv = *state;
    add_template(srv, "repo://{owner}.git/{path}.md", NULL);
    json_t *vars;
    assert_non_null(match(srv, "repo://a.b.git/readme.v2.md", &vars));
    expect_json(vars, "{\"owner\":\"a.b\",\"path\":\"readme.v2\"}");
    json_decref(vars);
    /* "{owner}" cannot cross the '/', so ".git/" is where that '/' is. */
    assert_non_null(match(srv, "repo://a.git.git/b.md", &vars));
    expect_json(vars, "{\"owner\":\"a.git\",\"path\":\"b\"}");
    json_decref(vars);
    assert_null(match(srv, "repo://a.git.git/b.git/c.md", &vars));
    assert_null(match(srv, "repo://a/b.git/c.md", &vars));
    assert_null(match(srv, "repo://.git/c.md", &vars));
}

/*
 * The semantics the linear matcher keeps, written the slow way: every length of
 * each variable, shortest first, until the rest matches.
 */
static int backtracking_match(const char *tpl, const char *uri, json_t *vars)
{
    if (*tpl == '\0')
        return *uri == '\0';
    if (*tpl != '{')
        return *tpl == *uri && backtracking_match(tpl + 1, uri + 1, vars);
    const char *close = strchr(tpl, '}');
    size_t max = strcspn(uri, "/");
    for (size_t n = 1; n <= max; n++) {
        if (backtracking_match(close + 1, uri + n, vars)) {
            json_object_setn_new(vars, tpl + 1, (size_t)(close - tpl - 1), json_stringn(uri, n));
            return 1;
        }
    }
    return 0;
}

static void test_match_template_agrees_with_backtracking_on_random_inputs(void **state)
{
    (void)state;
    static const char alphabet[] = "ab-./";
    unsigned seed = 8;
    int matched = 0;
    for (int round = 0; round < 20000; round++) {
        /* A template of up to 4 variables (some adjacent) among short literals. */
        char tpl[64] = "", uri[64] = "";
        size_t tl = 0, ul = 0;
        int expand = rand_r(&seed) % 2; /* the URI an expansion of the template, or random */
        int nvars = 0;
        for (int part = 0; part < 7; part++) {
            if (rand_r(&seed) % 2 && nvars < 4) {
                tl += (size_t)snprintf(tpl + tl, sizeof(tpl) - tl, "{%c}", 'a' + nvars++);
                for (int n = 1 + rand_r(&seed) % 3; expand && n > 0; n--)
                    uri[ul++] = alphabet[rand_r(&seed) % 4]; /* no '/' */
            } else {
                for (int n = rand_r(&seed) % 3; n > 0; n--) {
                    char c = alphabet[rand_r(&seed) % 5];
                    tpl[tl++] = c;
                    if (expand)
                        uri[ul++] = c;
                }
            }
        }
        tpl[tl] = '\0';
        for (int n = rand_r(&seed) % 12; !expand && n > 0; n--)
            uri[ul++] = alphabet[rand_r(&seed) % 5];
        uri[ul] = '\0';

        json_t *want = json_object(), *got = json_object();
        assert_non_null(want);
        assert_non_null(got);
        int w = backtracking_match(tpl, uri, want);
        int g = mcp__uri_template_match(tpl, uri, got, NULL);
        if (g != w || (w && !json_equal(got, want))) {
            char *dw = json_dumps(want, JSON_SORT_KEYS), *dg = json_dumps(got, JSON_SORT_KEYS);
            fail_msg("template \"%s\", URI \"%s\": got %d %s, want %d %s", tpl, uri, g, dg, w, dw);
        }
        matched += w;
        json_decref(want);
        json_decref(got);
    }
    /* Enough of the rounds match for the comparison of values to mean something. */
    assert_true(matched > 2000);
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Matching takes at most 4 steps per character of the URI and of the template
 * (uri_template.h), and less than max_ms of CPU. The URI is head, then n copies
 * of fill, then tail.
 */
static void expect_linear_by(const char *tpl, size_t factor, const char *head, const char *fill,
                             size_t n, const char *tail, int want, double max_ms)
{
    size_t hl = strlen(head), fl = strlen(fill), tl = strlen(tail);
    size_t len = hl + n * fl + tl;
    char *uri = malloc(len + 1);
    assert_non_null(uri);
    memcpy(uri, head, hl);
    for (size_t i = 0; i < n; i++)
        memcpy(uri + hl + i * fl, fill, fl);
    memcpy(uri + hl + n * fl, tail, tl + 1);
    json_t *vars = json_object();
    assert_non_null(vars);
    size_t steps = 0;
    double start = thread_cpu_ms();
    int got = mcp__uri_template_match(tpl, uri, vars, &steps);
    double ms = thread_cpu_ms() - start;
    print_message("%s against %zu bytes: %d, %zu steps, %.3f ms\n", tpl, len, got, steps, ms);
    assert_int_equal(got, want);
    assert_true(steps <= factor * (len + strlen(tpl)));
    assert_true(ms < max_ms);
    json_decref(vars);
    free(uri);
}

static void expect_linear(const char *tpl, const char *head, const char *fill, size_t n,
                          const char *tail, int want, double max_ms)
{
    expect_linear_by(tpl, 4, head, fill, n, tail, want, max_ms);
}

/* Levels 2 to 4: within 8 steps per character times the expressions and one
 * (uri_template.h); the time only has to be sane (half a million list items are built
 * in one row: 0.5 s of CPU in the sanitizer build, measured). */
static void test_match_template_with_operators_is_linear_in_the_uri_length(void **state)
{
    (void)state;
    size_t mb = 1u << 20;
    expect_linear_by("x://{+a}-{+b}-{+c}-{+d}.json", 40, "x://", "-", mb, ".json", 1, 5000);
    expect_linear_by("x://{+a}-{+b}-{+c}-{+d}.json", 40, "x://", "-", mb, ".jsox", 0, 5000);
    expect_linear_by("x://{+a}-{+b}-{+c}-{+d}.json", 40, "x://", "a/", mb, "", 0, 5000);
    expect_linear_by("s{?q,lang}", 16, "s?q=", "a", mb, "&lang=en", 1, 5000);
    expect_linear_by("s{?q,lang}", 16, "s?", "q=a&", mb / 4, "", 1, 5000);
    expect_linear_by("r{/a}{/b}{/c}", 32, "r", "/", mb, "", 0, 5000);
    expect_linear_by("r{/p*}.md", 16, "r", "/x", mb / 2, ".md", 1, 5000);
    expect_linear_by("k://{+a}aaaaaaaab{+b}", 24, "k://", "a", mb, "bc", 1, 5000);
}

static void test_match_template_is_linear_in_the_uri_length(void **state)
{
    (void)state;
    /* The shape that took a backtracking matcher 38.5 s at 1,024 bytes, failing and
     * matching, at 2,048 bytes and at 1 MiB: well under 50 ms of CPU on the loop
     * thread, even in the sanitizer build. */
    const char *tpl = "x://{a}-{b}-{c}-{d}.json";
    static const size_t lengths[] = {2048, 1u << 20};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        size_t len = lengths[i];
        expect_linear(tpl, "x://", "-", len - 4, "", 0, 50);
        expect_linear(tpl, "x://", "-", len - 9, ".json", 1, 50);
        expect_linear(tpl, "x://", "-", len - 9, ".jsox", 0, 50);
        expect_linear(tpl, "x://", "a-", (len - 9) / 2, ".json", 1, 50);
        expect_linear(tpl, "x://", "a", len - 9, ".json", 0, 50);
        expect_linear(tpl, "x://1-2-", "a", len - 13, ".json", 0, 50);
    }
    /* A literal that almost occurs everywhere (a naive search would compare it
     * 100 times per character), longer than the matcher's table on the stack;
     * the step count is what tells, the time only has to be sane. */
    char lit_tpl[160] = "k://{a}";
    memset(lit_tpl + 7, 'a', 99);
    memcpy(lit_tpl + 106, "b{b}", 5);
    expect_linear(lit_tpl, "k://", "a", 1u << 20, "", 0, 250);
    expect_linear(lit_tpl, "k://", "a", 1u << 20, "bc", 1, 250);
    /* Literals holding a '/', in a deep path. */
    expect_linear("p://{a}x/{b}x/{c}", "p://", "x/", 1u << 19, "", 0, 50);
    expect_linear("p://{a}x/{b}x/{c}", "p://", "a", 1u << 20, "/", 0, 50);
    expect_linear("p://{a}x/{b}x/{c}", "p://1x/2x/", "3", 1u << 20, "", 1, 50);
}

/* ---- Broadcasts ---- */

static void test_list_changed_and_broadcasts_with_no_runtime_do_nothing(void **state)
{
    mcp_server *srv = *state;
    /* Registration changes broadcast list_changed; with nobody attached that must be a
     * harmless no-op (LSan checks the params are released). */
    assert_int_equal(mcp_server_add_tool(srv, "t", NULL, NULL, tool_fn, NULL), MCP_OK);
    assert_int_equal(mcp_server_remove_tool(srv, "t"), MCP_OK);
    mcp_resource_def r = {.uri = "a://b", .name = "b", .fn = resource_fn};
    assert_int_equal(mcp_server_add_resource(srv, &r), MCP_OK);
    assert_int_equal(mcp_server_remove_resource(srv, "a://b"), MCP_OK);
    mcp_prompt_def p = {.name = "p", .fn = prompt_fn};
    assert_int_equal(mcp_server_add_prompt(srv, &p), MCP_OK);
    assert_int_equal(mcp_server_remove_prompt(srv, "p"), MCP_OK);
    add_template(srv, "t://{x}", NULL);

    assert_int_equal(mcp_server_notify_resource_updated(srv, "a://b"), MCP_OK);
    assert_int_equal(mcp_server_log(srv, MCP_LOG_INFO, "test", json_string("hello")), MCP_OK);
    assert_int_equal(mcp_server_notify(srv, "notifications/custom", json_pack("{s:i}", "n", 1)),
                     MCP_OK);
    assert_int_equal(mcp_server_notify(srv, "notifications/custom", NULL), MCP_OK);

    assert_int_equal(mcp_server_notify_resource_updated(srv, NULL), MCP_EINVAL);
    assert_int_equal(mcp_server_notify_resource_updated(NULL, "a://b"), MCP_EINVAL);
    assert_int_equal(mcp_server_log(srv, (mcp_log_level)99, NULL, json_string("x")), MCP_EINVAL);
    assert_int_equal(mcp_server_log(NULL, MCP_LOG_INFO, NULL, json_string("x")), MCP_EINVAL);
    assert_int_equal(mcp_server_notify(srv, NULL, json_object()), MCP_EINVAL);
}

/* A session on a runtime whose transport records what it is asked to send. */
typedef struct capture {
    char *texts[64];
    size_t n;
} capture;

static int capture_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    capture *c = io;
    (void)flags;
    assert_int_equal(stream, MCP__STREAM_STANDALONE);
    assert_true(c->n < 64);
    if (text != NULL)
        c->texts[c->n++] = strndup(text, len);
    return MCP_OK;
}

static const mcp__session_io capture_io = {.send = capture_send};

/* Runs the loop until *n reaches want; every wait has a deadline. */
static void run_until_count(uv_loop_t *loop, const size_t *n, size_t want)
{
    uint64_t end = mcp__now_ms() + 5000;
    while (*n < want) {
        if (mcp__now_ms() > end)
            fail_msg("only %zu of %zu messages arrived", *n, want);
        uv_run(loop, UV_RUN_NOWAIT);
    }
}

/* Sends a marker through the same mailbox; once it arrives, every broadcast posted
 * before it has been delivered (the mailbox keeps posting order). */
static void flush_broadcasts(mcp_server *srv, uv_loop_t *loop, capture *c)
{
    size_t before = c->n;
    assert_int_equal(mcp_server_notify(srv, "notifications/marker", NULL), MCP_OK);
    run_until_count(loop, &c->n, before + 1);
}

static const char *method_of(const char *text)
{
    static char method[128];
    json_t *v = json_loads(text, 0, NULL);
    assert_non_null(v);
    snprintf(method, sizeof(method), "%s", json_string_value(json_object_get(v, "method")));
    json_decref(v);
    return method;
}

static void test_broadcasts_reach_initialized_sessions_by_subscription_and_level(void **state)
{
    mcp_server *srv = *state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    mcp__srt *rt = mcp__srt_new(srv, &loop);
    assert_non_null(rt);
    capture live = {0}, fresh = {0};
    mcp__session *s = mcp__session_new(rt, &capture_io, &live, NULL);
    mcp__session *uninit = mcp__session_new(rt, &capture_io, &fresh, NULL);
    assert_non_null(s);
    assert_non_null(uninit);
    s->initialized = 1;
    /* As initialize sets it when the server offers tools, resources and prompts. */
    s->declared = MCP__CAP_TOOLS | MCP__CAP_RESOURCES | MCP__CAP_PROMPTS;

    assert_int_equal(mcp_server_add_tool(srv, "t", NULL, NULL, tool_fn, NULL), MCP_OK);
    run_until_count(&loop, &live.n, 1);
    assert_string_equal(method_of(live.texts[0]), "notifications/tools/list_changed");

    /* Only the sessions subscribed to a URI hear that it was updated. */
    /* Sessions make their subscription set on their first subscribe. */
    if (s->subscriptions == NULL)
        s->subscriptions = json_object();
    json_object_set_new(s->subscriptions, "a://sub", json_true());
    assert_int_equal(mcp_server_notify_resource_updated(srv, "a://other"), MCP_OK);
    assert_int_equal(mcp_server_notify_resource_updated(srv, "a://sub"), MCP_OK);
    run_until_count(&loop, &live.n, 2);
    json_t *v = json_loads(live.texts[1], 0, NULL);
    assert_string_equal(json_string_value(json_object_get(v, "method")),
                        "notifications/resources/updated");
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "params"), "uri")),
                        "a://sub");
    json_decref(v);

    /* Logging follows the session's level. */
    s->level = MCP_LOG_WARNING;
    assert_int_equal(mcp_server_log(srv, MCP_LOG_INFO, NULL, json_string("quiet")), MCP_OK);
    assert_int_equal(mcp_server_log(srv, MCP_LOG_ERROR, "db", json_string("loud")), MCP_OK);
    run_until_count(&loop, &live.n, 3);
    v = json_loads(live.texts[2], 0, NULL);
    expect_json(json_object_get(v, "params"),
                "{\"level\":\"error\",\"logger\":\"db\",\"data\":\"loud\"}");
    json_decref(v);
    flush_broadcasts(srv, &loop, &live);
    assert_int_equal(live.n, 4);
    assert_string_equal(method_of(live.texts[3]), "notifications/marker");

    /* A session that has not finished initialize hears nothing. */
    assert_int_equal(fresh.n, 0);

    mcp__session_close(uninit);
    mcp__session_close(s);
    assert_false(mcp__srt_busy(rt));
    /* Closed and gone: a later broadcast finds no session and sends nothing. */
    assert_int_equal(mcp_server_notify(srv, "notifications/late", NULL), MCP_OK);
    mcp__srt_close(rt);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(live.n, 4);
    assert_null(srv->runtimes);
    for (size_t i = 0; i < live.n; i++)
        free(live.texts[i]);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_server_new_refuses_null_name_or_version),
        T(test_settings_check_their_ranges),
        T(test_add_tool_builds_the_listing_and_can_be_found),
        T(test_add_tool_without_schema_gets_an_empty_object_schema),
        T(test_add_tool_refuses_missing_fields_and_bad_json),
        T(test_tool_defs_are_read_with_size_0_sizeof_or_a_later_release_size),
        T(test_definitions_shorter_than_their_size_field_are_refused),
        T(test_add_tool_twice_is_refused_and_keeps_the_first),
        T(test_remove_tool_removes_only_that_tool),
        T(test_registration_from_several_threads_loses_nothing),
        T(test_add_resource_builds_the_listing_and_refuses_duplicates),
        T(test_add_prompt_lists_arguments_and_remembers_the_required_ones),
        T(test_add_template_builds_the_listing_and_refuses_duplicates),
        T(test_match_template_extracts_one_variable),
        T(test_match_template_extracts_several_variables),
        T(test_match_template_variable_never_spans_a_slash),
        T(test_match_template_variable_is_never_empty),
        T(test_match_template_literals_must_match_exactly),
        T(test_match_template_backtracks_over_a_separator_inside_a_value),
        T(test_a_malformed_template_is_refused_and_matches_nothing),
        T(test_match_template_takes_the_first_registered_match),
        T(test_match_template_with_no_templates_finds_nothing),
        T(test_match_template_splits_adjacent_variables_one_character_first),
        T(test_match_template_places_a_literal_holding_a_slash_at_the_first_slash),
        T(test_match_template_agrees_with_backtracking_on_random_inputs),
        T(test_match_template_is_linear_in_the_uri_length),
        T(test_match_template_with_operators_is_linear_in_the_uri_length),
        T(test_list_changed_and_broadcasts_with_no_runtime_do_nothing),
        T(test_broadcasts_reach_initialized_sessions_by_subscription_and_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
