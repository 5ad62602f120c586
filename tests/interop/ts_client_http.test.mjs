// Interop: the official TypeScript SDK client (1.32.2) drives our mcp-everything over Streamable
// HTTP (StreamableHTTPClientTransport), with --json-response, and over the HTTP+SSE
// transport (SSEClientTransport).
//
// Run by CTest as `node ts_client_http.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.
//
// The results are the same as over stdio (lib/everything.mjs holds the expectations). On top,
// an HttpRecorder passed to the transport as its fetch records which HTTP response carried each
// message, so the test checks what only HTTP has: a request's progress, logging and
// server-to-client requests (sampling, elicitation, roots) travel on that request's own POST
// stream before its result, updates not tied to a request on the standalone GET stream, and a
// deleted session answers 404.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
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
    assertArgsFitSchema,
    everythingChecks,
    fillFromSchema,
    isResponseTo,
    logsIn,
    textResult,
    withTap,
} from './lib/everything.mjs';
import { HttpRecorder, deadline, overallDeadline, startEverything } from './lib/http.mjs';

// Every wait below has its own deadline; this one bounds the whole file.
overallDeadline(150_000);

const binDir = process.env.MCP_BIN_DIR;
const HttpTap = withTap(StreamableHTTPClientTransport);
const SseTap = withTap(SSEClientTransport);

// Client requests the server may send, and notifications tied to a request: these must travel
// on the POST stream of the request they belong to.
const SERVER_REQUESTS = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list', 'ping']);
const isServerRequest = (m) => typeof m.method === 'string' && 'id' in m;
const isRequestScoped = (m) =>
    isServerRequest(m) || m.method === 'notifications/progress' || m.method === 'notifications/message';

// A client with the handlers every session here needs; state collects what they saw.
function makeClient(state) {
    const client = new Client(
        { name: 'libmcp-interop-ts-http-client', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
    );
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        state.serverRequests.push({ method: req.method, params: req.params });
        return { role: 'assistant', content: { type: 'text', text: SAMPLING_TEXT }, model: 'test-model', stopReason: 'endTurn' };
    });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
        state.serverRequests.push({ method: req.method, params: req.params });
        return { action: 'accept', content: fillFromSchema(req.params.requestedSchema) };
    });
    client.setRequestHandler(ListRootsRequestSchema, async (req) => {
        state.serverRequests.push({ method: req.method, params: req.params });
        return { roots: ROOTS };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        state.loggingSeen.push(n.params);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        state.updatesSeen.push(n.params.uri);
    });
    client.onerror = (err) => state.clientErrors.push(String(err?.message ?? err));
    return client;
}

const newState = () => ({ serverRequests: [], loggingSeen: [], updatesSeen: [], clientErrors: [] });

// The standalone GET stream of a session (status 200, SSE, no Last-Event-ID).
const isStandaloneGet = (ex) =>
    ex.method === 'GET' && !ex.requestHeaders.has('last-event-id') && ex.status === 200 && ex.contentType === 'text/event-stream';

// ---- Streamable HTTP, default mode ------------------------------------------------------------

let server; // the default-mode server (the HTTP+SSE tests use it as well)
const rec = new HttpRecorder();
const env = { client: undefined, transport: undefined, initResult: undefined, ...newState() };
const checks = everythingChecks(env);
let sessionId;

// The exchange (made after exchange number after) that POSTed the client's answer to the server
// request req, once its status is in. The server acted on the answer before it sent the result,
// but the 202 may still be on its way to the client when the result arrives on another stream.
function answerTo(recorder, req, after) {
    const isAnswer = (e) =>
        e.n > after && e.method === 'POST' && e.body?.id === req.id && !('method' in e.body) && ('result' in e.body || 'error' in e.body);
    assert.ok(recorder.exchanges.some(isAnswer), `the client's answer to ${req.method} id ${req.id} was not POSTed`);
    return recorder.waitResponse(isAnswer, 5000, `the response to the answer to ${req.method}`);
}

