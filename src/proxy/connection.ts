import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  CancelledNotificationSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../runtime/tool.js';
import type { JsonObject } from '../task/record.js';
import { connectWire2026 } from './client-2026.js';
import { taskWire2025, type UpstreamTaskWire } from './task-wire-2025.js';
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
import { UpstreamProcessTransport } from './upstream-process.js';
import type { UpstreamSpec } from './upstream-spec.js';

/** How long an upstream has to answer `initialize` (started and fetched, for `npx -y …`). */
export const UPSTREAM_CONNECT_TIMEOUT_MS = 60_000;

/** Upstreams found to speak only 2026-07-28: later connections go straight to the SDK v2 client. */
const only2026 = new WeakSet<UpstreamSpec>();

/**
 * One client session with the upstream. Made with the official SDK v1 client first: the SDK v2
 * client no longer carries the 2025-11-25 task wire (tasks/get, tasks/result with queued
 * elicitations) that existing servers speak, and a proxy must follow their tasks. An upstream
 * that refuses `initialize` (2026-07-28 only) gets the SDK v2 client pinned to 2026-07-28.
 */
export async function connectUpstream(options: ConnectOptions): Promise<UpstreamConnection> {
  if (only2026.has(options.spec)) return connectWire2026(options);
  try {
    return await connectWire2025(options);
  } catch (error2025) {
    if (options.sessionId !== undefined || !refusedHandshake(error2025)) throw error2025;
    try {
      const connection = await connectWire2026(options);
      only2026.add(options.spec);
      options.logger.info('the upstream speaks MCP 2026-07-28 only', {});
      return connection;
    } catch {
      throw error2025;
    }
  }
}

/**
 * True when the upstream answered but refused `initialize` (it may speak only 2026-07-28);
 * false when it could not be reached or went away (a dead child, a refused connection), where
 * another try with another client would only start another child for nothing.
 */
function refusedHandshake(error: unknown): boolean {
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return false;
  const message = error instanceof Error ? error.message : String(error);
  return !/connection closed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|fetch failed|socket hang up|timed out|ENOENT|EACCES/i.test(
    message,
  );
}

async function connectWire2025(options: ConnectOptions): Promise<UpstreamConnection> {
  const client = new Client(
    { name: 'taskrail-proxy', version: options.version },
    {
      capabilities: { elicitation: { form: {} }, sampling: {} },
      ...(options.onToolsChanged === undefined ? {} : { listChanged: toolsChanged(options) }),
    },
  );
  const transport = transport2025(options);
  const connection = {
    client: client2025(client),
    tasks: undefined as UpstreamTaskWire | undefined,
    onServerRequest: undefined as ServerRequestHandler | undefined,
    closed: false,
    get sessionId() {
      return transport.sessionId;
    },
    close: () => client.close(),
  };
  const withdrawals = new Withdrawals(client);
  const forward =
    (method: string) =>
    async (request: { params: unknown }, extra: { signal: AbortSignal; requestId: RequestId }) => {
      const handler = connection.onServerRequest;
      if (handler === undefined) {
        throw new Error(`${method} arrived with no call in progress on this connection`);
      }
      const withdrawn = withdrawals.open(extra.requestId, extra.signal);
      try {
        // The SDK's result schemas check the answer's shape before it goes upstream.
        return (await handler(method, request.params as JsonObject, withdrawn)) as never;
      } finally {
        withdrawals.close(extra.requestId);
      }
    };
  client.setRequestHandler(ElicitRequestSchema, forward('elicitation/create'));
  client.setRequestHandler(CreateMessageRequestSchema, forward('sampling/createMessage'));
  const gate = notificationGate(options);
  client.onclose = () => {
    connection.closed = true;
    gate.stop();
    options.onClose?.();
  };
  await connectOrClose(client, transport, connection);
  gate.guard(transport);
  connection.tasks = taskWire2025(client, options.sessionId !== undefined);
  return connection;
}

/**
 * The upstream's requests to us that it may still withdraw. SDK v1 drops a
 * `notifications/cancelled` for request id 0 (a falsy check), and 0 is the id of the first
 * question every new upstream session asks, so its cancellations are handled here.
 */
class Withdrawals {
  readonly #open = new Map<RequestId, AbortController>();

  constructor(client: Client) {
    client.setNotificationHandler(CancelledNotificationSchema, (notification) => {
      const { requestId, reason } = notification.params;
      if (requestId !== undefined) this.#open.get(requestId)?.abort(reason ?? 'cancelled');
    });
  }

  /** A signal that fires when the upstream withdraws `id` or its session ends (`ended`). */
  open(id: RequestId, ended: AbortSignal): AbortSignal {
    const controller = new AbortController();
    this.#open.set(id, controller);
    ended.addEventListener('abort', () => controller.abort(ended.reason), { once: true });
    return controller.signal;
  }

  close(id: RequestId): void {
    this.#open.delete(id);
  }
}

/** A failed connect still started a child or a stream: close it, quietly, before retrying. */
async function connectOrClose(
  client: Client,
  transport: Transport,
  connection: { closed: boolean },
): Promise<void> {
  try {
    await client.connect(transport, { timeout: UPSTREAM_CONNECT_TIMEOUT_MS });
  } catch (error) {
    client.onclose = () => undefined;
    connection.closed = true;
    await client.close().catch(() => undefined);
    throw error;
  }
}

function client2025(client: Client): UpstreamClient {
  return {
    callTool: async (params, options) =>
      (await client.callTool(params, CallToolResultSchema, options)) as ToolResult,
    listTools: (params) => client.listTools(params),
    getServerCapabilities: () => client.getServerCapabilities(),
    listResources: (params) => client.listResources(params),
    listResourceTemplates: (params) => client.listResourceTemplates(params),
    readResource: (params) => client.readResource(params as never),
    listPrompts: (params) => client.listPrompts(params),
    getPrompt: (params) => client.getPrompt(params as never),
  };
}

export function transport2025({ spec, logger, sessionId }: ConnectOptions): Transport {
  if (spec.kind === 'http') {
    // With a session id the SDK client skips `initialize` and rejoins that session.
    return new StreamableHTTPClientTransport(spec.url, {
      requestInit: { headers: spec.headers },
      ...(sessionId === undefined ? {} : { sessionId }),
    });
  }
  const transport = new UpstreamProcessTransport(spec.command, spec.args, inheritedEnv());
  logStderr(transport.stderr, logger);
  return transport;
}
