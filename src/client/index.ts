/**
 * `taskrail/client`: call MCP tools that may become tasks (2026-07-28 `io.modelcontextprotocol/tasks`),
 * with a durable ledger, polling by `pollIntervalMs`, input answering, cancel-and-wait and
 * schema validation, in background or synchronous mode.
 */
export { TaskrailClient, type TaskrailClientOptions, type CallToolOptions } from './host-client.js';
export {
  resumeLedger,
  watchedElsewhere,
  type ResumeOptions,
  type ResumedTask,
  type Resumption,
} from './resume.js';
export type { ToolCall } from './tool-call.js';
export { exitCodeFor, resultText, type CallOutcome, type OutcomeKind } from './outcome.js';
export { Ledger, defaultHome } from './ledger.js';
export { clientOptionsFromEnv, type EnvironmentOptions } from './env.js';
export {
  MemoryLedger,
  isFinal,
  type LedgerEntry,
  type LedgerStatus,
  type Observation,
  type Settlement,
  type TaskLedger,
} from './ledger-port.js';
export { inputCapabilities, type InputContext, type InputHandlers } from './input.js';
export type { TaskEvent } from './task-watch.js';
export type { PushOptions } from './subscribe.js';
export {
  createHttpDispatch,
  encodeHeaderValue,
  withEnvelope,
  PROTOCOL_VERSION,
  TASKS_EXTENSION_ID,
  type HttpDispatchOptions,
  type JsonRecord,
  type JsonValue,
  type RawDispatch,
  type RequestFraming,
  type RpcErrorObject,
  type RpcReply,
} from './rpc-http.js';
export { SchemaChecker } from './schema-check.js';
export { TaskRpc } from './task-rpc.js';
export type { CallToolResult } from './wire.js';
export type {
  CreateTaskResult,
  DetailedTask,
  InputRequest,
  InputRequests,
  Tool,
} from './wire-types.js';
export { TaskrailClientError, isClientError, type ClientErrorCode } from './errors.js';
export { TaskResources } from './resources-client.js';
export type { FollowOptions } from './output-follow.js';
export {
  isShortened,
  parseTaskResourceUri,
  shortenedLinks,
  taskResourceUri,
  withRange,
  type Range,
  type ResourceLink,
  type TaskResourceKind,
} from './resources.js';
