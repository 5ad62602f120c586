/* SPDX-License-Identifier: MIT */
/*
 * The resource server's side of OAuth 2.1 (see <mcp/auth.h>): reading a
 * request's credentials, the challenges of RFC 6750, the Protected Resource
 * Metadata document of RFC 9728, principals, the cache of verified tokens, and
 * the gate that puts them together in front of the MCP endpoint. Loop thread,
 * unless said otherwise.
 */
#ifndef MCP_AUTH_AUTH_H
#define MCP_AUTH_AUTH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "util/util.h"
#include <mcp/auth.h>

/* ---- Credentials (bearer.c) ---- */

enum mcp__bearer_kind {
    MCP__BEARER_NONE,      /* no Authorization header, or another scheme than Bearer */
    MCP__BEARER_TOKEN,     /* a token of valid syntax: *token, *len */
    MCP__BEARER_MALFORMED, /* "Bearer" with no token, or characters a b64token has not */
    MCP__BEARER_TOO_LONG   /* a token longer than max */
};

/*
 * Reads one Authorization header value (RFC 6750 §2.1: "Bearer" 1*SP b64token, the
 * scheme in any case). On MCP__BEARER_TOKEN, *token points into value and *len is
 * its length.
 */
enum mcp__bearer_kind mcp__bearer_parse(const char *value, size_t max, const char **token,
                                        size_t *len);

/* 1 when the query string carries an access_token parameter (RFC 6750 §2.3), which
 * MCP forbids. query may be NULL. */
int mcp__bearer_in_query(const char *query);

/*
 * A WWW-Authenticate value for the Bearer scheme (RFC 6750 §3): `Bearer` and, for
 * each argument that is not NULL, in this order, error, error_description, scope
 * and resource_metadata as quoted strings (error_description with the characters
 * RFC 6750 does not allow there replaced by spaces; '"' and '\' escaped in the
 * others). For insufficient_scope the order is error, scope, resource_metadata,
 * error_description, as in MCP's example. malloc'd; NULL on ENOMEM.
 */
char *mcp__bearer_challenge(const char *error, const char *description, const char *scope,
                            const char *resource_metadata);

/* 1 when s is a valid scope-token (RFC 6749 §3.3: %x21 / %x23-5B / %x5D-7E), else 0. */
int mcp__scope_token_valid(const char *s);
/* 1 when s is scope-tokens separated by spaces, at least one, else 0. */
int mcp__scope_list_valid(const char *s);

/* ---- Principals (principal.c) ---- */

/* A principal from claims (stolen, also on failure): NULL when claims is not an
 * object or on ENOMEM. Its count starts at 1. */
mcp_principal *mcp__principal_new(json_t *claims);
mcp_principal *mcp__principal_ref(mcp_principal *p);
void mcp__principal_unref(mcp_principal *p);
/* The audiences ("aud", a string or an array of strings), NULL-terminated. */
const char *const *mcp__principal_audiences(const mcp_principal *p);
/* 1 when p lacks one of the space-separated scopes, else 0. */
int mcp__principal_lacks(const mcp_principal *p, const char *scopes);
/* Who owns what p opens (a session, a sealed request state): the hex SHA-256 of its
 * issuer and subject (the client id when there is no subject), into out (65 bytes).
 * MCP_OK or MCP_EIO. */
int mcp__principal_owner(const mcp_principal *p, char out[65]);
/* "nbf" in seconds since the epoch, 0 when none. */
int64_t mcp__principal_not_before(const mcp_principal *p);
/*
 * Checks what a resource server must of a token's claims, at now_s (seconds since
 * the epoch): audience (resource among aud, or no aud when allow_no_audience), exp
 * and nbf with skew_s of tolerance, iss when issuer is not NULL, and that scopes and
 * audiences have the right types. NULL when they hold, else a short reason for
 * error_description (static).
 */
const char *mcp__principal_check(const mcp_principal *p, const char *resource,
                                 int allow_no_audience, const char *issuer, int64_t now_s,
                                 int skew_s);

/* ---- The cache of verified tokens (cache.c) ---- */

/*
 * Keyed by SHA-256 of the token, so that no token is kept; bounded in count (the
 * least recently used goes first) and never past an entry's deadline.
 */
typedef struct mcp__token_cache {
    mcp__map map;                            /* hex digest -> entry */
    struct mcp__token_entry *lru, *lru_tail; /* most recently used first */
    size_t len, max;
} mcp__token_cache;

void mcp__token_cache_init(mcp__token_cache *c, size_t max);
void mcp__token_cache_free(mcp__token_cache *c);
/* The principal cached for the token whose digest is key (64 hex characters), alive
 * at now_ms (wall clock), or NULL; *deadline_ms (when not NULL) gets when it stops
 * being. Borrowed: take a reference to keep it. */
mcp_principal *mcp__token_cache_get(mcp__token_cache *c, const char *key, uint64_t now_ms,
                                    uint64_t *deadline_ms);
/* Keeps p (a new reference is taken) under key until deadline_ms (wall clock).
 * MCP_OK or MCP_ENOMEM. */
int mcp__token_cache_put(mcp__token_cache *c, const char *key, mcp_principal *p,
                         uint64_t deadline_ms);
/* The hex SHA-256 of token, into key (65 bytes). MCP_OK or MCP_EIO. */
int mcp__token_key(const char *token, size_t len, char key[65]);

/* ---- The JWT verifier (jwt.c) ---- */

typedef struct mcp__jwt mcp__jwt;

