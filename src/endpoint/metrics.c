/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics for any HTTP endpoint: its counters (mcp_http_stats) and the process's own
 * in the Prometheus text exposition format, version 0.0.4 (HELP and TYPE before each
 * family's samples, counters named *_total, one sample a line).
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mcp/server.h>

/* Text being appended to the caller's buffer; a write that does not fit marks it full,
 * and the caller's *len is only moved when everything fitted. */
typedef struct metrics_out {
    char *buf;
    size_t size, n;
    int full;
} metrics_out;

static void put(metrics_out *o, const char *fmt, ...) MCP_PRINTF(2, 3);

static void put(metrics_out *o, const char *fmt, ...)
{
    if (o->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o->buf + o->n, o->size - o->n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= o->size - o->n) {
        o->full = 1;
        return;
    }
    o->n += (size_t)w;
}

static void family(metrics_out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric(metrics_out *o, const char *name, const char *type, const char *help,
                   unsigned long long value)
{
    family(o, name, type, help);
    put(o, "%s %llu\n", name, value);
}

/* The process's own: CPU time, resident memory, open and allowed file descriptors (the
 * names Prometheus's client libraries use, so dashboards made for them work). */
static void process_metrics(metrics_out *o)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        family(o, "process_cpu_seconds_total", "counter",
               "User and system CPU time spent, in seconds.");
        put(o, "process_cpu_seconds_total %.6f\n", cpu);
    }
    FILE *f = fopen("/proc/self/statm", "re");
    if (f != NULL) {
        unsigned long pages_total, pages_resident;
        long page = sysconf(_SC_PAGESIZE);
        if (fscanf(f, "%lu %lu", &pages_total, &pages_resident) == 2 && page > 0)
            metric(o, "process_resident_memory_bytes", "gauge", "Resident memory size, in bytes.",
                   (unsigned long long)pages_resident * (unsigned long long)page);
        fclose(f);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d != NULL) {
        unsigned long long fds = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (e->d_name[0] != '.')
                fds++;
        closedir(d);
        metric(o, "process_open_fds", "gauge", "Open file descriptors.", fds > 0 ? fds - 1 : 0);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        metric(o, "process_max_fds", "gauge", "The limit of open file descriptors.",
               (unsigned long long)rl.rlim_cur);
}

int mcp_http_endpoint_metrics(const mcp_http_endpoint *ep, char *buf, size_t size, size_t *len)
{
    if (ep == NULL || buf == NULL || len == NULL || *len >= size)
        return ep == NULL || buf == NULL || len == NULL ? MCP_EINVAL : MCP_ELIMIT;
    mcp_http_stats hs = {.size = sizeof(hs)};
    int rc = mcp_http_endpoint_stats_get(ep, &hs);
    if (rc != MCP_OK)
        return rc;
    metrics_out o = {.buf = buf, .size = size, .n = *len};
    metric(&o, "mcp_http_streams", "gauge", "Response streams open now (POST and GET).",
           hs.streams);
    metric(&o, "mcp_http_streams_total", "counter", "Response streams opened.", hs.streams_total);
    metric(&o, "mcp_http_resumes_total", "counter", "Streams resumed with Last-Event-ID.",
           hs.resumes);
    metric(&o, "mcp_http_replayed_events_total", "counter",
           "Events sent again to resuming clients.", hs.replayed_events);
    metric(&o, "mcp_http_messages_sent_total", "counter",
           "Messages sent to clients (replays not counted).", hs.messages_out);
    metric(&o, "mcp_http_sent_bytes_total", "counter", "Bytes of the messages sent to clients.",
           hs.bytes_out);
    family(&o, "mcp_http_auth_requests_total", "counter",
           "Requests to the MCP endpoints by authorization outcome.");
    const struct {
        const char *outcome;
        unsigned long long count;
    } outcomes[] = {{"passed", hs.auth_passed},
                    {"no_token", hs.auth_no_token},
                    {"invalid_token", hs.auth_invalid_token},
                    {"insufficient_scope", hs.auth_insufficient_scope},
                    {"invalid_request", hs.auth_bad_request},
                    {"unavailable", hs.auth_unavailable}};
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++)
        put(&o, "mcp_http_auth_requests_total{outcome=\"%s\"} %llu\n", outcomes[i].outcome,
            outcomes[i].count);
    metric(&o, "mcp_http_auth_cache_hits_total", "counter",
           "Requests let in on a token the verification cache knew.", hs.auth_cached);
    metric(&o, "mcp_http_tls_handshakes", "gauge", "TLS handshakes in progress now.",
           hs.tls_handshakes);
    metric(&o, "mcp_http_tls_handshakes_dropped_total", "counter",
           "TLS handshakes closed to make way for newer ones.", hs.tls_handshakes_dropped);
    process_metrics(&o);
    if (o.full) {
        buf[*len] = '\0'; /* what was there before stays a string */
        return MCP_ELIMIT;
    }
    *len = o.n;
    return MCP_OK;
}

static const char *const metrics_headers[] = {"Content-Type", "text/plain; version=0.0.4",
                                              "Cache-Control", "no-store", NULL};

void mcp_http_metrics_route(mcp_http_exchange *x, void *user)
{
    (void)user;
    char buf[8192];
    size_t n = 0;
    if (mcp_http_endpoint_metrics(mcp_http_exchange_endpoint(x), buf, sizeof buf, &n) != MCP_OK) {
        mcp_http_exchange_respond(x, 500, metrics_headers, "no statistics\n", 14);
        return;
    }
    mcp_http_exchange_respond(x, 200, metrics_headers, buf, n);
}
