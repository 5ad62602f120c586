/* SPDX-License-Identifier: MIT */
/*
 * Server internals shared by the server modules and the transports.
 *
 * Ownership: an mcp_server owns its registry and worker pool. A runtime
 * (mcp__srt) is the server attached to one libuv loop; it owns the sessions
 * made by the transports on that loop. A session owns its JSON-RPC engine and
 * the contexts of its requests in flight; each context holds a reference on
 * its session, so a session closed by its transport lives on, silent, until
 * its last handler returns.
 */
#ifndef MCP_SERVER_INT_H
#define MCP_SERVER_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include <mcp/server.h>

#include "auth/auth.h"
#include "protocol/revision.h"
#include "protocol/rpc.h"
#include "server/answerer.h"
#include "util/seal.h"
#include "util/util.h"

typedef struct mcp__srt mcp__srt;
typedef struct mcp__session mcp__session;
typedef struct mcp__listen mcp__listen;

/* ---- Registry (registry.c) ---- */

typedef struct mcp__tool {
    char *name;
    json_t *listing; /* the tools/list entry */
    json_t *input_schema;
    json_t *output_schema; /* or NULL */
    mcp_tool_fn fn;
    void *user;
    unsigned flags;
    char *scopes; /* space-separated, NULL: none */
} mcp__tool;

typedef struct mcp__resource {
    char *uri;
    json_t *listing;
    mcp_resource_fn fn;
    void *user;
    unsigned flags;
} mcp__resource;

typedef struct mcp__template {
    char *uri_template;
    struct mcp__uri_tpl *compiled; /* levels 2 to 4: parsed once (NULL: level 1) */
    json_t *listing;
    mcp_resource_fn fn;
    void *user;
    unsigned flags;
} mcp__template;

typedef struct mcp__prompt {
    char *name;
    json_t *listing;
    json_t *required; /* array of required argument names */
    mcp_prompt_fn fn;
    void *user;
    unsigned flags;
} mcp__prompt;

typedef struct mcp__vec {
    void **items;
    size_t len, cap;
} mcp__vec;

typedef struct mcp__method {
    char *method;
    char *name_param; /* or NULL */
    mcp_method_fn fn;
    void *user;
    unsigned flags;
} mcp__method;

/* The results that carry caching hints (see mcp__cache_index). */
#define MCP__CACHE_N 6

struct mcp_server {
    char *name, *version, *title, *instructions;
    unsigned eras; /* MCP_ERA_* */
    struct {
        long long ttl_ms;
        int public_scope;
    } cache[MCP__CACHE_N];
    json_t *empty;          /* {}, for what a client left out (read only, never changed) */
    json_t *info;           /* serverInfo {name, version, title}: built once, shared read only */
    json_t *info_meta;      /* {"io.modelcontextprotocol/serverInfo": info}, the same way */
    json_t *complete;       /* "complete", a modern result's resultType, the same way */
    mcp__sealer sealer;     /* the requestState keys (under lock) */
    long long state_ttl_ms; /* how long a requestState is good for */
    struct mcp__used_states *used_states; /* requestStates already retried (under lock) */
    int page_size;
    int workers;
    size_t max_message;
    mcp_complete_fn complete_fn;
    void *complete_user;
    mcp_server_notification_fn notify_fn;
    void *notify_user;

    uv_mutex_t lock; /* guards the registry, the capabilities and the runtime list */
    mcp__vec tools, resources, templates, prompts, methods;
    mcp_server_caps caps;
    atomic_int caps_off;  /* one of caps is MCP_CAP_OFF (read without the lock) */
    mcp_span_hooks spans; /* none: both functions NULL */
    atomic_int spans_on;  /* spans has a function (read without the lock) */
    /* Declared by the program: replaced, never changed, so that a reference taken under
     * lock can be read after (NULL: none). */
    json_t *extensions, *experimental;
    mcp__srt *runtimes;
    struct mcp__skills *skills; /* mcp_server_add_skills(), or NULL */
    struct mcp__app *apps;      /* mcp_server_add_app()'s views (apps.c) */
    struct mcp__tasks *tasks;   /* tasks.c: offered once mcp_server_set_tasks() or a task tool */

