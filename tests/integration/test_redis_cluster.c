/* SPDX-License-Identifier: MIT */
/*
 * The cluster store on a real redis-server (store/cluster.h, store/redis/): each test
 * starts its own server on a free loopback port, attaches one or two clusters to a
 * libuv loop, and waits on their callbacks, every wait with a deadline. Checked
 * against the memory store where the event store must behave the same; the Redis
 * side is looked at directly with a blocking hiredis connection where the test
 * needs to see what was written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "harness.h"
#include "redis_host.h"
#include "store/cluster.h"
#include "store/redis/url.h"

#define START_MS 10000
#define WAIT_MS 10000

/* ---- The fixture: a server and a loop ---- */

typedef struct fx {
    rh_server srv;
    uv_loop_t loop;
    uv_timer_t wake;  /* so that every turn of the loop returns soon */
    uv_timer_t later; /* a test's own timer */
    char url[64];
    /* The clusters a test made and has not freed: a failed test leaves them to the
     * teardown, which must still close the loop. */
    mcp__cluster *clusters[8];
} fx;

static void on_wake(uv_timer_t *t)
{
    (void)t;
}

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (f == NULL || rh_start(&f->srv, START_MS) != 0) {
        free(f);
        return -1;
    }
    snprintf(f->url, sizeof f->url, "redis://127.0.0.1:%d", f->srv.port);
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->wake);
    uv_timer_init(&f->loop, &f->later);
    uv_timer_start(&f->wake, on_wake, 5, 5);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    for (size_t i = 0; i < 8; i++)
        mcp__cluster_free(f->clusters[i]);
    uv_close((uv_handle_t *)&f->wake, NULL);
    uv_close((uv_handle_t *)&f->later, NULL);
    /* Whatever the clusters closed (timers, hiredis's poll handles) closes now. */
    uv_run(&f->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&f->loop);
    if (f->srv.proc.pid != 0)
        rh_stop(&f->srv, START_MS);
    free(f);
    if (rc != 0) {
        fprintf(stderr, "uv_loop_close: %s\n", uv_strerror(rc));
        return -1;
    }
    return 0;
}

/* Runs the loop until *counter reaches want or the deadline: 1 when it did. */
static int run_until(fx *f, const int *counter, int want, int ms)
{
    long long deadline = harness_now_ms() + ms;
    while (*counter < want && harness_now_ms() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    return *counter >= want;
}

/* Runs the loop for about ms (only where the test waits for something not to
 * happen, after a later event showed it would have by then). */
static void run_for(fx *f, int ms)
{
    int never = 0;
    run_until(f, &never, 1, ms);
}

/* ---- Clusters ---- */

typedef struct watch {
    int ups, downs;
    mcp__cluster *detach_on_down; /* detached from inside its up(0) callback */
    int probes; /* messages of kind 'p', which the bus test sends itself to start */
    int nmsg;
    char kind[16];
    char session[16][32];
    char data[16][32];
    size_t len[16];
    uint32_t from[16];
} watch;

static void on_message(void *user, const mcp__cluster_msg *m)
{
    watch *w = user;
    if (m->kind == 'p') {
        w->probes++;
        return;
    }
    if (w->nmsg < 16) {
        w->kind[w->nmsg] = m->kind;
        snprintf(w->session[w->nmsg], sizeof w->session[0], "%s", m->session);
        size_t n = m->len < sizeof w->data[0] ? m->len : sizeof w->data[0];
        memcpy(w->data[w->nmsg], m->data, n);
        w->len[w->nmsg] = m->len;
        w->from[w->nmsg] = m->from;
    }
    w->nmsg++;
}

static void on_up(void *user, int up)
{
    watch *w = user;
    if (up)
        w->ups++;
    else
        w->downs++;
    if (!up && w->detach_on_down != NULL)
        mcp__cluster_detach(w->detach_on_down);
}

static mcp__cluster *cluster_with(fx *f, const mcp__cluster_opts *o, watch *w)
{
    mcp__cluster_cbs cbs = {.message = on_message, .up = on_up, .user = w};
    mcp__cluster *c = NULL;
    char why[128] = "";
    assert_int_equal(mcp__cluster_new(o, w != NULL ? &cbs : NULL, &c, why, sizeof why), MCP_OK);
    assert_int_equal(mcp__cluster_attach(c, &f->loop), MCP_OK);
    assert_true(mcp__cluster_up(c));
    assert_true(mcp__cluster_node(c) >= 1 && mcp__cluster_node(c) < (1u << 20));
    for (size_t i = 0; i < 8; i++) {
        if (f->clusters[i] == NULL) {
            f->clusters[i] = c;
            return c;
        }
    }
    fail_msg("too many clusters");
    return NULL;
}

static mcp__cluster *cluster(fx *f, const char *prefix, int heartbeat_ms, watch *w)
{
    mcp__cluster_opts o = {.url = f->url, .prefix = prefix, .heartbeat_ms = heartbeat_ms};
    return cluster_with(f, &o, w);
}

static void cluster_gone(fx *f, mcp__cluster *c)
{
    for (size_t i = 0; i < 8; i++)
        if (f->clusters[i] == c)
            f->clusters[i] = NULL;
    mcp__cluster_detach(c);
    mcp__cluster_free(c);
}

/* A blocking connection of the test's own, to look at what the cluster wrote. */
static redisContext *raw(fx *f)
{
    redisContext *r = redisConnect("127.0.0.1", f->srv.port);
    assert_non_null(r);
    assert_int_equal(r->err, 0);
    return r;
}

static long long raw_int(redisContext *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(r, fmt, ap);
    va_end(ap);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
    long long v = rep->integer;
    freeReplyObject(rep);
    return v;
}

static void raw_ok(redisContext *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(r, fmt, ap);
    va_end(ap);
    assert_non_null(rep);
    if (rep->type != REDIS_REPLY_STATUS)
        fail_msg("expected a status, got type %d: %s", rep->type, rep->str ? rep->str : "");
    freeReplyObject(rep);
}

/* ---- Recording callbacks ---- */

typedef struct rec {
    uint64_t *seq;
    char **data;
    size_t *len;
    size_t n, cap;
    int emitted; /* n, for run_until */
    int starts;  /* a follow's start signals (emit with NULL data) */
    uint64_t start_seq;
    int done;
    int status;
    char *text; /* the follow's done text, NULL when none */
    size_t text_len;
    /* Called after each emit (the follow test appends from there). */
    void (*after_emit)(struct rec *r, uint64_t seq);
    void *ctx;
} rec;

static void rec_free(rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->data[i]);
    free(r->seq);
    free(r->data);
    free(r->len);
    free(r->text);
    memset(r, 0, sizeof(*r));
}

static void rec_emit(void *arg, uint64_t seq, const char *data, size_t len)
{
    rec *r = arg;
    if (data == NULL) {
        /* A follow's start: once, before any event. */
        assert_int_equal(len, 0);
        assert_int_equal(r->n, 0);
        r->starts++;
        r->start_seq = seq;
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->seq = realloc(r->seq, r->cap * sizeof(*r->seq));
        r->data = realloc(r->data, r->cap * sizeof(*r->data));
        r->len = realloc(r->len, r->cap * sizeof(*r->len));
        assert_true(r->seq != NULL && r->data != NULL && r->len != NULL);
    }
    r->seq[r->n] = seq;
    r->data[r->n] = malloc(len + 1);
    assert_non_null(r->data[r->n]);
    memcpy(r->data[r->n], data, len);
    r->data[r->n][len] = '\0';
    r->len[r->n] = len;
    r->n++;
    r->emitted++;
    if (r->after_emit != NULL)
        r->after_emit(r, seq);
}

static void rec_replay_done(void *arg, int status)
{
    rec *r = arg;
    r->done++;
    r->status = status;
}

static void rec_follow_done(void *arg, int status, const char *text, size_t len)
{
    rec *r = arg;
    r->done++;
    r->status = status;
    free(r->text);
    r->text = NULL;
    if (text != NULL) {
        r->text = malloc(len + 1);
        assert_non_null(r->text);
        memcpy(r->text, text, len);
        r->text[len] = '\0';
        r->text_len = len;
    }
}

typedef struct get_res {
    int done;
    int status;
    char text[64];
    size_t len;
} get_res;

static void on_get(void *arg, int status, const char *text, size_t len)
{
    get_res *g = arg;
    g->done++;
    g->status = status;
    g->len = len;
    snprintf(g->text, sizeof g->text, "%.*s", (int)(len < 63 ? len : 63), text ? text : "");
}

static int get_now(fx *f, mcp__cluster *c, const char *id, get_res *g)
{
    memset(g, 0, sizeof(*g));
    mcp__cluster_session_get(c, id, on_get, g);
    assert_true(run_until(f, &g->done, 1, WAIT_MS));
    return g->status;
}

typedef struct alive_res {
    int done;
    int alive;
} alive_res;

