/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the tools.
 *
 * The test_* tools and json_schema_2020_12_tool are what the conformance
 * suite calls (reference/conformance.md section 5.2); their names, schemas,
 * requests to the client and result texts are exact. The others (echo, add,
 * long_running, notify, ...) exist for the project's own tests and demos.
 *
 * Every tool that waits does so with mcp_ctx_sleep(), so a cancelled request
 * stops at once; whatever it returns then is dropped by the library.
 */
#include "everything.h"
#include "log_flag.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* The schema of a tool without arguments: it must accept no "arguments" too. */
#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

/*
 * How long a tool waits for the client to answer sampling or elicitation: a
 * person may be asked, so this is far longer than the library's 60 s default.
 */
#define HUMAN_TIMEOUT_MS (10 * 60 * 1000)

/* ---- Helpers ---- */

json_t *text_resultf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *text = malloc((size_t)n + 1);
    if (!text)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    json_t *result = mcp_text_result(text);
    free(text);
    return result;
}

/* Compact JSON text of v, "{}" for NULL; malloc'd, NULL on ENOMEM. */
static char *dump_compact(const json_t *v)
{
    if (!v) {
        json_t *empty = json_object();
        char *s = empty ? json_dumps(empty, JSON_COMPACT) : NULL;
        json_decref(empty);
        return s;
    }
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Appends item (stolen) to arr; -1 when item is NULL (an earlier ENOMEM). */
static int append(json_t *arr, json_t *item)
{
    if (!item)
        return -1;
    return json_array_append_new(arr, item);
}

/* A CallToolResult whose content is the one item given (stolen). */
static json_t *single_content_result(json_t *item)
{
    json_t *content = json_array();
    if (!content) {
        json_decref(item);
        return NULL;
    }
    if (append(content, item) != 0) {
        json_decref(content);
        return NULL;
    }
    return mcp_content_result(content);
}

/*
 * Reads the required string argument `name`. On failure returns -1 and sets
 * *err to the tool error to return.
 */
static int arg_string(const json_t *args, const char *name, const char **out, json_t **err)
{
    const json_t *v = json_object_get(args, name);
    if (!json_is_string(v)) {
        *err = mcp_tool_error(v ? "argument '%s' must be a string" : "argument '%s' is required",
                              name);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

/*
 * Reads the integer argument `name` in [min, max]; an absent or null value
 * gives def, or an error when required. On failure returns -1 and sets *err
 * to the tool error to return.
 */
static int arg_int(const json_t *args, const char *name, int required, long long def, long long min,
                   long long max, long long *out, json_t **err)
{
    const json_t *v = json_object_get(args, name);
    if (!v || json_is_null(v)) {
        if (required) {
            *err = mcp_tool_error("argument '%s' is required", name);
            return -1;
        }
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        *err = mcp_tool_error("argument '%s' must be an integer from %lld to %lld", name, min, max);
        return -1;
    }
    *out = (long long)json_integer_value(v);
    return 0;
}

/* What a tool returns once cancelled; the library drops it unread. */
static json_t *cancelled_result(void)
{
    return mcp_tool_error("The request was cancelled.");
}

/* Sends notifications/message for this request with a string as data. */
static void log_text(mcp_ctx *ctx, mcp_log_level level, const char *text)
{
    json_t *data = json_string(text);
    /* A log line lost to ENOMEM or a closed session is not the tool's failure. */
    if (data)
        (void)mcp_ctx_log(ctx, level, NULL, data);
}

/* The tool error for a failed request to the client (sampling, elicitation, roots). */
static json_t *client_request_error(const char *method, int rc, mcp_rpc_error *err)
{
    json_t *result;
    if (rc == MCP_ERPC)
        result =
            mcp_tool_error("%s failed: %s (JSON-RPC error %d)", method, err->message, err->code);
    else
        result = mcp_tool_error("%s failed: %s", method, mcp_strerror(rc));
    mcp_rpc_error_clear(err);
    return result;
}

/* ---- The conformance suite's tools ---- */

static json_t *tool_simple_text(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return mcp_text_result("This is a simple text response for testing.");
}

static json_t *tool_image_content(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return single_content_result(mcp_image_content(EVERYTHING_PNG_BASE64, "image/png"));
}

static json_t *tool_audio_content(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return single_content_result(mcp_audio_content(EVERYTHING_WAV_BASE64, "audio/wav"));
}

static json_t *tool_embedded_resource(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    return single_content_result(mcp_embedded_text_content(
        "test://embedded-resource", "text/plain", "This is an embedded resource content."));
}

static json_t *tool_multiple_content_types(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    json_t *content = json_array();
    if (!content)
        return NULL;
    if (append(content, mcp_text_content("Multiple content types test:")) != 0 ||
        append(content, mcp_image_content(EVERYTHING_PNG_BASE64, "image/png")) != 0 ||
        append(content,
               mcp_embedded_text_content("test://mixed-content-resource", "application/json",
                                         "{\"test\":\"data\",\"value\":123}")) != 0) {
        json_decref(content);
        return NULL;
    }
    return mcp_content_result(content);
}

static json_t *tool_with_logging(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    static const char *const lines[] = {"Tool execution started", "Tool processing data",
                                        "Tool execution completed"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        if (i > 0 && mcp_ctx_sleep(ctx, 50) != MCP_OK)
            return cancelled_result();
        log_text(ctx, MCP_LOG_INFO, lines[i]);
    }
    return mcp_text_result("Tool with logging executed successfully");
}

static json_t *tool_with_progress(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    for (int progress = 0; progress <= 100; progress += 50) {
        if (progress > 0 && mcp_ctx_sleep(ctx, 50) != MCP_OK)
            return cancelled_result();
        char message[64];
        snprintf(message, sizeof message, "Completed step %d of 100", progress);
        /* Without a progressToken this sends nothing, which is what the spec wants. */
        (void)mcp_ctx_progress(ctx, progress, 100, message);
    }

    /* Like the reference server, answer with the token as text ("0" without one). */
    const json_t *token = json_object_get(mcp_ctx_meta(ctx), "progressToken");
    if (json_is_string(token))
        return mcp_text_result(json_string_value(token));
    if (!token)
        return mcp_text_result("0");
    char *text = dump_compact(token);
    json_t *result = text ? mcp_text_result(text) : NULL;
    free(text);
    return result;
}

static json_t *tool_error_handling(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    /* A result with isError, not a JSON-RPC error: that is what tools-call-error checks. */
    return mcp_tool_error("This tool intentionally returns an error for testing");
}

static json_t *tool_reconnection(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    /* SEP-1699: close this request's SSE stream; the client comes back with GET and
     * Last-Event-ID and gets the result, stored meanwhile (with --json-response the call is
     * then answered as an SSE stream). Where the stream cannot be closed (stdio,
     * --stateless, older clients) the result simply follows. */
    mcp_ctx_close_sse_stream(ctx, -1);
    if (mcp_ctx_sleep(ctx, 100) != MCP_OK)
        return cancelled_result();
    return mcp_text_result("Reconnection test completed successfully. If you received this, "
                           "the client properly reconnected after stream closure.");
}

/* The text of a CreateMessageResult's content: one block, or the first text of an array. */
static const char *sampled_text(const json_t *result)
{
    const json_t *content = json_object_get(result, "content");
    if (json_is_array(content)) {
        size_t i;
        const json_t *block;
        json_array_foreach(content, i, block)
        {
            if (json_is_string(json_object_get(block, "text")))
                return json_string_value(json_object_get(block, "text"));
        }
        return NULL;
    }
    return json_string_value(json_object_get(content, "text"));
}

static json_t *tool_sampling(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *prompt;
    json_t *err_result = NULL;
    if (arg_string(args, "prompt", &prompt, &err_result) != 0)
        return err_result;

    json_t *params = json_pack("{s:[{s:s,s:{s:s,s:s}}],s:i}", "messages", "role", "user", "content",
                               "type", "text", "text", prompt, "maxTokens", 100);
    if (!params)
        return NULL;
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_create_message(ctx, params, HUMAN_TIMEOUT_MS, &answer, &err);
    if (rc != MCP_OK)
        return client_request_error("sampling/createMessage", rc, &err);

    const char *text = sampled_text(answer);
    json_t *result = text_resultf("LLM response: %s", text ? text : "No response");
    json_decref(answer);
    return result;
}

/*
 * Sends elicitation/create with params (stolen) and reports the answer as
 * "<prefix>: action=<action>, content=<json>".
 */
static json_t *elicit_and_report(mcp_ctx *ctx, json_t *params, const char *prefix)
{
    if (!params)
        return NULL;
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_elicit(ctx, params, HUMAN_TIMEOUT_MS, &answer, &err);
    if (rc != MCP_OK)
        return client_request_error("elicitation/create", rc, &err);

    const char *action = json_string_value(json_object_get(answer, "action"));
    char *content = dump_compact(json_object_get(answer, "content"));
    json_t *result = content ? text_resultf("%s: action=%s, content=%s", prefix,
                                            action ? action : "(none)", content)
                             : NULL;
    free(content);
    json_decref(answer);
    return result;
}

static json_t *tool_elicitation(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *message;
    json_t *err_result = NULL;
    if (arg_string(args, "message", &message, &err_result) != 0)
        return err_result;

    json_t *params =
        json_pack("{s:s,s:{s:s,s:{s:{s:s,s:s},s:{s:s,s:s}},s:[s,s]}}", "message", message,
                  "requestedSchema", "type", "object", "properties", "username", "type", "string",
                  "description", "User's response", "email", "type", "string", "description",
                  "User's email address", "required", "username", "email");
    return elicit_and_report(ctx, params, "User response");
}

/* SEP-1034: a default for each primitive type; the suite checks types and values. */
static const char sep1034_params[] =
    "{\"message\":\"Please review and update the form fields with defaults\","
    "\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\","
    "\"default\":true}},"
    "\"required\":[]}}";

/* SEP-1330: the five enum variants, each without the keys of the others. */
static const char sep1330_params[] =
    "{\"message\":\"Please select options from the enum fields\","
    "\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Select one option\","
    "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\",\"description\":\"Select one option with titles\","
    "\"oneOf\":[{\"const\":\"value1\",\"title\":\"First Option\"},"
    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
    "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Select one option (legacy)\","
    "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
    "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options\","
    "\"minItems\":1,\"maxItems\":3,"
    "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options with titles\","
    "\"minItems\":1,\"maxItems\":3,"
    "\"items\":{\"anyOf\":[{\"const\":\"value1\",\"title\":\"First Choice\"},"
    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
    "\"required\":[]}}";

static json_t *tool_elicitation_sep1034(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    return elicit_and_report(ctx, json_loads(sep1034_params, 0, NULL), "Elicitation completed");
}

static json_t *tool_elicitation_sep1330(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    return elicit_and_report(ctx, json_loads(sep1330_params, 0, NULL), "Elicitation completed");
}

/* SEP-1613: tools/list must show this schema verbatim ($schema, $defs, additionalProperties). */
static const char json_schema_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\","
    "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{"
    "\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
    "\"properties\":{\"name\":{\"type\":\"string\"},"
    "\"address\":{\"$ref\":\"#/$defs/address\"},"
    "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
    "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
    "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
    "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
    "\"required\":[\"contactMethod\"]},"
    "\"then\":{\"required\":[\"phone\"]},"
    "\"else\":{\"required\":[\"email\"]},"
    "\"additionalProperties\":false}";

static json_t *tool_json_schema_2020_12(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    char *text = dump_compact(args);
    json_t *result = text ? text_resultf("JSON Schema 2020-12 tool called with: %s", text) : NULL;
    free(text);
    return result;
}

/* ---- Tools for our own tests and demos ---- */

static json_t *tool_echo(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    const char *text;
    json_t *err_result = NULL;
    if (arg_string(args, "text", &text, &err_result) != 0)
        return err_result;
    return mcp_text_result(text);
}

/* Tells this session, outside the request (on its GET stream), that the URL-mode
 * elicitation elicitationId is complete: what a server does once the user finished at
 * the URL. Whichever node of a deployment runs it, the notification reaches the node
 * that holds the session's GET stream. */
static json_t *tool_complete_elicitation(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *id;
    json_t *err_result = NULL;
    if (arg_string(args, "elicitationId", &id, &err_result) != 0)
        return err_result;
    const char *session = mcp_ctx_session_id(ctx);
    if (session == NULL)
        return mcp_tool_error("this request has no session to notify (stdio, or stateless)");
    int rc = mcp_server_notify_session(mcp_ctx_server(ctx), session,
                                       "notifications/elicitation/complete",
                                       json_pack("{s:s}", "elicitationId", id));
    return rc == MCP_OK ? mcp_text_result("notified")
                        : mcp_tool_error("the notification could not be sent (%d)", rc);
}

/* Asks the client to open a URL (URL-mode elicitation, with an elicitationId of its
 * own) and says what the user did: "action=accept", say. A client that did not declare
 * URL mode is not asked, nor one of revision 2026-07-28 (no requests from the server). */
static json_t *tool_url_elicitation(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    static atomic_uint seq;
    const char *url, *message = json_string_value(json_object_get(args, "message"));
    json_t *err_result = NULL;
    if (arg_string(args, "url", &url, &err_result) != 0)
        return err_result;
    char id[32];
    snprintf(id, sizeof(id), "everything-%u", atomic_fetch_add(&seq, 1) + 1);
    json_t *params = json_pack("{s:s, s:s, s:s, s:s}", "mode", "url", "url", url, "elicitationId",
                               id, "message", message != NULL ? message : "Please open this page");
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc =
        params != NULL ? mcp_ctx_elicit(ctx, params, HUMAN_TIMEOUT_MS, &answer, &err) : MCP_ENOMEM;
    if (rc == MCP_ENOTSUP)
        return mcp_text_result("URL-mode elicitation cannot be asked here: the client did not "
                               "declare it, or this is revision 2026-07-28");
    if (rc != MCP_OK)
        return client_request_error("elicitation/create", rc, &err);
    const char *action = json_string_value(json_object_get(answer, "action"));
    json_t *result = text_resultf("action=%s", action != NULL ? action : "(none)");
    json_decref(answer);
    return result;
}

/* The request's W3C trace context, as the server read it from _meta (members left out
 * where it had none, or none of the W3C form). */
static json_t *tool_trace_context(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const char *tp = mcp_ctx_traceparent(ctx), *ts = mcp_ctx_tracestate(ctx),
               *bg = mcp_ctx_baggage(ctx);
    if (tp == NULL)
        return mcp_text_result("no trace context");
    json_t *r = mcp_text_result(tp);
    json_t *sc = json_pack("{s:s}", "traceparent", tp);
    if (ts != NULL)
        json_object_set_new(sc, "tracestate", json_string(ts));
    if (bg != NULL)
        json_object_set_new(sc, "baggage", json_string(bg));
    json_object_set_new(r, "structuredContent", sc);
    return r;
}

static json_t *tool_add(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    const json_t *a = json_object_get(args, "a");
    const json_t *b = json_object_get(args, "b");
    if (!json_is_number(a) || !json_is_number(b))
        return mcp_tool_error("arguments 'a' and 'b' are required and must be numbers");

    json_t *sum;
    long long x = json_is_integer(a) ? (long long)json_integer_value(a) : 0;
    long long y = json_is_integer(b) ? (long long)json_integer_value(b) : 0;
    /* Integers stay integers (3, not 3.0) unless the sum would overflow. */
    if (json_is_integer(a) && json_is_integer(b) &&
        !((y > 0 && x > LLONG_MAX - y) || (y < 0 && x < LLONG_MIN - y))) {
        sum = json_integer(x + y);
    } else {
        double s = json_number_value(a) + json_number_value(b);
        if (!isfinite(s))
            return mcp_tool_error("the sum is out of range");
        sum = json_real(s);
    }
    if (!sum)
        return NULL;
    json_t *structured = json_object();
    if (!structured || json_object_set_new(structured, "sum", sum) != 0) {
        json_decref(structured);
        return NULL;
    }
    return mcp_structured_result(structured);
}

static json_t *tool_long_running(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    long long steps, delay_ms;
    json_t *err_result = NULL;
    if (arg_int(args, "steps", 0, 5, 0, 10000, &steps, &err_result) != 0 ||
        arg_int(args, "delay_ms", 0, 100, 0, 60000, &delay_ms, &err_result) != 0)
        return err_result;

    for (long long i = 1; i <= steps; i++) {
        if (mcp_ctx_sleep(ctx, (int)delay_ms) != MCP_OK)
            return cancelled_result();
        char message[48];
        snprintf(message, sizeof message, "step %lld", i);
        (void)mcp_ctx_progress(ctx, (double)i, (double)steps, message);
    }
    return text_resultf("completed %lld steps", steps);
}

static json_t *tool_notify(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    long long count, delay_ms;
    json_t *err_result = NULL;
    if (arg_int(args, "count", 1, 0, 0, 10000, &count, &err_result) != 0 ||
        arg_int(args, "delay_ms", 0, 0, 0, 60000, &delay_ms, &err_result) != 0)
        return err_result;

    for (long long i = 1; i <= count; i++) {
        if (i > 1 && delay_ms > 0 && mcp_ctx_sleep(ctx, (int)delay_ms) != MCP_OK)
            return cancelled_result();
        if (mcp_ctx_is_cancelled(ctx))
            return cancelled_result(); /* e.g. its client stayed away too long */
        char text[48];
        snprintf(text, sizeof text, "notification %lld", i);
        log_text(ctx, MCP_LOG_INFO, text);
    }
    return text_resultf("sent %lld", count);
}

/*
 * SEP-1699 polling for tests and demos: count notifications, delay_ms apart; after
 * close_after of them the tool closes its own stream (retry_ms tells the client when
 * to come back), goes on, and the rest are stored and replayed on the resume.
 */
static json_t *tool_poll_notify(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    long long count, delay_ms, close_after, retry_ms;
    json_t *err_result = NULL;
    if (arg_int(args, "count", 1, 0, 0, 100000, &count, &err_result) != 0 ||
        arg_int(args, "delay_ms", 0, 10, 0, 60000, &delay_ms, &err_result) != 0 ||
        arg_int(args, "close_after", 0, 1, 0, 100000, &close_after, &err_result) != 0 ||
        arg_int(args, "retry_ms", 0, -1, -1, 60000, &retry_ms, &err_result) != 0)
        return err_result;
    const json_t *close_at = json_object_get(args, "close_at");
    if (close_at != NULL && !json_is_array(close_at))
        return mcp_tool_error("argument 'close_at' must be an array of integers");
    long long closed = 0;
    for (long long i = 1; i <= count; i++) {
        if (i > 1 && delay_ms > 0 && mcp_ctx_sleep(ctx, (int)delay_ms) != MCP_OK)
            return cancelled_result();
        if (mcp_ctx_is_cancelled(ctx))
            return cancelled_result(); /* e.g. its client stayed away too long */
        char text[48];
        snprintf(text, sizeof text, "notification %lld", i);
        log_text(ctx, MCP_LOG_INFO, text);
        int close_now = i == close_after;
        size_t k;
        const json_t *at;
        json_array_foreach(close_at, k, at) close_now |= json_integer_value(at) == i;
        if (close_now) {
            int rc = mcp_ctx_close_sse_stream(ctx, (int)retry_ms);
            if (rc != MCP_OK)
                return mcp_tool_error("cannot close the stream: %s", mcp_strerror(rc));
            closed++;
        }
    }
    if (closed == 0)
        return text_resultf("sent %lld", count);
    return text_resultf("sent %lld, closed the stream %s", count,
                        closed == 1   ? "once"
                        : closed == 2 ? "twice"
                                      : "several times");
}

static json_t *tool_list_roots(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_list_roots(ctx, 0, &answer, &err);
    if (rc != MCP_OK)
        return client_request_error("roots/list", rc, &err);
    return mcp_structured_result(answer);
}

static json_t *tool_trigger_resource_update(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *uri;
    json_t *err_result = NULL;
    if (arg_string(args, "uri", &uri, &err_result) != 0)
        return err_result;
    int rc = mcp_server_notify_resource_updated(mcp_ctx_server(ctx), uri);
    if (rc != MCP_OK)
        return mcp_tool_error("cannot notify the update of %s: %s", uri, mcp_strerror(rc));
    return mcp_text_result("updated");
}

static json_t *tool_log_all_levels(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    for (int level = MCP_LOG_DEBUG; level <= MCP_LOG_EMERGENCY; level++)
        log_text(ctx, (mcp_log_level)level, mcp_log_level_name((mcp_log_level)level));
    return mcp_text_result("logged");
}

static json_t *tool_slow_echo(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *text;
    long long delay_ms;
    json_t *err_result = NULL;
    if (arg_string(args, "text", &text, &err_result) != 0 ||
        arg_int(args, "delay_ms", 0, 100, 0, 60000, &delay_ms, &err_result) != 0)
        return err_result;
    if (mcp_ctx_sleep(ctx, (int)delay_ms) != MCP_OK)
        return cancelled_result();
    return mcp_text_result(text);
}

static json_t *tool_ping_client(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    /* The spec: either side may ping; the answer must be an empty result. */
    int rc = mcp_ctx_request(ctx, "ping", NULL, 0, &answer, &err);
    if (rc != MCP_OK)
        return client_request_error("ping", rc, &err);
    int empty = json_is_object(answer) && json_object_size(answer) == 0;
    json_decref(answer);
    return empty ? mcp_text_result("pong")
                 : mcp_tool_error("the client answered ping with a "
                                  "non-empty result");
}

/* ---- The table ---- */

/*
 * Tools that only build a constant result run inline on the loop; everything
 * that sleeps or waits for the client runs on a worker (the default).
 */
static const mcp_tool_def tools[] = {
    {.name = "test_simple_text",
     .description = "Tests simple text content response",
     .input_schema = NO_ARGS,
     .fn = tool_simple_text,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_image_content",
     .description = "Tests image content response",
     .input_schema = NO_ARGS,
     .fn = tool_image_content,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_audio_content",
     .description = "Tests audio content response",
     .input_schema = NO_ARGS,
     .fn = tool_audio_content,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_embedded_resource",
     .description = "Tests embedded resource content response",
     .input_schema = NO_ARGS,
     .fn = tool_embedded_resource,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_multiple_content_types",
     .description = "Tests response with multiple content types (text, image, resource)",
     .input_schema = NO_ARGS,
     .fn = tool_multiple_content_types,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_tool_with_logging",
     .description = "Tests tool that emits log messages during execution",
     .input_schema = NO_ARGS,
     .fn = tool_with_logging},
    {.name = "test_tool_with_progress",
     .description = "Tests tool that reports progress notifications",
     .input_schema = NO_ARGS,
     .fn = tool_with_progress},
    {.name = "test_error_handling",
     .description = "Tests error response handling",
     .input_schema = NO_ARGS,
     .fn = tool_error_handling,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_reconnection",
     .description = "Tests SSE stream disconnection and client reconnection (SEP-1699). Server "
                    "will close the stream mid-call and send the result after client reconnects.",
     .input_schema = NO_ARGS,
     .fn = tool_reconnection},
    {.name = "test_sampling",
     .description = "Tests server-initiated sampling (LLM completion request)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\","
                     "\"description\":\"The prompt to send to the LLM\"}},"
                     "\"required\":[\"prompt\"]}",
     .fn = tool_sampling},
    {.name = "test_elicitation",
     .description = "Tests server-initiated elicitation (user input request)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
                     "\"description\":\"The message to show the user\"}},"
                     "\"required\":[\"message\"]}",
     .fn = tool_elicitation},
    {.name = "test_elicitation_sep1034_defaults",
     .description = "Tests elicitation with default values per SEP-1034",
     .input_schema = NO_ARGS,
     .fn = tool_elicitation_sep1034},
    {.name = "test_elicitation_sep1330_enums",
     .description = "Tests elicitation with enum schema improvements per SEP-1330",
     .input_schema = NO_ARGS,
     .fn = tool_elicitation_sep1330},
    {.name = "json_schema_2020_12_tool",
     .description = "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
     .input_schema = json_schema_2020_12,
     .fn = tool_json_schema_2020_12,
     .flags = MCP_HANDLER_INLINE},

    {.name = "echo",
     .description = "Returns the given text unchanged",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
                     "\"description\":\"The text to send back\"}},"
                     "\"required\":[\"text\"]}",
     .fn = tool_echo,
     .flags = MCP_HANDLER_INLINE},
    {.name = "complete_elicitation",
     .description = "Notifies this session, outside the request, that the URL-mode "
                    "elicitation elicitationId is complete (notifications/elicitation/complete)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"elicitationId\":{\"type\":"
                     "\"string\"}},\"required\":[\"elicitationId\"]}",
     .fn = tool_complete_elicitation,
     .flags = MCP_HANDLER_INLINE},
    {.name = "url_elicitation",
     .description = "Asks the client to open url (URL-mode elicitation) and says what the user "
                    "did (action=accept, decline or cancel)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},"
                     "\"message\":{\"type\":\"string\"}},\"required\":[\"url\"]}",
     .fn = tool_url_elicitation},
    {.name = "trace_context",
     .description = "Returns the W3C trace context (traceparent, tracestate, baggage) the "
                    "request carried in _meta",
     .input_schema = NO_ARGS,
     .fn = tool_trace_context,
     .flags = MCP_HANDLER_INLINE},
    {.name = "add",
     .title = "Add two numbers",
     .description = "Adds two numbers and returns their sum as structured content",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"a\":{\"type\":\"number\",\"description\":\"The first addend\"},"
                     "\"b\":{\"type\":\"number\",\"description\":\"The second addend\"}},"
                     "\"required\":[\"a\",\"b\"]}",
     .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},"
                      "\"required\":[\"sum\"]}",
     .annotations = "{\"readOnlyHint\":true,\"idempotentHint\":true}",
     .fn = tool_add,
     .flags = MCP_HANDLER_INLINE},
    {.name = "long_running",
     .description = "Takes the given number of steps, waiting before each and reporting "
                    "progress after it; stops early when cancelled",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"steps\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10000,"
                     "\"default\":5,\"description\":\"How many steps to take\"},"
                     "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000,"
                     "\"default\":100,\"description\":\"Milliseconds to wait before each step\"}}}",
     .fn = tool_long_running},
    {.name = "notify",
     .description = "Sends the given number of info-level log notifications related to the "
                    "request, then returns",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"count\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10000,"
                     "\"description\":\"How many notifications to send\"},"
                     "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000,"
                     "\"default\":0,\"description\":\"Milliseconds between notifications\"}},"
                     "\"required\":[\"count\"]}",
     .fn = tool_notify},
    {.name = "list_roots",
     .description = "Asks the client for its roots (roots/list) and returns its answer",
     .input_schema = NO_ARGS,
     .fn = tool_list_roots},
    {.name = "trigger_resource_update",
     .description = "Sends notifications/resources/updated for the URI to the sessions "
                    "subscribed to it",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"uri\":{\"type\":\"string\","
                     "\"description\":\"The URI of the updated resource\"}},"
                     "\"required\":[\"uri\"]}",
     .fn = tool_trigger_resource_update},
    {.name = "log_all_levels",
     .description = "Sends one log notification at each of the eight levels, debug to "
                    "emergency, with the level's name as data",
     .input_schema = NO_ARGS,
     .fn = tool_log_all_levels},
    {.name = "poll_notify",
     .description = "Sends count info-level log notifications delay_ms apart and closes its "
                    "own SSE stream after close_after of them (SEP-1699 polling); the client "
                    "resumes and gets the rest",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"count\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000},"
                     "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000,"
                     "\"default\":10},"
                     "\"close_after\":{\"type\":\"integer\",\"minimum\":0,\"default\":1},"
                     "\"retry_ms\":{\"type\":\"integer\",\"minimum\":-1,\"maximum\":60000,"
                     "\"default\":-1,\"description\":\"-1: the server's retry interval\"},"
                     "\"close_at\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
                     "\"description\":\"more notification numbers after which to close\"}},"
                     "\"required\":[\"count\"]}",
     .fn = tool_poll_notify},
    {.name = "ping_client",
     .description = "Pings the client (a server-to-client ping) and returns \"pong\" when it "
                    "answers",
     .input_schema = NO_ARGS,
     .fn = tool_ping_client},
    {.name = "slow_echo",
     .description = "Waits, then returns the given text unchanged",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"text\":{\"type\":\"string\",\"description\":\"The text to send back\"},"
                     "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000,"
                     "\"default\":100,\"description\":\"Milliseconds to wait first\"}},"
                     "\"required\":[\"text\"]}",
     .fn = tool_slow_echo},
};

int everything_register_tools(mcp_server *srv, const mcp_tool_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = mcp_server_add_tool_def(srv, &defs[i]);
        if (rc != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot register the tool %s: %s",
                     defs[i].name, mcp_strerror(rc));
            return rc;
        }
    }
    return MCP_OK;
}

int everything_add_tools(mcp_server *srv)
{
    return everything_register_tools(srv, tools, sizeof tools / sizeof tools[0]);
}
