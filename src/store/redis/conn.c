/* SPDX-License-Identifier: MIT */
/*
 * The cluster's life on Redis (see redis_int.h): from the URL to a node number and
 * two connections on the loop, the heartbeat, and making the connections again
 * after a loss.
 *
 * hiredis 0.14's asynchronous contexts are never freed here except through
 * redisAsyncFree, and never inside their own connect or disconnect callback: when
 * the connection fails or drops, hiredis frees the context itself after running
 * every pending callback with a NULL reply. So whoever learns first that a context
 * is going (a NULL reply, the connect callback with an error, the disconnect
 * callback) clears our pointer to it through mcp__rc_lost, and every later sign of
 * the same context finds nothing to do. The adapter's poll handle is closed by
 * hiredis when the context goes (uv_close, freed in its close callback); our two
 * timers are allocated apart and free themselves when closed, so that the cluster
 * may be freed as soon as it is detached.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "redis_int.h"

#define DEFAULT_PREFIX "mcp:"
#define DEFAULT_CONNECT_TIMEOUT_MS 2000
#define DEFAULT_HEARTBEAT_MS 1000
/* The memory store's defaults (store/memory.c), so that switching stores changes
 * nothing a client sees. */
#define DEFAULT_MAX_EVENTS 10000
#define DEFAULT_MAX_SESSIONS 100000
#define DEFAULT_MAX_EVENT_BYTES (16u << 20)
#define DEFAULT_TTL_MS (5 * 60 * 1000)
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 2000
/* How many random numbers attach tries when live nodes hold them. */
#define NODE_TRIES 16

static void on_tick(uv_timer_t *t);
static void on_retry(uv_timer_t *t);

/* ---- Keys ---- */

