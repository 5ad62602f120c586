/* SPDX-License-Identifier: MIT */
/*
 * A thin HTTP/1.1 server on libuv and llhttp: listening, connections, limits,
 * timeouts, keep-alive and pipelining, plain and streamed (chunked) responses.
 * It knows nothing of MCP; the Streamable HTTP and HTTP+SSE transports stand
 * on it.
 *
 * Threading: everything here runs on the thread of the loop given to
 * mcp__http_server_start(), and every function below must be called on that
 * thread. No function is thread-safe. Callbacks run on the loop thread too.
 *
 * Ownership in one paragraph: the server owns its connections. A request
 * (mcp__http_req) is handed to the owner by on_request once it is complete
 * (headers and body), and from then on it belongs to the owner until the owner
 * *finishes* it with exactly one of mcp__http_respond(), mcp__http_stream_end(),
 * mcp__http_req_abort() or mcp__http_req_release(). After that call the
 * pointer is dangling. A request stays valid, with all its data, even after
 * its connection is gone (client left, timeout, server stop): writes then
 * return MCP_ECLOSED and the owner still has to finish it. A connection's
 * memory is freed only once its handles are closed, never under a callback
 * that may still use it; calling any function here from inside any callback
 * of this layer is safe, finishing the request the callback is about included.
 *
 * Everything that arrives from the network is untrusted: bad input gets a 4xx
 * answer and a closed connection, never an assert.
 */
#ifndef MCP_HTTP_HTTP_H
#define MCP_HTTP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct mcp__http_server mcp__http_server;
typedef struct mcp__http_req mcp__http_req;

typedef enum mcp__http_method {
    MCP__HTTP_GET,
    MCP__HTTP_POST,
    MCP__HTTP_DELETE,
    MCP__HTTP_OPTIONS,
    MCP__HTTP_HEAD,
    MCP__HTTP_PUT,
    MCP__HTTP_PATCH,
    MCP__HTTP_OTHER /* any other method llhttp knows; see mcp__http_req_method_name() */
} mcp__http_method;

/*
 * Called once per request, when the whole request (headers and body) is in.
 * req now belongs to the callee, who must finish it (now or later) with
 * mcp__http_respond(), mcp__http_stream_end(), mcp__http_req_abort() or
 * mcp__http_req_release(). Requests on one connection are handed over strictly
 * in order: the next pipelined request of the same connection is not parsed
 * until this one is finished.
 */
typedef void (*mcp__http_request_fn)(void *user, mcp__http_req *req);
/* See mcp__http_req_on_close(). */
typedef void (*mcp__http_close_fn)(void *arg, mcp__http_req *req);
/* See mcp__http_server_stop(). */
typedef void (*mcp__http_done_fn)(void *arg);

/*
 * Server options. A zeroed struct plus on_request is a valid configuration:
 * every zero means "the default" given in brackets.
 */
