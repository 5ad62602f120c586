/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the prompts (reference/conformance.md section 5.4).
 */
#include "everything.h"
#include "log_flag.h"

#include <stdio.h>
#include <stdlib.h>

/* Appends {"role":"user","content":content} (content stolen) to messages. */
static int append_user(json_t *messages, json_t *content)
{
    json_t *message = mcp_message("user", content);
    if (!message)
        return -1;
    return json_array_append_new(messages, message);
}

/*
 * Reads a required string argument. The library checks required arguments
 * before calling us; this keeps a missing one a precise -32602 regardless.
 */
static const char *required_arg(mcp_ctx *ctx, const json_t *args, const char *name)
{
    const char *value = json_string_value(json_object_get(args, name));
    if (!value)
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "missing required argument '%s'", name);
    return value;
}

static json_t *prompt_simple(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    json_t *messages = json_array();
    if (!messages ||
        append_user(messages, mcp_text_content("This is a simple prompt for testing.")) != 0) {
        json_decref(messages);
        return NULL;
    }
    return mcp_prompt_result(NULL, messages);
}

static json_t *prompt_with_arguments(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *arg1 = required_arg(ctx, args, "arg1");
    const char *arg2 = arg1 ? required_arg(ctx, args, "arg2") : NULL;
    if (!arg1 || !arg2)
        return NULL;

    int n = snprintf(NULL, 0, "Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!text)
        return NULL;
    snprintf(text, (size_t)n + 1, "Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2);
    json_t *messages = json_array();
    if (!messages || append_user(messages, mcp_text_content(text)) != 0) {
        free(text);
        json_decref(messages);
        return NULL;
    }
    free(text);
    return mcp_prompt_result(NULL, messages);
}

static json_t *prompt_with_embedded_resource(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *uri = required_arg(ctx, args, "resourceUri");
    if (!uri)
        return NULL;
    static const char embedded[] = "Embedded resource content for testing.";
    static const char request[] = "Please process the embedded resource above.";
    json_t *messages = json_array();
    if (!messages ||
        append_user(messages, mcp_embedded_text_content(uri, "text/plain", embedded)) != 0 ||
        append_user(messages, mcp_text_content(request)) != 0) {
        json_decref(messages);
        return NULL;
    }
    return mcp_prompt_result(NULL, messages);
}

static json_t *prompt_with_image(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)args, (void)user;
    json_t *messages = json_array();
    if (!messages ||
        append_user(messages, mcp_image_content(EVERYTHING_PNG_BASE64, "image/png")) != 0 ||
        append_user(messages, mcp_text_content("Please analyze the image above.")) != 0) {
        json_decref(messages);
        return NULL;
    }
    return mcp_prompt_result(NULL, messages);
}

static const mcp_prompt_arg arguments_args[] = {
    {.name = "arg1", .description = "First test argument", .required = 1},
    {.name = "arg2", .description = "Second test argument", .required = 1},
    {.name = NULL},
};

static const mcp_prompt_arg embedded_resource_args[] = {
    {.name = "resourceUri", .description = "URI of the resource to embed", .required = 1},
    {.name = NULL},
};

static const mcp_prompt_def prompts[] = {
    {.name = "test_simple_prompt",
     .title = "Simple Test Prompt",
     .description = "A simple prompt without arguments",
     .fn = prompt_simple,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_prompt_with_arguments",
     .title = "Prompt With Arguments",
     .description = "A prompt with required arguments",
     .args = arguments_args,
     .fn = prompt_with_arguments,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_prompt_with_embedded_resource",
     .title = "Prompt With Embedded Resource",
     .description = "A prompt that includes an embedded resource",
     .args = embedded_resource_args,
     .fn = prompt_with_embedded_resource,
     .flags = MCP_HANDLER_INLINE},
    {.name = "test_prompt_with_image",
     .title = "Prompt With Image",
     .description = "A prompt that includes image content",
     .fn = prompt_with_image,
     .flags = MCP_HANDLER_INLINE},
};

int everything_add_prompts(mcp_server *srv)
{
    for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++) {
        int rc = mcp_server_add_prompt(srv, &prompts[i]);
        if (rc != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot register the prompt %s: %s",
                     prompts[i].name, mcp_strerror(rc));
            return rc;
        }
    }
    return MCP_OK;
}
