// Shared by the interop tests that drive our mcp-everything with the official TypeScript SDK
// client: what the server is expected to offer and answer, independent of the transport.
//
// Used by ts_client_stdio.test.mjs and ts_client_http.test.mjs, so that both transports are held
// to exactly the same results and a new server tool is described here only; each test adds what
// only its transport has. Results are compared on the wire: a tap on the transport records every
// message as the server sent it, because the SDK's schemas strip unknown keys and would hide
// extra or misspelt fields.

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

export const REQUEST_TIMEOUT_MS = 10_000;

export const PNG =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
export const SAMPLING_TEXT = 'This is a test response from the client';
export const ROOTS = [
    { uri: 'file:///tmp/libmcp-interop-root', name: 'interop root' },
    { uri: 'file:///tmp/libmcp-interop-other' },
];
export const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

// Returns a subclass of the transport class Base that records every message in both
// directions, in order, before the SDK sees it.
export function withTap(Base) {
    return class TapTransport extends Base {
        constructor(...args) {
            super(...args);
            this.wire = []; // incoming, in arrival order
            this.sent = []; // outgoing, in send order
            this.batches = []; // batches[i]: the read (stdout chunk, SSE event) that delivered wire[i]
            this.events = new EventEmitter();
            this._tapped = undefined;
            this._batch = 0;
            this._batchOpen = false;
        }
        get onmessage() {
            return this._tapped;
        }
        set onmessage(fn) {
            this._tapped = fn
                ? (msg, extra) => {
                      // The transport hands over all messages of one read synchronously; a
                      // microtask runs only after the last of them, which closes the batch.
                      if (!this._batchOpen) {
                          this._batch++;
                          this._batchOpen = true;
                          queueMicrotask(() => {
                              this._batchOpen = false;
                          });
                      }
                      this.wire.push(msg);
                      this.batches.push(this._batch);
                      this.events.emit('message', msg);
                      fn(msg, extra);
                  }
                : undefined;
        }
        async send(msg, options) {
            this.sent.push(msg);
            return super.send(msg, options);
        }
        // Resolves with the first incoming message at index >= from that satisfies pred.
        waitFor(pred, from, ms, what) {
            for (let i = from; i < this.wire.length; i++) if (pred(this.wire[i])) return Promise.resolve(this.wire[i]);
            return new Promise((resolve, reject) => {
                const onMsg = (m) => {
                    if (pred(m)) {
                        clearTimeout(timer);
                        this.events.off('message', onMsg);
                        resolve(m);
                    }
                };
                const timer = setTimeout(() => {
                    this.events.off('message', onMsg);
                    reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
                }, ms);
                this.events.on('message', onMsg);
            });
        }
    };
}

export const isResponseTo = (id) => (m) => m.id === id && ('result' in m || 'error' in m) && !('method' in m);

export function textResult(text) {
    return { content: [{ type: 'text', text }] };
}

// Builds content that satisfies an elicitation requestedSchema: every property gets a value of
// its declared type, taken from its default or first allowed choice where there is one.
export function fillFromSchema(schema) {
    const out = {};
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
        switch (prop.type) {
            case 'string':
                if (Array.isArray(prop.enum)) out[key] = prop.default ?? prop.enum[0];
                else if (Array.isArray(prop.oneOf)) out[key] = prop.oneOf[0].const;
                else if (prop.format === 'email' || /email/i.test(key)) out[key] = 'test@example.com';
                else out[key] = prop.default ?? `value-${key}`;
                break;
            case 'integer':
                out[key] = prop.default ?? prop.minimum ?? 30;
                break;
            case 'number':
                out[key] = prop.default ?? prop.minimum ?? 95.5;
                break;
            case 'boolean':
                out[key] = prop.default ?? true;
                break;
            case 'array': {
                const items = prop.items ?? {};
                if (Array.isArray(items.enum)) out[key] = [items.enum[0]];
                else if (Array.isArray(items.anyOf)) out[key] = [items.anyOf[0].const];
                else out[key] = ['x'];
                break;
            }
            default:
                throw new Error(`elicitation schema property ${key} has unsupported type ${JSON.stringify(prop.type)}`);
        }
    }
    return out;
}

// Minimal check that the arguments we are about to send fit the tool's advertised inputSchema,
// so that the test notices when the server changes a schema under us.
export function assertArgsFitSchema(tool, args) {
    const schema = tool.inputSchema;
    for (const req of schema.required ?? []) {
        assert.ok(args && req in args, `${tool.name}: required argument ${req} not supplied by the test`);
    }
    const typeOf = (v) =>
        Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;
    for (const [k, v] of Object.entries(args ?? {})) {
        const prop = schema.properties?.[k];
        if (!prop) {
            assert.notEqual(schema.additionalProperties, false, `${tool.name}: argument ${k} not in inputSchema`);
            continue;
        }
        if (prop.type) {
            const t = typeOf(v);
            const ok = prop.type === t || (prop.type === 'number' && t === 'integer');
            assert.ok(ok, `${tool.name}: argument ${k}=${JSON.stringify(v)} does not fit type ${prop.type}`);
        }
    }
}


