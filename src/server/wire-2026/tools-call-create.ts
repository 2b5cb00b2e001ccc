import {
  declaresTasks,
  encodeCreateTaskResult,
  isObject,
  META,
  metaOf,
  resultMessage,
  type HeaderReader,
  type IncomingRequest,
  type Wire2026Envelope,
} from '../../protocol/index.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { JsonObject } from '../../task/record.js';
import { missingFor } from './capability-gate.js';
import { isJsonContentType, mirrorsParamHeaders, validArguments } from './plain-call.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import { isServerTrouble, troubleWire } from '../tasks/server-trouble.js';
import { isQueueFull, queueFullWire } from '../tasks/queue-full.js';
import { errorReply, type Carrier, type Reply, type Wire2026Deps } from './call.js';
import { startToolTask } from '../tasks/create-input.js';
import type { RegisteredTaskTool } from '../tasks/types.js';
import { envelopeClientInfo, hostProfile } from '../tasks/host-profiles.js';

/**
 * A 2026-07-28 `tools/call` that creates a task, answered without an SDK server instance: building
 * one per request costs several times the task's own durable write. Only the plain case is
 * taken here. Whatever the SDK might answer differently (arguments its schema refuses, MRTR
 * retries, `beforeTask` hooks, envelope or header errors, a body that is not JSON, Copilot
 * CLI) returns
 * undefined and goes to the SDK unchanged, so both paths give the same answers.
 */
export async function createInFront(
  deps: Wire2026Deps,
  req: IncomingRequest,
  envelope: Wire2026Envelope,
  carrier: Carrier,
): Promise<Reply | undefined> {
  const tool = plainTaskTool(deps.tools, req, carrier.headers);
  if (tool === undefined || req.id === undefined || !envelope.declaresTasks) return undefined;
  if (missingFor(deps.tools, req, envelope) !== undefined) return undefined;
  const args = await validArguments(tool, (req.params as JsonObject)['arguments']);
  if (args === undefined) return undefined;
  const meta = { [META.serverInfo]: deps.serverInfo };
  let result: JsonObject;
  try {
    const task = await startToolTask(deps.runtime(), tool, args, {
      principal: carrier.principal,
      clientCapabilities: envelope.clientCapabilities,
      meta: (req.params as JsonObject)['_meta'],
    });
    // `content: []` as the SDK's CallToolResult projection adds it on its path.
    result = encodeCreateTaskResult(task, { content: [] }) as unknown as JsonObject;
    result['_meta'] = meta;
  } catch (error) {
    if (isServerTrouble(error)) return errorReply(req.id, troubleWire());
    if (isQueueFull(error)) return errorReply(req.id, queueFullWire(error));
    // The SDK answers an error thrown by a tool as an isError result; so does this path.
    const text = error instanceof Error ? error.message : String(error);
    result = { content: [{ type: 'text', text }], isError: true, resultType: 'complete' };
    result['_meta'] = meta;
  }
  return { status: 200, body: resultMessage(req.id, result) };
}

/** The taskrail tool a plain task-creating call names, if the request is that simple. */
function plainTaskTool(
  tools: ToolRegistry,
  req: IncomingRequest,
  headers: HeaderReader,
): RegisteredTaskTool | undefined {
  const params = req.params;
  if (!isObject(params) || typeof params['name'] !== 'string') return undefined;
  // Most calls that are not tasks stop here, before any header or envelope parsing.
  const meta = metaOf(params);
  if (!declaresTasks(meta?.[META.clientCapabilities])) return undefined;
  // A host that follows only required tools as tasks (Copilot --experimental): the SDK path.
  if (hostProfile(envelopeClientInfo(meta)).tasksOnlyWhenRequired === true) return undefined;
  if ('inputResponses' in params || 'requestState' in params) return undefined;
  if (!isJsonContentType(headers('content-type'))) return undefined;
  const tool = tools.definition(params['name']);
  if (tool === undefined || tool.config.beforeTask !== undefined) return undefined;
  if (mirrorsParamHeaders(tool)) return undefined;
  return normalizeTaskOption(tool.config.task).mode === 'forbidden' ? undefined : tool;
}
