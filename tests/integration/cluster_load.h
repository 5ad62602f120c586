/* SPDX-License-Identifier: MIT */
/*
 * A load of tool calls through the load balancer of a cluster (cluster_host.h),
 * for the chaos tests: client threads run poll_notify calls (count numbered
 * notifications, then the result) on a few sessions, cut their connections at
 * random moments and resume each stream with GET and Last-Event-ID through the
 * balancer, so that each resume lands on whichever node the balancer picks.
 *
 * Every call is followed on its own (resume_check.h's rc_call): each
 * notification must arrive exactly once and in order, then the answer, then a
 * clean end of the stream. The client never deduplicates: a notification seen
 * twice fails the call. What each call saw is kept in a cl_call record (which
 * node took its POST, which node owns its stream, which nodes served its
 * resumes, how and when it ended), for the tests to check against what they
 * did to the cluster.
 *
 * Every wait has a deadline; the only pauses are the random ones between a cut
 * and its resume, and a client's pause before asking again after a refusal.
 */
#ifndef MCP_TESTS_INTEGRATION_CLUSTER_LOAD_H
#define MCP_TESTS_INTEGRATION_CLUSTER_LOAD_H

#include <pthread.h>
#include <stdint.h>

#include "cluster_host.h"

#define CL_MAX_THREADS 32
#define CL_MAX_SESSIONS 16

/* What the cluster may go through while the load runs, and so what a call may meet once
 * the test said it broke something (cl_trouble). */
typedef enum cl_mode {
    /* Nothing fails: any refusal, any cut by the server side, any error is a failure. */
    CL_STRICT,
    /* A node may die: a call may be cut by the server side (then it resumes), a resume
     * the balancer could not place anywhere is asked again, and a call may end with the
     * JSON-RPC error of a node that is gone (the test checks whose stream it was). */
    CL_NODE_DIES,
    /* Redis may be away, then back empty: as CL_NODE_DIES (a node following a stream that
     * loses Redis cannot tell it from its owner's death), and a node's 503 (with a
     * JSON-RPC error body) to a resume is waited out, a 503 to a POST ends the call as
     * refused, and a 404 (session gone) or 400 (Last-Event-ID unknown: its events went
     * with Redis's data) ends it too; a stream that ends cleanly without the answer is
     * resumed, as one closed for polling (SEP-1699). */
    CL_STORE_DOWN
} cl_mode;

typedef enum cl_outcome {
    CL_PENDING = 0,
    CL_RESULT,       /* the result, after every notification once and in order */
    CL_NODE_GONE,    /* the JSON-RPC error -32603 of a node that is gone */
    CL_REFUSED,      /* the POST was refused by a node: 503 with a JSON-RPC error body */
    CL_SESSION_GONE, /* a node answered 404: the session is not known any more */
    CL_STREAM_GONE,  /* a node answered 400 to a resume: its Last-Event-ID is unknown */
    CL_FAILED        /* a check failed: err says which */
} cl_outcome;

/* What one call saw. Times are harness_now_ms(). */
typedef struct cl_call {
    long long id;    /* its JSON-RPC id */
    int session;     /* index in cl_run.sessions */
    int post_node;   /* the node (X-Mcp-Node) that took its POST, -1 when none said */
    long long owner; /* the node number in its event ids' stream (bits 40 up), -1 */
    cl_outcome outcome;
    int status;                   /* the HTTP status that ended it, when not 200 */
    long long notifications;      /* numbered notifications received (each once, in order) */
    int cuts;                     /* connections the client cut */
    int server_cuts;              /* connections that ended without the answer, not by the client */
    int clean_ends;               /* streams that ended cleanly without the answer (Redis away) */
    int resumes;                  /* GETs with Last-Event-ID sent */
    int resumes_on[CH_MAX_NODES]; /* of which each node (X-Mcp-Node) served */
    int on_node;                  /* the node serving the stream being read (X-Mcp-Node), -1 */
    int lb_retries;               /* resumes the balancer answered itself (no node): asked again */
    int unavailable;              /* resumes a node refused with 503: asked again */
    long long t_post;             /* the POST was sent */
    long long t_first;            /* its first event id came (0: never) */
    long long t_answer;           /* its answer came (0: never) */
    long long t_end;              /* it ended */
    char err[900];                /* why it failed, "" otherwise */
} cl_call;

/* A run of calls. The test fills in the first part, then calls cl_start. */
typedef struct cl_run {
    int lb_port;
    cl_mode mode;
    int threads;      /* 1..CL_MAX_THREADS client threads */
    int calls;        /* how many calls; 0: until cl_stop (at most max_calls) */
    int max_calls;    /* the size of the record table when calls is 0 */
    int count;        /* notifications per call */
    int min_delay_ms; /* poll_notify's delay_ms, drawn in [min, max] per call */
    int max_delay_ms;
    int cut_percent; /* chance that the client cuts each piece of a stream */
    int max_cuts;    /* per call */
    int n_sessions;  /* 1..CL_MAX_SESSIONS */
    char sessions[CL_MAX_SESSIONS][33];
    uint64_t seed;     /* each thread's generator starts from it */
    long long id_base; /* call k has the JSON-RPC id id_base + k */
    int step_ms;       /* the deadline of each request and each event */
    int call_ms;       /* the deadline of a whole call */

    /* The records, one per call, in the order the calls were taken. */
    cl_call *recs;
    int n_recs;

    /* Private. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int next, done, failed, stop;
    long long trouble_at;
    int gate_closed, posting;
    int started;
    pthread_t th[CL_MAX_THREADS];
    struct cl_worker *workers;
} cl_run;

/* Starts the client threads. 0, or -1 (nothing runs then). */
int cl_start(cl_run *r);
/* Waits up to timeout_ms until at least n calls ended. Returns how many have, or -1. */
int cl_wait_done(cl_run *r, int n, int timeout_ms);
/* Asks the threads to take no new call (those under way go on to their end). */
void cl_stop(cl_run *r);
/*
 * Waits up to timeout_ms for every thread to end. 0, or -1 when one is still
 * running (a hung client: the test fails, the record table stays allocated).
 */
int cl_join(cl_run *r, int timeout_ms);
/* Frees the records (after cl_join). */
void cl_free(cl_run *r);

/*
 * The POST gate, for a test that must act when no call is between sending its
 * POST and receiving its first event id (a POST whose node dies before it
 * answered anything has no id to resume from: it is another case). Closing
 * waits up to timeout_ms for the POSTs under way to get their first event, and
 * holds new POSTs until cl_gate_open. 0, or -1 at the deadline (still closed).
 */
int cl_gate_close(cl_run *r, int timeout_ms);
void cl_gate_open(cl_run *r);
/*
 * Says that the test breaks the cluster now (kills a node, stops Redis). Until
 * then every mode is as strict as CL_STRICT: what a mode allows for is allowed
 * only when it is seen after this.
 */
void cl_trouble(cl_run *r);
/* Runs fn(r, arg) with the records locked (no call changes meanwhile). */
void cl_locked(cl_run *r, void (*fn)(cl_run *r, void *arg), void *arg);

/* The node number carried by an event id's stream (bits 40 and up), or -1. */
long long cl_id_owner(const char *event_id);
/*
 * 1 when body is a JSON-RPC error message ({"jsonrpc":"2.0","error":{"code":
 * integer,"message":string}}); *code gets its code when not NULL.
 */
int cl_is_rpc_error(const char *body, long long *code);
/* A short name for an outcome. */
const char *cl_outcome_name(cl_outcome o);

#endif
