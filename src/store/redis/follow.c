/* SPDX-License-Identifier: MIT */
/*
 * Following a stream another node writes (cluster.h): its stored events, then its
 * live ones, none missed or doubled at the seam.
 *
 * The seam. A follower first SUBSCRIBEs the stream's channel, and only once the
 * server confirmed it asks for the stored events (XRANGE of its session's Redis stream,
 * in pages, passing over the other streams' entries). An append is XADD then PUBLISH on
 * the owner's connection, so for every event either its PUBLISH came after our
 * SUBSCRIBE (we hear it live) or its XADD came before our XRANGE (we read it): nothing
 * falls between. Live messages that come during the
 * replay are kept, in order, and emitted after it; every event is emitted only if
 * its seq is above the last one emitted, which removes what both paths gave.
 *
 * Ends: the end, stored or live ("e<seq>", or with the last event), ends it with
 * MCP_OK; an after_seq the store does not hold with MCP_ENOENT, and so does a lost
 * event's marker past after_seq, or entries trimmed away between pages; the owner's
 * heartbeat gone (asked with the first page, then every heartbeat period) with
 * MCP_ECLOSED once the stored events are out; so does a lost connection, an
 * answer not to be trusted, or live messages past LIVE_MAX bytes waiting behind a
 * slow replay.
 *
 * Channels. hiredis confirms each SUBSCRIBE; a channel's followers share one
 * subscription. An UNSUBSCRIBE goes out when the last follower leaves, so a new
 * follower may come while an old confirmation is still on its way: each counts
 * the SUBSCRIBEs sent on its channel, and the one it waits for is the last one sent
 * when it joined. A channel stays known until every confirmation it waits for came.
 *
 * Lifetime. A follower is freed when no one holds it: the caller until done or
 * unfollow, and each command whose reply is awaited. Callers' callbacks (emit,
 * done) may unfollow any follower or detach the cluster; every walk over followers
 * is made safe against that (see each_follower).
 */
#include <stdlib.h>
#include <string.h>

#include "redis_int.h"

/* Live messages kept while a replay runs, at most (bytes). */
#define LIVE_MAX (16u << 20)

enum { F_SUBSCRIBING, F_REPLAYING, F_LIVE, F_FINISHED };

struct mcp__rchan {
    char *name; /* the stream's channel */
    struct mcp__cluster_follow *head;
    size_t n;
    uint64_t subs_sent, subs_acked;
    unsigned busy; /* a walk over its followers is under way */
    int gone;      /* taken out of the map: the connection went */
};

struct mcp__cluster_follow {
    mcp__cluster *c;
    mcp__rchan *ch;
    struct mcp__cluster_follow *ch_prev, *ch_next; /* on its channel */
    struct mcp__cluster_follow *prev, *next;       /* on the cluster */
    int state;
    unsigned refs;
    unsigned mark;
    uint64_t need_ack; /* the SUBSCRIBE of its channel it waits for */
    uint32_t owner;
    uint64_t last; /* the last seq emitted (after_seq at first) */
    int owner_gone, owner_asked;
    int started; /* the caller was told (started()) */
    char *open_text;
    char pause_text[48]; /* "<seq> <retry_ms>" of a pause */
    size_t pause_len;
    size_t open_len;
    mcp__buf live; /* records: kind byte, seq, length, data */
    mcp__rpager pager;
    mcp_event_fn emit;
    mcp__cluster_follow_done_fn done;
    void *arg;
    uint64_t stream;
    char key[]; /* the Redis stream of its session that holds its events */
};

typedef struct mcp__cluster_follow follow;

static void unref(follow *f)
{
    if (--f->refs > 0)
        return;
    mcp__buf_free(&f->live);
    free(f->open_text);
    free(f);
}

static void chan_maybe_free(mcp__cluster *c, mcp__rchan *ch)
{
    if (ch->busy > 0 || ch->n > 0)
        return;
    if (!ch->gone) {
        if (ch->subs_acked < ch->subs_sent)
            return; /* a confirmation is on its way: it must find the count */
        mcp__map_remove(&c->chans, ch->name);
    }
    free(ch->name);
    free(ch);
}

/* Takes f off its channel and off the cluster (it hears nothing more). */
static void leave(follow *f)
{
    mcp__cluster *c = f->c;
    if (f->prev != NULL)
        f->prev->next = f->next;
    else if (c->follows == f)
        c->follows = f->next;
    if (f->next != NULL)
        f->next->prev = f->prev;
    f->prev = f->next = NULL;
    mcp__rchan *ch = f->ch;
    if (ch == NULL)
        return;
    f->ch = NULL;
    if (f->ch_prev != NULL)
        f->ch_prev->ch_next = f->ch_next;
    else
        ch->head = f->ch_next;
    if (f->ch_next != NULL)
        f->ch_next->ch_prev = f->ch_prev;
    f->ch_prev = f->ch_next = NULL;
    if (--ch->n == 0 && !ch->gone)
        mcp__rc_subscribe(c, ch->name, 0); /* down: it went with the connection */
    chan_maybe_free(c, ch);
}