// Checks, after one tool check ran, that everything request-scoped the server sent in the
// meantime came on the stream of a tools/call sent in the meantime (its POST response, plus any
// GET that resumed it with Last-Event-ID), before its result, with the result last; that the
// client's answers to server requests were POSTs that got 202; and that nothing
// request-scoped came on the standalone GET stream.
async function checkCarriage(name, sentMark, exMark, wireMark) {
    const calls = env.transport.sent.slice(sentMark).filter((m) => m.method === 'tools/call');
    assert.ok(calls.length >= 1, `${name}: no tools/call was sent`);
    const carried = new Map(); // JSON of a request-scoped message -> times seen on a call's stream
    const onCallStreams = new Set();
    for (const req of calls) {
        const ex = rec.postOf('tools/call', req.id);
        assert.ok(ex, `${name}: POST of tools/call id ${req.id} not recorded`);
        assert.equal(ex.status, 200, `${name}: tools/call POST status`);
        assert.equal(ex.contentType, 'text/event-stream', `${name}: tools/call answered with an SSE stream`);
        assert.equal(ex.headers.get('mcp-session-id'), sessionId, `${name}: Mcp-Session-Id on the POST response`);
        await rec.waitEnd(ex, 5000, `the end of the tools/call ${req.params.name} POST stream`);
        const chain = rec.chainOf(ex);
        const last = chain.at(-1);
        await rec.waitEnd(last, 5000, `the end of the last stream of tools/call ${req.params.name}`);
        for (const e of chain) {
            onCallStreams.add(e);
            assert.equal(e.status, 200, `${name}: exchange ${e.n} (${e.method}) of the call's stream`);
            for (const ev of e.events) {
                // Priming events (SEP-1699) carry an id and empty data; all else is a message.
                if (ev.data === '') assert.ok(ev.id, `${name}: an empty SSE event without an id`);
                else assert.equal(ev.event, 'message', `${name}: SSE event type`);
            }
        }
        const messages = chain.flatMap((e) => e.messages);
        const result = messages.at(-1);
        assert.ok(result && isResponseTo(req.id)(result), `${name}: the result is the last message of the call's stream`);
        assert.ok(last.messages.includes(result), `${name}: the result ends the last exchange of the chain`);
        for (const m of messages.slice(0, -1)) {
            assert.ok(isRequestScoped(m), `${name}: unexpected message on the tools/call stream: ${JSON.stringify(m)}`);
            if (m.method === 'notifications/progress') {
                assert.strictEqual(m.params.progressToken, req.params._meta?.progressToken, `${name}: progress for this call's token`);
            }
            if (isServerRequest(m)) {
                assert.ok(SERVER_REQUESTS.has(m.method), `${name}: unknown server request ${m.method}`);
                const answer = await answerTo(rec, m, ex.n);
                assert.equal(answer.status, 202, `${name}: the answer to ${m.method} got 202`);
                assert.equal(answer.messages.length, 0, `${name}: the 202 has no body`);
            }
            const k = JSON.stringify(m);
            carried.set(k, (carried.get(k) ?? 0) + 1);
        }
    }
    // Everything request-scoped the SDK saw came from one of those streams.
    for (const m of env.transport.wire.slice(wireMark)) {
        if (!isRequestScoped(m)) continue;
        const k = JSON.stringify(m);
        const n = carried.get(k) ?? 0;
        assert.ok(n > 0, `${name}: ${m.method} did not come on its tools/call stream: ${k}`);
        carried.set(k, n - 1);
    }
    for (const ex of rec.exchanges.slice(exMark)) {
        if (ex.method !== 'GET' || onCallStreams.has(ex)) continue;
        assert.deepEqual(ex.messages.filter(isRequestScoped), [], `${name}: request-scoped messages on GET ${ex.n}`);
    }
    // The standalone GET opened at the start never carries them either.
    const get = rec.exchanges.find(isStandaloneGet);
    assert.deepEqual(get.messages.filter(isRequestScoped), [], `${name}: request-scoped messages on the standalone GET`);
}

