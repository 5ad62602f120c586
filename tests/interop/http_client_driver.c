/* SPDX-License-Identifier: MIT */
/*
 * interop_http_client_driver: libmcp's HTTP client, driven by a script, for
 * the interop tests that point it at other implementations' servers
 * (our_client_http.test.mjs).
 *
 *   interop_http_client_driver [--http-sse] URL < script.json
 *   interop_http_client_driver --stdio CMD [ARGS...] < script.json
 *
 * It connects to URL with mcp_client_connect_http (--http-sse: URL is the
 * SSE endpoint of the 2024-11-05 HTTP+SSE transport), or starts CMD with
 * mcp_client_connect_stdio (--stdio: its name notwithstanding, the driver drives
 * the stdio client too), runs the script's steps
 * one after the other through the public API's shorthands, and prints one JSON
 * line per step on stdout. The script is one JSON object:
 *
 *   {"timeout_ms": 20000,          each request's timeout, and the connect's
 *    "protocol": "legacy",         mcp_client_set_protocol (default "legacy")
 *    "sampling": {...},            the result every sampling/createMessage gets
 *    "elicitation": {...},         the result every elicitation/create gets
 *    "roots": [...],               the roots roots/list is answered with
 *    "steps": [{"op": ...}, ...]}
 *
 * Without "sampling" (or "elicitation") no handler is set, and without
 * "roots" no roots: the capability is then not declared. Steps:
 *
 *   {"op":"ping"}
 *   {"op":"list_tools"}, and list_resources, list_resource_templates,
 *       list_prompts: one page ("cursor": the page after it)
 *   {"op":"list_all","method":"tools/list","key":"tools"}: every page
 *   {"op":"call_tool","name":...,"args":{...}}
 *   {"op":"read_resource","uri":...}
 *   {"op":"get_prompt","name":...,"args":{...}}
 *   {"op":"wait_notifications","count":n,"timeout_ms":t}: waits until n
 *       notifications came since the last line (MCP_ETIMEDOUT after t ms),
 *       for those that come after a call's answer
 *   {"op":"listen","filter":{"toolsListChanged":true, "resourceSubscriptions":
 *       [...], ...}}: mcp_client_listen; the line's "result" is {"id": its id}
 *   {"op":"wait_listen","count":n,"timeout_ms":t}: waits until n subscription
 *       events came in all, since the connect
 *   {"op":"cancel_listen"}: mcp_client_cancel of the last listen
 *
 * The first line is {"connect":status, "protocolVersion", "serverInfo",
 * "capabilities"}; each step's is {"step":i, "op", "status" (0: MCP_OK, else
 * the library's negative code), "error" (mcp_strerror when not 0), "result" or
 * "rpc_error" {code, message, data}, and what the server sent meanwhile:
 * "sampling" and "elicitation" (the params of each such request, which got the
 * canned answer), "notifications" [{method, params}] and "listen" [{kind
 * ("acknowledged", "notification", "ended"), id, method, params, status}]}. Everything is
 * recorded before the step's answer is printed, so a request the server made
 * for a tool call shows in that call's line.
 *
 * Exit status: 0 when connected and every step ran (a failed step is a line
 * with a status, not an exit status), 1 when the connect failed, 2 for a usage
 * or script error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <mcp/mcp.h>

#define DRIVER "interop_http_client_driver"

/* What the server sent since the last step's line, and the canned answers.
 * Handlers run on the client's workers, notifications on its loop thread: the
 * lock keeps them and the main thread apart. */
struct driver {
    uv_mutex_t lock;
    uv_cond_t notified; /* signalled for each notification */
    json_t *sampling_answer;
    json_t *elicitation_answer;
    json_t *sampling;      /* params of each sampling/createMessage */
    json_t *elicitation;   /* params of each elicitation/create */
    json_t *notifications; /* {method, params} each */
    json_t *listen;        /* subscription events */
    size_t listen_total;   /* subscription events since the connect */
    long long last_listen; /* the id of the last listen */
};