/* MCP_OK, MCP_EINVAL (no loop or issuer, an issuer that is not an http(s) URL, an
 * algorithm that is not offered), MCP_ENOMEM or MCP_EIO (libcurl refused). */
int mcp__jwt_new(uv_loop_t *loop, const char *issuer, const mcp_jwt_opts *opts, mcp__jwt **out);
mcp_token_verifier mcp__jwt_verifier(mcp__jwt *j);
/* What the JWT verifier says of token at once: MCP__JWT_ACCEPT (*claims, a new
 * reference), MCP__JWT_REJECT (*reason), MCP__JWT_UNAVAILABLE (no keys to judge by),
 * or, when may_fetch, MCP__JWT_NEED_KEYS (a fetch could bring the key). */
enum { MCP__JWT_ACCEPT, MCP__JWT_REJECT, MCP__JWT_UNAVAILABLE, MCP__JWT_NEED_KEYS };
int mcp__jwt_judge(mcp__jwt *j, const char *token, int may_fetch, const char **reason,
                   json_t **claims);
/* Takes the keys of a JWKS document now (tests; jwks_uri is then fetched only when
 * they are old or lack a key). MCP_OK, MCP_EINVAL or MCP_ENOMEM. */
int mcp__jwt_load_keys(mcp__jwt *j, const char *jwks);
/* Stops: checks waiting for keys get 503, the fetch in flight is cancelled. Returns 1
 * when closed(arg) will run once its handles are closed (it frees j then), 0 when j
 * was freed at once. */
int mcp__jwt_close(mcp__jwt *j, void (*closed)(void *arg), void *arg);

/* ---- The introspection verifier (introspect.c) ---- */

typedef struct mcp__introspect mcp__introspect;

/* MCP_OK, MCP_EINVAL (no loop, endpoint or credentials, an endpoint that is not an
 * http(s) URL), MCP_ENOMEM or MCP_EIO. */
int mcp__introspect_new(uv_loop_t *loop, const mcp_introspection_opts *opts, mcp__introspect **out);
mcp_token_verifier mcp__introspect_verifier(mcp__introspect *in);
/* As mcp__jwt_close: introspections in flight get 503. */
int mcp__introspect_close(mcp__introspect *in, void (*closed)(void *arg), void *arg);

/* ---- The gate (gate.c) ---- */

typedef struct mcp__auth mcp__auth;

/* What the gate says of one request. */
typedef struct mcp__auth_verdict {
    int status;               /* 0: let it in; 400, 401, 403 or 503 */
    const char *message;      /* for the JSON-RPC error of the body (static) */
    char *challenge;          /* the WWW-Authenticate value (malloc'd), NULL for a 503 */
    mcp_principal *principal; /* status 0: a reference the receiver owns */
} mcp__auth_verdict;

/* Frees what v holds (not v). */
void mcp__auth_verdict_clear(mcp__auth_verdict *v);

/* Copies and checks opts: MCP_OK, MCP_EINVAL (no resource or verifier, a resource
 * that is not an absolute http(s) URL or has a fragment, a scope that is not a
 * scope-token, metadata_extra that is not a JSON object, a size smaller than the
 * size field) or MCP_ENOMEM. */
int mcp__auth_new(uv_loop_t *loop, const mcp_auth_opts *opts, mcp__auth **out);
/* Stops what a built-in verifier has on the loop: 1 when closed(arg) will run once it
 * is gone, 0 when nothing was there. The gate still answers (503 where a token needs
 * the verifier) until mcp__auth_free. */
int mcp__auth_close(mcp__auth *a, void (*closed)(void *arg), void *arg);
/* The owner lets go; checks still running keep what they need until they complete. */
void mcp__auth_free(mcp__auth *a);

/*
 * Decides on req: done(arg, req, verdict) runs exactly once, from inside this call
 * (no token, a cached one, a verifier that completes at once) or later, unless the
 * request's connection closes first: then req is released and done never runs.
 * done owns req again, and the verdict's contents (mcp__auth_verdict_clear).
 */
typedef void (*mcp__auth_done_fn)(void *arg, mcp__http_req *req, mcp__auth_verdict *v);
void mcp__auth_check(mcp__auth *a, mcp__http_req *req, mcp__auth_done_fn done, void *arg);

/* 1 when a token without a tool's scopes gets 403 (step-up), 0 when the tool answers
 * with an error instead (mcp_auth_opts.scope_error_as_result). */
int mcp__auth_step_up(const mcp__auth *a);
/* The scopes a method needs besides the required ones (space-separated, borrowed
 * from a), or NULL. */
const char *mcp__auth_method_scopes(const mcp__auth *a, const char *method);
/* The 403 for a request that needs `scopes` (space-separated) beyond what p holds:
 * its challenge names the endpoint's required scopes and these. */
void mcp__auth_scope_refusal(mcp__auth *a, const char *scopes, mcp__auth_verdict *v);

/* The metadata document's paths on this server (the path-inserted one, then the root
 * one or NULL): borrowed from a. */
const char *mcp__auth_metadata_path(const mcp__auth *a);
const char *mcp__auth_metadata_root_path(const mcp__auth *a);
/* The document (JSON text, borrowed from a). */
const char *mcp__auth_metadata(const mcp__auth *a, size_t *len);

/* Counters of outcomes, for /metrics. */
typedef struct mcp__auth_stats {
    uint64_t passed, cached, no_token, invalid, insufficient_scope, bad_request, unavailable;
} mcp__auth_stats;
const mcp__auth_stats *mcp__auth_stats_get(const mcp__auth *a);

#endif
