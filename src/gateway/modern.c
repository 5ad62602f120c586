/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28 through the gateway (changelog; basic/versioning.mdx): a
 * request names its protocol version in _meta and is served on its own, with no
 * session, by a pool of children that the gateway starts and prepares itself.
 *
 * A pool child is first asked server/discover, as a client of this revision asks a
 * server it does not know (versioning.mdx, Backward Compatibility):
 *
 * - A child that speaks 2026-07-28 itself gets each request as it came, under a
 *   gateway id, and answers it: its own InputRequiredResults and requestState,
 *   subscriptions tagged with the request's id, which the gateway maps back. One such
 *   child serves every request, since it seals requestState with a key of its own
 *   and a retry must reach it again.
 *
 * - Any other child is initialized as a client of the older revisions would (with
 *   sampling, elicitation and roots), and the gateway translates. server/discover is
 *   answered from the child's initialize result; results get resultType, the server's
 *   identity and cache hints. A request of the child to the client (elicitation,
 *   sampling, roots) is a Multi Round-Trip Request's question
 *   (basic/patterns/mrtr.mdx): the client's request is answered with an
 *   InputRequiredResult whose requestState, sealed with the gateway's key and bound
 *   to the request, names the request that waits in the child; the client's retry
 *   brings the answers, which go to the child, and the request goes on there. So
 *   that a question is never put to the wrong client, such a child serves one
 *   request that may ask (tools/call, prompts/get, resources/read) at a time; up to
 *   pool_size children run. subscriptions/listen is served by the gateway from the
 *   children's notifications.
 *
 * Requests that find no child free wait, in order, a bounded time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/modern_int.h"
#include "protocol/headers.h"
#include "protocol/json.h"
#include "protocol/meta.h"
#include "protocol/rpc.h"
#include "util/seal.h"

void mcp__gw_mreq_free(gw_mreq *m)
{
    if (m == NULL)
        return;
    json_decref(m->caps);
    free(m->binding);
    json_decref(m->asked);
    json_decref(m->final);
    free(m);
}

int mcp__gw_modern_new(gw *g)
{
    gw_modern *m = calloc(1, sizeof(*m));
    unsigned char key[MCP__SEAL_KEY_LEN];
    if (m == NULL)
        return MCP_ENOMEM;
    if (g->cfg.has_state_key)
        memcpy(key, g->cfg.state_key, sizeof key); /* shared by the nodes */
    else if (mcp__random_bytes(key, sizeof key) != MCP_OK) {
        free(m);
        return MCP_EIO;
    }
    mcp__sealer_init(&m->sealer, 0, key);
    memset(key, 0, sizeof key);
    m->tools = json_object();
    m->res_subs = json_object();
    if (m->tools == NULL || m->res_subs == NULL) {
        json_decref(m->tools);
        json_decref(m->res_subs);
        free(m);
        return MCP_ENOMEM;
    }
    g->modern = m;
    return MCP_OK;
}

void mcp__gw_modern_free(gw *g)
{
    gw_modern *m = g->modern;
    if (m == NULL)
        return;
    mcp__sealer_clear(&m->sealer);
    json_decref(m->tools);
    json_decref(m->res_subs);
    free(m);
    g->modern = NULL;
}

int mcp__gw_is_modern(const json_t *msg)
{
    mcp__meta meta;
    mcp__meta_read(json_object_get(msg, "params"), &meta);
    return meta.version != NULL;
}

/* ---- Answers ---- */

/* The HTTP status some errors of this revision carry (streamable-http.mdx), as the
 * server core gives them. */
static unsigned http_flags(const json_t *msg)
{
    json_int_t code = json_integer_value(json_object_get(json_object_get(msg, "error"), "code"));
    if (code == MCP_RPC_HEADER_MISMATCH || code == MCP_RPC_UNSUPPORTED_VERSION ||
        code == MCP_RPC_MISSING_CAPABILITY)
        return MCP__SEND_HTTP_400;
    if (code == MCP_RPC_METHOD_NOT_FOUND)
        return MCP__SEND_HTTP_404;
    return 0;
}

/* The answer (taken over) to the request that came on stream. */
void mcp__gwm_reply(gw_sess *s, uint64_t stream, json_t *msg)
{
    if (msg == NULL) {
        s->io->send(s->io_user, stream, NULL, 0, MCP__SEND_RESPONSE);
        return;
    }
    mcp__gw_to_client(s, stream, msg, MCP__SEND_RESPONSE | http_flags(msg));
    json_decref(msg);
}

void mcp__gwm_reply_error(gw_sess *s, uint64_t stream, const json_t *id, int code,
                          const char *message, json_t *data)
{
    mcp__gwm_reply(s, stream, mcp__error_message(id, code, message, data));
}

/* Every revision the gateway speaks, newest first. */
static json_t *versions(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < mcp__revision_count(); i++)
        json_array_append_new(list, json_string(mcp__revision_at(i)->version));
    return list;
}

