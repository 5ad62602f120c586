/* SPDX-License-Identifier: MIT */
/*
 * The authorization gate of the HTTP endpoint, over real sockets, against
 * server_auth (a scripted verifier): the Protected Resource Metadata document
 * (RFC 9728), every refusal with its exact challenge (RFC 6750: 400, 401, 403) and
 * the 503 of a verifier that cannot decide, the principal in handlers, the cache of
 * verified tokens, sessions bound to the principal that opened them (Streamable
 * HTTP and HTTP+SSE), and a client that leaves while its token is being checked.
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
#include "modern_host.h"

#define RESOURCE "https://mcp.example.test/mcp"
#define METADATA_URL "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
#define PING "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"

static int start(void **state, const char *const flags[])
{
    hx_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL ||
        hc_server_start_program(&f->srv, "server_auth", 0, flags, NULL, HX_START_MS) != 0) {
        free(f);
        return -1;
    }
    f->port = f->srv.port;
    *state = f;
    return 0;
}

static int setup_scoped(void **state)
{
    const char *flags[] = {"--resource", RESOURCE, "--scope", "mcp:tools", "--root", NULL};
    return start(state, flags);
}

static int setup_tool_errors(void **state)
{
    const char *flags[] = {
        "--resource", RESOURCE, "--scope", "mcp:tools", "--scope-error-as-result", NULL};
    return start(state, flags);
}

static int setup_issuer(void **state)
{
    const char *flags[] = {"--resource", RESOURCE, "--issuer", "https://as.test", NULL};
    return start(state, flags);
}

/* A POST of body with "Authorization: Bearer token" (token NULL: none) and extra
 * header lines; the whole response into r. */
/* When set, post_with sends on this keep-alive connection instead of a new one each time. */
static hc_conn *kept;

static void post_with(int port, const char *token, const char *session, const char *extra,
                      const char *body, hc_response *r)
{
    char hdrs[16384];
    snprintf(hdrs, sizeof(hdrs), "%s%s%s%s%s%s%s%s", HC_MCP_POST_HEADERS,
             session ? "Mcp-Session-Id: " : "", session ? session : "", session ? "\r\n" : "",
             token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "",
             extra ? extra : "");
    int rc = kept == NULL ? hc_request(port, "POST", "/mcp", hdrs, body, r, HX_REQ_MS)
             : hc_send_request(kept, port, "POST", "/mcp", hdrs, body, HX_REQ_MS) != 0
                 ? -1
                 : hc_read_response(kept, r, HX_REQ_MS);
    if (rc != 0)
        fail_msg("POST with token %.40s: no response", token ? token : "(none)");
}

/* Expects status with exactly this WWW-Authenticate (NULL: none) and a JSON-RPC error
 * whose message holds needle. */
static void expect_refusal(const hc_response *r, int status, const char *challenge,
                           const char *needle, const char *what)
{
    if (r->status != status)
        fail_msg("%s: status %d, expected %d (body %s)", what, r->status, status,
                 r->body ? r->body : "");
    const char *got = hc_header_get(r, "www-authenticate");
    if (challenge == NULL ? got != NULL : got == NULL || strcmp(got, challenge) != 0)
        fail_msg("%s: WWW-Authenticate\n  got:      %s\n  expected: %s", what, got ? got : "(none)",
                 challenge ? challenge : "(none)");
    assert_int_equal(hc_header_count(r, "www-authenticate"), challenge ? 1 : 0);
    json_t *err = hx_expect_error(r, status, -32000, what);
    hx_expect_message_has(err, needle, what);
    json_decref(err);
}

/* ---- The metadata document ---- */

