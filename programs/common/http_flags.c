/* SPDX-License-Identifier: MIT */
/*
 * The Streamable HTTP transport's flags (see http_flags.h).
 */
#include "http_flags.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum {
    F_JSON = HTTP_FLAG_FIRST,
    F_STATELESS,
    F_NO_GET,
    F_NO_HTTP_SSE,
    F_ORIGIN,
    F_HOST,
    F_CORS,
    F_KEEPALIVE,
    F_MAX_SESSIONS,
    F_IDLE,
    F_MAX_BODY,
    F_MAX_QUEUED,
    F_MAX_QUEUED_TOTAL,
    F_MAX_GETS,
    F_MAX_CONNS,
    F_MAX_CONNS_SOURCE,
    F_RETRY,
    F_DRAIN,
    F_NO_RESUME,
    F_STORE_EVENTS,
    F_STORE_BYTES,
    F_STORE_TTL,
    F_REDIS,
    F_REDIS_PREFIX,
    F_CLUSTER_ADDRESS,
    F_CLUSTER_MAX_SESSIONS,
    F_AUTH_RESOURCE,
    F_AUTH_ISSUER,
    F_AUTH_JWKS,
    F_AUTH_SCOPE,
    F_AUTH_SUPPORTED,
    F_AUTH_ROOT,
    F_AUTH_NAME,
    F_AUTH_REFRESH,
    F_AUTH_INTROSPECT,
    F_AUTH_CLIENT_ID,
    F_AUTH_SECRET_FILE,
    F_TLS_CERT,
    F_TLS_KEY,
    F_TLS_HANDSHAKE_TIMEOUT,
    F_TLS_MAX_HANDSHAKES,
    F_AUTH_CACHE_TTL,
    F_AUTH_METHOD_SCOPE
};

static const struct option flags[HTTP_FLAGS_COUNT] = {
    {"json-response", no_argument, NULL, F_JSON},
    {"stateless", no_argument, NULL, F_STATELESS},
    {"no-get", no_argument, NULL, F_NO_GET},
    {"no-http-sse", no_argument, NULL, F_NO_HTTP_SSE},
    {"allowed-origin", required_argument, NULL, F_ORIGIN},
    {"allowed-host", required_argument, NULL, F_HOST},
    {"cors-origin", required_argument, NULL, F_CORS},
    {"keepalive-ms", required_argument, NULL, F_KEEPALIVE},
    {"max-sessions", required_argument, NULL, F_MAX_SESSIONS},
    {"session-idle-ms", required_argument, NULL, F_IDLE},
    {"max-body", required_argument, NULL, F_MAX_BODY},
    {"max-queued", required_argument, NULL, F_MAX_QUEUED},
    {"max-queued-total", required_argument, NULL, F_MAX_QUEUED_TOTAL},
    {"max-get-streams", required_argument, NULL, F_MAX_GETS},
    {"max-connections", required_argument, NULL, F_MAX_CONNS},
    {"max-connections-per-source", required_argument, NULL, F_MAX_CONNS_SOURCE},
    {"retry-ms", required_argument, NULL, F_RETRY},
    {"drain-ms", required_argument, NULL, F_DRAIN},
    {"no-resumability", no_argument, NULL, F_NO_RESUME},
    {"store-max-events", required_argument, NULL, F_STORE_EVENTS},
    {"store-max-bytes", required_argument, NULL, F_STORE_BYTES},
    {"store-ttl-ms", required_argument, NULL, F_STORE_TTL},
    {"redis", required_argument, NULL, F_REDIS},
    {"redis-prefix", required_argument, NULL, F_REDIS_PREFIX},
    {"cluster-address", required_argument, NULL, F_CLUSTER_ADDRESS},
    {"cluster-max-sessions", required_argument, NULL, F_CLUSTER_MAX_SESSIONS},
    {"auth-resource", required_argument, NULL, F_AUTH_RESOURCE},
    {"auth-issuer", required_argument, NULL, F_AUTH_ISSUER},
    {"auth-jwks-uri", required_argument, NULL, F_AUTH_JWKS},
    {"auth-scope", required_argument, NULL, F_AUTH_SCOPE},
    {"auth-scopes-supported", required_argument, NULL, F_AUTH_SUPPORTED},
    {"auth-metadata-at-root", no_argument, NULL, F_AUTH_ROOT},
    {"auth-resource-name", required_argument, NULL, F_AUTH_NAME},
    {"auth-jwks-min-refresh-ms", required_argument, NULL, F_AUTH_REFRESH},
    {"auth-introspection-endpoint", required_argument, NULL, F_AUTH_INTROSPECT},
    {"auth-client-id", required_argument, NULL, F_AUTH_CLIENT_ID},
    {"auth-client-secret-file", required_argument, NULL, F_AUTH_SECRET_FILE},
    {"tls-cert", required_argument, NULL, F_TLS_CERT},
    {"tls-key", required_argument, NULL, F_TLS_KEY},
    {"tls-handshake-timeout-ms", required_argument, NULL, F_TLS_HANDSHAKE_TIMEOUT},
    {"tls-max-handshakes", required_argument, NULL, F_TLS_MAX_HANDSHAKES},
    {"auth-cache-ttl-ms", required_argument, NULL, F_AUTH_CACHE_TTL},
    {"auth-method-scope", required_argument, NULL, F_AUTH_METHOD_SCOPE},
};

