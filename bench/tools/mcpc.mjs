// Small MCP client for the benchmarks that wrk cannot drive. Node built-ins only,
// so the same client measures both servers.
//
//   node mcpc.mjs sessions URL N [--get]     create N initialized sessions (8 at a time);
//                                            --get: also open a standalone GET stream on
//                                            each and hold it. Prints "READY <n>" when all
//                                            are up, then (with --get) waits until killed.
//   node mcpc.mjs notify URL COUNT RUNS      RUNS sequential tools/call notify {count}
//                                            on one session, each read to its last byte.
//   node mcpc.mjs resume URL COUNT RUNS PID [STATS_URL]
//                                            store COUNT events (notify, read in full),
//                                            then RUNS times: GET with Last-Event-ID = the
//                                            stream's first (priming) id, timed to the
//                                            final result. PID: the server, for RSS.
//
// Every result line starts with "BENCH " and holds key=value pairs for bench/run.
// Every wait has a deadline: a stuck server makes this exit non-zero, not hang.
import http from 'node:http';
import { readFileSync } from 'node:fs';

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

function rssBytes(pid) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (!m) fail(`no VmRSS for pid ${pid}`);
    return Number(m[1]) * 1024;
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

// Counts SSE data lines that are notifications and spots the final result of request `id`.
function sseCounter(id) {
    let tail = '';
    const st = { notes: 0, result: false, events: 0, firstId: null };
    const marker = `"id":${id}`;
    st.feed = c => {
        const text = tail + c.toString('utf8');
        const lines = text.split('\n');
        tail = lines.pop();
        for (const line of lines) {
            if (line.startsWith('id: ') || line.startsWith('id:')) {
                if (st.firstId === null) st.firstId = line.slice(3).trim();
            } else if (line.startsWith('data:')) {
                st.events++;
                if (line.includes('notifications/message')) st.notes++;
                else if (line.includes(marker) && line.includes('"result"')) st.result = true;
            }
        }
        return st;
    };
    return st;
}

async function notifyOnce(url, h, id, count) {
    const st = sseCounter(id);
    const t0 = process.hrtime.bigint();
    const r = await request(url, {
        headers: h, keep: false,
        body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notify', arguments: { count } } },
        onData: c => { st.feed(c); return st.result && st.notes >= count; }
    });
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.status !== 200 || !st.result || st.notes !== count)
        fail(`notify: status ${r.status}, ${st.notes}/${count} notifications, result ${st.result}`);
    return { secs, firstId: st.firstId };
}

function median(a) {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.floor(s.length / 2)];
}

async function cmdNotify(url, count, runs) {
    const h = await newSession(url);
    let id = 100;
    for (let i = 0; i < 3; i++) await notifyOnce(url, h, id++, count); // warm-up
    const times = [];
    for (let i = 0; i < runs; i++) times.push((await notifyOnce(url, h, id++, count)).secs);
    const total = times.reduce((a, b) => a + b, 0);
    report({ count, runs, median_ms: (median(times) * 1e3).toFixed(3),
             notes_per_s: Math.round(count * runs / total) });
}

async function cmdResume(url, count, runs, pid, statsUrl) {
    const h = await newSession(url);
    const gc = async () => { if (statsUrl) await request(statsUrl + '?gc', { method: 'GET', useAgent: false }); };
    await gc();
    const before = rssBytes(pid);
    const { secs: storeSecs, firstId } = await notifyOnce(url, h, 7, count);
    if (!firstId) fail('resume: the notify stream carried no event id (is resumability on?)');
    await gc();
    const after = rssBytes(pid);
    const times = [];
    for (let i = 0; i < runs; i++) {
        const st = sseCounter(7);
        const t0 = process.hrtime.bigint();
        const r = await request(url, {
            method: 'GET', headers: { ...h, 'Last-Event-ID': firstId }, keep: false,
            onData: c => { st.feed(c); return st.result && st.notes >= count; }
        });
        const secs = Number(process.hrtime.bigint() - t0) / 1e9;
        if (r.status !== 200 || !st.result || st.notes !== count)
            fail(`resume: status ${r.status}, ${st.notes}/${count} notifications replayed, result ${st.result}`);
        times.push(secs);
    }
    report({ count, runs, store_ms: (storeSecs * 1e3).toFixed(1), replay_median_ms: (median(times) * 1e3).toFixed(3),
             replay_min_ms: (Math.min(...times) * 1e3).toFixed(3),
             rss_delta: after - before, bytes_per_event: Math.round((after - before) / count) });
    agent.destroy();
}

const [cmd, ...rest] = process.argv.slice(2);
const watchdog = setTimeout(() => fail('overall deadline passed'), 900000);
watchdog.unref();
try {
    if (cmd === 'sessions') await cmdSessions(rest[0], Number(rest[1]), rest.includes('--get'));
    else if (cmd === 'notify') await cmdNotify(rest[0], Number(rest[1]), Number(rest[2]));
    else if (cmd === 'resume') await cmdResume(rest[0], Number(rest[1]), Number(rest[2]), Number(rest[3]), rest[4]);
    else fail('usage: mcpc.mjs sessions|notify|resume ...');
} catch (e) {
    fail(e.stack || String(e));
}
