/* SPDX-License-Identifier: MIT */
/*
 * The in-memory event store. A session's events sit in append order (the oldest go
 * first), packed one after another in blocks of memory: each is a few bytes of header
 * (varints: its length, its stream's slot, its seq as a difference from the event
 * before, its age when appended from the block's start) and then its bytes. So an
 * event costs its bytes and about five more, not an allocation of its own (a stored
 * notification of 130 bytes took 197 bytes of RSS when each event was allocated
 * apart). Blocks grow from 256 bytes to 64 KiB as a session stores more, so a session
 * with a few events holds little; one larger than that gets a block of its own.
 *
 * A replay walks the session's events from the oldest and emits those of its stream
 * after the one it resumes after, which must still be there (what followed it may be
 * gone too otherwise): at most max_events steps, and replays are rare.
 */
#include <stdlib.h>
#include <string.h>

#include <mcp/store.h>

#include "util/util.h"

#define DEFAULT_MAX_EVENTS 10000
#define DEFAULT_MAX_BYTES (16u << 20)
#define DEFAULT_TTL_MS (5 * 60 * 1000)
#define DEFAULT_MAX_TOTAL_BYTES (256u << 20)
#define BLOCK_FIRST 256
#define BLOCK_MAX (64u << 10)
/* The longest header: four varints of 10 bytes. */
#define HEADER_MAX 40

typedef struct mblock {
    struct mblock *next;
    uint64_t base_ms;  /* ages are counted from here */
    size_t head, used; /* the live events are data[head, used) */
    size_t cap;
    unsigned char data[];
} mblock;

/* A stream with events in the session: its slot is what events name it by. */
typedef struct mslot {
    uint64_t id;
    uint64_t last_seq; /* seqs only grow within a stream */
    size_t count;      /* its events still stored; 0: the slot is free */
    size_t free_next;  /* free: the next free slot's index + 1 (0: none) */
} mslot;

typedef struct mstore mstore;

typedef struct msess {
    mstore *m;
    mblock *first, *last;
    uint64_t last_seq;      /* of the newest event, which the next one's seq is told from */
    uint64_t head_seq;      /* of the oldest event, read back as events go */
    size_t nevents, nbytes; /* bytes: the events' own, as the bounds count them */
    int replaying;          /* a replay walks its blocks: nothing of it is evicted */
    mslot *slots;
    size_t nslots;
    size_t top;       /* slots from here on were never used */
    size_t free_head; /* the first free slot below top, index + 1 (0: none) */
    size_t last_slot; /* the slot slot_of found last (checked before the map) */
    mcp__map streams; /* "<id>" -> slot index + 1 */
} msess;

struct mstore {
    mcp_memory_store_opts o;
    mcp__map sessions; /* session id -> msess */
    size_t total;      /* bytes of every session */
};

/* ---- Varints ---- */

static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static uint64_t get_varint(const unsigned char **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80 || shift >= 63)
            return v;
    }
}

/* Signed differences as zigzag: small either way. */
static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- Events ---- */

typedef struct mev {
    size_t len;
    size_t slot;
    uint64_t seq;
    uint64_t born_ms;
    const char *data;
    size_t size; /* of the whole record */
} mev;

/* Reads the event at data[off] of b; prev_seq is the seq of the event before it. */
static void read_event(const mblock *b, size_t off, uint64_t prev_seq, mev *e)
{
    const unsigned char *p = b->data + off;
    e->len = (size_t)get_varint(&p);
    e->slot = (size_t)get_varint(&p);
    e->seq = prev_seq + (uint64_t)unzigzag(get_varint(&p));
    e->born_ms = b->base_ms + get_varint(&p);
    e->data = (const char *)p;
    e->size = (size_t)(p - (b->data + off)) + e->len;
}

/* ---- Sessions ---- */

static void slot_free(msess *ss, size_t i)
{
    char key[24];
    mcp__u64_str(ss->slots[i].id, key);
    mcp__map_remove(&ss->streams, key);
    ss->slots[i].count = 0;
    ss->slots[i].free_next = ss->free_head;
    ss->free_head = i + 1;
}

