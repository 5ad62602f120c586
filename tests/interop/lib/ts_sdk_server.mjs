// A Streamable HTTP MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package-lock.json): the peer that our_client_http.test.mjs points libmcp's HTTP client at. It
// uses the SDK's own server and transport (Server, StreamableHTTPServerTransport) with stateful
// sessions on node:http, and adds only what the test needs to see from the server's side.
//
// Usage: node lib/ts_sdk_server.mjs [PORT] [--json] [--resumable] [--retry=MS]
//   PORT          on 127.0.0.1; 0 (the default) picks a free one. Once listening it prints
//                 "ts-sdk-server: listening on http://127.0.0.1:<port>/mcp" on stdout.
//   --json        enableJsonResponse: POST answers are application/json, not SSE
//   --resumable   every session gets an event store: priming events, Last-Event-ID replay
//   --retry=MS    retryInterval: the SSE `retry` of priming events (with --resumable)
//
// Tools:
//   echo {text}                  -> text
//   notify {count, text?}        -> `count` notifications/message on the call's stream, then
//                                   "sent N"
//   sample {prompt}              -> sends sampling/createMessage, returns the client's result as
//                                   JSON text
//   elicit {message}             -> sends elicitation/create (name: string, required; color:
//                                   string, default "blue"), returns the client's result as
//                                   JSON text
//   close_stream {before, after, sample?}
//                                -> SEP-1699 polling: `before` notifications, then the SDK's
//                                   closeSSEStream() ends the call's SSE stream, then `after`
//                                   notifications (with sample: a sampling request too) and the
//                                   result "closed after B[; sampled TEXT]", which reach the
//                                   client only through its resumption (needs --resumable)
//   close_standalone {count}     -> one notifications/message on the standalone GET stream, then
//                                   closeStandaloneSSEStream(), then count - 1 more, which reach
//                                   the client only through its resumption (needs --resumable)
// Resource peer://greeting (text). Prompt greet {name}.
//
// What the test checks on the server's side goes to stderr, one line each, as
// "ts-sdk-server: {json}": {"event":"close_stream","id",t} and {"event":"close_standalone",t}
// when a stream was closed, {"event":"get","lastEventId" (or null),t} for every GET, and
// {"event":"replay","lastEventId","messages":[...]} for what the event store sent again
// (t: milliseconds, performance.now()).

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
    CallToolRequestSchema,
    CreateMessageResultSchema,
    ElicitResultSchema,
    GetPromptRequestSchema,
    ListPromptsRequestSchema,
    ListResourcesRequestSchema,
    ListToolsRequestSchema,
    McpError,
    ErrorCode,
    ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const args = process.argv.slice(2);
const PORT = Number(args.find((a) => /^\d+$/.test(a)) ?? 0);
const JSON_MODE = args.includes('--json');
const RESUMABLE = args.includes('--resumable');
const retryArg = args.find((a) => a.startsWith('--retry='));
const RETRY = retryArg ? Number(retryArg.split('=')[1]) : undefined;

const GREETING_URI = 'peer://greeting';
const GREETING_TEXT = 'Hello from the TypeScript SDK server';

function report(fields) {
    console.error(`ts-sdk-server: ${JSON.stringify(fields)}`);
}

// Events in the order they were stored, ids "<stream>_<n>". (The SDK's example store orders ids
// by time and then by a random suffix, so two events of one millisecond may be replayed out of
// order; this one keeps the order of storing.)
class OrderedEventStore {
    constructor() {
        this.events = []; // {id, streamId, message}
        this.next = 0;
    }
    async storeEvent(streamId, message) {
        const id = `${streamId}_${this.next++}`;
        this.events.push({ id, streamId, message });
        return id;
    }
    async getStreamIdForEventId(eventId) {
        return this.events.find((e) => e.id === eventId)?.streamId;
    }
    async replayEventsAfter(lastEventId, { send }) {
        const at = this.events.findIndex((e) => e.id === lastEventId);
        if (at < 0) return '';
        const { streamId } = this.events[at];
        const messages = [];
        for (const e of this.events.slice(at + 1)) {
            if (e.streamId !== streamId) continue;
            messages.push(e.message);
            await send(e.id, e.message);
        }
        report({ event: 'replay', lastEventId, messages });
        return streamId;
    }
}

const TOOLS = [
    {
        name: 'echo',
        description: 'Echo the text argument',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    {
        name: 'notify',
        description: 'Emit `count` notifications related to this request, then return',
        inputSchema: {
            type: 'object',
            properties: { count: { type: 'integer', minimum: 0 }, text: { type: 'string' } },
            required: ['count'],
        },
    },
    {
        name: 'sample',
        description: 'Ask the client to sample, and return its answer',
        inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
    },
    {
        name: 'elicit',
        description: 'Ask the client to elicit a name and a color, and return its answer',
        inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    },
    {
        name: 'close_stream',
        description: "Close the call's SSE stream between two sets of notifications (SEP-1699)",
        inputSchema: {
            type: 'object',
            properties: {
                before: { type: 'integer', minimum: 0 },
                after: { type: 'integer', minimum: 0 },
                sample: { type: 'boolean' },
            },
        },
    },
    {
        name: 'close_standalone',
        description: 'Close the standalone SSE stream between two sets of notifications (SEP-1699)',
        inputSchema: { type: 'object', properties: { count: { type: 'integer', minimum: 1 } } },
    },
];

const text = (t) => ({ content: [{ type: 'text', text: t }] });

async function notifyAll(extra, count, label) {
    for (let i = 0; i < count; i++)
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `${label}${i}` } });
}

