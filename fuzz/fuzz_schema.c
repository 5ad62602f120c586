/*
 * libFuzzer target: the JSON Schema subset (src/server/schema.c). The input is
 * two JSON texts one after the other: a schema (an object, as registration
 * guarantees), then a value. The schema is
 * also registered as a tool's input and output schema, which parses and
 * checks it the way a program's definitions are.
 *
 * Oracles: the sanitizers; mcp__schema_check returns 0 with an empty
 * sentence, or -1 with a non-empty one that fits the buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

static json_t *tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mcp_server *srv;
    if (srv == NULL && (srv = mcp_server_new("fuzz", "1.0.0")) == NULL)
        abort();
    json_error_t err;
    json_t *schema =
        json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &err);
    if (schema == NULL)
        return 0;
    size_t used = (size_t)err.position;
    if (used > size)
        abort();
    json_t *value = json_loadb((const char *)data + used, size - used, JSON_DECODE_ANY, &err);
    /* Registration lets only object schemas through; what is inside them is free. */
    if (value != NULL && json_is_object(schema)) {
        char why[256];
        memset(why, 'x', sizeof(why));
        int rc = mcp__schema_check(schema, value, why, sizeof(why));
        size_t len = strnlen(why, sizeof(why));
        if (len == sizeof(why) || (rc == 0 && len != 0) || (rc == -1 && len == 0) ||
            (rc != 0 && rc != -1)) {
            fprintf(stderr, "mcp__schema_check returned %d with sentence of %zu bytes\n", rc, len);
            abort();
        }
        /* A short buffer still gets a terminated sentence. */
        char small[8];
        memset(small, 'x', sizeof(small));
        if (mcp__schema_check(schema, value, small, sizeof(small)) != rc ||
            strnlen(small, sizeof(small)) == sizeof(small))
            abort();
    }
    json_decref(value);
    char *text = json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text != NULL) {
        mcp_tool_def def = {
            .name = "t", .input_schema = text, .output_schema = text, .fn = tool_fn};
        if (mcp_server_add_tool_def(srv, &def) == MCP_OK &&
            mcp_server_remove_tool(srv, "t") != MCP_OK)
            abort();
        free(text);
    }
    json_decref(schema);
    return 0;
}
