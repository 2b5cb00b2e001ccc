import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';

/** Where the Postgres suites run; unset means skip (with a printed reason), unreachable means fail. */
export const POSTGRES_URL = process.env.TASKRAIL_POSTGRES_URL;

export const SKIP_REASON =
  'TASKRAIL_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';

/** Registers one skipped test that says why, when there is no PostgreSQL to test against. */
export function skipWithoutPostgres(suite: string): boolean {
  if (POSTGRES_URL !== undefined && POSTGRES_URL !== '') return false;
  process.stdout.write(`# skipping ${suite}: ${SKIP_REASON}\n`);
  test(suite, { skip: SKIP_REASON }, () => undefined);
  return true;
}

const RUN = `trt_${randomBytes(4).toString('hex')}`;
let counter = 0;

/** A schema name no other test (or engineer) uses. */
export function uniqueSchema(): string {
  counter += 1;
  return `${RUN}_${counter}`;
}

/** The test database URL with `?schema=` set. */
export function urlWithSchema(schema: string, base = POSTGRES_URL as string): string {
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Runs one statement on a short-lived connection. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  params: unknown[] = [],
  base = POSTGRES_URL as string,
): Promise<T[]> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Drops one test schema and its job queue's, with everything in them; nothing else. */
export async function dropSchema(schema: string, base = POSTGRES_URL as string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`, [], base);
}
