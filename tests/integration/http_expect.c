/* SPDX-License-Identifier: MIT */
/*
 * cmocka assertions and fixtures for the HTTP integration tests; see
 * http_expect.h.
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

int hx_teardown_failures;

char *hx_dump(const json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return s ? s : strdup("(null)");
}

/* The head of a body for a failure message. */
static const char *body_head(const hc_response *r, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)(r->body_len < 600 ? r->body_len : 600),
             r->body ? r->body : "");
    return buf;
}

int hx_setup(void **state, const char *const flags[], int with_session)
{
    hx_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    if (hc_server_start(&f->srv, flags, HX_START_MS) != 0) {
        free(f);
        return -1;
    }
    f->port = f->srv.port;
    if (with_session && hc_mcp_initialize(f->port, f->session, HX_REQ_MS) != 0) {
        fprintf(stderr, "could not initialize a session on port %d\n", f->port);
        hc_server_stop_check(&f->srv, HX_STOP_MS);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

int hx_teardown(void **state)
{
    hx_fixture *f = *state;
    if (f == NULL)
        return 0;
    int rc = hc_server_stop_check(&f->srv, HX_STOP_MS);
    free(f);
    *state = NULL;
    if (rc != 0)
        hx_teardown_failures++;
    return rc;
}

void hx_expect_status(const hc_response *r, int status, const char *what)
{
    if (r->status != status) {
        char buf[700];
        fail_msg("%s: expected HTTP %d, got %d %s; body: %s", what, status, r->status,
                 r->reason ? r->reason : "", body_head(r, buf, sizeof(buf)));
    }
}

json_t *hx_expect_error(const hc_response *r, int status, int code, const char *what)
{
    char buf[700];
    hx_expect_status(r, status, what);
    const char *ct = hc_header_get(r, "content-type");
    if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0)
        fail_msg("%s: expected Content-Type application/json on the %d error, got %s", what, status,
                 ct ? ct : "none");
    json_error_t jerr;
    json_t *body = json_loadb(r->body ? r->body : "", r->body_len, 0, &jerr);
    if (body == NULL)
        fail_msg("%s: the %d error body is not JSON (%s): %s", what, status, jerr.text,
                 body_head(r, buf, sizeof(buf)));
    const json_t *err = json_object_get(body, "error");
    const char *ver = json_string_value(json_object_get(body, "jsonrpc"));
    if (ver == NULL || strcmp(ver, "2.0") != 0 || !json_is_object(err) ||
        !json_is_integer(json_object_get(err, "code")) ||
        !json_is_string(json_object_get(err, "message")))
        fail_msg("%s: the %d body is not a JSON-RPC error: %s", what, status,
                 body_head(r, buf, sizeof(buf)));
    long long got = json_integer_value(json_object_get(err, "code"));
    if (got != code)
        fail_msg("%s: expected JSON-RPC error code %d, got %lld: %s", what, code, got,
                 body_head(r, buf, sizeof(buf)));
    return body;
}

void hx_expect_405(int port, const char *method, const char *path, const char *headers,
                   const char *allow)
{
    char what[128];
    snprintf(what, sizeof(what), "%s %s", method, path);
    hc_response r;
    if (hc_request(port, method, path, headers, NULL, &r, HX_REQ_MS) != 0)
        fail_msg("%s: no complete response within %d ms (status %d)", what, HX_REQ_MS, r.status);
    json_decref(hx_expect_error(&r, 405, -32000, what));
    const char *got = hc_header_get(&r, "allow");
    if (got == NULL || strcmp(got, allow) != 0)
        fail_msg("%s: expected 'Allow: %s', got %s", what, allow, got ? got : "no Allow header");
    hc_response_free(&r);
}

void hx_expect_message_has(const json_t *err_body, const char *needle, const char *what)
{
    const char *msg =
        json_string_value(json_object_get(json_object_get(err_body, "error"), "message"));
    if (msg == NULL || strcasestr(msg, needle) == NULL)
        fail_msg("%s: expected the error message to mention '%s', got '%s'", what, needle,
                 msg ? msg : "(none)");
}

void hx_post(int port, const char *session, const char *extra, const char *body, hc_response *r,
             const char *what)
{
    if (hc_mcp_post(port, session, extra, body, r, HX_REQ_MS) != 0)
        fail_msg("%s: no complete response within %d ms (status %d)", what, HX_REQ_MS, r->status);
}

json_t *hx_messages(const hc_response *r, const char *what)
{
    json_t *msgs = hc_messages(r);
    if (msgs == NULL) {
        char buf[700];
        fail_msg("%s: the %d response carries no JSON-RPC messages (Content-Type %s): %s", what,
                 r->status,
                 hc_header_get(r, "content-type") ? hc_header_get(r, "content-type") : "none",
                 body_head(r, buf, sizeof(buf)));
    }
    /* A batch answer is one array event: flatten it. */
    json_t *flat = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (json_is_array(m))
            json_array_extend(flat, m);
        else
            json_array_append(flat, m);
    }
    json_decref(msgs);
    return flat;
}

