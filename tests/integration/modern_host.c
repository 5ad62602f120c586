/* SPDX-License-Identifier: MIT */
/*
 * The in-process server of the modern-era tests and their requests; see
 * modern_host.h.
 */
#define _GNU_SOURCE
#include "modern_host.h"

#include <dirent.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "server/server_int.h"
#include "transport/shttp.h"
#include "util/util.h"

/* ---- Handlers ---- */

static void count_run(mh_host *h, enum mh_tool tool)
{
    pthread_mutex_lock(&h->mu);
    h->runs[tool]++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static json_t *elicit_name(void)
{
    return json_pack("{s:s, s:{s:s, s:{s:{s:s}}}}", "message", "Your name?", "requestedSchema",
                     "type", "object", "properties", "name", "type", "string");
}

/* Asks `key`: 1 with the answer's name, 0 while the question is open (the handler
 * returns NULL), -1 when it cannot be asked (msg says why). */
static int ask(mcp_ctx *ctx, const char *key, char *name, size_t size)
{
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_ask(ctx, key, "elicitation/create", elicit_name(), 0, &answer, &err);
    mcp_rpc_error_clear(&err);
    if (rc == MCP_EINPUT)
        return 0;
    if (rc != MCP_OK) {
        snprintf(name, size, "%s", mcp_strerror(rc));
        return -1;
    }
    const char *n = json_string_value(json_object_get(json_object_get(answer, "content"), "name"));
    snprintf(name, size, "%s", n ? n : "(no name)");
    json_decref(answer);
    return 1;
}

static json_t *tool_count(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args;
    count_run(user, MH_COUNT);
    return mcp_text_result("ran");
}

static json_t *tool_ask(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    count_run(user, MH_ASK);
    char name[128], text[160];
    int rc = ask(ctx, "name", name, sizeof name);
    if (rc <= 0)
        return rc == 0 ? NULL : mcp_tool_error("cannot ask: %s", name);
    snprintf(text, sizeof text, "hello %s", name);
    return mcp_text_result(text);
}

static json_t *tool_ask_two(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    count_run(user, MH_ASK_TWO);
    char first[64], second[64], text[160];
    int rc = ask(ctx, "first", first, sizeof first);
    if (rc <= 0)
        return rc == 0 ? NULL : mcp_tool_error("cannot ask: %s", first);
    rc = ask(ctx, "second", second, sizeof second);
    if (rc <= 0)
        return rc == 0 ? NULL : mcp_tool_error("cannot ask: %s", second);
    snprintf(text, sizeof text, "%s+%s (round %d)", first, second, mcp_ctx_round(ctx));
    return mcp_text_result(text);
}

static json_t *tool_sleepy(mcp_ctx *ctx, const json_t *args, void *user)
{
    mh_host *h = user;
    count_run(h, MH_SLEEPY);
    pthread_mutex_lock(&h->mu);
    h->sleeping++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    int rc = mcp_ctx_sleep(ctx, (int)json_integer_value(json_object_get(args, "ms")));
    pthread_mutex_lock(&h->mu);
    h->sleeping--;
    if (rc == MCP_ECANCELED)
        h->cancelled++;
    else
        h->finished++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return mcp_text_result(rc == MCP_OK ? "slept" : "cancelled");
}

static json_t *tool_logs(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    count_run(user, MH_LOGS);
    static const mcp_log_level levels[] = {MCP_LOG_DEBUG, MCP_LOG_INFO, MCP_LOG_WARNING,
                                           MCP_LOG_ERROR};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        mcp_ctx_logf(ctx, levels[i], "%s", mcp_log_level_name(levels[i]));
    return mcp_text_result("logged");
}

static json_t *tool_headers(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args;
    count_run(user, MH_HEADERS);
    return mcp_text_result("ok");
}

static json_t *prompt_greet(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    count_run(user, MH_PROMPT);
    char name[128];
    if (ask(ctx, "name", name, sizeof name) == 0)
        return NULL; /* the question is open; a question it cannot ask leaves its reason */
    return json_pack("{s:[{s:s, s:{s:s, s:s}}]}", "messages", "role", "user", "content", "type",
                     "text", "text", name);
}

static json_t *read_item(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)vars;
    count_run(user, MH_RESOURCE);
    char name[128];
    if (ask(ctx, "name", name, sizeof name) == 0)
        return NULL;
    return json_pack("{s:[{s:s, s:s}]}", "contents", "uri", uri, "text", name);
}

