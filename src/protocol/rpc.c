/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC 2.0 peer engine: see rpc.h.
 */
#include "protocol/rpc.h"

#include <stdio.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/revision.h"
#include "util/util.h"

/* Largest batch we take apart; more is refused whole (-32600). */
#define MCP__MAX_BATCH 100

typedef struct outreq {
    json_int_t id;
    uint64_t stream;
    mcp__reply_fn cb;
    mcp__progress_fn progress_cb;
    void *arg;
    uv_timer_t timer; /* only started when a timeout was given */
    int has_timer;
    int in_send;       /* its own send is on the stack */
    int ended_in_send; /* completed (the engine closed) during that send */
    mcp__rpc *rpc;
    struct outreq *prev, *next;
} outreq;

struct mcp__batch {
    json_t *responses; /* array */
    size_t pending;    /* requests not answered yet, plus one while feeding */
    uint64_t stream;
};

struct mcp__rpc {
    uv_loop_t *loop;
    mcp__rpc_cbs cbs;
    void *user;
    int allow_batch;
    int forward_cancel;
    int closed;
    int input_closed;
    int freed;
    json_int_t next_id;
    outreq *out_head;
    mcp__inreq *in_head;
    size_t inflight;
};

mcp__rpc *mcp__rpc_new(uv_loop_t *loop, const mcp__rpc_cbs *cbs, void *user)
{
    mcp__rpc *rpc = calloc(1, sizeof(*rpc));
    if (rpc == NULL)
        return NULL;
    rpc->loop = loop;
    rpc->cbs = *cbs;
    rpc->user = user;
    return rpc;
}

void mcp__rpc_allow_batch(mcp__rpc *rpc, int allow)
{
    rpc->allow_batch = allow;
}

void mcp__rpc_forward_unmatched_cancel(mcp__rpc *rpc)
{
    rpc->forward_cancel = 1;
}

json_int_t mcp__rpc_take_id(mcp__rpc *rpc)
{
    return rpc->next_id++;
}

void mcp__rpc_set_id_base(mcp__rpc *rpc, json_int_t base)
{
    if (rpc->next_id < base)
        rpc->next_id = base;
}

int mcp__rpc_closed(const mcp__rpc *rpc)
{
    return rpc->closed;
}

size_t mcp__rpc_inflight(const mcp__rpc *rpc)
{
    return rpc->inflight;
}

int mcp__id_valid(const json_t *id)
{
    return id != NULL && (json_is_integer(id) || json_is_string(id));
}

json_t *mcp__error_message(const json_t *id, int code, const char *message, json_t *data)
{
    json_t *err = json_pack("{s:i, s:s}", "code", code, "message", message);
    if (err == NULL && message != NULL) {
        /* Not UTF-8 (a handler's text, a quoted header): the error still goes out. */
        char text[1024];
        err = json_pack("{s:i, s:s}", "code", code, "message",
                        mcp__quotable(text, sizeof(text), message));
    }
    if (err == NULL) {
        json_decref(data);
        return NULL;
    }
    if (data != NULL)
        json_object_set_new(err, "data", data);
    return json_pack("{s:s, s:O?, s:o}", "jsonrpc", "2.0", "id", id, "error", err);
}

typedef struct scratch_t {
    mcp__buf buf;
    int busy;
} scratch_t;

static pthread_key_t scratch_key;
static uv_once_t scratch_once = UV_ONCE_INIT;
static int scratch_ok;

/* A thread that ends frees its buffer: a host's loop thread, say, which never calls
 * mcp__rpc_thread_cleanup(). */
static void scratch_free(void *p)
{
    scratch_t *sc = p;
    mcp__buf_free(&sc->buf);
    free(sc);
}

