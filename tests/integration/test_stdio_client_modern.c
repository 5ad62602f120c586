/* SPDX-License-Identifier: MIT */
/*
 * Our stdio client's eras, against server_stdio_peer (a scripted server that
 * logs what it reads) and mcp-everything:
 *
 * - the auto mode: a modern server is spoken to in revision 2026-07-28; a legacy
 *   one that refuses server/discover, one that exits on it (started again, then
 *   initialized) and one that never answers it (after the probe timeout, and
 *   without a notifications/cancelled for the probe) through initialize; a
 *   client pinned to 2026-07-28 fails against a legacy server and never sends
 *   initialize;
 * - Multi Round-Trip Requests over stdio, and mcp_client_ping as server/discover;
 * - cancellation over stdio: notifications/cancelled naming the request;
 * - subscriptions/listen: the acknowledged filter, notifications demultiplexed
 *   by subscription id between two subscriptions, a graceful end, an end by the
 *   server's notifications/cancelled, mcp_client_cancel (which sends
 *   notifications/cancelled), the server's exit, a flood of notifications; and
 *   the same API in the legacy era (resources/subscribe and unsubscribe).
 *
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
#include <unistd.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "client_watch.h"
#include "harness.h"

#define CALL_MS 10000
#define WAIT_MS 5000

static char peer[512], everything[512];

/* What a test's client saw, under a lock: subscription events and notifications. */
typedef struct seen {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    json_t *events; /* [{"sub", "kind", "method", "params", "status", "message"}] */
    json_t *notes;  /* [{"method", "params"}] of mcp_client_on_notification */
} seen;

static seen S;

static void on_listen(mcp_client *c, const mcp_listen_event *ev, void *user)
{
    (void)c, (void)user;
    static const char *const kinds[] = {"ack", "note", "end"};
    json_t *e = json_pack("{s:I, s:s, s:i}", "sub", (json_int_t)ev->subscription_id, "kind",
                          kinds[ev->kind], "status", ev->status);
    if (ev->method != NULL)
        json_object_set_new(e, "method", json_string(ev->method));
    if (ev->params != NULL)
        json_object_set_new(e, "params", json_deep_copy(ev->params));
    if (ev->err != NULL)
        json_object_set_new(e, "message", json_string(ev->err->message));
    pthread_mutex_lock(&S.mu);
    json_array_append_new(S.events, e);
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
}

static void on_note(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c, (void)user;
    pthread_mutex_lock(&S.mu);
    json_array_append_new(S.notes, json_pack("{s:s, s:O?}", "method", method, "params", params));
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
}

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    return json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "name", "Ada");
}

/* Waits until there are n subscription events (or notes). 0, or -1 at the deadline. */
static int wait_count(json_t **arr, size_t n)
{
    long long deadline = harness_now_ms() + WAIT_MS;
    pthread_mutex_lock(&S.mu);
    while (json_array_size(*arr) < n && harness_cond_wait_until(&S.cv, &S.mu, deadline))
        ;
    int ok = json_array_size(*arr) >= n;
    pthread_mutex_unlock(&S.mu);
    return ok ? 0 : -1;
}

/* The i-th event's field, as a string (borrowed until the test resets the events). */
static const char *ev_str(size_t i, const char *key)
{
    pthread_mutex_lock(&S.mu);
    const char *v = json_string_value(json_object_get(json_array_get(S.events, i), key));
    pthread_mutex_unlock(&S.mu);
    return v;
}

static long long ev_int(size_t i, const char *key)
{
    pthread_mutex_lock(&S.mu);
    long long v = json_integer_value(json_object_get(json_array_get(S.events, i), key));
    pthread_mutex_unlock(&S.mu);
    return v;
}

static const json_t *ev_params(size_t i)
{
    return json_object_get(json_array_get(S.events, i), "params");
}

static int setup(void **state)
{
    (void)state;
    pthread_mutex_init(&S.mu, NULL);
    harness_cond_init_monotonic(&S.cv);
    S.events = json_array();
    S.notes = json_array();
    return 0;
}

