/* SPDX-License-Identifier: MIT */
/*
 * Event ids and priming events over real sockets:
 *
 * - a resume with an id that was never issued (forged in the right format,
 *   or garbage), or with another session's valid id, gets 400 with a
 *   JSON-RPC error body, never a 200 stream;
 * - priming events only for 2025-11-25 sessions: a 2025-06-18 session gets
 *   ids on its events but no priming event, and its test_reconnection result
 *   follows on the POST stream;
 * - with --no-resumability there are no ids at all, and a GET with
 *   Last-Event-ID is just a new standalone stream;
 * - idle resumes of finished POST streams give way to a new GET at the
 *   session's limit, oldest first, and one that gave way is not let back in.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_expect.h"
#include "resume_check.h"

#define STEP_MS 10000
/* Keep-alive comments every 300 ms let a test see "nothing else came" as an event. */
#define KEEPALIVE_MS 300

static int setup_default(void **state)
{
    static const char *const flags[] = {"--keepalive-ms", "300", NULL};
    return hx_setup(state, flags, 1);
}

static int setup_no_resumability(void **state)
{
    static const char *const flags[] = {"--no-resumability", "--keepalive-ms", "300", NULL};
    return hx_setup(state, flags, 1);
}

/* Every event of a whole POST tools/call answer, in order (the body is read to its end). */
static hc_sse_event *post_call_events(int port, const char *session, long long id, const char *tool,
                                      const char *args, size_t *n, const char *what)
{
    hc_conn c;
    char *body = rc_call_body(id, tool, args, NULL);
    assert_non_null(body);
    int status = hc_mcp_post_open(&c, port, session, body, 0, STEP_MS);
    free(body);
    if (status != 200)
        fail_msg("%s: expected 200, got %d", what, status);
    hc_sse_event *evs = NULL;
    *n = 0;
    for (;;) {
        hc_sse_event ev;
        int r = hc_sse_next(&c, &ev, STEP_MS);
        if (r == 0)
            break;
        if (r < 0)
            fail_msg("%s: the POST stream did not end within %d ms", what, STEP_MS);
        if (ev.comment) {
            hc_sse_event_free(&ev);
            continue;
        }
        hc_sse_event *grown = realloc(evs, (*n + 1) * sizeof(*evs));
        assert_non_null(grown);
        evs = grown;
        evs[(*n)++] = ev;
    }
    if (!c.body_done)
        fail_msg("%s: the POST stream was cut instead of ending", what);
    hc_close(&c);
    return evs;
}

static void free_events(hc_sse_event *evs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hc_sse_event_free(&evs[i]);
    free(evs);
}

/* The id of the last event of an echo call on session (malloc'd). */
static char *last_id_of_echo(int port, const char *session, const char *what)
{
    size_t n;
    hc_sse_event *evs = post_call_events(port, session, 5, "echo", "{\"text\":\"hi\"}", &n, what);
    if (n == 0 || evs[n - 1].id == NULL)
        fail_msg("%s: expected the response event to carry an id", what);
    char *id = strdup(evs[n - 1].id);
    assert_non_null(id);
    free_events(evs, n);
    return id;
}

/* GET with Last-Event-ID must give 400 with a JSON-RPC error body (-32000). */
static void expect_resume_rejected(int port, const char *session, const char *last_id,
                                   const char *why)
{
    hc_conn c;
    int status = hc_mcp_get_open(&c, port, session, last_id, STEP_MS);
    if (status < 0)
        fail_msg("resume with %s (%s): no answer", why, last_id);
    if (status == 200)
        fail_msg("resume with %s (Last-Event-ID: %s): expected 400, got a 200 stream (%s)", why,
                 last_id, hc_header_get(&c.head, "content-type"));
    if (hc_read_body(&c, NULL, STEP_MS) != 0)
        fail_msg("resume with %s: status %d without a complete body", why, status);
    if (status != 400)
        fail_msg("resume with %s (Last-Event-ID: %s): expected 400, got %d %s", why, last_id,
                 status, c.head.body ? c.head.body : "");
    const char *ct = hc_header_get(&c.head, "content-type");
    if (ct == NULL || strncmp(ct, "application/json", 16) != 0)
        fail_msg("resume with %s: expected an application/json error body, got %s", why,
                 ct ? ct : "none");
    json_t *body = json_loads(c.head.body ? c.head.body : "", 0, NULL);
    const json_t *code = json_object_get(json_object_get(body, "error"), "code");
    if (!json_is_integer(code) || json_integer_value(code) != -32000)
        fail_msg("resume with %s: expected a JSON-RPC error -32000, got %s", why,
                 c.head.body ? c.head.body : "");
    json_decref(body);
    hc_close(&c);
}

