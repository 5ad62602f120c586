// Interop: `mcp-gateway --connect URL` in front of our mcp-everything over Streamable HTTP (with
// its in-memory event store), driven over stdio by the official TypeScript SDK client (1.32.2,
// StdioClientTransport): the client starts the gateway as its server process and knows nothing
// of HTTP.
//
//   - everything the stdio client can ask of mcp-everything works through the gateway: the
//     checks of lib/everything.mjs (also run by ts_client_stdio.test.mjs against mcp-everything
//     --stdio), server-to-client requests (sampling, elicitation, roots) included;
//   - a forced stream close (SEP-1699: the tool closes its own SSE stream mid-call, the
//     gateway resumes it with Last-Event-ID): the client gets the full result and every
//     notification, in order, exactly once;
//   - a server that dies: the request in flight gets a clear JSON-RPC error (no hang), a
//     request while it is down gets one at once, and the gateway stays up;
//   - the server restarted on the same port: the next calls succeed through the gateway (a 404
//     for the old session, a new session made with the client's own initialize), with nothing
//     done by the client, and a forced close is resumed on the new session too;
//   - the client's close() (stdin EOF) ends the gateway with status 0, without a signal.
//
// Run by CTest as `node gateway_connect.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LoggingMessageNotificationSchema,
    McpError,
    ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
    REQUEST_TIMEOUT_MS,
    ROOTS,
    SAMPLING_TEXT,
    everythingChecks,
    fillFromSchema,
    isResponseTo,
    progressIn,
    progressVisibleToSdk,
    textResult,
    withTap,
} from './lib/everything.mjs';
import { deadline, overallDeadline, startListening } from './lib/http.mjs';

overallDeadline(150_000);

const RETRY_MS = 300;
const binDir = process.env.MCP_BIN_DIR;
assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
const EVERYTHING = path.join(binDir, 'mcp-everything');
const GATEWAY = path.join(binDir, 'mcp-gateway');
assert.ok(existsSync(EVERYTHING), `${EVERYTHING} does not exist`);
assert.ok(existsSync(GATEWAY), `${GATEWAY} does not exist`);

// A port for mcp-everything, which must get the same one when it restarts. It is drawn below the
// kernel's ephemeral range, so that a port-0 listener or an outgoing connection of a test running
// beside this one cannot be handed it while the server is down.
function ephemeralLow() {
    try {
        return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
    } catch {
        return 32768;
    }
}

function canListen(port) {
    return new Promise((resolve) => {
        const s = net.createServer();
        s.once('error', () => resolve(false));
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
}

async function freePort() {
    const low = Math.max(ephemeralLow(), 11024);
    for (let i = 0; i < 100; i++) {
        const port = 10000 + Math.floor(Math.random() * (low - 10000));
        if (await canListen(port)) return port;
    }
    throw new Error('no free port below the ephemeral range after 100 tries');
}

const LISTEN_RE = /^mcp-everything: listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/;
const startServer = (port) =>
    startListening('mcp-everything', EVERYTHING, ['--http', `127.0.0.1:${port}`, '--retry-ms', String(RETRY_MS)], LISTEN_RE);

const TapTransport = withTap(StdioClientTransport);
const env = {
    client: undefined,
    transport: undefined,
    initResult: undefined,
    serverRequests: [],
    loggingSeen: [],
    updatesSeen: [],
    clientErrors: [],
};
const checks = everythingChecks(env);

let port;
let server;
let url;
let gatewayErr = '';
let gatewayPid;
let gatewayExit; // resolves with {code, signal}

before(async () => {
    port = await freePort();
    server = await startServer(port);
    url = server.match[1];

    const transport = new TapTransport({
        command: GATEWAY,
        args: ['--connect', url, '--header', 'X-Gateway-Test: connect', '--log-level', 'warning'],
        stderr: 'pipe',
    });
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (chunk) => {
        gatewayErr += chunk;
        process.stderr.write(chunk);
    });
    const client = new Client(
        { name: 'libmcp-gateway-connect', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
    );
    env.transport = transport;
    env.client = client;
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        env.serverRequests.push({ method: req.method, params: req.params });
        return { role: 'assistant', content: { type: 'text', text: SAMPLING_TEXT }, model: 'test-model', stopReason: 'endTurn' };
    });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
        env.serverRequests.push({ method: req.method, params: req.params });
        return { action: 'accept', content: fillFromSchema(req.params.requestedSchema) };
    });
    client.setRequestHandler(ListRootsRequestSchema, async (req) => {
        env.serverRequests.push({ method: req.method, params: req.params });
        return { roots: ROOTS };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        env.loggingSeen.push(n.params);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        env.updatesSeen.push(n.params.uri);
    });
    client.onerror = (err) => env.clientErrors.push(String(err?.message ?? err));

    await deadline(client.connect(transport, { timeout: REQUEST_TIMEOUT_MS }), REQUEST_TIMEOUT_MS + 1000, 'initialize');
    const child = transport._process; // private, but the only way to see how the gateway ends
    gatewayPid = child.pid;
    gatewayExit = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
        else child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const init = transport.sent.find((m) => m.method === 'initialize');
    const resp = transport.wire.find(isResponseTo(init.id));
    assert.ok(resp && resp.result, `initialize failed: ${JSON.stringify(resp)}`);
    env.initResult = resp.result;
});

