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

#include "gateway/forward_int.h"
#include "protocol/headers.h"
#include "protocol/json.h"
#include "protocol/meta.h"
#include "protocol/rpc.h"
#include "util/seal.h"

#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
#define META_PREFIX "io.modelcontextprotocol/"

/* Requests waiting for a pool child: at most this many, of this many bytes in all,
 * this long. */
#define MAX_WAITING 1024
#define MAX_WAITING_BYTES (16u << 20)
#define WAIT_MS 30000
/* Rounds of questions of one request. */
#define MAX_ROUNDS 32
/* Bytes of resource URIs the gateway's subscriptions hold in all. */
#define MAX_LISTEN_URI_BYTES (4u << 20)
/* Questions of one request at once; tools remembered for their Mcp-Param headers; pages
 * of tools/list read for them; subscriptions served here and URIs of one. */
#define MAX_QUESTIONS 32
#define MAX_TOOLS 4096
#define MAX_TOOL_PAGES 64
#define MAX_LISTENS 1024
#define MAX_LISTEN_URIS 1000

enum internal { INT_NONE, INT_PROBE, INT_TOOLS, INT_LISTEN, INT_SUB };
enum { L_TOOLS = 0x1, L_PROMPTS = 0x2, L_RESOURCES = 0x4 };

/* A subscriptions/listen served by the gateway (translated children). */
typedef struct mlisten {
    gw_sess *s;
    uint64_t stream;
    json_t *id;
    unsigned kinds;
    json_t *uris; /* object used as a set, or NULL */
    struct mlisten *next;
} mlisten;

struct gw_modern {
    mcp__sealer sealer;
    int npool, nstarting;
    int passthrough; /* a child spoke 2026-07-28: one child serves everything */
    int translate;   /* a child did not: the gateway translates */
    gw_sess *wait_head, *wait_tail;
    size_t nwaiting, waiting_bytes;
    int tools_ready; /* the first tools/list of a child was read (Mcp-Param headers) */
    size_t uri_bytes;
    json_t *tools; /* tool name -> inputSchema, for the Mcp-Param headers */
    int tool_pages;
    mlisten *listens;
    size_t nlistens;
    json_t *res_subs;    /* URI -> how many subscriptions ask for it */
    gw_child *sub_child; /* the child subscribed to them */
    int pumping, repump;
    int no_probe; /* children are initialized at once, not asked server/discover first */
    int no_grow;
};

