/* SPDX-License-Identifier: MIT */
/*
 * Our C client against our C server over stdio: every test connects an
 * mcp_client to a freshly spawned `$MCP_BIN_DIR/mcp-everything --stdio` and
 * checks one feature on the wire, end to end.
 *
 * Client callbacks run on the client's threads, so they only record what
 * they saw (under a mutex, with a condition variable to wait on); the
 * assertions are made on the test thread, with a deadline on every wait.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <mcp/client.h>

#include "harness.h"

#define CONNECT_TIMEOUT_MS 10000
#define CALL_TIMEOUT_MS 10000
#define WAIT_TIMEOUT_MS 5000

#define PNG                                                                                        \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJg" \
    "gg=="
#define WAV "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
#define SAMPLING_TEXT "Four, said the C client's sampling handler."

/* Every tool mcp-everything must list (conformance §5.2 and our extras). */
static const char *const all_tools[] = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
    "echo",
    "add",
    "long_running",
    "notify",
    "list_roots",
    "trigger_resource_update",
    "log_all_levels",
    "slow_echo",
    "ping_client",
    "poll_notify",
};
#define N_TOOLS (sizeof(all_tools) / sizeof(all_tools[0]))

/* ---- What the client's callbacks saw ---- */

typedef struct recorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    json_t *notes;           /* [{"method":..,"params":..}] in arrival order */
    json_t *sampling_params; /* the last sampling/createMessage params */
    int sampling_calls;
    json_t *elicit_params;  /* the last elicitation/create params */
    json_t *elicit_content; /* what the elicitation handler accepts with */
    int elicit_calls;
} recorder;

static recorder rec = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void recorder_reset(void)
{
    pthread_mutex_lock(&rec.mu);
    json_decref(rec.notes);
    rec.notes = json_array();
    json_decref(rec.sampling_params);
    rec.sampling_params = NULL;
    rec.sampling_calls = 0;
    json_decref(rec.elicit_params);
    rec.elicit_params = NULL;
    json_decref(rec.elicit_content);
    rec.elicit_content = json_object();
    rec.elicit_calls = 0;
    pthread_mutex_unlock(&rec.mu);
}

static void on_notification(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c;
    (void)user;
    json_t *note = json_pack("{s:s, s:O?}", "method", method, "params", (json_t *)params);
    pthread_mutex_lock(&rec.mu);
    if (note != NULL && rec.notes != NULL)
        json_array_append_new(rec.notes, note);
    else
        json_decref(note);
    pthread_cond_broadcast(&rec.cv);
    pthread_mutex_unlock(&rec.mu);
}

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c;
    (void)err;
    (void)user;
    pthread_mutex_lock(&rec.mu);
    json_decref(rec.sampling_params);
    rec.sampling_params = json_deep_copy(params);
    rec.sampling_calls++;
    pthread_mutex_unlock(&rec.mu);
    return json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "role", "assistant", "content", "type",
                     "text", "text", SAMPLING_TEXT, "model", "c-test-model", "stopReason",
                     "endTurn");
}

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c;
    (void)err;
    (void)user;
    pthread_mutex_lock(&rec.mu);
    json_decref(rec.elicit_params);
    rec.elicit_params = json_deep_copy(params);
    rec.elicit_calls++;
    json_t *content = json_deep_copy(rec.elicit_content);
    pthread_mutex_unlock(&rec.mu);
    return json_pack("{s:s, s:o}", "action", "accept", "content", content);
}

/* Number of recorded notifications with `method`. */
static int count_notes(const char *method)
{
    int n = 0;
    size_t i;
    json_t *note;
    pthread_mutex_lock(&rec.mu);
    json_array_foreach(rec.notes, i, note)
    {
        if (strcmp(json_string_value(json_object_get(note, "method")), method) == 0)
            n++;
    }
    pthread_mutex_unlock(&rec.mu);
    return n;
}

/* Number of recorded notifications/resources/updated for `uri`. */
static int count_updates(const char *uri)
{
    int n = 0;
    size_t i;
    json_t *note;
    pthread_mutex_lock(&rec.mu);
    json_array_foreach(rec.notes, i, note)
    {
        const char *m = json_string_value(json_object_get(note, "method"));
        const char *u = json_string_value(json_object_get(json_object_get(note, "params"), "uri"));
        if (strcmp(m, "notifications/resources/updated") == 0 && u && strcmp(u, uri) == 0)
            n++;
    }
    pthread_mutex_unlock(&rec.mu);
    return n;
}

/* Waits until count_updates(uri) >= n. Returns 1, or 0 at the deadline. */
static int wait_updates(const char *uri, int n, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        if (count_updates(uri) >= n)
            return 1;
        pthread_mutex_lock(&rec.mu);
        int more = harness_cond_wait_until(&rec.cv, &rec.mu, deadline);
        pthread_mutex_unlock(&rec.mu);
        if (!more)
            return count_updates(uri) >= n;
    }
}

/* ---- Connecting ---- */

static mcp_client *connect_everything(const char *const extra[])
{
    char path[4096];
    const char *argv[16];
    size_t n = 0;

    if (harness_bin_path("mcp-everything", path, sizeof(path)) != 0)
        return NULL;
    argv[n++] = path;
    argv[n++] = "--stdio";
    for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 15; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;

    mcp_client *c = mcp_client_new("stdio-client-server-test", "1.0.0");
    if (c == NULL)
        return NULL;
    /* The legacy era: what this test is about. */
    mcp_client_set_protocol(c, "legacy");
    json_t *roots = json_pack("[{s:s, s:s}, {s:s}]", "uri", "file:///tmp/mcp-root-a", "name",
                              "Root A", "uri", "file:///tmp/mcp-root-b");
    int rc = MCP_OK;
    if (roots == NULL)
        rc = MCP_ENOMEM;
    if (rc == MCP_OK)
        rc = mcp_client_set_timeout(c, CALL_TIMEOUT_MS);
    if (rc == MCP_OK)
        rc = mcp_client_on_sampling(c, on_sampling, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_on_elicitation(c, on_elicitation, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_set_roots(c, roots);
    if (rc == MCP_OK)
        rc = mcp_client_on_notification(c, on_notification, NULL);
    json_decref(roots);
    if (rc == MCP_OK)
        rc = mcp_client_connect_stdio(c, argv, CONNECT_TIMEOUT_MS);
    if (rc != MCP_OK) {
        fprintf(stderr, "connecting to %s failed: %s\n", path, mcp_strerror(rc));
        mcp_client_free(c);
        return NULL;
    }
    return c;
}

static int setup(void **state)
{
    recorder_reset();
    mcp_client *c = connect_everything(NULL);
    if (c == NULL)
        return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    mcp_client_free(*state);
    *state = NULL;
    return 0;
}

/* ---- Helpers ---- */

static char *dump(const json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
    return s ? s : strdup("(null)");
}

static void fail_rc(const char *what, int rc, const mcp_rpc_error *err)
{
    fail_msg("%s: %s (%d)%s%s (rpc code %d)", what, mcp_strerror(rc), rc,
             rc == MCP_ERPC ? ": " : "", rc == MCP_ERPC ? err->message : "",
             rc == MCP_ERPC ? err->code : 0);
}

/* Calls a tool and asserts the call itself succeeded; returns the result. */
static json_t *call_tool(mcp_client *c, const char *name, json_t *args)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, name, args, NULL, &result, &err);
    if (rc != MCP_OK)
        fail_rc(name, rc, &err);
    assert_non_null(result);
    return result;
}

