/* SPDX-License-Identifier: MIT */
/*
 * Relaying a request to the node that holds its session (--redis), for sessions that only one node
 * can serve: a gateway's, whose child process runs there. The request goes to that node as it came
 * (method, path, headers, body), with Mcp-Cluster-Node naming the node it is meant for, and its
 * response comes back as it is sent: the status and headers at once, the body as it arrives (an SSE
 * stream event by event). A response cut there is cut here, so the client resumes as it would have;
 * a client that leaves here ends the request there.
 *
 * Bounds: relays at once, half the connections the endpoint may hold (each holds
 * a connection to the other node too), 503 past that, and of them GET streams, which
 * stay open, half again (429 past that), so that they never lock out short requests;
 * what the client has not read, as for any stream: past pause_bytes unsent, the other
 * node is not read until the client has taken half of it.
 *
 * A node that cannot be reached, or whose relay has said nothing for a while, is
 * asked after in the cluster: without a heartbeat it is gone, and so is what it held
 * (404 for its session, -32602 for a retry of its request); a stream relayed from it is
 * cut. With one, the client gets 503 and asks again.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/curl_loop.h"
#include "protocol/rpc.h"
#include "transport/cluster/cluster_int.h"

/* How long the other node may take to accept the connection. */
#define RELAY_CONNECT_MS 2000
/* A response of a known length up to this is sent whole, with that length (a 202, a
 * JSON answer); a longer one, or one of unknown length (SSE), as it comes. */
#define RELAY_MAX_WHOLE 65536
/* Response headers kept, at most (more are dropped), and their bytes. */
#define RELAY_MAX_HEADERS 32
#define RELAY_MAX_HEADER_BYTES 16384
/* A relay that has received nothing for this long has its node's heartbeat checked. */
#define RELAY_IDLE_MS 5000
#define RELAY_TICK_MS 1000

typedef struct relay {
    shttp *t;
    struct relay *prev, *next;
    mcp__http_req *req; /* NULL once its client left */
    mcp__curl_req *xfer;
    uint32_t node;    /* where it goes */
    uint64_t serial;  /* names it for the cluster's answers (see node_check) */
    int is_get;       /* a GET: counted in nrelay_gets */
    int checking;     /* its node's heartbeat is being asked after */
    uint64_t last_io; /* loop time it last received something */
    int status;       /* of the response under way, 0 before its status line */
    int begun;        /* its head was sent to the client */
    int whole;        /* its body is gathered in body, and sent with it at the end */
    long long length; /* its Content-Length, -1 when it has none */
    mcp__buf body;
    mcp__curl_body out; /* a POST's body: never sent twice (a relay is a proxy) */
    size_t nhdr;
    size_t hdr_bytes;
    char *hdr[2 * RELAY_MAX_HEADERS + 1]; /* name, value pairs, malloc'd, NULL-ended */
} relay;

/* Headers of one hop (RFC 9110 7.6.1) and framing, which each side makes itself. */
static int hop_header(const char *name, size_t len)
{
    static const char *const hop[] = {"connection", "keep-alive",      "proxy-connection",
                                      "te",         "trailer",         "transfer-encoding",
                                      "upgrade",    "content-length",  "expect",
                                      "date",       "mcp-cluster-node"};
    for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
        if (strlen(hop[i]) == len && strncasecmp(name, hop[i], len) == 0)
            return 1;
    return 0;
}

static void headers_clear(relay *r)
{
    for (size_t i = 0; i < 2 * r->nhdr; i++)
        free(r->hdr[i]);
    r->nhdr = r->hdr_bytes = 0;
    r->hdr[0] = NULL;
}

static void relay_free(relay *r)
{
    shttp *t = r->t;
    MCP__LIST_UNLINK(t->sh->relays, r);
    t->sh->nrelays--;
    t->sh->nrelay_gets -= r->is_get;
    headers_clear(r);
    mcp__buf_free(&r->body);
    mcp__curl_body_free(&r->out);
    free(r);
}

/* The client left: the request there ends with it. */
static void relay_req_closed(void *arg, mcp__http_req *req)
{
    relay *r = arg;
    mcp__http_req_release(req);
    r->req = NULL;
    mcp__curl_cancel(r->xfer);
    relay_free(r);
}

