// Interop: libmcp's HTTP client against official servers, over loopback sockets:
//   - a server on the TypeScript SDK (lib/ts_sdk_server.mjs) over Streamable HTTP, resumable with
//     a retry of 300 ms, with tools whose stream (the call's, the standalone one) the server
//     closes mid-call (SEP-1699), and again with JSON answers;
//   - npm @modelcontextprotocol/server-everything (pinned in package-lock.json) over Streamable
//     HTTP, and over its HTTP+SSE endpoint, both named as such (http_sse) and reached by
//     the fallback of a Streamable HTTP connect.
//
// Run by CTest as `node our_client_http.test.mjs` in tests/interop with MCP_BIN_DIR set to the
// build's bin directory. Exit code 0 means every check passed.
//
// The client is bin/interop_http_client_driver (http_client_driver.c): it connects, runs a script
// of steps through the public API's shorthands and prints one JSON line per step, with the
// sampling and elicitation requests the server made meanwhile (each answered with the script's
// canned result) and its notifications; roots/list is answered with the script's roots. Each
// server is checked on what the client got back: tool results, resource contents, prompt
// messages, and tool results that carry the canned answers, which shows that the server received
// them; the TypeScript server also reports on stderr what it saw of the resumptions.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ELICITATION_ANSWER, names, ok, ROOTS, runDriver as runScript, SAMPLING_ANSWER, texts } from './lib/driver.mjs';
import { overallDeadline, startListening } from './lib/http.mjs';

// Every wait below has its own deadline; this one bounds the whole file.
overallDeadline(120_000);

const REQUEST_TIMEOUT_MS = 15_000; // what the driver gives each request and its connect
const RUN_TIMEOUT_MS = 45_000; // kill a driver run that takes longer than this
const RETRY_MS = 300;


const TS_SERVER = fileURLToPath(new URL('./lib/ts_sdk_server.mjs', import.meta.url));
const TS_LISTEN_RE = /^ts-sdk-server: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;

// server-everything's entry point, from its own package.json "bin".
const require = createRequire(import.meta.url);
const pkgJsonPath = require.resolve('@modelcontextprotocol/server-everything/package.json');
const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
const EVERYTHING = path.join(path.dirname(pkgJsonPath), pkg.bin['mcp-server-everything']);
assert.ok(existsSync(EVERYTHING), `${EVERYTHING} does not exist`);


// Resolves with a TCP port that was free on 127.0.0.1 a moment ago.
// A port for server-everything, which takes it from PORT and listens on every address. It is
// drawn below the kernel's ephemeral range (ip_local_port_range): a port-0 listener or an
// outgoing connection of a test running beside this one is handed ports from that range, and
// one handed this port between the check and the server's listen took its place on 127.0.0.1
// (the server's wildcard listen still succeeded, and the client reached the other process).
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
        s.listen(port, () => s.close(() => resolve(true)));
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

// Starts server-everything in `mode` (streamableHttp or sse) on a free port, which it takes from
// PORT and names in its listening line; another process may take the port between freePort and
// the listen, so a start that fails is tried again on another port, three times at most.
async function startEverythingPackage(mode) {
    for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        const re = new RegExp(`(?:listening|running) on port ${port}$`);
        try {
            const server = await startListening(`server-everything ${mode}`, process.execPath, [EVERYTHING, mode], re, {
                env: { ...process.env, PORT: String(port) },
            });
            return { ...server, base: `http://127.0.0.1:${port}` };
        } catch (e) {
            if (attempt === 3) throw e;
        }
    }
}

// Runs the driver against url with the script {timeout_ms, sampling, elicitation, roots, steps}
// (see lib/driver.mjs).
function runDriver(url, steps, { httpSse = false } = {}) {
    const fields = { timeout_ms: REQUEST_TIMEOUT_MS, sampling: SAMPLING_ANSWER, elicitation: ELICITATION_ANSWER, roots: ROOTS };
    return runScript([...(httpSse ? ['--http-sse'] : []), url], fields, steps, RUN_TIMEOUT_MS);
}

// Starts lib/ts_sdk_server.mjs on a free port with flags.
function startTsServer(flags) {
    return startListening('ts-sdk-server', process.execPath, [TS_SERVER, '0', ...flags], TS_LISTEN_RE);
}


