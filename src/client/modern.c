/* SPDX-License-Identifier: MIT */
/*
 * The client in the modern era, revision 2026-07-28 (see client_int.h):
 *
 * - The probe. A connect in the auto mode (and one pinned to the modern
 *   revision) first sends server/discover with the modern _meta. A
 *   DiscoverResult naming 2026-07-28 makes the client modern; a recognised modern
 *   error (UnsupportedProtocolVersion -32022, HeaderMismatch -32020,
 *   MissingRequiredClientCapability -32021, or -32601 with HTTP 404 from a server
 *   that lacks server/discover) says the server is modern; anything else says it
 *   is legacy, and the auto mode falls back to initialize (basic/versioning.mdx,
 *   "Backward Compatibility"; the HTTP and stdio bindings' sections of the same
 *   name). On HTTP 400, 404 and 405 count as a legacy answer, and so does a 2xx
 *   that holds no JSON-RPC answer (a stream that ends after a priming event):
 *   silence, a failed connection, a 5xx, 401 and 403 fail the connect. On stdio silence counts too,
 * after the probe timeout, and so does a server that exits on the probe: it is started again and
 * initialized.
 * - Requests. Each carries the revision, the client's capabilities and info (and
 *   the logLevel the application set) in params._meta. A result whose resultType
 *   is "input_required" is answered by the handlers the application set for the
 *   legacy era's server requests (sampling, elicitation) and the roots, on a
 *   worker, and the request goes again with a new id, its inputResponses and the
 *   requestState exactly as given (none when none was given), at most
 *   max_rounds times (mrtr.mdx). -32022 naming our revision is retried once, and
 *   a HeaderMismatch to tools/call once after reading tools/list again
 *   (streamable-http.mdx, "Client Behavior"), as the spec asks.
 */
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_INFO "io.modelcontextprotocol/clientInfo"
#define META_LOG "io.modelcontextprotocol/logLevel"
#define META_SERVER "io.modelcontextprotocol/serverInfo"

/* ---- _meta ---- */

/* The client's capabilities (caps, stolen) with what the application put in this
 * request's own (app, may be NULL): its members win, and its extensions and
 * experimental capabilities are added to the client's. */
static json_t *merge_caps(json_t *caps, const json_t *app)
{
    if (caps == NULL || !json_is_object(app))
        return caps;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)app, key, v)
    {
        json_t *mine = json_object_get(caps, key);
        if ((strcmp(key, "extensions") == 0 || strcmp(key, "experimental") == 0) &&
            json_is_object(mine) && json_is_object(v)) {
            json_t *both = json_copy(mine);
            int failed = both == NULL || json_object_update(both, v) != 0;
            if (failed)
                json_decref(both);
            if (failed || json_object_set_new(caps, key, both) != 0) {
                json_decref(caps);
                return NULL;
            }
        } else if (json_object_set(caps, key, v) != 0) {
            json_decref(caps);
            return NULL;
        }
    }
    return caps;
}

json_t *mcp__modern_params(mcp_client *c, const mcp__revision *rev, const json_t *params)
{
    json_t *p = json_is_object(params) ? json_copy((json_t *)params) : json_object();
    if (p == NULL)
        return NULL;
    json_t *app = json_object_get(p, "_meta");
    json_t *meta = json_is_object(app) ? json_copy(app) : json_object();
    if (meta == NULL || json_object_set_new(p, "_meta", meta) != 0) {
        json_decref(p);
        return NULL;
    }
    int bad = json_object_set_new(meta, META_VERSION, json_string(rev->version)) != 0;
    bad |= json_object_set_new(
               meta, META_CAPS,
               merge_caps(mcp__client_capabilities(c, 1), json_object_get(meta, META_CAPS))) != 0;
    bad |= json_object_set(meta, META_INFO, c->info) != 0;
    uv_mutex_lock(&c->lock);
    json_t *level = c->log_level != NULL ? json_string(c->log_level) : NULL;
    uv_mutex_unlock(&c->lock);
    if (level != NULL && json_object_get(meta, META_LOG) == NULL)
        bad |= json_object_set_new(meta, META_LOG, level) != 0;
    else
        json_decref(level);
    if (bad) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* ---- The probe ---- */

static void probe_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err);

