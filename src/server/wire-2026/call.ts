import {
  errorMessage,
  type HeaderReader,
  type IncomingRequest,
  type RequestId,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import type { ListenHub, ListenRequest } from '../listen/index.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';

/** What the methods of the 2026-07-28 wire need: the same for every transport. */
export interface Wire2026Deps {
  runtime: () => TaskRuntimePort;
  tools: ToolRegistry;
  serverInfo: JsonObject;
  /** Fallback tools for hosts without tasks (handles, task_* tools). */
  fallbackTools?: boolean;
  /** A required tool answers hosts without tasks instead of -32021. */
  fallbackRequired?: boolean;
  /** How long a call from a host without tasks waits for its task (default 45 s). */
  inlineWaitMs?: number | undefined;
  /** Task notification streams (`subscriptions/listen` with taskIds); absent: left to the SDK. */
  listen?: ListenHub | undefined;
}

/** Aborted when the caller goes away (the transport knows how it learns that). */
export type ClosedSignal = () => AbortSignal;

/** How a transport carries a request: everything the route reads besides the body. */
export interface Carrier {
  /** HTTP's headers; stdio has none. */
  headers: HeaderReader;
  /** HTTP's routing headers (`Mcp-Method`, `Mcp-Name`) must match the body; stdio has none. */
  routingHeaders: boolean;
  /**
   * HTTP builds an SDK server per request, several times the cost of a task's durable write,
   * so a plain `tools/call` of a task tool is answered here; stdio keeps one SDK server per
   * connection and leaves `tools/call` to it, all but the -32021 gate.
   */
  toolsCallFastPath: boolean;
  /**
   * HTTP refuses `initialize` on the stateless wire (only a 2025 client opens a session there);
   * on stdio the SDK's connection answers it, as it picks the connection's wire.
   */
  refusesInitialize: boolean;
  principal: string;
  /** The caller's connection where the transport knows it: an anonymous caller's fair share. */
  connection?: string | undefined;
  closed: ClosedSignal;
}

/** A 2026-07-28 request classified once: the request, and its envelope checked once. */
export interface Wire2026Call {
  req: IncomingRequest;
  /** Routing headers (where the transport has them), then the `_meta` envelope. */
  envelope: WireError | Wire2026Envelope;
  carrier: Carrier;
}

/** A finished JSON-RPC answer: HTTP status and body (empty: no answer, HTTP 202). */
export interface Reply {
  status: number;
  body: string;
}

/** What a method answered: a reply, a task stream to open, or: the SDK answers this one. */
export type Answer =
  | { kind: 'reply'; reply: Reply }
  | { kind: 'listen'; hub: ListenHub; request: ListenRequest }
  | { kind: 'sdk' };

export const TO_SDK: Answer = Object.freeze({ kind: 'sdk' });

export function errorReply(id: RequestId | null, wire: WireError): Reply {
  return { status: wire.httpStatus, body: errorMessage(id, wire.error) };
}

export function replied(reply: Reply): Answer {
  return { kind: 'reply', reply };
}
