/* SPDX-License-Identifier: MIT */
/*
 * Base64 (RFC 4648): section 4, the standard alphabet with '=' padding, and
 * section 5, the URL-safe alphabet without padding (tokens that travel in JSON
 * strings, URLs and headers).
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Writes the encoding of in[0..len) to out, '=' padded when pad, and a NUL; returns the
 * number of characters before the NUL. */
static size_t encode_into(const unsigned char *in, size_t len, const char *alphabet, int pad,
                          char *out)
{
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = alphabet[v >> 6 & 63];
        *o++ = alphabet[v & 63];
    }
    if (len - i > 0) {
        unsigned v = (unsigned)in[i] << 16;
        if (len - i == 2)
            v |= (unsigned)in[i + 1] << 8;
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        if (len - i == 2)
            *o++ = alphabet[v >> 6 & 63];
        else if (pad)
            *o++ = '=';
        if (pad)
            *o++ = '=';
    }
    *o = '\0';
    return (size_t)(o - out);
}

char *mcp__base64_encode(const void *data, size_t len)
{
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    encode_into(data, len, std_alphabet, 1, out);
    return out;
}

size_t mcp__base64url_len(size_t len)
{
    return len / 3 * 4 + (len % 3 ? len % 3 + 1 : 0);
}

size_t mcp__base64url_encode(const void *data, size_t len, char *out)
{
    return encode_into(data, len, url_alphabet, 0, out);
}

/* The value of each character in each alphabet, -1 outside it. A table rather than
 * comparisons: on random text (tokens are ciphertext) the comparisons' branches
 * mispredict, which made decoding cost more than the AES-GCM of the same bytes. */
static signed char std_values[256], url_values[256];
static uv_once_t values_once = UV_ONCE_INIT;

static void values_init(void)
{
    memset(std_values, -1, sizeof std_values);
    memset(url_values, -1, sizeof url_values);
    for (int i = 0; i < 64; i++) {
        std_values[(unsigned char)std_alphabet[i]] = (signed char)i;
        url_values[(unsigned char)url_alphabet[i]] = (signed char)i;
    }
}

/* Decodes n characters without padding into out (room for n / 4 * 3 + 2 bytes); returns
 * the number of bytes, or -1 on bad input. In the URL-safe form the bits left over after
 * the last byte must be zero, so that a token has exactly one spelling: "Zh" would
 * otherwise decode as "Zg" does. */
static ptrdiff_t decode_into(const char *text, size_t n, int url, unsigned char *out)
{
    /* A single character left over cannot carry a whole byte. */
    if (n % 4 == 1)
        return -1;
    uv_once(&values_once, values_init);
    const signed char *values = url ? url_values : std_values;
    const unsigned char *t = (const unsigned char *)text;
    size_t o = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        int a = values[t[i]], b = values[t[i + 1]], c = values[t[i + 2]], d = values[t[i + 3]];
        if ((a | b | c | d) < 0)
            return -1;
        unsigned v = (unsigned)a << 18 | (unsigned)b << 12 | (unsigned)c << 6 | (unsigned)d;
        out[o++] = (unsigned char)(v >> 16);
        out[o++] = (unsigned char)(v >> 8);
        out[o++] = (unsigned char)v;
    }
    if (i < n) { /* two or three characters: one or two bytes */
        int a = values[t[i]], b = values[t[i + 1]], c = n - i == 3 ? values[t[i + 2]] : 0;
        if ((a | b | c) < 0)
            return -1;
        unsigned v = (unsigned)a << 18 | (unsigned)b << 12 | (unsigned)c << 6;
        out[o++] = (unsigned char)(v >> 16);
        if (n - i == 3)
            out[o++] = (unsigned char)(v >> 8);
        if (url && (v & (n - i == 3 ? 0xffu : 0xffffu)) != 0)
            return -1;
    }
    return (ptrdiff_t)o;
}

unsigned char *mcp__base64_decode(const char *text, size_t len, size_t *out_len)
{
    /* Padding is optional, but when present it must complete the last quantum: one or
     * two '=' at the very end of input whose length is a multiple of four. */
    size_t pad = 0;
    if (len > 0 && text[len - 1] == '=') {
        pad = (len > 1 && text[len - 2] == '=') ? 2 : 1;
        if (len % 4 != 0)
            return NULL;
    }
    size_t n = len - pad; /* significant characters */
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    ptrdiff_t o = decode_into(text, n, 0, out);
    if (o < 0) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = (size_t)o;
    return out;
}

int mcp__base64url_decode(const char *text, size_t len, unsigned char *out, size_t *out_len)
{
    ptrdiff_t o = decode_into(text, len, 1, out);
    if (o < 0)
        return MCP_EINVAL;
    *out_len = (size_t)o;
    return MCP_OK;
}
