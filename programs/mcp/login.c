/* SPDX-License-Identifier: MIT */
/*
 * mcp login, mcp logout, mcp auth status: signing in to a protected MCP server
 * once, so that every later `mcp URL ...` (and `mcp-gateway --connect URL`)
 * finds the tokens in the store and renews them by itself; and the provider
 * those commands use. Tokens and secrets are never printed.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How long a login waits for the user (browser or device): 5 minutes. */
#define LOGIN_TIMEOUT_MS 300000

static void login_usage(FILE *f)
{
    fputs("Usage: mcp login [OPTIONS] URL\n"
          "       mcp logout URL\n"
          "       mcp auth status [URL]\n"
          "\n"
          "login signs in to the MCP server at URL with OAuth 2.1 and keeps the tokens\n"
          "(files of mode 0600 under $XDG_STATE_HOME/mcp/oauth, else\n"
          "~/.local/state/mcp/oauth); every later `mcp URL ...` uses them and renews\n"
          "them when they expire. By default it opens the authorization page in a\n"
          "browser (the URL is printed too) and takes the answer on 127.0.0.1.\n"
          "logout forgets what is kept for URL. auth status says what is kept (never a\n"
          "token): for URL, or for every server.\n"
          "\n"
          "Options of login:\n"
          "  --device               sign in on another device: print a URL and a code to\n"
          "                         enter there (RFC 8628), for a host with no browser\n"
          "  --client-credentials   no user: the client's own credentials (--client-id\n"
          "                         and a secret from $MCP_CLIENT_SECRET, or\n"
          "                         --private-key)\n"
          "  --client-id ID         a client registered beforehand (else the client\n"
          "                         registers itself, or uses --client-metadata-url)\n"
          "  --private-key FILE     sign client assertions with this PEM key\n"
          "                         (private_key_jwt)\n"
          "  --client-metadata-url URL  this client's metadata document (SEP-991)\n"
          "  --scope 'S1 S2'        the scopes to ask for (default: the server's)\n"
          "  --resource URI         the RFC 8707 resource to ask for (default: the\n"
          "                         server's own)\n"
          "  --no-resource          send no resource (identity providers that refuse it)\n"
          "  --issuer-alias URL     accept this spelling of the issuer too\n"
          "  --dpop                 sender-constrained tokens (DPoP)\n"
          "  --port N               listen for the browser's answer on this port\n"
          "  --no-browser           only print the authorization URL (so does a\n"
          "                         non-empty $MCP_NO_BROWSER)\n"
          "  --cacert FILE          trust these CAs (PEM) for the server and the\n"
          "                         authorization server\n"
          "  --timeout MS           how long to wait for the user (default 300000)\n"
          "\n"
          "Exit status: 0 signed in (or nothing kept to forget, for logout), 2 usage\n"
          "error, 6 the sign-in failed (the reason is printed), 3 to 5 as for other\n"
          "commands when the server itself cannot be reached.\n",
          f);
}

static int login_usage_error(const char *what)
{
    fprintf(stderr, "mcp: %s\nTry 'mcp login --help' for more information.\n", what);
    return CLI_EXIT_USAGE;
}

void cli_open_browser(const char *url)
{
    const char *no = getenv("MCP_NO_BROWSER");
    if (no != NULL && no[0] != '\0')
        return;
    const char *argv[] = {"xdg-open", url, NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawnp(&pid, "xdg-open", &fa, NULL, (char *const *)argv, environ) == 0)
        (void)pid; /* not waited for: it may outlive us; the kernel reaps it with us */
    posix_spawn_file_actions_destroy(&fa);
}

static void on_redirect(mcp_oauth *o, const char *url, void *user)
{
    (void)o;
    bool browser = *(bool *)user;
    fprintf(stderr, "To sign in, open this URL in a browser:\n\n  %s\n\n", url);
    fflush(stderr);
    if (browser)
        cli_open_browser(url);
}

static void on_device_code(mcp_oauth *o, const char *uri, const char *code, const char *complete,
                           void *user)
{
    (void)o, (void)user;
    fprintf(stderr, "To sign in, open %s on any device and enter the code:\n\n  %s\n\n", uri, code);
    if (complete != NULL)
        fprintf(stderr, "(or open %s)\n", complete);
    fflush(stderr);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    char *buf = malloc(65536);
    size_t n = buf != NULL ? fread(buf, 1, 65535, f) : 0;
    fclose(f);
    if (buf != NULL)
        buf[n] = '\0';
    return buf;
}

