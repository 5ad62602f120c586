/* SPDX-License-Identifier: MIT */
/*
 * The HTTP transports' sessions and streams: the session table, where a
 * session's messages go, backpressure, keep-alive and idle timers. See shttp.h.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/rpc.h"
#include "sse/sse.h"
#include "transport/shttp.h"

/* ---- Streams ---- */

hstream *mcp__hstream_attach(hsess *hs, uint64_t id, enum hstream_kind kind, mcp__http_req *req)
{
    hstream *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    st->hs = hs;
    st->id = id;
    st->kind = kind;
    st->req = req;
    st->last_write_ms = mcp__now_ms();
    if (hs->t->share != NULL && hs->t->share->stream_init(st) != MCP_OK) {
        free(st);
        return NULL;
    }
    hs->t->stats.streams++;
    hs->t->stats.streams_total++;
    MCP__LIST_PUSH(hs->streams, st);
    return st;
}

uint64_t mcp__hstream_new_id(hsess *hs, enum hstream_kind kind)
{
    /* Odd ids are GET (standalone) streams, even ones POST streams: a resume then
     * knows what kind of stream it continues even after the stream is gone. */
    uint64_t n = ++hs->next_stream;
    if (hs->t->share != NULL)
        n = hs->t->share->stream_number(hs, n);
    return n * 2 + (kind == HS_GET ? 1 : 0);
}

hstream *mcp__hstream_new(hsess *hs, enum hstream_kind kind, mcp__http_req *req)
{
    return mcp__hstream_attach(hs, mcp__hstream_new_id(hs, kind), kind, req);
}

void mcp__hstream_free(hstream *st)
{
    hsess *hs = st->hs;
    if (st->resuming != NULL) {
        /* A replay into it is under way and will end it once the replay is done. */
        st->finished = 1;
        return;
    }
    if (hs->t->share != NULL) {
        if (st->req != NULL)
            hs->t->share->release(st);
        hs->t->share->stream_free(st);
    }
    if (st->req != NULL)
        mcp__http_req_release(st->req);
    MCP__LIST_UNLINK(hs->streams, st);
    hs->t->stats.streams--;
    free(st);
    mcp__hsess_touch(hs);
}

static int begin(hstream *st)
{
    if (st->begun)
        return MCP_OK;
    hsess *hs = st->hs;
    const char *hdrs[20] = {"Content-Type", "text/event-stream", "Cache-Control",
                            "no-cache, no-transform",
                            /* Proxies such as nginx must not buffer an event stream. */
                            "X-Accel-Buffering", "no"};
    size_t n = 6;
    if (!hs->stateless && !hs->httpsse && HS_ANS(hs)->initialized(hs->sess)) {
        hdrs[n++] = "Mcp-Session-Id";
        hdrs[n++] = hs->id;
    }
    n = mcp__shttp_cors(hs->t, st->req, hdrs, n);
    hdrs[n] = NULL;
    st->begun = 1;
    /* An SSE comment line: what waits for this client's acknowledgement (backpressure)
     * may ask for its receive window with it. */
    mcp__http_req_set_probe(st->req, ":\n", 2);
    return mcp__http_stream_begin(st->req, 200, hdrs);
}

int mcp__hstream_write(hstream *st, const char *data, size_t len)
{
    if (st->req == NULL)
        return MCP_ECLOSED;
    int rc = begin(st);
    if (rc == MCP_OK)
        rc = mcp__http_stream_write(st->req, data, len);
    /* The loop's time (CLOCK_MONOTONIC too, read once a turn): this runs for every event. */
    st->last_write_ms = uv_now(st->hs->t->loop);
    size_t queued = rc == MCP_OK ? mcp__http_stream_queued(st->req) : 0;
    /* A resume may replay more than the limit at once: that backlog is allowed
     * until the socket has drained it below the limit (checked from the next loop
     * turn on: before then the replay has not even been offered to the socket). */
    if (queued <= st->hs->t->max_queued && uv_now(st->hs->t->loop) != st->slack_at)
        st->slack = 0;
    if (rc == MCP_OK && queued > st->hs->t->max_queued + st->slack) {
        /* A reader this slow would make us hold its messages without bound. */
        mcp__warn("session %s: a stream's reader fell %zu bytes behind; closing it", st->hs->id,
                  mcp__http_stream_queued(st->req));
        mcp__http_req_abort(st->req);
        st->req = NULL;
        /* An HTTP+SSE session lives only as long as its one stream (forgotten on
         * disconnect, then 404), and it
         * cannot be resumed: it ends with it. */
        if (st->kind == HS_HTTPSSE)
            mcp__hsess_close_later(st->hs);
        /* Nor can a stateless one (2026-07-28, --stateless): its request, a subscription
         * too, is over, as when its client closes it. */
        else if (st->hs->stateless)
            mcp__hsess_close_later(st->hs);
        else
            mcp__hstream_maybe_ready(st); /* a handler paused on it must not wait on */
        return MCP_ELIMIT;
    }
    return rc;
}

