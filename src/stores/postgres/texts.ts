import type { TaskEvents } from '../../store/events.js';
import type { AppendTextOutcome, StoredText, TaskTextKind } from '../../store/port.js';
import { TEXT_CHUNK_CHARS } from '../../store/text.js';
import { TaskrailError } from '../../task/errors.js';
import { assertTextChunk, textBound } from '../shared/texts.js';

type Row = Record<string, unknown>;
type Query = (sql: string, params: unknown[]) => Promise<Row[]>;

const NOW = `COALESCE($1::float8, (extract(epoch FROM now()) * 1000)::float8)`;
const LIVE = `(k.expires_at IS NULL OR k.expires_at > ${NOW})`;

/** The statements of the texts of one schema `s`. */
function textSql(s: string, channel: string) {
  const notice = `json_build_object('o', $7::text, 'k', 'x', 'id', $2::text, 't', $3::text,
    'e', (SELECT end_at FROM written))::text`;
  return {
    /**
     * $1 now, $2 id, $3 kind, $4 chunk, $5 its length, $6 the writer's lease token (null =
     * unfenced), $7 origin. No row: the task is absent; a null end: fenced out. FOR SHARE holds off a
     * claim until the chunk is in; the upsert's row lock orders two appends to one text.
     */
    append: `WITH head AS (SELECT k.id, k.lease_token FROM ${s}.tasks k
          WHERE k.id = $2 AND ${LIVE} FOR SHARE),
        allowed AS (SELECT id FROM head WHERE $6::text IS NULL OR lease_token = $6::text),
        written AS (INSERT INTO ${s}.task_texts (task_id, kind, end_at, dropped)
          SELECT id, $3, $5, 0 FROM allowed
          ON CONFLICT (task_id, kind) DO UPDATE SET end_at = ${s}.task_texts.end_at + $5
          RETURNING end_at, dropped),
        chunk AS (INSERT INTO ${s}.text_chunks (task_id, kind, start, body)
          SELECT $2, $3, end_at - $5, $4 FROM written WHERE $5 > 0 RETURNING 1)
      SELECT (SELECT end_at::float8 FROM written) AS end_at,
        (SELECT dropped::float8 FROM written) AS dropped,
        (SELECT count(*) FROM chunk) AS chunks,
        (SELECT pg_notify('${channel}', ${notice}) FROM written) AS notified
      FROM head`,
    /** $1 id, $2 kind, $3 max chars, $4 the end: drops the chunks before the kept part. */
    bound: `WITH kept AS (SELECT COALESCE(min(start), $4) AS start FROM ${s}.text_chunks
          WHERE task_id = $1 AND kind = $2 AND start >= $4::bigint - $3::bigint),
        gone AS (DELETE FROM ${s}.text_chunks
          WHERE task_id = $1 AND kind = $2 AND start < (SELECT start FROM kept))
      UPDATE ${s}.task_texts SET dropped = GREATEST(dropped, (SELECT start FROM kept))
        WHERE task_id = $1 AND kind = $2 RETURNING dropped::float8 AS dropped`,
    /**
     * $1 now, $2 id, $3 kind, $4 offset (moved up to the dropped front), $5 length, $6 the
     * longest chunk. No row: the task is absent.
     */
    read: `SELECT x.end_at::float8 AS end_at, x.dropped::float8 AS dropped,
        c.start::float8 AS start, c.body
      FROM ${s}.tasks k
      LEFT JOIN ${s}.task_texts x ON x.task_id = k.id AND x.kind = $3
      LEFT JOIN ${s}.text_chunks c ON c.task_id = k.id AND c.kind = $3
        AND c.start > GREATEST($4::bigint, x.dropped) - $6::bigint
        AND c.start < GREATEST($4::bigint, x.dropped) + $5::bigint
      WHERE k.id = $2 AND ${LIVE}
      ORDER BY c.start`,
  };
}

/** A PostgreSQL store's task texts: `task_texts` and `text_chunks` (migration 2). */
export class PostgresTexts {
  readonly #sql: ReturnType<typeof textSql>;
  readonly #query: Query;
  readonly #now: () => number | null;

  readonly #events: TaskEvents;
  readonly #origin: string;

  constructor(
    where: { schema: string; channel: string; origin: string; events: TaskEvents },
    query: Query,
    now: () => number | null,
  ) {
    this.#sql = textSql(where.schema, where.channel);
    this.#query = query;
    this.#now = now;
    this.#events = where.events;
    this.#origin = where.origin;
  }

  async append(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    token: string | null,
    maxChars: number | undefined,
  ): Promise<AppendTextOutcome> {
    assertTextChunk(chunk);
    const bound = textBound(maxChars);
    let rows: Row[];
    try {
      const params = [this.#now(), id, kind, chunk, chunk.length, token, this.#origin];
      rows = await this.#query(this.#sql.append, params);
    } catch (error) {
      // The task was swept between the check and the insert.
      if ((error as { code?: unknown }).code !== '23503') throw error;
      rows = [];
    }
    const row = rows[0];
    if (row === undefined) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    if (row['end_at'] === null) return { ok: false, fenced: true };
    const end = row['end_at'] as number;
    this.#events.emit('task:text', { id, kind, end });
    let dropped = row['dropped'] as number;
    if (bound !== undefined && end - dropped > bound) {
      const trimmed = await this.#query(this.#sql.bound, [id, kind, bound, end]);
      dropped = (trimmed[0]?.['dropped'] as number | undefined) ?? dropped;
    }
    return { ok: true, end, dropped };
  }

  async read(
    id: string,
    kind: TaskTextKind,
    offset: number,
    length: number,
  ): Promise<StoredText | undefined> {
    const asked = Math.max(0, Math.floor(offset));
    const params = [this.#now(), id, kind, asked, Math.max(0, Math.floor(length))];
    const rows = await this.#query(this.#sql.read, [...params, TEXT_CHUNK_CHARS]);
    const first = rows[0];
    if (first === undefined) return undefined;
    if (first['end_at'] === null) return { chunks: [], end: 0, dropped: 0 };
    const from = Math.max(asked, first['dropped'] as number);
    const chunks = rows
      .filter((row) => row['start'] !== null)
      .map((row) => ({ start: row['start'] as number, text: row['body'] as string }))
      .filter((chunk) => chunk.start + chunk.text.length > from);
    return { chunks, end: first['end_at'] as number, dropped: first['dropped'] as number };
  }
}
