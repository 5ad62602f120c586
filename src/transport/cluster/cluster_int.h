/* SPDX-License-Identifier: MIT */
/*
 * The Redis cluster as a plug-in of the Streamable HTTP server (--redis): sessions
 * shared with other nodes of one deployment, behind a load balancer that sends each
 * request anywhere. cluster.c fills the hook table of shttp.h (mcp__shttp_share_ops)
 * and keeps its state behind the endpoint's, sessions' and streams' sh pointers;
 * relay.c sends a request to the node that holds its session. Only these two files
 * and the endpoint that starts the plug-in include this header.
 */
#ifndef MCP_TRANSPORT_CLUSTER_CLUSTER_INT_H
#define MCP_TRANSPORT_CLUSTER_CLUSTER_INT_H

#include "store/cluster.h"
#include "transport/shttp.h"

/* A message held until the session's shared record is written. */
typedef struct hheld {
    struct hheld *next;
    uint64_t stream;
    unsigned flags;
    size_t len;
    int has_text;
    char text[];
} hheld;

/* The endpoint's share: what a node of a cluster knows (t->sh). */
struct shttp_share {
    mcp__cluster *cluster;
    uint32_t node;           /* this node's number, in the high bits of its stream ids */
    uint64_t stream_counter; /* stream ids of this node, unique across its sessions */
    /* The highest seq a session forgotten here had numbered: a session found again later
     * numbers its events from there, above every event this node stored of it. */
    uint64_t seq_floor;
    int cluster_attached;
    int lookups;              /* requests waiting for a session's record */
    struct hdelete *deletes;  /* DELETEs waiting for the other nodes to have heard */
    size_t cluster_max_event; /* larger events are not kept in the cluster */
    size_t cluster_max_sessions;
    char cluster_addr[300]; /* where other nodes reach this one, "" when not known */
    mcp__map pins;          /* id -> where another node's pinned session is */
    /* Requests relayed to the node that holds their session (relay.c). */
    struct mcp__curlm *relay_curl; /* made with the first one */
    struct relay *relays;
    size_t nrelays, nrelay_gets; /* relays, and of them GET streams */
    uint64_t relay_serial;       /* names relays for answers that come later */
    uv_timer_t *relay_timer;     /* checks on idle relays' nodes */
};

/* A session's share (hs->sh). */
struct hsess_share {
    int gaps_shared;    /* of the session's gaps, those marked in the cluster */
    int shared;         /* its record lives in the cluster */
    int httpsse_shared; /* an HTTP+SSE session whose record names this node */
    int pinned;         /* served here only (its answerer cannot share it): its record
                           names this node, and other nodes relay its requests here */
    int local_close;    /* closing only here: the session lives on elsewhere */
    int puts;           /* record writes not yet acknowledged */
    int unwritten;      /* a change to its record could not be written (down) */
    int recorded;       /* its record was written once: other nodes can find it */
    /* Its finished streams this node stored in the cluster, oldest first, and what
     * they hold in all: the session's bound (kept_trim). */
    struct hkept *kept, **kept_tail;
    size_t kept_n, kept_events;
    uint64_t kept_bytes;
    uint64_t detached_first;  /* the first event stored of a stream with no hstream here */
    uint64_t trimmed_to;      /* the session's events below this seq were trimmed away */
    hheld *held, **held_tail; /* messages waiting for them */
    uint64_t touched_ms;      /* when its record's time to live was last extended */
    uint32_t standalone_node; /* where its standalone stream is (0: here, or none) */
    uint64_t standalone_stream;
    uint64_t standalone_ver; /* bumped by each GET that takes it: see record_apply */
};

/* A stream's share (st->sh). */
struct hstream_share {
    json_t *request_ids;         /* a POST stream's request ids, for its followers */
    char *open_text;             /* and as text, stored with each of its events */
    int described;               /* it was described (open_text made) */
    mcp__cluster_follow *follow; /* HS_REMOTE: the follow under way */
    /* HS_REMOTE: the last event written to the client, and what went since the owner
     * was last told the client had everything (confirmations). */
    uint64_t followed_seq;
    size_t followed_events, followed_bytes;
    int confirming;   /* waiting for the client to catch up, to tell the owner */
    json_t *answered; /* HS_REMOTE: the request ids whose answers were relayed */
    /* What the shared store holds of it (see stream_end). */
    size_t kept_events;
    uint64_t kept_bytes;
    uint64_t first_seq; /* of its first event stored (0: none yet) */
    int end_stored;     /* its last event was stored with the end (no end marker then) */
};

/* ---- cluster/relay.c: requests of sessions held by another node ---- */

/* Sends req to node `node`, which listens at addr (addr_len bytes, "host:port"), and
 * sends its response back as it comes; finishes req (503 when that node cannot be
 * reached, 405 for a method other than GET, POST and DELETE). */
void mcp__shttp_relay(shttp *t, mcp__http_req *req, uint32_t node, const char *addr,
                      size_t addr_len);
