/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the task store's rules (src/store/tasks.h) and the memory store: a
 * task's life through answer, cancel and finish as the extension describes it (partial
 * answers, keys answered once, a cancel that waits for its run, a finish of a run that is
 * no longer the task's), and the store's bounds per owner, in all and in bytes, its owner
 * check and its expiry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/tasks.h"
#include "util/util.h"

static json_t *record(const char *id, const char *owner, long long expires)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{s:s}, s:{}, s:i, s:s}", "id", id,
                     "owner", owner, "status", "working", "created", (json_int_t)1, "updated",
                     (json_int_t)1, "expires", (json_int_t)expires, "ttl", (json_int_t)60000,
                     "request", "name", "t", "answers", "rounds", 0, "run", "0:1");
}

static json_t *asking(json_t *rec, const char *keys[], size_t n)
{
    json_t *inputs = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(inputs, keys[i],
                            json_pack("{s:s, s:{}}", "method", "elicitation/create", "params"));
    json_t *outcome = json_pack("{s:s, s:o}", "status", "input_required", "inputs", inputs);
    assert_int_equal(mcp__task_apply_finish(rec, "0:1", outcome, 2), MCP_OK);
    json_decref(outcome);
    return rec;
}

static const char *status(const json_t *rec)
{
    return json_string_value(json_object_get(rec, "status"));
}

static void test_answers_partial_then_all(void **state)
{
    (void)state;
    const char *keys[] = {"a", "b"};
    json_t *rec = asking(record("t1", "", 9e15), keys, 2);
    assert_string_equal(status(rec), "input_required");
    assert_null(json_object_get(rec, "run"));
    assert_int_equal(json_integer_value(json_object_get(rec, "rounds")), 1);
    /* One of two, and a key never asked (ignored). */
    json_t *ans =
        json_pack("{s:{s:s, s:i}, s:{s:s, s:i}}", "a", "h", "x", "a", 1, "zzz", "h", "y", "a", 2);
    assert_int_equal(mcp__task_apply_answer(rec, ans, "0:2", 3), MCP_OK);
    json_decref(ans);
    assert_string_equal(status(rec), "input_required");
    assert_int_equal(json_object_size(json_object_get(rec, "inputs")), 1);
    assert_non_null(json_object_get(json_object_get(rec, "inputs"), "b"));
    assert_non_null(json_object_get(json_object_get(rec, "answers"), "a"));
    assert_null(json_object_get(json_object_get(rec, "answers"), "zzz"));
    /* "a" again: already answered, ignored (the first answer stays). */
    ans = json_pack("{s:{s:s, s:i}}", "a", "h", "x", "a", 9);
    assert_int_equal(mcp__task_apply_answer(rec, ans, "0:2", 4), MCP_OK);
    json_decref(ans);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(rec, "answers"), "a"), "a")),
                     1);
    /* The last one: working again, under the new run. */
    ans = json_pack("{s:{s:s, s:i}}", "b", "h", "z", "a", 3);
    assert_int_equal(mcp__task_apply_answer(rec, ans, "0:2", 5), MCP_OK);
    json_decref(ans);
    assert_string_equal(status(rec), "working");
    assert_string_equal(json_string_value(json_object_get(rec, "run")), "0:2");
    assert_null(json_object_get(rec, "inputs"));
    /* Working: nothing to answer. */
    ans = json_pack("{s:{}}", "b");
    assert_int_equal(mcp__task_apply_answer(rec, ans, "0:3", 6), MCP_ESTATE);
    json_decref(ans);
    json_decref(rec);
}

static void test_finish_only_by_its_run(void **state)
{
    (void)state;
    json_t *rec = record("t2", "", 9e15);
    json_t *done = json_pack("{s:s, s:{s:[]}}", "status", "completed", "result", "content");
    assert_int_equal(mcp__task_apply_finish(rec, "7:1", done, 2), MCP_ESTATE); /* not its run */
    assert_string_equal(status(rec), "working");
    assert_int_equal(mcp__task_apply_finish(rec, "0:1", done, 2), MCP_OK);
    assert_string_equal(status(rec), "completed");
    /* Only the outcome is kept. */
    assert_non_null(json_object_get(rec, "result"));
    assert_null(json_object_get(rec, "request"));
    assert_null(json_object_get(rec, "answers"));
    assert_null(json_object_get(rec, "run"));
    assert_int_equal(mcp__task_apply_finish(rec, "0:1", done, 3), MCP_ESTATE);
    assert_int_equal(mcp__task_apply_cancel(rec, 3), MCP_ESTATE); /* terminal */
    assert_string_equal(status(rec), "completed");
    json_decref(done);
    json_decref(rec);
}