    uv_once_t pool_once;
    mcp__pool *pool;
    mcp__pool *task_pool; /* the handlers of tasks (made on first use) */
};

/* ---- Runtime: the server on one loop ---- */

struct mcp__srt {
    mcp_server *srv;
    uv_loop_t *loop;
    uv_thread_t loop_thread;
    mcp__mailbox mb;
    mcp__session *sessions;
    size_t nsessions;
    /* Called on the loop when the last session is freed (may be NULL). */
    void (*empty_cb)(void *arg);
    void *empty_arg;
    /* Server-wide notifications raised here go to other nodes too (may be NULL): see
     * mcp__answerer_ops.set_fanout. */
    void (*fanout)(void *user, const char *method, const json_t *params, const char *uri, int level,
                   const char *session);
    void *fanout_user;
    /* Called once mcp__srt_close has closed everything, just before rt is freed. */
    void (*closed_cb)(void *arg);
    void *closed_arg;
    /* Tasks (tasks.c): the session their handlers belong to, and the timer that forgets
     * expired ones, made on first use; tasks_closed once the runtime shuts down. */
    mcp__session *task_sess;
    uv_timer_t *task_timer;
    int tasks_closed;
    mcp__task_link task_link;     /* the endpoint's task store and node, or zeroed */
    struct pending *task_pending; /* outcomes the shared store did not take yet (tasks.c) */
    size_t task_npending;
    mcp__srt *next;
};

/* Attaches srv to loop (called on the loop's thread). NULL on failure. */
mcp__srt *mcp__srt_new(mcp_server *srv, uv_loop_t *loop);
/* Detaches; the mailbox is closed and rt freed from its close callback. All sessions
 * must be gone (mcp__srt_busy() false). */
void mcp__srt_close(mcp__srt *rt);
/* True while a session or a handler still exists. */
int mcp__srt_busy(const mcp__srt *rt);
/* True on the runtime's loop thread. */
int mcp__srt_on_loop(const mcp__srt *rt);

/* ---- Sessions (session.c) ---- */

struct mcp__session {
    mcp__srt *rt;
    mcp__rpc *rpc;
    const mcp__session_io *io;
    void *io_user;
    char *id;                 /* NULL for stdio */
    const mcp__revision *rev; /* negotiated, NULL before initialize */
    json_t *client_caps, *client_info;
    int initialized; /* initialize answered */
    /* Stateless HTTP: the session lives for one POST and nothing of the client's can
     * come back to it, so no request to the client, and no list_changed or resource
     * update outside a request's own answer, can ever be delivered. */
    int stateless;
    mcp_log_level level;
    unsigned declared;     /* MCP__CAP_*: what initialize told the client we offer */
    json_t *subscriptions; /* object used as a set of URIs */
    struct mcp_ctx *ctxs;  /* requests in flight */
    int refs;
    int closed;
    /* A 2026-07-28 request came: its errors carry HTTP statuses (MCP__SEND_HTTP_*). */
    int modern;
    mcp__listen *listens; /* open subscriptions/listen requests */
    int nlistens;
    /* Who the messages being fed act for (a reference; NULL: no authorization). */
    mcp_principal *principal;
    mcp__session *prev, *next;
};

/* mcp__inreq.flags: a request of revision 2026-07-28, served by its own _meta. */
#define MCP__REQ_MODERN 0x1u
/* A subscriptions/listen request: req->data is its mcp__listen, not an mcp_ctx. */
#define MCP__REQ_LISTEN 0x2u

#define MCP__CAP_TOOLS 0x1u
#define MCP__CAP_RESOURCES 0x2u
#define MCP__CAP_PROMPTS 0x4u

/* Creates a session on rt. id is copied (may be NULL). NULL on ENOMEM. */
mcp__session *mcp__session_new(mcp__srt *rt, const mcp__session_io *io, void *io_user,
                               const char *id);
