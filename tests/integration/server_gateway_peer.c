/*
 * A stdio MCP server that misbehaves on request, for the gateway's tests
 * (test_gateway.c): newline-delimited JSON-RPC on stdin and stdout, public
 * jansson only. It answers initialize (2025-11-25, tools), and tools/call by the
 * tool's name:
 *   "exit"       exits at once with status 3, the call unanswered;
 *   "hang"       never answers;
 *   "close_stdin"  closes its stdin, answers, and lives on for 30 s, so that
 *                the gateway's next write fails (EPIPE);
 *   "bad_ids"    first answers ids that were never sent (a string, an unknown
 *                integer, null), then the call itself with "ok";
 *   anything else  answers with the tool's name as text.
 * With --no-init it never answers initialize.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

static void out(json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL)
        exit(1);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
}

static json_t *text_result(json_t *id, const char *text)
{
    return json_pack("{s:s, s:O, s:{s:[{s:s, s:s}]}}", "jsonrpc", "2.0", "id", id, "result",
                     "content", "type", "text", "text", text);
}

int main(int argc, char **argv)
{
    int no_init = argc > 1 && strcmp(argv[1], "--no-init") == 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        json_t *msg = json_loads(line, 0, NULL);
        const char *method = json_string_value(json_object_get(msg, "method"));
        json_t *id = json_object_get(msg, "id");
        if (method == NULL || id == NULL) {
            json_decref(msg);
            continue;
        }
        if (strcmp(method, "initialize") == 0) {
            if (!no_init)
                out(json_pack("{s:s, s:O, s:{s:s, s:{s:{}}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id",
                              id, "result", "protocolVersion", "2025-11-25", "capabilities",
                              "tools", "serverInfo", "name", "gateway-peer", "version", "1"));
        } else if (strcmp(method, "tools/call") == 0) {
            const char *name =
                json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
            name = name != NULL ? name : "";
            if (strcmp(name, "exit") == 0)
                exit(3);
            if (strcmp(name, "close_stdin") == 0) {
                close(0); /* first: once the answer is out, the gateway's writes fail */
                out(text_result(id, "closed"));
                json_decref(msg);
                sleep(30);
                return 0;
            }
            if (strcmp(name, "bad_ids") == 0) {
                json_t *s = json_string("no-such-id"), *n = json_integer(987654321);
                out(text_result(s, "stray"));
                out(text_result(n, "stray"));
                out(text_result(json_null(), "stray"));
                json_decref(s);
                json_decref(n);
            }
            if (strcmp(name, "hang") != 0)
                out(text_result(id, strcmp(name, "bad_ids") == 0 ? "ok" : name));
        } else {
            out(json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result"));
        }
        json_decref(msg);
    }
    free(line);
    return 0;
}
