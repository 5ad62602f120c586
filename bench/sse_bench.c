/* SPDX-License-Identifier: MIT */
/*
 * sse_bench: a C reader of SSE streams for the notification and resume rows of
 * bench/run, so that the server is what is measured (a Node reader parsing 10,000
 * events costs more than the server sending them). Revision 2025-11-25, one session:
 * initialize and notifications/initialized first, then
 *
 *   sse_bench notify URL COUNT RUNS
 *       RUNS tools/call notify {count: COUNT} in sequence (after three to warm up),
 *       each read to the last byte of its result: every notifications/message counted
 *       and the call's own result found. Prints
 *       BENCH count=C runs=R median_ms=M notes_per_s=N
 *
 *   sse_bench resume URL COUNT RUNS PID [STATS_URL|-] [TOOL]
 *       one tools/call notify {count: COUNT} read in full (its events stored), then RUNS
 *       times a GET with Last-Event-ID = that stream's first (priming) event id, timed
 *       from the first byte of the request to the last byte of the replay (every
 *       notification, then the result; a stream that stays open after it is not waited
 *       for). PID is the server's, for its RSS before and after the events were stored
 *       (with STATS_URL, a peer's GET STATS_URL?gc collects its garbage before each
 *       reading; "-": none). TOOL is notify (the default) or poll_notify, mcp-everything's
 *       tool that sends the same notifications/message up to 100,000 in one call (its
 *       notify stops at 10,000), called with {count: COUNT, delay_ms: 0, close_after: 0}.
 *       Prints
 *       BENCH count=C runs=R store_ms=S replay_median_ms=M replay_min_ms=m
 *             rss_delta=D bytes_per_event=B
 *
 * Every answer is checked (status 200, all COUNT notifications, the result); anything
 * else exits 1 with a message (for a stream that ran out of time, how many notifications
 * it had carried). Every read has a deadline: 60 s, or SSE_BENCH_DEADLINE_MS from the
 * environment. Plain HTTP/1.1 over
 * IPv4 (what bench/run starts), a connection per request, bodies chunked or with a
 * Content-Length.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 60000 /* SSE_BENCH_DEADLINE_MS overrides it */
#define PROTO "2025-11-25"

static struct sockaddr_in server;
static char host[64], path[256], session[128];
static const char *notify_tool = "notify"; /* resume's TOOL */
static long deadline_ms = DEADLINE_MS;
static const char *req_path; /* of the next request: path, or the stats URL's */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "sse_bench: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

/* ---- One response, read as it comes ---- */

typedef struct resp {
    int fd;
    uint64_t deadline;
    char buf[65536];
    size_t len, off; /* unread bytes: buf[off, len) */
    int status;
    int chunked;
    long long left; /* of the body (Content-Length) or of the current chunk */
    int body_done;
    char sid[128];
    /* SSE lines, split across reads */
    char line[1 << 16];
    size_t line_len;
    /* What the stream told */
    long notes;
    int result;
    long want_id;
    long want_notes; /* with the result: all that is awaited (the stream may stay open) */
    char first_id[160];
} resp;

static size_t fill(resp *r)
{
    if (r->off == r->len)
        r->off = r->len = 0;
    if (r->len == sizeof r->buf) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    for (;;) {
        uint64_t now = now_us() / 1000;
        if (now >= r->deadline) {
            fprintf(stderr,
                    "sse_bench: %s: no answer within the deadline (%ld ms): status %d, %ld "
                    "notifications, result %d so far\n",
                    path, deadline_ms, r->status, r->notes, r->result);
            exit(1);
        }
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        int n = poll(&p, 1, (int)(r->deadline - now));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        ssize_t got = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        r->len += (size_t)got;
        return (size_t)got;
    }
}

