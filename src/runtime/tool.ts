import type { InputRequest, JsonObject } from '../task/record.js';

/**
 * The tool author's view of the runtime: task modes, and the context a handler runs with.
 * The MCP face (`taskrail/server`) adds schemas and descriptions on top of this.
 */
export type TaskMode = 'optional' | 'required' | 'forbidden';

export interface TaskSettings {
  mode: TaskMode;
  /** Suggested polling interval for clients, in ms. */
  pollIntervalMs?: number;
  /** Retention from creation in ms; `null` = unlimited (only where the server allows it). */
  ttlMs?: number | null;
  /**
   * What happens when the process running the task dies. `true` (default): re-run it, up to
   * `maxAttempts` (default 3), with finished steps and answered input replayed. `false`: the
   * tool must not run twice, so the task ends `failed` with an "interrupted" error.
   */
  retry?: boolean | { maxAttempts: number };
}

/** `true` = optional, `false` = forbidden, or the full settings. */
export type TaskOption = boolean | TaskSettings;

export function normalizeTaskOption(option: TaskOption | undefined): TaskSettings {
  if (option === undefined || option === false) return { mode: 'forbidden' };
  if (option === true) return { mode: 'optional' };
  return option;
}

export interface ProgressUpdate {
  /** Absolute progress so far. */
  progress?: number;
  /** Added to the progress so far. */
  increment?: number;
  total?: number;
  message?: string;
}

/** The answer to an `elicitation/create` input request. */
export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: { [key: string]: string | number | boolean | string[] };
}

export interface ElicitParams {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: { [key: string]: JsonObject };
    required?: string[];
  };
}

/** A finished tool call: an MCP `CallToolResult` (content, structuredContent, isError, …). */
export type ToolResult = JsonObject & { content?: unknown[]; isError?: boolean };

export interface TaskContext {
  /** The task id, or undefined when the call runs synchronously (no task). */
  readonly taskId: string | undefined;
  /** Who called: the authenticated principal, or `anonymous`. */
  readonly principal: string;
  /** 1 on the first run; higher when re-run after a crash. */
  readonly attempt: number;
  /** Fires when the task is cancelled (from any process) or the server shuts down. */
  readonly signal: AbortSignal;
  /** Report progress; surfaces as the task's `statusMessage`. Writes are throttled. */
  progress(update: ProgressUpdate | string): Promise<void>;
  /**
   * Ask the client for input. Resolves with the answers once every key is answered. While
   * waiting the task is `input_required` and holds no worker: the handler is re-run from the
   * start when the answers arrive, with finished `step`s and earlier answers replayed, so code
   * before a question should be cheap or wrapped in `step`.
   */
  input(
    requests: Record<string, InputRequest>,
    statusMessage?: string,
  ): Promise<Record<string, JsonObject>>;
  /** `input` for one elicitation. */
  elicit(key: string, params: ElicitParams): Promise<ElicitAnswer>;
  /** Run `fn` once per task: a finished step's value is recorded and returned on re-runs. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
}

export type ToolHandler = (args: JsonObject, ctx: TaskContext) => ToolResult | Promise<ToolResult>;

/** What the runtime needs to know of a tool to run it as a task. */
export interface RunnableTool {
  name: string;
  task: TaskSettings;
  handler: ToolHandler;
}
