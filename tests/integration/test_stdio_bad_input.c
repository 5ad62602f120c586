/* SPDX-License-Identifier: MIT */
/*
 * Bad input on the stdio transport: mcp-everything --stdio is spawned with
 * pipes and fed raw lines. Each bad line must get the precise JSON-RPC error
 * (or, for notifications, nothing), and the server must keep answering valid
 * requests afterwards. Answers are parsed with jansson and matched by id.
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
#include <jansson.h>

#include "harness.h"

/* Deadline for each expected line. */
#define LINE_TIMEOUT_MS 5000
#define WRITE_TIMEOUT_MS 5000

typedef struct fixture {
    harness_proc proc;
    int alive_seq;
} fixture;

/* ---- Helpers ---- */

static void send_raw(fixture *f, const char *line)
{
    if (harness_send_line(&f->proc, line, WRITE_TIMEOUT_MS) != 0)
        fail_msg("could not write to the server: %s", line);
}

/* The next message the server writes, whatever it is. */
static json_t *next_message(fixture *f, int timeout_ms)
{
    char *bad = NULL;
    json_t *msg = harness_read_json(&f->proc, timeout_ms, &bad);
    if (msg == NULL) {
        if (bad != NULL) {
            char head[200];
            snprintf(head, sizeof(head), "%s", bad);
            free(bad);
            fail_msg("the server wrote a line that is not JSON: %s", head);
        }
        fail_msg("no message from the server within %d ms (eof=%d)", timeout_ms, f->proc.eof);
    }
    return msg;
}

/* The next message that is not a notification from the server (those may be
 * sent at any time, e.g. list_changed). Server requests are not expected. */
static json_t *next_response(fixture *f)
{
    for (int i = 0; i < 1000; i++) {
        json_t *msg = next_message(f, LINE_TIMEOUT_MS);
        if (json_is_object(msg) && json_object_get(msg, "method") != NULL &&
            json_object_get(msg, "id") == NULL) {
            json_decref(msg);
            continue;
        }
        return msg;
    }
    fail_msg("only notifications from the server");
    return NULL;
}

static char *dump(const json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return s ? s : strdup("(null)");
}

/* Asserts msg is a JSON-RPC error response with `code` and returns its
 * error object (borrowed from msg). */
static json_t *assert_error(const json_t *msg, int code)
{
    char *text = dump(msg);
    if (!json_is_object(msg))
        fail_msg("expected an error object, got %s", text);
    const json_t *ver = json_object_get(msg, "jsonrpc");
    json_t *err = json_object_get(msg, "error");
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0)
        fail_msg("no \"jsonrpc\":\"2.0\" in %s", text);
    if (!json_is_object(err) || json_object_get(msg, "result") != NULL)
        fail_msg("expected an error response, got %s", text);
    if (!json_is_integer(json_object_get(err, "code")) ||
        !json_is_string(json_object_get(err, "message")))
        fail_msg("error without integer code and string message: %s", text);
    if (json_integer_value(json_object_get(err, "code")) != code)
        fail_msg("expected error code %d, got %s", code, text);
    if (json_object_get(msg, "id") == NULL)
        fail_msg("error response without an \"id\" member: %s", text);
    free(text);
    return err;
}

static const char *error_message(const json_t *err)
{
    return json_string_value(json_object_get(err, "message"));
}

static void assert_id_null(const json_t *msg)
{
    const json_t *id = json_object_get(msg, "id");
    if (id == NULL || !json_is_null(id)) {
        char *text = dump(msg);
        fail_msg("expected \"id\":null in %s", text);
    }
}

/* Asserts msg's id equals `id` in value and JSON type. */
static void assert_id(const json_t *msg, const json_t *id)
{
    const json_t *got = json_object_get(msg, "id");
    if (got == NULL || !json_equal(got, id) || json_typeof(got) != json_typeof(id)) {
        char *want = dump(id), *text = dump(msg);
        fail_msg("expected id %s echoed with the same type in %s", want, text);
    }
}

/* Sends `line` and asserts one error with `code` answers it. Returns the
 * response (caller releases). */
static json_t *expect_error_for(fixture *f, const char *line, int code)
{
    send_raw(f, line);
    json_t *msg = next_response(f);
    assert_error(msg, code);
    return msg;
}

