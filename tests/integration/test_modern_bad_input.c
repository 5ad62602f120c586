/* SPDX-License-Identifier: MIT */
/*
 * Bad input of revision 2026-07-28 over Streamable HTTP: every malformed _meta, a
 * version the server does not speak, headers that are missing or do not mirror the
 * body (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*), the methods the
 * revision removed, tampered, expired and replayed requestState, malformed
 * inputResponses, and logs without a logLevel. Each gets its exact JSON-RPC code
 * and HTTP status, and nothing else changes: the handler never runs (its runs are
 * counted), no session is left behind (the server's sessions are counted), the
 * legacy endpoint answers as before, and a thousand bad requests leave the
 * process's descriptors and heap where they were.
 *
 * The server runs in this process (modern_host.h), over real 127.0.0.1 sockets.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "modern_host.h"

#define ELICIT_CAPS "{\"elicitation\":{}}"
#define HDR_VERSION "MCP-Protocol-Version: " MH_VERSION "\r\n"

/* ---- Helpers ---- */

/* POSTs req (stolen) with its proper headers plus extra, and expects status and code
 * (0: a result) with req's id. Returns the response (new reference). */
static json_t *call(mh_host *h, json_t *req, const char *extra, int status, int code,
                    const char *what)
{
    hc_response r;
    long long id = json_integer_value(json_object_get(req, "id"));
    if (mh_post(h->port, req, extra, &r) != 0)
        fail_msg("%s: no complete response within %d ms (status %d)", what, MH_WAIT_MS, r.status);
    json_decref(req);
    json_t *resp = mh_expect(&r, status, code, id, what);
    if (code != 0) {
        const char *ct = hc_header_get(&r, "content-type");
        if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0)
            fail_msg("%s: the error came as %s, not application/json", what, ct ? ct : "nothing");
    }
    hc_response_free(&r);
    return resp;
}

/* The same with a body text and exactly these headers. */
static json_t *call_raw(mh_host *h, const char *headers, const char *body, long long id, int status,
                        int code, const char *what)
{
    hc_response r;
    if (mh_post_raw(h->port, headers, body, &r) != 0)
        fail_msg("%s: no complete response within %d ms (status %d)", what, MH_WAIT_MS, r.status);
    json_t *resp = mh_expect(&r, status, code, id, what);
    hc_response_free(&r);
    return resp;
}

static json_t *tool_params(const char *name, const char *args_json)
{
    json_t *p = json_pack("{s:s}", "name", name);
    if (args_json != NULL)
        json_object_set_new(p, "arguments", json_loads(args_json, 0, NULL));
    return p;
}

static json_t *tools_call(long long id, const char *name, const char *args_json, const char *caps)
{
    return mh_request(id, "tools/call", tool_params(name, args_json), caps);
}

static const char *message_of(const json_t *resp)
{
    return json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
}

/* Asserts the server holds no session, still serves a good modern request, and that
 * the legacy endpoint answers a GET as it always did: 404 for a session id it never
 * gave, 400 without one. */
static void assert_nothing_changed(mh_host *h, const char *what)
{
    size_t n = mh_wait_sessions(h, 0, MH_WAIT_MS);
    if (n != 0)
        fail_msg("%s: %zu sessions are left behind", what, n);
    json_decref(call(h, mh_request(900, "tools/list", NULL, NULL), NULL, 200, 0, what));
    hc_response r;
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs,
             HC_SSE_ACCEPT "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n");
    if (hc_request(h->port, "GET", "/mcp", hdrs, NULL, &r, MH_WAIT_MS) != 0 || r.status != 404)
        fail_msg("%s: a GET naming an unknown session got %d, not 404", what, r.status);
    hc_response_free(&r);
    if (hc_request(h->port, "GET", "/mcp", HC_SSE_ACCEPT, NULL, &r, MH_WAIT_MS) != 0 ||
        r.status != 400)
        fail_msg("%s: a GET without a session got %d, not 400", what, r.status);
    hc_response_free(&r);
    n = mh_wait_sessions(h, 0, MH_WAIT_MS);
    if (n != 0)
        fail_msg("%s: %zu sessions are left behind after a good request", what, n);
}

/* ---- _meta ---- */

#define PV "\"io.modelcontextprotocol/protocolVersion\":"
#define CC "\"io.modelcontextprotocol/clientCapabilities\":"
#define CI "\"io.modelcontextprotocol/clientInfo\":"
#define LL "\"io.modelcontextprotocol/logLevel\":"
#define GOOD PV "\"2026-07-28\"," CC "{}"

typedef struct meta_case {
    const char *meta; /* NULL: no _meta member */
    const char *why;  /* a word the message must hold */
} meta_case;

/* Each case's _meta on tools/call (of a tool that counts its runs), server/discover and
 * tools/list: -32602 and 400, and the handler never runs. */
static void expect_malformed_meta(mh_host *h, const meta_case *cases, size_t n)
{
    static const char *const methods[] = {"tools/call", "server/discover", "tools/list"};
    char hdrs[512], body[1024], what[1200];
    long long id = 100;
    int runs = mh_runs(h, MH_COUNT);
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        for (size_t i = 0; i < n; i++) {
            int call_tool = strcmp(methods[m], "tools/call") == 0;
            snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: %s\r\n%s",
                     methods[m], call_tool ? "Mcp-Name: count\r\n" : "");
            char meta[600] = "";
            if (cases[i].meta != NULL)
                snprintf(meta, sizeof meta, "%s\"_meta\":%s", call_tool ? "," : "", cases[i].meta);
            snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\",\"params\":{%s%s}}", ++id,
                     methods[m], call_tool ? "\"name\":\"count\"" : "", meta);
            snprintf(what, sizeof what, "%s with _meta %s", methods[m],
                     cases[i].meta ? cases[i].meta : "(none)");
            json_t *resp = call_raw(h, hdrs, body, id, 400, -32602, what);
            const char *msg = message_of(resp);
            if (msg == NULL || strstr(msg, cases[i].why) == NULL)
                fail_msg("%s: the message should name %s: %s", what, cases[i].why,
                         msg ? msg : "(none)");
            json_decref(resp);
        }
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs);
}

