/* SPDX-License-Identifier: MIT */
/*
 * mcp - a command-line MCP client.
 *
 *   mcp [OPTIONS] URL COMMAND...
 *   mcp [OPTIONS] -- CMD ARGS... COMMAND...
 *   mcp [OPTIONS] -- CMD ARGS... -- COMMAND...
 *
 * Connects to the server at URL over HTTP, or spawns the server command and
 * speaks MCP to it over stdio, runs one COMMAND and prints the result. See
 * usage() for the whole grammar.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "header_flag.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 60000

typedef enum cli_command {
    CMD_TOOLS_LIST,
    CMD_TOOLS_CALL,
    CMD_RESOURCES_LIST,
    CMD_RESOURCES_TEMPLATES,
    CMD_RESOURCES_READ,
    CMD_PROMPTS_LIST,
    CMD_PROMPTS_GET,
    CMD_PING,
    CMD_INFO,
    CMD_COMPLETE,
    CMD_LOGGING_SET,
    CMD_SUBSCRIBE,
    CMD_SKILLS,
    CMD_TASKS_GET,
    CMD_TASKS_RESULT,
    CMD_TASKS_CANCEL
} cli_command;

typedef struct cli {
    bool json;
    bool quiet;
    int timeout_ms;
    int log_level;     /* --log-level, or -1 */
    cli_server server; /* its arrays are owned, their strings borrowed from argv */
    cli_command command;
    const char *target;        /* tool or prompt name, resource URI, level name */
    const char *complete_kind; /* "prompt" or "resource" */
    const char *complete_arg;
    const char *complete_value;
    int set_level; /* logging set LEVEL */
    cli_kv *kvs;
    size_t nkvs;
    const char *const *what; /* subscribe WHAT... (borrowed from argv) */
    size_t nwhat;
    const char *skill_file; /* skills get NAME FILE */
    int interactive;        /* --interactive 1, --no-interactive 0, else -1: a terminal decides */
    const char **roots;     /* --root values (borrowed from argv) */
    size_t nroots;
    bool task; /* tools call --task */
} cli;

/* The words that begin a COMMAND, and so end the server command. "info", a word that
 * servers' own arguments hold ("--log-level info"), begins one only as the last word. */
static const char *const command_words[] = {"tools",   "resources", "prompts", "ping", "complete",
                                            "logging", "subscribe", "skills",  "tasks"};

