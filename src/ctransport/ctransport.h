/* SPDX-License-Identifier: MIT */
/*
 * Client transports: how an mcp_client reaches its server. The client owns the
 * JSON-RPC engine; a transport carries the engine's messages to the server and
 * the server's back, and reports when it can no longer do so.
 *
 *   stdio_client.c   a child process, one message per line on its stdin/stdout
 *   shttp_client.c   Streamable HTTP (2025-03-26 to 2025-11-25) and the HTTP+SSE
 *                    HTTP+SSE transport (2024-11-05), on libcurl driven by the
 *                    loop (http/curl_loop.c)
 *
 * Everything runs on the client's loop thread. A transport's callbacks may run
 * from inside its operations (a send that fails at once reports it through
 * on_request_failed before returning, say), so callers keep no state across an
 * operation that a callback could change.
 */
#ifndef MCP_CTRANSPORT_CTRANSPORT_H
#define MCP_CTRANSPORT_CTRANSPORT_H

#include <stdint.h>
#include <uv.h>

#include <mcp/client.h>

typedef struct mcp__ctr mcp__ctr;

/* What a transport tells its client. user is the pointer given at creation. */
typedef struct mcp__ctr_cbs {
    /* One message from the server, as text (to be parsed) or as a value already
     * parsed (borrowed for the call). A transport uses one or the other. */
    void (*on_text)(void *user, const char *text, size_t len);
    void (*on_value)(void *user, json_t *msg);
    /* Outgoing request `id` cannot be answered any more (its stream cannot be
     * resumed, the server refused it, the session could not be renewed): the
     * client fails it with status; err (may be NULL) says why in words, with the
     * HTTP status as its code when there is one. A modern request whose HTTP error
     * carries a JSON-RPC error fails with MCP_ERPC and that error. http: the HTTP
     * status of the answer, or 0. */
    void (*on_request_failed)(void *user, json_int_t id, int status, const mcp_rpc_error *err,
                              long http);
    /* A message of the server over the size limit was dropped (stdio), seen bytes
     * long: id is what it answers when it is a response with an integer id (0 when
     * not), response whether it is one. May be NULL. */
    void (*on_oversized)(void *user, long long id, int response, size_t seen);
    /* The server cannot be reached any more: every pending request fails and
     * nothing more is sent. Reported at most once. */
    void (*on_lost)(void *user, int status, const char *why);
    /* What await_ready promised: the transport is ready for requests. */
    void (*on_ready)(void *user);
    /* close() has finished: nothing of the transport is left on the loop. */
    void (*on_closed)(void *user);
} mcp__ctr_cbs;

typedef struct mcp__ctr_ops {
    /* Sends one message (text is msg serialised; msg may be NULL, see rpc.h).
     * MCP_OK, or the error that made it impossible now (the message is then not
     * sent, and a request is failed by the caller from the return value). */
    int (*send)(mcp__ctr *t, const json_t *msg, const char *text, size_t len);
    /* Outgoing request id ended (answered, timed out, cancelled): the transport
     * stops whatever it did for it (resumption, reconnect timers). May be NULL. */
    void (*request_done)(mcp__ctr *t, json_int_t id);
    /* After initialize is answered and notifications/initialized sent: 0 when
     * the transport is ready for requests now, 1 when it calls on_ready later
     * (within its connect timeout), once the channels it opens after
     * initialization are up. May be NULL (ready now). */
    int (*await_ready)(mcp__ctr *t);
    /* Starts closing: ends the session with the server as the transport's
     * protocol says, then closes every handle and calls on_closed, once. */
    void (*close)(mcp__ctr *t);
    /* Reconnects now the stream whose reconnection the application was asked to
     * schedule (mcp_http_client_opts.schedule_reconnect). MCP_ENOENT when that
     * reconnection is no longer wanted. May be NULL. */
    int (*reconnect)(mcp__ctr *t, uint64_t reconnect_id);
    /* The client speaks the modern era (2026-07-28) from now on: no session, no
     * standalone stream, no resumption; a request is cancelled by the end of its
     * stream, so notifications/cancelled is not sent. May be NULL (stdio: nothing
     * changes). */
    void (*set_modern)(mcp__ctr *t);
} mcp__ctr_ops;

struct mcp__ctr {
    const mcp__ctr_ops *ops;
    const mcp__ctr_cbs *cbs;
    void *user;
    uv_loop_t *loop;
    mcp_client *client; /* handed to the application's callbacks; set by the client */
};

/*
 * A child process: argv[0] is run with argv (copied), its stdin and stdout are
 * the connection, its stderr is ours. Messages longer than max_message are
 * dropped with a warning. On close, the child's stdin is closed once what is
 * queued is written; 2 s later it gets SIGTERM, 2 s after that SIGKILL, and it
 * is always reaped before on_closed. MCP_OK, MCP_ENOMEM, or MCP_EIO when the
 * child cannot be started (then *out is still made: close it).
 */
int mcp__stdio_ctr_new(uv_loop_t *loop, char *const argv[], size_t max_message,
                       const mcp__ctr_cbs *cbs, void *user, mcp__ctr **out);
/* The waits of a stdio transport's close (default 2000 ms each; <= 0: the default). */
void mcp__stdio_ctr_set_grace(mcp__ctr *t, int grace_ms);
/* The child's process id while it runs, else 0. */
int mcp__stdio_ctr_pid(const mcp__ctr *t);

/*
 * Streamable HTTP, or the HTTP+SSE transport, to one URL. The
 * configuration is copied on the caller's thread (mcp__shttp_cfg_new: MCP_OK,
 * MCP_EINVAL for a URL that is not http:// or https:// or options out of range,
 * MCP_ENOMEM) and handed to the loop, where mcp__shttp_ctr_new takes it (freed
 * on every path). Nothing is sent before the client's first message.
 */
typedef struct mcp__shttp_cfg mcp__shttp_cfg;
int mcp__shttp_cfg_new(const char *url, const mcp_http_client_opts *opts, mcp__shttp_cfg **out);
void mcp__shttp_cfg_free(mcp__shttp_cfg *cfg);
/* 1 when the URL is named as the SSE endpoint of the 2024-11-05 transport. */
int mcp__shttp_cfg_httpsse(const mcp__shttp_cfg *cfg);
int mcp__shttp_ctr_new(uv_loop_t *loop, mcp__shttp_cfg *cfg, size_t max_message,
                       const mcp__ctr_cbs *cbs, void *user, mcp__ctr **out);

#endif