static int teardown_seen(void **state)
{
    (void)state;
    json_decref(S.events);
    json_decref(S.notes);
    pthread_cond_destroy(&S.cv);
    pthread_mutex_destroy(&S.mu);
    return 0;
}

typedef struct fixture {
    mcp_client *c;
    char log[64];
} fixture;

/* A client with the recording hooks, protocol set, connected to the peer with flags
 * (NULL-terminated), logging to a fresh file. Returns the connect's status. */
static int connect_peer(fixture *f, const char *protocol, int timeout_ms, const char *const *flags)
{
    pthread_mutex_lock(&S.mu);
    json_array_clear(S.events);
    json_array_clear(S.notes);
    pthread_mutex_unlock(&S.mu);
    snprintf(f->log, sizeof(f->log), "/tmp/mcp-stdio-peer-log-XXXXXX");
    int fd = mkstemp(f->log);
    assert_true(fd >= 0);
    close(fd);
    const char *argv[12] = {peer, "--log", f->log};
    size_t n = 3;
    for (size_t i = 0; flags != NULL && flags[i] != NULL && n < 11; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    f->c = mcp_client_new("stdio-modern-test", "1.0");
    assert_non_null(f->c);
    assert_int_equal(mcp_client_set_protocol(f->c, protocol), MCP_OK);
    assert_int_equal(mcp_client_set_timeout(f->c, CALL_MS), MCP_OK);
    assert_int_equal(mcp_client_on_notification(f->c, on_note, NULL), MCP_OK);
    assert_int_equal(mcp_client_on_elicitation(f->c, on_elicitation, NULL), MCP_OK);
    return mcp_client_connect_stdio(f->c, argv, timeout_ms);
}

static void done(fixture *f)
{
    mcp_client_free(f->c);
    f->c = NULL;
    unlink(f->log);
}

/* The peer's log: what it read, one "METHOD ID" a line (malloc'd). */
static char *peer_log(fixture *f)
{
    FILE *fp = fopen(f->log, "r");
    assert_non_null(fp);
    char *text = calloc(1, 65536);
    size_t n = fread(text, 1, 65535, fp);
    text[n] = '\0';
    fclose(fp);
    return text;
}

static void expect_text(fixture *f, const char *tool, json_t *args, const char *want)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    mcp_call_opts o = {.timeout_ms = CALL_MS};
    int rc = mcp_client_call_tool(f->c, tool, args, &o, &result, &err);
    if (rc != MCP_OK)
        fail_msg("%s: %s (%s)", tool, mcp_strerror(rc), err.message);
    assert_string_equal(cw_text(result), want);
    json_decref(result);
}

/* ---- Eras ---- */

