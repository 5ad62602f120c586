/* SPDX-License-Identifier: MIT */
/*
 * Sessions shared with other nodes of one deployment (--redis), behind a load
 * balancer that sends each request anywhere.
 *
 * A session lives wherever it is used: each node that serves one of its requests
 * keeps a copy (an hsess like any other, marked shared), made from the session's
 * record in the cluster the first time the node sees its id. The record holds what
 * the server core exports (revision, client capabilities and info, log level,
 * subscriptions), the event tag, and where the standalone stream is; a node that
 * changes it writes it and tells the others, which take it into their copies.
 *
 * Streams stay where they were made. A stream id carries its node's number in its
 * high bits, so a resume of another node's stream is recognised from the
 * Last-Event-ID alone: it is served here by following the stream in the shared
 * store (replayed, then live, until its owner ends it), and if its owner dies the
 * client gets an error for each request the stream was to answer. Requests to the
 * client carry the node's number in their ids too, so an answer that arrives
 * elsewhere is sent to the node that awaits it; a cancellation goes to every node.
 *
 * A copy that expires here, or makes room, is forgotten here only; DELETE (or the
 * answerer ending a session) ends it on every node, and the record's time to live
 * (the idle expiry) ends a session no node uses.
 */
/* memmem */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/rpc.h"
#include "sse/sse.h"
#include "transport/cluster/cluster.h"
#include "transport/cluster/cluster_int.h"

/* Bus messages between nodes. */
#define MSG_RECORD 'S'      /* a session's record changed: the record */
#define MSG_ENDED 'D'       /* a session ended */
#define MSG_ANSWER 'R'      /* a client's answer to the receiving node's request */
#define MSG_CANCEL 'C'      /* a client's notifications/cancelled */
#define MSG_STANDALONE 'M'  /* a message for the session's standalone stream */
#define MSG_NOTICE 'N'      /* a server-wide notification raised on the sending node */
#define MSG_HTTPSSE 'L'     /* an HTTP+SSE session's POST body */
#define MSG_ENDED_HEARD 'E' /* a node took in the sender's MSG_ENDED */
#define MSG_CAUGHT_UP 'K'   /* "<stream> <seq>": its client, reading here, has every event to seq */
#define MSG_TASK_STOP 'T'   /* the run of a task on the receiving node: stop it (tasks/cancel) */

/* A finished stream of a session, stored in the cluster (see kept_trim). */
typedef struct hkept {
    struct hkept *next;
    uint64_t stream;
    uint64_t first_seq; /* of its first event */
    size_t events;
    uint64_t bytes;
} hkept;

/* Whether the session's record lives in the cluster (shared, an HTTP+SSE session's, or a
 * pinned one's). */
static int kept_elsewhere(const hsess *hs)
{
    return hs->sh->shared || hs->sh->httpsse_shared || hs->sh->pinned;
}

/* Requests waiting for a session's record, at most (more get 503). */
#define MAX_LOOKUPS 1024
/* Bytes of messages one session may hold while its record is written. */
#define MAX_HELD_BYTES (8u << 20)

/* The cluster's store keeps a session's events per node: the group of its streams is
 * their node. */
_Static_assert(MCP__CLUSTER_GROUP_SHIFT == MCP__NODE_SHIFT, "a stream's group is its node");

uint32_t mcp__stream_node(uint64_t stream)
{
    return (uint32_t)(stream >> MCP__NODE_SHIFT);
}

/* ---- The session's record ---- */

static json_t *record_of(hsess *hs)
{
    json_t *state = HS_ANS(hs)->export_state(hs->sess);
    if (state == NULL)
        return NULL;
    /* owner: who the session belongs to, with authorization (a digest, see
     * mcp__hsess_bind), so that every node refuses it to another principal. */
    return json_pack("{s:s, s:s, s:o, s:[I,I,I]}", "tag", hs->tag, "owner", hs->owner, "state",
                     state, "standalone", (json_int_t)hs->sh->standalone_node,
                     (json_int_t)hs->sh->standalone_stream, (json_int_t)hs->sh->standalone_ver);
}

/* Takes a record into the session's copy. Where the standalone stream is goes by its
 * version: a record written by a node whose copy is older (a setLevel there, say)
 * does not move it back; of two GETs opened at once on two nodes, the higher node
 * number wins everywhere. */
static int record_apply(hsess *hs, const json_t *rec)
{
    json_int_t node = 0, stream = 0, ver = 0;
    const json_t *state = json_object_get(rec, "state");
    const char *owner = json_string_value(json_object_get(rec, "owner"));
    if (json_unpack((json_t *)rec, "{s:[I,I,I]}", "standalone", &node, &stream, &ver) != 0 ||
        state == NULL || node < 0 || stream < 0 || ver < 0 ||
        (owner != NULL && strlen(owner) >= sizeof(hs->owner)))
        return MCP_EINVAL;
    /* A record without an owner (a node without authorization wrote it) leaves the copy
     * with none, which no authorized request owns. */
    snprintf(hs->owner, sizeof(hs->owner), "%s", owner != NULL ? owner : "");
    int rc = HS_ANS(hs)->import_state(hs->sess, state);
    if (rc != MCP_OK)
        return rc;
    if ((uint64_t)ver > hs->sh->standalone_ver ||
        ((uint64_t)ver == hs->sh->standalone_ver && (uint32_t)node > hs->sh->standalone_node)) {
        hs->sh->standalone_node = (uint32_t)node;
        hs->sh->standalone_stream = (uint64_t)stream;
        hs->sh->standalone_ver = (uint64_t)ver;
    }
    return MCP_OK;
}

static void put_done(void *arg, int status);

/* A record lives as long as its session would idle, and a little longer. */
static int record_ttl(const shttp *t)
{
    return t->idle_ms + t->idle_ms / 8;
}

/* The record of a session only this node serves: an HTTP+SSE session (its
 * event stream is here, see mcp__shttp_cluster_httpsse_new), or a pinned one (its
 * answerer cannot share it; other nodes relay its requests here). It names the node.
 * Its length. */
