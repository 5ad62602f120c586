/* SPDX-License-Identifier: MIT */
/*
 * The event store on Redis, with the memory store's semantics (store/memory.c): a
 * replay emits the events of a stream after after_seq in order, skips the empty ones
 * (markers) while letting them be resumed after, and answers MCP_ENOENT when after_seq
 * is not an event the store holds for the stream, including after_seq 0 (the
 * transport's seqs begin at 1: an append of seq 0 is refused with MCP_EINVAL).
 *
 * One Redis stream per session and node (P e:<session>:<group>, the group being the
 * stream id's bits from MCP__CLUSTER_GROUP_SHIFT up: in the transport's ids, the node
 * that writes it): the transport numbers a session's events on a node from one counter,
 * so every event of every stream of the session on this node is one entry whose id is
 * its seq, "<seq>-0", in append order, and a marker takes "<seq>-<n>" after the last
 * (XADD "<seq>-*"). An entry's fields, each one letter:
 *
 *   s <stream>   the stream it belongs to (every entry)
 *   d <data>     an event (empty: a priming event, the place of a pause)
 *   e 1          the stream's end: alone, or with its last event
 *   g 1          the owner could not store event <seq> of the stream
 *   p <seq>      the stream's empty event <seq> came just before this one (see below)
 *   o <text>     the stream's open text (mcp__cluster_open_next), on each of its events:
 *                a follower finds it whichever event it resumes after
 *
 * Seqs must grow within a session (the memory store asks it only within a stream); a
 * seq not above the stream's last is refused by Redis with the same result as a replay
 * gives: the event is not kept.
 *
 * An append is one XADD and, for an event with data, a PUBLISH of "d<seq>:<data>" on
 * the stream's channel (P c:<session>:<stream>), written together and not waited for:
 * it returns MCP_OK once queued. An event larger than max_event_bytes is not kept but
 * still published: like the memory store's, it reaches whoever follows live and cannot
 * be resumed. An empty event is not published (a follower has nothing to emit of it).
 *
 * While appends are deferred (mcp__cluster_defer_flush), an empty event is held until
 * the next append of its session on this node, the flush, or the end of the loop turn (a
 * uv_check), whichever comes first: when
 * that is an event of the same stream, one entry carries both (p <seq of the empty
 * one>), and a replay after the empty one finds it there. A request answered in the
 * loop turn that opened its stream then costs one XADD and one PUBLISH: its priming
 * event, its answer, its open text and its end in one entry. Every client reads an
 * event's id only after the flush, so what it resumes after is always stored.
 *
 * The last event of a stream (mcp__cluster_final_next) is stored with the end and
 * published as "f<seq>:<data>".
 *
 * Bounds: MAXLEN ~ max_events on every XADD (the memory store's per session: the
 * oldest events of the session go first, whatever their stream), and the transport
 * trims by MINID (mcp__cluster_events_trim) past its byte bounds.
 *
 * Reading: a replay or a follow reads pages of the session's Redis stream from the event
 * resumed after, passing over other streams' entries, each page with the stream's oldest
 * entry in one script (page_lua): trimming takes the oldest entries, so an oldest entry
 * past the last one read says that what followed it went before it was read.
 *
 * Lifetimes: the first append of a session's stream on this node, and the first one
 * each ttl after, makes the stream (no NOMKSTREAM) and gives it twice the events' time
 * to live (PEXPIRE 2*ttl): every event then lives at least ttl after its append, with
 * one PEXPIRE per ttl rather than one per event. It also adds the stream's key to its
 * session's set (P k:<s>), which lives three times the events' time to live: the set
 * outlives every stream it lists, so deleting the session finds them all. The other
 * appends do not make the stream (NOMKSTREAM): one that another node deleted with its
 * session in the meantime stays deleted, never made again without a time to live.
 */
#include <stdlib.h>
#include <string.h>

#include "redis_int.h"

/* Replay pages: the first of PAGE_FIRST entries, the next sized from the bytes per
 * entry seen so that a page holds about PAGE_BYTES, between 1 and PAGE_MAX
 * entries: neither 10,000 small events nor a few large ones make one giant reply. */
#define PAGE_FIRST 128
#define PAGE_MAX 512
#define PAGE_BYTES (1u << 20)
/* Streams remembered as registered; past it the memory starts again empty (each
 * stream is then registered again on its next append: three more commands). */