static void unsupported(gw_sess *s, uint64_t stream, const json_t *id, const char *requested)
{
    json_t *data = json_pack("{s:o}", "supported", versions());
    if (data != NULL && requested != NULL)
        json_object_set_new(data, "requested", json_string(requested));
    char msg[200];
    snprintf(msg, sizeof(msg), "Unsupported protocol version: %.64s",
             requested != NULL ? requested : "(none)");
    mcp__gwm_reply_error(s, stream, id, MCP_RPC_UNSUPPORTED_VERSION, msg, data);
}

/* The methods whose results carry caching hints (caching.mdx). */
static int cacheable(const char *method)
{
    static const char *const names[] = {
        "tools/list",     "prompts/list",    "resources/list", "resources/templates/list",
        "resources/read", "server/discover",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(method, names[i]) == 0)
            return 1;
    return 0;
}

/* What the revision adds to a translated child's result: resultType, the server's
 * identity, and cache hints (no caching, private) where the child gave none. */
void mcp__gwm_decorate(gw_child *c, const char *method, json_t *result)
{
    if (!json_is_object(result))
        return;
    if (json_object_get(result, "resultType") == NULL)
        json_object_set_new(result, "resultType", json_string("complete"));
    json_t *meta = json_object_get(result, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(result, "_meta", meta);
    }
    if (c->server_info != NULL && json_object_get(meta, META_SERVER_INFO) == NULL)
        json_object_set(meta, META_SERVER_INFO, c->server_info);
    const char *type = json_string_value(json_object_get(result, "resultType"));
    if (cacheable(method) && type != NULL && strcmp(type, "complete") == 0) {
        if (json_object_get(result, "ttlMs") == NULL)
            json_object_set_new(result, "ttlMs", json_integer(0));
        if (json_object_get(result, "cacheScope") == NULL)
            json_object_set_new(result, "cacheScope", json_string("private"));
    }
}

/* ---- The gateway's own requests to pool children ---- */

/* params with the _meta of this revision (a pool child that speaks it needs one). */
static json_t *with_meta(gw_child *c, json_t *params)
{
    if (params == NULL)
        params = json_object();
    if (c->modern && params != NULL)
        json_object_set_new(params, "_meta",
                            json_pack("{s:s, s:{}}", "io.modelcontextprotocol/protocolVersion",
                                      mcp__revision_modern()->version,
                                      "io.modelcontextprotocol/clientCapabilities"));
    return params;
}

/* Sends c a request of the gateway's own (params taken over). MCP_OK, or c is lost. */
int mcp__gwm_internal_request(gw_child *c, enum internal kind, const char *method, json_t *params)
{
    gw_req *r = mcp__gw_child_request(c, method, params);
    if (r == NULL)
        return MCP_ECLOSED;
    r->internal = kind;
    return MCP_OK;
}

static void internal_done(gw_req *r)
{
    gw_child *c = r->c;
    mcp__gw_req_unlink(r);
    mcp__gw_req_free(r);
    (void)c;
}

static void notify_child(gw_child *c, const char *method, json_t *params)
{
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
    if (n != NULL && c->state != CH_GONE && !c->closing)
        mcp__gw_to_child(c, n);
    json_decref(n);
}

/* Tells c that the gateway will not wait for its request r any more. */
static void cancel_in_child(gw_child *c, json_int_t gid, const char *why)
{
    notify_child(c, "notifications/cancelled",
                 json_pack("{s:I, s:s}", "requestId", (json_int_t)gid, "reason", why));
}

/* Keeps the tools of a tools/list result, for their Mcp-Param headers. */
static void keep_tools(gw *g, const json_t *result)
{
    gw_modern *m = g->modern;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(result, "tools"), i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *schema = json_object_get(t, "inputSchema");
        if (name == NULL || !json_is_object(schema))
            continue;
        if (json_object_get(m->tools, name) == NULL && json_object_size(m->tools) >= MAX_TOOLS)
            continue;
        json_object_set(m->tools, name, schema);
    }
}

static void fetch_tools(gw_child *c, const json_t *cursor)
{
    json_t *params = json_object();
    if (params != NULL && cursor != NULL)
        json_object_set(params, "cursor", (json_t *)cursor);
    mcp__gwm_internal_request(c, INT_TOOLS, "tools/list", with_meta(c, params));
}

/* ---- The pool ---- */

static gw_child *pool_start(gw *g)
{
    gw_modern *m = g->modern;
    gw_child *c = mcp__gw_child_start(g, 1);
    if (c == NULL)
        return NULL;
    c->pooled = 1;
    m->npool++;
    m->nstarting++;
    if (m->no_probe) {
        m->no_probe = 0; /* the next one is asked again */
        return mcp__gw_child_initialize(c) == MCP_OK ? c : NULL;
    }
    /* What a client of this revision asks first; an older server answers with an
     * error (method not found), and is then initialized. */
    json_t *params = json_object();
    json_object_set_new(params, "_meta",
                        json_pack("{s:s, s:{}}", "io.modelcontextprotocol/protocolVersion",
                                  mcp__revision_modern()->version,
                                  "io.modelcontextprotocol/clientCapabilities"));
    if (mcp__gwm_internal_request(c, INT_PROBE, "server/discover", params) != MCP_OK)
        return NULL;
    return c;
}

