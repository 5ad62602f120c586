/*
 * libmcp client API.
 *
 * An mcp_client talks to one server. Its I/O, its timers and its callbacks run
 * on one libuv loop, the client's loop, on one thread, the client's loop thread:
 *
 * - mcp_client_new(): a threaded client. The client runs a loop of its own on a
 *   hidden thread, started by the first connect.
 * - mcp_client_new_on_loop(): a loop client. The client runs on the caller's
 *   loop, which the caller runs (uv_run) on its own thread; the client has no
 *   thread of its own. This is for programs that already run a libuv loop.
 *
 * The blocking calls below (connect, request, the shorthands, ping) may be
 * made from any thread except the client's loop thread, where they return
 * MCP_ESTATE: waiting there would stop the loop that must bring the answer.
 * That is the case inside the client's own callbacks, and anywhere on the
 * thread that runs a loop client's loop; a loop client uses the asynchronous
 * calls (mcp_client_connect_stdio_async, mcp_client_request_async,
 * mcp_client_cancel, mcp_client_notify, mcp_client_close) there. From another
 * thread, the blocking calls work on a loop client too, for as long as its
 * owner runs the loop.
 *
 * Handlers for server->client requests run on a worker thread of the client's
 * (for a loop client, started by the connect when a handler is set) and may
 * block.
 */
#ifndef MCP_CLIENT_H
#define MCP_CLIENT_H

#include <mcp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_client mcp_client;

/*
 * Answers a server->client request (sampling/createMessage,
 * elicitation/create). Returns a new reference to the result, or NULL after
 * filling err (code and message) to answer with a JSON-RPC error. Runs on a
 * worker thread.
 */
typedef json_t *(*mcp_client_request_fn)(mcp_client *c, const json_t *params, mcp_rpc_error *err,
                                         void *user);
/* A server notification. Runs on the client's loop thread: do not block. */
typedef void (*mcp_client_notification_fn)(mcp_client *c, const char *method, const json_t *params,
                                           void *user);
/*
 * notifications/progress for a request made with mcp_call_opts.on_progress.
 * Runs on the client's loop thread: do not block. total is < 0 when the
 * server gave none; message may be NULL.
 */
typedef void (*mcp_progress_fn)(double progress, double total, const char *message, void *user);
/* Completion of an asynchronous request. result and err are borrowed. */
typedef void (*mcp_response_fn)(mcp_client *c, int status, const json_t *result,
                                const mcp_rpc_error *err, void *user);

/*
 * Options of one request; NULL or a zeroed struct gives the defaults. size is
 * sizeof(mcp_call_opts) as the program was compiled, or 0 for this release's
 * layout; options appended in later releases then read as zero (their default)
 * for a program built against an older header. A size shorter than the size
 * field itself gives MCP_EINVAL.
 */
typedef struct mcp_call_opts {
    size_t size;
    int timeout_ms;              /* <= 0: the client's default (60 s) */
    mcp_progress_fn on_progress; /* sets params._meta.progressToken when not NULL */
    void *user;
} mcp_call_opts;

/*
 * Returns a new threaded client, or NULL when name or version is NULL or
 * memory runs out. name and version are copied. Its loop and thread start with
 * the first connect.
 */
MCP_EXTERN mcp_client *mcp_client_new(const char *name, const char *version);

/* libuv's loop, named without <uv.h>: struct uv_loop_s is uv_loop_t. */
struct uv_loop_s;
/*
 * Makes a loop client, which runs on `loop` and has no thread of its own
 * (handlers aside, see above), and writes it to *out. The caller owns the loop
 * and runs it; the loop must outlive the client, which ends with
 * mcp_client_close() (mcp_client_free() means the same for a loop client).
 * Call it on the thread that runs the loop: that thread is the client's loop
 * thread. name and version are copied.
 *
 * An open loop client holds an active handle on the loop, so uv_run() does not
 * return for lack of work before the client is closed. Once the done callback
 * of mcp_client_close() has run, nothing of the client is left on the loop and
 * uv_loop_close() can succeed.
 *
 * Returns MCP_OK; MCP_EINVAL when loop, name, version or out is NULL;
 * MCP_ENOMEM; MCP_EIO when the loop refuses a handle. On failure *out is NULL
 * and nothing was left on the loop.
 */
