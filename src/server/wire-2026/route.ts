import {
  checkEnvelope,
  checkRoutingHeaders,
  invalidRequest,
  isIncomingRequest,
  isObject,
  isWire2026Request,
  methodNotFound,
  peekId,
  readRequest,
  REMOVED_TASK_METHODS,
  TASK_METHODS,
  type HeaderReader,
  type IncomingRequest,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import {
  errorReply,
  replied,
  TO_SDK,
  type Answer,
  type Carrier,
  type Reply,
  type Wire2026Call,
  type Wire2026Deps,
} from './call.js';
import { listenMethod } from './listen.js';
import { tasksMethod } from './tasks.js';
import { toolsCallMethod } from './tools-call.js';
import { LISTEN_METHOD, TOOLS_CALL_METHOD } from '../../protocol/constants.js';

/**
 * The way in of the 2026-07-28 wire, for every transport (http.ts, stdio.ts): a message is
 * classified once (malformed, the SDK's, or one of the methods below), its envelope checked
 * once, then dispatched through one method table. A method answers, or hands the request to
 * the SDK's McpServer unchanged, so that both paths give the same answers.
 */

type Method = (deps: Wire2026Deps, call: Wire2026Call) => Answer | Promise<Answer>;

/** `initialize` does not exist on the stateless wire; only a 2025 client may open a session. */
const initialize: Method = (_deps, { req, carrier }) =>
  carrier.refusesInitialize
    ? replied(errorReply(req.id ?? null, methodNotFound(req.method)))
    : TO_SDK;

/** The methods taskrail answers itself on the 2026-07-28 wire; every other one is the SDK's. */
const METHODS: Readonly<Record<string, Method>> = {
  initialize,
  [TOOLS_CALL_METHOD]: toolsCallMethod,
  [LISTEN_METHOD]: listenMethod,
  // The removed `tasks/result|list` get their -32601 from the same implementation.
  ...Object.fromEntries([...TASK_METHODS, ...REMOVED_TASK_METHODS].map((m) => [m, tasksMethod])),
};

/** What a parsed message is: malformed (with its answer), the SDK's, or a method here. */
export type Classified =
  { kind: 'invalid'; reply: Reply } | { kind: 'sdk' } | { kind: 'wire-2026'; req: IncomingRequest };

const SDK_MESSAGE: Classified = Object.freeze({ kind: 'sdk' });

export function classify(body: unknown, headers: HeaderReader): Classified {
  if (Array.isArray(body)) {
    return {
      kind: 'invalid',
      reply: errorReply(null, invalidRequest('batches are not supported')),
    };
  }
  const req = readRequest(body);
  if (!isIncomingRequest(req)) {
    // A JSON-RPC response (to a request the SDK sent) is the SDK's to read.
    if (isObject(body) && body['method'] === undefined && body['jsonrpc'] === '2.0') {
      return SDK_MESSAGE;
    }
    return { kind: 'invalid', reply: errorReply(peekId(body), req) };
  }
  if (!Object.hasOwn(METHODS, req.method)) return SDK_MESSAGE;
  return isWire2026Request(headers, req.params) ? { kind: 'wire-2026', req } : SDK_MESSAGE;
}

/** Routing headers first (where the transport has them), then the `_meta` envelope. */
export function checkWire2026(
  req: IncomingRequest,
  headers: HeaderReader,
  routingHeaders: boolean,
): WireError | Wire2026Envelope {
  const mismatch = routingHeaders
    ? checkRoutingHeaders(req.method, req.params, headers)
    : undefined;
  return mismatch ?? checkEnvelope(req.params, headers);
}

/** Answers a request `classify` found to be a method here. */
export function route(
  deps: Wire2026Deps,
  req: IncomingRequest,
  carrier: Carrier,
): Answer | Promise<Answer> {
  const method = METHODS[req.method];
  if (method === undefined) return TO_SDK;
  const envelope = checkWire2026(req, carrier.headers, carrier.routingHeaders);
  return method(deps, { req, envelope, carrier });
}
