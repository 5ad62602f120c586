/* SPDX-License-Identifier: MIT */
/*
 * `mcp https://...` against a local TLS endpoint: Debian's haproxy terminates
 * TLS on a free loopback port and forwards to `mcp-everything --http`. The
 * certificates are made at test time with the openssl command into a
 * temporary directory (a throwaway CA and a server certificate for localhost
 * and 127.0.0.1), and removed at the end; no key is ever committed.
 *
 * With --cacert naming the CA, tools are called (progress included, streamed
 * through the proxy), over Streamable HTTP and the HTTP+SSE transport.
 * Without it, the system's CAs do not know the certificate: TLS fails and mcp
 * exits 4, the status of a server that cannot be reached. A second frontend
 * requires a client certificate of the CA: --cert and --key give it.
 *
 * haproxy and openssl are dependencies of the tests (scripts/deps installs
 * them): when one is missing, the test fails; it never skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "harness.h"
#include "http_client.h"
#include "tls_certs.h"

#define START_MS 10000
#define STOP_MS 10000
/* Attempts at a free port for haproxy: another process may take the one picked. */
#define PROXY_ATTEMPTS 5

extern char **environ;

static tls_certs certs;      /* the directory of certificates and configuration, and the CA */
static hc_server everything; /* mcp-everything --http behind the proxy */
static pid_t proxy_pid;      /* haproxy, 0 once reaped */
static int proxy_port;       /* TLS */
static int mtls_port;        /* TLS with a client certificate required */
static char mcp_url[128];    /* https://localhost:PORT/mcp */
static char sse_url[128];    /* https://localhost:PORT/sse */
static char mtls_url[128];   /* https://localhost:MTLS_PORT/mcp */
static char client_crt[128], client_key[128], client_pem[128];

/*
 * The certificates: the CA; a server certificate for localhost and 127.0.0.1
 * (server.pem holds it and its key, as haproxy's `crt` wants); a client
 * certificate (client.crt, client.key, both in client.pem).
 */
static void make_certificates(void)
{
    tls_certs_issue(&certs, "server", "/CN=localhost", "2", TLS_CERTS_SERVER_EXT);
    tls_certs_issue(&certs, "client", "/CN=libmcp test client", "3", TLS_CERTS_CLIENT_EXT);
    tls_certs_path(&certs, client_crt, sizeof client_crt, "client.crt");
    tls_certs_path(&certs, client_key, sizeof client_key, "client.key");
    tls_certs_path(&certs, client_pem, sizeof client_pem, "client.pem");
}

/* A loopback port that was free a moment ago. */
static int free_port(void)
{
    int port;
    close(cr_bind_loopback(&port));
    return port;
}

/* True once something accepts connections on 127.0.0.1:port. */
static bool accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

/*
 * Starts haproxy in the foreground (-db) on a free port, terminating TLS with
 * server.pem and forwarding HTTP to mcp-everything, and waits until it
 * accepts. Returns 0, or -1 when haproxy exited first (its log is then in
 * *log, malloc'd): the port was taken, say.
 */
static int start_proxy(char **log)
{
    char cfg_path[128], log_path[128], pem[128], cfg[2048];
    tls_certs_path(&certs, cfg_path, sizeof cfg_path, "haproxy.cfg");
    tls_certs_path(&certs, log_path, sizeof log_path, "haproxy.log");
    tls_certs_path(&certs, pem, sizeof pem, "server.pem");
    proxy_port = free_port();
    do
        mtls_port = free_port();
    while (mtls_port == proxy_port);
    /* The timeouts outlast any test; noreuseport keeps haproxy off a port
     * another program listens on. mcp-everything checks Host, which is
     * localhost:PORT here: its default (loopback names when bound to loopback)
     * takes it. */
    snprintf(cfg, sizeof cfg,
             "global\n"
             "    maxconn 256\n"
             "    noreuseport\n"
             "defaults\n"
             "    mode http\n"
             "    timeout connect 5s\n"
             "    timeout client 60s\n"
             "    timeout server 60s\n"
             "frontend tls\n"
             "    bind 127.0.0.1:%d ssl crt %s\n"
             "    default_backend everything\n"
             "frontend mtls\n"
             "    bind 127.0.0.1:%d ssl crt %s ca-file %s verify required\n"
             "    default_backend everything\n"
             "backend everything\n"
             "    server everything 127.0.0.1:%d\n",
             proxy_port, pem, mtls_port, pem, certs.ca, everything.port);
    tls_certs_write_file(cfg_path, cfg);

    posix_spawn_file_actions_t fa;
    assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    const char *const argv[] = {"haproxy", "-db", "-f", cfg_path, NULL};
    const char *args[12];
    assert_int_equal(harness_dying_argv(args, 12, argv), 0);
    int rc = posix_spawnp(&proxy_pid, args[0], &fa, NULL, (char *const *)args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        proxy_pid = 0;
        fail_msg("cannot run haproxy (%s): install it (scripts/deps does)", strerror(rc));
    }

    long long deadline = harness_now_ms() + START_MS;
    while (!accepts(proxy_port) || !accepts(mtls_port)) {
        int status;
        /* The pause between attempts is a wait for haproxy's exit. */
        if (harness_wait_pid(proxy_pid, 10, &status) == 0) {
            proxy_pid = 0;
            *log = cr_read_file(log_path);
            return -1;
        }
        if (harness_now_ms() >= deadline) {
            char *text = cr_read_file(log_path);
            fail_msg("haproxy did not accept on ports %d and %d within %d ms; its log:\n%s",
                     proxy_port, mtls_port, START_MS, text);
        }
    }
    return 0;
}

