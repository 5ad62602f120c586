/* SPDX-License-Identifier: MIT */
/*
 * The open protocol, part one: capabilities chosen, extensions declared and read on
 * both sides, and methods of one's own, in both eras over real 127.0.0.1 sockets
 * (our server in this process, our HTTP client; raw HTTP where the client cannot say
 * what is checked):
 *   - a server's extensions and experimental capabilities reach the client
 *     (mcp_client_server_extension), a client's reach the handler
 *     (mcp_ctx_client_extension), and in revision 2026-07-28 a request's own _meta
 *     capabilities add to the client's instead of being overwritten; extension
 *     identifiers follow the schema's key rules;
 *   - the library's capabilities as chosen: tools offered with none registered, so a
 *     tool added later is announced (notifications/tools/list_changed in 2025-11-25,
 *     subscriptions/listen in 2026-07-28); logging, subscribe and completions turned
 *     off are not offered and their methods are -32601; listChanged off sends no
 *     list_changed (a marker notification sent after the change comes first);
 *   - methods of one's own: a request method answered by its handler, an error with
 *     data (URLElicitationRequiredError's shape), a result that is not an object,
 *     removal, the library's own names refused; Mcp-Name checked for a method that
 *     names one (raw HTTP); a server request of the client's own method answered by
 *     mcp_client_on_request's handler;
 *   - a handler reads why its request was cancelled (the client's reason; in
 *     2026-07-28 over HTTP, the stream's close); a completion handler gives total
 *     and hasMore; a client declares URL-mode elicitation and sampling with tools,
 *     and refuses a mode it did not declare (-32602) without calling its handler;
 *   - the client checks a tool's structuredContent against the outputSchema its
 *     tools/list gave (-32602 when it does not conform, -32600 when it is missing;
 *     not for isError results), and can be told not to;
 *   - RFC 6570 level-4 resource templates read over the wire (path segments, reserved
 *     expansion, queries in any order, path-style parameters), and removed.
 * Every wait has a deadline.
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
#include <time.h>
#include <uv.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "inproc_host.h"

#include "http_client.h"
#include "raw_server.h"

#define WAIT_MS 10000
#define MODERN "2026-07-28"
#define LEGACY "2025-11-25"
#define UI_EXT "io.modelcontextprotocol/ui"
#define UI_SETTINGS "{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}"
#define EXP "{\"acme-client\":{\"beta\":true}}"
#define URL_DATA                                                                                   \
    "{\"elicitations\":[{\"mode\":\"url\",\"elicitationId\":\"e-1\",\"url\":"                      \
    "\"https://example.com/connect\",\"message\":\"Connect your account\"}]}"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (v == NULL)
        fail_msg("bad JSON in the test: %s: %s", text, e.text);
    return v;
}

static void assert_json(const json_t *got, const char *want_text, const char *what)
{
    json_t *want = parse(want_text);
    if (!json_equal(got, want)) {
        char *g = got != NULL ? json_dumps(got, JSON_COMPACT) : NULL;
        fail_msg("%s is %s, not %s", what, g != NULL ? g : "(absent)", want_text);
    }
    json_decref(want);
}

/* ---- The host: a server on its own loop thread ---- */

static mcp_client *client_for(const char *protocol)
{
    mcp_client *c = mcp_client_new("ext-client", "1.0.0");
    assert_non_null(c);
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    return c;
}

static void connect_client(mcp_client *c, const ih_host *h)
{
    assert_int_equal(mcp_client_connect_http(c, h->url, NULL, WAIT_MS), MCP_OK);
}

/* ---- What a handler sees ---- */

/* The client's extensions as the handler reads them: {"ui": ..., "per": ...}. */
static json_t *seen_extensions(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const json_t *ui = mcp_ctx_client_extension(ctx, UI_EXT);
    const json_t *per = mcp_ctx_client_extension(ctx, "io.example/per-request");
    const json_t *exp = json_object_get(mcp_ctx_client_capabilities(ctx), "experimental");
    json_t *r = mcp_text_result("seen");
    json_object_set_new(r, "structuredContent",
                        json_pack("{s:O, s:O, s:O}", "ui", ui ? ui : json_null(), "per",
                                  per ? per : json_null(), "exp", exp ? exp : json_null()));
    return r;
}

static json_t *seen(mcp_client *c, json_t *meta)
{
    json_t *params = json_pack("{s:s, s:{}}", "name", "seen", "arguments");
    if (meta != NULL)
        json_object_set_new(params, "_meta", meta);
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, "tools/call", params, NULL, &result, &err);
    if (rc != MCP_OK)
        fail_msg("tools/call seen: %d %d %s", rc, err.code, err.message);
    json_t *sc = json_incref(json_object_get(result, "structuredContent"));
    json_decref(result);
    return sc;
}

