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
 * A result whose text is longer than `settings.maxResultChars` has its whole text written to the
 * task's `result` text (chunk by chunk, under the attempt's fence, so no write holds the event
 * loop on megabytes), and is stored shortened (see `shortened`). Smaller results pass.
 */
export async function keepBigResultApart(
  settings: RunnerSettings,
  taskId: string,
  result: ToolResult,
  fence: WriteFence | undefined,
): Promise<ToolResult> {
  if (result === null || typeof result !== 'object') return result;
  if (textLength(result) <= settings.maxResultChars + 1) return result;
  const whole = resultText(result);
  if (whole.length <= settings.maxResultChars) return result;
  if (whole.length > settings.maxResultTextChars) {
    throw new RpcError(
      RPC.INTERNAL_ERROR,
      `the tool's result has ${whole.length} characters of text; this server keeps at most ${settings.maxResultTextChars}`,
    );
  }
  for (const chunk of splitText(whole)) await appendResultChunk(settings, taskId, chunk, fence);
  return shortened(result, taskId, whole, settings.maxResultChars);
}

/**
 * The result as handed out: one line telling the model it was shortened and how to read the
 * rest, the first part of the text, then a `resource_link` to the whole text; the text blocks
 * and the link together stay within `maxChars` characters. Other blocks stay as they were.
 */
export function shortened(
  result: ToolResult,
  taskId: string,
  whole: string,
  maxChars: number,
): ToolResult {
  const uri = `taskrail://tasks/${taskId}/result`;
  const kept: KeptApart = { chars: whole.length, bytes: Buffer.byteLength(whole, 'utf8') };
  const link = {
    type: 'resource_link',
    uri,
    name: `result of task ${taskId}`,
    mimeType: 'text/plain',
    size: kept.bytes,
  };
  const notice = (shown: number) =>
    `[This result was shortened: it has ${kept.chars} characters and only the first ${shown} ` +
    `follow. Read the rest with the MCP resource ${uri}?offset=${shown}&length=${maxChars} ` +
    `(offset and length count characters; raise offset by length for each further page).]\n`;
  const room = maxChars - JSON.stringify(link).length - notice(kept.chars).length;
  let shown = Math.max(0, Math.min(whole.length, room));
  if (splitsPair(whole, shown)) shown -= 1;
  const others = (result.content ?? []).filter((block) => !isTextBlock(block));
  const meta =
    typeof result['_meta'] === 'object' && result['_meta'] !== null ? result['_meta'] : {};
  return {
    ...result,
    content: [{ type: 'text', text: notice(shown) + whole.slice(0, shown) }, ...others, link],
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
