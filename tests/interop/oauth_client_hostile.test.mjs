// Interop: libmcp's OAuth client (src/oauth/, driven through the `mcp` CLI: `mcp login`, `mcp URL
// tools list`) against a hostile or broken authorization server.
//
// Each test builds its own small world on 127.0.0.1 (free ports): a protected MCP server that
// answers every request without a valid Bearer token with 401 and
// `WWW-Authenticate: Bearer resource_metadata="<PRM URL>"`, its Protected Resource Metadata
// (RFC 9728) that names the authorization server, and a fake authorization server: RFC 8414
// metadata, dynamic registration, an authorization endpoint that redirects to the client's
// loopback redirect_uri with code, state and iss, a token endpoint that checks PKCE, and a device
// authorization endpoint. Each test then breaks one thing and checks that the client ends with a
// clear error (exit status 6 and a line on stderr naming the problem), within a bounded time,
// having hit (or not) the endpoints it should.
//
// The test plays the browser: it reads the authorization URL the child prints on stderr ("To sign
// in, open this URL in a browser:\n\n  URL"), GETs it from the fake authorization server (which
// answers 302 to http://127.0.0.1:PORT/callback?code=...&state=...&iss=...) and GETs that.
//
// Run as `MCP_BIN_DIR=/path/to/build/bin node oauth_client_hostile.test.mjs` in tests/interop.
// Every child gets a fresh XDG_STATE_HOME, MCP_NO_BROWSER=1 and a kill timer; every child still
// running at the end is killed; every wait is bounded.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { overallDeadline, spawnDying } from './lib/http.mjs';

overallDeadline(60_000);

const BIN_DIR = process.env.MCP_BIN_DIR ?? path.resolve(import.meta.dirname ?? '.', '../../build/bin');
const MCP = path.join(BIN_DIR, 'mcp');
assert.ok(existsSync(MCP), `${MCP} does not exist (set MCP_BIN_DIR)`);

const EXIT_AUTH = 6;
const CHILD_KILL_MS = 20_000; // a child still running after this is killed (and the test fails)
const RUN_BOUND_MS = 20_000; // the longest a failing run may take
const FETCH_MS = 5_000; // each of the test's own HTTP requests
const LOGIN_TIMEOUT = '15000'; // mcp login --timeout: how long it waits for the "user"
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const SIGN_IN_RE = /To sign in, open this URL in a browser:\n\n {2}(\S+)\n/g;

// ---- Bookkeeping: children, servers, temp dirs; all undone at the end ----

const children = new Set();
const servers = new Set();
const tempDirs = [];

after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(
        [...servers].map(
            (s) =>
                new Promise((resolve) => {
                    s.closeAllConnections?.();
                    s.close(() => resolve());
                }),
        ),
    );
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

function freshStateDir() {
    const d = mkdtempSync(path.join(os.tmpdir(), 'mcp-oauth-hostile-'));
    tempDirs.push(d);
    return d;
}

const rand = (n = 16) => randomBytes(n).toString('hex');
const b64url = (buf) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

// An HTTP server on 127.0.0.1:0 that logs every request into log as {server, method, path, query,
// auth, body} and hands it, with its body read, to handler(req, res, body, url).
async function startServer(name, log, handler) {
    const server = http.createServer((req, res) => {
        const chunks = [];
        let size = 0;
        req.on('data', (c) => {
            size += c.length;
            if (size < 1 << 20) chunks.push(c);
        });
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            const url = new URL(req.url, 'http://127.0.0.1');
            log.push({
                server: name,
                method: req.method,
                path: url.pathname,
                query: url.searchParams,
                auth: req.headers.authorization ?? null,
                headers: req.headers,
                body,
                at: Date.now(),
            });
            try {
                handler(req, res, body, url);
            } catch (e) {
                res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e));
            }
        });
    });
    servers.add(server);
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
    });
    const port = server.address().port;
    return { server, port, origin: `http://127.0.0.1:${port}` };
}

function json(res, status, obj, headers = {}) {
    const text = typeof obj === 'string' ? obj : JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(text);
}