#define HEADERS_SCHEMA                                                                             \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"                                \
    "\"count\":{\"type\":\"integer\",\"x-mcp-header\":\"Count\"},"                                 \
    "\"flag\":{\"type\":\"boolean\",\"x-mcp-header\":\"Flag\"},"                                   \
    "\"where\":{\"type\":\"object\",\"properties\":{"                                              \
    "\"zone\":{\"type\":\"string\",\"x-mcp-header\":\"Zone\"}}},"                                  \
    "\"note\":{\"type\":\"string\"}}}"

static int add_handlers(mh_host *h, int tools_only)
{
    mcp_server *srv = h->srv;
    const mcp_tool_def tools[] = {
        {.name = "count", .description = "Counts its runs", .fn = tool_count, .user = h},
        {.name = "ask",
         .description = "Asks the user's name",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}}}",
         .fn = tool_ask,
         .user = h},
        {.name = "ask_two", .description = "Asks twice", .fn = tool_ask_two, .user = h},
        {.name = "sleepy",
         .description = "Sleeps args.ms",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"}}}",
         .fn = tool_sleepy,
         .user = h},
        {.name = "logs", .description = "Logs four levels", .fn = tool_logs, .user = h},
        {.name = "headers",
         .description = "Parameters mirrored into headers",
         .input_schema = HEADERS_SCHEMA,
         .fn = tool_headers,
         .user = h},
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (mcp_server_add_tool_def(srv, &tools[i]) != MCP_OK)
            return -1;
    if (tools_only)
        return 0;
    static const mcp_prompt_arg args[] = {{.name = "who"}, {0}};
    mcp_prompt_def prompt = {
        .name = "greet", .description = "Asks a name", .args = args, .fn = prompt_greet, .user = h};
    mcp_resource_def res = {.uri = "test://fixed", .name = "fixed", .fn = read_item, .user = h};
    mcp_resource_template_def tmpl = {
        .uri_template = "test://items/{id}", .name = "item", .fn = read_item, .user = h};
    if (mcp_server_add_prompt(srv, &prompt) != MCP_OK ||
        mcp_server_add_resource(srv, &res) != MCP_OK ||
        mcp_server_add_resource_template(srv, &tmpl) != MCP_OK)
        return -1;
    return 0;
}

/* ---- The host's loop ---- */

static void on_async(uv_async_t *a)
{
    mh_host *h = a->data;
    pthread_mutex_lock(&h->mu);
    void (*job)(mh_host *, void *) = h->job;
    void *arg = h->job_arg;
    int quit = h->quit;
    h->job = NULL;
    pthread_mutex_unlock(&h->mu);
    if (job != NULL) {
        job(h, arg);
        pthread_mutex_lock(&h->mu);
        h->job_done = 1;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
    }
    if (quit)
        uv_close((uv_handle_t *)&h->async, NULL);
}

static void *host_main(void *arg)
{
    mh_host *h = arg;
    uv_run(&h->loop, UV_RUN_DEFAULT);
    return NULL;
}

int mh_on_loop(mh_host *h, void (*fn)(mh_host *h, void *arg), void *arg)
{
    long long deadline = harness_now_ms() + MH_WAIT_MS;
    pthread_mutex_lock(&h->mu);
    h->job = fn;
    h->job_arg = arg;
    h->job_done = 0;
    pthread_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    pthread_mutex_lock(&h->mu);
    while (!h->job_done && harness_cond_wait_until(&h->cv, &h->mu, deadline))
        ;
    int ok = h->job_done;
    pthread_mutex_unlock(&h->mu);
    return ok ? 0 : -1;
}

typedef struct start_job {
    const mh_opts *o;
    int rc;
} start_job;