// SEP-1699 polling: poll_notify closes its own POST stream after close_after notifications,
// with retry: retry_ms; the SDK comes back after that long with a GET carrying Last-Event-ID,
// and gets the notifications sent meanwhile (kept in the server's event store) and the result.
async function pollNotifyOverHttp(tool) {
    const args = { count: 4, delay_ms: 30, close_after: 2, retry_ms: 150 };
    assertArgsFitSchema(tool, args);
    const c = await checks.call('poll_notify', args);
    assert.deepEqual(c.raw, textResult('sent 4, closed the stream once'));
    assert.deepEqual(
        logsIn(c.during).map((p) => p.data),
        [1, 2, 3, 4].map((i) => `notification ${i}`),
        'the SDK saw all four notifications, in order, before the result',
    );
    const post = rec.postOf('tools/call', c.req.id);
    await rec.waitEnd(post, 5000, 'the end of the poll_notify POST stream');
    const first = post.events[0];
    assert.ok(first && first.id && first.data === '', `the POST stream starts with a priming event: ${JSON.stringify(first)}`);
    assert.deepEqual(
        post.messages.map((m) => m.params?.data ?? m),
        ['notification 1', 'notification 2'],
        'the POST stream carried the first close_after notifications, then ended without the result',
    );
    const lastEvent = post.events.at(-1);
    assert.equal(lastEvent.retry, String(args.retry_ms), 'the stream ended with retry: retry_ms');
    const ids = post.events.map((e) => e.id);
    assert.ok(ids.every(Boolean), `every event on the POST stream has an id: ${JSON.stringify(post.events)}`);
    assert.equal(new Set(ids).size, ids.length, 'event ids are unique');

    const chain = rec.chainOf(post);
    assert.equal(chain.length, 2, `one resuming GET (chain: ${chain.map((e) => `${e.n} ${e.method} ${e.status}`)})`);
    const resume = chain[1];
    assert.equal(resume.requestHeaders.get('last-event-id'), ids.at(-1), 'resumed from the last id seen');
    assert.equal(resume.status, 200);
    assert.equal(resume.contentType, 'text/event-stream');
    await rec.waitEnd(resume, 5000, 'the end of the resuming GET');
    assert.deepEqual(
        resume.messages.map((m) => (isResponseTo(c.req.id)(m) ? 'result' : m.params?.data)),
        ['notification 3', 'notification 4', 'result'],
        'the resuming GET replayed the rest and the result, then ended',
    );
    const waited = resume.tStart - post.tEnd;
    assert.ok(waited >= args.retry_ms - 20, `the SDK waited retry ms before resuming (${waited.toFixed(0)} ms)`);

    // Closed twice: the resumed stream is closed again and resumed again from its last id. The
    // notifications are further apart than retry_ms, so the first resume is attached (with
    // 250 ms to spare) when the tool closes the stream after notification 3.
    if (!tool.inputSchema.properties?.close_at) return;
    const args2 = { count: 4, delay_ms: 150, close_after: 1, close_at: [3], retry_ms: 50 };
    assertArgsFitSchema(tool, args2);
    const c2 = await checks.call('poll_notify', args2);
    assert.deepEqual(c2.raw, textResult('sent 4, closed the stream twice'));
    assert.deepEqual(logsIn(c2.during).map((p) => p.data), [1, 2, 3, 4].map((i) => `notification ${i}`));
    const post2 = rec.postOf('tools/call', c2.req.id);
    const chain2 = rec.chainOf(post2);
    await rec.waitEnd(chain2.at(-1), 5000, 'the end of the last resuming GET');
    assert.deepEqual(
        chain2.map((e) => [e.method, e.status, e.messages.map((m) => (isResponseTo(c2.req.id)(m) ? 'result' : m.params?.data))]),
        [
            ['POST', 200, ['notification 1']],
            ['GET', 200, ['notification 2', 'notification 3']],
            ['GET', 200, ['notification 4', 'result']],
        ],
        'POST, then a resume that is closed again after notification 3, then a resume with the rest',
    );
    for (let i = 1; i < chain2.length; i++) {
        const lastId = chain2[i - 1].events.filter((e) => e.id).at(-1).id;
        assert.equal(chain2[i].requestHeaders.get('last-event-id'), lastId, `resume ${i} names the last id it saw`);
        assert.equal(chain2[i - 1].events.at(-1).retry, String(args2.retry_ms), `stream ${i - 1} ended with retry`);
    }
}

// Runs a tool's check with the carriage check after it.
const carriageChecked = (name, fn) => async (tool) => {
    const sentMark = env.transport.sent.length;
    const exMark = rec.exchanges.length;
    const wireMark = env.transport.wire.length;
    await fn(tool);
    await checkCarriage(name, sentMark, exMark, wireMark);
};