// ---- The world: MCP server, PRM, authorization server ----
//
// o (all optional):
//   prmElsewhere   the PRM on a third server (another port) instead of the MCP server
//   prm(doc, w)    changes the PRM document
//   prmRoute(req, res, w)    answers the PRM request itself when it returns true
//   meta(doc, w)   changes the AS metadata
//   metaRoute(req, res, w)   answers a metadata request itself when it returns true
//   token(form, res, w)      answers a token request itself when it returns true
//   device(form, res, w)     answers the device authorization request
//   acceptTokens   false: the MCP server refuses every token (default true)
//   keepAliveMs    the AS's keep-alive timeout (node's default is 5 s)
async function makeWorld(o = {}) {
    const log = [];
    const w = {
        log,
        o,
        clients: new Map(),
        codes: new Map(),
        tokens: new Set(),
        refreshTokens: new Set(),
        acceptTokens: o.acceptTokens ?? true,
        hits: (server, p, method) => log.filter((e) => e.server === server && (p === undefined || e.path === p) && (method === undefined || e.method === method)),
    };

    w.issueTokens = (extra = {}) => {
        const at = `at-${rand()}`;
        const rt = `rt-${rand()}`;
        w.tokens.add(at);
        w.refreshTokens.add(rt);
        return { access_token: at, token_type: 'Bearer', expires_in: 3600, refresh_token: rt, ...extra };
    };

    const prmDoc = () => {
        const doc = { resource: w.mcpUrl, authorization_servers: [w.issuer], bearer_methods_supported: ['header'] };
        return o.prm ? o.prm(doc, w) : doc;
    };
    const servePrm = (req, res) => {
        if (o.prmRoute?.(req, res, w)) return;
        json(res, 200, prmDoc());
    };

    const mcpHandler = (req, res, body, url) => {
        if (url.pathname === '/.well-known/oauth-protected-resource/mcp' && !o.prmElsewhere) return servePrm(req, res);
        if (url.pathname !== '/mcp') return json(res, 404, { error: 'not_found' });
        const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
        if (!m || !w.tokens.has(m[1]) || !w.acceptTokens) {
            res.writeHead(401, {
                'www-authenticate': `Bearer resource_metadata="${w.prmUrl}"`,
                'content-type': 'application/json',
            }).end(JSON.stringify({ error: 'invalid_token' }));
            return;
        }
        if (req.method === 'GET') return res.writeHead(405, { allow: 'POST' }).end();
        if (req.method === 'DELETE') return res.writeHead(204).end();
        let msg;
        try {
            msg = JSON.parse(body);
        } catch {
            return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
        }
        if (msg.id === undefined || msg.method === undefined) return res.writeHead(202).end();
        let result;
        if (msg.method === 'initialize') {
            result = {
                protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'fake-protected', version: '1.0.0' },
            };
        } else if (msg.method === 'tools/list') {
            result = { tools: [{ name: 'hostile_probe', description: 'a tool', inputSchema: { type: 'object' } }] };
        } else if (msg.method === 'ping') {
            result = {};
        } else {
            return json(res, 200, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
        }
        json(res, 200, { jsonrpc: '2.0', id: msg.id, result });
    };

    const asHandler = (req, res, body, url) => {
        const p = url.pathname;
        if (p.startsWith('/.well-known/')) {
            if (o.metaRoute?.(req, res, w)) return;
            if (p !== '/.well-known/oauth-authorization-server') return json(res, 404, { error: 'not_found' });
            const doc = {
                issuer: w.issuer,
                authorization_endpoint: `${w.issuer}/authorize`,
                token_endpoint: `${w.issuer}/token`,
                registration_endpoint: `${w.issuer}/register`,
                device_authorization_endpoint: `${w.issuer}/device`,
                code_challenge_methods_supported: ['S256'],
                response_types_supported: ['code'],
                grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT],
                token_endpoint_auth_methods_supported: ['none'],
            };
            return json(res, 200, o.meta ? o.meta(doc, w) : doc);
        }
        if (p === '/register' && req.method === 'POST') {
            let md;
            try {
                md = JSON.parse(body);
            } catch {
                return json(res, 400, { error: 'invalid_client_metadata' });
            }
            const client_id = `client-${rand(8)}`;
            w.clients.set(client_id, md);
            return json(res, 201, {
                ...md,
                client_id,
                client_id_issued_at: Math.floor(Date.now() / 1000),
                token_endpoint_auth_method: 'none',
            });
        }
        if (p === '/authorize' && req.method === 'GET') {
            const q = url.searchParams;
            const client = w.clients.get(q.get('client_id'));
            const redirect = q.get('redirect_uri');
            if (!client || !(client.redirect_uris ?? []).includes(redirect) || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge') || !q.get('state')) {
                return res.writeHead(400, { 'content-type': 'text/plain' }).end('bad authorization request');
            }
            const code = `code-${rand()}`;
            w.codes.set(code, { challenge: q.get('code_challenge'), redirect, client_id: q.get('client_id') });
            const back = new URL(redirect);
            back.searchParams.set('code', code);
            back.searchParams.set('state', q.get('state'));
            back.searchParams.set('iss', w.issuer);
            return res.writeHead(302, { location: back.href }).end();
        }
        if (p === '/device' && req.method === 'POST') {
            const form = new URLSearchParams(body);
            if (o.device) return o.device(form, res, w);
            return json(res, 200, {
                device_code: `dc-${rand()}`,
                user_code: 'ABCD-EFGH',
                verification_uri: `${w.issuer}/activate`,
                expires_in: 60,
                interval: 1,
            });
        }
        if (p === '/token' && req.method === 'POST') {
            const form = new URLSearchParams(body);
            if (o.token?.(form, res, w)) return;
            const grant = form.get('grant_type');
            if (grant === 'authorization_code') {
                const c = w.codes.get(form.get('code'));
                w.codes.delete(form.get('code'));
                const verifier = form.get('code_verifier') ?? '';
                if (!c || c.redirect !== form.get('redirect_uri') || c.client_id !== form.get('client_id') || b64url(createHash('sha256').update(verifier).digest()) !== c.challenge) {
                    return json(res, 400, { error: 'invalid_grant' });
                }
                return json(res, 200, w.issueTokens());
            }
            if (grant === 'refresh_token' && w.refreshTokens.has(form.get('refresh_token'))) return json(res, 200, w.issueTokens());
            return json(res, 400, { error: 'invalid_grant' });
        }
        json(res, 404, { error: 'not_found' });
    };

    const as = await startServer('as', log, asHandler);
    if (o.keepAliveMs) as.server.keepAliveTimeout = o.keepAliveMs;
    const mcp = await startServer('mcp', log, mcpHandler);
    const prm = o.prmElsewhere ? await startServer('prm', log, (req, res, body, url) => (url.pathname === '/.well-known/oauth-protected-resource/mcp' ? servePrm(req, res) : json(res, 404, {}))) : mcp;
    w.as = as;
    w.mcp = mcp;
    w.prm = prm;
    w.issuer = as.origin;
    w.mcpUrl = `${mcp.origin}/mcp`;
    w.prmUrl = `${prm.origin}/.well-known/oauth-protected-resource/mcp`;
    return w;
}

