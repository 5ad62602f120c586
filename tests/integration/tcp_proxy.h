/* SPDX-License-Identifier: MIT */
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
 *
 * A hold point (tp_hold) plays a server killed in the middle of a request: the
 * first request whose bytes contain a given text reaches the server, but nothing
 * the server sends after it reaches the client, and when the server's side
 * closes, the client's is reset. A connection to a server that is not listening
 * (being restarted) is tried again for up to 10 s.
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
    long long matches;     /* times the hold text went to the server */
    long long held;        /* connections held (0 or 1) */
} tp_stats;

/* Starts the proxy to 127.0.0.1:target; cut_percent of the SSE streams get cut.
 * Returns 0 (*out set) or -1. */
int tp_start(tp_proxy **out, int target, uint64_t seed, int cut_percent);
int tp_port(const tp_proxy *p);
void tp_get_stats(tp_proxy *p, tp_stats *out);
/* From now on, holds the first request that contains text (see above), and counts
 * every time text goes to the server. text is kept, not copied. */
void tp_hold(tp_proxy *p, const char *text);
/* Waits up to timeout_ms for the held request to reach the server: 0, or -1. */
int tp_wait_held(tp_proxy *p, int timeout_ms);
/* Closes every connection, joins every thread and frees. p may be NULL. */
void tp_stop(tp_proxy *p);

#endif
