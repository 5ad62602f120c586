/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway: a stdio MCP server offered over Streamable HTTP (and the HTTP+SSE
 * HTTP+SSE transport), on the library's gateway endpoint (mcp/gateway.h).
 *
 * Exit status: 0 after a clean end (SIGTERM or SIGINT drains), 1 when serving
 * fails, 2 for a usage error.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <uv.h>

#include "connect.h"
#include "http_flags.h"
#include "log_flag.h"
#include "http_metrics.h"
#include "program.h"

#define DEFAULT_LISTEN "127.0.0.1:8080"
#define DEFAULT_DRAIN_MS 10000

enum { EXIT_USAGE = 2 };

struct options {
    const char *listen;
    http_flags flags;
    mcp_gateway_opts gw;
    unsigned char state_key[32]; /* gw.state_key points here when --state-key-file is given */
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]... -- COMMAND [ARG]...\n"
            "Offer the stdio MCP server COMMAND over Streamable HTTP (protocol 2025-03-26\n"
            "to 2025-11-25, resumable streams) and the 2024-11-05 HTTP+SSE transport.\n"
            "Each session gets a server process of its own, started by its initialize and\n"
            "stopped when the session ends (DELETE, idle expiry, or a stop). Requests of\n"
            "protocol 2026-07-28 (no session) are served by a pool of server processes the\n"
            "gateway starts itself; its questions to the client become InputRequiredResults.\n"
            "A server's message sent before the session's first GET stream (roots/list on\n"
            "notifications/initialized) waits up to 10 s for it; a request that cannot be\n"
            "delivered gets a JSON-RPC error (-32603) at once.\n"
            "\n"
            "      --http HOST:PORT  listen here (default " DEFAULT_LISTEN "); an IPv6 host\n"
            "                        in brackets: [::1]:8080\n"
            "      --shared-child    one server process for every session, initialized by\n"
            "                        the gateway: for servers that keep no state per client\n"
            "      --max-children N  server processes at once, 1 to 100000 (default 100);\n"
            "                        each costs what its server costs (mcp-everything\n"
            "                        --stdio: 8.6 MB resident, 2 MB of it its own). An\n"
            "                        initialize past it takes the process of an idle\n"
            "                        session (never used ones first, then the least\n"
            "                        recently used), or gets an error when none is idle;\n"
            "                        processes being stopped do not count (as many again\n"
            "                        at most). --max-sessions is this by default, unless\n"
            "                        --shared-child\n"
            "      --kill-grace-ms N  a stopped server gets SIGTERM N ms after its stdin\n"
            "                        closed, and SIGKILL N ms after that (default 2000)\n"
            "      --init-timeout-ms N  how long a server may take to answer initialize\n"
            "                        (default 30000)\n"
            "      --poll-ms N       SSE polling (SEP-1699): end the SSE stream of a request\n"
            "                        that has run N ms; the client gets the rest with GET\n"
            "                        and Last-Event-ID after --retry-ms (protocol\n"
            "                        2025-11-25), and long calls hold no connection\n"
            "                        (default: never)\n"
            "      --pool-size N     server processes for protocol 2026-07-28 requests, 1 to\n"
            "                        1000 (default 4; one when the server speaks 2026-07-28);\n"
            "                        calls whose server asked the client hold processes\n"
            "                        of their own until the retry, 4 per pool process at\n"
            "                        most: past that the oldest of the client holding the\n"
            "                        most is given up (its retry starts it anew)\n"
            "      --input-timeout-ms N  how long a 2026-07-28 request whose server asked the\n"
            "                        client waits for the client's retry (default 60000)\n"
            "      --max-message BYTES  the largest message either way (default 4194304)\n"
            "      --state-key-file FILE  the key that seals 2026-07-28 requestState: 32\n"
            "                        bytes, or 64 hex digits; nodes sharing --redis share\n"
            "                        it, so that a retry reaches the node whose server\n"
            "                        process waits for it (default: one drawn at "
            "start)\n" GATEWAY_LOG_FORMAT_HELP
            "      --log-level LEVEL  debug, info (the default: a line per session, server\n"
            "                        process and request), notice, warning, error, critical,\n"
            "                        alert or emergency\n"
            "\n",
            NAME);
    http_flags_help(out);
    fprintf(out,
            "\n"
            "      GET /healthz      200, or 503 while draining\n"
            "      GET /metrics      the gateway's counters, in the Prometheus text format\n"
            "  -h, --help            print this help and exit\n"
            "      --version         print the version and exit\n"
            "\n"
            "Log lines go to stderr, one per event, as logfmt (ts=... level=... event=...);\n"
            "the servers' stderr is the gateway's.\n"
            "\n"
            "Example:\n"
            "  %s --http 127.0.0.1:8080 -- npx -y @modelcontextprotocol/server-everything\n"
            "\n"
            "Exit status: 0 after a clean end, 1 when serving fails, 2 for a usage error.\n"
            "\n",
            NAME);
    connect_help(out);
}