/* Whether c waits for the retry of a request whose client it asked (parked): it
 * serves nobody else meanwhile. */
static int held(const gw_child *c)
{
    return c->pooled && c->state != CH_GONE && !c->closing && c->excl != NULL &&
           c->excl->m != NULL && c->excl->m->parked;
}

static int count_held(gw *g)
{
    int n = 0;
    for (gw_child *c = g->children; c != NULL; c = c->next)
        n += held(c);
    return n;
}

/* How many pool children parked requests may hold. */
static int park_budget(const gw *g)
{
    int budget = g->cfg.pool_size * PARKED_PER_POOL_CHILD;
    int room = g->cfg.max_children - g->cfg.pool_size;
    return budget < room ? budget : room > 1 ? room : 1;
}

static void forget(gw_req *r, const char *why);

/* Gives up the parked request of the client that holds the most children so (the
 * oldest of its; never `except`), and the child that waits for it: 1 when there was
 * one. */
static int evict_parked(gw *g, const gw_req *except)
{
    gw_req *victim = NULL;
    int victim_n = 0;
    for (gw_child *c = g->children; c != NULL; c = c->next) {
        if (!held(c))
            continue;
        gw_req *r = c->excl;
        if (r == except)
            continue;
        int n = 0;
        for (gw_child *o = g->children; o != NULL; o = o->next)
            n += held(o) && strcmp(o->excl->m->peer, r->m->peer) == 0;
        if (victim == NULL || n > victim_n ||
            (n == victim_n && r->m->parked_at < victim->m->parked_at)) {
            victim = r;
            victim_n = n;
        }
    }
    if (victim == NULL)
        return 0;
    char mw[64];
    mcp__gw_log(g, MCP_LOG_INFO,
                "event=request session=- method=%s status=evicted peer=%s parked_by_peer=%d",
                mcp__gw_log_word(victim->method, mw, sizeof mw),
                victim->m->peer[0] ? victim->m->peer : "-", victim_n);
    forget(victim, "the gateway needed the server process for other requests");
    return 1;
}

void mcp__gwm_park_bound(gw *g, gw_req *just_parked)
{
    while (count_held(g) > park_budget(g) && evict_parked(g, just_parked)) {
    }
}

/* Starts a child when requests wait and the pool may grow: children held by parked
 * requests do not count, since they serve nobody else (their own budget bounds them). */
static void grow(gw *g)
{
    gw_modern *m = g->modern;
    int max = m->passthrough ? 1 : g->cfg.pool_size;
    if (m->nstarting > 0 || m->no_grow || g->shutting_down || m->npool - count_held(g) >= max)
        return;
    if (mcp__gw_children_full(g))
        evict_parked(g, NULL); /* its child is being stopped: no longer counted */
    pool_start(g);
}

static int is_mrtr(const char *method)
{
    return strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0 ||
           strcmp(method, "resources/read") == 0;
}

/* A ready pool child for a request (asks: it may put questions to its client; any:
 * it is answered by the gateway from what it knows of the child). */
enum { PICK_CALL, PICK_ASKS, PICK_ANY };
static gw_child *pick(gw *g, int how)
{
    gw_child *best = NULL;
    for (gw_child *c = g->children; c != NULL; c = c->next) {
        if (!c->pooled || c->state != CH_READY || c->closing || c->lost_pending)
            continue;
        if (c->modern || how == PICK_ANY)
            return c;
        if (c->excl != NULL || (how == PICK_ASKS && c->nreqs > 0))
            continue;
        if (best == NULL || c->nreqs < best->nreqs)
            best = c;
    }
    return best;
}

static void unqueue(gw_sess *s)
{
    gw_modern *m = s->g->modern;
    if (s->waiting == NULL)
        return;
    gw_sess *prev = NULL;
    for (gw_sess *w = m->wait_head; w != NULL; prev = w, w = w->wnext) {
        if (w != s)
            continue;
        if (prev != NULL)
            prev->wnext = s->wnext;
        else
            m->wait_head = s->wnext;
        if (m->wait_tail == s)
            m->wait_tail = prev;
        break;
    }
    s->wnext = NULL;
    json_decref(s->waiting);
    s->waiting = NULL;
    m->nwaiting--;
    m->waiting_bytes -= s->wait_bytes;
    s->wait_bytes = 0;
}

static int dispatch(gw_sess *s, json_t *msg, uint64_t stream);
static void fail_waiting(gw *g, const char *why);

