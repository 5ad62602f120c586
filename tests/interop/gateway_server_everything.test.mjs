// Interop: mcp-gateway in front of the official TypeScript "everything" server (npm
// @modelcontextprotocol/server-everything, pinned in package-lock.json, run over stdio), driven by
// the TypeScript SDK's clients over Streamable HTTP: the v1 client (@modelcontextprotocol/sdk
// 1.32.2) and the v2 client (@modelcontextprotocol/client 2.4.0, in its default legacy mode). Each
// lists the tools, calls echo and get-sum, a long-running tool with progress (every progress
// notification reaches onprogress, under the client's own token, before the result), and the
// tool that asks the client to sample (the request reaches the client's handler through the
// gateway and its answer goes back to the server). Each session has a server process of its own.
// Then the v2 client pinned to revision 2026-07-28: that server speaks only the older revisions,
// so the gateway translates, and the server's sampling request reaches the client as an
// InputRequiredResult whose retry brings the answer back to the waiting server.
//
// Run by CTest as `node gateway_server_everything.test.mjs` in tests/interop with MCP_BIN_DIR set
// to the build's bin directory. Exit code 0 means every check passed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

import { overallDeadline, startListening } from './lib/http.mjs';

overallDeadline(90_000);

const TIMEOUT_MS = 20_000;
const binDir = process.env.MCP_BIN_DIR;
assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
const GATEWAY = path.join(binDir, 'mcp-gateway');
assert.ok(existsSync(GATEWAY), `${GATEWAY} does not exist`);

const require = createRequire(import.meta.url);
const pkgJsonPath = require.resolve('@modelcontextprotocol/server-everything/package.json');
const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
const binField = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['mcp-server-everything'];
const ENTRY = path.join(path.dirname(pkgJsonPath), binField);
assert.ok(existsSync(ENTRY), `${ENTRY} does not exist`);

const LISTEN_RE = /^mcp-gateway: listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/;
let gw;
const clients = [];

before(async () => {
    gw = await startListening('mcp-gateway', GATEWAY, ['--http', '127.0.0.1:0', '--log-level', 'warning', '--', process.execPath, ENTRY, 'stdio'], LISTEN_RE, { ms: 15_000 });
});

after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (gw) {
        const { code, signal } = await gw.stop(15_000);
        assert.equal(signal, null, 'the gateway exits by itself on SIGTERM');
        assert.equal(code, 0, 'the gateway exits 0 on SIGTERM');
    }
});

const SAMPLED = 'sampled through the gateway';

async function connect(Client, Transport, schema, extra) {
    const client = new Client({ name: 'libmcp-gateway-interop', version: '1.0.0' }, { capabilities: { sampling: {} }, ...extra });
    const seen = [];
    client.setRequestHandler(schema ?? 'sampling/createMessage', async (req) => {
        seen.push(req.params);
        return { model: 'test-model', role: 'assistant', stopReason: 'endTurn', content: { type: 'text', text: SAMPLED } };
    });
    await client.connect(new Transport(new URL(gw.match[1])));
    clients.push(client);
    return { client, seen };
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The v1 client takes (params, resultSchema, options), the v2 client (params, options).
const callTool = (client, params, options) =>
    client instanceof V1Client ? client.callTool(params, undefined, options) : client.callTool(params, options);

async function exercise(label, { client, seen }) {
    const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
    const names = tools.map((t) => t.name);
    for (const n of ['echo', 'get-sum', 'trigger-long-running-operation', 'trigger-sampling-request'])
        assert.ok(names.includes(n), `${label}: tools/list lacks ${n}: ${names}`);

    const echo = await callTool(client, { name: 'echo', arguments: { message: `hello from ${label}` } }, { timeout: TIMEOUT_MS });
    assert.match(text(echo), new RegExp(`hello from ${label}`), `${label}: echo`);
    const sum = await callTool(client, { name: 'get-sum', arguments: { a: 2, b: 40 } }, { timeout: TIMEOUT_MS });
    assert.match(text(sum), /42/, `${label}: get-sum`);

    const progress = [];
    const long = await callTool(client, { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, {
        timeout: TIMEOUT_MS,
        onprogress: (p) => progress.push(p),
    });
    assert.notEqual(long.isError, true, `${label}: long-running operation: ${JSON.stringify(long)}`);
    assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3], `${label}: every progress, in order: ${JSON.stringify(progress)}`);
    assert.ok(progress.every((p) => p.total === 3), `${label}: progress totals`);

    const s = await callTool(client, { name: 'trigger-sampling-request', arguments: { prompt: `sample for ${label}`, maxTokens: 20 } }, { timeout: TIMEOUT_MS });
    assert.equal(seen.length, 1, `${label}: the client's sampling handler ran once`);
    assert.match(JSON.stringify(seen[0].messages), new RegExp(`sample for ${label}`), `${label}: the server's sampling request reached this client`);
    assert.match(JSON.stringify(s), new RegExp(SAMPLED), `${label}: the server got the client's answer: ${JSON.stringify(s)}`);
}

test('the v1 client lists and calls tools, with progress and sampling', async () => {
    await exercise('v1', await connect(V1Client, V1Transport, CreateMessageRequestSchema));
});

test('the v2 client (legacy mode) lists and calls tools, with progress and sampling', async () => {
    await exercise('v2', await connect(V2Client, V2Transport));
});

test('both at once, each session with a server process of its own', async () => {
    const [a, b] = await Promise.all([connect(V1Client, V1Transport, CreateMessageRequestSchema), connect(V2Client, V2Transport)]);
    await Promise.all([exercise('v1-again', a), exercise('v2-again', b)]);
    const res = await fetch(new URL('/metrics', gw.match[1]));
    const metrics = await res.text();
    const children = Number(/\nmcp_gateway_children (\d+)/.exec(`\n${metrics}`)?.[1]);
    assert.ok(children >= 2, `at least the two open sessions' server processes run: ${children}`);
});

test('the v2 client pinned to 2026-07-28: translated, sampling as a Multi Round-Trip Request', async () => {
    const env = await connect(V2Client, V2Transport, undefined, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    assert.equal(env.client.getProtocolEra(), 'modern', 'the client took the modern era');
    await exercise('v2-modern', env);
    const res = await fetch(new URL('/metrics', gw.match[1]));
    const metrics = await res.text();
    assert.match(metrics, /mcp_gateway_method_requests_total\{method="tools\/call",outcome="input_required"\} [1-9]/, 'the sampling went out as an InputRequiredResult');
});
