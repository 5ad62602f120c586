/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28 attacked as a hostile or a slow client would: listen streams
 * that try to hold every connection, a listen that never reads while changes flood,
 * modern POSTs pipelined and never read, abandoned and endless Multi Round-Trip
 * rounds, huge requestState and inputResponses, deeply nested _meta, half-sent
 * modern requests, and modern and legacy traffic at once. Each time the server stays
 * within its bounds (connections, sessions, memory) and keeps serving everyone else.
 *
 * Against the in-process server of modern_host.h (sessions, handler runs and heap
 * measured) and mcp-everything --http (its RSS measured).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "modern_host.h"
#include "resume_check.h"

#define ELICIT_CAPS "{\"elicitation\":{}}"

/* ---- Helpers ---- */

/* A test's own server, with its own options; stopped by the test, or by its teardown
 * when the test failed first (a host's thread must not outlive the test). */
static mh_host *own;

static mh_host *own_host(const mh_opts *o)
{
    own = calloc(1, sizeof(*own));
    assert_non_null(own);
    assert_int_equal(mh_start(own, o), 0);
    return own;
}

static void own_stop(void)
{
    assert_int_equal(mh_stop(own, 1000), 0);
    free(own);
    own = NULL;
}

/* The same for a test's mcp-everything. */
static hc_server *live_server;

static int own_cleanup(void **state)
{
    (void)state;
    if (live_server != NULL)
        hc_server_free(live_server);
    live_server = NULL;
    if (own != NULL) {
        mh_stop(own, 0);
        free(own);
        own = NULL;
    }
    return 0;
}

static json_t *listen_request(long long id)
{
    return mh_request(id, "subscriptions/listen",
                      json_pack("{s:{s:b}}", "notifications", "toolsListChanged", 1), NULL);
}

/* A good modern request, answered within 2 s: the server serves others. */
static void assert_serves(int port, long long id, const char *what)
{
    json_t *req = mh_request(id, "tools/list", NULL, NULL);
    hc_response r;
    long long t0 = hc_now_ms();
    if (mh_post(port, req, NULL, &r) != 0)
        fail_msg("%s: a good request got no answer (status %d)", what, r.status);
    json_decref(mh_expect(&r, 200, 0, id, what));
    hc_response_free(&r);
    json_decref(req);
    /* Served beside the flood, not after it: a bound far above a served request's time
     * (milliseconds) and far below a flood's end (the test's own time); the sanitizers
     * slow everything several times over, as CTest's timeouts allow for. */
    long long took = hc_now_ms() - t0, bound = UNDER_ASAN ? 10000 : 2000;
    if (took > bound)
        fail_msg("%s: a good request took %lld ms (at most %lld)", what, took, bound);
}

/* Opens listen `id` on a connection with a window of 4 KiB, and reads its head only. */
static void open_slow_listen(hc_conn *c, int port, long long id)
{
    /* A receive buffer of 4 KiB: a client that reads nothing fills it at once, and
     * what the server sends it then waits in the server. */
    assert_int_equal(hc_connect_rcvbuf(c, port, 4096, MH_WAIT_MS), 0);
    json_t *req = listen_request(id);
    assert_int_equal(mh_send(c, port, req), 0);
    json_decref(req);
    hc_response head;
    assert_int_equal(hc_read_head(c, &head, MH_WAIT_MS), 0);
    assert_int_equal(head.status, 200);
    hc_response_free(&head);
}

/* ---- Listens and connections ---- */

/*
 * Long-lived streams may hold half the connections at most, as legacy GET streams may:
 * past that a listen is refused (429), and everyone else still gets a connection.
 */
