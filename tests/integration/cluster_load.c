/* SPDX-License-Identifier: MIT */
/*
 * Tool calls through a cluster's load balancer, cut and resumed at random; see
 * cluster_load.h.
 */
#define _GNU_SOURCE
#include "cluster_load.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "resume_check.h"

/* Stream ids carry their node's number from this bit up (MCP__NODE_SHIFT). */
#define NODE_SHIFT 40
/* A client's pause before asking again: after the balancer found no node, after a 503. */
#define LB_RETRY_MS 50
#define UNAVAILABLE_RETRY_MS 100

typedef struct cl_worker {
    cl_run *run;
    int index;
    uint64_t rng;
} cl_worker;

/* How the reading of a stream stopped. */
enum { RD_FAIL = -2, RD_TIMEOUT = -1, RD_END = 0, RD_ANSWER = 1, RD_CUT = 2 };

static unsigned below(cl_worker *w, unsigned n)
{
    return n == 0 ? 0 : (unsigned)(harness_rand(&w->rng) % n);
}

static int node_of(const hc_conn *c)
{
    return ch_node_index(hc_header_get(&c->head, "x-mcp-node"));
}

/* Records the first failure of the call. Returns -1. */
static int fail(cl_call *k, const char *fmt, ...)
{
    if (k->outcome != CL_FAILED) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->err, sizeof(k->err), fmt, ap);
        va_end(ap);
        k->outcome = CL_FAILED;
    }
    return -1;
}

long long cl_id_owner(const char *event_id)
{
    long long stream = rc_id_stream(event_id);
    return stream < 0 ? -1 : (long long)((unsigned long long)stream >> NODE_SHIFT);
}

int cl_is_rpc_error(const char *body, long long *code)
{
    json_t *v = body ? json_loads(body, 0, NULL) : NULL;
    const json_t *err = json_object_get(v, "error");
    const char *version = json_string_value(json_object_get(v, "jsonrpc"));
    int ok = version != NULL && strcmp(version, "2.0") == 0 && json_is_object(err) &&
             json_is_integer(json_object_get(err, "code")) &&
             json_is_string(json_object_get(err, "message"));
    if (ok && code != NULL)
        *code = (long long)json_integer_value(json_object_get(err, "code"));
    json_decref(v);
    return ok;
}

const char *cl_outcome_name(cl_outcome o)
{
    switch (o) {
    case CL_PENDING:
        return "pending";
    case CL_RESULT:
        return "result";
    case CL_NODE_GONE:
        return "node-gone error";
    case CL_REFUSED:
        return "refused (503)";
    case CL_SESSION_GONE:
        return "session gone (404)";
    case CL_STREAM_GONE:
        return "stream gone (400)";
    case CL_FAILED:
        return "FAILED";
    }
    return "?";
}

/* ---- Trouble ---- */

void cl_trouble(cl_run *r)
{
    __atomic_store_n(&r->trouble_at, harness_now_ms(), __ATOMIC_RELEASE);
}

/* 1 when the run is in mode and the test broke the cluster before now: what the mode allows
 * for may happen. Before that, every mode is strict. */
static int troubled(cl_run *r, cl_mode mode)
{
    long long at = __atomic_load_n(&r->trouble_at, __ATOMIC_ACQUIRE);
    return r->mode == mode && at > 0 && hc_now_ms() >= at;
}

/* ---- The POST gate ---- */

static int gate_enter(cl_run *r, long long deadline)
{
    pthread_mutex_lock(&r->mu);
    while (r->gate_closed && harness_cond_wait_until(&r->cv, &r->mu, deadline))
        ;
    int ok = !r->gate_closed;
    if (ok)
        r->posting++;
    pthread_mutex_unlock(&r->mu);
    return ok ? 0 : -1;
}