/* ---- 5. Unknown, forged and foreign ids ---- */

static void test_resume_with_unknown_or_foreign_id_is_400(void **state)
{
    hx_fixture *f = *state;
    char *mine = last_id_of_echo(f->port, f->session, "echo on session 1");
    char other_session[33];
    hx_new_session(f->port, other_session);
    char *foreign = last_id_of_echo(f->port, other_session, "echo on session 2");

    /* Our ids look like <tag>-<stream>-<seq>; the forgeries keep that shape. */
    long long stream = rc_id_stream(mine), seq = rc_id_seq(mine);
    const char *dash = strchr(mine, '-');
    if (dash == NULL || stream < 0 || seq < 0)
        fail_msg("the event id %s is not <tag>-<stream>-<seq>", mine);
    int tag_len = (int)(dash - mine);
    char forged[160];

    snprintf(forged, sizeof(forged), "%.*s-%lld-%lld", tag_len, mine, stream, seq + 1000000);
    expect_resume_rejected(f->port, f->session, forged, "a seq never issued");
    snprintf(forged, sizeof(forged), "%.*s-%lld-%lld", tag_len, mine, stream + 1000, seq);
    expect_resume_rejected(f->port, f->session, forged, "a stream never opened");
    snprintf(forged, sizeof(forged), "%.*s-%lld-%lld", tag_len, "0123456789abcdef0123456789abcdef",
             stream, seq);
    if (strcmp(forged, mine) != 0)
        expect_resume_rejected(f->port, f->session, forged, "another tag");
    snprintf(forged, sizeof(forged), "%s0", mine);
    expect_resume_rejected(f->port, f->session, forged, "a valid id with a digit appended");
    snprintf(forged, sizeof(forged), "%s-1", mine);
    expect_resume_rejected(f->port, f->session, forged, "a valid id with a suffix");
    expect_resume_rejected(f->port, f->session, "garbage", "garbage");
    expect_resume_rejected(f->port, f->session, "--", "dashes only");
    expect_resume_rejected(f->port, f->session, "x-1-2", "a short tag");
    expect_resume_rejected(f->port, f->session, "0123456789abcdef-1-99999999999999999999999",
                           "an overflowing seq");
    expect_resume_rejected(f->port, f->session, foreign, "another session's valid id");
    expect_resume_rejected(f->port, other_session, mine, "the first session's id on the second");

    /* The genuine id still works: a finished stream with nothing missed stays open idle. */
    hc_conn c;
    int status = hc_mcp_get_open(&c, f->port, f->session, mine, STEP_MS);
    if (status != 200)
        fail_msg("resume with the session's own last id %s: expected 200, got %d", mine, status);
    hc_close(&c);
    free(mine);
    free(foreign);
}

/* ---- 9. Priming only for 2025-11-25 ---- */

