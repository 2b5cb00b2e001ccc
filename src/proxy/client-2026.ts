import {
  Client,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../runtime/tool.js';
import type { JsonObject } from '../task/record.js';
import { CreatedTaskCatcher, taskWire2026 } from './task-wire-2026.js';
import { UpstreamProcessTransport } from './upstream-process.js';
import {
  notificationGate,
  inheritedEnv,
  logStderr,
  toolsChanged,
  type ConnectOptions,
  type ServerRequestHandler,
  type UpstreamClient,
  type UpstreamConnection,
} from './upstream.js';
import { WIRE_2026_VERSION as WIRE_2026 } from '../protocol/constants.js';

const CAPABILITIES = { elicitation: { form: {} }, sampling: {} };
/** A server that does not answer `server/discover` by then is not a 2026-07-28 server. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * A connection to an upstream that speaks only MCP 2026-07-28, with the official SDK v2
 * client pinned to that revision. Its questions come back inside the call (multi round-trip
 * requests); the client answers them through the handlers below, so they reach the task the
 * same way an older upstream's elicitation requests do.
 */
export async function connectWire2026(options: ConnectOptions): Promise<UpstreamConnection> {
  const client = new Client(
    { name: 'taskrail-proxy', version: options.version },
    {
      capabilities: CAPABILITIES,
      versionNegotiation: { mode: { pin: WIRE_2026 } },
      ...(options.onToolsChanged === undefined
        ? {}
        : { listChanged: toolsChanged(options) as never }),
    },
  );
  const connection = {
    client: client2026(client),
    tasks: undefined as UpstreamConnection['tasks'],
    onServerRequest: undefined as ServerRequestHandler | undefined,
    closed: false,
    sessionId: undefined,
    close: () => client.close(),
  };
  const forward = (method: string) => async (request: { params?: unknown }) => {
    const handler = connection.onServerRequest;
    if (handler === undefined) {
      throw new Error(`${method} arrived with no call in progress on this connection`);
    }
    return (await handler(method, (request.params ?? {}) as JsonObject)) as never;
  };
  client.setRequestHandler('elicitation/create', forward('elicitation/create'));
  client.setRequestHandler('sampling/createMessage', forward('sampling/createMessage'));
  const gate = notificationGate(options);
  client.onclose = () => {
    connection.closed = true;
    gate.stop();
    options.onClose?.();
  };
  const transport = transport2026(options);
  try {
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    client.onclose = () => undefined;
    await client.close().catch(() => undefined);
    throw error;
  }
  const catcher = new CreatedTaskCatcher();
  catcher.watch(transport);
  gate.guard(transport);
  connection.tasks = taskWire2026(client, catcher, CAPABILITIES);
  return connection;
}

function client2026(client: Client): UpstreamClient {
  return {
    callTool: async (params, options) => (await client.callTool(params, options)) as ToolResult,
    listTools: async (params) => (await client.listTools(params)) as { tools: Tool[] },
    getServerCapabilities: () => client.getServerCapabilities() as Record<string, unknown>,
    listResources: (params) => client.listResources(params),
    listResourceTemplates: (params) => client.listResourceTemplates(params),
    readResource: (params) => client.readResource(params as never),
    listPrompts: (params) => client.listPrompts(params),
    getPrompt: (params) => client.getPrompt(params as never),
  };
}

function transport2026({ spec, logger }: ConnectOptions): Transport {
  if (spec.kind === 'http') {
    return new StreamableHTTPClientTransport(spec.url, { requestInit: { headers: spec.headers } });
  }
  const transport = new UpstreamProcessTransport(spec.command, spec.args, inheritedEnv());
  logStderr(transport.stderr, logger);
  // The same newline-delimited JSON-RPC on a pipe as SDK v1's Transport, which it implements.
  return transport as unknown as Transport;
}
