import {
  CreateMessageResultV2Schema,
  ElicitResultV2Schema,
  ListRootsResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { TaskrailClientError } from './errors.js';

type JsonObject = Record<string, unknown>;

export interface InputContext {
  /** The task asking, or undefined during MRTR rounds before a task exists. */
  taskId?: string;
  tool: string;
  /** The server's key for this request (unique for the task's life). */
  key: string;
  signal: AbortSignal;
}

/** The host's answers to a task's `inputRequests` (treated exactly like standalone requests). */
export interface InputHandlers {
  /** `elicitation/create`: return `{ action: 'accept' | 'decline' | 'cancel', content? }`. */
  elicitation?: (params: JsonObject, context: InputContext) => Promise<JsonObject>;
  /** `sampling/createMessage` (deprecated in 2026-07-28, still answered). */
  sampling?: (params: JsonObject, context: InputContext) => Promise<JsonObject>;
  /** `roots/list` (deprecated in 2026-07-28, still answered). */
  roots?: (context: InputContext) => Promise<JsonObject>;
}

/** The capabilities that match the handlers given: a server must not ask for anything else. */
export function inputCapabilities(handlers: InputHandlers): JsonObject {
  const caps: JsonObject = {};
  if (handlers.elicitation) caps.elicitation = { form: {} };
  if (handlers.sampling) caps.sampling = {};
  if (handlers.roots) caps.roots = {};
  return caps;
}

/**
 * Answers every request whose key is not in `skip`, in key order. A handler that is missing or
 * throws `INPUT_UNAVAILABLE` stops the round: nothing is sent, the task stays parked, and the
 * caller (e.g. `taskrail tasks answer`) can answer later.
 */
export async function answerInputRequests(
  requests: Record<string, unknown>,
  skip: ReadonlySet<string>,
  handlers: InputHandlers,
  base: Omit<InputContext, 'key'>,
): Promise<Record<string, JsonObject>> {
  const responses: Record<string, JsonObject> = {};
  for (const [key, request] of Object.entries(requests)) {
    if (skip.has(key)) continue;
    responses[key] = await answerOne(request as JsonObject, handlers, { ...base, key });
  }
  return responses;
}

async function answerOne(
  request: JsonObject,
  handlers: InputHandlers,
  context: InputContext,
): Promise<JsonObject> {
  const method = request.method;
  const params = (request.params ?? {}) as JsonObject;
  if (method === 'elicitation/create' && handlers.elicitation) {
    return checked(ElicitResultV2Schema, await handlers.elicitation(params, context), method);
  }
  if (method === 'sampling/createMessage' && handlers.sampling) {
    return checked(CreateMessageResultV2Schema, await handlers.sampling(params, context), method);
  }
  if (method === 'roots/list' && handlers.roots) {
    return checked(ListRootsResultV2Schema, await handlers.roots(context), method);
  }
  throw new TaskrailClientError(
    'INPUT_UNAVAILABLE',
    `the server asks for ${String(method)} (key '${context.key}') and this host has no handler for it`,
  );
}

interface SafeParser {
  safeParse(value: unknown): { success: boolean; error?: { message: string } };
}

function checked(schema: SafeParser, value: JsonObject, method: string): JsonObject {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new TaskrailClientError(
      'USAGE',
      `the ${method} handler returned an invalid answer: ${parsed.error?.message}`,
    );
  }
  return value;
}