static void extensions_both_ways(const char *protocol)
{
    mcp_server *srv = mcp_server_new("ext", "1.0.0");
    assert_non_null(srv);
    json_t *widgets = parse("{\"v\":2,\"kinds\":[\"a\",\"b\"]}");
    assert_int_equal(mcp_server_set_extension(srv, "io.example/widgets", widgets), MCP_OK);
    json_decref(widgets);
    assert_int_equal(mcp_server_set_extension(srv, "io.example/empty", NULL), MCP_OK);
    assert_int_equal(mcp_server_set_extension(srv, "io.example/gone", NULL), MCP_OK);
    assert_int_equal(mcp_server_remove_extension(srv, "io.example/gone"), MCP_OK);
    assert_int_equal(mcp_server_remove_extension(srv, "io.example/gone"), MCP_ENOENT);
    json_t *on = parse("{\"on\":true}");
    assert_int_equal(mcp_server_set_experimental(srv, "acme", on), MCP_OK);
    json_decref(on);
    mcp_tool_def tool = {.size = sizeof(tool), .name = "seen", .fn = seen_extensions};
    assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_OK);
    ih_host h;
    ih_start(&h, srv);

    mcp_client *c = client_for(protocol);
    json_t *ui = parse(UI_SETTINGS);
    assert_int_equal(mcp_client_set_extension(c, UI_EXT, ui), MCP_OK);
    json_decref(ui);
    json_t *exp = parse(EXP);
    assert_int_equal(
        mcp_client_set_experimental(c, "acme-client", json_object_get(exp, "acme-client")), MCP_OK);
    assert_int_equal(mcp_client_set_experimental(c, "gone", exp), MCP_OK);
    assert_int_equal(mcp_client_set_experimental(c, "gone", NULL), MCP_OK);
    assert_int_equal(mcp_client_set_experimental(c, "\xff\xfe", exp), MCP_EINVAL);
    json_decref(exp);
    connect_client(c, &h);

    assert_json(mcp_client_server_extension(c, "io.example/widgets"),
                "{\"v\":2,\"kinds\":[\"a\",\"b\"]}", "the server's widgets extension");
    assert_json(mcp_client_server_extension(c, "io.example/empty"), "{}",
                "the server's empty extension");
    assert_null(mcp_client_server_extension(c, "io.example/gone"));
    assert_json(json_object_get(mcp_client_server_capabilities(c), "experimental"),
                "{\"acme\":{\"on\":true}}", "the server's experimental capabilities");

    json_t *sc = seen(c, NULL);
    assert_json(sc, "{\"ui\":" UI_SETTINGS ",\"per\":null,\"exp\":" EXP "}",
                "what the handler saw");
    json_decref(sc);
    if (strcmp(protocol, MODERN) == 0) {
        /* A request's own capabilities add to the client's (the UI extension stays). */
        json_t *meta = json_pack("{s:{s:{s:{s:i}}}}", "io.modelcontextprotocol/clientCapabilities",
                                 "extensions", "io.example/per-request", "x", 1);
        sc = seen(c, meta);
        assert_json(sc, "{\"ui\":" UI_SETTINGS ",\"per\":{\"x\":1},\"exp\":" EXP "}",
                    "what the handler saw of a request with its own capabilities");
        json_decref(sc);
    }
    /* Removed on the client: the next request says so in this revision; a legacy
     * session keeps what its initialize declared. */
    assert_int_equal(mcp_client_remove_extension(c, UI_EXT), MCP_OK);
    sc = seen(c, NULL);
    if (strcmp(protocol, MODERN) == 0)
        assert_json(sc, "{\"ui\":null,\"per\":null,\"exp\":" EXP "}",
                    "what the handler saw after the removal");
    else
        assert_json(sc, "{\"ui\":" UI_SETTINGS ",\"per\":null,\"exp\":" EXP "}",
                    "what the handler saw after the removal, in the session of initialize");
    json_decref(sc);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_extensions_both_ways_legacy(void **state)
{
    (void)state;
    extensions_both_ways(LEGACY);
}

static void test_extensions_both_ways_2026_07_28(void **state)
{
    (void)state;
    extensions_both_ways(MODERN);
}

static void test_extension_identifiers_follow_the_key_rules(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("ids", "1");
    mcp_client *c = mcp_client_new("ids", "1");
    static const char *const good[] = {UI_EXT, "com.example-co/a_b.c", "x/y", "a1.b2/9",
                                       "io.modelcontextprotocol/oauth-client-credentials"};
    static const char *const bad[] = {"",      "noprefix", "/x",    "a./x",       ".a/x",   "1a/x",
                                      "a-/x",  "a/-x",     "a/x-",  "a/",         "a..b/x", "a/x y",
                                      "a b/x", "a/x/y",    "a_b/x", "a/\xc3\xa9", NULL};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (mcp_server_set_extension(srv, good[i], NULL) != MCP_OK)
            fail_msg("the server refused the identifier %s", good[i]);
        if (mcp_client_set_extension(c, good[i], NULL) != MCP_OK)
            fail_msg("the client refused the identifier %s", good[i]);
    }
    for (size_t i = 0; bad[i] != NULL; i++) {
        if (mcp_server_set_extension(srv, bad[i], NULL) != MCP_EINVAL)
            fail_msg("the server took the identifier \"%s\"", bad[i]);
        if (mcp_client_set_extension(c, bad[i], NULL) != MCP_EINVAL)
            fail_msg("the client took the identifier \"%s\"", bad[i]);
    }
    char longest[300];
    memset(longest, 'a', sizeof(longest));
    longest[1] = '/';
    longest[256] = '\0';
    assert_int_equal(mcp_server_set_extension(srv, longest, NULL), MCP_EINVAL);
    longest[255] = '\0';
    assert_int_equal(mcp_server_set_extension(srv, longest, NULL), MCP_OK);
    json_t *arr = json_array();
    assert_int_equal(mcp_server_set_extension(srv, "a/b", arr), MCP_EINVAL);
    assert_int_equal(mcp_client_set_extension(c, "a/b", arr), MCP_EINVAL);
    json_decref(arr);
    mcp_client_free(c);
    mcp_server_free(srv);
}

/* ---- Capabilities chosen ---- */

/* What the client heard, with a deadline to wait on. */
typedef struct heard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    json_t *methods; /* array of method names, in order */
    json_t *ack;     /* a listen's acknowledgment */
} heard;

static void heard_init(heard *hd)
{
    pthread_mutex_init(&hd->mu, NULL);
    pthread_cond_init(&hd->cv, NULL);
    hd->methods = json_array();
    hd->ack = NULL;
}

static void heard_free(heard *hd)
{
    json_decref(hd->methods);
    json_decref(hd->ack);
    pthread_cond_destroy(&hd->cv);
    pthread_mutex_destroy(&hd->mu);
}

static void heard_add(heard *hd, const char *method)
{
    pthread_mutex_lock(&hd->mu);
    json_array_append_new(hd->methods, json_string(method));
    pthread_cond_broadcast(&hd->cv);
    pthread_mutex_unlock(&hd->mu);
}

/* Waits for method; returns its index in what was heard. */
static size_t heard_wait(heard *hd, const char *method)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&hd->mu);
    for (;;) {
        size_t i;
        json_t *m;
        json_array_foreach(hd->methods, i, m)
        {
            if (strcmp(json_string_value(m), method) == 0) {
                pthread_mutex_unlock(&hd->mu);
                return i;
            }
        }
        if (pthread_cond_timedwait(&hd->cv, &hd->mu, &until) != 0) {
            pthread_mutex_unlock(&hd->mu);
            fail_msg("no %s within %d ms", method, WAIT_MS);
        }
    }
}

