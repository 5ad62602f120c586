/* SPDX-License-Identifier: MIT */
/*
 * The Streamable HTTP transport's flags, shared by the programs that serve over
 * HTTP (mcp-everything, mcp-gateway): one spelling, one help text and one set of
 * checks for every option of mcp_http_opts.
 */
#ifndef MCP_PROGRAMS_HTTP_FLAGS_H
#define MCP_PROGRAMS_HTTP_FLAGS_H

#include <getopt.h>
#include <stdio.h>

#include <mcp/mcp.h>

/* The codes of the HTTP flags in getopt_long's answers: a program's own flags stay
 * below HTTP_FLAG_FIRST. */
#define HTTP_FLAG_FIRST 1000

/* How many entries http_flags_add writes (without the terminating one). */
#define HTTP_FLAGS_COUNT 43

typedef struct http_flags {
    mcp_http_opts http; /* the options; lists point into argv */
    const char *origins[33], *hosts[33], *cors[33];
    int n_origins, n_hosts, n_cors;
    /* Authorization (--auth-*): the built-in JWT verifier. */
    mcp_auth_opts auth;
    mcp_jwt_opts jwt;
    const char *auth_servers[2], *scopes[17], *supported[17];
    int n_scopes, n_supported;
    int auth_refresh_set;
    mcp_method_scopes method_scopes[17]; /* --auth-method-scope, ended by {NULL} */
    char method_names[16][128];
    int n_method_scopes;
    mcp_introspection_opts introspection;
    const char *secret_file;
    char secret[1025];
} http_flags;

/* Reports a usage error: the program prints "<name>: <message>" and its hint. */
typedef void (*http_flags_usage_fn)(const char *fmt, ...) MCP_PRINTF(1, 2);

/* Appends the HTTP flags to a getopt_long table at out[0..HTTP_FLAGS_COUNT-1]. */
void http_flags_add(struct option *out);
/*
 * Applies getopt_long's answer `code` (an HTTP flag's: at least HTTP_FLAG_FIRST)
 * with its argument; `name` is the flag as given, for messages. 0 when applied,
 * 2 (a usage error, reported through usage) when the argument is wrong.
 */
int http_flags_apply(http_flags *f, int code, const char *arg, const char *name,
                     http_flags_usage_fn usage);
/* Reports what getopt_long (with opterr 0 and ':' leading its option string) refused:
 * c is its answer, ':' (a missing argument) or '?'. Returns 2 (a usage error). */
int http_flags_refused(int c, char **argv, http_flags_usage_fn usage);
/* getopt_long's answer c that is not a program's own: an HTTP flag is applied (its
 * argument arg, named `name` in messages), anything else reported as refused. 0 when
 * applied, 2 (a usage error) otherwise. */
int http_flags_other(http_flags *f, int c, const char *arg, const char *name, char **argv,
                     http_flags_usage_fn usage);
/* GET /healthz: 200, or 503 once the endpoint's stop is draining (so that a load
 * balancer sends new clients elsewhere). An mcp_http_route_fn. */
void http_flags_healthz(mcp_http_exchange *x, void *user);
/* Points f->http's lists at what the flags gathered; call after the last flag. 0, or
 * 2 (a usage error, reported) when the flags do not go together. */
int http_flags_finish(http_flags *f, http_flags_usage_fn usage);
/* The help text of the HTTP and resumability flags. */
void http_flags_help(FILE *out);

/* Parses a decimal integer in [min, max]; 0, or -1 for anything else. */
int http_flags_parse_int(const char *s, long min, long max, int *out);
/* Checks HOST:PORT (an IPv6 host in brackets, a port from 0 to 65535): 0 or -1. */
int http_flags_check_listen(const char *listen);
/* Reads a requestState key (--state-key-file): 32 bytes, or 64 hex digits and maybe a
 * newline. 0, or -1 (key zeroed) when the file holds neither. */
int http_flags_read_key(const char *path, unsigned char key[32]);
/* Raises the soft file-descriptor limit to the hard one: connections follow it. */
void http_flags_raise_fd_limit(void);

#endif
