/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC 2.0 peer engine shared by server sessions and clients.
 *
 * One mcp__rpc is one end of one MCP connection or session. It parses
 * incoming message texts (single messages, and batches where allowed),
 * answers malformed ones with the precise error, matches responses to the
 * requests it sent (with a timer each), routes notifications/progress to the
 * request that asked for it and notifications/cancelled to the request it
 * cancels. Everything here runs on the loop thread only.
 *
 * Streams: every message comes from, and goes to, a `stream` (a number the
 * transport gives meaning to: stdio has one, Streamable HTTP one per POST and
 * one per GET). The engine only carries it along.
 */
#ifndef MCP_PROTOCOL_RPC_H
#define MCP_PROTOCOL_RPC_H

#include <stdint.h>
#include <uv.h>

#include "util/util.h"

#include <mcp/common.h>

#include "protocol/meta.h"

typedef struct mcp__rpc mcp__rpc;
typedef struct mcp__batch mcp__batch;

/* An incoming request being answered. Owned by the engine until answered. */
typedef struct mcp__inreq {
    mcp__rpc *rpc;
    json_t *id;         /* integer or string */
    const char *method; /* points into msg */
    json_t *params;     /* borrowed from msg; NULL when absent */
    json_t *msg;        /* the whole request */
    uint64_t stream;
    mcp__batch *batch;
    int cancelled;
    void *data;     /* the owner's, e.g. the server's mcp_ctx */
    unsigned flags; /* the owner's too (the server: MCP__REQ_*) */
    mcp__meta meta; /* the owner's: params._meta's 2026-07-28 members, once it reads them */
    void *span;     /* the owner's: its span hooks' handle */
    struct mcp__inreq *prev, *next;
} mcp__inreq;

/* Flags of mcp__rpc_cbs.send. */
#define MCP__SEND_RESPONSE                                                                         \
    0x1u /* the message answers the last open request of a batch or                                \
            a single request that came on `stream` */

typedef struct mcp__rpc_cbs {
    /* Sends one serialised message (compact JSON, no newline). msg is the value
     * that text serialises (borrowed; NULL for the engine's out-of-memory error
     * answer, and for a notification sent as text, mcp__rpc_notify_text). text NULL with
     * MCP__SEND_RESPONSE: a request of `stream` ended without an answer (it was cancelled), so
     * nothing is to be written. */
    int (*send)(void *user, uint64_t stream, const json_t *msg, const char *text, size_t len,
                unsigned flags);
    /* A valid request. The owner answers it with mcp__rpc_respond*, now or later. */
    void (*on_request)(void *user, mcp__inreq *req);
    /* A valid notification other than progress and cancelled for our requests. */
    void (*on_notification)(void *user, const char *method, const json_t *params, uint64_t stream);
    /* The peer cancelled req (req->cancelled is already set), with the reason it gave
     * (borrowed for the call; NULL when none). May be NULL. */
    void (*on_cancelled)(void *user, mcp__inreq *req, const char *reason);
    /* An outgoing request ended, however (answered, timed out, cancelled, failed),
     * just before its callback runs. May be NULL. */
    void (*on_request_done)(void *user, json_int_t id);
    /* An incoming request is answered with msg (borrowed; NULL when none could be built),
     * just before it is sent (or dropped: req->cancelled, or the engine closed). May be
     * NULL. */
    void (*on_answered)(void *user, mcp__inreq *req, const json_t *msg);
} mcp__rpc_cbs;

/* Outgoing request completion: status MCP_OK (result set), MCP_ERPC (err set),
 * MCP_ETIMEDOUT, MCP_ECANCELED or MCP_ECLOSED. result and err are borrowed. */
typedef void (*mcp__reply_fn)(void *arg, int status, const json_t *result,
                              const mcp_rpc_error *err);
/* notifications/progress params for an outgoing request (borrowed). */
typedef void (*mcp__progress_fn)(void *arg, const json_t *params);

/* Creates an engine. Returns NULL on ENOMEM. */
mcp__rpc *mcp__rpc_new(uv_loop_t *loop, const mcp__rpc_cbs *cbs, void *user);
/* Batches are refused (-32600) unless allowed (where the revision has `batches`). */
void mcp__rpc_allow_batch(mcp__rpc *rpc, int allow);
/* notifications/cancelled that names none of the peer's requests in progress goes to
 * on_notification instead of being dropped: a server of 2026-07-28 ends a
 * subscriptions/listen of its client so (basic/patterns/cancellation.mdx). */
void mcp__rpc_forward_unmatched_cancel(mcp__rpc *rpc);
/* An id of the engine's outgoing requests, never used by one: for something the owner
 * must name as a request of its own without sending one. */
json_int_t mcp__rpc_take_id(mcp__rpc *rpc);
/* The engine's next outgoing ids start at base (several engines answering one peer,
 * as nodes of one deployment do, keep their ids apart so). */