static int heard_has(heard *hd, const char *method)
{
    pthread_mutex_lock(&hd->mu);
    int found = 0;
    size_t i;
    json_t *m;
    json_array_foreach(hd->methods, i, m) found |= strcmp(json_string_value(m), method) == 0;
    pthread_mutex_unlock(&hd->mu);
    return found;
}

static void on_note(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c, (void)params;
    heard_add(user, method);
}

static void on_listen(mcp_client *c, const mcp_listen_event *ev, void *user)
{
    (void)c;
    heard *hd = user;
    if (ev->kind == MCP_LISTEN_ACKNOWLEDGED) {
        pthread_mutex_lock(&hd->mu);
        json_decref(hd->ack);
        hd->ack = json_deep_copy(json_object_get(ev->params, "notifications"));
        pthread_mutex_unlock(&hd->mu);
        heard_add(hd, "(acknowledged)");
    } else if (ev->kind == MCP_LISTEN_NOTIFICATION) {
        heard_add(hd, ev->method);
    }
}

static json_t *ok_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return mcp_text_result("ok");
}

static json_t *read_res(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return mcp_resource_text(uri, "text/plain", "x");
}

static json_t *complete(mcp_ctx *ctx, const json_t *ref, const char *arg, const char *value,
                        const json_t *context, void *user)
{
    (void)ctx, (void)ref, (void)arg, (void)value, (void)context, (void)user;
    return json_pack("[s]", "x");
}

static void expect_rpc_error(mcp_client *c, const char *method, json_t *params, int code)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, method, params, NULL, &result, &err);
    if (rc != MCP_ERPC || err.code != code)
        fail_msg("%s: %d (code %d, %s), expected the error %d", method, rc, err.code, err.message,
                 code);
    json_decref(result);
    mcp_rpc_error_clear(&err);
}

static void add_tool(mcp_server *srv, const char *name)
{
    mcp_tool_def tool = {.size = sizeof(tool), .name = name, .fn = ok_tool};
    assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_OK);
}

static void capabilities_chosen(const char *protocol)
{
    mcp_server *srv = mcp_server_new("caps", "1.0.0");
    assert_non_null(srv);
    mcp_resource_def res = {
        .struct_size = sizeof(res), .uri = "test://one", .name = "one", .fn = read_res};
    assert_int_equal(mcp_server_add_resource(srv, &res), MCP_OK);
    assert_int_equal(mcp_server_set_completion(srv, complete, NULL), MCP_OK);
    mcp_server_caps caps = {.size = sizeof(caps),
                            .tools = MCP_CAP_ON,
                            .logging = MCP_CAP_OFF,
                            .subscribe = MCP_CAP_OFF,
                            .completions = MCP_CAP_OFF};
    assert_int_equal(mcp_server_set_caps(srv, &caps), MCP_OK);
    mcp_server_caps wrong = {.size = sizeof(wrong), .logging = (mcp_cap)7};
    assert_int_equal(mcp_server_set_caps(srv, &wrong), MCP_EINVAL);
    ih_host h;
    ih_start(&h, srv);

    heard hd;
    heard_init(&hd);
    mcp_client *c = client_for(protocol);
    assert_int_equal(mcp_client_on_notification(c, on_note, &hd), MCP_OK);
    connect_client(c, &h);
    /* Tools offered with none registered; no logging, subscribe, completions or prompts. */
    assert_json(mcp_client_server_capabilities(c),
                "{\"tools\":{\"listChanged\":true},\"resources\":{\"listChanged\":true}}",
                "the capabilities");
    if (strcmp(protocol, LEGACY) == 0) {
        expect_rpc_error(c, "logging/setLevel", json_pack("{s:s}", "level", "debug"),
                         MCP_RPC_METHOD_NOT_FOUND);
        expect_rpc_error(c, "resources/subscribe", json_pack("{s:s}", "uri", "test://one"),
                         MCP_RPC_METHOD_NOT_FOUND);
    }
    expect_rpc_error(c, "completion/complete",
                     json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "ref", "type", "ref/resource", "uri",
                               "test://one", "argument", "name", "a", "value", "b"),
                     MCP_RPC_METHOD_NOT_FOUND);

    /* A tool added after the session began is announced, as the capabilities promised. */
    long long sub = 0;
    if (strcmp(protocol, MODERN) == 0) {
        mcp_listen_filter f = {.size = sizeof(f), .tools_list_changed = 1};
        assert_int_equal(mcp_client_listen(c, &f, on_listen, &hd, &sub), MCP_OK);
        heard_wait(&hd, "(acknowledged)");
        pthread_mutex_lock(&hd.mu);
        assert_json(hd.ack, "{\"toolsListChanged\":true}", "the listen's acknowledgment");
        pthread_mutex_unlock(&hd.mu);
    } else {
        /* The standalone stream is open once a notification sent now arrives. */
        assert_int_equal(mcp_server_notify(srv, "notifications/test/marker0", NULL), MCP_OK);
        heard_wait(&hd, "notifications/test/marker0");
    }
    add_tool(srv, "late");
    heard_wait(&hd, "notifications/tools/list_changed");
    json_t *tools = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_list_all(c, "tools/list", "tools", &tools, &err), MCP_OK);
    assert_int_equal(json_array_size(tools), 1);
    json_decref(tools);
    /* Logging off: a log message goes nowhere, and says MCP_OK (a marker sent after it
     * the same way comes; the log message would have come before it). */
    if (strcmp(protocol, LEGACY) == 0) {
        assert_int_equal(mcp_server_log(srv, MCP_LOG_EMERGENCY, "t", json_string("x")), MCP_OK);
        assert_int_equal(mcp_server_notify(srv, "notifications/test/marker1", NULL), MCP_OK);
        heard_wait(&hd, "notifications/test/marker1");
        assert_false(heard_has(&hd, "notifications/message"));
    }
    if (sub != 0)
        mcp_client_cancel(c, sub, NULL);
    mcp_client_free(c);
    heard_free(&hd);
    ih_stop(&h);
}

static void test_capabilities_chosen_legacy(void **state)
{
    (void)state;
    capabilities_chosen(LEGACY);
}

static void test_capabilities_chosen_2026_07_28(void **state)
{
    (void)state;
    capabilities_chosen(MODERN);
}

