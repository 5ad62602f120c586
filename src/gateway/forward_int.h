/* SPDX-License-Identifier: MIT */
/*
 * The forwarder's insides, shared by forward.c (sessions of the older revisions,
 * children, the id table) and modern.c (revision 2026-07-28: the pool, Multi
 * Round-Trip Requests, subscriptions). Everything runs on the gateway's loop.
 */
#ifndef MCP_GATEWAY_FORWARD_INT_H
#define MCP_GATEWAY_FORWARD_INT_H

#include "gateway/gateway_int.h"
#include "ctransport/ctransport.h"

typedef struct gw gw;
typedef struct gw_child gw_child;
typedef struct gw_sess gw_sess;
typedef struct gw_req gw_req;
typedef struct gw_sreq gw_sreq;
typedef struct gw_batch gw_batch;
typedef struct gw_mreq gw_mreq;
typedef struct gw_modern gw_modern;

enum child_state { CH_STARTING, CH_READY, CH_GONE };

/* Requests a session may send while its shared child starts, held until it is ready. */
#define MAX_HELD 64
/* Cancelled requests of a shared child are remembered this long, and at most this many,
 * so that what the child still sends for them is never taken for another client's. */
#define ZOMBIE_MS 30000
#define MAX_ZOMBIES 1024
/* Resources a session may be subscribed to. */
#define MAX_SUBS 1024
/* Requests of a child to one session's client that wait for its answer: past it, the
 * child's next one is answered with an error at once. */
#define MAX_SREQS 1024
enum init_state { INIT_NONE, INIT_PENDING, INIT_DONE };

struct gw_child {
    gw *g;
    mcp__ctr *ctr;
    enum child_state state;
    int pid;
    int shared;          /* initialized by the gateway, serving any session */
    int pooled;          /* one of the pool that serves 2026-07-28 requests (modern.c) */
    int modern;          /* pooled: it speaks 2026-07-28 itself, requests pass through */
    json_t *init_result; /* shared: the child's answer to the gateway's initialize */
    json_t *server_info; /* pooled: its serverInfo, for results of the modern era */
    gw_req *excl;        /* pooled, translated: the request that may ask its client */
    int pool_ready;      /* pooled: it was counted ready (modern.c) */
    uv_timer_t init_timer;
    int timer_open;
    gw_sess *sessions; /* the sessions it serves */
    size_t nsessions;
    gw_req *reqs; /* requests in flight in it, oldest first */
    gw_req *reqs_tail;
    size_t nreqs;
    size_t nzombies;  /* cancelled requests the child may still be running (shared) */
    int lost_pending; /* the transport reported the child lost: child_lost runs next turn */
    char lost_why[128];
    int ctr_closed, closing;
    int live; /* counted in gw.nlive: started, not yet being stopped */
    gw_child *prev, *next;
};

/* One POST's batch (2025-03-26): its answers go out together, as one array. */
struct gw_batch {
    uint64_t stream;
    json_t *answers;
    size_t remaining; /* requests still to be answered */
};

struct gw_req {
    json_int_t gid;
    char key[24]; /* gid in decimal: its key in the table */
    gw_sess *s;
    gw_child *c;
    json_t *client_id;
    json_t *token; /* the client's progress token, or NULL */
    uint64_t stream;
    gw_batch *batch;
    char *method;
    uint64_t t0;           /* uv_hrtime() when it came */
    char trace_id[33];     /* of its _meta.traceparent, for the log line; "" if none */
    int is_init;           /* the gateway's own initialize of a shared child */
    int internal;          /* a request of the gateway's own to a pooled child (modern.c) */
    gw_mreq *m;            /* a request of revision 2026-07-28 (modern.c), or NULL */
    int polled;            /* its stream was closed for polling (SEP-1699) */
    int zombie;            /* cancelled, or its session gone: the child may still run it */
    uint64_t zombie_at;    /* uv_now() when it became one */
    gw_req *sprev, *snext; /* in its session */
    gw_req *cprev, *cnext; /* in its child */
};

struct gw_sreq {
    json_int_t gid;
    char key[24];
    json_t *child_id;
    gw_child *c;
    gw_sess *s;
    uint64_t stream;
    gw_sreq *prev, *next; /* in its session */
};

struct gw_sess {
    gw *g;
    const mcp__session_io *io;
    void *io_user;
    char id[40];
    int stateless;
    gw_child *c;
    enum init_state init;
    const mcp__revision *rev;
    json_t *init_id; /* shared: the client's initialize, waiting for the child */
    uint64_t init_stream;
    gw_batch *init_batch;
    char *init_version;
    json_t *held; /* shared: [[stream, request], ...] waiting for the child (at most
                     MAX_HELD) */
    json_t *subs; /* resource URIs it subscribed to (an object used as a set) */
    gw_req *reqs;
    size_t nreqs;
    gw_sreq *sreqs;
    size_t nsreqs;
    int ended;       /* io->end was called */
    json_t *waiting; /* a 2026-07-28 request waiting for a pool child (modern.c) */
    uint64_t wait_stream, wait_at;
    size_t wait_bytes;
    gw_sess *wnext;       /* in the gateway's queue of them */
    size_t nlistens;      /* subscriptions/listen the gateway serves on it (modern.c) */
    gw_sess *prev, *next; /* in its child, or in the gateway's list of sessions without one */
};

