/* SPDX-License-Identifier: MIT */
/*
 * libcurl's multi interface on a libuv loop (see curl_loop.h). The driver keeps
 * a depth count of the curl calls it is inside: there, libcurl refuses to be
 * called again, so starts and cancels wait in lists that `settle` works off as
 * soon as the outermost curl call has returned.
 */
#include <stdlib.h>
#include <string.h>

#include "http/curl_loop.h"
#include "util/util.h"

struct mcp__curl_req {
    mcp__curlm *m;
    CURL *easy;
    struct curl_slist *hdrs;
    mcp__curl_cbs cbs;
    void *user;
    int added;     /* in the multi handle */
    int cancelled; /* no callback runs any more; removed at the next settle */
    int paused;    /* its on_data asked for a pause */
    int unpause;   /* mcp__curl_resume was called: the next settle resumes it */
    mcp__curl_req *prev, *next;
};

/* One watched socket. */
typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    int events; /* what curl waits for: UV_READABLE, UV_WRITABLE */
    mcp__curlm *m;
    struct sock_ctx *prev, *next;
} sock_ctx;

struct mcp__curlm {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    int depth;          /* curl calls we are inside */
    int in_timer;       /* inside the timer's callback (see timer_cb) */
    mcp__curl_req *all; /* every transfer not yet freed */
    sock_ctx *socks;    /* every socket watched */
    size_t active;      /* of those, not ended and not cancelled */
    int handles;        /* uv handles not yet closed: the timer and the polls */
    int closing, cleaned;
    /* Easy handles kept for reuse (curl_easy_reset): an easy handle is several
     * kilobytes that every transfer would otherwise allocate and zero. */
    CURL *spare[8];
    int nspare;
    void (*closed)(void *user);
    void *closed_user;
};

static uv_once_t global_once = UV_ONCE_INIT;
static int global_ok;

