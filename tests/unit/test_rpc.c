/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/protocol/rpc.c: the JSON-RPC 2.0 engine. Each test drives one
 * mcp__rpc on its own libuv loop with callbacks that record every message the engine
 * sends, every request and notification it delivers, and every outgoing completion.
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

#include <cmocka.h>

#include "protocol/rpc.h"
#include "util/util.h"

#define MAX_RECORDS 256

typedef struct sent_msg {
    uint64_t stream;
    unsigned flags;
    char *text;
} sent_msg;

typedef struct note {
    char *method;
    json_t *params; /* copy, or NULL */
    uint64_t stream;
} note;

typedef struct fixture {
    uv_loop_t loop;
    mcp__rpc *rpc;
    sent_msg sent[MAX_RECORDS];
    size_t nsent;
    /* Sends with text NULL: a request ended without an answer (it was cancelled). */
    size_t nended;
    uint64_t ended_stream;
    mcp__inreq *reqs[MAX_RECORDS]; /* requests delivered and not answered by the test */
    size_t nreqs;
    size_t requests_seen;
    note notes[MAX_RECORDS];
    size_t nnotes;
    mcp__inreq *cancelled[MAX_RECORDS];
    size_t ncancelled;
    char reason[128]; /* the last cancellation's reason */
    /* When set, on_request answers at once with {"method": <method>}. */
    int answer_inline;
    int send_rc; /* what the send callback returns */
} fixture;

/* The completion of one outgoing request. */
typedef struct reply {
    int calls;
    int status;
    json_t *result; /* copy */
    int code;
    char message[256];
    json_t *data; /* copy */
    int progress_calls;
    json_t *last_progress; /* copy */
} reply;

/* ---- Callbacks ---- */

static int cb_send(void *user, uint64_t stream, const json_t *msg, const char *text, size_t len,
                   unsigned flags)
{
    fixture *f = user;
    if (text == NULL) {
        assert_int_equal(len, 0);
        assert_int_equal(flags, MCP__SEND_RESPONSE);
        f->nended++;
        f->ended_stream = stream;
        return MCP_OK;
    }
    assert_true(f->nsent < MAX_RECORDS);
    assert_int_equal(strlen(text), len); /* NUL-terminated compact JSON, no newline */
    assert_null(memchr(text, '\n', len));
    if (msg != NULL) { /* the value handed along is the one the text serialises */
        char *dumped = json_dumps(msg, JSON_COMPACT);
        assert_non_null(dumped);
        assert_string_equal(dumped, text);
        free(dumped);
    }
    sent_msg *m = &f->sent[f->nsent++];
    m->stream = stream;
    m->flags = flags;
    m->text = mcp__strdup(text);
    assert_non_null(m->text);
    return f->send_rc;
}

static void cb_on_request(void *user, mcp__inreq *req)
{
    fixture *f = user;
    f->requests_seen++;
    assert_ptr_equal(req->rpc, f->rpc);
    assert_true(mcp__id_valid(req->id));
    assert_non_null(req->method);
    if (f->answer_inline) {
        assert_int_equal(mcp__rpc_respond(req, json_pack("{s:s}", "method", req->method)), MCP_OK);
        return;
    }
    assert_true(f->nreqs < MAX_RECORDS);
    f->reqs[f->nreqs++] = req;
}

static void cb_on_notification(void *user, const char *method, const json_t *params,
                               uint64_t stream)
{
    fixture *f = user;
    assert_true(f->nnotes < MAX_RECORDS);
    note *n = &f->notes[f->nnotes++];
    n->method = mcp__strdup(method);
    n->params = params ? json_deep_copy(params) : NULL;
    n->stream = stream;
}

static void cb_on_cancelled(void *user, mcp__inreq *req, const char *reason)
{
    fixture *f = user;
    assert_true(req->cancelled);
    snprintf(f->reason, sizeof(f->reason), "%s", reason != NULL ? reason : "(none)");
    f->cancelled[f->ncancelled++] = req;
}

static const mcp__rpc_cbs test_cbs = {
    .send = cb_send,
    .on_request = cb_on_request,
    .on_notification = cb_on_notification,
    .on_cancelled = cb_on_cancelled,
};

static void on_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    reply *r = arg;
    r->calls++;
    r->status = status;
    if (result != NULL)
        r->result = json_deep_copy(result);
    if (err != NULL) {
        r->code = err->code;
        snprintf(r->message, sizeof(r->message), "%s", err->message);
        if (err->data != NULL)
            r->data = json_deep_copy(err->data);
    }
}

static void on_progress(void *arg, const json_t *params)
{
    reply *r = arg;
    r->progress_calls++;
    json_decref(r->last_progress);
    r->last_progress = json_deep_copy(params);
}

static void reply_clear(reply *r)
{
    json_decref(r->result);
    json_decref(r->data);
    json_decref(r->last_progress);
    memset(r, 0, sizeof(*r));
}

/* ---- Fixture ---- */

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->rpc = mcp__rpc_new(&f->loop, &test_cbs, f);
    assert_non_null(f->rpc);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    /* Requests the test left unanswered are answered now so that the engine can go. */
    if (f->rpc != NULL) {
        mcp__rpc_free(f->rpc);
        for (size_t i = 0; i < f->nreqs; i++)
            if (f->reqs[i] != NULL)
                mcp__rpc_respond(f->reqs[i], NULL);
    }
    /* Timer handles of completed requests close on the loop. */
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    for (size_t i = 0; i < f->nsent; i++)
        free(f->sent[i].text);
    for (size_t i = 0; i < f->nnotes; i++) {
        free(f->notes[i].method);
        json_decref(f->notes[i].params);
    }
    free(f);
    return 0;
}

/* Feeds a message text on stream 0. */
static void feed(fixture *f, const char *text)
{
    mcp__rpc_feed(f->rpc, text, strlen(text), 0);
}

/* The i-th sent message, parsed (the caller releases it). */
static json_t *sent_json(fixture *f, size_t i)
{
    assert_true(i < f->nsent);
    json_error_t err;
    json_t *v = json_loads(f->sent[i].text, 0, &err);
    if (v == NULL)
        fail_msg("sent text is not JSON (%s): %s", err.text, f->sent[i].text);
    return v;
}

