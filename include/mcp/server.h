/* SPDX-License-Identifier: MIT */
/*
 * libmcp server API.
 *
 * An mcp_server holds what the server offers (tools, resources, resource
 * templates, prompts, completion, logging) and serves any number of sessions
 * through endpoints: mcp_stdio_endpoint and mcp_http_endpoint on a libuv loop
 * the caller runs, or mcp_serve_stdio, mcp_serve_fds and mcp_serve_http on a
 * loop of their own. Several endpoints, on one loop or several, may serve the
 * same server.
 *
 * Threading:
 * - Settings (mcp_server_set_*, mcp_server_on_notification) take no lock: call
 *   them from one thread before srv is served.
 * - The registry (mcp_server_add_*, mcp_server_remove_*) and the messages to
 *   every session (mcp_server_notify_resource_updated, mcp_server_log,
 *   mcp_server_notify) are thread-safe: any thread, handlers included.
 * - Endpoint functions (mcp_stdio_endpoint_*, mcp_http_endpoint_*,
 *   mcp_http_exchange_*) must be called on the thread that runs the endpoint's
 *   loop; none is thread-safe. Everything an endpoint calls back (done,
 *   on_listen, routes, the notification hook) runs on that thread, and so does
 *   every session of the endpoint.
 * - Tool, resource and prompt handlers run on the server's worker pool (its
 *   threads are made when the first of them runs; see mcp_server_set_workers),
 *   or on the loop thread when marked MCP_HANDLER_INLINE; the completion
 *   handler always runs on the pool. A handler uses its mcp_ctx on its own
 *   thread until it returns.
 * - mcp_serve_* block the calling thread (any thread) until they end.
 *   mcp_server_free must wait until no endpoint serves srv.
 */
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include <mcp/common.h>
#include <mcp/store.h>
#include <mcp/auth.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_server mcp_server;

/*
 * The context of one incoming request, given to its handler. It is owned by
 * the library and valid until the handler returns; every mcp_ctx_* function
 * may be called from the handler's own thread (a worker, or the loop for
 * inline handlers), and mcp_ctx_is_cancelled() from any thread, while the
 * handler runs.
 */
typedef struct mcp_ctx mcp_ctx;

/* Run the handler on the loop thread (it must be fast and never block). */
#define MCP_HANDLER_INLINE 0x1u
/*
 * Run the handler on the loop thread for requests of revision 2026-07-28, and on a worker
 * for those of the legacy era. For a handler that asks the client (mcp_ctx_ask) and is
 * otherwise fast and never blocks: in revision 2026-07-28 asking never waits (Multi
 * Round-Trip Requests), so the round costs no thread handoff, while in the legacy era it
 * waits for the client's answer, which only a worker may. As for MCP_HANDLER_INLINE, a
 * tool's arguments are then checked against its input schema on the loop thread too:
 * keep that schema cheap. Not with MCP_TOOL_TASK_*
 * (MCP_EINVAL), and such a handler cannot make itself a task (mcp_ctx_start_task:
 * MCP_ESTATE in revision 2026-07-28).
 */
#define MCP_HANDLER_INLINE_MODERN 0x8u
/*
 * Tools only (the tasks extension, io.modelcontextprotocol/tasks; see mcp_server_set_tasks):
 * a call whose request declares the extension runs as a task. The client is answered at
 * once with the task's id (a CreateTaskResult) and the handler runs on after, its result
 * kept for tasks/get. TASK_OPTIONAL: a call from a client that did not declare the
 * extension runs as any other. TASK_REQUIRED: such a call is refused with -32021
 * (MissingRequiredClientCapability) naming the extension. Neither goes with
 * MCP_HANDLER_INLINE (MCP_EINVAL). A tool without them may still become a task from its
 * handler (mcp_ctx_start_task).
 */
#define MCP_TOOL_TASK_OPTIONAL 0x2u
#define MCP_TOOL_TASK_REQUIRED 0x4u

/*
 * Handlers return a new reference to the method's result object, which the
 * library takes. To answer with a JSON-RPC error instead, call
 * mcp_ctx_set_error() and return NULL; a NULL without an error set is answered
 * with -32603. When the request was cancelled the result is released, not
 * sent. Their pointer arguments are borrowed and valid until the handler
 * returns; user is the one of the definition. A tool's args is always an
 * object ({} when the client sent none) that passed the tool's input schema. A
 * resource handler gets the URI asked for, and vars NULL for a fixed resource
 * or an object for a template (see mcp_resource_template_def). A prompt's args is an object of
 * strings that holds every required argument.
 */
typedef json_t *(*mcp_tool_fn)(mcp_ctx *ctx, const json_t *args, void *user);
typedef json_t *(*mcp_resource_fn)(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user);
typedef json_t *(*mcp_prompt_fn)(mcp_ctx *ctx, const json_t *args, void *user);
/*
 * Completion: returns a JSON array of candidate strings (new reference); the
 * library keeps the first 100 and fills in total and hasMore. A handler that knows
 * of more than it gives returns {"values": [...], "total": n, "hasMore": b} (each of
 * total and hasMore optional): total is then at least the number of values, and
 * hasMore true when it says so or when values were dropped. Anything else is
 * answered with the error set by mcp_ctx_set_error(), or -32603.
 * `ref` is the request's ref object (with a string type), arg_name and
 * arg_value the argument's strings, `context_args` its context.arguments or
 * NULL; all are borrowed until the handler returns. It always runs on a
 * worker thread.
 */
typedef json_t *(*mcp_complete_fn)(mcp_ctx *ctx, const json_t *ref, const char *arg_name,
                                   const char *arg_value, const json_t *context_args, void *user);
/* A client notification the library does not handle itself (see
 * mcp_server_on_notification()). Loop thread; its arguments are borrowed for the
 * call. */
typedef void (*mcp_server_notification_fn)(mcp_server *srv, const char *session_id,
                                           const char *method, const json_t *params, void *user);

/*
 * Definitions are copied by the add functions: strings and JSON texts need
 * only live for the call. Zero or NULL fields mean "absent". New fields are
 * only ever appended, so designated initialisers stay valid.
 *
 * Each definition begins with size: sizeof the struct as the program was
 * compiled (e.g. .size = sizeof(mcp_tool_def)), or 0 for the layout of libmcp
 * 0.2, which is what 0 stands for in every later release too.
 * Fields appended in later releases then read as absent for a program built
 * against an older header; a size shorter than the size field is MCP_EINVAL.
 * In mcp_resource_def it is called struct_size, since size there is the
 * resource's own size in bytes.
 */
typedef struct mcp_tool_def {
    size_t size;
    const char *name; /* required */
    const char *title;
    const char *description;
    const char *input_schema;  /* JSON text; NULL means {"type":"object","properties":{}} */
    const char *output_schema; /* JSON text; results must then carry structuredContent */
    const char *annotations;   /* JSON object text, e.g. {"readOnlyHint":true} */
    mcp_tool_fn fn;            /* required */
    void *user;
    unsigned flags; /* MCP_HANDLER_INLINE */
    /* With authorization (mcp_http_opts.auth): the scopes, space-separated, a caller's
     * token must hold to call the tool (NULL: none beyond the endpoint's own). A call
     * without them gets 403 insufficient_scope naming every scope it needs, so that the
     * client steps up; or, with mcp_auth_opts.scope_error_as_result, a tool error the
     * model can read. Each must be a scope-token (RFC 6749; else MCP_EINVAL). */
    const char *scopes;
    /* Since 0.1 (appended: a program built without them leaves them zero): the
     * definition's _meta (JSON object text, e.g. an extension's {"ui":{...}}) and
     * icons (JSON array text of {src, mimeType?, sizes?, theme?}; src an http(s) URL
     * or a data: URI). Listed as given; invalid JSON is MCP_EINVAL. */
    const char *meta;
    const char *icons;
} mcp_tool_def;

typedef struct mcp_resource_def {
    size_t struct_size; /* sizeof(mcp_resource_def) or 0, as size in the others */
    const char *uri;    /* required */
    const char *name;   /* required */
    const char *title;
    const char *description;
    const char *mime_type;
    const char *annotations; /* JSON object text */
    long long size;          /* the resource's bytes, or 0 for unknown (not struct_size) */
    mcp_resource_fn fn;      /* required; vars is NULL */
    void *user;
    unsigned flags;
    /* As in mcp_tool_def. */
    const char *meta;
    const char *icons;
} mcp_resource_def;

/*
 * A resource template (RFC 6570, levels 1 to 4: "{name}" is one path segment or
 * less, without '/'; "{+path}", "{#frag}", "{.ext}", "{/seg}", "{;p}", "{?q}" and
 * "{&q}" as the RFC expands them, read back). The handler gets the variables as a
 * JSON object: a string for each variable the URI gave, and for an exploded one
 * ("{/seg*}", "{?q*}") an array of strings, or an object of strings when its items
 * are name=value pairs. A template the parser refuses is MCP_EINVAL at
 * registration.
 */
typedef struct mcp_resource_template_def {
    size_t size;
    const char *uri_template; /* required */
    const char *name;         /* required */
    const char *title;
    const char *description;
    const char *mime_type;
    const char *annotations;
    mcp_resource_fn fn; /* required */
    void *user;
    unsigned flags;
    /* As in mcp_tool_def. */
    const char *meta;
    const char *icons;
} mcp_resource_template_def;

/*
 * One argument of a prompt. It has no size of its own: it is an element of an
 * array the library walks, so the library must know its stride. Should it grow,
 * mcp_prompt_def gains a field after the present ones that gives that stride (0
 * or absent for this layout), and programs built against this header go on
 * working unchanged.
 */
typedef struct mcp_prompt_arg {
    const char *name; /* NULL ends an argument array */
    const char *title;
    const char *description;
    int required;
} mcp_prompt_arg;

typedef struct mcp_prompt_def {
    size_t size;
    const char *name; /* required */
    const char *title;
    const char *description;
    const mcp_prompt_arg *args; /* array ended by an entry with name NULL, or NULL */
    mcp_prompt_fn fn;           /* required; args is an object of strings */
    void *user;
    unsigned flags;
    /* As in mcp_tool_def. */
    const char *meta;
    const char *icons;
} mcp_prompt_def;

/* ---- Lifetime and settings ---- */

