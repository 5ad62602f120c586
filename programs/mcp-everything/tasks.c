/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the tools of the tasks extension (io.modelcontextprotocol/tasks) that the
 * conformance suite's 2026-07-28 scenarios call, with its names, arguments and texts:
 * greet runs at once; slow_compute runs as a task for a client that declared the
 * extension (and at once for one that did not); failing_job and protocol_error_job run
 * only as tasks; confirm_delete and multi_input ask the client from inside their task;
 * test_tool_with_task asks its question in a Multi Round-Trip round first and becomes a
 * task once it has the answer.
 */
#include <string.h>

#include "everything.h"

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

static json_t *tool_greet(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    const char *name = json_string_value(json_object_get(args, "name"));
    return text_resultf("Hello, %s!", name != NULL ? name : "World");
}

/* Sleeps in steps, so that a cancelled task ends at once. */
static json_t *tool_slow_compute(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    json_int_t seconds = json_integer_value(json_object_get(args, "seconds"));
    const char *label = json_string_value(json_object_get(args, "label"));
    if (mcp_ctx_sleep(ctx, (int)seconds * 1000) != MCP_OK) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "cancelled");
        return NULL;
    }
    return text_resultf("Computed %s in %d s", label != NULL ? label : "the result", (int)seconds);
}

static json_t *tool_failing_job(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    if (mcp_ctx_sleep(ctx, 1000) != MCP_OK)
        return NULL;
    return mcp_tool_error("The job failed: the input could not be processed");
}

static json_t *tool_protocol_error_job(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "Internal error: the job crashed");
    return NULL;
}

static json_t *confirm_params(const char *message, const char *field, const char *type)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "mode", "form", "message", message,
                     "requestedSchema", "type", "object", "properties", field, "type", type,
                     "required", field);
}

/* The answer to key, or NULL with *open set: 1 while it is still to come, -1 when the
 * client cannot be asked. */
static json_t *ask(mcp_ctx *ctx, const char *key, json_t *params, int *open)
{
    json_t *answer = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_ctx_ask(ctx, key, "elicitation/create", params, 0, &answer, &err);
    mcp_rpc_error_clear(&err);
    if (rc != MCP_OK && *open >= 0)
        *open = rc == MCP_EINPUT ? 1 : -1;
    return answer;
}

static int accepted(const json_t *answer)
{
    const char *action = json_string_value(json_object_get(answer, "action"));
    return action != NULL && strcmp(action, "accept") == 0;
}

static json_t *tool_confirm_delete(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *file = json_string_value(json_object_get(args, "filename"));
    int open = 0;
    char message[512];
    snprintf(message, sizeof message, "Delete %.400s?", file);
    json_t *a = ask(ctx, "confirm", confirm_params(message, "confirm", "boolean"), &open);
    if (open)
        return open > 0 ? NULL : mcp_tool_error("the client cannot be asked to confirm");
    json_t *r = accepted(a) ? text_resultf("Deleted %s", file) : text_resultf("Kept %s", file);
    json_decref(a);
    return r;
}

/* Two questions at once: both are outstanding until each has its answer. */
static json_t *tool_multi_input(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *name = ask(ctx, "name", confirm_params("Your name?", "name", "string"), &open);
    json_t *ok = ask(ctx, "confirm", confirm_params("Go on?", "confirm", "boolean"), &open);
    json_t *r = NULL;
    if (open < 0)
        r = mcp_tool_error("the client cannot be asked");
    else if (open == 0)
        r = text_resultf("Got both answers (%s, %s)", accepted(name) ? "name" : "no name",
                         accepted(ok) ? "confirmed" : "not confirmed");
    json_decref(name);
    json_decref(ok);
    return r;
}

/* A round of Multi Round-Trip Requests, then a task with the answer. */
static json_t *tool_with_task(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args, (void)user;
    int open = 0;
    json_t *a =
        ask(ctx, "user_name", confirm_params("What is your name?", "name", "string"), &open);
    if (open)
        return open > 0 ? NULL : mcp_tool_error("the client cannot be asked for a name");
    const char *name = json_string_value(json_object_get(json_object_get(a, "content"), "name"));
    char who[256];
    snprintf(who, sizeof who, "%.200s", accepted(a) && name != NULL ? name : "stranger");
    json_decref(a);
    /* A client without the extension gets the answer at once. */
    int rc = mcp_ctx_start_task(ctx);
    if (rc != MCP_OK && rc != MCP_ENOTSUP) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "cannot start the task: %s",
                          mcp_strerror(rc));
        return NULL;
    }
    if (mcp_ctx_sleep(ctx, 200) != MCP_OK)
        return NULL;
    return text_resultf("Hello, %s! (from a task)", who);
}

static const mcp_tool_def tools[] = {
    {.name = "greet",
     .description = "Greets by name, at once",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
                     "\"required\":[\"name\"]}",
     .fn = tool_greet},
    {.name = "slow_compute",
     .description = "Waits the given seconds, then returns; a task for a client that declared "
                    "the tasks extension",
     .input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"seconds\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600},"
                     "\"label\":{\"type\":\"string\"}},\"required\":[\"seconds\"]}",
     .fn = tool_slow_compute,
     .flags = MCP_TOOL_TASK_OPTIONAL},
    {.name = "failing_job",
     .description = "A task that ends with a tool error (isError) after a second",
     .input_schema = NO_ARGS,
     .fn = tool_failing_job,
     .flags = MCP_TOOL_TASK_REQUIRED},
    {.name = "protocol_error_job",
     .description = "A task that ends with a JSON-RPC error (-32603)",
     .input_schema = NO_ARGS,
     .fn = tool_protocol_error_job,
     .flags = MCP_TOOL_TASK_REQUIRED},
    {.name = "confirm_delete",
     .description = "A task that asks the user to confirm (elicitation), then answers",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\"}},"
                     "\"required\":[\"filename\"]}",
     .fn = tool_confirm_delete,
     .flags = MCP_TOOL_TASK_OPTIONAL},
    {.name = "multi_input",
     .description = "A task that asks two questions at once",
     .input_schema = NO_ARGS,
     .fn = tool_multi_input,
     .flags = MCP_TOOL_TASK_OPTIONAL},
    {.name = "test_tool_with_task",
     .description = "Asks the user's name (a Multi Round-Trip round), then greets them from a "
                    "task",
     .input_schema = NO_ARGS,
     .fn = tool_with_task},
};

int everything_add_task_tools(mcp_server *srv)
{
    return everything_register_tools(srv, tools, sizeof tools / sizeof tools[0]);
}