static void on_alive(void *arg, int alive)
{
    alive_res *a = arg;
    a->done++;
    a->alive = alive;
}

static int alive_now(fx *f, mcp__cluster *c, uint32_t node)
{
    alive_res a = {0};
    mcp__cluster_node_alive(c, node, on_alive, &a);
    assert_true(run_until(f, &a.done, 1, WAIT_MS));
    return a.alive;
}

/* Waits until the server has done everything c queued before: a command's answer
 * comes after those of everything written before it on the same connection. */
static void settle(fx *f, mcp__cluster *c)
{
    assert_int_equal(alive_now(f, c, mcp__cluster_node(c)), 1);
}

/* Replays (session, stream) after after_seq from store into r and waits for done. */
static int replay_now(fx *f, mcp_event_store *store, const char *session, uint64_t stream,
                      uint64_t after_seq, rec *r)
{
    assert_int_equal(
        mcp_event_store_replay(store, session, stream, after_seq, rec_emit, rec_replay_done, r),
        MCP_OK);
    assert_true(run_until(f, &r->done, 1, WAIT_MS));
    return r->status;
}

/* ---- URL ---- */

static void test_url_parses_host_port_password_user_and_db(void **state)
{
    (void)state;
    mcp__redis_url u;
    assert_int_equal(mcp__redis_url_parse("redis://example.org", &u, NULL, 0), MCP_OK);
    assert_string_equal(u.host, "example.org");
    assert_int_equal(u.port, 6379);
    assert_null(u.password);
    assert_null(u.user);
    assert_int_equal(u.db, 0);
    mcp__redis_url_free(&u);

    assert_int_equal(mcp__redis_url_parse("redis://:s%40cret@10.0.0.1:6380/3", &u, NULL, 0),
                     MCP_OK);
    assert_string_equal(u.host, "10.0.0.1");
    assert_int_equal(u.port, 6380);
    assert_null(u.user);
    assert_string_equal(u.password, "s@cret");
    assert_int_equal(u.db, 3);
    mcp__redis_url_free(&u);

    assert_int_equal(mcp__redis_url_parse("REDIS://alice:p:w@[::1]:7000/", &u, NULL, 0), MCP_OK);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 7000);
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, "p:w");
    assert_int_equal(u.db, 0);
    mcp__redis_url_free(&u);

    const char *bad[] = {
        "",
        "http://host",
        "rediss://host",
        "redis://",
        "redis://:6379",
        "redis://host:0",
        "redis://host:65536",
        "redis://host:12x",
        "redis://host/abc",
        "redis://host/1/2",
        "redis://host?db=1",
        "redis://user@host",
        "redis://:@host",
        "redis://:a%2@host",
        "redis://:a%00b@host",
        "redis://[::1",
        "redis://ho st",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[128] = "";
        if (mcp__redis_url_parse(bad[i], &u, why, sizeof why) != MCP_EINVAL)
            fail_msg("%s parsed", bad[i]);
        assert_true(strlen(why) > 10);
        mcp__redis_url_free(&u);
    }

    /* mcp__cluster_new says why too, and makes nothing. */
    mcp__cluster_opts o = {.url = "redis://host:99999"};
    mcp__cluster *c = (mcp__cluster *)&o;
    char why[128] = "";
    assert_int_equal(mcp__cluster_new(&o, NULL, &c, why, sizeof why), MCP_EINVAL);
    assert_null(c);
    assert_non_null(strstr(why, "port"));
    o.url = NULL;
    assert_int_equal(mcp__cluster_new(&o, NULL, &c, why, sizeof why), MCP_EINVAL);
}

static void test_url_password_user_and_db_reach_the_server(void **state)
{
    fx *f = *state;
    redisContext *r = raw(f);
    raw_ok(r, "ACL SETUSER alice on >alicepw ~* &* +@all");
    raw_ok(r, "CONFIG SET requirepass %s", "sec ret");
    raw_ok(r, "AUTH %s", "sec ret");

    char url[128];
    mcp__cluster_opts o = {.url = url, .prefix = "t:"};
    mcp__cluster *c;
    /* A wrong password, a wrong user, a database the server has not: refused. */
    const char *refused[] = {"redis://:wrong@127.0.0.1:%d", "redis://alice:wrong@127.0.0.1:%d",
                             "redis://:sec%%20ret@127.0.0.1:%d/99", "redis://127.0.0.1:%d"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(url, sizeof url, refused[i], f->srv.port);
        assert_int_equal(mcp__cluster_new(&o, NULL, &c, NULL, 0), MCP_OK);
        assert_int_equal(mcp__cluster_attach(c, &f->loop), MCP_ECONNECT);
        assert_false(mcp__cluster_up(c));
        mcp__cluster_free(c);
    }

    /* The default user's password (percent-encoded) and database 3: the record is
     * written there, through the connections on the loop. */
    snprintf(url, sizeof url, "redis://:sec%%20ret@127.0.0.1:%d/3", f->srv.port);
    assert_int_equal(mcp__cluster_new(&o, NULL, &c, NULL, 0), MCP_OK);
    assert_int_equal(mcp__cluster_attach(c, &f->loop), MCP_OK);
    assert_int_equal(mcp__cluster_session_put(c, "s1", "in db 3", 7, 60000, 0, NULL, NULL), MCP_OK);
    get_res g;
    assert_int_equal(get_now(f, c, "s1", &g), MCP_OK);
    assert_string_equal(g.text, "in db 3");
    cluster_gone(f, c);
    raw_ok(r, "SELECT 3");
    assert_int_equal(raw_int(r, "EXISTS t:s:s1"), 1);
    raw_ok(r, "SELECT 0");
    assert_int_equal(raw_int(r, "EXISTS t:s:s1"), 0);

    /* A named user (AUTH user password). */
    snprintf(url, sizeof url, "redis://alice:alicepw@127.0.0.1:%d", f->srv.port);
    assert_int_equal(mcp__cluster_new(&o, NULL, &c, NULL, 0), MCP_OK);
    assert_int_equal(mcp__cluster_attach(c, &f->loop), MCP_OK);
    assert_int_equal(mcp__cluster_session_put(c, "s2", "alice", 5, 60000, 0, NULL, NULL), MCP_OK);
    assert_int_equal(get_now(f, c, "s2", &g), MCP_OK);
    assert_string_equal(g.text, "alice");
    cluster_gone(f, c);
    redisFree(r);

    /* Nothing listens on port 1 of the loopback. */
    o.url = "redis://127.0.0.1:1";
    assert_int_equal(mcp__cluster_new(&o, NULL, &c, NULL, 0), MCP_OK);
    assert_int_equal(mcp__cluster_attach(c, &f->loop), MCP_ECONNECT);
    mcp__cluster_free(c);
}

/* ---- Node numbers and heartbeats ---- */

static void test_node_numbers_are_unique_and_alive(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "n:", 0, NULL);
    mcp__cluster *b = cluster(f, "n:", 0, NULL);
    assert_int_not_equal(mcp__cluster_node(a), mcp__cluster_node(b));
    assert_int_equal(alive_now(f, a, mcp__cluster_node(b)), 1);
    assert_int_equal(alive_now(f, b, mcp__cluster_node(a)), 1);
    assert_int_equal(alive_now(f, a, 777777), 0);

    /* Attached again, a node takes a new number. */
    uint32_t old = mcp__cluster_node(b);
    mcp__cluster_detach(b);
    run_for(f, 20);
    assert_int_equal(mcp__cluster_attach(b, &f->loop), MCP_OK);
    assert_int_not_equal(mcp__cluster_node(b), old);
    assert_int_not_equal(mcp__cluster_node(b), mcp__cluster_node(a));
    /* A second attach while attached is refused. */
    assert_int_equal(mcp__cluster_attach(b, &f->loop), MCP_ESTATE);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* ---- Registry ---- */

typedef struct status_res {
    int done, status;
} status_res;

static void on_status(void *arg, int status)
{
    status_res *r = arg;
    r->done++;
    r->status = status;
}