// Over HTTP the resource update comes on the standalone GET stream, a different connection from
// the tool call's POST, so the stdio test's barrier (a ping after the result) does not order
// them. Here the barrier is a second update on the same GET stream: after unsubscribing, a
// trigger must not notify; after subscribing again, the next trigger's update must be the first
// one the GET stream carries since the unsubscribe.
async function triggerResourceUpdateOverHttp(tool) {
    const uri = 'test://watched-resource';
    const args = { uri };
    assert.deepEqual(tool.inputSchema.required ?? [], ['uri']);
    const get = rec.exchanges.find(isStandaloneGet);
    assert.ok(get, 'the standalone GET stream is open');
    const isUpdate = (m) => m.method === 'notifications/resources/updated' && m.params?.uri === uri;

    assert.deepEqual(await env.client.subscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }), {});
    const mark = env.transport.wire.length;
    const updatesBefore = env.updatesSeen.length;
    const onGetBefore = get.messages.filter(isUpdate).length;
    const { raw } = await checks.call('trigger_resource_update', args);
    assert.deepEqual(raw, textResult('updated'));
    const n = await env.transport.waitFor(isUpdate, mark, 5000, 'notifications/resources/updated');
    assert.deepEqual(n, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    assert.equal(get.messages.filter(isUpdate).length, onGetBefore + 1, 'the update came on the standalone GET stream');
    assert.equal(rec.carrierOf((m) => m === n || JSON.stringify(m) === JSON.stringify(n)), get);
    for (let i = 0; i < 500 && env.updatesSeen.length <= updatesBefore; i++) await new Promise((r) => setImmediate(r));
    assert.ok(env.updatesSeen.length > updatesBefore, 'ResourceUpdatedNotification handler ran');

    assert.deepEqual(await env.client.unsubscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }), {});
    const onGetMark = get.messages.length;
    assert.deepEqual((await checks.call('trigger_resource_update', args)).raw, textResult('updated'));
    assert.deepEqual(await env.client.subscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }), {});
    const mark3 = env.transport.wire.length;
    await checks.call('trigger_resource_update', args);
    await env.transport.waitFor(isUpdate, mark3, 5000, 'notifications/resources/updated after subscribing again');
    assert.deepEqual(
        get.messages.slice(onGetMark).filter(isUpdate).length,
        1,
        'no update while unsubscribed: the GET stream carried only the one after subscribing again',
    );
    assert.deepEqual(await env.client.unsubscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }), {});
}

before(async () => {
    assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
    server = await startEverything(binDir);
    env.transport = new HttpTap(new URL(server.url), { fetch: rec.fetch });
    env.client = makeClient(env);
    await env.client.connect(env.transport, { timeout: REQUEST_TIMEOUT_MS });
    const init = env.transport.sent.find((m) => m.method === 'initialize');
    const resp = env.transport.wire.find(isResponseTo(init.id));
    assert.ok(resp && resp.result, `initialize failed: ${JSON.stringify(resp)}`);
    env.initResult = resp.result;
    sessionId = env.transport.sessionId;
});

after(async () => {
    // MCP_HTTP_TEST_DUMP=1 lists every exchange of the main session, for debugging.
    if (process.env.MCP_HTTP_TEST_DUMP === '1') {
        for (const e of rec.exchanges) {
            const what = e.body?.method ?? (e.body ? `answer ${e.body.id}` : e.requestHeaders.get('last-event-id') ? `resume ${e.requestHeaders.get('last-event-id')}` : '');
            console.error(
                `#${e.n} ${e.tStart.toFixed(0)}..${e.tEnd?.toFixed(0)} ${e.method} ${what} -> ${e.status} ${e.contentType ?? ''} ` +
                    `${e.messages.length} msgs, ${e.events.length} events${e.ended ? '' : ' (not ended)'}`,
            );
        }
    }
    // If a test failed before the end, make sure nothing outlives us.
    await env.client?.close().catch(() => {});
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
});

