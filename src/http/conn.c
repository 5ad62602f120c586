/* SPDX-License-Identifier: MIT */
/*
 * HTTP connections: accepting, reading and feeding llhttp (its callbacks are
 * in parse.c), the limits and timeouts, keep-alive and pipelining, eviction,
 * and closing.
 *
 * A connection carries at most one request at a time. Parsing stops (the
 * on_message_complete callback pauses llhttp) as soon as a request is
 * complete; the request goes to its owner, and bytes that follow it (a
 * pipelined request) wait in conn->in until the owner finishes the request.
 * Reading goes on meanwhile, so that a client that leaves during a long SSE
 * stream is noticed at once; only when a client pipelines more than a bound
 * does reading pause.
 *
 * One timer per connection counts down to whatever the connection waits for
 * (see conn_phase); the same timer, at 0 ms, moves on to the next request, so
 * that the owner's next on_request never runs from inside the call with which
 * it finished the previous request.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>

#include <linux/sockios.h>

#include "http/http_int.h"
#include "http/tcp_info.h"

/* How long a connection whose final response is sent may keep sending (its
 * bytes are discarded) before it is closed. Reading them instead of closing
 * at once keeps the kernel from answering them with a reset, which could
 * destroy our error response before the client reads it. */
#define LINGER_MS 2000

/* See conn_caught_up(). */
#define WINDOW_STABLE_MS 500

static void on_timer(uv_timer_t *t);
static void conn_next(mcp__http_conn *c);

/* ---- Small helpers ---- */

void mcp__http_conn_timer_set(mcp__http_conn *c, uint64_t ms)
{
    /* A broken connection's close, due at the next loop turn, is never put off. */
    uv_timer_start(&c->timer, on_timer, c->broken ? 0 : ms, 0);
}

static void read_start(mcp__http_conn *c);

/* A header buffer up to this size is kept on its connection for the next request: a
 * request's headers grow it 64, 128 ... bytes at a time, and one of a kilobyte or more
 * (a bearer token's) is, for glibc, a large allocation that consolidates its fast bins
 * each time: 2% of a busy server's time. */
#define SPARE_HDRS_MAX 8192

void mcp__http_req_free(mcp__http_req *req)
{
    if (!req)
        return;
    mcp__http_conn *c = req->conn;
    int keep = c != NULL && !c->closing && c->spare_hdrs.data == NULL && req->hdrs.data != NULL &&
               req->hdrs.cap <= SPARE_HDRS_MAX;
    mcp__mem_released(sizeof *req + req->target.cap + (keep ? 0 : req->hdrs.cap) + req->body.cap);
    if (req->tag_drop != NULL)
        req->tag_drop(req->tag);
    mcp__buf_free(&req->target);
    if (keep) {
        c->spare_hdrs = req->hdrs;
        mcp__buf_reset(&c->spare_hdrs);
    } else {
        mcp__buf_free(&req->hdrs);
    }
    mcp__buf_free(&req->body);
    free(req->hdr);
    free(req);
}

static size_t pipeline_limit(const mcp__http_conn *c)
{
    return MCP__HTTP_READ_BUF + c->srv->opts.max_header_bytes;
}

/* ---- Sources: open connections per peer address ---- */

static size_t source_count(const mcp__http_conn *c)
{
    return c->source != NULL ? c->source->conns : 0;
}

static int source_add(mcp__http_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char addr[48];
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) != 0 ||
        uv_ip_name((const struct sockaddr *)&ss, addr, sizeof addr) != 0)
        return MCP_OK; /* counted nowhere */
    mcp__http_source *src = mcp__map_get(&c->srv->sources, addr);
    if (src == NULL) {
        src = calloc(1, sizeof *src);
        if (src == NULL)
            return MCP_ENOMEM;
        memcpy(src->addr, addr, sizeof addr);
        if (mcp__map_put(&c->srv->sources, src->addr, src) != MCP_OK) {
            free(src);
            return MCP_ENOMEM;
        }
    }
    src->conns++;
    c->source = src;
    return MCP_OK;
}

static void source_forget(mcp__http_conn *c)
{
    mcp__http_source *src = c->source;
    c->source = NULL;
    if (src != NULL && --src->conns == 0) {
        mcp__map_remove(&c->srv->sources, src->addr);
        free(src);
    }
}

