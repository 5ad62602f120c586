/* SPDX-License-Identifier: MIT */
/*
 * The cluster's URL (see url.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

#include "url.h"

#define SCHEME "redis://"
#define DEFAULT_PORT 6379

static int bad(char *why, size_t why_len, const char *what)
{
    if (why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", what);
    return MCP_EINVAL;
}

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Percent-decodes s (n bytes) into a new string. A NUL, even written as %00, is
 * refused: AUTH takes C strings here, and a password cut short would fail in a
 * way no one could see. */
static int decode(const char *s, size_t n, char **out)
{
    char *p = malloc(n + 1);
    if (p == NULL)
        return MCP_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '%') {
            int hi = i + 2 < n ? hex_value(s[i + 1]) : -1;
            int lo = i + 2 < n ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || hi * 16 + lo == 0) {
                free(p);
                return MCP_EINVAL;
            }
            ch = (unsigned char)(hi * 16 + lo);
            i += 2;
        } else if (ch <= 0x20 || ch >= 0x7f) {
            free(p);
            return MCP_EINVAL;
        }
        p[j++] = (char)ch;
    }
    p[j] = '\0';
    *out = p;
    return MCP_OK;
}

/* Digits only, at most max_digits of them, read into *out. */
static int parse_number(const char *s, size_t n, size_t max_digits, long *out)
{
    if (n == 0 || n > max_digits)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static int host_char(char ch, int bracketed)
{
    if (isalnum((unsigned char)ch) || ch == '.' || ch == '-')
        return 1;
    /* An IPv6 address has colons, and a link-local one a zone after '%'. */
    return bracketed ? ch == ':' || ch == '%' : ch == '_';
}

int mcp__redis_url_parse(const char *url, mcp__redis_url *u, char *why, size_t why_len)
{
    memset(u, 0, sizeof(*u));
    u->port = DEFAULT_PORT;
    if (url == NULL)
        return bad(why, why_len, "no Redis URL was given");
    if (strncasecmp(url, "rediss://", 9) == 0)
        return bad(why, why_len, "rediss:// (TLS) is not supported: use redis://");
    if (strncasecmp(url, SCHEME, strlen(SCHEME)) != 0)
        return bad(why, why_len, "the Redis URL must begin with redis://");
    const char *p = url + strlen(SCHEME);
    /* The authority ends at the path; a query or a fragment has no meaning here. */
    const char *end = p + strcspn(p, "/?#");
    if (*end == '?' || *end == '#')
        return bad(why, why_len, "the Redis URL may not have a query or a fragment");

    /* userinfo: the last '@' ends it, since a host never holds one. */
    const char *at = NULL;
    for (const char *q = p; q < end; q++)
        if (*q == '@')
            at = q;
    if (at != NULL) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon == NULL)
            return bad(why, why_len,
                       "the Redis URL names a user without a password (write user:password@)");
        if (colon + 1 == at)
            return bad(why, why_len, "the Redis URL has an empty password");
        int rc = colon > p ? decode(p, (size_t)(colon - p), &u->user) : MCP_OK;
        if (rc == MCP_OK)
            rc = decode(colon + 1, (size_t)(at - colon - 1), &u->password);
        if (rc == MCP_ENOMEM)
            return rc;
        if (rc != MCP_OK)
            return bad(why, why_len,
                       "the Redis URL's user or password has a bad character or %-escape");
        p = at + 1;
    }

    const char *host = p, *host_end;
    int bracketed = *p == '[';
    if (bracketed) {
        host = p + 1;
        host_end = memchr(host, ']', (size_t)(end - host));
        if (host_end == NULL)
            return bad(why, why_len, "the Redis URL's IPv6 address has no closing ]");
        p = host_end + 1;
    } else {
        host_end = memchr(host, ':', (size_t)(end - host));
        if (host_end == NULL)
            host_end = end;
        p = host_end;
    }
    size_t host_len = (size_t)(host_end - host);
    if (host_len == 0)
        return bad(why, why_len, "the Redis URL has no host");
    if (host_len >= sizeof(u->host))
        return bad(why, why_len, "the Redis URL's host is too long");
    for (size_t i = 0; i < host_len; i++)
        if (!host_char(host[i], bracketed))
            return bad(why, why_len, "the Redis URL's host has a bad character");
    memcpy(u->host, host, host_len);
    u->host[host_len] = '\0';

    if (p < end) {
        long port;
        if (*p != ':' || parse_number(p + 1, (size_t)(end - p - 1), 5, &port) != 0 || port < 1 ||
            port > 65535)
            return bad(why, why_len, "the Redis URL's port is not a number from 1 to 65535");
        u->port = (int)port;
    }

    if (*end == '/') {
        const char *db = end + 1;
        size_t n = strlen(db);
        long v = 0;
        /* "redis://host/" names no database: the default one. */
        if (n > 0 && parse_number(db, n, 9, &v) != 0)
            return bad(why, why_len, "the Redis URL's database (after /) is not a number");
        u->db = (int)v;
    }
    return MCP_OK;
}

void mcp__redis_url_free(mcp__redis_url *u)
{
    free(u->user);
    free(u->password);
    u->user = NULL;
    u->password = NULL;
}
