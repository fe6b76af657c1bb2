#!/usr/bin/env node
// An executor MCP server (stdio, on the official TypeScript SDK): how a deployment
// adds its own actions and probes to Interlock without Rust (issue 23 item 5).
//
// examples/policies/seed-style.yaml binds the plan actions `svc.scale` and
// `svc.migrate` to this server's `scale` and `migrate` tools, and the probes
// `svc.healthy_replicas` and `svc.version` to its read-only tools of the same
// names. Interlock calls a bound tool with the stage's (or check's) params as its
// arguments plus `target`, the plan's target as written (here an object target
// `{kind: service, id, namespace}`); a probe's typed value is read from
// `structuredContent.value`. The server is an upstream like any other: its surface
// is pinned and approved before any plan can use it.
//
//   node server.mjs        (npm install first: package.json pins the SDK)
//
// State is in memory: checkout runs 1.4.2 with 2 replicas, payments 1.9.0 with 1.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const services = new Map([
  ['checkout', { replicas: 2, version: '1.4.2' }],
  ['payments', { replicas: 1, version: '1.9.0' }],
]);

const target = {
  type: 'object',
  properties: { kind: { const: 'service' }, id: { type: 'string' }, namespace: { type: 'string' } },
  required: ['kind', 'id'],
};

const server = new Server(
  { name: 'shop-executor', version: '1.0.0' },
  { capabilities: { tools: { listChanged: false } } },
);

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'scale',
      description: "Set a service's replica count.",
      inputSchema: { type: 'object', properties: { target, replicas: { type: 'integer', minimum: 0 } }, required: ['target', 'replicas'] },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    {
      name: 'migrate',
      description: "Migrate a service's schema to version `to` (cannot be undone).",
      inputSchema: { type: 'object', properties: { target, to: { type: 'string' } }, required: ['target', 'to'] },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    {
      name: 'healthy_replicas',
      description: "How many of a service's replicas are healthy.",
      inputSchema: { type: 'object', properties: { target }, required: ['target'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'version',
      description: 'The version a service runs.',
      inputSchema: { type: 'object', properties: { target }, required: ['target'] },
      annotations: { readOnlyHint: true },
    },
  ],
}));

const text = (t, extra = {}) => ({ content: [{ type: 'text', text: t }], ...extra });
const refuse = (t) => text(t, { isError: true });

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  const id = args.target?.id;
  const service = services.get(id);
  if (!service) return refuse(`no service ${JSON.stringify(id)}`);
  switch (req.params.name) {
    case 'scale':
      if (!Number.isInteger(args.replicas) || args.replicas < 0) return refuse('`replicas` must be a non-negative integer');
      service.replicas = args.replicas;
      return text(`scaled ${id} to ${service.replicas} replicas`);
    case 'migrate':
      if (typeof args.to !== 'string') return refuse('`to` must be a string');
      service.version = args.to;
      return text(`migrated ${id} to ${service.version}`);
    case 'healthy_replicas':
      return text(String(service.replicas), { structuredContent: { value: service.replicas } });
    case 'version':
      return text(service.version, { structuredContent: { value: service.version } });
    default:
      return refuse(`unknown tool ${req.params.name}`);
  }
});

await server.connect(new StdioServerTransport());