// ---- The browser ----

// Follows an authorization URL as a browser would: GET it from the authorization server, then
// GET the callback its 302 names. Resolves with {authorizeStatus, callbackStatus, callback}.
async function playBrowser(url) {
    const r = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_MS) });
    await r.arrayBuffer();
    const loc = r.headers.get('location');
    if (r.status !== 302 || !loc) return { authorizeStatus: r.status };
    const cb = await fetch(loc, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_MS) });
    await cb.arrayBuffer();
    return { authorizeStatus: r.status, callbackStatus: cb.status, callback: loc };
}

// ---- The child ----

// Runs `mcp ...args` and resolves with {code, signal, ms, stderr (text), stderrBytes (Buffer),
// stdout, urls (authorization URLs seen), browsed (what browser() resolved with, each)}.
// browser(url), when given, is called for each authorization URL the child prints.
function runMcp(args, { stateDir = freshStateDir(), browser, killMs = CHILD_KILL_MS } = {}) {
    const env = { ...process.env, XDG_STATE_HOME: stateDir, MCP_NO_BROWSER: '1' };
    for (const k of Object.keys(env)) if (/^(https?|all|no)_proxy$/i.test(k)) delete env[k];
    const start = Date.now();
    const child = spawnDying(MCP, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const errChunks = [];
    let stdout = '';
    const urls = [];
    const jobs = [];
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => {
        errChunks.push(c);
        const text = Buffer.concat(errChunks).toString('latin1');
        const all = [...text.matchAll(SIGN_IN_RE)];
        while (urls.length < all.length) {
            const url = all[urls.length][1];
            urls.push(url);
            if (browser) jobs.push(browser(url).catch((e) => ({ error: String(e) })));
        }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), killMs);
    return new Promise((resolve) => {
        child.once('close', async (code, signal) => {
            clearTimeout(timer);
            children.delete(child);
            const ms = Date.now() - start;
            const stderrBytes = Buffer.concat(errChunks);
            if (process.env.HOSTILE_DEBUG) console.error(`--- mcp ${args.join(' ')}: exit ${code} in ${ms} ms\n${stderrBytes.toString('utf8')}${stdout}---`);
            resolve({ code, signal, ms, stderr: stderrBytes.toString('utf8'), stderrBytes, stdout, urls, browsed: await Promise.all(jobs), stateDir });
        });
    });
}