#define REGISTERED_MAX 4096
/* A payload buffer grown past this is given back after the append. */
#define PBUF_KEEP (64u << 10)
/* Empty events held at once, at most: past it the oldest is written. */
#define HELD_MAX 256

typedef struct registered {
    uint64_t at; /* when the stream was last made, its key added to the set */
} registered;

/* A held event's open text (a copy of mcp__cluster_open_next's). */
typedef struct opening {
    size_t len;
    char text[];
} opening;

/* An empty event held for the next append of its session (see the top). */
typedef struct held {
    struct held *next;
    uint64_t stream, seq;
    opening *open; /* its stream's open text, or NULL */
    char *session;
    char key[]; /* of its Redis stream */
} held;

/* ---- Numbers and ids ---- */

/* Reads decimal digits at s (at most n bytes) into *out; returns how many, 0 when
 * none or on overflow. */
static size_t parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return i;
}

/* A stream entry id "<ms>-<seq>". */
static int parse_id(const char *s, size_t n, uint64_t *ms, uint64_t *sq)
{
    size_t a = parse_u64(s, n, ms);
    if (a == 0 || a + 1 >= n || s[a] != '-')
        return -1;
    size_t b = parse_u64(s + a + 1, n - a - 1, sq);
    return b == n - a - 1 ? 0 : -1;
}

/* A whole decimal number in a reply string. */
static int parse_whole(const redisReply *r, uint64_t *v)
{
    return r->len > 0 && parse_u64(r->str, r->len, v) == r->len ? 0 : -1;
}

int mcp__rc_key_events(const mcp__cluster *c, mcp__buf *b, const char *session, uint64_t stream)
{
    return mcp__rc_key_stream(c, b, "e:", session, stream >> MCP__CLUSTER_GROUP_SHIFT);
}

int mcp__rc_key_chan(const mcp__cluster *c, mcp__buf *b, const char *session, uint64_t stream)
{
    return mcp__rc_key_stream(c, b, "c:", session, stream);
}

/* ---- Live messages ---- */

static int live_build(mcp__buf *b, char kind, uint64_t seq, const char *data, size_t len)
{
    mcp__buf_reset(b);
    if (mcp__buf_append(b, &kind, 1) != MCP_OK || mcp__buf_append_u64(b, seq) != MCP_OK)
        return MCP_ENOMEM;
    if ((kind == 'd' || kind == 'f' || kind == 'p') &&
        (mcp__buf_append(b, ":", 1) != MCP_OK || mcp__buf_append(b, data, len) != MCP_OK))
        return MCP_ENOMEM;
    return MCP_OK;
}

int mcp__rc_live_parse(const char *msg, size_t len, mcp__rentry *e)
{
    if (len < 2 ||
        (msg[0] != 'd' && msg[0] != 'f' && msg[0] != 'e' && msg[0] != 'p' && msg[0] != 'g'))
        return -1;
    size_t n = parse_u64(msg + 1, len - 1, &e->seq);
    if (n == 0)
        return -1;
    e->end = msg[0] == 'e' || msg[0] == 'f';
    e->pause = msg[0] == 'p';
    e->gap = msg[0] == 'g';
    e->data = NULL;
    e->len = 0;
    e->open = NULL; /* live messages carry no open text */
    e->open_len = 0;
    if (msg[0] == 'e' || e->gap)
        return 1 + n == len ? 0 : -1;
    if (1 + n == len || msg[1 + n] != ':')
        return -1;
    e->data = msg + 2 + n;
    e->len = len - 2 - n;
    return 0;
}

/* ---- The session's set of keys ---- */

static void held_free(held *h);
static void held_unlink(mcp__cluster *c, held *prev, held *h);

