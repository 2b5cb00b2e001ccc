import type pg from 'pg';
import { quoteIdent } from '../../stores/postgres/migrations.js';

/** One lock id per store schema (two-key form), distinct from the store's migration lock. */
const LOCK_CLASS = 0x74726967; // 'trig'

const CREATED = 'taskrail_enqueue_created';
const RESUMED = 'taskrail_enqueue_resumed';
const WAITING = 'taskrail_enqueue_wake';

/**
 * Makes the store's own writes add the graphile-worker job, in the same transaction as the task
 * row (graphile-worker's documented way to add jobs from SQL): a new task nobody leased, and a
 * task resumed after input, and a task set to wait (`releaseUntil`: a retry's backoff, a sleep)
 * gets its job with `run_at` at the wake time, judged by the same database clock. So a create costs one commit instead of two, the job needs no read
 * to name it, and graphile-worker's NOTIFY wakes a worker the moment the task is visible.
 * Installed under a transaction-scoped advisory lock, so two processes starting at once do not
 * fight; the triggers are created once, the function replaced on every start.
 */
export async function installEnqueueTrigger(
  client: pg.ClientBase,
  storeSchema: string,
  jobsSchema: string,
  taskIdentifier: string,
): Promise<void> {
  const s = quoteIdent(storeSchema);
  const fn = `${s}.taskrail_enqueue_run`;
  const wakeFn = `${s}.taskrail_enqueue_wake`;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, storeSchema]);
    // Fair share across workers: the n-th unfinished task of a principal gets priority n
    // (graphile-worker takes the lowest first; its column is a smallint), and the job carries
    // the principal's tag (`fairTag`) as a flag and in its payload, for the more-than-half rule.
    await client.query(`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE tag text := left(md5(NEW.principal), 16);
      BEGIN
        PERFORM ${quoteIdent(jobsSchema)}.add_job(
          ${literal(taskIdentifier)}, json_build_object('taskId', NEW.id, 'fair', tag),
          max_attempts => 1, job_key => NEW.id || '.' || NEW.revision, job_key_mode => 'replace',
          priority => LEAST(32767, (SELECT count(*) FROM ${s}.tasks WHERE principal = NEW.principal
            AND status IN ('working', 'input_required')))::int, flags => ARRAY[tag]);
        RETURN NULL;
      END $fn$`);
    await client.query(`CREATE OR REPLACE FUNCTION ${wakeFn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM ${quoteIdent(jobsSchema)}.add_job(
          ${literal(taskIdentifier)}, json_build_object('taskId', NEW.id),
          run_at => to_timestamp(NEW.lease_expires_at / 1000.0), max_attempts => 1,
          job_key => NEW.id || '.' || NEW.revision, job_key_mode => 'replace');
        RETURN NULL;
      END $fn$`);
    const { rows } = await client.query<{ tgname: string }>(
      `SELECT tgname FROM pg_trigger WHERE tgrelid = '${s}.tasks'::regclass AND tgname = ANY($1)`,
      [[CREATED, RESUMED, WAITING]],
    );
    const present = new Set(rows.map((row) => row.tgname));
    if (!present.has(CREATED)) {
      await client.query(`CREATE TRIGGER ${CREATED} AFTER INSERT ON ${s}.tasks FOR EACH ROW
        WHEN (NEW.status = 'working' AND NEW.lease_token IS NULL) EXECUTE FUNCTION ${fn}()`);
    }
    if (!present.has(RESUMED)) {
      await client.query(`CREATE TRIGGER ${RESUMED} AFTER UPDATE OF status ON ${s}.tasks
        FOR EACH ROW WHEN (OLD.status <> 'working' AND NEW.status = 'working'
          AND NEW.lease_token IS NULL) EXECUTE FUNCTION ${fn}()`);
    }
    if (!present.has(WAITING)) {
      await client.query(`CREATE TRIGGER ${WAITING} AFTER UPDATE OF lease_token ON ${s}.tasks
        FOR EACH ROW WHEN (NEW.status = 'working' AND NEW.lease_owner = ''
          AND NEW.lease_token IS NULL AND OLD.lease_token IS NOT NULL)
        EXECUTE FUNCTION ${wakeFn}()`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
