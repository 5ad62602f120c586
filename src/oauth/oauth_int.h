/* SPDX-License-Identifier: MIT */
/*
 * Inside the OAuth client: the provider's state, shared by oauth.c (the
 * provider, its tokens, its store and its waiters), flow.c (discovery and the
 * grants) and http.c (one exchange with an authorization server).
 */
#ifndef MCP_OAUTH_OAUTH_INT_H
#define MCP_OAUTH_OAUTH_INT_H

#include <pthread.h>

#include "http/curl_loop.h"
#include "oauth/oauth.h"

typedef struct mcp__ohttp mcp__ohttp;
typedef struct mcp__loopback mcp__loopback;
struct mcp__ohttp {
    mcp_oauth *o;
    mcp__curl_req *req;
    mcp__curl_body out;
    mcp__buf body;
    int too_large;
    int may_repeat; /* set before the start: a POST safe to send twice */
    CURLcode rc;
    long status;
    char *dpop_nonce, *location, *www_auth, *ctype;
    void (*done)(mcp__ohttp *h); /* the exchange ended; h is the caller's to free */
    void *user;
};

/* Starts h (zeroed but for done and user) as a GET of url, or a POST of form when it
 * is set (ctype: its Content-Type line; NULL: a form); hdrs (owned) are more request
 * headers. MCP_OK, or an error (hdrs freed, done never runs). */
int mcp__ohttp_start(mcp_oauth *o, mcp__ohttp *h, const char *url, const char *form,
                     const char *ctype, struct curl_slist *hdrs);
/* Cancels h if running and frees it. NULL is ignored. */
void mcp__ohttp_free(mcp__ohttp *h);
/* The body as a JSON object, or NULL. */
json_t *mcp__ohttp_json(const mcp__ohttp *h);
/* "what at url: why it failed", malloc'd. */
char *mcp__ohttp_why(const mcp__ohttp *h, const char *what, const char *url);

enum oflow { OF_NONE, OF_REFRESH, OF_AUTHORIZE };

/* Discovery's and the grant's steps. */
enum ostep {
    OS_PRM,
    OS_ASM,
    OS_REGISTER,
    OS_BROWSER,
    OS_DEVICE,      /* the device authorization request */
    OS_DEVICE_POLL, /* polling the token endpoint while the user approves */
    OS_IDP_EXCHANGE,
    OS_TOKEN,
    OS_REFRESH
};

#define OAUTH_MAX_CANDIDATES 6

struct mcp_oauth {
    pthread_mutex_t lock; /* refs, attached, the mailbox's life */
    int refs;
    /* Options (strings copied). */
    mcp_oauth_grant grant;
    char *client_name, *redirect_uri, *cfg_client_id, *cfg_client_secret, *cfg_auth_method;
    char *signing_alg, *client_metadata_url, *cfg_scope, *cfg_resource, *issuer_alias;
    char *assertion, *idp_token_endpoint, *idp_id_token, *idp_client_id, *idp_client_secret;
    char *cacert;
    int omit_resource, dpop, max_step_ups, max_reauths, http_timeout_ms, redirect_timeout_ms;
    mcp_oauth_redirect_fn on_redirect;
    void *redirect_user;
    mcp_oauth_assertion_fn on_assertion;
    void *assertion_user;
    mcp_oauth_device_fn on_device_code;
    void *device_user;
    int loopback, loopback_port;
    char *cfg_redirect_uri;
    mcp_token_store store;
    int has_store;
    mcp__jkey *client_key; /* private_key_jwt */
    mcp__jkey *dpop_key;

    /* Attached to a connection. */
    int attached;
    uv_loop_t *loop;
    mcp__curlm *curl;
    mcp__mailbox *mb; /* per attachment: freed once closed */
    int mb_open;
    char *server_url, *server_origin, *server_path;