/*
 * How much a connection costs others to lose, when connections run short: 0 has
 * no request in hand yet (its headers or body are still coming: slowloris and
 * slow bodies), 1 sits idle between requests with nothing left to send, 2 has
 * answers not yet taken (idle with a backlog, or draining one: a client that
 * pipelines without reading); -1 is busy with a request and never gives way.
 */
static int eviction_tier(const mcp__http_conn *c)
{
    if (c->closing || c->broken)
        return -1;
    switch (c->phase) {
    case PHASE_FIRST:
    case PHASE_HEADERS:
    case PHASE_BODY:
        return 0;
    case PHASE_IDLE:
        return mcp__http_conn_unsent(c) == 0 ? 1 : 2;
    case PHASE_DRAIN:
        return 2;
    default:
        return -1;
    }
}

/*
 * The connections are all taken: the one that costs others least to lose gives
 * its place: the lowest tier, and in it one of the source holding the most
 * connections, the oldest first. So a crowd of slow or idle connections from
 * one place cannot keep anyone else out (slowloris, slow bodies), and a reader
 * still taking its answer is the last to go.
 */
static mcp__http_conn *eviction_victim(mcp__http_server *srv)
{
    mcp__http_conn *victim = NULL;
    int best_tier = 3;
    size_t most = 0;
    for (mcp__http_conn *c = srv->conns; c != NULL; c = c->next) {
        int tier = eviction_tier(c);
        if (tier < 0 || tier > best_tier)
            continue;
        size_t n = source_count(c);
        /* Newest first in the list: ">=" ends on the oldest of the most. */
        if (tier < best_tier || n >= most) {
            victim = c;
            best_tier = tier;
            most = n;
        }
    }
    return victim;
}

/* True when the client has sent bytes the kernel holds and we have not read yet:
 * a request may be arriving on a connection that looks idle. */