/* Whether key is P e:<session>:<digits>, given "P e:<session>:" as prefix. */
static int key_of(const char *key, const char *prefix, size_t prefix_len)
{
    if (strncmp(key, prefix, prefix_len) != 0 || key[prefix_len] == '\0')
        return 0;
    for (const char *p = key + prefix_len; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

void mcp__rc_registered_forget(mcp__cluster *c, const char *session)
{
    mcp__buf prefix = {0};
    if (session != NULL && (mcp__rc_key(c, &prefix, "e:", session) != MCP_OK ||
                            mcp__buf_append(&prefix, ":", 1) != MCP_OK)) {
        /* Without the prefix nothing can be matched: forget everything, which only
         * costs registrations again. */
        session = NULL;
    }
    size_t pos = 0;
    const char *key;
    void *v;
    while (mcp__map_next(&c->registered, &pos, &key, &v)) {
        if (session == NULL || key_of(key, prefix.data, prefix.len)) {
            mcp__map_remove(&c->registered, key);
            free(v);
        }
    }
    mcp__buf_free(&prefix);
    /* The session is being deleted: what it holds is not written after the delete. */
    for (held *prev = NULL, *h = c->held; session != NULL && h != NULL;) {
        held *next = h->next;
        if (strcmp(h->session, session) == 0) {
            held_unlink(c, prev, h);
            held_free(h);
        } else {
            prev = h;
        }
        h = next;
    }
}

/* Adds the stream's key to its session's set and gives the set its time to live. */
static int add_key(mcp__cluster *c, const char *session, const char *skey)
{
    mcp__buf set = {0};
    char px[24];
    mcp__u64_str(3 * (uint64_t)c->ttl_ms, px);
    int rc = mcp__rc_key(c, &set, "k:", session);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, NULL, NULL, "SADD %s %s", set.data, skey);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", set.data, px);
    mcp__buf_free(&set);
    return rc;
}

/* What an append to the Redis stream skey must do: 1 to make the stream and give it
 * its time to live, the first append on this node and the first each ttl after (its key
 * then added to the set again); 0 when it is made and lives long enough. 1 as well when
 * it cannot be remembered. */
static int must_make(mcp__cluster *c, const char *session, const char *skey)
{
    uint64_t now = mcp__now_ms();
    registered *r = mcp__map_get(&c->registered, skey);
    if (r != NULL && now - r->at < (uint64_t)c->ttl_ms)
        return 0;
    if (r == NULL) {
        if (c->registered.len >= REGISTERED_MAX)
            mcp__rc_registered_forget(c, NULL);
        r = calloc(1, sizeof(*r));
        if (r != NULL && mcp__map_put(&c->registered, skey, r) != MCP_OK) {
            free(r);
            r = NULL;
        }
    }
    if (add_key(c, session, skey) == MCP_OK) {
        if (r != NULL)
            r->at = now;
    } else if (r != NULL) {
        /* Not sent: try again on the next append. */
        free(mcp__map_remove(&c->registered, skey));
    }
    return 1;
}

/* ---- Writing ---- */

/* One entry's fields, all but s. */
typedef struct fields {
    const char *data; /* NULL: none (a marker) */
    size_t len;
    char marker;      /* 'e' or 'g' for a marker entry, else 0 */
    int final;        /* e 1 with the data */
    uint64_t prev;    /* p: the empty event before it (0: none) */
    const char *open; /* o */
    size_t open_len;
} fields;

/* XADD of one entry of stream `stream` (key skey), made when it must be (see
 * must_make): an event's id is "<seq>-0" (Redis refuses a seq not above the last), a
 * marker's "<seq>-*" (the next after the last event's). */
static int xadd(mcp__cluster *c, const char *session, const char *skey, uint64_t stream,
                uint64_t seq, const fields *f)
{
    char maxlen[24], id[32], sid[24], prev[24], px[24];
    mcp__u64_str(c->max_events, maxlen);
    size_t idn = mcp__u64_str(seq, id);
    memcpy(id + idn, f->data != NULL ? "-0" : "-*", 3);
    mcp__u64_str(stream, sid);
    int make = must_make(c, session, skey);
    const char *argv[20];
    size_t argvlen[20];
    int n = 0;
#define ARG(s, l) (argv[n] = (s), argvlen[n] = (l), n++)
    ARG("XADD", 4);
    ARG(skey, strlen(skey));
    if (!make)
        ARG("NOMKSTREAM", 10);
    ARG("MAXLEN", 6);
    ARG("~", 1);
    ARG(maxlen, strlen(maxlen));
    ARG(id, idn + 2);
    ARG("s", 1);
    ARG(sid, strlen(sid));
    if (f->prev != 0) {
        mcp__u64_str(f->prev, prev);
        ARG("p", 1);
        ARG(prev, strlen(prev));
    }
    if (f->open != NULL) {
        ARG("o", 1);
        ARG(f->open, f->open_len);
    }
    if (f->data != NULL) {
        ARG("d", 1);
        ARG(f->data, f->len);
    }
    if (f->marker != 0 || f->final) {
        ARG(f->marker == 'g' ? "g" : "e", 1);
        ARG("1", 1);
    }
#undef ARG
    int rc = mcp__rc_cmd_argv(c, n, argv, argvlen);
    if (rc == MCP_OK && make) {
        mcp__u64_str(2 * (uint64_t)c->ttl_ms, px);
        rc = mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", skey, px);
    }
    return rc;
}

static void held_free(held *h)
{
    free(h->open);
    free(h->session);
    free(h);
}

/* Takes h off the list of held events (prev: the one before it, or NULL). */
static void held_unlink(mcp__cluster *c, held *prev, held *h)
{
    if (prev != NULL)
        prev->next = h->next;
    else
        c->held = h->next;
    c->nheld--;
}

/* Writes a held empty event as an entry of its own, and forgets it. */
static int held_write(mcp__cluster *c, held *prev, held *h)
{
    held_unlink(c, prev, h);
    fields f = {.data = ""};
    if (h->open != NULL) {
        f.open = h->open->text;
        f.open_len = h->open->len;
    }
    int rc =
        c->state == MCP__RC_UP ? xadd(c, h->session, h->key, h->stream, h->seq, &f) : MCP_ECLOSED;
    if (rc != MCP_OK)
        c->stats.dropped++;
    held_free(h);
    return rc;
}

/* The held event of Redis stream key, if any (and the one before it). */
static held *held_find(mcp__cluster *c, const char *key, held **prev)
{
    *prev = NULL;
    for (held *h = c->held; h != NULL; *prev = h, h = h->next)
        if (strcmp(h->key, key) == 0)
            return h;
    return NULL;
}

/* Writes every held event, in the order held. */
static void held_write_all(mcp__cluster *c)
{
    while (c->held != NULL)
        held_write(c, NULL, c->held);
}

/* Writes the held event of Redis stream key, if any: something else goes there next. */
static void held_write_key(mcp__cluster *c, const char *key)
{
    held *prev, *h = held_find(c, key, &prev);
    if (h != NULL)
        held_write(c, prev, h);
}

void mcp__rc_held_write(mcp__cluster *c, const char *key)
{
    held_write_key(c, key);
}

static void on_check(uv_check_t *h)
{
    mcp__cluster_flush(h->data);
    uv_check_stop(h);
}

/* Holds an empty event of the stream (see the top), with a copy of its open text
 * (NULL: none): MCP_OK, or MCP_ENOMEM (the caller then writes it). */
static int hold(mcp__cluster *c, const char *session, const char *key, uint64_t stream,
                uint64_t seq, const char *open, size_t open_len)
{
    if (c->nheld >= HELD_MAX)
        held_write(c, NULL, c->held);
    size_t klen = strlen(key);
    held *h = calloc(1, sizeof(*h) + klen + 1);
    if (h == NULL || (h->session = mcp__strdup(session)) == NULL) {
        free(h);
        return MCP_ENOMEM;
    }
    if (open != NULL) {
        if ((h->open = malloc(sizeof(*h->open) + open_len)) == NULL) {
            held_free(h);
            return MCP_ENOMEM;
        }
        h->open->len = open_len;
        memcpy(h->open->text, open, open_len);
    }
    memcpy(h->key, key, klen + 1);
    h->stream = stream;
    h->seq = seq;
    held **tail = &c->held;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = h;
    c->nheld++;
    /* Written at the latest when this loop turn's I/O is done. */
    if (c->check != NULL)
        uv_check_start(c->check, on_check);
    return MCP_OK;
}

void mcp__rc_events_reset(mcp__cluster *c)
{
    while (c->held != NULL) {
        held *h = c->held;
        held_unlink(c, NULL, h);
        c->stats.dropped++;
        held_free(h);
    }
    c->open_next = NULL;
    mcp__rc_registered_forget(c, NULL);
}

static int publish(mcp__cluster *c)
{
    int rc = mcp__rc_cmd(c, NULL, NULL, "PUBLISH %s %b", c->kbuf.data, c->pbuf.data, c->pbuf.len);
    if (c->pbuf.cap > PBUF_KEEP)
        mcp__buf_free(&c->pbuf);
    return rc;
}

/* Written now unless the caller flushes before its clients' bytes go out
 * (mcp__cluster_defer_flush): the event goes to its client right after this, and a
 * client that resumes on another node at once must find it stored. */
static void written(mcp__cluster *c)
{
    if (!c->flush_deferred)
        mcp__rc_flush(c);
}

static int rc_append(void *self, const char *session, uint64_t stream, uint64_t seq,
                     const char *data, size_t len)
{
    mcp__cluster *c = self;
    /* Whether this is the stream's last event, and its open text: for this append only. */
    int final = c->final_next && len <= c->max_event_bytes;
    const char *open = c->open_next;
    size_t open_len = c->open_next_len;
    c->final_next = 0;
    c->final_done = 0;
    c->open_next = NULL;
    if (seq == 0)
        return MCP_EINVAL;
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    if (data == NULL)
        data = "";
    /* The payload first: it is the allocation most likely to fail, and failing
     * after the XADD would keep an event that followers never hear of. kbuf is the
     * Redis stream's key until the XADD, then the channel's name. */
    mcp__buf key = {0};
    int rc = mcp__rc_key_events(c, &key, session, stream);
    if (rc == MCP_OK)
        rc = mcp__rc_key_chan(c, &c->kbuf, session, stream);
    if (rc == MCP_OK)
        rc = live_build(&c->pbuf, final ? 'f' : 'd', seq, data, len);
    if (rc != MCP_OK) {
        mcp__buf_free(&key);
        return MCP_ENOMEM;
    }
    if (len <= c->max_event_bytes) {
        held *prev, *h = held_find(c, key.data, &prev);
        fields f = {.data = data, .len = len, .final = final, .open = open, .open_len = open_len};
        if (h != NULL && h->stream == stream && (len > 0 || final)) {
            /* The empty event just before, of the same stream: one entry. */
            held_unlink(c, prev, h);
            f.prev = h->seq;
        } else {
            if (h != NULL)
                held_write(c, prev, h);
            h = NULL;
        }
        if (h == NULL && len == 0 && !final && c->flush_deferred &&
            hold(c, session, key.data, stream, seq, open, open_len) == MCP_OK) {
            mcp__buf_free(&key);
            return MCP_OK; /* an empty event is not published */
        }
        rc = xadd(c, session, key.data, stream, seq, &f);
        if (h != NULL)
            held_free(h);
    }
    mcp__buf_free(&key);
    if (rc == MCP_OK && (len > 0 || final))
        rc = publish(c);
    if (rc == MCP_OK)
        c->final_done = final;
    if (rc == MCP_OK)
        written(c);
    return rc;
}

void mcp__cluster_open_next(mcp__cluster *c, const char *text, size_t len)
{
    c->open_next = text != NULL ? text : "";
    c->open_next_len = text != NULL ? len : 0;
}

void mcp__cluster_defer_flush(mcp__cluster *c, int deferred)
{
    c->flush_deferred = deferred;
    if (!deferred)
        mcp__cluster_flush(c);
}

void mcp__cluster_flush(mcp__cluster *c)
{
    held_write_all(c);
    mcp__rc_flush(c);
}

void mcp__cluster_final_next(mcp__cluster *c)
{
    c->final_next = 1;
}

int mcp__cluster_final_taken(mcp__cluster *c)
{
    int done = c->final_done;
    c->final_done = 0;
    return done;
}

int mcp__cluster_events_trim(mcp__cluster *c, const char *session, uint64_t stream,
                             uint64_t min_seq)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__buf key = {0};
    char minid[24];
    mcp__u64_str(min_seq, minid);
    int rc = mcp__rc_key_events(c, &key, session, stream);
    if (rc == MCP_OK) {
        held_write_key(c, key.data);
        rc = mcp__rc_cmd(c, NULL, NULL, "XTRIM %s MINID %s", key.data, minid);
    }
    mcp__buf_free(&key);
    return rc;
}

