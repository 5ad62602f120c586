/* SPDX-License-Identifier: MIT */
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
 *   "ask"        asks the client (elicitation/create) and answers with what came
 *                back: "answer:" and the result, or "error:" and the error's message;
 *   "ask2"       the same, twice in a row: elicitation, then sampling;
 *   "roots"      the same with roots/list;
 *   "ask_answer" asks the client (elicitation/create) and answers the call at once
 *                with "done", without waiting for the client's answer;
 *   "log"        sends a log (notifications/message, info) first;
 *   "big"        answers with a text of 64 KiB (the id before the result);
 *   "big_note"   sends a log notification of 64 KiB, then answers "done";
 *   "big_id_last"  the same, with the id after the result (as the TypeScript SDK
 *                writes it);
 *   "flood"      sends the client 1,124 roots/list requests (ids "f-1", ...), and
 *                answers with "flooded" without waiting for them;
 *   "flood_count"  answers with how many of those requests were answered with an
 *                error so far, as text;
 *   anything else  answers with the tool's name as text.
 * It speaks only the older revisions: server/discover gets -32601, and any other
 * request an empty result.
 * With --no-init it never answers initialize; with --init-delay-ms N it answers it
 * N ms late; with --subscribe it offers resources with subscriptions too. With
 * --roots-on-initialized N it sends N roots/list requests (ids "early-1" ...) the
 * moment notifications/initialized comes, as server-filesystem does (then "peer: sent
 * N roots/list" on stderr), and writes each
 * answer to stderr as it comes ("peer: early-1 answer:{...}" or "peer: early-1
 * error:MESSAGE"); the tool "early" answers with every one so far. --early-pad BYTES
 * makes each of those requests that much larger (params.pad).
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

/* A question to the client (the n-th of a call): elicitation, sampling or roots. */
static void ask(const char *method, int n)
{
    char id[16];
    snprintf(id, sizeof id, "q-%d", n);
    json_t *params =
        strcmp(method, "elicitation/create") == 0
            ? json_pack("{s:s, s:{s:s, s:{s:{s:s}}}}", "message", "your name?", "requestedSchema",
                        "type", "object", "properties", "name", "type", "string")
        : strcmp(method, "sampling/createMessage") == 0
            ? json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user", "content",
                        "type", "text", "text", "2+2?", "maxTokens", 10)
            : json_object();
    out(json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method", method, "params",
                  params));
}

