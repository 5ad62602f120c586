/* SPDX-License-Identifier: MIT */
/*
 * A small raw HTTP/1.1 client for the integration tests, over real 127.0.0.1
 * sockets, and a way to run `mcp-everything --http 127.0.0.1:0` as a child.
 *
 * The client writes exactly the bytes a test gives it (so tests can send bad,
 * truncated or pipelined requests) and reads responses byte by byte off the
 * wire: the status line and headers, then the body by Content-Length, chunked
 * transfer coding, or until the server closes. A chunked text/event-stream body
 * can also be read one SSE event at a time, each with its own deadline.
 *
 * Every wait has a deadline; nothing sleeps to synchronise. Functions report
 * failure by return value so that tests decide what to assert.
 */
#ifndef MCP_TESTS_INTEGRATION_HTTP_CLIENT_H
#define MCP_TESTS_INTEGRATION_HTTP_CLIENT_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

/* 1 in the sanitizer build: tests that measure memory or time allow for ASan there. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The headers an MCP POST carries: the Accept and Content-Type the spec asks for. */
#define HC_MCP_POST_HEADERS                                                                        \
    "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
/* The Accept header of a GET that opens a standalone SSE stream. */
#define HC_SSE_ACCEPT "Accept: text/event-stream\r\n"

/* ---- Responses ---- */

typedef struct hc_header {
    char *name;
    char *value;
} hc_header;

typedef struct hc_response {
    int status;   /* e.g. 200; 0 until the status line is read */
    char *reason; /* the reason phrase */
    hc_header *headers;
    size_t n_headers;
    char *body; /* NUL-terminated decoded body, NULL until read */
    size_t body_len;
} hc_response;

/* The first header called name (case-insensitive), or NULL. Borrowed from r. */
const char *hc_header_get(const hc_response *r, const char *name);
/* How many headers are called name. */
size_t hc_header_count(const hc_response *r, const char *name);
/* 1 when any header's name starts with prefix (case-insensitive). */
int hc_has_header_prefix(const hc_response *r, const char *prefix);
void hc_response_free(hc_response *r);
/* Frees n headers and the array. */
void hc_headers_free(hc_header *headers, size_t n);

/* ---- Connections ---- */

struct hc_sse_reader;

typedef struct hc_conn {
    int fd;   /* -1 when closed */
    char *in; /* raw bytes read and not yet consumed */
    size_t in_len, in_cap;
    int eof;   /* the server closed its side (or reset the connection) */
    int reset; /* ... and it was a reset */

    /* The body being read. */
    int body_mode;    /* HC_BODY_* */
    size_t remaining; /* Content-Length left, or bytes left in the current chunk */
    int chunk_state;
    int body_done;
    char *dec; /* decoded body bytes not yet consumed */
    size_t dec_len, dec_cap;
    struct hc_sse_reader *sse; /* the body's event stream, once hc_sse_next reads it */

    /* The response being read when the caller keeps none of its own (hc_read_head
     * and hc_read_body with r NULL, hc_mcp_post_open, hc_mcp_get_open): its status
     * and headers, and its body once hc_read_body has read it. */
    hc_response head;
} hc_conn;

/*
 * Connects to 127.0.0.1:port within timeout_ms. The socket is non-blocking;
 * writes never raise SIGPIPE. Returns 0, or -1 (c->fd is then -1).
 */
int hc_connect(hc_conn *c, int port, int timeout_ms);
/* Connections of this thread's process are made from ip (another loopback address,
 * "127.0.0.2", so that a server sees another source), or as the kernel picks (NULL). */
void hc_set_source(const char *ip);
/* The same with SO_RCVBUF set to rcvbuf first (when > 0): a small window, so that a
 * client that does not read makes the server's queue grow. */
int hc_connect_rcvbuf(hc_conn *c, int port, int rcvbuf, int timeout_ms);
/* Closes the socket and frees the buffers; c may be closed again. */
void hc_close(hc_conn *c);
/* Like hc_close, but aborts the connection (RST instead of FIN). */
void hc_close_reset(hc_conn *c);
/* Writes all of data within timeout_ms. Returns 0, or -1 (timeout, reset, ...). */
int hc_send(hc_conn *c, const void *data, size_t len, int timeout_ms);
/* Shuts down the writing side (the server reads end of file). */
void hc_shutdown_write(hc_conn *c);

/*
 * Formats a request: "METHOD PATH HTTP/1.1", then Host: 127.0.0.1:port unless
 * headers has a Host line, then headers verbatim (lines ending in \r\n, may be
 * NULL), then Content-Length: body_len when body is not NULL and headers name
 * no Content-Length or Transfer-Encoding, then the blank line and the body.
 * Returns a malloc'd buffer (*len gets its length), or NULL.
 */
char *hc_format_request(int port, const char *method, const char *path, const char *headers,
                        const char *body, size_t body_len, size_t *len);
/* hc_format_request, then hc_send. */
int hc_send_request(hc_conn *c, int port, const char *method, const char *path, const char *headers,
                    const char *body, int timeout_ms);