test('initialize over HTTP: SSE answer, session id, 202 for initialized, standalone GET stream', async () => {
    checks.checkInitialize();
    const initEx = rec.postOf('initialize', env.transport.sent.find((m) => m.method === 'initialize').id);
    assert.equal(initEx.status, 200);
    assert.equal(initEx.contentType, 'text/event-stream');
    assert.match(sessionId ?? '', /^[0-9a-f]{32}$/, 'Mcp-Session-Id is 32 lowercase hex characters');
    assert.equal(initEx.headers.get('mcp-session-id'), sessionId);
    assert.equal(initEx.messages.length, 1, 'the initialize stream carries just the result');
    assert.equal(initEx.requestHeaders.has('mcp-protocol-version'), false, 'the SDK sends no version header on initialize');
    const initialized = rec.exchanges.find((e) => e.method === 'POST' && e.body?.method === 'notifications/initialized');
    assert.ok(initialized, 'notifications/initialized was POSTed');
    assert.equal(initialized.status, 202);
    assert.equal(initialized.messages.length, 0);
    assert.equal(initialized.requestHeaders.get('mcp-session-id'), sessionId);
    assert.equal(initialized.requestHeaders.get('mcp-protocol-version'), '2025-11-25');
    const get = await rec.waitResponse((e) => e.method === 'GET', 5000, 'the standalone GET');
    assert.equal(get.status, 200, 'the standalone GET is accepted');
    assert.equal(get.contentType, 'text/event-stream');
    assert.equal(get.requestHeaders.get('mcp-session-id'), sessionId);
});

test('ping returns exactly {}', () => checks.checkPing());

test('logging/setLevel returns exactly {}', () => checks.checkSetLevel());

test('every listed tool can be called; request-scoped messages come on the call\'s own POST stream', async (t) => {
    const overrides = Object.fromEntries(
        Object.entries(checks.TOOLS).map(([name, fn]) => [name, carriageChecked(name, fn)]),
    );
    overrides.trigger_resource_update = carriageChecked('trigger_resource_update', triggerResourceUpdateOverHttp);
    overrides.poll_notify = carriageChecked('poll_notify', pollNotifyOverHttp);
    await checks.checkTools(t, overrides);
});

test('sampling, elicitation and roots requests arrive on the tools/call POST stream, before the result', async () => {
    for (const [tool, args, method] of [
        ['test_sampling', { prompt: 'on which stream?' }, 'sampling/createMessage'],
        ['test_elicitation', { message: 'on which stream?' }, 'elicitation/create'],
        ['list_roots', {}, 'roots/list'],
    ]) {
        const { req, raw } = await checks.call(tool, args);
        assert.notEqual(raw.isError, true, `${tool} succeeded`);
        const post = rec.postOf('tools/call', req.id);
        await rec.waitEnd(post, 5000, `${tool} POST stream end`);
        assert.deepEqual(
            post.messages.map((m) => (isResponseTo(req.id)(m) ? 'result' : m.method)),
            [method, 'result'],
            `${tool}: its POST stream carried the ${method} request, then the result`,
        );
        const serverReq = post.messages[0];
        const carrier = rec.carrierOf((m) => m.method === method && m.id === serverReq.id);
        assert.equal(carrier, post, `${method} was carried by the tools/call response, not another one`);
        const answer = await answerTo(rec, serverReq, post.n);
        assert.equal(answer.status, 202, `the client's answer to ${method} got 202`);
        assert.ok(answer.n > post.n, 'the answer was POSTed while the tools/call stream was open');
    }
});

test('progress and logging arrive on the POST stream before the result', async () => {
    const progress = [];
    const c = await checks.call('long_running', { steps: 3, delay_ms: 10 }, { onprogress: (p) => progress.push(p) });
    const post = rec.postOf('tools/call', c.req.id);
    await rec.waitEnd(post, 5000, 'long_running POST stream end');
    assert.deepEqual(
        post.messages.map((m) => (m.method === 'notifications/progress' ? m.params.progress : isResponseTo(c.req.id)(m) ? 'result' : m.method)),
        [1, 2, 3, 'result'],
    );
    const n = await checks.call('notify', { count: 2, delay_ms: 0 });
    const post2 = rec.postOf('tools/call', n.req.id);
    await rec.waitEnd(post2, 5000, 'notify POST stream end');
    assert.deepEqual(
        post2.messages.map((m) => (m.method === 'notifications/message' ? m.params.data : isResponseTo(n.req.id)(m) ? 'result' : m.method)),
        ['notification 1', 'notification 2', 'result'],
    );
    // Every SSE event with data is a message event; the others are priming events with an id.
    for (const e of [...post.events, ...post2.events]) {
        if (e.data === '') assert.ok(e.id, `an empty SSE event without an id: ${JSON.stringify(e)}`);
        else assert.equal(e.event, 'message');
    }
});

