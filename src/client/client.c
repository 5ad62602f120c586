/* SPDX-License-Identifier: MIT */
/*
 * The MCP client: one connection to one server, run by a loop: a loop on a
 * thread of the client's own (mcp_client_new), or the caller's loop on the
 * caller's thread (mcp_client_new_on_loop). Public calls from other threads post
 * their work to that loop through the mailbox and, for the blocking ones, wait on
 * a condition variable; the loop owns the JSON-RPC engine, the child process and
 * its pipes.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "protocol/icons.h"
#include "protocol/trace.h"

static void client_destroy(mcp_client *c);

/* ---- Waiting for the loop ---- */

int mcp__waiter_init(waiter *w)
{
    memset(w, 0, sizeof(*w));
    if (uv_mutex_init(&w->lock) != 0)
        return MCP_EIO;
    if (uv_cond_init(&w->cond) != 0) {
        uv_mutex_destroy(&w->lock);
        return MCP_EIO;
    }
    return MCP_OK;
}

void mcp__waiter_destroy(waiter *w)
{
    uv_cond_destroy(&w->cond);
    uv_mutex_destroy(&w->lock);
}

void mcp__waiter_finish(waiter *w, int status, const json_t *result, const mcp_rpc_error *err)
{
    uv_mutex_lock(&w->lock);
    w->status = status;
    w->result = json_incref((json_t *)result);
    if (err != NULL) {
        w->err.code = err->code;
        memcpy(w->err.message, err->message, sizeof(err->message));
        w->err.data = json_incref(err->data);
    }
    w->done = 1;
    uv_cond_broadcast(&w->cond);
    uv_mutex_unlock(&w->lock);
}

void mcp__waiter_set_id(waiter *w, long long id)
{
    uv_mutex_lock(&w->lock);
    w->id = id;
    w->id_set = 1;
    uv_cond_broadcast(&w->cond);
    uv_mutex_unlock(&w->lock);
}

static void waiter_wait(waiter *w)
{
    uv_mutex_lock(&w->lock);
    while (!w->done)
        uv_cond_wait(&w->cond, &w->lock);
    uv_mutex_unlock(&w->lock);
}

static int on_loop_thread(mcp_client *c)
{
    if (!c->running)
        return 0;
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, &c->thread);
}

/* ---- Lifetime and settings ---- */

mcp_client *mcp_client_new(const char *name, const char *version)
{
    if (name == NULL || version == NULL)
        return NULL;
    mcp_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->name = mcp__strdup(name);
    c->version = mcp__strdup(version);
    c->timeout_ms = MCP__CLIENT_DEFAULT_TIMEOUT_MS;
    c->max_message = MCP__CLIENT_MAX_MESSAGE;
    c->max_rounds = MCP__CLIENT_DEFAULT_ROUNDS;
    c->loop = &c->own_loop;
    c->info = c->name != NULL && c->version != NULL
                  ? json_pack("{s:s, s:s}", "name", c->name, "version", c->version)
                  : NULL;
    if (c->name == NULL || c->version == NULL || c->info == NULL || uv_mutex_init(&c->lock) != 0) {
        json_decref(c->info);
        free(c->name);
        free(c->version);
        free(c);
        return NULL;
    }
    return c;
}

int mcp_client_new_on_loop(struct uv_loop_s *loop, const char *name, const char *version,
                           mcp_client **out)
{
    if (out != NULL)
        *out = NULL;
    if (loop == NULL || name == NULL || version == NULL || out == NULL)
        return MCP_EINVAL;
    mcp_client *c = mcp_client_new(name, version);
    if (c == NULL)
        return MCP_ENOMEM;
    c->loop = loop;
    c->host_loop = 1;
    c->thread = uv_thread_self();
    if (mcp__mailbox_init(&c->mb, loop) != MCP_OK) {
        client_destroy(c);
        return MCP_EIO;
    }
    c->mb.async.data = c;
    c->running = 1;
    *out = c;
    return MCP_OK;
}

int mcp_client_set_timeout(mcp_client *c, int timeout_ms)
{
    if (c == NULL || timeout_ms <= 0)
        return MCP_EINVAL;
    c->timeout_ms = timeout_ms;
    return MCP_OK;
}

int mcp_client_set_max_message_size(mcp_client *c, size_t bytes)
{
    if (c == NULL || bytes < 1024 || c->thread_started || c->connect_begun)
        return MCP_EINVAL;
    c->max_message = bytes;
    return MCP_OK;
}

int mcp_client_set_protocol(mcp_client *c, const char *protocol)
{
    if (c == NULL || protocol == NULL)
        return MCP_EINVAL;
    if (c->connect_begun)
        return MCP_ESTATE;
    const mcp__revision *rev = NULL;
    enum client_mode mode;
    if (strcmp(protocol, "auto") == 0) {
        mode = CMODE_AUTO;
    } else if (strcmp(protocol, "legacy") == 0) {
        mode = CMODE_HTTPSSE;
    } else if ((rev = mcp__revision_find(protocol)) != NULL) {
        mode = rev->modern ? CMODE_MODERN : CMODE_HTTPSSE;
    } else {
        return MCP_EINVAL;
    }
    c->mode = mode;
    c->pinned = rev;
    return MCP_OK;
}

int mcp__client_set_log_level(mcp_client *c, const char *name)
{
    char *copy = mcp__strdup(name);
    if (copy == NULL)
        return MCP_ENOMEM;
    uv_mutex_lock(&c->lock);
    char *old = c->log_level;
    c->log_level = copy;
    uv_mutex_unlock(&c->lock);
    free(old);
    return MCP_OK;
}

int mcp_client_set_max_input_rounds(mcp_client *c, int rounds)
{
    if (c == NULL || rounds < 0)
        return MCP_EINVAL;
    c->max_rounds = rounds;
    return MCP_OK;
}

int mcp_client_on_sampling(mcp_client *c, mcp_client_request_fn fn, void *user)
{
    if (c == NULL || c->connected)
        return c == NULL ? MCP_EINVAL : MCP_ESTATE;
    c->sampling_fn = fn;
    c->sampling_user = user;
    return MCP_OK;
}

int mcp_client_on_elicitation(mcp_client *c, mcp_client_request_fn fn, void *user)
{
    if (c == NULL || c->connected)
        return c == NULL ? MCP_EINVAL : MCP_ESTATE;
    c->elicit_fn = fn;
    c->elicit_user = user;
    return MCP_OK;
}

int mcp_client_on_notification(mcp_client *c, mcp_client_notification_fn fn, void *user)
{
    if (c == NULL || c->connected)
        return c == NULL ? MCP_EINVAL : MCP_ESTATE;
    c->notify_fn = fn;
    c->notify_user = user;
    return MCP_OK;
}

const char *mcp_client_protocol_version(const mcp_client *c)
{
    return c->rev != NULL ? c->rev->version : NULL;
}

const json_t *mcp_client_server_info(const mcp_client *c)
{
    return c->server_info;
}

const json_t *mcp_client_server_capabilities(const mcp_client *c)
{
    return c->server_caps;
}

const json_t *mcp_client_server_extension(const mcp_client *c, const char *id)
{
    if (c == NULL || id == NULL)
        return NULL;
    const json_t *v = json_object_get(json_object_get(c->server_caps, "extensions"), id);
    return json_is_object(v) ? v : NULL;
}

static int set_member(mcp_client *c, json_t **slot, const char *key, const json_t *value,
                      int remove)
{
    uv_mutex_lock(&c->lock);
    int rc = mcp__members_set(slot, key, value, remove);
    uv_mutex_unlock(&c->lock);
    return rc;
}

