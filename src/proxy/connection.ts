import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../runtime/api.js';
import type { JsonObject } from '../task/record.js';
import type { UpstreamSpec } from './upstream-spec.js';

/** A request the upstream sent us (elicitation or sampling), to be answered by the caller. */
export type ServerRequestHandler = (method: string, params: JsonObject) => Promise<JsonObject>;

export interface UpstreamConnection {
  readonly client: Client;
  /** Where this connection's server→client requests go; set by whoever holds it. */
  onServerRequest: ServerRequestHandler | undefined;
  readonly closed: boolean;
  /** The upstream's HTTP session id (2025-11-25 sessions), which scopes its tasks. */
  readonly sessionId: string | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  spec: UpstreamSpec;
  logger: Logger;
  version: string;
  /** Called with the upstream's new tool list when it says its tools changed. */
  onToolsChanged?: (tools: Tool[]) => void;
  /** Called once when the session ends (a stdio child that exited, a closed HTTP session). */
  onClose?: () => void;
  /** Rejoin this HTTP session instead of opening one (to follow a task it holds). */
  sessionId?: string;
}

/**
 * One client session with the upstream, made with the official SDK v1 client: the v2 client
 * no longer carries the 2025-11-25 task wire (tasks/get, tasks/result with queued
 * elicitations) that existing servers speak, and a proxy must follow their tasks.
 */
export async function connectUpstream(options: ConnectOptions): Promise<UpstreamConnection> {
  const client = new Client(
    { name: 'taskrail-proxy', version: options.version },
    {
      capabilities: { elicitation: { form: {} }, sampling: {} },
      ...(options.onToolsChanged === undefined ? {} : { listChanged: toolsChanged(options) }),
    },
  );
  const transport = transportFor(options);
  const connection = {
    client,
    onServerRequest: undefined as ServerRequestHandler | undefined,
    closed: false,
    get sessionId() {
      return transport.sessionId;
    },
    close: () => client.close(),
  };
  const forward = (method: string) => async (request: { params: unknown }) => {
    const handler = connection.onServerRequest;
    if (handler === undefined) {
      throw new Error(`${method} arrived with no call in progress on this connection`);
    }
    // The SDK's result schemas check the answer's shape before it goes upstream.
    return (await handler(method, request.params as JsonObject)) as never;
  };
  client.setRequestHandler(ElicitRequestSchema, forward('elicitation/create'));
  client.setRequestHandler(CreateMessageRequestSchema, forward('sampling/createMessage'));
  client.onclose = () => {
    connection.closed = true;
    options.onClose?.();
  };
  await client.connect(transport);
  return connection;
}

function toolsChanged(options: ConnectOptions) {
  return {
    tools: {
      onChanged: (error: Error | null, tools: Tool[] | null) => {
        if (error !== null) {
          options.logger.warn('upstream tools/list failed', { error: error.message });
        } else if (tools !== null) options.onToolsChanged?.(tools);
      },
    },
  };
}

function transportFor({ spec, logger, sessionId }: ConnectOptions): Transport {
  if (spec.kind === 'http') {
    // With a session id the SDK client skips `initialize` and rejoins that session.
    return new StreamableHTTPClientTransport(spec.url, {
      requestInit: { headers: spec.headers },
      ...(sessionId === undefined ? {} : { sessionId }),
    });
  }
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: inheritedEnv(),
    stderr: 'pipe',
  });
  const stderr = transport.stderr as Readable | null;
  if (stderr !== null) {
    createInterface({ input: stderr }).on('line', (line) =>
      logger.info('upstream stderr', { line }),
    );
  }
  return transport;
}

/** The child gets the proxy's environment: upstream credentials may come from there. */
function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}