/*
 * Returns a new server with nothing registered and the default settings, or
 * NULL when name or version is NULL or memory runs out. name and version
 * (serverInfo) are copied. Any thread; the server is the caller's until
 * mcp_server_free().
 */
MCP_EXTERN mcp_server *mcp_server_new(const char *name, const char *version);
/*
 * Frees the server, its registry and its worker pool, after every handler
 * still queued or running on the pool has returned: this call waits for them.
 * Every endpoint that served srv must have ended first (its done callback ran,
 * or its mcp_serve_* call returned): one still attached would use freed
 * memory. Never from a handler (a worker would wait for itself). NULL is
 * allowed.
 */
MCP_EXTERN void mcp_server_free(mcp_server *srv);

/*
 * Settings. None takes a lock: call them from one thread before srv is served
 * (before an endpoint is made or mcp_serve_* is called); a change while
 * sessions run is a data race. Each returns MCP_OK, or MCP_EINVAL for a NULL
 * srv or a value out of the range given.
 */

/* serverInfo.title and the initialize result's instructions. The string is copied;
 * NULL removes it. MCP_ENOMEM when the copy fails (the old value stays). */
MCP_EXTERN int mcp_server_set_title(mcp_server *srv, const char *title);
/* serverInfo's optional members at once: title, description, websiteUrl (an
 * http(s) URL) and icons (see mcp_tool_def.icons); NULL or zeroed removes them.
 * MCP_EINVAL for an invalid member (the old serverInfo stays), MCP_ENOMEM. */
MCP_EXTERN int mcp_server_set_implementation(mcp_server *srv, const mcp_implementation *impl);
MCP_EXTERN int mcp_server_set_instructions(mcp_server *srv, const char *instructions);
/* Items per page of every list method: 1..10000, default 100. MCP_OK; MCP_EINVAL for a
 * NULL srv or a size outside 1..10000. */
MCP_EXTERN int mcp_server_set_page_size(mcp_server *srv, int page_size);
/* Worker threads of the handler pool: 1..256, default 8. The pool is made when the
 * first handler that is not inline runs; from then on this returns MCP_EINVAL. */
MCP_EXTERN int mcp_server_set_workers(mcp_server *srv, int workers);
/* Largest message accepted from a client, in bytes: 1024 or more, default 4 MiB.
 * An endpoint takes it as its line or body limit when it is made. MCP_OK; MCP_EINVAL
 * for a NULL srv or fewer than 1024 bytes. */
MCP_EXTERN int mcp_server_set_max_message_size(mcp_server *srv, size_t bytes);

/*
 * The eras of the protocol the server speaks, on every transport (both by default):
 * MCP_ERA_LEGACY, the revisions opened by initialize (2024-11-05 to 2025-11-25, with
 * sessions), and MCP_ERA_MODERN, revision 2026-07-28 (no initialize and no session: each
 * request names its revision in _meta and is served on its own). The era is decided
 * per request: initialize opens a legacy session; a request whose _meta names a revision
 * is modern. A server of one era answers the other as a server of that era alone would:
 * a legacy-only server does not recognise modern requests (a modern client falls back),
 * a modern-only one refuses initialize with UnsupportedProtocolVersion (-32022) naming
 * what it speaks. MCP_EINVAL for 0 or unknown bits. Set it before the server is served.
 */
#define MCP_ERA_LEGACY 0x1u
#define MCP_ERA_MODERN 0x2u
MCP_EXTERN int mcp_server_set_eras(mcp_server *srv, unsigned eras);

/*
 * Revision 2026-07-28's caching hints (ttlMs, cacheScope) on the results of method (one
 * of tools/list, prompts/list, resources/list, resources/templates/list, resources/read,
 * server/discover; NULL: all of them): ttl_ms >= 0, and public (nonzero: the result
 * holds nothing of one caller's and shared caches may keep it) or private. The default
 * is ttlMs 0 and private: a client re-fetches, and no shared cache keeps it. A
 * resources/read handler may put its own ttlMs and cacheScope in its result; they are
 * kept. MCP_EINVAL for an unknown method or a negative ttl.
 */
MCP_EXTERN int mcp_server_set_cache_hint(mcp_server *srv, const char *method, long long ttl_ms,
                                         int public_scope);

/*
 * The key that protects revision 2026-07-28's requestState (AEAD: the client can neither
 * read nor change it): 32 bytes. By default each server draws its own from the OS random
 * source when it starts, so a retry can only be served by the same process; servers that
 * share retries (several nodes behind a load balancer) must share the key. Setting a new
 * key keeps the previous one for reading, so that rounds under way survive one rotation.
 * ttl_ms bounds how long a client may take to answer (default 10 minutes; <= 0 keeps the
 * current). MCP_EINVAL for a key that is not 32 bytes.
 */
MCP_EXTERN int mcp_server_set_state_key(mcp_server *srv, const unsigned char *key, size_t len,
                                        long long ttl_ms);

/*
 * Tasks (the extension io.modelcontextprotocol/tasks, revision 2026-07-28): a tools/call
 * answered with a task id, whose result the client fetches later with tasks/get, answers
 * the handler's questions with tasks/update and stops with tasks/cancel.
 *
 * Every task belongs to who created it: the principal of its request's access token
 * (<mcp/auth.h>), or, on an endpoint without authorization, nobody (anyone who holds its
 * id, 122 random bits, may use it). A task of another principal is answered as one that
 * does not exist (-32602). A task and its result are kept ttl_ms after it was created,
 * then forgotten; a handler still running then is cancelled. A principal may hold
 * max_per_owner tasks at once and the server max_total; a call past either is refused with
 * -32000 (and no task) until some expire. poll_interval_ms is what clients are told to wait
 * between two tasks/get.
 *
 * A task's handler runs on workers of its own (as many as mcp_server_set_workers gives),
 * so that tasks never hold up other calls (a handler that becomes a task with
 * mcp_ctx_start_task keeps the worker it began on until it returns; its later runs are on
 * the tasks' workers). It asks the client as in revision 2026-07-28
 * (mcp_ctx_ask): a question without an answer yet returns MCP_EINPUT, the handler returns,
 * the task shows the question (status input_required) and, once tasks/update has brought
 * every answer, the handler runs again from the start and finds them (mcp_ctx_round,
 * mcp_ctx_round_state and mcp_ctx_keep_state carry its own state across these runs, as
 * across MRTR rounds). So no worker waits while a person answers. Keys given to mcp_ctx_ask
 * name one question each for the task's life: asking another question under a key answered
 * before returns MCP_EEXIST. Progress and log messages of a task's handler go nowhere
 * (the extension has none) and return MCP_OK. mcp_ctx_is_cancelled() turns true on
 * tasks/cancel, at the task's expiry, and when the endpoint stops; a task cancelled by
 * tasks/cancel ends "cancelled" whatever its handler returns, one stopped with its
 * endpoint "failed". A result ends it "completed" (a tool error with isError too), a
 * JSON-RPC error (mcp_ctx_set_error, or NULL) "failed" with that error.
 *
 * size is sizeof(mcp_tasks_opts) or 0, as in the definitions. Zero fields give the
 * defaults: ttl_ms 1 hour, poll_interval_ms 1000, max_per_owner 1,000, max_total 10,000,
 * max_bytes 256 MiB. A principal's count includes its finished tasks until they expire: a
 * bound on what it holds, not on what runs.
 * Calling it offers the extension in server/discover (so does adding a tool with an
 * MCP_TOOL_TASK_* flag, with the defaults); call it before srv is served.
 */
typedef struct mcp_tasks_opts {
    size_t size;
    long long ttl_ms;
    int poll_interval_ms;
    size_t max_per_owner;
    size_t max_total;
    /* Bytes the process keeps for its tasks' records (default 256 MiB: requests,
     * answers, questions, results, as compact JSON); a task whose record would pass it is
     * not made (-32000), an answer not taken (-32603), and a result too large fails its
     * task. Redis's own memory bounds a shared store. */
    size_t max_bytes;
} mcp_tasks_opts;
/* Sets the tasks' options (opts NULL: the defaults) and offers the extension (see above).
 * MCP_OK; MCP_EINVAL for a NULL srv, an opts->size smaller than the size field, or a
 * negative ttl_ms or poll_interval_ms; MCP_ENOMEM when the extension cannot be declared.
 */
MCP_EXTERN int mcp_server_set_tasks(mcp_server *srv, const mcp_tasks_opts *opts);
/*
 * The completion handler (fn NULL removes it). A session that initializes while
 * it is set is offered the "completions" capability; without one,
 * completion/complete is answered -32601. user is kept as given and must stay
 * valid until srv is freed or the handler replaced, and its calls have returned.
 * MCP_OK; MCP_EINVAL for a NULL srv.
 */
MCP_EXTERN int mcp_server_set_completion(mcp_server *srv, mcp_complete_fn fn, void *user);
/*
 * The hook for client notifications the library does not handle itself (fn
 * NULL removes it): every one but notifications/initialized and
 * notifications/cancelled, those sent before initialize included. It runs on
 * the loop thread of the session's endpoint and must not block; session_id is
 * NULL for stdio and stateless HTTP, and params (NULL when absent) is borrowed
 * for the call. user is kept as for mcp_server_set_completion(). MCP_OK; MCP_EINVAL for
 * a NULL srv.
 */
MCP_EXTERN int mcp_server_on_notification(mcp_server *srv, mcp_server_notification_fn fn,
                                          void *user);

/* ---- Capabilities ----
 *
 * What initialize (and, in revision 2026-07-28, server/discover) offers. Each of the
 * library's own capabilities is chosen by an mcp_cap: MCP_CAP_AUTO (the default) offers
 * it as described below, MCP_CAP_ON always, MCP_CAP_OFF never. A capability that is off
 * is not served either: its methods are answered -32601 (Method not found).
 */

