/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics for the programs: the library's (mcp_http_endpoint_metrics,
 * mcp_http_metrics_route), which mcp-gateway adds its own to, in the same format.
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

#endif
