// (A second describe block: opaque tokens checked by introspection, RFC 7662.)
//
// Interop: our mcp-everything as an OAuth 2.1 resource server in front of a real
// authorization server, oidc-provider (lib/authserver.mjs), configured by its flags alone
// (--auth-resource, --auth-issuer, --auth-scope): it discovers the authorization server's
// keys from its metadata, checks the JWT access tokens it issues (RFC 9068, audience by
// resource indicator, RFC 8707), and the official TypeScript SDK v2 client, with its own
// client-credentials provider, gets our 401, discovers our metadata and the authorization
// server, obtains a token and calls tools. Keys rotated at the authorization server are
// taken without a restart; while it is down, the keys already fetched keep working and a
// token that needs others gets 503.
//
// A third block puts mcp-gateway, with the same flags, in front of a stdio server: OAuth and
// TLS for a server that has neither, reached by the same client in both eras.
//
// The first server is served over HTTPS by mcp-everything itself (--tls-cert, --tls-key; a
// throwaway CA made by lib/tls.mjs, trusted through NODE_EXTRA_CA_CERTS as a Node user would),
// and the SDK client reaches it in both eras: 2025-11-25 with a session and 2026-07-28 pinned.
//
// Run by CTest as `node auth_oidc.test.mjs` in tests/interop with MCP_BIN_DIR set.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createPrivateKey, createSign, generateKeyPairSync } from 'node:crypto';

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startAuthServer, signingKey, CLIENT_ID, CLIENT_SECRET, SERVER_ID, SERVER_SECRET } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { deadline, overallDeadline, startEverything, startListening } from './lib/http.mjs';
import { withTrustedCertificates } from './lib/tls.mjs';

overallDeadline(120_000);
const tls = await withTrustedCertificates(import.meta.url);

const BIN = process.env.MCP_BIN_DIR;
if (!BIN) throw new Error('MCP_BIN_DIR is not set');

const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-oidc', version: '1' } },
};

let as, asPort, issuer, server, resource, other;
const key1 = signingKey();

// POSTs initialize with token (undefined: none); resolves with the fetch Response.
function initialize(token) {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    return fetch(resource, { method: 'POST', headers, body: JSON.stringify(INIT) });
}

// A JWT access token signed by a key the authorization server never had.
function foreignToken() {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const now = Math.floor(Date.now() / 1000);
    const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const head = enc({ alg: 'RS256', typ: 'at+jwt', kid: 'not-a-key-of-the-server' });
    const body = enc({ iss: issuer, sub: 'mallory', aud: resource, scope: 'mcp:tools', exp: now + 600, iat: now });
    const sig = createSign('RSA-SHA256').update(`${head}.${body}`).sign(createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })));
    return `${head}.${body}.${sig.toString('base64url')}`;
}

// The TypeScript SDK v2 client with its client-credentials provider, connected to url (whose
// 401 names the authorization server issuer): {client, transport}.
const ERAS = [
    ['2025-11-25, with a session', undefined, '2025-11-25'],
    ['2026-07-28, pinned', { mode: { pin: '2026-07-28' } }, '2026-07-28'],
];
async function connectWithOAuth(url, issuerUrl, versionNegotiation) {
    const provider = new ClientCredentialsProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
        scope: 'mcp:tools', expectedIssuer: issuerUrl });
    const client = new Client({ name: 'ts2-client-credentials', version: '1' },
        versionNegotiation ? { versionNegotiation } : undefined);
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await deadline(client.connect(transport), 20_000, `connect to ${url} with OAuth`);
    return { client, transport };
}

