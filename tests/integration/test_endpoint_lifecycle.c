/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint on a loop the test owns: start and stop a thousand times
 * with sessions, SSE streams and a slow tool call in flight; stop and drain
 * (the answer in flight is delivered, streams end cleanly, done runs once,
 * uv_loop_close succeeds); extra routes; stopping from inside a callback.
 *
 * The "host" is a thread that runs its own libuv loop with its own repeating
 * timer, as an embedding program would; the test's client talks to it over
 * real 127.0.0.1 sockets from the main thread and asks the host to start and
 * stop the endpoint through a uv_async_t.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <uv.h>

#include <mcp/server.h>

#include "http_client.h"

#define WAIT_MS 10000

enum cmd { CMD_NONE, CMD_START, CMD_STOP, CMD_QUIT };

typedef struct host {
    uv_loop_t loop;
    uv_async_t async;
    uv_timer_t tick;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum cmd cmd;
    int cmd_done;
    int drain_ms;
    mcp_server *srv;
    mcp_http_opts opts;
    mcp_http_endpoint *ep;
    int port;
    int start_rc;
    int done_calls;
    int ticks;
    int loop_close_rc;
} host;

/* A tool that takes its time (args.ms), noticing cancellation. */
static json_t *slow_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    int ms = (int)json_integer_value(json_object_get(args, "ms"));
    if (mcp_ctx_sleep(ctx, ms) != MCP_OK)
        return mcp_tool_error("cancelled");
    return mcp_text_result("slept");
}

