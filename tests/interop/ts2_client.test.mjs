// Interop: the TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0, which speaks revision
// 2026-07-28) drives our mcp-everything in the modern era, over Streamable HTTP and over stdio,
// each pinned to 2026-07-28 and in the client's 'auto' negotiation mode; then, against the same
// HTTP server process, the v1 client (@modelcontextprotocol/sdk 1.32.2) and the v2 client's
// default mode still get the legacy era, at the same time as a modern client.
//
// Run by CTest as `node ts2_client.test.mjs` in tests/interop with MCP_BIN_DIR set to the build's
// bin directory. Exit code 0 means every check passed.
//
// What the v2 client does (2.4.0; see its versionNegotiation.ts and probeClassifier.ts):
//   - Its default mode is 'legacy': initialize, exactly like a 2025 client. 'auto' and
//     { pin: '2026-07-28' } first send server/discover (string id "server-discover-probe-1",
//     the 2026 _meta envelope) and take the modern era when the result is a valid
//     DiscoverResult listing a version it speaks; in 'auto' anything else falls back to
//     initialize, so the era the client ends in is checked, not assumed.
//   - Over HTTP it probes on the connection itself. Over stdio it probes on a short-lived
//     sibling process spawned from the same parameters, then starts the session's own child,
//     whose first message is already an ordinary request. The test sees the sibling by giving
//     the session transport an own `constructor` (the SDK builds the sibling with
//     `new transport.constructor(params)`), which keeps the base prototype that the SDK requires
//     for the sibling path (a subclass would probe in place).
//   - Multi Round-Trip Requests: an InputRequiredResult is answered through the handlers set
//     with setRequestHandler (elicitation/create, sampling/createMessage, roots/list), and the
//     request retried with inputResponses and the requestState echoed, on a new id.
//
// The messages are recorded on the transport instance (not a subclass, see above): every
// incoming message before the SDK sees it, every outgoing one as sent, and which read delivered
// it (the SDK's progress race, see progressVisibleToSdk in lib/everything.mjs, is still in v2).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import path from 'node:path';

import {
    Client,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ProtocolError,
    SERVER_INFO_META_KEY,
    StreamableHTTPClientTransport,
    SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
    PNG,
    REQUEST_TIMEOUT_MS,
    ROOTS,
    SAMPLING_TEXT,
    WAV,
    fillFromSchema,
    isResponseTo,
    jsonAfter,
    progressVisibleToSdk,
    textResult,
} from './lib/everything.mjs';
import { HttpRecorder, deadline, overallDeadline, startEverything } from './lib/http.mjs';

overallDeadline(60_000);

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const binDir = process.env.MCP_BIN_DIR;
const WAIT_MS = 5000; // for a notification or a stream end that should come at once

// Every child process this file starts, killed when it exits on any path (a failed assertion,
// the overall deadline): the HTTP server is never orphaned, and a stdio child whose transport
// was not closed does not outlive us.
const children = new Set(); // {kill()} of the HTTP server; stdio transports (their _process)
process.on('exit', () => {
    for (const c of children) {
        try {
            (c._process ?? c).kill?.('SIGKILL');
        } catch {
            // gone already
        }
    }
});

// ---- Recording -------------------------------------------------------------------------------

// Records, on the transport instance itself, every message in both directions. Adds
// transport.tap = {wire, sent, batches, waitFor(pred, from, ms, what)}.
function tap(transport) {
    const rec = { wire: [], sent: [], batches: [], events: new EventEmitter() };
    let inner;
    let batch = 0;
    let batchOpen = false;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        enumerable: true,
        get: () => inner,
        set: (fn) => {
            inner = fn
                ? (msg, extra) => {
                      // A transport hands over the messages of one read synchronously; a
                      // microtask runs only after the last of them, which closes the batch.
                      if (!batchOpen) {
                          batch++;
                          batchOpen = true;
                          queueMicrotask(() => {
                              batchOpen = false;
                          });
                      }
                      rec.wire.push(msg);
                      rec.batches.push(batch);
                      rec.events.emit('message', msg);
                      fn(msg, extra);
                  }
                : undefined;
        },
    });
    const send = transport.send;
    transport.send = function (msg, options) {
        rec.sent.push(msg);
        return send.call(this, msg, options);
    };
    rec.waitFor = (pred, from, ms, what) => {
        const found = rec.wire.slice(from).find(pred);
        if (found) return Promise.resolve(found);
        let on;
        return deadline(
            new Promise((resolve) => {
                on = (m) => {
                    if (pred(m)) resolve(m);
                };
                rec.events.on('message', on);
            }),
            ms,
            what,
        ).finally(() => rec.events.off('message', on));
    };
    transport.tap = rec;
    return transport;
}

const isRequest = (m) => typeof m.method === 'string' && 'id' in m;
const responseTo = (rec, req) => rec.wire.find(isResponseTo(req.id));

// ---- The v2 client ---------------------------------------------------------------------------

// A v2 client whose handlers record what they were asked into state.handled.
function makeV2Client(state, versionNegotiation) {
    const client = new Client(
        { name: 'libmcp-interop-ts2-client', version: '2.4.0-test' },
        {
            capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
            ...(versionNegotiation && { versionNegotiation }),
        },
    );
    client.setRequestHandler('elicitation/create', async (req) => {
        const content = fillFromSchema(req.params.requestedSchema);
        state.handled.push({ method: req.method, params: req.params, answer: content });
        return { action: 'accept', content };
    });
    client.setRequestHandler('sampling/createMessage', async (req) => {
        state.handled.push({ method: req.method, params: req.params });
        return { role: 'assistant', content: { type: 'text', text: SAMPLING_TEXT }, model: 'test-model', stopReason: 'endTurn' };
    });
    client.setRequestHandler('roots/list', async (req) => {
        state.handled.push({ method: req.method, params: req.params });
        return { roots: ROOTS };
    });
    for (const method of ['notifications/tools/list_changed', 'notifications/resources/updated', 'notifications/message']) {
        client.setNotificationHandler(method, (n) => {
            state.notified.push(n);
            state.events.emit('notified', n);
        });
    }
    client.onerror = (err) => state.errors.push(String(err?.message ?? err));
    return client;
}