/* Feeds one message text received on stream. */
void mcp__session_feed(mcp__session *s, const char *text, size_t len, uint64_t stream);
/* Feeds one parsed message or batch (borrowed). */
void mcp__session_feed_value(mcp__session *s, json_t *value, uint64_t stream);
/* Marks a session of a stateless transport (see mcp__session.stateless): requests to
 * the client fail at once with MCP_ESTATELESS, and initialize offers only what can be
 * delivered. Call before the first message is fed. */
void mcp__session_set_stateless(mcp__session *s);
/* Serves requests without an initialize (stateless HTTP): as if the client had
 * negotiated `rev` (NULL: the latest) and declared no capabilities. */
void mcp__session_assume_initialized(mcp__session *s, const mcp__revision *rev);
/* The negotiated revision, whose row holds every rule that depends on it; NULL
 * before initialize. */
const mcp__revision *mcp__session_revision(const mcp__session *s);
/* A message was too large; answers with the error (id null). */
void mcp__session_reject_oversized(mcp__session *s, size_t seen, uint64_t stream);
/* Ends the session: cancels its handlers, sends nothing more, detaches the transport
 * (io->send is never called again) and drops the transport's reference. */
void mcp__session_close(mcp__session *s);
void mcp__session_unref(mcp__session *s);
/* What another node needs to serve s (a new object), NULL before initialize. */
json_t *mcp__session_export(const mcp__session *s);
/* Takes another node's export (borrowed): s is then initialized as it was there.
 * MCP_EINVAL (nothing changes) for state it cannot read, MCP_ENOMEM. */
int mcp__session_import(mcp__session *s, const json_t *state);
/* What mcp__session_export holds changed: the transport is told (io->changed). */
void mcp__session_changed(mcp__session *s);
/* Sends a notification not tied to a request (stream 0). */
int mcp__session_notify(mcp__session *s, const char *method, json_t *params);
/* Loop thread: `stream` can take messages again; its paused handlers go on. */
void mcp__session_stream_ready(mcp__session *s, uint64_t stream);
/* Cancels the handlers paused on `stream` (their answers still go out); how many. */
int mcp__session_cancel_paused(mcp__session *s, uint64_t stream);
/* The client closed `stream`, a 2026-07-28 request's response: its requests are
 * cancelled and their answers dropped. */
void mcp__session_cancel_stream(mcp__session *s, uint64_t stream);
/* True when every request in flight is a handler paused by a congested stream
 * (it waits for its client, and nothing else goes on). */
int mcp__session_all_paused(const mcp__session *s);

/* ---- Request context (ctx.c) ---- */

typedef json_t *(*mcp__invoke_fn)(struct mcp_ctx *ctx);

struct mcp_ctx {
    mcp__session *sess;
    mcp__inreq *req;
    mcp__srt *rt;
    json_t *id, *params, *meta, *progress_token;
    json_t *msg; /* the whole request, which the borrowed fields point into */
    const char *method;
    uint64_t stream;
    /* The request's revision, client and log level: the session's, or for a 2026-07-28
     * request its own _meta's (borrowed from params or the server). */
    const mcp__revision *rev;
    const json_t *client_caps, *client_info;
    mcp_principal *principal; /* the session's when the request came (a reference) */
    int level;
    int modern;
    atomic_int cancelled;
    int on_loop; /* inline handler */
    double last_progress;
    int sent_progress;
    int error_code;
    char *error_message;
    json_t *error_data;
    char *cancel_reason; /* under lock; set once, before cancelled */

    /* what to run: the dispatcher fills these */
    mcp__invoke_fn invoke;
    void *fn;
    void *user;
    json_t *args;      /* tool or prompt arguments, template vars */
    char *uri;         /* resources/read */
    json_t *schema;    /* output schema to check the tool result against */
    json_t *in_schema; /* input schema to check the arguments against, where the tool runs */
    json_t *result;