// The progress an SDK onprogress callback can see. SDK 1.32.2 runs notification handlers in a
// microtask but handles a response synchronously and drops the request's progress handler
// then, so a progress notification read in the same chunk as the response never reaches
// onprogress (typescript-sdk issue #2580). That is a client defect no server can avoid; the wire
// itself is checked separately and strictly.
export function progressVisibleToSdk(c) {
    return c.during
        .map((m, i) => [m, c.duringBatches[i]])
        .filter(([m, b]) => m.method === 'notifications/progress' && b !== c.responseBatch)
        .map(([m]) => m.params);
}

export const logsIn = (during) => during.filter((m) => m.method === 'notifications/message').map((m) => m.params);
export const progressIn = (during) => during.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
export const requestsIn = (during, method) => during.filter((m) => m.method === method && 'id' in m);

// Parses "<prefix><json>" and returns the JSON value.
export function jsonAfter(text, prefix) {
    assert.ok(text.startsWith(prefix), `expected text to start with ${JSON.stringify(prefix)}, got ${JSON.stringify(text)}`);
    return JSON.parse(text.slice(prefix.length));
}

// The checks, bound to env: {client, transport (a withTap transport), serverRequests,
// loggingSeen, updatesSeen, initResult}. The fields may be filled in after this is called but
// before any check runs; the arrays are the ones the client's handlers push to.
export function everythingChecks(env) {
    // Calls a tool and returns the SDK's result together with the raw response and every message
    // that arrived between the request and its response.
    async function call(name, args, options = {}) {
        const sentMark = env.transport.sent.length;
        const wireMark = env.transport.wire.length;
        const params = args === undefined ? { name } : { name, arguments: args };
        const res = await env.client.callTool(params, undefined, { timeout: REQUEST_TIMEOUT_MS, ...options });
        const req = env.transport.sent.slice(sentMark).find((m) => m.method === 'tools/call' && m.params?.name === name);
        assert.ok(req, `tools/call ${name} was not seen going out`);
        const idx = env.transport.wire.findIndex((m, i) => i >= wireMark && isResponseTo(req.id)(m));
        assert.ok(idx >= 0, `raw response to tools/call ${name} not recorded`);
        return {
            res,
            req,
            raw: env.transport.wire[idx].result,
            during: env.transport.wire.slice(wireMark, idx),
            duringBatches: env.transport.batches.slice(wireMark, idx),
            responseBatch: env.transport.batches[idx],
        };
    }

    async function elicitationCall(name, args, checkSchema, resultPrefix) {
        const { raw, during } = await call(name, args);
        const reqs = requestsIn(during, 'elicitation/create');
        assert.equal(reqs.length, 1, `${name}: expected exactly one elicitation/create before the result`);
        const p = reqs[0].params;
        assert.equal(p.requestedSchema?.type, 'object', `${name}: requestedSchema.type`);
        checkSchema(p);
        const sent = fillFromSchema(p.requestedSchema);
        assert.equal(raw.isError, undefined, `${name}: unexpected isError`);
        assert.equal(raw.content.length, 1, `${name}: one content block`);
        assert.equal(raw.content[0].type, 'text');
        assert.deepEqual(Object.keys(raw), ['content'], `${name}: result keys`);
        const content = jsonAfter(raw.content[0].text, resultPrefix);
        assert.deepEqual(content, sent, `${name}: the server must report the content the client accepted`);
    }

    // What this test knows about every tool the server may list: how to call it and what to expect.
    // A tool that is listed but missing here fails the test.
    const TOOLS = {
        async test_simple_text() {
            const { raw } = await call('test_simple_text');
            assert.deepEqual(raw, textResult('This is a simple text response for testing.'));
        },
        async test_image_content() {
            const { raw } = await call('test_image_content', {});
            assert.deepEqual(raw, { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] });
        },
        async test_audio_content() {
            const { raw } = await call('test_audio_content', {});
            assert.deepEqual(raw, { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] });
        },
        async test_embedded_resource() {
            const { raw } = await call('test_embedded_resource', {});
            assert.deepEqual(raw, {
                content: [
                    {
                        type: 'resource',
                        resource: {
                            uri: 'test://embedded-resource',
                            mimeType: 'text/plain',
                            text: 'This is an embedded resource content.',
                        },
                    },
                ],
            });
        },
        async test_multiple_content_types() {
            const { raw } = await call('test_multiple_content_types', {});
            assert.deepEqual(raw, {
                content: [
                    { type: 'text', text: 'Multiple content types test:' },
                    { type: 'image', data: PNG, mimeType: 'image/png' },
                    {
                        type: 'resource',
                        resource: {
                            uri: 'test://mixed-content-resource',
                            mimeType: 'application/json',
                            text: '{"test":"data","value":123}',
                        },
                    },
                ],
            });
        },
        async test_tool_with_logging() {
            const seen = [];
            const { raw, during } = await call('test_tool_with_logging', {});
            seen.push(...logsIn(during));
            assert.deepEqual(raw, textResult('Tool with logging executed successfully'));
            // All three must be on the wire before the response; `during` ends at the response.
            assert.deepEqual(
                seen.map((p) => [p.level, p.data]),
                [
                    ['info', 'Tool execution started'],
                    ['info', 'Tool processing data'],
                    ['info', 'Tool execution completed'],
                ],
            );
            // The SDK's LoggingMessageNotification handler saw them too, in the same order.
            const handled = env.loggingSeen.slice(-3).map((p) => p.data);
            assert.deepEqual(handled, ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
        },
        async test_tool_with_progress() {
            const progress = [];
            const c = await call('test_tool_with_progress', {}, { onprogress: (p) => progress.push(p) });
            const { req, raw, during } = c;
            const token = req.params._meta?.progressToken;
            assert.notEqual(token, undefined, 'the SDK sends a progressToken when onprogress is given');
            const onWire = progressIn(during);
            assert.deepEqual(
                onWire.map((p) => [p.progress, p.total]),
                [
                    [0, 100],
                    [50, 100],
                    [100, 100],
                ],
                'three notifications/progress on the wire, in order, before the result',
            );
            for (const p of onWire) assert.strictEqual(p.progressToken, token, 'progressToken echoed with the same type');
            assert.deepEqual(
                progress.map((p) => [p.progress, p.total]),
                progressVisibleToSdk(c).map((p) => [p.progress, p.total]),
                'onprogress saw every progress the SDK could deliver, in order',
            );
            assert.ok(progress.length >= 2, `onprogress called ${progress.length} times`);
            assert.equal(raw.isError, undefined);
            assert.equal(raw.content.length, 1);
            assert.equal(raw.content[0].type, 'text');
            assert.ok(raw.content[0].text.length > 0, 'non-empty text');
        },
        async test_error_handling() {
            const { raw } = await call('test_error_handling', {});
            assert.deepEqual(raw, {
                isError: true,
                content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
            });
        },
        async test_sampling(tool) {
            const args = { prompt: 'Say hello to the interop test' };
            assertArgsFitSchema(tool, args);
            const before = env.serverRequests.length;
            const { raw, during } = await call('test_sampling', args);
            const reqs = requestsIn(during, 'sampling/createMessage');
            assert.equal(reqs.length, 1, 'exactly one sampling/createMessage before the result');
            assert.deepEqual(reqs[0].params.messages, [{ role: 'user', content: { type: 'text', text: args.prompt } }]);
            assert.equal(reqs[0].params.maxTokens, 100);
            assert.equal(env.serverRequests.length, before + 1, 'the TS sampling handler answered it');
            assert.deepEqual(raw, textResult(`LLM response: ${SAMPLING_TEXT}`));
        },
        async test_elicitation(tool) {
            const args = { message: 'Please provide your details' };
            assertArgsFitSchema(tool, args);
            await elicitationCall(
                'test_elicitation',
                args,
                (p) => {
                    assert.equal(p.message, args.message, 'elicitation message is the tool argument');
                    assert.ok(Object.keys(p.requestedSchema.properties ?? {}).length > 0, 'schema has properties');
                },
                'User response: action=accept, content=',
            );
        },
        async test_elicitation_sep1034_defaults() {
            await elicitationCall(
                'test_elicitation_sep1034_defaults',
                {},
                (p) =>
                    assert.deepEqual(p.requestedSchema, {
                        type: 'object',
                        properties: {
                            name: { type: 'string', description: 'User name', default: 'John Doe' },
                            age: { type: 'integer', description: 'User age', default: 30 },
                            score: { type: 'number', description: 'User score', default: 95.5 },
                            status: {
                                type: 'string',
                                description: 'User status',
                                enum: ['active', 'inactive', 'pending'],
                                default: 'active',
                            },
                            verified: { type: 'boolean', description: 'Verification status', default: true },
                        },
                        required: [],
                    }),
                'Elicitation completed: action=accept, content=',
            );
        },
        async test_elicitation_sep1330_enums() {
            await elicitationCall(
                'test_elicitation_sep1330_enums',
                {},
                (p) => {
                    // A human-readable description (or title) per field is allowed, as in the
                    // reference server; the structure below is what SEP-1330 fixes.
                    const props = Object.fromEntries(
                        Object.entries(p.requestedSchema.properties).map(([k, v]) => {
                            const { description, title, ...rest } = v;
                            if (description !== undefined) assert.equal(typeof description, 'string');
                            if (title !== undefined) assert.equal(typeof title, 'string');
                            return [k, rest];
                        }),
                    );
                    assert.deepEqual(
                        Object.keys(props).sort(),
                        ['legacyEnum', 'titledMulti', 'titledSingle', 'untitledMulti', 'untitledSingle'],
                    );
                    assert.deepEqual(props.untitledSingle, { type: 'string', enum: ['option1', 'option2', 'option3'] });
                    assert.deepEqual(props.titledSingle, {
                        type: 'string',
                        oneOf: [
                            { const: 'value1', title: 'First Option' },
                            { const: 'value2', title: 'Second Option' },
                            { const: 'value3', title: 'Third Option' },
                        ],
                    });
                    assert.deepEqual(props.legacyEnum, {
                        type: 'string',
                        enum: ['opt1', 'opt2', 'opt3'],
                        enumNames: ['Option One', 'Option Two', 'Option Three'],
                    });
                    assert.deepEqual(props.untitledMulti, {
                        type: 'array',
                        minItems: 1,
                        maxItems: 3,
                        items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                    });
                    assert.deepEqual(props.titledMulti, {
                        type: 'array',
                        minItems: 1,
                        maxItems: 3,
                        items: {
                            anyOf: [
                                { const: 'value1', title: 'First Choice' },
                                { const: 'value2', title: 'Second Choice' },
                                { const: 'value3', title: 'Third Choice' },
                            ],
                        },
                    });
                    assert.deepEqual(p.requestedSchema.required, []);
                },
                'Elicitation completed: action=accept, content=',
            );
        },
        async json_schema_2020_12_tool(tool) {
            assert.deepEqual(tool.inputSchema, {
                $schema: 'https://json-schema.org/draft/2020-12/schema',
                type: 'object',
                $defs: {
                    address: {
                        $anchor: 'addressDef',
                        type: 'object',
                        properties: { street: { type: 'string' }, city: { type: 'string' } },
                    },
                },
                properties: {
                    name: { type: 'string' },
                    address: { $ref: '#/$defs/address' },
                    contactMethod: { type: 'string', enum: ['phone', 'email'] },
                    phone: { type: 'string' },
                    email: { type: 'string' },
                },
                allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
                if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
                then: { required: ['phone'] },
                else: { required: ['email'] },
                additionalProperties: false,
            });
            const args = {
                name: 'Ada Lovelace',
                address: { street: '12 St James Square', city: 'London' },
                contactMethod: 'email',
                email: 'ada@example.com',
            };
            assertArgsFitSchema(tool, args);
            const { raw } = await call('json_schema_2020_12_tool', args);
            assert.equal(raw.isError, undefined);
            assert.equal(raw.content.length, 1);
            assert.equal(raw.content[0].type, 'text');
            for (const v of ['Ada Lovelace', '12 St James Square', 'London'])
                assert.ok(raw.content[0].text.includes(v), `result text echoes ${v}: ${raw.content[0].text}`);
        },
        async test_reconnection() {
            // Over stdio there is no SSE stream to close, so the result simply arrives.
            const { raw } = await call('test_reconnection', {});
            assert.deepEqual(
                raw,
                textResult(
                    'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
                ),
            );
        },
        async echo(tool) {
            const args = { text: 'hello interop ✓' };
            assertArgsFitSchema(tool, args);
            const { raw } = await call('echo', args);
            assert.deepEqual(raw, textResult(args.text));
        },
        async add(tool) {
            assert.equal(tool.title, 'Add two numbers');
            assert.deepEqual(tool.annotations, { readOnlyHint: true, idempotentHint: true });
            assert.deepEqual(tool.outputSchema, {
                type: 'object',
                properties: { sum: { type: 'number' } },
                required: ['sum'],
            });
            const args = { a: 2, b: 3.5 };
            assertArgsFitSchema(tool, args);
            const { res, raw } = await call('add', args);
            assert.deepEqual(raw.structuredContent, { sum: 5.5 });
            assert.equal(raw.content.length, 1);
            assert.equal(raw.content[0].type, 'text');
            assert.deepEqual(JSON.parse(raw.content[0].text), { sum: 5.5 }, 'text block carries the same JSON');
            assert.equal(raw.isError, undefined);
            assert.deepEqual(res.structuredContent, { sum: 5.5 }, 'SDK validated it against outputSchema');
        },
        async long_running(tool) {
            const args = { steps: 4, delay_ms: 20 };
            assertArgsFitSchema(tool, args);
            const progress = [];
            const c = await call('long_running', args, { onprogress: (p) => progress.push(p) });
            const { req, raw, during } = c;
            assert.deepEqual(raw, textResult('completed 4 steps'));
            const onWire = progressIn(during);
            assert.deepEqual(
                onWire.map((p) => [p.progress, p.total, p.message]),
                [1, 2, 3, 4].map((i) => [i, 4, `step ${i}`]),
                'progress i of 4 with message "step i", in order, before the result',
            );
            for (const p of onWire) assert.strictEqual(p.progressToken, req.params._meta.progressToken);
            assert.deepEqual(
                progress.map((p) => [p.progress, p.total, p.message]),
                progressVisibleToSdk(c).map((p) => [p.progress, p.total, p.message]),
                'onprogress saw every progress the SDK could deliver, in order',
            );
            // The steps are delay_ms apart, so at least the first three arrive in reads of their own.
            assert.ok(progress.length >= 3, `onprogress called ${progress.length} times`);
        },
        async notify(tool) {
            const args = { count: 3, delay_ms: 5 };
            assertArgsFitSchema(tool, args);
            const { raw, during } = await call('notify', args);
            assert.deepEqual(raw, textResult('sent 3'));
            assert.deepEqual(
                logsIn(during).map((p) => [p.level, p.data]),
                [1, 2, 3].map((i) => ['info', `notification ${i}`]),
            );
        },
        async list_roots() {
            const { raw, during } = await call('list_roots', {});
            assert.equal(requestsIn(during, 'roots/list').length, 1, 'one roots/list request before the result');
            assert.deepEqual(raw.structuredContent, { roots: ROOTS });
            assert.ok(Array.isArray(raw.content), 'content is an array');
            assert.equal(raw.isError, undefined);
        },
        async trigger_resource_update(tool) {
            const uri = 'test://watched-resource';
            const args = { uri };
            assertArgsFitSchema(tool, args);
            const sub = await env.client.subscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS });
            assert.deepEqual(sub, {});
            const mark = env.transport.wire.length;
            const updatesBefore = env.updatesSeen.length;
            const { raw } = await call('trigger_resource_update', args);
            assert.deepEqual(raw, textResult('updated'));
            const n = await env.transport.waitFor(
                (m) => m.method === 'notifications/resources/updated' && m.params?.uri === uri,
                mark,
                5000,
                'notifications/resources/updated',
            );
            assert.deepEqual(n.params, { uri });
            // The SDK runs notification handlers after the message is on the wire: wait for it.
            for (let i = 0; i < 500 && env.updatesSeen.length <= updatesBefore; i++)
                await new Promise((r) => setImmediate(r));
            assert.ok(env.updatesSeen.length > updatesBefore, 'ResourceUpdatedNotification handler ran');

            // After unsubscribing, a trigger must not notify us. The notification would be queued
            // before the tool's result, so a ping after the result is a safe barrier.
            assert.deepEqual(await env.client.unsubscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }), {});
            const mark2 = env.transport.wire.length;
            await call('trigger_resource_update', args);
            await env.client.ping({ timeout: REQUEST_TIMEOUT_MS });
            const late = env.transport.wire
                .slice(mark2)
                .filter((m) => m.method === 'notifications/resources/updated' && m.params?.uri === uri);
            assert.equal(late.length, 0, 'no update after unsubscribe');
        },
        async log_all_levels() {
            // With the level at warning, only warning and more severe get through.
            assert.deepEqual(await env.client.setLoggingLevel('warning', { timeout: REQUEST_TIMEOUT_MS }), {});
            try {
                const { raw, during } = await call('log_all_levels', {});
                assert.deepEqual(raw, textResult('logged'));
                assert.deepEqual(
                    logsIn(during).map((p) => [p.level, p.data]),
                    LEVELS.slice(3).map((l) => [l, l]),
                    'logging/setLevel warning filters out debug, info and notice',
                );
            } finally {
                await env.client.setLoggingLevel('debug', { timeout: REQUEST_TIMEOUT_MS });
            }
            const { raw, during } = await call('log_all_levels', {});
            assert.deepEqual(raw, textResult('logged'));
            assert.deepEqual(
                logsIn(during).map((p) => [p.level, p.data]),
                LEVELS.map((l) => [l, l]),
                'at debug, one message per level, in order',
            );
        },
        async poll_notify(tool) {
            // Without close_after it just notifies (over stdio there is no stream to close);
            // the HTTP test overrides this with a real close and resume.
            const args = { count: 2, delay_ms: 0, close_after: 0 };
            assertArgsFitSchema(tool, args);
            const { raw } = await call('poll_notify', args);
            assert.deepEqual(raw, textResult('sent 2'));
        },
        async ping_client(tool) {
            // A server-to-client ping: the TS client answers it itself.
            assertArgsFitSchema(tool, {});
            const { raw } = await call('ping_client', {});
            assert.deepEqual(raw, textResult('pong'));
        },
        async trace_context(tool) {
            // The W3C trace context in _meta reaches the server's handler as it was sent.
            assertArgsFitSchema(tool, {});
            const traceparent = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
            const res = await env.client.callTool(
                { name: 'trace_context', arguments: {}, _meta: { traceparent, tracestate: 'k=v' } },
                undefined,
                { timeout: REQUEST_TIMEOUT_MS },
            );
            assert.equal(res.structuredContent.traceparent, traceparent);
            assert.equal(res.structuredContent.tracestate, 'k=v');
        },
        async complete_elicitation(tool) {
            // The session is told on its own stream; over stdio, or without a session, there
            // is none to tell, and the tool says so as a tool error.
            const args = { elicitationId: 'e-1' };
            assertArgsFitSchema(tool, args);
            const { raw } = await call('complete_elicitation', args);
            if (raw.isError) assert.match(raw.content[0].text, /no session to notify/);
            else assert.deepEqual(raw, textResult('notified'));
        },
        async app_sum(tool) {
            // An MCP App's tool: linked to its view, and a text result for a client that does
            // not show apps (this one does not declare the extension).
            const args = { a: 3, b: 4 };
            assertArgsFitSchema(tool, args);
            assert.equal(tool._meta?.ui?.resourceUri, 'ui://everything/sum.html');
            const { raw } = await call('app_sum', args);
            assert.deepEqual(raw.content, [{ type: 'text', text: '3 + 4 = 7 (no view: this client does not show apps)' }]);
            assert.deepEqual(raw.structuredContent, { a: 3, b: 4, sum: 7 });
        },
        async url_elicitation(tool) {
            // This client declares form-mode elicitation only, so the server does not ask it
            // to open a URL and the tool says so.
            const args = { url: 'https://example.com/finish' };
            assertArgsFitSchema(tool, args);
            const { raw } = await call('url_elicitation', args);
            assert.match(raw.content[0].text, /^URL-mode elicitation cannot be asked here/);
        },
        async slow_echo(tool) {
            const args = { text: 'slow hello', delay_ms: 50 };
            assertArgsFitSchema(tool, args);
            const t0 = Date.now();
            const { raw } = await call('slow_echo', args);
            assert.ok(Date.now() - t0 >= 40, 'slow_echo waited about delay_ms');
            assert.deepEqual(raw, textResult(args.text));
        },

        // The tools of revision 2026-07-28's conformance scenarios. One handler serves both
        // eras: here, in the legacy era, the server asks with requests of its own (answered
        // by the client's handlers, fillFromSchema for elicitations) and waits for them.
        test_input_required_result_elicitation: () => asking('test_input_required_result_elicitation', ['elicitation/create'], ([n]) => `Hello, ${n.name}!`),
        test_input_required_result_sampling: () => asking('test_input_required_result_sampling', ['sampling/createMessage'], () => `The model said: ${SAMPLING_TEXT}`),
        test_input_required_result_list_roots: () => asking('test_input_required_result_list_roots', ['roots/list'], () => `The client has ${ROOTS.length} roots.`),
        test_input_required_result_request_state: () => asking('test_input_required_result_request_state', ['elicitation/create'], () => 'state-ok: the state kept in round 1 came back'),
        test_input_required_result_tampered_state: () => asking('test_input_required_result_tampered_state', ['elicitation/create'], () => 'state-ok: the state kept in round 1 came back'),
        test_input_required_result_multiple_inputs: () =>
            asking(
                'test_input_required_result_multiple_inputs',
                ['elicitation/create', 'sampling/createMessage', 'roots/list'],
                ([n]) => `${n.name}; the model said: ${SAMPLING_TEXT}; ${ROOTS.length} roots`,
            ),
        test_input_required_result_multi_round: () =>
            asking('test_input_required_result_multi_round', ['elicitation/create', 'elicitation/create'], ([a, b]) => `${a.name} likes ${b.color}`),
        test_input_required_result_capabilities: () =>
            asking(
                'test_input_required_result_capabilities',
                ['elicitation/create', 'sampling/createMessage', 'roots/list'],
                () => '3 of the questions the client can answer were answered',
            ),
        test_missing_capability: () => asking('test_missing_capability', ['sampling/createMessage'], () => `The model said: ${SAMPLING_TEXT}`),
        test_streaming_elicitation: () => asking('test_streaming_elicitation', ['elicitation/create'], ([n]) => `Hello, ${n.name}!`),
        async test_logging_tool() {
            // The session's level is debug here (checkSetLevel): both messages come.
            const { raw, during } = await call('test_logging_tool', {});
            assert.deepEqual(raw, textResult('logged'));
            assert.deepEqual(
                logsIn(during).map((p) => [p.level, p.data]),
                [
                    ['info', 'the logging tool runs'],
                    ['debug', 'a debug message'],
                ],
            );
        },
        async test_trigger_tool_change() {
            assert.deepEqual((await call('test_trigger_tool_change', {})).raw, textResult('sent notifications/tools/list_changed'));
        },
        async test_trigger_prompt_change() {
            assert.deepEqual((await call('test_trigger_prompt_change', {})).raw, textResult('sent notifications/prompts/list_changed'));
        },
        async test_custom_headers(tool) {
            const args = { region: 'eu-west-1', query: 'anything' };
            assertArgsFitSchema(tool, args);
            assert.equal(tool.inputSchema.properties.region['x-mcp-header'], 'Region');
            assert.deepEqual((await call('test_custom_headers', args)).raw, textResult('region: eu-west-1'));
        },

        // The tools of the tasks extension's conformance scenarios (revision 2026-07-28). The
        // legacy era has no tasks: those that may run as one answer at once, asking the
        // client as any handler does, and those that run only as one are refused with
        // -32021 naming the extension.
        async greet(tool) {
            const args = { name: 'legacy' };
            assertArgsFitSchema(tool, args);
            assert.deepEqual((await call('greet', args)).raw, textResult('Hello, legacy!'));
        },
        async slow_compute(tool) {
            const args = { seconds: 0, label: 'now' };
            assertArgsFitSchema(tool, args);
            assert.deepEqual((await call('slow_compute', args)).raw, textResult('Computed now in 0 s'));
        },
        failing_job: () => refusedWithoutTasks('failing_job'),
        protocol_error_job: () => refusedWithoutTasks('protocol_error_job'),
        async confirm_delete(tool) {
            const args = { filename: 'f.txt' };
            assertArgsFitSchema(tool, args);
            const before = env.serverRequests.length;
            const { raw, during } = await call('confirm_delete', args);
            const asked = during.filter((m) => typeof m.method === 'string' && 'id' in m).map((m) => m.method);
            assert.deepEqual(asked, ['elicitation/create'], 'confirm_delete asked once, before its result');
            assert.equal(env.serverRequests.length, before + 1);
            assert.deepEqual(raw, textResult('Deleted f.txt'));
        },
        multi_input: () => asking('multi_input', ['elicitation/create', 'elicitation/create'], () => 'Got both answers (name, confirmed)'),
        test_tool_with_task: () => asking('test_tool_with_task', ['elicitation/create'], ([n]) => `Hello, ${n.name}! (from a task)`),
    };

    // A tool that runs only as a task, called by a client of the legacy era: -32021.
    async function refusedWithoutTasks(name) {
        await assert.rejects(
            env.client.callTool({ name, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS }),
            (e) => e.code === -32021 && /io\.modelcontextprotocol\/tasks/.test(e.message),
            `${name}: refused with -32021 naming the tasks extension`,
        );
    }

    // Calls a tool that asks the client in the legacy era: the server requests of `methods`,
    // in order, came before the result, whose text is text(elicited contents, in order).
    async function asking(name, methods, text) {
        const before = env.serverRequests.length;
        const { raw, during } = await call(name, {});
        const asked = during.filter((m) => typeof m.method === 'string' && 'id' in m);
        assert.deepEqual(asked.map((m) => m.method), methods, `${name}: what the server asked, before its result`);
        assert.equal(env.serverRequests.length, before + methods.length, `${name}: the client's handlers answered`);
        const elicited = asked.filter((m) => m.method === 'elicitation/create').map((m) => fillFromSchema(m.params.requestedSchema));
        assert.deepEqual(raw, textResult(text(elicited)));
    }

    // initialize negotiated 2025-11-25 and named the server.
    function checkInitialize() {
        assert.equal(env.initResult.protocolVersion, '2025-11-25');
        assert.equal(env.initResult.serverInfo?.name, 'mcp-everything');
        assert.equal(typeof env.initResult.serverInfo?.version, 'string');
        const caps = env.initResult.capabilities;
        assert.ok(caps.tools, 'tools capability');
        assert.equal(caps.resources?.subscribe, true, 'resources.subscribe');
        assert.ok(caps.prompts, 'prompts capability');
        assert.ok(caps.logging, 'logging capability');
        assert.ok(caps.completions, 'completions capability');
        assert.equal(env.client.getServerVersion()?.name, 'mcp-everything');
    }

    // ping returns exactly {}.
    async function checkPing() {
        const mark = env.transport.sent.length;
        assert.deepEqual(await env.client.ping({ timeout: REQUEST_TIMEOUT_MS }), {});
        const req = env.transport.sent.slice(mark).find((m) => m.method === 'ping');
        assert.deepEqual(env.transport.wire.find(isResponseTo(req.id)).result, {});
    }

    // logging/setLevel returns exactly {}.
    async function checkSetLevel() {
        const mark = env.transport.sent.length;
        assert.deepEqual(await env.client.setLoggingLevel('debug', { timeout: REQUEST_TIMEOUT_MS }), {});
        const req = env.transport.sent.slice(mark).find((m) => m.method === 'logging/setLevel');
        assert.deepEqual(env.transport.wire.find(isResponseTo(req.id)).result, {});
    }

    // Every listed tool can be called and returns the expected result. overrides replace the
    // check of the tools they name (e.g. for what differs with the transport).
    async function checkTools(t, overrides = {}) {
        const checks = { ...TOOLS, ...overrides };
        const tools = [];
        let cursor;
        do {
            const page = await env.client.listTools(cursor ? { cursor } : undefined, { timeout: REQUEST_TIMEOUT_MS });
            tools.push(...page.tools);
            cursor = page.nextCursor;
        } while (cursor);
        const names = tools.map((x) => x.name);
        assert.equal(new Set(names).size, names.length, `duplicate tool names: ${names}`);
        const unknown = names.filter((n) => !(n in checks));
        assert.deepEqual(unknown, [], 'tools listed that this test does not know how to call');
        const missing = Object.keys(checks).filter((n) => !names.includes(n));
        assert.deepEqual(missing, [], 'tools the server should offer but did not list');
        for (const tool of tools) {
            await t.test(tool.name, async () => {
                assert.equal(typeof tool.description, 'string', 'description present');
                assert.ok(tool.description.length > 0, 'description non-empty');
                assert.equal(tool.inputSchema?.type, 'object', 'inputSchema.type is object');
                await checks[tool.name](tool);
            });
        }
    }

    // tools/call of an unknown tool rejects with -32602.
    async function checkUnknownTool() {
        await assert.rejects(
            env.client.callTool({ name: 'no_such_tool_xyz', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS }),
            (err) => {
                assert.ok(err instanceof McpError, `expected McpError, got ${err}`);
                assert.equal(err.code, -32602);
                return true;
            },
        );
    }

    const EXPECTED_RESOURCES = {
        'test://static-text': { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
        'test://static-binary': { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG },
        'test://watched-resource': { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' },
    };

    // resources: list, read each, templates, read the template.
    async function checkResources(t) {
        const resources = [];
        let cursor;
        do {
            const page = await env.client.listResources(cursor ? { cursor } : undefined, { timeout: REQUEST_TIMEOUT_MS });
            resources.push(...page.resources);
            cursor = page.nextCursor;
        } while (cursor);
        const uris = resources.map((r) => r.uri);
        for (const u of Object.keys(EXPECTED_RESOURCES)) assert.ok(uris.includes(u), `resources/list lacks ${u}`);
        for (const r of resources) {
            await t.test(`read ${r.uri}`, async () => {
                assert.equal(typeof r.name, 'string', 'resource has a name');
                const mark = env.transport.sent.length;
                await env.client.readResource({ uri: r.uri }, { timeout: REQUEST_TIMEOUT_MS });
                const req = env.transport.sent.slice(mark).find((m) => m.method === 'resources/read');
                const raw = env.transport.wire.find(isResponseTo(req.id)).result;
                assert.ok(Array.isArray(raw.contents) && raw.contents.length >= 1, 'contents non-empty');
                if (EXPECTED_RESOURCES[r.uri]) {
                    assert.deepEqual(raw, { contents: [EXPECTED_RESOURCES[r.uri]] });
                } else {
                    assert.equal(raw.contents[0].uri, r.uri);
                    assert.ok(typeof raw.contents[0].text === 'string' || typeof raw.contents[0].blob === 'string');
                }
                if (r.mimeType) assert.equal(raw.contents[0].mimeType, r.mimeType, 'mimeType as listed');
            });
        }

        const templates = await env.client.listResourceTemplates(undefined, { timeout: REQUEST_TIMEOUT_MS });
        const tpl = templates.resourceTemplates.find((x) => x.uriTemplate === 'test://template/{id}/data');
        assert.ok(tpl, `template missing: ${JSON.stringify(templates.resourceTemplates)}`);
        assert.equal(tpl.name, 'template');
        assert.equal(tpl.mimeType, 'application/json');

        const mark = env.transport.sent.length;
        await env.client.readResource({ uri: 'test://template/123/data' }, { timeout: REQUEST_TIMEOUT_MS });
        const req = env.transport.sent.slice(mark).find((m) => m.method === 'resources/read');
        const raw = env.transport.wire.find(isResponseTo(req.id)).result;
        assert.equal(raw.contents.length, 1);
        const c = raw.contents[0];
        assert.equal(c.uri, 'test://template/123/data');
        assert.equal(c.mimeType, 'application/json');
        assert.deepEqual(JSON.parse(c.text), { id: '123', templateTest: true, data: 'Data for ID: 123' });
    }

    const EXPECTED_PROMPTS = {
        test_simple_prompt: {
            args: [],
            messages: () => [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
        },
        test_prompt_with_arguments: {
            args: ['arg1', 'arg2'],
            messages: (a) => [
                { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'` } },
            ],
        },
        test_prompt_with_embedded_resource: {
            args: ['resourceUri'],
            messages: (a) => [
                {
                    role: 'user',
                    content: {
                        type: 'resource',
                        resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
                    },
                },
                { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
            ],
        },
        test_prompt_with_image: {
            args: [],
            messages: () => [
                { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
                { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
            ],
        },
    };

    // prompts: list and get every prompt with its required arguments.
    async function checkPrompts(t) {
        const prompts = [];
        let cursor;
        do {
            const page = await env.client.listPrompts(cursor ? { cursor } : undefined, { timeout: REQUEST_TIMEOUT_MS });
            prompts.push(...page.prompts);
            cursor = page.nextCursor;
        } while (cursor);
        const names = prompts.map((p) => p.name);
        for (const n of Object.keys(EXPECTED_PROMPTS)) assert.ok(names.includes(n), `prompts/list lacks ${n}`);
        for (const p of prompts) {
            await t.test(p.name, async () => {
                assert.equal(typeof p.description, 'string', 'prompt has a description');
                const args = {};
                for (const a of p.arguments ?? []) {
                    assert.equal(typeof a.name, 'string');
                    if (a.required) args[a.name] = a.name === 'resourceUri' ? 'test://static-text' : `value of ${a.name}`;
                }
                const expected = EXPECTED_PROMPTS[p.name];
                if (expected) {
                    assert.deepEqual(
                        (p.arguments ?? []).map((a) => [a.name, a.required, typeof a.description]),
                        expected.args.map((n) => [n, true, 'string']),
                        'arguments listed with name, description and required:true',
                    );
                }
                const mark = env.transport.sent.length;
                await env.client.getPrompt({ name: p.name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
                const req = env.transport.sent.slice(mark).find((m) => m.method === 'prompts/get');
                const raw = env.transport.wire.find(isResponseTo(req.id)).result;
                if (expected) assert.deepEqual(raw.messages, expected.messages(args));
                else assert.ok(Array.isArray(raw.messages) && raw.messages.length > 0);
            });
        }
    }

    // completion/complete filters by prefix.
    async function checkCompletion() {
        const r = await env.client.complete(
            { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'te' } },
            { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.deepEqual([...r.completion.values].sort(), ['test', 'tested', 'testing']);
        if (r.completion.total !== undefined) assert.equal(r.completion.total, 3);
        if (r.completion.hasMore !== undefined) assert.equal(r.completion.hasMore, false);

        const t = await env.client.complete(
            { ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '1' } },
            { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.deepEqual([...t.completion.values].sort(), ['1', '123']);
    }

    return {
        call,
        elicitationCall,
        TOOLS,
        EXPECTED_RESOURCES,
        EXPECTED_PROMPTS,
        checkInitialize,
        checkPing,
        checkSetLevel,
        checkTools,
        checkUnknownTool,
        checkResources,
        checkPrompts,
        checkCompletion,
    };
}
