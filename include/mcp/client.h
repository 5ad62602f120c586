/* SPDX-License-Identifier: MIT */
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
 * (two of them: a threaded client starts them with its loop, a loop client at
 * the connect, and only when a handler is set) and may block.
 *
 * Ownership: the client belongs to its caller from mcp_client_new() or
 * mcp_client_new_on_loop() until mcp_client_free() or mcp_client_close().
 * Strings given to the client are copied; JSON values are copied or stolen as
 * each function says (stolen means released on every path, failure included).
 * Pointers the client hands out are borrowed as each function says. The user
 * pointers of callbacks are kept as given and must stay valid until the client
 * is freed (for mcp_client_close(), until done has run).
 *
 * One connect per client: once a connect has started the server (even one
 * that then failed), every later connect of that client completes with
 * MCP_ESTATE, and a server that goes away is not reconnected. A connect that
 * fails once the child has started leaves it running (unless it exited) until
 * the client is freed. Make a new client to try again.
 */
#ifndef MCP_CLIENT_H
#define MCP_CLIENT_H

#include <stdint.h>

#include <mcp/common.h>
#include <mcp/oauth.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_client mcp_client;

/*
 * Answers a server->client request (sampling/createMessage,
 * elicitation/create). Returns a new reference to the result, which the
 * library takes, or NULL after filling err (code, message, and data, a
 * reference the library takes) to answer with a JSON-RPC error; a NULL with
 * err left zeroed is answered -32603 "The client refused" (fill err only to
 * return NULL: beside a result, err->data is never released). Runs on a worker
 * thread and may block, and may call the client's blocking functions (not
 * mcp_client_free()). params ({} when the server sent none) and err are
 * borrowed until it returns; user is the one given with the handler. When the
 * server cancels the request or the connection closes, the handler still runs
 * to its end and its answer is dropped.
 */
typedef json_t *(*mcp_client_request_fn)(mcp_client *c, const json_t *params, mcp_rpc_error *err,
                                         void *user);
/*
 * A server notification: every one but notifications/cancelled and the
 * notifications/progress of a request made with mcp_call_opts.on_progress
 * (progress for other requests comes here). Runs on the client's loop thread:
 * do not block. method and params (NULL when absent) are borrowed for the call.
 */
typedef void (*mcp_client_notification_fn)(mcp_client *c, const char *method, const json_t *params,
                                           void *user);
/*
 * notifications/progress for a request made with mcp_call_opts.on_progress.
 * Runs on the client's loop thread: do not block. total is < 0 when the
 * server gave none; message may be NULL.
 */
typedef void (*mcp_progress_fn)(double progress, double total, const char *message, void *user);
/*
 * Completion of an asynchronous request: status MCP_OK (result set), MCP_ERPC
 * (err set) or MCP_ETIMEDOUT, MCP_ECANCELED, MCP_ECLOSED (both NULL). Over
 * HTTP, a request can also end with MCP_EHTTP (an HTTP error status: err->code
 * is that status), MCP_ECONNECT (the server cannot be reached), MCP_ELIMIT
 * (its stream could not be resumed within the retry limit), MCP_EIO (the
 * connection failed) or MCP_EPROTO, and MCP_ECLOSED when its stream ended
 * before the answer with no event id to resume from; then err is set too, its
 * message saying what happened (code 0 but for MCP_EHTTP, data NULL). result
 * and err are borrowed for the call (json_incref result to keep it). Runs on
 * the client's loop thread: do not block.
 */
typedef void (*mcp_response_fn)(mcp_client *c, int status, const json_t *result,
                                const mcp_rpc_error *err, void *user);

/*
 * Options of one request; NULL or a zeroed struct gives the defaults. size is
 * sizeof(mcp_call_opts) as the program was compiled, or 0 for the layout of 0.1
 * (up to user: flags and on_task are then not read, so set size to use them);
 * options appended in later releases then read as zero (their default) for a
 * program built against an older header. A size shorter than the size field
 * itself gives MCP_EINVAL.
 */
typedef struct mcp_call_opts {
    size_t size;
    int timeout_ms;              /* <= 0: the client's default (60 s) */
    mcp_progress_fn on_progress; /* sets params._meta.progressToken when not NULL */
    void *user;
    /* Since 0.2 (appended: a program built without them leaves them zero). flags:
     * MCP_CALL_TASKS declares the tasks extension for this call alone (revision
     * 2026-07-28; see mcp_client_task_result). on_task (may be NULL) is told the id of the
     * task the server made of this call, on the loop thread, before the client starts
     * polling it: keep it to fetch the result from another process. */
    unsigned flags;
    void (*on_task)(const char *task_id, void *user);
} mcp_call_opts;

/* mcp_call_opts.flags: declare io.modelcontextprotocol/tasks for this call. */
#define MCP_CALL_TASKS 0x1u

/*
 * Returns a new threaded client, or NULL when name or version is NULL, memory
 * runs out or a mutex cannot be made. name and version (clientInfo) are
 * copied. Any thread. Nothing runs yet: its loop, its thread and its two
 * workers start with the first connect. The caller owns it until
 * mcp_client_free() or mcp_client_close().
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
 * waits up to 2 s, then SIGTERM, 2 s later SIGKILL; the child is always
 * reaped), fails pending requests with MCP_ECLOSED (their callbacks run on the
 * loop thread, blocked callers return) and frees the client. It blocks for all
 * of that, up to about 4 s for a child that will not exit, and for
 * server->client request handlers still running, however long they take. Call
 * it from a thread that is neither the client's loop thread (inside the
 * client's callbacks it would wait for itself: use mcp_client_close()) nor one
 * of its workers (inside a sampling or elicitation handler it would join
 * itself), and only once no other thread uses c. A client that never began
 * connecting is freed at once.
 * Loop client: the same as mcp_client_close(c, NULL, NULL), which does not
 * wait: run the loop until the client is gone.
 * c may be NULL. c must not be used after this call, nor may this be called
 * after mcp_client_close() (c may already be freed).
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
 * runs (done may be NULL), on the client's loop thread (a threaded client's
 * own thread, which then ends; nobody joins it). After this call, c may be
 * used only inside the client's callbacks and handlers that still run; there,
 * mcp_client_request_async() fails with MCP_ECLOSED, a connect and a second
 * close with MCP_ESTATE, and mcp_client_cancel() and mcp_client_notify()
 * return MCP_OK and send nothing. Anywhere else c may already be freed.
 *
 * Safe from any thread, inside the client's own callbacks included (a
 * response, notification, progress or connect callback, or a sampling or
 * elicitation handler): the client is never freed while one of its callbacks
 * is on the stack. A threaded client that never began connecting is freed at
 * once, and done runs before this returns, on the calling thread.
 * Returns MCP_OK; MCP_EINVAL when c is NULL; MCP_ESTATE when the client is
 * already closing (the earlier close goes on; done of this call never runs).
 */