static void test_registry_put_get_touch_delete_and_expiry(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "r:", 0, NULL);
    mcp__cluster *b = cluster(f, "r:", 0, NULL);
    get_res g;
    assert_int_equal(get_now(f, b, "sess-1", &g), MCP_ENOENT);
    assert_int_equal(mcp__cluster_session_put(a, "sess-1", "v\0one", 5, 60000, 0, NULL, NULL),
                     MCP_OK);
    settle(f, a); /* writes are not waited for: b reads after a's are done */
    assert_int_equal(get_now(f, b, "sess-1", &g), MCP_OK);
    assert_int_equal(g.len, 5);
    assert_string_equal(g.text, "v");
    assert_int_equal(mcp__cluster_session_put(a, "sess-1", "two", 3, 60000, 0, NULL, NULL), MCP_OK);
    assert_int_equal(get_now(f, a, "sess-1", &g), MCP_OK);
    assert_string_equal(g.text, "two");
    assert_int_equal(mcp__cluster_session_put(a, "sess-1", "x", 1, 0, 0, NULL, NULL), MCP_EINVAL);

    /* touch extends the time to live. */
    redisContext *r = raw(f);
    assert_int_equal(mcp__cluster_session_put(a, "sess-2", "short", 5, 5000, 0, NULL, NULL),
                     MCP_OK);
    mcp__cluster_session_touch(a, "sess-2", 600000, NULL, NULL);
    assert_int_equal(get_now(f, a, "sess-2", &g), MCP_OK);
    assert_true(raw_int(r, "PTTL r:s:sess-2") > 500000);

    /* A record whose time to live ends is gone: asked until it is, with a deadline. */
    assert_int_equal(mcp__cluster_session_put(a, "sess-3", "brief", 5, 50, 0, NULL, NULL), MCP_OK);
    settle(f, a);
    long long deadline = harness_now_ms() + WAIT_MS;
    while (get_now(f, b, "sess-3", &g) == MCP_OK && harness_now_ms() < deadline)
        run_for(f, 10);
    assert_int_equal(g.status, MCP_ENOENT);

    /* delete takes the record and the session's events. */
    mcp_event_store *store = mcp__cluster_event_store(a);
    mcp__cluster_open_next(a, "open", 4);
    assert_int_equal(mcp_event_store_append(store, "sess-1", 4, 1, "e1", 2), MCP_OK);
    assert_int_equal(mcp_event_store_append(store, "sess-1", 6, 2, "e2", 2), MCP_OK);
    rec rp = {0};
    assert_int_equal(replay_now(f, store, "sess-1", 4, 1, &rp), MCP_OK);
    rec_free(&rp);
    /* One Redis stream holds both streams' events (and the open text), one set its key. */
    assert_int_equal(raw_int(r, "EXISTS r:e:sess-1:0 r:k:sess-1"), 2);
    assert_int_equal(raw_int(r, "XLEN r:e:sess-1:0"), 2);
    assert_int_equal(mcp__cluster_session_delete(a, "sess-1", 60000), MCP_OK);
    settle(f, a);
    assert_int_equal(get_now(f, b, "sess-1", &g), MCP_ENOENT);
    assert_int_equal(replay_now(f, store, "sess-1", 4, 1, &rp), MCP_ENOENT);
    rec_free(&rp);
    assert_int_equal(raw_int(r, "EXISTS r:e:sess-1:0 r:k:sess-1"), 0);
    assert_int_equal(get_now(f, b, "sess-2", &g), MCP_OK);

    /* An ended session's record cannot be written again, by any node, as long as it
     * would have lived; a touch says it ended. */
    assert_true(raw_int(r, "PTTL r:x:sess-1") > 50000);
    status_res st = {0};
    assert_int_equal(mcp__cluster_session_put(b, "sess-1", "back", 4, 60000, 0, on_status, &st),
                     MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_ECANCELED);
    assert_int_equal(get_now(f, b, "sess-1", &g), MCP_ENOENT);
    st = (status_res){0};
    assert_int_equal(mcp__cluster_session_touch(b, "sess-1", 60000, on_status, &st), MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_ECANCELED);
    /* A touch of a live record extends it; of a missing one (expired, or lost with the
     * server's data) says so. */
    st = (status_res){0};
    assert_int_equal(mcp__cluster_session_touch(b, "sess-2", 600000, on_status, &st), MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_OK);
    st = (status_res){0};
    assert_int_equal(mcp__cluster_session_touch(b, "sess-9", 60000, on_status, &st), MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_ENOENT);
    /* Written only where there is none: the first of two such writes wins. */
    st = (status_res){0};
    assert_int_equal(mcp__cluster_session_put(a, "sess-9", "first", 5, 60000,
                                              MCP__CLUSTER_PUT_MISSING, on_status, &st),
                     MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_OK);
    st = (status_res){0};
    assert_int_equal(mcp__cluster_session_put(b, "sess-9", "second", 6, 60000,
                                              MCP__CLUSTER_PUT_MISSING, on_status, &st),
                     MCP_OK);
    assert_true(run_until(f, &st.done, 1, WAIT_MS));
    assert_int_equal(st.status, MCP_EEXIST);
    assert_int_equal(get_now(f, b, "sess-9", &g), MCP_OK);
    assert_string_equal(g.text, "first");

    /* The store's drop_session takes the events and leaves the record. */
    assert_int_equal(mcp_event_store_append(store, "sess-2", 2, 1, "e1", 2), MCP_OK);
    mcp_event_store_drop_session(store, "sess-2");
    assert_int_equal(replay_now(f, store, "sess-2", 2, 1, &rp), MCP_ENOENT);
    rec_free(&rp);
    assert_int_equal(get_now(f, b, "sess-2", &g), MCP_OK);
    redisFree(r);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* ---- Event store ---- */

typedef struct ev {
    const char *session;
    uint64_t stream, seq;
    const char *data;
    size_t len;
} ev;

static void assert_same_replay(fx *f, mcp_event_store *mem, mcp_event_store *red,
                               const char *session, uint64_t stream, uint64_t after)
{
    rec m = {0}, r = {0};
    int ms = replay_now(f, mem, session, stream, after, &m);
    int rs = replay_now(f, red, session, stream, after, &r);
    if (ms != rs)
        fail_msg("%s/%llu after %llu: memory %d, redis %d", session, (unsigned long long)stream,
                 (unsigned long long)after, ms, rs);
    assert_int_equal(m.n, r.n);
    for (size_t i = 0; i < m.n; i++) {
        assert_int_equal(m.seq[i], r.seq[i]);
        assert_int_equal(m.len[i], r.len[i]);
        assert_memory_equal(m.data[i], r.data[i], m.len[i]);
    }
    rec_free(&m);
    rec_free(&r);
}

static void test_event_store_replays_like_the_memory_store(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "ev:", 0, NULL);
    mcp__cluster *b = cluster(f, "ev:", 0, NULL);
    mcp_event_store *mem = mcp_memory_store_new(NULL);
    assert_non_null(mem);
    /* Markers (empty), binary data with NUL bytes, two streams of a session and
     * another session. */
    const ev evs[] = {
        {"s", 7, 1, "a", 1},         {"s", 7, 2, "", 0},     {"s", 7, 3, "c\0d", 3},
        {"s", 8, 4, "other", 5},     {"s", 7, 5, "\0\0", 2}, {"s", 7, 6, "", 0},
        {"t", 7, 1, "session t", 9}, {"s", 7, 9, "nine", 4},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) {
        const ev *e = &evs[i];
        assert_int_equal(
            mcp_event_store_append(mem, e->session, e->stream, e->seq, e->data, e->len), MCP_OK);
        assert_int_equal(mcp_event_store_append(mcp__cluster_event_store(a), e->session, e->stream,
                                                e->seq, e->data, e->len),
                         MCP_OK);
    }
    /* A seq not above the stream's last is not kept by either (the memory store
     * says so at once, Redis refuses the XADD). */
    assert_int_equal(mcp_event_store_append(mem, "s", 7, 3, "again", 5), MCP_EINVAL);
    assert_int_equal(mcp_event_store_append(mcp__cluster_event_store(a), "s", 7, 3, "again", 5),
                     MCP_OK);
    /* seq 0 cannot be a Redis stream id. */
    assert_int_equal(mcp_event_store_append(mcp__cluster_event_store(a), "s", 7, 0, "zero", 4),
                     MCP_EINVAL);

    /* Replayed by the other node: every after_seq, held or not, marker or not. */
    settle(f, a);
    uint64_t afters[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1000};
    for (size_t i = 0; i < sizeof afters / sizeof afters[0]; i++) {
        assert_same_replay(f, mem, mcp__cluster_event_store(b), "s", 7, afters[i]);
        assert_same_replay(f, mem, mcp__cluster_event_store(b), "s", 8, afters[i]);
        assert_same_replay(f, mem, mcp__cluster_event_store(b), "t", 7, afters[i]);
        assert_same_replay(f, mem, mcp__cluster_event_store(b), "nobody", 7, afters[i]);
    }
    mcp_event_store_free(mem);

    /* The store's attach and detach are no-ops: the cluster's do the work. */
    assert_int_equal(mcp_event_store_attach(mcp__cluster_event_store(a), &f->loop), MCP_OK);
    mcp_event_store_detach(mcp__cluster_event_store(a), &f->loop);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

