/**
 * Fair share's look into graphile-worker's queue (fair-flags.ts) on a real database: a principal
 * alone in the queue is looked for once per quiet spell, not before every fetch, and a waiting
 * principal is looked for (and its job let through) at every fetch.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { FairFlags } from '../../src/executors/graphile-worker/fair-flags.js';
import { TASK_IDENTIFIER } from '../../src/executors/graphile-worker/graphile-executor.js';
import { FairGate, fairTag, QuietLook } from '../../src/executors/shared/fair-gate.js';
import { quoteIdent } from '../../src/stores/postgres/migrations.js';
import { migrateAnotherSchema } from './fixtures/graphile.js';
import {
  dropSchema,
  POSTGRES_URL,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
} from './postgres-env.js';

if (!skipWithoutPostgres("fair share's look into graphile-worker's queue")) {
  describe("fair share's look into graphile-worker's queue (real PostgreSQL)", () => {
    const schema = `${uniqueSchema()}_jobs`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL as string, max: 2 });
    let looks = 0;
    const query = pool.query.bind(pool) as (text: string) => Promise<pg.QueryResult>;
    // Counts the looks (the only query of FairFlags that reads the jobs table) on a real pool.
    (pool as unknown as { query: typeof query }).query = (text: string) => {
      if (text.includes('_private_jobs')) looks += 1;
      return query(text);
    };

    before(() => migrateAnotherSchema(schema));
    after(async () => {
      await pool.end();
      await dropSchema(schema);
    });

    it('looks once per quiet spell while alice is alone, and at every fetch while bob waits', async () => {
      const alice = fairTag('alice');
      const gate = new FairGate(2);
      gate.took(alice); // one of two slots: another would be more than half
      let now = 0;
      const slots = { gate, whenFree: () => Promise.resolve() };
      const fair = new FairFlags(
        pool,
        schema,
        TASK_IDENTIFIER,
        slots,
        new QuietLook(25, () => now),
      );
      const events = new EventEmitter() as WorkerEvents;
      fair.watch(events);
      const fetchAt = async (
        ms: number,
      ): Promise<{ looks: number; forbidden: string[] | null }> => {
        now = ms;
        const before = looks;
        const forbidden = await fair.forbidden();
        events.emit('job:start', {} as never); // the fetch ended: the next may be decided
        return { looks: looks - before, forbidden };
      };

      assert.deepEqual(await fetchAt(0), { looks: 1, forbidden: null }, 'alice alone');
      assert.deepEqual(await fetchAt(10), { looks: 0, forbidden: null }, 'within the spell');
      const add = `SELECT ${quoteIdent(schema)}.add_job($1, '{}'::json, flags => ARRAY[$2])`;
      await sql(add, [TASK_IDENTIFIER, fairTag('bob')]);
      assert.deepEqual(await fetchAt(25), { looks: 1, forbidden: [alice] }, 'bob waits');
      assert.deepEqual(await fetchAt(30), { looks: 1, forbidden: [alice] }, 'bob still waits');
    });
  });
}
