/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "http_metrics.h"

const char *const http_metrics_headers[] = {"Content-Type", "text/plain; version=0.0.4",
                                            "Cache-Control", "no-store", NULL};

void http_metric(char *buf, size_t size, size_t *n, const char *name, const char *type,
                 const char *help, unsigned long long value)
{
    if (*n >= size)
        return;
    int w = snprintf(buf + *n, size - *n, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name,
                     type, name, value);
    if (w > 0)
        *n += (size_t)w < size - *n ? (size_t)w : size - *n;
}

/* One labelled row of a metric whose HELP and TYPE were written already. */
static void row(char *buf, size_t size, size_t *n, const char *name, const char *label,
                const char *value, unsigned long long count)
{
    if (*n >= size)
        return;
    int w = snprintf(buf + *n, size - *n, "%s{%s=\"%s\"} %llu\n", name, label, value, count);
    if (w > 0)
        *n += (size_t)w < size - *n ? (size_t)w : size - *n;
}

void http_metrics_table(char *buf, size_t size, size_t *n, const http_metric_row *rows,
                        size_t count)
{
    for (size_t i = 0; i < count; i++)
        http_metric(buf, size, n, rows[i].name, rows[i].type, rows[i].help, rows[i].value);
}

int http_metrics_endpoint(mcp_http_endpoint *ep, char *buf, size_t size, size_t *n)
{
    mcp_http_stats hs = {.size = sizeof(hs)};
    int rc = mcp_http_endpoint_stats_get(ep, &hs);
    if (rc != MCP_OK)
        return rc;
    const http_metric_row transport[] = {
        {"mcp_http_streams", "gauge", "Response streams open now (POST and GET).", hs.streams},
        {"mcp_http_streams_total", "counter", "Response streams opened.", hs.streams_total},
        {"mcp_http_resumes_total", "counter", "Streams resumed with Last-Event-ID.", hs.resumes},
        {"mcp_http_replayed_events_total", "counter", "Events sent again to resuming clients.",
         hs.replayed_events},
        {"mcp_http_messages_sent_total", "counter",
         "Messages sent to clients (replays not counted).", hs.messages_out},
        {"mcp_http_sent_bytes_total", "counter", "Bytes of the messages sent to clients.",
         hs.bytes_out},
    };
    http_metrics_table(buf, size, n, transport, sizeof transport / sizeof transport[0]);
    if (*n < size) {
        int w = snprintf(buf + *n, size - *n,
                         "# HELP mcp_http_auth_requests_total Requests to the MCP endpoints by "
                         "authorization outcome.\n# TYPE mcp_http_auth_requests_total counter\n");
        if (w > 0)
            *n += (size_t)w < size - *n ? (size_t)w : size - *n;
    }
    const struct {
        const char *outcome;
        unsigned long long count;
    } outcomes[] = {{"passed", hs.auth_passed},
                    {"no_token", hs.auth_no_token},
                    {"invalid_token", hs.auth_invalid_token},
                    {"insufficient_scope", hs.auth_insufficient_scope},
                    {"invalid_request", hs.auth_bad_request},
                    {"unavailable", hs.auth_unavailable}};
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++)
        row(buf, size, n, "mcp_http_auth_requests_total", "outcome", outcomes[i].outcome,
            outcomes[i].count);
    const http_metric_row security[] = {
        {"mcp_http_auth_cache_hits_total", "counter",
         "Requests let in on a token the verification cache knew.", hs.auth_cached},
        {"mcp_http_tls_handshakes", "gauge", "TLS handshakes in progress now.", hs.tls_handshakes},
        {"mcp_http_tls_handshakes_dropped_total", "counter",
         "TLS handshakes closed to make way for newer ones.", hs.tls_handshakes_dropped},
    };
    http_metrics_table(buf, size, n, security, sizeof security / sizeof security[0]);
    return MCP_OK;
}

void http_metrics_route(mcp_http_exchange *x, void *user)
{
    (void)user;
    char buf[8192];
    size_t n = 0;
    if (http_metrics_endpoint(mcp_http_exchange_endpoint(x), buf, sizeof(buf), &n) != MCP_OK) {
        mcp_http_exchange_respond(x, 500, http_metrics_headers, "no statistics\n", 14);
        return;
    }
    mcp_http_exchange_respond(x, 200, http_metrics_headers, buf, n);
}