void mcp__probe_send(connect_mail *cm)
{
    mcp_client *c = cm->c;
    const mcp__revision *rev = mcp__revision_modern();
    json_t *params = mcp__modern_params(c, rev, NULL);
    if (params == NULL) {
        mcp__connect_finish(cm, MCP_ENOMEM, NULL);
        return;
    }
    /* On stdio a legacy server may say nothing at all: its silence is its answer once
     * the probe timeout has passed. On HTTP silence is an outage: the connect's own. */
    int timeout = cm->timeout_ms;
    if (!c->tr_http && timeout > MCP__CLIENT_STDIO_PROBE_MS)
        timeout = MCP__CLIENT_STDIO_PROBE_MS;
    int rc = mcp__rpc_request(c->rpc, "server/discover", params, 0, timeout, probe_reply, NULL, cm,
                              &cm->probe_id);
    c->probe_id = cm->probe_id;
    c->probe_sent = 1;
    if (rc != MCP_OK) {
        mcp__connect_finish(cm, rc, NULL);
    }
}

/* The connect fails with status; err (may be NULL) is what the server answered, why what
 * the client makes of it. With keep_message, err's message is kept (a modern server's
 * error); else why replaces it, and err's code stays. */
static void probe_fail(connect_mail *cm, int status, const mcp_rpc_error *err, const char *why,
                       int keep_message)
{
    mcp_rpc_error e = {0};
    if (err != NULL) {
        e.code = err->code;
        e.data = err->data;
    }
    if (keep_message && err != NULL && err->message[0] != '\0')
        snprintf(e.message, sizeof(e.message), "%s", err->message);
    else
        snprintf(e.message, sizeof(e.message), "%s", why);
    mcp__debug("connect: %s", why);
    mcp__connect_finish(cm, status, &e);
}

/* The server is not modern, and the client is pinned to the modern era. */
static void probe_not_modern(connect_mail *cm, int status, const mcp_rpc_error *err,
                             const char *why)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "the server does not speak revision %s: %s",
             mcp__revision_modern()->version, why);
    probe_fail(cm, status, err, msg, 0);
}

/* The server is legacy: initialize, offering rev (NULL: the newest we speak). */
static void probe_legacy(connect_mail *cm, const mcp__revision *rev, const char *why)
{
    mcp_client *c = cm->c;
    if (c->mode == CMODE_MODERN) {
        probe_not_modern(cm, MCP_EPROTO, NULL, why);
        return;
    }
    mcp__debug("connect: the server is legacy (%s): initialize", why);
    mcp__connect_initialize(cm, rev);
}

static void probe_modern(connect_mail *cm, const json_t *discover)
{
    mcp_client *c = cm->c;
    const json_t *meta = json_object_get(discover, "_meta");
    const json_t *info = json_object_get(meta, META_SERVER);
    if (!json_is_object(info))
        info = json_object_get(discover, "serverInfo"); /* what some early servers send */
    const json_t *caps = json_object_get(discover, "capabilities");
    c->rev = mcp__revision_modern();
    c->server_info = json_is_object(info) ? json_incref((json_t *)info) : json_object();
    c->server_caps = json_is_object(caps) ? json_incref((json_t *)caps) : json_object();
    c->instructions = mcp__strdup(json_string_value(json_object_get(discover, "instructions")));
    mcp__rpc_allow_batch(c->rpc, 0);
    if (c->tr != NULL && !c->tr_closing && c->tr->ops->set_modern != NULL)
        c->tr->ops->set_modern(c->tr);
    c->connected = 1;
    mcp__connect_finish(cm, MCP_OK, NULL);
}

/* The newest revision we speak among the strings of list (an array), modern or
 * legacy as asked, or NULL. */
static const mcp__revision *newest_listed(const json_t *list, int modern)
{
    for (size_t i = 0; i < mcp__revision_count(); i++) {
        const mcp__revision *rev = mcp__revision_at(i);
        if (rev->modern != modern)
            continue;
        size_t k;
        const json_t *v;
        json_array_foreach(list, k, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), rev->version) == 0)
                return rev;
        }
    }
    return NULL;
}