/* The text of content[0], which must be a text block. */
static const char *first_text(const json_t *result)
{
    json_t *block = json_array_get(json_object_get(result, "content"), 0);
    const char *type = json_string_value(json_object_get(block, "type"));
    const char *text = json_string_value(json_object_get(block, "text"));
    if (type == NULL || strcmp(type, "text") != 0 || text == NULL) {
        char *s = dump(result);
        fail_msg("result has no text block first: %s", s);
    }
    return text;
}

/* Asserts result equals expected (stolen), ignoring only "_meta" and an
 * "isError":false that says the same as its absence. */
static void assert_result_equal(const char *what, const json_t *result, json_t *expected)
{
    json_t *got = json_deep_copy(result);
    assert_non_null(got);
    assert_non_null(expected);
    json_object_del(got, "_meta");
    if (json_is_false(json_object_get(got, "isError")))
        json_object_del(got, "isError");
    if (!json_equal(got, expected)) {
        char *g = dump(got), *e = dump(expected);
        fail_msg("%s:\n  got      %s\n  expected %s", what, g, e);
    }
    json_decref(got);
    json_decref(expected);
}

static json_t *find_by_key(const json_t *array, const char *key, const char *value)
{
    size_t i;
    json_t *item;
    json_array_foreach(array, i, item)
    {
        const char *v = json_string_value(json_object_get(item, key));
        if (v != NULL && strcmp(v, value) == 0)
            return item;
    }
    return NULL;
}

static json_t *list_all(mcp_client *c, const char *method, const char *key)
{
    json_t *items = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, method, key, &items, &err);
    if (rc != MCP_OK)
        fail_rc(method, rc, &err);
    assert_true(json_is_array(items));
    return items;
}

/* The JSON object printed after "content=" in an elicitation tool's text. */
static json_t *elicited_content(const char *text)
{
    const char *p = strstr(text, "content=");
    p = p ? strchr(p, '{') : strchr(text, '{');
    if (p == NULL)
        fail_msg("no JSON object in \"%s\"", text);
    json_error_t jerr;
    json_t *obj = json_loads(p, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!json_is_object(obj))
        fail_msg("cannot parse the content in \"%s\": %s", text, jerr.text);
    return obj;
}

/* ---- Lifecycle ---- */

static void test_initialize_negotiates_latest_version_and_reports_server(void **state)
{
    mcp_client *c = *state;
    const char *version = mcp_client_protocol_version(c);
    assert_non_null(version);
    assert_string_equal(version, "2025-11-25");

    const json_t *info = mcp_client_server_info(c);
    const char *name = json_string_value(json_object_get(info, "name"));
    const char *ver = json_string_value(json_object_get(info, "version"));
    if (name == NULL || name[0] == '\0' || ver == NULL || ver[0] == '\0') {
        char *s = dump(info);
        fail_msg("serverInfo lacks name or version: %s", s);
    }

    const json_t *caps = mcp_client_server_capabilities(c);
    char *s = dump(caps);
    if (!json_is_object(json_object_get(caps, "tools")) ||
        !json_is_object(json_object_get(caps, "resources")) ||
        !json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")) ||
        !json_is_object(json_object_get(caps, "prompts")) ||
        !json_is_object(json_object_get(caps, "logging")) ||
        !json_is_object(json_object_get(caps, "completions")))
        fail_msg("capabilities miss tools, resources.subscribe, prompts, logging or "
                 "completions: %s",
                 s);
    free(s);

    const char *instructions = mcp_client_instructions(c);
    assert_non_null(instructions);
    assert_true(strlen(instructions) > 0);
}

static void test_ping_is_answered_with_empty_object(void **state)
{
    mcp_client *c = *state;
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);

    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, "ping", NULL, NULL, &result, &err);
    if (rc != MCP_OK)
        fail_rc("ping", rc, &err);
    assert_true(json_is_object(result));
    assert_int_equal(json_object_size(result), 0);
    json_decref(result);
}

/* ---- Tools ---- */

static void test_tools_list_describes_every_tool(void **state)
{
    mcp_client *c = *state;
    json_t *tools = list_all(c, "tools/list", "tools");

    for (size_t i = 0; i < N_TOOLS; i++) {
        int seen = 0;
        size_t j;
        json_t *tool;
        json_array_foreach(tools, j, tool)
        {
            const char *n = json_string_value(json_object_get(tool, "name"));
            if (n != NULL && strcmp(n, all_tools[i]) == 0)
                seen++;
        }
        if (seen != 1)
            fail_msg("tool %s listed %d times", all_tools[i], seen);
    }

    size_t j;
    json_t *tool;
    json_array_foreach(tools, j, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        const char *desc = json_string_value(json_object_get(tool, "description"));
        json_t *schema = json_object_get(tool, "inputSchema");
        const char *type = json_string_value(json_object_get(schema, "type"));
        if (name == NULL || desc == NULL || desc[0] == '\0' || type == NULL ||
            strcmp(type, "object") != 0) {
            char *s = dump(tool);
            fail_msg("tool without name, description or object inputSchema: %s", s);
        }
    }

    json_t *want = json_loads(
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{"
        "\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
        "\"properties\":{\"name\":{\"type\":\"string\"},"
        "\"address\":{\"$ref\":\"#/$defs/address\"},"
        "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
        "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
        "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
        "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
        "\"required\":[\"contactMethod\"]},"
        "\"then\":{\"required\":[\"phone\"]},"
        "\"else\":{\"required\":[\"email\"]},"
        "\"additionalProperties\":false}",
        0, NULL);
    assert_non_null(want);
    json_t *schema =
        json_object_get(find_by_key(tools, "name", "json_schema_2020_12_tool"), "inputSchema");
    if (!json_equal(schema, want)) {
        char *g = dump(schema), *e = dump(want);
        fail_msg("json_schema_2020_12_tool inputSchema not verbatim:\n  got      %s\n  "
                 "expected %s",
                 g, e);
    }
    json_decref(want);
    json_decref(tools);
}

static void test_content_tools_return_their_exact_results(void **state)
{
    mcp_client *c = *state;
    struct {
        const char *name;
        json_t *args;
        json_t *expected;
    } cases[] = {
        {"test_simple_text", NULL,
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
                   "This is a simple text response for testing.")},
        {"test_image_content", json_object(),
         json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "image", "data", PNG, "mimeType",
                   "image/png")},
        {"test_audio_content", NULL,
         json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "audio", "data", WAV, "mimeType",
                   "audio/wav")},
        {"test_embedded_resource", NULL,
         json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}]}", "content", "type", "resource", "resource",
                   "uri", "test://embedded-resource", "mimeType", "text/plain", "text",
                   "This is an embedded resource content.")},
        {"test_multiple_content_types", NULL,
         json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:{s:s, s:s, s:s}}]}", "content", "type",
                   "text", "text", "Multiple content types test:", "type", "image", "data", PNG,
                   "mimeType", "image/png", "type", "resource", "resource", "uri",
                   "test://mixed-content-resource", "mimeType", "application/json", "text",
                   "{\"test\":\"data\",\"value\":123}")},
        {"test_tool_with_logging", NULL,
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
                   "Tool with logging executed successfully")},
        {"test_reconnection", NULL,
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
                   "Reconnection test completed successfully. If you received this, the client "
                   "properly reconnected after stream closure.")},
        {"echo", json_pack("{s:s}", "text", "hello, world"),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "hello, world")},
        {"poll_notify", json_pack("{s:i, s:i, s:i}", "count", 2, "delay_ms", 0, "close_after", 0),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "sent 2")},
        {"ping_client", NULL,
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "pong")},
        {"slow_echo", json_pack("{s:s, s:i}", "text", "slowly", "delay_ms", 10),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "slowly")},
        {"notify", json_pack("{s:i}", "count", 2),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "sent 2")},
        {"log_all_levels", NULL,
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "logged")},
        {"long_running", json_pack("{s:i, s:i}", "steps", 2, "delay_ms", 1),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "completed 2 steps")},
        {"trigger_resource_update", json_pack("{s:s}", "uri", "test://watched-resource"),
         json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "updated")},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *result = call_tool(c, cases[i].name, cases[i].args);
        assert_result_equal(cases[i].name, result, cases[i].expected);
        json_decref(result);
    }

    /* These return text whose wording is free; the text must be there. */
    json_t *result = call_tool(c, "test_tool_with_progress", NULL);
    assert_non_null(first_text(result));
    json_decref(result);

    result = call_tool(c, "json_schema_2020_12_tool",
                       json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "name", "Ada Lovelace", "address",
                                 "street", "1 Analytical Way", "city", "London", "contactMethod",
                                 "email", "email", "ada@example.com"));
    if (strstr(first_text(result), "Ada Lovelace") == NULL)
        fail_msg("json_schema_2020_12_tool does not echo its arguments: %s", first_text(result));
    json_decref(result);
}

