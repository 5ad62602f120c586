/* SPDX-License-Identifier: MIT */
/*
 * The server mcp talks to: a command to start or a URL, its name in messages,
 * connecting to it, and what a failure tells the user and the exit status.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A connection to a URL gives up sooner than a request: a host that does not
 * answer should not take the whole --timeout to say so. */
#define HTTP_CONNECT_TIMEOUT_MS 10000

/*
 * The server command as the user typed it, for messages: the words joined by
 * spaces, each one that a shell would split or expand single-quoted, cut with
 * "..." when it does not fit. Naming argv[0] alone says "node" or "npx" where
 * the user needs to see which server failed.
 */
static char server_text[1024];

/* Appends s to the NUL-terminated text in buf (size bytes); false when it did not fit. */
static bool text_append(char *buf, size_t size, const char *s)
{
    size_t used = strlen(buf);
    size_t n = strlen(s);
    if (used + n + 1 > size)
        return false;
    memcpy(buf + used, s, n + 1);
    return true;
}

/* True when a shell would take word as it is: no quoting needed. */
static bool shell_safe(const char *word)
{
    if (*word == '\0')
        return false;
    for (const char *p = word; *p != '\0'; p++) {
        unsigned char ch = (unsigned char)*p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              strchr("@%+=:,./_-", ch) != NULL))
            return false;
    }
    return true;
}

static void set_command_text(const char *const *argv)
{
    char *buf = server_text;
    size_t size = sizeof server_text - 4; /* room for "..." */
    bool fits = true;
    buf[0] = '\0';
    for (size_t i = 0; argv[i] != NULL && fits; i++) {
        if (i > 0)
            fits = text_append(buf, size, " ");
        if (shell_safe(argv[i])) {
            fits = fits && text_append(buf, size, argv[i]);
            continue;
        }
        /* 'it'\''s': a single quote ends the quoted part, is escaped, and reopens it. */
        fits = fits && text_append(buf, size, "'");
        for (const char *p = argv[i]; *p != '\0' && fits; p++) {
            char one[2] = {*p, '\0'};
            fits = text_append(buf, size, *p == '\'' ? "'\\''" : one);
        }
        fits = fits && text_append(buf, size, "'");
    }
    if (!fits)
        memcpy(buf + strlen(buf), "...", 4);
}

void cli_server_set_name(const cli_server *server)
{
    if (server->url == NULL) {
        set_command_text(server->argv);
        return;
    }
    /* A URL is one word; quoting it would only make it harder to copy. */
    snprintf(server_text, sizeof server_text, "%s", server->url);
    if (strlen(server->url) >= sizeof server_text)
        memcpy(server_text + sizeof server_text - 4, "...", 4);
}

const char *cli_server_name(void)
{
    return server_text;
}

bool cli_is_url(const char *word)
{
    return strncasecmp(word, "http://", 7) == 0 || strncasecmp(word, "https://", 8) == 0;
}

/*
 * The reason of a failure that the connection (not the server's JSON-RPC
 * answer) gives, into why: the HTTP status, why the server could not be
 * reached, or what the status means, then the library's message when there is
 * one. err may be NULL or empty.
 */
static void connection_reason(char *why, size_t size, int rc, const mcp_rpc_error *err)
{
    const char *msg = err != NULL ? err->message : "";
    const char *sep = msg[0] != '\0' ? ": " : "";
    if (rc == MCP_EHTTP && strncmp(msg, "HTTP ", 5) == 0)
        snprintf(why, size, "%s", msg); /* the library's message names the status */
    else if (rc == MCP_EHTTP && err != NULL && err->code > 0)
        snprintf(why, size, "HTTP %d%s%s", err->code, sep, msg);
    else if (rc == MCP_EHTTP)
        snprintf(why, size, "HTTP error status%s%s", sep, msg);
    else if (rc == MCP_EAUTH)
        snprintf(why, size,
                 "authorization failed%s%.*s (sign in with `mcp login URL`, or add --login to "
                 "sign in when needed, more scope included)",
                 sep, (int)(size > 120 ? size - 120 : 0), msg);
    else if (rc == MCP_ECONNECT)
        snprintf(why, size, "the server cannot be reached%s%s", sep, msg);
    else if (rc == MCP_EIO && msg[0] != '\0')
        snprintf(why, size, "the connection failed: %s", msg); /* a transfer, not a system call */
    else
        snprintf(why, size, "%s%s%s", mcp_strerror(rc), sep, msg);
}

int cli_exit_status(int rc)
{
    switch (rc) {
    case MCP_OK:
        return CLI_EXIT_OK;
    case MCP_ERPC:
    case MCP_ENOTSUP:
        return CLI_EXIT_ERROR;
    case MCP_ECONNECT:
        return CLI_EXIT_UNREACHABLE;
    case MCP_EHTTP:
        return CLI_EXIT_HTTP;
    case MCP_EAUTH:
        return CLI_EXIT_AUTH;
    default:
        return CLI_EXIT_CONNECT;
    }
}

