/* SPDX-License-Identifier: MIT */
/*
 * Authorization on a cluster: three mcp-everything nodes sharing a redis-server behind
 * a real HAProxy (every request to the next node), each checking JWT access tokens with
 * the keys server_auth serves (made by the test). A session opened by alice is served to
 * her by every node, and is unknown (404) to bob on every node, though his token is
 * good: the session's record in Redis carries who it belongs to. An HTTP+SSE session
 * (2024-11-05) lives on the node that holds its event stream; a POST to /messages that
 * reaches another node is refused there as it would be on its own (404 to bob, 403 to a
 * token without the scope resources/list needs) before it is sent on.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster_host.h"
#include "harness.h"
#include "http_expect.h"
#include "jwt_tokens.h"

#define RESOURCE "https://mcp.example.test/mcp"
#define ISSUER "https://as.example.test"

typedef struct fixture {
    hc_server keys; /* server_auth serving the JWKS */
    ch_cluster cluster;
    char jwks_path[64];
    cjose_jwk_t *key;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->key = jt_make_key(1, "cluster-key");
    snprintf(f->jwks_path, sizeof(f->jwks_path), "/tmp/mcp-cluster-jwks-%d.json", (int)getpid());
    jt_write_jwks(f->jwks_path, &f->key, 1);
    const char *kflags[] = {"--jwks-file", f->jwks_path, NULL};
    if (hc_server_start_program(&f->keys, "server_auth", 0, kflags, NULL, HX_START_MS) != 0)
        return -1;
    char uri[128];
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/jwks", f->keys.port);
    const char *args[] = {"--auth-resource",
                          RESOURCE,
                          "--auth-issuer",
                          ISSUER,
                          "--auth-jwks-uri",
                          uri,
                          "--auth-method-scope",
                          "resources/list=mcp:admin",
                          NULL};
    if (ch_start(&f->cluster, 3, CH_REDIS, args) != 0) {
        hc_server_stop_check(&f->keys, HX_STOP_MS);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = ch_stop(&f->cluster);
    if (hc_server_stop_check(&f->keys, HX_STOP_MS) != 0)
        rc = -1;
    unlink(f->jwks_path);
    cjose_jwk_release(f->key);
    free(f);
    return rc;
}

/* "Authorization: Bearer ...\r\n" with a token of sub's with scope (malloc'd). */
static char *auth_header(fixture *f, const char *sub, const char *scope)
{
    char *token =
        jt_sign(f->key, "RS256", "at+jwt", NULL, jt_claims(ISSUER, RESOURCE, sub, 600, scope));
    char *hdrs = NULL;
    assert_true(asprintf(&hdrs, "Authorization: Bearer %s\r\n", token) > 0);
    free(token);
    return hdrs;
}

/* A POST of body on session (NULL: none) with sub's token, to port: the response. */
static void post_as(fixture *f, int port, const char *sub, const char *session, const char *body,
                    hc_response *r)
{
    char *hdrs = auth_header(f, sub, "mcp:tools");
    assert_int_equal(hc_mcp_post(port, session, hdrs, body, r, HX_REQ_MS), 0);
    free(hdrs);
}

/* POSTs body to an HTTP+SSE session's path on port with sub's token of scope: the status. */
static int post_messages(fixture *f, int port, const char *path, const char *sub, const char *scope,
                         const char *body)
{
    char *auth = auth_header(f, sub, scope);
    char *hdrs = NULL;
    assert_true(asprintf(&hdrs, "Content-Type: application/json\r\n%s", auth) > 0);
    free(auth);
    hc_response r;
    assert_int_equal(hc_request(port, "POST", path, hdrs, body, &r, HX_REQ_MS), 0);
    free(hdrs);
    int status = r.status;
    hc_response_free(&r);
    return status;
}

static void test_an_http_sse_session_is_refused_to_others_on_every_node(void **state)
{
    fixture *f = *state;
    hc_conn c;
    char path[200];
    char *auth = auth_header(f, "alice", "mcp:tools mcp:admin");
    hx_open_httpsse(&c, ch_node_port(&f->cluster, 0), auth, path, sizeof(path));
    free(auth);
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}";
    const char *list = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}";
    for (int i = 0; i < 3; i++) {
        int port = ch_node_port(&f->cluster, i);
        int st = post_messages(f, port, path, "bob", "mcp:tools mcp:admin", ping);
        if (st != 404)
            fail_msg("node%d: bob posting to alice's HTTP+SSE session: %d, not 404", i, st);
        st = post_messages(f, port, path, "alice", "mcp:tools", list);
        if (st != 403)
            fail_msg("node%d: resources/list with a token without mcp:admin: %d, not 403", i, st);
        st = post_messages(f, port, path, "alice", "mcp:tools mcp:admin", ping);
        if (st != 202)
            fail_msg("node%d: alice's ping on her HTTP+SSE session: %d, not 202", i, st);
    }
    hc_close(&c);
}

static void test_a_session_is_its_principals_on_every_node(void **state)
{
    fixture *f = *state;
    int lb = ch_lb_port(&f->cluster);
    hc_response r;
    char *init = hc_initialize_body(NULL);
    post_as(f, lb, "alice", NULL, init, &r);
    free(init);
    hx_expect_status(&r, 200, "alice's initialize");
    char session[33];
    snprintf(session, sizeof(session), "%s", hc_header_get(&r, "mcp-session-id"));
    hc_response_free(&r);
    post_as(f, lb, "alice", session,
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r);
    hx_expect_status(&r, 202, "notifications/initialized");
    hc_response_free(&r);
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}";
    for (int i = 0; i < 3; i++) {
        int port = ch_node_port(&f->cluster, i);
        post_as(f, port, "alice", session, ping, &r);
        if (r.status != 200)
            fail_msg("node%d: alice's ping on her session: %d %s", i, r.status, r.body);
        hc_response_free(&r);
        /* bob's token is good: the session is not his, on any node. */
        post_as(f, port, "bob", session, ping, &r);
        if (r.status != 404)
            fail_msg("node%d: bob's ping on alice's session: %d %s", i, r.status, r.body);
        hc_response_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_session_is_its_principals_on_every_node),
        cmocka_unit_test(test_an_http_sse_session_is_refused_to_others_on_every_node),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
