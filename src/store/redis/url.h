/* SPDX-License-Identifier: MIT */
/*
 * The address of the shared Redis server, parsed from the cluster's URL:
 *
 *   redis://[[user]:password@]host[:port][/db]
 *
 * user and password are percent-decoded (RFC 3986 userinfo), so a password
 * may hold '@', ':' or '/' written as %40, %3A, %2F; host may be a name, an
 * IPv4 address or an IPv6 address in brackets. This header knows nothing of
 * hiredis, so that tests can check the parser alone.
 */
#ifndef MCP_STORE_REDIS_URL_H
#define MCP_STORE_REDIS_URL_H

#include <stddef.h>

typedef struct mcp__redis_url {
    char host[256]; /* without the brackets of an IPv6 address */
    int port;       /* 6379 when the URL names none */
    char *user;     /* NULL: AUTH with the password alone (the "default" user) */
    char *password; /* NULL: no AUTH */
    int db;         /* 0 when the URL names none: no SELECT is sent */
} mcp__redis_url;

/* Parses url into u (zeroed first; the caller frees it with mcp__redis_url_free,
 * also after a failure). MCP_OK; MCP_EINVAL with a sentence in why (when not
 * NULL) for a URL that does not parse; MCP_ENOMEM. */
int mcp__redis_url_parse(const char *url, mcp__redis_url *u, char *why, size_t why_len);
void mcp__redis_url_free(mcp__redis_url *u);

#endif
