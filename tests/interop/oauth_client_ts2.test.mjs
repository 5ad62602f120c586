// Interop: libmcp's OAuth client, driven through the mcp CLI (mcp login, mcp login --device,
// mcp URL ..., mcp --login URL ...), signs in to a server nobody here wrote: an MCP server on the
// TypeScript SDK v2 (lib/ts_v2_protected_server.mjs: @modelcontextprotocol/server 2.4.0) behind
// the SDK's own authorization helpers (requireBearerAuth with a JWT verifier against the
// issuer's keys and expectedResource, oauthMetadataResponse for the Protected Resource
// Metadata at the path-inserted well-known URI, and a per-tool scope challenge,
// requireScopes), with oidc-provider (lib/authserver.mjs) as the authorization server.
//
// The flows: the authorization code grant through the loopback listener (the test plays the
// browser: it reads the authorization URL mcp prints, has the authorization server's
// programmatic browser log in and consent, and delivers the redirect to mcp's listener); access
// tokens that expire, renewed by the refresh token without a prompt (twice: the refresh token
// is rotated, so the new one must have been kept); step-up on the server's 403
// insufficient_scope (exit 6 without --login; with it, a new authorization asking for the union
// of the scopes); the device authorization grant (RFC 8628); the client credentials grant
// (mcp login --client-credentials with MCP_CLIENT_SECRET), renewed after expiry from the store
// with no secret in the environment; mcp-gateway --connect in front of the TS server, serving
// the TypeScript SDK's stdio client across an expiry (the gateway refreshes), and started by
// mcp (`mcp -- mcp-gateway --connect URL -- tools list`) after another.
//
// Every mcp child (and gateway) gets a fresh XDG_STATE_HOME per test (where it keeps its
// tokens), MCP_NO_BROWSER=1 and MCP_DEBUG=1, and never an MCP_CLIENT_SECRET of the caller's;
// after each test every child is killed (with its process group), and no output any child
// wrote may show a token or client secret of a store file (the debug lines included).
//
// Run by CTest as `node oauth_client_ts2.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.

import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CLIENT_ID, CLIENT_SECRET, startAuthServer } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { deadline, overallDeadline, spawnDying, startListening } from './lib/http.mjs';

overallDeadline(60_000);

const BIN = process.env.MCP_BIN_DIR;
if (!BIN) throw new Error('MCP_BIN_DIR is not set');
const MCP = path.join(BIN, 'mcp');
const GATEWAY = path.join(BIN, 'mcp-gateway');
for (const exe of [MCP, GATEWAY]) if (!existsSync(exe)) throw new Error(`${exe} does not exist`);

const SERVER = fileURLToPath(new URL('./lib/ts_v2_protected_server.mjs', import.meta.url));
const LISTEN_RE = /^ts-v2-protected: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;
const READ = 'mcp:read';
const WRITE = 'mcp:write';
const SHORT_TTL = 2; // seconds, of the short-lived server's access tokens
const RUN_MS = 20_000; // the bound on one mcp run
const BROWSER_RE = /To sign in, open this URL in a browser:\n\n {2}(\S+)\n/g;
const DEVICE_RE = /To sign in, open (\S+) on any device and enter the code:\n\n {2}(\S+)\n/g;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let as;
const servers = {}; // name -> {url, proc}
const stateDirs = [];
const grants = []; // the token endpoint's successes: {grant_type, scope}
const live = new Set(); // every child still running (mcp, gateways): killed after each test
const transcript = []; // every chunk any child wrote, on either stream, for the leak check
const secrets = new Set([CLIENT_SECRET]); // every token and client secret seen in a store file

// Kills every child still running, with its process group (a gateway mcp started goes too).
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
    live.clear();
}
process.on('exit', killAll); // the overall deadline's exit too

function freshState() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-oauth-ts2-'));
    stateDirs.push(dir);
    return dir;
}

// The user in a browser: opens the authorization URL at the authorization server (log in,
// consent), and the browser follows the redirect to mcp's loopback listener.
async function actAsBrowser(url) {
    const location = await as.browse(url);
    const res = await fetch(location, { signal: AbortSignal.timeout(10_000) });
    const page = await res.text();
    return { url, location, status: res.status, page };
}