/* Records params in *log and answers with a copy of the canned result. */
static json_t *answer(struct driver *d, json_t **log, const json_t *params, const json_t *canned)
{
    uv_mutex_lock(&d->lock);
    json_array_append_new(*log, json_deep_copy(params));
    json_t *result = json_deep_copy(canned);
    uv_mutex_unlock(&d->lock);
    return result;
}

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err;
    struct driver *d = user;
    return answer(d, &d->sampling, params, d->sampling_answer);
}

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err;
    struct driver *d = user;
    return answer(d, &d->elicitation, params, d->elicitation_answer);
}

static void on_notification(mcp_client *c, const char *method, const json_t *params, void *user)
{
    (void)c;
    struct driver *d = user;
    uv_mutex_lock(&d->lock);
    json_array_append_new(d->notifications,
                          json_pack("{s:s, s:O?}", "method", method, "params", params));
    uv_cond_broadcast(&d->notified);
    uv_mutex_unlock(&d->lock);
}

static void on_listen(mcp_client *c, const mcp_listen_event *ev, void *user)
{
    (void)c;
    struct driver *d = user;
    static const char *const kinds[] = {"acknowledged", "notification", "ended"};
    json_t *e = json_pack("{s:s, s:I, s:s?, s:O?, s:i}", "kind", kinds[ev->kind], "id",
                          (json_int_t)ev->subscription_id, "method", ev->method, "params",
                          ev->params, "status", ev->status);
    uv_mutex_lock(&d->lock);
    json_array_append_new(d->listen, e);
    d->listen_total++;
    uv_cond_broadcast(&d->notified);
    uv_mutex_unlock(&d->lock);
}

/* Moves what was recorded into line (as "sampling", "elicitation",
 * "notifications", "listen") and starts new records. */
static void take_records(struct driver *d, json_t *line)
{
    uv_mutex_lock(&d->lock);
    json_object_set_new(line, "sampling", d->sampling);
    json_object_set_new(line, "elicitation", d->elicitation);
    json_object_set_new(line, "notifications", d->notifications);
    json_object_set_new(line, "listen", d->listen);
    d->sampling = json_array();
    d->elicitation = json_array();
    d->notifications = json_array();
    d->listen = json_array();
    uv_mutex_unlock(&d->lock);
}

static void print_line(json_t *line)
{
    char *text = json_dumps(line, JSON_COMPACT);
    if (text != NULL) {
        puts(text);
        fflush(stdout);
        free(text);
    }
    json_decref(line);
}

static const char *str(const json_t *step, const char *key)
{
    return json_string_value(json_object_get(step, key));
}

/* A JSON argument of a step, as a new reference (the shorthands steal it). */
static json_t *arg(const json_t *step, const char *key)
{
    return json_incref(json_object_get(step, key));
}

/* How many records wait_records counts: notifications since the last line, or
 * subscription events since the connect. */
static size_t records(struct driver *d, int listen)
{
    return listen ? d->listen_total : json_array_size(d->notifications);
}

/* Waits until `count` records came, or timeout_ms passed: MCP_OK or MCP_ETIMEDOUT. */
static int wait_records(struct driver *d, int listen, size_t count, long long timeout_ms)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    uint64_t now;
    uv_mutex_lock(&d->lock);
    while (records(d, listen) < count && (now = uv_hrtime()) < deadline)
        uv_cond_timedwait(&d->notified, &d->lock, deadline - now);
    int status = records(d, listen) >= count ? MCP_OK : MCP_ETIMEDOUT;
    uv_mutex_unlock(&d->lock);
    return status;
}