static void test_listens_cannot_hold_every_connection(void **state)
{
    (void)state;
    mh_opts o = {.max_connections = 20};
    mh_host *h = own_host(&o);
    hc_conn c[40];
    int open = 0, refused = 0;
    for (int i = 0; i < 40; i++) {
        json_t *req = listen_request(100 + i);
        hc_response head;
        int rc = mh_open(&c[open], h->port, req, &head);
        json_decref(req);
        if (rc != 0) {
            hc_close(&c[open]);
            fail_msg("listen %d: no response head", i);
        }
        if (head.status == 200) {
            json_t *ack = hc_sse_next_json(&c[open], MH_WAIT_MS, NULL);
            assert_non_null(ack);
            json_decref(ack);
            open++;
        } else {
            if (head.status != 429)
                fail_msg("listen %d: refused with %d, not 429", i, head.status);
            hc_read_body(&c[open], &head, MH_WAIT_MS);
            json_t *msgs = mh_messages(&head, "a refused listen");
            json_t *id = json_object_get(json_array_get(msgs, 0), "id");
            if (json_integer_value(id) != 100 + i)
                fail_msg("listen %d: the refusal should name the request", i);
            json_decref(msgs);
            hc_close(&c[open]);
            refused++;
        }
        hc_response_free(&head);
    }
    printf("%d listens held, %d refused, of 20 connections\n", open, refused);
    if (open > 10)
        fail_msg("%d listens hold %d of 20 connections", open, open);
    /* Everyone else is served: modern requests, and a legacy session. */
    for (int i = 0; i < 20; i++)
        assert_serves(h->port, 200 + i, "a request while listens hold what they may");
    char session[33];
    if (hc_mcp_initialize(h->port, session, MH_WAIT_MS) != 0)
        fail_msg("a legacy client could not initialize while listens were open");
    /* A closed listen makes room for a new one. */
    hc_close(&c[0]);
    assert_int_equal(mh_wait_sessions(h, (size_t)(open - 1) * 2 + 2, MH_WAIT_MS),
                     (size_t)(open - 1) * 2 + 2);
    json_t *req = listen_request(300);
    hc_response head;
    assert_int_equal(mh_open(&c[0], h->port, req, &head), 0);
    json_decref(req);
    assert_int_equal(head.status, 200);
    hc_response_free(&head);
    for (int i = 0; i < open; i++)
        hc_close(&c[i]);
    own_stop();
}

/*
 * A listen whose client reads nothing while changes flood: the server holds at most
 * max_queued bytes for it, then cuts the stream, and the subscription ends with it
 * (nothing is left to deliver to, so nothing is kept).
 */
static void test_a_listen_that_never_reads_is_cut_and_leaves_nothing(void **state)
{
    (void)state;
    mh_opts o = {.max_queued = 64 * 1024};
    mh_host *h = own_host(&o);
    hc_conn slow, good;
    open_slow_listen(&slow, h->port, 1);
    /* A listener that reads, beside it. */
    hc_response head;
    json_t *req = listen_request(2);
    assert_int_equal(mh_open(&good, h->port, req, &head), 0);
    json_decref(req);
    hc_response_free(&head);
    json_decref(hc_sse_next_json(&good, MH_WAIT_MS, NULL));
    assert_int_equal(mh_sessions(h), 4);
    /* 8 MiB of changes, 8 KiB each. */
    char pad[8192];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    long long heap = mh_heap_bytes();
    for (int i = 0; i < 1024; i++) {
        json_t *params = json_pack("{s:{s:s}}", "_meta", "pad", pad);
        assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed", params),
                         MCP_OK);
        if (i % 4 == 3) {
            /* The reader keeps up, and shows that the flood goes on. (A listen's kernel
             * send buffer is small: keeping up is being less than max_queued behind.) */
            for (int k = 0; k < 4; k++) {
                json_t *m = hc_sse_next_json(&good, MH_WAIT_MS, NULL);
                if (m == NULL)
                    fail_msg("the reading listener missed change %d", i - 3 + k);
                json_decref(m);
            }
        }
    }
    long long heap_after = mh_heap_bytes();
    printf("a flood of 8 MiB past a listener that reads nothing: heap %lld -> %lld\n", heap,
           heap_after);
    if (heap >= 0 && heap_after - heap > 4 * 1024 * 1024)
        fail_msg("the server held %lld bytes for a listener that reads nothing", heap_after - heap);
    /* The slow one was cut: only the good listener's sessions remain. */
    size_t n = mh_wait_sessions(h, 2, MH_WAIT_MS);
    if (n != 2)
        fail_msg("a cut listen left its sessions: %zu, not 2", n);
    hc_close(&slow);
    hc_close(&good);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    own_stop();
}

/* Reads the notifications numbered by their _meta "n" from a standalone stream, in
 * order from *next, until the stream ends or `until` arrived; the last event id goes to
 * last_id. Fails the test on a gap or a repeat. */
