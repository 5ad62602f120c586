/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen (revision 2026-07-28, basic/patterns/subscriptions.mdx): what
 * a subscription asked for and how its notifications are tagged. Shared by the server
 * core (server/listen.c) and the gateway (gateway/subscriptions.c), which serve the
 * same filter to the same clients.
 */
#ifndef MCP_PROTOCOL_SUBSCRIPTIONS_H
#define MCP_PROTOCOL_SUBSCRIPTIONS_H

#include <jansson.h>

#define MCP__META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"

/* The list changes a filter can ask for (toolsListChanged, promptsListChanged,
 * resourcesListChanged). */
enum { MCP__LISTEN_TOOLS = 0x1, MCP__LISTEN_PROMPTS = 0x2, MCP__LISTEN_RESOURCES = 0x4 };

/* Whether a subscription of these kinds and resource URIs (an object used as a set, or
 * NULL) asked for the notification method (about params' uri, for resource updates).
 * Nothing else goes to a subscription: its client never asked for it. */
int mcp__listen_wants(unsigned kinds, const json_t *uris, const char *method, const json_t *params);

/* A copy of params (NULL: {}) whose _meta names the subscription id: how every
 * notification of a subscription is tagged. New reference, or NULL. */
json_t *mcp__listen_tagged(const json_t *params, const json_t *id);

#endif