const newState = () => ({ handled: [], notified: [], errors: [], events: new EventEmitter() });

// Resolves with the first notification a handler got (at index >= from) that satisfies pred.
function waitNotified(state, pred, from, what) {
    const found = state.notified.slice(from).find(pred);
    if (found) return Promise.resolve(found);
    let on;
    return deadline(
        new Promise((resolve) => {
            on = (n) => {
                if (pred(n)) resolve(n);
            };
            state.events.on('notified', on);
        }),
        WAIT_MS,
        what,
    ).finally(() => state.events.off('notified', on));
}

// Sends a request through fn (a client call) and returns the SDK's result with every request
// of `method` it sent meanwhile (MRTR retries included), their raw responses, and what came in
// between the first request and the last response.
async function roundTrip(env, method, fn) {
    const sentMark = env.rec.sent.length;
    const wireMark = env.rec.wire.length;
    const res = await fn();
    const reqs = env.rec.sent.slice(sentMark).filter((m) => m.method === method && 'id' in m);
    assert.ok(reqs.length >= 1, `no ${method} was sent`);
    const responses = reqs.map((r) => responseTo(env.rec, r));
    responses.forEach((r, i) => assert.ok(r && 'result' in r, `${method} round ${i + 1}: no result: ${JSON.stringify(r)}`));
    const last = reqs.at(-1);
    const idx = env.rec.wire.findIndex((m, i) => i >= wireMark && isResponseTo(last.id)(m));
    return {
        res,
        reqs,
        req: last,
        raws: responses.map((r) => r.result),
        raw: responses.at(-1).result,
        during: env.rec.wire.slice(wireMark, idx),
        duringBatches: env.rec.batches.slice(wireMark, idx),
        responseBatch: env.rec.batches[idx],
    };
}

const call = (env, name, args, options = {}, extra = {}) =>
    roundTrip(env, 'tools/call', () =>
        env.client.callTool({ name, arguments: args, ...extra }, { timeout: REQUEST_TIMEOUT_MS, ...options }),
    );

// A modern result on the wire: resultType complete and the server named in _meta; returns it
// without those two, for comparing with what the tool returns.
function modernResult(raw) {
    assert.equal(raw.resultType, 'complete', `resultType: ${JSON.stringify(raw)}`);
    assert.equal(raw._meta?.[SERVER_INFO_META_KEY]?.name, 'mcp-everything', 'serverInfo in the result _meta');
    const { resultType, _meta, ...rest } = raw;
    const { [SERVER_INFO_META_KEY]: _info, ...otherMeta } = _meta;
    return Object.keys(otherMeta).length ? { ...rest, _meta: otherMeta } : rest;
}

// Checks a multi round-trip exchange: rounds[i] maps each key the server asked for in round i+1
// to its method. Every round but the last is an InputRequiredResult whose inputRequests ask
// exactly those, each retry carries the answers under the same keys, the requestState echoed
// byte for byte, the same arguments and a new id; the handlers answered in that order; the
// server never sent a request of its own.
function checkRounds(env, c, rounds, handledBefore) {
    assert.equal(c.reqs.length, rounds.length + 1, `${rounds.length + 1} requests (one per round)`);
    assert.equal(c.reqs[0].params.inputResponses, undefined, 'the first request carries no inputResponses');
    assert.equal(c.reqs[0].params.requestState, undefined, 'the first request carries no requestState');
    const handled = env.state.handled.slice(handledBefore);
    let h = 0;
    rounds.forEach((asked, i) => {
        const ir = c.raws[i];
        assert.equal(ir.resultType, 'input_required', `round ${i + 1}: an InputRequiredResult`);
        assert.deepEqual(
            Object.fromEntries(Object.entries(ir.inputRequests).map(([k, v]) => [k, v.method])),
            asked,
            `round ${i + 1}: what the server asked`,
        );
        assert.equal(typeof ir.requestState, 'string', `round ${i + 1}: a requestState`);
        const retry = c.reqs[i + 1];
        assert.notEqual(retry.id, c.reqs[i].id, `round ${i + 2} has a new id`);
        assert.deepEqual(retry.params.arguments, c.reqs[0].params.arguments, `round ${i + 2}: the same arguments`);
        assert.strictEqual(retry.params.requestState, ir.requestState, `round ${i + 2} echoes the requestState`);
        assert.deepEqual(Object.keys(retry.params.inputResponses).sort(), Object.keys(asked).sort(), `round ${i + 2}: an answer per key`);
        for (const [key, method] of Object.entries(asked)) {
            const done = handled[h++];
            assert.equal(done?.method, method, `the client's ${method} handler answered ${key}`);
            assert.deepEqual(done.params, ir.inputRequests[key].params, `the handler got the params of ${key}`);
            if (method === 'elicitation/create') {
                assert.deepEqual(retry.params.inputResponses[key], { action: 'accept', content: done.answer }, `the answer to ${key}`);
            }
        }
    });
    assert.equal(handled.length, h, 'no other handler ran');
    assert.equal(c.raw.resultType, 'complete', 'the last round completes');
    assert.deepEqual(c.during.filter(isRequest), [], 'the server sent no request of its own');
}

