/* SPDX-License-Identifier: MIT */
/*
 * Our HTTP client against a raw scripted server (raw_server.h) over real
 * 127.0.0.1 sockets: each test answers the client's requests byte by byte as
 * it wants, and checks what the client sent and when.
 *
 * - resumption GETs that bring no event: the client waits the stream's retry
 *   between them (measured between the end of one answer and the arrival of
 *   the next GET) and gives up after max_retries with MCP_ELIMIT, long before
 *   the request's timeout;
 * - a standalone stream that ends at once without an event is reopened a
 *   bounded number of times, never faster than the backoff or the retry;
 * - a resumption refused (400), a stream that ends without any event id, a
 *   stream whose last events arrive just before a reset, the Last-Event-ID of
 *   each of two streams, the application scheduler, a slow server, the headers
 *   of every request, a refused connection, an HTTP error to initialize, and a
 *   response header too large for libcurl (said so, not "Out of memory"), and a
 *   request's timeout that fires in time while its stream floods the client.
 *
 * Every wait has a deadline; the only pauses are the scripted server's own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_watch.h"
#include "raw_server.h"

#define CONNECT_MS 10000
#define CALL_MS 20000
#define WAIT_MS 5000
/* How much later than the retry (or the backoff) a reconnection may come: one-sided,
 * generous (a busy machine was 92 ms late for a retry of 100 ms); never sooner. */
#define SLACK_MS 1000

typedef struct fixture {
    rs_server *srv;
    cw_watch w;
    mcp_client *c;
    char url[64];
    /* What the handlers share with the test. */
    pthread_mutex_t mu;
    long retry;  /* the retry the scripted streams announce */
    json_t *ids; /* {"<tag>": <JSON-RPC id of the call>} */
    /* Asynchronous requests: here, not on a test's stack, since a failed test
     * leaves them to the client's close, which runs their callbacks. */
    cw_reply r[2];
} fixture;

static fixture *start(void **state, rs_handler fn)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *state = f;
    cw_init(&f->w);
    pthread_mutex_init(&f->mu, NULL);
    f->retry = 100;
    f->ids = json_object();
    f->r[0].w = f->r[1].w = &f->w;
    if (rs_start(&f->srv, fn, f) != 0)
        fail_msg("the raw server did not start");
    rs_url(f->srv, f->url, sizeof(f->url));
    return f;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f == NULL)
        return 0;
    mcp_client_free(f->c);
    rs_stop(f->srv);
    cw_reply_clear(&f->r[0]);
    cw_reply_clear(&f->r[1]);
    cw_free(&f->w);
    json_decref(f->ids);
    pthread_mutex_destroy(&f->mu);
    free(f);
    *state = NULL;
    return 0;
}

static void connect_ok(fixture *f, const mcp_http_client_opts *opts)
{
    int rc = cw_connect(&f->w, f->url, opts, CONNECT_MS, &f->c);
    if (rc != MCP_OK)
        fail_msg("connect to %s: %s", f->url, mcp_strerror(rc));
}

/* Calls tool (no arguments) and returns the status; *err gets the error. */
static int call_status(fixture *f, const char *tool, mcp_rpc_error *err, json_t **result)
{
    mcp_call_opts o = {.timeout_ms = CALL_MS};
    return mcp_client_call_tool(f->c, tool, json_object(), &o, result, err);
}

/* Calls tool and asserts its result's text. */
static void expect_text(fixture *f, const char *tool, const char *text)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = call_status(f, tool, &err, &result);
    if (rc != MCP_OK)
        fail_msg("%s: %s (%s)", tool, mcp_strerror(rc), err.message);
    assert_string_equal(cw_text(result), text);
    json_decref(result);
}

/* Calls tool and asserts it fails with status want (and HTTP status code, when not
 * 0), within max_ms. Returns how long it took. */
