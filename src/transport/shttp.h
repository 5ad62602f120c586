/* SPDX-License-Identifier: MIT */
/*
 * Internals of the HTTP transports, by file:
 *   shttp_endpoint.c  the endpoint's life: options, start on the caller's loop,
 *                     stop and drain, mcp_serve_http;
 *   shttp_router.c    Host and Origin checks, CORS, error answers, and which of
 *                     the below (or an extra route) gets each request;
 *   shttp_server.c    the session table and the streams: where a session's
 *                     messages go, backpressure, keep-alive and idle timers;
 *   shttp_resume.c    resuming a stream (GET with Last-Event-ID) from the store;
 *   shttp_outbox.c    messages that wait for a session's first GET stream;
 *   shttp_mcp.c       Streamable HTTP: POST, GET and DELETE on the MCP path;
 *   httpsse.c    the HTTP+SSE transport: GET /sse, POST /messages.
 *
 * A session (hsess) is one MCP session reached over HTTP; it owns the
 * answerer's session (mcp__asession, see answerer.h) and its streams. A stream
 * (hstream) is where a session's messages go: one per POST that carries
 * requests, one per GET (standalone), or the one SSE stream of an HTTP+SSE
 * session. A stream's HTTP request (req) may go away before the stream ends: a
 * client that drops a POST stream does not cancel its requests (disconnection
 * is not cancellation); their answers are kept by the event store for a resume.
 *
 * Everything runs on the thread of the loop the endpoint was made on.
 */
#ifndef MCP_TRANSPORT_SHTTP_H
#define MCP_TRANSPORT_SHTTP_H

#include <mcp/server.h>

#include "http/http.h"
#include "store/cluster.h"
#include "server/answerer.h"

typedef struct mcp_http_endpoint shttp;

/* The kernel send buffer of a stream that only carries notifications (a standalone
 * GET, a subscriptions/listen, a HTTP+SSE stream), whose client may never read:
 * SO_SNDBUF, which Linux doubles. Without it each such socket may hold up to
 * net.ipv4.tcp_wmem's maximum (4 MiB by default) that the server's budget
 * (max_queued_total) never sees. */
#define MCP__NOTIFY_SNDBUF (16 * 1024)

#define MCP__MAX_GAPS 4
#define MCP__GAVE_WAY 16
typedef struct hsess hsess;
typedef struct hstream hstream;
typedef struct hresume hresume;

/* The operations of the answerer behind a session. */
#define HS_ANS(hs) ((hs)->t->ans->ops)

/*
 * HS_GET streams carry the session's messages not tied to a request (the newest
 * live one does). HS_IDLE is a resume of a POST stream that had already sent
 * everything: it stays open, kept alive, carrying nothing, so that clients whose
 * EventSource reconnects after every end are not pushed into a reconnect loop.
 */
/* HS_REMOTE is a resume of a stream another node writes (--redis): its events come
 * from the shared store, replayed and then followed live (shttp_cluster.c). */
enum hstream_kind { HS_POST_SSE, HS_POST_JSON, HS_GET, HS_IDLE, HS_HTTPSSE, HS_REMOTE };