test('concurrent calls on one session each get their own stream', async () => {
    const runs = [3, 4, 5].map((steps) => {
        const progress = [];
        return checks
            .call('long_running', { steps, delay_ms: 15 }, { onprogress: (p) => progress.push(p) })
            .then((c) => ({ steps, c, progress }));
    });
    for (const { steps, c } of await deadline(Promise.all(runs), 15_000, 'three concurrent long_running calls')) {
        assert.deepEqual(c.raw, textResult(`completed ${steps} steps`));
        const post = rec.postOf('tools/call', c.req.id);
        await rec.waitEnd(post, 5000, 'long_running POST stream end');
        const token = c.req.params._meta.progressToken;
        assert.deepEqual(
            post.messages.map((m) => (isResponseTo(c.req.id)(m) ? 'result' : [m.method, m.params.progressToken, m.params.progress])),
            [...Array.from({ length: steps }, (_, i) => ['notifications/progress', token, i + 1]), 'result'],
            `the call with ${steps} steps got exactly its own progress and result`,
        );
    }
});

test('tools/call of an unknown tool rejects with -32602', () => checks.checkUnknownTool());

test('resources: list, read each, templates, read the template', (t) => checks.checkResources(t));

test('prompts: list and get every prompt with its required arguments', (t) => checks.checkPrompts(t));

test('completion/complete filters by prefix', () => checks.checkCompletion());

test('every request carried the session id and the negotiated protocol version', () => {
    for (const ex of rec.exchanges) {
        if (ex.method === 'POST' && ex.body?.method === 'initialize') continue;
        assert.equal(ex.requestHeaders.get('mcp-session-id'), sessionId, `exchange ${ex.n} (${ex.method}) session id`);
        assert.equal(ex.requestHeaders.get('mcp-protocol-version'), '2025-11-25', `exchange ${ex.n} version header`);
        assert.ok(ex.status >= 200 && ex.status < 300, `exchange ${ex.n} (${ex.method} ${JSON.stringify(ex.body)?.slice(0, 80)}) got ${ex.status}`);
    }
});

test('the SDK saw no protocol errors', () => {
    // Late progress is the SDK's own race (see progressVisibleToSdk in lib/everything.mjs).
    const real = env.clientErrors.filter((e) => !e.includes('progress notification for an unknown token'));
    assert.deepEqual(real, []);
});

