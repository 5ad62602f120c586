/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the in-memory event store (src/store/memory.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcp/store.h>
#include <uv.h>

typedef struct replay_log {
    uint64_t seqs[64];
    char data[64][32];
    size_t n;
    int status;
    int done;
} replay_log;

static void on_event(void *arg, uint64_t seq, const char *data, size_t len)
{
    replay_log *r = arg;
    assert_true(r->n < 64);
    r->seqs[r->n] = seq;
    snprintf(r->data[r->n], sizeof(r->data[0]), "%.*s", (int)len, data);
    r->n++;
}

static void on_done(void *arg, int status)
{
    replay_log *r = arg;
    r->status = status;
    r->done++;
}

static replay_log replay(mcp_event_store *s, const char *session, uint64_t stream, uint64_t after)
{
    replay_log r = {0};
    assert_int_equal(mcp_event_store_replay(s, session, stream, after, on_event, on_done, &r),
                     MCP_OK);
    assert_int_equal(r.done, 1);
    return r;
}

static void test_replay_gives_the_events_after_the_id_in_order_and_only_of_that_stream(void **st)
{
    (void)st;
    mcp_event_store *s = mcp_memory_store_new(NULL);
    assert_non_null(s);
    assert_int_equal(mcp_event_store_append(s, "A", 1, 1, "", 0), MCP_OK); /* priming marker */
    assert_int_equal(mcp_event_store_append(s, "A", 1, 2, "a2", 2), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "A", 2, 3, "b3", 2), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "A", 1, 4, "a4", 2), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "B", 1, 1, "x1", 2), MCP_OK);
    replay_log r = replay(s, "A", 1, 1);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.seqs[0], 2);
    assert_string_equal(r.data[0], "a2");
    assert_int_equal(r.seqs[1], 4);
    r = replay(s, "A", 1, 4);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 0);
    mcp_event_store_free(s);
}

static void test_unknown_foreign_and_mismatched_ids_are_refused(void **st)
{
    (void)st;
    mcp_event_store *s = mcp_memory_store_new(NULL);
    mcp_event_store_append(s, "A", 1, 1, "a1", 2);
    mcp_event_store_append(s, "A", 2, 2, "b2", 2);
    assert_int_equal(replay(s, "A", 1, 7).status, MCP_ENOENT); /* never stored */
    assert_int_equal(replay(s, "A", 1, 2).status, MCP_ENOENT); /* another stream's seq */
    assert_int_equal(replay(s, "A", 9, 1).status, MCP_ENOENT); /* unknown stream */
    assert_int_equal(replay(s, "Z", 1, 1).status, MCP_ENOENT); /* another session */
    assert_int_equal(mcp_event_store_append(s, "A", 1, 1, "again", 5), MCP_EINVAL);
    mcp_event_store_free(s);
}

/* Appends five events to a store made with opts, which set max_events to 3, and checks
 * that the oldest went. */
static void expect_three_events_kept(const mcp_memory_store_opts *opts)
{
    mcp_event_store *s = mcp_memory_store_new(opts);
    assert_non_null(s);
    for (uint64_t i = 1; i <= 5; i++)
        assert_int_equal(mcp_event_store_append(s, "A", 1, i, "e", 1), MCP_OK);
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_ENOENT); /* evicted */
    replay_log r = replay(s, "A", 1, 3);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.seqs[1], 5);
    mcp_event_store_free(s);
}

static void test_bounds_evict_the_oldest_and_expired_ids_are_refused(void **st)
{
    (void)st;
    mcp_memory_store_opts o = {.max_events = 3};
    expect_three_events_kept(&o);

    mcp_memory_store_opts b = {.max_bytes = 10};
    mcp_event_store *s = mcp_memory_store_new(&b);
    mcp_event_store_append(s, "A", 1, 1, "12345", 5);
    mcp_event_store_append(s, "A", 1, 2, "12345", 5);
    mcp_event_store_append(s, "A", 1, 3, "12345", 5); /* 15 bytes: the first goes */
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_ENOENT);
    assert_int_equal(replay(s, "A", 1, 2).status, MCP_OK);
    mcp_event_store_free(s);
}

static void test_options_are_read_with_size_0_sizeof_or_a_later_release_size(void **st)
{
    (void)st;
    mcp_memory_store_opts o = {.max_events = 3};
    expect_three_events_kept(&o);
    o.size = sizeof(o);
    expect_three_events_kept(&o);
    /* A program built against a later header: its options go on past ours, with values
     * this release knows nothing of and ignores. */
    const size_t later = sizeof(o) + 8 * sizeof(size_t);
    unsigned char *buf = malloc(later);
    assert_non_null(buf);
    memset(buf, 0xa5, later);
    o.size = later;
    memcpy(buf, &o, sizeof(o));
    expect_three_events_kept((const mcp_memory_store_opts *)buf);
    free(buf);
}

