/* SPDX-License-Identifier: MIT */
/*
 * The client's shorthands for the MCP methods, on top of mcp_client_request. In the
 * modern era, the methods that revision 2026-07-28 removed map to what replaced them
 * (see mcp_client_set_protocol).
 */
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"

static json_t *cursor_params(const char *cursor)
{
    return cursor ? json_pack("{s:s}", "cursor", cursor) : NULL;
}

/* A request whose params the caller built with json_pack: NULL means that failed
 * (out of memory, or a string that is not UTF-8), never "no params". */
static int request_packed(mcp_client *c, const char *method, json_t *params,
                          const mcp_call_opts *opts, json_t **result, mcp_rpc_error *err)
{
    if (params == NULL) {
        if (result != NULL)
            *result = NULL;
        if (err != NULL)
            memset(err, 0, sizeof(*err));
        return MCP_EINVAL;
    }
    return mcp_client_request(c, method, params, opts, result, err);
}

int mcp_client_ping(mcp_client *c, int timeout_ms)
{
    mcp_call_opts opts = {.timeout_ms = timeout_ms};
    json_t *result = NULL;
    /* 2026-07-28 has no ping; server/discover is the request every server answers. */
    const char *method = c != NULL && mcp__client_modern(c) ? "server/discover" : "ping";
    int rc = mcp_client_request(c, method, NULL, &opts, &result, NULL);
    json_decref(result);
    return rc;
}

int mcp_client_list_tools(mcp_client *c, const char *cursor, json_t **result, mcp_rpc_error *err)
{
    return mcp_client_request(c, "tools/list", cursor_params(cursor), NULL, result, err);
}

int mcp_client_call_tool(mcp_client *c, const char *name, json_t *args, const mcp_call_opts *opts,
                         json_t **result, mcp_rpc_error *err)
{
    if (name == NULL) {
        json_decref(args);
        return MCP_EINVAL;
    }
    json_t *params =
        json_pack("{s:s, s:o}", "name", name, "arguments", args ? args : json_object());
    return request_packed(c, "tools/call", params, opts, result, err);
}

int mcp_client_list_resources(mcp_client *c, const char *cursor, json_t **result,
                              mcp_rpc_error *err)
{
    return mcp_client_request(c, "resources/list", cursor_params(cursor), NULL, result, err);
}

int mcp_client_list_resource_templates(mcp_client *c, const char *cursor, json_t **result,
                                       mcp_rpc_error *err)
{
    return mcp_client_request(c, "resources/templates/list", cursor_params(cursor), NULL, result,
                              err);
}

int mcp_client_read_resource(mcp_client *c, const char *uri, json_t **result, mcp_rpc_error *err)
{
    if (uri == NULL)
        return MCP_EINVAL;
    return request_packed(c, "resources/read", json_pack("{s:s}", "uri", uri), NULL, result, err);
}

static int uri_call(mcp_client *c, const char *method, const char *uri, mcp_rpc_error *err)
{
    if (uri == NULL)
        return MCP_EINVAL;
    if (c != NULL && mcp__client_modern(c))
        return MCP_ENOTSUP; /* 2026-07-28 replaced resource subscriptions with listen */
    json_t *result = NULL;
    int rc = request_packed(c, method, json_pack("{s:s}", "uri", uri), NULL, &result, err);
    json_decref(result);
    return rc;
}

int mcp_client_subscribe(mcp_client *c, const char *uri, mcp_rpc_error *err)
{
    return uri_call(c, "resources/subscribe", uri, err);
}

int mcp_client_unsubscribe(mcp_client *c, const char *uri, mcp_rpc_error *err)
{
    return uri_call(c, "resources/unsubscribe", uri, err);
}

int mcp_client_list_prompts(mcp_client *c, const char *cursor, json_t **result, mcp_rpc_error *err)
{
    return mcp_client_request(c, "prompts/list", cursor_params(cursor), NULL, result, err);
}

int mcp_client_get_prompt(mcp_client *c, const char *name, json_t *args, json_t **result,
                          mcp_rpc_error *err)
{
    if (name == NULL) {
        json_decref(args);
        return MCP_EINVAL;
    }
    json_t *params = json_pack("{s:s}", "name", name);
    if (params != NULL && args != NULL)
        json_object_set_new(params, "arguments", args);
    else
        json_decref(args);
    return request_packed(c, "prompts/get", params, NULL, result, err);
}

int mcp_client_complete(mcp_client *c, json_t *ref, const char *arg_name, const char *arg_value,
                        json_t **result, mcp_rpc_error *err)
{
    if (ref == NULL || arg_name == NULL || arg_value == NULL) {
        json_decref(ref);
        return MCP_EINVAL;
    }
    json_t *params = json_pack("{s:o, s:{s:s, s:s}}", "ref", ref, "argument", "name", arg_name,
                               "value", arg_value);
    return request_packed(c, "completion/complete", params, NULL, result, err);
}

int mcp_client_set_logging_level(mcp_client *c, mcp_log_level level, mcp_rpc_error *err)
{
    const char *name = mcp_log_level_name(level);
    if (name == NULL)
        return MCP_EINVAL;
    if (c != NULL && mcp__client_modern(c)) {
        if (err != NULL)
            memset(err, 0, sizeof(*err));
        return mcp__client_set_log_level(c, name);
    }
    json_t *result = NULL;
    int rc = request_packed(c, "logging/setLevel", json_pack("{s:s}", "level", name), NULL, &result,
                            err);
    json_decref(result);
    return rc;
}

int mcp_client_list_all(mcp_client *c, const char *method, const char *key, json_t **items,
                        mcp_rpc_error *err)
{
    if (items == NULL || method == NULL || key == NULL)
        return MCP_EINVAL;
    *items = json_array();
    if (*items == NULL)
        return MCP_ENOMEM;
    char *cursor = NULL;
    /* A server that keeps handing out cursors must not keep us here forever. */
    for (int page = 0; page < 10000; page++) {
        json_t *result = NULL;
        int rc = mcp_client_request(c, method, cursor_params(cursor), NULL, &result, err);
        free(cursor);
        cursor = NULL;
        if (rc != MCP_OK) {
            json_decref(*items);
            *items = NULL;
            return rc;
        }
        json_array_extend(*items, json_object_get(result, key));
        const char *next = json_string_value(json_object_get(result, "nextCursor"));
        if (next != NULL && (cursor = strdup(next)) == NULL) {
            json_decref(result);
            json_decref(*items);
            *items = NULL;
            return MCP_ENOMEM;
        }
        json_decref(result);
        if (cursor == NULL)
            return MCP_OK;
    }
    free(cursor);
    json_decref(*items);
    *items = NULL;
    return MCP_EPROTO;
}
