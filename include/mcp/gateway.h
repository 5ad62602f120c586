/* SPDX-License-Identifier: MIT */
/*
 * libmcp - the gateway: a stdio MCP server offered over Streamable HTTP.
 *
 * A gateway endpoint is an HTTP endpoint (see server.h: the same options, the
 * same stop and free) whose sessions are answered by stdio MCP servers run as
 * child processes, instead of by an mcp_server. Every message is forwarded
 * under an id of the gateway's own, so that requests of different sessions never
 * collide in a child, and every answer, notification and request of a child goes
 * back to the session and stream it belongs to.
 *
 * By default each session gets a child of its own: the client's initialize is
 * forwarded to a new child, and when the session ends (DELETE, idle expiry,
 * eviction, a stop) its child is stopped: its stdin is closed, then it gets
 * SIGTERM and, after a grace period, SIGKILL, and it is always reaped. A child
 * that exits ends its session: every request in flight is answered with an
 * error, and the session is gone (404), so the client starts a new one.
 *
 * With shared_child, one child serves every session. The gateway initializes it
 * itself (declaring sampling, elicitation and roots) and answers each session's
 * initialize from the child's answer. Meant for servers that keep no state per
 * client. A request of the child to a client (sampling, elicitation, roots) or a
 * notification goes to the session whose request is the only one in flight;
 * when several sessions have requests in flight, which one it concerns cannot be
 * known, so a request is answered with an error and a notification is dropped,
 * never sent to the wrong client. List changes go to every session.
 *
 * Revision 2026-07-28 (requests that name their version in _meta, each on its
 * own) is served by a pool of children the gateway starts itself, each asked
 * server/discover first. A child that speaks that revision gets the requests as
 * they came (under gateway ids), and one such child serves them all. Any other
 * child is initialized as a client of the older revisions would, and the gateway
 * translates: server/discover is answered from the child's initialize result,
 * results get resultType, serverInfo and cache hints, and a request of the child
 * to the client (elicitation, sampling, roots) becomes an InputRequiredResult
 * whose requestState, sealed with the gateway's key, names the request waiting in
 * the child; the client's retry brings the answers to it. Such a child serves one
 * request that may ask (tools/call, prompts/get, resources/read) at a time, so
 * that a question reaches the right client; up to pool_size of them run.
 *
 * Threading: every function here is called on the loop's thread.
 */
#ifndef MCP_GATEWAY_H
#define MCP_GATEWAY_H

#include <mcp/client.h>
#include <mcp/server.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One line of the gateway's log: logfmt ("event=request session=... method=...
 * status=ok duration_ms=0.412", and " trace_id=<32 hex digits>" when the request's
 * _meta.traceparent was valid), without a newline; valid during the call. */
typedef void (*mcp_gateway_log_fn)(void *user, mcp_log_level level, const char *line);

/* Options of mcp_gateway_http_new. A zeroed struct but argv gives the defaults. */
typedef struct mcp_gateway_opts {
    /* The caller's sizeof(mcp_gateway_opts), so the struct can grow: 0 stands for this
     * layout. */
    size_t size;
    /* The stdio server: argv[0] (searched in PATH) and its arguments, NULL-terminated.
     * Required. Copied. Its stderr is the gateway's. */
    const char *const *argv;
    int shared_child;    /* one child for every session (see above) */
    int max_children;    /* children at once, not counting those being stopped (as many
                            again at most); an initialize past it takes the child of an
                            idle session (see mcp_http_opts.max_sessions), or gets an
                            error when none is idle; 0: 100. The endpoint's max_sessions
                            is this by default, unless shared_child */
    int kill_grace_ms;   /* from closing a child's stdin to SIGTERM, and from SIGTERM to
                            SIGKILL; 0: 2000 */
    int init_timeout_ms; /* how long a child may take to answer initialize; 0: 30000 */
    size_t max_message;  /* the largest message either way, in bytes; 0: 4 MiB */
    int poll_ms;         /* SEP-1699 SSE polling: the SSE stream of a request that has run this long
                            is closed (once; where the session's revision has priming events and
                            resumability is on), and the client gets the rest by GET with
                            Last-Event-ID after the retry interval, so long calls hold no
                            connection; 0: never */
    mcp_log_level log_level; /* lines of this severity and above reach log (MCP_LOG_DEBUG,
                                0: all of them); a line per request is info, per session
                                and child too, their failures warning */
    mcp_gateway_log_fn log;  /* NULL: no log lines */
    void *log_user;
    int pool_size;        /* children serving revision 2026-07-28 requests (see below); 0: 4 */
    int input_timeout_ms; /* 2026-07-28: how long a request whose server asked its client
                             (an InputRequiredResult) waits for the client's retry; 0: 60000 */
    /* 2026-07-28: the key that seals requestState (32 bytes, copied; NULL: a random one
     * per gateway). Nodes sharing http->redis_url should share it: a retry that lands on
     * another node is then sent to the node whose child waits for it. */
    const unsigned char *state_key;
    size_t state_key_len;
} mcp_gateway_opts;