/* A _meta that is missing or lacks a required field, or holds one of the wrong type. */
static void test_malformed_meta_gets_32602_and_400_and_the_handler_never_runs(void **state)
{
    mh_host *h = *state;
    static const meta_case cases[] = {
        {NULL, "_meta"},
        {"5", "_meta"},
        {"\"x\"", "_meta"},
        {"[]", "_meta"},
        {"null", "_meta"},
        {"{" CC "{}}", "protocolVersion"},
        {"{" PV "42," CC "{}}", "protocolVersion"},
        {"{" PV "null," CC "{}}", "protocolVersion"},
        {"{" PV "{}," CC "{}}", "protocolVersion"},
        {"{" PV "[\"2026-07-28\"]," CC "{}}", "protocolVersion"},
        {"{" PV "\"2026-07-28\"}", "clientCapabilities"},
        {"{" PV "\"2026-07-28\"," CC "null}", "clientCapabilities"},
        {"{" PV "\"2026-07-28\"," CC "[]}", "clientCapabilities"},
        {"{" PV "\"2026-07-28\"," CC "\"all\"}", "clientCapabilities"},
        {"{" PV "\"2026-07-28\"," CC "5}", "clientCapabilities"},
    };
    expect_malformed_meta(h, cases, sizeof cases / sizeof cases[0]);
    /* With no params at all. */
    char hdrs[512];
    snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: tools/list\r\n");
    json_decref(call_raw(h, hdrs, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}", 7,
                         400, -32602, "tools/list without params"));
    assert_nothing_changed(h, "malformed _meta");
}

/* The optional fields, when there, must have their types too: a malformed request is
 * malformed whichever field is wrong (basic/index.mdx, _meta: -32602, and 400 on HTTP). */
static void test_malformed_optional_meta_fields_get_32602_and_400(void **state)
{
    mh_host *h = *state;
    static const meta_case cases[] = {
        {"{" GOOD "," CI "\"me\"}", "clientInfo"}, {"{" GOOD "," CI "5}", "clientInfo"},
        {"{" GOOD "," CI "[]}", "clientInfo"},     {"{" GOOD "," CI "null}", "clientInfo"},
        {"{" GOOD "," LL "\"loud\"}", "logLevel"}, {"{" GOOD "," LL "\"INFO\"}", "logLevel"},
        {"{" GOOD "," LL "3}", "logLevel"},        {"{" GOOD "," LL "null}", "logLevel"},
    };
    expect_malformed_meta(h, cases, sizeof cases / sizeof cases[0]);
    assert_nothing_changed(h, "malformed optional _meta fields");
}

/* The required fields are judged before the version: a request that lacks one gets
 * -32602 even when the version it names is not one the server speaks. */
static void test_missing_field_is_judged_before_an_unsupported_version(void **state)
{
    mh_host *h = *state;
    const char *hdrs = HC_MCP_POST_HEADERS "MCP-Protocol-Version: 2099-01-01\r\n"
                                           "Mcp-Method: tools/list\r\n";
    json_decref(call_raw(h, hdrs,
                         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{"
                         "\"_meta\":{" PV "\"2099-01-01\"}}}",
                         3, 400, -32602, "an unsupported version without clientCapabilities"));
}

/* ---- Versions ---- */

static void test_unsupported_version_named_alike_gets_32022_with_the_supported_list(void **state)
{
    mh_host *h = *state;
    static const char *const versions[] = {"2099-01-01", "1900-01-01",  "2025-11-25",
                                           "2024-11-05", "2026-07-28x", "latest"};
    int runs = mh_runs(h, MH_COUNT);
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        json_t *meta = mh_meta(NULL);
        json_object_set_new(meta, "io.modelcontextprotocol/protocolVersion",
                            json_string(versions[i]));
        json_t *req = tools_call(10 + (long long)i, "count", NULL, NULL);
        json_object_set_new(json_object_get(req, "params"), "_meta", meta);
        char what[128];
        snprintf(what, sizeof what, "tools/call naming %s in the header and _meta", versions[i]);
        json_t *resp = call(h, req, NULL, 400, -32022, what);
        json_t *data = json_object_get(json_object_get(resp, "error"), "data");
        json_t *want = json_pack("[s,s,s,s,s]", "2026-07-28", "2025-11-25", "2025-06-18",
                                 "2025-03-26", "2024-11-05");
        if (!json_equal(json_object_get(data, "supported"), want))
            fail_msg("%s: data.supported is not the five versions, newest first", what);
        json_decref(want);
        const char *requested = json_string_value(json_object_get(data, "requested"));
        if (requested == NULL || strcmp(requested, versions[i]) != 0)
            fail_msg("%s: data.requested is %s", what, requested ? requested : "absent");
        json_decref(resp);
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs);
    assert_nothing_changed(h, "unsupported versions");
}

/* ---- Standard headers ---- */

static void test_protocol_version_header_missing_or_different_gets_32020(void **state)
{
    mh_host *h = *state;
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"count\",\"_meta\":{" GOOD "}}}");
    static const char *const headers[] = {
        "",                                     /* missing */
        "MCP-Protocol-Version: 2025-11-25\r\n", /* a legacy one */
        "MCP-Protocol-Version: 2099-01-01\r\n", /* one nobody speaks */
        "MCP-Protocol-Version: 2026-07-29\r\n",
        "MCP-Protocol-Version: 2026-07-28x\r\n",
        "MCP-Protocol-Version: \r\n", /* empty */
    };
    int runs = mh_runs(h, MH_COUNT);
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        char hdrs[512], what[128];
        snprintf(hdrs, sizeof hdrs,
                 HC_MCP_POST_HEADERS "%sMcp-Method: tools/call\r\nMcp-Name: count\r\n", headers[i]);
        snprintf(what, sizeof what, "tools/call with '%.*s'", (int)strcspn(headers[i], "\r"),
                 headers[i]);
        json_decref(call_raw(h, hdrs, body, 5, 400, -32020, what));
    }
    /* Header names are case-insensitive: a lowercase name is the same header. */
    json_decref(call_raw(h,
                         HC_MCP_POST_HEADERS "mcp-protocol-version: 2026-07-28\r\n"
                                             "mcp-method: tools/call\r\nmcp-name: count\r\n",
                         body, 5, 200, 0, "lowercase header names"));
    assert_int_equal(mh_runs(h, MH_COUNT), runs + 1);
    assert_nothing_changed(h, "MCP-Protocol-Version");
}

