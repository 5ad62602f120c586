/* SPDX-License-Identifier: MIT */
/*
 * The seam between transports and the MCP side, owned by the side that implements
 * it (the server core, and the gateway's forwarder); the transports point down to it.
 *
 * A transport (stdio, Streamable HTTP, HTTP+SSE) moves messages; an
 * answerer answers them. The transports reach the MCP side only through this
 * header: they open a session, feed it the messages that arrive with the stream
 * each came on, ask it the few facts a transport needs (the negotiated revision,
 * whether requests are in flight), and close it. The session talks back through
 * the mcp__session_io the transport gave it.
 *
 * The server core is one answerer (src/server/answerer.c: mcp__server_answerer
 * serves an mcp_server's tools, resources and prompts). Another answerer, such
 * as a forwarder to a child process, implements mcp__answerer_ops and is put
 * behind the same transports without touching the server core.
 *
 * Threading: an answerer is attached to one loop, and every call here is made
 * on that loop's thread, as are the session_io callbacks.
 */
#ifndef MCP_SERVER_ANSWERER_H
#define MCP_SERVER_ANSWERER_H

#include <stdint.h>

#include <jansson.h>

#include <mcp/auth.h>

#include "protocol/revision.h"
#include "util/util.h"

/* The stream that carries messages not tied to a request (stdio has only this one). */
#define MCP__STREAM_STANDALONE 0

/* Tasks shared by the nodes of a deployment (the Redis cluster): what the transport
 * gives the answerer so that a task made on any node is served on every node. */
struct mcp__task_store;
typedef struct mcp__task_link {
    struct mcp__task_store *store; /* the shared store (borrowed; NULL: the server's own) */
    uint32_t node;                 /* this node's number (0: one process alone) */
    /* Asks node to stop the run `run` of a task (a bus message): fire and forget. */
    void (*stop_remote)(void *user, uint32_t node, const char *run);
    /* Whether node is alive: done(arg, 1), (arg, 0) when it is gone, (arg, -1) when not
     * known. Always runs, maybe at once. */
    void (*node_alive)(void *user, uint32_t node, void (*done)(void *arg, int alive), void *arg);
    void *user;
} mcp__task_link;

/* What a transport gives a session. */
typedef struct mcp__session_io {
    /* Sends one serialised message on a stream (see mcp__rpc_cbs.send). */
    int (*send)(void *io, uint64_t stream, const char *text, size_t len, unsigned flags);
    /* The session has no more requests in flight (may be NULL). */
    void (*idle)(void *io);
    /* SEP-1699: ends the SSE stream `stream`, or the standalone stream (all of them when
     * `all`), so the client resumes after retry_ms (< 0: the configured interval).
     * NULL, or MCP_ENOTSUP, where the transport cannot. */
    int (*close_stream)(void *io, uint64_t stream, int retry_ms);
    int (*close_standalone)(void *io, int all, int retry_ms);
    /* Asked after a handler's message went out on `stream`: true when the stream
     * cannot take more for now (its reader is behind, or away with as much kept for
     * it as the store can hold). The handler then waits in its next mcp_ctx call
     * until the transport calls the answerer's stream_ready. May be NULL. */
    int (*congested)(void *io, uint64_t stream);
    /* Asked as a handler starts on `stream`: true when what would keep its messages
     * (a shared store) cannot take more for now, so that its first message waits as
     * its next ones would; then stream_ready follows too. May be NULL. (Not the
     * stream's own state: nothing of the handler's is out yet to wait for.) */
    int (*backlogged)(void *io, uint64_t stream);
    /* The value of the request header `name` (case-insensitive) of the HTTP request
     * that carried `stream`, or NULL (no such header, no such stream, not HTTP). For
     * revision 2026-07-28's checks of Mcp-Param-* headers against the arguments. May be
     * NULL. */
    const char *(*header)(void *io, uint64_t stream, const char *name);
    /* The answerer ends the session (what served it is gone): the transport closes it
     * as a DELETE would, after the current call has returned, and then calls the
     * answerer's close. May be NULL. */
    void (*end)(void *io);
    /* What the session's state export holds changed (initialize was answered, the log
     * level was set, a subscription was made or ended). May be NULL. */
    void (*changed)(void *io);
    /* Where server-wide notifications for this session are delivered, when it is shared
     * with other nodes: MCP__HERE_OWNER (its standalone stream is here), MCP__HERE_NONE
     * (it has none anywhere), MCP__HERE_ELSEWHERE. May be NULL (here). */
    int (*here)(void *io);
    /* The answerer needs what an idle session holds (a server process, say): the
     * transport closes another idle session as it does to make room in its table (never
     * used ones first, then those of the address that opened the most, then the least
     * recently used), before it returns. 1 when one was closed. May be NULL. */
    int (*make_room)(void *io);
    /* The address of the client whose HTTP request carried `stream` ("" when not
     * known), for sharing what a client may hold fairly between clients. May be NULL. */
    const char *(*peer)(void *io, uint64_t stream);
} mcp__session_io;