static void usage(FILE *f)
{
    fputs("Usage: mcp [OPTIONS] URL COMMAND...\n"
          "       mcp [OPTIONS] -- CMD [ARGS...] COMMAND...\n"
          "       mcp [OPTIONS] -- CMD [ARGS...] -- COMMAND...\n"
          "       mcp login [OPTIONS] URL | mcp logout URL | mcp auth status [URL]\n"
          "\n"
          "Talks to one MCP server, runs one COMMAND and prints the result.\n"
          "\n"
          "A server given as a URL (http:// or https://, in any case) is reached over\n"
          "Streamable HTTP, or over the older HTTP+SSE transport when it answers\n"
          "initialize with 400, 404 or 405 (or with --http-sse). Either way mcp first\n"
          "asks whether the server speaks revision 2026-07-28 (server/discover), and\n"
          "falls back to initialize when it does not (see --protocol).\n"
          "\n"
          "Otherwise mcp starts the server CMD with ARGS and talks to it over its stdin\n"
          "and stdout. Without the second '--', the server command ends at the first\n"
          "word that begins a COMMAND (tools, resources, prompts, ping, complete,\n"
          "logging, subscribe, skills, tasks; info as the last word); put a second\n"
          "'--' right before COMMAND when the server's own arguments contain such a\n"
          "word.\n"
          "\n"
          "Commands:\n"
          "  tools list                         list the tools and their arguments\n"
          "  tools call [--task] NAME [KEY=VALUE...]\n"
          "                                     call a tool; --task lets a server that\n"
          "                                     offers tasks (revision 2026-07-28) run it\n"
          "                                     as one: its id is printed on stderr, and\n"
          "                                     mcp waits for its result\n"
          "  resources list                     list the resources\n"
          "  resources templates                list the resource templates\n"
          "  resources read URI                 read a resource\n"
          "  prompts list                       list the prompts and their arguments\n"
          "  prompts get NAME [KEY=VALUE...]    get a prompt\n"
          "  ping                               ping the server and print the round trip\n"
          "  info                               show the server: name, version, title,\n"
          "                                     description, website, icons, protocol,\n"
          "                                     capabilities, extensions, instructions\n"
          "  complete prompt NAME ARG VALUE     complete a prompt argument\n"
          "  complete resource URI ARG VALUE    complete a resource template argument\n"
          "  logging set LEVEL                  set the server's logging level\n"
          "  skills list                        the server's skills (SEP-2640)\n"
          "  skills get NAME|URI [FILE]         a skill's SKILL.md, or FILE of it (a path\n"
          "                                     in the skill's folder), checked against\n"
          "                                     the skill's entry (size, SHA-256 digest,\n"
          "                                     frontmatter) before it is printed; --json:\n"
          "                                     the entry\n"
          "  tasks get ID                       a task's status, and its result, error or\n"
          "                                     questions (the tasks extension)\n"
          "  tasks result ID                    wait for a task's end and print its\n"
          "                                     result, answering its questions as\n"
          "                                     tools call does\n"
          "  tasks cancel ID                    ask the server to cancel a task\n"
          "  subscribe [WHAT...]                print the server's change notifications as\n"
          "                                     they come, one a line, until SIGINT or\n"
          "                                     SIGTERM; WHAT is tools, prompts or\n"
          "                                     resources (their list changes) or a resource\n"
          "                                     URI (its updates); none: every list change\n"
          "\n"
          "Arguments of tools call:\n"
          "  KEY=VALUE    VALUE is parsed as JSON when it is valid JSON (numbers, true,\n"
          "               false, null, objects, arrays, quoted strings), else taken as a\n"
          "               string; when the tool's input schema declares KEY a string,\n"
          "               VALUE is always the raw string (text=123 sends \"123\").\n"
          "  KEY:=JSON    VALUE must be JSON and is sent as such.\n"
          "Arguments of prompts get are always strings.\n"
          "\n"
          "Options:\n"
          "  --json              print the raw JSON result (indented by 2 spaces)\n"
          "  --timeout MS        timeout of connecting and of each request, in\n"
          "                      milliseconds (default 60000)\n"
          "  --quiet, -q         print no progress and no server log messages\n"
          "  --log-level LEVEL   ask the server to log at LEVEL after connecting\n"
          "                      (debug, info, notice, warning, error, critical,\n"
          "                      alert, emergency)\n"
          "  --log-format FORMAT text (the default), logfmt or json: the server's log\n"
          "                      messages and the library's warnings on stderr, one a\n"
          "                      line (logfmt and json with ts, level, source, msg,\n"
          "                      and the server's logger)\n"
          "  --protocol P        the protocol revisions to speak: auto (the default:\n"
          "                      revision 2026-07-28 when the server answers\n"
          "                      server/discover as a modern server, else initialize\n"
          "                      with an older revision), legacy (initialize only),\n"
          "                      2026-07-28 (never initialize), or an older version\n"
          "                      such as 2025-11-25 (initialize offering it)\n"
          "  --interactive       answer the server's questions: sampling (you write the\n"
          "                      model's reply), elicitation (a form, field by field,\n"
          "                      or a URL to open) and roots; on by default when stdin\n"
          "                      and stderr are a terminal. Questions go to stderr,\n"
          "                      answers are read from stdin, one line each\n"
          "  --no-interactive    never: the server is told mcp offers none of them\n"
          "  --root DIR          offer DIR as a root (repeatable); without it an\n"
          "                      interactive mcp offers the current directory\n"
          "  --help, -h          print this help and exit\n"
          "  --version, -V       print the version and exit\n"
          "\n"
          "Options of a URL server (a usage error with a server command):\n"
          "  --header 'NAME: VALUE'\n"
          "                      send this header with every request (repeatable), e.g.\n"
          "                      --header 'Authorization: Bearer TOKEN'; NAME may not be\n"
          "                      one the transport sets (Accept, Content-Type, Host,\n"
          "                      Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, ...)\n"
          "  --cacert FILE       trust the CA certificates of this PEM file instead of\n"
          "                      the system's\n"
          "  --cert FILE         TLS client certificate (PEM), with its key unless --key\n"
          "  --key FILE          the private key of --cert (PEM)\n"
          "  --http-sse          URL is the SSE endpoint of the 2024-11-05 HTTP+SSE\n"
          "                      transport (http://HOST:PORT/sse, say)\n"
          "  --no-retry-safe     in revision 2026-07-28, which has no resumption, do not\n"
          "                      send a request once more when its connection fails\n"
          "                      before the answer (a server restarting, say); by\n"
          "                      default mcp does, once, for requests safe to repeat:\n"
          "                      tools list, resources read, prompts get, and tools\n"
          "                      call of a tool annotated readOnlyHint or\n"
          "                      idempotentHint\n"
          "  --login             when the server needs a sign-in (OAuth) that the stored\n"
          "                      tokens cannot give (none kept, or a tool that needs\n"
          "                      more scope), print the authorization URL, open it in\n"
          "                      a browser and wait for the answer on 127.0.0.1, as\n"
          "                      `mcp login` does; without it mcp never asks and exits\n"
          "                      with 6\n"
          "\n"
          "Progress of tools call and the server's log messages go to stderr, over\n"
          "HTTP as over stdio.\n"
          "\n"
          "Exit status:\n"
          "  0  success\n"
          "  1  the tool reported an error (isError), the server answered with a\n"
          "     JSON-RPC error (printed as \"error: CODE MESSAGE\" and its data), or\n"
          "     the server does not offer what COMMAND needs (it did not declare the\n"
          "     capability: tools, resources, prompts, completions or logging)\n"
          "  2  usage error\n"
          "  3  connecting failed (the server's JSON-RPC error, if any, is printed),\n"
          "     a request timed out, or the connection broke\n"
          "  4  a URL server cannot be reached: the connection was refused, the host\n"
          "     name does not resolve, or TLS failed (a certificate that does not\n"
          "     verify, say)\n"
          "  5  a URL server answered with an HTTP error status (printed with its\n"
          "     message: \"HTTP 403 from POST: ...\")\n"
          "  6  a URL server needs authorization and no token could be had (run\n"
          "     `mcp login URL` first; see `mcp login --help`)\n"
          "\n"
          "Examples:\n"
          "  mcp -- npx -y @modelcontextprotocol/server-everything tools call echo message=hi\n"
          "  mcp http://127.0.0.1:8080/mcp tools call echo text=hi\n"
          "  mcp --header 'Authorization: Bearer TOKEN' https://example.com/mcp tools list\n",
          f);
}

