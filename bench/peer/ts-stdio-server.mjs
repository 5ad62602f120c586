// Benchmark peer: an MCP stdio server on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2, pinned in package.json), with the same echo
// tool as ts-peer-server.mjs and mcp-everything: echo {text} -> content [{type:'text', text}].
//
// Usage: node ts-stdio-server.mjs   (newline-delimited JSON-RPC on stdin/stdout)
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'ts-stdio-peer', version: '1.0.0' }, { capabilities: { logging: {} } });
server.registerTool('echo', {
    description: 'Echo the text argument',
    inputSchema: { text: z.string() }
}, async ({ text }) => ({ content: [{ type: 'text', text }] }));

await server.connect(new StdioServerTransport());
