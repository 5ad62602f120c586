/* SPDX-License-Identifier: MIT */
/*
 * A Streamable HTTP server for the fuzz targets, driven one loop turn at a time.
 *
 * mcp_serve_http() runs on a thread of its own with a real listening socket on
 * 127.0.0.1, but its loop never runs by itself: the fuzz targets are linked
 * with -Wl,--wrap=uv_run, and on that thread uv_run(UV_RUN_DEFAULT) becomes a
 * loop that runs one UV_RUN_NOWAIT turn each time fz_step() asks for one. The
 * fuzz thread is the client: it writes an input's bytes to real sockets, then
 * turns the server's loop until no more output comes, so that the server sees
 * the same bytes in the same order on every run of an input (all handlers of
 * the fuzz server are inline: no worker thread races the loop).
 */
#ifndef MCP_FUZZ_HTTP_HARNESS_H
#define MCP_FUZZ_HTTP_HARNESS_H

#include <stddef.h>

/* Server configurations (each a server of its own, started on first use). */
enum fz_config {
    FZ_DEFAULT,   /* sessions, SSE answers, resumability, legacy SSE */
    FZ_JSON,      /* json_response */
    FZ_STATELESS, /* stateless */
    FZ_CORS,      /* CORS for http://example.com, no standalone GET, no resumability */
    FZ_NCONFIGS
};

/* A client connection and everything it has received. */
typedef struct fz_conn {
    int fd; /* -1 when closed */
    char *in;
    size_t in_len, in_cap; /* what was kept (at most FZ_KEEP bytes) */
    size_t scanned;        /* how much of `in` fz_scan has looked at */
    int eof;
} fz_conn;

#define FZ_KEEP (256 * 1024)

/* The port of the server of configuration cfg, started if needed. */
int fz_port(int cfg);
/* Runs one turn of that server's loop. */
void fz_step(int cfg);
/* Connects; aborts on failure (the server's backlog always has room). */
void fz_conn_open(fz_conn *c, int cfg);
/* Closes the socket and frees what was received. */
void fz_conn_close(fz_conn *c);
/* Writes all of data, turning the server's loop while the socket is full. */
void fz_conn_send(fz_conn *c, int cfg, const void *data, size_t len);
/* Reads what has arrived on c without waiting; returns the number of bytes. */
size_t fz_conn_read(fz_conn *c);
/* Turns the loop until n connections have received nothing for a few turns. */
void fz_settle(int cfg, fz_conn *conns, size_t n);

/* What the server said that later requests need: the last session id and SSE
 * event id seen in c's input since the last call. */
typedef struct fz_seen {
    char session[8][33]; /* every session id seen (up to 8), for cleaning up */
    size_t nsessions;
    char event_id[128]; /* the last "id:" of an SSE event, "" when none */
} fz_seen;
void fz_scan(fz_conn *c, fz_seen *seen);
/* DELETEs every session in seen and forgets them. */
void fz_delete_sessions(int cfg, fz_seen *seen);

#endif