struct hstream {
    hsess *hs;
    uint64_t id; /* the number the protocol session knows it by */
    enum hstream_kind kind;
    mcp__http_req *req; /* NULL once the HTTP side is finished or gone */
    int begun;          /* the SSE status line and headers are out */
    int cluster_wait;   /* its handler waits for the cluster's backlog to drain */
    int pending;        /* answers still owed on a POST stream */
    int primed;         /* a priming event (an id to resume from) went out */
    int unstored;       /* an initialize stream: nothing to resume, nothing stored */
    int long_lived;     /* a subscriptions/listen response: counts as a held stream */
    hresume *resuming;  /* a replay into this stream is under way */
    int finished;       /* its last answer went out while a replay was under way */
    size_t slack;       /* a resume's replayed backlog, allowed on top of max_queued */
    uint64_t slack_at;  /* the loop time it was granted at */
    uint64_t last_write_ms;
    /* Events stored for this stream since the client last proved it had them (its
     * TCP acknowledged every byte, or it resumed): what a resume may need. A
     * handler pauses before they are more than the store is sure to keep. */
    size_t unconfirmed, unconfirmed_bytes;
    uint64_t unconfirmed_seq; /* the first of them */
    uint64_t unconfirmed_at;  /* the session's stored bytes before it */
    uint64_t away_since;      /* the sweep that first found its client away, or 0 */
    uint64_t stall_mark;      /* bytes the client had taken at the last sweep */
    uint64_t stall_since;     /* since when it has taken nothing while bytes waited */
    /* Shared with other nodes (shttp_cluster.c): */
    json_t *request_ids;         /* a POST stream's request ids, for its followers */
    int described;               /* its description went to the shared store */
    mcp__cluster_follow *follow; /* HS_REMOTE: the follow under way */
    /* HS_REMOTE: the last event written to the client, and what went since the owner
     * was last told the client had everything (mcp__shttp_cluster's confirmations). */
    uint64_t followed_seq;
    size_t followed_events, followed_bytes;
    int confirming; /* waiting for the client to catch up, to tell the owner */
    /* What the shared store holds of it (see mcp__shttp_cluster_stream_end). */
    size_t kept_events;
    uint64_t kept_bytes;
    hstream *prev, *next;
};

/* A message held until the session's shared record is written (shttp_cluster.c). */
typedef struct hheld {
    struct hheld *next;
    uint64_t stream;
    unsigned flags;
    size_t len;
    int has_text;
    char text[];
} hheld;

/*
 * A message not tied to a request that had nowhere to go (no GET stream open, none to
 * resume): it waits for the session's next GET (shttp_outbox.c). Clients open their
 * standalone GET only after notifications/initialized is accepted, and many servers ask
 * for roots as soon as they get that notification.
 */
typedef struct houtbox {
    struct houtbox *next;
    json_t *id;        /* a request's id; NULL for a notification */
    char method[64];   /* for the logs */
    uint64_t deadline; /* loop time it stops waiting at */
    int why;           /* OUTBOX_* of shttp_outbox.c: why it cannot be delivered, 0 waiting */
    size_t len;
    char text[];
} houtbox;

/* What waits for a session's first GET stream: at most this long, this many messages and
 * this many bytes (the text of the waiting messages). Past them a request is answered at
 * once with a JSON-RPC error (-32603, saying why), as if its client had, and a
 * notification is dropped with a warning. */
#define MCP__OUTBOX_WAIT_MS 10000
#define MCP__OUTBOX_MAX_MESSAGES 64
#define MCP__OUTBOX_MAX_BYTES (256 * 1024)
/* And all the sessions of an endpoint together, whatever their number. */
#define MCP__OUTBOX_MAX_TOTAL_BYTES (16 * 1024 * 1024)

