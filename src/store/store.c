/* SPDX-License-Identifier: MIT */
/*
 * The event store wrapper: a vtable and its state, so the transport never
 * knows which store it talks to.
 */
#include <stddef.h>
#include <stdlib.h>

#include <mcp/store.h>

#include "util/util.h"

/* An ops table of size 0 was written for the five operations of libmcp 0.1 before
 * attach: what lies past them in the caller's struct is not to be read. */
#define OPS_V1_SIZE offsetof(mcp_event_store_ops, attach)

struct mcp_event_store {
    mcp_event_store_ops ops; /* the caller's, with what it did not know of as NULL */
    void *self;
};

mcp_event_store *mcp_event_store_new(const mcp_event_store_ops *ops, void *self)
{
    mcp_event_store_ops o;
    if (ops == NULL || mcp__opts_copy(&o, sizeof(o), ops, OPS_V1_SIZE) != MCP_OK ||
        o.append == NULL || o.replay == NULL)
        return NULL;
    mcp_event_store *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->ops = o;
    s->self = self;
    return s;
}

void mcp_event_store_free(mcp_event_store *store)
{
    if (store == NULL)
        return;
    if (store->ops.destroy != NULL)
        store->ops.destroy(store->self);
    free(store);
}

int mcp_event_store_append(mcp_event_store *store, const char *session, uint64_t stream,
                           uint64_t seq, const char *data, size_t len)
{
    return store->ops.append(store->self, session, stream, seq, data, len);
}

int mcp_event_store_replay(mcp_event_store *store, const char *session, uint64_t stream,
                           uint64_t after_seq, mcp_event_fn emit, mcp_replay_done_fn done,
                           void *arg)
{
    return store->ops.replay(store->self, session, stream, after_seq, emit, done, arg);
}

void mcp_event_store_drop_session(mcp_event_store *store, const char *session)
{
    if (store->ops.drop_session != NULL)
        store->ops.drop_session(store->self, session);
}

void mcp_event_store_expire(mcp_event_store *store)
{
    if (store->ops.expire != NULL)
        store->ops.expire(store->self);
}

int mcp_event_store_attach(mcp_event_store *store, struct uv_loop_s *loop)
{
    if (store->ops.attach == NULL)
        return MCP_OK;
    return store->ops.attach(store->self, loop);
}

void mcp_event_store_detach(mcp_event_store *store, struct uv_loop_s *loop)
{
    if (store->ops.detach != NULL)
        store->ops.detach(store->self, loop);
}
