import type { WriteFence } from '../store/port.js';
import { splitText, splitsPair } from '../store/text.js';
import { isStoreUnavailable, protocolErrorObject, RPC, RpcError } from '../task/errors.js';
import type { JsonObject } from '../task/record.js';
import { isFencedOut, FencedOut } from './fence.js';
import { outcomeOfResult, type Outcome } from './outcome.js';
import type { RunnerSettings } from './runner-settings.js';
import { withStoreRetry } from './store-health.js';
import type { ToolResult } from './tool.js';

/**
 * The `_meta` key of a stored result whose whole text was moved out of the record into the
 * task's `result` text: `{ chars, bytes }` of that whole text (its text blocks joined by a
 * newline). The record keeps the first part of the text; the server shortens it on the way out.
 */
export const KEPT_APART_META = 'taskrail/result-kept-apart';

export interface KeptApart {
  chars: number;
  bytes: number;
}

/** The text blocks of a result, joined by a newline, as `resources/read` returns them. */
export function resultText(result: JsonObject): string {
  const content = Array.isArray(result['content']) ? (result['content'] as unknown[]) : [];
  const texts = content.flatMap((block) => (isTextBlock(block) ? [block.text] : []));
  return texts.join('\n');
}

export function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  return (
    typeof block === 'object' &&
    block !== null &&
    (block as { type?: unknown }).type === 'text' &&
    typeof (block as { text?: unknown }).text === 'string'
  );
}

/** The whole-text size a result kept apart records, if it was. */
export function keptApart(result: JsonObject | undefined): KeptApart | undefined {
  const meta = result?.['_meta'];
  if (typeof meta !== 'object' || meta === null) return undefined;
  const kept = (meta as Record<string, unknown>)[KEPT_APART_META] as Partial<KeptApart> | undefined;
  return typeof kept?.chars === 'number' && typeof kept.bytes === 'number'
    ? { chars: kept.chars, bytes: kept.bytes }
    : undefined;
}

function textLength(result: ToolResult): number {
  const content = Array.isArray(result.content) ? result.content : [];
  let length = 0;
  for (const block of content) if (isTextBlock(block)) length += block.text.length + 1;
  return length;
}

/**
 * A result whose text is longer than `settings.inlineResultChars` has its whole text written to
 * the task's `result` text (chunk by chunk, under the attempt's fence, so no write holds the
 * event loop on megabytes), and the record keeps the first part of it. Smaller results pass.
 */
export async function keepBigResultApart(
  settings: RunnerSettings,
  taskId: string,
  result: ToolResult,
  fence: WriteFence | undefined,
): Promise<ToolResult> {
  if (result === null || typeof result !== 'object') return result;
  if (textLength(result) <= settings.inlineResultChars + 1) return result;
  const whole = resultText(result);
  if (whole.length > settings.maxResultTextChars) {
    throw new RpcError(
      RPC.INTERNAL_ERROR,
      `the tool's result has ${whole.length} characters of text; this server keeps at most ${settings.maxResultTextChars}`,
    );
  }
  for (const chunk of splitText(whole)) await appendResultChunk(settings, taskId, chunk, fence);
  let keep = Math.min(whole.length, settings.inlineResultChars);
  if (splitsPair(whole, keep)) keep -= 1;
  const content = (result.content ?? []).filter((block) => !isTextBlock(block));
  const meta =
    typeof result['_meta'] === 'object' && result['_meta'] !== null ? result['_meta'] : {};
  const kept: KeptApart = { chars: whole.length, bytes: Buffer.byteLength(whole, 'utf8') };
  return {
    ...result,
    content: [{ type: 'text', text: whole.slice(0, keep) }, ...content],
    _meta: { ...(meta as JsonObject), [KEPT_APART_META]: { ...kept } },
  };
}

async function appendResultChunk(
  settings: RunnerSettings,
  taskId: string,
  chunk: string,
  fence: WriteFence | undefined,
): Promise<void> {
  const outcome = await withStoreRetry(
    () => settings.store.appendText(taskId, 'result', chunk, fence === undefined ? {} : { fence }),
    { health: settings.health, operation: 'keep the result', budgetMs: settings.writeBudgetMs },
  );
  if (!outcome.ok) throw new FencedOut(taskId);
}

/**
 * The outcome of a returned result, its text kept apart first if it is big: 'fenced' when the
 * store refused a chunk (another attempt holds the task), 'unwritten' when it stayed unavailable.
 */
export async function outcomeOfBigResult(
  settings: RunnerSettings,
  taskId: string,
  returned: ToolResult,
  fence: WriteFence | undefined,
): Promise<Outcome | 'fenced' | 'unwritten'> {
  try {
    const result = await keepBigResultApart(settings, taskId, returned, fence);
    return outcomeOfResult(result, settings.maxResultBytes);
  } catch (error) {
    if (isFencedOut(error)) return 'fenced';
    if (isStoreUnavailable(error)) return 'unwritten';
    const wire = protocolErrorObject(error);
    if (wire !== undefined) return { error: wire };
    throw error;
  }
}