typedef struct mcp__http_opts {
    /* IP literal to listen on ("127.0.0.1", "::1", "0.0.0.0", "[::1]"); "localhost"
     * means 127.0.0.1. Borrowed for the duration of the start call. [127.0.0.1] */
    const char *host;
    /* TCP port; 0 picks a free one (see mcp__http_server_port()). */
    int port;
    mcp__http_request_fn on_request; /* required */
    void *user;                      /* passed to on_request */
    /* Request line plus header fields, in bytes; past it: 431 (414 for the
     * request target alone) and close. [16 KiB] */
    size_t max_header_bytes;
    /* Request body, in bytes, checked against Content-Length before the body is
     * read and while a chunked body streams in; past it: 413 and close. [4 MiB] */
    size_t max_body_bytes;
    /* Time from the first byte of a request (or from accept, for a connection's
     * first request) until its headers are complete; then 408 and close. This is
     * a deadline, not an inactivity timer, so trickling bytes does not extend it
     * (slowloris). [10 000 ms] */
    unsigned header_timeout_ms;
    /* Time from the end of the headers until the body is complete; then 408 and
     * close. [30 000 ms] */
    unsigned body_timeout_ms;
    /* Idle time allowed on a keep-alive connection between two requests; then
     * the connection is closed silently. [60 000 ms] */
    unsigned idle_timeout_ms;
    /* Open connections. When they run short, a new connection takes the place
     * of one that has not finished its request headers or sits idle between
     * requests, one of the source that holds the most connections first; only
     * when none is left is it answered 503 and closed. [the process's
     * file-descriptor limit (RLIMIT_NOFILE) less 64 for everything else] */
    unsigned max_connections;
    /* Open connections from one source address; past it: 503. [0: no limit] */
    unsigned max_connections_per_source;
    /* Bytes a connection may have written but not yet handed to its socket (a
     * client that does not read) before its next pipelined request is parsed:
     * past it, the connection is not read on until the socket has taken all but
     * half of it, so answers nobody reads cannot grow memory. A connection that
     * takes nothing of it for idle_timeout_ms is closed. [256 KiB] */
    size_t max_unsent_bytes;
    /* Bytes queued for writing on all connections together (what their sockets have
     * not taken, with the bookkeeping of each queued write): past it, the connections
     * with the largest backlog are cut, one after another, until the total is back
     * under seven eighths of it, so that no number of clients that do not read can
     * make the server hold more (each one's own bound is max_unsent_bytes or its
     * owner's). A cut connection closes at the next loop turn, as after a failed
     * write: its request's on_close runs. [32 MiB] */
    size_t max_queued_total;
    /* HTTPS: the TLS context every new connection uses (see mcp__tls_ctx_load), or
     * NULL for plain HTTP. The server takes a reference of its own. */
    struct ssl_ctx_st *tls;
    /* Time from accept until the TLS handshake is done; then the connection is
     * closed. A deadline, as header_timeout_ms. [10 000 ms] */
    unsigned tls_handshake_timeout_ms;
    /* TLS handshakes in progress at once; past it, the one that has waited longest
     * is closed for the new one. [128] */
    unsigned max_handshakes;
} mcp__http_opts;

/* ---- Server ---- */

/*
 * Binds and starts listening on `loop`, and writes the server to *out. Also sets
 * SIGPIPE to SIG_IGN for the process: a peer that vanishes mid-write must never
 * kill it. opts is copied (host is not kept).
 * Returns MCP_OK; MCP_EINVAL for a missing on_request, a bad host or port;
 * MCP_ENOMEM; MCP_EIO when binding or listening fails (address in use...).
 * On failure *out is NULL and nothing is left to clean up, but a handle that
 * was already initialised is released by its close callback: run the loop
 * before uv_loop_close().
 */
int mcp__http_server_start(uv_loop_t *loop, const mcp__http_opts *opts, mcp__http_server **out);

/*
 * A TLS server context from PEM files: the certificate followed by its chain, and
 * the (unencrypted) private key; TLS 1.2 and 1.3 only, forward-secret AEAD suites,
 * ALPN "http/1.1", no renegotiation. MCP_OK with *out set (free it with
 * mcp__tls_ctx_free); MCP_EINVAL for a missing name; MCP_EIO when a file cannot be
 * read or used, with the reason logged; MCP_ENOMEM.
 */
int mcp__tls_ctx_load(const char *cert_file, const char *key_file, struct ssl_ctx_st **out);
void mcp__tls_ctx_free(struct ssl_ctx_st *ctx);
/* The context new connections use from now on (a reference is taken); connections
 * already open keep theirs, so that nothing is dropped when certificates change. */
void mcp__http_server_set_tls(mcp__http_server *srv, struct ssl_ctx_st *ctx);
/* TLS handshakes in progress now, and those closed so far to make way for newer
 * ones (past opts.max_handshakes). */
size_t mcp__http_server_handshakes(const mcp__http_server *srv, uint64_t *dropped);

/* The port the server is bound to (useful with opts.port 0). */
int mcp__http_server_port(const mcp__http_server *srv);
/* fn(arg) runs before any bytes go to a client's socket (at the end of a loop turn, where
 * output is corked, or at once for a large burst): a store whose writes must reach its
 * server before a client can read of them sends them there. fn NULL: none. */
void mcp__http_server_before_write(mcp__http_server *srv, void (*fn)(void *arg), void *arg);

/* The number of open connections, counting those that are closing. */
size_t mcp__http_server_connections(const mcp__http_server *srv);
/* The connection limit in force (opts.max_connections, or its default). */
size_t mcp__http_server_max_connections(const mcp__http_server *srv);

