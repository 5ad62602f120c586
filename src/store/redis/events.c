/* SPDX-License-Identifier: MIT */
/*
 * The event store on Redis: one Redis stream per (session, stream), read back in
 * pages, with the memory store's semantics (store/memory.c): a replay emits the
 * events after after_seq in order, skips the empty ones (markers) while letting
 * them be resumed after, and answers MCP_ENOENT when after_seq is not an event the
 * stream holds, including after_seq 0 (no event has seq 0: Redis stream ids begin
 * above 0-0, and the transport's seqs begin at 1, so an append of seq 0 is
 * refused with MCP_EINVAL).
 *
 * An append is two commands written together and not waited for:
 *
 *   XADD P e:<s>:<n> NOMKSTREAM MAXLEN ~ <max_events> <seq>-0 d <data>
 *   PUBLISH P e:<s>:<n> d<seq>:<data>
 *
 * so it returns MCP_OK once queued; a seq not above the stream's last is refused
 * by Redis (the memory store says MCP_EINVAL at once), with the same result for a
 * replay: the event is not kept. MAXLEN ~ trims whole nodes of the stream (100
 * entries by default), so a stream keeps max_events events and at most a node's
 * worth more. An event larger than max_event_bytes is not kept but still published:
 * like the memory store's, it reaches whoever follows live and cannot be resumed.
 * An empty event (a priming event, the place of a pause) is stored, not published:
 * a follower has nothing to emit of it, and a pause is published on its own.
 *
 * The first append of a stream on this node, and the first one each ttl after, makes
 * the stream (no NOMKSTREAM) and gives it twice the events' time to live (PEXPIRE
 * 2*ttl): every event then lives at least ttl after its append, with one PEXPIRE per
 * ttl rather than one per event. The others do not make the stream: one that another
 * node deleted with its session in the meantime stays deleted, never made again
 * without a time to live. The same appends add the stream's keys to its session's set
 * (P k:<s>) and give that set, and the open text's key, three times the events' time
 * to live: the set then outlives every stream it lists, so deleting the session finds
 * them all (mcp__cluster_stream_open did that for a stream it described, with the
 * open text's SET).
 *
 * The last event of a stream (mcp__cluster_final_next) is stored with the end, as one
 * entry <seq>-0 d <data> e 1, and published as "f<seq>:<data>": a stream that answers
 * one request costs its description, the priming event, and the answer with its end.
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

typedef struct registered {
    uint64_t at; /* when the stream's keys were last added to the set */
    int made;    /* an append made the stream, with its time to live, since then */
} registered;

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

/* "<seq>-<sub>" into out (48 bytes at least). */
static void make_id(char *out, uint64_t seq, int sub)
{
    size_t n = mcp__u64_str(seq, out);
    out[n++] = '-';
    out[n++] = (char)('0' + sub);
    out[n] = '\0';
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
    if (msg[0] == 'e' || e->gap)
        return 1 + n == len ? 0 : -1;
    if (1 + n == len || msg[1 + n] != ':')
        return -1;
    e->data = msg + 2 + n;
    e->len = len - 2 - n;
    return 0;
}

/* ---- The session's set of keys ---- */

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
}

/* Adds the stream's keys to its session's set and gives the set and the open text's
 * key their time to live (see the top). */
static int add_keys(mcp__cluster *c, const char *session, uint64_t stream, const char *skey,
                    int open_text)
{
    mcp__buf set = {0}, okey = {0};
    char px[24];
    mcp__u64_str(3 * (uint64_t)c->ttl_ms, px);
    int rc = mcp__rc_key(c, &set, "k:", session);
    if (rc == MCP_OK)
        rc = mcp__rc_key_stream(c, &okey, "o:", session, stream);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, NULL, NULL, "SADD %s %s %s", set.data, skey, okey.data);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", set.data, px);
    if (rc == MCP_OK && open_text)
        rc = mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", okey.data, px);
    mcp__buf_free(&set);
    mcp__buf_free(&okey);
    return rc;
}

/* The stream's entry in c->registered, made when there is none (NULL when it cannot
 * be). */
static registered *remember(mcp__cluster *c, const char *skey)
{
    registered *r = mcp__map_get(&c->registered, skey);
    if (r != NULL)
        return r;
    if (c->registered.len >= REGISTERED_MAX)
        mcp__rc_registered_forget(c, NULL);
    r = calloc(1, sizeof(*r));
    if (r != NULL && mcp__map_put(&c->registered, skey, r) != MCP_OK) {
        free(r);
        r = NULL;
    }
    return r;
}