static void test_auto_mode_picks_each_server_era(void **state)
{
    (void)state;
    fixture f;
    /* A modern server. */
    assert_int_equal(connect_peer(&f, "auto", CALL_MS, NULL), MCP_OK);
    assert_string_equal(mcp_client_protocol_version(f.c), "2026-07-28");
    assert_string_equal(json_string_value(json_object_get(mcp_client_server_info(f.c), "name")),
                        "stdio-peer");
    expect_text(&f, "ask", json_object(), "hello Ada (state kept)");
    assert_int_equal(mcp_client_ping(f.c, CALL_MS), MCP_OK);
    char *log = peer_log(&f);
    assert_null(strstr(log, "initialize"));
    assert_null(strstr(log, "\nping"));
    free(log);
    done(&f);

    /* A legacy server that refuses the probe. */
    const char *legacy[] = {"--legacy", NULL};
    assert_int_equal(connect_peer(&f, "auto", CALL_MS, legacy), MCP_OK);
    assert_string_equal(mcp_client_protocol_version(f.c), "2025-11-25");
    expect_text(&f, "echo", json_pack("{s:s}", "text", "legacy"), "legacy");
    log = peer_log(&f);
    assert_non_null(strstr(log, "server/discover 0\ninitialize 1\n"));
    free(log);
    done(&f);

    /* One that exits on the probe: started again, and initialized. */
    const char *dies[] = {"--exit-on-probe", NULL};
    assert_int_equal(connect_peer(&f, "auto", CALL_MS, dies), MCP_OK);
    assert_string_equal(mcp_client_protocol_version(f.c), "2025-11-25");
    expect_text(&f, "echo", json_pack("{s:s}", "text", "again"), "again");
    log = peer_log(&f);
    assert_non_null(strstr(log, "server/discover 0\ninitialize 1\n"));
    free(log);
    done(&f);

    /* One that never answers it: the probe waits for the connect's timeout (shorter than
     * 5 s), then initialize goes, without a cancellation of the probe before it. */
    const char *silent[] = {"--silent-probe", NULL};
    long long t0 = harness_now_ms();
    assert_int_equal(connect_peer(&f, "auto", 700, silent), MCP_OK);
    long long took = harness_now_ms() - t0;
    printf("silent probe: initialized after %lld ms\n", took);
    assert_true(took >= 650 && took < 3000);
    assert_string_equal(mcp_client_protocol_version(f.c), "2025-11-25");
    log = peer_log(&f);
    assert_non_null(strstr(log, "server/discover 0\ninitialize 1\n"));
    assert_null(strstr(log, "notifications/cancelled"));
    free(log);
    done(&f);

    /* Pinned to 2026-07-28: a legacy server fails the connect, and hears no initialize. */
    assert_int_equal(connect_peer(&f, "2026-07-28", CALL_MS, legacy), MCP_ERPC);
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_connect_error(f.c, &err), MCP_OK);
    printf("pinned modern against a legacy server: %s\n", err.message);
    assert_non_null(strstr(err.message, "does not speak revision 2026-07-28"));
    mcp_rpc_error_clear(&err);
    log = peer_log(&f);
    assert_null(strstr(log, "initialize"));
    free(log);
    done(&f);
}

static void test_modern_and_legacy_against_mcp_everything(void **state)
{
    (void)state;
    /* Dual-era: auto speaks 2026-07-28 to it; pinned legacy, 2025-11-25. */
    static const char *const modes[][2] = {{"auto", "2026-07-28"}, {"legacy", "2025-11-25"}};
    for (size_t i = 0; i < 2; i++) {
        mcp_client *c = mcp_client_new("stdio-modern-test", "1.0");
        assert_int_equal(mcp_client_set_protocol(c, modes[i][0]), MCP_OK);
        assert_int_equal(mcp_client_on_elicitation(c, on_elicitation, NULL), MCP_OK);
        const char *argv[] = {everything, "--stdio", NULL};
        assert_int_equal(mcp_client_connect_stdio(c, argv, CALL_MS), MCP_OK);
        assert_string_equal(mcp_client_protocol_version(c), modes[i][1]);
        json_t *result = NULL;
        assert_int_equal(mcp_client_call_tool(c, "add", json_pack("{s:i, s:i}", "a", 2, "b", 3),
                                              NULL, &result, NULL),
                         MCP_OK);
        assert_int_equal(json_integer_value(
                             json_object_get(json_object_get(result, "structuredContent"), "sum")),
                         5);
        json_decref(result);
        /* An elicitation: a server request (legacy), an input round (modern). */
        assert_int_equal(mcp_client_call_tool(c, "test_elicitation",
                                              json_pack("{s:s}", "message", "Who?"), NULL, &result,
                                              NULL),
                         MCP_OK);
        assert_non_null(strstr(cw_text(result), "Ada"));
        json_decref(result);
        assert_int_equal(mcp_client_ping(c, CALL_MS), MCP_OK);
        mcp_client_free(c);
    }
}

/* ---- Cancellation ---- */

static void ignore_reply(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                         void *user)
{
    (void)c, (void)result, (void)err;
    *(int *)user = status;
}

