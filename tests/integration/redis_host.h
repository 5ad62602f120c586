/* SPDX-License-Identifier: MIT */
/*
 * A real redis-server (Debian's) for the integration tests: started on a free
 * loopback port with nothing persisted, ready once it says it accepts
 * connections, stopped with SIGTERM and reaped. It is started under setpriv
 * --pdeathsig KILL (util-linux, there on every Debian), so a test that dies
 * without its teardown (a crash, CTest's timeout) takes its redis-server with
 * it; the parent is the thread that called rh_start, so call it from a thread
 * that outlives the server.
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
/* The same on a given port: a server stopped and started again where it was, so that
 * its clients find it at the same address. No other port is tried. 0 or -1. */
int rh_start_on(rh_server *r, int port, int timeout_ms);
/* Starts it again on its port after rh_stop (a server that restarts, with nothing
 * kept): 0 once it accepts connections, or -1. */
int rh_restart(rh_server *r, int timeout_ms);
/* SIGTERM, then waits up to timeout_ms for it to exit (SIGKILL past it). 0 when it
 * exited by itself. */
int rh_stop(rh_server *r, int timeout_ms);

#endif