struct hsess {
    shttp *t;
    char id[33]; /* hex of 16 random bytes; "" for a stateless POST */
    mcp__asession *sess;
    int httpsse; /* a session of the HTTP+SSE transport (2024-11-05) */
    int stateless;
    int closing;
    hstream *streams;
    uint64_t next_stream;
    /* Resumability: events are numbered by next_seq and named "<tag>-<stream>-<seq>";
     * the tag is a per-session secret, so ids cannot be guessed across sessions. */
    char tag[17];
    uint64_t next_seq;
    uint64_t stored_bytes;          /* of all its events so far */
    int window_moved;               /* a stream confirmed events (see mcp__hstream_maybe_ready) */
    uint64_t last_standalone;       /* where standalone messages are stored while no GET is open */
    houtbox *outbox, **outbox_tail; /* waiting for a GET stream, oldest first */
    size_t outbox_n, outbox_bytes;
    houtbox *undelivered, **undelivered_tail; /* to answer or drop from the loop, in order */
    hresume *resumes;                         /* replays under way */
    /* Idle resumes that gave way to a new GET (mcp__shttp_idle_give_way), newest last. */
    uint64_t gave_way[MCP__GAVE_WAY];
    unsigned ngave_way;
    uint64_t last_active_ms;
    uint64_t last_use; /* shttp.uses when it was last used: orders sessions for eviction */
    int used;          /* a request came after initialize */
    /* Events the store failed to keep (out of memory): a resume across one would
     * silently miss it, so it is refused instead. */
    struct {
        uint64_t stream, seq;
    } gaps[MCP__MAX_GAPS];
    int ngaps, gaps_overflowed;
    int gaps_shared; /* of gaps, those marked in the cluster (shttp_cluster.c) */
    char source[48]; /* the address that opened it, \"\" when unknown */
    /* Shared with other nodes (shttp_cluster.c): */
    int shared;         /* its record lives in the cluster */
    int httpsse_shared; /* an HTTP+SSE session whose record names this node */
    int pinned;         /* served here only (its answerer cannot share it): its record
                           names this node, and other nodes relay its requests here */
    int local_close;    /* closing only here: the session lives on elsewhere */
    int puts;           /* record writes not yet acknowledged */
    int unwritten;      /* a change to its record could not be written (down) */
    int recorded;       /* its record was written once: other nodes can find it */
    /* Its finished streams this node stored in the cluster, oldest first, and what
     * they hold in all: the session's bound (shttp_cluster.c, kept_trim). */
    struct hkept *kept, **kept_tail;
    size_t kept_n, kept_events;
    uint64_t kept_bytes;
    hheld *held, **held_tail; /* messages waiting for them */
    uint64_t touched_ms;      /* when its record's time to live was last extended */
    uint32_t standalone_node; /* where its standalone stream is (0: here, or none) */
    uint64_t standalone_stream;
    uint64_t standalone_ver; /* bumped by each GET that takes it: see record_apply */
    hsess *prev, *next;      /* every session, for the timers */
    hsess *deferred_next;    /* in the list of sessions to close once the stack unwinds */
};

/* An extra route of the listener (mcp_http_route). */
typedef struct shttp_route {
    char *method; /* NULL: any */
    char *path;
    mcp_http_route_fn fn;
    void *user;
} shttp_route;

/* Where a stop stands (see shttp_endpoint.c). */
enum shttp_phase {
    EP_RUNNING,
    EP_DRAINING, /* no new request; those in flight may finish until the deadline */
    EP_CLOSING,  /* sessions closed; waiting for connections, handlers and handles */
    EP_DONE      /* done ran */
};

/* The public mcp_http_endpoint is this struct. */
struct mcp_http_endpoint {
    mcp__answerer *ans; /* what answers the sessions' messages */
    uv_loop_t *loop;    /* the caller's */
    mcp__http_server *http;
    mcp__map sessions; /* id -> hsess, stateful and HTTP+SSE sessions */
    hsess *all;
    hsess *deferred;
    uint64_t uses;            /* counts session uses (see hsess.last_use) */
    mcp__map session_sources; /* address -> how many sessions it opened (a uintptr_t) */
    uv_idle_t deferred_idle;

    char *path;
    char *url;
    int json_response, stateless, disable_get, httpsse;
    int keepalive_ms;
    int max_sessions;
    int idle_ms;
    size_t max_queued;
    size_t pause_bytes; /* a handler's stream with more unsent than this pauses it */
    size_t max_unconfirmed, max_unconfirmed_bytes;
    uint64_t window_events, window_bytes;
    uint64_t away_limit_ms; /* see cut_stalled_streams and sweep_away */
    int max_get_streams;
    size_t cluster_max_sessions;
    mcp_event_store *store; /* NULL: not resumable */
    mcp_event_store *own_store;
    int store_attached;
    int retry_ms;
    char **allowed_origins, **allowed_hosts, **cors_origins;
    int bound_loopback;
    shttp_route *routes;
    size_t nroutes;

