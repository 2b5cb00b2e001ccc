import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  declaresTasks,
  isObject,
  META,
  metaOf,
  withStructuredText,
  type HeaderReader,
  type IncomingRequest,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { JsonObject } from '../../task/record.js';
import { missingFor } from './capability-gate.js';
import { isJsonContentType, mirrorsParamHeaders, validArguments } from './plain-call.js';
import { encodePlainResult, sdkResultMessage } from './result-encoding.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import { callBehindTheScenes, DEFAULT_INLINE_WAIT_MS } from '../tasks/inline-wait.js';
import { sdkResultEncoder, type EncodedReply } from '../sdk/encode-result.js';
import { isServerTrouble, troubleWire } from '../tasks/server-trouble.js';
import { isQueueFull, queueFullWire } from '../tasks/queue-full.js';
import { errorReply, type Carrier, type Reply, type Wire2026Deps } from './call.js';
import type { RegisteredTaskTool } from '../tasks/types.js';
import { envelopeClientInfo, hostProfile, UNKNOWN_HOST } from '../tasks/host-profiles.js';

/** What the SDK path answers a caller that went away: nothing it can read. */
const GONE: Reply = { status: 499, body: '' };

/** The only `tools/call` params a plain call carries. */
const PLAIN_PARAMS = new Set(['name', 'arguments', '_meta']);

type Outcome = { result: CallToolResult } | { trouble: true } | { refused: WireError };

const encoders = new WeakMap<object, ReturnType<typeof sdkResultEncoder>>();

/**
 * A 2026-07-28 `tools/call` of a task-capable tool from a host without tasks, answered without
 * an SDK server instance: the task behind the scenes and its inline wait are the SDK path's own
 * (tasks/inline-wait.ts); only the request checks and the encoding of the answer are done here.
 * Whatever the SDK might answer differently (a `progressToken`, which needs an SSE answer; MRTR
 * retries; `beforeTask`; `Mcp-Param-*` headers; arguments its schema refuses; envelope or header
 * errors, a known host) returns undefined and goes to the SDK unchanged. A result the front cannot encode
 * byte for byte as the SDK does is encoded by the SDK (sdk/encode-result.ts).
 */
export async function callInFront(
  deps: Wire2026Deps,
  req: IncomingRequest,
  envelope: Wire2026Envelope,
  carrier: Carrier,
): Promise<Reply | undefined> {
  const { headers, principal } = carrier;
  const tool = plainSyncTool(deps, req, headers);
  if (tool === undefined || req.id === undefined || envelope.declaresTasks) return undefined;
  if (missingFor(deps.tools, req, envelope) !== undefined) return undefined;
  const raw = (req.params as JsonObject)['arguments'];
  if (raw !== undefined && !isObject(raw)) return undefined;
  const args = await validArguments(tool, raw);
  if (args === undefined) return undefined;
  const signal = carrier.closed();
  const caller = { principal, clientCapabilities: envelope.clientCapabilities, wire2026: true };
  const outcome = await runInline(deps, tool, args, { ...caller, inputResponses: {} }, signal);
  if (signal.aborted) return GONE;
  if ('trouble' in outcome) return errorReply(req.id, troubleWire());
  // The cap's refusal, HTTP 429 with Retry-After as on the task path: no task, nothing ran.
  if ('refused' in outcome) return errorReply(req.id, outcome.refused);
  const plain = encodePlainResult(outcome.result, deps.serverInfo);
  if (plain !== undefined) return { status: 200, body: sdkResultMessage(req.id, plain) };
  const body = { jsonrpc: '2.0', id: req.id, method: req.method, params: req.params ?? {} };
  return encodeWithSdk(deps, body, headers, outcome.result);
}

async function runInline(
  deps: Wire2026Deps,
  tool: RegisteredTaskTool,
  args: JsonObject,
  caller: Parameters<typeof callBehindTheScenes>[3],
  signal: AbortSignal,
): Promise<Outcome> {
  const settings = {
    fallbackTools: deps.fallbackTools === true,
    inlineWaitMs: deps.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS,
  };
  const runtime = deps.runtime();
  try {
    return {
      result: withStructuredText(
        await callBehindTheScenes(runtime, tool, args, caller, { signal }, settings),
      ),
    };
  } catch (error) {
    if (isServerTrouble(error)) return { trouble: true };
    if (isQueueFull(error)) return { refused: queueFullWire(error) };
    // McpServer answers anything else a tool callback throws as an isError result.
    const text = error instanceof Error ? error.message : String(error);
    return { result: { content: [{ type: 'text', text }], isError: true } };
  }
}

function encodeWithSdk(
  deps: Wire2026Deps,
  body: JsonObject,
  headers: HeaderReader,
  result: CallToolResult,
): Promise<EncodedReply> {
  let encode = encoders.get(deps);
  if (encode === undefined) encoders.set(deps, (encode = sdkResultEncoder(deps.serverInfo)));
  return encode(body, headers, result);
}

/** The task-capable tool a plain synchronous call names, if the request is that simple. */
function plainSyncTool(
  deps: Wire2026Deps,
  req: IncomingRequest,
  headers: HeaderReader,
): RegisteredTaskTool | undefined {
  const params = req.params;
  if (!isObject(params) || typeof params['name'] !== 'string') return undefined;
  const meta = metaOf(params);
  if (declaresTasks(meta?.[META.clientCapabilities])) return undefined;
  // A known host's inline wait and result form are the SDK path's (sdk/host-of.ts).
  if (hostProfile(envelopeClientInfo(meta)) !== UNKNOWN_HOST) return undefined;
  // A progressToken asks for notifications/progress: the SDK answers those over SSE.
  if (meta !== undefined && 'progressToken' in meta) return undefined;
  for (const key in params) if (!PLAIN_PARAMS.has(key)) return undefined;
  if (!isJsonContentType(headers('content-type'))) return undefined;
  return taskCapable(deps.tools, params['name'], deps.fallbackRequired === true);
}

function taskCapable(
  tools: ToolRegistry,
  name: string,
  fallbackRequired: boolean,
): RegisteredTaskTool | undefined {
  const tool = tools.definition(name);
  if (tool === undefined || tool.config.beforeTask !== undefined) return undefined;
  const mode = normalizeTaskOption(tool.config.task).mode;
  if (mode === 'forbidden' || (mode === 'required' && !fallbackRequired)) return undefined;
  return mirrorsParamHeaders(tool) ? undefined : tool;
}
