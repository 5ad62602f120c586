/* SPDX-License-Identifier: MIT */
/*
 * cmocka assertions and fixtures shared by the HTTP integration tests
 * (test_http_*.c), on top of http_client.h. Each failing assertion says what
 * was sent, what was expected and what came back.
 */
#ifndef MCP_TESTS_INTEGRATION_HTTP_EXPECT_H
#define MCP_TESTS_INTEGRATION_HTTP_EXPECT_H

#include <jansson.h>

#include "http_client.h"

/* Deadlines: one request, one SSE event, starting and stopping the server. */
#define HX_REQ_MS 5000
#define HX_EVENT_MS 5000
#define HX_START_MS 10000
#define HX_STOP_MS 10000

/* The state of a test group: one running server and, when asked for, one session. */
typedef struct hx_fixture {
    hc_server srv;
    int port;
    char session[33];
} hx_fixture;

/*
 * Group setup: starts mcp-everything with flags (NULL-terminated) and, when
 * with_session is set, initializes one session. Returns 0 or -1.
 */
int hx_setup(void **state, const char *const flags[], int with_session);
/*
 * Group teardown: SIGTERM, reap, and check the exit status is 0 (printing
 * the server's stderr otherwise). cmocka does not count a failed group
 * teardown in its result, so failures are also counted in
 * hx_teardown_failures, which main() adds to its exit status.
 */
int hx_teardown(void **state);
extern int hx_teardown_failures;

/* Asserts the status; what names the request for the failure message. */
void hx_expect_status(const hc_response *r, int status, const char *what);
/*
 * Asserts an error answer: the status, Content-Type application/json and a
 * JSON-RPC error body with code. Returns the body (new reference).
 */
json_t *hx_expect_error(const hc_response *r, int status, int code, const char *what);
/*
 * Asserts a 405 whose Allow header is exactly allow (and a JSON-RPC error -32000),
 * after sending method to path with headers on a new connection.
 */
void hx_expect_405(int port, const char *method, const char *path, const char *headers,
                   const char *allow);
/* Asserts the error message contains needle (case-insensitive). */
void hx_expect_message_has(const json_t *err_body, const char *needle, const char *what);

/* POSTs body to /mcp (session may be NULL) and asserts the request got a response. */
void hx_post(int port, const char *session, const char *extra, const char *body, hc_response *r,
             const char *what);
/* Every JSON-RPC message of r (arrays from batches flattened); asserts there is a body. */
json_t *hx_messages(const hc_response *r, const char *what);
/* The response with the given integer id in msgs (borrowed), failing when absent. */
json_t *hx_find_response(const json_t *msgs, long long id, const char *what);
/* The text of result.content[0] of a tools/call response (borrowed), failing otherwise. */
const char *hx_result_text(const json_t *response, const char *what);
/* A new Mcp-Session-Id of an initialized session on the fixture's server. */
void hx_new_session(int port, char session[33]);
/* Opens a standalone GET stream: connects, sends, reads the head and asserts 200. */
void hx_open_get_stream(hc_conn *c, int port, const char *session, hc_response *head);
/* Opens an HTTP+SSE (2024-11-05) session with GET /sse and extra headers (lines ending
 * in \r\n, or NULL): asserts 200 and an endpoint event, whose path (the POST target)
 * goes into path. c stays open: the session lives as long as it does. */
void hx_open_httpsse(hc_conn *c, int port, const char *extra, char *path, size_t size);
/* Compact JSON text for failure messages (malloc'd, never NULL). */
char *hx_dump(const json_t *v);

#endif