int mcp__hsess_primes(const hsess *hs)
{
    /* Priming events only where the negotiated revision has them (2025-11-25 and later):
     * older parsers fail on an event with empty data (the spec; the TypeScript SDK's own
     * check). */
    const mcp__revision *rev = HS_ANS(hs)->revision(hs->sess);
    return hs->t->store != NULL && !hs->stateless && !hs->httpsse && rev != NULL && rev->priming;
}

/*
 * Event ids, made and read here only: "<tag>-<stream>-<seq>", the tag a per-session
 * secret (so that ids cannot be guessed across sessions), the stream's number (its
 * node's in the high bits on a cluster), and the session's event count.
 */
void mcp__event_id(const hsess *hs, uint64_t stream, uint64_t seq, char out[64])
{
    /* "<tag>-<stream>-<seq>": 16 + 1 + 20 + 1 + 20 + 1 bytes at most. */
    size_t n = strlen(hs->tag);
    memcpy(out, hs->tag, n);
    out[n++] = '-';
    n += mcp__u64_str(stream, out + n);
    out[n++] = '-';
    mcp__u64_str(seq, out + n);
}

/* Parses "<tag>-<stream>-<seq>"; the tag must be this session's. */
int mcp__parse_event_id(const hsess *hs, const char *id, uint64_t *stream, uint64_t *seq)
{
    size_t tag_len = strlen(hs->tag);
    if (strncmp(id, hs->tag, tag_len) != 0 || id[tag_len] != '-')
        return -1;
    char *end;
    const char *p = id + tag_len + 1;
    if (*p < '0' || *p > '9')
        return -1;
    unsigned long long a = strtoull(p, &end, 10);
    if (*end != '-' || end[1] < '0' || end[1] > '9')
        return -1;
    unsigned long long b = strtoull(end + 1, &end, 10);
    if (*end != '\0')
        return -1;
    *stream = a;
    *seq = b;
    return 0;
}

/*
 * Sends one message on stream `id` (st is its live stream, or NULL): with a store
 * it is stored first, under a new event id, so that a client that misses it on
 * the wire gets it when it resumes; then it is written, if a socket is there.
 */
static int emit(hsess *hs, uint64_t id, hstream *st, const char *text, size_t len)
{
    shttp *t = hs->t;
    char eid[64];
    const char *eid_p = NULL;
    if (t->store != NULL && !hs->httpsse && !hs->stateless && !(st != NULL && st->unstored)) {
        uint64_t seq = ++hs->next_seq;
        if (st != NULL && t->share != NULL)
            t->share->storing(st);
        if (mcp_event_store_append(t->store, hs->id, id, seq, text, len) != MCP_OK) {
            mcp__warn("session %s: an event could not be stored", hs->id);
            mcp__hsess_note_gap(hs, id, seq);
        } else if (st != NULL && t->share != NULL) {
            t->share->stored(st, len);
        } else if (t->share != NULL) {
            t->share->stored_detached(hs, seq);
        }
        mcp__event_id(hs, id, seq, eid);
        eid_p = eid;
        if (st != NULL) {
            if (st->unconfirmed == 0) {
                st->unconfirmed_seq = seq;
                st->unconfirmed_at = hs->stored_bytes;
            }
            st->unconfirmed++;
            st->unconfirmed_bytes += len;
        }
        hs->stored_bytes += len;
    }
    if (st == NULL || st->req == NULL)
        return MCP_OK;
    mcp__buf b = {0};
    int rc = mcp__sse_event(&b, "message", eid_p, -1, text, len);
    if (rc == MCP_OK)
        rc = mcp__hstream_write(st, b.data, b.len);
    mcp__buf_free(&b);
    if (rc == MCP_ENOMEM && st->req != NULL) {
        /* Out of memory for this message: the stream must not go on (or end cleanly)
         * without it. A broken connection makes the client resume or retry. */
        mcp__http_req_abort(st->req);
        st->req = NULL;
        if (hs->stateless)
            mcp__hsess_close_later(hs); /* nothing to resume: its request ends */
    }
    /* A stored message is not lost when its socket fails: the client resumes. */
    return eid_p != NULL ? MCP_OK : rc;
}

int mcp__hstream_event(hstream *st, const char *text, size_t len)
{
    return emit(st->hs, st->id, st, text, len);
}

int mcp__hstream_prime(hstream *st, int retry_ms)
{
    hsess *hs = st->hs;
    shttp *t = hs->t;
    uint64_t seq = ++hs->next_seq;
    if (t->share != NULL)
        t->share->storing(st);
    /* An empty event in the store: a valid place to resume after, never replayed. */
    mcp_event_store_append(t->store, hs->id, st->id, seq, "", 0);
    char eid[64];
    mcp__event_id(hs, st->id, seq, eid);
    mcp__buf b = {0};
    int rc = mcp__sse_event(&b, NULL, eid, retry_ms >= 0 ? retry_ms : t->retry_ms, NULL, 0);
    if (rc == MCP_OK)
        rc = mcp__hstream_write(st, b.data, b.len);
    mcp__buf_free(&b);
    st->primed = 1;
    return rc;
}