static int listen_step(mcp_client *c, struct driver *d, const json_t *filter, json_t **result)
{
    const json_t *uris = json_object_get(filter, "resourceSubscriptions");
    const char *list[17] = {0};
    for (size_t i = 0; i < json_array_size(uris) && i < 16; i++)
        list[i] = json_string_value(json_array_get(uris, i));
    mcp_listen_filter f = {
        .size = sizeof(f),
        .tools_list_changed = json_is_true(json_object_get(filter, "toolsListChanged")),
        .prompts_list_changed = json_is_true(json_object_get(filter, "promptsListChanged")),
        .resources_list_changed = json_is_true(json_object_get(filter, "resourcesListChanged")),
        .resource_uris = uris != NULL ? list : NULL,
    };
    long long id = -1;
    int rc = mcp_client_listen(c, &f, on_listen, d, &id);
    if (rc == MCP_OK) {
        d->last_listen = id;
        *result = json_pack("{s:I}", "id", (json_int_t)id);
    }
    return rc;
}

/* Runs one step: the status, and the result in *result (or none). */
static int run_step(mcp_client *c, struct driver *d, const json_t *step, json_t **result,
                    mcp_rpc_error *err)
{
    const char *op = str(step, "op");
    const char *cursor = str(step, "cursor");
    if (op == NULL)
        return MCP_EINVAL;
    if (strcmp(op, "ping") == 0)
        return mcp_client_ping(c, 0);
    if (strcmp(op, "list_tools") == 0)
        return mcp_client_list_tools(c, cursor, result, err);
    if (strcmp(op, "list_resources") == 0)
        return mcp_client_list_resources(c, cursor, result, err);
    if (strcmp(op, "list_resource_templates") == 0)
        return mcp_client_list_resource_templates(c, cursor, result, err);
    if (strcmp(op, "list_prompts") == 0)
        return mcp_client_list_prompts(c, cursor, result, err);
    if (strcmp(op, "list_all") == 0)
        return mcp_client_list_all(c, str(step, "method"), str(step, "key"), result, err);
    if (strcmp(op, "call_tool") == 0)
        return mcp_client_call_tool(c, str(step, "name"), arg(step, "args"), NULL, result, err);
    if (strcmp(op, "read_resource") == 0)
        return mcp_client_read_resource(c, str(step, "uri"), result, err);
    if (strcmp(op, "get_prompt") == 0)
        return mcp_client_get_prompt(c, str(step, "name"), arg(step, "args"), result, err);
    if (strcmp(op, "wait_notifications") == 0)
        return wait_records(d, 0, (size_t)json_integer_value(json_object_get(step, "count")),
                            json_integer_value(json_object_get(step, "timeout_ms")));
    if (strcmp(op, "listen") == 0)
        return listen_step(c, d, json_object_get(step, "filter"), result);
    if (strcmp(op, "wait_listen") == 0)
        return wait_records(d, 1, (size_t)json_integer_value(json_object_get(step, "count")),
                            json_integer_value(json_object_get(step, "timeout_ms")));
    if (strcmp(op, "cancel_listen") == 0)
        return mcp_client_cancel(c, d->last_listen, "the script cancels it");
    return MCP_ENOENT;
}

static json_t *step_line(size_t i, const json_t *step, int status, json_t *result,
                         const mcp_rpc_error *err)
{
    json_t *line = json_pack("{s:I, s:O?, s:i}", "step", (json_int_t)i, "op",
                             json_object_get(step, "op"), "status", status);
    if (status != MCP_OK)
        json_object_set_new(line, "error", json_string(mcp_strerror(status)));
    if (result != NULL)
        json_object_set_new(line, "result", result);
    if (status == MCP_ERPC)
        json_object_set_new(line, "rpc_error",
                            json_pack("{s:i, s:s, s:O?}", "code", err->code, "message",
                                      err->message, "data", err->data));
    return line;
}