static void scratch_init(void)
{
    scratch_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* This thread's buffer; freed by mcp__rpc_thread_cleanup() or when the thread ends.
 * NULL when out of memory (the caller then uses a local buffer). */
static scratch_t *scratch_get(void)
{
    uv_once(&scratch_once, scratch_init);
    if (!scratch_ok)
        return NULL;
    scratch_t *sc = pthread_getspecific(scratch_key);
    if (sc == NULL && (sc = calloc(1, sizeof(*sc))) != NULL &&
        pthread_setspecific(scratch_key, sc) != 0) {
        free(sc);
        sc = NULL;
    }
    return sc;
}

void mcp__rpc_thread_cleanup(void)
{
    uv_once(&scratch_once, scratch_init);
    if (!scratch_ok)
        return;
    scratch_t *sc = pthread_getspecific(scratch_key);
    if (sc != NULL) {
        pthread_setspecific(scratch_key, NULL);
        scratch_free(sc);
    }
}

mcp__buf *mcp__rpc_scratch_take(void)
{
    scratch_t *sc = scratch_get();
    if (sc == NULL || sc->busy)
        return NULL;
    sc->busy = 1;
    mcp__buf_reset(&sc->buf);
    return &sc->buf;
}

void mcp__rpc_scratch_give(mcp__buf *b)
{
    scratch_t *sc = (scratch_t *)(void *)((char *)b - offsetof(scratch_t, buf));
    sc->busy = 0;
    if (b->cap > (64u << 10))
        mcp__buf_free(b); /* do not keep a huge message's memory */
}

/* Serialises msg (stolen) and hands it to the transport. One pass into a buffer the
 * engine keeps, so the hot path allocates nothing once warm. *handed (may be NULL)
 * says whether the transport was called: when not, the message could not be built
 * or serialised (out of memory). */
static int send_msg_ex(mcp__rpc *rpc, json_t *msg, uint64_t stream, unsigned flags, int *handed)
{
    if (handed != NULL)
        *handed = 0;
    if (msg == NULL)
        return MCP_ENOMEM;
    if (rpc->closed) {
        json_decref(msg);
        return MCP_ECLOSED;
    }
    /* One buffer per thread (engines live on their loop's thread), not per engine:
     * an idle session then holds no serialisation buffer at all. A send may re-enter
     * (a transport answering synchronously), so the buffer is taken while in use. */
    scratch_t *sc = scratch_get();
    mcp__buf local = {0};
    mcp__buf *b = sc == NULL || sc->busy ? &local : &sc->buf;
    int *busy = b == &local ? NULL : &sc->busy;
    if (busy != NULL)
        *busy = 1;
    mcp__buf_reset(b);
    int rc = mcp__json_write(b, msg) == MCP_OK ? MCP_OK : MCP_ENOMEM;
    if (rc == MCP_OK && mcp__buf_append(b, "", 0) != MCP_OK)
        rc = MCP_ENOMEM;
    if (rc == MCP_OK) {
        if (handed != NULL)
            *handed = 1;
        rc = rpc->cbs.send(rpc->user, stream, msg, b->data ? b->data : "", b->len, flags);
    }
    if (busy != NULL)
        *busy = 0;
    json_decref(msg);
    if (b != &local && b->cap > (64u << 10))
        mcp__buf_free(b); /* do not keep a huge message's memory */
    mcp__buf_free(&local);
    return rc;
}

static int send_msg(mcp__rpc *rpc, json_t *msg, uint64_t stream, unsigned flags)
{
    return send_msg_ex(rpc, msg, stream, flags, NULL);
}

/*
 * The answer to req could not be built or serialised (out of memory): it still
 * gets one, an internal error made in a stack buffer without allocating, so the
 * client is not left waiting and the transport hears the request is over. The
 * id goes in as read (integer or string; a string too long for the buffer, or
 * one that would need escaping beyond quotes and backslashes, becomes null).
 */
static void send_fallback_error(mcp__rpc *rpc, const mcp__inreq *req)
{
    char text[640];
    char id[512] = "null";
    if (json_is_integer(req->id)) {
        snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT, json_integer_value(req->id));
    } else if (json_is_string(req->id)) {
        const char *v = json_string_value(req->id);
        size_t n = 0, len = json_string_length(req->id);
        int ok = 1;
        id[n++] = '"';
        for (size_t i = 0; i < len && ok; i++) {
            unsigned char c = (unsigned char)v[i];
            if (c < 0x20 || n + 3 >= sizeof(id))
                ok = 0;
            else if (c == '"' || c == '\\')
                id[n++] = '\\', id[n++] = (char)c;
            else
                id[n++] = (char)c;
        }
        id[n++] = '"';
        id[n] = '\0';
        if (!ok)
            snprintf(id, sizeof(id), "null");
    }
    int n = snprintf(text, sizeof(text),
                     "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":"
                     "\"Internal error: out of memory while answering\"}}",
                     id, MCP_RPC_INTERNAL_ERROR);
    if (n > 0 && (size_t)n < sizeof(text))
        rpc->cbs.send(rpc->user, req->stream, NULL, text, (size_t)n, MCP__SEND_RESPONSE);
    else
        rpc->cbs.send(rpc->user, req->stream, NULL, NULL, 0, MCP__SEND_RESPONSE);
}

