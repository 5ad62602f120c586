/* SPDX-License-Identifier: MIT */
/*
 * Internals of the Streamable HTTP server wing (and the HTTP+SSE transport), as a
 * stack, from the bottom:
 *   reply.c       what every verb answers with: JSON-RPC errors with their status,
 *                 a 405's Allow, CORS headers, a body's request id;
 *   sessions.c    the session table and its streams: where a session's messages
 *                 go, event ids (made and read), backpressure, keep-alive and idle
 *                 timers, eviction;
 *   outbox.c      messages that wait for a session's first GET stream;
 *   resume.c      resuming a stream (GET with Last-Event-ID: SEP-1699 polling)
 *                 from the store;
 *   streamable.c  Streamable HTTP: POST, GET and DELETE on the MCP path;
 *   httpsse.c     the HTTP+SSE transport (2024-11-05): GET /sse, POST /messages;
 *   router.c      Host and Origin checks, CORS preflights, and which verb (or an
 *                 extra route) gets each request.
 * On top, src/endpoint/http.c: the endpoint's life (options, start on the caller's
 * loop, stop and drain). Beside, in a room of its own, the Redis cluster
 * (transport/cluster/), a plug-in that fills mcp__shttp_share_ops below: these files
 * reach it only through that table.
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

#include "auth/auth.h"
#include "http/http.h"
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

/* Why a session leaves this node while it may live on elsewhere (share->leaving). */
enum mcp__leave { MCP__LEAVE_STOPPING, MCP__LEAVE_EVICTED, MCP__LEAVE_EXPIRED };
/* What the plug-in says of a resume (share->resume). */
enum mcp__resume_verdict {
    MCP__RESUME_LOCAL, /* not its business: the single-node rules apply */
    MCP__RESUME_TAKEN, /* it serves the request (another node's stream) */
    MCP__RESUME_OK,    /* a stream of this node's it knows: resume it here */
    MCP__RESUME_BAD    /* no event of this session */
};

/*
 * What a session, a stream or a request tells the other nodes of a deployment: the
 * hooks of a plug-in (the Redis cluster of transport/cluster/ fills them), NULL on a
 * single node (t->share). The single-node files reach the plug-in only through this
 * table and never read its state (t->sh, hs->sh, st->sh, which it owns). Every hook
 * runs on the loop's thread; a hook of a session or stream is called for every one of
 * the endpoint's (the plug-in tells its own from the others).
 */
