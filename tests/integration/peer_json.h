/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC writing of the scripted stdio servers (server_cli_peer.c,
 * server_stdio_peer.c): one compact message a line on stdout, flushed.
 */
#ifndef MCP_TESTS_INTEGRATION_PEER_JSON_H
#define MCP_TESTS_INTEGRATION_PEER_JSON_H

#include <jansson.h>

/* Writes msg (stolen) as one line; exits 1 when it cannot be serialised. */
void peer_send(json_t *msg);
/* {"jsonrpc","id","result": result (stolen)} */
void peer_send_result(const json_t *id, json_t *result);
/* {"jsonrpc","id","error":{code, message, data (stolen, may be NULL)}} */
void peer_send_error(const json_t *id, int code, const char *message, json_t *data);

#endif