int mcp__http_conn_has_input(mcp__http_conn *c)
{
    uv_os_fd_t fd;
    int n = 0;
    if (c->closing || uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        return 0;
    return c->in.len > 0 || (ioctl(fd, FIONREAD, &n) == 0 && n > 0);
}

/* ---- Closing ---- */

static void on_handle_close(uv_handle_t *h)
{
    mcp__http_conn *c = h->data;
    if (--c->open_handles > 0)
        return;
    mcp__http_server *srv = c->srv;
    MCP__LIST_UNLINK(srv->conns, c);
    srv->nconns--;
    srv->nclosing--;
    source_forget(c);
    mcp__mem_released(sizeof *c + c->in.cap + c->out.cap + c->spare_hdrs.cap);
    mcp__buf_free(&c->in);
    mcp__buf_free(&c->spare_hdrs);
    if (c->memo_drop != NULL)
        c->memo_drop(c->memo);
    mcp__http_conn_uncork(c);
    if (c->ssl != NULL)
        mcp__tls_conn_free(c);
    free(c);
    mcp__http_server_maybe_done(srv);
}

/* c's backlog leaves the server's total: it is cut or closing, and what it has
 * queued is dropped with it. */
static void backlog_forget(mcp__http_conn *c)
{
    if (c->backlog_gone)
        return;
    c->backlog_gone = 1;
    c->srv->backlog -= c->backlog;
}

void mcp__http_backlog_shrink(mcp__http_conn *c, size_t bytes)
{
    c->progress_ms = uv_now(c->srv->loop);
    c->backlog -= bytes;
    if (!c->backlog_gone)
        c->srv->backlog -= bytes;
}

/* A connection whose backlog the kernel has taken nothing of for this long is stalled:
 * its reader does not read. */
#define STALLED_MS 1000

/*
 * Past the server-wide budget of queued bytes, the connections furthest behind are
 * cut first, until the total is under seven eighths of the budget (so that the
 * next few writes do not cut again): the stalled ones (their reader took nothing for
 * STALLED_MS) before any that reads, the largest backlog first among each. A client
 * that reads a large answer is thus not cut in place of many that read nothing. Each
 * closes at the next loop turn, as after a failed write, never from inside the write
 * that found the total too large: its owner may be walking its streams (a broadcast's
 * fan-out).
 */
void mcp__http_backlog_grow(mcp__http_conn *c, size_t bytes)
{
    mcp__http_server *srv = c->srv;
    if (c->backlog == 0)
        c->progress_ms = uv_now(srv->loop);
    c->backlog += bytes;
    if (c->backlog_gone)
        return;
    srv->backlog += bytes;
    if (srv->backlog <= srv->opts.max_queued_total)
        return;
    size_t before = srv->backlog, target = srv->opts.max_queued_total / 8 * 7, cut = 0;
    uint64_t now = uv_now(srv->loop);
    while (srv->backlog > target) {
        mcp__http_conn *victim = NULL;
        int victim_stalled = 0;
        for (mcp__http_conn *p = srv->conns; p != NULL; p = p->next) {
            if (p->backlog_gone)
                continue;
            if (p->closing || p->broken) {
                backlog_forget(p); /* closing at the next loop turn already */
                continue;
            }
            int stalled = now - p->progress_ms >= STALLED_MS;
            if (p->backlog > 0 && (victim == NULL || stalled > victim_stalled ||
                                   (stalled == victim_stalled && p->backlog > victim->backlog))) {
                victim = p;
                victim_stalled = stalled;
            }
        }
        if (victim == NULL)
            break;
        backlog_forget(victim);
        victim->reset = 1;
        mcp__http_conn_break(victim);
        cut++;
    }
    if (cut > 0)
        mcp__warn("http: %zu bytes queued on all connections, past the budget of %zu: cut the "
                  "%zu furthest behind",
                  before, srv->opts.max_queued_total, cut);
}

void mcp__http_req_limit_sndbuf(mcp__http_req *req, int bytes)
{
    mcp__http_conn *c = req->conn;
    uv_os_fd_t fd;
    if (c == NULL || c->closing || uv_fileno((const uv_handle_t *)&c->tcp, &fd) != 0)
        return;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

void mcp__http_conn_close(mcp__http_conn *c)
{
    if (c->closing)
        return;
    backlog_forget(c);
    /* A close drops what was not sent, as an abort must. */
    mcp__http_conn_uncork(c);
    uv_os_fd_t fd;
    if (c->reset && uv_fileno((const uv_handle_t *)&c->tcp, &fd) == 0) {
        /* A reset, not a FIN behind what the kernel still holds: a client that does
         * not read would keep that in the kernel's memory for minutes. */
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    c->closing = 1;
    c->srv->nclosing++;
    if (c->ssl != NULL)
        mcp__tls_conn_closed(c);
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, on_handle_close);
    uv_close((uv_handle_t *)&c->tcp, on_handle_close);
    mcp__buf_free(&c->in);

    /* The request is detached before its owner hears of it, so that whatever
     * the owner does from on_close (finish it, stop the server) finds a
     * request without a connection. */
    mcp__http_req *req = c->req;
    c->req = NULL;
    if (!req)
        return;
    req->conn = NULL;
    if (req->state == REQ_RECEIVING) {
        mcp__http_req_free(req);
        return;
    }
    mcp__http_close_fn cb = req->on_close;
    req->on_close = NULL;
    if (cb)
        cb(req->on_close_arg, req);
}

/* A write failed where the owner may be on the stack (inside respond or
 * stream_write): close at the next loop turn instead, so on_close never runs
 * from inside a call on the same request. */
void mcp__http_conn_break(mcp__http_conn *c)
{
    if (c->closing || c->broken)
        return;
    c->broken = 1;
    mcp__http_conn_timer_set(c, 0);
}

static void on_shutdown(uv_shutdown_t *sr, int status)
{
    mcp__http_conn *c = sr->handle->data;
    if (c->closing)
        return;
    if (status < 0) {
        mcp__http_conn_close(c);
        return;
    }
    /* Everything is sent: the client has a short while to close its side. */
    unsigned ms = c->srv->opts.header_timeout_ms;
    mcp__http_conn_timer_set(c, ms < LINGER_MS ? ms : LINGER_MS);
}

/* After the final response: shut the write side once the queued bytes are out
 * (uv_shutdown waits for them), and discard input until the client closes or
 * the linger time is over. */
void mcp__http_conn_linger(mcp__http_conn *c)
{
    if (c->closing || c->phase == PHASE_LINGER)
        return;
    c->phase = PHASE_LINGER;
    c->no_more = 1;
    mcp__buf_free(&c->in);
    /* Until the response is out, the client gets as long as an idle one to
     * take it (a large final response to a slow reader must not be cut);
     * on_shutdown then starts the short linger. */
    mcp__http_conn_timer_set(c, c->srv->opts.idle_timeout_ms);
    if (!c->reading)
        read_start(c);
    if (c->closing)
        return;
    /* The final response must be out before the write side is shut. */
    mcp__http_conn_flush(c);
    if (c->ssl != NULL && !c->closing)
        mcp__tls_conn_shutdown(c);
    if (c->closing)
        return;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        mcp__http_conn_close(c);
}

void mcp__http_req_finish(mcp__http_req *req, int close_after)
{
    mcp__http_conn *c = req->conn;
    int keep = req->keep_alive;
    mcp__http_req_free(req);
    if (!c)
        return;
    c->req = NULL;
    if (c->closing)
        return;
    if (c->broken) {
        mcp__http_conn_close(c);
        return;
    }
    if (close_after || !keep || c->no_more || c->srv->stopping || c->srv->quiescing) {
        mcp__http_conn_linger(c);
        return;
    }
    c->phase = PHASE_NEXT;
    mcp__http_conn_timer_set(c, 0);
}

void mcp__http_req_abort(mcp__http_req *req)
{
    if (!req)
        return;
    mcp__http_conn *c = req->conn;
    if (c) {
        c->req = NULL;
        req->conn = NULL;
    }
    mcp__http_req_free(req);
    if (c)
        mcp__http_conn_close(c);
}

void mcp__http_req_release(mcp__http_req *req)
{
    mcp__http_req_abort(req);
}

/* ---- Feeding the parser ---- */

static int status_of_parse_error(llhttp_errno_t e)
{
    switch (e) {
    case HPE_INVALID_TRANSFER_ENCODING:
        return 501;
    case HPE_INVALID_VERSION:
        return 505;
    default:
        return 400;
    }
}

static void conn_dispatch(mcp__http_conn *c)
{
    mcp__http_req *req = c->req;
    c->msg_done = 0;
    c->phase = PHASE_BUSY;
    uv_timer_stop(&c->timer);
    req->state = REQ_OWNED;
    if (req->body.data == NULL)
        (void)mcp__buf_append(&req->body, "", 0);
    if (c->no_more)
        req->keep_alive = 0;
    c->srv->opts.on_request(c->srv->opts.user, req);
}

/* Parses data, which is either conn->in itself (from_in) or fresh bytes from
 * the socket; what follows a complete request is kept in conn->in. */
static void conn_feed(mcp__http_conn *c, const char *data, size_t len, int from_in)
{
    llhttp_errno_t e = llhttp_execute(&c->parser, data, len);
    if (c->closing)
        return;
    size_t used = len;
    if (e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) {
        used = (size_t)(llhttp_get_error_pos(&c->parser) - data);
        if (used > len)
            used = len;
        if (e == HPE_PAUSED)
            llhttp_resume(&c->parser);
        else
            c->no_more = 1; /* we do not speak the upgraded protocol */
    } else if (e != HPE_OK) {
        int status = c->err_status ? c->err_status : status_of_parse_error(e);
        mcp__http_conn_fail(c, status);
        return;
    }
    if (c->no_more) {
        mcp__buf_free(&c->in);
    } else if (from_in) {
        mcp__buf_consume(&c->in, used);
    } else if (used < len && mcp__buf_append(&c->in, data + used, len - used) != MCP_OK) {
        mcp__http_conn_close(c);
        return;
    }
    if (c->msg_done && c->req)
        conn_dispatch(c);
}

size_t mcp__http_conn_unsent(const mcp__http_conn *c)
{
    return c->out.len + uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

/* The previous request is finished: wait for the next, or parse it if it is
 * already buffered. A client that pipelines requests without reading the
 * answers must not make us hold them without bound: past max_unsent_bytes,
 * the next request waits until the socket has taken the backlog. */
static void conn_next(mcp__http_conn *c)
{
    if (mcp__http_conn_unsent(c) > c->srv->opts.max_unsent_bytes) {
        c->phase = PHASE_DRAIN;
        mcp__http_conn_timer_set(c, c->srv->opts.idle_timeout_ms);
        return;
    }
    if (c->srv->quiescing && c->in.len == 0) {
        mcp__http_conn_linger(c);
        return;
    }
    c->phase = PHASE_IDLE;
    mcp__http_conn_timer_set(c, c->srv->opts.idle_timeout_ms);
    if (!c->reading)
        read_start(c);
    if (!c->closing && c->in.len > 0)
        conn_feed(c, c->in.data, c->in.len, 1);
}

/* ---- libuv callbacks ---- */

static void on_timer(uv_timer_t *t)
{
    mcp__http_conn *c = t->data;
    if (c->closing)
        return;
    if (c->broken) {
        mcp__http_conn_close(c);
        return;
    }
    switch (c->phase) {
    case PHASE_FIRST:
    case PHASE_IDLE:
    case PHASE_LINGER:
        mcp__http_conn_close(c);
        break;
    case PHASE_HEADERS:
    case PHASE_BODY:
        mcp__http_conn_fail(c, 408);
        break;
    case PHASE_NEXT:
        conn_next(c);
        break;
    case PHASE_DRAIN:
        /* The client took nothing for a whole idle period. */
        mcp__http_conn_close(c);
        break;
    case PHASE_BUSY:
        /* mcp__http_req_on_drain() found the connection drained already. */
        mcp__http_conn_wrote(c);
        break;
    }
}

/* Bytes the kernel holds for c that the peer has not acknowledged yet. */
/* Bytes the kernel holds for c that the peer has not acknowledged yet; SIZE_MAX
 * when that cannot be known, or when the connection was reset or is closing: the
 * kernel then drops what it held, and what it had sent may never have been read. */
static size_t conn_unacked(mcp__http_conn *c)
{
    uv_os_fd_t fd;
    int n = 0;
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (c->closing || c->broken || uv_fileno((const uv_handle_t *)&c->tcp, &fd) != 0 ||
        getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        (ti.tcpi_state != TCP_ESTABLISHED && ti.tcpi_state != TCP_CLOSE_WAIT) ||
        ioctl(fd, SIOCOUTQ, &n) != 0 || n < 0)
        return SIZE_MAX;
    return (size_t)n;
}

const char *mcp__http_req_source(const mcp__http_req *req)
{
    mcp__http_conn *c = req->conn;
    return c != NULL && c->source != NULL ? c->source->addr : "";
}

/* The client's receive window now (UINT32_MAX when unknown); keeps the largest seen. */
static uint32_t peer_window(mcp__http_conn *c)
{
    uv_os_fd_t fd;
    uint32_t w;
    if (uv_fileno((const uv_handle_t *)&c->tcp, &fd) != 0 || mcp__tcp_peer_window(fd, &w) != 0)
        return UINT32_MAX;
    if (w > c->max_peer_window)
        c->max_peer_window = w;
    return w;
}

/*
 * Everything acknowledged, and the client's window open again: as large as it
 * has been (less an eighth), or, where it never gets there (a buffer the client
 * shrank), unchanged for half a second: the client is not reading any further
 * into what its kernel holds.
 */
static int conn_caught_up(mcp__http_conn *c)
{
    if (mcp__http_conn_unsent(c) > 0 || conn_unacked(c) > 0) {
        c->window_since = 0;
        return 0;
    }
    uint32_t w = peer_window(c);
    if (w == UINT32_MAX || w >= c->max_peer_window - c->max_peer_window / 8)
        return 1;
    uint64_t now = uv_now(c->srv->loop);
    if (c->window_since == 0 || w != c->last_window) {
        c->last_window = w;
        c->window_since = now;
        return 0;
    }
    return now - c->window_since >= WINDOW_STABLE_MS;
}

void mcp__http_req_set_probe(mcp__http_req *req, const char *bytes, size_t len)
{
    req->probe = bytes;
    req->probe_len = len;
}

int mcp__http_req_caught_up(mcp__http_req *req)
{
    return req->conn != NULL && conn_caught_up(req->conn);
}

size_t mcp__http_req_unacked(const mcp__http_req *req)
{
    return req->conn != NULL ? conn_unacked(req->conn) : SIZE_MAX;
}

uint64_t mcp__http_req_acked(const mcp__http_req *req)
{
    mcp__http_conn *c = req->conn;
    if (c == NULL)
        return 0;
    size_t unacked = conn_unacked(c);
    return c->to_kernel > unacked ? c->to_kernel - unacked : 0;
}

void mcp__http_conn_wrote(mcp__http_conn *c)
{
    if (c->closing)
        return;
    size_t queued = uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
    if (c->phase == PHASE_DRAIN) {
        if (queued <= c->srv->opts.max_unsent_bytes / 2) {
            /* From a timer, so that the next request's owner is never called from
             * inside a write callback. */
            c->phase = PHASE_NEXT;
            mcp__http_conn_timer_set(c, 0);
        } else {
            mcp__http_conn_timer_set(c,
                                     c->srv->opts.idle_timeout_ms); /* it is reading: more time */
        }
        return;
    }
    mcp__http_req *req = c->req;
    if (req != NULL && req->on_drain != NULL && queued <= req->drain_below) {
        if (req->drain_below == 0 && !conn_caught_up(c)) {
            /* All acknowledged, the window not seen open again: the probe brings the
             * client's word on it (once a wait; it comes back here when written). */
            if (req->probe != NULL && !c->probed && queued == 0 && mcp__http_conn_unsent(c) == 0 &&
                conn_unacked(c) == 0) {
                c->probed = 1;
                mcp__http_stream_write(req, req->probe, req->probe_len);
            }
            c->ack_poll_ms = c->ack_poll_ms == 0     ? 1
                             : c->ack_poll_ms >= 512 ? 1000
                                                     : c->ack_poll_ms * 2;
            mcp__http_conn_timer_set(c, c->ack_poll_ms);
            return;
        }
        c->ack_poll_ms = 0;
        c->probed = 0;
        mcp__http_close_fn cb = req->on_drain;
        req->on_drain = NULL;
        cb(req->on_drain_arg, req);
    }
}

void mcp__http_req_on_drain(mcp__http_req *req, size_t below, mcp__http_close_fn cb, void *arg)
{
    req->on_drain = cb;
    req->on_drain_arg = arg;
    req->drain_below = below;
    mcp__http_conn *c = req->conn;
    if (c != NULL) {
        /* A new wait (or none): its polls start again, and it may probe. */
        c->ack_poll_ms = 0;
        c->probed = 0;
    }
    if (cb != NULL && c != NULL && !c->closing && c->phase == PHASE_BUSY &&
        uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp) <= below)
        mcp__http_conn_timer_set(c, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    mcp__http_conn *c = h->data;
    /* One buffer for the whole server: libuv hands every read to on_read
     * before it allocates for the next, and on_read never keeps it. */
    *buf = uv_buf_init(c->srv->rbuf, sizeof c->srv->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    mcp__http_conn *c = s->data;
    if (c->closing)
        return;
    if (nread < 0) {
        /* EOF or an error: the client is gone (see mcp__http_req_on_close on
         * half-closing clients). */
        mcp__http_conn_close(c);
        return;
    }
    if (nread == 0)
        return;
    if (c->ssl != NULL)
        mcp__tls_conn_input(c, buf->base, (size_t)nread);
    else
        mcp__http_conn_input(c, buf->base, (size_t)nread);
}

void mcp__http_conn_input(mcp__http_conn *c, const char *data, size_t len)
{
    if (c->phase == PHASE_LINGER)
        return;
    if (c->phase == PHASE_BUSY || c->phase == PHASE_NEXT || c->phase == PHASE_DRAIN ||
        c->in.len > 0) {
        if (mcp__buf_append(&c->in, data, len) != MCP_OK) {
            mcp__http_conn_close(c);
            return;
        }
        if (c->in.len > pipeline_limit(c) && c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = 0;
        }
        return;
    }
    conn_feed(c, data, len, 0);
}

static void read_start(mcp__http_conn *c)
{
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        mcp__http_conn_close(c);
        return;
    }
    c->reading = 1;
}

/* ---- Accepting ---- */

/* Past max_connections: a short 503 if the socket takes it, then close. */
static const char refuse_msg[] = "HTTP/1.1 503 Service Unavailable\r\n"
                                 "Content-Length: 0\r\nConnection: close\r\n\r\n";

static void on_refused_close(uv_handle_t *h)
{
    mcp__http_server *srv = h->data;
    free(h);
    srv->nrefused--;
    mcp__http_server_maybe_done(srv);
}

static void refuse(mcp__http_server *srv, uv_stream_t *listener)
{
    uv_tcp_t *t = malloc(sizeof *t);
    if (!t || uv_tcp_init(srv->loop, t) != 0) {
        free(t);
        return;
    }
    t->data = srv;
    srv->nrefused++;
    /* A TLS client would take plaintext for a broken record: it only sees the close. */
    if (uv_accept(listener, (uv_stream_t *)t) == 0 && srv->tls == NULL) {
        uv_buf_t b = uv_buf_init((char *)refuse_msg, sizeof refuse_msg - 1);
        (void)uv_try_write((uv_stream_t *)t, &b, 1);
    }
    uv_close((uv_handle_t *)t, on_refused_close);
}

void mcp__http_on_connection(uv_stream_t *listener, int status)
{
    mcp__http_server *srv = listener->data;
    if (srv->stopping)
        return;
    if (status < 0) {
        mcp__warn("http: accept: %s", uv_strerror(status));
        return;
    }
    /* libuv accepts for as long as connections come: a client that reconnects as fast
     * as it is closed (a slowloris, when the table is full) would keep the loop here,
     * and every other connection's bytes would wait for it. */
    uint64_t now = uv_now(srv->loop);
    if (srv->accept_turn != now) {
        srv->accept_turn = now;
        srv->accepted = 0;
    }
    if (srv->accepted >= MCP__HTTP_ACCEPTS_PER_TURN) {
        srv->accept_held = 1;
        uv_check_start(&srv->accept_later, mcp__http_accept_later);
        return;
    }
    srv->accepted++;
    if (srv->nconns - srv->nclosing >= srv->opts.max_connections) {
        mcp__http_conn *victim = eviction_victim(srv);
        if (victim == NULL) {
            refuse(srv, listener);
            return;
        }
        mcp__debug("http: connections full: closing one of %s to make room",
                   victim->source != NULL ? victim->source->addr : "an unknown source");
        mcp__http_conn_close(victim);
    }
    mcp__http_conn *c = calloc(1, sizeof *c);
    if (!c) {
        refuse(srv, listener);
        return;
    }
    if (uv_tcp_init(srv->loop, &c->tcp) != 0) {
        free(c);
        refuse(srv, listener);
        return;
    }
    c->srv = srv;
    c->tcp.data = c;
    c->timer.data = c;
    MCP__LIST_PUSH(srv->conns, c);
    srv->nconns++;
    c->open_handles = 1;
    uv_timer_init(srv->loop, &c->timer); /* cannot fail on Unix */
    c->open_handles = 2;
    llhttp_init(&c->parser, HTTP_REQUEST, &srv->settings);
    c->parser.data = c;
    c->phase = PHASE_FIRST;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        mcp__http_conn_close(c);
        return;
    }
    (void)uv_tcp_nodelay(&c->tcp, 1);
    if (source_add(c) != MCP_OK) {
        mcp__http_conn_close(c);
        return;
    }
    if (srv->opts.max_connections_per_source > 0 &&
        source_count(c) > srv->opts.max_connections_per_source) {
        uv_buf_t b = uv_buf_init((char *)refuse_msg, sizeof refuse_msg - 1);
        if (srv->tls == NULL)
            (void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
        mcp__http_conn_close(c);
        return;
    }
    if (srv->tls != NULL && mcp__tls_conn_start(c) != MCP_OK) {
        mcp__http_conn_close(c);
        return;
    }
    /* The handshake's deadline first, if any; the header deadline starts after it. */
    mcp__http_conn_timer_set(c, c->ssl != NULL ? srv->opts.tls_handshake_timeout_ms
                                               : srv->opts.header_timeout_ms);
    read_start(c);
}

void mcp__http_accept_later(uv_check_t *h)
{
    mcp__http_server *srv = h->data;
    uv_check_stop(h);
    srv->accepted = 0;
    if (!srv->accept_held || srv->listener_closing)
        return;
    srv->accept_held = 0;
    /* Taking it (uv_accept) has libuv watch the listener again. */
    mcp__http_on_connection((uv_stream_t *)&srv->listener, 0);
}

/* ---- The Date header (RFC 9110 §6.6.1), cached per second ---- */

const char *mcp__http_date(mcp__http_server *srv)
{
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t now = time(NULL);
    if (now != srv->date_time || !srv->date[0]) {
        struct tm tm;
        if (!gmtime_r(&now, &tm))
            return srv->date;
        /* Not strftime: its names follow the host program's locale. */
        snprintf(srv->date, sizeof srv->date, "%s, %02d %s %04d %02d:%02d:%02d GMT",
                 days[tm.tm_wday % 7], tm.tm_mday, months[tm.tm_mon % 12], tm.tm_year + 1900,
                 tm.tm_hour, tm.tm_min, tm.tm_sec);
        srv->date_time = now;
    }
    return srv->date;
}
