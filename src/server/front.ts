import {
  invalidRequest,
  isIncomingRequest,
  isModernRequest,
  isObject,
  isRemovedTaskMethod,
  isTaskMethod,
  isWireError,
  missingTasksCapability,
  parseError,
  peekId,
  readRequest,
  type HeaderReader,
  type IncomingRequest,
} from '../protocol/index.js';
import type { JsonObject } from '../task/record.js';
import { nestingExceeds } from './body.js';
import { routeListen, type ListenHub, type ListenStream } from './listen/index.js';
import type { ToolRegistry } from './registry.js';
import type { TaskRuntimeFace } from './runtime-port.js';
import { checkModern, errorReply, serveTaskMethod, type Reply } from './task-methods.js';

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

/** A required task tool called by a client that did not declare the extension on this request. */
function requiredToolGate(
  deps: FrontDeps,
  req: IncomingRequest,
  headers: HeaderReader,
): Reply | undefined {
  if (!isObject(req.params) || typeof req.params['name'] !== 'string') return undefined;
  const tool = deps.tools.get(req.params['name']);
  if (tool?.task.mode !== 'required') return undefined;
  const checked = checkModern(req, headers);
  if (isWireError(checked) || checked.declaresTasks) return undefined;
  return errorReply(req.id ?? null, missingTasksCapability());
}

/**
 * The checked fast path in front of the SDK: `tasks/*` on the modern wire are answered here
 * (a per-request SDK server instance costs far more than the store read), as are malformed
 * bodies and the -32021 gate of required tools. Everything else goes to the SDK handler.
 */
export async function decide(
  deps: FrontDeps,
  text: string,
  headers: HeaderReader,
  principal: string,
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
  const modern = isModernRequest(headers, req.params);
  if (modern && (isTaskMethod(req.method) || isRemovedTaskMethod(req.method))) {
    const reply = await serveTaskMethod(deps.runtime(), req, headers, principal, deps.serverInfo);
    return { kind: 'reply', reply };
  }
  const listen = modern ? routeListen(deps, req, headers, principal) : undefined;
  if (listen !== undefined) return listen;
  if (modern && req.method === 'tools/call' && deps.fallbackTools !== true) {
    const gate = requiredToolGate(deps, req, headers);
    if (gate !== undefined) return { kind: 'reply', reply: gate };
  }
  return { kind: 'delegate', parsed: body };
}
