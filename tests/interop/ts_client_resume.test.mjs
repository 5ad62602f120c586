// Interop: the official TypeScript SDK client (1.32.2) resumes streams that our server closes
// (SEP-1699 polling), using only its own reconnection logic (StreamableHTTPClientTransport).
//
// Run by CTest as `node ts_client_resume.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.
//
// mcp-everything runs with --retry-ms 400. A fetch wrapper handed to the transport records every
// HTTP exchange: method, Last-Event-ID, when it was made, the SSE events its body carried and
// when that body ended. From that record the test checks, besides the results the SDK returns:
//   - every stream the server closed (an SSE body that ended cleanly before any JSON-RPC
//     response, its last event a priming event: id, retry, empty data) is resumed by exactly
//     one GET carrying that event's id as Last-Event-ID, made no sooner than the retry value
//     (350 ms allowed) and not absurdly later (< 5 s);
//   - no other GET happens besides the standalone one the SDK opens after initialize, so
//     nothing loops (no reconnect storm), also during a quiet period at the end;
//   - every notification of a long tool arrives exactly once and in order across the closes.
//
// With MCP_INTEROP_CLUSTER=N, the server is a cluster instead (lib/cluster.mjs): N nodes sharing
// a redis-server (--redis) behind HAProxy, which sends every request to the next node in turn
// with no stickiness. The same checks must hold through it, and more: each resuming GET lands on
// another node than the stream it resumes (HAProxy's X-Mcp-Node answer header, recorded per
// exchange, and its log line for that Last-Event-ID agree), so another node replays the events
// and delivers the result. MCP_INTEROP_CLUSTER_NO_REDIS=1 leaves Redis out (independent nodes:
// with one node everything must pass, which checks the plumbing).
//
// Apart from the cluster, the file is self-contained on purpose (it does not share lib/ with the
// other HTTP tests): the exchanges it cares about are only those of one client and one server.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { startCluster, servedBy } from './lib/cluster.mjs';
import { spawnDying } from './lib/http.mjs';

// Every wait below has its own deadline; this one bounds the whole file so that CTest never has
// to kill us. It is unref'd so it does not keep a finished run alive.
const OVERALL_DEADLINE_MS = 60_000;
const overall = setTimeout(() => {
    console.error(`FAIL: overall deadline of ${OVERALL_DEADLINE_MS} ms exceeded`);
    process.exit(1);
}, OVERALL_DEADLINE_MS);
overall.unref();

const RETRY_MS = 400;
const MIN_WAIT_MS = 350; // the retry value, less some timer slack
const MAX_WAIT_MS = 5000; // "not absurdly later"
const CALL_TIMEOUT_MS = 15_000;
const RECONNECTION_TEXT =
    'Reconnection test completed successfully. If you received this, ' +
    'the client properly reconnected after stream closure.';

const binDir = process.env.MCP_BIN_DIR;
// The number of nodes behind the balancer, 0 for one server on its own.
const CLUSTER = Number(process.env.MCP_INTEROP_CLUSTER ?? 0);
const CLUSTER_REDIS = process.env.MCP_INTEROP_CLUSTER_NO_REDIS === '1' ? 'none' : 'shared';

// Resolves like p, or rejects after ms.
function deadline(p, ms, what) {
    let timer;
    return Promise.race([
        p,
        new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
            timer.unref();
        }),
    ]).finally(() => clearTimeout(timer));
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Starts `mcp-everything --http 127.0.0.1:0 ...extra` and resolves, once it printed its listening
// line, with {child, url, exited}.
function startEverything(extra, ms = 10_000) {
    const exe = path.join(binDir ?? '', 'mcp-everything');
    if (!binDir || !existsSync(exe)) return Promise.reject(new Error(`${exe} does not exist (set MCP_BIN_DIR)`));
    const child = spawnDying(exe, ['--http', '127.0.0.1:0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    let err = '';
    return new Promise((resolve, reject) => {
        let found = false;
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`no listening line within ${ms} ms; stderr: ${err}`));
        }, ms);
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk) => {
            err += chunk;
            process.stderr.write(chunk);
            const m = /^mcp-everything: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)\r?$/m.exec(err);
            if (m && !found) {
                found = true;
                clearTimeout(timer);
                resolve({ child, url: m[1], exited });
            }
        });
        exited.then(({ code, signal }) => {
            if (!found) {
                clearTimeout(timer);
                reject(new Error(`mcp-everything exited (code ${code}, signal ${signal}) before listening; stderr: ${err}`));
            }
        });
    });
}