/*
 * Several nodes (http->redis_url): a session of the
 * older revisions is served by the node that began it, where its child runs; its
 * record in Redis names that node and its address (mcp_http_opts.cluster_address),
 * and a request that reaches another node is relayed there, its response streamed
 * back. A 2026-07-28 request is served by any node; a translated child's retry, whose
 * requestState names the node whose child waits for it, is relayed to that node (the
 * nodes share state_key). A child that speaks 2026-07-28 seals its own requestState:
 * its retry is served by any node's child when they share a key of their own, and
 * the gateway's ids never meet across nodes. A node that dies takes its sessions with
 * it: their requests get 404, and a retry of its requests an error.
 *
 * Serves the stdio server gw->argv names over Streamable HTTP and the HTTP+SSE
 * HTTP+SSE transport on `loop`, as mcp_http_endpoint_new serves an mcp_server:
 * http is that function's options (NULL: the defaults), and the endpoint is
 * stopped and freed with mcp_http_endpoint_stop and mcp_http_endpoint_free; its
 * children are stopped and reaped before done runs. Loop thread. No child is
 * started before a session initializes. gw is copied. Returns MCP_OK; MCP_EINVAL
 * (a NULL loop, gw or out, no argv, a value out of range, a state_key not of 32 bytes, or what
 * mcp_http_endpoint_new refuses), MCP_ENOMEM, MCP_EIO (cannot listen).
 */
MCP_EXTERN int mcp_gateway_http_new(struct uv_loop_s *loop, const mcp_gateway_opts *gw,
                                    const mcp_http_opts *http, mcp_http_endpoint **out);

/* The methods and outcomes the per-method request counters tell apart: the methods
 * named by mcp_gateway_method_name (the last one, "other", counts every other one). */
#define MCP_GATEWAY_METHODS 16
enum {
    MCP_GATEWAY_OK,             /* answered with a result */
    MCP_GATEWAY_ERROR,          /* answered with an error */
    MCP_GATEWAY_CANCELLED,      /* cancelled by its client, or its client went away */
    MCP_GATEWAY_INPUT_REQUIRED, /* 2026-07-28: answered with an InputRequiredResult */
    MCP_GATEWAY_OUTCOMES
};
/* The name of the i-th method of mcp_gateway_stats.by_method, or NULL past the last. */
MCP_EXTERN const char *mcp_gateway_method_name(int i);

/* What a gateway has done so far, for /metrics. */
typedef struct mcp_gateway_stats {
    size_t size;            /* set by the caller: sizeof(mcp_gateway_stats) */
    unsigned long sessions; /* open now */
    unsigned long children; /* running now (started, not yet reaped) */
    unsigned long long children_started, children_exited;
    unsigned long long requests, request_errors; /* answered, and of those with an error */
    unsigned long long bytes_in, bytes_out;      /* message bytes from and to the children */
    /* requests by method and outcome (each round of a 2026-07-28 request counted) */
    unsigned long long by_method[MCP_GATEWAY_METHODS][MCP_GATEWAY_OUTCOMES];
} mcp_gateway_stats;

/*
 * Fills *stats (its size set by the caller) for a gateway endpoint. Loop
 * thread. MCP_OK; MCP_EINVAL for a NULL argument, an endpoint that is not a
 * gateway's, or a size smaller than the size field.
 */
MCP_EXTERN int mcp_gateway_stats_get(const mcp_http_endpoint *ep, mcp_gateway_stats *stats);

/* ---- The reverse: a remote server offered on stdio ---- */