static void read_numbered(hc_conn *c, int *next, int until, char last_id[128])
{
    hc_sse_event ev;
    while (*next < until && hc_sse_next_block(c, &ev, MH_WAIT_MS) == 1) {
        if (ev.id != NULL)
            snprintf(last_id, 128, "%s", ev.id);
        json_t *m = ev.data != NULL && ev.data[0] ? json_loads(ev.data, 0, NULL) : NULL;
        json_t *n = json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), "n");
        if (json_is_integer(n)) {
            if (json_integer_value(n) != *next)
                fail_msg("notification %lld came where %d was due",
                         (long long)json_integer_value(n), *next);
            (*next)++;
        }
        json_decref(m);
        hc_sse_event_free(&ev);
    }
}

/*
 * A 2025-11-25 session's standalone stream that reads nothing while 3 MiB of changes
 * go to it, on a server whose budget of queued bytes is 2 MiB: the stream is cut (the
 * connection only: SEP-1699), and the client, resuming with Last-Event-ID as often as
 * it is cut, gets every notification exactly once and in order.
 */
static void test_a_standalone_stream_cut_for_the_budget_resumes_and_loses_nothing(void **state)
{
    (void)state;
    enum { CHANGES = 384 }; /* of 8 KiB each */
    mh_opts o = {.max_queued = 8u << 20, .max_queued_total = 2u << 20};
    mh_host *h = own_host(&o);
    char session[33];
    assert_int_equal(hc_mcp_initialize(h->port, session, MH_WAIT_MS), 0);
    hc_conn get;
    assert_int_equal(hc_mcp_get_open(&get, h->port, session, NULL, MH_WAIT_MS), 200);
    char last_id[128] = "";
    hc_sse_event ev;
    assert_int_equal(hc_sse_next(&get, &ev, MH_WAIT_MS), 1); /* the priming event */
    assert_true(hc_sse_is_priming(&ev));
    snprintf(last_id, sizeof last_id, "%s", ev.id);
    hc_sse_event_free(&ev);
    char pad[8192];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (int i = 0; i < CHANGES; i++)
        assert_int_equal(
            mcp_server_notify(h->srv, "notifications/tools/list_changed",
                              json_pack("{s:{s:s, s:i}}", "_meta", "pad", pad, "n", i)),
            MCP_OK);
    int next = 0, resumes = 0;
    read_numbered(&get, &next, CHANGES, last_id);
    if (next == CHANGES)
        fail_msg("3 MiB reached a client that read nothing, past a budget of 2 MiB, uncut");
    printf("cut after %d of %d changes; resuming\n", next, CHANGES);
    while (next < CHANGES && resumes < 20) {
        hc_close(&get);
        resumes++;
        assert_int_equal(hc_mcp_get_open(&get, h->port, session, last_id, MH_WAIT_MS), 200);
        read_numbered(&get, &next, CHANGES, last_id);
    }
    printf("every change after %d resumes\n", resumes);
    assert_int_equal(next, CHANGES);
    hc_close(&get);
    own_stop();
}

/* A listen whose client stops taking anything (its window stays shut) is cut once it
 * has taken nothing for the session idle time (1 s here), and ends with its stream. */
static void test_a_stalled_listen_is_cut_and_leaves_nothing(void **state)
{
    (void)state;
    mh_opts o = {.session_idle_ms = 1000};
    mh_host *h = own_host(&o);
    hc_conn slow;
    open_slow_listen(&slow, h->port, 1);
    assert_int_equal(mh_sessions(h), 2);
    /* 256 KiB: more than its window, far less than max_queued. */
    char pad[2048];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (int i = 0; i < 128; i++)
        assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed",
                                           json_pack("{s:{s:s}}", "_meta", "pad", pad)),
                         MCP_OK);
    long long t0 = hc_now_ms();
    size_t n = mh_wait_sessions(h, 0, 8000);
    if (n != 0)
        fail_msg("a stalled listen was not ended within 8 s: %zu sessions", n);
    printf("a stalled listen ended after %lld ms\n", hc_now_ms() - t0);
    hc_close(&slow);
    own_stop();
}

