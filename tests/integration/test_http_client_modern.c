/* SPDX-License-Identifier: MIT */
/*
 * Our HTTP client in revision 2026-07-28 against a raw scripted server
 * (raw_server.h) over real 127.0.0.1 sockets: each test answers the client's
 * POSTs as it wants and checks what the client sent.
 *
 * - the request metadata: MCP-Protocol-Version, Mcp-Method, Mcp-Name (plain,
 *   and the Base64 sentinel), the Mcp-Param headers the tools' x-mcp-header
 *   annotations ask for (encoded, omitted for null and absent values), a tool
 *   with invalid annotations left out of tools/list, the _meta of every request,
 *   and no session, no GET, no DELETE;
 * - the auto mode's verdict on each kind of answer to server/discover (modern,
 *   corrected once by -32022, legacy through initialize with the right version,
 *   or a failed connect), the pinned modes;
 * - -32022 to a request: retried once, with a new id;
 * - Multi Round-Trip Requests: the application's handlers answer each input
 *   request, the retry has a new id, the inputResponses under the same keys and
 *   the requestState exactly as given (1 MiB of it too), none when none was
 *   given; progress across rounds; the bound on rounds; what a server must not
 *   ask; a handler that refuses; hostile inputRequests;
 * - a HeaderMismatch to tools/call reads tools/list again and retries once;
 * - cancellation and timeout close the request's stream and send nothing; a
 *   broken stream fails the request without any resumption;
 * - subscriptions/listen: acknowledged, its own notifications (another
 *   subscription's dropped), a graceful end, a drop, a refusal, a cancel that
 *   closes the stream at once, a flood of 20000 notifications beside a request,
 *   the client's end;
 * - a close while a handler answers an input round: the request ends at once, the
 *   handler's late answer is dropped, nothing is sent again.
 *
 * Every wait has a deadline; the only pauses are the scripted server's own.
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

#include <cmocka.h>

#include "client_watch.h"
#include "harness.h"
#include "raw_server.h"

#define CONNECT_MS 10000
#define CALL_MS 10000
#define WAIT_MS 5000

#define META_VERSION "io.modelcontextprotocol/protocolVersion"

typedef struct fixture fixture;
/* Answers a POST the common part did not answer. */
typedef void (*answer_fn)(fixture *f, rs_conn *c, const rs_request *req);

struct fixture {
    rs_server *srv;
    mcp_client *c;
    char url[64];
    pthread_mutex_t mu;
    answer_fn discover; /* NULL: a modern DiscoverResult */
    answer_fn answer;   /* everything else but initialize and tools/list */
    const char *tools;  /* the tools/list result, JSON */
    int rounds;         /* what the MRTR handlers counted */
    int sampled, elicited, progress;
    int refuse; /* the elicitation handler refuses */
    char big_state[1 << 20];
};

/* ---- Answering ---- */

static void send_json(rs_conn *c, int status, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    rs_respond(c, status, "Content-Type: application/json\r\n", text);
    free(text);
    json_decref(msg);
}

/* {"jsonrpc","id","result": result (stolen)} */
static void answer_result(rs_conn *c, const rs_request *req, json_t *result)
{
    send_json(c, 200,
              json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", json_object_get(req->msg, "id"),
                        "result", result));
}

static void answer_error(rs_conn *c, int status, const rs_request *req, int code, const char *msg,
                         json_t *data)
{
    json_t *e = json_pack("{s:i, s:s}", "code", code, "message", msg);
    if (data != NULL)
        json_object_set_new(e, "data", data);
    send_json(c, status,
              json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", json_object_get(req->msg, "id"),
                        "error", e));
}

static json_t *params_of(const rs_request *req)
{
    return json_object_get(req->msg, "params");
}

static json_t *text_result(const char *text)
{
    return json_pack("{s:s, s:[{s:s, s:s}]}", "resultType", "complete", "content", "type", "text",
                     "text", text);
}

static void h_modern(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (strcmp(req->method, "POST") != 0) {
        rs_respond(c, 405, "Allow: POST\r\n", NULL);
        return;
    }
    const char *m = rs_rpc_method(req);
    json_t *id = json_object_get(req->msg, "id");
    if (m == NULL || id == NULL) {
        rs_respond(c, 202, NULL, NULL);
        return;
    }
    if (strcmp(m, "server/discover") == 0) {
        if (f->discover != NULL) {
            f->discover(f, c, req);
            return;
        }
        answer_result(c, req,
                      json_pack("{s:s, s:[s], s:{s:{}, s:{}, s:{}}, s:s, s:{s:{s:s, s:s}}}",
                                "resultType", "complete", "supportedVersions", "2026-07-28",
                                "capabilities", "tools", "resources", "prompts", "instructions",
                                "Be brief.", "_meta", "io.modelcontextprotocol/serverInfo", "name",
                                "raw-modern", "version", "2"));
        return;
    }
    if (strcmp(m, "initialize") == 0) {
        /* A legacy server: it speaks the version offered. */
        const char *v = json_string_value(json_object_get(params_of(req), "protocolVersion"));
        json_t *answer =
            json_pack("{s:s, s:O, s:{s:s, s:{}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id", id,
                      "result", "protocolVersion", v ? v : "?", "capabilities", "serverInfo",
                      "name", "raw-legacy", "version", "1");
        char *text = json_dumps(answer, JSON_COMPACT);
        json_decref(answer);
        rs_respond(c, 200, "Content-Type: application/json\r\nMcp-Session-Id: s1\r\n", text);
        free(text);
        return;
    }
    if (strcmp(m, "tools/list") == 0 && f->tools != NULL) {
        json_t *result = json_pack("{s:s, s:i, s:s}", "resultType", "complete", "ttlMs", 0,
                                   "cacheScope", "private");
        json_object_set_new(result, "tools", json_loads(f->tools, 0, NULL));
        answer_result(c, req, result);
        return;
    }
    if (f->answer != NULL) {
        f->answer(f, c, req);
        return;
    }
    answer_result(c, req, text_result("ok"));
}

/* ---- The client's side ---- */

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    fixture *f = user;
    (void)c, (void)params;
    pthread_mutex_lock(&f->mu);
    f->elicited++;
    int refuse = f->refuse;
    pthread_mutex_unlock(&f->mu);
    if (refuse) {
        err->code = -1;
        snprintf(err->message, sizeof(err->message), "the user is away");
        return NULL;
    }
    return json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "name", "octocat");
}

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    fixture *f = user;
    (void)c, (void)params, (void)err;
    pthread_mutex_lock(&f->mu);
    f->sampled++;
    pthread_mutex_unlock(&f->mu);
    return json_pack("{s:s, s:{s:s, s:s}, s:s}", "role", "assistant", "content", "type", "text",
                     "text", "Paris", "model", "m");
}