static void finish(follow *f, int status)
{
    if (f->state == F_FINISHED)
        return;
    f->state = F_FINISHED;
    leave(f);
    int closed = status == MCP_ECLOSED;
    if (status == MCP__CLUSTER_PAUSED)
        f->done(f->arg, status, f->pause_text, f->pause_len);
    else
        f->done(f->arg, status, closed ? f->open_text : NULL, closed ? f->open_len : 0);
    unref(f); /* the caller's */
}

void mcp__cluster_unfollow(mcp__cluster_follow *f)
{
    if (f == NULL || f->state == F_FINISHED)
        return;
    f->state = F_FINISHED;
    leave(f);
    unref(f);
}

/*
 * Runs fn on each follower that is on ch when the walk begins, once, whatever fn
 * does: a follower that leaves is no longer on the channel's list, the walk starts
 * again from the head after every call, and the marks say who is still to visit.
 * The channel itself is held (busy) until the walk ends.
 */
static void each_follower(mcp__cluster *c, mcp__rchan *ch, void (*fn)(follow *f, void *ctx),
                          void *ctx)
{
    unsigned gen = ++c->gen;
    if (gen == 0)
        gen = ++c->gen; /* 0 is no mark */
    for (follow *f = ch->head; f != NULL; f = f->ch_next)
        f->mark = gen;
    ch->busy++;
    for (;;) {
        follow *f = ch->head;
        while (f != NULL && f->mark != gen)
            f = f->ch_next;
        if (f == NULL)
            break;
        f->mark = 0;
        f->refs++;
        fn(f, ctx);
        unref(f);
    }
    ch->busy--;
    chan_maybe_free(c, ch);
}

/* The stream holds after_seq (the first page said so): the caller hears it once,
 * before any event, so that its client's response may begin. Nonzero while f goes
 * on (its caller may have unfollowed it). */
static int started(follow *f)
{
    if (!f->started) {
        f->started = 1;
        f->emit(f->arg, f->last, NULL, 0);
    }
    return f->state == F_REPLAYING;
}

/* Keeps the stream's open text (for an MCP_ECLOSED), found on its first event. Out of
 * memory, the follower goes on: only its last words lack the text. */
static void keep_open(follow *f, const char *text, size_t len)
{
    if (f->open_text != NULL)
        return;
    f->open_text = malloc(len + 1);
    f->open_len = f->open_text != NULL ? len : 0;
    if (f->open_text != NULL) {
        memcpy(f->open_text, text, len);
        f->open_text[len] = '\0';
    }
}

/* Emits an event that is new to f, or ends f at the end marker. Nonzero once f is
 * finished (the caller's emit may have unfollowed it). */
static int deliver(follow *f, const mcp__rentry *e)
{
    if (e->open != NULL)
        keep_open(f, e->open, e->open_len);
    if (e->gap) {
        /* An event the owner could not store: the follow must not go on past it. */
        if (e->seq <= f->last)
            return 0;
        finish(f, MCP_ENOENT);
        return 1;
    }
    if (e->end && e->len == 0) {
        finish(f, MCP_OK);
        return 1;
    }
    if (e->pause) {
        /* Every event up to the marker is out (the marker came before on the channel):
         * the client is told to come back. An older pause is not this client's. */
        if (e->seq < f->last)
            return 0;
        int n = snprintf(f->pause_text, sizeof(f->pause_text), "%llu %.*s",
                         (unsigned long long)e->seq, (int)(e->len < 12 ? e->len : 12), e->data);
        f->pause_len = n > 0 ? (size_t)n : 0;
        finish(f, MCP__CLUSTER_PAUSED);
        return 1;
    }
    if (e->seq <= f->last) {
        if (!e->end)
            return 0;
        /* The last event, emitted already (by the replay): its end still ends. */
        finish(f, MCP_OK);
        return 1;
    }
    if (!f->started && !started(f))
        return 1;
    f->last = e->seq;
    if (e->len > 0)
        f->emit(f->arg, e->seq, e->data, e->len);
    if (e->end && f->state != F_FINISHED) {
        finish(f, MCP_OK); /* the stream's last event: the end came with it */
        return 1;
    }
    return f->state == F_FINISHED;
}

/* ---- Replay ---- */

static void on_page(redisAsyncContext *ac, void *reply, void *priv);

/* The stored events are out: then what came live meanwhile, in the order it was
 * published (deliver skips what the replay gave), and from then on live. */