/* A thousand listens (fewer when descriptors are short) cost little each, each hears a
 * change once, and closing them leaves nothing. */
static void test_a_thousand_listens_cost_little_and_each_hears_a_change(void **state)
{
    (void)state;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    int n = 1000;
    /* Two descriptors each (client and server), and room for the rest. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(2 * n + 300))
        n = ((int)rl.rlim_cur - 300) / 2;
    mh_host *h = own_host(NULL);
    int fds = mh_count_fds();
    long long heap = mh_heap_bytes();
    hc_conn *c = calloc((size_t)n, sizeof(*c));
    assert_non_null(c);
    for (int i = 0; i < n; i++) {
        json_t *req = listen_request(i + 1);
        hc_response head;
        if (mh_open(&c[i], h->port, req, &head) != 0 || head.status != 200)
            fail_msg("listen %d of %d: not opened (HTTP %d)", i + 1, n, head.status);
        json_decref(req);
        hc_response_free(&head);
        json_decref(hc_sse_next_json(&c[i], MH_WAIT_MS, NULL)); /* the acknowledgment */
    }
    assert_int_equal(mh_sessions(h), (size_t)n * 2);
    /* The heap is this process's: the clients' read buffers are taken out. */
    long long clients = 0;
    for (int i = 0; i < n; i++)
        clients += (long long)(c[i].in_cap + c[i].dec_cap);
    long long grew = mh_heap_bytes() - clients - heap;
    printf("%d listens open: the server's heap grew %lld bytes (%lld each)\n", n, grew, grew / n);
    if (heap >= 0 && grew > (long long)n * 16 * 1024)
        fail_msg("%d listens took %lld bytes of the server's heap", n, grew);
    assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed", NULL), MCP_OK);
    for (int i = 0; i < n; i++) {
        json_t *m = hc_sse_next_json(&c[i], MH_WAIT_MS, NULL);
        json_t *sub = json_object_get(json_object_get(json_object_get(m, "params"), "_meta"),
                                      "io.modelcontextprotocol/subscriptionId");
        if (json_integer_value(sub) != i + 1)
            fail_msg("listen %d did not hear the change", i + 1);
        json_decref(m);
    }
    for (int i = 0; i < n; i++)
        hc_close(&c[i]);
    free(c);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    int after = mh_wait_fds(fds, MH_WAIT_MS);
    if (after > fds)
        fail_msg("closed listens left %d descriptors", after - fds);
    own_stop();
}

/* ---- Floods ---- */

/* Writes as many copies of request text (ids counting up) as the socket takes within
 * ms; returns how many went. */
static int pipeline(hc_conn *c, int port, int ms, int max)
{
    long long deadline = hc_now_ms() + ms;
    int n = 0;
    while (n < max && hc_now_ms() < deadline) {
        json_t *req = mh_request(n + 1, "tools/list", NULL, NULL);
        size_t len;
        char *text = mh_format(port, req, &len);
        int rc = hc_send(c, text, len, 50);
        free(text);
        json_decref(req);
        if (rc != 0)
            break;
        n++;
    }
    return n;
}

/* Modern POSTs pipelined on 16 connections whose answers are never read: the server
 * stops reading each once its answers back up, its memory stays bounded, and others
 * are served. */
static void test_modern_posts_never_read_are_bounded(void **state)
{
    (void)state;
    static hc_server srv;
    hc_asan_small_quarantine(4);
    assert_int_equal(hc_server_start(&srv, NULL, MH_WAIT_MS), 0);
    live_server = &srv;
    long idle = hc_server_rss_kb(&srv);
    hc_conn c[16];
    int sent = 0;
    for (int i = 0; i < 16; i++) {
        assert_int_equal(hc_connect(&c[i], srv.port, MH_WAIT_MS), 0);
        sent += pipeline(&c[i], srv.port, 150, UNDER_ASAN ? 2000 : 20000);
    }
    long rss = hc_server_rss_kb(&srv);
    printf("%d modern POSTs pipelined and never read: RSS %ld -> %ld KiB\n", sent, idle, rss);
    if (rss > idle + 64 * 1024)
        fail_msg("unread answers grew the server by %ld KiB", rss - idle);
    for (int i = 0; i < 10; i++)
        assert_serves(srv.port, 500 + i, "a request beside unread pipelines");
    for (int i = 0; i < 16; i++)
        hc_close_reset(&c[i]);
    live_server = NULL;
    assert_int_equal(hc_server_stop_check(&srv, MH_WAIT_MS), 0);
}