/* Asserts that msg is an error answer with the given id (NULL: null) and code. */
static void assert_error_answer(const json_t *msg, const json_t *id, int code)
{
    assert_string_equal(json_string_value(json_object_get(msg, "jsonrpc")), "2.0");
    json_t *got_id = json_object_get(msg, "id");
    assert_non_null(got_id); /* the member must be present, null or not */
    if (id == NULL)
        assert_true(json_is_null(got_id));
    else
        assert_true(json_equal(got_id, id));
    json_t *err = json_object_get(msg, "error");
    assert_true(json_is_object(err));
    assert_int_equal(json_integer_value(json_object_get(err, "code")), code);
    assert_true(json_is_string(json_object_get(err, "message")));
    assert_null(json_object_get(msg, "result"));
}

/* Feeds text and asserts that exactly one error answer with id null and code came back. */
static void expect_error_for(fixture *f, const char *text, int code)
{
    size_t before = f->nsent;
    size_t seen = f->requests_seen;
    feed(f, text);
    if (f->nsent != before + 1)
        fail_msg("%zu answers to %s", f->nsent - before, text);
    json_t *msg = sent_json(f, before);
    assert_error_answer(msg, NULL, code);
    json_decref(msg);
    assert_int_equal(f->requests_seen, seen);
}

/* The message of the error in msg. */
static const char *error_message(const json_t *msg)
{
    return json_string_value(json_object_get(json_object_get(msg, "error"), "message"));
}

/* Takes a request the test holds out of the fixture (so teardown does not answer it). */
static mcp__inreq *take_req(fixture *f, size_t i)
{
    assert_true(i < f->nreqs);
    mcp__inreq *r = f->reqs[i];
    assert_non_null(r);
    f->reqs[i] = NULL;
    return r;
}

/* Runs the loop until *flag is set; fails after deadline_ms. */
static void run_until(fixture *f, const int *flag, uint64_t deadline_ms)
{
    uint64_t end = mcp__now_ms() + deadline_ms;
    while (!*flag) {
        if (mcp__now_ms() > end)
            fail_msg("the loop did not get there within %llu ms", (unsigned long long)deadline_ms);
        uv_run(&f->loop, UV_RUN_ONCE);
    }
}

/* ---- Malformed input ---- */

static void test_feed_malformed_json_answers_parse_error_with_line_and_column(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"method\": }");
    assert_int_equal(f->nsent, 1);
    json_t *msg = sent_json(f, 0);
    assert_error_answer(msg, NULL, MCP_RPC_PARSE_ERROR);
    const char *text = error_message(msg);
    assert_non_null(strstr(text, "line 3"));
    assert_non_null(strstr(text, "column"));
    json_t *data = json_object_get(json_object_get(msg, "error"), "data");
    assert_int_equal(json_integer_value(json_object_get(data, "line")), 3);
    assert_true(json_integer_value(json_object_get(data, "column")) > 0);
    assert_true(json_is_integer(json_object_get(data, "position")));
    assert_int_equal(f->sent[0].stream, 0);
    assert_int_equal(f->requests_seen, 0);
    json_decref(msg);

    /* Truncated input and trailing garbage are parse errors too. */
    expect_error_for(f, "{\"jsonrpc\":\"2.0\",\"id\":1", MCP_RPC_PARSE_ERROR);
    expect_error_for(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} x", MCP_RPC_PARSE_ERROR);
    expect_error_for(f, "", MCP_RPC_PARSE_ERROR);
}

static void test_feed_value_that_is_not_an_object_is_an_invalid_request(void **state)
{
    fixture *f = *state;
    expect_error_for(f, "42", MCP_RPC_INVALID_REQUEST);
    expect_error_for(f, "\"ping\"", MCP_RPC_INVALID_REQUEST);
    expect_error_for(f, "null", MCP_RPC_INVALID_REQUEST);
    expect_error_for(f, "true", MCP_RPC_INVALID_REQUEST);
}

/* The transports answer refusals of their own with the id classify gives: every invalid
 * message with a readable id (an integer or a string) names it, whatever else is wrong. */
static void test_classify_gives_the_id_to_echo_whenever_it_is_readable(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *echo; /* the id's JSON text, NULL for none */
    } cases[] = {
        {"{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}", "5"},
        {"{\"id\":\"s\",\"method\":\"ping\"}", "\"s\""},
        {"{\"jsonrpc\":\"2.0\",\"id\":6}", "6"},
        {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":3}", "7"},
        {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x\",\"params\":[1]}", "8"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", NULL},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", NULL},
        {"{\"jsonrpc\":\"1.0\",\"id\":true}", NULL},
        {"[1]", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *msg = json_loads(cases[i].text, JSON_DECODE_ANY, NULL);
        assert_non_null(msg);
        int code;
        const char *why;
        const json_t *echo;
        assert_int_equal(mcp__jsonrpc_classify(msg, &code, &why, &echo), MCP__MSG_INVALID);
        assert_non_null(why);
        if (cases[i].echo == NULL) {
            assert_null(echo);
        } else {
            json_t *want = json_loads(cases[i].echo, JSON_DECODE_ANY, NULL);
            assert_non_null(echo);
            assert_true(json_equal(echo, want));
            json_decref(want);
        }
        json_decref(msg);
    }
}

static void test_feed_wrong_or_missing_jsonrpc_version_is_an_invalid_request(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}");
    feed(f, "{\"id\":\"s\",\"method\":\"ping\"}");
    feed(f, "{\"jsonrpc\":2.0,\"id\":6,\"method\":\"ping\"}");
    assert_int_equal(f->nsent, 3);
    json_t *id5 = json_integer(5), *ids = json_string("s"), *id6 = json_integer(6);
    json_t *m0 = sent_json(f, 0), *m1 = sent_json(f, 1), *m2 = sent_json(f, 2);
    /* A valid id is echoed even when the rest of the message is wrong. */
    assert_error_answer(m0, id5, MCP_RPC_INVALID_REQUEST);
    assert_error_answer(m1, ids, MCP_RPC_INVALID_REQUEST);
    assert_error_answer(m2, id6, MCP_RPC_INVALID_REQUEST);
    assert_non_null(strstr(error_message(m0), "jsonrpc"));
    json_decref(m0);
    json_decref(m1);
    json_decref(m2);
    json_decref(id5);
    json_decref(ids);
    json_decref(id6);
    assert_int_equal(f->requests_seen, 0);
}