static size_t node_record(const hsess *hs, char *out, size_t size)
{
    shttp *t = hs->t;
    /* An HTTP+SSE session's owner (hex, or empty), so that the node a POST reaches
     * refuses it to another principal before sending it on (see httpsse_got). */
    int n = hs->httpsse ? snprintf(out, size, "{\"httpsse\":%u,\"owner\":\"%s\"}",
                                   (unsigned)t->sh->node, hs->owner)
            : t->sh->cluster_addr[0] == '\0'
                ? snprintf(out, size, "{\"pinned\":%u}", (unsigned)t->sh->node)
                /* Where other nodes send its requests: no lookup of the node's heartbeat
                 * (which a busy node may renew late), the node itself is the authority. */
                : snprintf(out, size, "{\"pinned\":%u,\"addr\":\"%s\"}", (unsigned)t->sh->node,
                           t->sh->cluster_addr);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* The session ended on another node (DELETE there): this copy ends too. */
static void ended_elsewhere(hsess *hs)
{
    if (hs->closing)
        return;
    mcp__cluster_session_gone(hs->t->sh->cluster, hs->id);
    hs->sh->local_close = 1;
    mcp__hsess_close(hs);
}

static void pinned_put(hsess *hs);

/* Writes the record (and tells the other nodes once it is written). */
static void record_put(hsess *hs)
{
    shttp *t = hs->t;
    if (hs->sh->pinned) {
        pinned_put(hs);
        return;
    }
    json_t *rec = record_of(hs);
    char *text = rec != NULL ? json_dumps(rec, JSON_COMPACT) : NULL;
    if (text == NULL) {
        json_decref(rec);
        return;
    }
    /* What the client is told next waits until any node can find what it implies. Until
     * a record is written, each write is a new session's, counted against the bound. */
    int rc = mcp__cluster_session_put(t->sh->cluster, hs->id, text, strlen(text), record_ttl(t),
                                      hs->sh->recorded ? 0 : MCP__CLUSTER_PUT_NEW, put_done, hs);
    free(text);
    hs->sh->unwritten = rc != MCP_OK;
    if (rc == MCP_OK) {
        hs->sh->puts++;
        /* Other nodes' copies are initialized, and keep what initialize settled: the
         * change they are sent leaves out the client's capabilities and info, which
         * may be large (nodes would get them at every setLevel or subscribe). */
        json_t *state = json_object_get(rec, "state");
        json_object_del(state, "caps");
        json_object_del(state, "info");
        text = json_dumps(rec, JSON_COMPACT);
        if (text != NULL)
            mcp__cluster_send(t->sh->cluster, 0, MSG_RECORD, hs->id, text, strlen(text));
        free(text);
    } else {
        mcp__warn("session %s: its record could not be written (%s); it will be once the "
                  "shared store is back",
                  hs->id, mcp_strerror(rc));
    }
    json_decref(rec);
    hs->sh->touched_ms = mcp__now_ms();
}

static void release_held(hsess *hs);

/*
 * The first record of a session could not be written (Redis refused it: full, say):
 * no other node can find the session, so its client is told 503 now, in place of the
 * initialize answer that was held for the record, rather than 200 with an id the other
 * nodes answer 404 to. The session ends here.
 */
static void never_recorded(hsess *hs, int status)
{
    shttp *t = hs->t;
    int full = status == MCP_ELIMIT;
    mcp__warn("session %s: its record could not be written (%s): the client is answered 503 "
              "and the session ends",
              hs->id, full ? "the deployment has its most sessions" : mcp_strerror(status));
    for (hstream *st = hs->streams; st != NULL; st = st->next) {
        if (st->req == NULL || st->begun)
            continue;
        mcp__shttp_error(t, st->req, 503, MCP_RPC_SERVER_ERROR,
                         full ? "Service Unavailable: too many sessions on this server; try "
                                "again later"
                              : "Service Unavailable: the shared session store did not take "
                                "the session; try again later");
        st->req = NULL;
    }
    hs->sh->local_close = 1; /* nothing of it is in the cluster */
    mcp__hsess_close(hs);
}

static void put_done(void *arg, int status)
{
    hsess *hs = arg;
    if (--hs->sh->puts == 0 && hs->closing) {
        free(hs->sh); /* closed meanwhile: see mcp__hsess_close */
        free(hs);
        return;
    }
    if (status == MCP_ECANCELED) {
        /* Ended on another node, and this one missed the news. */
        ended_elsewhere(hs);
        return;
    }
    if (status == MCP_OK)
        hs->sh->recorded = 1;
    else if (!hs->sh->recorded && !hs->closing && (status == MCP_ELIMIT || status == MCP_EIO)) {
        /* Refused, not lost: a connection that went away is written again once back. */
        never_recorded(hs, status);
        return;
    }
    /* Redis answers in order: the last answer tells whether the latest state is there. */
    hs->sh->unwritten = status != MCP_OK;
    if (status != MCP_OK)
        mcp__warn("session %s: its record was not written (%s); it will be once the shared "
                  "store is back",
                  hs->id, mcp_strerror(status));
    if (hs->sh->puts == 0)
        release_held(hs);
}

/* Writes a pinned session's record; what the client is told meanwhile (its
 * initialize's answer) waits until other nodes can find where to relay it. */
static void pinned_put(hsess *hs)
{
    shttp *t = hs->t;
    char rec[400];
    size_t n = node_record(hs, rec, sizeof(rec));
    int rc = mcp__cluster_session_put(t->sh->cluster, hs->id, rec, n, record_ttl(t),
                                      hs->sh->recorded ? 0 : MCP__CLUSTER_PUT_NEW, put_done, hs);
    hs->sh->unwritten = rc != MCP_OK;
    if (rc == MCP_OK)
        hs->sh->puts++;
    hs->sh->touched_ms = mcp__now_ms();
}

void mcp__shttp_cluster_session_new(hsess *hs)
{
    shttp *t = hs->t;
    hs->sh->held_tail = &hs->sh->held;
    if (HS_ANS(hs)->export_state == NULL) {
        /* Its sessions are served where they began (a gateway's, by a child process
         * here): other nodes relay their requests here. */
        hs->sh->pinned = 1;
        pinned_put(hs);
        return;
    }
    hs->sh->shared = 1;
    if (HS_ANS(hs)->set_id_base != NULL)
        HS_ANS(hs)->set_id_base(hs->sess, (json_int_t)t->sh->node << MCP__ID_NODE_SHIFT);
}

void mcp__shttp_cluster_changed(hsess *hs)
{
    if (!hs->closing)
        record_put(hs);
}

/* ---- Records that went missing ---- */

/* A question about a session's record, answered later: the session is looked up
 * again by id then (it may be gone). */
typedef struct record_check {
    shttp *t;
    char id[33];
} record_check;

static void record_restore(hsess *hs);

static void record_checked(void *arg, int status)
{
    record_check *k = arg;
    hsess *hs = mcp__map_get(&k->t->sessions, k->id);
    free(k);
    if (hs == NULL || hs->closing)
        return;
    if (status == MCP_ECANCELED)
        ended_elsewhere(hs);
    else if (status == MCP_ENOENT)
        record_restore(hs); /* it expired, or Redis lost it */
}

static record_check *record_check_new(hsess *hs)
{
    record_check *k = malloc(sizeof(*k));
    if (k != NULL) {
        k->t = hs->t;
        memcpy(k->id, hs->id, sizeof(k->id));
    }
    return k;
}

/* Writes the session's record where there is none (Redis restarted without its
 * data, or it expired while the session was in use here), unless it was ended. */
static void record_restore(hsess *hs)
{
    shttp *t = hs->t;
    char *text = NULL;
    if (hs->sh->httpsse_shared || hs->sh->pinned) {
        char rec[400];
        node_record(hs, rec, sizeof(rec));
        text = mcp__strdup(rec);
    } else if (hs->sh->shared) {
        json_t *rec = record_of(hs);
        text = rec != NULL ? json_dumps(rec, JSON_COMPACT) : NULL;
        json_decref(rec);
    }
    record_check *k = text != NULL ? record_check_new(hs) : NULL;
    if (k != NULL &&
        mcp__cluster_session_put(t->sh->cluster, hs->id, text, strlen(text), record_ttl(t),
                                 MCP__CLUSTER_PUT_MISSING, record_checked, k) != MCP_OK)
        free(k);
    free(text);
}

void mcp__shttp_cluster_touch(hsess *hs)
{
    shttp *t = hs->t;
    uint64_t now = mcp__now_ms();
    if (now - hs->sh->touched_ms < (uint64_t)t->idle_ms / 8)
        return;
    hs->sh->touched_ms = now;
    /* The answer says whether the record is still there, and the session still on. */
    record_check *k = record_check_new(hs);
    if (k != NULL && mcp__cluster_session_touch(t->sh->cluster, hs->id, record_ttl(t),
                                                record_checked, k) != MCP_OK)
        free(k);
}

void mcp__shttp_cluster_session_end(hsess *hs)
{
    shttp *t = hs->t;
    mcp__cluster_session_delete(t->sh->cluster, hs->id, record_ttl(t));
    mcp__cluster_send(t->sh->cluster, 0, MSG_ENDED, hs->id, "", 0);
}

/* ---- DELETE ---- */

/* How long a DELETE waits for the other nodes to say they heard, at most, once the
 * server has said how many got the news. */
#define DELETE_WAIT_MS 1000

typedef struct hdelete {
    shttp *t;
    struct hdelete *next;
    mcp__http_req *req; /* NULL once its client left */
    char id[33];
    int expected; /* nodes that got the news; -1 until the server says */
    int heard;
    uv_timer_t *timer;
} hdelete;

static void delete_req_closed(void *arg, mcp__http_req *req)
{
    hdelete *d = arg;
    mcp__http_req_release(req);
    d->req = NULL;
}

/* Answers the DELETE (if its client is still there) with status and forgets it. Only
 * once the server said how many nodes got the news (or the connection went): the
 * PUBLISH's callback holds d until then. */
static void delete_finish(hdelete *d, int status)
{
    shttp *t = d->t;
    for (hdelete **p = &t->sh->deletes; *p != NULL; p = &(*p)->next) {
        if (*p == d) {
            *p = d->next;
            break;
        }
    }
    if (d->req != NULL && status == 200) {
        mcp__http_req_on_close(d->req, NULL, NULL);
        mcp__shttp_deleted(t, d->req);
    } else if (d->req != NULL) {
        /* Whether the other nodes heard is not known: the client asks again (here the
         * session is gone already; elsewhere its record, if still there, is found). */
        mcp__http_req_on_close(d->req, NULL, NULL);
        mcp__shttp_cluster_unavailable(t, d->req);
    }
    mcp__uv_close_free((uv_handle_t *)d->timer, d->timer);
    free(d);
}

static void delete_check(hdelete *d)
{
    if (d->expected >= 0 && d->heard >= d->expected)
        delete_finish(d, 200);
}

/* Some node that got the news did not say it took it in: it has it in its socket, and
 * a node that slow is not waited for longer. */
static void delete_timeout(uv_timer_t *h)
{
    delete_finish(h->data, 200);
}

static void delete_published(void *arg, int receivers)
{
    hdelete *d = arg;
    if (receivers < 0) {
        delete_finish(d, 503);
        return;
    }
    /* This node's own subscription is among them, and does not answer. */
    d->expected = receivers > 0 ? receivers - 1 : 0;
    if (d->heard >= d->expected) {
        delete_finish(d, 200);
        return;
    }
    uv_timer_start(d->timer, delete_timeout, DELETE_WAIT_MS, 0);
}

static void delete_heard(shttp *t, const char *id)
{
    for (hdelete *d = t->sh->deletes; d != NULL; d = d->next) {
        if (strcmp(d->id, id) == 0) {
            d->heard++;
            delete_check(d);
            return;
        }
    }
}

void mcp__shttp_cluster_delete(shttp *t, hsess *hs, mcp__http_req *req)
{
    if (!mcp__cluster_up(t->sh->cluster)) {
        /* Ended here only, the others would serve it on: the client asks again. */
        mcp__shttp_cluster_unavailable(t, req);
        return;
    }
    hdelete *d = calloc(1, sizeof(*d));
    uv_timer_t *timer = d != NULL ? malloc(sizeof(*timer)) : NULL;
    if (timer == NULL) {
        free(d);
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    d->t = t;
    d->req = req;
    d->expected = -1;
    memcpy(d->id, hs->id, sizeof(d->id));
    uv_timer_init(t->loop, timer);
    timer->data = d;
    d->timer = timer;
    d->next = t->sh->deletes;
    t->sh->deletes = d;
    mcp__http_req_on_close(req, delete_req_closed, d);
    /* Ended here, then in the cluster: its record and events go, and its mark stays. */
    hs->sh->local_close = 1;
    mcp__hsess_close(hs);
    mcp__cluster_session_delete(t->sh->cluster, d->id, record_ttl(t));
    /* Its reply comes, or the connection goes (its watchdog included): either way
     * delete_published runs, and only then may d go. */
    if (mcp__cluster_send_counted(t->sh->cluster, 0, MSG_ENDED, d->id, "", 0, delete_published,
                                  d) != MCP_OK)
        delete_finish(d, 503);
}

/* ---- Messages held while the record is written ---- */

int mcp__shttp_cluster_hold(hsess *hs, uint64_t stream, const char *text, size_t len,
                            unsigned flags)
{
    if (hs->sh->held == NULL && hs->sh->puts == 0)
        return 0;
    size_t held = 0;
    for (hheld *h = hs->sh->held; h != NULL; h = h->next)
        held += h->len;
    hheld *h = held + len <= MAX_HELD_BYTES ? malloc(sizeof(*h) + len + 1) : NULL;
    if (h == NULL)
        return 0; /* sent at once: out of order at worst, never lost */
    h->next = NULL;
    h->stream = stream;
    h->flags = flags;
    h->len = len;
    h->has_text = text != NULL;
    if (text != NULL)
        memcpy(h->text, text, len);
    h->text[len] = '\0';
    *hs->sh->held_tail = h;
    hs->sh->held_tail = &h->next;
    return 1;
}

static void release_held(hsess *hs)
{
    /* Sent in order; a send may close the session, which frees what is left. */
    while (hs->sh->held != NULL && hs->sh->puts == 0 && !hs->closing) {
        hheld *h = hs->sh->held;
        hs->sh->held = h->next;
        if (hs->sh->held == NULL)
            hs->sh->held_tail = &hs->sh->held;
        mcp__hsess_send(hs, h->stream, h->has_text ? h->text : NULL, h->len, h->flags);
        free(h);
    }
}

void mcp__shttp_cluster_session_free(hsess *hs)
{
    if (hs->next_seq > hs->t->sh->seq_floor)
        hs->t->sh->seq_floor = hs->next_seq;
    while (hs->sh->kept != NULL) {
        hkept *k = hs->sh->kept;
        hs->sh->kept = k->next;
        free(k);
    }
    hs->sh->kept_tail = &hs->sh->kept;
    hs->sh->kept_n = hs->sh->kept_events = 0;
    hs->sh->kept_bytes = 0;
    while (hs->sh->held != NULL) {
        hheld *h = hs->sh->held;
        hs->sh->held = h->next;
        free(h);
    }
    hs->sh->held_tail = &hs->sh->held;
}

/* ---- Looking a session up ---- */

/* A request waiting for a session's record (and maybe more) before it is served. */
typedef struct parked {
    shttp *t;
    mcp__http_req *req; /* NULL once its client is gone */
    char id[33];
    uint32_t node;
} parked;

static void parked_req_closed(void *arg, mcp__http_req *req)
{
    parked *p = arg;
    mcp__http_req_release(req);
    p->req = NULL;
}

/* Parks req while something about session id is asked of the cluster; NULL when it
 * cannot be (req is then answered: 503, 500). */
static parked *park_new(shttp *t, mcp__http_req *req, const char *id)
{
    if (!mcp__cluster_up(t->sh->cluster) || t->sh->lookups >= MAX_LOOKUPS) {
        mcp__shttp_cluster_unavailable(t, req);
        return NULL;
    }
    parked *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return NULL;
    }
    p->t = t;
    p->req = req;
    snprintf(p->id, sizeof(p->id), "%s", id);
    t->sh->lookups++;
    mcp__http_req_on_close(req, parked_req_closed, p);
    return p;
}

/* Parks req while the record of session id is read; got(p, ...) runs then. */
static void park(shttp *t, mcp__http_req *req, const char *id, mcp__cluster_get_fn got)
{
    parked *p = park_new(t, req, id);
    if (p != NULL)
        mcp__cluster_session_get(t->sh->cluster, p->id, got, p);
}

/* The request back (NULL when its client left), and p freed. */
static mcp__http_req *unpark(parked *p)
{
    mcp__http_req *req = p->req;
    p->t->sh->lookups--;
    free(p);
    if (req != NULL)
        mcp__http_req_on_close(req, NULL, NULL);
    return req;
}

void mcp__shttp_cluster_unavailable(shttp *t, mcp__http_req *req)
{
    mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR,
                     "Service Unavailable: the shared session store cannot be reached");
}

