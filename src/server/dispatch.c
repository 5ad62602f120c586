/* SPDX-License-Identifier: MIT */
/*
 * The server's methods: lifecycle, lists with pagination, and the calls that
 * run user handlers through an mcp_ctx.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/headers.h"
#include "schema/schema.h"
#include "server/server_int.h"

static void invalid_params(mcp__inreq *req, const char *fmt, const char *field)
{
    char msg[300];
    snprintf(msg, sizeof(msg), fmt, field);
    mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, msg, NULL);
}

/* A string member of params, or NULL after answering -32602 naming it. */
static const char *require_string(mcp__inreq *req, const char *field)
{
    json_t *v = json_object_get(req->params, field);
    if (!json_is_string(v)) {
        invalid_params(req, "Invalid params: \"%s\" must be a string", field);
        return NULL;
    }
    return json_string_value(v);
}

int mcp__respond(mcp__session *s, mcp__inreq *req, json_t *result)
{
    if (req->flags & MCP__REQ_MODERN)
        result = mcp__modern_decorate(s->rt->srv, req->method, result);
    return mcp__rpc_respond(req, result);
}

/* The revision whose rules req follows: its own in the modern era, else the session's. */
static const mcp__revision *req_rev(const mcp__session *s, const mcp__inreq *req)
{
    return (req->flags & MCP__REQ_MODERN) ? mcp__revision_modern() : s->rev;
}

/* ---- initialize ---- */

static int told_list_changed(const json_t *caps, const char *feature)
{
    return json_is_true(json_object_get(json_object_get(caps, feature), "listChanged"));
}

static void do_initialize(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    if (s->initialized) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_REQUEST,
                               "Invalid Request: the session is already initialized", NULL);
        return;
    }
    const char *asked = require_string(req, "protocolVersion");
    if (asked == NULL)
        return;
    json_t *caps = json_object_get(req->params, "capabilities");
    json_t *info = json_object_get(req->params, "clientInfo");
    if (caps != NULL && !json_is_object(caps)) {
        invalid_params(req, "Invalid params: \"%s\" must be an object", "capabilities");
        return;
    }
    if (info != NULL && !json_is_object(info)) {
        invalid_params(req, "Invalid params: \"%s\" must be an object", "clientInfo");
        return;
    }
    /* The spec: answer with the client's version if we speak it, else our latest. */
    const mcp__revision *rev = mcp__revision_find_legacy(asked);
    if (rev == NULL)
        rev = mcp__revision_latest();

    json_t *result = json_pack("{s:s, s:o, s:o}", "protocolVersion", rev->version, "capabilities",
                               mcp__server_capabilities(srv, s->stateless), "serverInfo",
                               json_incref(srv->info));
    if (result == NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    if (srv->instructions != NULL)
        json_object_set_new(result, "instructions", json_string(srv->instructions));
    /* list_changed goes only where listChanged was declared. */
    json_t *declared = json_object_get(result, "capabilities");
    s->declared = (told_list_changed(declared, "tools") ? MCP__CAP_TOOLS : 0) |
                  (told_list_changed(declared, "resources") ? MCP__CAP_RESOURCES : 0) |
                  (told_list_changed(declared, "prompts") ? MCP__CAP_PROMPTS : 0);
    s->rev = rev;
    s->client_caps = caps ? json_incref(caps) : json_object();
    s->client_info = info ? json_incref(info) : json_object();
    s->initialized = 1;
    mcp__rpc_allow_batch(s->rpc, rev->batches);
    /* Told before the answer goes out, so that a transport sharing the session with
     * other nodes can hold the answer until they can find the session. */
    mcp__session_changed(s);
    mcp__rpc_respond(req, result);
}

/* ---- Pagination ---- */

/* Cursors are opaque to clients: base64 of "o:<offset>". */
static json_t *make_cursor(size_t offset)
{
    char raw[32];
    int n = snprintf(raw, sizeof(raw), "o:%zu", offset);
    char *enc = mcp__base64_encode(raw, (size_t)n);
    json_t *c = enc ? json_string(enc) : NULL;
    free(enc);
    return c;
}

