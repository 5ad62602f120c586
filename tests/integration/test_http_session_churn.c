/* SPDX-License-Identifier: MIT */
/*
 * Sessions created and deleted by the ten thousand leave nothing behind
 * (the lesson of forgetting HTTP+SSE sessions on disconnect: the session table never
 * grows with dead entries). The
 * server runs with --max-sessions 1000, so 10,000 create+delete cycles would
 * hit 503 if deleted sessions stayed in the table; afterwards every deleted id
 * gets 404, a new initialize still works, and the server's resident memory
 * (VmRSS after a warm-up of 1,000 sessions) has grown by less than 10%.
 *
 * The requests travel over one keep-alive connection (reopened if the server
 * closes it) so that the test measures sessions, not TCP.
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

#define WARMUP 1000
#define CHURN 10000

static int setup(void **state)
{
    hc_asan_small_quarantine(1);
    static const char *const flags[] = {"--max-sessions", "1000", NULL};
    return hx_setup(state, flags, 0);
}

typedef struct kconn {
    hc_conn c;
    int open;
    int port;
    int reconnects;
} kconn;

/* One request on the keep-alive connection; returns the status, or fails. */
static int kreq(kconn *k, const char *method, const char *headers, const char *body,
                char session_out[33])
{
    if (!k->open) {
        if (hc_connect(&k->c, k->port, HX_REQ_MS) != 0)
            fail_msg("cannot connect to 127.0.0.1:%d", k->port);
        k->open = 1;
        k->reconnects++;
    }
    if (hc_send_request(&k->c, k->port, method, "/mcp", headers, body, HX_REQ_MS) != 0)
        fail_msg("%s /mcp: cannot send on the keep-alive connection", method);
    hc_response r;
    if (hc_read_response(&k->c, &r, HX_REQ_MS) != 0)
        fail_msg("%s /mcp: no complete response within %d ms (status %d)", method, HX_REQ_MS,
                 r.status);
    if (session_out != NULL) {
        const char *id = hc_header_get(&r, "mcp-session-id");
        snprintf(session_out, 33, "%s", id ? id : "");
    }
    const char *conn = hc_header_get(&r, "connection");
    if (k->c.eof || (conn != NULL && strcasecmp(conn, "close") == 0)) {
        hc_close(&k->c);
        k->open = 0;
    }
    int status = r.status;
    hc_response_free(&r);
    return status;
}

/* Creates a session and deletes it; the id goes to id. */
static void create_delete(kconn *k, const char *init, char id[33], int i)
{
    int st = kreq(k, "POST", HC_MCP_POST_HEADERS, init, id);
    if (st != 200 || strlen(id) != 32)
        fail_msg("session #%d: initialize got %d (id '%s'); with --max-sessions 1000 a 503 here "
                 "means deleted sessions are still in the table",
                 i, st, id);
    char hdrs[96];
    snprintf(hdrs, sizeof(hdrs), "Mcp-Session-Id: %s\r\n", id);
    st = kreq(k, "DELETE", hdrs, NULL, NULL);
    if (st != 200)
        fail_msg("session #%d: DELETE got %d", i, st);
}

static void test_ten_thousand_sessions_leave_table_empty_and_memory_flat(void **state)
{
    hx_fixture *f = *state;
    kconn k = {.port = f->port};
    char *init = hc_initialize_body(NULL);
    char id[33];
    long long t0 = hc_now_ms();

    for (int i = 0; i < WARMUP; i++)
        create_delete(&k, init, id, i);
    long rss_before = hc_server_rss_kb(&f->srv);
    assert_true(rss_before > 0);

    char(*ids)[33] = calloc(CHURN, sizeof(*ids));
    assert_non_null(ids);
    for (int i = 0; i < CHURN; i++)
        create_delete(&k, init, ids[i], WARMUP + i);
    long rss_after = hc_server_rss_kb(&f->srv);
    long long t1 = hc_now_ms();

    /* Every deleted id is unknown now. */
    for (int i = 0; i < CHURN; i++) {
        char hdrs[160];
        snprintf(hdrs, sizeof(hdrs), HC_MCP_POST_HEADERS "Mcp-Session-Id: %s\r\n", ids[i]);
        int st = kreq(&k, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL);
        if (st != 404)
            fail_msg("deleted session #%d (%s): a ping got %d, expected 404", i, ids[i], st);
    }
    /* And the table has room: a new session works. */
    char fresh[33];
    hx_new_session(f->port, fresh);
    assert_int_equal(hc_mcp_delete(f->port, fresh, HX_REQ_MS), 200);

    print_message("%d + %d sessions created and deleted in %lld ms over %d connection(s); "
                  "server VmRSS %ld KiB after warm-up, %ld KiB after (%+.1f%%)\n",
                  WARMUP, CHURN, t1 - t0, k.reconnects, rss_before, rss_after,
                  100.0 * (double)(rss_after - rss_before) / (double)rss_before);
    if (rss_after > rss_before + rss_before / 10)
        fail_msg("server VmRSS grew from %ld KiB to %ld KiB (more than 10%%) over %d sessions "
                 "created and deleted",
                 rss_before, rss_after, CHURN);
    if (k.open)
        hc_close(&k.c);
    free(ids);
    free(init);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ten_thousand_sessions_leave_table_empty_and_memory_flat),
    };
    int failed = cmocka_run_group_tests_name("http_session_churn", tests, setup, hx_teardown);
    return failed + hx_teardown_failures ? 1 : 0;
}