/* A copy of the session the record describes; NULL (and why) when it cannot be made. */
static hsess *restore(shttp *t, const char *id, const char *text, size_t len)
{
    json_t *rec = mcp__json_parse(text, len, MCP__JSON_ANY, NULL);
    const char *tag = json_string_value(json_object_get(rec, "tag"));
    hsess *hs = NULL;
    if (tag == NULL || strlen(tag) != 16) {
        mcp__warn("session %s: its shared record cannot be read", id);
        goto out;
    }
    hs = mcp__hsess_restore(t, id, tag);
    if (hs != NULL)
        hs->next_seq = t->sh->seq_floor; /* above what this node stored of it before */
    if (hs != NULL && record_apply(hs, rec) != MCP_OK) {
        mcp__warn("session %s: its shared record cannot be read", id);
        hs->sh->local_close = 1;
        mcp__hsess_close(hs);
        hs = NULL;
    }
    if (hs != NULL) {
        hs->used = 1;
        hs->sh->recorded = 1; /* its record is there: it is no new session */
    }
out:
    json_decref(rec);
    return hs;
}

/* What a record is: 'L' an HTTP+SSE session's (see
 * mcp__shttp_cluster_httpsse_new), 'P' a pinned session's (*node holds it), 'S' a
 * shared session's. */
static char record_kind(const char *text, size_t len, uint32_t *node, char *addr, size_t addr_size)
{
    json_t *rec = mcp__json_parse(text, len, MCP__JSON_ANY, NULL);
    json_int_t pinned = json_integer_value(json_object_get(rec, "pinned"));
    const char *a = json_string_value(json_object_get(rec, "addr"));
    char kind = json_object_get(rec, "httpsse") != NULL ? 'L' : pinned > 0 ? 'P' : 'S';
    *node = pinned > 0 && pinned < ((json_int_t)1 << 20) ? (uint32_t)pinned : 0;
    snprintf(addr, addr_size, "%s", a != NULL && strlen(a) < addr_size ? a : "");
    json_decref(rec);
    return kind;
}

/* ---- Where other nodes' pinned sessions are ---- */

/* Sessions of other nodes remembered here, at most (then they are all forgotten, and
 * looked up again as they come). */
#define MAX_PINS 4096

/* A pinned session of another node: where its requests go. Its node is the authority:
 * a pin that outlived the session gets 404 there, and the pin is forgotten then (and
 * when the node cannot be reached, or the session ended elsewhere). */
typedef struct pin {
    uint32_t node;
    char addr[];
} pin;

static void pin_add(shttp *t, const char *id, uint32_t node, const char *addr, size_t len)
{
    if (t->sh->pins.len >= MAX_PINS)
        mcp__shttp_cluster_pins_free(t);
    pin *p = malloc(sizeof(*p) + len + 1);
    if (p == NULL)
        return;
    p->node = node;
    memcpy(p->addr, addr, len);
    p->addr[len] = '\0';
    free(mcp__map_get(&t->sh->pins, id));
    if (mcp__map_put(&t->sh->pins, id, p) != MCP_OK)
        free(p);
}

void mcp__shttp_cluster_unpin(shttp *t, const char *id)
{
    if (id != NULL)
        free(mcp__map_remove(&t->sh->pins, id));
}

void mcp__shttp_cluster_pins_free(shttp *t)
{
    size_t pos = 0;
    const char *id;
    void *v;
    while (mcp__map_next(&t->sh->pins, &pos, &id, &v))
        free(v);
    mcp__map_free(&t->sh->pins);
}

/* The address of the node that holds a pinned session came: the request goes there. */
static void relay_address(void *arg, int status, const char *text, size_t len)
{
    parked *p = arg;
    shttp *t = p->t;
    uint32_t node = p->node;
    int modern = p->id[0] == '\0'; /* no session: a 2026-07-28 request */
    mcp__http_req *req = unpark(p);
    if (req == NULL)
        return;
    if (status == MCP_ENOENT)
        mcp__shttp_relay_gone(t, req); /* and its session, or its waiting request */
    else if (status != MCP_OK)
        mcp__shttp_cluster_unavailable(t, req);
    else if (len < 3 || memchr(text, ':', len) == NULL)
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR,
                         "Service Unavailable: the node that holds this session has no address "
                         "other nodes can reach (set its cluster address)");
    else {
        if (!modern)
            pin_add(t, mcp__http_header(req, "mcp-session-id"), node, text, len);
        mcp__shttp_relay(t, req, node, text, len);
    }
}

