/* SPDX-License-Identifier: MIT */
/*
 * Sessions and streams shared by three mcp-everything nodes through a real
 * redis-server (--redis), each node asked directly, so that each test chooses
 * where every request lands:
 *   - a stream read through another node (a follow) holds its handler back no
 *     more than a stream read where it runs: the follower tells the owner what
 *     its client has;
 *   - a resume on another node answers at once, not with its first event;
 *   - a resume that comes while the replay into the one before it still waits for
 *     Redis takes that one's place, and gets the whole call;
 *   - a follower that loses Redis cuts its client, who resumes the rest, rather
 *     than telling it that the node running its request is gone;
 *   - a resume elsewhere stops at an event its owner could not store (Redis was out
 *     of its reach), as a resume on the owner is refused past it;
 *   - a session with GET streams open on two nodes gets a server-wide notification
 *     once, on the newer;
 *   - a session keeps a bounded number of finished streams in Redis;
 *   - a DELETE on one node ends the session on every node before it is answered;
 *   - sessions outlive a Redis restart that lost every key: the nodes that hold
 *     them write their records again;
 *   - a Redis that stops answering (SIGSTOP: the connection stays up) is given
 *     up by the nodes' watchdog, and requests that need it get 503, not a hang;
 *   - a DELETE while Redis stalls is answered once Redis says who heard, or, past
 *     the watchdog, 503: never 200 for an end the other nodes may not know of;
 *   - a node flooding Redis with events is not taken for dead, and a stream it
 *     just began can be resumed elsewhere: its handlers wait for Redis to catch up,
 *     so its heartbeat and its other writes are not queued behind seconds of events;
 *   - a node that dies after storing a call's answer, before the stream's end: a
 *     resume elsewhere gets the answer once, and no "node gone" error after it;
 *   - a notification for one session raised on a node that does not hold its GET
 *     stream (mcp_server_notify_session) reaches that stream on the node that does.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "cluster_host.h"
#include "harness.h"
#include "http_expect.h"
#include "resume_check.h"

/* The deadline of one request or one event. */
#define STEP_MS 5000
/* Of a call of thousands of events, read to its end. */
#define CALL_MS 30000

static int teardown_failures;

static int setup(void **state)
{
    ch_cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    if (ch_start(c, 3, CH_REDIS, NULL) != 0) {
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

/* Two nodes whose deployment takes three live sessions. */
static int setup_three_sessions(void **state)
{
    static const char *const args[] = {"--cluster-max-sessions", "3", NULL};
    ch_cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    if (ch_start(c, 2, CH_REDIS, args) != 0) {
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ch_cluster *c = *state;
    if (c == NULL)
        return 0;
    if (ch_stop(c) != 0)
        teardown_failures++;
    free(c);
    *state = NULL;
    return 0;
}

/* POSTs a tools/call on port and reads its priming event: its id into last_id, then
 * the connection is closed (the client is cut right after the priming event). Returns
 * the event's retry interval (-1: none). */
static long call_and_cut(int port, const char *session, long long id, const char *tool,
                         const char *args, char last_id[160])
{
    char *body = rc_call_body(id, tool, args, NULL);
    hc_conn c;
    int status = hc_mcp_post_open(&c, port, session, body, 0, STEP_MS);
    free(body);
    if (status != 200)
        fail_msg("tools/call %s: HTTP %d", tool, status);
    hc_sse_event ev;
    if (hc_sse_next_block(&c, &ev, STEP_MS) != 1 || !hc_sse_is_priming(&ev))
        fail_msg("tools/call %s: no priming event first", tool);
    snprintf(last_id, 160, "%s", ev.id);
    long retry = ev.retry;
    hc_sse_event_free(&ev);
    hc_close(&c);
    return retry;
}

/* The node number in an event id (the stream's high bits: see shttp.h). */
static long long node_number(const char *event_id)
{
    long long stream = rc_id_stream(event_id);
    return stream < 0 ? -1 : (long long)((unsigned long long)stream >> 40);
}

static void test_a_stream_read_through_another_node_is_not_held_back(void **state)
{
    ch_cluster *c = *state;
    char session[33], last_id[160];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    /* More than twice what a handler may send unconfirmed (2,500 events): with no word
     * from the follower, node0's handler would stop there until its client came back
     * to node0, and be cancelled after the away limit. */
    const int n = 6000;
    char args[64];
    snprintf(args, sizeof(args), "{\"count\":%d}", n);
    call_and_cut(ch_node_port(c, 0), session, 7, "notify", args, last_id);

    hc_conn g;
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 1), session, last_id, STEP_MS), 200);
    rc_call call;
    rc_call_init(&call, 7, n);
    int rc = rc_call_read(&g, &call, 0, CALL_MS);
    if (rc != 1)
        fail_msg("the call read through node1 %s after %lld of %d notifications (%s)",
                 rc == -1 ? "timed out" : "ended", call.next - 1, n, call.err);
    char want[32];
    snprintf(want, sizeof(want), "sent %d", n);
    assert_string_equal(rc_result_text(call.result), want);
    rc_call_free(&call);
    hc_close(&g);

    char *out = ch_node_output(c, 0);
    assert_non_null(out);
    if (strstr(out, "were cancelled") != NULL)
        fail_msg("node0 cancelled a handler whose client read through node1:\n%s", out);
    free(out);
}

static void test_a_resume_on_another_node_answers_before_the_first_event(void **state)
{
    ch_cluster *c = *state;
    char session[33], last_id[160];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    /* Nothing to send for 8 s: the resume's status line must not wait for it. */
    call_and_cut(ch_node_port(c, 0), session, 8, "slow_echo",
                 "{\"text\":\"late\",\"delay_ms\":8000}", last_id);
    hc_conn g;
    int status = hc_mcp_get_open(&g, ch_node_port(c, 2), session, last_id, 4000);
    if (status != 200)
        fail_msg("the resume on node2 had no response head within 4 s (%d); the answer comes "
                 "after 8 s",
                 status);
    assert_string_equal(hc_header_get(&g.head, "content-type"), "text/event-stream");
    rc_call call;
    rc_call_init(&call, 8, 0);
    assert_int_equal(rc_call_read(&g, &call, 0, CALL_MS), 1);
    assert_string_equal(rc_result_text(call.result), "late");
    rc_call_free(&call);
    hc_close(&g);
}

