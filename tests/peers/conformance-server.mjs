#!/usr/bin/env node
// A reference server for the @modelcontextprotocol/conformance SERVER scenarios, built on
// the official TypeScript SDK's low-level `Server` (@modelcontextprotocol/sdk 1.32.2).
//
// Neither the conformance package nor the SDK publishes the "everything server" the
// scenarios expect (it lives only in their source repositories), so this file implements
// each scenario's "Server Implementation Requirements" (the text each scenario carries; see
// `conformance list` and tests/peers/README.md): tools test_*, resources test://*, prompts
// test_*, completion, logging, subscriptions, SSE priming/retry and resumption, and
// DNS-rebinding protection. It is written here; the MCP machinery is the SDK's.
//
//   node conformance-server.mjs [streamableHttp]   HTTP on 127.0.0.1:$PORT/mcp (PORT
//                                                  default 3100; PORT=0 picks a free one)
//   node conformance-server.mjs stdio              the same server over stdio
//
// In HTTP mode the first line on stdout is `MCP_URL=http://127.0.0.1:<port>/mcp`; logs go
// to stderr. HOST overrides the bind address (default 127.0.0.1).
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';

// A 1x1 red PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
// A 1 ms, 8 kHz, 8-bit mono PCM WAV of silence.
const WAV = (() => {
  const samples = Buffer.alloc(8, 0x80);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + samples.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(8000, 24); // sample rate
  h.writeUInt32LE(8000, 28); // byte rate
  h.writeUInt16LE(1, 32); // block align
  h.writeUInt16LE(8, 34); // bits per sample
  h.write('data', 36);
  h.writeUInt32LE(samples.length, 40);
  return Buffer.concat([h, samples]).toString('base64');
})();

// A JSON-RPC error whose wire message is exactly `message` (an McpError's would carry an
// "MCP error <code>: " prefix, which the SDK then sends as the message).
const rpcError = (code, message, data) => Object.assign(new Error(message), { code, data });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const noArgs = { type: 'object', properties: {} };

const TOOLS = [
  { name: 'test_simple_text', description: 'Returns simple text content', inputSchema: noArgs },
  { name: 'test_image_content', description: 'Returns image content (a PNG)', inputSchema: noArgs },
  { name: 'test_audio_content', description: 'Returns audio content (a WAV)', inputSchema: noArgs },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource', inputSchema: noArgs },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource content',
    inputSchema: noArgs,
  },
  {
    name: 'test_tool_with_logging',
    description: 'Sends three info log notifications while it runs',
    inputSchema: noArgs,
  },
  { name: 'test_error_handling', description: 'Always fails with isError: true', inputSchema: noArgs },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50, 100 of 100 when given a progress token',
    inputSchema: noArgs,
  },
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion (sampling/createMessage)',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for input (elicitation/create)',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation whose schema has defaults for every primitive type (SEP-1034)',
    inputSchema: noArgs,
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicitation whose schema has all five enum variants (SEP-1330)',
    inputSchema: noArgs,
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
  {
    name: 'test_reconnection',
    description: 'Closes its SSE stream mid-call; the result arrives after the client resumes (SEP-1699)',
    inputSchema: noArgs,
  },
];

const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A static text resource',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    description: 'A static binary resource (a PNG)',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    description: 'A resource that can be subscribed to',
    mimeType: 'text/plain',
  },
];
const TEMPLATE = {
  uriTemplate: 'test://template/{id}/data',
  name: 'template-data',
  description: 'Data for an id, substituted into the URI',
  mimeType: 'application/json',
};

const PROMPTS = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with image content' },
];
const COMPLETIONS = ['paris', 'park', 'party', 'test', 'testing', 'tester'];

