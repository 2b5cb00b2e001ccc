import type { StoredText, TextChunk } from './port.js';

/** The longest chunk `TaskStore.appendText` takes, in UTF-16 code units. */
export const TEXT_CHUNK_CHARS = 64 * 1024;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether cutting `text` before index `at` would split a surrogate pair. */
export function splitsPair(text: string, at: number): boolean {
  return (
    at > 0 &&
    at < text.length &&
    isHighSurrogate(text.charCodeAt(at - 1)) &&
    isLowSurrogate(text.charCodeAt(at))
  );
}

/**
 * `text` cut into chunks of at most `size` code units (default `TEXT_CHUNK_CHARS`), never
 * between the two halves of a surrogate pair, so each chunk survives a UTF-8 database whole.
 */
export function splitText(text: string, size = TEXT_CHUNK_CHARS): string[] {
  if (text.length <= size) return text === '' ? [] : [text];
  const chunks: string[] = [];
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + size);
    if (splitsPair(text, to)) to -= 1;
    chunks.push(text.slice(from, to));
    from = to;
  }
  return chunks;
}

/** One slice of a task's text, as `sliceText` cut it. */
export interface TextSlice {
  /** The text from `start`, at most the length asked (plus one for a whole surrogate pair). */
  text: string;
  /** Where `text` starts: the offset asked, moved past a dropped front or back onto a pair. */
  start: number;
  /** The whole text's length so far, dropped front included. */
  end: number;
  /** Characters dropped from the front. */
  dropped: number;
}

/** The range to ask `readText` for so that `sliceText` can see both sides of each cut. */
export function readRange(offset: number, length: number): { offset: number; length: number } {
  const from = Math.max(0, offset - 1);
  return { offset: from, length: offset - from + length + 1 };
}

/**
 * The slice `[offset, offset + length)` of a stored text (read with `readRange`), never
 * splitting a surrogate pair: a start inside a pair moves back onto it, an end inside one
 * moves before it (unless the slice would be empty). An offset past the end gives empty text.
 */
export function sliceText(stored: StoredText, offset: number, length: number): TextSlice {
  const { end, dropped } = stored;
  const base = Math.max(0, Math.min(offset, end), dropped);
  const joined = joinFrom(stored.chunks, Math.max(dropped, base - 1));
  const origin = Math.max(dropped, base - 1);
  let from = base - origin;
  if (splitsPair(joined, from)) from -= 1;
  let to = Math.min(joined.length, from + Math.max(0, length));
  if (splitsPair(joined, to) && to - 1 > from) to -= 1;
  else if (splitsPair(joined, to)) to += 1;
  return { text: joined.slice(from, to), start: origin + from, end, dropped };
}

/** The chunks' text from position `from` on (chunks in order, contiguous). */
function joinFrom(chunks: readonly TextChunk[], from: number): string {
  const parts: string[] = [];
  for (const chunk of chunks) {
    const chunkEnd = chunk.start + chunk.text.length;
    if (chunkEnd <= from) continue;
    parts.push(chunk.start >= from ? chunk.text : chunk.text.slice(from - chunk.start));
  }
  return parts.join('');
}