int mcp_client_set_caps(mcp_client *c, const mcp_client_caps *given)
{
    mcp_client_caps caps = {0};
    if (c == NULL ||
        (given != NULL &&
         mcp__opts_copy(&caps, sizeof(caps), given,
                        offsetof(mcp_client_caps, sampling_context) + sizeof(mcp_cap)) != MCP_OK) ||
        !mcp__cap_valid(caps.elicitation_form) || !mcp__cap_valid(caps.elicitation_url) ||
        !mcp__cap_valid(caps.sampling_tools) || !mcp__cap_valid(caps.sampling_context))
        return MCP_EINVAL;
    caps.size = sizeof(caps);
    uv_mutex_lock(&c->lock);
    c->caps = caps;
    uv_mutex_unlock(&c->lock);
    return MCP_OK;
}

const char *mcp__client_elicit_refused(mcp_client *c, const json_t *params)
{
    const json_t *m = json_object_get(params, "mode");
    const char *mode = json_string_value(m);
    if (m != NULL && (mode == NULL || (strcmp(mode, "url") != 0 && strcmp(mode, "form") != 0)))
        return "Invalid params: \"mode\" must be \"form\" or \"url\"";
    int url = mode != NULL && strcmp(mode, "url") == 0;
    uv_mutex_lock(&c->lock);
    int declared =
        url ? c->caps.elicitation_url == MCP_CAP_ON : c->caps.elicitation_form != MCP_CAP_OFF;
    uv_mutex_unlock(&c->lock);
    if (declared)
        return NULL;
    return url ? "Invalid params: this client did not declare URL-mode elicitation"
               : "Invalid params: this client did not declare form-mode elicitation";
}

int mcp_client_set_extension(mcp_client *c, const char *id, const json_t *settings)
{
    if (c == NULL || !mcp__extension_id_valid(id) ||
        (settings != NULL && !json_is_object(settings)))
        return MCP_EINVAL;
    return set_member(c, &c->extensions, id, settings, 0);
}

int mcp_client_remove_extension(mcp_client *c, const char *id)
{
    if (c == NULL || id == NULL)
        return MCP_EINVAL;
    return set_member(c, &c->extensions, id, NULL, 1);
}

int mcp_client_set_experimental(mcp_client *c, const char *name, const json_t *settings)
{
    if (c == NULL || name == NULL || name[0] == '\0' || strlen(name) > 255 ||
        (settings != NULL && !json_is_object(settings)))
        return MCP_EINVAL;
    int rc = set_member(c, &c->experimental, name, settings, settings == NULL);
    return rc == MCP_ENOENT ? MCP_OK : rc;
}

/* The server requests the library answers itself. */
static int library_request(const char *m)
{
    return strcmp(m, "ping") == 0 || strcmp(m, "roots/list") == 0 ||
           strcmp(m, "sampling/createMessage") == 0 || strcmp(m, "elicitation/create") == 0 ||
           strncmp(m, "notifications/", 14) == 0 || strncmp(m, "rpc.", 4) == 0;
}

const struct mcp__client_method *mcp__client_method(const mcp_client *c, const char *method)
{
    for (size_t i = 0; i < c->nmethods; i++)
        if (strcmp(c->methods[i].method, method) == 0)
            return &c->methods[i];
    return NULL;
}

int mcp_client_on_request(mcp_client *c, const char *method, mcp_client_request_fn fn, void *user)
{
    if (c == NULL || method == NULL || method[0] == '\0' || strlen(method) > 255 ||
        library_request(method))
        return MCP_EINVAL;
    if (c->connected)
        return MCP_ESTATE;
    struct mcp__client_method *m = (struct mcp__client_method *)mcp__client_method(c, method);
    if (m != NULL && fn != NULL) {
        m->fn = fn;
        m->user = user;
        return MCP_OK;
    }
    if (m != NULL) {
        free(m->method);
        *m = c->methods[--c->nmethods];
        return MCP_OK;
    }
    if (fn == NULL)
        return MCP_OK;
    if (c->nmethods >= MCP__CLIENT_MAX_METHODS)
        return MCP_ELIMIT;
    struct mcp__client_method *grown = realloc(c->methods, (c->nmethods + 1) * sizeof(*grown));
    if (grown == NULL)
        return MCP_ENOMEM;
    c->methods = grown;
    char *name = mcp__strdup(method);
    if (name == NULL)
        return MCP_ENOMEM;
    c->methods[c->nmethods++] = (struct mcp__client_method){name, fn, user};
    return MCP_OK;
}

const char *mcp_client_instructions(const mcp_client *c)
{
    return c->instructions;
}

/* ---- Server -> client requests ---- */

typedef struct incoming_job {
    mcp__mail mail;
    mcp_client *c;
    mcp__inreq *req;
    mcp_client_request_fn fn;
    void *user;
    json_t *params;
    json_t *result;
    mcp_rpc_error err;
    int elicitation;
} incoming_job;

/* When the user accepted an elicitation, fill in what they left out from the
 * schema's defaults (SEP-1034), so servers get complete answers. */
void mcp__fill_elicitation_defaults(const json_t *params, json_t *result)
{
    json_t *action = json_object_get(result, "action");
    if (!json_is_string(action) || strcmp(json_string_value(action), "accept") != 0)
        return;
    json_t *props = json_object_get(json_object_get(params, "requestedSchema"), "properties");
    if (!json_is_object(props))
        return;
    json_t *content = json_object_get(result, "content");
    if (!json_is_object(content)) {
        content = json_object();
        if (content == NULL || json_object_set_new(result, "content", content) != 0)
            return;
    }
    const char *key;
    json_t *prop;
    json_object_foreach(props, key, prop)
    {
        json_t *def = json_object_get(prop, "default");
        if (def != NULL && json_object_get(content, key) == NULL)
            json_object_set(content, key, def);
    }
}

static void incoming_done(mcp__mail *m)
{
    incoming_job *j = (incoming_job *)m;
    if (j->result != NULL && !json_is_object(j->result)) {
        json_decref(j->result);
        j->result = NULL;
        mcp_rpc_error_clear(&j->err);
        j->err.code = MCP_RPC_INTERNAL_ERROR;
        snprintf(j->err.message, sizeof(j->err.message),
                 "Internal error: the client's handler gave a result that is not an object");
    }
    if (j->result != NULL)
        mcp__rpc_respond(j->req, j->result);
    else
        mcp__rpc_respond_error(j->req, j->err.code ? j->err.code : MCP_RPC_INTERNAL_ERROR,
                               j->err.message[0] ? j->err.message : "The client refused",
                               j->err.data);
    json_decref(j->params);
    free(j);
}

static void incoming_run(void *arg)
{
    incoming_job *j = arg;
    j->result = j->fn(j->c, j->params, &j->err, j->user);
    if (j->result != NULL && j->elicitation)
        mcp__fill_elicitation_defaults(j->params, j->result);
    j->mail.fn = incoming_done;
    if (mcp__mailbox_post(&j->c->mb, &j->mail) != MCP_OK)
        mcp__error("a client handler finished after the client closed");
}