/* ---- Multi Round-Trip Requests ---- */

static char *state_of(const json_t *resp)
{
    const char *s =
        json_string_value(json_object_get(json_object_get(resp, "result"), "requestState"));
    return s ? strdup(s) : NULL;
}

/* 2,000 first rounds never answered keep nothing: no session, no heap. Then one
 * request retried without ever answering ends after 32 rounds. */
static void test_abandoned_and_endless_rounds_keep_nothing(void **state)
{
    mh_host *h = *state;
    hc_conn c = {.fd = -1};
    long long heap = 0;
    for (int i = 0; i < 2200; i++) {
        if (i == 200)
            heap = mh_heap_bytes(); /* after a warm-up */
        if (i % 100 == 0) {
            hc_close(&c);
            assert_int_equal(hc_connect(&c, h->port, MH_WAIT_MS), 0);
        }
        json_t *req =
            mh_request(i + 1, "tools/call", json_pack("{s:s}", "name", "ask"), ELICIT_CAPS);
        hc_response r;
        if (mh_send(&c, h->port, req) != 0 || hc_read_response(&c, &r, MH_WAIT_MS) != 0)
            fail_msg("round %d: no answer", i);
        json_t *resp = mh_expect(&r, 200, 0, i + 1, "an abandoned first round");
        char *token = state_of(resp);
        assert_non_null(token);
        free(token);
        json_decref(resp);
        hc_response_free(&r);
        json_decref(req);
    }
    hc_close(&c);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    long long heap_after = mh_heap_bytes();
    printf("2,000 abandoned rounds: heap %lld -> %lld\n", heap, heap_after);
    if (heap >= 0 && heap_after - heap > 256 * 1024)
        fail_msg("2,000 abandoned rounds grew the heap by %lld bytes", heap_after - heap);

    /* Retried for ever without an answer. */
    json_t *req = mh_request(1, "tools/call", json_pack("{s:s}", "name", "ask"), ELICIT_CAPS);
    hc_response r;
    assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, 200, 0, 1, "round 1");
    hc_response_free(&r);
    char *token = state_of(resp);
    json_decref(resp);
    int rounds = 1;
    for (int i = 2; i <= 40 && token != NULL; i++) {
        req =
            mh_request(i, "tools/call",
                       json_pack("{s:s, s:s}", "name", "ask", "requestState", token), ELICIT_CAPS);
        free(token);
        token = NULL;
        assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
        json_decref(req);
        json_t *msgs = mh_messages(&r, "a retry without an answer");
        json_t *m = json_array_get(msgs, 0);
        if (json_object_get(m, "error") != NULL) {
            assert_int_equal(
                json_integer_value(json_object_get(json_object_get(m, "error"), "code")), -32603);
        } else {
            token = state_of(m);
            rounds++;
        }
        json_decref(msgs);
        hc_response_free(&r);
    }
    free(token);
    printf("a request retried without answers ended after %d rounds\n", rounds);
    assert_int_equal(rounds, 31);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

/* requestState and inputResponses are bounded: a state past 64 KiB is refused before
 * anything is decrypted, and answers too large to carry to the next round fail the
 * request instead of growing the state. Deeply nested _meta is parsed to the parser's
 * limit and refused past it. */
