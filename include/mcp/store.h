/* SPDX-License-Identifier: MIT */
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
 * through the callbacks, on the same loop thread: the transport attaches it to
 * that loop first (the attach operation).
 *
 * Threading: no function here takes a lock. A store is used from one thread
 * at a time: the thread of the loop it is attached to, or, before and after
 * that, the thread that makes or frees it.
 */
#ifndef MCP_STORE_H
#define MCP_STORE_H

#include <stdint.h>

#include <mcp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libuv's loop, named without including <uv.h>: a program that writes no store of
 * its own needs no libuv headers. */
struct uv_loop_s;

/* One replayed event; data is valid only during the call. */
typedef void (*mcp_event_fn)(void *arg, uint64_t seq, const char *data, size_t len);
/*
 * End of a replay. status: MCP_OK; MCP_ENOENT when after_seq is not an event the
 * store holds for that stream (never stored, another stream's, or expired).
 */
typedef void (*mcp_replay_done_fn)(void *arg, int status);

/*
 * A store's operations. size is sizeof(mcp_event_store_ops) as the store was
 * compiled, so that operations appended in later releases read as NULL for a store
 * built against an older header; 0 stands for the five operations append to
 * destroy only, so a store that sets attach or detach must set size (otherwise
 * they are never read).
 */
typedef struct mcp_event_store_ops {
    size_t size;
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
    /* Attaches the store to the loop the transport runs on, before the transport
     * first uses it there; called on that loop's thread. An error fails the start of
     * the transport's endpoint. A store may be attached to several loops over its
     * life (an endpoint stopped and started again), but only to one at a time: it may
     * refuse a second attach while attached (MCP_ESTATE, say). May be NULL (a store
     * that needs no loop). */
    int (*attach)(void *self, struct uv_loop_s *loop);
    /* The transport stops using the store on loop: once for each attach that
     * succeeded, on that loop's thread, and only attach or destroy may follow. The
     * store closes (uv_close) every handle and ends every request it has on loop;
     * the transport then runs the loop until their callbacks have run, and destroys
     * the store only after that, so the host's uv_loop_close succeeds. May be NULL. */
    void (*detach)(void *self, struct uv_loop_s *loop);
} mcp_event_store_ops;

typedef struct mcp_event_store mcp_event_store;

/*
 * Wraps a store implementation; the result is the caller's, freed with
 * mcp_event_store_free(). ops is copied (ops->size bytes of it, operations the
 * caller's header did not know of reading as NULL). On success self belongs to
 * the store (ops->destroy frees it with the store); on failure it stays the
 * caller's. NULL when ops is NULL, append or replay is missing, ops->size is
 * neither 0 nor at least sizeof(size_t), or memory runs out.
 */
MCP_EXTERN mcp_event_store *mcp_event_store_new(const mcp_event_store_ops *ops, void *self);
/*
 * Frees the store: ops->destroy(self) when set, then the wrapper. The store
 * must not be attached to a loop, nor used by an endpoint any more (one that
 * borrowed it has run its done callback); neither is checked. NULL is allowed.
 */
MCP_EXTERN void mcp_event_store_free(mcp_event_store *store);

/*
 * The in-memory store: per session at most max_events events and max_bytes
 * bytes (the oldest go first), each kept at most ttl_ms. Appends are O(1);
 * a replay of k events is O(log n + k). Zeroed options give the defaults:
 * 10,000 events, 16 MiB, 5 minutes, 256 MiB in all.
 *
 * size is sizeof(mcp_memory_store_opts) as the program was compiled, or 0 for
 * the layout of libmcp 0.2 (in later releases too); options appended in later
 * releases then read as zero (their default) for a program built against an
 * older header.
 */
typedef struct mcp_memory_store_opts {
    size_t size;
    size_t max_events;
    size_t max_bytes;
    int ttl_ms;
    /* Bytes of all sessions together (default 256 MiB): past it the appending
     * session's oldest events go first, then other sessions'. */
    size_t max_total_bytes;
} mcp_memory_store_opts;

/*
 * A new in-memory store, the caller's until mcp_event_store_free(); opts (NULL
 * for the defaults) is copied, and a zero or negative ttl_ms, like any other
 * zero, gives the default. An event larger than max_bytes is dropped as soon
 * as it is appended (the append still returns MCP_OK), so it cannot be resumed
 * after. The store takes no lock and has no attach operation, so it cannot
 * refuse a second loop: endpoints that share it must run on one loop. NULL
 * when memory runs out, or when opts->size is neither 0 nor at least
 * sizeof(size_t).
 */
MCP_EXTERN mcp_event_store *mcp_memory_store_new(const mcp_memory_store_opts *opts);

/*
 * What the transport calls (also useful to test a store): each calls the
 * operation of the same name with the store's self and returns its result.
 * store must not be NULL. The strings and data given are borrowed for the call
 * (a store copies what it keeps); emit, done and arg are kept until done runs.
 */

/* ops->append. The in-memory store returns MCP_OK, MCP_EINVAL when seq is not greater
 * than the last seq it holds for that stream, or MCP_ENOMEM. */
MCP_EXTERN int mcp_event_store_append(mcp_event_store *store, const char *session, uint64_t stream,
                                      uint64_t seq, const char *data, size_t len);
/* ops->replay: MCP_OK when done will be called, another error when it will not. The
 * in-memory store always returns MCP_OK, after emitting the events (empty ones
 * skipped) and calling done from inside the call. */
MCP_EXTERN int mcp_event_store_replay(mcp_event_store *store, const char *session, uint64_t stream,
                                      uint64_t after_seq, mcp_event_fn emit,
                                      mcp_replay_done_fn done, void *arg);
/* ops->drop_session and ops->expire; nothing when the store has none. */
MCP_EXTERN void mcp_event_store_drop_session(mcp_event_store *store, const char *session);
MCP_EXTERN void mcp_event_store_expire(mcp_event_store *store);
/* ops->attach, or MCP_OK when the store has none (a store that needs no loop). Called on
 * loop's thread. */
MCP_EXTERN int mcp_event_store_attach(mcp_event_store *store, struct uv_loop_s *loop);
/* ops->detach, when the store has one; on loop's thread, once for each attach that
 * succeeded. */
MCP_EXTERN void mcp_event_store_detach(mcp_event_store *store, struct uv_loop_s *loop);

#ifdef __cplusplus
}
#endif
#endif