static void client_on_request(void *user, mcp__inreq *req)
{
    mcp_client *c = user;
    const char *m = req->method;
    if (strcmp(m, "ping") == 0) {
        mcp__rpc_respond(req, json_object());
        return;
    }
    if (strcmp(m, "roots/list") == 0) {
        uv_mutex_lock(&c->lock);
        json_t *roots = c->roots ? json_deep_copy(c->roots) : NULL;
        uv_mutex_unlock(&c->lock);
        if (roots == NULL) {
            mcp__rpc_respond_error(req, MCP_RPC_METHOD_NOT_FOUND, "Method not found: roots/list",
                                   NULL);
            return;
        }
        mcp__rpc_respond(req, json_pack("{s:o}", "roots", roots));
        return;
    }
    mcp_client_request_fn fn = NULL;
    void *fn_user = NULL;
    int elicitation = 0;
    if (strcmp(m, "sampling/createMessage") == 0) {
        fn = c->sampling_fn;
        fn_user = c->sampling_user;
    } else if (strcmp(m, "elicitation/create") == 0) {
        fn = c->elicit_fn;
        fn_user = c->elicit_user;
        elicitation = 1;
    } else {
        const struct mcp__client_method *own = mcp__client_method(c, m);
        fn = own != NULL ? own->fn : NULL;
        fn_user = own != NULL ? own->user : NULL;
    }
    if (fn == NULL) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Method not found: %s", m);
        mcp__rpc_respond_error(req, MCP_RPC_METHOD_NOT_FOUND, msg, NULL);
        return;
    }
    const char *refused = elicitation ? mcp__client_elicit_refused(c, req->params) : NULL;
    if (refused != NULL) {
        mcp__rpc_respond_error(req, MCP_RPC_INVALID_PARAMS, refused, NULL);
        return;
    }
    incoming_job *j = calloc(1, sizeof(*j));
    if (j == NULL || c->pool == NULL) {
        free(j);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    j->c = c;
    j->req = req;
    j->fn = fn;
    j->user = fn_user;
    j->params = req->params ? json_incref(req->params) : json_object();
    j->elicitation = elicitation;
    if (mcp__pool_submit(c->pool, incoming_run, j) != MCP_OK) {
        json_decref(j->params);
        free(j);
        mcp__rpc_respond_error(req, MCP_RPC_INTERNAL_ERROR, "Internal error: no worker", NULL);
    }
}

static void client_on_notification(void *user, const char *method, const json_t *params,
                                   uint64_t stream)
{
    mcp_client *c = user;
    (void)stream;
    if (mcp__client_listen_note(c, method, params))
        return;
    if (c->notify_fn != NULL)
        c->notify_fn(c, method, params, c->notify_user);
}

/* Whether msg is notifications/cancelled for the request id. */
static int cancels(const json_t *msg, json_int_t id)
{
    const char *m = json_string_value(json_object_get(msg, "method"));
    const json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
    return m != NULL && strcmp(m, "notifications/cancelled") == 0 && json_is_integer(rid) &&
           json_integer_value(rid) == id;
}

static int client_send(void *user, uint64_t stream, const json_t *msg, const char *text, size_t len,
                       unsigned flags)
{
    mcp_client *c = user;
    (void)stream;
    (void)flags;
    if (c->tr == NULL || c->tr_closing)
        return MCP_ECLOSED;
    if (text == NULL)
        return MCP_OK; /* a cancelled request: nothing to write */
    /* A probe that timed out is not cancelled: a legacy server is to hear initialize
     * first (nothing else has been sent to it but the probe). The engine sends the
     * cancellation after the probe's reply has already sent initialize. */
    if (c->probe_sent && cancels(msg, c->probe_id))
        return MCP_OK;
    return c->tr->ops->send(c->tr, msg, text, len);
}

static void client_request_done(void *user, json_int_t id)
{
    mcp_client *c = user;
    if (c->tr != NULL && !c->tr_closing && c->tr->ops->request_done != NULL)
        c->tr->ops->request_done(c->tr, id);
}

static const mcp__rpc_cbs client_cbs = {
    .send = client_send,
    .on_request = client_on_request,
    .on_notification = client_on_notification,
    .on_cancelled = NULL, /* the handler finishes; its answer is dropped */
    .on_request_done = client_request_done,
};

/* ---- The transport's side (loop thread) ---- */

static void maybe_finish(mcp_client *c);
static void connect_run(mcp__mail *m);

static void tr_on_text(void *user, const char *text, size_t len)
{
    mcp_client *c = user;
    if (c->rpc != NULL)
        mcp__rpc_feed(c->rpc, text, len, 0);
}

static void tr_on_value(void *user, json_t *msg)
{
    mcp_client *c = user;
    if (c->rpc != NULL)
        mcp__rpc_feed_value(c->rpc, msg, 0);
}

static void tr_on_request_failed(void *user, json_int_t id, int status, const mcp_rpc_error *err,
                                 long http)
{
    mcp_client *c = user;
    if (c->rpc == NULL)
        return;
    /* The HTTP status goes beside the error to the request's callback, which runs inside
     * the call: the probe tells a modern 404 from a legacy one by it. */
    c->fail_http = http;
    mcp__rpc_fail(c->rpc, id, status, err);
    c->fail_http = 0;
}

/* The server is gone: pending requests fail with status, and the engine stops. */
static void tr_on_lost(void *user, int status, const char *why)
{
    mcp_client *c = user;
    if (c->rpc == NULL)
        return;
    mcp_rpc_error err = {0};
    snprintf(err.message, sizeof(err.message), "%s", why != NULL ? why : mcp_strerror(status));
    mcp__rpc_fail_all(c->rpc, status, &err);
    if (c->respawn != NULL)
        return; /* the probe made a stdio server exit: it is started again */
    mcp__rpc_close(c->rpc);
    mcp__modern_fail_waiting(c, status);
    mcp__client_listen_fail_all(c, status, err.message);
    connect_mail *cm = c->ready_wait;
    c->ready_wait = NULL;
    if (cm != NULL)
        mcp__connect_finish(cm, status, &err);
}

static void tr_on_ready(void *user)
{
    mcp_client *c = user;
    connect_mail *cm = c->ready_wait;
    c->ready_wait = NULL;
    if (cm == NULL)
        return;
    if (c->closing || c->rpc == NULL || mcp__rpc_closed(c->rpc)) {
        mcp__connect_finish(cm, MCP_ECLOSED, NULL);
        return;
    }
    c->connected = 1;
    mcp__connect_finish(cm, MCP_OK, NULL);
}

static void tr_on_closed(void *user)
{
    mcp_client *c = user;
    c->tr = NULL;
    c->tr_closing = 0;
    connect_mail *cm = c->respawn;
    c->respawn = NULL;
    if (cm != NULL) {
        if (c->closing)
            mcp__connect_finish(cm, MCP_ECLOSED, NULL);
        else
            mcp__probe_respawned(cm);
    }
    maybe_finish(c);
}

static const mcp__ctr_cbs client_tr_cbs = {
    .on_text = tr_on_text,
    .on_value = tr_on_value,
    .on_request_failed = tr_on_request_failed,
    .on_lost = tr_on_lost,
    .on_ready = tr_on_ready,
    .on_closed = tr_on_closed,
};

/* Stops the engine (pending requests fail with MCP_ECLOSED) and closes the
 * transport, whose on_closed comes later. */
static void connection_close(mcp_client *c)
{
    connect_mail *cm = c->ready_wait;
    c->ready_wait = NULL;
    if (cm != NULL)
        mcp__connect_finish(cm, MCP_ECLOSED, NULL);
    if (c->rpc != NULL)
        mcp__rpc_close(c->rpc);
    mcp__modern_fail_waiting(c, MCP_ECLOSED);
    mcp__client_listen_fail_all(c, MCP_ECLOSED, "the client is closing");
    if (c->tr != NULL && !c->tr_closing) {
        c->tr_closing = 1;
        c->tr->ops->close(c->tr);
    }
}

static void close_done(mcp_client *c);

