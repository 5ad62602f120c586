/* SPDX-License-Identifier: MIT */
/*
 * A scripted stdio MCP server for the tests of the `mcp` command-line client:
 * it declares exactly the capabilities it is told, can refuse initialize or
 * exit before answering it, answers a few methods with fixed results or
 * errors, and writes the method of every message it receives to a log file so
 * that a test can tell what the client sent.
 *
 *   server_cli_peer [--caps JSON] [--version V] [--init-error] [--exit-at-init]
 *                   [--ping-error] [--log FILE] [ANYTHING...]
 *
 * --caps JSON      the capabilities object of the initialize result (default {})
 * --version V      the protocolVersion of the initialize result (default 2025-11-25)
 * --init-error     answer initialize with error -32602 and data
 * --exit-at-init   read initialize, then exit without answering
 * --ping-error     answer ping with error -32000 and data
 * --log FILE       append each received method (or "response") to FILE, one a line
 *
 * Other words are ignored (tests use them to check how the command is named).
 */
#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_json.h"

static const char *caps_text = "{}";
static const char *version = "2025-11-25";
static bool init_error, exit_at_init, ping_error;
static FILE *logf;

static void answer(const char *method, const json_t *id, const json_t *params)
{
    if (strcmp(method, "initialize") == 0) {
        if (exit_at_init)
            exit(0);
        if (init_error) {
            const json_t *requested = json_object_get(params, "protocolVersion");
            peer_send_error(id, -32602, "Unsupported protocol version",
                            json_pack("{s:[s], s:O}", "supported", "1999-01-01", "requested",
                                      requested != NULL ? requested : json_null()));
            return;
        }
        json_t *caps = json_loads(caps_text, 0, NULL);
        if (caps == NULL) {
            fprintf(stderr, "server_cli_peer: --caps is not JSON\n");
            exit(2);
        }
        peer_send_result(id, json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion", version,
                                       "capabilities", caps, "serverInfo", "name", "cli-peer",
                                       "version", "1"));
    } else if (strcmp(method, "ping") == 0) {
        if (ping_error)
            peer_send_error(id, -32000, "Busy", json_pack("{s:i}", "retryAfterMs", 250));
        else
            peer_send_result(id, json_object());
    } else if (strcmp(method, "tools/list") == 0) {
        peer_send_result(id, json_pack("{s:[{s:s, s:{s:s}}]}", "tools", "name", "echo",
                                       "inputSchema", "type", "object"));
    } else if (strcmp(method, "tools/call") == 0) {
        const char *name = json_string_value(json_object_get(params, "name"));
        if (name != NULL && strcmp(name, "explode") == 0)
            peer_send_error(id, -32603, "Tool exploded",
                            json_pack("{s:s, s:b}", "reason", "on purpose", "retry", 0));
        else
            peer_send_result(
                id, json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", "ok"));
    } else if (strcmp(method, "prompts/list") == 0) {
        peer_send_result(id, json_pack("{s:[]}", "prompts"));
    } else if (strcmp(method, "resources/list") == 0) {
        peer_send_result(id, json_pack("{s:[]}", "resources"));
    } else if (strcmp(method, "logging/setLevel") == 0) {
        peer_send_result(id, json_object());
    } else if (strcmp(method, "completion/complete") == 0) {
        peer_send_result(id, json_pack("{s:{s:[s]}}", "completion", "values", "done"));
    } else {
        peer_send_error(id, -32601, "Method not found", NULL);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--caps") == 0 && i + 1 < argc) {
            caps_text = argv[++i];
        } else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
            version = argv[++i];
        } else if (strcmp(argv[i], "--init-error") == 0) {
            init_error = true;
        } else if (strcmp(argv[i], "--exit-at-init") == 0) {
            exit_at_init = true;
        } else if (strcmp(argv[i], "--ping-error") == 0) {
            ping_error = true;
        } else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
            logf = fopen(argv[++i], "a");
            if (logf == NULL) {
                perror("server_cli_peer: --log");
                return 2;
            }
        }
    }

    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        json_t *msg = json_loads(line, 0, NULL);
        if (msg == NULL)
            continue;
        const char *method = json_string_value(json_object_get(msg, "method"));
        if (logf != NULL) {
            fprintf(logf, "%s\n", method != NULL ? method : "response");
            fflush(logf);
        }
        const json_t *id = json_object_get(msg, "id");
        if (method != NULL && id != NULL)
            answer(method, id, json_object_get(msg, "params"));
        json_decref(msg);
    }
    free(line);
    if (logf != NULL)
        fclose(logf);
    return 0;
}
