/*
 * libmcp event stores: where the Streamable HTTP transport keeps the events of
 * its SSE streams so that a client that lost its connection can resume with
 * Last-Event-ID and get exactly what it missed.
 *
 * The transport names every event by (session, stream, seq): seq increases
 * within a session and orders its events; event ids on the wire are made from
 * them by the transport, with a per-session secret, so ids cannot be guessed
 * across sessions. Since an id names its stream, finding the stream of an id
 * needs no store lookup. A store only keeps and replays bytes.
 *
 * Every operation is called on the transport's loop thread and must not block.
 * A networked store (Redis) queues its writes and may answer replays later,
 * through the callbacks, on the same loop thread.
 */
#ifndef MCP_STORE_H
#define MCP_STORE_H

#include <stdint.h>

#include <mcp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One replayed event; data is valid only during the call. */
typedef void (*mcp_event_fn)(void *arg, uint64_t seq, const char *data, size_t len);
/*
 * End of a replay. status: MCP_OK; MCP_ENOENT when after_seq is not an event the
 * store holds for that stream (never stored, another stream's, or expired).
 */
typedef void (*mcp_replay_done_fn)(void *arg, int status);

typedef struct mcp_event_store_ops {
    /* Keeps an event. data may be empty (len 0): a marker, e.g. a priming event,
     * which replay skips but which makes its seq a valid place to resume after. */
    int (*append)(void *self, const char *session, uint64_t stream, uint64_t seq, const char *data,
                  size_t len);
    /* Replays the events of (session, stream) with seq > after_seq, in order, then
     * calls done. May complete before returning. Returns MCP_OK if done will be called. */
    int (*replay)(void *self, const char *session, uint64_t stream, uint64_t after_seq,
                  mcp_event_fn emit, mcp_replay_done_fn done, void *arg);
    /* Forgets a session's events (the session ended). */
    void (*drop_session)(void *self, const char *session);
    /* Drops what has outlived the store's bounds (its TTL) in every session; the
     * transport calls it now and then. May be NULL (a store that expires by itself). */
    void (*expire)(void *self);
    /* Frees the store. */
    void (*destroy)(void *self);
} mcp_event_store_ops;

typedef struct mcp_event_store mcp_event_store;

/* Wraps a store implementation. ops is copied; self is owned by the store from now
 * on (ops->destroy frees it). NULL on ENOMEM. */
MCP_EXTERN mcp_event_store *mcp_event_store_new(const mcp_event_store_ops *ops, void *self);
MCP_EXTERN void mcp_event_store_free(mcp_event_store *store);

/*
 * The in-memory store: per session at most max_events events and max_bytes
 * bytes (the oldest go first), each kept at most ttl_ms. Appends are O(1);
 * a replay of k events is O(log n + k). Zeroed options give the defaults:
 * 10,000 events, 16 MiB, 5 minutes, 256 MiB in all.
 */
typedef struct mcp_memory_store_opts {
    size_t max_events;
    size_t max_bytes;
    int ttl_ms;
    /* Bytes of all sessions together (default 256 MiB): past it the appending
     * session's oldest events go first, then other sessions'. */
    size_t max_total_bytes;
} mcp_memory_store_opts;

MCP_EXTERN mcp_event_store *mcp_memory_store_new(const mcp_memory_store_opts *opts);

/* What the transport calls (also useful to test a store). */
MCP_EXTERN int mcp_event_store_append(mcp_event_store *store, const char *session, uint64_t stream,
                                      uint64_t seq, const char *data, size_t len);
MCP_EXTERN int mcp_event_store_replay(mcp_event_store *store, const char *session, uint64_t stream,
                                      uint64_t after_seq, mcp_event_fn emit,
                                      mcp_replay_done_fn done, void *arg);
MCP_EXTERN void mcp_event_store_drop_session(mcp_event_store *store, const char *session);
MCP_EXTERN void mcp_event_store_expire(mcp_event_store *store);

#ifdef __cplusplus
}
#endif
#endif