mcp_oauth *cli_oauth_for(const cli_server *server, mcp_token_store **store)
{
    *store = NULL;
    for (const char **h = server->headers; h != NULL && *h != NULL; h++)
        if (strncasecmp(*h, "Authorization:", 14) == 0)
            return NULL; /* the user's own credentials */
    if (mcp_token_store_files(NULL, store) != MCP_OK)
        return NULL;
    static bool browser = true;
    mcp_oauth_opts opts = {.size = sizeof opts, .store = *store, .cacert = server->cacert};
    if (server->login) {
        opts.loopback_redirect = 1;
        opts.on_redirect = on_redirect;
        opts.redirect_user = &browser;
        opts.client_name = "mcp (libmcp)";
    }
    mcp_oauth *o = NULL;
    if (mcp_oauth_new(&opts, &o) != MCP_OK) {
        mcp_token_store_free(*store);
        *store = NULL;
        return NULL;
    }
    return o;
}

static void print_status(const json_t *d)
{
    const char *s = json_string_value(json_object_get(d, "server"));
    const char *iss = json_string_value(json_object_get(d, "issuer"));
    const char *scope = json_string_value(json_object_get(d, "scope"));
    const char *grant = json_string_value(json_object_get(d, "grant"));
    json_int_t exp = json_integer_value(json_object_get(d, "expires_at"));
    bool at = json_is_true(json_object_get(d, "access_token"));
    bool rt = json_is_true(json_object_get(d, "refresh_token"));
    printf("%s\n", s != NULL ? s : "?");
    printf("  issuer:        %s\n", iss != NULL ? iss : "(none)");
    printf("  grant:         %s\n", grant != NULL ? grant : "(unknown)");
    printf("  scope:         %s\n", scope != NULL && scope[0] != '\0' ? scope : "(none)");
    if (!at)
        printf("  access token:  none\n");
    else if (exp == 0)
        printf("  access token:  held, expiry unknown\n");
    else {
        long long left = (long long)exp - (long long)time(NULL);
        if (left > 0)
            printf("  access token:  held, expires in %lld s\n", left);
        else
            printf("  access token:  expired %lld s ago\n", -left);
    }
    printf("  refresh token: %s\n", rt ? "held" : "none");
    if (json_is_true(json_object_get(d, "dpop")))
        printf("  DPoP:          bound to a key kept with the tokens\n");
}

static int auth_status(const char *url)
{
    mcp_token_store *store = NULL;
    if (mcp_token_store_files(NULL, &store) != MCP_OK) {
        fprintf(stderr, "mcp: no token store (no $HOME or $XDG_STATE_HOME)\n");
        return CLI_EXIT_ERROR;
    }
    char **keys = NULL;
    int rc = MCP_OK;
    if (url == NULL)
        rc = store->keys(store->user, &keys);
    int shown = 0;
    for (size_t i = 0; rc == MCP_OK && (url != NULL ? i < 1 : keys[i] != NULL); i++) {
        json_t *d = NULL;
        if (mcp_token_store_describe(store, url != NULL ? url : keys[i], &d) == MCP_OK) {
            print_status(d);
            shown++;
        }
        json_decref(d);
    }
    for (size_t i = 0; keys != NULL && keys[i] != NULL; i++)
        free(keys[i]);
    free(keys);
    mcp_token_store_free(store);
    if (shown == 0)
        printf(url != NULL ? "not logged in to %s\n" : "not logged in anywhere\n", url);
    return CLI_EXIT_OK;
}

