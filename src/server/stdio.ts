import {
  ProtocolError,
  type JSONRPCMessage,
  type McpServer,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import {
  serveStdio,
  StdioServerTransport,
  type StdioServerHandle,
} from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';
import {
  checkEnvelope,
  declaresTasks,
  encodeAck,
  encodeGetTaskResult,
  isIncomingRequest,
  isWireError,
  missingTasksCapability,
  readRequest,
  taskNotFound,
  type WireError,
} from '../protocol/index.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
import type { TaskServer } from './app.js';
import { missingFor } from './front-gates.js';
import { buildMcpServer, followToolChanges } from './core/mcp-instance.js';
import type { ToolRegistry } from './core/registry.js';
import { ANONYMOUS, envelopeCapabilities } from './core/principal.js';
import type { TaskRuntimeFace } from './core/runtime-port.js';
import { isServerTrouble, troubleProtocolError } from './core/server-trouble.js';
import { objectResponses } from './core/tool-call.js';

function protocolError(wire: WireError): ProtocolError {
  return new ProtocolError(wire.error.code, wire.error.message, wire.error.data);
}

const TaskIdParams = z.looseObject({ taskId: z.string() });

type Lookup = (
  runtime: TaskRuntimeFace,
  id: string,
  ctx: ServerContext,
) => Promise<TaskRecord | undefined>;

function taskMethod(
  runtime: TaskRuntimeFace,
  lookup: Lookup,
  encode: (task: TaskRecord) => JsonObject,
) {
  return async (params: { taskId: string }, ctx: ServerContext) => {
    if (!declaresTasks(envelopeCapabilities(ctx))) {
      throw protocolError(missingTasksCapability());
    }
    const task = await lookup(runtime, params.taskId, ctx).catch((error: unknown) => {
      throw isServerTrouble(error) ? troubleProtocolError() : error;
    });
    if (task === undefined) throw protocolError(taskNotFound());
    return encode(task) as { resultType: 'complete' };
  };
}

/** The `tasks/*` methods as SDK handlers (3-argument form, so the modern era gate lets them in). */
export function registerTaskMethods(
  mcp: McpServer,
  runtime: TaskRuntimeFace,
  principal: string,
): void {
  mcp.server.setRequestHandler(
    'tasks/get',
    { params: TaskIdParams },
    taskMethod(runtime, (rt, id) => rt.getTask(id, principal), encodeGetTaskResult),
  );
  mcp.server.setRequestHandler(
    'tasks/update',
    { params: TaskIdParams },
    taskMethod(
      runtime,
      (rt, id, ctx) => rt.answerInput(id, principal, objectResponses(ctx.mcpReq.inputResponses)),
      encodeAck,
    ),
  );
  mcp.server.setRequestHandler(
    'tasks/cancel',
    { params: TaskIdParams },
    taskMethod(runtime, (rt, id) => rt.cancelTask(id, principal), encodeAck),
  );
}

/** The -32021 answer a modern `tools/call` earns before the SDK sees it (stdio has no headers). */
function gateReply(tools: ToolRegistry, message: JSONRPCMessage): JSONRPCMessage | undefined {
  const req = readRequest(message);
  if (!isIncomingRequest(req) || req.method !== 'tools/call' || req.id === undefined) return;
  const envelope = checkEnvelope(req.params, () => undefined);
  if (isWireError(envelope)) return undefined;
  const missing = missingFor(tools, req, envelope);
  if (missing === undefined) return undefined;
  return { jsonrpc: '2.0', id: req.id, error: missing.error } as JSONRPCMessage;
}

/**
 * Answers the capability gate itself and passes everything else through: the SDK would turn
 * the -32021 thrown by a tool into an `isError` result (HTTP has the same gate in front.ts).
 */
function gatedTransport(inner: Transport, tools: ToolRegistry): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
  };
  inner.onmessage = (message, extra) => {
    const reply = gateReply(tools, message);
    if (reply === undefined) return outer.onmessage?.(message, extra);
    inner.send(reply).catch((error: unknown) => outer.onerror?.(error as Error));
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (error) => outer.onerror?.(error);
  return outer;
}

/**
 * MCP over stdin/stdout for hosts that start the server themselves. Every stdio caller is one
 * principal (`anonymous` unless given); tasks outlive the process on a durable store.
 */
export function serveTaskServerStdio(
  server: TaskServer,
  principal = ANONYMOUS,
  transport: Transport = new StdioServerTransport(),
): StdioServerHandle {
  if (server.tools.hasTaskTools()) server.runtime.start();
  const factory = (ctx: { era: 'legacy' | 'modern' }): McpServer => {
    const mcp = buildMcpServer(server.instanceDeps, { era: ctx.era, principal });
    registerTaskMethods(mcp, server.instanceDeps.runtime(), principal);
    // One instance serves the whole connection (the process), so it follows later tool changes.
    followToolChanges(mcp, server.instanceDeps);
    return mcp;
  };
  // With fallback tools a required tool answers hosts without tasks, as on HTTP.
  const gated =
    server.instanceDeps.fallbackTools === true
      ? transport
      : gatedTransport(transport, server.tools);
  return serveStdio(factory, { transport: gated });
}
