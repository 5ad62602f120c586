/* SPDX-License-Identifier: MIT */
/*
 * HTTPS: TLS on the server's connections, with OpenSSL driven from the loop
 * through memory BIOs. What the socket delivers is written into the
 * connection's read BIO and decrypted with SSL_read into plaintext, which goes
 * to the same parser a plain connection feeds (mcp__http_conn_input); what the
 * layer writes is encrypted with SSL_write and the records taken from the
 * write BIO go to the socket as a plain connection's bytes would
 * (mcp__http_conn_send_raw), with the same backlog and drain accounting.
 *
 * A connection in its handshake counts against the server's handshake bound:
 * past it, the oldest handshake in progress is dropped for the new one, so
 * clients that open handshakes and never finish them cannot keep the others
 * out; each one also has a deadline (tls_handshake_timeout_ms).
 */
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "http/http_int.h"

/* TLS 1.2's suites, Mozilla's "intermediate" list: forward secrecy and AEAD
 * only. TLS 1.3's are OpenSSL's defaults (all AEAD). */
#define TLS12_CIPHERS                                                                              \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                                   \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/* The reason of OpenSSL's first error (and the queue emptied): a system error's
 * (a file that cannot be opened) in the system's words. */
static const char *tls_reason(void)
{
    unsigned long e = ERR_get_error();
    const char *r = NULL;
    if (e != 0 && ERR_SYSTEM_ERROR(e))
        r = strerror(ERR_GET_REASON(e));
    else if (e != 0)
        r = ERR_reason_error_string(e);
    ERR_clear_error();
    return r != NULL ? r : "unknown error";
}

/* RFC 7301 §3.2: a client that offers protocols, none of them ours, gets a fatal
 * no_application_protocol alert; one that offers none goes on without ALPN. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    static const unsigned char ours[] = "\x08http/1.1";
    unsigned char *sel = NULL;
    if (SSL_select_next_proto(&sel, outlen, ours, sizeof ours - 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

int mcp__tls_ctx_load(const char *cert_file, const char *key_file, struct ssl_ctx_st **out)
{
    *out = NULL;
    if (cert_file == NULL || key_file == NULL || !cert_file[0] || !key_file[0])
        return MCP_EINVAL;
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        mcp__error("tls: %s", tls_reason());
        return MCP_ENOMEM;
    }
    const char *what = NULL, *file = NULL;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1)
        what = "cannot configure the protocol versions and ciphers";
    else if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1)
        what = "cannot load the certificate chain (PEM)", file = cert_file;
    else if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1)
        what = "cannot load the private key (PEM, unencrypted)", file = key_file;
    else if (SSL_CTX_check_private_key(ctx) != 1)
        what = "the private key does not match the certificate", file = key_file;
    if (what != NULL) {
        mcp__error("tls: %s%s%s: %s", file ? file : "", file ? ": " : "", what, tls_reason());
        SSL_CTX_free(ctx);
        return MCP_EIO;
    }
    /* No renegotiation (a client could make us sign at will), no compression
     * (CRIME); idle connections give their buffers back. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    /* Resumption: TLS 1.3 tickets carry the session; the TLS 1.2 cache is bounded. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, 4096);
    *out = ctx;
    return MCP_OK;
}

void mcp__tls_ctx_free(struct ssl_ctx_st *ctx)
{
    SSL_CTX_free(ctx); /* reference-counted: connections still using it keep it */
}

void mcp__http_server_set_tls(mcp__http_server *srv, struct ssl_ctx_st *ctx)
{
    if (ctx != NULL)
        SSL_CTX_up_ref(ctx);
    SSL_CTX_free(srv->tls);
    srv->tls = ctx;
}

size_t mcp__http_server_handshakes(const mcp__http_server *srv, uint64_t *dropped)
{
    if (dropped != NULL)
        *dropped = srv->handshakes_dropped;
    return srv->nhandshakes;
}

/* An empty memory BIO that grew past this is replaced by a new one: a memory BIO keeps
 * the capacity it once needed, and an idle connection must not hold a large request's
 * or response's worth for its life. */