const login = (w, opts = {}, extra = []) => runMcp(['login', '--no-browser', '--timeout', LOGIN_TIMEOUT, ...extra, w.mcpUrl], opts);

// The run failed as an authorization failure: exit 6, no signal, within the bound, and stderr has
// a line matching re.
function assertAuthFailure(r, re, what) {
    const info = `${what}: exit ${r.code} signal ${r.signal} after ${r.ms} ms; stderr:\n${r.stderr}`;
    assert.equal(r.signal, null, `killed: ${info}`);
    assert.equal(r.code, EXIT_AUTH, info);
    assert.ok(r.ms < RUN_BOUND_MS, `took too long: ${info}`);
    assert.ok(r.stderr.split('\n').some((line) => re.test(line)), `no stderr line matches ${re}: ${info}`);
}

function assertSignedIn(r, what) {
    assert.equal(r.code, 0, `${what}: exit ${r.code} signal ${r.signal} after ${r.ms} ms; stderr:\n${r.stderr}\nstdout:\n${r.stdout}`);
    assert.match(r.stdout, /^logged in to /m, what);
}

// ---- 1. Wrong issuer ----

test('1. AS metadata with a wrong issuer is refused before registration and authorization', async () => {
    const w = await makeWorld({ meta: (doc) => ({ ...doc, issuer: 'https://evil.example' }) });
    const r = await login(w, { browser: playBrowser });
    assertAuthFailure(r, /issuer "https:\/\/evil\.example", not http:\/\/127\.0\.0\.1:\d+: refused/, 'wrong issuer');
    assert.ok(w.hits('as', '/.well-known/oauth-authorization-server').length >= 1, 'the metadata was fetched');
    assert.deepEqual(w.hits('as', '/register'), [], 'registered with an AS of the wrong issuer');
    assert.deepEqual(w.hits('as', '/authorize'), [], 'authorize was visited');
    assert.deepEqual(w.hits('as', '/token'), [], 'the token endpoint was hit');
    assert.deepEqual(r.urls, [], 'an authorization URL was printed');
});

// ---- 2. PRM resource of another server ----

test('2. a PRM whose resource names another server is refused and the AS never contacted', async () => {
    for (const other of ['http://other.example/mcp', (w) => `http://127.0.0.1:${w.as.port}/mcp`]) {
        const w = await makeWorld({ prm: (doc, w2) => ({ ...doc, resource: typeof other === 'string' ? other : other(w2) }) });
        const r = await login(w, { browser: playBrowser });
        assertAuthFailure(r, /Protected Resource Metadata .* names the resource ".*", not this server .*: refused/, `resource ${other}`);
        assert.ok(w.hits('mcp', '/.well-known/oauth-protected-resource/mcp').length >= 1, 'the PRM was fetched');
        assert.deepEqual(w.hits('as'), [], 'the authorization server was contacted');
    }
});

// ---- 3. Redirects to another origin ----

test('3. a metadata URL that redirects to another origin is not followed', async () => {
    const evilLog = [];
    const evil = await startServer('evil', evilLog, (req, res) => json(res, 200, {}));
    // (a) the AS metadata (both well-known names) answers 302 to the other origin.
    {
        const w = await makeWorld({
            metaRoute: (req, res) => {
                res.writeHead(302, { location: `${evil.origin}${new URL(req.url, 'http://x').pathname}` }).end();
                return true;
            },
        });
        const r = await login(w, { browser: playBrowser });
        assertAuthFailure(r, /no metadata for the authorization server http:\/\/127\.0\.0\.1:\d+/, 'AS metadata redirect');
        assert.ok(w.hits('as').length >= 1 && w.hits('as').every((e) => e.path.startsWith('/.well-known/')), 'only metadata asked of the AS');
        assert.deepEqual(w.hits('as', '/register'), []);
    }
    // (b) the PRM URL the challenge names answers 302 to the other origin.
    {
        const w = await makeWorld({
            prmRoute: (req, res) => {
                res.writeHead(302, { location: `${evil.origin}/.well-known/oauth-protected-resource/mcp` }).end();
                return true;
            },
        });
        const r = await login(w, { browser: playBrowser });
        assertAuthFailure(r, /Protected Resource Metadata the server named cannot be had \(GET at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp: HTTP 302, a redirect \(never followed\)\)/, 'PRM redirect');
        assert.deepEqual(w.hits('as'), [], 'the AS was contacted');
    }
    assert.deepEqual(evilLog.map((e) => `${e.method} ${e.path}`), [], 'the other origin saw requests');
});