/* Ends the client's side: aborts, answers an error, or ends the stream. */
static void relay_end(relay *r, int ok)
{
    mcp__http_req *req = r->req;
    r->req = NULL;
    if (req != NULL) {
        mcp__http_req_on_close(req, NULL, NULL);
        mcp__http_req_on_drain(req, 0, NULL, NULL);
        if (r->whole && ok && r->length == (long long)r->body.len)
            mcp__http_respond(req, r->status, (const char *const *)r->hdr, r->body.data,
                              r->body.len);
        else if (r->whole)
            mcp__http_req_abort(req); /* cut there before its end */
        else if (r->begun && ok)
            mcp__http_stream_end(req);
        else if (r->begun)
            mcp__http_req_abort(req); /* cut there, cut here: the client resumes */
        else {
            /* Looked up again next time: the node may be gone, and its session with it. */
            const char *id = mcp__http_header(req, "mcp-session-id");
            mcp__shttp_cluster_unpin(r->t, id);
            mcp__shttp_error(r->t, req, 503, MCP_RPC_SERVER_ERROR,
                             id != NULL ? "Service Unavailable: the node that holds this session "
                                          "cannot be reached"
                                        : "Service Unavailable: the node this request continues "
                                          "on cannot be reached");
        }
    }
}

void mcp__shttp_relay_gone(shttp *t, mcp__http_req *req)
{
    const char *id = mcp__http_header(req, "mcp-session-id");
    if (id != NULL) {
        mcp__shttp_cluster_unpin(t, id);
        mcp__shttp_mcp_request_local(t, req); /* not here either: 404 */
    } else
        mcp__shttp_error(t, req, 200, MCP_RPC_INVALID_PARAMS,
                         "Invalid params: the request this \"requestState\" continues ran on a "
                         "node that is gone: send the request again without it");
}

/* ---- Is its node still there? ---- */

typedef struct node_check {
    shttp *t;
    uint64_t serial;
} node_check;

static relay *relay_find(shttp *t, uint64_t serial)
{
    for (relay *r = t->sh->relays; r != NULL; r = r->next)
        if (r->serial == serial)
            return r;
    return NULL;
}

/* The cluster answered about r's node (alive: 1, 0 gone, -1 not known). */
static void node_checked(void *arg, int alive)
{
    node_check k = *(node_check *)arg;
    free(arg);
    relay *r = relay_find(k.t, k.serial);
    if (r == NULL)
        return; /* its client left, or the endpoint stopped */
    r->checking = 0;
    r->last_io = uv_now(k.t->loop);
    if (r->xfer != NULL && alive != 0)
        return; /* still relaying, and its node lives (or cannot be asked): go on */
    if (alive == 0 && r->req != NULL && !r->begun) {
        /* Gone with what it held. */
        mcp__http_req *req = r->req;
        r->req = NULL;
        mcp__http_req_on_close(req, NULL, NULL);
        mcp__http_req_on_drain(req, 0, NULL, NULL);
        mcp__shttp_relay_gone(k.t, req);
    }
    mcp__curl_cancel(r->xfer);
    relay_end(r, 0); /* cut mid-stream: the client resumes; or 503 */
    relay_free(r);
}

/* Asks after r's node; node_checked goes on. */
static void node_check_start(relay *r)
{
    node_check *k = malloc(sizeof(*k));
    if (k == NULL)
        return; /* asked again at the next tick */
    k->t = r->t;
    k->serial = r->serial;
    r->checking = 1;
    mcp__cluster_node_alive(r->t->sh->cluster, r->node, node_checked, k);
}

static void relay_tick(uv_timer_t *timer)
{
    shttp *t = timer->data;
    uint64_t now = uv_now(t->loop);
    for (relay *r = t->sh->relays, *next; r != NULL; r = next) {
        next = r->next; /* node_checked may free r when the cluster answers at once */
        if (r->xfer != NULL && !r->checking && now - r->last_io >= RELAY_IDLE_MS)
            node_check_start(r);
    }
}