/*
 * The first half of a graceful stop: every response from now on is the last of
 * its connection ("Connection: close", sent in full, then the connection
 * closes), and connections that wait for a request close now, unless the
 * client already sent bytes of one. New connections are still accepted, each
 * for one request, until mcp__http_server_stop_listening(). empty_cb(arg) runs
 * once, from a later loop turn, when the listener is closed and no connection
 * is left (it may call mcp__http_server_stop()). mcp__http_server_stop() may be
 * called at any time after, to close what remains at once. A second call, or
 * one after stop, does nothing.
 */
void mcp__http_server_quiesce(mcp__http_server *srv, mcp__http_done_fn empty_cb, void *arg);
/* Closes the listening socket (a graceful stop's second half begins). */
void mcp__http_server_stop_listening(mcp__http_server *srv);
/* True once mcp__http_server_quiesce() was called. */
int mcp__http_server_quiescing(const mcp__http_server *srv);
/* True once mcp__http_server_stop() was called (srv is then freed once done_cb ran). */
int mcp__http_server_stopping(const mcp__http_server *srv);

/*
 * Stops listening and closes every connection at once (pending writes are
 * dropped). Requests still in progress see their on_close callback run, from
 * inside this call; they stay valid until their owner finishes them. When every
 * handle is closed, the server's memory is freed and done_cb(arg) runs (from a
 * later loop iteration; done_cb may be NULL). srv must not be used after this
 * call. Calling it twice is a no-op the second time.
 */
void mcp__http_server_stop(mcp__http_server *srv, mcp__http_done_fn done_cb, void *arg);

/* ---- Request: what arrived (all strings owned by req, valid until it is finished) ---- */

mcp__http_method mcp__http_req_method(const mcp__http_req *req);
/* "GET", "POST", "M-SEARCH", ... (a static string). */
const char *mcp__http_req_method_name(const mcp__http_req *req);
/*
 * The path of the request target, as sent (no percent-decoding); for an
 * absolute-form target ("http://host/x?y") the path of it ("/x"). "*" for
 * "OPTIONS *".
 */
const char *mcp__http_req_path(const mcp__http_req *req);
/* The query after '?', without the '?'; NULL when the target had no '?'. */
const char *mcp__http_req_query(const mcp__http_req *req);
/*
 * The value of the first header called `name` (case-insensitive), with
 * surrounding whitespace removed, or NULL. Repeated headers: see
 * mcp__http_header_at().
 */
const char *mcp__http_header(const mcp__http_req *req, const char *name);
/* The number of header fields, repeated ones counted each time. */
size_t mcp__http_header_count(const mcp__http_req *req);
/*
 * The i-th header field in arrival order: its lowercased name and its value.
 * Returns MCP_OK, or MCP_ENOENT when i is out of range.
 */
int mcp__http_header_at(const mcp__http_req *req, size_t i, const char **name, const char **value);
/*
 * The body, decoded from chunked transfer coding if it was sent so. Always
 * NUL-terminated (an extra byte not counted in *len), "" when there is none.
 * len may be NULL.
 */
const char *mcp__http_req_body(const mcp__http_req *req, size_t *len);
/* The client's address ("127.0.0.1", "::1"), "" when unknown or gone. */
const char *mcp__http_req_source(const mcp__http_req *req);
/* 10 for HTTP/1.0, 11 for HTTP/1.1. */
int mcp__http_req_version(const mcp__http_req *req);
/* True when the connection may carry another request after this one's response. */
int mcp__http_req_keep_alive(const mcp__http_req *req);
/* True once the request's connection is gone (writes return MCP_ECLOSED). */
int mcp__http_req_closed(const mcp__http_req *req);
/* A pointer the owner attaches to req (what an earlier stage learnt of it, such as
 * who it acts for); drop(tag) runs when req is freed, or when another tag replaces
 * it. */
void mcp__http_req_set_tag(mcp__http_req *req, void *tag, void (*drop)(void *tag));
void *mcp__http_req_tag(const mcp__http_req *req);
/* A pointer the owner keeps on req's connection for its next requests (what it learnt
 * of the client once, such as a checked credential): drop(memo) runs when the
 * connection closes, or when another memo replaces it. The get answers NULL when
 * there is none or the connection is gone; the set does nothing then but drop(memo). */
