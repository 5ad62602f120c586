/* SPDX-License-Identifier: MIT */
/*
 * The cache of verified tokens: keyed by a hash of the token, bounded in count,
 * never past a deadline; see auth.h.
 */
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "util/seal.h"

typedef struct mcp__token_entry {
    struct mcp__token_entry *prev, *next; /* the LRU list, most recent first */
    char key[65];
    mcp_principal *principal;
    uint64_t deadline_ms;
} token_entry;

void mcp__token_cache_init(mcp__token_cache *c, size_t max)
{
    memset(c, 0, sizeof(*c));
    c->max = max > 0 ? max : 1;
}

static void entry_drop(mcp__token_cache *c, token_entry *e)
{
    mcp__map_remove(&c->map, e->key);
    if (c->lru_tail == e)
        c->lru_tail = e->prev;
    MCP__LIST_UNLINK(c->lru, e);
    c->len--;
    mcp__principal_unref(e->principal);
    free(e);
}

void mcp__token_cache_free(mcp__token_cache *c)
{
    while (c->lru != NULL)
        entry_drop(c, c->lru);
    mcp__map_free(&c->map);
    memset(c, 0, sizeof(*c));
}

mcp_principal *mcp__token_cache_get(mcp__token_cache *c, const char *key, uint64_t now_ms,
                                    uint64_t *deadline_ms)
{
    token_entry *e = mcp__map_get(&c->map, key);
    if (e == NULL)
        return NULL;
    if (now_ms >= e->deadline_ms) {
        entry_drop(c, e);
        return NULL;
    }
    if (c->lru != e) { /* to the front */
        if (c->lru_tail == e)
            c->lru_tail = e->prev;
        MCP__LIST_UNLINK(c->lru, e);
        MCP__LIST_PUSH(c->lru, e);
    }
    if (deadline_ms != NULL)
        *deadline_ms = e->deadline_ms;
    return e->principal;
}

int mcp__token_cache_put(mcp__token_cache *c, const char *key, mcp_principal *p,
                         uint64_t deadline_ms)
{
    token_entry *old = mcp__map_get(&c->map, key);
    if (old != NULL)
        entry_drop(c, old);
    while (c->len >= c->max && c->lru_tail != NULL)
        entry_drop(c, c->lru_tail);
    token_entry *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return MCP_ENOMEM;
    memcpy(e->key, key, 64);
    e->key[64] = '\0';
    if (mcp__map_put(&c->map, e->key, e) != MCP_OK) {
        free(e);
        return MCP_ENOMEM;
    }
    e->principal = mcp__principal_ref(p);
    e->deadline_ms = deadline_ms;
    MCP__LIST_PUSH(c->lru, e);
    if (c->lru_tail == NULL)
        c->lru_tail = e;
    c->len++;
    return MCP_OK;
}

int mcp__token_key(const char *token, size_t len, char key[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char d[32];
    if (mcp__sha256(token, len, d) != MCP_OK)
        return MCP_EIO;
    for (size_t i = 0; i < 32; i++) {
        key[2 * i] = hex[d[i] >> 4];
        key[2 * i + 1] = hex[d[i] & 15];
    }
    key[64] = '\0';
    return MCP_OK;
}
