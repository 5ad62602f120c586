// Interop: the TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0, default legacy mode)
// declares roots and connects through mcp-gateway to a stdio server that asks for them the moment
// notifications/initialized comes (tests/integration/server_gateway_peer.c with
// --roots-on-initialized 1, as @modelcontextprotocol/server-filesystem does). The client opens
// its standalone GET only after that notification's 202, so the request is sent before any
// stream can carry it: the gateway holds it for the session's first GET (MCP__OUTBOX_WAIT_MS)
// and delivers it there. Five sessions, each with a server process of its own: every one gets
// the client's roots (the request used to be dropped, then timed out in the server, in 5 of 5).
//
// Run by CTest as `node gateway_roots_first_get.test.mjs` in tests/interop with MCP_BIN_DIR set to
// the build's bin directory. Exit code 0 means every check passed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { ROOTS } from './lib/everything.mjs';
import { deadline, overallDeadline, startListening } from './lib/http.mjs';

overallDeadline(120_000);

const RUNS = 5;
const WAIT_MS = 10_000; // the gateway's wait for a first GET: a run must not need it
const binDir = process.env.MCP_BIN_DIR;
assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
const GATEWAY = path.join(binDir, 'mcp-gateway');
const PEER = path.join(binDir, 'server_gateway_peer');
for (const exe of [GATEWAY, PEER]) assert.ok(existsSync(exe), `${exe} does not exist`);

const LISTEN_RE = /^mcp-gateway: listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/;
let gw;
const clients = [];

before(async () => {
    gw = await startListening(
        'mcp-gateway',
        GATEWAY,
        ['--http', '127.0.0.1:0', '--log-level', 'warning', '--', PEER, '--roots-on-initialized', '1'],
        LISTEN_RE,
        { ms: 15_000 },
    );
});

after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (gw) {
        const { code, signal } = await gw.stop(15_000);
        assert.equal(signal, null, 'the gateway exits by itself on SIGTERM');
        assert.equal(code, 0, 'the gateway exits 0 on SIGTERM');
    }
});

// Resolves once the gateway's stderr (the children's too) has count occurrences of text.
function stderrHas(text, count, ms) {
    const seen = () => gw.stderr().split(text).length - 1 >= count;
    if (seen()) return Promise.resolve();
    let on;
    return deadline(
        new Promise((resolve) => {
            on = () => {
                if (seen()) resolve();
            };
            gw.child.stderr.on('data', on);
        }),
        ms,
        `${count} × "${text}" on the gateway's stderr`,
    ).finally(() => gw.child.stderr.off('data', on));
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test(`a roots/list sent on notifications/initialized reaches the v2 client, ${RUNS} of ${RUNS}`, async () => {
    const delivered = [];
    const lost = [];
    for (let run = 1; run <= RUNS; run++) {
        const asked = [];
        const client = new Client({ name: 'libmcp-gateway-roots', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
        client.setRequestHandler('roots/list', async (req) => {
            asked.push(req);
            return { roots: ROOTS };
        });
        const t0 = Date.now();
        await client.connect(new StreamableHTTPClientTransport(new URL(gw.match[1])));
        clients.push(client);
        // The server writes each answer to stderr as it gets it: well within the gateway's
        // wait, since the client opens its GET at once.
        try {
            await stderrHas('peer: early-1 answer:', delivered.length + 1, WAIT_MS / 2);
        } catch (e) {
            lost.push(`run ${run}: ${e.message}`);
            await client.close();
            continue;
        }
        const ms = Date.now() - t0;
        assert.equal(asked.length, 1, `run ${run}: the client's roots/list handler ran once`);
        const r = await client.callTool({ name: 'early', arguments: {} });
        const sorted = ROOTS.map((x) => Object.fromEntries(Object.entries(x).sort()));
        assert.equal(text(r), `early-1 answer:${JSON.stringify({ roots: sorted })}`, `run ${run}: the server got the client's roots`);
        delivered.push(ms);
        await client.close();
    }
    console.log(`delivered ${delivered.length} of ${RUNS}; ms from connect to the server's answer: ${delivered.join(', ')}`);
    assert.deepEqual(lost, [], `delivered ${delivered.length} of ${RUNS}`);
});
