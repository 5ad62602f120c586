/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: completion/complete.
 *
 * The conformance suite only checks that completion.values is an array; we
 * offer small fixed candidate lists, filtered by the typed prefix, so that
 * clients and our own tests have something real to complete.
 */
#include "everything.h"
#include "log_flag.h"

#include <stdio.h>
#include <string.h>

static const char *const prompt_values[] = {"test", "testing", "tested", "other", NULL};
static const char *const template_id_values[] = {"1", "2", "3", "123", NULL};

/* The candidates that start with prefix, as a new JSON array (NULL on ENOMEM). */
static json_t *filter(const char *const *candidates, const char *prefix)
{
    json_t *values = json_array();
    if (!values)
        return NULL;
    size_t len = strlen(prefix);
    for (const char *const *c = candidates; c && *c; c++) {
        if (strncmp(*c, prefix, len) == 0 && json_array_append_new(values, json_string(*c))) {
            json_decref(values);
            return NULL;
        }
    }
    return values;
}

/* Returns the candidate list for ref and argument, or NULL when we offer none. */
static const char *const *candidates_for(const json_t *ref, const char *arg_name)
{
    const char *type = json_string_value(json_object_get(ref, "type"));
    if (!type || !arg_name)
        return NULL;
    if (strcmp(type, "ref/prompt") == 0) {
        const char *name = json_string_value(json_object_get(ref, "name"));
        if (name && strcmp(name, "test_prompt_with_arguments") == 0 &&
            (strcmp(arg_name, "arg1") == 0 || strcmp(arg_name, "arg2") == 0))
            return prompt_values;
    } else if (strcmp(type, "ref/resource") == 0) {
        const char *uri = json_string_value(json_object_get(ref, "uri"));
        if (uri && strcmp(uri, "test://template/{id}/data") == 0 && strcmp(arg_name, "id") == 0)
            return template_id_values;
    }
    return NULL;
}

static json_t *complete(mcp_ctx *ctx, const json_t *ref, const char *arg_name,
                        const char *arg_value, const json_t *context_args, void *user)
{
    (void)ctx, (void)context_args, (void)user;
    return filter(candidates_for(ref, arg_name), arg_value ? arg_value : "");
}

int everything_set_completion(mcp_server *srv)
{
    int rc = mcp_server_set_completion(srv, complete, NULL);
    if (rc != MCP_OK)
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "cannot set the completion handler: %s",
                 mcp_strerror(rc));
    return rc;
}
