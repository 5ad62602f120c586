/* SPDX-License-Identifier: MIT */
/*
 * mcp subscribe: opens a subscription to the server's change notifications
 * (mcp_client_listen: subscriptions/listen in revision 2026-07-28, the session's
 * notifications and resources/subscribe in the older ones) and prints each
 * notification as it comes, until SIGINT or SIGTERM, or until the subscription
 * ends.
 *
 * The notifications arrive on the client's loop thread; the main thread waits in
 * sigwait() for SIGINT, SIGTERM or the SIGUSR1 that the subscription's end sends
 * it. The three are blocked before the client starts its threads, which inherit
 * the mask, so that only that sigwait() takes them.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static struct {
    pthread_mutex_t lock;
    pthread_t main;
    bool json, quiet;
    bool ended;
    int status;
    char why[300];
    bool nothing; /* the acknowledged filter holds nothing */
} sub = {.lock = PTHREAD_MUTEX_INITIALIZER};

static sigset_t waited;

void cli_subscribe_prepare(void)
{
    sigemptyset(&waited);
    sigaddset(&waited, SIGINT);
    sigaddset(&waited, SIGTERM);
    sigaddset(&waited, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &waited, NULL);
    sub.main = pthread_self();
}

void cli_subscribe_finish(void)
{
    /* The signals that came meanwhile (a second SIGINT, the SIGUSR1 of an end) are taken
     * before the mask goes: none is left pending at exit (LeakSanitizer's exit check
     * hangs on a process with blocked signals pending). */
    struct timespec now = {0, 0};
    while (sigtimedwait(&waited, NULL, &now) > 0)
        ;
    pthread_sigmask(SIG_UNBLOCK, &waited, NULL);
}

/* One line per notification: the method, and what tells one from another. */
static void print_event(const char *method, const json_t *params)
{
    if (sub.json) {
        json_t *line = json_pack("{s:s, s:O*}", "method", method, "params", params);
        char *text = json_dumps(line, JSON_COMPACT);
        if (text != NULL)
            printf("%s\n", text);
        free(text);
        json_decref(line);
    } else {
        const char *uri = json_string_value(json_object_get(params, "uri"));
        printf("%s%s%s\n", method, uri != NULL ? " " : "", uri != NULL ? uri : "");
    }
    fflush(stdout);
}

/* What the server agreed to, in words, on stderr; true when it is nothing. */
static bool report_ack(const json_t *params)
{
    const json_t *n = json_object_get(params, "notifications");
    static const struct {
        const char *key, *words;
    } kinds[] = {{"toolsListChanged", "tools list changes"},
                 {"promptsListChanged", "prompts list changes"},
                 {"resourcesListChanged", "resources list changes"}};
    char what[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (json_is_true(json_object_get(n, kinds[i].key)))
            len += (size_t)snprintf(what + len, sizeof what - len, "%s%s", len ? ", " : "",
                                    kinds[i].words);
    size_t i;
    const json_t *u;
    json_array_foreach(json_object_get(n, "resourceSubscriptions"), i, u)
    {
        if (len < sizeof what)
            len += (size_t)snprintf(what + len, sizeof what - len, "%supdates of %s",
                                    len ? ", " : "", json_string_value(u));
    }
    if (len == 0)
        return true;
    if (!sub.quiet)
        cli_errorf("mcp: subscribed to %s\n", what);
    return false;
}

static void on_event(mcp_client *c, const mcp_listen_event *ev, void *user)
{
    (void)c, (void)user;
    switch (ev->kind) {
    case MCP_LISTEN_ACKNOWLEDGED:
        if (sub.json)
            print_event(ev->method, ev->params);
        if (report_ack(ev->params)) {
            pthread_mutex_lock(&sub.lock);
            sub.nothing = true;
            pthread_mutex_unlock(&sub.lock);
            pthread_kill(sub.main, SIGUSR1);
        }
        break;
    case MCP_LISTEN_NOTIFICATION:
        print_event(ev->method, ev->params);
        break;
    case MCP_LISTEN_ENDED:
        pthread_mutex_lock(&sub.lock);
        sub.ended = true;
        sub.status = ev->status;
        snprintf(sub.why, sizeof sub.why, "%s",
                 ev->err != NULL && ev->err->message[0] ? ev->err->message
                                                        : mcp_strerror(ev->status));
        pthread_mutex_unlock(&sub.lock);
        pthread_kill(sub.main, SIGUSR1);
        break;
    }
}

int cli_subscribe(mcp_client *c, const char *const *what, size_t n, bool json, bool quiet)
{
    sub.json = json;
    sub.quiet = quiet;
    mcp_listen_filter filter = {.size = sizeof filter};
    const char **uris = calloc(n + 1, sizeof *uris);
    if (uris == NULL)
        return cli_report_failure("subscriptions/listen", MCP_ENOMEM, NULL);
    size_t nuris = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(what[i], "tools") == 0)
            filter.tools_list_changed = 1;
        else if (strcmp(what[i], "prompts") == 0)
            filter.prompts_list_changed = 1;
        else if (strcmp(what[i], "resources") == 0)
            filter.resources_list_changed = 1;
        else
            uris[nuris++] = what[i];
    }
    if (n == 0)
        filter.tools_list_changed = filter.prompts_list_changed = filter.resources_list_changed = 1;
    filter.resource_uris = nuris > 0 ? uris : NULL;
    long long id = -1;
    int rc = mcp_client_listen(c, &filter, on_event, NULL, &id);
    free(uris);
    if (rc != MCP_OK)
        return cli_report_failure("subscriptions/listen", rc, NULL);

    int code = CLI_EXIT_OK;
    for (;;) {
        int sig = 0;
        if (sigwait(&waited, &sig) != 0)
            continue;
        pthread_mutex_lock(&sub.lock);
        bool ended = sub.ended, nothing = sub.nothing;
        int status = sub.status;
        pthread_mutex_unlock(&sub.lock);
        if (ended) {
            /* Ended by the server: gracefully (0), or it dropped or was refused. */
            if (status != MCP_OK) {
                cli_errorf("mcp: the subscription ended: %s (server: %s)\n", sub.why,
                           cli_server_name());
                code = cli_exit_status(status);
            } else if (!quiet) {
                cli_errorf("mcp: the server ended the subscription\n");
            }
            break;
        }
        if (nothing) {
            cli_errorf("mcp: the server offers none of the notifications asked for (server: "
                       "%s)\n",
                       cli_server_name());
            mcp_client_cancel(c, id, "nothing to listen to");
            code = CLI_EXIT_ERROR;
            break;
        }
        if (sig == SIGINT || sig == SIGTERM) {
            /* Interrupted: the normal end of a subscription on the command line. */
            mcp_client_cancel(c, id, "interrupted");
            break;
        }
    }
    return code;
}
