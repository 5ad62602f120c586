/*
 * A real redis-server (Debian's) for the integration tests: started on a free
 * loopback port with nothing persisted, ready once it says it accepts
 * connections, stopped with SIGTERM and reaped.
 */
#ifndef MCP_TESTS_REDIS_HOST_H
#define MCP_TESTS_REDIS_HOST_H

#include "harness.h"

typedef struct rh_server {
    harness_proc proc;
    int port;
} rh_server;

/* Starts redis-server on 127.0.0.1 and a free port; waits up to timeout_ms for it to
 * accept connections (a port taken meanwhile is tried again with another). Returns 0,
 * or -1 (nothing left running). */
int rh_start(rh_server *r, int timeout_ms);
/* Starts it again on the same port after rh_stop (a server that restarts, with
 * nothing kept): 0 once it accepts connections, or -1. */
int rh_restart(rh_server *r, int timeout_ms);
/* SIGTERM, then waits up to timeout_ms for it to exit (SIGKILL past it). 0 when it
 * exited by itself. */
int rh_stop(rh_server *r, int timeout_ms);

#endif
