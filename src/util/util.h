/* SPDX-License-Identifier: MIT */
/*
 * Internal utilities: only what no dependency gives. Names are mcp__*.
 */
#ifndef MCP_UTIL_H
#define MCP_UTIL_H

/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides; the build
 * defines _GNU_SOURCE for every file, this covers other ways of compiling. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include <mcp/base.h>

/* ---- libuv handles (handle.c) ---- */

/* Closes h and, once libuv is done with it, frees mem: h itself, or the struct that holds
 * it (kept in h->data, which is overwritten). For handles whose memory goes with them. */
void mcp__uv_close_free(uv_handle_t *h, void *mem);

/* Handles an owner closes together and waits for: open counts those initialized and not
 * yet closed (the owner sets it as it initializes them). mcp__uv_close_counted() closes h
 * (nothing when it is closing already); once libuv is done with it, open drops by one and
 * closed(owner) runs, after each handle: the owner's own test says whether it is done.
 * h->data then points to the group: only for handles whose other callbacks cannot run
 * after the close (timers, checks, prepares, idles), never a stream whose writes in
 * flight are still called back with its data. */
typedef struct mcp__uv_group {
    unsigned open;
    void (*closed)(void *owner);
    void *owner;
} mcp__uv_group;

void mcp__uv_close_counted(mcp__uv_group *g, uv_handle_t *h);
/* A member of g closed some other way (a handle freed with its memory, a curl multi
 * handle) has closed: open drops by one and closed(owner) runs. */
void mcp__uv_group_left(mcp__uv_group *g);

/* ---- Intrusive lists ----
 *
 * Doubly linked lists whose nodes carry their own prev and next pointers and whose head
 * is a pointer to the first node (NULL: empty). PUSH puts node first; UNLINK takes it out
 * (its own prev and next are left as they were). Arguments are evaluated more than once:
 * plain lvalues only. */
#define MCP__LIST_PUSH(head, node)                                                                 \
    do {                                                                                           \
        (node)->prev = NULL;                                                                       \
        (node)->next = (head);                                                                     \
        if ((head) != NULL)                                                                        \
            (head)->prev = (node);                                                                 \
        (head) = (node);                                                                           \
    } while (0)
#define MCP__LIST_UNLINK(head, node)                                                               \
    do {                                                                                           \
        if ((node)->prev != NULL)                                                                  \
            (node)->prev->next = (node)->next;                                                     \
        else                                                                                       \
            (head) = (node)->next;                                                                 \
        if ((node)->next != NULL)                                                                  \
            (node)->next->prev = (node)->prev;                                                     \
    } while (0)

/* ---- Growable byte buffer ---- */

/* A zeroed struct is an empty buffer. data is always NUL-terminated when len>0 or after
 * any successful append (one spare byte is kept), so it can be used as a C string. */
typedef struct mcp__buf {
    char *data;
    size_t len;
    size_t cap;
} mcp__buf;

int mcp__buf_reserve(mcp__buf *b, size_t extra);           /* MCP_OK or MCP_ENOMEM */
int mcp__buf_append(mcp__buf *b, const void *p, size_t n); /* MCP_OK or MCP_ENOMEM */
int mcp__buf_appends(mcp__buf *b, const char *s);          /* strlen(s) bytes */
int mcp__buf_appendf(mcp__buf *b, const char *fmt, ...) MCP_PRINTF(2, 3);
int mcp__buf_vappendf(mcp__buf *b, const char *fmt, va_list ap);
/* Appends v in decimal (hot paths: no printf). */
int mcp__buf_append_u64(mcp__buf *b, uint64_t v);
/* Writes v in decimal and a NUL to out (size >= 21); returns the length. */
size_t mcp__u64_str(uint64_t v, char *out);
/* Drops the first n bytes (memmove), keeping the rest. */
void mcp__buf_consume(mcp__buf *b, size_t n);
void mcp__buf_reset(mcp__buf *b); /* len = 0, keeps memory */
void mcp__buf_free(mcp__buf *b);  /* frees memory, zeroes the struct */
/* Hands the memory to the caller (malloc'd, NUL-terminated, may be NULL when empty)
 * and zeroes the struct. */
char *mcp__buf_steal(mcp__buf *b);

/* ---- Versioned structs (opts.c) ---- */

/* Copies a caller's option struct or operation table that begins with `size_t size`
 * into dst (dst_size bytes): min(size, dst_size) bytes, the rest zeroed; a size of 0
 * stands for v1_size (the layout of libmcp 0.1). src NULL gives a zeroed dst.
 * MCP_EINVAL when size is smaller than the size field itself. */
int mcp__opts_copy(void *dst, size_t dst_size, const void *src, size_t v1_size);

/* ---- Strings ---- */

/* strdup that accepts NULL (returns NULL). */
char *mcp__strdup(const char *s);
/* A copy of a NULL-terminated array of strings (NULL for NULL): *err is set to 1
 * on ENOMEM (the partial copy is still returned, for mcp__strv_free). */
