/* SPDX-License-Identifier: MIT */
/*
 * What an mcp_client's callbacks saw; see client_watch.h.
 */
#define _GNU_SOURCE
#include "client_watch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "http_client.h"

void cw_init(cw_watch *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    harness_cond_init_monotonic(&w->cv);
    w->notes = json_array();
}

void cw_free(cw_watch *w)
{
    json_decref(w->notes);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

void cw_on_notification(mcp_client *c, const char *method, const json_t *params, void *user)
{
    cw_watch *w = user;
    (void)c;
    json_t *note = json_pack("{s:s, s:O?, s:I}", "method", method, "params", (json_t *)params,
                             "at_ms", (json_int_t)hc_now_ms());
    pthread_mutex_lock(&w->mu);
    if (note != NULL)
        json_array_append_new(w->notes, note);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void cw_schedule(mcp_client *c, uint64_t reconnect_id, int delay_ms, int attempt, void *user)
{
    cw_watch *w = user;
    pthread_mutex_lock(&w->mu);
    if (w->n_sched < CW_MAX_SCHED)
        w->sched[w->n_sched++] = (cw_sched){reconnect_id, delay_ms, attempt, hc_now_ms()};
    int now = w->reconnect_at_once;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (now && mcp_client_reconnect(c, reconnect_id) != MCP_OK)
        fprintf(stderr, "mcp_client_reconnect(%llu) from the scheduler failed\n",
                (unsigned long long)reconnect_id);
}

void cw_on_reply(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                 void *user)
{
    cw_reply *r = user;
    int probe_rc = r->probe_id != 0 ? mcp_client_reconnect(c, r->probe_id) : 0;
    pthread_mutex_lock(&r->w->mu);
    r->status = status;
    r->result = result != NULL ? json_deep_copy(result) : NULL;
    if (err != NULL) {
        r->err = *err;
        r->err.data = NULL;
    }
    r->probe_rc = probe_rc;
    r->at_ms = hc_now_ms();
    r->done = 1;
    pthread_cond_broadcast(&r->w->cv);
    pthread_mutex_unlock(&r->w->mu);
}

json_t *cw_on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    cw_watch *w = user;
    (void)c, (void)params, (void)err;
    pthread_mutex_lock(&w->mu);
    w->sampling_calls++;
    pthread_mutex_unlock(&w->mu);
    return json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "role", "assistant", "content", "type",
                     "text", "text", "sampled", "model", "c-test-model", "stopReason", "endTurn");
}

json_t *cw_on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    cw_watch *w = user;
    (void)c, (void)params, (void)err;
    pthread_mutex_lock(&w->mu);
    w->elicitation_calls++;
    pthread_mutex_unlock(&w->mu);
    return json_pack("{s:s, s:{s:s, s:s}}", "action", "accept", "content", "username", "C", "email",
                     "c@example.com");
}

int cw_connect(cw_watch *w, const char *url, const mcp_http_client_opts *opts, int timeout_ms,
               mcp_client **out)
{
    mcp_client *c = mcp_client_new("http-client-test", "1.0");
    *out = c;
    w->c = c;
    if (c == NULL)
        return MCP_ENOMEM;
    /* The legacy era (sessions, resumption, the standalone stream): what these tests are
     * about. */
    mcp_client_set_protocol(c, "legacy");
    mcp_client_on_notification(c, cw_on_notification, w);
    return mcp_client_connect_http(c, url, opts, timeout_ms);
}

/* Waits until done(w, arg) holds (w->mu held while it is asked). 0, or -1 at the deadline. */
static int wait_for(cw_watch *w, int (*done)(cw_watch *, const void *), const void *arg,
                    int timeout_ms)
{
    long long deadline = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&w->mu);
    int ok;
    while (!(ok = done(w, arg)) && harness_cond_wait_until(&w->cv, &w->mu, deadline))
        ;
    pthread_mutex_unlock(&w->mu);
    return ok ? 0 : -1;
}

static int has_notes(cw_watch *w, const void *n)
{
    return json_array_size(w->notes) >= *(const size_t *)n;
}

static int has_sched(cw_watch *w, const void *n)
{
    return w->n_sched >= *(const int *)n;
}

static int has_reply(cw_watch *w, const void *reply)
{
    (void)w;
    return ((const cw_reply *)reply)->done;
}

int cw_wait_notes(cw_watch *w, size_t n, int timeout_ms)
{
    return wait_for(w, has_notes, &n, timeout_ms);
}

int cw_wait_sched(cw_watch *w, int n, int timeout_ms)
{
    return wait_for(w, has_sched, &n, timeout_ms);
}

int cw_wait_reply(cw_watch *w, cw_reply *reply, int timeout_ms)
{
    return wait_for(w, has_reply, reply, timeout_ms);
}

void cw_reply_clear(cw_reply *reply)
{
    json_decref(reply->result);
    reply->result = NULL;
}

size_t cw_notes(cw_watch *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = json_array_size(w->notes);
    pthread_mutex_unlock(&w->mu);
    return n;
}

long long cw_note_at(cw_watch *w, size_t i)
{
    pthread_mutex_lock(&w->mu);
    json_t *note = json_array_get(w->notes, i);
    long long at = note != NULL ? json_integer_value(json_object_get(note, "at_ms")) : -1;
    pthread_mutex_unlock(&w->mu);
    return at;
}

/* N for a notifications/message "notification N", else -1. */
static long long numbered(const json_t *note)
{
    const char *method = json_string_value(json_object_get(note, "method"));
    const char *data = json_string_value(json_object_get(json_object_get(note, "params"), "data"));
    long long n;
    char end;
    if (method == NULL || strcmp(method, "notifications/message") != 0 || data == NULL ||
        sscanf(data, "notification %lld%c", &n, &end) != 1)
        return -1;
    return n;
}

long cw_find_numbered(cw_watch *w, long long n)
{
    long found = -1;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < json_array_size(w->notes) && found < 0; i++)
        if (numbered(json_array_get(w->notes, i)) == n)
            found = (long)i;
    pthread_mutex_unlock(&w->mu);
    return found;
}

char *cw_check_numbered(cw_watch *w, size_t from, long long count)
{
    char msg[300] = "";
    long long next = 1;
    pthread_mutex_lock(&w->mu);
    for (size_t i = from; i < json_array_size(w->notes) && msg[0] == '\0'; i++) {
        long long n = numbered(json_array_get(w->notes, i));
        if (n < 0)
            continue;
        if (n != next)
            snprintf(msg, sizeof(msg), "notification %lld came where %lld was expected", n, next);
        next++;
    }
    pthread_mutex_unlock(&w->mu);
    if (msg[0] == '\0' && next != count + 1)
        snprintf(msg, sizeof(msg), "%lld numbered notifications, not %lld", next - 1, count);
    return msg[0] != '\0' ? strdup(msg) : NULL;
}

const char *cw_text(const json_t *result)
{
    const char *t = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    return t != NULL ? t : "";
}

void cw_test_filter_from_env(void)
{
    const char *pattern = getenv("MCP_TEST_FILTER");
    if (pattern != NULL && *pattern != '\0')
        cmocka_set_test_filter(pattern);
}