static long long expect_failure(fixture *f, const char *tool, int want, int code, int max_ms)
{
    long long t0 = hc_now_ms();
    mcp_rpc_error err = {0};
    int rc = call_status(f, tool, &err, NULL);
    long long took = hc_now_ms() - t0;
    if (rc != want || (code != 0 && err.code != code))
        fail_msg("%s: expected %s (code %d), got %s (code %d: %s)", tool, mcp_strerror(want), code,
                 mcp_strerror(rc), err.code, err.message);
    if (took > max_ms)
        fail_msg("%s: failed only after %lld ms", tool, took);
    printf("%s: %s after %lld ms: %s\n", tool, mcp_strerror(rc), took, err.message);
    mcp_rpc_error_clear(&err);
    return took;
}

/* The i-th GET that resumes a stream (with Last-Event-ID), or NULL. */
static const rs_request *resume_nth(fixture *f, size_t i)
{
    const rs_request *r;
    for (size_t k = 0; (r = rs_nth(f->srv, "GET", k)) != NULL; k++)
        if (rs_header(r, "last-event-id") != NULL && i-- == 0)
            return r;
    return NULL;
}

static size_t resumes(fixture *f)
{
    size_t n = 0;
    while (resume_nth(f, n) != NULL)
        n++;
    return n;
}

/* The SSE stream of a tools/call: a priming event, then the end. */
static void prime_and_end(fixture *f, rs_conn *c, const char *id)
{
    rs_sse_head(c, NULL);
    rs_sse_event(c, id, f->retry, "");
    rs_sse_end(c);
}

/*
 * Asserts that each of the n requests `next` came between min_ms and max_ms
 * after the answer to `prev` ended, and prints the gaps.
 */
static void expect_gaps(fixture *f, const rs_request *const *reqs, size_t n, const long *min_ms,
                        const long *max_ms, const char *what)
{
    char shown[512] = "";
    size_t len = 0;
    for (size_t i = 1; i < n; i++) {
        assert_int_equal(rs_wait_done(f->srv, reqs[i - 1], WAIT_MS), 0);
        long long gap = reqs[i]->at_ms - reqs[i - 1]->done_ms;
        len += (size_t)snprintf(shown + len, sizeof(shown) - len, "%s%lld", i > 1 ? ", " : "", gap);
        if (len >= sizeof(shown))
            len = sizeof(shown) - 1;
        if (gap < min_ms[i - 1] || gap > max_ms[i - 1])
            fail_msg("%s: request %zu came %lld ms after the previous answer ended, not %ld to "
                     "%ld ms",
                     what, i, gap, min_ms[i - 1], max_ms[i - 1]);
    }
    if (n > 1)
        printf("%s: gaps %s ms\n", what, shown);
}

/* ---- a. Resumptions that bring nothing ---- */

static void h_empty_resumes(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (rs_mcp_basic(c, req))
        return;
    if (rs_is_call(req, "stall")) {
        prime_and_end(f, c, "p1");
    } else if (strcmp(req->method, "GET") == 0) {
        rs_sse_head(c, NULL); /* no event: the stream ends at once */
        rs_sse_end(c);
    } else {
        rs_respond(c, 400, NULL, "unexpected");
    }
}

/* Calls stall with max_retries and checks the outcome: `want` empty resumptions, each
 * the retry after the one before, then MCP_ELIMIT. */
static void run_empty_resumes(void **state, int max_retries, size_t want)
{
    fixture *f = start(state, h_empty_resumes);
    mcp_http_client_opts o = {.max_retries = max_retries};
    connect_ok(f, &o);
    /* Well before the request's timeout. */
    expect_failure(f, "stall", MCP_ELIMIT, 0, CALL_MS / 4);
    size_t n = resumes(f);
    if (n != want)
        fail_msg("max_retries %d: %zu resumption GETs, expected %zu", max_retries, n, want);
    /* The POST's stream, then every resumption: each comes the retry after the end of
     * the one before. */
    const rs_request *reqs[16];
    long min_ms[16], max_ms[16];
    reqs[0] = rs_nth(f->srv, "POST", 2); /* initialize, initialized, the call */
    assert_non_null(reqs[0]);
    assert_true(rs_is_call(reqs[0], "stall"));
    for (size_t i = 0; i < n; i++) {
        reqs[i + 1] = resume_nth(f, i);
        assert_string_equal(rs_header(reqs[i + 1], "last-event-id"), "p1");
        min_ms[i] = f->retry - 5;
        max_ms[i] = f->retry + SLACK_MS;
    }
    expect_gaps(f, reqs, n + 1, min_ms, max_ms, "empty resumptions");
}

