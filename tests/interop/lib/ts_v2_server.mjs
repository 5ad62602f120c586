// An MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0, pinned in
// package-lock.json) that speaks revision 2026-07-28: the peer that our_client_modern.test.mjs
// points libmcp's client at, over Streamable HTTP (the SDK's createMcpHandler, served by
// @hono/node-server) or over stdio (the SDK's serveStdio). Server-to-client requests are Multi
// Round-Trip Requests (inputRequired), answered by the client's handlers.
//
// Usage: node lib/ts_v2_server.mjs [--stdio | PORT]
//   PORT   on 127.0.0.1; 0 (the default) picks a free one. Once listening it prints
//          "ts-v2-server: listening on http://127.0.0.1:<port>/mcp" on stdout.
//   --stdio  serve one connection over stdin and stdout
//
// Tools:
//   echo {text}        -> text
//   elicit {message}   -> input_required: an elicitation (name: string, required); then the
//                         client's ElicitResult as JSON text
//   sample {prompt}    -> input_required: a sampling request; then the client's
//                         CreateMessageResult as JSON text
//   roots              -> input_required: roots/list; then the client's roots as JSON text
//   toggle_extra       -> enables (or disables) the tool "extra" and publishes
//                         notifications/tools/list_changed to every open subscription
// Resource peer://greeting (text). Prompt greet {name}.

import { serve } from '@hono/node-server';
import { createMcpHandler, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const STDIO = process.argv.includes('--stdio');
const PORT = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 0);
const GREETING_URI = 'peer://greeting';
const GREETING_TEXT = 'Hello from the TypeScript SDK v2 server';

let extraEnabled = false;
let publish = () => {};

const text = (t) => ({ content: [{ type: 'text', text: t }] });

function buildServer() {
    const server = new McpServer(
        { name: 'ts-v2-server', version: '2.4.0' },
        { capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} } },
    );
    server.registerTool('echo', { description: 'Echo the text', inputSchema: z.object({ text: z.string() }) },
        async ({ text: t }) => text(t));
    server.registerTool('elicit', { description: 'Ask the user', inputSchema: z.object({ message: z.string() }) },
        async ({ message }, ctx) => {
            const answer = ctx.mcpReq.inputResponses?.who;
            if (answer === undefined)
                return inputRequired({
                    inputRequests: {
                        who: inputRequired.elicit({
                            message,
                            requestedSchema: {
                                type: 'object',
                                properties: { name: { type: 'string' } },
                                required: ['name'],
                            },
                        }),
                    },
                });
            return text(JSON.stringify(answer));
        });
    server.registerTool('sample', { description: 'Ask the model', inputSchema: z.object({ prompt: z.string() }) },
        async ({ prompt }, ctx) => {
            const answer = ctx.mcpReq.inputResponses?.llm;
            if (answer === undefined)
                return inputRequired({
                    inputRequests: {
                        llm: inputRequired.createMessage({
                            messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
                            maxTokens: 50,
                        }),
                    },
                    requestState: 'sample-round-1',
                });
            return text(JSON.stringify(answer));
        });
    server.registerTool('roots', { description: 'List the client roots' }, async (ctx) => {
        const answer = ctx.mcpReq.inputResponses?.dirs;
        if (answer === undefined)
            return inputRequired({ inputRequests: { dirs: inputRequired.listRoots() } });
        return text(JSON.stringify(answer));
    });
    const extra = server.registerTool('extra', { description: 'Shown once toggled on' },
        async () => text('extra'));
    if (!extraEnabled) extra.disable();
    server.registerTool('toggle_extra', { description: 'Toggle the extra tool' }, async () => {
        extraEnabled = !extraEnabled;
        extra.update({ enabled: extraEnabled }); // over stdio this publishes the change
        publish(); // over HTTP the handler's bus does
        return text(`extra ${extraEnabled ? 'on' : 'off'}`);
    });
    server.registerResource('greeting', GREETING_URI, { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: GREETING_TEXT }],
    }));
    server.registerPrompt('greet', { description: 'Greet someone', argsSchema: { name: z.string() } },
        ({ name }) => ({
            messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}` } }],
        }));
    return server;
}

if (STDIO) {
    void serveStdio(buildServer);
} else {
    const handler = createMcpHandler(buildServer);
    publish = () => handler.notify.toolsChanged();
    serve({ fetch: (req) => handler.fetch(req), port: PORT, hostname: '127.0.0.1' }, (info) => {
        console.log(`ts-v2-server: listening on http://127.0.0.1:${info.port}/mcp`);
    });
}
