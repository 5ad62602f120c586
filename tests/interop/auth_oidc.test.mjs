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
// Run by CTest as `node auth_oidc.test.mjs` in tests/interop with MCP_BIN_DIR set.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createSign, generateKeyPairSync } from 'node:crypto';

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startAuthServer, signingKey, CLIENT_ID, CLIENT_SECRET } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { deadline, overallDeadline, startEverything } from './lib/http.mjs';

overallDeadline(120_000);

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

describe('mcp-everything behind oidc-provider', () => {
    before(async () => {
        const port = await freePort();
        resource = `http://127.0.0.1:${port}/mcp`;
        other = 'http://127.0.0.1:1/another-server';
        as = await startAuthServer({ keys: [key1], resources: { [resource]: 'mcp:tools other', [other]: 'mcp:tools' } });
        asPort = as.port;
        issuer = as.issuer;
        server = await startEverything(BIN, ['--http', `127.0.0.1:${port}`, '--auth-resource', resource,
            '--auth-issuer', as.issuer, '--auth-scope', 'mcp:tools',
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

    test('the TypeScript SDK v2 client discovers everything from our 401 and calls tools', async () => {
        const provider = new ClientCredentialsProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
            scope: 'mcp:tools', expectedIssuer: as.issuer });
        const client = new Client({ name: 'ts2-client-credentials', version: '1' });
        const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
        await deadline(client.connect(transport), 20_000, 'connect with OAuth');
        const tools = await client.listTools();
        assert.ok(tools.tools.some((t) => t.name === 'echo'));
        const r = await client.callTool({ name: 'echo', arguments: { text: 'behind OAuth' } });
        assert.match(JSON.stringify(r.content), /behind OAuth/);
        await client.close();
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
        assert.equal((await initialize(unused)).status, 200, 'a known key needs no fetch');
        const res = await initialize(foreignToken());
        assert.equal(res.status, 503, await res.clone().text());
        assert.equal(res.headers.get('www-authenticate'), null);
    });
});