static void test_empty_resumptions_give_up_after_the_default_limit(void **state)
{
    run_empty_resumes(state, 0, 5);
}

static void test_empty_resumptions_give_up_after_a_custom_limit(void **state)
{
    run_empty_resumes(state, 2, 2);
}

static void test_no_resumption_when_retries_are_off(void **state)
{
    run_empty_resumes(state, -1, 0);
}

/* ---- b. A standalone stream that ends at once ---- */

static void h_empty_standalone(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (strcmp(req->method, "GET") == 0) {
        rs_sse_head(c, NULL);
        if (f->retry >= 0) {
            char block[32];
            snprintf(block, sizeof(block), "retry: %ld\n\n", f->retry);
            rs_chunk(c, block);
        }
        rs_sse_end(c);
        return;
    }
    rs_mcp_basic(c, req);
}

/* Waits for `want` GETs, checks no more come, and the gap before each. */
static void expect_standalone_gets(fixture *f, size_t want, const long *min_ms, const long *max_ms,
                                   const char *what)
{
    if (rs_wait(f->srv, "GET", want, WAIT_MS) != 0)
        fail_msg("%s: %zu GETs, expected %zu", what, rs_count(f->srv, "GET"), want);
    /* The longest wait before a reconnection here is 200 ms: five times that
     * without one shows the client stopped. */
    if (rs_wait(f->srv, "GET", want + 1, 1000) == 0)
        fail_msg("%s: the client kept reopening the standalone stream (%zu GETs)", what,
                 rs_count(f->srv, "GET"));
    const rs_request *reqs[16];
    for (size_t i = 0; i < want; i++)
        reqs[i] = rs_nth(f->srv, "GET", i);
    expect_gaps(f, reqs, want, min_ms, max_ms, what);
}

static void test_empty_standalone_stream_is_not_reopened_in_a_loop(void **state)
{
    fixture *f = start(state, h_empty_standalone);
    f->retry = -1; /* no retry: the backoff, 50, 100, 200, 200, 200 ms less a fifth of jitter */
    mcp_http_client_opts o = {.initial_delay_ms = 50, .max_delay_ms = 200};
    connect_ok(f, &o);
    long min_ms[5], max_ms[5];
    for (int i = 0; i < 5; i++) {
        long d = 50L << i;
        d = d > 200 ? 200 : d;
        min_ms[i] = d - d / 5 - 5;
        max_ms[i] = d + SLACK_MS;
    }
    /* The first GET and five reconnections that bring nothing. */
    expect_standalone_gets(f, 6, min_ms, max_ms, "standalone stream, backoff");
}

static void test_empty_standalone_stream_follows_the_retry(void **state)
{
    fixture *f = start(state, h_empty_standalone);
    f->retry = 100; /* a block with only "retry: 100": no event, but the interval */
    connect_ok(f, NULL);
    long min_ms[5], max_ms[5];
    for (int i = 0; i < 5; i++) {
        min_ms[i] = 100 - 5;
        max_ms[i] = 100 + SLACK_MS;
    }
    expect_standalone_gets(f, 6, min_ms, max_ms, "standalone stream, retry 100");
}

/* ---- c. A resumption refused ---- */

static void h_resume_refused(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (rs_mcp_basic(c, req))
        return;
    if (rs_is_call(req, "stall"))
        prime_and_end(f, c, "p1");
    else
        rs_respond(c, 400, "Content-Type: text/plain\r\n", "unknown event id");
}

