/* SPDX-License-Identifier: MIT */
/*
 * The client's insides, shared by its source files:
 *
 *   client.c   lifetime, threads and the mailbox, connecting, requests in both
 *              eras, server->client requests of the legacy era, closing
 *   modern.c   the modern era (revision 2026-07-28): the per-request _meta, the
 *              era probe (server/discover) and its verdict, Multi Round-Trip
 *              Requests (input_required answered by the application's
 *              handlers, then retried), the retries a modern error asks for
 *   listen.c   subscriptions/listen for the application, in both eras
 *   methods.c  the shorthands of the public API (public API only)
 *
 * Everything marked "loop thread" runs on the client's loop thread only.
 */
#ifndef MCP_CLIENT_CLIENT_INT_H
#define MCP_CLIENT_CLIENT_INT_H

#include <stdatomic.h>

#include <mcp/client.h>

#include "protocol/revision.h"
#include "protocol/rpc.h"
#include "ctransport/ctransport.h"
#include "util/util.h"

#define MCP__CLIENT_DEFAULT_TIMEOUT_MS 60000
#define MCP__CLIENT_MAX_MESSAGE (64u << 20)
/* Input rounds of one request before it fails (mcp_client_set_max_input_rounds). */
#define MCP__CLIENT_DEFAULT_ROUNDS 16
/* Entries of one inputRequests map we answer; more fails the request. */
#define MCP__CLIENT_MAX_INPUTS 64
/* Methods of the application's own it may answer (mcp_client_on_request). */
#define MCP__CLIENT_MAX_METHODS 64
/* The longest a stdio probe waits for server/discover before taking the server for a
 * legacy one (the connect's timeout when shorter). */
#define MCP__CLIENT_STDIO_PROBE_MS 5000
/* Pages of tools/list read to refresh the x-mcp-header schemas after a HeaderMismatch. */
#define MCP__CLIENT_MAX_REFRESH_PAGES 100

/* How the client chooses its era (mcp_client_set_protocol). */
enum client_mode {
    CMODE_AUTO = 0, /* server/discover first, initialize when the server is legacy */
    CMODE_HTTPSSE,  /* initialize, offering pinned (or the newest legacy revision) */
    CMODE_MODERN    /* server/discover at pinned; never initialize */
};

typedef struct waiter waiter;
typedef struct connect_mail connect_mail;
typedef struct call call;
typedef struct mcp__client_listen mcp__client_listen;

struct mcp_client {
    char *name, *version;
    json_t *info; /* clientInfo: name, version and what mcp_client_set_implementation adds */
    int timeout_ms;
    size_t max_message;
    mcp_client_request_fn sampling_fn, elicit_fn;
    void *sampling_user, *elicit_user;
    json_t *roots; /* guarded by lock */
    /* Declared by the application (guarded by lock; replaced, never changed, so that a
     * reference taken under lock can be read after). NULL: none. */
    json_t *extensions, *experimental;
    mcp_client_caps caps; /* guarded by lock */
    /* The output schemas of listed tools (outputs.c; loop thread). */
    mcp__map out_schemas;
    size_t out_bytes;
    int out_full_warned;
    int no_output_check; /* mcp_client_set_output_check(c, 0) */
    int trace_new;       /* mcp_client_set_trace */
    /* Server requests of methods the library does not answer itself (set before the
     * connect). */
    struct mcp__client_method {
        char *method;
        mcp_client_request_fn fn;
        void *user;
    } * methods;
    size_t nmethods;
    mcp_client_notification_fn notify_fn;
    void *notify_user;
    mcp_rpc_error connect_err; /* the server's answer to the last failed initialize */
    enum client_mode mode;
    const mcp__revision *pinned; /* the revision the mode names, or NULL */
    int max_rounds;

    uv_mutex_t lock;
    uv_loop_t own_loop; /* a threaded client's */
    uv_loop_t *loop;    /* &own_loop, or the caller's loop */
    int host_loop;      /* made by mcp_client_new_on_loop: *loop is the caller's */
    uv_thread_t thread; /* the thread that runs *loop */
    int thread_started; /* a threaded client's thread runs */
    int running;        /* the mailbox is on *loop */
    int connect_begun;
    mcp__mailbox mb;
    mcp__pool *pool;

    /* loop thread only */
    mcp__rpc *rpc;
    mcp__ctr *tr;                    /* the transport, until it has closed */
    int tr_http;                     /* it is HTTP (else stdio) */
    struct connect_mail *ready_wait; /* a connect waiting for the transport's on_ready */
    int tr_closing;
    int want_final;
    long fail_http; /* the HTTP status of the failure being reported, or 0 */
    call *calls;    /* modern requests in progress, for cancellation and the close */
    mcp__client_listen *listens;
    char *log_level;     /* modern: the logLevel every request names, or NULL */
    json_int_t probe_id; /* the id of the last server/discover of a connect */
    int probe_sent;
    connect_mail *respawn; /* a stdio connect that starts the server again once the old
                              transport has closed (the probe made it exit) */

