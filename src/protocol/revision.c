/* SPDX-License-Identifier: MIT */
/*
 * The table of protocol revisions (see revision.h). Each rule cites where the
 * spec brought it in or took it out.
 */
#include <stdio.h>
#include <string.h>

#include <mcp/common.h>

#include "protocol/revision.h"

/* Newest first: the order in which we prefer them, and in which errors list them. */
static const mcp__revision revisions[] = {
    {
        /* The modern era: see revision.h. Resource not found became Invalid Params. */
        .version = MCP_PROTOCOL_2026_07_28,
        .protocol_version_header = 1,
        .elicitation = 1,
        .resource_not_found = MCP_RPC_INVALID_PARAMS,
        .modern = 1,
    },
    {
        .version = MCP_PROTOCOL_2025_11_25,
        .priming = 1, /* SEP-1699 */
        .protocol_version_header = 1,
        .elicitation = 1,
        .resource_not_found = MCP_RPC_RESOURCE_NOT_FOUND,
    },
    {
        /* Removed batches; brought in MCP-Protocol-Version and elicitation. */
        .version = MCP_PROTOCOL_2025_06_18,
        .protocol_version_header = 1,
        .elicitation = 1,
        .resource_not_found = MCP_RPC_RESOURCE_NOT_FOUND,
    },
    {
        /* Brought in Streamable HTTP and JSON-RPC batches. */
        .version = MCP_PROTOCOL_2025_03_26,
        .batches = 1,
        .resource_not_found = MCP_RPC_RESOURCE_NOT_FOUND,
    },
    {
        .version = MCP_PROTOCOL_2024_11_05,
        .resource_not_found = MCP_RPC_RESOURCE_NOT_FOUND,
    },
};

#define NREVISIONS (sizeof revisions / sizeof revisions[0])

const mcp__revision *mcp__revision_find(const char *version)
{
    if (version == NULL)
        return NULL;
    for (size_t i = 0; i < NREVISIONS; i++)
        if (strcmp(version, revisions[i].version) == 0)
            return &revisions[i];
    return NULL;
}

/* The first legacy row. */
#define LATEST_LEGACY 1

const mcp__revision *mcp__revision_latest(void)
{
    return &revisions[LATEST_LEGACY];
}

const mcp__revision *mcp__revision_modern(void)
{
    return &revisions[0];
}

const mcp__revision *mcp__revision_find_legacy(const char *version)
{
    const mcp__revision *rev = mcp__revision_find(version);
    return rev != NULL && !rev->modern ? rev : NULL;
}

size_t mcp__revision_count(void)
{
    return NREVISIONS;
}

const mcp__revision *mcp__revision_at(size_t i)
{
    return i < NREVISIONS ? &revisions[i] : NULL;
}

const char *mcp__revision_list(char *out, size_t size, int (*keep)(const mcp__revision *rev))
{
    size_t len = 0;
    if (size == 0)
        return out;
    out[0] = '\0';
    for (size_t i = 0; i < NREVISIONS; i++) {
        if (keep != NULL && !keep(&revisions[i]))
            continue;
        int n = snprintf(out + len, size - len, "%s%s", len > 0 ? ", " : "", revisions[i].version);
        if (n < 0 || (size_t)n >= size - len) {
            /* A name cut in half would read as a version we speak. */
            out[len] = '\0';
            break;
        }
        len += (size_t)n;
    }
    return out;
}

static int has_batches(const mcp__revision *rev)
{
    return rev->batches;
}

const char *mcp__revision_batch_refusal(char *out, size_t size)
{
    char versions[64];
    snprintf(out, size,
             "Invalid Request: JSON-RPC batches are only allowed with protocol version %s",
             mcp__revision_list(versions, sizeof versions, has_batches));
    return out;
}

int mcp__revision_removed_method(const char *method)
{
    static const char *const names[] = {
        "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(method, names[i]) == 0)
            return 1;
    return 0;
}