static void test_metadata_is_served_at_the_path_inserted_uri_and_the_root(void **state)
{
    hx_fixture *f = *state;
    const char *paths[] = {"/.well-known/oauth-protected-resource/mcp",
                           "/.well-known/oauth-protected-resource"};
    for (size_t i = 0; i < 2; i++) {
        hc_response r;
        /* No token needed, any origin may read it (browser clients discover with it). */
        assert_int_equal(hc_request(f->port, "GET", paths[i], "Origin: https://elsewhere.test\r\n",
                                    NULL, &r, HX_REQ_MS),
                         0);
        hx_expect_status(&r, 200, paths[i]);
        assert_string_equal(hc_header_get(&r, "access-control-allow-origin"), "*");
        assert_string_equal(hc_header_get(&r, "content-type"), "application/json");
        json_t *doc = json_loads(r.body, 0, NULL);
        assert_non_null(doc);
        assert_string_equal(json_string_value(json_object_get(doc, "resource")), RESOURCE);
        assert_string_equal(
            json_string_value(json_array_get(json_object_get(doc, "authorization_servers"), 0)),
            "https://as.test");
        assert_string_equal(
            json_string_value(json_array_get(json_object_get(doc, "bearer_methods_supported"), 0)),
            "header");
        json_decref(doc);
        hc_response_free(&r);
    }
    hc_response r;
    assert_int_equal(hc_request(f->port, "OPTIONS", paths[0],
                                "Origin: https://elsewhere.test\r\n"
                                "Access-Control-Request-Method: GET\r\n"
                                "Access-Control-Request-Headers: mcp-protocol-version\r\n",
                                NULL, &r, HX_REQ_MS),
                     0);
    hx_expect_status(&r, 204, "preflight of the metadata");
    assert_string_equal(hc_header_get(&r, "access-control-allow-origin"), "*");
    assert_string_equal(hc_header_get(&r, "access-control-allow-headers"), "*");
    hc_response_free(&r);
    assert_int_equal(hc_request(f->port, "POST", paths[0], NULL, "{}", &r, HX_REQ_MS), 0);
    hx_expect_status(&r, 405, "POST to the metadata");
    assert_string_equal(hc_header_get(&r, "allow"), "GET, HEAD, OPTIONS");
    hc_response_free(&r);
}

/* ---- Refusals ---- */

static void test_no_token_gets_401_with_metadata_and_scope(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    post_with(f->port, NULL, NULL, NULL, PING, &r);
    expect_refusal(&r, 401, "Bearer resource_metadata=\"" METADATA_URL "\", scope=\"mcp:tools\"",
                   "an access token is required", "no token");
    /* The error answers the request's own id. */
    json_t *body = json_loads(r.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(body, "id")), 7);
    json_decref(body);
    hc_response_free(&r);
    /* Another scheme is no bearer token either. */
    post_with(f->port, NULL, NULL, "Authorization: Basic YTpi\r\n", PING, &r);
    expect_refusal(&r, 401, "Bearer resource_metadata=\"" METADATA_URL "\", scope=\"mcp:tools\"",
                   "an access token is required", "Basic credentials");
    hc_response_free(&r);
    /* Every verb and the HTTP+SSE endpoints stand behind the gate. */
    const char *const targets[][2] = {
        {"GET", "/mcp"}, {"DELETE", "/mcp"}, {"GET", "/sse"}, {"POST", "/messages?sessionId=x"}};
    for (size_t i = 0; i < sizeof(targets) / sizeof(*targets); i++) {
        assert_int_equal(hc_request(f->port, targets[i][0], targets[i][1],
                                    "Accept: application/json, text/event-stream\r\n"
                                    "Content-Type: application/json\r\n",
                                    strcmp(targets[i][0], "POST") == 0 ? PING : NULL, &r,
                                    HX_REQ_MS),
                         0);
        if (r.status != 401)
            fail_msg("%s %s without a token: %d, expected 401", targets[i][0], targets[i][1],
                     r.status);
        hc_response_free(&r);
    }
}

