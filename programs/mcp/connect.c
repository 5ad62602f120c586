/*
 * The server mcp talks to: its name in messages, and what a failed connect
 * tells the user.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

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

void cli_server_set_name(const char *const *argv)
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

const char *cli_server_name(void)
{
    return server_text;
}

/*
 * Says why connecting failed, naming the server command as typed, and, when
 * the server answered initialize with a JSON-RPC error, its code, message and
 * data.
 */
void cli_report_connect_failure(const mcp_client *c, int rc, int timeout_ms)
{
    char why[160];
    switch (rc) {
    case MCP_EIO:
        snprintf(why, sizeof why, "cannot start the server");
        break;
    case MCP_ECLOSED:
        snprintf(why, sizeof why,
                 "the server exited or closed its stdout before answering "
                 "initialize");
        break;
    case MCP_ETIMEDOUT:
        snprintf(why, sizeof why, "the server did not answer initialize within %d ms", timeout_ms);
        break;
    case MCP_ERPC:
        snprintf(why, sizeof why, "the server answered initialize with a JSON-RPC error");
        break;
    case MCP_EPROTO:
        snprintf(why, sizeof why,
                 "the server answered initialize with a protocol version mcp "
                 "does not speak");
        break;
    default:
        snprintf(why, sizeof why, "%s", mcp_strerror(rc));
        break;
    }
    cli_errorf("mcp: cannot connect: %s (server: %s)\n", why, server_text);
    mcp_rpc_error err;
    if (rc == MCP_ERPC && mcp_client_connect_error(c, &err) == MCP_OK) {
        cli_print_rpc_error("mcp: ", &err);
        mcp_rpc_error_clear(&err);
    }
}