void mcp__cluster_session_gone(mcp__cluster *c, const char *session)
{
    mcp__rc_registered_forget(c, session);
}

void mcp__cluster_store_bounds(const mcp__cluster *c, size_t *max_events, size_t *max_event_bytes)
{
    *max_events = c->max_events;
    *max_event_bytes = c->max_event_bytes;
}

/* A marker entry of kind 'e' or 'g' at "<seq>-*", stored and published. */
static int marker(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq, char kind)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__buf key = {0};
    int rc = mcp__rc_key_events(c, &key, session, stream);
    if (rc == MCP_OK)
        rc = mcp__rc_key_chan(c, &c->kbuf, session, stream);
    if (rc == MCP_OK)
        rc = live_build(&c->pbuf, kind, seq, NULL, 0);
    if (rc == MCP_OK) {
        held_write_key(c, key.data);
        fields f = {.marker = kind};
        rc = xadd(c, session, key.data, stream, seq, &f);
    } else {
        rc = MCP_ENOMEM;
    }
    mcp__buf_free(&key);
    if (rc == MCP_OK)
        rc = publish(c);
    if (rc == MCP_OK)
        written(c);
    return rc;
}

int mcp__cluster_stream_end(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq)
{
    return marker(c, session, stream, seq, 'e');
}