/* Returns 0 and fills opt, -1 to exit with success (help, version), or EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_HTTP = 256,
        OPT_SHARED,
        OPT_MAX_CHILDREN,
        OPT_GRACE,
        OPT_INIT_TIMEOUT,
        OPT_POLL,
        OPT_POOL,
        OPT_INPUT_TIMEOUT,
        OPT_MAX_MESSAGE,
        OPT_LOG_LEVEL,
        OPT_VERSION,
        OPT_STATE_KEY,
        OPT_LOG_FORMAT
    };
    struct option longopts[15 + HTTP_FLAGS_COUNT] = {
        {"http", required_argument, NULL, OPT_HTTP},
        {"shared-child", no_argument, NULL, OPT_SHARED},
        {"max-children", required_argument, NULL, OPT_MAX_CHILDREN},
        {"kill-grace-ms", required_argument, NULL, OPT_GRACE},
        {"init-timeout-ms", required_argument, NULL, OPT_INIT_TIMEOUT},
        {"poll-ms", required_argument, NULL, OPT_POLL},
        {"pool-size", required_argument, NULL, OPT_POOL},
        {"input-timeout-ms", required_argument, NULL, OPT_INPUT_TIMEOUT},
        {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"state-key-file", required_argument, NULL, OPT_STATE_KEY},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    };
    http_flags_add(longopts + 14);
    longopts[14 + HTTP_FLAGS_COUNT] = (struct option){NULL, 0, NULL, 0};

    memset(opt, 0, sizeof(*opt));
    opt->listen = DEFAULT_LISTEN;
    opt->gw.size = sizeof(opt->gw);
    opt->gw.log_level = MCP_LOG_INFO;
    opterr = 0;
    int c, v, li = -1;
    /* "+": options end at the first argument, which is the server's command. */
    while ((c = getopt_long(argc, argv, "+:h", longopts, &li)) != -1) {
        /* The flag as named in messages: "--name", whatever form it was given in. */
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s", li >= 0 ? longopts[li].name : "?");
        li = -1;
        switch (c) {
        case OPT_HTTP:
            if (http_flags_check_listen(optarg) != 0) {
                usage_error("--http needs HOST:PORT with a port from 0 to 65535 (an IPv6 host "
                            "in brackets), not '%s'",
                            optarg);
                return EXIT_USAGE;
            }
            opt->listen = optarg;
            break;
        case OPT_SHARED:
            opt->gw.shared_child = 1;
            break;
        case OPT_MAX_CHILDREN:
        case OPT_GRACE:
        case OPT_INIT_TIMEOUT:
        case OPT_POLL:
        case OPT_POOL:
        case OPT_INPUT_TIMEOUT: {
            int max = c == OPT_MAX_CHILDREN ? 100000 : c == OPT_POOL ? 1000 : 3600000;
            if (http_flags_parse_int(optarg, 1, max, &v) != 0) {
                usage_error("option '%s' needs an integer from 1 to %d, not '%s'", flag, max,
                            optarg);
                return EXIT_USAGE;
            }
            if (c == OPT_MAX_CHILDREN)
                opt->gw.max_children = v;
            else if (c == OPT_GRACE)
                opt->gw.kill_grace_ms = v;
            else if (c == OPT_POLL)
                opt->gw.poll_ms = v;
            else if (c == OPT_POOL)
                opt->gw.pool_size = v;
            else if (c == OPT_INPUT_TIMEOUT)
                opt->gw.input_timeout_ms = v;
            else
                opt->gw.init_timeout_ms = v;
            break;
        }
        case OPT_MAX_MESSAGE:
            if (parse_bytes_flag(flag, optarg, &opt->gw.max_message) != 0)
                return EXIT_USAGE;
            break;
        case OPT_LOG_LEVEL:
            if (parse_log_level_flag(optarg, &opt->gw.log_level) != 0)
                return EXIT_USAGE;
            break;
        case OPT_LOG_FORMAT:
            if (parse_log_format_flag(optarg) != 0)
                return EXIT_USAGE;
            break;
        case OPT_STATE_KEY:
            if (http_flags_read_key(optarg, opt->state_key) != 0) {
                usage_error("--state-key-file: '%s' must hold 32 bytes or 64 hex digits", optarg);
                return EXIT_USAGE;
            }
            opt->gw.state_key = opt->state_key;
            opt->gw.state_key_len = sizeof(opt->state_key);
            break;
        case 'h':
            print_help(stdout);
            return -1;
        case OPT_VERSION:
            print_version();
            return -1;
        default:
            if (http_flags_other(&opt->flags, c, optarg, flag, argv, usage_error) != 0)
                return EXIT_USAGE;
            break;
        }
    }
    if (optind >= argc) {
        usage_error("the server's command is missing: %s [OPTION]... -- COMMAND [ARG]...", NAME);
        return EXIT_USAGE;
    }
    opt->gw.argv = (const char *const *)(argv + optind);
    if (http_flags_finish(&opt->flags, usage_error) != 0)
        return EXIT_USAGE;
    return 0;
}