typedef struct mcp_server_caps {
    size_t size; /* sizeof(mcp_server_caps) */
    /* AUTO: offered to a session when at least one item of the kind (for resources, a
     * resource or a template) is registered as it initializes. ON offers the kind
     * with no item yet, so that items added later are announced (listChanged). */
    mcp_cap tools, resources, prompts;
    /* AUTO: offered while a completion handler is set (mcp_server_set_completion). */
    mcp_cap completions;
    /* AUTO: on. OFF: logging/setLevel is refused and no log message (mcp_ctx_log,
     * mcp_server_log) is sent; they still return MCP_OK. The Logging feature is
     * deprecated by revision 2026-07-28 in favour of stderr and trace context. */
    mcp_cap logging;
    /* resources.subscribe, with resources. AUTO: on. */
    mcp_cap subscribe;
    /* listChanged on tools, resources and prompts. AUTO: on, except on stateless
     * HTTP, which cannot carry notifications outside a request. OFF: no
     * notifications/.../list_changed is ever sent. */
    mcp_cap list_changed;
} mcp_server_caps;

/*
 * Chooses the library's own capabilities (caps NULL: all MCP_CAP_AUTO); meant to be
 * set before serving. Sessions that initialize afterwards are offered the new set;
 * sessions already open are served by it too (a capability turned off is refused to
 * them as well) but are not told. Any thread. MCP_OK; MCP_EINVAL for a NULL srv, a size smaller
 * than the size field or a value that is no mcp_cap.
 */
MCP_EXTERN int mcp_server_set_caps(mcp_server *srv, const mcp_server_caps *caps);
/*
 * Declares an extension in the capabilities' "extensions" (revision 2026-07-28; sent
 * to clients of every revision, which ignore what they do not know): id is its
 * identifier, which the schema says must have a vendor prefix ("io.modelcontextprotocol/ui",
 * "com.example/feature": dot-separated labels of letters, digits and hyphens, a slash,
 * then a name of letters, digits, '-', '_' and '.' that begins and ends with a letter or
 * digit, 255 bytes at most); settings its settings object ({} when NULL), deep-copied.
 * mcp_server_remove_extension() takes it out (MCP_ENOENT: it was not declared). Any
 * thread; sessions that initialize afterwards see the change. MCP_OK; MCP_EINVAL for a
 * NULL srv, an invalid id or settings that are not an object; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_server_set_extension(mcp_server *srv, const char *id, const json_t *settings);
MCP_EXTERN int mcp_server_remove_extension(mcp_server *srv, const char *id);
/* The same for "experimental" (non-standard capabilities): any name of 1 to 255
 * bytes; settings NULL removes it. MCP_OK, also when the name to remove was not set;
 * MCP_EINVAL for a NULL srv or name, a name of another length or not valid UTF-8, or
 * settings that are not an object; MCP_ENOMEM. */
MCP_EXTERN int mcp_server_set_experimental(mcp_server *srv, const char *name,
                                           const json_t *settings);

/*
 * The client's settings object for extension id in this request's capabilities (the
 * session's, from initialize, or in revision 2026-07-28 the request's own _meta), or
 * NULL when the client did not declare it. Borrowed, as the other accessors.
 */
MCP_EXTERN const json_t *mcp_ctx_client_extension(const mcp_ctx *ctx, const char *id);

/* ---- Trace context and spans ----
 *
 * A request's W3C trace context, from its params._meta ("traceparent", "tracestate",
 * "baggage"), for the handler to continue the trace: NULL when absent or not of the
 * W3C form (a traceparent that mcp_traceparent_valid() refuses, a tracestate of more
 * than 512 bytes or a baggage of more than 8192 bytes: a receiver ignores those).
 * Borrowed until the handler returns.
 */
MCP_EXTERN const char *mcp_ctx_traceparent(const mcp_ctx *ctx);
MCP_EXTERN const char *mcp_ctx_tracestate(const mcp_ctx *ctx);
MCP_EXTERN const char *mcp_ctx_baggage(const mcp_ctx *ctx);

/* One attribute of a span: an OpenTelemetry semantic-convention name and its value. */
typedef struct mcp_span_attr {
    const char *name;
    const char *value;
} mcp_span_attr;

/*
 * A request begins. name is the span's name by the OpenTelemetry conventions for MCP
 * ("tools/call get_weather", "prompts/get greet", "initialize"); attrs hold, where they
 * apply: mcp.method.name, jsonrpc.request.id, mcp.protocol.version, mcp.session.id,
 * gen_ai.tool.name and gen_ai.operation.name ("execute_tool"), gen_ai.prompt.name,
 * mcp.resource.uri, network.transport ("tcp" or "pipe") and network.protocol.name
 * ("http"). traceparent, tracestate and baggage are the request's (as
 * mcp_ctx_traceparent), the parent of the span; NULL when absent. Everything is borrowed
 * for the call.
 */
typedef struct mcp_span_start {
    const char *name;
    const mcp_span_attr *attrs;
    size_t nattrs;
    const char *traceparent, *tracestate, *baggage;
} mcp_span_start;

typedef struct mcp_span_hooks {
    size_t size; /* sizeof(mcp_span_hooks) */
    /* On the loop thread as each request comes, before anything answers it: returns the
     * span's handle (anything; NULL is fine), which end gets. Must not block. */
    void *(*start)(const mcp_span_start *span, void *user);
    /* On the loop thread once the request is answered: error_code 0 for a result, else
     * the JSON-RPC error's code; error_type NULL for a success, "tool_error" for a tool
     * result with isError, the error code as text for an error ("-32602"), or
     * "cancelled" when the client cancelled it and no answer went out. */
    void (*end)(void *span, int error_code, const char *error_type, void *user);
    void *user;
} mcp_span_hooks;

/*
 * Sets the span hooks (hooks NULL, or both functions NULL: none, which costs nothing);
 * copied. Set before serving: requests already begun end with the hooks they began with.
 * MCP_OK; MCP_EINVAL for a NULL srv or a size smaller than the size field.
 */
MCP_EXTERN int mcp_server_set_span_hooks(mcp_server *srv, const mcp_span_hooks *hooks);

/* ---- Methods of one's own ----
 *
 * A request method the library does not answer itself (an extension's, or a program's
 * own) runs a handler like a tool's: on a worker (inline with MCP_HANDLER_INLINE), with
 * an mcp_ctx, in both eras, its result answered as the method's result. params is the
 * request's params ({} when absent; _meta included). The handler returns the result
 * object (stolen), or NULL with mcp_ctx_set_error() (or mcp_ctx_set_error_data()).
 */
typedef json_t *(*mcp_method_fn)(mcp_ctx *ctx, const json_t *params, void *user);

typedef struct mcp_method_def {
    size_t size;        /* sizeof(mcp_method_def) */
    const char *method; /* required: printable ASCII without spaces, 1 to 255 bytes */
    mcp_method_fn fn;   /* required */
    void *user;
    unsigned flags; /* MCP_HANDLER_* */
    /* The params member that names what the request acts on (a task's id, say): it must
     * be a string (else -32602), and in revision 2026-07-28 over HTTP, an Mcp-Name header
     * that comes with the request must carry it (else -32020, 400), as "name" does for
     * tools/call, so that what a balancer routed by is what runs. The core protocol asks
     * Mcp-Name of its own three methods only, so one that is absent is accepted. NULL:
     * none. */
    const char *name_param;
} mcp_method_def;

/*
 * Registers a request method. A method the library answers itself (initialize, ping,
 * server/discover, subscriptions/listen, tools/..., resources/..., prompts/...,
 * completion/complete, logging/setLevel), a notification's name ("notifications/...")
 * and JSON-RPC's reserved "rpc." names are refused: MCP_EINVAL, as for a NULL srv or
 * def, a missing method or fn, or an invalid name or name_param; MCP_EEXIST when the
 * method is registered already; MCP_ENOMEM. Any thread; fn and user are kept as for a
 * tool's.
 */
MCP_EXTERN int mcp_server_add_method(mcp_server *srv, const mcp_method_def *def);
/* Removes it: MCP_OK, MCP_ENOENT when it is not registered, MCP_EINVAL for NULLs. */
MCP_EXTERN int mcp_server_remove_method(mcp_server *srv, const char *method);

/* ---- Registry ----
 *
 * Thread-safe: any thread, handlers included, before or while srv is served.
 * A definition is copied (see above); fn and user are kept as given, and user
 * must stay valid until the item is removed (or srv freed) and every call
 * already started has returned: removing an item does not stop its handlers
 * in flight.
 *
 * A change is announced with notifications/{tools,resources,prompts}/list_changed,
 * posted to every endpoint serving srv, to the sessions whose initialize
 * declared listChanged for that kind. By default a session is offered a kind only
 * when at least one item of it was registered when it initialized (never
 * listChanged on stateless HTTP), so a session that began with no tools hears
 * of no tool added later: register before serving, or offer the kind with
 * mcp_server_set_caps() (MCP_CAP_ON).
 *
 * The add functions return MCP_OK; MCP_EINVAL for a NULL srv or definition, a
 * size smaller than the size field, a missing required field, or a JSON text
 * that does not parse to an object; MCP_EEXIST when the key (tool or prompt
 * name, resource URI, template text) is registered already; MCP_ENOMEM. An
 * optional string (title, description, mime type) that is not valid UTF-8 is
 * left out of the listing without an error.
 */

/*
 * Adds a tool. Its calls are checked against input_schema first (a call that
 * fails it is answered with a tool error, isError true, naming the failing
 * place as a JSON pointer, and the handler is not called). With
 * output_schema, a result that is not isError must carry structuredContent
 * that conforms, or the call is answered -32603 instead. A name that is not
 * valid UTF-8 gives MCP_ENOMEM.
 *
 * Schemas are JSON Schema 2020-12, or draft-07 when "$schema" names it; any
 * other "$schema" is refused. Every assertion and applicator is enforced,
 * unevaluatedProperties, unevaluatedItems and $dynamicRef included; "format"
 * and the other annotations assert nothing. "pattern" is ECMA-262 on code
 * points, matched in time linear in the string; backreferences, lookaround
 * and \p{...} are refused. A "$ref" must resolve within the schema itself (a
 * JSON pointer, an "$anchor", an embedded "$id"): nothing is ever fetched. A
 * schema that is malformed, has a $ref that does not resolve or a pattern
 * that does not compile, loops ({"$ref":"#"}), or passes the size bounds
 * (subschemas nested 128 deep, 10,000 subschemas, 100,000 JSON values) gives
 * MCP_EINVAL, with a warning on stderr naming the tool. A call whose check
 * would take more than 100,000 steps, plus 16 per value of the arguments (a
 * string counting one more per 64 bytes), fails as "too complex to check".
 */