static void test_list_changed_off_sends_none(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("quiet", "1.0.0");
    assert_non_null(srv);
    add_tool(srv, "first");
    mcp_server_caps caps = {.size = sizeof(caps), .list_changed = MCP_CAP_OFF};
    assert_int_equal(mcp_server_set_caps(srv, &caps), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    heard hd;
    heard_init(&hd);
    mcp_client *c = client_for(LEGACY);
    assert_int_equal(mcp_client_on_notification(c, on_note, &hd), MCP_OK);
    connect_client(c, &h);
    assert_json(json_object_get(mcp_client_server_capabilities(c), "tools"), "{}",
                "tools without listChanged");
    assert_int_equal(mcp_server_notify(srv, "notifications/test/marker0", NULL), MCP_OK);
    heard_wait(&hd, "notifications/test/marker0");
    add_tool(srv, "second");
    /* Sent after the change, on the same stream: once it is here, a list_changed
     * would have been too. */
    assert_int_equal(mcp_server_notify(srv, "notifications/test/marker1", NULL), MCP_OK);
    heard_wait(&hd, "notifications/test/marker1");
    assert_false(heard_has(&hd, "notifications/tools/list_changed"));
    mcp_client_free(c);
    heard_free(&hd);
    ih_stop(&h);
}

/* ---- Methods of one's own ---- */

static json_t *sum(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)ctx, (void)user;
    return json_pack("{s:I}", "sum",
                     json_integer_value(json_object_get(params, "a")) +
                         json_integer_value(json_object_get(params, "b")));
}

static json_t *needs_url(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)params, (void)user;
    json_error_t e;
    mcp_ctx_set_error_data(ctx, -32042, json_loads(URL_DATA, 0, &e),
                           "This request requires more information.");
    return NULL;
}

static json_t *not_object(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)ctx, (void)params, (void)user;
    return json_pack("[i]", 1);
}

static json_t *task_get(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)ctx, (void)user;
    return json_pack("{s:O}", "taskId", json_object_get(params, "taskId"));
}

/* A tool that asks the client a question of the client's own method. */
static json_t *ask_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_request(ctx, "acme/confirm", json_pack("{s:s}", "q", "proceed?"), WAIT_MS,
                             &result, &err);
    if (rc != MCP_OK) {
        mcp_ctx_set_error(ctx, -32603, "acme/confirm: %d %s", rc, err.message);
        mcp_rpc_error_clear(&err);
        return NULL;
    }
    const char *a = json_string_value(json_object_get(result, "answer"));
    json_t *r = mcp_text_result(a != NULL ? a : "(none)");
    json_decref(result);
    return r;
}

static json_t *confirm(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err, (void)user;
    const char *q = json_string_value(json_object_get(params, "q"));
    return json_pack("{s:s+}", "answer", "yes to ", q != NULL ? q : "");
}

static mcp_server *methods_server(void)
{
    mcp_server *srv = mcp_server_new("methods", "1.0.0");
    assert_non_null(srv);
    mcp_method_def d = {.size = sizeof(d), .method = "acme/sum", .fn = sum};
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_OK);
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_EEXIST);
    d.method = "acme/needs-url";
    d.fn = needs_url;
    d.flags = MCP_HANDLER_INLINE;
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_OK);
    d.method = "acme/not-object";
    d.fn = not_object;
    d.flags = 0;
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_OK);
    d.method = "acme/removed";
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_OK);
    assert_int_equal(mcp_server_remove_method(srv, "acme/removed"), MCP_OK);
    assert_int_equal(mcp_server_remove_method(srv, "acme/removed"), MCP_ENOENT);
    d.method = "tasks/get";
    d.fn = task_get;
    d.name_param = "taskId";
    assert_int_equal(mcp_server_add_method(srv, &d), MCP_OK);
    d.name_param = NULL;
    static const char *const refused[] = {"tools/call",         "tools/anything",
                                          "resources/read",     "prompts/x",
                                          "initialize",         "ping",
                                          "server/discover",    "subscriptions/listen",
                                          "logging/setLevel",   "completion/complete",
                                          "notifications/acme", "rpc.discover",
                                          "has space",          "",
                                          "caf\xc3\xa9",        NULL};
    for (size_t i = 0; refused[i] != NULL; i++) {
        d.method = refused[i];
        if (mcp_server_add_method(srv, &d) != MCP_EINVAL)
            fail_msg("the method \"%s\" was taken", refused[i]);
    }
    mcp_tool_def tool = {.size = sizeof(tool), .name = "ask", .fn = ask_tool};
    assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_OK);
    return srv;
}