static void mailbox_closed(mcp__mailbox *mb)
{
    mcp_client *c = mb->async.data;
    /* A threaded client's loop now has no handles, and uv_run returns on its thread.
     * A loop client has nothing left on the caller's loop: it ends here. */
    if (c->host_loop)
        close_done(c);
}

/* After mcp_client_free asked for it: once the transport has closed (for stdio,
 * the child is reaped), close the mailbox, which lets the loop end. */
static void maybe_finish(mcp_client *c)
{
    if (!c->want_final || c->tr != NULL)
        return;
    c->want_final = 0;
    mcp__mailbox_close(&c->mb, mailbox_closed);
}

/* ---- Connecting ---- */

static void argv_free(char **argv)
{
    for (char **a = argv; a != NULL && *a != NULL; a++)
        free(*a);
    free(argv);
}

static void connect_mail_free(connect_mail *cm)
{
    argv_free(cm->argv);
    mcp__shttp_cfg_free(cm->http);
    free(cm);
}

/* Caller's thread: a connect not yet posted, to argv or to http (stolen). NULL on
 * ENOMEM (http is then freed). */
static connect_mail *connect_mail_new(mcp_client *c, const char *const argv[], mcp__shttp_cfg *http,
                                      int timeout_ms)
{
    size_t n = 0;
    while (argv != NULL && argv[n] != NULL)
        n++;
    connect_mail *cm = calloc(1, sizeof(*cm));
    if (cm == NULL || (argv != NULL && (cm->argv = calloc(n + 1, sizeof(*cm->argv))) == NULL)) {
        free(cm);
        mcp__shttp_cfg_free(http);
        return NULL;
    }
    cm->http = http;
    for (size_t i = 0; i < n; i++) {
        if ((cm->argv[i] = mcp__strdup(argv[i])) == NULL) {
            connect_mail_free(cm);
            return NULL;
        }
    }
    cm->mail.fn = connect_run;
    cm->c = c;
    cm->timeout_ms = timeout_ms > 0 ? timeout_ms : c->timeout_ms;
    return cm;
}

/* Loop thread: the end of a connect, good or bad. Frees cm. */
void mcp__connect_finish(connect_mail *cm, int status, const mcp_rpc_error *err)
{
    mcp_client *c = cm->c;
    if (cm->w != NULL) {
        mcp__waiter_finish(cm->w, status, NULL, err);
    } else {
        /* The waiting caller keeps the server's answer itself; here nobody waits. */
        mcp_rpc_error_clear(&c->connect_err);
        if (status != MCP_OK && err != NULL) {
            c->connect_err = *err;
            c->connect_err.data = json_incref(err->data);
        }
        if (cm->cb != NULL)
            cm->cb(c, status, cm->user); /* may close c: c is not used below */
    }
    connect_mail_free(cm);
}

static void init_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    connect_mail *cm = arg;
    mcp_client *c = cm->c;
    if (status != MCP_OK) {
        mcp__connect_finish(cm, status, err);
        return;
    }
    const char *version = json_string_value(json_object_get(result, "protocolVersion"));
    const mcp__revision *rev = mcp__revision_find_legacy(version);
    if (rev == NULL || (c->mode == CMODE_HTTPSSE && c->pinned != NULL && rev != c->pinned)) {
        /* The spec: a client that does not speak the server's version disconnects; one
         * pinned to a revision speaks no other. */
        mcp_rpc_error e = {0};
        if (rev == NULL)
            snprintf(e.message, sizeof(e.message),
                     "the server answered initialize with protocol version %s, which we do "
                     "not speak",
                     version ? version : "(none)");
        else
            snprintf(e.message, sizeof(e.message),
                     "the server answered initialize with protocol version %s, not the %s "
                     "the client is pinned to",
                     version, c->pinned->version);
        mcp__warn("%s", e.message);
        mcp__rpc_close(c->rpc);
        mcp__connect_finish(cm, MCP_EPROTO, &e);
        return;
    }
    json_t *caps = json_object_get(result, "capabilities");
    json_t *info = json_object_get(result, "serverInfo");
    const char *instructions = json_string_value(json_object_get(result, "instructions"));
    c->rev = rev;
    c->server_caps = json_is_object(caps) ? json_incref(caps) : json_object();
    c->server_info = json_is_object(info) ? json_incref(info) : json_object();
    c->instructions = mcp__strdup(instructions);
    /* We never send batches, but a revision that has them obliges us to take them. */
    mcp__rpc_allow_batch(c->rpc, rev->batches);
    mcp__rpc_notify(c->rpc, "notifications/initialized", NULL, 0);
    if (c->tr != NULL && !c->tr_closing && c->tr->ops->await_ready != NULL &&
        c->tr->ops->await_ready(c->tr)) {
        c->ready_wait = cm; /* tr_on_ready finishes it */
        return;
    }
    c->connected = 1;
    mcp__connect_finish(cm, MCP_OK, NULL);
}

json_t *mcp__client_capabilities(mcp_client *c, int modern)
{
    json_t *caps = json_object();
    if (caps == NULL)
        return NULL;
    uv_mutex_lock(&c->lock);
    const mcp_client_caps *k = &c->caps;
    if (c->sampling_fn != NULL) {
        json_t *s = json_object();
        if (k->sampling_tools == MCP_CAP_ON)
            json_object_set_new(s, "tools", json_object());
        if (k->sampling_context == MCP_CAP_ON)
            json_object_set_new(s, "context", json_object());
        json_object_set_new(caps, "sampling", s);
    }
    if (c->elicit_fn != NULL &&
        (k->elicitation_form != MCP_CAP_OFF || k->elicitation_url == MCP_CAP_ON)) {
        json_t *e = json_object();
        if (k->elicitation_form != MCP_CAP_OFF)
            json_object_set_new(e, "form", json_object());
        if (k->elicitation_url == MCP_CAP_ON)
            json_object_set_new(e, "url", json_object());
        json_object_set_new(caps, "elicitation", e);
    }
    int roots = c->roots != NULL;
    if (c->extensions != NULL)
        json_object_set(caps, "extensions", c->extensions);
    if (c->experimental != NULL)
        json_object_set(caps, "experimental", c->experimental);
    uv_mutex_unlock(&c->lock);
    /* 2026-07-28 removed notifications/roots/list_changed, and listChanged with it. */
    if (roots)
        json_object_set_new(caps, "roots",
                            modern ? json_object() : json_pack("{s:b}", "listChanged", 1));
    return caps;
}

void mcp__connect_initialize(connect_mail *cm, const mcp__revision *rev)
{
    mcp_client *c = cm->c;
    if (rev == NULL)
        rev = mcp__revision_latest();
    json_t *params = json_pack("{s:s, s:o, s:O}", "protocolVersion", rev->version, "capabilities",
                               mcp__client_capabilities(c, 0), "clientInfo", c->info);
    int rc = mcp__rpc_request(c->rpc, "initialize", params, 0, cm->timeout_ms, init_reply, NULL, cm,
                              NULL);
    if (rc != MCP_OK)
        mcp__connect_finish(cm, rc, NULL);
}

/* Loop thread: the transport to the connect's server (a child, or HTTP). */
int mcp__connect_transport(connect_mail *cm)
{
    mcp_client *c = cm->c;
    int rc;
    if (cm->http != NULL) {
        rc = mcp__shttp_ctr_new(c->loop, cm->http, c->max_message, &client_tr_cbs, c, &c->tr);
        cm->http = NULL;
        c->tr_http = 1;
    } else {
        /* argv stays with the connect: a stdio probe may start the server once more. */
        rc = mcp__stdio_ctr_new(c->loop, cm->argv, c->max_message, &client_tr_cbs, c, &c->tr);
    }
    if (c->tr != NULL)
        c->tr->client = c;
    return rc;
}