static void test_mcp_method_missing_different_or_other_case_gets_32020(void **state)
{
    mh_host *h = *state;
    static const char *const headers[] = {
        "",
        "Mcp-Method: tools/list\r\n",
        "Mcp-Method: Tools/Call\r\n",
        "Mcp-Method: tools/call/\r\n",
        "Mcp-Method: tools\r\n",
        "Mcp-Method: =?base64?dG9vbHMvY2FsbA==?=\r\n", /* Mcp-Method has no Base64 form */
    };
    char body[512];
    int runs = mh_runs(h, MH_COUNT);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"count\",\"_meta\":{" GOOD "}}}");
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        char hdrs[512], what[160];
        snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS HDR_VERSION "%sMcp-Name: count\r\n",
                 headers[i]);
        snprintf(what, sizeof what, "tools/call with '%.*s'", (int)strcspn(headers[i], "\r"),
                 headers[i]);
        json_decref(call_raw(h, hdrs, body, 6, 400, -32020, what));
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs);
    assert_nothing_changed(h, "Mcp-Method");
}

/* Mcp-Name for each method that names something: missing, another name, another case. */
static void test_mcp_name_missing_or_mismatched_gets_32020(void **state)
{
    mh_host *h = *state;
    static const struct {
        const char *method, *field, *value, *other;
    } cases[] = {
        {"tools/call", "name", "count", "Count"},
        {"tools/call", "name", "count", "ask"},
        {"prompts/get", "name", "greet", "Greet"},
        {"prompts/get", "name", "greet", "count"},
        {"resources/read", "uri", "test://fixed", "test://FIXED"},
        {"resources/read", "uri", "test://fixed", "test://items/1"},
    };
    int runs[] = {mh_runs(h, MH_COUNT), mh_runs(h, MH_PROMPT), mh_runs(h, MH_RESOURCE)};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512], hdrs[512], what[160];
        snprintf(body, sizeof body,
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"%s\",\"params\":{\"%s\":\"%s\","
                 "\"_meta\":{" GOOD "}}}",
                 cases[i].method, cases[i].field, cases[i].value);
        snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: %s\r\n",
                 cases[i].method);
        snprintf(what, sizeof what, "%s without Mcp-Name", cases[i].method);
        json_decref(call_raw(h, hdrs, body, 8, 400, -32020, what));
        snprintf(hdrs, sizeof hdrs,
                 HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: %s\r\nMcp-Name: %s\r\n",
                 cases[i].method, cases[i].other);
        snprintf(what, sizeof what, "%s %s with Mcp-Name %s", cases[i].method, cases[i].value,
                 cases[i].other);
        json_decref(call_raw(h, hdrs, body, 8, 400, -32020, what));
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs[0]);
    assert_int_equal(mh_runs(h, MH_PROMPT), runs[1]);
    assert_int_equal(mh_runs(h, MH_RESOURCE), runs[2]);
    assert_nothing_changed(h, "Mcp-Name");
}

static void test_mcp_name_base64_sentinel_is_decoded_and_checked(void **state)
{
    mh_host *h = *state;
    static const struct {
        const char *header;
        int ok;
    } cases[] = {
        {"=?base64?Y291bnQ=?=", 1},  /* "count" */
        {"=?base64?Y291bnQ?=", 0},   /* unpadded */
        {"=?base64?Y29!bnQ=?=", 0},  /* a character outside the alphabet */
        {"=?base64?Y2 91bnQ=?=", 0}, /* a space inside */
        {"=?base64?Y291bnQ==?=", 0}, /* padded too much */
        {"=?base64?Y291bnR=?=", 0},  /* "count" with bits set past its last byte */
        {"=?base64?Y291bnT=?=", 0},
        {"=?BASE64?Y291bnQ=?=", 0}, /* the markers are case-sensitive: this is plain text */
        {"=?base64?Y291bnQK?=", 0}, /* "count\n" */
        {"=?base64?"
         "?=",
         0},                      /* "" */
        {"=?base64?Y291bnQ=", 0}, /* no suffix: plain text */
    };
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"count\",\"_meta\":{" GOOD "}}}");
    int runs = mh_runs(h, MH_COUNT);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char hdrs[512], what[160];
        snprintf(hdrs, sizeof hdrs,
                 HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: tools/call\r\nMcp-Name: %s\r\n",
                 cases[i].header);
        snprintf(what, sizeof what, "tools/call count with Mcp-Name %s", cases[i].header);
        json_decref(
            call_raw(h, hdrs, body, 9, cases[i].ok ? 200 : 400, cases[i].ok ? 0 : -32020, what));
        runs += cases[i].ok;
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs);
    /* A URI that is not plain ASCII travels encoded, and matches once decoded. */
    json_t *req = mh_request(10, "resources/read",
                             json_pack("{s:s}", "uri", "test://items/caf\xc3\xa9"), ELICIT_CAPS);
    json_t *resp = call(h, req, NULL, 200, 0, "resources/read of a URI with a non-ASCII char");
    json_decref(resp);
    assert_nothing_changed(h, "Base64 sentinel");
}

/*
 * A metadata header given twice is refused, even with equal values: proxies read the
 * last field line and we the first, so "Mcp-Name: count" then "Mcp-Name: ask" passed a
 * proxy's rule that denies count, and count ran.
 */