static int parse_cursor(mcp__inreq *req, size_t *offset)
{
    *offset = 0;
    json_t *c = json_object_get(req->params, "cursor");
    if (c == NULL || json_is_null(c))
        return 0;
    size_t len = 0;
    unsigned char *raw = NULL;
    if (json_is_string(c))
        raw = mcp__base64_decode(json_string_value(c), json_string_length(c), &len);
    int ok = raw != NULL && len > 2 && len < 24 && raw[0] == 'o' && raw[1] == ':';
    size_t v = 0;
    for (size_t i = 2; ok && i < len; i++) {
        if (raw[i] < '0' || raw[i] > '9')
            ok = 0;
        else
            v = v * 10 + (size_t)(raw[i] - '0');
    }
    free(raw);
    if (!ok) {
        invalid_params(req, "Invalid params: \"%s\" is not a cursor this server gave", "cursor");
        return -1;
    }
    *offset = v;
    return 0;
}

/* Offsets of the listing member in each registry item type. */
static json_t *listing_of(void *item, size_t listing_offset)
{
    return *(json_t **)((char *)item + listing_offset);
}

static void respond_page(mcp__session *s, mcp__inreq *req, mcp__vec *v, size_t listing_offset,
                         const char *key)
{
    mcp_server *srv = s->rt->srv;
    size_t offset;
    if (parse_cursor(req, &offset) != 0)
        return;
    json_t *items = json_array();
    json_t *result = json_pack("{s:o}", key, items);
    if (result == NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    uv_mutex_lock(&srv->lock);
    if (offset > v->len) {
        uv_mutex_unlock(&srv->lock);
        json_decref(result);
        invalid_params(req, "Invalid params: \"%s\" is past the end of the list", "cursor");
        return;
    }
    size_t end = offset + (size_t)srv->page_size;
    if (end > v->len)
        end = v->len;
    for (size_t i = offset; i < end; i++)
        json_array_append(items, listing_of(v->items[i], listing_offset));
    int more = end < v->len;
    uv_mutex_unlock(&srv->lock);
    if (more)
        json_object_set_new(result, "nextCursor", make_cursor(end));
    mcp__respond(s, req, result);
}

/* ---- Handler invocations (on the handler's thread) ---- */

static json_t *invoke_tool(mcp_ctx *ctx)
{
    /* The arguments are checked here, where the tool runs (a worker unless it is inline):
     * the check's budget grows with them, and a client's large arguments against an
     * expensive schema must not hold the loop. The spec (2025-11-25): arguments that fail
     * the input schema are a tool execution error, so the model can read it and correct
     * itself. */
    char why[256];
    if (mcp__schema_check(ctx->in_schema, ctx->args, why, sizeof(why)) != 0)
        return mcp_tool_error("Invalid arguments for tool %s: %s",
                              json_string_value(json_object_get(ctx->params, "name")), why);
    json_t *result = ((mcp_tool_fn)ctx->fn)(ctx, ctx->args, ctx->user);
    if (result == NULL || ctx->schema == NULL || json_is_true(json_object_get(result, "isError")))
        return result;
    /* The spec: a tool with an outputSchema must give structuredContent that conforms. */
    json_t *structured = json_object_get(result, "structuredContent");
    if (structured == NULL) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                          "Internal error: the tool declares an outputSchema but gave no "
                          "structuredContent");
    } else if (mcp__schema_check(ctx->schema, structured, why, sizeof(why)) != 0) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                          "Internal error: structuredContent does not match the outputSchema: %s",
                          why);
    } else {
        return result;
    }
    json_decref(result);
    return NULL;
}

static json_t *invoke_resource(mcp_ctx *ctx)
{
    return ((mcp_resource_fn)ctx->fn)(ctx, ctx->uri, ctx->args, ctx->user);
}

static json_t *invoke_prompt(mcp_ctx *ctx)
{
    return ((mcp_prompt_fn)ctx->fn)(ctx, ctx->args, ctx->user);
}