MCP_EXTERN int mcp_server_add_tool_def(mcp_server *srv, const mcp_tool_def *def);
/* mcp_server_add_tool_def() with only a name, a description, an input schema (JSON
 * text or NULL), fn and user: the handler runs on a worker. MCP_OK; MCP_EINVAL for a
 * NULL srv, name or fn, or an input schema that does not parse to an object or that the
 * schema check refuses; MCP_EEXIST when the name is registered already; MCP_ENOMEM, also
 * for a name that is not valid UTF-8. */
MCP_EXTERN int mcp_server_add_tool(mcp_server *srv, const char *name, const char *description,
                                   const char *input_schema, mcp_tool_fn fn, void *user);
/* Removes the tool called name. MCP_OK; MCP_EINVAL for a NULL srv or name; MCP_ENOENT
 * when there is none. */
MCP_EXTERN int mcp_server_remove_tool(mcp_server *srv, const char *name);
/*
 * Adds a fixed resource; resources/read looks its exact URI up before any
 * template. A URI or name that is not valid UTF-8, and out of memory while
 * building the listing, give MCP_EINVAL.
 */
MCP_EXTERN int mcp_server_add_resource(mcp_server *srv, const mcp_resource_def *def);
/* Removes the fixed resource of that exact URI (templates are not looked at; sessions
 * subscribed to it stay subscribed). MCP_OK; MCP_EINVAL for a NULL srv or uri;
 * MCP_ENOENT when there is none. */
MCP_EXTERN int mcp_server_remove_resource(mcp_server *srv, const char *uri);
/*
 * Adds a resource template: RFC 6570, levels 1 to 4. Templates are tried in the
 * order they were added, in time linear in the URI's length, and the handler gets
 * the variables percent-decoded (a URI whose value would not be valid UTF-8 does not
 * match):
 *   - "{x}" takes one or more characters other than '/' (going left to right, each
 *     the shortest that lets the rest match; the last literal ends the URI);
 *   - "{+x}" and "{#x}" (after a '#') may take '/' too: "file:///{+path}";
 *   - "{.x}", "{/x}", "{;x}" may be absent from the URI (the variable is then not
 *     set), else begin with their character: "{/owner,repo}", "{/path*}" (a list);
 *   - "{?q,lang}" and "{&x}" read a query's name=value pairs in any order, ignoring
 *     names the template does not have; "{?params*}" collects them in an object;
 *   - several variables in one expression take its items in order; an exploded one
 *     the rest (a list, or an object when they are all name=value); a prefix ("{x:3}")
 *     matches as its variable does.
 * A template that is not RFC 6570 (an unclosed '{', an empty name, an unknown
 * operator) gives MCP_EINVAL, as does running out of memory while building the
 * listing. mcp_uri_template_expand() (common.h) goes the other way.
 */
MCP_EXTERN int mcp_server_add_resource_template(mcp_server *srv,
                                                const mcp_resource_template_def *def);
/* Removes the template whose text is uri_template. MCP_OK; MCP_EINVAL for a NULL srv or
 * uri_template; MCP_ENOENT when there is none. */
MCP_EXTERN int mcp_server_remove_resource_template(mcp_server *srv, const char *uri_template);
/*
 * MCP Apps (SEP-1865, the extension "io.modelcontextprotocol/ui"): a tool whose result a
 * host shows in an HTML view of the server's. The view is a resource (mcp_server_add_app),
 * the tool names it in its _meta (mcp_server_add_app_tool), and a handler can ask whether
 * its client shows views (mcp_ctx_client_supports_apps). The tool's result should still
 * say in its content what the view shows, for hosts without apps.
 */
#define MCP_APPS_EXTENSION "io.modelcontextprotocol/ui"
#define MCP_APPS_MIME_TYPE "text/html;profile=mcp-app"
#define MCP_APPS_RESOURCE_URI_KEY "ui/resourceUri"
enum { MCP_APP_VISIBLE_MODEL = 1, MCP_APP_VISIBLE_APP = 2 };

typedef struct mcp_app_def {
    size_t size;      /* sizeof(mcp_app_def) */
    const char *uri;  /* required: ui://... */
    const char *name; /* required */
    const char *title;
    const char *description;
    const char *html;  /* required: the view's HTML document, copied */
    const char *ui;    /* _meta.ui, JSON object text; NULL: none */
    const char *icons; /* as in mcp_resource_def */
} mcp_app_def;

/*
 * Registers an app's view as a fixed resource: def->uri, MIME type MCP_APPS_MIME_TYPE,
 * def->html its document, read as text (on the loop thread), with _meta.ui on its listing
 * and on the read's contents (def->ui, e.g.
 * {"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}); then
 * declares the extension with settings {}, replacing any the program set. def is copied;
 * any thread, as the registry. mcp_server_remove_resource() takes the view out. MCP_OK;
 * MCP_EINVAL for a NULL srv or def, a size smaller than the size field, a uri that does not
 * begin with "ui://" or is only that, a missing name or html, html that is not valid UTF-8,
 * or a ui that is not a JSON object (duplicate keys included); MCP_ENOMEM, also for a uri
 * that is not valid UTF-8; the errors of mcp_server_add_resource() (MCP_EEXIST when the uri
 * is registered already; MCP_EINVAL for a name that is not valid UTF-8 or bad icons). When
 * declaring the extension fails (MCP_ENOMEM), the view stays registered.
 */
MCP_EXTERN int mcp_server_add_app(mcp_server *srv, const mcp_app_def *def);
/*
 * Adds a tool as mcp_server_add_tool_def() does (def copied; any thread), linked to the
 * view at resource_uri ("ui://...", copied; not checked to be registered): its _meta,
 * def->meta merged in, gets ui.resourceUri, ui.visibility when visibility is not 0
 * (MCP_APP_VISIBLE_MODEL: the model may call it; MCP_APP_VISIBLE_APP: the view may; 0:
 * left as def->meta has it, and absent means both), and the older flat "ui/resourceUri"
 * (MCP_APPS_RESOURCE_URI_KEY) that some hosts still read. It does not declare the
 * extension: mcp_server_add_app() does. MCP_OK; MCP_EINVAL for a NULL srv or def, a size
 * smaller than the size field, a resource_uri that does not begin with "ui://", unknown
 * visibility bits, or a def->meta that is not a JSON object (duplicate keys included) or
 * whose "ui" is not one; MCP_ENOMEM; the errors of mcp_server_add_tool_def() (MCP_EEXIST
 * when the name is registered already).
 */
MCP_EXTERN int mcp_server_add_app_tool(mcp_server *srv, const mcp_tool_def *def,
                                       const char *resource_uri, unsigned visibility);
/*
 * 1 when the request's client declared the extension with MCP_APPS_MIME_TYPE among its
 * "mimeTypes" (at initialize, or in revision 2026-07-28 for this request), else 0: the
 * client shows no view. Handler's thread, as the other mcp_ctx accessors.
 */
MCP_EXTERN int mcp_ctx_client_supports_apps(const mcp_ctx *ctx);

/*
 * Skills (SEP-2640, the extension "io.modelcontextprotocol/skills"): serves the skills
 * under dir, a folder of skill folders (at any depth) each holding a SKILL.md whose
 * YAML frontmatter gives at least "name" (1 to 64 of a-z, 0-9 and inner single '-',
 * the folder's own name) and "description". Declares the extension (directoryRead)
 * and the resources capability, and answers skills/list, skills/get and
 * resources/directory/read; every file of a skill is a resource skill://<path>
 * (read through the template "skill://{+path}"; each SKILL.md is also listed by
 * resources/list), its text when it is UTF-8, else base64. A skill's entry lists its
 * files with their sizes and SHA-256 digests, as a host checks them.
 *
 * The folder is read once, now: files whose names begin with '.' are left out; a skill
 * holding a symbolic link or another special file, a name that is not UTF-8, more than
 * 512 files or 16 MiB, or a frontmatter the library does not read exactly as other
 * SDKs do (src/protocol/frontmatter.c; quote a value to be sure) is not served, with a
 * warning on stderr that says why. A file read later is opened without following
 * links beneath dir, and a file changed since is answered -32603. At most 10,000
 * entries and 16 levels are walked. *count (may be NULL) gets the number of skills
 * served (0 on failure). Once per server, before serving. MCP_OK; MCP_EINVAL for a NULL
 * srv or dir; MCP_EEXIST when skills were added already, or when the program registered
 * one of the extension's methods, the template or a SKILL.md's URI itself; MCP_EIO when
 * dir cannot be read (or holds more than the limits); MCP_ENOMEM. On failure nothing of
 * the extension stays registered.
 */
MCP_EXTERN int mcp_server_add_skills(mcp_server *srv, const char *dir, size_t *count);
/*
 * Adds a prompt. prompts/get checks that every argument is a string and that
 * the required ones are there before the handler runs. An argument whose name
 * is not valid UTF-8, or whose copy fails, is left out without an error; a
 * prompt name that is not valid UTF-8 gives MCP_ENOMEM.
 */
MCP_EXTERN int mcp_server_add_prompt(mcp_server *srv, const mcp_prompt_def *def);
/* Removes the prompt called name. MCP_OK; MCP_EINVAL for a NULL srv or name;
 * MCP_ENOENT when there is none. */
MCP_EXTERN int mcp_server_remove_prompt(mcp_server *srv, const char *name);

/* ---- Messages to every session ----
 *
 * Thread-safe: any thread, handlers included. Each posts its notification to
 * every endpoint serving srv and returns before it is sent; each loop then
 * sends it to its initialized sessions that are still open, on their
 * standalone stream (on HTTP: its open GET stream; with none, the event store
 * under its last GET stream, for the client's next resume, when resumability
 * is on; otherwise it is dropped). A notifications/.../list_changed method
 * follows the rule of the registry above. Returns MCP_OK, also when no
 * session gets it; MCP_ENOMEM when a post fails (the endpoints posted to
 * before still send it).
 */

/* notifications/resources/updated {"uri"} to the sessions subscribed to exactly uri
 * (copied). MCP_EINVAL for a NULL srv or uri. */
MCP_EXTERN int mcp_server_notify_resource_updated(mcp_server *srv, const char *uri);
/*
 * notifications/message with level, logger (copied; NULL or not valid UTF-8:
 * left out) and data (stolen and released on every path; NULL sends null), to
 * each session whose logging level (logging/setLevel; debug until the client
 * sets one) is at or below `level`. MCP_EINVAL for a NULL srv or a level out of
 * range. Should building the params run out of memory, the notification goes
 * without them and MCP_OK is returned (mcp_server_notify_resource_updated too).
 */