static void connect_run(mcp__mail *m)
{
    connect_mail *cm = (connect_mail *)m;
    mcp_client *c = cm->c;
    if (c->closing) {
        mcp__connect_finish(cm, MCP_ECLOSED, NULL);
        return;
    }
    if (c->rpc != NULL || c->tr != NULL) {
        mcp__connect_finish(cm, MCP_ESTATE, NULL);
        return;
    }
    /* A loop client starts the workers only when it has handlers for them to run. */
    if (c->pool == NULL && c->host_loop &&
        (c->sampling_fn != NULL || c->elicit_fn != NULL || c->nmethods > 0) &&
        (c->pool = mcp__pool_new(2)) == NULL) {
        mcp__connect_finish(cm, MCP_ENOMEM, NULL);
        return;
    }
    if ((c->rpc = mcp__rpc_new(c->loop, &client_cbs, c)) == NULL) {
        mcp__connect_finish(cm, MCP_ENOMEM, NULL);
        return;
    }
    mcp__rpc_forward_unmatched_cancel(c->rpc);
    /* The 2024-11-05 transport, named as such, has only initialize. */
    int http_sse = cm->http != NULL && mcp__shttp_cfg_httpsse(cm->http);
    if (http_sse && c->mode == CMODE_MODERN) {
        mcp_rpc_error e = {0};
        snprintf(e.message, sizeof(e.message),
                 "the HTTP+SSE transport (http_sse) has no revision %s",
                 mcp__revision_modern()->version);
        mcp__rpc_close(c->rpc);
        mcp__connect_finish(cm, MCP_EINVAL, &e);
        return;
    }
    int rc = mcp__connect_transport(cm);
    if (rc != MCP_OK) {
        mcp__rpc_close(c->rpc);
        mcp__connect_finish(cm, rc, NULL);
        return;
    }
    if (c->mode == CMODE_HTTPSSE || http_sse)
        mcp__connect_initialize(cm, c->mode == CMODE_HTTPSSE ? c->pinned : NULL);
    else
        mcp__probe_send(cm);
}

static void client_thread_main(void *arg)
{
    mcp_client *c = arg;
    uv_run(c->loop, UV_RUN_DEFAULT);
    mcp__rpc_thread_cleanup();
    if (c->close_async) {
        /* Closed by mcp_client_close: nobody joins this thread, which frees the client. */
        pthread_detach(pthread_self());
        if (uv_loop_close(c->loop) != 0)
            mcp__warn("the client loop closed with handles still open");
        close_done(c);
    }
}

/* Starts the loop thread (caller's thread, once). */
static int start_loop(mcp_client *c)
{
    if (c->running)
        return MCP_OK;
    if (uv_loop_init(c->loop) != 0)
        return MCP_EIO;
    if (mcp__mailbox_init(&c->mb, c->loop) != MCP_OK) {
        uv_loop_close(c->loop);
        return MCP_EIO;
    }
    c->mb.async.data = c;
    c->pool = mcp__pool_new(2);
    if (c->pool == NULL || uv_thread_create(&c->thread, client_thread_main, c) != 0) {
        mcp__pool_free(c->pool);
        c->pool = NULL;
        mcp__mailbox_close(&c->mb, NULL);
        uv_run(c->loop, UV_RUN_DEFAULT);
        uv_loop_close(c->loop);
        return MCP_EIO;
    }
    c->thread_started = 1;
    c->running = 1;
    return MCP_OK;
}

/* Caller's thread: what every connect does before posting; on MCP_OK *out is the
 * connect to post. http is stolen. */
