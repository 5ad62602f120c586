/* SPDX-License-Identifier: MIT */
/*
 * Private to src/http/: the structures behind the opaque types of http.h and
 * the functions the files of this layer share.
 */
#ifndef MCP_HTTP_HTTP_INT_H
#define MCP_HTTP_HTTP_INT_H

#include <llhttp.h>

#include "http/http.h"

#define MCP__HTTP_READ_BUF (64 * 1024)
/* Connections accepted in one loop turn, at most (see accept_later). */
#define MCP__HTTP_ACCEPTS_PER_TURN 64
/* Plaintext out of one SSL_read, at most: one TLS record's. */
#define MCP__HTTP_TLS_BUF (16 * 1024)

typedef struct mcp__http_conn mcp__http_conn;

/* A peer address and how many open connections it has. */
typedef struct mcp__http_source {
    size_t conns;
    size_t handshakes; /* of those, in their TLS handshake */
    char addr[48];
} mcp__http_source;

/* What a connection's timer is counting down to; see conn.c. */
typedef enum conn_phase {
    PHASE_FIRST,   /* accepted, waiting for the first request (header timeout) */
    PHASE_IDLE,    /* keep-alive, between requests (idle timeout) */
    PHASE_HEADERS, /* a request has begun, headers not complete (header deadline) */
    PHASE_BODY,    /* headers complete, body not (body deadline) */
    PHASE_BUSY,    /* a request is with its owner (no timer) */
    PHASE_NEXT,    /* the owner finished; go on with buffered input (0 ms timer) */
    PHASE_DRAIN,   /* finished, but too much output unsent: wait for the socket */
    PHASE_LINGER   /* final response sent, write side shut, discarding input */
} conn_phase;

struct mcp__http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    mcp__http_opts opts; /* defaults filled in; host not kept */
    int port;
    int stopping;
    int listener_open;
    int listener_closing;
    /* mcp__http_server_quiesce(): no new connection, none kept alive. */
    int quiescing;
    mcp__http_done_fn quiesced_cb;
    void *quiesced_arg;
    size_t nconns;   /* connections not yet freed */
    size_t nclosing; /* of those, the ones closing (their fd is closed already) */
    size_t nrefused; /* refused sockets whose handle is still closing */
    size_t backlog;  /* queued bytes of the connections not cut (see max_queued_total) */
    mcp__http_conn *conns;
    mcp__http_done_fn done_cb;
    void *done_arg;
    llhttp_settings_t settings;
    time_t date_time;
    char date[40];
    /* Output corking: what a connection is given to write during one loop turn is
     * sent in one write from a check handle at the end of that turn, so a response
     * made of a head and several chunks costs one system call, not four. */
    uv_check_t flush;
    uv_prepare_t flush_prep;
    /* Flushes connections held back (mcp__http_req_hold) when their time is up. */
    uv_timer_t hold;
    mcp__uv_group timers; /* flush, flush_prep, trim, hold, accept_later */
    /* Accepting takes turns with the rest: at most MCP__HTTP_ACCEPTS_PER_TURN
     * connections are taken in one loop turn; the next one waits in libuv (which stops
     * watching the listener meanwhile) and is taken once the turn's other I/O is done
     * (accept_later, a check handle). */
    uv_check_t accept_later;
    int accept_held;      /* a connection waits to be taken */
    unsigned accepted;    /* taken in the turn of accept_turn */
    uint64_t accept_turn; /* the loop time of that turn */
    /* Gives freed memory back to the system once a burst is over (see util/mem.c). */
    uv_timer_t trim;
    mcp__http_conn *dirty;
    void (*before_write)(void *arg); /* mcp__http_server_before_write */
    void *before_write_arg;
    mcp__map sources;               /* source address -> mcp__http_source */
    struct ssl_ctx_st *tls;         /* HTTPS (a reference of ours), or NULL; see tls.c */
    size_t nhandshakes;             /* connections in their TLS handshake */
    uint64_t handshakes_dropped;    /* given way to newer ones past opts.max_handshakes */
    char rbuf[MCP__HTTP_READ_BUF];  /* shared: every read is consumed before the next */
    char tlsbuf[MCP__HTTP_TLS_BUF]; /* shared likewise: plaintext out of SSL_read */
};

