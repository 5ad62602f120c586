/* SPDX-License-Identifier: MIT */
/*
 * mrtr_bench: the load for the Multi Round-Trip Request rows of bench/run. Each of
 * CONNS keep-alive connections makes rounds of two requests in sequence, revision
 * 2026-07-28 (stateless POSTs carrying the _meta envelope and the MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name headers):
 *
 *   1. tools/call TOOL {} with no answers: the answer must be an InputRequiredResult
 *      ("resultType":"input_required") with a requestState;
 *   2. the retry, a new id, with inputResponses.user_name (an accepted elicitation,
 *      {"name":"Alice"}) and that requestState echoed: the answer must be the final
 *      result, "Hello, Alice!".
 *
 * A round is timed from the first byte of request 1 to the last byte of answer 2.
 * After SECONDS it prints one line that bench/run parses:
 *
 *   BENCH rounds=N duration_us=D mean_us=M p50_us=P p99_us=Q errors=E
 *
 * One thread and poll(), like wrk -t1. Plain HTTP/1.1 over IPv4 only (what bench/run
 * starts): answers with a Content-Length or chunked. The tool defaults to
 * test_input_required_result_elicitation, which mcp-everything and
 * bench/peer/ts2-peer-server.mjs both offer.
 *
 * Usage: mrtr_bench http://127.0.0.1:PORT/PATH SECONDS CONNS [TOOL]
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

#define MAX_CONNS 256
#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}},"                         \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mrtr_bench\",\"version\":\"0\"}}"

typedef struct conn {
    int fd;
    int leg; /* 0: waiting for the InputRequiredResult, 1: for the final result */
    char out[8192];
    size_t out_len, out_off;
    char *in;
    size_t in_len, in_cap;
    uint64_t round_start;
} conn;

static struct sockaddr_in server;
static char host[64], path[256], tool[128];
static long next_id = 1, rounds, errors;
static uint64_t *lat;
static size_t lat_len, lat_cap;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void bad(const char *what, const char *body, size_t len)
{
    if (++errors <= 3)
        fprintf(stderr, "mrtr_bench: %s: %.*s\n", what, (int)(len > 300 ? 300 : len),
                body ? body : "");
}

static int conn_open(conn *c)
{
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&server, sizeof server) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    c->in_len = 0;
    return 0;
}

/* Writes the request of the connection's current leg into its output buffer. */
static int conn_request(conn *c, const char *state)
{
    char body[4096];
    int n;
    if (c->leg == 0)
        n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"%s\",\"arguments\":{}," META "}}",
                     next_id++, tool);
    else
        n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"%s\",\"arguments\":{},\"inputResponses\":{\"user_name\":"
                     "{\"action\":\"accept\",\"content\":{\"name\":\"Alice\"}}},"
                     "\"requestState\":\"%s\"," META "}}",
                     next_id++, tool, state);
    if (n < 0 || (size_t)n >= sizeof body)
        return -1;
    int m = snprintf(c->out, sizeof c->out,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
                     "Mcp-Name: %s\r\nContent-Length: %d\r\n\r\n%s",
                     path, host, tool, n, body);
    if (m < 0 || (size_t)m >= sizeof c->out)
        return -1;
    c->out_len = (size_t)m;
    c->out_off = 0;
    return 0;
}

static int conn_start_round(conn *c)
{
    c->leg = 0;
    c->round_start = now_us();
    return conn_request(c, NULL);
}

/* The value of header NAME in the header block [h, end), or NULL. */
static const char *header(const char *h, const char *end, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *p = h; p < end;) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (eol == NULL)
            eol = end;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            *len = (size_t)(eol - v);
            return v;
        }
        p = eol + 2;
    }
    return NULL;
}

/*
 * Whether the input holds a whole answer: 1 with its status and body (a chunked body
 * decoded in place) and the bytes it took, 0 when more must come, -1 when it cannot
 * be read.
 */
