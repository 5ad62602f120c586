/* SPDX-License-Identifier: MIT */
/*
 * What nodes of one deployment share, so that any node serves any request of a
 * session and resumes any stream (scale-out behind a load balancer). The transport
 * (transport/shttp_*.c) sees only this header; the one implementation keeps it in
 * Redis (store/redis/), and no other file knows of Redis.
 *
 * A cluster is one connection set to the shared server, made from a URL, and the
 * node's identity in it:
 *   - the node number, held by no other live node and drawn at random below 2^20
 *     (a node that starts again gets a new one; a number comes back about once in a
 *     million starts), which the transport puts in the high bits of its stream
 *     ids and of the ids of its requests to clients, so that any node knows which
 *     node owns a stream or awaits an answer without asking;
 *   - a heartbeat, so that other nodes learn within a bound that a node is gone;
 *   - the session registry: one record per session (what any node needs to serve
 *     it, written by the transport as an opaque text), expiring after its idle time;
 *   - the event store (mcp__cluster_event_store), whose streams other nodes replay
 *     and then follow live (mcp__cluster_follow);
 *   - a message bus: to one node, or to every node.
 *
 * Every call is made on the loop thread the cluster is attached to, and every
 * callback runs there. Nothing blocks, except the first connection, made by
 * mcp__cluster_attach, which waits up to the connect timeout: a node does not serve
 * before it has its number. After that, a lost connection is made again in the
 * background with a backoff; meanwhile operations that need an answer fail with
 * MCP_ECLOSED through their callbacks, writes are dropped (their callers see
 * mcp__cluster_up() false), and the up callback says when it is back.
 */
#ifndef MCP_STORE_CLUSTER_H
#define MCP_STORE_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include <mcp/store.h>

typedef struct mcp__cluster mcp__cluster;

/* Messages on the bus name their kind with one byte (the transport's letters). */
typedef struct mcp__cluster_msg {
    char kind;
    const char *session; /* "" when the message is about no session */
    const char *data;    /* the payload, not NUL-terminated */
    size_t len;
    uint32_t from; /* the sending node's number */
} mcp__cluster_msg;

typedef struct mcp__cluster_cbs {
    /* A bus message for this node (sent to it, or to every node, this one included
     * only when it was sent by another: a node does not hear its own broadcasts).
     * Borrowed for the call. */
    void (*message)(void *user, const mcp__cluster_msg *msg);
    /* The connection went down (up 0) or came back (up 1). May be NULL. */
    void (*up)(void *user, int up);
    void *user;
    /* What was written and not yet taken by the server is back under half its bound
     * (see mcp__cluster_congested), or the connection went down. May be NULL. */
    void (*drained)(void *user);
} mcp__cluster_cbs;

typedef struct mcp__cluster_opts {
    const char *url; /* redis://[:password@]host[:port][/db]; required */
    /* Prefix of every key and channel (default "mcp:"): deployments sharing one
     * server keep apart by it. */
    const char *prefix;
    int connect_timeout_ms; /* 0: 2000 */
    /* Heartbeat period (0: 1000 ms); a node is taken for gone when it missed
     * heartbeats for three periods. */
    int heartbeat_ms;
    /* Event store bounds, as the memory store's (0: its defaults): per stream at most
     * max_events events (the oldest go first), an event larger than max_event_bytes
     * is not kept, each stream's events expire ttl_ms after its last append. */
    size_t max_events;
    size_t max_event_bytes;
    int ttl_ms;
    /* Live sessions in the whole deployment (0: 100000): a new session's first record
     * past it is refused (MCP__CLUSTER_PUT_NEW, MCP_ELIMIT). Counted in Redis, whatever
     * each node's own bound. */
    size_t max_sessions;
} mcp__cluster_opts;

/* A cluster, not yet connected (mcp__cluster_attach connects). opts is copied.
 * MCP_EINVAL for a URL that does not parse (why, when not NULL, gets a sentence),
 * MCP_ENOMEM. */
