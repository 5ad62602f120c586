/* SPDX-License-Identifier: MIT */
/*
 * Messages that wait for a session's GET stream (see houtbox in shttp.h).
 *
 * Every SDK client opens its standalone GET stream only after its
 * notifications/initialized was accepted (202), and many stdio servers behind the
 * gateway (server-filesystem among them) send roots/list the moment they get that
 * notification: with no stream open yet, the request used to be dropped, and the
 * server waited for its own timeout. Such a message now waits, bounded in count,
 * bytes and time, and goes out on the next GET stream as its first events, stored
 * under that stream's event ids like any other (SEP-1699: replayable). A request
 * that cannot be delivered gets its JSON-RPC error at once, fed to the session as
 * the client's answer, so that its sender (the server core's pending request, the
 * gateway's child) fails now rather than at its own timeout.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/rpc.h"
#include "transport/shttp.h"

/* houtbox.why */
enum { OUTBOX_WAITING, OUTBOX_FULL, OUTBOX_ALL_FULL, OUTBOX_NO_GET, OUTBOX_TIMEOUT, OUTBOX_ENDED };

/* Why a message could not be delivered, for its error and the logs. */
static const char *why_text(int why, char *buf, size_t size)
{
    switch (why) {
    case OUTBOX_FULL:
        snprintf(buf, size,
                 "the client has no GET stream open to receive it, and the %d messages or %d "
                 "bytes that may wait for one are taken",
                 MCP__OUTBOX_MAX_MESSAGES, MCP__OUTBOX_MAX_BYTES);
        break;
    case OUTBOX_ALL_FULL:
        snprintf(buf, size,
                 "the client has no GET stream open to receive it, and the %d bytes that may "
                 "wait for GET streams in all sessions are taken",
                 MCP__OUTBOX_MAX_TOTAL_BYTES);
        break;
    case OUTBOX_NO_GET:
        snprintf(buf, size,
                 "this session has no GET stream to receive it (stateless, or GET is disabled)");
        break;
    case OUTBOX_TIMEOUT:
        snprintf(buf, size, "the client opened no GET stream to receive it within %d ms",
                 MCP__OUTBOX_WAIT_MS);
        break;
    default:
        snprintf(buf, size,
                 "the session ended before the client opened a GET stream to receive it");
        break;
    }
    return buf;
}

static void arm(shttp *t, uint64_t deadline)
{
    if (t->phase == EP_CLOSING || t->phase == EP_DONE)
        return;
    if (uv_is_active((uv_handle_t *)&t->outbox_timer) && t->outbox_at <= deadline)
        return;
    uint64_t now = uv_now(t->loop);
    t->outbox_at = deadline;
    uv_timer_start(&t->outbox_timer, mcp__outbox_due, deadline > now ? deadline - now : 0, 0);
}

/* What cannot be delivered is answered from the loop: inside a send, the sender may
 * not be ready for its answer yet. */
static void undeliverable(hsess *hs, houtbox *m, int why)
{
    m->why = why;
    m->next = NULL;
    if (hs->undelivered == NULL)
        hs->undelivered_tail = &hs->undelivered;
    *hs->undelivered_tail = m;
    hs->undelivered_tail = &m->next;
    arm(hs->t, 0);
}

int mcp__outbox_put(hsess *hs, const char *text, size_t len)
{
    shttp *t = hs->t;
    if (hs->closing) {
        /* Its answerer is being closed, which ends its requests to the client. */
        mcp__debug("session %s: a message came as the session ended; dropped", hs->id);
        return MCP_OK;
    }
    json_t *v = mcp__json_parse(text, len, MCP__JSON_ANY, NULL);
    json_t *id = json_object_get(v, "id");
    const char *method = json_string_value(json_object_get(v, "method"));
    int request = method != NULL && id != NULL;
    int no_get = hs->stateless || hs->httpsse || t->disable_get ||
                 !(t->ans->ops->eras(t->ans) & MCP_ERA_LEGACY);
    int full =
        hs->outbox_n >= MCP__OUTBOX_MAX_MESSAGES || len > MCP__OUTBOX_MAX_BYTES - hs->outbox_bytes;
    int all_full = !full && len > MCP__OUTBOX_MAX_TOTAL_BYTES - t->outbox_bytes;
    if (no_get && !request) {
        /* As ever where no GET can come: the configuration says so, not the client. */
        json_decref(v);
        mcp__debug("session %s: a notification had no stream to go to; dropped", hs->id);
        return MCP_OK;
    }
    /* Only a request's id is kept of what is not delivered. */
    size_t keep = no_get || full || all_full ? 0 : len;
    houtbox *m = calloc(1, sizeof(*m) + keep + 1);
    if (m == NULL) {
        json_decref(v);
        mcp__warn("session %s: out of memory for a message waiting for a GET stream; dropped",
                  hs->id);
        return MCP_OK;
    }
    m->id = request ? json_incref(id) : NULL;
    snprintf(m->method, sizeof(m->method), "%s", method != NULL ? method : "(a response)");
    json_decref(v);
    if (no_get || full || all_full) {
        undeliverable(hs, m, no_get ? OUTBOX_NO_GET : full ? OUTBOX_FULL : OUTBOX_ALL_FULL);
        return MCP_OK;
    }
    memcpy(m->text, text, len);
    m->len = len;
    m->deadline = uv_now(t->loop) + MCP__OUTBOX_WAIT_MS;
    if (hs->outbox == NULL)
        hs->outbox_tail = &hs->outbox;
    *hs->outbox_tail = m;
    hs->outbox_tail = &m->next;
    hs->outbox_n++;
    hs->outbox_bytes += len;
    t->outbox_bytes += len;
    arm(t, m->deadline);
    return MCP_OK;
}