MCP_EXTERN int mcp_client_new_on_loop(struct uv_loop_s *loop, const char *name, const char *version,
                                      mcp_client **out);
/*
 * Threaded client: closes the connection (for stdio: closes the child's stdin,
 * waits up to 2 s, then SIGTERM, then SIGKILL; the child is always reaped),
 * fails pending requests with MCP_ECLOSED and frees the client. It waits for
 * all of that, and for server->client request handlers still running; call it
 * from a thread other than the client's loop thread, never from inside the
 * client's callbacks (mcp_client_close() is for that).
 * Loop client: the same as mcp_client_close(c, NULL, NULL), which does not
 * wait: run the loop until the client is gone.
 * c may be NULL. c must not be used after this call.
 */
MCP_EXTERN void mcp_client_free(mcp_client *c);

/* Completion of mcp_client_close(). user is the pointer given to it. */
typedef void (*mcp_client_closed_fn)(void *user);
/*
 * Closes and frees the client without waiting. Pending requests complete with
 * MCP_ECLOSED (their callbacks run, each once; on the client's loop thread
 * they run before this returns, from another thread soon after), a connect
 * still under way completes with MCP_ECLOSED, and the child is shut down as
 * mcp_client_free() does it (stdin closed, SIGTERM after 2 s, SIGKILL 2 s
 * later; always reaped). Once the child is reaped, server->client request
 * handlers still running have returned (their answers are dropped) and every
 * handle of the client is closed, the client is freed and then done(user)
 * runs (done may be NULL), on the client's loop thread. After this call, c
 * may be used only inside the client's callbacks that still run (there, new
 * work fails with MCP_ECLOSED and a second close with MCP_ESTATE); anywhere
 * else it may already be freed.
 *
 * Safe from any thread, inside the client's own callbacks included (a
 * response, notification, progress or connect callback): the client is never
 * freed while one of its callbacks is on the stack. A threaded client that
 * never connected is freed at once, and done runs before this returns.
 * Returns MCP_OK; MCP_EINVAL when c is NULL; MCP_ESTATE when the client is
 * already closing (the earlier close goes on; done of this call never runs).
 */
MCP_EXTERN int mcp_client_close(mcp_client *c, mcp_client_closed_fn done, void *user);

/* Settings, before connecting. */
MCP_EXTERN int mcp_client_set_timeout(mcp_client *c, int timeout_ms);
/* Largest message accepted from the server in bytes (default 64 MiB). */
MCP_EXTERN int mcp_client_set_max_message_size(mcp_client *c, size_t bytes);
/* Declares the sampling capability and answers sampling/createMessage. */
MCP_EXTERN int mcp_client_on_sampling(mcp_client *c, mcp_client_request_fn fn, void *user);
/*
 * Declares the elicitation capability and answers elicitation/create. When the
 * handler accepts, properties of the requested schema that it left out are
 * filled in from the schema's defaults.
 */
MCP_EXTERN int mcp_client_on_elicitation(mcp_client *c, mcp_client_request_fn fn, void *user);
/*
 * Declares the roots capability (listChanged) and answers roots/list with
 * `roots` (a JSON array of {"uri","name"?}, copied). Calling it again once
 * connected sends notifications/roots/list_changed.
 */
MCP_EXTERN int mcp_client_set_roots(mcp_client *c, const json_t *roots);
MCP_EXTERN int mcp_client_on_notification(mcp_client *c, mcp_client_notification_fn fn, void *user);