int cli_report_failure(const char *what, int rc, mcp_rpc_error *err)
{
    if (rc == MCP_ERPC) {
        cli_print_rpc_error("", err);
    } else if (rc == MCP_ENOTSUP) {
        cli_errorf("error: %s: %s\n", what, mcp_strerror(rc));
    } else if (rc == MCP_ENOMEM) {
        cli_errorf("mcp: %s: %s\n", what, mcp_strerror(rc));
    } else {
        char why[sizeof err->message + 80];
        connection_reason(why, sizeof why, rc, err);
        cli_errorf("mcp: %s: %s (server: %s)\n", what, why, server_text);
    }
    if (err != NULL)
        mcp_rpc_error_clear(err);
    return cli_exit_status(rc);
}

/*
 * Says why connecting failed, naming the server, and, when the server answered
 * initialize with a JSON-RPC error, its code, message and data.
 */
static void report_connect_failure(const mcp_client *c, const cli_server *server, int rc,
                                   int timeout_ms)
{
    mcp_rpc_error err = {0};
    bool have_err = mcp_client_connect_error(c, &err) == MCP_OK;
    char why[sizeof err.message + 80];
    /* What the connect sent: server/discover first unless pinned to the legacy era. */
    const char *proto = server->protocol != NULL ? server->protocol : "auto";
    const char *first = strcmp(proto, "auto") == 0 ? "server/discover or initialize"
                        : strcmp(proto, MCP_PROTOCOL_2026_07_28) == 0 ? "server/discover"
                                                                      : "initialize";
    switch (rc) {
    case MCP_ETIMEDOUT:
        snprintf(why, sizeof why, "the server did not answer %s within %d ms", first, timeout_ms);
        break;
    case MCP_ERPC:
        snprintf(why, sizeof why, "the server answered %s with a JSON-RPC error", first);
        break;
    case MCP_EPROTO:
        if (have_err && err.message[0] != '\0')
            snprintf(why, sizeof why, "%s", err.message);
        else
            snprintf(why, sizeof why,
                     "the server answered %s with a protocol version mcp does not speak", first);
        break;
    case MCP_EIO:
        if (server->url == NULL) {
            snprintf(why, sizeof why, "cannot start the server");
            break;
        }
        connection_reason(why, sizeof why, rc, have_err ? &err : NULL);
        break;
    case MCP_ECLOSED:
        if (server->url == NULL) {
            snprintf(why, sizeof why,
                     "the server exited or closed its stdout before answering "
                     "initialize");
            break;
        }
        connection_reason(why, sizeof why, rc, have_err ? &err : NULL);
        break;
    default:
        connection_reason(why, sizeof why, rc, have_err ? &err : NULL);
        break;
    }
    cli_errorf("mcp: cannot connect: %s (server: %s)\n", why, server_text);
    if (rc == MCP_ERPC && have_err)
        cli_print_rpc_error("mcp: ", &err);
    mcp_rpc_error_clear(&err);
}

/* The token store of the connection: the provider reads and writes it until the client
 * is freed, so it is freed at exit, after main has freed the client. */
static mcp_token_store *kept_store;

static void free_kept_store(void)
{
    mcp_token_store_free(kept_store);
}

static void cli_keep_store(mcp_token_store *store)
{
    if (store == NULL)
        return;
    kept_store = store;
    atexit(free_kept_store);
}

int cli_connect(mcp_client *c, const cli_server *server, int timeout_ms)
{
    int rc;
    if (server->url == NULL) {
        rc = mcp_client_connect_stdio(c, server->argv, timeout_ms);
    } else {
        mcp_token_store *store = NULL;
        mcp_oauth *oauth = cli_oauth_for(server, &store);
        mcp_http_client_opts opts = {
            .size = sizeof opts,
            .headers = server->headers,
            .cacert = server->cacert,
            .client_cert = server->cert,
            .client_key = server->key,
            .http_sse = server->http_sse,
            .no_retry_safe = server->no_retry_safe,
            .connect_timeout_ms =
                timeout_ms < HTTP_CONNECT_TIMEOUT_MS ? timeout_ms : HTTP_CONNECT_TIMEOUT_MS,
            .oauth = oauth,
        };
        rc = mcp_client_connect_http(c, server->url, &opts, timeout_ms);
        /* The client holds the provider, and the provider the store, as long as they
         * are needed: both are released with the client. */
        mcp_oauth_free(oauth);
        cli_keep_store(store);
    }
    if (rc == MCP_OK)
        return CLI_EXIT_OK;
    report_connect_failure(c, server, rc, timeout_ms);
    /* A server that refuses initialize failed the connect: that is 3, not 1. */
    return rc == MCP_ECONNECT || rc == MCP_EHTTP || rc == MCP_EAUTH ? cli_exit_status(rc)
                                                                    : CLI_EXIT_CONNECT;
}