static void batch_flush(mcp__rpc *rpc, mcp__batch *b)
{
    if (json_array_size(b->responses) > 0)
        send_msg(rpc, json_incref(b->responses), b->stream, MCP__SEND_RESPONSE);
    json_decref(b->responses);
    free(b);
}

static void batch_done_one(mcp__rpc *rpc, mcp__batch *b)
{
    if (--b->pending == 0)
        batch_flush(rpc, b);
}

/* Sends an answer (stolen) that has no inreq (an invalid message), in its batch if any.
 * flags is MCP__SEND_RESPONSE when it answers a well-formed request. */
static void answer(mcp__rpc *rpc, mcp__batch *b, json_t *msg, uint64_t stream, unsigned flags)
{
    if (msg == NULL)
        return;
    if (b != NULL)
        json_array_append_new(b->responses, msg);
    else
        send_msg(rpc, msg, stream, flags);
}

static void answer_error(mcp__rpc *rpc, mcp__batch *b, const json_t *id, int code,
                         const char *message, uint64_t stream)
{
    answer(rpc, b, mcp__error_message(id, code, message, NULL), stream, 0);
}

static void maybe_release(mcp__rpc *rpc)
{
    if (rpc->freed && rpc->inflight == 0)
        free(rpc);
}

/* ---- Outgoing requests ---- */

static outreq *out_find(mcp__rpc *rpc, json_int_t id)
{
    for (outreq *o = rpc->out_head; o != NULL; o = o->next)
        if (o->id == id)
            return o;
    return NULL;
}

/* Unlinks o and completes it exactly once. */
static void out_release(outreq *o)
{
    if (o->has_timer) {
        uv_timer_stop(&o->timer);
        mcp__uv_close_free((uv_handle_t *)&o->timer, o);
    } else {
        free(o);
    }
}

static void out_complete(outreq *o, int status, const json_t *result, const mcp_rpc_error *err)
{
    mcp__rpc *rpc = o->rpc;
    MCP__LIST_UNLINK(rpc->out_head, o);
    o->prev = o->next = NULL;
    if (rpc->cbs.on_request_done != NULL)
        rpc->cbs.on_request_done(rpc->user, o->id);
    if (o->in_send) {
        /* The transport failed and closed us inside the request's own send: the
         * caller hears it from mcp__rpc_request's return, never from the callback. */
        o->ended_in_send = 1;
        (void)status;
        return;
    }
    if (o->cb != NULL)
        o->cb(o->arg, status, result, err);
    if (o->has_timer) {
        uv_timer_stop(&o->timer);
        mcp__uv_close_free((uv_handle_t *)&o->timer, o);
    } else {
        free(o);
    }
}

static void out_timeout(uv_timer_t *t)
{
    outreq *o = t->data;
    mcp__rpc *rpc = o->rpc;
    json_int_t id = o->id;
    uint64_t stream = o->stream;
    /* Complete first: sending the cancellation may fail and close the engine, which
     * completes every request still listed. */
    out_complete(o, MCP_ETIMEDOUT, NULL, NULL);
    json_t *params = json_pack("{s:I, s:s}", "requestId", id, "reason", "Request timed out");
    send_msg(rpc,
             json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/cancelled",
                       "params", params),
             stream, 0);
}