    /* waits of the handler's thread (sleep, requests to the client) */
    uv_mutex_t lock;
    uv_cond_t cond;
    int wait_done;
    int wait_status;
    json_t *wait_result;
    mcp_rpc_error wait_err;
    int out_pending; /* loop thread: a request to the client is outstanding */
    json_int_t out_id;
    /* Backpressure: messages posted to the loop and not yet sent (the handler's thread
     * alone adds, the loop takes away), and whether the request's stream is congested;
     * the handler waits under lock while either is too much (see op_wait_room). */
    atomic_int queued_ops;
    atomic_int paused;
    atomic_int room_waiting; /* the handler waits for room, woken by op_sent */

    /* Multi Round-Trip Requests (mrtr.c), on the handler's thread while it runs. */
    int round;         /* 1, or the round the requestState says */
    int nasked;        /* questions asked so far in this run */
    int bad_answer;    /* an answer was not a result of its method: -32602 */
    json_t *responses; /* the retry's inputResponses (borrowed from params) */
    json_t *prior;     /* answers of earlier rounds: key -> {"h": digest, "a": answer} */
    json_t *used;      /* the answers this run used, carried to the next round */
    json_t *asked;     /* the questions without an answer: key -> request */
    json_t *state_in;  /* the handler's state from the round before */
    json_t *state_out; /* mcp_ctx_keep_state */
    /* The task this handler runs (tasks.c), or NULL: its request is answered already, and
     * what the handler returns is filed in the task; and the id of this run of it. */
    char *task_id;
    char *task_run;

    mcp__mail done_mail;
    /* Under lock: the batch of notifications the handler's thread adds to, posted to the
     * loop and not yet taken by it (ctx.c, note_batch); NULL when none. */
    struct note_batch *note_batch;
    struct mcp_ctx *prev, *next;
};

/* ---- Multi Round-Trip Requests (mrtr.c) ---- */

/* True for the methods that may answer with an InputRequiredResult. */
int mcp__mrtr_method(const char *method);
/* Draws the server's first requestState key. */
int mcp__mrtr_init(mcp_server *srv);
/* Reads a modern request's inputResponses and requestState before its handler runs;
 * -1 after setting the error (and clearing ctx->invoke) when they are refused. */
int mcp__mrtr_begin(mcp_ctx *ctx);
/* A question of the handler's (params stolen): MCP_OK with its answer, MCP_EINPUT
 * when it is asked of the client, MCP_EPROTO for an answer of the wrong shape. */
int mcp__mrtr_ask(mcp_ctx *ctx, const char *key, const char *method, json_t *params,
                  json_t **result);
/* The answer of a modern request whose handler returned result (stolen): result, an
 * InputRequiredResult when questions are open, or NULL with the error set. */
json_t *mcp__mrtr_finish(mcp_ctx *ctx, json_t *result);
void mcp__mrtr_free(mcp_ctx *ctx);
/* Whether a is a result of method (elicitation/create, sampling/createMessage,
 * roots/list): what an answer must be to be taken. */
int mcp__mrtr_answer_valid(const char *method, const json_t *a);

/* ---- Tasks (tasks.c) ---- */

/* The flags of a tool that runs as a task (tools only: anything else refuses them). */
#define MCP__TASK_FLAGS (MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED)

/* The server's tasks (offered by none yet); NULL on ENOMEM. */
struct mcp__tasks *mcp__tasks_new(void);
/* Whether the server offers the extension (any thread); offers it (declared in
 * server/discover) with the settings it has: MCP_OK, MCP_ENOMEM. */
int mcp__tasks_offered(mcp_server *srv);
int mcp__tasks_offer(mcp_server *srv);
/* Whether capabilities (a request's) declare the tasks extension. */
int mcp__tasks_declared(const json_t *caps);
/* tasks/get, tasks/update or tasks/cancel. */
int mcp__tasks_method(const char *method);
/* Serves one of them (loop thread; srv->tasks set). */
void mcp__tasks_dispatch(mcp__session *s, mcp__inreq *req);
/* Answers req with -32021 naming the extension. */
void mcp__tasks_refuse(mcp__inreq *req);
/* Loop thread: makes ctx's request a task (the store's create, maybe later). Then the
 * request is answered with the CreateTaskResult and ctx moved to the runtime's task
 * session; from_worker: the handler's thread, waiting in mcp_ctx_start_task, is woken with
 * the status (MCP_OK; MCP_ELIMIT at a bound; MCP_ECANCELED once the runtime shuts down;
 * MCP_ENOMEM; MCP_ENOTSUP without tasks); else the handler starts, or the request is
 * answered with the error. */