/* Sends a GET resuming from last_id on port, without waiting for its head. */
static void resume_send(hc_conn *g, int port, const char *session, const char *last_id)
{
    char hdrs[400];
    snprintf(hdrs, sizeof(hdrs),
             "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\nLast-Event-ID: %s\r\n", session,
             last_id);
    assert_int_equal(hc_connect(g, port, STEP_MS), 0);
    assert_int_equal(hc_send_request(g, port, "GET", "/mcp", hdrs, NULL, STEP_MS), 0);
}

static int ping(int port, const char *session, int timeout_ms);

static void test_a_resume_replacing_one_still_replaying_gets_the_whole_call(void **state)
{
    ch_cluster *c = *state;
    char session[33], last_id[160];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    const int n = 20;
    call_and_cut(ch_node_port(c, 0), session, 12, "notify", "{\"count\":20,\"delay_ms\":100}",
                 last_id);
    /* Redis stopped (well within the nodes' 5 s watchdog): node0's replay for the first
     * resume waits for it. */
    pid_t redis = c->redis.proc.pid;
    assert_true(redis > 0);
    assert_int_equal(kill(redis, SIGSTOP), 0);
    hc_conn g1, g2;
    resume_send(&g1, ch_node_port(c, 0), session, last_id);
    /* node0 answers a request of a session it holds without Redis: once it has, it
     * has read the first resume, sent before. */
    int pinged = ping(ch_node_port(c, 0), session, STEP_MS);
    /* The client gives that resume up and resumes again, from the same event. */
    hc_close(&g1);
    resume_send(&g2, ch_node_port(c, 0), session, last_id);
    kill(redis, SIGCONT);
    assert_int_equal(pinged, 200);
    assert_int_equal(hc_read_head(&g2, NULL, STEP_MS), 0);
    assert_int_equal(g2.head.status, 200);
    rc_call call;
    rc_call_init(&call, 12, n);
    int rc = rc_call_read(&g2, &call, 0, CALL_MS);
    if (rc != 1)
        fail_msg("the second resume %s after %lld of %d notifications (%s)",
                 rc == 0    ? "ended"
                 : rc == -1 ? "timed out"
                            : "failed",
                 call.next - 1, n, call.err);
    assert_string_equal(rc_result_text(call.result), "sent 20");
    rc_call_free(&call);
    hc_close(&g2);
}

/* Kills every connection Redis has from node number `node` (they are named after it). */
static int kill_connections_of(ch_cluster *c, long long node)
{
    struct timeval tv = {.tv_sec = 5};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", c->redis_port, tv);
    assert_non_null(r);
    assert_int_equal(r->err, 0);
    redisReply *list = redisCommand(r, "CLIENT LIST");
    assert_non_null(list);
    assert_int_equal(list->type, REDIS_REPLY_STRING);
    char name[48];
    snprintf(name, sizeof(name), " name=mcp-node-%lld ", node);
    int killed = 0;
    for (char *line = list->str; line != NULL && *line != '\0';) {
        char *end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        const char *id = strstr(line, "id=");
        if (strstr(line, name) != NULL && id != NULL) {
            redisReply *k = redisCommand(r, "CLIENT KILL ID %lld", atoll(id + 3));
            if (k != NULL && k->type == REDIS_REPLY_INTEGER)
                killed += (int)k->integer;
            freeReplyObject(k);
        }
        line = end != NULL ? end + 1 : NULL;
    }
    freeReplyObject(list);
    redisFree(r);
    return killed;
}

/* Node i's number, from the id of a stream it makes in session (request id). */
static long long number_of_node(ch_cluster *c, int i, const char *session, long long id)
{
    char probe_id[160];
    call_and_cut(ch_node_port(c, i), session, id, "notify", "{\"count\":0}", probe_id);
    long long n = node_number(probe_id);
    assert_true(n > 0);
    return n;
}

/* A notify call (id) of n notifications delay_ms apart runs on node0; its client, cut
 * after the priming event, follows it from node1 (g, call) and has read 10 of them. */
static void follow_call(ch_cluster *c, const char *session, long long id, int n, int delay_ms,
                        hc_conn *g, rc_call *call)
{
    char args[64], last_id[160];
    snprintf(args, sizeof(args), "{\"count\":%d,\"delay_ms\":%d}", n, delay_ms);
    call_and_cut(ch_node_port(c, 0), session, id, "notify", args, last_id);
    assert_int_equal(hc_mcp_get_open(g, ch_node_port(c, 1), session, last_id, STEP_MS), 200);
    rc_call_init(call, id, n);
    assert_int_equal(rc_call_read(g, call, 10, STEP_MS), 2);
}

static void test_a_follower_that_loses_redis_cuts_its_client_who_resumes_the_rest(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    long long node1 = number_of_node(c, 1, session, 9);
    const int n = 100;
    hc_conn g;
    rc_call call;
    follow_call(c, session, 10, n, 40, &g, &call);
    /* node1 loses Redis while node0, which runs the call, keeps it. */
    /* (Its second connection may be gone by the time it is asked for: the node drops
     * both as soon as it sees one go.) */
    int killed = kill_connections_of(c, node1);
    if (killed < 1)
        fail_msg("node1 has no connection to Redis to kill");
    int rc = rc_call_read(&g, &call, 0, STEP_MS);
    if (rc != 0 || g.body_done)
        fail_msg("node1, cut off from Redis, %s (%s)",
                 rc == 1       ? "answered for the call that node0 still runs"
                 : g.body_done ? "ended the stream cleanly without the answer"
                 : rc == -1    ? "kept the stream open without events"
                               : "failed the stream",
                 call.err);
    hc_close(&g);
    long long had = call.next - 1;
    /* The client resumes from what it has (on node2, node1 may still be reconnecting)
     * and gets the rest, each once, in order, then the answer. */
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 2), session, call.last_id, STEP_MS), 200);
    rc = rc_call_read(&g, &call, 0, CALL_MS);
    if (rc != 1)
        fail_msg("the resume on node2 %s after %lld of %d notifications (%s)",
                 rc == -1 ? "timed out" : "ended", call.next - 1, n, call.err);
    printf("node1 lost Redis after %lld notifications had come through it; node2 gave the "
           "other %lld and the answer\n",
           had, (long long)n - had);
    rc_call_free(&call);
    hc_close(&g);
    char *out = ch_node_output(c, 1);
    assert_non_null(out);
    assert_non_null(strstr(out, "connection lost"));
    free(out);
}

static void wait_all_serve(ch_cluster *c);