/* What an append of the stream (whose events' key is skey) must do: 1 to make the
 * stream and give it its time to live, the first append on this node and the first
 * each ttl after (its keys then added to the set again); 0 when it is made and lives
 * long enough. 1 as well when it cannot be remembered. */
static int must_make(mcp__cluster *c, const char *session, uint64_t stream, const char *skey)
{
    uint64_t now = mcp__now_ms();
    registered *r = mcp__map_get(&c->registered, skey);
    if (r != NULL && now - r->at < (uint64_t)c->ttl_ms) {
        if (r->made)
            return 0;
        r->made = 1; /* described just before: its keys are in the set */
        return 1;
    }
    r = remember(c, skey);
    if (add_keys(c, session, stream, skey, 1) == MCP_OK) {
        if (r != NULL) {
            r->at = now;
            r->made = 1;
        }
    } else if (r != NULL) {
        /* Not sent: try again on the next append. */
        free(mcp__map_remove(&c->registered, skey));
    }
    return 1;
}

/* A described stream's keys went to the set just now (mcp__cluster_stream_open): its
 * first append only makes it. */
static void described(mcp__cluster *c, const char *skey)
{
    registered *r = remember(c, skey);
    if (r != NULL) {
        r->at = mcp__now_ms();
        r->made = 0;
    }
}

/* ---- Writing ---- */

/* XADD of one entry (c->kbuf holds its key), with the end (final) when it is the
 * stream's last event; when make, one that makes the stream, and its time to live. */
static int xadd(mcp__cluster *c, int make, const char *id, const char *field, const char *data,
                size_t len, int final)
{
    char maxlen[24], px[24];
    mcp__u64_str(c->max_events, maxlen);
    const char *argv[11];
    size_t argvlen[11];
    int n = 0;
#define ARG(s, l) (argv[n] = (s), argvlen[n] = (l), n++)
    ARG("XADD", 4);
    ARG(c->kbuf.data, c->kbuf.len);
    if (!make)
        ARG("NOMKSTREAM", 10);
    ARG("MAXLEN", 6);
    ARG("~", 1);
    ARG(maxlen, strlen(maxlen));
    ARG(id, strlen(id));
    ARG(field, strlen(field));
    ARG(data, len);
    if (final) {
        ARG("e", 1);
        ARG("1", 1);
    }
#undef ARG
    int rc = mcp__rc_cmd_argv(c, n, argv, argvlen);
    if (rc == MCP_OK && make) {
        mcp__u64_str(2 * (uint64_t)c->ttl_ms, px);
        rc = mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", c->kbuf.data, px);
    }
    return rc;
}

static int publish(mcp__cluster *c)
{
    int rc = mcp__rc_cmd(c, NULL, NULL, "PUBLISH %s %b", c->kbuf.data, c->pbuf.data, c->pbuf.len);
    if (c->pbuf.cap > PBUF_KEEP)
        mcp__buf_free(&c->pbuf);
    return rc;
}

static int rc_append(void *self, const char *session, uint64_t stream, uint64_t seq,
                     const char *data, size_t len)
{
    mcp__cluster *c = self;
    /* Whether this is the stream's last event: asked for this append only. */
    int final = c->final_next && len <= c->max_event_bytes;
    c->final_next = 0;
    c->final_done = 0;
    if (seq == 0)
        return MCP_EINVAL;
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    if (data == NULL)
        data = "";
    /* The payload first: it is the allocation most likely to fail, and failing
     * after the XADD would keep an event that followers never hear of. */
    if (mcp__rc_key_stream(c, &c->kbuf, "e:", session, stream) != MCP_OK ||
        live_build(&c->pbuf, final ? 'f' : 'd', seq, data, len) != MCP_OK)
        return MCP_ENOMEM;
    int rc = MCP_OK;
    if (len <= c->max_event_bytes) {
        char id[48];
        make_id(id, seq, 0);
        rc = xadd(c, must_make(c, session, stream, c->kbuf.data), id, "d", data, len, final);
    }
    if (rc == MCP_OK && (len > 0 || final))
        rc = publish(c);
    if (rc == MCP_OK)
        c->final_done = final;
    /* Written now, not at the loop's next turn: the event goes to its client right after
     * this, and a client that resumes on another node at once must find it stored. A
     * caller that flushes before its clients' bytes go out (mcp__cluster_defer_flush)
     * has the turn's appends written in one go. */
    if (rc == MCP_OK && !c->flush_deferred)
        mcp__rc_flush(c);
    return rc;
}