void mcp__task_begin(mcp_ctx *ctx, int from_worker);
/* Loop thread: files what the task's handler returned (result stolen). */
void mcp__task_finish(mcp_ctx *ctx, json_t *result);
/* The runtime shuts down: its task handlers are cancelled, its timer closed. */
void mcp__tasks_rt_close(mcp__srt *rt);
/* What an endpoint shared by nodes gives its runtime (NULL: none, the server's memory
 * store). Loop thread, before the first request. */
void mcp__tasks_set_link(mcp__srt *rt, const mcp__task_link *link);
/* Cancels the local run run_id of a task (from any loop thread), if it runs here. */
void mcp__tasks_stop_run(mcp_server *srv, const char *run_id, const char *why);
void mcp__tasks_free(struct mcp__tasks *ts);

/* Loop thread: wakes the handler's thread waiting for an operation it posted. */
void mcp__ctx_wake(struct mcp_ctx *ctx, int status);
/* Creates the context of req on session s (takes a session reference). */
struct mcp_ctx *mcp__ctx_new(mcp__session *s, mcp__inreq *req);
/* A context for a task's handler run again: a tools/call with params (the task's
 * request: name, arguments, _meta), on session s, acting for principal. */
struct mcp_ctx *mcp__ctx_new_task(mcp__session *s, json_t *params, mcp_principal *principal);
/* Runs ctx->invoke inline or on the pool, then answers the request. */
void mcp__ctx_run(struct mcp_ctx *ctx, int inline_handler);
/* The client cancelled, or the session ended (why: kept, the first time, for
 * mcp_ctx_cancel_reason): wakes the handler's waits. */
void mcp__ctx_cancel(struct mcp_ctx *ctx, const char *why);
/* Loop thread: the request's stream can take messages again. */
void mcp__ctx_resume(struct mcp_ctx *ctx);

/* ---- Dispatch (dispatch.c) ---- */

/* Answers or starts answering one request of session s. */
void mcp__dispatch(mcp__session *s, mcp__inreq *req);
/* The methods both eras share (the lists, calls, reads, completion). */
void mcp__dispatch_method(mcp__session *s, mcp__inreq *req);
/* Sets ctx (a task's, run again) to run its tool, params.name, with params.arguments; an
 * error (and no invoke) when the tool is gone. */
void mcp__tool_prepare(struct mcp_ctx *ctx);
/* Answers req with result (stolen), given what its revision adds to results. */
int mcp__respond(mcp__session *s, mcp__inreq *req, json_t *result);

/* ---- Revision 2026-07-28 (modern.c) ---- */

/* True when req's _meta names a revision: a request of the modern era. */
/* Serves a modern request: its _meta checked, then server/discover, subscriptions/listen,
 * or the shared methods. */
void mcp__dispatch_modern(mcp__session *s, mcp__inreq *req);
/* -32022 with the versions srv speaks and the one asked for (may be NULL). */
void mcp__respond_unsupported_version(mcp_server *srv, mcp__inreq *req, const char *requested);
/* {"io.modelcontextprotocol/serverInfo": info} (a new reference), or NULL. */
json_t *mcp__modern_info_meta(json_t *info);
/* Adds resultType, the server's identity and, for method's cacheable results, the
 * caching hints to result (in place); returns it. What it adds may be shared with other
 * results: the result must not be changed after. */
json_t *mcp__modern_decorate(mcp_server *srv, const char *method, json_t *result);
/* The index of method in mcp_server.cache, or -1. */
int mcp__cache_index(const char *method);
/* The request's logging threshold, client capabilities and info (see mcp_ctx.rev). */
int mcp__req_log_level(const mcp__session *s, const mcp__inreq *req);
const json_t *mcp__req_client_caps(const mcp__session *s, const mcp__inreq *req);
const json_t *mcp__req_client_info(const mcp__session *s, const mcp__inreq *req);