/* ---- Routes ---- */

static void metrics(mcp_http_exchange *x, void *user)
{
    (void)user;
    const char *const *hdrs = http_metrics_headers;
    mcp_gateway_stats st = {.size = sizeof(st)};
    if (mcp_gateway_stats_get(mcp_http_exchange_endpoint(x), &st) != MCP_OK) {
        mcp_http_exchange_respond(x, 500, hdrs, "no statistics\n", 14);
        return;
    }
    char buf[16384];
    size_t n = 0;
    const http_metric_row rows[] = {
        {"mcp_gateway_sessions", "gauge", "Open sessions.", st.sessions},
        {"mcp_gateway_children", "gauge", "Server processes running (started, not yet reaped).",
         st.children},
        {"mcp_gateway_children_started_total", "counter", "Server processes started.",
         st.children_started},
        {"mcp_gateway_children_exited_total", "counter", "Server processes reaped.",
         st.children_exited},
        {"mcp_gateway_requests_total", "counter", "Requests of clients answered.", st.requests},
        {"mcp_gateway_request_errors_total", "counter",
         "Requests of clients answered with an error.", st.request_errors},
        {"mcp_gateway_received_bytes_total", "counter",
         "Message bytes read from the server processes.", st.bytes_in},
        {"mcp_gateway_sent_bytes_total", "counter",
         "Message bytes written to the server processes.", st.bytes_out},
    };
    http_metrics_table(buf, sizeof(buf), &n, rows, sizeof rows / sizeof rows[0]);
    /* Requests by method and outcome: the rows that counted something. */
    static const char *const outcomes[MCP_GATEWAY_OUTCOMES] = {"ok", "error", "cancelled",
                                                               "input_required"};
    int w = snprintf(buf + n, sizeof(buf) - n,
                     "# HELP mcp_gateway_method_requests_total Requests of clients by method and "
                     "outcome.\n# TYPE mcp_gateway_method_requests_total counter\n");
    n += w > 0 ? (size_t)w : 0;
    for (int i = 0; i < MCP_GATEWAY_METHODS && n < sizeof(buf); i++)
        for (int o = 0; o < MCP_GATEWAY_OUTCOMES && n < sizeof(buf); o++) {
            if (st.by_method[i][o] == 0)
                continue;
            w = snprintf(buf + n, sizeof(buf) - n,
                         "mcp_gateway_method_requests_total{method=\"%s\",outcome=\"%s\"} %llu\n",
                         mcp_gateway_method_name(i), outcomes[o], st.by_method[i][o]);
            n += w > 0 ? (size_t)w : 0;
        }
    if (mcp_http_endpoint_metrics(mcp_http_exchange_endpoint(x), buf, sizeof(buf), &n) != MCP_OK) {
        mcp_http_exchange_respond(x, 500, hdrs, "no statistics\n", 14);
        return;
    }
    mcp_http_exchange_respond(x, 200, hdrs, buf, n < sizeof(buf) ? n : sizeof(buf));
}

