/* SPDX-License-Identifier: MIT */
/*
 * Option structs and operation tables that grow: each public one begins with
 * `size_t size`, which the caller sets to sizeof the struct it was compiled
 * with; 0 stands for a fixed layout, given by the caller as v1_size: the one
 * of the release that made the struct (libmcp 0.1 for some, 0.2 for most,
 * whose calls pass sizeof: a release that appends to such a struct must pass
 * its 0.2 size there instead, DEVELOPERS.md, "The ABI"). The library reads
 * only that many bytes and zeroes the rest, so fields appended in later
 * releases read as "absent" for programs built against an older header.
 */
#include <string.h>

#include "util/util.h"

int mcp__opts_copy(void *dst, size_t dst_size, const void *src, size_t v1_size)
{
    memset(dst, 0, dst_size);
    if (src == NULL)
        return MCP_OK;
    size_t given;
    memcpy(&given, src, sizeof(given));
    if (given == 0)
        given = v1_size;
    if (given < sizeof(size_t))
        return MCP_EINVAL;
    memcpy(dst, src, given < dst_size ? given : dst_size);
    memcpy(dst, &given, sizeof(given));
    return MCP_OK;
}
