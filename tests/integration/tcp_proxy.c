/* SPDX-License-Identifier: MIT */
/*
 * A TCP proxy that breaks SSE streams; see tcp_proxy.h.
 */
#define _GNU_SOURCE
#include "tcp_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "raw_server.h"

/* A stream is cut after one of its first MAX_CUT_EVENT events, and then up to
 * MAX_CUT_EXTRA bytes more (a cut in the middle of the next event, or of its
 * chunk's framing). */
#define MAX_CUT_EVENT 60
#define MAX_CUT_EXTRA 120
#define HEAD_MAX 16384
/* A hold text's longest, and how long a connection to a restarting server is tried. */
#define HOLD_MAX 128
#define CONNECT_MS 10000

/* Where the reader of the server's bytes is. */
enum phase { P_HEAD, P_LENGTH, P_CHUNK_SIZE, P_CHUNK_DATA, P_CHUNK_END, P_TRAILER, P_TO_CLOSE };

typedef struct tp_link {
    tp_proxy *p;
    int client, server;
    pthread_t thread;
    uint64_t rng;
    /* The server's side, read as responses. */
    enum phase phase;
    char head[HEAD_MAX];
    size_t head_len;
    unsigned long long left; /* bytes left of a Content-Length body or of a chunk */
    int line_empty;          /* P_TRAILER: nothing but CR on this line so far */
    int sse;                 /* the body is an event stream */
    char prev;               /* the body's byte before this one */
    int events;              /* events of this stream so far */
    int cut_event;           /* cut after this event (0: never) */
    int cut_extra;           /* ... and this many bytes more */
    int held;                /* the hold point: nothing more goes to the client */
    char tail[HOLD_MAX];     /* the client's last bytes, for a hold text across reads */
    size_t tail_len;
    struct tp_link *next;
} tp_link;

struct tp_proxy {
    rs_listener l;
    int target;
    int cut_percent;
    uint64_t rng;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* the hold point was reached */
    const char *hold;
    tp_stats stats;
    tp_link *links;
};

static void count(tp_proxy *p, long long *field)
{
    pthread_mutex_lock(&p->mu);
    (*field)++;
    pthread_mutex_unlock(&p->mu);
}

/* A complete response head: what its body is. */
static void head_done(tp_link *k)
{
    k->head[k->head_len] = '\0';
    int status = 0;
    sscanf(k->head, "HTTP/1.%*d %d", &status);
    int chunked = 0, sse = 0;
    long long length = -1;
    for (char *line = strstr(k->head, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, "transfer-encoding:", 18) == 0 && strstr(h, "chunked") != NULL)
            chunked = 1;
        else if (strncasecmp(h, "content-length:", 15) == 0)
            length = strtoll(h + 15, NULL, 10);
        else if (strncasecmp(h, "content-type:", 13) == 0 &&
                 strncasecmp(h + 13 + strspn(h + 13, " "), "text/event-stream", 17) == 0)
            sse = 1;
    }
    k->head_len = 0;
    k->sse = sse && status == 200;
    k->events = 0;
    k->prev = '\0';
    k->cut_event = 0;
    if (k->sse) {
        count(k->p, &k->p->stats.streams);
        if ((int)(harness_rand(&k->rng) % 100) < k->p->cut_percent) {
            k->cut_event = 1 + (int)(harness_rand(&k->rng) % MAX_CUT_EVENT);
            k->cut_extra = (int)(harness_rand(&k->rng) % MAX_CUT_EXTRA);
        }
    }
    if (status / 100 == 1 || status == 204 || status == 304)
        k->phase = P_HEAD;
    else if (chunked)
        k->phase = P_CHUNK_SIZE;
    else if (length > 0) {
        k->phase = P_LENGTH;
        k->left = (unsigned long long)length;
    } else if (length == 0)
        k->phase = P_HEAD;
    else
        k->phase = P_TO_CLOSE;
}