void mcp__hstream_end(hstream *st)
{
    if (st->req == NULL)
        return;
    if (st->hs->t->share != NULL)
        st->hs->t->share->release(st);
    if (begin(st) == MCP_OK)
        mcp__http_stream_end(st->req);
    else
        mcp__http_req_release(st->req);
    st->req = NULL;
}

/* ---- Where a session's messages go ---- */

/* The standalone stream: the newest GET stream still connected. Messages not tied
 * to a request go to exactly one stream, never to all of them. */
hstream *mcp__hsess_standalone(hsess *hs)
{
    for (hstream *st = hs->streams; st != NULL; st = st->next)
        if (st->kind == HS_GET && st->req != NULL)
            return st;
    return NULL;
}

/* Sends a message not tied to a request. With no GET stream open it is stored under
 * the last standalone stream, so the client gets it when it resumes that stream; with
 * none to resume it waits for the next GET (outbox.c). */
static int emit_standalone(hsess *hs, const char *text, size_t len)
{
    hstream *g = mcp__hsess_standalone(hs);
    if (g != NULL) {
        hs->last_standalone = g->id;
        return emit(hs, g->id, g, text, len);
    }
    if (hs->t->share != NULL && hs->t->share->standalone(hs, text, len))
        return MCP_OK;
    if (hs->t->store != NULL && hs->last_standalone != 0)
        return emit(hs, hs->last_standalone, NULL, text, len);
    return mcp__outbox_put(hs, text, len);
}

static hstream *find_stream(hsess *hs, uint64_t id)
{
    for (hstream *st = hs->streams; st != NULL; st = st->next)
        if (st->id == id)
            return st;
    return NULL;
}

/* A JSON-mode POST gets its answer as one body (flags: MCP__SEND_HTTP_*). */
static void finish_json(hstream *st, const char *text, size_t len, unsigned flags)
{
    hsess *hs = st->hs;
    if (st->req != NULL) {
        const char *hdrs[16] = {"Content-Type", "application/json"};
        size_t n = 2;
        if (!hs->stateless && HS_ANS(hs)->initialized(hs->sess)) {
            hdrs[n++] = "Mcp-Session-Id";
            hdrs[n++] = hs->id;
        }
        n = mcp__shttp_cors(hs->t, st->req, hdrs, n);
        hdrs[n] = NULL;
        int status = (flags & MCP__SEND_HTTP_400) ? 400 : (flags & MCP__SEND_HTTP_404) ? 404 : 200;
        if (text != NULL)
            mcp__http_respond(st->req, status, hdrs, text, len);
        else
            mcp__http_respond(st->req, 202, hdrs, NULL, 0); /* cancelled: no answer */
        st->req = NULL;
    }
}

static int io_send(void *io, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    hsess *hs = io;
    /* Other nodes cannot find what this answer tells the client yet. */
    if (hs->t->share != NULL && hs->t->share->hold(hs, stream, text, len, flags))
        return MCP_OK;
    return mcp__hsess_send(hs, stream, text, len, flags);
}

int mcp__hsess_send(hsess *hs, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    if (text != NULL) {
        hs->t->stats.messages_out++;
        hs->t->stats.bytes_out += len;
    }
    if (hs->httpsse) {
        hstream *st = hs->streams;
        return st != NULL && text != NULL ? mcp__hstream_event(st, text, len) : MCP_OK;
    }
    hstream *st = stream == MCP__STREAM_STANDALONE ? NULL : find_stream(hs, stream);
    if (st != NULL && st->kind == HS_POST_JSON && !(flags & MCP__SEND_RESPONSE) && text != NULL)
        mcp__hstream_json_to_sse(st); /* its messages must precede its answer: see there */
    if (st == NULL) {
        /* Not tied to a live request stream: the standalone stream carries it. */
        return text != NULL ? emit_standalone(hs, text, len) : MCP_OK;
    }
    if (st->kind == HS_POST_JSON) {
        finish_json(st, text, len, flags);
        mcp__hstream_free(st);
    } else {
        int last = (flags & MCP__SEND_RESPONSE) && st->pending <= 1;
        if (text != NULL) {
            st->last_event = last;
            mcp__hstream_event(st, text, len);
            st->last_event = 0;
        }
        if (flags & MCP__SEND_RESPONSE)
            st->pending--;
        if (last) {
            if (hs->t->share != NULL)
                hs->t->share->stream_end(st);
            mcp__hstream_end(st);
            mcp__hstream_free(st);
        }
    }
    if (hs->stateless && hs->streams == NULL)
        mcp__hsess_close_later(hs);
    return MCP_OK;
}

/* SEP-1699: the request's stream ends cleanly after a priming event that names where
 * to resume and when; the request goes on and its messages are stored meanwhile. */
