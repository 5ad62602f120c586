/* SPDX-License-Identifier: MIT */
/* See tcp_info.c. */
#ifndef MCP_HTTP_TCP_INFO_H
#define MCP_HTTP_TCP_INFO_H

#include <stdint.h>

/* The receive window the peer of TCP socket fd last advertised, in bytes: how
 * much room its receive buffer has. 0, or -1 when the kernel does not say. */
int mcp__tcp_peer_window(int fd, uint32_t *window);

#endif