static void test_feed_missing_method_is_an_invalid_request_echoing_the_id(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":7}");
    assert_int_equal(f->nsent, 1);
    json_t *m = sent_json(f, 0);
    json_t *id = json_integer(7);
    assert_error_answer(m, id, MCP_RPC_INVALID_REQUEST);
    assert_non_null(strstr(error_message(m), "method"));
    json_decref(m);
    json_decref(id);
    assert_int_equal(f->requests_seen, 0);
}

static void test_feed_method_that_is_not_a_string_is_an_invalid_request(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":42}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":null}");
    assert_int_equal(f->nsent, 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *m = sent_json(f, i);
        json_t *id = json_integer(8 + (json_int_t)i);
        assert_error_answer(m, id, MCP_RPC_INVALID_REQUEST);
        json_decref(m);
        json_decref(id);
    }
    /* A notification with a bad method cannot be answered either way: it is not a
     * notification, so it gets an error with id null. */
    expect_error_for(f, "{\"jsonrpc\":\"2.0\",\"method\":[]}", MCP_RPC_INVALID_REQUEST);
    assert_int_equal(f->requests_seen, 0);
    assert_int_equal(f->nnotes, 0);
}

static void test_feed_ids_of_every_wrong_type_are_answered_with_id_null(void **state)
{
    fixture *f = *state;
    const char *ids[] = {"null", "true", "false", "1.5", "{}", "[]", "{\"a\":1}", "[1]"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ids[i]);
        expect_error_for(f, text, MCP_RPC_INVALID_REQUEST);
    }
    assert_int_equal(f->requests_seen, 0);
    assert_int_equal(f->nnotes, 0);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 0);
}

static void test_feed_string_and_int64_ids_are_echoed_exactly(void **state)
{
    fixture *f = *state;
    f->answer_inline = 1;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"method\":\"ping\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"req-\\u00e9\\\"x\",\"method\":\"ping\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
    assert_int_equal(f->nsent, 5);
    /* 2^53 + 1 is not a double: it must go out digit for digit. */
    assert_non_null(strstr(f->sent[0].text, "\"id\":9007199254740993"));
    assert_non_null(strstr(f->sent[1].text, "\"id\":-9223372036854775808"));
    json_t *m2 = sent_json(f, 2);
    assert_string_equal(json_string_value(json_object_get(m2, "id")), "req-\xc3\xa9\"x");
    json_decref(m2);
    assert_non_null(strstr(f->sent[3].text, "\"id\":\"\""));
    assert_non_null(strstr(f->sent[4].text, "\"id\":0"));
    for (size_t i = 0; i < 5; i++) {
        json_t *m = sent_json(f, i);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(m, "result"), "method")), "ping");
        assert_int_equal(f->sent[i].flags & MCP__SEND_RESPONSE, MCP__SEND_RESPONSE);
        json_decref(m);
    }
}

static void test_feed_params_that_are_not_an_object_are_invalid_params(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":[1,2]}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/list\",\"params\":\"x\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":null}");
    assert_int_equal(f->nsent, 3);
    json_t *id1 = json_integer(1), *id2 = json_string("two"), *id3 = json_integer(3);
    json_t *m0 = sent_json(f, 0), *m1 = sent_json(f, 1), *m2 = sent_json(f, 2);
    assert_error_answer(m0, id1, MCP_RPC_INVALID_PARAMS);
    assert_error_answer(m1, id2, MCP_RPC_INVALID_PARAMS);
    assert_error_answer(m2, id3, MCP_RPC_INVALID_PARAMS);
    assert_non_null(strstr(error_message(m0), "params"));
    json_decref(m0);
    json_decref(m1);
    json_decref(m2);
    json_decref(id1);
    json_decref(id2);
    json_decref(id3);
    assert_int_equal(f->requests_seen, 0);
}

static void test_feed_notification_with_bad_params_is_dropped_silently(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":[1]}");
    assert_int_equal(f->nsent, 0);
    assert_int_equal(f->nnotes, 0);
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"a\":1}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/y\"}");
    assert_int_equal(f->nsent, 0);
    assert_int_equal(f->nnotes, 2);
    assert_string_equal(f->notes[0].method, "notifications/x");
    assert_int_equal(json_integer_value(json_object_get(f->notes[0].params, "a")), 1);
    assert_string_equal(f->notes[1].method, "notifications/y");
    assert_null(f->notes[1].params);
}

/* ---- Requests in flight ---- */

static void test_feed_valid_request_is_delivered_and_answered_on_its_stream(void **state)
{
    fixture *f = *state;
    const char *text = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"echo\"}}";
    mcp__rpc_feed(f->rpc, text, strlen(text), 42);
    assert_int_equal(f->nreqs, 1);
    assert_int_equal(f->nsent, 0);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 1);
    mcp__inreq *req = take_req(f, 0);
    assert_string_equal(req->method, "tools/call");
    assert_int_equal(json_integer_value(req->id), 4);
    assert_int_equal(req->stream, 42);
    assert_string_equal(json_string_value(json_object_get(req->params, "name")), "echo");
    assert_null(req->batch);
    assert_int_equal(mcp__rpc_respond(req, json_pack("{s:i}", "n", 1)), MCP_OK);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 0);
    assert_int_equal(f->nsent, 1);
    assert_int_equal(f->sent[0].stream, 42);
    assert_int_equal(f->sent[0].flags, MCP__SEND_RESPONSE);
    json_t *m = sent_json(f, 0);
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 4);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "result"), "n")), 1);
    json_decref(m);
}

static void test_respond_error_sends_code_message_and_data(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"method\":\"x\"}");
    mcp__inreq *req = take_req(f, 0);
    assert_int_equal(mcp__rpc_respond_error(req, -32002, "Resource not found",
                                            json_pack("{s:s}", "uri", "a://b")),
                     MCP_OK);
    json_t *m = sent_json(f, 0);
    json_t *id = json_string("e");
    assert_error_answer(m, id, -32002);
    json_t *err = json_object_get(m, "error");
    assert_string_equal(error_message(m), "Resource not found");
    assert_string_equal(json_string_value(json_object_get(json_object_get(err, "data"), "uri")),
                        "a://b");
    json_decref(m);
    json_decref(id);
}

