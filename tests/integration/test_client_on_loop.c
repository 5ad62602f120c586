/* SPDX-License-Identifier: MIT */
/*
 * The client on the caller's libuv loop (mcp_client_new_on_loop): a host loop
 * with a repeating timer of its own runs a loop client against a freshly
 * spawned `$MCP_BIN_DIR/mcp-everything --stdio`, with no thread of the client's.
 *
 * Everything but the worker-thread cases runs on the test's thread inside
 * uv_run: the callbacks record what they saw and drive the next step, and the
 * assertions are made once uv_run returns. The loop returns by itself only when
 * the client and the host's own handles are gone, which is what the tests
 * check; a deadline timer (unreferenced, so it never keeps the loop alive)
 * stops it after DEADLINE_MS and fails the test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
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
#include <uv.h>

#include "harness.h"

#define DEADLINE_MS 20000
#define TICK_MS 5
#define CALL_TIMEOUT_MS 10000
/* Longer than any pause of a loop that is never blocked, even under sanitizers. */
#define MAX_TICK_GAP_MS 2000

typedef struct host {
    uv_loop_t loop;
    uv_timer_t ticker;   /* the host's own repeating timer */
    uv_timer_t deadline; /* unreferenced: stops the loop and fails the test */
    int ticks;
    uint64_t last_tick_ms, max_gap_ms;
    int timed_out;
    void (*on_tick)(struct host *h); /* the test's step on each tick, may be NULL */
    int close_on_tick;               /* the tick at which on_tick acts; 0: none */

    mcp_client *c;
    char server[4096];

    int connect_calls, connect_status;
    int response_calls, response_status;
    char response_text[256];
    int ticks_at_request, ticks_at_response;
    int notification_calls;
    int closed_calls;
    int loop_leftovers; /* handles other than the host's, seen when the client was gone */
    unsigned leftover_reqs;
    const char *step_failed; /* set by a callback that saw something wrong */
    int close_rc_in_callback;
} host;

/* ---- The host loop ---- */

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static void on_tick(uv_timer_t *t)
{
    host *h = t->data;
    uint64_t now = now_ms();
    if (h->ticks > 0 && now - h->last_tick_ms > h->max_gap_ms)
        h->max_gap_ms = now - h->last_tick_ms;
    h->last_tick_ms = now;
    h->ticks++;
    if (h->on_tick != NULL)
        h->on_tick(h);
}

static void on_deadline(uv_timer_t *t)
{
    host *h = t->data;
    h->timed_out = 1;
    uv_stop(&h->loop);
}

static void host_init(host *h)
{
    memset(h, 0, sizeof(*h));
    h->connect_status = h->response_status = 1; /* no MCP status is positive */
    h->close_rc_in_callback = 1;
    assert_int_equal(uv_loop_init(&h->loop), 0);
    uv_timer_init(&h->loop, &h->ticker);
    h->ticker.data = h;
    uv_timer_start(&h->ticker, on_tick, TICK_MS, TICK_MS);
    uv_timer_init(&h->loop, &h->deadline);
    h->deadline.data = h;
    uv_timer_start(&h->deadline, on_deadline, DEADLINE_MS, 0);
    uv_unref((uv_handle_t *)&h->deadline);
    assert_int_equal(harness_bin_path("mcp-everything", h->server, sizeof(h->server)), 0);
}

static void count_leftover(uv_handle_t *handle, void *arg)
{
    host *h = arg;
    if (handle != (uv_handle_t *)&h->ticker && handle != (uv_handle_t *)&h->deadline)
        h->loop_leftovers++;
}

/* The done callback of mcp_client_close: the client must have left nothing on
 * the loop; the host then stops its timer, which lets uv_run return. */
static void on_closed(void *user)
{
    host *h = user;
    h->closed_calls++;
    uv_walk(&h->loop, count_leftover, h);
    h->leftover_reqs = h->loop.active_reqs.count;
    if (!uv_is_closing((uv_handle_t *)&h->ticker))
        uv_close((uv_handle_t *)&h->ticker, NULL);
}

