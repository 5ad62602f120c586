/* SPDX-License-Identifier: MIT */
/*
 * The session registry on Redis: one string key per session (P s:<id>) holding the
 * transport's text, with a time to live that every use extends. A session ended
 * (DELETE on any node) leaves a mark (P x:<id>) as long as its record would have
 * lived: a node that missed the news then cannot write the record again, and learns
 * from the refusal (or from a touch) that the session is over. The deployment's live
 * sessions are a sorted set (P sessions), each scored with when its record expires:
 * a new session past max_sessions is refused, those expired are dropped then.
 */
#include <stdlib.h>
#include <string.h>

#include "redis_int.h"

/* Deletes every key the session's set lists, then the set and the keys given
 * (KEYS[1] is the set; KEYS[2], when given, the record, KEYS[3] the mark of an ended
 * session, set to live ARGV[1] ms, and KEYS[4] the live sessions, which lose ARGV[2]).
 * One command, not waited for; UNLINK frees the memory of large streams off Redis's
 * main thread. The members are unlinked a few hundred at a time, within Lua's stack. */
static const char delete_lua[] =
    "local m = redis.call('SMEMBERS', KEYS[1]) "
    "for i = 1, #m, 256 do redis.call('UNLINK', unpack(m, i, math.min(i + 255, #m))) end "
    "redis.call('UNLINK', KEYS[1], KEYS[2] or KEYS[1]) "
    "if KEYS[3] then redis.call('SET', KEYS[3], '1', 'PX', ARGV[1]) end "
    "if KEYS[4] then redis.call('ZREM', KEYS[4], ARGV[2]) end "
    "return 0";

int mcp__rc_delete_session(mcp__cluster *c, const char *session, int ended_ms)
{
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__rc_registered_forget(c, session);
    mcp__buf set = {0}, rec = {0}, mark = {0}, live = {0};
    int rc = MCP_ENOMEM;
    char px[24];
    mcp__u64_str(ended_ms > 0 ? (uint64_t)ended_ms : 0, px);
    if (mcp__rc_key(c, &set, "k:", session) == MCP_OK &&
        mcp__rc_key(c, &rec, "s:", session) == MCP_OK &&
        mcp__rc_key(c, &mark, "x:", session) == MCP_OK &&
        mcp__rc_key(c, &live, "sessions", "") == MCP_OK)
        rc = ended_ms > 0 ? mcp__rc_cmd(c, NULL, NULL, "EVAL %s 4 %s %s %s %s %s %s", delete_lua,
                                        set.data, rec.data, mark.data, live.data, px, session)
                          : mcp__rc_cmd(c, NULL, NULL, "EVAL %s 1 %s", delete_lua, set.data);
    mcp__buf_free(&set);
    mcp__buf_free(&rec);
    mcp__buf_free(&mark);
    mcp__buf_free(&live);
    return rc;
}

/* Writes the record (KEYS[1]) unless the session was ended (its mark, KEYS[2]): 1
 * written, 0 ended, -1 there already (ARGV[3] "NX": only a missing record is
 * written), -3 a new session (ARGV[4] its bound, "-" for a known one) past the bound
 * of live sessions (KEYS[3]: those not expired by ARGV[5] count, and the others are
 * dropped). The session ARGV[7] is live until ARGV[6]. The record is the first thing
 * written: a Redis that refuses writes (full) refuses the script there, whereas a
 * script that has written once is let go on. */
static const char put_lua[] =
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
    "if ARGV[4] ~= '-' and not redis.call('ZSCORE', KEYS[3], ARGV[7]) and "
    "   redis.call('ZCOUNT', KEYS[3], '(' .. ARGV[5], '+inf') >= tonumber(ARGV[4]) then "
    "  return -3 "
    "end "
    "if ARGV[3] == 'NX' then "
    "  if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return -1 end "
    "else "
    "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "end "
    "if ARGV[4] ~= '-' then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5]) end "
    "redis.call('ZADD', KEYS[3], ARGV[6], ARGV[7]) "
    "return 1";

/* Extends the record's life (ARGV[2] ms, and its place among the live sessions): 1
 * done, 0 no record and the session ended, -2 no record (it expired, or the server
 * lost it). */
