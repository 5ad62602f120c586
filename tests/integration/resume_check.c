/* SPDX-License-Identifier: MIT */
/*
 * What the resumability tests check of a stream; see resume_check.h.
 */
#define _GNU_SOURCE
#include "resume_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int left_ms(long long deadline)
{
    long long left = deadline - hc_now_ms();
    return left <= 0 ? 0 : left > 3600000 ? 3600000 : (int)left;
}

long long rc_id_seq(const char *id)
{
    const char *dash = id ? strrchr(id, '-') : NULL;
    if (dash == NULL || dash[1] == '\0')
        return -1;
    char *e;
    long long v = strtoll(dash + 1, &e, 10);
    return *e == '\0' ? v : -1;
}

long long rc_id_stream(const char *id)
{
    const char *first = id ? strchr(id, '-') : NULL;
    if (first == NULL)
        return -1;
    char *e;
    long long v = strtoll(first + 1, &e, 10);
    return *e == '-' ? v : -1;
}

long long rc_notification_number(const json_t *msg)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (method == NULL || strcmp(method, "notifications/message") != 0)
        return -1;
    const char *data = json_string_value(json_object_get(json_object_get(msg, "params"), "data"));
    if (data == NULL || strncmp(data, "notification ", 13) != 0)
        return -1;
    char *e;
    long long n = strtoll(data + 13, &e, 10);
    return *e == '\0' ? n : -1;
}

int rc_is_response(const json_t *msg, long long id)
{
    const json_t *mid = json_object_get(msg, "id");
    return json_object_get(msg, "method") == NULL && json_is_integer(mid) &&
           json_integer_value(mid) == id;
}

const char *rc_result_text(const json_t *msg)
{
    const json_t *content = json_object_get(json_object_get(msg, "result"), "content");
    return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

char *rc_call_body(long long id, const char *tool, const char *args_json, const char *token)
{
    char meta[160] = "";
    if (token != NULL)
        snprintf(meta, sizeof(meta), ",\"_meta\":{\"progressToken\":\"%s\"}", token);
    const char *fmt = "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"%s\",\"arguments\":%s%s}}";
    const char *args = args_json ? args_json : "{}";
    int n = snprintf(NULL, 0, fmt, id, tool, args, meta);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s != NULL)
        snprintf(s, (size_t)n + 1, fmt, id, tool, args, meta);
    return s;
}

/* ---- Following one tool call across its streams ---- */

void rc_call_init(rc_call *call, long long req_id, long long expect)
{
    memset(call, 0, sizeof(*call));
    call->req_id = req_id;
    call->expect = expect;
    call->next = 1;
    call->last_seq = -1;
    call->retry = -1;
}

void rc_call_free(rc_call *call)
{
    json_decref(call->result);
    free(call->last_id);
    call->result = NULL;
    call->last_id = NULL;
}

static int call_fail(rc_call *call, const char *fmt, const char *a, long long x, long long y)
{
    if (call->err[0] == '\0')
        snprintf(call->err, sizeof(call->err), fmt, a ? a : "", x, y);
    return -1;
}

/* The number of a numbered message, or -1. */
static long long message_number(const json_t *msg)
{
    long long n = rc_notification_number(msg);
    if (n >= 0)
        return n;
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (method != NULL && strcmp(method, "notifications/progress") == 0) {
        const json_t *p = json_object_get(json_object_get(msg, "params"), "progress");
        if (json_is_number(p))
            return (long long)json_number_value(p);
    }
    return -1;
}

int rc_call_feed(rc_call *call, const hc_sse_event *ev)
{
    if (ev->comment)
        return 0;
    char shown[300];
    snprintf(shown, sizeof(shown), "id=%s data=%.220s", ev->id ? ev->id : "(none)",
             ev->data ? ev->data : "(none)");
    if (call->got_result)
        return call_fail(call, "an event after the response: %s (%lld %lld)", shown, 0, 0);
    if (ev->id != NULL) {
        long long seq = rc_id_seq(ev->id);
        if (seq < 0)
            return call_fail(call, "an event id without a numeric seq: %s (%lld %lld)", shown, 0,
                             0);
        if (seq <= call->last_seq)
            return call_fail(call, "event ids not strictly increasing: %s after seq %lld (%lld)",
                             shown, call->last_seq, 0);
        call->last_seq = seq;
        free(call->last_id);
        call->last_id = strdup(ev->id);
        if (call->last_id == NULL)
            return call_fail(call, "ENOMEM (%s %lld %lld)", "", 0, 0);
    }
    if (ev->retry >= 0)
        call->retry = ev->retry;
    if (hc_sse_is_priming(ev) || ev->data == NULL || ev->data[0] == '\0') {
        call->primings++;
        return 0;
    }
    call->events++;
    json_t *msg = json_loads(ev->data, 0, NULL);
    if (msg == NULL)
        return call_fail(call, "event data that is not JSON: %s (%lld %lld)", shown, 0, 0);
    int rc = 0;
    long long n = message_number(msg);
    if (rc_is_response(msg, call->req_id)) {
        if (call->expect >= 0 && call->next != call->expect + 1)
            rc = call_fail(call,
                           "the response came (%s) after %lld numbered messages, "
                           "expected %lld",
                           NULL, call->next - 1, call->expect);
        call->got_result = 1;
        call->result = msg;
        return rc == 0 ? 1 : -1;
    }
    if (n < 0)
        rc = call_fail(call, "an unexpected message: %s (expected number %lld %lld)", shown,
                       call->next, 0);
    else if (n != call->next)
        rc = call_fail(call, "numbered message %s out of order: expected %lld, got %lld", shown,
                       call->next, n);
    else
        call->next++;
    json_decref(msg);
    return rc;
}

int rc_call_read(hc_conn *c, rc_call *call, int max_events, int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    int processed = 0;
    for (;;) {
        if (max_events > 0 && processed >= max_events)
            return 2;
        hc_sse_event ev;
        int r = hc_sse_next(c, &ev, left_ms(deadline));
        if (r != 1)
            return r == 0 ? 0 : -1;
        if (!ev.comment)
            processed++;
        int f = rc_call_feed(call, &ev);
        hc_sse_event_free(&ev);
        if (f < 0)
            return -2;
        if (f == 1)
            return 1;
    }
}

void rc_wait_retry(long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