struct gw_mreq {
    json_t *caps;   /* the client's capabilities, from this request's _meta */
    int log_level;  /* the least level of logs it wants (past EMERGENCY: none) */
    int listen;     /* subscriptions/listen, passed through */
    int translated; /* served by a translating child */
    char *binding;  /* what its requestState is bound to */
    size_t blen;
    json_t *asked;     /* key -> {"id", "method", "params"}: the child's open questions */
    unsigned next_key; /* keys of questions: "q1", "q2", ... */
    unsigned round;
    int parked; /* answered with an InputRequiredResult: waits for the retry */
    uint64_t parked_at;
    json_t *final; /* the child's answer, come while parked */
};

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
    if (mcp__random_bytes(key, sizeof key) != MCP_OK) {
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
static void reply(gw_sess *s, uint64_t stream, json_t *msg)
{
    if (msg == NULL) {
        s->io->send(s->io_user, stream, NULL, 0, MCP__SEND_RESPONSE);
        return;
    }
    mcp__gw_to_client(s, stream, msg, MCP__SEND_RESPONSE | http_flags(msg));
    json_decref(msg);
}

static void reply_error(gw_sess *s, uint64_t stream, const json_t *id, int code,
                        const char *message, json_t *data)
{
    reply(s, stream, mcp__error_message(id, code, message, data));
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
    reply_error(s, stream, id, MCP_RPC_UNSUPPORTED_VERSION, msg, data);
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
static void decorate(gw_child *c, const char *method, json_t *result)
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
static int internal_request(gw_child *c, enum internal kind, const char *method, json_t *params)
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
    internal_request(c, INT_TOOLS, "tools/list", with_meta(c, params));
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
    if (internal_request(c, INT_PROBE, "server/discover", params) != MCP_OK)
        return NULL;
    return c;
}

/* Starts a child when requests wait and the pool may grow. */
static void grow(gw *g)
{
    gw_modern *m = g->modern;
    int max = m->passthrough ? 1 : g->cfg.pool_size;
    if (m->nstarting > 0 || m->no_grow || g->shutting_down || m->npool >= max)
        return;
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
        internal_request(c, INT_LISTEN, "subscriptions/listen", with_meta(c, p));
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

static void listen_end(gw *g, mlisten *l, int graceful);

static void fail_waiting(gw *g, const char *why)
{
    gw_modern *m = g->modern;
    while (m->wait_head != NULL) {
        gw_sess *s = m->wait_head;
        json_t *id = json_incref(json_object_get(s->waiting, "id"));
        uint64_t stream = s->wait_stream;
        unqueue(s);
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, why, NULL);
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
            listen_end(g, m->listens, 1);
        json_object_clear(m->res_subs);
    }
    mcp__gw_modern_pump(g);
}

/* ---- Translated requests and their questions ---- */

/* What a requestState is bound to: the method, the tool, prompt or resource, and the
 * arguments, length-prefixed (as the server core binds its own). */
static char *binding_of(const char *method, const json_t *params, size_t *len)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    if (name == NULL)
        name = json_string_value(json_object_get(params, "uri"));
    char args[65];
    if (mcp__json_digest_hex(json_object_get(params, "arguments"), args) != MCP_OK)
        return NULL;
    mcp__buf b = {0};
    if (mcp__buf_appendf(&b, "gateway|%zu:%s|%zu:%s|%s", strlen(method), method,
                         name ? strlen(name) : 0, name ? name : "", args) != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return mcp__buf_steal(&b);
}

/* Answers the child's open questions of r with an error (the client will not). */
static void drop_questions(gw_req *r, const char *why)
{
    gw_mreq *mr = r->m;
    const char *key;
    json_t *q;
    json_object_foreach(mr->asked, key, q)
    {
        json_t *e = mcp__error_message(json_object_get(q, "id"), MCP_RPC_INTERNAL_ERROR, why, NULL);
        if (r->c->state != CH_GONE && !r->c->closing)
            mcp__gw_to_child(r->c, e);
        json_decref(e);
    }
    json_object_clear(mr->asked);
}

/* r's child asks its client: r is answered with an InputRequiredResult of every open
 * question, and waits in the child for the retry. */
static void ask(gw_req *r)
{
    gw *g = r->c->g;
    gw_mreq *mr = r->m;
    gw_sess *s = r->s;
    uint64_t stream = r->stream;
    json_t *requests = json_object();
    const char *key;
    json_t *q;
    json_object_foreach(mr->asked, key, q)
    {
        json_t *one = json_pack("{s:O}", "method", json_object_get(q, "method"));
        json_t *params = json_object_get(q, "params");
        if (one != NULL && params != NULL)
            json_object_set(one, "params", params);
        json_object_set_new(requests, key, one);
    }
    char plain[64];
    int n = snprintf(plain, sizeof plain, "{\"g\":%" JSON_INTEGER_FORMAT ",\"r\":%u}", r->gid,
                     mr->round + 1);
    char *state = NULL;
    uint64_t expiry = mcp__wall_ms() + (uint64_t)g->cfg.input_timeout_ms;
    int rc = mcp__sealer_seal(&g->modern->sealer, mr->binding, mr->blen, plain, (size_t)n, expiry,
                              &state);
    json_t *result = rc == MCP_OK ? json_pack("{s:s, s:o, s:s}", "resultType", "input_required",
                                              "inputRequests", requests, "requestState", state)
                                  : NULL;
    free(state);
    if (result == NULL) {
        if (rc != MCP_OK)
            json_decref(requests);
        drop_questions(r, "the gateway could not ask the client (out of memory)");
        return;
    }
    decorate(r->c, r->method, result);
    json_t *ans =
        json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", r->client_id, "result", result);
    g->stats.by_method[mcp__gw_method_index(r->method)][MCP_GATEWAY_INPUT_REQUIRED]++;
    mr->round++;
    mr->parked = 1;
    mr->parked_at = uv_now(g->loop);
    /* r leaves the client's request: that one is answered, and its session goes. */
    mcp__gw_req_leave_session(r);
    if (mcp__gw_logs(g, MCP_LOG_INFO)) {
        char m[64];
        mcp__gw_log(g, MCP_LOG_INFO,
                    "event=request session=- method=%s status=input_required round=%u "
                    "duration_ms=%.3f",
                    mcp__gw_log_word(r->method, m, sizeof(m)), mr->round,
                    (double)(uv_hrtime() - r->t0) / 1e6);
    }
    reply(s, stream, ans);
}

/* The child gives up waiting: the question is withdrawn. */
static void withdraw(gw_child *c, const json_t *child_id)
{
    gw_req *r = c->excl;
    if (r == NULL || r->m == NULL)
        return;
    const char *key;
    json_t *q;
    void *tmp;
    json_object_foreach_safe(r->m->asked, tmp, key, q)
    {
        if (json_equal(json_object_get(q, "id"), child_id))
            json_object_del(r->m->asked, key);
    }
}

void mcp__gw_modern_child_request(gw_child *c, json_t *msg)
{
    json_t *cid = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *e = NULL;
    if (strcmp(method, "ping") == 0) {
        e = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", cid, "result");
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    gw_req *r = c->excl;
    const char *cap = strcmp(method, "elicitation/create") == 0       ? "elicitation"
                      : strcmp(method, "sampling/createMessage") == 0 ? "sampling"
                      : strcmp(method, "roots/list") == 0             ? "roots"
                                                                      : NULL;
    char why[160];
    if (cap == NULL) {
        snprintf(why, sizeof why, "Method not found: %.100s", method);
        e = mcp__error_message(cid, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
    } else if (r == NULL || r->m == NULL || r->zombie || c->modern) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "the gateway cannot tell which client this request is for", NULL);
    } else if (!json_is_object(json_object_get(r->m->caps, cap))) {
        /* mrtr.mdx: only what the client declared in this request's _meta. */
        snprintf(why, sizeof why, "the client did not declare the %s capability", cap);
        e = mcp__error_message(cid, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
    } else if (r->m->round >= MAX_ROUNDS) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "too many rounds of questions to the client", NULL);
    } else if (json_object_size(r->m->asked) >= MAX_QUESTIONS) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "too many questions to the client at once", NULL);
    }
    if (e != NULL) {
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    char key[24];
    snprintf(key, sizeof key, "q%u", ++r->m->next_key);
    json_t *q = json_pack("{s:O, s:s}", "id", cid, "method", method);
    json_t *params = json_object_get(msg, "params");
    if (q != NULL && params != NULL)
        json_object_set(q, "params", params);
    json_object_set_new(r->m->asked, key, q);
    if (!r->m->parked)
        ask(r);
}

