/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the tests of revision 2026-07-28 (test_modern_*.c): an in-process
 * server whose handlers count their runs, served over real 127.0.0.1 sockets by an
 * HTTP endpoint on a loop of its own thread, and the requests of that revision (a
 * body with its _meta, and the headers that mirror it).
 *
 * In process, a test can see what a child could not show: how often a handler
 * ran (a refused request must never reach it), whether it saw its cancellation,
 * how many sessions the server holds (a modern request must leave none behind),
 * and the process's file descriptors and heap.
 *
 * Every wait has a deadline; nothing sleeps to synchronise.
 */
#ifndef MCP_TESTS_INTEGRATION_MODERN_HOST_H
#define MCP_TESTS_INTEGRATION_MODERN_HOST_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <uv.h>

#include <mcp/server.h>

#include "http_client.h"

#define MH_VERSION "2026-07-28"
#define MH_WAIT_MS 5000

/* The handlers of the host's server, each counted (mh_host.runs). */
enum mh_tool {
    MH_COUNT,    /* tool "count": returns "ran" */
    MH_ASK,      /* tool "ask": asks elicitation "name" (MRTR), then greets; arguments {x?} */
    MH_SLEEPY,   /* tool "sleepy": sleeps args.ms (mcp_ctx_sleep), counting cancellations */
    MH_LOGS,     /* tool "logs": logs at debug, info, warning and error, then returns */
    MH_HEADERS,  /* tool "headers": region, count, flag and where.zone travel as Mcp-Param-* */
    MH_ASK_TWO,  /* tool "ask_two": asks "first", then (once answered) "second" */
    MH_PROMPT,   /* prompt "greet": asks elicitation "name" */
    MH_RESOURCE, /* resource test://fixed and template test://items/{id}: ask "name" */
    MH_NTOOLS
};

typedef struct mh_opts {
    long long state_ttl_ms;  /* the requestState's expiry; 0: the default (10 minutes) */
    size_t max_queued;       /* the endpoint's slow-reader limit; 0: its default */
    size_t max_queued_total; /* the endpoint's budget of queued bytes; 0: its default */
    unsigned max_connections;
    int keepalive_ms;
    int session_idle_ms;
    int workers;    /* 0: 4 */
    int tools_only; /* no prompt, no resource, no template */
} mh_opts;

typedef struct mh_host {
    uv_loop_t loop;
    uv_async_t async;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on the monotonic clock: harness_cond_wait_until */
    void (*job)(struct mh_host *h, void *arg);
    void *job_arg;
    int job_done;
    int quit;
    int running; /* the thread runs */
    int stop_done;
    mcp_server *srv;
    mcp_http_endpoint *ep;
    int port;
    /* Under mu; cv is signalled on every change. */
    int runs[MH_NTOOLS];
    int sleeping;  /* sleepy handlers asleep now */
    int cancelled; /* sleepy handlers that saw their cancellation */
    int finished;  /* sleepy handlers that slept to the end */
} mh_host;

/* Starts the host (o may be NULL). Returns 0, or -1. */
int mh_start(mh_host *h, const mh_opts *o);
/* Stops the endpoint (drain_ms as mcp_http_endpoint_stop), waits for it, joins the
 * thread and frees the server. Returns 0, or -1 when something did not end in time. */
int mh_stop(mh_host *h, int drain_ms);
/* A cmocka group's setup and teardown: a host with default options in *state, started;
 * then stopped (1 s drain) and freed. */
int mh_group_setup(void **state);
int mh_group_teardown(void **state);
/* Runs fn(h, arg) on the host's loop thread and waits for it. 0, or -1 on timeout. */
int mh_on_loop(mh_host *h, void (*fn)(mh_host *h, void *arg), void *arg);
/* The protocol sessions the server holds (every transport session, stateless ones
 * included) plus the endpoint's HTTP sessions, read on the loop thread. */
size_t mh_sessions(mh_host *h);
/* Waits until mh_sessions() is want, within timeout_ms. Returns the last count. */
size_t mh_wait_sessions(mh_host *h, size_t want, int timeout_ms);
/* A handler's runs, and any other of the host's counters, read under its lock. */
int mh_runs(mh_host *h, enum mh_tool tool);
int mh_count(mh_host *h, const int *field);
/* Waits until *field (one of the host's counters) reaches at least want. 0 or -1. */
int mh_wait_count(mh_host *h, const int *field, int want, int timeout_ms);

/* ---- Requests of revision 2026-07-28 ---- */

/*
 * The _meta of a modern request: protocolVersion MH_VERSION, clientInfo, and the
 * capabilities given as JSON text (NULL: {}). New reference.
 */
json_t *mh_meta(const char *caps_json);
/* A request {jsonrpc, id, method, params} with params (stolen; NULL: {}) given the
 * _meta above when it has none. New reference. */
json_t *mh_request(long long id, const char *method, json_t *params, const char *caps_json);
/*
 * The headers a conforming client sends with req: Accept, Content-Type,
 * MCP-Protocol-Version (from _meta), Mcp-Method and, for tools/call, prompts/get,
 * resources/read and tasks/get, tasks/update and tasks/cancel, Mcp-Name (plain, or the Base64
 * sentinel when the value needs it), then extra (lines ending in \r\n, may be NULL). Writes into
 * buf; returns buf.
 */
char *mh_headers(const json_t *req, const char *extra, char *buf, size_t size);
/* POSTs req with the headers of mh_headers on a new connection and reads the whole
 * response. Returns 0, or -1. */
int mh_post(int port, const json_t *req, const char *extra_headers, hc_response *r);
/* POSTs a body text with exactly the given headers (Accept and Content-Type
 * included only if headers has them). Returns 0, or -1. */
int mh_post_raw(int port, const char *headers, const char *body, hc_response *r);
/* The whole text of req as a POST to /mcp with the headers of mh_headers (malloc'd;
 * *len gets its length). */
char *mh_format(int port, const json_t *req, size_t *len);
/* Sends req so on c, a connection already open. 0, or -1. */
int mh_send(hc_conn *c, int port, const json_t *req);
/* Opens req's stream: connects, sends, reads the response head. 0, or -1. */
int mh_open(hc_conn *c, int port, const json_t *req, hc_response *head);

/* Every message of r (its JSON body or SSE events) as an array, failing the test when
 * there is none. New reference. */
json_t *mh_messages(const hc_response *r, const char *what);
/* The one response in r: the status, then the JSON-RPC error code (0: a result),
 * and its id (integer) are asserted; returns the response message (new reference). */
json_t *mh_expect(const hc_response *r, int status, int code, long long id, const char *what);
/* The result's text content[0].text (borrowed from response), failing otherwise. */
const char *mh_text(const json_t *response, const char *what);

/* ---- The process ---- */

/* Open file descriptors of this process (entries of /proc/self/fd). */
int mh_count_fds(void);
/* Waits until mh_count_fds() <= want. Returns the last count. */
int mh_wait_fds(int want, int timeout_ms);
/* Bytes of heap in use (mallinfo2), or -1 under a sanitizer's allocator. */
long long mh_heap_bytes(void);

#endif