static void test_feed_duplicate_id_in_flight_is_an_invalid_request(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}");
    /* A string "1" is a different id from the integer 1. */
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"slow\"}");
    assert_int_equal(f->requests_seen, 2);
    assert_int_equal(f->nsent, 1);
    json_t *m = sent_json(f, 0);
    json_t *id = json_integer(1);
    assert_error_answer(m, id, MCP_RPC_INVALID_REQUEST);
    assert_non_null(strstr(error_message(m), "in progress"));
    /* It answers a well-formed request, so the transport may end that request's stream. */
    assert_int_equal(f->sent[0].flags, MCP__SEND_RESPONSE);
    json_decref(m);
    json_decref(id);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 2);

    /* Once answered, the id may be used again. */
    mcp__rpc_respond(take_req(f, 0), NULL);
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}");
    assert_int_equal(f->requests_seen, 3);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 2);
}

/* ---- Batches ---- */

static void test_feed_batch_is_refused_unless_allowed(void **state)
{
    fixture *f = *state;
    expect_error_for(f,
                     "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]",
                     MCP_RPC_INVALID_REQUEST);
    json_t *m = sent_json(f, 0);
    assert_non_null(strstr(error_message(m), "2025-03-26"));
    json_decref(m);
    assert_int_equal(f->nnotes, 0);

    mcp__rpc_allow_batch(f->rpc, 1);
    mcp__rpc_allow_batch(f->rpc, 0);
    expect_error_for(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                     MCP_RPC_INVALID_REQUEST);
}

static void test_feed_empty_batch_is_an_invalid_request(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    expect_error_for(f, "[]", MCP_RPC_INVALID_REQUEST);
    mcp__rpc_allow_batch(f->rpc, 0);
    expect_error_for(f, "[ ]", MCP_RPC_INVALID_REQUEST);
}

static char *batch_of(size_t n)
{
    mcp__buf b = {0};
    assert_int_equal(mcp__buf_appends(&b, "["), MCP_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mcp__buf_appendf(&b, "%s{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"m\"}",
                                          i ? "," : "", i),
                         MCP_OK);
    assert_int_equal(mcp__buf_appends(&b, "]"), MCP_OK);
    return mcp__buf_steal(&b);
}

static void test_feed_batch_of_101_is_refused_whole_and_100_is_taken(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    f->answer_inline = 1;
    char *big = batch_of(101);
    expect_error_for(f, big, MCP_RPC_INVALID_REQUEST);
    free(big);
    json_t *m = sent_json(f, 0);
    assert_non_null(strstr(error_message(m), "100"));
    json_decref(m);

    char *ok = batch_of(100);
    feed(f, ok);
    free(ok);
    assert_int_equal(f->requests_seen, 100);
    assert_int_equal(f->nsent, 2);
    json_t *arr = sent_json(f, 1);
    assert_true(json_is_array(arr));
    assert_int_equal(json_array_size(arr), 100);
    json_decref(arr);
}

static void test_feed_batch_of_only_notifications_sends_no_answer(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    feed(f, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/a\"},"
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/b\",\"params\":{}}]");
    assert_int_equal(f->nsent, 0);
    assert_int_equal(f->nnotes, 2);
    assert_string_equal(f->notes[0].method, "notifications/a");
    assert_string_equal(f->notes[1].method, "notifications/b");
}

static void test_feed_batch_answers_as_one_array_once_all_are_answered(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    const char *text = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/n\"},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"b\"},"
                       "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"c\"},"
                       "17,"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"c\"}]";
    mcp__rpc_feed(f->rpc, text, strlen(text), 9);
    assert_int_equal(f->nreqs, 3);
    assert_int_equal(f->nnotes, 1);
    assert_int_equal(f->nsent, 0); /* the invalid members wait in the batch */
    mcp__inreq *r1 = take_req(f, 0), *r2 = take_req(f, 1), *r3 = take_req(f, 2);
    assert_non_null(r1->batch);
    assert_ptr_equal(r1->batch, r2->batch);
    assert_ptr_equal(r2->batch, r3->batch);

    /* Answered out of order, later: nothing goes out until the last one. */
    mcp__rpc_respond(r3, json_pack("{s:i}", "r", 3));
    assert_int_equal(f->nsent, 0);
    mcp__rpc_respond_error(r1, -32601, "Method not found: a", NULL);
    assert_int_equal(f->nsent, 0);
    mcp__rpc_respond(r2, json_pack("{s:s}", "r", "two"));
    assert_int_equal(f->nsent, 1);
    assert_int_equal(f->sent[0].stream, 9);
    assert_int_equal(f->sent[0].flags & MCP__SEND_RESPONSE, MCP__SEND_RESPONSE);

    json_t *arr = sent_json(f, 0);
    assert_true(json_is_array(arr));
    assert_int_equal(json_array_size(arr), 5);
    int seen_null_errors = 0, seen1 = 0, seen2 = 0, seen3 = 0;
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m)
    {
        json_t *id = json_object_get(m, "id");
        if (json_is_null(id)) {
            assert_error_answer(m, NULL, MCP_RPC_INVALID_REQUEST);
            seen_null_errors++;
        } else if (json_is_integer(id) && json_integer_value(id) == 1) {
            assert_error_answer(m, id, -32601);
            seen1++;
        } else if (json_is_string(id)) {
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(m, "result"), "r")), "two");
            seen2++;
        } else {
            assert_int_equal(json_integer_value(id), 3);
            assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "result"), "r")),
                             3);
            seen3++;
        }
    }
    assert_int_equal(seen_null_errors, 2);
    assert_int_equal(seen1 + seen2 + seen3, 3);
    json_decref(arr);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 0);
}

static void test_feed_batch_answered_inline_is_sent_once_after_the_feed(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    f->answer_inline = 1;
    feed(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}]");
    assert_int_equal(f->nsent, 1);
    json_t *arr = sent_json(f, 0);
    assert_int_equal(json_array_size(arr), 2);
    json_decref(arr);
}

static void test_feed_batch_with_duplicate_ids_answers_the_second_with_an_error(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    feed(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"b\"}]");
    assert_int_equal(f->nreqs, 1);
    assert_int_equal(f->nsent, 0);
    mcp__rpc_respond(take_req(f, 0), NULL);
    assert_int_equal(f->nsent, 1);
    json_t *arr = sent_json(f, 0);
    assert_int_equal(json_array_size(arr), 2);
    json_decref(arr);
}

