/* SPDX-License-Identifier: MIT */
/*
 * The stdio client when the server misbehaves: a server that stops reading its
 * stdin right after initialize. The client's next request fails to be written
 * (EPIPE); it must come back as an error, not end the process, and freeing the
 * client must still reap the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "harness.h"

static char script[64];

static int write_script(void **state)
{
    (void)state;
    snprintf(script, sizeof script, "/tmp/mcp-deaf-server-XXXXXX");
    static const char body[] =
        "#!/bin/sh\n"
        "read line\n"
        "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"deaf\",\"version\":\"1\"}}}'"
        "\n"
        "read initialized\n"
        "exec 0<&-\n"
        /* Tell the client its stdin is now closed, then stay alive. */
        "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
        "\"params\":{\"level\":\"info\",\"data\":\"deaf\"}}'\n"
        "exec sleep 30\n";
    return harness_write_script(script, body);
}

static int remove_script(void **state)
{
    (void)state;
    unlink(script);
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static volatile int deaf; /* set on the client's loop thread */

static void on_note(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c, (void)method, (void)params, (void)user;
    __atomic_store_n(&deaf, 1, __ATOMIC_SEQ_CST);
}

/* The request's own write hits EPIPE: the engine closes inside that send. */
static void test_request_written_to_a_closed_stdin_fails_cleanly(void **state)
{
    (void)state;
    deaf = 0;
    mcp_client *c = mcp_client_new("failures", "1");
    assert_non_null(c);
    /* The legacy era: what this test is about. */
    mcp_client_set_protocol(c, "legacy");
    assert_int_equal(mcp_client_on_notification(c, on_note, NULL), MCP_OK);
    const char *argv[] = {script, NULL};
    assert_int_equal(mcp_client_connect_stdio(c, argv, 5000), MCP_OK);
    long long deadline = now_ms() + 10000;
    while (!__atomic_load_n(&deaf, __ATOMIC_SEQ_CST) && now_ms() < deadline) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL); /* polling a flag set by the client's thread, with a deadline */
    }
    assert_true(deaf);
    int rc = mcp_client_ping(c, 5000);
    if (rc != MCP_ECLOSED && rc != MCP_EIO)
        fail_msg("expected MCP_ECLOSED or MCP_EIO, got %s", mcp_strerror(rc));
    mcp_client_free(c);
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

/* Requests that time out against a server that stopped reading: the cancellation's
 * write is the one that fails. */
static void test_request_to_a_server_that_stopped_reading_fails_cleanly(void **state)
{
    (void)state;
    mcp_client *c = mcp_client_new("failures", "1");
    assert_non_null(c);
    /* The legacy era: what this test is about. */
    mcp_client_set_protocol(c, "legacy");
    const char *argv[] = {script, NULL};
    assert_int_equal(mcp_client_connect_stdio(c, argv, 5000), MCP_OK);
    /* Until the shell has closed its stdin, writes still succeed and the request just
     * waits: keep the timeout short and try again until a write fails. */
    int rc = MCP_OK;
    long long deadline = now_ms() + 10000;
    while (now_ms() < deadline) {
        mcp_call_opts opts = {.timeout_ms = 100};
        json_t *result = NULL;
        rc = mcp_client_request(c, "ping", NULL, &opts, &result, NULL);
        json_decref(result);
        if (rc != MCP_ETIMEDOUT)
            break;
    }
    if (rc != MCP_ECLOSED && rc != MCP_EIO)
        fail_msg("expected MCP_ECLOSED or MCP_EIO once the server stopped reading, got %s",
                 mcp_strerror(rc));
    /* The client stays usable as an object: further calls fail the same way. */
    assert_int_not_equal(mcp_client_ping(c, 200), MCP_OK);
    mcp_client_free(c);
    /* The child was reaped by the client: nothing is left to wait for. */
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_written_to_a_closed_stdin_fails_cleanly),
        cmocka_unit_test(test_request_to_a_server_that_stopped_reading_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, write_script, remove_script);
}