MCP_EXTERN int mcp_client_close(mcp_client *c, mcp_client_closed_fn done, void *user);

/*
 * Settings. Except mcp_client_set_roots(), none takes a lock: call them from
 * one thread before connecting (before mcp_client_connect_stdio() or
 * mcp_client_connect_stdio_async() is called), not while the client's loop
 * may read them; a change during a connect is a data race.
 */

/*
 * The default timeout of a request and of a connect's initialize (both use
 * it when theirs is <= 0): 60 s unless set. It applies to requests sent after
 * the call; it is never refused for being late, but a change while other
 * threads make requests is a data race. There is no "no timeout": the longest
 * is INT_MAX ms. MCP_OK; MCP_EINVAL for a NULL c or a timeout_ms <= 0.
 */
MCP_EXTERN int mcp_client_set_timeout(mcp_client *c, int timeout_ms);
/* clientInfo's optional members (title, description, websiteUrl, icons; see
 * mcp_implementation), sent with initialize and, in revision 2026-07-28, with every
 * request. Before connecting. MCP_OK, MCP_EINVAL (an invalid member, or a NULL c:
 * the old clientInfo stays), MCP_ENOMEM. */
MCP_EXTERN int mcp_client_set_implementation(mcp_client *c, const mcp_implementation *impl);
/*
 * Largest message accepted from the server, in bytes: 1024 or more, default
 * 64 MiB. A longer message is dropped with a logged warning and not
 * answered, so a request whose answer is too long ends with MCP_ETIMEDOUT.
 * MCP_OK; MCP_EINVAL for a NULL c, a size under 1024, or once a connect has
 * begun (MCP_EINVAL, not MCP_ESTATE).
 */
MCP_EXTERN int mcp_client_set_max_message_size(mcp_client *c, size_t bytes);
/*
 * Which protocol revisions the connect may use (mcp_client_connect_* reads it).
 * Before the first connect; protocol is copied:
 *
 * - "auto" (the default): the connect first sends server/discover as revision
 *   2026-07-28 (the modern era) does. A server that answers it as a modern one
 *   (a DiscoverResult naming 2026-07-28, or a modern JSON-RPC error) is spoken to
 *   in the modern era; any other answer means an older server, and the connect
 *   goes on with initialize, as "legacy" does. Over HTTP that other answer is
 *   HTTP 400, 404 or 405 whose body is not a modern error (a 401, 403, 5xx, a
 *   refused connection or silence fails the connect instead); over stdio it is any
 *   other answer, a server that exits (it is started again for initialize), or
 *   silence for 5 s (or the connect's timeout when shorter). An
 *   UnsupportedProtocolVersion error names the versions the server speaks: the
 *   probe goes again once with 2026-07-28 when it is named, else initialize
 *   offers the newest older revision named.
 * - "legacy": initialize only, offering the newest older revision
 *   (MCP_PROTOCOL_LATEST), as before revision 2026-07-28.
 * - "2026-07-28" (MCP_PROTOCOL_2026_07_28): the modern era only; a server that
 *   does not speak it fails the connect (MCP_EPROTO, or the server's MCP_ERPC or
 *   MCP_EHTTP; mcp_client_connect_error() says why).
 * - an older revision ("2025-11-25" ... "2024-11-05"): initialize offering it; a
 *   server that answers with another revision fails the connect (MCP_EPROTO).
 *
 * The era is the client's for as long as it lives: mcp_client_protocol_version()
 * gives the revision in use after the connect. In the modern era:
 * - every request carries the revision, the client's capabilities (sampling,
 *   elicitation, roots: from the handlers and roots set at the moment it is
 *   sent) and its name and version in params._meta; there is no session;
 * - a request whose result asks for input (resultType "input_required") is
 *   answered by the sampling and elicitation handlers and the roots set with
 *   mcp_client_set_roots(), exactly as the same requests of an older server are,
 *   and sent again with their answers (and the server's requestState, exactly)
 *   under a new JSON-RPC id; the application sees the final result only
 *   (mcp_client_request returns once; progress keeps coming to the same
 *   callback). A server that asks for something the client has no handler or
 *   roots for fails the request with MCP_EPROTO; a handler that refuses (returns
 *   NULL) fails it with MCP_ERPC and the handler's error; more than
 *   mcp_client_set_max_input_rounds() rounds fail it with MCP_ELIMIT. The
 *   request's timeout applies to each round's request, not to the handlers;
 * - over HTTP, each request is a POST with the MCP-Protocol-Version, Mcp-Method
 *   and Mcp-Name headers, and the Mcp-Param-* headers that the tool's
 *   x-mcp-header annotations ask for (the client learns them from tools/list:
 *   list the tools before calling one; a tool whose annotations are invalid is
 *   left out of the tools/list result, with a warning naming it and why; a call
 *   the server refuses with HeaderMismatch reads tools/list again and is sent
 *   once more). A request's stream that breaks before the answer fails the
 *   request (MCP_ECLOSED; the revision has no resumption, and a request is not
 *   sent twice behind the application's back: it may re-issue it);
 *   mcp_client_cancel() and a timeout close the request's stream, which is the
 *   cancellation; no notifications/cancelled is sent;
 * - "ping" is no method of the revision: mcp_client_ping() sends server/discover;
 *   logging/setLevel neither: mcp_client_set_logging_level() sets the level that
 *   every later request names in its _meta; resources/subscribe and unsubscribe
 *   neither: they fail with MCP_ENOTSUP (see mcp_client_listen()).
 *
 * Returns MCP_OK; MCP_EINVAL for a NULL c or protocol, or a protocol that is none
 * of the above; MCP_ESTATE once a connect has begun. Not thread-safe (see above).
 */
