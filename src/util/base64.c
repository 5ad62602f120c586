/*
 * Base64 (RFC 4648, section 4: the standard alphabet with '=' padding).
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "util.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mcp__base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return NULL;
    size_t olen = (len + 2) / 3 * 4;
    char *out = malloc(olen + 1);
    if (!out)
        return NULL;
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = alphabet[v >> 6 & 63];
        *o++ = alphabet[v & 63];
    }
    if (len - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (len - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = alphabet[v >> 6 & 63];
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int decode_char(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
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
    /* A single character left over cannot carry a whole byte. */
    if (n % 4 == 1)
        return NULL;
    size_t olen = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    unsigned char *out = malloc(olen + 1);
    if (!out)
        return NULL;
    unsigned acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int v = decode_char((unsigned char)text[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6 | (unsigned)v) & 0xffffu;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}
