// Benchmark peer: a Streamable HTTP MCP server on the official TypeScript SDK v2
// (@modelcontextprotocol/server 2.4.0, pinned in package.json), which speaks protocol
// revision 2026-07-28: stateless, every request a POST carrying its own _meta envelope.
// It is served the way the SDK's documentation serves it on node:http:
// createMcpHandler(factory) (a fresh McpServer per request, JSON answers unless the
// handler sends something before its result, 2025-era traffic served by the stateless
// fallback) wrapped by toNodeHandler from @modelcontextprotocol/node, behind the
// localhost Host/Origin guards.
//
// Usage: node ts2-peer-server.mjs PORT
//
// Listens on 127.0.0.1:PORT; any path is the endpoint (bench/run uses /mcp).
// Tools, the same as mcp-everything's of the same names:
//   echo {text: string} -> content [{type:'text', text}]
//   test_input_required_result_elicitation {} -> a Multi Round-Trip Request: the first
//       call answers input_required with inputRequests.user_name (an elicitation/create
//       for {name}) and a requestState; the retry carrying inputResponses.user_name and
//       that requestState gets "Hello, NAME!". The requestState is sealed with the SDK's
//       own createRequestStateCodec (HMAC-SHA256, bound to the method, ten-minute
//       expiry) and verified before the handler runs, as mcp-everything seals its own
//       (AES-256-GCM, bound to method, name and arguments) and opens it on the retry.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { McpServer, createMcpHandler, createRequestStateCodec, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { toNodeHandler, localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';

const PORT = Number(process.argv.slice(2).find(a => /^\d+$/.test(a)) ?? 3000);
const MRTR_TOOL = 'test_input_required_result_elicitation';

// One key for the process: every round of a flow comes back to this process.
const codec = createRequestStateCodec({ key: randomBytes(32), bind: ctx => ctx.mcpReq.method });
const nameSchema = z.object({ name: z.string() });

function buildServer() {
    const server = new McpServer(
        { name: 'ts2-peer', version: '1.0.0' },
        { capabilities: { tools: {} }, requestState: { verify: codec.verify } }
    );
    server.registerTool('echo', {
        description: 'Echo the text argument',
        inputSchema: z.object({ text: z.string() })
    }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    server.registerTool(MRTR_TOOL, {
        description: 'Asks the user for a name with a multi round-trip request, then greets them',
        inputSchema: z.object({})
    }, async (_args, ctx) => {
        const state = ctx.mcpReq.requestState();
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', nameSchema);
        if (state?.tool !== MRTR_TOOL || answer === undefined) {
            return inputRequired({
                inputRequests: {
                    user_name: inputRequired.elicit({
                        message: 'What is your name?',
                        requestedSchema: {
                            type: 'object',
                            properties: { name: { type: 'string' } },
                            required: ['name']
                        }
                    })
                },
                requestState: await codec.mint({ tool: MRTR_TOOL }, ctx)
            });
        }
        return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
    });
    return server;
}

const handler = createMcpHandler(() => buildServer(), {
    onerror: err => console.error('ts2-peer: handler error', err)
});
const serve = toNodeHandler(handler, { onerror: err => console.error('ts2-peer: adapter error', err) });
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

const httpServer = http.createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    serve(req, res).catch(err => {
        console.error('ts2-peer: request error', err);
        if (!res.headersSent) res.writeHead(500);
        res.end();
    });
});
httpServer.keepAliveTimeout = 65000;
httpServer.listen(PORT, '127.0.0.1', () => {
    console.log(`ts2-peer listening on http://127.0.0.1:${PORT}/mcp`);
});
const shutdown = async () => {
    await handler.close().catch(() => {});
    httpServer.close();
    process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