MCP_EXTERN int mcp_server_log(mcp_server *srv, mcp_log_level level, const char *logger,
                              json_t *data);
/*
 * Any notification to every initialized session. method is copied and not
 * checked; params is stolen and released on every path (NULL: no params
 * member). MCP_EINVAL for a NULL srv or method.
 */
MCP_EXTERN int mcp_server_notify(mcp_server *srv, const char *method, json_t *params);
/*
 * A notification to one session, from any thread, at any time (outside any handler:
 * notifications/elicitation/complete once a URL-mode elicitation is done, say):
 * session_id as mcp_ctx_session_id() gave it. It goes the way the session's own
 * notifications go: on its GET stream, or kept for it to resume. Sessions shared by
 * several nodes (mcp_http_opts.redis_url) get it from the node that holds their GET
 * stream, wherever it was raised. A session that no longer exists drops it. method is
 * copied; params is stolen and released on every path. MCP_OK; MCP_EINVAL for a NULL
 * srv, session_id or method; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_server_notify_session(mcp_server *srv, const char *session_id,
                                         const char *method, json_t *params);

/* ---- The request context ----
 *
 * The accessors are called on the handler's thread while it runs. What they
 * return is borrowed from the library and valid until the handler returns
 * (copy it, or json_incref() it, to keep it longer); none fails for a valid
 * ctx.
 */

/* The request's id (integer or string), method, params (NULL when absent) and
 * params._meta (NULL when absent or not an object). */