MCP_EXTERN int mcp_client_set_protocol(mcp_client *c, const char *protocol);
/*
 * The most input_required results one request may get (each answered and
 * retried) before it fails with MCP_ELIMIT: default 16; 0 fails a request at
 * its first. MCP_OK; MCP_EINVAL for a NULL c or a negative count. Before
 * connecting, as the other settings.
 */
MCP_EXTERN int mcp_client_set_max_input_rounds(mcp_client *c, int rounds);
/*
 * Sets the handler of sampling/createMessage (fn NULL removes it); the connect
 * declares the sampling capability when one is set at the moment initialize
 * is sent. Without a handler the request is answered -32601. fn runs on a
 * worker thread (see mcp_client_request_fn); user is kept as given. MCP_OK;
 * MCP_EINVAL for a NULL c; MCP_ESTATE once connected. It is not refused while
 * a connect is under way, but is then a data race, and a handler set after
 * initialize was sent is not declared (and, on a loop client with no handler
 * before, finds no worker: its requests are answered -32603).
 */
MCP_EXTERN int mcp_client_on_sampling(mcp_client *c, mcp_client_request_fn fn, void *user);
/*
 * The same for elicitation/create and the elicitation capability (form mode).
 * When the handler's result has "action":"accept", properties of the requested
 * schema that its "content" left out are filled in from the schema's defaults
 * ("content" is added when missing) before the answer is sent. MCP_OK; MCP_EINVAL
 * for a NULL c; MCP_ESTATE once connected (a connect under way is not refused, as
 * above).
 */
MCP_EXTERN int mcp_client_on_elicitation(mcp_client *c, mcp_client_request_fn fn, void *user);
/*
 * What the client declares beside its handlers (sent with the next initialize and, in
 * revision 2026-07-28, with every request).
 */
typedef struct mcp_client_caps {
    size_t size; /* sizeof(mcp_client_caps) */
    /* The elicitation modes, with an elicitation handler: form (AUTO: on) and url
     * (AUTO: off; ON when the handler can show the user a URL and report the outcome).
     * A request in a mode not declared is answered -32602 and the handler not called. */
    mcp_cap elicitation_form, elicitation_url;
    /* With a sampling handler: "tools" (the handler takes tools and toolChoice) and
     * "context" (includeContext other than "none"); AUTO: off. */
    mcp_cap sampling_tools, sampling_context;
} mcp_client_caps;
/* caps NULL: all MCP_CAP_AUTO. MCP_OK; MCP_EINVAL for a NULL c, a size smaller than
 * the size field or a value that is no mcp_cap. Thread-safe. */
MCP_EXTERN int mcp_client_set_caps(mcp_client *c, const mcp_client_caps *caps);
/*
 * Whether tool results are checked against the tools' output schemas (on by default):
 * the client keeps the outputSchema of every tool its tools/list requests returned (the
 * last list wins; up to 10,000 tools and 16 MiB of schemas), and a later tools/call of
 * such a tool whose result is not isError must carry structuredContent that conforms:
 * else the call fails with MCP_ERPC, -32602 (it does not conform, the message naming
 * where) or -32600 (structuredContent is missing), as the TypeScript SDK's client
 * does. A schema the client cannot use is not kept (a warning names the tool). MCP_OK;
 * MCP_EINVAL for a NULL c. Set it before requests are made.
 */
MCP_EXTERN int mcp_client_set_output_check(mcp_client *c, int on);
/*
 * W3C trace context: a request carries the "traceparent", "tracestate" and "baggage"
 * the application put in its params' _meta (revision 2026-07-28 reserves them for
 * OpenTelemetry; older servers pass them on too). With new_traces non-zero, every
 * later request whose _meta has no traceparent gets a new one (a new trace, sampled),
 * so that servers and gateways can join their spans to it. MCP_OK; MCP_EINVAL for a
 * NULL c. Set it before requests are made.
 */
MCP_EXTERN int mcp_client_set_trace(mcp_client *c, int new_traces);
/*
 * Sets the roots: `roots`, a JSON array (meant to hold {"uri","name"?}
 * objects; its elements are not checked), deep-copied; the caller keeps its
 * reference. While roots are set, roots/list is answered with them (else
 * -32601), and a connect declares the roots capability with listChanged.
 * Once connected, every call (the first one included) also sends
 * notifications/roots/list_changed, even when the capability was not
 * declared at initialize. Roots cannot be removed. Thread-safe: any thread,
 * callbacks and handlers included.
 * Returns MCP_OK; MCP_EINVAL for a NULL c or a roots that is not an array;
 * MCP_ENOMEM when the copy fails (the old roots stay). Once connected, what
 * mcp_client_notify() returns for the notification (the new roots are set
 * even when it fails).
 */
MCP_EXTERN int mcp_client_set_roots(mcp_client *c, const json_t *roots);
/*
 * Sets the hook for the server's notifications (fn NULL removes it; see
 * mcp_client_notification_fn for which ones); without one they are dropped.
 * user is kept as given. MCP_OK; MCP_EINVAL for a NULL c; MCP_ESTATE once
 * connected (not refused during a connect, but a data race then).
 */
MCP_EXTERN int mcp_client_on_notification(mcp_client *c, mcp_client_notification_fn fn, void *user);
/*
 * Sets the handler of server requests of method, one the library does not answer
 * itself (an extension's, or the application's own; fn NULL removes it). It runs as
 * the sampling handler does, on a worker; its result answers the request, or its
 * err (-32603 when it sets no code). In revision 2026-07-28 it answers the server's
 * input requests of that method as well. At most 64 methods. Set them before the
 * connect, on the thread that connects (not while a connect is under way: a data race).
 * A result that is not a JSON object is answered -32603. MCP_OK; MCP_EINVAL for
 * a NULL c or method, a method of 256 bytes or more, or one the library answers
 * (ping, roots/list, sampling/createMessage, elicitation/create, notifications/...,
 * rpc....); MCP_ELIMIT past 64; MCP_ENOMEM; MCP_ESTATE once connected.
 */