/*
 * A stdio gateway serves one stdio client (newline-delimited JSON-RPC on a pair
 * of file descriptors, as mcp_stdio_endpoint reads them) from a remote server
 * reached over Streamable HTTP, or the HTTP+SSE transport, with the
 * library's HTTP client transport: the streams it resumes with Last-Event-ID at
 * the server's retry, its reconnection with backoff, and a new session when the
 * server forgot the old one (HTTP 404, after a restart, say), started with the
 * client's own initialize and carrying every request still pending, with no
 * part for the client.
 *
 * Every message of the client goes to the server as it is, but the id of a
 * request, which is replaced by one of the gateway's (and put back in the
 * answer), so that any id the client uses can be tracked, resumed and resent.
 * A batch is taken apart: each member is sent, and answered, alone. Everything
 * the server sends is written to the client. A client of revision 2026-07-28
 * (its requests name it in their _meta) is served too: each request goes as one
 * of its own, without a session. A request that cannot be answered
 * any more (the server cannot be reached, its stream cannot be resumed, an HTTP
 * error, the request timeout) is answered with a JSON-RPC error whose message
 * says why (-32603, -32001 for a timeout, or the server's own error);
 * initialize failing so ends the gateway, with the error (nothing could be
 * served), as does the loss of the server (a session that cannot be renewed,
 * the HTTP+SSE stream's end), after answering every pending request.
 *
 * The end of the input ends the gateway once the requests in flight are
 * answered: the session is ended by DELETE, then done runs with MCP_OK.
 */
typedef struct mcp_gateway_connect_opts {
    /* The caller's sizeof(mcp_gateway_connect_opts), so the struct can grow: 0 stands
     * for this layout. */
    size_t size;
    /* The server's URL, http:// or https://: its MCP endpoint, or with
     * http->http_sse its SSE endpoint. Required. Copied. */
    const char *url;
    /* The HTTP client's options (headers sent with every request, TLS, the HTTP+SSE
     * transport, reconnection, session renewal, the connect timeout); NULL: the
     * defaults. Read during the call. schedule_reconnect must be NULL. */
    const mcp_http_client_opts *http;
    size_t max_message;      /* the largest message either way, in bytes; 0: 4 MiB */
    int max_pending;         /* requests of the client in flight at once; 0: 1024. More
                                wait in the gateway, in order (16 MiB of them, or twice
                                max_message; past it a request is answered with an
                                error), while the client's answers and notifications
                                go at once */
    int request_timeout_ms;  /* a request not answered in this time gets a -32001 error
                                and is cancelled at the server; 0: none (the client's
                                own timeout and cancellation bound it) */
    size_t max_queued;       /* bytes the client may leave unread on out_fd while the server
                                keeps sending; past it the gateway ends (MCP_ELIMIT); 0: 64 MiB
                                (never less than twice max_message) */
    mcp_log_level log_level; /* as in mcp_gateway_opts */
    mcp_gateway_log_fn log;  /* NULL: no log lines */
    void *log_user;
} mcp_gateway_connect_opts;

typedef struct mcp_gateway_stdio mcp_gateway_stdio;

/*
 * Serves the client on in_fd (read) and out_fd (written; they may be the same
 * socket) from the server at opts->url, on `loop`. Nothing is sent to the server
 * before the client's first message. Ends at the end of the input, on
 * mcp_gateway_stdio_stop, or when it cannot go on; then done(user, status) runs
 * on the loop thread (done may be NULL): MCP_OK after the end of the input or a
 * stop; MCP_ECONNECT, MCP_EHTTP, MCP_ETIMEDOUT, ... when initialize could not
 * reach the server; MCP_ECLOSED when the server was lost; MCP_EIO when the
 * output failed, or MCP_ELIMIT when its reader left more than max_queued bytes
 * unread. Loop thread. opts is copied. Returns MCP_OK; MCP_EINVAL
 * (a NULL loop, opts or out, a negative descriptor, a URL that is not http(s)://,
 * an invalid header, a value out of range), MCP_ENOMEM, MCP_EIO (a descriptor
 * libuv cannot use). On failure *out is NULL and done never runs.
 */
MCP_EXTERN int mcp_gateway_stdio_new(struct uv_loop_s *loop, const mcp_gateway_connect_opts *opts,
                                     int in_fd, int out_fd, mcp_endpoint_done_fn done, void *user,
                                     mcp_gateway_stdio **out);
/*
 * Stops reading and ends the gateway: requests in flight may be answered for
 * drain_ms (0: at once; < 0: no deadline), after which those left are answered
 * with an error; then the session is ended and done runs. A request that comes
 * meanwhile is answered with an error. A later call only brings the deadline
 * forward. Loop thread. MCP_OK; MCP_ESTATE when it was ending already;
 * MCP_EINVAL for a NULL g.
 */
MCP_EXTERN int mcp_gateway_stdio_stop(mcp_gateway_stdio *g, int drain_ms);
/*
 * Frees the gateway; g must not be used after this call. After done ran, at
 * once (from inside done, once done returns); before, it stops the gateway at
 * once and frees it when it has ended (done does not run). Loop thread.
 */
MCP_EXTERN void mcp_gateway_stdio_free(mcp_gateway_stdio *g);

#ifdef __cplusplus
}
#endif
#endif