void http_flags_add(struct option *out)
{
    memcpy(out, flags, sizeof(flags));
}

int http_flags_parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

int http_flags_check_listen(const char *listen)
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
    return http_flags_parse_int(colon + 1, 0, 65535, &port);
}

/* An absolute http(s) URL with no space or control character. */
static int is_url(const char *s)
{
    if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7F)
            return 0;
    return 1;
}

/* A scope-token of RFC 6749: printable ASCII but space, '"' and '\'. */
static int is_scope(const char *s)
{
    if (*s == '\0')
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\\' || *p >= 0x7F)
            return 0;
    return 1;
}

/* Scopes separated by single spaces, at least one. */
static int is_scope_list(const char *s)
{
    char one[256];
    for (;;) {
        const char *sp = strchr(s, ' ');
        size_t len = sp != NULL ? (size_t)(sp - s) : strlen(s);
        if (len == 0 || len >= sizeof one)
            return 0;
        memcpy(one, s, len);
        one[len] = '\0';
        if (!is_scope(one))
            return 0;
        if (sp == NULL)
            return 1;
        s = sp + 1;
    }
}

int http_flags_apply(http_flags *f, int code, const char *arg, const char *name,
                     http_flags_usage_fn usage)
{
    mcp_http_opts *h = &f->http;
    int v;
    switch (code) {
    case F_JSON:
        h->json_response = 1;
        return 0;
    case F_STATELESS:
        h->stateless = 1;
        return 0;
    case F_NO_GET:
        h->disable_get = 1;
        return 0;
    case F_NO_HTTP_SSE:
        h->disable_http_sse = 1;
        return 0;
    case F_NO_RESUME:
        h->disable_resumability = 1;
        return 0;
    case F_REDIS:
        if (strncmp(arg, "redis://", 8) != 0) {
            usage("--redis needs a URL redis://[:password@]host[:port][/db], not '%s'", arg);
            return 2;
        }
        h->redis_url = arg;
        return 0;
    case F_REDIS_PREFIX:
        if (arg[0] == '\0' || strlen(arg) > 64) {
            usage("--redis-prefix needs 1 to 64 characters");
            return 2;
        }
        h->redis_prefix = arg;
        return 0;
    case F_CLUSTER_ADDRESS:
        if (http_flags_check_listen(arg) != 0 || strlen(arg) > 255) {
            usage("--cluster-address needs HOST:PORT (an IPv6 host in brackets), not '%s'", arg);
            return 2;
        }
        h->cluster_address = arg;
        return 0;
    case F_CLUSTER_MAX_SESSIONS:
        if (http_flags_parse_int(arg, 1, 100000000, &v) != 0) {
            usage("--cluster-max-sessions needs an integer from 1 to 100000000, not '%s'", arg);
            return 2;
        }
        h->cluster_max_sessions = (size_t)v;
        return 0;
    case F_AUTH_CLIENT_ID:
        f->introspection.client_id = arg;
        return 0;
    case F_AUTH_SECRET_FILE:
        f->secret_file = arg;
        return 0;
    case F_TLS_CERT:
        f->http.tls_cert_file = arg;
        return 0;
    case F_TLS_KEY:
        f->http.tls_key_file = arg;
        return 0;
    case F_AUTH_RESOURCE:
    case F_AUTH_ISSUER:
    case F_AUTH_INTROSPECT:
    case F_AUTH_JWKS:
        if (!is_url(arg) || (code == F_AUTH_RESOURCE && strpbrk(arg, "#?") != NULL)) {
            usage("option '%s' needs an http(s) URL%s, not '%s'", name,
                  code == F_AUTH_RESOURCE ? " without a query or fragment" : "", arg);
            return 2;
        }
        if (code == F_AUTH_RESOURCE)
            f->auth.resource = arg;
        else if (code == F_AUTH_ISSUER)
            f->auth.issuer = arg;
        else if (code == F_AUTH_INTROSPECT)
            f->introspection.endpoint = arg;
        else
            f->jwt.jwks_uri = arg;
        return 0;
    case F_AUTH_SCOPE:
    case F_AUTH_SUPPORTED: {
        const char **list = code == F_AUTH_SCOPE ? f->scopes : f->supported;
        int *n = code == F_AUTH_SCOPE ? &f->n_scopes : &f->n_supported;
        if (!is_scope(arg)) {
            usage("option '%s' needs one scope (no space, '\"' or '\\'), not '%s'", name, arg);
            return 2;
        }
        if (*n >= 16) {
            usage("option '%s' may be given at most 16 times", name);
            return 2;
        }
        list[(*n)++] = arg;
        return 0;
    }
    case F_AUTH_ROOT:
        f->auth.metadata_at_root = 1;
        return 0;
    case F_AUTH_NAME:
        f->auth.resource_name = arg;
        return 0;
    case F_AUTH_CACHE_TTL:
        if (http_flags_parse_int(arg, 1, 86400000, &f->auth.cache_ttl_ms) != 0) {
            usage("--auth-cache-ttl-ms needs an integer from 1 to 86400000, not '%s'", arg);
            return 2;
        }
        return 0;
    case F_AUTH_METHOD_SCOPE: {
        const char *eq = strchr(arg, '=');
        size_t len = eq != NULL ? (size_t)(eq - arg) : 0;
        if (len == 0 || len >= sizeof f->method_names[0] || !is_scope_list(eq + 1)) {
            usage("--auth-method-scope needs METHOD=SCOPES (scopes separated by spaces), not "
                  "'%s'",
                  arg);
            return 2;
        }
        if (f->n_method_scopes >= 16) {
            usage("--auth-method-scope may be given at most 16 times");
            return 2;
        }
        char *method = f->method_names[f->n_method_scopes];
        memcpy(method, arg, len);
        method[len] = '\0';
        f->method_scopes[f->n_method_scopes++] = (mcp_method_scopes){method, eq + 1};
        return 0;
    }
    case F_AUTH_REFRESH:
        if (http_flags_parse_int(arg, 0, 86400000, &v) != 0) {
            usage("--auth-jwks-min-refresh-ms needs an integer from 0 to 86400000, not '%s'", arg);
            return 2;
        }
        f->jwt.refresh_min_ms = v > 0 ? v : -1;
        f->auth_refresh_set = 1;
        return 0;
    case F_ORIGIN:
    case F_HOST:
    case F_CORS: {
        const char **list = code == F_ORIGIN ? f->origins : code == F_HOST ? f->hosts : f->cors;
        int *n = code == F_ORIGIN ? &f->n_origins : code == F_HOST ? &f->n_hosts : &f->n_cors;
        if (*n >= 32) {
            usage("option '%s' may be given at most 32 times", name);
            return 2;
        }
        list[(*n)++] = arg;
        return 0;
    }
    case F_KEEPALIVE:
        if (http_flags_parse_int(arg, 0, 3600000, &v) != 0) {
            usage("--keepalive-ms needs an integer from 0 to 3600000, not '%s'", arg);
            return 2;
        }
        h->keepalive_ms = v == 0 ? -1 : v;
        return 0;
    case F_MAX_SESSIONS:
        if (http_flags_parse_int(arg, 1, 1000000, &h->max_sessions) != 0) {
            usage("--max-sessions needs an integer from 1 to 1000000, not '%s'", arg);
            return 2;
        }
        return 0;
    case F_IDLE:
        if (http_flags_parse_int(arg, 1, 86400000, &h->session_idle_ms) != 0) {
            usage("--session-idle-ms needs an integer from 1 to 86400000, not '%s'", arg);
            return 2;
        }
        return 0;
    case F_MAX_BODY:
        if (http_flags_parse_int(arg, 1024, 1 << 30, &v) != 0) {
            usage("--max-body needs a byte count from 1024 to 1073741824, not '%s'", arg);
            return 2;
        }
        h->max_body = (size_t)v;
        return 0;
    case F_MAX_QUEUED_TOTAL:
        if (http_flags_parse_int(arg, 1 << 20, 1 << 30, &v) != 0) {
            usage("--max-queued-total needs a byte count from 1048576 to 1073741824, not '%s'",
                  arg);
            return 2;
        }
        h->max_queued_total = (size_t)v;
        return 0;
    case F_DRAIN:
        if (http_flags_parse_int(arg, 0, 1 << 30, &h->drain_ms) != 0) {
            usage("--drain-ms needs an integer from 0 to 1073741824, not '%s'", arg);
            return 2;
        }
        /* 0 means "stop at once" here; the library reads 0 as its default. */
        if (h->drain_ms == 0)
            h->drain_ms = 1;
        return 0;
    default:
        break;
    }
    if (http_flags_parse_int(arg, 1, 1 << 30, &v) != 0) {
        usage("option '%s' needs an integer from 1 to 1073741824, not '%s'", name, arg);
        return 2;
    }
    switch (code) {
    case F_MAX_QUEUED:
        h->max_queued = (size_t)v;
        break;
    case F_MAX_GETS:
        h->max_get_streams = v;
        break;
    case F_STORE_EVENTS:
        h->memory_store.max_events = (size_t)v;
        break;
    case F_STORE_BYTES:
        h->memory_store.max_bytes = (size_t)v;
        break;
    case F_STORE_TTL:
        h->memory_store.ttl_ms = v;
        break;
    case F_MAX_CONNS:
        h->max_connections = (unsigned)v;
        break;
    case F_MAX_CONNS_SOURCE:
        h->max_connections_per_source = (unsigned)v;
        break;
    case F_TLS_HANDSHAKE_TIMEOUT:
        h->tls_handshake_timeout_ms = (unsigned)v;
        break;
    case F_TLS_MAX_HANDSHAKES:
        h->tls_max_handshakes = (unsigned)v;
        break;
    default:
        h->retry_ms = v;
        break;
    }
    return 0;
}