// Asks the client to sample, on the stream of the call that extra belongs to.
function sample(extra, prompt) {
    const params = { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 };
    return extra.sendRequest({ method: 'sampling/createMessage', params }, CreateMessageResultSchema);
}

async function callTool(server, { params }, extra) {
    const a = params.arguments ?? {};
    switch (params.name) {
        case 'echo':
            return text(a.text);
        case 'notify':
            await notifyAll(extra, a.count, a.text ?? 'n');
            return text(`sent ${a.count}`);
        case 'sample':
            return text(JSON.stringify(await sample(extra, a.prompt)));
        case 'elicit': {
            const result = await extra.sendRequest(
                {
                    method: 'elicitation/create',
                    params: {
                        message: a.message,
                        requestedSchema: {
                            type: 'object',
                            properties: {
                                name: { type: 'string', description: 'Your name' },
                                color: { type: 'string', description: 'A color', default: 'blue' },
                            },
                            required: ['name'],
                        },
                    },
                },
                ElicitResultSchema,
            );
            return text(JSON.stringify(result));
        }
        case 'close_stream': {
            if (!extra.closeSSEStream) throw new McpError(ErrorCode.InvalidRequest, 'close_stream needs --resumable');
            const before = a.before ?? 1;
            const after = a.after ?? 1;
            await notifyAll(extra, before, 'before');
            extra.closeSSEStream();
            report({ event: 'close_stream', id: extra.requestId, t: performance.now() });
            await notifyAll(extra, after, 'after');
            if (!a.sample) return text(`closed after ${before}`);
            const r = await sample(extra, 'after the close');
            return text(`closed after ${before}; sampled ${r.content.text}`);
        }
        case 'close_standalone': {
            if (!extra.closeStandaloneSSEStream) throw new McpError(ErrorCode.InvalidRequest, 'close_standalone needs --resumable');
            const count = a.count ?? 2;
            // Not related to the call: the SDK sends these on the standalone stream.
            const log = (i) => server.notification({ method: 'notifications/message', params: { level: 'info', data: `standalone${i}` } });
            // The first goes out on the open stream, so the client has an event id to resume from.
            await log(0);
            extra.closeStandaloneSSEStream();
            report({ event: 'close_standalone', t: performance.now() });
            for (let i = 1; i < count; i++) await log(i);
            return text('standalone closed');
        }
        default:
            throw new McpError(ErrorCode.InvalidParams, `Tool ${params.name} not found`);
    }
}

function buildServer() {
    const server = new Server(
        { name: 'ts-sdk-server', version: '1.0.0' },
        { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(server, request, extra));
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
        resources: [{ uri: GREETING_URI, name: 'greeting', mimeType: 'text/plain' }],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async ({ params }) => {
        if (params.uri !== GREETING_URI) throw new McpError(-32002, `Resource ${params.uri} not found`);
        return { contents: [{ uri: GREETING_URI, mimeType: 'text/plain', text: GREETING_TEXT }] };
    });
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
        prompts: [{ name: 'greet', description: 'Greet someone', arguments: [{ name: 'name', required: true }] }],
    }));
    server.setRequestHandler(GetPromptRequestSchema, async ({ params }) => {
        if (params.name !== 'greet') throw new McpError(ErrorCode.InvalidParams, `Prompt ${params.name} not found`);
        const who = params.arguments?.name ?? 'nobody';
        return { messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${who}` } }] };
    });
    return server;
}

function sendJsonError(res, status, code, message) {
    const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
}

const sessions = new Map(); // session id -> transport

const httpServer = http.createServer(async (req, res) => {
    try {
        const sid = req.headers['mcp-session-id'];
        if (sid !== undefined) {
            const transport = sessions.get(sid);
            if (!transport) {
                sendJsonError(res, 404, -32001, 'Session not found');
                return;
            }
            if (req.method === 'GET') report({ event: 'get', lastEventId: req.headers['last-event-id'] ?? null, t: performance.now() });
            await transport.handleRequest(req, res);
            return;
        }
        // No session id: a POST gets a new transport, which answers anything but initialize with
        // an error (and is then dropped, as the session never began).
        if (req.method !== 'POST') {
            sendJsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
            return;
        }
        const transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: JSON_MODE,
            eventStore: RESUMABLE ? new OrderedEventStore() : undefined,
            retryInterval: RETRY,
            onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
        await transport.handleRequest(req, res);
    } catch (err) {
        console.error('ts-sdk-server: request error', err);
        if (!res.headersSent) sendJsonError(res, 500, -32603, 'Internal server error');
        else res.end();
    }
});

httpServer.listen(PORT, '127.0.0.1', () => {
    console.log(`ts-sdk-server: listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});

async function shutdown() {
    for (const transport of sessions.values()) await transport.close().catch(() => {});
    httpServer.close();
    process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
