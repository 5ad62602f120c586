// Interop: libmcp's client in revision 2026-07-28 against a server on the TypeScript SDK v2
// (lib/ts_v2_server.mjs: @modelcontextprotocol/server 2.4.0), over loopback sockets and over
// stdio, pinned to 2026-07-28 and in the auto mode; and in the auto mode against the v1 server
// (lib/ts_sdk_server.mjs, @modelcontextprotocol/sdk 1.32.2), which speaks only the older
// revisions: the client falls back to initialize and works.
//
// Run by CTest as `node our_client_modern.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.
//
// The client is bin/interop_http_client_driver (http_client_driver.c, which drives the stdio
// client too): it connects, runs a script of steps through the public API and prints one JSON
// line per step, with the elicitation and sampling requests its handlers answered meanwhile (the
// MRTR rounds of 2026-07-28, answered by the same handlers as the older revisions' server
// requests) and the subscription events of mcp_client_listen.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import { ELICITATION_ANSWER, names, ok, ROOTS, runDriver, SAMPLING_ANSWER, texts } from './lib/driver.mjs';
import { overallDeadline, startListening } from './lib/http.mjs';

overallDeadline(120_000);

const REQUEST_TIMEOUT_MS = 15_000;
const RUN_TIMEOUT_MS = 45_000;

const V2_SERVER = fileURLToPath(new URL('./lib/ts_v2_server.mjs', import.meta.url));
const V2_LISTEN_RE = /^ts-v2-server: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;
const V1_SERVER = fileURLToPath(new URL('./lib/ts_sdk_server.mjs', import.meta.url));
const V1_LISTEN_RE = /^ts-sdk-server: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;


// Runs the driver with args (a URL, or --stdio and a command) in the given protocol.
function runModern(args, protocol, steps) {
    const fields = {
        timeout_ms: REQUEST_TIMEOUT_MS,
        protocol,
        sampling: SAMPLING_ANSWER,
        elicitation: ELICITATION_ANSWER,
        roots: ROOTS,
    };
    return runDriver(args, fields, steps, RUN_TIMEOUT_MS);
}

const STEPS = [
    ['tools', { op: 'list_tools' }],
    ['echo', { op: 'call_tool', name: 'echo', args: { text: 'hello from libmcp' } }],
    ['elicit', { op: 'call_tool', name: 'elicit', args: { message: 'who are you?' } }],
    ['sample', { op: 'call_tool', name: 'sample', args: { prompt: 'say something' } }],
    ['roots', { op: 'call_tool', name: 'roots', args: {} }],
    ['resources', { op: 'list_resources' }],
    ['read', { op: 'read_resource', uri: 'peer://greeting' }],
    ['prompts', { op: 'list_prompts' }],
    ['prompt', { op: 'get_prompt', name: 'greet', args: { name: 'Ada' } }],
    ['listen', { op: 'listen', filter: { toolsListChanged: true } }],
    ['ack', { op: 'wait_listen', count: 1, timeout_ms: REQUEST_TIMEOUT_MS }],
    ['toggle', { op: 'call_tool', name: 'toggle_extra', args: {} }],
    ['changed', { op: 'wait_listen', count: 2, timeout_ms: REQUEST_TIMEOUT_MS }],
    ['tools_after', { op: 'list_tools' }],
    ['stop', { op: 'cancel_listen' }],
    ['ended', { op: 'wait_listen', count: 3, timeout_ms: REQUEST_TIMEOUT_MS }],
    ['ping', { op: 'ping' }],
];