struct gw {
    mcp__answerer base;
    uv_loop_t *loop;
    mcp__gw_cfg cfg;
    json_int_t next_gid;
    mcp__map reqs;  /* gid -> gw_req */
    mcp__map sreqs; /* gid -> gw_sreq */
    gw_child *children;
    gw_child *shared;
    gw_sess *loose; /* sessions not attached to a child */
    unsigned long nsessions, nchildren;
    unsigned long nlive; /* children not being stopped: what max_children bounds */
    mcp_gateway_stats stats;
    gw_modern *modern; /* the 2026-07-28 era (modern.c) */
    uint32_t node;     /* this node's number in a deployment sharing Redis, 0: none */
    char addr[300];    /* where the other nodes reach it, "" when not known */
    int shutting_down;
    uv_timer_t timer; /* polls streams (--poll-ms); its close ends the gateway */
    void (*done)(void *arg);
    void *done_arg;
};

/* ---- forward.c ---- */

int mcp__gw_logs(const gw *g, mcp_log_level level);
void mcp__gw_log(gw *g, mcp_log_level level, const char *fmt, ...) MCP_PRINTF(3, 4);

/* To the client of s, on stream; to a child. MCP_OK or why not. */
int mcp__gw_to_client(gw_sess *s, uint64_t stream, const json_t *msg, unsigned flags);
int mcp__gw_to_child(gw_child *c, const json_t *msg);
/* An answer (taken over) to a client's request, on its own or into its batch. */
void mcp__gw_answer(gw_sess *s, uint64_t stream, gw_batch *batch, json_t *msg);
void mcp__gw_answer_error(gw_sess *s, uint64_t stream, gw_batch *batch, const json_t *id, int code,
                          const char *message);

void *mcp__gw_gid_lookup(const mcp__map *map, const json_t *id);
json_int_t mcp__gw_new_gid(gw *g, char key[24]);

void mcp__gw_req_leave_session(gw_req *r);
void mcp__gw_req_unlink(gw_req *r);
void mcp__gw_req_free(gw_req *r);
/* Answered (error: its error object, or NULL): counted, logged, unlinked and freed. */
void mcp__gw_req_done(gw_req *r, const json_t *error);
void mcp__gw_req_zombie_free(gw_req *r);
/* Cancelled or orphaned: see forward.c. */
void mcp__gw_req_abandon(gw_req *r, int tell_client);
void mcp__gw_req_fail(gw_req *r, const char *message);
/* Puts r (its gid and key set) in the table and its child's list. MCP_OK or MCP_ENOMEM. */
int mcp__gw_req_register(gw_req *r);

void mcp__gw_attach(gw_sess *s, gw_child *c);
void mcp__gw_sess_end(gw_sess *s);
/* A new child (shared: it serves any session), or NULL past max_children or when it
 * cannot be started. */
gw_child *mcp__gw_child_start(gw *g, int shared);
/* Whether no child may start now: max_children are live (not being stopped), or as
 * many again are still on their way out. */
int mcp__gw_children_full(const gw *g);
void mcp__gw_child_lost(gw_child *c, const char *why);
/* The same from the loop's next turn: for callers that still hold what it frees (a
 * write that failed, say). */
void mcp__gw_child_lost_later(gw_child *c, const char *why);
/* Stops c: its stdin closes, then SIGTERM and SIGKILL; it leaves once reaped. */
void mcp__gw_child_close(gw_child *c);
/* Sends c a request of the gateway's own (params taken over): the new request, sent,
 * or NULL when c is lost. */
gw_req *mcp__gw_child_request(gw_child *c, const char *method, json_t *params);
/* Sends the gateway's own initialize to c (pooled or shared). MCP_OK, or c is lost. */
int mcp__gw_child_initialize(gw_child *c);
/* A client's request to s's child under a new gateway id; NULL when it was answered
 * with an error instead. */
gw_req *mcp__gw_forward_request(gw_sess *s, json_t *msg, uint64_t stream, gw_batch *batch);

/* ---- modern.c ---- */

int mcp__gw_modern_new(gw *g);
void mcp__gw_mreq_free(gw_mreq *m);
void mcp__gw_modern_free(gw *g);
/* Whether a client's message is a request of revision 2026-07-28 (its _meta names a
 * protocol version). */
int mcp__gw_is_modern(const json_t *msg);
/* Serves one: from the pool, or answered here. */
void mcp__gw_modern_request(gw_sess *s, json_t *msg, uint64_t stream);
/* A pooled child's answer to r (a modern or internal request): 1 when handled. */
int mcp__gw_modern_response(gw_child *c, gw_req *r, json_t *msg);
/* A pooled child's request to a client, and its notifications: handled here. */
void mcp__gw_modern_child_request(gw_child *c, json_t *msg);
int mcp__gw_modern_notification(gw_child *c, json_t *msg, const char *method);
/* A pooled child answered its initialize (result) and is ready. */
void mcp__gw_modern_child_ready(gw_child *c, json_t *result);
/* A pooled child is going away: its requests are failed by the caller; the pool forgets
 * it. */
void mcp__gw_modern_child_gone(gw_child *c, const char *why);
/* A request of a pooled child ended: waiting requests may go now. */
void mcp__gw_modern_pump(gw *g);
void mcp__gw_modern_tick(gw *g);
void mcp__gw_modern_cancel_stream(gw_sess *s, uint64_t stream);
void mcp__gw_modern_drain(gw_sess *s);
/* s closes: forgets what of it waits or listens. */
void mcp__gw_modern_sess_close(gw_sess *s);

#endif
