/* SPDX-License-Identifier: MIT */
/*
 * Bearer credentials and challenges (RFC 6750 §2.1 and §3); see auth.h.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/auth.h"

/* b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" (strspn's
 * table scan: every request of an authorized server reads a token of hundreds of
 * characters here). */
static const char b64token_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789-._~+/";

enum mcp__bearer_kind mcp__bearer_parse(const char *value, size_t max, const char **token,
                                        size_t *len)
{
    *token = NULL;
    *len = 0;
    if (value == NULL || strncasecmp(value, "Bearer", 6) != 0)
        return MCP__BEARER_NONE;
    const char *p = value + 6;
    if (*p == '\0')
        return MCP__BEARER_MALFORMED; /* "Bearer" and nothing else */
    if (*p != ' ')
        return MCP__BEARER_NONE; /* another scheme, such as "Bearerx" */
    while (*p == ' ')
        p++;
    const char *t = p;
    p += strspn(p, b64token_chars);
    if (p == t)
        return MCP__BEARER_MALFORMED;
    while (*p == '=')
        p++;
    if (*p != '\0') /* the HTTP layer trims trailing whitespace; anything else is wrong */
        return MCP__BEARER_MALFORMED;
    size_t n = (size_t)(p - t);
    if (n > max)
        return MCP__BEARER_TOO_LONG;
    *token = t;
    *len = n;
    return MCP__BEARER_TOKEN;
}

int mcp__bearer_in_query(const char *query)
{
    for (const char *p = query; p != NULL && *p != '\0';) {
        if (strncmp(p, "access_token=", 13) == 0 || strcmp(p, "access_token") == 0 ||
            strncmp(p, "access_token&", 13) == 0)
            return 1;
        p = strchr(p, '&');
        if (p != NULL)
            p++;
    }
    return 0;
}

/* scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) */
static int scope_char(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E);
}

int mcp__scope_token_valid(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (!scope_char(*p))
            return 0;
    return 1;
}

int mcp__scope_list_valid(const char *s)
{
    int any = 0;
    for (const unsigned char *p = (const unsigned char *)s; p != NULL && *p; p++) {
        if (*p == ' ')
            continue;
        if (!scope_char(*p))
            return 0;
        any = 1;
    }
    return any;
}

/* Appends `, name="value"` (no comma first) to b; description: characters outside
 * %x20-21 / %x23-5B / %x5D-7E become spaces; otherwise '"' and '\' are escaped and
 * control characters dropped. */
static int param(mcp__buf *b, int *first, const char *name, const char *value, int description)
{
    if (value == NULL)
        return MCP_OK;
    int rc = mcp__buf_appends(b, *first ? " " : ", ");
    *first = 0;
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, name);
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, "=\"");
    for (const unsigned char *p = (const unsigned char *)value; rc == MCP_OK && *p; p++) {
        unsigned char c = *p;
        if (description) {
            if (!(c == 0x20 || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E)))
                c = ' ';
            rc = mcp__buf_append(b, &c, 1);
        } else if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            rc = mcp__buf_append(b, esc, 2);
        } else if (c >= 0x20 && c != 0x7F) {
            rc = mcp__buf_append(b, &c, 1);
        }
    }
    if (rc == MCP_OK)
        rc = mcp__buf_appends(b, "\"");
    return rc;
}

char *mcp__bearer_challenge(const char *error, const char *description, const char *scope,
                            const char *resource_metadata)
{
    mcp__buf b = {0};
    int first = 1;
    int rc = mcp__buf_appends(&b, "Bearer");
    if (error != NULL && strcmp(error, "insufficient_scope") == 0) {
        if (rc == MCP_OK)
            rc = param(&b, &first, "error", error, 0);
        if (rc == MCP_OK)
            rc = param(&b, &first, "scope", scope, 0);
        if (rc == MCP_OK)
            rc = param(&b, &first, "resource_metadata", resource_metadata, 0);
        if (rc == MCP_OK)
            rc = param(&b, &first, "error_description", description, 1);
    } else {
        if (rc == MCP_OK)
            rc = param(&b, &first, "error", error, 0);
        if (rc == MCP_OK)
            rc = param(&b, &first, "error_description", description, 1);
        if (rc == MCP_OK)
            rc = param(&b, &first, "resource_metadata", resource_metadata, 0);
        if (rc == MCP_OK)
            rc = param(&b, &first, "scope", scope, 0);
    }
    if (rc != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    return mcp__buf_steal(&b);
}
