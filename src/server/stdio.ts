import type { JSONRPCMessage, McpServer, Transport } from '@modelcontextprotocol/server';
import {
  serveStdio,
  StdioServerTransport,
  type StdioServerHandle,
} from '@modelcontextprotocol/server/stdio';
import {
  internalError,
  isIncomingRequest,
  isObject,
  readRequest,
  type IncomingRequest,
  type RequestId,
} from '../protocol/index.js';
import type { TaskServer } from './app.js';
import { buildMcpServer, followToolChanges } from './sdk/mcp-server.js';
import { ANONYMOUS, authenticatedPrincipal, authInfoFor } from './tasks/principal.js';
import { wireOfSdkEra, type SdkEra } from './sdk/era.js';
import { listenHubOf, openMessageListen } from './listen/index.js';
import { errorReply, type Answer, type Carrier, type Wire2026Deps } from './wire-2026/call.js';
import { classify, route } from './wire-2026/route.js';
import { buildStdioSessionServer } from './wire-2025/stdio-session.js';
import { CANCELLED_NOTIFICATION, WIRE_2025_VERSION } from '../protocol/constants.js';

/** stdio has no headers: every check reads the body alone. */
const NO_HEADERS = (): undefined => undefined;

/** A stdio request is never abandoned halfway: the connection is the caller. */
const NEVER_CLOSED = (): AbortSignal => new AbortController().signal;

type Send = (message: object) => void;

/**
 * The 2026-07-28 route (wire-2026/route.ts) on a stdio connection, before the SDK's entry sees
 * the message: what the route answers goes out as a JSON-RPC line, a task stream opens as
 * messages, the rest reaches the SDK in order. Only the framing is stdio's.
 */
class StdioFront {
  readonly #deps: Wire2026Deps;
  readonly #carrier: Carrier;
  readonly #send: Send;
  /** Open task streams by listen request id (the id `notifications/cancelled` names). */
  readonly #listens = new Map<RequestId, () => void>();

  constructor(server: TaskServer, principal: string, send: Send) {
    const deps = server.instanceDeps;
    this.#deps = {
      runtime: deps.runtime,
      tools: server.tools,
      serverInfo: { name: deps.name, version: deps.version },
      fallbackTools: deps.fallbackTools === true,
      listen: listenHubOf(server.runtime),
    };
    this.#carrier = {
      headers: NO_HEADERS,
      routingHeaders: false,
      toolsCallFastPath: false,
      refusesInitialize: false,
      principal,
      closed: NEVER_CLOSED,
    };
    this.#send = send;
  }

  /** Answers the message here, or hands it to the SDK with `pass`. */
  take(message: JSONRPCMessage, pass: () => void): void {
    const req = readRequest(message);
    if (isIncomingRequest(req) && req.method === CANCELLED_NOTIFICATION) {
      if (!this.#cancelListen(req.params)) pass();
      return;
    }
    const classified = classify(message, NO_HEADERS);
    if (classified.kind !== 'wire-2026') return pass();
    let answer: Answer | Promise<Answer>;
    try {
      answer = route(this.#deps, classified.req, this.#carrier);
    } catch {
      return this.#failed(classified.req);
    }
    // What the route hands to the SDK it decides at once on stdio (no fast path), so the SDK
    // sees messages in their order; an answer that takes I/O (tasks/*) goes out when ready.
    if (!(answer instanceof Promise)) return this.#deliver(classified.req, answer, pass);
    answer.then(
      (ready) => this.#deliver(classified.req, ready, pass),
      () => this.#failed(classified.req),
    );
  }

  /** Ends every open task stream (the connection is gone). */
  close(): void {
    for (const stop of [...this.#listens.values()]) stop();
  }

  #deliver(req: IncomingRequest, answer: Answer, pass: () => void): void {
    if (answer.kind === 'sdk') return pass();
    // A notification gets no answer (HTTP says 202; stdio says nothing).
    if (req.id === undefined) return;
    if (answer.kind === 'reply') {
      if (answer.reply.body !== '') this.#send(JSON.parse(answer.reply.body) as object);
      return;
    }
    const { hub, request } = answer;
    const { principal } = this.#carrier;
    const opened = openMessageListen(hub, request, principal, this.#deps.serverInfo, this.#send);
    const id = req.id;
    this.#listens.set(id, opened.stop);
    opened.done(() => this.#listens.delete(id));
  }

  /** A bug met while answering: the caller learns, the connection goes on. */
  #failed(req: IncomingRequest): void {
    const reply = errorReply(req.id ?? null, internalError());
    if (req.id !== undefined) this.#send(JSON.parse(reply.body) as object);
  }

  #cancelListen(params: unknown): boolean {
    const requestId = isObject(params) ? params['requestId'] : undefined;
    const stop = this.#listens.get(requestId as RequestId);
    if (stop === undefined) return false;
    stop();
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
    front.take(message, () => outer.onmessage?.(message, extra));
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
 * request's AuthInfo (tasks/principal.ts), which stdio has none of. serveStdio passes no
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
  if (wire === WIRE_2025_VERSION && sessions !== undefined) {
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
  const acting = principal === ANONYMOUS ? ANONYMOUS : authenticatedPrincipal(principal);
  const factory = (ctx: { era: SdkEra }): McpServer =>
    actingAs(connectionServer(server, ctx.era, acting), acting);
  return serveStdio(factory, { transport: frontedTransport(transport, server, acting) });
}