    uv_timer_t keepalive_timer, sweep_timer;
    uv_timer_t outbox_timer; /* ends waits for a first GET (shttp_outbox.c) */
    uint64_t outbox_at;      /* the loop time it is set for, while active */
    size_t outbox_bytes;     /* what waits in every session's outbox */
    /* Stopping: the drain deadline, then the end of the connections' flush. */
    uv_timer_t drain_timer;
    enum shttp_phase phase;
    uint64_t deadline; /* loop time the drain ends at; UINT64_MAX: none */
    int handles;       /* our own handles not yet closed */
    int http_open, ans_open;
    int free_when_done;
    int in_done; /* done is running */
    mcp_endpoint_done_fn done;
    void *done_user;
    mcp_http_stats stats;
    /* Sessions shared with other nodes (--redis; shttp_cluster.c). */
    mcp__cluster *cluster;
    uint32_t node;           /* this node's number, in the high bits of its stream ids */
    uint64_t stream_counter; /* stream ids of this node, unique across its sessions */
    int cluster_attached;
    int lookups;              /* requests waiting for a session's record */
    struct hdelete *deletes;  /* DELETEs waiting for the other nodes to have heard */
    size_t cluster_max_event; /* larger events are not kept in the cluster */
    char cluster_addr[300];   /* where other nodes reach this one, "" when not known */
    mcp__map pins;            /* id -> where another node's pinned session is (shttp_cluster.c) */
    /* Requests relayed to the node that holds their session (shttp_relay.c). */
    struct mcp__curlm *relay_curl; /* made with the first one */
    struct relay *relays;
    size_t nrelays, nrelay_gets; /* relays, and of them GET streams */
    uint64_t relay_serial;       /* names relays for answers that come later */
    uv_timer_t *relay_timer;     /* checks on idle relays' nodes */
};

/* ---- shttp_router.c ---- */

/* The listener's on_request: Host and Origin, CORS preflight, then MCP, HTTP+SSE
 * and extra routes. */
void mcp__shttp_on_request(void *user, mcp__http_req *req);
/* Frees the extra routes. */
void mcp__shttp_routes_free(shttp *t);
/* Answers with a JSON-RPC error message (stolen) as the body and the status; finishes req. */
void mcp__shttp_error_body(shttp *t, mcp__http_req *req, int status, json_t *body);
/* The JSON-RPC code of the 404 for a session this server does not have (never had, ended,
 * expired): Invalid Request, since the request is not valid here, and the 404 is what
 * tells the client to start a new session (the spec's rule). Not a timeout. */
#define MCP__SESSION_NOT_FOUND MCP_RPC_INVALID_REQUEST
/* Answers with a JSON-RPC error body and the status; finishes req. The body carries the
 * id of the request req's body holds when it can be read (mcp__shttp_body_id), else null. */
void mcp__shttp_error(shttp *t, mcp__http_req *req, int status, int code, const char *message);
/* The CORS headers for req (if configured), appended to a header list. */
size_t mcp__shttp_cors(shttp *t, mcp__http_req *req, const char **hdrs, size_t n);

/* ---- shttp_endpoint.c ---- */

/* One of the endpoint's handles (counted in t->handles) has closed. */
void mcp__shttp_handle_closed(shttp *t);
/* A session has no more requests in flight: a drain may be over. */
void mcp__shttp_drain_check(shttp *t);
/* An endpoint whose sessions `ans` answers (the server's, or another answerer's);
 * takes ans over, even on failure. As mcp_http_endpoint_new otherwise. */
int mcp__http_endpoint_new(uv_loop_t *loop, mcp__answerer *ans, const mcp_http_opts *opts,
                           mcp_http_endpoint **out);

/* ---- shttp_server.c: sessions and streams ---- */

/* The keep-alive and sweep timers' callbacks. */
void mcp__shttp_keepalive(uv_timer_t *h);
void mcp__shttp_sweep(uv_timer_t *h);
/* Creates a session (stateful ones get an id and a place in the table). NULL when
 * out of memory. */
