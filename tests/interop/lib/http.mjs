// HTTP helpers for the interop tests: start a server (mcp-everything --http, or any that says
// when it listens) and record, per HTTP exchange, which messages each response carried.
//
// The SDK's transports hide which HTTP response delivered a message; the spec makes that
// matter (a request's notifications and server-to-client requests belong on its own POST
// stream, updates not tied to a request on the standalone GET stream). HttpRecorder.fetch is
// passed to the transport as its fetch: it forwards every call to the real fetch and parses a
// copy of each response body as it streams through, so it sees exactly what the SDK reads, in
// the same order.

import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';

const LISTEN_RE = /^mcp-everything: listening on (https?:\/\/127\.0\.0\.1:(\d+)\/mcp)$/;

// Starts `mcp-everything --http 127.0.0.1:0 ...extra` and resolves, once it printed its
// listening line, with {child, url, base, port, stderr(), stop()}. stop() sends SIGTERM and
// resolves with {code, signal} when it exited (rejects after ms).
export async function startEverything(binDir, extra = [], ms = 10_000) {
    const exe = path.join(binDir, 'mcp-everything');
    if (!existsSync(exe)) throw new Error(`${exe} does not exist`);
    const args = ['--http', '127.0.0.1:0', ...extra];
    const p = await startListening(`mcp-everything ${extra.join(' ')}`, exe, args, LISTEN_RE, { ms });
    const url = p.match[1];
    return { ...p, url, base: new URL(url).origin, port: Number(p.match[2]) };
}

const SETPRIV = '/usr/bin/setpriv';

// spawn(), under `setpriv --pdeathsig KILL` where util-linux has it: the program gets SIGKILL
// when this process dies (a crash, CTest's timeout), so no test leaves it behind whatever its
// outcome. The pid is the program's (setpriv execs it).
export function spawnDying(exe, args, options) {
    return existsSync(SETPRIV) ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', exe, ...args], options) : spawn(exe, args, options);
}

// Spawns exe with args (env: its environment, the default ours) and resolves, once a line it
// wrote on stdout or stderr matches re, with {child, match (re's match), output() (both streams,
// as written so far), stderr(), exited (resolves with {code, signal}), stop()}. stop() sends
// SIGTERM, then SIGKILL after stopMs, and resolves with {code, signal} when it exited. Rejects
// when the process exits first, or after ms (having killed it). Its stderr is copied to ours.
export function startListening(what, exe, args, re, { env, ms = 10_000 } = {}) {
    const child = spawnDying(exe, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let err = '';
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const stop = async (stopMs = 5000) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        try {
            return await deadline(exited, stopMs, `${what} to exit after SIGTERM`);
        } catch (e) {
            child.kill('SIGKILL');
            throw e;
        }
    };
    return new Promise((resolve, reject) => {
        let found = false;
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`${what}: no listening line within ${ms} ms; output: ${output}`));
        }, ms);
        const onLine = (line) => {
            const match = found ? null : re.exec(line);
            if (!match) return;
            found = true;
            clearTimeout(timer);
            resolve({ child, match, output: () => output, stderr: () => err, exited, stop });
        };
        for (const [stream, isErr] of [
            [child.stdout, false],
            [child.stderr, true],
        ]) {
            let pending = '';
            stream.setEncoding('utf8');
            stream.on('data', (chunk) => {
                output += chunk;
                if (isErr) {
                    err += chunk;
                    process.stderr.write(chunk);
                }
                pending += chunk;
                let nl;
                while ((nl = pending.indexOf('\n')) >= 0) {
                    onLine(pending.slice(0, nl).replace(/\r$/, ''));
                    pending = pending.slice(nl + 1);
                }
            });
        }
        exited.then(({ code, signal }) => {
            if (!found) {
                clearTimeout(timer);
                reject(new Error(`${what} exited (code ${code}, signal ${signal}) before listening; output: ${output}`));
            }
        });
    });
}

// Bounds a whole test file: after ms it says so and exits 1, so that CTest never has to kill
// it. The timer is unref'd, so it does not keep a finished run alive.
export function overallDeadline(ms) {
    setTimeout(() => {
        console.error(`FAIL: overall deadline of ${ms} ms exceeded`);
        process.exit(1);
    }, ms).unref();
}

// Resolves like p, or rejects after ms.
export function deadline(p, ms, what) {
    let timer;
    return Promise.race([
        p,
        new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
            timer.unref();
        }),
    ]).finally(() => clearTimeout(timer));
}