// Runs mcp with args, its tokens kept under state. Each authorization URL it prints is opened
// by actAsBrowser; each device code is approved by the user (as.approveDevice). Resolves, once
// it exited, with {code, signal, stdout, stderr, prompts: [{url, location, status, page} |
// {verification, userCode}]}; rejects after ms (having killed it) or when acting for the user
// failed.
// env: more of the environment (the caller's MCP_CLIENT_SECRET is never passed on; MCP_DEBUG=1 is
// always set, so that the leak check covers every log line).
function runMcp(args, state, { ms = RUN_MS, env = {} } = {}) {
    const { MCP_CLIENT_SECRET: _, ...base } = process.env;
    const child = spawnDying(MCP, args, {
        env: { ...base, XDG_STATE_HOME: state, MCP_NO_BROWSER: '1', MCP_DEBUG: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: killAll() gets a gateway it started too
    });
    live.add(child);
    let stdout = '';
    let stderr = '';
    let seenBrowser = 0;
    let seenDevice = 0;
    const acts = [];
    child.stdout.setEncoding('utf8').on('data', (d) => {
        transcript.push(d);
        stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
        transcript.push(d);
        stderr += d;
        const browser = [...stderr.matchAll(BROWSER_RE)];
        for (; seenBrowser < browser.length; seenBrowser++) acts.push(actAsBrowser(browser[seenBrowser][1]));
        const device = [...stderr.matchAll(DEVICE_RE)];
        for (; seenDevice < device.length; seenDevice++) {
            const [, verification, userCode] = device[seenDevice];
            acts.push(as.approveDevice(userCode).then(() => ({ verification, userCode })));
        }
    });
    // 'close': exited, and both streams read to their end.
    const exited = new Promise((resolve) => child.once('close', (code, signal) => {
        live.delete(child);
        resolve({ code, signal });
    }));
    const what = `mcp ${args.join(' ')}`;
    return deadline(exited, ms, `${what} to exit`)
        .catch((e) => {
            try {
                process.kill(-child.pid, 'SIGKILL');
            } catch {
                child.kill('SIGKILL');
            }
            throw new Error(`${e.message}; stderr: ${stderr}`);
        })
        .then(async ({ code, signal }) => {
            const prompts = await deadline(Promise.all(acts), 10_000, `acting for the user of ${what}`);
            return { code, signal, stdout, stderr, prompts };
        });
}

// Asserts that run (of runMcp) exited 0, having asked the user count times.
function succeeded(run, prompts = 0) {
    const text = `exit ${run.code}/${run.signal}; stdout: ${run.stdout}; stderr: ${run.stderr}`;
    assert.equal(run.code, 0, text);
    assert.equal(run.prompts.length, prompts, `asked the user ${run.prompts.length} times: ${text}`);
    if (prompts === 0) assert.doesNotMatch(run.stderr, /To sign in/, text);
}

// The authorization request of a prompt, as URLSearchParams.
const paramsOf = (prompt) => new URL(prompt.url).searchParams;
const scopesOf = (prompt) => new Set(paramsOf(prompt).get('scope').split(' '));

// ---- the store (XDG_STATE_HOME/mcp/oauth/*.json).

const storeDir = (state) => path.join(state, 'mcp', 'oauth');
const storeEntries = (state) => (existsSync(storeDir(state)) ? readdirSync(storeDir(state)) : [])
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(storeDir(state), f), 'utf8')));
const remember = (e) => {
    for (const s of [e.tokens?.access_token, e.tokens?.refresh_token, e.client?.client_secret]) if (s) secrets.add(s);
    return e;
};

// The one entry stored for url ({server, issuer, grant, client, tokens, ...}); its tokens and the
// client's secret join the secrets no output may show.
function readStore(state, url) {
    const entries = storeEntries(state).map(remember).filter((e) => e.server === url);
    assert.equal(entries.length, 1, `one stored entry for ${url}`);
    return entries[0];
}

