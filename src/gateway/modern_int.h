/* SPDX-License-Identifier: MIT */
/*
 * The gateway's revision 2026-07-28 (modern.c, questions.c, subscriptions.c): the
 * structures and helpers the three files share.
 */
#ifndef MCP_GATEWAY_MODERN_INT_H
#define MCP_GATEWAY_MODERN_INT_H

#include "gateway/forward_int.h"
#include "protocol/subscriptions.h"
#include "util/seal.h"

#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define META_PREFIX "io.modelcontextprotocol/"

/* Requests waiting for a pool child: at most this many, of this many bytes in all,
 * this long. */
#define MAX_WAITING 1024
#define MAX_WAITING_BYTES (16u << 20)
#define WAIT_MS 30000
/* Rounds of questions of one request. */
#define MAX_ROUNDS 32
/* Bytes of resource URIs the gateway's subscriptions hold in all. */
#define MAX_LISTEN_URI_BYTES (4u << 20)
/* Questions of one request at once; tools remembered for their Mcp-Param headers; pages
 * of tools/list read for them; subscriptions served here and URIs of one. */
#define MAX_QUESTIONS 32
#define MAX_TOOLS 4096
#define MAX_TOOL_PAGES 64
#define MAX_LISTENS 1024
#define MAX_LISTEN_URIS 1000
/* Children a translating pool keeps for requests parked on their questions, beside the
 * pool_size that serve the others: this many per pool child. */
#define PARKED_PER_POOL_CHILD 4

enum internal { INT_NONE, INT_PROBE, INT_TOOLS, INT_LISTEN, INT_SUB };

/* A subscriptions/listen served by the gateway (translated children). */
typedef struct mlisten {
    gw_sess *s;
    uint64_t stream;
    json_t *id;
    unsigned kinds;
    json_t *uris; /* object used as a set, or NULL */
    struct mlisten *next;
} mlisten;

struct gw_modern {
    mcp__sealer sealer;
    int npool, nstarting;
    int passthrough; /* a child spoke 2026-07-28: one child serves everything */
    int translate;   /* a child did not: the gateway translates */
    gw_sess *wait_head, *wait_tail;
    size_t nwaiting, waiting_bytes;
    int tools_ready; /* the first tools/list of a child was read (Mcp-Param headers) */
    size_t uri_bytes;
    json_t *tools; /* tool name -> inputSchema, for the Mcp-Param headers */
    int tool_pages;
    mlisten *listens;
    size_t nlistens;
    json_t *res_subs;    /* URI -> how many subscriptions ask for it */
    gw_child *sub_child; /* the child subscribed to them */
    int pumping, repump;
    int no_probe; /* children are initialized at once, not asked server/discover first */
    int no_grow;
};

struct gw_mreq {
    json_t *caps;   /* the client's capabilities, from this request's _meta */
    int log_level;  /* the least level of logs it wants (past EMERGENCY: none) */
    int listen;     /* subscriptions/listen, passed through */
    int translated; /* served by a translating child */
    char *binding;  /* what its requestState is bound to */
    size_t blen;
    json_t *asked;     /* key -> {"id", "method", "params"}: the child's open questions */
    unsigned next_key; /* keys of questions: "q1", "q2", ... */
    unsigned round;
    int parked;    /* answered with an InputRequiredResult: waits for the retry */
    char peer[48]; /* the address of its client, for fair shares of parked children */
    uint64_t parked_at;
    json_t *final; /* the child's answer, come while parked */
};

/* ---- modern.c ---- */

/* Tasks of a child on a node of a deployment: the node a tasks/get, tasks/update or
 * tasks/cancel request's taskId names ("<node>.<id>"; 0: none), with *rest its child's id;
 * the child's id put back in msg for this node's child; and a result's task id named
 * with this node (a CreateTaskResult, a tasks/get). */
uint32_t mcp__gwm_task_node(const json_t *msg, const char **rest);
void mcp__gwm_task_id_in(gw *g, json_t *msg);
void mcp__gwm_task_id_out(gw *g, const char *method, json_t *result);

/* The answer (taken over) to the request that came on stream, with the HTTP status
 * some errors of this revision carry. */
void mcp__gwm_reply(gw_sess *s, uint64_t stream, json_t *msg);
void mcp__gwm_reply_error(gw_sess *s, uint64_t stream, const json_t *id, int code,
                          const char *message, json_t *data);
/* What the revision adds to a translated child's result for method. */
void mcp__gwm_decorate(gw_child *c, const char *method, json_t *result);
/* A request was parked on its questions: past the budget of parked children, the
 * oldest request of the client holding the most is given up, so that parked questions
 * never take the children others need. */
void mcp__gwm_park_bound(gw *g, gw_req *just_parked);
/* Sends c a request of the gateway's own (params taken over). MCP_OK, or c is lost. */
int mcp__gwm_internal_request(gw_child *c, enum internal kind, const char *method, json_t *params);

/* ---- questions.c ---- */

/* What a requestState is bound to (malloc'd, *len bytes), or NULL. */
char *mcp__gwm_binding_of(const char *method, const json_t *params, size_t *len);
/* Answers the child's open questions of r with an error. */
void mcp__gwm_drop_questions(gw_req *r, const char *why);
/* The child gave up waiting for child_id: the question is withdrawn. */
void mcp__gwm_withdraw(gw_child *c, const json_t *child_id);
/* A retry with a requestState: 1 done, 0 served anew, -1 not the gateway's. */
int mcp__gwm_retry(gw_sess *s, json_t *msg, uint64_t stream);
/* The node, other than this one, whose child waits for msg, a retry (its requestState
 * names it), and its address into addr ("" when not named); 0 when none does or it
 * cannot be told. */
uint32_t mcp__gwm_home(gw *g, const json_t *msg, char *addr, size_t size);

/* ---- subscriptions.c ---- */

void mcp__gwm_listen_send(mlisten *l, const char *method, const json_t *params);
/* Ends l; graceful: its client gets the completion result. */
void mcp__gwm_listen_end(gw *g, mlisten *l, int graceful);
void mcp__gwm_listen_open(gw_sess *s, gw_child *c, json_t *msg, uint64_t stream);

#endif