// Minimal SSE parser (spec semantics, as eventsource-parser): data lines joined with \n, an event
// is dispatched on a blank line only if it had a data line; id/retry are per event here.
class SseParser {
    constructor(onEvent) {
        this.buf = '';
        this.onEvent = onEvent;
        this.reset();
    }
    reset() {
        this.data = undefined;
        this.event = undefined;
        this.id = undefined;
        this.retry = undefined;
    }
    push(text) {
        this.buf += text;
        let m;
        while ((m = /\r\n|\r|\n/.exec(this.buf))) {
            if (m[0] === '\r' && m.index === this.buf.length - 1) break; // maybe half a CRLF
            const line = this.buf.slice(0, m.index);
            this.buf = this.buf.slice(m.index + m[0].length);
            this.line(line);
        }
    }
    line(line) {
        if (line === '') {
            if (this.data !== undefined) this.onEvent({ event: this.event, id: this.id, retry: this.retry, data: this.data });
            this.reset();
            return;
        }
        if (line.startsWith(':')) return;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') this.data = this.data === undefined ? value : `${this.data}\n${value}`;
        else if (field === 'event') this.event = value;
        else if (field === 'id') this.id = value;
        else if (field === 'retry') this.retry = value;
    }
}

// The fetch given to the transport. It forwards every call and records, per exchange: method,
// Last-Event-ID, the JSON-RPC method(s) posted, status, the SSE events of the body (parsed from a
// copy as the SDK reads it), and times: tStart (request made), tEnd (body ended cleanly) or
// tError (body failed or was cancelled). The body handed to the SDK is the same bytes, passed
// through a TransformStream so the end is seen exactly when the SDK sees it.
const exchanges = [];
async function recordingFetch(input, init = {}) {
    const headers = new Headers(init.headers);
    let posted;
    if (typeof init.body === 'string') {
        try {
            const b = JSON.parse(init.body);
            posted = (Array.isArray(b) ? b : [b]).map((m) => m.method ?? `response ${m.id}`);
        } catch {
            posted = ['<unparseable>'];
        }
    }
    const ex = {
        n: exchanges.length,
        method: (init.method ?? 'GET').toUpperCase(),
        lastEventId: headers.get('last-event-id') ?? undefined,
        posted,
        tStart: performance.now(),
        status: undefined,
        sse: false,
        events: [],
        tEnd: undefined,
        tError: undefined,
    };
    exchanges.push(ex);
    const res = await fetch(input, init);
    ex.status = res.status;
    ex.node = servedBy(res.headers); // the node behind the balancer, -1 without one
    ex.sse = (res.headers.get('content-type') ?? '').split(';')[0].trim() === 'text/event-stream';
    if (!res.body) {
        ex.tEnd = performance.now();
        return res;
    }
    const decoder = new TextDecoder();
    const parser = new SseParser((e) => ex.events.push(e));
    const tap = new TransformStream({
        transform(chunk, controller) {
            if (ex.sse) parser.push(decoder.decode(chunk, { stream: true }));
            controller.enqueue(chunk);
        },
        flush() {
            ex.tEnd = performance.now();
        },
    });
    // A failed or aborted body (our client.close(), a reset socket) is recorded, not thrown here:
    // the SDK gets the same error through its own reader.
    const piped = res.body.pipeThrough(tap);
    const [forSdk, forUs] = piped.tee();
    forUs
        .pipeTo(new WritableStream())
        .catch(() => {
            if (ex.tEnd === undefined) ex.tError = performance.now();
        });
    return new Response(forSdk, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// True when an SSE event carries a JSON-RPC response (result or error).
function isResponseEvent(e) {
    if (e.event !== undefined && e.event !== '' && e.event !== 'message') return false;
    if (e.data === '') return false;
    try {
        const m = JSON.parse(e.data);
        return 'id' in m && ('result' in m || 'error' in m) && !('method' in m);
    } catch {
        return false;
    }
}

// The streams the server closed on purpose: SSE bodies that ended cleanly with no JSON-RPC
// response, the last event a priming event (id, retry, no data).
function serverCloses() {
    return exchanges.filter((ex) => {
        if (!ex.sse || ex.tEnd === undefined || ex.events.some(isResponseEvent)) return false;
        const last = ex.events.at(-1);
        return last !== undefined && last.data === '' && last.id !== undefined && last.retry !== undefined;
    });
}

const gets = () => exchanges.filter((ex) => ex.method === 'GET');
const describe = (ex) =>
    `#${ex.n} ${ex.method}${ex.posted ? ` ${ex.posted.join(',')}` : ''}` +
    `${ex.lastEventId ? ` Last-Event-ID ${ex.lastEventId}` : ''} -> ${ex.status}` +
    ` at ${ex.tStart.toFixed(0)} ms, ${ex.events.length} event(s), ` +
    `${ex.tEnd !== undefined ? `ended at ${ex.tEnd.toFixed(0)}` : ex.tError !== undefined ? `failed at ${ex.tError.toFixed(0)}` : 'open'}`;
const wire = () => exchanges.map(describe).join('\n  ');

// Checks that each of the given closes was resumed by exactly one GET with its last event id,
// made in the retry window, and answered 200. Returns the resuming GETs.
function checkResumes(closes) {
    const resumes = [];
    for (const c of closes) {
        const id = c.events.at(-1).id;
        assert.equal(Number(c.events.at(-1).retry), RETRY_MS, `the close of #${c.n} names retry ${RETRY_MS}\n  ${wire()}`);
        const matching = gets().filter((g) => g.lastEventId === id);
        assert.equal(matching.length, 1, `exactly one GET resumes #${c.n} (Last-Event-ID ${id})\n  ${wire()}`);
        const g = matching[0];
        const waited = g.tStart - c.tEnd;
        assert.ok(
            waited >= MIN_WAIT_MS && waited < MAX_WAIT_MS,
            `the GET #${g.n} resuming #${c.n} came ${waited.toFixed(0)} ms after the close ` +
                `(expected ${MIN_WAIT_MS}..${MAX_WAIT_MS} ms)\n  ${wire()}`,
        );
        assert.equal(g.status, 200, `the resuming GET #${g.n} is answered 200\n  ${wire()}`);
        resumes.push(g);
    }
    return resumes;
}

// Waits until every exchange made so far whose body is still open other than the standalone
// GET has ended (the SDK reads a resumed stream to its end asynchronously from the result).
async function settle(standalone, ms = 5000) {
    const t0 = performance.now();
    while (exchanges.some((ex) => ex !== standalone && ex.tEnd === undefined && ex.tError === undefined)) {
        if (performance.now() - t0 > ms) throw new Error(`streams still open after ${ms} ms:\n  ${wire()}`);
        await delay(20);
    }
}

let server;
let cluster;
let client;
let transport;
let standalone; // the GET the SDK opens after initialize
const transportErrors = [];
let logs = [];

before(async () => {
    if (CLUSTER > 0) {
        cluster = await startCluster({ nodes: CLUSTER, redis: CLUSTER_REDIS, nodeArgs: ['--retry-ms', String(RETRY_MS)], quiet: true });
        server = { url: cluster.url };
    } else {
        server = await startEverything(['--retry-ms', String(RETRY_MS)]);
    }
    // Explicit options equal to the SDK's defaults, so the test does not depend on them moving;
    // the server's retry value replaces the backoff delay anyway.
    transport = new StreamableHTTPClientTransport(new URL(server.url), {
        fetch: recordingFetch,
        reconnectionOptions: {
            initialReconnectionDelay: 1000,
            maxReconnectionDelay: 30_000,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 2,
        },
    });
    client = new Client({ name: 'ts-client-resume', version: '1.0.0' }, { capabilities: {} });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params.data);
    });
    client.onerror = (e) => transportErrors.push(e);
    await deadline(client.connect(transport), 10_000, 'initialize');
    assert.equal(transport.protocolVersion, '2025-11-25', 'the session negotiated 2025-11-25 (priming events)');
    // The standalone GET is opened after notifications/initialized got its 202; wait for it to be
    // answered so that it is not mistaken for anything else.
    const t0 = performance.now();
    while (!(standalone = gets().find((g) => g.status !== undefined))) {
        if (performance.now() - t0 > 5000) throw new Error(`no standalone GET within 5 s:\n  ${wire()}`);
        await delay(10);
    }
    assert.equal(standalone.lastEventId, undefined, 'the standalone GET carries no Last-Event-ID');
    assert.equal(standalone.status, 200, 'the standalone GET is answered 200');
});