hsess *mcp__hsess_new(shttp *t, int stateless, int httpsse);
/* A session another node made, with its id and event tag (--redis). NULL when out of
 * memory. */
hsess *mcp__hsess_restore(shttp *t, const char *id, const char *tag);
/* Ends the session: its streams end, its handlers are cancelled, its id is forgotten. */
void mcp__hsess_close(hsess *hs);
/* The session limit is reached: the least recently used idle session (no open
 * stream, no request in flight, no resume) is closed to make room. 1 when one was,
 * 0 when every session is busy. */
int mcp__shttp_evict_idle_session(shttp *t);
/* True when long-lived streams (GET, resumed, HTTP+SSE) hold half the connection
 * limit: a new one must wait, so that they never lock out short requests. */
int mcp__shttp_get_streams_full(shttp *t);
/* The store failed to keep event seq of stream (see hsess.gaps). */
void mcp__hsess_note_gap(hsess *hs, uint64_t stream, uint64_t seq);
/* True when an event of stream after seq was not kept. */
int mcp__hsess_gap_after(const hsess *hs, uint64_t stream, uint64_t seq);
/* The session was used now: for its idle expiry, and its place in eviction order. */
void mcp__hsess_touch(hsess *hs);
/* Records the address that opened hs (for eviction: see mcp__shttp_evict_idle_session). */
void mcp__hsess_set_source(hsess *hs, mcp__http_req *req);
/* Closes hs once the current callback stack has unwound. */
void mcp__hsess_close_later(hsess *hs);
hstream *mcp__hstream_new(hsess *hs, enum hstream_kind kind, mcp__http_req *req);
/* The id of a new stream of hs of that kind. */
uint64_t mcp__hstream_new_id(hsess *hs, enum hstream_kind kind);
/* Sends a message of hs's session on a stream, as its session io does, but never held
 * for the session's record (see mcp__shttp_cluster_hold). */
int mcp__hsess_send(hsess *hs, uint64_t stream, const char *text, size_t len, unsigned flags);
/* A stream with a given id (a resumed one). */
hstream *mcp__hstream_attach(hsess *hs, uint64_t id, enum hstream_kind kind, mcp__http_req *req);
/* True when the session's streams may start with priming events and be closed for
 * polling: a store, and a client of 2025-11-25 or later (older ones fail on them). */
int mcp__hsess_primes(const hsess *hs);
/* The wire id of event seq of a stream: "<tag>-<stream>-<seq>". */
void mcp__event_id(const hsess *hs, uint64_t stream, uint64_t seq, char out[64]);
/* Writes a priming event (an id to resume from, and retry) on st. */
int mcp__hstream_prime(hstream *st, int retry_ms);
void mcp__hstream_free(hstream *st);
/* Begins st's SSE response if needed, then writes the bytes; handles slow readers. */
int mcp__hstream_write(hstream *st, const char *data, size_t len);
/* Writes one "event: message" with the JSON text. */
int mcp__hstream_event(hstream *st, const char *text, size_t len);
/* Finishes the HTTP side of st cleanly (ends the SSE response). */
void mcp__hstream_end(hstream *st);
/* st's connection or its client changed (gone, resumed): handlers paused on it go
 * on if it can take messages now. */
void mcp__hstream_maybe_ready(hstream *st);
/* The client of stream `stream`, away from this node, has every event up to seq
 * (it reads the stream through another node, which says so): as a confirmation. */
void mcp__hstream_confirmed_elsewhere(hsess *hs, uint64_t stream, uint64_t seq);

/* ---- shttp_resume.c ---- */

/* The next resume of a session's list. */
hresume *mcp__shttp_resume_next(const hresume *r);
/* Replays under way into the session's GET streams (they count as open GETs). */
int mcp__shttp_resumes_running(const hsess *hs);
/*
 * At the session's GET limit, ends its oldest idle resume (HS_IDLE) to make room for
 * the GET that asks with last_event_id (NULL for a new stream). Returns 1 when one
 * gave way, 0 when none may.
 */