/* ---- Outgoing requests ---- */

static void test_responses_are_matched_to_outgoing_requests(void **state)
{
    fixture *f = *state;
    reply a = {0}, b = {0};
    json_int_t ida = -1, idb = -1;
    assert_int_equal(mcp__rpc_request(f->rpc, "roots/list", NULL, 3, 0, on_reply, NULL, &a, &ida),
                     MCP_OK);
    assert_int_equal(mcp__rpc_request(f->rpc, "sampling/createMessage",
                                      json_pack("{s:i}", "maxTokens", 5), 4, 0, on_reply, NULL, &b,
                                      &idb),
                     MCP_OK);
    assert_true(ida != idb);
    assert_int_equal(f->nsent, 2);
    json_t *ma = sent_json(f, 0), *mb = sent_json(f, 1);
    assert_string_equal(json_string_value(json_object_get(ma, "method")), "roots/list");
    assert_string_equal(json_string_value(json_object_get(ma, "jsonrpc")), "2.0");
    assert_int_equal(json_integer_value(json_object_get(ma, "id")), ida);
    assert_null(json_object_get(ma, "params"));
    assert_int_equal(f->sent[0].stream, 3);
    assert_int_equal(f->sent[0].flags, 0);
    assert_int_equal(json_integer_value(json_object_get(mb, "id")), idb);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(mb, "params"), "maxTokens")), 5);
    assert_int_equal(f->sent[1].stream, 4);
    json_decref(ma);
    json_decref(mb);

    char text[256];
    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"role\":\"assistant\"}}",
             (long long)idb);
    feed(f, text);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.status, MCP_OK);
    assert_string_equal(json_string_value(json_object_get(b.result, "role")), "assistant");
    assert_int_equal(a.calls, 0);

    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no "
             "roots\",\"data\":{\"why\":1}}}",
             (long long)ida);
    feed(f, text);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, MCP_ERPC);
    assert_int_equal(a.code, -32601);
    assert_string_equal(a.message, "no roots");
    assert_int_equal(json_integer_value(json_object_get(a.data, "why")), 1);

    /* A second answer to the same id is not delivered again. */
    feed(f, text);
    assert_int_equal(a.calls, 1);
    assert_int_equal(f->nsent, 2); /* responses are never answered */
    reply_clear(&a);
    reply_clear(&b);
}

static void test_responses_with_unknown_ids_are_ignored(void **state)
{
    fixture *f = *state;
    reply r = {0};
    json_int_t id;
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 0, on_reply, NULL, &r, &id), MCP_OK);
    size_t before = f->nsent;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"x\"}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"result\":{}}");
    assert_int_equal(r.calls, 0);
    assert_int_equal(f->nsent, before);
    assert_int_equal(f->requests_seen, 0);
    assert_int_equal(f->nnotes, 0);
    reply_clear(&r);
}

static void test_outgoing_request_with_non_object_params_is_refused(void **state)
{
    fixture *f = *state;
    reply r = {0};
    assert_int_equal(
        mcp__rpc_request(f->rpc, "x", json_pack("[i]", 1), 0, 0, on_reply, NULL, &r, NULL),
        MCP_EINVAL);
    assert_int_equal(f->nsent, 0);
    assert_int_equal(r.calls, 0);
}

static void test_outgoing_request_that_cannot_be_sent_returns_the_error_only(void **state)
{
    fixture *f = *state;
    reply r = {0};
    f->send_rc = MCP_EIO;
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 1000, on_reply, NULL, &r, NULL),
                     MCP_EIO);
    /* The caller learned of it from the return value; the callback is not called too. */
    assert_int_equal(r.calls, 0);
    f->send_rc = MCP_OK;
}

static void test_request_timeout_sends_cancelled_and_completes_with_timedout(void **state)
{
    fixture *f = *state;
    reply r = {0};
    json_int_t id;
    assert_int_equal(mcp__rpc_request(f->rpc, "elicitation/create", json_object(), 5, 20, on_reply,
                                      NULL, &r, &id),
                     MCP_OK);
    assert_int_equal(r.calls, 0);
    run_until(f, &r.calls, 5000);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, MCP_ETIMEDOUT);
    assert_int_equal(f->nsent, 2);
    json_t *c = sent_json(f, 1);
    assert_string_equal(json_string_value(json_object_get(c, "method")), "notifications/cancelled");
    assert_null(json_object_get(c, "id"));
    json_t *params = json_object_get(c, "params");
    assert_int_equal(json_integer_value(json_object_get(params, "requestId")), id);
    assert_true(json_is_string(json_object_get(params, "reason")));
    assert_int_equal(f->sent[1].stream, 5);
    json_decref(c);

    /* A late answer after the timeout is dropped. */
    char text[128];
    snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)id);
    feed(f, text);
    assert_int_equal(r.calls, 1);
    reply_clear(&r);
}

static void test_answer_before_timeout_stops_the_timer(void **state)
{
    fixture *f = *state;
    reply r = {0};
    json_int_t id;
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 60000, on_reply, NULL, &r, &id),
                     MCP_OK);
    char text[128];
    snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"ok\":true}}",
             (long long)id);
    feed(f, text);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, MCP_OK);
    /* With the timer stopped and closed, the loop has nothing left and returns at once. */
    uint64_t start = mcp__now_ms();
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_true(mcp__now_ms() - start < 5000);
    assert_int_equal(f->nsent, 1);
    reply_clear(&r);
}

static void test_cancel_of_outgoing_request_sends_cancelled_and_completes(void **state)
{
    fixture *f = *state;
    reply r = {0};
    json_int_t id;
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 2, 60000, on_reply, NULL, &r, &id),
                     MCP_OK);
    assert_int_equal(mcp__rpc_cancel(f->rpc, id, "user stopped it"), MCP_OK);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, MCP_ECANCELED);
    assert_int_equal(f->nsent, 2);
    json_t *c = sent_json(f, 1);
    assert_string_equal(json_string_value(json_object_get(c, "method")), "notifications/cancelled");
    json_t *params = json_object_get(c, "params");
    assert_int_equal(json_integer_value(json_object_get(params, "requestId")), id);
    assert_string_equal(json_string_value(json_object_get(params, "reason")), "user stopped it");
    assert_int_equal(f->sent[1].stream, 2);
    json_decref(c);

    /* Cancelling again, or an id never sent, finds nothing. */
    assert_int_equal(mcp__rpc_cancel(f->rpc, id, NULL), MCP_ENOENT);
    assert_int_equal(mcp__rpc_cancel(f->rpc, 12345, NULL), MCP_ENOENT);
    char text[128];
    snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)id);
    feed(f, text);
    assert_int_equal(r.calls, 1);
    reply_clear(&r);
}