after(async () => {
    await client?.close();
    if (cluster) {
        const problems = await cluster.stop();
        assert.deepEqual(problems, [], 'every node exits 0 on SIGTERM');
    } else if (server) {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
        const { code, signal } = await deadline(server.exited, 5000, 'mcp-everything to exit after SIGTERM');
        assert.equal(signal, null, 'mcp-everything was not killed by a signal');
        assert.equal(code, 0, 'mcp-everything exits 0 on SIGTERM');
    }
});

// Calls a tool, then waits for the streams of the call to end, and returns what changed on the
// wire: {result, logs, exchanges (new ones), closes (new server closes), resumes}.
async function callAndRecord(name, args) {
    const before = exchanges.length;
    const closesBefore = new Set(serverCloses());
    logs = [];
    const result = await deadline(
        client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }),
        CALL_TIMEOUT_MS + 1000,
        `tools/call ${name}`,
    );
    await settle(standalone);
    const closes = serverCloses().filter((c) => !closesBefore.has(c));
    const resumes = checkResumes(closes);
    return { result, logs: [...logs], exchanges: exchanges.slice(before), closes, resumes };

}

const textOf = (result) => {
    assert.equal(result.isError ?? false, false, `the tool succeeded: ${JSON.stringify(result)}`);
    assert.equal(result.content?.length, 1, `one content block: ${JSON.stringify(result)}`);
    assert.equal(result.content[0].type, 'text');
    return result.content[0].text;
};