// When the stored access token (a JWT here) has expired at the authorization server, in ms.
function expiryOf(entry) {
    const at = entry.tokens.access_token;
    let exp = entry.tokens.expires_at ?? 0;
    if (at.split('.').length === 3) exp = Math.max(exp, JSON.parse(Buffer.from(at.split('.')[1], 'base64url')).exp * 1000);
    assert.ok(exp > 0 && exp < Date.now() + 10 * SHORT_TTL * 1000, `a short-lived token: ${exp}`);
    return exp;
}

// Waits (bounded) until the access token stored for url has expired.
async function untilExpired(state, url) {
    const wait = expiryOf(readStore(state, url)) + 300 - Date.now();
    assert.ok(wait < (SHORT_TTL + 5) * 1000, `expires in ${wait} ms`);
    if (wait > 0) await sleep(wait);
}

// The jti of each access token the TS server let in so far.
const acceptedJtis = (proc) => [...proc.output().matchAll(/^ts-v2-protected: accepted \S+ (\S+) /gm)].map((m) => m[1]);

async function startServer(name) {
    const port = await freePort();
    servers[name] = { port, url: `http://127.0.0.1:${port}/mcp` };
    return servers[name];
}

before(async () => {
    const main = await startServer('main');
    const short = await startServer('short');
    as = await startAuthServer({
        resources: {
            [main.url]: `${READ} ${WRITE}`,
            [short.url]: { scope: `${READ} ${WRITE}`, accessTokenTTL: SHORT_TTL },
        },
        authorizationCode: true,
        deviceFlow: true,
        deviceInterval: 1,
    });
    as.provider.on('grant.success', (ctx) => grants.push({ grant_type: ctx.oidc.params.grant_type, scope: ctx.oidc.params.scope }));
    for (const s of [main, short]) {
        s.proc = await startListening(`ts-v2-protected ${s.url}`, process.execPath,
            [SERVER, '--issuer', as.issuer, '--port', String(s.port), '--read-scope', READ, '--write-scope', WRITE], LISTEN_RE);
        assert.equal(s.proc.match[1], s.url);
    }
});

