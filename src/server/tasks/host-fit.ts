import type { CallToolResult } from '@modelcontextprotocol/server';
import { isObject, withStructuredText } from '../../protocol/index.js';
import { resultText, withoutJsonCopy } from '../../runtime/big-result.js';
import { isTextBlock, shortened, structuredOverhead } from '../../runtime/shortened-result.js';
import type { ToolResult } from '../../runtime/tool.js';
import {
  KEPT_APART_META,
  keptApart,
  STRUCTURED_KEPT_APART_META,
  withoutStructuredNotice,
} from '../../task/kept-apart.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { resultCharsFor, UNKNOWN_HOST, type HostProfile } from './host-profiles.js';

/** How a result is made to fit the host that will show it. */
export interface HostFit {
  profile: HostProfile;
  /** The server's hand-out bound (`--max-result-chars`). */
  serverMaxChars: number;
  /** A task's text kept apart, whole (undefined when it is gone). */
  readWhole: (
    taskId: string,
    kind: 'result' | 'structured',
    chars: number,
  ) => Promise<string | undefined>;
}

/** Today's behaviour: the unknown host's view, results as stored. */
export const NO_FIT: HostFit = {
  profile: UNKNOWN_HOST,
  serverMaxChars: Infinity,
  readWhole: async () => undefined,
};

/**
 * A result in the form its host reads once: the JSON copy of `structuredContent` as text only
 * for a host not known to show `structuredContent` (one that shows both would read it twice).
 */
export function presentFor(profile: HostProfile, result: CallToolResult): CallToolResult {
  return profile.view === 'either' ? withStructuredText(result) : result;
}

/** The bytes a host that shows text and the JSON of structuredContent counts (Copilot CLI). */
function shownBytes(result: ToolResult): number {
  const content = Array.isArray(result.content) ? result.content : [];
  let bytes = 0;
  for (const block of content) if (isTextBlock(block)) bytes += Buffer.byteLength(block.text);
  const structured = result['structuredContent'];
  if (structured !== undefined) bytes += Buffer.byteLength(JSON.stringify(structured));
  return bytes;
}

function isOwnLink(block: unknown, taskId: string): boolean {
  return (
    isObject(block) &&
    block['type'] === 'resource_link' &&
    typeof block['uri'] === 'string' &&
    block['uri'].startsWith(`taskrail://tasks/${taskId}/`)
  );
}

/** A stored result as the tool returned it: its parts kept apart read back whole. */
async function asReturned(task: TaskRecord, result: ToolResult, fit: HostFit): Promise<ToolResult> {
  const text = keptApart(result, 'result');
  const structured = keptApart(result, 'structured');
  if (text === undefined && structured === undefined) return result;
  const content = Array.isArray(result.content) ? result.content : [];
  const others = content.filter((block) => !isTextBlock(block) && !isOwnLink(block, task.id));
  const texts = content.filter(isTextBlock).map((block, index) => {
    return index === 0 ? { ...block, text: withoutStructuredNotice(block.text) } : block;
  });
  const whole = text === undefined ? undefined : await fit.readWhole(task.id, 'result', text.chars);
  const json =
    structured === undefined
      ? undefined
      : await fit.readWhole(task.id, 'structured', structured.chars);
  if ((text !== undefined && whole === undefined) || (structured !== undefined && !json)) {
    return result;
  }
  const meta = { ...(isObject(result['_meta']) ? result['_meta'] : {}) };
  delete meta[KEPT_APART_META];
  delete meta[STRUCTURED_KEPT_APART_META];
  return {
    ...result,
    content: [...(whole === undefined ? texts : [{ type: 'text', text: whole }]), ...others],
    ...(json === undefined ? {} : { structuredContent: JSON.parse(json) as JsonObject }),
    _meta: meta,
  };
}

/** `original` shortened to `budget` characters as the host counts them. */
function shortenTo(
  original: ToolResult,
  taskId: string,
  budget: number,
  view: HostProfile['view'],
  keepsStructured: boolean,
): ToolResult {
  const structured = original['structuredContent'];
  const json = isObject(structured) ? JSON.stringify(structured) : undefined;
  const share = view === 'structured' ? budget : Math.floor(budget / 2);
  const move = json !== undefined && !keepsStructured && json.length > share;
  const texts = move ? withoutJsonCopy(original, json) : original;
  const shownJson = !move && json !== undefined && view !== 'structured' ? json.length : 0;
  const room = budget - shownJson - (move ? structuredOverhead(taskId, json, budget) : 0);
  const whole = resultText(texts);
  const text = whole.length > room ? whole : undefined;
  if (!move && text === undefined) return original;
  const parts = {
    ...(text === undefined ? {} : { text }),
    ...(move ? { structuredJson: json } : {}),
  };
  return shortened(texts, taskId, parts, Math.max(1000, budget - shownJson));
}

/**
 * A completed task's result for the host that asked: shortened further when the host's cut-off
 * is below the server's (`resultChars`, or `resultBytes` counted over every block), the rest
 * readable at the same URIs and through `task_result`; then in the host's form.
 */
export async function resultForHost(
  task: TaskRecord,
  result: CallToolResult,
  fit: HostFit,
  keepsStructured: boolean,
): Promise<CallToolResult> {
  const { profile } = fit;
  let budget = resultCharsFor(profile, fit.serverMaxChars);
  if (budget >= fit.serverMaxChars) return presentFor(profile, result);
  const original = await asReturned(task, result as ToolResult, fit);
  let fitted = shortenTo(original, task.id, budget, profile.view, keepsStructured);
  const maxBytes = profile.resultBytes;
  for (let round = 0; maxBytes !== undefined && round < 4; round++) {
    const bytes = shownBytes(fitted);
    if (bytes <= maxBytes) break;
    budget = Math.max(1000, Math.floor((budget * maxBytes) / bytes) - 200);
    fitted = shortenTo(original, task.id, budget, profile.view, keepsStructured);
  }
  return presentFor(profile, (fitted === original ? result : fitted) as CallToolResult);
}