int mcp__cluster_stream_gap(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq)
{
    return marker(c, session, stream, seq, 'g');
}

int mcp__cluster_stream_pause(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq,
                              int retry_ms)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    /* Live only: a follower that starts later replays past the marker and goes on. The
     * empty event at seq is stored first: a follower's client resumes after it. */
    char retry[24];
    size_t n = mcp__u64_str(retry_ms > 0 ? (uint64_t)retry_ms : 0, retry);
    if (mcp__rc_key_events(c, &c->kbuf, session, stream) != MCP_OK)
        return MCP_ENOMEM;
    held_write_key(c, c->kbuf.data);
    if (mcp__rc_key_chan(c, &c->kbuf, session, stream) != MCP_OK ||
        live_build(&c->pbuf, 'p', seq, retry, n) != MCP_OK)
        return MCP_ENOMEM;
    int rc = publish(c);
    if (rc == MCP_OK)
        written(c);
    return rc;
}

/* ---- Reading in pages ---- */

void mcp__rpager_init(mcp__rpager *p, uint64_t stream, uint64_t after)
{
    memset(p, 0, sizeof(*p));
    p->stream = stream;
    p->after = after;
    p->read_ms = after;
    p->count = PAGE_FIRST;
    size_t n = mcp__u64_str(after, p->cursor);
    memcpy(p->cursor + n, "-0", 3);
}