static void test_repeated_metadata_headers_get_400_and_nothing_runs(void **state)
{
    mh_host *h = *state;
    static const char *const repeats[] = {
        "Mcp-Name: count\r\nMcp-Name: ask\r\n",
        "Mcp-Name: ask\r\nMcp-Name: count\r\n",
        "Mcp-Name: count\r\nmcp-name: count\r\n",
        "Mcp-Name: count\r\nMcp-Method: tools/call\r\n",
        "Mcp-Name: count\r\n" HDR_VERSION,
        "Mcp-Name: count\r\nMcp-Param-Region: eu\r\nMcp-Param-Region: us\r\n",
    };
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"count\",\"_meta\":{" GOOD "}}}");
    int runs = mh_runs(h, MH_COUNT);
    for (size_t i = 0; i < sizeof repeats / sizeof repeats[0]; i++) {
        char hdrs[512], what[200];
        snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: tools/call\r\n%s",
                 repeats[i]);
        snprintf(what, sizeof what, "tools/call count with '%.*s...' repeated",
                 (int)strcspn(repeats[i], "\r"), repeats[i]);
        json_t *resp = call_raw(h, hdrs, body, 9, 400, -32020, what);
        const char *msg = message_of(resp);
        if (msg == NULL || strstr(msg, "repeated") == NULL)
            fail_msg("%s: the error does not say a header is repeated: %s", what,
                     msg ? msg : "(no message)");
        json_decref(resp);
    }
    assert_int_equal(mh_runs(h, MH_COUNT), runs);
    assert_nothing_changed(h, "repeated metadata headers");
}

/* ---- Mcp-Param-* ---- */

static void test_mcp_param_headers_are_required_and_checked(void **state)
{
    mh_host *h = *state;
    static const struct {
        const char *args;
        const char *headers;
        int ok;
    } cases[] = {
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: eu-west1\r\n", 1},
        {"{\"region\":\"eu-west1\"}", "mcp-param-region: eu-west1\r\n", 1},
        {"{\"region\":\"eu-west1\"}", "", 0},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: us-east1\r\n", 0},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: EU-WEST1\r\n", 0},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: =?base64?ZXUtd2VzdDE=?=\r\n", 1},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: =?base64?ZXUtd2VzdDE?=\r\n", 0},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: =?base64?ZXUtd2VzdDF=?=\r\n", 0},
        {"{\"region\":\"eu\"}", "Mcp-Param-Region: =?base64?ZXV=?=\r\n", 0},
        {"{\"region\":\"eu\"}", "Mcp-Param-Region: =?base64?ZXU=?=\r\n", 1},
        {"{\"region\":\"eu-west1\"}", "Mcp-Param-Region: =?base64?ZXUtd2V*dDE=?=\r\n", 0},
        {"{\"region\":\"caf\xc3\xa9\"}", "Mcp-Param-Region: =?base64?Y2Fmw6k=?=\r\n", 1},
        {"{\"region\":\"caf\xc3\xa9\"}", "Mcp-Param-Region: caf\xc3\xa9\r\n", 0}, /* not ASCII */
        {"{\"region\":\" padded \"}", "Mcp-Param-Region: =?base64?IHBhZGRlZCA=?=\r\n", 1},
        {"{\"region\":null}", "", 2}, /* null: no header expected (the schema refuses it) */
        {"{\"note\":\"x\"}", "", 1},  /* absent: no header expected */
        {"{\"count\":42}", "Mcp-Param-Count: 42\r\n", 1},
        {"{\"count\":42}", "Mcp-Param-Count: 42.0\r\n", 1}, /* compared as numbers */
        {"{\"count\":42}", "Mcp-Param-Count: 4.2e1\r\n", 1},
        {"{\"count\":42}", "Mcp-Param-Count: 43\r\n", 0},
        {"{\"count\":42}", "Mcp-Param-Count: 42abc\r\n", 0},
        {"{\"count\":42}", "Mcp-Param-Count: \r\n", 0},
        {"{\"count\":42}", "", 0},
        {"{\"count\":-7}", "Mcp-Param-Count: -7\r\n", 1},
        {"{\"flag\":true}", "Mcp-Param-Flag: true\r\n", 1},
        {"{\"flag\":true}", "Mcp-Param-Flag: True\r\n", 0},
        {"{\"flag\":false}", "Mcp-Param-Flag: 0\r\n", 0},
        {"{\"flag\":false}", "", 0},
        {"{\"where\":{\"zone\":\"b\"}}", "Mcp-Param-Zone: b\r\n", 1},
        {"{\"where\":{\"zone\":\"b\"}}", "Mcp-Param-Zone: c\r\n", 0},
        {"{\"where\":{\"zone\":\"b\"}}", "", 0},
        {"{\"where\":{}}", "", 1},
    };
    int runs = mh_runs(h, MH_HEADERS);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[300];
        snprintf(what, sizeof what, "headers %s with '%.*s'", cases[i].args,
                 (int)strcspn(cases[i].headers, "\r"), cases[i].headers);
        json_t *resp = call(h, tools_call(11, "headers", cases[i].args, NULL), cases[i].headers,
                            cases[i].ok ? 200 : 400, cases[i].ok ? 0 : -32020, what);
        /* 2: past the headers, but not the input schema: a tool error, no run. */
        int schema_error =
            json_is_true(json_object_get(json_object_get(resp, "result"), "isError"));
        if (schema_error != (cases[i].ok == 2))
            fail_msg("%s: %s", what, schema_error ? "refused by the schema" : "not refused");
        json_decref(resp);
        runs += cases[i].ok == 1;
        assert_int_equal(mh_runs(h, MH_HEADERS), runs);
    }
    assert_nothing_changed(h, "Mcp-Param-*");
}

/* A number's header is a number as JSON spells it: not hexadecimal, infinity or nan,
 * no '+', no space, no NUL inside; 42.0 and 4.2e1 are 42 (tested above). */
static void test_mcp_param_number_must_be_a_decimal_number(void **state)
{
    mh_host *h = *state;
    static const char *const bad[] = {
        "0x2a", "0X2A", "inf", "nan", "=?base64?IDQy?=" /* " 42" */,          "+42",
        "042x", "4_2",  "42.", "4e",  "=?base64?NDIAMQ==?=" /* "42\0" "1" */, "-",
        "",
    };
    int runs = mh_runs(h, MH_HEADERS);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char hdr[128], what[160];
        snprintf(hdr, sizeof hdr, "Mcp-Param-Count: %s\r\n", bad[i]);
        snprintf(what, sizeof what, "count 42 with Mcp-Param-Count: %s", bad[i]);
        json_decref(
            call(h, tools_call(12, "headers", "{\"count\":42}", NULL), hdr, 400, -32020, what));
    }
    assert_int_equal(mh_runs(h, MH_HEADERS), runs);
}