async function elicit(extra, params) {
  const result = await extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema);
  return `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

async function callTool(server, name, args, extra) {
  switch (name) {
    case 'test_simple_text':
      return { content: [text('This is a simple text response for testing.')] };
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'test_embedded_resource':
      return {
        content: [
          {
            type: 'resource',
            resource: {
              uri: 'test://embedded-resource',
              mimeType: 'text/plain',
              text: 'This is an embedded resource content.',
            },
          },
        ],
      };
    case 'test_multiple_content_types':
      return {
        content: [
          text('Multiple content types test:'),
          { type: 'image', data: PNG, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: 'test://mixed-content-resource',
              mimeType: 'application/json',
              text: JSON.stringify({ test: 'data', value: 123 }),
            },
          },
        ],
      };
    case 'test_tool_with_logging': {
      const log = (data) =>
        extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
      await log('Tool execution started');
      await sleep(50);
      await log('Tool processing data');
      await sleep(50);
      await log('Tool execution completed');
      return { content: [text('Tool with logging executed successfully')] };
    }
    case 'test_error_handling':
      return { isError: true, content: [text('This tool intentionally returns an error for testing')] };
    case 'test_tool_with_progress': {
      const token = extra._meta?.progressToken;
      for (const [i, progress] of [0, 50, 100].entries()) {
        if (i > 0) await sleep(50);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 100 },
          });
        }
      }
      return { content: [text('Tool with progress executed successfully')] };
    }
    case 'test_sampling': {
      if (!server.getClientCapabilities()?.sampling) {
        return { isError: true, content: [text('The client does not support sampling')] };
      }
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: text(String(args?.prompt ?? '')) }],
            maxTokens: 100,
          },
        },
        CreateMessageResultSchema,
      );
      const c = result.content;
      const reply = c?.type === 'text' ? c.text : JSON.stringify(c);
      return { content: [text(`LLM response: ${reply}`)] };
    }
    case 'test_elicitation': {
      if (!server.getClientCapabilities()?.elicitation) {
        return { isError: true, content: [text('The client does not support elicitation')] };
      }
      const outcome = await elicit(extra, {
        message: String(args?.message ?? ''),
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return { content: [text(`User response: ${outcome}`)] };
    }
    case 'test_elicitation_sep1034_defaults': {
      const outcome = await elicit(extra, {
        message: 'Please review these values (every field has a default)',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
        },
      });
      return { content: [text(`Elicitation completed: ${outcome}`)] };
    }
    case 'test_elicitation_sep1330_enums': {
      const outcome = await elicit(extra, {
        message: 'Please pick from these enums',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
        },
      });
      return { content: [text(`Elicitation completed: ${outcome}`)] };
    }
    case 'json_schema_2020_12_tool':
      return { content: [text(`Received: ${JSON.stringify(args ?? {})}`)] };
    case 'test_reconnection':
      // Close this request's SSE stream (the client resumes with GET + Last-Event-ID; the
      // event store replays what it missed), then answer.
      await sleep(100);
      extra.closeSSEStream?.();
      await sleep(200);
      return { content: [text('Reconnection test completed successfully')] };
    default:
      throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
}

function readResource(uri) {
  if (uri === 'test://static-text') {
    return [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }];
  }
  if (uri === 'test://static-binary') return [{ uri, mimeType: 'image/png', blob: PNG }];
  if (uri === 'test://watched-resource') {
    return [{ uri, mimeType: 'text/plain', text: 'This resource can be watched for updates.' }];
  }
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (m) {
    const id = decodeURIComponent(m[1]);
    return [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      },
    ];
  }
  // -32002 is the spec's "Resource not found".
  throw rpcError(-32002, `Resource not found: ${uri}`, { uri });
}

function getPrompt(name, args) {
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }] };
    case 'test_prompt_with_arguments':
      return {
        messages: [
          {
            role: 'user',
            content: text(`Prompt with arguments: arg1='${args?.arg1 ?? ''}', arg2='${args?.arg2 ?? ''}'`),
          },
        ],
      };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: {
                uri: String(args?.resourceUri ?? 'test://example-resource'),
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            },
          },
          { role: 'user', content: text('Please process the embedded resource above.') },
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
          { role: 'user', content: text('Please analyze the image above.') },
        ],
      };
    default:
      throw rpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  }
}

function createServer() {
  const server = new Server(
    { name: 'interlock-conformance-reference', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      instructions: 'Reference server for the MCP conformance server scenarios.',
    },
  );
  const subscriptions = new Set();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) =>
    callTool(server, req.params.name, req.params.arguments, extra),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [TEMPLATE],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => ({
    contents: readResource(req.params.uri),
  }));
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    subscriptions.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subscriptions.delete(req.params.uri);
    return {};
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) =>
    getPrompt(req.params.name, req.params.arguments),
  );
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const prefix = String(req.params.argument?.value ?? '').toLowerCase();
    const values = COMPLETIONS.filter((v) => v.startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  // logging/setLevel is answered by the SDK because the logging capability is declared.
  return server;
}

async function serveStdio() {
  const server = createServer();
  await server.connect(new StdioServerTransport());
  console.error('conformance-server: serving on stdio');
}

async function serveHttp() {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT ?? 3100);
  // createMcpExpressApp validates the Host header for localhost binds (DNS rebinding).
  const app = createMcpExpressApp({ host });
  const transports = new Map();
  const badSession = (res, status) =>
    res.status(status).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Bad Request: no valid session ID' },
      id: null,
    });

  app.post('/mcp', async (req, res) => {
    try {
      const sid = req.headers['mcp-session-id'];
      if (sid) {
        const t = transports.get(sid);
        if (!t) return badSession(res, 404);
        return await t.handleRequest(req, res, req.body);
      }
      if (!isInitializeRequest(req.body)) return badSession(res, 400);
      const server = createServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        retryInterval: 500,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      console.error('conformance-server: POST failed:', e);
      if (!res.headersSent) {
        res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
      }
    }
  });
  for (const method of ['get', 'delete']) {
    app[method]('/mcp', async (req, res) => {
      const t = transports.get(req.headers['mcp-session-id']);
      if (!t) return badSession(res, req.headers['mcp-session-id'] ? 404 : 400);
      try {
        await t.handleRequest(req, res);
      } catch (e) {
        console.error(`conformance-server: ${method.toUpperCase()} failed:`, e);
        if (!res.headersSent) res.status(500).end();
      }
    });
  }

  const listener = app.listen(port, host, () => {
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${listener.address().port}/mcp`;
    process.stdout.write(`MCP_URL=${url}\n`);
    console.error(`conformance-server: listening on ${url}`);
  });
  listener.on('error', (e) => {
    console.error('conformance-server:', e.message);
    process.exit(1);
  });
  const stop = async () => {
    for (const t of transports.values()) await t.close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const mode = process.argv[2] ?? 'streamableHttp';
if (mode === 'stdio') await serveStdio();
else if (mode === 'streamableHttp' || mode === 'http') await serveHttp();
else {
  console.error('usage: node conformance-server.mjs [streamableHttp|stdio]');
  process.exit(64);
}