/*
 * Reads the status line and headers of the next response within timeout_ms
 * (interim 1xx responses are skipped) into r (NULL: c->head) and prepares to
 * read its body. Returns 0, or -1 on timeout, end of file or a malformed head.
 */
int hc_read_head(hc_conn *c, hc_response *r, int timeout_ms);
/* Reads the rest of the body into r->body (r NULL: c->head.body) within
 * timeout_ms. Returns 0 when the body ended properly (its length, the chunked
 * terminator, or a close where the close ends it), or -1; r->body then holds
 * what came. */
int hc_read_body(hc_conn *c, hc_response *r, int timeout_ms);
/* hc_read_head, then hc_read_body, with one deadline. */
int hc_read_response(hc_conn *c, hc_response *r, int timeout_ms);
/* Takes whatever the socket has without waiting and decodes it. Returns 0, or -1
 * on a malformed body. */
int hc_pump(hc_conn *c);

/*
 * One complete exchange on a new connection: connect, send, read the whole
 * response, close. Returns 0, or -1 (r holds whatever was read).
 */
int hc_request(int port, const char *method, const char *path, const char *headers,
               const char *body, hc_response *r, int timeout_ms);

/* ---- Server-sent events ---- */

/*
 * One SSE block, as the library's parser (src/sse/sse.h) reads it by the HTML
 * standard's rules: lines end in CRLF, LF or CR, one space after the colon is
 * dropped, invalid UTF-8 becomes U+FFFD.
 */
typedef struct hc_sse_event {
    char *event;        /* the event type, or NULL for the default, "message" (also when no data) */
    char *data;         /* data lines joined with \n; "" when none */
    char *id;           /* the id field of this block (not an earlier block's), or NULL */
    int comment;        /* 1 when the block held only comment lines */
    char *comment_text; /* the first comment line without its ':', trimmed, or NULL */
    long retry;         /* the block's valid retry field (the last one), or -1 */
    int has_data;       /* 1 when the block had a data line (data "" is then an empty event) */
} hc_sse_event;

void hc_sse_event_free(hc_sse_event *ev);

/*
 * An SSE reader over bytes the caller reads itself: the library's parser,
 * handing out one block at a time. A new body needs a new reader.
 */
typedef struct hc_sse_reader hc_sse_reader;

hc_sse_reader *hc_sse_reader_new(void); /* NULL on ENOMEM */
void hc_sse_reader_free(hc_sse_reader *r);
/*
 * Parses buf[0..len) up to the end of the next block; *used gets the bytes
 * taken (the rest is for the next call). Returns 1 with *ev filled when a
 * block ended, 0 when every byte was taken and no block ended, -1 on ENOMEM
 * or an event over 64 MiB (the reader stays failed).
 */
int hc_sse_reader_take(hc_sse_reader *r, const char *buf, size_t len, size_t *used,
                       hc_sse_event *ev);

/*
 * Reads the next SSE block of the body being read on c (after hc_read_head)
 * within timeout_ms. Comment-only blocks (keep-alives) are returned too, with
 * ev->comment set. Returns 1 with *ev filled, 0 when the body ended (clean
 * chunked terminator or close) with no further event, -1 on timeout or error.
 */
int hc_sse_next(hc_conn *c, hc_sse_event *ev, int timeout_ms);
/* Like hc_sse_next but skips comment-only blocks (priming events are returned). */
int hc_sse_next_block(hc_conn *c, hc_sse_event *ev, int timeout_ms);
/*
 * Like hc_sse_next but skips comment blocks and events without data (the
 * priming events of resumable streams carry only an id and a retry).
 */
int hc_sse_next_event(hc_conn *c, hc_sse_event *ev, int timeout_ms);
/* The next complete SSE block already received, without any I/O: 1 or 0. */
int hc_sse_take(hc_conn *c, hc_sse_event *ev);
/* 1 for a priming event: an id and no data, or only empty data. */
int hc_sse_is_priming(const hc_sse_event *ev);
/*
 * Like hc_sse_next_event, and parses the data as JSON: returns a new
 * reference, or NULL on timeout, end of stream or data that is not JSON
 * (*rc, when not NULL, gets the hc_sse_next result: 1, 0 or -1).
 */
json_t *hc_sse_next_json(hc_conn *c, int timeout_ms, int *rc);

/*
 * Parses a complete SSE body (e.g. r->body) and returns the JSON of every
 * event that has data, in order, as a new array; data that is not JSON is
 * kept as a string. NULL on ENOMEM.
 */
json_t *hc_sse_parse_all(const char *body, size_t len);

/* ---- MCP over HTTP ---- */

/*
 * POSTs body to /mcp with HC_MCP_POST_HEADERS, Mcp-Session-Id when session is
 * not NULL, and the extra header lines, and reads the whole response.
 */
int hc_mcp_post(int port, const char *session, const char *extra_headers, const char *body,
                hc_response *r, int timeout_ms);
/*
 * Connects (with SO_RCVBUF rcvbuf when > 0), POSTs body to /mcp with
 * HC_MCP_POST_HEADERS and Mcp-Session-Id when session is not NULL, and reads the
 * head into c->head, leaving the body to read. Returns the HTTP status, or -1
 * (c is closed then).
 */
