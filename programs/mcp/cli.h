/* SPDX-License-Identifier: MIT */
/*
 * The mcp command-line client: declarations shared by its source files.
 *
 *   main.c    options, the command line grammar, connecting, dispatch, exit codes
 *   args.c    key=value arguments of `tools call` and `prompts get`
 *   output.c  the readable text renderer (everything printed without --json)
 *   status.c  progress bar, server log lines and error messages on stderr
 *   connect.c the server (a command or a URL): connecting, failures, exit statuses
 *   subscribe.c  `mcp subscribe`: a subscription's notifications until interrupted
 *   login.c   `mcp login`, `mcp logout`, `mcp auth status`, and the OAuth provider of
 *             every URL command
 *   skills.c  `mcp skills list|get`
 *   ask.c     the server's questions (sampling, elicitation, roots) answered by the user
 *
 * The program uses the public libmcp API only.
 */
#ifndef MCP_PROGRAMS_CLI_H
#define MCP_PROGRAMS_CLI_H

#include <mcp/mcp.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes, as documented in --help and the README. */
enum {
    CLI_EXIT_OK = 0,          /* success */
    CLI_EXIT_ERROR = 1,       /* the tool reported isError, or a JSON-RPC error */
    CLI_EXIT_USAGE = 2,       /* bad command line */
    CLI_EXIT_CONNECT = 3,     /* could not connect, timed out, or the connection failed */
    CLI_EXIT_UNREACHABLE = 4, /* MCP_ECONNECT: refused, unresolvable, TLS failure */
    CLI_EXIT_HTTP = 5,        /* MCP_EHTTP: the server answered with an HTTP error status */
    CLI_EXIT_AUTH = 6         /* MCP_EAUTH: no token could be had (log in) */
};

/* ---- args.c ---- */

/*
 * One argument word of `tools call` or `prompts get`: key=value, or key:=JSON
 * which forces the value to be parsed as JSON.
 */
typedef struct cli_kv {
    char *key;         /* owned, NUL-terminated */
    const char *value; /* borrowed: points into the argv word, after the '=' */
    json_t *json;      /* owned: the parsed value of key:=JSON, else NULL */
} cli_kv;

/*
 * Parses one argument word into kv. Returns 0, or -1 after writing a sentence
 * saying what is wrong into err (the word has no '=', the key is empty, the
 * JSON of key:=JSON is invalid, or memory ran out).
 */
int cli_kv_parse(const char *word, cli_kv *kv, char *err, size_t errlen);
/* Releases what kv owns and zeroes it. */
void cli_kv_clear(cli_kv *kv);

/*
 * Builds the "arguments" object of tools/call. input_schema is the tool's
 * inputSchema from tools/list, or NULL when it is unknown. A plain value is
 * parsed as JSON when it is valid JSON, else taken as a string; but when the
 * schema says the property is a string, the raw text is kept (so text=123
 * stays "123"). Returns a new reference, or NULL on ENOMEM.
 */
json_t *cli_tool_arguments(const cli_kv *kvs, size_t n, const json_t *input_schema);
/*
 * Builds the "arguments" object of prompts/get: every value is a string. A
 * key:=JSON value that is a JSON string gives that string; any other JSON
 * value gives its compact serialisation. Returns a new reference, or NULL on
 * ENOMEM.
 */
json_t *cli_prompt_arguments(const cli_kv *kvs, size_t n);

/* ---- output.c ---- */

/* Prints v as JSON indented by 2 spaces, plus a newline. Returns 0 or -1 on ENOMEM. */
int cli_print_json(FILE *f, const json_t *v);
/* The number of bytes that the base64 text b64 decodes to. */
size_t cli_base64_decoded_len(const char *b64);

/* True when the JSON array `required` (a schema's) holds the string `name`. */
bool cli_is_required(const json_t *required, const char *name);
/* tools list: one block per tool (name, title, description, arguments). */
void cli_print_tools(FILE *f, const json_t *tools);
/* What mcp info shows, from {"protocolVersion", "serverInfo", "capabilities",
 * "instructions"}. */
void cli_print_info(FILE *f, const json_t *info);
/*
 * tools call: the content blocks and structuredContent. When the result has
 * isError, everything goes to `err` behind an "error: " prefix and the
 * function returns CLI_EXIT_ERROR; otherwise it prints to `out` and returns
 * CLI_EXIT_OK.
 */
int cli_print_tool_result(FILE *out, FILE *err, const json_t *result);
/* What a task (a DetailedTask of tasks/get) carries beside its status: its message, its
 * times, and its result, error or questions. */
void cli_print_task(FILE *out, const json_t *task);
/* resources list / resources templates: one aligned line per item. */
void cli_print_resources(FILE *f, const json_t *resources, bool templates);
/* resources read: text contents as is, blobs summarised. */
void cli_print_resource_contents(FILE *f, const json_t *result);
/* prompts list: one block per prompt with its arguments. */
void cli_print_prompts(FILE *f, const json_t *prompts);
/* prompts get: the description, then each message under its role. */
void cli_print_prompt(FILE *f, const json_t *result);
/* complete: one value per line. */
void cli_print_completion(FILE *f, const json_t *result);

/* ---- status.c ---- */

/*
 * Sets up stderr reporting. quiet drops progress and log lines. Call once,
 * before connecting.
 */
void cli_status_init(bool quiet);
/* --log-format logfmt or json: the server's log messages go out as log lines of that
 * format (source=server, logger=...) instead of "[level] text". */
