import type { AppendTextOptions, StoredText, TaskTextKind, TextChunk } from '../../store/port.js';
import { assertTextChunk, keptFrom, overlapping } from '../shared/texts.js';

interface Text {
  chunks: TextChunk[];
  end: number;
  dropped: number;
}

/** The texts of a memory store's tasks (see `TaskStore.appendText`). */
export class MemoryTexts {
  readonly #texts = new Map<string, Map<TaskTextKind, Text>>();

  append(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    options: AppendTextOptions,
  ): { end: number; dropped: number } {
    assertTextChunk(chunk);
    let kinds = this.#texts.get(id);
    if (kinds === undefined) this.#texts.set(id, (kinds = new Map()));
    let text = kinds.get(kind);
    if (text === undefined) kinds.set(kind, (text = { chunks: [], end: 0, dropped: 0 }));
    if (chunk !== '') text.chunks.push({ start: text.end, text: chunk });
    text.end += chunk.length;
    const kept = keptFrom(text.chunks, text.end, options.maxChars);
    if (kept > text.dropped) {
      text.chunks = text.chunks.filter((stored) => stored.start >= kept);
      text.dropped = kept;
    }
    return { end: text.end, dropped: text.dropped };
  }

  read(id: string, kind: TaskTextKind, offset: number, length: number): StoredText {
    const text = this.#texts.get(id)?.get(kind);
    if (text === undefined) return { chunks: [], end: 0, dropped: 0 };
    const from = Math.max(offset, text.dropped);
    const chunks = overlapping(text.chunks, from, length).map((chunk) => ({ ...chunk }));
    return { chunks, end: text.end, dropped: text.dropped };
  }

  delete(id: string): void {
    this.#texts.delete(id);
  }
}
