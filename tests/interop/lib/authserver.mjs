// A real authorization server for the authorization tests: oidc-provider (npm, pinned in
// package.json; a certified OpenID Connect / OAuth 2.1 server) in this process, on a free
// loopback port, with resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068)
// for the resources the test names, the client credentials grant, introspection and
// revocation. Its signing keys are made here, so that a test can rotate them.

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

export const CLIENT_ID = 'mcp-test-client';
export const CLIENT_SECRET = 'mcp-test-secret-that-is-long-enough';
// The MCP server's own client, for introspection.
export const SERVER_ID = 'mcp-test-server';
export const SERVER_SECRET = 'mcp-test-server-secret-long-enough';

// A fresh RS256 signing key as a private JWK.
export function signingKey() {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

// Starts the server on port (0: a free one) with keys (private JWKs, the first signs) for the
// resources, {uri: scope} (JWT access tokens) or {uri: {scope, opaque: true}}. Resolves with
// {issuer, port, token(resource, scope), revoke(token), introspection (its URL), stop()}.
export async function startAuthServer({ port = 0, keys = [signingKey()], resources }) {
    const server = http.createServer();
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    const bound = server.address().port;
    const issuer = `http://127.0.0.1:${bound}`;
    const scopeOf = (r) => (typeof r === 'string' ? r : r.scope);
    const scopes = [...new Set(Object.values(resources).flatMap((r) => scopeOf(r).split(' ')))];
    const provider = new Provider(issuer, {
        clients: [
            {
                client_id: SERVER_ID,
                client_secret: SERVER_SECRET,
                grant_types: [],
                redirect_uris: [],
                response_types: [],
                token_endpoint_auth_method: 'client_secret_basic',
            },
            {
                client_id: CLIENT_ID,
                client_secret: CLIENT_SECRET,
                grant_types: ['client_credentials'],
                redirect_uris: [],
                response_types: [],
                token_endpoint_auth_method: 'client_secret_basic',
                scope: scopes.join(' '),
            },
        ],
        jwks: { keys },
        scopes,
        features: {
            clientCredentials: { enabled: true },
            introspection: { enabled: true },
            revocation: { enabled: true },
            devInteractions: { enabled: false },
            resourceIndicators: {
                enabled: true,
                defaultResource: () => undefined,
                useGrantedResource: () => true,
                getResourceServerInfo: (ctx, indicator) => {
                    if (!(indicator in resources)) throw new errors.InvalidTarget();
                    const r = resources[indicator];
                    const opaque = typeof r !== 'string' && r.opaque;
                    return {
                        scope: scopeOf(r),
                        audience: indicator,
                        accessTokenTTL: 600,
                        accessTokenFormat: opaque ? 'opaque' : 'jwt',
                        ...(opaque ? {} : { jwt: { sign: { alg: 'RS256' } } }),
                    };
                },
            },
        },
    });
    provider.proxy = false;
    const callback = provider.callback();
    // No keep-alive: a test restarts the server on its port, and a pooled connection to
    // the old one would fail the next request.
    server.on('request', (req, res) => {
        res.shouldKeepAlive = false;
        callback(req, res);
    });
    // The client credentials grant, as a client would ask for a token (resource NULL: none).
    const token = async (resource, scope) => {
        const body = new URLSearchParams({ grant_type: 'client_credentials' });
        if (scope) body.set('scope', scope);
        if (resource) body.set('resource', resource);
        const res = await fetch(`${issuer}/token`, {
            method: 'POST',
            headers: {
                authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
                'content-type': 'application/x-www-form-urlencoded',
            },
            body,
        });
        const json = await res.json();
        if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`);
        return json.access_token;
    };
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    const revoke = async (tok) => {
        const res = await fetch(`${issuer}/token/revocation`, {
            method: 'POST',
            headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ token: tok }),
        });
        if (!res.ok) throw new Error(`revocation endpoint: ${res.status} ${await res.text()}`);
    };
    const stop = () =>
        new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        });
    return { issuer, port: bound, token, revoke, introspection: `${issuer}/token/introspection`, stop };
}