MCP_EXTERN int mcp_client_on_request(mcp_client *c, const char *method, mcp_client_request_fn fn,
                                     void *user);
/*
 * Declares an extension in the client's capabilities ("extensions", revision
 * 2026-07-28; sent in every revision): id with its vendor prefix, as for
 * mcp_server_set_extension(), and its settings object ({} when NULL), deep-copied
 * (the MCP Apps extension, say: "io.modelcontextprotocol/ui" with {"mimeTypes":
 * ["text/html;profile=mcp-app"]}). Sent with the next initialize and, in revision
 * 2026-07-28, with every later request (a request's own _meta capabilities add to
 * these, and win where they say the same). Thread-safe. MCP_OK; MCP_EINVAL for a NULL
 * c, an invalid id, or settings that are not an object; MCP_ENOMEM.
 * mcp_client_remove_extension() takes it out (MCP_ENOENT when it was not declared).
 */
MCP_EXTERN int mcp_client_set_extension(mcp_client *c, const char *id, const json_t *settings);
MCP_EXTERN int mcp_client_remove_extension(mcp_client *c, const char *id);
/* The same for "experimental": any name of 1 to 255 bytes; settings NULL removes it.
 * MCP_OK, also when the name to remove was not set; MCP_EINVAL for a NULL c or name, a
 * name of another length or not valid UTF-8, or settings that are not an object;
 * MCP_ENOMEM. */
MCP_EXTERN int mcp_client_set_experimental(mcp_client *c, const char *name, const json_t *settings);

/*
 * Spawns argv[0] (searched in PATH) with argv (NULL-terminated), speaks
 * newline-delimited JSON over its stdin and stdout, and runs initialize, then
 * sends notifications/initialized (in the legacy era: see
 * mcp_client_set_protocol() for server/discover, which comes first unless the
 * client is pinned to the legacy era). The child inherits the environment, the
 * working directory and stderr. argv and its strings are copied. Blocks until
 * the connect ends; timeout_ms (<= 0: the client's default) bounds the
 * initialize request, which a loop client's owner must keep running the loop
 * for. The first connect of a threaded client starts its loop thread and
 * workers; every connect sets SIGPIPE to SIG_IGN for the whole process, and
 * leaves it so.
 *
 * Any thread but the client's loop thread, one connect at a time (two threads
 * connecting a threaded client at once race to start its thread); on a loop
 * client, a thread other than the one running the loop.
 * Returns MCP_OK once connected; MCP_EINVAL (c, argv or argv[0] NULL);
 * MCP_ESTATE when already connected or called on the client's loop thread;
 * MCP_EIO when the client's loop, thread or workers cannot start, or a mutex
 * cannot be made; MCP_ENOMEM; MCP_ECLOSED when the client is closing; or any
 * status of mcp_connect_fn below. On MCP_ERPC, mcp_client_connect_error()
 * gives the server's answer.
 */
MCP_EXTERN int mcp_client_connect_stdio(mcp_client *c, const char *const argv[], int timeout_ms);
/*
 * Completion of mcp_client_connect_stdio_async. status is MCP_OK once the
 * server answered initialize and the client is connected; otherwise the
 * connect failed: MCP_ERPC (the server refused initialize:
 * mcp_client_connect_error() gives its answer, from inside this callback or
 * later), MCP_EPROTO (it answered with a protocol version we do not speak; the
 * connection is then closed), MCP_ETIMEDOUT (notifications/cancelled is sent),
 * MCP_EIO (the program could not be started, or a pipe could not be made),
 * MCP_ENOMEM (also when a loop client's workers cannot start), MCP_ECLOSED
 * (the server went away first, or the client was closed first), MCP_ESTATE
 * (another connect ran first, whether it succeeded or not), MCP_ELIMIT (the
 * server does not read its input) or MCP_ECANCELED (mcp_client_cancel() was
 * given the initialize request's id, 0). After a failure past the spawn, the
 * child still runs until the client is freed. Runs on the client's loop
 * thread; it may call any function of the client that may be called there,
 * mcp_client_close() included.
 */
typedef void (*mcp_connect_fn)(mcp_client *c, int status, void *user);
/*
 * Connects as mcp_client_connect_stdio does (spawns argv[0], searched in PATH,
 * then runs initialize; SIGPIPE ignored) without waiting. argv and its strings
 * are copied. timeout_ms bounds the initialize request (<= 0: the client's
 * default). Returns MCP_OK, after which cb (may be NULL) runs exactly once,
 * never from inside this call, with the outcome; or MCP_EINVAL (c, argv or
 * argv[0] NULL), MCP_ESTATE (already connected, or the client is closing),
 * MCP_ENOMEM, MCP_EIO (the client's loop, thread or workers could not start)
 * or MCP_ECLOSED (a close began meanwhile), and then cb never runs. user is
 * kept until cb has run.
 * Any thread may call it for a threaded client (one connect at a time, as for
 * mcp_client_connect_stdio); a loop client takes it only on its loop thread
 * (MCP_ESTATE elsewhere).
 */
MCP_EXTERN int mcp_client_connect_stdio_async(mcp_client *c, const char *const argv[],
                                              int timeout_ms, mcp_connect_fn cb, void *user);
/*
 * The application's say in when a stream is reconnected
 * (mcp_http_client_opts.schedule_reconnect). The client wants to reconnect a
 * stream: the one that carries a pending request's answer, or the standalone
 * stream that carries the server's own messages. delay_ms is how long the
 * client would wait (the server's `retry`, or the backoff); attempt counts the
 * reconnections in a row that brought no event (1 for the first). Call
 * mcp_client_reconnect(c, reconnect_id) when it should happen: after the delay,
 * later (a program that sleeps until it is woken), or never (the request then
 * ends by its own timeout). Runs on the client's loop thread: do not block.
 */
typedef void (*mcp_reconnect_fn)(mcp_client *c, uint64_t reconnect_id, int delay_ms, int attempt,
                                 void *user);