static void test_a_resume_elsewhere_stops_at_an_event_its_owner_could_not_store(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    wait_all_serve(c); /* (node1 may be connecting again after the test before) */
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    long long node0 = number_of_node(c, 0, session, 19);
    hc_conn g;
    rc_call call;
    follow_call(c, session, 20, 80, 25, &g, &call);
    /* node0, which runs the call, loses Redis for a moment: the events of that moment
     * are not stored. node1, following, must not pass over them. */
    if (kill_connections_of(c, node0) < 1)
        fail_msg("node0 has no connection to Redis to kill");
    int rc = rc_call_read(&g, &call, 0, CALL_MS);
    if (rc != 0 || g.body_done || call.err[0] != '\0')
        fail_msg("the resume on node1 %s after %lld notifications (%s)",
                 rc == 1       ? "got the answer, past events that were never stored"
                 : g.body_done ? "ended cleanly without the answer"
                 : rc == -1    ? "timed out"
                               : "went wrong",
                 call.next - 1, call.err);
    hc_close(&g);
    /* Resumed from the last event it has, before the lost ones: refused, on another
     * node as on the owner. */
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 2), session, call.last_id, STEP_MS), 400);
    hc_close(&g);
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 0), session, call.last_id, STEP_MS), 400);
    hc_close(&g);
    printf("node0 lost Redis mid-call: the resume on node1 stopped after notification %lld; "
           "resumed from there, 400 on node2 and node0\n",
           call.next - 1);
    rc_call_free(&call);
}

/* A connection to the cluster's Redis, and the keys that match pattern on it. */
static redisReply *redis_keys_on(ch_cluster *c, const char *pattern, redisContext **out)
{
    struct timeval tv = {.tv_sec = 5};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", c->redis_port, tv);
    assert_non_null(r);
    assert_int_equal(r->err, 0);
    redisReply *k = redisCommand(r, "KEYS %s", pattern);
    assert_non_null(k);
    assert_int_equal(k->type, REDIS_REPLY_ARRAY);
    *out = r;
    return k;
}

/* How many keys Redis has that match pattern. */
static long long redis_keys(ch_cluster *c, const char *pattern)
{
    redisContext *r;
    redisReply *k = redis_keys_on(c, pattern, &r);
    long long n = (long long)k->elements;
    freeReplyObject(k);
    redisFree(r);
    return n;
}

/* The value of field name (one letter) of an entry of an XRANGE reply, or NULL. */
static const redisReply *entry_field(const redisReply *e, const char *name)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[1]->type != REDIS_REPLY_ARRAY)
        return NULL;
    const redisReply *f = e->element[1];
    for (size_t i = 0; i + 1 < f->elements; i += 2)
        if (f->element[i]->type == REDIS_REPLY_STRING && strcmp(f->element[i]->str, name) == 0)
            return f->element[i + 1];
    return NULL;
}

/* How many streams Redis holds events of, in the keys that match pattern. */
static long long redis_streams(ch_cluster *c, const char *pattern)
{
    redisContext *r;
    redisReply *k = redis_keys_on(c, pattern, &r);
    long long n = 0;
    for (size_t i = 0; i < k->elements; i++) {
        redisReply *x = redisCommand(r, "XRANGE %s - +", k->element[i]->str);
        assert_non_null(x);
        assert_int_equal(x->type, REDIS_REPLY_ARRAY);
        /* A stream's entries are one after another in seq order, but may be interleaved
         * with others': the distinct stream ids are counted. */
        char **seen = calloc(x->elements + 1, sizeof(*seen));
        assert_non_null(seen);
        size_t nseen = 0;
        for (size_t j = 0; j < x->elements; j++) {
            const redisReply *sid = entry_field(x->element[j], "s");
            assert_non_null(sid);
            size_t m = 0;
            while (m < nseen && strcmp(seen[m], sid->str) != 0)
                m++;
            if (m == nseen)
                seen[nseen++] = sid->str;
        }
        n += (long long)nseen;
        free(seen);
        freeReplyObject(x);
    }
    freeReplyObject(k);
    redisFree(r);
    return n;
}

static void test_a_session_keeps_a_bounded_number_of_streams_in_redis(void **state)
{
    ch_cluster *c = *state;
    char session[33], first[160], last[160], pattern[64];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    /* 300 calls, each a stream of its own (its priming event, a notification, its
     * answer): a node keeps the newest 128 finished streams of a session. */
    for (int i = 0; i < 300; i++) {
        char *body = rc_call_body(100 + i, "notify", "{\"count\":1}", NULL);
        hc_conn p;
        assert_int_equal(hc_mcp_post_open(&p, ch_node_port(c, 0), session, body, 0, STEP_MS), 200);
        free(body);
        rc_call call;
        rc_call_init(&call, 100 + i, 1);
        assert_int_equal(rc_call_read(&p, &call, 0, STEP_MS), 1);
        snprintf(i == 0 ? first : last, 160, "%s", call.last_id);
        rc_call_free(&call);
        hc_close(&p);
    }
    snprintf(pattern, sizeof(pattern), "mcp:e:%s:*", session);
    long long kept = redis_streams(c, pattern);
    printf("300 finished streams of one session: %lld kept in Redis\n", kept);
    assert_true(kept >= 96 && kept <= 128); /* past 128, down to 96 at once */
    /* The newest is resumed (it is over: the GET stays open and idle); the oldest is
     * gone. */
    hc_conn g;
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 1), session, last, STEP_MS), 200);
    hc_close(&g);
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 1), session, first, STEP_MS), 400);
    hc_close(&g);
}

static void test_a_stream_past_the_session_bound_is_still_resumed(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    /* 10,000 notifications, its priming event and its answer: more events than the
     * session may keep (10,000). The newest stream stays, as the memory store keeps a
     * session's last events. */
    char *body = rc_call_body(30, "notify", "{\"count\":10000}", NULL);
    hc_conn p;
    assert_int_equal(hc_mcp_post_open(&p, ch_node_port(c, 0), session, body, 0, STEP_MS), 200);
    free(body);
    rc_call call;
    rc_call_init(&call, 30, 10000);
    assert_int_equal(rc_call_read(&p, &call, 0, CALL_MS), 1);
    hc_close(&p);
    hc_conn g;
    int status = hc_mcp_get_open(&g, ch_node_port(c, 1), session, call.last_id, STEP_MS);
    if (status != 200)
        fail_msg("the resume of its last event on node1 got %d", status);
    hc_close(&g);
    rc_call_free(&call);
}

