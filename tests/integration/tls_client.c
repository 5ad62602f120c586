/* SPDX-License-Identifier: MIT */
/*
 * A TLS client on OpenSSL's client API for the HTTPS tests (see tls_client.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "harness.h"
#include "tls_client.h"

#define READ_CHUNK 16384

static void set_why(tls_client *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(tls_client *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

/* Records the alerts the server sends (SSL_CB_READ_ALERT: ret holds level and description). */
static void on_info(const SSL *ssl, int where, int ret)
{
    tls_client *t = SSL_get_app_data(ssl);
    if (t != NULL && (where & SSL_CB_READ_ALERT) != 0)
        t->alert = ret & 0xff;
}

SSL_CTX *tls_client_ctx(const char *ca_file, int min_version, int max_version, int security_level,
                        const char *alpn)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL)
        return NULL;
    if (security_level >= 0)
        SSL_CTX_set_security_level(ctx, security_level);
    unsigned char wire[256];
    size_t wire_len = 0;
    for (const char *p = alpn; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (n == 0 || n > 255 || wire_len + 1 + n > sizeof wire)
            goto fail;
        wire[wire_len++] = (unsigned char)n;
        memcpy(wire + wire_len, p, n);
        wire_len += n;
        p = comma != NULL ? comma + 1 : p + n;
    }
    /* SSL_CTX_set_alpn_protos returns 0 on success, unlike the others. */
    if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, max_version) != 1 ||
        SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1 ||
        (wire_len > 0 && SSL_CTX_set_alpn_protos(ctx, wire, (unsigned)wire_len) != 0))
        goto fail;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* A body that ends with the connection may end without close_notify. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_info_callback(ctx, on_info);
    return ctx;
fail:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

int tls_client_tcp_connect(int port, int timeout_ms)
{
    hc_conn c;
    if (hc_connect(&c, port, timeout_ms) != 0)
        return -1;
    int fd = c.fd;
    c.fd = -1; /* the socket is ours now; the rest of c goes */
    hc_close(&c);
    return fd;
}

/*
 * After an OpenSSL call returned ret: waits (to the deadline) for the socket
 * to be ready for what OpenSSL wants. 0 to call again; -1 when it failed
 * otherwise, or time ran out (t->why says which).
 */
static int await_ssl(tls_client *t, int ret, const char *what, long long deadline)
{
    int e = SSL_get_error(t->ssl, ret);
    short events = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0) {
        unsigned long code = ERR_peek_last_error();
        char reason[200] = "";
        if (code != 0)
            ERR_error_string_n(code, reason, sizeof reason);
        set_why(t, "%s: %s", what,
                e == SSL_ERROR_ZERO_RETURN ? "closed (close_notify)"
                : code != 0                ? reason
                : e == SSL_ERROR_SYSCALL   ? "the connection ended"
                                           : "failed");
        ERR_clear_error();
        return -1;
    }
    struct pollfd p = {.fd = t->fd, .events = events};
    int k;
    while ((k = poll(&p, 1, harness_left_ms(deadline))) < 0 && errno == EINTR)
        ;
    if (k <= 0) {
        set_why(t, "%s: no progress before the deadline", what);
        return -1;
    }
    return 0;
}

static int is_ip(const char *host)
{
    return host[0] != '\0' && strspn(host, "0123456789.:") == strlen(host);
}

int tls_client_open(tls_client *t, SSL_CTX *ctx, int port, const char *host, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    memset(t, 0, sizeof *t);
    t->alert = -1;
    t->fd = tls_client_tcp_connect(port, timeout_ms);
    if (t->fd < 0) {
        set_why(t, "cannot connect to 127.0.0.1:%d", port);
        return -1;
    }
    t->ssl = SSL_new(ctx);
    if (t->ssl == NULL || SSL_set_fd(t->ssl, t->fd) != 1) {
        set_why(t, "SSL_new or SSL_set_fd failed");
        tls_client_close(t);
        return -1;
    }
    SSL_set_app_data(t->ssl, t);
    int ok = is_ip(host)
                 ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host)
                 : SSL_set_tlsext_host_name(t->ssl, host) == 1 && SSL_set1_host(t->ssl, host) == 1;
    if (!ok) {
        set_why(t, "cannot set the host name %s", host);
        tls_client_close(t);
        return -1;
    }
    for (;;) {
        ERR_clear_error();
        int r = SSL_connect(t->ssl);
        if (r == 1)
            break;
        if (await_ssl(t, r, "handshake", deadline) != 0) {
            long v = SSL_get_verify_result(t->ssl);
            if (v != X509_V_OK) {
                size_t n = strlen(t->why);
                snprintf(t->why + n, sizeof t->why - n, " (verification: %s)",
                         X509_verify_cert_error_string(v));
            }
            int fd = t->fd;
            t->fd = -1; /* keep t->why and t->alert: free the rest */
            SSL_free(t->ssl);
            t->ssl = NULL;
            close(fd);
            return -1;
        }
    }
    return 0;
}