static void test_event_store_bounds_events_and_sizes(void **state)
{
    fx *f = *state;
    mcp__cluster_opts o = {
        .url = f->url, .prefix = "mx:", .max_events = 100, .max_event_bytes = 10};
    mcp__cluster *a = cluster_with(f, &o, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    char data[16];
    for (uint64_t seq = 1; seq <= 1000; seq++) {
        int n = snprintf(data, sizeof data, "e%llu", (unsigned long long)seq);
        assert_int_equal(mcp_event_store_append(store, "s", 1, seq, data, (size_t)n), MCP_OK);
    }
    /* The oldest went first; MAXLEN ~ trims whole nodes of 100 entries. */
    rec r = {0};
    assert_int_equal(replay_now(f, store, "s", 1, 1, &r), MCP_ENOENT);
    rec_free(&r);
    assert_int_equal(replay_now(f, store, "s", 1, 990, &r), MCP_OK);
    assert_int_equal(r.n, 10);
    assert_int_equal(r.seq[0], 991);
    assert_string_equal(r.data[9], "e1000");
    rec_free(&r);
    redisContext *raw_c = raw(f);
    long long len = raw_int(raw_c, "XLEN mx:e:s:0");
    assert_true(len >= 100 && len < 200);

    /* An event over max_event_bytes is not kept: what follows it cannot be resumed
     * after it, and a replay passes over it. */
    assert_int_equal(mcp_event_store_append(store, "s", 1, 1001, "eleven byte", 11), MCP_OK);
    assert_int_equal(mcp_event_store_append(store, "s", 1, 1002, "ten bytes!", 10), MCP_OK);
    assert_int_equal(replay_now(f, store, "s", 1, 1001, &r), MCP_ENOENT);
    rec_free(&r);
    assert_int_equal(replay_now(f, store, "s", 1, 1000, &r), MCP_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.seq[0], 1002);
    rec_free(&r);

    /* The events live at least ttl (300 s) after the stream's last append: the stream
     * was given twice that by its first append here, a few seconds ago at most. */
    long long pttl = raw_int(raw_c, "PTTL mx:e:s:0");
    assert_true(pttl > 300000 && pttl <= 600000);
    redisFree(raw_c);
    cluster_gone(f, a);
}

static void test_event_store_replays_ten_thousand_events_in_pages(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "big:", 0, NULL);
    /* b's heartbeat does not tick during the replay: its commands are the pages. */
    mcp__cluster *b = cluster(f, "big:", 60000, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    mcp__cluster_stats s0, s1;
    char data[32];
    /* One append to make the stream (its first also gives it and its session's set
     * their time to live: four more commands). */
    assert_int_equal(mcp_event_store_append(store, "s", 2, 1, "first", 5), MCP_OK);
    mcp__cluster_stats_get(a, &s0);
    for (uint64_t seq = 2; seq <= 10000; seq++) {
        int n = snprintf(data, sizeof data, "event %llu", (unsigned long long)seq);
        assert_int_equal(mcp_event_store_append(store, "s", 2, seq, data, (size_t)n), MCP_OK);
    }
    mcp__cluster_stats_get(a, &s1);
    uint64_t per_append = (s1.commands - s0.commands) / 9999;
    assert_int_equal(per_append, 2);                  /* XADD NOMKSTREAM and PUBLISH */
    assert_int_equal(s1.round_trips, s0.round_trips); /* appends wait for nothing */
    settle(f, a);

    mcp__cluster_stats_get(b, &s0);
    rec r = {0};
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "s", 2, 1, &r), MCP_OK);
    mcp__cluster_stats_get(b, &s1);
    assert_int_equal(r.n, 9999);
    for (size_t i = 0; i < r.n; i++) {
        snprintf(data, sizeof data, "event %llu", (unsigned long long)(i + 2));
        assert_int_equal(r.seq[i], i + 2);
        assert_string_equal(r.data[i], data);
    }
    uint64_t pages = s1.round_trips - s0.round_trips;
    printf("[ redis    ] %llu commands per append; a replay of 9,999 events: %llu pages, %llu "
           "commands\n",
           (unsigned long long)per_append, (unsigned long long)pages,
           (unsigned long long)(s1.commands - s0.commands));
    /* Pages, not one reply: more than 10,000 / 512, one command each. */
    assert_true(pages >= 10000 / 512 && pages < 100);
    assert_int_equal(s1.commands - s0.commands, pages);
    rec_free(&r);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* ---- Follow ---- */

typedef struct seam {
    fx *f;
    mcp__cluster *a;
    int later_fired;
} seam;

/* The open text append_range gives the events it appends (as the transport gives each
 * event of a POST stream its request ids), once: NULL after. */
static const char *range_open;

static void append_range(mcp__cluster *c, const char *session, uint64_t stream, uint64_t from,
                         uint64_t to)
{
    char data[32];
    const char *open = range_open;
    range_open = NULL;
    for (uint64_t seq = from; seq <= to; seq++) {
        if (open != NULL)
            mcp__cluster_open_next(c, open, strlen(open));
        /* Every seventh event is a marker: never emitted, still a seq. */
        int n = seq % 7 == 0 ? 0 : snprintf(data, sizeof data, "ev %llu", (unsigned long long)seq);
        assert_int_equal(mcp_event_store_append(mcp__cluster_event_store(c), session, stream, seq,
                                                data, (size_t)n),
                         MCP_OK);
    }
}

static void on_later(uv_timer_t *t)
{
    seam *s = t->data;
    s->later_fired = 1;
    /* After the replay: live only. */
    append_range(s->a, "fs", 3, 2301, 2500);
    assert_int_equal(mcp__cluster_stream_end(s->a, "fs", 3, 2500), MCP_OK);
}

static void seam_after_emit(rec *r, uint64_t seq)
{
    seam *s = r->ctx;
    if (seq == 100) /* during the replay */
        append_range(s->a, "fs", 3, 2051, 2300);
    if (seq == 2300)
        uv_timer_start(&s->f->later, on_later, 20, 0);
}

static void test_follow_emits_every_event_once_across_the_seam(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "fo:", 0, NULL);
    mcp__cluster *b = cluster(f, "fo:", 0, NULL);
    seam s = {.f = f, .a = a};
    f->later.data = &s;
    range_open = "the request 7";
    append_range(a, "fs", 3, 1, 2000); /* before */
    settle(f, a);
    rec r = {.after_emit = seam_after_emit, .ctx = &s};
    mcp__cluster_follow *fl = mcp__cluster_follow_start(b, "fs", 3, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &r);
    assert_non_null(fl);
    append_range(a, "fs", 3, 2001, 2050); /* while the follow subscribes */
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_true(s.later_fired);
    assert_int_equal(r.status, MCP_OK);
    assert_null(r.text);
    assert_int_equal(r.starts, 1);
    assert_int_equal(r.start_seq, 1);
    /* Every event after 1 but the markers, once, in order. */
    size_t i = 0;
    char want[32];
    for (uint64_t seq = 2; seq <= 2500; seq++) {
        if (seq % 7 == 0)
            continue;
        if (i >= r.n)
            fail_msg("event %llu never came", (unsigned long long)seq);
        if (r.seq[i] != seq)
            fail_msg("event %zu is %llu, not %llu", i, (unsigned long long)r.seq[i],
                     (unsigned long long)seq);
        snprintf(want, sizeof want, "ev %llu", (unsigned long long)seq);
        assert_string_equal(r.data[i], want);
        i++;
    }
    assert_int_equal(r.n, i);
    rec_free(&r);

    /* The ended stream followed again: its stored events, then done at the stored
     * end marker. */
    fl = mcp__cluster_follow_start(b, "fs", 3, mcp__cluster_node(a), 2490, rec_emit,
                                   rec_follow_done, &r);
    assert_non_null(fl);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 8); /* 2491..2500 but the markers 2492 and 2499 */
    rec_free(&r);

    /* An event the stream does not hold (and 0, which none is). */
    uint64_t unknown[] = {0, 7000, 2501};
    for (size_t k = 0; k < 3; k++) {
        fl = mcp__cluster_follow_start(b, "fs", 3, mcp__cluster_node(a), unknown[k], rec_emit,
                                       rec_follow_done, &r);
        assert_non_null(fl);
        assert_true(run_until(f, &r.done, 1, WAIT_MS));
        assert_int_equal(r.status, MCP_ENOENT);
        assert_int_equal(r.n, 0);
        assert_int_equal(r.starts, 0);
        rec_free(&r);
    }
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* A stream's last event (its answer) is stored and published with the end, one entry
 * and one message: a follower hears it live and ends, a later one replays it and ends,
 * and no end marker is stored. An answer too large to store is not (its end marker
 * then goes as before). A stream another node deleted is not made again. */