static void test_add_returns_structured_content_and_declares_output_schema(void **state)
{
    mcp_client *c = *state;
    json_t *result = call_tool(c, "add", json_pack("{s:f, s:i}", "a", 2.5, "b", 4));
    json_t *structured = json_object_get(result, "structuredContent");
    json_t *sum = json_object_get(structured, "sum");
    if (!json_is_object(structured) || json_object_size(structured) != 1 || !json_is_number(sum) ||
        json_number_value(sum) != 6.5) {
        char *s = dump(result);
        fail_msg("add 2.5 + 4: expected structuredContent {\"sum\":6.5}, got %s", s);
    }
    assert_false(json_is_true(json_object_get(result, "isError")));
    /* The same object as a text block, for clients without structured output. */
    json_t *content = json_object_get(result, "content");
    assert_int_equal(json_array_size(content), 1);
    json_t *as_text = json_loads(first_text(result), 0, NULL);
    if (!json_is_object(as_text) || json_number_value(json_object_get(as_text, "sum")) != 6.5 ||
        json_object_size(as_text) != 1)
        fail_msg("add's text block is not the structured content: %s", first_text(result));
    json_decref(as_text);
    json_decref(result);

    json_t *tools = list_all(c, "tools/list", "tools");
    json_t *add = find_by_key(tools, "name", "add");
    assert_non_null(add);
    json_t *want = json_pack("{s:s, s:{s:{s:s}}, s:[s]}", "type", "object", "properties", "sum",
                             "type", "number", "required", "sum");
    if (!json_equal(json_object_get(add, "outputSchema"), want)) {
        char *s = dump(add);
        fail_msg("add's outputSchema is not as documented: %s", s);
    }
    json_decref(want);
    const char *title = json_string_value(json_object_get(add, "title"));
    assert_non_null(title);
    assert_string_equal(title, "Add two numbers");
    json_t *ann = json_object_get(add, "annotations");
    assert_true(json_is_true(json_object_get(ann, "readOnlyHint")));
    assert_true(json_is_true(json_object_get(ann, "idempotentHint")));
    json_decref(tools);
}

static void test_error_handling_tool_returns_is_error_result(void **state)
{
    mcp_client *c = *state;
    json_t *result = call_tool(c, "test_error_handling", NULL);
    assert_result_equal("test_error_handling", result,
                        json_pack("{s:b, s:[{s:s, s:s}]}", "isError", 1, "content", "type", "text",
                                  "text", "This tool intentionally returns an error for testing"));
    json_decref(result);
}

static void test_unknown_tool_gets_invalid_params_error(void **state)
{
    mcp_client *c = *state;
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(c, "no_such_tool", json_object(), NULL, &result, &err);
    if (rc != MCP_ERPC)
        fail_msg("unknown tool: expected MCP_ERPC, got %s (result %s)", mcp_strerror(rc),
                 dump(result));
    assert_int_equal(err.code, -32602);
    assert_null(result);
    mcp_rpc_error_clear(&err);
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
}

static void test_tool_arguments_violating_schema_give_is_error_naming_field(void **state)
{
    mcp_client *c = *state;
    json_t *result = call_tool(c, "echo", json_pack("{s:i}", "text", 5));
    if (!json_is_true(json_object_get(result, "isError"))) {
        char *s = dump(result);
        fail_msg("echo with text=5: expected isError true, got %s", s);
    }
    const char *text = first_text(result);
    if (strstr(text, "text") == NULL)
        fail_msg("the schema error does not name the field \"text\": %s", text);
    json_decref(result);
}

/* ---- Progress and cancellation ---- */

typedef struct progress_log {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    double progress[64];
    double total[64];
    char message[64][48];
    /* For the asynchronous request: */
    int done_calls;
    int status;
} progress_log;

static void progress_log_init(progress_log *p)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    harness_cond_init_monotonic(&p->cv);
}