static void on_progress(double progress, double total, const char *message, void *user)
{
    fixture *f = user;
    (void)progress, (void)total, (void)message;
    pthread_mutex_lock(&f->mu);
    f->progress++;
    pthread_mutex_unlock(&f->mu);
}

static fixture *start(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *state = f;
    pthread_mutex_init(&f->mu, NULL);
    if (rs_start(&f->srv, h_modern, f) != 0)
        fail_msg("the raw server did not start");
    rs_url(f->srv, f->url, sizeof(f->url));
    f->c = mcp_client_new("modern-test", "3.1");
    assert_non_null(f->c);
    assert_int_equal(mcp_client_set_timeout(f->c, CALL_MS), MCP_OK);
    return f;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f == NULL)
        return 0;
    mcp_client_free(f->c);
    rs_stop(f->srv);
    pthread_mutex_destroy(&f->mu);
    free(f);
    *state = NULL;
    return 0;
}

static void connect_ok(fixture *f)
{
    int rc = mcp_client_connect_http(f->c, f->url, NULL, CONNECT_MS);
    if (rc != MCP_OK) {
        mcp_rpc_error err = {0};
        mcp_client_connect_error(f->c, &err);
        fail_msg("connect to %s: %s (%s)", f->url, mcp_strerror(rc), err.message);
    }
    assert_string_equal(mcp_client_protocol_version(f->c), "2026-07-28");
}

/* The last POST of JSON-RPC method m, or NULL. */
static const rs_request *last_post(fixture *f, const char *m)
{
    const rs_request *found = NULL, *r;
    for (size_t i = 0; (r = rs_nth(f->srv, "POST", i)) != NULL; i++)
        if (rs_rpc_method(r) != NULL && strcmp(rs_rpc_method(r), m) == 0)
            found = r;
    return found;
}

static size_t posts_of(fixture *f, const char *m)
{
    size_t n = 0;
    const rs_request *r;
    for (size_t i = 0; (r = rs_nth(f->srv, "POST", i)) != NULL; i++)
        n += rs_rpc_method(r) != NULL && strcmp(rs_rpc_method(r), m) == 0;
    return n;
}

static void expect_header(const rs_request *req, const char *name, const char *want)
{
    const char *got = rs_header(req, name);
    if (want == NULL && got != NULL)
        fail_msg("%s: unexpected header %s: %s", rs_rpc_method(req), name, got);
    if (want != NULL && (got == NULL || strcmp(got, want) != 0))
        fail_msg("%s: header %s is \"%s\", not \"%s\"", rs_rpc_method(req), name,
                 got ? got : "(absent)", want);
}

static int call(fixture *f, const char *tool, json_t *args, json_t **result, mcp_rpc_error *err)
{
    mcp_call_opts o = {.timeout_ms = CALL_MS, .on_progress = on_progress, .user = f};
    return mcp_client_call_tool(f->c, tool, args, &o, result, err);
}

static void expect_call(fixture *f, const char *tool, json_t *args, const char *text)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = call(f, tool, args, &result, &err);
    if (rc != MCP_OK)
        fail_msg("%s: %s (%d %s)", tool, mcp_strerror(rc), err.code, err.message);
    assert_string_equal(cw_text(result), text);
    json_decref(result);
}

static void expect_call_fails(fixture *f, const char *tool, int want, const char *why)
{
    mcp_rpc_error err = {0};
    int rc = call(f, tool, json_object(), NULL, &err);
    if (rc != want || (why != NULL && strstr(err.message, why) == NULL))
        fail_msg("%s: expected %s (\"%s\"), got %s (%d: %s)", tool, mcp_strerror(want),
                 why ? why : "", mcp_strerror(rc), err.code, err.message);
    printf("%s: %s: %s\n", tool, mcp_strerror(rc), err.message);
    mcp_rpc_error_clear(&err);
}

/* ---- Request metadata ---- */

static const char tools_with_headers[] =
    "[{\"name\":\"search\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
    "\"priority\":{\"type\":\"integer\",\"x-mcp-header\":\"Priority\"},"
    "\"verbose\":{\"type\":\"boolean\",\"x-mcp-header\":\"Verbose\"},"
    "\"text\":{\"type\":\"string\",\"x-mcp-header\":\"Text\"},"
    "\"opts\":{\"type\":\"object\",\"properties\":{"
    "\"level\":{\"type\":\"integer\",\"x-mcp-header\":\"Level\"}}},"
    "\"query\":{\"type\":\"string\"}}}},"
    "{\"name\":\"bad_tool\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"score\":{\"type\":\"number\",\"x-mcp-header\":\"Score\"}}}},"
    "{\"name\":\"h\\u00e9llo\",\"inputSchema\":{\"type\":\"object\"}}]";