static void test_the_last_event_carries_the_end(void **state)
{
    fx *f = *state;
    mcp__cluster_opts o = {.url = f->url, .prefix = "le:", .max_event_bytes = 64};
    mcp__cluster *a = cluster_with(f, &o, NULL);
    mcp__cluster *b = cluster(f, "le:", 0, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    mcp__cluster_open_next(a, "the request 9", 13);
    assert_int_equal(mcp_event_store_append(store, "ls", 4, 1, "", 0), MCP_OK); /* priming */
    settle(f, a);
    rec r = {0};
    mcp__cluster_follow *fl = mcp__cluster_follow_start(b, "ls", 4, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &r);
    assert_non_null(fl);
    assert_true(run_until(f, &r.starts, 1, WAIT_MS));
    mcp__cluster_stats s0, s1;
    mcp__cluster_stats_get(a, &s0);
    mcp__cluster_final_next(a);
    assert_int_equal(mcp_event_store_append(store, "ls", 4, 2, "the answer", 10), MCP_OK);
    assert_int_equal(mcp__cluster_final_taken(a), 1);
    assert_int_equal(mcp__cluster_final_taken(a), 0); /* read once */
    mcp__cluster_stats_get(a, &s1);
    assert_int_equal(s1.commands - s0.commands, 2); /* XADD, PUBLISH */
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.data[0], "the answer");
    rec_free(&r);

    /* Followed again once ended, after the priming event: the answer, replayed, and the
     * end; after the last event itself: the end, at once, and nothing more. */
    for (uint64_t after = 1; after <= 2; after++) {
        memset(&r, 0, sizeof r);
        fl = mcp__cluster_follow_start(b, "ls", 4, mcp__cluster_node(a), after, rec_emit,
                                       rec_follow_done, &r);
        assert_non_null(fl);
        assert_true(run_until(f, &r.done, 1, WAIT_MS));
        assert_int_equal(r.status, MCP_OK);
        assert_int_equal(r.n, after == 1 ? 1 : 0);
        if (after == 1)
            assert_string_equal(r.data[0], "the answer");
        rec_free(&r);
    }
    redisContext *raw_c = raw(f);
    assert_int_equal(raw_int(raw_c, "XLEN le:e:ls:0"), 2);

    /* Too large to store: not stored with the end, so the caller ends it with a marker. */
    char big[65];
    memset(big, 'x', sizeof big);
    mcp__cluster_final_next(a);
    assert_int_equal(mcp_event_store_append(store, "ls", 5, 3, big, sizeof big), MCP_OK);
    assert_int_equal(mcp__cluster_final_taken(a), 0);
    /* Asked for one append only: the next is not the last. */
    mcp__cluster_final_next(a);
    assert_int_equal(mcp_event_store_append(store, "ls", 5, 0, "x", 1), MCP_EINVAL);
    assert_int_equal(mcp_event_store_append(store, "ls", 5, 4, "x", 1), MCP_OK);
    assert_int_equal(mcp__cluster_final_taken(a), 0);

    /* Deleted by another node (with its session), or evicted: the next append does not
     * make it again without a time to live; its nil answer tells this node, whose next
     * append makes the stream again, with its time to live. */
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "DEL le:e:ls:0"), 1);
    assert_int_equal(mcp_event_store_append(store, "ls", 4, 5, "late", 4), MCP_OK);
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "EXISTS le:e:ls:0"), 0);
    assert_int_equal(mcp_event_store_append(store, "ls", 4, 6, "later", 5), MCP_OK);
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "XLEN le:e:ls:0"), 1);
    assert_true(raw_int(raw_c, "PTTL le:e:ls:0") > 0);
    redisFree(raw_c);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* While appends are deferred (as the transport defers them), an empty event waits for
 * the next append of its session: a request answered in the turn that opened its stream
 * is one entry (its priming event, open text, answer and end) and two commands, and
 * every place the client may resume after is still found. */
static void test_an_empty_event_is_stored_with_the_next_one(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "he:", 0, NULL);
    mcp__cluster *b = cluster(f, "he:", 0, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    mcp__cluster_defer_flush(a, 1);
    /* Two requests, each in one turn: the first makes the Redis stream. */
    mcp__cluster_stats s0, s1;
    for (uint64_t i = 0; i < 2; i++) {
        uint64_t stream = 4 + 2 * i, seq = 1 + 2 * i;
        char open[16], answer[16];
        snprintf(open, sizeof open, "request %llu", (unsigned long long)stream);
        snprintf(answer, sizeof answer, "answer %llu", (unsigned long long)stream);
        mcp__cluster_stats_get(a, &s0);
        mcp__cluster_open_next(a, open, strlen(open));
        assert_int_equal(mcp_event_store_append(store, "m", stream, seq, "", 0), MCP_OK);
        mcp__cluster_open_next(a, open, strlen(open));
        mcp__cluster_final_next(a);
        assert_int_equal(mcp_event_store_append(store, "m", stream, seq + 1, answer, 8), MCP_OK);
        assert_int_equal(mcp__cluster_final_taken(a), 1);
        mcp__cluster_flush(a);
        mcp__cluster_stats_get(a, &s1);
        if (i == 1)
            assert_int_equal(s1.commands - s0.commands, 2); /* XADD, PUBLISH */
    }
    settle(f, a);
    redisContext *raw_c = raw(f);
    assert_int_equal(raw_int(raw_c, "XLEN he:e:m:0"), 2);
    /* After the priming event: the answer; after the answer: nothing, and the end. */
    rec r = {0};
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "m", 6, 3, &r), MCP_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.seq[0], 4);
    assert_string_equal(r.data[0], "answer 6");
    rec_free(&r);
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "m", 6, 4, &r), MCP_OK);
    assert_int_equal(r.n, 0);
    rec_free(&r);
    assert_non_null(mcp__cluster_follow_start(b, "m", 4, mcp__cluster_node(a), 1, rec_emit,
                                              rec_follow_done, &r));
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.data[0], "answer 4");
    rec_free(&r);
    /* Of another stream, and not the one it came with: no event of the stream. */
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "m", 6, 1, &r), MCP_ENOENT);
    rec_free(&r);

    /* Held, then another stream's event of the session: written first, alone. Held,
     * then nothing: written when the loop turn's I/O is done. */
    assert_int_equal(mcp_event_store_append(store, "m", 8, 5, "", 0), MCP_OK);
    assert_int_equal(mcp_event_store_append(store, "m", 10, 6, "other", 5), MCP_OK);
    assert_int_equal(mcp_event_store_append(store, "m", 12, 7, "", 0), MCP_OK);
    assert_int_equal(raw_int(raw_c, "XLEN he:e:m:0"), 2);
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "XLEN he:e:m:0"), 5);
    for (uint64_t k = 0; k < 2; k++) {
        assert_int_equal(
            replay_now(f, mcp__cluster_event_store(b), "m", k == 0 ? 8 : 12, k == 0 ? 5 : 7, &r),
            MCP_OK);
        assert_int_equal(r.n, 0);
        rec_free(&r);
    }

    /* The open text came with the events: a follower whose owner is gone finds it there
     * and gives it back, after the priming event as after the progress. */
    mcp__cluster_open_next(a, "request 14", 10);
    assert_int_equal(mcp_event_store_append(store, "m", 14, 8, "", 0), MCP_OK);
    mcp__cluster_open_next(a, "request 14", 10);
    assert_int_equal(mcp_event_store_append(store, "m", 14, 9, "progress", 8), MCP_OK);
    mcp__cluster_flush(a);
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "XLEN he:e:m:0"), 6);
    assert_non_null(mcp__cluster_follow_start(b, "m", 14, mcp__cluster_node(a) + 1000, 8, rec_emit,
                                              rec_follow_done, &r));
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ECLOSED);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.data[0], "progress");
    assert_non_null(r.text);
    assert_string_equal(r.text, "request 14");
    rec_free(&r);
    /* Resumed after the progress. */
    assert_non_null(mcp__cluster_follow_start(b, "m", 14, mcp__cluster_node(a) + 1000, 9, rec_emit,
                                              rec_follow_done, &r));
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ECLOSED);
    assert_int_equal(r.n, 0);
    assert_non_null(r.text);
    assert_string_equal(r.text, "request 14");
    rec_free(&r);

    /* Trimmed below a seq: the events of every stream before it go. */
    assert_int_equal(mcp__cluster_events_trim(a, "m", 14, 6), MCP_OK);
    settle(f, a);
    assert_int_equal(raw_int(raw_c, "XLEN he:e:m:0"), 3); /* 6, 7, and 9 (with 8) */
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "m", 8, 5, &r), MCP_ENOENT);
    rec_free(&r);
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "m", 14, 8, &r), MCP_OK);
    assert_int_equal(r.n, 1);
    rec_free(&r);
    redisFree(raw_c);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

static void unfollow_in_emit(rec *r, uint64_t seq)
{
    (void)seq;
    mcp__cluster_unfollow(r->ctx);
}