static const char touch_lua[] = "if redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 1 then "
                                "  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[7]) "
                                "  return 1 "
                                "end "
                                "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
                                "return -2";

static void on_record(redisAsyncContext *ac, void *reply, void *priv)
{
    mcp__rreq q = mcp__rc_answer(ac, reply, priv);
    redisReply *r = reply;
    int status = MCP_ECLOSED;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= -3 && r->integer <= 1) {
        static const int of[] = {MCP_ELIMIT, MCP_ENOENT, MCP_EEXIST, MCP_ECANCELED, MCP_OK};
        status = of[r->integer + 3];
    } else if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        /* Refused (OOM under maxmemory with noeviction, say): said, not taken for a loss
         * of the connection. */
        mcp__warn("redis refused a session record: %.200s", r->str);
        status = MCP_EIO;
    }
    q.done.put(q.arg, status);
}

/* Runs one of the record's scripts on the record, the ended mark and the live
 * sessions, with ARGV text, ttl_ms, mode, the bound of a new session ("-": not one),
 * now, the expiry and the id; done (may be NULL) gets on_record's status. */
static int record_eval(mcp__cluster *c, const char *script, const char *id, const char *text,
                       size_t len, int ttl_ms, const char *mode, int is_new,
                       mcp__cluster_done_fn done, void *arg)
{
    if (ttl_ms <= 0)
        return MCP_EINVAL;
    if (c->state != MCP__RC_UP) {
        c->stats.dropped++;
        return MCP_ECLOSED;
    }
    mcp__rreq *q = NULL;
    if (done != NULL && (q = malloc(sizeof(*q))) == NULL)
        return MCP_ENOMEM;
    if (q != NULL)
        *q = (mcp__rreq){.c = c, .done.put = done, .arg = arg};
    char px[24], max[24] = "-", now[24], until[24];
    uint64_t wall = mcp__wall_ms();
    mcp__u64_str((uint64_t)ttl_ms, px);
    if (is_new)
        mcp__u64_str((uint64_t)c->max_sessions, max);
    mcp__u64_str(wall, now);
    mcp__u64_str(wall + (uint64_t)ttl_ms, until);
    mcp__buf mark = {0}, live = {0};
    int rc = mcp__rc_key(c, &c->kbuf, "s:", id);
    if (rc == MCP_OK)
        rc = mcp__rc_key(c, &mark, "x:", id);
    if (rc == MCP_OK)
        rc = mcp__rc_key(c, &live, "sessions", "");
    if (rc == MCP_OK)
        rc = mcp__rc_cmd(c, q != NULL ? on_record : NULL, q,
                         "EVAL %s 3 %s %s %s %b %s %s %s %s %s %s", script, c->kbuf.data, mark.data,
                         live.data, text != NULL ? text : "", len, px, mode, max, now, until, id);
    mcp__buf_free(&mark);
    mcp__buf_free(&live);
    if (rc != MCP_OK)
        free(q);
    return rc;
}

int mcp__cluster_session_put(mcp__cluster *c, const char *id, const char *text, size_t len,
                             int ttl_ms, unsigned flags, mcp__cluster_done_fn done, void *arg)
{
    /* With done, the answer is waited for (the transport holds what the client is told
     * next until other nodes can find the record). */
    return record_eval(c, put_lua, id, text, len, ttl_ms,
                       flags & MCP__CLUSTER_PUT_MISSING ? "NX" : "-",
                       (flags & MCP__CLUSTER_PUT_NEW) != 0, done, arg);
}

void mcp__rc_on_get(redisAsyncContext *ac, void *reply, void *priv)
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
    int rc = mcp__rc_ask(c, mcp__rc_on_get, &q, "GET", "s:", id);
    if (rc != MCP_OK)
        done(arg, rc, NULL, 0);
}

int mcp__cluster_session_touch(mcp__cluster *c, const char *id, int ttl_ms,
                               mcp__cluster_done_fn done, void *arg)
{
    return record_eval(c, touch_lua, id, "", 0, ttl_ms, "-", 0, done, arg);
}

int mcp__cluster_session_delete(mcp__cluster *c, const char *id, int ttl_ms)
{
    return mcp__rc_delete_session(c, id, ttl_ms > 0 ? ttl_ms : 1);
}
