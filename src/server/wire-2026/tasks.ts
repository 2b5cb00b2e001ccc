import { isWireError, resultMessageOfJson, type RequestId } from '../../protocol/index.js';
import { runTaskRequest, taskResult } from '../tasks/operations.js';
import { errorReply, replied, type Answer, type Wire2026Call, type Wire2026Deps } from './call.js';
import { taskGetCacheOf } from './tasks-get-cache.js';

/**
 * `tasks/*` on the 2026-07-28 wire (the removed `tasks/result|list` included), for every
 * transport: the shared implementation (tasks/operations.ts) carries the method out; this
 * frames its answer. A polled task that has not changed reuses its serialized answer
 * (tasks-get-cache.ts). A notification (no id) gets no answer: HTTP 202.
 */
export async function tasksMethod(deps: Wire2026Deps, call: Wire2026Call): Promise<Answer> {
  const { req, envelope } = call;
  const id = req.id ?? null;
  if (isWireError(envelope)) return replied(errorReply(id, envelope));
  const outcome = await runTaskRequest(deps.runtime(), req, envelope, call.carrier.principal);
  if (outcome === undefined) return replied({ status: 202, body: '' });
  if ('error' in outcome) return replied(errorReply(id, outcome.error));
  const json =
    req.method === 'tasks/get'
      ? taskGetCacheOf(deps.serverInfo).json(outcome.task)
      : JSON.stringify(taskResult(req.method, outcome.task, deps.serverInfo));
  return replied({ status: 200, body: resultMessageOfJson(id as RequestId, json) });
}