// Everything one v2 connection in the modern era is checked for, whatever its transport.
// env: {client, transport, rec (transport.tap), state, exchanges() (HTTP only)}.
function modernSuite(env, { http }) {
    test('the client ended in the modern era at 2026-07-28, without initialize', () => {
        assert.equal(env.client.getProtocolEra(), 'modern');
        assert.equal(env.client.getNegotiatedProtocolVersion(), MODERN);
        assert.equal(env.client.getServerVersion()?.name, 'mcp-everything', 'serverInfo from the DiscoverResult');
        const discover = env.client.getDiscoverResult();
        assert.ok(discover.supportedVersions.includes(MODERN), `supportedVersions: ${discover.supportedVersions}`);
        assert.ok(discover.supportedVersions.includes(LEGACY), 'the legacy revisions too: one server for both eras');
        assert.ok(discover.capabilities.tools && discover.capabilities.prompts && discover.capabilities.completions);
        assert.equal(env.transport.sessionId, undefined, 'no session');
        assert.ok(!env.rec.sent.some((m) => m.method === 'initialize' || m.method === 'notifications/initialized'));
    });

    test('content tools, echo, add with structured content, an error result', async () => {
        const expected = {
            test_simple_text: textResult('This is a simple text response for testing.'),
            test_image_content: { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
            test_audio_content: { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] },
            test_embedded_resource: {
                content: [
                    {
                        type: 'resource',
                        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
                    },
                ],
            },
            test_multiple_content_types: {
                content: [
                    { type: 'text', text: 'Multiple content types test:' },
                    { type: 'image', data: PNG, mimeType: 'image/png' },
                    {
                        type: 'resource',
                        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
                    },
                ],
            },
            test_error_handling: {
                isError: true,
                content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
            },
        };
        for (const [name, want] of Object.entries(expected)) {
            const c = await call(env, name, {});
            assert.deepEqual(modernResult(c.raw), want, name);
            assert.deepEqual(c.res.content, want.content, `${name}: what the SDK returns`);
        }
        const e = await call(env, 'echo', { text: 'hello modern ✓' });
        assert.deepEqual(modernResult(e.raw), textResult('hello modern ✓'));

        const { tools } = await env.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        const add = tools.find((t) => t.name === 'add');
        assert.deepEqual(add.outputSchema, { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] });
        const a = await call(env, 'add', { a: 2, b: 3.5 });
        assert.deepEqual(modernResult(a.raw), { content: [{ type: 'text', text: '{"sum":5.5}' }], structuredContent: { sum: 5.5 } });
        assert.deepEqual(a.res.structuredContent, { sum: 5.5 }, 'the SDK validated it against the outputSchema');
    });

    test('tools/list lists every tool, and an unknown tool is -32602', async () => {
        const { tools } = await env.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS, cacheMode: 'bypass' });
        const names = tools.map((t) => t.name);
        for (const n of ['test_simple_text', 'echo', 'add', 'test_tool_with_progress', 'test_input_required_result_elicitation', 'test_trigger_tool_change'])
            assert.ok(names.includes(n), `${n} listed`);
        const list = env.rec.sent.filter((m) => m.method === 'tools/list').at(-1);
        const raw = responseTo(env.rec, list).result;
        assert.equal(typeof raw.ttlMs, 'number', 'tools/list is a CacheableResult: ttlMs');
        assert.ok(['public', 'private'].includes(raw.cacheScope), 'and cacheScope');
        await assert.rejects(
            env.client.callTool({ name: 'no_such_tool_xyz', arguments: {} }, { timeout: REQUEST_TIMEOUT_MS }),
            (err) => {
                assert.ok(err instanceof ProtocolError, `expected ProtocolError, got ${err}`);
                assert.equal(err.code, -32602);
                return true;
            },
        );
    });

    test('test_tool_with_progress: progress on the request\'s own stream, to the onprogress callback', async () => {
        const progress = [];
        const c = await call(env, 'test_tool_with_progress', {}, { onprogress: (p) => progress.push(p) });
        const token = c.req.params._meta?.progressToken;
        assert.notEqual(token, undefined, 'the SDK sends a progressToken when onprogress is given');
        const onWire = c.during.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
        assert.deepEqual(onWire.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], 'three progress notifications before the result');
        for (const p of onWire) assert.strictEqual(p.progressToken, token, 'the request\'s token, with its type');
        assert.deepEqual(
            progress.map((p) => [p.progress, p.total]),
            progressVisibleToSdk(c).map((p) => [p.progress, p.total]),
            'onprogress saw every progress the SDK could deliver, in order',
        );
        assert.ok(progress.length >= 2, `onprogress called ${progress.length} times`);
        assert.equal(modernResult(c.raw).content[0].type, 'text');
    });

    test('logs only for a request that asks for them (_meta logLevel)', async () => {
        const quiet = await call(env, 'test_logging_tool', {});
        assert.deepEqual(modernResult(quiet.raw), textResult('logged'));
        assert.deepEqual(quiet.during.filter((m) => m.method === 'notifications/message'), [], 'no logLevel, no logs');
        const before = env.state.notified.length;
        const loud = await call(env, 'test_logging_tool', {}, {}, { _meta: { [LOG_LEVEL_META_KEY]: 'info' } });
        assert.equal(loud.req.params._meta[LOG_LEVEL_META_KEY], 'info', 'the SDK sent our logLevel beside its envelope');
        assert.equal(loud.req.params._meta[PROTOCOL_VERSION_META_KEY], MODERN);
        assert.deepEqual(
            loud.during.filter((m) => m.method === 'notifications/message').map((m) => [m.params.level, m.params.data]),
            [['info', 'the logging tool runs']],
            'info and above, before the result; the debug message is filtered out',
        );
        await waitNotified(env.state, (n) => n.method === 'notifications/message', before, 'the notifications/message handler');
    });

    test('MRTR: an elicitation answered by the client\'s handler (test_input_required_result_elicitation)', async () => {
        const mark = env.state.handled.length;
        const c = await call(env, 'test_input_required_result_elicitation', {});
        checkRounds(env, c, [{ user_name: 'elicitation/create' }], mark);
        assert.deepEqual(env.state.handled[mark].params, {
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        });
        assert.deepEqual(modernResult(c.raw), textResult(`Hello, ${env.state.handled[mark].answer.name}!`), 'the answer is in the result');
        assert.deepEqual(c.res.content, [{ type: 'text', text: `Hello, ${env.state.handled[mark].answer.name}!` }]);
    });

    test('MRTR: a sampling answered by the client\'s handler (test_input_required_result_sampling)', async () => {
        const mark = env.state.handled.length;
        const c = await call(env, 'test_input_required_result_sampling', {});
        checkRounds(env, c, [{ capital_question: 'sampling/createMessage' }], mark);
        assert.deepEqual(env.state.handled[mark].params.messages, [
            { role: 'user', content: { type: 'text', text: 'What is the capital of France?' } },
        ]);
        assert.deepEqual(c.reqs[1].params.inputResponses.capital_question.content, { type: 'text', text: SAMPLING_TEXT });
        assert.deepEqual(modernResult(c.raw), textResult(`The model said: ${SAMPLING_TEXT}`));
    });

    test('MRTR: the roots from the client\'s handler (test_input_required_result_list_roots, list_roots)', async () => {
        let mark = env.state.handled.length;
        const c = await call(env, 'test_input_required_result_list_roots', {});
        checkRounds(env, c, [{ client_roots: 'roots/list' }], mark);
        assert.deepEqual(c.reqs[1].params.inputResponses.client_roots, { roots: ROOTS });
        assert.deepEqual(modernResult(c.raw), textResult(`The client has ${ROOTS.length} roots.`));
        // The legacy era's tool, through the same handler: one handler for both eras.
        mark = env.state.handled.length;
        const l = await call(env, 'list_roots', {});
        assert.equal(l.reqs.length, 2);
        assert.equal(Object.values(l.raws[0].inputRequests)[0].method, 'roots/list');
        assert.deepEqual(modernResult(l.raw).structuredContent, { roots: ROOTS });
        assert.equal(env.state.handled.length, mark + 1);
    });

    test('MRTR: legacy-era tools elicit and sample the same way (test_elicitation, test_sampling)', async () => {
        let mark = env.state.handled.length;
        const e = await call(env, 'test_elicitation', { message: 'Please provide your details' });
        assert.equal(e.reqs.length, 2);
        assert.equal(env.state.handled[mark].method, 'elicitation/create');
        assert.equal(env.state.handled[mark].params.message, 'Please provide your details');
        const text = modernResult(e.raw).content[0].text;
        assert.deepEqual(jsonAfter(text, 'User response: action=accept, content='), env.state.handled[mark].answer);
        mark = env.state.handled.length;
        const s = await call(env, 'test_sampling', { prompt: 'Say hello to the modern era' });
        assert.equal(s.reqs.length, 2);
        assert.deepEqual(env.state.handled[mark].params.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to the modern era' } }]);
        assert.deepEqual(modernResult(s.raw), textResult(`LLM response: ${SAMPLING_TEXT}`));
    });

    test('MRTR: three questions in one round, and two rounds', async () => {
        let mark = env.state.handled.length;
        const m = await call(env, 'test_input_required_result_multiple_inputs', {});
        checkRounds(env, m, [{ user_name: 'elicitation/create', greeting: 'sampling/createMessage', client_roots: 'roots/list' }], mark);
        const name = env.state.handled.slice(mark).find((x) => x.method === 'elicitation/create').answer.name;
        assert.deepEqual(modernResult(m.raw), textResult(`${name}; the model said: ${SAMPLING_TEXT}; ${ROOTS.length} roots`));
        mark = env.state.handled.length;
        const r = await call(env, 'test_input_required_result_multi_round', {});
        checkRounds(env, r, [{ step1: 'elicitation/create' }, { step2: 'elicitation/create' }], mark);
        const [a1, a2] = env.state.handled.slice(mark).map((x) => x.answer);
        assert.deepEqual(modernResult(r.raw), textResult(`${a1.name} likes ${a2.color}`));
    });

    test('ping_client fails at once: no request to the client in 2026-07-28, on any transport', async () => {
        const t0 = Date.now();
        const c = await call(env, 'ping_client', {});
        const r = modernResult(c.raw);
        assert.equal(r.isError, true, `an error result: ${JSON.stringify(r)}`);
        assert.match(r.content[0].text, /^ping failed: /);
        assert.deepEqual(c.during.filter(isRequest), [], 'no ping request came');
        assert.ok(Date.now() - t0 < 2000, 'at once, not after a timeout');
    });

    test('every other listed tool completes in the modern era', async (t) => {
        // Called in the tests above; every other tool the server lists must be here.
        const covered = [
            'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
            'test_multiple_content_types', 'test_error_handling', 'echo', 'add', 'test_tool_with_progress',
            'test_logging_tool', 'test_input_required_result_elicitation', 'test_input_required_result_sampling',
            'test_input_required_result_list_roots', 'list_roots', 'test_elicitation', 'test_sampling',
            'test_input_required_result_multiple_inputs', 'test_input_required_result_multi_round', 'ping_client',
            'test_custom_headers', 'test_trigger_tool_change', 'trigger_resource_update',
            'complete_elicitation', 'failing_job', 'protocol_error_job',
        ];
        const stateOk = 'state-ok: the state kept in round 1 came back';
        const others = {
            test_tool_with_logging: [{}, 'Tool with logging executed successfully'],
            test_reconnection: [{}, undefined],
            test_elicitation_sep1034_defaults: [{}, undefined],
            test_elicitation_sep1330_enums: [{}, undefined],
            json_schema_2020_12_tool: [{ name: 'Ada Lovelace', contactMethod: 'email', email: 'ada@example.com' }, undefined],
            long_running: [{ steps: 2, delay_ms: 5 }, 'completed 2 steps'],
            notify: [{ count: 2, delay_ms: 0 }, 'sent 2'],
            log_all_levels: [{}, 'logged'],
            poll_notify: [{ count: 2, delay_ms: 0, close_after: 0 }, 'sent 2'],
            slow_echo: [{ text: 'slowly', delay_ms: 10 }, 'slowly'],
            test_input_required_result_request_state: [{}, stateOk],
            test_input_required_result_tampered_state: [{}, stateOk],
            test_input_required_result_capabilities: [{}, '3 of the questions the client can answer were answered'],
            test_missing_capability: [{}, `The model said: ${SAMPLING_TEXT}`],
            test_streaming_elicitation: [{}, 'Hello, value-name!'],
            test_trigger_prompt_change: [{}, 'sent notifications/prompts/list_changed'],
            trace_context: [{}, 'no trace context'],
            app_sum: [{ a: 3, b: 4 }, undefined],
            url_elicitation: [{ url: 'https://example.com/finish' }, 'URL-mode elicitation cannot be asked here: the client did not declare it, or this is revision 2026-07-28'],
            // The tasks extension's tools, from a client that does not declare it: those that
            // may run as a task answer at once (asking in Multi Round-Trip rounds).
            greet: [{ name: 'modern' }, 'Hello, modern!'],
            slow_compute: [{ seconds: 0, label: 'now' }, 'Computed now in 0 s'],
            confirm_delete: [{ filename: 'f.txt' }, 'Deleted f.txt'],
            multi_input: [{}, 'Got both answers (name, confirmed)'],
            test_tool_with_task: [{}, 'Hello, value-name! (from a task)'],
        };
        const { tools } = await env.client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        const names = tools.map((x) => x.name);
        assert.deepEqual(names.filter((n) => !covered.includes(n) && !(n in others)), [], 'tools this test does not know how to call');
        assert.deepEqual([...covered, ...Object.keys(others)].filter((n) => !names.includes(n)), [], 'tools the server should list');
        for (const [name, [args, text]] of Object.entries(others)) {
            await t.test(name, async () => {
                const c = await call(env, name, args);
                const r = modernResult(c.raw);
                assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r)}`);
                if (text !== undefined) assert.deepEqual(r, textResult(text));
                else assert.equal(r.content[0].type, 'text');
                assert.deepEqual(c.during.filter(isRequest), [], 'the server sent no request of its own');
                assert.deepEqual(c.during.filter((m) => m.method === 'notifications/message'), [], 'no logs without a logLevel');
            });
        }
    });

    test('a tool that runs only as a task, from a client without the tasks extension: -32021 naming it', async () => {
        for (const name of ['failing_job', 'protocol_error_job']) {
            await assert.rejects(
                env.client.callTool({ name, arguments: {} }, { timeout: REQUEST_TIMEOUT_MS }),
                (e) => e.code === -32021 && /io\.modelcontextprotocol\/tasks/.test(e.message),
                name,
            );
        }
    });

    test('complete_elicitation: the modern era has no session to notify', async () => {
        const c = await call(env, 'complete_elicitation', { elicitationId: 'e-1' });
        const r = modernResult(c.raw);
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.match(r.content[0].text, /no session to notify/);
    });

    test('x-mcp-header: the argument travels as Mcp-Param-Region too', async () => {
        const c = await call(env, 'test_custom_headers', { region: 'eu-west-1', query: 'q' });
        assert.deepEqual(modernResult(c.raw), textResult('region: eu-west-1'));
        if (!http) return;
        const ex = env.exchanges().find((x) => x.method === 'POST' && x.body?.id === c.req.id);
        assert.equal(ex.requestHeaders.get('mcp-param-region'), 'eu-west-1');
        assert.equal(ex.requestHeaders.get('mcp-name'), 'test_custom_headers');
    });

    test('resources: static text, static binary, a template', async () => {
        const expected = {
            'test://static-text': { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
            'test://static-binary': { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG },
        };
        const { resources } = await env.client.listResources(undefined, { timeout: REQUEST_TIMEOUT_MS });
        for (const uri of Object.keys(expected)) assert.ok(resources.some((r) => r.uri === uri), `${uri} listed`);
        for (const [uri, want] of Object.entries(expected)) {
            const c = await roundTrip(env, 'resources/read', () => env.client.readResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }));
            const { ttlMs, cacheScope, ...rest } = modernResult(c.raw);
            assert.equal(typeof ttlMs, 'number', `${uri}: ttlMs`);
            assert.ok(['public', 'private'].includes(cacheScope), `${uri}: cacheScope`);
            assert.deepEqual(rest, { contents: [want] }, uri);
            assert.deepEqual(c.res.contents, [want], `${uri}: what the SDK returns`);
        }
        const { resourceTemplates } = await env.client.listResourceTemplates(undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'test://template/{id}/data'), 'the template is listed');
        const t = await env.client.readResource({ uri: 'test://template/123/data' }, { timeout: REQUEST_TIMEOUT_MS });
        assert.equal(t.contents.length, 1);
        assert.equal(t.contents[0].uri, 'test://template/123/data');
        assert.equal(t.contents[0].mimeType, 'application/json');
        assert.deepEqual(JSON.parse(t.contents[0].text), { id: '123', templateTest: true, data: 'Data for ID: 123' });
    });

    test('prompts: a simple one, one with arguments, one that elicits (MRTR)', async () => {
        const { prompts } = await env.client.listPrompts(undefined, { timeout: REQUEST_TIMEOUT_MS });
        for (const n of ['test_simple_prompt', 'test_prompt_with_arguments', 'test_input_required_result_prompt'])
            assert.ok(prompts.some((p) => p.name === n), `${n} listed`);
        const simple = await env.client.getPrompt({ name: 'test_simple_prompt' }, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(simple.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]);
        const args = await env.client.getPrompt(
            { name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha', arg2: 'beta' } },
            { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.deepEqual(args.messages, [{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='alpha', arg2='beta'" } }]);

        const mark = env.state.handled.length;
        const c = await roundTrip(env, 'prompts/get', () =>
            env.client.getPrompt({ name: 'test_input_required_result_prompt' }, { timeout: REQUEST_TIMEOUT_MS }),
        );
        checkRounds(env, c, [{ user_context: 'elicitation/create' }], mark);
        const context = env.state.handled[mark].answer.context;
        assert.deepEqual(c.res.messages, [{ role: 'user', content: { type: 'text', text: `Answer with this context: ${context}` } }]);
    });

    test('completion/complete filters by prefix', async () => {
        const r = await env.client.complete(
            { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'te' } },
            { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.deepEqual([...r.completion.values].sort(), ['test', 'tested', 'testing']);
        const t = await env.client.complete(
            { ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '1' } },
            { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.deepEqual([...t.completion.values].sort(), ['1', '123']);
    });

    test('subscriptions/listen: tools/list_changed and resources/updated arrive tagged with the listen id', async () => {
        const uri = 'test://watched-resource';
        const filter = { toolsListChanged: true, resourceSubscriptions: [uri] };
        const sentMark = env.rec.sent.length;
        const wireMark = env.rec.wire.length;
        const sub = await env.client.listen(filter, { timeout: REQUEST_TIMEOUT_MS });
        assert.deepEqual(sub.honoredFilter, filter, 'the server honours the whole filter');
        const listenReq = env.rec.sent.slice(sentMark).find((m) => m.method === 'subscriptions/listen');
        assert.deepEqual(listenReq.params.notifications, filter);
        const isOurs = (n) => n.params?._meta?.[SUBSCRIPTION_ID_META_KEY] === listenReq.id;
        const ack = env.rec.wire.slice(wireMark).find((m) => m.method === 'notifications/subscriptions/acknowledged');
        assert.ok(ack && isOurs(ack), `the acknowledgement names the listen id: ${JSON.stringify(ack)}`);

        let mark = env.state.notified.length;
        const c = await call(env, 'test_trigger_tool_change', {});
        assert.deepEqual(modernResult(c.raw), textResult('sent notifications/tools/list_changed'));
        const changed = await waitNotified(env.state, (n) => n.method === 'notifications/tools/list_changed', mark, 'tools/list_changed');
        assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION_ID_META_KEY]: listenReq.id } }, 'the SDK hands the handler the tag');

        mark = env.state.notified.length;
        await call(env, 'trigger_resource_update', { uri });
        const updated = await waitNotified(env.state, (n) => n.method === 'notifications/resources/updated', mark, 'resources/updated');
        assert.equal(updated.params.uri, uri);
        assert.equal(updated.params._meta?.[SUBSCRIPTION_ID_META_KEY], listenReq.id);
        // Change notifications come only on the listen: none rode a tool call's answer.
        for (const m of c.during) assert.ok(m.method !== 'notifications/tools/list_changed' || isOurs(m), 'untagged change notification');

        const listenEx = http && env.exchanges().find((x) => x.method === 'POST' && x.body?.id === listenReq.id);
        if (http) {
            assert.equal(listenEx.status, 200);
            assert.equal(listenEx.contentType, 'text/event-stream', 'the listen is answered with a stream');
            assert.deepEqual(
                listenEx.messages.map((m) => m.method),
                ['notifications/subscriptions/acknowledged', 'notifications/tools/list_changed', 'notifications/resources/updated'],
                'the acknowledgement first, then the changes, on the listen\'s own stream',
            );
        }
        const closeMark = env.rec.sent.length;
        await sub.close();
        assert.equal(await deadline(sub.closed, WAIT_MS, 'the subscription to close'), 'local');
        const cancel = env.rec.sent.slice(closeMark).find((m) => m.method === 'notifications/cancelled');
        assert.equal(cancel?.params?.requestId, listenReq.id, 'notifications/cancelled names the listen');
        if (http) {
            assert.ok(!env.exchanges().some((x) => x.method === 'GET'), 'no GET stream in the modern era');
            return;
        }
        // stdio: the server dropped the listen. The trigger's notification would come before
        // its result, on the one channel, so after the result none can be on its way.
        mark = env.rec.wire.length;
        await call(env, 'test_trigger_tool_change', {});
        assert.deepEqual(env.rec.wire.slice(mark).filter(isOurs), [], 'nothing for a cancelled listen');
    });

    test('every request carried the 2026-07-28 _meta envelope; every result its resultType', () => {
        for (const m of env.rec.sent) {
            if (!('method' in m)) continue;
            const meta = m.params?._meta ?? {};
            assert.equal(meta[PROTOCOL_VERSION_META_KEY], MODERN, `${m.method}: protocolVersion in _meta`);
            if ('id' in m) assert.equal(typeof meta['io.modelcontextprotocol/clientCapabilities'], 'object', `${m.method}: clientCapabilities`);
        }
        for (const m of env.rec.wire) {
            assert.ok(!isRequest(m), `the server sent a request: ${JSON.stringify(m)}`);
            if ('result' in m) assert.ok(['complete', 'input_required'].includes(m.result.resultType), `resultType of ${JSON.stringify(m).slice(0, 200)}`);
        }
        const errors = env.rec.wire.filter((m) => 'error' in m).map((m) => env.rec.sent.find((r) => r.id === m.id && 'method' in r));
        assert.deepEqual(
            errors.map((r) => [r?.method, r?.params?.name]),
            [['tools/call', 'no_such_tool_xyz'], ['tools/call', 'failing_job'], ['tools/call', 'protocol_error_job']],
            'the only errors are the unknown tool\'s and the two task-only tools\' -32021',
        );
    });

    if (http) {
        test('HTTP: no session, no GET; each POST names its method, name and version in headers', () => {
            const exchanges = env.exchanges();
            assert.equal(exchanges[0].body?.method, 'server/discover', 'the first thing sent is the probe');
            assert.equal(exchanges[0].body.id, 'server-discover-probe-1');
            assert.equal(exchanges[0].body.params._meta[PROTOCOL_VERSION_META_KEY], MODERN);
            assert.equal(exchanges[0].status, 200);
            for (const ex of exchanges) {
                assert.equal(ex.method, 'POST', `exchange ${ex.n}: only POSTs`);
                assert.equal(ex.headers.get('mcp-session-id'), null, `exchange ${ex.n}: no Mcp-Session-Id`);
                assert.equal(ex.requestHeaders.get('mcp-session-id'), null);
                assert.equal(ex.requestHeaders.get('mcp-protocol-version'), MODERN, `exchange ${ex.n}: Mcp-Protocol-Version`);
                const b = ex.body;
                if ('id' in b) assert.equal(ex.requestHeaders.get('mcp-method'), b.method, `exchange ${ex.n}: Mcp-Method`);
                const name = b.method === 'tools/call' || b.method === 'prompts/get' ? b.params.name : b.method === 'resources/read' ? b.params.uri : null;
                assert.equal(ex.requestHeaders.get('mcp-name'), name, `exchange ${ex.n} (${b.method}): Mcp-Name`);
                // MissingRequiredClientCapability carries 400 (the task-only tools, above).
                const refused = b.method === 'tools/call' && ['failing_job', 'protocol_error_job'].includes(b.params.name);
                assert.equal(ex.status, 'id' in b ? (refused ? 400 : 200) : 202, `exchange ${ex.n} (${b.method}) status`);
            }
        });
    }

    test('the SDK saw no protocol errors', () => {
        // Late progress is the SDK's own race (progressVisibleToSdk in lib/everything.mjs).
        const real = env.state.errors.filter((e) => !e.includes('progress notification for an unknown token'));
        assert.deepEqual(real, []);
    });
}

// ---- The runs --------------------------------------------------------------------------------

let server; // one mcp-everything --http for every HTTP run, both eras
before(async () => {
    assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
    server = await startEverything(binDir);
    children.add(server.child);
});
after(async () => {
    if (server?.child.exitCode === null && server.child.signalCode === null) await server.stop();
});

const NEGOTIATIONS = [
    ['pinned to 2026-07-28', { mode: { pin: MODERN } }],
    ['auto', { mode: 'auto' }],
];

for (const [label, negotiation] of NEGOTIATIONS) {
    describe(`Streamable HTTP, ${label}`, () => {
        const rec = new HttpRecorder();
        const env = { state: newState(), exchanges: () => rec.exchanges };
        before(async () => {
            env.client = makeV2Client(env.state, negotiation);
            env.transport = tap(new StreamableHTTPClientTransport(new URL(server.url), { fetch: rec.fetch }));
            env.rec = env.transport.tap;
            await env.client.connect(env.transport, { timeout: REQUEST_TIMEOUT_MS });
        });
        after(async () => {
            await env.client?.close();
        });
        modernSuite(env, { http: true });
    });

    describe(`stdio, ${label}`, () => {
        const env = { state: newState() };
        const siblings = [];
        let child;
        before(async () => {
            const exe = path.join(binDir, 'mcp-everything');
            env.client = makeV2Client(env.state, negotiation);
            env.transport = tap(new StdioClientTransport({ command: exe, args: ['--stdio'], stderr: 'inherit' }));
            env.rec = env.transport.tap;
            children.add(env.transport);
            // The SDK probes on `new transport.constructor(params)`: record that sibling too.
            Object.defineProperty(env.transport, 'constructor', {
                value: function ProbeSibling(params) {
                    const s = tap(new StdioClientTransport(params));
                    siblings.push(s);
                    children.add(s);
                    return s;
                },
            });
            await env.client.connect(env.transport, { timeout: REQUEST_TIMEOUT_MS });
            child = env.transport._process; // private, but the only way to see how the child ends
        });
        after(async () => {
            await env.client?.close();
        });

        test('the era was probed on a sibling process: server/discover there, nothing of it here', () => {
            assert.equal(siblings.length, 1, 'one sibling process probed');
            const [probe] = siblings[0].tap.sent;
            assert.deepEqual(
                siblings[0].tap.sent.map((m) => m.method),
                ['server/discover'],
                'the sibling got only the probe',
            );
            assert.equal(probe.params._meta[PROTOCOL_VERSION_META_KEY], MODERN);
            const answer = siblings[0].tap.wire.find(isResponseTo(probe.id));
            assert.ok(answer?.result?.supportedVersions?.includes(MODERN), `the probe's answer: ${JSON.stringify(answer)}`);
            assert.equal(siblings[0]._process, undefined, 'the sibling was reaped');
            assert.ok(!env.rec.sent.some((m) => m.method === 'server/discover'), 'the session child never got the probe');
        });

        modernSuite(env, { http: false });

        test('close() ends the child on stdin EOF, with status 0', async () => {
            assert.ok(child, 'child process handle');
            const exited = new Promise((resolve) => {
                if (child.exitCode !== null || child.signalCode !== null) resolve();
                else child.once('exit', resolve);
            });
            const t0 = Date.now();
            await env.client.close();
            await deadline(exited, WAIT_MS, 'the stdio child to exit');
            assert.equal(child.signalCode, null, `killed by ${child.signalCode}`);
            assert.equal(child.exitCode, 0);
            assert.ok(Date.now() - t0 < 2000, 'exited on EOF, before the SDK resorts to SIGTERM');
        });
    });
}