static void gate_leave(cl_run *r)
{
    pthread_mutex_lock(&r->mu);
    r->posting--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

int cl_gate_close(cl_run *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    pthread_mutex_lock(&r->mu);
    r->gate_closed = 1;
    while (r->posting > 0 && harness_cond_wait_until(&r->cv, &r->mu, deadline))
        ;
    int ok = r->posting == 0;
    pthread_mutex_unlock(&r->mu);
    return ok ? 0 : -1;
}

void cl_gate_open(cl_run *r)
{
    pthread_mutex_lock(&r->mu);
    r->gate_closed = 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void cl_locked(cl_run *r, void (*fn)(cl_run *r, void *arg), void *arg)
{
    pthread_mutex_lock(&r->mu);
    fn(r, arg);
    pthread_mutex_unlock(&r->mu);
}

/* Copies what the thread knows of a call into its record, where the test may read it. */
static void publish(cl_run *r, cl_call *rec, const cl_call *k)
{
    pthread_mutex_lock(&r->mu);
    *rec = *k;
    pthread_mutex_unlock(&r->mu);
}

/* ---- One call ---- */

/* Where the call was, for a failure's message: which connection, from which node, the
 * last event id. */
static const char *where(const cl_call *k, const rc_call *call, char *buf, size_t size)
{
    if (k->resumes == 0)
        snprintf(buf, size, "on its POST's stream from node%d, last id %s", k->on_node,
                 call->last_id ? call->last_id : "(none)");
    else
        snprintf(buf, size, "on its resume %d (200 from node%d), last id %s", k->resumes,
                 k->on_node, call->last_id ? call->last_id : "(none)");
    return buf;
}

/* The stream of the call's events is one stream, owned by one node. */
static int check_owner(cl_call *k, const rc_call *call)
{
    if (call->last_id == NULL)
        return 0;
    long long owner = cl_id_owner(call->last_id);
    if (owner <= 0)
        return fail(k, "event id %s does not name a node's stream", call->last_id);
    if (k->owner < 0)
        k->owner = owner;
    else if (owner != k->owner)
        return fail(k,
                    "event id %s names node number %lld's stream; the call's stream is node "
                    "number %lld's",
                    call->last_id, owner, k->owner);
    return 0;
}

/*
 * Reads c, feeding call, until its answer (RD_ANSWER), the end of the body
 * (RD_END), a failed check (RD_FAIL, call->err), no event within step_ms or
 * the call's deadline (RD_TIMEOUT), or the moment the client cuts (RD_CUT):
 * after max_events events (> 0), or at cut_at (> 0).
 */
static int read_call(hc_conn *c, rc_call *call, cl_call *k, int max_events, long long cut_at,
                     int step_ms, long long deadline)
{
    int processed = 0;
    for (;;) {
        if (max_events > 0 && processed >= max_events)
            return RD_CUT;
        long long now = hc_now_ms();
        long long until = now + step_ms;
        if (deadline < until)
            until = deadline;
        if (cut_at > 0 && cut_at < until)
            until = cut_at;
        hc_sse_event ev;
        int r = hc_sse_next(c, &ev, until > now ? (int)(until - now) : 0);
        if (r == 0)
            return RD_END;
        if (r < 0)
            return cut_at > 0 && hc_now_ms() >= cut_at && !c->eof ? RD_CUT : RD_TIMEOUT;
        if (!ev.comment)
            processed++;
        int f = rc_call_feed(call, &ev);
        hc_sse_event_free(&ev);
        if (f < 0)
            return RD_FAIL;
        if (check_owner(k, call) != 0)
            return RD_FAIL;
        if (f == 1)
            return RD_ANSWER;
    }
}

/* The call's answer: the result after every notification, or (a node dying) the error of
 * a node that is gone; then the stream must end cleanly. */
static void answered(cl_run *r, cl_call *k, hc_conn *c, rc_call *call)
{
    k->t_answer = hc_now_ms();
    char at[300];
    where(k, call, at, sizeof(at));
    const json_t *error = json_object_get(call->result, "error");
    if (error == NULL) {
        char want[32];
        snprintf(want, sizeof(want), "sent %d", r->count);
        const char *text = rc_result_text(call->result);
        if (call->next - 1 != r->count)
            fail(k, "the result came after %lld notifications of %d (%s)", call->next - 1, r->count,
                 at);
        else if (text == NULL || strcmp(text, want) != 0)
            fail(k, "unexpected result text %s (%s)", text ? text : "(none)", at);
        else
            k->outcome = CL_RESULT;
    } else {
        const char *message = json_string_value(json_object_get(error, "message"));
        long long code = (long long)json_integer_value(json_object_get(error, "code"));
        if ((troubled(r, CL_NODE_DIES) || troubled(r, CL_STORE_DOWN)) && code == -32603 &&
            message != NULL && harness_contains_ci(message, "gone"))
            k->outcome = CL_NODE_GONE;
        else
            fail(k, "answered with the error %lld %s after notification %lld (%s)", code,
                 message ? message : "(no message)", call->next - 1, at);
    }
    hc_sse_event ev;
    int e = hc_sse_next_block(c, &ev, r->step_ms);
    if (e == 1) {
        fail(k, "an event after the answer: id=%s data=%.200s (%s)", ev.id ? ev.id : "(none)",
             ev.data ? ev.data : "(none)", at);
        hc_sse_event_free(&ev);
    } else if (e < 0 || !c->body_done) {
        fail(k, "the stream did not end cleanly after the answer (%s; %s)",
             e < 0 ? "no end within the deadline" : "connection closed", at);
    }
}

/* A node's refusal of the POST: an end of its own with a Redis that comes and goes. */
static void post_refused(cl_run *r, cl_call *k, hc_conn *c, int status)
{
    int node = node_of(c);
    if (status > 0 && hc_read_body(c, NULL, r->step_ms) != 0)
        status = -1;
    const char *body = c->head.body ? c->head.body : "";
    k->status = status;
    if (troubled(r, CL_STORE_DOWN) && node >= 0 && status == 503 && cl_is_rpc_error(body, NULL)) {
        k->outcome = CL_REFUSED;
        return;
    }
    if (troubled(r, CL_STORE_DOWN) && node >= 0 && status == 404) {
        k->outcome = CL_SESSION_GONE;
        return;
    }
    fail(k, "POST tools/call: expected 200, got %d from %s%d: %.200s", status,
         node >= 0 ? "node" : "the balancer (no node)", node, body);
}

/*
 * Resumes the call's stream through the balancer, asking again while the
 * balancer finds no node (a node dying) or a node answers 503 (Redis away).
 * Returns 0 with c on the resumed stream, or -1 when the call ended (its
 * outcome says how).
 */
static int resume(cl_worker *w, cl_call *k, hc_conn *c, rc_call *call, long long deadline)
{
    cl_run *r = w->run;
    const char *session = r->sessions[k->session];
    int last_status = 0, last_node = -1;
    for (int attempt = 0;; attempt++) {
        if (attempt == 0) {
            /* At once half the time: the node that had the stream may not know yet that
             * its client is gone. */
            if (below(w, 2) == 0)
                rc_wait_retry((long)below(w, 6));
        } else {
            rc_wait_retry(last_status == 503 && last_node >= 0 ? UNAVAILABLE_RETRY_MS
                                                               : LB_RETRY_MS);
        }
        if (hc_now_ms() >= deadline)
            return fail(k,
                        "the call took longer than %d ms: its last resume (after notification "
                        "%lld, attempt %d) got %d from node%d",
                        r->call_ms, call->next - 1, attempt, last_status, last_node);
        long long t0 = hc_now_ms();
        int status = hc_mcp_get_open(c, r->lb_port, session, call->last_id, r->step_ms);
        int node = node_of(c);
        k->resumes++;
        if (node >= 0)
            k->resumes_on[node]++;
        last_status = status;
        last_node = node;
        if (status == 200) {
            k->on_node = node;
            const char *ct = hc_header_get(&c->head, "content-type");
            if (ct == NULL || strncmp(ct, "text/event-stream", 17) != 0)
                return fail(k, "resume with %s: 200 from node%d with Content-Type %s",
                            call->last_id, node, ct ? ct : "(none)");
            return 0;
        }
        if (status < 0 && hc_now_ms() - t0 >= r->step_ms)
            return fail(k, "resume with %s after notification %lld: no answer within %d ms",
                        call->last_id, call->next - 1, r->step_ms);
        if (status > 0 && hc_read_body(c, NULL, r->step_ms) != 0)
            status = -1;
        const char *body = c->head.body ? c->head.body : "";
        int rpc_error = cl_is_rpc_error(body, NULL);
        if ((troubled(r, CL_NODE_DIES) || troubled(r, CL_STORE_DOWN)) && node < 0 &&
            (status < 0 || status == 502 || status == 503 || status == 504)) {
            /* The balancer's own answer, or the connection closed before any: the node
             * it chose died under the request. A GET can be asked again. */
            k->lb_retries++;
            hc_close(c);
            continue;
        }
        if (troubled(r, CL_STORE_DOWN) && node >= 0) {
            if (status == 503 && rpc_error) {
                k->unavailable++;
                hc_close(c);
                continue;
            }
            if (status == 404 || (status == 400 && rpc_error)) {
                k->status = status;
                k->outcome = status == 404 ? CL_SESSION_GONE : CL_STREAM_GONE;
                return -1;
            }
        }
        return fail(k, "resume with %s after notification %lld: got %d from %s%d: %.200s",
                    call->last_id, call->next - 1, status,
                    node >= 0 ? "node" : "the balancer (no node)", node, body);
    }
}

static void one_call(cl_worker *w, cl_call *rec)
{
    cl_run *r = w->run;
    cl_call k = *rec;
    long long deadline = hc_now_ms() + r->call_ms;
    char args[128];
    snprintf(args, sizeof(args), "{\"count\":%d,\"delay_ms\":%u,\"close_after\":0}", r->count,
             r->min_delay_ms + below(w, (unsigned)(r->max_delay_ms - r->min_delay_ms + 1)));
    char *body = rc_call_body(k.id, "poll_notify", args, NULL);
    rc_call call;
    rc_call_init(&call, k.id, r->mode == CL_STRICT ? r->count : -1);
    hc_conn c;
    memset(&c, 0, sizeof(c));
    c.fd = -1;
    if (body == NULL) {
        fail(&k, "ENOMEM");
        goto out;
    }
    if (gate_enter(r, deadline) != 0) {
        free(body);
        fail(&k, "the POST gate stayed closed past the call's deadline");
        goto out;
    }
    k.t_post = hc_now_ms();
    int status = hc_mcp_post_open(&c, r->lb_port, r->sessions[k.session], body, 0, r->step_ms);
    free(body);
    k.post_node = k.on_node = node_of(&c);
    if (status != 200) {
        gate_leave(r);
        post_refused(r, &k, &c, status);
        goto out;
    }
    for (int first = 1;; first = 0) {
        /* The first event (the priming event, with an id) is read on its own, to leave the
         * gate. Then the stream is read in pieces of 1 to 16 events or 0 to 10 delays
         * (until the answer once the call has had all its cuts); after each piece the
         * client may cut. */
        int max_events = 0;
        long long cut_at = 0;
        if (first)
            max_events = 1;
        else if (k.cuts < r->max_cuts && below(w, 2) == 0)
            max_events = 1 + (int)below(w, 16);
        else if (k.cuts < r->max_cuts)
            cut_at = hc_now_ms() + below(w, (unsigned)(10 * r->max_delay_ms + 10));
        int rd = read_call(&c, &call, &k, max_events, cut_at, r->step_ms, deadline);
        if (first) {
            gate_leave(r);
            if (call.last_id != NULL)
                k.t_first = hc_now_ms();
            publish(r, rec, &k);
            if (rd == RD_CUT)
                continue; /* the first event was read: not a cut */
        }
        char at[300];
        if (rd == RD_FAIL) {
            if (call.err[0] != '\0') /* else check_owner said why */
                fail(&k, "%s (%s)", call.err, where(&k, &call, at, sizeof(at)));
            break;
        }
        if (rd == RD_TIMEOUT) {
            fail(&k, "no event within %d ms after notification %lld (%s)", r->step_ms,
                 call.next - 1, where(&k, &call, at, sizeof(at)));
            break;
        }
        if (rd == RD_ANSWER) {
            answered(r, &k, &c, &call);
            break;
        }
        if (rd == RD_CUT && below(w, 100) >= (unsigned)r->cut_percent)
            continue; /* not this time */
        if (rd == RD_END && c.body_done && troubled(r, CL_STORE_DOWN)) {
            /* Ended cleanly without the answer: as a stream closed for polling (SEP-1699),
             * the client comes back (a node following the stream did this once as Redis
             * went away). */
            k.clean_ends++;
            hc_close(&c);
        } else if (rd == RD_END && c.body_done) {
            fail(&k, "the stream ended cleanly after notification %lld without the answer (%s)",
                 call.next - 1, where(&k, &call, at, sizeof(at)));
            break;
        } else if (rd == RD_END) {
            if (!troubled(r, CL_NODE_DIES) && !troubled(r, CL_STORE_DOWN)) {
                fail(&k,
                     "the server side closed the connection after notification %lld, "
                     "without the answer (%s)",
                     call.next - 1, where(&k, &call, at, sizeof(at)));
                break;
            }
            k.server_cuts++;
            hc_close(&c);
        } else {
            k.cuts++;
            if (below(w, 2) == 0)
                hc_close_reset(&c);
            else
                hc_close(&c);
        }
        if (call.last_id == NULL) {
            fail(&k, "the stream was cut before any event id: nothing to resume from");
            break;
        }
        if (resume(w, &k, &c, &call, deadline) != 0)
            break;
    }
out:
    hc_close(&c);
    k.notifications = call.next - 1;
    k.t_end = hc_now_ms();
    rc_call_free(&call);
    publish(r, rec, &k);
}

/* ---- Threads ---- */

static void *worker_main(void *arg)
{
    cl_worker *w = arg;
    cl_run *r = w->run;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int idx = !r->stop && r->next < r->n_recs ? r->next++ : -1;
        pthread_mutex_unlock(&r->mu);
        if (idx < 0)
            break;
        one_call(w, &r->recs[idx]);
        pthread_mutex_lock(&r->mu);
        r->done++;
        if (r->recs[idx].outcome == CL_FAILED) {
            /* One failure is enough: the others end their calls and stop. */
            r->failed++;
            r->stop = 1;
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}

int cl_start(cl_run *r)
{
    if (r->threads < 1 || r->threads > CL_MAX_THREADS || r->n_sessions < 1 ||
        r->n_sessions > CL_MAX_SESSIONS || r->count < 1 || r->max_delay_ms < r->min_delay_ms)
        return -1;
    r->n_recs = r->calls > 0 ? r->calls : r->max_calls;
    r->recs = calloc((size_t)r->n_recs, sizeof(*r->recs));
    r->workers = calloc((size_t)r->threads, sizeof(*r->workers));
    if (r->recs == NULL || r->workers == NULL) {
        free(r->recs);
        free(r->workers);
        return -1;
    }
    for (int i = 0; i < r->n_recs; i++) {
        r->recs[i].id = r->id_base + i;
        r->recs[i].session = i % r->n_sessions;
        r->recs[i].post_node = -1;
        r->recs[i].on_node = -1;
        r->recs[i].owner = -1;
    }
    pthread_mutex_init(&r->mu, NULL);
    harness_cond_init_monotonic(&r->cv);
    r->next = r->done = r->failed = r->stop = 0;
    r->trouble_at = 0;
    r->gate_closed = r->posting = 0;
    r->started = 0;
    for (int i = 0; i < r->threads; i++) {
        r->workers[i].run = r;
        r->workers[i].index = i;
        r->workers[i].rng = (r->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)) | 1;
        if (pthread_create(&r->th[i], NULL, worker_main, &r->workers[i]) != 0) {
            cl_stop(r);
            cl_join(r, r->call_ms + 5000);
            return -1;
        }
        r->started++;
    }
    return 0;
}

int cl_wait_done(cl_run *r, int n, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    pthread_mutex_lock(&r->mu);
    while (r->done < n && !r->stop && harness_cond_wait_until(&r->cv, &r->mu, deadline))
        ;
    int done = r->done;
    pthread_mutex_unlock(&r->mu);
    return done >= n ? done : -1;
}

void cl_stop(cl_run *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    r->gate_closed = 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

int cl_join(cl_run *r, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (r->started > 0) {
        if (pthread_timedjoin_np(r->th[r->started - 1], NULL, &until) != 0) {
            rc = -1;
            break;
        }
        r->started--;
    }
    return rc;
}

void cl_free(cl_run *r)
{
    if (r->started > 0 || r->recs == NULL)
        return; /* a thread still runs and uses them, or there is nothing */
    free(r->recs);
    free(r->workers);
    r->recs = NULL;
    r->workers = NULL;
    r->n_recs = 0;
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
}