    /* set once by mcp_client_free or mcp_client_close, read by any thread */
    atomic_int closing;
    int close_async;      /* by mcp_client_close: the loop's side frees the client */
    mcp__mail close_mail; /* mcp_client_close from another thread than the loop's */
    mcp_client_closed_fn closed_fn;
    void *closed_user;
    int close_started; /* loop thread: close_begin ran */
    uv_work_t pool_join;

    /* set once by the connect (on the loop), read by any thread */
    atomic_int connected;
    const mcp__revision *rev; /* the revision in use: initialize's answer, or the modern one */
    json_t *server_info, *server_caps;
    char *instructions;
};

/* ---- Waiting for the loop (client.c) ---- */

struct waiter {
    uv_mutex_t lock;
    uv_cond_t cond;
    int done;
    int status;
    json_t *result;
    mcp_rpc_error err;
    long long id;
    int id_set;
};

/* MCP_OK, or MCP_EIO when a mutex or condition variable cannot be made (nothing made). */
int mcp__waiter_init(waiter *w);
void mcp__waiter_destroy(waiter *w);
void mcp__waiter_finish(waiter *w, int status, const json_t *result, const mcp_rpc_error *err);
/* Records the id of a posted request and wakes its poster. */
void mcp__waiter_set_id(waiter *w, long long id);

/* ---- Connecting (client.c) ---- */

/*
 * One connect, from the call until it ends: posted to the loop, then the
 * argument of the replies of its requests (server/discover, initialize).
 * Exactly one of w (the blocking connects, whose caller waits) and cb (the
 * asynchronous ones) hears the end. The server is argv (stdio) or http.
 */
struct connect_mail {
    mcp__mail mail; /* first: the struct is the mail */
    mcp_client *c;
    char **argv;          /* NULL-terminated copy; freed once the transport has it */
    mcp__shttp_cfg *http; /* the same for HTTP */
    int timeout_ms;
    waiter *w;
    mcp_connect_fn cb;
    void *user;
    int corrected; /* the probe was sent again at a version an error named */
    json_int_t probe_id;
};

/* Loop thread: the end of a connect, good or bad. Frees cm. */
void mcp__connect_finish(connect_mail *cm, int status, const mcp_rpc_error *err);
/* Loop thread: makes the transport of the connect (c->tr). MCP_OK, or why not. */
int mcp__connect_transport(connect_mail *cm);
/* Loop thread: sends initialize offering rev (NULL: the newest legacy revision).
 * Completes cm on failure. */
void mcp__connect_initialize(connect_mail *cm, const mcp__revision *rev);

/* When the user accepted an elicitation, fills in what they left out from the schema's
 * defaults (SEP-1034), so servers get complete answers. */
void mcp__fill_elicitation_defaults(const json_t *params, json_t *result);

/* ---- Requests (client.c, modern.c) ---- */

struct call {
    mcp__mail mail;
    mcp_client *c;
    char *method;
    char *tool;     /* tools/call: the tool's name, for the check of its result */
    json_t *params; /* legacy: handed to the engine by the send; modern: the original */
    mcp_call_opts opts;
    mcp_response_fn cb; /* async */
    void *user;
    waiter *w; /* sync, and async until the id is known */
    int sync;
    /* The modern era: one request may take several JSON-RPC requests (input rounds,
     * retries). */
    int modern;
    json_int_t logical_id; /* its first JSON-RPC id: the one the application knows */
    json_int_t wire_id;    /* the JSON-RPC request of it in the engine, when in_flight */
    int in_flight;
    int linked;        /* in c->calls */
    int rounds;        /* input_required results answered so far */
    json_t *responses; /* the next retry's inputResponses, or NULL */
    json_t *state;     /* the next retry's requestState (a string), or NULL */
    int version_retried, header_retried;
    int refresh_pages; /* tools/list pages read for a HeaderMismatch retry */
    int job;           /* handlers run for it on a worker */
    /* A task (the tasks extension, tasks.c): its id once the server made one, polled
     * every poll_ms until its TTL runs out (deadline: wall clock, 0 none), the keys of
     * its questions answered already, and the timer of the next poll. */
    char *task_id;
    int task_poll_ms;
    long long task_deadline;
    json_t *task_answered;
    struct uv_timer_s *task_timer;
    int task_follow;    /* a tasks/get that follows a task to its end (mcp_client_task_result) */
    int task_cancelled; /* mcp_client_cancel came: tasks/cancel goes once the poll returns */
    int finished;       /* completed while its job ran: the job frees it */
    call *prev, *next;
};

void mcp__call_free(call *k);

/* ---- Tools' output schemas (outputs.c; loop thread) ---- */

/* Keeps the output schemas of a tools/list result's tools (and forgets those of
 * listed tools that have none). */
void mcp__client_learn_tools(mcp_client *c, const json_t *result);
/* 0 when the tools/call result of tool may go to the application; -1 with err set
 * (-32600, -32602) when it does not conform to the tool's output schema. */
int mcp__client_check_output(mcp_client *c, const char *tool, const json_t *result,
                             mcp_rpc_error *err);