int mcp__cluster_stream_open(mcp__cluster *c, const char *session, uint64_t stream,
                             const char *text, size_t len)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__buf okey = {0}, skey = {0};
    char px[24];
    mcp__u64_str(3 * (uint64_t)c->ttl_ms, px);
    int rc = mcp__rc_key_stream(c, &okey, "o:", session, stream);
    if (rc == MCP_OK)
        rc = mcp__rc_key_stream(c, &skey, "e:", session, stream);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, NULL, NULL, "SET %s %b PX %s", okey.data, text != NULL ? text : "", len,
                         px);
    if (rc == MCP_OK)
        rc = add_keys(c, session, stream, skey.data, 0);
    if (rc == MCP_OK)
        described(c, skey.data);
    mcp__buf_free(&okey);
    mcp__buf_free(&skey);
    return rc;
}

void mcp__cluster_defer_flush(mcp__cluster *c, int deferred)
{
    c->flush_deferred = deferred;
}

void mcp__cluster_flush(mcp__cluster *c)
{
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

int mcp__cluster_streams_drop(mcp__cluster *c, const char *session, const uint64_t *streams,
                              size_t n)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    if (n == 0)
        return MCP_OK;
    if (n > MCP__CLUSTER_DROP_MAX)
        return MCP_EINVAL;
    /* One UNLINK of every key, one SREM of them from the session's set. */
    const char *argv[2 + 2 * MCP__CLUSTER_DROP_MAX];
    size_t argvlen[2 + 2 * MCP__CLUSTER_DROP_MAX];
    mcp__buf keys[2 * MCP__CLUSTER_DROP_MAX], set = {0};
    memset(keys, 0, sizeof(keys));
    int rc = mcp__rc_key(c, &set, "k:", session);
    for (size_t i = 0; i < n && rc == MCP_OK; i++) {
        rc = mcp__rc_key_stream(c, &keys[2 * i], "e:", session, streams[i]);
        if (rc == MCP_OK)
            rc = mcp__rc_key_stream(c, &keys[2 * i + 1], "o:", session, streams[i]);
        if (rc == MCP_OK)
            free(mcp__map_remove(&c->registered, keys[2 * i].data));
    }
    if (rc == MCP_OK) {
        argv[0] = "SREM";
        argvlen[0] = 4;
        argv[1] = set.data;
        argvlen[1] = set.len;
        for (size_t i = 0; i < 2 * n; i++) {
            argv[2 + i] = keys[i].data;
            argvlen[2 + i] = keys[i].len;
        }
        rc = mcp__rc_cmd_argv(c, (int)(2 + 2 * n), argv, argvlen);
        if (rc == MCP_OK) {
            argv[1] = "UNLINK";
            argvlen[1] = 6;
            rc = mcp__rc_cmd_argv(c, (int)(1 + 2 * n), argv + 1, argvlen + 1);
        }
    }
    for (size_t i = 0; i < 2 * n; i++)
        mcp__buf_free(&keys[i]);
    mcp__buf_free(&set);
    return rc;
}

void mcp__cluster_store_bounds(const mcp__cluster *c, size_t *max_events, size_t *max_event_bytes)
{
    *max_events = c->max_events;
    *max_event_bytes = c->max_event_bytes;
}

/* A marker entry <seq>-<sub> with field kind (no data), stored and published. */
static int marker(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq, int sub,
                  char kind)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    char id[48], field[2] = {kind, '\0'};
    make_id(id, seq, sub);
    if (mcp__rc_key_stream(c, &c->kbuf, "e:", session, stream) != MCP_OK ||
        live_build(&c->pbuf, kind, seq, NULL, 0) != MCP_OK)
        return MCP_ENOMEM;
    int rc = xadd(c, must_make(c, session, stream, c->kbuf.data), id, field, "1", 1, 0);
    if (rc == MCP_OK)
        rc = publish(c);
    return rc;
}

int mcp__cluster_stream_end(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq)
{
    return marker(c, session, stream, seq, 1, 'e');
}

int mcp__cluster_stream_gap(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq)
{
    return marker(c, session, stream, seq, 2, 'g');
}

int mcp__cluster_stream_pause(mcp__cluster *c, const char *session, uint64_t stream, uint64_t seq,
                              int retry_ms)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    /* Live only: a follower that starts later replays past the marker and goes on. */
    char retry[24];
    size_t n = mcp__u64_str(retry_ms > 0 ? (uint64_t)retry_ms : 0, retry);
    if (mcp__rc_key_stream(c, &c->kbuf, "e:", session, stream) != MCP_OK ||
        live_build(&c->pbuf, 'p', seq, retry, n) != MCP_OK)
        return MCP_ENOMEM;
    return publish(c);
}

