// Self-test of lib/authserver.mjs's client-side options: what an OAuth client (ours, in C) will
// meet at this authorization server, proved with plain fetch and nothing else. Dynamic client
// registration (RFC 7591), the authorization code grant with PKCE done by hand and the
// programmatic browser (browse), RFC 9207 iss, resource indicators (RFC 8707) giving JWT access
// tokens (RFC 9068) checked against the server's keys, refresh tokens rotated on use, short
// lifetimes, revocation, step-up to more scopes, the device authorization grant (RFC 8628) with
// approveDevice, DPoP (RFC 9449) with server nonces, and the client credentials grant as before.
//
// Run: `node authserver_browser.selftest.mjs` in tests/interop (no binaries needed).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, verify } from 'node:crypto';
import http from 'node:http';

import { startAuthServer, CookieJar, CLIENT_ID } from './lib/authserver.mjs';
import { deadline, overallDeadline } from './lib/http.mjs';

overallDeadline(60_000);

const READ_WRITE = 'mcp:read mcp:write';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const b64u = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const parts = (jwt) => {
    const [h, p] = jwt.split('.');
    return { header: JSON.parse(Buffer.from(h, 'base64url')), payload: JSON.parse(Buffer.from(p, 'base64url')) };
};

// POSTs params (urlencoded) to url; auth: a client {client_id, client_secret} (Basic) or, without
// a secret, client_id in the body; dpop: a proof. Resolves with {status, json, headers}.
async function post(url, params, { client, dpop } = {}) {
    const body = new URLSearchParams(params);
    const headers = {};
    if (client?.client_secret) {
        const enc = encodeURIComponent;
        headers.authorization = `Basic ${Buffer.from(`${enc(client.client_id)}:${enc(client.client_secret)}`).toString('base64')}`;
    } else if (client) {
        body.set('client_id', client.client_id);
    }
    if (dpop) headers.dpop = dpop;
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function getJson(url) {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 200, `GET ${url}`);
    return res.json();
}

function pkce() {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

// Checks jwt's RS256 signature against the server's keys (jwks) and its time; resolves with its
// payload, or rejects with 'expired' once exp is past.
async function verifyJwt(jwt, jwksUri) {
    const [h, p, s] = jwt.split('.');
    const { header, payload } = parts(jwt);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.typ, 'at+jwt');
    const { keys } = await getJson(jwksUri);
    const jwk = keys.find((k) => k.kid === header.kid);
    assert.ok(jwk, `the key ${header.kid} is published`);
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    assert.ok(verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url')), 'the signature verifies');
    if (payload.exp <= Date.now() / 1000) throw new Error('expired');
    return payload;
}

// A DPoP key: proof(htm, htu, {nonce, ath}) makes a proof JWT; jkt is its RFC 7638 thumbprint.
function dpopKey() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    const jwk = { kty, crv, x, y };
    const jkt = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
    const proof = (htm, htu, { nonce, ath } = {}) => {
        const input = `${b64u({ typ: 'dpop+jwt', alg: 'ES256', jwk })}.${b64u({ jti: randomUUID(), htm, htu,
            iat: Math.floor(Date.now() / 1000), ...(nonce ? { nonce } : {}), ...(ath ? { ath } : {}) })}`;
        return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    };
    return { jkt, proof };
}

// An http server standing for a native client's loopback redirect listener, that counts the
// requests it gets: browse() must not deliver the redirect.
async function loopbackListener() {
    let hits = 0;
    const srv = http.createServer((req, res) => {
        hits++;
        res.end('ok');
    });
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    return {
        redirect: `http://127.0.0.1:${srv.address().port}/callback`,
        hits: () => hits,
        close: () => new Promise((r) => {
            srv.closeAllConnections();
            srv.close(r);
        }),
    };
}