static void methods_of_ones_own(const char *protocol)
{
    ih_host h;
    ih_start(&h, methods_server());
    mcp_client *c = client_for(protocol);
    assert_int_equal(mcp_client_on_request(c, "acme/confirm", confirm, NULL), MCP_OK);
    assert_int_equal(mcp_client_on_request(c, "sampling/createMessage", confirm, NULL), MCP_EINVAL);
    assert_int_equal(mcp_client_on_request(c, "ping", confirm, NULL), MCP_EINVAL);
    connect_client(c, &h);
    assert_int_equal(mcp_client_on_request(c, "acme/other", confirm, NULL), MCP_ESTATE);

    json_t *result = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_request(c, "acme/sum", json_pack("{s:i, s:i}", "a", 2, "b", 40),
                                        NULL, &result, &err),
                     MCP_OK);
    assert_int_equal(json_integer_value(json_object_get(result, "sum")), 42);
    json_decref(result);
    result = NULL;

    /* An error with data, as the handler set it. */
    assert_int_equal(mcp_client_request(c, "acme/needs-url", NULL, NULL, &result, &err), MCP_ERPC);
    assert_int_equal(err.code, -32042);
    assert_string_equal(err.message, "This request requires more information.");
    assert_json(err.data, URL_DATA, "the error's data");
    mcp_rpc_error_clear(&err);

    expect_rpc_error(c, "acme/not-object", NULL, MCP_RPC_INTERNAL_ERROR);
    assert_int_equal(mcp_client_request(c, "tasks/get", json_pack("{s:s}", "taskId", "t-9"), NULL,
                                        &result, &err),
                     MCP_OK);
    assert_string_equal(json_string_value(json_object_get(result, "taskId")), "t-9");
    json_decref(result);
    result = NULL;
    expect_rpc_error(c, "tasks/get", json_pack("{s:i}", "taskId", 9), MCP_RPC_INVALID_PARAMS);
    expect_rpc_error(c, "acme/removed", NULL, MCP_RPC_METHOD_NOT_FOUND);

    if (strcmp(protocol, LEGACY) == 0) {
        /* A server request of the client's own method, answered by its handler. */
        assert_int_equal(mcp_client_call_tool(c, "ask", json_object(), NULL, &result, &err),
                         MCP_OK);
        const char *text = json_string_value(
            json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
        assert_non_null(text);
        assert_string_equal(text, "yes to proceed?");
        json_decref(result);
    }
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_methods_of_ones_own_legacy(void **state)
{
    (void)state;
    methods_of_ones_own(LEGACY);
}

static void test_methods_of_ones_own_2026_07_28(void **state)
{
    (void)state;
    methods_of_ones_own(MODERN);
}

/* A 2026-07-28 request of tasks/get over raw HTTP whose taskId is task_id (JSON text),
 * with the Mcp-Name given (NULL: none). */
static void raw_task_get(int port, const char *task_id, const char *mcp_name, hc_response *r)
{
    char body[600];
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tasks/get\",\"params\":{\"taskId\":%s,"
             "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" MODERN "\","
             "\"io.modelcontextprotocol/clientCapabilities\":{},"
             "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}}",
             task_id);
    char headers[512];
    snprintf(headers, sizeof(headers),
             "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
             "MCP-Protocol-Version: " MODERN "\r\nMcp-Method: tasks/get\r\n%s%s%s",
             mcp_name ? "Mcp-Name: " : "", mcp_name ? mcp_name : "", mcp_name ? "\r\n" : "");
    memset(r, 0, sizeof(*r));
    assert_int_equal(hc_request(port, "POST", "/mcp", headers, body, r, WAIT_MS), 0);
}

static void test_mcp_name_is_checked_for_a_method_that_names_one(void **state)
{
    (void)state;
    ih_host h;
    ih_start(&h, methods_server());
    hc_response r;
    /* A header that says another name than the body: refused before the handler. */
    raw_task_get(h.port, "\"t-1\"", "t-2", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "-32020"));
    assert_non_null(strstr(r.body, "does not match"));
    hc_response_free(&r);
    /* The member the header would carry must be a string, header or none. */
    raw_task_get(h.port, "[\"t-1\"]", "t-1", &r);
    assert_int_equal(r.status, 200); /* a JSON-RPC error of its own, as invalid params are */
    assert_non_null(strstr(r.body, "-32602"));
    hc_response_free(&r);
    raw_task_get(h.port, "null", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "-32602"));
    hc_response_free(&r);
    /* The same name, or none (the core protocol asks Mcp-Name of its own methods only). */
    raw_task_get(h.port, "\"t-1\"", "t-1", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"taskId\":\"t-1\""));
    hc_response_free(&r);
    raw_task_get(h.port, "\"t-1\"", NULL, &r);
    assert_int_equal(r.status, 200);
    hc_response_free(&r);
    ih_stop(&h);
}

/* ---- Part of the request's life: cancellation reasons, completion totals ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started;
    char reason[600];
    int ended;
    int early_reason; /* a reason before the cancellation */
} waiting = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, "", 0, 0};

static json_t *wait_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    /* Read before the test is told to cancel (no cmocka assertion off the test's thread). */
    int early = mcp_ctx_cancel_reason(ctx) != NULL;
    pthread_mutex_lock(&waiting.mu);
    waiting.early_reason = early;
    waiting.started = 1;
    pthread_cond_broadcast(&waiting.cv);
    pthread_mutex_unlock(&waiting.mu);
    for (int i = 0; i < 100 && mcp_ctx_sleep(ctx, 1000) == MCP_OK; i++)
        ;
    const char *why = mcp_ctx_cancel_reason(ctx);
    pthread_mutex_lock(&waiting.mu);
    snprintf(waiting.reason, sizeof(waiting.reason), "%s", why != NULL ? why : "(none)");
    waiting.ended = 1;
    pthread_cond_broadcast(&waiting.cv);
    pthread_mutex_unlock(&waiting.mu);
    return NULL;
}

/* Waits until *flag (under waiting.mu) is set. */
static void waiting_for(const int *flag, const char *what)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&waiting.mu);
    while (!*flag)
        if (pthread_cond_timedwait(&waiting.cv, &waiting.mu, &until) != 0) {
            pthread_mutex_unlock(&waiting.mu);
            fail_msg("%s: not within %d ms", what, WAIT_MS);
        }
    pthread_mutex_unlock(&waiting.mu);
}

static void ignore_response(mcp_client *c, int status, const json_t *result,
                            const mcp_rpc_error *err, void *user)
{
    (void)c, (void)status, (void)result, (void)err, (void)user;
}