char **mcp__strv_copy(const char *const *v, int *err);
void mcp__strv_free(char **v);
/* malloc'd printf. NULL on ENOMEM. */
char *mcp__asprintf(const char *fmt, ...) MCP_PRINTF(1, 2);

/* ---- Randomness and encodings ---- */

/* Fills buf with n bytes from the OS random source (getrandom, else /dev/urandom).
 * MCP_OK or MCP_EIO. */
int mcp__random_bytes(void *buf, size_t n);
/* Writes 2*n lowercase hex digits and a NUL to out (size >= 2*n+1). */
void mcp__hex(const void *data, size_t n, char *out);
/* Base64 (RFC 4648 with padding). Decoding: accepts padded or unpadded input, rejects
 * any character outside the alphabet; returns malloc'd bytes (NUL-terminated for
 * convenience) and *out_len, or NULL on bad input or ENOMEM. */
char *mcp__base64_encode(const void *data, size_t len); /* same as mcp_base64_encode */
unsigned char *mcp__base64_decode(const char *text, size_t len, size_t *out_len);
/* Base64url (RFC 4648 section 5: '-' and '_') without padding, for tokens. Encoding
 * writes mcp__base64url_len(len) characters and a NUL to out. Decoding writes at most
 * len / 4 * 3 + 2 bytes to out and sets *out_len; MCP_OK, or MCP_EINVAL for anything but
 * the one spelling encoding gives: a character outside the URL-safe alphabet (NUL and
 * '=' included), a length that leaves one character over, or nonzero bits after the
 * last byte. */
size_t mcp__base64url_len(size_t len);
size_t mcp__base64url_encode(const void *data, size_t len, char *out);
int mcp__base64url_decode(const char *text, size_t len, unsigned char *out, size_t *out_len);

/* ---- String-keyed hash map ---- */

/*
 * Open addressing with linear probing; keys are copied, values are borrowed
 * pointers. Lookups, inserts and removals are O(1) on average.
 */
typedef struct mcp__map {
    struct mcp__map_slot *slots;
    size_t cap;  /* a power of two, or 0 */
    size_t len;  /* live entries */
    size_t used; /* live entries and tombstones */
} mcp__map;

void *mcp__map_get(const mcp__map *m, const char *key);
/* Inserts or replaces. MCP_OK or MCP_ENOMEM. */
int mcp__map_put(mcp__map *m, const char *key, void *value);
/* Removes key; returns its value or NULL. */
void *mcp__map_remove(mcp__map *m, const char *key);
/* Iteration: *pos starts at 0; returns 0 at the end. Removing the entry just
 * returned is allowed during iteration. */
int mcp__map_next(const mcp__map *m, size_t *pos, const char **key, void **value);
void mcp__map_free(mcp__map *m);

/* ---- Clocks ---- */

uint64_t mcp__now_ms(void); /* CLOCK_MONOTONIC in milliseconds */
/* CLOCK_REALTIME in milliseconds since the epoch: for expiries that travel to other
 * machines (sealed tokens); it may jump, so never for timeouts. */
uint64_t mcp__wall_ms(void);

/* ---- Diagnostics on stderr (never stdout: stdout may be the MCP channel) ---- */

/* Level: 0 error, 1 warning, 2 info, 3 debug. The threshold comes from the environment
 * variable MCP_DEBUG (unset: warnings and errors; "1": everything). Thread-safe. */
void mcp__log(int level, const char *fmt, ...) MCP_PRINTF(2, 3);
/* One line on stderr in the format set (0 text, 1 logfmt, 2 JSON; mcp_log_set_format):
 * the time (not in text), level and source when not NULL, msg (msg_len bytes) when not
 * NULL, then the pairs of fields (logfmt text, or NULL). In one write; errno kept. */
void mcp__log_emit(const char *level, const char *source, const char *msg, size_t msg_len,
                   const char *fields);
void mcp__log_set_format(int format);
int mcp__log_get_format(void);
#define mcp__error(...) mcp__log(0, __VA_ARGS__)
#define mcp__warn(...) mcp__log(1, __VA_ARGS__)
#define mcp__info(...) mcp__log(2, __VA_ARGS__)
#define mcp__debug(...) mcp__log(3, __VA_ARGS__)

/*
 * Copies s into out as text an error message may carry whatever the client
 * sent: a JSON string needs valid UTF-8, and a header value may hold any byte
 * but CR, LF and NUL. Valid UTF-8 is kept; each byte that does not begin a
 * valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates), and each
 * control character (C0, DEL, C1), becomes U+FFFD. When s does not fit, the
 * copy ends at a character boundary with "...". out_len must be at least 4;
 * out is always NUL-terminated. Returns out.
 */
char *mcp__quotable(char *out, size_t out_len, const char *s);

/* ---- Giving memory back ---- */