void mcp__http_req_set_conn_memo(mcp__http_req *req, void *memo, void (*drop)(void *memo));
void *mcp__http_req_conn_memo(const mcp__http_req *req);

/*
 * Asks for cb(arg, req) to run once if the connection of this request closes
 * while the request is still in progress: client gone (EOF, reset, write
 * error), server stop. It does not run for a request the owner finishes first,
 * nor for mcp__http_req_abort(). cb may finish req (it must, eventually, as
 * always). A later call replaces the callback; cb NULL removes it. If the
 * connection is already gone when this is called, cb is not called: check
 * mcp__http_req_closed().
 * Note that a client that half-closes its side (shutdown(SHUT_WR)) after its
 * request counts as gone: a client that drops sends the same FIN, and HTTP
 * clients do not half-close in practice.
 */
void mcp__http_req_on_close(mcp__http_req *req, mcp__http_close_fn cb, void *arg);

/* ---- Responses ---- */

/*
 * Headers given to the calls below are a NULL-terminated array of name, value
 * pairs: (const char *[]){"Content-Type", "application/json", NULL}; NULL for
 * none. They are copied. Names and values must hold no CR, LF or NUL, and the
 * layer owns the framing headers: Content-Length, Transfer-Encoding and
 * Connection are refused (MCP_EINVAL). The layer adds Date, the framing
 * headers, and "Connection: close" when the connection will close after this
 * response.
 *
 * Writing never blocks: what the socket does not take at once (uv_try_write)
 * is queued, see mcp__http_stream_queued().
 */

/*
 * Sends a complete response with `len` bytes of `body` (copied if it has to be
 * queued; may be NULL when len is 0) and finishes req. A HEAD request gets the
 * Content-Length of the body but not the body; 204 and 304 get neither.
 * Returns MCP_OK; MCP_ECLOSED when the connection is already gone; MCP_ENOMEM
 * (the connection is then closed). req is finished in those three cases.
 * Returns MCP_EINVAL (status outside 200..999, a bad header, a body of 4 GiB
 * or more) or MCP_ESTATE (a stream was begun) without touching or finishing req.
 */
int mcp__http_respond(mcp__http_req *req, int status, const char *const *headers, const void *body,
                      size_t len);

/*
 * Starts a streamed response (for SSE): status line and headers now, body
 * later in pieces. HTTP/1.1 uses chunked transfer coding; HTTP/1.0 clients get
 * a body delimited by closing the connection. req is not finished.
 * Returns MCP_OK, MCP_ECLOSED (connection gone; req must still be finished),
 * MCP_ENOMEM, or MCP_EINVAL / MCP_ESTATE as for mcp__http_respond() (nothing
 * sent).
 */
int mcp__http_stream_begin(mcp__http_req *req, int status, const char *const *headers);

/*
 * Sends `len` bytes as one chunk. len 0 sends nothing, and so does any write to
 * a HEAD request. Data is copied when it has to be queued. Returns MCP_OK,
 * MCP_ECLOSED after the client left (the data is dropped), MCP_ENOMEM, or
 * MCP_ESTATE when no stream was begun.
 */
int mcp__http_stream_write(mcp__http_req *req, const void *data, size_t len);

/*
 * Ends the stream cleanly (the last, empty chunk; or the close for HTTP/1.0)
 * and finishes req. Returns MCP_OK or MCP_ECLOSED (req is finished either
 * way), or MCP_ESTATE without finishing req when no stream was begun.
 */
int mcp__http_stream_end(mcp__http_req *req);

/*
 * Bytes written on req's connection but not yet taken by the socket: the
 * transport bounds slow readers with it (and aborts past its limit). 0 once
 * the connection is gone.
 */
size_t mcp__http_stream_queued(const mcp__http_req *req);

/* Bytes sent on req's connection that the client's TCP has not acknowledged yet
 * (the kernel's send queue); SIZE_MAX when unknown, or once the connection is
 * reset, closing or gone (what was sent may never have been read). */
size_t mcp__http_req_unacked(const mcp__http_req *req);
/*
 * True when the client has taken everything sent on req's connection: nothing
 * is queued, its TCP acknowledged every byte, and its receive window is about as
 * large as it has ever been, or has not changed for half a second (its
 * application read what its kernel held, as far as TCP shows; where the kernel
 * does not say, the acknowledgement alone).
 */