static void test_options_of_a_size_below_the_size_field_are_refused(void **st)
{
    (void)st;
    for (size_t size = 1; size < sizeof(size_t); size++) {
        const mcp_memory_store_opts o = {.size = size, .max_events = 3};
        assert_null(mcp_memory_store_new(&o));
    }
}

static void test_the_bound_on_all_sessions_evicts_the_growing_session_first(void **st)
{
    (void)st;
    mcp_memory_store_opts o = {.max_total_bytes = 30};
    mcp_event_store *s = mcp_memory_store_new(&o);
    /* A holds 20 bytes; B then appends 3 x 10: B's own oldest go before A's. */
    mcp_event_store_append(s, "A", 1, 1, "aaaaaaaaaa", 10);
    mcp_event_store_append(s, "A", 1, 2, "aaaaaaaaaa", 10);
    mcp_event_store_append(s, "B", 1, 1, "bbbbbbbbbb", 10);
    mcp_event_store_append(s, "B", 1, 2, "bbbbbbbbbb", 10);
    assert_int_equal(replay(s, "B", 1, 1).status, MCP_ENOENT); /* B's oldest went */
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_OK);     /* A kept everything */
    /* One session alone over the bound: it keeps its newest event, others give way. */
    mcp_event_store_append(s, "B", 1, 3, "bbbbbbbbbbbbbbbbbbbbbbbbb", 25);
    assert_int_equal(replay(s, "B", 1, 3).status, MCP_OK);
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_ENOENT);
    mcp_event_store_free(s);
}

static void test_dropping_a_session_forgets_only_it(void **st)
{
    (void)st;
    mcp_event_store *s = mcp_memory_store_new(NULL);
    mcp_event_store_append(s, "A", 1, 1, "a", 1);
    mcp_event_store_append(s, "A", 1, 2, "a", 1);
    mcp_event_store_append(s, "B", 1, 1, "b", 1);
    mcp_event_store_append(s, "B", 1, 2, "b", 1);
    mcp_event_store_drop_session(s, "A");
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_ENOENT);
    assert_int_equal(replay(s, "B", 1, 1).n, 1);
    mcp_event_store_drop_session(s, "nobody");
    mcp_event_store_free(s);
}

typedef struct counter {
    uint64_t last;
    size_t n;
    int ordered;
    int status;
} counter;

static void count_event(void *arg, uint64_t seq, const char *data, size_t len)
{
    counter *c = arg;
    (void)data;
    (void)len;
    if (seq <= c->last)
        c->ordered = 0;
    c->last = seq;
    c->n++;
}

static void count_done(void *arg, int status)
{
    ((counter *)arg)->status = status;
}

static void test_ten_thousand_events_replay_in_order(void **st)
{
    (void)st;
    mcp_event_store *s = mcp_memory_store_new(NULL);
    char data[32];
    for (uint64_t i = 1; i <= 20000; i++) {
        int n = snprintf(data, sizeof data, "event %llu", (unsigned long long)i);
        /* Two streams interleaved, as a session's POST and GET streams are: the
         * default bound (10,000) keeps the newest 5,000 of each. */
        assert_int_equal(mcp_event_store_append(s, "S", i % 2, i, data, (size_t)n), MCP_OK);
    }
    counter c = {0, 0, 1, -1};
    assert_int_equal(mcp_event_store_replay(s, "S", 0, 10002, count_event, count_done, &c), MCP_OK);
    assert_int_equal(c.status, MCP_OK);
    assert_int_equal(c.n, 4999);
    assert_true(c.ordered);
    assert_int_equal(c.last, 20000);
    mcp_event_store_free(s);
}

/* What the packed layout must get right: seqs that go down between streams (each
 * stream's own still grow), very large and empty events, events of many streams over
 * many blocks, and a stream whose events all went (its slot then serves a new stream,
 * and the old one is unknown). */