json_t *hx_find_response(const json_t *msgs, long long id, const char *what)
{
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        json_t *mid = json_object_get(m, "id");
        if (json_is_integer(mid) && json_integer_value(mid) == id &&
            json_object_get(m, "method") == NULL)
            return m;
    }
    char *s = hx_dump(msgs);
    fail_msg("%s: no response with id %lld among %s", what, id, s);
    free(s);
    return NULL;
}

const char *hx_result_text(const json_t *response, const char *what)
{
    const json_t *content = json_object_get(json_object_get(response, "result"), "content");
    const char *text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
    if (text == NULL) {
        char *s = hx_dump(response);
        fail_msg("%s: expected a tools/call result with text content, got %s", what, s);
        free(s);
    }
    return text;
}

void hx_new_session(int port, char session[33])
{
    if (hc_mcp_initialize(port, session, HX_REQ_MS) != 0)
        fail_msg("initialize + notifications/initialized did not give a session");
}

void hx_open_httpsse(hc_conn *c, int port, const char *extra, char *path, size_t size)
{
    char hdrs[8192];
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "%s", extra != NULL ? extra : "");
    if (hc_connect(c, port, HX_REQ_MS) != 0)
        fail_msg("cannot connect to 127.0.0.1:%d", port);
    if (hc_send_request(c, port, "GET", "/sse", hdrs, NULL, HX_REQ_MS) != 0)
        fail_msg("cannot send GET /sse");
    hc_response head;
    if (hc_read_head(c, &head, HX_REQ_MS) != 0)
        fail_msg("GET /sse: no response head within %d ms", HX_REQ_MS);
    hx_expect_status(&head, 200, "GET /sse");
    hc_response_free(&head);
    hc_sse_event ev;
    if (hc_sse_next_event(c, &ev, HX_EVENT_MS) != 1 || ev.event == NULL ||
        strcmp(ev.event, "endpoint") != 0)
        fail_msg("GET /sse: no endpoint event within %d ms", HX_EVENT_MS);
    snprintf(path, size, "%s", ev.data);
    hc_sse_event_free(&ev);
}

void hx_open_get_stream(hc_conn *c, int port, const char *session, hc_response *head)
{
    char hdrs[256];
    snprintf(hdrs, sizeof(hdrs), HC_SSE_ACCEPT "Mcp-Session-Id: %s\r\n", session);
    if (hc_connect(c, port, HX_REQ_MS) != 0)
        fail_msg("cannot connect to 127.0.0.1:%d", port);
    if (hc_send_request(c, port, "GET", "/mcp", hdrs, NULL, HX_REQ_MS) != 0)
        fail_msg("cannot send GET /mcp");
    /* The server flushes the head at once, before any event. */
    if (hc_read_head(c, head, HX_REQ_MS) != 0)
        fail_msg("GET /mcp (standalone stream): no response head within %d ms", HX_REQ_MS);
    hx_expect_status(head, 200, "GET /mcp (standalone stream)");
    const char *ct = hc_header_get(head, "content-type");
    if (ct == NULL || strncasecmp(ct, "text/event-stream", 17) != 0)
        fail_msg("GET /mcp: expected Content-Type text/event-stream, got %s", ct ? ct : "none");
}