static int io_close_stream(void *io, uint64_t stream, int retry_ms)
{
    hsess *hs = io;
    hstream *st = find_stream(hs, stream);
    if (mcp__hsess_primes(hs) && st != NULL && st->kind == HS_POST_JSON)
        st->kind = HS_POST_SSE; /* a JSON-mode request that polls is answered as SSE */
    if (!mcp__hsess_primes(hs) || st == NULL || st->kind != HS_POST_SSE)
        return MCP_ENOTSUP;
    if (st->req == NULL) {
        /* Disconnected here; a node following the stream for the client closes it. */
        if (hs->t->share != NULL)
            hs->t->share->pause(st, retry_ms);
        return MCP_OK; /* the client resumes when it can */
    }
    mcp__hstream_prime(st, retry_ms);
    mcp__http_stream_end(st->req);
    st->req = NULL;
    return MCP_OK;
}

static int io_close_standalone(void *io, int all, int retry_ms)
{
    hsess *hs = io;
    if (!mcp__hsess_primes(hs))
        return MCP_ENOTSUP;
    hstream *g;
    while ((g = mcp__hsess_standalone(hs)) != NULL) {
        hs->last_standalone = g->id;
        mcp__hstream_prime(g, retry_ms);
        mcp__http_stream_end(g->req);
        g->req = NULL;
        mcp__hstream_free(g);
        if (!all)
            break;
    }
    return MCP_OK;
}

/* ---- Backpressure: a handler waits for its stream's client ---- */

static int stream_congested(hstream *st);

static void on_stream_drained(void *arg, mcp__http_req *req)
{
    (void)req;
    mcp__hstream_maybe_ready(arg);
}

/* Every stream of the session is looked at: what one confirms can let another
 * go on (see window_full). Again while confirmations move the window. */
void mcp__hstream_maybe_ready(hstream *st)
{
    hsess *hs = st->hs;
    for (int pass = 0; pass < 4; pass++) {
        hs->window_moved = 0;
        for (hstream *p = hs->streams; p != NULL; p = p->next)
            if (!p->backlog_wait && !stream_congested(p))
                HS_ANS(hs)->stream_ready(hs->sess, p->id);
        if (!hs->window_moved)
            break;
    }
}

/* More of st's events unconfirmed than its share. */
static int over_share(const hstream *st)
{
    const shttp *t = st->hs->t;
    return st->unconfirmed >= t->max_unconfirmed ||
           st->unconfirmed_bytes >= t->max_unconfirmed_bytes;
}

static void confirm(hstream *st)
{
    if (st->unconfirmed > 0)
        st->hs->window_moved = 1;
    st->unconfirmed = st->unconfirmed_bytes = 0;
}

void mcp__hstream_confirmed_elsewhere(hsess *hs, uint64_t stream, uint64_t seq)
{
    hstream *st = find_stream(hs, stream);
    if (st == NULL || st->req != NULL || st->resuming != NULL)
        return;         /* not a stream of this node's, or its client is here now */
    st->away_since = 0; /* its client is not away: it reads elsewhere */
    if (st->unconfirmed == 0 || seq < st->unconfirmed_seq)
        return;
    /* The events after seq are not all this stream's (the session numbers them all):
     * counting them all errs on the safe side. */
    uint64_t left = hs->next_seq > seq ? hs->next_seq - seq : 0;
    if (left < st->unconfirmed) {
        st->unconfirmed_bytes = left == 0 ? 0 : st->unconfirmed_bytes / st->unconfirmed * left;
        st->unconfirmed = (size_t)left;
    }
    st->unconfirmed_seq = seq + 1;
    st->unconfirmed_at = hs->stored_bytes - st->unconfirmed_bytes;
    hs->window_moved = 1;
    mcp__hstream_maybe_ready(st);
}

/*
 * The store keeps a session's latest events and lets the oldest go (the memory
 * store: 10,000 events or 16 MiB by default): the oldest event that some
 * client has not confirmed must stay well inside that window, whichever stream
 * the newer events belong to. Otherwise a stream whose client reads could push
 * out what another one's absent client has not had.
 */
static int window_full(const hsess *hs)
{
    const shttp *t = hs->t;
    uint64_t seq = 0, at = 0;
    for (const hstream *p = hs->streams; p != NULL; p = p->next) {
        if (p->unconfirmed == 0)
            continue;
        if (seq == 0 || p->unconfirmed_seq < seq)
            seq = p->unconfirmed_seq;
        if (seq == p->unconfirmed_seq && (at == 0 || p->unconfirmed_at < at))
            at = p->unconfirmed_at;
    }
    return seq != 0 &&
           (hs->next_seq - seq >= t->window_events || hs->stored_bytes - at >= t->window_bytes);
}

/*
 * True when a handler must not send more on st for now, and then the transport
 * is set to call mcp__hstream_maybe_ready() when that may have changed:
 * - its reader is behind (more than pause_bytes unsent): until the socket takes
 *   half of it;
 * - with a store, more of its events went out unconfirmed than its share, or
 *   the session's oldest unconfirmed event is near the edge of what the store
 *   keeps: until the client has caught up (its TCP acknowledged them and its
 *   receive window is open again, so its application read them) or, if it is
 *   away, until it resumes. So a slow or absent reader never makes the store
 *   drop what it has not had ("nothing lost").
 */
