/* SPDX-License-Identifier: MIT */
/*
 * Sealed tokens: bytes that leave the server and must come back unchanged, read by no
 * one else, on the request they were made for and before they expire. Made for the
 * requestState of multi round-trip requests (revision 2026-07-28,
 * basic/patterns/mrtr): the server keeps no state between the InputRequiredResult and
 * the retry, which may land on another node sharing the key, and the spec requires it
 * to treat requestState as attacker-controlled, to protect its integrity and to bind it
 * to the originating request with a short expiry.
 *
 * Token: "v1." followed by base64url without padding (RFC 4648 section 5) of
 *
 *     key id (1) | nonce (12) | expiry (8, big-endian ms since the epoch) |
 *     ciphertext (as long as the plaintext) | tag (16)
 *
 * sealed with AES-256-GCM under the key the id names, with the random nonce, and with
 * the additional authenticated data
 *
 *     version (1 byte, 0x01) | key id (1) | expiry (8) | binding
 *
 * The binding is not in the token: the verifier recomputes it from the request that
 * brings the token back (method, tool, prompt or resource name, a digest of the salient
 * parameters, the authenticated principal), so a token replayed into another request
 * fails authentication like a tampered one. Build it so that two different requests
 * cannot give the same bytes (length-prefixed fields or a digest of each, see
 * mcp__sha256).
 *
 * A sealed token says nothing about single use: within its lifetime it can be presented
 * again with the same request. A server for which a state must be consumed at most once
 * enforces that itself.
 *
 * Nonces are random, so one key must seal fewer than 2^32 tokens (NIST SP 800-38D,
 * 8.3): rotate keys long before (mcp__sealer_rotate).
 *
 * Every function is thread-safe as long as no other thread modifies the same sealer.
 */
#ifndef MCP_SEAL_H
#define MCP_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <mcp/base.h>

#define MCP__SEAL_KEY_LEN 32
/* The longest token, decoded: longer ones are refused before they are decoded. */
#define MCP__SEAL_MAX_RAW 65536
/* Key id, nonce, expiry and tag: what a token adds to its plaintext, decoded. */
#define MCP__SEAL_OVERHEAD (1 + 12 + 8 + 16)
#define MCP__SEAL_MAX_PLAINTEXT (MCP__SEAL_MAX_RAW - MCP__SEAL_OVERHEAD)
/* The longest token as text, without its NUL: "v1." and 87,382 characters. */
#define MCP__SEAL_MAX_TOKEN (3 + MCP__SEAL_MAX_RAW / 3 * 4 + 2)

/*
 * Seals len bytes of plaintext (NULL when len is 0) with key, whose id key_id is written
 * in the token, for the request that binding describes (binding_len bytes, NULL when 0)
 * until expiry_ms (wall-clock milliseconds since the epoch, mcp__wall_ms). On success
 * *out is a malloc'd NUL-terminated ASCII token the caller frees.
 *
 * MCP_OK; MCP_EINVAL for a NULL key or out, or NULL data with a nonzero length;
 * MCP_ELIMIT when len exceeds MCP__SEAL_MAX_PLAINTEXT; MCP_EIO when the OS random
 * source fails; MCP_ENOMEM when memory or libcrypto fails.
 */
int mcp__seal(const unsigned char key[MCP__SEAL_KEY_LEN], uint8_t key_id, const void *binding,
              size_t binding_len, const void *plaintext, size_t len, uint64_t expiry_ms,
              char **out);

/*
 * Opens a token sealed by mcp__seal with the same key and key_id for the same binding,
 * at now_ms (wall clock, as for expiry_ms). On success *plaintext is a malloc'd copy of
 * the sealed bytes followed by a NUL (not counted in *len), which the caller frees;
 * otherwise *plaintext is NULL and *len 0. Three outcomes a caller tells apart:
 *
 * - MCP_EINVAL: not a token at all, whatever the key: NULL token, no "v1." prefix, longer
 *   than MCP__SEAL_MAX_TOKEN (refused before it is decoded), characters or a length
 *   that are not the one base64url spelling, or too short for the fixed fields. Also
 *   for a NULL key or output pointer, or a NULL binding with a nonzero length.
 * - MCP_EPROTO: failed authentication: the token names another key id, or was sealed
 *   with another key, for another binding, or was changed in any bit.
 * - MCP_ETIMEDOUT: authentic, but now_ms is past its expiry. Expiry is only looked at
 *   once the token is authenticated, so a forged expiry is an MCP_EPROTO.
 *
 * MCP_ENOMEM when memory or libcrypto fails.
 */
int mcp__unseal(const unsigned char key[MCP__SEAL_KEY_LEN], uint8_t key_id, const char *token,
                const void *binding, size_t binding_len, uint64_t now_ms, unsigned char **plaintext,
                size_t *len);

/*
 * A key ring for rotation: tokens are sealed with the current key and opened with the
 * key whose id they carry, the current one or the one before it; a token of any older
 * key fails authentication. Nodes that share tokens share the keys and their ids.
 * Treat it as a value: no allocation, mcp__sealer_clear wipes it.
 */
typedef struct mcp__sealer {
    unsigned char current[MCP__SEAL_KEY_LEN];
    unsigned char previous[MCP__SEAL_KEY_LEN];
    uint8_t current_id;
    uint8_t previous_id;
    uint8_t has_previous;
} mcp__sealer;

/* Starts with one key (copied), and no previous one. */
void mcp__sealer_init(mcp__sealer *s, uint8_t key_id, const unsigned char key[MCP__SEAL_KEY_LEN]);
/* Makes key (copied) the current key and the current key the previous one; the previous
 * key is wiped. MCP_EINVAL when key_id is the current key's id: the id must tell the two
 * keys a token may name apart. Not while another thread uses s. */
int mcp__sealer_rotate(mcp__sealer *s, uint8_t key_id, const unsigned char key[MCP__SEAL_KEY_LEN]);
/* Wipes both keys (OPENSSL_cleanse). */
void mcp__sealer_clear(mcp__sealer *s);
/* mcp__seal with the current key. */
int mcp__sealer_seal(const mcp__sealer *s, const void *binding, size_t binding_len,
                     const void *plaintext, size_t len, uint64_t expiry_ms, char **out);
/* mcp__unseal with the key the token names, when it is the current or previous one;
 * MCP_EPROTO for any other id. */
int mcp__sealer_unseal(const mcp__sealer *s, const char *token, const void *binding,
                       size_t binding_len, uint64_t now_ms, unsigned char **plaintext, size_t *len);

/* SHA-256 of len bytes (data NULL when len is 0) into out, for bindings: a digest of a
 * request's salient parameters. MCP_OK, MCP_EINVAL for NULL arguments, MCP_ENOMEM when
 * libcrypto fails. */
int mcp__sha256(const void *data, size_t len, unsigned char out[32]);
/* The same as 64 lowercase hex digits and a NUL (the digests of SEP-2640 skills). */
int mcp__sha256_hex(const void *data, size_t len, char out[65]);

#endif