/* A page and, read at the same moment, the stream's oldest entry: an entry trimmed away
 * after the last page and before this one is then seen to be missing, not passed over
 * (trimming takes a stream's oldest entries, so the oldest left tells what went). */
static const char page_lua[] = "return {redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1), "
                               "redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])}";

int mcp__rpager_send(mcp__cluster *c, mcp__rpager *p, const char *key, redisCallbackFn *fn,
                     void *priv)
{
    char count[24];
    mcp__u64_str(p->count, count);
    return mcp__rc_cmd(c, fn, priv, "EVAL %s 1 %s %s %s", page_lua, key, p->cursor, count);
}

/* One entry of a page: [id, [field, value, ...]], every part a string. */
static int entry_check(const redisReply *e, uint64_t *ms, uint64_t *sq)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY ||
        e->element[1]->elements % 2 != 0)
        return -1;
    for (size_t i = 0; i < e->element[1]->elements; i++)
        if (e->element[1]->element[i]->type != REDIS_REPLY_STRING)
            return -1;
    /* Two numbers of 20 digits at most: an id longer than that is not Redis's (and the
     * pager's cursor holds 41 bytes of one). */
    if (e->element[0]->len > 41)
        return -1;
    return parse_id(e->element[0]->str, e->element[0]->len, ms, sq);
}

/* A checked entry's fields (see the top); fields of other names are passed over (a later
 * release may add some). -1 when it names no stream, or a number is not one. */
typedef struct parsed {
    uint64_t stream, prev;
    const redisReply *data, *open;
    int end, gap;
} parsed;