static void cancel_reason(const char *protocol, const char *want)
{
    mcp_server *srv = mcp_server_new("cancel", "1.0.0");
    assert_non_null(srv);
    mcp_tool_def tool = {.size = sizeof(tool), .name = "wait", .fn = wait_tool};
    assert_int_equal(mcp_server_add_tool_def(srv, &tool), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    pthread_mutex_lock(&waiting.mu);
    waiting.started = waiting.ended = 0;
    waiting.reason[0] = '\0';
    pthread_mutex_unlock(&waiting.mu);
    mcp_client *c = client_for(protocol);
    connect_client(c, &h);
    long long id = -1;
    assert_int_equal(mcp_client_request_async(c, "tools/call",
                                              json_pack("{s:s, s:{}}", "name", "wait", "arguments"),
                                              NULL, ignore_response, NULL, &id),
                     MCP_OK);
    waiting_for(&waiting.started, "the handler's start");
    assert_int_equal(mcp_client_cancel(c, id, "the user pressed stop"), MCP_OK);
    waiting_for(&waiting.ended, "the handler's end after the cancellation");
    assert_false(waiting.early_reason);
    assert_string_equal(waiting.reason, want);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_the_handler_reads_the_cancellation_reason_legacy(void **state)
{
    (void)state;
    cancel_reason(LEGACY, "the user pressed stop");
}

static void test_the_handler_reads_the_cancellation_reason_2026_07_28(void **state)
{
    (void)state;
    /* Over HTTP in this revision, closing the request's stream is the cancellation. */
    cancel_reason(MODERN, "the client closed the request's stream");
}

static json_t *complete_many(mcp_ctx *ctx, const json_t *ref, const char *arg, const char *value,
                             const json_t *context, void *user)
{
    (void)ctx, (void)ref, (void)arg, (void)context, (void)user;
    if (strcmp(value, "known") == 0)
        return json_pack("{s:[s,s], s:i, s:b}", "values", "a", "b", "total", 1000, "hasMore", 1);
    if (strcmp(value, "bad") == 0)
        return json_pack("{s:[s], s:s}", "values", "a", "total", "many");
    if (strcmp(value, "word") == 0) /* more exist, none to be had: the handler says so */
        return json_pack("{s:[s], s:i, s:b}", "values", "a", "total", 5, "hasMore", 0);
    json_t *all = json_array();
    for (int i = 0; i < 150; i++)
        json_array_append_new(all, json_sprintf("v%d", i));
    return all;
}

static json_t *completion_of(mcp_client *c, const char *value, int *rc, mcp_rpc_error *err)
{
    json_t *result = NULL;
    *rc =
        mcp_client_request(c, "completion/complete",
                           json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "ref", "type", "ref/resource",
                                     "uri", "test://one", "argument", "name", "a", "value", value),
                           NULL, &result, err);
    json_t *completion = json_incref(json_object_get(result, "completion"));
    json_decref(result);
    return completion;
}

static void completion_totals(const char *protocol)
{
    mcp_server *srv = mcp_server_new("complete", "1.0.0");
    assert_non_null(srv);
    assert_int_equal(mcp_server_set_completion(srv, complete_many, NULL), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    mcp_client *c = client_for(protocol);
    connect_client(c, &h);
    int rc;
    mcp_rpc_error err = {0};
    json_t *k = completion_of(c, "known", &rc, &err);
    assert_int_equal(rc, MCP_OK);
    assert_json(k, "{\"values\":[\"a\",\"b\"],\"total\":1000,\"hasMore\":true}",
                "a completion whose handler knows of more");
    json_decref(k);
    k = completion_of(c, "all", &rc, &err);
    assert_int_equal(rc, MCP_OK);
    assert_int_equal(json_array_size(json_object_get(k, "values")), 100);
    assert_int_equal(json_integer_value(json_object_get(k, "total")), 150);
    assert_true(json_is_true(json_object_get(k, "hasMore")));
    json_decref(k);
    k = completion_of(c, "word", &rc, &err);
    assert_int_equal(rc, MCP_OK);
    assert_json(k, "{\"values\":[\"a\"],\"total\":5,\"hasMore\":false}",
                "a completion whose handler says there is no more");
    json_decref(k);
    k = completion_of(c, "bad", &rc, &err);
    assert_int_equal(rc, MCP_ERPC);
    assert_int_equal(err.code, MCP_RPC_INTERNAL_ERROR);
    mcp_rpc_error_clear(&err);
    json_decref(k);
    mcp_client_free(c);
    ih_stop(&h);

    /* Offered with no handler: an empty completion, not -32601. */
    srv = mcp_server_new("complete-on", "1.0.0");
    mcp_server_caps caps = {.size = sizeof(caps), .completions = MCP_CAP_ON};
    assert_int_equal(mcp_server_set_caps(srv, &caps), MCP_OK);
    ih_start(&h, srv);
    c = client_for(protocol);
    connect_client(c, &h);
    assert_non_null(json_object_get(mcp_client_server_capabilities(c), "completions"));
    k = completion_of(c, "x", &rc, &err);
    assert_int_equal(rc, MCP_OK);
    assert_json(k, "{\"values\":[],\"total\":0,\"hasMore\":false}", "the empty completion");
    json_decref(k);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_completion_total_and_has_more_from_the_handler_legacy(void **state)
{
    (void)state;
    completion_totals(LEGACY);
}

static void test_completion_total_and_has_more_from_the_handler_2026_07_28(void **state)
{
    (void)state;
    completion_totals(MODERN);
}

/* ---- What a client declares: elicitation modes, sampling with tools ---- */

static json_t *caps_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *r = mcp_text_result("caps");
    const json_t *caps = mcp_ctx_client_capabilities(ctx);
    const json_t *e = json_object_get(caps, "elicitation");
    const json_t *smp = json_object_get(caps, "sampling");
    json_object_set_new(r, "structuredContent",
                        json_pack("{s:O, s:O}", "elicitation", e != NULL ? e : json_null(),
                                  "sampling", smp != NULL ? smp : json_null()));
    return r;
}

/* The session of the last URL-mode elicitation, for its completion notification. */
static char url_session[64];

/* Elicits in the mode its "mode" argument names (url when none). */
static json_t *url_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *mode = json_string_value(json_object_get(args, "mode"));
    const char *sid = mcp_ctx_session_id(ctx);
    snprintf(url_session, sizeof(url_session), "%s", sid != NULL ? sid : "");
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_elicit(ctx,
                            json_pack("{s:s, s:s, s:s, s:s}", "mode", mode != NULL ? mode : "url",
                                      "message", "Connect your account", "url",
                                      "https://example.com/c", "elicitationId", "e-7"),
                            WAIT_MS, &result, &err);
    json_t *r = rc == MCP_OK ? mcp_text_result(json_string_value(json_object_get(result, "action")))
                             : mcp_text_result("refused");
    if (rc != MCP_OK)
        json_object_set_new(r, "structuredContent",
                            json_pack("{s:b, s:i}", "unsent", rc == MCP_ENOTSUP, "code", err.code));
    json_decref(result);
    mcp_rpc_error_clear(&err);
    return r;
}

static json_t *accept_elicit(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    return json_pack("{s:s}", "action", "accept");
}

static json_t *sample(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    return NULL;
}

static json_t *call_tool(mcp_client *c, const char *name)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, name, json_object(), NULL, &result, &err);
    if (rc != MCP_OK)
        fail_msg("tools/call %s: %d %s", name, rc, err.message);
    return result;
}