const expectedLogs = (count) => Array.from({ length: count }, (_, i) => `notification ${i + 1}`);

test('poll_notify closed after notifications 2 and 4 still delivers its result and every notification once, in order', async () => {
    const r = await callAndRecord('poll_notify', { count: 6, delay_ms: 150, close_after: 2, close_at: [4], retry_ms: RETRY_MS });
    assert.equal(textOf(r.result), 'sent 6, closed the stream twice');
    assert.deepEqual(r.logs, expectedLogs(6), `notifications 1..6 exactly once, in order\n  ${wire()}`);
    // The POST stream itself was closed by the server after notification 2 (with the tool's
    // retry, 400 ms, notification 4 comes 300 ms later, while the client still waits to
    // reconnect, so the server's second close finds the stream disconnected and there is nothing
    // to close on the wire: the resuming GET then carries 3..6 and the result).
    const post = r.exchanges.find((ex) => ex.method === 'POST' && ex.posted?.includes('tools/call'));
    assert.ok(post && r.closes.includes(post), `the server closed the tools/call POST stream\n  ${wire()}`);
    assert.ok(r.closes.length >= 1 && r.closes.length <= 2, `one or two closes on the wire\n  ${wire()}`);
    const gotOnPost = post.events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data).params?.data);
    assert.deepEqual(gotOnPost, ['notification 1', 'notification 2'], `the POST stream carried notifications 1 and 2\n  ${wire()}`);
    // The last resuming GET carried the result and ended after it.
    const last = r.resumes.at(-1);
    assert.ok(last.events.at(-1) && isResponseEvent(last.events.at(-1)), `the last resuming GET ends with the result\n  ${wire()}`);
});

test('poll_notify whose resumed stream the server closes again: two closes, two resuming GETs', async () => {
    // delay_ms 300 and close_at [5]: the first close comes after notification 2 (t = 300 ms),
    // the client is back about 400 ms later (t ~ 700), so the second close, after notification
    // 5 (t = 1200), hits the resumed GET itself; notification 6 and the result are stored and
    // replayed on the second resuming GET.
    const r = await callAndRecord('poll_notify', { count: 6, delay_ms: 300, close_after: 2, close_at: [5], retry_ms: RETRY_MS });
    assert.equal(textOf(r.result), 'sent 6, closed the stream twice');
    assert.deepEqual(r.logs, expectedLogs(6), `notifications 1..6 exactly once, in order\n  ${wire()}`);
    assert.equal(r.closes.length, 2, `the server closed two streams (the POST, then the resumed GET)\n  ${wire()}`);
    assert.equal(r.closes[0].method, 'POST');
    assert.equal(r.closes[1], r.resumes[0], `the second close was the first resuming GET\n  ${wire()}`);
    assert.equal(r.resumes.length, 2);
    assert.ok(isResponseEvent(r.resumes[1].events.at(-1)), `the second resuming GET ends with the result\n  ${wire()}`);
});