static void test_progress_is_routed_to_the_request_by_its_token(void **state)
{
    fixture *f = *state;
    reply a = {0}, b = {0};
    json_int_t ida, idb;
    assert_int_equal(mcp__rpc_request(f->rpc, "tools/call",
                                      json_pack("{s:s, s:{s:s}}", "name", "t", "_meta", "k", "v"),
                                      0, 0, on_reply, on_progress, &a, &ida),
                     MCP_OK);
    assert_int_equal(
        mcp__rpc_request(f->rpc, "tools/call", NULL, 0, 0, on_reply, on_progress, &b, &idb),
        MCP_OK);
    /* The token is the request id; other _meta members are kept. */
    json_t *ma = sent_json(f, 0), *mb = sent_json(f, 1);
    json_t *meta_a = json_object_get(json_object_get(ma, "params"), "_meta");
    assert_int_equal(json_integer_value(json_object_get(meta_a, "progressToken")), ida);
    assert_string_equal(json_string_value(json_object_get(meta_a, "k")), "v");
    assert_string_equal(json_string_value(json_object_get(json_object_get(ma, "params"), "name")),
                        "t");
    json_t *meta_b = json_object_get(json_object_get(mb, "params"), "_meta");
    assert_int_equal(json_integer_value(json_object_get(meta_b, "progressToken")), idb);
    json_decref(ma);
    json_decref(mb);

    char text[200];
    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
             "\"params\":{\"progressToken\":%lld,\"progress\":3,\"total\":10}}",
             (long long)idb);
    feed(f, text);
    assert_int_equal(b.progress_calls, 1);
    assert_int_equal(a.progress_calls, 0);
    assert_int_equal(json_integer_value(json_object_get(b.last_progress, "progress")), 3);
    assert_int_equal(f->nnotes, 0);

    /* Progress for a token nobody asked with goes to the owner as a plain notification. */
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
            "\"params\":{\"progressToken\":\"zzz\",\"progress\":1}}");
    assert_int_equal(f->nnotes, 1);
    assert_string_equal(f->notes[0].method, "notifications/progress");
    assert_int_equal(a.progress_calls + b.progress_calls, 1);

    /* After the request completes its token no longer routes. */
    snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)idb);
    feed(f, text);
    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
             "\"params\":{\"progressToken\":%lld,\"progress\":4}}",
             (long long)idb);
    feed(f, text);
    assert_int_equal(b.progress_calls, 1);
    assert_int_equal(f->nnotes, 2);
    reply_clear(&a);
    reply_clear(&b);
}

/* ---- Cancellation of incoming requests ---- */

static void test_incoming_cancelled_marks_request_and_drops_its_answer(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\"}");
    assert_int_equal(f->nreqs, 2);
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            "\"params\":{\"requestId\":5,\"reason\":\"no longer needed\"}}");
    assert_int_equal(f->ncancelled, 1);
    assert_string_equal(f->reason, "no longer needed"); /* passed on, for the handler */
    mcp__inreq *r5 = take_req(f, 0), *r6 = take_req(f, 1);
    assert_ptr_equal(f->cancelled[0], r5);
    assert_true(r5->cancelled);
    assert_false(r6->cancelled);
    assert_int_equal(f->nnotes, 0); /* handled by the engine, not passed on */

    /* Cancellations for unknown ids, or of the wrong type, are ignored. */
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            "\"params\":{\"requestId\":77}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            "\"params\":{\"requestId\":\"6\"}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
    assert_int_equal(f->ncancelled, 1);
    assert_false(r6->cancelled);

    assert_int_equal(mcp__rpc_respond(r5, json_object()), MCP_OK);
    assert_int_equal(f->nsent, 0);  /* the spec: no answer to a cancelled request */
    assert_int_equal(f->nended, 1); /* but the transport hears that it is over */
    assert_int_equal(mcp__rpc_inflight(f->rpc), 1);
    mcp__rpc_respond(r6, json_object());
    assert_int_equal(f->nsent, 1);
    json_t *m = sent_json(f, 0);
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 6);
    json_decref(m);
    assert_int_equal(f->nsent, 1);
}

static void test_incoming_cancelled_cannot_cancel_initialize(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{}}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            "\"params\":{\"requestId\":\"init\"}}");
    assert_int_equal(f->ncancelled, 0);
    mcp__inreq *r = take_req(f, 0);
    assert_false(r->cancelled);
    mcp__rpc_respond(r, json_object());
    assert_int_equal(f->nsent, 1);
}

static void test_cancelled_request_in_a_batch_is_left_out_of_the_array(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    feed(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}]");
    feed(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            "\"params\":{\"requestId\":1}}");
    mcp__rpc_respond(take_req(f, 0), json_object());
    assert_int_equal(f->nsent, 0);
    mcp__rpc_respond(take_req(f, 1), json_object());
    assert_int_equal(f->nsent, 1);
    assert_int_equal(f->nended, 0); /* the batch's array is what ends it */
    json_t *arr = sent_json(f, 0);
    assert_int_equal(json_array_size(arr), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "id")), 2);
    json_decref(arr);
}

/* ---- Closing and freeing ---- */