static void test_the_client_declares_url_elicitation_and_sampling_tools(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("declares", "1.0.0");
    assert_non_null(srv);
    mcp_tool_def t1 = {.size = sizeof(t1), .name = "caps", .fn = caps_tool};
    mcp_tool_def t2 = {.size = sizeof(t2), .name = "url", .fn = url_tool};
    assert_int_equal(mcp_server_add_tool_def(srv, &t1), MCP_OK);
    assert_int_equal(mcp_server_add_tool_def(srv, &t2), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    heard hd;
    heard_init(&hd);
    for (int declared = 0; declared < 2; declared++) {
        mcp_client *c = client_for(LEGACY);
        assert_int_equal(mcp_client_on_notification(c, on_note, &hd), MCP_OK);
        assert_int_equal(mcp_client_on_elicitation(c, accept_elicit, NULL), MCP_OK);
        assert_int_equal(mcp_client_on_sampling(c, sample, NULL), MCP_OK);
        mcp_client_caps caps = {.size = sizeof(caps)};
        if (declared) {
            caps.elicitation_url = MCP_CAP_ON;
            caps.sampling_tools = MCP_CAP_ON;
        }
        assert_int_equal(mcp_client_set_caps(c, &caps), MCP_OK);
        connect_client(c, &h);
        json_t *r = call_tool(c, "caps");
        assert_json(json_object_get(r, "structuredContent"),
                    declared
                        ? "{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{\"tools\":{}}}"
                        : "{\"elicitation\":{\"form\":{}},\"sampling\":{}}",
                    "the capabilities the server saw");
        json_decref(r);
        /* A URL-mode elicitation: only to a client that declared it (the server does not
         * send it to another); its completion notified to that session outside any
         * handler. */
        r = call_tool(c, "url");
        const char *text = json_string_value(
            json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
        assert_non_null(text);
        if (declared) {
            assert_string_equal(text, "accept");
            assert_int_equal(strlen(url_session), 32);
            assert_int_equal(mcp_server_notify_session(srv, url_session,
                                                       "notifications/elicitation/complete",
                                                       json_pack("{s:s}", "elicitationId", "e-7")),
                             MCP_OK);
            assert_int_equal(mcp_server_notify_session(srv, "no-such-session", "x/y", NULL),
                             MCP_OK);
            heard_wait(&hd, "notifications/elicitation/complete");
        } else {
            assert_string_equal(text, "refused");
            assert_json(json_object_get(r, "structuredContent"), "{\"unsent\":true,\"code\":0}",
                        "the refusal of an undeclared mode, by the server");
            assert_false(heard_has(&hd, "notifications/elicitation/complete"));
        }
        json_decref(r);
        /* A mode that is neither: the server sends it as the form it may be, the client
         * refuses it without calling its handler. */
        json_t *result = NULL;
        mcp_rpc_error err = {0};
        assert_int_equal(mcp_client_call_tool(c, "url", json_pack("{s:s}", "mode", "bogus"), NULL,
                                              &result, &err),
                         MCP_OK);
        assert_json(json_object_get(result, "structuredContent"),
                    "{\"unsent\":false,\"code\":-32602}",
                    "the client's refusal of an unknown mode");
        json_decref(result);
        mcp_client_free(c);
    }
    heard_free(&hd);
    mcp_client *c = client_for(LEGACY);
    mcp_client_caps wrong = {.size = sizeof(wrong), .sampling_context = (mcp_cap)9};
    assert_int_equal(mcp_client_set_caps(c, &wrong), MCP_EINVAL);
    mcp_client_free(c);
    ih_stop(&h);
}

/* ---- The client checks structuredContent against the tool's outputSchema ---- */

#define SHAPED_SCHEMA                                                                              \
    "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}"

/* A server that says what the test wants: tools with and without output schemas, and
 * results that conform or not, as the call's "mode" argument asks. */
static void lying_server(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    const char *m = rs_rpc_method(req);
    json_t *id = json_object_get(req->msg, "id");
    json_t *result = NULL;
    if (m != NULL && strcmp(m, "tools/list") == 0) {
        result = parse("{\"tools\":[{\"name\":\"shaped\",\"inputSchema\":{\"type\":\"object\"},"
                       "\"outputSchema\":" SHAPED_SCHEMA "},{\"name\":\"free\",\"inputSchema\":"
                       "{\"type\":\"object\"}},{\"name\":\"broken\",\"inputSchema\":{\"type\":"
                       "\"object\"},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"n\":"
                       "{\"$ref\":\"#/nowhere\"}}}}]}");
    } else if (m != NULL && strcmp(m, "tools/call") == 0) {
        const char *mode = json_string_value(json_object_get(
            json_object_get(json_object_get(req->msg, "params"), "arguments"), "mode"));
        mode = mode != NULL ? mode : "good";
        result = parse("{\"content\":[{\"type\":\"text\",\"text\":\"r\"}]}");
        if (strcmp(mode, "good") == 0)
            json_object_set_new(result, "structuredContent", json_pack("{s:i}", "n", 1));
        else if (strcmp(mode, "bad") == 0 || strcmp(mode, "error") == 0)
            json_object_set_new(result, "structuredContent", json_pack("{s:s}", "n", "x"));
        if (strcmp(mode, "error") == 0)
            json_object_set_new(result, "isError", json_true());
    } else {
        rs_respond(c, 400, NULL, NULL);
        return;
    }
    json_t *answer = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
    char *text = json_dumps(answer, JSON_COMPACT);
    rs_respond(c, 200, "Content-Type: application/json\r\n", text);
    free(text);
    json_decref(answer);
}

/* tools/call tool with {"mode": mode}: MCP_OK, or the error's code. */
static int call_mode(mcp_client *c, const char *tool, const char *mode, char *message, size_t len)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, tool, json_pack("{s:s}", "mode", mode), NULL, &result, &err);
    json_decref(result);
    if (message != NULL)
        snprintf(message, len, "%s", err.message);
    int code = rc == MCP_ERPC ? err.code : rc;
    mcp_rpc_error_clear(&err);
    return code;
}