describe('authorization code, refresh, step-up, revocation and device flow', () => {
    const R = 'http://127.0.0.1:1/mcp';
    const SHORT = 'http://127.0.0.1:1/short-lived';
    let as, meta, publicClient, listener;

    // Registers a client (RFC 7591, open registration): resolves with its registration response.
    async function register(metadata) {
        const res = await fetch(meta.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify(metadata), signal: AbortSignal.timeout(10_000) });
        const json = await res.json();
        assert.equal(res.status, 201, JSON.stringify(json));
        return json;
    }

    // The authorization URL a client would open, with PKCE S256, state, resource and scope.
    function authorizeUrl(client, { scope, resource = R, redirect, state = randomUUID(), challenge, extra = {} }) {
        const u = new URL(meta.authorization_endpoint);
        u.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: redirect, scope,
            resource, state, ...(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}), ...extra });
        return u.href;
    }

    // The whole code flow for client: authorize (browse with opts), check the response, exchange
    // the code (with the resource). Resolves with the token response.
    async function codeFlow(client, { scope, resource = R, redirect = listener.redirect, extra, browse = {}, exchange = {} }) {
        const { verifier, challenge } = pkce();
        const state = randomUUID();
        const back = new URL(await as.browse(authorizeUrl(client, { scope, resource, redirect, state, challenge, extra }), browse));
        assert.equal(`${back.origin}${back.pathname}`, redirect);
        assert.equal(back.searchParams.get('state'), state);
        assert.equal(back.searchParams.get('iss'), as.issuer, 'RFC 9207 iss in the authorization response');
        const code = back.searchParams.get('code');
        assert.ok(code, back.href);
        const tok = await post(meta.token_endpoint, { grant_type: 'authorization_code', code, redirect_uri: redirect,
            code_verifier: verifier, resource, ...exchange }, { client });
        assert.equal(tok.status, 200, JSON.stringify(tok.json));
        return { ...tok.json, code, verifier, redirect };
    }

    const refresh = (client, refreshToken, extra = {}) =>
        post(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, { client });

    before(async () => {
        as = await startAuthServer({
            resources: { [R]: READ_WRITE, [SHORT]: { scope: 'mcp:read', accessTokenTTL: 2 } },
            authorizationCode: true,
            deviceFlow: true,
            deviceInterval: 1,
        });
        meta = await getJson(`${as.issuer}/.well-known/oauth-authorization-server`);
        listener = await loopbackListener();
        // A native public client, registered for a loopback redirect on port 1234: any port is
        // accepted for it at the authorization request (RFC 8252 7.3).
        publicClient = await register({ application_type: 'native', redirect_uris: ['http://127.0.0.1:1234/callback'],
            grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT], response_types: ['code'],
            token_endpoint_auth_method: 'none', client_name: 'selftest public client' });
    });
    after(async () => {
        await listener?.close();
        await as?.stop();
    });

    test('metadata: RFC 8414 and OpenID discovery, iss, S256, registration and device endpoints', async () => {
        const oidc = await getJson(`${as.issuer}/.well-known/openid-configuration`);
        assert.deepEqual(oidc, meta);
        assert.equal(meta.issuer, as.issuer);
        assert.equal(meta.authorization_response_iss_parameter_supported, true);
        assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
        assert.deepEqual(meta.response_types_supported, ['code']);
        assert.ok(meta.token_endpoint_auth_methods_supported.includes('none'));
        assert.ok(meta.token_endpoint_auth_methods_supported.includes('client_secret_basic'));
        assert.equal(meta.registration_endpoint, `${as.issuer}/reg`);
        assert.equal(meta.device_authorization_endpoint, `${as.issuer}/device/auth`);
        for (const g of ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_GRANT])
            assert.ok(meta.grant_types_supported.includes(g), g);
        assert.ok(meta.scopes_supported.includes('offline_access'));
        assert.equal(publicClient.client_secret, undefined, 'a public client has no secret');
    });

    test('code flow with PKCE: a JWT access token for the resource, with the scope asked; the redirect not delivered', async () => {
        const t = await codeFlow(publicClient, { scope: 'mcp:read offline_access', extra: { prompt: 'consent' } });
        assert.equal(listener.hits(), 0, 'browse() does not request the redirect URI');
        assert.equal(t.token_type, 'Bearer');
        assert.equal(t.scope, 'mcp:read');
        assert.equal(t.expires_in, 600);
        assert.ok(t.refresh_token, 'offline_access with prompt=consent: a refresh token');
        const claims = await verifyJwt(t.access_token, meta.jwks_uri);
        assert.equal(claims.aud, R);
        assert.equal(claims.iss, as.issuer);
        assert.equal(claims.scope, 'mcp:read');
        assert.equal(claims.sub, 'user');
        assert.equal(claims.client_id, publicClient.client_id);
        // A code is used once.
        const again = await post(meta.token_endpoint, { grant_type: 'authorization_code', code: t.code,
            redirect_uri: t.redirect, code_verifier: t.verifier, resource: R }, { client: publicClient });
        assert.equal(again.status, 400);
        assert.equal(again.json.error, 'invalid_grant');
    });

    test('offline_access without prompt=consent is dropped: no refresh token', async () => {
        const t = await codeFlow(publicClient, { scope: 'mcp:read offline_access' });
        assert.equal(t.refresh_token, undefined);
        assert.equal(t.scope, 'mcp:read');
    });

    test('the code exchange checks the PKCE verifier and the redirect URI', async () => {
        const { verifier, challenge } = pkce();
        const redirect = listener.redirect;
        const back = new URL(await as.browse(authorizeUrl(publicClient, { scope: 'mcp:read', redirect, challenge })));
        const code = back.searchParams.get('code');
        const bad = await post(meta.token_endpoint, { grant_type: 'authorization_code', code, redirect_uri: redirect,
            code_verifier: pkce().verifier, resource: R }, { client: publicClient });
        assert.equal(bad.status, 400);
        assert.equal(bad.json.error, 'invalid_grant');
        const elsewhere = await post(meta.token_endpoint, { grant_type: 'authorization_code', code,
            redirect_uri: 'http://127.0.0.1:1234/callback', code_verifier: verifier, resource: R }, { client: publicClient });
        assert.equal(elsewhere.status, 400);
        assert.equal(elsewhere.json.error, 'invalid_grant');
    });

    test('refresh tokens rotate: the new one works, the old one is invalid_grant (and that reuse ends the grant)', async () => {
        const t = await codeFlow(publicClient, { scope: 'mcp:read offline_access', extra: { prompt: 'consent' } });
        const r1 = await refresh(publicClient, t.refresh_token);
        assert.equal(r1.status, 200, JSON.stringify(r1.json));
        assert.notEqual(r1.json.refresh_token, t.refresh_token, 'rotated');
        assert.equal(r1.json.scope, 'mcp:read');
        assert.equal((await verifyJwt(r1.json.access_token, meta.jwks_uri)).aud, R, 'without resource: the granted one');
        // The resource again on refresh is accepted; another one is not.
        const r2 = await refresh(publicClient, r1.json.refresh_token, { resource: R });
        assert.equal(r2.status, 200, JSON.stringify(r2.json));
        assert.equal((await verifyJwt(r2.json.access_token, meta.jwks_uri)).aud, R);
        const other = await refresh(publicClient, r2.json.refresh_token, { resource: SHORT });
        assert.equal(other.json.error, 'invalid_target');
        const more = await refresh(publicClient, r2.json.refresh_token, { scope: READ_WRITE });
        assert.equal(more.json.error, 'invalid_scope', 'no scope beyond the grant on refresh');
        const old = await refresh(publicClient, t.refresh_token);
        assert.equal(old.status, 400);
        assert.equal(old.json.error, 'invalid_grant');
        const after = await refresh(publicClient, r2.json.refresh_token);
        assert.equal(after.json.error, 'invalid_grant', 'a rotated token used again revokes the whole grant');
    });

    test('a short access token TTL: the token expires, a refresh gives a fresh one', async () => {
        const t = await codeFlow(publicClient, { scope: 'mcp:read offline_access', resource: SHORT, extra: { prompt: 'consent' } });
        assert.equal(t.expires_in, 2);
        const claims = await verifyJwt(t.access_token, meta.jwks_uri);
        assert.equal(claims.aud, SHORT);
        assert.equal(claims.exp - claims.iat, 2);
        await sleep(Math.max(0, claims.exp * 1000 - Date.now()) + 50);
        await assert.rejects(verifyJwt(t.access_token, meta.jwks_uri), /expired/);
        const r = await refresh(publicClient, t.refresh_token);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        assert.equal((await verifyJwt(r.json.access_token, meta.jwks_uri)).aud, SHORT);
    });

    test('revocation: the client revokes its refresh token, or the administrator its grant; then invalid_grant', async () => {
        const a = await codeFlow(publicClient, { scope: 'mcp:read offline_access', extra: { prompt: 'consent' } });
        // The old revoke() authenticates as CLIENT_ID: refused for another client's token.
        await assert.rejects(as.revoke(a.refresh_token), /400/);
        await as.revoke(a.refresh_token, publicClient);
        const r = await refresh(publicClient, a.refresh_token);
        assert.equal(r.status, 400);
        assert.equal(r.json.error, 'invalid_grant');
        const b = await codeFlow(publicClient, { scope: 'mcp:read offline_access', extra: { prompt: 'consent' } });
        assert.equal(await as.revokeGrantOf(b.refresh_token), true);
        assert.equal((await refresh(publicClient, b.refresh_token)).json.error, 'invalid_grant');
        assert.equal(await as.revokeGrantOf('no-such-token'), false);
    });

    test('step-up: mcp:read first, then mcp:read mcp:write in a new authorization; each token has what was asked', async () => {
        // One browser: the second authorization finds the session and asks consent for mcp:write only.
        const jar = new CookieJar();
        const first = await codeFlow(publicClient, { scope: 'mcp:read', browse: { jar, user: 'alice' } });
        assert.equal(first.scope, 'mcp:read');
        assert.equal((await verifyJwt(first.access_token, meta.jwks_uri)).scope, 'mcp:read');
        const second = await codeFlow(publicClient, { scope: READ_WRITE, browse: { jar, user: 'mallory' } });
        assert.equal(second.scope, READ_WRITE);
        const claims = await verifyJwt(second.access_token, meta.jwks_uri);
        assert.equal(claims.scope, READ_WRITE);
        assert.equal(claims.sub, 'alice', 'the session\'s user: no second login');
        // A new browser: a new login and a new grant.
        const fresh = await codeFlow(publicClient, { scope: READ_WRITE, browse: { user: 'bob' } });
        assert.equal((await verifyJwt(fresh.access_token, meta.jwks_uri)).sub, 'bob');
        // A scope the resource does not have is not in the token.
        const odd = await codeFlow(publicClient, { scope: 'mcp:read nonsense' });
        assert.equal(odd.scope, 'mcp:read');
    });

    test('the user refuses: error=access_denied with state and iss', async () => {
        for (const opts of [{ deny: true }, { consent: false }]) {
            const state = randomUUID();
            const url = authorizeUrl(publicClient, { scope: 'mcp:read', redirect: listener.redirect, state, challenge: pkce().challenge });
            const back = new URL(await as.browse(url, opts));
            assert.equal(back.searchParams.get('error'), 'access_denied', JSON.stringify(opts));
            assert.equal(back.searchParams.get('state'), state);
            assert.equal(back.searchParams.get('iss'), as.issuer);
            assert.equal(back.searchParams.get('code'), null);
        }
    });

    test('no redirect to an unregistered redirect URI, and PKCE is required', async () => {
        const wrong = authorizeUrl(publicClient, { scope: 'mcp:read', redirect: 'http://127.0.0.1:1234/elsewhere', challenge: pkce().challenge });
        await assert.rejects(as.browse(wrong), (e) => e.status === 400 && /redirect_uri/.test(e.message));
        const noPkce = new URL(await as.browse(authorizeUrl(publicClient, { scope: 'mcp:read', redirect: listener.redirect })));
        assert.equal(noPkce.searchParams.get('error'), 'invalid_request');
        assert.match(noPkce.searchParams.get('error_description'), /PKCE/);
        assert.equal(noPkce.searchParams.get('iss'), as.issuer);
        assert.equal(listener.hits(), 0);
    });

    test('a confidential client: client_secret_basic at the token endpoint, PKCE all the same', async () => {
        const conf = await register({ redirect_uris: [listener.redirect], grant_types: ['authorization_code', 'refresh_token'],
            token_endpoint_auth_method: 'client_secret_basic' });
        assert.equal(conf.application_type, 'web');
        assert.ok(conf.client_secret);
        const t = await codeFlow(conf, { scope: 'mcp:write offline_access', extra: { prompt: 'consent' } });
        assert.equal((await verifyJwt(t.access_token, meta.jwks_uri)).scope, 'mcp:write');
        assert.equal((await refresh(conf, t.refresh_token)).status, 200);
        // Without its secret: invalid_client.
        const anon = await refresh({ client_id: conf.client_id }, t.refresh_token);
        assert.equal(anon.status, 401);
        assert.equal(anon.json.error, 'invalid_client');
        // A web client's redirect URI matches exactly: another port is refused.
        const other = authorizeUrl(conf, { scope: 'mcp:read', redirect: 'http://127.0.0.1:1234/callback', challenge: pkce().challenge });
        await assert.rejects(as.browse(other), (e) => e.status === 400);
    });

    test('device flow: authorization_pending, then approveDevice, then tokens; a denial gives access_denied', async () => {
        const start = await post(meta.device_authorization_endpoint, { scope: 'mcp:read offline_access', resource: R },
            { client: publicClient });
        assert.equal(start.status, 200, JSON.stringify(start.json));
        const { device_code: deviceCode, user_code: userCode, verification_uri: vu, verification_uri_complete: vuc, interval } = start.json;
        assert.equal(vu, `${as.issuer}/device`);
        assert.equal(vuc, `${vu}?user_code=${encodeURIComponent(userCode)}`);
        assert.equal(interval, 1);
        const poll = () => post(meta.token_endpoint, { grant_type: DEVICE_GRANT, device_code: deviceCode }, { client: publicClient });
        const pending = await poll();
        assert.equal(pending.status, 400);
        assert.equal(pending.json.error, 'authorization_pending');
        const approval = as.approveDevice(userCode, { user: 'device-user' });
        let tokens;
        // Polls at the interval asked, 10 times at most.
        for (let i = 0; i < 10 && !tokens; i++) {
            await sleep(interval * 1000);
            const r = await poll();
            if (r.status === 200) tokens = r.json;
            else assert.equal(r.json.error, 'authorization_pending', JSON.stringify(r.json));
        }
        await deadline(approval, 10_000, 'approveDevice');
        assert.ok(tokens, 'tokens within 10 polls');
        assert.equal(tokens.scope, 'mcp:read');
        assert.ok(tokens.refresh_token, 'offline_access, no prompt needed here');
        const claims = await verifyJwt(tokens.access_token, meta.jwks_uri);
        assert.equal(claims.aud, R);
        assert.equal(claims.sub, 'device-user');
        assert.equal((await poll()).json.error, 'invalid_grant', 'a device code is used once');

        for (const opts of [{ deny: true }, { consent: false }]) {
            const d = await post(meta.device_authorization_endpoint, { scope: 'mcp:read', resource: R }, { client: publicClient });
            await as.approveDevice(d.json.user_code, opts);
            const r = await post(meta.token_endpoint, { grant_type: DEVICE_GRANT, device_code: d.json.device_code }, { client: publicClient });
            assert.equal(r.json.error, 'access_denied', JSON.stringify(opts));
        }
    });

    test('DPoP (on by default): a DPoP-bound token, cnf.jkt', async () => {
        const key = dpopKey();
        const { verifier, challenge } = pkce();
        const back = new URL(await as.browse(authorizeUrl(publicClient, { scope: 'mcp:read', redirect: listener.redirect, challenge })));
        const t = await post(meta.token_endpoint, { grant_type: 'authorization_code', code: back.searchParams.get('code'),
            redirect_uri: listener.redirect, code_verifier: verifier, resource: R },
        { client: publicClient, dpop: key.proof('POST', meta.token_endpoint) });
        assert.equal(t.status, 200, JSON.stringify(t.json));
        assert.equal(t.json.token_type, 'DPoP');
        assert.equal((await verifyJwt(t.json.access_token, meta.jwks_uri)).cnf.jkt, key.jkt);
    });

    test('the client credentials grant works as before', async () => {
        const claims = await verifyJwt(await as.token(R, 'mcp:write'), meta.jwks_uri);
        assert.equal(claims.aud, R);
        assert.equal(claims.client_id, CLIENT_ID);
        assert.equal(claims.scope, 'mcp:write');
    });
});