after(async () => {
    if (env.transport?._process) await env.transport.close().catch(() => {});
    if (server) await server.stop().catch(() => {});
});

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const expectedLogs = (n) => Array.from({ length: n }, (_, i) => `notification ${i + 1}`);

// Calls poll_notify (closing its own stream after the notifications close_at names) and checks
// what the client saw between its request and its answer, on the wire.
async function pollThroughCloses(label) {
    const args = { count: 6, delay_ms: 150, close_after: 2, close_at: [4], retry_ms: RETRY_MS };
    const c = await checks.call('poll_notify', args);
    assert.equal(text(c.res), 'sent 6, closed the stream twice', `${label}: the server closed the stream twice`);
    const logs = c.during.filter((m) => m.method === 'notifications/message').map((m) => m.params.data);
    assert.deepEqual(logs, expectedLogs(6), `${label}: notifications 1..6 exactly once, in order, before the result`);
    const answers = env.transport.wire.filter(isResponseTo(c.req.id));
    assert.equal(answers.length, 1, `${label}: exactly one answer to the call`);
}

test('initialize through the gateway negotiates 2025-11-25 and names the server', () => checks.checkInitialize());

test('ping returns exactly {}', () => checks.checkPing());

test('logging/setLevel returns exactly {}', () => checks.checkSetLevel());

// long_running as lib/everything.mjs checks it, strictly on the wire, but without its count of
// onprogress calls (at least three): the gateway passes on each event as the server sends it,
// and a client slower than 20 ms between steps may read several in one chunk, where SDK 1.32.2
// drops a progress read with the response (see progressVisibleToSdk).
const overrides = {
    async long_running() {
        const progress = [];
        const c = await checks.call('long_running', { steps: 4, delay_ms: 20 }, { onprogress: (p) => progress.push(p) });
        assert.deepEqual(c.raw, textResult('completed 4 steps'));
        const onWire = progressIn(c.during);
        assert.deepEqual(
            onWire.map((p) => [p.progress, p.total, p.message]),
            [1, 2, 3, 4].map((i) => [i, 4, `step ${i}`]),
            'progress i of 4 with message "step i", in order, before the result',
        );
        for (const p of onWire) assert.strictEqual(p.progressToken, c.req.params._meta.progressToken);
        assert.deepEqual(
            progress.map((p) => p.progress),
            progressVisibleToSdk(c).map((p) => p.progress),
            'onprogress saw every progress the SDK could deliver, in order',
        );
    },
};

test('every listed tool can be called through the gateway', (t) => checks.checkTools(t, overrides));