describe('TypeScript SDK server, Streamable HTTP, resumable with a retry of 300 ms', () => {
    const STEPS = [
        ['tools', { op: 'list_tools' }],
        ['echo', { op: 'call_tool', name: 'echo', args: { text: 'hello from libmcp' } }],
        ['resources', { op: 'list_resources' }],
        ['read', { op: 'read_resource', uri: 'peer://greeting' }],
        ['prompts', { op: 'list_prompts' }],
        ['prompt', { op: 'get_prompt', name: 'greet', args: { name: 'Ada' } }],
        ['sample', { op: 'call_tool', name: 'sample', args: { prompt: 'say something' } }],
        ['elicit', { op: 'call_tool', name: 'elicit', args: { message: 'who are you?' } }],
        ['close_stream', { op: 'call_tool', name: 'close_stream', args: { before: 2, after: 2 } }],
        ['close_sample', { op: 'call_tool', name: 'close_stream', args: { before: 1, after: 1, sample: true } }],
        ['close_standalone', { op: 'call_tool', name: 'close_standalone', args: { count: 3 } }],
        ['standalone_rest', { op: 'wait_notifications', count: 2, timeout_ms: REQUEST_TIMEOUT_MS }],
        ['notify', { op: 'call_tool', name: 'notify', args: { count: 3 } }],
        ['ping', { op: 'ping' }],
    ];
    let server;
    let run;
    before(async () => {
        server = await startTsServer(['--resumable', `--retry=${RETRY_MS}`]);
        run = await runDriver(server.match[1], STEPS);
    });
    after(async () => {
        if (server) await server.stop();
    });

    test('connects and lists the tools', () => {
        assert.equal(run.connect.serverInfo.name, 'ts-sdk-server');
        const tools = names(ok(run, 'tools').result.tools);
        for (const n of ['echo', 'notify', 'sample', 'elicit', 'close_stream', 'close_standalone']) assert.ok(tools.includes(n), `tools: ${tools}`);
    });

    test('calls a tool', () => {
        assert.deepEqual(ok(run, 'echo').result, { content: [{ type: 'text', text: 'hello from libmcp' }] });
    });

    test('lists and reads a resource', () => {
        assert.deepEqual(names(ok(run, 'resources').result.resources), ['greeting']);
        assert.deepEqual(ok(run, 'read').result.contents, [
            { uri: 'peer://greeting', mimeType: 'text/plain', text: 'Hello from the TypeScript SDK server' },
        ]);
    });

    test('lists and gets a prompt', () => {
        assert.deepEqual(names(ok(run, 'prompts').result.prompts), ['greet']);
        assert.deepEqual(ok(run, 'prompt').result.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
    });

    test('answers sampling, and the server gets the answer', () => {
        const line = ok(run, 'sample');
        assert.equal(line.sampling.length, 1, 'one sampling request during the call');
        assert.deepEqual(line.sampling[0].messages, [{ role: 'user', content: { type: 'text', text: 'say something' } }]);
        assert.deepEqual(JSON.parse(texts(line.result)[0]), SAMPLING_ANSWER);
    });

    test('answers elicitation with the schema defaults filled in, and the server gets the answer', () => {
        const line = ok(run, 'elicit');
        assert.equal(line.elicitation.length, 1, 'one elicitation request during the call');
        assert.equal(line.elicitation[0].message, 'who are you?');
        assert.deepEqual(JSON.parse(texts(line.result)[0]), {
            action: 'accept',
            content: { name: 'libmcp interop', color: 'blue' },
        });
    });

    // What the server reported on stderr, in order (see lib/ts_sdk_server.mjs).
    const serverEvents = () =>
        server
            .stderr()
            .split('\n')
            .filter((l) => l.startsWith('ts-sdk-server: {'))
            .map((l) => JSON.parse(l.slice('ts-sdk-server: '.length)));
    const streamOf = (eventId) => eventId.slice(0, eventId.lastIndexOf('_'));

    test('resumes the stream the server closed mid-call (SEP-1699): the result arrives once', () => {
        const line = ok(run, 'close_stream');
        assert.deepEqual(texts(line.result), ['closed after 2']);
        assert.deepEqual(
            line.notifications.map((n) => n.params.data),
            ['before0', 'before1', 'after0', 'after1'],
            'every notification once, in order, across the close',
        );
        const events = serverEvents();
        const all = JSON.stringify(events);
        const close = events.find((e) => e.event === 'close_stream');
        // The server stored the rest of the call (notifications, result) while the stream was
        // closed: it reaches the client only through the replay of its resumption.
        const replays = events.filter((e) => e.event === 'replay' && e.messages.some((m) => m.id === close.id && 'result' in m));
        assert.equal(replays.length, 1, `the result replayed once: ${all}`);
        const answers = replays[0].messages.filter((m) => m.id === close.id && 'result' in m);
        assert.equal(answers.length, 1, all);
        const stream = streamOf(replays[0].lastEventId);
        const resumes = events.filter((e) => e.event === 'get' && e.lastEventId && streamOf(e.lastEventId) === stream);
        assert.equal(resumes.length, 1, `one GET with Last-Event-ID for the closed stream: ${all}`);
        const waited = resumes[0].t - close.t;
        assert.ok(waited >= RETRY_MS - 50 && waited < 5000, `resumed ${waited} ms after the close (retry ${RETRY_MS})`);
    });

    test('answers a sampling request the server made after closing the stream', () => {
        const line = ok(run, 'close_sample');
        assert.deepEqual(texts(line.result), [`closed after 1; sampled ${SAMPLING_ANSWER.content.text}`]);
        assert.equal(line.sampling.length, 1);
        assert.deepEqual(
            line.notifications.map((n) => n.params.data),
            ['before0', 'after0'],
        );
    });

    test('resumes the standalone stream the server closed, and misses nothing of it', () => {
        const line = ok(run, 'close_standalone');
        assert.deepEqual(texts(line.result), ['standalone closed']);
        const rest = ok(run, 'standalone_rest');
        assert.deepEqual(
            [...line.notifications, ...rest.notifications].map((n) => n.params.data),
            ['standalone0', 'standalone1', 'standalone2'],
        );
        const events = serverEvents();
        const resumes = events.filter((e) => e.event === 'get' && e.lastEventId && streamOf(e.lastEventId) === '_GET_stream');
        assert.equal(resumes.length, 1, `one GET with Last-Event-ID for the standalone stream: ${JSON.stringify(events)}`);
    });

    test("receives a call's notifications before its result", () => {
        const line = ok(run, 'notify');
        assert.deepEqual(texts(line.result), ['sent 3']);
        assert.deepEqual(
            line.notifications.map((n) => [n.method, n.params.data]),
            [0, 1, 2].map((i) => ['notifications/message', `n${i}`]),
        );
    });

    test('pings', () => {
        ok(run, 'ping');
    });
});

describe('TypeScript SDK server, Streamable HTTP, JSON answers', () => {
    const STEPS = [
        ['tools', { op: 'list_tools' }],
        ['echo', { op: 'call_tool', name: 'echo', args: { text: 'hello from libmcp' } }],
        ['read', { op: 'read_resource', uri: 'peer://greeting' }],
        ['prompt', { op: 'get_prompt', name: 'greet', args: { name: 'Ada' } }],
        ['ping', { op: 'ping' }],
    ];
    let server;
    let run;
    before(async () => {
        server = await startTsServer(['--json']);
        run = await runDriver(server.match[1], STEPS);
    });
    after(async () => {
        if (server) await server.stop();
    });

    test('lists and calls tools, reads a resource, gets a prompt, pings', () => {
        assert.ok(names(ok(run, 'tools').result.tools).includes('echo'));
        assert.deepEqual(texts(ok(run, 'echo').result), ['hello from libmcp']);
        assert.equal(ok(run, 'read').result.contents[0].text, 'Hello from the TypeScript SDK server');
        assert.equal(ok(run, 'prompt').result.messages[0].content.text, 'Say hello to Ada');
        ok(run, 'ping');
    });
});

// The same steps for both of server-everything's HTTP transports.
const EVERYTHING_STEPS = [
    ['tools', { op: 'list_all', method: 'tools/list', key: 'tools' }],
    ['echo', { op: 'call_tool', name: 'echo', args: { message: 'hello from libmcp' } }],
    ['sum', { op: 'call_tool', name: 'get-sum', args: { a: 2, b: 3 } }],
    ['resources', { op: 'list_resources' }],
    ['templates', { op: 'list_resource_templates' }],
    ['read_text', { op: 'read_resource', uri: 'demo://resource/dynamic/text/1' }],
    ['read_blob', { op: 'read_resource', uri: 'demo://resource/dynamic/blob/2' }],
    ['prompts', { op: 'list_prompts' }],
    ['simple_prompt', { op: 'get_prompt', name: 'simple-prompt' }],
    ['args_prompt', { op: 'get_prompt', name: 'args-prompt', args: { city: 'Paris', state: 'Texas' } }],
    ['sample', { op: 'call_tool', name: 'trigger-sampling-request', args: { prompt: 'libmcp interop', maxTokens: 20 } }],
    ['elicit', { op: 'call_tool', name: 'trigger-elicitation-request', args: {} }],
    ['roots', { op: 'call_tool', name: 'get-roots-list', args: {} }],
    ['ping', { op: 'ping' }],
];

function everythingTests(getRun) {
    test('connects and lists the tools, those for sampling and elicitation included', () => {
        const run = getRun();
        assert.equal(run.connect.serverInfo.name, 'mcp-servers/everything');
        const tools = names(ok(run, 'tools').result);
        for (const n of ['echo', 'get-sum', 'trigger-sampling-request', 'trigger-elicitation-request'])
            assert.ok(tools.includes(n), `tools: ${tools}`);
    });

    test('calls tools', () => {
        const run = getRun();
        assert.deepEqual(texts(ok(run, 'echo').result), ['Echo: hello from libmcp']);
        assert.match(texts(ok(run, 'sum').result).join('\n'), /\b5\b/);
    });

    test('lists resources and templates, and reads a text and a blob resource', () => {
        const run = getRun();
        assert.ok(ok(run, 'resources').result.resources.length > 0);
        const templates = ok(run, 'templates').result.resourceTemplates.map((t) => t.uriTemplate);
        assert.ok(templates.includes('demo://resource/dynamic/text/{resourceId}'), `templates: ${templates}`);
        const [text] = ok(run, 'read_text').result.contents;
        assert.equal(text.uri, 'demo://resource/dynamic/text/1');
        assert.match(text.text, /^Resource 1: This is a plaintext resource/);
        const [blob] = ok(run, 'read_blob').result.contents;
        assert.equal(blob.uri, 'demo://resource/dynamic/blob/2');
        assert.match(Buffer.from(blob.blob, 'base64').toString(), /^Resource 2: This is a base64 blob/);
    });

    test('lists and gets prompts', () => {
        const run = getRun();
        const prompts = names(ok(run, 'prompts').result.prompts);
        for (const n of ['simple-prompt', 'args-prompt']) assert.ok(prompts.includes(n), `prompts: ${prompts}`);
        assert.deepEqual(ok(run, 'simple_prompt').result.messages, [
            { role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } },
        ]);
        assert.deepEqual(ok(run, 'args_prompt').result.messages, [
            { role: 'user', content: { type: 'text', text: "What's weather in Paris, Texas?" } },
        ]);
    });

    test('answers sampling, and the server gets the answer', () => {
        const line = ok(getRun(), 'sample');
        assert.equal(line.sampling.length, 1, 'one sampling request during the call');
        assert.equal(line.sampling[0].maxTokens, 20);
        assert.equal(line.sampling[0].messages[0].content.text, 'Resource trigger-sampling-request context: libmcp interop');
        const [text] = texts(line.result);
        const prefix = 'LLM sampling result: \n';
        assert.ok(text.startsWith(prefix), text);
        assert.deepEqual(JSON.parse(text.slice(prefix.length)), SAMPLING_ANSWER);
    });

    test('answers elicitation with the schema defaults filled in, and the server gets the answer', () => {
        const line = ok(getRun(), 'elicit');
        assert.equal(line.elicitation.length, 1, 'one elicitation request during the call');
        assert.deepEqual(line.elicitation[0].requestedSchema.required, ['name']);
        const all = texts(line.result);
        assert.ok(all.some((t) => t.includes('- Name: libmcp interop')), JSON.stringify(all));
        const raw = all.find((t) => t.startsWith('\nRaw result: '));
        assert.ok(raw, JSON.stringify(all));
        const answer = JSON.parse(raw.slice('\nRaw result: '.length));
        assert.equal(answer.action, 'accept');
        assert.equal(answer.content.name, 'libmcp interop');
        assert.equal(answer.content.firstLine, 'It was a dark and stormy night.', 'a default filled in');
        assert.equal(answer.content.integer, 42, 'a default filled in');
    });

    test('answers roots/list, which the server sends on its own', () => {
        const [text] = texts(ok(getRun(), 'roots').result);
        assert.match(text, /^Current MCP Roots \(1 total\)/);
        assert.ok(text.includes(`1. ${ROOTS[0].name}\n   URI: ${ROOTS[0].uri}`), text);
    });

    test('pings', () => {
        ok(getRun(), 'ping');
    });
}

describe('server-everything, Streamable HTTP', () => {
    let server;
    let run;
    before(async () => {
        server = await startEverythingPackage('streamableHttp');
        run = await runDriver(`${server.base}/mcp`, EVERYTHING_STEPS);
    });
    after(async () => {
        if (server) await server.stop();
    });
    everythingTests(() => run);
});

describe('server-everything, HTTP+SSE (2024-11-05)', () => {
    let server;
    let run;
    before(async () => {
        server = await startEverythingPackage('sse');
        run = await runDriver(`${server.base}/sse`, EVERYTHING_STEPS, { httpSse: true });
    });
    after(async () => {
        if (server) await server.stop();
    });
    everythingTests(() => run);

    test('a Streamable HTTP connect to the SSE endpoint falls back to HTTP+SSE', async () => {
        const fallback = await runDriver(`${server.base}/sse`, EVERYTHING_STEPS.slice(0, 2));
        assert.equal(fallback.connect.serverInfo.name, 'mcp-servers/everything');
        assert.deepEqual(texts(ok(fallback, 'echo').result), ['Echo: hello from libmcp']);
    });
});