/* ---- Reading in pages ---- */

void mcp__rpager_init(mcp__rpager *p, uint64_t after)
{
    memset(p, 0, sizeof(*p));
    p->after = after;
    p->first = 1;
    p->count = PAGE_FIRST;
    make_id(p->cursor, after, 0);
}

int mcp__rpager_send(mcp__cluster *c, mcp__rpager *p, const char *key, redisCallbackFn *fn,
                     void *priv)
{
    char count[24];
    mcp__u64_str(p->count, count);
    return mcp__rc_cmd(c, fn, priv, "XRANGE %s %s + COUNT %s", key, p->cursor, count);
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
    return parse_id(e->element[0]->str, e->element[0]->len, ms, sq);
}

/* Whether a checked entry <seq>-0 d <data> is its stream's last event (fields e 1 after). */
static int carries_end(const redisReply *e)
{
    const redisReply *fields = e->element[1];
    return fields->elements >= 4 && fields->element[0]->len == 1 &&
           fields->element[0]->str[0] == 'd' && fields->element[2]->len == 1 &&
           fields->element[2]->str[0] == 'e';
}

int mcp__rpager_walk(mcp__rpager *p, const redisReply *page, mcp__rentry_fn fn, void *ctx,
                     int *more)
{
    *more = 0;
    if (page->type != REDIS_REPLY_ARRAY)
        return MCP_EPROTO;
    /* The whole page is checked before anything of it is emitted: a reply that is
     * not what XRANGE gives is not trusted in part. */
    uint64_t prev_ms = 0, prev_sq = 0, ms, sq;
    size_t bytes = 0;
    for (size_t i = 0; i < page->elements; i++) {
        const redisReply *e = page->element[i];
        if (entry_check(e, &ms, &sq) != 0 ||
            (i > 0 && (ms < prev_ms || (ms == prev_ms && sq <= prev_sq))))
            return MCP_EPROTO;
        prev_ms = ms;
        prev_sq = sq;
        for (size_t j = 0; j < e->element[1]->elements; j++)
            bytes += e->element[1]->element[j]->len;
    }
    size_t i = 0;
    if (p->first) {
        /* The event resumed after must still be there: if it is gone, what
         * followed it may be gone too (memory.c's rule). */
        if (page->elements == 0)
            return MCP_ENOENT;
        entry_check(page->element[0], &ms, &sq);
        if (ms != p->after || sq != 0)
            return MCP_ENOENT;
        i = 1;
        p->first = 0;
        /* Resumed after the stream's last event, which carries the end: the end, as the
         * end marker that would follow it. */
        if (carries_end(page->element[0])) {
            mcp__rentry end = {.seq = p->after, .end = 1};
            if (fn(ctx, &end) != 0)
                return MCP_OK; /* *more is 0 */
        }
    }
    if (page->elements > 0) {
        const redisReply *last = page->element[page->elements - 1]->element[0];
        p->cursor[0] = '(';
        memcpy(p->cursor + 1, last->str, last->len); /* at most 41 bytes: checked by parse_id */
        p->cursor[1 + last->len] = '\0';
    }
    *more = page->elements >= p->count;
    size_t per_entry = page->elements > 0 ? bytes / page->elements + 1 : 1;
    p->count = PAGE_BYTES / per_entry;
    p->count = p->count < 1 ? 1 : p->count > PAGE_MAX ? PAGE_MAX : p->count;
    for (; i < page->elements; i++) {
        const redisReply *e = page->element[i];
        const redisReply *fields = e->element[1];
        mcp__rentry ent = {0};
        entry_check(e, &ent.seq, &sq);
        /* Entries of another kind are passed over: a later release may add some. */
        if (fields->elements < 2 || fields->element[0]->len != 1)
            continue;
        char f = fields->element[0]->str[0];
        if (sq == 0 && f == 'd') {
            ent.data = fields->element[1]->str;
            ent.len = fields->element[1]->len;
            ent.end = carries_end(e); /* the stream's last event */
        } else if (sq == 1 && f == 'e') {
            ent.end = 1;
        } else if (sq == 2 && f == 'g') {
            ent.gap = 1;
        } else {
            continue;
        }
        if (fn(ctx, &ent) != 0) {
            *more = 0;
            break;
        }
    }
    return MCP_OK;
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
    if (mcp__rc_key_stream(c, &key, "e:", session, stream) != MCP_OK) {
        mcp__buf_free(&key);
        return MCP_ENOMEM;
    }
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
    mcp__rpager_init(&r->pager, after_seq);
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