static void test_modern_requests_carry_the_revision_headers_and_meta(void **state)
{
    fixture *f = start(state);
    f->tools = tools_with_headers;
    assert_int_equal(mcp_client_on_elicitation(f->c, on_elicitation, f), MCP_OK);
    connect_ok(f);
    assert_string_equal(json_string_value(json_object_get(mcp_client_server_info(f->c), "name")),
                        "raw-modern");
    assert_non_null(json_object_get(mcp_client_server_capabilities(f->c), "prompts"));
    assert_string_equal(mcp_client_instructions(f->c), "Be brief.");
    const rs_request *d = last_post(f, "server/discover");
    expect_header(d, "MCP-Protocol-Version", "2026-07-28");
    expect_header(d, "Mcp-Method", "server/discover");
    expect_header(d, "Mcp-Name", NULL);

    /* The tool with invalid annotations is left out; the others stay. */
    json_t *tools = NULL;
    assert_int_equal(mcp_client_list_all(f->c, "tools/list", "tools", &tools, NULL), MCP_OK);
    assert_int_equal(json_array_size(tools), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
                        "search");
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 1), "name")),
                        "h\xc3\xa9llo");
    json_decref(tools);

    expect_call(f, "search",
                json_pack("{s:s, s:i, s:n, s:s, s:{s:i}, s:s}", "region", "us-west1", "priority",
                          42, "verbose", "text", " padded ", "opts", "level", 3, "query", "q"),
                "ok");
    const rs_request *r = last_post(f, "tools/call");
    expect_header(r, "MCP-Protocol-Version", "2026-07-28");
    expect_header(r, "Mcp-Method", "tools/call");
    expect_header(r, "Mcp-Name", "search");
    expect_header(r, "Mcp-Param-Region", "us-west1");
    expect_header(r, "Mcp-Param-Priority", "42");
    expect_header(r, "Mcp-Param-Verbose", NULL); /* null: left out */
    expect_header(r, "Mcp-Param-Text", "=?base64?IHBhZGRlZCA=?=");
    expect_header(r, "Mcp-Param-Level", "3");
    expect_header(r, "Mcp-Param-Query", NULL); /* not annotated */
    expect_header(r, "Mcp-Session-Id", NULL);
    json_t *meta = json_object_get(params_of(r), "_meta");
    assert_string_equal(json_string_value(json_object_get(meta, META_VERSION)), "2026-07-28");
    assert_non_null(json_object_get(
        json_object_get(meta, "io.modelcontextprotocol/clientCapabilities"), "elicitation"));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(meta, "io.modelcontextprotocol/clientInfo"), "name")),
                        "modern-test");

    /* A value that looks like the sentinel, a boolean, an absent value; a name that is not
     * ASCII. */
    expect_call(f, "search", json_pack("{s:s, s:b}", "region", "=?base64?x?=", "verbose", 1), "ok");
    r = last_post(f, "tools/call");
    expect_header(r, "Mcp-Param-Region", "=?base64?PT9iYXNlNjQ/eD89?=");
    expect_header(r, "Mcp-Param-Verbose", "true");
    expect_header(r, "Mcp-Param-Priority", NULL);
    expect_call(f, "h\xc3\xa9llo", json_object(), "ok");
    expect_header(last_post(f, "tools/call"), "Mcp-Name", "=?base64?aMOpbGxv?=");

    json_t *result = NULL;
    assert_int_equal(mcp_client_read_resource(f->c, "file:///a b.txt", &result, NULL), MCP_OK);
    json_decref(result);
    r = last_post(f, "resources/read");
    expect_header(r, "Mcp-Method", "resources/read");
    expect_header(r, "Mcp-Name", "file:///a b.txt");
    assert_int_equal(mcp_client_get_prompt(f->c, "greet", NULL, &result, NULL), MCP_OK);
    json_decref(result);
    expect_header(last_post(f, "prompts/get"), "Mcp-Name", "greet");
    assert_int_equal(mcp_client_list_prompts(f->c, NULL, &result, NULL), MCP_OK);
    json_decref(result);
    expect_header(last_post(f, "prompts/list"), "Mcp-Name", NULL);
    /* The tasks extension's methods name their task (its routing headers). */
    const char *const task_methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(mcp_client_request(f->c, task_methods[i],
                                            json_pack("{s:s}", "taskId", "task-\xc3\xa9-1"), NULL,
                                            &result, NULL),
                         MCP_OK);
        json_decref(result);
        r = last_post(f, task_methods[i]);
        expect_header(r, "Mcp-Method", task_methods[i]);
        expect_header(r, "Mcp-Name", "=?base64?dGFzay3DqS0x?=");
    }

    /* An integer past 2^53 has no header form: the call is refused, not sent. */
    size_t calls = posts_of(f, "tools/call");
    assert_int_equal(
        call(f, "search", json_pack("{s:I}", "priority", (json_int_t)1 << 60), NULL, NULL),
        MCP_EINVAL);
    assert_int_equal(posts_of(f, "tools/call"), calls);

    /* The modern era has no session: no GET, no DELETE, even once closed. */
    mcp_client_free(f->c);
    f->c = NULL;
    assert_int_equal(rs_count(f->srv, "GET"), 0);
    assert_int_equal(rs_count(f->srv, "DELETE"), 0);
}

/* ---- The auto mode's verdict ---- */

/* How the scripted server answers server/discover in each case. */
static int discover_case;

static void d_case(fixture *f, rs_conn *c, const rs_request *req)
{
    (void)f;
    switch (discover_case) {
    case 0:
        rs_respond(c, 400, NULL, NULL);
        break;
    case 1:
        rs_respond(c, 404, "Content-Type: text/html\r\n", "<h1>Not Found</h1>");
        break;
    case 2:
        rs_respond(c, 405, "Allow: GET\r\n", NULL);
        break;
    case 3: /* what a legacy Streamable HTTP server says to a request without a session */
        answer_error(c, 400, req, -32000, "Bad Request: Server not initialized", NULL);
        break;
    case 4: /* a stateless legacy server: the method does not exist */
        answer_error(c, 200, req, -32601, "Method not found", NULL);
        break;
    case 5:
        answer_result(c, req, json_object()); /* no DiscoverResult */
        break;
    case 6:
        answer_result(c, req, json_pack("{s:[s]}", "supportedVersions", "2025-06-18"));
        break;
    case 7: /* a modern server that speaks only an older revision to us */
        answer_error(c, 400, req, -32022, "Unsupported protocol version",
                     json_pack("{s:[s, s], s:s}", "supported", "2025-06-18", "2024-11-05",
                               "requested", "2026-07-28"));
        break;
    case 8: /* once: then the probe goes again, and succeeds */
        if (posts_of(f, "server/discover") == 1)
            answer_error(c, 400, req, -32022, "Unsupported protocol version",
                         json_pack("{s:[s]}", "supported", "2026-07-28"));
        else
            answer_result(
                c, req,
                json_pack("{s:[s], s:{}}", "supportedVersions", "2026-07-28", "capabilities"));
        break;
    case 9: /* a modern server without server/discover */
        answer_error(c, 404, req, -32601, "Method not found", NULL);
        break;
    case 10:
        answer_error(c, 400, req, -32020, "Header mismatch", NULL);
        break;
    case 11:
        answer_error(c, 400, req, -32021, "Missing capability", NULL);
        break;
    case 12:
        rs_respond(c, 401, "WWW-Authenticate: Bearer\r\n", NULL);
        break;
    case 13:
        rs_respond(c, 500, NULL, "oops");
        break;
    case 14: /* -32022 forever, naming our revision */
        answer_error(c, 400, req, -32022, "Unsupported protocol version",
                     json_pack("{s:[s]}", "supported", "2026-07-28"));
        break;
    }
}