/* A recognized Mcp-Param header with characters a header value may not hold is
 * refused even when its argument has no value (Server Behavior for Custom Headers). */
static void test_mcp_param_with_invalid_characters_is_refused_without_its_argument(void **state)
{
    mh_host *h = *state;
    int runs = mh_runs(h, MH_HEADERS);
    static const char *const args[] = {"{}", "{\"region\":null}", "{\"where\":{}}"};
    static const char *const headers[] = {"Mcp-Param-Region: caf\xc3\xa9\r\n",
                                          "Mcp-Param-Region: =?base64?Y2Fm?w6k=?=\r\n",
                                          "Mcp-Param-Zone: \xff\r\n"};
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        char what[160];
        snprintf(what, sizeof what, "headers %s with '%.*s'", args[i],
                 (int)strcspn(headers[i], "\r"), headers[i]);
        json_decref(
            call(h, tools_call(13, "headers", args[i], NULL), headers[i], 400, -32020, what));
    }
    assert_int_equal(mh_runs(h, MH_HEADERS), runs);
    /* A header that is not one of the tool's is not the server's business. */
    json_decref(call(h, tools_call(14, "headers", "{}", NULL), "Mcp-Param-Other: caf\xc3\xa9\r\n",
                     200, 0, "an Mcp-Param header the tool does not name"));
}

/* ---- Removed and unknown methods ---- */

static void test_removed_and_unknown_methods_get_32601_and_404(void **state)
{
    mh_host *h = *state;
    static const char *const methods[] = {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "no/such/method",
        "notifications/initialized",
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        json_t *params = json_object();
        if (strcmp(methods[i], "initialize") == 0)
            json_object_set_new(params, "protocolVersion", json_string("2025-11-25"));
        else if (strcmp(methods[i], "logging/setLevel") == 0)
            json_object_set_new(params, "level", json_string("debug"));
        else if (strncmp(methods[i], "resources/", 10) == 0)
            json_object_set_new(params, "uri", json_string("test://fixed"));
        char what[128];
        snprintf(what, sizeof what, "%s with a modern _meta", methods[i]);
        json_t *resp = call(h, mh_request(20 + (long long)i, methods[i], params, NULL), NULL, 404,
                            -32601, what);
        json_decref(resp);
    }
    assert_nothing_changed(h, "removed methods");
}

/* ---- requestState ---- */

/* A first round of tool (arguments args_json): its requestState (malloc'd). */
static char *first_round(mh_host *h, long long id, const char *tool, const char *args_json)
{
    json_t *resp =
        call(h, tools_call(id, tool, args_json, ELICIT_CAPS), NULL, 200, 0, "a first round");
    json_t *result = json_object_get(resp, "result");
    const char *type = json_string_value(json_object_get(result, "resultType"));
    const char *token = json_string_value(json_object_get(result, "requestState"));
    if (type == NULL || strcmp(type, "input_required") != 0 || token == NULL)
        fail_msg("%s: expected an InputRequiredResult with a requestState", tool);
    char *s = strdup(token);
    json_decref(resp);
    return s;
}

/* A retry of tool with requestState `token` (a JSON value, stolen) and an answer. */
static json_t *retry(long long id, const char *tool, const char *args_json, json_t *token)
{
    json_t *req = tools_call(id, tool, args_json, ELICIT_CAPS);
    json_t *params = json_object_get(req, "params");
    json_object_set_new(params, "requestState", token);
    json_object_set_new(
        params, "inputResponses",
        json_pack("{s:{s:s, s:{s:s}}}", "name", "action", "accept", "content", "name", "Ada"));
    return req;
}