static int stream_congested(hstream *st)
{
    hsess *hs = st->hs;
    shttp *t = hs->t;
    if (st->kind == HS_REMOTE)
        return 0; /* no handler here writes to it (and its drain callback is its own) */
    if (st->resuming != NULL || st->req == NULL) {
        if (t->store == NULL || (st->resuming == NULL && st->kind != HS_POST_SSE))
            return 0; /* nothing is kept for it: pausing would save nothing */
        return over_share(st) || window_full(hs);
    }
    size_t queued = mcp__http_stream_queued(st->req);
    if (queued > t->pause_bytes) {
        mcp__http_req_on_drain(st->req, t->pause_bytes / 2, on_stream_drained, st);
        return 1;
    }
    if (t->store == NULL || hs->httpsse || (!over_share(st) && !window_full(hs)))
        return 0;
    /* Only now the system calls: not for every message. */
    int unacked = queued > 0 || !mcp__http_req_caught_up(st->req);
    if (!unacked) {
        confirm(st);
        if (!over_share(st) && !window_full(hs))
            return 0;
    }
    /* Wait for this client's acknowledgements; a window held by another stream's
     * client moves when that one confirms or resumes (mcp__hstream_maybe_ready). */
    if (unacked)
        mcp__http_req_on_drain(st->req, 0, on_stream_drained, st);
    return 1;
}

/* The plug-in's store is behind this node (Redis, for the cluster): what a handler
 * sends next on st, to be stored there, waits for it to catch up, as it would for a
 * slow client. What is not stored does not wait. */
static int share_backlogged(hsess *hs, hstream *st)
{
    st->backlog_wait = 0; /* the latest word on the stream (see on_drained) */
    if (hs->t->share == NULL || hs->t->store == NULL || hs->httpsse || hs->stateless ||
        st->unstored || !hs->t->share->congested(hs->t))
        return 0;
    st->backlog_wait = 1;
    return 1;
}

static int io_congested(void *io, uint64_t stream)
{
    hsess *hs = io;
    hstream *st = hs->httpsse ? hs->streams : find_stream(hs, stream);
    /* A JSON-mode POST's messages travel on the standalone stream, whose other
     * sources cannot wait: its slow-reader limit covers it. */
    if (st == NULL || st->kind == HS_POST_JSON)
        return 0;
    return share_backlogged(hs, st) || stream_congested(st);
}

static int io_backlogged(void *io, uint64_t stream)
{
    hsess *hs = io;
    hstream *st = hs->httpsse ? hs->streams : find_stream(hs, stream);
    return st != NULL && st->kind != HS_POST_JSON && share_backlogged(hs, st);
}

/* No request of the session in flight any more: a stop may be waiting for that. */
static void io_idle(void *io)
{
    hsess *hs = io;
    hs->t->drain_check(hs->t);
}

static const char *io_header(void *io, uint64_t stream, const char *name)
{
    hstream *st = find_stream(io, stream);
    return st != NULL && st->req != NULL ? mcp__http_header(st->req, name) : NULL;
}

static void io_end(void *io)
{
    mcp__hsess_close_later(io);
}

static int io_here(void *io)
{
    hsess *hs = io;
    return hs->t->share != NULL ? hs->t->share->here(hs) : MCP__HERE_OWNER;
}

static void io_changed(void *io)
{
    hsess *hs = io;
    if (hs->t->share != NULL)
        hs->t->share->changed(hs);
}

static int io_make_room(void *io)
{
    hsess *hs = io;
    return mcp__shttp_evict_idle_session(hs->t);
}

static const char *io_peer(void *io, uint64_t stream)
{
    hstream *st = find_stream(io, stream);
    const char *src = st != NULL && st->req != NULL ? mcp__http_req_source(st->req) : NULL;
    return src != NULL ? src : "";
}

static const mcp__session_io shttp_io = {.send = io_send,
                                         .end = io_end,
                                         .changed = io_changed,
                                         .here = io_here,
                                         .idle = io_idle,
                                         .close_stream = io_close_stream,
                                         .close_standalone = io_close_standalone,
                                         .congested = io_congested,
                                         .backlogged = io_backlogged,
                                         .header = io_header,
                                         .make_room = io_make_room,
                                         .peer = io_peer};

/* ---- Sessions ---- */

void mcp__hsess_note_gap(hsess *hs, uint64_t stream, uint64_t seq)
{
    if (hs->ngaps < MCP__MAX_GAPS) {
        hs->gaps[hs->ngaps].stream = stream;
        hs->gaps[hs->ngaps].seq = seq;
        hs->ngaps++;
    } else {
        hs->gaps_overflowed = 1;
    }
}

