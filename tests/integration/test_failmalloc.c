/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures along a whole session (nghttp2's failmalloc tests are the
 * model): the Streamable HTTP server runs in this process, and every
 * allocation made on its threads (the loop and the handler workers) is counted:
 * ours (the executable is linked with --wrap=malloc,calloc,realloc,strdup,
 * strndup), jansson's (json_set_alloc_funcs) and libuv's (uv_replace_allocator),
 * except those inside jansson's parser (see fm_in_parser).
 * A clean session counts N of them; then, for every n in 1..N, the session runs
 * again with only the n-th allocation failing:
 *
 *   initialize, notifications/initialized, tools/call (a handler on a worker
 *   that sends progress and a log message), resources/read (a template),
 *   prompts/get, a GET resuming the tools/call stream with Last-Event-ID,
 *   DELETE.
 *
 * The whole runs twice: against a server answering with SSE streams, and one
 * answering with JSON bodies (json_response). Each step must end cleanly: an
 * HTTP error status, a JSON-RPC error, or a closed connection; never a hang, a
 * malformed answer or a request left without one. Then, allocations working
 * again, a whole new session must be served normally. In the sanitizer build a
 * crash or undefined behaviour aborts the test, and LeakSanitizer checks after
 * every n that nothing was lost.
 *
 * The handlers run on worker threads, so the order of allocations (and so what
 * the n-th one is) varies a little between runs; the count goes 5% past N.
 *
 * The test's own client runs on the main thread, whose allocations never fail.
 *
 * MCP_FAILMALLOC_FROM, _TO and _STRIDE (environment) narrow the run, to
 * reproduce one n: MCP_FAILMALLOC_FROM=123 MCP_FAILMALLOC_TO=123; with
 * MCP_FAILMALLOC_TRACE=1 the sanitizer build prints the stack of each failure;
 * MCP_FAILMALLOC_KEEP_GOING=1 lists every kind of problem instead of stopping
 * at the first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include <mcp/server.h>

#include "failmalloc.h"
#include "http_client.h"

#if defined(__SANITIZE_ADDRESS__)
#define FM_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FM_LSAN 1
#endif
#endif
#ifdef FM_LSAN
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#endif

/* A request that takes longer than this counts as a hang (MCP_FAILMALLOC_STEP_MS). */
static int step_ms = 10000;
/* MCP_FAILMALLOC_TRACE: say where each failure is. */
static int fm_trace;

/* ---- The failing allocator (failmalloc.c), and jansson's parser ---- */

/* Inside jansson's parser, whose lexer mishandles a failed allocation (it ignores
 * strbuffer_append_byte's result, then reads and writes out of bounds: jansson 2.14,
 * akheron/jansson#362), allocations are counted but never failed (fm_no_fail). */
json_t *__real_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *__real_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error);

json_t *__wrap_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error)
{
    fm_no_fail++;
    json_t *v = __real_json_loadb(buffer, buflen, flags, error);
    fm_no_fail--;
    return v;
}

json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error)
{
    fm_no_fail++;
    json_t *v = __real_json_loads(input, flags, error);
    fm_no_fail--;
    return v;
}

/* ---- The server under test ---- */

static json_t *text_result(const char *text)
{
    return json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text);
}

/* On a worker: progress and a log message go out through the loop before the result. */
static json_t *work_tool(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    (void)user;
    mcp_ctx_progress(ctx, 1, 2, "half");
    mcp_ctx_logf(ctx, MCP_LOG_INFO, "working on %s", "it");
    mcp_ctx_progress(ctx, 2, 2, NULL);
    return text_result("done");
}

static json_t *read_item(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx;
    (void)user;
    const char *id = json_string_value(json_object_get(vars, "id"));
    return json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType", "text/plain",
                     "text", id ? id : "?");
}

static json_t *greet_prompt(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)user;
    const char *name = json_string_value(json_object_get(args, "name"));
    return json_pack("{s:[{s:s, s:{s:s, s:s}}]}", "messages", "role", "user", "content", "type",
                     "text", "text", name ? name : "");
}

typedef struct server {
    mcp_server *srv;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int port;
    int rc;
    int json_response;
} server;