static void do_start(mh_host *h, void *arg)
{
    start_job *j = arg;
    mcp_http_opts opts = {.listen = "127.0.0.1:0"};
    if (j->o != NULL) {
        opts.max_queued = j->o->max_queued;
        opts.max_queued_total = j->o->max_queued_total;
        opts.max_connections = j->o->max_connections;
        opts.keepalive_ms = j->o->keepalive_ms;
        opts.session_idle_ms = j->o->session_idle_ms;
    }
    j->rc = mcp_http_endpoint_new(&h->loop, h->srv, &opts, &h->ep);
    h->port = j->rc == MCP_OK ? mcp_http_endpoint_port(h->ep) : 0;
}

int mh_start(mh_host *h, const mh_opts *o)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    harness_cond_init_monotonic(&h->cv);
    h->srv = mcp_server_new("modern-host", "1.0.0");
    if (h->srv == NULL || add_handlers(h, o != NULL && o->tools_only) != 0 ||
        mcp_server_set_workers(h->srv, o && o->workers ? o->workers : 4) != MCP_OK)
        return -1;
    if (o != NULL && o->state_ttl_ms > 0) {
        unsigned char key[32];
        for (size_t i = 0; i < sizeof key; i++)
            key[i] = (unsigned char)(i * 7 + 1);
        if (mcp_server_set_state_key(h->srv, key, sizeof key, o->state_ttl_ms) != MCP_OK)
            return -1;
    }
    if (uv_loop_init(&h->loop) != 0 || uv_async_init(&h->loop, &h->async, on_async) != 0)
        return -1;
    h->async.data = h;
    if (pthread_create(&h->thread, NULL, host_main, h) != 0)
        return -1;
    h->running = 1;
    start_job j = {.o = o, .rc = -1};
    if (mh_on_loop(h, do_start, &j) != 0 || j.rc != MCP_OK)
        return -1;
    return 0;
}

static void on_stopped(void *user, int status)
{
    mh_host *h = user;
    (void)status;
    mcp_http_endpoint_free(h->ep);
    h->ep = NULL;
    pthread_mutex_lock(&h->mu);
    h->stop_done = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void do_stop(mh_host *h, void *arg)
{
    mcp_http_endpoint_stop(h->ep, *(int *)arg, on_stopped, h);
}

int mh_stop(mh_host *h, int drain_ms)
{
    int rc = 0;
    if (h->ep != NULL) {
        rc = mh_on_loop(h, do_stop, &drain_ms);
        rc |= mh_wait_count(h, &h->stop_done, 1, MH_WAIT_MS + drain_ms);
    }
    if (h->running) {
        pthread_mutex_lock(&h->mu);
        h->quit = 1;
        pthread_mutex_unlock(&h->mu);
        uv_async_send(&h->async);
        pthread_join(h->thread, NULL);
        if (uv_loop_close(&h->loop) != 0)
            rc = -1;
        h->running = 0;
    }
    mcp_server_free(h->srv);
    h->srv = NULL;
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    return rc;
}

static void do_count_sessions(mh_host *h, void *arg)
{
    size_t n = 0;
    uv_mutex_lock(&h->srv->lock);
    for (mcp__srt *rt = h->srv->runtimes; rt != NULL; rt = rt->next)
        n += rt->nsessions;
    uv_mutex_unlock(&h->srv->lock);
    if (h->ep != NULL)
        for (hsess *hs = h->ep->all; hs != NULL; hs = hs->next)
            n++;
    *(size_t *)arg = n;
}

size_t mh_sessions(mh_host *h)
{
    size_t n = (size_t)-1;
    if (mh_on_loop(h, do_count_sessions, &n) != 0)
        fail_msg("the host's loop did not count its sessions within %d ms", MH_WAIT_MS);
    return n;
}

size_t mh_wait_sessions(mh_host *h, size_t want, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    size_t n;
    /* Sessions end on the loop (a deferred close, a handler's return on a worker) with
     * nothing to wait on from here: count again until the deadline. */
    while ((n = mh_sessions(h)) != want && harness_now_ms() < deadline) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return n;
}

int mh_runs(mh_host *h, enum mh_tool tool)
{
    return mh_count(h, &h->runs[tool]);
}

int mh_count(mh_host *h, const int *field)
{
    pthread_mutex_lock(&h->mu);
    int n = *field;
    pthread_mutex_unlock(&h->mu);
    return n;
}

int mh_wait_count(mh_host *h, const int *field, int want, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    pthread_mutex_lock(&h->mu);
    while (*field < want && harness_cond_wait_until(&h->cv, &h->mu, deadline))
        ;
    int ok = *field >= want;
    pthread_mutex_unlock(&h->mu);
    return ok ? 0 : -1;
}

/* ---- Requests ---- */

json_t *mh_meta(const char *caps_json)
{
    json_t *caps = json_loads(caps_json ? caps_json : "{}", 0, NULL);
    assert_non_null(caps);
    return json_pack("{s:s, s:{s:s, s:s}, s:o}", "io.modelcontextprotocol/protocolVersion",
                     MH_VERSION, "io.modelcontextprotocol/clientInfo", "name", "modern-tests",
                     "version", "1.0.0", "io.modelcontextprotocol/clientCapabilities", caps);
}

json_t *mh_request(long long id, const char *method, json_t *params, const char *caps_json)
{
    if (params == NULL)
        params = json_object();
    if (json_object_get(params, "_meta") == NULL)
        json_object_set_new(params, "_meta", mh_meta(caps_json));
    json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id,
                            "method", method, "params", params);
    assert_non_null(req);
    return req;
}

