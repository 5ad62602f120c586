// Interop: mcp-everything's app (MCP Apps, io.modelcontextprotocol/ui) as hosts see it.
//
// 1. The TypeScript SDK v2 client (2.4.0), declaring the extension with the app MIME type as a host
//    does, over Streamable HTTP in revision 2025-11-25 and 2026-07-28: the extension negotiated
//    (both sides declare it; @modelcontextprotocol/ext-apps' getUiCapability reads the client's),
//    the tool linked to its view (ext-apps' getToolUiResourceUri, both _meta forms, visibility),
//    the view listed and read with the app MIME type and _meta.ui, the tool's result; a client
//    without the extension gets the text fallback.
// 2. ext-apps' own host side, AppBridge (2.0.4), drives the view's script as read from the server
//    (its window and document emulated in Node): the view's ui/initialize is accepted, the tool's
//    input and result go to it, and it draws them.
// 3. Headless Chromium (Debian's) loads a host page that does what a host does: the view's HTML in
//    a sandboxed iframe, the handshake over postMessage, the tool's input and result; the test
//    reads the rendered result out of the page over the DevTools protocol (--remote-debugging-pipe),
//    and, with MCP_APPS_SCREENSHOT=FILE, saves a screenshot of it.
//
// Run by CTest as `node apps.test.mjs` in tests/interop with MCP_BIN_DIR set.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY, getUiCapability } from '@modelcontextprotocol/ext-apps/server';

import { deadline, overallDeadline, spawnDying, startEverything } from './lib/http.mjs';

overallDeadline(90_000);

const binDir = process.env.MCP_BIN_DIR;
const VIEW_URI = 'ui://everything/sum.html';
const UI_CAPS = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };

let server;
before(async () => {
    server = await startEverything(binDir);
});
after(async () => {
    await server?.stop();
});

async function connect(capabilities, versionNegotiation) {
    const client = new Client({ name: 'libmcp-interop-apps-host', version: '1.0.0' }, { capabilities, ...(versionNegotiation && { versionNegotiation }) });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    return client;
}

// What a host reads of the app: the tool, the view's listing and contents, a call's result.
async function readApp(client) {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'app_sum');
    const { resources } = await client.listResources();
    const listing = resources.find((r) => r.uri === VIEW_URI);
    const { contents } = await client.readResource({ uri: VIEW_URI });
    const result = await client.callTool({ name: 'app_sum', arguments: { a: 3, b: 4 } });
    return { tool, listing, contents, result };
}

for (const [era, negotiation, version] of [
    ['2025-11-25', undefined, '2025-11-25'],
    ['2026-07-28', { mode: { pin: '2026-07-28' } }, '2026-07-28'],
]) {
    describe(`a host in ${era}`, () => {
        let client;
        let app;
        before(async () => {
            client = await connect(UI_CAPS, negotiation);
            app = await readApp(client);
        });
        after(async () => {
            await client?.close();
        });

        test('the era, and the extension declared on both sides', () => {
            assert.equal(client.getNegotiatedProtocolVersion(), version);
            assert.deepEqual(client.getServerCapabilities().extensions?.[EXTENSION_ID], {});
            // What the server helper of ext-apps reads of a client's capabilities.
            assert.deepEqual(getUiCapability(UI_CAPS), { mimeTypes: [RESOURCE_MIME_TYPE] });
        });

        test('the tool is linked to its view, as ext-apps reads it', async () => {
            const { getToolUiResourceUri, isToolVisibilityAppOnly, isToolVisibilityModelOnly } = await import('@modelcontextprotocol/ext-apps/app-bridge');
            assert.equal(getToolUiResourceUri(app.tool), VIEW_URI);
            assert.deepEqual(app.tool._meta, { ui: { resourceUri: VIEW_URI, visibility: ['model', 'app'] }, [RESOURCE_URI_META_KEY]: VIEW_URI });
            assert.equal(isToolVisibilityAppOnly(app.tool), false);
            assert.equal(isToolVisibilityModelOnly(app.tool), false);
        });

        test('the view: listed and read as text/html;profile=mcp-app with _meta.ui', () => {
            const ui = { csp: { connectDomains: [] }, prefersBorder: true };
            assert.equal(app.listing.mimeType, RESOURCE_MIME_TYPE);
            assert.deepEqual(app.listing._meta, { ui });
            assert.equal(app.contents.length, 1);
            assert.equal(app.contents[0].uri, VIEW_URI);
            assert.equal(app.contents[0].mimeType, RESOURCE_MIME_TYPE);
            assert.deepEqual(app.contents[0]._meta, { ui });
            assert.match(app.contents[0].text, /^<!DOCTYPE html>/);
        });

        test('the result: text for the model, structuredContent for the view', () => {
            assert.deepEqual(app.result.content, [{ type: 'text', text: '3 + 4 = 7' }]);
            assert.deepEqual(app.result.structuredContent, { a: 3, b: 4, sum: 7 });
        });

        test('a client without the extension gets the text fallback', async () => {
            const plain = await connect({}, negotiation);
            try {
                const r = await plain.callTool({ name: 'app_sum', arguments: { a: 1, b: 2 } });
                assert.deepEqual(r.content, [{ type: 'text', text: '1 + 2 = 3 (no view: this client does not show apps)' }]);
            } finally {
                await plain.close();
            }
        });
    });
}