static void test_refused_resumption_fails_the_request(void **state)
{
    fixture *f = start(state, h_resume_refused);
    f->retry = 10;
    connect_ok(f, NULL);
    expect_failure(f, "stall", MCP_EHTTP, 400, 2000);
    assert_int_equal(resumes(f), 1);
}

/* ---- d. A stream that ends without any event id ---- */

static void h_no_ids(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    char *note = rs_log_message("no id");
    rs_sse_head(c, NULL);
    rs_sse_event(c, NULL, -1, note);
    free(note);
    if (rs_is_call(req, "cut"))
        rs_close_after(c); /* the connection closes in the middle of the body */
    else
        rs_sse_end(c); /* the stream ends cleanly */
}

static void test_stream_without_event_ids_fails_the_request(void **state)
{
    fixture *f = start(state, h_no_ids);
    connect_ok(f, NULL);
    const char *tools[] = {"end", "cut"};
    for (int i = 0; i < 2; i++) {
        expect_failure(f, tools[i], MCP_ECLOSED, 0, 2000);
        assert_int_equal(cw_wait_notes(&f->w, (size_t)i + 1, WAIT_MS), 0);
    }
    assert_int_equal(resumes(f), 0);
}

/* ---- A reset right after the answer ---- */

/* The whole stream, then a reset instead of its last chunk: the client must read
 * what arrived before the reset, which the kernel still holds. */
static void h_reset_after_answer(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    char *note = rs_log_message("before the reset");
    char *result = rs_call_result(req, "answered");
    char events[1024];
    snprintf(events, sizeof(events), "id: r1\nretry: 5000\ndata: \n\ndata: %s\n\ndata: %s\n\n",
             note, result);
    rs_sse_head(c, NULL);
    rs_chunk(c, events);
    rs_reset_after(c);
    free(note);
    free(result);
}

static void test_events_that_arrived_before_a_reset_are_read(void **state)
{
    fixture *f = start(state, h_reset_after_answer);
    connect_ok(f, NULL);
    for (int i = 0; i < 20; i++)
        expect_text(f, "reset", "answered");
    assert_int_equal(cw_notes(&f->w), 20);
    assert_int_equal(resumes(f), 0);
}

/* ---- e. Each stream resumes from its own last event id ---- */

/*
 * Two calls of "twin" ({"tag":"a"} and {"tag":"b"}) with open streams at once.
 * Each POST stream sends events <tag>1 and <tag>2 and ends; the GET resuming from
 * <tag>2 sends <tag>3 and ends; the one from <tag>3 sends the result. Any other
 * Last-Event-ID is refused with 400.
 */
static void h_twins(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (rs_mcp_basic(c, req))
        return;
    char id[16], text[32];
    if (rs_is_call(req, "twin")) {
        const char *tag = json_string_value(json_object_get(
            json_object_get(json_object_get(req->msg, "params"), "arguments"), "tag"));
        pthread_mutex_lock(&f->mu);
        json_object_set(f->ids, tag, json_object_get(req->msg, "id"));
        pthread_mutex_unlock(&f->mu);
        /* Both streams are open before either sends. */
        rs_wait(f->srv, "POST", 4, WAIT_MS);
        rs_sse_head(c, NULL);
        for (int k = 1; k <= 2; k++) {
            snprintf(id, sizeof(id), "%s%d", tag, k);
            snprintf(text, sizeof(text), "%s says %d", tag, k);
            char *note = rs_log_message(text);
            rs_sse_event(c, id, k == 1 ? 10 : -1, note);
            free(note);
        }
        rs_sse_end(c);
        return;
    }
    const char *last = rs_header(req, "last-event-id");
    if (strcmp(req->method, "GET") != 0 || last == NULL || strlen(last) != 2 ||
        (last[1] != '2' && last[1] != '3')) {
        rs_respond(c, 400, NULL, "unknown event id");
        return;
    }
    char tag[2] = {last[0], '\0'};
    rs_sse_head(c, NULL);
    snprintf(id, sizeof(id), "%s%c", tag, last[1] + 1);
    if (last[1] == '2') {
        snprintf(text, sizeof(text), "%s says 3", tag);
        char *note = rs_log_message(text);
        rs_sse_event(c, id, -1, note);
        free(note);
    } else {
        pthread_mutex_lock(&f->mu);
        json_t *rid = json_deep_copy(json_object_get(f->ids, tag));
        pthread_mutex_unlock(&f->mu);
        json_t *answer = json_pack("{s:s, s:o, s:{s:[{s:s, s:s}]}}", "jsonrpc", "2.0", "id", rid,
                                   "result", "content", "type", "text", "text", tag);
        char *textj = json_dumps(answer, JSON_COMPACT);
        rs_sse_event(c, id, -1, textj);
        free(textj);
        json_decref(answer);
    }
    rs_sse_end(c);
}

