/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events, both sides: the writer of one event (writer.c, for the
 * servers), and an incremental parser of the text/event-stream format
 * (parser.c, for the HTTP clients). The parser follows the HTML standard's "event stream
 * interpretation" (https://html.spec.whatwg.org/multipage/server-sent-events.html
 * #event-stream-interpretation) to the letter, whatever way the bytes are split
 * across feeds:
 *
 * - The stream is UTF-8: one byte order mark at its very start is skipped (a
 *   later one is text), and each invalid sequence becomes U+FFFD, as the
 *   standard's "UTF-8 decode" does, so every string the parser hands out is
 *   valid UTF-8.
 * - Lines end in CRLF, LF or CR; a CR that ends one feed and an LF that starts
 *   the next are one line end.
 * - A line that starts with ':' is a comment. Otherwise the field name runs up
 *   to the first ':' (the whole line when there is none, with an empty value)
 *   and one space after the colon is dropped from the value. "data" appends
 *   the value and an LF to the data buffer; "event" sets the event type; "id"
 *   sets the last event id unless the value holds a NUL (then the field is
 *   ignored); "retry" sets the reconnection time when the value is one or more
 *   ASCII digits (otherwise it is ignored); other fields are ignored.
 * - A blank line ends a block. The block dispatches an event when its data
 *   buffer is not empty, that is when it had a data line, even "data:" with an
 *   empty value (a priming event: its data is ""). The last event id persists
 *   from block to block until an id field changes it, and an id field with an
 *   empty value sets it to "".
 * - Bytes after the last blank line are an unfinished block: at the end of the
 *   stream they are discarded, never dispatched (there is no "finish" call).
 *
 * The consumer learns everything a client needs: each block through on_block
 * (the event it dispatched, if any, and the last event id, with whether this
 * block set it, so an id-only block that dispatches nothing still tells "an id
 * came"), each valid retry field through on_retry at the moment it is parsed
 * (the standard sets the reconnection time then, not at the blank line), and
 * each comment through on_comment (servers send them as keep-alives).
 *
 * Memory is bounded by max_event, given at init: the data buffer plus the line
 * being read may not pass it. A block that would is dropped: the feed that
 * finds it returns MCP_ELIMIT (once for that block), the rest of the block up
 * to its blank line is skipped without being stored, and its on_block reports
 * dropped = 1 with no event; the parser then goes on with the next block.
 * Fields the dropped block had before the overflow keep their effect, as the
 * standard processes fields line by line: a retry was reported, and an id
 * became the last event id (so a client that resumes from it does not get the
 * oversized event again). Buffers grow by doubling, up to about max_event each
 * (event types, ids and comments are bounded by the line, which is bounded by
 * max_event; a U+FFFD takes three bytes for one invalid byte).
 *
 * A parser is not thread-safe: one thread at a time feeds it.
 */
#ifndef MCP_SSE_SSE_H
#define MCP_SSE_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* max_event when 0 is given to mcp__sse_parser_init. */
#define MCP__SSE_DEFAULT_MAX_EVENT ((size_t)4 * 1024 * 1024)
/* The largest retry reported: a longer reconnection time is capped to this
 * (about 49.7 days), so that adding it to a 64-bit millisecond clock can never
 * overflow, whatever digits a server sends. */
#define MCP__SSE_RETRY_MAX ((uint64_t)UINT32_MAX)

/*
 * What a blank line ended: a block of one or more lines (a blank line after a
 * blank line ends nothing and is not reported). Every pointer is borrowed from
 * the parser and valid only during the on_block call; strings are
 * NUL-terminated, valid UTF-8, and may hold NUL bytes of their own (hence the
 * lengths; an id never does).
 */
typedef struct mcp__sse_block {
    /* The event the block dispatched, when it had a data line; NULL (and 0)
     * when it had none, or when it was dropped: the standard dispatches no
     * event then. */
    const char *data; /* the data lines joined with LF (the final LF removed) */
    size_t data_len;
    const char *type; /* the event field's value, "message" when none or empty */
    size_t type_len;
    /* The last event id after this block: the standard's "last event ID
     * string" of the stream, which a client sends as Last-Event-ID when it
     * reconnects. "" when no id came yet (or the last one was empty). Always
     * set, dispatched event or not. */
    const char *last_event_id;
    size_t last_event_id_len;
    int id_set;      /* 1 when this block had an id field that was taken */
    int dropped;     /* 1 when the block passed max_event and was skipped */
    size_t fields;   /* lines of the block that were not comments (before an overflow) */
    size_t comments; /* comment lines of the block (before an overflow) */
} mcp__sse_block;

/*
 * The consumer's callbacks; each may be NULL. Each returns 0 to go on, or
 * non-zero to stop the feed at once: mcp__sse_parser_feed then returns
 * MCP_ECANCELED without touching the parser again, so a callback that returns
 * non-zero may reset or free the parser (one that returns 0 may do neither,
 * and no callback may feed the parser it is called from).
 * The parser's state is complete before each call: feeding the rest of the
 * input later (from *used) goes on exactly where it stopped.
 */
typedef struct mcp__sse_callbacks {
    /* A blank line ended a block (see mcp__sse_block). */
    int (*on_block)(void *user, const mcp__sse_block *block);
    /* A valid retry field: the reconnection time in milliseconds, capped to
     * MCP__SSE_RETRY_MAX. Called for each such field, equal to the last or not. */
    int (*on_retry)(void *user, uint64_t ms);
    /* A comment line: text is what follows the ':' (a leading space kept),
     * NUL-terminated, valid UTF-8, borrowed for the call. */
    int (*on_comment)(void *user, const char *text, size_t len);
} mcp__sse_callbacks;

/* The parser. Embed it by value; its fields are private. */
typedef struct mcp__sse_parser {
    mcp__sse_callbacks cb;
    void *user;
    size_t max_event;
    mcp__buf line;    /* the unfinished line, when a feed ended inside it */
    mcp__buf data;    /* the data buffer: data lines, each with its LF */
    mcp__buf type;    /* the event type buffer */
    mcp__buf id;      /* the last event id buffer */
    mcp__buf scratch; /* decoding room for ids, types and comments */
    unsigned bom;     /* bytes of a leading byte order mark matched; 3 once past it */
    int after_cr;     /* the last line ended in CR: an LF next is part of that end */
    int discarding;   /* skipping the rest of a dropped block */
    int partial;      /* discarding: the current line already had bytes */
    int dropped, id_set;
    size_t fields, comments;
} mcp__sse_parser;

/*
 * Prepares p for a new stream. max_event bounds the data buffer plus the line
 * being read, in bytes (0: MCP__SSE_DEFAULT_MAX_EVENT). cb is copied (NULL: no
 * callbacks); user is passed to every callback and never touched. Allocates
 * nothing: buffers grow as input needs them.
 */
void mcp__sse_parser_init(mcp__sse_parser *p, size_t max_event, const mcp__sse_callbacks *cb,
                          void *user);
/*
 * Parses len bytes of the stream (data is borrowed for the call; it may hold
 * any bytes). Callbacks run from inside this call. *used (used may be NULL)
 * gets how many bytes were taken; feeding data + *used later goes on where
 * this call stopped. The call stops at the first of these results:
 *   MCP_OK        every byte was taken (*used == len);
 *   MCP_ECANCELED a callback returned non-zero: the call stopped just after the
 *                 line end that made it (the parser may have been freed by it);
 *   MCP_ELIMIT    a block passed max_event: it is being dropped (see above);
 *   MCP_ENOMEM    a buffer could not grow: the block is dropped the same way.
 * After MCP_ELIMIT or MCP_ENOMEM the parser is still usable: feed the rest.
 */
int mcp__sse_parser_feed(mcp__sse_parser *p, const char *data, size_t len, size_t *used);
/*
 * Starts a new stream (a reconnection): everything is forgotten, the last
 * event id included (the standard gives each stream its own buffers), a byte
 * order mark is looked for again, and memory is freed. Callbacks and
 * max_event are kept.
 */
void mcp__sse_parser_reset(mcp__sse_parser *p);
/* Frees p's memory; p may then be initialised again. NULL is allowed. */
void mcp__sse_parser_free(mcp__sse_parser *p);

/* ---- Writing (writer.c) ---- */

/*
 * Appends one SSE event: optional "event:" and "id:" lines, an optional
 * "retry:" (retry_ms >= 0), and the data (which must hold no newline: our
 * JSON never does), ended by a blank line. With data NULL, writes "data: "
 * so parsers dispatch the event (a priming event).
 */
int mcp__sse_event(mcp__buf *b, const char *event, const char *id, int retry_ms, const char *data,
                   size_t len);

#endif
