// A cluster for the node.js tests and the conformance runs: N mcp-everything (or mcp-gateway) nodes on free
// loopback ports, a real HAProxy in front of them that balances every request on its own (round
// robin, no stickiness: tests/cluster/haproxy.cfg, the same configuration as the C tests'
// tests/integration/cluster_host.c), and, when asked for, a real redis-server that the nodes
// share (`--redis redis://127.0.0.1:PORT`).
//
// Each answer through the balancer names its node in the header X-Mcp-Node ("node0", ...), and
// HAProxy writes one line per request (cluster.requests()), so a test can tell which node served
// which request. Every process runs under `setpriv --pdeathsig KILL` where util-linux has it, and
// an exit handler kills whatever is left, so nothing outlives the test.
//
// As a program, for tests/conformance/run-server.sh:
//
//   node cluster.mjs [--nodes N] [--no-redis] [--program mcp-gateway] [--state-key] [--]
//                    [flags for every node...]
//
// --program names the program every node runs (default mcp-everything); --state-key gives every
// node `--state-key-file` with one random key, so that they open each other's requestState, and
// puts that file's path for @STATE_KEY_FILE@ in the node flags (for a gateway's children).
//
// starts the cluster (MCP_BIN_DIR names the build's bin directory), prints
// "mcp-cluster: listening on http://127.0.0.1:PORT/mcp" on stderr once every node answers through
// the balancer, and on SIGTERM or SIGINT stops everything and exits 0 only if every node exited 0
// on its SIGTERM. The nodes' and HAProxy's output goes to its stderr.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { deadline } from './http.mjs';

const TEMPLATE = fileURLToPath(new URL('../../cluster/haproxy.cfg', import.meta.url));
const SETPRIV = '/usr/bin/setpriv';
const HAPROXY = '/usr/sbin/haproxy';
const REDIS = '/usr/bin/redis-server';
const START_MS = 15_000;
const STOP_MS = 15_000;

// Every process any cluster of this process runs, killed when it exits.
const everyone = new Set();
process.once('exit', () => {
    for (const child of everyone) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

// A port the kernel had free on 127.0.0.1 a moment ago.
export function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

// The balancer's configuration: the template with the port and one server line per node (comment
// lines kept as they are: they name the placeholders too).
export function haproxyConfig(lbPort, nodePorts) {
    return readFileSync(TEMPLATE, 'utf8')
        .split('\n')
        .map((line) => {
            const text = line.trimStart();
            if (text.startsWith('#')) return line;
            if (text.startsWith('@SERVERS@')) return nodePorts.map((p, i) => `    server node${i} 127.0.0.1:${p}`).join('\n');
            return line.replaceAll('@LB_PORT@', String(lbPort));
        })
        .join('\n');
}

// A process with its stdout and stderr kept (and copied to ours with a prefix unless quiet).
// ready(re, ms) resolves with the match once a line matches re, rejects when it exits first or
// after ms. stop(signal, ms) resolves with {code, signal, killed} once it exited, SIGKILL after ms.
class Proc {
    constructor(name, exe, args, { quiet = false } = {}) {
        const pdeath = existsSync(SETPRIV);
        this.name = name;
        this.output = '';
        this.lines = [];
        this.waiters = new Set();
        this.child = spawn(pdeath ? SETPRIV : exe, pdeath ? ['--pdeathsig', 'KILL', '--', exe, ...args] : args, {
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        everyone.add(this.child);
        this.exited = new Promise((resolve) =>
            this.child.once('exit', (code, signal) => {
                everyone.delete(this.child);
                resolve({ code, signal });
                for (const w of this.waiters) w();
            }),
        );
        this.child.once('error', () => {});
        for (const stream of [this.child.stdout, this.child.stderr]) {
            let pending = '';
            stream.setEncoding('utf8');
            stream.on('data', (chunk) => {
                this.output += chunk;
                pending += chunk;
                let nl;
                while ((nl = pending.indexOf('\n')) >= 0) {
                    const line = pending.slice(0, nl).replace(/\r$/, '');
                    pending = pending.slice(nl + 1);
                    this.lines.push(line);
                    if (!quiet) process.stderr.write(`${name}: ${line}\n`);
                }
                for (const w of this.waiters) w();
            });
        }
    }
    get alive() {
        return this.child.exitCode === null && this.child.signalCode === null;
    }
    // Resolves with the first result of test(lines) that is not undefined.
    until(test, ms, what) {
        return new Promise((resolve, reject) => {
            const check = () => {
                const r = test(this.lines);
                if (r !== undefined) {
                    done();
                    resolve(r);
                } else if (!this.alive) {
                    done();
                    reject(new Error(`${this.name} exited before ${what}; its output:\n${this.output}`));
                }
            };
            const timer = setTimeout(() => {
                done();
                reject(new Error(`${this.name}: no ${what} within ${ms} ms; its output:\n${this.output}`));
            }, ms);
            const done = () => {
                clearTimeout(timer);
                this.waiters.delete(check);
            };
            this.waiters.add(check);
            check();
        });
    }
    ready(re, ms, what) {
        return this.until(
            (lines) => {
                for (const l of lines) {
                    const m = re.exec(l);
                    if (m) return m;
                }
                return undefined;
            },
            ms,
            what,
        );
    }
    async stop(signal = 'SIGTERM', ms = STOP_MS) {
        if (this.alive) this.child.kill(signal);
        try {
            return { ...(await deadline(this.exited, ms, `${this.name} to exit`)), killed: false };
        } catch {
            this.child.kill('SIGKILL');
            return { ...(await this.exited), killed: true };
        }
    }
}

// GET path on one kept-alive connection to port: resolves with {status, headers, body}.
function get(agent, port, pathname, ms) {
    return new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: pathname, agent, timeout: ms }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
            res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`GET ${pathname} on port ${port}: no answer within ${ms} ms`)));
        req.on('error', reject);
    });
}