int mcp__cluster_new(const mcp__cluster_opts *opts, const mcp__cluster_cbs *cbs, mcp__cluster **out,
                     char *why, size_t why_len);
/* Connects on loop (blocking up to the connect timeout for the first connection),
 * takes a node number, starts the heartbeat and subscribes to the bus.
 * MCP_ECONNECT when the server cannot be reached or refuses (auth, db). */
int mcp__cluster_attach(mcp__cluster *c, struct uv_loop_s *loop);
/* Closes every handle and connection on the loop; callbacks of what was under way
 * run with MCP_ECLOSED before it returns or on the loop's next turns. The caller
 * then runs the loop until its handles are closed. Attach may follow again. */
void mcp__cluster_detach(mcp__cluster *c);
/* Frees a detached (or never attached) cluster. NULL is allowed. */
void mcp__cluster_free(mcp__cluster *c);

/* This node's number (valid after attach): 1 and up, below 2^20. */
uint32_t mcp__cluster_node(const mcp__cluster *c);
/* True while connected. */
int mcp__cluster_up(const mcp__cluster *c);
/* True while what this node wrote and the server has not taken yet passes a bound
 * (MCP__CLUSTER_MAX_BACKLOG): the server is behind, and whoever can wait (a handler
 * storing events) should, until the drained callback. Without it, a flood of events
 * would grow that backlog without end, and the heartbeat queued behind it would come
 * so late that other nodes took this one for dead. */
#define MCP__CLUSTER_MAX_BACKLOG (256u << 10)
#define MCP__CLUSTER_MAX_INFLIGHT 8192 /* writes not answered yet */
int mcp__cluster_congested(mcp__cluster *c);

/* ---- Session registry ---- */

/* Writes the record of session id (text, len bytes) with a time to live, unless the
 * session was ended (mcp__cluster_session_delete). MCP_OK when queued, MCP_ECLOSED
 * when down. done (may be NULL) runs on a later loop turn, only when MCP_OK was
 * returned, with MCP_OK once the server has it, MCP_ECANCELED when the session was
 * ended, MCP_EEXIST when MCP__CLUSTER_PUT_MISSING found a record, MCP_ELIMIT when
 * MCP__CLUSTER_PUT_NEW found the deployment's sessions at their bound, MCP_EIO when
 * the server refused the write (full), or MCP_ECLOSED. */
typedef void (*mcp__cluster_done_fn)(void *arg, int status);
#define MCP__CLUSTER_PUT_MISSING 1u /* only where there is no record (after a loss) */
#define MCP__CLUSTER_PUT_NEW 2u     /* a new session: counted against max_sessions */
int mcp__cluster_session_put(mcp__cluster *c, const char *id, const char *text, size_t len,
                             int ttl_ms, unsigned flags, mcp__cluster_done_fn done, void *arg);
/* Reads a record: done(arg, MCP_OK, text, len), (MCP_ENOENT, NULL, 0) when there is
 * none, (MCP_ECLOSED, NULL, 0) when the server cannot be asked. done always runs,
 * maybe before this returns; text is borrowed for the call. */
typedef void (*mcp__cluster_get_fn)(void *arg, int status, const char *text, size_t len);
void mcp__cluster_session_get(mcp__cluster *c, const char *id, mcp__cluster_get_fn done, void *arg);
/* Extends a record's time to live (the session was used). done (may be NULL), as
 * put's: MCP_OK, MCP_ECANCELED (the session was ended), MCP_ENOENT (no record: it
 * expired, or the server lost it), MCP_ECLOSED. */
int mcp__cluster_session_touch(mcp__cluster *c, const char *id, int ttl_ms,
                               mcp__cluster_done_fn done, void *arg);
/* Deletes the record and every stored event of the session, and marks it ended for
 * ttl_ms (a later put is refused: a node that missed the news cannot bring it back).
 * Fire and forget; MCP_ECLOSED when down. */
int mcp__cluster_session_delete(mcp__cluster *c, const char *id, int ttl_ms);

/* ---- Bus ---- */