int mcp__http_req_caught_up(mcp__http_req *req);
/* Bytes of req's connection the client's TCP has acknowledged so far (all of
 * them, responses before req's included): growing while the client reads. 0 once
 * the connection is gone or where the system does not say. */
uint64_t mcp__http_req_acked(const mcp__http_req *req);

/*
 * Asks for cb(arg, req) to run once, from the loop, when req's connection has no
 * more than `below` bytes left unsent (see mcp__http_stream_queued()); it runs at
 * the next loop turn if that is already so. `below` 0 asks for more: that the
 * client has caught up (mcp__http_req_caught_up), which is polled, from every 1 ms
 * up to every second (with a probe, see mcp__http_req_set_probe). One-shot: a later
 * call replaces it,
 * cb NULL removes it. It does not run once the connection is gone (on_close runs
 * instead). cb may call any function here, finishing req included.
 */
void mcp__http_req_on_drain(mcp__http_req *req, size_t below, mcp__http_close_fn cb, void *arg);
/*
 * A streaming response's probe: bytes its client ignores (an SSE comment), written
 * once while a `below` 0 drain waits with everything acknowledged but the client's
 * receive window not seen open again. A receiver tells of a window it opened only when
 * it grew much: the probe's acknowledgement tells it, in a poll or two rather than the
 * half second of mcp__http_req_caught_up. bytes are borrowed for req's life (a literal).
 */
void mcp__http_req_set_probe(mcp__http_req *req, const char *bytes, size_t len);

/*
 * Caps the kernel's send buffer of req's connection at about `bytes` (SO_SNDBUF,
 * which Linux doubles for its bookkeeping; the buffer no longer grows by itself):
 * for a stream that only carries occasional notifications, whose client may not
 * read, so that what the kernel holds for it stays small too (otherwise up to
 * net.ipv4.tcp_wmem's maximum, 4 MiB by default, a socket). What the socket does
 * not take is queued and counted (mcp__http_stream_queued, max_queued_total).
 * The cap stays for the connection's later requests. Nothing happens once the
 * connection is gone.
 */
void mcp__http_req_limit_sndbuf(mcp__http_req *req, int bytes);

/*
 * Closes req's connection now, without a clean end (queued bytes are dropped),
 * and finishes req. Used to end an SSE stream server-side so the client
 * reconnects, and to drop slow readers. on_close does not run.
 */
void mcp__http_req_abort(mcp__http_req *req);

/*
 * What req's connection has been given to write this turn (a stream's head and first
 * event, say) waits up to ms more for what usually follows at once (the answer), so
 * that both go out in one write: anything more written to the connection, or the
 * deadline, sends it. Nothing happens when nothing is waiting to be written.
 */
void mcp__http_req_hold(mcp__http_req *req, unsigned ms);

/*
 * Finishes req without answering it, typically after its connection is gone
 * (from or after on_close). If the connection is still open, the client is
 * still waiting for an answer that will not come, so this closes it, as
 * mcp__http_req_abort() does.
 */
void mcp__http_req_release(mcp__http_req *req);

/* The reason phrase of a status code ("Not Found"), "Unknown" for others. */
const char *mcp__http_status_reason(int status);

/* ---- Header fields a server reads (fields.c) ---- */

/*
 * True when the Accept header value lets `type` ("text/event-stream") through:
 * a media range equal to it, or a wildcard range covering it, without q=0.
 */
int mcp__accepts(const char *accept, const char *type);
/* True when a Content-Type value's media type (parameters ignored) is `type`. */
int mcp__media_type_is(const char *content_type, const char *type);

/*
 * Copies the host name of a Host header value ("example.com:8080",
 * "[::1]:3000") into out, lowercased and without the port; IPv6 keeps its
 * brackets. Returns 0, or -1 for a malformed value.
 */
int mcp__host_name(const char *host, char *out, size_t out_len);
/* The same for the host of an Origin value ("http://localhost:3000"). "null" is malformed. */
int mcp__origin_host(const char *origin, char *out, size_t out_len);
/* True for localhost, 127.0.0.1 and [::1]. */
int mcp__is_loopback_name(const char *host_name);

#endif
