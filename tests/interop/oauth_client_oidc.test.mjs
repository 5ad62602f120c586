// Interop: our OAuth client (the `mcp` command line and mcp-gateway --connect) against a real
// authorization server, oidc-provider (lib/authserver.mjs: authorization code with PKCE,
// dynamic registration, refresh tokens rotated on use, the device grant, client credentials,
// 3-second access tokens), in front of our mcp-everything as the protected resource.
//
// The test plays the user and their browser: it reads the authorization URL `mcp login` prints
// on stderr, has the authorization server's programmatic browser log in and consent
// (as.browse), and delivers the redirect it gets to mcp's loopback listener; for the device
// grant it enters the printed code (as.approveDevice). Every child gets MCP_NO_BROWSER=1 and
// its own XDG_STATE_HOME, where mcp keeps the tokens (mcp/oauth/*.json).
//
// Two protected servers share the authorization server:
//   JWT     mcp-everything checking JWT access tokens (RFC 9068) by signature; tools/call
//           needs mcp:admin besides mcp:tools (a step-up). It allows 60 s of clock skew, so an
//           access token that expired a moment ago still gets in there.
//   OPAQUE  mcp-everything checking opaque tokens by introspection (RFC 7662), which refuses a
//           token the moment it expires: what a client does after expiry shows there.
//
// Covered: sign-in in the browser, then calls in other processes with no prompt, `mcp auth
// status` (never a token on any output); expiry and refresh (rotated: the old refresh token is
// dead); step-up to the union of scopes with --login (and exit 6 without it); a revoked grant
// (exit 6, log in again); the device grant; client credentials renewed from the store with no
// secret in the environment; the store's modes (0700, 0600), a store file others can read
// ignored, logout; mcp-gateway --connect serving the TypeScript SDK's stdio client across an
// expiry; a kept client credentials grant renewed with its scope, at once; two processes
// refreshing at once, and a gateway whose tokens another process refreshed, both going on
// (a refresh token spent twice would end the grant, by reuse detection).
//
// Run: `MCP_BIN_DIR=/path/to/build/bin node oauth_client_oidc.test.mjs` in tests/interop.

import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { startAuthServer, CLIENT_ID, CLIENT_SECRET, SERVER_ID, SERVER_SECRET } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { deadline, overallDeadline, spawnDying, startEverything } from './lib/http.mjs';

overallDeadline(60_000);

const BIN = process.env.MCP_BIN_DIR;
if (!BIN) throw new Error('MCP_BIN_DIR is not set');
const MCP = path.join(BIN, 'mcp');
const GATEWAY = path.join(BIN, 'mcp-gateway');
for (const exe of [MCP, GATEWAY]) if (!existsSync(exe)) throw new Error(`${exe} does not exist`);

const TTL_S = 3; // every access token's lifetime
const SIGN_IN_RE = /To sign in, open this URL in a browser:\s*\n\s*\n\s*(\S+)\n/;
const SIGN_IN_TEXT = 'To sign in, open';
const DEVICE_RE = /open (\S+) on any device and enter the code:\s*\n\s*\n\s*(\S+)\s*\n/;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- children: every one is tracked, killed (with its process group) at the end of its test.

const live = new Set(); // ChildProcess
const transcript = []; // every chunk any child wrote, on either stream, for the token leak check
const secrets = new Set([CLIENT_SECRET]); // every token seen in a store file
const dirs = [];

function killAll() {
    for (const child of live) {
        try {
            process.kill(-child.pid, 'SIGKILL');
        } catch {
            try {
                child.kill('SIGKILL');
            } catch {
                /* gone */
            }
        }
    }
}

// A fresh XDG_STATE_HOME.
function stateDir() {
    const d = mkdtempSync(path.join(os.tmpdir(), 'mcp-oauth-client-'));
    dirs.push(d);
    return d;
}

