/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the tools and the prompt that revision 2026-07-28's conformance
 * scenarios call (Multi Round-Trip Requests, capabilities, logging, subscriptions,
 * custom headers). Each is one handler for both eras: mcp_ctx_ask waits for the
 * client in the legacy era and becomes an InputRequiredResult in the modern one (see
 * mcp/server.h). A question without an answer yet returns MCP_EINPUT; the handler
 * then returns NULL, and runs again when the client retries with its answer.
 */
#include <string.h>

#include "everything.h"
#include "log_flag.h"

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

/* The answers of a round, by key, or NULL while one is still to come. */
static json_t *ask(mcp_ctx *ctx, const char *key, const char *method, json_t *params, int *open)
{
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_ask(ctx, key, method, params, 0, &answer, &err);
    mcp_rpc_error_clear(&err);
    if (rc != MCP_OK)
        *open = rc == MCP_EINPUT ? 1 : -1;
    return answer;
}

static json_t *elicit_params(const char *message, const char *field)
{
    return json_pack("{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "message", message, "requestedSchema",
                     "type", "object", "properties", field, "type", "string", "required", field);
}

static json_t *sampling_params(const char *question)
{
    return json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user", "content",
                     "type", "text", "text", question, "maxTokens", 100);
}

/* The string content.<field> of an accepted elicitation, or NULL. */
static const char *accepted(const json_t *answer, const char *field)
{
    const char *action = json_string_value(json_object_get(answer, "action"));
    if (action == NULL || strcmp(action, "accept") != 0)
        return NULL;
    return json_string_value(json_object_get(json_object_get(answer, "content"), field));
}

static const char *sampled_text(const json_t *answer)
{
    const char *t = json_string_value(json_object_get(json_object_get(answer, "content"), "text"));
    return t != NULL ? t : "(no text)";
}

/* A question failed for a reason other than a missing answer. */
static json_t *cannot_ask(mcp_ctx *ctx)
{
    (void)ctx;
    return mcp_tool_error("the client cannot be asked (it did not declare the capability)");
}

