import type { ProtocolError } from '@modelcontextprotocol/server';
import { troubleProtocolError } from '../tasks/server-trouble.js';
import type { ToolsCallWrapper } from './tools-call-hook.js';

/** The contexts of `tools/call`s whose taskrail tool callback met store trouble or a refusal. */
const troubledCalls = new WeakMap<object, ProtocolError>();

/**
 * Called where a tool callback meets store trouble, before McpServer hides it in a result.
 * `ctx` is the one McpServer hands the callback: the same object its `tools/call` handler got.
 */
export function noteCallTrouble(ctx: object, answer: ProtocolError = troubleProtocolError()): void {
  troubledCalls.set(ctx, answer);
}

/**
 * McpServer turns anything a tool callback throws into an `isError` result (the tool's final
 * word to a host). Around its `tools/call` handler (see tools-call-hook.ts), store trouble met
 * by a taskrail tool callback leaves as the retryable -32603 instead, and a create refused by
 * the per-principal cap as its JSON-RPC error (HTTP 429).
 */
export const surfaceCallTrouble: ToolsCallWrapper = (sdk) => async (request, ctx) => {
  const result = await sdk(request, ctx);
  const answer = troubledCalls.get(ctx);
  if (answer !== undefined) throw answer;
  return result;
};