static void test_streams_seqs_and_sizes_of_every_kind_replay_exactly(void **st)
{
    (void)st;
    mcp_memory_store_opts o = {.max_events = 40};
    mcp_event_store *s = mcp_memory_store_new(&o);
    assert_non_null(s);
    /* Seqs far apart and going down from one stream to the next. */
    assert_int_equal(mcp_event_store_append(s, "S", 7, 1000000000000ull, "a", 1), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "S", 8, 5, "b", 1), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "S", 7, 1000000000001ull, "", 0), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "S", 7, 1000000000002ull, "c", 1), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "S", 8, 4, "x", 1), MCP_EINVAL);
    replay_log r = replay(s, "S", 7, 1000000000000ull);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 1); /* the empty event is a place, never replayed */
    assert_true(r.seqs[0] == 1000000000002ull);
    assert_string_equal(r.data[0], "c");
    r = replay(s, "S", 8, 5);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 0);

    /* One event larger than a block, kept whole. */
    size_t big = 200000;
    char *data = malloc(big);
    assert_non_null(data);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    assert_int_equal(mcp_event_store_append(s, "S", 8, 6, data, big), MCP_OK);
    counter c = {0, 0, 1, -1};
    assert_int_equal(mcp_event_store_replay(s, "S", 8, 5, count_event, count_done, &c), MCP_OK);
    assert_int_equal(c.status, MCP_OK);
    assert_int_equal(c.n, 1);
    free(data);

    /* Thirty streams of two events each (sixty events past a bound of forty): streams
     * 7 and 8 and the oldest new ones go whole, their slots taken by newer streams. */
    char text[32];
    for (uint64_t k = 0; k < 30; k++)
        for (uint64_t j = 0; j < 2; j++) {
            snprintf(text, sizeof text, "stream %llu event %llu", (unsigned long long)k,
                     (unsigned long long)j);
            assert_int_equal(
                mcp_event_store_append(s, "S", 100 + k, 10 + 2 * k + j, text, strlen(text)),
                MCP_OK);
        }
    assert_int_equal(replay(s, "S", 7, 1000000000000ull).status, MCP_ENOENT);
    assert_int_equal(replay(s, "S", 8, 6).status, MCP_ENOENT);
    assert_int_equal(replay(s, "S", 100, 10).status, MCP_ENOENT);
    for (uint64_t k = 10; k < 30; k++) {
        r = replay(s, "S", 100 + k, 10 + 2 * k);
        assert_int_equal(r.status, MCP_OK);
        assert_int_equal(r.n, 1);
        snprintf(text, sizeof text, "stream %llu event 1", (unsigned long long)k);
        assert_string_equal(r.data[0], text);
    }
    /* A stream whose slot was freed and taken again starts over: its old seqs are no
     * bar to a new one. */
    assert_int_equal(mcp_event_store_append(s, "S", 7, 1, "again", 5), MCP_OK);
    assert_int_equal(mcp_event_store_append(s, "S", 7, 2, "more", 4), MCP_OK);
    r = replay(s, "S", 7, 1);
    assert_int_equal(r.status, MCP_OK);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.data[0], "more");
    mcp_event_store_free(s);
}

static void test_expire_drops_events_past_their_ttl_in_every_session(void **st)
{
    (void)st;
    mcp_memory_store_opts o = {.ttl_ms = 1};
    mcp_event_store *s = mcp_memory_store_new(&o);
    mcp_event_store_append(s, "A", 1, 1, "a", 1);
    mcp_event_store_append(s, "B", 1, 1, "b", 1);
    /* What is waited for is time itself: at least 2 ms must pass. */
    uint64_t t0 = uv_hrtime();
    while (uv_hrtime() - t0 < 3000000u)
        ;
    mcp_event_store_expire(s);
    assert_int_equal(replay(s, "A", 1, 1).status, MCP_ENOENT);
    assert_int_equal(replay(s, "B", 1, 1).status, MCP_ENOENT);
    /* The store is still usable afterwards. */
    assert_int_equal(mcp_event_store_append(s, "A", 1, 2, "a", 1), MCP_OK);
    mcp_event_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_replay_gives_the_events_after_the_id_in_order_and_only_of_that_stream),
        cmocka_unit_test(test_unknown_foreign_and_mismatched_ids_are_refused),
        cmocka_unit_test(test_bounds_evict_the_oldest_and_expired_ids_are_refused),
        cmocka_unit_test(test_options_are_read_with_size_0_sizeof_or_a_later_release_size),
        cmocka_unit_test(test_options_of_a_size_below_the_size_field_are_refused),
        cmocka_unit_test(test_dropping_a_session_forgets_only_it),
        cmocka_unit_test(test_the_bound_on_all_sessions_evicts_the_growing_session_first),
        cmocka_unit_test(test_ten_thousand_events_replay_in_order),
        cmocka_unit_test(test_streams_seqs_and_sizes_of_every_kind_replay_exactly),
        cmocka_unit_test(test_expire_drops_events_past_their_ttl_in_every_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