static void test_2025_06_18_session_gets_ids_but_no_priming(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    if (hc_mcp_initialize_version(f->port, "2025-06-18", session, STEP_MS) != 0)
        fail_msg("cannot initialize a 2025-06-18 session");

    size_t n;
    hc_sse_event *evs =
        post_call_events(f->port, session, 90, "notify", "{\"count\":3}", &n, "notify on 06-18");
    if (n != 4)
        fail_msg("notify count=3 on a 2025-06-18 session: expected 4 events (3 notifications "
                 "and the result), got %zu",
                 n);
    for (size_t i = 0; i < n; i++) {
        if (evs[i].id == NULL)
            fail_msg("2025-06-18 session: event %zu has no id", i + 1);
        if (evs[i].retry >= 0 || evs[i].data == NULL || evs[i].data[0] == '\0')
            fail_msg("2025-06-18 session: event %zu looks like a priming event (retry %ld, "
                     "data '%s')",
                     i + 1, evs[i].retry, evs[i].data ? evs[i].data : "(none)");
    }
    free_events(evs, n);

    /* The stream cannot be closed for an older client: the result simply follows. */
    evs = post_call_events(f->port, session, 91, "test_reconnection", NULL, &n,
                           "test_reconnection on 06-18");
    if (n != 1 || evs[0].data == NULL || strstr(evs[0].data, "Reconnection test completed") == NULL)
        fail_msg("test_reconnection on a 2025-06-18 session: expected only the result on the "
                 "POST stream, got %zu events, the first %s",
                 n, n > 0 && evs[0].data ? evs[0].data : "(none)");
    free_events(evs, n);

    /* Nor does its standalone GET stream start with a priming event. */
    hc_conn c;
    if (hc_mcp_get_open(&c, f->port, session, NULL, STEP_MS) != 200)
        fail_msg("GET on a 2025-06-18 session: expected 200");
    hc_sse_event ev;
    int r = hc_sse_next(&c, &ev, STEP_MS);
    if (r != 1 || !ev.comment)
        fail_msg("GET on a 2025-06-18 session: expected a keep-alive comment first, got %s "
                 "(rc %d)",
                 r == 1 ? (ev.id ? ev.id : "an event") : "nothing", r);
    hc_sse_event_free(&ev);
    hc_close(&c);

    /* The 2025-11-25 session of the fixture gets priming on both. */
    evs =
        post_call_events(f->port, f->session, 92, "notify", "{\"count\":1}", &n, "notify on 11-25");
    if (n < 1 || !hc_sse_is_priming(&evs[0]) || evs[0].retry < 0)
        fail_msg("2025-11-25 session: expected a priming event first on the POST stream");
    free_events(evs, n);
    if (hc_mcp_get_open(&c, f->port, f->session, NULL, STEP_MS) != 200)
        fail_msg("GET on a 2025-11-25 session: expected 200");
    r = hc_sse_next(&c, &ev, STEP_MS);
    if (r != 1 || !hc_sse_is_priming(&ev) || ev.retry < 0)
        fail_msg("GET on a 2025-11-25 session: expected a priming event first (rc %d)", r);
    hc_sse_event_free(&ev);
    hc_close(&c);
}

static void test_no_resumability_gives_no_ids_and_plain_streams(void **state)
{
    hx_fixture *f = *state;
    size_t n;
    hc_sse_event *evs = post_call_events(f->port, f->session, 93, "notify", "{\"count\":3}", &n,
                                         "notify with --no-resumability");
    if (n != 4)
        fail_msg("--no-resumability: expected 3 notifications and the result, got %zu events", n);
    for (size_t i = 0; i < n; i++)
        if (evs[i].id != NULL || evs[i].retry >= 0 || evs[i].data == NULL || evs[i].data[0] == '\0')
            fail_msg("--no-resumability: event %zu has id=%s retry=%ld data='%s'", i + 1,
                     evs[i].id ? evs[i].id : "(none)", evs[i].retry,
                     evs[i].data ? evs[i].data : "(none)");
    free_events(evs, n);

    /* Nothing to resume: the stream of test_reconnection stays open until the result. */
    evs = post_call_events(f->port, f->session, 94, "test_reconnection", NULL, &n,
                           "test_reconnection with --no-resumability");
    if (n != 1 || evs[0].data == NULL || strstr(evs[0].data, "Reconnection test completed") == NULL)
        fail_msg("test_reconnection with --no-resumability: expected only the result on the POST "
                 "stream, got %zu events",
                 n);
    free_events(evs, n);

    /* Subscribe so that a standalone notification can show the GET is a live stream. */
    hc_conn c;
    int status =
        hc_mcp_post_open(&c, f->port, f->session,
                         "{\"jsonrpc\":\"2.0\",\"id\":95,\"method\":\"resources/subscribe\","
                         "\"params\":{\"uri\":\"test://watched-resource\"}}",
                         0, STEP_MS);
    assert_int_equal(status, 200);
    assert_int_equal(hc_read_body(&c, NULL, STEP_MS), 0);
    hc_close(&c);

    static const char *const ids[] = {"0123456789abcdef-1-5", "garbage"};
    for (size_t k = 0; k < 2; k++) {
        status = hc_mcp_get_open(&c, f->port, f->session, ids[k], STEP_MS);
        if (status != 200)
            fail_msg("--no-resumability: GET with Last-Event-ID %s: expected 200 (a plain "
                     "stream), got %d",
                     ids[k], status);
        hc_sse_event ev;
        int r = hc_sse_next(&c, &ev, STEP_MS);
        if (r != 1 || !ev.comment)
            fail_msg("--no-resumability: GET with Last-Event-ID %s: expected only keep-alive "
                     "comments at first, got %s (rc %d)",
                     ids[k], r == 1 ? (ev.data ? ev.data : "an event") : "nothing", r);
        hc_sse_event_free(&ev);

        evs = post_call_events(f->port, f->session, 96, "trigger_resource_update",
                               "{\"uri\":\"test://watched-resource\"}", &n, "trigger");
        free_events(evs, n);
        r = hc_sse_next_block(&c, &ev, STEP_MS);
        if (r != 1 || ev.data == NULL || strstr(ev.data, "notifications/resources/updated") == NULL)
            fail_msg("--no-resumability: the GET stream (Last-Event-ID %s) did not carry the "
                     "resources/updated notification (rc %d)",
                     ids[k], r);
        if (ev.id != NULL)
            fail_msg("--no-resumability: a standalone event has the id %s", ev.id);
        hc_sse_event_free(&ev);
        hc_close(&c);
    }
}