static void test_tampered_request_state_is_refused_before_the_handler_runs(void **state)
{
    mh_host *h = *state;
    char *good = first_round(h, 30, "ask", "{\"x\":\"a\"}");
    char *other_tool = first_round(h, 31, "ask_two", NULL);
    char *other_args = first_round(h, 32, "ask", "{\"x\":\"b\"}");
    int runs = mh_runs(h, MH_ASK);
    size_t n = strlen(good);
    char *changed = strdup(good);
    changed[n / 2] = changed[n / 2] == 'A' ? 'B' : 'A';
    char *last = strdup(good);
    last[n - 1] = last[n - 1] == 'A' ? 'B' : 'A';
    char *truncated = strndup(good, n - 1);
    char *half = strndup(good, n / 2);
    char suffixed[4096];
    snprintf(suffixed, sizeof suffixed, "%sA", good);
    json_t *tokens[] = {
        json_string(changed),    json_string(last),
        json_string(truncated),  json_string(half),
        json_string(suffixed),   json_string(other_tool),
        json_string(other_args), json_integer(5),
        json_object(),           json_null(),
        json_pack("[s]", good),  json_true(),
        json_string(""),         json_string("v1."),
    };
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
        char *text = json_dumps(tokens[i], JSON_ENCODE_ANY);
        char what[200];
        snprintf(what, sizeof what, "retry with requestState %.60s%s (case %zu)", text,
                 strlen(text) > 60 ? "..." : "", i);
        free(text);
        json_t *resp = call(h, retry(40 + (long long)i, "ask", "{\"x\":\"a\"}", tokens[i]), NULL,
                            200, -32602, what);
        const char *msg = message_of(resp);
        if (msg == NULL || strstr(msg, "requestState") == NULL)
            fail_msg("%s: the message should name requestState: %s", what, msg ? msg : "(none)");
        json_decref(resp);
    }
    /* An embedded NUL (\u0000): the JSON parser refuses every message that holds one
     * (-32700, HTTP 400, id null), so the handler cannot see it either. */
    for (int where = 0; where < 2; where++) {
        char body[4096], hdrs[512];
        snprintf(body, sizeof body,
                 "{\"jsonrpc\":\"2.0\",\"id\":58,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"ask\",\"arguments\":{\"x\":\"a\"},\"requestState\":\"%.*s\\u0000%s\","
                 "\"_meta\":{" GOOD "}}}",
                 (int)(where ? n / 2 : n), good, where ? good + n / 2 : "");
        snprintf(hdrs, sizeof hdrs,
                 HC_MCP_POST_HEADERS HDR_VERSION "Mcp-Method: tools/call\r\nMcp-Name: ask\r\n");
        hc_response r;
        assert_int_equal(mh_post_raw(h->port, hdrs, body, &r), 0);
        json_t *msgs = mh_messages(&r, "a requestState with a NUL");
        json_t *err = json_object_get(json_array_get(msgs, 0), "error");
        if (r.status != 400 || json_integer_value(json_object_get(err, "code")) != -32700)
            fail_msg("a requestState with a NUL: expected 400 and -32700, got %d: %.300s", r.status,
                     r.body);
        json_decref(msgs);
        hc_response_free(&r);
    }
    /* The state of another method, with the same name and arguments. */
    json_t *req = mh_request(60, "prompts/get", json_pack("{s:s}", "name", "ask"), ELICIT_CAPS);
    json_object_set_new(json_object_get(req, "params"), "requestState", json_string(good));
    json_decref(call(h, req, NULL, 200, -32602, "a tool's requestState on prompts/get"));
    /* Replayed under the JSON-RPC id of the request that produced it. */
    json_decref(call(h, retry(30, "ask", "{\"x\":\"a\"}", json_string(good)), NULL, 200, -32602,
                     "a retry under the id of the first round"));
    if (mh_runs(h, MH_ASK) != runs)
        fail_msg("the handler ran %d times for refused requestStates", mh_runs(h, MH_ASK) - runs);
    /* The untouched state still works, under a new id. */
    json_t *resp = call(h, retry(61, "ask", "{\"x\":\"a\"}", json_string(good)), NULL, 200, 0,
                        "the good retry");
    assert_string_equal(mh_text(resp, "the good retry"), "hello Ada");
    json_decref(resp);
    assert_int_equal(mh_runs(h, MH_ASK), runs + 1);
    /* Once: the same state again, under yet another id, is refused (it was accepted
     * until it expired). */
    for (long long id = 62; id < 64; id++) {
        resp = call(h, retry(id, "ask", "{\"x\":\"a\"}", json_string(good)), NULL, 200, -32602,
                    "the good retry replayed");
        const char *msg = message_of(resp);
        if (msg == NULL || strstr(msg, "used") == NULL)
            fail_msg("the good retry replayed: the message should say it was used: %s",
                     msg ? msg : "(none)");
        json_decref(resp);
    }
    assert_int_equal(mh_runs(h, MH_ASK), runs + 1);
    free(good);
    free(other_tool);
    free(other_args);
    free(changed);
    free(last);
    free(truncated);
    free(half);
    assert_nothing_changed(h, "tampered requestState");
}

/* A requestState of a server whose states live 300 ms is refused once they lapse. */
static void test_expired_request_state_is_refused(void **state)
{
    (void)state;
    mh_host *h = calloc(1, sizeof(*h));
    mh_opts o = {.state_ttl_ms = 300};
    assert_int_equal(mh_start(h, &o), 0);
    char *fresh = first_round(h, 1, "ask", NULL);
    char *stale = first_round(h, 2, "ask", NULL);
    /* Before the expiry it is good. */
    json_decref(call(h, retry(3, "ask", NULL, json_string(fresh)), NULL, 200, 0, "a fresh state"));
    int runs = mh_runs(h, MH_ASK);
    /* Nothing announces an expiry: time has to pass. */
    struct timespec ts = {0, 450 * 1000 * 1000};
    nanosleep(&ts, NULL);
    json_t *resp =
        call(h, retry(4, "ask", NULL, json_string(stale)), NULL, 200, -32602, "an expired state");
    const char *msg = message_of(resp);
    if (msg == NULL || strstr(msg, "expired") == NULL)
        fail_msg("an expired requestState: the message should say so: %s", msg ? msg : "(none)");
    json_decref(resp);
    assert_int_equal(mh_runs(h, MH_ASK), runs);
    free(fresh);
    free(stale);
    assert_int_equal(mh_stop(h, 1000), 0);
    free(h);
}

/* ---- inputResponses ---- */

static void test_malformed_input_responses(void **state)
{
    mh_host *h = *state;
    int runs = mh_runs(h, MH_ASK);
    /* Not an object: refused before the handler runs. */
    json_t *not_objects[] = {json_null(), json_array(), json_integer(3), json_string("x"),
                             json_true()};
    for (size_t i = 0; i < sizeof not_objects / sizeof not_objects[0]; i++) {
        json_t *req = tools_call(70 + (long long)i, "ask", NULL, ELICIT_CAPS);
        json_object_set_new(json_object_get(req, "params"), "inputResponses", not_objects[i]);
        char what[64];
        snprintf(what, sizeof what, "inputResponses of the wrong type (case %zu)", i);
        json_decref(call(h, req, NULL, 200, -32602, what));
    }
    assert_int_equal(mh_runs(h, MH_ASK), runs);
    /* An answer of the wrong shape for the question asked: -32602. */
    static const char *const bad_answers[] = {
        "{\"content\":{\"name\":\"Ada\"}}",            /* no action */
        "{\"action\":\"maybe\"}",                      /* not an action */
        "{\"action\":\"accept\",\"content\":\"Ada\"}", /* content not an object */
        "5",
        "\"Ada\"",
        "[]",
        "null",
    };
    for (size_t i = 0; i < sizeof bad_answers / sizeof bad_answers[0]; i++) {
        json_t *req = tools_call(80 + (long long)i, "ask", NULL, ELICIT_CAPS);
        json_t *answers = json_object();
        json_object_set_new(answers, "name", json_loads(bad_answers[i], JSON_DECODE_ANY, NULL));
        json_object_set_new(json_object_get(req, "params"), "inputResponses", answers);
        char what[160];
        snprintf(what, sizeof what, "inputResponses.name = %s", bad_answers[i]);
        json_t *resp = call(h, req, NULL, 200, -32602, what);
        const char *msg = message_of(resp);
        if (msg == NULL || strstr(msg, "inputResponses.name") == NULL)
            fail_msg("%s: the message should name the answer: %s", what, msg ? msg : "(none)");
        json_decref(resp);
    }
    /* Answers to questions never asked are ignored: the question is asked again. */
    json_t *req = tools_call(90, "ask", NULL, ELICIT_CAPS);
    json_object_set_new(json_object_get(req, "params"), "inputResponses",
                        json_pack("{s:{s:s}, s:i}", "other", "action", "accept", "junk", 5));
    json_t *resp = call(h, req, NULL, 200, 0, "answers to questions never asked");
    json_t *result = json_object_get(resp, "result");
    if (strcmp(json_string_value(json_object_get(result, "resultType")) ?: "", "input_required") ||
        json_object_get(json_object_get(result, "inputRequests"), "name") == NULL)
        fail_msg("answers to questions never asked: the question should be asked again");
    json_decref(resp);
}