/* POST ping on port for session: the HTTP status. */
static int ping(int port, const char *session, int timeout_ms)
{
    hc_response r;
    int rc = hc_mcp_post(port, session, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                         &r, timeout_ms);
    int status = rc == 0 ? r.status : -1;
    hc_response_free(&r);
    return status;
}

static void test_a_notification_reaches_one_get_stream_of_a_session_on_two_nodes(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    hc_response r;
    assert_int_equal(hc_mcp_post(ch_node_port(c, 0), session, NULL,
                                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/"
                                 "subscribe\",\"params\":{\"uri\":\"test://watched-resource\"}}",
                                 &r, STEP_MS),
                     0);
    assert_int_equal(r.status, 200);
    hc_response_free(&r);
    /* A GET on node0, then a newer one on node1, both left open (GET streams must
     * not replace each other): the newer
     * one carries the session's messages, and only it. */
    hc_conn g[2];
    hc_sse_event ev;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(hc_mcp_get_open(&g[i], ch_node_port(c, i), session, NULL, STEP_MS), 200);
        assert_int_equal(hc_sse_next_block(&g[i], &ev, STEP_MS), 1);
        assert_true(hc_sse_is_priming(&ev));
        hc_sse_event_free(&ev);
    }
    /* Raised on node1, whose record naming its GET went out before: node0 has it when
     * the notification comes (one publisher's messages arrive in order). */
    char *body =
        rc_call_body(3, "trigger_resource_update", "{\"uri\":\"test://watched-resource\"}", NULL);
    assert_int_equal(hc_mcp_post(ch_node_port(c, 1), session, NULL, body, &r, STEP_MS), 0);
    free(body);
    assert_int_equal(r.status, 200);
    hc_response_free(&r);
    assert_int_equal(hc_sse_next_block(&g[1], &ev, STEP_MS), 1);
    assert_non_null(ev.data);
    assert_non_null(strstr(ev.data, "notifications/resources/updated"));
    hc_sse_event_free(&ev);
    /* node0's GET gets nothing: it would have by now (same bus message, same moment). */
    int rc = hc_sse_next_block(&g[0], &ev, 1000);
    if (rc == 1)
        fail_msg("the older GET, on node0, got a copy too: %s", ev.data ? ev.data : "(no data)");
    hc_close(&g[0]);
    hc_close(&g[1]);
}

static int delete_session(int port, const char *session)
{
    return hc_mcp_delete(port, session, STEP_MS);
}

static void test_a_delete_on_one_node_ends_the_session_on_every_node_at_once(void **state)
{
    ch_cluster *c = *state;
    /* The next request goes out as soon as DELETE is answered, to nodes that hold a
     * copy of the session: it must find the session gone, every time. */
    for (int k = 0; k < 20; k++) {
        char session[33];
        assert_int_equal(hc_mcp_initialize(ch_node_port(c, k % 3), session, STEP_MS), 0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(ping(ch_node_port(c, i), session, STEP_MS), 200);
        assert_int_equal(delete_session(ch_node_port(c, k % 3), session), 200);
        for (int i = 1; i < 3; i++) {
            int status = ping(ch_node_port(c, (k + i) % 3), session, STEP_MS);
            if (status != 404)
                fail_msg("round %d: node%d answered %d for a session node%d had just deleted", k,
                         (k + i) % 3, status, k % 3);
        }
    }
}

/* Waits until every node serves a new session again (after a Redis restart). */
static void wait_all_serve(ch_cluster *c)
{
    for (int i = 0; i < 3; i++) {
        long long deadline = harness_now_ms() + 15000;
        char s[33];
        while (hc_mcp_initialize(ch_node_port(c, i), s, STEP_MS) != 0) {
            if (harness_now_ms() > deadline)
                fail_msg("node%d made no session for 15 s", i);
            rc_wait_retry(100);
        }
    }
}

static void test_sessions_outlive_a_redis_restart_that_lost_everything(void **state)
{
    ch_cluster *c = *state;
    wait_all_serve(c);
    char held[33], alone[33];
    /* One session known to two nodes, one known to node0 only. */
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), held, STEP_MS), 0);
    assert_int_equal(ping(ch_node_port(c, 1), held, STEP_MS), 200);
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), alone, STEP_MS), 0);
    assert_int_equal(ch_stop_redis(c), 0);
    assert_int_equal(ch_start_redis(c), 0); /* empty: nothing was persisted */
    wait_all_serve(c);
    /* The nodes that hold them wrote their records again: node2, which never saw
     * either, finds both. */
    assert_int_equal(ping(ch_node_port(c, 2), held, STEP_MS), 200);
    assert_int_equal(ping(ch_node_port(c, 2), alone, STEP_MS), 200);
    assert_int_equal(ping(ch_node_port(c, 1), alone, STEP_MS), 200);
    /* And a DELETE still ends them everywhere. */
    assert_int_equal(delete_session(ch_node_port(c, 2), alone), 200);
    assert_int_equal(ping(ch_node_port(c, 0), alone, STEP_MS), 404);
}

/* CONFIG SET name value on the cluster's Redis. */
static void redis_config_set(ch_cluster *c, const char *name, const char *value)
{
    struct timeval tv = {.tv_sec = 5};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", c->redis_port, tv);
    assert_non_null(r);
    assert_int_equal(r->err, 0);
    redisReply *k = redisCommand(r, "CONFIG SET %s %s", name, value);
    assert_non_null(k);
    assert_int_equal(k->type, REDIS_REPLY_STATUS);
    freeReplyObject(k);
    redisFree(r);
}

/*
 * A Redis that refuses writes (full: maxmemory with noeviction) cannot take a new
 * session's record. initialize answered 200 with a session id that the other nodes
 * answered 404 to, and nothing was logged; now it is 503 with a JSON-RPC error, the
 * node says why, and once Redis takes writes again sessions are made and shared.
 */