/* Looks node's address up, then relays req there. p's id is the session's, or "" for
 * a request of revision 2026-07-28. */
static void relay_park(shttp *t, mcp__http_req *req, const char *id, uint32_t node)
{
    parked *p = park_new(t, req, id);
    if (p != NULL) {
        p->node = node;
        mcp__cluster_node_address(t->sh->cluster, node, relay_address, p);
    }
}

void mcp__shttp_cluster_relay(shttp *t, mcp__http_req *req, uint32_t node, const char *addr)
{
    if (addr != NULL && addr[0] != '\0')
        mcp__shttp_relay(t, req, node, addr, strlen(addr));
    else
        relay_park(t, req, "", node);
}

static void lookup_done(void *arg, int status, const char *text, size_t len)
{
    shttp *t = ((parked *)arg)->t;
    mcp__http_req *req = unpark(arg);
    if (req == NULL)
        return;
    const char *id = mcp__http_header(req, "mcp-session-id");
    if (status == MCP_ECLOSED) {
        mcp__shttp_cluster_unavailable(t, req);
        return;
    }
    if (status == MCP_OK && mcp__map_get(&t->sessions, id) == NULL) {
        uint32_t node = 0;
        char addr[300];
        char kind = record_kind(text, len, &node, addr, sizeof(addr));
        if (kind == 'P' && node != t->sh->node && addr[0] != '\0') {
            /* Served by the node that holds it: the request goes there. */
            pin_add(t, id, node, addr, strlen(addr));
            mcp__shttp_relay(t, req, node, addr, strlen(addr));
            return;
        }
        if (kind == 'P' && node != t->sh->node) {
            relay_park(t, req, id, node); /* its address is in its node's heartbeat */
            return;
        }
        if (kind != 'S') {
            /* An HTTP+SSE session's id (not a session of this endpoint), or a pinned
             * session of this node that is gone here: 404 below. */
        } else if (t->sessions.len >= (size_t)t->max_sessions &&
                   !mcp__shttp_evict_idle_session(t)) {
            /* A copy takes a place in the table like any session. */
            mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR,
                             "Service Unavailable: too many open sessions, all of them busy");
            return;
        } else if (restore(t, id, text, len) == NULL) {
            mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: the session could not be restored");
            return;
        }
    }
    /* Found (or not: served as an unknown session, 404) now that the table knows. */
    mcp__shttp_mcp_request_local(t, req);
}

int mcp__shttp_cluster_route(shttp *t, mcp__http_req *req)
{
    const char *id = mcp__http_header(req, "mcp-session-id");
    if (id == NULL)
        return 0; /* a new session (see post), or a request of revision 2026-07-28 */
    hsess *hs = mcp__map_get(&t->sessions, id);
    if (hs != NULL || strlen(id) != 32 || t->stateless)
        return 0; /* known here, or not an id this transport makes: 404 as usual */
    if (mcp__http_header(req, "mcp-cluster-node") != NULL)
        return 0; /* relayed here by another node: never relayed again (404 as usual) */
    const pin *p = mcp__map_get(&t->sh->pins, id);
    if (p != NULL) {
        mcp__shttp_relay(t, req, p->node, p->addr, strlen(p->addr)); /* no lookup */
        return 1;
    }
    park(t, req, id, lookup_done);
    return 1;
}

/* ---- HTTP+SSE sessions (2024-11-05) ---- */

/*
 * An HTTP+SSE session lives with its event stream on the node that has it; its record
 * only names that node, so that a POST arriving elsewhere is sent there. The session
 * is forgotten on disconnect: the record goes with the stream, and a POST after that gets 404 on
 * every node.
 */

static void httpsse_put_done(void *arg, int status)
{
    hsess *hs = arg;
    if (--hs->sh->puts == 0 && hs->closing) {
        free(hs->sh);
        free(hs);
        return;
    }
    hstream *st = hs->streams;
    if (status != MCP_OK) {
        if (st != NULL && st->req != NULL) {
            mcp__shttp_cluster_unavailable(hs->t, st->req);
            st->req = NULL;
        }
        mcp__hsess_close(hs);
        return;
    }
    mcp__httpsse_endpoint(hs);
}

int mcp__shttp_cluster_httpsse_new(hsess *hs)
{
    shttp *t = hs->t;
    char rec[400];
    size_t n = node_record(hs, rec, sizeof(rec));
    int rc = mcp__cluster_session_put(t->sh->cluster, hs->id, rec, n, record_ttl(t), 0,
                                      httpsse_put_done, hs);
    hstream *st = hs->streams;
    if (rc != MCP_OK) {
        if (st != NULL && st->req != NULL) {
            mcp__shttp_cluster_unavailable(t, st->req);
            st->req = NULL;
        }
        mcp__hsess_close(hs);
        return 1;
    }
    hs->sh->httpsse_shared = 1;
    hs->sh->puts++;
    hs->sh->touched_ms = mcp__now_ms();
    return 1;
}

/* Ends an HTTP+SSE POST: forwarded (202), or refused. */
static void httpsse_post_end(parked *p, int alive)
{
    shttp *t = p->t;
    uint32_t node = p->node;
    char id[33];
    memcpy(id, p->id, sizeof(id));
    mcp__http_req *req = unpark(p);
    if (req == NULL)
        return;
    if (alive < 0) {
        mcp__shttp_cluster_unavailable(t, req);
        return;
    }
    if (alive == 0) {
        mcp__shttp_error(t, req, 404, MCP__SESSION_NOT_FOUND, "Session not found");
        return;
    }
    size_t n_requests;
    int has_init;
    json_t *v = mcp__shttp_parse_body(t, req, &n_requests, &has_init);
    if (v == NULL)
        return;
    /* The scopes its methods and tools need, checked here: the node that holds the
     * session gets the messages, not this request's token. */
    int refused = mcp__shttp_scope_check(t, req, v);
    json_decref(v);
    if (refused)
        return;
    size_t len;
    const char *body = mcp__http_req_body(req, &len);
    if (mcp__cluster_send(t->sh->cluster, node, MSG_HTTPSSE, id, body, len) != MCP_OK) {
        mcp__shttp_cluster_unavailable(t, req);
        return;
    }
    mcp__httpsse_accepted(t, req);
}

static void httpsse_alive(void *arg, int alive)
{
    httpsse_post_end(arg, alive);
}

static void httpsse_got(void *arg, int status, const char *text, size_t len)
{
    parked *lp = arg;
    if (status != MCP_OK || lp->req == NULL) {
        httpsse_post_end(lp, status == MCP_ECLOSED ? -1 : 0);
        return;
    }
    json_t *rec = mcp__json_parse(text, len, MCP__JSON_ANY, NULL);
    json_int_t node = json_integer_value(json_object_get(rec, "httpsse"));
    /* Another principal's session is not found, here as on its node. */
    int theirs =
        lp->req != NULL &&
        !mcp__shttp_owner_is(lp->t, lp->req, json_string_value(json_object_get(rec, "owner")));
    json_decref(rec);
    if (node <= 0 || (uint32_t)node == lp->t->sh->node || theirs) {
        httpsse_post_end(lp, 0); /* not an HTTP+SSE session, or this node's, gone */
        return;
    }
    lp->node = (uint32_t)node;
    /* A node that died leaves its records behind until they expire: its sessions are
     * gone with it. */
    mcp__cluster_node_alive(lp->t->sh->cluster, lp->node, httpsse_alive, lp);
}

void mcp__shttp_cluster_httpsse_post(shttp *t, mcp__http_req *req, const char *id)
{
    park(t, req, id, httpsse_got);
}

/* ---- Messages between nodes ---- */

/* Sends a message to the node whose request it answers. */
static void forward_one(hsess *hs, const json_t *msg)
{
    shttp *t = hs->t;
    const json_t *id = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (method == NULL && json_is_integer(id)) {
        json_int_t v = json_integer_value(id);
        uint32_t node = v > 0 ? (uint32_t)((uint64_t)v >> MCP__ID_NODE_SHIFT) : 0;
        if (node == 0 || node == t->sh->node)
            return;
        char *text = json_dumps(msg, JSON_COMPACT);
        if (text != NULL)
            mcp__cluster_send(t->sh->cluster, node, MSG_ANSWER, hs->id, text, strlen(text));
        free(text);
    } else if (method != NULL && strcmp(method, "notifications/cancelled") == 0) {
        /* Only what the owner needs: the request's id, and the reason's first 512 bytes
         * as the handler would keep them (a client's reason may be megabytes, and every
         * node would get them). */
        json_t *params = json_object_get(msg, "params");
        json_t *rid = json_object_get(params, "requestId");
        if (!mcp__id_valid(rid))
            return;
        json_t *small = json_pack("{s:s, s:s, s:{s:O}}", "jsonrpc", "2.0", "method",
                                  "notifications/cancelled", "params", "requestId", rid);
        const char *reason = json_string_value(json_object_get(params, "reason"));
        if (small != NULL && reason != NULL) {
            size_t n = strlen(reason);
            if (n > 512)
                for (n = 512; n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80; n--)
                    ;
            json_object_set_new(json_object_get(small, "params"), "reason",
                                json_stringn(reason, n));
        }
        char *text = small != NULL ? json_dumps(small, JSON_COMPACT) : NULL;
        json_decref(small);
        if (text != NULL)
            mcp__cluster_send(t->sh->cluster, 0, MSG_CANCEL, hs->id, text, strlen(text));
        free(text);
    }
}