// ---- 4. Oversized token response ----

test('4. an oversized (1 MiB) token response is an error that names the size', async () => {
    const w = await makeWorld({
        token: (form, res) => {
            json(res, 200, { access_token: 'A'.repeat(1 << 20), token_type: 'Bearer', expires_in: 3600 });
            return true;
        },
    });
    const r = await login(w, { browser: playBrowser });
    assertAuthFailure(r, /token request at http:\/\/127\.0\.0\.1:\d+\/token: the response is larger than \d+ KiB/, 'oversized');
    assert.equal(w.hits('as', '/token').length, 1, 'one token request');
    assert.equal(r.urls.length, 1);
});

// ---- 5. Malformed token responses ----

test('5. malformed token responses are each a clear error', async () => {
    const cases = [
        ['not JSON', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('this is {not json'), /the token request at http:\/\/127\.0\.0\.1:\d+\/token: HTTP 200/],
        ['a JSON array', (res) => json(res, 200, '[{"access_token":"x","token_type":"Bearer"}]'), /the token request at http:\/\/127\.0\.0\.1:\d+\/token: HTTP 200/],
        ['no access_token', (res) => json(res, 200, { token_type: 'Bearer', expires_in: 3600 }), /the token response has no access_token/],
        ['empty access_token', (res) => json(res, 200, { access_token: '', token_type: 'Bearer' }), /the token response has no access_token/],
        ['no token_type', (res) => json(res, 200, { access_token: 'abc' }), /the token response has no token_type/],
        ['token_type mac', (res) => json(res, 200, { access_token: 'abc', token_type: 'mac' }), /token_type is "mac", neither Bearer nor DPoP/],
        ['access_token with a space', (res) => json(res, 200, { access_token: 'abc def', token_type: 'Bearer' }), /access_token has characters a bearer token cannot have/],
        ['access_token with CR LF', (res) => json(res, 200, { access_token: 'abc\r\nX-Injected: 1', token_type: 'Bearer' }), /access_token has characters a bearer token cannot have/],
        ['access_token with NUL', (res) => json(res, 200, '{"access_token":"abc\\u0000def","token_type":"Bearer"}'), /./],
        ['expires_in negative', (res) => json(res, 200, { access_token: 'abc', token_type: 'Bearer', expires_in: -5 }), /expires_in is not a positive number/],
        ['expires_in a string', (res) => json(res, 200, { access_token: 'abc', token_type: 'Bearer', expires_in: '3600' }), /expires_in is not a positive number/],
    ];
    // Run concurrently, each in its own world and state dir.
    const results = await Promise.all(
        cases.map(async ([name, answer, re]) => {
            const w = await makeWorld({
                token: (form, res) => {
                    answer(res);
                    return true;
                },
            });
            const r = await login(w, { browser: playBrowser });
            return { name, re, r, w };
        }),
    );
    for (const { name, re, r, w } of results) {
        assertAuthFailure(r, re, name);
        assert.equal(w.hits('as', '/token').length, 1, `${name}: one token request`);
        // Nothing was kept as a sign-in, and the MCP server never saw a token.
        assert.ok(w.hits('mcp', '/mcp').every((e) => e.auth === null), `${name}: the MCP server got a token`);
    }
    // NUL: jansson refuses \u0000 by default, so this is "not JSON" (or, if decoded, a bad token).
    const nul = results.find((x) => x.name === 'access_token with NUL').r;
    assert.match(nul.stderr, /token request at .*: HTTP 200|characters a bearer token cannot have/);
});

// A token whose lifetime is under the client's 30 s expiry margin is refreshed a quarter of its
// life before it expires, not before every request.
test('5b. a short-lived token (expires_in 10) is not refreshed before every request', async () => {
    const w = await makeWorld({
        token: (form, res, w2) => {
            json(res, 200, w2.issueTokens({ expires_in: 10 }));
            return true;
        },
    });
    const r = await login(w, { browser: playBrowser });
    assertSignedIn(r, 'login with expires_in 10');
    const grants = w.hits('as', '/token').map((e) => new URLSearchParams(e.body).get('grant_type'));
    assert.deepEqual(grants, ['authorization_code'], `token requests of one login: ${grants.join(', ')} for ${w.hits('mcp', '/mcp').length} MCP requests`);
});