/* Reports a usage error and returns the usage exit code. */
static int usage_error(const char *fmt, const char *arg)
{
    fputs("mcp: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'mcp --help' for more information.\n", stderr);
    return CLI_EXIT_USAGE;
}

static bool is_command_word(const char *word)
{
    for (size_t i = 0; i < sizeof command_words / sizeof command_words[0]; i++) {
        if (strcmp(word, command_words[i]) == 0)
            return true;
    }
    return false;
}

/* Parses a positive millisecond count that fits in an int. */
static bool parse_timeout(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v <= 0 || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

/*
 * The value of an option that takes one: "--name=value" or "--name value".
 * Returns NULL when the option is not `name`; sets *missing when it is but
 * has no value.
 */
static const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

/* Parses the key=value words of tools call / prompts get. */
static int parse_kvs(cli *o, char **words, int n)
{
    if (n == 0)
        return CLI_EXIT_OK;
    o->kvs = calloc((size_t)n, sizeof *o->kvs);
    if (o->kvs == NULL)
        return usage_error("%s", "out of memory");
    for (int i = 0; i < n; i++) {
        char err[512];
        if (cli_kv_parse(words[i], &o->kvs[i], err, sizeof err) != 0)
            return usage_error("%s", err);
        o->nkvs++;
    }
    return CLI_EXIT_OK;
}

/* Parses COMMAND... (n words). Returns CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int parse_command(cli *o, char **w, int n)
{
    if (n == 0)
        return usage_error("%s", "no command given after the server command");
    const char *group = w[0];
    const char *verb = n > 1 ? w[1] : "";

    if (strcmp(group, "ping") == 0 || strcmp(group, "info") == 0) {
        o->command = strcmp(group, "ping") == 0 ? CMD_PING : CMD_INFO;
        if (n != 1)
            return usage_error(strcmp(group, "ping") == 0 ? "unexpected argument '%s' after ping"
                                                          : "unexpected argument '%s' after info",
                               w[1]);
        return CLI_EXIT_OK;
    }
    if (strcmp(group, "tools") == 0) {
        if (strcmp(verb, "list") == 0 && n == 2) {
            o->command = CMD_TOOLS_LIST;
            return CLI_EXIT_OK;
        }
        int at = n >= 3 && strcmp(w[2], "--task") == 0 ? 3 : 2;
        if (strcmp(verb, "call") == 0 && n > at) {
            o->command = CMD_TOOLS_CALL;
            o->task = at == 3;
            o->target = w[at];
            return parse_kvs(o, w + at + 1, n - at - 1);
        }
        return usage_error("%s",
                           "expected 'tools list' or 'tools call [--task] NAME [KEY=VALUE...]'");
    }
    if (strcmp(group, "resources") == 0) {
        if (strcmp(verb, "list") == 0 && n == 2) {
            o->command = CMD_RESOURCES_LIST;
            return CLI_EXIT_OK;
        }
        if (strcmp(verb, "templates") == 0 && n == 2) {
            o->command = CMD_RESOURCES_TEMPLATES;
            return CLI_EXIT_OK;
        }
        if (strcmp(verb, "read") == 0 && n == 3) {
            o->command = CMD_RESOURCES_READ;
            o->target = w[2];
            return CLI_EXIT_OK;
        }
        return usage_error("%s", "expected 'resources list', 'resources templates' or "
                                 "'resources read URI'");
    }
    if (strcmp(group, "prompts") == 0) {
        if (strcmp(verb, "list") == 0 && n == 2) {
            o->command = CMD_PROMPTS_LIST;
            return CLI_EXIT_OK;
        }
        if (strcmp(verb, "get") == 0 && n >= 3) {
            o->command = CMD_PROMPTS_GET;
            o->target = w[2];
            return parse_kvs(o, w + 3, n - 3);
        }
        return usage_error("%s", "expected 'prompts list' or 'prompts get NAME [KEY=VALUE...]'");
    }
    if (strcmp(group, "complete") == 0) {
        if ((strcmp(verb, "prompt") == 0 || strcmp(verb, "resource") == 0) && n == 5) {
            o->command = CMD_COMPLETE;
            o->complete_kind = verb;
            o->target = w[2];
            o->complete_arg = w[3];
            o->complete_value = w[4];
            return CLI_EXIT_OK;
        }
        return usage_error("%s", "expected 'complete prompt NAME ARG VALUE' or "
                                 "'complete resource URI ARG VALUE'");
    }
    if (strcmp(group, "skills") == 0) {
        if ((strcmp(verb, "list") == 0 && n == 2) ||
            (strcmp(verb, "get") == 0 && (n == 3 || n == 4))) {
            o->command = CMD_SKILLS;
            o->target = n >= 3 ? w[2] : NULL;
            o->skill_file = n == 4 ? w[3] : NULL;
            return CLI_EXIT_OK;
        }
        return usage_error("%s", "expected 'skills list' or 'skills get NAME|URI [FILE]'");
    }
    if (strcmp(group, "tasks") == 0) {
        if (n == 3 && (strcmp(verb, "get") == 0 || strcmp(verb, "result") == 0 ||
                       strcmp(verb, "cancel") == 0)) {
            o->command = verb[0] == 'g'   ? CMD_TASKS_GET
                         : verb[0] == 'r' ? CMD_TASKS_RESULT
                                          : CMD_TASKS_CANCEL;
            o->target = w[2];
            return CLI_EXIT_OK;
        }
        return usage_error("%s", "expected 'tasks get ID', 'tasks result ID' or 'tasks cancel ID'");
    }
    if (strcmp(group, "subscribe") == 0) {
        o->command = CMD_SUBSCRIBE;
        o->what = (const char *const *)w + 1;
        o->nwhat = (size_t)n - 1;
        return CLI_EXIT_OK;
    }
    if (strcmp(group, "logging") == 0) {
        if (strcmp(verb, "set") == 0 && n == 3) {
            o->command = CMD_LOGGING_SET;
            o->target = w[2];
            o->set_level = mcp_log_level_parse(w[2]);
            if (o->set_level < 0)
                return usage_error("unknown logging level '%s'", w[2]);
            return CLI_EXIT_OK;
        }
        return usage_error("%s", "expected 'logging set LEVEL'");
    }
    return usage_error("unknown command '%s'", group);
}

/*
 * Parses what follows a server URL (w[0]): COMMAND..., or -- COMMAND... when
 * the user ends the server with a '--' out of habit. Returns -1 to go on, or
 * the usage exit code.
 */
static int parse_url_server(cli *o, char **w, int n)
{
    o->server.url = w[0];
    if (o->server.key != NULL && o->server.cert == NULL)
        return usage_error("%s", "--key needs --cert");
    int cmd_at = n > 1 && strcmp(w[1], "--") == 0 ? 2 : 1;
    if (cmd_at < n && !is_command_word(w[cmd_at]) && strcmp(w[cmd_at], "info") != 0)
        return usage_error("unexpected '%s' after the server URL: a URL server takes no "
                           "arguments; expected a command (tools, resources, prompts, ping, "
                           "info, complete, logging, subscribe, skills, tasks)",
                           w[cmd_at]);
    int rc = parse_command(o, w + cmd_at, n - cmd_at);
    return rc == CLI_EXIT_OK ? -1 : rc;
}

/*
 * Parses the whole command line into o. Returns -1 to go on, or an exit code
 * (0 after --help or --version).
 */
static int parse_args(cli *o, int argc, char **argv)
{
    /* Every --header fits: there are fewer than argc of them. */
    o->server.headers = calloc((size_t)argc, sizeof *o->server.headers);
    o->roots = calloc((size_t)argc, sizeof *o->roots);
    if (o->server.headers == NULL || o->roots == NULL)
        return usage_error("%s", "out of memory");
    size_t nheaders = 0;
    const char *http_option = NULL; /* the last option that needs a URL, for the message */
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        const char *val;
        bool missing = false;
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        /* The first word that is not an option starts the server command. */
        if (arg[0] != '-' || arg[1] == '\0')
            break;
        if (strcmp(arg, "--json") == 0) {
            o->json = true;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            o->quiet = true;
        } else if (strcmp(arg, "--interactive") == 0) {
            o->interactive = 1;
        } else if (strcmp(arg, "--no-interactive") == 0) {
            o->interactive = 0;
        } else if ((val = option_value(argc, argv, &i, "--root", &missing)) != NULL) {
            o->roots[o->nroots++] = val;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
            printf("mcp %s\n", MCP_VERSION_STRING);
            return CLI_EXIT_OK;
        } else if ((val = option_value(argc, argv, &i, "--timeout", &missing)) != NULL) {
            if (!parse_timeout(val, &o->timeout_ms))
                return usage_error("invalid --timeout '%s' (a positive number of milliseconds)",
                                   val);
        } else if ((val = option_value(argc, argv, &i, "--protocol", &missing)) != NULL) {
            if (strcmp(val, "auto") != 0 && strcmp(val, "legacy") != 0 &&
                mcp_protocol_version_supported(val) == NULL)
                return usage_error("unknown --protocol '%s' (auto, legacy, 2026-07-28, or an "
                                   "older protocol version)",
                                   val);
            o->server.protocol = val;
        } else if ((val = option_value(argc, argv, &i, "--log-format", &missing)) != NULL) {
            int f = mcp_log_format_parse(val);
            if (f < 0)
                return usage_error("--log-format needs text, logfmt or json, not '%s'", val);
            mcp_log_set_format((mcp_log_format)f);
            cli_status_structured(f != MCP_LOG_FORMAT_TEXT);
        } else if ((val = option_value(argc, argv, &i, "--log-level", &missing)) != NULL) {
            o->log_level = mcp_log_level_parse(val);
            if (o->log_level < 0)
                return usage_error("unknown logging level '%s'", val);
        } else if ((val = option_value(argc, argv, &i, "--header", &missing)) != NULL) {
            char err[512];
            if (header_flag_check("mcp", val, err, sizeof err) != 0)
                return usage_error("%s", err);
            o->server.headers[nheaders++] = val;
            http_option = arg;
        } else if ((val = option_value(argc, argv, &i, "--cacert", &missing)) != NULL) {
            o->server.cacert = val;
            http_option = arg;
        } else if ((val = option_value(argc, argv, &i, "--cert", &missing)) != NULL) {
            o->server.cert = val;
            http_option = arg;
        } else if ((val = option_value(argc, argv, &i, "--key", &missing)) != NULL) {
            o->server.key = val;
            http_option = arg;
        } else if (strcmp(arg, "--http-sse") == 0) {
            o->server.http_sse = true;
            http_option = arg;
        } else if (strcmp(arg, "--no-retry-safe") == 0) {
            o->server.no_retry_safe = true;
            http_option = arg;
        } else if (strcmp(arg, "--login") == 0) {
            o->server.login = true;
            http_option = arg;
        } else if (missing) {
            return usage_error("option '%s' needs a value", arg);
        } else {
            return usage_error("unknown option '%s'", arg);
        }
    }

    char **rest = argv + i;
    int nrest = argc - i;
    if (nrest > 0 && cli_is_url(rest[0]))
        return parse_url_server(o, rest, nrest);
    if (http_option != NULL)
        return usage_error("option '%s' needs a server URL (http:// or https://)", http_option);
    int end = -1;    /* index in rest where the server command ends */
    int cmd_at = -1; /* index in rest where COMMAND begins */
    /*
     * An explicit end is a '--' followed by a COMMAND word; a '--' followed by
     * anything else belongs to the server command (npx -- package ...).
     */
    for (int j = 0; j + 1 < nrest; j++) {
        if (strcmp(rest[j], "--") == 0 &&
            (is_command_word(rest[j + 1]) || strcmp(rest[j + 1], "info") == 0)) {
            end = j;
            cmd_at = j + 1;
            break;
        }
    }
    if (end < 0) {
        /* rest[0] is the program to run, never a COMMAND, whatever its name. */
        for (int j = 1; j < nrest; j++) {
            if (is_command_word(rest[j]) || (j + 1 == nrest && strcmp(rest[j], "info") == 0)) {
                end = j;
                cmd_at = j;
                break;
            }
        }
    }
    if (nrest == 0 || end == 0)
        return usage_error(
            "%s",
            "no server given (mcp [OPTIONS] URL COMMAND, or mcp [OPTIONS] -- CMD ARGS... COMMAND)");
    if (end < 0)
        return usage_error("%s", "no command given after the server command "
                                 "(tools, resources, prompts, ping, complete, logging, "
                                 "subscribe)");

    o->server.argv = calloc((size_t)end + 1, sizeof *o->server.argv);
    if (o->server.argv == NULL)
        return usage_error("%s", "out of memory");
    for (int j = 0; j < end; j++)
        o->server.argv[j] = rest[j];
    o->server.argv[end] = NULL;

    int rc = parse_command(o, rest + cmd_at, nrest - cmd_at);
    return rc == CLI_EXIT_OK ? -1 : rc;
}