/* A header value as the spec encodes it (Value Encoding): plain when it is visible
 * ASCII without leading or trailing space and not the sentinel's shape, else Base64. */
static void header_value(const char *v, char *out, size_t size)
{
    size_t n = strlen(v);
    int plain = n > 0 && v[0] != ' ' && v[n - 1] != ' ' &&
                !(strncmp(v, "=?base64?", 9) == 0 && n >= 11 && strcmp(v + n - 2, "?=") == 0);
    for (size_t i = 0; plain && i < n; i++)
        plain = (unsigned char)v[i] >= 0x20 && (unsigned char)v[i] <= 0x7e;
    if (plain) {
        snprintf(out, size, "%s", v);
        return;
    }
    char *enc = mcp__base64_encode(v, n);
    assert_non_null(enc);
    snprintf(out, size, "=?base64?%s?=", enc);
    free(enc);
}

char *mh_headers(const json_t *req, const char *extra, char *buf, size_t size)
{
    const json_t *params = json_object_get(req, "params");
    const char *method = json_string_value(json_object_get(req, "method"));
    const char *version = json_string_value(json_object_get(
        json_object_get(params, "_meta"), "io.modelcontextprotocol/protocolVersion"));
    const char *name = NULL;
    if (method != NULL && (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get")))
        name = json_string_value(json_object_get(params, "name"));
    else if (method != NULL && !strcmp(method, "resources/read"))
        name = json_string_value(json_object_get(params, "uri"));
    else if (method != NULL && (!strcmp(method, "tasks/get") || !strcmp(method, "tasks/update") ||
                                !strcmp(method, "tasks/cancel")))
        name = json_string_value(json_object_get(params, "taskId"));
    char name_line[1024] = "";
    if (name != NULL) {
        char v[960];
        header_value(name, v, sizeof v);
        snprintf(name_line, sizeof name_line, "Mcp-Name: %s\r\n", v);
    }
    snprintf(buf, size, HC_MCP_POST_HEADERS "MCP-Protocol-Version: %s\r\nMcp-Method: %s\r\n%s%s",
             version ? version : MH_VERSION, method ? method : "", name_line, extra ? extra : "");
    return buf;
}

int mh_post(int port, const json_t *req, const char *extra_headers, hc_response *r)
{
    char hdrs[4096];
    char *body = json_dumps(req, JSON_COMPACT);
    assert_non_null(body);
    int rc = mh_post_raw(port, mh_headers(req, extra_headers, hdrs, sizeof hdrs), body, r);
    free(body);
    return rc;
}

int mh_post_raw(int port, const char *headers, const char *body, hc_response *r)
{
    return hc_request(port, "POST", "/mcp", headers, body, r, MH_WAIT_MS);
}

char *mh_format(int port, const json_t *req, size_t *len)
{
    char hdrs[4096];
    char *body = json_dumps(req, JSON_COMPACT);
    assert_non_null(body);
    char *text = hc_format_request(port, "POST", "/mcp", mh_headers(req, NULL, hdrs, sizeof hdrs),
                                   body, strlen(body), len);
    assert_non_null(text);
    free(body);
    return text;
}

int mh_send(hc_conn *c, int port, const json_t *req)
{
    size_t len;
    char *text = mh_format(port, req, &len);
    int rc = hc_send(c, text, len, MH_WAIT_MS);
    free(text);
    return rc;
}

int mh_open(hc_conn *c, int port, const json_t *req, hc_response *head)
{
    if (hc_connect(c, port, MH_WAIT_MS) != 0 || mh_send(c, port, req) != 0 ||
        hc_read_head(c, head, MH_WAIT_MS) != 0)
        return -1;
    return 0;
}

json_t *mh_messages(const hc_response *r, const char *what)
{
    json_t *msgs = hc_messages(r);
    if (msgs == NULL)
        fail_msg("%s: HTTP %d with no JSON-RPC message (Content-Type %s): %.300s", what, r->status,
                 hc_header_get(r, "content-type") ? hc_header_get(r, "content-type") : "none",
                 r->body ? r->body : "");
    return msgs;
}

json_t *mh_expect(const hc_response *r, int status, int code, long long id, const char *what)
{
    json_t *msgs = mh_messages(r, what);
    char *text = json_dumps(msgs, JSON_COMPACT);
    if (r->status != status)
        fail_msg("%s: expected HTTP %d, got %d: %.400s", what, status, r->status, text);
    json_t *resp = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (json_object_get(m, "method") != NULL)
            continue;
        if (resp != NULL)
            fail_msg("%s: more than one response: %.400s", what, text);
        resp = m;
    }
    if (resp == NULL)
        fail_msg("%s: no response: %.400s", what, text);
    json_t *rid = json_object_get(resp, "id");
    if (!json_is_integer(rid) || json_integer_value(rid) != id)
        fail_msg("%s: expected the id %lld in the response: %.400s", what, id, text);
    json_t *err = json_object_get(resp, "error");
    long long got = err ? json_integer_value(json_object_get(err, "code")) : 0;
    if (got != code)
        fail_msg("%s: expected %s %d, got %.400s", what, code ? "the error" : "a result", code,
                 text);
    if (code == 0 && !json_is_object(json_object_get(resp, "result")))
        fail_msg("%s: expected a result: %.400s", what, text);
    free(text);
    json_incref(resp);
    json_decref(msgs);
    return resp;
}

const char *mh_text(const json_t *response, const char *what)
{
    const json_t *content = json_object_get(json_object_get(response, "result"), "content");
    const char *t = json_string_value(json_object_get(json_array_get(content, 0), "text"));
    if (t == NULL) {
        char *s = json_dumps(response, JSON_COMPACT);
        fail_msg("%s: expected text content: %.400s", what, s ? s : "?");
    }
    return t;
}

/* ---- The process ---- */

int mh_count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

int mh_wait_fds(int want, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    int n;
    /* A closed connection's descriptor goes when the server's loop notices: nothing
     * here can wait on that, so look again until the deadline. */
    while ((n = mh_count_fds()) > want && harness_now_ms() < deadline) {
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return n;
}

long long mh_heap_bytes(void)
{
#if UNDER_ASAN
    return -1;
#else
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#endif
}

int mh_group_setup(void **state)
{
    mh_host *h = calloc(1, sizeof(*h));
    if (h == NULL || mh_start(h, NULL) != 0) {
        free(h);
        return -1;
    }
    *state = h;
    return 0;
}

int mh_group_teardown(void **state)
{
    mh_host *h = *state;
    int rc = mh_stop(h, 1000);
    free(h);
    return rc;
}