static void replay_done(follow *f)
{
    size_t off = 0;
    while (f->state == F_REPLAYING && off < f->live.len) {
        mcp__rentry e = {0};
        const char *p = f->live.data + off;
        e.end = p[0] == 'e' || p[0] == 'f';
        e.pause = p[0] == 'p';
        e.gap = p[0] == 'g';
        memcpy(&e.seq, p + 1, sizeof(e.seq));
        memcpy(&e.len, p + 1 + sizeof(e.seq), sizeof(e.len));
        e.data = p + 1 + sizeof(e.seq) + sizeof(e.len);
        off += 1 + sizeof(e.seq) + sizeof(e.len) + e.len;
        deliver(f, &e);
    }
    if (f->state != F_REPLAYING)
        return;
    mcp__buf_free(&f->live);
    if (f->owner_gone)
        finish(f, MCP_ECLOSED);
    else
        f->state = F_LIVE;
}

static int page_entry(void *ctx, const mcp__rentry *e)
{
    return deliver(ctx, e);
}

static void on_page(redisAsyncContext *ac, void *reply, void *priv)
{
    follow *f = priv;
    if (reply == NULL) {
        mcp__rc_lost(f->c, ac);
    } else if (f->state == F_REPLAYING) {
        int more;
        int rc = mcp__rpager_walk(&f->pager, reply, page_entry, f, &more);
        if (f->state != F_REPLAYING)
            ; /* ended by the walk */
        else if (rc != MCP_OK)
            finish(f, rc == MCP_ENOENT ? MCP_ENOENT : MCP_ECONNECT);
        else if (f->pager.found && started(f) && !more)
            replay_done(f);
        else if (f->state != F_REPLAYING)
            ; /* ended by its caller, told it started */
        else if (mcp__rpager_send(f->c, &f->pager, f->key, on_page, f) == MCP_OK)
            f->refs++;
        else
            finish(f, MCP_ECONNECT);
    }
    unref(f);
}

static void on_owner(redisAsyncContext *ac, void *reply, void *priv)
{
    follow *f = priv;
    redisReply *r = reply;
    f->owner_asked = 0;
    if (r == NULL) {
        mcp__rc_lost(f->c, ac);
    } else if (f->state != F_FINISHED) {
        if (r->type != REDIS_REPLY_INTEGER) {
            finish(f, MCP_ECONNECT);
        } else if (r->integer == 0 &&
                   uv_now(f->c->loop) - f->c->up_since < 3 * (uint64_t)f->c->heartbeat_ms) {
            /* No heartbeat, but this node has just connected again: the server may have
             * lost its data (a restart), and the owner not have written its heartbeat
             * again yet. Asked again at the next tick. */
        } else if (r->integer == 0) {
            /* Gone: what it stored is still emitted first (replay_done ends it). */
            f->owner_gone = 1;
            if (f->state == F_LIVE)
                finish(f, MCP_ECLOSED);
        }
    }
    unref(f);
}

static int ask_owner(follow *f)
{
    mcp__buf key = {0};
    int rc = mcp__rc_key_node(f->c, &key, "node:", f->owner);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(f->c, on_owner, f, "EXISTS %s", key.data);
    mcp__buf_free(&key);
    if (rc == MCP_OK) {
        f->refs++;
        f->owner_asked = 1;
    }
    return rc;
}

/* The subscription is confirmed: two commands written together, answered in this
 * order: whether the owner lives, the first page. */
static int start_replay(follow *f)
{
    f->state = F_REPLAYING;
    int rc = ask_owner(f);
    if (rc == MCP_OK) {
        rc = mcp__rpager_send(f->c, &f->pager, f->key, on_page, f);
        if (rc == MCP_OK)
            f->refs++;
    }
    return rc;
}

/* ---- The subscribing connection's news ---- */

static void on_subscribed(follow *f, void *ctx)
{
    (void)ctx;
    if (f->state == F_SUBSCRIBING && f->ch != NULL && f->ch->subs_acked >= f->need_ack &&
        start_replay(f) != MCP_OK)
        finish(f, MCP_ECONNECT);
}

void mcp__rc_follow_subscribed(mcp__cluster *c, const char *chan)
{
    mcp__rchan *ch = mcp__map_get(&c->chans, chan);
    if (ch == NULL)
        return;
    ch->subs_acked++;
    each_follower(c, ch, on_subscribed, NULL);
}