#define MCP__HERE_ELSEWHERE 0
#define MCP__HERE_NONE 1
#define MCP__HERE_OWNER 2

/* More flags of mcp__session_io.send, beside MCP__SEND_RESPONSE (protocol/rpc.h): the
 * answer of a 2026-07-28 request that its HTTP response must carry with status 400
 * (header mismatch, unsupported revision, missing client capability) or 404 (unknown
 * method), when it is the whole response. */
#define MCP__SEND_HTTP_400 0x100u
#define MCP__SEND_HTTP_404 0x200u

typedef struct mcp__answerer mcp__answerer;
/* One session of an answerer, opaque to transports. */
typedef struct mcp__asession mcp__asession;

/* mcp__answerer_ops.open flags. */
/* A stateless HTTP session: it lives for one POST and nothing of the client's can
 * come back to it, so no request to the client can be answered. */
#define MCP__OPEN_STATELESS 0x1u

typedef struct mcp__answerer_ops {
    /* Opens a session whose messages go out through io (io_user is passed back).
     * id is the transport's session id, copied (NULL for stdio and stateless).
     * NULL when out of memory. */
    mcp__asession *(*open)(mcp__answerer *a, const mcp__session_io *io, void *io_user,
                           const char *id, unsigned flags);
    /* Feeds one message text, or one parsed message or batch (borrowed), received on
     * `stream`. Nothing happens once the session is closed. */
    void (*feed)(mcp__asession *s, const char *text, size_t len, uint64_t stream);
    void (*feed_value)(mcp__asession *s, json_t *value, uint64_t stream);
    /* Who the messages fed from now on act for (an authorized HTTP request's
     * principal; a reference is taken, NULL for none). May be NULL: the answerer
     * has no use for it (a gateway never passes a token on). */
    void (*set_principal)(mcp__asession *s, mcp_principal *p);
    /* The scopes (space-separated) a call of `tool` needs into buf (len bytes): 1 when
     * it names some, else 0. May be NULL: none. Any thread. */
    int (*tool_scopes)(mcp__answerer *a, const char *tool, char *buf, size_t len);
    /* A message of `seen` bytes was too large to read: answered with an error. */
    void (*reject_oversized)(mcp__asession *s, size_t seen, uint64_t stream);
    /* Serves requests without an initialize (stateless HTTP), as if the client had
     * negotiated revision `rev` (NULL: the latest) and declared no capabilities. */
    void (*assume_initialized)(mcp__asession *s, const mcp__revision *rev);
    /* No more input will come (stdio end of file): requests to the client fail at once. */
    void (*input_closed)(mcp__asession *s);
    /* Ends the session: its handlers are cancelled, io is never called again, and the
     * handle is dangling after the call (what runs still finishes on its own). */
    void (*close)(mcp__asession *s);
    /* The negotiated protocol revision (a row of the table), NULL before initialize. */
    const mcp__revision *(*revision)(const mcp__asession *s);
    /* True once initialize was answered (or assumed). */
    int (*initialized)(const mcp__asession *s);
    /* Requests in flight. */
    size_t (*inflight)(const mcp__asession *s);
    /* True when every request in flight waits on a congested stream and nothing else
     * goes on. */
    int (*all_paused)(const mcp__asession *s);
    /* `stream` can take messages again: handlers paused on it go on. */
    void (*stream_ready)(mcp__asession *s, uint64_t stream);
    /* Cancels the handlers paused on `stream` (their answers still go out); how many. */
    int (*cancel_paused)(mcp__asession *s, uint64_t stream);
    /* The largest message a client may send, in bytes. */
    size_t (*max_message)(const mcp__answerer *a);
    /* The eras it serves (MCP_ERA_LEGACY, MCP_ERA_MODERN of mcp/server.h). */
    unsigned (*eras)(const mcp__answerer *a);
    /* The client closed `stream`, the response of a 2026-07-28 request: that is its
     * cancellation (the handler sees it cancelled, nothing more is sent for it). */
    void (*cancel_stream)(mcp__asession *s, uint64_t stream);
    /* The endpoint is stopping: long-lived requests (subscriptions/listen) end now
     * with their graceful completion result. May be NULL. */
    void (*drain)(mcp__asession *s);
    /* Detaches from the loop once every session is gone, closed or not, and what it
     * runs has returned; then done(arg) runs on the loop, nothing of the answerer is
     * left on it, and a is freed. Sessions closed before are waited for. */
    void (*shutdown)(mcp__answerer *a, void (*done)(void *arg), void *arg);
    /* Sharing a session between nodes of one deployment (the Redis cluster).
     * NULL for an answerer whose sessions cannot be served elsewhere. */
    /* What another node needs to serve the session: a new JSON object, NULL before
     * initialize (or out of memory). */
    json_t *(*export_state)(const mcp__asession *s);
    /* Takes state (borrowed) from another node's export: the session is then served as
     * initialized there. A change to a session already initialized may leave out
     * "caps" and "info" (what initialize settled, which never changes after).
     * MCP_EINVAL for state it cannot read (nothing changes). */
    int (*import_state)(mcp__asession *s, const json_t *state);
    /* The ids of the session's requests to the client start at base. */
    void (*set_id_base)(mcp__asession *s, json_int_t base);
    /* Server-wide notifications raised here (list changes, resource updates, logs, and
     * those for one session, which may be served elsewhere: session not NULL) are also
     * given to fn, to send to other nodes; deliver takes theirs. */
    void (*set_fanout)(mcp__answerer *a,
                       void (*fn)(void *user, const char *method, const json_t *params,
                                  const char *uri, int level, const char *session),
                       void *user);
    void (*deliver)(mcp__answerer *a, const char *method, const json_t *params, const char *uri,
                    int level, const char *session);
    /* This node's number in the deployment, and where other nodes reach it ("host:port",
     * "" when not known), once it has them. May be NULL. */
    void (*set_node)(mcp__answerer *a, uint32_t node, const char *addr);
    /* The node, other than this one, that must serve msg, a request of revision
     * 2026-07-28 (a retry whose requestState names a request waiting there), or 0 when
     * this one may; its address goes to addr (size bytes; "" when not known). May be
     * NULL. */
    uint32_t (*home)(mcp__answerer *a, const json_t *msg, char *addr, size_t size);
    /* Tasks: the store and node the deployment shares (link copied; called on the loop
     * before requests are fed), and a run another node was asked to stop (tasks/cancel
     * there). May be NULL: an answerer without tasks of its own. */
    void (*set_tasks)(mcp__answerer *a, const mcp__task_link *link);
    void (*stop_task_run)(mcp__answerer *a, const char *run);
} mcp__answerer_ops;

struct mcp__answerer {
    const mcp__answerer_ops *ops;
};

/* The answerer of an mcp_server (src/server/answerer.c), attached to loop (called on
 * the loop's thread). NULL when out of memory. */
struct mcp_server;
mcp__answerer *mcp__server_answerer_new(struct mcp_server *srv, uv_loop_t *loop);

#endif