const nodeIndex = (name) => (/^node(\d+)$/.exec(name ?? '') ? Number(name.slice(4)) : -1);
// The node that answered through the balancer, from a Headers object or a node http headers object.
export const servedBy = (headers) => nodeIndex(typeof headers?.get === 'function' ? headers.get('x-mcp-node') : headers?.['x-mcp-node']);

class Cluster {
    constructor({ nodes, redis, nodeArgs, binDir, quiet, program, stateKey }) {
        this.n = nodes;
        this.program = program;
        this.stateKey = stateKey;
        this.keyDir = undefined;
        this.redisMode = redis;
        this.nodeArgs = nodeArgs;
        this.binDir = binDir;
        this.quiet = quiet;
        this.nodes = [];
        this.redis = undefined;
        this.redisPort = undefined;
        this.lb = undefined;
        this.lbPort = undefined;
        this.url = undefined;
        this.config = undefined;
    }

    get redisUrl() {
        return this.redisPort ? `redis://127.0.0.1:${this.redisPort}` : '';
    }

    async startRedis(port) {
        const p = new Proc('redis', REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', ''], {
            quiet: true,
        });
        try {
            await p.ready(/Ready to accept connections/, START_MS, 'ready line');
        } catch (e) {
            await p.stop('SIGKILL');
            throw e;
        }
        this.redis = p;
        this.redisPort = port;
    }

    async startNode(i, port) {
        const exe = path.join(this.binDir ?? '', this.program);
        if (!this.binDir || !existsSync(exe)) throw new Error(`${exe} does not exist (set MCP_BIN_DIR)`);
        const args = ['--http', `127.0.0.1:${port}`];
        if (this.redisMode === 'shared') args.push('--redis', this.redisUrl);
        if (this.stateKey) {
            if (!this.keyDir) {
                this.keyDir = mkdtempSync(path.join(os.tmpdir(), 'mcp-key-'));
                writeFileSync(path.join(this.keyDir, 'state.key'), randomBytes(32).toString('hex'), { mode: 0o600 });
            }
            args.push('--state-key-file', path.join(this.keyDir, 'state.key'));
        }
        // The key's path where a node's own arguments ask for it (a gateway's child's flags).
        args.push(...this.nodeArgs.map((a) => (this.keyDir ? a.replaceAll('@STATE_KEY_FILE@', path.join(this.keyDir, 'state.key')) : a)));
        const p = new Proc(`node${i}`, exe, args, { quiet: this.quiet });
        let m;
        try {
            const listening = new RegExp(`^${this.program}: listening on http://127\\.0\\.0\\.1:(\\d+)/mcp$`);
            m = await p.ready(listening, START_MS, 'listening line');
        } catch (e) {
            await p.stop('SIGKILL');
            throw e;
        }
        if (port !== 0 && Number(m[1]) !== port) throw new Error(`node${i} listens on ${m[1]}, not ${port}`);
        this.nodes[i] = { proc: p, port: Number(m[1]), url: `http://127.0.0.1:${m[1]}/mcp` };
    }

    async startLb() {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-lb-'));
        try {
            let lastError;
            // The port may be taken between choosing it and HAProxy binding it: then another.
            for (let attempt = 0; attempt < 5; attempt++) {
                const port = await freePort();
                this.config = haproxyConfig(
                    port,
                    this.nodes.map((n) => n.port),
                );
                const file = path.join(dir, 'haproxy.cfg');
                writeFileSync(file, this.config);
                // -W: master and worker, so that "Loading success." says when the worker runs; -db:
                // in the foreground, logging on stderr. The request lines are kept, not copied.
                const p = new Proc('haproxy', HAPROXY, ['-W', '-db', '-f', file], { quiet: true });
                try {
                    await p.ready(/Loading success\./, START_MS, '"Loading success."');
                } catch (e) {
                    lastError = e;
                    await p.stop('SIGKILL');
                    continue;
                }
                this.lb = p;
                this.lbPort = port;
                this.url = `http://127.0.0.1:${port}/mcp`;
                const w = /New worker \((\d+)\) forked/.exec(p.output);
                this.lbWorker = w ? Number(w[1]) : undefined;
                return;
            }
            throw lastError;
        } finally {
            // HAProxy read its file at start and never reloads here.
            rmSync(dir, { recursive: true, force: true });
        }
    }

    // Each node answers through the balancer: as many GET /healthz on one connection as there are
    // nodes, each answered 200 by another node.
    async probe() {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        try {
            const seen = new Set();
            for (let k = 0; k < this.n; k++) {
                const r = await get(agent, this.lbPort, '/healthz', 5000);
                const node = servedBy(r.headers);
                if (r.status !== 200 || node < 0 || seen.has(node))
                    throw new Error(`probe ${k} through haproxy: HTTP ${r.status} from ${r.headers['x-mcp-node'] ?? 'no node'}`);
                seen.add(node);
            }
        } finally {
            agent.destroy();
        }
    }

    async start() {
        if (this.redisMode !== 'none') {
            let lastError;
            for (let attempt = 0; attempt < 5 && !this.redis; attempt++) {
                try {
                    await this.startRedis(await freePort());
                } catch (e) {
                    lastError = e;
                }
            }
            if (!this.redis) throw lastError;
        }
        for (let i = 0; i < this.n; i++) await this.startNode(i, 0);
        await this.startLb();
        await this.probe();
    }

    nodeUrl(i) {
        return this.nodes[i].url;
    }

    // SIGKILL to node i; resolves once it is gone.
    async killNode(i) {
        this.nodes[i].killed = true;
        await this.nodes[i].proc.stop('SIGKILL');
    }

    // Starts node i again on its port.
    async restartNode(i) {
        if (this.nodes[i].proc.alive) throw new Error(`node${i} is still running`);
        await this.startNode(i, this.nodes[i].port);
    }

    async stopRedis() {
        const r = await this.redis.stop('SIGTERM');
        this.redis = undefined;
        return r;
    }

    async startRedisAgain() {
        await this.startRedis(this.redisPort);
    }

    // The requests HAProxy logged, oldest first: {node, method, path, status, session, lastEventId}.
    requests() {
        const out = [];
        for (const line of this.lb?.lines ?? []) {
            const f = line.split(' ');
            if (f[0] !== 'mcp-lb' || f.length !== 7) continue;
            const opt = (v) => (v === '-' ? undefined : v);
            out.push({ node: nodeIndex(f[1]), method: f[2], path: f[3], status: Number(f[4]), session: opt(f[5]), lastEventId: opt(f[6]) });
        }
        return out;
    }

    // Resolves once HAProxy has logged at least count requests.
    waitRequests(count, ms = 5000) {
        return this.lb.until((lines) => (lines.filter((l) => l.startsWith('mcp-lb ')).length >= count ? true : undefined), ms, `${count} request lines`);
    }

    // Stops everything: HAProxy, then each node (SIGTERM: it must exit 0), then Redis. Resolves with
    // the problems found (empty when every node exited 0 by itself); nothing is left running.
    async stop() {
        const problems = [];
        if (this.lb) {
            const r = await this.lb.stop('SIGTERM');
            if (r.killed) problems.push(`haproxy did not exit within ${STOP_MS} ms of SIGTERM`);
        }
        for (const [i, n] of this.nodes.entries()) {
            if (!n) continue;
            if (!n.proc.alive) {
                // Killed by the test, or dead by itself: only the latter is a problem.
                const r = await n.proc.exited;
                if (!n.killed) problems.push(`node${i} had exited (${r.signal ?? `status ${r.code}`}) before it was stopped`);
                continue;
            }
            const r = await n.proc.stop('SIGTERM');
            if (r.killed) problems.push(`node${i} did not exit within ${STOP_MS} ms of SIGTERM (killed)`);
            else if (r.code !== 0) problems.push(`node${i} exited with ${r.signal ?? `status ${r.code}`} after SIGTERM`);
        }
        if (this.redis) await this.redis.stop('SIGTERM');
        this.redis = undefined;
        if (this.keyDir) rmSync(this.keyDir, { recursive: true, force: true });
        this.keyDir = undefined;
        return problems;
    }
}

