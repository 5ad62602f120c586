/* SPDX-License-Identifier: MIT */
/*
 * A scriptable raw HTTP/1.1 server for the client tests (test_http_client*.c),
 * on 127.0.0.1 and a free port, with plain threads and sockets: an accepting
 * thread, and one thread per connection that reads each request (head and
 * Content-Length body), records it, and hands it to the test's handler, which
 * answers it byte by byte as the test wants (a JSON body, an SSE stream that
 * ends early, a stream trickled one byte at a time, an error status, a cut).
 * Connections are kept alive between requests unless the handler closes them.
 *
 * Every request is kept, in arrival order, with its method, path, headers,
 * body (parsed as JSON when it is) and the time its head was complete, so
 * that tests assert what the client sent and when. Every wait has a deadline;
 * the only pauses are the handler's own (rs_pause, to play a slow server),
 * and rs_stop() ends them at once.
 */
#ifndef MCP_TESTS_INTEGRATION_RAW_SERVER_H
#define MCP_TESTS_INTEGRATION_RAW_SERVER_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

#include "http_client.h"

/* One request as the server read it. Owned by the server until rs_stop(). */
typedef struct rs_request {
    int seq;      /* 1 for the first request the server read, then 2, ... */
    int conn;     /* the connection it came on: 1 for the first accepted */
    char *method; /* "POST", "GET", "DELETE", ... */
    char *path;   /* the request target, "/mcp" say */
    hc_header *headers;
    size_t n_headers;
    char *body; /* NUL-terminated; "" when none */
    size_t body_len;
    json_t *msg;     /* the body parsed as JSON, or NULL */
    long long at_ms; /* when its head was complete (hc_now_ms clock) */
    /* When the handler had answered it (its last byte written, or the connection
     * cut): 0 until then. Read it after rs_wait_done(). */
    long long done_ms;
} rs_request;

typedef struct rs_server rs_server;
typedef struct rs_conn rs_conn;

/*
 * Answers req on c. Runs on the connection's thread and may block (pause,
 * trickle, wait for the client to close); one request per connection at a
 * time. user is the pointer given to rs_start(). req is borrowed until
 * rs_stop().
 */
typedef void (*rs_handler)(rs_conn *c, const rs_request *req, void *user);

/* Starts a server on 127.0.0.1, port 0. Returns 0 (*out set) or -1. */
int rs_start(rs_server **out, rs_handler fn, void *user);
int rs_port(const rs_server *s);
/* "http://127.0.0.1:PORT/mcp" into buf (at least 64 bytes). */
void rs_url(const rs_server *s, char *buf, size_t size);
/* Closes every connection, ends the handlers' pauses and waits, joins every
 * thread and frees everything. s may be NULL. */
void rs_stop(rs_server *s);

/* ---- What the server saw (any thread) ---- */

/* How many requests of method (NULL: any) were read so far. */
size_t rs_count(rs_server *s, const char *method);
/* The i-th (from 0) request of method (NULL: any), or NULL. */
const rs_request *rs_nth(rs_server *s, const char *method, size_t i);
/* Waits until n requests of method (NULL: any) were read. 0, or -1 at the deadline. */
int rs_wait(rs_server *s, const char *method, size_t n, int timeout_ms);
/* Waits until the handler of req is done with it (done_ms set). 0 or -1. */
int rs_wait_done(rs_server *s, const rs_request *req, int timeout_ms);
/* The first header called name (case-insensitive), or NULL. */
const char *rs_header(const rs_request *req, const char *name);
/* The JSON-RPC method of the request's body, or NULL. */
const char *rs_rpc_method(const rs_request *req);
/* 1 for a POST of tools/call naming tool. */
int rs_is_call(const rs_request *req, const char *tool);

/* ---- Answering (the handler, on its connection) ---- */

/* Writes all of data. 0, or -1 when the client is gone or the server stops. */
int rs_write(rs_conn *c, const char *data, size_t len);
/* A whole response: status, the header lines (each ending in \r\n, may be NULL),
 * Content-Length and body (may be NULL: empty). */
int rs_respond(rs_conn *c, int status, const char *headers, const char *body);
/* The head of a chunked text/event-stream response with status 200. */
int rs_sse_head(rs_conn *c, const char *headers);
/* text as one chunk. */
int rs_chunk(rs_conn *c, const char *text);
/* text one byte per chunk, gap_ms apart. */
int rs_chunk_trickle(rs_conn *c, const char *text, int gap_ms);
/* The last chunk: the response ends cleanly. */
int rs_sse_end(rs_conn *c);
/* One SSE event as a chunk: "id: <id>" when id is not NULL, "retry: <retry>"
 * when retry >= 0, "data: <data>" when data is not NULL. */
int rs_sse_event(rs_conn *c, const char *id, long retry, const char *data);
/* The connection is closed (FIN) once the handler returns, or reset (RST). */
void rs_close_after(rs_conn *c);
void rs_reset_after(rs_conn *c);
/* Waits ms, or less when the server stops (then -1). */
int rs_pause(rs_conn *c, int ms);
/* Waits until the client closes the connection (0), or -1 at the deadline or
 * when the server stops. Whatever the client sends meanwhile is dropped. */
int rs_wait_peer_close(rs_conn *c, int timeout_ms);

/* ---- MCP ---- */

/* The session id rs_mcp_basic gives. */
#define RS_SESSION "raw-session-1"

/*
 * Answers what every MCP test server answers the same way and returns 1, or
 * returns 0 for the test to answer: initialize (200 JSON, protocol version
 * 2025-11-25, Mcp-Session-Id RS_SESSION), notifications and responses (202),
 * DELETE (200), and a GET without Last-Event-ID (the standalone stream: 405).
 */
int rs_mcp_basic(rs_conn *c, const rs_request *req);
/* The answer rs_mcp_basic gives to initialize, with session (any bytes) as its
 * Mcp-Session-Id. 0 or -1. */
int rs_mcp_initialize(rs_conn *c, const rs_request *req, const char *session);
/* A JSON-RPC response text {"jsonrpc":"2.0","id":<id of req>,"result":<result>}
 * (malloc'd), with result a tools/call result holding text. */
char *rs_call_result(const rs_request *req, const char *text);
/* An SSE data line's text for a notifications/message whose data is text (malloc'd). */
char *rs_log_message(const char *text);

/* ---- Plumbing, shared with tcp_proxy.c ---- */

/*
 * A listening socket on 127.0.0.1 (a free port) and a thread that accepts on
 * it and hands each connection (TCP_NODELAY set) to on_accept, on that thread.
 * wake[0] becomes readable once rs_listener_stop() is called: the threads of
 * the connections watch it in their polls, so that none waits past the stop.
 */
typedef struct rs_listener {
    int fd;
    int port;
    int wake[2];
    pthread_t thread;
    void (*on_accept)(void *user, int fd);
    void *user;
} rs_listener;

int rs_listener_start(rs_listener *l, void (*on_accept)(void *user, int fd), void *user);
/* Wakes every poll on wake[0] and joins the accepting thread. */
void rs_listener_stop(rs_listener *l);
/* Closes the sockets, after the connections' threads are joined. */
void rs_listener_close(rs_listener *l);

#endif
