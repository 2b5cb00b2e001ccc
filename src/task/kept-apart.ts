import type { JsonObject } from './record.js';

/**
 * The `_meta` key of a stored result whose whole text was moved out of the record into the
 * task's `result` text: `{ chars, bytes }` of that whole text (its text blocks joined by a
 * newline). The record keeps the first part of the text; the server hands it out as stored.
 */
export const KEPT_APART_META = 'taskrail/result-kept-apart';

/**
 * The `_meta` key of a stored result whose `structuredContent` was moved out of the record into
 * the task's `structured` text (its JSON): `{ chars, bytes }` of that JSON.
 */
export const STRUCTURED_KEPT_APART_META = 'taskrail/structured-kept-apart';

/** What a shortened result records of a part it keeps apart. */
export interface KeptApart {
  chars: number;
  bytes: number;
}

/** The part of a result a task text holds whole: its text blocks, or its structuredContent. */
export type KeptApartKind = 'result' | 'structured';

const META_OF: Record<KeptApartKind, string> = {
  result: KEPT_APART_META,
  structured: STRUCTURED_KEPT_APART_META,
};

/** The size of the part `kind` of a result kept apart, if it was. */
export function keptApart(
  result: JsonObject | undefined,
  kind: KeptApartKind = 'result',
): KeptApart | undefined {
  const meta = result?.['_meta'];
  if (typeof meta !== 'object' || meta === null) return undefined;
  const kept = (meta as Record<string, unknown>)[META_OF[kind]] as Partial<KeptApart> | undefined;
  return typeof kept?.chars === 'number' && typeof kept.bytes === 'number'
    ? { chars: kept.chars, bytes: kept.bytes }
    : undefined;
}

/** True when a part of the result was kept apart: it is handed out shortened, as stored. */
export function isKeptApart(result: JsonObject): boolean {
  return keptApart(result, 'result') !== undefined || keptApart(result, 'structured') !== undefined;
}

/** How the line saying a result's structuredContent was moved out begins. */
export const STRUCTURED_NOTICE_START = "[This result's structuredContent was moved out:";

/** `text` without a leading structured notice line (a client has read the JSON back). */
export function withoutStructuredNotice(text: string): string {
  if (!text.startsWith(STRUCTURED_NOTICE_START)) return text;
  const end = text.indexOf(']\n');
  return end < 0 ? text : text.slice(end + 2);
}