/* Sends a message to node `to`, or to every other node when to is 0. Fire and
 * forget: MCP_OK when queued, MCP_ECLOSED when down. */
int mcp__cluster_send(mcp__cluster *c, uint32_t to, char kind, const char *session,
                      const char *data, size_t len);
/* As mcp__cluster_send, then heard(arg, n) once the server has passed it on: n is
 * how many connections it reached (on the channel to every node, this node's own
 * among them), -1 when that is not known (the connection was lost). Only when MCP_OK
 * was returned. */
typedef void (*mcp__cluster_alive_fn)(void *arg, int alive);
int mcp__cluster_send_counted(mcp__cluster *c, uint32_t to, char kind, const char *session,
                              const char *data, size_t len, mcp__cluster_alive_fn heard, void *arg);
/* done(arg, 1) when node `node` has a heartbeat, (arg, 0) when it has none for three
 * periods, (arg, -1) when the server cannot be asked. Always runs, maybe at once. */
void mcp__cluster_node_alive(mcp__cluster *c, uint32_t node, mcp__cluster_alive_fn done, void *arg);

/* What other nodes reach this node's HTTP endpoint at ("host:port"), or NULL: the
 * value of its heartbeat from now on. Copied. */
void mcp__cluster_set_address(mcp__cluster *c, const char *address);
/* The HTTP address node `node` set: done(arg, MCP_OK, text, len) ("1" when it set
 * none), (MCP_ENOENT, NULL, 0) when it has no heartbeat (gone), (MCP_ECLOSED, NULL, 0)
 * when the server cannot be asked. Always runs, maybe at once. */
void mcp__cluster_node_address(mcp__cluster *c, uint32_t node, mcp__cluster_get_fn done, void *arg);

/* ---- Events ---- */

/* The event store over the cluster's connection, for the transport (mcp_http_opts.store
 * is then not used): its append writes the event and publishes it to followers in one
 * pipelined write; replay answers later. Borrowed: it lives as long as the cluster, and
 * its attach and detach are no-ops (the cluster's own do the work). */
mcp_event_store *mcp__cluster_event_store(mcp__cluster *c);

/* The next append to the cluster's event store is of a stream that may be followed,
 * and text (borrowed until then) is the owner's text about it (the ids of the requests
 * it answers, say): stored with the event, so that a follower finds it whichever event
 * it resumes after. No command of its own. */
void mcp__cluster_open_next(mcp__cluster *c, const char *text, size_t len);
/* The owner could not store event seq of the stream (the server was out of reach):
 * a follow that would have emitted it ends with MCP_ENOENT instead of skipping it.
 * Written once the server is back, before any later event. */
int mcp__cluster_stream_gap(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq);
/* Appends to the cluster's event store are written to the server at once (the
 * default), or (deferred 1) only by mcp__cluster_flush, which the caller runs before any
 * client can read of them, and otherwise at the loop's next turn: the appends of one
 * turn then go in one write. */
void mcp__cluster_defer_flush(mcp__cluster *c, int deferred);
/* Writes what waits for the server now (what the connection takes without waiting). */
void mcp__cluster_flush(mcp__cluster *c);
/* The next append to the cluster's event store is its stream's last event: it is
 * stored and published with the end (one entry, one message), as if
 * mcp__cluster_stream_end followed it. */
void mcp__cluster_final_next(mcp__cluster *c);
/* 1 when the last append was stored with its stream's end (mcp__cluster_final_next),
 * so that no mcp__cluster_stream_end is needed for it; 0 when it was not (not stored,
 * or too large to keep). Read once. */
int mcp__cluster_final_taken(mcp__cluster *c);
/* The stream has its last event (seq, the last appended): followers end. */
int mcp__cluster_stream_end(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq);
/* Streams of a session whose ids agree from this bit up (in the transport's ids, one
 * node's) share one Redis stream, their events in the order of their seqs: the seqs
 * of those streams must grow together (the transport numbers a session's events on a
 * node from one counter). */
