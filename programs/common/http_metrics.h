/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics for the programs: an HTTP endpoint's counters (mcp_http_stats) in
 * the Prometheus text format (version 0.0.4), which mcp-gateway adds its own to.
 */
#ifndef MCP_PROGRAMS_HTTP_METRICS_H
#define MCP_PROGRAMS_HTTP_METRICS_H

#include <stddef.h>

#include <mcp/mcp.h>

/* The response headers of a metrics answer (NULL-terminated pairs). */
extern const char *const http_metrics_headers[];

/* Appends one metric with its HELP and TYPE lines to buf (size bytes) at *n; what
 * does not fit is left out, and *n stays within size. */
void http_metric(char *buf, size_t size, size_t *n, const char *name, const char *type,
                 const char *help, unsigned long long value);
/* A metric of a table: name, type ("gauge", "counter"), help and value. */
typedef struct http_metric_row {
    const char *name, *type, *help;
    unsigned long long value;
} http_metric_row;
/* Appends count metrics of rows, as http_metric each. */
void http_metrics_table(char *buf, size_t size, size_t *n, const http_metric_row *rows,
                        size_t count);
/* Appends ep's own counters (streams, messages, authorization outcomes, TLS
 * handshakes). MCP_OK, or what mcp_http_endpoint_stats_get says. */
int http_metrics_endpoint(mcp_http_endpoint *ep, char *buf, size_t size, size_t *n);
/* A route (mcp_http_route_fn): GET /metrics with the endpoint's counters. */
void http_metrics_route(mcp_http_exchange *x, void *user);

#endif
