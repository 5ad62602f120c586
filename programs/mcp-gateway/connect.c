/* SPDX-License-Identifier: MIT */
/*
 * mcp-gateway --connect URL: a remote MCP server (Streamable HTTP, or the
 * 2024-11-05 HTTP+SSE transport) offered on stdin and stdout, on the library's
 * stdio gateway (mcp/gateway.h, mcp_gateway_stdio). stdout carries the protocol
 * alone: log lines go to stderr.
 *
 * Exit status: 0 after the end of the input or a signal, 1 when the server cannot
 * be used (initialize failed, the server was lost) or stdout failed, 2 for a usage
 * error.
 */
#include "connect.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <uv.h>

#include "header_flag.h"
#include "http_flags.h"
#include "log_flag.h"
#include "program.h"

#define DEFAULT_DRAIN_MS 10000

enum { EXIT_USAGE = 2 };

struct copts {
    mcp_gateway_connect_opts gw;
    mcp_http_client_opts http;
    const char **headers; /* NULL-terminated, pointing into argv */
    int drain_ms;
};

int connect_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--connect") == 0 || strncmp(argv[i], "--connect=", 10) == 0)
            return 1;
    }
    return 0;
}

void connect_help(FILE *out)
{
    fprintf(out,
            "Or: %s --connect URL [OPTION]...\n"
            "Offer the remote MCP server at URL (Streamable HTTP, or the 2024-11-05\n"
            "HTTP+SSE transport) on stdin and stdout, for a client that starts stdio\n"
            "servers. Streams that break are resumed (Last-Event-ID, at the server's\n"
            "retry), and a server that forgot the session (a restart: HTTP 404) gets a new\n"
            "one, with the client's initialize, and the requests in flight sent again.\n"
            "A request that cannot be answered gets a JSON-RPC error saying why.\n"
            "A server that needs OAuth is reached with the tokens `mcp login URL` kept\n"
            "(under $XDG_STATE_HOME/mcp/oauth), renewed when they expire; without them,\n"
            "or with --header 'Authorization: ...', no token is fetched.\n"
            "\n"
            "      --connect URL     the server's MCP endpoint (http:// or https://)\n"
            "      --header 'NAME: VALUE'  send this header with every request\n"
            "                        (repeatable), e.g. 'Authorization: Bearer TOKEN'\n"
            "      --http-sse        URL is the SSE endpoint of the 2024-11-05 transport\n"
            "                        (http://HOST:PORT/sse, say); without it, a server that\n"
            "                        refuses the POST of initialize (400, 404, 405) is\n"
            "                        tried with that transport at URL\n"
            "      --cacert FILE     trust the CA certificates of this PEM file instead of\n"
            "                        the system's\n"
            "      --cert FILE       TLS client certificate (PEM), with its key unless --key\n"
            "      --key FILE        the private key of --cert (PEM)\n"
            "      --request-timeout-ms N  a request not answered in N ms gets an error\n"
            "                        (-32001) and is cancelled (default: none, the\n"
            "                        client's own timeout decides)\n"
            "      --connect-timeout-ms N  bound on each HTTP connection (default 10000)\n"
            "      --max-retries N   reconnections of a stream in a row that bring nothing\n"
            "                        before its request fails (default 5; 0: never)\n"
            "      --no-session-renewal  a forgotten session (HTTP 404) fails its requests\n"
            "                        instead of starting a new one\n"
            "      --max-pending N   the client's requests in flight at once (default 1024);\n"
            "                        more wait in the gateway, in order\n"
            "      --max-message BYTES  the largest message either way (default 4194304)\n"
            "      --max-queued BYTES  what the client may leave unread on stdout while the\n"
            "                        server sends; past it the gateway ends with status 1\n"
            "                        (default 67108864, at least twice --max-message)\n"
            "      --drain-ms N      on SIGTERM or SIGINT, requests in flight may finish for\n"
            "                        N ms (default 10000); a second signal stops at "
            "once\n" GATEWAY_LOG_FORMAT_HELP
            "      --log-level LEVEL  debug, info (the default: a line per request), notice,\n"
            "                        warning, error, critical, alert or emergency\n"
            "\n"
            "The end of stdin ends the session (DELETE) once the requests in flight are\n"
            "answered (10 s at most). Exit status: 0 then, or after a signal; 1 when the\n"
            "server cannot be used (initialize failed: it cannot be reached, or answered\n"
            "with an HTTP error; the server was lost) or stdout failed (or was left\n"
            "unread past --max-queued); 2 for a usage error.\n"
            "\n",
            NAME);
}