static int run(mcp_client *c, struct driver *d, const char *url, int http_sse,
               const char *const *argv, const json_t *script)
{
    int timeout_ms = (int)json_integer_value(json_object_get(script, "timeout_ms"));
    if (timeout_ms > 0)
        mcp_client_set_timeout(c, timeout_ms);
    /* The era: the script's "protocol" (mcp_client_set_protocol), legacy when absent. */
    const char *protocol = json_string_value(json_object_get(script, "protocol"));
    if (mcp_client_set_protocol(c, protocol != NULL ? protocol : "legacy") != MCP_OK) {
        fprintf(stderr, DRIVER ": unknown protocol %s\n", protocol);
        return 1;
    }
    if (d->sampling_answer != NULL)
        mcp_client_on_sampling(c, on_sampling, d);
    if (d->elicitation_answer != NULL)
        mcp_client_on_elicitation(c, on_elicitation, d);
    const json_t *roots = json_object_get(script, "roots");
    if (roots != NULL)
        mcp_client_set_roots(c, roots);
    mcp_client_on_notification(c, on_notification, d);

    mcp_http_client_opts opts = {.size = sizeof opts, .http_sse = http_sse};
    int rc = argv != NULL ? mcp_client_connect_stdio(c, argv, 0)
                          : mcp_client_connect_http(c, url, &opts, 0);
    json_t *line = json_pack("{s:i}", "connect", rc);
    if (rc != MCP_OK) {
        mcp_rpc_error err = {0};
        mcp_client_connect_error(c, &err);
        json_object_set_new(line, "error", json_string(mcp_strerror(rc)));
        json_object_set_new(line, "message", json_string(err.message));
        mcp_rpc_error_clear(&err);
        print_line(line);
        return 1;
    }
    json_object_set_new(line, "protocolVersion", json_string(mcp_client_protocol_version(c)));
    json_object_set_new(line, "serverInfo", json_deep_copy(mcp_client_server_info(c)));
    json_object_set_new(line, "capabilities", json_deep_copy(mcp_client_server_capabilities(c)));
    take_records(d, line);
    print_line(line);

    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(script, "steps"), i, step)
    {
        json_t *result = NULL;
        mcp_rpc_error err = {0};
        int status = run_step(c, d, step, &result, &err);
        line = step_line(i, step, status, result, &err);
        mcp_rpc_error_clear(&err);
        take_records(d, line);
        print_line(line);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int http_sse = argc == 3 && strcmp(argv[1], "--http-sse") == 0;
    int stdio = argc >= 3 && strcmp(argv[1], "--stdio") == 0;
    if (argc != 2 + http_sse && !stdio) {
        fprintf(stderr, "Usage: " DRIVER " [--http-sse] URL < script.json\n"
                        "       " DRIVER " --stdio CMD [ARGS...] < script.json\n");
        return 2;
    }
    json_error_t jerr;
    json_t *script = json_loadf(stdin, 0, &jerr);
    if (!json_is_object(script) || !json_is_array(json_object_get(script, "steps"))) {
        fprintf(stderr, DRIVER ": the script on stdin is not {\"steps\": [...], ...}: %s\n",
                script == NULL ? jerr.text : "wrong shape");
        json_decref(script);
        return 2;
    }
    struct driver d = {
        .sampling_answer = json_object_get(script, "sampling"),
        .elicitation_answer = json_object_get(script, "elicitation"),
        .sampling = json_array(),
        .elicitation = json_array(),
        .notifications = json_array(),
        .listen = json_array(),
        .last_listen = -1,
    };
    if (uv_mutex_init(&d.lock) != 0 || uv_cond_init(&d.notified) != 0) {
        fprintf(stderr, DRIVER ": cannot make a mutex\n");
        return 1;
    }
    int status = 1;
    mcp_client *c = mcp_client_new(DRIVER, MCP_VERSION_STRING);
    if (c != NULL) {
        status = run(c, &d, argv[argc - 1], http_sse, stdio ? (const char *const *)argv + 2 : NULL,
                     script);
        mcp_client_free(c);
    } else {
        fprintf(stderr, DRIVER ": out of memory\n");
    }
    uv_cond_destroy(&d.notified);
    uv_mutex_destroy(&d.lock);
    json_decref(d.sampling);
    json_decref(d.elicitation);
    json_decref(d.notifications);
    json_decref(d.listen);
    json_decref(script);
    return status;
}