// ---- 6. Control characters in the error ----

test('6. error_description with control characters and ANSI escapes reaches stderr defanged', async () => {
    const evilDesc = '\u001b[31mEVIL\r\nInjected: yes\u0007\u009b2J\u001b]0;title\u0007\ttab\u007fdel';
    const w = await makeWorld({
        token: (form, res) => {
            json(res, 400, { error: 'invalid_grant', error_description: evilDesc });
            return true;
        },
    });
    const r = await login(w, { browser: playBrowser });
    assertAuthFailure(r, /the token request at http:\/\/127\.0\.0\.1:\d+\/token: HTTP 400, invalid_grant/, 'hostile error_description');
    assert.match(r.stderr, /EVIL/, 'the description is shown (made printable)');
    const bad = [...r.stderrBytes].map((b, i) => [b, i]).filter(([b]) => b === 0x1b || b === 0x0d || b === 0x07 || b === 0x00 || b === 0x9b || b === 0x7f || (b < 0x20 && b !== 0x0a));
    assert.deepEqual(bad, [], `raw control bytes on stderr: ${JSON.stringify(r.stderr)}`);
    assert.ok(!r.stderr.split('\n').some((l) => /^Injected: yes/.test(l)), 'a line was injected');

    // The same with the error code itself hostile.
    const w2 = await makeWorld({
        token: (form, res) => {
            json(res, 400, { error: 'invalid_grant\u001b[2J\r\nInjected: code', error_description: 'x' });
            return true;
        },
    });
    const r2 = await login(w2, { browser: playBrowser });
    assertAuthFailure(r2, /the token request at .*: HTTP 400, invalid_grant/, 'hostile error code');
    assert.ok(![...r2.stderrBytes].some((b) => b === 0x1b || b === 0x0d || b === 0x07 || (b < 0x20 && b !== 0x0a) || b >= 0x7f), `raw control bytes on stderr: ${JSON.stringify(r2.stderr)}`);
});

// URLs taken from the PRM and the AS metadata are checked (http or https, printable) before
// they reach a request, a message or the browser.
test('6b. control characters in PRM/AS-metadata URLs never reach stderr raw; a non-http(s) authorization_endpoint is refused', async () => {
    const EVIL = '\u001b[31mEVIL\r\nInjected: yes\u0007';
    const variants = {
        'PRM authorization_servers': { prm: (doc) => ({ ...doc, authorization_servers: [`http://127.0.0.1:9/${EVIL}`] }) },
        registration_endpoint: { meta: (doc, w) => ({ ...doc, registration_endpoint: `${w.issuer}/register${EVIL}` }) },
        token_endpoint: { meta: (doc, w) => ({ ...doc, token_endpoint: `${w.issuer}/token${EVIL}` }), browse: true },
        authorization_endpoint: { meta: (doc, w) => ({ ...doc, authorization_endpoint: `${w.issuer}/authorize${EVIL}` }) },
        'authorization_endpoint file:': { meta: (doc) => ({ ...doc, authorization_endpoint: 'file:///etc/passwd' }), scheme: true },
        'authorization_endpoint javascript:': { meta: (doc) => ({ ...doc, authorization_endpoint: 'javascript:alert(1)//' }), scheme: true },
    };
    const results = await Promise.all(
        Object.entries(variants).map(async ([name, o]) => {
            const w = await makeWorld(o);
            const r = await runMcp(['login', '--no-browser', '--timeout', '1500', w.mcpUrl], { browser: o.browse ? playBrowser : undefined });
            return { name, o, r };
        }),
    );
    const problems = [];
    for (const { name, o, r } of results) {
        if (r.code !== EXIT_AUTH) problems.push(`${name}: exit ${r.code}`);
        const raw = [...r.stderrBytes].filter((b) => b === 0x1b || b === 0x0d || b === 0x07).length;
        if (raw > 0) problems.push(`${name}: ${raw} raw control bytes on stderr: ${JSON.stringify(r.stderr.slice(-300))}`);
        if (o.scheme && r.urls.length > 0) problems.push(`${name}: offered to the browser: ${r.urls[0].slice(0, 40)}`);
    }
    assert.deepEqual(problems, []);
});