static void test_each_stream_resumes_from_its_own_last_event_id(void **state)
{
    fixture *f = start(state, h_twins);
    connect_ok(f, NULL);
    cw_reply *ra = &f->r[0], *rb = &f->r[1];
    assert_int_equal(mcp_client_request_async(
                         f->c, "tools/call",
                         json_pack("{s:s, s:{s:s}}", "name", "twin", "arguments", "tag", "a"), NULL,
                         cw_on_reply, ra, NULL),
                     MCP_OK);
    assert_int_equal(mcp_client_request_async(
                         f->c, "tools/call",
                         json_pack("{s:s, s:{s:s}}", "name", "twin", "arguments", "tag", "b"), NULL,
                         cw_on_reply, rb, NULL),
                     MCP_OK);
    assert_int_equal(cw_wait_reply(&f->w, ra, CALL_MS), 0);
    assert_int_equal(cw_wait_reply(&f->w, rb, CALL_MS), 0);
    if (ra->status != MCP_OK || rb->status != MCP_OK)
        fail_msg("twin a: %s (%s); twin b: %s (%s)", mcp_strerror(ra->status), ra->err.message,
                 mcp_strerror(rb->status), rb->err.message);
    assert_string_equal(cw_text(ra->result), "a");
    assert_string_equal(cw_text(rb->result), "b");
    /* Every resumption named the last id of its own stream: a2, a3, b2 and b3. */
    int seen[4] = {0};
    for (size_t i = 0; i < resumes(f); i++) {
        const char *last = rs_header(resume_nth(f, i), "last-event-id");
        const char *want[4] = {"a2", "a3", "b2", "b3"};
        for (int k = 0; k < 4; k++)
            seen[k] += strcmp(last, want[k]) == 0;
    }
    assert_int_equal(resumes(f), 4);
    for (int k = 0; k < 4; k++)
        assert_int_equal(seen[k], 1);
    /* Three notifications a stream, each once. */
    assert_int_equal(cw_notes(&f->w), 6);
}

/* ---- f. The application decides when to reconnect ---- */

static void h_scheduled(rs_conn *c, const rs_request *req, void *user)
{
    fixture *f = user;
    if (rs_mcp_basic(c, req))
        return;
    if (strcmp(req->method, "POST") == 0) {
        prime_and_end(f, c, "s1");
        return;
    }
    /* The resumption: the result of the first call. */
    pthread_mutex_lock(&f->mu);
    json_t *rid = json_deep_copy(json_object_get(f->ids, "first"));
    pthread_mutex_unlock(&f->mu);
    json_t *answer = json_pack("{s:s, s:o, s:{s:[{s:s, s:s}]}}", "jsonrpc", "2.0", "id", rid,
                               "result", "content", "type", "text", "text", "resumed");
    char *text = json_dumps(answer, JSON_COMPACT);
    rs_sse_head(c, NULL);
    rs_sse_event(c, "s2", -1, text);
    rs_sse_end(c);
    free(text);
    json_decref(answer);
}

