/* SPDX-License-Identifier: MIT */
/*
 * Resuming a stream of the Streamable HTTP transport: GET with Last-Event-ID
 * (spec 2025-11-25, Resumability and Redelivery; SEP-1699 polling). See
 * shttp.h.
 */
#include <stdlib.h>
#include <string.h>

#include "sse/sse.h"
#include "transport/shttp.h"

/* ---- Resuming a stream (GET with Last-Event-ID) ---- */

/*
 * A resume replays what the client missed from the event store, then attaches
 * the GET to the stream for what follows. A store may answer later (a networked
 * one), so the replay is a small state machine: while it runs, the stream's
 * live messages are only stored, and when it ends, what was stored meanwhile is
 * replayed too, so that nothing is lost, doubled or reordered.
 */
struct hresume {
    shttp *t;
    hsess *hs;
    hstream *st;
    mcp__http_req *req;     /* the resuming GET; NULL once it is gone */
    mcp__http_req *old_req; /* the socket it takes over from, if any */
    int old_begun;
    int created;
    uint64_t stream;
    uint64_t after;     /* the last event the client has */
    uint64_t seq_at;    /* the session's event count when this replay began */
    uint64_t seq_begin; /* and when the resume began */
    int replayed;
    size_t replayed_bytes;
    uint64_t resumed_after; /* the Last-Event-ID's seq */
    int cancelled;          /* the session closed */
    int restart;            /* taken over: the replay under way is ignored, one begins again */
    int running;            /* inside the store's replay call */
    int done_status;        /* set by a replay that completed inside its call */
    int done_now;
    hresume *next;
};

static void resume_next(hresume *r);

hresume *mcp__shttp_resume_next(const hresume *r)
{
    return r->next;
}

int mcp__shttp_resumes_running(const hsess *hs)
{
    int n = 0;
    for (const hresume *r = hs->resumes; r != NULL; r = r->next)
        n++;
    return n;
}

/*
 * A resume of a POST stream that had sent everything stays open, carrying nothing
 * (HS_IDLE, no reconnect loop: clients that resume every finished stream would otherwise
 * reconnect in a loop). Such streams counted toward the session's GET limit, so a
 * client that resumed 16 of them was refused every new GET (429). At the limit the
 * oldest gives way: it ends as its POST stream had, and its id is remembered, so
 * that its client's reconnect is refused (429, after which clients give up) rather
 * than let in to push out another one, round and round.
 */
int mcp__shttp_idle_give_way(hsess *hs, const char *last_event_id)
{
    uint64_t id, seq;
    if (last_event_id != NULL && mcp__parse_event_id(hs, last_event_id, &id, &seq) == 0) {
        unsigned n = hs->ngave_way < MCP__GAVE_WAY ? hs->ngave_way : MCP__GAVE_WAY;
        for (unsigned i = 0; i < n; i++)
            if (hs->gave_way[i] == id)
                return 0;
    }
    hstream *oldest = NULL;
    for (hstream *p = hs->streams; p != NULL; p = p->next)
        if (p->kind == HS_IDLE && p->req != NULL && p->resuming == NULL)
            oldest = p; /* the list is newest first */
    if (oldest == NULL)
        return 0;
    hs->gave_way[hs->ngave_way++ % MCP__GAVE_WAY] = oldest->id;
    mcp__hstream_end(oldest);
    mcp__hstream_free(oldest);
    return 1;
}