static void progress_log_destroy(progress_log *p)
{
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

static void on_progress(double progress, double total, const char *message, void *user)
{
    progress_log *p = user;
    pthread_mutex_lock(&p->mu);
    if (p->n < 64) {
        p->progress[p->n] = progress;
        p->total[p->n] = total;
        snprintf(p->message[p->n], sizeof(p->message[p->n]), "%s", message ? message : "");
    }
    p->n++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void on_response(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                        void *user)
{
    (void)c;
    (void)result;
    (void)err;
    progress_log *p = user;
    pthread_mutex_lock(&p->mu);
    p->status = status;
    p->done_calls++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void test_progress_arrives_in_order_before_the_result(void **state)
{
    mcp_client *c = *state;
    progress_log p;
    progress_log_init(&p);
    mcp_call_opts opts = {.on_progress = on_progress, .user = &p};
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc =
        mcp_client_call_tool(c, "long_running", json_pack("{s:i, s:i}", "steps", 5, "delay_ms", 20),
                             &opts, &result, &err);
    if (rc != MCP_OK)
        fail_rc("long_running", rc, &err);

    /* Read at once: every notification came before the result. */
    pthread_mutex_lock(&p.mu);
    int n = p.n;
    pthread_mutex_unlock(&p.mu);
    assert_string_equal(first_text(result), "completed 5 steps");
    json_decref(result);
    if (n != 5)
        fail_msg("expected 5 progress notifications before the result, got %d", n);
    for (int i = 0; i < n; i++) {
        char want[48];
        if (i > 0 && !(p.progress[i] > p.progress[i - 1]))
            fail_msg("progress not increasing: %g after %g", p.progress[i], p.progress[i - 1]);
        if (p.total[i] != 5)
            fail_msg("progress %d: total %g, expected 5", i, p.total[i]);
        snprintf(want, sizeof(want), "step %d", (int)p.progress[i]);
        if (strcmp(p.message[i], want) != 0)
            fail_msg("progress %g: message \"%s\", expected \"%s\"", p.progress[i], p.message[i],
                     want);
    }
    assert_true(p.progress[n - 1] <= 5);
    progress_log_destroy(&p);
}

static void test_cancel_ends_request_with_ecanceled_and_server_keeps_serving(void **state)
{
    mcp_client *c = *state;
    progress_log p;
    progress_log_init(&p);
    mcp_call_opts opts = {.on_progress = on_progress, .user = &p};
    json_t *params = json_pack("{s:s, s:{s:i, s:i}}", "name", "long_running", "arguments", "steps",
                               50, "delay_ms", 100);
    long long id = -1;
    int rc = mcp_client_request_async(c, "tools/call", params, &opts, on_response, &p, &id);
    assert_int_equal(rc, MCP_OK);
    assert_true(id >= 0);

    /* Cancel once the tool is running (its first progress arrived). */
    long long deadline = harness_now_ms() + WAIT_TIMEOUT_MS;
    pthread_mutex_lock(&p.mu);
    while (p.n == 0 && p.done_calls == 0 && harness_cond_wait_until(&p.cv, &p.mu, deadline))
        ;
    int started = p.n;
    pthread_mutex_unlock(&p.mu);
    if (started == 0)
        fail_msg("long_running sent no progress within %d ms", WAIT_TIMEOUT_MS);

    long long t0 = harness_now_ms();
    assert_int_equal(mcp_client_cancel(c, id, "test cancels"), MCP_OK);
    deadline = harness_now_ms() + WAIT_TIMEOUT_MS;
    pthread_mutex_lock(&p.mu);
    while (p.done_calls == 0 && harness_cond_wait_until(&p.cv, &p.mu, deadline))
        ;
    int done = p.done_calls, status = p.status;
    pthread_mutex_unlock(&p.mu);
    assert_int_equal(done, 1);
    if (status != MCP_ECANCELED)
        fail_msg("cancelled request completed with %s, expected MCP_ECANCELED",
                 mcp_strerror(status));
    assert_true(harness_now_ms() - t0 < 2000);

    /* The server keeps serving, and the cancelled request completes once. */
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
    json_t *result = call_tool(c, "echo", json_pack("{s:s}", "text", "after cancel"));
    assert_string_equal(first_text(result), "after cancel");
    json_decref(result);
    pthread_mutex_lock(&p.mu);
    assert_int_equal(p.done_calls, 1);
    pthread_mutex_unlock(&p.mu);
    progress_log_destroy(&p);
}

static void test_request_timeout_returns_etimedout_and_client_still_works(void **state)
{
    mcp_client *c = *state;
    mcp_call_opts opts = {.timeout_ms = 200};
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    long long t0 = harness_now_ms();
    int rc = mcp_client_call_tool(c, "slow_echo",
                                  json_pack("{s:s, s:i}", "text", "too late", "delay_ms", 2000),
                                  &opts, &result, &err);
    long long elapsed = harness_now_ms() - t0;
    if (rc != MCP_ETIMEDOUT)
        fail_msg("slow_echo with timeout 200 ms: expected MCP_ETIMEDOUT, got %s", mcp_strerror(rc));
    assert_null(result);
    if (elapsed < 150 || elapsed > 1500)
        fail_msg("the 200 ms timeout fired after %lld ms", elapsed);

    result = call_tool(c, "echo", json_pack("{s:s}", "text", "still here"));
    assert_string_equal(first_text(result), "still here");
    json_decref(result);
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
}

/* Calls slow_echo for 2 s with opts, which set a timeout of 200 ms: it must be kept (the
 * client's own timeout is far longer). */
static void expect_200_ms_timeout(mcp_client *c, const mcp_call_opts *opts)
{
    json_t *result = NULL;
    int rc = mcp_client_call_tool(c, "slow_echo",
                                  json_pack("{s:s, s:i}", "text", "too late", "delay_ms", 2000),
                                  opts, &result, NULL);
    if (rc != MCP_ETIMEDOUT)
        fail_msg("slow_echo with timeout 200 ms: expected MCP_ETIMEDOUT, got %s", mcp_strerror(rc));
    assert_null(result);
}

static void test_call_opts_are_read_with_their_size_and_a_short_size_is_refused(void **state)
{
    mcp_client *c = *state;
    mcp_call_opts opts = {.size = sizeof(mcp_call_opts), .timeout_ms = 200};
    expect_200_ms_timeout(c, &opts);
    /* A program built against a later header: its options go on past ours, with values
     * this release knows nothing of and ignores. */
    const size_t later = sizeof(opts) + 8 * sizeof(void *);
    unsigned char *buf = malloc(later);
    assert_non_null(buf);
    memset(buf, 0xa5, later);
    opts.size = later;
    memcpy(buf, &opts, sizeof(opts));
    expect_200_ms_timeout(c, (const mcp_call_opts *)buf);
    free(buf);
    /* Shorter than the size field itself: refused before anything is sent, and the
     * params are released all the same. */
    for (size_t size = 1; size < sizeof(size_t); size++) {
        opts.size = size;
        json_t *result = NULL;
        assert_int_equal(
            mcp_client_call_tool(c, "echo", json_pack("{s:s}", "text", "x"), &opts, &result, NULL),
            MCP_EINVAL);
        assert_null(result);
        assert_int_equal(
            mcp_client_request_async(c, "ping", json_object(), &opts, NULL, NULL, NULL),
            MCP_EINVAL);
    }
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
}

typedef struct worker_arg {
    mcp_client *c;
    int thread;
    int ok;
    char failure[512];
} worker_arg;

static void *concurrent_worker(void *arg)
{
    worker_arg *w = arg;
    w->ok = 0;
    for (int i = 0; i < 5; i++) {
        char text[64];
        snprintf(text, sizeof(text), "thread %d call %d", w->thread, i);
        json_t *result = NULL;
        mcp_rpc_error err = {0};
        int rc = mcp_client_call_tool(w->c, "slow_echo",
                                      json_pack("{s:s, s:i}", "text", text, "delay_ms", 50), NULL,
                                      &result, &err);
        if (rc != MCP_OK) {
            snprintf(w->failure, sizeof(w->failure), "%.64s: %.100s %.255s", text, mcp_strerror(rc),
                     err.message);
            mcp_rpc_error_clear(&err);
            return NULL;
        }
        const char *got = json_string_value(
            json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
        if (got == NULL || strcmp(got, text) != 0) {
            snprintf(w->failure, sizeof(w->failure), "%.64s: got \"%.200s\"", text, got ? got : "");
            json_decref(result);
            return NULL;
        }
        json_decref(result);
        w->ok++;
    }
    return NULL;
}

static void test_concurrent_requests_from_threads_get_their_own_answers(void **state)
{
    mcp_client *c = *state;
    pthread_t threads[4];
    worker_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){.c = c, .thread = i};
        assert_int_equal(pthread_create(&threads[i], NULL, concurrent_worker, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; i++) {
        if (args[i].ok != 5)
            fail_msg("thread %d: %d of 5 calls right; %s", i, args[i].ok, args[i].failure);
    }
}

/* ---- Logging ---- */

static void test_log_level_warning_delivers_five_levels_in_order_before_result(void **state)
{
    mcp_client *c = *state;
    mcp_rpc_error err = {0};
    int rc = mcp_client_set_logging_level(c, MCP_LOG_WARNING, &err);
    if (rc != MCP_OK)
        fail_rc("logging/setLevel", rc, &err);
    recorder_reset();

    json_t *result = call_tool(c, "log_all_levels", NULL);
    /* Taken at once: the notifications must all precede the result. */
    pthread_mutex_lock(&rec.mu);
    json_t *notes = json_deep_copy(rec.notes);
    pthread_mutex_unlock(&rec.mu);
    assert_string_equal(first_text(result), "logged");
    json_decref(result);

    static const char *const want[] = {"warning", "error", "critical", "alert", "emergency"};
    size_t k = 0, i;
    json_t *note;
    json_array_foreach(notes, i, note)
    {
        if (strcmp(json_string_value(json_object_get(note, "method")), "notifications/message"))
            continue;
        json_t *params = json_object_get(note, "params");
        const char *level = json_string_value(json_object_get(params, "level"));
        const char *data = json_string_value(json_object_get(params, "data"));
        if (k >= 5 || level == NULL || strcmp(level, want[k]) != 0 || data == NULL ||
            strcmp(data, want[k]) != 0) {
            char *s = dump(notes);
            fail_msg("log message %zu is not %s: %s", k, k < 5 ? want[k] : "(none)", s);
        }
        k++;
    }
    if (k != 5) {
        char *s = dump(notes);
        fail_msg("expected 5 log messages before the result, got %zu: %s", k, s);
    }
    json_decref(notes);
}

static void test_tool_with_logging_sends_three_messages_before_result(void **state)
{
    mcp_client *c = *state;
    mcp_rpc_error err = {0};
    int rc = mcp_client_set_logging_level(c, MCP_LOG_DEBUG, &err);
    if (rc != MCP_OK)
        fail_rc("logging/setLevel", rc, &err);
    recorder_reset();
    json_t *result = call_tool(c, "test_tool_with_logging", NULL);
    int n = count_notes("notifications/message");
    assert_string_equal(first_text(result), "Tool with logging executed successfully");
    json_decref(result);
    if (n != 3) {
        pthread_mutex_lock(&rec.mu);
        char *s = dump(rec.notes);
        pthread_mutex_unlock(&rec.mu);
        fail_msg("expected 3 log messages before the result, got %d: %s", n, s);
    }
}

/* ---- Server -> client requests ---- */

static void test_sampling_handler_answer_reaches_the_tool_result(void **state)
{
    mcp_client *c = *state;
    json_t *result = call_tool(c, "test_sampling", json_pack("{s:s}", "prompt", "What is 2+2?"));
    const char *text = first_text(result);
    if (strstr(text, SAMPLING_TEXT) == NULL)
        fail_msg("test_sampling result lacks the handler's text: %s", text);
    json_decref(result);

    pthread_mutex_lock(&rec.mu);
    int calls = rec.sampling_calls;
    json_t *params = json_incref(rec.sampling_params);
    pthread_mutex_unlock(&rec.mu);
    assert_int_equal(calls, 1);
    const char *prompt = json_string_value(json_object_get(
        json_object_get(json_array_get(json_object_get(params, "messages"), 0), "content"),
        "text"));
    assert_non_null(prompt);
    assert_string_equal(prompt, "What is 2+2?");
    assert_true(json_is_integer(json_object_get(params, "maxTokens")));
    json_decref(params);
}

static void test_elicitation_request_reaches_the_handler(void **state)
{
    mcp_client *c = *state;
    pthread_mutex_lock(&rec.mu);
    json_decref(rec.elicit_content);
    rec.elicit_content =
        json_pack("{s:s, s:s}", "username", "testuser", "email", "test@example.com");
    pthread_mutex_unlock(&rec.mu);

    json_t *result =
        call_tool(c, "test_elicitation", json_pack("{s:s}", "message", "Who are you?"));
    const char *text = first_text(result);
    if (strstr(text, "accept") == NULL || strstr(text, "testuser") == NULL)
        fail_msg("test_elicitation result does not report the answer: %s", text);
    json_decref(result);

    pthread_mutex_lock(&rec.mu);
    assert_int_equal(rec.elicit_calls, 1);
    const char *message = json_string_value(json_object_get(rec.elicit_params, "message"));
    assert_non_null(message);
    assert_string_equal(message, "Who are you?");
    assert_true(json_is_object(json_object_get(rec.elicit_params, "requestedSchema")));
    pthread_mutex_unlock(&rec.mu);
}

static void test_elicitation_defaults_are_filled_in_by_the_client(void **state)
{
    mcp_client *c = *state;
    /* The handler accepts with nothing: every field must come from a default. */
    json_t *result = call_tool(c, "test_elicitation_sep1034_defaults", NULL);
    const char *text = first_text(result);
    if (strstr(text, "accept") == NULL)
        fail_msg("not accepted: %s", text);
    json_t *content = elicited_content(text);
    json_t *want = json_pack("{s:s, s:i, s:f, s:s, s:b}", "name", "John Doe", "age", 30, "score",
                             95.5, "status", "active", "verified", 1);
    if (!json_equal(content, want))
        fail_msg("defaults not filled in as the schema says: %s", text);
    json_decref(want);
    json_decref(content);
    json_decref(result);
}

static void test_elicitation_defaults_keep_values_the_handler_gave(void **state)
{
    mcp_client *c = *state;
    pthread_mutex_lock(&rec.mu);
    json_decref(rec.elicit_content);
    rec.elicit_content = json_pack("{s:s, s:b}", "name", "Jane Roe", "verified", 0);
    pthread_mutex_unlock(&rec.mu);

    json_t *result = call_tool(c, "test_elicitation_sep1034_defaults", NULL);
    const char *text = first_text(result);
    json_t *content = elicited_content(text);
    json_t *want = json_pack("{s:s, s:i, s:f, s:s, s:b}", "name", "Jane Roe", "age", 30, "score",
                             95.5, "status", "active", "verified", 0);
    if (!json_equal(content, want))
        fail_msg("given values must stay and only missing ones get defaults: %s", text);
    json_decref(want);
    json_decref(content);
    json_decref(result);
}

static json_t *listed_roots(mcp_client *c)
{
    json_t *result = call_tool(c, "list_roots", NULL);
    json_t *roots =
        json_incref(json_object_get(json_object_get(result, "structuredContent"), "roots"));
    if (!json_is_array(roots)) {
        char *s = dump(result);
        fail_msg("list_roots: no structuredContent.roots in %s", s);
    }
    json_decref(result);
    return roots;
}

static void test_roots_set_by_client_are_listed_by_server(void **state)
{
    mcp_client *c = *state;
    json_t *roots = listed_roots(c);
    json_t *want = json_pack("[{s:s, s:s}, {s:s}]", "uri", "file:///tmp/mcp-root-a", "name",
                             "Root A", "uri", "file:///tmp/mcp-root-b");
    if (!json_equal(roots, want)) {
        char *s = dump(roots);
        fail_msg("roots listed by the server: %s", s);
    }
    json_decref(roots);
    json_decref(want);

    /* Changing them once connected is seen on the next roots/list. */
    want = json_pack("[{s:s, s:s}]", "uri", "file:///srv/other", "name", "Other");
    assert_int_equal(mcp_client_set_roots(c, want), MCP_OK);
    roots = listed_roots(c);
    if (!json_equal(roots, want)) {
        char *s = dump(roots);
        fail_msg("roots after mcp_client_set_roots: %s", s);
    }
    json_decref(roots);
    json_decref(want);
}

/* ---- Resources ---- */

static json_t *read_resource(mcp_client *c, const char *uri)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_read_resource(c, uri, &result, &err);
    if (rc != MCP_OK)
        fail_rc(uri, rc, &err);
    json_t *contents = json_object_get(result, "contents");
    if (!json_is_array(contents) || json_array_size(contents) != 1) {
        char *s = dump(result);
        fail_msg("read %s: expected one content, got %s", uri, s);
    }
    json_t *first = json_incref(json_array_get(contents, 0));
    json_decref(result);
    return first;
}

static void test_resources_are_listed_and_read_as_text_and_blob(void **state)
{
    mcp_client *c = *state;
    json_t *resources = list_all(c, "resources/list", "resources");
    const char *uris[] = {"test://static-text", "test://static-binary", "test://watched-resource"};
    for (size_t i = 0; i < 3; i++) {
        json_t *r = find_by_key(resources, "uri", uris[i]);
        if (r == NULL || !json_is_string(json_object_get(r, "name")))
            fail_msg("resources/list lacks %s with a name", uris[i]);
    }
    json_decref(resources);

    json_t *got = read_resource(c, "test://static-text");
    assert_result_equal("test://static-text", got,
                        json_pack("{s:s, s:s, s:s}", "uri", "test://static-text", "mimeType",
                                  "text/plain", "text",
                                  "This is the content of the static text resource."));
    json_decref(got);
    got = read_resource(c, "test://static-binary");
    assert_result_equal("test://static-binary", got,
                        json_pack("{s:s, s:s, s:s}", "uri", "test://static-binary", "mimeType",
                                  "image/png", "blob", PNG));
    json_decref(got);
    got = read_resource(c, "test://watched-resource");
    assert_result_equal("test://watched-resource", got,
                        json_pack("{s:s, s:s, s:s}", "uri", "test://watched-resource", "mimeType",
                                  "text/plain", "text", "Watched resource content"));
    json_decref(got);
}

static void test_resource_template_is_listed_and_read_with_its_id(void **state)
{
    mcp_client *c = *state;
    json_t *templates = list_all(c, "resources/templates/list", "resourceTemplates");
    json_t *t = find_by_key(templates, "uriTemplate", "test://template/{id}/data");
    if (t == NULL || !json_is_string(json_object_get(t, "name"))) {
        char *s = dump(templates);
        fail_msg("no template test://template/{id}/data with a name: %s", s);
    }
    json_decref(templates);

    json_t *got = read_resource(c, "test://template/42/data");
    const char *uri = json_string_value(json_object_get(got, "uri"));
    const char *text = json_string_value(json_object_get(got, "text"));
    assert_non_null(uri);
    assert_string_equal(uri, "test://template/42/data");
    assert_non_null(text);
    if (strstr(text, "42") == NULL)
        fail_msg("the template's text does not contain the id 42: %s", text);
    json_decref(got);
}

static void test_unknown_resource_gets_resource_not_found(void **state)
{
    mcp_client *c = *state;
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_read_resource(c, "test://no-such-resource", &result, &err);
    if (rc != MCP_ERPC)
        fail_msg("unknown resource: expected MCP_ERPC, got %s", mcp_strerror(rc));
    assert_int_equal(err.code, -32002);
    assert_null(result);
    mcp_rpc_error_clear(&err);
}

static void test_subscribed_resource_updates_arrive_until_unsubscribed(void **state)
{
    mcp_client *c = *state;
    const char *watched = "test://watched-resource", *other = "test://static-text";
    mcp_rpc_error err = {0};
    int rc = mcp_client_subscribe(c, watched, &err);
    if (rc != MCP_OK)
        fail_rc("subscribe", rc, &err);

    json_t *result = call_tool(c, "trigger_resource_update", json_pack("{s:s}", "uri", watched));
    assert_string_equal(first_text(result), "updated");
    json_decref(result);
    if (!wait_updates(watched, 1, WAIT_TIMEOUT_MS))
        fail_msg("no notifications/resources/updated for %s", watched);
    assert_int_equal(count_updates(watched), 1);
    assert_int_equal(count_updates(other), 0);

    rc = mcp_client_unsubscribe(c, watched, &err);
    if (rc != MCP_OK)
        fail_rc("unsubscribe", rc, &err);
    /* The update for `other` after the one for `watched` is the barrier: by
     * the time it arrives, one for `watched` would have too. */
    rc = mcp_client_subscribe(c, other, &err);
    if (rc != MCP_OK)
        fail_rc("subscribe", rc, &err);
    result = call_tool(c, "trigger_resource_update", json_pack("{s:s}", "uri", watched));
    json_decref(result);
    result = call_tool(c, "trigger_resource_update", json_pack("{s:s}", "uri", other));
    json_decref(result);
    if (!wait_updates(other, 1, WAIT_TIMEOUT_MS))
        fail_msg("no notifications/resources/updated for %s", other);
    assert_int_equal(count_updates(watched), 1);
}

/* ---- Prompts ---- */

static json_t *get_prompt(mcp_client *c, const char *name, json_t *args)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_get_prompt(c, name, args, &result, &err);
    if (rc != MCP_OK)
        fail_rc(name, rc, &err);
    json_t *messages = json_incref(json_object_get(result, "messages"));
    json_decref(result);
    return messages;
}

static void test_prompts_are_listed_and_got_with_arguments(void **state)
{
    mcp_client *c = *state;
    json_t *prompts = list_all(c, "prompts/list", "prompts");
    const char *names[] = {"test_simple_prompt", "test_prompt_with_arguments",
                           "test_prompt_with_embedded_resource", "test_prompt_with_image"};
    for (size_t i = 0; i < 4; i++) {
        json_t *p = find_by_key(prompts, "name", names[i]);
        if (p == NULL || !json_is_string(json_object_get(p, "description")))
            fail_msg("prompts/list lacks %s with a description", names[i]);
    }
    json_t *args =
        json_object_get(find_by_key(prompts, "name", "test_prompt_with_arguments"), "arguments");
    for (size_t i = 0; i < 2; i++) {
        json_t *a = find_by_key(args, "name", i == 0 ? "arg1" : "arg2");
        if (a == NULL || !json_is_true(json_object_get(a, "required"))) {
            char *s = dump(args);
            fail_msg("test_prompt_with_arguments: arg%zu not listed as required: %s", i + 1, s);
        }
    }
    json_decref(prompts);

    json_t *got = get_prompt(c, "test_simple_prompt", NULL);
    assert_result_equal("test_simple_prompt", got,
                        json_pack("[{s:s, s:{s:s, s:s}}]", "role", "user", "content", "type",
                                  "text", "text", "This is a simple prompt for testing."));
    json_decref(got);
    got = get_prompt(c, "test_prompt_with_arguments",
                     json_pack("{s:s, s:s}", "arg1", "hello", "arg2", "world"));
    assert_result_equal("test_prompt_with_arguments", got,
                        json_pack("[{s:s, s:{s:s, s:s}}]", "role", "user", "content", "type",
                                  "text", "text",
                                  "Prompt with arguments: arg1='hello', arg2='world'"));
    json_decref(got);
    got = get_prompt(c, "test_prompt_with_embedded_resource",
                     json_pack("{s:s}", "resourceUri", "test://some-resource"));
    assert_result_equal("test_prompt_with_embedded_resource", got,
                        json_pack("[{s:s, s:{s:s, s:{s:s, s:s, s:s}}}, {s:s, s:{s:s, s:s}}]",
                                  "role", "user", "content", "type", "resource", "resource", "uri",
                                  "test://some-resource", "mimeType", "text/plain", "text",
                                  "Embedded resource content for testing.", "role", "user",
                                  "content", "type", "text", "text",
                                  "Please process the embedded resource above."));
    json_decref(got);
    got = get_prompt(c, "test_prompt_with_image", NULL);
    assert_result_equal("test_prompt_with_image", got,
                        json_pack("[{s:s, s:{s:s, s:s, s:s}}, {s:s, s:{s:s, s:s}}]", "role", "user",
                                  "content", "type", "image", "data", PNG, "mimeType", "image/png",
                                  "role", "user", "content", "type", "text", "text",
                                  "Please analyze the image above."));
    json_decref(got);
}

static void test_prompt_missing_required_argument_gets_invalid_params_naming_it(void **state)
{
    mcp_client *c = *state;
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_get_prompt(c, "test_prompt_with_arguments",
                                   json_pack("{s:s}", "arg1", "only one"), &result, &err);
    if (rc != MCP_ERPC)
        fail_msg("missing arg2: expected MCP_ERPC, got %s", mcp_strerror(rc));
    assert_int_equal(err.code, -32602);
    if (strstr(err.message, "arg2") == NULL)
        fail_msg("the error does not name arg2: %s", err.message);
    mcp_rpc_error_clear(&err);
    json_decref(result);
}

/* ---- Completion ---- */

/* Asserts completion/complete gives exactly the values in `want` (any order). */
static void assert_completion(mcp_client *c, json_t *ref, const char *arg, const char *value,
                              json_t *want)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_complete(c, ref, arg, value, &result, &err);
    if (rc != MCP_OK)
        fail_rc("completion/complete", rc, &err);
    json_t *values = json_object_get(json_object_get(result, "completion"), "values");
    int ok = json_is_array(values) && json_array_size(values) == json_array_size(want);
    size_t i;
    json_t *v;
    json_array_foreach(want, i, v)
    {
        int found = 0;
        size_t j;
        json_t *g;
        json_array_foreach(values, j, g)
        {
            if (json_equal(g, v))
                found = 1;
        }
        ok = ok && found;
    }
    if (!ok) {
        char *g = dump(result), *w = dump(want);
        fail_msg("complete %s=\"%s\": got %s, expected values %s", arg, value, g, w);
    }
    json_decref(result);
    json_decref(want);
}

static void test_completion_filters_candidates_by_prefix(void **state)
{
    mcp_client *c = *state;
#define PROMPT_REF                                                                                 \
    json_pack("{s:s, s:s}", "type", "ref/prompt", "name", "test_prompt_with_arguments")
#define TEMPLATE_REF                                                                               \
    json_pack("{s:s, s:s}", "type", "ref/resource", "uri", "test://template/{id}/data")
    assert_completion(c, PROMPT_REF, "arg1", "tes",
                      json_pack("[s, s, s]", "test", "testing", "tested"));
    assert_completion(c, PROMPT_REF, "arg2", "testi", json_pack("[s]", "testing"));
    assert_completion(c, PROMPT_REF, "arg1", "o", json_pack("[s]", "other"));
    assert_completion(c, PROMPT_REF, "arg1", "zzz", json_array());
    assert_completion(c, PROMPT_REF, "arg1", "",
                      json_pack("[s, s, s, s]", "test", "testing", "tested", "other"));
    assert_completion(c, TEMPLATE_REF, "id", "1", json_pack("[s, s]", "1", "123"));
    assert_completion(c, TEMPLATE_REF, "id", "3", json_pack("[s]", "3"));
#undef PROMPT_REF
#undef TEMPLATE_REF
}

/* ---- Pagination ---- */

static void test_pagination_covers_every_tool_once_and_refuses_bad_cursor(void **state)
{
    mcp_client *full = *state;
    const char *const extra[] = {"--page-size", "2", NULL};
    mcp_client *c = connect_everything(extra);
    assert_non_null(c);

    json_t *everything = list_all(full, "tools/list", "tools");
    json_t *seen = json_object(); /* name -> times seen */
    char *cursor = NULL;
    int pages = 0;
    for (;;) {
        json_t *result = NULL;
        mcp_rpc_error err = {0};
        int rc = mcp_client_list_tools(c, cursor, &result, &err);
        if (rc != MCP_OK)
            fail_rc("tools/list page", rc, &err);
        pages++;
        json_t *tools = json_object_get(result, "tools");
        if (!json_is_array(tools) || json_array_size(tools) > 2 || json_array_size(tools) == 0) {
            char *s = dump(result);
            fail_msg("page %d has not 1 or 2 tools: %s", pages, s);
        }
        size_t i;
        json_t *tool;
        json_array_foreach(tools, i, tool)
        {
            const char *name = json_string_value(json_object_get(tool, "name"));
            assert_non_null(name);
            json_int_t n = json_integer_value(json_object_get(seen, name));
            json_object_set_new(seen, name, json_integer(n + 1));
        }
        free(cursor);
        cursor = NULL;
        const char *next = json_string_value(json_object_get(result, "nextCursor"));
        if (next != NULL)
            cursor = strdup(next);
        json_decref(result);
        if (cursor == NULL)
            break;
        if (pages > 100)
            fail_msg("more than 100 pages: the cursor never ends");
    }
    if (pages != (int)((json_array_size(everything) + 1) / 2))
        fail_msg("%zu tools came in %d pages of 2", json_array_size(everything), pages);
    size_t i;
    json_t *tool;
    json_array_foreach(everything, i, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        if (json_integer_value(json_object_get(seen, name)) != 1)
            fail_msg("tool %s seen %lld times across the pages", name,
                     (long long)json_integer_value(json_object_get(seen, name)));
    }
    assert_int_equal(json_object_size(seen), json_array_size(everything));
    json_decref(seen);
    json_decref(everything);

    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_tools(c, "this-is-not-a-cursor", &result, &err);
    if (rc != MCP_ERPC)
        fail_msg("invalid cursor: expected MCP_ERPC, got %s", mcp_strerror(rc));
    assert_int_equal(err.code, -32602);
    mcp_rpc_error_clear(&err);
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
    mcp_client_free(c);
}

/* ---- Process lifetime ---- */

/* Pids of this process's children, from /proc (the API does not expose the
 * server's pid). Returns how many were stored. */
static int child_pids(pid_t *out, int max)
{
    int n = 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        /* "pid (comm) state ppid ...": comm may hold spaces and parens. */
        char *rparen = strrchr(buf, ')');
        char state;
        int ppid;
        if (rparen == NULL || sscanf(rparen + 1, " %c %d", &state, &ppid) != 2)
            continue;
        if (ppid == (int)getpid())
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

static void test_client_free_reaps_the_server_process(void **state)
{
    (void)state;
    /* Children left by an earlier failed test must not be mistaken for ours. */
    pid_t before[16];
    int n_before = child_pids(before, 16);

    mcp_client *c = connect_everything(NULL);
    assert_non_null(c);
    assert_int_equal(mcp_client_ping(c, WAIT_TIMEOUT_MS), MCP_OK);
    pid_t kids[16], server = 0;
    int n = child_pids(kids, 16);
    for (int i = 0; i < n; i++) {
        int old = 0;
        for (int j = 0; j < n_before; j++)
            old = old || kids[i] == before[j];
        if (!old) {
            if (server != 0)
                fail_msg("the client started more than one child process");
            server = kids[i];
        }
    }
    if (server == 0)
        fail_msg("no child process found for the stdio server");

    long long t0 = harness_now_ms();
    mcp_client_free(c);
    long long elapsed = harness_now_ms() - t0;

    /* Gone entirely: not running, and not a zombie waiting to be reaped. */
    if (kill(server, 0) == 0 || errno != ESRCH)
        fail_msg("server pid %d still exists after mcp_client_free", (int)server);
    int status;
    errno = 0;
    pid_t r = waitpid(n_before == 0 ? -1 : server, &status, WNOHANG);
    if (r != -1 || errno != ECHILD)
        fail_msg("waitpid(%d, WNOHANG) after free gave %d (errno %d): a child is left",
                 n_before == 0 ? -1 : (int)server, (int)r, errno);
    /* The server exits on stdin EOF, so free need not wait for its 2 s grace
     * period and a signal. */
    if (elapsed >= 1900)
        fail_msg("mcp_client_free took %lld ms: the server did not exit on EOF", elapsed);
}

static void test_server_exits_on_stdin_eof(void **state)
{
    (void)state;
    char path[4096];
    assert_int_equal(harness_bin_path("mcp-everything", path, sizeof(path)), 0);
    const char *argv[] = {path, "--stdio", NULL};
    harness_proc p;
    assert_int_equal(harness_spawn(&p, argv), 0);

    assert_int_equal(
        harness_send_line(&p,
                          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                          "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                          "\"clientInfo\":{\"name\":\"eof-test\",\"version\":\"1\"}}}",
                          WAIT_TIMEOUT_MS),
        0);
    json_t *msg = harness_read_json(&p, WAIT_TIMEOUT_MS, NULL);
    if (!json_is_object(json_object_get(msg, "result"))) {
        harness_kill(&p);
        fail_msg("no initialize result");
    }
    json_decref(msg);
    assert_int_equal(
        harness_send_line(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                          WAIT_TIMEOUT_MS),
        0);

    harness_close_stdin(&p);
    int status = 0;
    if (harness_wait_exit(&p, WAIT_TIMEOUT_MS, &status) != 0) {
        harness_kill(&p);
        fail_msg("the server did not exit within %d ms of stdin EOF", WAIT_TIMEOUT_MS);
    }
    harness_kill(&p);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    harness_cond_init_monotonic(&rec.cv);
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_initialize_negotiates_latest_version_and_reports_server),
        T(test_ping_is_answered_with_empty_object),
        T(test_tools_list_describes_every_tool),
        T(test_content_tools_return_their_exact_results),
        T(test_add_returns_structured_content_and_declares_output_schema),
        T(test_error_handling_tool_returns_is_error_result),
        T(test_unknown_tool_gets_invalid_params_error),
        T(test_tool_arguments_violating_schema_give_is_error_naming_field),
        T(test_progress_arrives_in_order_before_the_result),
        T(test_cancel_ends_request_with_ecanceled_and_server_keeps_serving),
        T(test_request_timeout_returns_etimedout_and_client_still_works),
        T(test_call_opts_are_read_with_their_size_and_a_short_size_is_refused),
        T(test_concurrent_requests_from_threads_get_their_own_answers),
        T(test_log_level_warning_delivers_five_levels_in_order_before_result),
        T(test_tool_with_logging_sends_three_messages_before_result),
        T(test_sampling_handler_answer_reaches_the_tool_result),
        T(test_elicitation_request_reaches_the_handler),
        T(test_elicitation_defaults_are_filled_in_by_the_client),
        T(test_elicitation_defaults_keep_values_the_handler_gave),
        T(test_roots_set_by_client_are_listed_by_server),
        T(test_resources_are_listed_and_read_as_text_and_blob),
        T(test_resource_template_is_listed_and_read_with_its_id),
        T(test_unknown_resource_gets_resource_not_found),
        T(test_subscribed_resource_updates_arrive_until_unsubscribed),
        T(test_prompts_are_listed_and_got_with_arguments),
        T(test_prompt_missing_required_argument_gets_invalid_params_naming_it),
        T(test_completion_filters_candidates_by_prefix),
        T(test_pagination_covers_every_tool_once_and_refuses_bad_cursor),
#undef T
        cmocka_unit_test(test_client_free_reaps_the_server_process),
        cmocka_unit_test(test_server_exits_on_stdin_eof),
    };
    return cmocka_run_group_tests_name("stdio_client_server", tests, NULL, NULL);
}
