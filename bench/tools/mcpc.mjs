// Small MCP client for the benchmarks that wrk cannot drive. Node built-ins only,
// so the same client measures both servers.
//
//   node mcpc.mjs sessions URL N [--get]     create N initialized sessions (8 at a time);
//                                            --get: also open a standalone GET stream on
//                                            each and hold it. Prints "READY <n>" when all
//                                            are up, then (with --get) waits until killed.
//
// Every result line starts with "BENCH " and holds key=value pairs for bench/run.
// Every wait has a deadline: a stuck server makes this exit non-zero, not hang.
import http from 'node:http';

const PROTO = '2025-11-25';
const DEADLINE_MS = 60000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function fail(msg) {
    console.error(`mcpc: ${msg}`);
    process.exit(1);
}

function report(fields) {
    console.log('BENCH ' + Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(' '));
}

// One HTTP request; onData (optional) sees each body chunk and may return true to stop
// reading (the request is then destroyed). Resolves {status, headers, body, stopped}.
function request(url, { method = 'POST', headers = {}, body, onData, keep = true, useAgent = agent } = {}) {
    return new Promise((resolve, reject) => {
        const u = new URL(url);
        const req = http.request({
            host: u.hostname, port: u.port, path: u.pathname + u.search, method,
            agent: useAgent,
            headers: {
                'Content-Type': 'application/json',
                'Accept': method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
                ...headers
            }
        }, res => {
            const chunks = [];
            let done = false;
            res.on('data', c => {
                if (done) return;
                if (keep) chunks.push(c);
                if (onData && onData(c)) {
                    done = true;
                    resolve({ status: res.statusCode, headers: res.headers,
                              body: Buffer.concat(chunks).toString('utf8'), stopped: true });
                    req.destroy();
                }
            });
            res.on('end', () => {
                if (!done) resolve({ status: res.statusCode, headers: res.headers,
                                     body: Buffer.concat(chunks).toString('utf8'), stopped: false });
            });
            res.on('error', e => { if (!done) reject(e); });
        });
        req.setTimeout(DEADLINE_MS, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
        req.on('error', reject);
        if (body !== undefined) req.write(typeof body === 'string' ? body : JSON.stringify(body));
        req.end();
    });
}

async function newSession(url) {
    const r = await request(url, {
        body: { jsonrpc: '2.0', id: 1, method: 'initialize',
                params: { protocolVersion: PROTO, capabilities: {}, clientInfo: { name: 'mcpc', version: '0' } } }
    });
    const sid = r.headers['mcp-session-id'];
    if (r.status !== 200 || !sid) fail(`initialize: status ${r.status}, body ${r.body.slice(0, 200)}`);
    const h = { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTO };
    const n = await request(url, { headers: h, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    if (n.status !== 202) fail(`notifications/initialized: status ${n.status}`);
    return h;
}

// Opens a standalone GET stream on its own connection and resolves once the 200
// headers are in; the response stays open.
function openGet(url, h) {
    return new Promise((resolve, reject) => {
        const u = new URL(url);
        const req = http.request({
            host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent: false,
            headers: { 'Accept': 'text/event-stream', ...h }
        }, res => {
            if (res.statusCode !== 200) reject(new Error(`GET stream: status ${res.statusCode}`));
            res.on('data', () => {});
            resolve(req);
        });
        req.setTimeout(DEADLINE_MS, () => req.destroy(new Error('GET stream: timeout')));
        req.on('error', reject);
        req.end();
    });
}

async function cmdSessions(url, n, withGet) {
    const held = [];
    let next = 0;
    const t0 = process.hrtime.bigint();
    async function worker() {
        while (next < n) {
            next++;
            const h = await newSession(url);
            if (withGet) held.push(await openGet(url, h));
        }
    }
    await Promise.all(Array.from({ length: 8 }, worker));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    agent.destroy();
    report({ sessions: n, get_streams: held.length, seconds: secs.toFixed(3) });
    console.log(`READY ${n}`);
    if (!withGet) return;
    // Hold the streams until bench/run kills us (with a deadline of our own).
    setTimeout(() => process.exit(0), 600000);
}

const [cmd, ...rest] = process.argv.slice(2);
const watchdog = setTimeout(() => fail('overall deadline passed'), 900000);
watchdog.unref();
try {
    if (cmd === 'sessions') await cmdSessions(rest[0], Number(rest[1]), rest.includes('--get'));
    else fail('usage: mcpc.mjs sessions URL N [--get]');
} catch (e) {
    fail(e.stack || String(e));
}
