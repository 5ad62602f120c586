/*
 * libmcp server API.
 *
 * An mcp_server holds what the server offers (tools, resources, resource
 * templates, prompts, completion, logging) and serves any number of sessions
 * over one or more transports. Threading: the transport's loop thread owns all
 * sessions; tool, resource and prompt handlers run on a worker pool unless
 * marked MCP_HANDLER_INLINE. Registration functions are thread-safe.
 */
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include <mcp/common.h>
#include <mcp/store.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_server mcp_server;

/*
 * The context of one incoming request, given to its handler. It is valid
 * until the handler returns; every mcp_ctx_* function may be called from the
 * handler's own thread (a worker, or the loop for inline handlers).
 */
typedef struct mcp_ctx mcp_ctx;

/* Run the handler on the loop thread (it must be fast and never block). */
#define MCP_HANDLER_INLINE 0x1u

/*
 * Handlers return a new reference to the method's result object. To answer
 * with a JSON-RPC error instead, call mcp_ctx_set_error() and return NULL; a
 * NULL without an error set is answered with -32603. When the request was
 * cancelled the result is dropped (and released by the library).
 */
typedef json_t *(*mcp_tool_fn)(mcp_ctx *ctx, const json_t *args, void *user);
typedef json_t *(*mcp_resource_fn)(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user);
typedef json_t *(*mcp_prompt_fn)(mcp_ctx *ctx, const json_t *args, void *user);
/*
 * Completion: returns a JSON array of candidate strings (new reference); the
 * library truncates it to 100 and fills in total and hasMore. `ref` is the
 * request's ref object, `context_args` its context.arguments or NULL.
 */
typedef json_t *(*mcp_complete_fn)(mcp_ctx *ctx, const json_t *ref, const char *arg_name,
                                   const char *arg_value, const json_t *context_args, void *user);
/* A client notification the library does not handle itself. Loop thread. */
typedef void (*mcp_server_notification_fn)(mcp_server *srv, const char *session_id,
                                           const char *method, const json_t *params, void *user);

/*
 * Definitions are copied by the add functions: strings and JSON texts need
 * only live for the call. Zero or NULL fields mean "absent". New fields are
 * only ever appended, so designated initialisers stay valid.
 *
 * Each definition begins with size: sizeof the struct as the program was
 * compiled (e.g. .size = sizeof(mcp_tool_def)), or 0 for this release's layout.
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
} mcp_resource_def;

/*
 * A resource template (RFC 6570 level 1: "{name}" expands to one path segment
 * or less, without '/'). The handler gets the variables as a JSON object of
 * strings.
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
} mcp_prompt_def;

/* ---- Lifetime and settings ---- */

/* Returns a new server, or NULL on ENOMEM. name and version are copied. */
MCP_EXTERN mcp_server *mcp_server_new(const char *name, const char *version);
/*
 * Frees the server. Call it only after every transport serving it has
 * returned; handlers still running are waited for.
 */
MCP_EXTERN void mcp_server_free(mcp_server *srv);

/* Optional serverInfo.title and the initialize result's instructions (copied). */
MCP_EXTERN int mcp_server_set_title(mcp_server *srv, const char *title);
MCP_EXTERN int mcp_server_set_instructions(mcp_server *srv, const char *instructions);
/* Items per page of every list method (default 100, 1..10000). */
MCP_EXTERN int mcp_server_set_page_size(mcp_server *srv, int page_size);
/* Worker threads for handlers (default 8, 1..256); only before serving. */
MCP_EXTERN int mcp_server_set_workers(mcp_server *srv, int workers);
/* Largest message accepted from a client in bytes (default 4 MiB). */
MCP_EXTERN int mcp_server_set_max_message_size(mcp_server *srv, size_t bytes);
/* Completion handler; declares the "completions" capability. */
MCP_EXTERN int mcp_server_set_completion(mcp_server *srv, mcp_complete_fn fn, void *user);
/* Hook for client notifications the library does not handle. */
MCP_EXTERN int mcp_server_on_notification(mcp_server *srv, mcp_server_notification_fn fn,
                                          void *user);