    /* What is known, and kept in the store. */
    char *issuer;    /* the authorization server in use */
    json_t *as_meta; /* its metadata (the defaults for a 2025-03-26 server) */
    char *resource;  /* the PRM's resource, or NULL */
    json_t *prm_scopes;
    char *client_id, *client_secret, *client_auth, *client_issuer;
    char *client_redirect; /* the redirect_uri the client was registered with */
    char *access_token, *token_type, *refresh_token, *scope;
    uint64_t expires_at; /* wall clock ms; 0: unknown */
    uint64_t generation; /* a new token each time */
    int access_refused;  /* the server refused the access token held */
    char *as_nonce, *rs_nonce;

    /* The flow under way. */
    enum oflow flow;
    enum ostep step;
    mcp__oauth_waiter *waiters;
    mcp__ohttp *http;
    char *cands[OAUTH_MAX_CANDIDATES];
    int ncands, icand;
    int legacy;           /* no PRM: the server's origin is its authorization server */
    int rm_given;         /* the challenge named the PRM */
    char *want_scope;     /* what the next authorization asks for (a step-up's union) */
    char *asked_scope;    /* what the last token was asked with */
    char *last_why;       /* why the last discovery candidate gave nothing */
    uint64_t obtained_at; /* wall clock ms when the access token came */
    char *ch_scope;       /* the last challenge's scope */
    char *ch_rm;          /* the last challenge's resource_metadata */
    int nonce_retried;    /* this exchange was sent again with the AS's nonce */
    char *verifier, *state, *browser_url;
    char *idp_jag;      /* enterprise: the ID-JAG the IdP issued */
    int refresh_failed; /* this flow's refresh was refused */
    uv_timer_t *timer;  /* the flow's deadline or wait: per attachment, freed once closed */
    mcp__loopback *lb;  /* the loopback listener of the browser step */
    char *device_code;
    uint64_t device_deadline; /* monotonic ms */
    int device_interval_ms;
    void *store_lock; /* the store's lock on the server's document, while refreshing */
    int lock_tries;   /* attempts to take it while another process held it */
};

/* ---- oauth.c, for flow.c ---- */
void mcp__oauth_unref(mcp_oauth *o);
/* Ends the flow: MCP_OK (a new token) or an error; waiters are told. */
void mcp__oauth_flow_end(mcp_oauth *o, int rc, const char *why);
/* Takes tokens another process saved in the store since (the same authorization server
 * and client): 1 when it did (a new generation). */
int mcp__oauth_reload(mcp_oauth *o);
/* 1 when the access token can be sent (held, and not about to expire). */
int mcp__oauth_usable(const mcp_oauth *o);
/* Releases the store's lock, if held. */
void mcp__oauth_unlock(mcp_oauth *o);
/* Saves what is known to the store (failures are logged, not fatal). */
void mcp__oauth_save(mcp_oauth *o);
/* Forgets the tokens (and with forget_client, the client registration). */
void mcp__oauth_forget(mcp_oauth *o, int forget_client);
/* Takes a token response: MCP_OK, or MCP_EAUTH with *why. */
int mcp__oauth_take_tokens(mcp_oauth *o, const json_t *resp, const char *asked_scope, char **why);
/* A DPoP proof for method and url, with ath for token when not NULL, and nonce. */
char *mcp__oauth_dpop_proof(mcp_oauth *o, const char *method, const char *url, const char *token,
                            const char *nonce);

/* ---- loopback.c ---- */
/* Listens on 127.0.0.1:port (0: any) for the browser's redirect: MCP_OK or MCP_EIO. */
int mcp__loopback_start(mcp_oauth *o, int port, mcp__loopback **out);
int mcp__loopback_port(const mcp__loopback *lb);
/* Closes the listener and its connections (freed from the loop). NULL is ignored. */
void mcp__loopback_stop(mcp__loopback *lb);

/* ---- flow.c ---- */
/* Starts the flow o->flow (the waiters are queued). */
void mcp__oauth_flow_start(mcp_oauth *o);
/* The browser step's callback URL arrived (loop thread). */
void mcp__oauth_flow_callback(mcp_oauth *o, const char *url);
/* Cancels what runs (detach). */
void mcp__oauth_flow_cancel(mcp_oauth *o);
/* Replaces *slot by a copy of v (NULL allowed). MCP_OK or MCP_ENOMEM. */
int mcp__oauth_set(char **slot, const char *v);

#endif
