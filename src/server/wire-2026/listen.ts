import { asksForTasks, acceptListen } from '../listen/index.js';
import {
  errorReply,
  replied,
  TO_SDK,
  type Answer,
  type Wire2026Call,
  type Wire2026Deps,
} from './call.js';

/**
 * `subscriptions/listen` naming task ids: checked and reserved here, opened by the transport on
 * its own sink (SSE on HTTP, messages on stdio). Other listen requests are the SDK's.
 */
export function listenMethod(deps: Wire2026Deps, call: Wire2026Call): Answer {
  const hub = deps.listen;
  const { req } = call;
  if (hub === undefined || !asksForTasks(req)) return TO_SDK;
  const accepted = acceptListen(
    hub,
    req,
    call.envelope,
    call.carrier.principal,
    call.carrier.connection,
  );
  if ('httpStatus' in accepted) return replied(errorReply(req.id ?? null, accepted));
  return { kind: 'listen', hub, request: accepted };
}
