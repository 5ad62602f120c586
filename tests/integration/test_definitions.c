/* SPDX-License-Identifier: MIT */
/*
 * Definitions carry everything the schema allows (revision 2026-07-28's Tool,
 * Resource, ResourceTemplate, Prompt and Implementation): a server sets every
 * member (title, description, annotations, _meta, icons; serverInfo's title,
 * description, websiteUrl and icons), and our HTTP client lists them in both eras
 * (initialize, and server/discover) and finds each member exactly as set; the
 * server reads the client's clientInfo the same way. Bad icons and _meta are
 * refused at registration. Over real 127.0.0.1 sockets; every wait has a deadline.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "inproc_host.h"

#define WAIT_MS 10000

#define ICONS                                                                                      \
    "[{\"src\":\"https://example.com/i.png\",\"mimeType\":\"image/png\",\"sizes\":[\"48x48\","     \
    "\"96x96\"],\"theme\":\"light\"},{\"src\":\"data:image/svg+xml;base64,PHN2Zz4=\","             \
    "\"sizes\":[\"any\"],\"theme\":\"dark\"}]"
#define META "{\"io.example/ui\":{\"resourceUri\":\"ui://x\",\"n\":[1,2]},\"k\":\"v\"}"
#define ANNOTATIONS "{\"readOnlyHint\":true,\"title\":\"Echo (annotated)\"}"
#define RES_ANNOTATIONS "{\"audience\":[\"user\"],\"priority\":0.5}"

/* What the client saw of serverInfo, kept by the client-side handler. */
static json_t *seen_client_info;
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;

static json_t *echo(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const json_t *info = mcp_ctx_client_info(ctx);
    pthread_mutex_lock(&seen_mu);
    json_decref(seen_client_info);
    seen_client_info = info != NULL ? json_deep_copy(info) : NULL;
    pthread_mutex_unlock(&seen_mu);
    return mcp_text_result("ok");
}

static json_t *read_res(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return mcp_resource_text(uri, "text/plain", "x");
}

static json_t *get_prompt(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return json_pack("{s:[]}", "messages");
}

static mcp_server *full_server(void)
{
    mcp_server *srv = mcp_server_new("defs", "1.2.3");
    assert_non_null(srv);
    mcp_implementation impl = {.size = sizeof(impl),
                               .title = "Definitions",
                               .description = "Every member a definition may have",
                               .website_url = "https://example.com/defs",
                               .icons = ICONS};
    assert_int_equal(mcp_server_set_implementation(srv, &impl), MCP_OK);
    mcp_tool_def tool = {.size = sizeof(tool),
                         .name = "echo",
                         .title = "Echo",
                         .description = "Says ok",
                         .input_schema = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
                                         "\"string\"}}}",
                         .output_schema = NULL,
                         .annotations = ANNOTATIONS,
                         .fn = echo,
                         .meta = META,
                         .icons = ICONS};
    assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_OK);
    mcp_resource_def res = {.struct_size = sizeof(res),
                            .uri = "test://one",
                            .name = "one",
                            .title = "One",
                            .description = "The first",
                            .mime_type = "text/plain",
                            .annotations = RES_ANNOTATIONS,
                            .size = 1,
                            .fn = read_res,
                            .meta = META,
                            .icons = ICONS};
    assert_int_equal(mcp_server_add_resource(srv, &res), MCP_OK);
    mcp_resource_template_def tpl = {.size = sizeof(tpl),
                                     .uri_template = "test://items/{id}",
                                     .name = "items",
                                     .title = "Items",
                                     .description = "Any item",
                                     .mime_type = "text/plain",
                                     .annotations = RES_ANNOTATIONS,
                                     .fn = read_res,
                                     .meta = META,
                                     .icons = ICONS};
    assert_int_equal(mcp_server_add_resource_template(srv, &tpl), MCP_OK);
    static const mcp_prompt_arg args[] = {
        {.name = "who", .title = "Who", .description = "Whom to greet", .required = 1}, {0}};
    mcp_prompt_def prompt = {.size = sizeof(prompt),
                             .name = "greet",
                             .title = "Greet",
                             .description = "Greets",
                             .args = args,
                             .fn = get_prompt,
                             .meta = META,
                             .icons = ICONS};
    assert_int_equal(mcp_server_add_prompt(srv, &prompt), MCP_OK);
    return srv;
}

/* Each member of want is in got, equal (json_equal): what was set is what is listed. */
static void assert_members(const json_t *got, const char *want_text, const char *what)
{
    json_error_t e;
    json_t *want = json_loads(want_text, 0, &e);
    assert_non_null(want);
    const char *key;
    json_t *v;
    json_object_foreach(want, key, v)
    {
        const json_t *g = json_object_get(got, key);
        if (!json_equal(g, v)) {
            char *gs = g != NULL ? json_dumps(g, JSON_COMPACT) : NULL;
            fail_msg("%s: member %s is %s", what, key, gs != NULL ? gs : "(absent)");
        }
    }
    json_decref(want);
}

static json_t *only(mcp_client *c, const char *method, const char *key)
{
    json_t *items = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_list_all(c, method, key, &items, &err), MCP_OK);
    assert_int_equal(json_array_size(items), 1);
    json_t *one = json_incref(json_array_get(items, 0));
    json_decref(items);
    return one;
}