static void test_close_fails_outgoing_requests_with_closed(void **state)
{
    fixture *f = *state;
    reply a = {0}, b = {0};
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 0, on_reply, NULL, &a, NULL), MCP_OK);
    assert_int_equal(mcp__rpc_request(f->rpc, "y", NULL, 0, 60000, on_reply, NULL, &b, NULL),
                     MCP_OK);
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"z\"}");
    size_t before = f->nsent;
    assert_false(mcp__rpc_closed(f->rpc));
    mcp__rpc_close(f->rpc);
    assert_true(mcp__rpc_closed(f->rpc));
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, MCP_ECLOSED);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.status, MCP_ECLOSED);
    /* Closed: nothing more is sent, fed messages are ignored, answers are dropped. */
    reply c = {0};
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 0, on_reply, NULL, &c, NULL),
                     MCP_ECLOSED);
    assert_int_equal(c.calls, 0);
    assert_int_equal(mcp__rpc_notify(f->rpc, "notifications/x", json_object(), 0), MCP_ECLOSED);
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"z\"}");
    feed(f, "not json");
    assert_int_equal(f->requests_seen, 1);
    mcp__inreq *r = take_req(f, 0);
    assert_true(r->cancelled);
    mcp__rpc_respond(r, json_object());
    assert_int_equal(f->nsent, before);
    assert_int_equal(f->nended, 0);
    assert_int_equal(mcp__rpc_inflight(f->rpc), 0);
    mcp__rpc_close(f->rpc); /* twice is harmless */
    reply_clear(&a);
    reply_clear(&b);
}

static void test_input_closed_fails_outgoing_but_answers_still_go_out(void **state)
{
    fixture *f = *state;
    reply a = {0};
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 60000, on_reply, NULL, &a, NULL),
                     MCP_OK);
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"z\"}");
    mcp__rpc_input_closed(f->rpc);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, MCP_ECLOSED);
    reply b = {0};
    assert_int_equal(mcp__rpc_request(f->rpc, "x", NULL, 0, 0, on_reply, NULL, &b, NULL),
                     MCP_ECLOSED);
    assert_int_equal(b.calls, 0);
    size_t before = f->nsent;
    mcp__rpc_respond(take_req(f, 0), json_object());
    assert_int_equal(f->nsent, before + 1);
    reply_clear(&a);
}

static void test_free_with_requests_in_flight_frees_after_they_are_answered(void **state)
{
    fixture *f = *state;
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}");
    feed(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}");
    mcp__inreq *r1 = take_req(f, 0), *r2 = take_req(f, 1);
    mcp__rpc *rpc = f->rpc;
    f->rpc = NULL; /* the test owns what is left */
    mcp__rpc_free(rpc);
    /* The engine is still there for the requests: their answers are dropped without a
     * use after free (ASan would say), and the last answer releases it (LSan would say
     * if it did not). */
    assert_true(r1->cancelled);
    assert_int_equal(mcp__rpc_respond(r1, json_object()), MCP_OK);
    assert_int_equal(mcp__rpc_respond_error(r2, -32000, "late", NULL), MCP_OK);
    assert_int_equal(f->nsent, 0);
}

static void test_free_with_nothing_in_flight_and_free_null(void **state)
{
    fixture *f = *state;
    mcp__rpc_free(f->rpc);
    f->rpc = NULL;
    mcp__rpc_free(NULL);
}

static void test_free_of_a_batch_in_flight_sends_nothing(void **state)
{
    fixture *f = *state;
    mcp__rpc_allow_batch(f->rpc, 1);
    feed(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}, 5]");
    mcp__inreq *r1 = take_req(f, 0), *r2 = take_req(f, 1);
    mcp__rpc *rpc = f->rpc;
    f->rpc = NULL;
    mcp__rpc_free(rpc);
    mcp__rpc_respond(r2, json_object());
    mcp__rpc_respond(r1, json_object());
    assert_int_equal(f->nsent, 0);
}

static void test_reject_oversized_answers_with_the_sizes_and_id_null(void **state)
{
    fixture *f = *state;
    mcp__rpc_reject_oversized(f->rpc, 5000000, 4194304, 11);
    assert_int_equal(f->nsent, 1);
    assert_int_equal(f->sent[0].stream, 11);
    json_t *m = sent_json(f, 0);
    assert_error_answer(m, NULL, MCP_RPC_INVALID_REQUEST);
    assert_non_null(strstr(error_message(m), "5000000"));
    assert_non_null(strstr(error_message(m), "4194304"));
    json_decref(m);
}

static void test_notify_sends_a_notification_without_id(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        mcp__rpc_notify(f->rpc, "notifications/message", json_pack("{s:s}", "level", "info"), 6),
        MCP_OK);
    assert_int_equal(mcp__rpc_notify(f->rpc, "notifications/initialized", NULL, 0), MCP_OK);
    json_t *m0 = sent_json(f, 0), *m1 = sent_json(f, 1);
    assert_null(json_object_get(m0, "id"));
    assert_string_equal(json_string_value(json_object_get(m0, "method")), "notifications/message");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m0, "params"), "level")),
                        "info");
    assert_int_equal(f->sent[0].stream, 6);
    assert_int_equal(f->sent[0].flags, 0);
    assert_null(json_object_get(m1, "params"));
    json_decref(m0);
    json_decref(m1);
}

static void test_id_valid_and_error_message_helpers(void **state)
{
    (void)state;
    json_t *i = json_integer(1), *s = json_string("a"), *r = json_real(1.0), *n = json_null();
    assert_true(mcp__id_valid(i));
    assert_true(mcp__id_valid(s));
    assert_false(mcp__id_valid(r));
    assert_false(mcp__id_valid(n));
    assert_false(mcp__id_valid(NULL));
    json_t *m = mcp__error_message(NULL, -32600, "bad", NULL);
    assert_error_answer(m, NULL, -32600);
    json_decref(m);
    m = mcp__error_message(s, -32601, "nf", json_pack("{s:i}", "x", 1));
    assert_error_answer(m, s, -32601);
    assert_non_null(json_object_get(json_object_get(m, "error"), "data"));
    json_decref(m);
    /* A message that is not UTF-8 (a handler's bytes) still makes an answer. */
    m = mcp__error_message(i, -32603, "bad \xff\xfe bytes", NULL);
    assert_error_answer(m, i, -32603);
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "error"), "message")),
                        "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
    json_decref(m);
    json_decref(i);
    json_decref(s);
    json_decref(r);
    json_decref(n);
}

