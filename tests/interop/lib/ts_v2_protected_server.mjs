// An MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0) protected by the
// SDK's own authorization helpers, as a resource server of an external authorization server
// (lib/authserver.mjs in the tests): the peer of oauth_client_ts2.test.mjs, where libmcp's OAuth
// client (the mcp CLI) signs in to it. Nothing of libmcp here.
//
//   - requireBearerAuth (the SDK's fetch-shaped gate) with a verifier of our own: the JWT access
//     token (RFC 9068, typ at+jwt) checked with jose against the issuer's JWKS, its iss, and its
//     aud, reported as AuthInfo.resource so that the gate's expectedResource compares it with
//     this server's URL; requiredScopes: the read scope on every request.
//   - oauthMetadataResponse: the Protected Resource Metadata (RFC 9728) at the path-inserted
//     /.well-known/oauth-protected-resource/mcp, and the issuer's own metadata passed through at
//     /.well-known/oauth-authorization-server; getOAuthProtectedResourceMetadataUrl for the
//     challenges' resource_metadata.
//   - a per-tool scope challenge (registerTool's scopeChallenge: requireScopes): write_note
//     needs the write scope too, else 403 insufficient_scope naming it.
//   - createMcpHandler (the 2026-07-28 Streamable HTTP entry, with its stateless fallback for
//     older clients) served by @hono/node-server.
//
// Usage: node lib/ts_v2_protected_server.mjs --issuer URL [--port N] [--read-scope S]
//        [--write-scope S]
//   Listens on 127.0.0.1:N (0, the default: a free port); the server's URL and resource are
//   http://127.0.0.1:<port>/mcp. Once listening it prints
//   "ts-v2-protected: listening on http://127.0.0.1:<port>/mcp" on stdout, and then one line per
//   request the gate refused: "ts-v2-protected: refused <status> <WWW-Authenticate>", and one
//   per request let in: "ts-v2-protected: accepted <method> <jti> <scope>".
//
// Tools: whoami -> "<sub> <scopes>"; echo {text} -> text; write_note {text} (needs the write
// scope) -> "noted: <text>".

import { serve } from '@hono/node-server';
import {
    createMcpHandler,
    getOAuthProtectedResourceMetadataUrl,
    McpServer,
    OAuthError,
    OAuthErrorCode,
    oauthMetadataResponse,
    requireBearerAuth,
    requireScopes,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as z from 'zod/v4';

function option(name, fallback) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const ISSUER = option('--issuer');
const PORT = Number(option('--port', '0'));
const READ = option('--read-scope', 'mcp:read');
const WRITE = option('--write-scope', 'mcp:write');
if (!ISSUER) {
    console.error('usage: ts_v2_protected_server.mjs --issuer URL [--port N]');
    process.exit(2);
}

const asMetadata = await (await fetch(new URL('/.well-known/oauth-authorization-server', ISSUER),
    { signal: AbortSignal.timeout(10_000) })).json();
const jwks = createRemoteJWKSet(new URL(asMetadata.jwks_uri));

const text = (t) => ({ content: [{ type: 'text', text: t }] });

function buildServer({ authInfo } = {}) {
    const server = new McpServer({ name: 'ts-v2-protected', version: '2.4.0' }, { capabilities: { tools: {} } });
    server.registerTool('whoami', { description: 'Who the token is for, and its scopes' },
        async (ctx) => {
            const info = ctx?.http?.authInfo ?? authInfo;
            return text(`${info?.extra?.sub ?? '?'} ${(info?.scopes ?? []).join(' ')}`);
        });
    server.registerTool('echo', { description: 'Echo the text', inputSchema: z.object({ text: z.string() }) },
        async ({ text: t }) => text(t));
    server.registerTool('write_note', {
        description: `Write a note (needs the scope ${WRITE})`,
        inputSchema: z.object({ text: z.string() }),
        scopeChallenge: requireScopes(WRITE),
    }, async ({ text: t }) => text(`noted: ${t}`));
    return server;
}

// The verifier (the SDK's OAuthTokenVerifier): a signed JWT access token of ISSUER, unexpired.
// The audience is reported as AuthInfo.resource and compared by the gate (expectedResource).
const verifier = {
    async verifyAccessToken(token) {
        let payload;
        try {
            ({ payload } = await jwtVerify(token, jwks, { issuer: asMetadata.issuer, typ: 'at+jwt' }));
        } catch (e) {
            throw new OAuthError(OAuthErrorCode.InvalidToken, `The access token does not verify: ${e.code ?? e.message}`);
        }
        const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
        let resource;
        try {
            resource = aud ? new URL(aud) : undefined;
        } catch {
            resource = undefined;
        }
        return {
            token,
            clientId: String(payload.client_id ?? ''),
            scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
            expiresAt: payload.exp,
            resource,
            extra: { sub: payload.sub, jti: payload.jti },
        };
    },
};

let gate;
let metadataOptions;
const log = (line) => process.stdout.write(`ts-v2-protected: ${line}\n`);
const handler = createMcpHandler(buildServer);

async function serveRequest(request) {
    const metadata = oauthMetadataResponse(request, metadataOptions);
    if (metadata) return metadata;
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found', { status: 404 });
    const auth = await gate(request);
    if (auth instanceof Response) {
        log(`refused ${auth.status} ${auth.headers.get('www-authenticate') ?? ''}`);
        return auth;
    }
    const response = await handler.fetch(request, { authInfo: auth });
    if (response.status === 403) log(`refused 403 ${response.headers.get('www-authenticate') ?? ''}`);
    else log(`accepted ${request.method} ${auth.extra.jti} ${auth.scopes.join(' ')}`);
    return response;
}

serve({ fetch: (request) => serveRequest(request), port: PORT, hostname: '127.0.0.1' }, (info) => {
    const resource = new URL(`http://127.0.0.1:${info.port}/mcp`);
    metadataOptions = {
        oauthMetadata: asMetadata,
        resourceServerUrl: resource,
        scopesSupported: [READ, WRITE],
        resourceName: 'ts-v2-protected',
    };
    gate = requireBearerAuth({
        verifier,
        requiredScopes: [READ],
        resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
        expectedResource: resource,
    });
    log(`listening on ${resource.href}`);
});