void mcp__client_outputs_free(mcp_client *c);
/* Completes k once: its callback (or waiter) hears status; then k is freed, or marked
 * for its job to free. */
void mcp__call_reply(call *k, int status, const json_t *result, const mcp_rpc_error *err);
/* notifications/progress of k's request (mcp__progress_fn). */
void mcp__call_progress(void *arg, const json_t *params);

/* ---- The modern era (modern.c) ---- */

/* Whether the client speaks the modern era now. */
static inline int mcp__client_modern(const mcp_client *c)
{
    return c->rev != NULL && c->rev->modern;
}

/* The logLevel every later modern request names (mcp_client_set_logging_level in the
 * modern era). Any thread. MCP_OK or MCP_ENOMEM. */
int mcp__client_set_log_level(mcp_client *c, const char *name);

/* NULL when the client declared the mode of the elicitation/create request whose params
 * these are, else the -32602 message that refuses it. Any thread. */
const char *mcp__client_elicit_refused(mcp_client *c, const json_t *params);
/* The application's handler of method (not one the library answers), or NULL. */
const struct mcp__client_method *mcp__client_method(const mcp_client *c, const char *method);
/* The capabilities the handlers the application set stand for, with the extensions and
 * experimental capabilities it declared. modern: the modern shape (roots without
 * listChanged). A new reference, or NULL on ENOMEM. */
json_t *mcp__client_capabilities(mcp_client *c, int modern);

/*
 * A modern request's params: a shallow copy of params (may be NULL) whose _meta
 * holds, beside what the application put there, the revision rev, the client's
 * capabilities and info, and its logLevel. A new reference, or NULL on ENOMEM.
 */
json_t *mcp__modern_params(mcp_client *c, const mcp__revision *rev, const json_t *params);

/* Loop thread: sends the probe of a connect (server/discover at the modern revision). */
void mcp__probe_send(connect_mail *cm);
/* Loop thread: the stdio server that exited on the probe can be started again (its old
 * transport has closed): start it and initialize. */
void mcp__probe_respawned(connect_mail *cm);

/*
 * Loop thread: sends the first round of modern request k. MCP_OK: the engine
 * holds it, *id is its id (the one the application knows). Otherwise k is freed
 * and its callback never runs, as for call_send.
 */
int mcp__modern_send(call *k, json_int_t *id);
/* Loop thread: the modern request the application knows as id, or NULL. */
call *mcp__modern_find(mcp_client *c, json_int_t id);
/* Loop thread: cancels k (mcp_client_cancel): its JSON-RPC request is cancelled
 * (over HTTP its stream closes; over stdio notifications/cancelled goes), and it
 * completes with MCP_ECANCELED. */
void mcp__modern_cancel(call *k, const char *reason);
/* Loop thread, at the connection's end: completes every modern request that waits
 * for handlers with status (those in the engine are failed by the engine). */
void mcp__modern_fail_waiting(mcp_client *c, int status);
/* Runs the application's handlers for requests (key -> {method, params}) on a worker, then
 * retries k with the answers, or for a task sends them with tasks/update; fails k when one
 * cannot be answered. */
void mcp__input_start(call *k, const json_t *requests);

/* What a size of 0 in mcp_call_opts means: the layout before flags and on_task (0.1), so
 * that a program built then, which could not set them, never has them read. */
#define MCP__CALL_OPTS_V1 offsetof(mcp_call_opts, flags)

/* ---- Tasks (tasks.c; loop thread) ---- */

/* A reply of k's request that concerns a task (a CreateTaskResult of tools/call, or the
 * first tasks/get of mcp_client_task_result): handled, 1; else 0. */
int mcp__task_reply(call *k, int status, const json_t *result, const mcp_rpc_error *err);
/* The answers to the task's questions: sent with tasks/update. */
void mcp__task_answered(call *k, json_t *responses);
/* mcp_client_cancel of a call that follows a task: 1 when handled (tasks/cancel). */
int mcp__task_cancel(call *k, const char *reason);
/* The client gives a task up (its handlers refused): tasks/cancel, not waited for. */
void mcp__task_abandon(call *k);
void mcp__task_free(call *k);
/* Declares the extension in (*params)._meta's clientCapabilities (made when NULL):
 * MCP_OK, MCP_EINVAL (a _meta that is no object), MCP_ENOMEM. Any thread. */
int mcp__task_declare(json_t **params);

/* ---- subscriptions/listen (listen.c) ---- */

/* Loop thread: a notification for a listen (it names a subscription, or the legacy
 * era maps it to one). 1 when a listen took it, 0 when it is the application's. */
int mcp__client_listen_note(mcp_client *c, const char *method, const json_t *params);
/* Loop thread: mcp_client_cancel of a legacy-era listen (ended, 1), or 0 when id is none
 * (a modern listen is a request of the engine's, cancelled as any). */
int mcp__client_listen_cancel(mcp_client *c, json_int_t id);
/* Loop thread: the connection ended; every listen ends with status. */
void mcp__client_listen_fail_all(mcp_client *c, int status, const char *why);

#endif