static void sse_line(resp *r, const char *s, size_t n)
{
    if (n >= 3 && memcmp(s, "id:", 3) == 0) {
        if (r->first_id[0] == '\0') {
            size_t k = n - 3;
            const char *v = s + 3;
            if (k > 0 && *v == ' ')
                v++, k--;
            if (k >= sizeof r->first_id)
                k = sizeof r->first_id - 1;
            memcpy(r->first_id, v, k);
            r->first_id[k] = '\0';
        }
    } else if (n >= 5 && memcmp(s, "data:", 5) == 0) {
        char marker[32];
        int m = snprintf(marker, sizeof marker, "\"id\":%ld", r->want_id);
        if (memmem(s, n, "notifications/message", 21) != NULL)
            r->notes++;
        else if (memmem(s, n, marker, (size_t)m) != NULL && memmem(s, n, "\"result\"", 8) != NULL)
            r->result = 1;
    }
}

/* Body bytes, as SSE (or a JSON body, taken as one data line). */
static void body_bytes(resp *r, const char *p, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t k = nl != NULL ? (size_t)(nl - p) : n;
        if (r->line_len + k >= sizeof r->line)
            fail("%s: an SSE line longer than 64 KiB", path);
        if (r->line_len == 0 && nl != NULL) {
            sse_line(r, p, k > 0 && p[k - 1] == '\r' ? k - 1 : k);
        } else {
            memcpy(r->line + r->line_len, p, k);
            r->line_len += k;
            if (nl != NULL) {
                size_t m = r->line_len;
                if (m > 0 && r->line[m - 1] == '\r')
                    m--;
                sse_line(r, r->line, m);
                r->line_len = 0;
            }
        }
        if (nl == NULL)
            return;
        p += k + 1;
        n -= k + 1;
    }
}

/* Reads the status line and headers. */
static void read_head(resp *r)
{
    for (;;) {
        char *end = memmem(r->buf + r->off, r->len - r->off, "\r\n\r\n", 4);
        if (end != NULL) {
            *end = '\0';
            char *h = r->buf + r->off;
            if (sscanf(h, "HTTP/1.1 %d", &r->status) != 1)
                fail("%s: not an HTTP/1.1 answer", path);
            r->left = -1;
            for (char *line = strstr(h, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
                char *l = line + 2;
                if (strncasecmp(l, "Transfer-Encoding: chunked", 26) == 0)
                    r->chunked = 1;
                else if (strncasecmp(l, "Content-Length:", 15) == 0)
                    r->left = atoll(l + 15);
                else if (strncasecmp(l, "Mcp-Session-Id:", 15) == 0) {
                    const char *v = l + 15;
                    while (*v == ' ')
                        v++;
                    size_t k = strcspn(v, "\r");
                    if (k >= sizeof r->sid)
                        k = sizeof r->sid - 1;
                    memcpy(r->sid, v, k);
                    r->sid[k] = '\0';
                }
            }
            if (r->chunked)
                r->left = 0;
            r->off = (size_t)(end + 4 - r->buf);
            return;
        }
        if (fill(r) == 0)
            fail("%s: the connection closed before the headers", path);
    }
}

/* Reads the body to its last byte, or to the result after want_notes notifications (a
 * resumed stream of the TypeScript SDK stays open after its replay). */
static void read_body(resp *r)
{
    if (!r->chunked && r->left == 0)
        return;
    for (;;) {
        while (r->off < r->len) {
            if (r->result && r->want_notes > 0 && r->notes >= r->want_notes)
                return;
            if (!r->chunked) {
                size_t k = r->len - r->off;
                if (r->left >= 0 && (long long)k > r->left)
                    k = (size_t)r->left;
                body_bytes(r, r->buf + r->off, k);
                r->off += k;
                if (r->left >= 0 && (r->left -= (long long)k) == 0)
                    return;
                continue;
            }
            if (r->left > 0) {
                size_t k = r->len - r->off;
                if ((long long)k > r->left)
                    k = (size_t)r->left;
                body_bytes(r, r->buf + r->off, k);
                r->off += k;
                r->left -= (long long)k;
                continue;
            }
            /* A chunk's size line (after the CRLF that ended the one before). */
            char *eol = memmem(r->buf + r->off, r->len - r->off, "\r\n", 2);
            if (eol == NULL)
                break;
            if (eol == r->buf + r->off) {
                r->off += 2;
                continue;
            }
            long long size = strtoll(r->buf + r->off, NULL, 16);
            r->off = (size_t)(eol + 2 - r->buf);
            if (size == 0)
                return; /* the last chunk: the trailer's CRLF is not waited for */
            r->left = size;
        }
        if (fill(r) == 0) {
            if (!r->chunked && r->left < 0)
                return; /* a body to the connection's end */
            fail("%s: the connection closed before the body's end", path);
        }
    }
}

static int open_conn(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fail("socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&server, sizeof server) != 0)
        fail("connect: %s", strerror(errno));
    return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail("write: %s", strerror(errno));
        s += w;
        n -= (size_t)w;
    }
}

/* One request (body NULL: a GET, with last_id as Last-Event-ID); the answer read in
 * full into *r. */
static void exchange(resp *r, const char *body, const char *last_id, long want_id, long want_notes)
{
    memset(r, 0, sizeof *r);
    r->want_id = want_id;
    r->want_notes = want_notes;
    r->fd = open_conn();
    r->deadline = now_us() / 1000 + (uint64_t)deadline_ms;
    char req[4096];
    int n;
    char sid[200] = "";
    if (session[0] != '\0')
        snprintf(sid, sizeof sid, "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: " PROTO "\r\n",
                 session);
    if (body != NULL)
        n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n%sContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     req_path, host, sid, strlen(body), body);
    else
        n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n%s"
                     "%s%s%sConnection: close\r\n\r\n",
                     req_path, host, sid, last_id ? "Last-Event-ID: " : "", last_id ? last_id : "",
                     last_id ? "\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof req)
        fail("%s: a request too long", path);
    send_all(r->fd, req, (size_t)n);
    read_head(r);
    read_body(r);
    close(r->fd);
}