static void test_follow_shares_channels_and_unfollows(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "sh:", 0, NULL);
    mcp__cluster *b = cluster(f, "sh:", 0, NULL);
    uint32_t owner = mcp__cluster_node(a);
    append_range(a, "ss", 5, 1, 10);
    settle(f, a);
    rec r1 = {0}, r2 = {0}, r3 = {0};
    mcp__cluster_follow *f1 =
        mcp__cluster_follow_start(b, "ss", 5, owner, 1, rec_emit, rec_follow_done, &r1);
    mcp__cluster_follow *f2 =
        mcp__cluster_follow_start(b, "ss", 5, owner, 5, rec_emit, rec_follow_done, &r2);
    assert_non_null(f1);
    assert_non_null(f2);
    int n1 = 8; /* 2..10 but the marker 7 */
    assert_true(run_until(f, &r1.emitted, n1, WAIT_MS));
    assert_true(run_until(f, &r2.emitted, 4, WAIT_MS)); /* 6, 8, 9, 10 */
    /* One leaves; the other still hears the channel. */
    mcp__cluster_unfollow(f1);
    append_range(a, "ss", 5, 11, 12);
    assert_true(run_until(f, &r2.emitted, 6, WAIT_MS));
    /* Everyone leaves; one comes and goes before its SUBSCRIBE is confirmed, and
     * another comes while that one's UNSUBSCRIBE is on its way: it waits for the
     * confirmation of its own SUBSCRIBE, not of the first. */
    mcp__cluster_unfollow(f2);
    rec r0 = {0};
    mcp__cluster_follow *f0 =
        mcp__cluster_follow_start(b, "ss", 5, owner, 12, rec_emit, rec_follow_done, &r0);
    assert_non_null(f0);
    mcp__cluster_unfollow(f0);
    mcp__cluster_follow *f3 =
        mcp__cluster_follow_start(b, "ss", 5, owner, 12, rec_emit, rec_follow_done, &r3);
    assert_non_null(f3);
    append_range(a, "ss", 5, 13, 13);
    assert_true(run_until(f, &r3.emitted, 1, WAIT_MS));
    assert_int_equal(r3.seq[0], 13);
    append_range(a, "ss", 5, 15, 15);
    assert_int_equal(mcp__cluster_stream_end(a, "ss", 5, 15), MCP_OK);
    assert_true(run_until(f, &r3.done, 1, WAIT_MS));
    assert_int_equal(r3.status, MCP_OK);
    assert_int_equal(r3.n, 2);
    assert_int_equal(r0.done + r0.n + r1.done + r2.done, 0);
    assert_int_equal(r1.n, (size_t)n1);
    assert_int_equal(r2.n, 6);

    /* A follower unfollowed from its own emit. */
    rec r4 = {.after_emit = unfollow_in_emit};
    mcp__cluster_follow *f4 =
        mcp__cluster_follow_start(b, "ss", 5, owner, 1, rec_emit, rec_follow_done, &r4);
    assert_non_null(f4);
    r4.ctx = f4;
    assert_true(run_until(f, &r4.emitted, 1, WAIT_MS));
    run_for(f, 50);
    assert_int_equal(r4.n, 1);
    assert_int_equal(r4.done, 0);

    /* Detach ends a follower with MCP_ECONNECT (not the owner's end: the stream may go
     * on) before it returns. */
    rec r5 = {0};
    append_range(a, "ss", 6, 16, 16); /* a session's seqs grow across its streams */
    settle(f, a);
    mcp__cluster_follow *f5 =
        mcp__cluster_follow_start(b, "ss", 6, owner, 16, rec_emit, rec_follow_done, &r5);
    assert_non_null(f5);
    append_range(a, "ss", 6, 17, 17);
    assert_true(run_until(f, &r5.emitted, 1, WAIT_MS));
    get_res g = {0};
    mcp__cluster_session_get(b, "whatever", on_get, &g);
    cluster_gone(f, b);
    assert_int_equal(r5.done, 1);
    assert_int_equal(r5.status, MCP_ECONNECT);
    assert_int_equal(g.done, 1);
    assert_int_equal(g.status, MCP_ECLOSED);
    rec_free(&r0);
    rec_free(&r1);
    rec_free(&r2);
    rec_free(&r3);
    rec_free(&r4);
    rec_free(&r5);
    cluster_gone(f, a);
}

static void test_follow_refuses_to_go_past_a_lost_event(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "gp:", 0, NULL);
    mcp__cluster *b = cluster(f, "gp:", 0, NULL);
    uint32_t owner = mcp__cluster_node(a);
    /* Events 1..3, event 4 lost (the owner could not store it), then 5 and 6. */
    append_range(a, "g", 2, 1, 3);
    assert_int_equal(mcp__cluster_stream_gap(a, "g", 2, 4), MCP_OK);
    append_range(a, "g", 2, 5, 6);
    settle(f, a);
    /* From before the gap: what comes before it, then MCP_ENOENT. */
    rec r = {0};
    assert_non_null(mcp__cluster_follow_start(b, "g", 2, owner, 1, rec_emit, rec_follow_done, &r));
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ENOENT);
    assert_int_equal(r.starts, 1);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.seq[1], 3);
    rec_free(&r);
    /* Right before it: refused at once, nothing begun. */
    assert_non_null(mcp__cluster_follow_start(b, "g", 2, owner, 3, rec_emit, rec_follow_done, &r));
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ENOENT);
    assert_int_equal(r.starts, 0);
    rec_free(&r);
    /* From after it: followed as usual, to the end. */
    assert_non_null(mcp__cluster_follow_start(b, "g", 2, owner, 5, rec_emit, rec_follow_done, &r));
    assert_true(run_until(f, &r.emitted, 1, WAIT_MS));
    assert_int_equal(mcp__cluster_stream_end(a, "g", 2, 6), MCP_OK);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.seq[0], 6);
    rec_free(&r);
    /* A live follower hears of a gap as it is marked. */
    append_range(a, "g", 3, 8, 9); /* a session's seqs grow across its streams */
    settle(f, a);
    assert_non_null(mcp__cluster_follow_start(b, "g", 3, owner, 8, rec_emit, rec_follow_done, &r));
    assert_true(run_until(f, &r.emitted, 1, WAIT_MS));
    assert_int_equal(mcp__cluster_stream_gap(a, "g", 3, 10), MCP_OK);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ENOENT);
    assert_int_equal(r.n, 1);
    rec_free(&r);
    /* The store's own replay (the owner's resume, which keeps its own list of gaps)
     * passes the marker over. */
    rec rp = {0};
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "g", 2, 1, &rp), MCP_OK);
    assert_int_equal(rp.n, 4); /* 2, 3, 5, 6 */
    rec_free(&rp);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

/* rec's after_emit: trims the session "u" of test dr: below seq 2001, once. */
static void trim_at_first(rec *r, uint64_t seq)
{
    (void)seq;
    if (r->n == 1)
        assert_int_equal(raw_int(r->ctx, "XTRIM dr:e:u:0 MINID 2001"), 2000);
}

static void test_follow_of_a_stream_dropped_while_it_is_read_ends_with_enoent(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "dr:", 0, NULL);
    mcp__cluster *b = cluster(f, "dr:", 0, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    /* 2,000 events of 1 KiB: several pages; then events of another stream of the
     * session, in the same Redis stream. */
    static char big[1024];
    memset(big, 'x', sizeof(big));
    redisContext *raw_c = raw(f);
    for (int round = 0; round < 2; round++) {
        const char *session = round == 0 ? "d" : "t";
        for (uint64_t seq = 1; seq <= 2000; seq++)
            assert_int_equal(mcp_event_store_append(store, session, 2, seq, big, sizeof(big)),
                             MCP_OK);
        for (uint64_t seq = 2001; seq <= 2005; seq++)
            assert_int_equal(mcp_event_store_append(store, session, 4, seq, "other", 5), MCP_OK);
        settle(f, a);
        rec r = {0};
        assert_non_null(mcp__cluster_follow_start(b, session, 2, mcp__cluster_node(a), 1, rec_emit,
                                                  rec_follow_done, &r));
        assert_true(run_until(f, &r.emitted, 1, WAIT_MS));
        /* The first page is out and the next one asked for (still in hiredis's buffer): the
         * stream goes before the server reads that request, as when its session keeps too
         * many: all of it, or (trimmed) all but the other stream's events. What the pages
         * then lack is not the stream's end, nor the wait for its next event. */
        if (round == 0)
            assert_int_equal(raw_int(raw_c, "UNLINK dr:e:d:0"), 1);
        else
            assert_int_equal(raw_int(raw_c, "XTRIM dr:e:t:0 MINID 2001"), 2000);
        assert_true(run_until(f, &r.done, 1, WAIT_MS));
        assert_int_equal(r.status, MCP_ENOENT);
        assert_true(r.n < 1999);
        rec_free(&r);
    }
    /* The store's own replay says so too: trimmed while its first page is emitted (its
     * next page not asked for yet). */
    for (uint64_t seq = 1; seq <= 2000; seq++)
        assert_int_equal(mcp_event_store_append(store, "u", 2, seq, big, sizeof(big)), MCP_OK);
    for (uint64_t seq = 2001; seq <= 2005; seq++)
        assert_int_equal(mcp_event_store_append(store, "u", 4, seq, "other", 5), MCP_OK);
    settle(f, a);
    rec rp = {.after_emit = trim_at_first, .ctx = raw_c};
    assert_int_equal(replay_now(f, mcp__cluster_event_store(b), "u", 2, 1, &rp), MCP_ENOENT);
    assert_true(rp.n < 1999);
    rec_free(&rp);
    redisFree(raw_c);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

static void test_follow_ends_when_the_owner_is_gone(void **state)
{
    fx *f = *state;
    int hb = 100;
    mcp__cluster *a = cluster(f, "og:", hb, NULL);
    mcp__cluster *b = cluster(f, "og:", hb, NULL);
    range_open = "request 42";
    append_range(a, "os", 9, 1, 3);
    settle(f, a);
    rec r = {0};
    mcp__cluster_follow *fl = mcp__cluster_follow_start(b, "os", 9, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &r);
    assert_non_null(fl);
    assert_true(run_until(f, &r.emitted, 2, WAIT_MS));
    /* Alive, it is followed for many heartbeats without an end. */
    run_for(f, 5 * hb);
    assert_int_equal(r.done, 0);
    long long t0 = harness_now_ms();
    cluster_gone(f, a);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    long long took = harness_now_ms() - t0;
    printf("[ redis    ] owner gone: its follower ended %lld ms after (heartbeat %d ms)\n", took,
           hb);
    assert_int_equal(r.status, MCP_ECLOSED);
    assert_non_null(r.text);
    assert_string_equal(r.text, "request 42");
    assert_true(took <= 6 * hb);
    rec_free(&r);

    /* A follow of a dead owner's stream still gets what was stored, then ends. */
    mcp__cluster *c = cluster(f, "og:", hb, NULL);
    range_open = "request 43";
    append_range(c, "ot", 10, 1, 4);
    settle(f, c);
    uint32_t dead = mcp__cluster_node(c);
    cluster_gone(f, c);
    fl = mcp__cluster_follow_start(b, "ot", 10, dead + 1000, 2, rec_emit, rec_follow_done, &r);
    assert_non_null(fl);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ECLOSED);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.text, "request 43");
    rec_free(&r);
    cluster_gone(f, b);
}

