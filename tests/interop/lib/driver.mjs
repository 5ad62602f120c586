// Runs bin/interop_http_client_driver (http_client_driver.c): libmcp's client driven by a script
// of steps, one JSON line per step. Shared by our_client_http.test.mjs and
// our_client_modern.test.mjs.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { deadline, spawnDying } from './http.mjs';

const binDir = process.env.MCP_BIN_DIR;
assert.ok(binDir, 'MCP_BIN_DIR must be set to the build bin directory');
export const DRIVER = path.join(binDir, 'interop_http_client_driver');
assert.ok(existsSync(DRIVER), `${DRIVER} does not exist`);

// The canned answers the driver gives every sampling and elicitation request, and its roots.
// The elicitation leaves out every field but name: the client fills in the schema's defaults
// (SEP-1034).
export const SAMPLING_ANSWER = {
    role: 'assistant',
    content: { type: 'text', text: 'canned answer from libmcp' },
    model: 'libmcp-canned-model',
    stopReason: 'endTurn',
};
export const ELICITATION_ANSWER = { action: 'accept', content: { name: 'libmcp interop' } };
export const ROOTS = [{ uri: 'file:///tmp/libmcp-interop-root', name: 'interop root' }];

// Runs the driver with args (a URL, --http-sse and a URL, or --stdio and a command) and the
// script `fields` plus the steps, a list of [label, step], within runTimeoutMs. Resolves with
// {connect (its first line), steps: {label: line}, stderr}; the driver must exit 0, connected,
// with one line per step.
export function runDriver(args, fields, steps, runTimeoutMs) {
    const script = { ...fields, steps: steps.map(([, step]) => step) };
    const child = spawnDying(DRIVER, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    const closed = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    child.stdin.end(JSON.stringify(script));
    return deadline(closed, runTimeoutMs, `the driver with ${args.join(' ')}`)
        .catch((e) => {
            child.kill('SIGKILL');
            throw new Error(`${e.message}; its output so far:\n${stdout}\n${stderr}`);
        })
        .then(({ code, signal }) => {
            const what = `driver exit ${code} signal ${signal}\nstdout: ${stdout}\nstderr: ${stderr}`;
            assert.equal(code, 0, what);
            const lines = stdout.trim().split('\n').map((l) => JSON.parse(l));
            assert.equal(lines.length, steps.length + 1, `one line for the connect, one per step: ${what}`);
            assert.equal(lines[0].connect, 0, `connected: ${what}`);
            const byLabel = {};
            steps.forEach(([label], i) => (byLabel[label] = lines[i + 1]));
            return { connect: lines[0], steps: byLabel, stderr };
        });
}

// The line of a step that worked.
export function ok(run, label) {
    const line = run.steps[label];
    assert.ok(line, `no step ${label}`);
    assert.equal(line.status, 0, `${label} failed: ${JSON.stringify(line)}\ndriver stderr: ${run.stderr}`);
    return line;
}

export const texts = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text);
export const names = (list) => list.map((x) => x.name);
