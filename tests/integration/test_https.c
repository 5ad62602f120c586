/* SPDX-License-Identifier: MIT */
/*
 * HTTPS on the endpoint itself: `mcp-everything --tls-cert --tls-key` over
 * real loopback sockets, with OpenSSL's client API in the test
 * (tls_client.h), so that each test chooses the protocol versions and the
 * ALPN protocols it offers and sees the certificate and the alerts.
 *
 * The certificates are made at test time (tls_certs.h) in a temporary
 * directory, removed at the end, also when a test fails: a throwaway CA, and
 * two server certificates for localhost and 127.0.0.1, A (serial 10) and B
 * (serial 11, another key), so that a test can tell which one a connection
 * got.
 *
 * Shown here: MCP over TLS 1.3 and 1.2 with the certificate verified; what
 * is refused (TLS 1.1, ALPN without http/1.1, plaintext); SIGHUP's reload,
 * which open connections outlive and a broken file does not disturb; the
 * handshake deadline; a crowd of stalled handshakes that does not keep
 * clients out (the handshake bound); the flags' usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "cli_run.h"
#include "harness.h"
#include "http_client.h"
#include "http_expect.h"
#include "tls_certs.h"
#include "tls_client.h"

/* Sanitized code runs several times slower: the deadlines catch hangs, not speed. */
#define SCALE (UNDER_ASAN ? 3 : 1)
#define START_MS (10000 * SCALE)
#define STOP_MS (10000 * SCALE)
#define IO_MS (5000 * SCALE)
/* How long a SIGHUP may take to show on new connections. */
#define RELOAD_MS (10000 * SCALE)
/* The serials of certificates A and B. */
#define SERIAL_A 10
#define SERIAL_B 11

/* --tls-handshake-timeout-ms of the deadline test, and the bound it is held to: one-sided
 * and generous (a busy machine, ASan), yet under the 10 s header deadline, so that a
 * server that lost the handshake's own deadline and fell back on that one fails. */
#define HANDSHAKE_TIMEOUT "300"
#define CLOSED_WITHIN_MS 8000

/* The flood: stalled handshakes held open, then requests of a normal client, each on a
 * new connection, of which this share at least must be served. */
#define FLOOD_STALLED 1000
#define FLOOD_REQUESTS 200
#define FLOOD_SERVED_PERCENT 99
/* --tls-max-handshakes' default: past it the oldest handshake in progress gives way. */
#define MAX_HANDSHAKES 128
/* The flood's server keeps handshakes this long, so that the bound alone must cope. */
#define FLOOD_HANDSHAKE_TIMEOUT "60000"
#define FLOOD_BOUND_MS (10000 * SCALE)
/* The server's RSS with the crowd, at most this much above its RSS before (as
 * test_hostile_clients' bound). */
#define FLOOD_RSS_GROWTH_KB (64 * 1024L)
#define RSS_SETTLE_MS 5000

extern char **environ;

static tls_certs certs;
static char a_crt[128], a_key[128], b_crt[128], b_key[128];
static hc_server main_srv; /* mcp-everything with certificate A, for the tests that need no other */
static int main_started;
static hc_server own; /* the server a test starts for itself (stopped by stop_own) */
static int own_started;
/* Client contexts: TLS 1.3 only offering "h2,http/1.1"; TLS 1.2 only without ALPN;
 * the library's versions without ALPN. */
static SSL_CTX *ctx13, *ctx12, *ctx_any;

/* The first bytes of a ClientHello: a handshake record that announces 512 bytes, of
 * which these 21 are all that ever come. */
static const unsigned char partial_hello[] = {
    0x16, 0x03, 0x01, 0x02, 0x00, /* record: handshake, TLS 1.0, 512 bytes */
    0x01, 0x00, 0x01, 0xfc,       /* ClientHello, 508 bytes */
    0x03, 0x03,                   /* client_version TLS 1.2 */
    0x5a, 0x11, 0x3c, 0x7e, 0x02, 0x99, 0xd4, 0x61, 0x0f, 0xb8, /* the random, begun */
};

/* ---- Processes and files ---- */

static void cleanup_at_exit(void)
{
    /* A failed setup runs no teardown: whatever is left dies here. */
    if (own_started)
        hc_server_free(&own);
    own_started = 0;
    if (main_started)
        hc_server_free(&main_srv);
    main_started = 0;
    tls_certs_remove(&certs);
}

static void start_own(const char *const flags[])
{
    if (hc_server_start(&own, flags, START_MS) != 0)
        fail_msg("mcp-everything did not start with TLS (its stderr is above)");
    own_started = 1;
}

static int stop_own(void **state)
{
    (void)state;
    if (!own_started)
        return 0;
    own_started = 0;
    return hc_server_stop_check(&own, STOP_MS);
}