typedef struct mcp__shttp_share_ops {
    /* ---- Requests ---- */
    /* The filter before the verbs, for every request on the MCP path: 1 when it took
     * req (a session other nodes made is looked up first; 503 while the shared store is
     * down), 0 to serve it as usual. */
    int (*filter)(shttp *t, mcp__http_req *req);
    /* 1, with req answered (503), when the shared store is out of reach. */
    int (*down)(shttp *t, mcp__http_req *req);
    /* A 2026-07-28 request (v, its message) that only another node can serve (the
     * retry of a request that waits there): 1 when it was sent there. */
    int (*relay)(shttp *t, mcp__http_req *req, const json_t *v);
    /* An HTTP+SSE POST for a session this node does not have (id: 32 characters): 1
     * when it took req (sent to its node, or 404). */
    int (*httpsse_post)(shttp *t, mcp__http_req *req, const char *id);
    /* ---- Sessions ---- */
    /* A session was made here (every session, stateless and HTTP+SSE ones included):
     * its state is set up. MCP_OK or MCP_ENOMEM (the session is not made). */
    int (*session_init)(hsess *hs);
    /* A stateful Streamable HTTP session begins here. */
    void (*session_new)(hsess *hs);
    /* An HTTP+SSE session opened here: 1 when its endpoint event goes out later. */
    int (*httpsse_new)(hsess *hs);
    /* A request for the session came, or it is kept alive by an open stream. */
    void (*touch)(hsess *hs);
    /* Its state changed (the answerer's io.changed). */
    void (*changed)(hsess *hs);
    /* Where the session's messages not tied to a request go (the answerer's io.here,
     * MCP__HERE_*). */
    int (*here)(hsess *hs);
    /* 1 when the message must wait for the session's shared state (copied). */
    int (*hold)(hsess *hs, uint64_t stream, const char *text, size_t len, unsigned flags);
    /* A message not tied to a request while no standalone stream is open here: 1 when
     * it went to the node that has the session's standalone stream. */
    int (*standalone)(hsess *hs, const char *text, size_t len);
    /* A standalone stream opened here. */
    void (*standalone_here)(hsess *hs, uint64_t stream);
    /* A POST body (v) of the session: answers and cancellations other nodes await. */
    void (*posted)(hsess *hs, const json_t *v);
    /* DELETE of the session: 1 when it took req (ended on every node first). */
    int (*delete)(shttp *t, hsess *hs, mcp__http_req *req);
    /* The session leaves this node (why): 1 when it lives on elsewhere. */
    int (*leaving)(hsess *hs, enum mcp__leave why);
    /* The session closes here: 1 when the plug-in took care of its events (they are
     * not dropped from this node's store); *keep set when the plug-in frees hs later
     * (with free()), else session_free comes before hs is freed. */
    int (*session_close)(hsess *hs, int *keep);
    void (*session_free)(hsess *hs);
    /* ---- Streams ---- */
    /* A stream was made (every stream): its state is set up. MCP_OK or MCP_ENOMEM. */
    int (*stream_init)(hstream *st);
    /* The number of a new stream of hs (n: the session's own count). */
    uint64_t (*stream_number)(hsess *hs, uint64_t n);
    /* A POST stream of requests (v, the body) opened. */
    void (*post_stream)(hstream *st, const json_t *v);
    /* An event is about to be stored for st; then it was (len bytes). */
    void (*storing)(hstream *st);
    void (*stored)(hstream *st, size_t len);
    /* An event of a stream with no hstream here (the standalone stream's while no GET is
     * open) was stored at seq. */
    void (*stored_detached)(hsess *hs, uint64_t seq);
    /* SEP-1699 on st, whose client may be away from this node. */
    void (*pause)(hstream *st, int retry_ms);
    /* st sent its last event. */
    void (*stream_end)(hstream *st);
    /* st's HTTP response ends or is released (st->req is still set). */
    void (*release)(hstream *st);
    /* st goes: its state is freed. */
    void (*stream_free)(hstream *st);
    /* The keep-alive timer passes st (an open stream). */
    void (*keepalive)(hstream *st);
    /* 1 when handlers must wait for the plug-in's backlog to drain. */
    int (*congested)(shttp *t);
    /* A resume on req of event seq of stream id (Last-Event-ID). */
    enum mcp__resume_verdict (*resume)(shttp *t, hsess *hs, mcp__http_req *req, uint64_t id,
                                       uint64_t seq);
    /* A replay failed with status (MCP_ECLOSED: the shared store is out of reach): 1
     * when it answered req. */
    int (*replay_failed)(shttp *t, mcp__http_req *req, int status);
    /* ---- The endpoint ---- */
    /* The endpoint stops: relays are cut, the plug-in detaches. */
    void (*stop)(shttp *t);
    /* The endpoint's memory goes. */
    void (*free)(shttp *t);
} mcp__shttp_share_ops;

/* The operations of the answerer behind a session. */
#define HS_ANS(hs) ((hs)->t->ans->ops)

/*
 * HS_GET streams carry the session's messages not tied to a request (the newest
 * live one does). HS_IDLE is a resume of a POST stream that had already sent
 * everything: it stays open, kept alive, carrying nothing, so that clients whose
 * EventSource reconnects after every end are not pushed into a reconnect loop.
 */
/* HS_REMOTE is a resume of a stream another node writes (--redis): its events come
 * from the shared store, replayed and then followed live (cluster/cluster.c). */
enum hstream_kind { HS_POST_SSE, HS_POST_JSON, HS_GET, HS_IDLE, HS_HTTPSSE, HS_REMOTE };

struct hstream {
    hsess *hs;
    uint64_t id; /* the number the protocol session knows it by */
    enum hstream_kind kind;
    mcp__http_req *req; /* NULL once the HTTP side is finished or gone */
    int begun;          /* the SSE status line and headers are out */
    int backlog_wait;   /* its handler waits for the plug-in's backlog to drain */
    int pending;        /* answers still owed on a POST stream */
    int last_event;     /* the event being sent is its last: the stream ends after it */
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
    struct hstream_share *sh; /* what other nodes know of it (a plug-in's), or NULL */
    hstream *prev, *next;
};

/*
 * A message not tied to a request that had nowhere to go (no GET stream open, none to
 * resume): it waits for the session's next GET (outbox.c). Clients open their
 * standalone GET only after notifications/initialized is accepted, and many servers ask
 * for roots as soon as they get that notification.
 */
typedef struct houtbox {
    struct houtbox *next;
    json_t *id;        /* a request's id; NULL for a notification */
    char method[64];   /* for the logs */
    uint64_t deadline; /* loop time it stops waiting at */
    int why;           /* OUTBOX_* of outbox.c: why it cannot be delivered, 0 waiting */
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
    /* With authorization: a digest of the issuer and subject of the principal that
     * opened the session; a request of another principal does not find it (404). */
    char owner[65];
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
    char source[48];        /* the address that opened it, \"\" when unknown */
    struct hsess_share *sh; /* what other nodes know of it (a plug-in's), or NULL */
    hsess *prev, *next;     /* every session, for the timers */
    hsess *deferred_next;   /* in the list of sessions to close once the stack unwinds */
};

