/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: URI templates. The input's lines are up to four resource
 * templates and, last, a URI; the templates are registered on a fresh server
 * (mcp_server_add_resource_template, which may refuse them) and the URI is read
 * with resources/read through a session, the way a client reaches the
 * matcher, so the target does not depend on how matching is implemented.
 *
 * Oracles: the sanitizers, libFuzzer's -timeout (matching must stay linear:
 * a slow input blocks the loop), the answer being one JSON-RPC message, and
 * the handler running only for a URI some template matched, with its
 * variables as the header says: an object whose values are strings, or for an
 * exploded variable an array or object of strings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"
#include "server/server_int.h"

#define MAX_TEMPLATES 4

static uv_loop_t loop;
static int answered;

static int io_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    (void)io;
    (void)stream;
    (void)flags;
    if (text != NULL) {
        fz_check_message(text, len);
        answered++;
    }
    return MCP_OK;
}

static const mcp__session_io fuzz_io = {.send = io_send};

/* Whether v is an array or object whose members are all strings. */
static int strings_only(const json_t *v)
{
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!json_is_string(json_array_get(v, i)))
                return 0;
        return 1;
    }
    if (!json_is_object(v))
        return 0;
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        if (!json_is_string(item))
            return 0;
    }
    return 1;
}

static json_t *read_fn(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx;
    (void)user;
    if (!json_is_object(vars))
        abort(); /* a template handler always gets the variables */
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)vars, key, v)
    {
        if (!json_is_string(v) && !strings_only(v))
            abort();
    }
    return json_pack("{s:[{s:s, s:s}]}", "contents", "uri", uri, "text", "x");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int loop_ready;
    if (!loop_ready) {
        if (uv_loop_init(&loop) != 0)
            abort();
        loop_ready = 1;
    }
    /* Lines: templates, then the URI (the last line, possibly empty). */
    char *copy = malloc(size + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    if (memchr(copy, '\0', size) != NULL) { /* C strings cannot carry NUL */
        free(copy);
        return 0;
    }
    char *lines[MAX_TEMPLATES + 1];
    size_t n = 0;
    char *p = copy;
    for (;;) {
        char *nl = strchr(p, '\n');
        if (n == MAX_TEMPLATES || nl == NULL) {
            lines[n++] = p; /* the URI: the rest, newlines included */
            break;
        }
        *nl = '\0';
        lines[n++] = p;
        p = nl + 1;
    }
    const char *uri = lines[n - 1];
    json_t *uri_json =
        json_string(uri); /* NULL for invalid UTF-8, as a JSON text could not carry it */
    if (uri_json == NULL) {
        free(copy);
        return 0;
    }

    mcp_server *srv = mcp_server_new("fuzz", "1.0.0");
    if (srv == NULL)
        abort();
    for (size_t i = 0; i + 1 < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "t%zu", i);
        mcp_resource_template_def def = {
            .uri_template = lines[i], .name = name, .fn = read_fn, .flags = MCP_HANDLER_INLINE};
        mcp_server_add_resource_template(srv, &def); /* a refused template is fine */
    }
    mcp__srt *rt = mcp__srt_new(srv, &loop);
    if (rt == NULL)
        abort();
    mcp__session *s = mcp__session_new(rt, &fuzz_io, NULL, NULL);
    if (s == NULL)
        abort();
    mcp__session_assume_initialized(s, NULL);
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:o}}", "jsonrpc", "2.0", "id", 1, "method",
                            "resources/read", "params", "uri", uri_json);
    if (req == NULL)
        abort();
    answered = 0;
    mcp__session_feed_value(s, req, 1);
    json_decref(req);
    if (answered != 1) { /* every request gets exactly one answer, at once for inline handlers */
        fprintf(stderr, "resources/read got %d answers\n", answered);
        abort();
    }
    mcp__session_close(s);
    mcp__srt_close(rt);
    uv_run(&loop, UV_RUN_DEFAULT);
    mcp_server_free(srv);
    free(copy);
    return 0;
}
