/* SPDX-License-Identifier: MIT */
/*
 * A scripted stdio MCP server for the tests of the client's eras over stdio
 * (test_stdio_client_modern.c): a modern server of revision 2026-07-28 by
 * default, or a legacy one, or one that a probing client must take for legacy
 * (it exits on server/discover, or never answers it). It logs every message it
 * reads, so that tests can tell what the client sent.
 *
 *   server_stdio_peer [--legacy] [--exit-on-probe] [--silent-probe] [--log FILE]
 *                     [--end-listen-after N] [--exit-after-subscribe N]
 *
 * --legacy         initialize only: anything else before it gets -32600
 * --exit-on-probe  exit, without a word, when the first message is server/discover
 * --silent-probe   never answer server/discover (then behave as --legacy)
 * --log FILE       append "METHOD ID" (or "METHOD -" for a notification) per message
 * --end-listen-after N    modern: after acknowledging a subscription, send it N tools
 *                  list changes, then end it gracefully (its result)
 * --exit-after-subscribe N  legacy: after answering resources/subscribe, send N tools
 *                  list changes and an update of the URI, then exit
 *
 * Tools (tools/call by name), in both eras:
 *   echo {text}    answers text
 *   hold           answers nothing; its notifications/cancelled is logged and
 *                  acknowledged by notifications/message "cancelled ID"
 *   ask            modern: input_required (an elicitation, requestState "st-1"), then
 *                  on the retry answers "hello NAME" from the elicitation's content
 *   notify         sends, to each subscription, the notifications it asked for
 *                  (tools list changed; resources updated for its first URI), then
 *                  answers "notified N"
 *   flood {count}  count tools list changes to each subscription, then answers
 *   end_listens    modern: ends every subscription with its result (graceful)
 *   drop_listens   modern: ends every subscription with notifications/cancelled
 *   exit           exits at once
 */
#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_json.h"

#define SUB "io.modelcontextprotocol/subscriptionId"

static bool legacy, exit_on_probe, silent_probe, initialized, first = true;
static int end_listen_after = -1, exit_after_subscribe = -1;
static FILE *logf;

/* Open subscriptions: the listen request's id and filter (modern), or the subscribed
 * URIs (legacy: one entry, id null). */
static json_t *subs;

static void send_result(const json_t *id, json_t *result)
{
    if (!legacy && json_object_get(result, "resultType") == NULL)
        json_object_set_new(result, "resultType", json_string("complete"));
    peer_send_result(id, result);
}

static void send_text(const json_t *id, const char *text)
{
    send_result(id, json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text));
}

static void send_error(const json_t *id, int code, const char *message)
{
    peer_send_error(id, code, message, NULL);
}