/*
 * The capability the server must have declared for a command (its key in the
 * initialize result's capabilities), or NULL when none is needed (ping).
 */
static const char *needed_capability(cli_command command)
{
    switch (command) {
    case CMD_TOOLS_LIST:
    case CMD_TOOLS_CALL:
        return "tools";
    case CMD_RESOURCES_LIST:
    case CMD_RESOURCES_TEMPLATES:
    case CMD_RESOURCES_READ:
        return "resources";
    case CMD_PROMPTS_LIST:
    case CMD_PROMPTS_GET:
        return "prompts";
    case CMD_COMPLETE:
        return "completions";
    case CMD_LOGGING_SET:
        return "logging";
    case CMD_PING:
    case CMD_INFO:
    case CMD_SKILLS:    /* an extension: mcp_client_list_skills checks it */
    case CMD_SUBSCRIBE: /* the acknowledgement says what the server offers */
    case CMD_TASKS_GET: /* an extension: the server answers for its tasks */
    case CMD_TASKS_RESULT:
    case CMD_TASKS_CANCEL:
        return NULL;
    }
    return NULL;
}

/*
 * True when the server declared `capability` in its initialize result. The
 * spec has a client use only what the server declared, so a command needing
 * anything else is refused here rather than sent. completions did not exist
 * before 2025-03-26: a 2024-11-05 server may complete without declaring it.
 */