MCP_EXTERN const json_t *mcp_ctx_request_id(const mcp_ctx *ctx);
MCP_EXTERN const char *mcp_ctx_method(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_params(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_meta(const mcp_ctx *ctx);
/* The request's protocol version (a static string: the one its session negotiated, or
 * 2026-07-28), the client's capabilities and its clientInfo (in revision 2026-07-28, those
 * of the request's _meta; {} when the client sent none, as on stateless HTTP for a
 * request that came without initialize). Never NULL. */
MCP_EXTERN const char *mcp_ctx_protocol_version(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_client_capabilities(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_client_info(const mcp_ctx *ctx);
/* The session id (Mcp-Session-Id, or the HTTP+SSE transport's sessionId), NULL on stdio
 * and stateless HTTP. */
MCP_EXTERN const char *mcp_ctx_session_id(const mcp_ctx *ctx);
/* Who the request acts for: the principal of the access token it came with (see
 * <mcp/auth.h>), or NULL when the endpoint has no authorization (stdio, or HTTP
 * without mcp_http_opts.auth). Borrowed for the handler's call. */
MCP_EXTERN const mcp_principal *mcp_ctx_principal(const mcp_ctx *ctx);
/* The server whose handler this is; never NULL. */
MCP_EXTERN mcp_server *mcp_ctx_server(const mcp_ctx *ctx);

/*
 * Non-zero once the request was cancelled: by the client (notifications/cancelled),
 * because its session ended (closed, expired, or its endpoint stopped), or
 * because it waited on a stream whose client stayed away too long. Any thread,
 * while the handler runs.
 */
MCP_EXTERN int mcp_ctx_is_cancelled(const mcp_ctx *ctx);
/*
 * Why it was cancelled, once it is: the reason the client's notifications/cancelled
 * gave (its first 512 bytes), or the library's words for the other causes ("the
 * session ended", "the client closed the request's stream", ...). NULL while it is not
 * cancelled. Borrowed until the handler returns. Any thread, while the handler runs.
 */
MCP_EXTERN const char *mcp_ctx_cancel_reason(const mcp_ctx *ctx);
/*
 * Sleeps up to ms milliseconds (ms <= 0: not at all) on the handler's worker
 * thread, waking as soon as the request is cancelled. Returns MCP_OK after the
 * whole time, MCP_ECANCELED once the request is cancelled (at once if it
 * already is), or MCP_ESTATE from an inline handler (it would block the loop).
 */
MCP_EXTERN int mcp_ctx_sleep(mcp_ctx *ctx, int ms);

/*
 * Sets the JSON-RPC error that answers the request when the handler returns
 * NULL: code, and a message formatted from fmt (not NULL) and copied. A later
 * call replaces it; a handler that returns a result answers with the result.
 * code is not checked, and 0 counts as no error (the NULL is then answered
 * -32603). Returns MCP_OK, MCP_ENOMEM, or MCP_EINVAL when fmt cannot be
 * formatted (the error set before stays). Handler's thread.
 */
MCP_EXTERN int mcp_ctx_set_error(mcp_ctx *ctx, int code, const char *fmt, ...) MCP_PRINTF(3, 4);
/*
 * The same with the error's "data" member: data (stolen; NULL: none), any JSON value,
 * sent as given (URLElicitationRequiredError -32042 carries {"elicitations": [...]},
 * say). A later mcp_ctx_set_error() drops it. Returns as mcp_ctx_set_error(): MCP_OK,
 * MCP_ENOMEM, or MCP_EINVAL when fmt cannot be formatted; on an error data is released
 * and the error set before stays.
 */
MCP_EXTERN int mcp_ctx_set_error_data(mcp_ctx *ctx, int code, json_t *data, const char *fmt, ...)
    MCP_PRINTF(4, 5);

/*
 * Messages related to the request: mcp_ctx_progress, mcp_ctx_log(f) and
 * mcp_ctx_notify send on the request's own stream, handler's thread only.
 *
 * Backpressure: on a worker thread these return once the message is queued for
 * the client, but wait first while the request's stream cannot take more (its
 * reader is behind, or away with as much kept for it as the event store is sure
 * to hold), so a handler that outruns its client never grows memory and never
 * makes the store drop what the client has not had. The wait ends when the
 * client catches up or resumes, or with MCP_ECANCELED when the request is
 * cancelled or its session ends (expiry included); the message is then not
 * sent. A message queued before the request is cancelled is dropped without an
 * error. From an inline handler (the loop thread) they never wait: the message
 * goes out at once, or is dropped when the request is cancelled or its session
 * closed, and MCP_OK is returned.
 */

/*
 * notifications/progress for the request's progressToken (params._meta). MCP_OK
 * without sending anything when the client gave no token. total < 0 (or NaN)
 * leaves total out; message may be NULL, and is left out when it is not valid
 * UTF-8. Whole numbers go out as JSON integers. Returns MCP_OK; MCP_EINVAL when
 * progress is not finite or not greater than the progress of the previous call
 * (even one that failed to send); MCP_ECANCELED; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_ctx_progress(mcp_ctx *ctx, double progress, double total, const char *message);
/*
 * notifications/message with level, logger (copied; NULL or not valid UTF-8:
 * left out) and data (stolen and released on every path; NULL sends null). It
 * is sent only if the session's logging level (debug until the client sets
 * one) lets it through when it goes out; a message filtered out still returns
 * MCP_OK. Returns MCP_OK; MCP_EINVAL for a level out of range; MCP_ECANCELED;
 * MCP_ENOMEM.
 */
MCP_EXTERN int mcp_ctx_log(mcp_ctx *ctx, mcp_log_level level, const char *logger, json_t *data);
/* mcp_ctx_log() with no logger and a printf-formatted string (fmt not NULL) as data. A
 * text that is not valid UTF-8 goes out as data null. MCP_EINVAL also when fmt cannot
 * be formatted. */
MCP_EXTERN int mcp_ctx_logf(mcp_ctx *ctx, mcp_log_level level, const char *fmt, ...)
    MCP_PRINTF(3, 4);
/*
 * Any notification related to this request. method is copied and not checked;
 * params is stolen and released on every path (NULL sends {}). Returns MCP_OK;
 * MCP_EINVAL for a NULL method; MCP_ECANCELED; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_ctx_notify(mcp_ctx *ctx, const char *method, json_t *params);

/*
 * Sends a request to the client on this request's stream and waits on the
 * handler's worker thread for the answer, up to timeout_ms (<= 0: 60 s).
 * method is copied; params (an object, or NULL for none) is stolen and
 * released on every path. *result is set to NULL first; on MCP_OK it is a new
 * reference the caller owns (result may be NULL: the result is then released).
 * On MCP_ERPC *err holds the client's error, its data the caller's
 * (mcp_rpc_error_clear()); after any other answer or failure on the way *err is
 * zeroed, but the failures found before anything is tried (MCP_ESTATELESS,
 * MCP_ESTATE, MCP_EINVAL for a NULL method, MCP_ECANCELED, MCP_ENOMEM) leave
 * *err untouched: zero it before the call. err may be NULL.
 *
 * Returns MCP_OK; MCP_ERPC; MCP_ETIMEDOUT (notifications/cancelled is sent to
 * the client); MCP_ECANCELED when this request is or gets cancelled, its
 * session closing included (a pending request to the client is then withdrawn
 * with notifications/cancelled while the session is open); MCP_ECLOSED when
 * the client can no longer answer (stdio input ended); MCP_ESTATELESS at once,
 * nothing sent, on a stateless transport (mcp_http_opts.stateless), since the
 * client's answer could reach no session; MCP_ESTATE from an inline handler
 * (waiting would block the loop that carries the answer); MCP_EINVAL for a NULL
 * method or params that are not an object; MCP_ENOMEM; or the error of writing
 * the request (MCP_ELIMIT: stdio's output queue is full). MCP_ENOTSUP at once for a
 * request of revision 2026-07-28, on every transport: that revision has no requests from
 * the server (elicitation, sampling and roots go through mcp_ctx_ask).
 */
MCP_EXTERN int mcp_ctx_request(mcp_ctx *ctx, const char *method, json_t *params, int timeout_ms,
                               json_t **result, mcp_rpc_error *err);
/*
 * sampling/createMessage, as mcp_ctx_request(). Before anything else (and so
 * before MCP_ESTATE) it returns MCP_ESTATELESS on a stateless transport, where
 * the client's capabilities are never known, then MCP_ENOTSUP unless the
 * client declared sampling; params is released then too.
 */
MCP_EXTERN int mcp_ctx_create_message(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                                      mcp_rpc_error *err);
/* elicitation/create, as mcp_ctx_create_message(); MCP_ENOTSUP unless the client declared
 * elicitation and negotiated a protocol version that has it (2025-06-18 or later). */
MCP_EXTERN int mcp_ctx_elicit(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                              mcp_rpc_error *err);
/* roots/list, as mcp_ctx_create_message() with params {}; MCP_ENOTSUP unless the client
 * declared roots. */
MCP_EXTERN int mcp_ctx_list_roots(mcp_ctx *ctx, int timeout_ms, json_t **result,
                                  mcp_rpc_error *err);

/*
 * One handler for both eras: asking the client for input.
 *
 * mcp_ctx_elicit, mcp_ctx_create_message and mcp_ctx_list_roots are mcp_ctx_ask with
 * key NULL. In the legacy era mcp_ctx_ask sends the request to the client and waits
 * for its answer, as mcp_ctx_request does. In revision 2026-07-28 a server does not
 * send requests: it answers tools/call, prompts/get or resources/read with an
 * InputRequiredResult, and the client retries the request with its answers (Multi
 * Round-Trip Requests). So there mcp_ctx_ask never waits:
 *   - a question whose answer the retry brings (or an earlier round brought, for the
 *     same question) returns MCP_OK and the answer in *result, at once;
 *   - a question without an answer yet returns MCP_EINPUT and is recorded. The handler
 *     should then return soon (what it returns is dropped; returning NULL is fine, an
 *     error it set is dropped too); the request is answered with an InputRequiredResult
 *     that asks every question recorded in this run, so a handler that wants several
 *     answers at once asks them all before it returns;
 *   - on the retry the handler runs again from the start, with the same arguments.
 *     Questions are matched by key: `key` names it in inputRequests (NULL: "input-N",
 *     N counting the handler's questions in this run, so a handler that asks the same
 *     questions in the same order finds its answers). An answer carried from an
 *     earlier round is used only for the same question (method and params); a
 *     different question is asked again. An answer that is not a result of its method
 *     fails the request with -32602.
 * What a handler sees on a retry: mcp_ctx_round() counts the rounds (1 first);
 * mcp_ctx_round_state() is the JSON value it kept with mcp_ctx_keep_state() in the round
 * before (NULL in the first round and in the legacy era); mcp_ctx_params() holds the
 * retry's inputResponses and requestState beside the arguments. The requestState the
 * client echoes is sealed (AES-256-GCM under the server's key, mcp_server_set_state_key):
 * the client can neither read nor change the answers and state it carries, and it is
 * refused (-32602) when tampered with, expired, presented with another method, tool,
 * prompt, resource or arguments, or under the JSON-RPC id of the request it came from.
 * A request that still asks after 32 rounds fails.
 *
 * method is elicitation/create, sampling/createMessage or roots/list, and key, when not
 * NULL, 1 to 200 bytes (else MCP_EINVAL);
 * params is stolen (NULL: {}). MCP_ENOTSUP when the client did not declare the
 * capability (for this request, in the modern era) or what the question needs of it
 * (elicitation.url for "mode": "url"; form mode; sampling.tools for "tools",
 * sampling.context for an "includeContext" other than "none"), or when the request's method cannot
 * take an InputRequiredResult (the modern era: only the three above); MCP_ELIMIT for
 * more than 32 questions in a round or a key asked twice in one; the legacy errors of
 * mcp_ctx_request otherwise.
 */
MCP_EXTERN int mcp_ctx_ask(mcp_ctx *ctx, const char *key, const char *method, json_t *params,
                           int timeout_ms, json_t **result, mcp_rpc_error *err);
MCP_EXTERN int mcp_ctx_round(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_round_state(const mcp_ctx *ctx);
/* Keeps state (stolen; NULL drops it) for the next round: it travels sealed in the
 * requestState, so keep it small (the whole requestState is at most 64 KiB). Never
 * fails: MCP_OK. A state too large to seal fails the request with -32603 when the round
 * ends. */
MCP_EXTERN int mcp_ctx_keep_state(mcp_ctx *ctx, json_t *state);
/*
 * MCP_OK when the client declared `capability` (e.g. "sampling") for this request.
 * Otherwise the request's error becomes MissingRequiredClientCapability (-32021, HTTP
 * 400 in revision 2026-07-28) with data {"requiredCapabilities": {capability: {}}} and
 * MCP_ENOTSUP is returned: the handler then returns NULL.
 */
MCP_EXTERN int mcp_ctx_require_capability(mcp_ctx *ctx, const char *capability);

/*
 * Turns the tools/call this handler serves into a task (see mcp_server_set_tasks): the
 * client is answered now with the task's id, and the handler goes on; what it returns
 * becomes the task's result. Made for a handler that first asks its questions in Multi
 * Round-Trip rounds, or that decides from its arguments whether the work is long. Worker
 * thread. MCP_OK, also when the call is a task already; MCP_ENOTSUP when the request did
 * not declare the extension (revision 2026-07-28 only) or is not a tools/call, or srv
 * offers no tasks: the handler then answers as usual; MCP_ELIMIT when the caller holds as
 * many tasks as it may (the handler may answer at once, or fail); MCP_ECANCELED when the
 * request was cancelled; MCP_ESTATE from an inline handler; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_ctx_start_task(mcp_ctx *ctx);
/* The id of the task this handler runs, or NULL when it runs no task. Borrowed until the
 * handler returns. */
MCP_EXTERN const char *mcp_ctx_task_id(const mcp_ctx *ctx);

/*
 * SEP-1699 SSE polling: closes the SSE stream that carries this request's
 * messages, after an event that names where to resume, so the client
 * reconnects (GET with Last-Event-ID) after retry_ms (0: at once; < 0: the
 * transport's configured retry interval) and resumes. The request keeps
 * running; what it sends meanwhile is stored and replayed. Only on a resumable
 * Streamable HTTP session of protocol 2025-11-25 or later, where the client
 * was told an event id to resume from (with JSON responses, the request is
 * then answered as an SSE stream). Handler's thread, worker or inline (it
 * waits for the loop from a worker). Returns MCP_OK, also when the stream's
 * client had already gone; MCP_ENOTSUP otherwise (stdio, the HTTP+SSE transport,
 * stateless, no event store, older clients); MCP_ECLOSED when the request was
 * cancelled or its session closed; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_ctx_close_sse_stream(mcp_ctx *ctx, int retry_ms);
/*
 * Closes the session's standalone (GET) stream that carries server messages
 * (the newest one connected), or all of them when `all`, the same way: what
 * the server sends meanwhile is stored under the last one closed. MCP_OK, also
 * when none is open; MCP_ENOTSUP, MCP_ECLOSED and MCP_ENOMEM as above.
 */
MCP_EXTERN int mcp_ctx_close_standalone_streams(mcp_ctx *ctx, int all, int retry_ms);

/* ---- Endpoints on the caller's loop ---- */

/*
 * An endpoint serves an mcp_server over one transport, on a libuv loop the
 * caller owns and runs (uv_loop_t; this header only declares the struct, so
 * it can be included without <uv.h>). The endpoint functions must be called
 * on that loop's thread, and the endpoint's callbacks run there; handlers of
 * tools, resources and prompts still run on the server's workers. An endpoint
 * installs no signal handler: the mcp_serve_* functions below are the short
 * way that owns a loop and the signals.
 *
 * Stopping drains: no new connection or request is taken, requests in flight
 * may finish until the drain deadline (their answers delivered and, on
 * resumable streams, stored), then the rest are cancelled, streams end
 * cleanly and sessions close. Once the endpoint's handles are all closed (and
 * every handler it started has returned) the done callback runs, exactly
 * once: from then on nothing of the endpoint is left on the loop, so
 * uv_loop_close() succeeds once the host's own handles are closed too. Any
 * function here may be called from inside any callback of ours, a route
 * handler or an inline tool handler included.
 *
 * srv is borrowed by an endpoint until its done callback has run. Making an
 * endpoint sets SIGPIPE to SIG_IGN for the whole process, so that a peer that
 * vanishes mid-write gives an error instead of killing it.
 */
struct uv_loop_s;

/* Runs once, on the loop thread, when an endpoint has ended (see above). status is
 * MCP_OK, or the error that ended it (MCP_EIO: stdio output failed; an HTTP endpoint
 * always gives MCP_OK). It may free the endpoint. */
typedef void (*mcp_endpoint_done_fn)(void *user, int status);

/* ---- stdio transport ---- */

typedef struct mcp_stdio_endpoint mcp_stdio_endpoint;

/*
 * Serves one session over a pair of file descriptors (newline-delimited JSON: a
 * pipe, a socket, stdin and stdout; in_fd and out_fd may be one socket) on
 * `loop`, and writes the endpoint, which the caller owns, to *out. Loop
 * thread. The descriptors stay the caller's: they are not closed. A line
 * longer than the server's maximum message size is answered with an error and
 * skipped. The endpoint ends by itself when its input ends, or reading it
 * fails (the spec's stdio shutdown: answers still being made are written
 * first, with no deadline; requests to the client fail at once), when writing
 * fails, or after mcp_stdio_endpoint_stop(); then done(user, status) runs (done
 * may be NULL). Returns MCP_OK; MCP_EINVAL (a NULL loop, srv or out, a negative
 * descriptor), MCP_ENOMEM, MCP_EIO (a descriptor libuv cannot use). On failure
 * *out is NULL, done never runs, and handles already made close by themselves:
 * run the loop before closing it.
 */
MCP_EXTERN int mcp_stdio_endpoint_new(struct uv_loop_s *loop, mcp_server *srv, int in_fd,
                                      int out_fd, mcp_endpoint_done_fn done, void *user,
                                      mcp_stdio_endpoint **out);
/*
 * Stops reading and ends the endpoint: requests in flight may finish for drain_ms
 * (0: cancelled at once; < 0: no deadline), then done runs; with none in flight
 * it ends at once. Loop thread. MCP_OK; MCP_EINVAL for a NULL ep; MCP_ESTATE when
 * it is already ending (its input ended, or a stop) or has ended. While the
 * session is still open, a drain_ms of 0 or more then sets the deadline anew at
 * drain_ms from now, which may be later than the one before as well as sooner.
 */
MCP_EXTERN int mcp_stdio_endpoint_stop(mcp_stdio_endpoint *ep, int drain_ms);
/*
 * Frees the endpoint; ep must not be used after this call. After done ran, at
 * once (from inside done, once done returns); before, it stops the endpoint
 * with no drain and is freed as it ends (done still runs). Loop thread. NULL
 * is allowed.
 */
MCP_EXTERN void mcp_stdio_endpoint_free(mcp_stdio_endpoint *ep);

/*
 * Serves one session over stdin and stdout (newline-delimited JSON), blocking
 * the calling thread (any thread) on a loop of its own, until stdin ends (then
 * requests in flight finish, with no deadline) or SIGTERM or SIGINT arrives
 * (the first drains for 10 s, a second stops at once). For the call's duration
 * it watches both signals for the whole process (libuv signal handles), and it
 * sets SIGPIPE to SIG_IGN. Logs go to stderr only. Returns MCP_OK on a clean
 * end (a failed read counts as the end of input); MCP_EIO when output failed
 * or the loop could not be made; MCP_EINVAL for a NULL srv; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_serve_stdio(mcp_server *srv);
/* The same over any pair of file descriptors (pipes, sockets, files), which are not
 * closed; MCP_EINVAL also for a negative descriptor, MCP_EIO for one libuv cannot use. */
MCP_EXTERN int mcp_serve_fds(mcp_server *srv, int in_fd, int out_fd);

/* ---- Streamable HTTP transport (and the HTTP+SSE transport) ---- */

/*
 * A request to a path of the endpoint's listener that is not MCP's (see
 * mcp_http_route): what arrived, and the one answer it must get. Valid only
 * during the route's callback.
 */
typedef struct mcp_http_exchange mcp_http_exchange;
/*
 * Answers a request on an extra route. It runs on the loop thread and must
 * answer with mcp_http_exchange_respond() before it returns; one that does not
 * is answered 500. Host and Origin were checked as for MCP requests.
 */
typedef void (*mcp_http_route_fn)(mcp_http_exchange *x, void *user);

/* An extra route on an endpoint's listener: `path` exactly (no query), for one
 * method or any (method NULL). Strings are copied. */
typedef struct mcp_http_route {
    const char *method; /* "GET", ...; NULL: any */
    const char *path;   /* NULL ends an array of routes */
    mcp_http_route_fn fn;
    void *user;
} mcp_http_route;

/*
 * Options of mcp_http_endpoint_new and mcp_serve_http. A zeroed struct gives
 * the safe defaults; strings and arrays need only live for the call.
 */
typedef struct mcp_http_opts {
    /* The caller's sizeof(mcp_http_opts), so the struct can grow: fields added
     * later read as zero for a program built before them. 0 stands for the layout
     * of libmcp 0.2 (this one), in later releases too. */
    size_t size;
    const char *listen;   /* "HOST:PORT" (IPv6 in brackets); default 127.0.0.1:8080;
                             port 0 picks a free port (see on_listen) */
    const char *path;     /* the MCP endpoint; default "/mcp" */
    int json_response;    /* answer requests with one application/json body, not SSE; a
                             request that sends messages of its own (progress, logs,
                             requests to the client) before its answer gets an SSE stream
                             instead, so they arrive before the answer */
    int stateless;        /* no sessions: each POST stands alone; GET and DELETE get 405;
                             requests to the client fail with MCP_ESTATELESS, and
                             initialize offers no listChanged and no subscribe */
    int disable_get;      /* no standalone stream: GET gets 405 */
    int disable_http_sse; /* do not serve the 2024-11-05 endpoints GET /sse, POST /messages */
    const char *const *allowed_origins; /* NULL-terminated exact origins; NULL: loopback origins
                                           only (http or https, any port) */
    const char *const *allowed_hosts;   /* NULL-terminated host names; NULL: loopback names when
                                           bound to a loopback address, any name otherwise */
    const char *const *cors_origins;    /* NULL: no CORS headers; "*" allows every origin */
    int keepalive_ms;                   /* SSE keep-alive comment interval; 0: 15000; < 0: none */
    int max_sessions;                   /* 0: 1000; past it, a new session takes the place
                                           of the least recently used idle one (no stream,
                                           no request); 503 only when every one is busy */
    int session_idle_ms;                /* idle sessions expire after it; 0: 30 minutes */
    size_t max_body;                    /* request body limit; 0: 4 MiB */
    int max_get_streams;      /* open GET streams (standalone and resumed) per session; more
                                 get 429; 0: 16 */
    size_t max_queued;        /* bytes a slow reader may leave queued on one stream before it
                                 is cut off (it resumes and loses nothing); 0: 4 MiB. A handler
                                 whose stream is behind waits in its mcp_ctx calls long before */
    unsigned max_connections; /* open connections; 0: the file-descriptor limit (RLIMIT_NOFILE)
                                 less 64. When they run short, connections that have not sent
                                 their headers or sit idle give way, the source holding the
                                 most first; 503 only when none can */
    unsigned max_connections_per_source; /* from one address; more get 503; 0: no limit */
    /* Resumability (on unless disabled): every SSE event gets an id and is kept in the
     * event store, SSE streams of 2025-11-25 sessions begin with a priming event, and
     * a client resumes a stream with GET and Last-Event-ID. */
    int disable_resumability;
    int retry_ms;                       /* the retry interval priming events announce; 0: 1000 */
    mcp_event_store *store;             /* borrowed until done ran; NULL: an in-memory store */
    mcp_memory_store_opts memory_store; /* bounds of that in-memory store */
    /* Called once listening, with the endpoint's URL (e.g. to learn the port). */
    void (*on_listen)(const char *url, void *user);
    void *user;
    const mcp_http_route *routes; /* extra routes, ended by one with path NULL */
    int drain_ms; /* mcp_serve_http: how long SIGTERM and SIGINT let requests in flight
                     finish; 0: 10000; < 0: no deadline. A second signal stops at once */
    /*
     * Scale-out: "redis://[:password@]host[:port][/db]" (NULL: none). Nodes given the
     * same Redis share their sessions, streams and events (revisions 2024-11-05 to
     * 2025-11-25), so that behind a load balancer any node serves any request of a
     * session and resumes any stream, replaying from Redis and then following the
     * node that runs the request. store is then not used, and memory_store's bounds
     * apply to the events kept in Redis (max_events and ttl_ms per stream, an event
     * larger than max_bytes is not kept). The
     * first connection is made here (an endpoint that cannot reach Redis does not
     * start: MCP_ECONNECT); later losses are recovered in the background, and
     * meanwhile what needs Redis gets 503.
     */
    const char *redis_url;
    const char *redis_prefix; /* keys and channels begin with it; NULL: "mcp:" */
    /* With redis_url: where other nodes reach this one, "host:port" (NULL: the address
     * it listens on, unless that is a wildcard such as 0.0.0.0 or ::). Sessions that
     * only their own node can serve (a gateway's, whose child process runs there) have
     * their requests relayed to it from the other nodes. */
    const char *cluster_address;
    /* Bytes queued for writing on all connections together, readers that fall behind
     * and pipelined answers alike (with the bookkeeping of each queued write); 0:
     * 32 MiB. Past it, the streams (and connections) with the largest backlog are cut
     * first, until the total is under seven eighths of it, so that any number of
     * clients that do not read cost at most this, however many streams a broadcast
     * reaches. A cut stream of a 2025-11-25 session resumes with Last-Event-ID and
     * loses nothing (its events stay in the event store); a cut subscriptions/listen
     * (2026-07-28) ends as when its client closes it, and its client listens again;
     * an HTTP+SSE (2024-11-05) session ends with its stream. Streams that only carry
     * notifications (standalone GET, subscriptions/listen, HTTP+SSE) also keep a
     * small kernel send buffer (SO_SNDBUF 16 KiB), so that what the kernel holds for
     * them is bounded too. */
    size_t max_queued_total;
    /* With redis_url: live sessions in the whole deployment, counted in Redis whatever
     * each node's max_sessions (0: 100000). Past it a new session's initialize gets
     * 503; sessions that end or expire make room. A session also gets 503 when Redis
     * refuses its record (full). */
    size_t cluster_max_sessions;
    /* Authorization (see <mcp/auth.h>): NULL, the default, lets every request in;
     * otherwise every request to the MCP endpoint and the HTTP+SSE endpoints needs a
     * bearer token that opts->auth's verifier accepts, and the Protected Resource
     * Metadata document is served. Copied (its verifier is kept as given). */
    const mcp_auth_opts *auth;
    /* HTTPS: the endpoint speaks TLS itself when both files are given (NULL: plain
     * HTTP). PEM files: the certificate followed by its chain, and the unencrypted
     * private key. TLS 1.2 and 1.3 only, forward-secret AEAD suites, ALPN http/1.1,
     * no renegotiation. The files are read again by mcp_http_endpoint_reload_tls()
     * (mcp_serve_http: on SIGHUP). A file that cannot be used is MCP_EIO from
     * mcp_http_endpoint_new, with the reason logged. */
    const char *tls_cert_file;
    const char *tls_key_file;
    /* Time a client has to finish its TLS handshake from accept; 0: 10000 ms. */
    unsigned tls_handshake_timeout_ms;
    /* Handshakes in progress at once; past it, the one that has waited longest is
     * closed for the new one, so that a crowd of clients that never finish theirs
     * cannot keep others out; 0: 128. */
    unsigned tls_max_handshakes;
} mcp_http_opts;

typedef struct mcp_http_endpoint mcp_http_endpoint;

/*
 * Serves srv over Streamable HTTP (protocol 2025-03-26 and later) and the
 * HTTP+SSE transport (2024-11-05) on `loop`, and writes the endpoint,
 * which the caller owns, to *out once it listens; then on_listen(url, user)
 * runs, from inside this call. Loop thread. opts is copied (NULL: the
 * defaults): its strings and arrays need only live for the call; opts->store
 * is borrowed and must stay valid until done has run (it is attached to the
 * loop here and detached before done runs; stateless or not resumable, it is
 * not used), and on_listen, routes' fn and the
 * user pointers are kept as given. Returns MCP_OK; MCP_EINVAL (a NULL loop,
 * srv or out; an opts->size smaller than the size field; a listen address
 * that is not HOST:PORT with an IP literal or localhost; a path not beginning
 * with '/'); MCP_EINVAL or MCP_EEXIST for a route of opts->routes that
 * mcp_http_endpoint_route() refuses; MCP_ENOMEM (also for a memory_store.size
 * smaller than its size field); MCP_EIO when it cannot listen (the address is
 * in use) or the store cannot attach. On failure *out is NULL and handles
 * already made close by themselves: run the loop before closing it.
 */
MCP_EXTERN int mcp_http_endpoint_new(struct uv_loop_s *loop, mcp_server *srv,
                                     const mcp_http_opts *opts, mcp_http_endpoint **out);
/*
 * Reads the endpoint's certificate and key files again (after a renewal): new
 * connections use them from now on; connections already open keep theirs, so
 * nothing is dropped. Loop thread. MCP_OK; MCP_EINVAL for a NULL ep or one
 * without HTTPS; MCP_EIO when the files cannot be used (the reason is logged,
 * and the certificate in use stays); MCP_ENOMEM.
 */
MCP_EXTERN int mcp_http_endpoint_reload_tls(mcp_http_endpoint *ep);
/* The endpoint's URL, "http://HOST:PORT/PATH" ("https://" with TLS; IPv6 in brackets), owned by ep
 * and valid until it is freed; NULL for a NULL ep. Loop thread. */
MCP_EXTERN const char *mcp_http_endpoint_url(const mcp_http_endpoint *ep);
/* The port it listens on (useful with port 0); 0 when ep is NULL, and once its HTTP
 * server has stopped (late in a stop, and after done). Loop thread. */
MCP_EXTERN int mcp_http_endpoint_port(const mcp_http_endpoint *ep);
/* 1 once a stop began, and after it ended (a health check can answer 503 then); 0 when
 * none began or ep is NULL. Loop thread. */
MCP_EXTERN int mcp_http_endpoint_stopping(const mcp_http_endpoint *ep);
/*
 * Adds an extra route (see mcp_http_route), at any time; routes still answer
 * while a stop drains. Loop thread. method and path are copied; fn and user
 * are kept as given (user must stay valid until done has run). A method is
 * matched case-sensitively (NULL: any), a path exactly, without the query.
 * Routes are tried in the order they were added, so of a route for any method
 * and one for GET on the same path the first added wins; a path routed for
 * other methods only is answered 405. Returns MCP_OK; MCP_EINVAL (a NULL ep,
 * path or fn, a path not starting with '/', an empty method); MCP_EEXIST when
 * the path is the MCP endpoint's, an HTTP+SSE one (/sse, /messages, unless
 * disabled) or already routed for the same method (NULL counting as a method
 * of its own); MCP_ENOMEM.
 */
MCP_EXTERN int mcp_http_endpoint_route(mcp_http_endpoint *ep, const char *method, const char *path,
                                       mcp_http_route_fn fn, void *user);
/*
 * Stops the endpoint, draining for drain_ms (0: nothing waits; < 0: no deadline;
 * see "Endpoints on the caller's loop" above), then done(user, MCP_OK) runs,
 * from a later loop turn (done may be NULL; user is kept until then). Loop
 * thread. MCP_OK; MCP_EINVAL for a NULL ep; MCP_ESTATE when a stop is already
 * under way or over: a drain_ms that ends sooner then brings its deadline
 * forward (never back), and done and user of this call are ignored.
 */
MCP_EXTERN int mcp_http_endpoint_stop(mcp_http_endpoint *ep, int drain_ms,
                                      mcp_endpoint_done_fn done, void *user);
/*
 * Frees the endpoint (and the in-memory store it made); ep must not be used
 * after this call. After its done ran, at once (from inside done, once done
 * returns); before, it stops it with no drain and is freed as it ends (a done
 * already given still runs). Loop thread. NULL is allowed.
 */
MCP_EXTERN void mcp_http_endpoint_free(mcp_http_endpoint *ep);

/* What an HTTP endpoint's transport has done so far, for monitoring. */
typedef struct mcp_http_stats {
    size_t size;                        /* set by the caller: sizeof(mcp_http_stats) */
    unsigned long streams;              /* response streams open now (POST and GET) */
    unsigned long long streams_total;   /* opened so far */
    unsigned long long resumes;         /* GETs with Last-Event-ID taken */
    unsigned long long replayed_events; /* events sent again by them */
    unsigned long long messages_out;    /* messages sent to clients (not replays) */
    unsigned long long bytes_out;       /* their bytes */
    /* Authorization (mcp_http_opts.auth), requests to the MCP and HTTP+SSE endpoints:
     * let in (auth_cached of them on a token the cache knew), and refused: no token
     * (401), a token that failed verification (401 invalid_token), a scope missing
     * (403, a tool's or method's included), a malformed request (400) and tokens
     * that could not be checked (503). */
    unsigned long long auth_passed, auth_cached;
    unsigned long long auth_no_token, auth_invalid_token, auth_insufficient_scope;
    unsigned long long auth_bad_request, auth_unavailable;
    /* HTTPS: handshakes in progress now, and those closed to make way for newer ones
     * (past tls_max_handshakes). */
    unsigned long tls_handshakes;
    unsigned long long tls_handshakes_dropped;
} mcp_http_stats;

/*
 * Fills *stats (its size set by the caller). Loop thread. MCP_OK; MCP_EINVAL for a
 * NULL argument or a size smaller than the size field.
 */
MCP_EXTERN int mcp_http_endpoint_stats_get(const mcp_http_endpoint *ep, mcp_http_stats *stats);

/*
 * The endpoint's counters (those of mcp_http_stats) and the process's own (CPU seconds,
 * resident memory, open and allowed file descriptors, named as Prometheus's client
 * libraries name them) in the Prometheus text format, version 0.0.4, appended to buf
 * (size bytes) at *len, then NUL-terminated; *len becomes the new length. Loop thread.
 * MCP_OK; MCP_EINVAL for a NULL argument; MCP_ELIMIT when it does not fit (4 KiB is
 * enough; *len is then left as it was, buf up to it too and NUL-terminated there, what
 * follows it undefined); what mcp_http_endpoint_stats_get() returns when it fails. It reads
 * /proc/self/fd, a directory entry per open file: a scrape of a process with tens of
 * thousands of connections costs that many entries, on the loop thread.
 */
MCP_EXTERN int mcp_http_endpoint_metrics(const mcp_http_endpoint *ep, char *buf, size_t size,
                                         size_t *len);
/*
 * A route (mcp_http_route_fn) that answers with mcp_http_endpoint_metrics() of the
 * endpoint that took the request: 200, Content-Type text/plain; version=0.0.4, and
 * Cache-Control no-store; 500 when the figures cannot be had. user is not used. Register
 * it as {.method = "GET", .path = "/metrics", .fn = mcp_http_metrics_route} in
 * mcp_http_opts.routes or with mcp_http_endpoint_route(). As on every route, Host and
 * Origin are checked but no bearer token is asked for (mcp_http_opts.auth guards the
 * MCP endpoints): bind the endpoint to an address that only those who may read the
 * figures can reach, or serve them on an endpoint of their own.
 */
MCP_EXTERN void mcp_http_metrics_route(mcp_http_exchange *x, void *user);

/*
 * What a route's request holds. x, and the strings these return (owned by the
 * exchange), are valid only during the route's callback, on the loop thread.
 * The method ("GET", ...) and the path as sent (not percent-decoded; of an
 * absolute-form target, its path); never NULL.
 */
MCP_EXTERN const char *mcp_http_exchange_method(const mcp_http_exchange *x);
MCP_EXTERN const char *mcp_http_exchange_path(const mcp_http_exchange *x);
/* The query after '?' (without it), NULL when there is none. */
MCP_EXTERN const char *mcp_http_exchange_query(const mcp_http_exchange *x);
/* The first header called `name` (any case), its surrounding whitespace removed;
 * NULL when there is none or name is NULL. */
MCP_EXTERN const char *mcp_http_exchange_header(const mcp_http_exchange *x, const char *name);
/* The body, decoded from chunked transfer coding if it was sent so (NUL-terminated,
 * "" when none); len may be NULL. */
MCP_EXTERN const char *mcp_http_exchange_body(const mcp_http_exchange *x, size_t *len);
/* The endpoint whose listener took the request; never NULL. */
MCP_EXTERN mcp_http_endpoint *mcp_http_exchange_endpoint(const mcp_http_exchange *x);
/*
 * Answers the request, once, during the route's callback: status 200..599,
 * headers a NULL-terminated array of at most 16 name, value pairs (NULL for
 * none; no CR, LF or NUL in them; Content-Length, Transfer-Encoding and
 * Connection are the library's), and `len` bytes of body (NULL only when len
 * is 0). Headers and body are copied as needed: they need only live for the
 * call. CORS headers are added when configured; a HEAD request gets no body,
 * nor do 204 and 304. Returns MCP_OK; MCP_ECLOSED (the client is gone) or
 * MCP_ENOMEM (the connection is closed), after which the exchange counts as
 * answered; MCP_EINVAL (a NULL x, a status out of range, a header array with a
 * NULL value or too many pairs, a bad or reserved header, a body of 4 GiB or
 * more), after which it is still to be answered; MCP_ESTATE when it was
 * answered already.
 */
MCP_EXTERN int mcp_http_exchange_respond(mcp_http_exchange *x, int status,
                                         const char *const *headers, const void *body, size_t len);

/*
 * Serves srv over Streamable HTTP and the HTTP+SSE transport, blocking
 * the calling thread (any thread) on a loop of its own, until SIGINT or
 * SIGTERM: the first drains (opts->drain_ms), a second stops at once; it
 * returns once the endpoint has ended. Nothing else stops it: a program that
 * must stop it otherwise makes its own loop with mcp_http_endpoint_new(). For
 * the call's duration it watches both signals for the whole process (libuv
 * signal handles), and SIGHUP too when it serves HTTPS: the certificate and
 * key files are read again (mcp_http_endpoint_reload_tls). opts as for
 * mcp_http_endpoint_new() (NULL: the defaults). Returns MCP_OK after the stop; MCP_EINVAL for a
 * NULL srv or bad options, MCP_EEXIST, MCP_ENOMEM or MCP_EIO (cannot listen, the store cannot
 * attach, or the loop could not be made) as mcp_http_endpoint_new() gives them.
 */
MCP_EXTERN int mcp_serve_http(mcp_server *srv, const mcp_http_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