static void on_done(void *user, int status)
{
    host *h = user;
    assert_int_equal(status, MCP_OK);
    mcp_http_endpoint_free(h->ep); /* freeing from inside done is allowed */
    pthread_mutex_lock(&h->mu);
    h->ep = NULL;
    h->done_calls++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void on_tick(uv_timer_t *t)
{
    host *h = t->data;
    h->ticks++;
}

static void on_async(uv_async_t *a)
{
    host *h = a->data;
    pthread_mutex_lock(&h->mu);
    enum cmd cmd = h->cmd;
    h->cmd = CMD_NONE;
    pthread_mutex_unlock(&h->mu);
    switch (cmd) {
    case CMD_START:
        h->start_rc = mcp_http_endpoint_new(&h->loop, h->srv, &h->opts, &h->ep);
        h->port = h->ep ? mcp_http_endpoint_port(h->ep) : 0;
        break;
    case CMD_STOP:
        mcp_http_endpoint_stop(h->ep, h->drain_ms, on_done, h);
        break;
    case CMD_QUIT:
        uv_close((uv_handle_t *)&h->async, NULL);
        uv_close((uv_handle_t *)&h->tick, NULL);
        break;
    case CMD_NONE:
        return;
    }
    pthread_mutex_lock(&h->mu);
    h->cmd_done = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void *host_main(void *arg)
{
    host *h = arg;
    uv_run(&h->loop, UV_RUN_DEFAULT);
    h->loop_close_rc = uv_loop_close(&h->loop);
    return NULL;
}

static void host_init(host *h, mcp_server *srv)
{
    memset(h, 0, sizeof(*h));
    h->srv = srv;
    h->opts.listen = "127.0.0.1:0";
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    uv_async_init(&h->loop, &h->async, on_async);
    h->async.data = h;
    uv_timer_init(&h->loop, &h->tick);
    h->tick.data = h;
    uv_timer_start(&h->tick, on_tick, 5, 5);
    assert_int_equal(pthread_create(&h->thread, NULL, host_main, h), 0);
}

/* Waits (with a deadline) until pred holds, under h->mu. */
static int host_wait(host *h, int (*pred)(host *), int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    int ok = 1;
    pthread_mutex_lock(&h->mu);
    while (!pred(h))
        if (pthread_cond_timedwait(&h->cv, &h->mu, &ts) != 0) {
            ok = pred(h);
            break;
        }
    pthread_mutex_unlock(&h->mu);
    return ok ? 0 : -1;
}

static int cmd_finished(host *h)
{
    return h->cmd_done;
}

static void host_cmd(host *h, enum cmd cmd)
{
    pthread_mutex_lock(&h->mu);
    h->cmd = cmd;
    h->cmd_done = 0;
    pthread_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    assert_int_equal(host_wait(h, cmd_finished, WAIT_MS), 0);
}

static void host_quit(host *h)
{
    host_cmd(h, CMD_QUIT);
    pthread_join(h->thread, NULL);
    assert_int_equal(h->loop_close_rc, 0);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

static mcp_server *test_server(void)
{
    mcp_server *srv = mcp_server_new("lifecycle", "1.0");
    assert_non_null(srv);
    assert_int_equal(
        mcp_server_add_tool(srv, "slow", "Sleeps args.ms milliseconds", NULL, slow_tool, NULL),
        MCP_OK);
    return srv;
}

static long self_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static int done_once(host *h)
{
    return h->done_calls > 0;
}

/* Opens a POST stream for a slow tools/call of session `sid` and reads its head. */
static void post_slow_call(hc_conn *c, int port, const char *sid, int ms)
{
    char args[64];
    snprintf(args, sizeof(args), "{\"ms\":%d}", ms);
    char *body = hc_tools_call_body(7, "slow", args);
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", sid);
    assert_int_equal(hc_connect(c, port, WAIT_MS), 0);
    assert_int_equal(hc_send_request(c, port, "POST", "/mcp", hdrs, body, WAIT_MS), 0);
    free(body);
}

/* One cycle: start; a session with a standalone stream and a slow call in flight;
 * stop with a drain deadline; the answer arrives, the streams end, done runs. */
static void one_cycle(host *h, int slow_ms)
{
    h->done_calls = 0;
    host_cmd(h, CMD_START);
    assert_int_equal(h->start_rc, MCP_OK);
    int port = h->port;
    char sid[33];
    assert_int_equal(hc_mcp_initialize(port, sid, WAIT_MS), 0);

    hc_conn get = {.fd = -1};
    hc_response gr = {0};
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", sid);
    assert_int_equal(hc_connect(&get, port, WAIT_MS), 0);
    assert_int_equal(hc_send_request(&get, port, "GET", "/mcp", hdrs, NULL, WAIT_MS), 0);
    assert_int_equal(hc_read_head(&get, &gr, WAIT_MS), 0);
    assert_int_equal(gr.status, 200);

    hc_conn call = {.fd = -1};
    hc_response cr = {0};
    post_slow_call(&call, port, sid, slow_ms);
    assert_int_equal(hc_read_head(&call, &cr, WAIT_MS), 0);
    assert_int_equal(cr.status, 200);

    h->drain_ms = 5000;
    host_cmd(h, CMD_STOP);

    /* The call in flight finishes inside the deadline: its answer arrives. */
    int rc;
    json_t *msg = hc_sse_next_json(&call, WAIT_MS, &rc);
    assert_non_null(msg);
    json_t *text = json_object_get(
        json_array_get(json_object_get(json_object_get(msg, "result"), "content"), 0), "text");
    assert_string_equal(json_string_value(text), "slept");
    json_decref(msg);
    hc_sse_event ev;
    assert_int_equal(hc_sse_next_event(&call, &ev, WAIT_MS), 0); /* the stream ended */
    /* The standalone stream ends cleanly too (keep-alive comments may come first). */
    while ((rc = hc_sse_next(&get, &ev, WAIT_MS)) == 1)
        hc_sse_event_free(&ev);
    assert_int_equal(rc, 0);
    /* As a client does once its streams end; the server's stop waits for that (or
     * for its linger time) before it closes the connections. */
    hc_close(&get);
    hc_close(&call);
    assert_int_equal(host_wait(h, done_once, WAIT_MS), 0);
    assert_int_equal(h->done_calls, 1);
    hc_response_free(&gr);
    hc_response_free(&cr);
}

static void test_endpoint_stops_and_starts_a_thousand_times_without_growing(void **state)
{
    (void)state;
    mcp_server *srv = test_server();
    host h;
    host_init(&h, srv);
    const int cycles = 1000;
    long rss_at_100 = -1;
    for (int i = 0; i < cycles; i++) {
        one_cycle(&h, 20);
        if (i == 99)
            rss_at_100 = self_rss_kb();
    }
    long rss_end = self_rss_kb();
    print_message("RSS after 100 cycles %ld KiB, after %d: %ld KiB; host timer ticks %d\n",
                  rss_at_100, cycles, rss_end, h.ticks);
    assert_true(rss_at_100 > 0);
    /* Under ASan freed memory sits in its quarantine and RSS means little; there
     * LeakSanitizer is what checks that nothing is kept. */
    if (!UNDER_ASAN)
        assert_true(rss_end * 100 <= rss_at_100 * 105);
    assert_true(h.ticks > 0); /* the host's loop never stopped turning */
    host_quit(&h);
    mcp_server_free(srv);
}

/* A call that outlives the drain deadline is cancelled; done still runs once. */
static void test_stop_cancels_what_outlives_the_deadline(void **state)
{
    (void)state;
    mcp_server *srv = test_server();
    host h;
    host_init(&h, srv);
    host_cmd(&h, CMD_START);
    char sid[33];
    assert_int_equal(hc_mcp_initialize(h.port, sid, WAIT_MS), 0);
    hc_conn call = {.fd = -1};
    hc_response cr = {0};
    post_slow_call(&call, h.port, sid, 60000);
    assert_int_equal(hc_read_head(&call, &cr, WAIT_MS), 0);
    long long t0 = hc_now_ms();
    h.drain_ms = 200;
    host_cmd(&h, CMD_STOP);
    assert_int_equal(host_wait(&h, done_once, WAIT_MS), 0);
    assert_true(hc_now_ms() - t0 < 5000); /* not the minute the tool wanted */
    /* The stream ended without the answer: no event with a result. */
    int rc;
    json_t *msg;
    while ((msg = hc_sse_next_json(&call, WAIT_MS, &rc)) != NULL) {
        assert_null(json_object_get(msg, "result"));
        json_decref(msg);
    }
    assert_true(rc != -1 || call.eof);
    hc_response_free(&cr);
    hc_close(&call);
    host_quit(&h);
    mcp_server_free(srv);
}

/* During a drain no new session starts; requests get 503 with a JSON-RPC error. */
static void test_draining_endpoint_refuses_new_requests(void **state)
{
    (void)state;
    mcp_server *srv = test_server();
    host h;
    host_init(&h, srv);
    host_cmd(&h, CMD_START);
    char sid[33];
    assert_int_equal(hc_mcp_initialize(h.port, sid, WAIT_MS), 0);
    /* A keep-alive connection opened before the stop, and a call that holds the drain. */
    hc_conn keep = {.fd = -1};
    assert_int_equal(hc_connect(&keep, h.port, WAIT_MS), 0);
    hc_conn call = {.fd = -1};
    hc_response cr = {0};
    post_slow_call(&call, h.port, sid, 300);
    assert_int_equal(hc_read_head(&call, &cr, WAIT_MS), 0);
    h.drain_ms = 5000;
    host_cmd(&h, CMD_STOP);
    /* A new session is refused with 503 and a JSON-RPC error, and the connection
     * closes after it; a new standalone stream too. */
    hc_response lr = {0};
    char *init = hc_initialize_body(NULL);
    assert_int_equal(hc_mcp_post(h.port, NULL, NULL, init, &lr, WAIT_MS), 0);
    free(init);
    assert_int_equal(lr.status, 503);
    assert_non_null(strstr(lr.body, "shutting down"));
    assert_string_equal(hc_header_get(&lr, "connection"), "close");
    hc_response_free(&lr);
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", sid);
    assert_int_equal(hc_request(h.port, "GET", "/mcp", hdrs, NULL, &lr, WAIT_MS), 0);
    assert_int_equal(lr.status, 503);
    hc_response_free(&lr);
    /* What helps the call in flight is still taken: a notification gets 202. */
    assert_int_equal(hc_mcp_post(h.port, sid, NULL,
                                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                                 "\"params\":{\"progressToken\":\"x\",\"progress\":1}}",
                                 &lr, WAIT_MS),
                     0);
    assert_int_equal(lr.status, 202);
    hc_response_free(&lr);
    json_t *msg = hc_sse_next_json(&call, WAIT_MS, NULL);
    assert_non_null(json_object_get(msg, "result"));
    json_decref(msg);
    assert_int_equal(host_wait(&h, done_once, WAIT_MS), 0);
    hc_response_free(&cr);
    hc_close(&call);
    hc_close(&keep);
    host_quit(&h);
    mcp_server_free(srv);
}

/* ---- Extra routes ---- */

static int route_calls;

static void hello_route(mcp_http_exchange *x, void *user)
{
    route_calls++;
    const char *const hdrs[] = {"Content-Type", "text/plain", NULL};
    const char *q = mcp_http_exchange_query(x);
    char body[128];
    int n = snprintf(body, sizeof(body), "%s %s %s %s", mcp_http_exchange_method(x),
                     mcp_http_exchange_path(x), q ? q : "-", (const char *)user);
    assert_int_equal(mcp_http_exchange_respond(x, 200, hdrs, body, (size_t)n), MCP_OK);
    assert_int_equal(mcp_http_exchange_respond(x, 200, NULL, NULL, 0), MCP_ESTATE);
}

static void silent_route(mcp_http_exchange *x, void *user)
{
    (void)x, (void)user; /* answers nothing: the library answers 500 */
}

static void stop_route(mcp_http_exchange *x, void *user)
{
    host *h = user;
    /* Stopping from inside our own callback is safe; the answer still goes out. */
    assert_int_equal(mcp_http_endpoint_stop(mcp_http_exchange_endpoint(x), 1000, on_done, h),
                     MCP_OK);
    assert_int_equal(mcp_http_endpoint_stop(mcp_http_exchange_endpoint(x), 0, on_done, h),
                     MCP_ESTATE);
    assert_int_equal(mcp_http_exchange_respond(x, 202, NULL, "bye", 3), MCP_OK);
}

static void test_extra_routes_answer_beside_mcp(void **state)
{
    (void)state;
    mcp_server *srv = test_server();
    host h;
    host_init(&h, srv);
    static const mcp_http_route routes[] = {
        {.method = "GET", .path = "/hello", .fn = hello_route, .user = "world"},
        {.path = "/silent", .fn = silent_route},
        {.path = NULL}};
    h.opts.routes = routes;
    host_cmd(&h, CMD_START);
    assert_int_equal(h.start_rc, MCP_OK);
    /* Registering more: clashes are refused. */
    assert_int_equal(mcp_http_endpoint_route(h.ep, "GET", "/mcp", hello_route, NULL), MCP_EEXIST);
    assert_int_equal(mcp_http_endpoint_route(h.ep, NULL, "/sse", hello_route, NULL), MCP_EEXIST);
    assert_int_equal(mcp_http_endpoint_route(h.ep, "GET", "/hello", hello_route, NULL), MCP_EEXIST);
    assert_int_equal(mcp_http_endpoint_route(h.ep, "GET", "nope", hello_route, NULL), MCP_EINVAL);
    assert_int_equal(mcp_http_endpoint_route(h.ep, "POST", "/stop", stop_route, &h), MCP_OK);

    hc_response r = {0};
    assert_int_equal(hc_request(h.port, "GET", "/hello?x=1", NULL, NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "GET /hello x=1 world");
    hc_response_free(&r);
    /* Another method on a routed path: 405; an unknown path: 404. */
    assert_int_equal(hc_request(h.port, "DELETE", "/hello", NULL, NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 405);
    assert_non_null(hc_header_get(&r, "allow"));
    assert_string_equal(hc_header_get(&r, "allow"), "GET"); /* the route's, not /mcp's */
    hc_response_free(&r);
    assert_int_equal(hc_request(h.port, "GET", "/nothing", NULL, NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 404);
    hc_response_free(&r);
    assert_int_equal(hc_request(h.port, "GET", "/silent", NULL, NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 500);
    hc_response_free(&r);
    /* Host checking applies to routes too (DNS rebinding). */
    assert_int_equal(
        hc_request(h.port, "GET", "/hello", "Host: evil.example\r\n", NULL, &r, WAIT_MS), 0);
    assert_int_equal(r.status, 403);
    hc_response_free(&r);
    assert_int_equal(route_calls, 1);

    h.done_calls = 0;
    assert_int_equal(hc_request(h.port, "POST", "/stop", NULL, "", &r, WAIT_MS), 0);
    assert_int_equal(r.status, 202);
    assert_string_equal(r.body, "bye");
    hc_response_free(&r);
    assert_int_equal(host_wait(&h, done_once, WAIT_MS), 0);
    assert_int_equal(h.done_calls, 1);
    host_quit(&h);
    mcp_server_free(srv);
}

/* Freeing an endpoint that is running stops it at once; nothing is left behind. */
static void test_free_while_running_leaves_nothing_on_the_loop(void **state)
{
    (void)state;
    mcp_server *srv = test_server();
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    mcp_http_endpoint *ep = NULL;
    mcp_http_opts o = {.size = sizeof(o), .listen = "127.0.0.1:0"};
    assert_int_equal(mcp_http_endpoint_new(&loop, srv, &o, &ep), MCP_OK);
    assert_non_null(mcp_http_endpoint_url(ep));
    assert_true(mcp_http_endpoint_port(ep) > 0);
    mcp_http_endpoint_free(ep);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);

    /* Bad arguments fail without leaving anything either. */
    assert_int_equal(uv_loop_init(&loop), 0);
    mcp_http_opts bad = {.listen = "no port"};
    assert_int_equal(mcp_http_endpoint_new(&loop, srv, &bad, &ep), MCP_EINVAL);
    assert_null(ep);
    bad = (mcp_http_opts){.size = 3};
    assert_int_equal(mcp_http_endpoint_new(&loop, srv, &bad, &ep), MCP_EINVAL);
    assert_int_equal(mcp_http_endpoint_new(NULL, srv, NULL, &ep), MCP_EINVAL);
    assert_int_equal(mcp_http_endpoint_new(&loop, NULL, NULL, &ep), MCP_EINVAL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    mcp_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extra_routes_answer_beside_mcp),
        cmocka_unit_test(test_free_while_running_leaves_nothing_on_the_loop),
        cmocka_unit_test(test_draining_endpoint_refuses_new_requests),
        cmocka_unit_test(test_stop_cancels_what_outlives_the_deadline),
        cmocka_unit_test(test_endpoint_stops_and_starts_a_thousand_times_without_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
