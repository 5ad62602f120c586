/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28's request metadata (basic/index.mdx, _meta): every request
 * carries its protocol version and the client's capabilities, and may carry the
 * client's identity and the least log level it wants, under these keys of
 * params._meta. Shared by the server core, which serves each modern request by them
 * on every transport, and the HTTP transport, which judges them before the headers
 * that mirror them, so that both refuse the same requests with the same words.
 */
#ifndef MCP_PROTOCOL_META_H
#define MCP_PROTOCOL_META_H

#include <jansson.h>

#define MCP__META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP__META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MCP__META_INFO "io.modelcontextprotocol/clientInfo"
#define MCP__META_LEVEL "io.modelcontextprotocol/logLevel"

/*
 * The metadata members of one request, read in one pass over params._meta (no lookup
 * by key, and the keys are long): each borrowed from the request, NULL when absent,
 * whatever its type. is_object says whether _meta is an object at all.
 */
typedef struct mcp__meta {
    const json_t *version, *caps, *info, *level;
    int is_object;
} mcp__meta;

void mcp__meta_read(const json_t *params, mcp__meta *m);

/*
 * Why a modern request with these members is malformed, as the message of its -32602
 * answer (HTTP 400), or NULL when _meta is an object with a string protocolVersion and
 * an object clientCapabilities, and clientInfo and logLevel, when present, are an
 * object and a logging level. Whether the version is one the server speaks is not
 * judged here: a malformed request gets -32602 whatever it names.
 */
const char *mcp__meta_judge(const mcp__meta *m);

#endif