/* ---- Registry (thread-safe; changes send list_changed to live sessions) ---- */

/* MCP_EEXIST when the name is taken, MCP_EINVAL for a missing field or bad JSON. */
MCP_EXTERN int mcp_server_add_tool_def(mcp_server *srv, const mcp_tool_def *def);
/* Shorthand for a tool with a name, a description and an input schema. */
MCP_EXTERN int mcp_server_add_tool(mcp_server *srv, const char *name, const char *description,
                                   const char *input_schema, mcp_tool_fn fn, void *user);
MCP_EXTERN int mcp_server_remove_tool(mcp_server *srv, const char *name);
MCP_EXTERN int mcp_server_add_resource(mcp_server *srv, const mcp_resource_def *def);
MCP_EXTERN int mcp_server_remove_resource(mcp_server *srv, const char *uri);
MCP_EXTERN int mcp_server_add_resource_template(mcp_server *srv,
                                                const mcp_resource_template_def *def);
MCP_EXTERN int mcp_server_add_prompt(mcp_server *srv, const mcp_prompt_def *def);
MCP_EXTERN int mcp_server_remove_prompt(mcp_server *srv, const char *name);

/* ---- Messages to every session (thread-safe) ---- */

/* notifications/resources/updated to the sessions subscribed to uri. */
MCP_EXTERN int mcp_server_notify_resource_updated(mcp_server *srv, const char *uri);
/* notifications/message to every session whose level lets it through; data stolen. */
MCP_EXTERN int mcp_server_log(mcp_server *srv, mcp_log_level level, const char *logger,
                              json_t *data);
/* Any notification to every initialized session; params stolen (may be NULL). */
MCP_EXTERN int mcp_server_notify(mcp_server *srv, const char *method, json_t *params);

/* ---- The request context ---- */