static void test_cancel_sends_notifications_cancelled_naming_the_request(void **state)
{
    (void)state;
    fixture f;
    assert_int_equal(connect_peer(&f, "auto", CALL_MS, NULL), MCP_OK);
    int status = 1;
    long long id = -1;
    assert_int_equal(mcp_client_request_async(f.c, "tools/call", json_pack("{s:s}", "name", "hold"),
                                              NULL, ignore_reply, &status, &id),
                     MCP_OK);
    assert_int_equal(mcp_client_cancel(f.c, id, "enough"), MCP_OK);
    /* The peer acknowledges the cancellation it read with a log message. */
    assert_int_equal(wait_count(&S.notes, 1), 0);
    char want[64];
    snprintf(want, sizeof(want), "cancelled %lld", id);
    pthread_mutex_lock(&S.mu);
    const char *data = json_string_value(
        json_object_get(json_object_get(json_array_get(S.notes, 0), "params"), "data"));
    pthread_mutex_unlock(&S.mu);
    assert_string_equal(data, want);
    done(&f);
    assert_int_equal(status, MCP_ECANCELED);
}

/* ---- subscriptions/listen ---- */

static void test_listen_demultiplexes_and_ends_every_way(void **state)
{
    (void)state;
    fixture f;
    assert_int_equal(connect_peer(&f, "auto", CALL_MS, NULL), MCP_OK);
    const char *uris[] = {"file:///a", NULL};
    mcp_listen_filter tools = {.tools_list_changed = 1, .prompts_list_changed = 1};
    mcp_listen_filter res = {.resource_uris = uris};
    long long a = -1, b = -1;
    assert_int_equal(mcp_client_listen(f.c, &tools, on_listen, NULL, &a), MCP_OK);
    assert_int_equal(mcp_client_listen(f.c, &res, on_listen, NULL, &b), MCP_OK);
    assert_int_equal(wait_count(&S.events, 2), 0);
    /* Each acknowledged, with the filter the server honours: no prompts. */
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(ev_str(i, "kind"), "ack");
        const json_t *n = json_object_get(ev_params(i), "notifications");
        if (ev_int(i, "sub") == a) {
            assert_true(json_is_true(json_object_get(n, "toolsListChanged")));
            assert_null(json_object_get(n, "promptsListChanged"));
        } else {
            assert_int_equal(ev_int(i, "sub"), b);
            assert_string_equal(
                json_string_value(json_array_get(json_object_get(n, "resourceSubscriptions"), 0)),
                "file:///a");
        }
    }
    /* Each notification to its own subscription, none to the application's hook. */
    expect_text(&f, "notify", json_object(), "notified 2");
    assert_int_equal(wait_count(&S.events, 4), 0);
    for (size_t i = 2; i < 4; i++) {
        assert_string_equal(ev_str(i, "kind"), "note");
        const char *m = ev_str(i, "method");
        assert_int_equal(ev_int(i, "sub"),
                         strcmp(m, "notifications/tools/list_changed") == 0 ? a : b);
    }
    assert_int_equal(json_array_size(S.notes), 0);
    /* A graceful end by the server: both end with MCP_OK. */
    expect_text(&f, "end_listens", json_object(), "done");
    assert_int_equal(wait_count(&S.events, 6), 0);
    assert_string_equal(ev_str(4, "kind"), "end");
    assert_int_equal(ev_int(4, "status"), MCP_OK);
    assert_int_equal(ev_int(5, "status"), MCP_OK);

    /* Ended by the server's notifications/cancelled: dropped. */
    assert_int_equal(mcp_client_listen(f.c, &tools, on_listen, NULL, &a), MCP_OK);
    assert_int_equal(wait_count(&S.events, 7), 0);
    expect_text(&f, "drop_listens", json_object(), "done");
    assert_int_equal(wait_count(&S.events, 8), 0);
    assert_string_equal(ev_str(7, "kind"), "end");
    assert_int_equal(ev_int(7, "status"), MCP_ECLOSED);
    assert_non_null(strstr(ev_str(7, "message"), "shutting down"));

    /* Ended by the application: notifications/cancelled names it. */
    assert_int_equal(mcp_client_listen(f.c, &tools, on_listen, NULL, &a), MCP_OK);
    assert_int_equal(wait_count(&S.events, 9), 0);
    assert_int_equal(mcp_client_cancel(f.c, a, "done listening"), MCP_OK);
    assert_int_equal(wait_count(&S.events, 10), 0);
    assert_int_equal(ev_int(9, "status"), MCP_ECANCELED);
    assert_int_equal(wait_count(&S.notes, 1), 0); /* the peer's "cancelled ID" */

    /* A flood: every notification delivered, in order, nothing queued up. */
    assert_int_equal(mcp_client_listen(f.c, &tools, on_listen, NULL, &a), MCP_OK);
    assert_int_equal(wait_count(&S.events, 11), 0);
    long long t0 = harness_now_ms();
    expect_text(&f, "flood", json_pack("{s:i}", "count", 20000), "flooded");
    assert_int_equal(wait_count(&S.events, 11 + 20000), 0);
    printf("a flood of 20000 notifications: %lld ms\n", harness_now_ms() - t0);

    /* The server exits: the subscription drops. */
    assert_int_equal(mcp_client_call_tool(f.c, "exit", json_object(), NULL, NULL, NULL),
                     MCP_ECLOSED);
    assert_int_equal(wait_count(&S.events, 11 + 20000 + 1), 0);
    size_t last = json_array_size(S.events) - 1;
    assert_string_equal(ev_str(last, "kind"), "end");
    assert_int_equal(ev_int(last, "status"), MCP_ECLOSED);
    char *log = peer_log(&f);
    assert_non_null(strstr(log, "subscriptions/listen"));
    free(log);
    done(&f);
}

