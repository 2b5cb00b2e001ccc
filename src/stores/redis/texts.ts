import type { TaskEvents } from '../../store/events.js';
import type { AppendTextOutcome, StoredText, TaskTextKind } from '../../store/port.js';
import { TEXT_CHUNK_CHARS } from '../../store/text.js';
import { TaskrailError } from '../../task/errors.js';
import { assertTextChunk, textBound } from '../shared/texts.js';
import type { RedisKeys } from './keys.js';
import type { RedisScripts } from './scripts.js';

const FENCED = 2;

/** A Redis store's task texts: a hash of chunks and a sorted set of their starts (keys.ts). */
export class RedisTexts {
  readonly #scripts: RedisScripts;
  readonly #keys: RedisKeys;
  readonly #clock: () => number;

  readonly #events: TaskEvents;
  readonly #origin: string;

  constructor(
    scripts: RedisScripts,
    keys: RedisKeys,
    clock: () => number,
    notices: { events: TaskEvents; origin: string },
  ) {
    this.#scripts = scripts;
    this.#keys = keys;
    this.#clock = clock;
    this.#events = notices.events;
    this.#origin = notices.origin;
  }

  #textKeys(id: string, kind: TaskTextKind): string[] {
    return [this.#keys.task(id), this.#keys.text(id, kind), this.#keys.textIndex(id, kind)];
  }

  async append(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    token: string,
    maxChars: number | undefined,
  ): Promise<AppendTextOutcome> {
    assertTextChunk(chunk);
    const bound = textBound(maxChars) ?? '';
    const args = [chunk, chunk.length, this.#clock(), token, bound, this.#keys.channel];
    args.push(this.#origin, id, kind);
    const reply = (await this.#scripts.run(
      'append-text',
      this.#textKeys(id, kind),
      args,
    )) as number[];
    if (reply[0] === FENCED) return { ok: false, fenced: true };
    if (reply[0] !== 1) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    const end = Number(reply[1]);
    this.#events.emit('task:text', { id, kind, end });
    return { ok: true, end, dropped: Number(reply[2]) };
  }

  async read(
    id: string,
    kind: TaskTextKind,
    offset: number,
    length: number,
  ): Promise<StoredText | undefined> {
    const args = [this.#clock(), Math.max(0, Math.floor(offset)), Math.max(0, Math.floor(length))];
    args.push(TEXT_CHUNK_CHARS);
    const reply = (await this.#scripts.run('read-text', this.#textKeys(id, kind), args)) as (
      number | string
    )[];
    if (reply[0] !== 1) return undefined;
    const dropped = Number(reply[2]);
    const from = Math.max(0, Math.floor(offset), dropped);
    const chunks = [];
    for (let i = 3; i + 1 < reply.length; i += 2) {
      const chunk = { start: Number(reply[i]), text: String(reply[i + 1]) };
      if (chunk.start + chunk.text.length > from) chunks.push(chunk);
    }
    return { chunks, end: Number(reply[1]), dropped };
  }
}