/* A list of version strings, or NULL when v is not one. */
static const json_t *version_list(const json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return NULL;
    size_t i;
    const json_t *s;
    json_array_foreach(v, i, s)
    {
        if (!json_is_string(s))
            return NULL;
    }
    return v;
}

static void probe_discovered(connect_mail *cm, const json_t *result)
{
    const json_t *list = version_list(json_object_get(result, "supportedVersions"));
    if (list == NULL) {
        probe_legacy(cm, NULL, "server/discover was answered without a list of versions");
        return;
    }
    if (newest_listed(list, 1) != NULL) {
        probe_modern(cm, result);
        return;
    }
    probe_legacy(cm, newest_listed(list, 0),
                 "server/discover names no modern revision that the client speaks");
}

static void probe_start_again(connect_mail *cm);

static void probe_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    connect_mail *cm = arg;
    mcp_client *c = cm->c;
    long http = c->fail_http;
    char why[200];
    switch (status) {
    case MCP_OK:
        probe_discovered(cm, result);
        return;
    case MCP_ERPC:
        if (err->code == MCP_RPC_UNSUPPORTED_VERSION) {
            const json_t *list = version_list(json_object_get(err->data, "supported"));
            if (list == NULL) {
                probe_legacy(cm, NULL, "-32022 without a list of supported versions");
                return;
            }
            if (newest_listed(list, 1) != NULL) {
                /* Select a mutually supported version and go on: once. */
                if (cm->corrected) {
                    probe_fail(cm, MCP_ERPC, err,
                               "the server refused server/discover twice as an unsupported "
                               "version while naming it as supported",
                               1);
                    return;
                }
                cm->corrected = 1;
                mcp__probe_send(cm);
                return;
            }
            const mcp__revision *legacy = newest_listed(list, 0);
            if (legacy == NULL) {
                probe_fail(cm, MCP_ERPC, err,
                           "the server supports no protocol version the client speaks", 0);
                return;
            }
            /* A modern server that speaks only legacy revisions to us. */
            probe_legacy(cm, legacy, "the server supports only legacy revisions");
            return;
        }
        if (err->code == MCP_RPC_HEADER_MISMATCH || err->code == MCP_RPC_MISSING_CAPABILITY) {
            probe_fail(cm, MCP_ERPC, err, "the server refused server/discover", 1);
            return;
        }
        if (err->code == MCP_RPC_METHOD_NOT_FOUND && c->tr_http && http == 404) {
            /* A modern server that does not implement server/discover: modern all the
             * same, with nothing known of it. */
            mcp__warn("connect: the server answered server/discover 404 -32601: modern, "
                      "without its information");
            probe_modern(cm, NULL);
            return;
        }
        snprintf(why, sizeof(why), "server/discover was answered with the error %d: %.120s",
                 err->code, err->message);
        if (c->mode == CMODE_MODERN) {
            probe_not_modern(cm, MCP_ERPC, err, why);
            return;
        }
        probe_legacy(cm, NULL, why);
        return;
    case MCP_EHTTP:
        snprintf(why, sizeof(why), "server/discover was answered with HTTP %ld", http);
        if (http == 400 || http == 404 || http == 405) {
            if (c->mode == CMODE_MODERN) {
                probe_not_modern(cm, MCP_EHTTP, err, why);
                return;
            }
            probe_legacy(cm, NULL, why);
            return;
        }
        probe_fail(cm, MCP_EHTTP, err, why, 1);
        return;
    case MCP_ETIMEDOUT:
        if (!c->tr_http && c->mode != CMODE_MODERN) {
            probe_legacy(cm, NULL, "server/discover was not answered in time");
            return;
        }
        probe_fail(cm, status, err, "server/discover was not answered in time", 0);
        return;
    case MCP_ECLOSED:
    case MCP_EPROTO:
        if (c->tr_http && http >= 200 && http < 300) {
            /* An answer of HTTP 2xx that holds no JSON-RPC answer (a stream that ends
             * after a priming event, say): no recognised modern error, so a legacy
             * server. */
            snprintf(why, sizeof(why),
                     "server/discover was answered with HTTP %ld but no JSON-RPC answer", http);
            if (c->mode == CMODE_MODERN) {
                probe_not_modern(cm, status, err, why);
                return;
            }
            probe_legacy(cm, NULL, why);
            return;
        }
        if (status == MCP_ECLOSED && !c->tr_http && c->mode != CMODE_MODERN && !c->closing &&
            c->tr != NULL) {
            probe_start_again(cm);
            return;
        }
        break;
    default:
        break;
    }
    mcp__connect_finish(cm, status, err);
}

