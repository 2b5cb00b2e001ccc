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
   * What happens when an attempt does not finish. `true` (default): a crash or a lost lease
   * re-runs it, up to 3 attempts, with finished steps and answered input replayed; a thrown
   * error or a time-out fails the task. `false`: the tool never runs twice (a crash ends the
   * task `failed` "interrupted"). An object sets the attempts and, with `onError: true`,
   * re-runs after errors and time-outs too, after a durable backoff wait.
   */
  retry?: boolean | RetryOptions;
  /**
   * The limit of one attempt in ms. At expiry the signal aborts, the slot is given back, and
   * whatever the handler does later is discarded; the attempt fails "timed out".
   */
  timeoutMs?: number;
  /**
   * At most `limit` attempts with the same key run at once, across every process on the store.
   * A task over the limit stays `working`, holds no slot, and starts as soon as a permit frees.
   */
  concurrency?: ConcurrencyOptions;
}

/** `concurrency` (see "Run policy" in docs/tool-authors.md). */
export interface ConcurrencyOptions {
  /** Attempts with the same key that may run at once; a positive integer. */
  limit: number;
  /**
   * `'tool'` (default): the tool's name; `'principal'`: the caller; or a function of the call,
   * computed once at creation and stored with the task. Keys are one namespace across tools.
   */
  key?: 'tool' | 'principal' | ConcurrencyKeyFunction;
}

export type ConcurrencyKeyFunction = (args: JsonObject, principal: string) => string;

/** `retry` as an object (see "Run policy" in docs/tool-authors.md). */
export interface RetryOptions {
  /** Every attempt counts, crashes and errors together. Default 3. */
  maxAttempts?: number;
  /** Re-run after a thrown error (not an RpcError/ProtocolError) or a time-out. Default false. */
  onError?: boolean;
  /** The wait before the second attempt, in ms. Default 1000. */
  backoffMs?: number;
  /** Each further wait is this many times longer. Default 2. */
  backoffFactor?: number;
  /** The longest wait, in ms. Default 60000. */
  maxBackoffMs?: number;
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
  /** 1 on the first attempt; 2, 3, … on re-runs after a crash, an error or a time-out. */
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
  /**
   * Append `text`, as given, to the task's output: durably, readable (and subscribable) as
   * `taskrail://tasks/ID/output` while the task runs and after it ends, until its TTL. Writes
   * are coalesced (at most five a second, and always before the task's outcome): the promise
   * resolves once the text is buffered, or, when much is buffered, once it is stored. Past the
   * bound (1,000,000 characters by default) the oldest output gives way. A call without a task
   * keeps no output.
   */
  output(text: string): Promise<void>;
  /** Run `fn` once per task: a finished step's value is recorded and returned on re-runs. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /**
   * A durable pause of `ms`: the task stays `working`, holds no slot, and goes on at the
   * original wake time on any process, also after a restart. The handler then runs again from
   * the start with finished steps (and this sleep) replayed, so code before it should be cheap
   * or wrapped in `step`. In a call without a task it is an ordinary in-process wait.
   */
  sleep(ms: number): Promise<void>;
}

/**
 * A tool's handler. `Args` and `Result` default to any object and any `CallToolResult`; `app.tool`
 * narrows them from the tool's `inputSchema` and `outputSchema`.
 */
export type ToolHandler<Args = JsonObject, Result extends ToolResult = ToolResult> = (
  args: Args,
  ctx: TaskContext,
) => Result | Promise<Result>;

/** What the runtime needs to know of a tool to run it as a task. */
export interface RunnableTool {
  name: string;
  task: TaskSettings;
  handler: ToolHandler;
  /**
   * The tool declares an outputSchema: its structuredContent is handed out whole however big
   * (a host checks it against the schema), never moved to the task's `structured` resource.
   */
  declaresOutputSchema?: boolean;
}