long tls_client_serial(const tls_client *t)
{
    X509 *cert = t->ssl != NULL ? SSL_get1_peer_certificate(t->ssl) : NULL;
    if (cert == NULL)
        return -1;
    long serial = ASN1_INTEGER_get(X509_get0_serialNumber(cert));
    X509_free(cert);
    return serial;
}

const char *tls_client_alpn(const tls_client *t, char *out, size_t size)
{
    const unsigned char *p = NULL;
    unsigned n = 0;
    if (t->ssl != NULL)
        SSL_get0_alpn_selected(t->ssl, &p, &n);
    snprintf(out, size, "%.*s", (int)n, p != NULL ? (const char *)p : "");
    return out;
}

int tls_client_send(tls_client *t, const void *data, size_t len, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    const char *p = data;
    while (len > 0) {
        if (t->ssl == NULL) {
            set_why(t, "send: closed");
            return -1;
        }
        ERR_clear_error();
        int r = SSL_write(t->ssl, p, len > 0x40000000 ? 0x40000000 : (int)len);
        if (r > 0) {
            p += r;
            len -= (size_t)r;
        } else if (await_ssl(t, r, "send", deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Reads what the server sends next into t->in. 1 when bytes came, 0 at its end,
 * -1 on an error or at the deadline. */
static int fill(tls_client *t, long long deadline)
{
    if (t->eof)
        return 0;
    if (harness_reserve(&t->in, &t->in_cap, t->in_len, READ_CHUNK) != 0) {
        set_why(t, "out of memory");
        return -1;
    }
    for (;;) {
        ERR_clear_error();
        int r = SSL_read(t->ssl, t->in + t->in_len, READ_CHUNK);
        if (r > 0) {
            t->in_len += (size_t)r;
            t->in[t->in_len] = '\0';
            return 1;
        }
        int e = SSL_get_error(t->ssl, r);
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
            ERR_clear_error();
            t->eof = 1;
            return 0;
        }
        if (await_ssl(t, r, "read", deadline) != 0)
            return -1;
    }
}

/* Drops the first n bytes of t->in. */
static void consume(tls_client *t, size_t n)
{
    memmove(t->in, t->in + n, t->in_len - n);
    t->in_len -= n;
    t->in[t->in_len] = '\0';
}

/* Waits until t->in holds at least n bytes. 0, or -1 (the end came first, or an error). */
static int need(tls_client *t, size_t n, long long deadline)
{
    while (t->in_len < n) {
        if (fill(t, deadline) <= 0) {
            if (t->eof)
                set_why(t, "the connection ended after %zu of %zu bytes", t->in_len, n);
            return -1;
        }
    }
    return 0;
}

/* Waits for a line of t->in ending in CRLF; its length without it, or -1. */
static long need_line(tls_client *t, long long deadline)
{
    for (;;) {
        char *end = t->in != NULL ? memmem(t->in, t->in_len, "\r\n", 2) : NULL;
        if (end != NULL)
            return end - t->in;
        if (fill(t, deadline) <= 0) {
            if (t->eof)
                set_why(t, "the connection ended inside a line");
            return -1;
        }
    }
}

static int append_body(hc_response *r, const char *data, size_t n)
{
    char *b = realloc(r->body, r->body_len + n + 1);
    if (b == NULL)
        return -1;
    memcpy(b + r->body_len, data, n);
    r->body = b;
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return 0;
}

/* Parses the head at the start of t->in (head_len bytes, the blank line included)
 * into r, and consumes it. */
static int parse_head(tls_client *t, hc_response *r, size_t head_len)
{
    const char *p = t->in, *end = t->in + head_len - 2;
    const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
    char reason[128] = "";
    char status[256];
    snprintf(status, sizeof status, "%.*s", (int)(eol - p), p);
    if (sscanf(status, "HTTP/1.%*d %d %127[^\r\n]", &r->status, reason) < 1) {
        set_why(t, "not an HTTP/1.x status line: %.60s", status);
        return -1;
    }
    r->reason = strdup(reason);
    for (p = eol + 2; p < end; p = eol + 2) {
        eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (colon == NULL)
            continue;
        hc_header *h = realloc(r->headers, (r->n_headers + 1) * sizeof *h);
        if (h == NULL)
            return -1;
        r->headers = h;
        const char *value = colon + 1;
        while (value < eol && (*value == ' ' || *value == '\t'))
            value++;
        h[r->n_headers].name = strndup(p, (size_t)(colon - p));
        h[r->n_headers].value = strndup(value, (size_t)(eol - value));
        r->n_headers++;
    }
    consume(t, head_len);
    return 0;
}

/* The chunked body of r, decoded (RFC 9112 §7.1; trailers are read and dropped). */
static int read_chunked(tls_client *t, hc_response *r, long long deadline)
{
    for (;;) {
        long n = need_line(t, deadline);
        if (n < 0)
            return -1;
        char *end;
        unsigned long size = strtoul(t->in, &end, 16);
        if (end == t->in) {
            set_why(t, "bad chunk size line");
            return -1;
        }
        consume(t, (size_t)n + 2);
        if (size == 0) {
            while ((n = need_line(t, deadline)) > 0)
                consume(t, (size_t)n + 2);
            if (n < 0)
                return -1;
            consume(t, 2);
            return 0;
        }
        if (need(t, size + 2, deadline) != 0 || append_body(r, t->in, size) != 0)
            return -1;
        consume(t, size + 2);
    }
}

int tls_client_read_response(tls_client *t, hc_response *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    memset(r, 0, sizeof *r);
    char *blank;
    while ((blank = t->in != NULL ? memmem(t->in, t->in_len, "\r\n\r\n", 4) : NULL) == NULL) {
        if (fill(t, deadline) <= 0) {
            if (t->eof)
                set_why(t, "the connection ended before a response head (%zu bytes)", t->in_len);
            return -1;
        }
    }
    if (parse_head(t, r, (size_t)(blank - t->in) + 4) != 0 || append_body(r, "", 0) != 0)
        return -1;
    const char *te = hc_header_get(r, "transfer-encoding");
    const char *cl = hc_header_get(r, "content-length");
    if (te != NULL && strcasecmp(te, "chunked") == 0)
        return read_chunked(t, r, deadline);
    if (cl != NULL) {
        size_t n = strtoul(cl, NULL, 10);
        if (need(t, n, deadline) != 0 || append_body(r, t->in, n) != 0)
            return -1;
        consume(t, n);
        return 0;
    }
    if (r->status == 204 || r->status == 304)
        return 0;
    /* Neither: the body ends with the connection. */
    for (;;) {
        int k = fill(t, deadline);
        if (k < 0)
            return -1;
        if (append_body(r, t->in, t->in_len) != 0)
            return -1;
        consume(t, t->in_len);
        if (k == 0)
            return 0;
    }
}

int tls_client_request(tls_client *t, int port, const char *method, const char *path,
                       const char *headers, const char *body, hc_response *r, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    size_t len;
    char *req = hc_format_request(port, method, path, headers, body, body ? strlen(body) : 0, &len);
    memset(r, 0, sizeof *r);
    if (req == NULL) {
        set_why(t, "out of memory");
        return -1;
    }
    int rc = tls_client_send(t, req, len, timeout_ms);
    free(req);
    if (rc != 0)
        return -1;
    return tls_client_read_response(t, r, harness_left_ms(deadline));
}

void tls_client_close(tls_client *t)
{
    if (t->ssl != NULL)
        SSL_free(t->ssl);
    t->ssl = NULL;
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    free(t->in);
    t->in = NULL;
    t->in_len = t->in_cap = 0;
}