int mcp__hsess_gap_after(const hsess *hs, uint64_t stream, uint64_t seq)
{
    if (hs->gaps_overflowed)
        return 1;
    for (int i = 0; i < hs->ngaps; i++)
        if (hs->gaps[i].stream == stream && hs->gaps[i].seq > seq)
            return 1;
    return 0;
}

void mcp__hsess_set_principal(hsess *hs, mcp__http_req *req)
{
    if (hs->t->auth != NULL && HS_ANS(hs)->set_principal != NULL)
        HS_ANS(hs)->set_principal(hs->sess, mcp__http_req_tag(req));
}

void mcp__hsess_feed(hsess *hs, mcp__http_req *req, json_t *v, uint64_t stream)
{
    mcp__hsess_set_principal(hs, req);
    HS_ANS(hs)->feed_value(hs->sess, v, stream);
}

int mcp__hsess_bind(hsess *hs, mcp__http_req *req)
{
    if (hs->t->auth == NULL)
        return MCP_OK;
    return mcp__principal_owner(mcp__http_req_tag(req), hs->owner);
}

int mcp__shttp_owner_is(shttp *t, mcp__http_req *req, const char *owner)
{
    char mine[65];
    if (t->auth == NULL)
        return 1;
    return owner != NULL && mcp__principal_owner(mcp__http_req_tag(req), mine) == MCP_OK &&
           strcmp(mine, owner) == 0;
}

int mcp__hsess_owned_by(const hsess *hs, mcp__http_req *req)
{
    return mcp__shttp_owner_is(hs->t, req, hs->owner);
}

void mcp__hsess_touch(hsess *hs)
{
    hs->last_active_ms = mcp__now_ms();
    hs->last_use = ++hs->t->uses;
}

static hsess *hsess_make(shttp *t, int stateless, int httpsse, const char *id, const char *tag)
{
    hsess *hs = calloc(1, sizeof(*hs));
    if (hs == NULL)
        return NULL;
    hs->t = t;
    hs->stateless = stateless;
    hs->httpsse = httpsse;
    mcp__hsess_touch(hs);
    if (id != NULL) {
        snprintf(hs->id, sizeof(hs->id), "%s", id);
        snprintf(hs->tag, sizeof(hs->tag), "%s", tag);
    } else if (!stateless) {
        /* The spec: globally unique and cryptographically secure, visible ASCII. */
        unsigned char raw[16];
        if (mcp__random_bytes(raw, sizeof(raw)) != MCP_OK) {
            free(hs);
            return NULL;
        }
        mcp__hex(raw, sizeof(raw), hs->id);
        unsigned char tag[8];
        if (mcp__random_bytes(tag, sizeof(tag)) != MCP_OK) {
            free(hs);
            return NULL;
        }
        mcp__hex(tag, sizeof(tag), hs->tag);
    }
    hs->sess = t->ans->ops->open(t->ans, &shttp_io, hs, stateless ? NULL : hs->id,
                                 stateless ? MCP__OPEN_STATELESS : 0);
    if (hs->sess == NULL || (!stateless && mcp__map_put(&t->sessions, hs->id, hs) != MCP_OK)) {
        if (hs->sess != NULL)
            HS_ANS(hs)->close(hs->sess);
        free(hs);
        return NULL;
    }
    if (t->share != NULL && t->share->session_init(hs) != MCP_OK) {
        if (!stateless)
            mcp__map_remove(&t->sessions, hs->id);
        HS_ANS(hs)->close(hs->sess);
        free(hs);
        return NULL;
    }
    MCP__LIST_PUSH(t->all, hs);
    if (t->share != NULL && !stateless && !httpsse)
        t->share->session_new(hs);
    return hs;
}

hsess *mcp__hsess_new(shttp *t, int stateless, int httpsse)
{
    return hsess_make(t, stateless, httpsse, NULL, NULL);
}

hsess *mcp__hsess_restore(shttp *t, const char *id, const char *tag)
{
    return hsess_make(t, 0, 0, id, tag);
}

static void session_source_forget(hsess *hs);

void mcp__hsess_close(hsess *hs)
{
    shttp *t = hs->t;
    if (hs->closing)
        return;
    hs->closing = 1;
    if (!hs->stateless)
        mcp__map_remove(&t->sessions, hs->id);
    session_source_forget(hs);
    mcp__shttp_resumes_cancel(hs);
    while (hs->streams != NULL) {
        hstream *st = hs->streams;
        if (st->req != NULL && st->kind == HS_POST_JSON)
            mcp__shttp_error(t, st->req, 404, MCP__SESSION_NOT_FOUND, "Session terminated");
        else if (st->req != NULL && st->begun)
            mcp__http_stream_end(st->req);
        else if (st->req != NULL)
            mcp__shttp_error(t, st->req, 404, MCP__SESSION_NOT_FOUND, "Session terminated");
        st->req = NULL;
        mcp__hstream_free(st);
    }
    /* What waits for a GET stream gets its answer while the answerer can take it. */
    mcp__outbox_end(hs);
    int keep = 0;
    int elsewhere = t->share != NULL && t->share->session_close(hs, &keep);
    if (!elsewhere && t->store != NULL && !hs->stateless && !hs->httpsse)
        mcp_event_store_drop_session(t->store, hs->id);
    /* Its handlers are cancelled; the protocol session lives on, detached, until the
     * last of them returns. */
    HS_ANS(hs)->close(hs->sess);
    MCP__LIST_UNLINK(t->all, hs);
    /* A session still queued for a deferred close must leave that list too. */
    for (hsess **p = &t->deferred; *p != NULL; p = &(*p)->deferred_next) {
        if (*p == hs) {
            *p = hs->deferred_next;
            break;
        }
    }
    /* The plug-in may still need it (a write of its shared record): freed then. */
    if (!keep) {
        if (t->share != NULL)
            t->share->session_free(hs);
        free(hs);
    }
}