static void new_session(void)
{
    resp *r = malloc(sizeof *r);
    if (r == NULL)
        fail("%s", "out of memory");
    exchange(r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"" PROTO "\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"sse_bench\",\"version\":\"0\"}}}",
             NULL, 1, 0);
    if (r->status != 200 || r->sid[0] == '\0')
        fail("initialize: no session (status or Mcp-Session-Id)%s", "");
    snprintf(session, sizeof session, "%s", r->sid);
    exchange(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL, 0, 0);
    if (r->status != 202)
        fail("notifications/initialized: status not 202%s", "");
    free(r);
}

/* tools/call notify {count} (or poll_notify, see resume's TOOL); the answer checked.
 * Returns its time in microseconds. */
static uint64_t notify_once(resp *r, long id, long count)
{
    char body[512];
    int poll_tool = strcmp(notify_tool, "poll_notify") == 0;
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"%s\",\"arguments\":{\"count\":%ld%s}}}",
             id, notify_tool, count, poll_tool ? ",\"delay_ms\":0,\"close_after\":0" : "");
    uint64_t t0 = now_us();
    exchange(r, body, NULL, id, count);
    uint64_t t = now_us() - t0;
    if (r->status != 200 || r->notes != count || !r->result) {
        fprintf(stderr, "sse_bench: notify: status %d, %ld of %ld notifications, result %d\n",
                r->status, r->notes, count, r->result);
        exit(1);
    }
    return t;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The server's RSS, after a peer collected its garbage (stats_path, when given). */
static long rss_bytes(long pid, const char *stats_path)
{
    if (stats_path != NULL) {
        resp *r = malloc(sizeof *r);
        if (r == NULL)
            fail("%s", "out of memory");
        req_path = stats_path;
        exchange(r, NULL, NULL, 0, 0);
        req_path = path;
        if (r->status != 200)
            fail("%s: status not 200", stats_path);
        free(r);
    }
    char file[64], line[256];
    snprintf(file, sizeof file, "/proc/%ld/status", pid);
    FILE *f = fopen(file, "r");
    if (f == NULL)
        fail("no %s", file);
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    if (kb < 0)
        fail("no VmRSS in %s", file);
    return kb * 1024;
}

