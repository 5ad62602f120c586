/* SPDX-License-Identifier: MIT */
/*
 * W3C Trace Context carried in _meta (trace.c).
 */
#ifndef MCP_PROTOCOL_TRACE_H
#define MCP_PROTOCOL_TRACE_H

#include <jansson.h>

/* What a receiver keeps of a tracestate and a baggage, at most (bytes). */
#define MCP__TRACESTATE_MAX 512
#define MCP__BAGGAGE_MAX 8192

/* A request's trace context: strings borrowed from its _meta, NULL when absent or not
 * of the W3C form (a tracestate or baggage without a valid traceparent is dropped). */
typedef struct mcp__trace {
    const char *traceparent, *tracestate, *baggage;
} mcp__trace;

void mcp__trace_read(const json_t *meta, mcp__trace *t);
/* The trace-id of params._meta.traceparent (32 lowercase hex digits and a NUL) into
 * out, or "" when params carries none that is valid: what a log line shows of it. */
void mcp__trace_id(const json_t *params, char out[33]);
/* A new traceparent (a new trace, sampled) into out (55 characters and a NUL). MCP_OK,
 * or MCP_EIO when no random bytes can be had. */
int mcp__trace_new(char out[56]);

#endif