/*
 * A stdio server that exits on server/discover (some legacy servers end on any
 * request before initialize) is a legacy server: once its transport has closed,
 * the client starts it again and initializes (client.c's tr_on_closed calls
 * mcp__probe_respawned).
 */
static void probe_start_again(connect_mail *cm)
{
    mcp_client *c = cm->c;
    mcp__debug("connect: the server exited on server/discover: starting it again for "
               "initialize");
    c->respawn = cm;
    if (!c->tr_closing) {
        c->tr_closing = 1;
        c->tr->ops->close(c->tr);
    }
}

void mcp__probe_respawned(connect_mail *cm)
{
    mcp_client *c = cm->c;
    int rc = mcp__connect_transport(cm);
    if (rc != MCP_OK) {
        mcp__rpc_close(c->rpc);
        mcp__connect_finish(cm, rc, NULL);
        return;
    }
    mcp__connect_initialize(cm, NULL);
}

/* ---- Requests ---- */

static void modern_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err);

/* Sends the next JSON-RPC request of k: the original params with the _meta, and the
 * inputResponses and requestState of the last round. Completes k on failure. */
static void round_send(call *k)
{
    mcp_client *c = k->c;
    if (c->rpc == NULL || c->closing || c->tr == NULL || c->tr_closing) {
        mcp__call_reply(k, MCP_ECLOSED, NULL, NULL);
        return;
    }
    json_t *params = mcp__modern_params(c, c->rev, k->params);
    int bad = params == NULL;
    if (!bad && k->responses != NULL)
        bad = json_object_set(params, "inputResponses", k->responses) != 0;
    if (!bad && k->state != NULL)
        bad = json_object_set(params, "requestState", k->state) != 0;
    if (bad) {
        json_decref(params);
        mcp__call_reply(k, MCP_ENOMEM, NULL, NULL);
        return;
    }
    int timeout = k->opts.timeout_ms > 0 ? k->opts.timeout_ms : c->timeout_ms;
    json_int_t id;
    int rc = mcp__rpc_request(c->rpc, k->method, params, 0, timeout, modern_reply,
                              k->opts.on_progress ? mcp__call_progress : NULL, k, &id);
    if (rc != MCP_OK) {
        mcp__call_reply(k, rc, NULL, NULL);
        return;
    }
    k->wire_id = id;
    k->in_flight = 1;
}

int mcp__modern_send(call *k, json_int_t *id)
{
    mcp_client *c = k->c;
    k->modern = 1;
    json_t *params = mcp__modern_params(c, c->rev, k->params);
    if (params == NULL) {
        mcp__call_free(k);
        return MCP_ENOMEM;
    }
    int timeout = k->opts.timeout_ms > 0 ? k->opts.timeout_ms : c->timeout_ms;
    json_int_t wire;
    int rc = mcp__rpc_request(c->rpc, k->method, params, 0, timeout, modern_reply,
                              k->opts.on_progress ? mcp__call_progress : NULL, k, &wire);
    if (rc != MCP_OK) {
        mcp__call_free(k);
        return rc;
    }
    k->logical_id = k->wire_id = wire;
    k->in_flight = 1;
    k->linked = 1;
    k->prev = NULL;
    MCP__LIST_PUSH(c->calls, k);
    if (id != NULL)
        *id = wire;
    return MCP_OK;
}

call *mcp__modern_find(mcp_client *c, json_int_t id)
{
    for (call *k = c->calls; k != NULL; k = k->next)
        if (k->logical_id == id)
            return k;
    return NULL;
}