static void test_a_session_redis_cannot_record_is_refused_with_503(void **state)
{
    ch_cluster *c = *state;
    wait_all_serve(c);
    redis_config_set(c, "maxmemory-policy", "noeviction");
    redis_config_set(c, "maxmemory", "1");
    hc_response r;
    char *init = hc_initialize_body(NULL);
    int status = hc_mcp_post(ch_node_port(c, 0), NULL, NULL, init, &r, STEP_MS);
    redis_config_set(c, "maxmemory", "0");
    if (status != 0)
        fail_msg("initialize while Redis refuses writes: no answer (status %d)", r.status);
    json_t *body = json_loadb(r.body ? r.body : "", r.body_len, 0, NULL);
    json_t *code = json_object_get(json_object_get(body, "error"), "code");
    if (r.status != 503 || !json_is_integer(code) || hc_header_get(&r, "mcp-session-id") != NULL)
        fail_msg("initialize while Redis refuses writes: expected 503 with a JSON-RPC error and "
                 "no session, got %d (session %s): %s",
                 r.status, hc_header_get(&r, "mcp-session-id") ? "given" : "none",
                 r.body ? r.body : "");
    json_decref(body);
    hc_response_free(&r);
    free(init);
    /* Why: Redis refused the record, or (on a machine so busy that the command timed
     * out) the connection to Redis was given up, which refuses it too. */
    char *out = ch_node_output(c, 0);
    if (out == NULL || (strstr(out, "could not be written") == NULL &&
                        strstr(out, "the shared session store cannot be reached") == NULL))
        fail_msg("node0 did not say why the session was refused:\n%s", out ? out : "");
    free(out);
    /* Redis takes writes again: a session made on node0 is served by node1. */
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    assert_int_equal(ping(ch_node_port(c, 1), session, STEP_MS), 200);
}

/* An initialize answered 503 with a JSON-RPC error and no session id, or fails. */
static void expect_initialize_503(int port, const char *what)
{
    hc_response r;
    char *init = hc_initialize_body(NULL);
    if (hc_mcp_post(port, NULL, NULL, init, &r, STEP_MS) != 0)
        fail_msg("%s: no answer (status %d)", what, r.status);
    free(init);
    json_t *body = json_loadb(r.body ? r.body : "", r.body_len, 0, NULL);
    json_t *code = json_object_get(json_object_get(body, "error"), "code");
    if (r.status != 503 || !json_is_integer(code) || hc_header_get(&r, "mcp-session-id") != NULL)
        fail_msg("%s: expected 503 with a JSON-RPC error and no session, got %d (session %s): %s",
                 what, r.status, hc_header_get(&r, "mcp-session-id") ? "given" : "none",
                 r.body ? r.body : "");
    json_decref(body);
    hc_response_free(&r);
}

/*
 * Each node bounds its own sessions, but Redis kept every session's record whatever
 * the number of nodes: a flood of initializes spread over the nodes grew it without
 * bound. The deployment's live sessions are counted in Redis: past
 * --cluster-max-sessions, initialize gets 503 on every node, and a session that ends
 * makes room.
 */
static void test_the_deployments_sessions_are_bounded_in_redis(void **state)
{
    ch_cluster *c = *state;
    char s[3][33];
    for (int i = 0; i < 3; i++)
        if (hc_mcp_initialize(ch_node_port(c, i % 2), s[i], STEP_MS) != 0)
            fail_msg("session %d of 3 on node%d: initialize failed", i + 1, i % 2);
    expect_initialize_503(ch_node_port(c, 1), "a fourth session on node1");
    expect_initialize_503(ch_node_port(c, 0), "a fourth session on node0");
    if (ch_node_wait_output(c, 1, "most sessions", 1, STEP_MS) < 0)
        fail_msg("node1 did not say why it refused the session");
    assert_int_equal(redis_keys(c, "mcp:s:*"), 3);
    /* The sessions there are served by both nodes, and one that ends makes room. */
    assert_int_equal(ping(ch_node_port(c, 1), s[0], STEP_MS), 200);
    assert_int_equal(delete_session(ch_node_port(c, 1), s[0]), 200);
    char again[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), again, STEP_MS), 0);
    assert_int_equal(ping(ch_node_port(c, 1), again, STEP_MS), 200);
    expect_initialize_503(ch_node_port(c, 1), "a fourth session again");
}

static void test_a_silent_redis_is_given_up_and_found_again(void **state)
{
    ch_cluster *c = *state;
    char session[33];
    /* (A node may be connecting again after the test before.) */
    long long deadline = harness_now_ms() + 15000;
    while (hc_mcp_initialize(ch_node_port(c, 1), session, STEP_MS) != 0) {
        if (harness_now_ms() > deadline)
            fail_msg("node1 made no session for 15 s");
        rc_wait_retry(100);
    }
    pid_t redis = c->redis.proc.pid;
    assert_true(redis > 0);
    /* Stopped, not gone: its connections stay up and say nothing. */
    assert_int_equal(kill(redis, SIGSTOP), 0);
    long long t0 = harness_now_ms();
    /* node0 has never seen the session: it must ask Redis, which does not answer. The
     * nodes give it up after 5 heartbeats (5 s). */
    int status = ping(ch_node_port(c, 0), session, 15000);
    long long took = harness_now_ms() - t0;
    kill(redis, SIGCONT);
    if (status != 503)
        fail_msg("a request that needs the silent Redis got %d after %lld ms, not 503", status,
                 took);
    printf("silent Redis: 503 after %lld ms\n", took);
    /* Back: node0 connects again and finds the session. */
    deadline = harness_now_ms() + 15000;
    while ((status = ping(ch_node_port(c, 0), session, STEP_MS)) != 200 &&
           harness_now_ms() < deadline)
        rc_wait_retry(100);
    assert_int_equal(status, 200);
}

/* Sends DELETE for session to port on c, without waiting for its answer. */
static void delete_send(hc_conn *conn, int port, const char *session)
{
    char hdrs[128];
    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n",
             session);
    assert_int_equal(hc_connect(conn, port, STEP_MS), 0);
    assert_int_equal(hc_send_request(conn, port, "DELETE", "/mcp", hdrs, NULL, STEP_MS), 0);
}