int mcp__rpc_request(mcp__rpc *rpc, const char *method, json_t *params, uint64_t stream,
                     int timeout_ms, mcp__reply_fn cb, mcp__progress_fn progress_cb, void *arg,
                     json_int_t *id_out)
{
    if (rpc->closed || rpc->input_closed) {
        json_decref(params);
        return MCP_ECLOSED;
    }
    if (params != NULL && !json_is_object(params)) {
        json_decref(params);
        return MCP_EINVAL;
    }
    outreq *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        json_decref(params);
        return MCP_ENOMEM;
    }
    o->id = rpc->next_id++;
    o->stream = stream;
    o->cb = cb;
    o->progress_cb = progress_cb;
    o->arg = arg;
    o->rpc = rpc;
    if (progress_cb != NULL) {
        if (params == NULL)
            params = json_object();
        json_t *meta = json_object_get(params, "_meta");
        if (!json_is_object(meta)) {
            meta = json_object();
            json_object_set_new(params, "_meta", meta);
        }
        json_object_set_new(meta, "progressToken", json_integer(o->id));
    }
    json_t *msg =
        json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", (json_int_t)o->id, "method", method);
    if (msg == NULL) {
        json_decref(params);
        free(o);
        return MCP_ENOMEM;
    }
    if (params != NULL)
        json_object_set_new(msg, "params", params);
    if (timeout_ms > 0) {
        uv_timer_init(rpc->loop, &o->timer);
        o->timer.data = o;
        o->has_timer = 1;
        uv_timer_start(&o->timer, out_timeout, (uint64_t)timeout_ms, 0);
    }
    MCP__LIST_PUSH(rpc->out_head, o);
    if (id_out != NULL)
        *id_out = o->id;
    o->in_send = 1;
    int rc = send_msg(rpc, msg, stream, 0);
    o->in_send = 0;
    if (o->ended_in_send) {
        out_release(o);
        return rc != MCP_OK ? rc : MCP_ECLOSED;
    }
    if (rc != MCP_OK) {
        o->cb = NULL; /* the caller learns of the failure from rc */
        out_complete(o, rc, NULL, NULL);
    }
    return rc;
}

int mcp__rpc_fail(mcp__rpc *rpc, json_int_t id, int status, const mcp_rpc_error *err)
{
    outreq *o = out_find(rpc, id);
    if (o == NULL)
        return MCP_ENOENT;
    out_complete(o, status, NULL, err);
    return MCP_OK;
}

void mcp__rpc_fail_all(mcp__rpc *rpc, int status, const mcp_rpc_error *err)
{
    while (rpc->out_head != NULL)
        out_complete(rpc->out_head, status, NULL, err);
}

int mcp__rpc_cancel(mcp__rpc *rpc, json_int_t id, const char *reason)
{
    outreq *o = out_find(rpc, id);
    if (o == NULL)
        return MCP_ENOENT;
    uint64_t stream = o->stream;
    /* Complete first, as for a timeout: the notification's send may close the engine. */
    out_complete(o, MCP_ECANCELED, NULL, NULL);
    json_t *params = json_pack("{s:I}", "requestId", id);
    if (params != NULL && reason != NULL)
        json_object_set_new(params, "reason", json_string(reason));
    mcp__rpc_notify(rpc, "notifications/cancelled", params, stream);
    return MCP_OK;
}

int mcp__rpc_notify(mcp__rpc *rpc, const char *method, json_t *params, uint64_t stream)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
    if (msg == NULL) {
        json_decref(params);
        return MCP_ENOMEM;
    }
    if (params != NULL)
        json_object_set_new(msg, "params", params);
    return send_msg(rpc, msg, stream, 0);
}

int mcp__rpc_notify_text(mcp__rpc *rpc, const char *text, size_t len, uint64_t stream)
{
    if (rpc->closed)
        return MCP_ECLOSED;
    return rpc->cbs.send(rpc->user, stream, NULL, text, len, 0);
}