static void test_application_scheduler_decides_when_to_reconnect(void **state)
{
    fixture *f = start(state, h_scheduled);
    f->retry = 150; /* above the 100 ms floor: given as it is */
    mcp_http_client_opts o = {.schedule_reconnect = cw_schedule, .schedule_user = &f->w};
    connect_ok(f, &o);
    cw_reply *r1 = &f->r[0];
    long long id1 = -1;
    assert_int_equal(mcp_client_request_async(f->c, "tools/call",
                                              json_pack("{s:s}", "name", "stall"), NULL,
                                              cw_on_reply, r1, &id1),
                     MCP_OK);
    pthread_mutex_lock(&f->mu);
    json_object_set_new(f->ids, "first", json_integer(id1));
    pthread_mutex_unlock(&f->mu);
    assert_int_equal(cw_wait_sched(&f->w, 1, WAIT_MS), 0);
    pthread_mutex_lock(&f->w.mu);
    cw_sched s = f->w.sched[0];
    pthread_mutex_unlock(&f->w.mu);
    assert_int_equal(s.delay_ms, 150);
    assert_int_equal(s.attempt, 1);
    /* Twice the retry without a reconnection: the client waits for the application. */
    assert_int_equal(rs_wait(f->srv, "GET", 2, 300), -1);
    assert_int_equal(resumes(f), 0);
    r1->probe_id = s.id; /* by the time the call ends, its reconnection is stale */
    assert_int_equal(mcp_client_reconnect(f->c, s.id), MCP_OK);
    assert_int_equal(cw_wait_reply(&f->w, r1, CALL_MS), 0);
    assert_int_equal(r1->status, MCP_OK);
    assert_string_equal(cw_text(r1->result), "resumed");
    assert_int_equal(r1->probe_rc, MCP_ENOENT);
    assert_int_equal(resumes(f), 1);

    /* A reconnection whose request was cancelled meanwhile is stale too. */
    cw_reply *r2 = &f->r[1];
    long long id2 = -1;
    assert_int_equal(mcp_client_request_async(f->c, "tools/call",
                                              json_pack("{s:s}", "name", "stall"), NULL,
                                              cw_on_reply, r2, &id2),
                     MCP_OK);
    assert_int_equal(cw_wait_sched(&f->w, 2, WAIT_MS), 0);
    pthread_mutex_lock(&f->w.mu);
    r2->probe_id = f->w.sched[1].id;
    pthread_mutex_unlock(&f->w.mu);
    assert_int_equal(mcp_client_cancel(f->c, id2, "no longer wanted"), MCP_OK);
    assert_int_equal(cw_wait_reply(&f->w, r2, WAIT_MS), 0);
    assert_int_equal(r2->status, MCP_ECANCELED);
    assert_int_equal(r2->probe_rc, MCP_ENOENT);
    /* From another thread the call is posted and then ignored. */
    assert_int_equal(mcp_client_reconnect(f->c, r2->probe_id), MCP_OK);
    assert_int_equal(mcp_client_reconnect(f->c, 0), MCP_OK);
    assert_int_equal(rs_wait(f->srv, "GET", 3, 300), -1);
}

/* ---- g. A slow server ---- */

static void h_slow(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    const char *m = rs_rpc_method(req);
    if (m != NULL && strcmp(m, "initialize") == 0)
        rs_pause(c, 300);
    if (rs_mcp_basic(c, req))
        return;
    char *result = rs_call_result(req, "slowly");
    rs_pause(c, 200);
    if (rs_is_call(req, "json")) {
        /* One JSON body, a byte at a time. */
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n";
        rs_write(c, head, sizeof(head) - 1);
        rs_chunk_trickle(c, result, 1);
    } else {
        char *note = rs_log_message("a slow notification");
        char events[2048];
        snprintf(events, sizeof(events), "id: e1\nretry: 100\ndata: \n\ndata: %s\n\ndata: %s\n\n",
                 note, result);
        free(note);
        rs_sse_head(c, NULL);
        rs_chunk_trickle(c, events, 1);
    }
    rs_sse_end(c);
    free(result);
}