static json_t *invoke_complete(mcp_ctx *ctx)
{
    json_t *ref = json_object_get(ctx->params, "ref");
    json_t *arg = json_object_get(ctx->params, "argument");
    json_t *context_args = json_object_get(json_object_get(ctx->params, "context"), "arguments");
    json_t *values =
        ((mcp_complete_fn)ctx->fn)(ctx, ref, json_string_value(json_object_get(arg, "name")),
                                   json_string_value(json_object_get(arg, "value")),
                                   json_is_object(context_args) ? context_args : NULL, ctx->user);
    /* An array of values, or {"values": [...], "total"?: n, "hasMore"?: b} from a
     * handler that knows more than it gives. */
    json_t *given = values;
    json_t *total_v = NULL, *more_v = NULL;
    if (json_is_object(given)) {
        values = json_incref(json_object_get(given, "values"));
        total_v = json_object_get(given, "total");
        more_v = json_object_get(given, "hasMore");
    } else {
        given = NULL;
    }
    int bad = !json_is_array(values) ||
              (total_v != NULL && (!json_is_integer(total_v) || json_integer_value(total_v) < 0)) ||
              (more_v != NULL && !json_is_boolean(more_v));
    json_int_t total =
        total_v != NULL ? json_integer_value(total_v) : (json_int_t)json_array_size(values);
    int more = more_v != NULL ? json_is_true(more_v) : 0;
    json_decref(given);
    if (bad) {
        json_decref(values);
        if (ctx->error_code == 0)
            mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                              "Internal error: the completion handler gave no array of values "
                              "(or an object with one, an integer total and a boolean hasMore)");
        return NULL;
    }
    size_t given_n = json_array_size(values);
    /* The spec: at most 100 values per response. */
    while (json_array_size(values) > 100)
        json_array_remove(values, json_array_size(values) - 1);
    if (total < (json_int_t)given_n)
        total = (json_int_t)given_n;
    /* The handler's word, else whether values are left out; always when some were cut. */
    if (more_v == NULL)
        more = total > (json_int_t)json_array_size(values);
    more = more || given_n > json_array_size(values);
    return json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", values, "total", total,
                     "hasMore", more);
}

/* Starts ctx with the handler (fn, user, flags); takes args. A tools/call of a tool with an
 * MCP_TOOL_TASK_* flag, from a client that declared the tasks extension, becomes a task
 * before the handler runs. */
static void start(mcp__session *s, mcp__inreq *req, mcp__invoke_fn invoke, void *fn, void *user,
                  unsigned flags, json_t *args, json_t *schema, const char *uri, json_t *in_schema)
{
    mcp_ctx *ctx = mcp__ctx_new(s, req);
    if (ctx == NULL) {
        json_decref(args);
        json_decref(schema);
        json_decref(in_schema);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    ctx->invoke = invoke;
    ctx->fn = fn;
    ctx->user = user;
    ctx->args = args;
    ctx->schema = schema;
    ctx->in_schema = in_schema;
    if (uri != NULL && (ctx->uri = mcp__strdup(uri)) == NULL) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        ctx->invoke = NULL;
    }
    if (ctx->invoke != NULL && ctx->modern && mcp__mrtr_method(ctx->method))
        mcp__mrtr_begin(ctx); /* a refused requestState clears invoke */
    if (ctx->invoke != NULL && (flags & (MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED)) &&
        ctx->modern && strcmp(ctx->method, "tools/call") == 0 &&
        mcp__tasks_declared(ctx->client_caps)) {
        mcp__task_begin(ctx, 0); /* runs the handler once the task exists */
        return;
    }
    mcp__ctx_run(ctx, (flags & MCP_HANDLER_INLINE) != 0 ||
                          ((flags & MCP_HANDLER_INLINE_MODERN) != 0 && ctx->modern));
}

