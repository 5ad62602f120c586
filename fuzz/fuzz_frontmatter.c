/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a SKILL.md's frontmatter (src/protocol/frontmatter.c). The input
 * is the file's bytes, as mcp_server_add_skills reads them (any bytes: the reader
 * must refuse what is not text, not crash on it).
 *
 * Oracles: the sanitizers, libFuzzer's -timeout (reading is linear in the lines),
 * and the result: a JSON object, or NULL with a reason that is not empty.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/frontmatter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    json_t *fm = mcp__frontmatter_parse((const char *)data, size, why, sizeof why);
    if (fm == NULL ? why[0] == '\0' : !json_is_object(fm)) {
        fprintf(stderr, "fuzz_frontmatter: %s\n", fm == NULL ? "no reason" : "not an object");
        abort();
    }
    json_decref(fm);
    return 0;
}