static void test_huge_state_answers_and_nesting_are_bounded(void **state)
{
    mh_host *h = *state;
    int runs = mh_runs(h, MH_ASK);
    char *big = malloc((1 << 20) + 1);
    memset(big, 'A', 1 << 20);
    memcpy(big, "v1.", 3);
    big[1 << 20] = '\0';
    json_t *req = mh_request(
        1, "tools/call", json_pack("{s:s, s:s}", "name", "ask", "requestState", big), ELICIT_CAPS);
    free(big);
    hc_response r;
    assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
    json_decref(req);
    json_decref(mh_expect(&r, 200, -32602, 1, "a requestState of 1 MiB"));
    hc_response_free(&r);
    assert_int_equal(mh_runs(h, MH_ASK), runs);

    /* A 3 MiB answer to the first of two questions: the second round cannot carry it. */
    char *name = malloc(3 << 20);
    memset(name, 'n', (3 << 20) - 1);
    name[(3 << 20) - 1] = '\0';
    req = mh_request(2, "tools/call",
                     json_pack("{s:s, s:{s:{s:s, s:{s:s}}}}", "name", "ask_two", "inputResponses",
                               "first", "action", "accept", "content", "name", name),
                     ELICIT_CAPS);
    free(name);
    assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
    json_decref(req);
    json_decref(mh_expect(&r, 200, -32603, 2, "an answer too large to carry"));
    hc_response_free(&r);

    /* Nesting: 2,000 levels inside _meta are parsed; 3,000 are refused by the parser. */
    for (int depth = 2000; depth <= 3000; depth += 1000) {
        json_t *deep = json_integer(1);
        for (int i = 0; i < depth; i++)
            deep = json_pack("{s:o}", "a", deep);
        req = mh_request(3, "tools/list", NULL, NULL);
        json_object_set_new(json_object_get(json_object_get(req, "params"), "_meta"), "x", deep);
        assert_int_equal(mh_post(h->port, req, NULL, &r), 0);
        json_decref(req);
        if (depth == 2000) {
            json_decref(mh_expect(&r, 200, 0, 3, "2,000 levels in _meta"));
        } else {
            json_t *msgs = mh_messages(&r, "3,000 levels in _meta");
            assert_int_equal(r.status, 400);
            assert_int_equal(json_integer_value(json_object_get(
                                 json_object_get(json_array_get(msgs, 0), "error"), "code")),
                             -32700);
            json_decref(msgs);
        }
        hc_response_free(&r);
    }
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
    assert_serves(h->port, 4, "after huge input");
}

/* ---- Slow senders ---- */

/* 100 modern requests that stop halfway (headers, or body) against 40 connections: the
 * half-sent headers make room, and the server serves a good client meanwhile. */
static void test_half_sent_modern_requests_do_not_lock_others_out(void **state)
{
    (void)state;
    mh_opts o = {.max_connections = 40};
    mh_host *h = own_host(&o);
    json_t *req = mh_request(1, "tools/call", json_pack("{s:s}", "name", "count"), NULL);
    size_t len;
    char *text = mh_format(h->port, req, &len);
    size_t head = (size_t)(strstr(text, "\r\n\r\n") - text) + 4;
    hc_conn c[100];
    for (int i = 0; i < 100; i++) {
        if (hc_connect(&c[i], h->port, MH_WAIT_MS) != 0) {
            c[i].fd = -1;
            continue;
        }
        /* Half of the head, or all of it and half of the body. */
        (void)hc_send(&c[i], text, i % 2 ? head / 2 : head + (len - head) / 2, 200);
        if (i % 10 == 9)
            assert_serves(h->port, 1000 + i, "a request among half-sent ones");
    }
    free(text);
    json_decref(req);
    assert_serves(h->port, 2000, "a request after 100 half-sent ones");
    for (int i = 0; i < 100; i++)
        hc_close(&c[i]);
    own_stop();
}

/* ---- Both eras ---- */

typedef struct era_worker {
    int port;
    int legacy;
    int ok, failed;
    pthread_t thread;
} era_worker;

static void *era_main(void *arg)
{
    era_worker *w = arg;
    char session[33] = "";
    if (w->legacy && hc_mcp_initialize(w->port, session, MH_WAIT_MS) != 0) {
        w->failed++;
        return NULL;
    }
    for (int i = 0; i < 150; i++) {
        hc_response r;
        int rc;
        if (w->legacy) {
            char *body = hc_tools_call_body(i + 2, "count", NULL);
            rc = hc_mcp_post(w->port, session, "MCP-Protocol-Version: 2025-11-25\r\n", body, &r,
                             MH_WAIT_MS);
            free(body);
        } else {
            json_t *req =
                mh_request(i + 2, "tools/call", json_pack("{s:s}", "name", "count"), NULL);
            rc = mh_post(w->port, req, NULL, &r);
            json_decref(req);
        }
        json_t *msgs = rc == 0 ? hc_messages(&r) : NULL;
        json_t *resp = json_array_get(msgs, json_array_size(msgs) - 1);
        json_t *result = json_object_get(resp, "result");
        /* The legacy era's results have no resultType; the modern era's do. */
        int right = r.status == 200 && result != NULL &&
                    (json_object_get(result, "resultType") != NULL) == !w->legacy;
        if (right)
            w->ok++;
        else
            w->failed++;
        json_decref(msgs);
        hc_response_free(&r);
    }
    if (w->legacy && hc_mcp_delete(w->port, session, MH_WAIT_MS) != 200)
        w->failed++;
    return NULL;
}

