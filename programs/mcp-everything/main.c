/* SPDX-License-Identifier: MIT */
/*
 * mcp-everything: the command line.
 *
 * Parses the flags, builds the server with everything_server_new() and serves
 * it on the chosen transport. Exit status: 0 after a clean end, 1 when
 * serving fails, 2 for a usage error.
 */
#include "everything.h"
#include "http_flags.h"
#include "log_flag.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LISTEN "127.0.0.1:8080"

enum { EXIT_USAGE = 2 };

enum transport { TRANSPORT_HTTP, TRANSPORT_STDIO };

struct options {
    enum transport transport;
    int transport_given;
    const char *listen;         /* HOST:PORT for --http */
    int page_size;              /* 0: the library's default */
    unsigned eras;              /* MCP_ERA_*; 0: both */
    int workers;                /* 0: the library's default */
    const char *state_key_file; /* the requestState key, shared by the nodes */
    const char *skills;         /* --skills DIR, or NULL */
    int task_ttl_ms;            /* --task-ttl; 0: the library's default */
    int max_tasks;              /* --max-tasks; 0: the library's default */
    http_flags flags;           /* the HTTP flags; lists point into argv */
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]...\n"
            "Serve every feature of the Model Context Protocol: tools, resources, resource\n"
            "templates, prompts, completion and logging. This is the server the official\n"
            "conformance suite tests, and a peer for trying out MCP clients.\n"
            "\n"
            "Transport (one of):\n"
            "      --http HOST:PORT  serve Streamable HTTP at http://HOST:PORT/mcp\n"
            "                        (the default, on " DEFAULT_LISTEN ");\n"
            "                        write an IPv6 host in brackets: [::1]:8080; also\n"
            "                        GET /healthz (503 while draining) and GET /metrics\n"
            "                        (Prometheus text: streams, messages, authorization\n"
            "                        outcomes, TLS handshakes)\n"
            "      --stdio           serve one session over standard input and output\n"
            "                        (newline-delimited JSON-RPC; logs go to stderr)\n"
            "\n",
            EVERYTHING_NAME);
    http_flags_help(out);
    fprintf(out,
            "\n"
            "Options:\n"
            "      --page-size N     items per page of tools/list, resources/list and the\n"
            "                        other list methods, 1 to 10000 (default 100)\n"
            "      --workers N       threads that run tool, resource and prompt handlers,\n"
            "                        1 to 256 (default 8)\n"
            "      --protocol ERA    the protocol eras to speak: both (the default), legacy\n"
            "                        (2024-11-05 to 2025-11-25, opened by initialize, with\n"
            "                        sessions) or modern (2026-07-28: stateless requests\n"
            "                        that name their revision in _meta)\n"
            "      --state-key-file FILE  the key that seals 2026-07-28 requestState: 32\n"
            "                        bytes, or 64 hex digits; nodes behind one load\n"
            "                        balancer share it (default: one drawn at start)\n"
            "      --skills DIR      serve the skills under DIR (SEP-2640: skills/list,\n"
            "                        skills/get, skill:// resources): folders that each\n"
            "                        hold a SKILL.md\n"
            "      --task-ttl MS     how long a task and its result are kept, 1000 to\n"
            "                        86400000 milliseconds (default 3600000, an hour)\n"
            "      --max-tasks N     unexpired tasks one principal may hold, 1 to 1000000\n"
            "                        (default 1000; all clients are one on a server\n"
            "                        without authorization); above 10000 it is the\n"
            "                        bound of all tasks too\n" LOG_FORMAT_HELP "\n"
            "  -h, --help            print this help and exit\n"
            "      --version         print the version and exit\n"
            "\n"
            "Tools for the conformance suite: test_simple_text, test_image_content,\n"
            "test_audio_content, test_embedded_resource, test_multiple_content_types,\n"
            "test_tool_with_logging, test_tool_with_progress, test_error_handling,\n"
            "test_reconnection, test_sampling, test_elicitation,\n"
            "test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,\n"
            "json_schema_2020_12_tool; for revision 2026-07-28: test_input_required_result_*\n"
            "(elicitation, sampling, list_roots, request_state, multiple_inputs, multi_round,\n"
            "tampered_state, capabilities), test_missing_capability,\n"
            "test_streaming_elicitation, test_logging_tool, test_trigger_tool_change,\n"
            "test_trigger_prompt_change, test_custom_headers; for the tasks extension:\n"
            "greet, slow_compute, failing_job, protocol_error_job, confirm_delete,\n"
            "multi_input, test_tool_with_task. Tools for tests and demos: echo, "
            "add, long_running,\n"
            "notify, poll_notify, list_roots, trigger_resource_update, log_all_levels,\n"
            "slow_echo, ping_client, trace_context, complete_elicitation,\n"
            "url_elicitation, and app_sum, an MCP App (its view: ui://everything/sum.html).\n"
            "Resources: test://static-text, test://static-binary, test://watched-resource\n"
            "and the template test://template/{id}/data.\n"
            "\n"
            "Examples:\n"
            "  %s --http 127.0.0.1:3000\n"
            "  %s --stdio < requests.jsonl\n"
            "\n"
            "Exit status: 0 after a clean end, 1 when serving fails, 2 for a usage error.\n",
            EVERYTHING_NAME, EVERYTHING_NAME);
}