/*
 * Options of an HTTP connect; NULL or a zeroed struct gives the defaults. size
 * is sizeof(mcp_http_client_opts) as the program was compiled, or 0 for this
 * release's layout (see mcp_call_opts). Strings are copied by the connect.
 */
typedef struct mcp_http_client_opts {
    size_t size;
    /* Extra request headers, "Name: value" each, NULL-terminated (an
     * Authorization header, say). Sent with every request. */
    const char *const *headers;
    const char *cacert;      /* PEM file of the CAs to trust instead of the system's */
    const char *client_cert; /* PEM client certificate for TLS, with client_key */
    const char *client_key;
    /* 1: the URL is the SSE endpoint of the 2024-11-05 HTTP+SSE transport. 0:
     * Streamable HTTP, falling back to HTTP+SSE when the server answers the
     * POST of initialize with 400, 404 or 405, as the spec says. */
    int http_sse;
    /* Reconnections of one stream in a row that bring no event before the
     * client gives up: the request that waits on that stream then fails with
     * MCP_ELIMIT (for the standalone stream, it is not reopened, until a new
     * session is started after the server forgot the old one). Default 5;
     * < 0: streams are never reconnected. */
    int max_retries;
    /* The wait before a reconnection when the server gave no `retry`:
     * exponential from initial_delay_ms (default 1000) doubling up to
     * max_delay_ms (default 30000), each with up to a fifth of jitter. The
     * server's `retry`, once seen on a stream, is followed, within 100 ms and
     * max_delay_ms. Only an event that carries data, or a stream's first
     * event with an id (its priming event), counts as one that a reconnection
     * brought: a new id alone each time does not. */
    int initial_delay_ms;
    int max_delay_ms;
    /* 1: a 404 for the session (the server forgot it, having restarted, say)
     * fails the requests that met it with MCP_EHTTP. 0: the client starts a new
     * session (initialize again) and sends each such request once more. */
    int no_session_renewal;
    /* NULL: reconnections wait on a timer of the client's loop. Otherwise the
     * application decides when (see mcp_reconnect_fn). */
    mcp_reconnect_fn schedule_reconnect;
    void *schedule_user;
    /* Bound on establishing each HTTP connection (TCP and TLS). Default 10 s. */
    int connect_timeout_ms;
    /* Revision 2026-07-28 has no resumption: a request whose connection fails
     * before any answer (a server restarting, say) is sent once more, after
     * initial_delay_ms (or the stream's `retry`), when it is safe to repeat:
     * the lists, resources/read, prompts/get, completion/complete, ping,
     * server/discover, and tools/call of a tool whose annotations (in the last
     * tools/list result) say readOnlyHint or idempotentHint. Never any other
     * request, never twice, in either revision (libcurl's own resend on a new
     * connection is refused for them too). 1: never (the request fails with
     * the connection's error). */
    int no_retry_safe;
    /* An OAuth provider (see <mcp/oauth.h>) that authorizes every request: the
     * connect holds it until the client is freed (one connection at a time per
     * provider). With it, headers may not carry an Authorization line. */
    mcp_oauth *oauth;
} mcp_http_client_opts;

/*
 * Connects to an MCP server over HTTP: Streamable HTTP (revision 2026-07-28,
 * and 2025-03-26 to 2025-11-25), or the HTTP+SSE transport (2024-11-05),
 * at url (http:// or https://; TLS, proxies from the environment and HTTP/2 as
 * libcurl gives them). Which revision: see mcp_client_set_protocol() (the auto
 * mode sends server/discover first; http_sse means the legacy era). In the
 * modern era there is nothing more to it: each request is a POST of its own.
 * In the legacy era it runs initialize and sends notifications/initialized,
 * then opens the standalone GET stream for the server's own messages (a 405
 * there is accepted: the server has none). Each message is a POST; answers come
 * as JSON or as an SSE stream, which the client resumes by GET with
 * Last-Event-ID when it breaks after an event id, at the server's `retry`. On
 * close, the session is ended by DELETE. Blocks like mcp_client_connect_stdio
 * (same threads, same loop rules, SIGPIPE ignored), and returns what it
 * returns, plus: MCP_EINVAL for a URL that is not http(s):// or options out
 * of range; MCP_ECONNECT when the server cannot be reached (refused,
 * unresolvable name, TLS failure) and MCP_EHTTP when it answers initialize
 * with an HTTP error status: mcp_client_connect_error() then says which
 * (code: the HTTP status, or 0).
 */
MCP_EXTERN int mcp_client_connect_http(mcp_client *c, const char *url,
                                       const mcp_http_client_opts *opts, int timeout_ms);
/* The same without waiting, as mcp_client_connect_stdio_async is to
 * mcp_client_connect_stdio, with the same returns (cb gets the connect's outcome,
 * MCP_ECONNECT and MCP_EHTTP among them); MCP_EINVAL also, cb never running, for a NULL
 * url, one that is not http(s)://, or options mcp_client_connect_http() refuses. */
MCP_EXTERN int mcp_client_connect_http_async(mcp_client *c, const char *url,
                                             const mcp_http_client_opts *opts, int timeout_ms,
                                             mcp_connect_fn cb, void *user);
/*
 * Reconnects now the stream that mcp_http_client_opts.schedule_reconnect was
 * told of. Any thread. MCP_OK (from another thread than the client's loop
 * thread: the reconnection is posted, and one no longer wanted is ignored);
 * MCP_ENOENT on the loop thread when that reconnection is no longer wanted
 * (its request ended, or it happened already); MCP_EINVAL for a NULL c or a
 * client that never connected; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_client_reconnect(mcp_client *c, uint64_t reconnect_id);

/*
 * After a connect that failed with MCP_ERPC: the JSON-RPC error the server
 * answered initialize with, copied into *err (err->data is a new reference:
 * release it with mcp_rpc_error_clear). The client keeps its own copy until
 * the next connect ends or the client is freed. Returns MCP_OK; MCP_EINVAL
 * for a NULL c or err (err untouched); MCP_ENOENT when the last connect that
 * ran did not fail that way (err untouched; a connect refused by its call's
 * return value does not count). Call it from the thread that called
 * mcp_client_connect_stdio, or after mcp_client_connect_stdio_async from its
 * callback or later on the thread the callback ran on.
 */
