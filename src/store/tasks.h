/* SPDX-License-Identifier: MIT */
/*
 * Task stores: where the tasks of the extension io.modelcontextprotocol/tasks live, so
 * that any node of a deployment answers tasks/get, tasks/update and tasks/cancel for a
 * task another node made (server/tasks.c uses a store; the memory store here serves one
 * process, the Redis store, store/redis/tasks.c, every node that shares the server).
 *
 * A task is a record, a JSON object whose members the store reads and changes:
 *   id, owner      strings: its id, and who may use it ("" on an open server)
 *   status         "working", "input_required", "completed", "failed", "cancelled"
 *   created, updated, expires   wall-clock milliseconds; the record is forgotten at
 *                  expires (and, in the memory store, so is its place in the bounds)
 *   request        the tools/call params that made it (name, arguments, _meta)
 *   answers        key -> {"h": the digest of the question, "a": the answer}
 *   inputs         input_required: the questions outstanding, key -> {method, params}
 *   state          the handler's kept state, carried to its next run
 *   rounds         runs of the handler that ended in questions
 *   result, error  completed, failed
 *   cancel         true once tasks/cancel came
 *   run            the run of the handler now under way ("<node>:<n>"), or absent
 * A terminal record keeps id, owner, status, times and result or error only.
 *
 * The operations are asynchronous: each ends with its callback, maybe before it
 * returns (the memory store always), on the loop thread it was called on; the record
 * given to the callback is borrowed for the call. A store a runtime uses may be shared
 * by the runtimes of one process (the memory store: it locks) or by the nodes of a
 * deployment (Redis: every change is one atomic script).
 */
#ifndef MCP_STORE_TASKS_H
#define MCP_STORE_TASKS_H

#include <jansson.h>
#include <stddef.h>

/* status: MCP_OK with the record (after the change); MCP_ENOENT when there is no such task
 * for this owner (never made, expired, or another owner's); MCP_ELIMIT (create: a bound);
 * MCP_ESTATE (a change that does not apply: see each); MCP_ECLOSED when the store cannot be
 * asked; MCP_ENOMEM. */
typedef void (*mcp__task_cb)(void *arg, int status, const json_t *rec);

typedef struct mcp__task_store_ops {
    /* Keeps the new record rec (its expires set) unless the owner holds max_owner
     * unexpired tasks or the store max_total. The callback gets rec. */
    void (*create)(void *self, const json_t *rec, size_t max_owner, size_t max_total,
                   mcp__task_cb cb, void *arg);
    void (*get)(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg);
    /* tasks/update: answers (key -> {"h", "a"}) are filed for the keys still in inputs
     * (others ignored). When that leaves none outstanding, the task goes back to
     * "working" under the new run `run` (its handler is to run again: the callback's
     * record then names run). MCP_ESTATE (nothing changed) unless the task is
     * input_required. */
    void (*answer)(void *self, const char *id, const char *owner, const json_t *answers,
                   const char *run, mcp__task_cb cb, void *arg);
    /* tasks/cancel: marks it; a task without a run (waiting for input) ends "cancelled"
     * at once; one with a run keeps it (the caller stops that run, which files the end).
     * MCP_ESTATE (nothing changed) for a terminal task. */
    void (*cancel)(void *self, const char *id, const char *owner, mcp__task_cb cb, void *arg);
    /* The run `run` ended with outcome: {"status": "completed", "result"} or {"status":
     * "failed", "error"} or {"status": "input_required", "inputs", "state"?} (rounds
     * counts it). A task marked for cancel ends "cancelled" whatever the outcome. Only
     * while run is the task's run (MCP_ESTATE otherwise: it expired and was made anew,
     * or another node took it for lost). cb may be NULL. */
    void (*finish)(void *self, const char *id, const char *run, const json_t *outcome,
                   mcp__task_cb cb, void *arg);
    /* Forgets what has expired (the memory store; NULL for a store that expires by
     * itself). */
    void (*expire)(void *self);
} mcp__task_store_ops;

typedef struct mcp__task_store {
    const mcp__task_store_ops *ops;
    void *self;
} mcp__task_store;

/* The in-memory store (thread-safe: every runtime of a process may share it), which keeps
 * its records' compact JSON texts within max_bytes in all: a create past it is MCP_ELIMIT, an
 * answer too, and a finish whose outcome does not fit files the task failed instead. NULL
 * on ENOMEM. */
mcp__task_store *mcp__task_memory_new(size_t max_bytes);
void mcp__task_memory_set_budget(mcp__task_store *store, size_t max_bytes);
void mcp__task_memory_free(mcp__task_store *store);
/* How many records it holds, and their bytes into *bytes (may be NULL). */
size_t mcp__task_memory_count(mcp__task_store *store, size_t *bytes);

/* ---- The record rules, shared by every store ---- */

/* True for completed, failed and cancelled. */
int mcp__task_terminal(const char *status);
/* Sets status and updated (now); a terminal status drops what only a live task needs. */
void mcp__task_set_status(json_t *rec, const char *status, long long now_ms);
/* Applies answer, cancel and finish to rec in place, as the ops above say: MCP_OK or
 * MCP_ESTATE. now_ms is the wall clock. */
int mcp__task_apply_answer(json_t *rec, const json_t *answers, const char *run, long long now_ms);
int mcp__task_apply_cancel(json_t *rec, long long now_ms);
int mcp__task_apply_finish(json_t *rec, const char *run, const json_t *outcome, long long now_ms);

#endif
