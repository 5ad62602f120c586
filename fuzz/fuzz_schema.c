/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: JSON Schema validation (src/schema/). The input
 * is two JSON texts one after the other: a schema (any JSON value), then a
 * value. The schema goes through mcp__schema_valid; the value is checked
 * against it with mcp__schema_check; a schema that valid accepts is also
 * registered as a tool's input and output schema.
 *
 * Oracles: the sanitizers; both functions return 0 with an empty sentence,
 * or -1 with a non-empty one that fits the buffer; a short buffer gives the
 * same answer; a schema that mcp__schema_valid accepts never makes the check
 * say "invalid schema" (it may say "too complex"), and registers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

#include "schema/schema.h"

static json_t *tool_fn(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx;
    (void)args;
    (void)user;
    return NULL;
}

/* Aborts unless rc is 0 with an empty sentence or -1 with a non-empty one in why[n]. */
static void expect_sentence(const char *what, int rc, const char *why, size_t n)
{
    size_t len = strnlen(why, n);
    if (len == n || (rc == 0 && len != 0) || (rc == -1 && len == 0) || (rc != 0 && rc != -1)) {
        fprintf(stderr, "%s returned %d with a sentence of %zu bytes\n", what, rc, len);
        abort();
    }
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
    char why[256];
    memset(why, 'x', sizeof(why));
    int usable = mcp__schema_valid(schema, why, sizeof(why));
    expect_sentence("mcp__schema_valid", usable, why, sizeof(why));

    json_t *value = json_loadb((const char *)data + used, size - used, JSON_DECODE_ANY, &err);
    if (value != NULL) {
        memset(why, 'x', sizeof(why));
        int rc = mcp__schema_check(schema, value, why, sizeof(why));
        expect_sentence("mcp__schema_check", rc, why, sizeof(why));
        if (usable == 0 && rc != 0 && strncmp(why, "invalid schema", 14) == 0) {
            fprintf(stderr, "a schema mcp__schema_valid accepts failed the check: %s\n", why);
            abort();
        }
        /* A short buffer still gets a terminated sentence, and the same answer. */
        char small[8];
        memset(small, 'x', sizeof(small));
        if (mcp__schema_check(schema, value, small, sizeof(small)) != rc ||
            strnlen(small, sizeof(small)) == sizeof(small))
            abort();
    }
    json_decref(value);
    /* Registration refuses what mcp__schema_valid refuses (with a warning on stderr,
     * which would flood the run): only usable object schemas are registered. */
    char *text = json_is_object(schema) && usable == 0
                     ? json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY)
                     : NULL;
    if (text != NULL) {
        mcp_tool_def def = {
            .name = "t", .input_schema = text, .output_schema = text, .fn = tool_fn};
        if (mcp_server_add_tool_def(srv, &def) != MCP_OK ||
            mcp_server_remove_tool(srv, "t") != MCP_OK)
            abort();
        free(text);
    }
    json_decref(schema);
    return 0;
}