static void parse_url(const char *url)
{
    int port = 0;
    req_path = path;
    if (sscanf(url, "http://%63[^:/]:%d%255s", host, &port, path) < 2 || port <= 0)
        fail("not an http://HOST:PORT/PATH URL: %s", url);
    if (path[0] == '\0')
        strcpy(path, "/");
    server.sin_family = AF_INET;
    server.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, strcmp(host, "localhost") == 0 ? "127.0.0.1" : host, &server.sin_addr) !=
        1)
        fail("not an IPv4 address: %s", host);
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "notify") != 0 && strcmp(argv[1], "resume") != 0) ||
        (strcmp(argv[1], "resume") == 0 && argc < 6)) {
        fprintf(stderr, "usage: sse_bench notify URL COUNT RUNS\n"
                        "       sse_bench resume URL COUNT RUNS PID [STATS_URL|-] "
                        "[notify|poll_notify]\n");
        return 2;
    }
    const char *dl = getenv("SSE_BENCH_DEADLINE_MS");
    if (dl != NULL && (deadline_ms = atol(dl)) <= 0)
        fail("SSE_BENCH_DEADLINE_MS must be a number of milliseconds above 0, not '%s'", dl);
    if (strcmp(argv[1], "resume") == 0 && argc > 7) {
        if (strcmp(argv[7], "notify") != 0 && strcmp(argv[7], "poll_notify") != 0)
            fail("resume: TOOL is notify or poll_notify, not '%s'", argv[7]);
        notify_tool = argv[7];
    }
    parse_url(argv[2]);
    long count = atol(argv[3]), runs = atol(argv[4]);
    if (count <= 0 || runs <= 0)
        fail("COUNT and RUNS must be above 0%s", "");
    resp *r = malloc(sizeof *r);
    uint64_t *t = calloc((size_t)runs, sizeof *t);
    if (r == NULL || t == NULL)
        fail("%s", "out of memory");
    new_session();
    if (strcmp(argv[1], "notify") == 0) {
        long id = 100;
        for (int i = 0; i < 3; i++)
            notify_once(r, id++, count);
        uint64_t total = 0;
        for (long i = 0; i < runs; i++)
            total += t[i] = notify_once(r, id++, count);
        qsort(t, (size_t)runs, sizeof *t, cmp_u64);
        printf("BENCH count=%ld runs=%ld median_ms=%.3f notes_per_s=%.0f\n", count, runs,
               (double)t[runs / 2] / 1000.0, (double)count * (double)runs * 1e6 / (double)total);
    } else {
        long pid = atol(argv[5]);
        /* The stats URL's path and query: same host and port as URL. */
        char stats[300] = "";
        if (argc > 6 && strcmp(argv[6], "-") != 0) {
            const char *p = strchr(argv[6] + (strncmp(argv[6], "http://", 7) == 0 ? 7 : 0), '/');
            snprintf(stats, sizeof stats, "%s?gc", p != NULL ? p : "/");
        }
        const char *sp = stats[0] != '\0' ? stats : NULL;
        long before = rss_bytes(pid, sp);
        uint64_t store = notify_once(r, 7, count);
        long after = rss_bytes(pid, sp);
        char first[160];
        snprintf(first, sizeof first, "%s", r->first_id);
        if (first[0] == '\0')
            fail("resume: the notify stream carried no event id (is resumability on?)%s", "");
        for (long i = 0; i < runs; i++) {
            uint64_t t0 = now_us();
            exchange(r, NULL, first, 7, count);
            t[i] = now_us() - t0;
            if (r->status != 200 || r->notes != count || !r->result) {
                fprintf(stderr,
                        "sse_bench: resume: status %d, %ld of %ld notifications replayed, "
                        "result %d\n",
                        r->status, r->notes, count, r->result);
                return 1;
            }
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_u64);
        printf("BENCH count=%ld runs=%ld store_ms=%.1f replay_median_ms=%.3f replay_min_ms=%.3f "
               "rss_delta=%ld bytes_per_event=%ld\n",
               count, runs, (double)store / 1000.0, (double)t[runs / 2] / 1000.0,
               (double)t[0] / 1000.0, after - before, (after - before) / count);
    }
    free(t);
    free(r);
    return 0;
}