/* One byte of an event stream's data: 1 when the stream is to be cut after it. */
static int body_byte(tp_link *k, char ch)
{
    if (!k->sse || k->cut_event == 0)
        return 0;
    if (k->events >= k->cut_event)
        return k->cut_extra-- <= 0;
    if (ch == '\n' && k->prev == '\n')
        k->events++;
    k->prev = ch;
    return k->events >= k->cut_event && k->cut_extra-- <= 0;
}

/*
 * Reads len bytes of the server's side. Returns how many go to the client; *cut
 * is set when the connection is to be cut after them.
 */
static size_t scan(tp_link *k, const char *buf, size_t len, int *cut)
{
    *cut = 1;
    for (size_t i = 0; i < len; i++) {
        char ch = buf[i];
        switch (k->phase) {
        case P_HEAD:
            if (k->head_len < HEAD_MAX - 1)
                k->head[k->head_len++] = ch;
            if (k->head_len >= 4 && memcmp(k->head + k->head_len - 4, "\r\n\r\n", 4) == 0)
                head_done(k);
            break;
        case P_LENGTH:
            if (--k->left == 0)
                k->phase = P_HEAD;
            break;
        case P_CHUNK_SIZE:
            if (ch == '\n') {
                k->phase = k->left == 0 ? P_TRAILER : P_CHUNK_DATA;
                k->line_empty = 1;
            } else if (ch >= '0' && ch <= '9') {
                k->left = k->left * 16 + (unsigned)(ch - '0');
            } else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') {
                k->left = k->left * 16 + (unsigned)((ch | 0x20) - 'a' + 10);
            }
            break;
        case P_CHUNK_DATA:
            if (--k->left == 0)
                k->phase = P_CHUNK_END;
            if (body_byte(k, ch))
                return i + 1;
            break;
        case P_CHUNK_END:
            if (ch == '\n')
                k->phase = P_CHUNK_SIZE;
            break;
        case P_TRAILER:
            if (ch == '\n') {
                if (k->line_empty)
                    k->phase = P_HEAD;
                k->line_empty = 1;
            } else if (ch != '\r') {
                k->line_empty = 0;
            }
            break;
        case P_TO_CLOSE:
            if (body_byte(k, ch))
                return i + 1;
            break;
        }
    }
    *cut = 0;
    return len;
}

static int send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/*
 * Counts the hold text in what the client sends (buf, after the bytes kept in tail).
 * Returns 1 when this connection is the one to hold.
 */
static int watch_hold(tp_link *k, const char *buf, size_t len)
{
    tp_proxy *p = k->p;
    pthread_mutex_lock(&p->mu);
    const char *hold = p->hold;
    pthread_mutex_unlock(&p->mu);
    if (hold == NULL)
        return 0;
    size_t hl = strlen(hold);
    char *all = malloc(k->tail_len + len);
    if (all == NULL)
        return 0;
    memcpy(all, k->tail, k->tail_len);
    memcpy(all + k->tail_len, buf, len);
    size_t n = k->tail_len + len;
    long long found = 0;
    for (char *at = all; (at = memmem(at, n - (size_t)(at - all), hold, hl)) != NULL; at += hl)
        found++;
    k->tail_len = hl - 1 < n ? hl - 1 : n;
    memcpy(k->tail, all + n - k->tail_len, k->tail_len);
    free(all);
    int hold_this = 0;
    pthread_mutex_lock(&p->mu);
    p->stats.matches += found;
    if (found > 0 && p->stats.held == 0)
        hold_this = 1;
    pthread_mutex_unlock(&p->mu);
    return hold_this;
}