void cli_status_structured(bool on);
/* mcp_progress_fn: draws the progress bar (terminal) or prints one line. */
void cli_status_progress(double progress, double total, const char *message, void *user);
/* mcp_client_notification_fn: prints notifications/message as "[level] data". */
void cli_status_notification(mcp_client *c, const char *method, const json_t *params, void *user);
/*
 * Prints a server's text to f with every control character (C0 but tab, DEL, C1) as
 * '?', so that it cannot move the cursor, retitle the window or reach the clipboard;
 * each newline is followed by indent, so that its lines cannot pass for mcp's own.
 * indent NULL: the first line only. text may be NULL (nothing printed).
 */
void cli_put_text(FILE *f, const char *text, const char *indent);
/* Clears the progress bar if one is drawn. Safe to call at any time. */
void cli_status_done(void);
/* Clears the progress bar, then prints the formatted message to stderr. */
void cli_errorf(const char *fmt, ...) MCP_PRINTF(1, 2);
/* Prints a JSON-RPC error the server answered, after prefix: "error: CODE MESSAGE", then its
 * data. */
void cli_print_rpc_error(const char *prefix, const mcp_rpc_error *err);

/* ---- connect.c ---- */

/* The server: a command to start, or a URL to reach over HTTP. */
typedef struct cli_server {
    const char **argv;    /* the command, NULL-terminated, or NULL for a URL (strings borrowed) */
    const char *url;      /* http:// or https://, or NULL for a command */
    const char **headers; /* --header values, NULL-terminated, or NULL (strings borrowed) */
    const char *cacert;   /* --cacert, --cert and --key, or NULL */
    const char *cert;
    const char *key;
    bool http_sse;        /* --http-sse */
    bool no_retry_safe;   /* --no-retry-safe */
    bool login;           /* --login: sign in when needed */
    const char *protocol; /* --protocol, or NULL: auto */
} cli_server;

/* True when word names the server by URL: it begins with http:// or https://, in any case. */
bool cli_is_url(const char *word);
/*
 * Names the server for messages: the command as the user typed it, or the
 * URL. server is read during the call. Call once, before connecting.
 */
void cli_server_set_name(const cli_server *server);
/* The server's name for messages ("" before cli_server_set_name). */
const char *cli_server_name(void);
/*
 * Connects c to the server (spawning the command, or over HTTP) and returns
 * the exit status: CLI_EXIT_OK, or after saying on stderr why, naming the
 * server, with the server's JSON-RPC error or the HTTP status when there is
 * one, CLI_EXIT_UNREACHABLE, CLI_EXIT_HTTP or CLI_EXIT_CONNECT. timeout_ms
 * bounds the connect.
 */
int cli_connect(mcp_client *c, const cli_server *server, int timeout_ms);
/* The exit status for a library status (see the enum above). */
int cli_exit_status(int rc);
/*
 * Reports on stderr a request `what` (a method name) that failed with rc and
 * err (may be NULL; its data is released), and returns the exit status.
 * JSON-RPC errors and missing capabilities are the server's answer; anything
 * else names the server, with the HTTP status for MCP_EHTTP.
 */
int cli_report_failure(const char *what, int rc, mcp_rpc_error *err);

/* ---- login.c ---- */

/* mcp login|logout|auth ...: argv[0] is the command word. Returns the exit status. */
int cli_auth_main(int argc, char **argv);
/*
 * The OAuth provider of a URL server: the stored tokens (mcp login's), renewed when
 * they expire, never a sign-in of its own; NULL when the user gives an Authorization
 * header, or there is no store. *store is to be freed after the provider.
 */
mcp_oauth *cli_oauth_for(const cli_server *server, mcp_token_store **store);

/* ---- subscribe.c ---- */

/* Blocks SIGINT, SIGTERM and SIGUSR1 for cli_subscribe's sigwait: call it on the main
 * thread before the client starts its threads (they inherit the mask). */
void cli_subscribe_prepare(void);
/* After the client is freed (its threads are gone): takes the signals still pending and
 * unblocks them. */
void cli_subscribe_finish(void);
/*
 * subscribe WHAT...: opens a subscription (tools, prompts, resources: their list
 * changes; anything else: a resource URI to follow; none: every list change) and
 * prints each notification on stdout (the method, and the URI of a resource update;
 * with json, {"method","params"} a line) until SIGINT or SIGTERM (exit 0) or the
 * subscription's end: by the server (0), a drop or a refusal (the status's exit
 * code). An acknowledgement of nothing ends it with 1. Returns the exit code.
 */
int cli_subscribe(mcp_client *c, const char *const *what, size_t n, bool json, bool quiet);

/* ---- skills.c ---- */

/* skills list (target NULL) or skills get target [file]; json: the entries as JSON.
 * Returns the exit status. */
int cli_skills(mcp_client *c, const char *target, const char *file, bool json);

/* ---- ask.c ---- */

/*
 * Roots: the directories of --root (nroots of them), else with interactive the current
 * one, else none. interactive: sampling and elicitation (form and URL modes) are
 * declared and answered by the user (questions on stderr, answers read from stdin).
 * Before connecting. Returns CLI_EXIT_OK, or the exit status after saying what failed
 * (a --root that does not exist: CLI_EXIT_USAGE).
 */
int cli_ask_setup(mcp_client *c, bool interactive, const char *const *roots, size_t nroots);
/* Opens url in the desktop's browser (xdg-open), if there is one and MCP_NO_BROWSER is
 * unset or empty; failure is no error (login.c). */
void cli_open_browser(const char *url);

#endif