#define BIO_KEEP 4096

static BIO *fresh_if_grown(BIO *b)
{
    BUF_MEM *bm = NULL;
    if (BIO_ctrl_pending(b) > 0 || BIO_get_mem_ptr(b, &bm) != 1 || bm == NULL ||
        bm->max <= BIO_KEEP)
        return NULL;
    BIO *fresh = BIO_new(BIO_s_mem());
    if (fresh != NULL)
        BIO_set_mem_eof_return(fresh, -1);
    return fresh;
}

/* Gives back what c's BIOs grew to, once they are empty. */
static void trim_bios(mcp__http_conn *c)
{
    BIO *b = fresh_if_grown(SSL_get_rbio(c->ssl));
    if (b != NULL)
        SSL_set0_rbio(c->ssl, b); /* frees the old one */
    b = fresh_if_grown(SSL_get_wbio(c->ssl));
    if (b != NULL)
        SSL_set0_wbio(c->ssl, b);
}

/* Sends the records OpenSSL wrote into c's write BIO. */
static int tls_send(mcp__http_conn *c)
{
    char *p = NULL;
    long n = BIO_get_mem_data(SSL_get_wbio(c->ssl), &p);
    if (n <= 0)
        return MCP_OK;
    uv_buf_t b = uv_buf_init(p, (unsigned)n);
    int rc = mcp__http_conn_send_raw(c, &b, 1);
    (void)BIO_reset(SSL_get_wbio(c->ssl));
    return rc;
}

static void handshake_over(mcp__http_conn *c)
{
    if (!c->handshaking)
        return;
    c->handshaking = 0;
    c->srv->nhandshakes--;
    if (c->source != NULL)
        c->source->handshakes--;
}

/* Past the bound, a handshake gives way: one of the source address that has the most
 * handshakes in progress (a crowd from one place pushes out its own first, not a slow
 * client elsewhere, however many finished connections that client holds), the one
 * that has waited longest among those. */
static void bound_handshakes(mcp__http_server *srv, mcp__http_conn *fresh)
{
    while (srv->nhandshakes > srv->opts.max_handshakes) {
        mcp__http_conn *victim = NULL;
        size_t most = 0;
        /* Newest first in the list: ">=" ends on the oldest of the most. */
        for (mcp__http_conn *c = srv->conns; c != NULL; c = c->next) {
            if (c == fresh || !c->handshaking || c->closing)
                continue;
            size_t n = c->source != NULL ? c->source->handshakes : 0;
            if (victim == NULL || n >= most) {
                victim = c;
                most = n;
            }
        }
        if (victim == NULL)
            return;
        srv->handshakes_dropped++;
        mcp__http_conn_close(victim);
    }
}

int mcp__tls_conn_start(mcp__http_conn *c)
{
    mcp__http_server *srv = c->srv;
    SSL *ssl = SSL_new(srv->tls);
    BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
    if (ssl == NULL || rb == NULL || wb == NULL) {
        SSL_free(ssl);
        BIO_free(rb);
        BIO_free(wb);
        ERR_clear_error();
        return MCP_ENOMEM;
    }
    /* An empty read BIO means "wait for more", not the end of the stream. */
    BIO_set_mem_eof_return(rb, -1);
    BIO_set_mem_eof_return(wb, -1);
    SSL_set_bio(ssl, rb, wb);
    SSL_set_accept_state(ssl);
    c->ssl = ssl;
    c->handshaking = 1;
    srv->nhandshakes++;
    if (c->source != NULL)
        c->source->handshakes++;
    bound_handshakes(srv, c);
    return MCP_OK;
}

/* A TLS error ends the connection: the alert OpenSSL wrote, if any, goes first. */
static void tls_fail(mcp__http_conn *c, const char *when)
{
    unsigned long e = ERR_peek_error();
    const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;
    mcp__debug("tls: %s: %s: %s", c->source != NULL ? c->source->addr : "a client", when,
               r != NULL ? r : "connection ended");
    ERR_clear_error();
    (void)tls_send(c);
    mcp__http_conn_close(c);
}