/* The request's id (integer or string), method, params and params._meta (or NULL). */
MCP_EXTERN const json_t *mcp_ctx_request_id(const mcp_ctx *ctx);
MCP_EXTERN const char *mcp_ctx_method(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_params(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_meta(const mcp_ctx *ctx);
/* The session's negotiated version, client capabilities and clientInfo. */
MCP_EXTERN const char *mcp_ctx_protocol_version(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_client_capabilities(const mcp_ctx *ctx);
MCP_EXTERN const json_t *mcp_ctx_client_info(const mcp_ctx *ctx);
/* The session id, or NULL when the transport has none (stdio). */
MCP_EXTERN const char *mcp_ctx_session_id(const mcp_ctx *ctx);
MCP_EXTERN mcp_server *mcp_ctx_server(const mcp_ctx *ctx);

/* Non-zero once the client cancelled the request or the session ended. */
MCP_EXTERN int mcp_ctx_is_cancelled(const mcp_ctx *ctx);
/*
 * Sleeps up to ms milliseconds. Returns MCP_OK, or MCP_ECANCELED as soon as
 * the request is cancelled. On the loop thread (inline handlers) MCP_ESTATE.
 */
MCP_EXTERN int mcp_ctx_sleep(mcp_ctx *ctx, int ms);

/* Sets the JSON-RPC error the handler's NULL return is answered with. */
MCP_EXTERN int mcp_ctx_set_error(mcp_ctx *ctx, int code, const char *fmt, ...) MCP_PRINTF(3, 4);

/*
 * Backpressure, for mcp_ctx_progress, mcp_ctx_log(f) and mcp_ctx_notify: on a
 * worker thread these return once the message is queued for the client, but
 * wait first while the request's stream cannot take more (its reader is behind,
 * or away with as much kept for it as the event store is sure to hold), so a
 * handler that outruns its client never grows memory and never makes the store
 * drop what the client has not had. The wait ends when the client catches up
 * or resumes, or with MCP_ECANCELED when the request is cancelled or its session
 * ends (expiry included); the message is then not sent.
 */

/*
 * notifications/progress for the request's progressToken; MCP_OK without
 * sending anything when the client gave no token. total < 0 means unknown;
 * message may be NULL. Progress must increase (MCP_EINVAL otherwise).
 */
MCP_EXTERN int mcp_ctx_progress(mcp_ctx *ctx, double progress, double total, const char *message);
/*
 * notifications/message related to this request, if the session's level lets
 * it through. data is stolen; logger may be NULL.
 */
MCP_EXTERN int mcp_ctx_log(mcp_ctx *ctx, mcp_log_level level, const char *logger, json_t *data);
MCP_EXTERN int mcp_ctx_logf(mcp_ctx *ctx, mcp_log_level level, const char *fmt, ...)
    MCP_PRINTF(3, 4);
/* Any notification related to this request; params stolen (may be NULL). */
MCP_EXTERN int mcp_ctx_notify(mcp_ctx *ctx, const char *method, json_t *params);

/*
 * Sends a request to the client, related to this request, and waits for the
 * answer up to timeout_ms (<= 0: 60 s). params is stolen. On MCP_OK *result
 * is a new reference. On MCP_ERPC *err is filled (if err is not NULL). On
 * timeout the library sends notifications/cancelled and returns
 * MCP_ETIMEDOUT. From an inline handler: MCP_ESTATE (it would block the loop).
 * On a stateless transport (mcp_http_opts.stateless): MCP_ESTATELESS at once,
 * nothing sent, since the client's answer could reach no session.
 */
MCP_EXTERN int mcp_ctx_request(mcp_ctx *ctx, const char *method, json_t *params, int timeout_ms,
                               json_t **result, mcp_rpc_error *err);
/* sampling/createMessage; MCP_ENOTSUP unless the client declared sampling (MCP_ESTATELESS
 * first on a stateless transport, where the client's capabilities are never known). */
MCP_EXTERN int mcp_ctx_create_message(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                                      mcp_rpc_error *err);
/* elicitation/create; MCP_ENOTSUP unless the client declared elicitation and negotiated
 * a protocol version that has it (2025-06-18 or later) (MCP_ESTATELESS as above). */
MCP_EXTERN int mcp_ctx_elicit(mcp_ctx *ctx, json_t *params, int timeout_ms, json_t **result,
                              mcp_rpc_error *err);
/* roots/list; MCP_ENOTSUP unless the client declared roots (MCP_ESTATELESS as above). */
MCP_EXTERN int mcp_ctx_list_roots(mcp_ctx *ctx, int timeout_ms, json_t **result,
                                  mcp_rpc_error *err);

/*
 * SEP-1699 SSE polling: closes the SSE stream that carries this request's
 * messages, so the client reconnects (GET with Last-Event-ID) after retry_ms
 * (< 0: the transport's configured retry interval) and resumes. The request
 * keeps running; what it sends meanwhile is stored and replayed. Only on a
 * resumable Streamable HTTP session of protocol 2025-11-25 or later, where
 * the client was told an event id to resume from (with JSON responses, the
 * request is then answered as an SSE stream): MCP_ENOTSUP otherwise (stdio,
 * stateless, no event store, older clients).
 */
MCP_EXTERN int mcp_ctx_close_sse_stream(mcp_ctx *ctx, int retry_ms);
/*
 * Closes the session's standalone (GET) stream that carries server messages,
 * or all of them when `all`, the same way. MCP_ENOTSUP as above.
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
 */
struct uv_loop_s;

/* Runs once when an endpoint has ended (see above). status is MCP_OK, or the error
 * that ended it (MCP_EIO: stdio output failed). */
typedef void (*mcp_endpoint_done_fn)(void *user, int status);

/* ---- stdio transport ---- */

typedef struct mcp_stdio_endpoint mcp_stdio_endpoint;

/*
 * Serves one session over a pair of file descriptors (newline-delimited JSON: a
 * pipe, a socket, stdin and stdout) on `loop`, and writes the endpoint to *out.
 * The descriptors stay the caller's: they are not closed. The endpoint ends by
 * itself when its input ends (the spec's stdio shutdown: answers still being
 * made are written first; requests to the client fail at once), when writing
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
 * (0: cancelled at once; < 0: no deadline), then done runs. MCP_OK, or MCP_ESTATE
 * when it is already ending (a shorter drain_ms still brings the deadline forward).
 */
MCP_EXTERN int mcp_stdio_endpoint_stop(mcp_stdio_endpoint *ep, int drain_ms);
/*
 * Frees the endpoint. After done ran, at once; before, it stops the endpoint with
 * no drain and is freed as it ends (done still runs). NULL is allowed.
 */
MCP_EXTERN void mcp_stdio_endpoint_free(mcp_stdio_endpoint *ep);

/*
 * Serves one session over stdin and stdout (newline-delimited JSON), on the
 * calling thread and a loop of its own, until stdin reaches EOF or SIGTERM or
 * SIGINT arrives (the first drains for 10 s, a second stops at once). Logs go
 * to stderr only. Returns MCP_OK on a clean end, MCP_EIO when output failed.
 */
MCP_EXTERN int mcp_serve_stdio(mcp_server *srv);
/* The same over any pair of file descriptors (pipes, sockets, files). */
MCP_EXTERN int mcp_serve_fds(mcp_server *srv, int in_fd, int out_fd);

/* ---- Streamable HTTP transport (and the legacy HTTP+SSE transport) ---- */

/*
 * Options of mcp_serve_http. A zeroed struct gives the safe defaults; strings
 * and arrays need only live for the call.
 */
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

typedef struct mcp_http_opts {
    /* The caller's sizeof(mcp_http_opts), so the struct can grow: fields added
     * later read as zero for a program built before them. 0 stands for the layout
     * of libmcp 0.1 (this one). */
    size_t size;
    const char *listen;     /* "HOST:PORT" (IPv6 in brackets); default 127.0.0.1:8080;
                               port 0 picks a free port (see on_listen) */
    const char *path;       /* the MCP endpoint; default "/mcp" */
    int json_response;      /* answer requests with one application/json body, not SSE; a
                               request that sends messages of its own (progress, logs,
                               requests to the client) before its answer gets an SSE stream
                               instead, so they arrive before the answer */
    int stateless;          /* no sessions: each POST stands alone; GET and DELETE get 405;
                               requests to the client fail with MCP_ESTATELESS, and
                               initialize offers no listChanged and no subscribe */
    int disable_get;        /* no standalone stream: GET gets 405 */
    int disable_legacy_sse; /* do not serve the 2024-11-05 endpoints GET /sse, POST /messages */
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
    mcp_event_store *store;             /* borrowed, outlives the call; NULL: an in-memory store */
    mcp_memory_store_opts memory_store; /* bounds of that in-memory store */
    /* Called once listening, with the endpoint's URL (e.g. to learn the port). */
    void (*on_listen)(const char *url, void *user);
    void *user;
    const mcp_http_route *routes; /* extra routes, ended by one with path NULL */
    int drain_ms; /* mcp_serve_http: how long SIGTERM and SIGINT let requests in flight
                     finish; 0: 10000; < 0: no deadline. A second signal stops at once */
} mcp_http_opts;

typedef struct mcp_http_endpoint mcp_http_endpoint;

/*
 * Serves srv over Streamable HTTP (protocol 2025-03-26 and later) and the
 * legacy HTTP+SSE transport (2024-11-05) on `loop`, and writes the endpoint to
 * *out once it listens (on_listen has run). opts is copied: its strings and
 * arrays need only live for the call; opts->store is borrowed and must outlive
 * the endpoint (it is attached to the loop here and detached before done runs).
 * Returns MCP_OK; MCP_EINVAL (a NULL loop, srv or out; a bad listen address,
 * path, route or opts->size); MCP_ENOMEM; MCP_EIO when it cannot listen (the
 * address is in use) or the store cannot attach. On failure *out is NULL and
 * handles already made close by themselves: run the loop before closing it.
 */
MCP_EXTERN int mcp_http_endpoint_new(struct uv_loop_s *loop, mcp_server *srv,
                                     const mcp_http_opts *opts, mcp_http_endpoint **out);
/* The endpoint's URL, "http://HOST:PORT/PATH" (owned by ep, valid until it is freed). */
MCP_EXTERN const char *mcp_http_endpoint_url(const mcp_http_endpoint *ep);
/* The port it listens on (useful with port 0). */
MCP_EXTERN int mcp_http_endpoint_port(const mcp_http_endpoint *ep);
/* True once a stop began (a health check can answer 503 then). */
MCP_EXTERN int mcp_http_endpoint_stopping(const mcp_http_endpoint *ep);
/*
 * Adds an extra route (see mcp_http_route; strings copied). MCP_OK; MCP_EINVAL (no
 * path or fn, a path not starting with '/'); MCP_EEXIST when the path is the MCP
 * endpoint's, a legacy one (/sse, /messages, unless disabled) or already routed
 * for that method; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_http_endpoint_route(mcp_http_endpoint *ep, const char *method, const char *path,
                                       mcp_http_route_fn fn, void *user);
/*
 * Stops the endpoint, draining for drain_ms (0: nothing waits; < 0: no deadline;
 * see "Endpoints on the caller's loop" above), then done(user, MCP_OK) runs
 * (done may be NULL). MCP_OK, or MCP_ESTATE when a stop is already under way:
 * a shorter drain_ms then brings its deadline forward, and done and user of this
 * call are ignored.
 */
MCP_EXTERN int mcp_http_endpoint_stop(mcp_http_endpoint *ep, int drain_ms,
                                      mcp_endpoint_done_fn done, void *user);
/*
 * Frees the endpoint. After its done ran, at once; before, it stops it with no
 * drain and is freed as it ends (a done already given still runs). NULL is allowed.
 */
MCP_EXTERN void mcp_http_endpoint_free(mcp_http_endpoint *ep);

/* What a route's request holds; strings are owned by the exchange. */
MCP_EXTERN const char *mcp_http_exchange_method(const mcp_http_exchange *x);
MCP_EXTERN const char *mcp_http_exchange_path(const mcp_http_exchange *x);
/* The query after '?' (without it), NULL when there is none. */
MCP_EXTERN const char *mcp_http_exchange_query(const mcp_http_exchange *x);
/* The first header called `name` (any case), or NULL. */
MCP_EXTERN const char *mcp_http_exchange_header(const mcp_http_exchange *x, const char *name);
/* The body (NUL-terminated, "" when none); len may be NULL. */
MCP_EXTERN const char *mcp_http_exchange_body(const mcp_http_exchange *x, size_t *len);
MCP_EXTERN mcp_http_endpoint *mcp_http_exchange_endpoint(const mcp_http_exchange *x);
/*
 * Answers: status 200..599, headers a NULL-terminated array of name, value pairs
 * (NULL for none; Content-Length, Transfer-Encoding and Connection are the
 * library's), `len` bytes of body (copied). MCP_OK, MCP_ECLOSED (the client is
 * gone), MCP_ENOMEM; MCP_EINVAL for a bad status or header; MCP_ESTATE when the
 * exchange was already answered.
 */
MCP_EXTERN int mcp_http_exchange_respond(mcp_http_exchange *x, int status,
                                         const char *const *headers, const void *body, size_t len);

/*
 * Serves srv over Streamable HTTP and the legacy HTTP+SSE transport, on the
 * calling thread and a loop of its own, until SIGINT or SIGTERM: the first
 * drains (opts->drain_ms), a second stops at once. Returns MCP_OK after a clean
 * stop, MCP_EINVAL for bad options, MCP_EIO when it cannot listen.
 */
MCP_EXTERN int mcp_serve_http(mcp_server *srv, const mcp_http_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