static void global_init(void)
{
    global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static void settle(mcp__curlm *m);

static void handle_closed(uv_handle_t *h)
{
    mcp__curlm *m = h->data;
    if (h != (uv_handle_t *)&m->timer)
        free(h); /* a sock_ctx: its poll handle is its first member */
    if (--m->handles == 0) {
        void (*closed)(void *) = m->closed;
        void *user = m->closed_user;
        free(m);
        if (closed != NULL)
            closed(user);
    }
}

static void action(mcp__curlm *m, curl_socket_t fd, int flags)
{
    int running;
    m->depth++;
    curl_multi_socket_action(m->multi, fd, flags, &running);
    m->depth--;
    settle(m);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    sock_ctx *s = (sock_ctx *)p;
    int flags = 0;
    if (status < 0) {
        /* An error on the socket (POLLERR: a reset, say), for which libuv stops the
         * handle and reports no events. What arrived before the error may still be
         * waiting to be read (the last events of a stream before the server reset
         * it): curl is told it can also do what it waits for, so that it reads
         * that and then meets the error itself. With CURL_CSELECT_ERR alone it
         * would fail the transfer at once ("select/poll returned error"). */
        flags = CURL_CSELECT_ERR;
        events = s->events;
    }
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    action(s->m, s->fd, flags);
    /* curl may not have read everything yet: watch again, unless it let go of the
     * socket meanwhile (the handle is then closing). */
    if (status < 0 && !uv_is_closing((uv_handle_t *)p) && s->events != 0)
        uv_poll_start(p, s->events, on_poll);
}

static void on_timer(uv_timer_t *t)
{
    mcp__curlm *m = t->data;
    m->in_timer = 1;
    action(m, CURL_SOCKET_TIMEOUT, 0);
    m->in_timer = 0; /* m is alive: its timer closes only from the loop */
}

static void sock_close(sock_ctx *s)
{
    mcp__curlm *m = s->m;
    MCP__LIST_UNLINK(m->socks, s);
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, handle_closed);
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    mcp__curlm *m = userp;
    sock_ctx *s = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            sock_close(s);
            curl_multi_assign(m->multi, fd, NULL);
        }
        return 0;
    }
    if (s == NULL) {
        s = calloc(1, sizeof(*s));
        if (s == NULL)
            return -1;
        if (uv_poll_init_socket(m->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->fd = fd;
        s->m = m;
        s->poll.data = m;
        MCP__LIST_PUSH(m->socks, s);
        m->handles++;
        curl_multi_assign(m->multi, fd, s);
    }
    int events = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        events |= UV_READABLE;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        events |= UV_WRITABLE;
    s->events = events;
    uv_poll_start(&s->poll, events, on_poll);
    return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    mcp__curlm *m = userp;
    (void)multi;
    /* curl asks for 0 ms while data keeps coming. libuv (1.44) runs a timer that is due
     * again from its own callback in the same pass, before any I/O and before any timer
     * due later than the pass's clock: a flood kept us in that pass, and the requests'
     * timeouts fired seconds late (a 3 s timeout after 10 to 100 s). From inside the
     * timer, 1 ms: the loop turns, and the other timers run, between two of them. */
    if (timeout_ms == 0 && m->in_timer)
        timeout_ms = 1;
    if (timeout_ms < 0)
        uv_timer_stop(&m->timer);
    else
        uv_timer_start(&m->timer, on_timer, (uint64_t)timeout_ms, 0);
    return 0;
}

int mcp__curlm_new(uv_loop_t *loop, mcp__curlm **out)
{
    *out = NULL;
    uv_once(&global_once, global_init);
    if (!global_ok)
        return MCP_EIO;
    mcp__curlm *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return MCP_ENOMEM;
    if ((m->multi = curl_multi_init()) == NULL) {
        free(m);
        return MCP_ENOMEM;
    }
    m->loop = loop;
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
    uv_timer_init(loop, &m->timer);
    m->timer.data = m;
    m->handles = 1;
    *out = m;
    return MCP_OK;
}

static void req_free(mcp__curl_req *r)
{
    mcp__curlm *m = r->m;
    if (r->added)
        curl_multi_remove_handle(m->multi, r->easy);
    MCP__LIST_UNLINK(m->all, r);
    if (!m->closing && m->nspare < (int)(sizeof(m->spare) / sizeof(m->spare[0]))) {
        curl_easy_reset(r->easy);
        m->spare[m->nspare++] = r->easy;
    } else {
        curl_easy_cleanup(r->easy);
    }
    curl_slist_free_all(r->hdrs);
    free(r);
}

CURL *mcp__curlm_easy(mcp__curlm *m)
{
    if (m->nspare > 0)
        return m->spare[--m->nspare];
    return curl_easy_init();
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp__curl_req *r = userp;
    size_t n = size * nmemb;
    if (r->cancelled)
        return n; /* dropped; the transfer goes at the next settle */
    int rc = r->cbs.on_data(r->user, data, n);
    if (rc > 0) {
        r->paused = 1;
        return CURL_WRITEFUNC_PAUSE;
    }
    return rc == 0 ? n : 0;
}

static size_t header_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp__curl_req *r = userp;
    size_t n = size * nmemb;
    if (r->cancelled || r->cbs.on_header == NULL)
        return n;
    return r->cbs.on_header(r->user, data, n) == 0 ? n : 0;
}

/* Adds r to the multi handle; on failure r ends with on_done. */
static void req_add(mcp__curl_req *r)
{
    if (curl_multi_add_handle(r->m->multi, r->easy) == CURLM_OK) {
        r->added = 1;
        return;
    }
    r->cancelled = 1;
    r->m->active--;
    r->cbs.on_done(r->user, CURLE_FAILED_INIT, 0);
}

/*
 * Outside every curl call: frees cancelled transfers, adds the ones started
 * meanwhile, and ends the finished ones, until nothing changes. The depth is
 * held meanwhile, so that what on_done starts, cancels or closes waits for the
 * next pass instead of changing the lists under this one.
 */
static void settle(mcp__curlm *m)
{
    if (m->depth > 0)
        return;
    m->depth++;
    for (int again = 1; again;) {
        again = 0;
        for (mcp__curl_req *r = m->all, *next; r != NULL; r = next) {
            next = r->next;
            if (r->cancelled)
                req_free(r);
            else if (!r->added)
                req_add(r); /* may end it: freed on the next pass */
            else if (r->unpause) {
                /* What curl held back is written now, from inside this call (on_data
                 * may pause it again); the multi handle is woken by its timer. */
                r->unpause = r->paused = 0;
                curl_easy_pause(r->easy, CURLPAUSE_CONT);
            }
        }
        if (m->closing) {
            if (!m->cleaned) {
                m->cleaned = 1;
                while (m->all != NULL)
                    req_free(m->all);
                while (m->nspare > 0)
                    curl_easy_cleanup(m->spare[--m->nspare]);
                curl_multi_cleanup(m->multi); /* may report its sockets to socket_cb */
                while (m->socks != NULL)
                    sock_close(m->socks);
                uv_timer_stop(&m->timer);
                uv_close((uv_handle_t *)&m->timer, handle_closed);
            }
            break;
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m->multi, &left)) != NULL) {
            mcp__curl_req *r = NULL;
            if (msg->msg != CURLMSG_DONE ||
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r) != CURLE_OK ||
                r == NULL || r->cancelled)
                continue;
            long status = 0;
            curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
            r->cancelled = 1; /* ended: no callback after this one; freed next pass */
            m->active--;
            r->cbs.on_done(r->user, msg->data.result, status);
            again = 1;
        }
        again |= m->closing;
    }
    m->depth--;
}

