import { isWireError, type IncomingRequest, type Wire2026Envelope } from '../../protocol/index.js';
import {
  errorReply,
  replied,
  TO_SDK,
  type Answer,
  type Carrier,
  type Wire2026Call,
  type Wire2026Deps,
} from './call.js';
import { missingFor } from './capability-gate.js';
import { createInFront } from './tools-call-create.js';
import { callInFront } from './tools-call-inline.js';

/**
 * `tools/call` on the 2026-07-28 wire. First the -32021 of a tool that needs a capability the
 * request lacks (the SDK would turn that error into an `isError` result). Then, where the
 * transport has the fast path, a plain call of a task tool: a task created
 * (tools-call-create.ts), or a host without tasks served inline (tools-call-inline.ts).
 * Everything else, envelope and header errors included, is the SDK's to answer.
 */
export function toolsCallMethod(deps: Wire2026Deps, call: Wire2026Call): Answer | Promise<Answer> {
  const { req, envelope, carrier } = call;
  if (isWireError(envelope)) return TO_SDK;
  if (deps.fallbackRequired !== true) {
    const missing = missingFor(deps.tools, req, envelope);
    if (missing !== undefined) return replied(errorReply(req.id ?? null, missing));
  }
  // Decided at once where there is no fast path: stdio hands the message on in order.
  if (!carrier.toolsCallFastPath) return TO_SDK;
  return fastPath(deps, req, envelope, carrier);
}

async function fastPath(
  deps: Wire2026Deps,
  req: IncomingRequest,
  envelope: Wire2026Envelope,
  carrier: Carrier,
): Promise<Answer> {
  const created = await createInFront(deps, req, envelope, carrier);
  if (created !== undefined) return replied(created);
  const answered = await callInFront(deps, req, envelope, carrier);
  return answered === undefined ? TO_SDK : replied(answered);
}