static void test_cancel_waits_for_a_run_not_for_input(void **state)
{
    (void)state;
    json_t *rec = record("t3", "", 9e15);
    assert_int_equal(mcp__task_apply_cancel(rec, 2), MCP_OK);
    assert_string_equal(status(rec), "working"); /* its run files the end */
    json_t *err = json_pack("{s:s, s:{s:i, s:s}}", "status", "failed", "error", "code", -32603,
                            "message", "stopped");
    assert_int_equal(mcp__task_apply_finish(rec, "0:1", err, 3), MCP_OK);
    assert_string_equal(status(rec), "cancelled"); /* whatever the run says */
    assert_null(json_object_get(rec, "error"));
    json_decref(err);
    json_decref(rec);
    const char *keys[] = {"q"};
    rec = asking(record("t4", "", 9e15), keys, 1);
    assert_int_equal(mcp__task_apply_cancel(rec, 4), MCP_OK);
    assert_string_equal(status(rec), "cancelled"); /* nothing ran: at once */
    assert_null(json_object_get(rec, "inputs"));
    json_decref(rec);
}

/* ---- The memory store ---- */

typedef struct seen {
    int status;
    json_t *rec;
} seen;

static void keep(void *arg, int status, const json_t *rec)
{
    seen *s = arg;
    s->status = status;
    json_decref(s->rec);
    s->rec = rec != NULL ? json_deep_copy(rec) : NULL;
}

static int create(mcp__task_store *st, json_t *rec, size_t max_owner, size_t max_total)
{
    seen s = {0};
    st->ops->create(st->self, rec, max_owner, max_total, keep, &s);
    json_decref(rec);
    json_decref(s.rec);
    return s.status;
}

static void test_memory_bounds_and_owners(void **state)
{
    (void)state;
    mcp__task_store *st = mcp__task_memory_new(1 << 20);
    assert_non_null(st);
    long long far = (long long)mcp__wall_ms() + 3600000;
    assert_int_equal(create(st, record("a1", "alice", far), 2, 3), MCP_OK);
    assert_int_equal(create(st, record("a2", "alice", far), 2, 3), MCP_OK);
    assert_int_equal(create(st, record("a3", "alice", far), 2, 3), MCP_ELIMIT); /* per owner */
    assert_int_equal(create(st, record("b1", "bob", far), 2, 3), MCP_OK);
    assert_int_equal(create(st, record("b2", "bob", far), 2, 3), MCP_ELIMIT); /* in all */
    size_t bytes = 0;
    assert_int_equal(mcp__task_memory_count(st, &bytes), 3);
    assert_true(bytes > 0);
    /* Another owner's task is not there; its owner's is. */
    seen s = {0};
    st->ops->get(st->self, "a1", "bob", keep, &s);
    assert_int_equal(s.status, MCP_ENOENT);
    st->ops->cancel(st->self, "a1", "bob", keep, &s);
    assert_int_equal(s.status, MCP_ENOENT);
    st->ops->get(st->self, "a1", "alice", keep, &s);
    assert_int_equal(s.status, MCP_OK);
    assert_string_equal(status(s.rec), "working");
    st->ops->get(st->self, "nope", "alice", keep, &s);
    assert_int_equal(s.status, MCP_ENOENT);
    json_decref(s.rec);
    mcp__task_memory_free(st);
}

static void test_memory_budget_and_expiry(void **state)
{
    (void)state;
    mcp__task_store *st = mcp__task_memory_new(4096);
    long long now = (long long)mcp__wall_ms();
    assert_int_equal(create(st, record("x1", "", now + 3600000), 100, 100), MCP_OK);
    /* A result too large for the budget: the task fails, saying so, instead. */
    char *big = malloc(8192);
    memset(big, 'r', 8191);
    big[8191] = '\0';
    json_t *done = json_pack("{s:s, s:{s:s}}", "status", "completed", "result", "text", big);
    free(big);
    seen s = {0};
    st->ops->finish(st->self, "x1", "0:1", done, keep, &s);
    json_decref(done);
    assert_int_equal(s.status, MCP_OK);
    assert_string_equal(status(s.rec), "failed");
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(s.rec, "error"), "message")),
               "more than the server keeps"));
    /* A record that does not fit is not made. */
    json_t *fat = record("x2", "", now + 3600000);
    char *arg = malloc(8192);
    memset(arg, 'a', 8191);
    arg[8191] = '\0';
    json_object_set_new(json_object_get(fat, "request"), "arguments", json_pack("{s:s}", "a", arg));
    free(arg);
    assert_int_equal(create(st, fat, 100, 100), MCP_ELIMIT);
    /* Expired records go at the next operation. */
    assert_int_equal(create(st, record("x3", "", now - 1), 100, 100), MCP_OK);
    st->ops->get(st->self, "x3", "", keep, &s);
    assert_int_equal(s.status, MCP_ENOENT);
    assert_int_equal(mcp__task_memory_count(st, NULL), 1);
    json_decref(s.rec);
    mcp__task_memory_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_partial_then_all),
        cmocka_unit_test(test_finish_only_by_its_run),
        cmocka_unit_test(test_cancel_waits_for_a_run_not_for_input),
        cmocka_unit_test(test_memory_bounds_and_owners),
        cmocka_unit_test(test_memory_budget_and_expiry),
    };
    return cmocka_run_group_tests_name("task_store", tests, NULL, NULL) ? 1 : 0;
}