/* Runs the loop until it has nothing left to do (the deadline aside). */
static void host_run(host *h, const char *what)
{
    uv_run(&h->loop, UV_RUN_DEFAULT);
    if (h->timed_out)
        fail_msg("%s: the loop did not finish within %d ms", what, DEADLINE_MS);
    if (h->step_failed != NULL)
        fail_msg("%s: %s", what, h->step_failed);
}

/* After the client is gone: the loop closes, and no child is left unreaped. */
static void host_finish(host *h)
{
    assert_int_equal(h->closed_calls, 1);
    assert_int_equal(h->loop_leftovers, 0);
    assert_int_equal(h->leftover_reqs, 0);
    uv_close((uv_handle_t *)&h->deadline, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&h->loop), 0);
    int status;
    errno = 0;
    if (waitpid(-1, &status, WNOHANG) != -1 || errno != ECHILD)
        fail_msg("a child process is left after the client closed");
    if (h->max_gap_ms > MAX_TICK_GAP_MS)
        fail_msg("the host's timer stood still for %llu ms: the loop was blocked",
                 (unsigned long long)h->max_gap_ms);
}

static mcp_client *new_loop_client(host *h)
{
    mcp_client *c = NULL;
    assert_int_equal(mcp_client_new_on_loop(&h->loop, "loop-test", "1.0.0", &c), MCP_OK);
    assert_int_equal(mcp_client_set_protocol(c, "legacy"), MCP_OK);
    assert_non_null(c);
    h->c = c;
    return c;
}

static void connect_everything(host *h, mcp_connect_fn cb)
{
    const char *argv[] = {h->server, "--stdio", NULL};
    assert_int_equal(mcp_client_connect_stdio_async(h->c, argv, CALL_TIMEOUT_MS, cb, h), MCP_OK);
}

static const char *first_text(const json_t *result)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

/* Sends tools/call `name` with args (stolen); a failure to send fails the step. */
static void call_tool_async(host *h, const char *name, json_t *args, mcp_response_fn cb)
{
    json_t *params = json_pack("{s:s, s:o}", "name", name, "arguments", args);
    mcp_call_opts opts = {.timeout_ms = CALL_TIMEOUT_MS};
    h->ticks_at_request = h->ticks;
    if (mcp_client_request_async(h->c, "tools/call", params, &opts, cb, h, NULL) != MCP_OK)
        h->step_failed = "mcp_client_request_async failed";
}

/* Records a response; the caller's callback decides what comes next. */
static void record_response(host *h, int status, const json_t *result)
{
    h->response_calls++;
    h->response_status = status;
    h->ticks_at_response = h->ticks;
    const char *text = status == MCP_OK ? first_text(result) : NULL;
    snprintf(h->response_text, sizeof(h->response_text), "%s", text ? text : "");
}

static void close_client(host *h)
{
    h->close_rc_in_callback = mcp_client_close(h->c, on_closed, h);
}

static void record_connect(host *h, int status)
{
    h->connect_calls++;
    h->connect_status = status;
}

/* The start of a connect callback that goes on: true when connected; a failed
 * connect closes the client, which ends the test's loop. */
static int connected_or_close(host *h, int status)
{
    record_connect(h, status);
    if (status != MCP_OK)
        close_client(h);
    return status == MCP_OK;
}

/* ---- A tool call, then a close from inside the response callback ---- */

static void on_slow_echo(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                         void *user)
{
    host *h = user;
    (void)c, (void)err;
    record_response(h, status, result);
    close_client(h);
}

static void on_echo(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                    void *user)
{
    host *h = user;
    (void)c, (void)err;
    if (status != MCP_OK || strcmp(first_text(result), "hello from the host loop") != 0) {
        h->step_failed = "echo did not answer with its text";
        close_client(h);
        return;
    }
    /* A call that takes a while, so that the host's timer must tick meanwhile. */
    call_tool_async(h, "slow_echo", json_pack("{s:s, s:i}", "text", "later", "delay_ms", 300),
                    on_slow_echo);
}

static void on_connected_call_echo(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    if (!connected_or_close(h, status))
        return;
    call_tool_async(h, "echo", json_pack("{s:s}", "text", "hello from the host loop"), on_echo);
}