static int entry_fields(const redisReply *e, parsed *out)
{
    memset(out, 0, sizeof(*out));
    int has_stream = 0;
    const redisReply *fs = e->element[1];
    for (size_t i = 0; i + 1 < fs->elements; i += 2) {
        const redisReply *k = fs->element[i], *v = fs->element[i + 1];
        if (k->len != 1)
            continue;
        switch (k->str[0]) {
        case 's':
            if (parse_whole(v, &out->stream) != 0)
                return -1;
            has_stream = 1;
            break;
        case 'p':
            if (parse_whole(v, &out->prev) != 0)
                return -1;
            break;
        case 'd':
            out->data = v;
            break;
        case 'o':
            out->open = v;
            break;
        case 'e':
            out->end = 1;
            break;
        case 'g':
            out->gap = 1;
            break;
        default:
            break;
        }
    }
    return has_stream ? 0 : -1;
}

int mcp__rpager_walk(mcp__rpager *p, const redisReply *reply, mcp__rentry_fn fn, void *ctx,
                     int *more)
{
    *more = 0;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != REDIS_REPLY_ARRAY || reply->element[0]->elements > 1 ||
        reply->element[1]->type != REDIS_REPLY_ARRAY)
        return MCP_EPROTO;
    const redisReply *oldest = reply->element[0], *page = reply->element[1];
    uint64_t ms, sq;
    if (oldest->elements == 1 && entry_check(oldest->element[0], &ms, &sq) != 0)
        return MCP_EPROTO;
    /* After the first page: if the oldest entry left is past the last one read, what came
     * after that may have been trimmed away before this page was read. */
    if (p->paged &&
        (oldest->elements == 0 || ms > p->read_ms || (ms == p->read_ms && sq > p->read_sq)))
        return MCP_ENOENT;
    /* The whole page is checked before anything of it is emitted: a reply that is
     * not what XRANGE gives is not trusted in part. */
    /* Ids grow along the page, from where the last page ended (the first page: from
     * "<after>-0"), or a hostile server could have a replay go round forever. */
    uint64_t prev_ms = p->read_ms, prev_sq = p->read_sq;
    size_t bytes = 0;
    for (size_t i = 0; i < page->elements; i++) {
        const redisReply *e = page->element[i];
        int from_start = i == 0 && !p->paged; /* may be "<after>-0" itself */
        if (entry_check(e, &ms, &sq) != 0 || ms < prev_ms ||
            (ms == prev_ms && (from_start ? sq < prev_sq : sq <= prev_sq)))
            return MCP_EPROTO;
        prev_ms = ms;
        prev_sq = sq;
        for (size_t j = 0; j < e->element[1]->elements; j++)
            bytes += e->element[1]->element[j]->len;
    }
    p->paged = 1;
    if (page->elements > 0) {
        const redisReply *last = page->element[page->elements - 1]->element[0];
        p->read_ms = prev_ms;
        p->read_sq = prev_sq;
        p->cursor[0] = '(';
        memcpy(p->cursor + 1, last->str, last->len); /* at most 41 bytes: checked by parse_id */
        p->cursor[1 + last->len] = '\0';
    }
    *more = page->elements >= p->count;
    size_t per_entry = page->elements > 0 ? bytes / page->elements + 1 : 1;
    p->count = PAGE_BYTES / per_entry;
    p->count = p->count < 1 ? 1 : p->count > PAGE_MAX ? PAGE_MAX : p->count;
    for (size_t i = 0; i < page->elements; i++) {
        const redisReply *e = page->element[i];
        parsed f;
        entry_check(e, &ms, &sq);
        if (entry_fields(e, &f) != 0 || f.stream != p->stream)
            continue; /* another stream's, or not one of ours */
        mcp__rentry ent = {.seq = ms};
        if (!p->found) {
            /* The event resumed after must still be there: if it is gone, what followed
             * it may be gone too (memory.c's rule). It is the first entry of the stream
             * from after: its own, or the next one, which came with it. */
            if (ms == p->after && sq == 0 && f.data != NULL) {
                p->found = 1;
                if (f.open != NULL) {
                    ent.open = f.open->str;
                    ent.open_len = f.open->len;
                }
                if (!f.end && ent.open == NULL)
                    continue;
                /* Resumed after the stream's last event, which carries the end: the end, as
                 * the end marker that would follow it. Or only its open text. */
                ent.end = f.end;
                if (fn(ctx, &ent) != 0 || f.end) {
                    *more = 0;
                    return MCP_OK;
                }
                continue;
            }
            if (f.prev == 0 || f.prev != p->after || f.data == NULL) {
                *more = 0;
                return MCP_ENOENT;
            }
            p->found = 1;
        }
        if (f.data != NULL) {
            ent.data = f.data->str;
            ent.len = f.data->len;
            ent.end = f.end; /* the stream's last event */
            if (f.open != NULL) {
                ent.open = f.open->str;
                ent.open_len = f.open->len;
            }
        } else if (f.end) {
            ent.end = 1;
        } else if (f.gap) {
            ent.gap = 1;
        } else {
            continue;
        }
        if (fn(ctx, &ent) != 0 || ent.end) {
            *more = 0; /* nothing of the stream comes after its end */
            break;
        }
    }
    return !p->found && !*more ? MCP_ENOENT : MCP_OK;
}