static void test_auto_mode_decides_the_era_by_the_answer_to_server_discover(void **state)
{
    static const struct {
        const char *what;
        int status;             /* the connect's */
        const char *initialize; /* the version initialize offered, NULL: none sent */
        const char *version;    /* the client's protocol version after */
        int discovers;          /* how many server/discover went */
    } cases[] = {
        {"400, no body", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"404, HTML", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"405", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"400, a legacy JSON-RPC error", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"200, -32601", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"200, not a DiscoverResult", MCP_OK, "2025-11-25", "2025-11-25", 1},
        {"200, only older versions", MCP_OK, "2025-06-18", "2025-06-18", 1},
        {"400, -32022 naming older versions", MCP_OK, "2025-06-18", "2025-06-18", 1},
        {"400, -32022 naming ours, once", MCP_OK, NULL, "2026-07-28", 2},
        {"404, -32601", MCP_OK, NULL, "2026-07-28", 1},
        {"400, -32020", MCP_ERPC, NULL, NULL, 1},
        {"400, -32021", MCP_ERPC, NULL, NULL, 1},
        {"401", MCP_EHTTP, NULL, NULL, 1},
        {"500", MCP_EHTTP, NULL, NULL, 1},
        {"400, -32022 naming ours, twice", MCP_ERPC, NULL, NULL, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        fixture *f = start(state);
        f->discover = d_case;
        discover_case = (int)i;
        int rc = mcp_client_connect_http(f->c, f->url, NULL, CONNECT_MS);
        const rs_request *init = last_post(f, "initialize");
        const char *offered =
            init != NULL ? json_string_value(json_object_get(params_of(init), "protocolVersion"))
                         : NULL;
        const char *v = rc == MCP_OK ? mcp_client_protocol_version(f->c) : NULL;
        printf("%-36s -> %s, initialize %s, protocol %s\n", cases[i].what, mcp_strerror(rc),
               offered ? offered : "not sent", v ? v : "-");
        if (rc != cases[i].status)
            fail_msg("%s: connect %s, expected %s", cases[i].what, mcp_strerror(rc),
                     mcp_strerror(cases[i].status));
        if ((offered == NULL) != (cases[i].initialize == NULL) ||
            (offered != NULL && strcmp(offered, cases[i].initialize) != 0))
            fail_msg("%s: initialize offered %s, expected %s", cases[i].what,
                     offered ? offered : "nothing",
                     cases[i].initialize ? cases[i].initialize : "nothing");
        if (cases[i].version != NULL)
            assert_string_equal(v, cases[i].version);
        assert_int_equal(posts_of(f, "server/discover"), cases[i].discovers);
        teardown(state);
    }
}

static void test_pinned_modes_never_cross_eras(void **state)
{
    static const struct {
        const char *protocol;
        int discover;        /* the case of d_case, or -1: a modern DiscoverResult */
        int status;          /* the connect's */
        const char *version; /* after it, when connected */
        size_t discovers, initializes;
    } cases[] = {
        /* Pinned to 2026-07-28: a legacy answer fails, and initialize never goes. */
        {"2026-07-28", 0, MCP_EHTTP, NULL, 1, 0},
        {"2026-07-28", 5, MCP_EPROTO, NULL, 1, 0},
        {"2026-07-28", -1, MCP_OK, "2026-07-28", 1, 0},
        /* Pinned to the legacy era, or to one older revision: no probe; initialize offers it. */
        {"legacy", -1, MCP_OK, "2025-11-25", 0, 1},
        {"2025-03-26", -1, MCP_OK, "2025-03-26", 0, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        fixture *f = start(state);
        if (cases[i].discover >= 0) {
            f->discover = d_case;
            discover_case = cases[i].discover;
        }
        assert_int_equal(mcp_client_set_protocol(f->c, cases[i].protocol), MCP_OK);
        int rc = mcp_client_connect_http(f->c, f->url, NULL, CONNECT_MS);
        mcp_rpc_error err = {0};
        mcp_client_connect_error(f->c, &err);
        printf("pinned %s, case %d: %s %s\n", cases[i].protocol, cases[i].discover,
               mcp_strerror(rc), err.message);
        assert_int_equal(rc, cases[i].status);
        if (rc == MCP_EHTTP)
            assert_non_null(strstr(err.message, "does not speak revision 2026-07-28"));
        mcp_rpc_error_clear(&err);
        if (cases[i].version != NULL)
            assert_string_equal(mcp_client_protocol_version(f->c), cases[i].version);
        assert_int_equal(posts_of(f, "server/discover"), cases[i].discovers);
        assert_int_equal(posts_of(f, "initialize"), cases[i].initializes);
        if (rc == MCP_OK)
            assert_int_equal(mcp_client_set_protocol(f->c, "auto"), MCP_ESTATE); /* too late */
        teardown(state);
    }
    assert_int_equal(mcp_client_set_protocol(NULL, "auto"), MCP_EINVAL);
    mcp_client *other = mcp_client_new("x", "1");
    assert_int_equal(mcp_client_set_protocol(other, "2099-01-01"), MCP_EINVAL);
    assert_int_equal(mcp_client_set_protocol(other, "modern"), MCP_EINVAL);
    assert_int_equal(mcp_client_set_protocol(other, NULL), MCP_EINVAL);
    mcp_client_free(other);
}

/* ---- -32022 to a request ---- */

static void a_unsupported(fixture *f, rs_conn *c, const rs_request *req)
{
    size_t n = posts_of(f, "tools/call");
    if (rs_is_call(req, "twice") || n == 1)
        answer_error(c, 400, req, -32022, "Unsupported protocol version",
                     json_pack("{s:[s]}", "supported", "2026-07-28"));
    else
        answer_result(c, req, text_result("retried"));
}

static void test_unsupported_version_is_retried_once_with_a_new_id(void **state)
{
    fixture *f = start(state);
    f->answer = a_unsupported;
    connect_ok(f);
    expect_call(f, "once", json_object(), "retried");
    assert_int_equal(posts_of(f, "tools/call"), 2);
    const rs_request *a = rs_nth(f->srv, "POST", 1), *b = rs_nth(f->srv, "POST", 2);
    assert_false(json_equal(json_object_get(a->msg, "id"), json_object_get(b->msg, "id")));
    expect_call_fails(f, "twice", MCP_ERPC, "Unsupported protocol version");
    assert_int_equal(posts_of(f, "tools/call"), 4);
}

/* ---- Multi Round-Trip Requests ---- */

/* Round 1 asks for an elicitation, a sampling and the roots with a state; round 2 checks the
 * answers and asks again with a state of 1 MiB; round 3 checks that and completes. Each round
 * sends progress first, on an SSE stream. */
static void a_mrtr(fixture *f, rs_conn *c, const rs_request *req)
{
    json_t *p = params_of(req);
    json_t *responses = json_object_get(p, "inputResponses");
    const char *state = json_string_value(json_object_get(p, "requestState"));
    json_t *id = json_object_get(req->msg, "id");
    json_t *token = json_object_get(json_object_get(p, "_meta"), "progressToken");
    json_t *note = token != NULL ? json_pack("{s:s, s:s, s:{s:O, s:i}}", "jsonrpc", "2.0", "method",
                                             "notifications/progress", "params", "progressToken",
                                             token, "progress", 1)
                                 : NULL;
    char *progress = note != NULL ? json_dumps(note, JSON_COMPACT) : NULL;
    json_decref(note);
    json_t *result;
    if (responses == NULL) {
        result = json_pack(
            "{s:s, s:{s:{s:s, s:{s:s, s:{s:s}}}, s:{s:s, s:{s:[], s:i}}, s:{s:s}}, s:s}",
            "resultType", "input_required", "inputRequests", "login", "method",
            "elicitation/create", "params", "message", "Who?", "requestedSchema", "type", "object",
            "capital", "method", "sampling/createMessage", "params", "messages", "maxTokens", 10,
            "dirs", "method", "roots/list", "requestState", "r\xc3\xa9quest \"state\" 1\\");
    } else if (state != NULL && strcmp(state, "r\xc3\xa9quest \"state\" 1\\") == 0) {
        int ok =
            strcmp(json_string_value(json_object_get(
                       json_object_get(json_object_get(responses, "login"), "content"), "name")),
                   "octocat") == 0 &&
            json_object_get(json_object_get(responses, "capital"), "model") != NULL &&
            json_array_size(json_object_get(json_object_get(responses, "dirs"), "roots")) == 1;
        result = ok ? json_pack("{s:s, s:{s:{s:s}}, s:s}", "resultType", "input_required",
                                "inputRequests", "dirs2", "method", "roots/list", "requestState",
                                f->big_state)
                    : text_result("round 2 got the wrong answers");
    } else if (state != NULL && strcmp(state, f->big_state) == 0) {
        result = text_result(json_object_get(responses, "dirs2") != NULL ? "done"
                                                                         : "round 3 lacks dirs2");
    } else {
        result = text_result("the state came back changed");
    }
    json_t *answer = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
    char *text = json_dumps(answer, JSON_COMPACT);
    json_decref(answer);
    rs_sse_head(c, NULL);
    if (progress != NULL)
        rs_sse_event(c, NULL, -1, progress);
    rs_sse_event(c, NULL, -1, text);
    rs_sse_end(c);
    free(text);
    free(progress);
}

static void test_input_required_rounds_answered_by_the_handlers(void **state)
{
    fixture *f = start(state);
    /* 1 MiB of state, every byte printable, echoed exactly. */
    for (size_t i = 0; i < sizeof(f->big_state) - 1; i++)
        f->big_state[i] = (char)('!' + i % 90);
    f->answer = a_mrtr;
    assert_int_equal(mcp_client_on_elicitation(f->c, on_elicitation, f), MCP_OK);
    assert_int_equal(mcp_client_on_sampling(f->c, on_sampling, f), MCP_OK);
    json_t *roots = json_pack("[{s:s}]", "uri", "file:///work");
    assert_int_equal(mcp_client_set_roots(f->c, roots), MCP_OK);
    json_decref(roots);
    connect_ok(f);
    long long t0 = hc_now_ms();
    expect_call(f, "mrtr", json_pack("{s:s}", "q", "x"), "done");
    printf("three rounds with 1 MiB of state: %lld ms\n", hc_now_ms() - t0);
    assert_int_equal(posts_of(f, "tools/call"), 3);
    assert_int_equal(f->elicited, 1);
    assert_int_equal(f->sampled, 1);
    assert_int_equal(f->progress, 3); /* one per round, to the same callback */
    /* Each round: a new id, the original arguments, the capabilities that were asked for. */
    json_t *ids = json_array();
    const rs_request *r;
    for (size_t i = 0; (r = rs_nth(f->srv, "POST", i)) != NULL; i++) {
        if (!rs_is_call(r, "mrtr"))
            continue;
        for (size_t k = 0; k < json_array_size(ids); k++)
            assert_false(json_equal(json_array_get(ids, k), json_object_get(r->msg, "id")));
        json_array_append(ids, json_object_get(r->msg, "id"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(params_of(r), "arguments"), "q")),
            "x");
        json_t *caps = json_object_get(json_object_get(params_of(r), "_meta"),
                                       "io.modelcontextprotocol/clientCapabilities");
        assert_non_null(json_object_get(caps, "sampling"));
        assert_non_null(json_object_get(caps, "roots"));
        assert_null(json_object_get(json_object_get(caps, "roots"), "listChanged"));
    }
    json_decref(ids);
    /* The first request carried neither inputResponses nor requestState. */
    r = rs_nth(f->srv, "POST", 1);
    assert_null(json_object_get(params_of(r), "inputResponses"));
    assert_null(json_object_get(params_of(r), "requestState"));
}

/* input_required with no requestState, then complete: the retry must carry none. */
static void a_no_state(fixture *f, rs_conn *c, const rs_request *req)
{
    (void)f;
    json_t *p = params_of(req);
    if (json_object_get(p, "inputResponses") == NULL)
        answer_result(c, req,
                      json_pack("{s:s, s:{s:{s:s}}}", "resultType", "input_required",
                                "inputRequests", "r", "method", "roots/list"));
    else if (json_object_get(p, "requestState") != NULL)
        answer_result(c, req, text_result("a requestState came back that was never given"));
    else /* no resultType at all: complete */
        answer_result(c, req,
                      json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "no state"));
}

