/* SPDX-License-Identifier: MIT */
/*
 * Throwaway certificates made with the openssl command (see tls_certs.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "tls_certs.h"

#define OPENSSL_DEADLINE_MS 30000

const char *tls_certs_path(const tls_certs *tc, char *out, size_t size, const char *name)
{
    int n = snprintf(out, size, "%s/%s", tc->dir, name);
    assert_true(n > 0 && (size_t)n < size);
    return out;
}

void tls_certs_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Runs openssl with args (NULL-terminated), failing with its stderr unless it exits 0. */
static void openssl(const char *const *args)
{
    const char *argv[32] = {"openssl"};
    size_t n = 1;
    for (size_t i = 0; args[i] != NULL; i++) {
        assert_true(n < sizeof argv / sizeof argv[0] - 1);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    cr_run r;
    cr_run_program(&r, argv, OPENSSL_DEADLINE_MS);
    if (r.status == 127)
        fail_msg("cannot run openssl: install it (scripts/deps does)\n%s", r.err);
    if (r.status != 0)
        fail_msg("openssl %s exited with %d:\n%s", args[0], r.status, r.err);
    cr_run_free(&r);
}

void tls_certs_issue(const tls_certs *tc, const char *name, const char *subject, const char *serial,
                     const char *extensions)
{
    char key[128], csr[128], crt[128], ext[128], pem[128], ca_key[128], file[64];
    snprintf(file, sizeof file, "%s.key", name);
    tls_certs_path(tc, key, sizeof key, file);
    snprintf(file, sizeof file, "%s.csr", name);
    tls_certs_path(tc, csr, sizeof csr, file);
    snprintf(file, sizeof file, "%s.crt", name);
    tls_certs_path(tc, crt, sizeof crt, file);
    snprintf(file, sizeof file, "%s.ext", name);
    tls_certs_path(tc, ext, sizeof ext, file);
    snprintf(file, sizeof file, "%s.pem", name);
    tls_certs_path(tc, pem, sizeof pem, file);
    tls_certs_path(tc, ca_key, sizeof ca_key, "ca.key");

    const char *req[] = {"req",    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                         "-nodes", "-keyout", key,  "-out",     csr,
                         "-subj",  subject,   NULL};
    openssl(req);
    tls_certs_write_file(ext, extensions);
    const char *sign[] = {"x509",     "-req", "-in",         csr,    "-CA",   tc->ca,
                          "-CAkey",   ca_key, "-set_serial", serial, "-days", "1",
                          "-extfile", ext,    "-out",        crt,    NULL};
    openssl(sign);

    char *crt_text = cr_read_file(crt);
    char *key_text = cr_read_file(key);
    size_t len = strlen(crt_text) + strlen(key_text) + 1;
    char *both = malloc(len);
    assert_non_null(both);
    snprintf(both, len, "%s%s", crt_text, key_text);
    tls_certs_write_file(pem, both);
    free(both);
    free(crt_text);
    free(key_text);
}

void tls_certs_make_ca(tls_certs *tc, const char *dir_template)
{
    int n = snprintf(tc->dir, sizeof tc->dir, "%s", dir_template);
    assert_true(n > 0 && (size_t)n < sizeof tc->dir);
    if (mkdtemp(tc->dir) == NULL) {
        tc->dir[0] = '\0';
        fail_msg("mkdtemp %s failed", dir_template);
    }
    char ca_key[128];
    tls_certs_path(tc, tc->ca, sizeof tc->ca, "ca.pem");
    tls_certs_path(tc, ca_key, sizeof ca_key, "ca.key");
    const char *ca[] = {"req",
                        "-x509",
                        "-newkey",
                        "ec",
                        "-pkeyopt",
                        "ec_paramgen_curve:P-256",
                        "-nodes",
                        "-keyout",
                        ca_key,
                        "-out",
                        tc->ca,
                        "-days",
                        "1",
                        "-subj",
                        "/CN=libmcp test CA",
                        "-addext",
                        "basicConstraints=critical,CA:TRUE",
                        "-addext",
                        "keyUsage=critical,keyCertSign,cRLSign",
                        NULL};
    openssl(ca);
}

void tls_certs_remove(tls_certs *tc)
{
    if (tc->dir[0] == '\0')
        return;
    DIR *d = opendir(tc->dir);
    if (d != NULL) {
        struct dirent *e;
        char path[256];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if ((size_t)snprintf(path, sizeof path, "%s/%s", tc->dir, e->d_name) < sizeof path)
                unlink(path);
        }
        closedir(d);
    }
    rmdir(tc->dir);
    tc->dir[0] = '\0';
}