/* The retry of a request whose questions the client answers: the answers go to the
 * child, and the request goes on there (or is asked again what is still open). 1 when
 * done here; 0 when the requestState names no request any more (it is then served
 * anew); -1 when it is not one the gateway sealed. */
static int retry(gw_sess *s, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    json_t *id = json_object_get(msg, "id");
    json_t *params = json_object_get(msg, "params");
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *token = json_object_get(params, "requestState");
    json_t *responses = json_object_get(params, "inputResponses");
    if (!json_is_string(token) || strlen(json_string_value(token)) != json_string_length(token)) {
        reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: \"requestState\" must be the string the server gave", NULL);
        return 1;
    }
    if (responses != NULL && !json_is_object(responses)) {
        reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: \"inputResponses\" must be an object of answers", NULL);
        return 1;
    }
    size_t blen;
    char *binding = binding_of(method, params, &blen);
    unsigned char *plain = NULL;
    size_t len = 0;
    int rc = binding != NULL ? mcp__sealer_unseal(&g->modern->sealer, json_string_value(token),
                                                  binding, blen, mcp__wall_ms(), &plain, &len)
                             : MCP_ENOMEM;
    free(binding);
    if (rc == MCP_ETIMEDOUT) {
        free(plain);
        reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: \"requestState\" has expired: send the request again "
                    "without it",
                    NULL);
        return 1;
    }
    if (rc != MCP_OK) {
        free(plain);
        return -1; /* not the gateway's: a child's of this revision, or forged */
    }
    json_t *state = mcp__json_parse((const char *)plain, len, 0, NULL);
    free(plain);
    gw_req *r = mcp__gw_gid_lookup(&g->reqs, json_object_get(state, "g"));
    json_int_t round = json_integer_value(json_object_get(state, "r"));
    json_decref(state);
    if (r == NULL || r->m == NULL || !r->m->parked || r->zombie || (json_int_t)r->m->round != round)
        return 0; /* that request is over (its time ran out, its server went) */
    if (json_equal(id, r->client_id)) {
        reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: a retry must have a JSON-RPC id of its own, not the id of "
                    "the request it retries",
                    NULL);
        return 1;
    }
    gw_mreq *mr = r->m;
    mcp__meta meta;
    mcp__meta_read(params, &meta);
    json_decref(mr->caps);
    mr->caps = json_incref((json_t *)meta.caps);
    int level = mcp_log_level_parse(json_string_value(meta.level));
    mr->log_level = level >= 0 ? level : MCP_LOG_EMERGENCY + 1;
    /* r joins this request: the retry's id, stream and session. */
    mr->parked = 0;
    json_decref(r->client_id);
    r->client_id = json_incref(id);
    json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
    json_decref(r->token);
    r->token = json_incref(tok);
    r->stream = stream;
    r->s = s;
    r->sprev = NULL;
    r->snext = s->reqs;
    if (r->snext != NULL)
        r->snext->sprev = r;
    s->reqs = r;
    s->nreqs++;
    mcp__gw_attach(s, r->c);
    if (mr->final != NULL) {
        json_t *fin = mr->final;
        mr->final = NULL;
        json_object_set(fin, "id", id);
        reply(s, stream, json_incref(fin));
        mcp__gw_req_done(r, json_object_get(fin, "error"));
        json_decref(fin);
        return 1;
    }
    const char *key;
    json_t *q;
    void *tmp;
    json_object_foreach_safe(mr->asked, tmp, key, q)
    {
        json_t *answer = json_object_get(responses, key);
        if (!json_is_object(answer))
            continue; /* still open: asked again below */
        json_t *out = json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", json_object_get(q, "id"),
                                "result", answer);
        if (out != NULL)
            mcp__gw_to_child(r->c, out);
        json_decref(out);
        json_object_del(mr->asked, key);
    }
    if (json_object_size(mr->asked) > 0)
        ask(r);
    return 1;
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
    decorate(c, "server/discover", result);
    reply(s, stream, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* ---- Subscriptions served by the gateway (translated children) ---- */

static int wants(const mlisten *l, const char *method, const json_t *params)
{
    if (strcmp(method, "notifications/tools/list_changed") == 0)
        return (l->kinds & L_TOOLS) != 0;
    if (strcmp(method, "notifications/prompts/list_changed") == 0)
        return (l->kinds & L_PROMPTS) != 0;
    if (strcmp(method, "notifications/resources/list_changed") == 0)
        return (l->kinds & L_RESOURCES) != 0;
    if (strcmp(method, "notifications/resources/updated") == 0) {
        const char *uri = json_string_value(json_object_get(params, "uri"));
        return uri != NULL && json_object_get(l->uris, uri) != NULL;
    }
    return 0;
}

static void listen_send(mlisten *l, const char *method, const json_t *params)
{
    json_t *p = json_is_object(params) ? json_deep_copy(params) : json_object();
    json_t *meta = json_object_get(p, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(p, "_meta", meta);
    }
    json_object_set(meta, META_SUBSCRIPTION, l->id);
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", p);
    if (n != NULL)
        mcp__gw_to_client(l->s, l->stream, n, 0);
    json_decref(n);
}

/* Takes l out; graceful: its client gets the completion result (subscriptions.mdx), else
 * nothing more goes to it. */
static void listen_end(gw *g, mlisten *l, int graceful)
{
    gw_modern *m = g->modern;
    for (mlisten **p = &m->listens; *p != NULL; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    m->nlistens--;
    l->s->nlistens--;
    const char *uri;
    json_t *v;
    json_object_foreach(l->uris, uri, v)
    {
        m->uri_bytes -= strlen(uri);
        json_int_t n = json_integer_value(json_object_get(m->res_subs, uri)) - 1;
        if (n > 0) {
            json_object_set_new(m->res_subs, uri, json_integer(n));
            continue;
        }
        json_object_del(m->res_subs, uri);
        if (m->sub_child != NULL && m->sub_child->state == CH_READY)
            internal_request(m->sub_child, INT_SUB, "resources/unsubscribe",
                             json_pack("{s:s}", "uri", uri));
    }
    gw_sess *s = l->s;
    if (graceful) {
        json_t *result = json_pack("{s:s, s:{s:O}}", "resultType", "complete", "_meta",
                                   META_SUBSCRIPTION, l->id);
        reply(s, l->stream,
              json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", l->id, "result", result));
    }
    json_decref(l->id);
    json_decref(l->uris);
    free(l);
    if (s->nreqs == 0 && s->nlistens == 0 && s->io->idle != NULL)
        s->io->idle(s->io_user);
}

static int bad_filter(gw_sess *s, uint64_t stream, const json_t *id, const char *why)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "Invalid params: \"notifications\" %s", why);
    reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS, msg, NULL);
    return -1;
}