/* Returns 0 and fills o, -1 to exit with success (help, version), or EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct copts *o)
{
    enum {
        OPT_CONNECT = 256,
        OPT_HEADER,
        OPT_HTTP_SSE,
        OPT_CACERT,
        OPT_CERT,
        OPT_KEY,
        OPT_REQ_TIMEOUT,
        OPT_CONN_TIMEOUT,
        OPT_RETRIES,
        OPT_NO_RENEWAL,
        OPT_MAX_PENDING,
        OPT_MAX_MESSAGE,
        OPT_MAX_QUEUED,
        OPT_DRAIN,
        OPT_LOG_LEVEL,
        OPT_VERSION,
        OPT_LOG_FORMAT
    };
    static const struct option longopts[] = {
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"header", required_argument, NULL, OPT_HEADER},
        {"http-sse", no_argument, NULL, OPT_HTTP_SSE},
        {"cacert", required_argument, NULL, OPT_CACERT},
        {"cert", required_argument, NULL, OPT_CERT},
        {"key", required_argument, NULL, OPT_KEY},
        {"request-timeout-ms", required_argument, NULL, OPT_REQ_TIMEOUT},
        {"connect-timeout-ms", required_argument, NULL, OPT_CONN_TIMEOUT},
        {"max-retries", required_argument, NULL, OPT_RETRIES},
        {"no-session-renewal", no_argument, NULL, OPT_NO_RENEWAL},
        {"max-pending", required_argument, NULL, OPT_MAX_PENDING},
        {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
        {"max-queued", required_argument, NULL, OPT_MAX_QUEUED},
        {"drain-ms", required_argument, NULL, OPT_DRAIN},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    o->gw.size = sizeof(o->gw);
    o->gw.log_level = MCP_LOG_INFO;
    o->http.size = sizeof(o->http);
    o->drain_ms = DEFAULT_DRAIN_MS;
    /* Every --header fits: there are fewer than argc of them. */
    o->headers = calloc((size_t)argc, sizeof(*o->headers));
    if (o->headers == NULL)
        return EXIT_FAILURE;
    size_t nheaders = 0;
    opterr = 0;
    int c, v, li = -1;
    while ((c = getopt_long(argc, argv, "+:h", longopts, &li)) != -1) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s", li >= 0 ? longopts[li].name : "?");
        li = -1;
        char err[512];
        switch (c) {
        case OPT_CONNECT:
            if (strncasecmp(optarg, "http://", 7) != 0 && strncasecmp(optarg, "https://", 8) != 0) {
                usage_error("--connect needs an http:// or https:// URL, not '%s'", optarg);
                return EXIT_USAGE;
            }
            o->gw.url = optarg;
            break;
        case OPT_HEADER:
            if (header_flag_check(NAME, optarg, err, sizeof(err)) != 0) {
                usage_error("%s", err);
                return EXIT_USAGE;
            }
            o->headers[nheaders++] = optarg;
            break;
        case OPT_HTTP_SSE:
            o->http.http_sse = 1;
            break;
        case OPT_CACERT:
            o->http.cacert = optarg;
            break;
        case OPT_CERT:
            o->http.client_cert = optarg;
            break;
        case OPT_KEY:
            o->http.client_key = optarg;
            break;
        case OPT_NO_RENEWAL:
            o->http.no_session_renewal = 1;
            break;
        case OPT_REQ_TIMEOUT:
        case OPT_CONN_TIMEOUT:
        case OPT_DRAIN:
        case OPT_RETRIES:
        case OPT_MAX_PENDING: {
            int min = c == OPT_RETRIES || c == OPT_DRAIN ? 0 : 1;
            int max = c == OPT_RETRIES ? 1000 : c == OPT_MAX_PENDING ? 1000000 : 86400000;
            if (http_flags_parse_int(optarg, min, max, &v) != 0) {
                usage_error("option '%s' needs an integer from %d to %d, not '%s'", flag, min, max,
                            optarg);
                return EXIT_USAGE;
            }
            if (c == OPT_REQ_TIMEOUT)
                o->gw.request_timeout_ms = v;
            else if (c == OPT_CONN_TIMEOUT)
                o->http.connect_timeout_ms = v;
            else if (c == OPT_DRAIN)
                o->drain_ms = v;
            else if (c == OPT_RETRIES)
                o->http.max_retries = v == 0 ? -1 : v; /* the library's 0 is its default */
            else
                o->gw.max_pending = v;
            break;
        }
        case OPT_MAX_MESSAGE:
        case OPT_MAX_QUEUED:
            if (parse_bytes_flag(flag, optarg,
                                 c == OPT_MAX_MESSAGE ? &o->gw.max_message : &o->gw.max_queued) !=
                0)
                return EXIT_USAGE;
            break;
        case OPT_LOG_LEVEL:
            if (parse_log_level_flag(optarg, &o->gw.log_level) != 0)
                return EXIT_USAGE;
            break;
        case OPT_LOG_FORMAT:
            if (parse_log_format_flag(optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'h':
            return -2;
        case OPT_VERSION:
            print_version();
            return -1;
        default:
            return http_flags_refused(c, argv, usage_error);
        }
    }
    if (optind < argc) {
        usage_error("--connect serves a remote server: '%s' has no place here (a command to "
                    "serve over HTTP is given without --connect)",
                    argv[optind]);
        return EXIT_USAGE;
    }
    if (o->http.client_key != NULL && o->http.client_cert == NULL) {
        usage_error("--key needs --cert");
        return EXIT_USAGE;
    }
    o->http.headers = nheaders > 0 ? o->headers : NULL;
    o->gw.http = &o->http;
    return 0;
}