/* Drops the session's oldest event. */
static void evict_one(msess *ss)
{
    mblock *b = ss->first;
    mev e;
    /* The seq of the event before the oldest: the oldest's was kept as it is. */
    read_event(b, b->head, 0, &e);
    uint64_t seq = ss->head_seq;
    ss->nevents--;
    ss->nbytes -= e.len;
    ss->m->total -= e.len;
    mslot *s = &ss->slots[e.slot];
    if (--s->count == 0)
        slot_free(ss, e.slot); /* nothing left to resume after: an unknown id now */
    b->head += e.size;
    if (b->head == b->used) {
        ss->first = b->next;
        if (ss->first == NULL)
            ss->last = NULL;
        free(b);
        b = ss->first;
    }
    /* The next oldest's seq, from the difference it carries. */
    if (b != NULL) {
        mev next;
        read_event(b, b->head, seq, &next);
        ss->head_seq = next.seq;
    }
}

static uint64_t head_born(const msess *ss)
{
    mev e;
    read_event(ss->first, ss->first->head, 0, &e);
    return e.born_ms;
}

static void expire(mstore *m, msess *ss, uint64_t now)
{
    while (ss->first != NULL && !ss->replaying &&
           (ss->nevents > m->o.max_events || ss->nbytes > m->o.max_bytes ||
            now - head_born(ss) > (uint64_t)m->o.ttl_ms))
        evict_one(ss);
}

/* The bound on all sessions together: the session that grows pays first (keeping its
 * newest event), then the others, oldest events first within each. */
static void enforce_total(mstore *m, msess *cur)
{
    while (m->total > m->o.max_total_bytes && cur->nevents > 1 && !cur->replaying)
        evict_one(cur);
    size_t pos = 0;
    void *v;
    while (m->total > m->o.max_total_bytes && mcp__map_next(&m->sessions, &pos, NULL, &v)) {
        msess *ss = v;
        while (ss != cur && m->total > m->o.max_total_bytes && ss->first != NULL && !ss->replaying)
            evict_one(ss);
    }
}

static void sess_free(msess *ss)
{
    while (ss->first != NULL) {
        mblock *b = ss->first;
        ss->first = b->next;
        free(b);
    }
    mcp__map_free(&ss->streams);
    free(ss->slots);
    free(ss);
}

/* The slot of stream `id` (made when new), or -1 out of memory. */
static long slot_of(msess *ss, uint64_t id, int make)
{
    /* Most appends are to the stream of the one before. */
    if (ss->last_slot < ss->nslots && ss->slots[ss->last_slot].id == id &&
        ss->slots[ss->last_slot].count > 0)
        return (long)ss->last_slot;
    char key[24];
    mcp__u64_str(id, key);
    uintptr_t v = (uintptr_t)mcp__map_get(&ss->streams, key);
    if (v != 0)
        ss->last_slot = v - 1;
    if (v != 0 || !make)
        return (long)v - 1;
    /* A free slot (the last freed first), else one never used: no search. */
    if (ss->free_head == 0 && ss->top == ss->nslots) {
        size_t n = ss->nslots ? ss->nslots * 2 : 4;
        mslot *s = realloc(ss->slots, n * sizeof(*s));
        if (s == NULL)
            return -1;
        memset(s + ss->nslots, 0, (n - ss->nslots) * sizeof(*s));
        ss->slots = s;
        ss->nslots = n;
    }
    size_t i = ss->free_head != 0 ? ss->free_head - 1 : ss->top;
    if (mcp__map_put(&ss->streams, key, (void *)(uintptr_t)(i + 1)) != MCP_OK)
        return -1;
    if (ss->free_head != 0)
        ss->free_head = ss->slots[i].free_next;
    else
        ss->top++;
    ss->slots[i] = (mslot){.id = id, .last_seq = 0, .count = 0};
    ss->last_slot = i;
    return (long)i;
}

