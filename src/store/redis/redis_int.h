/* SPDX-License-Identifier: MIT */
/*
 * What the files of store/redis share: the cluster's state, its two connections to
 * the shared server, and the helpers that send commands on them. Only this
 * directory includes hiredis (0.14, with its libuv adapter).
 *
 *   adapter.c   hiredis's event hooks on libuv
 *   conn.c      the cluster's life: URL to connections, node number, heartbeat,
 *               reconnecting with a backoff, figures
 *   registry.c  session records, and deleting a session's keys
 *   events.c    the event store (append, replay in pages), stream open and end
 *   follow.c    following a stream: replay, then the live events of its channel
 *   bus.c       the bus, and every reply of the subscribing connection
 *
 * Keys and channels, each under the cluster's prefix P ("mcp:" by default):
 *
 *   P node:<n>              node n's heartbeat, kept for three periods (attach
 *                           takes a random n no live node holds)
 *   P s:<session>           the session's record (the transport's text)
 *   P sessions              the deployment's live sessions, each scored with when
 *                           its record expires (wall-clock ms): their bound
 *   P x:<session>           the mark of an ended session, as long as its record
 *                           would have lived: the record cannot be written again
 *   P k:<session>           the set of the session's event keys, so that deleting
 *                           the session finds them without a SCAN
 *   P e:<session>:<group>   the events of the session's streams written by one node
 *                           (a Redis stream: see events.c)
 *   P c:<session>:<stream>  the channel a stream's events and end are published on
 *   P n:<node>              the bus channel of one node
 *   P all                   the bus channel of every node
 *
 * Two connections: one for commands, one in pub/sub mode (a subscribed Redis
 * connection takes no other command). The cluster is up when both are; losing
 * either takes both down, ends every follower with MCP_ECONNECT, and a timer makes
 * them again. A server that answers neither for five heartbeat periods is taken
 * for lost too (conn.c, on_tick).
 */
#ifndef MCP_STORE_REDIS_INT_H
#define MCP_STORE_REDIS_INT_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "store/cluster.h"
#include "util/util.h"

#include "url.h"

/* Node numbers live in 20 bits of the transport's ids (cluster.h). */
#define MCP__RC_NODE_LIMIT (1u << 20)

enum {
    MCP__RC_DETACHED,   /* no loop */
    MCP__RC_UP,         /* connections usable: commands are queued on them */
    MCP__RC_CONNECTING, /* connections made again, not yet answering: refused */
    MCP__RC_DOWN        /* no connection; the retry timer runs */
};

typedef struct mcp__rconn {
    struct mcp__cluster *c;
    redisAsyncContext *ac; /* NULL when there is none; hiredis frees it, never us */
    int ready;             /* its first commands (AUTH, SELECT...) were answered */
} mcp__rconn;

typedef struct mcp__rchan mcp__rchan;

struct mcp__cluster {
    /* What mcp__cluster_new was given, with defaults filled in. */
    mcp__redis_url url;
    char *prefix;
    int connect_timeout_ms, heartbeat_ms, ttl_ms;
    size_t max_events, max_event_bytes;
    size_t max_sessions;
    mcp__cluster_cbs cbs;
    mcp_event_store *store;

    /* While attached. */
    uv_loop_t *loop;
    uv_timer_t *tick; /* heartbeat, and followers' checks of their owners */
    /* Loop times of the heartbeat awaited on the command connection and of the
     * message to itself awaited on the subscribing one (0: none): a server that stays silent past
     * the watchdog is taken for lost (see on_tick). */
    uint64_t hb_sent, sub_ping_sent;
    uint64_t up_since;         /* loop time the connections were last made ready */
    uint64_t connecting_since; /* loop time the last attempt to make them began */
    uv_timer_t *retry;         /* the next connection attempt */
    uv_check_t *check;         /* writes held events at the end of a loop turn (events.c) */
    int state;
    int backoff_ms;
    uint32_t node;
    char *address;  /* this node's HTTP address, its heartbeat's value (NULL: "1") */
    char addr[256]; /* the server's numeric address (or its host), found at attach */
    mcp__rconn cmd, sub;
    int bus_acks;    /* subscriptions of the bus confirmed on this sub connection */
    int congested;   /* the command connection's backlog passed its bound (see conn.c) */
    size_t inflight; /* writes on the command connection not yet answered */
    char *chan_node, *chan_all;
    mcp__cluster_stats stats;

    /* Followers (follow.c): every one, and the channels they listen on. */
    struct mcp__cluster_follow *follows;
    mcp__map chans; /* channel name -> mcp__rchan */
    unsigned gen;   /* marks the followers a dispatch has still to visit */