static void handle_response(mcp__rpc *rpc, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    outreq *o = json_is_integer(id) ? out_find(rpc, json_integer_value(id)) : NULL;
    if (o == NULL) {
        mcp__debug("response to an unknown request id dropped");
        return;
    }
    json_t *error = json_object_get(msg, "error");
    if (error != NULL) {
        mcp_rpc_error err = {0};
        json_t *code = json_object_get(error, "code");
        json_t *message = json_object_get(error, "message");
        err.code = json_is_integer(code) ? (int)json_integer_value(code) : MCP_RPC_INTERNAL_ERROR;
        snprintf(err.message, sizeof(err.message), "%s",
                 json_is_string(message) ? json_string_value(message) : "");
        err.data = json_object_get(error, "data");
        out_complete(o, MCP_ERPC, NULL, &err);
        return;
    }
    out_complete(o, MCP_OK, json_object_get(msg, "result"), NULL);
}

/* ---- Incoming requests ---- */

static void in_unlink_free(mcp__inreq *req)
{
    mcp__rpc *rpc = req->rpc;
    MCP__LIST_UNLINK(rpc->in_head, req);
    json_decref(req->msg);
    free(req);
    rpc->inflight--;
}

static mcp__inreq *in_find(mcp__rpc *rpc, const json_t *id)
{
    for (mcp__inreq *r = rpc->in_head; r != NULL; r = r->next)
        if (json_equal(r->id, id))
            return r;
    return NULL;
}

/* Sends or batches the answer msg (stolen) for req, then frees req. */
static int finish(mcp__inreq *req, json_t *msg)
{
    mcp__rpc *rpc = req->rpc;
    int rc = MCP_OK;
    mcp__batch *b = req->batch;
    if (rpc->cbs.on_answered != NULL)
        rpc->cbs.on_answered(rpc->user, req, msg);
    if (msg == NULL) {
        rc = MCP_ENOMEM;
        /* No answer could be built; the client still gets one (an internal error). */
        if (b == NULL && !rpc->closed && !req->cancelled)
            send_fallback_error(rpc, req);
        else if (b == NULL && !rpc->closed)
            rpc->cbs.send(rpc->user, req->stream, NULL, NULL, 0, MCP__SEND_RESPONSE);
    } else if (rpc->closed) {
        json_decref(msg);
    } else if (req->cancelled) {
        /* The spec: a cancelled request's response is not sent. The transport still
         * hears that the request is over, so it can end that request's stream. */
        json_decref(msg);
        if (b == NULL)
            rpc->cbs.send(rpc->user, req->stream, NULL, NULL, 0, MCP__SEND_RESPONSE);
    } else if (b != NULL) {
        json_array_append_new(b->responses, msg);
    } else {
        int handed;
        rc = send_msg_ex(rpc, msg, req->stream, MCP__SEND_RESPONSE, &handed);
        if (!handed)
            send_fallback_error(rpc, req); /* it could not be serialised */
    }
    in_unlink_free(req);
    if (b != NULL)
        batch_done_one(rpc, b);
    maybe_release(rpc);
    return rc;
}

