/* SPDX-License-Identifier: MIT */
/*
 * A real redis-server for the integration tests (see redis_host.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_host.h"

/* Starts redis-server on port and waits until deadline for it to accept connections.
 * Returns 0, or -1 with nothing left running (the port was taken, or the deadline). */
static int start_on(rh_server *r, int port, long long deadline)
{
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    /* Loopback only, nothing saved, no protected-mode surprise, logs on stdout. It dies
     * with the thread that started it (harness_spawn), so no redis-server outlives a
     * test that was killed before its teardown. */
    const char *argv[24];
    size_t n = 0;
    const char *const redis[] = {
        "/usr/bin/redis-server", "--port", port_s,        "--bind", "127.0.0.1", "--save", "",
        "--appendonly",          "no",     "--daemonize", "no",     "--logfile", "",       NULL};
    for (size_t i = 0; redis[i] != NULL; i++)
        argv[n++] = redis[i];
    argv[n] = NULL;
    if (harness_spawn(&r->proc, argv) != 0)
        return -1;
    for (;;) {
        char *line = harness_read_line(&r->proc, harness_left_ms(deadline), NULL);
        if (line == NULL)
            break; /* exited (its port was taken), or the deadline */
        int ready = strstr(line, "Ready to accept connections") != NULL;
        free(line);
        if (ready) {
            r->port = port;
            return 0;
        }
    }
    harness_kill(&r->proc);
    return -1;
}

int rh_start(rh_server *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    memset(r, 0, sizeof(*r));
    for (int attempt = 0; attempt < 5 && harness_left_ms(deadline) > 0; attempt++) {
        int port = harness_free_port();
        if (port < 0)
            return -1;
        if (start_on(r, port, deadline) == 0)
            return 0;
    }
    return -1;
}

int rh_start_on(rh_server *r, int port, int timeout_ms)
{
    memset(r, 0, sizeof(*r));
    return start_on(r, port, harness_now_ms() + timeout_ms);
}

int rh_stop(rh_server *r, int timeout_ms)
{
    if (r->proc.pid == 0)
        return -1;
    kill(r->proc.pid, SIGTERM);
    int status = 0;
    int rc = harness_wait_exit(&r->proc, timeout_ms, &status);
    harness_kill(&r->proc);
    return rc == 0 && WIFEXITED(status) ? 0 : -1;
}

int rh_restart(rh_server *r, int timeout_ms)
{
    int port = r->port;
    if (port <= 0 || r->proc.pid != 0)
        return -1;
    return rh_start_on(r, port, timeout_ms);
}
