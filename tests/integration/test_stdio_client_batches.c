/* SPDX-License-Identifier: MIT */
/*
 * The client takes JSON-RPC batches from a server exactly where the negotiated
 * revision has them: 2025-03-26 obliges every implementation to receive them,
 * and 2025-06-18 removed them. The server is a shell script that answers
 * initialize with the version it is given, sends two pings as one batch, and
 * hands the client's answer back as the data of a log notification.
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
#include <unistd.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "harness.h"

#define WAIT_MS 10000

static char script[64];

static int write_script(void **state)
{
    (void)state;
    snprintf(script, sizeof script, "/tmp/mcp-batch-server-XXXXXX");
    static const char body[] =
        "#!/bin/sh\n"
        "read line\n"
        "printf '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"%s\","
        "\"capabilities\":{},\"serverInfo\":{\"name\":\"batcher\",\"version\":\"1\"}}}\\n' \"$1\"\n"
        "read initialized\n"
        "printf '%s\\n' '[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"},"
        "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"}]'\n"
        "read -r answer\n"
        "printf '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
        "\"params\":{\"level\":\"info\",\"data\":%s}}\\n' \"$answer\"\n"
        "exec cat >/dev/null\n";
    return harness_write_script(script, body);
}

static int remove_script(void **state)
{
    (void)state;
    unlink(script);
    return 0;
}

/* The client's answer to the batch, as the script gave it back. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    json_t *answer;
} seen = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL};

static void on_note(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c, (void)user;
    if (strcmp(method, "notifications/message") != 0)
        return;
    pthread_mutex_lock(&seen.lock);
    json_decref(seen.answer);
    seen.answer = json_incref(json_object_get(params, "data"));
    pthread_cond_signal(&seen.cv);
    pthread_mutex_unlock(&seen.lock);
}

/* Connects to the script speaking `version` and returns the client's answer to the
 * batch (the caller releases it); fails the test when none comes in time. */
static json_t *answer_to_batch(const char *version)
{
    mcp_client *c = mcp_client_new("batches", "1");
    assert_non_null(c);
    /* The legacy era: what this test is about. */
    mcp_client_set_protocol(c, "legacy");
    assert_int_equal(mcp_client_on_notification(c, on_note, NULL), MCP_OK);
    const char *argv[] = {script, version, NULL};
    assert_int_equal(mcp_client_connect_stdio(c, argv, WAIT_MS), MCP_OK);
    assert_string_equal(mcp_client_protocol_version(c), version);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&seen.lock);
    while (seen.answer == NULL && pthread_cond_timedwait(&seen.cv, &seen.lock, &deadline) == 0) {
    }
    json_t *answer = seen.answer;
    seen.answer = NULL;
    pthread_mutex_unlock(&seen.lock);
    mcp_client_free(c);
    if (answer == NULL)
        fail_msg("no answer to the batch within %d ms (protocol %s)", WAIT_MS, version);
    return answer;
}

static void test_client_answers_a_batch_with_a_batch_on_2025_03_26(void **state)
{
    (void)state;
    json_t *answer = answer_to_batch("2025-03-26");
    assert_true(json_is_array(answer));
    assert_int_equal(json_array_size(answer), 2);
    int got_a = 0, got_b = 0;
    size_t i;
    json_t *r;
    json_array_foreach(answer, i, r)
    {
        assert_true(json_is_object(json_object_get(r, "result")));
        const char *id = json_string_value(json_object_get(r, "id"));
        assert_non_null(id);
        got_a += strcmp(id, "a") == 0;
        got_b += strcmp(id, "b") == 0;
    }
    assert_int_equal(got_a, 1);
    assert_int_equal(got_b, 1);
    json_decref(answer);
}

static void test_client_refuses_a_batch_on_revisions_without_them(void **state)
{
    (void)state;
    static const char *const versions[] = {"2025-11-25", "2025-06-18", "2024-11-05"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        json_t *answer = answer_to_batch(versions[i]);
        /* Refused whole: one error, with a null id, is the whole answer. */
        assert_true(json_is_object(answer));
        assert_true(json_is_null(json_object_get(answer, "id")));
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(answer, "error"), "code")),
            MCP_RPC_INVALID_REQUEST);
        json_decref(answer);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_answers_a_batch_with_a_batch_on_2025_03_26),
        cmocka_unit_test(test_client_refuses_a_batch_on_revisions_without_them),
    };
    return cmocka_run_group_tests(tests, write_script, remove_script);
}