/* A ping with a fresh string id must be answered with exactly {}. */
static void assert_still_serving(fixture *f)
{
    char id[32], line[128];
    snprintf(id, sizeof(id), "alive-%d", ++f->alive_seq);
    snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}", id);
    send_raw(f, line);
    json_t *msg = next_response(f);
    json_t *want_id = json_string(id);
    assert_id(msg, want_id);
    json_decref(want_id);
    json_t *result = json_object_get(msg, "result");
    if (!json_is_object(result) || json_object_size(result) != 0) {
        char *text = dump(msg);
        fail_msg("ping after bad input was not answered with {}: %s", text);
    }
    json_decref(msg);
}

static void initialize(fixture *f, const char *version)
{
    char line[512];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"%s\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"bad-input-test\",\"version\":\"1.0\"}}}",
             version);
    send_raw(f, line);
    json_t *msg = next_response(f);
    const char *got = NULL;
    json_t *want_id = json_string("init");
    assert_id(msg, want_id);
    json_decref(want_id);
    if (json_unpack(msg, "{s:{s:s}}", "result", "protocolVersion", &got) != 0 ||
        strcmp(got, version) != 0) {
        char *text = dump(msg);
        fail_msg("initialize %s: unexpected answer %s", version, text);
    }
    json_decref(msg);
    send_raw(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static int setup_spawn(void **state)
{
    char path[4096];
    fixture *f = calloc(1, sizeof(*f));
    if (f == NULL || harness_bin_path("mcp-everything", path, sizeof(path)) != 0) {
        free(f);
        return -1;
    }
    const char *argv[] = {path, "--stdio", NULL};
    if (harness_spawn(&f->proc, argv) != 0) {
        fprintf(stderr, "cannot spawn %s\n", path);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int setup_initialized(void **state)
{
    if (setup_spawn(state) != 0)
        return -1;
    initialize(*state, "2025-11-25");
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f != NULL) {
        harness_kill(&f->proc);
        free(f);
    }
    return 0;
}

/* ---- Tests ---- */

static void test_malformed_json_gets_parse_error_naming_line_and_column(void **state)
{
    fixture *f = *state;
    const char *lines[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":ping}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
        "{\"jsonrpc\":\"2.0\",\"id\":1",
        "not json at all",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        json_t *msg = expect_error_for(f, lines[i], -32700);
        json_t *err = json_object_get(msg, "error");
        assert_id_null(msg);
        char *data = dump(json_object_get(err, "data"));
        char both[1024];
        snprintf(both, sizeof(both), "%s %s", error_message(err), data);
        if (!harness_contains_ci(both, "line") || !harness_contains_ci(both, "column"))
            fail_msg("-32700 for %s names no line and column: %s", lines[i], both);
        free(data);
        json_decref(msg);
    }
    assert_still_serving(f);
}

static void test_json_that_is_not_object_or_array_gets_invalid_request(void **state)
{
    fixture *f = *state;
    const char *lines[] = {"42", "\"x\"", "true", "null", "3.5"};
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        json_t *msg = expect_error_for(f, lines[i], -32600);
        assert_id_null(msg);
        json_decref(msg);
    }
    assert_still_serving(f);
}

static void test_missing_or_wrong_jsonrpc_version_gets_invalid_request_echoing_id(void **state)
{
    fixture *f = *state;
    struct {
        const char *line;
        json_t *id;
    } cases[] = {
        {"{\"id\":7,\"method\":\"ping\"}", json_integer(7)},
        {"{\"jsonrpc\":\"1.0\",\"id\":8,\"method\":\"ping\"}", json_integer(8)},
        {"{\"jsonrpc\":2,\"id\":9,\"method\":\"ping\"}", json_integer(9)},
        {"{\"jsonrpc\":\"1.0\",\"id\":\"v\",\"method\":\"ping\"}", json_string("v")},
        {"{\"jsonrpc\":null,\"id\":\"n\",\"method\":\"ping\"}", json_string("n")},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *msg = expect_error_for(f, cases[i].line, -32600);
        assert_id(msg, cases[i].id);
        json_decref(msg);
        json_decref(cases[i].id);
    }
    assert_still_serving(f);
}

static void test_request_without_method_gets_invalid_request(void **state)
{
    fixture *f = *state;
    const char *lines[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":11}",
        "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":5}",
        "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":null}",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        json_t *msg = expect_error_for(f, lines[i], -32600);
        /* The id is valid, so echoing it is best; null is also allowed by
         * JSON-RPC when the server cannot tell a request from a response. */
        const json_t *id = json_object_get(msg, "id");
        if (!json_is_null(id) && !(json_is_integer(id) && json_integer_value(id) == 10 + (int)i))
            fail_msg("unexpected id in the answer to %s", lines[i]);
        json_decref(msg);
    }
    assert_still_serving(f);
}