static int parse_answer(conn *c, int *status, char **body, size_t *body_len, size_t *used)
{
    char *hend = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (hend == NULL)
        return 0;
    if (c->in_len < 12 || strncmp(c->in, "HTTP/1.1 ", 9) != 0)
        return -1;
    *status = atoi(c->in + 9);
    char *b = hend + 4;
    size_t avail = c->in_len - (size_t)(b - c->in), vlen;
    const char *v = header(c->in, hend + 2, "Content-Length", &vlen);
    if (v != NULL) {
        size_t n = strtoul(v, NULL, 10);
        if (avail < n)
            return 0;
        *body = b;
        *body_len = n;
        *used = (size_t)(b - c->in) + n;
        return 1;
    }
    v = header(c->in, hend + 2, "Transfer-Encoding", &vlen);
    if (v == NULL || vlen < 7 || strncasecmp(v, "chunked", 7) != 0)
        return -1;
    /* Walk the chunks first; decode only once the last one is in. */
    size_t off = 0;
    for (;;) {
        char *eol = memmem(b + off, avail - off, "\r\n", 2);
        if (eol == NULL)
            return 0;
        size_t n = strtoul(b + off, NULL, 16);
        size_t data = (size_t)(eol + 2 - b);
        if (avail < data + n + 2)
            return 0;
        off = data + n + 2;
        if (n == 0)
            break;
    }
    size_t w = 0, r = 0;
    for (;;) {
        char *eol = memmem(b + r, off - r, "\r\n", 2);
        size_t n = strtoul(b + r, NULL, 16);
        r = (size_t)(eol + 2 - b);
        if (n == 0)
            break;
        memmove(b + w, b + r, n);
        w += n;
        r += n + 2;
    }
    *body = b;
    *body_len = w;
    *used = (size_t)(b - c->in) + off;
    return 1;
}

static void record(uint64_t us)
{
    if (lat_len == lat_cap) {
        lat_cap = lat_cap ? lat_cap * 2 : 65536;
        lat = realloc(lat, lat_cap * sizeof *lat);
        if (lat == NULL) {
            fprintf(stderr, "mrtr_bench: out of memory\n");
            exit(1);
        }
    }
    lat[lat_len++] = us;
}