static void test_request_state_is_omitted_when_none_was_given(void **state)
{
    fixture *f = start(state);
    f->answer = a_no_state;
    json_t *roots = json_pack("[{s:s}]", "uri", "file:///work");
    assert_int_equal(mcp_client_set_roots(f->c, roots), MCP_OK);
    json_decref(roots);
    connect_ok(f);
    expect_call(f, "nostate", json_object(), "no state");
    assert_int_equal(posts_of(f, "tools/call"), 2);
}

/* input_required for ever, with state alone (the client may retry at once). */
static void a_forever(fixture *f, rs_conn *c, const rs_request *req)
{
    (void)f;
    if (rs_is_call(req, "forever"))
        answer_result(c, req,
                      json_pack("{s:s, s:s}", "resultType", "input_required", "requestState", "s"));
    else if (rs_is_call(req, "ask_sampling"))
        answer_result(c, req,
                      json_pack("{s:s, s:{s:{s:s, s:{}}}}", "resultType", "input_required",
                                "inputRequests", "k", "method", "sampling/createMessage",
                                "params"));
    else if (rs_is_call(req, "ask_elicitation"))
        answer_result(c, req,
                      json_pack("{s:s, s:{s:{s:s, s:{s:s}}}}", "resultType", "input_required",
                                "inputRequests", "k", "method", "elicitation/create", "params",
                                "message", "?"));
    else if (rs_is_call(req, "ask_unknown"))
        answer_result(c, req,
                      json_pack("{s:s, s:{s:{s:s}}}", "resultType", "input_required",
                                "inputRequests", "k", "method", "tools/call"));
    else if (rs_is_call(req, "ask_nothing"))
        answer_result(c, req, json_pack("{s:s}", "resultType", "input_required"));
    else if (rs_is_call(req, "ask_array"))
        answer_result(c, req,
                      json_pack("{s:s, s:[]}", "resultType", "input_required", "inputRequests"));
    else if (rs_is_call(req, "ask_many")) {
        json_t *many = json_object();
        for (int i = 0; i < 65; i++) {
            char key[16];
            snprintf(key, sizeof(key), "k%d", i);
            json_object_set_new(many, key, json_pack("{s:s}", "method", "roots/list"));
        }
        answer_result(
            c, req, json_pack("{s:s, s:o}", "resultType", "input_required", "inputRequests", many));
    } else
        answer_result(c, req, text_result("ok"));
}