/* The server's default --max-get-streams. */
#define GET_LIMIT 16
#define IDLE_RESUMES 50

/*
 * Some clients (the v1 TypeScript SDK) resume every finished POST stream. Each such
 * resume stays open and idle (closing it would start a reconnect loop), and they
 * counted toward the session's GET limit: after 16, every new GET of the session got
 * 429. Now the oldest idle resume gives way to each newcomer and ends, as its POST
 * stream had; its client's reconnect is refused (429) rather than let in to push out
 * another one.
 */
static void test_idle_resumes_give_way_to_a_new_get_oldest_first(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    hx_new_session(f->port, session);
    hc_conn idle[IDLE_RESUMES];
    char *ids[IDLE_RESUMES];
    for (int i = 0; i < IDLE_RESUMES; i++) {
        ids[i] = last_id_of_echo(f->port, session, "an echo to resume");
        int status = hc_mcp_get_open(&idle[i], f->port, session, ids[i], STEP_MS);
        if (status != 200)
            fail_msg("idle resume %d of %d of a finished stream: expected 200, got %d", i + 1,
                     IDLE_RESUMES, status);
    }
    hc_conn g;
    int status = hc_mcp_get_open(&g, f->port, session, NULL, STEP_MS);
    if (status != 200)
        fail_msg("a new GET after %d idle resumes: expected 200, got %d", IDLE_RESUMES, status);
    /* The newest GET_LIMIT - 1 idle resumes stay open beside it; the older ones ended
     * cleanly, as their POST streams had. */
    int kept_from = IDLE_RESUMES - (GET_LIMIT - 1);
    for (int i = 0; i < IDLE_RESUMES; i++) {
        hc_sse_event ev;
        int r = hc_sse_next(&idle[i], &ev, i < kept_from ? STEP_MS : 3 * KEEPALIVE_MS + 2000);
        if (r > 0)
            hc_sse_event_free(&ev);
        if (i < kept_from && (r != 0 || !idle[i].body_done))
            fail_msg("idle resume %d (of the %d oldest): expected it to end cleanly, got %s", i + 1,
                     kept_from, r > 0 ? "an event" : "a cut or nothing");
        if (i >= kept_from && r <= 0)
            fail_msg("idle resume %d (of the %d newest): expected it to stay open (a keep-alive), "
                     "got %s",
                     i + 1, GET_LIMIT - 1, r == 0 ? "its end" : "nothing");
    }
    /* One that gave way comes back: refused, and nothing else is pushed out. */
    hc_conn back;
    status = hc_mcp_get_open(&back, f->port, session, ids[kept_from - 1], STEP_MS);
    if (status != 429)
        fail_msg("the reconnect of an idle resume that gave way: expected 429, got %d", status);
    hc_close(&back);
    hc_sse_event ev;
    int r = hc_sse_next(&idle[kept_from], &ev, 3 * KEEPALIVE_MS + 2000);
    if (r <= 0)
        fail_msg("the oldest idle resume kept: ended by a refused reconnect (%d)", r);
    hc_sse_event_free(&ev);
    for (int i = 0; i < IDLE_RESUMES; i++) {
        hc_close(&idle[i]);
        free(ids[i]);
    }
    hc_close(&g);
}

int main(void)
{
    const struct CMUnitTest with_store[] = {
        cmocka_unit_test(test_resume_with_unknown_or_foreign_id_is_400),
        cmocka_unit_test(test_2025_06_18_session_gets_ids_but_no_priming),
        cmocka_unit_test(test_idle_resumes_give_way_to_a_new_get_oldest_first),
    };
    const struct CMUnitTest without_store[] = {
        cmocka_unit_test(test_no_resumability_gives_no_ids_and_plain_streams),
    };
    int failed = cmocka_run_group_tests_name("resume_ids", with_store, setup_default, hx_teardown);
    failed += cmocka_run_group_tests_name("resume_ids_no_resumability", without_store,
                                          setup_no_resumability, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
