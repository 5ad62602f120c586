/* SPDX-License-Identifier: MIT */
/*
 * What an mcp_client's callbacks saw, for the tests of our HTTP client
 * (test_http_client*.c). The callbacks run on the client's loop thread or its
 * workers, so they only record, under a mutex, with the time (hc_now_ms) of
 * each thing; the test thread waits for what it expects, each wait with a
 * deadline, and asserts.
 */
#ifndef MCP_TESTS_INTEGRATION_CLIENT_WATCH_H
#define MCP_TESTS_INTEGRATION_CLIENT_WATCH_H

#include <jansson.h>
#include <mcp/client.h>
#include <pthread.h>
#include <stdint.h>

#define CW_MAX_SCHED 64

/* One call of the application scheduler (mcp_http_client_opts.schedule_reconnect). */
typedef struct cw_sched {
    uint64_t id;
    int delay_ms;
    int attempt;
    long long at_ms;
} cw_sched;

/* The end of an asynchronous request (cw_reply as its user pointer). */
typedef struct cw_reply {
    struct cw_watch *w;
    int done;
    int status;
    json_t *result;    /* a copy, or NULL */
    mcp_rpc_error err; /* a copy (err.data not kept) */
    long long at_ms;
    /* When not 0: mcp_client_reconnect(c, probe_id) is called from the callback, on
     * the loop thread, and its return kept in probe_rc. */
    uint64_t probe_id;
    int probe_rc;
} cw_reply;

typedef struct cw_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mcp_client *c;
    json_t *notes; /* [{"method":..,"params":..,"at_ms":..}], in arrival order */
    cw_sched sched[CW_MAX_SCHED];
    int n_sched;
    /* 1: the scheduler calls mcp_client_reconnect at once, from inside its callback. */
    int reconnect_at_once;
    int sampling_calls, elicitation_calls;
} cw_watch;

void cw_init(cw_watch *w);
void cw_free(cw_watch *w);

/* The callbacks to hand the client, with the watch as user pointer. */
void cw_on_notification(mcp_client *c, const char *method, const json_t *params, void *user);
void cw_schedule(mcp_client *c, uint64_t reconnect_id, int delay_ms, int attempt, void *user);
/* mcp_response_fn with a cw_reply as user pointer. */
void cw_on_reply(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                 void *user);
/* Sampling: answers with text "sampled"; elicitation: accepts with {"name":"C"}. */
json_t *cw_on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user);
json_t *cw_on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user);

/*
 * A new threaded client, its notifications recorded by w, connected to url
 * with opts within timeout_ms. Returns the connect's status; *out is the client
 * (also on failure: free it) and w->c is set.
 */
int cw_connect(cw_watch *w, const char *url, const mcp_http_client_opts *opts, int timeout_ms,
               mcp_client **out);

/* Waits until at least n notifications (any method) were recorded. 0, or -1 at the deadline. */
int cw_wait_notes(cw_watch *w, size_t n, int timeout_ms);
/* Waits until the scheduler was called at least n times. 0 or -1. */
int cw_wait_sched(cw_watch *w, int n, int timeout_ms);
/* Waits until reply is done. 0 or -1. */
int cw_wait_reply(cw_watch *w, cw_reply *reply, int timeout_ms);
void cw_reply_clear(cw_reply *reply);

/* How many notifications were recorded; the time of the i-th one (-1 when none). */
size_t cw_notes(cw_watch *w);
long long cw_note_at(cw_watch *w, size_t i);
/* The index of the notifications/message "notification <n>", or -1. */
long cw_find_numbered(cw_watch *w, long long n);
/*
 * Checks that the notifications/message recorded since index `from` are
 * "notification 1" to "notification <count>", each once and in order. NULL when
 * so, else a malloc'd description of the first problem.
 */
char *cw_check_numbered(cw_watch *w, size_t from, long long count);

/* The text of result.content[0] (borrowed), or "". */
const char *cw_text(const json_t *result);

/* MCP_TEST_FILTER=<pattern> runs only the tests whose name matches (cmocka's
 * filter; Debian's cmocka reads no variable of its own). */
void cw_test_filter_from_env(void);

#endif