void mcp__shttp_cluster_forward(hsess *hs, const json_t *v)
{
    if (!json_is_array(v)) {
        forward_one(hs, v);
        return;
    }
    for (size_t i = 0; i < json_array_size(v); i++)
        forward_one(hs, json_array_get(v, i));
}

int mcp__shttp_cluster_standalone(hsess *hs, const char *text, size_t len)
{
    shttp *t = hs->t;
    if (hs->sh->standalone_node == 0 || hs->sh->standalone_node == t->sh->node)
        return 0;
    return mcp__cluster_send(t->sh->cluster, hs->sh->standalone_node, MSG_STANDALONE, hs->id, text,
                             len) == MCP_OK;
}

void mcp__shttp_cluster_standalone_here(hsess *hs, uint64_t stream)
{
    hs->sh->standalone_node = hs->t->sh->node;
    hs->sh->standalone_stream = stream;
    hs->sh->standalone_ver++;
    record_put(hs);
}

static void feed_text(hsess *hs, const char *text, size_t len)
{
    json_t *v = mcp__json_parse(text, len, MCP__JSON_ANY, NULL);
    if (v != NULL)
        HS_ANS(hs)->feed_value(hs->sess, v, MCP__STREAM_STANDALONE);
    json_decref(v);
}

/* A server-wide notification raised here goes to every node (revision 2026-07-28's
 * subscriptions/listen there, and the sessions whose standalone stream is there). */
static void fanout(void *user, const char *method, const json_t *params, const char *uri, int level,
                   const char *session)
{
    shttp *t = user;
    json_t *v = json_pack("{s:s, s:O?, s:s?, s:i, s:s?}", "m", method, "p", params, "u", uri, "l",
                          level, "s", session);
    char *text = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (text != NULL)
        mcp__cluster_send(t->sh->cluster, 0, MSG_NOTICE, "", text, strlen(text));
    free(text);
}

static void notice(shttp *t, const mcp__cluster_msg *m)
{
    json_t *v = mcp__json_parse(m->data, m->len, MCP__JSON_ANY, NULL);
    const char *method = json_string_value(json_object_get(v, "m"));
    json_t *params = json_object_get(v, "p"), *level = json_object_get(v, "l");
    const char *uri = json_string_value(json_object_get(v, "u"));
    const char *session = json_string_value(json_object_get(v, "s"));
    /* "p", "u" and "s" are null when the notification has none (fanout's "?" keys). */
    if (t->ans != NULL && t->ans->ops->deliver != NULL && method != NULL && json_is_integer(level))
        t->ans->ops->deliver(t->ans, method, json_is_null(params) ? NULL : params, uri,
                             (int)json_integer_value(level), session);
    json_decref(v);
}

/* Tasks shared by the nodes (server/tasks.c): a run on another node is stopped by a bus
 * message, and whether a node lives is its heartbeat. */
static void task_stop_remote(void *user, uint32_t node, const char *run)
{
    shttp *t = user;
    if (t->sh->cluster_attached)
        mcp__cluster_send(t->sh->cluster, node, MSG_TASK_STOP, "", run, strlen(run));
}

static void task_node_alive(void *user, uint32_t node, void (*done)(void *arg, int alive),
                            void *arg)
{
    shttp *t = user;
    if (!t->sh->cluster_attached) {
        done(arg, -1);
        return;
    }
    mcp__cluster_node_alive(t->sh->cluster, node, done, arg);
}

static void on_message(void *user, const mcp__cluster_msg *m)
{
    shttp *t = user;
    if (m->kind == MSG_NOTICE) {
        notice(t, m);
        return;
    }
    if (m->kind == MSG_TASK_STOP) {
        char run[64];
        if (m->len < sizeof run && t->ans != NULL && t->ans->ops->stop_task_run != NULL) {
            memcpy(run, m->data, m->len);
            run[m->len] = '\0';
            t->ans->ops->stop_task_run(t->ans, run);
        }
        return;
    }
    hsess *hs = mcp__map_get(&t->sessions, m->session);
    if (m->kind == MSG_HTTPSSE) {
        if (hs != NULL && hs->httpsse && !hs->closing) {
            mcp__hsess_touch(hs);
            mcp__shttp_cluster_touch(hs);
            json_t *v = mcp__json_parse(m->data, m->len, MCP__JSON_ANY, NULL);
            if (v != NULL)
                HS_ANS(hs)->feed_value(hs->sess, v, hs->streams ? hs->streams->id : 0);
            json_decref(v);
        }
        return;
    }
    if (m->kind == MSG_ENDED) {
        /* Ended on another node, which deleted what the cluster had of it, and waits to
         * hear that this node took it in. */
        mcp__shttp_cluster_unpin(t, m->session);
        mcp__cluster_session_gone(t->sh->cluster, m->session);
        if (hs != NULL && !hs->closing && hs->sh->shared) {
            hs->sh->local_close = 1;
            mcp__hsess_close(hs);
        }
        mcp__cluster_send(t->sh->cluster, m->from, MSG_ENDED_HEARD, m->session, "", 0);
        return;
    }
    if (m->kind == MSG_ENDED_HEARD) {
        delete_heard(t, m->session);
        return;
    }
    if (hs == NULL || hs->closing || !hs->sh->shared)
        return; /* not a session this node has: nothing to do here */
    switch (m->kind) {
    case MSG_RECORD: {
        json_t *rec = mcp__json_parse(m->data, m->len, MCP__JSON_ANY, NULL);
        if (rec == NULL || record_apply(hs, rec) != MCP_OK)
            mcp__warn("session %s: a record from node %u cannot be read", hs->id,
                      (unsigned)m->from);
        json_decref(rec);
        break;
    }
    case MSG_CAUGHT_UP: {
        unsigned long long stream = 0, seq = 0;
        char buf[48];
        if (m->len < sizeof(buf)) {
            memcpy(buf, m->data, m->len);
            buf[m->len] = '\0';
            if (sscanf(buf, "%llu %llu", &stream, &seq) == 2)
                mcp__hstream_confirmed_elsewhere(hs, stream, seq);
        }
        break;
    }
    case MSG_ANSWER:
    case MSG_CANCEL:
        feed_text(hs, m->data, m->len);
        break;
    case MSG_STANDALONE:
        /* Sent here because the record names this node's standalone stream; if it has
         * moved meanwhile, the record that says so is on its way to the sender. */
        if (m->len > 0) {
            uint32_t node = hs->sh->standalone_node;
            hs->sh->standalone_node = 0; /* sent from here, not back */
            mcp__hsess_send(hs, MCP__STREAM_STANDALONE, m->data, m->len, 0);
            hs->sh->standalone_node = node;
        }
        break;
    default:
        break;
    }
}

/* The cluster's backlog drained: the handlers that waited for it go on. */
static void on_drained(void *user)
{
    shttp *t = user;
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        hstream *waited = NULL;
        for (hstream *st = hs->streams; st != NULL; st = st->next)
            if (st->backlog_wait) {
                st->backlog_wait = 0;
                waited = st;
            }
        /* Each goes on unless its own client holds it back (mcp__hstream_maybe_ready
         * asks). */
        if (waited != NULL && !hs->closing)
            mcp__hstream_maybe_ready(waited);
    }
}

static void on_up(void *user, int up)
{
    shttp *t = user;
    if (up) {
        mcp__info("the shared session store is reachable again");
        /* If it lost its data (a restart without persistence), the records of the
         * sessions this node holds are written again: other nodes find them, and the
         * sessions go on everywhere. Those it kept are left as they are, but for the
         * changes made here while it was away. */
        size_t pos = 0;
        const char *id;
        void *v;
        while (mcp__map_next(&t->sessions, &pos, &id, &v)) {
            hsess *hs = v;
            if (hs->closing || !kept_elsewhere(hs) || hs->sh->puts > 0)
                continue;
            if (hs->sh->unwritten)
                record_put(hs); /* changed while the store was away (a setLevel, say) */
            else
                record_restore(hs);
            /* Events lost while it was away, marked before any later one is stored. */
            for (; hs->sh->gaps_shared < hs->ngaps; hs->sh->gaps_shared++)
                mcp__cluster_stream_gap(t->sh->cluster, hs->id,
                                        hs->gaps[hs->sh->gaps_shared].stream,
                                        hs->gaps[hs->sh->gaps_shared].seq);
        }
    } else
        mcp__warn("the shared session store cannot be reached; sessions of other nodes get 503 "
                  "until it is back");
}

/* ---- Streams other nodes follow ---- */

void mcp__shttp_cluster_stream_describe(hstream *st)
{
    st->sh->described = 1;
    if (st->kind != HS_POST_SSE && st->kind != HS_POST_JSON)
        return; /* a standalone stream answers no request */
    /* Stored with each of its events (h_storing). Out of memory: "[]", as for none. */
    char *text = st->sh->request_ids != NULL ? json_dumps(st->sh->request_ids, JSON_COMPACT) : NULL;
    st->sh->open_text = text != NULL ? text : mcp__strdup("[]");
}