static void test_a_delete_while_redis_stalls_waits_for_it_or_says_503(void **state)
{
    ch_cluster *c = *state;
    pid_t redis = c->redis.proc.pid;
    wait_all_serve(c);
    char session[33];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ping(ch_node_port(c, i), session, STEP_MS), 200);
    /* Redis stalls for 2 s (longer than a DELETE waits for the other nodes' word, shorter
     * than the watchdog): the DELETE is answered once Redis says who heard, and the
     * session is gone everywhere. */
    hc_conn conn;
    hc_response r;
    assert_int_equal(kill(redis, SIGSTOP), 0);
    delete_send(&conn, ch_node_port(c, 0), session);
    rc_wait_retry(2000); /* the stall itself */
    assert_int_equal(kill(redis, SIGCONT), 0);
    assert_int_equal(hc_read_response(&conn, &r, 15000), 0);
    hc_close(&conn);
    assert_int_equal(r.status, 200);
    hc_response_free(&r);
    for (int i = 1; i < 3; i++)
        assert_int_equal(ping(ch_node_port(c, i), session, STEP_MS), 404);

    /* Past the watchdog: whether the others heard is not known, so 503. Asked again on
     * another node once Redis is back, the session is gone everywhere. */
    wait_all_serve(c);
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ping(ch_node_port(c, i), session, STEP_MS), 200);
    assert_int_equal(kill(redis, SIGSTOP), 0);
    delete_send(&conn, ch_node_port(c, 0), session);
    int got = hc_read_response(&conn, &r, 15000);
    kill(redis, SIGCONT);
    assert_int_equal(got, 0);
    hc_close(&conn);
    assert_int_equal(r.status, 503);
    hc_response_free(&r);
    wait_all_serve(c);
    /* (404 when the first one landed after all: Redis read it before the node gave up.) */
    int again = delete_session(ch_node_port(c, 1), session);
    if (again != 200 && again != 404)
        fail_msg("the DELETE asked again got %d", again);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ping(ch_node_port(c, i), session, STEP_MS), 404);
}

/* ---- A node flooding Redis ---- */

/* Clients of a flood, each making calls of 250 notifications: short calls, so that a
 * handler's first messages must wait as its later ones do, or they get past the bound
 * (and as many handlers as workers are not all held by a few long calls). */
#define FLOOD_CLIENTS 24
#define FLOOD_EVENTS 250

typedef struct flood {
    int port;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, ended, stop;
    long long calls, failures;
    char err[700];
    /* node0's heartbeat: its key, and the least time to live it was seen with */
    int redis_port;
    char hb_key[64];
    long long hb_min_ms, hb_samples;
} flood;

