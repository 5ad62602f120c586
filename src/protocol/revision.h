/* SPDX-License-Identifier: MIT */
/*
 * The protocol revisions we speak, one row each, and every rule that differs
 * between them. Code that behaves differently for different clients looks the
 * rule up in the row of the session's negotiated revision instead of comparing
 * version strings, so a new revision is a new row plus the rules that are
 * really new.
 *
 * The rows are static and never change: a `const mcp__revision *` may be kept
 * for as long as the process runs and read from any thread.
 */
#ifndef MCP_PROTOCOL_REVISION_H
#define MCP_PROTOCOL_REVISION_H

#include <stddef.h>

typedef struct mcp__revision {
    /* "2025-11-25": the protocolVersion of initialize and of the MCP-Protocol-Version
     * header (one of the MCP_PROTOCOL_* strings of mcp/common.h). */
    const char *version;
    /* JSON-RPC batches may be sent and must be accepted. Only 2025-03-26 has them:
     * 2025-06-18 removed them again. */
    int batches;
    /* SSE streams may begin with a priming event (an id and empty data) and be
     * closed by the server for the client to resume them (SEP-1699 polling).
     * 2025-11-25 and later: older clients' parsers fail on an event with empty data. */
    int priming;
    /* An HTTP client sends MCP-Protocol-Version on every request after
     * initialize. 2025-06-18 and later. A server still serves a request without
     * it by the session's negotiated revision (the spec assumes 2025-03-26 only
     * when nothing else tells). */
    int protocol_version_header;
    /* The server may ask the client for input (elicitation/create). 2025-06-18 and
     * later; a client of an older revision cannot be asked, whatever it declared. */
    int elicitation;
    /* The error code of resources/read and resources/subscribe for an unknown URI:
     * -32002 until 2025-11-25; 2026-07-28 makes it -32602, Invalid Params. */
    int resource_not_found;
    /* The modern era (2026-07-28 and later): no initialize and no session; every
     * request carries its revision, client capabilities and client info in _meta;
     * server requests become Multi Round-Trip Requests (InputRequiredResult);
     * subscriptions/listen replaces the GET stream; results carry resultType; no
     * resumability. A legacy row (0) is opened by initialize. */
    int modern;
} mcp__revision;

/* The row of `version`, or NULL when it is NULL or not a revision we speak. */
const mcp__revision *mcp__revision_find(const char *version);

/* The newest legacy revision: what initialize offers, and answers a client whose
 * version we lack. */
const mcp__revision *mcp__revision_latest(void);

/* The newest modern revision (2026-07-28). */
const mcp__revision *mcp__revision_modern(void);

/* The legacy row of `version` (as mcp__revision_find, but NULL for a modern one): what
 * initialize and a session's MCP-Protocol-Version header may name. */
const mcp__revision *mcp__revision_find_legacy(const char *version);
/* Whether method is one of the older revisions' that 2026-07-28 removed (changelog 2, 4,
 * 5): unknown to a request of that revision. */
int mcp__revision_removed_method(const char *method);

/* How many revisions we speak, both eras, and the i-th of them counting from the
 * newest (0 is mcp__revision_modern()), or NULL when i is past the oldest. */
size_t mcp__revision_count(void);
const mcp__revision *mcp__revision_at(size_t i);

/*
 * Writes the versions of the rows for which keep(row) is true (every row when
 * keep is NULL), newest first and separated by ", ", into out as a string of at
 * most size - 1 bytes; what does not fit is left out. Returns out. For error
 * messages that name what we speak ("supported versions: ...").
 */
const char *mcp__revision_list(char *out, size_t size, int (*keep)(const mcp__revision *rev));

/* The message of the -32600 error that refuses a batch where the revision has
 * none, naming the revisions that do; written into out as mcp__revision_list does. */
const char *mcp__revision_batch_refusal(char *out, size_t size);

#endif
