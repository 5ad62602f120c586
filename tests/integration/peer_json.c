/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC writing of the scripted stdio servers: see peer_json.h.
 */
#include "peer_json.h"

#include <stdio.h>
#include <stdlib.h>

void peer_send(json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL)
        exit(1);
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    free(text);
}

void peer_send_result(const json_t *id, json_t *result)
{
    peer_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

void peer_send_error(const json_t *id, int code, const char *message, json_t *data)
{
    json_t *err = json_pack("{s:i, s:s}", "code", code, "message", message);
    if (data != NULL)
        json_object_set_new(err, "data", data);
    peer_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "error", err));
}