/*
 * Spawns argv[0] (searched in PATH) with argv, speaks newline-delimited JSON
 * over its stdin and stdout, and runs initialize. The child's stderr is
 * inherited. Blocks until initialized or timeout_ms (<= 0: default). argv is
 * copied. Returns MCP_OK, or the errors of mcp_connect_fn below, or MCP_EINVAL
 * (c, argv or argv[0] NULL), or MCP_ESTATE when already connected or called on
 * the client's loop thread.
 */
MCP_EXTERN int mcp_client_connect_stdio(mcp_client *c, const char *const argv[], int timeout_ms);
/*
 * Completion of mcp_client_connect_stdio_async. status is MCP_OK once the
 * server answered initialize and the client is connected; otherwise the
 * connect failed: MCP_ERPC (the server refused initialize:
 * mcp_client_connect_error() gives its answer, from inside this callback or
 * later), MCP_EPROTO (it answered with a protocol version we do not speak),
 * MCP_ETIMEDOUT, MCP_EIO (the program could not be started, or a pipe could not
 * be made), MCP_ENOMEM, MCP_ECLOSED (the server went away first, or the client
 * was closed first) or MCP_ESTATE (another connect ran first). Runs on the
 * client's loop thread; it may call any function of the client that may be
 * called there, mcp_client_close() included.
 */
typedef void (*mcp_connect_fn)(mcp_client *c, int status, void *user);
/*
 * Connects as mcp_client_connect_stdio does (spawns argv[0], searched in PATH,
 * then runs initialize) without waiting. argv and its strings are copied.
 * timeout_ms bounds the initialize request (<= 0: the client's default).
 * Returns MCP_OK, after which cb (may be NULL) runs exactly once, never from
 * inside this call, with the outcome; or MCP_EINVAL (c, argv or argv[0] NULL),
 * MCP_ESTATE (already connected, or the client is closing), MCP_ENOMEM or
 * MCP_EIO (the client's thread could not start), and then cb never runs.
 * Any thread may call it for a threaded client; a loop client takes it only on
 * its loop thread (MCP_ESTATE elsewhere).
 */
MCP_EXTERN int mcp_client_connect_stdio_async(mcp_client *c, const char *const argv[],
                                              int timeout_ms, mcp_connect_fn cb, void *user);
/*
 * After a connect that failed with MCP_ERPC: the JSON-RPC error the server
 * answered initialize with, copied into *err (err->data is a new reference:
 * release it with mcp_rpc_error_clear). MCP_OK, or MCP_ENOENT when the last
 * connect did not fail that way. Call it from the thread that called
 * mcp_client_connect_stdio, or after mcp_client_connect_stdio_async from its
 * callback or later on the thread the callback ran on.
 */
MCP_EXTERN int mcp_client_connect_error(const mcp_client *c, mcp_rpc_error *err);

/* After connecting: what the server said in its initialize result (borrowed). */
MCP_EXTERN const char *mcp_client_protocol_version(const mcp_client *c);
MCP_EXTERN const json_t *mcp_client_server_info(const mcp_client *c);
MCP_EXTERN const json_t *mcp_client_server_capabilities(const mcp_client *c);
MCP_EXTERN const char *mcp_client_instructions(const mcp_client *c);

/*
 * Sends a request and waits. params is stolen (may be NULL). On MCP_OK,
 * *result is a new reference the caller releases. On MCP_ERPC, err is filled.
 * On timeout notifications/cancelled is sent and MCP_ETIMEDOUT returned.
 * MCP_ESTATE on the client's loop thread (see above), MCP_ECLOSED when not
 * connected or when the client closes meanwhile.
 */
MCP_EXTERN int mcp_client_request(mcp_client *c, const char *method, json_t *params,
                                  const mcp_call_opts *opts, json_t **result, mcp_rpc_error *err);