MCP_EXTERN int mcp_client_connect_error(const mcp_client *c, mcp_rpc_error *err);

/*
 * After a successful connect: what the server said in its initialize result.
 * The negotiated protocol version (a static string of the library's), the
 * serverInfo and capabilities objects ({} when the server sent no object), and
 * the instructions (NULL when the server gave none). All are NULL before the
 * connect succeeded, and after one that failed. Borrowed: owned by the client
 * and unchanged until it is freed, the connection's end notwithstanding. Any
 * thread that has seen the connect succeed (its return, its callback, or a
 * later call made after it). c must not be NULL: these do not check it.
 */
MCP_EXTERN const char *mcp_client_protocol_version(const mcp_client *c);
MCP_EXTERN const json_t *mcp_client_server_info(const mcp_client *c);
MCP_EXTERN const json_t *mcp_client_server_capabilities(const mcp_client *c);
MCP_EXTERN const char *mcp_client_instructions(const mcp_client *c);
/* The server's settings object for extension id (its capabilities' "extensions"), or
 * NULL when it declared none by that id (or c or id is NULL). Borrowed, as above. */
MCP_EXTERN const json_t *mcp_client_server_extension(const mcp_client *c, const char *id);

/*
 * Sends a request and waits for its answer. method is copied; params (a JSON
 * object, or NULL for none) is stolen on every path; opts is read during the
 * call (see mcp_call_opts: on_progress, if set, runs on the loop thread with
 * opts->user while this waits). result and err may be NULL to ignore them;
 * *result is set to NULL and *err zeroed first.
 *
 * Any thread but the client's loop thread, several at once. The wait ends with
 * the answer, the timeout (a timer on the client's loop: a loop client's
 * owner must keep running the loop, or this waits for ever) or the end of the
 * connection.
 *
 * Returns MCP_OK: *result is a new reference the caller releases. MCP_ERPC:
 * the server answered with an error, copied into *err (err->data is a new
 * reference: release it with mcp_rpc_error_clear). MCP_ETIMEDOUT:
 * notifications/cancelled is sent and a late answer dropped. MCP_ECANCELED:
 * mcp_client_cancel() was given this request's id. MCP_ECLOSED: the client is
 * not connected (never was, or a connect is still under way), the connection
 * ended, or the client is closing. MCP_EINVAL: a NULL c or method, a params
 * that is not an object, an opts->size shorter than the size field.
 * MCP_ESTATE: called on the client's loop thread. MCP_ENOMEM. MCP_ELIMIT: the
 * server does not read its input (the connection is then closed). MCP_EIO: a
 * mutex or condition variable cannot be made. On any status but MCP_OK,
 * *result is NULL; on any but MCP_ERPC, *err is zeroed, except for the HTTP
 * transport's failures (see mcp_response_fn), which fill its code and message.
 */
MCP_EXTERN int mcp_client_request(mcp_client *c, const char *method, json_t *params,
                                  const mcp_call_opts *opts, json_t **result, mcp_rpc_error *err);
/*
 * Sends a request without waiting for its answer. method is copied; params (a
 * JSON object, or NULL) is stolen on every path; opts is copied (its
 * on_progress runs on the loop thread with opts->user). cb (may be NULL) and
 * user are kept until cb has run; cb runs on the client's loop thread, never
 * from inside this call, with result and err borrowed for its duration.
 *
 * Any thread. On the loop thread the request is written at once. From another
 * thread it is posted to the loop and this call blocks until the loop has sent
 * it and knows its id (a loop client's owner must be running the loop), not
 * for the answer: cb may then run, on the loop thread, before this returns.
 *
 * Returns MCP_OK, after which cb (when not NULL) runs exactly once, with
 * MCP_OK, MCP_ERPC, MCP_ETIMEDOUT, MCP_ECANCELED or MCP_ECLOSED, and the
 * request's id is stored in *request_id when not NULL. Any other return means
 * the request was not sent and cb never runs: MCP_EINVAL (a NULL c or method,
 * a params that is not an object, an opts->size shorter than the size field);
 * MCP_ECLOSED when the client is not connected (never was, not yet, or
 * anymore) or is closing; MCP_ENOMEM; MCP_EIO (a mutex or condition variable
 * cannot be made, from another thread). On the loop thread a failed send
 * gives MCP_ENOMEM, MCP_ECLOSED or MCP_ELIMIT and leaves *request_id alone;
 * from another thread every failed send gives MCP_ECLOSED and *request_id is
 * set to -1.
 */
MCP_EXTERN int mcp_client_request_async(mcp_client *c, const char *method, json_t *params,
                                        const mcp_call_opts *opts, mcp_response_fn cb, void *user,
                                        long long *request_id);

/*
 * Tasks (the extension io.modelcontextprotocol/tasks, revision 2026-07-28). A client that
 * declares it (mcp_client_set_extension(c, "io.modelcontextprotocol/tasks", NULL) for every
 * request, or MCP_CALL_TASKS for one call) lets the server answer a tools/call with a task.
 * The call then goes on by itself until the task ends, and returns what the tool returned,
 * as if it had come at once: the client polls tasks/get every pollIntervalMs the server
 * gives (20 ms to 60 s), answers the task's questions with the handlers of the legacy
 * era's server requests (mcp_client_on_elicitation, mcp_client_on_sampling, the roots),
 * each key once, with tasks/update, and returns the completed task's result (MCP_OK), its
 * error (failed: MCP_ERPC with the task's code and message), MCP_ECANCELED (cancelled),
 * or MCP_ETIMEDOUT once the task outlived its ttlMs. The call's timeout bounds each
 * request, not the task. mcp_client_cancel of the call sends tasks/cancel. The task's id
 * goes to mcp_call_opts.on_task as soon as it is known.
 *
 * mcp_client_task_result does the same for a task some client made before (this process
 * or another: a task's id is all that is needed, and the principal that made it): it polls
 * it to its end and returns its result. mcp_client_task_get is one tasks/get: *task gets
 * the DetailedTask (status, and result, error or inputRequests). mcp_client_task_cancel
 * sends tasks/cancel (the server's empty acknowledgement is dropped).
 *
 * Each returns as mcp_client_request() does (blocking, any thread but the loop's), and
 * MCP_EINVAL for a NULL task_id. An unknown task is the server's -32602 (MCP_ERPC).
 */