void mcp__shttp_cluster_stream_pause(hstream *st, int retry_ms)
{
    hsess *hs = st->hs;
    shttp *t = hs->t;
    uint64_t seq = ++hs->next_seq;
    if (mcp_event_store_append(t->store, hs->id, st->id, seq, "", 0) == MCP_OK)
        mcp__cluster_stream_pause(t->sh->cluster, hs->id, st->id, seq,
                                  retry_ms >= 0 ? retry_ms : t->retry_ms);
}

/*
 * A session's bound in the shared store, as the memory store's per session: the
 * events of a session's streams on this node are one Redis stream there, bounded in
 * events (MAXLEN) and in time (TTL). In bytes too: the finished streams this node wrote
 * are remembered, in the order they ended; past max_events events or max_event_bytes
 * bytes in all, or MAX_KEPT of them, the first go, down to three quarters of each
 * bound: every event of the session below the first event of each stream that stays
 * (the kept ones, those still open here, and the first stored with no stream here) is
 * trimmed away, in one XTRIM MINID. (Per node: a session whose requests land on n nodes
 * keeps up to n times that.)
 */
#define MAX_KEPT 128

static int kept_over(const hsess *hs, size_t max_n, size_t max_events, uint64_t max_bytes)
{
    return hs->sh->kept_n > max_n || hs->sh->kept_events > max_events ||
           hs->sh->kept_bytes > max_bytes;
}

static void kept_trim(hsess *hs)
{
    shttp *t = hs->t;
    size_t max_events, max_bytes;
    mcp__cluster_store_bounds(t->sh->cluster, &max_events, &max_bytes);
    if (!kept_over(hs, MAX_KEPT, max_events, max_bytes))
        return;
    /* Past a bound, down to three quarters of each, the oldest first, in one go (one
     * command), rather than one stream per request. */
    size_t n = 0;
    /* The newest stays, however large: the memory store too keeps the last events of
     * a session, and its client may not have read them yet. */
    while (hs->sh->kept != NULL && hs->sh->kept->next != NULL &&
           kept_over(hs, MAX_KEPT * 3 / 4, max_events * 3 / 4, (uint64_t)max_bytes * 3 / 4)) {
        hkept *k = hs->sh->kept;
        hs->sh->kept = k->next;
        if (hs->sh->kept == NULL)
            hs->sh->kept_tail = &hs->sh->kept;
        hs->sh->kept_n--;
        hs->sh->kept_events -= k->events;
        hs->sh->kept_bytes -= k->bytes;
        n++;
        free(k);
    }
    if (n == 0)
        return;
    uint64_t min = hs->sh->detached_first;
    for (const hkept *k = hs->sh->kept; k != NULL; k = k->next)
        if (min == 0 || k->first_seq < min)
            min = k->first_seq;
    for (const hstream *p = hs->streams; p != NULL; p = p->next)
        if (p->sh != NULL && p->sh->first_seq != 0 && p->sh->first_seq < min)
            min = p->sh->first_seq;
    if (min > hs->sh->trimmed_to) {
        hs->sh->trimmed_to = min;
        mcp__cluster_events_trim(t->sh->cluster, hs->id, hs->sh->kept->stream, min);
    }
}

void mcp__shttp_cluster_stream_end(hstream *st)
{
    hsess *hs = st->hs;
    if (!st->sh->end_stored)
        mcp__cluster_stream_end(hs->t->sh->cluster, hs->id, st->id, hs->next_seq);
    if (st->sh->kept_events == 0)
        return;
    hkept *k = malloc(sizeof(*k));
    if (k == NULL)
        return; /* not counted: the stream's own bounds still hold */
    k->next = NULL;
    k->stream = st->id;
    k->first_seq = st->sh->first_seq;
    k->events = st->sh->kept_events;
    k->bytes = st->sh->kept_bytes;
    if (hs->sh->kept_tail == NULL)
        hs->sh->kept_tail = &hs->sh->kept;
    *hs->sh->kept_tail = k;
    hs->sh->kept_tail = &k->next;
    hs->sh->kept_n++;
    hs->sh->kept_events += k->events;
    hs->sh->kept_bytes += k->bytes;
    kept_trim(hs);
}

/* The client has every event written to it so far: the owner hears it, as it would
 * from its own client's TCP, so that its handlers do not pause for a client that
 * reads here (or stop, taking it for away). */
static void follow_drained(void *arg, mcp__http_req *req)
{
    (void)req;
    hstream *st = arg;
    shttp *t = st->hs->t;
    st->sh->confirming = 0;
    char text[48];
    int n = snprintf(text, sizeof(text), "%llu %llu", (unsigned long long)st->id,
                     (unsigned long long)st->sh->followed_seq);
    if (mcp__cluster_send(t->sh->cluster, mcp__stream_node(st->id), MSG_CAUGHT_UP, st->hs->id, text,
                          (size_t)n) == MCP_OK)
        st->sh->followed_events = st->sh->followed_bytes = 0;
}

void mcp__shttp_cluster_confirm_rest(hstream *st)
{
    if (st->req != NULL && !st->sh->confirming && st->sh->followed_events > 0) {
        st->sh->confirming = 1;
        mcp__http_req_on_drain(st->req, 0, follow_drained, st);
    }
}

/* Confirms to the owner when a quarter of what it lets go unconfirmed went out
 * (nodes of one deployment run with the same limits); the rest, once the stream has
 * gone quiet (mcp__shttp_cluster_confirm_rest, from the keep-alive timer). */
static void follow_count(hstream *st, uint64_t seq, size_t len)
{
    shttp *t = st->hs->t;
    st->sh->followed_seq = seq;
    st->sh->followed_events++;
    st->sh->followed_bytes += len;
    if (st->sh->confirming || st->req == NULL ||
        (st->sh->followed_events < t->max_unconfirmed / 4 + 1 &&
         st->sh->followed_bytes < t->max_unconfirmed_bytes / 4 + 1))
        return;
    st->sh->confirming = 1;
    mcp__http_req_on_drain(st->req, 0, follow_drained, st);
}

/* Notes the id of a response relayed on a POST stream, so that an owner found gone
 * afterwards is not answered for twice (its open text, read when the follow began,
 * still names the request). Only what may be a response is parsed. */
static void follow_note_answer(hstream *st, const char *data, size_t len)
{
    if (st->id % 2 == 1 ||
        (memmem(data, len, "\"result\"", 8) == NULL && memmem(data, len, "\"error\"", 7) == NULL))
        return;
    json_t *msg = mcp__json_parse(data, len, MCP__JSON_ANY, NULL);
    json_t *id = json_object_get(msg, "id");
    if (json_is_object(msg) && json_object_get(msg, "method") == NULL && mcp__id_valid(id) &&
        (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL)) {
        if (st->sh->answered == NULL)
            st->sh->answered = json_array();
        json_array_append(st->sh->answered, id);
    }
    json_decref(msg);
}

static int follow_answered(const hstream *st, const json_t *id)
{
    size_t i;
    json_t *v;
    json_array_foreach(st->sh->answered, i, v)
    {
        if (json_equal(v, id))
            return 1;
    }
    return 0;
}

static void follow_emit(void *arg, uint64_t seq, const char *data, size_t len)
{
    hstream *st = arg;
    hsess *hs = st->hs;
    if (st->req == NULL)
        return;
    if (data == NULL) {
        /* The stream is there to follow: the response begins now, not with its first
         * event, which may be minutes away. */
        if (mcp__hstream_write(st, NULL, 0) != MCP_OK && st->req == NULL)
            mcp__hstream_free(st);
        return;
    }
    hs->t->stats.replayed_events++;
    follow_note_answer(st, data, len);
    char eid[64];
    mcp__event_id(hs, st->id, seq, eid);
    mcp__buf b = {0};
    int rc = mcp__sse_event(&b, "message", eid, -1, data, len);
    if (rc == MCP_OK)
        rc = mcp__hstream_write(st, b.data, b.len);
    mcp__buf_free(&b);
    if (rc == MCP_OK && st->req != NULL)
        follow_count(st, seq, len);
    if (rc != MCP_OK || st->req == NULL) {
        /* Cut (slow, or out of memory): the client resumes from what it has. */
        if (st->req != NULL)
            mcp__http_req_abort(st->req);
        st->req = NULL;
        mcp__hstream_free(st);
    }
}

/* Each request the dead owner was to answer, and did not, gets an error, so no client
 * waits on. */
static void answer_for_owner(hstream *st, const char *text, size_t len)
{
    json_t *ids = text != NULL ? mcp__json_parse(text, len, MCP__JSON_ANY, NULL) : NULL;
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        if (!mcp__id_valid(id) || follow_answered(st, id))
            continue;
        json_t *msg = mcp__error_message(
            id, MCP_RPC_INTERNAL_ERROR,
            "Internal error: the server node running this request is gone", NULL);
        char *s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
        json_decref(msg);
        mcp__buf b = {0};
        if (s != NULL && mcp__sse_event(&b, "message", NULL, -1, s, strlen(s)) == MCP_OK)
            mcp__hstream_write(st, b.data, b.len);
        mcp__buf_free(&b);
        free(s);
        if (st->req == NULL)
            break;
    }
    json_decref(ids);
}