/* Puts text in place of the file at path at once (a rename), as a renewal would. */
static void install_text(const char *text, const char *path)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    tls_certs_write_file(tmp, text);
    assert_int_equal(rename(tmp, path), 0);
}

static void install(const char *from, const char *path)
{
    char *text = cr_read_file(from);
    assert_true(text[0] != '\0');
    install_text(text, path);
    free(text);
}

/* ---- MCP over TLS ---- */

/* Opens a TLS connection verified for host; fails the test with the reason otherwise. */
static void open_or_fail(tls_client *t, SSL_CTX *ctx, int port, const char *host)
{
    if (tls_client_open(t, ctx, port, host, IO_MS) != 0)
        fail_msg("TLS to 127.0.0.1:%d for %s: %s", port, host, t->why);
}

/* POSTs body to /mcp on t and reads the answer. */
static void post(tls_client *t, int port, const char *session, const char *body, hc_response *r,
                 const char *what)
{
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, HC_MCP_POST_HEADERS "%s%s%s", session ? "Mcp-Session-Id: " : "",
             session ? session : "", session ? "\r\n" : "");
    if (tls_client_request(t, port, "POST", "/mcp", hdrs, body, r, IO_MS) != 0)
        fail_msg("%s: no answer over TLS: %s", what, t->why);
}

/* initialize and notifications/initialized on t; the session's id goes into session. */
static void initialize(tls_client *t, int port, char session[33])
{
    hc_response r;
    char *body = hc_initialize_body(NULL);
    post(t, port, NULL, body, &r, "initialize");
    free(body);
    hx_expect_status(&r, 200, "initialize");
    const char *id = hc_header_get(&r, "mcp-session-id");
    if (id == NULL || strlen(id) != 32)
        fail_msg("initialize: no Mcp-Session-Id of 32 characters (%s)", id ? id : "none");
    memcpy(session, id, 33);
    json_t *msgs = hx_messages(&r, "initialize");
    json_t *result = json_object_get(hx_find_response(msgs, 1, "initialize"), "result");
    assert_non_null(json_object_get(result, "serverInfo"));
    json_decref(msgs);
    hc_response_free(&r);
    post(t, port, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r,
         "notifications/initialized");
    hx_expect_status(&r, 202, "notifications/initialized");
    hc_response_free(&r);
}

/* tools/call echo on t: the answer must be text. */
static void echo(tls_client *t, int port, const char *session, long long id, const char *text)
{
    char args[128], what[96];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
    snprintf(what, sizeof what, "tools/call echo \"%s\"", text);
    char *body = hc_tools_call_body(id, "echo", args);
    hc_response r;
    post(t, port, session, body, &r, what);
    free(body);
    hx_expect_status(&r, 200, what);
    json_t *msgs = hx_messages(&r, what);
    assert_string_equal(hx_result_text(hx_find_response(msgs, id, what), what), text);
    json_decref(msgs);
    hc_response_free(&r);
}

/* GET /healthz on t: 0 when the answer is a 200, else -1 (t->why says why, or the status). */
static int healthz(tls_client *t, int port)
{
    hc_response r;
    int rc = tls_client_request(t, port, "GET", "/healthz", NULL, NULL, &r, IO_MS);
    if (rc == 0 && r.status != 200) {
        snprintf(t->why, sizeof t->why, "GET /healthz: status %d", r.status);
        rc = -1;
    }
    hc_response_free(&r);
    return rc;
}

/* A new connection to port answers GET /healthz; its certificate's serial is returned. */
static long serves(int port)
{
    tls_client t;
    open_or_fail(&t, ctx_any, port, "localhost");
    long serial = tls_client_serial(&t);
    if (healthz(&t, port) != 0)
        fail_msg("GET /healthz over TLS: %s", t.why);
    tls_client_close(&t);
    return serial;
}

/* The value of the metric called name in GET /metrics, read over a new TLS connection. */
static long long metric(int port, const char *name)
{
    tls_client t;
    open_or_fail(&t, ctx_any, port, "localhost");
    hc_response r;
    if (tls_client_request(&t, port, "GET", "/metrics", NULL, NULL, &r, IO_MS) != 0)
        fail_msg("GET /metrics over TLS: %s", t.why);
    tls_client_close(&t);
    hx_expect_status(&r, 200, "GET /metrics");
    char key[96];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = strstr(r.body, key);
    if (at == NULL)
        fail_msg("GET /metrics has no %s:\n%s", name, r.body);
    long long v = strtoll(at + strlen(key), NULL, 10);
    hc_response_free(&r);
    return v;
}

/* ---- Raw sockets: what the server does with clients that do not finish ---- */

typedef struct peer {
    int fd;
    long long ended; /* when the server was seen ending the connection; 0 until then */
    size_t got;      /* bytes the server sent */
    char head[64];   /* the first of them, NUL-terminated */
} peer;