void mcp__modern_cancel(call *k, const char *reason)
{
    mcp_client *c = k->c;
    if (k->task_id != NULL && mcp__task_cancel(k, reason))
        return;
    if (k->in_flight && c->rpc != NULL && mcp__rpc_cancel(c->rpc, k->wire_id, reason) == MCP_OK)
        return; /* modern_reply completes k with MCP_ECANCELED */
    mcp__call_reply(k, MCP_ECANCELED, NULL, NULL);
}

void mcp__modern_fail_waiting(mcp_client *c, int status)
{
    call *k = c->calls;
    while (k != NULL) {
        if (k->in_flight) {
            k = k->next;
            continue;
        }
        mcp__call_reply(k, status, NULL, NULL); /* unlinks k */
        k = c->calls;
    }
}

/* ---- Input rounds ---- */

typedef struct input_job {
    mcp__mail mail;
    call *k;
    json_t *requests;  /* a deep copy of the round's inputRequests: the worker's own */
    json_t *responses; /* what the handlers answered, key by key */
    int status;
    mcp_rpc_error err;
} input_job;

/* Loop thread: the answers are in; the request goes again. */
static void input_done(mcp__mail *m)
{
    input_job *j = (input_job *)m;
    call *k = j->k;
    k->job = 0;
    if (k->finished) {
        mcp__call_free(k); /* completed meanwhile (cancelled, or the connection ended) */
    } else if (j->status != MCP_OK) {
        if (k->task_id != NULL)
            mcp__task_abandon(k); /* the task is cancelled: nobody will answer it */
        mcp__call_reply(k, j->status, NULL, &j->err);
    } else if (k->task_id != NULL) {
        mcp__task_answered(k, j->responses); /* tasks/update, not a retry */
    } else {
        json_decref(k->responses);
        k->responses = j->responses;
        j->responses = NULL;
        round_send(k);
    }
    json_decref(j->requests);
    json_decref(j->responses);
    mcp_rpc_error_clear(&j->err);
    free(j);
}

static json_t *roots_answer(mcp_client *c)
{
    uv_mutex_lock(&c->lock);
    json_t *roots = c->roots ? json_deep_copy(c->roots) : NULL;
    uv_mutex_unlock(&c->lock);
    return roots != NULL ? json_pack("{s:o}", "roots", roots) : NULL;
}

/* A worker: runs the application's handlers for each input request, in order. */
static void input_run(void *arg)
{
    input_job *j = arg;
    call *k = j->k;
    mcp_client *c = k->c;
    const char *key;
    json_t *req;
    json_object_foreach(j->requests, key, req)
    {
        const char *method = json_string_value(json_object_get(req, "method"));
        json_t *params = json_object_get(req, "params");
        if (!json_is_object(params))
            params = json_object_set_new(req, "params", json_object()) == 0
                         ? json_object_get(req, "params")
                         : NULL;
        json_t *answer = NULL;
        mcp_rpc_error err = {0};
        const char *what = method;
        if (params == NULL) {
            j->status = MCP_ENOMEM;
            break;
        }
        if (strcmp(method, "roots/list") == 0) {
            answer = roots_answer(c);
        } else if (strcmp(method, "sampling/createMessage") == 0) {
            answer = c->sampling_fn(c, params, &err, c->sampling_user);
            what = "sampling";
        } else if (mcp__client_method(c, method) != NULL) {
            const struct mcp__client_method *own = mcp__client_method(c, method);
            answer = own->fn(c, params, &err, own->user);
        } else {
            answer = c->elicit_fn(c, params, &err, c->elicit_user);
            what = "elicitation";
            if (answer != NULL)
                mcp__fill_elicitation_defaults(params, answer);
        }
        if (answer == NULL || json_object_set_new(j->responses, key, answer) != 0) {
            /* The modern era has no error answer to an input request: a refusal ends
             * the request, with the handler's reason. */
            j->status = MCP_ERPC;
            j->err.code = err.code != 0 ? err.code : MCP_RPC_INTERNAL_ERROR;
            snprintf(j->err.message, sizeof(j->err.message),
                     "the client's %s handler refused input '%.60s'%s%.120s", what, key,
                     err.message[0] ? ": " : "", err.message);
            j->err.data = err.data;
            break;
        }
    }
    j->mail.fn = input_done;
    if (mcp__mailbox_post(&c->mb, &j->mail) != MCP_OK)
        mcp__error("the client's input handlers finished after the client closed");
}