void mcp__tool_prepare(mcp_ctx *ctx)
{
    mcp_server *srv = ctx->rt->srv;
    const char *name = json_string_value(json_object_get(ctx->params, "name"));
    json_t *args = json_object_get(ctx->params, "arguments");
    /* The run acts for the principal of the request that brought the last answer: it must
     * hold the tool's scopes, as the call's did. */
    char scopes[512];
    if (name != NULL && ctx->principal != NULL &&
        mcp__tool_scopes(srv, name, scopes, sizeof scopes) &&
        mcp__principal_lacks(ctx->principal, scopes)) {
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_REQUEST,
                          "The access token that answered the task lacks the scope(s) \"%s\" "
                          "its tool needs",
                          scopes);
        return;
    }
    uv_mutex_lock(&srv->lock);
    mcp__tool *t = name != NULL ? mcp__find_tool(srv, name) : NULL;
    if (t != NULL) {
        ctx->invoke = invoke_tool;
        ctx->fn = (void *)t->fn;
        ctx->user = t->user;
        ctx->in_schema = json_incref(t->input_schema);
        ctx->schema = json_incref(t->output_schema);
    }
    uv_mutex_unlock(&srv->lock);
    ctx->args = json_is_object(args) ? json_incref(args) : json_object();
    if (t == NULL)
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "Unknown tool: %s (it was removed)",
                          name != NULL ? name : "");
}

/* The value of a request header of req's HTTP request (mcp__param_headers_check). */
typedef struct {
    mcp__session *s;
    mcp__inreq *req;
} header_src;

static const char *req_header(void *user, const char *name)
{
    header_src *h = user;
    return h->s->io->header(h->s->io_user, h->req->stream, name);
}

/* ---- Methods ---- */

static void do_tools_call(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    const char *name = require_string(req, "name");
    if (name == NULL)
        return;
    json_t *args = json_object_get(req->params, "arguments");
    if (args != NULL && !json_is_object(args)) {
        invalid_params(req, "Invalid params: \"%s\" must be an object", "arguments");
        return;
    }
    args = args ? json_incref(args) : json_object();
    uv_mutex_lock(&srv->lock);
    mcp__tool *t = mcp__find_tool(srv, name);
    mcp_tool_fn fn = t ? t->fn : NULL;
    void *user = t ? t->user : NULL;
    unsigned flags = t ? t->flags : 0;
    json_t *in_schema = t ? json_incref(t->input_schema) : NULL;
    json_t *out_schema = t ? json_incref(t->output_schema) : NULL;
    uv_mutex_unlock(&srv->lock);
    if (fn == NULL) {
        json_decref(args);
        char msg[300];
        snprintf(msg, sizeof(msg), "Unknown tool: %s", name);
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    /* With authorization, a caller without the tool's scopes: the transport refuses it
     * with 403 insufficient_scope (step-up) unless the endpoint asked for a tool error,
     * which is this, so that the model can read why. */
    char scopes[512];
    if (s->principal != NULL && mcp__tool_scopes(srv, name, scopes, sizeof scopes) &&
        mcp__principal_lacks(s->principal, scopes)) {
        json_decref(args);
        json_decref(in_schema);
        json_decref(out_schema);
        char msg[700];
        snprintf(msg, sizeof(msg),
                 "This tool needs an access token with the scope(s) \"%s\", which the caller's "
                 "token does not hold.",
                 scopes);
        json_t *r = mcp_text_result(msg);
        json_object_set_new(r, "isError", json_true());
        mcp__respond(s, req, r);
        return;
    }
    char why[256];
    header_src hs = {s, req};
    if ((req->flags & MCP__REQ_MODERN) && s->io != NULL && s->io->header != NULL &&
        mcp__param_headers_check(in_schema, args, req_header, &hs, why, sizeof why) != 0) {
        json_decref(in_schema);
        json_decref(args);
        json_decref(out_schema);
        mcp__rpc_respond_error(req, MCP_RPC_HEADER_MISMATCH, why, NULL);
        return;
    }
    /* The tasks extension: a tool that runs only as a task, asked by a client that did
     * not declare it (in this revision's _meta; an older client cannot). */
    if ((flags & MCP_TOOL_TASK_REQUIRED) &&
        !((req->flags & MCP__REQ_MODERN) && mcp__tasks_declared(req->meta.caps))) {
        json_decref(in_schema);
        json_decref(args);
        json_decref(out_schema);
        mcp__tasks_refuse(req);
        return;
    }
    start(s, req, invoke_tool, (void *)fn, user, flags, args, out_schema, NULL, in_schema);
}

static void do_resources_read(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    const char *uri = require_string(req, "uri");
    if (uri == NULL)
        return;
    json_t *vars = NULL;
    mcp_resource_fn fn = NULL;
    void *user = NULL;
    unsigned flags = 0;
    uv_mutex_lock(&srv->lock);
    mcp__resource *r = mcp__find_resource(srv, uri);
    if (r != NULL) {
        fn = r->fn;
        user = r->user;
        flags = r->flags;
    } else {
        mcp__template *t = mcp__match_template(srv, uri, &vars);
        if (t != NULL) {
            fn = t->fn;
            user = t->user;
            flags = t->flags;
        }
    }
    uv_mutex_unlock(&srv->lock);
    if (fn == NULL) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Resource not found: %s", uri);
        mcp__rpc_respond_error(req, req_rev(s, req)->resource_not_found, msg,
                               json_pack("{s:s}", "uri", uri));
        return;
    }
    start(s, req, invoke_resource, (void *)fn, user, flags, vars, NULL, uri, NULL);
}

