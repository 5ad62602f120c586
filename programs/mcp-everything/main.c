/*
 * mcp-everything: the command line.
 *
 * Parses the flags, builds the server with everything_server_new() and serves
 * it on the chosen transport. Exit status: 0 after a clean end, 1 when
 * serving fails, 2 for a usage error.
 */
#include "everything.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#define DEFAULT_LISTEN "127.0.0.1:8080"

enum { EXIT_USAGE = 2 };

enum transport { TRANSPORT_HTTP, TRANSPORT_STDIO };

struct options {
    enum transport transport;
    int transport_given;
    const char *listen; /* HOST:PORT for --http */
    int page_size;      /* 0: the library's default */
    unsigned eras;      /* MCP_ERA_*; 0: both */
    int workers;        /* 0: the library's default */
    mcp_http_opts http; /* the HTTP flags; lists point into argv */
    const char *origins[33], *hosts[33], *cors[33];
    int n_origins, n_hosts, n_cors;
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
            "                        write an IPv6 host in brackets: [::1]:8080\n"
            "      --stdio           serve one session over standard input and output\n"
            "                        (newline-delimited JSON-RPC; logs go to stderr)\n"
            "\n"
            "HTTP options:\n"
            "      --json-response   answer requests with one application/json body\n"
            "                        instead of an SSE stream; a request that sends\n"
            "                        progress, logs or requests of its own before its\n"
            "                        answer gets an SSE stream, so they come first\n"
            "      --stateless       no sessions: each POST stands alone; GET and DELETE\n"
            "                        get 405; tools that ask the client something (ping,\n"
            "                        sampling, elicitation, roots) fail at once, and\n"
            "                        initialize offers no listChanged and no subscribe\n"
            "      --no-get          no standalone stream: GET gets 405\n"
            "      --no-legacy-sse   do not serve the 2024-11-05 endpoints /sse and /messages\n"
            "      --allowed-origin ORIGIN  allow this Origin (repeatable; default: only\n"
            "                        loopback origins)\n"
            "      --allowed-host NAME  allow this Host name (repeatable; default: loopback\n"
            "                        names when bound to loopback)\n"
            "      --cors-origin ORIGIN  send CORS headers to this origin, '*' for any\n"
            "                        (repeatable; default: no CORS)\n"
            "      --keepalive-ms N  SSE keep-alive comment interval, 0 for none\n"
            "                        (default 15000)\n"
            "      --max-sessions N  open sessions at most; past it the least recently\n"
            "                        used idle session makes room (default 1000)\n"
            "      --max-connections N  open connections (default: the file-descriptor\n"
            "                        limit, raised to its hard limit, less 64)\n"
            "      --max-connections-per-source N  from one address (default: no limit)\n"
            "      --session-idle-ms N  idle sessions expire after N ms (default 1800000)\n"
            "      --max-body BYTES  request body limit (default 4194304)\n"
            "      --max-get-streams N  open GET streams per session; more get 429\n"
            "                        (default 16)\n"
            "      --max-queued BYTES  bytes a slow reader may leave queued on a stream\n"
            "                        before it is cut off (default 4194304; a tool whose\n"
            "                        stream is behind waits long before)\n"
            "      --drain-ms N      on SIGTERM or SIGINT, stop taking requests and let\n"
            "                        those in flight finish for N ms (default 10000);\n"
            "                        a second signal stops at once. GET /healthz answers\n"
            "                        200, or 503 while draining\n"
            "\n"
            "Resumability (on by default; SSE events get ids and are kept for replay):\n"
            "      --retry-ms N      the retry interval priming events announce\n"
            "                        (default 1000)\n"
            "      --no-resumability no event ids, no event store, no priming events\n"
            "      --store-max-events N  events kept per session (default 10000)\n"
            "      --store-max-bytes N   bytes kept per session (default 16777216)\n"
            "      --store-ttl-ms N  how long an event is kept (default 300000)\n"
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
            "test_trigger_prompt_change, test_custom_headers. Tools for tests and demos: echo, "
            "add, long_running,\n"
            "notify, poll_notify, list_roots, trigger_resource_update, log_all_levels,\n"
            "slow_echo, ping_client.\n"
            "Resources: test://static-text, test://static-binary, test://watched-resource\n"
            "and the template test://template/{id}/data.\n"
            "\n"
            "Examples:\n"
            "  %s --http 127.0.0.1:3000\n"
            "  %s --stdio < requests.jsonl\n"
            "\n"
            "Exit status: 0 after a clean end, 1 when serving fails, 2 for a usage error.\n",
            EVERYTHING_NAME, EVERYTHING_NAME, EVERYTHING_NAME);
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