MCP_EXTERN int mcp_client_task_result(mcp_client *c, const char *task_id, const mcp_call_opts *opts,
                                      json_t **result, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_task_get(mcp_client *c, const char *task_id, json_t **task,
                                   mcp_rpc_error *err);
MCP_EXTERN int mcp_client_task_cancel(mcp_client *c, const char *task_id, mcp_rpc_error *err);

/*
 * Skills (SEP-2640), from a server that declares "io.modelcontextprotocol/skills".
 * mcp_client_list_skills: skills/list with every page walked (at most 64; MCP_ELIMIT
 * past them); *skills gets the array of entries ({uri, frontmatter, resources}), a new
 * reference. mcp_client_get_skill: skills/get of the entry whose SKILL.md is uri;
 * *skill gets it. An entry that is not valid (its uri names no SKILL.md, its
 * frontmatter has no string name and description, a resource has no uri, sha256 digest
 * or size, its own SKILL.md is not listed; for get, another skill's) fails the call
 * with MCP_EPROTO, its reason in err->message.
 *
 * mcp_client_read_skill reads one file of an entry and checks it as the extension asks
 * a host to: ref is NULL for the SKILL.md, a path relative to the skill's folder
 * ("references/FORMS.md"), or a skill:// URI; the file must be listed in the entry
 * (however either side percent-encodes it; else MCP_ENOENT and nothing is sent), and
 * its bytes must have the listed size and SHA-256 digest, and a SKILL.md a frontmatter
 * that reads to the entry's (src/protocol/frontmatter.c: one outside what that reader
 * takes is refused too); else MCP_EPROTO saying which. A skill whose resources are
 * "dynamic" is read without the listing, size and digest checks. *data (malloc'd, a
 * NUL after its *len bytes) gets the file's bytes, text or decoded blob alike.
 *
 * All three: MCP_OK; MCP_EINVAL for a NULL argument (or an entry that is not valid);
 * MCP_ENOTSUP when the server did not declare the extension; the errors of
 * mcp_client_request(). Blocking, as mcp_client_request().
 */
MCP_EXTERN int mcp_client_list_skills(mcp_client *c, json_t **skills, mcp_rpc_error *err);
MCP_EXTERN int mcp_client_get_skill(mcp_client *c, const char *uri, json_t **skill,
                                    mcp_rpc_error *err);
MCP_EXTERN int mcp_client_read_skill(mcp_client *c, const json_t *skill, const char *ref,
                                     char **data, size_t *len, mcp_rpc_error *err);

/*
 * Cancels a pending request (asynchronous, or one a blocked
 * mcp_client_request() waits for), or a subscription (mcp_client_listen: it
 * ends with MCP_ECANCELED): its cb gets MCP_ECANCELED (a blocked caller
 * returns it), then notifications/cancelled is sent with reason; in the modern
 * era over HTTP the request's stream is closed instead, which is the
 * cancellation there (the request id is the one the application got, whatever
 * input round the request is in). reason
 * is copied and may be NULL (also dropped when its copy fails). An id that is
 * not pending (answered, timed out, never sent, or the connection ended) is
 * ignored. Any thread: on the loop thread it acts at once, and cb runs before
 * this returns; from another thread it is posted to the loop, and cb runs
 * there later (it may have run already when this returns).
 * Returns MCP_OK, also for an id that was ignored; MCP_EINVAL when c is NULL
 * or a threaded client never started connecting; MCP_ENOMEM; MCP_ECLOSED, from
 * another thread, when the client is closing and its loop takes no more work.
 */
MCP_EXTERN int mcp_client_cancel(mcp_client *c, long long request_id, const char *reason);
/*
 * Sends a notification. method is copied; params (may be NULL) is stolen on
 * every path, and sent as it is (it is not checked to be an object). Any
 * thread, as mcp_client_cancel: on the loop thread it is written at once,
 * from another it is posted to the loop. No check is made of the connection:
 * before a connect has spawned the server, after the connection ended, or
 * while the client closes, the notification is dropped and MCP_OK returned
 * all the same; during a connect it is sent at once, before
 * notifications/initialized. Write errors are not reported.
 * Returns MCP_OK; MCP_EINVAL when c or method is NULL, or a threaded client
 * never started connecting; MCP_ENOMEM; MCP_ECLOSED, from another thread,
 * when the client is closing and its loop takes no more work.
 */
MCP_EXTERN int mcp_client_notify(mcp_client *c, const char *method, json_t *params);

/*
 * subscriptions/listen: a subscription to the server's change notifications.
 *
 * The notification types a subscription opts into (a SubscriptionFilter);
 * NULL or a zeroed struct asks for nothing. size as for mcp_call_opts.
 */
typedef struct mcp_listen_filter {
    size_t size;
    int tools_list_changed;     /* notifications/tools/list_changed */
    int prompts_list_changed;   /* notifications/prompts/list_changed */
    int resources_list_changed; /* notifications/resources/list_changed */
    /* notifications/resources/updated for these URIs: NULL-terminated, NULL for none. */
    const char *const *resource_uris;
} mcp_listen_filter;

typedef enum mcp_listen_kind {
    /* The server agreed: params is {"notifications": the filter it honours}, the
     * types it does not offer left out. Before any notification of the subscription. */
    MCP_LISTEN_ACKNOWLEDGED,
    /* A notification of the subscription: method and params (NULL when absent). */
    MCP_LISTEN_NOTIFICATION,
    /* The subscription is over, and this is its last event. status: MCP_OK, the server
     * ended it gracefully (its result is params); MCP_ECANCELED, mcp_client_cancel()
     * ended it; MCP_ECLOSED, it dropped (its stream broke, the server ended it with
     * notifications/cancelled, or the connection or client closed: the application may
     * listen again); MCP_ERPC, the server refused it (err); or another failure of a
     * request (MCP_EHTTP, MCP_ECONNECT, MCP_EIO, MCP_EPROTO), with err. */
    MCP_LISTEN_ENDED
} mcp_listen_kind;

/* One event of a subscription. Everything is borrowed for the callback's duration. */
typedef struct mcp_listen_event {
    mcp_listen_kind kind;
    long long subscription_id; /* what mcp_client_listen() gave */
    const char *method;        /* ACKNOWLEDGED and NOTIFICATION; NULL for ENDED */
    const json_t *params;      /* may be NULL */
    int status;                /* ENDED */
    const mcp_rpc_error *err;  /* ENDED with a failure: may be NULL */
} mcp_listen_event;

/* Runs on the client's loop thread, in the order of the events: do not block. */
typedef void (*mcp_listen_fn)(mcp_client *c, const mcp_listen_event *ev, void *user);

/*
 * Opens a subscription to the server's change notifications. The filter is copied;
 * fn (not NULL) and user are kept until fn has had MCP_LISTEN_ENDED, which it always
 * gets once, never from inside this call.
 *
 * The modern era: a subscriptions/listen request (its _meta as every request's), with
 * no timeout: it lives until the server ends it, mcp_client_cancel(c,
 * subscription_id) ends it (over HTTP its stream closes; over stdio
 * notifications/cancelled goes), or the connection ends. The server's notifications
 * that name the subscription (io.modelcontextprotocol/subscriptionId, its JSON-RPC
 * id) go to fn, not to mcp_client_on_notification(); several subscriptions may be open
 * at once.
 *
 * The legacy era maps the same API onto what it has: each URI of resource_uris gets
 * resources/subscribe (when the server declared resources.subscribe; one it refuses
 * is left out of the acknowledged filter), then MCP_LISTEN_ACKNOWLEDGED comes with
 * the types the server declared (listChanged of tools, prompts, resources), and the
 * matching notifications of the session go to fn (and not to
 * mcp_client_on_notification()) until mcp_client_cancel() (which sends
 * resources/unsubscribe for URIs no other subscription holds) or the connection's
 * end. The HTTP+SSE and standalone streams bring them.
 *
 * Any thread, as mcp_client_request_async(). Returns MCP_OK and the subscription's id
 * in *subscription_id (may be NULL); MCP_EINVAL for a NULL c or fn, a filter with a
 * size shorter than its size field or a URI that is not UTF-8; MCP_ECLOSED when not
 * connected or closing; MCP_ENOMEM; MCP_EIO. On failure fn never runs.
 */
MCP_EXTERN int mcp_client_listen(mcp_client *c, const mcp_listen_filter *filter, mcp_listen_fn fn,
                                 void *user, long long *subscription_id);

/*
 * Shorthands for the MCP methods, each a blocking mcp_client_request() (same
 * threads, same return values, the client's default timeout unless opts or
 * timeout_ms give one) with params built from the arguments, which are copied.
 * A JSON argument (args, ref) is stolen on every path, failure included, and
 * is not checked (the server judges it). result and err may be NULL; the
 * result of ping, subscribe, unsubscribe and setLevel is dropped.
 *
 * MCP_EINVAL also for a required string argument that is NULL (name, uri,
 * arg_name, arg_value, ref; cursor may be NULL), a string that is not valid
 * UTF-8 (but see cursor below), or an unknown log level. When a required
 * argument is NULL, or the log level unknown, *result and *err are left as
 * they were; in every other case they are reset as mcp_client_request() does.
 *
 * The list functions ask for the page after `cursor` (NULL: the first page).
 * A cursor that is not valid UTF-8, or whose params cannot be made for lack of
 * memory, is left out: the first page is asked for instead, without an error.
 *
 * mcp_client_ping returns MCP_ERPC when the server answers with an error
 * (whose details it drops), and MCP_OK for any result.
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
/* args: an object of strings (stolen, may be NULL: no "arguments" sent). MCP_EINVAL
 * also when name is NULL, or when the params cannot be built: a name that is not valid
 * UTF-8, or no memory. */
MCP_EXTERN int mcp_client_get_prompt(mcp_client *c, const char *name, json_t *args, json_t **result,
                                     mcp_rpc_error *err);
/* ref: {"type":"ref/prompt","name":..} or {"type":"ref/resource","uri":..} (stolen);
 * arg_name and arg_value: the argument being completed. MCP_EINVAL also when ref,
 * arg_name or arg_value is NULL, or the params cannot be built (a string that is not
 * valid UTF-8, or no memory). */
MCP_EXTERN int mcp_client_complete(mcp_client *c, json_t *ref, const char *arg_name,
                                   const char *arg_value, json_t **result, mcp_rpc_error *err);
/* logging/setLevel. In revision 2026-07-28 nothing is sent (see mcp_client_set_protocol()):
 * MCP_OK, or MCP_ENOMEM when the level cannot be kept, *err zeroed either way. MCP_EINVAL
 * for an unknown level, *err untouched. */
MCP_EXTERN int mcp_client_set_logging_level(mcp_client *c, mcp_log_level level, mcp_rpc_error *err);
/*
 * Follows nextCursor through every page of a list method ("tools/list",
 * "resources/list", "resources/templates/list", "prompts/list"; the method is
 * not checked) and returns the concatenated array under `key` ("tools", ...)
 * as *items, a new reference the caller releases. method and key are borrowed
 * for the call. One blocking mcp_client_request() per page, with the client's
 * default timeout each; threads as for it. A page whose `key` is missing or
 * not an array adds nothing, without an error. The pages end at the first
 * result without a string nextCursor (an empty string is followed as a cursor).
 *
 * Returns MCP_OK. MCP_EINVAL when items, method or key is NULL (*items and
 * *err untouched). MCP_EPROTO after 10,000 pages, when the server keeps
 * giving cursors. MCP_ENOMEM. Any other status of the mcp_client_request() of
 * a page, which fails the whole: *err is then that page's. On failure *items
 * is NULL and the pages already read are dropped.
 */
MCP_EXTERN int mcp_client_list_all(mcp_client *c, const char *method, const char *key,
                                   json_t **items, mcp_rpc_error *err);

#ifdef __cplusplus
}
#endif
#endif