/* An extra route of the listener (mcp_http_route). */
typedef struct shttp_route {
    char *method; /* NULL: any */
    char *path;
    mcp_http_route_fn fn;
    void *user;
} shttp_route;

/* Where a stop stands (see endpoint/http.c). */
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
    mcp_event_store *store; /* NULL: not resumable */
    mcp_event_store *own_store;
    int store_attached;
    int retry_ms;
    char **allowed_origins, **allowed_hosts, **cors_origins;
    int bound_loopback;
    mcp__auth *auth;          /* NULL: no authorization */
    char *tls_cert, *tls_key; /* HTTPS: the files, read again on reload; else NULL */
    shttp_route *routes;
    size_t nroutes;

    uv_timer_t keepalive_timer, sweep_timer;
    uv_timer_t outbox_timer; /* ends waits for a first GET (outbox.c) */
    uint64_t outbox_at;      /* the loop time it is set for, while active */
    size_t outbox_bytes;     /* what waits in every session's outbox */
    /* Stopping: the drain deadline, then the end of the connections' flush. */
    uv_timer_t drain_timer;
    enum shttp_phase phase;
    uint64_t deadline; /* loop time the drain ends at; UINT64_MAX: none */
    /* Our own handles not yet closed, the plug-in's among them; the endpoint, which
     * sits above the wing, hears of each close through the group. */
    mcp__uv_group handles;
    /* Set by the endpoint: a session has no more requests in flight (a drain may be
     * over). */
    void (*drain_check)(shttp *t);
    int http_open, ans_open;
    int free_when_done;
    int in_done; /* done is running */
    mcp_endpoint_done_fn done;
    void *done_user;
    mcp_http_stats stats;
    /* Sessions shared with other nodes (--redis): the plug-in's hooks and its state;
     * both NULL on a single node. */
    const mcp__shttp_share_ops *share;
    struct shttp_share *sh;
};

/* ---- reply.c: what every verb answers with ---- */

/* The id to echo in an error about the message v (borrowed): a request's string or
 * integer id; NULL for a response, a notification, a batch or an invalid id. */
const json_t *mcp__shttp_request_id(const json_t *v);
/* The methods a path allows (RFC 9110: a 405's Allow lists what the target supports;
 * a preflight's Access-Control-Allow-Methods too), comma-separated into out. */
void mcp__shttp_allowed_methods(const shttp *t, const char *path, char *out, size_t size);
/* Whether value is in list (case-insensitively), or list holds "*". */
int mcp__shttp_list_has(char **list, const char *value);
/* Answers with a JSON-RPC error message (stolen) as the body and the status; finishes req. */
void mcp__shttp_error_body(shttp *t, mcp__http_req *req, int status, json_t *body);
/* The step-up check of a POST's messages v (streamable.c): 1 when req was answered (403). */
int mcp__shttp_scope_check(shttp *t, mcp__http_req *req, const json_t *v);
/* Answers req with the gate's refusal (status, WWW-Authenticate, a JSON-RPC error). */
void mcp__shttp_auth_refuse(shttp *t, mcp__http_req *req, const mcp__auth_verdict *v);
/* The JSON-RPC code of the 404 for a session this server does not have (never had, ended,
 * expired): Invalid Request, since the request is not valid here, and the 404 is what
 * tells the client to start a new session (the spec's rule). Not a timeout. */
#define MCP__SESSION_NOT_FOUND MCP_RPC_INVALID_REQUEST
/* Answers with a JSON-RPC error body and the status; finishes req. The body carries the
 * id of the request req's body holds when it can be read (mcp__shttp_body_id), else null. */
void mcp__shttp_error(shttp *t, mcp__http_req *req, int status, int code, const char *message);
/* The CORS headers for req (if configured), appended to a header list. */
size_t mcp__shttp_cors(shttp *t, mcp__http_req *req, const char **hdrs, size_t n);
/* The id of the one request a POST body holds (a string or an integer), when it can be
 * read: a new reference, or NULL (no body, not JSON, a batch, a notification, a
 * response, an id of another type). */
json_t *mcp__shttp_body_id(mcp__http_req *req);
/* The ids of the requests of a POST body (a new array, NULL when out of memory). */
json_t *mcp__shttp_request_ids(const json_t *v);
/* mcp__shttp_error with the id already known (borrowed; NULL: null). */
void mcp__shttp_error_id(shttp *t, mcp__http_req *req, int status, const json_t *id, int code,
                         const char *message);

/* ---- router.c ---- */

/* The listener's on_request: Host and Origin, CORS preflight, then MCP, HTTP+SSE
 * and extra routes. */
void mcp__shttp_on_request(void *user, mcp__http_req *req);
/* Frees the extra routes. */
void mcp__shttp_routes_free(shttp *t);