/* A session's subscriptions, at most: each costs memory here, and a session shared
 * between nodes carries them in its record. */
#define MAX_SUBSCRIPTIONS 1024
#define MAX_SUBSCRIBED_BYTES (64u << 10) /* of URIs, in all */

static size_t subscribed_bytes(const json_t *subs)
{
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)subs, key, v)
    {
        (void)v;
        n += strlen(key);
    }
    return n;
}

static void do_subscribe(mcp__session *s, mcp__inreq *req, int subscribe)
{
    mcp_server *srv = s->rt->srv;
    const char *uri = require_string(req, "uri");
    if (uri == NULL)
        return;
    if (!subscribe) {
        json_object_del(s->subscriptions, uri);
        mcp__session_changed(s);
        mcp__rpc_respond(req, json_object());
        return;
    }
    json_t *vars = NULL;
    uv_mutex_lock(&srv->lock);
    int known = mcp__find_resource(srv, uri) != NULL || mcp__match_template(srv, uri, &vars);
    uv_mutex_unlock(&srv->lock);
    json_decref(vars);
    if (!known) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Resource not found: %s", uri);
        mcp__rpc_respond_error(req, s->rev->resource_not_found, msg,
                               json_pack("{s:s}", "uri", uri));
        return;
    }
    if (s->subscriptions == NULL && (s->subscriptions = json_object()) == NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    if (json_object_get(s->subscriptions, uri) == NULL &&
        (json_object_size(s->subscriptions) >= MAX_SUBSCRIPTIONS ||
         subscribed_bytes(s->subscriptions) + strlen(uri) > MAX_SUBSCRIBED_BYTES)) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "Invalid params: a session may subscribe to at most %d resources, whose URIs "
                 "total at most %u bytes",
                 MAX_SUBSCRIPTIONS, MAX_SUBSCRIBED_BYTES);
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    json_object_set_new(s->subscriptions, uri, json_true());
    mcp__session_changed(s);
    mcp__rpc_respond(req, json_object());
}

static void do_prompts_get(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    const char *name = require_string(req, "name");
    if (name == NULL)
        return;
    json_t *args = json_object_get(req->params, "arguments");
    if (args != NULL && !json_is_object(args) && !json_is_null(args)) {
        invalid_params(req, "Invalid params: \"%s\" must be an object", "arguments");
        return;
    }
    const char *key;
    json_t *value;
    json_object_foreach(args, key, value)
    {
        if (!json_is_string(value)) {
            invalid_params(req, "Invalid params: argument \"%s\" must be a string", key);
            return;
        }
    }
    uv_mutex_lock(&srv->lock);
    mcp__prompt *p = mcp__find_prompt(srv, name);
    mcp_prompt_fn fn = p ? p->fn : NULL;
    void *user = p ? p->user : NULL;
    unsigned flags = p ? p->flags : 0;
    json_t *required = p ? json_incref(p->required) : NULL;
    uv_mutex_unlock(&srv->lock);
    if (fn == NULL) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Unknown prompt: %s", name);
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    size_t i;
    json_array_foreach(required, i, value)
    {
        if (json_object_get(args, json_string_value(value)) == NULL) {
            invalid_params(req, "Invalid params: missing required argument \"%s\"",
                           json_string_value(value));
            json_decref(required);
            return;
        }
    }
    json_decref(required);
    args = json_is_object(args) ? json_incref(args) : json_object();
    start(s, req, invoke_prompt, (void *)fn, user, flags, args, NULL, NULL, NULL);
}

