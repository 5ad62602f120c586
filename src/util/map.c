/* SPDX-License-Identifier: MIT */
/*
 * A string-keyed hash map (FNV-1a, open addressing, linear probing, tombstones).
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct mcp__map_slot {
    char *key; /* NULL: empty; TOMBSTONE: removed */
    void *value;
    uint64_t hash;
};

static char tombstone_mark;
#define TOMBSTONE (&tombstone_mark)

static uint64_t hash_key(const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

static struct mcp__map_slot *find(const mcp__map *m, const char *key, uint64_t h)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = h & (m->cap - 1), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
        struct mcp__map_slot *s = &m->slots[i];
        if (s->key == NULL)
            return NULL;
        if (s->key != TOMBSTONE && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
    return NULL;
}

void *mcp__map_get(const mcp__map *m, const char *key)
{
    struct mcp__map_slot *s = find(m, key, hash_key(key));
    return s ? s->value : NULL;
}

static int grow(mcp__map *m)
{
    size_t cap = m->cap ? m->cap : 16;
    /* Double when truly full; rehash in place-size when mostly tombstones. */
    if (m->len * 2 >= m->cap)
        cap = m->cap ? m->cap * 2 : 16;
    struct mcp__map_slot *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return MCP_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct mcp__map_slot *s = &m->slots[i];
        if (s->key == NULL || s->key == TOMBSTONE)
            continue;
        size_t j = s->hash & (cap - 1);
        while (slots[j].key != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->used = m->len;
    return MCP_OK;
}

int mcp__map_put(mcp__map *m, const char *key, void *value)
{
    uint64_t h = hash_key(key);
    struct mcp__map_slot *s = find(m, key, h);
    if (s != NULL) {
        s->value = value;
        return MCP_OK;
    }
    /* Keep the load (with tombstones) under 3/4 so probes stay short. */
    if ((m->used + 1) * 4 > m->cap * 3 && grow(m) != MCP_OK)
        return MCP_ENOMEM;
    char *copy = mcp__strdup(key);
    if (copy == NULL)
        return MCP_ENOMEM;
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key != NULL && m->slots[i].key != TOMBSTONE)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == NULL)
        m->used++;
    m->slots[i].key = copy;
    m->slots[i].value = value;
    m->slots[i].hash = h;
    m->len++;
    return MCP_OK;
}

void *mcp__map_remove(mcp__map *m, const char *key)
{
    struct mcp__map_slot *s = find(m, key, hash_key(key));
    if (s == NULL)
        return NULL;
    void *v = s->value;
    free(s->key);
    s->key = TOMBSTONE;
    s->value = NULL;
    m->len--;
    return v;
}

int mcp__map_next(const mcp__map *m, size_t *pos, const char **key, void **value)
{
    while (*pos < m->cap) {
        struct mcp__map_slot *s = &m->slots[(*pos)++];
        if (s->key != NULL && s->key != TOMBSTONE) {
            if (key != NULL)
                *key = s->key;
            if (value != NULL)
                *value = s->value;
            return 1;
        }
    }
    return 0;
}

void mcp__map_free(mcp__map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != NULL && m->slots[i].key != TOMBSTONE)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}
