/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events, the writing side (see sse.h): one event in the
 * text/event-stream format.
 */
#include <stdint.h>

#include "sse/sse.h"

int mcp__sse_event(mcp__buf *b, const char *event, const char *id, int retry_ms, const char *data,
                   size_t len)
{
    /* Appends rather than printf: this runs for every message. */
    int rc = mcp__buf_reserve(b, len + 96);
    if (rc == MCP_OK && event != NULL) {
        rc = mcp__buf_append(b, "event: ", 7);
        if (rc == MCP_OK)
            rc = mcp__buf_appends(b, event);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, "\n", 1);
    }
    if (rc == MCP_OK && id != NULL) {
        rc = mcp__buf_append(b, "id: ", 4);
        if (rc == MCP_OK)
            rc = mcp__buf_appends(b, id);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, "\n", 1);
    }
    if (rc == MCP_OK && retry_ms >= 0) {
        rc = mcp__buf_append(b, "retry: ", 7);
        if (rc == MCP_OK)
            rc = mcp__buf_append_u64(b, (uint64_t)retry_ms);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, "\n", 1);
    }
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "data: ", 6);
    if (rc == MCP_OK && data != NULL)
        rc = mcp__buf_append(b, data, len);
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "\n\n", 2);
    return rc;
}