// Spawns `mcp ...args` with XDG_STATE_HOME=state, MCP_NO_BROWSER=1 and MCP_DEBUG=1 (plus env; never an
// MCP_CLIENT_SECRET of ours). Returns {out(), err(), waitErr(re, what), done(what)}; done
// resolves with {code, signal, out, err} when it exited (rejects after ms).
function mcp(args, { state, env = {}, ms = 20_000 } = {}) {
    const { MCP_CLIENT_SECRET: _, ...base } = process.env;
    const child = spawnDying(MCP, args, {
        // MCP_DEBUG=1: every log line the library has, which must show no secret either.
        env: { ...base, XDG_STATE_HOME: state, MCP_NO_BROWSER: '1', MCP_DEBUG: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: killAll() gets a gateway it started too
    });
    live.add(child);
    const what = `mcp ${args.join(' ')}`;
    let out = '';
    let err = '';
    const changed = new EventEmitter();
    for (const [stream, isErr] of [[child.stdout, false], [child.stderr, true]]) {
        stream.setEncoding('utf8');
        stream.on('data', (c) => {
            transcript.push(c);
            if (isErr) err += c;
            else out += c;
            changed.emit('data');
        });
    }
    const exited = new Promise((resolve) =>
        child.once('close', (code, signal) => {
            live.delete(child);
            changed.emit('data');
            resolve({ code, signal });
        }));
    let gone = false;
    exited.then(() => (gone = true));
    const waitErr = (re, about, waitMs = 10_000) => {
        let check;
        return deadline(new Promise((resolve, reject) => {
            check = () => {
                const m = re.exec(err);
                if (m) resolve(m);
                else if (gone) reject(new Error(`${what} exited before ${about}; stdout: ${out} stderr: ${err}`));
            };
            changed.on('data', check);
            check();
        }), waitMs, `${about} from ${what} (stderr so far: ${err})`).finally(() => changed.off('data', check));
    };
    const done = async () => ({ ...(await deadline(exited, ms, `${what} to exit (stderr: ${err})`)), out, err });
    return { out: () => out, err: () => err, waitErr, done };
}

// Runs mcp to its end: {code, signal, out, err}.
const run = (args, opts) => mcp(args, opts).done();

// Runs mcp and asserts it succeeded without asking anyone anything.
async function runOk(args, opts) {
    const r = await run(args, opts);
    assert.equal(r.code, 0, `mcp ${args.join(' ')}: exit ${r.code} ${r.signal ?? ''}\nstderr: ${r.err}`);
    assert.ok(!r.err.includes(SIGN_IN_TEXT) && !DEVICE_RE.test(r.err), `no prompt: ${r.err}`);
    return r;
}

// ---- the browser.

// Waits for the authorization URL p prints, has the user log in and consent, and delivers the
// redirect to p's loopback listener. Resolves with the authorization URL (a URL).
async function playBrowser(p) {
    const m = await p.waitErr(SIGN_IN_RE, 'the authorization URL');
    const authorize = new URL(m[1]);
    const location = new URL(await as.browse(authorize.href));
    assert.equal(location.hostname, '127.0.0.1', location.href);
    assert.equal(location.pathname, '/callback');
    assert.equal(location.searchParams.get('state'), authorize.searchParams.get('state'));
    const res = await fetch(location, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 200, `the listener's answer to the redirect: ${await res.clone().text()}`);
    await res.text();
    return authorize;
}

// `mcp login URL` with the test as the browser; resolves with the authorization URL.
async function login(url, state) {
    const p = mcp(['login', url], { state });
    const authorize = await playBrowser(p);
    const r = await p.done();
    assert.equal(r.code, 0, r.err);
    return authorize;
}

// ---- the store.

const storeDir = (state) => path.join(state, 'mcp', 'oauth');
// The documents (X.json); beside each, X.json.lock is the lock refreshing processes share.
const storeFiles = (state) =>
    readdirSync(storeDir(state))
        .filter((f) => f.endsWith('.json'))
        .map((f) => path.join(storeDir(state), f));
const lockFiles = (state) =>
    readdirSync(storeDir(state))
        .filter((f) => f.endsWith('.lock'))
        .map((f) => path.join(storeDir(state), f));

// The stored entry for url ({server, issuer, grant, client, tokens, ...}); its tokens and the
// client's secret join the secrets no output may show.
function readStore(state, url) {
    const entries = storeFiles(state).filter((f) => f.endsWith('.json'))
        .map((f) => ({ file: f, ...JSON.parse(readFileSync(f, 'utf8')) }))
        .filter((e) => e.server === url);
    assert.equal(entries.length, 1, `one stored entry for ${url}`);
    const e = entries[0];
    for (const s of [e.tokens?.access_token, e.tokens?.refresh_token, e.client?.client_secret]) if (s) secrets.add(s);
    return e;
}

// When the stored access token is expired at the authorization server, in ms: the JWT's exp, or
// the client's own expires_at (which is never earlier, being counted from the answer's arrival).
function expiryOf(entry) {
    const at = entry.tokens.access_token;
    let exp = entry.tokens.expires_at;
    if (at.split('.').length === 3) exp = Math.max(exp, JSON.parse(Buffer.from(at.split('.')[1], 'base64url')).exp * 1000);
    assert.ok(exp > 0 && exp < Date.now() + 10 * TTL_S * 1000, `a short-lived token: ${exp}`);
    return exp;
}

// Bounded poll: resolves once cond() is true, checking every 50 ms; rejects after ms.
async function waitUntil(cond, ms, what) {
    const end = Date.now() + ms;
    while (!(await cond())) {
        if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
        await sleep(50);
    }
}

// Waits until the access token stored for url has expired.
async function untilExpired(state, url) {
    const exp = expiryOf(readStore(state, url));
    await waitUntil(() => Date.now() > exp + 100, (TTL_S + 5) * 1000, 'the access token to expire');
}

// The token endpoint, as the stored client: {status, json}.
async function tokenRequest(params, client) {
    const res = await fetch(`${as.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_id: client.client_id }),
        signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, json: await res.json() };
}

// The successful grants at the token endpoint, by grant type, since the last call.
let grants = [];
let grantScopes = []; // the scope each asked for, in the same order
const takeGrants = () => {
    const g = grants;
    grants = [];
    grantScopes = [];
    return g;
};

// A counter of mcp-everything's /metrics (outcome: passed, invalid_token, ...).
async function authOutcome(srv, outcome) {
    const res = await fetch(new URL('/metrics', srv.url), { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return Number(text.match(new RegExp(`^mcp_http_auth_requests_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm'))?.[1] ?? NaN);
}

// ---- the servers.

let as, jwtServer, opaqueServer, JWT, OPAQUE;
let ccRenewal; // what the client credentials test saw of the renewal: {scopes}

before(async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    JWT = `http://127.0.0.1:${p1}/mcp`;
    OPAQUE = `http://127.0.0.1:${p2}/mcp`;
    as = await startAuthServer({
        resources: { [JWT]: 'mcp:tools mcp:admin', [OPAQUE]: { scope: 'mcp:tools', opaque: true } },
        authorizationCode: true,
        deviceFlow: true,
        deviceInterval: 1,
        accessTokenTTL: TTL_S,
    });
    as.provider.on('grant.success', (ctx) => {
        grants.push(ctx.oidc.params.grant_type);
        grantScopes.push(ctx.oidc.params.scope);
    });
    jwtServer = await startEverything(BIN, ['--http', `127.0.0.1:${p1}`, '--auth-resource', JWT,
        '--auth-issuer', as.issuer, '--auth-scope', 'mcp:tools',
        '--auth-method-scope', 'tools/call=mcp:tools mcp:admin']);
    const d = stateDir();
    const secretFile = path.join(d, 'server-secret');
    writeFileSync(secretFile, `${SERVER_SECRET}\n`, { mode: 0o600 });
    opaqueServer = await startEverything(BIN, ['--http', `127.0.0.1:${p2}`, '--auth-resource', OPAQUE,
        '--auth-issuer', as.issuer, '--auth-introspection-endpoint', as.introspection,
        '--auth-client-id', SERVER_ID, '--auth-client-secret-file', secretFile, '--auth-scope', 'mcp:tools']);
});

afterEach(() => {
    killAll();
    // No output of any child, ever, shows a token (or a client secret) that was in a store.
    const all = transcript.join('');
    for (const s of secrets) assert.ok(!all.includes(s), `a secret was printed: ${s.slice(0, 12)}...`);
});

after(async () => {
    killAll();
    await jwtServer?.stop();
    await opaqueServer?.stop();
    await as?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// ---- the tests.

test('auth code: mcp login in the browser, then another process calls with no prompt; auth status shows it', async () => {
    const state = stateDir();
    const none = await run([JWT, 'tools', 'list'], { state });
    assert.equal(none.code, 6, `nothing kept: exit 6; stderr: ${none.err}`);
    assert.match(none.err, /mcp login/);
    assert.ok(!none.err.includes(SIGN_IN_TEXT), 'without --login, no prompt');

    const authorize = await login(JWT, state);
    const q = authorize.searchParams;
    assert.equal(`${authorize.origin}${authorize.pathname}`, `${as.issuer}/auth`);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('resource'), JWT);
    assert.match(new URL(q.get('redirect_uri')).href, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.ok(q.get('scope').split(' ').includes('mcp:tools'), q.get('scope'));

    const e = readStore(state, JWT);
    assert.equal(e.issuer, as.issuer);
    assert.equal(e.grant, 'authorization_code');
    assert.ok(e.tokens.access_token && e.tokens.refresh_token);

    const r = await runOk([JWT, 'tools', 'list'], { state });
    assert.match(r.out, /^echo$/m);
    const status = await runOk(['auth', 'status', JWT], { state });
    assert.ok(status.out.includes(JWT), status.out);
    assert.ok(status.out.includes(as.issuer), status.out);
    assert.match(status.out, /grant:\s+authorization_code/);
    assert.match(status.out, /scope:\s+mcp:tools/);
    assert.match(status.out, /refresh token:\s+held/);
    const everything = await runOk(['auth', 'status'], { state });
    assert.ok(everything.out.includes(JWT), everything.out);
    readStore(state, JWT); // the tokens as they are now join the secrets checked after each test
});

test('expiry: a later call refreshes by itself; the refresh token rotated, the old one is dead', async () => {
    const state = stateDir();
    await login(JWT, state);
    const before = readStore(state, JWT);
    await untilExpired(state, JWT);
    takeGrants();
    const r = await runOk([JWT, 'tools', 'list'], { state });
    assert.match(r.out, /^echo$/m);
    const refreshes = takeGrants().filter((g) => g === 'refresh_token').length;
    console.log(`# one \`mcp URL tools list\` after expiry made ${refreshes} refresh grant(s)`);
    const now = readStore(state, JWT);
    assert.notEqual(now.tokens.access_token, before.tokens.access_token, 'a new access token');
    assert.notEqual(now.tokens.refresh_token, before.tokens.refresh_token, 'a new refresh token');
    assert.ok(expiryOf(now) > Date.now(), 'the stored token is current');
    // Rotation: the refresh token kept before is spent (its reuse also ends the grant: last).
    const old = await tokenRequest({ grant_type: 'refresh_token', refresh_token: before.tokens.refresh_token }, before.client);
    assert.equal(old.status, 400, JSON.stringify(old.json));
    assert.equal(old.json.error, 'invalid_grant');
});

test('step-up: --login signs in when nothing is kept, then re-authorizes for the union of scopes', async () => {
    const state = stateDir();
    // Nothing kept: --login signs in on the way.
    const first = mcp(['--login', JWT, 'tools', 'list'], { state });
    await playBrowser(first);
    const f = await first.done();
    assert.equal(f.code, 0, f.err);
    assert.match(f.out, /^echo$/m);
    assert.equal(readStore(state, JWT).tokens.scope, 'mcp:tools');

    // tools/call needs mcp:admin too: without --login, exit 6 and a message, no prompt.
    const refused = await run([JWT, 'tools', 'call', 'echo', 'text=hi'], { state });
    assert.equal(refused.code, 6, `exit 6; stderr: ${refused.err}`);
    assert.match(refused.err, /authoriz/);
    assert.ok(!refused.err.includes(SIGN_IN_TEXT), refused.err);

    // With --login: one authorization URL, for both scopes; then the call goes through.
    const p = mcp(['--login', JWT, 'tools', 'call', 'echo', 'text=hi'], { state });
    const authorize = await playBrowser(p);
    const scope = authorize.searchParams.get('scope').split(' ');
    assert.ok(scope.includes('mcp:tools') && scope.includes('mcp:admin'), `the union: ${scope}`);
    const r = await p.done();
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), 'hi');
    assert.equal(r.err.split(SIGN_IN_TEXT).length - 1, 1, `exactly one authorization URL: ${r.err}`);
    assert.deepEqual(readStore(state, JWT).tokens.scope.split(' ').sort(), ['mcp:admin', 'mcp:tools']);
    // Kept: the next process calls with no prompt.
    const again = await runOk([JWT, 'tools', 'call', 'echo', 'text=again'], { state });
    assert.equal(again.out.trim(), 'again');
});

test('a revoked grant: after expiry the refresh fails, exit 6, log in again', async () => {
    const state = stateDir();
    await login(JWT, state);
    const e = readStore(state, JWT);
    assert.equal(await as.revokeGrantOf(e.tokens.refresh_token), true);
    await untilExpired(state, JWT);
    const r = await run([JWT, 'tools', 'list'], { state });
    assert.equal(r.code, 6, `exit 6; stderr: ${r.err}`);
    assert.ok(!r.err.includes(SIGN_IN_TEXT), r.err);
    assert.match(r.err, /log in/i, 'the message says to log in again');
});

test('device grant: mcp login --device, the code entered elsewhere, then calls work', async () => {
    const state = stateDir();
    const p = mcp(['login', '--device', JWT], { state });
    const [, verification, code] = await p.waitErr(DEVICE_RE, 'the device code');
    assert.equal(verification, `${as.issuer}/device`);
    await as.approveDevice(code);
    const r = await p.done();
    assert.equal(r.code, 0, r.err);
    assert.equal(readStore(state, JWT).grant, 'device');
    const list = await runOk([JWT, 'tools', 'list'], { state });
    assert.match(list.out, /^echo$/m);
});

test('client credentials: mcp login --client-credentials, then renewed after expiry with no secret in the environment', async () => {
    const state = stateDir();
    const l = await run(['login', '--client-credentials', '--client-id', CLIENT_ID, OPAQUE], { state,
        env: { MCP_CLIENT_SECRET: CLIENT_SECRET } });
    assert.equal(l.code, 0, l.err);
    const before = readStore(state, OPAQUE);
    assert.equal(before.grant, 'client_credentials');
    assert.equal(before.tokens.refresh_token, null);
    await runOk([OPAQUE, 'tools', 'list'], { state });
    await untilExpired(state, OPAQUE);
    const refusedBefore = await authOutcome(opaqueServer, 'invalid_token');
    takeGrants();
    const r = await runOk([OPAQUE, 'tools', 'list'], { state });
    assert.match(r.out, /^echo$/m);
    ccRenewal = { scopes: [...grantScopes] };
    const got = takeGrants();
    const sentExpired = (await authOutcome(opaqueServer, 'invalid_token')) - refusedBefore;
    console.log(`# after expiry, client credentials: the expired token was sent (and refused) ${sentExpired} time(s), ` +
        `then ${got.length} client_credentials grant(s) in one \`mcp URL tools list\``);
    assert.ok(got.length >= 1 && got.every((g) => g === 'client_credentials'), `renewed by the client credentials grant: ${got}`);
    const now = readStore(state, OPAQUE);
    assert.notEqual(now.tokens.access_token, before.tokens.access_token, 'renewed');
    assert.ok(expiryOf(now) > Date.now());
});

test('the client credentials renewal asks for the scope kept: one grant, no 403 on the way',
    () => {
    assert.ok(ccRenewal, 'the client credentials test ran');
    assert.equal(ccRenewal.scopes.length, 1, `one grant, not ${ccRenewal.scopes.length}: scopes ${JSON.stringify(ccRenewal.scopes)}`);
    assert.ok((ccRenewal.scopes[0] ?? '').split(' ').includes('mcp:tools'), `the scope kept: ${ccRenewal.scopes[0]}`);
});

test('restart and modes: the store is 0700 with 0600 files, kept so across refreshes; loose files ignored; logout', async () => {
    const state = stateDir();
    const mode = (p) => statSync(p).mode & 0o777;
    await login(JWT, state);
    assert.equal(mode(path.join(state, 'mcp')), 0o700);
    assert.equal(mode(storeDir(state)), 0o700);
    const [file] = storeFiles(state);
    assert.equal(storeFiles(state).length, 1, storeFiles(state).join(' '));
    assert.equal(mode(file), 0o600);
    await untilExpired(state, JWT);
    const before = readStore(state, JWT);
    await runOk([JWT, 'tools', 'list'], { state }); // a separate process: refreshes and rewrites
    assert.notEqual(readStore(state, JWT).tokens.access_token, before.tokens.access_token);
    assert.deepEqual(storeFiles(state), [file], 'replaced in place, nothing left beside');
    assert.deepEqual(readdirSync(storeDir(state)).filter((f) => !f.endsWith('.json') && !f.endsWith('.json.lock')), [], 'no temporary file left');
    for (const l of lockFiles(state)) assert.equal(mode(l), 0o600, `${l} is 0600`);
    assert.equal(mode(file), 0o600);
    assert.equal(mode(storeDir(state)), 0o700);

    // A file others can read is not used (and not fixed behind the user's back).
    chmodSync(file, 0o644);
    const loose = await run([JWT, 'tools', 'list'], { state });
    assert.equal(loose.code, 6, loose.err);
    assert.match(loose.err, /readable by others/);
    assert.equal(mode(file), 0o644);
    chmodSync(file, 0o600);
    await runOk([JWT, 'tools', 'list'], { state });

    const out = await run(['logout', JWT], { state });
    assert.equal(out.code, 0, out.err);
    assert.deepEqual(storeFiles(state).filter((f) => f.endsWith('.json')), [], 'forgotten');
    const after = await run([JWT, 'tools', 'list'], { state });
    assert.equal(after.code, 6, after.err);
});

test('mcp-gateway --connect serves a stdio client across an access token expiry', async () => {
    const state = stateDir();
    await login(OPAQUE, state);
    const before = readStore(state, OPAQUE);
    const transport = new StdioClientTransport({ command: GATEWAY, args: ['--connect', OPAQUE, '--log-level', 'warning'],
        env: { XDG_STATE_HOME: state, MCP_NO_BROWSER: '1' }, stderr: 'pipe' });
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (c) => transcript.push(c));
    const client = new Client({ name: 'oauth-gateway-test', version: '1' });
    try {
        await deadline(client.connect(transport), 15_000, 'the SDK client to connect through the gateway');
        const call = async (text) => {
            const r = await deadline(client.callTool({ name: 'echo', arguments: { text } }), 15_000, `echo ${text}`);
            assert.equal(r.content?.[0]?.text, text, JSON.stringify(r));
        };
        assert.ok((await deadline(client.listTools(), 15_000, 'tools/list')).tools.some((t) => t.name === 'echo'));
        await call('before expiry');
        await untilExpired(state, OPAQUE);
        assert.ok((await deadline(client.listTools(), 15_000, 'tools/list after expiry')).tools.some((t) => t.name === 'echo'));
        await call('after expiry');
        const now = readStore(state, OPAQUE);
        assert.notEqual(now.tokens.access_token, before.tokens.access_token, 'the gateway renewed the token and kept it');
    } finally {
        const pid = transport.pid;
        await deadline(client.close(), 10_000, 'the SDK client to close').catch(() => {});
        if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* exited */ }
    }
    // A gateway started afresh by mcp, after another expiry: the kept tokens again.
    await untilExpired(state, OPAQUE);
    const r = await runOk(['--', GATEWAY, '--connect', OPAQUE, '--log-level', 'warning', '--', 'tools', 'list'], { state });
    assert.match(r.out, /^echo$/m);
});