static void follow_done(void *arg, int status, const char *text, size_t len)
{
    hstream *st = arg;
    hsess *hs = st->hs;
    shttp *t = hs->t;
    st->sh->follow = NULL;
    if (st->req == NULL) {
        mcp__hstream_free(st);
        return;
    }
    if (status == MCP_ENOENT && !st->begun) {
        mcp__shttp_error(t, st->req, 400, MCP_RPC_SERVER_ERROR,
                         "Bad Request: Last-Event-ID is unknown or expired");
        st->req = NULL;
        mcp__hstream_free(st);
        return;
    }
    if (status == MCP_ECONNECT || status == MCP_ENOENT) {
        /* ECONNECT: this node lost the shared store (the owner may well live on); the
         * client is cut, and resumes from what it has, here once the store is back or
         * elsewhere. ENOENT once begun: an event its owner could not store comes next;
         * the client, cut, resumes from the last it has, and is refused there, as it
         * would be on the owner. */
        mcp__http_req_abort(st->req);
        st->req = NULL;
        mcp__hstream_free(st);
        return;
    }
    if (status == MCP_ECLOSED && st->id % 2 == 1) {
        /* The standalone stream of a node that is gone (or out of reach): this one
         * carries the session's messages from now on, under a stream of its own. */
        mcp__hstream_write(st, NULL, 0);
        if (st->req == NULL) {
            mcp__hstream_free(st);
            return;
        }
        st->id = mcp__hstream_new_id(hs, HS_GET);
        st->kind = HS_GET;
        hs->last_standalone = st->id;
        mcp__shttp_cluster_standalone_here(hs, st->id);
        return;
    }
    if (status == MCP_ECLOSED)
        answer_for_owner(st, text, len);
    if (status == MCP__CLUSTER_PAUSED) {
        /* The owner closed the stream for polling (SEP-1699): so does this node, with the
         * marker's id to resume after and the retry the owner asked for. */
        unsigned long long seq = 0;
        int retry = -1;
        char buf[64];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
                 text != NULL ? text : "");
        if (sscanf(buf, "%llu %d", &seq, &retry) == 2 && seq > 0) {
            char eid[64];
            mcp__event_id(hs, st->id, (uint64_t)seq, eid);
            mcp__buf b = {0};
            if (mcp__sse_event(&b, NULL, eid, retry >= 0 ? retry : t->retry_ms, NULL, 0) == MCP_OK)
                mcp__hstream_write(st, b.data, b.len);
            mcp__buf_free(&b);
        }
    } else if (status == MCP_OK && !st->begun) {
        /* Nothing was left to send: the client had the final answer. The GET stays open
         * with nothing to carry, kept alive, as a resume here does (no reconnect loop: ending it
         * would have the client's EventSource come back at once, for ever). */
        st->kind = HS_IDLE;
        mcp__hstream_write(st, NULL, 0);
        if (st->req == NULL)
            mcp__hstream_free(st);
        return;
    }
    mcp__hstream_end(st);
    mcp__hstream_free(st);
}

int mcp__shttp_cluster_resume(shttp *t, hsess *hs, mcp__http_req *req, uint64_t stream,
                              uint64_t seq)
{
    uint32_t owner = mcp__stream_node(stream);
    if (owner == 0 || owner == t->sh->node || !hs->sh->shared)
        return 0;
    if (!mcp__cluster_up(t->sh->cluster)) {
        mcp__shttp_cluster_unavailable(t, req);
        return 1;
    }
    t->stats.resumes++;
    hstream *st = mcp__hstream_attach(hs, stream, HS_REMOTE, req);
    if (st == NULL) {
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return 1;
    }
    mcp__http_req_on_close(req, mcp__shttp_stream_closed, st);
    st->sh->follow = mcp__cluster_follow_start(t->sh->cluster, hs->id, stream, owner, seq,
                                               follow_emit, follow_done, st);
    if (st->sh->follow == NULL) {
        mcp__shttp_cluster_unavailable(t, req);
        st->req = NULL;
        mcp__hstream_free(st);
    }
    return 1;
}

/* ---- Start and stop ---- */

static int cluster_start(shttp *t, const char *url, const char *prefix,
                         const mcp_memory_store_opts *bounds)
{
    mcp__cluster_opts o = {0};
    o.url = url;
    o.prefix = prefix;
    /* The memory store's bounds, kept per stream in Redis (see cluster.h). */
    o.max_events = bounds->max_events;
    o.max_event_bytes = bounds->max_bytes;
    o.ttl_ms = bounds->ttl_ms;
    o.max_sessions = t->sh->cluster_max_sessions;
    mcp__cluster_cbs cbs = {0};
    cbs.message = on_message;
    cbs.up = on_up;
    cbs.drained = on_drained;
    cbs.user = t;
    char why[256] = "";
    int rc = mcp__cluster_new(&o, &cbs, &t->sh->cluster, why, sizeof(why));
    if (rc != MCP_OK) {
        mcp__error("the shared session store: %s", why[0] ? why : mcp_strerror(rc));
        return rc;
    }
    rc = mcp__cluster_attach(t->sh->cluster, t->loop);
    if (rc != MCP_OK) {
        mcp__error("the shared session store cannot be reached at %s: %s", url, mcp_strerror(rc));
        mcp__cluster_free(t->sh->cluster);
        t->sh->cluster = NULL;
        return rc;
    }
    t->sh->cluster_attached = 1;
    t->sh->node = mcp__cluster_node(t->sh->cluster);
    size_t max_events;
    mcp__cluster_store_bounds(t->sh->cluster, &max_events, &t->sh->cluster_max_event);
    t->store = mcp__cluster_event_store(t->sh->cluster);
    if (t->ans->ops->set_fanout != NULL)
        t->ans->ops->set_fanout(t->ans, fanout, t);
    if (t->ans->ops->set_tasks != NULL) {
        mcp__task_link link = {.store = mcp__cluster_task_store(t->sh->cluster),
                               .node = t->sh->node,
                               .stop_remote = task_stop_remote,
                               .node_alive = task_node_alive,
                               .user = t};
        if (link.store != NULL)
            t->ans->ops->set_tasks(t->ans, &link);
    }
    mcp__info("node %u of the deployment sharing %s", (unsigned)t->sh->node, url);
    return MCP_OK;
}

void mcp__shttp_cluster_stop(shttp *t)
{
    if (t->sh->cluster_attached) {
        t->sh->cluster_attached = 0;
        if (t->ans != NULL && t->ans->ops->set_fanout != NULL)
            t->ans->ops->set_fanout(t->ans, NULL, NULL);
        if (t->ans != NULL && t->ans->ops->set_tasks != NULL)
            t->ans->ops->set_tasks(t->ans, NULL);
        mcp__cluster_detach(t->sh->cluster); /* DELETEs whose news was on its way end here */
    }
    while (t->sh->deletes != NULL)
        delete_finish(t->sh->deletes, 200); /* heard, some acknowledgements missing */
    mcp__shttp_cluster_pins_free(t);
}

/* ---- The hooks (mcp__shttp_share_ops of shttp.h) ---- */

static int h_down(shttp *t, mcp__http_req *req)
{
    if (mcp__cluster_up(t->sh->cluster))
        return 0;
    mcp__shttp_cluster_unavailable(t, req);
    return 1;
}

static int h_relay(shttp *t, mcp__http_req *req, const json_t *v)
{
    /* A request relayed here already is served here. */
    if (t->ans->ops->home == NULL || mcp__http_header(req, "mcp-cluster-node") != NULL)
        return 0;
    char addr[300];
    uint32_t home = t->ans->ops->home(t->ans, v, addr, sizeof(addr));
    if (home == 0)
        return 0;
    mcp__shttp_cluster_relay(t, req, home, addr);
    return 1;
}

static int h_httpsse_post(shttp *t, mcp__http_req *req, const char *id)
{
    mcp__shttp_cluster_httpsse_post(t, req, id);
    return 1;
}

static int h_session_init(hsess *hs)
{
    hs->sh = calloc(1, sizeof(*hs->sh));
    if (hs->sh == NULL)
        return MCP_ENOMEM;
    /* Every session's lists are valid, an HTTP+SSE session's held messages included
     * (session_new does not run for it). */
    hs->sh->held_tail = &hs->sh->held;
    hs->sh->kept_tail = &hs->sh->kept;
    return MCP_OK;
}

static void h_session_free(hsess *hs)
{
    free(hs->sh);
    hs->sh = NULL;
}

static void h_touch(hsess *hs)
{
    if (kept_elsewhere(hs))
        mcp__shttp_cluster_touch(hs);
}

static void h_changed(hsess *hs)
{
    if (hs->sh->shared)
        mcp__shttp_cluster_changed(hs);
}

/* A shared session's messages go to the standalone stream its record names, and to no
 * other: a GET still open here after the client opened a newer one on another node
 * does not get them too. */
static int h_here(hsess *hs)
{
    if (!hs->sh->shared || hs->sh->standalone_node == hs->t->sh->node)
        return MCP__HERE_OWNER;
    if (hs->sh->standalone_node == 0)
        return mcp__hsess_standalone(hs) != NULL ? MCP__HERE_OWNER : MCP__HERE_NONE;
    return MCP__HERE_ELSEWHERE;
}