/* ---- endpoint/http.c ---- */

/* An endpoint whose sessions `ans` answers (the server's, or another answerer's);
 * takes ans over, even on failure. As mcp_http_endpoint_new otherwise. */
int mcp__http_endpoint_new(uv_loop_t *loop, mcp__answerer *ans, const mcp_http_opts *opts,
                           mcp_http_endpoint **out);

/* ---- sessions.c: sessions and streams ---- */

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
/* With authorization: what hs's session is fed from now on acts for the principal req
 * carries (the session's handlers see it). */
void mcp__hsess_set_principal(hsess *hs, mcp__http_req *req);
/* Feeds v, received with req on `stream`, to hs's session, with req's principal. */
void mcp__hsess_feed(hsess *hs, mcp__http_req *req, json_t *v, uint64_t stream);
/* With authorization: hs belongs to the principal req carries (mcp__hsess_owned_by
 * then tells whether a later request's principal is the same one). MCP_OK or MCP_EIO. */
int mcp__hsess_bind(hsess *hs, mcp__http_req *req);
int mcp__hsess_owned_by(const hsess *hs, mcp__http_req *req);
/* The same for a session another node holds, whose owner (NULL: none) its record names. */
int mcp__shttp_owner_is(shttp *t, mcp__http_req *req, const char *owner);
/* Records the address that opened hs (for eviction: see mcp__shttp_evict_idle_session). */
void mcp__hsess_set_source(hsess *hs, mcp__http_req *req);
/* Closes hs once the current callback stack has unwound. */
void mcp__hsess_close_later(hsess *hs);
hstream *mcp__hstream_new(hsess *hs, enum hstream_kind kind, mcp__http_req *req);
/* The session's live standalone (GET) stream here, or NULL. */
hstream *mcp__hsess_standalone(hsess *hs);
/* The id of a new stream of hs of that kind. */
uint64_t mcp__hstream_new_id(hsess *hs, enum hstream_kind kind);
/* Sends a message of hs's session on a stream, as its session io does, but never held
 * for the session's record (the plug-in's hold hook). */
int mcp__hsess_send(hsess *hs, uint64_t stream, const char *text, size_t len, unsigned flags);
/* A stream with a given id (a resumed one). */
hstream *mcp__hstream_attach(hsess *hs, uint64_t id, enum hstream_kind kind, mcp__http_req *req);
/* True when the session's streams may start with priming events and be closed for
 * polling: a store, and a client of 2025-11-25 or later (older ones fail on them). */
int mcp__hsess_primes(const hsess *hs);
/* The wire id of event seq of a stream: "<tag>-<stream>-<seq>". */
void mcp__event_id(const hsess *hs, uint64_t stream, uint64_t seq, char out[64]);
/* Reads an event id of hs (the tag must be hs's) into stream and seq. 0, or -1. */
int mcp__parse_event_id(const hsess *hs, const char *id, uint64_t *stream, uint64_t *seq);
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

/* ---- resume.c ---- */

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
/* Resumes the stream Last-Event-ID names on req (GET). */
void mcp__shttp_resume(shttp *t, hsess *hs, mcp__http_req *req, const char *last_event_id);
/* The session is closing: replays under way are abandoned. */
void mcp__shttp_resumes_cancel(hsess *hs);

/* ---- outbox.c: messages waiting for a GET stream ---- */

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

/* ---- streamable.c ---- */

/* on_close of a stream's request. */
void mcp__shttp_stream_closed(void *arg, mcp__http_req *req);
void mcp__shttp_mcp_request(shttp *t, mcp__http_req *req);
/* The same, past the cluster's look-up (the session is known here, or unknown). */
void mcp__shttp_mcp_request_local(shttp *t, mcp__http_req *req);
/* A JSON-mode POST stream whose request sends a message of its own before its answer
 * becomes an SSE stream (primed when the session primes): see streamable.c. */
void mcp__hstream_json_to_sse(hstream *st);
/* Validates a POST body: parses it and checks every message. On failure answers
 * req (400) and returns NULL. *n_requests and *has_init describe it. */
json_t *mcp__shttp_parse_body(shttp *t, mcp__http_req *req, size_t *n_requests, int *has_init);

/* The answer to a DELETE that ended its session: 200 (streamable.c). */
void mcp__shttp_deleted(shttp *t, mcp__http_req *req);

/* ---- httpsse.c ---- */

/* The answer to an HTTP+SSE POST whose messages were taken: 202. */
void mcp__httpsse_accepted(shttp *t, mcp__http_req *req);

void mcp__httpsse_get(shttp *t, mcp__http_req *req);
/* Sends the HTTP+SSE session's endpoint event (closes it when that fails). */
void mcp__httpsse_endpoint(hsess *hs);
void mcp__httpsse_post(shttp *t, mcp__http_req *req);

#endif
