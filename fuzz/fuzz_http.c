/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: whole HTTP connections into the Streamable HTTP transport
 * (mcp_serve_http over real loopback sockets, see http_harness.h), which puts
 * the HTTP layer (llhttp, limits, pipelining, chunked bodies, streamed
 * answers), routing, Host and Origin checks, sessions, SSE streams, resumes
 * and the legacy HTTP+SSE endpoints under the input.
 *
 * Input: the first byte picks the server's configuration (enum fz_config).
 * The rest is segments separated by NUL bytes, sent in order, each once the
 * server has answered the previous ones. A segment sent on the current
 * connection; one beginning with '+' opens a new connection first (up to four;
 * a GET stream holds its connection). In a segment, "$S" is replaced by the
 * last session id the server gave, "$E" by the last SSE event id, and, in the
 * head (before the first blank line), "$N" by the length of the body after it,
 * so that a mutated body keeps a valid Content-Length.
 *
 * Oracles: the sanitizers (leaks included: every session the input made is
 * deleted at its end), and the server keeps answering.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_harness.h"

#define MAX_CONNS 4

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Expands $S and $E, then $N in the head. */
static void expand(const char *seg, size_t len, const fz_seen *seen, sbuf *out)
{
    sbuf a = {0};
    sb_add(&a, "", 0);
    for (size_t i = 0; i < len; i++) {
        if (seg[i] == '$' && i + 1 < len && seg[i + 1] == 'S') {
            const char *s = seen->nsessions ? seen->session[seen->nsessions - 1] : "nosession";
            sb_add(&a, s, strlen(s));
            i++;
        } else if (seg[i] == '$' && i + 1 < len && seg[i + 1] == 'E') {
            sb_add(&a, seen->event_id, strlen(seen->event_id));
            i++;
        } else {
            sb_add(&a, seg + i, 1);
        }
    }
    const char *blank = memmem(a.p, a.len, "\r\n\r\n", 4);
    size_t head = blank ? (size_t)(blank - a.p) + 4 : a.len;
    char num[32];
    int numlen = snprintf(num, sizeof(num), "%zu", a.len - head);
    out->len = 0;
    sb_add(out, "", 0);
    for (size_t i = 0; i < a.len; i++) {
        if (i < head && a.p[i] == '$' && i + 1 < a.len && a.p[i + 1] == 'N') {
            sb_add(out, num, (size_t)numlen);
            i++;
        } else {
            sb_add(out, a.p + i, 1);
        }
    }
    free(a.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int cfg = data[0] % FZ_NCONFIGS;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    fz_conn conns[MAX_CONNS];
    size_t nconns = 0, cur = 0;
    fz_seen seen = {0};
    sbuf out = {0};
    while (p < end) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        const char *seg_end = z ? z : end;
        const char *seg = p;
        int fresh = seg < seg_end && *seg == '+';
        if (fresh)
            seg++;
        if (nconns == 0 || ((fresh || conns[cur].eof) && nconns < MAX_CONNS)) {
            fz_conn_open(&conns[nconns], cfg);
            cur = nconns++;
        }
        expand(seg, (size_t)(seg_end - seg), &seen, &out);
        fz_conn_send(&conns[cur], cfg, out.p, out.len);
        fz_settle(cfg, conns, nconns);
        for (size_t i = 0; i < nconns; i++)
            fz_scan(&conns[i], &seen);
        p = z ? z + 1 : end;
    }
    free(out.p);
    for (size_t i = 0; i < nconns; i++)
        fz_conn_close(&conns[i]);
    /* Let the server see the connections go, then end what the input began. */
    for (int i = 0; i < 3; i++)
        fz_step(cfg);
    fz_delete_sessions(cfg, &seen);
    for (int i = 0; i < 2; i++)
        fz_step(cfg);
    return 0;
}
