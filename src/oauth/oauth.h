/* SPDX-License-Identifier: MIT */
/*
 * The OAuth client (see <mcp/oauth.h>) as the HTTP client transport sees it: a
 * provider attached to a loop and a server URL gives the header lines of each
 * request and, when the server refuses one, gets a new token while the request
 * waits. Loop thread, unless said otherwise.
 */
#ifndef MCP_OAUTH_OAUTH_H
#define MCP_OAUTH_OAUTH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "util/util.h"
#include <mcp/oauth.h>

/* One request waiting for the provider: embedded in the caller's struct. done never
 * runs inside a call of this interface: always later, from the loop. */
typedef struct mcp__oauth_waiter {
    /* rc MCP_OK: send the request again (with mcp__oauth_headers); else it fails
     * with rc and why (a sentence, safe to show). */
    void (*done)(struct mcp__oauth_waiter *w, int rc, const char *why);
    int step_ups, reauths, nonce_retries; /* what this request has cost so far */
    int waiting;
    struct mcp__oauth_waiter **list; /* the list it is on, while waiting */
    struct mcp__oauth_waiter *prev, *next;
} mcp__oauth_waiter;

/* The challenge a refused request met. */
typedef struct mcp__oauth_refusal {
    long status;            /* 401 or 403 */
    const char *www_auth;   /* its WWW-Authenticate values joined by ", ", or NULL */
    const char *dpop_nonce; /* its DPoP-Nonce, or NULL */
    uint64_t generation;    /* mcp__oauth_generation() when the request was sent */
} mcp__oauth_refusal;

/* Takes a hold on o for a connection to server_url on loop (one connection at a
 * time). cacert: the connection's CA file (may be NULL), used for the authorization
 * server too when the provider was given none. MCP_OK, MCP_ESTATE (attached
 * already), MCP_ENOMEM, MCP_EIO. */
int mcp__oauth_attach(mcp_oauth *o, uv_loop_t *loop, const char *server_url, const char *cacert);
/* Ends the connection's use of o: waiters are dropped (none is called), HTTP
 * exchanges cancelled, and the hold released. */
void mcp__oauth_detach(mcp_oauth *o);
void mcp__oauth_ref(mcp_oauth *o);

/*
 * The lines to send with a request (method, url): "Authorization: Bearer …" (or
 * "DPoP …") and, with DPoP, "DPoP: <proof>"; malloc'd into lines[0..1] (NULL
 * when none). *generation: the token's generation, for a refusal. MCP_OK or
 * MCP_ENOMEM.
 */
int mcp__oauth_headers(mcp_oauth *o, const char *method, const char *url, char *lines[2],
                       uint64_t *generation);
/* 1 when a request should wait before it is sent: no usable token but one can be
 * had without the server's challenge (a stored refresh token, an expiring token).
 * The waiter is then queued (done runs later). */
int mcp__oauth_wait_before(mcp_oauth *o, mcp__oauth_waiter *w);
/* What a refused request does next. */
enum {
    MCP__OAUTH_FINAL, /* nothing: not a refusal the provider answers (a 403 for another reason) */
    MCP__OAUTH_RETRY, /* send it again now (a newer token, or the server's DPoP nonce) */
    MCP__OAUTH_WAIT,  /* w is queued: done runs when a token came, or none can */
    MCP__OAUTH_FAIL   /* a limit was reached: fail it with *why (malloc'd) */
};
/* A request was refused (401, or 403 insufficient_scope): one of the above. */
int mcp__oauth_refused(mcp_oauth *o, const mcp__oauth_refusal *r, mcp__oauth_waiter *w, char **why);
/* The MCP server sent a DPoP-Nonce (with any answer): the next proofs carry it. */
void mcp__oauth_server_nonce(mcp_oauth *o, const char *nonce);
/* Takes w out of the queue (its request ended); done is not called. */
void mcp__oauth_unwait(mcp_oauth *o, mcp__oauth_waiter *w);

/* ---- Pieces (jose.c, form.c): exposed for the tests ---- */

/* A signing key: ES256 (P-256) or RS256. */
typedef struct mcp__jkey mcp__jkey;
/* From PEM (alg NULL: by the key's type). MCP_OK, MCP_EINVAL, MCP_ENOMEM. */
int mcp__jkey_from_pem(const char *pem, const char *alg, mcp__jkey **out);
/* A new P-256 key (DPoP). */
int mcp__jkey_new_es256(mcp__jkey **out);
/* The private key as PEM (PKCS#8), malloc'd, for the store; NULL on ENOMEM. */
char *mcp__jkey_pem(const mcp__jkey *k);
void mcp__jkey_free(mcp__jkey *k);
/* The public JWK (kty, crv, x, y / n, e), a new object. */
json_t *mcp__jkey_public_jwk(const mcp__jkey *k);
/* A compact JWS of claims with header (alg added), malloc'd; NULL on failure. */
char *mcp__jws_sign(const mcp__jkey *k, json_t *header, const json_t *claims);

/* base64url(SHA-256(s)), malloc'd. */
char *mcp__sha256_b64url(const char *s, size_t len);
/* n random bytes as base64url, malloc'd. */
char *mcp__random_b64url(size_t n);

/* application/x-www-form-urlencoded: appends "&name=value" (no '&' first). */
int mcp__form_add(mcp__buf *b, const char *name, const char *value);
/* The value of name in a query or form string (decoded, malloc'd), or NULL. *dup
 * set when name occurs more than once. */
char *mcp__form_get(const char *query, const char *name, int *dup);
/* Splits an absolute http(s) URL: origin "scheme://host[:port]" (lower-cased
 * scheme and host, default port dropped) and path (no query, no fragment; "" for
 * "/"), both malloc'd. MCP_OK or MCP_EINVAL. */
int mcp__url_split(const char *url, char **origin, char **path);
/* Reads the parameters of a Bearer or DPoP challenge among WWW-Authenticate
 * values: resource_metadata, scope, error, error_description (malloc'd, NULL
 * when absent). */
typedef struct mcp__challenge {
    char *scheme, *resource_metadata, *scope, *error, *error_description;
} mcp__challenge;
void mcp__challenge_parse(const char *www_auth, mcp__challenge *c);
void mcp__challenge_free(mcp__challenge *c);
/* The union of two space-separated scope lists, in order, each once (either may be
 * NULL); malloc'd, NULL on ENOMEM. */
char *mcp__oauth_scope_union(const char *a, const char *b);
/* A copy of text fit for a message: control characters and non-ASCII as '?',
 * at most max bytes. malloc'd. */
char *mcp__oauth_printable(const char *text, size_t max);

#endif
