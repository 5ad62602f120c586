/* SPDX-License-Identifier: MIT */
/*
 * The bus, and the subscribing connection's replies.
 *
 * A bus message is published on P n:<node> (one node) or P all (every node) as
 *
 *   <kind><from>:<session length>:<session><data>
 *
 * kind one byte, from and the length in decimal, session and data as they are:
 * binary-safe, parsed without trusting a byte of it. A node hears its own
 * broadcasts (it subscribes to P all like every node) and drops them by `from`.
 *
 * Every reply on the subscribing connection comes to mcp__rc_on_sub_reply, with the
 * cluster as its data: AUTH's and SELECT's, the SUBSCRIBE confirmations, the
 * messages. hiredis 0.14 keeps one callback per channel, and hands a message on a
 * channel it no longer knows to the callback of the reply before it; with a single
 * callback for everything, whichever it picks is this one, and the channel's name
 * decides.
 */
#include <stdlib.h>
#include <string.h>

#include "redis_int.h"

static void on_published(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = mcp__rc_answer(ac, reply, priv);
    redisReply *r = reply;
    q.done.alive(q.arg, r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 0 &&
                                r->integer <= INT32_MAX
                            ? (int)r->integer
                            : -1);
}

static int send_msg(mcp__cluster *c, uint32_t to, char kind, const char *session, const char *data,
                    size_t len, mcp__cluster_alive_fn heard, void *arg)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__rreq *q = NULL;
    if (heard != NULL) {
        if ((q = malloc(sizeof(*q))) == NULL)
            return MCP_ENOMEM;
        *q = (mcp__rreq){.c = c, .done.alive = heard, .arg = arg};
    }
    if (session == NULL)
        session = "";
    size_t slen = strlen(session);
    mcp__buf chan = {0}, m = {0};
    int rc = MCP_ENOMEM;
    if ((to != 0 ? mcp__rc_key_node(c, &chan, "n:", to) : mcp__rc_key(c, &chan, "all", "")) ==
            MCP_OK &&
        mcp__buf_append(&m, &kind, 1) == MCP_OK && mcp__buf_append_u64(&m, c->node) == MCP_OK &&
        mcp__buf_append(&m, ":", 1) == MCP_OK && mcp__buf_append_u64(&m, slen) == MCP_OK &&
        mcp__buf_append(&m, ":", 1) == MCP_OK && mcp__buf_append(&m, session, slen) == MCP_OK &&
        mcp__buf_append(&m, data, len) == MCP_OK)
        rc = mcp__rc_cmd(c, q != NULL ? on_published : NULL, q, "PUBLISH %s %b", chan.data, m.data,
                         m.len);
    mcp__buf_free(&chan);
    mcp__buf_free(&m);
    if (rc != MCP_OK)
        free(q);
    return rc;
}

int mcp__cluster_send(mcp__cluster *c, uint32_t to, char kind, const char *session,
                      const char *data, size_t len)
{
    return send_msg(c, to, kind, session, data, len, NULL, NULL);
}

int mcp__cluster_send_counted(mcp__cluster *c, uint32_t to, char kind, const char *session,
                              const char *data, size_t len, mcp__cluster_alive_fn heard, void *arg)
{
    return send_msg(c, to, kind, session, data, len, heard, arg);
}

/* Reads "<digits>:" at *p (before end) into *v. */
static int read_number(const char **p, const char *end, uint64_t *v)
{
    uint64_t n = 0;
    const char *s = *p;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (n > UINT32_MAX)
            return -1; /* nothing here is that large */
        n = n * 10 + (uint64_t)(*s - '0');
    }
    if (s == *p || s == end || *s != ':')
        return -1;
    *v = n;
    *p = s + 1;
    return 0;
}

static void bus_message(mcp__cluster *c, int broadcast, const char *m, size_t len)
{
    const char *p = m + 1, *end = m + len;
    uint64_t from, slen;
    if (len < 1 || read_number(&p, end, &from) != 0 || from == 0 || from >= MCP__RC_NODE_LIMIT ||
        read_number(&p, end, &slen) != 0 || slen > (uint64_t)(end - p) ||
        memchr(p, '\0', (size_t)slen) != NULL)
        return; /* not a message of ours */
    if (broadcast && from == c->node)
        return;
    char small[128];
    char *session = slen < sizeof(small) ? small : malloc((size_t)slen + 1);
    if (session == NULL) {
        mcp__warn("redis: a bus message was dropped (out of memory)");
        return;
    }
    memcpy(session, p, (size_t)slen);
    session[slen] = '\0';
    p += slen;
    mcp__cluster_msg msg = {
        .kind = m[0],
        .session = session,
        .data = p,
        .len = (size_t)(end - p),
        .from = (uint32_t)from,
    };
    if (c->cbs.message != NULL)
        c->cbs.message(c->cbs.user, &msg);
    if (session != small)
        free(session);
}

void mcp__rc_on_sub_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__cluster *c = priv;
    redisReply *r = reply;
    if (!mcp__rc_current(c, &c->sub, ac, r))
        return;
    c->sub_ping_sent = 0; /* it answers (see on_tick's message to itself) */
    if (r->type == REDIS_REPLY_ERROR) {
        /* AUTH or SELECT refused, or a command the server would not take. */
        mcp__rc_fail(c, r);
        return;
    }
    /* What remains of interest is ["message" | "subscribe", channel, ...]; the OK of
     * AUTH and SELECT and the confirmations of UNSUBSCRIBE are passed over. */
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING ||
        strlen(r->element[1]->str) != r->element[1]->len)
        return;
    const char *kind = r->element[0]->str, *chan = r->element[1]->str;
    int to_node = strcmp(chan, c->chan_node) == 0, to_all = strcmp(chan, c->chan_all) == 0;
    if (strcmp(kind, "message") == 0 && r->element[2]->type == REDIS_REPLY_STRING) {
        if (to_node || to_all)
            bus_message(c, to_all, r->element[2]->str, r->element[2]->len);
        else
            mcp__rc_follow_message(c, chan, r->element[2]->str, r->element[2]->len);
    } else if (strcmp(kind, "subscribe") == 0) {
        if (to_node || to_all) {
            if (++c->bus_acks == 2)
                mcp__rc_sub_ready(c);
        } else {
            mcp__rc_follow_subscribed(c, chan);
        }
    }
}