static json_t *tool_mrtr_elicitation(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a = ask(ctx, "user_name", "elicitation/create",
                    elicit_params("What is your name?", "name"), &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    const char *name = accepted(a, "name");
    json_t *r = name ? text_resultf("Hello, %s!", name) : mcp_text_result("No name given.");
    json_decref(a);
    return r;
}

static json_t *tool_mrtr_sampling(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a = ask(ctx, "capital_question", "sampling/createMessage",
                    sampling_params("What is the capital of France?"), &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    json_t *r = text_resultf("The model said: %s", sampled_text(a));
    json_decref(a);
    return r;
}

static json_t *tool_mrtr_list_roots(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a = ask(ctx, "client_roots", "roots/list", NULL, &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    json_t *r =
        text_resultf("The client has %zu roots.", json_array_size(json_object_get(a, "roots")));
    json_decref(a);
    return r;
}

/* Keeps a state in the first round and checks it comes back with the answer. */
static json_t *tool_mrtr_request_state(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    const json_t *kept = mcp_ctx_round_state(ctx);
    if (kept == NULL)
        mcp_ctx_keep_state(ctx, json_pack("{s:s}", "step", "confirm"));
    int open = 0;
    json_t *a =
        ask(ctx, "confirm", "elicitation/create", elicit_params("Confirm to go on", "ok"), &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    json_decref(a);
    /* The legacy era has one round: the state is the handler's own variables there. */
    int ok = mcp_ctx_round(ctx) == 1 ||
             strcmp(json_string_value(json_object_get(kept, "step")) ?: "", "confirm") == 0;
    return ok ? mcp_text_result("state-ok: the state kept in round 1 came back")
              : mcp_tool_error("the state kept in round 1 did not come back");
}

/* Asks three questions at once: all of them go in one InputRequiredResult. */
static json_t *tool_mrtr_multiple(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open1 = 0, open2 = 0, open3 = 0;
    json_t *name = ask(ctx, "user_name", "elicitation/create",
                       elicit_params("What is your name?", "name"), &open1);
    json_t *greeting =
        ask(ctx, "greeting", "sampling/createMessage", sampling_params("Say hello"), &open2);
    json_t *roots = ask(ctx, "client_roots", "roots/list", NULL, &open3);
    json_t *r = NULL;
    if (open1 < 0 || open2 < 0 || open3 < 0)
        r = cannot_ask(ctx);
    else if (!open1 && !open2 && !open3)
        r = text_resultf("%s; the model said: %s; %zu roots", accepted(name, "name") ?: "no name",
                         sampled_text(greeting), json_array_size(json_object_get(roots, "roots")));
    json_decref(name);
    json_decref(greeting);
    json_decref(roots);
    return r;
}

/* Two rounds of questions, the second asked only once the first is answered. */
static json_t *tool_mrtr_multi_round(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a1 =
        ask(ctx, "step1", "elicitation/create", elicit_params("What is your name?", "name"), &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    json_t *a2 = ask(ctx, "step2", "elicitation/create",
                     elicit_params("What is your favourite color?", "color"), &open);
    json_t *r = NULL;
    if (open < 0)
        r = cannot_ask(ctx);
    else if (!open)
        r = text_resultf("%s likes %s", accepted(a1, "name") ?: "someone",
                         accepted(a2, "color") ?: "no color");
    json_decref(a1);
    json_decref(a2);
    return r;
}

/* Asks only what the client declared it can answer. */
static json_t *tool_mrtr_capabilities(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open1 = 0, open2 = 0, open3 = 0;
    json_t *e = ask(ctx, "user_name", "elicitation/create",
                    elicit_params("What is your name?", "name"), &open1);
    json_t *s =
        ask(ctx, "greeting", "sampling/createMessage", sampling_params("Say hello"), &open2);
    json_t *r = ask(ctx, "client_roots", "roots/list", NULL, &open3);
    int answered = (e != NULL) + (s != NULL) + (r != NULL);
    json_decref(e);
    json_decref(s);
    json_decref(r);
    if (open1 > 0 || open2 > 0 || open3 > 0)
        return NULL;
    if (answered == 0)
        return mcp_tool_error("the client declared none of elicitation, sampling and roots");
    return text_resultf("%d of the questions the client can answer were answered", answered);
}

static json_t *tool_missing_capability(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    if (mcp_ctx_require_capability(ctx, "sampling") != MCP_OK)
        return NULL; /* -32021 MissingRequiredClientCapability */
    int open = 0;
    json_t *a =
        ask(ctx, "completion", "sampling/createMessage", sampling_params("Say hello"), &open);
    if (open)
        return open > 0 ? NULL : cannot_ask(ctx);
    json_t *r = text_resultf("The model said: %s", sampled_text(a));
    json_decref(a);
    return r;
}

static json_t *tool_logging(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    /* Sent only where the request asked for logs (its _meta's logLevel in 2026-07-28). */
    mcp_ctx_logf(ctx, MCP_LOG_INFO, "the logging tool runs");
    mcp_ctx_logf(ctx, MCP_LOG_DEBUG, "a debug message");
    return mcp_text_result("logged");
}

static json_t *tool_trigger(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    const char *method = user;
    int rc = mcp_server_notify(mcp_ctx_server(ctx), method, NULL);
    return rc == MCP_OK ? text_resultf("sent %s", method)
                        : mcp_tool_error("cannot send %s: %s", method, mcp_strerror(rc));
}

static json_t *tool_custom_headers(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    const char *region = json_string_value(json_object_get(args, "region"));
    return text_resultf("region: %s", region ? region : "(none)");
}

static const mcp_tool_def tools[] = {
    {.name = "test_input_required_result_elicitation",
     .description = "Asks the user's name (elicitation under the key user_name) and greets them",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_elicitation,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_sampling",
     .description = "Asks the client's model a question (sampling) and returns its answer",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_sampling,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_list_roots",
     .description = "Asks the client for its roots and counts them",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_list_roots,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_request_state",
     .description = "Keeps a state across rounds and checks it comes back with the answer",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_request_state,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_multiple_inputs",
     .description = "Asks an elicitation, a sampling and the roots in one round",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_multiple,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_multi_round",
     .description = "Asks two questions in two rounds, the second once the first is answered",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_multi_round,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_tampered_state",
     .description = "Asks for a confirmation; its request state must come back unchanged",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_request_state,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_input_required_result_capabilities",
     .description = "Asks only what the client declared it can answer",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_capabilities,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_missing_capability",
     .description = "Needs sampling: refused with MissingRequiredClientCapability (-32021) when "
                    "the client did not declare it",
     .input_schema = NO_ARGS,
     .fn = tool_missing_capability,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_streaming_elicitation",
     .description = "Asks the user's name through the request's own answer, never as a "
                    "request of its own",
     .input_schema = NO_ARGS,
     .fn = tool_mrtr_elicitation,
     .flags = MCP_HANDLER_INLINE_MODERN},
    {.name = "test_logging_tool",
     .description = "Logs two messages, sent only to a client that asked for logs",
     .input_schema = NO_ARGS,
     .fn = tool_logging},
    {.name = "test_trigger_tool_change",
     .description = "Sends notifications/tools/list_changed to every listener",
     .input_schema = NO_ARGS,
     .fn = tool_trigger,
     .user = (void *)"notifications/tools/list_changed"},
    {.name = "test_trigger_prompt_change",
     .description = "Sends notifications/prompts/list_changed to every listener",
     .input_schema = NO_ARGS,
     .fn = tool_trigger,
     .user = (void *)"notifications/prompts/list_changed"},
    {.name = "test_custom_headers",
     .description = "Takes a region that travels as the Mcp-Param-Region header too "
                    "(x-mcp-header) and returns it",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\","
                     "\"description\":\"Where to run\"},"
                     "\"query\":{\"type\":\"string\",\"description\":\"What to run\"}},"
                     "\"required\":[\"region\"]}",
     .fn = tool_custom_headers},
};

int everything_add_modern_tools(mcp_server *srv)
{
    return everything_register_tools(srv, tools, sizeof tools / sizeof tools[0]);
}

static json_t *prompt_mrtr(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a = ask(ctx, "user_context", "elicitation/create",
                    elicit_params("What context should the prompt use?", "context"), &open);
    if (open) {
        if (open < 0)
            mcp_ctx_set_error(ctx, MCP_RPC_INVALID_REQUEST,
                              "the client cannot be asked for the context");
        return NULL;
    }
    const char *context = accepted(a, "context");
    json_t *r =
        json_pack("{s:[{s:s, s:{s:s, s:s+}}]}", "messages", "role", "user", "content", "type",
                  "text", "text", "Answer with this context: ", context ? context : "(none)");
    json_decref(a);
    return r;
}

int everything_add_modern_prompts(mcp_server *srv)
{
    mcp_prompt_def def = {
        .name = "test_input_required_result_prompt",
        .description = "Asks the user for context (elicitation) before it builds its message",
        .fn = prompt_mrtr,
    };
    int rc = mcp_server_add_prompt(srv, &def);
    if (rc != MCP_OK)
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot register the prompt %s: %s", def.name,
                 mcp_strerror(rc));
    return rc;
}