/* Room for need more bytes at the end of the session's last block. */
static mblock *room(msess *ss, size_t need)
{
    mblock *b = ss->last;
    if (b != NULL && b->cap - b->used >= need)
        return b;
    size_t cap = b != NULL ? b->cap * 2 : BLOCK_FIRST;
    if (cap > BLOCK_MAX)
        cap = BLOCK_MAX;
    if (cap < need)
        cap = need;
    mblock *nb = malloc(sizeof(*nb) + cap);
    if (nb == NULL)
        return NULL;
    nb->next = NULL;
    nb->base_ms = mcp__now_ms();
    nb->head = nb->used = 0;
    nb->cap = cap;
    if (b != NULL)
        b->next = nb;
    else
        ss->first = nb;
    ss->last = nb;
    return nb;
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
    long slot = slot_of(ss, stream, 1);
    if (slot < 0)
        return MCP_ENOMEM;
    mslot *s = &ss->slots[slot];
    if (s->count > 0 && s->last_seq >= seq)
        return MCP_EINVAL; /* seqs only grow within a stream */
    uint64_t now = mcp__now_ms();
    mblock *b = room(ss, HEADER_MAX + len);
    if (b == NULL) {
        if (s->count == 0)
            slot_free(ss, (size_t)slot);
        return MCP_ENOMEM;
    }
    unsigned char *p = b->data + b->used;
    size_t n = put_varint(p, len);
    n += put_varint(p + n, (uint64_t)slot);
    n += put_varint(p + n, zigzag((int64_t)(seq - ss->last_seq)));
    n += put_varint(p + n, now - b->base_ms);
    if (len > 0)
        memcpy(p + n, data, len);
    b->used += n + len;
    if (ss->nevents == 0)
        ss->head_seq = seq;
    ss->last_seq = seq;
    s->last_seq = seq;
    s->count++;
    ss->nevents++;
    ss->nbytes += len;
    m->total += len;
    expire(m, ss, now);
    enforce_total(m, ss);
    return MCP_OK;
}

static int m_replay(void *self, const char *session, uint64_t stream, uint64_t after_seq,
                    mcp_event_fn emit, mcp_replay_done_fn done, void *arg)
{
    mstore *m = self;
    msess *ss = mcp__map_get(&m->sessions, session);
    long slot = -1;
    if (ss != NULL) {
        expire(m, ss, mcp__now_ms());
        slot = slot_of(ss, stream, 0);
    }
    if (slot < 0 || after_seq > ss->slots[slot].last_seq) {
        done(arg, MCP_ENOENT);
        return MCP_OK;
    }
    /* The event resumed after must still be here: what followed it may be gone too
     * otherwise. A stream's seqs grow in append order, so what follows it comes after
     * it in the walk, and nothing is emitted unless it was found. While emit runs, an
     * append to this session (emit's caller may store one) evicts nothing of it: the
     * blocks walked stay; the bounds are kept once the walk is over. */
    int found = 0;
    uint64_t seq = 0;
    int first = 1;
    ss->replaying = 1;
    for (const mblock *b = ss->first; b != NULL; b = b->next) {
        for (size_t off = b->head; off < b->used;) {
            mev e;
            read_event(b, off, seq, &e);
            if (first) {
                e.seq = ss->head_seq; /* the oldest's difference is from an evicted one */
                first = 0;
            }
            seq = e.seq;
            off += e.size;
            if (e.slot != (size_t)slot)
                continue;
            if (e.seq == after_seq)
                found = 1;
            else if (found && e.seq > after_seq && e.len > 0)
                emit(arg, e.seq, e.data, e.len);
        }
    }
    ss->replaying = 0;
    expire(m, ss, mcp__now_ms());
    enforce_total(m, ss);
    done(arg, found ? MCP_OK : MCP_ENOENT);
    return MCP_OK;
}

static void m_drop_session(void *self, const char *session)
{
    mstore *m = self;
    msess *ss = mcp__map_remove(&m->sessions, session);
    if (ss != NULL) {
        m->total -= ss->nbytes;
        sess_free(ss);
    }
}

static void m_expire(void *self)
{
    mstore *m = self;
    size_t pos = 0;
    const char *key;
    void *v;
    while (mcp__map_next(&m->sessions, &pos, &key, &v)) {
        msess *ss = v;
        expire(m, ss, mcp__now_ms());
        if (ss->first == NULL) {
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