// The checks of one run of STEPS against the v2 server.
function checkModernRun(getRun) {
    test('speaks 2026-07-28, and knows the server from server/discover', () => {
        const run = getRun();
        assert.equal(run.connect.protocolVersion, '2026-07-28');
        assert.equal(run.connect.serverInfo.name, 'ts-v2-server');
        assert.ok(run.connect.capabilities.tools, JSON.stringify(run.connect.capabilities));
    });

    test('lists and calls tools', () => {
        const run = getRun();
        const tools = names(ok(run, 'tools').result.tools);
        for (const n of ['echo', 'elicit', 'sample', 'roots', 'toggle_extra']) assert.ok(tools.includes(n), `tools: ${tools}`);
        assert.ok(!tools.includes('extra'), 'extra is off at first');
        assert.deepEqual(texts(ok(run, 'echo').result), ['hello from libmcp']);
        assert.equal(ok(run, 'echo').result.resultType, 'complete');
    });

    test('answers an elicitation through MRTR with its handler, and the server gets the answer', () => {
        const line = ok(getRun(), 'elicit');
        assert.equal(line.elicitation.length, 1, 'one elicitation during the call');
        assert.equal(line.elicitation[0].message, 'who are you?');
        assert.deepEqual(JSON.parse(texts(line.result)[0]), ELICITATION_ANSWER);
    });

    test('answers a sampling request through MRTR with its handler, and the server gets the answer', () => {
        const line = ok(getRun(), 'sample');
        assert.equal(line.sampling.length, 1, 'one sampling request during the call');
        assert.deepEqual(line.sampling[0].messages, [{ role: 'user', content: { type: 'text', text: 'say something' } }]);
        assert.deepEqual(JSON.parse(texts(line.result)[0]), SAMPLING_ANSWER);
    });

    test('answers roots/list through MRTR with its roots', () => {
        assert.deepEqual(JSON.parse(texts(ok(getRun(), 'roots').result)[0]), { roots: ROOTS });
    });

    test('lists and reads a resource, lists and gets a prompt', () => {
        const run = getRun();
        assert.deepEqual(names(ok(run, 'resources').result.resources), ['greeting']);
        assert.deepEqual(ok(run, 'read').result.contents, [
            { uri: 'peer://greeting', mimeType: 'text/plain', text: 'Hello from the TypeScript SDK v2 server' },
        ]);
        assert.deepEqual(names(ok(run, 'prompts').result.prompts), ['greet']);
        assert.deepEqual(ok(run, 'prompt').result.messages, [{ role: 'user', content: { type: 'text', text: 'Please greet Ada' } }]);
    });

    test('subscriptions/listen: acknowledged, gets the list change, ends when cancelled', () => {
        const run = getRun();
        const id = ok(run, 'listen').result.id;
        // Every subscription event from the listen on, in order.
        const events = ['listen', 'ack', 'toggle', 'changed', 'tools_after', 'stop', 'ended'].flatMap((l) => ok(run, l).listen);
        const kinds = events.map((e) => e.kind);
        assert.deepEqual(kinds, ['acknowledged', 'notification', 'ended'], JSON.stringify(events));
        for (const e of events) assert.equal(e.id, id);
        assert.equal(events[0].params.notifications.toolsListChanged, true);
        assert.equal(events[1].method, 'notifications/tools/list_changed');
        assert.equal(events[1].params._meta['io.modelcontextprotocol/subscriptionId'], id);
        assert.equal(events[2].status, -4, 'ended by the cancel (MCP_ECANCELED)');
        assert.ok(names(ok(run, 'tools_after').result.tools).includes('extra'), 'the change is real');
        // Nothing tagged with the subscription reached the application's notification hook.
        for (const l of Object.values(run.steps)) assert.deepEqual(l.notifications, [], JSON.stringify(l));
    });

    test('ping goes as server/discover', () => {
        ok(getRun(), 'ping');
    });
}

// STEPS against the v2 server in protocol, over HTTP (a server of its own) or stdio.
function modernSuite(title, protocol, http) {
    describe(title, () => {
        let server;
        let run;
        before(async () => {
            if (http) server = await startListening('ts-v2-server', process.execPath, [V2_SERVER, '0'], V2_LISTEN_RE);
            const args = http ? [server.match[1]] : ['--stdio', process.execPath, V2_SERVER, '--stdio'];
            run = await runModern(args, protocol, STEPS);
        });
        after(async () => {
            if (server) await server.stop();
        });
        checkModernRun(() => run);
    });
}

modernSuite('TypeScript SDK v2 server over Streamable HTTP, pinned to 2026-07-28', '2026-07-28', true);
modernSuite('TypeScript SDK v2 server over Streamable HTTP, auto mode', 'auto', true);
modernSuite('TypeScript SDK v2 server over stdio, auto mode', 'auto', false);

describe('TypeScript SDK v2 server over stdio, pinned to 2026-07-28', () => {
    let run;
    before(async () => {
        run = await runModern(['--stdio', process.execPath, V2_SERVER, '--stdio'], '2026-07-28', STEPS.slice(0, 5));
    });
    test('speaks 2026-07-28 and answers MRTR', () => {
        assert.equal(run.connect.protocolVersion, '2026-07-28');
        assert.deepEqual(JSON.parse(texts(ok(run, 'elicit').result)[0]), ELICITATION_ANSWER);
    });
});

describe('TypeScript SDK v1 server (older revisions only), auto mode: falls back to initialize', () => {
    let server;
    let run;
    before(async () => {
        server = await startListening('ts-sdk-server', process.execPath, [V1_SERVER, '0'], V1_LISTEN_RE);
        run = await runModern([server.match[1]], 'auto', [
            ['tools', { op: 'list_tools' }],
            ['echo', { op: 'call_tool', name: 'echo', args: { text: 'legacy' } }],
            ['elicit', { op: 'call_tool', name: 'elicit', args: { message: 'who?' } }],
            ['read', { op: 'read_resource', uri: 'peer://greeting' }],
            ['listen', { op: 'listen', filter: { toolsListChanged: true } }],
            ['ack', { op: 'wait_listen', count: 1, timeout_ms: REQUEST_TIMEOUT_MS }],
            ['ping', { op: 'ping' }],
        ]);
    });
    after(async () => {
        if (server) await server.stop();
    });

    test('speaks 2025-11-25 through initialize, with a session', () => {
        assert.equal(run.connect.protocolVersion, '2025-11-25');
        assert.equal(run.connect.serverInfo.name, 'ts-sdk-server');
    });

    test('calls tools, answers a server request, reads a resource', () => {
        assert.deepEqual(texts(ok(run, 'echo').result), ['legacy']);
        const line = ok(run, 'elicit');
        assert.equal(line.elicitation.length, 1);
        assert.equal(JSON.parse(texts(line.result)[0]).action, 'accept');
        assert.equal(ok(run, 'read').result.contents[0].uri, 'peer://greeting');
        ok(run, 'ping');
    });

    test('mcp_client_listen maps onto the session: acknowledged with what the server declared', () => {
        const events = ['listen', 'ack'].flatMap((l) => ok(run, l).listen);
        assert.equal(events.length, 1, JSON.stringify(events));
        assert.equal(events[0].kind, 'acknowledged');
    });
});
