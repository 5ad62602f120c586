/* SPDX-License-Identifier: MIT */
/*
 * The in-memory event store. Per session, events sit in one FIFO in append
 * order (for eviction: the oldest go first) and in a deque per stream (for
 * replay: a binary search finds where to resume, then the rest is copied out).
 * Since a stream's events are appended in seq order, the session FIFO's head
 * is always the head of its stream's deque.
 */
#include <stdlib.h>
#include <string.h>

#include <mcp/store.h>

#include "util/util.h"

#define DEFAULT_MAX_EVENTS 10000
#define DEFAULT_MAX_BYTES (16u << 20)
#define DEFAULT_TTL_MS (5 * 60 * 1000)
#define DEFAULT_MAX_TOTAL_BYTES (256u << 20)

typedef struct mstream mstream;

typedef struct mev {
    struct mev *next; /* in the session FIFO */
    mstream *st;
    uint64_t seq;
    uint64_t born_ms;
    size_t len;
    char data[];
} mev;

struct mstream {
    uint64_t id;
    char key[24];
    mev **ring; /* deque: ring[(head + i) % cap] */
    size_t head, count, cap;
};

typedef struct mstore mstore;

typedef struct msess {
    mstore *m;
    mev *fifo_head, *fifo_tail;
    size_t nevents, nbytes;
    mcp__map streams; /* "<id>" -> mstream */
} msess;

struct mstore {
    mcp_memory_store_opts o;
    mcp__map sessions; /* session id -> msess */
    size_t total;      /* bytes of every session */
};

static mev *ring_at(const mstream *st, size_t i)
{
    return st->ring[(st->head + i) % st->cap];
}

static int ring_push(mstream *st, mev *e)
{
    if (st->count == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 8;
        mev **ring = malloc(cap * sizeof(*ring));
        if (ring == NULL)
            return MCP_ENOMEM;
        for (size_t i = 0; i < st->count; i++)
            ring[i] = ring_at(st, i);
        free(st->ring);
        st->ring = ring;
        st->cap = cap;
        st->head = 0;
    }
    st->ring[(st->head + st->count) % st->cap] = e;
    st->count++;
    return MCP_OK;
}

static void stream_free(mstream *st)
{
    free(st->ring);
    free(st);
}

/* Drops the session's oldest event. */
static void evict_one(msess *ss)
{
    mev *e = ss->fifo_head;
    mstream *st = e->st;
    ss->fifo_head = e->next;
    if (ss->fifo_head == NULL)
        ss->fifo_tail = NULL;
    ss->nevents--;
    ss->nbytes -= e->len;
    ss->m->total -= e->len;
    /* It is the head of its stream too. */
    st->head = (st->head + 1) % st->cap;
    st->count--;
    if (st->count == 0) {
        /* Nothing left to resume after: forget the stream; a resume of it is then an
         * unknown (expired) id. */
        mcp__map_remove(&ss->streams, st->key);
        stream_free(st);
    }
    free(e);
}

static void expire(mstore *m, msess *ss)
{
    uint64_t now = mcp__now_ms();
    while (ss->fifo_head != NULL && (ss->nevents > m->o.max_events || ss->nbytes > m->o.max_bytes ||
                                     now - ss->fifo_head->born_ms > (uint64_t)m->o.ttl_ms))
        evict_one(ss);
}

/* The bound on all sessions together: the session that grows pays first (keeping its
 * newest event), then the others, oldest events first within each. */
static void enforce_total(mstore *m, msess *cur)
{
    while (m->total > m->o.max_total_bytes && cur->nevents > 1)
        evict_one(cur);
    size_t pos = 0;
    void *v;
    while (m->total > m->o.max_total_bytes && mcp__map_next(&m->sessions, &pos, NULL, &v)) {
        msess *ss = v;
        while (ss != cur && m->total > m->o.max_total_bytes && ss->fifo_head != NULL)
            evict_one(ss);
    }
}

static void sess_free(msess *ss)
{
    while (ss->fifo_head != NULL)
        evict_one(ss);
    /* Streams still listed hold no events now: evict_one freed every one of them. */
    mcp__map_free(&ss->streams);
    free(ss);
}