/* A whole round trip in each method that may take one, and a two-round tool. */
static void test_good_rounds_complete(void **state)
{
    mh_host *h = *state;
    char *token = first_round(h, 100, "ask_two", NULL);
    json_t *req = tools_call(101, "ask_two", NULL, ELICIT_CAPS);
    json_object_set_new(json_object_get(req, "params"), "requestState", json_string(token));
    json_object_set_new(
        json_object_get(req, "params"), "inputResponses",
        json_pack("{s:{s:s, s:{s:s}}}", "first", "action", "accept", "content", "name", "A"));
    json_t *resp = call(h, req, NULL, 200, 0, "ask_two, round 2");
    const char *token2 =
        json_string_value(json_object_get(json_object_get(resp, "result"), "requestState"));
    assert_non_null(token2);
    req = tools_call(102, "ask_two", NULL, ELICIT_CAPS);
    json_object_set_new(json_object_get(req, "params"), "requestState", json_string(token2));
    json_object_set_new(
        json_object_get(req, "params"), "inputResponses",
        json_pack("{s:{s:s, s:{s:s}}}", "second", "action", "accept", "content", "name", "B"));
    json_decref(resp);
    resp = call(h, req, NULL, 200, 0, "ask_two, round 3");
    assert_string_equal(mh_text(resp, "ask_two"), "A+B (round 3)");
    json_decref(resp);
    free(token);
    /* prompts/get and resources/read take rounds too. */
    req = mh_request(103, "prompts/get", json_pack("{s:s}", "name", "greet"), ELICIT_CAPS);
    json_object_set_new(
        json_object_get(req, "params"), "inputResponses",
        json_pack("{s:{s:s, s:{s:s}}}", "name", "action", "accept", "content", "name", "P"));
    json_decref(call(h, req, NULL, 200, 0, "prompts/get with its answer"));
    req = mh_request(104, "resources/read", json_pack("{s:s}", "uri", "test://fixed"), NULL);
    resp = call(h, req, NULL, 200, 0, "resources/read, no elicitation capability");
    json_decref(resp);
    assert_nothing_changed(h, "good rounds");
}

/* ---- Logs ---- */

/* The notifications/message levels in r, in order, joined with ','. */
static void log_levels(const hc_response *r, char *out, size_t size)
{
    json_t *msgs = mh_messages(r, "logs");
    out[0] = '\0';
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method == NULL)
            continue;
        if (strcmp(method, "notifications/message") != 0)
            fail_msg("logs: an unexpected notification %s", method);
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s", n ? "," : "",
                 json_string_value(json_object_get(json_object_get(m, "params"), "level")));
    }
    json_decref(msgs);
}

static void test_logs_go_only_to_a_request_that_asked_and_at_its_level(void **state)
{
    mh_host *h = *state;
    static const struct {
        const char *level; /* NULL: no logLevel */
        const char *want;
    } cases[] = {
        {NULL, ""},
        {"debug", "debug,info,warning,error"},
        {"info", "info,warning,error"},
        {"warning", "warning,error"},
        {"error", "error"},
        {"emergency", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *req = tools_call(110 + (long long)i, "logs", NULL, NULL);
        if (cases[i].level != NULL)
            json_object_set_new(json_object_get(json_object_get(req, "params"), "_meta"),
                                "io.modelcontextprotocol/logLevel", json_string(cases[i].level));
        hc_response r;
        assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
        json_decref(mh_expect(&r, 200, 0, 110 + (long long)i, "logs"));
        char got[256];
        log_levels(&r, got, sizeof got);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("logLevel %s: expected logs [%s], got [%s]",
                     cases[i].level ? cases[i].level : "(none)", cases[i].want, got);
        const char *ct = hc_header_get(&r, "content-type");
        if (cases[i].want[0] == '\0' && (ct == NULL || strncmp(ct, "application/json", 16) != 0))
            fail_msg("logLevel %s: with nothing to send first, the answer should be one JSON "
                     "body, not %s",
                     cases[i].level ? cases[i].level : "(none)", ct ? ct : "nothing");
        hc_response_free(&r);
        json_decref(req);
    }
    assert_nothing_changed(h, "logs");
}

/* ---- A thousand of them ---- */

/* Bad request k of a rotation of every kind above, as raw text (headers, body). */
static void bad_request(int k, char *hdrs, size_t hsize, char *body, size_t bsize)
{
    const char *method = "tools/call", *name = "Mcp-Name: count\r\n", *version = HDR_VERSION;
    char params[512];
    snprintf(params, sizeof params, "\"name\":\"count\",\"_meta\":{" GOOD "}");
    switch (k % 10) {
    case 0:
        snprintf(params, sizeof params, "\"name\":\"count\"");
        break;
    case 1:
        snprintf(params, sizeof params,
                 "\"name\":\"count\",\"_meta\":{" PV "\"2099-01-01\"," CC "{}}");
        version = "MCP-Protocol-Version: 2099-01-01\r\n";
        break;
    case 2:
        version = "";
        break;
    case 3:
        name = "Mcp-Name: other\r\n";
        break;
    case 4:
        method = "ping";
        name = "";
        snprintf(params, sizeof params, "\"_meta\":{" GOOD "}");
        break;
    case 5:
        snprintf(params, sizeof params,
                 "\"name\":\"count\",\"requestState\":\"v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                 "AAAAAAAAAAAA\",\"_meta\":{" GOOD "}");
        break;
    case 6:
        snprintf(params, sizeof params,
                 "\"name\":\"ask\",\"inputResponses\":[],\"_meta\":{" GOOD "}");
        name = "Mcp-Name: ask\r\n";
        break;
    case 7:
        snprintf(params, sizeof params, "\"name\":\"count\",\"_meta\":{" GOOD "," CI "7}");
        break;
    case 8:
        snprintf(params, sizeof params,
                 "\"name\":\"headers\",\"arguments\":{\"region\":\"x\"},\"_meta\":{" GOOD "}");
        name = "Mcp-Name: headers\r\n";
        break;
    default:
        snprintf(params, sizeof params, "\"name\":\"count\",\"_meta\":{" GOOD "," LL "\"x\"}");
        break;
    }
    snprintf(hdrs, hsize, HC_MCP_POST_HEADERS "%sMcp-Method: %s\r\n%s", version,
             k % 10 == 4 ? "ping" : method, name);
    snprintf(body, bsize, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s}}", k,
             k % 10 == 4 ? "ping" : method, params);
}