/* ---- The loop, the signals ---- */

struct run {
    uv_loop_t loop;
    uv_signal_t sigterm, sigint, sighup;
    mcp_http_endpoint *ep;
    int drain_ms;
    int signals;
};

static void on_done(void *user, int status)
{
    struct run *r = user;
    (void)status;
    uv_close((uv_handle_t *)&r->sigterm, NULL);
    uv_close((uv_handle_t *)&r->sigint, NULL);
    uv_close((uv_handle_t *)&r->sighup, NULL);
}

/* SIGHUP: the certificate and key files are read again (after a renewal); connections
 * already open keep theirs. */
static void on_hangup(uv_signal_t *h, int signum)
{
    struct run *r = h->data;
    (void)signum;
    if (r->ep != NULL && r->signals == 0)
        (void)mcp_http_endpoint_reload_tls(r->ep);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct run *r = h->data;
    (void)signum;
    /* The first drains; a second stops at once (the deadline comes forward). */
    mcp_http_endpoint_stop(r->ep, r->signals++ == 0 ? r->drain_ms : 0, on_done, r);
}

static void on_listen(const char *url, void *user)
{
    (void)user;
    prog_log(MCP_LOG_NOTICE, NAME, "listening on %s", url);
    fflush(stderr);
}

int main(int argc, char **argv)
{
    if (connect_wanted(argc, argv))
        return connect_main(argc, argv);
    struct options opt;
    int status = parse_args(argc, argv, &opt);
    if (status != 0)
        return status < 0 ? EXIT_SUCCESS : status;
    http_flags_raise_fd_limit();
    if (opt.flags.http.redis_url != NULL && opt.gw.state_key == NULL)
        prog_log(MCP_LOG_WARNING, NAME,
                 "--redis without --state-key-file: a 2026-07-28 retry that reaches another "
                 "node than the one its server process waits on is refused there");
    opt.gw.log = log_line;
    opt.flags.http.listen = opt.listen;
    opt.flags.http.on_listen = on_listen;

    struct run r = {.drain_ms =
                        opt.flags.http.drain_ms ? opt.flags.http.drain_ms : DEFAULT_DRAIN_MS};
    if (uv_loop_init(&r.loop) != 0)
        return EXIT_FAILURE;
    /* Before the endpoint exists: it says where it listens as it starts, and a signal
     * sent on reading that must find our handlers, not the default action, which kills.
     * They run only inside uv_run, once r.ep is set. */
    uv_signal_init(&r.loop, &r.sigterm);
    uv_signal_init(&r.loop, &r.sigint);
    r.sigterm.data = r.sigint.data = &r;
    uv_signal_start(&r.sigterm, on_signal, SIGTERM);
    uv_signal_start(&r.sigint, on_signal, SIGINT);
    uv_signal_init(&r.loop, &r.sighup);
    r.sighup.data = &r;
    if (opt.flags.http.tls_cert_file != NULL)
        uv_signal_start(&r.sighup, on_hangup, SIGHUP);
    int rc = mcp_gateway_http_new(&r.loop, &opt.gw, &opt.flags.http, &r.ep);
    if (rc == MCP_OK) {
        mcp_http_endpoint_route(r.ep, "GET", "/healthz", http_flags_healthz, NULL);
        mcp_http_endpoint_route(r.ep, "GET", "/metrics", metrics, NULL);
    } else {
        prog_log(MCP_LOG_ERROR, NAME, "serving HTTP failed: %s", mcp_strerror(rc));
        status = EXIT_FAILURE;
        on_done(&r, rc);
    }
    uv_run(&r.loop, UV_RUN_DEFAULT);
    mcp_http_endpoint_free(r.ep);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&r.loop) != 0)
        prog_log(MCP_LOG_ERROR, NAME, "handles were left on the loop");
    return status;
}