static void test_input_rounds_are_bounded_and_hostile_requests_refused(void **state)
{
    fixture *f = start(state);
    f->answer = a_forever;
    assert_int_equal(mcp_client_set_max_input_rounds(f->c, 3), MCP_OK);
    assert_int_equal(mcp_client_on_elicitation(f->c, on_elicitation, f), MCP_OK);
    json_t *roots = json_pack("[{s:s}]", "uri", "file:///work");
    assert_int_equal(mcp_client_set_roots(f->c, roots), MCP_OK);
    json_decref(roots);
    connect_ok(f);

    /* Three rounds answered, the fourth input_required ends it. */
    expect_call_fails(f, "forever", MCP_ELIMIT, "more than 3 times");
    assert_int_equal(posts_of(f, "tools/call"), 4);
    /* Sampling, which this client did not declare: no handler runs, no retry goes. */
    size_t before = posts_of(f, "tools/call");
    expect_call_fails(f, "ask_sampling", MCP_EPROTO, "did not declare");
    assert_int_equal(posts_of(f, "tools/call"), before + 1);
    expect_call_fails(f, "ask_unknown", MCP_EPROTO, "no input request");
    expect_call_fails(f, "ask_nothing", MCP_EPROTO, "neither inputRequests nor requestState");
    expect_call_fails(f, "ask_array", MCP_EPROTO, "not an object");
    expect_call_fails(f, "ask_many", MCP_ELIMIT, "65 inputs");
    /* A handler that refuses ends the request with its reason. */
    f->refuse = 1;
    expect_call_fails(f, "ask_elicitation", MCP_ERPC, "the user is away");
    /* And the client goes on. */
    expect_call(f, "plain", json_object(), "ok");
}

/* ---- HeaderMismatch: the tools again, then once more ---- */

static const char *tools_v1 = "[{\"name\":\"route\",\"inputSchema\":{\"type\":\"object\"}}]";
static const char *tools_v2 = "[{\"name\":\"route\",\"inputSchema\":{\"type\":\"object\","
                              "\"properties\":{\"region\":{\"type\":\"string\","
                              "\"x-mcp-header\":\"Region\"}}}}]";

static void a_mismatch(fixture *f, rs_conn *c, const rs_request *req)
{
    if (rs_header(req, "Mcp-Param-Region") == NULL) {
        pthread_mutex_lock(&f->mu);
        f->tools = tools_v2; /* the schema changed */
        pthread_mutex_unlock(&f->mu);
        answer_error(c, 400, req, -32020, "Header mismatch: Mcp-Param-Region is missing", NULL);
        return;
    }
    answer_result(c, req, text_result(rs_header(req, "Mcp-Param-Region")));
}

static void test_header_mismatch_reads_the_tools_again_and_retries_once(void **state)
{
    fixture *f = start(state);
    f->tools = tools_v1;
    f->answer = a_mismatch;
    connect_ok(f);
    json_t *tools = NULL;
    assert_int_equal(mcp_client_list_tools(f->c, NULL, &tools, NULL), MCP_OK);
    json_decref(tools);
    expect_call(f, "route", json_pack("{s:s}", "region", "eu"), "eu");
    assert_int_equal(posts_of(f, "tools/call"), 2);
    assert_int_equal(posts_of(f, "tools/list"), 2);
}

/* ---- Cancellation, timeouts, broken streams ---- */

/* A stream that stays open until the client closes it; the time it did is kept. */
static long long closed_at;

static void a_hold(fixture *f, rs_conn *c, const rs_request *req)
{
    (void)f;
    if (rs_is_call(req, "broken")) {
        rs_sse_head(c, NULL);
        rs_sse_event(c, "e1", 0,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                     "\"params\":{\"level\":\"info\",\"data\":\"x\"}}");
        rs_close_after(c); /* the connection ends mid-stream, with an event id given */
        return;
    }
    if (!rs_is_call(req, "hold")) {
        answer_result(c, req, text_result("ok"));
        return;
    }
    rs_sse_head(c, NULL);
    rs_chunk(c, ": waiting\n\n");
    if (rs_wait_peer_close(c, WAIT_MS * 2) == 0)
        __atomic_store_n(&closed_at, hc_now_ms(), __ATOMIC_SEQ_CST);
}

static void cancel_later(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                         void *user)
{
    (void)c, (void)result, (void)err;
    *(int *)user = status;
}

static void test_cancel_and_timeout_close_the_stream_and_send_nothing(void **state)
{
    fixture *f = start(state);
    f->answer = a_hold;
    connect_ok(f);
    int status = 1;
    long long id = -1;
    json_t *params = json_pack("{s:s, s:{}}", "name", "hold", "arguments");
    assert_int_equal(
        mcp_client_request_async(f->c, "tools/call", params, NULL, cancel_later, &status, &id),
        MCP_OK);
    assert_int_equal(rs_wait(f->srv, "POST", 2, WAIT_MS), 0);
    closed_at = 0;
    long long t0 = hc_now_ms();
    assert_int_equal(mcp_client_cancel(f->c, id, "no longer wanted"), MCP_OK);
    assert_int_equal(rs_wait_done(f->srv, rs_nth(f->srv, "POST", 1), WAIT_MS), 0);
    long long took = __atomic_load_n(&closed_at, __ATOMIC_SEQ_CST) - t0;
    printf("cancel: the server saw the stream close %lld ms later\n", took);
    assert_true(__atomic_load_n(&closed_at, __ATOMIC_SEQ_CST) != 0 && took < 1000);
    /* A request that times out closes its stream too. */
    closed_at = 0;
    mcp_call_opts o = {.timeout_ms = 300};
    t0 = hc_now_ms();
    assert_int_equal(mcp_client_call_tool(f->c, "hold", json_object(), &o, NULL, NULL),
                     MCP_ETIMEDOUT);
    assert_int_equal(rs_wait_done(f->srv, rs_nth(f->srv, "POST", 2), WAIT_MS), 0);
    assert_true(__atomic_load_n(&closed_at, __ATOMIC_SEQ_CST) - t0 < 1300);
    /* Neither sent notifications/cancelled: the closed stream is the cancellation. */
    expect_call(f, "after", json_object(), "ok");
    assert_int_equal(posts_of(f, "notifications/cancelled"), 0);
    assert_int_equal(status, MCP_ECANCELED);
}

