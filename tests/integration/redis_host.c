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

/* A port the kernel had free on 127.0.0.1 a moment ago, or -1. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &n) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* Starts redis-server on port and waits for it to be ready: 0; 1 when it exited
 * before (its port was taken); -1 on an error or at the deadline (nothing is left
 * running either way but on 0). */
static int start_on(rh_server *r, int port, long long deadline)
{
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    /* Loopback only, nothing saved, no protected-mode surprise, logs on stdout. */
    const char *argv[] = {
        "/usr/bin/redis-server", "--port", port_s,        "--bind", "127.0.0.1", "--save", "",
        "--appendonly",          "no",     "--daemonize", "no",     "--logfile", "",       NULL};
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
    int rc = r->proc.eof ? 1 : -1;
    harness_kill(&r->proc);
    return rc;
}

int rh_start(rh_server *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    memset(r, 0, sizeof(*r));
    for (int attempt = 0; attempt < 5 && harness_left_ms(deadline) > 0; attempt++) {
        int port = free_port();
        if (port < 0)
            return -1;
        if (start_on(r, port, deadline) == 0)
            return 0;
    }
    return -1;
}

int rh_restart(rh_server *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    int port = r->port;
    if (port <= 0 || r->proc.pid != 0)
        return -1;
    /* The port was ours a moment ago; another process may take it meanwhile, which
     * is then a failure to report, not a reason to move. */
    while (harness_left_ms(deadline) > 0) {
        int rc = start_on(r, port, deadline);
        if (rc <= 0)
            return rc;
    }
    return -1;
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