void mcp__gw_modern_pump(gw *g)
{
    gw_modern *m = g->modern;
    if (m->pumping) {
        m->repump = 1;
        return;
    }
    m->pumping = 1;
    do {
        m->repump = 0;
        /* In order, but one that cannot go yet (a call that may ask, with every child
         * busy) does not hold back those that can. After each that went, the scan
         * starts again: what it did may have changed the queue. */
        for (gw_sess *s = m->wait_head; s != NULL;) {
            if (!dispatch(s, s->waiting, s->wait_stream)) {
                s = s->wnext;
                continue;
            }
            unqueue(s);
            s = m->wait_head;
        }
        if (m->wait_head != NULL)
            grow(g);
        if (m->wait_head != NULL && m->nstarting == 0 && pick(g, PICK_ANY) == NULL &&
            m->npool == 0) {
            /* No child could be started: nothing will come for them. */
            fail_waiting(g, "Internal error: the server cannot be started");
        }
    } while (m->repump);
    m->pumping = 0;
}

/* c is ready for requests: its tools are read, and waiting requests go. */
static void pool_ready(gw_child *c)
{
    gw *g = c->g;
    gw_modern *m = g->modern;
    if (!c->lost_pending)
        uv_timer_stop(&c->init_timer);
    c->state = CH_READY;
    c->pool_ready = 1;
    m->nstarting--;
    if (c->modern)
        m->passthrough = 1;
    else
        m->translate = 1;
    mcp__gw_log(g, MCP_LOG_INFO, "event=pool_ready pid=%d speaks_2026=%d", c->pid, c->modern);
    fetch_tools(c, NULL);
    if (c->state == CH_READY && c->modern) {
        /* Its tools may change: the gateway listens, as a client would. */
        json_t *p = json_pack("{s:{s:b}}", "notifications", "toolsListChanged", 1);
        mcp__gwm_internal_request(c, INT_LISTEN, "subscriptions/listen", with_meta(c, p));
    }
    mcp__gw_modern_pump(g);
}

void mcp__gw_modern_child_ready(gw_child *c, json_t *result)
{
    c->init_result = json_incref(result);
    json_t *info = json_object_get(result, "serverInfo");
    c->server_info = json_is_object(info) ? json_incref(info) : NULL;
    json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized");
    mcp__gw_to_child(c, n);
    json_decref(n);
    if (c->state != CH_GONE && !c->lost_pending)
        pool_ready(c);
}

static void fail_waiting(gw *g, const char *why)
{
    gw_modern *m = g->modern;
    while (m->wait_head != NULL) {
        gw_sess *s = m->wait_head;
        json_t *id = json_incref(json_object_get(s->waiting, "id"));
        uint64_t stream = s->wait_stream;
        unqueue(s);
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, why, NULL);
        json_decref(id);
    }
}

void mcp__gw_modern_child_gone(gw_child *c, const char *why)
{
    gw *g = c->g;
    gw_modern *m = g->modern;
    if (!c->pooled || c->pool_ready < 0)
        return;
    m->npool--;
    if (!c->pool_ready) {
        m->nstarting--;
        /* A server that went away while asked server/discover may be one that cannot
         * take a request before initialize: the next ones are initialized at once. */
        for (gw_req *r = c->reqs; r != NULL; r = r->cnext)
            m->no_probe |= r->internal == INT_PROBE;
        if (m->nstarting == 0 && pick(g, PICK_ANY) == NULL) {
            /* Nothing would serve what waits: it fails now, rather than start one
             * server after another that exits. */
            char msg[200];
            snprintf(msg, sizeof msg, "Internal error: the server process is gone (%s)", why);
            m->no_grow = 1;
            fail_waiting(g, msg);
            m->no_grow = 0;
        }
    }
    c->pool_ready = -1; /* counted out */
    if (m->sub_child == c) {
        /* Its subscriptions to resources are gone with it: every subscription the
         * gateway serves ends as the server ends one, and its client listens again. */
        m->sub_child = NULL;
        while (m->listens != NULL)
            mcp__gwm_listen_end(g, m->listens, 1);
        json_object_clear(m->res_subs);
    }
    mcp__gw_modern_pump(g);
}

/* A request without its _meta members and the gateway's parameters, as a server of
 * the older revisions takes it. */
static json_t *translated(const json_t *msg)
{
    json_t *out = json_copy((json_t *)msg);
    json_t *params = json_object_get(msg, "params");
    json_t *p2 = json_is_object(params) ? json_copy(params) : NULL;
    if (out == NULL || p2 == NULL) {
        json_decref(p2);
        return out;
    }
    json_object_del(p2, "inputResponses");
    json_object_del(p2, "requestState");
    json_t *meta = json_object_get(p2, "_meta");
    if (json_is_object(meta)) {
        json_t *m2 = json_object();
        const char *k;
        json_t *v;
        json_object_foreach(meta, k, v)
        {
            if (strncmp(k, META_PREFIX, strlen(META_PREFIX)) != 0)
                json_object_set(m2, k, v);
        }
        if (json_object_size(m2) > 0)
            json_object_set_new(p2, "_meta", m2);
        else {
            json_decref(m2);
            json_object_del(p2, "_meta");
        }
    }
    json_object_set_new(out, "params", p2);
    return out;
}