static void test_broken_stream_fails_the_request_without_resuming(void **state)
{
    fixture *f = start(state);
    f->answer = a_hold;
    connect_ok(f);
    long long t0 = hc_now_ms();
    expect_call_fails(f, "broken", MCP_ECLOSED, "no resumption");
    assert_true(hc_now_ms() - t0 < WAIT_MS);
    assert_int_equal(rs_count(f->srv, "GET"), 0);
    assert_int_equal(posts_of(f, "tools/call"), 1); /* not sent again behind our back */
}

/* ---- subscriptions/listen over HTTP ---- */

/* What the subscriptions saw, and the flags of the close test, under f->mu; ev_cv is
 * signalled at each change. */
static json_t *listen_events;
static pthread_cond_t ev_cv;
static int ev_cv_ready;
static int gate_entered, gate_open, gate_status, gate_closed;

static void ev_init(void)
{
    if (!ev_cv_ready)
        harness_cond_init_monotonic(&ev_cv);
    ev_cv_ready = 1;
}

/* Waits until done(arg) holds, f->mu held while it is asked. 0, or -1 at the deadline. */
static int ev_wait(fixture *f, int (*done)(const void *arg), const void *arg)
{
    long long deadline = hc_now_ms() + WAIT_MS;
    pthread_mutex_lock(&f->mu);
    int ok;
    while (!(ok = done(arg)) && harness_cond_wait_until(&ev_cv, &f->mu, deadline))
        ;
    pthread_mutex_unlock(&f->mu);
    return ok ? 0 : -1;
}

static void on_listen(mcp_client *c, const mcp_listen_event *ev, void *user)
{
    fixture *f = user;
    (void)c;
    static const char *const kinds[] = {"ack", "note", "end"};
    json_t *e = json_pack("{s:I, s:s, s:s?, s:i, s:s?}", "sub", (json_int_t)ev->subscription_id,
                          "kind", kinds[ev->kind], "method", ev->method, "status", ev->status,
                          "message", ev->err != NULL ? ev->err->message : NULL);
    pthread_mutex_lock(&f->mu);
    json_array_append_new(listen_events, e);
    pthread_cond_broadcast(&ev_cv);
    pthread_mutex_unlock(&f->mu);
}

static size_t events_now(fixture *f)
{
    pthread_mutex_lock(&f->mu);
    size_t n = json_array_size(listen_events);
    pthread_mutex_unlock(&f->mu);
    return n;
}

static int has_events(const void *n)
{
    return json_array_size(listen_events) >= *(const size_t *)n;
}

static void wait_events(fixture *f, size_t n)
{
    if (ev_wait(f, has_events, &n) != 0)
        fail_msg("%zu subscription events, expected %zu", events_now(f), n);
}

/* The i-th event's field. */
static const char *event_str(fixture *f, size_t i, const char *key)
{
    pthread_mutex_lock(&f->mu);
    const char *v = json_string_value(json_object_get(json_array_get(listen_events, i), key));
    pthread_mutex_unlock(&f->mu);
    return v;
}

static long long event_int(fixture *f, size_t i, const char *key)
{
    pthread_mutex_lock(&f->mu);
    long long v = json_integer_value(json_object_get(json_array_get(listen_events, i), key));
    pthread_mutex_unlock(&f->mu);
    return v;
}

/* An SSE event: a notification tagged with subscription sub. */
static void tagged(rs_conn *c, const char *method, json_t *sub)
{
    json_t *n = json_pack("{s:s, s:s, s:{s:{s:O}}}", "jsonrpc", "2.0", "method", method, "params",
                          "_meta", "io.modelcontextprotocol/subscriptionId", sub);
    char *text = json_dumps(n, JSON_COMPACT);
    rs_sse_event(c, NULL, -1, text);
    free(text);
    json_decref(n);
}

static void sse_json(rs_conn *c, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    rs_sse_event(c, NULL, -1, text);
    free(text);
}

/* A listen's mode is the first URI of its filter: graceful, drop, refuse, flood, hold. */
static void a_listen(fixture *f, rs_conn *c, const rs_request *req)
{
    (void)f;
    if (strcmp(rs_rpc_method(req), "subscriptions/listen") != 0) {
        answer_result(c, req, text_result("ok"));
        return;
    }
    json_t *id = json_object_get(req->msg, "id");
    json_t *filter = json_object_get(params_of(req), "notifications");
    const char *mode =
        json_string_value(json_array_get(json_object_get(filter, "resourceSubscriptions"), 0));
    if (strcmp(mode, "refuse") == 0) {
        answer_error(c, 400, req, -32602, "Invalid params: no such resource", NULL);
        return;
    }
    rs_sse_head(c, NULL);
    sse_json(c, json_pack("{s:s, s:s, s:{s:{s:O}, s:O}}", "jsonrpc", "2.0", "method",
                          "notifications/subscriptions/acknowledged", "params", "_meta",
                          "io.modelcontextprotocol/subscriptionId", id, "notifications", filter));
    if (strcmp(mode, "graceful") == 0) {
        tagged(c, "notifications/tools/list_changed", id);
        json_t *other = json_integer(987654); /* a subscription the client does not have */
        tagged(c, "notifications/tools/list_changed", other);
        json_decref(other);
        tagged(c, "notifications/resources/updated", id);
        sse_json(c, json_pack("{s:s, s:O, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0", "id", id, "result",
                              "resultType", "complete", "_meta",
                              "io.modelcontextprotocol/subscriptionId", id));
        rs_sse_end(c);
    } else if (strcmp(mode, "drop") == 0) {
        tagged(c, "notifications/tools/list_changed", id);
        rs_close_after(c); /* cut, with no result */
    } else if (strcmp(mode, "flood") == 0) {
        for (int i = 0; i < 20000; i++)
            tagged(c, "notifications/tools/list_changed", id);
        rs_wait_peer_close(c, WAIT_MS * 2);
    } else if (rs_wait_peer_close(c, WAIT_MS * 2) == 0) {
        __atomic_store_n(&closed_at, hc_now_ms(), __ATOMIC_SEQ_CST);
    }
}

static long long listen_mode(fixture *f, const char *mode)
{
    const char *uris[] = {mode, NULL};
    mcp_listen_filter filter = {.tools_list_changed = 1, .resource_uris = uris};
    long long id = -1;
    assert_int_equal(mcp_client_listen(f->c, &filter, on_listen, f, &id), MCP_OK);
    return id;
}