static houtbox *pop(hsess *hs)
{
    houtbox *m = hs->outbox;
    if (m == NULL)
        return NULL;
    hs->outbox = m->next;
    if (hs->outbox == NULL)
        hs->outbox_tail = &hs->outbox;
    hs->outbox_n--;
    hs->outbox_bytes -= m->len;
    hs->t->outbox_bytes -= m->len;
    m->next = NULL;
    return m;
}

void mcp__outbox_deliver(hsess *hs, hstream *g)
{
    houtbox *m;
    size_t n = 0;
    /* Without an event store, what follows a GET that broke (its reader cut for being
     * slow or past the budget) would be lost: it waits for the next GET instead, or
     * for its deadline's error. */
    while ((hs->t->store != NULL || g->req != NULL) && (m = pop(hs)) != NULL) {
        /* Stored first under g's id, so a client that misses it resumes to it. */
        mcp__hstream_event(g, m->text, m->len);
        json_decref(m->id);
        free(m);
        n++;
    }
    if (n > 0)
        mcp__debug("session %s: %zu messages that waited went out on its GET stream", hs->id, n);
}

/* Answers (requests) or drops (notifications) what cannot be delivered. */
static void settle(hsess *hs)
{
    size_t dropped = 0;
    int last_why = 0;
    /* Taken whole: what the answers make the session send is settled on a later turn. */
    houtbox *m, *list = hs->undelivered;
    hs->undelivered = NULL;
    hs->undelivered_tail = &hs->undelivered;
    while ((m = list) != NULL) {
        list = m->next;
        char why[200], msg[256];
        why_text(m->why, why, sizeof(why));
        if (m->id != NULL) {
            mcp__warn("session %s: a %s request could not reach the client (%s); answered with "
                      "an error",
                      hs->id, m->method, why);
            snprintf(msg, sizeof(msg), "Internal error: %s", why);
            json_t *e = mcp__error_message(m->id, MCP_RPC_INTERNAL_ERROR, msg, NULL);
            /* As the client's answer: its sender's wait ends now, on whichever node it
             * waits (a request another node sent here to this node's GET stream). */
            if (e != NULL && hs->t->share != NULL)
                hs->t->share->posted(hs, e);
            if (e != NULL)
                HS_ANS(hs)->feed_value(hs->sess, e, MCP__STREAM_STANDALONE);
            json_decref(e);
        } else {
            dropped++;
            last_why = m->why;
        }
        json_decref(m->id);
        free(m);
    }
    if (dropped > 0) {
        char why[200];
        mcp__warn("session %s: %zu notifications could not reach the client and were dropped "
                  "(%s)",
                  hs->id, dropped, why_text(last_why, why, sizeof(why)));
    }
}

void mcp__outbox_end(hsess *hs)
{
    houtbox *m;
    while ((m = pop(hs)) != NULL)
        undeliverable(hs, m, OUTBOX_ENDED);
    settle(hs);
}

void mcp__outbox_due(uv_timer_t *h)
{
    shttp *t = h->data;
    uint64_t now = uv_now(t->loop);
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        while (hs->outbox != NULL && hs->outbox->deadline <= now)
            undeliverable(hs, pop(hs), OUTBOX_TIMEOUT);
        /* What the answers make the session send next waits in the list, or in the
         * outbox, for a later turn: nothing here closes a session at once. */
        settle(hs);
    }
    uv_timer_stop(&t->outbox_timer); /* armed again for what is left */
    uint64_t next = UINT64_MAX;
    for (hsess *hs = t->all; hs != NULL; hs = hs->next) {
        if (hs->undelivered != NULL)
            next = now;
        else if (hs->outbox != NULL && hs->outbox->deadline < next)
            next = hs->outbox->deadline;
    }
    if (next != UINT64_MAX)
        arm(t, next);
}