// ---- 7. Device flow with endless slow_down ----

test('7. device flow with an endless slow_down ends within the code lifetime after few polls', async () => {
    const w = await makeWorld({
        // The second poll comes ~6 s after the first, a hair after node's 5 s keep-alive timeout
        // closes the idle connection: that race is test 7b's; here the connection stays open.
        keepAliveMs: 30_000,
        device: (form, res) =>
            json(res, 200, {
                device_code: `dc-${rand()}`,
                user_code: 'WDJB-MJHT',
                verification_uri: `${w.issuer}/activate`,
                expires_in: 8,
                interval: 1,
            }),
        token: (form, res) => {
            json(res, 400, { error: 'slow_down' });
            return true;
        },
    });
    const r = await runMcp(['login', '--device', '--no-browser', '--timeout', LOGIN_TIMEOUT, w.mcpUrl]);
    assertAuthFailure(r, /not approved in time.*slow_down/, 'slow_down');
    assert.match(r.stderr, /WDJB-MJHT/, 'the user code was shown');
    assert.ok(r.ms < 8_000 + 4_000, `took ${r.ms} ms for a code that expires in 8 s`);
    const polls = w.hits('as', '/token');
    assert.ok(polls.length >= 1 && polls.length <= 3, `${polls.length} polls`);
    for (const p of polls) assert.equal(p.query.size === 0 && new URLSearchParams(p.body).get('grant_type'), DEVICE_GRANT);
    // Each slow_down adds 5 s to the interval (RFC 8628 §3.5).
    for (let i = 1; i < polls.length; i++) assert.ok(polls[i].at - polls[i - 1].at >= 5_500, `poll ${i} came ${polls[i].at - polls[i - 1].at} ms after the previous`);
    assert.equal(w.hits('as', '/device').length, 1);
});

// When the authorization server closes an idle keep-alive connection just as a device poll is
// sent on it (HTTP/1.1 allows that at any time, RFC 9112 §9.3.1; a poll is safe to repeat),
// the poll is sent again on a new connection. Here the close is made deterministic: the second
// request on a connection is dropped unanswered.
test('7b. a device poll on a keep-alive connection the AS closes is sent again', async () => {
    const perSocket = new WeakMap();
    let polls = 0;
    const w = await makeWorld({
        keepAliveMs: 30_000,
        device: (form, res, w2) => {
            res.setHeader('connection', 'close');
            json(res, 200, { device_code: 'dc-1', user_code: 'KEEP-ALIV', verification_uri: `${w2.issuer}/activate`, expires_in: 30, interval: 1 });
        },
        token: (form, res, w2) => {
            polls++;
            const sock = res.req.socket;
            const n = (perSocket.get(sock) ?? 0) + 1;
            perSocket.set(sock, n);
            if (n >= 2) {
                sock.destroy(); // the server's side of a keep-alive race: closed, no answer
                return true;
            }
            json(res, polls === 1 ? 400 : 200, polls === 1 ? { error: 'authorization_pending' } : w2.issueTokens());
            return true;
        },
    });
    const r = await runMcp(['login', '--device', '--no-browser', '--timeout', LOGIN_TIMEOUT, w.mcpUrl]);
    assert.equal(r.code, 0, `exit ${r.code} after ${r.ms} ms, ${polls} polls; stderr:\n${r.stderr}`);
});

// ---- 8. The MCP server refuses every token ----

test('8. a server that refuses every token: the client gives up after a bounded number of authorizations', async () => {
    const w = await makeWorld({ acceptTokens: false });
    const r = await login(w, { browser: playBrowser });
    assertAuthFailure(r, /refused \d+ new tokens? in a row \(max_reauthorizations\)/, 'endless 401');
    const authorizes = w.hits('as', '/authorize').length;
    const tokens = w.hits('as', '/token').length;
    assert.ok(authorizes >= 1 && authorizes <= 3, `${authorizes} authorizations`);
    assert.ok(tokens >= 1 && tokens <= 3, `${tokens} token requests`);
    assert.equal(w.hits('as', '/register').length, 1, 'the registration is reused');
    assert.ok(w.hits('mcp', '/mcp').length <= 6, `${w.hits('mcp', '/mcp').length} MCP requests`);
});