static int logout(const char *url)
{
    mcp_token_store *store = NULL;
    if (mcp_token_store_files(NULL, &store) != MCP_OK) {
        fprintf(stderr, "mcp: no token store (no $HOME or $XDG_STATE_HOME)\n");
        return CLI_EXIT_ERROR;
    }
    int rc = mcp_token_store_forget(store, url);
    mcp_token_store_free(store);
    if (rc == MCP_OK)
        printf("logged out of %s\n", url);
    else if (rc == MCP_ENOENT)
        printf("not logged in to %s\n", url);
    else {
        fprintf(stderr, "mcp: logout: %s\n", mcp_strerror(rc));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

/*
 * The store a login writes to: it reads as empty (a new sign-in, whatever is kept), and
 * a document is written through only once it holds an access token, so that the sign-in
 * kept stays until a new one has succeeded.
 */
typedef struct fresh_store {
    mcp_token_store s;
    const mcp_token_store *real;
    bool signed_in;
} fresh_store;

static int fresh_load(void *user, const char *key, char **json)
{
    fresh_store *f = user;
    *json = NULL;
    return f->signed_in ? f->real->load(f->real->user, key, json) : MCP_ENOENT;
}

static int fresh_save(void *user, const char *key, const char *json)
{
    fresh_store *f = user;
    json_t *doc = json_loads(json, 0, NULL);
    bool tokens = json_is_string(json_object_get(json_object_get(doc, "tokens"), "access_token"));
    json_decref(doc);
    if (!tokens && !f->signed_in)
        return MCP_OK; /* a registration alone: kept by the provider until tokens come */
    f->signed_in = true;
    return f->real->save(f->real->user, key, json);
}

static int fresh_erase(void *user, const char *key)
{
    fresh_store *f = user;
    return f->real->erase(f->real->user, key);
}

static int fresh_lock(void *user, const char *key, void **handle)
{
    fresh_store *f = user;
    return f->real->lock(f->real->user, key, handle);
}

static void fresh_unlock(void *user, void *handle)
{
    fresh_store *f = user;
    f->real->unlock(f->real->user, handle);
}

typedef struct login_args {
    mcp_oauth_opts opts;
    const char *url;
    const char *key_file;
    bool browser;
    int timeout_ms;
} login_args;

/* The value of --name VALUE or --name=VALUE at argv[*i], or NULL. */
static const char *opt(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int login(int argc, char **argv)
{
    login_args a = {.browser = true, .timeout_ms = LOGIN_TIMEOUT_MS};
    a.opts.size = sizeof a.opts;
    a.opts.client_name = "mcp (libmcp)";
    bool cc = false, device = false;
    const char *port = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v, *arg = argv[i];
        bool missing = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            login_usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--device") == 0) {
            device = true;
        } else if (strcmp(arg, "--client-credentials") == 0) {
            cc = true;
        } else if (strcmp(arg, "--no-resource") == 0) {
            a.opts.omit_resource = 1;
        } else if (strcmp(arg, "--dpop") == 0) {
            a.opts.dpop = 1;
        } else if (strcmp(arg, "--no-browser") == 0) {
            a.browser = false;
        } else if ((v = opt(argc, argv, &i, "--client-id", &missing)) != NULL) {
            a.opts.client_id = v;
        } else if ((v = opt(argc, argv, &i, "--private-key", &missing)) != NULL) {
            a.key_file = v;
        } else if ((v = opt(argc, argv, &i, "--client-metadata-url", &missing)) != NULL) {
            a.opts.client_metadata_url = v;
        } else if ((v = opt(argc, argv, &i, "--scope", &missing)) != NULL) {
            a.opts.scope = v;
        } else if ((v = opt(argc, argv, &i, "--resource", &missing)) != NULL) {
            a.opts.resource = v;
        } else if ((v = opt(argc, argv, &i, "--issuer-alias", &missing)) != NULL) {
            a.opts.issuer_alias = v;
        } else if ((v = opt(argc, argv, &i, "--port", &missing)) != NULL) {
            char *end;
            long p = strtol(v, &end, 10);
            if (*end != '\0' || p < 0 || p > 65535)
                return login_usage_error("invalid --port (0 to 65535; 0: any free port)");
            port = v;
        } else if ((v = opt(argc, argv, &i, "--cacert", &missing)) != NULL) {
            a.opts.cacert = v;
        } else if ((v = opt(argc, argv, &i, "--timeout", &missing)) != NULL) {
            char *end;
            long t = strtol(v, &end, 10);
            if (*end != '\0' || t <= 0 || t > 86400000)
                return login_usage_error("invalid --timeout (a positive number of milliseconds)");
            a.timeout_ms = (int)t;
        } else if (missing) {
            fprintf(stderr, "mcp: %s needs a value\n", arg);
            return CLI_EXIT_USAGE;
        } else if (arg[0] == '-') {
            fprintf(stderr, "mcp: unknown option of login: %s\n", arg);
            return CLI_EXIT_USAGE;
        } else if (a.url == NULL && cli_is_url(arg)) {
            a.url = arg;
        } else {
            return login_usage_error("login takes one URL (http:// or https://)");
        }
    }
    if (a.url == NULL)
        return login_usage_error("login needs the server's URL");
    if (cc && device)
        return login_usage_error("--device and --client-credentials exclude each other");
    const char *secret = getenv("MCP_CLIENT_SECRET");
    if (secret != NULL && secret[0] == '\0')
        secret = NULL;
    if (cc && (a.opts.client_id == NULL || (secret == NULL && a.key_file == NULL)))
        return login_usage_error("--client-credentials needs --client-id and a secret "
                                 "($MCP_CLIENT_SECRET) or --private-key");
    if (secret != NULL && a.opts.client_id != NULL)
        a.opts.client_secret = secret;
    char *pem = NULL;
    if (a.key_file != NULL && (pem = read_file(a.key_file)) == NULL) {
        fprintf(stderr, "mcp: cannot read %s: %s\n", a.key_file, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    a.opts.private_key_pem = pem;
    a.opts.grant = cc       ? MCP_OAUTH_CLIENT_CREDENTIALS
                   : device ? MCP_OAUTH_DEVICE
                            : MCP_OAUTH_AUTHORIZATION_CODE;
    if (!cc && !device) {
        a.opts.loopback_redirect = 1;
        a.opts.loopback_port = port != NULL ? atoi(port) : 0;
        a.opts.on_redirect = on_redirect;
        a.opts.redirect_user = &a.browser;
    }
    a.opts.on_device_code = on_device_code;
    a.opts.redirect_timeout_ms = a.timeout_ms;

    mcp_token_store *store = NULL;
    if (mcp_token_store_files(NULL, &store) != MCP_OK) {
        free(pem);
        fprintf(stderr, "mcp: no token store (no $HOME or $XDG_STATE_HOME)\n");
        return CLI_EXIT_ERROR;
    }
    /* A new sign-in; what was kept stays until it has succeeded. */
    fresh_store fresh = {.real = store};
    fresh.s = (mcp_token_store){fresh_load, fresh_save,   fresh_erase, NULL,
                                fresh_lock, fresh_unlock, &fresh};
    a.opts.store = &fresh.s;
    mcp_oauth *o = NULL;
    int rc = mcp_oauth_new(&a.opts, &o);
    if (pem != NULL) {
        memset(pem, 0, strlen(pem));
        free(pem);
    }
    if (rc != MCP_OK) {
        mcp_token_store_free(store);
        fprintf(stderr, "mcp: login: %s (a key that does not load?)\n", mcp_strerror(rc));
        return CLI_EXIT_USAGE;
    }
    mcp_client *c = mcp_client_new("mcp", MCP_VERSION_STRING);
    mcp_http_client_opts hopts = {.size = sizeof hopts, .oauth = o, .cacert = a.opts.cacert};
    rc = c != NULL ? mcp_client_connect_http(c, a.url, &hopts, a.timeout_ms + 30000) : MCP_ENOMEM;
    int code = CLI_EXIT_OK;
    if (rc == MCP_OK) {
        json_t *d = NULL;
        if (fresh.signed_in && mcp_token_store_describe(store, a.url, &d) == MCP_OK &&
            json_is_true(json_object_get(d, "access_token"))) {
            printf("logged in to %s\n", a.url);
            print_status(d);
        } else {
            printf("%s did not ask for authorization: nothing to log in to\n", a.url);
        }
        json_decref(d);
    } else {
        mcp_rpc_error err = {0};
        mcp_client_connect_error(c, &err);
        fprintf(stderr, "mcp: login to %s failed: %s%s%s\n", a.url, mcp_strerror(rc),
                err.message[0] ? ": " : "", err.message);
        mcp_rpc_error_clear(&err);
        code = rc == MCP_EAUTH ? CLI_EXIT_AUTH : cli_exit_status(rc);
    }
    mcp_client_free(c);
    mcp_oauth_free(o);
    mcp_token_store_free(store);
    return code;
}

int cli_auth_main(int argc, char **argv)
{
    const char *cmd = argv[0];
    if (strcmp(cmd, "login") == 0)
        return login(argc - 1, argv + 1);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        login_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "logout") == 0) {
        if (argc != 2 || !cli_is_url(argv[1]))
            return login_usage_error("logout takes one URL");
        return logout(argv[1]);
    }
    if (argc >= 2 && strcmp(argv[1], "status") == 0 && argc <= 3) {
        if (argc == 3 && !cli_is_url(argv[2]))
            return login_usage_error("auth status takes a URL, or nothing");
        return auth_status(argc == 3 ? argv[2] : NULL);
    }
    return login_usage_error("unknown auth command (auth status [URL])");
}