int mcp__rpc_respond(mcp__inreq *req, json_t *result)
{
    if (result == NULL)
        result = json_object();
    return finish(req,
                  json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", req->id, "result", result));
}

int mcp__rpc_respond_error(mcp__inreq *req, int code, const char *message, json_t *data)
{
    return finish(req, mcp__error_message(req->id, code, message, data));
}

static void handle_notification(mcp__rpc *rpc, const char *method, json_t *params, uint64_t stream)
{
    if (strcmp(method, "notifications/cancelled") == 0) {
        json_t *id = json_object_get(params, "requestId");
        mcp__inreq *req = mcp__id_valid(id) ? in_find(rpc, id) : NULL;
        if (req == NULL) {
            /* Already answered, or never seen: the spec says ignore it; but an owner may
             * want it (a client whose subscription the server ends, 2026-07-28). */
            if (rpc->forward_cancel && rpc->cbs.on_notification != NULL)
                rpc->cbs.on_notification(rpc->user, method, params, stream);
            return;
        }
        if (strcmp(req->method, "initialize") == 0)
            return; /* the spec: initialize cannot be cancelled */
        req->cancelled = 1;
        if (rpc->cbs.on_cancelled != NULL)
            rpc->cbs.on_cancelled(rpc->user, req,
                                  json_string_value(json_object_get(params, "reason")));
        return;
    }
    if (strcmp(method, "notifications/progress") == 0) {
        json_t *token = json_object_get(params, "progressToken");
        outreq *o = json_is_integer(token) ? out_find(rpc, json_integer_value(token)) : NULL;
        if (o != NULL && o->progress_cb != NULL) {
            o->progress_cb(o->arg, params);
            return;
        }
    }
    if (rpc->cbs.on_notification != NULL)
        rpc->cbs.on_notification(rpc->user, method, params, stream);
}

mcp__msg_kind mcp__jsonrpc_classify(const json_t *msg, int *code, const char **why,
                                    const json_t **echo_id)
{
    *code = 0;
    *why = NULL;
    *echo_id = NULL;
    if (!json_is_object(msg)) {
        *code = MCP_RPC_INVALID_REQUEST;
        *why = "Invalid Request: a message must be a JSON object";
        return MCP__MSG_INVALID;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *version = json_object_get(msg, "jsonrpc");
    *echo_id = mcp__id_valid(id) ? id : NULL;
    *code = MCP_RPC_INVALID_REQUEST;
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
        *why = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
        return MCP__MSG_INVALID;
    }
    if (method == NULL) {
        if (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL) {
            *code = 0;
            return MCP__MSG_RESPONSE;
        }
        *why = "Invalid Request: missing \"method\"";
        return MCP__MSG_INVALID;
    }
    if (!json_is_string(method)) {
        *why = "Invalid Request: \"method\" must be a string";
        return MCP__MSG_INVALID;
    }
    json_t *params = json_object_get(msg, "params");
    if (id == NULL) {
        *code = 0;
        return MCP__MSG_NOTIFICATION;
    }
    if (*echo_id == NULL) {
        *why = "Invalid Request: \"id\" must be a string or an integer";
        return MCP__MSG_INVALID;
    }
    if (params != NULL && !json_is_object(params)) {
        *code = MCP_RPC_INVALID_PARAMS;
        *why = "Invalid params: \"params\" must be an object";
        return MCP__MSG_INVALID;
    }
    *code = 0;
    return MCP__MSG_REQUEST;
}

/* Handles one message of a feed; b is its batch or NULL. */
static void handle_one(mcp__rpc *rpc, json_t *msg, mcp__batch *b, uint64_t stream)
{
    int code;
    const char *why;
    const json_t *echo_id;
    switch (mcp__jsonrpc_classify(msg, &code, &why, &echo_id)) {
    case MCP__MSG_INVALID:
        answer_error(rpc, b, echo_id, code, why, stream);
        return;
    case MCP__MSG_RESPONSE:
        handle_response(rpc, msg);
        return;
    case MCP__MSG_NOTIFICATION: {
        /* A notification can never be answered, not even with an error. */
        json_t *params = json_object_get(msg, "params");
        if (params == NULL || json_is_object(params))
            handle_notification(rpc, json_string_value(json_object_get(msg, "method")), params,
                                stream);
        return;
    }
    case MCP__MSG_REQUEST:
        break;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    if (in_find(rpc, id) != NULL) {
        answer(rpc, b,
               mcp__error_message(id, MCP_RPC_INVALID_REQUEST,
                                  "Invalid Request: a request with this id is still in progress",
                                  NULL),
               stream, MCP__SEND_RESPONSE);
        return;
    }
    mcp__inreq *req = calloc(1, sizeof(*req));
    if (req == NULL) {
        answer(
            rpc, b,
            mcp__error_message(id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL),
            stream, MCP__SEND_RESPONSE);
        return;
    }
    req->rpc = rpc;
    req->msg = json_incref(msg);
    req->id = id;
    req->method = json_string_value(method);
    req->params = params;
    req->stream = stream;
    req->batch = b;
    if (b != NULL)
        b->pending++;
    MCP__LIST_PUSH(rpc->in_head, req);
    rpc->inflight++;
    rpc->cbs.on_request(rpc->user, req);
}

void mcp__rpc_reject_oversized(mcp__rpc *rpc, size_t seen, size_t limit, uint64_t stream)
{
    char msg[160];
    snprintf(msg, sizeof(msg),
             "Invalid Request: message of at least %zu bytes exceeds the limit of %zu bytes", seen,
             limit);
    answer_error(rpc, NULL, NULL, MCP_RPC_INVALID_REQUEST, msg, stream);
}

json_t *mcp__jsonrpc_parse(const char *text, size_t len, json_t **error)
{
    json_error_t jerr;
    json_t *v = mcp__json_parse(text, len, MCP__JSON_ANY, &jerr);
    if (v != NULL) {
        *error = NULL;
        return v;
    }
    char msg[300];
    snprintf(msg, sizeof(msg), "Parse error: %s at line %d, column %d", jerr.text, jerr.line,
             jerr.column);
    json_t *data = json_pack("{s:i, s:i, s:i}", "line", jerr.line, "column", jerr.column,
                             "position", jerr.position);
    *error = mcp__error_message(NULL, MCP_RPC_PARSE_ERROR, msg, data);
    return NULL;
}

void mcp__rpc_feed(mcp__rpc *rpc, const char *text, size_t len, uint64_t stream)
{
    if (rpc->closed)
        return;
    json_t *error;
    json_t *v = mcp__jsonrpc_parse(text, len, &error);
    if (v == NULL) {
        answer(rpc, NULL, error, stream, 0);
        return;
    }
    mcp__rpc_feed_value(rpc, v, stream);
    json_decref(v);
}

void mcp__rpc_feed_value(mcp__rpc *rpc, json_t *v, uint64_t stream)
{
    if (rpc->closed)
        return;
    if (!json_is_array(v)) {
        handle_one(rpc, v, NULL, stream);
        return;
    }
    const char *why = NULL;
    char refusal[160];
    if (json_array_size(v) == 0)
        why = "Invalid Request: an empty batch";
    else if (!rpc->allow_batch)
        why = mcp__revision_batch_refusal(refusal, sizeof(refusal));
    else if (json_array_size(v) > MCP__MAX_BATCH)
        why = "Invalid Request: a batch may hold at most 100 messages";
    if (why != NULL) {
        /* Refused whole: this one error is the whole answer to the batch. */
        answer(rpc, NULL, mcp__error_message(NULL, MCP_RPC_INVALID_REQUEST, why, NULL), stream,
               MCP__SEND_RESPONSE);
        return;
    }
    mcp__batch *b = calloc(1, sizeof(*b));
    if (b == NULL || (b->responses = json_array()) == NULL) {
        free(b);
        return;
    }
    b->pending = 1; /* held while feeding, so inline answers cannot flush early */
    b->stream = stream;
    size_t i;
    json_t *el;
    json_array_foreach(v, i, el)
    {
        if (rpc->closed)
            break;
        handle_one(rpc, el, b, stream);
    }
    batch_done_one(rpc, b);
}

void mcp__rpc_input_closed(mcp__rpc *rpc)
{
    rpc->input_closed = 1;
    while (rpc->out_head != NULL)
        out_complete(rpc->out_head, MCP_ECLOSED, NULL, NULL);
}

void mcp__rpc_close(mcp__rpc *rpc)
{
    if (rpc->closed)
        return;
    rpc->closed = 1;
    while (rpc->out_head != NULL)
        out_complete(rpc->out_head, MCP_ECLOSED, NULL, NULL);
    for (mcp__inreq *r = rpc->in_head; r != NULL; r = r->next)
        r->cancelled = 1;
}

void mcp__rpc_free(mcp__rpc *rpc)
{
    if (rpc == NULL)
        return;
    mcp__rpc_close(rpc);
    rpc->freed = 1;
    maybe_release(rpc);
}