// Starts a cluster: nodes (1..), redis 'none' | 'shared' (every node gets --redis) | 'alone' (a
// redis-server the nodes are not told about), nodeArgs for every node, binDir (default
// $MCP_BIN_DIR), quiet (do not copy the nodes' output to our stderr), program (what each node
// runs), stateKey (one random --state-key-file for every node). Rejects with nothing left running.
export async function startCluster({
    nodes = 3,
    redis = 'shared',
    nodeArgs = [],
    binDir = process.env.MCP_BIN_DIR,
    quiet = false,
    program = 'mcp-everything',
    stateKey = false,
} = {}) {
    const c = new Cluster({ nodes, redis, nodeArgs, binDir, quiet, program, stateKey });
    try {
        await c.start();
    } catch (e) {
        await c.stop();
        throw e;
    }
    return c;
}

// ---- As a program ----------------------------------------------------------------------------

async function main(argv) {
    let nodes = 3;
    let redis = 'shared';
    let program = 'mcp-everything';
    let stateKey = false;
    const nodeArgs = [];
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--nodes') nodes = Number(argv[++i]);
        else if (argv[i] === '--no-redis') redis = 'none';
        else if (argv[i] === '--program') program = argv[++i];
        else if (argv[i] === '--state-key') stateKey = true;
        else if (argv[i] === '--') {
            nodeArgs.push(...argv.slice(i + 1));
            break;
        } else nodeArgs.push(argv[i]);
    }
    if (!Number.isInteger(nodes) || nodes < 1 || !/^mcp-(everything|gateway)$/.test(program ?? '')) {
        console.error('usage: cluster.mjs [--nodes N] [--no-redis] [--program mcp-gateway] [--state-key] [--] [flags for every node...]');
        process.exit(2);
    }
    let cluster;
    let stopping = false;
    const stop = async (why) => {
        if (stopping) return;
        stopping = true;
        const problems = cluster ? await cluster.stop() : [];
        if (cluster) {
            // How the requests were spread: per node, and how many sessions used several nodes.
            const reqs = cluster.requests();
            const per = Array.from({ length: nodes }, (_, i) => reqs.filter((r) => r.node === i).length);
            const bySession = new Map();
            for (const r of reqs) if (r.session) bySession.set(r.session, (bySession.get(r.session) ?? new Set()).add(r.node));
            const spread = [...bySession.values()].filter((s) => s.size > 1).length;
            console.error(
                `mcp-cluster: ${reqs.length} requests through haproxy, per node: ${per.join(', ')}; ` +
                    `${spread} of ${bySession.size} sessions were served by more than one node`,
            );
        }
        for (const p of problems) console.error(`mcp-cluster: ${p}`);
        console.error(`mcp-cluster: stopped (${why})`);
        process.exit(problems.length ? 1 : 0);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    try {
        cluster = await startCluster({ nodes, redis, nodeArgs, program, stateKey });
    } catch (e) {
        console.error(`mcp-cluster: ${e.message}`);
        process.exit(1);
    }
    if (stopping) return;
    console.error(`mcp-cluster: ${nodes} node(s)${redis === 'shared' ? ` sharing ${cluster.redisUrl}` : ', no Redis'} behind haproxy`);
    console.error(`mcp-cluster: listening on ${cluster.url}`);
    // Watch the nodes: one that dies is reported at once (the run will fail on its status).
    for (const [i, n] of cluster.nodes.entries())
        n.proc.exited.then(({ code, signal }) => {
            if (!stopping) console.error(`mcp-cluster: node${i} exited (${signal ?? `status ${code}`}) while serving`);
        });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    main(process.argv.slice(2));
}
