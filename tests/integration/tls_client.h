/* SPDX-License-Identifier: MIT */
/*
 * A TLS client for the HTTPS tests, on OpenSSL's client API over a real
 * 127.0.0.1 socket, so that a test chooses the protocol versions, the
 * security level and the ALPN list it offers, and sees the server's
 * certificate and alerts. Over it, HTTP/1.1 requests as http_client.h writes
 * them and responses read into an hc_response (Content-Length, chunked, or
 * up to the close), so that http_expect.h's checks apply.
 *
 * The socket is non-blocking and every call has a deadline; nothing sleeps.
 * Functions report failure by return value (the reason in t->why) so that
 * tests decide what to assert.
 */
#ifndef MCP_TESTS_INTEGRATION_TLS_CLIENT_H
#define MCP_TESTS_INTEGRATION_TLS_CLIENT_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "http_client.h"

typedef struct tls_client {
    int fd;        /* -1 when closed */
    SSL *ssl;      /* NULL when closed */
    int alert;     /* the description of the last alert the server sent, or -1 */
    char why[256]; /* why the last call failed */
    char *in;      /* plaintext read and not yet consumed */
    size_t in_len, in_cap;
    int eof; /* the server ended the connection (close_notify or TCP) */
} tls_client;

/*
 * A client context that verifies the server against the CA in ca_file, offers
 * protocol versions min_version to max_version (TLS1_2_VERSION, ...; 0: the
 * library's bound) at OpenSSL security level security_level (-1: the default;
 * 0 lets TLS 1.0 and 1.1 be offered), and the ALPN protocols in alpn ("h2,http/1.1",
 * NULL: no ALPN). Free it with SSL_CTX_free. NULL on error.
 */
SSL_CTX *tls_client_ctx(const char *ca_file, int min_version, int max_version, int security_level,
                        const char *alpn);

/* A non-blocking TCP socket connected to 127.0.0.1:port within timeout_ms, or -1. */
int tls_client_tcp_connect(int port, int timeout_ms);

/*
 * Connects to 127.0.0.1:port and completes the handshake within timeout_ms,
 * the certificate verified for host (a DNS name, sent as SNI, or an IP
 * address). Returns 0; -1 with t->why (and t->alert when the server sent
 * one) set, t then closed. t is initialised either way.
 */
int tls_client_open(tls_client *t, SSL_CTX *ctx, int port, const char *host, int timeout_ms);

/* The serial number of the server's certificate, or -1. */
long tls_client_serial(const tls_client *t);
/* The protocol ALPN selected ("" when none), written into out. */
const char *tls_client_alpn(const tls_client *t, char *out, size_t size);

/* Writes all of data within timeout_ms. 0 or -1. */
int tls_client_send(tls_client *t, const void *data, size_t len, int timeout_ms);
/*
 * Reads the next response into r (zeroed first; free it with hc_response_free)
 * within timeout_ms. 0, or -1 (r holds what came).
 */
int tls_client_read_response(tls_client *t, hc_response *r, int timeout_ms);
/* One exchange on t: the request as hc_format_request writes it, then its response. */
int tls_client_request(tls_client *t, int port, const char *method, const char *path,
                       const char *headers, const char *body, hc_response *r, int timeout_ms);

/* Closes the connection (without close_notify) and frees what t holds; safe twice. */
void tls_client_close(tls_client *t);

#endif