void mcp__rpc_set_id_base(mcp__rpc *rpc, json_int_t base);
/*
 * Stops the engine: fails outgoing requests with MCP_ECLOSED, marks incoming
 * ones cancelled (their later answers are dropped) and sends nothing more.
 */
void mcp__rpc_close(mcp__rpc *rpc);
/* Closes (if needed) and drops the owner's reference; memory goes when the
 * last incoming request is answered. */
void mcp__rpc_free(mcp__rpc *rpc);
int mcp__rpc_closed(const mcp__rpc *rpc);
/* The peer can no longer answer (its input closed): fails outgoing requests with
 * MCP_ECLOSED now and later ones at once, while answers can still be sent. */
void mcp__rpc_input_closed(mcp__rpc *rpc);

/* Feeds one message text (a JSON value: object or batch array). */
void mcp__rpc_feed(mcp__rpc *rpc, const char *text, size_t len, uint64_t stream);
/* The same for a value already parsed (borrowed). */
void mcp__rpc_feed_value(mcp__rpc *rpc, json_t *value, uint64_t stream);
/* Sends the error answer for a message too large to be read (id null). */
void mcp__rpc_reject_oversized(mcp__rpc *rpc, size_t seen, size_t limit, uint64_t stream);

/*
 * Sends a request. params is stolen (may be NULL). timeout_ms <= 0: none.
 * With progress_cb, params._meta.progressToken is set to the request id.
 * *id_out gets the id. MCP_OK, MCP_ENOMEM, MCP_ECLOSED.
 */
int mcp__rpc_request(mcp__rpc *rpc, const char *method, json_t *params, uint64_t stream,
                     int timeout_ms, mcp__reply_fn cb, mcp__progress_fn progress_cb, void *arg,
                     json_int_t *id_out);
/*
 * Completes an outgoing request that the transport cannot deliver or whose
 * answer can no longer come: cb(status, NULL, err). Nothing is sent. err may be
 * NULL. MCP_OK or MCP_ENOENT (no such request pending).
 */
int mcp__rpc_fail(mcp__rpc *rpc, json_int_t id, int status, const mcp_rpc_error *err);
/* The same for every outgoing request pending. */
void mcp__rpc_fail_all(mcp__rpc *rpc, int status, const mcp_rpc_error *err);
/* Cancels an outgoing request: notifications/cancelled, then cb(MCP_ECANCELED). */
int mcp__rpc_cancel(mcp__rpc *rpc, json_int_t id, const char *reason);
/* Sends a notification; params stolen (may be NULL). */
int mcp__rpc_notify(mcp__rpc *rpc, const char *method, json_t *params, uint64_t stream);
/* The same, the notification already written (a whole JSON-RPC notification, len bytes
 * at text): sent as it is. */
int mcp__rpc_notify_text(mcp__rpc *rpc, const char *text, size_t len, uint64_t stream);

/* Answers req with result (stolen) or an error, and frees req. A cancelled
 * request's answer is dropped, as the spec asks. */
int mcp__rpc_respond(mcp__inreq *req, json_t *result);
int mcp__rpc_respond_error(mcp__inreq *req, int code, const char *message, json_t *data);

/* Frees this thread's serialisation buffer: loops call it when they end. */
void mcp__rpc_thread_cleanup(void);
/* The calling thread's serialisation buffer, emptied, for a message written outside an
 * engine (a handler's notification); NULL when it cannot be had (in use, or out of
 * memory): the caller then uses one of its own. Given back with mcp__rpc_scratch_give. */
mcp__buf *mcp__rpc_scratch_take(void);
void mcp__rpc_scratch_give(mcp__buf *b);

/* Number of incoming requests not yet answered. */
size_t mcp__rpc_inflight(const mcp__rpc *rpc);

/* ---- Message helpers ---- */

typedef enum mcp__msg_kind {
    MCP__MSG_INVALID,
    MCP__MSG_REQUEST,
    MCP__MSG_NOTIFICATION,
    MCP__MSG_RESPONSE
} mcp__msg_kind;

/*
 * Classifies one message by JSON-RPC 2.0's rules. For an invalid one, *code
 * and *why give the error to answer with and *echo_id the id to echo (NULL
 * when the id itself is unusable).
 */
mcp__msg_kind mcp__jsonrpc_classify(const json_t *msg, int *code, const char **why,
                                    const json_t **echo_id);
/* Parses a message text. On failure returns NULL and *error is the -32700
 * answer (with line and column) to send. */
json_t *mcp__jsonrpc_parse(const char *text, size_t len, json_t **error);

/* True for a valid JSON-RPC id in MCP: an integer or a string. */
int mcp__id_valid(const json_t *id);
/* {"jsonrpc":"2.0","id":id,"error":{"code","message"[,"data"]}}; id NULL -> null. */
json_t *mcp__error_message(const json_t *id, int code, const char *message, json_t *data);

#endif
