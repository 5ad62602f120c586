/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway for the integration tests (see gateway_host.h).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "gateway_host.h"
#include "harness.h"
#include "http_expect.h"
#include "modern_host.h"

/* Starts mcp-gateway with flags, in front of cmd (NULL-terminated). */
void gw_start(hc_server *s, const char *const flags[], const char *const cmd[])
{
    const char *tail[16];
    size_t n = 0;
    int leveled = 0; /* the flags choose the level themselves */
    for (size_t i = 0; flags != NULL && flags[i] != NULL; i++)
        leveled |= strcmp(flags[i], "--log-level") == 0;
    if (!leveled) {
        tail[n++] = "--log-level";
        tail[n++] = "warning";
    }
    tail[n++] = "--";
    for (size_t i = 0; cmd[i] != NULL && n < 15; i++)
        tail[n++] = cmd[i];
    tail[n] = NULL;
    if (hc_server_start_program(s, "mcp-gateway", 0, flags, tail, HX_START_MS) != 0)
        fail_msg("mcp-gateway did not start");
}

void gw_stop(hc_server *s)
{
    int status;
    if (hc_server_stop(s, HX_STOP_MS, &status) != 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        char *err = hc_server_stderr(s);
        fail_msg("mcp-gateway did not exit 0 on SIGTERM (status %d); stderr:\n%s", status, err);
    }
    hc_server_free(s);
}

/* A counter of GET /metrics, or -1. */
long long gw_metric(int port, const char *name)
{
    hc_response r;
    long long v = -1;
    if (hc_request(port, "GET", "/metrics", NULL, NULL, &r, HX_REQ_MS) == 0 && r.status == 200 &&
        r.body != NULL) {
        char key[128];
        snprintf(key, sizeof(key), "\n%s ", name);
        const char *p = strstr(r.body, key);
        if (p != NULL)
            v = strtoll(p + strlen(key), NULL, 10);
    }
    hc_response_free(&r);
    return v;
}

/* Waits until the metric has the value; fails after the deadline. */
void gw_await_metric(int port, const char *name, long long want, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms, v = -1;
    while (harness_now_ms() < deadline) {
        if ((v = gw_metric(port, name)) == want)
            return;
        /* No event to await here: the children exit on their own time. Poll /metrics. */
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("%s stayed %lld, expected %lld within %d ms", name, v, want, timeout_ms);
}

json_t *gw_call(long long id, const char *tool, const char *caps, json_t *more)
{
    json_t *params = json_pack("{s:s, s:{}}", "name", tool, "arguments");
    if (more != NULL) {
        json_object_update(params, more);
        json_decref(more);
    }
    return mh_request(id, "tools/call", params, caps);
}