static int flood_stopping(flood *f)
{
    pthread_mutex_lock(&f->mu);
    int stop = f->stop;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

static void flood_failed(flood *f, const char *fmt, ...)
{
    pthread_mutex_lock(&f->mu);
    if (f->failures++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->err, sizeof(f->err), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&f->mu);
}

/* One call of n notifications read to its end; counts the client as started once its
 * first call's events come. Returns 0 when it had them all and the answer. */
static int flood_call(flood *f, const char *session, long long id, int n, int *counted)
{
    char args[64];
    snprintf(args, sizeof(args), "{\"count\":%d}", n);
    char *body = rc_call_body(id, "notify", args, NULL);
    hc_conn c;
    int status = body != NULL ? hc_mcp_post_open(&c, f->port, session, body, 0, STEP_MS) : -1;
    free(body);
    rc_call call;
    rc_call_init(&call, id, n);
    int rc = status == 200 ? rc_call_read(&c, &call, 100, CALL_MS) : -3;
    if (rc == 2 || rc == 1) {
        if (!*counted) {
            *counted = 1;
            pthread_mutex_lock(&f->mu);
            f->started++;
            pthread_cond_broadcast(&f->cv);
            pthread_mutex_unlock(&f->mu);
        }
        if (rc == 2)
            rc = rc_call_read(&c, &call, 0, CALL_MS);
    }
    pthread_mutex_lock(&f->mu);
    f->calls++;
    pthread_mutex_unlock(&f->mu);
    if (rc != 1)
        flood_failed(f, "a call of %d: HTTP %d, read %d after %lld events: %s", n, status, rc,
                     call.next - 1, call.err);
    rc_call_free(&call);
    if (status > 0)
        hc_close(&c);
    return rc == 1 ? 0 : -1;
}

/* One client of a flood: its own session on port, its calls again and again until told
 * to stop. */
static void *flood_client(void *arg)
{
    flood *f = arg;
    int n = FLOOD_EVENTS;
    char session[33];
    int counted = 0, ok = hc_mcp_initialize(f->port, session, STEP_MS) == 0;
    if (!ok)
        flood_failed(f, "an initialize failed");
    for (long long id = 1; ok && !flood_stopping(f); id++)
        ok = flood_call(f, session, id, n, &counted) == 0;
    pthread_mutex_lock(&f->mu);
    f->ended++; /* (the test waits for its clients to start, or to end) */
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* Reads the time to live of node0's heartbeat every 20 ms while the flood runs. */
static void *flood_heartbeat(void *arg)
{
    flood *f = arg;
    struct timeval tv = {.tv_sec = 5};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", f->redis_port, tv);
    if (r == NULL || r->err != 0) {
        flood_failed(f, "no connection to Redis to read the heartbeat");
        redisFree(r);
        return NULL;
    }
    while (!flood_stopping(f)) {
        redisReply *rep = redisCommand(r, "PTTL %s", f->hb_key);
        if (rep == NULL || rep->type != REDIS_REPLY_INTEGER) {
            flood_failed(f, "PTTL of the heartbeat failed");
            freeReplyObject(rep);
            break;
        }
        pthread_mutex_lock(&f->mu);
        if (f->hb_samples++ == 0 || rep->integer < f->hb_min_ms)
            f->hb_min_ms = rep->integer; /* -2: the key is gone, the node taken for dead */
        pthread_mutex_unlock(&f->mu);
        freeReplyObject(rep);
        rc_wait_retry(20);
    }
    redisFree(r);
    return NULL;
}

/* Stops the flood's clients and its heartbeat reader, and waits for them. */
static void flood_stop(flood *f, pthread_t *th, int n)
{
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_mutex_unlock(&f->mu);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static void test_a_node_flooding_redis_with_events_is_not_taken_for_dead(void **state)
{
    ch_cluster *c = *state;
    char session[33], last_id[160];
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    long long node0 = number_of_node(c, 0, session, 10);
    /* (Static: its threads may outlive a failed assertion here, until the nodes stop.) */
    static flood f;
    static pthread_t th[FLOOD_CLIENTS + 1];
    memset(&f, 0, sizeof(f));
    f.port = ch_node_port(c, 0);
    f.redis_port = c->redis_port;
    snprintf(f.hb_key, sizeof(f.hb_key), "mcp:node:%lld", node0);
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    assert_int_equal(pthread_create(&th[0], NULL, flood_heartbeat, &f), 0);
    for (int i = 1; i <= FLOOD_CLIENTS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, flood_client, &f), 0);
    /* Every client of the flood has its events coming before the call begins. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += CALL_MS / 1000;
    pthread_mutex_lock(&f.mu);
    while (f.started < FLOOD_CLIENTS && f.ended == 0 &&
           pthread_cond_timedwait(&f.cv, &f.mu, &until) == 0)
        ;
    int started = f.started;
    pthread_mutex_unlock(&f.mu);
    if (started < FLOOD_CLIENTS) {
        flood_stop(&f, th, FLOOD_CLIENTS + 1);
        fail_msg("%d of %d clients of the flood started: %s", started, FLOOD_CLIENTS, f.err);
    }

    /* A call that runs on node0 through the flood, its client cut after the priming
     * event and following it from node1. */
    long retry = call_and_cut(ch_node_port(c, 0), session, 11, "slow_echo",
                              "{\"text\":\"alive\",\"delay_ms\":8000}", last_id);
    /* As a client of SEP-1699 does: back after the retry interval the event gave. (One
     * that resumed elsewhere at once could find the event not yet in Redis, which takes
     * node0's writes in order, behind the flood's: 400.) */
    rc_wait_retry(retry >= 0 ? retry : 1000);
    hc_conn g;
    int status = hc_mcp_get_open(&g, ch_node_port(c, 1), session, last_id, STEP_MS);
    rc_call call;
    rc_call_init(&call, 11, 0);
    int rc = status == 200 ? rc_call_read(&g, &call, 0, CALL_MS) : -3;
    flood_stop(&f, th, FLOOD_CLIENTS + 1);
    printf("%lld calls of %d notifications on node0 while the call ran; node0's heartbeat had "
           "%lld ms left at least (%lld readings)\n",
           f.calls, FLOOD_EVENTS, f.hb_min_ms, f.hb_samples);
    /* What failed, found before the call's memory goes. */
    char why[900] = "";
    const json_t *err = json_object_get(call.result, "error");
    const char *text = call.result != NULL ? rc_result_text(call.result) : NULL;
    if (f.failures > 0)
        snprintf(why, sizeof(why), "%lld failures in the flood, the first: %.700s", f.failures,
                 f.err);
    else if (f.hb_samples == 0 || f.hb_min_ms <= 0)
        snprintf(why, sizeof(why), "node0's heartbeat lapsed during the flood (%lld ms left)",
                 f.hb_min_ms);
    else if (status != 200)
        snprintf(why, sizeof(why), "the resume on node1 got HTTP %d", status);
    else if (rc != 1)
        snprintf(why, sizeof(why), "the follow on node1 %s (%.600s)",
                 rc == -1 ? "timed out" : "ended", call.err);
    else if (err != NULL)
        snprintf(why, sizeof(why), "node1 answered for the call node0 runs: %.600s",
                 json_string_value(json_object_get(err, "message")));
    else if (text == NULL || strcmp(text, "alive") != 0)
        snprintf(why, sizeof(why), "the call's result was not its text");
    rc_call_free(&call);
    if (status > 0)
        hc_close(&g);
    pthread_cond_destroy(&f.cv);
    pthread_mutex_destroy(&f.mu);
    if (why[0] != '\0')
        fail_msg("%s", why);
}

/* Whether entry e (of an XRANGE reply) is of stream `stream` and carries its end: the
 * end marker (s <stream> e 1), or the last event stored with it (... d <data> e 1). */
static int carries_end(const redisReply *e, long long stream)
{
    const redisReply *sid = entry_field(e, "s");
    return sid != NULL && atoll(sid->str) == stream && entry_field(e, "e") != NULL;
}

/* Whether Redis stream key holds the end of stream `stream`, within timeout_ms. */
static int wait_end(redisContext *r, const char *key, long long stream, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    for (;;) {
        redisReply *x = redisCommand(r, "XRANGE %s - +", key);
        assert_non_null(x);
        int found = 0;
        for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements && !found; i++)
            found = carries_end(x->element[i], stream);
        freeReplyObject(x);
        if (found)
            return 1;
        if (hc_now_ms() >= deadline)
            return 0;
        rc_wait_retry(20);
    }
}

/* Takes a stored stream's end away, as if its owner had died after storing the answer
 * and before storing the end: the session's events are written again without the
 * stream's end marker, and its last event without the end it came with. */
static void take_the_end_away(redisContext *r, const char *key, long long stream)
{
    redisReply *x = redisCommand(r, "XRANGE %s - +", key);
    assert_non_null(x);
    assert_int_equal(x->type, REDIS_REPLY_ARRAY);
    redisReply *d = redisCommand(r, "DEL %s", key);
    assert_non_null(d);
    assert_int_equal(d->integer, 1);
    freeReplyObject(d);
    for (size_t i = 0; i < x->elements; i++) {
        const redisReply *e = x->element[i];
        int ours = carries_end(e, stream);
        if (ours && entry_field(e, "d") == NULL)
            continue; /* the end marker */
        const redisReply *f = e->element[1];
        const char *argv[32];
        size_t argvlen[32];
        int n = 0;
        argv[n] = "XADD", argvlen[n++] = 4;
        argv[n] = key, argvlen[n++] = strlen(key);
        argv[n] = e->element[0]->str, argvlen[n++] = e->element[0]->len;
        for (size_t j = 0; j + 1 < f->elements && n + 2 <= 32; j += 2) {
            if (ours && strcmp(f->element[j]->str, "e") == 0)
                continue; /* the end, with the last event */
            argv[n] = f->element[j]->str, argvlen[n++] = f->element[j]->len;
            argv[n] = f->element[j + 1]->str, argvlen[n++] = f->element[j + 1]->len;
        }
        d = redisCommandArgv(r, n, argv, argvlen);
        assert_non_null(d);
        assert_int_equal(d->type, REDIS_REPLY_STRING);
        freeReplyObject(d);
    }
    freeReplyObject(x);
}

static void test_a_resume_after_the_owner_died_answered_gets_the_answer_once(void **state)
{
    ch_cluster *c = *state;
    char session[33], last_id[160];
    wait_all_serve(c);
    assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session, STEP_MS), 0);
    /* node0 runs the call to its answer; its client, cut after the priming event,
     * has read none of it. */
    call_and_cut(ch_node_port(c, 0), session, 31, "notify", "{\"count\":3}", last_id);
    struct timeval tv = {.tv_sec = 5};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", c->redis_port, tv);
    assert_non_null(r);
    assert_int_equal(r->err, 0);
    /* The events of the session's streams on node0: one Redis stream (their ids' bits
     * from 40 up). */
    long long stream = rc_id_stream(last_id);
    redisReply *k = redisCommand(r, "KEYS *e:%s:%lld", session, stream >> 40);
    assert_non_null(k);
    if (k->type != REDIS_REPLY_ARRAY || k->elements != 1)
        fail_msg("no single stream key in Redis for stream %lld", stream);
    char key[256];
    snprintf(key, sizeof(key), "%s", k->element[0]->str);
    freeReplyObject(k);
    /* node0 dies once it stored the stream's end, which is then taken away: as if it
     * had died after storing the answer, before storing the end (an answer too large
     * to store with the end is stored before it). */
    if (!wait_end(r, key, stream, STEP_MS))
        fail_msg("node0 stored no end of the stream %lld within %d ms", stream, STEP_MS);
    assert_int_equal(ch_kill_node(c, 0), 0);
    take_the_end_away(r, key, stream);
    redisFree(r);

    hc_conn g;
    assert_int_equal(hc_mcp_get_open(&g, ch_node_port(c, 1), session, last_id, STEP_MS), 200);
    rc_call call;
    rc_call_init(&call, 31, 3);
    int rc = rc_call_read(&g, &call, 0, CALL_MS);
    if (rc != 1)
        fail_msg("the resume on node1 %s after %lld notifications (%s)",
                 rc == 0    ? "ended without the answer"
                 : rc == -1 ? "timed out"
                            : "failed",
                 call.next - 1, call.err);
    assert_string_equal(rc_result_text(call.result), "sent 3");
    /* node1 finds node0 gone (its heartbeat ends): the call it was to answer was
     * answered, so nothing more comes, and the stream ends. */
    hc_sse_event ev;
    int e = hc_sse_next_block(&g, &ev, CALL_MS);
    if (e == 1) {
        char text[300];
        snprintf(text, sizeof(text), "%.200s", ev.data ? ev.data : "(none)");
        hc_sse_event_free(&ev);
        fail_msg("an event after the answer: %s", text);
    }
    if (e < 0 || !g.body_done)
        fail_msg("the stream did not end cleanly after the answer (%s)",
                 e < 0 ? "no end within the deadline" : "connection closed");
    rc_call_free(&call);
    hc_close(&g);
    assert_int_equal(ch_restart_node(c, 0), 0);
    wait_all_serve(c);
    printf("node0 died after storing its answer, not the stream's end: the resume on node1 got "
           "the answer once, then the end\n");
}