/* server/discover of a translated child: from its initialize result. */
static void discover(gw_sess *s, gw_child *c, const json_t *id, uint64_t stream)
{
    json_t *caps = json_object_get(c->init_result, "capabilities");
    json_t *result = json_pack("{s:o, s:O}", "supportedVersions", versions(), "capabilities",
                               json_is_object(caps) ? caps : json_object());
    json_t *instructions = json_object_get(c->init_result, "instructions");
    if (result != NULL && json_is_string(instructions))
        json_object_set(result, "instructions", instructions);
    mcp__gwm_decorate(c, "server/discover", result);
    mcp__gwm_reply(s, stream,
                   json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* ---- Serving a request ---- */

/* Whether a tools/call carries the Mcp-Param headers its tool's x-mcp-header
 * annotations ask for (streamable-http.mdx); 0, or answered here. */
static int param_headers_ok(gw_sess *s, json_t *msg, uint64_t stream);

typedef struct {
    gw_sess *s;
    uint64_t stream;
} hdr_src;

static const char *hdr_get(void *user, const char *name)
{
    hdr_src *h = user;
    return h->s->io->header(h->s->io_user, h->stream, name);
}

static int param_headers_ok(gw_sess *s, json_t *msg, uint64_t stream)
{
    if (s->io->header == NULL ||
        strcmp(json_string_value(json_object_get(msg, "method")), "tools/call") != 0)
        return 1;
    json_t *params = json_object_get(msg, "params");
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *schema = name != NULL ? json_object_get(s->g->modern->tools, name) : NULL;
    json_t *args = json_object_get(params, "arguments");
    if (schema == NULL || (args != NULL && !json_is_object(args)))
        return 1; /* the server names what is wrong */
    char why[256];
    hdr_src h = {s, stream};
    if (mcp__param_headers_check(schema, args, hdr_get, &h, why, sizeof why) == 0)
        return 1;
    mcp__gwm_reply_error(s, stream, json_object_get(msg, "id"), MCP_RPC_HEADER_MISMATCH, why, NULL);
    return 0;
}

/* Serves msg now, or returns 0 when no pool child can take it yet. */
static int dispatch(gw_sess *s, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    gw_modern *m = g->modern;
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params");
    int mrtr = is_mrtr(method);
    int tools_call = strcmp(method, "tools/call") == 0;
    /* Mcp-Param headers are judged by the tools' schemas: a call waits for the first
     * tools/list of a child. */
    if (tools_call && !m->tools_ready)
        return 0;
    if (!param_headers_ok(s, msg, stream))
        return 1;
    if (m->translate && mrtr && json_object_get(params, "requestState") != NULL) {
        /* A retry needs no free child: the one it names is waiting for it. */
        int rc = mcp__gwm_retry(s, msg, stream);
        if (rc > 0)
            return 1;
        if (rc < 0 && !m->passthrough) {
            mcp__gwm_reply_error(
                s, stream, json_object_get(msg, "id"), MCP_RPC_INVALID_PARAMS,
                "Invalid params: \"requestState\" is not one this server gave for this "
                "request",
                NULL);
            return 1;
        }
    }
    int answered_here = !m->passthrough && (strcmp(method, "server/discover") == 0 ||
                                            strcmp(method, "subscriptions/listen") == 0);
    gw_child *c = pick(g, answered_here ? PICK_ANY : mrtr ? PICK_ASKS : PICK_CALL);
    if (c == NULL)
        return 0;
    gw_mreq *mr = calloc(1, sizeof(*mr));
    if (mr == NULL) {
        mcp__gwm_reply_error(s, stream, json_object_get(msg, "id"), MCP_RPC_INTERNAL_ERROR,
                             "Internal error: out of memory", NULL);
        return 1;
    }
    mcp__meta meta;
    mcp__meta_read(params, &meta);
    int level = mcp_log_level_parse(json_string_value(meta.level));
    mr->log_level = level >= 0 ? level : MCP_LOG_EMERGENCY + 1;
    (void)tools_call;
    if (c->modern) {
        mr->listen = strcmp(method, "subscriptions/listen") == 0;
        if (g->node != 0)
            mcp__gwm_task_id_in(g, msg);
        mcp__gw_attach(s, c);
        gw_req *r = mcp__gw_forward_request(s, msg, stream, NULL);
        if (r != NULL)
            r->m = mr;
        else
            free(mr);
        return 1;
    }
    json_t *id = json_object_get(msg, "id");
    if (strcmp(method, "server/discover") == 0 || strcmp(method, "subscriptions/listen") == 0) {
        free(mr);
        if (method[0] == 's' && method[1] == 'e')
            discover(s, c, id, stream);
        else
            mcp__gwm_listen_open(s, c, msg, stream);
        return 1;
    }
    mr->translated = 1;
    if (s->io->peer != NULL)
        snprintf(mr->peer, sizeof mr->peer, "%s", s->io->peer(s->io_user, stream));
    mr->caps = json_incref((json_t *)meta.caps);
    mr->asked = json_object();
    if (mrtr)
        mr->binding = mcp__gwm_binding_of(method, params, &mr->blen);
    json_t *out = translated(msg);
    if (mr->asked == NULL || out == NULL || (mrtr && mr->binding == NULL)) {
        json_decref(out);
        mcp__gw_mreq_free(mr);
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory",
                             NULL);
        return 1;
    }
    mcp__gw_attach(s, c);
    gw_req *r = mcp__gw_forward_request(s, out, stream, NULL);
    json_decref(out);
    if (r == NULL) {
        mcp__gw_mreq_free(mr);
        return 1;
    }
    r->m = mr;
    if (mrtr)
        c->excl = r;
    return 1;
}

void mcp__gw_modern_request(gw_sess *s, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    gw_modern *m = g->modern;
    json_t *id = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    mcp__meta meta;
    mcp__meta_read(json_object_get(msg, "params"), &meta);
    /* basic/index.mdx, _meta: judged as the server core judges it. */
    const char *bad = mcp__meta_judge(&meta);
    if (bad != NULL) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS, bad, NULL);
        return;
    }
    const char *version = json_string_value(meta.version);
    const mcp__revision *rev = mcp__revision_find(version);
    if (rev == NULL || !rev->modern) {
        unsupported(s, stream, id, version);
        return;
    }
    if (mcp__revision_removed_method(method)) {
        char why[300];
        snprintf(why, sizeof(why), "Method not found: %.100s (not part of protocol version %s)",
                 method, rev->version);
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
        return;
    }
    if (g->shutting_down) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: the gateway is stopping", NULL);
        return;
    }
    if (dispatch(s, msg, stream))
        return;
    size_t bytes = json_dumpb(msg, NULL, 0, JSON_COMPACT);
    if (m->nwaiting >= MAX_WAITING || m->waiting_bytes + bytes > MAX_WAITING_BYTES) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: too many requests wait for a server process", NULL);
        return;
    }
    s->wait_bytes = bytes;
    m->waiting_bytes += bytes;
    s->waiting = json_incref(msg);
    s->wait_stream = stream;
    s->wait_at = uv_now(g->loop);
    s->wnext = NULL;
    if (m->wait_tail != NULL)
        m->wait_tail->wnext = s;
    else
        m->wait_head = s;
    m->wait_tail = s;
    m->nwaiting++;
    mcp__gw_modern_pump(g);
}

