// Interop: the official TypeScript SDK client (1.32.2) drives our mcp-everything over stdio.
//
// Run by CTest as `node ts_client_stdio.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.
//
// What the server must offer and answer is in lib/everything.mjs, shared with the Streamable HTTP
// test. Results are compared on the wire: a tap on the transport records every message exactly
// as the server sent it, because the SDK's schemas strip unknown keys and would hide extra or
// misspelt fields. The tap also gives the order of notifications relative to the response they
// belong to. What only stdio has is checked here: the child process ends on stdin EOF.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LoggingMessageNotificationSchema,
    ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
    REQUEST_TIMEOUT_MS,
    ROOTS,
    SAMPLING_TEXT,
    everythingChecks,
    fillFromSchema,
    isResponseTo,
    withTap,
} from './lib/everything.mjs';

// Every wait below has its own deadline; this one bounds the whole file so that CTest never
// has to kill us. It is unref'd so it does not keep a finished run alive.
const OVERALL_DEADLINE_MS = 55_000;
const overall = setTimeout(() => {
    console.error(`FAIL: overall deadline of ${OVERALL_DEADLINE_MS} ms exceeded`);
    process.exit(1);
}, OVERALL_DEADLINE_MS);
overall.unref();

const binDir = process.env.MCP_BIN_DIR;
const TapTransport = withTap(StdioClientTransport);
let child; // the ChildProcess, kept so that close() can be checked to end it cleanly

// What the checks in lib/everything.mjs work on; the arrays are the ones the handlers push to.
const env = {
    client: undefined,
    transport: undefined,
    initResult: undefined, // raw initialize result
    serverRequests: [], // {method, params} of every server->client request the handlers saw
    loggingSeen: [],
    updatesSeen: [],
    clientErrors: [], // everything the SDK reported through Client.onerror
};
const checks = everythingChecks(env);

before(async () => {
    assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
    const exe = path.join(binDir, 'mcp-everything');
    assert.ok(existsSync(exe), `${exe} does not exist`);

    const transport = new TapTransport({ command: exe, args: ['--stdio'], stderr: 'inherit' });
    const client = new Client(
        { name: 'libmcp-interop-ts-client', version: '1.0.0' },
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

    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    child = transport._process; // private, but the only way to see how the child ends
    const init = transport.sent.find((m) => m.method === 'initialize');
    const resp = transport.wire.find(isResponseTo(init.id));
    assert.ok(resp && resp.result, `initialize failed: ${JSON.stringify(resp)}`);
    env.initResult = resp.result;
});

after(async () => {
    // If a test failed before close(), make sure the child does not outlive us.
    if (env.transport && env.transport._process) await env.transport.close();
});

test('initialize negotiates 2025-11-25 and names the server', () => checks.checkInitialize());

test('ping returns exactly {}', () => checks.checkPing());

test('logging/setLevel returns exactly {}', () => checks.checkSetLevel());

test('every listed tool can be called and returns the expected result', (t) => checks.checkTools(t));

test('tools/call of an unknown tool rejects with -32602', () => checks.checkUnknownTool());

test('resources: list, read each, templates, read the template', (t) => checks.checkResources(t));

test('prompts: list and get every prompt with its required arguments', (t) => checks.checkPrompts(t));

test('completion/complete filters by prefix', () => checks.checkCompletion());

test('the SDK saw no protocol errors', () => {
    // Late progress is the SDK's own race (see progressVisibleToSdk in lib/everything.mjs);
    // anything else, such as a line on stdout that is not a JSON-RPC message, is the server's
    // fault.
    const real = env.clientErrors.filter((e) => !e.includes('progress notification for an unknown token'));
    assert.deepEqual(real, []);
});

test('close() ends the child cleanly', async () => {
    assert.ok(child, 'child process handle');
    const exited = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', resolve);
    });
    const t0 = Date.now();
    await env.client.close();
    await Promise.race([exited, new Promise((_, rej) => setTimeout(() => rej(new Error('child did not exit')), 5000).unref())]);
    // close() ends stdin and waits 2 s before it resorts to SIGTERM; a server that exits on EOF
    // is gone well before that, with status 0 and no signal.
    assert.equal(child.signalCode, null, `child was killed by ${child.signalCode} instead of exiting on EOF`);
    assert.equal(child.exitCode, 0, 'child exit status');
    assert.ok(Date.now() - t0 < 2000, 'child exited on stdin EOF without needing a signal');
});
