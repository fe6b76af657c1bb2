#!/usr/bin/env node
// An MCP server (stdio, on the official TypeScript SDK) whose surface changes while it
// runs, for the gateway's drift and failure tests. Written here; the MCP machinery is the
// SDK's.
//
//   DRIFT_FILE=/path node drifting-server.mjs
//
// Tools:
//   greet {name}      "Hello, <name>!" — its description is the contents of $DRIFT_FILE
//                     when that file exists (re-read on every tools/list), else the default.
//   add {a, b}        a + b; never changes.
//   die {}            exits the process mid-call (an upstream dying under a request).
//   slow {ms}         answers after `ms` milliseconds.
//   odd {}            a result with fields no MCP schema defines, and numbers written
//                     unusually, to check they reach the client unchanged.
// Resources:
//   notes://today     text: the contents of $NOTE_FILE when it exists, else "Buy milk."
//                     Subscribable: while subscribed, a change of $NOTE_FILE sends
//                     notifications/resources/updated.
// Prompts:
//   review {topic}    "Review <topic> carefully."
// When $DRIFT_FILE changes, the server sends notifications/tools/list_changed.
import fs from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const driftFile = process.env.DRIFT_FILE;
const noteFile = process.env.NOTE_FILE;
const DEFAULT_GREET = 'Greets a person by name.';

function greetDescription() {
  if (driftFile && fs.existsSync(driftFile)) return fs.readFileSync(driftFile, 'utf8');
  return DEFAULT_GREET;
}

const server = new Server(
  { name: 'drifting-server', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} } },
);

// notes://today's subscription: watch $NOTE_FILE while subscribed.
let watching = false;
function noteChanged() {
  server.notification({ method: 'notifications/resources/updated', params: { uri: 'notes://today' } });
}
server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  if (req.params.uri !== 'notes://today') throw new Error(`unknown resource ${req.params.uri}`);
  if (noteFile && !watching) {
    fs.watchFile(noteFile, { interval: 100 }, noteChanged);
    watching = true;
  }
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  if (req.params.uri !== 'notes://today') throw new Error(`unknown resource ${req.params.uri}`);
  if (noteFile && watching) fs.unwatchFile(noteFile, noteChanged);
  watching = false;
  return {};
});

server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: 'notes://today', name: 'today', description: "Today's note.", mimeType: 'text/plain' }],
}));

server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  if (req.params.uri !== 'notes://today') throw new Error(`unknown resource ${req.params.uri}`);
  const text = noteFile && fs.existsSync(noteFile) ? fs.readFileSync(noteFile, 'utf8') : 'Buy milk.';
  return { contents: [{ uri: 'notes://today', mimeType: 'text/plain', text }] };
});

server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [
    {
      name: 'review',
      description: 'Asks for a careful review.',
      arguments: [{ name: 'topic', description: 'What to review.', required: true }],
    },
  ],
}));

server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  if (req.params.name !== 'review') throw new Error(`unknown prompt ${req.params.name}`);
  const topic = req.params.arguments?.topic ?? 'this';
  return { messages: [{ role: 'user', content: { type: 'text', text: `Review ${topic} carefully.` } }] };
});

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'greet',
      description: greetDescription(),
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      annotations: { readOnlyHint: true },
    },
    { name: 'die', description: 'Exits the server mid-call.', inputSchema: { type: 'object' } },
    {
      name: 'slow',
      description: 'Answers after a delay.',
      inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
      annotations: { readOnlyHint: true },
    },
    { name: 'odd', description: 'Returns unusual fields.', inputSchema: { type: 'object' } },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  switch (req.params.name) {
    case 'greet':
      return { content: [{ type: 'text', text: `Hello, ${args.name}!` }] };
    case 'add':
      return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] };
    case 'die':
      setTimeout(() => process.exit(3), 10);
      return new Promise(() => {});
    case 'slow':
      await new Promise((r) => setTimeout(r, Number(args.ms ?? 100)));
      return { content: [{ type: 'text', text: 'done' }] };
    case 'odd':
      return {
        content: [{ type: 'text', text: 'odd' }],
        'x-vendor-extension': { nested: [1, 'two', { three: null }], unicode: 'ünïcødé ✓' },
      };
    default:
      throw new Error(`unknown tool ${req.params.name}`);
  }
});

if (driftFile) {
  fs.watchFile(driftFile, { interval: 50 }, () => {
    server.sendToolListChanged().catch(() => {});
  });
}

// The gateway closing our stdin (or dying) ends us, even with the file watch
// keeping the event loop alive.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));

await server.connect(new StdioServerTransport());