describe('refresh tokens always, DPoP with nonces', () => {
    const R = 'http://127.0.0.1:1/dpop-mcp';
    const REDIRECT = 'http://127.0.0.1:1/cb';
    let as, meta, client;
    before(async () => {
        as = await startAuthServer({ resources: { [R]: READ_WRITE }, authorizationCode: true, refreshTokens: 'always',
            dpop: { nonce: true } });
        meta = await getJson(`${as.issuer}/.well-known/oauth-authorization-server`);
        const res = await fetch(meta.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'],
                token_endpoint_auth_method: 'client_secret_post' }), signal: AbortSignal.timeout(10_000) });
        client = await res.json();
        assert.equal(res.status, 201, JSON.stringify(client));
    });
    after(async () => {
        await as?.stop();
    });

    // POSTs params to the token endpoint with a DPoP proof of key, and again with the nonce the
    // server asks for (use_dpop_nonce); resolves with the second answer.
    async function withNonce(key, params) {
        const body = { ...params, client_id: client.client_id, client_secret: client.client_secret };
        const first = await post(meta.token_endpoint, body, { dpop: key.proof('POST', meta.token_endpoint) });
        assert.equal(first.status, 400);
        assert.equal(first.json.error, 'use_dpop_nonce');
        const nonce = first.headers.get('dpop-nonce');
        assert.ok(nonce, 'DPoP-Nonce header');
        return post(meta.token_endpoint, body, { dpop: key.proof('POST', meta.token_endpoint, { nonce }) });
    }

    test('no offline_access, no prompt: a refresh token all the same; DPoP nonce round trip; bound tokens', async () => {
        assert.deepEqual(meta.dpop_signing_alg_values_supported.includes('ES256'), true);
        const key = dpopKey();
        const { verifier, challenge } = pkce();
        const u = new URL(meta.authorization_endpoint);
        u.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'mcp:read',
            resource: R, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
        const back = new URL(await as.browse(u.href));
        assert.equal(back.searchParams.get('iss'), as.issuer);
        const t = await withNonce(key, { grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: REDIRECT,
            code_verifier: verifier, resource: R });
        assert.equal(t.status, 200, JSON.stringify(t.json));
        assert.equal(t.json.token_type, 'DPoP');
        assert.ok(t.json.refresh_token);
        assert.equal((await verifyJwt(t.json.access_token, meta.jwks_uri)).cnf.jkt, key.jkt);
        // Without a proof, a Bearer token; with one, DPoP again.
        const plain = await post(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: t.json.refresh_token,
            client_id: client.client_id, client_secret: client.client_secret });
        assert.equal(plain.status, 200, JSON.stringify(plain.json));
        assert.equal(plain.json.token_type, 'Bearer');
        const bound = await withNonce(key, { grant_type: 'refresh_token', refresh_token: plain.json.refresh_token });
        assert.equal(bound.status, 200, JSON.stringify(bound.json));
        assert.equal(bound.json.token_type, 'DPoP');
    });
});

describe('the defaults are as before', () => {
    const R = 'http://127.0.0.1:1/plain';
    let as;
    before(async () => {
        as = await startAuthServer({ resources: { [R]: 'mcp:tools' } });
    });
    after(async () => {
        await as?.stop();
    });

    test('no registration, no device flow, no offline_access; client credentials works', async () => {
        const meta = await getJson(`${as.issuer}/.well-known/oauth-authorization-server`);
        assert.equal(meta.registration_endpoint, undefined);
        assert.equal(meta.device_authorization_endpoint, undefined);
        assert.ok(!meta.scopes_supported.includes('offline_access'));
        const claims = await verifyJwt(await as.token(R, 'mcp:tools'), meta.jwks_uri);
        assert.equal(claims.aud, R);
        assert.equal(claims.exp - claims.iat, 600);
    });
});