test('HTTP+SSE (/sse): initialize, list tools, call echo, close; the session is then gone', async () => {
    const sseRec = new HttpRecorder();
    const st = newState();
    const transport = new SseTap(new URL('/sse', server.base), { fetch: sseRec.fetch });
    const client = makeClient(st);
    try {
        await deadline(client.connect(transport, { timeout: REQUEST_TIMEOUT_MS }), 15_000, 'HTTP+SSE connect');
        const init = transport.wire.find((m) => 'result' in m && m.result.serverInfo);
        assert.ok(init, 'initialize result over /sse');
        assert.equal(init.result.serverInfo.name, 'mcp-everything');
        const sse = sseRec.exchanges.find((e) => e.method === 'GET');
        assert.equal(sse.status, 200);
        assert.equal(sse.contentType, 'text/event-stream');
        const endpoint = sse.events.find((e) => e.event === 'endpoint');
        assert.ok(endpoint, 'the first event names the endpoint');
        assert.equal(sse.events[0], endpoint, 'the endpoint event comes first');
        assert.match(endpoint.data, /^\/messages\?sessionId=[^&\s]+$/);

        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.ok(tools.some((x) => x.name === 'echo'), 'echo is listed');
        const mark = transport.wire.length;
        const res = await client.callTool({ name: 'echo', arguments: { text: 'legacy ✓' } }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(res.content, [{ type: 'text', text: 'legacy ✓' }]);
        const raw = transport.wire.slice(mark).find((m) => 'result' in m);
        assert.deepEqual(raw.result, textResult('legacy ✓'));
        // Every POST went to the endpoint and got 202; the answers came on the /sse stream (so
        // the last 202 may still be on its way when the result is in).
        const posts = sseRec.exchanges.filter((e) => e.method === 'POST');
        assert.ok(posts.length >= 4, `initialize, initialized, tools/list and tools/call were POSTed (${posts.length})`);
        for (const p of posts) {
            await sseRec.waitResponse((e) => e === p, 5000, `the response to POST ${p.body?.method}`);
            assert.equal(new URL(p.url).pathname + new URL(p.url).search, endpoint.data);
            assert.equal(p.status, 202, `POST ${p.body?.method ?? 'response'} got 202`);
        }
        assert.ok(sse.messages.some(isResponseTo(raw.id)), 'the result came on the /sse stream');

        await client.close();
        // Closing drops the /sse connection; the server then removes the session at once, so a
        // POST to its endpoint soon gets 404. The disconnect reaches the server asynchronously,
        // with no event the client can await: poll, with a deadline.
        const endpointUrl = new URL(endpoint.data, server.base);
        let status;
        for (const t0 = Date.now(); Date.now() - t0 < 3000; ) {
            const r = await fetch(endpointUrl, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
            });
            await r.arrayBuffer();
            status = r.status;
            if (status === 404) break;
            await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal(status, 404, 'a POST for the closed /sse session gets 404');
        assert.deepEqual(st.clientErrors.filter((e) => !/abort/i.test(e)), []);
    } finally {
        await client.close().catch(() => {});
    }
});

test('terminateSession() deletes the session: its GET stream ends and the id then gets 404', async () => {
    const get = rec.exchanges.find(isStandaloneGet);
    assert.ok(get, 'the standalone GET stream is open');
    const errorsBefore = env.clientErrors.length;
    await env.transport.terminateSession();
    const del = rec.exchanges.find((e) => e.method === 'DELETE');
    assert.ok(del, 'DELETE was sent');
    assert.equal(del.status, 200);
    assert.equal(del.requestHeaders.get('mcp-session-id'), sessionId);
    assert.equal(env.transport.sessionId, undefined, 'the SDK dropped the session id');
    await rec.waitEnd(get, 5000, 'the standalone GET stream to end after DELETE');

    // The same client now sends no session id at all: 400.
    await assert.rejects(env.client.ping({ timeout: REQUEST_TIMEOUT_MS }), (err) => {
        assert.ok(err instanceof StreamableHTTPError, `expected StreamableHTTPError, got ${err}`);
        assert.equal(err.code, 400);
        return true;
    });

    // A client that still has the old id (the SDK skips initialize when given one): 404 with
    // Invalid Request (-32600) in a JSON body.
    const rec2 = new HttpRecorder();
    const t2 = new HttpTap(new URL(server.url), { fetch: rec2.fetch, sessionId });
    const st2 = newState();
    const c2 = makeClient(st2);
    try {
        await c2.connect(t2, { timeout: REQUEST_TIMEOUT_MS });
        await assert.rejects(c2.ping({ timeout: REQUEST_TIMEOUT_MS }), (err) => {
            assert.ok(err instanceof StreamableHTTPError, `expected StreamableHTTPError, got ${err}`);
            assert.equal(err.code, 404);
            return true;
        });
        const post = rec2.exchanges.find((e) => e.method === 'POST' && e.body?.method === 'ping');
        assert.equal(post.status, 404);
        assert.equal(post.requestHeaders.get('mcp-session-id'), sessionId);
        assert.equal(post.contentType, 'application/json');
        assert.equal(post.messages[0]?.error?.code, -32600, `404 body: ${post.text}`);
    } finally {
        await c2.close();
    }
    // A GET and a DELETE with the old id: 404 as well.
    for (const method of ['GET', 'DELETE']) {
        const r = await fetch(server.url, {
            method,
            headers: { 'mcp-session-id': sessionId, accept: 'text/event-stream' },
        });
        await r.arrayBuffer();
        assert.equal(r.status, 404, `${method} with the deleted session id`);
    }
    // What the SDK reported meanwhile: only its failed attempts to reopen the GET stream (the
    // server ended it) and the rejected ping, never a parse error.
    const expected = /Mcp-Session-Id header is required|Session not found|Failed to open SSE stream|reconnect/i;
    const later = env.clientErrors.slice(errorsBefore).filter((e) => !expected.test(e));
    assert.deepEqual(later, []);
    await env.client.close();
});

test('SIGTERM stops the server with exit status 0', async () => {
    const { code, signal } = await server.stop(5000);
    assert.equal(signal, null, `killed by ${signal}`);
    assert.equal(code, 0);
});

// ---- Streamable HTTP with --json-response -----------------------------------------------------

test('--json-response: plain calls get application/json answers; a call that notifies gets SSE, notifications first', async () => {
    const jserver = await startEverything(binDir, ['--json-response']);
    const jrec = new HttpRecorder();
    const st = newState();
    const transport = new HttpTap(new URL(jserver.url), { fetch: jrec.fetch });
    const client = makeClient(st);
    try {
        await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
        assert.match(transport.sessionId ?? '', /^[0-9a-f]{32}$/);
        assert.deepEqual(await client.ping({ timeout: REQUEST_TIMEOUT_MS }), {});
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.ok(tools.length > 10, 'tools listed');
        assert.deepEqual(
            (await client.callTool({ name: 'echo', arguments: { text: 'json ✓' } }, undefined, { timeout: REQUEST_TIMEOUT_MS })).content,
            [{ type: 'text', text: 'json ✓' }],
        );
        const add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(add.structuredContent, { sum: 3 });
        const rr = await client.readResource({ uri: 'test://static-text' }, { timeout: REQUEST_TIMEOUT_MS });
        assert.equal(rr.contents[0].text, 'This is the content of the static text resource.');
        const pr = await client.getPrompt({ name: 'test_simple_prompt' }, { timeout: REQUEST_TIMEOUT_MS });
        assert.equal(pr.messages.length, 1);

        // Every POST with a request got 200 application/json holding exactly its response.
        for (const ex of jrec.exchanges.filter((e) => e.method === 'POST')) {
            if (ex.body && typeof ex.body.method === 'string' && 'id' in ex.body) {
                assert.equal(ex.status, 200, `${ex.body.method} status`);
                assert.equal(ex.contentType, 'application/json', `${ex.body.method} content type`);
                assert.equal(ex.messages.length, 1, `${ex.body.method}: one message`);
                assert.ok(isResponseTo(ex.body.id)(ex.messages[0]), `${ex.body.method}: the body is its response`);
            } else {
                assert.equal(ex.status, 202, 'notifications and responses get 202');
            }
        }

        // A call that sends notifications of its own is answered as an SSE stream, on its own
        // POST, notifications first: on the standalone GET stream they raced the JSON answer
        // (the last progress notification reached clients after the result).
        const get = await jrec.waitResponse((e) => e.method === 'GET', 5000, 'the standalone GET');
        assert.equal(get.status, 200);
        const postOf = (name) => jrec.exchanges.filter((e) => e.method === 'POST' && e.body?.params?.name === name).at(-1);
        const n = await client.callTool({ name: 'notify', arguments: { count: 2, delay_ms: 0 } }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(n.content, [{ type: 'text', text: 'sent 2' }]);
        const notifyPost = postOf('notify');
        await jrec.waitEnd(notifyPost, 5000, 'the notify POST stream end');
        assert.equal(notifyPost.contentType, 'text/event-stream', 'a call that notifies is answered as SSE');
        assert.deepEqual(
            notifyPost.messages.map((m) => m.method ?? `response ${m.id}`),
            ['notifications/message', 'notifications/message', `response ${notifyPost.body.id}`],
            'its notifications, then its response, on its own stream',
        );
        assert.ok(!get.messages.some((m) => m.method === 'notifications/message'), 'nothing of it on the GET stream');
        // The symptom real clients saw: every progress notification arrives before the result.
        for (let i = 0; i < 5; i++) {
            const progress = [];
            await client.callTool({ name: 'long_running', arguments: { steps: 3, delay_ms: 5 } }, undefined, {
                timeout: REQUEST_TIMEOUT_MS,
                onprogress: (p) => progress.push(p.progress),
            });
            assert.deepEqual(progress, [1, 2, 3], `call ${i + 1}: all progress before the result`);
        }
        // Server-to-client requests travel the same way: sampling comes on the call's stream.
        const s = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'json mode' } }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(s.content, [{ type: 'text', text: `LLM response: ${SAMPLING_TEXT}` }]);
        assert.equal(jrec.carrierOf((m) => m.method === 'sampling/createMessage'), postOf('test_sampling'), 'sampling/createMessage on the call\'s own stream');

        const real = st.clientErrors.filter((e) => !e.includes('progress notification for an unknown token'));
        assert.deepEqual(real, []);
    } finally {
        await client.close().catch(() => {});
        const { code, signal } = await jserver.stop(5000);
        assert.equal(signal, null, `--json-response server killed by ${signal}`);
        assert.equal(code, 0, '--json-response server exit status');
    }
});
