import type Database from 'better-sqlite3';
import type {
  AppendTextOptions,
  AppendTextOutcome,
  StoredText,
  TaskTextKind,
  TextChunk,
} from '../../store/port.js';
import { TEXT_CHUNK_CHARS } from '../../store/text.js';
import { fenceRefuses } from '../shared/checks.js';
import { assertTextChunk, textBound } from '../shared/texts.js';

const TEXT_SQL = {
  selectText: 'SELECT end_at, dropped FROM task_texts WHERE task_id = ? AND kind = ?',
  upsertText:
    'INSERT INTO task_texts (task_id, kind, end_at, dropped) VALUES (?, ?, ?, ?) ' +
    'ON CONFLICT (task_id, kind) DO UPDATE SET end_at = excluded.end_at, dropped = excluded.dropped',
  insertChunk: 'INSERT INTO text_chunks (task_id, kind, start, body) VALUES (?, ?, ?, ?)',
  // A chunk is at most TEXT_CHUNK_CHARS long: one that overlaps @from starts after this.
  selectChunks:
    'SELECT start, body AS text FROM text_chunks WHERE task_id = @id AND kind = @kind ' +
    'AND start > @from - @chunk AND start < @to ORDER BY start',
  selectKeptFrom:
    'SELECT MIN(start) AS start FROM text_chunks WHERE task_id = ? AND kind = ? AND start >= ?',
  dropChunks: 'DELETE FROM text_chunks WHERE task_id = ? AND kind = ? AND start < ?',
  deleteTexts: 'DELETE FROM task_texts WHERE task_id = ?',
  deleteChunks: 'DELETE FROM text_chunks WHERE task_id = ?',
} as const;

type TextStatements = Record<keyof typeof TEXT_SQL, Database.Statement>;
type TextRow = { end_at: number; dropped: number };

/**
 * A SQLite store's task texts: chunks in `text_chunks` by start offset, each text's length and
 * dropped front in `task_texts`. The methods run inside the store's transactions.
 */
export class SqliteTexts {
  readonly #sql: TextStatements;

  constructor(db: Database.Database) {
    const entries = Object.entries(TEXT_SQL).map(([name, sql]) => [name, db.prepare(sql)]);
    this.#sql = Object.fromEntries(entries) as TextStatements;
  }

  /** `leaseToken`: the task's stored one, for the fence. */
  append(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    options: AppendTextOptions,
    leaseToken: string | null,
  ): AppendTextOutcome {
    if (fenceRefuses(options.fence, leaseToken)) return { ok: false, fenced: true };
    assertTextChunk(chunk);
    const bound = textBound(options.maxChars);
    const row = this.#sql.selectText.get(id, kind) as TextRow | undefined;
    const start = row?.end_at ?? 0;
    let dropped = row?.dropped ?? 0;
    if (chunk !== '') this.#sql.insertChunk.run(id, kind, start, chunk);
    const end = start + chunk.length;
    if (bound !== undefined && end - dropped > bound) {
      const kept = this.#sql.selectKeptFrom.get(id, kind, end - bound) as { start: number | null };
      dropped = kept.start ?? end;
      this.#sql.dropChunks.run(id, kind, dropped);
    }
    this.#sql.upsertText.run(id, kind, end, dropped);
    return { ok: true, end, dropped };
  }

  read(id: string, kind: TaskTextKind, offset: number, length: number): StoredText {
    const row = this.#sql.selectText.get(id, kind) as TextRow | undefined;
    if (row === undefined) return { chunks: [], end: 0, dropped: 0 };
    const from = Math.max(0, offset, row.dropped);
    const params = { id, kind, from, to: from + Math.max(0, length), chunk: TEXT_CHUNK_CHARS };
    const chunks = (this.#sql.selectChunks.all(params) as TextChunk[]).filter(
      (chunk) => chunk.start + chunk.text.length > from,
    );
    return { chunks, end: row.end_at, dropped: row.dropped };
  }

  delete(id: string): void {
    this.#sql.deleteTexts.run(id);
    this.#sql.deleteChunks.run(id);
  }
}
