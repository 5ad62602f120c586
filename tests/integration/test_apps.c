/* SPDX-License-Identifier: MIT */
/*
 * MCP Apps helpers (mcp_server_add_app, mcp_server_add_app_tool,
 * mcp_ctx_client_supports_apps) seen by our client over Streamable HTTP in both eras:
 * the tool's _meta (both forms, visibility, the program's own members kept), the
 * view's listing and contents member by member, the extension declared, and the
 * client's declaration read by the handler; and the definitions refused.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "inproc_host.h"

#define WAIT_MS 10000
#define VIEW "ui://test/view.html"
#define HTML "<!DOCTYPE html><html><body><p id=\"x\">view</p></body></html>"
#define UI                                                                                         \
    "{\"csp\":{\"connectDomains\":[\"https://api.example.com\"]},\"permissions\":"                 \
    "{\"clipboardWrite\":{}},\"domain\":\"a.example\",\"prefersBorder\":false}"

static json_t *tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    return mcp_text_result(mcp_ctx_client_supports_apps(ctx) ? "apps" : "no apps");
}

static mcp_server *app_server(void)
{
    mcp_server *srv = mcp_server_new("apps", "1.0.0");
    mcp_app_def view = {.size = sizeof view,
                        .uri = VIEW,
                        .name = "view",
                        .title = "The view",
                        .description = "Shows things",
                        .html = HTML,
                        .ui = UI};
    assert_int_equal(mcp_server_add_app(srv, &view), MCP_OK);
    mcp_tool_def tool = {.size = sizeof tool,
                         .name = "shown",
                         .fn = tool_fn,
                         .flags = MCP_HANDLER_INLINE,
                         .meta = "{\"vendor/x\":1,\"ui\":{\"extra\":true}}"};
    assert_int_equal(mcp_server_add_app_tool(srv, &tool, VIEW, MCP_APP_VISIBLE_APP), MCP_OK);
    tool.name = "both";
    tool.meta = NULL;
    assert_int_equal(mcp_server_add_app_tool(srv, &tool, VIEW, 0), MCP_OK);
    return srv;
}

static json_t *request(mcp_client *c, const char *method, json_t *params)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, method, params, NULL, &result, &err);
    if (rc != MCP_OK)
        fail_msg("%s: %s %s", method, mcp_strerror(rc), err.message);
    return result;
}

static void expect_json(const json_t *got, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    assert_non_null(w);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got %s\nwant %s", g, want);
    }
    json_decref(w);
}

static const json_t *find(const json_t *items, const char *key, const char *value)
{
    size_t i;
    const json_t *it;
    json_array_foreach(items, i, it)
    {
        if (strcmp(json_string_value(json_object_get(it, key)), value) == 0)
            return it;
    }
    fail_msg("no item with %s %s", key, value);
    return NULL;
}

static const char *call_text(mcp_client *c)
{
    static char text[64];
    json_t *r = request(c, "tools/call", json_pack("{s:s}", "name", "shown"));
    snprintf(text, sizeof text, "%s",
             json_string_value(
                 json_object_get(json_array_get(json_object_get(r, "content"), 0), "text")));
    json_decref(r);
    return text;
}

static void seen_by_a_host(const char *protocol)
{
    ih_host h;
    ih_start(&h, app_server());
    mcp_client *c = mcp_client_new("apps-test", "1.0.0");
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    json_t *settings = json_pack("{s:[s]}", "mimeTypes", MCP_APPS_MIME_TYPE);
    assert_int_equal(mcp_client_set_extension(c, MCP_APPS_EXTENSION, settings), MCP_OK);
    json_decref(settings);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);
    expect_json(mcp_client_server_extension(c, MCP_APPS_EXTENSION), "{}");

    json_t *tools = request(c, "tools/list", NULL);
    expect_json(json_object_get(find(json_object_get(tools, "tools"), "name", "shown"), "_meta"),
                "{\"vendor/x\":1,\"ui\":{\"extra\":true,\"resourceUri\":\"" VIEW
                "\",\"visibility\":[\"app\"]},\"ui/resourceUri\":\"" VIEW "\"}");
    expect_json(json_object_get(find(json_object_get(tools, "tools"), "name", "both"), "_meta"),
                "{\"ui\":{\"resourceUri\":\"" VIEW "\"},\"ui/resourceUri\":\"" VIEW "\"}");
    json_decref(tools);

    json_t *list = request(c, "resources/list", NULL);
    expect_json(find(json_object_get(list, "resources"), "uri", VIEW),
                "{\"uri\":\"" VIEW "\",\"name\":\"view\",\"title\":\"The view\",\"description\":"
                "\"Shows things\",\"mimeType\":\"text/html;profile=mcp-app\",\"size\":59,"
                "\"_meta\":{\"ui\":" UI "}}");
    json_decref(list);
    json_t *read = request(c, "resources/read", json_pack("{s:s}", "uri", VIEW));
    expect_json(json_object_get(read, "contents"),
                "[{\"uri\":\"" VIEW "\",\"mimeType\":\"text/html;profile=mcp-app\",\"text\":"
                "\"<!DOCTYPE html><html><body><p id=\\\"x\\\">view</p></body></html>\","
                "\"_meta\":{\"ui\":" UI "}}]");
    json_decref(read);
    assert_string_equal(call_text(c), "apps");
    mcp_client_free(c);

    /* A client that declares the extension without the app MIME type, or not at all. */
    c = mcp_client_new("apps-test", "1.0.0");
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    settings = json_pack("{s:[s]}", "mimeTypes", "text/html");
    assert_int_equal(mcp_client_set_extension(c, MCP_APPS_EXTENSION, settings), MCP_OK);
    json_decref(settings);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);
    assert_string_equal(call_text(c), "no apps");
    mcp_client_free(c);
    c = mcp_client_new("apps-test", "1.0.0");
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);
    assert_string_equal(call_text(c), "no apps");
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_seen_by_a_host_2025_11_25(void **state)
{
    (void)state;
    seen_by_a_host("2025-11-25");
}