static void test_loop_client_calls_tools_and_closes_from_the_response_callback(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    new_loop_client(&h);
    connect_everything(&h, on_connected_call_echo);
    host_run(&h, "connect, echo, slow_echo, close");

    assert_int_equal(h.connect_calls, 1);
    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(h.response_calls, 1);
    assert_int_equal(h.response_status, MCP_OK);
    assert_string_equal(h.response_text, "later");
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    /* 300 ms at one tick per 5 ms: a loop that waited for the answer would show one at most. */
    if (h.ticks_at_response - h.ticks_at_request < 5)
        fail_msg("the host's timer ticked %d times during a 300 ms call",
                 h.ticks_at_response - h.ticks_at_request);
    host_finish(&h);
}

/* ---- Close with a request in flight ---- */

static void on_slow_response(mcp_client *c, int status, const json_t *result,
                             const mcp_rpc_error *err, void *user)
{
    (void)c, (void)err;
    record_response(user, status, result);
}

static void close_after_a_few_ticks(host *h)
{
    if (h->close_on_tick == 0 || h->ticks < h->close_on_tick)
        return;
    h->close_on_tick = 0;
    close_client(h);
    /* On the loop thread, the pending callback has run by now. */
    if (h->response_calls != 1)
        h->step_failed = "the pending request had not completed when mcp_client_close returned";
}

static void on_connected_call_slowly(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    if (!connected_or_close(h, status))
        return;
    call_tool_async(h, "slow_echo", json_pack("{s:s, s:i}", "text", "never", "delay_ms", 10000),
                    on_slow_response);
    h->close_on_tick = h->ticks + 3;
}

static void test_close_with_a_request_in_flight_completes_it_once_with_eclosed(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    h.on_tick = close_after_a_few_ticks;
    new_loop_client(&h);
    connect_everything(&h, on_connected_call_slowly);
    host_run(&h, "close with slow_echo in flight");

    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    assert_int_equal(h.response_calls, 1);
    if (h.response_status != MCP_ECLOSED)
        fail_msg("the request in flight ended with %s, expected MCP_ECLOSED",
                 mcp_strerror(h.response_status));
    host_finish(&h);
}

/* ---- Blocking calls on the loop thread ---- */

/* Every blocking call must refuse here: waiting would stop the loop it needs. */
static const char *blocking_calls_refused(host *h)
{
    mcp_client *c = h->c;
    const char *argv[] = {h->server, "--stdio", NULL};
    json_t *result = NULL;
    mcp_rpc_error err;
    if (mcp_client_connect_stdio(c, argv, CALL_TIMEOUT_MS) != MCP_ESTATE)
        return "mcp_client_connect_stdio did not return MCP_ESTATE";
    if (mcp_client_request(c, "ping", NULL, NULL, &result, &err) != MCP_ESTATE)
        return "mcp_client_request did not return MCP_ESTATE";
    if (mcp_client_ping(c, CALL_TIMEOUT_MS) != MCP_ESTATE)
        return "mcp_client_ping did not return MCP_ESTATE";
    if (mcp_client_list_tools(c, NULL, &result, &err) != MCP_ESTATE)
        return "mcp_client_list_tools did not return MCP_ESTATE";
    if (mcp_client_call_tool(c, "echo", json_pack("{s:s}", "text", "x"), NULL, &result, &err) !=
        MCP_ESTATE)
        return "mcp_client_call_tool did not return MCP_ESTATE";
    if (mcp_client_list_all(c, "tools/list", "tools", &result, &err) != MCP_ESTATE)
        return "mcp_client_list_all did not return MCP_ESTATE";
    if (result != NULL)
        return "a refused call left a result";
    return NULL;
}

static void refuse_then_close_on_tick(host *h)
{
    if (h->close_on_tick == 0 || h->ticks < h->close_on_tick)
        return;
    h->close_on_tick = 0;
    const char *why = blocking_calls_refused(h);
    if (why != NULL)
        h->step_failed = why;
    close_client(h);
}

static void on_connected_refuse(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    record_connect(h, status);
    const char *why = blocking_calls_refused(h);
    if (why != NULL)
        h->step_failed = why;
    if (status != MCP_OK || why != NULL) {
        close_client(h);
        return;
    }
    /* Again from a callback of the host's own, outside the client's callbacks. */
    h->close_on_tick = h->ticks + 1;
}