/* Bytes of the socket given to OpenSSL at once: about a record's, so that the read
 * BIO never grows to a whole socket read. */
#define TLS_FEED (MCP__HTTP_TLS_BUF + 512)

static void tls_feed(mcp__http_conn *c, const char *data, size_t len);

void mcp__tls_conn_input(mcp__http_conn *c, const char *data, size_t len)
{
    for (size_t off = 0; off < len && !c->closing; off += TLS_FEED)
        tls_feed(c, data + off, len - off < TLS_FEED ? len - off : TLS_FEED);
    if (!c->closing)
        trim_bios(c);
}

static void tls_feed(mcp__http_conn *c, const char *data, size_t len)
{
    if (BIO_write(SSL_get_rbio(c->ssl), data, (int)len) != (int)len) {
        mcp__http_conn_close(c);
        return;
    }
    /* SSL_get_error reads the thread's error queue: nothing left there by another
     * user of OpenSSL on this thread may turn "wait for more" into a failure. */
    ERR_clear_error();
    if (c->handshaking) {
        int r = SSL_do_handshake(c->ssl);
        if (r != 1) {
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ) {
                (void)tls_send(c);
                return;
            }
            tls_fail(c, "handshake");
            return;
        }
        handshake_over(c);
        if (tls_send(c) != MCP_OK || c->closing)
            return;
        /* The handshake is done: the first request's header deadline starts now. */
        mcp__http_conn_timer_set(c, c->srv->opts.header_timeout_ms);
    }
    char *buf = c->srv->tlsbuf;
    while (!c->closing) {
        int n = SSL_read(c->ssl, buf, MCP__HTTP_TLS_BUF);
        if (n > 0) {
            mcp__http_conn_input(c, buf, (size_t)n);
            continue;
        }
        int e = SSL_get_error(c->ssl, n);
        if (e == SSL_ERROR_WANT_READ)
            break;
        if (e == SSL_ERROR_ZERO_RETURN) {
            /* close_notify: the client is done, as with a TCP end of stream; what was
             * answered already (a request in the same read) goes out first. */
            mcp__http_conn_flush(c);
            if (!c->closing)
                mcp__http_conn_close(c);
            return;
        }
        tls_fail(c, "read");
        return;
    }
    /* Whatever reading made OpenSSL say (a TLS 1.3 KeyUpdate's answer). */
    if (!c->closing)
        (void)tls_send(c);
}

int mcp__tls_conn_send(mcp__http_conn *c, const uv_buf_t *bufs, unsigned n)
{
    if (c->handshaking)
        return MCP_ECLOSED; /* nothing of ours is due before the handshake is done */
    /* One record at a time, each sent (or queued) before the next is made: the write
     * BIO keeps the capacity it grew to for the connection's life, so it must never
     * hold a whole large response. */
    for (unsigned i = 0; i < n; i++) {
        for (size_t off = 0; off < bufs[i].len;) {
            size_t len = bufs[i].len - off;
            if (len > MCP__HTTP_TLS_BUF)
                len = MCP__HTTP_TLS_BUF;
            /* A memory BIO takes everything: SSL_write is all or an error. */
            if (SSL_write(c->ssl, bufs[i].base + off, (int)len) != (int)len) {
                ERR_clear_error();
                mcp__http_conn_break(c);
                return MCP_ECLOSED;
            }
            off += len;
            int rc = tls_send(c);
            if (rc != MCP_OK)
                return rc;
        }
    }
    trim_bios(c);
    return MCP_OK;
}

void mcp__tls_conn_shutdown(mcp__http_conn *c)
{
    if (c->ssl == NULL || c->handshaking)
        return;
    /* close_notify, so that the client can tell our end from a cut. */
    (void)SSL_shutdown(c->ssl);
    ERR_clear_error();
    (void)tls_send(c);
}

void mcp__tls_conn_closed(mcp__http_conn *c)
{
    handshake_over(c);
}

void mcp__tls_conn_free(mcp__http_conn *c)
{
    SSL_free(c->ssl); /* and its BIOs */
    c->ssl = NULL;
}