test('test_reconnection returns its exact text through the SDK reconnection', async () => {
    const r = await callAndRecord('test_reconnection', {});
    assert.equal(textOf(r.result), RECONNECTION_TEXT);
    assert.equal(r.closes.length, 1, `the server closed the POST stream once\n  ${wire()}`);
    assert.equal(r.closes[0].method, 'POST');
    assert.equal(r.resumes.length, 1);
    assert.ok(isResponseEvent(r.resumes[0].events.at(-1)), `the resuming GET ends with the result\n  ${wire()}`);
});

test('every resuming GET carries the Last-Event-ID of the closed stream and comes after the retry value', () => {
    // checkResumes already ran per call; this states the timing over the whole run.
    const closes = serverCloses();
    assert.ok(closes.length >= 4, `at least four server closes so far (1-2, 2, 1)\n  ${wire()}`);
    const resumes = checkResumes(closes);
    const waits = closes.map((c, i) => (resumes[i].tStart - c.tEnd).toFixed(0));
    console.log(`# waits between a server close and its resuming GET (ms): ${waits.join(', ')}`);
});

test('nothing loops: one resuming GET per server close, plus the standalone GET', async () => {
    // A quiet period of several retry intervals: a client polling a stream the server keeps
    // closing, or re-resuming finished streams, would show up here as more GETs.
    await delay(4 * RETRY_MS);
    const closes = serverCloses();
    const resumes = checkResumes(closes);
    const all = gets();
    assert.deepEqual(
        all.map((g) => g.n),
        [standalone, ...resumes].map((g) => g.n).sort((a, b) => a - b),
        `the only GETs are the standalone one and one per server close (${closes.length})\n  ${wire()}`,
    );
    assert.equal(standalone.tEnd, undefined, 'the standalone GET is still open');
    assert.equal(standalone.tError, undefined, 'the standalone GET did not fail');
    for (const ex of exchanges) assert.ok(ex.status >= 200 && ex.status < 300, `every exchange succeeded\n  ${wire()}`);
    assert.deepEqual(transportErrors.map(String), [], 'the transport reported no error');
    console.log(`# ${all.length} GETs for ${closes.length} server closes; the wire:\n#   ${exchanges.map(describe).join('\n#   ')}`);
});

if (CLUSTER > 0) {
    test('through the balancer, each resuming GET lands on another node than the stream it resumes', async () => {
        const closes = serverCloses();
        const resumes = checkResumes(closes);
        await cluster.waitRequests(exchanges.length);
        const logged = cluster.requests();
        const lines = [];
        for (const [i, c] of closes.entries()) {
            const g = resumes[i];
            lines.push(`#${c.n} ${c.method} on node${c.node}, resumed by #${g.n} GET on node${g.node}`);
            assert.ok(c.node >= 0 && c.node < CLUSTER, `#${c.n} names its node in X-Mcp-Node\n  ${wire()}`);
            // HAProxy's own record of that GET (the only request with its Last-Event-ID).
            const entries = logged.filter((r) => r.lastEventId === g.lastEventId);
            assert.equal(entries.length, 1, `HAProxy logged one request with Last-Event-ID ${g.lastEventId}`);
            assert.equal(entries[0].method, 'GET');
            assert.equal(entries[0].node, g.node, `HAProxy sent #${g.n} to the node its answer names`);
            if (CLUSTER > 1) assert.notEqual(g.node, c.node, `#${g.n} resumes #${c.n} on another node\n  ${lines.join('\n  ')}`);
        }
        const used = new Set(exchanges.map((ex) => ex.node));
        assert.equal(used.size, CLUSTER, `the session's requests went to every node (${[...used]})`);
        console.log(`# ${CLUSTER} node(s):\n#   ${lines.join('\n#   ')}`);
    });
}