static void test_id_of_wrong_type_gets_invalid_request_with_null_id(void **state)
{
    fixture *f = *state;
    const char *lines[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        json_t *msg = expect_error_for(f, lines[i], -32600);
        assert_id_null(msg);
        json_decref(msg);
    }
    assert_still_serving(f);
}

static void test_null_id_gets_invalid_request(void **state)
{
    fixture *f = *state;
    json_t *msg =
        expect_error_for(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600);
    assert_id_null(msg);
    json_decref(msg);
    assert_still_serving(f);
}

static void test_unknown_method_gets_method_not_found_echoing_id_type(void **state)
{
    fixture *f = *state;
    struct {
        const char *line;
        json_t *id;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"no/such/method\"}", json_integer(42)},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"no/such/method\"}", json_string("abc")},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"method\":\"no/such/method\"}", json_string("42")},
        {"{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"no/such/method\"}",
         json_integer(9007199254740993LL)},
        {"{\"jsonrpc\":\"2.0\",\"id\":-7,\"method\":\"no/such/method\"}", json_integer(-7)},
        {"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"no/such/method\"}", json_integer(0)},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        send_raw(f, cases[i].line);
        /* Read the raw line too: a big int64 that went through a double would
         * still parse, but not print exactly. */
        size_t n = 0;
        char *line = harness_read_line(&f->proc, LINE_TIMEOUT_MS, &n);
        if (line == NULL)
            fail_msg("no answer to %s", cases[i].line);
        json_error_t jerr;
        json_t *msg = json_loadb(line, n, 0, &jerr);
        if (msg == NULL)
            fail_msg("answer is not JSON: %s", line);
        assert_error(msg, -32601);
        /* jansson parses integers into int64 exactly, so a big id that went
         * through a double on the server would compare unequal here, and a
         * string-for-integer swap fails the type check. */
        assert_id(msg, cases[i].id);
        free(line);
        json_decref(msg);
        json_decref(cases[i].id);
    }
    assert_still_serving(f);
}

static void test_bad_params_get_invalid_params_naming_the_field(void **state)
{
    fixture *f = *state;
    struct {
        const char *line;
        const char *field;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/list\",\"params\":[1,2]}", "params"},
        {"{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}",
         "name"},
        {"{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":5}}",
         "name"},
        {"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"resources/read\",\"params\":{\"uri\":5}}",
         "uri"},
        {"{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":\"resources/read\",\"params\":{}}", "uri"},
        {"{\"jsonrpc\":\"2.0\",\"id\":25,\"method\":\"prompts/get\",\"params\":{}}", "name"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *msg = expect_error_for(f, cases[i].line, -32602);
        json_t *id = json_integer(20 + (json_int_t)i);
        assert_id(msg, id);
        json_decref(id);
        const char *m = error_message(json_object_get(msg, "error"));
        if (!harness_contains_ci(m, cases[i].field))
            fail_msg("-32602 for %s does not name \"%s\": %s", cases[i].line, cases[i].field, m);
        json_decref(msg);
    }
    assert_still_serving(f);
}