static int h_hold(hsess *hs, uint64_t stream, const char *text, size_t len, unsigned flags)
{
    if (hs->sh->held == NULL && hs->sh->puts == 0)
        return 0;
    return mcp__shttp_cluster_hold(hs, stream, text, len, flags);
}

static void h_standalone_here(hsess *hs, uint64_t stream)
{
    if (hs->sh->shared)
        mcp__shttp_cluster_standalone_here(hs, stream);
}

static void h_posted(hsess *hs, const json_t *v)
{
    if (hs->sh->shared)
        mcp__shttp_cluster_forward(hs, v);
}

static int h_delete(shttp *t, hsess *hs, mcp__http_req *req)
{
    if (!hs->sh->shared)
        return 0;
    mcp__shttp_cluster_delete(t, hs, req);
    return 1;
}

/* Evicted or stopping, a copy is forgotten here only while other nodes serve it; an
 * expired one too, but a pinned session that expires ends: its node forgets it. */
static int h_leaving(hsess *hs, enum mcp__leave why)
{
    hs->sh->local_close = why == MCP__LEAVE_EXPIRED ? !hs->sh->pinned : hs->sh->shared;
    return hs->sh->shared;
}

static int h_session_close(hsess *hs, int *keep)
{
    int taken = hs->sh->shared;
    if (kept_elsewhere(hs) && !hs->sh->local_close) {
        mcp__shttp_cluster_session_end(hs); /* its events too, on every node */
        taken = 1;
    }
    mcp__shttp_cluster_session_free(hs);
    /* A write of its shared record still holds it: freed when that is answered. */
    *keep = hs->sh->puts > 0;
    return taken;
}

static int h_stream_init(hstream *st)
{
    st->sh = calloc(1, sizeof(*st->sh));
    return st->sh != NULL ? MCP_OK : MCP_ENOMEM;
}

/* Unique across this node's sessions (a session's copy here may be made again), with
 * the node's number above them: any node knows whose stream it is. */
static uint64_t h_stream_number(hsess *hs, uint64_t n)
{
    if (!hs->sh->shared)
        return n;
    shttp *t = hs->t;
    n = ++t->sh->stream_counter;
    return ((uint64_t)t->sh->node << (MCP__NODE_SHIFT - 1)) | n;
}

static void h_post_stream(hstream *st, const json_t *v)
{
    if (!st->hs->sh->shared)
        return;
    json_decref(st->sh->request_ids);
    st->sh->request_ids = mcp__shttp_request_ids(v);
}

static void h_storing(hstream *st)
{
    if (st->sh->first_seq == 0)
        st->sh->first_seq = st->hs->next_seq; /* the seq of the event stored now */
    if (!st->sh->described)
        mcp__shttp_cluster_stream_describe(st);
    if (st->sh->open_text != NULL)
        mcp__cluster_open_next(st->hs->t->sh->cluster, st->sh->open_text,
                               strlen(st->sh->open_text));
    /* A stream's last event (its answer) is stored with the end, in one entry. */
    if (st->last_event && st->sh->described)
        mcp__cluster_final_next(st->hs->t->sh->cluster);
}

static void h_stored_detached(hsess *hs, uint64_t seq)
{
    if (hs->sh->detached_first == 0)
        hs->sh->detached_first = seq;
}

/* What the cluster's store passes over is not counted as kept. */
static void h_stored(hstream *st, size_t len)
{
    if (st->last_event)
        st->sh->end_stored = mcp__cluster_final_taken(st->hs->t->sh->cluster);
    if (len <= st->hs->t->sh->cluster_max_event) {
        st->sh->kept_events++;
        st->sh->kept_bytes += len;
    }
}

static void h_pause(hstream *st, int retry_ms)
{
    if (st->sh->described)
        mcp__shttp_cluster_stream_pause(st, retry_ms);
}

static void h_stream_end(hstream *st)
{
    if (st->sh->described)
        mcp__shttp_cluster_stream_end(st);
}

/* A follower's wait to confirm ends with its response. */
static void h_release(hstream *st)
{
    if (st->sh->confirming && st->req != NULL)
        mcp__http_req_on_drain(st->req, 0, NULL, NULL);
    st->sh->confirming = 0;
}

static void h_stream_free(hstream *st)
{
    if (st->sh->follow != NULL)
        mcp__cluster_unfollow(st->sh->follow);
    json_decref(st->sh->request_ids);
    json_decref(st->sh->answered);
    free(st->sh->open_text);
    free(st->sh);
    st->sh = NULL;
}

static void h_keepalive(hstream *st)
{
    if (st->kind == HS_REMOTE)
        mcp__shttp_cluster_confirm_rest(st);
}

static int h_congested(shttp *t)
{
    return mcp__cluster_congested(t->sh->cluster);
}

/* A shared session's stream ids count across this node's sessions, and a copy made
 * again here (after it expired) counts its events anew: the shared store knows what it
 * holds. */
static enum mcp__resume_verdict h_resume(shttp *t, hsess *hs, mcp__http_req *req, uint64_t id,
                                         uint64_t seq)
{
    if (mcp__shttp_cluster_resume(t, hs, req, id, seq))
        return MCP__RESUME_TAKEN;
    if (!hs->sh->shared)
        return MCP__RESUME_LOCAL;
    uint64_t local = id & ((UINT64_C(1) << MCP__NODE_SHIFT) - 1);
    return local / 2 > t->sh->stream_counter ? MCP__RESUME_BAD : MCP__RESUME_OK;
}

static int h_replay_failed(shttp *t, mcp__http_req *req, int status)
{
    if (status != MCP_ECLOSED)
        return 0;
    mcp__shttp_cluster_unavailable(t, req); /* the shared store is out of reach */
    return 1;
}

static void h_stop(shttp *t)
{
    mcp__shttp_relay_stop(t);
    mcp__shttp_cluster_stop(t);
}

static void h_free(shttp *t)
{
    if (t->http != NULL)
        mcp__http_server_before_write(t->http, NULL, NULL);
    mcp__cluster_free(t->sh->cluster);
    free(t->sh);
    t->sh = NULL;
    t->share = NULL;
}

static const mcp__shttp_share_ops share_ops = {
    .filter = mcp__shttp_cluster_route,
    .down = h_down,
    .relay = h_relay,
    .httpsse_post = h_httpsse_post,
    .session_init = h_session_init,
    .session_new = mcp__shttp_cluster_session_new,
    .httpsse_new = mcp__shttp_cluster_httpsse_new,
    .touch = h_touch,
    .changed = h_changed,
    .here = h_here,
    .hold = h_hold,
    .standalone = mcp__shttp_cluster_standalone,
    .standalone_here = h_standalone_here,
    .posted = h_posted,
    .delete = h_delete,
    .leaving = h_leaving,
    .session_close = h_session_close,
    .session_free = h_session_free,
    .stream_init = h_stream_init,
    .stream_number = h_stream_number,
    .post_stream = h_post_stream,
    .storing = h_storing,
    .stored = h_stored,
    .pause = h_pause,
    .stream_end = h_stream_end,
    .stored_detached = h_stored_detached,
    .release = h_release,
    .stream_free = h_stream_free,
    .keepalive = h_keepalive,
    .congested = h_congested,
    .resume = h_resume,
    .replay_failed = h_replay_failed,
    .stop = h_stop,
    .free = h_free,
};

int mcp__shttp_cluster_start(shttp *t, const mcp_http_opts *o)
{
    t->sh = calloc(1, sizeof(*t->sh));
    if (t->sh == NULL)
        return MCP_ENOMEM;
    t->sh->cluster_max_sessions = o->cluster_max_sessions; /* 0: the cluster's default */
    int rc = cluster_start(t, o->redis_url, o->redis_prefix, &o->memory_store);
    if (rc != MCP_OK) {
        free(t->sh);
        t->sh = NULL;
        return rc;
    }
    t->share = &share_ops;
    return MCP_OK;
}

/* Tells the cluster where other nodes reach this one (see mcp_http_opts). */
/* Before a client's bytes go out: the events they tell of go to the shared store first,
 * those of the whole loop turn in one write. */
static void flush_store(void *arg)
{
    shttp *t = arg;
    if (t->sh != NULL && t->sh->cluster != NULL)
        mcp__cluster_flush(t->sh->cluster);
}

void mcp__shttp_cluster_listening(shttp *t, const mcp_http_opts *o, const char *host, int port)
{
    mcp__http_server_before_write(t->http, flush_store, t);
    mcp__cluster_defer_flush(t->sh->cluster, 1);
    char *addr = t->sh->cluster_addr;
    size_t size = sizeof(t->sh->cluster_addr);
    if (o->cluster_address != NULL)
        snprintf(addr, size, "%s", o->cluster_address);
    else if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        mcp__warn("listening on every address: sessions held here cannot be relayed to from "
                  "other nodes until a cluster address is set");
    else if (strchr(host, ':') != NULL)
        snprintf(addr, size, "[%s]:%d", host, port);
    else
        snprintf(addr, size, "%s:%d", host, port);
    if (addr[0] != '\0')
        mcp__cluster_set_address(t->sh->cluster, addr);
    if (t->ans->ops->set_node != NULL)
        t->ans->ops->set_node(t->ans, t->sh->node, t->sh->cluster_addr);
}