    /* Streams whose keys were added to their session's set lately (events.c). */
    mcp__map registered;
    /* Empty events held for the next append of their session, oldest first (events.c). */
    struct held *held;
    size_t nheld;
    const char *open_next; /* mcp__cluster_open_next: the next append's open text */
    size_t open_next_len;
    /* Scratch for the hot path (append): a key and a payload. Only held while a
     * command is built, never across a callback into the caller. */
    mcp__buf kbuf, pbuf;
    /* The next append is its stream's last event (mcp__cluster_final_next); the last
     * one was, and was stored with the end (mcp__cluster_final_taken). */
    int final_next, final_done;
    int flush_deferred; /* mcp__cluster_defer_flush */

    struct mcp__task_store *tasks; /* mcp__cluster_task_store (tasks.c), made on first use */
};

/* ---- adapter.c ---- */

/* Drives ac from a uv_poll_t on loop (hiredis closes it when it frees ac).
 * MCP_OK, MCP_ENOMEM, MCP_EIO. */
int mcp__rc_adapter_attach(redisAsyncContext *ac, uv_loop_t *loop);
/* hiredis wrote some of what ac had queued (conn.c: a congestion may be over). */
void mcp__rc_wrote(redisAsyncContext *ac);

/* ---- conn.c ---- */

/* Queues a command on the command connection while up. fn NULL: nothing waits for
 * the answer. MCP_OK; MCP_ECLOSED when down (a write is then counted as dropped
 * when fn is NULL); MCP_ENOMEM. When it fails, fn is never called. Only %s and %b
 * in fmt: hiredis 0.14 knows no %zu, so numbers are formatted by the caller. */
int mcp__rc_cmd(mcp__cluster *c, redisCallbackFn *fn, void *priv, const char *fmt, ...);
/* The same, one command made of argc arguments (binary safe), its reply not awaited. */
int mcp__rc_cmd_argv(mcp__cluster *c, int argc, const char **argv, const size_t *argvlen);
/* The same with fn as its reply callback (priv its data): the answer is waited for. */
int mcp__rc_ask_argv(mcp__cluster *c, redisCallbackFn *fn, void *priv, int argc, const char **argv,
                     const size_t *argvlen);
/* SUBSCRIBE (on) or UNSUBSCRIBE chan on the subscribing connection, whose replies
 * all go to mcp__rc_on_sub_reply. MCP_OK, MCP_ECLOSED, MCP_ENOMEM. */
int mcp__rc_subscribe(mcp__cluster *c, const char *chan, int on);
/* A reply callback got NULL: ac is being freed (lost, or closed by us). Takes the
 * cluster down when ac was one of its current connections. */
void mcp__rc_lost(mcp__cluster *c, const redisAsyncContext *ac);
/* In a reply callback of connection k: 1 when r is a reply of k's current context;
 * 0 for one of a context already dropped, or for NULL (the context is going, which
 * mcp__rc_lost is told). */
int mcp__rc_current(mcp__cluster *c, const mcp__rconn *k, const redisAsyncContext *ac,
                    const redisReply *r);
/* The server answered a connection's first commands with an error (r, logged when
 * it is one) or something else unexpected: down, and try again later. */
void mcp__rc_fail(mcp__cluster *c, const redisReply *r);

/* A command whose answer a caller waits for with a callback of its own. */
typedef struct mcp__rreq {
    mcp__cluster *c;
    union {
        mcp__cluster_get_fn get;
        mcp__cluster_alive_fn alive;
        mcp__cluster_done_fn put;
    } done;
    void *arg;
} mcp__rreq;
/* Queues "<verb> P<kind><name>" with fn as its reply callback and a copy of q as
 * its data. MCP_OK, or why not (fn is then never called). */
int mcp__rc_ask(mcp__cluster *c, redisCallbackFn *fn, const mcp__rreq *q, const char *verb,
                const char *kind, const char *name);
/* Writes what the command connection has queued now, as far as the socket takes it. */
void mcp__rc_flush(mcp__cluster *c);
/* In fn: the request back (its copy freed), the cluster told when reply is NULL. */
mcp__rreq mcp__rc_answer(redisAsyncContext *ac, void *reply, void *priv);
/* The reply callback of a GET asked with mcp__rc_ask (registry.c): done.get gets
 * MCP_OK and the string, MCP_ENOENT for none, MCP_ECLOSED otherwise. */
void mcp__rc_on_get(redisAsyncContext *ac, void *reply, void *priv);
/* The subscribing connection confirmed the bus: up if the other one is ready too. */
void mcp__rc_sub_ready(mcp__cluster *c);

/* Write a key or channel name into b (reset first): P<kind><session>,
 * P<kind><session>:<stream>, P<kind><node>. MCP_OK or MCP_ENOMEM. */
int mcp__rc_key(const mcp__cluster *c, mcp__buf *b, const char *kind, const char *session);
int mcp__rc_key_stream(const mcp__cluster *c, mcp__buf *b, const char *kind, const char *session,
                       uint64_t stream);