static void run_deferred(uv_idle_t *h)
{
    shttp *t = h->data;
    uv_idle_stop(h);
    while (t->deferred != NULL)
        mcp__hsess_close(t->deferred);
}

void mcp__hsess_close_later(hsess *hs)
{
    shttp *t = hs->t;
    for (hsess *p = t->deferred; p != NULL; p = p->deferred_next)
        if (p == hs)
            return;
    hs->deferred_next = t->deferred;
    t->deferred = hs;
    uv_idle_start(&t->deferred_idle, run_deferred);
}

/* ---- Timers ---- */

/* Keep-alive comments on every open SSE stream, so idle streams survive proxies and
 * clients' body timeouts, and dead clients are found. */
void mcp__shttp_keepalive(uv_timer_t *h)
{
    shttp *t = h->data;
    uint64_t now = mcp__now_ms();
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        hstream *next;
        for (hstream *st = hs->streams; st != NULL; st = next) {
            next = st->next;
            if (st->req != NULL && st->begun &&
                now - st->last_write_ms + 50 >= (uint64_t)t->keepalive_ms)
                mcp__hstream_write(st, ": keepalive\n\n", 13);
            if (t->share != NULL && st->req != NULL)
                t->share->keepalive(st);
        }
    }
}

static int session_busy(hsess *hs)
{
    for (hstream *st = hs->streams; st != NULL; st = st->next)
        if (st->req != NULL)
            return 1;
    /* Handlers that only wait for their absent client do not keep it alive: when
     * it expires they are cancelled. */
    return HS_ANS(hs)->inflight(hs->sess) > 0 && !HS_ANS(hs)->all_paused(hs->sess);
}

static size_t sessions_of(const shttp *t, const char *source)
{
    return source[0] ? (size_t)(uintptr_t)mcp__map_get(&t->session_sources, source) : 0;
}

void mcp__hsess_set_source(hsess *hs, mcp__http_req *req)
{
    shttp *t = hs->t;
    const char *src = mcp__http_req_source(req);
    size_t n = strlen(src);
    if (n == 0 || n >= sizeof(hs->source) || hs->source[0] != '\0')
        return;
    if (mcp__map_put(&t->session_sources, src, (void *)(uintptr_t)(sessions_of(t, src) + 1)) !=
        MCP_OK)
        return; /* counted nowhere */
    memcpy(hs->source, src, n + 1);
}

static void session_source_forget(hsess *hs)
{
    shttp *t = hs->t;
    size_t n = sessions_of(t, hs->source);
    if (n > 1)
        (void)mcp__map_put(&t->session_sources, hs->source, (void *)(uintptr_t)(n - 1));
    else if (n == 1)
        mcp__map_remove(&t->session_sources, hs->source);
    hs->source[0] = '\0';
}

/* Whether a goes before b when a session must make room. */
static int evict_before(const shttp *t, const hsess *a, const hsess *b)
{
    if (a->used != b->used)
        return !a->used;
    size_t na = sessions_of(t, a->source), nb = sessions_of(t, b->source);
    if (na != nb)
        return na > nb;
    return a->last_use < b->last_use;
}

/*
 * Only idle sessions (no open stream, no request in flight, no resume) may make
 * room, and of those first the ones never used after initialize (a flood of
 * them is what fills the table), then those of the address that opened the
 * most, then the least recently used: so one client cannot end everyone
 * else's sessions by opening new ones.
 */
int mcp__shttp_evict_idle_session(shttp *t)
{
    hsess *victim = NULL;
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        if (hs->stateless || hs->httpsse || hs->closing || hs->resumes != NULL ||
            HS_ANS(hs)->inflight(hs->sess) > 0)
            continue;
        int open = 0;
        for (hstream *st = hs->streams; st != NULL && !open; st = st->next)
            open = st->req != NULL;
        if (!open && (victim == NULL || evict_before(t, hs, victim)))
            victim = hs;
    }
    if (victim == NULL)
        return 0;
    mcp__info("session %s closed to make room (%s, opened from %s)", victim->id,
              victim->used ? "idle" : "never used", victim->source[0] ? victim->source : "?");
    if (t->share != NULL) /* other nodes may still serve it, and so can this one */
        t->share->leaving(victim, MCP__LEAVE_EVICTED);
    mcp__hsess_close(victim);
    return 1;
}

