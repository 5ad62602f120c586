/* SPDX-License-Identifier: MIT */
/*
 * Throwaway certificates for the HTTPS tests, made at test time with the
 * openssl command in a temporary directory and removed at the end; no key is
 * ever committed. A CA (ca.pem, ca.key) signs what the tests need: a server
 * certificate for localhost and 127.0.0.1, a client certificate.
 *
 * openssl is a dependency of the tests (scripts/deps installs it): when it is
 * missing, the test fails; it never skips. Failures are cmocka failures.
 */
#ifndef MCP_TESTS_INTEGRATION_TLS_CERTS_H
#define MCP_TESTS_INTEGRATION_TLS_CERTS_H

#include <stddef.h>

/* The extensions of a server certificate for localhost and 127.0.0.1. */
#define TLS_CERTS_SERVER_EXT                                                                       \
    "basicConstraints=CA:FALSE\n"                                                                  \
    "keyUsage=critical,digitalSignature\n"                                                         \
    "extendedKeyUsage=serverAuth\n"                                                                \
    "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
/* The extensions of a client certificate. */
#define TLS_CERTS_CLIENT_EXT                                                                       \
    "basicConstraints=CA:FALSE\n"                                                                  \
    "keyUsage=critical,digitalSignature\n"                                                         \
    "extendedKeyUsage=clientAuth\n"

typedef struct tls_certs {
    char dir[64]; /* the temporary directory; "" before it is made and once removed */
    char ca[128]; /* dir/ca.pem, the CA's certificate */
} tls_certs;

/*
 * Makes a temporary directory from dir_template (a mkdtemp() template such as
 * "/tmp/mcp-https-XXXXXX") and a throwaway CA in it: ca.pem and ca.key.
 */
void tls_certs_make_ca(tls_certs *tc, const char *dir_template);

/*
 * NAME.key and NAME.crt: a new P-256 key and its certificate for subject,
 * signed by the CA with the serial and extensions (openssl's extfile lines)
 * given; NAME.pem holds both.
 */
void tls_certs_issue(const tls_certs *tc, const char *name, const char *subject, const char *serial,
                     const char *extensions);

/* Writes tc->dir/name into out (size bytes) and returns out. */
const char *tls_certs_path(const tls_certs *tc, char *out, size_t size, const char *name);

/* Writes text into the file at path, replacing what it held. */
void tls_certs_write_file(const char *path, const char *text);

/* Removes every file of the directory, then the directory; safe to call again. */
void tls_certs_remove(tls_certs *tc);

#endif