/* ---- Tasks of a child, on several nodes ----
 *
 * A child that speaks 2026-07-28 may offer the tasks extension: its tasks live in it, on
 * the node that runs it. On a node of a deployment (g->node), a task's id is given to the
 * client as "<node>.<the child's id>", so that any node knows where tasks/get,
 * tasks/update and tasks/cancel go (mcp__gwm_home relays them there), and the child gets
 * its own id back. */

static int is_task_method(const char *method)
{
    return method != NULL &&
           (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
            strcmp(method, "tasks/cancel") == 0);
}

uint32_t mcp__gwm_task_node(const json_t *msg, const char **rest)
{
    const char *id = json_string_value(json_object_get(json_object_get(msg, "params"), "taskId"));
    if (!is_task_method(json_string_value(json_object_get(msg, "method"))) || id == NULL)
        return 0;
    /* "<node>.": digits without a leading zero, a node number (below 2^20) */
    uint32_t n = 0;
    const char *p = id;
    if (*p < '1' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9' && n < (1u << 20))
        n = n * 10 + (uint32_t)(*p++ - '0');
    if (*p != '.' || n >= (1u << 20))
        return 0;
    if (rest != NULL)
        *rest = p + 1;
    return n;
}

void mcp__gwm_task_id_in(gw *g, json_t *msg)
{
    const char *rest = NULL;
    if (mcp__gwm_task_node(msg, &rest) != g->node)
        return; /* not one of this node's: the child finds no such task */
    json_t *params = json_object_get(msg, "params");
    char *copy = mcp__strdup(rest);
    if (copy != NULL)
        json_object_set_new(params, "taskId", json_string(copy));
    free(copy);
}

void mcp__gwm_task_id_out(gw *g, const char *method, json_t *result)
{
    const char *type = json_string_value(json_object_get(result, "resultType"));
    const char *id = json_string_value(json_object_get(result, "taskId"));
    int task = (type != NULL && strcmp(type, "task") == 0) || strcmp(method, "tasks/get") == 0;
    if (!task || id == NULL)
        return;
    char *named = mcp__asprintf("%u.%s", (unsigned)g->node, id);
    if (named != NULL)
        json_object_set_new(result, "taskId", json_string(named));
    free(named);
}

/* ---- From pool children ---- */

static void internal_answer(gw_child *c, gw_req *r, json_t *msg)
{
    gw *g = c->g;
    json_t *result = json_object_get(msg, "result");
    enum internal kind = (enum internal)r->internal;
    internal_done(r);
    switch (kind) {
    case INT_PROBE: {
        json_t *v;
        size_t i;
        int modern = 0;
        json_array_foreach(json_object_get(result, "supportedVersions"), i, v)
        {
            const char *s = json_string_value(v);
            modern |= s != NULL && strcmp(s, mcp__revision_modern()->version) == 0;
        }
        if (modern) {
            c->modern = 1;
            json_t *info = json_object_get(json_object_get(result, "_meta"), META_SERVER_INFO);
            c->server_info = json_is_object(info) ? json_incref(info) : NULL;
            pool_ready(c);
        } else {
            /* A server of the older revisions: initialized as their clients do. */
            mcp__gw_child_initialize(c);
        }
        break;
    }
    case INT_TOOLS: {
        keep_tools(g, result);
        json_t *cursor = json_object_get(result, "nextCursor");
        if (json_is_string(cursor) && ++g->modern->tool_pages < MAX_TOOL_PAGES) {
            fetch_tools(c, cursor);
        } else {
            g->modern->tool_pages = 0;
            if (!g->modern->tools_ready) {
                g->modern->tools_ready = 1;
                mcp__gw_modern_pump(g);
            }
        }
        break;
    }
    default:
        break;
    }
}

int mcp__gw_modern_response(gw_child *c, gw_req *r, json_t *msg)
{
    if (r->internal != INT_NONE) {
        internal_answer(c, r, msg);
        return 1;
    }
    gw_mreq *mr = r->m;
    if (mr == NULL)
        return 0;
    json_t *result = json_object_get(msg, "result");
    if (strcmp(r->method, "tools/list") == 0)
        keep_tools(c->g, result);
    if (!mr->translated && c->g->node != 0)
        mcp__gwm_task_id_out(c->g, r->method, result);
    if (mr->translated)
        mcp__gwm_decorate(c, r->method, result);
    if (mr->parked) {
        /* The child answered while its client was away with the questions: the
         * retry gets it. */
        mcp__gwm_drop_questions(r, "the request has ended");
        json_decref(mr->final);
        mr->final = json_incref(msg);
        if (c->excl == r)
            c->excl = NULL;
        mcp__gw_modern_pump(c->g);
        return 1;
    }
    json_object_set(msg, "id", r->client_id);
    mcp__gwm_reply(r->s, r->stream, json_incref(msg));
    mcp__gw_req_done(r, json_object_get(msg, "error"));
    return 1;
}

/* The request of c's a notification without a token or tag concerns: the one that may
 * ask (translated), else the only one in flight. */
static gw_req *concerned(gw_child *c)
{
    if (c->excl != NULL)
        return c->excl;
    gw_req *only = NULL;
    for (gw_req *r = c->reqs; r != NULL; r = r->cnext) {
        if (r->internal != INT_NONE)
            continue;
        /* A cancelled or parked request may be what it speaks of: its client is not the
         * one in flight. */
        if (r->zombie || r->s == NULL)
            return NULL;
        if (only != NULL)
            return NULL;
        only = r;
    }
    return only;
}

int mcp__gw_modern_notification(gw_child *c, json_t *msg, const char *method)
{
    gw *g = c->g;
    gw_modern *m = g->modern;
    json_t *params = json_object_get(msg, "params");
    json_t *meta = json_object_get(params, "_meta");
    json_t *tag = json_object_get(meta, MCP__META_SUBSCRIPTION);
    if (tag != NULL) {
        /* A subscription the child serves: the gateway's own, or a client's. */
        gw_req *r = mcp__gw_gid_lookup(&g->reqs, tag);
        if (r == NULL || r->c != c)
            return 1;
        if (r->internal == INT_LISTEN) {
            if (strcmp(method, "notifications/tools/list_changed") == 0)
                fetch_tools(c, NULL);
            return 1;
        }
        if (r->s == NULL || r->m == NULL || !r->m->listen)
            return 1;
        json_object_set(meta, MCP__META_SUBSCRIPTION, r->client_id);
        mcp__gw_to_client(r->s, r->stream, msg, 0);
        return 1;
    }
    if (strcmp(method, "notifications/cancelled") == 0) {
        mcp__gwm_withdraw(c, json_object_get(params, "requestId"));
        return 1;
    }
    if (strcmp(method, "notifications/tools/list_changed") == 0)
        fetch_tools(c, NULL);
    if (strstr(method, "/list_changed") != NULL ||
        strcmp(method, "notifications/resources/updated") == 0) {
        /* From a translated child: to the subscriptions that asked for it; updates only
         * from the child they were asked of. */
        if (strcmp(method, "notifications/resources/updated") == 0 && c != m->sub_child)
            return 1;
        for (mlisten *l = m->listens; l != NULL; l = l->next)
            if (mcp__listen_wants(l->kinds, l->uris, method, params))
                mcp__gwm_listen_send(l, method, params);
        return 1;
    }
    if (strcmp(method, "notifications/message") == 0) {
        /* A log: only to a request that asked for this level (its _meta logLevel). */
        gw_req *r = concerned(c);
        int level = mcp_log_level_parse(json_string_value(json_object_get(params, "level")));
        if (r == NULL || r->s == NULL || r->m == NULL || level < 0 || level < r->m->log_level)
            return 1;
        mcp__gw_to_client(r->s, r->stream, msg, 0);
        return 1;
    }
    return 1; /* nothing else of a child concerns a client of this revision */
}

/* ---- Time, cancellation, the end ---- */

void mcp__gw_modern_tick(gw *g)
{
    gw_modern *m = g->modern;
    uint64_t now = uv_now(g->loop);
    for (gw_child *c = g->children; c != NULL; c = c->next) {
        if (!c->pooled)
            continue;
        for (gw_req *r = c->reqs, *next; r != NULL; r = next) {
            next = r->cnext;
            if (r->m == NULL || !r->m->parked ||
                now - r->m->parked_at < (uint64_t)g->cfg.input_timeout_ms)
                continue;
            char mw[64];
            mcp__gw_log(g, MCP_LOG_INFO, "event=request session=- method=%s status=expired",
                        mcp__gw_log_word(r->method, mw, sizeof mw));
            if (r->m->final != NULL) {
                /* Answered by the child already: only its client's retry never came. */
                mcp__gw_req_unlink(r);
                mcp__gw_req_free(r);
                mcp__gw_modern_pump(g);
                next = c->reqs; /* the pump may have changed the list */
                continue;
            }
            /* The client never came back with the answers: the child is told and
             * replaced, and r goes with it. */
            char why[96];
            snprintf(why, sizeof why, "the client did not answer within %d ms",
                     g->cfg.input_timeout_ms);
            forget(r, why);
            break; /* the child is retired: the rest of its list goes with it */
        }
    }
    while (m->wait_head != NULL && now - m->wait_head->wait_at >= WAIT_MS) {
        gw_sess *s = m->wait_head;
        json_t *id = json_incref(json_object_get(s->waiting, "id"));
        uint64_t stream = s->wait_stream;
        unqueue(s);
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                             "Internal error: no server process was free in time", NULL);
        json_decref(id);
    }
    mcp__gw_modern_pump(g);
}

