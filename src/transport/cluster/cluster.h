/* SPDX-License-Identifier: MIT */
/*
 * The Redis cluster plug-in of the Streamable HTTP server, as the endpoint that
 * starts it sees it (--redis): started, it fills the endpoint's hook table
 * (t->share, shttp.h) and its state (t->sh); the single-node files know it only
 * through that table.
 */
#ifndef MCP_TRANSPORT_CLUSTER_CLUSTER_H
#define MCP_TRANSPORT_CLUSTER_CLUSTER_H

#include "transport/shttp.h"

/* Connects to the cluster at o->redis_url (keys under o->redis_prefix; events within
 * the bounds of o->memory_store; at most o->cluster_max_sessions sessions, 0: the
 * default); its event store becomes the endpoint's, and t->share its hooks. MCP_EINVAL,
 * MCP_ENOMEM, MCP_ECONNECT. On failure t->share stays NULL. */
int mcp__shttp_cluster_start(shttp *t, const mcp_http_opts *o);
/* The endpoint listens on host:port: other nodes reach this one there (or at
 * o->cluster_address). */
void mcp__shttp_cluster_listening(shttp *t, const mcp_http_opts *o, const char *host, int port);

#endif
