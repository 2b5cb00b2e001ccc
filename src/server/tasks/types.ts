import type {
  McpServer,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from '@modelcontextprotocol/server';
import type { InputRequest, JsonObject } from '../../task/record.js';
import type { TaskOption, ToolHandler, ToolResult } from '../../runtime/tool.js';
import { WIRE_2025_VERSION, WIRE_2026_VERSION } from '../../protocol/constants.js';

/** What a tool may do before its task exists (MRTR rounds on the creating `tools/call`). */
export interface BeforeTaskContext {
  readonly principal: string;
  /** Answers carried by this retry of `tools/call`, keyed like the questions asked earlier. */
  readonly inputResponses: Record<string, JsonObject>;
  /** The client capabilities the creating request declared. */
  readonly clientCapabilities: JsonObject;
}

/**
 * `{ inputRequests }`: answer this `tools/call` with an InputRequiredResult (the client retries
 * with `inputResponses`). `{ arguments }`: create the task with these arguments instead.
 * Nothing: create the task with the call's arguments.
 */
export type BeforeTaskOutcome =
  { inputRequests: Record<string, InputRequest> } | { arguments: JsonObject } | undefined | void;

export type BeforeTaskHook = (
  args: JsonObject,
  ctx: BeforeTaskContext,
) => BeforeTaskOutcome | Promise<BeforeTaskOutcome>;

/** A tool's `inputSchema` or `outputSchema`: a zod v4 schema, or any Standard Schema with JSON Schema. */
export type ToolSchema = StandardSchemaWithJSON;

/**
 * The handler's `args`: what the `inputSchema` parses to (a zod object's `z.output`); any object
 * without a schema or with one that does not say (plain JSON Schema through `fromJsonSchema`).
 */
export type ToolArgs<InputSchema extends ToolSchema | undefined> = InputSchema extends ToolSchema
  ? unknown extends StandardSchemaWithJSON.InferOutput<InputSchema>
    ? JsonObject
    : StandardSchemaWithJSON.InferOutput<InputSchema>
  : JsonObject;

/**
 * What the handler returns: with an `outputSchema` that has a type, a result either carries
 * `structuredContent` of that type or is an error (`isError: true`); otherwise any result.
 */
export type ToolResultFor<OutputSchema extends ToolSchema | undefined> =
  OutputSchema extends ToolSchema
    ? unknown extends StandardSchemaWithJSON.InferInput<OutputSchema>
      ? ToolResult
      : ToolResult &
          (
            | { isError: true }
            | {
                isError?: boolean;
                structuredContent: StandardSchemaWithJSON.InferInput<OutputSchema>;
              }
          )
    : ToolResult;

/** A handler typed by its tool's schemas (see `ToolArgs` and `ToolResultFor`). */
export type TypedToolHandler<
  InputSchema extends ToolSchema | undefined,
  OutputSchema extends ToolSchema | undefined,
> = ToolHandler<ToolArgs<InputSchema>, ToolResultFor<OutputSchema>>;

/**
 * The handler of a tool registered with `config`. (Typed from the whole config, not from
 * schema type parameters: a parameter with nothing to infer from, like a missing outputSchema,
 * would leave a handler's bare `new Promise(...)` without a result type.)
 */
export type HandlerFor<Config extends TaskToolConfig> = TypedToolHandler<
  Config extends { inputSchema?: infer Schema extends ToolSchema } ? Schema : undefined,
  Config extends { outputSchema?: infer Schema extends ToolSchema } ? Schema : undefined
>;

/** Makes a misspelt key an error (a generic config is otherwise not checked for extra keys). */
export type NoUnknownKeys<Given, Known> = { [Key in Exclude<keyof Given, keyof Known>]: never };

export interface TaskToolConfig<
  InputSchema extends ToolSchema | undefined = ToolSchema | undefined,
  OutputSchema extends ToolSchema | undefined = ToolSchema | undefined,
> {
  title?: string;
  description: string;
  /**
   * A zod v4 object schema (any Standard Schema with JSON Schema conversion works); the handler's
   * `args` get its output type.
   */
  inputSchema?: InputSchema;
  /**
   * Advertised and checked for synchronous calls only (a task's result is checked by nobody);
   * the handler's `structuredContent` is checked against its type when it compiles.
   */
  outputSchema?: OutputSchema;
  annotations?: ToolAnnotations;
  /** `true` = optional, `false` (default) = forbidden, or `{ mode, pollIntervalMs, ttlMs, retry }`. */
  task?: TaskOption;
  beforeTask?: BeforeTaskHook;
  /**
   * Client capabilities a call needs (e.g. `{ sampling: {} }`). A 2026-07-28 request that does not
   * declare each top-level key gets -32021 with these as `requiredCapabilities`.
   */
  requiredClientCapabilities?: JsonObject;
  /**
   * 2025-11-25 wire only: text a host may show the model while the task runs, sent as
   * `_meta["io.modelcontextprotocol/model-immediate-response"]` on the CreateTaskResult.
   */
  modelImmediateResponse?: string;
  /**
   * The tool's `_meta` in `tools/list`, as given: e.g. `{ 'anthropic/maxResultSizeChars': 100000 }`
   * tells Claude Code how much of this tool's result to hand the model whole.
   */
  _meta?: JsonObject;
}

export interface RegisteredTaskTool {
  name: string;
  config: TaskToolConfig;
  handler: ToolHandler;
}

/** Context of one SDK server instance (one HTTP request, or one stdio connection). */
export interface InstanceContext {
  /** The wire this instance serves: 2026-07-28 (per request) or 2025-11-25 (a session). */
  wire: typeof WIRE_2026_VERSION | typeof WIRE_2025_VERSION;
  /** The authenticated principal, or `anonymous`. */
  principal: string;
}

/** Registers anything on the SDK server directly (resources, prompts, raw tools). */
export type McpConfigurer = (mcp: McpServer, ctx: InstanceContext) => void;

/** A raw SDK handler context, re-exported for raw tools. */
export type { ServerContext };