static bool server_offers(mcp_client *c, const char *capability)
{
    const char *version = mcp_client_protocol_version(c);
    if (strcmp(capability, "completions") == 0 && version != NULL &&
        strcmp(version, "2024-11-05") == 0)
        return true;
    const json_t *v = json_object_get(mcp_client_server_capabilities(c), capability);
    return v != NULL && !json_is_null(v) && !json_is_false(v);
}

/* Prints a result as --json asks, or reports that it could not be serialised. */
static int print_json_result(const json_t *result)
{
    if (cli_print_json(stdout, result) != 0) {
        cli_errorf("mcp: %s\n", mcp_strerror(MCP_ENOMEM));
        return CLI_EXIT_CONNECT;
    }
    return CLI_EXIT_OK;
}

/* tools list, resources list/templates, prompts list: every page. */
static int run_list(mcp_client *c, const cli *o, const char *method, const char *key)
{
    json_t *items = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_all(c, method, key, &items, &err);
    if (rc != MCP_OK)
        return cli_report_failure(method, rc, &err);
    int code = CLI_EXIT_OK;
    if (o->json) {
        /* The shape of one page of the result, without nextCursor. */
        json_t *wrapped = json_pack("{s:O}", key, items);
        code = wrapped != NULL ? print_json_result(wrapped)
                               : cli_report_failure(method, MCP_ENOMEM, NULL);
        json_decref(wrapped);
    } else if (o->command == CMD_TOOLS_LIST) {
        cli_print_tools(stdout, items);
    } else if (o->command == CMD_PROMPTS_LIST) {
        cli_print_prompts(stdout, items);
    } else {
        cli_print_resources(stdout, items, o->command == CMD_RESOURCES_TEMPLATES);
    }
    json_decref(items);
    return code;
}

