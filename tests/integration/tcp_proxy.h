/*
 * A TCP proxy that breaks SSE streams, for the chaos tests of our HTTP client:
 * it listens on 127.0.0.1 (a free port) and forwards each connection to
 * 127.0.0.1:target, one thread per connection. It reads what the server sends
 * as HTTP/1.1 responses (heads, then Content-Length or chunked bodies) and, in
 * text/event-stream bodies, counts the events. With the chance given, a stream
 * is cut at a random point after one of its events (1 to 60) and a few more
 * bytes: the bytes before the point reach the client, then its connection is
 * closed (FIN) or reset (RST), half of the time each, and so is the server's.
 * A stream is never cut before its first complete event, so that a client
 * always has an event id to resume from; requests and other responses pass
 * untouched.
 *
 * Random choices come from the seed, but threads interleave as they will: a
 * seed replays the choices, not the run.
 */
#ifndef MCP_TESTS_INTEGRATION_TCP_PROXY_H
#define MCP_TESTS_INTEGRATION_TCP_PROXY_H

#include <stdint.h>

typedef struct tp_proxy tp_proxy;

typedef struct tp_stats {
    long long connections; /* accepted */
    long long streams;     /* SSE responses seen */
    long long closes;      /* streams cut with a FIN to the client */
    long long resets;      /* streams cut with a RST to the client */
} tp_stats;

/* Starts the proxy to 127.0.0.1:target; cut_percent of the SSE streams get cut.
 * Returns 0 (*out set) or -1. */
int tp_start(tp_proxy **out, int target, uint64_t seed, int cut_percent);
int tp_port(const tp_proxy *p);
void tp_get_stats(tp_proxy *p, tp_stats *out);
/* Closes every connection, joins every thread and frees. p may be NULL. */
void tp_stop(tp_proxy *p);

#endif