static int on_header(void *user, const char *line, size_t len)
{
    relay *r = user;
    r->last_io = uv_now(r->t->loop);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (r->req == NULL || r->begun)
        return r->req == NULL ? -1 : 0; /* trailers: not relayed */
    if (len > 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* A status line: a new response (after an interim 1xx one). */
        const char *sp = memchr(line, ' ', len);
        headers_clear(r);
        r->length = -1;
        r->status = sp != NULL && (size_t)(sp - line) + 4 <= len ? atoi(sp + 1) : 0;
        if (r->status == 404) /* the session is not there (any more) */
            mcp__shttp_cluster_unpin(r->t, mcp__http_header(r->req, "mcp-session-id"));
        return r->status >= 100 && r->status <= 999 ? 0 : -1;
    }
    if (len == 0) {
        if (r->status < 200)
            return 0; /* the end of an interim response: the real one follows */
        r->begun = 1;
        if (r->length >= 0 && r->length <= RELAY_MAX_WHOLE) {
            r->whole = 1;
            return 0;
        }
        return mcp__http_stream_begin(r->req, r->status, (const char *const *)r->hdr) == MCP_OK
                   ? 0
                   : -1;
    }
    const char *colon = memchr(line, ':', len);
    if (colon == NULL || colon == line)
        return 0;
    size_t nlen = (size_t)(colon - line);
    if (nlen == 14 && strncasecmp(line, "content-length", 14) == 0)
        r->length = strtoll(colon + 1, NULL, 10);
    if (hop_header(line, nlen) || r->nhdr >= RELAY_MAX_HEADERS ||
        r->hdr_bytes + len > RELAY_MAX_HEADER_BYTES)
        return 0;
    const char *v = colon + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    char *name = malloc(nlen + 1), *value = malloc((size_t)(end - v) + 1);
    if (name == NULL || value == NULL) {
        free(name);
        free(value);
        return -1;
    }
    memcpy(name, line, nlen);
    name[nlen] = '\0';
    memcpy(value, v, (size_t)(end - v));
    value[end - v] = '\0';
    r->hdr[2 * r->nhdr] = name;
    r->hdr[2 * r->nhdr + 1] = value;
    r->nhdr++;
    r->hdr[2 * r->nhdr] = NULL;
    r->hdr_bytes += len;
    return 0;
}

static void relay_drained(void *arg, mcp__http_req *req)
{
    (void)req;
    relay *r = arg;
    mcp__curl_resume(r->xfer);
}

static int on_data(void *user, const char *data, size_t len)
{
    relay *r = user;
    r->last_io = uv_now(r->t->loop);
    if (r->req == NULL || !r->begun)
        return -1;
    if (r->whole)
        return r->body.len + len <= RELAY_MAX_WHOLE &&
                       mcp__buf_append(&r->body, data, len) == MCP_OK
                   ? 0
                   : -1;
    if (mcp__http_stream_queued(r->req) > r->t->pause_bytes) {
        /* The client is behind: the other node waits until it has read half. */
        mcp__http_req_on_drain(r->req, r->t->pause_bytes / 2, relay_drained, r);
        return 1;
    }
    return mcp__http_stream_write(r->req, data, len) == MCP_OK ? 0 : -1;
}

static void on_done(void *user, CURLcode result, long status)
{
    (void)status;
    relay *r = user;
    r->xfer = NULL;
    if (result != CURLE_OK && r->req != NULL)
        mcp__warn("relay to node %u (session %s): %s", (unsigned)r->node,
                  mcp__http_header(r->req, "mcp-session-id")
                      ? mcp__http_header(r->req, "mcp-session-id")
                      : "-",
                  curl_easy_strerror(result));
    if (result != CURLE_OK && r->req != NULL && !r->begun) {
        /* Not reached: gone (and what it held), or 503 (see node_checked). */
        if (!r->checking)
            node_check_start(r);
        return;
    }
    relay_end(r, result == CURLE_OK);
    relay_free(r);
}

static const mcp__curl_cbs relay_cbs = {on_header, on_data, on_done};

/* Adds "Name: value"; value NULL: none of name (no header curl would add of its own). */
static int add_header(struct curl_slist **h, const char *name, const char *value)
{
    /* curl's spelling of a header with an empty value is "Name;" ("Name:" removes it). */
    char *line = value == NULL ? mcp__asprintf("%s:", name)
                 : value[0]    ? mcp__asprintf("%s: %s", name, value)
                               : mcp__asprintf("%s;", name);
    struct curl_slist *n = line != NULL ? curl_slist_append(*h, line) : NULL;
    free(line);
    if (n == NULL)
        return -1;
    *h = n;
    return 0;
}

/* The request's headers for the other node: the client's but those of one hop, and
 * none that curl would add of its own (Accept, Content-Type) where the client sent
 * none, so the other node judges the request as it came. */
static struct curl_slist *request_headers(mcp__http_req *req, uint32_t node)
{
    struct curl_slist *h = NULL;
    int bad = 0;
    const char *name, *value;
    for (size_t i = 0; mcp__http_header_at(req, i, &name, &value) == MCP_OK; i++)
        if (!hop_header(name, strlen(name)) && strcasecmp(name, "host") != 0)
            bad |= add_header(&h, name, value);
    /* Host as the client gave it: the other node checks it as this one did. */
    const char *host = mcp__http_header(req, "host");
    if (host != NULL)
        bad |= add_header(&h, "Host", host);
    if (mcp__http_header(req, "accept") == NULL)
        bad |= add_header(&h, "Accept", NULL);
    if (mcp__http_header(req, "content-type") == NULL)
        bad |= add_header(&h, "Content-Type", NULL);
    bad |= add_header(&h, "Expect", NULL);
    char n[16];
    snprintf(n, sizeof(n), "%u", (unsigned)node);
    bad |= add_header(&h, "Mcp-Cluster-Node", n);
    if (bad) {
        curl_slist_free_all(h);
        return NULL;
    }
    return h;
}