int main(int argc, char **argv)
{
    int no_init = 0, init_delay_ms = 0, subscribe = 0, early = 0;
    size_t early_pad = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-init") == 0)
            no_init = 1;
        else if (strcmp(argv[i], "--subscribe") == 0)
            subscribe = 1;
        else if (strcmp(argv[i], "--init-delay-ms") == 0 && i + 1 < argc)
            init_delay_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--roots-on-initialized") == 0 && i + 1 < argc)
            early = atoi(argv[++i]);
        else if (strcmp(argv[i], "--early-pad") == 0 && i + 1 < argc)
            early_pad = (size_t)atol(argv[++i]);
    }
    char *line = NULL;
    size_t cap = 0;
    /* The call whose questions are out, and what it still asks after the answer. */
    json_t *asking = NULL;
    const char *next_question = NULL;
    char answers[2048] = "";
    int asked = 0, flood_errors = 0;
    char early_answers[8192] = "";
    while (getline(&line, &cap, stdin) > 0) {
        json_t *msg = json_loads(line, 0, NULL);
        const char *method = json_string_value(json_object_get(msg, "method"));
        json_t *id = json_object_get(msg, "id");
        if (method != NULL && id == NULL && early > 0 &&
            strcmp(method, "notifications/initialized") == 0) {
            for (int i = 1; i <= early; i++) {
                char eid[32];
                snprintf(eid, sizeof eid, "early-%d", i);
                json_t *params = json_object();
                if (early_pad > 0) {
                    char *pad = malloc(early_pad + 1);
                    if (pad == NULL)
                        exit(1);
                    memset(pad, 'x', early_pad);
                    pad[early_pad] = '\0';
                    json_object_set_new(params, "pad", json_string(pad));
                    free(pad);
                }
                out(json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc", "2.0", "id", eid, "method",
                              "roots/list", "params", params));
            }
            fprintf(stderr, "peer: sent %d roots/list\n", early);
        }
        const char *sid = json_string_value(id);
        if (method == NULL && sid != NULL && strncmp(sid, "early-", 6) == 0) {
            json_t *result = json_object_get(msg, "result");
            char *text = result != NULL ? json_dumps(result, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
            char one[1024];
            snprintf(one, sizeof one, "%s %s%s", sid, result != NULL ? "answer:" : "error:",
                     result != NULL ? (text != NULL ? text : "?")
                                    : json_string_value(json_object_get(
                                          json_object_get(msg, "error"), "message")));
            free(text);
            fprintf(stderr, "peer: %s\n", one);
            size_t n = strlen(early_answers);
            snprintf(early_answers + n, sizeof early_answers - n, "%s%s", n > 0 ? "\n" : "", one);
            json_decref(msg);
            continue;
        }
        if (method == NULL && id != NULL && asking != NULL) {
            /* The client's answer to our question. */
            json_t *result = json_object_get(msg, "result");
            char *text = result != NULL ? json_dumps(result, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
            size_t n = strlen(answers);
            snprintf(answers + n, sizeof answers - n, "%s%s%s", n > 0 ? " " : "",
                     result != NULL ? "answer:" : "error:",
                     result != NULL ? (text != NULL ? text : "?")
                                    : json_string_value(json_object_get(
                                          json_object_get(msg, "error"), "message")));
            free(text);
            if (next_question != NULL) {
                ask(next_question, ++asked);
                next_question = NULL;
            } else {
                out(text_result(asking, answers));
                json_decref(asking);
                asking = NULL;
                answers[0] = '\0';
            }
            json_decref(msg);
            continue;
        }
        if (method == NULL && json_is_string(id) && strncmp(json_string_value(id), "f-", 2) == 0) {
            flood_errors += json_object_get(msg, "error") != NULL;
            json_decref(msg);
            continue;
        }
        if (method == NULL || id == NULL) {
            json_decref(msg);
            continue;
        }
        if (strcmp(method, "server/discover") == 0) {
            out(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
                          -32601, "message", "Method not found"));
        } else if (strcmp(method, "initialize") == 0) {
            if (init_delay_ms > 0)
                usleep((useconds_t)init_delay_ms * 1000);
            json_t *caps = json_pack("{s:{}}", "tools");
            if (subscribe)
                json_object_set_new(caps, "resources",
                                    json_pack("{s:b, s:b}", "subscribe", 1, "listChanged", 1));
            if (!no_init)
                out(json_pack("{s:s, s:O, s:{s:s, s:o, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id", id,
                              "result", "protocolVersion", "2025-11-25", "capabilities", caps,
                              "serverInfo", "name", "gateway-peer", "version", "1"));
            else
                json_decref(caps);
        } else if (strcmp(method, "tools/call") == 0) {
            const char *name =
                json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
            name = name != NULL ? name : "";
            if (strcmp(name, "exit") == 0)
                exit(3);
            if (strcmp(name, "ask") == 0 || strcmp(name, "ask2") == 0 ||
                strcmp(name, "roots") == 0) {
                json_decref(asking);
                asking = json_incref(id);
                next_question = strcmp(name, "ask2") == 0 ? "sampling/createMessage" : NULL;
                ask(strcmp(name, "roots") == 0 ? "roots/list" : "elicitation/create", ++asked);
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "early") == 0) {
                out(text_result(id, early_answers));
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "ask_answer") == 0) {
                ask("elicitation/create", ++asked);
                out(text_result(id, "done"));
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "big_note") == 0) {
                static char note[65536];
                memset(note, 'x', sizeof note - 1);
                out(json_pack("{s:s, s:s, s:{s:s, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/message", "params", "level", "info", "data", note));
                out(text_result(id, "done"));
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "big") == 0 || strcmp(name, "big_id_last") == 0) {
                static char text[65536];
                memset(text, 'x', sizeof text - 1);
                json_t *r = text_result(id, text);
                if (strcmp(name, "big_id_last") == 0) {
                    /* The id last: take it out and print it after the rest, which
                     * holds an "id" of its own deeper down. */
                    char *idtext = json_dumps(id, JSON_ENCODE_ANY);
                    json_object_del(r, "id");
                    json_object_set_new(json_object_get(r, "result"), "structuredContent",
                                        json_pack("{s:i}", "id", 424242));
                    char *rest = json_dumps(r, JSON_COMPACT);
                    rest[strlen(rest) - 1] = '\0';
                    printf("%s,\"id\":%s}\n", rest, idtext);
                    fflush(stdout);
                    free(rest);
                    free(idtext);
                    json_decref(r);
                } else {
                    out(r);
                }
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "flood") == 0 || strcmp(name, "flood_count") == 0) {
                for (int i = 1; strcmp(name, "flood") == 0 && i <= 1124; i++) {
                    char fid[16];
                    snprintf(fid, sizeof fid, "f-%d", i);
                    out(json_pack("{s:s, s:s, s:s, s:{}}", "jsonrpc", "2.0", "id", fid, "method",
                                  "roots/list", "params"));
                }
                char count[32];
                snprintf(count, sizeof count, "%d", flood_errors);
                out(text_result(id, strcmp(name, "flood") == 0 ? "flooded" : count));
                json_decref(msg);
                continue;
            }
            if (strcmp(name, "log") == 0)
                out(json_pack("{s:s, s:s, s:{s:s, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/message", "params", "level", "info", "data",
                              "a log line"));
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
    json_decref(asking);
    return 0;
}