static void test_seen_by_a_host_2026_07_28(void **state)
{
    (void)state;
    seen_by_a_host(MCP_PROTOCOL_2026_07_28);
}

/* One read in revision 2026-07-28, then one in 2025-11-25: what the library adds to a
 * modern result (resultType, caching hints) must not stick to the next. */
static void test_each_read_its_own_result(void **state)
{
    (void)state;
    ih_host h;
    ih_start(&h, app_server());
    const char *const eras[] = {MCP_PROTOCOL_2026_07_28, "2025-11-25"};
    for (size_t i = 0; i < 2; i++) {
        mcp_client *c = mcp_client_new("apps-test", "1.0.0");
        assert_int_equal(mcp_client_set_protocol(c, eras[i]), MCP_OK);
        assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);
        json_t *read = request(c, "resources/read", json_pack("{s:s}", "uri", VIEW));
        if (i == 1) {
            assert_null(json_object_get(read, "resultType"));
            assert_null(json_object_get(read, "ttlMs"));
        }
        json_decref(read);
        mcp_client_free(c);
    }
    ih_stop(&h);
}

static void test_definitions_refused(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("apps", "1.0.0");
    mcp_app_def ok = {.size = sizeof ok, .uri = VIEW, .name = "v", .html = HTML};
    mcp_app_def d = ok;
    assert_int_equal(mcp_server_add_app(NULL, &ok), MCP_EINVAL);
    assert_int_equal(mcp_server_add_app(srv, NULL), MCP_EINVAL);
    d.uri = "https://example.com/view.html";
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    d = ok, d.uri = "ui://";
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    d = ok, d.html = NULL;
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    d = ok, d.html = "<p>\xff</p>";
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    d = ok, d.ui = "[1]";
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    d = ok, d.ui = "{";
    assert_int_equal(mcp_server_add_app(srv, &d), MCP_EINVAL);
    assert_int_equal(mcp_server_add_app(srv, &ok), MCP_OK);
    assert_int_equal(mcp_server_add_app(srv, &ok), MCP_EEXIST);

    mcp_tool_def t = {.size = sizeof t, .name = "t", .fn = tool_fn};
    assert_int_equal(mcp_server_add_app_tool(srv, &t, "https://x", 0), MCP_EINVAL);
    assert_int_equal(mcp_server_add_app_tool(srv, &t, NULL, 0), MCP_EINVAL);
    assert_int_equal(mcp_server_add_app_tool(srv, &t, VIEW, 4), MCP_EINVAL);
    t.meta = "{\"ui\":\"not an object\"}";
    assert_int_equal(mcp_server_add_app_tool(srv, &t, VIEW, 0), MCP_EINVAL);
    t.meta = "[]";
    assert_int_equal(mcp_server_add_app_tool(srv, &t, VIEW, 0), MCP_EINVAL);
    t.meta = NULL;
    assert_int_equal(mcp_server_add_app_tool(srv, &t, VIEW, 0), MCP_OK);
    assert_int_equal(mcp_server_add_app_tool(srv, &t, VIEW, 0), MCP_EEXIST);
    mcp_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seen_by_a_host_2025_11_25),
        cmocka_unit_test(test_seen_by_a_host_2026_07_28),
        cmocka_unit_test(test_each_read_its_own_result),
        cmocka_unit_test(test_definitions_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