/* Handles one whole answer; the next request, if any, is then in c->out. */
static int conn_answer(conn *c, int status, char *body, size_t len)
{
    body[len] = '\0'; /* the input buffer always keeps a spare byte */
    if (status != 200) {
        bad("status not 200", body, len);
        return conn_start_round(c);
    }
    if (c->leg == 0) {
        const char *s = strstr(body, "\"requestState\":\"");
        if (strstr(body, "\"input_required\"") == NULL || s == NULL) {
            bad("no InputRequiredResult with a requestState", body, len);
            return conn_start_round(c);
        }
        s += strlen("\"requestState\":\"");
        const char *e = strchr(s, '"');
        char state[2048];
        if (e == NULL || (size_t)(e - s) >= sizeof state) {
            bad("requestState unreadable", body, len);
            return conn_start_round(c);
        }
        memcpy(state, s, (size_t)(e - s));
        state[e - s] = '\0';
        c->leg = 1;
        return conn_request(c, state);
    }
    if (strstr(body, "Hello, Alice!") == NULL || strstr(body, "\"complete\"") == NULL)
        bad("the retry did not get the final result", body, len);
    else {
        rounds++;
        record(now_us() - c->round_start);
    }
    return conn_start_round(c);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t percentile(double p)
{
    if (lat_len == 0)
        return 0;
    size_t i = (size_t)(p / 100.0 * (double)lat_len);
    return lat[i < lat_len ? i : lat_len - 1];
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: mrtr_bench http://127.0.0.1:PORT/PATH SECONDS CONNS [TOOL]\n");
        return 2;
    }
    unsigned port = 0;
    char addr[48];
    int nconn = atoi(argv[3]);
    double seconds = atof(argv[2]);
    if (sscanf(argv[1], "http://%47[0-9.]:%u%255s", addr, &port, path) != 3 || path[0] != '/' ||
        port == 0 || port > 65535 || nconn < 1 || nconn > MAX_CONNS || seconds <= 0) {
        fprintf(stderr, "mrtr_bench: bad arguments (an http://IPv4:PORT/PATH URL, "
                        "SECONDS > 0, 1 <= CONNS <= 256)\n");
        return 2;
    }
    snprintf(host, sizeof host, "%s:%u", addr, port);
    snprintf(tool, sizeof tool, "%s",
             argc == 5 ? argv[4] : "test_input_required_result_elicitation");
    server.sin_family = AF_INET;
    server.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &server.sin_addr) != 1) {
        fprintf(stderr, "mrtr_bench: bad address %s\n", addr);
        return 2;
    }

    static conn conns[MAX_CONNS];
    static struct pollfd pfd[MAX_CONNS];
    uint64_t start = now_us(), end = start + (uint64_t)(seconds * 1e6);
    for (int i = 0; i < nconn; i++) {
        if (conn_open(&conns[i]) != 0 || conn_start_round(&conns[i]) != 0) {
            fprintf(stderr, "mrtr_bench: cannot connect to %s: %s\n", host, strerror(errno));
            return 1;
        }
    }
    uint64_t now;
    while ((now = now_us()) < end) {
        for (int i = 0; i < nconn; i++) {
            pfd[i].fd = conns[i].fd;
            pfd[i].events = conns[i].out_off < conns[i].out_len ? POLLOUT : POLLIN;
        }
        int timeout = (int)((end - now) / 1000) + 1;
        if (poll(pfd, (nfds_t)nconn, timeout) < 0 && errno != EINTR) {
            perror("mrtr_bench: poll");
            return 1;
        }
        for (int i = 0; i < nconn; i++) {
            conn *c = &conns[i];
            if (pfd[i].revents == 0)
                continue;
            if (c->out_off < c->out_len) {
                ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
                if (n > 0)
                    c->out_off += (size_t)n;
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                    goto reconnect;
                continue;
            }
            if (c->in_cap - c->in_len < 4096) {
                c->in_cap = c->in_cap ? c->in_cap * 2 : 16384;
                c->in = realloc(c->in, c->in_cap);
                if (c->in == NULL)
                    return 1;
            }
            ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1);
            if (n <= 0) {
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                goto reconnect;
            }
            c->in_len += (size_t)n;
            int status;
            char *body;
            size_t len, used;
            int rc = parse_answer(c, &status, &body, &len, &used);
            if (rc == 0)
                continue;
            if (rc < 0) {
                bad("unreadable answer", c->in, c->in_len);
                goto reconnect;
            }
            char spare = c->in[used < c->in_len ? used : c->in_len];
            if (conn_answer(c, status, body, len) != 0) {
                fprintf(stderr, "mrtr_bench: request too large\n");
                return 1;
            }
            /* No pipelining: anything after the answer is unexpected. */
            if (used < c->in_len) {
                c->in[used] = spare;
                bad("bytes after the answer", c->in + used, c->in_len - used);
                goto reconnect;
            }
            c->in_len = 0;
            continue;
        reconnect:
            errors++;
            close(c->fd);
            if (conn_open(c) != 0 || conn_start_round(c) != 0) {
                fprintf(stderr, "mrtr_bench: cannot reconnect: %s\n", strerror(errno));
                return 1;
            }
        }
    }
    uint64_t dur = now - start, sum = 0;
    for (size_t i = 0; i < lat_len; i++)
        sum += lat[i];
    qsort(lat, lat_len, sizeof *lat, cmp_u64);
    printf("BENCH rounds=%ld duration_us=%llu mean_us=%.0f p50_us=%llu p99_us=%llu errors=%ld\n",
           rounds, (unsigned long long)dur, lat_len ? (double)sum / (double)lat_len : 0.0,
           (unsigned long long)percentile(50), (unsigned long long)percentile(99), errors);
    for (int i = 0; i < nconn; i++)
        close(conns[i].fd);
    return errors == 0 && rounds > 0 ? 0 : 1;
}
