/* SPDX-License-Identifier: MIT */
/*
 * A raw HTTP/1.1 + SSE client for the resumability tests (test_resume_*.c),
 * over real 127.0.0.1 sockets.
 *
 * It differs from http_client.h where those tests need more: every SSE field
 * of a block is kept (id, event, data, retry) so priming events can be told
 * apart from messages; the end of a body says whether it was clean (chunked
 * terminator) or a cut (the server closed or reset the socket); the receive
 * buffer can be made small before connecting, so that a client that does not
 * read makes the server's queue grow; and a connection can be abandoned with
 * a close or a reset at any point. The server process itself is run with
 * hc_server_start() from http_client.h.
 *
 * Every wait has a deadline; nothing sleeps to synchronise. The functions are
 * thread-safe as long as each connection is used by one thread.
 */
#ifndef MCP_TESTS_INTEGRATION_RESUME_CLIENT_H
#define MCP_TESTS_INTEGRATION_RESUME_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "http_client.h"

/* One SSE block, as the library's parser reads it (see hc_sse_event). */
typedef struct rc_event {
    char *id;    /* the id field of this block, or NULL */
    char *event; /* the event type, or NULL for the default, "message" */
    char *data;  /* data lines joined with \n, or NULL when the block had no data line */
    long retry;  /* the retry field, or -1 */
    int comment; /* 1 when the block held only comment lines (a keep-alive) */
} rc_event;

void rc_event_free(rc_event *ev);
/* 1 for a priming event: an id and no data, or only empty data. */
int rc_event_is_priming(const rc_event *ev);

typedef struct rc_header {
    char *name;
    char *value;
} rc_header;

typedef struct rc_conn {
    int fd;     /* -1 when closed */
    int status; /* the HTTP status, 0 until the head is read */
    rc_header *headers;
    size_t n_headers;
    char *in; /* raw bytes not yet decoded */
    size_t in_len, in_cap;
    char *body; /* decoded body bytes not yet consumed (NUL-terminated) */
    size_t body_len, body_cap;
    int framing;             /* RC_FRAMING_* */
    unsigned long long left; /* Content-Length left, or bytes left in this chunk */
    int chunk_phase;         /* where the chunked decoder is */
    int done;           /* the body ended properly (chunked terminator or full Content-Length) */
    int eof;            /* the server closed the connection */
    int reset;          /* ... and it was a reset */
    hc_sse_reader *sse; /* the body's event stream, once read as one */
} rc_conn;

enum { RC_FRAMING_NONE, RC_FRAMING_LENGTH, RC_FRAMING_CHUNKED, RC_FRAMING_CLOSE };

/* Monotonic milliseconds. */
long long rc_now_ms(void);

/*
 * Connects to 127.0.0.1:port within timeout_ms; rcvbuf > 0 sets SO_RCVBUF
 * first (so the window stays small). Returns 0 or -1.
 */
int rc_connect(rc_conn *c, int port, int rcvbuf, int timeout_ms);
/* Closes the socket (FIN) and frees everything; may be called again. */
void rc_close(rc_conn *c);
/* Aborts the connection (RST) and frees everything. */
void rc_reset(rc_conn *c);
/*
 * Sends "METHOD /mcp HTTP/1.1", Host, the header lines (each ending in \r\n,
 * may be NULL), Content-Length when body is not NULL, and the body.
 */
int rc_send_request(rc_conn *c, int port, const char *method, const char *headers, const char *body,
                    int timeout_ms);
/* Reads the status line and headers. Returns 0, or -1 (timeout, close, bad head). */
int rc_read_head(rc_conn *c, int timeout_ms);
/* The first header called name (case-insensitive), or NULL. */
const char *rc_header_get(const rc_conn *c, const char *name);
/* Reads the rest of a (non-SSE) body into c->body. Returns 0 or -1. */
int rc_read_body(rc_conn *c, int timeout_ms);