/* ---- The loop, the signals ---- */

struct run {
    uv_loop_t loop;
    uv_signal_t sigterm, sigint;
    mcp_gateway_stdio *g;
    int drain_ms;
    int signals;
    int status;
};

static void on_done(void *user, int status)
{
    struct run *r = user;
    r->status = status;
    uv_close((uv_handle_t *)&r->sigterm, NULL);
    uv_close((uv_handle_t *)&r->sigint, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct run *r = h->data;
    (void)signum;
    /* The first drains; a second stops at once (the deadline comes forward). */
    mcp_gateway_stdio_stop(r->g, r->signals++ == 0 ? r->drain_ms : 0);
}

int connect_main(int argc, char **argv)
{
    struct copts o;
    int status = parse_args(argc, argv, &o);
    if (status == -2)
        connect_help(stdout);
    if (status != 0) {
        free(o.headers);
        return status < 0 ? EXIT_SUCCESS : status;
    }
    if (o.gw.url == NULL) {
        free(o.headers);
        usage_error("--connect needs a URL");
        return EXIT_USAGE;
    }
    o.gw.log = log_line;
    /* The tokens mcp login kept, unless the user gives an Authorization header. */
    mcp_token_store *store = NULL;
    int own_auth = 0;
    for (const char *const *h = o.http.headers; h != NULL && *h != NULL; h++)
        own_auth |= strncasecmp(*h, "Authorization:", 14) == 0;
    if (!own_auth && mcp_token_store_files(NULL, &store) == MCP_OK) {
        mcp_oauth_opts oo = {.size = sizeof(oo), .store = store, .cacert = o.http.cacert};
        if (mcp_oauth_new(&oo, &o.http.oauth) != MCP_OK)
            o.http.oauth = NULL;
    }

    struct run r = {.drain_ms = o.drain_ms};
    if (uv_loop_init(&r.loop) != 0) {
        mcp_oauth_free(o.http.oauth);
        mcp_token_store_free(store);
        free(o.headers);
        return EXIT_FAILURE;
    }
    int rc = mcp_gateway_stdio_new(&r.loop, &o.gw, 0, 1, on_done, &r, &r.g);
    if (rc == MCP_OK) {
        uv_signal_init(&r.loop, &r.sigterm);
        uv_signal_init(&r.loop, &r.sigint);
        r.sigterm.data = r.sigint.data = &r;
        uv_signal_start(&r.sigterm, on_signal, SIGTERM);
        uv_signal_start(&r.sigint, on_signal, SIGINT);
    } else {
        prog_log(MCP_LOG_ERROR, NAME, "cannot serve %s on stdio: %s", o.gw.url, mcp_strerror(rc));
        r.status = rc;
    }
    uv_run(&r.loop, UV_RUN_DEFAULT);
    mcp_gateway_stdio_free(r.g);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&r.loop) != 0)
        prog_log(MCP_LOG_ERROR, NAME, "handles were left on the loop");
    mcp_oauth_free(o.http.oauth);
    mcp_token_store_free(store);
    free(o.headers);
    return r.status == MCP_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}