static void keep_live(follow *f, const mcp__rentry *e)
{
    size_t len = e->len;
    char kind = e->end ? (e->len > 0 ? 'f' : 'e') : e->pause ? 'p' : e->gap ? 'g' : 'd';
    if (f->live.len + len > LIVE_MAX ||
        mcp__buf_reserve(&f->live, 1 + sizeof(e->seq) + sizeof(len) + len) != MCP_OK) {
        mcp__warn("redis: a follower fell too far behind its stream; it ends");
        finish(f, MCP_ECONNECT);
        return;
    }
    mcp__buf_append(&f->live, &kind, 1);
    mcp__buf_append(&f->live, &e->seq, sizeof(e->seq));
    mcp__buf_append(&f->live, &len, sizeof(len));
    mcp__buf_append(&f->live, e->data, len);
}

static void on_live(follow *f, void *ctx)
{
    const mcp__rentry *e = ctx;
    if (f->state == F_LIVE)
        deliver(f, e);
    else if (f->state == F_REPLAYING)
        keep_live(f, e);
    /* Still waiting for its subscription (an older one of the channel is still
     * active): what it hears now its replay, asked for later, reads. */
}

void mcp__rc_follow_message(mcp__cluster *c, const char *chan, const char *data, size_t len)
{
    mcp__rchan *ch = mcp__map_get(&c->chans, chan);
    mcp__rentry e = {0};
    if (ch == NULL || mcp__rc_live_parse(data, len, &e) != 0)
        return; /* a channel left, or not a message of ours */
    each_follower(c, ch, on_live, &e);
}

void mcp__rc_follow_tick(mcp__cluster *c)
{
    /* No caller's callback runs here: the list holds still. */
    for (follow *f = c->follows; f != NULL; f = f->next)
        if (!f->owner_asked && !f->owner_gone && ask_owner(f) != MCP_OK)
            break;
}

void mcp__rc_follow_end_all(mcp__cluster *c, int status)
{
    /* The subscriptions went with the connection: no UNSUBSCRIBE is sent, and no
     * confirmation will come to be counted. */
    size_t pos = 0;
    const char *name;
    void *v;
    while (mcp__map_next(&c->chans, &pos, &name, &v)) {
        mcp__rchan *ch = v;
        mcp__map_remove(&c->chans, name);
        ch->gone = 1;
        chan_maybe_free(c, ch);
    }
    while (c->follows != NULL)
        finish(c->follows, status);
}

/* ---- Start ---- */

mcp__cluster_follow *mcp__cluster_follow_start(mcp__cluster *c, const char *session,
                                               uint64_t stream, uint32_t owner, uint64_t after_seq,
                                               mcp_event_fn emit, mcp__cluster_follow_done_fn done,
                                               void *arg)
{
    if (c->state != MCP__RC_UP)
        return NULL;
    mcp__buf key = {0}, chan = {0};
    follow *f = NULL;
    mcp__rchan *ch = NULL;
    if (mcp__rc_key_events(c, &key, session, stream) != MCP_OK ||
        mcp__rc_key_chan(c, &chan, session, stream) != MCP_OK)
        goto fail;
    mcp__rc_held_write(c, key.data); /* a stream of this node's: read after what it holds */
    f = calloc(1, sizeof(*f) + key.len + 1);
    if (f == NULL)
        goto fail;
    memcpy(f->key, key.data, key.len + 1);
    f->stream = stream;
    f->c = c;
    f->state = F_SUBSCRIBING;
    f->refs = 1;
    f->owner = owner;
    f->last = after_seq;
    f->emit = emit;
    f->done = done;
    f->arg = arg;
    mcp__rpager_init(&f->pager, stream, after_seq);

    ch = mcp__map_get(&c->chans, chan.data);
    if (ch == NULL) {
        ch = calloc(1, sizeof(*ch));
        if (ch == NULL)
            goto fail;
        ch->name = mcp__buf_steal(&chan);
        if (ch->name == NULL || mcp__map_put(&c->chans, ch->name, ch) != MCP_OK) {
            free(ch->name);
            free(ch);
            goto fail;
        }
    }
    if (ch->n == 0) {
        if (mcp__rc_subscribe(c, ch->name, 1) != MCP_OK) {
            chan_maybe_free(c, ch);
            goto fail;
        }
        ch->subs_sent++;
    }
    f->ch = ch;
    f->ch_next = ch->head;
    if (ch->head != NULL)
        ch->head->ch_prev = f;
    ch->head = f;
    ch->n++;
    MCP__LIST_PUSH(c->follows, f);
    f->need_ack = ch->subs_sent;
    mcp__buf_free(&key);
    mcp__buf_free(&chan);
    if (ch->subs_acked >= f->need_ack && start_replay(f) != MCP_OK) {
        /* Nothing was promised yet: undone without done, as by unfollow (what was
         * queued holds the memory until answered). */
        mcp__cluster_unfollow(f);
        return NULL;
    }
    return f;
fail:
    free(f);
    mcp__buf_free(&key);
    mcp__buf_free(&chan);
    return NULL;
}