// ---- Both eras on one endpoint ---------------------------------------------------------------

describe('both eras at once on the same HTTP server', () => {
    const modern = { state: newState() };
    const modernRec = new HttpRecorder();
    const v1 = { handled: [], listChanged: [], errors: [] };
    const v1Rec = new HttpRecorder();
    let v1Client;
    let v1Transport;
    let sub;
    before(async () => {
        modern.client = makeV2Client(modern.state, { mode: 'auto' });
        modern.transport = tap(new StreamableHTTPClientTransport(new URL(server.url), { fetch: modernRec.fetch }));
        modern.rec = modern.transport.tap;
        await modern.client.connect(modern.transport, { timeout: REQUEST_TIMEOUT_MS });
        sub = await modern.client.listen({ toolsListChanged: true }, { timeout: REQUEST_TIMEOUT_MS });

        v1Client = new V1Client({ name: 'libmcp-interop-ts-v1-client', version: '1.32.2-test' }, { capabilities: { elicitation: { form: {} } } });
        v1Client.setRequestHandler(ElicitRequestSchema, async (req) => {
            const content = fillFromSchema(req.params.requestedSchema);
            v1.handled.push({ method: req.method, params: req.params, answer: content });
            return { action: 'accept', content };
        });
        v1Client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => v1.listChanged.push(n));
        v1Client.onerror = (err) => v1.errors.push(String(err?.message ?? err));
        v1Transport = new V1HttpTransport(new URL(server.url), { fetch: v1Rec.fetch });
        await v1Client.connect(v1Transport, { timeout: REQUEST_TIMEOUT_MS });
        // Its standalone GET stream carries the list changes below: have it open first.
        const get = await v1Rec.waitResponse((x) => x.method === 'GET', WAIT_MS, 'the v1 GET stream');
        assert.equal(get.status, 200);
    });
    after(async () => {
        await sub?.close();
        await v1Client?.close();
        await modern.client?.close();
    });

    test('the v1 client initializes in the legacy era, with a session', () => {
        assert.equal(modern.client.getProtocolEra(), 'modern', 'beside a modern client');
        const init = v1Rec.exchanges.find((x) => x.body?.method === 'initialize');
        assert.equal(init.messages[0]?.result?.protocolVersion, LEGACY);
        assert.match(v1Transport.sessionId ?? '', /^[0-9a-f]{32}$/, 'a session id');
        assert.equal(v1Client.getServerVersion()?.name, 'mcp-everything');
    });

    test('v1: tools/list, a call with progress, an elicitation the server requests', async () => {
        const { tools } = await v1Client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
        assert.ok(tools.some((t) => t.name === 'long_running') && tools.some((t) => t.name === 'test_elicitation'));
        const progress = [];
        const lr = await v1Client.callTool({ name: 'long_running', arguments: { steps: 3, delay_ms: 20 } }, undefined, {
            timeout: REQUEST_TIMEOUT_MS,
            onprogress: (p) => progress.push(p.progress),
        });
        assert.deepEqual(lr.content, [{ type: 'text', text: 'completed 3 steps' }]);
        assert.ok(progress.length >= 2 && progress.every((p, i) => p === i + 1), `progress: ${progress}`);

        // At the same moment, the modern client's MRTR elicitation: each era its own way.
        const mark = modern.state.handled.length;
        const [legacy, mrtr] = await deadline(
            Promise.all([
                v1Client.callTool({ name: 'test_elicitation', arguments: { message: 'Legacy era, who are you?' } }, undefined, {
                    timeout: REQUEST_TIMEOUT_MS,
                }),
                call(modern, 'test_input_required_result_elicitation', {}),
            ]),
            REQUEST_TIMEOUT_MS,
            'both elicitations',
        );
        assert.equal(v1.handled.length, 1, 'the v1 handler answered a server request');
        assert.equal(v1.handled[0].params.message, 'Legacy era, who are you?');
        assert.equal(legacy.content.length, 1);
        assert.deepEqual(jsonAfter(legacy.content[0].text, 'User response: action=accept, content='), v1.handled[0].answer);
        const carrier = v1Rec.carrierOf((m) => m.method === 'elicitation/create');
        assert.equal(carrier?.body?.params?.name, 'test_elicitation', 'elicitation/create came on the call\'s own POST stream');
        assert.equal(carrier.headers.get('mcp-session-id'), v1Transport.sessionId);
        checkRounds(modern, mrtr, [{ user_name: 'elicitation/create' }], mark);
        assert.deepEqual(modernResult(mrtr.raw), textResult(`Hello, ${modern.state.handled[mark].answer.name}!`));
    });

    test('a change one era triggers reaches the other: the v1 GET stream and the v2 listen', async () => {
        const mark = modern.state.notified.length;
        const v1Mark = v1.listChanged.length;
        await v1Client.callTool({ name: 'test_trigger_tool_change', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        const n = await waitNotified(modern.state, (x) => x.method === 'notifications/tools/list_changed', mark, 'the v2 listen');
        assert.equal(typeof n.params._meta[SUBSCRIPTION_ID_META_KEY], 'string', 'tagged with the listen id');
        for (let t0 = Date.now(); v1.listChanged.length === v1Mark && Date.now() - t0 < WAIT_MS; ) await new Promise((r) => setTimeout(r, 10));
        assert.equal(v1.listChanged.length, v1Mark + 1, 'the v1 session got it on its GET stream');
        assert.ok(v1Rec.carrierOf((m) => m.method === 'notifications/tools/list_changed')?.method === 'GET');

        const mark2 = modern.state.notified.length;
        await call(modern, 'test_trigger_tool_change', {});
        await waitNotified(modern.state, (x) => x.method === 'notifications/tools/list_changed', mark2, 'the v2 listen, again');
        for (let t0 = Date.now(); v1.listChanged.length === v1Mark + 1 && Date.now() - t0 < WAIT_MS; ) await new Promise((r) => setTimeout(r, 10));
        assert.equal(v1.listChanged.length, v1Mark + 2, 'the v1 session got the modern client\'s change too');
        assert.deepEqual(v1.errors, []);
        assert.deepEqual(modern.state.errors.filter((e) => !e.includes('unknown token')), []);
    });

    test('the v2 client\'s default mode is the legacy era: initialize, a session, server requests', async () => {
        const st = newState();
        const rec = new HttpRecorder();
        const client = makeV2Client(st, undefined);
        const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: rec.fetch });
        try {
            await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
            assert.equal(rec.exchanges[0].body?.method, 'initialize', 'no probe: initialize first');
            assert.equal(client.getProtocolEra(), 'legacy');
            assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
            assert.match(transport.sessionId ?? '', /^[0-9a-f]{32}$/);
            // The same tool, in the legacy era: the server sends elicitation/create and waits.
            const r = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }, { timeout: REQUEST_TIMEOUT_MS });
            assert.equal(st.handled.length, 1);
            assert.deepEqual(r.content, [{ type: 'text', text: `Hello, ${st.handled[0].answer.name}!` }]);
            assert.ok(rec.carrierOf((m) => m.method === 'elicitation/create' && 'id' in m), 'as a request of the server');
            assert.deepEqual(st.errors, []);
        } finally {
            await client.close().catch(() => {});
        }
    });
});

test('SIGTERM stops the HTTP server with status 0', async () => {
    const { code, signal } = await server.stop(WAIT_MS);
    assert.equal(signal, null, `killed by ${signal}`);
    assert.equal(code, 0);
});
