import type Database from 'better-sqlite3';
import type { ListPage, ListQuery } from '../../store/port.js';
import {
  clampListLimit,
  decodeListCursor,
  encodeListCursor,
  type ListPosition,
} from '../shared/list-cursor.js';
import { rowToRecord, type TaskRow } from './rows.js';
import { listSql } from './statements.js';

/** A list request checked and decoded (a malformed cursor throws here, before any SQL). */
export interface ListPageQuery {
  query: ListQuery;
  limit: number;
  after: ListPosition | undefined;
}

export function listPage(query: ListQuery): ListPageQuery {
  const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
  return { query, limit: clampListLimit(query.limit), after };
}

/** One prepared statement per combination of filters, prepared on first use. */
export class ListStatements {
  readonly #db: Database.Database;
  readonly #prepared = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  read({ query, limit, after }: ListPageQuery, now: number): ListPage {
    const rows = this.#statement(query).all({
      now,
      limit: limit + 1,
      ...(query.principal === undefined ? {} : { principal: query.principal }),
      ...(query.tool === undefined ? {} : { tool: query.tool }),
      ...(query.statuses === undefined ? {} : { statuses: JSON.stringify(query.statuses) }),
      ...(after === undefined ? {} : { cursor_created_at: after.createdAt, cursor_id: after.id }),
    }) as TaskRow[];
    const tasks = rows.slice(0, limit).map(rowToRecord);
    const last = tasks[tasks.length - 1];
    return rows.length > limit && last !== undefined
      ? { tasks, nextCursor: encodeListCursor(last) }
      : { tasks };
  }

  #statement(query: ListQuery): Database.Statement {
    const sql = listSql({
      principal: query.principal !== undefined,
      tool: query.tool !== undefined,
      statuses: query.statuses !== undefined,
      cursor: query.cursor !== undefined,
    });
    let statement = this.#prepared.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#prepared.set(sql, statement);
    }
    return statement;
  }
}
