import type { JsonRpcErrorObject } from '../task/errors.js';
import type { CallToolResult } from './wire.js';

/**
 * How a tool call ended, with the kinds kept strictly apart:
 * - `completed`: the tool returned a result;
 * - `tool_error`: it returned `isError: true` (a domain error; the task itself `completed`);
 * - `failed`: a JSON-RPC error (the task `failed`, or the call was refused outright);
 * - `cancelled`: the task ended `cancelled`;
 * - `lost`: the server no longer knows the task (unknown or expired, -32602 on `tasks/get`);
 * - `rejected`: the arguments broke the tool's `inputSchema`; nothing was sent;
 * - `invalid_output`: `structuredContent` broke the tool's `outputSchema`.
 */
export type CallOutcome =
  | { kind: 'completed'; taskId?: string; result: CallToolResult }
  | { kind: 'tool_error'; taskId?: string; result: CallToolResult }
  | { kind: 'failed'; taskId?: string; error: JsonRpcErrorObject }
  | { kind: 'cancelled'; taskId: string; statusMessage?: string }
  | { kind: 'lost'; taskId: string; error: JsonRpcErrorObject }
  | { kind: 'rejected'; errors: string[] }
  | { kind: 'invalid_output'; taskId?: string; result: CallToolResult; errors: string[] };

export type OutcomeKind = CallOutcome['kind'];

/** The exit codes of `taskrail call`, `tasks` and `admin`: one per outcome. */
export const EXIT_CODES: Readonly<Record<OutcomeKind, number>> = {
  completed: 0,
  tool_error: 1,
  failed: 2,
  invalid_output: 2,
  cancelled: 3,
  lost: 4,
  rejected: 5,
};

/** A command line the CLI cannot run (a bad flag, a missing argument). */
export const EXIT_USAGE = 4;

/** The exit code of `taskrail call` for how the call ended. */
export function exitCodeFor(outcome: CallOutcome): number {
  return EXIT_CODES[outcome.kind];
}

/** The text content of a result, joined by newlines (what a terminal user wants to read). */
export function resultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const block of result.content) {
    const b = block as {
      type?: unknown;
      text?: unknown;
      uri?: unknown;
      resource?: { uri?: unknown };
    };
    if (b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else if (b.type === 'resource_link' && typeof b.uri === 'string') parts.push(b.uri);
    else if (b.type === 'resource' && typeof b.resource?.uri === 'string')
      parts.push(b.resource.uri);
    else if (typeof b.type === 'string') parts.push(`[${b.type}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  return parts.join('\n');
}
