/* SPDX-License-Identifier: MIT */
/*
 * What mcp_serve_http and mcp_serve_fds share: a loop of their own, and the
 * signals. The first SIGINT or SIGTERM stops the endpoint with a drain, a second
 * stops it at once; the handlers stay installed until the function returns, so
 * that a signal arriving while the process winds down is ours, not the
 * default's (which would kill it).
 */
#ifndef MCP_ENDPOINT_SERVE_H
#define MCP_ENDPOINT_SERVE_H

#include "util/util.h"

typedef struct mcp__serve mcp__serve;

struct mcp__serve {
    uv_loop_t loop;
    void *ep; /* the endpoint being served */
    /* Begins a stop of ep draining for drain_ms (the first signal), or with none
     * (a second); the endpoint's done must be mcp__serve_done. */
    void (*stop)(mcp__serve *s, int drain_ms);
    int drain_ms;
    int status; /* what the endpoint's done said */
    uv_signal_t sigint, sigterm;
    int signals;
    /* SIGHUP, when set (mcp__serve_on_hangup): reads the endpoint's files again. */
    void (*hangup)(mcp__serve *s);
    uv_signal_t sighup;
    int hup_installed;
};

/* Prepares s and its loop, and installs the signal handlers. MCP_OK or MCP_EIO. */
int mcp__serve_init(mcp__serve *s, int drain_ms, void (*stop)(mcp__serve *s, int drain_ms));
/* Installs a SIGHUP handler that calls hangup(s) once s->ep is set (the endpoint
 * reloads its certificates, say); removed with the others. Call it right after
 * mcp__serve_init, before the endpoint says it listens, for the reason above. */
void mcp__serve_on_hangup(mcp__serve *s, void (*hangup)(mcp__serve *s));
/* The endpoint's done callback (an mcp_endpoint_done_fn; user is s). */
void mcp__serve_done(void *user, int status);
/* Runs the loop until the endpoint is done (when s->ep is set), then removes the
 * signal handlers. */
void mcp__serve_run(mcp__serve *s);
/* After the endpoint is freed: releases the thread's buffers and closes the loop. */
void mcp__serve_close(mcp__serve *s);

#endif