static void stop_proxy(void)
{
    if (proxy_pid <= 0)
        return;
    int status;
    kill(proxy_pid, SIGTERM);
    if (harness_wait_pid(proxy_pid, STOP_MS, &status) != 0) {
        kill(proxy_pid, SIGKILL);
        harness_wait_pid(proxy_pid, STOP_MS, &status);
    }
    proxy_pid = 0;
}

/*
 * Stops haproxy and mcp-everything and removes the directory; safe to call
 * twice. Also at exit: a failed group setup runs no teardown.
 */
static int cleanup(void)
{
    stop_proxy();
    int rc = 0;
    if (everything.pid > 0)
        rc = hc_server_stop_check(&everything, STOP_MS);
    tls_certs_remove(&certs);
    return rc;
}

static void cleanup_at_exit(void)
{
    cleanup();
}

static int setup(void **state)
{
    (void)state;
    atexit(cleanup_at_exit);
    tls_certs_make_ca(&certs, "/tmp/mcp-cli-tls-XXXXXX");
    make_certificates();
    assert_int_equal(hc_server_start(&everything, NULL, START_MS), 0);
    char *log = NULL;
    for (int attempt = 1; start_proxy(&log) != 0; attempt++) {
        if (attempt == PROXY_ATTEMPTS)
            fail_msg("haproxy exited %d times before accepting; its last log:\n%s", attempt, log);
        free(log);
        log = NULL;
    }
    snprintf(mcp_url, sizeof mcp_url, "https://localhost:%d/mcp", proxy_port);
    snprintf(sse_url, sizeof sse_url, "https://localhost:%d/sse", proxy_port);
    snprintf(mtls_url, sizeof mtls_url, "https://localhost:%d/mcp", mtls_port);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cleanup();
}

static void test_https_with_cacert_calls_a_tool(void **state)
{
    (void)state;
    const char *args[] = {"--cacert", certs.ca, mcp_url, "tools", "call", "echo", "text=hi", NULL};
    cr_mcp_expect(args, 0, "hi\n", NULL);
}

/* Progress notifications come on the SSE stream of the call, through the proxy. */
static void test_https_streams_progress_through_the_proxy(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {"--cacert",     certs.ca,  mcp_url,       "tools", "call",
                          "long_running", "steps=3", "delay_ms=10", NULL};
    cr_run_mcp(&r, args);
    cr_expect_long_running(&r, 3);
    cr_run_free(&r);
}

static void test_https_http_sse_with_cacert(void **state)
{
    (void)state;
    const char *args[] = {"--cacert", certs.ca, "--http-sse",  sse_url, "tools",
                          "call",     "echo",   "text=legacy", NULL};
    cr_mcp_expect(args, 0, "legacy\n", NULL);
}

/* The system's CAs do not know the test CA: TLS fails, which is exit status 4. */
static void test_https_without_cacert_fails_verification_with_status_4(void **state)
{
    (void)state;
    cr_run r;
    const char *args[] = {mcp_url, "tools", "call", "echo", "text=hi", NULL};
    cr_run_mcp(&r, args);
    cr_expect_connect_failure(&r, 4, "the server cannot be reached", mcp_url);
    cr_expect_contains("stderr", r.err, "certificate");
    cr_run_free(&r);
}

/* --cert and --key, or --cert alone with a PEM holding both, answer the proxy's demand. */
static void test_https_client_certificate_with_cert_and_key(void **state)
{
    (void)state;
    cr_run r;
    const char *separate[] = {"--cacert", certs.ca, "--cert", client_crt, "--key",     client_key,
                              mtls_url,   "tools",  "call",   "echo",     "text=mtls", NULL};
    cr_mcp_expect(separate, 0, "mtls\n", NULL);

    const char *combined[] = {"--cacert", certs.ca, "--cert", client_pem, mtls_url, "ping", NULL};
    cr_mcp_expect(combined, 0, NULL, NULL);

    /*
     * Without one the proxy ends the connection. Under TLS 1.3 the client's
     * handshake is over by then, so libcurl mostly sees a failed send or
     * receive (MCP_EIO: exit status 3), and only when the alert comes in time
     * a failed handshake (MCP_ECONNECT: 4).
     */
    const char *none[] = {"--cacert", certs.ca, mtls_url, "ping", NULL};
    cr_run_mcp(&r, none);
    if (r.status != 3 && r.status != 4)
        cr_expect_status(&r, 3);
    cr_expect_contains("stderr", r.err, "mcp: cannot connect");
    cr_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_https_with_cacert_calls_a_tool),
        cmocka_unit_test(test_https_streams_progress_through_the_proxy),
        cmocka_unit_test(test_https_http_sse_with_cacert),
        cmocka_unit_test(test_https_without_cacert_fails_verification_with_status_4),
        cmocka_unit_test(test_https_client_certificate_with_cert_and_key),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