static void test_each_bad_token_gets_401_invalid_token_with_its_reason(void **state)
{
    hx_fixture *f = *state;
    const struct {
        const char *token, *description;
    } cases[] = {
        {"expired", "The access token expired"},
        {"wrongaud", "The access token was issued for another resource"},
        {"noaud", "The access token names no audience"},
        {"future", "The access token is not valid yet"},
        {"rejected", "The access token was revoked"},
        {"unknown", "The access token is not valid"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        hc_response r;
        post_with(f->port, cases[i].token, NULL, NULL, PING, &r);
        char want[512];
        snprintf(want, sizeof(want),
                 "Bearer error=\"invalid_token\", error_description=\"%s\", "
                 "resource_metadata=\"" METADATA_URL "\"",
                 cases[i].description);
        expect_refusal(&r, 401, want, "invalid access token", cases[i].token);
        hc_response_free(&r);
    }
    /* Malformed or oversized: refused before any verifier sees it. */
    hc_response r;
    post_with(f->port, "a,b", NULL, NULL, PING, &r);
    expect_refusal(&r, 401,
                   "Bearer error=\"invalid_token\", error_description=\"The access token is "
                   "malformed\", resource_metadata=\"" METADATA_URL "\"",
                   "invalid access token", "malformed token");
    hc_response_free(&r);
    char *huge = malloc(9001);
    assert_non_null(huge);
    memset(huge, 'A', 9000);
    huge[9000] = '\0';
    post_with(f->port, huge, NULL, NULL, PING, &r);
    free(huge);
    expect_refusal(&r, 401,
                   "Bearer error=\"invalid_token\", error_description=\"The access token is too "
                   "long\", resource_metadata=\"" METADATA_URL "\"",
                   "invalid access token", "a token of 9000 bytes");
    hc_response_free(&r);
}

static void test_token_in_query_or_twice_gets_400_invalid_request(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    assert_int_equal(hc_request(f->port, "POST", "/mcp?access_token=alice", HC_MCP_POST_HEADERS,
                                PING, &r, HX_REQ_MS),
                     0);
    expect_refusal(&r, 400,
                   "Bearer error=\"invalid_request\", error_description=\"Access tokens are not "
                   "accepted in the query string\", resource_metadata=\"" METADATA_URL "\"",
                   "access token in the query string", "token in the query");
    hc_response_free(&r);
    post_with(f->port, "alice", NULL, "Authorization: Bearer alice\r\n", PING, &r);
    expect_refusal(&r, 400,
                   "Bearer error=\"invalid_request\", error_description=\"More than one "
                   "Authorization header\", resource_metadata=\"" METADATA_URL "\"",
                   "more than one Authorization header", "two Authorization headers");
    hc_response_free(&r);
}

static void test_missing_scope_gets_403_insufficient_scope(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    post_with(f->port, "alice-noscope", NULL, NULL, PING, &r);
    expect_refusal(&r, 403,
                   "Bearer error=\"insufficient_scope\", scope=\"mcp:tools\", "
                   "resource_metadata=\"" METADATA_URL
                   "\", error_description=\"The access token lacks a scope this server "
                   "requires\"",
                   "insufficient scope", "a token without mcp:tools");
    hc_response_free(&r);
}

static void test_verifier_that_cannot_decide_gets_503_without_a_challenge(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    post_with(f->port, "down", NULL, NULL, PING, &r);
    expect_refusal(&r, 503, NULL, "cannot be checked now", "verifier down");
    hc_response_free(&r);
    /* The reason goes to the server's log, the token never. */
    assert_int_equal(
        hc_server_wait_stderr(&f->srv, "the test's authorization server is down", HX_REQ_MS), 0);
    char *log = hc_server_stderr(&f->srv);
    assert_null(strstr(log, "Bearer"));
    free(log);
}

static void test_issuer_must_match_when_configured(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    post_with(f->port, "otheriss", NULL, NULL, PING, &r);
    expect_refusal(&r, 401,
                   "Bearer error=\"invalid_token\", error_description=\"The access token was "
                   "issued by another authorization server\", resource_metadata=\"" METADATA_URL
                   "\"",
                   "invalid access token", "another issuer");
    hc_response_free(&r);
    char *init = hc_initialize_body(NULL);
    post_with(f->port, "alice", NULL, NULL, init, &r);
    free(init);
    hx_expect_status(&r, 200, "alice, from the configured issuer");
    hc_response_free(&r);
}

/* ---- Admitted requests ---- */

/* Initializes a session with token; its id into session. */
static void initialize_as(int port, const char *token, char session[33])
{
    hc_response r;
    char *body = hc_initialize_body(NULL);
    post_with(port, token, NULL, NULL, body, &r);
    free(body);
    hx_expect_status(&r, 200, "initialize");
    const char *id = hc_header_get(&r, "mcp-session-id");
    assert_non_null(id);
    snprintf(session, 33, "%s", id);
    hc_response_free(&r);
    post_with(port, token, session, NULL,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r);
    hx_expect_status(&r, 202, "notifications/initialized");
    hc_response_free(&r);
}

/* The text tools/call `tool` answers on session with token. */
static char *call_as(int port, const char *token, const char *session, const char *tool)
{
    hc_response r;
    char *body = hc_tools_call_body(3, tool, NULL);
    post_with(port, token, session, NULL, body, &r);
    free(body);
    hx_expect_status(&r, 200, tool);
    json_t *msgs = hx_messages(&r, tool);
    char *text = strdup(hx_result_text(hx_find_response(msgs, 3, tool), tool));
    json_decref(msgs);
    hc_response_free(&r);
    return text;
}

/* r is the 403 that asks for mcp:admin besides the required mcp:tools, byte for byte. */
static void expect_step_up_to_admin(hc_response *r, const char *what)
{
    expect_refusal(r, 403,
                   "Bearer error=\"insufficient_scope\", scope=\"mcp:tools mcp:admin\", "
                   "resource_metadata=\"" METADATA_URL "\", error_description=\"The access token "
                   "lacks a scope this request needs\"",
                   "insufficient scope", what);
}

/* alice (scope mcp:tools) calls the tool admin (scope mcp:admin) on a session of hers. */
static void alice_calls_admin(int port, hc_response *r)
{
    char session[33];
    initialize_as(port, "alice", session);
    char *body = hc_tools_call_body(3, "admin", NULL);
    post_with(port, "alice", session, NULL, body, r);
    free(body);
}

static void test_a_tool_without_its_scope_gets_403_naming_every_scope_needed(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    alice_calls_admin(f->port, &r);
    expect_step_up_to_admin(&r, "alice calling admin");
    hc_response_free(&r);
    /* A token with the scope: the call runs. */
    char root_session[33];
    initialize_as(f->port, "root", root_session);
    char *text = call_as(f->port, "root", root_session, "admin");
    assert_string_equal(text, "done");
    free(text);
}

static void test_a_tool_without_its_scope_can_answer_with_a_tool_error(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    alice_calls_admin(f->port, &r);
    hx_expect_status(&r, 200, "alice calling admin, tool errors asked for");
    json_t *msgs = hx_messages(&r, "admin");
    json_t *resp = hx_find_response(msgs, 3, "admin");
    json_t *result = json_object_get(resp, "result");
    assert_true(json_is_true(json_object_get(result, "isError")));
    assert_non_null(strstr(hx_result_text(resp, "admin"), "\"mcp:admin\""));
    json_decref(msgs);
    hc_response_free(&r);
}

/* token lists resources on a session of its own. */
static void list_resources_as(int port, const char *token, hc_response *r)
{
    char session[33];
    initialize_as(port, token, session);
    post_with(port, token, session, NULL,
              "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}", r);
}

/* resources/list needs mcp:admin (server_auth's method_scopes): 403 with the step-up
 * challenge, whether the server answers a tool's missing scopes with 403 or with a
 * tool error (this test runs with both). */
static void test_a_method_without_its_scope_gets_403_naming_every_scope_needed(void **state)
{
    hx_fixture *f = *state;
    hc_response r;
    list_resources_as(f->port, "alice", &r);
    expect_step_up_to_admin(&r, "alice listing resources");
    hc_response_free(&r);
    /* Other methods need only the required scope; root has mcp:admin too. */
    char session[33];
    initialize_as(f->port, "alice", session);
    char *text = call_as(f->port, "alice", session, "whoami");
    assert_non_null(strstr(text, "sub=alice"));
    free(text);
    list_resources_as(f->port, "root", &r);
    hx_expect_status(&r, 200, "root listing resources");
    json_t *msgs = hx_messages(&r, "resources/list");
    assert_non_null(hx_find_response(msgs, 4, "resources/list"));
    json_decref(msgs);
    hc_response_free(&r);
}

static void test_handlers_see_the_principal_of_their_request(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    initialize_as(f->port, "alice", session);
    char *who = call_as(f->port, "alice", session, "whoami");
    assert_string_equal(who, "sub=alice client=test-client scopes=mcp:tools");
    free(who);
    /* A verification is remembered: the same token again is not verified again. */
    char *before = call_as(f->port, "alice", session, "verifications");
    char *after = call_as(f->port, "alice", session, "verifications");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* A connection remembers its last credential (no parse, digest or lookup for the same
 * one again); one that changes its token is judged by the new one at once, on the same
 * connection: bob is bob, alice's session is not his, a refused token is refused. */
static void test_a_connection_that_changes_its_token_is_judged_by_the_new_one(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
    kept = &c;
    char alice[33], bob[33];
    initialize_as(f->port, "alice", alice);
    char *who = call_as(f->port, "alice", alice, "whoami");
    assert_non_null(strstr(who, "sub=alice"));
    free(who);
    initialize_as(f->port, "bob", bob);
    who = call_as(f->port, "bob", bob, "whoami");
    assert_non_null(strstr(who, "sub=bob"));
    free(who);
    hc_response r;
    char *body = hc_tools_call_body(3, "whoami", NULL);
    post_with(f->port, "bob", alice, NULL, body, &r);
    hx_expect_status(&r, 404, "bob on alice's session, on the connection alice used");
    hc_response_free(&r);
    post_with(f->port, "rejected", alice, NULL, body, &r);
    hx_expect_status(&r, 401, "a refused token on that connection");
    hc_response_free(&r);
    free(body);
    /* alice again on the same connection: hers still. */
    who = call_as(f->port, "alice", alice, "whoami");
    assert_non_null(strstr(who, "sub=alice"));
    free(who);
    kept = NULL;
    hc_close(&c);
}

static void test_a_session_is_unknown_to_another_principal(void **state)
{
    hx_fixture *f = *state;
    char session[33];
    initialize_as(f->port, "alice", session);
    hc_response r;
    /* bob's token is good, but the session is alice's: 404, as for no session at all. */
    post_with(f->port, "bob", session, NULL, PING, &r);
    json_t *err = hx_expect_error(&r, 404, -32600, "bob on alice's session");
    hx_expect_message_has(err, "Session not found", "bob on alice's session");
    json_decref(err);
    hc_response_free(&r);
    char hdrs[200];
    snprintf(hdrs, sizeof(hdrs), "Authorization: Bearer bob\r\nMcp-Session-Id: %s\r\n", session);
    assert_int_equal(hc_request(f->port, "DELETE", "/mcp", hdrs, NULL, &r, HX_REQ_MS), 0);
    hx_expect_status(&r, 404, "bob deleting alice's session");
    hc_response_free(&r);
    /* alice still has it. */
    post_with(f->port, "alice", session, NULL, PING, &r);
    hx_expect_status(&r, 200, "alice on her session after bob's tries");
    hc_response_free(&r);
}

static void test_an_http_sse_session_is_unknown_to_another_principal(void **state)
{
    hx_fixture *f = *state;
    hc_conn c;
    char path[200];
    hx_open_httpsse(&c, f->port, "Authorization: Bearer alice\r\n", path, sizeof(path));
    hc_response r;
    assert_int_equal(hc_request(f->port, "POST", path,
                                "Content-Type: application/json\r\nAuthorization: Bearer bob\r\n",
                                PING, &r, HX_REQ_MS),
                     0);
    hx_expect_status(&r, 404, "bob posting to alice's HTTP+SSE session");
    hc_response_free(&r);
    assert_int_equal(hc_request(f->port, "POST", path,
                                "Content-Type: application/json\r\nAuthorization: Bearer alice\r\n",
                                PING, &r, HX_REQ_MS),
                     0);
    hx_expect_status(&r, 202, "alice posting to her HTTP+SSE session");
    hc_response_free(&r);
    hc_close(&c);
}

/* A 2026-07-28 tools/call of "ask" with token, and more params (stolen, may be NULL):
 * the one response. */
static json_t *ask_as(int port, const char *token, long long id, json_t *more, int status, int code)
{
    json_t *params = json_pack("{s:s, s:{}}", "name", "ask", "arguments");
    if (more != NULL) {
        json_object_update(params, more);
        json_decref(more);
    }
    json_t *req = mh_request(id, "tools/call", params, "{\"elicitation\":{}}");
    char auth[64];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
    hc_response r;
    assert_int_equal(mh_post(port, req, auth, &r), 0);
    json_decref(req);
    json_t *resp = mh_expect(&r, status, code, id, "ask");
    hc_response_free(&r);
    return resp;
}

static void test_a_request_state_serves_only_its_principal(void **state)
{
    hx_fixture *f = *state;
    json_t *first = ask_as(f->port, "alice", 20, NULL, 200, 0);
    json_t *result = json_object_get(first, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    json_t *rs = json_incref(json_object_get(result, "requestState"));
    json_decref(first);
    json_t *answers =
        json_pack("{s:{s:s, s:{s:s}}}", "name", "action", "accept", "content", "name", "Alice");
    /* bob's retry with alice's state: refused, as a state given for another request. */
    json_t *theirs =
        ask_as(f->port, "bob", 21,
               json_pack("{s:O, s:O}", "inputResponses", answers, "requestState", rs), 200, -32602);
    const char *why =
        json_string_value(json_object_get(json_object_get(theirs, "error"), "message"));
    if (why == NULL || strstr(why, "is not one this server gave for this request") == NULL)
        fail_msg("bob's retry with alice's requestState: %s", why ? why : "(no message)");
    json_decref(theirs);
    /* alice's own retry goes through. */
    json_t *mine =
        ask_as(f->port, "alice", 22,
               json_pack("{s:O, s:O}", "inputResponses", answers, "requestState", rs), 200, 0);
    assert_string_equal(mh_text(mine, "alice's retry"), "Alice, for alice");
    json_decref(mine);
    json_decref(answers);
    json_decref(rs);
}

static void test_a_client_leaving_during_verification_changes_nothing(void **state)
{
    hx_fixture *f = *state;
    /* Ten requests whose tokens take 300 ms to verify, their clients gone at once. */
    for (int i = 0; i < 10; i++) {
        hc_conn c;
        assert_int_equal(hc_connect(&c, f->port, HX_REQ_MS), 0);
        assert_int_equal(hc_send_request(&c, f->port, "POST", "/mcp",
                                         HC_MCP_POST_HEADERS "Authorization: Bearer slow-alice\r\n",
                                         PING, HX_REQ_MS),
                         0);
        if (i % 2)
            hc_close_reset(&c);
        else
            hc_close(&c);
    }
    /* One that waits is answered once the verifier completes. */
    hc_response r;
    char *init = hc_initialize_body(NULL);
    post_with(f->port, "slow-alice", NULL, NULL, init, &r);
    hx_expect_status(&r, 200, "a slow verification awaited");
    hc_response_free(&r);
    post_with(f->port, "alice", NULL, NULL, init, &r);
    free(init);
    hx_expect_status(&r, 200, "the next client");
    hc_response_free(&r);
}

int main(void)
{
    const struct CMUnitTest scoped[] = {
        cmocka_unit_test(test_metadata_is_served_at_the_path_inserted_uri_and_the_root),
        cmocka_unit_test(test_no_token_gets_401_with_metadata_and_scope),
        cmocka_unit_test(test_each_bad_token_gets_401_invalid_token_with_its_reason),
        cmocka_unit_test(test_token_in_query_or_twice_gets_400_invalid_request),
        cmocka_unit_test(test_missing_scope_gets_403_insufficient_scope),
        cmocka_unit_test(test_verifier_that_cannot_decide_gets_503_without_a_challenge),
        cmocka_unit_test(test_handlers_see_the_principal_of_their_request),
        cmocka_unit_test(test_a_session_is_unknown_to_another_principal),
        cmocka_unit_test(test_a_connection_that_changes_its_token_is_judged_by_the_new_one),
        cmocka_unit_test(test_an_http_sse_session_is_unknown_to_another_principal),
        cmocka_unit_test(test_a_request_state_serves_only_its_principal),
        cmocka_unit_test(test_a_tool_without_its_scope_gets_403_naming_every_scope_needed),
        cmocka_unit_test(test_a_method_without_its_scope_gets_403_naming_every_scope_needed),
        cmocka_unit_test(test_a_client_leaving_during_verification_changes_nothing),
    };
    const struct CMUnitTest issuer[] = {
        cmocka_unit_test(test_issuer_must_match_when_configured),
    };
    const struct CMUnitTest tool_errors[] = {
        cmocka_unit_test(test_a_tool_without_its_scope_can_answer_with_a_tool_error),
        cmocka_unit_test(test_a_method_without_its_scope_gets_403_naming_every_scope_needed),
    };
    int failed = cmocka_run_group_tests_name("scoped", scoped, setup_scoped, hx_teardown);
    failed +=
        cmocka_run_group_tests_name("tool errors", tool_errors, setup_tool_errors, hx_teardown);
    failed += cmocka_run_group_tests_name("issuer", issuer, setup_issuer, hx_teardown);
    return failed + hx_teardown_failures;
}