int http_flags_refused(int c, char **argv, http_flags_usage_fn usage)
{
    if (c == ':')
        usage("option '%s' needs an argument", argv[optind - 1]);
    else if (optopt > 0 && optopt < 256)
        usage("unknown option '-%c'", optopt);
    else if (optopt >= 256) /* a known long option given "=value" it does not take */
        usage("option '%s' takes no argument", argv[optind - 1]);
    else
        usage("unknown option '%s'", argv[optind - 1]);
    return 2;
}

int http_flags_other(http_flags *f, int c, const char *arg, const char *name, char **argv,
                     http_flags_usage_fn usage)
{
    if (c >= HTTP_FLAG_FIRST)
        return http_flags_apply(f, c, arg, name, usage);
    return http_flags_refused(c, argv, usage);
}

void http_flags_healthz(mcp_http_exchange *x, void *user)
{
    (void)user;
    static const char *const hdrs[] = {"Content-Type", "text/plain", "Cache-Control", "no-store",
                                       NULL};
    if (mcp_http_endpoint_stopping(mcp_http_exchange_endpoint(x)))
        mcp_http_exchange_respond(x, 503, hdrs, "draining\n", 9);
    else
        mcp_http_exchange_respond(x, 200, hdrs, "ok\n", 3);
}

int http_flags_finish(http_flags *f, http_flags_usage_fn usage)
{
    f->http.allowed_origins = f->n_origins ? f->origins : NULL;
    f->http.allowed_hosts = f->n_hosts ? f->hosts : NULL;
    f->http.cors_origins = f->n_cors ? f->cors : NULL;
    if ((f->http.tls_cert_file != NULL) != (f->http.tls_key_file != NULL)) {
        usage("--tls-cert and --tls-key go together");
        return 2;
    }
    int some = f->auth.issuer != NULL || f->jwt.jwks_uri != NULL || f->n_scopes > 0 ||
               f->auth_refresh_set || f->introspection.endpoint != NULL ||
               f->introspection.client_id != NULL || f->secret_file != NULL || f->n_supported > 0 ||
               f->auth.metadata_at_root || f->auth.resource_name != NULL ||
               f->n_method_scopes > 0 || f->auth.cache_ttl_ms != 0;
    if (f->auth.resource == NULL) {
        if (some) {
            usage("the --auth-* options need --auth-resource URL");
            return 2;
        }
        return 0;
    }
    if (f->auth.issuer == NULL && f->introspection.endpoint == NULL) {
        usage("--auth-resource needs --auth-issuer URL (JWT access tokens) or "
              "--auth-introspection-endpoint URL (opaque tokens)");
        return 2;
    }
    if (f->introspection.endpoint != NULL) {
        if (f->introspection.client_id == NULL || f->secret_file == NULL) {
            usage("--auth-introspection-endpoint needs --auth-client-id and "
                  "--auth-client-secret-file");
            return 2;
        }
        /* A file, not an argument: the command line of a process is readable by all. */
        FILE *in = fopen(f->secret_file, "r");
        size_t n = in != NULL ? fread(f->secret, 1, sizeof(f->secret) - 1, in) : 0;
        if (in != NULL)
            fclose(in);
        while (n > 0 && (f->secret[n - 1] == '\n' || f->secret[n - 1] == '\r'))
            n--;
        f->secret[n] = '\0';
        if (n == 0 || n == sizeof(f->secret) - 1) {
            usage("--auth-client-secret-file: '%s' holds no secret of 1 to 1023 bytes",
                  f->secret_file);
            return 2;
        }
        f->introspection.size = sizeof(f->introspection);
        f->introspection.client_secret = f->secret;
        f->auth.introspection = &f->introspection;
    } else if (f->introspection.client_id != NULL || f->secret_file != NULL) {
        usage("--auth-client-id and --auth-client-secret-file go with "
              "--auth-introspection-endpoint");
        return 2;
    }
    f->auth.size = sizeof(f->auth);
    if (f->auth.issuer != NULL) {
        f->jwt.size = sizeof(f->jwt);
        f->auth.jwt = &f->jwt;
        f->auth_servers[0] = f->auth.issuer;
        f->auth.authorization_servers = f->auth_servers;
    }
    f->auth.required_scopes = f->n_scopes ? f->scopes : NULL;
    f->auth.method_scopes = f->n_method_scopes ? f->method_scopes : NULL;
    f->auth.scopes_supported = f->n_supported ? f->supported : NULL;
    f->http.auth = &f->auth;
    return 0;
}