/* ---- subscriptions/listen (listen.c) ---- */

/* Opens a subscription: acknowledges it and keeps req open for its notifications. */
void mcp__listen_open(mcp__session *s, mcp__inreq *req);
/* The client ended the subscription req (cancelled it): nothing more goes out for it. */
void mcp__listen_cancel(mcp__session *s, mcp__inreq *req);
/* The same for the subscriptions of `stream` (its HTTP response was closed). */
void mcp__listen_cancel_stream(mcp__session *s, uint64_t stream);
/* Ends every subscription of s: with the graceful completion result, or silently. */
void mcp__listen_end_all(mcp__session *s, int graceful);
/* Sends the notification method (params borrowed) to the subscriptions of s that asked
 * for it, tagged with each one's id. */
void mcp__listen_deliver(mcp__session *s, const char *method, const json_t *params);

/* ---- Capabilities and methods of one's own (caps.c) ---- */

/* What initialize or server/discover offers now (a new object). stateless: no
 * listChanged and no subscribe, which need a stream outside any request. */
json_t *mcp__server_capabilities(mcp_server *srv, int stateless);
/* The MCP__CAP_* (listChanged) a session that did not initialize here is taken to have
 * been told. */
unsigned mcp__server_declared(mcp_server *srv, int stateless);
/* 0 when method belongs to a capability of the library's that is off. */
int mcp__server_serves(mcp_server *srv, const char *method);
/* Non-zero when completions are offered with no handler (MCP_CAP_ON). */
int mcp__server_offers_completions(mcp_server *srv);
/* Non-zero when log messages may be sent (the logging capability is not off). */
int mcp__server_logs(mcp_server *srv);
/* Under srv->lock: the method of one's own called method, or NULL. */
mcp__method *mcp__find_method(mcp_server *srv, const char *method);
void mcp__methods_free(mcp_server *srv);
/* mcp_server_add_method() for the library's own extensions: the families the library
 * answers (resources/...) are not refused. */
int mcp__add_library_method(mcp_server *srv, const mcp_method_def *def);
/* The skills catalog of mcp_server_add_skills() (skills.c), freed with the server. */
void mcp__skills_free(struct mcp__skills *sk);
void mcp__apps_free(struct mcp__app *apps);

/* ---- Spans (trace.c; loop thread) ---- */

/* Starts req's span when the server has span hooks. */
void mcp__span_begin(mcp__session *s, mcp__inreq *req);
/* Ends it with its answer msg (NULL: none could be built). */
void mcp__span_end(mcp__inreq *req, const json_t *msg);

/* ---- Registry helpers (registry.c) ---- */

int mcp__vec_push(mcp__vec *v, void *item);
void mcp__registry_free(mcp_server *srv);
/* Under srv->lock: */
mcp__tool *mcp__find_tool(mcp_server *srv, const char *name);
/* The scopes tool needs (space-separated) into buf (len bytes): 1 when it names some
 * (and they fit), else 0 with buf "". Any thread. */
int mcp__tool_scopes(mcp_server *srv, const char *tool, char *buf, size_t len);
mcp__resource *mcp__find_resource(mcp_server *srv, const char *uri);
/* Finds a template matching uri; *vars gets the variables (new object). */
mcp__template *mcp__match_template(mcp_server *srv, const char *uri, json_t **vars);
mcp__prompt *mcp__find_prompt(mcp_server *srv, const char *name);
/* Sends a notification to every initialized session on every runtime (any thread).
 * params stolen. filter_uri: only sessions subscribed to it (NULL: all). level >= 0:
 * only sessions whose logging level lets it through. */
/* Delivers a server-wide notification another node raised to rt's sessions (loop
 * thread): their subscriptions/listen requests, and the sessions whose standalone
 * stream is here. */
void mcp__broadcast_remote(mcp__srt *rt, const char *method, const json_t *params,
                           const char *filter_uri, int level, const char *session);
int mcp__broadcast(mcp_server *srv, const char *method, json_t *params, const char *filter_uri,
                   int level);

#endif