/* subscriptions/listen (subscriptions.mdx) for a translated child: the gateway
 * acknowledges what the child's capabilities offer and delivers the children's
 * notifications; resource subscriptions are the gateway's at one child. */
static void listen_open(gw_sess *s, gw_child *c, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    gw_modern *m = g->modern;
    json_t *id = json_object_get(msg, "id");
    json_t *f = json_object_get(json_object_get(msg, "params"), "notifications");
    if (m->nlistens >= MAX_LISTENS) {
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                    "Internal error: too many subscriptions open on this server", NULL);
        return;
    }
    if (f != NULL && !json_is_object(f)) {
        bad_filter(s, stream, id, "must be an object");
        return;
    }
    json_t *caps = json_object_get(c->init_result, "capabilities");
    static const struct {
        const char *key, *cap;
        unsigned kind;
    } kinds[] = {{"toolsListChanged", "tools", L_TOOLS},
                 {"promptsListChanged", "prompts", L_PROMPTS},
                 {"resourcesListChanged", "resources", L_RESOURCES}};
    mlisten *l = calloc(1, sizeof(*l));
    json_t *ack = json_object();
    if (l == NULL || ack == NULL) {
        free(l);
        json_decref(ack);
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(f, kinds[i].key);
        if (v == NULL)
            continue;
        if (!json_is_boolean(v)) {
            free(l);
            json_decref(ack);
            bad_filter(s, stream, id,
                       "fields toolsListChanged, promptsListChanged and "
                       "resourcesListChanged must be booleans");
            return;
        }
        json_t *cap = json_object_get(caps, kinds[i].cap);
        if (json_is_true(v) && json_is_true(json_object_get(cap, "listChanged"))) {
            l->kinds |= kinds[i].kind;
            json_object_set_new(ack, kinds[i].key, json_true());
        }
    }
    json_t *uris = json_object_get(f, "resourceSubscriptions");
    if (uris != NULL) {
        if (!json_is_array(uris) || json_array_size(uris) > MAX_LISTEN_URIS) {
            free(l);
            json_decref(ack);
            bad_filter(s, stream, id,
                       "resourceSubscriptions must be an array of at most 1000 URIs");
            return;
        }
        size_t i;
        json_t *u;
        json_array_foreach(uris, i, u)
        {
            if (!json_is_string(u)) {
                free(l);
                json_decref(ack);
                bad_filter(s, stream, id, "resourceSubscriptions must hold strings");
                return;
            }
        }
        json_t *kept = json_array();
        json_object_set_new(ack, "resourceSubscriptions", kept);
        int can = json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe"));
        if (can && m->sub_child == NULL)
            m->sub_child = c;
        l->uris = json_object();
        json_array_foreach(uris, i, u)
        {
            const char *uri = json_string_value(u);
            size_t len = strlen(uri);
            if (!can || m->sub_child == NULL || json_object_get(l->uris, uri) != NULL ||
                m->uri_bytes + len > MAX_LISTEN_URI_BYTES)
                continue; /* not honoured: left out of the acknowledgment */
            m->uri_bytes += len;
            json_object_set_new(l->uris, uri, json_true());
            json_array_append(kept, u);
            json_int_t n = json_integer_value(json_object_get(m->res_subs, uri));
            json_object_set_new(m->res_subs, uri, json_integer(n + 1));
            if (n == 0)
                internal_request(m->sub_child, INT_SUB, "resources/subscribe",
                                 json_pack("{s:s}", "uri", uri));
        }
    }
    l->s = s;
    l->stream = stream;
    l->id = json_incref(id);
    l->next = m->listens;
    m->listens = l;
    m->nlistens++;
    s->nlistens++;
    json_t *params =
        json_pack("{s:{s:O}, s:o}", "_meta", META_SUBSCRIPTION, id, "notifications", ack);
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                          "notifications/subscriptions/acknowledged", "params", params);
    if (n != NULL)
        mcp__gw_to_client(s, stream, n, 0);
    json_decref(n);
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
    reply_error(s, stream, json_object_get(msg, "id"), MCP_RPC_HEADER_MISMATCH, why, NULL);
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
        int rc = retry(s, msg, stream);
        if (rc > 0)
            return 1;
        if (rc < 0 && !m->passthrough) {
            reply_error(s, stream, json_object_get(msg, "id"), MCP_RPC_INVALID_PARAMS,
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
        reply_error(s, stream, json_object_get(msg, "id"), MCP_RPC_INTERNAL_ERROR,
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
            listen_open(s, c, msg, stream);
        return 1;
    }
    mr->translated = 1;
    mr->caps = json_incref((json_t *)meta.caps);
    mr->asked = json_object();
    if (mrtr)
        mr->binding = binding_of(method, params, &mr->blen);
    json_t *out = translated(msg);
    if (mr->asked == NULL || out == NULL || (mrtr && mr->binding == NULL)) {
        json_decref(out);
        mcp__gw_mreq_free(mr);
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
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
        reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS, bad, NULL);
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
        reply_error(s, stream, id, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
        return;
    }
    if (g->shutting_down) {
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
                    "Internal error: the gateway is stopping", NULL);
        return;
    }
    if (dispatch(s, msg, stream))
        return;
    size_t bytes = json_dumpb(msg, NULL, 0, JSON_COMPACT);
    if (m->nwaiting >= MAX_WAITING || m->waiting_bytes + bytes > MAX_WAITING_BYTES) {
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
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
    if (mr->translated)
        decorate(c, r->method, result);
    if (mr->parked) {
        /* The child answered while its client was away with the questions: the
         * retry gets it. */
        drop_questions(r, "the request has ended");
        json_decref(mr->final);
        mr->final = json_incref(msg);
        if (c->excl == r)
            c->excl = NULL;
        mcp__gw_modern_pump(c->g);
        return 1;
    }
    json_object_set(msg, "id", r->client_id);
    reply(r->s, r->stream, json_incref(msg));
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
    json_t *tag = json_object_get(meta, META_SUBSCRIPTION);
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
        json_object_set(meta, META_SUBSCRIPTION, r->client_id);
        mcp__gw_to_client(r->s, r->stream, msg, 0);
        return 1;
    }
    if (strcmp(method, "notifications/cancelled") == 0) {
        withdraw(c, json_object_get(params, "requestId"));
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
            if (wants(l, method, params))
                listen_send(l, method, params);
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

static void forget(gw_req *r, const char *why);

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
        reply_error(s, stream, id, MCP_RPC_INTERNAL_ERROR,
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
        drop_questions(r, why);
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
        listen_end(g, l, 0);
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
        listen_end(g, l, 1);
        l = g->modern->listens; /* what it did may have ended others */
    }
    for (gw_req *r = s->reqs, *next; r != NULL; r = next) {
        next = r->snext;
        if (r->m == NULL || !r->m->listen)
            continue;
        /* A subscription passed through: ended as its server ends one. */
        json_t *result = json_pack("{s:s, s:{s:O}}", "resultType", "complete", "_meta",
                                   META_SUBSCRIPTION, r->client_id);
        reply(s, r->stream,
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
        listen_end(g, l, 0);
        l = g->modern->listens; /* what it did may have ended others */
    }
}