/* Whether the client can answer an input request of method; else why not in why. */
static int can_answer(mcp_client *c, const char *method, const json_t *params, char *why,
                      size_t size, const char *key)
{
    const char *missing = NULL;
    if (method == NULL) {
        snprintf(why, size, "the server's input request '%s' names no method", key);
        return 0;
    }
    if (strcmp(method, "sampling/createMessage") == 0) {
        if (c->sampling_fn == NULL)
            missing = "sampling";
    } else if (strcmp(method, "elicitation/create") == 0) {
        if (c->elicit_fn == NULL)
            missing = "elicitation";
        else if (mcp__client_elicit_refused(c, params) != NULL)
            missing = "elicitation in this mode";
    } else if (strcmp(method, "roots/list") == 0) {
        uv_mutex_lock(&c->lock);
        if (c->roots == NULL)
            missing = "roots";
        uv_mutex_unlock(&c->lock);
    } else if (mcp__client_method(c, method) == NULL) {
        snprintf(why, size, "the server's input request '%s' is %.60s, which is no input request",
                 key, method);
        return 0;
    }
    if (missing != NULL) {
        snprintf(why, size,
                 "the server asked for %s (input '%s'), a capability this client did not "
                 "declare",
                 method, key);
        return 0;
    }
    return 1;
}

static void fail_proto(call *k, int status, const char *fmt, ...) MCP_PRINTF(3, 4);
static void fail_proto(call *k, int status, const char *fmt, ...)
{
    if (k->task_id != NULL)
        mcp__task_abandon(k); /* nobody answers the task's questions: it is cancelled */
    mcp_rpc_error e = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.message, sizeof(e.message), fmt, ap);
    va_end(ap);
    mcp__warn("%s: %s", k->method, e.message);
    mcp__call_reply(k, status, NULL, &e);
}

/* An InputRequiredResult for k. */
static void input_required(call *k, const json_t *result)
{
    mcp_client *c = k->c;
    const json_t *requests = json_object_get(result, "inputRequests");
    const json_t *state = json_object_get(result, "requestState");
    if ((requests != NULL && !json_is_object(requests)) ||
        (state != NULL && !json_is_string(state))) {
        fail_proto(k, MCP_EPROTO,
                   "an input_required result whose inputRequests is not an object or "
                   "whose requestState is not a string");
        return;
    }
    if (requests == NULL && state == NULL) {
        fail_proto(k, MCP_EPROTO,
                   "an input_required result with neither inputRequests nor requestState");
        return;
    }
    if (k->rounds >= c->max_rounds) {
        fail_proto(k, MCP_ELIMIT,
                   "the server asked for input more than %d times; the request is given up",
                   c->max_rounds);
        return;
    }
    if (json_object_size(requests) > MCP__CLIENT_MAX_INPUTS) {
        fail_proto(k, MCP_ELIMIT, "the server asked for %zu inputs at once, more than %d",
                   json_object_size(requests), MCP__CLIENT_MAX_INPUTS);
        return;
    }
    k->rounds++;
    json_decref(k->state);
    k->state = json_incref((json_t *)state); /* echoed exactly, and only when given */
    json_decref(k->responses);
    k->responses = NULL;
    if (json_object_size(requests) == 0) {
        round_send(k); /* state alone: the retry may go at once */
        return;
    }
    mcp__input_start(k, requests);
}