int mcp__shttp_get_streams_full(shttp *t)
{
    size_t max = t->http != NULL ? mcp__http_server_max_connections(t->http) : 0;
    /* Counted only when connections run short, which is when it matters. */
    if (max == 0 || mcp__http_server_connections(t->http) < max / 2)
        return 0;
    size_t n = 0;
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        for (hstream *st = hs->streams; st != NULL; st = st->next)
            n += (st->kind == HS_GET || st->kind == HS_IDLE || st->kind == HS_HTTPSSE ||
                  st->kind == HS_REMOTE || st->long_lived) &&
                 st->req != NULL;
        for (hresume *r = hs->resumes; r != NULL; r = mcp__shttp_resume_next(r))
            n++;
    }
    return n >= max / 2;
}

/*
 * A stream whose client is away. Handlers paused for it hold worker threads that
 * every other client needs, and its unconfirmed events hold the session's other
 * streams back (window_full), so that lasts as long as a stalled reader is
 * waited for: then its paused handlers are cancelled (the client, resuming,
 * finds what they sent and their answer) and its events stop holding the
 * others back (the store still keeps them within its bounds).
 */
static void sweep_away(hstream *st, uint64_t now, uint64_t limit)
{
    hsess *hs = st->hs;
    if (st->away_since == 0) {
        st->away_since = now;
        return;
    }
    uint64_t away = now - st->away_since;
    if (away < limit)
        return;
    if (HS_ANS(hs)->cancel_paused(hs->sess, st->id) > 0)
        mcp__info("session %s: handlers paused for a client away %llu ms were cancelled", hs->id,
                  (unsigned long long)away);
    if (st->unconfirmed > 0) {
        confirm(st);
        mcp__hstream_maybe_ready(st);
    }
}

/*
 * A stream whose client has taken nothing of what waits for it (in our queue or
 * the kernel's) for the session idle time, or a minute at most, is cut: the
 * client is as good as away, and a connection held open without reading must
 * not keep its session, its paused handlers and its place for ever. A client
 * that was only slow resumes and loses nothing.
 */
static void cut_stalled_streams(hsess *hs, uint64_t now)
{
    uint64_t limit = hs->t->away_limit_ms;
    hstream *next;
    for (hstream *st = hs->streams; st != NULL; st = next) {
        next = st->next;
        if (st->req == NULL && st->resuming == NULL) {
            sweep_away(st, now, limit);
            continue;
        }
        st->away_since = 0;
        if (st->req == NULL || !st->begun)
            continue;
        size_t unacked = mcp__http_req_unacked(st->req);
        size_t waiting =
            unacked == SIZE_MAX ? SIZE_MAX : mcp__http_stream_queued(st->req) + unacked;
        uint64_t acked = mcp__http_req_acked(st->req);
        if (waiting == 0 || acked != st->stall_mark) {
            st->stall_mark = acked;
            st->stall_since = now;
            continue;
        }
        if (now - st->stall_since < limit)
            continue;
        mcp__warn("session %s: a stream's reader took nothing for %llu ms; closing it", hs->id,
                  (unsigned long long)(now - st->stall_since));
        if (st->kind == HS_HTTPSSE || hs->stateless) {
            mcp__http_req_abort(st->req);
            st->req = NULL;
            /* An HTTP+SSE session ends with its stream; a stateless one (2026-07-28,
             * --stateless) is one request, and its stream is all it has. */
            mcp__hsess_close_later(hs);
            return;
        }
        mcp__shttp_stream_closed(st, st->req);
    }
}

/* Sessions idle past the limit expire, but never while a stream is open or a
 * request runs. */
void mcp__shttp_sweep(uv_timer_t *h)
{
    shttp *t = h->data;
    if (t->store != NULL)
        mcp_event_store_expire(t->store);
    uint64_t now = mcp__now_ms();
    hsess *next;
    for (hsess *hs = t->all; hs != NULL; hs = next) {
        next = hs->next;
        cut_stalled_streams(hs, now);
        if (hs->stateless || session_busy(hs)) {
            hs->last_active_ms = hs->stateless ? hs->last_active_ms : now;
            /* Kept alive here (an open stream, a request running): elsewhere too. */
            if (t->share != NULL)
                t->share->touch(hs);
            continue;
        }
        /* Used during this sweep (a cut stream touches it): later than now. */
        if (hs->last_active_ms <= now && now - hs->last_active_ms >= (uint64_t)t->idle_ms) {
            int elsewhere = t->share != NULL && t->share->leaving(hs, MCP__LEAVE_EXPIRED);
            mcp__info("session %s expired after %d ms idle%s", hs->id, t->idle_ms,
                      elsewhere ? " here (its record expires by itself)" : "");
            mcp__hsess_close(hs);
        }
    }
}