after(async () => {
    killAll();
    for (const s of Object.values(servers)) await s.proc?.stop().catch(() => s.proc.child.kill('SIGKILL'));
    await as?.stop();
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

describe('libmcp OAuth client (mcp CLI) against a TypeScript SDK v2 protected server', () => {
    afterEach(() => {
        killAll();
        // No output of any child, ever, shows a token or a client secret that was in a store file
        // (those read during the test, and those there now).
        for (const dir of stateDirs) storeEntries(dir).forEach(remember);
        const all = transcript.join('');
        for (const s of secrets) assert.ok(!all.includes(s), `a secret was printed: ${s.slice(0, 12)}...`);
    });

    test('the TS server\'s own challenges and metadata (what the client has to read)', async () => {
        const { url } = servers.main;
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        assert.equal(res.status, 401);
        const challenge = res.headers.get('www-authenticate');
        const prm = `http://127.0.0.1:${servers.main.port}/.well-known/oauth-protected-resource/mcp`;
        // The SDK says invalid_token even when no token was sent (RFC 6750 3.1 suggests no error
        // code then), and names the gate's scopes and the path-inserted metadata URL.
        assert.equal(challenge, `Bearer error="invalid_token", error_description="Missing Authorization header", scope="${READ}", resource_metadata="${prm}"`);
        const meta = await (await fetch(prm)).json();
        assert.equal(meta.resource, url);
        assert.deepEqual(meta.authorization_servers, [as.issuer]);
        assert.deepEqual(meta.scopes_supported, [READ, WRITE]);
        // Only there: not at the root well-known URI.
        assert.equal((await fetch(`http://127.0.0.1:${servers.main.port}/.well-known/oauth-protected-resource`)).status, 404);
    });

    test('mcp login (authorization code, loopback redirect), then tools list and call without a prompt', async () => {
        const { url } = servers.main;
        const state = freshState();
        const login = await runMcp(['login', '--timeout', String(RUN_MS), url], state);
        succeeded(login, 1);
        const [prompt] = login.prompts;
        const q = paramsOf(prompt);
        assert.equal(new URL(prompt.url).origin, as.issuer);
        assert.equal(q.get('response_type'), 'code');
        assert.equal(q.get('code_challenge_method'), 'S256');
        assert.ok(q.get('code_challenge'));
        assert.equal(q.get('resource'), url, 'RFC 8707: the server\'s own URL');
        assert.match(q.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
        assert.ok(scopesOf(prompt).has(READ), `the challenge's scope is asked: ${q.get('scope')}`);
        assert.ok(!scopesOf(prompt).has(WRITE), 'no more than the challenge named');
        assert.equal(new URL(prompt.location).searchParams.get('iss'), as.issuer);
        assert.equal(prompt.status, 200, prompt.page);
        assert.match(login.stdout, /logged in/);

        const list = await runMcp([url, 'tools', 'list'], state);
        succeeded(list);
        for (const name of ['whoami', 'echo', 'write_note']) assert.match(list.stdout, new RegExp(`^${name}$`, 'm'));
        const echo = await runMcp([url, 'tools', 'call', 'echo', 'text=hello from libmcp'], state);
        succeeded(echo);
        assert.equal(echo.stdout.trim(), 'hello from libmcp');
        const who = await runMcp([url, 'tools', 'call', 'whoami'], state);
        succeeded(who);
        assert.equal(who.stdout.trim(), `user ${READ}`);
        // Another state directory has no tokens: exit 6, no prompt.
        const other = await runMcp([url, 'tools', 'list'], freshState());
        assert.equal(other.code, 6, other.stderr);
        assert.equal(other.prompts.length, 0);
    });

    test('access tokens that expire are renewed with the (rotated) refresh token, without a prompt', async () => {
        const { url, proc } = servers.short;
        const state = freshState();
        succeeded(await runMcp(['login', '--timeout', String(RUN_MS), url], state), 1);
        const jtis = () => [...proc.output().matchAll(/^ts-v2-protected: accepted \S+ (\S+) /gm)].map((m) => m[1]);
        const refreshes = () => grants.filter((g) => g.grant_type === 'refresh_token').length;
        const before = refreshes();
        for (let round = 1; round <= 2; round++) {
            await sleep(SHORT_TTL * 1000 + 600);
            const seen = new Set(jtis());
            const who = await runMcp([url, 'tools', 'call', 'whoami'], state);
            succeeded(who);
            assert.equal(who.stdout.trim(), `user ${READ}`);
            assert.ok(refreshes() >= before + round, `round ${round}: ${refreshes() - before} refreshes`);
            const fresh = jtis().filter((j) => !seen.has(j));
            assert.ok(fresh.length > 0, `round ${round}: a new access token reached the server`);
        }
    });

    test('step-up: 403 insufficient_scope; exit 6 without --login, a new authorization with the union with it', async () => {
        const { url } = servers.main;
        const state = freshState();
        const login = await runMcp(['login', '--timeout', String(RUN_MS), url], state);
        succeeded(login, 1);
        assert.ok(!scopesOf(login.prompts[0]).has(WRITE));

        const refused = await runMcp([url, 'tools', 'call', 'write_note', 'text=first'], state);
        assert.equal(refused.code, 6, `stdout: ${refused.stdout}; stderr: ${refused.stderr}`);
        assert.equal(refused.prompts.length, 0);
        assert.doesNotMatch(refused.stderr, /To sign in/);
        // What the tokens kept can do, they still do.
        succeeded(await runMcp([url, 'tools', 'call', 'echo', 'text=still'], state));

        const stepped = await runMcp(['--login', url, 'tools', 'call', 'write_note', 'text=second'], state);
        succeeded(stepped, 1);
        assert.equal(stepped.stdout.trim(), 'noted: second');
        const scopes = scopesOf(stepped.prompts[0]);
        assert.ok(scopes.has(READ) && scopes.has(WRITE), `the union of held and challenged: ${[...scopes]}`);
        assert.equal(paramsOf(stepped.prompts[0]).get('resource'), url);

        const again = await runMcp([url, 'tools', 'call', 'write_note', 'text=third'], state);
        succeeded(again);
        assert.equal(again.stdout.trim(), 'noted: third');
        const who = await runMcp([url, 'tools', 'call', 'whoami'], state);
        succeeded(who);
        assert.deepEqual(new Set(who.stdout.trim().split(' ').slice(1)), new Set([READ, WRITE]));
    });

    // A dead refresh token (its grant revoked) is recognized: the command says to log in again,
    // and mcp --login signs in anew.
    test('a revoked grant: the refresh fails (invalid_grant); exit 6, then mcp --login signs in again',
        async () => {
            const { url } = servers.short;
            const state = freshState();
            const saved = [];
            const onSaved = (token) => saved.push(token.jti);
            as.provider.on('refresh_token.saved', onSaved);
            try {
                succeeded(await runMcp(['login', '--timeout', String(RUN_MS), url], state), 1);
                assert.ok(saved.length > 0, 'a refresh token was issued');
                assert.equal(await as.revokeGrantOf(saved.at(-1)), true);
                await sleep(SHORT_TTL * 1000 + 600);
                const dead = await runMcp([url, 'tools', 'call', 'whoami'], state);
                assert.equal(dead.code, 6, `stdout: ${dead.stdout}; stderr: ${dead.stderr}`);
                assert.equal(dead.prompts.length, 0);
                const again = await runMcp(['--login', url, 'tools', 'call', 'whoami'], state);
                succeeded(again, 1);
                assert.equal(again.stdout.trim(), `user ${READ}`);
            } finally {
                as.provider.off('refresh_token.saved', onSaved);
            }
        });

    test('mcp login --device (RFC 8628), then tools call without a prompt', async () => {
        const { url } = servers.main;
        const state = freshState();
        const login = await runMcp(['login', '--device', '--timeout', String(RUN_MS), url], state);
        succeeded(login, 1);
        const [prompt] = login.prompts;
        assert.equal(prompt.verification, `${as.issuer}/device`);
        assert.ok(prompt.userCode);
        assert.ok(grants.some((g) => g.grant_type === 'urn:ietf:params:oauth:grant-type:device_code'));
        const who = await runMcp([url, 'tools', 'call', 'whoami'], state);
        succeeded(who);
        assert.equal(who.stdout.trim(), `user ${READ}`);
    });

    test('client credentials: mcp login --client-credentials, tools list and call; after expiry renewed with no secret in the environment',
        async () => {
            const { url, proc } = servers.short;
            const state = freshState();
            const ccGrants = () => grants.filter((g) => g.grant_type === 'client_credentials');
            const ccBefore = ccGrants().length;
            const login = await runMcp(['login', '--client-credentials', '--client-id', CLIENT_ID, '--timeout', String(RUN_MS), url],
                state, { env: { MCP_CLIENT_SECRET: CLIENT_SECRET } });
            succeeded(login);
            assert.equal(ccGrants().length, ccBefore + 1, 'one client credentials grant');
            const first = readStore(state, url);
            assert.equal(first.grant, 'client_credentials');
            assert.equal(first.issuer, as.issuer);
            assert.equal(first.client?.client_id, CLIENT_ID);
            assert.ok(!first.tokens.refresh_token, 'no refresh token for client credentials');
            assert.ok((first.tokens.scope ?? '').split(' ').includes(READ), `the scope kept: ${first.tokens.scope}`);

            const list = await runMcp([url, 'tools', 'list'], state);
            succeeded(list);
            for (const name of ['whoami', 'echo', 'write_note']) assert.match(list.stdout, new RegExp(`^${name}$`, 'm'));
            const echo = await runMcp([url, 'tools', 'call', 'echo', 'text=from a client'], state);
            succeeded(echo);
            assert.equal(echo.stdout.trim(), 'from a client');
            const who = await runMcp([url, 'tools', 'call', 'whoami'], state);
            succeeded(who);
            assert.ok(who.stdout.trim().split(' ').slice(1).includes(READ), `whoami: ${who.stdout}`);

            await untilExpired(state, url);
            const seen = new Set(acceptedJtis(proc));
            const renewBefore = ccGrants().length;
            const again = await runMcp([url, 'tools', 'list'], state); // no MCP_CLIENT_SECRET: runMcp drops it
            succeeded(again);
            assert.match(again.stdout, /^echo$/m);
            const renewals = ccGrants().slice(renewBefore);
            assert.ok(renewals.length >= 1, 'renewed by the client credentials grant');
            console.log(`# after expiry, one \`mcp URL tools list\` made ${renewals.length} client_credentials grant(s), ` +
                `scopes ${JSON.stringify(renewals.map((g) => g.scope))}`);
            const now = readStore(state, url);
            assert.notEqual(now.tokens.access_token, first.tokens.access_token, 'the stored access token changed');
            assert.ok(expiryOf(now) > Date.now(), 'the stored token is current');
            assert.ok(acceptedJtis(proc).some((j) => !seen.has(j)), 'a new access token reached the server');
        });

    test('mcp-gateway --connect in front of the TS server: a stdio client lists tools, again after expiry (the gateway refreshes)',
        async () => {
            const { url, proc } = servers.short;
            const state = freshState();
            succeeded(await runMcp(['login', '--timeout', String(RUN_MS), url], state), 1);
            const first = readStore(state, url);
            const refreshes = () => grants.filter((g) => g.grant_type === 'refresh_token').length;

            const transport = new StdioClientTransport({ command: GATEWAY, args: ['--connect', url],
                env: { XDG_STATE_HOME: state, MCP_NO_BROWSER: '1', MCP_DEBUG: '1' }, stderr: 'pipe' });
            let gatewayErr = '';
            transport.stderr.setEncoding('utf8');
            transport.stderr.on('data', (c) => {
                transcript.push(c);
                gatewayErr += c;
            });
            const client = new Client({ name: 'oauth-ts2-gateway-test', version: '1' });
            const names = async (what) => {
                const r = await deadline(client.listTools(), 15_000, `${what} (gateway stderr: ${gatewayErr.slice(-2000)})`);
                return r.tools.map((t) => t.name);
            };
            try {
                const connected = client.connect(transport);
                if (transport._process) live.add(transport._process); // private, but then killAll() gets it too
                await deadline(connected, 15_000, 'the SDK client to connect through the gateway');
                for (const n of ['whoami', 'echo', 'write_note']) assert.ok((await names('tools/list')).includes(n), n);
                const before = refreshes();
                await untilExpired(state, url);
                const seen = new Set(acceptedJtis(proc));
                assert.ok((await names('tools/list after expiry')).includes('echo'));
                const r = await deadline(client.callTool({ name: 'echo', arguments: { text: 'after expiry' } }), 15_000,
                    'echo after expiry');
                assert.equal(r.content?.[0]?.text, 'after expiry', JSON.stringify(r));
                assert.ok(refreshes() > before, 'the gateway refreshed');
                const now = readStore(state, url);
                assert.notEqual(now.tokens.access_token, first.tokens.access_token, 'the gateway renewed the token and kept it');
                assert.ok(acceptedJtis(proc).some((j) => !seen.has(j)), 'a new access token reached the server');
            } finally {
                const pid = transport.pid;
                await deadline(client.close(), 10_000, 'the SDK client to close').catch(() => {});
                if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* exited */ }
            }

            // A gateway started afresh by mcp, after another expiry: the kept tokens, renewed again.
            await untilExpired(state, url);
            const kept = readStore(state, url);
            const viaMcp = await runMcp(['--', GATEWAY, '--connect', url, '--', 'tools', 'list'], state);
            succeeded(viaMcp);
            for (const n of ['whoami', 'echo', 'write_note']) assert.match(viaMcp.stdout, new RegExp(`^${n}$`, 'm'));
            assert.notEqual(readStore(state, url).tokens.access_token, kept.tokens.access_token, 'renewed by the gateway mcp started');
        });
});
