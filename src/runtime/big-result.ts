import type { TaskTextKind, WriteFence } from '../store/port.js';
import { splitText } from '../store/text.js';
import { isStoreUnavailable, protocolErrorObject, RPC, RpcError } from '../task/errors.js';
import type { JsonObject } from '../task/record.js';
import { isFencedOut, FencedOut } from './fence.js';
import { outcomeOfResult, type Outcome } from './outcome.js';
import type { RunnerSettings } from './runner-settings.js';
import { withStoreRetry } from './store-health.js';
import { isTextBlock, shortened, structuredOverhead } from './shortened-result.js';
import type { ToolResult } from './tool.js';

/** The text blocks of a result, joined by a newline, as `resources/read` returns them. */
export function resultText(result: JsonObject): string {
  const content = Array.isArray(result['content']) ? (result['content'] as unknown[]) : [];
  const texts = content.flatMap((block) => (isTextBlock(block) ? [block.text] : []));
  return texts.join('\n');
}

function textLength(result: ToolResult): number {
  const content = Array.isArray(result.content) ? result.content : [];
  let length = 0;
  for (const block of content) if (isTextBlock(block)) length += block.text.length + 1;
  return length;
}

/** The JSON of a structuredContent longer than `maxChars`, or undefined. */
function bigStructuredJson(result: ToolResult, maxChars: number): string | undefined {
  const structured = result['structuredContent'];
  if (typeof structured !== 'object' || structured === null) return undefined;
  const json = JSON.stringify(structured);
  return json.length > maxChars ? json : undefined;
}

/** The result without the text block that only repeats `json` (the spec's structured copy). */
export function withoutJsonCopy(result: ToolResult, json: string): ToolResult {
  if (!Array.isArray(result.content)) return result;
  return { ...result, content: result.content.filter((b) => !(isTextBlock(b) && b.text === json)) };
}

/** The whole text of the text blocks when it is longer than `room`, else undefined. */
function bigText(result: ToolResult, room: number): string | undefined {
  if (textLength(result) <= room + 1) return undefined;
  const whole = resultText(result);
  return whole.length > room ? whole : undefined;
}

function assertKeepable(settings: RunnerSettings, what: string, chars: number): void {
  if (chars <= settings.maxResultTextChars) return;
  throw new RpcError(
    RPC.INTERNAL_ERROR,
    `the tool's result has ${chars} characters of ${what}; this server keeps at most ${settings.maxResultTextChars}`,
  );
}

/**
 * A result whose text is longer than `settings.maxResultChars` has its whole text written to the
 * task's `result` text (chunk by chunk, under the attempt's fence, so no write holds the event
 * loop on megabytes); a `structuredContent` whose JSON is longer goes the same way to the
 * `structured` text, unless the tool declares an outputSchema (`keepsStructured`: a host checks
 * structuredContent against it, so it must stay). The result is stored as handed out
 * (`shortened`); smaller results pass.
 */
export async function keepBigResultApart(
  settings: RunnerSettings,
  taskId: string,
  result: ToolResult,
  fence: WriteFence | undefined,
  keepsStructured = false,
): Promise<ToolResult> {
  if (result === null || typeof result !== 'object') return result;
  const max = settings.maxResultChars;
  const structuredJson = keepsStructured ? undefined : bigStructuredJson(result, max);
  const texts = structuredJson === undefined ? result : withoutJsonCopy(result, structuredJson);
  const overhead =
    structuredJson === undefined ? 0 : structuredOverhead(taskId, structuredJson, max);
  const text = bigText(texts, max - overhead);
  if (structuredJson === undefined && text === undefined) return result;
  assertKeepable(settings, 'structuredContent JSON', structuredJson?.length ?? 0);
  assertKeepable(settings, 'text', text?.length ?? 0);
  const write = (kind: TaskTextKind, whole: string) =>
    appendWhole(settings, taskId, kind, whole, fence);
  if (structuredJson !== undefined) await write('structured', structuredJson);
  if (text !== undefined) await write('result', text);
  const parts = {
    ...(text === undefined ? {} : { text }),
    ...(structuredJson === undefined ? {} : { structuredJson }),
  };
  return shortened(texts, taskId, parts, max);
}

/** Whether keepBigResultApart would keep anything apart (its checks, in the same order). */
function isBig(settings: RunnerSettings, result: ToolResult, keepsStructured: boolean): boolean {
  if (result === null || typeof result !== 'object') return false;
  const max = settings.maxResultChars;
  if (!keepsStructured && bigStructuredJson(result, max) !== undefined) return true;
  return bigText(result, max) !== undefined;
}

async function appendWhole(
  settings: RunnerSettings,
  taskId: string,
  kind: TaskTextKind,
  whole: string,
  fence: WriteFence | undefined,
): Promise<void> {
  for (const chunk of splitText(whole)) await appendChunk(settings, taskId, kind, chunk, fence);
}

async function appendChunk(
  settings: RunnerSettings,
  taskId: string,
  kind: TaskTextKind,
  chunk: string,
  fence: WriteFence | undefined,
): Promise<void> {
  const outcome = await withStoreRetry(
    () => settings.store.appendText(taskId, kind, chunk, fence === undefined ? {} : { fence }),
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
  keepsStructured = false,
): Promise<Outcome | 'fenced' | 'unwritten'> {
  // A small result (most) passes without keepBigResultApart's promise and frame.
  if (!isBig(settings, returned, keepsStructured)) {
    return outcomeOfResult(returned, settings.maxResultBytes);
  }
  try {
    const result = await keepBigResultApart(settings, taskId, returned, fence, keepsStructured);
    return outcomeOfResult(result, settings.maxResultBytes);
  } catch (error) {
    if (isFencedOut(error)) return 'fenced';
    if (isStoreUnavailable(error)) return 'unwritten';
    const wire = protocolErrorObject(error);
    if (wire !== undefined) return { error: wire };
    throw error;
  }
}