static int key_begin(const mcp__cluster *c, mcp__buf *b, const char *kind)
{
    mcp__buf_reset(b);
    if (mcp__buf_appends(b, c->prefix) != MCP_OK || mcp__buf_appends(b, kind) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

int mcp__rc_key(const mcp__cluster *c, mcp__buf *b, const char *kind, const char *session)
{
    if (key_begin(c, b, kind) != MCP_OK || mcp__buf_appends(b, session) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

int mcp__rc_key_stream(const mcp__cluster *c, mcp__buf *b, const char *kind, const char *session,
                       uint64_t stream)
{
    if (mcp__rc_key(c, b, kind, session) != MCP_OK || mcp__buf_append(b, ":", 1) != MCP_OK ||
        mcp__buf_append_u64(b, stream) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

int mcp__rc_key_node(const mcp__cluster *c, mcp__buf *b, const char *kind, uint64_t node)
{
    if (key_begin(c, b, kind) != MCP_OK || mcp__buf_append_u64(b, node) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

/* ---- Sending ---- */

static void on_counted(redisAsyncContext *ac, void *reply, void *priv);

static int conn_sendv(mcp__cluster *c, mcp__rconn *k, redisCallbackFn *fn, void *priv, int awaited,
                      const char *fmt, va_list ap)
{
    if (k->ac == NULL)
        return MCP_ECLOSED;
    int counted = fn == NULL && k == &c->cmd;
    if (counted) {
        /* A write nothing waits for: its reply is counted (see mcp__cluster_congested). */
        fn = on_counted;
        priv = c;
    }
    if (redisvAsyncCommand(k->ac, fn, priv, fmt, ap) != REDIS_OK)
        /* hiredis refuses commands on a context it is closing, and fails to format
         * one only when memory runs out. */
        return k->ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING) ? MCP_ECLOSED : MCP_ENOMEM;
    c->inflight += (size_t)counted;
    c->stats.commands++;
    if (awaited)
        c->stats.round_trips++;
    return MCP_OK;
}

static int conn_send(mcp__cluster *c, mcp__rconn *k, redisCallbackFn *fn, void *priv,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = conn_sendv(c, k, fn, priv, fn != NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* A command on the subscribing connection: every reply there goes to
 * mcp__rc_on_sub_reply. */
static int sub_send(mcp__cluster *c, int awaited, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = conn_sendv(c, &c->sub, mcp__rc_on_sub_reply, c, awaited, fmt, ap);
    va_end(ap);
    return rc;
}

int mcp__rc_cmd(mcp__cluster *c, redisCallbackFn *fn, void *priv, const char *fmt, ...)
{
    if (c->state != MCP__RC_UP)
        return MCP_ECLOSED;
    va_list ap;
    va_start(ap, fmt);
    int rc = conn_sendv(c, &c->cmd, fn, priv, fn != NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int mcp__rc_cmd_argv(mcp__cluster *c, int argc, const char **argv, const size_t *argvlen)
{
    if (c->state != MCP__RC_UP || c->cmd.ac == NULL)
        return MCP_ECLOSED;
    if (redisAsyncCommandArgv(c->cmd.ac, on_counted, c, argc, argv, argvlen) != REDIS_OK)
        return c->cmd.ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING) ? MCP_ECLOSED
                                                                          : MCP_ENOMEM;
    c->inflight++;
    c->stats.commands++;
    return MCP_OK;
}

int mcp__rc_ask_argv(mcp__cluster *c, redisCallbackFn *fn, void *priv, int argc, const char **argv,
                     const size_t *argvlen)
{
    if (c->state != MCP__RC_UP || c->cmd.ac == NULL)
        return MCP_ECLOSED;
    if (redisAsyncCommandArgv(c->cmd.ac, fn, priv, argc, argv, argvlen) != REDIS_OK)
        return c->cmd.ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING) ? MCP_ECLOSED
                                                                          : MCP_ENOMEM;
    c->stats.commands++;
    c->stats.round_trips++;
    return MCP_OK;
}

int mcp__rc_subscribe(mcp__cluster *c, const char *chan, int on)
{
    if (c->state != MCP__RC_UP)
        return MCP_ECLOSED;
    /* A SUBSCRIBE's confirmation is waited for; an UNSUBSCRIBE's is not. */
    return on ? sub_send(c, 1, "SUBSCRIBE %s", chan) : sub_send(c, 0, "UNSUBSCRIBE %s", chan);
}

/* ---- Down and up ---- */

/* Frees our connections (their pending callbacks run with NULL replies, now or
 * when the callback we are in returns), ends the followers and forgets what was
 * learnt on them. Callers' callbacks run in here, and may detach. */
static void drop_conns(mcp__cluster *c)
{
    c->inflight = 0; /* the replies still due come, if at all, to contexts being freed */
    mcp__rconn *ks[] = {&c->cmd, &c->sub};
    for (size_t i = 0; i < 2; i++) {
        redisAsyncContext *ac = ks[i]->ac;
        ks[i]->ac = NULL;
        ks[i]->ready = 0;
        if (ac != NULL)
            redisAsyncFree(ac);
    }
    mcp__rc_follow_end_all(c, MCP_ECONNECT);
    mcp__rc_events_reset(c);
}

/* A congestion is over (see mcp__cluster_congested). */
static void drained(mcp__cluster *c)
{
    if (!c->congested)
        return;
    c->congested = 0;
    if (c->cbs.drained != NULL)
        c->cbs.drained(c->cbs.user);
}

/* Bytes queued on the command connection and not yet written to its socket. */
static size_t backlog(const mcp__cluster *c)
{
    const redisAsyncContext *ac = c->cmd.ac;
    return ac != NULL && ac->c.obuf != NULL ? sdslen(ac->c.obuf) : 0;
}

/* What the server has not taken yet: the bytes not written, and the writes not
 * answered, which may wait in the sockets' buffers (a server reads 16 KiB of a
 * client at a time), where no other count sees them. */
int mcp__cluster_congested(mcp__cluster *c)
{
    if (c->state == MCP__RC_UP && !c->congested &&
        (backlog(c) > MCP__CLUSTER_MAX_BACKLOG || c->inflight > MCP__CLUSTER_MAX_INFLIGHT))
        c->congested = 1;
    return c->congested;
}

static void check_drained(mcp__cluster *c)
{
    if (c->congested && backlog(c) <= MCP__CLUSTER_MAX_BACKLOG / 2 &&
        c->inflight <= MCP__CLUSTER_MAX_INFLIGHT / 2)
        drained(c);
}

void mcp__rc_wrote(redisAsyncContext *ac)
{
    mcp__rconn *k = ac->data;
    mcp__cluster *c = k != NULL ? k->c : NULL;
    if (c != NULL && ac == c->cmd.ac)
        check_drained(c);
}

static void on_counted(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__cluster *c = priv;
    const redisReply *r = reply;
    if (reply == NULL) {
        mcp__rc_lost(c, ac);
        return;
    }
    /* A nil is an append that found no stream to add to (XADD NOMKSTREAM: it was
     * evicted, or deleted with its session by another node), an error a write Redis
     * refused (out of memory, say): what this node remembers of its streams is then
     * not to be trusted, and their next appends make them again, with their times to
     * live (events.c). */
    if (r->type == REDIS_REPLY_NIL || r->type == REDIS_REPLY_ERROR)
        mcp__rc_registered_forget(c, NULL);
    if (ac == c->cmd.ac && c->inflight > 0) {
        c->inflight--;
        check_drained(c);
    }
}

static void go_down(mcp__cluster *c)
{
    if (c->state != MCP__RC_UP && c->state != MCP__RC_CONNECTING)
        return;
    c->hb_sent = c->sub_ping_sent = 0;
    int was_up = c->state == MCP__RC_UP;
    c->state = MCP__RC_DOWN;
    /* The retry is scheduled before any callback of the caller runs, so that a
     * detach from one of them finds everything in place to close. */
    uv_timer_start(c->retry, on_retry, (uint64_t)c->backoff_ms, 0);
    c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
    if (was_up)
        mcp__warn("redis %s:%d: connection lost; connecting again", c->url.host, c->url.port);
    drop_conns(c);
    if (was_up && c->state == MCP__RC_DOWN && c->cbs.up != NULL)
        c->cbs.up(c->cbs.user, 0);
    if (c->state == MCP__RC_DOWN)
        drained(c); /* what waited goes on: its writes are dropped, and marked as lost */
}

void mcp__rc_lost(mcp__cluster *c, const redisAsyncContext *ac)
{
    int ours = 0;
    if (ac != NULL && c->cmd.ac == ac) {
        c->cmd.ac = NULL;
        ours = 1;
    }
    if (ac != NULL && c->sub.ac == ac) {
        c->sub.ac = NULL;
        ours = 1;
    }
    if (ours)
        go_down(c);
}

int mcp__rc_current(mcp__cluster *c, const mcp__rconn *k, const redisAsyncContext *ac,
                    const redisReply *r)
{
    if (r == NULL)
        mcp__rc_lost(c, ac);
    return r != NULL && ac == k->ac;
}

void mcp__rc_fail(mcp__cluster *c, const redisReply *r)
{
    if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        char q[160];
        mcp__warn("redis %s:%d: %s", c->url.host, c->url.port, mcp__quotable(q, sizeof(q), r->str));
    }
    go_down(c);
}

static void check_ready(mcp__cluster *c)
{
    if (c->state != MCP__RC_CONNECTING || !c->cmd.ready || !c->sub.ready)
        return;
    c->state = MCP__RC_UP;
    c->backoff_ms = BACKOFF_FIRST_MS;
    c->stats.reconnects++;
    c->up_since = uv_now(c->loop);
    mcp__info("redis %s:%d: connected again (node %u)", c->url.host, c->url.port,
              (unsigned)c->node);
    if (c->cbs.up != NULL)
        c->cbs.up(c->cbs.user, 1);
}

void mcp__rc_sub_ready(mcp__cluster *c)
{
    c->sub.ready = 1;
    check_ready(c);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    mcp__rconn *k = ac->data;
    if (status != REDIS_OK) {
        mcp__debug("redis: connecting failed: %s", ac->errstr ? ac->errstr : "?");
        mcp__rc_lost(k->c, ac);
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    mcp__rconn *k = ac->data;
    (void)status;
    mcp__rc_lost(k->c, ac);
}

/* Replies to the command connection's first commands: AUTH and SELECT say OK, and
 * the PING sent after them PONG, which makes the connection ready. */
static void on_setup_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__cluster *c = priv;
    redisReply *r = reply;
    if (!mcp__rc_current(c, &c->cmd, ac, r))
        return;
    int status = r->type == REDIS_REPLY_STATUS;
    if (status && strcmp(r->str, "PONG") == 0) {
        c->cmd.ready = 1;
        check_ready(c);
    } else if (!status || strcmp(r->str, "OK") != 0) {
        mcp__rc_fail(c, r);
    }
}

static int conn_open(mcp__cluster *c, mcp__rconn *k)
{
    redisAsyncContext *ac = redisAsyncConnect(c->addr, c->url.port);
    if (ac == NULL)
        return MCP_ENOMEM;
    if (ac->err) {
        mcp__debug("redis %s:%d: %s", c->addr, c->url.port, ac->errstr);
        redisAsyncFree(ac);
        return MCP_ECONNECT;
    }
    int rc = mcp__rc_adapter_attach(ac, c->loop);
    if (rc != MCP_OK) {
        redisAsyncFree(ac);
        return rc;
    }
    ac->data = k;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    k->ac = ac;
    k->ready = 0;
    /* Sent at once: hiredis writes them as soon as the socket connects, and Redis
     * answers in order, so whatever is queued after them runs authenticated in the
     * right database. */
    redisCallbackFn *fn = k == &c->sub ? mcp__rc_on_sub_reply : on_setup_reply;
    if (c->url.password != NULL && c->url.user != NULL)
        rc = conn_send(c, k, fn, c, "AUTH %s %s", c->url.user, c->url.password);
    else if (c->url.password != NULL)
        rc = conn_send(c, k, fn, c, "AUTH %s", c->url.password);
    if (rc == MCP_OK && c->url.db != 0) {
        char db[24];
        mcp__u64_str((uint64_t)c->url.db, db);
        rc = conn_send(c, k, fn, c, "SELECT %s", db);
    }
    /* Named after the node, so that an operator's CLIENT LIST tells whose it is. */
    char name[40] = "mcp-node-";
    mcp__u64_str(c->node, name + strlen(name));
    if (rc == MCP_OK)
        rc = conn_send(c, k, fn, c, "CLIENT SETNAME %s", name);
    return rc;
}

static void on_heartbeat(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__cluster *c = priv;
    if (mcp__rc_current(c, &c->cmd, ac, reply))
        c->hb_sent = 0;
}

/* This node's heartbeat: its key lives three periods, and is written every period.
 * Its answer is awaited (one at a time): it shows that the server still answers. */
static int heartbeat(mcp__cluster *c)
{
    char px[24];
    mcp__u64_str(3 * (uint64_t)c->heartbeat_ms, px);
    if (mcp__rc_key_node(c, &c->kbuf, "node:", c->node) != MCP_OK)
        return MCP_ENOMEM;
    int rc = conn_send(c, &c->cmd, on_heartbeat, c, "SET %s %s PX %s", c->kbuf.data,
                       c->address != NULL ? c->address : "1", px);
    if (rc == MCP_OK && c->hb_sent == 0)
        c->hb_sent = uv_now(c->loop);
    return rc;
}

/* Opens both connections and queues what makes them ready: on the command
 * connection a PING after AUTH, SELECT and the name (and, when they are made again,
 * the heartbeat), on the other the bus's SUBSCRIBE. */
static int conns_open(mcp__cluster *c, int again)
{
    c->bus_acks = 0;
    int rc = conn_open(c, &c->cmd);
    if (rc == MCP_OK)
        rc = conn_open(c, &c->sub);
    if (rc == MCP_OK && again)
        rc = heartbeat(c);
    if (rc == MCP_OK)
        rc = conn_send(c, &c->cmd, on_setup_reply, c, "PING");
    if (rc == MCP_OK)
        rc = sub_send(c, 1, "SUBSCRIBE %s %s", c->chan_node, c->chan_all);
    return rc;
}

static void on_retry(uv_timer_t *t)
{
    mcp__cluster *c = t->data;
    if (c->state != MCP__RC_DOWN)
        return;
    c->state = MCP__RC_CONNECTING;
    c->connecting_since = uv_now(c->loop);
    if (conns_open(c, 1) != MCP_OK)
        go_down(c);
}

/* A server that answers neither connection for this many heartbeat periods is taken
 * for lost, whatever TCP says (a server stopped, swapping, or cut off without a
 * reset): what waits on it fails, and the connections are made again. */
#define WATCHDOG_PERIODS 5

static void on_tick(uv_timer_t *t)
{
    mcp__cluster *c = t->data;
    uint64_t now = uv_now(c->loop), limit = WATCHDOG_PERIODS * (uint64_t)c->heartbeat_ms;
    if (c->state == MCP__RC_CONNECTING && now - c->connecting_since > limit) {
        /* Connected, but the server never answered the setup (AUTH, PING, SUBSCRIBE). */
        mcp__warn("redis %s:%d: no answer for %llu ms while connecting", c->url.host, c->url.port,
                  (unsigned long long)(now - c->connecting_since));
        go_down(c);
        return;
    }
    if (c->state != MCP__RC_UP)
        return;
    uint64_t oldest = c->hb_sent != 0 && (c->sub_ping_sent == 0 || c->hb_sent < c->sub_ping_sent)
                          ? c->hb_sent
                          : c->sub_ping_sent;
    if (oldest != 0 && now - oldest > limit) {
        mcp__warn("redis %s:%d: no answer for %llu ms", c->url.host, c->url.port,
                  (unsigned long long)(now - oldest));
        go_down(c);
        return;
    }
    if (c->hb_sent == 0)
        heartbeat(c);
    /* The subscribing connection cannot be asked for a reply of its own (hiredis drops
     * a PONG there): this node sends itself a message that means nothing, which the
     * bus passes over, and any message heard there answers it. */
    if (c->sub_ping_sent == 0 &&
        conn_send(c, &c->cmd, NULL, NULL, "PUBLISH %s ~", c->chan_node) == MCP_OK)
        c->sub_ping_sent = now;
    mcp__rc_follow_tick(c);
}

/* ---- The first connection ---- */

/* A reply of the blocking handshake: 1 when it is the status wanted (NULL: any
 * status), else 0 with a warning. Frees the reply. */
static int sync_ok(mcp__cluster *c, redisContext *rc, redisReply *r, const char *what,
                   const char *want)
{
    char q[160];
    int ok =
        r != NULL && r->type == REDIS_REPLY_STATUS && (want == NULL || strcmp(r->str, want) == 0);
    if (!ok)
        mcp__warn("redis %s:%d: %s failed: %s", c->url.host, c->url.port, what,
                  r == NULL                      ? rc->errstr
                  : r->type == REDIS_REPLY_ERROR ? mcp__quotable(q, sizeof(q), r->str)
                                                 : "an unexpected reply");
    freeReplyObject(r);
    return ok;
}

/* Takes a node number: a random one whose heartbeat key no live node holds (set
 * only if absent). Not a counter: a server that lost its data (a restart without
 * persistence) would start it again, and give a new node the number of a node that
 * has not reconnected yet; among 2^20 numbers, that is unlikely. */
static int take_node(mcp__cluster *c, redisContext *rc, uint32_t *node)
{
    mcp__buf key = {0};
    char px[24];
    mcp__u64_str(3 * (uint64_t)c->heartbeat_ms, px);
    int status = MCP_ECONNECT;
    for (int i = 0; i < NODE_TRIES; i++) {
        uint32_t n;
        if (mcp__random_bytes(&n, sizeof(n)) != MCP_OK) {
            status = MCP_EIO;
            break;
        }
        n = n % (MCP__RC_NODE_LIMIT - 1) + 1;
        if (mcp__rc_key_node(c, &key, "node:", n) != MCP_OK) {
            status = MCP_ENOMEM;
            break;
        }
        redisReply *r = redisCommand(rc, "SET %s 1 PX %s NX", key.data, px);
        if (r != NULL && r->type == REDIS_REPLY_NIL) {
            freeReplyObject(r);
            continue; /* a live node has it */
        }
        if (sync_ok(c, rc, r, "SET of the heartbeat", "OK")) {
            *node = n;
            status = MCP_OK;
        }
        break;
    }
    if (status == MCP_ECONNECT)
        mcp__warn("redis %s:%d: no node number could be taken", c->url.host, c->url.port);
    mcp__buf_free(&key);
    return status;
}

/*
 * The blocking first connection: reachable, AUTH and SELECT accepted, a node
 * number taken. Its peer address is kept for the connections on the loop, since
 * hiredis 0.14 resolves a host name with a blocking getaddrinfo on every connect,
 * and nothing but attach may block (a server that moves to another address is
 * found again by attaching again).
 */
static int handshake(mcp__cluster *c, uint32_t *node)
{
    int ms = c->connect_timeout_ms;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    redisContext *rc = redisConnectWithTimeout(c->url.host, c->url.port, tv);
    if (rc == NULL)
        return MCP_ENOMEM;
    int status = MCP_ECONNECT;
    if (rc->err) {
        mcp__warn("redis %s:%d: %s", c->url.host, c->url.port, rc->errstr);
        goto done;
    }
    /* Every command of the handshake waits at most the connect timeout too. */
    if (redisSetTimeout(rc, tv) != REDIS_OK)
        goto done;
    if (c->url.password != NULL) {
        redisReply *r = c->url.user != NULL
                            ? redisCommand(rc, "AUTH %s %s", c->url.user, c->url.password)
                            : redisCommand(rc, "AUTH %s", c->url.password);
        if (!sync_ok(c, rc, r, "AUTH", "OK"))
            goto done;
    }
    if (c->url.db != 0) {
        char db[24];
        mcp__u64_str((uint64_t)c->url.db, db);
        if (!sync_ok(c, rc, redisCommand(rc, "SELECT %s", db), "SELECT", "OK"))
            goto done;
    }
    status = take_node(c, rc, node);
    if (status != MCP_OK)
        goto done;

    struct sockaddr_storage sa;
    socklen_t sa_len = sizeof(sa);
    const void *ip = NULL;
    if (getpeername(rc->fd, (struct sockaddr *)&sa, &sa_len) == 0) {
        if (sa.ss_family == AF_INET)
            ip = &((struct sockaddr_in *)&sa)->sin_addr;
        else if (sa.ss_family == AF_INET6)
            ip = &((struct sockaddr_in6 *)&sa)->sin6_addr;
    }
    if (ip == NULL || inet_ntop(sa.ss_family, ip, c->addr, sizeof(c->addr)) == NULL)
        snprintf(c->addr, sizeof(c->addr), "%s", c->url.host);
done:
    redisFree(rc);
    return status;
}

/* ---- The cluster ---- */

int mcp__cluster_new(const mcp__cluster_opts *opts, const mcp__cluster_cbs *cbs, mcp__cluster **out,
                     char *why, size_t why_len)
{
    *out = NULL;
    if (opts == NULL) {
        if (why != NULL && why_len > 0)
            snprintf(why, why_len, "no cluster options were given");
        return MCP_EINVAL;
    }
    mcp__cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return MCP_ENOMEM;
    c->cmd.c = c;
    c->sub.c = c;
    int rc = mcp__redis_url_parse(opts->url, &c->url, why, why_len);
    if (rc != MCP_OK)
        goto fail;
    rc = MCP_ENOMEM;
    c->prefix = mcp__strdup(opts->prefix != NULL ? opts->prefix : DEFAULT_PREFIX);
    if (c->prefix == NULL)
        goto fail;
    c->store = mcp__rc_store_new(c);
    if (c->store == NULL)
        goto fail;
    c->connect_timeout_ms =
        opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
    c->heartbeat_ms = opts->heartbeat_ms > 0 ? opts->heartbeat_ms : DEFAULT_HEARTBEAT_MS;
    c->ttl_ms = opts->ttl_ms > 0 ? opts->ttl_ms : DEFAULT_TTL_MS;
    c->max_sessions = opts->max_sessions > 0 ? opts->max_sessions : DEFAULT_MAX_SESSIONS;
    c->max_events = opts->max_events > 0 ? opts->max_events : DEFAULT_MAX_EVENTS;
    c->max_event_bytes =
        opts->max_event_bytes > 0 ? opts->max_event_bytes : DEFAULT_MAX_EVENT_BYTES;
    if (cbs != NULL)
        c->cbs = *cbs;
    *out = c;
    return MCP_OK;
fail:
    mcp__cluster_free(c);
    return rc;
}

int mcp__cluster_attach(mcp__cluster *c, uv_loop_t *loop)
{
    if (c->loop != NULL)
        return MCP_ESTATE;
    uint32_t node = 0;
    int rc = handshake(c, &node);
    if (rc != MCP_OK)
        return rc;
    rc = MCP_ENOMEM;
    mcp__buf b = {0};
    free(c->chan_node);
    free(c->chan_all);
    c->chan_node = c->chan_all = NULL;
    if (mcp__rc_key_node(c, &b, "n:", node) != MCP_OK)
        goto fail;
    c->chan_node = mcp__buf_steal(&b);
    if (mcp__rc_key(c, &b, "all", "") != MCP_OK)
        goto fail;
    c->chan_all = mcp__buf_steal(&b);
    c->tick = malloc(sizeof(*c->tick));
    c->retry = malloc(sizeof(*c->retry));
    c->check = malloc(sizeof(*c->check));
    if (c->tick == NULL || c->retry == NULL || c->check == NULL)
        goto fail;
    c->node = node;
    c->loop = loop;
    c->state = MCP__RC_UP;
    c->backoff_ms = BACKOFF_FIRST_MS;
    /* Up at once: the handshake just showed the server reachable, and what is
     * queued now is written when the connections are made. */
    rc = conns_open(c, 0);
    if (rc != MCP_OK) {
        /* Nothing runs the timers yet; a context made before the failure closes its
         * poll handle on the loop, as after a detach. */
        c->state = MCP__RC_DETACHED;
        drop_conns(c);
        c->loop = NULL;
        goto fail;
    }
    uv_timer_init(loop, c->tick);
    uv_timer_init(loop, c->retry);
    uv_check_init(loop, c->check);
    c->tick->data = c;
    c->retry->data = c;
    c->check->data = c;
    uv_timer_start(c->tick, on_tick, (uint64_t)c->heartbeat_ms, (uint64_t)c->heartbeat_ms);
    mcp__info("redis %s:%d: attached as node %u", c->url.host, c->url.port, (unsigned)node);
    return MCP_OK;
fail:
    mcp__buf_free(&b);
    free(c->tick);
    free(c->retry);
    free(c->check);
    c->tick = c->retry = NULL;
    c->check = NULL;
    return rc;
}

/* Writes what the command connection still has queued, as far as the socket takes
 * it without waiting: the last appends of a node that stops then reach the server
 * (closing the socket does not discard what the kernel holds), where freeing the
 * context alone would drop them. */
static void flush_writes(redisAsyncContext *ac)
{
    int done = 0;
    if (ac == NULL || !(ac->c.flags & REDIS_CONNECTED) || ac->c.obuf == NULL)
        return;
    /* Until all is written, the socket takes nothing more (a write that made no progress:
     * Redis is slow to read, and what is left goes when the socket is writable), or at
     * most 64 writes. */
    for (int i = 0; i < 64 && !done; i++) {
        size_t before = sdslen(ac->c.obuf);
        if (redisBufferWrite(&ac->c, &done) != REDIS_OK || (!done && sdslen(ac->c.obuf) == before))
            break;
    }
}

void mcp__rc_flush(mcp__cluster *c)
{
    flush_writes(c->cmd.ac);
}

void mcp__cluster_detach(mcp__cluster *c)
{
    if (c == NULL || c->loop == NULL)
        return;
    mcp__cluster_flush(c); /* what it holds too */
    c->state = MCP__RC_DETACHED;
    c->congested = 0;
    c->loop = NULL;
    c->hb_sent = c->sub_ping_sent = 0;
    mcp__uv_close_free((uv_handle_t *)c->tick, c->tick);
    mcp__uv_close_free((uv_handle_t *)c->retry, c->retry);
    mcp__uv_close_free((uv_handle_t *)c->check, c->check);
    c->tick = c->retry = NULL;
    c->check = NULL;
    drop_conns(c);
}

void mcp__cluster_free(mcp__cluster *c)
{
    if (c == NULL)
        return;
    mcp__cluster_detach(c);
    mcp_event_store_free(c->store);
    mcp__rc_events_reset(c);
    mcp__map_free(&c->registered);
    mcp__map_free(&c->chans);
    mcp__redis_url_free(&c->url);
    free(c->prefix);
    free(c->chan_node);
    free(c->chan_all);
    free(c->address);
    mcp__buf_free(&c->kbuf);
    mcp__buf_free(&c->pbuf);
    free(c->tasks);
    free(c);
}

uint32_t mcp__cluster_node(const mcp__cluster *c)
{
    return c->node;
}

int mcp__cluster_up(const mcp__cluster *c)
{
    return c->state == MCP__RC_UP;
}

void mcp__cluster_stats_get(const mcp__cluster *c, mcp__cluster_stats *out)
{
    *out = c->stats;
}

/* ---- Commands a caller waits for ---- */

int mcp__rc_ask(mcp__cluster *c, redisCallbackFn *fn, const mcp__rreq *q, const char *verb,
                const char *kind, const char *name)
{
    mcp__buf key = {0};
    mcp__rreq *copy = malloc(sizeof(*copy));
    int rc = copy != NULL ? mcp__rc_key(c, &key, kind, name) : MCP_ENOMEM;
    if (rc == MCP_OK) {
        *copy = *q;
        rc = mcp__rc_cmd(c, fn, copy, "%s %s", verb, key.data);
    }
    if (rc != MCP_OK)
        free(copy);
    mcp__buf_free(&key);
    return rc;
}

mcp__rreq mcp__rc_answer(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = *(mcp__rreq *)priv;
    free(priv);
    if (reply == NULL)
        mcp__rc_lost(q.c, ac);
    return q;
}

/* ---- Node liveness ---- */

void mcp__cluster_set_address(mcp__cluster *c, const char *address)
{
    char *copy = address != NULL ? mcp__strdup(address) : NULL;
    if (address != NULL && copy == NULL)
        return; /* out of memory: the heartbeat keeps saying "1" */
    free(c->address);
    c->address = copy;
    if (c->state == MCP__RC_UP)
        heartbeat(c);
}

void mcp__cluster_node_address(mcp__cluster *c, uint32_t node, mcp__cluster_get_fn done, void *arg)
{
    mcp__rreq q = {.c = c, .done.get = done, .arg = arg};
    char n[24];
    mcp__u64_str(node, n);
    if (mcp__rc_ask(c, mcp__rc_on_get, &q, "GET", "node:", n) != MCP_OK)
        done(arg, MCP_ECLOSED, NULL, 0);
}

static void on_alive(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = mcp__rc_answer(ac, reply, priv);
    redisReply *r = reply;
    int alive = -1;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER && (r->integer == 0 || r->integer == 1))
        alive = (int)r->integer;
    q.done.alive(q.arg, alive);
}

void mcp__cluster_node_alive(mcp__cluster *c, uint32_t node, mcp__cluster_alive_fn done, void *arg)
{
    mcp__rreq q = {.c = c, .done.alive = done, .arg = arg};
    char n[24];
    mcp__u64_str(node, n);
    if (mcp__rc_ask(c, on_alive, &q, "EXISTS", "node:", n) != MCP_OK)
        done(arg, -1);
}
