import type { TextChunk } from '../../store/port.js';
import { TEXT_CHUNK_CHARS } from '../../store/text.js';
import { TaskrailError } from '../../task/errors.js';

/** The port's rule for appendText: one chunk is at most `TEXT_CHUNK_CHARS` code units. */
export function assertTextChunk(chunk: unknown): asserts chunk is string {
  if (typeof chunk !== 'string') {
    throw new TaskrailError('INVALID_ARGUMENT', 'appendText needs a string');
  }
  if (chunk.length > TEXT_CHUNK_CHARS) {
    throw new TaskrailError(
      'INVALID_ARGUMENT',
      `appendText takes at most ${TEXT_CHUNK_CHARS} characters at once, got ${chunk.length} ` +
        '(cut it with splitText)',
    );
  }
}

/** The bound of `AppendTextOptions.maxChars`: a whole number ≥ 1, or none. */
export function textBound(maxChars: number | undefined): number | undefined {
  if (maxChars === undefined || maxChars === Infinity) return undefined;
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) {
    throw new TaskrailError('INVALID_ARGUMENT', `maxChars must be ≥ 1, got ${maxChars}`);
  }
  return maxChars;
}

/**
 * Where the kept part of a text starts once it is bounded to `maxChars`: the first chunk that
 * starts at or after `end - maxChars` (whole chunks give way), or 0 when nothing goes.
 */
export function keptFrom(
  chunks: readonly TextChunk[],
  end: number,
  maxChars: number | undefined,
): number {
  const bound = textBound(maxChars);
  if (bound === undefined || end <= bound) return 0;
  const first = chunks.find((chunk) => chunk.start >= end - bound);
  return first?.start ?? end;
}

/** The chunks overlapping `[offset, offset + length)`. */
export function overlapping(
  chunks: readonly TextChunk[],
  offset: number,
  length: number,
): TextChunk[] {
  const to = offset + length;
  return chunks.filter((chunk) => chunk.start < to && chunk.start + chunk.text.length > offset);
}