static void test_slow_server(void **state)
{
    fixture *f = start(state, h_slow);
    connect_ok(f, NULL);
    expect_text(f, "sse", "slowly");
    expect_text(f, "json", "slowly");
    assert_int_equal(cw_notes(&f->w), 1);
    assert_int_equal(resumes(f), 0);
}

/* ---- h. The headers of every request ---- */

static void h_echo(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    char *result = rs_call_result(req, "echoed");
    rs_respond(c, 200, "Content-Type: application/json\r\n", result);
    free(result);
}

static void expect_header(const rs_request *r, const char *name, const char *want)
{
    const char *v = rs_header(r, name);
    if (v == NULL || (want != NULL && strcmp(v, want) != 0))
        fail_msg("%s %s (request %d, %s): %s is %s, expected %s", r->method, r->path, r->seq,
                 r->msg != NULL ? rs_rpc_method(r) : "no body", name, v ? v : "absent",
                 want ? want : "present");
}

static void test_headers_of_every_request(void **state)
{
    fixture *f = start(state, h_echo);
    static const char *const extra[] = {"Authorization: Bearer t0ken", "X-Test-Header: yes", NULL};
    mcp_http_client_opts o = {.headers = extra};
    connect_ok(f, &o);
    expect_text(f, "echo", "echoed");
    mcp_client_free(f->c); /* ends the session: DELETE */
    f->c = NULL;
    assert_int_equal(rs_wait(f->srv, "DELETE", 1, WAIT_MS), 0);

    size_t n = rs_count(f->srv, NULL);
    assert_true(n >= 5); /* initialize, initialized, GET, tools/call, DELETE */
    const rs_request *init = rs_nth(f->srv, NULL, 0);
    assert_string_equal(init->method, "POST");
    assert_string_equal(rs_rpc_method(init), "initialize");
    assert_null(rs_header(init, "mcp-session-id"));
    for (size_t i = 0; i < n; i++) {
        const rs_request *r = rs_nth(f->srv, NULL, i);
        expect_header(r, "Authorization", "Bearer t0ken");
        expect_header(r, "X-Test-Header", "yes");
        assert_string_equal(r->path, "/mcp");
        if (strcmp(r->method, "POST") == 0) {
            expect_header(r, "Accept", "application/json, text/event-stream");
            expect_header(r, "Content-Type", "application/json");
        } else if (strcmp(r->method, "GET") == 0) {
            expect_header(r, "Accept", "text/event-stream");
        }
        if (r != init) {
            expect_header(r, "Mcp-Session-Id", RS_SESSION);
            expect_header(r, "MCP-Protocol-Version", "2025-11-25");
        }
    }
    assert_int_equal(rs_count(f->srv, "DELETE"), 1);
}

/* ---- i. Failures to connect ---- */

static void test_refused_connection_fails_the_connect_quickly(void **state)
{
    (void)state;
    /* A port nobody listens on: bound, then closed. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", ntohs(a.sin_port));
    mcp_client *c = mcp_client_new("http-client-test", "1.0");
    /* The legacy era: what this test is about. */
    mcp_client_set_protocol(c, "legacy");
    long long t0 = hc_now_ms();
    int rc = mcp_client_connect_http(c, url, NULL, CONNECT_MS);
    long long took = hc_now_ms() - t0;
    mcp_client_free(c);
    if (rc != MCP_ECONNECT)
        fail_msg("expected MCP_ECONNECT, got %s", mcp_strerror(rc));
    if (took > 2000)
        fail_msg("a refused connection took %lld ms to fail", took);
}

static void h_error_500(rs_conn *c, const rs_request *req, void *user)
{
    (void)req, (void)user;
    rs_respond(c, 500, "Content-Type: text/plain\r\n", "out of order");
}

static void test_http_error_to_initialize_fails_the_connect(void **state)
{
    fixture *f = start(state, h_error_500);
    int rc = cw_connect(&f->w, f->url, NULL, CONNECT_MS, &f->c);
    if (rc != MCP_EHTTP)
        fail_msg("expected MCP_EHTTP, got %s", mcp_strerror(rc));
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_connect_error(f->c, &err), MCP_OK);
    assert_int_equal(err.code, 500);
    mcp_rpc_error_clear(&err);
}

