#!/usr/bin/env node
// MCP client driver built on the official TypeScript SDK (@modelcontextprotocol/sdk), for
// Interlock's tests. Same CLI and output as client.py:
//
//   node client.mjs --url URL [--key KEY] [--header 'Name: value']... [--timeout SECONDS] COMMAND...
//
// COMMAND:
//   list-tools           {"serverInfo":..., "protocolVersion":..., "capabilities":...,
//                         "instructions":..., "tools":[...every page, full tool objects...]}
//   call NAME JSON_ARGS  {"result": <CallToolResult>}
//   script FILE          FILE is a JSON array of steps run in ONE session:
//                          {"op":"list-tools"} | {"op":"call","name":N,"arguments":{...}}
//                          | {"op":"sleep","ms":N}
//                        prints {"steps":[...], "notifications":[...]}; a failed step is
//                        {"error":{"message":...,"code":...}} and the script goes on.
//
// Failure to connect, to initialize, or of the command itself (list-tools/call) prints
// {"error":{"message":..., "code":..., ["http_status":...], ["data":...]}} and exits 2.
// `code` is the JSON-RPC error code when the failure is a JSON-RPC error (McpError), else
// null. Usage errors exit 64. Resolves the SDK from tests/peers/node_modules.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const CLIENT_INFO = { name: 'interlock-peers-client-ts', version: '1' };
const EXIT_FAILURE = 2;
const EXIT_USAGE = 64;

class UsageError extends Error {}

function errorDoc(e) {
  const err = { message: String(e?.message ?? e), code: null };
  if (e instanceof McpError) {
    err.code = e.code;
    // McpError prefixes its message with "MCP error <code>: "; report the peer's own text.
    const prefix = `MCP error ${e.code}: `;
    err.message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    if (e.data !== undefined) err.data = e.data;
  } else if (e instanceof StreamableHTTPError) {
    // StreamableHTTPError.code is the HTTP status (or -1), not a JSON-RPC code.
    if (typeof e.code === 'number' && e.code > 0) err.http_status = e.code;
  }
  err.type = e instanceof StreamableHTTPError ? 'StreamableHTTPError' : (e?.name ?? typeof e);
  if (e?.cause?.code) err.cause = String(e.cause.code); // e.g. ECONNREFUSED from fetch
  return { error: err };
}

function parseCli(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        key: { type: 'string' },
        header: { type: 'string', multiple: true, default: [] },
        timeout: { type: 'string', default: '30' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError(e.message);
  }
  const { values, positionals } = parsed;
  if (values.help) throw new UsageError('help');
  if (!values.url) throw new UsageError('--url is required');
  const timeoutMs = Number(values.timeout) * 1000;
  if (!(timeoutMs > 0)) throw new UsageError('--timeout wants seconds > 0');
  const headers = {};
  for (const h of values.header) {
    const i = h.indexOf(':');
    if (i < 0) throw new UsageError(`--header wants 'Name: value', got ${JSON.stringify(h)}`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  if (values.key) headers['Authorization'] = `Bearer ${values.key}`;

  const [verb, ...rest] = positionals;
  let command;
  if (verb === 'list-tools' && rest.length === 0) {
    command = { verb };
  } else if (verb === 'call' && rest.length === 2) {
    let args;
    try {
      args = JSON.parse(rest[1]);
    } catch (e) {
      throw new UsageError(`JSON_ARGS is not JSON: ${e.message}`);
    }
    command = { verb, name: rest[0], args };
  } else if (verb === 'script' && rest.length === 1) {
    let steps;
    try {
      steps = JSON.parse(readFileSync(rest[0], 'utf8'));
    } catch (e) {
      throw new UsageError(`cannot read script ${rest[0]}: ${e.message}`);
    }
    if (!Array.isArray(steps)) throw new UsageError('a script is a JSON array of steps');
    command = { verb, steps };
  } else {
    throw new UsageError(`unknown command ${JSON.stringify(positionals.join(' '))}`);
  }
  return { url: values.url, headers, timeoutMs, command };
}

async function listTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: client.timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const doc = {
    serverInfo: client.getServerVersion(),
    protocolVersion: client.protocolVersion,
    capabilities: client.getServerCapabilities(),
  };
  const instructions = client.getInstructions();
  if (instructions !== undefined) doc.instructions = instructions;
  doc.tools = tools;
  return doc;
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout: client.timeoutMs,
  });
  return { result };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(opts, state) {
  const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
    requestInit: { headers: opts.headers },
  });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  client.timeoutMs = opts.timeoutMs;
  let currentStep = -1;
  client.fallbackNotificationHandler = async (n) => {
    const { jsonrpc: _jsonrpc, ...rest } = n;
    state.notifications.push({ step: currentStep, ...rest });
  };
  // A transport error while a request is pending also rejects that request; remember the
  // last one so a failed connect reports the HTTP-level cause.
  let transportError;
  transport.onerror = (e) => {
    transportError = e;
  };
  try {
    try {
      await client.connect(transport, { timeout: opts.timeoutMs });
    } catch (e) {
      throw transportError instanceof StreamableHTTPError && !(e instanceof McpError) ? transportError : e;
    }
    client.protocolVersion = transport.protocolVersion;
    const { command } = opts;
    if (command.verb === 'list-tools') return await listTools(client);
    if (command.verb === 'call') return await call(client, command.name, command.args);
    for (const [i, step] of command.steps.entries()) {
      currentStep = i;
      try {
        const op = step && typeof step === 'object' ? step.op : undefined;
        if (op === 'list-tools') {
          state.steps.push(await listTools(client));
        } else if (op === 'call') {
          state.steps.push(await call(client, step.name, step.arguments ?? {}));
        } else if (op === 'sleep') {
          await sleep(Number(step.ms ?? 0));
          state.steps.push({ slept_ms: step.ms ?? 0 });
        } else {
          state.steps.push({ error: { message: `unknown step ${JSON.stringify(step)}`, code: null } });
        }
      } catch (e) {
        state.steps.push(errorDoc(e));
      }
    }
    currentStep = command.steps.length;
    return { steps: state.steps, notifications: state.notifications };
  } finally {
    // Like the Python SDK's default, end the session with DELETE (ignored if refused).
    try {
      if (transport.sessionId) await transport.terminateSession();
    } catch {
      /* the server may refuse or be gone */
    }
    await client.close().catch(() => {});
  }
}

function emit(doc) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(doc) + '\n', resolve));
}

async function main() {
  let opts;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(
      (e.message === 'help' ? '' : `client.mjs: ${e.message}\n`) +
        'usage: node client.mjs --url URL [--key KEY] [--header "N: v"]... [--timeout S] ' +
        '(list-tools | call NAME JSON_ARGS | script FILE)\n',
    );
    return e.message === 'help' ? 0 : EXIT_USAGE;
  }
  const state = { steps: [], notifications: [] };
  try {
    await emit(await run(opts, state));
    return 0;
  } catch (e) {
    const doc = errorDoc(e);
    if (opts.command.verb === 'script') Object.assign(doc, state);
    await emit(doc);
    return EXIT_FAILURE;
  }
}

process.exitCode = await main();
// Do not wait for lingering sockets or timers (e.g. a GET SSE stream being torn down).
process.exit(process.exitCode);
