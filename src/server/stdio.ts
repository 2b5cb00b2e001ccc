import type { JSONRPCMessage, McpServer, Transport } from '@modelcontextprotocol/server';
import {
  serveStdio,
  StdioServerTransport,
  type StdioServerHandle,
} from '@modelcontextprotocol/server/stdio';
import {
  checkEnvelope,
  internalError,
  isIncomingRequest,
  isWire2026Request,
  isObject,
  isRemovedTaskMethod,
  isTaskMethod,
  isWireError,
  readRequest,
  type IncomingRequest,
  type RequestId,
  type WireError,
} from '../protocol/index.js';
import type { JsonObject } from '../task/record.js';
import type { TaskServer } from './app.js';
import { missingFor } from './wire-2026/capability-gate.js';
import { buildMcpServer, followToolChanges } from './sdk/mcp-server.js';
import { ANONYMOUS, authInfoFor } from './tasks/principal.js';
import { wireOfSdkEra, type SdkEra } from './sdk/era.js';
import { answerTaskRequest, type TaskAnswer } from './tasks/operations.js';
import { asksForTasks, listenHubOf, openMessageListen } from './listen/index.js';
import { buildStdioSessionServer } from './wire-2025/stdio-session.js';

/** stdio has no headers: every check reads the body alone. */
const NO_HEADERS = (): undefined => undefined;

type Send = (message: object) => void;

function frame(id: RequestId, answer: TaskAnswer | { error: WireError }): object {
  return 'error' in answer
    ? { jsonrpc: '2.0', id, error: answer.error.error }
    : { jsonrpc: '2.0', id, result: answer.result };
}

/**
 * What taskrail answers itself on a stdio connection, before the SDK's entry sees the message
 * (HTTP does the same in front.ts): the 2026-07-28 `tasks/*` methods through the shared
 * implementation, task `subscriptions/listen` streams (the SDK's listen router drops task ids),
 * and the -32021 of a `tools/call` whose tool needs a capability the request lacks (the SDK
 * would turn that error into an `isError` result). Only the framing is stdio's.
 */
class StdioFront {
  readonly #server: TaskServer;
  readonly #principal: string;
  readonly #send: Send;
  readonly #serverInfo: JsonObject;
  /** Open task streams by listen request id (the id `notifications/cancelled` names). */
  readonly #listens = new Map<RequestId, () => void>();

  constructor(server: TaskServer, principal: string, send: Send) {
    this.#server = server;
    this.#principal = principal;
    this.#send = send;
    const deps = server.instanceDeps;
    this.#serverInfo = { name: deps.name, version: deps.version };
  }

  /** True when the message was answered here and must not reach the SDK. */
  take(message: JSONRPCMessage): boolean {
    const req = readRequest(message);
    if (!isIncomingRequest(req)) return false;
    if (req.method === 'notifications/cancelled') return this.#cancelListen(req.params);
    if (!isWire2026Request(NO_HEADERS, req.params)) return false;
    if (isTaskMethod(req.method) || isRemovedTaskMethod(req.method)) {
      void this.#answer(req);
      return true;
    }
    if (asksForTasks(req)) return this.#listen(req);
    return this.#gate(req);
  }