/* A translating child whose request that may ask ended without its answer: what it
 * still asks or sends for it could be taken for the next client's, so it serves no
 * more, and the pool starts another when it needs one. */
static void retire(gw_child *c)
{
    mcp__gw_child_close(c);
    mcp__gw_modern_child_gone(c, "retired");
}

/* The request r of s ends without an answer to its client. */
static void forget(gw_req *r, const char *why)
{
    gw_child *c = r->c;
    int asked = c->excl == r;
    if (r->m != NULL && r->m->asked != NULL)
        mcp__gwm_drop_questions(r, why);
    if (c->state != CH_GONE && !c->closing)
        cancel_in_child(c, r->gid, why);
    if (r->s != NULL) {
        mcp__gw_req_abandon(r, 0);
    } else {
        mcp__gw_req_unlink(r); /* parked: nobody waits for it */
        mcp__gw_req_free(r);
    }
    if (asked && !c->modern && !c->closing)
        retire(c);
}

void mcp__gw_modern_cancel_stream(gw_sess *s, uint64_t stream)
{
    gw *g = s->g;
    if (s->waiting != NULL && s->wait_stream == stream)
        unqueue(s);
    for (mlisten *l = g->modern->listens; l != NULL;) {
        if (l->s != s || l->stream != stream) {
            l = l->next;
            continue;
        }
        mcp__gwm_listen_end(g, l, 0);
        l = g->modern->listens; /* what it did may have ended others */
    }
    for (gw_req *r = s->reqs, *next; r != NULL; r = next) {
        next = r->snext;
        if (r->stream == stream)
            forget(r, "the client closed the request's stream");
    }
}

