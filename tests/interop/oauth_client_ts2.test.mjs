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
// of the scopes); the device authorization grant (RFC 8628).
//
// Every mcp child gets a fresh XDG_STATE_HOME (where it keeps its tokens) and MCP_NO_BROWSER=1.
//
// Run by CTest as `node oauth_client_ts2.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startAuthServer } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { deadline, overallDeadline, spawnDying, startListening } from './lib/http.mjs';

overallDeadline(60_000);

const BIN = process.env.MCP_BIN_DIR;
if (!BIN) throw new Error('MCP_BIN_DIR is not set');
const MCP = path.join(BIN, 'mcp');
if (!existsSync(MCP)) throw new Error(`${MCP} does not exist`);

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
function runMcp(args, state, { ms = RUN_MS } = {}) {
    const child = spawnDying(MCP, args, {
        env: { ...process.env, XDG_STATE_HOME: state, MCP_NO_BROWSER: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let seenBrowser = 0;
    let seenDevice = 0;
    const acts = [];
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => {
        stderr += d;
        const browser = [...stderr.matchAll(BROWSER_RE)];
        for (; seenBrowser < browser.length; seenBrowser++) acts.push(actAsBrowser(browser[seenBrowser][1]));
        const device = [...stderr.matchAll(DEVICE_RE)];
        for (; seenDevice < device.length; seenDevice++) {
            const [, verification, userCode] = device[seenDevice];
            acts.push(as.approveDevice(userCode).then(() => ({ verification, userCode })));
        }
    });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const what = `mcp ${args.join(' ')}`;
    return deadline(exited, ms, `${what} to exit`)
        .catch((e) => {
            child.kill('SIGKILL');
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
    for (const s of Object.values(servers)) await s.proc?.stop().catch(() => s.proc.child.kill('SIGKILL'));
    await as?.stop();
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

describe('libmcp OAuth client (mcp CLI) against a TypeScript SDK v2 protected server', () => {
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
});