static void check_era(const char *protocol)
{
    ih_host h;
    ih_start(&h, full_server());
    mcp_client *c = mcp_client_new("defs-client", "9.9.9");
    assert_non_null(c);
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    mcp_implementation ci = {.size = sizeof(ci),
                             .title = "Definitions client",
                             .description = "Checks",
                             .website_url = "https://example.com/client",
                             .icons = ICONS};
    assert_int_equal(mcp_client_set_implementation(c, &ci), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);

    /* serverInfo, member by member. */
    const json_t *info = mcp_client_server_info(c);
    assert_members(info,
                   "{\"name\":\"defs\",\"version\":\"1.2.3\",\"title\":\"Definitions\","
                   "\"description\":\"Every member a definition may have\","
                   "\"websiteUrl\":\"https://example.com/defs\",\"icons\":" ICONS "}",
                   "serverInfo");

    json_t *tool = only(c, "tools/list", "tools");
    assert_members(tool,
                   "{\"name\":\"echo\",\"title\":\"Echo\",\"description\":\"Says ok\","
                   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
                   "\"string\"}}},\"annotations\":" ANNOTATIONS ",\"_meta\":" META
                   ",\"icons\":" ICONS "}",
                   "tool");
    json_decref(tool);
    json_t *res = only(c, "resources/list", "resources");
    assert_members(res,
                   "{\"uri\":\"test://one\",\"name\":\"one\",\"title\":\"One\",\"description\":"
                   "\"The first\",\"mimeType\":\"text/plain\",\"annotations\":" RES_ANNOTATIONS
                   ",\"size\":1,\"_meta\":" META ",\"icons\":" ICONS "}",
                   "resource");
    json_decref(res);
    json_t *tpl = only(c, "resources/templates/list", "resourceTemplates");
    assert_members(tpl,
                   "{\"uriTemplate\":\"test://items/{id}\",\"name\":\"items\",\"title\":"
                   "\"Items\",\"description\":\"Any item\",\"mimeType\":\"text/plain\","
                   "\"annotations\":" RES_ANNOTATIONS ",\"_meta\":" META ",\"icons\":" ICONS "}",
                   "template");
    json_decref(tpl);
    json_t *prompt = only(c, "prompts/list", "prompts");
    assert_members(prompt,
                   "{\"name\":\"greet\",\"title\":\"Greet\",\"description\":\"Greets\","
                   "\"arguments\":[{\"name\":\"who\",\"title\":\"Who\",\"description\":"
                   "\"Whom to greet\",\"required\":true}],\"_meta\":" META ",\"icons\":" ICONS "}",
                   "prompt");
    json_decref(prompt);

    /* The client's side: the server's handler sees clientInfo as set. */
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_call_tool(c, "echo", json_object(), NULL, &result, &err), MCP_OK);
    json_decref(result);
    pthread_mutex_lock(&seen_mu);
    assert_non_null(seen_client_info);
    assert_members(seen_client_info,
                   "{\"name\":\"defs-client\",\"version\":\"9.9.9\",\"title\":\"Definitions "
                   "client\",\"description\":\"Checks\",\"websiteUrl\":"
                   "\"https://example.com/client\",\"icons\":" ICONS "}",
                   "clientInfo");
    json_decref(seen_client_info);
    seen_client_info = NULL;
    pthread_mutex_unlock(&seen_mu);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_every_member_listed_in_the_legacy_era(void **state)
{
    (void)state;
    check_era(MCP_PROTOCOL_2025_11_25);
}

static void test_every_member_listed_in_revision_2026_07_28(void **state)
{
    (void)state;
    check_era(MCP_PROTOCOL_2026_07_28);
}

static void test_bad_icons_and_meta_are_refused(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("bad", "1");
    static const char *const bad_icons[] = {
        "{}",                                                  /* not an array */
        "[{\"mimeType\":\"image/png\"}]",                      /* no src */
        "[{\"src\":\"javascript:alert(1)\"}]",                 /* a scheme a consumer could run */
        "[{\"src\":\"https://x/i.png\",\"sizes\":\"48x48\"}]", /* sizes not an array */
        "[{\"src\":\"https://x/i.png\",\"theme\":\"blue\"}]",  /* no such theme */
        "[{\"src\":\"https://x/i.png\",\"mimeType\":3}]",
        "not json",
    };
    for (size_t i = 0; i < sizeof(bad_icons) / sizeof(*bad_icons); i++) {
        mcp_tool_def t = {.size = sizeof(t), .name = "t", .fn = echo, .icons = bad_icons[i]};
        assert_int_equal(mcp_server_add_tool_def(srv, &t), MCP_EINVAL);
        mcp_implementation impl = {.size = sizeof(impl), .icons = bad_icons[i]};
        assert_int_equal(mcp_server_set_implementation(srv, &impl), MCP_EINVAL);
    }
    mcp_tool_def t = {.size = sizeof(t), .name = "t", .fn = echo, .meta = "[1]"};
    assert_int_equal(mcp_server_add_tool_def(srv, &t), MCP_EINVAL);
    mcp_prompt_def p = {.size = sizeof(p), .name = "p", .fn = get_prompt, .meta = "\"x\""};
    assert_int_equal(mcp_server_add_prompt(srv, &p), MCP_EINVAL);
    mcp_implementation impl = {.size = sizeof(impl), .website_url = "ftp://x"};
    assert_int_equal(mcp_server_set_implementation(srv, &impl), MCP_EINVAL);
    /* Nothing was registered by the refusals: the name is still free. */
    mcp_tool_def ok = {.size = sizeof(ok), .name = "t", .fn = echo, .icons = ICONS};
    assert_int_equal(mcp_server_add_tool_def(srv, &ok), MCP_OK);
    mcp_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_member_listed_in_the_legacy_era),
        cmocka_unit_test(test_every_member_listed_in_revision_2026_07_28),
        cmocka_unit_test(test_bad_icons_and_meta_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