/* Sends n bad requests on keep-alive connections of 50 each; every one is answered. */
static void send_bad_requests(mh_host *h, int from, int n)
{
    hc_conn c = {.fd = -1};
    for (int k = from; k < from + n; k++) {
        if ((k - from) % 50 == 0) {
            hc_close(&c);
            assert_int_equal(hc_connect(&c, h->port, MH_WAIT_MS), 0);
        }
        char hdrs[1024], body[1024];
        bad_request(k, hdrs, sizeof hdrs, body, sizeof body);
        hc_response r;
        if (hc_send_request(&c, h->port, "POST", "/mcp", hdrs, body, MH_WAIT_MS) != 0 ||
            hc_read_response(&c, &r, MH_WAIT_MS) != 0)
            fail_msg("bad request %d (kind %d) got no complete answer", k, k % 10);
        if (r.status != 400 && r.status != 404 && r.status != 200)
            fail_msg("bad request %d (kind %d): HTTP %d", k, k % 10, r.status);
        json_t *msgs = hc_messages(&r);
        if (json_object_get(json_array_get(msgs, 0), "error") == NULL)
            fail_msg("bad request %d (kind %d): no error: %.300s", k, k % 10, r.body);
        json_decref(msgs);
        hc_response_free(&r);
    }
    hc_close(&c);
}

static void test_a_thousand_bad_requests_leave_nothing_behind(void **state)
{
    mh_host *h = *state;
    /* A warm-up, so that what the allocator and the pool keep is counted once. */
    send_bad_requests(h, 0, 200);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    int fds = mh_wait_fds(0, 0);
    long long heap = mh_heap_bytes();
    int runs = 0;
    for (int t = 0; t < MH_NTOOLS; t++)
        runs += mh_runs(h, (enum mh_tool)t);
    send_bad_requests(h, 1000, 1000);
    for (int t = 0; t < MH_NTOOLS; t++)
        runs -= mh_runs(h, (enum mh_tool)t);
    if (runs != 0)
        fail_msg("a handler ran %d times for bad requests", -runs);
    size_t n = mh_wait_sessions(h, 0, MH_WAIT_MS);
    if (n != 0)
        fail_msg("1,000 bad requests left %zu sessions", n);
    int fds_after = mh_wait_fds(fds, MH_WAIT_MS);
    if (fds_after > fds)
        fail_msg("1,000 bad requests left %d more file descriptors", fds_after - fds);
    long long heap_after = mh_heap_bytes();
    printf("1,000 bad requests: heap %lld -> %lld bytes, %d fds\n", heap, heap_after, fds_after);
    if (heap >= 0 && heap_after - heap > 256 * 1024)
        fail_msg("1,000 bad requests grew the heap by %lld bytes", heap_after - heap);
    assert_nothing_changed(h, "1,000 bad requests");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_meta_gets_32602_and_400_and_the_handler_never_runs),
        cmocka_unit_test(test_malformed_optional_meta_fields_get_32602_and_400),
        cmocka_unit_test(test_missing_field_is_judged_before_an_unsupported_version),
        cmocka_unit_test(test_unsupported_version_named_alike_gets_32022_with_the_supported_list),
        cmocka_unit_test(test_protocol_version_header_missing_or_different_gets_32020),
        cmocka_unit_test(test_mcp_method_missing_different_or_other_case_gets_32020),
        cmocka_unit_test(test_mcp_name_missing_or_mismatched_gets_32020),
        cmocka_unit_test(test_mcp_name_base64_sentinel_is_decoded_and_checked),
        cmocka_unit_test(test_repeated_metadata_headers_get_400_and_nothing_runs),
        cmocka_unit_test(test_mcp_param_headers_are_required_and_checked),
        cmocka_unit_test(test_mcp_param_number_must_be_a_decimal_number),
        cmocka_unit_test(test_mcp_param_with_invalid_characters_is_refused_without_its_argument),
        cmocka_unit_test(test_removed_and_unknown_methods_get_32601_and_404),
        cmocka_unit_test(test_tampered_request_state_is_refused_before_the_handler_runs),
        cmocka_unit_test(test_expired_request_state_is_refused),
        cmocka_unit_test(test_malformed_input_responses),
        cmocka_unit_test(test_good_rounds_complete),
        cmocka_unit_test(test_logs_go_only_to_a_request_that_asked_and_at_its_level),
        cmocka_unit_test(test_a_thousand_bad_requests_leave_nothing_behind),
    };
    return cmocka_run_group_tests_name("modern_bad_input", tests, mh_group_setup, mh_group_teardown)
               ? 1
               : 0;
}