// The view's inline script, run with a window and a document of its own; returns the elements'
// text by id.
function runView(html, parent) {
    const script = html.match(/<script>([\s\S]*?)<\/script>/)[1];
    const target = new EventTarget();
    const els = {};
    const window = { parent, addEventListener: target.addEventListener.bind(target) };
    const document = { getElementById: (id) => (els[id] ??= { textContent: '' }) };
    vm.runInNewContext(script, { window, document, JSON, Promise, String });
    return { target, text: () => Object.fromEntries(Object.entries(els).map(([k, v]) => [k, v.textContent])) };
}

test("ext-apps' AppBridge drives the view as read from the server", async () => {
    const client = await connect(UI_CAPS);
    try {
        const { contents, result } = await readApp(client);
        // Two windows: the host's (the global one AppBridge's transport listens on) and the view's.
        const hostWin = new EventTarget();
        globalThis.window = hostWin;
        const { AppBridge, PostMessageTransport } = await import('@modelcontextprotocol/ext-apps/app-bridge');
        const deliver = (target, data, source) =>
            setTimeout(() => {
                const e = new Event('message');
                e.data = structuredClone(data);
                e.source = source;
                target.dispatchEvent(e);
            }, 0);
        let view;
        const iframeWin = { postMessage: (d) => deliver(view.target, d, parentWin) };
        const parentWin = { postMessage: (d) => deliver(hostWin, d, iframeWin) };
        const bridge = new AppBridge(null, { name: 'libmcp-test-host', version: '1.0.0' }, { serverTools: {} }, { hostContext: { theme: 'light', displayMode: 'inline' } });
        const drawn = new Promise((resolve) => {
            bridge.oninitialized = async () => {
                await bridge.sendToolInput({ arguments: { a: 3, b: 4 } });
                await bridge.sendToolResult(result);
                resolve();
            };
        });
        await bridge.connect(new PostMessageTransport(iframeWin, iframeWin));
        view = runView(contents[0].text, parentWin);
        await deadline(drawn, 10_000, 'the view to initialize');
        const t0 = Date.now();
        while (view.text().status !== 'done' && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(view.text(), { status: 'done', sum: '7', terms: '3 + 4' });
        assert.deepEqual(bridge.getAppVersion(), { name: 'everything-sum', version: '1.0.0' });
        await bridge.close?.();
    } finally {
        delete globalThis.window;
        await client.close();
    }
});

// ---- Headless Chromium ------------------------------------------------------------------------

const CHROMIUM = '/usr/bin/chromium';

// The host page: the view in a sandboxed iframe (allow-same-origin only so that the test can read
// what it drew; a real host gives it an origin of its own), the handshake, the input and result.
function hostPage(html, args, result) {
    const data = JSON.stringify({ html, args, result }).replace(/</g, '\\u003c');
    return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>libmcp test host</title></head>
<body style="font:14px sans-serif"><p>Host: the app_sum view, as an MCP Apps host shows it</p>
<iframe id="view" sandbox="allow-scripts allow-same-origin" style="width:360px;height:180px;border:1px solid #999"></iframe>
<script>
const { html, args, result } = ${data};
const frame = document.getElementById('view');
const send = (m) => frame.contentWindow.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
window.addEventListener('message', (ev) => {
  if (ev.source !== frame.contentWindow) return;
  const m = ev.data;
  if (!m || m.jsonrpc !== '2.0') return;
  if (m.method === 'ui/initialize') {
    send({ id: m.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'libmcp-test-host', version: '1.0.0' },
      hostCapabilities: {}, hostContext: { theme: 'light', displayMode: 'inline' } } });
  } else if (m.method === 'ui/notifications/initialized') {
    send({ method: 'ui/notifications/tool-input', params: { arguments: args } });
    send({ method: 'ui/notifications/tool-result', params: result });
  } else if (m.id !== undefined && m.method !== undefined) {
    send({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  }
});
frame.srcdoc = html;
</script></body></html>`;
}

// The DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL, ours on fd 3,
// Chromium's on fd 4.
function devtools(child) {
    let next = 1;
    let buf = '';
    const waiting = new Map();
    child.stdio[4].on('data', (chunk) => {
        buf += chunk.toString('utf8');
        let i;
        while ((i = buf.indexOf('\0')) >= 0) {
            const msg = JSON.parse(buf.slice(0, i));
            buf = buf.slice(i + 1);
            const w = waiting.get(msg.id);
            if (w) {
                waiting.delete(msg.id);
                if (msg.error) w.reject(new Error(JSON.stringify(msg.error)));
                else w.resolve(msg.result);
            }
        }
    });
    return (method, params = {}, sessionId) =>
        new Promise((resolve, reject) => {
            const id = next++;
            waiting.set(id, { resolve, reject });
            child.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) }) + '\0');
        });
}

test('headless Chromium renders the view in a host page', async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is needed (Debian package chromium; scripts/deps installs it)`);
    const client = await connect(UI_CAPS);
    const { contents, result } = await readApp(client);
    await client.close();
    const page = hostPage(contents[0].text, { a: 3, b: 4 }, result);
    const web = http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page);
    });
    await new Promise((r) => web.listen(0, '127.0.0.1', r));
    const profile = mkdtempSync(path.join(tmpdir(), 'libmcp-chromium-'));
    const child = spawnDying(
        CHROMIUM,
        [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--remote-debugging-pipe',
            '--window-size=480,300',
            `--user-data-dir=${profile}`,
            `http://127.0.0.1:${web.address().port}/`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
        const cdp = devtools(child);
        let pageTarget;
        for (const t0 = Date.now(); !pageTarget && Date.now() - t0 < 20_000; ) {
            const { targetInfos } = await deadline(cdp('Target.getTargets'), 20_000, 'Chromium to answer');
            pageTarget = targetInfos.find((t) => t.type === 'page' && t.url.startsWith('http://127.0.0.1'));
            if (!pageTarget) await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(pageTarget, `no page in Chromium; its stderr:\n${stderr}`);
        const { sessionId } = await cdp('Target.attachToTarget', { targetId: pageTarget.targetId, flatten: true });
        const read = `(() => { const d = document.getElementById('view')?.contentDocument;
            const t = (id) => d?.getElementById(id)?.textContent ?? null;
            return JSON.stringify({ status: t('status'), sum: t('sum'), terms: t('terms') }); })()`;
        let drawn = {};
        for (const t0 = Date.now(); drawn.status !== 'done' && Date.now() - t0 < 20_000; ) {
            const { result: r } = await cdp('Runtime.evaluate', { expression: read, returnByValue: true }, sessionId);
            drawn = JSON.parse(r.value);
            if (drawn.status !== 'done') await new Promise((res) => setTimeout(res, 50));
        }
        assert.deepEqual(drawn, { status: 'done', sum: '7', terms: '3 + 4' }, `the view drew ${JSON.stringify(drawn)}`);
        if (process.env.MCP_APPS_SCREENSHOT) {
            await cdp('Emulation.setDeviceMetricsOverride', { width: 480, height: 240, deviceScaleFactor: 1, mobile: false }, sessionId);
            const { data } = await cdp('Page.captureScreenshot', { format: 'png' }, sessionId);
            writeFileSync(process.env.MCP_APPS_SCREENSHOT, Buffer.from(data, 'base64'));
        }
        await cdp('Browser.close').catch(() => {});
        await deadline(exited, 10_000, 'Chromium to exit');
    } finally {
        child.kill('SIGKILL');
        web.close();
        rmSync(profile, { recursive: true, force: true });
    }
});
