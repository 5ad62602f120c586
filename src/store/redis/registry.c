/*
 * The session registry on Redis: one string key per session (P s:<id>) holding the
 * transport's text, with a time to live that every use extends.
 */
#include <stdlib.h>
#include <string.h>

#include "redis_int.h"

/* Deletes every key the session's set lists, then the set and the keys given
 * (KEYS[1] is the set; KEYS[2], when given, the record). One command, not waited
 * for; UNLINK frees the memory of large streams off Redis's main thread. The
 * members are unlinked a few hundred at a time, within Lua's stack. */
static const char delete_lua[] =
    "local m = redis.call('SMEMBERS', KEYS[1]) "
    "for i = 1, #m, 256 do redis.call('UNLINK', unpack(m, i, math.min(i + 255, #m))) end "
    "return redis.call('UNLINK', unpack(KEYS))";

int mcp__rc_delete_session(mcp__cluster *c, const char *session, int with_record)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__rc_registered_forget(c, session);
    mcp__buf set = {0}, rec = {0};
    int rc = MCP_ENOMEM;
    if (mcp__rc_key(c, &set, "k:", session) == MCP_OK &&
        mcp__rc_key(c, &rec, "s:", session) == MCP_OK)
        rc = with_record
                 ? mcp__rc_cmd(c, NULL, NULL, "EVAL %s 2 %s %s", delete_lua, set.data, rec.data)
                 : mcp__rc_cmd(c, NULL, NULL, "EVAL %s 1 %s", delete_lua, set.data);
    mcp__buf_free(&set);
    mcp__buf_free(&rec);
    return rc;
}

static void on_put(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = mcp__rc_answer(ac, reply, priv);
    redisReply *r = reply;
    q.done.put(q.arg, r != NULL && r->type == REDIS_REPLY_STATUS ? MCP_OK : MCP_ECLOSED);
}

int mcp__cluster_session_put(mcp__cluster *c, const char *id, const char *text, size_t len,
                             int ttl_ms, mcp__cluster_done_fn done, void *arg)
{
    if (ttl_ms <= 0)
        return MCP_EINVAL;
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    /* With done, the answer is waited for (the transport holds what the client is told
     * next until other nodes can find the record). */
    mcp__rreq *q = NULL;
    if (done != NULL && (q = malloc(sizeof(*q))) == NULL)
        return MCP_ENOMEM;
    if (q != NULL)
        *q = (mcp__rreq){.c = c, .done.put = done, .arg = arg};
    char px[24];
    mcp__u64_str((uint64_t)ttl_ms, px);
    int rc = mcp__rc_key(c, &c->kbuf, "s:", id);
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, q != NULL ? on_put : NULL, q, "SET %s %b PX %s", c->kbuf.data,
                         text != NULL ? text : "", len, px);
    if (rc != MCP_OK)
        free(q);
    return rc;
}

static void on_get(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = mcp__rc_answer(ac, reply, priv);
    redisReply *r = reply;
    if (r != NULL && r->type == REDIS_REPLY_STRING)
        q.done.get(q.arg, MCP_OK, r->str, r->len);
    else if (r != NULL && r->type == REDIS_REPLY_NIL)
        q.done.get(q.arg, MCP_ENOENT, NULL, 0);
    else /* no answer, or an error (a key of another type, say): not to be read */
        q.done.get(q.arg, MCP_ECLOSED, NULL, 0);
}

void mcp__cluster_session_get(mcp__cluster *c, const char *id, mcp__cluster_get_fn done, void *arg)
{
    mcp__rreq q = {.c = c, .done.get = done, .arg = arg};
    int rc = mcp__rc_ask(c, on_get, &q, "GET", "s:", id);
    if (rc != MCP_OK)
        done(arg, rc, NULL, 0);
}

void mcp__cluster_session_touch(mcp__cluster *c, const char *id, int ttl_ms)
{
    if (ttl_ms <= 0)
        return;
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return;
    }
    char px[24];
    mcp__u64_str((uint64_t)ttl_ms, px);
    if (mcp__rc_key(c, &c->kbuf, "s:", id) == MCP_OK)
        mcp__rc_cmd(c, NULL, NULL, "PEXPIRE %s %s", c->kbuf.data, px);
}

int mcp__cluster_session_delete(mcp__cluster *c, const char *id)
{
    return mcp__rc_delete_session(c, id, 1);
}