static void usage_error(const char *fmt, ...) MCP_PRINTF(1, 2);

/* Prints "mcp-everything: <message>" and the hint to --help, GNU style. */
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", EVERYTHING_NAME);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", EVERYTHING_NAME);
}

/* Returns 0 and fills opt, -1 to exit with success (help, version), or EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_STDIO = 256,
        OPT_HTTP,
        OPT_PAGE_SIZE,
        OPT_WORKERS,
        OPT_VERSION,
        OPT_PROTOCOL,
        OPT_STATE_KEY,
        OPT_SKILLS,
        OPT_TASK_TTL,
        OPT_MAX_TASKS,
        OPT_LOG_FORMAT
    };
    struct option longopts[13 + HTTP_FLAGS_COUNT] = {
        {"stdio", no_argument, NULL, OPT_STDIO},
        {"http", required_argument, NULL, OPT_HTTP},
        {"page-size", required_argument, NULL, OPT_PAGE_SIZE},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"protocol", required_argument, NULL, OPT_PROTOCOL},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"state-key-file", required_argument, NULL, OPT_STATE_KEY},
        {"skills", required_argument, NULL, OPT_SKILLS},
        {"task-ttl", required_argument, NULL, OPT_TASK_TTL},
        {"max-tasks", required_argument, NULL, OPT_MAX_TASKS},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    };
    http_flags_add(longopts + 12);
    longopts[12 + HTTP_FLAGS_COUNT] = (struct option){NULL, 0, NULL, 0};

    *opt = (struct options){.transport = TRANSPORT_HTTP, .listen = DEFAULT_LISTEN};
    int c, li = -1;
    /* Our own messages, so that every error starts with the program's name. */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
        /* The flag as named in messages: "--name", whatever form it was given in. */
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s", li >= 0 ? longopts[li].name : "?");
        li = -1;
        switch (c) {
        case OPT_STDIO:
        case OPT_HTTP: {
            enum transport t = c == OPT_STDIO ? TRANSPORT_STDIO : TRANSPORT_HTTP;
            if (opt->transport_given && opt->transport != t) {
                usage_error("--stdio and --http exclude each other");
                return EXIT_USAGE;
            }
            opt->transport = t;
            opt->transport_given = 1;
            if (c == OPT_HTTP) {
                if (http_flags_check_listen(optarg) != 0) {
                    usage_error("--http needs HOST:PORT with a port from 0 to 65535 (an IPv6 "
                                "host in brackets), not '%s'",
                                optarg);
                    return EXIT_USAGE;
                }
                opt->listen = optarg;
            }
            break;
        }
        case OPT_PAGE_SIZE:
            if (http_flags_parse_int(optarg, 1, 10000, &opt->page_size) != 0) {
                usage_error("--page-size needs an integer from 1 to 10000, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_PROTOCOL:
            if (strcmp(optarg, "both") == 0)
                opt->eras = MCP_ERA_LEGACY | MCP_ERA_MODERN;
            else if (strcmp(optarg, "legacy") == 0)
                opt->eras = MCP_ERA_LEGACY;
            else if (strcmp(optarg, "modern") == 0)
                opt->eras = MCP_ERA_MODERN;
            else {
                usage_error("--protocol needs both, legacy or modern, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_STATE_KEY:
            opt->state_key_file = optarg;
            break;
        case OPT_WORKERS:
            if (http_flags_parse_int(optarg, 1, 256, &opt->workers) != 0) {
                usage_error("--workers needs an integer from 1 to 256, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_SKILLS:
            opt->skills = optarg;
            break;
        case OPT_LOG_FORMAT:
            if (log_format_flag(EVERYTHING_NAME, optarg) != 0)
                return EXIT_USAGE;
            break;
        case OPT_TASK_TTL:
            if (http_flags_parse_int(optarg, 1000, 86400000, &opt->task_ttl_ms) != 0) {
                usage_error("--task-ttl needs milliseconds from 1000 to 86400000, not '%s'",
                            optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_MAX_TASKS:
            if (http_flags_parse_int(optarg, 1, 1000000, &opt->max_tasks) != 0) {
                usage_error("--max-tasks needs an integer from 1 to 1000000, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h':
            print_help(stdout);
            return -1;
        case OPT_VERSION:
            printf("%s %s (libmcp %s, MCP protocol %s)\n", EVERYTHING_NAME, MCP_VERSION_STRING,
                   MCP_VERSION_STRING, MCP_PROTOCOL_LATEST);
            return -1;
        default:
            if (http_flags_other(&opt->flags, c, optarg, flag, argv, usage_error) != 0)
                return EXIT_USAGE;
            break;
        }
    }
    if (optind < argc) {
        usage_error("unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    if (http_flags_finish(&opt->flags, usage_error) != 0)
        return EXIT_USAGE;
    return 0;
}

/* Says where we listen; with port 0 this is how a caller learns the port. */
static void on_listen(const char *url, void *user)
{
    (void)user;
    prog_log(MCP_LOG_NOTICE, EVERYTHING_NAME, "listening on %s", url);
    fflush(stderr);
}

/* Reads the requestState key (see http_flags_read_key) and gives it to srv. */
static int set_state_key(mcp_server *srv, const char *path)
{
    unsigned char key[32];
    int ok = http_flags_read_key(path, key) == 0 &&
             mcp_server_set_state_key(srv, key, sizeof(key), 0) == MCP_OK;
    memset(key, 0, sizeof(key));
    if (!ok) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME,
                 "--state-key-file: '%s' must hold 32 bytes or 64 hex digits", path);
        return -1;
    }
    return 0;
}

/* Applies the numeric settings; returns 0, or EXIT_USAGE after printing why. */
static int apply_settings(mcp_server *srv, const struct options *opt)
{
    int rc;
    if (opt->page_size > 0 && (rc = mcp_server_set_page_size(srv, opt->page_size)) != MCP_OK) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--page-size: %s", mcp_strerror(rc));
        return EXIT_USAGE;
    }
    if (opt->workers > 0 && (rc = mcp_server_set_workers(srv, opt->workers)) != MCP_OK) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--workers: %s", mcp_strerror(rc));
        return EXIT_USAGE;
    }
    if (opt->state_key_file != NULL && set_state_key(srv, opt->state_key_file) != 0)
        return EXIT_USAGE;
    size_t nskills = 0;
    if (opt->skills != NULL && (rc = mcp_server_add_skills(srv, opt->skills, &nskills)) != MCP_OK) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--skills %s: %s", opt->skills, mcp_strerror(rc));
        return EXIT_USAGE;
    }
    if (opt->skills != NULL && nskills == 0)
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--skills %s: no skill found", opt->skills);
    if (opt->task_ttl_ms > 0 || opt->max_tasks > 0) {
        /* A bound per principal above the default for all raises that one too. */
        mcp_tasks_opts t = {.size = sizeof t,
                            .ttl_ms = opt->task_ttl_ms,
                            .max_per_owner = (size_t)opt->max_tasks,
                            .max_total = opt->max_tasks > 10000 ? (size_t)opt->max_tasks : 0};
        if ((rc = mcp_server_set_tasks(srv, &t)) != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--task-ttl, --max-tasks: %s",
                     mcp_strerror(rc));
            return EXIT_USAGE;
        }
    }
    if (opt->eras != 0 && (rc = mcp_server_set_eras(srv, opt->eras)) != MCP_OK) {
        prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "--protocol: %s", mcp_strerror(rc));
        return EXIT_USAGE;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    int status = parse_args(argc, argv, &opt);
    if (status != 0)
        return status < 0 ? EXIT_SUCCESS : status;

    mcp_server *srv = everything_server_new();
    if (!srv)
        return EXIT_FAILURE;
    status = apply_settings(srv, &opt);
    if (status == 0) {
        int rc;
        if (opt.transport == TRANSPORT_HTTP) {
            http_flags_raise_fd_limit();
            opt.flags.http.listen = opt.listen;
            opt.flags.http.on_listen = on_listen;
            static const mcp_http_route routes[] = {
                {.method = "GET", .path = "/healthz", .fn = http_flags_healthz},
                {.method = "GET", .path = "/metrics", .fn = mcp_http_metrics_route},
                {.path = NULL}};
            opt.flags.http.routes = routes;
            rc = mcp_serve_http(srv, &opt.flags.http);
        } else {
            rc = mcp_serve_stdio(srv);
        }
        if (rc != MCP_OK) {
            prog_log(MCP_LOG_ERROR, EVERYTHING_NAME, "serving %s failed: %s",
                     opt.transport == TRANSPORT_HTTP ? "HTTP" : "stdio", mcp_strerror(rc));
            status = EXIT_FAILURE;
        }
    }
    mcp_server_free(srv);
    return status;
}
