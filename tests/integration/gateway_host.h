/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway for the integration tests: started as a program (bin/mcp-gateway) on
 * a free loopback port in front of a stdio server, stopped with SIGTERM (it must
 * exit 0), and read through GET /metrics.
 */
#ifndef MCP_TESTS_GATEWAY_HOST_H
#define MCP_TESTS_GATEWAY_HOST_H

#include <jansson.h>

#include "http_client.h"

/* Starts mcp-gateway with flags (NULL-terminated, may be NULL) in front of cmd
 * (NULL-terminated), logging warnings and worse unless the flags give --log-level;
 * fails the test when it does not. */
void gw_start(hc_server *s, const char *const flags[], const char *const cmd[]);
/* SIGTERM; fails the test unless it exits 0. Frees s. */
void gw_stop(hc_server *s);
/* A counter of GET /metrics, or -1. */
long long gw_metric(int port, const char *name);
/* Waits until the counter has the value; fails after the deadline. */
void gw_await_metric(int port, const char *name, long long want, int timeout_ms);

/* A 2026-07-28 tools/call of tool, with the client's capabilities (JSON text, may be
 * NULL) and more params (stolen, may be NULL). */
json_t *gw_call(long long id, const char *tool, const char *caps, json_t *more);

#endif