static void test_the_client_checks_results_against_the_output_schema(void **state)
{
    (void)state;
    rs_server *srv = NULL;
    assert_int_equal(rs_start(&srv, lying_server, NULL), 0);
    char url[128];
    rs_url(srv, url, sizeof(url));
    mcp_client *c = client_for(LEGACY);
    assert_int_equal(mcp_client_connect_http(c, url, NULL, WAIT_MS), MCP_OK);
    /* Before the tools are listed, nothing is known to check against. */
    assert_int_equal(call_mode(c, "shaped", "bad", NULL, 0), MCP_OK);
    json_t *tools = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_list_tools(c, NULL, &tools, &err), MCP_OK);
    json_decref(tools);
    char message[256];
    assert_int_equal(call_mode(c, "shaped", "good", NULL, 0), MCP_OK);
    assert_int_equal(call_mode(c, "shaped", "bad", message, sizeof(message)),
                     MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(message, "does not match the tool's output schema"));
    assert_non_null(strstr(message, "/n"));
    assert_int_equal(call_mode(c, "shaped", "missing", message, sizeof(message)),
                     MCP_RPC_INVALID_REQUEST);
    assert_non_null(strstr(message, "did not return structured content"));
    /* A tool error is not checked; nor is a tool without a schema, nor one whose schema
     * the client cannot use. */
    assert_int_equal(call_mode(c, "shaped", "error", NULL, 0), MCP_OK);
    assert_int_equal(call_mode(c, "free", "bad", NULL, 0), MCP_OK);
    assert_int_equal(call_mode(c, "broken", "bad", NULL, 0), MCP_OK);
    /* Switched off. */
    assert_int_equal(mcp_client_set_output_check(c, 0), MCP_OK);
    assert_int_equal(call_mode(c, "shaped", "bad", NULL, 0), MCP_OK);
    mcp_client_free(c);
    rs_stop(srv);
}

/* ---- RFC 6570 level-4 templates, over the wire ---- */

static json_t *read_vars(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)user;
    char *text = json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *r = mcp_resource_text(uri, "application/json", text);
    free(text);
    return r;
}

static void read_with(mcp_client *c, const char *uri, const char *want)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_read_resource(c, uri, &result, &err);
    if (want == NULL) {
        if (rc != MCP_ERPC)
            fail_msg("%s was read (%d)", uri, rc);
        mcp_rpc_error_clear(&err);
        return;
    }
    if (rc != MCP_OK)
        fail_msg("%s: %d %s", uri, rc, err.message);
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "contents"), 0), "text"));
    json_t *got = text != NULL ? json_loads(text, 0, NULL) : NULL;
    assert_json(got, want, uri);
    json_decref(got);
    json_decref(result);
}

static void templates_over_the_wire(const char *protocol)
{
    mcp_server *srv = mcp_server_new("templates", "1.0.0");
    assert_non_null(srv);
    static const char *const tpls[] = {"repo://{owner}/{repo}{/path*}{?ref}", "file:///{+path}",
                                       "search://all{?q,lang}", "ns://{;v,w}"};
    for (size_t i = 0; i < sizeof(tpls) / sizeof(tpls[0]); i++) {
        mcp_resource_template_def d = {
            .size = sizeof(d), .uri_template = tpls[i], .name = tpls[i], .fn = read_vars};
        assert_int_equal(mcp_server_add_resource_template(srv, &d), MCP_OK);
    }
    mcp_resource_template_def bad = {
        .size = sizeof(bad), .uri_template = "x://{=y}", .name = "bad", .fn = read_vars};
    assert_int_equal(mcp_server_add_resource_template(srv, &bad), MCP_EINVAL);
    ih_host h;
    ih_start(&h, srv);
    mcp_client *c = client_for(protocol);
    connect_client(c, &h);
    read_with(c, "repo://octo/cat/src/main.c?ref=v1",
              "{\"owner\":\"octo\",\"path\":[\"src\",\"main.c\"],\"ref\":\"v1\",\"repo\":\"cat\"}");
    read_with(c, "repo://octo/cat", "{\"owner\":\"octo\",\"repo\":\"cat\"}");
    read_with(c, "file:///etc/my%20notes.txt", "{\"path\":\"etc/my notes.txt\"}");
    read_with(c, "search://all?lang=fr&q=chat%20noir&page=2",
              "{\"lang\":\"fr\",\"q\":\"chat noir\"}");
    read_with(c, "ns://;v=6;w", "{\"v\":\"6\",\"w\":\"\"}");
    read_with(c, "search://none", NULL);
    /* Removed: no longer read, no longer listed. */
    assert_int_equal(mcp_server_remove_resource_template(srv, "file:///{+path}"), MCP_OK);
    read_with(c, "file:///etc/x", NULL);
    json_t *list = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(
        mcp_client_list_all(c, "resources/templates/list", "resourceTemplates", &list, &err),
        MCP_OK);
    assert_int_equal(json_array_size(list), 3);
    json_decref(list);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_level_4_templates_over_the_wire_legacy(void **state)
{
    (void)state;
    templates_over_the_wire(LEGACY);
}

static void test_level_4_templates_over_the_wire_2026_07_28(void **state)
{
    (void)state;
    templates_over_the_wire(MODERN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extensions_both_ways_legacy),
        cmocka_unit_test(test_extensions_both_ways_2026_07_28),
        cmocka_unit_test(test_extension_identifiers_follow_the_key_rules),
        cmocka_unit_test(test_capabilities_chosen_legacy),
        cmocka_unit_test(test_capabilities_chosen_2026_07_28),
        cmocka_unit_test(test_list_changed_off_sends_none),
        cmocka_unit_test(test_methods_of_ones_own_legacy),
        cmocka_unit_test(test_methods_of_ones_own_2026_07_28),
        cmocka_unit_test(test_mcp_name_is_checked_for_a_method_that_names_one),
        cmocka_unit_test(test_the_handler_reads_the_cancellation_reason_legacy),
        cmocka_unit_test(test_the_handler_reads_the_cancellation_reason_2026_07_28),
        cmocka_unit_test(test_completion_total_and_has_more_from_the_handler_legacy),
        cmocka_unit_test(test_completion_total_and_has_more_from_the_handler_2026_07_28),
        cmocka_unit_test(test_the_client_declares_url_elicitation_and_sampling_tools),
        cmocka_unit_test(test_the_client_checks_results_against_the_output_schema),
        cmocka_unit_test(test_level_4_templates_over_the_wire_legacy),
        cmocka_unit_test(test_level_4_templates_over_the_wire_2026_07_28),
    };
    return cmocka_run_group_tests_name("extensions", tests, NULL, NULL);
}