static void test_feed_value_takes_a_parsed_message_and_leaves_it_to_the_caller(void **state)
{
    fixture *f = *state;
    f->answer_inline = 1;
    json_t *v = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 3, "method", "ping");
    mcp__rpc_feed_value(f->rpc, v, 8);
    assert_int_equal(v->refcount, 1); /* borrowed: neither kept nor released */
    json_decref(v);
    assert_int_equal(f->nsent, 1);
    assert_int_equal(f->sent[0].stream, 8);
    assert_non_null(strstr(f->sent[0].text, "\"id\":3"));

    json_t *batch = json_pack("[{s:s, s:i, s:s}]", "jsonrpc", "2.0", "id", 4, "method", "ping");
    mcp__rpc_feed_value(f->rpc, batch, 0); /* batches are not allowed here */
    assert_int_equal(batch->refcount, 1);
    json_decref(batch);
    json_t *m = sent_json(f, 1);
    assert_error_answer(m, NULL, MCP_RPC_INVALID_REQUEST);
    json_decref(m);
}

static void test_classify_tells_requests_notifications_responses_and_invalid_apart(void **state)
{
    (void)state;
    struct {
        const char *text;
        mcp__msg_kind kind;
        int code;
        int echoes_id;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", MCP__MSG_REQUEST, 0, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"a\",\"params\":{}}", MCP__MSG_REQUEST, 0,
         1},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}", MCP__MSG_NOTIFICATION, 0, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", MCP__MSG_RESPONSE, 0, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\"}}",
         MCP__MSG_RESPONSE, 0, 1},
        {"[]", MCP__MSG_INVALID, MCP_RPC_INVALID_REQUEST, 0},
        {"{\"id\":1,\"method\":\"a\"}", MCP__MSG_INVALID, MCP_RPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", MCP__MSG_INVALID, MCP_RPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"a\"}", MCP__MSG_INVALID,
         MCP_RPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}", MCP__MSG_INVALID,
         MCP_RPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"a\",\"params\":[]}", MCP__MSG_INVALID,
         MCP_RPC_INVALID_PARAMS, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = json_loads(cases[i].text, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        int code = 12345;
        const char *why = "unset";
        const json_t *echo = (const json_t *)v;
        mcp__msg_kind kind = mcp__jsonrpc_classify(v, &code, &why, &echo);
        if (kind != cases[i].kind || code != cases[i].code)
            fail_msg("%s: kind %d code %d", cases[i].text, (int)kind, code);
        if (kind == MCP__MSG_INVALID)
            assert_non_null(why);
        else
            assert_null(why);
        if (kind == MCP__MSG_INVALID)
            assert_int_equal(echo != NULL, cases[i].echoes_id);
        json_decref(v);
    }
}

static void test_parse_gives_the_value_or_a_ready_parse_error_answer(void **state)
{
    (void)state;
    json_t *err = (json_t *)1;
    json_t *v = mcp__jsonrpc_parse("{\"a\":1}", 7, &err);
    assert_non_null(v);
    assert_null(err);
    json_decref(v);
    /* Only len bytes are read: the text need not be NUL-terminated. */
    v = mcp__jsonrpc_parse("[1]garbage", 3, &err);
    assert_non_null(v);
    json_decref(v);
    v = mcp__jsonrpc_parse("\n\n  {x", 6, &err);
    assert_null(v);
    assert_non_null(err);
    assert_error_answer(err, NULL, MCP_RPC_PARSE_ERROR);
    json_t *data = json_object_get(json_object_get(err, "error"), "data");
    assert_int_equal(json_integer_value(json_object_get(data, "line")), 3);
    json_decref(err);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_feed_malformed_json_answers_parse_error_with_line_and_column),
        T(test_feed_value_that_is_not_an_object_is_an_invalid_request),
        T(test_classify_gives_the_id_to_echo_whenever_it_is_readable),
        T(test_feed_wrong_or_missing_jsonrpc_version_is_an_invalid_request),
        T(test_feed_missing_method_is_an_invalid_request_echoing_the_id),
        T(test_feed_method_that_is_not_a_string_is_an_invalid_request),
        T(test_feed_ids_of_every_wrong_type_are_answered_with_id_null),
        T(test_feed_string_and_int64_ids_are_echoed_exactly),
        T(test_feed_params_that_are_not_an_object_are_invalid_params),
        T(test_feed_notification_with_bad_params_is_dropped_silently),
        T(test_feed_valid_request_is_delivered_and_answered_on_its_stream),
        T(test_respond_error_sends_code_message_and_data),
        T(test_feed_duplicate_id_in_flight_is_an_invalid_request),
        T(test_feed_batch_is_refused_unless_allowed),
        T(test_feed_empty_batch_is_an_invalid_request),
        T(test_feed_batch_of_101_is_refused_whole_and_100_is_taken),
        T(test_feed_batch_of_only_notifications_sends_no_answer),
        T(test_feed_batch_answers_as_one_array_once_all_are_answered),
        T(test_feed_batch_answered_inline_is_sent_once_after_the_feed),
        T(test_feed_batch_with_duplicate_ids_answers_the_second_with_an_error),
        T(test_responses_are_matched_to_outgoing_requests),
        T(test_responses_with_unknown_ids_are_ignored),
        T(test_outgoing_request_with_non_object_params_is_refused),
        T(test_outgoing_request_that_cannot_be_sent_returns_the_error_only),
        T(test_request_timeout_sends_cancelled_and_completes_with_timedout),
        T(test_answer_before_timeout_stops_the_timer),
        T(test_cancel_of_outgoing_request_sends_cancelled_and_completes),
        T(test_progress_is_routed_to_the_request_by_its_token),
        T(test_incoming_cancelled_marks_request_and_drops_its_answer),
        T(test_incoming_cancelled_cannot_cancel_initialize),
        T(test_cancelled_request_in_a_batch_is_left_out_of_the_array),
        T(test_close_fails_outgoing_requests_with_closed),
        T(test_input_closed_fails_outgoing_but_answers_still_go_out),
        T(test_free_with_requests_in_flight_frees_after_they_are_answered),
        T(test_free_with_nothing_in_flight_and_free_null),
        T(test_free_of_a_batch_in_flight_sends_nothing),
        T(test_reject_oversized_answers_with_the_sizes_and_id_null),
        T(test_notify_sends_a_notification_without_id),
        T(test_id_valid_and_error_message_helpers),
        T(test_feed_value_takes_a_parsed_message_and_leaves_it_to_the_caller),
        T(test_classify_tells_requests_notifications_responses_and_invalid_apart),
        T(test_parse_gives_the_value_or_a_ready_parse_error_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