/* Notes that n bytes of a burst (queued output, stored events...) were freed. Any thread. */
void mcp__mem_released(size_t n);
/* Returns freed heap memory to the system (malloc_trim) once a burst of
 * releases has wound down; cheap otherwise. Called about once a second; any thread. */
void mcp__mem_trim_maybe(void);

/* ---- Worker pool ---- */

/* A fixed set of threads running submitted jobs in FIFO order. */
typedef struct mcp__pool mcp__pool;
typedef void (*mcp__job_fn)(void *arg);

/* Starts n threads (1..256). NULL on failure. */
mcp__pool *mcp__pool_new(int nthreads);
/* Queues fn(arg). Thread-safe. MCP_OK, MCP_ENOMEM, or MCP_ECLOSED after free began. */
int mcp__pool_submit(mcp__pool *p, mcp__job_fn fn, void *arg);
/* Runs every job already queued, joins the threads and frees the pool. Must not be
 * called from a pool thread. NULL is allowed. */
void mcp__pool_free(mcp__pool *p);

/* ---- Mailbox: a thread-safe queue into a libuv loop ---- */

/* Intrusive node: embed it in the message struct. */
typedef struct mcp__mail {
    struct mcp__mail *next;
    void (*fn)(struct mcp__mail *m); /* runs on the loop thread; owns m from then on */
} mcp__mail;

typedef struct mcp__mailbox {
    uv_async_t async; /* async.data is free for the owner's use */
    uv_mutex_t lock;
    mcp__mail *head, *tail;
    mcp__mail *batch; /* loop thread: taken off the queue, not yet run */
    int closing;
    void (*close_cb)(struct mcp__mailbox *mb);
} mcp__mailbox;

/* Initialises on the loop's thread. MCP_OK or MCP_EIO. */
int mcp__mailbox_init(mcp__mailbox *mb, uv_loop_t *loop);
/* Queues m; m->fn(m) runs on the loop thread soon, in posting order. Any thread.
 * Returns MCP_ECLOSED (and does not take m) once closing began. */
int mcp__mailbox_post(mcp__mailbox *mb, mcp__mail *m);
/* Loop thread: runs everything still queued, refuses later posts, then closes the async
 * handle; close_cb (may be NULL) runs from the handle's close callback, after which the
 * mailbox memory may be freed. */
void mcp__mailbox_close(mcp__mailbox *mb, void (*close_cb)(mcp__mailbox *mb));

/* ---- Newline-delimited framing (stdio) ---- */

/*
 * What a JSON-RPC message's text shows at its top level, read piece by piece in
 * constant memory (for a message too long to keep): its integer "id", and whether it
 * has "method", "result" or "error". Zeroed, it is at the start.
 */
typedef struct mcp__rpc_scan {
    int depth, in_str, esc, expect_key, key_over;
    char key[8];
    size_t key_len;
    int last_key;     /* what the top-level key before ':' was (see lines.c) */
    int in_id;        /* reading the value of "id" */
    int id_digits;    /* its digits so far; -1: not a non-negative integer */
    long long id_num; /* its value so far */
    long long id;     /* the top-level "id", 0 when none (or not such an integer) */
    int method, answer;
} mcp__rpc_scan;

void mcp__rpc_scan_feed(mcp__rpc_scan *s, const char *p, size_t len);
/* The message's integer id when it is a response (a "result" or "error" and no
 * "method") with one, else 0; *response: whether it is a response. */
long long mcp__rpc_scan_response_id(const mcp__rpc_scan *s, int *response);

/*
 * Splits a byte stream into lines ending in '\n' (a '\r' before it is dropped).
 * A line longer than max bytes is not kept: on_overflow is called once for it
 * (with the number of bytes seen so far) and the rest of it up to its newline is
 * discarded, so a 10 MB line costs no more than max bytes of memory. All of it is
 * read by scan, though: once its newline has come, on_dropped (when set) is called
 * with the same user as the callbacks of mcp__lines_feed and the line's length, and
 * scan tells what the line was (a response's id, say).
 */
typedef struct mcp__lines {
    mcp__buf buf;
    size_t max;
    int discarding;
    size_t discarded;
    mcp__rpc_scan scan;
    void (*on_dropped)(void *user, size_t seen);
} mcp__lines;

typedef void (*mcp__line_fn)(void *user, char *line, size_t len); /* line is NUL-terminated,
                                                                      valid only during the call */
typedef void (*mcp__overflow_fn)(void *user, size_t seen);

void mcp__lines_init(mcp__lines *ls, size_t max); /* max 0: 4 MiB */
/* Feeds bytes; calls on_line for every complete line (empty lines are skipped). The
 * callbacks may not free ls. MCP_OK or MCP_ENOMEM. */
int mcp__lines_feed(mcp__lines *ls, const char *data, size_t len, mcp__line_fn on_line,
                    mcp__overflow_fn on_overflow, void *user);
/* Bytes of an unterminated last line still held (for EOF handling). */
size_t mcp__lines_pending(const mcp__lines *ls);
void mcp__lines_free(mcp__lines *ls);

#endif