/* Legacy sessions and modern requests at once, with a listen and a legacy GET stream
 * open: every request is served in its own era, and a change reaches both. */
static void test_modern_and_legacy_traffic_at_once(void **state)
{
    mh_host *h = *state;
    hc_conn listen, get;
    json_t *req = listen_request(1);
    hc_response head;
    assert_int_equal(mh_open(&listen, h->port, req, &head), 0);
    json_decref(req);
    hc_response_free(&head);
    json_decref(hc_sse_next_json(&listen, MH_WAIT_MS, NULL));
    char session[33];
    assert_int_equal(hc_mcp_initialize(h->port, session, MH_WAIT_MS), 0);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", session);
    assert_int_equal(hc_connect(&get, h->port, MH_WAIT_MS), 0);
    assert_int_equal(hc_send_request(&get, h->port, "GET", "/mcp", hdrs, NULL, MH_WAIT_MS), 0);
    assert_int_equal(hc_read_head(&get, &head, MH_WAIT_MS), 0);
    assert_int_equal(head.status, 200);
    hc_response_free(&head);

    era_worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (era_worker){.port = h->port, .legacy = i % 2};
        assert_int_equal(pthread_create(&w[i].thread, NULL, era_main, &w[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(w[i].thread, NULL);
        if (w[i].failed != 0)
            fail_msg("%s worker %d: %d of its requests failed", w[i].legacy ? "legacy" : "modern",
                     i, w[i].failed);
    }
    assert_int_equal(mcp_server_notify(h->srv, "notifications/tools/list_changed", NULL), MCP_OK);
    json_t *m = hc_sse_next_json(&listen, MH_WAIT_MS, NULL);
    assert_string_equal(json_string_value(json_object_get(m, "method")),
                        "notifications/tools/list_changed");
    json_decref(m);
    m = hc_sse_next_json(&get, MH_WAIT_MS, NULL);
    assert_string_equal(json_string_value(json_object_get(m, "method")),
                        "notifications/tools/list_changed");
    if (json_object_get(json_object_get(m, "params"), "_meta") != NULL)
        fail_msg("the legacy stream's notification carries a subscription's _meta");
    json_decref(m);
    hc_close(&listen);
    hc_close(&get);
    assert_int_equal(hc_mcp_delete(h->port, session, MH_WAIT_MS), 200);
    assert_int_equal(mh_wait_sessions(h, 0, MH_WAIT_MS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_listens_cannot_hold_every_connection, own_cleanup),
        cmocka_unit_test_teardown(test_a_listen_that_never_reads_is_cut_and_leaves_nothing,
                                  own_cleanup),
        cmocka_unit_test_teardown(
            test_a_standalone_stream_cut_for_the_budget_resumes_and_loses_nothing, own_cleanup),
        cmocka_unit_test_teardown(test_a_stalled_listen_is_cut_and_leaves_nothing, own_cleanup),
        cmocka_unit_test_teardown(test_a_thousand_listens_cost_little_and_each_hears_a_change,
                                  own_cleanup),
        cmocka_unit_test_teardown(test_modern_posts_never_read_are_bounded, own_cleanup),
        cmocka_unit_test(test_abandoned_and_endless_rounds_keep_nothing),
        cmocka_unit_test(test_huge_state_answers_and_nesting_are_bounded),
        cmocka_unit_test_teardown(test_half_sent_modern_requests_do_not_lock_others_out,
                                  own_cleanup),
        cmocka_unit_test(test_modern_and_legacy_traffic_at_once),
    };
    return cmocka_run_group_tests_name("modern_hostile", tests, mh_group_setup, mh_group_teardown)
               ? 1
               : 0;
}