static void test_blocking_calls_on_the_loop_thread_return_estate(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    h.on_tick = refuse_then_close_on_tick;
    new_loop_client(&h);
    const char *why = blocking_calls_refused(&h); /* not connected yet */
    if (why != NULL)
        fail_msg("before connecting: %s", why);
    connect_everything(&h, on_connected_refuse);
    host_run(&h, "blocking calls on the loop thread");
    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    host_finish(&h);
}

/* ---- Blocking calls from another thread ---- */

typedef struct caller {
    host *h;
    uv_async_t done; /* the host's: the caller thread has finished */
    pthread_t thread;
    int call_rc, ping_rc;
    char text[64];
} caller;

static void *caller_main(void *arg)
{
    caller *k = arg;
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    k->call_rc = mcp_client_call_tool(k->h->c, "echo", json_pack("{s:s}", "text", "from a thread"),
                                      NULL, &result, &err);
    const char *text = k->call_rc == MCP_OK ? first_text(result) : NULL;
    snprintf(k->text, sizeof(k->text), "%s", text ? text : "");
    json_decref(result);
    mcp_rpc_error_clear(&err);
    k->ping_rc = mcp_client_ping(k->h->c, CALL_TIMEOUT_MS);
    uv_async_send(&k->done);
    return NULL;
}

static void on_caller_done(uv_async_t *a)
{
    caller *k = a->data;
    pthread_join(k->thread, NULL);
    uv_close((uv_handle_t *)&k->done, NULL);
    close_client(k->h);
}

static void on_connected_start_caller(mcp_client *c, int status, void *user)
{
    caller *k = user;
    (void)c;
    record_connect(k->h, status);
    if (status != MCP_OK || pthread_create(&k->thread, NULL, caller_main, k) != 0) {
        uv_close((uv_handle_t *)&k->done, NULL);
        close_client(k->h);
    }
}

static void test_blocking_calls_from_another_thread_work_while_the_host_runs_the_loop(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    caller k = {.h = &h, .call_rc = 1, .ping_rc = 1};
    assert_int_equal(uv_async_init(&h.loop, &k.done, on_caller_done), 0);
    k.done.data = &k;
    new_loop_client(&h);
    const char *argv[] = {h.server, "--stdio", NULL};
    assert_int_equal(
        mcp_client_connect_stdio_async(h.c, argv, CALL_TIMEOUT_MS, on_connected_start_caller, &k),
        MCP_OK);
    host_run(&h, "blocking calls from another thread");
    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(k.call_rc, MCP_OK);
    assert_string_equal(k.text, "from a thread");
    assert_int_equal(k.ping_rc, MCP_OK);
    host_finish(&h);
}

/* ---- Connects that fail, or that a close overtakes ---- */

static void on_connect_record_and_close(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    record_connect(h, status);
    close_client(h); /* from inside the connect callback */
}

static void test_connect_to_a_missing_program_fails_through_the_callback(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    new_loop_client(&h);
    const char *argv[] = {"/nonexistent/mcp-no-such-server", "--stdio", NULL};
    assert_int_equal(
        mcp_client_connect_stdio_async(h.c, argv, CALL_TIMEOUT_MS, on_connect_record_and_close, &h),
        MCP_OK);
    assert_int_equal(h.connect_calls, 0); /* never from inside the call */
    host_run(&h, "connect to a missing program");
    assert_int_equal(h.connect_calls, 1);
    if (h.connect_status != MCP_EIO)
        fail_msg("connect to a missing program ended with %s, expected MCP_EIO",
                 mcp_strerror(h.connect_status));
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    host_finish(&h);
}

static void on_connect_record(mcp_client *c, int status, void *user)
{
    (void)c;
    record_connect(user, status);
}

static void test_close_before_the_connect_has_started_fails_it_with_eclosed(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    new_loop_client(&h);
    connect_everything(&h, on_connect_record);
    assert_int_equal(mcp_client_close(h.c, on_closed, &h), MCP_OK);
    host_run(&h, "close right after connect");
    assert_int_equal(h.connect_calls, 1);
    if (h.connect_status != MCP_ECLOSED)
        fail_msg("the overtaken connect ended with %s, expected MCP_ECLOSED",
                 mcp_strerror(h.connect_status));
    host_finish(&h);
}

