import {
  invalidRequest,
  isIncomingRequest,
  isWire2026Request,
  isObject,
  isRemovedTaskMethod,
  isTaskMethod,
  methodNotFound,
  parseError,
  peekId,
  readRequest,
  type HeaderReader,
} from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import { nestingExceeds } from '../http/body.js';
import { routeListen, type ListenHub, type ListenStream } from '../listen/index.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import type { TaskRuntimeFace } from '../tasks/runtime-port.js';
import { capabilityGate } from './capability-gate.js';
import { createInFront } from './tools-call-create.js';
import { callInFront, type ClosedSignal } from './tools-call-inline.js';
import { errorReply, serveTaskMethod, type Reply } from './tasks.js';

/** Either an answer made here, or the parsed body for the SDK handler. */
export type Decision =
  | { kind: 'reply'; reply: Reply }
  | { kind: 'delegate'; parsed: unknown }
  | { kind: 'stream'; stream: ListenStream };

export interface FrontDeps {
  runtime: () => TaskRuntimeFace;
  tools: ToolRegistry;
  serverInfo: JsonObject;
  /** With fallback tools a required tool answers hosts without tasks instead of -32021. */
  fallbackTools?: boolean;
  /** How long a call from a host without tasks waits for its task (default 45 s). */
  inlineWaitMs?: number | undefined;
  /** Task notification streams (`subscriptions/listen` with taskIds); absent: left to the SDK. */
  listen?: ListenHub | undefined;
}

const MAX_NESTING = 64;

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (nestingExceeds(text, MAX_NESTING)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const NEVER_CLOSED: ClosedSignal = () => new AbortController().signal;

/**
 * The checked fast path in front of the SDK: `tasks/*` and plain `tools/call` of task-capable
 * tools (task-creating, or synchronous from hosts without tasks) on the 2026-07-28 wire are
 * answered here (a per-request SDK server instance costs far more than the store read or
 * write), as are malformed bodies and the -32021 gate of required tools. Everything else goes
 * to the SDK handler. `closed`: aborted when the caller goes away.
 */
export async function decide(
  deps: FrontDeps,
  text: string,
  headers: HeaderReader,
  principal: string,
  closed: ClosedSignal = NEVER_CLOSED,
): Promise<Decision> {
  const parsed = parse(text);
  if (!parsed.ok) return { kind: 'reply', reply: errorReply(null, parseError()) };
  const body = parsed.value;
  if (Array.isArray(body)) {
    return { kind: 'reply', reply: errorReply(null, invalidRequest('batches are not supported')) };
  }
  const req = readRequest(body);
  if (!isIncomingRequest(req)) {
    if (isObject(body) && body['method'] === undefined && body['jsonrpc'] === '2.0') {
      return { kind: 'delegate', parsed: body };
    }
    return { kind: 'reply', reply: errorReply(peekId(body), req) };
  }
  const wire2026 = isWire2026Request(headers, req.params);
  // `initialize` does not exist on the stateless wire; only a 2025 client may open a session.
  if (wire2026 && req.method === 'initialize') {
    return { kind: 'reply', reply: errorReply(req.id ?? null, methodNotFound(req.method)) };
  }
  if (wire2026 && (isTaskMethod(req.method) || isRemovedTaskMethod(req.method))) {
    const reply = await serveTaskMethod(deps.runtime(), req, headers, principal, deps.serverInfo);
    return { kind: 'reply', reply };
  }
  const listen = wire2026 ? routeListen(deps, req, headers, principal) : undefined;
  if (listen !== undefined) return listen;
  if (wire2026 && req.method === 'tools/call') {
    const gate = deps.fallbackTools === true ? undefined : capabilityGate(deps.tools, req, headers);
    if (gate !== undefined) return { kind: 'reply', reply: gate };
    const created = await createInFront(deps, req, headers, principal);
    if (created !== undefined) return { kind: 'reply', reply: created };
    const answered = await callInFront(deps, req, headers, principal, closed);
    if (answered !== undefined) return { kind: 'reply', reply: answered };
  }
  return { kind: 'delegate', parsed: body };
}