static int m_append(void *self, const char *session, uint64_t stream, uint64_t seq,
                    const char *data, size_t len)
{
    mstore *m = self;
    msess *ss = mcp__map_get(&m->sessions, session);
    if (ss == NULL) {
        ss = calloc(1, sizeof(*ss));
        if (ss == NULL || mcp__map_put(&m->sessions, session, ss) != MCP_OK) {
            free(ss);
            return MCP_ENOMEM;
        }
        ss->m = m;
    }
    char key[24];
    snprintf(key, sizeof(key), "%llu", (unsigned long long)stream);
    mstream *st = mcp__map_get(&ss->streams, key);
    if (st == NULL) {
        st = calloc(1, sizeof(*st));
        if (st == NULL)
            return MCP_ENOMEM;
        st->id = stream;
        memcpy(st->key, key, sizeof(key));
        if (mcp__map_put(&ss->streams, key, st) != MCP_OK) {
            free(st);
            return MCP_ENOMEM;
        }
    }
    if (st->count > 0 && ring_at(st, st->count - 1)->seq >= seq)
        return MCP_EINVAL; /* seqs only grow within a stream */
    mev *e = malloc(sizeof(*e) + len);
    if (e == NULL || ring_push(st, e) != MCP_OK) {
        free(e);
        if (st->count == 0) {
            mcp__map_remove(&ss->streams, key);
            stream_free(st);
        }
        return MCP_ENOMEM;
    }
    e->next = NULL;
    e->st = st;
    e->seq = seq;
    e->born_ms = mcp__now_ms();
    e->len = len;
    if (len > 0)
        memcpy(e->data, data, len);
    if (ss->fifo_tail != NULL)
        ss->fifo_tail->next = e;
    else
        ss->fifo_head = e;
    ss->fifo_tail = e;
    ss->nevents++;
    ss->nbytes += len;
    m->total += len;
    expire(m, ss);
    enforce_total(m, ss);
    return MCP_OK;
}

static int m_replay(void *self, const char *session, uint64_t stream, uint64_t after_seq,
                    mcp_event_fn emit, mcp_replay_done_fn done, void *arg)
{
    mstore *m = self;
    msess *ss = mcp__map_get(&m->sessions, session);
    mstream *st = NULL;
    if (ss != NULL) {
        expire(m, ss);
        char key[24];
        snprintf(key, sizeof(key), "%llu", (unsigned long long)stream);
        st = mcp__map_get(&ss->streams, key);
    }
    /* Binary search for the event the client saw last: it must still be here, or
     * what followed it may be gone too. */
    size_t lo = 0, hi = st ? st->count : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ring_at(st, mid)->seq < after_seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (st == NULL || lo == st->count || ring_at(st, lo)->seq != after_seq) {
        done(arg, MCP_ENOENT);
        return MCP_OK;
    }
    for (size_t i = lo + 1; i < st->count; i++) {
        mev *e = ring_at(st, i);
        if (e->len > 0)
            emit(arg, e->seq, e->data, e->len);
    }
    done(arg, MCP_OK);
    return MCP_OK;
}

static void m_drop_session(void *self, const char *session)
{
    mstore *m = self;
    msess *ss = mcp__map_remove(&m->sessions, session);
    if (ss != NULL)
        sess_free(ss);
}

static void m_expire(void *self)
{
    mstore *m = self;
    size_t pos = 0;
    const char *key;
    void *v;
    while (mcp__map_next(&m->sessions, &pos, &key, &v)) {
        msess *ss = v;
        expire(m, ss);
        if (ss->fifo_head == NULL) {
            mcp__map_remove(&m->sessions, key);
            sess_free(ss);
        }
    }
}

static void m_destroy(void *self)
{
    mstore *m = self;
    size_t pos = 0;
    void *v;
    while (mcp__map_next(&m->sessions, &pos, NULL, &v))
        sess_free(v);
    mcp__map_free(&m->sessions);
    free(m);
}

/* No attach or detach: the store keeps no handle on any loop. */
static const mcp_event_store_ops memory_ops = {
    .size = sizeof(mcp_event_store_ops),
    .append = m_append,
    .replay = m_replay,
    .drop_session = m_drop_session,
    .expire = m_expire,
    .destroy = m_destroy,
};

mcp_event_store *mcp_memory_store_new(const mcp_memory_store_opts *opts)
{
    mstore *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    if (mcp__opts_copy(&m->o, sizeof(m->o), opts, sizeof(m->o)) != MCP_OK) {
        free(m);
        return NULL;
    }
    if (m->o.max_events == 0)
        m->o.max_events = DEFAULT_MAX_EVENTS;
    if (m->o.max_bytes == 0)
        m->o.max_bytes = DEFAULT_MAX_BYTES;
    if (m->o.ttl_ms <= 0)
        m->o.ttl_ms = DEFAULT_TTL_MS;
    if (m->o.max_total_bytes == 0)
        m->o.max_total_bytes = DEFAULT_MAX_TOTAL_BYTES;
    mcp_event_store *s = mcp_event_store_new(&memory_ops, m);
    if (s == NULL)
        free(m);
    return s;
}