// Minimal SSE parser with the semantics of the spec (and of eventsource-parser): fields per
// line, data lines joined with \n, an event is dispatched on a blank line only if it had data.
class SseParser {
    constructor(onEvent, onComment) {
        this.buf = '';
        this.onEvent = onEvent;
        this.onComment = onComment;
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
            // A lone CR at the very end may be the first half of a CRLF: wait for more.
            if (m[0] === '\r' && m.index === this.buf.length - 1) break;
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
        if (line.startsWith(':')) {
            this.onComment(line.slice(1));
            return;
        }
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

const mediaType = (h) => (h ?? '').split(';')[0].trim().toLowerCase();

// Records every HTTP exchange a transport makes. exchanges[n] = {n, method, url, requestHeaders,
// body (parsed JSON or undefined), status, headers, contentType, events (SSE: {event, id, retry,
// data}), comments (SSE comment lines), messages (JSON-RPC messages in the body, in order),
// ended, tStart, tHeaders, tEnd (performance.now() times)}.
export class HttpRecorder {
    constructor(realFetch = globalThis.fetch) {
        this.exchanges = [];
        // 'response' (ex): its status and headers arrived; 'end' (ex): its body was read to the end.
        this.events = new EventEmitter();
        this.realFetch = realFetch;
        this.fetch = this.fetch.bind(this);
    }

    async fetch(input, init = {}) {
        const method = (init.method ?? 'GET').toUpperCase();
        let body;
        if (typeof init.body === 'string') {
            try {
                body = JSON.parse(init.body);
            } catch {
                body = init.body;
            }
        }
        const ex = {
            n: this.exchanges.length,
            method,
            url: String(input),
            requestHeaders: new Headers(init.headers),
            body,
            status: undefined,
            headers: undefined,
            contentType: undefined,
            events: [],
            comments: [],
            messages: [],
            ended: false,
            tStart: performance.now(), // when the request was made
            tHeaders: undefined, // when the response headers arrived
            tEnd: undefined, // when the body was read to its end
        };
        this.exchanges.push(ex);
        const res = await this.realFetch(input, init);
        ex.status = res.status;
        ex.tHeaders = performance.now();
        ex.headers = res.headers;
        ex.contentType = mediaType(res.headers.get('content-type'));
        this.events.emit('response', ex);
        if (!res.body) {
            ex.ended = true;
            ex.tEnd = ex.tHeaders;
            this.events.emit('end', ex);
            return res;
        }
        const decoder = new TextDecoder();
        let onText;
        let onEnd;
        if (ex.contentType === 'text/event-stream') {
            const parser = new SseParser(
                (e) => {
                    ex.events.push(e);
                    if ((e.event === undefined || e.event === '' || e.event === 'message') && e.data !== '') {
                        try {
                            ex.messages.push(JSON.parse(e.data));
                        } catch {
                            ex.messages.push({ unparseable: e.data });
                        }
                    }
                },
                (c) => ex.comments.push(c),
            );
            onText = (t) => parser.push(t);
            onEnd = () => {};
        } else {
            let text = '';
            onText = (t) => {
                text += t;
            };
            onEnd = () => {
                ex.text = text;
                if (ex.contentType === 'application/json' && text !== '') {
                    try {
                        const v = JSON.parse(text);
                        ex.messages.push(...(Array.isArray(v) ? v : [v]));
                    } catch {
                        ex.messages.push({ unparseable: text });
                    }
                }
            };
        }
        const tap = new TransformStream({
            transform(chunk, controller) {
                onText(decoder.decode(chunk, { stream: true }));
                controller.enqueue(chunk);
            },
            flush: () => {
                onText(decoder.decode());
                onEnd();
                ex.ended = true;
                ex.tEnd = performance.now();
                this.events.emit('end', ex);
            },
        });
        return new Response(res.body.pipeThrough(tap), {
            status: res.status,
            statusText: res.statusText,
            headers: res.headers,
        });
    }

    // Resolves when exchange ex's response body has been read to its end (rejects after ms).
    waitEnd(ex, ms, what) {
        if (ex.ended) return Promise.resolve(ex);
        let on;
        return deadline(
            new Promise((resolve) => {
                on = (e) => {
                    if (e === ex) resolve(ex);
                };
                this.events.on('end', on);
            }),
            ms,
            what,
        ).finally(() => this.events.off('end', on));
    }

    // Resolves with the first exchange that satisfies pred once its response headers are in
    // (rejects after ms).
    waitResponse(pred, ms, what) {
        const ex = this.exchanges.find((e) => e.status !== undefined && pred(e));
        if (ex) return Promise.resolve(ex);
        let on;
        return deadline(
            new Promise((resolve) => {
                on = (e) => {
                    if (pred(e)) resolve(e);
                };
                this.events.on('response', on);
            }),
            ms,
            what,
        ).finally(() => this.events.off('response', on));
    }

    // The exchanges that carry one logical SSE stream: ex, then every GET that resumed it
    // (Last-Event-ID naming an event id seen on the chain so far), in order.
    chainOf(ex) {
        const chain = [ex];
        const ids = new Set(ex.events.map((e) => e.id).filter(Boolean));
        for (const e of this.exchanges) {
            if (e.n <= ex.n || e.method !== 'GET') continue;
            const last = e.requestHeaders.get('last-event-id');
            if (last && ids.has(last)) {
                chain.push(e);
                for (const ev of e.events) if (ev.id) ids.add(ev.id);
            }
        }
        return chain;
    }

    // The exchange whose response carried a message matching pred (the first, or undefined).
    carrierOf(pred) {
        return this.exchanges.find((ex) => ex.messages.some(pred));
    }

    // The POST exchange whose request body is (or contains) the JSON-RPC request with this id
    // and method.
    postOf(method, id) {
        const has = (b) => b && b.method === method && b.id === id;
        return this.exchanges.find(
            (ex) => ex.method === 'POST' && (Array.isArray(ex.body) ? ex.body.some(has) : has(ex.body)),
        );
    }
}