/* ---- Replay ---- */

typedef struct replay {
    mcp__cluster *c;
    mcp__rpager pager;
    mcp_event_fn emit;
    mcp_replay_done_fn done;
    void *arg;
    char key[];
} replay;

static int replay_entry(void *ctx, const mcp__rentry *e)
{
    replay *r = ctx;
    if (e->len > 0)
        r->emit(r->arg, e->seq, e->data, e->len);
    /* The caller's emit may have detached the cluster (or a callback of its took
     * it down): the replay then stops here. */
    return r->c->state != MCP__RC_UP;
}

static void replay_finish(replay *r, int status)
{
    mcp_replay_done_fn done = r->done;
    void *arg = r->arg;
    free(r);
    done(arg, status);
}

static void on_replay_page(redisAsyncContext *ac, void *reply, void *priv)
{
    replay *r = priv;
    if (reply == NULL) {
        mcp__rc_lost(r->c, ac);
        replay_finish(r, MCP_ECLOSED);
        return;
    }
    int more;
    int rc = mcp__rpager_walk(&r->pager, reply, replay_entry, r, &more);
    if (rc == MCP_EPROTO || r->c->state != MCP__RC_UP)
        rc = MCP_ECLOSED; /* an answer not to be trusted, or no cluster to go on with */
    if (rc == MCP_OK && more) {
        rc = mcp__rpager_send(r->c, &r->pager, r->key, on_replay_page, r);
        if (rc == MCP_OK)
            return;
    }
    replay_finish(r, rc);
}

static int rc_replay(void *self, const char *session, uint64_t stream, uint64_t after_seq,
                     mcp_event_fn emit, mcp_replay_done_fn done, void *arg)
{
    mcp__cluster *c = self;
    if (c->state != MCP__RC_UP)
        return MCP_ECLOSED;
    mcp__buf key = {0};
    if (mcp__rc_key_events(c, &key, session, stream) != MCP_OK) {
        mcp__buf_free(&key);
        return MCP_ENOMEM;
    }
    held_write_key(c, key.data); /* read after what this node holds of it */
    replay *r = malloc(sizeof(*r) + key.len + 1);
    if (r == NULL) {
        mcp__buf_free(&key);
        return MCP_ENOMEM;
    }
    r->c = c;
    r->emit = emit;
    r->done = done;
    r->arg = arg;
    memcpy(r->key, key.data, key.len + 1);
    mcp__buf_free(&key);
    mcp__rpager_init(&r->pager, stream, after_seq);
    int rc = mcp__rpager_send(c, &r->pager, r->key, on_replay_page, r);
    if (rc != MCP_OK)
        free(r);
    return rc;
}

static void rc_drop_session(void *self, const char *session)
{
    mcp__rc_delete_session(self, session, 0); /* its events only */
}

/* No attach, detach or destroy: the cluster's own attach and detach do that work,
 * and the store lives as long as the cluster (cluster.h). No expire either: Redis
 * expires the keys itself. */
static const mcp_event_store_ops rc_ops = {
    .size = sizeof(mcp_event_store_ops),
    .append = rc_append,
    .replay = rc_replay,
    .drop_session = rc_drop_session,
};

mcp_event_store *mcp__rc_store_new(mcp__cluster *c)
{
    return mcp_event_store_new(&rc_ops, c);
}

mcp_event_store *mcp__cluster_event_store(mcp__cluster *c)
{
    return c->store;
}