/* Parses a decimal integer in [min, max]; returns 0, or -1 for anything else. */
static int parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/*
 * Checks HOST:PORT: a non-empty host (an IPv6 address in brackets) and a port
 * from 0 (any free port) to 65535. Returns 0 or -1.
 */
static int check_listen(const char *listen)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return -1;
    size_t host_len = (size_t)(colon - listen);
    if (listen[0] == '[') {
        if (host_len < 3 || listen[host_len - 1] != ']')
            return -1;
    } else if (memchr(listen, ':', host_len) != NULL) {
        return -1; /* an IPv6 address without brackets: the port is ambiguous */
    }
    int port;
    return parse_int(colon + 1, 0, 65535, &port);
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
        OPT_JSON,
        OPT_STATELESS,
        OPT_NO_GET,
        OPT_NO_LEGACY,
        OPT_ORIGIN,
        OPT_HOST,
        OPT_CORS,
        OPT_KEEPALIVE,
        OPT_MAX_SESSIONS,
        OPT_IDLE,
        OPT_MAX_BODY,
        OPT_MAX_QUEUED,
        OPT_MAX_GETS,
        OPT_MAX_CONNS,
        OPT_MAX_CONNS_SOURCE,
        OPT_RETRY,
        OPT_DRAIN,
        OPT_NO_RESUME,
        OPT_STORE_EVENTS,
        OPT_STORE_BYTES,
        OPT_STORE_TTL,
        OPT_PROTOCOL
    };
    static const struct option longopts[] = {
        {"json-response", no_argument, NULL, OPT_JSON},
        {"stateless", no_argument, NULL, OPT_STATELESS},
        {"no-get", no_argument, NULL, OPT_NO_GET},
        {"no-legacy-sse", no_argument, NULL, OPT_NO_LEGACY},
        {"allowed-origin", required_argument, NULL, OPT_ORIGIN},
        {"allowed-host", required_argument, NULL, OPT_HOST},
        {"cors-origin", required_argument, NULL, OPT_CORS},
        {"keepalive-ms", required_argument, NULL, OPT_KEEPALIVE},
        {"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
        {"session-idle-ms", required_argument, NULL, OPT_IDLE},
        {"max-body", required_argument, NULL, OPT_MAX_BODY},
        {"max-queued", required_argument, NULL, OPT_MAX_QUEUED},
        {"max-get-streams", required_argument, NULL, OPT_MAX_GETS},
        {"max-connections", required_argument, NULL, OPT_MAX_CONNS},
        {"max-connections-per-source", required_argument, NULL, OPT_MAX_CONNS_SOURCE},
        {"retry-ms", required_argument, NULL, OPT_RETRY},
        {"drain-ms", required_argument, NULL, OPT_DRAIN},
        {"no-resumability", no_argument, NULL, OPT_NO_RESUME},
        {"store-max-events", required_argument, NULL, OPT_STORE_EVENTS},
        {"store-max-bytes", required_argument, NULL, OPT_STORE_BYTES},
        {"store-ttl-ms", required_argument, NULL, OPT_STORE_TTL},
        {"stdio", no_argument, NULL, OPT_STDIO},
        {"http", required_argument, NULL, OPT_HTTP},
        {"page-size", required_argument, NULL, OPT_PAGE_SIZE},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"protocol", required_argument, NULL, OPT_PROTOCOL},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };

    *opt = (struct options){.transport = TRANSPORT_HTTP, .listen = DEFAULT_LISTEN};
    int c;
    /* Our own messages, so that every error starts with the program's name. */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
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
                if (check_listen(optarg) != 0) {
                    usage_error("--http needs HOST:PORT with a port from 0 to 65535 (an IPv6 "
                                "host in brackets), not '%s'",
                                optarg);
                    return EXIT_USAGE;
                }
                opt->listen = optarg;
            }
            break;
        }
        case OPT_JSON:
            opt->http.json_response = 1;
            break;
        case OPT_STATELESS:
            opt->http.stateless = 1;
            break;
        case OPT_NO_GET:
            opt->http.disable_get = 1;
            break;
        case OPT_NO_LEGACY:
            opt->http.disable_legacy_sse = 1;
            break;
        case OPT_ORIGIN:
        case OPT_HOST:
        case OPT_CORS: {
            const char **list = c == OPT_ORIGIN ? opt->origins
                                : c == OPT_HOST ? opt->hosts
                                                : opt->cors;
            int *n = c == OPT_ORIGIN ? &opt->n_origins
                     : c == OPT_HOST ? &opt->n_hosts
                                     : &opt->n_cors;
            if (*n >= 32) {
                usage_error("option '%s' may be given at most 32 times", argv[optind - 1]);
                return EXIT_USAGE;
            }
            list[(*n)++] = optarg;
            break;
        }
        case OPT_KEEPALIVE: {
            int ms;
            if (parse_int(optarg, 0, 3600000, &ms) != 0) {
                usage_error("--keepalive-ms needs an integer from 0 to 3600000, not '%s'", optarg);
                return EXIT_USAGE;
            }
            opt->http.keepalive_ms = ms == 0 ? -1 : ms;
            break;
        }
        case OPT_MAX_SESSIONS:
            if (parse_int(optarg, 1, 1000000, &opt->http.max_sessions) != 0) {
                usage_error("--max-sessions needs an integer from 1 to 1000000, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_IDLE:
            if (parse_int(optarg, 1, 86400000, &opt->http.session_idle_ms) != 0) {
                usage_error("--session-idle-ms needs an integer from 1 to 86400000, not '%s'",
                            optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_MAX_BODY: {
            int bytes;
            if (parse_int(optarg, 1024, 1 << 30, &bytes) != 0) {
                usage_error("--max-body needs a byte count from 1024 to 1073741824, not '%s'",
                            optarg);
                return EXIT_USAGE;
            }
            opt->http.max_body = (size_t)bytes;
            break;
        }
        case OPT_MAX_QUEUED:
        case OPT_MAX_GETS:
        case OPT_STORE_EVENTS:
        case OPT_STORE_BYTES:
        case OPT_STORE_TTL:
        case OPT_MAX_CONNS:
        case OPT_MAX_CONNS_SOURCE:
        case OPT_RETRY: {
            int v;
            if (parse_int(optarg, 1, 1 << 30, &v) != 0) {
                usage_error("option '%s' needs an integer from 1 to 1073741824, not '%s'",
                            argv[optind - 1], optarg);
                return EXIT_USAGE;
            }
            if (c == OPT_MAX_QUEUED)
                opt->http.max_queued = (size_t)v;
            else if (c == OPT_MAX_GETS)
                opt->http.max_get_streams = v;
            else if (c == OPT_STORE_EVENTS)
                opt->http.memory_store.max_events = (size_t)v;
            else if (c == OPT_STORE_BYTES)
                opt->http.memory_store.max_bytes = (size_t)v;
            else if (c == OPT_STORE_TTL)
                opt->http.memory_store.ttl_ms = v;
            else if (c == OPT_MAX_CONNS)
                opt->http.max_connections = (unsigned)v;
            else if (c == OPT_MAX_CONNS_SOURCE)
                opt->http.max_connections_per_source = (unsigned)v;
            else
                opt->http.retry_ms = v;
            break;
        }
        case OPT_DRAIN:
            if (parse_int(optarg, 0, 1 << 30, &opt->http.drain_ms) != 0) {
                usage_error("--drain-ms needs an integer from 0 to 1073741824, not '%s'", optarg);
                return EXIT_USAGE;
            }
            /* 0 means "stop at once" here; the library reads 0 as its default. */
            if (opt->http.drain_ms == 0)
                opt->http.drain_ms = 1;
            break;
        case OPT_NO_RESUME:
            opt->http.disable_resumability = 1;
            break;
        case OPT_PAGE_SIZE:
            if (parse_int(optarg, 1, 10000, &opt->page_size) != 0) {
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
        case OPT_WORKERS:
            if (parse_int(optarg, 1, 256, &opt->workers) != 0) {
                usage_error("--workers needs an integer from 1 to 256, not '%s'", optarg);
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
        case ':':
            usage_error("option '%s' needs an argument", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            if (optopt > 0 && optopt < 256)
                usage_error("unknown option '-%c'", optopt);
            else if (optopt >= 256) /* a known long option given "=value" it does not take */
                usage_error("option '%s' takes no argument", argv[optind - 1]);
            else
                usage_error("unknown option '%s'", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        usage_error("unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    opt->http.allowed_origins = opt->n_origins ? opt->origins : NULL;
    opt->http.allowed_hosts = opt->n_hosts ? opt->hosts : NULL;
    opt->http.cors_origins = opt->n_cors ? opt->cors : NULL;
    return 0;
}

/* GET /healthz: 200 while serving, 503 once a stop (SIGTERM) is draining, so a
 * load balancer sends new clients elsewhere. */
static void healthz(mcp_http_exchange *x, void *user)
{
    (void)user;
    static const char *const hdrs[] = {"Content-Type", "text/plain", "Cache-Control", "no-store",
                                       NULL};
    if (mcp_http_endpoint_stopping(mcp_http_exchange_endpoint(x)))
        mcp_http_exchange_respond(x, 503, hdrs, "draining\n", 9);
    else
        mcp_http_exchange_respond(x, 200, hdrs, "ok\n", 3);
}

/* Says where we listen; with port 0 this is how a caller learns the port. */
static void on_listen(const char *url, void *user)
{
    (void)user;
    fprintf(stderr, "%s: listening on %s\n", EVERYTHING_NAME, url);
    fflush(stderr);
}

/* Applies the numeric settings; returns 0, or EXIT_USAGE after printing why. */
static int apply_settings(mcp_server *srv, const struct options *opt)
{
    int rc;
    if (opt->page_size > 0 && (rc = mcp_server_set_page_size(srv, opt->page_size)) != MCP_OK) {
        fprintf(stderr, "%s: --page-size: %s\n", EVERYTHING_NAME, mcp_strerror(rc));
        return EXIT_USAGE;
    }
    if (opt->workers > 0 && (rc = mcp_server_set_workers(srv, opt->workers)) != MCP_OK) {
        fprintf(stderr, "%s: --workers: %s\n", EVERYTHING_NAME, mcp_strerror(rc));
        return EXIT_USAGE;
    }
    if (opt->eras != 0 && (rc = mcp_server_set_eras(srv, opt->eras)) != MCP_OK) {
        fprintf(stderr, "%s: --protocol: %s\n", EVERYTHING_NAME, mcp_strerror(rc));
        return EXIT_USAGE;
    }
    return 0;
}

/* Idle connections are cheap; file descriptors are what runs out first (a soft
 * limit of 1024 is common). The connection limit follows the soft limit, so it
 * is raised to the hard one. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
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
            raise_fd_limit();
            opt.http.listen = opt.listen;
            opt.http.on_listen = on_listen;
            static const mcp_http_route routes[] = {
                {.method = "GET", .path = "/healthz", .fn = healthz}, {.path = NULL}};
            opt.http.routes = routes;
            rc = mcp_serve_http(srv, &opt.http);
        } else {
            rc = mcp_serve_stdio(srv);
        }
        if (rc != MCP_OK) {
            fprintf(stderr, "%s: serving %s failed: %s\n", EVERYTHING_NAME,
                    opt.transport == TRANSPORT_HTTP ? "HTTP" : "stdio", mcp_strerror(rc));
            status = EXIT_FAILURE;
        }
    }
    mcp_server_free(srv);
    return status;
}