static void test_requests_before_initialize_are_refused_except_ping(void **state)
{
    fixture *f = *state;
    json_t *msg =
        expect_error_for(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", -32600);
    json_t *id = json_integer(1);
    assert_id(msg, id);
    json_decref(id);
    json_decref(msg);

    /* Ping is allowed before initialization. */
    send_raw(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    msg = next_response(f);
    id = json_integer(2);
    assert_id(msg, id);
    json_decref(id);
    assert_true(json_is_object(json_object_get(msg, "result")));
    json_decref(msg);

    initialize(f, "2025-11-25");
    send_raw(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    msg = next_response(f);
    id = json_integer(3);
    assert_id(msg, id);
    json_decref(id);
    if (!json_is_array(json_object_get(json_object_get(msg, "result"), "tools"))) {
        char *text = dump(msg);
        fail_msg("tools/list after initialize failed: %s", text);
    }
    json_decref(msg);
}

static void test_second_initialize_gets_invalid_request(void **state)
{
    fixture *f = *state;
    json_t *msg =
        expect_error_for(f,
                         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{"
                         "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                         "\"clientInfo\":{\"name\":\"again\",\"version\":\"1\"}}}",
                         -32600);
    json_t *id = json_integer(5);
    assert_id(msg, id);
    json_decref(id);
    json_decref(msg);
    assert_still_serving(f);
}

static void test_ten_megabyte_line_gets_one_size_error_then_next_request_is_answered(void **state)
{
    fixture *f = *state;
    const char *head = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"";
    const char *tail = "\"}}\n";
    size_t pad = 10u * 1024 * 1024;
    size_t total = strlen(head) + pad + strlen(tail);
    char *big = malloc(total);
    assert_non_null(big);
    memcpy(big, head, strlen(head));
    memset(big + strlen(head), 'a', pad);
    memcpy(big + strlen(head) + pad, tail, strlen(tail));
    if (harness_write(&f->proc, big, total, 30000) != 0)
        fail_msg("could not write the 10 MB line (the server stopped reading?)");
    free(big);

    json_t *msg = next_response(f);
    json_t *err = assert_error(msg, -32600);
    assert_id_null(msg);
    const char *m = error_message(err);
    if (!harness_contains_ci(m, "limit") && !harness_contains_ci(m, "size") &&
        !harness_contains_ci(m, "large") && !harness_contains_ci(m, "bytes"))
        fail_msg("the error for a 10 MB line does not mention the size limit: %s", m);
    json_decref(msg);

    /* Exactly one error: the very next answer is the ping's. */
    assert_still_serving(f);
}

static void test_binary_garbage_gets_errors_then_server_still_answers(void **state)
{
    fixture *f = *state;
    size_t n = 64 * 1024;
    unsigned char *junk = malloc(n + 1);
    assert_non_null(junk);
    /* xorshift with a fixed seed, so a failure can be replayed. */
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        junk[i] = (unsigned char)(x >> 24);
        if (i % 997 == 0)
            junk[i] = 0;
    }
    junk[0] = 0xff; /* the first line is surely not JSON */
    junk[n] = '\n';
    if (harness_write(&f->proc, junk, n + 1, WRITE_TIMEOUT_MS) != 0)
        fail_msg("could not write the garbage");
    free(junk);

    send_raw(f, "{\"jsonrpc\":\"2.0\",\"id\":\"after-garbage\",\"method\":\"ping\"}");
    int errors = 0;
    long long deadline = harness_now_ms() + 15000;
    for (;;) {
        long long left = deadline - harness_now_ms();
        if (left <= 0)
            fail_msg("no answer to the ping after the garbage (%d errors seen)", errors);
        json_t *msg = next_message(f, (int)left);
        const json_t *id = json_object_get(msg, "id");
        if (json_is_string(id) && strcmp(json_string_value(id), "after-garbage") == 0) {
            assert_true(json_is_object(json_object_get(msg, "result")));
            json_decref(msg);
            break;
        }
        if (json_object_get(msg, "method") != NULL && id == NULL) {
            json_decref(msg); /* a server notification */
            continue;
        }
        json_t *err = json_object_get(msg, "error");
        json_int_t code = json_integer_value(json_object_get(err, "code"));
        if (code != -32700 && code != -32600) {
            char *text = dump(msg);
            fail_msg("unexpected answer to garbage: %s", text);
        }
        assert_id_null(msg);
        errors++;
        json_decref(msg);
    }
    print_message("garbage: %d error answers\n", errors);
    assert_true(errors >= 1);
    assert_still_serving(f);
}

static void test_empty_batch_gets_invalid_request(void **state)
{
    fixture *f = *state;
    json_t *msg = expect_error_for(f, "[]", -32600);
    assert_id_null(msg);
    json_decref(msg);
    assert_still_serving(f);
}

static void test_batch_on_2025_11_25_session_gets_invalid_request(void **state)
{
    fixture *f = *state;
    json_t *msg = expect_error_for(f,
                                   "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
                                   -32600);
    assert_id_null(msg);
    json_decref(msg);
    /* Neither request of the refused batch is answered: the next answer is the
     * ping's. */
    assert_still_serving(f);
}

static void test_batch_on_2025_03_26_session_gets_one_array_of_responses(void **state)
{
    fixture *f = *state;
    initialize(f, "2025-03-26");
    send_raw(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/list\"}]");
    json_t *msg = next_response(f);
    if (!json_is_array(msg) || json_array_size(msg) != 2) {
        char *text = dump(msg);
        fail_msg("expected one array of two responses, got %s", text);
    }
    int seen_ping = 0, seen_list = 0;
    for (size_t i = 0; i < 2; i++) {
        json_t *r = json_array_get(msg, i);
        json_t *id = json_object_get(r, "id");
        json_t *result = json_object_get(r, "result");
        if (json_is_integer(id) && json_integer_value(id) == 1) {
            assert_true(json_is_object(result) && json_object_size(result) == 0);
            seen_ping++;
        } else if (json_is_string(id) && strcmp(json_string_value(id), "two") == 0) {
            assert_true(json_is_array(json_object_get(result, "tools")));
            seen_list++;
        }
    }
    assert_int_equal(seen_ping, 1);
    assert_int_equal(seen_list, 1);
    json_decref(msg);

    /* A batch with a request and a notification gets an array of one. */
    send_raw(f, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"},"
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]");
    msg = next_response(f);
    assert_true(json_is_array(msg));
    assert_int_equal(json_array_size(msg), 1);
    json_t *id = json_integer(3);
    assert_id(json_array_get(msg, 0), id);
    json_decref(id);
    json_decref(msg);
    assert_still_serving(f);
}

static void test_batch_of_only_notifications_gets_no_answer(void **state)
{
    fixture *f = *state;
    initialize(f, "2025-03-26");
    send_raw(f, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"},"
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no_such_thing\",\"params\":{}}]");
    /* The next thing written must be the answer to this ping. */
    assert_still_serving(f);
}

static void test_empty_batch_on_2025_03_26_session_gets_invalid_request(void **state)
{
    fixture *f = *state;
    initialize(f, "2025-03-26");
    json_t *msg = expect_error_for(f, "[]", -32600);
    assert_id_null(msg);
    json_decref(msg);
    assert_still_serving(f);
}

static void test_unknown_notification_gets_no_answer(void **state)
{
    fixture *f = *state;
    send_raw(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no_such_thing\"}");
    send_raw(f, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/method\",\"params\":{\"x\":1}}");
    assert_still_serving(f);
}

static void test_ids_are_echoed_with_the_same_type(void **state)
{
    fixture *f = *state;
    json_t *ids = json_pack("[i, i, I, s, s, s]", 0, -1, (json_int_t)123456789012LL, "0",
                            "id with spaces", "\xc3\xa9t\xc3\xa9");
    assert_non_null(ids);
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        json_t *req = json_pack("{s:s, s:O, s:s}", "jsonrpc", "2.0", "id", id, "method", "ping");
        assert_int_equal(harness_send_json(&f->proc, req, WRITE_TIMEOUT_MS), 0);
        json_decref(req);
        json_t *msg = next_response(f);
        assert_id(msg, id);
        assert_true(json_is_object(json_object_get(msg, "result")));
        json_decref(msg);
    }
    json_decref(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_malformed_json_gets_parse_error_naming_line_and_column,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_json_that_is_not_object_or_array_gets_invalid_request,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(
            test_missing_or_wrong_jsonrpc_version_gets_invalid_request_echoing_id,
            setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_request_without_method_gets_invalid_request,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_id_of_wrong_type_gets_invalid_request_with_null_id,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_null_id_gets_invalid_request, setup_initialized,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unknown_method_gets_method_not_found_echoing_id_type,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_bad_params_get_invalid_params_naming_the_field,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_requests_before_initialize_are_refused_except_ping,
                                        setup_spawn, teardown),
        cmocka_unit_test_setup_teardown(test_second_initialize_gets_invalid_request,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(
            test_ten_megabyte_line_gets_one_size_error_then_next_request_is_answered,
            setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_binary_garbage_gets_errors_then_server_still_answers,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(test_empty_batch_gets_invalid_request, setup_initialized,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_batch_on_2025_11_25_session_gets_invalid_request,
                                        setup_initialized, teardown),
        cmocka_unit_test_setup_teardown(
            test_batch_on_2025_03_26_session_gets_one_array_of_responses, setup_spawn, teardown),
        cmocka_unit_test_setup_teardown(test_batch_of_only_notifications_gets_no_answer,
                                        setup_spawn, teardown),
        cmocka_unit_test_setup_teardown(test_empty_batch_on_2025_03_26_session_gets_invalid_request,
                                        setup_spawn, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_notification_gets_no_answer, setup_initialized,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ids_are_echoed_with_the_same_type, setup_initialized,
                                        teardown),
    };
    return cmocka_run_group_tests_name("stdio_bad_input", tests, NULL, NULL);
}