/* ---- Bus ---- */

static void probe_self(fx *f, mcp__cluster *c, watch *w)
{
    /* A node's bus subscription is confirmed a round trip after attach: until it
     * hears itself, it sends to itself again. */
    long long deadline = harness_now_ms() + WAIT_MS;
    while (w->probes == 0 && harness_now_ms() < deadline) {
        assert_int_equal(mcp__cluster_send(c, mcp__cluster_node(c), 'p', "", NULL, 0), MCP_OK);
        run_for(f, 10);
    }
    assert_true(w->probes > 0);
}

static void test_bus_to_one_node_and_to_every_other(void **state)
{
    fx *f = *state;
    watch wa = {0}, wb = {0}, wc = {0};
    mcp__cluster *a = cluster(f, "bus:", 0, &wa);
    mcp__cluster *b = cluster(f, "bus:", 0, &wb);
    mcp__cluster *c = cluster(f, "bus:", 0, &wc);
    probe_self(f, a, &wa);
    probe_self(f, b, &wb);
    probe_self(f, c, &wc);

    assert_int_equal(mcp__cluster_send(a, mcp__cluster_node(b), 'r', "sess", "a\0b", 3), MCP_OK);
    assert_true(run_until(f, &wb.nmsg, 1, WAIT_MS));
    assert_int_equal(wb.kind[0], 'r');
    assert_string_equal(wb.session[0], "sess");
    assert_int_equal(wb.len[0], 3);
    assert_memory_equal(wb.data[0], "a\0b", 3);
    assert_int_equal(wb.from[0], mcp__cluster_node(a));

    assert_int_equal(mcp__cluster_send(a, 0, 'B', NULL, "to all", 6), MCP_OK);
    assert_true(run_until(f, &wb.nmsg, 2, WAIT_MS));
    assert_true(run_until(f, &wc.nmsg, 1, WAIT_MS));
    assert_int_equal(wb.kind[1], 'B');
    assert_string_equal(wb.session[1], "");
    assert_int_equal(wc.kind[0], 'B');
    assert_int_equal(wc.from[0], mcp__cluster_node(a));
    /* a does not hear its own broadcast: a message it then sends itself comes after
     * it on a's subscription, and is the first a hears. */
    assert_int_equal(mcp__cluster_send(a, mcp__cluster_node(a), 'z', "", NULL, 0), MCP_OK);
    assert_true(run_until(f, &wa.nmsg, 1, WAIT_MS));
    assert_int_equal(wa.kind[0], 'z');
    run_for(f, 20);
    assert_int_equal(wa.nmsg, 1);
    assert_int_equal(wb.nmsg, 2);
    assert_int_equal(wc.nmsg, 1);
    cluster_gone(f, a);
    cluster_gone(f, b);
    cluster_gone(f, c);
}

/* ---- What the server says is not trusted ---- */

static void test_unexpected_replies_and_messages_are_refused(void **state)
{
    fx *f = *state;
    watch w = {0};
    mcp__cluster *a = cluster(f, "ue:", 0, &w);
    mcp_event_store *store = mcp__cluster_event_store(a);
    redisContext *r = raw(f);
    raw_ok(r, "SET ue:e:s:0 %s", "not a stream");
    redisReply *rep = redisCommand(r, "XADD ue:s:rec * a b");
    assert_non_null(rep);
    freeReplyObject(rep);

    /* Keys of another type: errors, reported as MCP_ECLOSED, never read as data. */
    get_res g;
    assert_int_equal(get_now(f, a, "rec", &g), MCP_ECLOSED);
    rec rp = {0};
    assert_int_equal(replay_now(f, store, "s", 1, 1, &rp), MCP_ECLOSED);
    assert_int_equal(rp.n, 0);
    rec_free(&rp);
    mcp__cluster_follow *fl = mcp__cluster_follow_start(a, "s", 1, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &rp);
    assert_non_null(fl);
    assert_true(run_until(f, &rp.done, 1, WAIT_MS));
    assert_int_equal(rp.status, MCP_ECONNECT); /* an answer not to be trusted */
    rec_free(&rp);

    /* Entries of a kind it does not know, or of no stream, are passed over. */
    const char *entries[] = {"1-0 s 2 d v1", "2-0 s 2 zz v2", "2-1 zz v2", "3-0 s 2 d v3"};
    for (int i = 0; i < 4; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "XADD ue:e:t:0 %s", entries[i]);
        rep = redisCommand(r, cmd);
        assert_non_null(rep);
        freeReplyObject(rep);
    }
    assert_int_equal(replay_now(f, store, "t", 2, 1, &rp), MCP_OK);
    assert_int_equal(rp.n, 1);
    assert_int_equal(rp.seq[0], 3);
    rec_free(&rp);

    /* Garbage on a followed stream's channel and on the bus is dropped. */
    fl = mcp__cluster_follow_start(a, "t", 2, mcp__cluster_node(a), 3, rec_emit, rec_follow_done,
                                   &rp);
    assert_non_null(fl);
    const char *junk[] = {"", "x", "d", "d:", "dabc:1", "e5junk", "e", "d99999999999999999999:x"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        raw_int(r, "PUBLISH ue:c:t:2 %s", junk[i]);
    char chan[32];
    snprintf(chan, sizeof chan, "ue:n:%u", (unsigned)mcp__cluster_node(a));
    const char *bus_junk[] = {"", "x", "x1", "x1:", "x0:0:", "x1:5:ab", "x99999999999:0:", "x1:a:"};
    for (size_t i = 0; i < sizeof bus_junk / sizeof bus_junk[0]; i++)
        raw_int(r, "PUBLISH %s %s", chan, bus_junk[i]);
    append_range(a, "t", 2, 4, 4);
    assert_true(run_until(f, &rp.emitted, 1, WAIT_MS));
    assert_int_equal(rp.seq[0], 4);
    raw_int(r, "PUBLISH ue:c:t:2 e4");
    assert_true(run_until(f, &rp.done, 1, WAIT_MS));
    assert_int_equal(rp.status, MCP_OK);
    assert_int_equal(rp.n, 1);
    rec_free(&rp);
    assert_int_equal(mcp__cluster_send(a, mcp__cluster_node(a), 'k', "s", "ok", 2), MCP_OK);
    assert_true(run_until(f, &w.nmsg, 1, WAIT_MS));
    run_for(f, 20);
    assert_int_equal(w.nmsg, 1);
    assert_int_equal(w.kind[0], 'k');
    redisFree(r);
    cluster_gone(f, a);
}

/* ---- Detaching from inside callbacks ---- */

static void detach_at_10(rec *r, uint64_t seq)
{
    if (seq == 10)
        mcp__cluster_detach(r->ctx);
}