/*
 * Sends a request without waiting; cb runs on the client's loop thread (never
 * from inside this call). Any thread may call it; on the loop thread the
 * request is written at once. The request id is stored in *request_id when
 * not NULL. params is stolen (may be NULL), even on failure. result and err
 * given to cb are borrowed for the callback's duration.
 * Returns MCP_OK, after which cb (when not NULL) runs exactly once, with
 * MCP_OK, MCP_ERPC, MCP_ETIMEDOUT, MCP_ECANCELED or MCP_ECLOSED; any other
 * return means the request was not sent and cb never runs: MCP_EINVAL,
 * MCP_ENOMEM, MCP_EIO, or MCP_ECLOSED when the client is not connected
 * (anymore) or is closing.
 */
MCP_EXTERN int mcp_client_request_async(mcp_client *c, const char *method, json_t *params,
                                        const mcp_call_opts *opts, mcp_response_fn cb, void *user,
                                        long long *request_id);
/*
 * Cancels a pending request: notifications/cancelled, and its cb gets
 * MCP_ECANCELED (on the loop thread, before this returns). reason is copied
 * and may be NULL. An id that is no longer pending is ignored. Any thread; on
 * the loop thread it acts at once, from another it is posted to the loop.
 * Returns MCP_OK; MCP_EINVAL when c is NULL or a threaded client never started
 * connecting; MCP_ENOMEM; MCP_ECLOSED, from another thread, when the client
 * is closing and its loop takes no more work.
 */
MCP_EXTERN int mcp_client_cancel(mcp_client *c, long long request_id, const char *reason);
/*
 * Sends a notification; params stolen (may be NULL). Any thread, as
 * mcp_client_cancel; returns as it does (what cannot be written to a closed
 * connection is dropped).
 */
MCP_EXTERN int mcp_client_notify(mcp_client *c, const char *method, json_t *params);

/*
 * Shorthands; result conventions as mcp_client_request (a JSON object argument
 * such as args or ref is stolen, even on failure). cursor may be NULL.
 * mcp_client_ping returns MCP_ERPC when the server answers with an error.
 */
MCP_EXTERN int mcp_client_ping(mcp_client *c, int timeout_ms);
MCP_EXTERN int mcp_client_list_tools(mcp_client *c, const char *cursor, json_t **result,
                                     mcp_rpc_error *err);
MCP_EXTERN int mcp_client_call_tool(mcp_client *c, const char *name, json_t *args,
                                    const mcp_call_opts *opts, json_t **result, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_list_resources(mcp_client *c, const char *cursor, json_t **result,
                                         mcp_rpc_error *err);
MCP_EXTERN int mcp_client_list_resource_templates(mcp_client *c, const char *cursor,
                                                  json_t **result, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_read_resource(mcp_client *c, const char *uri, json_t **result,
                                        mcp_rpc_error *err);
MCP_EXTERN int mcp_client_subscribe(mcp_client *c, const char *uri, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_unsubscribe(mcp_client *c, const char *uri, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_list_prompts(mcp_client *c, const char *cursor, json_t **result,
                                       mcp_rpc_error *err);
/* args: object of strings (stolen, may be NULL). */
MCP_EXTERN int mcp_client_get_prompt(mcp_client *c, const char *name, json_t *args, json_t **result,
                                     mcp_rpc_error *err);
/* ref: {"type":"ref/prompt","name":..} or {"type":"ref/resource","uri":..} (stolen). */
MCP_EXTERN int mcp_client_complete(mcp_client *c, json_t *ref, const char *arg_name,
                                   const char *arg_value, json_t **result, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_set_logging_level(mcp_client *c, mcp_log_level level, mcp_rpc_error *err);
/*
 * Follows nextCursor through every page of a list method ("tools/list",
 * "resources/list", "resources/templates/list", "prompts/list") and returns
 * the concatenated array under `key` ("tools", ...) as *items, a new
 * reference the caller releases.
 */
MCP_EXTERN int mcp_client_list_all(mcp_client *c, const char *method, const char *key,
                                   json_t **items, mcp_rpc_error *err);

#ifdef __cplusplus
}
#endif
#endif