/* Answers req, a request whose node is gone: 404 (its session went with it), or -32602
 * for a 2026-07-28 retry (the request it continues went with it). */
void mcp__shttp_relay_gone(shttp *t, mcp__http_req *req);
/* The endpoint closes: relays under way are cut, and the relay's handles close (the
 * endpoint's handle count says when). */
void mcp__shttp_relay_stop(shttp *t);

/* ---- cluster/cluster.c: sessions shared with other nodes (--redis) ---- */

/* The node bits of stream ids and of the ids of requests to clients. */
#define MCP__NODE_SHIFT 40
#define MCP__ID_NODE_SHIFT 32

/* Detaches and frees the cluster (the endpoint has stopped). */
void mcp__shttp_cluster_stop(shttp *t);
/* Sends req, a request of revision 2026-07-28 that only node `node` can serve, there
 * (mcp__shttp_relay), to addr when known ("" or NULL: the node's heartbeat names it);
 * answers an error when that node is gone. */
void mcp__shttp_cluster_relay(shttp *t, mcp__http_req *req, uint32_t node, const char *addr);
/* Forgets where session id is held (the node answered 404, or could not be reached). */
void mcp__shttp_cluster_unpin(shttp *t, const char *id);
/* Forgets every session held elsewhere. */
void mcp__shttp_cluster_pins_free(shttp *t);
/* Called first for every request on the MCP path: 1 when the cluster took it (a
 * session other nodes made is looked up, then the request is served; or 503 while the
 * shared store is down), 0 to serve it as usual. */
int mcp__shttp_cluster_route(shttp *t, mcp__http_req *req);
/* 503 with a JSON-RPC error: the shared store cannot be reached. */
void mcp__shttp_cluster_unavailable(shttp *t, mcp__http_req *req);
/* A session was made here: its ids get this node's bits and its record is kept in the
 * cluster once initialized. */
void mcp__shttp_cluster_session_new(hsess *hs);
/* The session's state changed (io.changed): its record is written and other nodes told. */
void mcp__shttp_cluster_changed(hsess *hs);
/* True when a message must wait for the session's record (it is copied and sent later). */
int mcp__shttp_cluster_hold(hsess *hs, uint64_t stream, const char *text, size_t len,
                            unsigned flags);
/* A request for the session came: its record's time to live is extended now and then. */
void mcp__shttp_cluster_touch(hsess *hs);
/* The session is ending for good (DELETE, or its answerer ended it): every node forgets it. */
void mcp__shttp_cluster_session_end(hsess *hs);
/* A followed stream (HS_REMOTE) that went quiet: the owner hears what its client has
 * read of the last few events too. */
void mcp__shttp_cluster_confirm_rest(hstream *st);
/* DELETE of a shared session: ends it here and everywhere, and answers req once every
 * other node has heard (or after a second): the client's next request, wherever it
 * lands, finds the session gone. 503 while the shared store is out of reach. */
void mcp__shttp_cluster_delete(shttp *t, hsess *hs, mcp__http_req *req);
/* The session's memory goes (held messages). */
void mcp__shttp_cluster_session_free(hsess *hs);
/* A POST body's responses to another node's requests, and its cancellations, are sent
 * to the node that awaits them (they are still fed here too). */
void mcp__shttp_cluster_forward(hsess *hs, const json_t *v);
/* A message not tied to a request while no standalone stream is open here: 1 when it
 * went to the node that has the session's standalone stream. */
int mcp__shttp_cluster_standalone(hsess *hs, const char *text, size_t len);
/* A standalone stream opened here: other nodes send the session's messages here. */
void mcp__shttp_cluster_standalone_here(hsess *hs, uint64_t stream);
/* A stream got its first stored event: its description goes to the shared store. */
void mcp__shttp_cluster_stream_describe(hstream *st);
/* SEP-1699 on a stream whose client is away from this node: a marker to resume after,
 * and the nodes that follow it for the client close their streams there. */
void mcp__shttp_cluster_stream_pause(hstream *st, int retry_ms);
/* A described stream sent its last event. */
void mcp__shttp_cluster_stream_end(hstream *st);
/* The stream id of another node: resumed by following it (1), or 0 for this node's. */
int mcp__shttp_cluster_resume(shttp *t, hsess *hs, mcp__http_req *req, uint64_t stream,
                              uint64_t seq);
/* An HTTP+SSE session opened here: its record names this node, and its endpoint event
 * goes out once written (1), or 0 to send it now (not shared). */
int mcp__shttp_cluster_httpsse_new(hsess *hs);
/* An HTTP+SSE POST for a session this node does not have: sent to the node that has it
 * (202), or 404. The body is checked here first. */
void mcp__shttp_cluster_httpsse_post(shttp *t, mcp__http_req *req, const char *id);
/* The owner of a stream id (0 without a cluster). */
uint32_t mcp__stream_node(uint64_t stream);

#endif