static int print_tool_result(const cli *o, json_t *result);

/* The server made a task of the call: its id, for tasks get, result and cancel. */
static void task_made(const char *task_id, void *user)
{
    const cli *o = user;
    if (!o->quiet) {
        cli_status_done();
        fputs("mcp: the server runs the call as task ", stderr);
        cli_put_text(stderr, task_id, NULL);
        fputc('\n', stderr);
    }
}

static int run_tools_call(mcp_client *c, const cli *o)
{
    mcp_rpc_error err = {0};
    json_t *tools = NULL;
    const json_t *schema = NULL;

    /*
     * The input schema decides whether text=123 is a string or a number, so
     * look the tool up first. A server that fails tools/list may still serve
     * tools/call; then every value is guessed from its text alone.
     */
    int rc = mcp_client_list_all(c, "tools/list", "tools", &tools, &err);
    if (rc == MCP_ERPC || rc == MCP_ENOTSUP) {
        mcp_rpc_error_clear(&err);
    } else if (rc != MCP_OK) {
        return cli_report_failure("tools/list", rc, &err);
    } else {
        size_t i;
        const json_t *tool;
        json_array_foreach(tools, i, tool)
        {
            const char *name = json_string_value(json_object_get(tool, "name"));
            if (name != NULL && strcmp(name, o->target) == 0) {
                schema = json_object_get(tool, "inputSchema");
                break;
            }
        }
    }

    json_t *args = cli_tool_arguments(o->kvs, o->nkvs, schema);
    json_decref(tools); /* schema pointed into tools; args no longer needs it */
    if (args == NULL)
        return cli_report_failure("tools/call", MCP_ENOMEM, NULL);

    mcp_call_opts opts = {.size = sizeof opts,
                          .timeout_ms = o->timeout_ms,
                          .on_progress = o->quiet ? NULL : cli_status_progress,
                          .user = (void *)o,
                          .flags = o->task ? MCP_CALL_TASKS : 0,
                          .on_task = task_made};
    json_t *result = NULL;
    rc = mcp_client_call_tool(c, o->target, args, &opts, &result, &err);
    cli_status_done();
    if (rc != MCP_OK)
        return cli_report_failure("tools/call", rc, &err);
    return print_tool_result(o, result);
}

/* tasks get, tasks result, tasks cancel. */
static int run_tasks(mcp_client *c, const cli *o)
{
    mcp_rpc_error err = {0};
    json_t *out = NULL;
    int rc;
    const char *what;
    if (o->command == CMD_TASKS_RESULT) {
        mcp_call_opts opts = {.size = sizeof opts, .timeout_ms = o->timeout_ms};
        what = "tasks/get";
        rc = mcp_client_task_result(c, o->target, &opts, &out, &err);
        cli_status_done();
        if (rc != MCP_OK)
            return cli_report_failure(what, rc, &err);
        return print_tool_result(o, out);
    }
    if (o->command == CMD_TASKS_CANCEL) {
        what = "tasks/cancel";
        rc = mcp_client_task_cancel(c, o->target, &err);
    } else {
        what = "tasks/get";
        rc = mcp_client_task_get(c, o->target, &out, &err);
    }
    if (rc != MCP_OK)
        return cli_report_failure(what, rc, &err);
    if (o->command == CMD_TASKS_CANCEL) {
        if (o->json)
            puts("{}");
        else
            printf("cancel asked for task %s\n", o->target);
        return CLI_EXIT_OK;
    }
    int code = CLI_EXIT_OK;
    if (o->json) {
        code = print_json_result(out);
    } else {
        const char *status = json_string_value(json_object_get(out, "status"));
        printf("task %s: ", o->target);
        cli_put_text(stdout, status != NULL ? status : "(no status)", NULL);
        putchar('\n');
        cli_print_task(stdout, out);
    }
    json_decref(out);
    return code;
}