int mcp__shttp_idle_give_way(hsess *hs, const char *last_event_id);
/* Parses "<tag>-<stream>-<seq>"; the tag must be hs's. 0, or -1. */
int mcp__parse_event_id(const hsess *hs, const char *id, uint64_t *stream, uint64_t *seq);
/* Resumes the stream Last-Event-ID names on req (GET). */
void mcp__shttp_resume(shttp *t, hsess *hs, mcp__http_req *req, const char *last_event_id);
/* The session is closing: replays under way are abandoned. */
void mcp__shttp_resumes_cancel(hsess *hs);

/* ---- shttp_outbox.c: messages waiting for a GET stream ---- */

/* A message not tied to a request had nowhere to go: it waits for the session's next GET
 * stream, within the bounds above, or is answered with an error (requests) or dropped
 * (notifications) from the loop, never inside this call. MCP_OK. */
int mcp__outbox_put(hsess *hs, const char *text, size_t len);
/* g, a new GET stream of hs, carries what waits (stored, under event ids of g). */
void mcp__outbox_deliver(hsess *hs, hstream *g);
/* The session ends: what waits is answered (requests) or dropped now. */
void mcp__outbox_end(hsess *hs);
/* The outbox timer's callback (t->outbox_timer). */
void mcp__outbox_due(uv_timer_t *h);

/* ---- shttp_mcp.c ---- */

/* on_close of a stream's request. */
void mcp__shttp_stream_closed(void *arg, mcp__http_req *req);
void mcp__shttp_mcp_request(shttp *t, mcp__http_req *req);
/* The same, past the cluster's look-up (the session is known here, or unknown). */
void mcp__shttp_mcp_request_local(shttp *t, mcp__http_req *req);
/* The id of the one request a POST body holds (a string or an integer), when it can be
 * read: a new reference, or NULL (no body, not JSON, a batch, a notification, a
 * response, an id of another type). */
json_t *mcp__shttp_body_id(mcp__http_req *req);
/* mcp__shttp_error with the id already known (borrowed; NULL: null). */
void mcp__shttp_error_id(shttp *t, mcp__http_req *req, int status, const json_t *id, int code,
                         const char *message);
/* A JSON-mode POST stream whose request sends a message of its own before its answer
 * becomes an SSE stream (primed when the session primes): see shttp_mcp.c. */
void mcp__hstream_json_to_sse(hstream *st);
/* Validates a POST body: parses it and checks every message. On failure answers
 * req (400) and returns NULL. *n_requests and *has_init describe it. */
json_t *mcp__shttp_parse_body(shttp *t, mcp__http_req *req, size_t *n_requests, int *has_init);

/* ---- shttp_relay.c: requests of sessions held by another node ---- */

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

/* ---- shttp_cluster.c: sessions shared with other nodes (--redis) ---- */

/* The node bits of stream ids and of the ids of requests to clients. */
#define MCP__NODE_SHIFT 40
#define MCP__ID_NODE_SHIFT 32

/* Connects to the cluster at url (keys under prefix, NULL: the default; events within
 * the memory store's bounds); its event store becomes the endpoint's. MCP_EINVAL,
 * MCP_ENOMEM, MCP_ECONNECT. */
int mcp__shttp_cluster_start(shttp *t, const char *url, const char *prefix,
                             const mcp_memory_store_opts *bounds);
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
/* The answer to a DELETE that ended its session: 200 (shttp_mcp.c). */
void mcp__shttp_deleted(shttp *t, mcp__http_req *req);
/* The answer to an HTTP+SSE POST whose messages were taken: 202 (httpsse.c). */
void mcp__httpsse_accepted(shttp *t, mcp__http_req *req);
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

/* ---- httpsse.c ---- */

void mcp__httpsse_get(shttp *t, mcp__http_req *req);
/* Sends the HTTP+SSE session's endpoint event (closes it when that fails). */
void mcp__httpsse_endpoint(hsess *hs);
void mcp__httpsse_post(shttp *t, mcp__http_req *req);

#endif
