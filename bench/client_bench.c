/* SPDX-License-Identifier: MIT */
/*
 * client_bench: libmcp's HTTP client making tools/call echo round trips for the
 * benchmarks (bench/run). A loop client on this program's own loop keeps
 * CONCURRENCY calls in flight for SECONDS (after half a second of warm-up), then
 * prints one line:
 *
 *   BENCH calls=N per_s=R client_cpu_us_per_call=U errors=E
 *
 * Client CPU: getrusage(RUSAGE_SELF) over the measured part (every thread of
 * the process: the loop, curl's resolver). Usage: client_bench URL SECONDS
 * CONCURRENCY
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <uv.h>

#include <mcp/mcp.h>

typedef struct bench {
    uv_loop_t loop;
    mcp_client *client;
    uint64_t start_ns, measure_ns, end_ns;
    double cpu_start;
    long calls, errors, inflight;
    int concurrency, measuring, done;
} bench;

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void send_call(bench *b);

static void closed(void *user)
{
    (void)user;
}

static void on_answer(mcp_client *c, int status, const json_t *result, const mcp_rpc_error *err,
                      void *user)
{
    (void)c, (void)err;
    bench *b = user;
    b->inflight--;
    uint64_t now = uv_hrtime();
    if (b->done)
        return;
    if (!b->measuring && now >= b->measure_ns) {
        b->measuring = 1;
        b->calls = 0;
        b->errors = 0;
        b->cpu_start = cpu_seconds();
        b->measure_ns = now;
    }
    if (status != MCP_OK || json_object_get(result, "isError") == json_true())
        b->errors++;
    else
        b->calls++;
    if (b->measuring && now >= b->end_ns) {
        b->done = 1;
        double secs = (double)(now - b->measure_ns) / 1e9;
        double cpu = cpu_seconds() - b->cpu_start;
        printf("BENCH calls=%ld per_s=%.0f client_cpu_us_per_call=%.1f errors=%ld\n", b->calls,
               (double)b->calls / secs, b->calls > 0 ? cpu * 1e6 / (double)b->calls : 0.0,
               b->errors);
        mcp_client_close(b->client, closed, b);
        return;
    }
    send_call(b);
}

static void send_call(bench *b)
{
    json_t *params = json_pack("{s:s, s:{s:s}}", "name", "echo", "arguments", "text", "hello");
    if (mcp_client_request_async(b->client, "tools/call", params, NULL, on_answer, b, NULL) ==
        MCP_OK)
        b->inflight++;
    else
        b->errors++;
}

static void on_connected(mcp_client *c, int status, void *user)
{
    bench *b = user;
    if (status != MCP_OK) {
        fprintf(stderr, "client_bench: connect: %s\n", mcp_strerror(status));
        b->done = 1;
        mcp_client_close(c, closed, b);
        return;
    }
    b->start_ns = uv_hrtime();
    b->measure_ns = b->start_ns + 500000000ull;
    b->end_ns = b->measure_ns + b->end_ns;
    for (int i = 0; i < b->concurrency; i++)
        send_call(b);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: client_bench URL SECONDS CONCURRENCY\n");
        return 2;
    }
    bench b = {0};
    b.end_ns = (uint64_t)(atof(argv[2]) * 1e9); /* a duration until the connect */
    b.concurrency = atoi(argv[3]);
    if (b.concurrency < 1 || b.end_ns == 0 || uv_loop_init(&b.loop) != 0)
        return 2;
    /* The legacy era, as the TS SDK client it is measured against speaks it. */
    if (mcp_client_new_on_loop(&b.loop, "client_bench", "1.0", &b.client) != MCP_OK ||
        mcp_client_set_protocol(b.client, "legacy") != MCP_OK ||
        mcp_client_connect_http_async(b.client, argv[1], NULL, 10000, on_connected, &b) != MCP_OK)
        return 1;
    uv_run(&b.loop, UV_RUN_DEFAULT);
    uv_loop_close(&b.loop);
    return b.measuring && b.errors == 0 ? 0 : 1;
}