static void close_on_tick(host *h)
{
    if (h->close_on_tick == 0 || h->ticks < h->close_on_tick)
        return;
    h->close_on_tick = 0;
    close_client(h);
}

/* A server that never answers initialize, and ignores its stdin closing: only the
 * signals end it. */
static void test_close_while_initialize_is_pending_fails_it_and_kills_the_child(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    h.on_tick = close_on_tick;
    h.close_on_tick = 3;
    new_loop_client(&h);
    const char *argv[] = {"sleep", "30", NULL};
    assert_int_equal(
        mcp_client_connect_stdio_async(h.c, argv, CALL_TIMEOUT_MS, on_connect_record, &h), MCP_OK);
    host_run(&h, "close while initialize is pending");
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    assert_int_equal(h.connect_calls, 1);
    if (h.connect_status != MCP_ECLOSED)
        fail_msg("the pending connect ended with %s, expected MCP_ECLOSED",
                 mcp_strerror(h.connect_status));
    host_finish(&h);
}

/* ---- Closing from inside a notification callback ---- */

static void on_note_close(mcp_client *c, const char *method, const json_t *params, void *user)
{
    host *h = user;
    (void)c, (void)params;
    if (strcmp(method, "notifications/message") != 0)
        return;
    if (++h->notification_calls == 1)
        close_client(h);
}

static void on_connected_call_notify(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    if (!connected_or_close(h, status))
        return;
    call_tool_async(h, "notify", json_pack("{s:i, s:i}", "count", 3, "delay_ms", 200),
                    on_slow_response);
}

static void test_close_from_a_notification_callback(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    mcp_client *c = new_loop_client(&h);
    assert_int_equal(mcp_client_on_notification(c, on_note_close, &h), MCP_OK);
    connect_everything(&h, on_connected_call_notify);
    host_run(&h, "close from a notification callback");
    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(h.notification_calls, 1);
    assert_int_equal(h.close_rc_in_callback, MCP_OK);
    assert_int_equal(h.response_calls, 1);
    if (h.response_status != MCP_ECLOSED)
        fail_msg("the call ended with %s, expected MCP_ECLOSED", mcp_strerror(h.response_status));
    host_finish(&h);
}

/* ---- Server -> client requests still run on a worker ---- */

#define SAMPLING_TEXT "Four, said the loop client's sampling handler."

static uv_thread_t loop_thread;
static int sampling_on_loop_thread = -1;

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)params, (void)err, (void)user;
    uv_thread_t self = uv_thread_self();
    sampling_on_loop_thread = uv_thread_equal(&self, &loop_thread);
    return json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "role", "assistant", "content", "type",
                     "text", "text", SAMPLING_TEXT, "model", "c-test-model", "stopReason",
                     "endTurn");
}

static void on_sampling_tool(mcp_client *c, int status, const json_t *result,
                             const mcp_rpc_error *err, void *user)
{
    host *h = user;
    (void)c, (void)err;
    record_response(h, status, result);
    close_client(h);
}

static void on_connected_call_sampling(mcp_client *c, int status, void *user)
{
    host *h = user;
    (void)c;
    if (!connected_or_close(h, status))
        return;
    call_tool_async(h, "test_sampling", json_pack("{s:s}", "prompt", "What is 2+2?"),
                    on_sampling_tool);
}

static void test_sampling_handler_runs_on_a_worker_not_on_the_loop(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    loop_thread = uv_thread_self();
    mcp_client *c = new_loop_client(&h);
    assert_int_equal(mcp_client_on_sampling(c, on_sampling, NULL), MCP_OK);
    connect_everything(&h, on_connected_call_sampling);
    host_run(&h, "sampling");
    assert_int_equal(h.connect_status, MCP_OK);
    assert_int_equal(h.response_status, MCP_OK);
    if (strstr(h.response_text, SAMPLING_TEXT) == NULL)
        fail_msg("test_sampling result lacks the handler's text: %s", h.response_text);
    assert_int_equal(sampling_on_loop_thread, 0);
    host_finish(&h);
}

