// Interop: our `mcp` command-line client against the official TypeScript "everything" server
// (npm @modelcontextprotocol/server-everything, pinned in package-lock.json) over stdio.
//
// Run by CTest as `node mcp_cli_server_everything.test.mjs` in tests/interop with MCP_BIN_DIR set
// to the build's bin directory. Exit code 0 means every check passed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// Bounds the whole file; each mcp run has its own, shorter, timeout as well.
const OVERALL_DEADLINE_MS = 55_000;
const overall = setTimeout(() => {
    console.error(`FAIL: overall deadline of ${OVERALL_DEADLINE_MS} ms exceeded`);
    process.exit(1);
}, OVERALL_DEADLINE_MS);
overall.unref();

const RUN_TIMEOUT_MS = 15_000; // kill an mcp run that takes longer than this
const MCP_TIMEOUT_MS = 10_000; // what mcp itself is told (--timeout)

const binDir = process.env.MCP_BIN_DIR;
assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
const MCP = path.join(binDir, 'mcp');
assert.ok(existsSync(MCP), `${MCP} does not exist`);

// The package's real entry point, from its own package.json "bin", resolved in node_modules.
const require = createRequire(import.meta.url);
const pkgJsonPath = require.resolve('@modelcontextprotocol/server-everything/package.json');
const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
const binField = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['mcp-server-everything'];
assert.ok(binField, 'server-everything package.json has a bin entry');
const ENTRY = path.join(path.dirname(pkgJsonPath), binField);
assert.ok(existsSync(ENTRY), `${ENTRY} does not exist`);
const SERVER = [process.execPath, ENTRY, 'stdio'];

// Runs `mcp [opts] -- node ENTRY stdio COMMAND...` and resolves with {code, signal, stdout, stderr}.
function mcp(command, { json = true } = {}) {
    const argv = [...(json ? ['--json'] : []), '--timeout', String(MCP_TIMEOUT_MS), '--', ...SERVER, ...command];
    return new Promise((resolve) => {
        execFile(MCP, argv, { timeout: RUN_TIMEOUT_MS, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
            const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
            resolve({ code, signal: err?.signal ?? null, killed: err?.killed ?? false, stdout, stderr, argv });
        });
    });
}

function describe(r) {
    return `mcp ${r.argv.join(' ')}\nexit=${r.code} signal=${r.signal}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

async function mcpJson(command) {
    const r = await mcp(command);
    assert.equal(r.signal, null, `killed (timeout?):\n${describe(r)}`);
    assert.equal(r.code, 0, `non-zero exit:\n${describe(r)}`);
    let v;
    assert.doesNotThrow(() => {
        v = JSON.parse(r.stdout);
    }, `stdout is not one JSON document:\n${describe(r)}`);
    return v;
}

test('tools list shows the package tools', async () => {
    const v = await mcpJson(['tools', 'list']);
    assert.ok(Array.isArray(v.tools), `no tools array: ${JSON.stringify(v).slice(0, 500)}`);
    const names = v.tools.map((t) => t.name);
    for (const n of ['echo', 'get-sum', 'get-tiny-image']) assert.ok(names.includes(n), `tools list lacks ${n}: ${names}`);
    const echo = v.tools.find((t) => t.name === 'echo');
    assert.equal(echo.inputSchema?.type, 'object');
    assert.ok(echo.inputSchema.properties?.message, 'echo takes message');
});

test('tools call echo message=hello', async () => {
    const v = await mcpJson(['tools', 'call', 'echo', 'message=hello']);
    assert.ok(Array.isArray(v.content), `no content: ${JSON.stringify(v)}`);
    assert.notEqual(v.isError, true);
    const text = v.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    assert.ok(text.includes('hello'), `echo text lacks hello: ${JSON.stringify(v)}`);
});

test('tools call get-sum a=2 b=3 sends numbers', async () => {
    // The schema says a and b are numbers, so key=value must arrive as numbers, not strings.
    const v = await mcpJson(['tools', 'call', 'get-sum', 'a=2', 'b=3']);
    assert.notEqual(v.isError, true, `get-sum failed: ${JSON.stringify(v)}`);
    const text = v.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    assert.match(text, /\b5\b/, `sum text: ${JSON.stringify(v)}`);
});

test('tools call echo without --json prints the text', async () => {
    const r = await mcp(['tools', 'call', 'echo', 'message=hello'], { json: false });
    assert.equal(r.code, 0, describe(r));
    assert.ok(r.stdout.includes('hello'), describe(r));
});

test('tools call of an unknown tool exits 1', async () => {
    const r = await mcp(['tools', 'call', 'no-such-tool-xyz']);
    assert.equal(r.signal, null, describe(r));
    assert.equal(r.code, 1, `an unknown tool is an error result or a JSON-RPC error:\n${describe(r)}`);
});

test('resources list, then read the first uri', async () => {
    const v = await mcpJson(['resources', 'list']);
    assert.ok(Array.isArray(v.resources) && v.resources.length > 0, `resources: ${JSON.stringify(v).slice(0, 500)}`);
    const first = v.resources[0];
    assert.equal(typeof first.uri, 'string');
    const r = await mcpJson(['resources', 'read', first.uri]);
    assert.ok(Array.isArray(r.contents) && r.contents.length > 0, `contents: ${JSON.stringify(r).slice(0, 500)}`);
    assert.equal(r.contents[0].uri, first.uri);
    assert.ok(typeof r.contents[0].text === 'string' || typeof r.contents[0].blob === 'string');
});

test('prompts list, then get a prompt without required arguments', async () => {
    const v = await mcpJson(['prompts', 'list']);
    assert.ok(Array.isArray(v.prompts) && v.prompts.length > 0, `prompts: ${JSON.stringify(v).slice(0, 500)}`);
    const p = v.prompts.find((x) => !(x.arguments ?? []).some((a) => a.required));
    assert.ok(p, 'a prompt without required arguments exists');
    const g = await mcpJson(['prompts', 'get', p.name]);
    assert.ok(Array.isArray(g.messages) && g.messages.length > 0, `messages: ${JSON.stringify(g).slice(0, 500)}`);
    assert.equal(typeof g.messages[0].role, 'string');
});

test('prompts get with arguments', async () => {
    const v = await mcpJson(['prompts', 'list']);
    const p = v.prompts.find((x) => (x.arguments ?? []).some((a) => a.required));
    assert.ok(p, 'a prompt with required arguments exists');
    const args = (p.arguments ?? []).filter((a) => a.required).map((a) => `${a.name}=interop-${a.name}`);
    const g = await mcpJson(['prompts', 'get', p.name, ...args]);
    const text = JSON.stringify(g.messages);
    for (const a of p.arguments.filter((x) => x.required))
        assert.ok(text.includes(`interop-${a.name}`), `prompt text carries argument ${a.name}: ${text.slice(0, 500)}`);
});

test('ping exits 0', async () => {
    const r = await mcp(['ping']);
    assert.equal(r.signal, null, describe(r));
    assert.equal(r.code, 0, describe(r));
});