static void on_listen(const char *url, void *user)
{
    server *s = user;
    const char *colon = strrchr(url, ':');
    pthread_mutex_lock(&s->mu);
    s->port = colon ? atoi(colon + 1) : -1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *serve(void *arg)
{
    server *s = arg;
    mcp_http_opts o = {0};
    o.listen = "127.0.0.1:0";
    o.on_listen = on_listen;
    o.user = s;
    /* Sessions whose initialize answer was lost (their id never reached us) expire. */
    o.session_idle_ms = 5000;
    o.json_response = s->json_response;
    o.max_sessions = 100000;
    s->rc = mcp_serve_http(s->srv, &o);
    pthread_mutex_lock(&s->mu);
    if (s->port == 0)
        s->port = -1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void server_start(server *s, int json_response)
{
    memset(s, 0, sizeof(*s));
    s->json_response = json_response;
    s->srv = mcp_server_new("failmalloc", "1.0.0");
    assert_non_null(s->srv);
    assert_int_equal(mcp_server_set_workers(s->srv, 2), MCP_OK);
    assert_int_equal(
        mcp_server_add_tool(s->srv, "work", "Works on a worker.", NULL, work_tool, NULL), MCP_OK);
    const mcp_resource_template_def tpl = {
        .uri_template = "fm://items/{id}", .name = "item", .fn = read_item};
    assert_int_equal(mcp_server_add_resource_template(s->srv, &tpl), MCP_OK);
    static const mcp_prompt_arg args[] = {{.name = "name", .required = 1}, {.name = NULL}};
    const mcp_prompt_def prompt = {
        .name = "greet", .args = args, .fn = greet_prompt, .flags = MCP_HANDLER_INLINE};
    assert_int_equal(mcp_server_add_prompt(s->srv, &prompt), MCP_OK);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
    pthread_mutex_lock(&s->mu);
    while (s->port == 0)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    assert_true(s->port > 0);
}

/* SIGTERM stops mcp_serve_http (its loop handles the signal). */
static void server_stop(server *s)
{
    kill(getpid(), SIGTERM);
    assert_int_equal(pthread_join(s->thread, NULL), 0);
    assert_int_equal(s->rc, MCP_OK);
    mcp_server_free(s->srv);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

/* ---- One exchange ---- */

typedef enum outcome {
    ANSWERED, /* a whole response */
    CLOSED,   /* the server closed the connection first */
    HUNG      /* nothing conclusive before the deadline */
} outcome;

/* What went wrong in the current run, for the failure message. */
static char problem[1024];

static void problemf(const char *fmt, ...) MCP_PRINTF(1, 2);
static void problemf(const char *fmt, ...)
{
    if (problem[0] != '\0')
        return; /* the first one says the most */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof(problem), fmt, ap);
    va_end(ap);
}

static outcome exchange(int port, const char *method, const char *headers, const char *body,
                        hc_response *r)
{
    memset(r, 0, sizeof(*r));
    long long start = hc_now_ms();
    hc_conn c;
    if (hc_connect(&c, port, step_ms) != 0)
        return HUNG;
    hc_send_request(&c, port, method, "/mcp", headers, body, step_ms);
    int rc = hc_read_response(&c, r, step_ms);
    int eof = c.eof;
    hc_close(&c);
    if (rc == 0)
        return ANSWERED;
    if (eof && hc_now_ms() - start < step_ms)
        return CLOSED;
    return HUNG;
}

static outcome post(int port, const char *session, const char *body, hc_response *r)
{
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "%s%s%s%s", HC_MCP_POST_HEADERS, session ? "Mcp-Session-Id: " : "",
             session ? session : "", session ? "\r\nMCP-Protocol-Version: 2025-11-25\r\n" : "");
    return exchange(port, "POST", hdrs, body, r);
}

/* The first SSE event id in a body, copied into out ("" when none). */
static void first_event_id(const hc_response *r, char *out, size_t size)
{
    out[0] = '\0';
    const char *p = r->body ? strstr(r->body, "id: ") : NULL;
    if (p == NULL || (p != r->body && p[-1] != '\n'))
        return;
    p += 4;
    size_t n = strcspn(p, "\r\n");
    if (n < size)
        snprintf(out, size, "%.*s", (int)n, p);
}

/*
 * Checks one step's outcome under a failure: a hang is a failure; a closed
 * connection or an error status is clean; a 2xx answer must be well formed and,
 * when id >= 0, answer request id with a result or an error. Returns 1 when the
 * step succeeded (2xx and a result), 0 otherwise.
 */
static int judge(const char *step, outcome o, const hc_response *r, long long id)
{
    if (o == HUNG) {
        problemf("%s: no answer within %d ms", step, step_ms);
        return 0;
    }
    if (o == CLOSED || r->status >= 400)
        return 0;
    if (r->status < 200 || r->status >= 300) {
        problemf("%s: unexpected status %d", step, r->status);
        return 0;
    }
    if (id < 0)
        return 1;
    json_t *msgs = hc_messages(r);
    if (msgs == NULL) {
        problemf("%s: a %d answer that is neither JSON nor SSE\n(it was: %.200s)", step, r->status,
                 r->body ? r->body : "");
        return 0;
    }
    int answered = 0, result = 0;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (!json_is_object(m)) {
            problemf("%s: a message that is not a JSON object", step);
            break;
        }
        if (json_integer_value(json_object_get(m, "id")) == id &&
            json_object_get(m, "method") == NULL) {
            answered = 1;
            result = json_object_get(m, "result") != NULL;
            if (!result && !json_is_object(json_object_get(m, "error")))
                problemf("%s: an answer with neither result nor error", step);
        }
    }
    json_decref(msgs);
    if (!answered)
        problemf("%s: the %d answer ended without answering request %lld\n(it was: %.300s)", step,
                 r->status, id, r->body ? r->body : "");
    return result;
}

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fm\",\"version\":\"1\"}}}";
static const char initialized_body[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
static const char call_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"work\","
    "\"arguments\":{},\"_meta\":{\"progressToken\":\"p\"}}}";
static const char read_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":"
    "\"fm://items/42\"}}";
static const char prompt_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\","
    "\"arguments\":{\"name\":\"ada\"}}}";

/* The session of one run; session is "" when initialize gave none. */
typedef struct run {
    char session[64];
    int steps_ok;
} run;

static void session_of(const hc_response *r, run *out)
{
    const char *id = hc_header_get(r, "mcp-session-id");
    if (id != NULL && strlen(id) < sizeof(out->session))
        snprintf(out->session, sizeof(out->session), "%s", id);
}

/* The whole session, judging every step. */
static void session_run(int port, run *out)
{
    hc_response r;
    memset(out, 0, sizeof(*out));
    outcome o = post(port, NULL, init_body, &r);
    if (judge("initialize", o, &r, 1)) {
        out->steps_ok++;
        session_of(&r, out);
        if (out->session[0] == '\0')
            problemf("initialize: a result without a session id");
    }
    hc_response_free(&r);
    const char *s = out->session[0] ? out->session : NULL;
    if (s == NULL)
        return; /* nothing more to do without a session (a later step would get 400) */

    o = post(port, s, initialized_body, &r);
    out->steps_ok += judge("notifications/initialized", o, &r, -1);
    hc_response_free(&r);

    char event_id[128] = "";
    o = post(port, s, call_body, &r);
    if (judge("tools/call", o, &r, 2))
        out->steps_ok++;
    if (o == ANSWERED && r.status == 200)
        first_event_id(&r, event_id, sizeof(event_id));
    hc_response_free(&r);

    o = post(port, s, read_body, &r);
    out->steps_ok += judge("resources/read", o, &r, 3);
    hc_response_free(&r);

    o = post(port, s, prompt_body, &r);
    out->steps_ok += judge("prompts/get", o, &r, 4);
    hc_response_free(&r);

    if (event_id[0] != '\0') {
        /* Resuming from the priming event replays the rest of the stream, its result
         * last, and ends it. */
        char hdrs[512];
        snprintf(hdrs, sizeof(hdrs),
                 "%sMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                 "Last-Event-ID: %s\r\n",
                 HC_SSE_ACCEPT, s, event_id);
        o = exchange(port, "GET", hdrs, NULL, &r);
        out->steps_ok += judge("GET with Last-Event-ID", o, &r, 2);
        hc_response_free(&r);
    }

    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n", s);
    o = exchange(port, "DELETE", hdrs, NULL, &r);
    if (o == HUNG)
        problemf("DELETE: no answer within %d ms", step_ms);
    else if (o == ANSWERED && r.status == 200)
        out->steps_ok++;
    hc_response_free(&r);
}

/* With allocations working: a new session is served normally (all `steps` of it), and
 * the one the run left (if its DELETE failed) is deleted. */
static void check_service(int port, const run *left, int steps)
{
    if (left->session[0] != '\0') {
        char hdrs[256];
        snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", left->session);
        hc_response r;
        if (exchange(port, "DELETE", hdrs, NULL, &r) == HUNG)
            problemf("afterwards, DELETE of the run's session: no answer");
        hc_response_free(&r);
    }
    run ok;
    session_run(port, &ok);
    if (ok.steps_ok != steps)
        problemf("afterwards, a new session got only %d of %d steps through", ok.steps_ok, steps);
}

/* MCP_FAILMALLOC_KEEP_GOING=1: go on after a problem and list every kind found, each
 * with the n values that showed it (to report bugs; the test still fails). */
static int keep_going;
static struct {
    char what[160];
    long first, count;
} kinds[64];
static size_t nkinds;

static void note_problem(long n)
{
    /* Kinds are told apart by the first line; the rest (what the client got) varies. */
    if (fm_trace)
        printf("failmalloc: with allocation %ld failing: %s\n", n, problem);
    char what[160];
    snprintf(what, sizeof(what), "%.*s", (int)strcspn(problem, "\n"), problem);
    problem[0] = '\0';
    size_t i;
    for (i = 0; i < nkinds; i++)
        if (strcmp(kinds[i].what, what) == 0)
            break;
    if (i == nkinds) {
        if (nkinds == sizeof(kinds) / sizeof(kinds[0]))
            return;
        snprintf(kinds[nkinds].what, sizeof(kinds[nkinds].what), "%s", what);
        kinds[nkinds++].first = n;
    }
    kinds[i].count++;
}

static void report_problems(void)
{
    for (size_t i = 0; i < nkinds; i++)
        printf("[ failmalloc ] %ld times, first at n = %ld: %s\n", kinds[i].count, kinds[i].first,
               kinds[i].what);
    if (nkinds > 0)
        fail_msg("%zu kinds of problem (listed above)", nkinds);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* Runs the session failing each allocation in turn, against a server answering with
 * SSE streams or (json_response) with JSON bodies. */
static void every_allocation_fails_cleanly(int json_response)
{
    problem[0] = '\0';
    nkinds = 0;
    fm_trace = env_long("MCP_FAILMALLOC_TRACE", 0) != 0;
    fm_set_trace(fm_trace);
    keep_going = env_long("MCP_FAILMALLOC_KEEP_GOING", 0) != 0;
    step_ms = (int)env_long("MCP_FAILMALLOC_STEP_MS", step_ms);
    server s;
    server_start(&s, json_response);

    /* A clean run counts the allocations. */
    run clean;
    fm_arm(0);
    session_run(s.port, &clean);
    fm_disarm();
    long n_allocs = fm_counted();
    /* Seven steps; six when no answer had an event id to resume from (JSON answers
     * without notifications before them). */
    int steps = clean.steps_ok;
    if (problem[0] != '\0' || steps < 6)
        fail_msg("the clean session failed (%d steps done): %s", steps, problem);
    assert_true(n_allocs > 100);

    /* Counts vary a little from run to run (worker threads, timers): go a bit past. */
    long from = env_long("MCP_FAILMALLOC_FROM", 1);
    long to = env_long("MCP_FAILMALLOC_TO", n_allocs + n_allocs / 20);
    long stride = env_long("MCP_FAILMALLOC_STRIDE", 1);
    if (stride < 1)
        stride = 1;
    long long t0 = hc_now_ms();
    long runs = 0, injected = 0, leaks = 0;
    char first[sizeof(problem) + 64] = "";
    for (long n = from; n <= to; n += stride) {
        run r;
        fm_arm(n);
        session_run(s.port, &r);
        fm_disarm();
        injected += fm_failures() > 0;
        runs++;
        if (problem[0] == '\0')
            check_service(s.port, &r, steps);
#ifdef FM_LSAN
        /* A leak is reported again by every later check: after the first, only at exit. */
        if (leaks == 0 && __lsan_do_recoverable_leak_check() != 0) {
            leaks++;
            problemf("LeakSanitizer found a leak (report above)");
        }
#endif
        if (problem[0] != '\0') {
            if (!keep_going) {
                snprintf(first, sizeof(first), "failing allocation %ld of %ld: %s", n, n_allocs,
                         problem);
                break;
            }
            note_problem(n);
        }
    }
    printf("[ failmalloc ] %s: %ld allocations in a clean session; %ld runs (n = %ld..%ld, stride "
           "%ld), %ld with a failure injected, %ld leaks, in %lld ms\n",
           json_response ? "JSON answers" : "SSE answers", n_allocs, runs, from, to, stride,
           injected, leaks, hc_now_ms() - t0);
    server_stop(&s);
    if (first[0] != '\0')
        fail_msg("%s", first);
    report_problems();
    /* The hooks must have reached the library: a good part of the runs had their failure (those
     * that did not fell inside jansson's parser, or past the run's last allocation). */
    if (runs > 10 && injected < runs / 4)
        fail_msg("only %ld of %ld runs had a failure injected", injected, runs);
}

static void test_every_allocation_of_a_session_with_sse_answers_can_fail_cleanly(void **state)
{
    (void)state;
    every_allocation_fails_cleanly(0);
}

static void test_every_allocation_of_a_session_with_json_answers_can_fail_cleanly(void **state)
{
    (void)state;
    every_allocation_fails_cleanly(1);
}

int main(void)
{
    fm_exempt = 1;
    /* LeakSanitizer ends the process without flushing stdio: keep nothing buffered. */
    setvbuf(stdout, NULL, _IONBF, 0);
    /* Before anything else allocates through them. */
    fm_hook_libraries();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_of_a_session_with_sse_answers_can_fail_cleanly),
        cmocka_unit_test(test_every_allocation_of_a_session_with_json_answers_can_fail_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