test('tools/call of an unknown tool rejects with -32602', () => checks.checkUnknownTool());

test('resources: list, read each, templates, read the template', (t) => checks.checkResources(t));

test('prompts: list and get every prompt with its required arguments', (t) => checks.checkPrompts(t));

test('completion/complete filters by prefix', () => checks.checkCompletion());

test('a tool whose SSE stream the server closes twice: full result, every notification once and in order', () =>
    pollThroughCloses('poll_notify'));

test('test_reconnection returns its exact text through the gateway resumption', async () => {
    const c = await checks.call('test_reconnection', {});
    assert.equal(
        text(c.res),
        'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
    );
});

test('the server dies: the call in flight gets a clear JSON-RPC error, a new call too, the gateway stays up', async () => {
    const mark = env.transport.wire.length;
    const t0 = Date.now();
    const call = env.client
        .callTool({ name: 'poll_notify', arguments: { count: 200, delay_ms: 100 } }, undefined, { timeout: 60_000 })
        .then(
            (r) => ({ ok: r }),
            (e) => ({ err: e }),
        );
    await env.transport.waitFor(
        (m) => m.method === 'notifications/message' && m.params?.data === 'notification 2',
        mark,
        10_000,
        'the call to be under way',
    );
    server.child.kill('SIGKILL');
    await deadline(server.exited, 5000, 'mcp-everything to die');
    const r = await deadline(call, 20_000, 'the call in flight to fail');
    assert.ok(r.err instanceof McpError, `the call in flight failed with a JSON-RPC error: ${JSON.stringify(r)}`);
    assert.equal(r.err.code, -32603);
    assert.match(r.err.message, /gave up resuming the request's stream|Couldn't connect/, 'the error says why');
    console.log(`# the call in flight failed ${Date.now() - t0} ms after it started: ${r.err.message}`);

    // While the server is down, a call fails at once with the reason.
    const t1 = Date.now();
    await assert.rejects(
        env.client.callTool({ name: 'echo', arguments: { text: 'nobody there' } }, undefined, { timeout: 10_000 }),
        (e) => e instanceof McpError && e.code === -32603 && /connect/i.test(e.message),
    );
    assert.ok(Date.now() - t1 < 5000, 'the call while the server is down fails within 5 s');
    assert.equal(env.transport.pid, gatewayPid, 'the gateway is still the same process');
});

test('the server restarted on the same port: the next calls succeed, with nothing done by the client', async () => {
    server = await startServer(port);
    const echo = await deadline(
        env.client.callTool({ name: 'echo', arguments: { text: 'after the restart' } }, undefined, { timeout: 15_000 }),
        16_000,
        'echo after the restart',
    );
    assert.equal(text(echo), 'after the restart');
    const { tools } = await env.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    assert.ok(tools.some((t) => t.name === 'poll_notify'), 'tools/list after the restart');
    await pollThroughCloses('poll_notify on the new session');
    assert.equal(env.transport.pid, gatewayPid, 'the gateway is still the same process');
    assert.equal(env.transport.sent.filter((m) => m.method === 'initialize').length, 1, 'the client sent initialize once');
});

test('the SDK saw no protocol errors', () => {
    const real = env.clientErrors.filter((e) => !e.includes('progress notification for an unknown token'));
    assert.deepEqual(real, []);
});

test('close() (stdin EOF) ends the gateway with status 0, without a signal', async () => {
    const t0 = Date.now();
    await env.client.close();
    const { code, signal } = await deadline(gatewayExit, 5000, 'the gateway to exit');
    assert.equal(signal, null, `the gateway was killed by ${signal} instead of exiting on EOF`);
    assert.equal(code, 0, `the gateway's exit status; its stderr:\n${gatewayErr}`);
    // close() ends stdin and waits 2 s before it resorts to SIGTERM.
    assert.ok(Date.now() - t0 < 2000, 'the gateway exited on stdin EOF');
});