static int connect_prepare(mcp_client *c, const char *const argv[], mcp__shttp_cfg *http,
                           int timeout_ms, connect_mail **out)
{
    /* A server that dies must not take us with it through SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    int rc = start_loop(c);
    if (rc != MCP_OK) {
        mcp__shttp_cfg_free(http);
        return rc;
    }
    if ((*out = connect_mail_new(c, argv, http, timeout_ms)) == NULL)
        return MCP_ENOMEM;
    c->connect_begun = 1;
    return MCP_OK;
}

/* A blocking connect: posts cm and waits for its end. */
static int connect_wait(mcp_client *c, connect_mail *cm)
{
    waiter w;
    if (mcp__waiter_init(&w) != MCP_OK) {
        connect_mail_free(cm);
        return MCP_EIO;
    }
    cm->w = &w;
    int rc = mcp__mailbox_post(&c->mb, &cm->mail);
    if (rc != MCP_OK) {
        connect_mail_free(cm);
        mcp__waiter_destroy(&w);
        return rc;
    }
    waiter_wait(&w);
    rc = w.status;
    mcp_rpc_error_clear(&c->connect_err);
    if (rc != MCP_OK && (w.err.code != 0 || w.err.message[0] != '\0')) {
        /* Kept for mcp_client_connect_error(): the caller gets only the status. */
        c->connect_err = w.err;
        w.err.data = NULL;
    }
    json_decref(w.result);
    mcp_rpc_error_clear(&w.err);
    mcp__waiter_destroy(&w);
    return rc;
}

/* An asynchronous connect: posts cm, even on the loop thread, so that cb never
 * runs inside the call. */
static int connect_post(mcp_client *c, connect_mail *cm, mcp_connect_fn cb, void *user)
{
    cm->cb = cb;
    cm->user = user;
    int rc = mcp__mailbox_post(&c->mb, &cm->mail);
    if (rc != MCP_OK)
        connect_mail_free(cm);
    return rc;
}

int mcp_client_connect_stdio(mcp_client *c, const char *const argv[], int timeout_ms)
{
    if (c == NULL || argv == NULL || argv[0] == NULL)
        return MCP_EINVAL;
    if (c->connected || on_loop_thread(c))
        return MCP_ESTATE;
    connect_mail *cm;
    int rc = connect_prepare(c, argv, NULL, timeout_ms, &cm);
    return rc != MCP_OK ? rc : connect_wait(c, cm);
}

int mcp_client_connect_stdio_async(mcp_client *c, const char *const argv[], int timeout_ms,
                                   mcp_connect_fn cb, void *user)
{
    if (c == NULL || argv == NULL || argv[0] == NULL)
        return MCP_EINVAL;
    if (c->connected || c->closing || (c->host_loop && !on_loop_thread(c)))
        return MCP_ESTATE;
    connect_mail *cm;
    int rc = connect_prepare(c, argv, NULL, timeout_ms, &cm);
    return rc != MCP_OK ? rc : connect_post(c, cm, cb, user);
}

/* Caller's thread: connect_prepare for an HTTP server, its options copied first. */
static int connect_prepare_http(mcp_client *c, const char *url, const mcp_http_client_opts *opts,
                                int timeout_ms, connect_mail **out)
{
    mcp__shttp_cfg *cfg;
    int rc = mcp__shttp_cfg_new(url, opts, &cfg);
    return rc != MCP_OK ? rc : connect_prepare(c, NULL, cfg, timeout_ms, out);
}

int mcp_client_connect_http(mcp_client *c, const char *url, const mcp_http_client_opts *opts,
                            int timeout_ms)
{
    if (c == NULL || url == NULL)
        return MCP_EINVAL;
    if (c->connected || on_loop_thread(c))
        return MCP_ESTATE;
    connect_mail *cm;
    int rc = connect_prepare_http(c, url, opts, timeout_ms, &cm);
    return rc != MCP_OK ? rc : connect_wait(c, cm);
}

int mcp_client_connect_http_async(mcp_client *c, const char *url, const mcp_http_client_opts *opts,
                                  int timeout_ms, mcp_connect_fn cb, void *user)
{
    if (c == NULL || url == NULL)
        return MCP_EINVAL;
    if (c->connected || c->closing || (c->host_loop && !on_loop_thread(c)))
        return MCP_ESTATE;
    connect_mail *cm;
    int rc = connect_prepare_http(c, url, opts, timeout_ms, &cm);
    return rc != MCP_OK ? rc : connect_post(c, cm, cb, user);
}

typedef struct reconnect_mail {
    mcp__mail mail;
    mcp_client *c;
    uint64_t id;
} reconnect_mail;

static void reconnect_run(mcp__mail *m)
{
    reconnect_mail *rm = (reconnect_mail *)m;
    mcp_client *c = rm->c;
    if (c->tr != NULL && !c->tr_closing && c->tr->ops->reconnect != NULL)
        c->tr->ops->reconnect(c->tr, rm->id);
    free(rm);
}

int mcp_client_reconnect(mcp_client *c, uint64_t reconnect_id)
{
    if (c == NULL || !c->running)
        return MCP_EINVAL;
    if (on_loop_thread(c)) {
        if (c->tr == NULL || c->tr_closing || c->tr->ops->reconnect == NULL)
            return MCP_ENOENT;
        return c->tr->ops->reconnect(c->tr, reconnect_id);
    }
    reconnect_mail *rm = calloc(1, sizeof(*rm));
    if (rm == NULL)
        return MCP_ENOMEM;
    rm->mail.fn = reconnect_run;
    rm->c = c;
    rm->id = reconnect_id;
    int rc = mcp__mailbox_post(&c->mb, &rm->mail);
    if (rc != MCP_OK)
        free(rm);
    return rc;
}

/* ---- Requests ---- */

void mcp__call_free(call *k)
{
    mcp__task_free(k);
    free(k->method);
    free(k->tool);
    json_decref(k->params);
    json_decref(k->responses);
    json_decref(k->state);
    free(k);
}

void mcp__call_reply(call *k, int status, const json_t *result, const mcp_rpc_error *err)
{
    mcp_client *c = k->c;
    if (k->finished)
        return;
    k->finished = 1;
    k->in_flight = 0;
    mcp_rpc_error refused;
    if (status == MCP_OK && result != NULL && strcmp(k->method, "tools/list") == 0) {
        mcp__client_learn_tools(c, result);
    } else if (status == MCP_OK && result != NULL && k->tool != NULL &&
               mcp__client_check_output(c, k->tool, result, &refused) != 0) {
        status = MCP_ERPC;
        result = NULL;
        err = &refused;
    }
    if (k->linked) {
        MCP__LIST_UNLINK(c->calls, k);
        k->linked = 0;
    }
    if (k->sync)
        mcp__waiter_finish(k->w, status, result, err);
    else if (k->cb != NULL)
        k->cb(k->c, status, result, err, k->user);
    if (!k->job)
        mcp__call_free(k); /* else its job frees it when it comes back */
}

/* The engine's completion of a legacy request. */
static void call_reply_legacy(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    mcp__call_reply(arg, status, result, err);
}

void mcp__call_progress(void *arg, const json_t *params)
{
    call *k = arg;
    json_t *total = json_object_get(params, "total");
    k->opts.on_progress(json_number_value(json_object_get(params, "progress")),
                        json_is_number(total) ? json_number_value(total) : -1,
                        json_string_value(json_object_get(params, "message")), k->opts.user);
}

/*
 * Loop thread: sends the request of k. On MCP_OK the engine holds k (mcp__call_reply
 * completes and frees it) and *id is its id. Otherwise k is freed here and its
 * callback never runs: the caller reports the failure by its return value alone,
 * so that an asynchronous request is reported exactly once.
 */
static int call_send(call *k, json_int_t *id)
{
    mcp_client *c = k->c;
    if (c->rpc == NULL || !c->connected) {
        mcp__call_free(k);
        return MCP_ECLOSED;
    }
    if (mcp__client_modern(c))
        return mcp__modern_send(k, id);
    int timeout = k->opts.timeout_ms > 0 ? k->opts.timeout_ms : c->timeout_ms;
    json_t *params = k->params;
    k->params = NULL;
    int rc = mcp__rpc_request(c->rpc, k->method, params, 0, timeout, call_reply_legacy,
                              k->opts.on_progress ? mcp__call_progress : NULL, k, id);
    if (rc != MCP_OK)
        mcp__call_free(k); /* mcp__rpc_request did not take k */
    return rc;
}

/* A request posted by another thread, which waits for its answer (sync) or id. */
static void call_mail(mcp__mail *m)
{
    call *k = (call *)m;
    waiter *w = k->w;
    int sync = k->sync;
    json_int_t id = -1;
    if (!sync)
        k->w = NULL; /* the poster stops waiting once it has the id */
    int rc = call_send(k, &id);
    if (sync) {
        if (rc != MCP_OK)
            mcp__waiter_finish(w, rc, NULL, NULL);
    } else {
        mcp__waiter_set_id(w, rc == MCP_OK ? id : -1);
    }
}

/* A new trace in (*params)._meta, unless the application put a traceparent there. */
static int add_trace(json_t **params)
{
    json_t *meta = json_object_get(*params, "_meta");
    if (json_object_get(meta, "traceparent") != NULL)
        return MCP_OK;
    char tp[56];
    if (mcp__trace_new(tp) != MCP_OK)
        return MCP_OK; /* no random bytes: the request goes without a trace */
    if (*params == NULL && (*params = json_object()) == NULL)
        return MCP_ENOMEM;
    if (!json_is_object(meta)) {
        meta = json_object();
        if (meta == NULL || json_object_set_new(*params, "_meta", meta) != 0)
            return MCP_ENOMEM;
    }
    return json_object_set_new(meta, "traceparent", json_string(tp)) == 0 ? MCP_OK : MCP_ENOMEM;
}

int mcp_client_set_trace(mcp_client *c, int new_traces)
{
    if (c == NULL)
        return MCP_EINVAL;
    c->trace_new = new_traces != 0;
    return MCP_OK;
}

/* opts has been read through mcp__opts_copy already: it is this release's layout. */
static call *call_new(mcp_client *c, const char *method, json_t *params, const mcp_call_opts *opts)
{
    call *k = calloc(1, sizeof(*k));
    if (k == NULL || (k->method = mcp__strdup(method)) == NULL) {
        free(k);
        json_decref(params);
        return NULL;
    }
    k->c = c;
    k->params = params;
    k->opts = *opts;
    k->mail.fn = call_mail;
    if (c->trace_new && add_trace(&k->params) != MCP_OK) {
        mcp__call_free(k);
        return NULL;
    }
    if ((opts->flags & MCP_CALL_TASKS) && mcp__task_declare(&k->params) != MCP_OK) {
        mcp__call_free(k);
        return NULL;
    }
    const char *tool = !c->no_output_check && strcmp(method, "tools/call") == 0
                           ? json_string_value(json_object_get(k->params, "name"))
                           : NULL;
    if (tool != NULL && (k->tool = mcp__strdup(tool)) == NULL) {
        mcp__call_free(k);
        return NULL;
    }
    return k;
}

static int request_sync(mcp_client *c, const char *method, json_t *params,
                        const mcp_call_opts *opts, int follow, json_t **result, mcp_rpc_error *err);

int mcp_client_request(mcp_client *c, const char *method, json_t *params, const mcp_call_opts *opts,
                       json_t **result, mcp_rpc_error *err)
{
    return request_sync(c, method, params, opts, 0, result, err);
}

/* The tasks extension (tasks.c): a task's methods, declaring it. */
static json_t *task_params(const char *task_id)
{
    json_t *p = task_id != NULL ? json_pack("{s:s}", "taskId", task_id) : NULL;
    if (p != NULL && mcp__task_declare(&p) != MCP_OK) {
        json_decref(p);
        p = NULL;
    }
    return p;
}

int mcp_client_task_result(mcp_client *c, const char *task_id, const mcp_call_opts *opts,
                           json_t **result, mcp_rpc_error *err)
{
    if (task_id == NULL) {
        if (result != NULL)
            *result = NULL;
        if (err != NULL)
            memset(err, 0, sizeof(*err));
        return MCP_EINVAL;
    }
    json_t *p = task_params(task_id);
    return p != NULL ? request_sync(c, "tasks/get", p, opts, 1, result, err) : MCP_ENOMEM;
}

int mcp_client_task_get(mcp_client *c, const char *task_id, json_t **task, mcp_rpc_error *err)
{
    if (task_id == NULL)
        return MCP_EINVAL;
    json_t *p = task_params(task_id);
    return p != NULL ? request_sync(c, "tasks/get", p, NULL, 0, task, err) : MCP_ENOMEM;
}

int mcp_client_task_cancel(mcp_client *c, const char *task_id, mcp_rpc_error *err)
{
    if (task_id == NULL)
        return MCP_EINVAL;
    json_t *p = task_params(task_id);
    return p != NULL ? request_sync(c, "tasks/cancel", p, NULL, 0, NULL, err) : MCP_ENOMEM;
}

static int request_sync(mcp_client *c, const char *method, json_t *params,
                        const mcp_call_opts *opts, int follow, json_t **result, mcp_rpc_error *err)
{
    if (result != NULL)
        *result = NULL;
    if (err != NULL)
        memset(err, 0, sizeof(*err));
    mcp_call_opts o;
    if (c == NULL || method == NULL || (params != NULL && !json_is_object(params)) ||
        mcp__opts_copy(&o, sizeof(o), opts, MCP__CALL_OPTS_V1) != MCP_OK) {
        json_decref(params);
        return MCP_EINVAL;
    }
    if (on_loop_thread(c)) {
        json_decref(params);
        return MCP_ESTATE; /* waiting here would stop the loop that must bring the answer */
    }
    if (!c->connected) {
        json_decref(params);
        return MCP_ECLOSED;
    }
    waiter w;
    if (mcp__waiter_init(&w) != MCP_OK) {
        json_decref(params);
        return MCP_EIO;
    }
    call *k = call_new(c, method, params, &o);
    if (k == NULL) {
        mcp__waiter_destroy(&w);
        return MCP_ENOMEM;
    }
    k->sync = 1;
    k->w = &w;
    k->task_follow = follow;
    int rc = mcp__mailbox_post(&c->mb, &k->mail);
    if (rc != MCP_OK) {
        mcp__call_free(k);
        mcp__waiter_destroy(&w);
        return rc;
    }
    waiter_wait(&w);
    rc = w.status;
    if (rc == MCP_OK && result != NULL)
        *result = w.result;
    else
        json_decref(w.result);
    if (err != NULL)
        *err = w.err;
    else
        mcp_rpc_error_clear(&w.err);
    mcp__waiter_destroy(&w);
    return rc;
}

int mcp_client_request_async(mcp_client *c, const char *method, json_t *params,
                             const mcp_call_opts *opts, mcp_response_fn cb, void *user,
                             long long *request_id)
{
    mcp_call_opts o;
    if (c == NULL || method == NULL || (params != NULL && !json_is_object(params)) ||
        mcp__opts_copy(&o, sizeof(o), opts, MCP__CALL_OPTS_V1) != MCP_OK) {
        json_decref(params);
        return MCP_EINVAL;
    }
    if (!c->connected || c->closing) {
        json_decref(params);
        return MCP_ECLOSED;
    }
    call *k = call_new(c, method, params, &o);
    if (k == NULL)
        return MCP_ENOMEM;
    k->cb = cb;
    k->user = user;
    if (on_loop_thread(c)) {
        /* Already on the loop: send now; the id is known at once. */
        json_int_t id = -1;
        int rc = call_send(k, &id);
        if (rc == MCP_OK && request_id != NULL)
            *request_id = id;
        return rc;
    }
    waiter w;
    if (mcp__waiter_init(&w) != MCP_OK) {
        mcp__call_free(k);
        return MCP_EIO;
    }
    k->w = &w;
    int rc = mcp__mailbox_post(&c->mb, &k->mail);
    if (rc != MCP_OK) {
        mcp__call_free(k);
        mcp__waiter_destroy(&w);
        return rc;
    }
    /* Wait only until the request is sent and has its id, not for the answer. */
    uv_mutex_lock(&w.lock);
    while (!w.id_set)
        uv_cond_wait(&w.cond, &w.lock);
    uv_mutex_unlock(&w.lock);
    long long id = w.id;
    mcp__waiter_destroy(&w);
    if (request_id != NULL)
        *request_id = id;
    return id < 0 ? MCP_ECLOSED : MCP_OK;
}

typedef struct cancel_mail {
    mcp__mail mail;
    mcp_client *c;
    long long id;
    char *reason;
} cancel_mail;

static void cancel_run(mcp__mail *m)
{
    cancel_mail *cm = (cancel_mail *)m;
    mcp_client *c = cm->c;
    call *k = mcp__modern_find(c, (json_int_t)cm->id);
    if (k != NULL)
        mcp__modern_cancel(k, cm->reason);
    else if (mcp__client_listen_cancel(c, (json_int_t)cm->id))
        ; /* a legacy era's listen: ended */
    else if (c->rpc != NULL)
        mcp__rpc_cancel(c->rpc, (json_int_t)cm->id, cm->reason);
    free(cm->reason);
    free(cm);
}

int mcp_client_cancel(mcp_client *c, long long request_id, const char *reason)
{
    if (c == NULL || !c->running)
        return MCP_EINVAL;
    cancel_mail *cm = calloc(1, sizeof(*cm));
    if (cm == NULL)
        return MCP_ENOMEM;
    cm->mail.fn = cancel_run;
    cm->c = c;
    cm->id = request_id;
    cm->reason = mcp__strdup(reason);
    if (on_loop_thread(c)) {
        cancel_run(&cm->mail);
        return MCP_OK;
    }
    int rc = mcp__mailbox_post(&c->mb, &cm->mail);
    if (rc != MCP_OK) {
        free(cm->reason);
        free(cm);
    }
    return rc;
}

typedef struct notify_mail {
    mcp__mail mail;
    mcp_client *c;
    char *method;
    json_t *params;
} notify_mail;

static void notify_run(mcp__mail *m)
{
    notify_mail *nm = (notify_mail *)m;
    if (nm->c->rpc != NULL)
        mcp__rpc_notify(nm->c->rpc, nm->method, nm->params, 0);
    else
        json_decref(nm->params);
    free(nm->method);
    free(nm);
}

int mcp_client_notify(mcp_client *c, const char *method, json_t *params)
{
    if (c == NULL || method == NULL || !c->running) {
        json_decref(params);
        return MCP_EINVAL;
    }
    notify_mail *nm = calloc(1, sizeof(*nm));
    if (nm == NULL || (nm->method = mcp__strdup(method)) == NULL) {
        free(nm);
        json_decref(params);
        return MCP_ENOMEM;
    }
    nm->mail.fn = notify_run;
    nm->c = c;
    nm->params = params;
    if (on_loop_thread(c)) {
        notify_run(&nm->mail);
        return MCP_OK;
    }
    int rc = mcp__mailbox_post(&c->mb, &nm->mail);
    if (rc != MCP_OK) {
        free(nm->method);
        json_decref(nm->params);
        free(nm);
    }
    return rc;
}

int mcp_client_set_roots(mcp_client *c, const json_t *roots)
{
    if (c == NULL || !json_is_array(roots))
        return MCP_EINVAL;
    json_t *copy = json_deep_copy(roots);
    if (copy == NULL)
        return MCP_ENOMEM;
    uv_mutex_lock(&c->lock);
    json_t *old = c->roots;
    c->roots = copy;
    uv_mutex_unlock(&c->lock);
    json_decref(old);
    /* 2026-07-28 has no notifications/roots/list_changed: each request carries what the
     * server asks for. */
    if (c->connected && !mcp__client_modern(c))
        return mcp_client_notify(c, "notifications/roots/list_changed", NULL);
    return MCP_OK;
}

/* ---- Closing ---- */

/*
 * Loop thread, once, for mcp_client_free and mcp_client_close alike: the engine
 * stops, so pending requests complete with MCP_ECLOSED (their callbacks run now)
 * and no new server request reaches the pool; the child's stdin is closed once
 * what is queued for it is written, and the child gets the grace period before
 * the signals.
 */
static void close_begin(mcp_client *c)
{
    c->close_started = 1;
    connection_close(c);
}

typedef struct close_mail {
    mcp__mail mail;
    mcp_client *c;
    waiter *w;
} close_mail;

/* mcp_client_free's first step; its caller waits on w, then joins the pool. */
static void close_run(mcp__mail *m)
{
    close_mail *cm = (close_mail *)m;
    mcp_client *c = cm->c;
    waiter *w = cm->w;
    free(cm);
    close_begin(c);
    if (w != NULL)
        mcp__waiter_finish(w, MCP_OK, NULL, NULL);
}

static void final_run(mcp__mail *m)
{
    mcp_client *c = *(mcp_client **)(m + 1);
    free(m);
    c->want_final = 1;
    maybe_finish(c);
}

static int post_simple(mcp_client *c, void (*fn)(mcp__mail *))
{
    mcp__mail *m = calloc(1, sizeof(*m) + sizeof(mcp_client *));
    if (m == NULL)
        return MCP_ENOMEM;
    m->fn = fn;
    *(mcp_client **)(m + 1) = c;
    int rc = mcp__mailbox_post(&c->mb, m);
    if (rc != MCP_OK)
        free(m);
    return rc;
}

/* Frees what is left of a client whose handles are all closed (or never were). */
static void client_destroy(mcp_client *c)
{
    mcp__rpc_free(c->rpc);
    mcp_rpc_error_clear(&c->connect_err);
    json_decref(c->roots);
    json_decref(c->extensions);
    json_decref(c->experimental);
    mcp__client_outputs_free(c);
    for (size_t i = 0; i < c->nmethods; i++)
        free(c->methods[i].method);
    free(c->methods);
    json_decref(c->server_info);
    json_decref(c->server_caps);
    free(c->instructions);
    free(c->log_level);
    free(c->name);
    free(c->version);
    json_decref(c->info);
    uv_mutex_destroy(&c->lock);
    free(c);
}

/* The end of mcp_client_close: the client goes, then its owner hears of it. */
static void close_done(mcp_client *c)
{
    mcp_client_closed_fn fn = c->closed_fn;
    void *user = c->closed_user;
    client_destroy(c);
    if (fn != NULL)
        fn(user);
}

/* A threadpool thread: waits for the handlers still running on the workers. */
static void pool_join_work(uv_work_t *req)
{
    mcp_client *c = req->data;
    mcp__pool_free(c->pool);
}

static void pool_joined(uv_work_t *req, int status)
{
    mcp_client *c = req->data;
    (void)status; /* never cancelled */
    c->pool = NULL;
    c->want_final = 1;
    maybe_finish(c);
}

/*
 * Loop thread: mcp_client_close's work. A handler still running on a worker may
 * post its answer (the closed engine drops it), so the mailbox stays open until
 * the pool is joined; the join happens off the loop, since a handler may take
 * its time and the loop must not wait for it.
 */
static void close_async_run(mcp_client *c)
{
    close_begin(c);
    if (c->pool != NULL) {
        c->pool_join.data = c;
        if (uv_queue_work(c->loop, &c->pool_join, pool_join_work, pool_joined) == 0)
            return;
        mcp__pool_free(c->pool); /* cannot happen: only a NULL work_cb is refused */
        c->pool = NULL;
    }
    c->want_final = 1;
    maybe_finish(c);
}

static void close_mail_run(mcp__mail *m)
{
    close_async_run((mcp_client *)(void *)((char *)m - offsetof(mcp_client, close_mail)));
}

int mcp_client_close(mcp_client *c, mcp_client_closed_fn done, void *user)
{
    if (c == NULL)
        return MCP_EINVAL;
    if (atomic_exchange(&c->closing, 1))
        return MCP_ESTATE;
    c->closed_fn = done;
    c->closed_user = user;
    if (!c->running) {
        /* A threaded client that never connected has nothing on any loop. */
        close_done(c);
        return MCP_OK;
    }
    c->close_async = 1;
    if (on_loop_thread(c)) {
        close_async_run(c);
        return MCP_OK;
    }
    /* The mailbox closes only at the end of this close, so the post succeeds. */
    c->close_mail.fn = close_mail_run;
    return mcp__mailbox_post(&c->mb, &c->close_mail);
}

int mcp_client_connect_error(const mcp_client *c, mcp_rpc_error *err)
{
    if (c == NULL || err == NULL)
        return MCP_EINVAL;
    if (c->connect_err.code == 0 && c->connect_err.message[0] == '\0')
        return MCP_ENOENT;
    *err = c->connect_err;
    err->data = json_incref(c->connect_err.data);
    return MCP_OK;
}

void mcp_client_free(mcp_client *c)
{
    if (c == NULL)
        return;
    if (c->host_loop) {
        mcp_client_close(c, NULL, NULL);
        return;
    }
    c->closing = 1;
    if (c->thread_started) {
        /* Stop the connection; then wait for handlers still running on workers (they
         * post their answers, which are dropped); then let the loop end. */
        /* The pool goes only once the loop has closed the engine: until then a
         * server request could still be handed to it. */
        waiter w;
        close_mail *cm = calloc(1, sizeof(*cm));
        int waiting = cm != NULL && mcp__waiter_init(&w) == MCP_OK;
        if (cm != NULL) {
            cm->mail.fn = close_run;
            cm->c = c;
            cm->w = waiting ? &w : NULL;
            if (mcp__mailbox_post(&c->mb, &cm->mail) != MCP_OK) {
                free(cm);
                cm = NULL;
            }
        }
        if (cm != NULL && waiting)
            waiter_wait(&w);
        if (waiting)
            mcp__waiter_destroy(&w);
        mcp__pool_free(c->pool);
        c->pool = NULL;
        post_simple(c, final_run);
        uv_thread_join(&c->thread);
        if (uv_loop_close(c->loop) != 0)
            mcp__warn("the client loop closed with handles still open");
    }
    client_destroy(c);
}

int mcp_client_set_implementation(mcp_client *c, const mcp_implementation *impl)
{
    if (c == NULL)
        return MCP_EINVAL;
    int rc;
    json_t *info = mcp__implementation(c->name, c->version, impl, &rc);
    if (info == NULL)
        return rc;
    json_decref(c->info);
    c->info = info;
    return MCP_OK;
}