static void do_complete(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    if (srv->complete_fn == NULL) {
        /* Offered with no handler (MCP_CAP_ON): nothing to suggest. */
        if (mcp__server_offers_completions(srv))
            mcp__respond(s, req,
                         json_pack("{s:{s:[], s:i, s:b}}", "completion", "values", "total", 0,
                                   "hasMore", 0));
        else
            mcp__rpc_respond_error(req, MCP_RPC_METHOD_NOT_FOUND,
                                   "Method not found: completion/complete", NULL);
        return;
    }
    json_t *ref = json_object_get(req->params, "ref");
    json_t *arg = json_object_get(req->params, "argument");
    if (!json_is_object(ref) || !json_is_string(json_object_get(ref, "type"))) {
        invalid_params(req, "Invalid params: \"%s\" must be an object with a type", "ref");
        return;
    }
    if (!json_is_object(arg) || !json_is_string(json_object_get(arg, "name")) ||
        !json_is_string(json_object_get(arg, "value"))) {
        invalid_params(req, "Invalid params: \"%s\" must have a string name and value", "argument");
        return;
    }
    start(s, req, invoke_complete, (void *)srv->complete_fn, srv->complete_user, 0, NULL, NULL,
          NULL, NULL);
}

static void do_set_level(mcp__session *s, mcp__inreq *req)
{
    const char *name = require_string(req, "level");
    if (name == NULL)
        return;
    int level = mcp_log_level_parse(name);
    if (level < 0) {
        invalid_params(req, "Invalid params: \"%s\" is not a logging level", "level");
        return;
    }
    s->level = (mcp_log_level)level;
    mcp__session_changed(s);
    mcp__rpc_respond(req, json_object());
}

void mcp__dispatch(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    const char *m = req->method;
    /* The era is decided per request: before initialize, a request whose _meta names a
     * revision is modern (after it, the session's revision rules). */
    if (!s->initialized && (srv->eras & MCP_ERA_MODERN)) {
        mcp__meta_read(req->params, &req->meta);
        if (req->meta.version != NULL ||
            (!(srv->eras & MCP_ERA_LEGACY) && strcmp(m, "initialize") != 0)) {
            mcp__dispatch_modern(s, req);
            return;
        }
    }
    if (strcmp(m, "initialize") == 0) {
        if (srv->eras & MCP_ERA_LEGACY)
            do_initialize(s, req);
        else if ((s->modern = 1)) /* versioning.mdx: a modern-only server names what it speaks */
            mcp__respond_unsupported_version(
                srv, req, json_string_value(json_object_get(req->params, "protocolVersion")));
        return;
    }
    if (strcmp(m, "ping") == 0) {
        mcp__rpc_respond(req, json_object());
        return;
    }
    if (!s->initialized) {
        /* The spec: only ping may come before initialize. */
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_REQUEST,
                               "Invalid Request: the server is not initialized; send "
                               "initialize first",
                               NULL);
        return;
    }
    mcp__dispatch_method(s, req);
}

static void method_not_found(mcp__inreq *req, const char *m)
{
    char msg[300];
    snprintf(msg, sizeof(msg), "Method not found: %s", m);
    mcp__rpc_respond_error(req, MCP_RPC_METHOD_NOT_FOUND, msg, NULL);
}