struct mcp__http_conn {
    uv_tcp_t tcp; /* first: tcp.data is the conn as well */
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    llhttp_t parser;
    mcp__http_server *srv;
    mcp__http_conn *prev, *next;
    conn_phase phase;
    int open_handles;      /* tcp and timer; the conn is freed when both are closed */
    unsigned closing : 1;  /* uv_close was called */
    unsigned broken : 1;   /* a write failed; close at the next loop turn */
    unsigned reading : 1;  /* uv_read_start is in effect */
    unsigned no_more : 1;  /* no further request on this connection */
    unsigned msg_done : 1; /* the parser completed the current request */
    mcp__http_req *req;    /* being received, or with its owner */
    mcp__buf in;           /* received bytes not parsed yet (pipelined) */
    mcp__buf spare_hdrs;   /* the last request's header buffer, for the next (see req_free) */
    void *memo;            /* see mcp__http_req_set_conn_memo */
    void (*memo_drop)(void *memo);
    mcp__buf out; /* bytes to send at the end of this loop turn */
    mcp__http_conn *dirty_next;
    unsigned dirty : 1;              /* listed in srv->dirty */
    uint64_t hold_until;             /* loop time its corked bytes may wait till; 0: none */
    size_t header_bytes;             /* of the request being received */
    int err_status;                  /* a limit we enforce in a parser callback */
    size_t cur_name;                 /* offset in req->hdrs of the header being parsed */
    int in_value;                    /* that header's value has begun */
    unsigned ack_poll_ms;            /* see mcp__http_req_on_drain(): the next poll's delay */
    unsigned probed : 1;             /* this drain's probe went (mcp__http_req_set_probe) */
    struct mcp__http_source *source; /* the peer's address and its count, or NULL */
    uint64_t to_kernel;              /* bytes the socket has taken so far */
    size_t backlog;                  /* its queued writes' bytes (with their bookkeeping) */
    uint64_t progress_ms;            /* loop time its backlog began, or the kernel last took some */
    unsigned backlog_gone : 1;       /* no longer in srv->backlog: cut or closing */
    unsigned reset : 1;              /* closed with a reset: nothing it holds is sent */
    uint32_t max_peer_window;        /* the largest receive window the client advertised */
    uint32_t last_window;            /* the window at the last look, and since when */
    uint64_t window_since;
    struct ssl_st *ssl;       /* HTTPS: the connection's TLS, or NULL */
    unsigned handshaking : 1; /* its handshake is not done (counted in srv->nhandshakes) */
};

typedef struct mcp__http_hdr {
    size_t name, value; /* offsets into req->hdrs */
} mcp__http_hdr;

typedef enum req_state {
    REQ_RECEIVING, /* still being parsed; owned by the conn */
    REQ_OWNED,     /* handed to the owner, nothing sent */
    REQ_STREAMING  /* stream begun */
} req_state;

struct mcp__http_req {
    mcp__http_conn *conn; /* NULL once the connection is gone */
    req_state state;
    mcp__http_method method;
    const char *method_name;
    int version; /* 10, 11 */
    int keep_alive;
    int chunked_out; /* streaming with chunked coding */
    mcp__buf target; /* request target; split into path \0 query */
    const char *path;
    const char *query;
    mcp__buf hdrs; /* name \0 value \0 ... */
    mcp__http_hdr *hdr;
    size_t nhdr, caphdr;
    mcp__buf body;
    mcp__http_close_fn on_close;
    void *on_close_arg;
    mcp__http_close_fn on_drain; /* see mcp__http_req_on_drain() */
    void *on_drain_arg;
    const char *probe; /* see mcp__http_req_set_probe() */
    size_t probe_len;
    size_t drain_below;
    void *tag; /* see mcp__http_req_set_tag() */
    void (*tag_drop)(void *tag);
};