static void test_listen_over_http_ends_every_way(void **state)
{
    ev_init();
    fixture *f = start(state);
    f->answer = a_listen;
    listen_events = json_array();
    connect_ok(f);

    /* Acknowledged, two notifications of its own (another subscription's dropped), then a
     * graceful end. */
    long long a = listen_mode(f, "graceful");
    wait_events(f, 4);
    assert_string_equal(event_str(f, 0, "kind"), "ack");
    assert_string_equal(event_str(f, 1, "method"), "notifications/tools/list_changed");
    assert_string_equal(event_str(f, 2, "method"), "notifications/resources/updated");
    assert_string_equal(event_str(f, 3, "kind"), "end");
    assert_int_equal(event_int(f, 3, "status"), MCP_OK);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(event_int(f, i, "sub"), a);
    const rs_request *r = last_post(f, "subscriptions/listen");
    expect_header(r, "Mcp-Method", "subscriptions/listen");
    assert_true(json_is_true(
        json_object_get(json_object_get(params_of(r), "notifications"), "toolsListChanged")));

    /* A stream cut without a result: dropped. */
    listen_mode(f, "drop");
    wait_events(f, 7);
    assert_string_equal(event_str(f, 6, "kind"), "end");
    assert_int_equal(event_int(f, 6, "status"), MCP_ECLOSED);

    /* Refused by the server. */
    listen_mode(f, "refuse");
    wait_events(f, 8);
    assert_int_equal(event_int(f, 7, "status"), MCP_ERPC);
    assert_non_null(strstr(event_str(f, 7, "message"), "no such resource"));

    /* Cancelled: the stream closes at once, and nothing else is sent. */
    closed_at = 0;
    long long b = listen_mode(f, "hold");
    wait_events(f, 9);
    long long t0 = hc_now_ms();
    assert_int_equal(mcp_client_cancel(f->c, b, NULL), MCP_OK);
    wait_events(f, 10);
    assert_int_equal(event_int(f, 9, "status"), MCP_ECANCELED);
    assert_int_equal(rs_wait_done(f->srv, last_post(f, "subscriptions/listen"), WAIT_MS), 0);
    assert_true(__atomic_load_n(&closed_at, __ATOMIC_SEQ_CST) - t0 < 1000);
    assert_int_equal(posts_of(f, "notifications/cancelled"), 0);

    /* A flood of 20000 notifications, each delivered, while a request goes on beside it. */
    t0 = hc_now_ms();
    long long d = listen_mode(f, "flood");
    expect_call(f, "beside", json_object(), "ok");
    wait_events(f, 11 + 20000);
    printf("a flood of 20000 notifications over HTTP: %lld ms\n", hc_now_ms() - t0);
    assert_int_equal(mcp_client_cancel(f->c, d, NULL), MCP_OK);
    wait_events(f, 12 + 20000);

    /* The client's end ends what is left. */
    listen_mode(f, "hold");
    wait_events(f, 13 + 20000);
    mcp_client_free(f->c);
    f->c = NULL;
    assert_int_equal(events_now(f), 14 + 20000);
    assert_int_equal(event_int(f, 13 + 20000, "status"), MCP_ECLOSED);
    json_decref(listen_events);
}

/* ---- Closing while a handler answers an input round ---- */

static json_t *slow_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    fixture *f = user;
    (void)c, (void)params, (void)err;
    long long deadline = hc_now_ms() + WAIT_MS;
    pthread_mutex_lock(&f->mu);
    gate_entered = 1;
    pthread_cond_broadcast(&ev_cv);
    while (!gate_open && harness_cond_wait_until(&ev_cv, &f->mu, deadline))
        ;
    pthread_mutex_unlock(&f->mu);
    return json_pack("{s:s, s:{}}", "action", "accept", "content");
}

static void gate_reply(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                       void *user)
{
    fixture *f = user;
    (void)c, (void)result, (void)err;
    pthread_mutex_lock(&f->mu);
    gate_status = status;
    pthread_cond_broadcast(&ev_cv);
    pthread_mutex_unlock(&f->mu);
}

static void gate_closed_cb(void *user)
{
    fixture *f = user;
    pthread_mutex_lock(&f->mu);
    gate_closed = 1;
    pthread_cond_broadcast(&ev_cv);
    pthread_mutex_unlock(&f->mu);
}

static int is_set(const void *flag)
{
    return *(const int *)flag;
}

static int replied(const void *arg)
{
    (void)arg;
    return gate_status != 1;
}

static void test_close_while_a_handler_answers_an_input_round(void **state)
{
    ev_init();
    fixture *f = start(state);
    f->answer = a_forever;
    gate_entered = gate_open = gate_closed = 0;
    gate_status = 1;
    assert_int_equal(mcp_client_on_elicitation(f->c, slow_elicitation, f), MCP_OK);
    connect_ok(f);
    json_t *params = json_pack("{s:s, s:{}}", "name", "ask_elicitation", "arguments");
    assert_int_equal(
        mcp_client_request_async(f->c, "tools/call", params, NULL, gate_reply, f, NULL), MCP_OK);
    assert_int_equal(ev_wait(f, is_set, &gate_entered), 0);
    /* The request ends with the close, while its handler still runs; the handler's late
     * answer is dropped, and nothing is left behind once it returns. */
    assert_int_equal(mcp_client_close(f->c, gate_closed_cb, f), MCP_OK);
    f->c = NULL;
    assert_int_equal(ev_wait(f, replied, NULL), 0);
    pthread_mutex_lock(&f->mu);
    assert_int_equal(gate_status, MCP_ECLOSED);
    assert_false(gate_closed); /* the handler still runs */
    gate_open = 1;
    pthread_cond_broadcast(&ev_cv);
    pthread_mutex_unlock(&f->mu);
    assert_int_equal(ev_wait(f, is_set, &gate_closed), 0);
    assert_int_equal(posts_of(f, "tools/call"), 1); /* no retry after the close */
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        T(test_modern_requests_carry_the_revision_headers_and_meta),
        T(test_auto_mode_decides_the_era_by_the_answer_to_server_discover),
        T(test_pinned_modes_never_cross_eras),
        T(test_unsupported_version_is_retried_once_with_a_new_id),
        T(test_input_required_rounds_answered_by_the_handlers),
        T(test_request_state_is_omitted_when_none_was_given),
        T(test_input_rounds_are_bounded_and_hostile_requests_refused),
        T(test_header_mismatch_reads_the_tools_again_and_retries_once),
        T(test_cancel_and_timeout_close_the_stream_and_send_nothing),
        T(test_broken_stream_fails_the_request_without_resuming),
        T(test_listen_over_http_ends_every_way),
        T(test_close_while_a_handler_answers_an_input_round),
    };
    return cmocka_run_group_tests_name("http_client_modern", tests, NULL, NULL);
}
