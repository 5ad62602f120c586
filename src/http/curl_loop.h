/* SPDX-License-Identifier: MIT */
/*
 * libcurl's multi interface driven by a libuv loop: curl tells us which sockets
 * to watch (one uv_poll_t each) and when to wake it (one uv_timer_t), and we
 * tell curl what happened. Knows nothing of MCP.
 *
 * A transfer is started with its callbacks and ends exactly once: on_done, or a
 * cancel, after which no callback of it runs again. libcurl forbids calling it
 * from inside its own callbacks; here every call may be made from anywhere on
 * the loop thread, inside a transfer's callbacks included (starts and cancels
 * made there take effect as soon as curl returns).
 */
#ifndef MCP_HTTP_CURL_LOOP_H
#define MCP_HTTP_CURL_LOOP_H

#include <curl/curl.h>
#include <uv.h>

typedef struct mcp__curlm mcp__curlm;
typedef struct mcp__curl_req mcp__curl_req;

typedef struct mcp__curl_cbs {
    /* One header line as received, its CRLF included: the status line first,
     * then each header, then the empty line; again for each response of the
     * transfer (an interim 1xx, say). Return 0 to go on, -1 to stop the
     * transfer (on_done then has CURLE_WRITE_ERROR). May be NULL. */
    int (*on_header)(void *user, const char *line, size_t len);
    /* Body bytes. Return 0 to go on, -1 to stop as above, 1 to pause the transfer:
     * the bytes were not taken, and come again once mcp__curl_resume is called. */
    int (*on_data)(void *user, const char *data, size_t len);
    /* The end: result is CURLE_OK or why it failed; status is the HTTP status
     * of the last response (0 when none came). */
    void (*on_done)(void *user, CURLcode result, long status);
} mcp__curl_cbs;

/*
 * A POST body that libcurl reads from here (a copy of the caller's bytes), so that
 * what libcurl does by itself when a reused connection closes before any answer (it
 * sends the request again on a new one) is ours to decide: only when may_rewind is
 * set (RFC 9110 §9.2.2: only a request safe to repeat); otherwise the transfer ends
 * with CURLE_SEND_FAIL_REWIND. Zeroed, it holds nothing.
 */
typedef struct mcp__curl_body {
    char *data;
    size_t len, pos;
    int may_rewind;
} mcp__curl_body;

/* Copies data (len bytes) into b and sets easy to POST it from b, which must live
 * until the transfer ends. MCP_OK or MCP_ENOMEM (easy untouched). */
int mcp__curl_body_set(CURL *easy, mcp__curl_body *b, const char *data, size_t len);
/* Sets easy to POST what b holds already, from its start (a transfer made again). */
void mcp__curl_body_bind(CURL *easy, mcp__curl_body *b);
void mcp__curl_body_free(mcp__curl_body *b);

/* Makes the driver on loop. MCP_OK, MCP_ENOMEM or MCP_EIO (curl refused). */
int mcp__curlm_new(uv_loop_t *loop, mcp__curlm **out);
/* An easy handle to set up and start: a reused one (reset) or a new one. NULL
 * when out of memory. Release one not started with curl_easy_cleanup. */
CURL *mcp__curlm_easy(mcp__curlm *m);
/*
 * Starts easy, which the driver owns from now on, with hdrs (may be NULL, owned
 * too: freed with the transfer). The caller set its URL and options; the
 * driver sets the write and header functions, CURLOPT_PRIVATE and
 * CURLOPT_NOSIGNAL. On MCP_OK *out (may be NULL) names the transfer until it
 * ends; on failure (MCP_ENOMEM, MCP_EIO) easy and hdrs are freed and no
 * callback runs.
 */
int mcp__curlm_start(mcp__curlm *m, CURL *easy, struct curl_slist *hdrs, const mcp__curl_cbs *cbs,
                     void *user, mcp__curl_req **out);
/* Stops a transfer that has not ended: none of its callbacks runs again. */
void mcp__curl_cancel(mcp__curl_req *r);
/* Goes on with a transfer whose on_data paused it (nothing happens otherwise). */
void mcp__curl_resume(mcp__curl_req *r);
/* Number of transfers not ended. */
size_t mcp__curlm_active(const mcp__curlm *m);
/*
 * Cancels every transfer, closes the handles and frees the driver; closed(user)
 * runs once nothing is left on the loop (never inside this call). closed may
 * be NULL.
 */
void mcp__curlm_close(mcp__curlm *m, void (*closed)(void *user), void *user);

#endif
