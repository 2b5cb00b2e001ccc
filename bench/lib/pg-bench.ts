/** What the Postgres benchmarks share: the skip when no server is set, fresh schemas, load. */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { report } from './stats.js';

export const PG_BASE = process.env['TASKRAIL_POSTGRES_URL'] ?? '';

/** Reports a skipped section (and exits) when TASKRAIL_POSTGRES_URL is not set. */
export function exitUnlessPostgres(title: string): void {
  if (PG_BASE !== '') return;
  report({
    title,
    description:
      'Skipped: TASKRAIL_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).',
    columns: [],
    rows: [],
    goals: [],
  });
  process.exit(0);
}

/** A schema nobody else uses, and the store URL naming it. */
export function freshSchema(): { schema: string; url: string } {
  const schema = `trbench_${randomBytes(4).toString('hex')}`;
  const url = new URL(PG_BASE);
  url.searchParams.set('schema', schema);
  return { schema, url: url.toString() };
}

/** Drops a store schema and its job schema; waits out the locks of processes still stopping. */
export async function dropStoreSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_BASE });
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  } finally {
    await client.end();
  }
}

/** The machine's 1-minute load average now (2 cores shared with other work: it matters). */
export function loadNow(): number {
  return Number((loadavg()[0] ?? 0).toFixed(1));
}

/** "load 3.1–7.4": the range of 1-minute load averages seen while a figure was measured. */
export function loadRange(samples: number[]): string {
  return `load ${Math.min(...samples).toFixed(1)}–${Math.max(...samples).toFixed(1)}`;
}