describe('mcp-everything behind oidc-provider', () => {
    before(async () => {
        const port = await freePort();
        resource = `https://127.0.0.1:${port}/mcp`;
        other = 'http://127.0.0.1:1/another-server';
        as = await startAuthServer({ keys: [key1], resources: { [resource]: 'mcp:tools other', [other]: 'mcp:tools' } });
        asPort = as.port;
        issuer = as.issuer;
        server = await startEverything(BIN, ['--http', `127.0.0.1:${port}`, '--tls-cert', tls.cert, '--tls-key', tls.key,
            '--auth-resource', resource,
            '--auth-issuer', as.issuer, '--auth-scope', 'mcp:tools',
            // resources/list needs the scope "other" besides (mcp_auth_opts.method_scopes).
            '--auth-method-scope', 'resources/list=other',
            // Rotation is tested at once: no minimum time between two fetches of the keys.
            '--auth-jwks-min-refresh-ms', '0']);
    });
    after(async () => {
        await server?.stop();
        await as?.stop();
    });

    test('a token the authorization server issued for this server gets in', async () => {
        const res = await initialize(await as.token(resource, 'mcp:tools'));
        assert.equal(res.status, 200, await res.clone().text());
        assert.match(res.headers.get('mcp-session-id') ?? '', /^[0-9a-f]{32}$/);
    });

    test('its other tokens are refused, each with the reason', async () => {
        const cases = [
            // No resource indicator: an opaque token, not a JWT.
            [await as.token(undefined, 'mcp:tools'), 401, 'The access token is not a signed JWT'],
            [await as.token(other, 'mcp:tools'), 401, 'The access token was issued for another resource'],
            [await as.token(resource, 'other'), 403, 'The access token lacks a scope this server requires'],
        ];
        for (const [token, status, reason] of cases) {
            const res = await initialize(token);
            assert.equal(res.status, status, reason);
            assert.ok((res.headers.get('www-authenticate') ?? '').includes(`error_description="${reason}"`),
                res.headers.get('www-authenticate'));
        }
    });

    for (const [era, versionNegotiation, version] of ERAS) {
        test(`the TypeScript SDK v2 client discovers everything from our 401 and calls tools over HTTPS (${era})`, async () => {
            assert.ok(resource.startsWith('https://'));
            const { client, transport } = await connectWithOAuth(resource, as.issuer, versionNegotiation);
            assert.equal(client.getNegotiatedProtocolVersion(), version);
            assert.equal(transport.sessionId !== undefined, version === '2025-11-25', 'a session only in 2025-11-25');
            const tools = await client.listTools();
            assert.ok(tools.tools.some((t) => t.name === 'echo'));
            const r = await client.callTool({ name: 'echo', arguments: { text: 'behind OAuth' } });
            assert.match(JSON.stringify(r.content), /behind OAuth/);
            await client.close();
        });
    }

    test('/metrics counts each authorization outcome', async () => {
        const metrics = async () => {
            const res = await fetch(new URL('/metrics', resource));
            assert.equal(res.status, 200);
            const text = await res.text();
            const get = (re) => Number(text.match(re)?.[1] ?? NaN);
            const out = { cached: get(/^mcp_http_auth_cache_hits_total (\d+)$/m) };
            for (const o of ['passed', 'no_token', 'invalid_token', 'insufficient_scope', 'invalid_request', 'unavailable'])
                out[o] = get(new RegExp(`^mcp_http_auth_requests_total\\{outcome="${o}"\\} (\\d+)$`, 'm'));
            return out;
        };
        const before = await metrics();
        const good = await as.token(resource, 'mcp:tools');
        assert.equal((await initialize(undefined)).status, 401);
        assert.equal((await initialize(good)).status, 200);
        assert.equal((await initialize(good)).status, 200);
        assert.equal((await initialize('not-a-token-of-anyone')).status, 401);
        assert.equal((await initialize(await as.token(resource, 'other'))).status, 403);
        // Let in by the gate, refused for its method's scope: one outcome, not two.
        const list = await fetch(resource, { method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                authorization: `Bearer ${good}` },
            body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/list' }) });
        assert.equal(list.status, 403);
        assert.match(list.headers.get('www-authenticate') ?? '', /scope="mcp:tools other"/);
        const q = await fetch(`${resource}?access_token=${good}`, { method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify(INIT) });
        assert.equal(q.status, 400);
        const after = await metrics();
        const delta = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
        assert.deepEqual(delta, { cached: 2, passed: 2, no_token: 1, invalid_token: 1, insufficient_scope: 2,
            invalid_request: 1, unavailable: 0 });
    });

    test('keys rotated at the authorization server are taken without a restart', async () => {
        const old = await as.token(resource, 'mcp:tools');
        await as.stop();
        const key2 = signingKey();
        as = await startAuthServer({ port: asPort, keys: [key2, key1], resources: { [resource]: 'mcp:tools other' } });
        const fresh = await as.token(resource, 'mcp:tools');
        assert.notEqual(JSON.parse(Buffer.from(fresh.split('.')[0], 'base64url')).kid, key1.kid);
        assert.equal((await initialize(fresh)).status, 200, 'a token of the new key');
        assert.equal((await initialize(old)).status, 200, 'a token of the old key, still published');
    });

    test('with the authorization server down, known keys work and unknown ones get 503', async () => {
        const unused = await as.token(resource, 'mcp:tools');
        await as.stop();
        as = undefined;
        let t0 = Date.now();
        assert.equal((await initialize(unused)).status, 200, 'a known key needs no fetch');
        const known = Date.now() - t0;
        t0 = Date.now();
        const res = await initialize(foreignToken());
        const refused = Date.now() - t0;
        assert.equal(res.status, 503, await res.clone().text());
        assert.equal(res.headers.get('www-authenticate'), null);
        // Unreachable in the worse way: something accepts on its port and never answers. The
        // fetch of the keys gives up at its timeout (5 s by default), and the request gets 503.
        const silent = net.createServer(() => {});
        await new Promise((resolve) => silent.listen(asPort, '127.0.0.1', resolve));
        try {
            t0 = Date.now();
            const res2 = await deadline(initialize(foreignToken()), 30_000, 'a token while the server is silent');
            const timedOut = Date.now() - t0;
            assert.equal(res2.status, 503, await res2.clone().text());
            console.log(`# authorization server down: known key ${known} ms (200); unknown key ${refused} ms ` +
                `(503, connection refused); unknown key ${timedOut} ms (503, server silent)`);
        } finally {
            silent.close();
        }
    });
});

describe('mcp-everything checking opaque tokens by introspection', () => {
    let as2, srv2, res2, jwtResource, otherOpaque, dir;
    const init = (token) =>
        fetch(res2, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
            body: JSON.stringify(INIT),
        });
    before(async () => {
        const port = await freePort();
        res2 = `http://127.0.0.1:${port}/mcp`;
        jwtResource = 'http://127.0.0.1:1/jwt-server';
        otherOpaque = 'http://127.0.0.1:1/opaque-server';
        as2 = await startAuthServer({
            resources: {
                [res2]: { scope: 'mcp:tools', opaque: true },
                [otherOpaque]: { scope: 'mcp:tools', opaque: true },
                [jwtResource]: 'mcp:tools',
            },
        });
        dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-introspect-'));
        const secretFile = path.join(dir, 'secret');
        writeFileSync(secretFile, `${SERVER_SECRET}\n`, { mode: 0o600 });
        srv2 = await startEverything(BIN, ['--http', `127.0.0.1:${port}`, '--auth-resource', res2,
            '--auth-introspection-endpoint', as2.introspection, '--auth-client-id', SERVER_ID,
            '--auth-client-secret-file', secretFile, '--auth-scope', 'mcp:tools',
            // A verification is trusted for a second at most: a token revoked after it was
            // cached is refused once that is over.
            '--auth-cache-ttl-ms', '1000']);
    });
    after(async () => {
        await srv2?.stop();
        await as2?.stop();
        if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('an opaque token for this server gets in; a revoked one and another server\'s do not', async () => {
        const good = await as2.token(res2, 'mcp:tools');
        assert.equal(good.split('.').length, 1, 'an opaque token');
        const ok = await init(good);
        assert.equal(ok.status, 200, await ok.clone().text());
        const revoked = await as2.token(res2, 'mcp:tools');
        await as2.revoke(revoked);
        const gone = await init(revoked);
        assert.equal(gone.status, 401);
        assert.match(gone.headers.get('www-authenticate') ?? '', /error_description="The access token is not active"/);
        const elsewhere = await init(await as2.token(otherOpaque, 'mcp:tools'));
        assert.equal(elsewhere.status, 401);
        assert.match(elsewhere.headers.get('www-authenticate') ?? '', /issued for another resource/);
        // A JWT access token: oidc-provider does not introspect those (400 unsupported_token_type),
        // which is about the token: 401, not an outage.
        const jwt = await init(await as2.token(jwtResource, 'mcp:tools'));
        assert.equal(jwt.status, 401);
        assert.match(jwt.headers.get('www-authenticate') ?? '', /cannot be introspected/);
    });

    test('a token revoked after it was cached is refused once the cache bound is over', async () => {
        const tok = await as2.token(res2, 'mcp:tools');
        assert.equal((await init(tok)).status, 200, 'introspected, active, cached');
        await as2.revoke(tok);
        const start = Date.now();
        let res;
        for (;;) {
            res = await init(tok);
            if (res.status !== 200 || Date.now() - start > 10_000) break;
            await new Promise((r) => setTimeout(r, 100)); // nothing to await: the bound is a time
        }
        assert.equal(res.status, 401, `still ${res.status} ${Date.now() - start} ms after the revocation`);
        assert.match(res.headers.get('www-authenticate') ?? '', /error_description="The access token is not active"/);
    });
});

describe('mcp-gateway putting OAuth and TLS in front of a stdio server', () => {
    let as3, gw, gwResource;
    before(async () => {
        const port = await freePort();
        gwResource = `https://127.0.0.1:${port}/mcp`;
        as3 = await startAuthServer({ resources: { [gwResource]: 'mcp:tools' } });
        gw = await startListening('mcp-gateway', path.join(BIN, 'mcp-gateway'), ['--http', `127.0.0.1:${port}`,
            '--tls-cert', tls.cert, '--tls-key', tls.key, '--auth-resource', gwResource, '--auth-issuer', as3.issuer,
            '--auth-scope', 'mcp:tools', '--log-level', 'info', '--', path.join(BIN, 'mcp-everything'), '--stdio'],
        /^mcp-gateway: listening on (https:\/\/127\.0\.0\.1:(\d+)\/mcp)$/, { ms: 15_000 });
    });
    after(async () => {
        await gw?.stop();
        await as3?.stop();
    });

    test('no token: 401 with the challenge, over TLS', async () => {
        const res = await fetch(gwResource, { method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify(INIT) });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="https:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp:tools"$/);
    });

    for (const [era, versionNegotiation, version] of ERAS) {
        test(`the TypeScript SDK v2 client gets a token and calls the stdio server's tools (${era})`, async () => {
            const { client } = await connectWithOAuth(gwResource, as3.issuer, versionNegotiation);
            assert.equal(client.getNegotiatedProtocolVersion(), version);
            const r = await client.callTool({ name: 'echo', arguments: { text: 'through the gateway' } });
            assert.match(JSON.stringify(r.content), /through the gateway/);
            await client.close();
        });
    }

    test('SIGHUP reads the certificate again', async () => {
        gw.child.kill('SIGHUP');
        await deadline(new Promise((resolve) => {
            const check = () => (gw.stderr().includes('certificate reloaded') ? resolve() : setTimeout(check, 20));
            check();
        }), 10_000, 'the gateway to say it reloaded its certificate');
        const res = await fetch(new URL('/healthz', gwResource));
        assert.equal(res.status, 200);
    });
});