test('two processes refreshing at once both succeed, and the grant survives', async () => {
    const state = stateDir();
    await login(JWT, state);
    await untilExpired(state, JWT);
    const rs = await Promise.all([1, 2].map(() => run([JWT, 'tools', 'list'], { state })));
    for (const r of rs) assert.equal(r.code, 0, r.err);
    await runOk([JWT, 'tools', 'list'], { state });
});

test('a gateway holding tokens and a later mcp process that refreshed them: the gateway goes on',
    async () => {
    const state = stateDir();
    await login(JWT, state);
    const transport = new StdioClientTransport({ command: GATEWAY, args: ['--connect', JWT, '--log-level', 'warning'],
        env: { XDG_STATE_HOME: state, MCP_NO_BROWSER: '1' }, stderr: 'pipe' });
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (c) => transcript.push(c));
    const client = new Client({ name: 'oauth-gateway-shared-store', version: '1' });
    try {
        await deadline(client.connect(transport), 15_000, 'the SDK client to connect through the gateway');
        await deadline(client.listTools(), 15_000, 'tools/list');
        await untilExpired(state, JWT);
        await runOk([JWT, 'tools', 'list'], { state }); // refreshes: the refresh token rotates
        const r = await deadline(client.listTools(), 15_000, 'tools/list through the gateway after another process refreshed');
        assert.ok(r.tools.some((t) => t.name === 'echo'));
    } finally {
        const pid = transport.pid;
        await deadline(client.close(), 10_000, 'the SDK client to close').catch(() => {});
        if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* exited */ }
    }
});