static void *link_main(void *arg)
{
    tp_link *k = arg;
    tp_proxy *p = k->p;
    char buf[16384];
    for (;;) {
        struct pollfd fds[3] = {{.fd = k->client, .events = POLLIN},
                                {.fd = k->server, .events = POLLIN},
                                {.fd = p->l.wake[0], .events = POLLIN}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[2].revents != 0)
            break;
        if (fds[0].revents != 0) {
            ssize_t r = read(k->client, buf, sizeof(buf));
            int hold = r > 0 && watch_hold(k, buf, (size_t)r);
            if (r <= 0 || send_all(k->server, buf, (size_t)r) != 0)
                break;
            if (hold) {
                k->held = 1;
                pthread_mutex_lock(&p->mu);
                p->stats.held++;
                pthread_cond_broadcast(&p->cv);
                pthread_mutex_unlock(&p->mu);
            }
        }
        if (fds[1].revents != 0) {
            ssize_t r = read(k->server, buf, sizeof(buf));
            if (r <= 0 && k->held) { /* the server died: so does the client's connection */
                struct linger lg = {.l_onoff = 1, .l_linger = 0};
                setsockopt(k->client, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
            }
            if (r <= 0)
                break;
            if (k->held)
                continue; /* what the server sent after the held request is lost */
            int cut;
            size_t pass = scan(k, buf, (size_t)r, &cut);
            if (send_all(k->client, buf, pass) != 0)
                break;
            if (cut) {
                if (harness_rand(&k->rng) % 2 == 0) {
                    struct linger lg = {.l_onoff = 1, .l_linger = 0};
                    setsockopt(k->client, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
                    count(p, &p->stats.resets);
                } else {
                    count(p, &p->stats.closes);
                }
                break;
            }
        }
    }
    close(k->client);
    close(k->server);
    k->client = k->server = -1;
    return NULL;
}

/* A new connection from a client: one to the server, and a thread for both. */
static void on_accept(void *user, int fd)
{
    tp_proxy *p = user;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)p->target),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1;
    tp_link *k = calloc(1, sizeof(*k));
    /* A server being restarted refuses for a moment: tried again until the deadline. */
    long long deadline = harness_now_ms() + CONNECT_MS;
    int server = -1;
    while (k != NULL) {
        server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (server < 0 || connect(server, (struct sockaddr *)&a, sizeof(a)) == 0)
            break;
        int refused = errno == ECONNREFUSED;
        close(server);
        server = -1;
        if (!refused || harness_left_ms(deadline) == 0)
            break;
        poll(NULL, 0, 10);
    }
    if (server < 0 || k == NULL) {
        if (server >= 0)
            close(server);
        free(k);
        close(fd);
        return;
    }
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    k->p = p;
    k->client = fd;
    k->server = server;
    pthread_mutex_lock(&p->mu);
    k->rng = harness_rand(&p->rng) | 1;
    p->stats.connections++;
    k->next = p->links;
    p->links = k;
    if (pthread_create(&k->thread, NULL, link_main, k) != 0) {
        k->thread = 0;
        close(fd);
        close(server);
        k->client = k->server = -1;
    }
    pthread_mutex_unlock(&p->mu);
}

int tp_start(tp_proxy **out, int target, uint64_t seed, int cut_percent)
{
    *out = NULL;
    tp_proxy *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return -1;
    p->target = target;
    p->cut_percent = cut_percent;
    p->rng = seed | 1;
    pthread_mutex_init(&p->mu, NULL);
    harness_cond_init_monotonic(&p->cv);
    if (rs_listener_start(&p->l, on_accept, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int tp_port(const tp_proxy *p)
{
    return p->l.port;
}

void tp_get_stats(tp_proxy *p, tp_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    pthread_mutex_unlock(&p->mu);
}

void tp_hold(tp_proxy *p, const char *text)
{
    pthread_mutex_lock(&p->mu);
    p->hold = strlen(text) < HOLD_MAX ? text : NULL;
    pthread_mutex_unlock(&p->mu);
}

int tp_wait_held(tp_proxy *p, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    pthread_mutex_lock(&p->mu);
    while (p->stats.held == 0 && harness_cond_wait_until(&p->cv, &p->mu, deadline))
        ;
    int rc = p->stats.held > 0 ? 0 : -1;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void tp_stop(tp_proxy *p)
{
    if (p == NULL)
        return;
    rs_listener_stop(&p->l); /* no more links, and every tp_link's poll wakes up */
    while (p->links != NULL) {
        tp_link *k = p->links;
        p->links = k->next;
        if (k->thread != 0)
            pthread_join(k->thread, NULL);
        free(k);
    }
    rs_listener_close(&p->l);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