#define MCP__CLUSTER_GROUP_SHIFT 40
/* The session ended elsewhere (on another node, which deleted its keys): what this
 * node holds of it to write is dropped, not written after the delete. */
void mcp__cluster_session_gone(mcp__cluster *c, const char *session);
/* Drops the events of the session stored with the stream's (its group's) whose seqs are
 * below min_seq: the session keeps too many. One command, fire and forget. */
int mcp__cluster_events_trim(mcp__cluster *c, const char *session, uint64_t stream,
                             uint64_t min_seq);
/* The event store's bounds, defaults applied (see mcp__cluster_opts). */
void mcp__cluster_store_bounds(const mcp__cluster *c, size_t *max_events, size_t *max_event_bytes);
/* SEP-1699 on a followed stream: the owner closed it at seq (an event it appended, a
 * priming marker) asking clients to come back after retry_ms. Followers live at that
 * moment end with MCP__CLUSTER_PAUSED once every event up to seq is emitted; the
 * stream itself goes on (nothing is stored for it but the marker). */
int mcp__cluster_stream_pause(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq,
                              int retry_ms);

/*
 * Follows a stream another node writes: emits its events with seq > after_seq in
 * order, those stored first and then the live ones as they are appended, none
 * missed or doubled at the seam, and ends with done(arg, status, text, len):
 *   MCP_OK       the owner ended the stream (mcp__cluster_stream_end) and every
 *                event before the end was emitted;
 *   MCP_ENOENT   after_seq is not an event the store holds for the stream (as replay),
 *                or an event after it was lost (mcp__cluster_stream_gap);
 *   MCP_ECLOSED  the owner node is gone (no heartbeat: owner is the node number the
 *                caller read from the stream id); text is then the owner's
 *                mcp__cluster_open_next text, from the event resumed after or a
 *                later one (NULL when none), so the caller can answer for it.
 *   MCP_ECONNECT this node lost its connection to the shared server (or got an
 *                answer not to be trusted, or fell too far behind the live events):
 *                what the owner does is not known, and the stream itself goes on.
 *   MCP__CLUSTER_PAUSED  the owner paused the stream (mcp__cluster_stream_pause)
 *                while this follow was live: text is "<seq> <retry_ms>".
 * Before any event, once the stream is known to hold after_seq, emit runs once with
 * (arg, after_seq, NULL, 0). A follow without an end marker waits for as long as the
 * owner lives. Returns a
 * handle, or NULL (out of memory, or down: done is then not called).
 * mcp__cluster_unfollow stops it without calling done, also from inside emit (no more
 * emit then); done may not unfollow (the follow is over once done runs).
 */
typedef struct mcp__cluster_follow mcp__cluster_follow;
#define MCP__CLUSTER_PAUSED 1
typedef void (*mcp__cluster_follow_done_fn)(void *arg, int status, const char *text, size_t len);
mcp__cluster_follow *mcp__cluster_follow_start(mcp__cluster *c, const char *session,
                                               uint64_t stream, uint32_t owner, uint64_t after_seq,
                                               mcp_event_fn emit, mcp__cluster_follow_done_fn done,
                                               void *arg);
void mcp__cluster_unfollow(mcp__cluster_follow *f);

/* ---- Tasks ---- */

/* The task store over the cluster's connection (store/tasks.h): every node of the
 * deployment shares its tasks. Borrowed: it lives as long as the cluster. NULL on
 * ENOMEM. */
struct mcp__task_store;
struct mcp__task_store *mcp__cluster_task_store(mcp__cluster *c);

/* ---- Figures (for bench and /metrics) ---- */

typedef struct mcp__cluster_stats {
    uint64_t commands;    /* sent to the server */
    uint64_t round_trips; /* commands whose answer something waited for */
    uint64_t reconnects;  /* connections made again after a loss */
    uint64_t dropped;     /* writes dropped while down */
} mcp__cluster_stats;
void mcp__cluster_stats_get(const mcp__cluster *c, mcp__cluster_stats *out);

#endif