/*
 * The next SSE block within timeout_ms, keep-alive comments included.
 * Returns 1 with *ev filled; 0 when the body ended (c->done: cleanly;
 * otherwise c->eof: the server closed or reset the socket first); -1 on
 * timeout or error.
 */
int rc_next(rc_conn *c, rc_event *ev, int timeout_ms);
/* Like rc_next, but skips comment-only blocks. */
int rc_next_event(rc_conn *c, rc_event *ev, int timeout_ms);
/* Takes whatever the socket has without waiting. Returns 0, or -1 on error. */
int rc_pump(rc_conn *c);
/* The next complete SSE block already received, without any I/O: 1 or 0. */
int rc_take(rc_conn *c, rc_event *ev);

/* ---- MCP over HTTP ---- */

/*
 * Connects, POSTs body to /mcp (with the MCP Accept and Content-Type headers
 * and Mcp-Session-Id when session is not NULL) and reads the head. Returns
 * the HTTP status, or -1.
 */
int rc_post(rc_conn *c, int port, const char *session, const char *body, int rcvbuf,
            int timeout_ms);
/*
 * Connects and sends GET /mcp with Accept: text/event-stream, the session and
 * Last-Event-ID when last_id is not NULL, and reads the head. Returns the
 * HTTP status, or -1.
 */
int rc_get(rc_conn *c, int port, const char *session, const char *last_id, int timeout_ms);

/* The seq part of an event id <tag>-<stream>-<seq>, or -1. */
long long rc_id_seq(const char *id);
/* The stream part of an event id, or -1. */
long long rc_id_stream(const char *id);
/*
 * N for a notifications/message whose data is "notification N", else -1.
 */
long long rc_notification_number(const json_t *msg);
/* 1 when msg is a response (no method) with the integer id. */
int rc_is_response(const json_t *msg, long long id);
/* The text of result.content[0] of a response, or NULL. Borrowed. */
const char *rc_result_text(const json_t *msg);
/* A tools/call body (malloc'd): id, tool, arguments JSON (NULL: {}), progress token (may be NULL).
 */
char *rc_call_body(long long id, const char *tool, const char *args_json, const char *token);

/*
 * Waits until the server's stderr holds needle at least count times.
 * Returns how many times it does, or -1 when fewer by the deadline.
 */
int rc_wait_stderr(hc_server *s, const char *needle, int count, int timeout_ms);

/* ---- Following one tool call across its streams ---- */

/*
 * What a test has seen of one tools/call so far, across its POST stream and
 * the GET streams that resume it. The call is expected to send numbered
 * messages first (notifications/message "notification N" or
 * notifications/progress with progress N, N = 1, 2, ...), each exactly once
 * and in order, then its response; every event id must be greater than the
 * one before (ids of one session share a counter).
 */
typedef struct rc_call {
    long long req_id; /* the JSON-RPC id of the call */
    long long expect; /* how many numbered messages precede the result, -1: unchecked */
    long long next;   /* the number expected next (starts at 1) */
    int got_result;
    json_t *result; /* the response, once seen */
    char *last_id;  /* the id of the last event processed, or NULL */
    long long last_seq;
    long long primings; /* priming events seen */
    long retry;         /* the last retry field seen, -1 when none */
    long long events;   /* events with data processed */
    char err[600];      /* the first failure, "" while none */
} rc_call;

void rc_call_init(rc_call *call, long long req_id, long long expect);
void rc_call_free(rc_call *call);
/*
 * Checks and records one event (keep-alive comments are ignored). Returns 1
 * when it was the response, 0 when it was fine, -1 on a failure (call->err).
 */
int rc_call_feed(rc_call *call, const rc_event *ev);
/*
 * Reads c and feeds call until the response (returns 1), the end of the body
 * (0), a failure (-2, call->err) or timeout (-1), processing at most
 * max_events events with data or ids (<= 0: no limit; then returns 2 when
 * the limit was reached first).
 */
int rc_call_read(rc_conn *c, rc_call *call, int max_events, int timeout_ms);

/* Waits ms milliseconds: only to honour a retry interval, as a client would. */
void rc_wait_retry(long ms);

#endif