static json_t *invoke_method(mcp_ctx *ctx)
{
    json_t *result = ((mcp_method_fn)ctx->fn)(ctx, ctx->args, ctx->user);
    if (result == NULL || json_is_object(result))
        return result;
    json_decref(result);
    mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                      "Internal error: the handler of %s gave a result that is not an object",
                      ctx->method);
    return NULL;
}

/* A method of the program's own (mcp_server_add_method): 0 when there is none. */
static int do_own_method(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    uv_mutex_lock(&srv->lock);
    mcp__method *own = mcp__find_method(srv, req->method);
    mcp_method_fn fn = own != NULL ? own->fn : NULL;
    void *user = own != NULL ? own->user : NULL;
    unsigned flags = own != NULL ? own->flags : 0;
    char name_param[256] = "";
    if (own != NULL && own->name_param != NULL)
        snprintf(name_param, sizeof(name_param), "%s", own->name_param);
    uv_mutex_unlock(&srv->lock);
    if (fn == NULL)
        return 0;
    if (req->params != NULL && !json_is_object(req->params)) {
        invalid_params(req, "Invalid params: \"%s\" must be an object", "params");
        return 1;
    }
    /* The member the method names is a string; over HTTP in this revision, an Mcp-Name
     * that comes with the request must carry it (as "name" does for tools/call), so
     * that what a balancer or gateway routed by is what runs. The core protocol asks
     * Mcp-Name of its three methods only: a client that does not know this method's
     * rule may leave it out. */
    const json_t *named = name_param[0] != '\0' ? json_object_get(req->params, name_param) : NULL;
    if (name_param[0] != '\0' && !json_is_string(named)) {
        invalid_params(req, "Invalid params: \"%s\" must be a string", name_param);
        return 1;
    }
    const char *h =
        named != NULL && (req->flags & MCP__REQ_MODERN) && s->io != NULL && s->io->header != NULL
            ? s->io->header(s->io_user, req->stream, "mcp-name")
            : NULL;
    if (h != NULL &&
        !mcp__header_value_is(h, json_string_value(named), json_string_length(named))) {
        mcp__rpc_respond_error(req, MCP_RPC_HEADER_MISMATCH,
                               "Header mismatch: Mcp-Name does not match the body's params", NULL);
        return 1;
    }
    json_t *params = req->params != NULL ? json_incref(req->params) : json_object();
    start(s, req, invoke_method, (void *)fn, user, flags, params, NULL, NULL, NULL);
    return 1;
}

void mcp__dispatch_method(mcp__session *s, mcp__inreq *req)
{
    mcp_server *srv = s->rt->srv;
    const char *m = req->method;
    /* A capability the program turned off is not served. */
    if (!mcp__server_serves(srv, m)) {
        method_not_found(req, m);
        return;
    }
    if (strcmp(m, "tools/list") == 0)
        respond_page(s, req, &srv->tools, offsetof(mcp__tool, listing), "tools");
    else if (strcmp(m, "tools/call") == 0)
        do_tools_call(s, req);
    else if (strcmp(m, "resources/list") == 0)
        respond_page(s, req, &srv->resources, offsetof(mcp__resource, listing), "resources");
    else if (strcmp(m, "resources/templates/list") == 0)
        respond_page(s, req, &srv->templates, offsetof(mcp__template, listing),
                     "resourceTemplates");
    else if (strcmp(m, "resources/read") == 0)
        do_resources_read(s, req);
    else if (strcmp(m, "resources/subscribe") == 0)
        do_subscribe(s, req, 1);
    else if (strcmp(m, "resources/unsubscribe") == 0)
        do_subscribe(s, req, 0);
    else if (strcmp(m, "prompts/list") == 0)
        respond_page(s, req, &srv->prompts, offsetof(mcp__prompt, listing), "prompts");
    else if (strcmp(m, "prompts/get") == 0)
        do_prompts_get(s, req);
    else if (strcmp(m, "completion/complete") == 0)
        do_complete(s, req);
    else if (strcmp(m, "logging/setLevel") == 0)
        do_set_level(s, req);
    else if (!do_own_method(s, req))
        method_not_found(req, m);
}
