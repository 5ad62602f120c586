/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the JSON codec (src/protocol/json.c) against jansson's. The
 * input is JSON text, read with and without MCP__JSON_ANY.
 *
 * Oracles: the sanitizers; mcp__json_parse reads a text exactly when json_loadb does,
 * into an equal value, except that a text with a NUL byte is always refused; a value read is
 * written byte for byte as json_dumps (JSON_COMPACT) writes it, and that text reads back to an
 * equal value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_json: %s\n", what);
        abort();
    }
}

static void one(const char *text, size_t len, unsigned flags)
{
    json_error_t e;
    json_t *theirs = json_loadb(text, len, flags & MCP__JSON_ANY ? JSON_DECODE_ANY : 0, NULL);
    json_t *ours = mcp__json_parse(text, len, flags, &e);
    if (memchr(text, '\0', len) != NULL) {
        /* No valid text holds a NUL byte. jansson reads one straight after a number
         * as the end of its buffer ("3\0" is 3); we refuse it wherever it is. */
        check(ours == NULL, "a text with a NUL byte was read");
        json_decref(theirs);
        theirs = NULL;
    }
    check((theirs == NULL) == (ours == NULL), "read where jansson refuses, or the reverse");
    if (ours == NULL) {
        check(e.line >= 1 && e.column >= 1 && e.position >= 0 && (size_t)e.position <= len,
              "an error outside the text");
        return;
    }
    check(json_equal(theirs, ours), "read as another value than jansson's");
    char *dump = json_dumps(ours, JSON_COMPACT | JSON_ENCODE_ANY);
    mcp__buf b = {0};
    int rc = mcp__json_write(&b, ours);
    check(dump != NULL && rc == MCP_OK, "a value read could not be written");
    check(b.len == strlen(dump) && memcmp(b.data, dump, b.len) == 0,
          "written otherwise than jansson writes it");
    json_t *back = mcp__json_parse(b.data, b.len, MCP__JSON_ANY, NULL);
    check(back != NULL && json_equal(back, ours), "what was written does not read back");
    json_decref(back);
    mcp__buf_free(&b);
    free(dump);
    json_decref(theirs);
    json_decref(ours);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one((const char *)data, size, MCP__JSON_ANY);
    one((const char *)data, size, 0);
    return 0;
}
