import { isKeptApart } from '../task/kept-apart.js';
import type { JsonObject } from '../task/record.js';

/**
 * The spec's SHOULD for structured results, applied wherever a result is encoded for the wire:
 * a result with `structuredContent` also carries that JSON in a text block. Some hosts show the
 * model only the text, others (Claude Code) only `structuredContent`; with both, neither loses
 * anything. A result whose text already holds the exact JSON is returned as it is, and so is
 * a shortened one: its whole text, the JSON's copy included, is behind its `resource_link`.
 */
export function withStructuredText<T extends object>(result: T): T {
  const structured = (result as JsonObject)['structuredContent'];
  if (structured === undefined || structured === null || typeof structured !== 'object') {
    return result;
  }
  if (isKeptApart(result as JsonObject)) return result;
  const json = JSON.stringify(structured);
  const raw = (result as JsonObject)['content'];
  const content = Array.isArray(raw) ? raw : [];
  const carried = content.some(
    (block) => isTextBlock(block) && (block.text === json || block.text.includes(json)),
  );
  if (carried) return result;
  return { ...result, content: [...content, { type: 'text', text: json }] };
}

function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  if (block === null || typeof block !== 'object') return false;
  const candidate = block as JsonObject;
  return candidate['type'] === 'text' && typeof candidate['text'] === 'string';
}