void mcp__input_start(call *k, const json_t *requests)
{
    mcp_client *c = k->c;
    const char *key;
    json_t *req;
    char why[256];
    int needs_worker = 0;
    json_object_foreach((json_t *)requests, key, req)
    {
        const char *method = json_string_value(json_object_get(req, "method"));
        if (!can_answer(c, method, json_object_get(req, "params"), why, sizeof(why), key)) {
            fail_proto(k, MCP_EPROTO, "%s", why);
            return;
        }
        needs_worker |= strcmp(method, "roots/list") != 0;
    }
    input_job *j = calloc(1, sizeof(*j));
    if (j == NULL || (j->requests = json_deep_copy(requests)) == NULL ||
        (j->responses = json_object()) == NULL) {
        if (j != NULL) {
            json_decref(j->requests);
            free(j);
        }
        {
            fail_proto(k, MCP_ENOMEM, "out of memory answering the server's input requests");
            return;
        }
    }
    j->k = k;
    if (!needs_worker) {
        /* roots/list alone: answered here, no handler to wait for. */
        k->job = 1;
        json_object_foreach(j->requests, key, req)
        {
            json_t *answer = roots_answer(c);
            if (answer == NULL || json_object_set_new(j->responses, key, answer) != 0)
                j->status = MCP_ENOMEM;
        }
        input_done(&j->mail);
        return;
    }
    if (c->pool == NULL || (k->job = 1, mcp__pool_submit(c->pool, input_run, j)) != MCP_OK) {
        k->job = 0;
        json_decref(j->requests);
        json_decref(j->responses);
        free(j);
        {
            fail_proto(k, MCP_ENOMEM, "no worker to run the client's input handlers");
            return;
        }
    }
}

static void refresh_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err);

/* A tools/list page of the refresh after a HeaderMismatch; cursor may be NULL. */
static void refresh_page(call *k, const char *cursor)
{
    mcp_client *c = k->c;
    json_t *base = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) : NULL;
    json_t *params = mcp__modern_params(c, c->rev, base);
    json_decref(base);
    if (params == NULL) {
        mcp__call_reply(k, MCP_ENOMEM, NULL, NULL);
        return;
    }
    json_int_t id;
    int timeout = k->opts.timeout_ms > 0 ? k->opts.timeout_ms : c->timeout_ms;
    int rc =
        mcp__rpc_request(c->rpc, "tools/list", params, 0, timeout, refresh_reply, NULL, k, &id);
    if (rc != MCP_OK) {
        mcp__call_reply(k, rc, NULL, NULL);
        return;
    }
    k->refresh_pages++;
    k->wire_id = id;
    k->in_flight = 1;
}

static void refresh_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    call *k = arg;
    k->in_flight = 0;
    if (k->finished)
        return;
    if (status != MCP_OK) {
        mcp__call_reply(k, status, result, err);
        return;
    }
    /* The transport has read the tools' x-mcp-header annotations on the way. */
    const char *next = json_string_value(json_object_get(result, "nextCursor"));
    if (next != NULL && k->refresh_pages < MCP__CLIENT_MAX_REFRESH_PAGES) {
        refresh_page(k, next);
        return;
    }
    round_send(k);
}

/* A version list of a -32022 names the revision we speak. */
static int names_ours(mcp_client *c, const mcp_rpc_error *err)
{
    const json_t *list = version_list(json_object_get(err->data, "supported"));
    return list != NULL && newest_listed(list, 1) == c->rev;
}

static void modern_reply(void *arg, int status, const json_t *result, const mcp_rpc_error *err)
{
    call *k = arg;
    mcp_client *c = k->c;
    k->in_flight = 0;
    if (k->finished)
        return;
    if (status == MCP_ERPC && err->code == MCP_RPC_UNSUPPORTED_VERSION && !k->version_retried &&
        names_ours(c, err)) {
        k->version_retried = 1;
        round_send(k);
        return;
    }
    if (status == MCP_ERPC && err->code == MCP_RPC_HEADER_MISMATCH && !k->header_retried &&
        c->tr_http && strcmp(k->method, "tools/call") == 0) {
        /* The tool's schema may have changed: read it again, then retry once. */
        k->header_retried = 1;
        mcp__debug("tools/call: HeaderMismatch (%s): reading tools/list again", err->message);
        refresh_page(k, NULL);
        return;
    }
    if (mcp__task_reply(k, status, result, err))
        return; /* a task: created, or polled */
    const char *type = json_string_value(json_object_get(result, "resultType"));
    if (status == MCP_OK && type != NULL && strcmp(type, "input_required") == 0) {
        input_required(k, result);
        return;
    }
    /* A missing resultType means "complete" (an earlier revision's result). */
    mcp__call_reply(k, status, result, err);
}