static void curl_closed(void *user)
{
    shttp *t = user;
    mcp__uv_group_left(&t->handles);
}

static void timer_closed(uv_handle_t *h)
{
    shttp *t = h->data;
    free(h);
    mcp__uv_group_left(&t->handles);
}

void mcp__shttp_relay(shttp *t, mcp__http_req *req, uint32_t node, const char *addr,
                      size_t addr_len)
{
    mcp__http_method m = mcp__http_req_method(req);
    if (m != MCP__HTTP_GET && m != MCP__HTTP_POST && m != MCP__HTTP_DELETE) {
        mcp__shttp_error(t, req, 405, MCP_RPC_SERVER_ERROR, "Method not allowed");
        return;
    }
    if (t->phase != EP_RUNNING && t->phase != EP_DRAINING) {
        mcp__shttp_cluster_unavailable(t, req);
        return;
    }
    size_t max = mcp__http_server_max_connections(t->http) / 2;
    if (t->sh->nrelays >= max) {
        mcp__shttp_error(t, req, 503, MCP_RPC_SERVER_ERROR,
                         "Service Unavailable: too many requests relayed to other nodes");
        return;
    }
    if (m == MCP__HTTP_GET && t->sh->nrelay_gets >= max / 2) {
        mcp__shttp_error(t, req, 429, MCP_RPC_SERVER_ERROR,
                         "Too Many Requests: too many streams relayed to other nodes");
        return;
    }
    if (t->sh->relay_curl == NULL) {
        uv_timer_t *timer = malloc(sizeof(*timer));
        if (timer == NULL || mcp__curlm_new(t->loop, &t->sh->relay_curl) != MCP_OK) {
            free(timer);
            mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
            return;
        }
        uv_timer_init(t->loop, timer);
        timer->data = t;
        uv_timer_start(timer, relay_tick, RELAY_TICK_MS, RELAY_TICK_MS);
        t->sh->relay_timer = timer;
        t->handles.open += 2; /* until curl_closed and timer_closed */
    }
    const char *query = mcp__http_req_query(req);
    char *url = mcp__asprintf("http://%.*s%s%s%s", (int)addr_len, addr, mcp__http_req_path(req),
                              query != NULL && query[0] ? "?" : "", query != NULL ? query : "");
    relay *r = calloc(1, sizeof(*r));
    struct curl_slist *h = request_headers(req, node);
    CURL *e = url != NULL && r != NULL && h != NULL ? mcp__curlm_easy(t->sh->relay_curl) : NULL;
    if (e == NULL) {
        free(url);
        free(r);
        curl_slist_free_all(h);
        mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)RELAY_CONNECT_MS);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* The body as it came, whatever it holds: the other node judges it. */
    curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, 1L);
    if (m == MCP__HTTP_POST) {
        size_t len;
        const char *body = mcp__http_req_body(req, &len);
        if (mcp__curl_body_set(e, &r->out, body, len) != MCP_OK) {
            free(r);
            curl_slist_free_all(h);
            curl_easy_cleanup(e);
            mcp__shttp_error(t, req, 500, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
            return;
        }
    } else if (m == MCP__HTTP_DELETE)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    r->t = t;
    r->req = req;
    r->node = node;
    r->serial = ++t->sh->relay_serial;
    r->is_get = m == MCP__HTTP_GET;
    r->last_io = uv_now(t->loop);
    t->sh->nrelay_gets += r->is_get;
    MCP__LIST_PUSH(t->sh->relays, r);
    t->sh->nrelays++;
    mcp__http_req_on_close(req, relay_req_closed, r);
    if (mcp__curlm_start(t->sh->relay_curl, e, h, &relay_cbs, r, &r->xfer) != MCP_OK) {
        relay_end(r, 0);
        relay_free(r);
    }
}

void mcp__shttp_relay_stop(shttp *t)
{
    while (t->sh->relays != NULL) {
        relay *r = t->sh->relays;
        mcp__curl_cancel(r->xfer);
        relay_end(r, 0);
        relay_free(r);
    }
    if (t->sh->relay_curl != NULL) {
        mcp__curlm_close(t->sh->relay_curl, curl_closed, t);
        t->sh->relay_curl = NULL;
        uv_close((uv_handle_t *)t->sh->relay_timer, timer_closed);
        t->sh->relay_timer = NULL;
    }
}