void mcp__gw_modern_drain(gw_sess *s)
{
    gw *g = s->g;
    for (mlisten *l = g->modern->listens; l != NULL;) {
        if (l->s != s) {
            l = l->next;
            continue;
        }
        mcp__gwm_listen_end(g, l, 1);
        l = g->modern->listens; /* what it did may have ended others */
    }
    for (gw_req *r = s->reqs, *next; r != NULL; r = next) {
        next = r->snext;
        if (r->m == NULL || !r->m->listen)
            continue;
        /* A subscription passed through: ended as its server ends one. */
        json_t *result = json_pack("{s:s, s:{s:O}}", "resultType", "complete", "_meta",
                                   MCP__META_SUBSCRIPTION, r->client_id);
        mcp__gwm_reply(
            s, r->stream,
            json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", r->client_id, "result", result));
        forget(r, "the gateway is stopping");
    }
}

void mcp__gw_modern_sess_close(gw_sess *s)
{
    gw *g = s->g;
    unqueue(s);
    for (gw_req *r = s->reqs, *next; r != NULL; r = next) {
        next = r->snext;
        if (r->m != NULL)
            forget(r, "the client's request ended");
    }
    for (mlisten *l = g->modern->listens; l != NULL;) {
        if (l->s != s) {
            l = l->next;
            continue;
        }
        mcp__gwm_listen_end(g, l, 0);
        l = g->modern->listens; /* what it did may have ended others */
    }
}