static void resume_unlink(hresume *r)
{
    if (r->cancelled)
        return;
    for (hresume **p = &r->hs->resumes; *p != NULL; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
}

void mcp__shttp_resumes_cancel(hsess *hs)
{
    while (hs->resumes != NULL) {
        hresume *r = hs->resumes;
        hs->resumes = r->next;
        r->cancelled = 1;
        if (r->st != NULL)
            r->st->resuming = NULL;
        if (r->req != NULL && mcp__http_stream_end(r->req) == MCP_ESTATE)
            mcp__shttp_error(r->t, r->req, 404, MCP__SESSION_NOT_FOUND, "Session terminated");
        r->req = NULL;
        if (r->old_req != NULL)
            mcp__http_req_release(r->old_req);
        r->old_req = NULL;
        r->st = NULL;
        /* The store still holds r until it calls done; it is freed there. */
    }
}

static void resume_req_closed(void *arg, mcp__http_req *req)
{
    hresume *r = arg;
    mcp__http_req_release(req);
    r->req = NULL;
}

static void resume_emit(void *arg, uint64_t seq, const char *data, size_t len)
{
    hresume *r = arg;
    if (r->restart)
        return; /* for the connection it replaced: replayed again, from where this one is */
    if (seq > r->after)
        r->after = seq;
    if (r->cancelled || r->req == NULL)
        return;
    r->hs->t->stats.replayed_events++;
    hstream *st = r->st;
    char eid[64];
    mcp__event_id(r->hs, r->stream, seq, eid);
    mcp__buf b = {0};
    if (mcp__sse_event(&b, "message", eid, -1, data, len) != MCP_OK) {
        /* Out of memory: the replay must not skip an event. The client resumes again. */
        mcp__buf_free(&b);
        mcp__http_req_abort(r->req);
        r->req = NULL;
        return;
    }
    /* Write through the stream's writer, which begins the response and guards
     * against slow readers, with this GET as its connection for the moment. */
    st->req = r->req;
    st->slack += b.len;
    st->slack_at = uv_now(r->t->loop);
    mcp__hstream_write(st, b.data, b.len);
    if (st->req == NULL)
        r->req = NULL; /* cut for being slow: aborted, and finished with it */
    st->req = NULL;
    mcp__buf_free(&b);
    r->replayed++;
    r->replayed_bytes += len;
}

/* The end of the resume: attach the GET to the stream, or refuse it. */
static void resume_finish(hresume *r, int status)
{
    hsess *hs = r->hs;
    hstream *st = r->st;
    shttp *t = r->t;
    resume_unlink(r);
    st->resuming = NULL;
    if (status != MCP_OK) {
        /* Unknown or expired (nothing replayed): a clear error. A replay that failed part
         * way (the store went out of reach): the client is cut, and resumes from the last
         * event it has. Either way the stream is left as it was, but for a connection of
         * its own that missed what was stored meanwhile: that one is cut too. */
        st->begun = r->old_begun;
        int missed = hs->next_seq != r->seq_begin || st->finished;
        if (r->old_req != NULL && !missed && !mcp__http_req_closed(r->old_req)) {
            st->req = r->old_req;
            mcp__http_req_on_close(st->req, mcp__shttp_stream_closed, st);
        } else if (r->old_req != NULL && !mcp__http_req_closed(r->old_req)) {
            mcp__http_req_abort(r->old_req);
        } else if (r->old_req != NULL) {
            mcp__http_req_release(r->old_req);
        }
        if (r->req != NULL && r->replayed > 0)
            mcp__http_req_abort(r->req);
        else if (r->req != NULL &&
                 !(t->share != NULL && t->share->replay_failed(t, r->req, status)))
            mcp__shttp_error(t, r->req, 400, MCP_RPC_SERVER_ERROR,
                             "Bad Request: Last-Event-ID is unknown or expired");
        if (st->req == NULL && (r->created || st->finished || st->kind == HS_GET))
            mcp__hstream_free(st);
        free(r);
        return;
    }
    if (r->old_req != NULL)
        mcp__http_req_abort(r->old_req);
    mcp__http_req *req = r->req;
    int replayed = r->replayed;
    size_t replayed_bytes = r->replayed_bytes;
    uint64_t after = r->resumed_after;
    free(r);
    if (req == NULL) {
        /* The client left (or was cut) during the replay: it resumes again later. */
        if (st->finished || st->kind == HS_GET || st->kind == HS_IDLE)
            mcp__hstream_free(st);
        return;
    }
    st->req = req;
    mcp__http_req_on_close(req, mcp__shttp_stream_closed, st);
    /* What the client had is confirmed by its Last-Event-ID; what was replayed is
     * on its way. */
    st->unconfirmed = (size_t)replayed;
    st->unconfirmed_bytes = replayed_bytes;
    st->unconfirmed_seq = after + 1;
    st->unconfirmed_at = hs->stored_bytes - replayed_bytes;
    hs->window_moved = 1;
    if (st->kind == HS_GET)
        hs->last_standalone = st->id;
    if (st->finished || (st->kind == HS_IDLE && replayed > 0)) {
        /* The stream's last event, its final answer, has now been delivered: end
         * this GET as the original stream would have ended. */
        mcp__hstream_end(st);
        mcp__hstream_free(st);
        return;
    }
    /* Headers at once; an idle resume then only gets keep-alive comments. */
    mcp__hstream_write(st, NULL, 0);
    if (st->req != NULL)
        mcp__hstream_maybe_ready(st);
}

static void resume_done(void *arg, int status)
{
    hresume *r = arg;
    if (r->cancelled) {
        free(r);
        return;
    }
    if (r->running) {
        /* Completed inside the store's call: finish after it returns. */
        r->done_now = 1;
        r->done_status = status;
        return;
    }
    if (r->restart) {
        r->restart = 0;
        resume_next(r);
        return;
    }
    if (status == MCP_OK && r->hs->next_seq != r->seq_at) {
        /* Events were stored while the store answered: replay those too. */
        resume_next(r);
        return;
    }
    resume_finish(r, status);
}

static void resume_next(hresume *r)
{
    for (;;) {
        r->seq_at = r->hs->next_seq;
        r->running = 1;
        r->done_now = 0;
        int rc = mcp_event_store_replay(r->t->store, r->hs->id, r->stream, r->after, resume_emit,
                                        resume_done, r);
        r->running = 0;
        if (rc != MCP_OK) {
            resume_finish(r, rc);
            return;
        }
        if (!r->done_now)
            return; /* resume_done comes later */
        if (r->restart) {
            r->restart = 0;
            continue;
        }
        if (r->done_status != MCP_OK || r->hs->next_seq == r->seq_at) {
            resume_finish(r, r->done_status);
            return;
        }
    }
}

/*
 * The client resumed again before the replay into its last connection ended (a store
 * that answers later: it was cut, or gave up, mid-replay): req takes that connection's
 * place, and the replay begins again from what req's client has. A second stream of
 * the same id would take the stream's messages from this one, or end on the replay's
 * last event as a stream already answered.
 */
static void resume_take_over(hresume *r, mcp__http_req *req, uint64_t seq)
{
    if (r->req != NULL) {
        mcp__http_req_on_close(r->req, NULL, NULL);
        mcp__http_req_abort(r->req);
    }
    r->req = req;
    r->after = r->resumed_after = seq;
    r->replayed = 0;
    r->replayed_bytes = 0;
    r->restart = 1;
    r->st->begun = 0;
    r->st->slack = 0;
    mcp__http_req_on_close(req, resume_req_closed, r);
}

void mcp__shttp_resume(shttp *t, hsess *hs, mcp__http_req *req, const char *last_event_id)
{
    uint64_t id, seq;
    int parsed = mcp__parse_event_id(hs, last_event_id, &id, &seq) == 0 && seq > 0;
    enum mcp__resume_verdict v = MCP__RESUME_LOCAL;
    if (parsed && t->share != NULL)
        v = t->share->resume(t, hs, req, id, seq);
    if (v == MCP__RESUME_TAKEN)
        return;
    /* The plug-in knows the streams of a session it shares (their ids count across
     * this node's sessions, and a copy made again here counts its events anew). */
    if (!parsed || id < 2 || v == MCP__RESUME_BAD ||
        (v == MCP__RESUME_LOCAL && (id / 2 > hs->next_stream || seq > hs->next_seq))) {
        /* Never an empty 200 stream: clients would reconnect to it forever. */
        mcp__shttp_error(t, req, 400, MCP_RPC_SERVER_ERROR,
                         "Bad Request: Last-Event-ID is not an event of this session");
        return;
    }
    if (mcp__hsess_gap_after(hs, id, seq)) {
        mcp__shttp_error(t, req, 400, MCP_RPC_SERVER_ERROR,
                         "Bad Request: the server could not keep every event of this stream after "
                         "Last-Event-ID (out of memory); it cannot be resumed");
        return;
    }
    t->stats.resumes++;
    hstream *st = NULL;
    for (hstream *p = hs->streams; p != NULL; p = p->next) {
        if (p->id != id || p->kind == HS_IDLE || p->finished)
            continue;
        if (p->resuming != NULL) {
            resume_take_over(p->resuming, req, seq);
            return;
        }
        st = p;
    }
    hresume *r = calloc(1, sizeof(*r));
    int created = 0;
    if (r != NULL && st == NULL) {
        /* A POST stream that is gone had sent its final answer; a GET stream that is
         * gone becomes live again. */
        st = mcp__hstream_attach(hs, id, id % 2 ? HS_GET : HS_IDLE, NULL);
        created = 1;
    }
    if (r == NULL || st == NULL) {
        free(r);
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    /* A standalone stream only notifies, resumed or not (see MCP__NOTIFY_SNDBUF). */
    if (st->kind == HS_GET)
        mcp__http_req_limit_sndbuf(req, MCP__NOTIFY_SNDBUF);
    r->t = t;
    r->hs = hs;
    r->st = st;
    r->req = req;
    r->created = created;
    r->stream = id;
    r->after = seq;
    r->resumed_after = seq;
    r->seq_begin = hs->next_seq;
    /* The stream lives on (its request still runs, or a GET is open): this connection
     * takes it over once the replay is done. Meanwhile its messages are only stored. */
    r->old_req = st->req;
    r->old_begun = st->begun;
    if (r->old_req != NULL)
        mcp__http_req_on_close(r->old_req, NULL, NULL);
    st->req = NULL;
    st->begun = 0;
    st->resuming = r;
    r->next = hs->resumes;
    hs->resumes = r;
    mcp__http_req_on_close(req, resume_req_closed, r);
    resume_next(r);
}
