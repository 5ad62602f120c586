/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: event ids and Last-Event-ID. Each input gets a fresh
 * session of the Streamable HTTP server (http_harness.h): initialize, a tool
 * call whose SSE stream carries events with ids, then a GET whose
 * Last-Event-ID is the input, and a DELETE.
 *
 * Event ids are "<tag>-<stream>-<seq>" with a per-session secret tag, which a
 * fuzzer cannot guess: "$T" in the input is replaced by this session's tag,
 * so "$T-2-1" names the first event of the tool call's stream. CR, LF and NUL
 * would end the header: they become spaces.
 *
 * Oracles: the sanitizers (leaks included), and every resume is answered,
 * with 400 or an SSE stream, never left without an answer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_harness.h"

#define CFG FZ_DEFAULT

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}";
static const char initialized_body[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
static const char call_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"notify\","
    "\"arguments\":{\"count\":2},\"_meta\":{\"progressToken\":7}}}";

static void post(fz_conn *c, const char *session, const char *body)
{
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     "Content-Type: application/json\r\n%s%s%s"
                     "Content-Length: %zu\r\n\r\n%s",
                     session ? "Mcp-Session-Id: " : "", session ? session : "",
                     session ? "\r\nMCP-Protocol-Version: 2025-11-25\r\n" : "", strlen(body), body);
    fz_conn_send(c, CFG, req, (size_t)n);
    fz_settle(CFG, c, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    fz_seen seen = {0};
    fz_conn c;
    fz_conn_open(&c, CFG);
    post(&c, NULL, init_body);
    fz_scan(&c, &seen);
    if (seen.nsessions != 1) {
        fprintf(stderr, "fuzz: initialize gave no session:\n%.*s\n", (int)c.in_len, c.in);
        abort();
    }
    const char *session = seen.session[0];
    post(&c, session, initialized_body);
    post(&c, session, call_body);
    fz_scan(&c, &seen);
    /* The initialize stream keeps nothing to resume; the call's stream does. */
    const char *dash = strchr(seen.event_id, '-');
    if (dash == NULL) {
        fprintf(stderr, "fuzz: the tool call's stream has no event ids:\n%.*s\n", (int)c.in_len,
                c.in);
        abort();
    }
    char tag[64];
    snprintf(tag, sizeof(tag), "%.*s", (int)(dash - seen.event_id), seen.event_id);
    fz_conn_close(&c);

    /* The GET that resumes from the input. */
    char *req = malloc(size * 16 + 512);
    if (req == NULL)
        abort();
    int n = snprintf(req, 512,
                     "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                     "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                     "Last-Event-ID: ",
                     session);
    size_t len = (size_t)n;
    for (size_t i = 0; i < size; i++) {
        char ch = (char)data[i];
        if (ch == '$' && i + 1 < size && data[i + 1] == 'T') {
            memcpy(req + len, tag, strlen(tag));
            len += strlen(tag);
            i++;
        } else {
            req[len++] = (ch == '\r' || ch == '\n' || ch == '\0') ? ' ' : ch;
        }
    }
    memcpy(req + len, "\r\n\r\n", 4);
    len += 4;
    fz_conn g;
    fz_conn_open(&g, CFG);
    fz_conn_send(&g, CFG, req, len);
    fz_settle(CFG, &g, 1);
    free(req);
    if (g.in_len < 12 || memcmp(g.in, "HTTP/1.1 ", 9) != 0) {
        fprintf(stderr, "fuzz: the resume got no answer (%zu bytes)\n", g.in_len);
        abort();
    }
    fz_conn_close(&g);
    for (int i = 0; i < 3; i++)
        fz_step(CFG);
    fz_delete_sessions(CFG, &seen);
    for (int i = 0; i < 2; i++)
        fz_step(CFG);
    return 0;
}
