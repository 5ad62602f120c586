// SPDX-License-Identifier: MIT
// The authorization server of the examples' OAuth tests, and the few things a shell script
// cannot do by itself. The server is the interop tests' (../interop/lib/authserver.mjs:
// oidc-provider, from npm, installed in tests/interop/node_modules by `npm ci`).
//
//   node authserver.mjs serve RESOURCE...
//       Serves on a free loopback port, issuing JWT access tokens for each RESOURCE (a URL;
//       port 0 in it is replaced by a free port) with the scopes "mcp:tools other", by the
//       client credentials grant (a client registered beforehand) and the authorization
//       code grant (dynamic registration; the user "user" approves whatever is asked).
//       Prints on stdout "client ID SECRET" (the registered client), "resource URL" for
//       each resource, then "grant TYPE" for each token issued; on stderr "authserver:
//       listening on ISSUER". Runs until killed.
//   node authserver.mjs token ISSUER RESOURCE SCOPE
//       Prints an access token of the client $MCP_CLIENT_ID, whose secret is
//       $MCP_CLIENT_SECRET (the client credentials grant).
//   node authserver.mjs http METHOD URL [TOKEN]
//       Sends METHOD URL (a POST carries an initialize request) with TOKEN as a bearer
//       token, and prints the status, the WWW-Authenticate header and the body.
//   node authserver.mjs browse URL
//       Plays the user's browser: opens the authorization URL URL, follows the server's
//       pages until it redirects elsewhere (the client's redirect_uri), then opens that.

import net from 'node:net';

const [mode, ...args] = process.argv.slice(2);
// Loaded only by the modes that need it (oidc-provider takes a while to load).
const lib = () => import('../interop/lib/authserver.mjs');
const ms = 10_000;

async function freePort() {
    const srv = net.createServer();
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address();
    await new Promise((resolve) => srv.close(resolve));
    return port;
}

if (mode === 'serve') {
    const resources = {};
    for (const arg of args) {
        const url = new URL(arg);
        if (url.port === '0') url.port = String(await freePort());
        resources[url.href] = 'mcp:tools other';
    }
    const { startAuthServer, CLIENT_ID, CLIENT_SECRET } = await lib();
    const as = await startAuthServer({ resources, authorizationCode: true });
    as.provider.on('grant.success', (ctx) => console.log(`grant ${ctx.oidc.params.grant_type}`));
    console.log(`client ${CLIENT_ID} ${CLIENT_SECRET}`);
    for (const r of Object.keys(resources)) console.log(`resource ${r}`);
    console.error(`authserver: listening on ${as.issuer}`);
} else if (mode === 'token') {
    const [issuer, resource, scope] = args;
    const { MCP_CLIENT_ID, MCP_CLIENT_SECRET } = process.env;
    const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${MCP_CLIENT_ID}:${MCP_CLIENT_SECRET}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
        signal: AbortSignal.timeout(ms),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`);
    console.log(json.access_token);
} else if (mode === 'http') {
    const [method, url, token] = args;
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const body = method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })
        : undefined;
    const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(ms) });
    console.log(`status ${res.status}`);
    console.log(`www-authenticate: ${res.headers.get('www-authenticate') ?? ''}`);
    console.log(await res.text());
} else if (mode === 'browse') {
    const { CookieJar } = await lib();
    const jar = new CookieJar();
    let url = new URL(args[0]);
    const origin = url.origin;
    for (let hop = 0; url.origin === origin; hop++) {
        if (hop === 20) throw new Error(`more than 20 redirects from ${args[0]}`);
        const cookie = jar.header(url);
        const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(ms) });
        jar.store(url, res.headers.getSetCookie());
        const location = res.headers.get('location');
        const page = await res.text();
        if (!location) throw new Error(`${url}: ${res.status} without a redirect: ${page.slice(0, 300)}`);
        url = new URL(location, url);
    }
    const res = await fetch(url, { signal: AbortSignal.timeout(ms) }); // the client's listener
    console.log(`the client's redirect_uri answered ${res.status}`);
} else {
    throw new Error('usage: node authserver.mjs serve RESOURCE... | token ISSUER RESOURCE SCOPE | http METHOD URL [TOKEN] | browse URL');
}