static void test_detach_from_inside_callbacks(void **state)
{
    fx *f = *state;
    mcp__cluster *a = cluster(f, "dx:", 0, NULL);
    mcp__cluster *b = cluster(f, "dx:", 0, NULL);
    append_range(a, "s", 1, 1, 1000);
    settle(f, a);

    /* From a replay's emit: it stops there and ends with MCP_ECLOSED, once. */
    rec r = {.after_emit = detach_at_10, .ctx = b};
    assert_int_equal(mcp_event_store_replay(mcp__cluster_event_store(b), "s", 1, 1, rec_emit,
                                            rec_replay_done, &r),
                     MCP_OK);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ECLOSED);
    assert_int_equal(r.seq[r.n - 1], 10);
    run_for(f, 20);
    assert_int_equal(r.done, 1);
    assert_false(mcp__cluster_up(b));
    rec_free(&r);

    /* From a follower's emit: the follower ends inside the detach. */
    assert_int_equal(mcp__cluster_attach(b, &f->loop), MCP_OK);
    r = (rec){.after_emit = detach_at_10, .ctx = b};
    mcp__cluster_follow *fl = mcp__cluster_follow_start(b, "s", 1, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &r);
    assert_non_null(fl);
    assert_true(run_until(f, &r.done, 1, WAIT_MS));
    assert_int_equal(r.status, MCP_ECONNECT);
    assert_int_equal(r.seq[r.n - 1], 10);
    run_for(f, 20);
    assert_int_equal(r.done, 1);
    rec_free(&r);
    cluster_gone(f, b);

    /* From the up(0) callback, when the server drops the connection. */
    watch w = {0};
    mcp__cluster *c = cluster(f, "dx:", 0, &w);
    w.detach_on_down = c;
    get_res g;
    assert_int_equal(get_now(f, c, "none", &g), MCP_ENOENT);
    redisContext *raw_c = raw(f);
    assert_true(raw_int(raw_c, "CLIENT KILL TYPE pubsub") >= 1);
    assert_true(run_until(f, &w.downs, 1, WAIT_MS));
    assert_false(mcp__cluster_up(c));
    run_for(f, 300);
    assert_int_equal(w.ups, 0);
    cluster_gone(f, c);

    /* Not detached, it comes back by itself. */
    w = (watch){0};
    c = cluster(f, "dx:", 0, &w);
    assert_int_equal(get_now(f, c, "none", &g), MCP_ENOENT);
    assert_true(raw_int(raw_c, "CLIENT KILL TYPE normal") >= 1);
    assert_true(run_until(f, &w.ups, 1, WAIT_MS));
    assert_int_equal(w.downs, 1);
    assert_int_equal(get_now(f, c, "none", &g), MCP_ENOENT);
    redisFree(raw_c);
    cluster_gone(f, c);
    cluster_gone(f, a);
}

/* ---- Redis goes away and comes back ---- */

static void test_redis_restart_reports_closed_then_reconnects(void **state)
{
    fx *f = *state;
    watch w = {0};
    mcp__cluster *a = cluster(f, "rs:", 100, &w);
    mcp__cluster *b = cluster(f, "rs:", 100, NULL);
    mcp_event_store *store = mcp__cluster_event_store(a);
    assert_int_equal(mcp__cluster_session_put(a, "s", "before", 6, 60000, 0, NULL, NULL), MCP_OK);
    get_res g;
    assert_int_equal(get_now(f, a, "s", &g), MCP_OK);
    append_range(a, "s", 1, 1, 3);
    settle(f, a);
    rec fr = {0};
    mcp__cluster_follow *fl = mcp__cluster_follow_start(b, "s", 1, mcp__cluster_node(a), 1,
                                                        rec_emit, rec_follow_done, &fr);
    assert_non_null(fl);
    assert_true(run_until(f, &fr.emitted, 2, WAIT_MS));

    assert_int_equal(rh_stop(&f->srv, START_MS), 0);
    assert_true(run_until(f, &w.downs, 1, WAIT_MS));
    assert_false(mcp__cluster_up(a));
    /* The follower ends: its connection went (the owner's stream may go on). */
    assert_true(run_until(f, &fr.done, 1, WAIT_MS));
    assert_int_equal(fr.status, MCP_ECONNECT);
    assert_null(fr.text);
    rec_free(&fr);

    /* While down: every operation says MCP_ECLOSED, at once. */
    mcp__cluster_stats s0, s1;
    mcp__cluster_stats_get(a, &s0);
    assert_int_equal(mcp__cluster_session_put(a, "s", "during", 6, 60000, 0, NULL, NULL),
                     MCP_ECLOSED);
    mcp__cluster_session_touch(a, "s", 60000, NULL, NULL);
    assert_int_equal(mcp__cluster_session_delete(a, "s", 60000), MCP_ECLOSED);
    memset(&g, 0, sizeof g);
    mcp__cluster_session_get(a, "s", on_get, &g);
    assert_int_equal(g.done, 1);
    assert_int_equal(g.status, MCP_ECLOSED);
    alive_res al = {0};
    mcp__cluster_node_alive(a, 1, on_alive, &al);
    assert_int_equal(al.done, 1);
    assert_int_equal(al.alive, -1);
    assert_int_equal(mcp_event_store_append(store, "s", 1, 4, "x", 1), MCP_ECLOSED);
    rec r = {0};
    assert_int_equal(mcp_event_store_replay(store, "s", 1, 1, rec_emit, rec_replay_done, &r),
                     MCP_ECLOSED);
    assert_int_equal(mcp__cluster_send(a, 0, 'k', "", "x", 1), MCP_ECLOSED);
    assert_int_equal(mcp__cluster_stream_end(a, "s", 1, 3), MCP_ECLOSED);
    assert_null(mcp__cluster_follow_start(a, "s", 1, 1, 1, rec_emit, rec_follow_done, &r));
    mcp__cluster_stats_get(a, &s1);
    assert_int_equal(s1.dropped - s0.dropped, 6);
    assert_int_equal(s1.reconnects, 0);

    /* Some attempts fail while nothing listens; then it comes back on its port. */
    run_for(f, 300);
    assert_int_equal(w.ups, 0);
    assert_int_equal(rh_restart(&f->srv, START_MS), 0);
    assert_true(run_until(f, &w.ups, 1, WAIT_MS));
    assert_true(mcp__cluster_up(a));
    assert_int_equal(w.downs, 1);
    mcp__cluster_stats_get(a, &s1);
    assert_int_equal(s1.reconnects, 1);

    /* The server kept nothing; everything works again. */
    assert_int_equal(get_now(f, a, "s", &g), MCP_ENOENT);
    assert_int_equal(mcp__cluster_session_put(a, "s", "after", 5, 60000, 0, NULL, NULL), MCP_OK);
    assert_int_equal(get_now(f, a, "s", &g), MCP_OK);
    assert_string_equal(g.text, "after");
    append_range(a, "s", 1, 10, 12);
    assert_int_equal(replay_now(f, store, "s", 1, 10, &r), MCP_OK);
    assert_int_equal(r.n, 2);
    rec_free(&r);
    /* Its heartbeat is back at once, and b (back too) sees it. */
    long long deadline = harness_now_ms() + WAIT_MS;
    while (!mcp__cluster_up(b) && harness_now_ms() < deadline)
        run_for(f, 10);
    assert_int_equal(alive_now(f, b, mcp__cluster_node(a)), 1);
    /* A new node takes a number no live node holds. */
    mcp__cluster *c = cluster(f, "rs:", 100, NULL);
    assert_int_not_equal(mcp__cluster_node(c), mcp__cluster_node(a));
    assert_int_not_equal(mcp__cluster_node(c), mcp__cluster_node(b));
    cluster_gone(f, c);
    cluster_gone(f, a);
    cluster_gone(f, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_parses_host_port_password_user_and_db),
        cmocka_unit_test_setup_teardown(test_url_password_user_and_db_reach_the_server, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_node_numbers_are_unique_and_alive, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_registry_put_get_touch_delete_and_expiry, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_event_store_replays_like_the_memory_store, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_event_store_bounds_events_and_sizes, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_event_store_replays_ten_thousand_events_in_pages,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_follow_emits_every_event_once_across_the_seam,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_the_last_event_carries_the_end, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_an_empty_event_is_stored_with_the_next_one, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_follow_shares_channels_and_unfollows, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_follow_refuses_to_go_past_a_lost_event, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(
            test_follow_of_a_stream_dropped_while_it_is_read_ends_with_enoent, fx_setup,
            fx_teardown),
        cmocka_unit_test_setup_teardown(test_follow_ends_when_the_owner_is_gone, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_bus_to_one_node_and_to_every_other, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_unexpected_replies_and_messages_are_refused, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_detach_from_inside_callbacks, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_redis_restart_reports_closed_then_reconnects, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests_name("redis_cluster", tests, NULL, NULL);
}