static void notify(const char *method, json_t *params)
{
    peer_send(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* A notification of subscription sub (tagged with its id in the modern era). */
static void notify_sub(const json_t *sub, const char *method, json_t *params)
{
    const json_t *id = json_object_get(sub, "id");
    if (!json_is_null(id))
        json_object_set_new(params, "_meta", json_pack("{s:O}", SUB, id));
    notify(method, params);
}

static void notify_all(const char *method, json_t *params)
{
    size_t i;
    json_t *sub;
    json_array_foreach(subs, i, sub)
    {
        const json_t *f = json_object_get(sub, "filter");
        if (json_is_true(json_object_get(f, "toolsListChanged")))
            notify_sub(sub, method, json_deep_copy(params));
    }
    json_decref(params);
}

static int notify_each(void)
{
    int n = 0;
    if (legacy) {
        /* The session's own: the list change always, an update per subscribed URI. */
        notify("notifications/tools/list_changed", json_object());
        n++;
        size_t i;
        json_t *uri;
        json_array_foreach(json_object_get(json_object_get(json_array_get(subs, 0), "filter"),
                                           "resourceSubscriptions"),
                           i, uri)
        {
            notify("notifications/resources/updated", json_pack("{s:O}", "uri", uri));
            n++;
        }
        return n;
    }
    size_t i;
    json_t *sub;
    json_array_foreach(subs, i, sub)
    {
        const json_t *f = json_object_get(sub, "filter");
        if (json_is_true(json_object_get(f, "toolsListChanged"))) {
            notify_sub(sub, "notifications/tools/list_changed", json_object());
            n++;
        }
        const char *uri =
            json_string_value(json_array_get(json_object_get(f, "resourceSubscriptions"), 0));
        if (uri != NULL) {
            notify_sub(sub, "notifications/resources/updated", json_pack("{s:s}", "uri", uri));
            n++;
        }
    }
    return n;
}

static void call_tool(const json_t *id, const json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    const json_t *args = json_object_get(params, "arguments");
    if (name == NULL) {
        send_error(id, -32602, "no tool name");
    } else if (strcmp(name, "echo") == 0) {
        const char *text = json_string_value(json_object_get(args, "text"));
        send_text(id, text != NULL ? text : "");
    } else if (strcmp(name, "hold") == 0) {
        /* no answer */
    } else if (strcmp(name, "ask") == 0) {
        const json_t *resp = json_object_get(params, "inputResponses");
        const char *state = json_string_value(json_object_get(params, "requestState"));
        if (resp == NULL) {
            send_result(id, json_pack("{s:s, s:{s:{s:s, s:{s:s, s:{s:s}}}}, s:s}", "resultType",
                                      "input_required", "inputRequests", "who", "method",
                                      "elicitation/create", "params", "message", "Name?",
                                      "requestedSchema", "type", "object", "requestState", "st-1"));
        } else {
            const char *who = json_string_value(
                json_object_get(json_object_get(json_object_get(resp, "who"), "content"), "name"));
            char text[200];
            snprintf(text, sizeof(text), "hello %s (%s)", who ? who : "?",
                     state != NULL && strcmp(state, "st-1") == 0 ? "state kept" : "state lost");
            send_text(id, text);
        }
    } else if (strcmp(name, "notify") == 0) {
        char text[64];
        snprintf(text, sizeof(text), "notified %d", notify_each());
        send_text(id, text);
    } else if (strcmp(name, "flood") == 0) {
        json_int_t n = json_integer_value(json_object_get(args, "count"));
        for (json_int_t i = 0; i < n; i++)
            notify_all("notifications/tools/list_changed", json_object());
        send_text(id, "flooded");
    } else if (strcmp(name, "end_listens") == 0 || strcmp(name, "drop_listens") == 0) {
        size_t i;
        json_t *sub;
        json_array_foreach(subs, i, sub)
        {
            const json_t *sid = json_object_get(sub, "id");
            if (name[0] == 'e')
                send_result(sid, json_pack("{s:{s:O}}", "_meta", SUB, sid));
            else
                notify("notifications/cancelled",
                       json_pack("{s:O, s:s}", "requestId", sid, "reason", "shutting down"));
        }
        json_array_clear(subs);
        send_text(id, "done");
    } else if (strcmp(name, "exit") == 0) {
        exit(0);
    } else {
        send_error(id, -32602, "unknown tool");
    }
}

static void handle(const json_t *msg)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    const json_t *id = json_object_get(msg, "id");
    const json_t *params = json_object_get(msg, "params");
    if (logf != NULL) {
        char *idtext = id != NULL ? json_dumps(id, JSON_ENCODE_ANY) : NULL;
        fprintf(logf, "%s %s\n", method ? method : "response", idtext ? idtext : "-");
        fflush(logf);
        free(idtext);
    }
    bool was_first = first;
    first = false;
    if (method == NULL)
        return;
    bool probe = strcmp(method, "server/discover") == 0;
    if (probe && was_first && exit_on_probe)
        exit(0);
    if (probe && silent_probe)
        return;
    if (strcmp(method, "notifications/cancelled") == 0) {
        const json_t *rid = json_object_get(params, "requestId");
        size_t i;
        json_t *sub;
        json_array_foreach(subs, i, sub)
        {
            if (json_equal(json_object_get(sub, "id"), rid)) {
                json_array_remove(subs, i);
                break;
            }
        }
        char *text = json_dumps(rid, JSON_ENCODE_ANY);
        char line[100];
        snprintf(line, sizeof(line), "cancelled %s", text ? text : "?");
        free(text);
        notify("notifications/message", json_pack("{s:s, s:s}", "level", "info", "data", line));
        return;
    }
    if (id == NULL)
        return; /* notifications/initialized and the like */
    if (strcmp(method, "initialize") == 0) {
        legacy = true;
        initialized = true;
        const char *v = json_string_value(json_object_get(params, "protocolVersion"));
        send_result(id, json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}}, s:{s:s, s:s}}",
                                  "protocolVersion", v ? v : "2025-11-25", "capabilities", "tools",
                                  "listChanged", 1, "resources", "subscribe", 1, "listChanged", 1,
                                  "serverInfo", "name", "stdio-peer", "version", "1"));
        return;
    }
    if (!initialized && (legacy || silent_probe)) {
        send_error(id, -32600, "Invalid Request: not initialized");
        return;
    }
    if (probe) {
        send_result(id, json_pack("{s:[s], s:{s:{s:b}}, s:{s:{s:s, s:s}}}", "supportedVersions",
                                  "2026-07-28", "capabilities", "tools", "listChanged", 1, "_meta",
                                  "io.modelcontextprotocol/serverInfo", "name", "stdio-peer",
                                  "version", "2"));
    } else if (strcmp(method, "ping") == 0) {
        send_result(id, json_object());
    } else if (strcmp(method, "tools/call") == 0) {
        call_tool(id, params);
    } else if (strcmp(method, "subscriptions/listen") == 0) {
        /* The server has tools and resources, no prompts: promptsListChanged is not
         * acknowledged. */
        json_t *filter = json_deep_copy(json_object_get(params, "notifications"));
        if (!json_is_object(filter))
            filter = json_object();
        json_object_del(filter, "promptsListChanged");
        json_array_append_new(subs, json_pack("{s:O, s:o}", "id", id, "filter", filter));
        notify("notifications/subscriptions/acknowledged",
               json_pack("{s:{s:O}, s:O}", "_meta", SUB, id, "notifications", filter));
        if (end_listen_after >= 0) {
            json_t *sub = json_array_get(subs, json_array_size(subs) - 1);
            for (int i = 0; i < end_listen_after; i++)
                notify_sub(sub, "notifications/tools/list_changed", json_object());
            send_result(id, json_pack("{s:{s:O}}", "_meta", SUB, id));
            json_array_remove(subs, json_array_size(subs) - 1);
        }
    } else if (strcmp(method, "resources/subscribe") == 0 ||
               strcmp(method, "resources/unsubscribe") == 0) {
        if (method[10] == 's') {
            /* The legacy era's one subscription, under a null id. */
            if (json_array_size(subs) == 0)
                json_array_append_new(subs,
                                      json_pack("{s:n, s:{s:b, s:[]}}", "id", "filter",
                                                "toolsListChanged", 1, "resourceSubscriptions"));
            json_array_append(json_object_get(json_object_get(json_array_get(subs, 0), "filter"),
                                              "resourceSubscriptions"),
                              json_object_get(params, "uri"));
        }
        send_result(id, json_object());
        if (exit_after_subscribe >= 0 && method[10] == 's') {
            for (int i = 0; i < exit_after_subscribe; i++)
                notify("notifications/tools/list_changed", json_object());
            notify("notifications/resources/updated",
                   json_pack("{s:O}", "uri", json_object_get(params, "uri")));
            exit(0);
        }
    } else {
        send_error(id, -32601, "Method not found");
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--legacy") == 0)
            legacy = true;
        else if (strcmp(argv[i], "--exit-on-probe") == 0)
            exit_on_probe = legacy = true;
        else if (strcmp(argv[i], "--silent-probe") == 0)
            silent_probe = true;
        else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
            logf = fopen(argv[++i], "a");
        else if (strcmp(argv[i], "--end-listen-after") == 0 && i + 1 < argc)
            end_listen_after = atoi(argv[++i]);
        else if (strcmp(argv[i], "--exit-after-subscribe") == 0 && i + 1 < argc)
            exit_after_subscribe = atoi(argv[++i]);
    }
    subs = json_array();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_t *msg = json_loadb(line, (size_t)n, 0, NULL);
        if (msg != NULL)
            handle(msg);
        json_decref(msg);
    }
    free(line);
    json_decref(subs);
    if (logf != NULL)
        fclose(logf);
    return 0;
}