void http_flags_help(FILE *out)
{
    fputs("HTTP options:\n"
          "      --json-response   answer requests with one application/json body\n"
          "                        instead of an SSE stream; a request that sends\n"
          "                        progress, logs or requests of its own before its\n"
          "                        answer gets an SSE stream, so they come first\n"
          "      --stateless       no sessions: each POST stands alone; GET and DELETE\n"
          "                        get 405; requests to the client (ping, sampling,\n"
          "                        elicitation, roots) fail at once\n"
          "      --no-get          no standalone stream: GET gets 405\n"
          "      --no-http-sse     do not serve the 2024-11-05 endpoints /sse and /messages\n"
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
          "      --max-queued-total BYTES  bytes queued on all streams and connections\n"
          "                        together; past it the ones furthest behind are cut\n"
          "                        first (default 33554432). Notification-only streams\n"
          "                        keep a 16 KiB kernel send buffer\n"
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
          "Scale-out (several nodes behind a load balancer, no sticky sessions):\n"
          "      --redis URL       share sessions, streams and events with every node\n"
          "                        given the same redis://[:password@]host[:port][/db]:\n"
          "                        any node serves any request and resumes any stream\n"
          "                        (mcp-gateway: other nodes relay a session's requests\n"
          "                        to the node whose child serves it)\n"
          "      --redis-prefix P  keys and channels begin with P (default mcp:), so\n"
          "                        deployments can share one Redis\n"
          "      --cluster-address HOST:PORT  where other nodes reach this one (default:\n"
          "                        the --http address, unless it is 0.0.0.0 or [::])\n"
          "      --cluster-max-sessions N  live sessions in the whole deployment, counted\n"
          "                        in Redis (default 100000); past it initialize gets 503\n"
          "\n"
          "Authorization (OAuth 2.1 resource server; off unless --auth-resource is given):\n"
          "      --auth-resource URL  this server's URL as clients reach it (RFC 8707):\n"
          "                        every MCP request then needs a bearer token issued\n"
          "                        for it, and the metadata document (RFC 9728) is\n"
          "                        served at /.well-known/oauth-protected-resource/PATH\n"
          "      --auth-issuer URL the authorization server: tokens are JWT access\n"
          "                        tokens it signed (RFC 9068), \"iss\" exactly this\n"
          "      --auth-jwks-uri URL  where its keys are (default: from its metadata)\n"
          "      --auth-jwks-min-refresh-ms N  a token naming a key not fetched yet fetches\n"
          "                        the keys again at most every N ms (default 10000;\n"
          "                        0: every time)\n"
          "      --auth-introspection-endpoint URL  check opaque tokens there (RFC 7662),\n"
          "                        as the client --auth-client-id ID whose secret is in\n"
          "                        --auth-client-secret-file FILE (with --auth-issuer\n"
          "                        too, JWTs are checked by signature, others there)\n"
          "      --auth-scope S    a scope every request needs (repeatable); without it\n"
          "                        403 insufficient_scope\n"
          "      --auth-scopes-supported S  a scope the document lists (repeatable)\n"
          "      --auth-metadata-at-root  serve the document at the root too\n"
          "      --auth-resource-name NAME  the document's resource_name\n"
          "      --auth-method-scope METHOD=SCOPES  what a method needs besides --auth-scope\n"
          "                        (repeatable; e.g. 'resources/read=files:read')\n"
          "      --auth-cache-ttl-ms N  how long a verified token is trusted at most\n"
          "                        (default 300000; never past its expiry)\n"
          "HTTPS (TLS 1.2 and 1.3; SIGHUP reads the files again, open connections stay):\n"
          "      --tls-cert FILE   the certificate and its chain (PEM)\n"
          "      --tls-key FILE    its private key (PEM, unencrypted)\n"
          "      --tls-handshake-timeout-ms N  time to finish a handshake (default 10000)\n"
          "      --tls-max-handshakes N  handshakes in progress at once; past it the\n"
          "                        oldest gives way (default 128)\n",
          out);
}

int http_flags_read_key(const char *path, unsigned char key[32])
{
    unsigned char raw[80];
    FILE *f = fopen(path, "rb");
    size_t n = f != NULL ? fread(raw, 1, sizeof(raw), f) : 0;
    if (f != NULL)
        fclose(f);
    while (n > 32 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
        n--;
    int ok = n == 32;
    if (ok)
        memcpy(key, raw, 32);
    else if (n == 64) {
        ok = 1;
        for (int i = 0; i < 32 && ok; i++) {
            unsigned v = 0;
            char hex[3] = {(char)raw[2 * i], (char)raw[2 * i + 1], 0};
            ok = strspn(hex, "0123456789abcdefABCDEF") == 2 && sscanf(hex, "%x", &v) == 1;
            key[i] = (unsigned char)v;
        }
    }
    memset(raw, 0, sizeof(raw));
    if (!ok)
        memset(key, 0, 32);
    return ok ? 0 : -1;
}

void http_flags_raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}
