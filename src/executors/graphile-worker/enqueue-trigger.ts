import type pg from 'pg';
import { quoteIdent } from '../../stores/postgres/migrations.js';

/** One lock id per store schema (two-key form), distinct from the store's migration lock. */
const LOCK_CLASS = 0x74726967; // 'trig'

const CREATED = 'taskrail_enqueue_created';
const RESUMED = 'taskrail_enqueue_resumed';
const WAITING = 'taskrail_enqueue_wake';
const ENDED = 'taskrail_forget_ended';
const DELETED = 'taskrail_forget_deleted';

/** The function that adds a task's job: `(id, revision, principal, run_at or null for now)`. */
export function addRunFunction(storeSchema: string): string {
  return `${quoteIdent(storeSchema)}.taskrail_add_run`;
}

/**
 * Makes the store's own writes add the graphile-worker job, in the same transaction as the task
 * row (graphile-worker's documented way to add jobs from SQL): a new task nobody leased, a task
 * resumed after input, and a task set to wait (`releaseUntil`: a retry's backoff, a sleep) with
 * `run_at` at the wake time, judged by the same database clock. Every job, woken or recovered
 * too, carries its principal's fair-share place (see `addRun`). A task that ends or is deleted
 * (cancelled, expired) while it waits takes its waiting job with it, so no job outlives its task.
 * So a create costs one commit instead of two, the job needs no read to name it, and
 * graphile-worker's NOTIFY wakes a worker the moment the task is visible. Installed under a
 * transaction-scoped advisory lock, so two processes starting at once do not fight; the
 * triggers are created once, the functions replaced on every start.
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
  const forgetFn = `${s}.taskrail_forget_run`;
  const add = addRunFunction(storeSchema);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, storeSchema]);
    await client.query(addRun(add, s, jobsSchema, taskIdentifier));
    await client.query(`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM ${add}(NEW.id, NEW.revision, NEW.principal, NULL);
        RETURN NULL;
      END $fn$`);
    await client.query(`CREATE OR REPLACE FUNCTION ${wakeFn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM ${add}(NEW.id, NEW.revision, NEW.principal,
          to_timestamp(NEW.lease_expires_at / 1000.0));
        RETURN NULL;
      END $fn$`);
    // The job of a task nobody holds (waiting, or not yet taken) is named by the task's revision.
    await client.query(`CREATE OR REPLACE FUNCTION ${forgetFn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM ${quoteIdent(jobsSchema)}.remove_job(OLD.id || '.' || OLD.revision);
        RETURN NULL;
      END $fn$`);
    await createMissingTriggers(client, s, { fn, wakeFn, forgetFn });
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * A task's job, keyed `<id>.<revision>` ('replace': a waiting job of the key is reused, a running
 * one keeps running beside the new). Fair share across workers: the n-th unfinished task of a
 * principal gets priority n (graphile-worker takes the lowest first; its column is a smallint),
 * and the job carries the principal's tag (`fairTag`) as a flag and in its payload, for the
 * more-than-half rule. A woken or recovered task is placed so too, never ahead of another
 * principal's first task. A job dated in the future also sends its delay on graphile-worker's
 * channel (`count` 0: graphile-worker nudges nobody for it), so every worker arms a timer for it
 * instead of polling (fetch-nudges.ts); the delay is counted from the notice's own clock reading,
 * so the timer never fires before the job is due by the database's clock.
 */
function addRun(add: string, s: string, jobsSchema: string, taskIdentifier: string): string {
  const jobs = quoteIdent(jobsSchema);
  return `CREATE OR REPLACE FUNCTION ${add}(task_id text, task_revision integer,
      task_principal text, at timestamptz) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE tag text := left(md5(task_principal), 16);
    BEGIN
      PERFORM ${jobs}.add_job(
        ${literal(taskIdentifier)}, json_build_object('taskId', task_id, 'fair', tag),
        run_at => at, max_attempts => 1, job_key => task_id || '.' || task_revision,
        job_key_mode => 'replace',
        priority => LEAST(32767, (SELECT count(*) FROM ${s}.tasks WHERE principal = task_principal
          AND status IN ('working', 'input_required')))::int, flags => ARRAY[tag]);
      IF at > now() THEN
        PERFORM pg_notify('jobs:insert', json_build_object('count', 0,
          'taskrail', ${literal(jobsSchema)},
          'inMs', extract(epoch FROM at - clock_timestamp()) * 1000)::text);
      END IF;
    END $fn$`;
}

async function createMissingTriggers(
  client: pg.ClientBase,
  s: string,
  fns: { fn: string; wakeFn: string; forgetFn: string },
): Promise<void> {
  const { fn, wakeFn, forgetFn } = fns;
  const { rows } = await client.query<{ tgname: string }>(
    `SELECT tgname FROM pg_trigger WHERE tgrelid = '${s}.tasks'::regclass AND tgname = ANY($1)`,
    [[CREATED, RESUMED, WAITING, ENDED, DELETED]],
  );
  const present = new Set(rows.map((row) => row.tgname));
  const triggers: [string, string][] = [
    [
      CREATED,
      `AFTER INSERT ON ${s}.tasks FOR EACH ROW
        WHEN (NEW.status = 'working' AND NEW.lease_token IS NULL) EXECUTE FUNCTION ${fn}()`,
    ],
    [
      RESUMED,
      `AFTER UPDATE OF status ON ${s}.tasks FOR EACH ROW WHEN (OLD.status <> 'working'
        AND NEW.status = 'working' AND NEW.lease_token IS NULL) EXECUTE FUNCTION ${fn}()`,
    ],
    [
      WAITING,
      `AFTER UPDATE OF lease_token ON ${s}.tasks FOR EACH ROW WHEN (NEW.status = 'working'
        AND NEW.lease_owner = '' AND NEW.lease_token IS NULL AND OLD.lease_token IS NOT NULL)
        EXECUTE FUNCTION ${wakeFn}()`,
    ],
    // A running task's job is running: it ends by itself. Only an unheld task's job waits.
    [
      ENDED,
      `AFTER UPDATE OF status ON ${s}.tasks FOR EACH ROW WHEN (OLD.status = 'working'
        AND NEW.status IN ('completed', 'failed', 'cancelled') AND OLD.lease_token IS NULL)
        EXECUTE FUNCTION ${forgetFn}()`,
    ],
    [
      DELETED,
      `AFTER DELETE ON ${s}.tasks FOR EACH ROW
        WHEN (OLD.status = 'working' AND OLD.lease_token IS NULL) EXECUTE FUNCTION ${forgetFn}()`,
    ],
  ];
  for (const [name, definition] of triggers) {
    if (!present.has(name)) await client.query(`CREATE TRIGGER ${name} ${definition}`);
  }
}

export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