static void test_listen_in_the_legacy_era(void **state)
{
    (void)state;
    fixture f;
    const char *legacy[] = {"--legacy", NULL};
    assert_int_equal(connect_peer(&f, "legacy", CALL_MS, legacy), MCP_OK);
    const char *uris[] = {"file:///a", NULL};
    mcp_listen_filter all = {
        .tools_list_changed = 1, .prompts_list_changed = 1, .resource_uris = uris};
    long long a = -1;
    assert_int_equal(mcp_client_listen(f.c, &all, on_listen, NULL, &a), MCP_OK);
    assert_int_equal(wait_count(&S.events, 1), 0);
    assert_string_equal(ev_str(0, "kind"), "ack");
    const json_t *n = json_object_get(ev_params(0), "notifications");
    assert_true(json_is_true(json_object_get(n, "toolsListChanged")));
    assert_null(json_object_get(n, "promptsListChanged")); /* not declared */
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(n, "resourceSubscriptions"), 0)),
        "file:///a");
    expect_text(&f, "notify", json_object(), "notified 2");
    assert_int_equal(wait_count(&S.events, 3), 0);
    assert_string_equal(ev_str(1, "method"), "notifications/tools/list_changed");
    assert_string_equal(ev_str(2, "method"), "notifications/resources/updated");
    assert_int_equal(mcp_client_cancel(f.c, a, NULL), MCP_OK);
    assert_int_equal(wait_count(&S.events, 4), 0);
    assert_int_equal(ev_int(3, "status"), MCP_ECANCELED);
    /* Unsubscribed: the next request is answered after the unsubscribe was read. */
    expect_text(&f, "echo", json_pack("{s:s}", "text", "x"), "x");
    char *log = peer_log(&f);
    assert_non_null(strstr(log, "resources/subscribe"));
    assert_non_null(strstr(log, "resources/unsubscribe"));
    free(log);
    done(&f);
}

int main(void)
{
    cw_test_filter_from_env();
    if (harness_bin_path("server_stdio_peer", peer, sizeof(peer)) != 0 ||
        harness_bin_path("mcp-everything", everything, sizeof(everything)) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_mode_picks_each_server_era),
        cmocka_unit_test(test_modern_and_legacy_against_mcp_everything),
        cmocka_unit_test(test_cancel_sends_notifications_cancelled_naming_the_request),
        cmocka_unit_test(test_listen_demultiplexes_and_ends_every_way),
        cmocka_unit_test(test_listen_in_the_legacy_era),
    };
    return cmocka_run_group_tests_name("stdio_client_modern", tests, setup, teardown_seen);
}