int mcp__curlm_start(mcp__curlm *m, CURL *easy, struct curl_slist *hdrs, const mcp__curl_cbs *cbs,
                     void *user, mcp__curl_req **out)
{
    if (out != NULL)
        *out = NULL;
    mcp__curl_req *r = m->closing ? NULL : calloc(1, sizeof(*r));
    if (r == NULL) {
        curl_easy_cleanup(easy);
        curl_slist_free_all(hdrs);
        return m->closing ? MCP_ECLOSED : MCP_ENOMEM;
    }
    r->m = m;
    r->easy = easy;
    r->hdrs = hdrs;
    r->cbs = *cbs;
    r->user = user;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, r);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, r);
    if (hdrs != NULL)
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, hdrs);
    MCP__LIST_PUSH(m->all, r);
    m->active++;
    if (out != NULL)
        *out = r;
    if (m->depth == 0) {
        if (curl_multi_add_handle(m->multi, easy) != CURLM_OK) {
            m->active--;
            if (out != NULL)
                *out = NULL;
            req_free(r);
            return MCP_EIO;
        }
        r->added = 1;
    }
    return MCP_OK;
}

void mcp__curl_cancel(mcp__curl_req *r)
{
    if (r == NULL || r->cancelled)
        return;
    r->cancelled = 1;
    r->m->active--;
    if (r->m->depth == 0)
        req_free(r);
}

void mcp__curl_resume(mcp__curl_req *r)
{
    if (r == NULL || r->cancelled || !r->paused)
        return;
    r->unpause = 1;
    settle(r->m);
}

size_t mcp__curlm_active(const mcp__curlm *m)
{
    return m->active;
}

void mcp__curlm_close(mcp__curlm *m, void (*closed)(void *user), void *user)
{
    if (m->closing)
        return;
    m->closing = 1;
    m->closed = closed;
    m->closed_user = user;
    for (mcp__curl_req *r = m->all; r != NULL; r = r->next)
        if (!r->cancelled) {
            r->cancelled = 1;
            m->active--;
        }
    settle(m); /* inside a curl call: once it returns */
}

/* ---- POST bodies ---- */

static size_t body_read(char *buf, size_t size, size_t n, void *user)
{
    mcp__curl_body *b = user;
    size_t k = size * n, left = b->len - b->pos;
    if (k > left)
        k = left;
    memcpy(buf, b->data + b->pos, k);
    b->pos += k;
    return k;
}

/* libcurl asks to read the body again: it is about to send the request once more. */
static int body_seek(void *user, curl_off_t offset, int origin)
{
    mcp__curl_body *b = user;
    if (!b->may_rewind || origin != SEEK_SET || offset < 0 || (curl_off_t)b->len < offset)
        return CURL_SEEKFUNC_FAIL;
    b->pos = (size_t)offset;
    return CURL_SEEKFUNC_OK;
}

int mcp__curl_body_set(CURL *easy, mcp__curl_body *b, const char *data, size_t len)
{
    char *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        return MCP_ENOMEM;
    memcpy(copy, data, len);
    free(b->data);
    b->data = copy;
    b->len = len;
    mcp__curl_body_bind(easy, b);
    return MCP_OK;
}

void mcp__curl_body_bind(CURL *easy, mcp__curl_body *b)
{
    b->pos = 0;
    size_t len = b->len;
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, body_read);
    curl_easy_setopt(easy, CURLOPT_READDATA, b);
    curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, body_seek);
    curl_easy_setopt(easy, CURLOPT_SEEKDATA, b);
}

void mcp__curl_body_free(mcp__curl_body *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->pos = 0;
}
