/* SPDX-License-Identifier: MIT */
/*
 * The OAuth client's text: form bodies and query strings, URLs split into
 * origin and path, the challenges of WWW-Authenticate (RFC 9110 §11.6.1), and
 * text from a server made fit for a message.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "oauth/oauth.h"

static int unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int pct_encode(mcp__buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
        if (mcp__buf_append(b, unreserved(*p) ? (const char *)p : e, unreserved(*p) ? 1 : 3) !=
            MCP_OK)
            return MCP_ENOMEM;
    }
    return MCP_OK;
}

int mcp__form_add(mcp__buf *b, const char *name, const char *value)
{
    if ((b->len > 0 && mcp__buf_append(b, "&", 1) != MCP_OK) || pct_encode(b, name) != MCP_OK ||
        mcp__buf_append(b, "=", 1) != MCP_OK || pct_encode(b, value) != MCP_OK)
        return MCP_ENOMEM;
    return MCP_OK;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes n bytes of a form value ('+' is a space), malloc'd. */
static char *pct_decode(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            *o++ = (char)(h * 16 + l);
            i += 2;
        } else {
            *o++ = s[i] == '+' ? ' ' : s[i];
        }
    }
    *o = '\0';
    return out;
}

char *mcp__form_get(const char *query, const char *name, int *dup)
{
    char *found = NULL;
    size_t nlen = strlen(name);
    if (dup != NULL)
        *dup = 0;
    for (const char *p = query; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '&');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            if (found != NULL) {
                if (dup != NULL)
                    *dup = 1;
            } else {
                found = pct_decode(p + nlen + 1, len - nlen - 1);
            }
        } else if (len == nlen && strncmp(p, name, nlen) == 0 && found == NULL) {
            found = mcp__strdup("");
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return found;
}

int mcp__url_split(const char *url, char **origin, char **path)
{
    *origin = *path = NULL;
    const char *rest;
    const char *scheme;
    if (strncasecmp(url, "https://", 8) == 0) {
        scheme = "https";
        rest = url + 8;
    } else if (strncasecmp(url, "http://", 7) == 0) {
        scheme = "http";
        rest = url + 7;
    } else {
        return MCP_EINVAL;
    }
    size_t hlen = strcspn(rest, "/?#");
    if (hlen == 0 || memchr(rest, '@', hlen) != NULL)
        return MCP_EINVAL; /* no host, or userinfo: never */
    char host[512];
    if (hlen >= sizeof(host))
        return MCP_EINVAL;
    for (size_t i = 0; i < hlen; i++)
        host[i] = (char)tolower((unsigned char)rest[i]);
    host[hlen] = '\0';
    /* The default port is no part of the origin's spelling. */
    size_t n = strlen(host);
    const char *dflt = scheme[4] == 's' ? ":443" : ":80";
    size_t dl = strlen(dflt);
    if (n > dl && strcmp(host + n - dl, dflt) == 0)
        host[n - dl] = '\0';
    const char *p = rest + hlen;
    size_t plen = strcspn(p, "?#");
    if (plen == 1 && p[0] == '/')
        plen = 0;
    *origin = mcp__asprintf("%s://%s", scheme, host);
    *path = malloc(plen + 1);
    if (*origin == NULL || *path == NULL) {
        free(*origin);
        free(*path);
        *origin = *path = NULL;
        return MCP_ENOMEM;
    }
    memcpy(*path, p, plen);
    (*path)[plen] = '\0';
    return MCP_OK;
}

static int tchar(unsigned char c)
{
    return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A token or quoted-string at p, malloc'd into *out; returns the end (NULL when
 * neither). b64token characters ('/', '=') are taken too (token68). */
static const char *read_value(const char *p, char **out)
{
    mcp__buf b = {0};
    if (*p == '"') {
        for (p++; *p != '\0' && *p != '"'; p++) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            if (mcp__buf_append(&b, p, 1) != MCP_OK)
                goto fail;
        }
        if (*p != '"')
            goto fail;
        p++;
    } else {
        const char *s = p;
        while (tchar((unsigned char)*p) || *p == '/' || *p == '=')
            p++;
        if (p == s || mcp__buf_append(&b, s, (size_t)(p - s)) != MCP_OK)
            goto fail;
    }
    if (mcp__buf_append(&b, "", 1) != MCP_OK)
        goto fail;
    *out = b.data;
    return p;
fail:
    mcp__buf_free(&b);
    return NULL;
}

void mcp__challenge_parse(const char *www_auth, mcp__challenge *c)
{
    memset(c, 0, sizeof(*c));
    const char *p = www_auth;
    int ours = 0; /* inside a Bearer or DPoP challenge */
    while (p != NULL && *p != '\0') {
        p = skip_ows(p);
        if (*p == ',') {
            p++;
            continue;
        }
        const char *s = p;
        while (tchar((unsigned char)*p))
            p++;
        size_t tlen = (size_t)(p - s);
        if (tlen == 0)
            return; /* unreadable: what was read stands */
        const char *q = skip_ows(p);
        if (*q != '=') {
            /* A new challenge: its scheme. Ours when it is Bearer or DPoP and no
             * earlier one of ours was read. */
            if (c->scheme != NULL && ours)
                return;
            ours = (tlen == 6 && strncasecmp(s, "Bearer", 6) == 0) ||
                   (tlen == 4 && strncasecmp(s, "DPoP", 4) == 0);
            if (ours) {
                c->scheme = malloc(tlen + 1);
                if (c->scheme == NULL)
                    return;
                memcpy(c->scheme, s, tlen);
                c->scheme[tlen] = '\0';
            }
            p = q;
            continue;
        }
        char *value = NULL;
        p = read_value(skip_ows(q + 1), &value);
        if (p == NULL)
            return;
        char **slot = NULL;
#define PARAM(n, f)                                                                                \
    if (tlen == sizeof(n) - 1 && strncasecmp(s, n, tlen) == 0)                                     \
        slot = &c->f;
        PARAM("resource_metadata", resource_metadata)
        PARAM("scope", scope)
        PARAM("error", error)
        PARAM("error_description", error_description)
#undef PARAM
        if (ours && slot != NULL && *slot == NULL)
            *slot = value;
        else
            free(value);
    }
}

void mcp__challenge_free(mcp__challenge *c)
{
    free(c->scheme);
    free(c->resource_metadata);
    free(c->scope);
    free(c->error);
    free(c->error_description);
    memset(c, 0, sizeof(*c));
}

char *mcp__oauth_printable(const char *text, size_t max)
{
    size_t n = strlen(text);
    if (n > max)
        n = max;
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        out[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    out[n] = '\0';
    return out;
}