/* A call whose stream floods the client with notifications, never answered, until the
 * client goes (or 30 s). */
static void h_flood(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    if (rs_mcp_basic(c, req))
        return;
    char *note = rs_log_message("a flood of notifications");
    size_t one = strlen(note) + 8, n = 200, len = 0;
    char *block = malloc(one * n + 1);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(block + len, one * n + 1 - len, "data: %s\n\n", note);
    free(note);
    rs_sse_head(c, NULL);
    long long end = hc_now_ms() + 30000;
    while (hc_now_ms() < end && rs_chunk(c, block) == 0)
        ;
    free(block);
}

static void test_request_timeout_fires_under_a_flood(void **state)
{
    fixture *f = start(state, h_flood);
    connect_ok(f, NULL);
    long long t0 = hc_now_ms();
    mcp_call_opts o = {.timeout_ms = 1000};
    mcp_rpc_error err = {0};
    int rc = mcp_client_call_tool(f->c, "flood", json_object(), &o, NULL, &err);
    long long took = hc_now_ms() - t0;
    printf("a 1000 ms timeout under a flood of %zu notifications: %s after %lld ms\n",
           cw_notes(&f->w), mcp_strerror(rc), took);
    mcp_rpc_error_clear(&err);
    assert_int_equal(rc, MCP_ETIMEDOUT);
    /* One-sided and generous: a busy machine is late, a starved loop far later. */
    assert_true(took < 5000);
}

/* initialize is answered with a header line of 200 KiB. */
static void h_big_header(rs_conn *c, const rs_request *req, void *user)
{
    (void)user;
    const char *m = rs_rpc_method(req);
    if (m == NULL || strcmp(m, "initialize") != 0) {
        rs_mcp_basic(c, req);
        return;
    }
    static const char start[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Big: ";
    size_t n = 200 * 1024;
    char *big = malloc(n);
    memset(big, 'a', n);
    if (rs_write(c, start, sizeof(start) - 1) == 0 && rs_write(c, big, n) == 0)
        rs_write(c, "\r\n\r\n{}", 6);
    free(big);
}

static void test_oversized_response_header_says_so(void **state)
{
    fixture *f = start(state, h_big_header);
    int rc = cw_connect(&f->w, f->url, NULL, CONNECT_MS, &f->c);
    mcp_rpc_error err = {0};
    if (rc == MCP_OK)
        fail_msg("the connect succeeded");
    int has = mcp_client_connect_error(f->c, &err);
    printf("connect: %s: %s\n", mcp_strerror(rc), err.message);
    assert_int_equal(has, MCP_OK);
    if (strstr(err.message, "response header too large") == NULL)
        fail_msg("the message does not say what happened: %s", err.message);
    mcp_rpc_error_clear(&err);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
    cw_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        T(test_empty_resumptions_give_up_after_the_default_limit),
        T(test_empty_resumptions_give_up_after_a_custom_limit),
        T(test_no_resumption_when_retries_are_off),
        T(test_empty_standalone_stream_is_not_reopened_in_a_loop),
        T(test_empty_standalone_stream_follows_the_retry),
        T(test_refused_resumption_fails_the_request),
        T(test_stream_without_event_ids_fails_the_request),
        T(test_events_that_arrived_before_a_reset_are_read),
        T(test_each_stream_resumes_from_its_own_last_event_id),
        T(test_application_scheduler_decides_when_to_reconnect),
        T(test_slow_server),
        T(test_headers_of_every_request),
        T(test_refused_connection_fails_the_connect_quickly),
        T(test_http_error_to_initialize_fails_the_connect),
        T(test_oversized_response_header_says_so),
        T(test_request_timeout_fires_under_a_flood),
    };
    return cmocka_run_group_tests_name("http_client_raw", tests, NULL, NULL);
}
