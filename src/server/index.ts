/**
 * `taskrail/server`: put durable tasks on an MCP server (2026-07-28 tasks extension).
 *
 *   const app = createTaskServer({ store, name: 'my-server', version: '1.0.0' });
 *   app.tool('report', { description, inputSchema, task: true }, async (args, ctx) => { ... });
 *   await app.listen(3000);
 */
export { createTaskServer, DEFAULT_MAX_BODY_BYTES } from './app.js';
export type { HttpLimits, ListenInfo, TaskServer, TaskServerOptions } from './app.js';
export type { SessionLimits } from './wire-2025/sessions.js';
export { SERVER_TROUBLE_MESSAGE } from './tasks/server-trouble.js';
export { serveTaskServerStdio as serveStdio } from './stdio.js';
export { loadTokenFile, type TokenMap } from './http/auth.js';
export { ANONYMOUS } from './tasks/principal.js';
export type {
  BeforeTaskContext,
  BeforeTaskHook,
  BeforeTaskOutcome,
  HandlerFor,
  InstanceContext,
  McpConfigurer,
  TaskToolConfig,
  ToolArgs,
  ToolResultFor,
  ToolSchema,
  TypedToolHandler,
} from './tasks/types.js';
export type {
  ConcurrencyKeyFunction,
  ConcurrencyOptions,
  ElicitAnswer,
  ElicitParams,
  ProgressUpdate,
  TaskContext,
  TaskMode,
  TaskOption,
  TaskSettings,
  ToolHandler,
  ToolResult,
} from '../runtime/tool.js';
export { RpcError, RPC } from '../task/errors.js';
export { TASKS_EXTENSION } from '../protocol/constants.js';
