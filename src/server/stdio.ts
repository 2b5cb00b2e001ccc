import { ProtocolError, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';
import {
  declaresTasks,
  encodeAck,
  encodeGetTaskResult,
  missingTasksCapability,
  taskNotFound,
  type WireError,
} from '../protocol/index.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
import type { TaskServer } from './app.js';
import { buildMcpServer } from './mcp-instance.js';
import { ANONYMOUS, envelopeCapabilities } from './principal.js';
import type { TaskRuntimeFace } from './runtime-port.js';
import { objectResponses } from './tool-call.js';

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
    const task = await lookup(runtime, params.taskId, ctx);
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

/**
 * MCP over stdin/stdout for hosts that start the server themselves. Every stdio caller is one
 * principal (`anonymous` unless given); tasks outlive the process on a durable store.
 */
export function serveTaskServerStdio(server: TaskServer, principal = ANONYMOUS): StdioServerHandle {
  if (server.tools.hasTaskTools()) server.runtime.start();
  return serveStdio((ctx) => {
    const mcp = buildMcpServer(server.instanceDeps, { era: ctx.era, principal });
    registerTaskMethods(mcp, server.runtime, principal);
    return mcp;
  });
}
