/* SPDX-License-Identifier: MIT */
/*
 * The gateway's forwarder (see mcp/gateway.h): an answerer (server/answerer.h)
 * whose sessions are served by stdio MCP servers run as child processes.
 *
 *   forward.c   the answerer: sessions, the id table, routing both ways
 *   modern.c    revision 2026-07-28: the pool, passing through or translating
 *   questions.c   its translated questions (InputRequiredResult, the retry)
 *   subscriptions.c  its subscriptions/listen for translated children
 *   gateway.c   the public entry points: options, the endpoint, statistics
 *
 * Ids. Every request that goes to a child carries an id of the gateway's own (a
 * positive integer, never reused), and so does every request of a child that goes
 * to a client; the table maps it back to the client's id and stream, or to the
 * child's id. A progress token the client gave is replaced by the request's
 * gateway id too. So nothing a client chooses can collide in a shared child.
 *
 * Everything runs on the thread of the loop the gateway was made on.
 */
#ifndef MCP_GATEWAY_INT_H
#define MCP_GATEWAY_INT_H

#include <mcp/gateway.h>

#include "server/answerer.h"

/* The options, with every default filled in and argv copied. */
typedef struct mcp__gw_cfg {
    char **argv;
    int shared_child;
    int max_children;
    int kill_grace_ms;
    int init_timeout_ms;
    int poll_ms;
    int pool_size;        /* children serving revision 2026-07-28 */
    int input_timeout_ms; /* how long a request's questions wait for the client's retry */
    size_t max_message;
    mcp_log_level log_level;
    mcp_gateway_log_fn log;
    void *log_user;
    unsigned char state_key[32]; /* seals requestState, when has_state_key */
    int has_state_key;
} mcp__gw_cfg;

/* A forwarder on loop; takes cfg over (freed on every path). NULL when out of memory. */
mcp__answerer *mcp__gw_answerer_new(uv_loop_t *loop, mcp__gw_cfg *cfg);
/* Frees what cfg holds. */
void mcp__gw_cfg_free(mcp__gw_cfg *cfg);
/* A word (a method name) as a logfmt value: printable ASCII without quotes, spaces,
 * '=' or backslashes, others made '?'; "-" when empty. Returns out (or "-"). */
const char *mcp__gw_log_word(const char *s, char *out, size_t size);
/* The row of mcp_gateway_stats.by_method that counts method. */
int mcp__gw_method_index(const char *method);
/* The statistics of a forwarder, or MCP_EINVAL when a is not one. */
int mcp__gw_stats(const mcp__answerer *a, mcp_gateway_stats *out);

#endif