test('8b. a signed-in client whose refreshed tokens are all refused gives up after a bounded number of refreshes', async () => {
    const w = await makeWorld();
    const stateDir = freshStateDir();
    assertSignedIn(await login(w, { stateDir, browser: playBrowser }), 'first login');
    const before = w.hits('as', '/token').length;
    w.acceptTokens = false;
    const r = await runMcp([w.mcpUrl, 'tools', 'list'], { stateDir });
    assertAuthFailure(r, /max_reauthorizations/, 'refused refreshes');
    const refreshes = w.hits('as', '/token').slice(before);
    assert.ok(refreshes.length >= 1 && refreshes.length <= 3, `${refreshes.length} refreshes`);
    assert.ok(refreshes.every((e) => new URLSearchParams(e.body).get('grant_type') === 'refresh_token'));
    assert.equal(r.urls.length, 0, 'tools list asked for a browser');
});

// ---- 9. The token goes only to the MCP server's origin ----

test('9. the access token is sent to the MCP server only, never to the AS or a PRM on another port', async () => {
    const w = await makeWorld({ prmElsewhere: true });
    const stateDir = freshStateDir();
    assertSignedIn(await login(w, { stateDir, browser: playBrowser }), 'login');
    const r = await runMcp([w.mcpUrl, 'tools', 'list'], { stateDir });
    assert.equal(r.code, 0, `tools list: exit ${r.code}; stderr:\n${r.stderr}`);
    assert.match(r.stdout, /hostile_probe/);
    assert.ok(w.tokens.size >= 1);
    // The MCP server got the token as a Bearer.
    assert.ok(w.hits('mcp', '/mcp').some((e) => w.tokens.has(/^Bearer (\S+)$/.exec(e.auth ?? '')?.[1])), 'the MCP server never got the token');
    // Neither the AS (any endpoint) nor the PRM's host got an Authorization header, or a token anywhere.
    for (const e of [...w.hits('as'), ...w.hits('prm')]) {
        assert.equal(e.auth, null, `${e.server} ${e.method} ${e.path} got Authorization: ${e.auth}`);
        const where = `${e.server} ${e.method} ${e.path}`;
        for (const t of w.tokens) {
            assert.ok(!e.body.includes(t) && !e.query.toString().includes(t) && !JSON.stringify(e.headers).includes(t), `${where} got the access token`);
        }
    }
    assert.ok(w.hits('prm').length >= 1, 'the PRM on the other port was read');
    // Client authentication 'none': the token requests carry client_id, no secret, no Basic.
    for (const e of w.hits('as', '/token')) {
        const f = new URLSearchParams(e.body);
        assert.ok(f.get('client_id')?.startsWith('client-'), 'client_id in the form');
        assert.equal(f.get('client_secret'), null);
    }
    // The refresh token goes to the token endpoint only, never to the MCP server.
    for (const e of w.hits('mcp')) for (const t of w.refreshTokens) assert.ok(!e.body.includes(t) && !(e.auth ?? '').includes(t), 'the MCP server got a refresh token');
});

// ---- 10. State mismatch at the callback ----

test('10. a callback with a wrong state gets 400 and the listener keeps waiting for the right one', async () => {
    const w = await makeWorld();
    const seen = [];
    const browser = async (url) => {
        const u = new URL(url);
        const redirect = new URL(u.searchParams.get('redirect_uri'));
        assert.equal(redirect.hostname, '127.0.0.1');
        const forged = new URL(redirect.href);
        forged.searchParams.set('code', 'forged-code');
        forged.searchParams.set('state', `${u.searchParams.get('state')}x`);
        forged.searchParams.set('iss', w.issuer);
        const bad = await fetch(forged, { signal: AbortSignal.timeout(FETCH_MS) });
        await bad.arrayBuffer();
        seen.push(bad.status);
        // No state at all, and a wrong path, too.
        const none = await fetch(`${redirect.origin}/callback?code=forged`, { signal: AbortSignal.timeout(FETCH_MS) });
        await none.arrayBuffer();
        seen.push(none.status);
        return playBrowser(url);
    };
    const r = await login(w, { browser });
    assertSignedIn(r, 'login after a forged callback');
    assert.deepEqual(seen, [400, 400], 'the forged callbacks were not refused with 400');
    assert.equal(r.browsed[0].callbackStatus, 200, 'the right callback');
    assert.equal(w.hits('as', '/token').length, 1, 'one token request (the forged code never reached the AS)');
    assert.ok(!w.hits('as', '/token').some((e) => e.body.includes('forged')));
});