int hc_mcp_post_open(hc_conn *c, int port, const char *session, const char *body, int rcvbuf,
                     int timeout_ms);
/*
 * Connects and sends GET /mcp with HC_SSE_ACCEPT, the session and Last-Event-ID
 * when last_id is not NULL, and reads the head into c->head. Returns the HTTP
 * status, or -1 (c is closed then).
 */
int hc_mcp_get_open(hc_conn *c, int port, const char *session, const char *last_id, int timeout_ms);
/*
 * The JSON-RPC messages of a response: its SSE events (text/event-stream) or
 * its JSON body (a single message becomes a one-element array). New
 * reference, NULL when the body is neither.
 */
json_t *hc_messages(const hc_response *r);
/* An initialize request with id 1 for protocol version ver (NULL: 2025-11-25). */
char *hc_initialize_body(const char *ver);
/*
 * Initializes a session (initialize, then notifications/initialized) and
 * copies its Mcp-Session-Id into session (33 bytes). Returns 0, or -1.
 */
int hc_mcp_initialize(int port, char session[33], int timeout_ms);
/* The same, negotiating protocol version ver (NULL: 2025-11-25). */
int hc_mcp_initialize_version(int port, const char *ver, char session[33], int timeout_ms);
/* DELETEs the session; returns the status, or -1. */
int hc_mcp_delete(int port, const char *session, int timeout_ms);
/* Formats a tools/call body: id, tool name and arguments (JSON text, NULL for {}). */
char *hc_tools_call_body(long long id, const char *tool, const char *args_json);

/* ---- The server under test ---- */

typedef struct hc_server {
    pid_t pid; /* 0 once reaped */
    int port;
    int err_fd;
    pthread_t reader;
    int reader_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *err; /* everything the server wrote to stderr */
    size_t err_len, err_cap;
    int err_eof;
} hc_server;

/*
 * Starts `$MCP_BIN_DIR/mcp-everything --http 127.0.0.1:0 flags...` (flags is
 * NULL-terminated, may be NULL) with stdin and stdout on /dev/null and stderr
 * read by a thread, and waits up to timeout_ms for its "listening on" line to
 * learn the port. Returns 0, or -1 (the child is killed then).
 */
int hc_server_start(hc_server *s, const char *const flags[], int timeout_ms);
/* The same on 127.0.0.1:port (0: a free port): a server restarted where it was. */
int hc_server_start_on(hc_server *s, int port, const char *const flags[], int timeout_ms);
/* The same with another program of $MCP_BIN_DIR (mcp-gateway): `program --http
 * 127.0.0.1:port flags... tail...` (tail NULL-terminated, may be NULL). */
int hc_server_start_program(hc_server *s, const char *program, int port, const char *const flags[],
                            const char *const tail[], int timeout_ms);
/*
 * Sends SIGTERM and waits up to timeout_ms for the server to exit, then reaps
 * it (SIGKILL after the deadline). *status gets the waitpid status. Returns
 * 0 when the server exited by itself in time, -1 otherwise. The stderr text
 * stays readable until hc_server_free.
 */
int hc_server_stop(hc_server *s, int timeout_ms, int *status);
/* A malloc'd copy of what the server wrote to stderr so far. */
char *hc_server_stderr(hc_server *s);
/* 1 while the server process has not exited. */
int hc_server_alive(hc_server *s);
/* Waits up to timeout_ms for the server to exit by itself (no signal sent) and reaps
 * it; *status gets the waitpid status. 0, or -1 when it did not exit in time. */
int hc_server_wait(hc_server *s, int timeout_ms, int *status);
/* Waits up to timeout_ms for the server's stderr to contain text. 0 or -1. */
int hc_server_wait_stderr(hc_server *s, const char *text, int timeout_ms);
/* Waits up to timeout_ms until the server's stderr holds text at least count
 * times. Returns how many times it does, or -1 when fewer by the deadline. */
int hc_server_wait_count(hc_server *s, const char *text, int count, int timeout_ms);
/* VmRSS of the server in KiB from /proc/<pid>/status, or -1. */
long hc_server_rss_kb(const hc_server *s);
/* In the sanitizer build, servers started from now on keep at most mb MiB of freed
 * memory in ASan's quarantine (256 MiB by default), which RSS would count as growth;
 * a quarantine size already in ASAN_OPTIONS is left as it is. Elsewhere nothing. */
void hc_asan_small_quarantine(int mb);
/* The number in the first line of a /proc file that begins with line_prefix: right
 * after the prefix, or after key within that line (key NULL: the first); -1 when the
 * file, the line or the key is not there. */
long hc_proc_value(const char *path, const char *line_prefix, const char *key);
/* Kills the server if still running and frees everything. */
void hc_server_free(hc_server *s);

/*
 * The common teardown: stop the server, then check it exited with status 0;
 * otherwise print why and its stderr. Returns 0 or -1.
 */
int hc_server_stop_check(hc_server *s, int timeout_ms);

/* Monotonic milliseconds. */
long long hc_now_ms(void);

#endif