  /** Ends every open task stream (the connection is gone). */
  close(): void {
    for (const stop of [...this.#listens.values()]) stop();
  }

  async #answer(req: IncomingRequest): Promise<void> {
    const envelope = checkEnvelope(req.params, NO_HEADERS);
    let answer: TaskAnswer | undefined;
    try {
      answer = isWireError(envelope)
        ? { error: envelope }
        : await answerTaskRequest(
            this.#server.instanceDeps.runtime(),
            req,
            envelope,
            this.#principal,
            this.#serverInfo,
          );
    } catch {
      answer = { error: internalError() };
    }
    if (answer !== undefined && req.id !== undefined) this.#send(frame(req.id, answer));
  }

  #listen(req: IncomingRequest): boolean {
    const hub = listenHubOf(this.#server.runtime);
    if (hub === undefined) return false;
    const opened = openMessageListen(hub, req, this.#principal, this.#serverInfo, this.#send);
    if ('error' in opened) {
      if (req.id !== undefined) this.#send(frame(req.id, opened));
      return true;
    }
    const id = req.id as RequestId;
    this.#listens.set(id, opened.stop);
    opened.done(() => this.#listens.delete(id));
    return true;
  }

  #cancelListen(params: unknown): boolean {
    const requestId = isObject(params) ? params['requestId'] : undefined;
    const stop = this.#listens.get(requestId as RequestId);
    if (stop === undefined) return false;
    stop();
    return true;
  }

  /** With fallback tools a required tool answers hosts without tasks, as on HTTP. */
  #gate(req: IncomingRequest): boolean {
    if (req.method !== 'tools/call' || req.id === undefined) return false;
    if (this.#server.instanceDeps.fallbackTools === true) return false;
    const envelope = checkEnvelope(req.params, NO_HEADERS);
    if (isWireError(envelope)) return false;
    const missing = missingFor(this.#server.tools, req, envelope);
    if (missing === undefined) return false;
    this.#send(frame(req.id, { error: missing }));
    return true;
  }
}

/** The wire transport with the front in it: the SDK's entry sees only what the front passes. */
function frontedTransport(inner: Transport, server: TaskServer, principal: string): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
  };
  const send: Send = (message) => {
    inner.send(message as JSONRPCMessage).catch((error: unknown) => {
      outer.onerror?.(error as Error);
    });
  };
  const front = new StdioFront(server, principal, send);
  inner.onmessage = (message, extra) => {
    if (!front.take(message)) outer.onmessage?.(message, extra);
  };
  inner.onclose = () => {
    front.close();
    outer.onclose?.();
  };
  inner.onerror = (error) => outer.onerror?.(error);
  return outer;
}

/**
 * Makes `principal` the caller of every request the SDK server handles on this connection, both
 * wires: its handlers (tools/call, the 2025-11-25 `tasks/*`) read the principal from the
 * request's AuthInfo (core/principal.ts), which stdio has none of. serveStdio passes no
 * per-message extra to the instance, so the delivery the SDK installs on connect is wrapped.
 */
function actingAs(mcp: McpServer, principal: string): McpServer {
  const authInfo = authInfoFor(principal, 'stdio');
  const connect = mcp.connect.bind(mcp);
  mcp.connect = async (transport: Transport): Promise<void> => {
    await connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => deliver?.(message, { ...extra, authInfo });
  };
  return mcp;
}

/** The SDK server of one stdio connection, for the wire its opening message picked. */
function connectionServer(server: TaskServer, era: SdkEra, principal: string): McpServer {
  const wire = wireOfSdkEra(era);
  // Without 2025-11-25 sessions (`wire2025Sessions: false`) `initialize` gets the plain SDK
  // server, without tasks, as on HTTP.
  const sessions = server.wire2025Deps;
  if (wire === '2025-11-25' && sessions !== undefined) {
    return buildStdioSessionServer(sessions, principal);
  }
  const mcp = buildMcpServer(server.instanceDeps, { wire, principal });
  // One instance serves the whole connection (the process), so it follows later tool changes.
  followToolChanges(mcp, server.instanceDeps);
  return mcp;
}

/**
 * MCP over stdin/stdout for hosts that start the server themselves. Every request on the
 * connection is `principal`'s (`anonymous` unless given), on both wires; tasks outlive the
 * process on a durable store. The opening message picks the wire for the connection: a
 * 2026-07-28 request is served as on stateless HTTP, an `initialize` by the 2025-11-25 session
 * server HTTP sessions use (or, with `wire2025Sessions: false`, without tasks as on HTTP).
 */
export function serveTaskServerStdio(
  server: TaskServer,
  principal = ANONYMOUS,
  transport: Transport = new StdioServerTransport(),
): StdioServerHandle {
  if (server.tools.hasTaskTools()) server.runtime.start();
  const factory = (ctx: { era: SdkEra }): McpServer =>
    actingAs(connectionServer(server, ctx.era, principal), principal);
  return serveStdio(factory, { transport: frontedTransport(transport, server, principal) });
}