static void test_a_notification_for_one_session_reaches_its_get_stream_on_another_node(void **state)
{
    ch_cluster *c = *state;
    char session[2][33];
    wait_all_serve(c);
    hc_conn g[2];
    hc_sse_event ev;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(hc_mcp_initialize(ch_node_port(c, 0), session[i], STEP_MS), 0);
        assert_int_equal(hc_mcp_get_open(&g[i], ch_node_port(c, 1), session[i], NULL, STEP_MS),
                         200);
        assert_int_equal(hc_sse_next_block(&g[i], &ev, STEP_MS), 1);
        assert_true(hc_sse_is_priming(&ev));
        hc_sse_event_free(&ev);
    }
    /* Raised by handlers on node2, which holds no stream of either session: the first
     * session's, then the second's. */
    for (int i = 0; i < 2; i++) {
        char args[64];
        snprintf(args, sizeof args, "{\"elicitationId\":\"e-%d\"}", i);
        char *body = rc_call_body(4, "complete_elicitation", args, NULL);
        hc_response r;
        assert_int_equal(hc_mcp_post(ch_node_port(c, 2), session[i], NULL, body, &r, STEP_MS), 0);
        free(body);
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body, "notified"));
        hc_response_free(&r);
    }
    /* Each GET gets its own first (the first session's would have come to the second's
     * before its own, had it gone to every session). */
    for (int i = 0; i < 2; i++) {
        char want[16];
        snprintf(want, sizeof want, "\"e-%d\"", i);
        assert_int_equal(hc_sse_next_block(&g[i], &ev, STEP_MS), 1);
        assert_non_null(ev.data);
        assert_non_null(strstr(ev.data, "notifications/elicitation/complete"));
        if (strstr(ev.data, want) == NULL)
            fail_msg("session %d's GET got %s first", i, ev.data);
        hc_sse_event_free(&ev);
        hc_close(&g[i]);
    }
    printf("a notification for one session raised on node2 reached its GET stream on node1\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_stream_read_through_another_node_is_not_held_back),
        cmocka_unit_test(test_a_resume_on_another_node_answers_before_the_first_event),
        cmocka_unit_test(test_a_resume_replacing_one_still_replaying_gets_the_whole_call),
        cmocka_unit_test(test_a_follower_that_loses_redis_cuts_its_client_who_resumes_the_rest),
        cmocka_unit_test(test_a_resume_elsewhere_stops_at_an_event_its_owner_could_not_store),
        cmocka_unit_test(test_a_notification_reaches_one_get_stream_of_a_session_on_two_nodes),
        cmocka_unit_test(test_a_session_keeps_a_bounded_number_of_streams_in_redis),
        cmocka_unit_test(test_a_stream_past_the_session_bound_is_still_resumed),
        cmocka_unit_test(test_a_delete_on_one_node_ends_the_session_on_every_node_at_once),
        cmocka_unit_test(test_sessions_outlive_a_redis_restart_that_lost_everything),
        cmocka_unit_test(test_a_session_redis_cannot_record_is_refused_with_503),
        cmocka_unit_test_setup_teardown(test_the_deployments_sessions_are_bounded_in_redis,
                                        setup_three_sessions, teardown),
        cmocka_unit_test(test_a_silent_redis_is_given_up_and_found_again),
        cmocka_unit_test(test_a_delete_while_redis_stalls_waits_for_it_or_says_503),
        cmocka_unit_test(test_a_node_flooding_redis_with_events_is_not_taken_for_dead),
        cmocka_unit_test(test_a_resume_after_the_owner_died_answered_gets_the_answer_once),
        cmocka_unit_test(
            test_a_notification_for_one_session_reaches_its_get_stream_on_another_node),
    };
    int failed = cmocka_run_group_tests_name("cluster_sessions", tests, setup, teardown);
    return failed + teardown_failures ? 1 : 0;
}