/* ---- mcp_client_free on a loop client ---- */

static void on_connected_free(mcp_client *c, int status, void *user)
{
    host *h = user;
    record_connect(h, status);
    mcp_client_free(c); /* a loop client's free is a close without a callback */
    uv_close((uv_handle_t *)&h->ticker, NULL);
    h->closed_calls = 1; /* for host_finish: the loop ending shows the client gone */
}

static void test_free_on_a_loop_client_closes_it_without_waiting(void **state)
{
    (void)state;
    host h;
    host_init(&h);
    new_loop_client(&h);
    connect_everything(&h, on_connected_free);
    host_run(&h, "free from the connect callback");
    assert_int_equal(h.connect_status, MCP_OK);
    host_finish(&h);
}

/* ---- A threaded client closed from its own callback ---- */

typedef struct threaded_close {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int connect_status, close_rc, closed;
} threaded_close;

static void threaded_closed(void *user)
{
    threaded_close *t = user;
    pthread_mutex_lock(&t->mu);
    t->closed++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

static void threaded_connected(mcp_client *c, int status, void *user)
{
    threaded_close *t = user;
    pthread_mutex_lock(&t->mu);
    t->connect_status = status;
    pthread_mutex_unlock(&t->mu);
    /* On the client's own thread: mcp_client_free would wait for itself here. */
    int rc = mcp_client_close(c, threaded_closed, t);
    pthread_mutex_lock(&t->mu);
    t->close_rc = rc;
    pthread_mutex_unlock(&t->mu);
}

static void test_threaded_client_closes_from_its_own_connect_callback(void **state)
{
    (void)state;
    char server[4096];
    assert_int_equal(harness_bin_path("mcp-everything", server, sizeof(server)), 0);
    threaded_close t = {.mu = PTHREAD_MUTEX_INITIALIZER,
                        .cv = PTHREAD_COND_INITIALIZER,
                        .connect_status = 1,
                        .close_rc = 1};
    mcp_client *c = mcp_client_new("threaded-test", "1.0.0");
    assert_non_null(c);
    assert_int_equal(mcp_client_set_protocol(c, "legacy"), MCP_OK);
    const char *argv[] = {server, "--stdio", NULL};
    assert_int_equal(
        mcp_client_connect_stdio_async(c, argv, CALL_TIMEOUT_MS, threaded_connected, &t), MCP_OK);

    /* The condition variable uses the realtime clock: the deadline is taken once. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += DEADLINE_MS / 1000;
    pthread_mutex_lock(&t.mu);
    while (t.closed == 0 && pthread_cond_timedwait(&t.cv, &t.mu, &deadline) != ETIMEDOUT)
        ;
    int closed = t.closed, status = t.connect_status, rc = t.close_rc;
    pthread_mutex_unlock(&t.mu);
    if (closed != 1)
        fail_msg("the threaded client's close did not finish within %d ms", DEADLINE_MS);
    assert_int_equal(status, MCP_OK);
    assert_int_equal(rc, MCP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_client_calls_tools_and_closes_from_the_response_callback),
        cmocka_unit_test(test_close_with_a_request_in_flight_completes_it_once_with_eclosed),
        cmocka_unit_test(test_blocking_calls_on_the_loop_thread_return_estate),
        cmocka_unit_test(test_blocking_calls_from_another_thread_work_while_the_host_runs_the_loop),
        cmocka_unit_test(test_connect_to_a_missing_program_fails_through_the_callback),
        cmocka_unit_test(test_close_before_the_connect_has_started_fails_it_with_eclosed),
        cmocka_unit_test(test_close_while_initialize_is_pending_fails_it_and_kills_the_child),
        cmocka_unit_test(test_close_from_a_notification_callback),
        cmocka_unit_test(test_sampling_handler_runs_on_a_worker_not_on_the_loop),
        cmocka_unit_test(test_free_on_a_loop_client_closes_it_without_waiting),
        cmocka_unit_test(test_threaded_client_closes_from_its_own_connect_callback),
    };
    return cmocka_run_group_tests_name("client_on_loop", tests, NULL, NULL);
}
