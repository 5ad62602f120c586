/* SPDX-License-Identifier: MIT */
/*
 * What the resumability tests check of a stream, on top of the raw client of
 * http_client.h: event ids (their stream and seq parts), numbered messages, and
 * one tool call followed across its POST stream and the GET streams that resume
 * it, each message exactly once and in order.
 */
#ifndef MCP_TESTS_INTEGRATION_RESUME_CHECK_H
#define MCP_TESTS_INTEGRATION_RESUME_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "http_client.h"

/* The seq part of an event id <tag>-<stream>-<seq>, or -1. */
long long rc_id_seq(const char *id);
/* The stream part of an event id, or -1. */
long long rc_id_stream(const char *id);
/*
 * N for a notifications/message whose data is "notification N", else -1.
 */
long long rc_notification_number(const json_t *msg);
/* 1 when msg is a response (no method) with the integer id. */
int rc_is_response(const json_t *msg, long long id);
/* The text of result.content[0] of a response, or NULL. Borrowed. */
const char *rc_result_text(const json_t *msg);
/* A tools/call body (malloc'd): id, tool, arguments JSON (NULL: {}), progress token (may be NULL).
 */
char *rc_call_body(long long id, const char *tool, const char *args_json, const char *token);

/* ---- Following one tool call across its streams ---- */

/*
 * What a test has seen of one tools/call so far, across its POST stream and
 * the GET streams that resume it. The call is expected to send numbered
 * messages first (notifications/message "notification N" or
 * notifications/progress with progress N, N = 1, 2, ...), each exactly once
 * and in order, then its response; every event id must be greater than the
 * one before (ids of one session share a counter).
 */
typedef struct rc_call {
    long long req_id; /* the JSON-RPC id of the call */
    long long expect; /* how many numbered messages precede the result, -1: unchecked */
    long long next;   /* the number expected next (starts at 1) */
    int got_result;
    json_t *result; /* the response, once seen */
    char *last_id;  /* the id of the last event processed, or NULL */
    long long last_seq;
    long long primings; /* priming events seen */
    long retry;         /* the last retry field seen, -1 when none */
    long long events;   /* events with data processed */
    char err[600];      /* the first failure, "" while none */
} rc_call;

void rc_call_init(rc_call *call, long long req_id, long long expect);
void rc_call_free(rc_call *call);
/*
 * Checks and records one event (keep-alive comments are ignored). Returns 1
 * when it was the response, 0 when it was fine, -1 on a failure (call->err).
 */
int rc_call_feed(rc_call *call, const hc_sse_event *ev);
/*
 * Reads c and feeds call until the response (returns 1), the end of the body
 * (0), a failure (-2, call->err) or timeout (-1), processing at most
 * max_events events with data or ids (<= 0: no limit; then returns 2 when
 * the limit was reached first).
 */
int rc_call_read(hc_conn *c, rc_call *call, int max_events, int timeout_ms);

/* Waits ms milliseconds: only to honour a retry interval, as a client would. */
void rc_wait_retry(long ms);

#endif