/*
 * Reads from the n peers until at least want of them have been ended by the
 * server (end of file or reset) or the deadline passes. Returns how many have.
 */
static int await_ends(peer *peers, int n, int want, long long deadline)
{
    struct pollfd *pfds = calloc((size_t)n, sizeof *pfds);
    assert_non_null(pfds);
    int ended = 0;
    for (int i = 0; i < n; i++) {
        pfds[i].fd = peers[i].ended ? -1 : peers[i].fd;
        pfds[i].events = POLLIN | POLLRDHUP;
        ended += peers[i].ended != 0;
    }
    while (ended < want) {
        int k = poll(pfds, (nfds_t)n, harness_left_ms(deadline));
        if (k < 0 && errno == EINTR)
            continue;
        assert_true(k >= 0);
        if (k == 0)
            break;
        for (int i = 0; i < n; i++) {
            if (pfds[i].fd < 0 || pfds[i].revents == 0)
                continue;
            char buf[4096];
            ssize_t got = recv(pfds[i].fd, buf, sizeof buf, 0);
            if (got > 0) {
                size_t room = sizeof peers[i].head - 1 - peers[i].got;
                if (peers[i].got < sizeof peers[i].head - 1)
                    memcpy(peers[i].head + peers[i].got, buf,
                           (size_t)got < room ? (size_t)got : room);
                peers[i].got += (size_t)got;
                continue;
            }
            if (got < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            peers[i].ended = harness_now_ms();
            pfds[i].fd = -1;
            ended++;
        }
    }
    free(pfds);
    return ended;
}

/* Sends all of data on a fresh non-blocking socket (a few bytes: the kernel takes them). */
static void send_raw(int fd, const void *data, size_t len)
{
    assert_int_equal(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* ---- Setup ---- */

static int setup(void **state)
{
    (void)state;
    atexit(cleanup_at_exit);
    signal(SIGPIPE, SIG_IGN);
    tls_certs_make_ca(&certs, "/tmp/mcp-https-XXXXXX");
    tls_certs_issue(&certs, "a", "/CN=localhost", "10", TLS_CERTS_SERVER_EXT);
    tls_certs_issue(&certs, "b", "/CN=localhost", "11", TLS_CERTS_SERVER_EXT);
    tls_certs_path(&certs, a_crt, sizeof a_crt, "a.crt");
    tls_certs_path(&certs, a_key, sizeof a_key, "a.key");
    tls_certs_path(&certs, b_crt, sizeof b_crt, "b.crt");
    tls_certs_path(&certs, b_key, sizeof b_key, "b.key");
    ctx13 = tls_client_ctx(certs.ca, TLS1_3_VERSION, TLS1_3_VERSION, -1, "h2,http/1.1");
    ctx12 = tls_client_ctx(certs.ca, TLS1_2_VERSION, TLS1_2_VERSION, -1, NULL);
    ctx_any = tls_client_ctx(certs.ca, 0, 0, -1, NULL);
    assert_true(ctx13 != NULL && ctx12 != NULL && ctx_any != NULL);
    const char *const flags[] = {"--tls-cert", a_crt, "--tls-key", a_key, NULL};
    if (hc_server_start(&main_srv, flags, START_MS) != 0)
        fail_msg("mcp-everything did not start with TLS (its stderr is above)");
    main_started = 1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (main_started)
        rc = hc_server_stop_check(&main_srv, STOP_MS);
    main_started = 0;
    SSL_CTX_free(ctx13);
    SSL_CTX_free(ctx12);
    SSL_CTX_free(ctx_any);
    ctx13 = ctx12 = ctx_any = NULL;
    tls_certs_remove(&certs);
    return rc;
}

/* ---- Served ---- */

/*
 * A connection with ctx, verified for host: the protocol version and ALPN
 * protocol ("" for none) expected, an AEAD suite (forward-secret: TLS 1.3's
 * are, TLS 1.2's must be ECDHE), certificate A; then initialize and
 * tools/call echo of text on it.
 */
static void expect_mcp_over(SSL_CTX *ctx, const char *host, int version, const char *alpn,
                            const char *text)
{
    int port = main_srv.port;
    tls_client t;
    open_or_fail(&t, ctx, port, host);
    assert_int_equal(SSL_version(t.ssl), version);
    assert_int_equal(SSL_get_verify_result(t.ssl), X509_V_OK);
    assert_int_equal(tls_client_serial(&t), SERIAL_A);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(t.ssl);
    assert_true(SSL_CIPHER_is_aead(cipher));
    if (version == TLS1_2_VERSION)
        assert_int_equal(SSL_CIPHER_get_kx_nid(cipher), NID_kx_ecdhe);
    char selected[32];
    assert_string_equal(tls_client_alpn(&t, selected, sizeof selected), alpn);
    char session[33];
    initialize(&t, port, session);
    echo(&t, port, session, 2, text);
    tls_client_close(&t);
}

static void test_https_serves_initialize_and_echo_over_tls13_with_alpn_http11(void **state)
{
    (void)state;
    /* Offered "h2,http/1.1": http/1.1 is chosen. */
    expect_mcp_over(ctx13, "localhost", TLS1_3_VERSION, "http/1.1", "over TLS 1.3");
    char url[96];
    snprintf(url, sizeof url, "listening on https://127.0.0.1:%d/mcp", main_srv.port);
    char *err = hc_server_stderr(&main_srv);
    cr_expect_contains("mcp-everything's stderr", err, url);
    free(err);
}

static void test_https_serves_initialize_and_echo_over_tls12_verified_for_127_0_0_1(void **state)
{
    (void)state;
    /* No ALPN offered: the server goes on without it (RFC 7301 §3.2). */
    expect_mcp_over(ctx12, "127.0.0.1", TLS1_2_VERSION, "", "over TLS 1.2");
}

/* The verification above means something: the certificate names no other host. */
static void test_https_certificate_fails_verification_for_another_host_name(void **state)
{
    (void)state;
    tls_client t;
    assert_int_equal(tls_client_open(&t, ctx_any, main_srv.port, "example.com", IO_MS), -1);
    cr_expect_contains("the handshake's failure", t.why, "hostname mismatch");
    tls_client_close(&t);
}

/* ---- Refused ---- */

/* A client with ctx (freed here) fails its handshake on the server's alert (a
 * description); the server serves on. */
static void expect_refused(SSL_CTX *ctx, int alert, const char *what)
{
    assert_non_null(ctx);
    tls_client t;
    int rc = tls_client_open(&t, ctx, main_srv.port, "localhost", IO_MS);
    SSL_CTX_free(ctx);
    if (rc == 0)
        fail_msg("%s: the handshake succeeded (%s)", what, SSL_get_version(t.ssl));
    if (t.alert != alert)
        fail_msg("%s: expected the alert %d, got %d: %s", what, alert, t.alert, t.why);
    tls_client_close(&t);
    assert_int_equal(serves(main_srv.port), SERIAL_A);
}

static void test_https_refuses_tls11_with_a_protocol_version_alert(void **state)
{
    (void)state;
    /* Level 0: OpenSSL's client would not offer TLS 1.1 otherwise. */
    expect_refused(tls_client_ctx(certs.ca, TLS1_VERSION, TLS1_1_VERSION, 0, NULL),
                   SSL_AD_PROTOCOL_VERSION, "TLS 1.1 at most");
}

static void test_https_refuses_alpn_h2_alone_with_no_application_protocol(void **state)
{
    (void)state;
    expect_refused(tls_client_ctx(certs.ca, 0, 0, -1, "h2"), SSL_AD_NO_APPLICATION_PROTOCOL,
                   "ALPN h2 alone");
}

static void test_https_plaintext_http_gets_no_http_answer_and_the_connection_ends(void **state)
{
    (void)state;
    int port = main_srv.port;
    peer p = {.fd = tls_client_tcp_connect(port, IO_MS)};
    assert_true(p.fd >= 0);
    char *body = hc_initialize_body(NULL);
    size_t len;
    char *req =
        hc_format_request(port, "POST", "/mcp", HC_MCP_POST_HEADERS, body, strlen(body), &len);
    free(body);
    assert_non_null(req);
    send_raw(p.fd, req, len);
    free(req);
    if (await_ends(&p, 1, 1, harness_now_ms() + IO_MS) != 1)
        fail_msg("plaintext HTTP on the TLS port: the connection did not end within %d ms", IO_MS);
    close(p.fd);
    if (strncmp(p.head, "HTTP/", 5) == 0)
        fail_msg("plaintext HTTP on the TLS port got an HTTP answer: %s", p.head);
    printf("plaintext HTTP on the TLS port: %zu bytes back, then the end\n", p.got);
    /* The server serves on. */
    assert_int_equal(serves(port), SERIAL_A);
}

/* ---- Reload ---- */

static void test_https_sighup_reloads_the_certificate_and_keeps_open_connections(void **state)
{
    (void)state;
    char live_crt[128], live_key[128];
    tls_certs_path(&certs, live_crt, sizeof live_crt, "live.crt");
    tls_certs_path(&certs, live_key, sizeof live_key, "live.key");
    install(a_crt, live_crt);
    install(a_key, live_key);
    const char *const flags[] = {"--tls-cert", live_crt, "--tls-key", live_key, NULL};
    start_own(flags);
    int port = own.port;

    /* A keep-alive connection with certificate A and a session on it. */
    tls_client old;
    open_or_fail(&old, ctx_any, port, "localhost");
    assert_int_equal(tls_client_serial(&old), SERIAL_A);
    char session[33];
    initialize(&old, port, session);
    echo(&old, port, session, 2, "before the reload");

    install(b_crt, live_crt);
    install(b_key, live_key);
    assert_int_equal(kill(own.pid, SIGHUP), 0);
    /* The reload is said on stderr (a warning, shown by default); from then on every new
     * connection gets B. */
    char reloaded[192];
    snprintf(reloaded, sizeof reloaded, "certificate reloaded from %s", live_crt);
    if (hc_server_wait_stderr(&own, reloaded, RELOAD_MS) != 0) {
        char *err = hc_server_stderr(&own);
        fail_msg("no \"%s\" within %d ms of SIGHUP; stderr:\n%s", reloaded, RELOAD_MS, err);
    }
    assert_int_equal(serves(port), SERIAL_B);

    /* The old connection kept its certificate and answers on the same TLS connection. */
    echo(&old, port, session, 3, "after the reload");
    assert_int_equal(tls_client_serial(&old), SERIAL_A);
    tls_client t;
    open_or_fail(&t, ctx13, port, "localhost");
    char session_b[33];
    initialize(&t, port, session_b);
    echo(&t, port, session_b, 2, "with certificate B");
    tls_client_close(&t);

    /* A broken file: the reload fails, said on stderr, and B stays. */
    install_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n"
                 "-----END CERTIFICATE-----\n",
                 live_crt);
    assert_int_equal(kill(own.pid, SIGHUP), 0);
    if (hc_server_wait_stderr(&own, "the certificate in use stays", RELOAD_MS) != 0) {
        char *err = hc_server_stderr(&own);
        fail_msg("no word of the failed reload within %d ms; stderr:\n%s", RELOAD_MS, err);
    }
    char *err = hc_server_stderr(&own);
    cr_expect_contains("mcp-everything's stderr", err, "error: tls: ");
    cr_expect_contains("mcp-everything's stderr", err, live_crt);
    free(err);
    assert_true(hc_server_alive(&own));
    assert_int_equal(serves(port), SERIAL_B);
    echo(&old, port, session, 4, "after the failed reload");
    tls_client_close(&old);
}

/* ---- The handshake's deadline and bound ---- */

/*
 * mcp-everything with flags, its stderr on a pipe this thread reads itself, so that a
 * signal can follow its listening line as closely as a supervisor's would; dies with
 * the test (harness_dying_argv). *err_fd gets the pipe's reading end.
 */
static pid_t spawn_reading_stderr(const char *const flags[], int *err_fd)
{
    char exe[PATH_MAX];
    assert_int_equal(harness_bin_path("mcp-everything", exe, sizeof exe), 0);
    const char *argv[16] = {exe, "--http", "127.0.0.1:0"};
    size_t n = 3;
    for (size_t i = 0; flags[i] != NULL && n < 15; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    const char *args[24];
    assert_int_equal(harness_dying_argv(args, 24, argv), 0);
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], &fa, NULL, (char *const *)args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    assert_int_equal(rc, 0);
    *err_fd = fds[0];
    return pid;
}

/* A SIGHUP sent the moment the server says it listens (as a supervisor that renews
 * certificates may) finds the handler installed: the server serves on, where the
 * default action would kill it (71 to 91 times in 100 before the handler was put in
 * place before the endpoint). */
static void test_https_sighup_right_after_listening_does_not_kill(void **state)
{
    (void)state;
    const char *const flags[] = {"--tls-cert", a_crt, "--tls-key", a_key, NULL};
    for (int i = 0; i < 20; i++) {
        int fd;
        pid_t pid = spawn_reading_stderr(flags, &fd);
        char buf[4096];
        size_t len = 0;
        long long deadline = harness_now_ms() + START_MS;
        while (memmem(buf, len, "listening on", 12) == NULL && len < sizeof buf) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            int left = (int)(deadline - harness_now_ms());
            if (left <= 0 || poll(&p, 1, left) <= 0)
                break;
            ssize_t r = read(fd, buf + len, sizeof buf - len);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
        int listening = memmem(buf, len, "listening on", 12) != NULL;
        kill(pid, SIGHUP);
        int status = 0;
        /* Killed by it, the process is gone within moments; alive, it is stopped here. */
        int gone = harness_wait_pid(pid, 200 * SCALE, &status) == 0;
        if (!gone) {
            kill(pid, SIGTERM);
            if (harness_wait_pid(pid, STOP_MS, &status) != 0) {
                kill(pid, SIGKILL);
                harness_wait_pid(pid, STOP_MS, &status);
            }
        }
        close(fd);
        if (!listening)
            fail_msg("round %d: no listening line within %d ms: %.*s", i, START_MS, (int)len, buf);
        if (gone)
            fail_msg("round %d: the SIGHUP sent on the listening line ended the server (%s %d)", i,
                     WIFSIGNALED(status) ? "signal" : "exit status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

static void test_https_handshake_deadline_closes_silent_and_half_hello_connections(void **state)
{
    (void)state;
    const char *const flags[] = {
        "--tls-cert",      a_crt, "--tls-key", a_key, "--tls-handshake-timeout-ms",
        HANDSHAKE_TIMEOUT, NULL};
    start_own(flags);
    peer peers[2] = {{.fd = tls_client_tcp_connect(own.port, IO_MS)},
                     {.fd = tls_client_tcp_connect(own.port, IO_MS)}};
    long long start = harness_now_ms();
    assert_true(peers[0].fd >= 0 && peers[1].fd >= 0);
    send_raw(peers[1].fd, partial_hello, sizeof partial_hello);
    int ended = await_ends(peers, 2, 2, start + CLOSED_WITHIN_MS);
    for (int i = 0; i < 2; i++)
        close(peers[i].fd);
    if (ended != 2)
        fail_msg("with --tls-handshake-timeout-ms %s, not closed within %d ms: %s%s",
                 HANDSHAKE_TIMEOUT, CLOSED_WITHIN_MS, peers[0].ended ? "" : "a silent client ",
                 peers[1].ended ? "" : "a client that sent half a ClientHello");
    printf("handshake deadline %s ms: silent client closed after %lld ms, half a ClientHello "
           "after %lld ms\n",
           HANDSHAKE_TIMEOUT, peers[0].ended - start, peers[1].ended - start);
    /* Nothing is said to a client that never finished its hello. */
    assert_int_equal(peers[0].got, 0);
    assert_int_equal(peers[1].got, 0);
    assert_int_equal(serves(own.port), SERIAL_A);
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = rl.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < FLOOD_STALLED + 256)
        fail_msg("RLIMIT_NOFILE's hard limit %llu is too low for %d connections",
                 (unsigned long long)rl.rlim_cur, FLOOD_STALLED);
}

/*
 * The server's RSS once the memory of a burst has gone back: within a tenth of
 * idle_kb, waited for up to RSS_SETTLE_MS (it goes back on a timer of the
 * server's, about a second: nothing to await).
 */
static long settled_rss_kb(long idle_kb)
{
    if (UNDER_ASAN)
        return hc_server_rss_kb(&own); /* its allocator keeps its own pools: no use waiting */
    long long deadline = harness_now_ms() + RSS_SETTLE_MS;
    long rss;
    while ((rss = hc_server_rss_kb(&own)) > idle_kb + idle_kb / 10 && harness_now_ms() < deadline)
        poll(NULL, 0, 50);
    return rss;
}

static void test_https_stalled_handshake_flood_does_not_keep_clients_out(void **state)
{
    (void)state;
    raise_fd_limit();
    const char *const flags[] = {"--tls-cert",
                                 a_crt,
                                 "--tls-key",
                                 a_key,
                                 "--tls-handshake-timeout-ms",
                                 FLOOD_HANDSHAKE_TIMEOUT,
                                 NULL};
    hc_asan_small_quarantine(4); /* freed memory would look like growth */
    start_own(flags);
    int port = own.port;
    assert_int_equal(serves(port), SERIAL_A);
    long rss_before = hc_server_rss_kb(&own);

    /* The crowd: half send the start of a ClientHello, half nothing; all stay open. */
    peer *crowd = calloc(FLOOD_STALLED, sizeof *crowd);
    assert_non_null(crowd);
    long long start = harness_now_ms();
    for (int i = 0; i < FLOOD_STALLED; i++) {
        crowd[i].fd = tls_client_tcp_connect(port, IO_MS);
        if (crowd[i].fd < 0)
            fail_msg("stalled connection %d of %d: cannot connect (errno %d)", i + 1, FLOOD_STALLED,
                     errno);
        if (i % 2 == 0)
            send_raw(crowd[i].fd, partial_hello, sizeof partial_hello);
    }
    long long opened = harness_now_ms() - start;

    /* The bound: all but the newest MAX_HANDSHAKES give way, long before their deadline.
     * Without it nothing below would be refused (the connection limit follows the
     * descriptors, thousands): the closes and /metrics are what show it. */
    int want = FLOOD_STALLED - MAX_HANDSHAKES;
    int ended = await_ends(crowd, FLOOD_STALLED, want, harness_now_ms() + FLOOD_BOUND_MS);
    printf("flood: %d stalled handshakes opened in %lld ms; %d closed by the server after "
           "%lld ms (bound %d in progress)\n",
           FLOOD_STALLED, opened, ended, harness_now_ms() - start, MAX_HANDSHAKES);
    if (ended < want)
        fail_msg("only %d of %d stalled handshakes closed within %d ms: the bound of %d "
                 "handshakes in progress did not hold",
                 ended, FLOOD_STALLED, FLOOD_BOUND_MS, MAX_HANDSHAKES);
    /* The server's own count agrees (the connection that asks made one more give way). */
    long long in_progress = metric(port, "mcp_http_tls_handshakes");
    long long dropped = metric(port, "mcp_http_tls_handshakes_dropped_total");
    printf("flood: /metrics says %lld handshakes in progress, %lld dropped\n", in_progress,
           dropped);
    assert_true(in_progress <= MAX_HANDSHAKES);
    assert_true(dropped >= want);

    /* A normal client beside them: each request a new connection and handshake. */
    int served = 0;
    char first_failure[300] = "";
    long long begun = harness_now_ms();
    for (int i = 0; i < FLOOD_REQUESTS; i++) {
        tls_client t;
        int ok =
            tls_client_open(&t, ctx_any, port, "localhost", IO_MS) == 0 && healthz(&t, port) == 0;
        served += ok;
        if (!ok && first_failure[0] == '\0')
            snprintf(first_failure, sizeof first_failure, "request %d: %s", i + 1, t.why);
        tls_client_close(&t);
    }
    long long took = harness_now_ms() - begun;
    long rss_peak = hc_server_rss_kb(&own);
    printf("flood: served %d/%d (each a new TLS connection: handshake + GET /healthz) in %lld "
           "ms beside %d stalled handshakes\n",
           served, FLOOD_REQUESTS, took, FLOOD_STALLED);
    if (served * 100 < FLOOD_REQUESTS * FLOOD_SERVED_PERCENT)
        fail_msg("only %d of %d requests served; the first failure: %s", served, FLOOD_REQUESTS,
                 first_failure);

    for (int i = 0; i < FLOOD_STALLED; i++)
        close(crowd[i].fd);
    free(crowd);
    assert_int_equal(serves(port), SERIAL_A);
    long rss_after = settled_rss_kb(rss_before);
    printf("flood: server RSS %ld KiB before, %ld KiB with the crowd, %ld KiB once it closed\n",
           rss_before, rss_peak, rss_after);
    assert_true(rss_before > 0 && rss_peak > 0 && rss_after > 0);
    if (rss_peak > rss_before + FLOOD_RSS_GROWTH_KB)
        fail_msg("the crowd grew the server from %ld KiB to %ld KiB, more than %ld KiB", rss_before,
                 rss_peak, FLOOD_RSS_GROWTH_KB);
    /* ASan's allocator keeps freed memory in its quarantine: only the plain build's
     * memory must go back (within a tenth of the RSS before). */
    if (!UNDER_ASAN && rss_after > rss_before + rss_before / 10)
        fail_msg("%d s after the crowd closed the server still has %ld KiB, %ld KiB before",
                 RSS_SETTLE_MS / 1000, rss_after, rss_before);
}

/* ---- Usage ---- */

/* Runs mcp-everything with args (NULL-terminated) to its end. */
static void run_everything(cr_run *r, const char *const *args)
{
    char path[4096];
    assert_int_equal(harness_bin_path("mcp-everything", path, sizeof path), 0);
    const char *argv[16] = {path};
    size_t n = 1;
    for (size_t i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    cr_run_program(r, argv, START_MS);
}

/*
 * The handshake that gives way past the bound is one of the source with the most
 * handshakes in progress, not of the source with the most connections: a client
 * (127.0.0.2) that holds ten finished connections and has begun one more keeps it when
 * four silent connections of another source (127.0.0.3) come after it, past the bound
 * of four.
 */
static void test_https_handshakes_give_way_by_the_source_with_most_in_progress(void **state)
{
    (void)state;
    const char *const flags[] = {"--tls-cert",
                                 a_crt,
                                 "--tls-key",
                                 a_key,
                                 "--tls-max-handshakes",
                                 "4",
                                 "--tls-handshake-timeout-ms",
                                 FLOOD_HANDSHAKE_TIMEOUT,
                                 NULL};
    start_own(flags);
    int port = own.port;
    tls_client held[10];
    hc_set_source("127.0.0.2");
    for (int i = 0; i < 10; i++)
        open_or_fail(&held[i], ctx_any, port, "localhost");
    peer mine = {.fd = tls_client_tcp_connect(port, IO_MS)};
    assert_true(mine.fd >= 0);
    send_raw(mine.fd, partial_hello, sizeof partial_hello);
    /* Its handshake is under way (the server read the start of its ClientHello) before
     * the crowd comes. */
    assert_int_equal(await_ends(&mine, 1, 1, harness_now_ms() + 300), 0);
    hc_set_source("127.0.0.3");
    peer crowd[4] = {{0}};
    for (int i = 0; i < 4; i++) {
        crowd[i].fd = tls_client_tcp_connect(port, IO_MS);
        assert_true(crowd[i].fd >= 0);
        send_raw(crowd[i].fd, partial_hello, sizeof partial_hello);
    }
    hc_set_source(NULL);
    /* The fifth handshake in progress makes one give way: one of the crowd's, at once;
     * the other source's stays. */
    if (await_ends(crowd, 4, 1, harness_now_ms() + IO_MS) != 1)
        fail_msg("none of the handshakes of 127.0.0.3 gave way to the fifth");
    if (await_ends(&mine, 1, 1, harness_now_ms() + 300) != 0)
        fail_msg("the handshake of 127.0.0.2, which holds ten finished connections, gave way");
    for (int i = 0; i < 4; i++)
        close(crowd[i].fd);
    close(mine.fd);
    for (int i = 0; i < 10; i++)
        tls_client_close(&held[i]);
}

/* A request and close_notify in one read: the answer goes out before the connection
 * ends, as a request and a TCP end of stream get theirs. */
static void test_https_request_then_close_notify_gets_its_answer(void **state)
{
    (void)state;
    int port = main_srv.port;
    tls_client t;
    open_or_fail(&t, ctx_any, port, "localhost");
    int one = 1, zero = 0;
    /* Corked: the request's record and close_notify leave in one segment. */
    assert_int_equal(setsockopt(t.fd, IPPROTO_TCP, TCP_CORK, &one, sizeof one), 0);
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    assert_int_equal(tls_client_send(&t, req, sizeof req - 1, IO_MS), 0);
    (void)SSL_shutdown(t.ssl); /* sends close_notify; the answer is read below */
    assert_int_equal(setsockopt(t.fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof zero), 0);
    hc_response r;
    if (tls_client_read_response(&t, &r, IO_MS) != 0)
        fail_msg("no answer to a request followed by close_notify: %s", t.why);
    hx_expect_status(&r, 200, "GET /healthz, then close_notify");
    hc_response_free(&r);
    tls_client_close(&t);
}

static void test_https_tls_cert_without_tls_key_exits_2(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {"--http", "127.0.0.1:0", "--tls-cert", a_crt, NULL};
    run_everything(&r, args);
    cr_expect_status(&r, 2);
    cr_expect_contains("stderr", r.err, "--tls-key");
    cr_run_free(&r);
}

/* A file that cannot be used stops the start, and the message names it. */
static void expect_start_fails_naming(const char *crt, const char *key, const char *named)
{
    cr_run r;
    const char *args[] = {"--http", "127.0.0.1:0", "--tls-cert", crt, "--tls-key", key, NULL};
    run_everything(&r, args);
    if (r.status <= 0)
        fail_msg("--tls-cert %s --tls-key %s: expected a failed start, got status %d; "
                 "stderr:\n%s",
                 crt, key, r.status, r.err);
    cr_expect_contains("stderr", r.err, named);
    if (strstr(r.err, "listening on") != NULL)
        fail_msg("it said it listens:\n%s", r.err);
    cr_run_free(&r);
}

static void test_https_nonexistent_certificate_file_fails_the_start_naming_it(void **state)
{
    (void)state;
    char missing[128];
    tls_certs_path(&certs, missing, sizeof missing, "missing.crt");
    expect_start_fails_naming(missing, a_key, missing);
}

static void test_https_key_of_another_certificate_fails_the_start_naming_it(void **state)
{
    (void)state;
    expect_start_fails_naming(a_crt, b_key, b_key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_https_serves_initialize_and_echo_over_tls13_with_alpn_http11),
        cmocka_unit_test(test_https_serves_initialize_and_echo_over_tls12_verified_for_127_0_0_1),
        cmocka_unit_test(test_https_certificate_fails_verification_for_another_host_name),
        cmocka_unit_test(test_https_refuses_tls11_with_a_protocol_version_alert),
        cmocka_unit_test(test_https_refuses_alpn_h2_alone_with_no_application_protocol),
        cmocka_unit_test(test_https_plaintext_http_gets_no_http_answer_and_the_connection_ends),
        cmocka_unit_test_teardown(
            test_https_sighup_reloads_the_certificate_and_keeps_open_connections, stop_own),
        cmocka_unit_test_teardown(test_https_sighup_right_after_listening_does_not_kill, stop_own),
        cmocka_unit_test_teardown(
            test_https_handshake_deadline_closes_silent_and_half_hello_connections, stop_own),
        cmocka_unit_test_teardown(test_https_stalled_handshake_flood_does_not_keep_clients_out,
                                  stop_own),
        cmocka_unit_test_teardown(
            test_https_handshakes_give_way_by_the_source_with_most_in_progress, stop_own),
        cmocka_unit_test(test_https_request_then_close_notify_gets_its_answer),
        cmocka_unit_test(test_https_tls_cert_without_tls_key_exits_2),
        cmocka_unit_test(test_https_nonexistent_certificate_file_fails_the_start_naming_it),
        cmocka_unit_test(test_https_key_of_another_certificate_fails_the_start_naming_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
