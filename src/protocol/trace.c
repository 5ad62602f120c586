/* SPDX-License-Identifier: MIT */
/*
 * W3C Trace Context in _meta (revision 2026-07-28, basic/index.mdx: "traceparent",
 * "tracestate" and "baggage" are reserved for OpenTelemetry): the checks a receiver
 * makes before it continues a trace, and a new traceparent for a client that starts
 * one.
 */
#include <string.h>

#include <mcp/common.h>

#include "protocol/trace.h"
#include "util/util.h"

static int lower_hex(const char *s, size_t n)
{
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
        nonzero |= c != '0';
    }
    return nonzero ? 1 : -1; /* -1: all zero */
}

int mcp_traceparent_valid(const char *s)
{
    /* version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2. */
    if (s == NULL || strlen(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return 0;
    if (lower_hex(s, 2) == 0 || strncmp(s, "ff", 2) == 0)
        return 0;
    if (lower_hex(s + 3, 32) != 1 || lower_hex(s + 36, 16) != 1 || lower_hex(s + 53, 2) == 0)
        return 0;
    /* Version 00 is exactly that long; a later version may add fields after a '-'. */
    if (strncmp(s, "00", 2) == 0)
        return s[55] == '\0';
    return s[55] == '\0' || s[55] == '-';
}

/* Printable ASCII (a header's value could carry it as it is), up to max bytes. */
static int printable(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if (n >= max || (unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e)
            return 0;
    return 1;
}

void mcp__trace_read(const json_t *meta, mcp__trace *t)
{
    memset(t, 0, sizeof(*t));
    const char *tp = json_string_value(json_object_get(meta, "traceparent"));
    if (!mcp_traceparent_valid(tp))
        return; /* without a parent, the rest means nothing */
    t->traceparent = tp;
    const char *ts = json_string_value(json_object_get(meta, "tracestate"));
    if (ts != NULL && printable(ts, MCP__TRACESTATE_MAX))
        t->tracestate = ts;
    const char *bg = json_string_value(json_object_get(meta, "baggage"));
    if (bg != NULL && printable(bg, MCP__BAGGAGE_MAX))
        t->baggage = bg;
}

void mcp__trace_id(const json_t *params, char out[33])
{
    const char *tp =
        json_string_value(json_object_get(json_object_get(params, "_meta"), "traceparent"));
    if (mcp_traceparent_valid(tp)) {
        memcpy(out, tp + 3, 32);
        out[32] = '\0';
    } else {
        out[0] = '\0';
    }
}

int mcp__trace_new(char out[56])
{
    unsigned char r[24];
    if (mcp__random_bytes(r, sizeof(r)) != MCP_OK)
        return MCP_EIO;
    static const char hex[] = "0123456789abcdef";
    char *p = out;
    memcpy(p, "00-", 3);
    p += 3;
    for (int i = 0; i < 16; i++, p += 2)
        p[0] = hex[r[i] >> 4], p[1] = hex[r[i] & 15];
    *p++ = '-';
    for (int i = 16; i < 24; i++, p += 2)
        p[0] = hex[r[i] >> 4], p[1] = hex[r[i] & 15];
    memcpy(p, "-01", 4); /* sampled */
    /* All-zero ids are invalid: astronomically unlikely, but made impossible. */
    if (!mcp_traceparent_valid(out))
        out[34] = out[51] = '1';
    return MCP_OK;
}