static int print_tool_result(const cli *o, json_t *result)
{
    int code;
    if (o->json) {
        code = print_json_result(result);
        if (code == CLI_EXIT_OK && json_is_true(json_object_get(result, "isError")))
            code = CLI_EXIT_ERROR;
    } else {
        fflush(stdout);
        code = cli_print_tool_result(stdout, stderr, result);
    }
    json_decref(result);
    return code;
}

static int run_ping(mcp_client *c, const cli *o)
{
    /* mcp_client_ping has no error out-parameter: ask for the answer's code and data. */
    mcp_call_opts opts = {.timeout_ms = o->timeout_ms};
    mcp_rpc_error err = {0};
    json_t *result = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Revision 2026-07-28 has no ping: server/discover is what every server answers. */
    const char *version = mcp_client_protocol_version(c);
    const char *method = version != NULL && strcmp(version, MCP_PROTOCOL_2026_07_28) == 0
                             ? "server/discover"
                             : "ping";
    int rc = mcp_client_request(c, method, NULL, &opts, &result, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    json_decref(result);
    if (rc != MCP_OK)
        return cli_report_failure("ping", rc, &err);
    long long ms =
        (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (long long)(t1.tv_nsec - t0.tv_nsec) / 1000000;
    if (o->json)
        puts("{}");
    else
        printf("pong (%lld ms)\n", ms);
    return CLI_EXIT_OK;
}

/* What the server said of itself when the client connected. */
static int run_info(mcp_client *c, const cli *o)
{
    const char *instructions = mcp_client_instructions(c);
    json_t *info =
        json_pack("{s:s?, s:O, s:O, s:s?}", "protocolVersion", mcp_client_protocol_version(c),
                  "serverInfo", mcp_client_server_info(c), "capabilities",
                  mcp_client_server_capabilities(c), "instructions", instructions);
    if (info == NULL)
        return cli_report_failure("info", MCP_ENOMEM, NULL);
    if (o->json)
        cli_print_json(stdout, info);
    else
        cli_print_info(stdout, info);
    json_decref(info);
    return CLI_EXIT_OK;
}

/* resources read, prompts get, complete: one request, one result. */
static int run_single(mcp_client *c, const cli *o)
{
    mcp_rpc_error err = {0};
    json_t *result = NULL;
    const char *what;
    int rc;

    switch (o->command) {
    case CMD_RESOURCES_READ:
        what = "resources/read";
        rc = mcp_client_read_resource(c, o->target, &result, &err);
        break;
    case CMD_PROMPTS_GET: {
        what = "prompts/get";
        json_t *args = cli_prompt_arguments(o->kvs, o->nkvs);
        if (args == NULL)
            return cli_report_failure(what, MCP_ENOMEM, NULL);
        rc = mcp_client_get_prompt(c, o->target, args, &result, &err);
        break;
    }
    case CMD_COMPLETE: {
        what = "completion/complete";
        bool prompt = strcmp(o->complete_kind, "prompt") == 0;
        json_t *ref = json_pack("{s:s,s:s}", "type", prompt ? "ref/prompt" : "ref/resource",
                                prompt ? "name" : "uri", o->target);
        if (ref == NULL)
            return cli_report_failure(what, MCP_ENOMEM, NULL);
        rc = mcp_client_complete(c, ref, o->complete_arg, o->complete_value, &result, &err);
        break;
    }
    default:
        return CLI_EXIT_USAGE;
    }
    if (rc != MCP_OK)
        return cli_report_failure(what, rc, &err);

    int code = CLI_EXIT_OK;
    if (o->json) {
        code = print_json_result(result);
    } else if (o->command == CMD_RESOURCES_READ) {
        cli_print_resource_contents(stdout, result);
    } else if (o->command == CMD_PROMPTS_GET) {
        cli_print_prompt(stdout, result);
    } else {
        cli_print_completion(stdout, result);
        const json_t *completion = json_object_get(result, "completion");
        const json_t *total = json_object_get(completion, "total");
        size_t shown = json_array_size(json_object_get(completion, "values"));
        if (!o->quiet && json_is_integer(total) && json_integer_value(total) > (json_int_t)shown)
            cli_errorf("(%zu of %lld values shown)\n", shown, (long long)json_integer_value(total));
        else if (!o->quiet && json_is_true(json_object_get(completion, "hasMore")))
            cli_errorf("(more values exist)\n");
    }
    json_decref(result);
    return code;
}

static int run_logging_set(mcp_client *c, const cli *o)
{
    mcp_rpc_error err = {0};
    int rc = mcp_client_set_logging_level(c, (mcp_log_level)o->set_level, &err);
    if (rc != MCP_OK)
        return cli_report_failure("logging/setLevel", rc, &err);
    if (o->json)
        puts("{}");
    else
        printf("logging level set to %s\n", mcp_log_level_name((mcp_log_level)o->set_level));
    return CLI_EXIT_OK;
}

static int run(const cli *o)
{
    cli_server_set_name(&o->server);
    if (o->command == CMD_SUBSCRIBE)
        cli_subscribe_prepare(); /* before the client's threads start */
    mcp_client *c = mcp_client_new("mcp", MCP_VERSION_STRING);
    if (c == NULL) {
        cli_errorf("mcp: %s\n", mcp_strerror(MCP_ENOMEM));
        return CLI_EXIT_CONNECT;
    }
    int code;
    int rc = mcp_client_set_timeout(c, o->timeout_ms);
    if (rc == MCP_OK)
        rc = mcp_client_set_protocol(c, o->server.protocol != NULL ? o->server.protocol : "auto");
    if (rc == MCP_OK && !o->quiet)
        rc = mcp_client_on_notification(c, cli_status_notification, NULL);
    if (rc != MCP_OK) {
        cli_errorf("mcp: %s\n", mcp_strerror(rc));
        code = CLI_EXIT_CONNECT;
        goto done;
    }
    bool interactive = o->interactive >= 0
                           ? o->interactive == 1
                           : isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1;
    code = cli_ask_setup(c, interactive, o->roots, o->nroots);
    if (code != CLI_EXIT_OK)
        goto done;

    code = cli_connect(c, &o->server, o->timeout_ms);
    if (code != CLI_EXIT_OK)
        goto done;

    const char *capability = needed_capability(o->command);
    if (capability != NULL && !server_offers(c, capability)) {
        cli_errorf("mcp: the server does not offer %s (server: %s)\n", capability,
                   cli_server_name());
        code = CLI_EXIT_ERROR;
        goto done;
    }

    if (o->log_level >= 0 && !server_offers(c, "logging")) {
        /* The command can still run; the user only gets no log lines. */
        if (!o->quiet)
            cli_errorf("mcp: warning: --log-level: the server does not offer logging\n");
    } else if (o->log_level >= 0) {
        mcp_rpc_error err = {0};
        rc = mcp_client_set_logging_level(c, (mcp_log_level)o->log_level, &err);
        if (rc == MCP_ERPC) {
            /* The command can still run; the user only gets fewer log lines. */
            if (!o->quiet)
                cli_print_rpc_error("mcp: warning: --log-level: ", &err);
            mcp_rpc_error_clear(&err);
        } else if (rc != MCP_OK) {
            code = cli_report_failure("logging/setLevel", rc, &err);
            goto done;
        }
    }

    switch (o->command) {
    case CMD_TOOLS_LIST:
        code = run_list(c, o, "tools/list", "tools");
        break;
    case CMD_RESOURCES_LIST:
        code = run_list(c, o, "resources/list", "resources");
        break;
    case CMD_RESOURCES_TEMPLATES:
        code = run_list(c, o, "resources/templates/list", "resourceTemplates");
        break;
    case CMD_PROMPTS_LIST:
        code = run_list(c, o, "prompts/list", "prompts");
        break;
    case CMD_TOOLS_CALL:
        code = run_tools_call(c, o);
        break;
    case CMD_PING:
        code = run_ping(c, o);
        break;
    case CMD_INFO:
        code = run_info(c, o);
        break;
    case CMD_LOGGING_SET:
        code = run_logging_set(c, o);
        break;
    case CMD_SUBSCRIBE:
        code = cli_subscribe(c, o->what, o->nwhat, o->json, o->quiet);
        break;
    case CMD_SKILLS:
        code = cli_skills(c, o->target, o->skill_file, o->json);
        break;
    case CMD_TASKS_GET:
    case CMD_TASKS_RESULT:
    case CMD_TASKS_CANCEL:
        code = run_tasks(c, o);
        break;
    default:
        code = run_single(c, o);
        break;
    }

done:
    cli_status_done();
    /* Frees the client: reaps the server process, or ends the HTTP session. */
    mcp_client_free(c);
    if (o->command == CMD_SUBSCRIBE)
        cli_subscribe_finish();
    return code;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "login") == 0 || strcmp(argv[1], "logout") == 0 ||
                      strcmp(argv[1], "auth") == 0))
        return cli_auth_main(argc - 1, argv + 1);
    cli o = {.timeout_ms = DEFAULT_TIMEOUT_MS, .log_level = -1, .set_level = -1, .interactive = -1};
    int code = parse_args(&o, argc, argv);
    if (code < 0) {
        cli_status_init(o.quiet);
        code = run(&o);
    }
    if (fflush(stdout) != 0 && errno != EPIPE) {
        fprintf(stderr, "mcp: error writing output: %s\n", strerror(errno));
        if (code == CLI_EXIT_OK)
            code = CLI_EXIT_ERROR;
    }
    for (size_t i = 0; i < o.nkvs; i++)
        cli_kv_clear(&o.kvs[i]);
    free(o.kvs);
    free(o.server.argv);
    free(o.server.headers);
    free(o.roots);
    return code;
}