int mcp__rc_key_node(const mcp__cluster *c, mcp__buf *b, const char *kind, uint64_t node);

/* ---- registry.c ---- */

/* Deletes the session's event and open keys (those listed in its set) and the set;
 * with ended_ms > 0 also its record, leaving the mark of an ended session for that
 * long. Fire and forget. */
int mcp__rc_delete_session(mcp__cluster *c, const char *session, int ended_ms);

/* ---- events.c ---- */

mcp_event_store *mcp__rc_store_new(mcp__cluster *c);
/* Forgets what was registered: of one session (and the events it holds: the session
 * is being deleted), or (session NULL) of all. */
void mcp__rc_registered_forget(mcp__cluster *c, const char *session);
/* Forgets everything the store keeps between appends (the connection went, or the
 * cluster is freed): held events are dropped, and counted so. */
void mcp__rc_events_reset(mcp__cluster *c);
/* A stream's events key, P e:<session>:<group>, and its channel, P c:<session>:<stream>,
 * into b (reset first). MCP_OK or MCP_ENOMEM. */
int mcp__rc_key_events(const mcp__cluster *c, mcp__buf *b, const char *session, uint64_t stream);
int mcp__rc_key_chan(const mcp__cluster *c, mcp__buf *b, const char *session, uint64_t stream);

/* A stream read in pages, for replay and for follow. */
typedef struct mcp__rpager {
    uint64_t stream;           /* whose entries are visited (the others are passed over) */
    uint64_t after;            /* the stream's first entry from here must be this event */
    int found;                 /* it was */
    int paged;                 /* a page was read */
    int ended;                 /* the stream's end was visited */
    uint64_t read_ms, read_sq; /* the id of the last entry read ("<after>-0" at first) */
    size_t count;              /* COUNT of the next page */
    char cursor[48];           /* where the next page starts: "<after>-0", then "(<last id>" */
} mcp__rpager;

typedef struct mcp__rentry {
    uint64_t seq;
    int end;   /* the end: the marker (data empty), or with the stream's last event */
    int pause; /* live only: the owner paused the stream here (data: the retry) */
    int gap;   /* the owner could not store event seq (mcp__cluster_stream_gap) */
    const char *data;
    size_t len;
    const char *open; /* the stream's open text, when the entry carries it (else NULL) */
    size_t open_len;
} mcp__rentry;

/* Visits an entry; nonzero stops the walk. */
typedef int (*mcp__rentry_fn)(void *ctx, const mcp__rentry *e);

void mcp__rpager_init(mcp__rpager *p, uint64_t stream, uint64_t after);
/* Asks for the next page of key. MCP_OK, MCP_ECLOSED or MCP_ENOMEM (fn not called). */
int mcp__rpager_send(mcp__cluster *c, mcp__rpager *p, const char *key, redisCallbackFn *fn,
                     void *priv);
/* Checks a page (the reply to mcp__rpager_send) and then visits the stream's entries
 * after `after`, in order (the entry resumed after too when it carries the open text or
 * the end: seq `after`, no data), up to its end. MCP_OK (with *more: another page may
 * follow), MCP_ENOENT (the stream's first entry from `after` is not that event or the
 * one that came with it, or there is none; or entries after the last page were trimmed
 * away before this one was read), MCP_EPROTO (not a page of ours: nothing visited). */
int mcp__rpager_walk(mcp__rpager *p, const redisReply *page, mcp__rentry_fn fn, void *ctx,
                     int *more);

/* Writes the event held for Redis stream key (events.c), if any: it is read next. */
void mcp__rc_held_write(mcp__cluster *c, const char *key);

/* Live messages on a stream's channel: "d<seq>:<data>" for an event, "f<seq>:<data>"
 * for the last one with the end, "e<seq>" for the end alone. Parsed into e; -1 when it
 * is not one of ours. */
int mcp__rc_live_parse(const char *msg, size_t len, mcp__rentry *e);

/* ---- follow.c ---- */

/* A message on a channel that is not the bus's. */
void mcp__rc_follow_message(mcp__cluster *c, const char *chan, const char *data, size_t len);
/* The server confirmed a SUBSCRIBE of chan. */
void mcp__rc_follow_subscribed(mcp__cluster *c, const char *chan);
/* Every heartbeat period: ask whether each follower's owner still lives. */
void mcp__rc_follow_tick(mcp__cluster *c);
/* Ends every follower with status (connection lost, or detach) and forgets the
 * channels (their subscriptions went with the connection). */
void mcp__rc_follow_end_all(mcp__cluster *c, int status);

/* ---- bus.c ---- */

void mcp__rc_on_sub_reply(redisAsyncContext *ac, void *reply, void *priv);

#endif
