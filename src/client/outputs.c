/* SPDX-License-Identifier: MIT */
/*
 * The output schemas of the tools a client has listed, and the check of its tool
 * calls' structuredContent against them (server/tools.mdx: clients SHOULD validate
 * structured results against the output schema). As the TypeScript SDK's client does,
 * a result that does not conform becomes -32602, and one that leaves structuredContent
 * out although the tool has a schema -32600; a result with isError is not checked.
 *
 * Everything here runs on the client's loop thread (mcp__call_reply), and is bounded:
 * at most MAX_TOOLS schemas and MAX_BYTES of them (serialised); past either, a new
 * tool's schema is not kept and its calls go unchecked, with one warning.
 */
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "schema/schema.h"

#define MAX_TOOLS 10000
#define MAX_BYTES (16u << 20)

typedef struct out_schema {
    json_t *schema;
    size_t bytes;
} out_schema;

static void drop(mcp_client *c, const char *name)
{
    out_schema *o = mcp__map_remove(&c->out_schemas, name);
    if (o == NULL)
        return;
    c->out_bytes -= o->bytes;
    json_decref(o->schema);
    free(o);
}

static void learn_one(mcp_client *c, const json_t *tool)
{
    const char *name = json_string_value(json_object_get(tool, "name"));
    if (name == NULL)
        return;
    json_t *schema = json_object_get(tool, "outputSchema");
    drop(c, name);
    if (schema == NULL)
        return;
    char why[200];
    if (!json_is_object(schema) || mcp__schema_valid(schema, why, sizeof(why)) != 0) {
        mcp__warn("tool %.100s: its outputSchema cannot be used (%s); its results are not "
                  "checked",
                  name, json_is_object(schema) ? why : "not an object");
        return;
    }
    size_t bytes = json_dumpb(schema, NULL, 0, JSON_COMPACT);
    if (c->out_schemas.len >= MAX_TOOLS || bytes > MAX_BYTES - c->out_bytes) {
        if (!c->out_full_warned)
            mcp__warn("the server's tools have more output schemas than a client keeps (%d, "
                      "%u bytes): the results of the others are not checked",
                      MAX_TOOLS, MAX_BYTES);
        c->out_full_warned = 1;
        return;
    }
    out_schema *o = malloc(sizeof(*o));
    if (o == NULL)
        return;
    o->schema = json_deep_copy(schema);
    o->bytes = bytes;
    if (o->schema == NULL || mcp__map_put(&c->out_schemas, name, o) != MCP_OK) {
        json_decref(o->schema);
        free(o);
        return;
    }
    c->out_bytes += bytes;
}

void mcp__client_learn_tools(mcp_client *c, const json_t *result)
{
    size_t i;
    json_t *tool;
    json_array_foreach(json_object_get(result, "tools"), i, tool) learn_one(c, tool);
}

int mcp__client_check_output(mcp_client *c, const char *tool, const json_t *result,
                             mcp_rpc_error *err)
{
    if (c->no_output_check || tool == NULL)
        return 0;
    out_schema *o = mcp__map_get(&c->out_schemas, tool);
    if (o == NULL || json_is_true(json_object_get(result, "isError")))
        return 0;
    memset(err, 0, sizeof(*err));
    const json_t *structured = json_object_get(result, "structuredContent");
    if (structured == NULL) {
        err->code = MCP_RPC_INVALID_REQUEST;
        snprintf(err->message, sizeof(err->message),
                 "Tool %.100s has an output schema but did not return structured content", tool);
        return -1;
    }
    char why[200];
    if (mcp__schema_check(o->schema, structured, why, sizeof(why)) == 0)
        return 0;
    err->code = MCP_RPC_INVALID_PARAMS;
    snprintf(err->message, sizeof(err->message),
             "Structured content does not match the tool's output schema: %.180s", why);
    return -1;
}

void mcp__client_outputs_free(mcp_client *c)
{
    size_t pos = 0;
    const char *name;
    void *v;
    while (mcp__map_next(&c->out_schemas, &pos, &name, &v)) {
        out_schema *o = v;
        json_decref(o->schema);
        free(o);
    }
    mcp__map_free(&c->out_schemas);
    c->out_bytes = 0;
}

int mcp_client_set_output_check(mcp_client *c, int on)
{
    if (c == NULL)
        return MCP_EINVAL;
    c->no_output_check = !on;
    return MCP_OK;
}