/* conn.c */
/* Plaintext from the client (what a plain connection reads, what TLS decrypts). */
void mcp__http_conn_input(mcp__http_conn *c, const char *data, size_t len);
/* True when bytes of the client wait to be read or parsed on c. */
int mcp__http_conn_has_input(mcp__http_conn *c);
/* Starts (or restarts) c's timer for ms; see conn_phase. */
void mcp__http_conn_timer_set(mcp__http_conn *c, uint64_t ms);
void mcp__http_on_connection(uv_stream_t *listener, int status);
/* The accept_later check handle's callback. */
void mcp__http_accept_later(uv_check_t *h);
void mcp__http_conn_close(mcp__http_conn *c);
/* Marks c broken after a failed write and closes it at the next loop turn. */
void mcp__http_conn_break(mcp__http_conn *c);
void mcp__http_settings_init(llhttp_settings_t *s);
/* After the final response: shut the write side, discard input, then close. */
void mcp__http_conn_linger(mcp__http_conn *c);
/* Detaches req from its connection and frees it; the connection goes on with
 * its next request, or closes when close_after is set or keep-alive is off. */
void mcp__http_req_finish(mcp__http_req *req, int close_after);
void mcp__http_req_free(mcp__http_req *req);
void mcp__http_server_maybe_done(mcp__http_server *srv);
const char *mcp__http_date(mcp__http_server *srv);

/* A write of c completed: the drain checks (DRAIN phase, the request's on_drain). */
void mcp__http_conn_wrote(mcp__http_conn *c);
/* Bytes c was given to send that the socket has not taken: corked and queued. */
size_t mcp__http_conn_unsent(const mcp__http_conn *c);
/* A write of `bytes` was queued on c (grow) or is done with (shrink): the server's
 * total, and the cuts past its budget (max_queued_total). */
void mcp__http_backlog_grow(mcp__http_conn *c, size_t bytes);
void mcp__http_backlog_shrink(mcp__http_conn *c, size_t bytes);

/* response.c */
/* Writes bytes to c's socket as they are (a plain connection's data, TLS records):
 * try_write first, the rest copied and queued. As mcp__http_conn_write. */
int mcp__http_conn_send_raw(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n);
/* Writes bufs in order: try_write first, the rest copied and queued. MCP_OK,
 * MCP_ECLOSED (nothing written), MCP_ENOMEM (the connection is marked broken). */
int mcp__http_conn_write(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n);
/* Sends what c has corked now (before a shutdown, say). */
void mcp__http_conn_flush(mcp__http_conn *c);
/* Forgets c's corked bytes and takes it off the dirty list (c is closing). */
void mcp__http_conn_uncork(mcp__http_conn *c);
/* The check callback that flushes every dirty connection. */
void mcp__http_flush_all(uv_check_t *h);
void mcp__http_flush_prepared(uv_prepare_t *h);
/* The hold timer's callback: flushes what waited long enough, and what did not wait. */
void mcp__http_flush_held(uv_timer_t *h);
/* An error answer from the layer itself, then a lingering close. */
void mcp__http_conn_fail(mcp__http_conn *c, int status);

/* tls.c */
/* A TLS connection begins: its SSL object, the handshake counted and bounded. */
int mcp__tls_conn_start(mcp__http_conn *c);
/* Bytes from the socket: the handshake goes on, or the plaintext goes to
 * mcp__http_conn_input. A TLS error closes c. */
void mcp__tls_conn_input(mcp__http_conn *c, const char *data, size_t len);
/* Encrypts bufs and sends the records (mcp__http_conn_send_raw). */
int mcp__tls_conn_send(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n);
/* Sends close_notify (before the write side is shut). */
void mcp__tls_conn_shutdown(mcp__http_conn *c);
/* c closes: its handshake, if under way, no longer counts. */
void mcp__tls_conn_closed(mcp__http_conn *c);
/* c's handles are closed: its SSL object goes. */
void mcp__tls_conn_free(mcp__http_conn *c);

#endif
