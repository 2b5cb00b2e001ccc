import type { Queue } from 'bullmq';
import type { RedisClient } from '../../stores/redis/scripts.js';

export interface JobData {
  taskId: string;
  /** The task's principal as `fairTag` marks it, when the dispatcher knew it. */
  fair?: string;
}

/** A recovered task at the revision its job is deduplicated by. */
export interface RecoveredTask {
  id: string;
  revision: number;
}

/**
 * Per job: 0 gone (or never added), 1 will run (its hash exists and it is not active), 2 taken
 * (in the active list: a live worker's, or a dead one's that BullMQ's stall check has yet to
 * move back). Every key is declared; the queue's keys share the `{bull}` tag, one Cluster slot.
 * KEYS[1] the active list, KEYS[2..] job hashes
 */
const JOB_STATES_LUA = `
local active = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do active[id] = true end
local out = {}
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then out[#out + 1] = 0
  elseif active[ARGV[i - 1]] then out[#out + 1] = 2
  else out[#out + 1] = 1 end
end
return out
`;

const JOB_STATES_COMMAND = 'taskrail_job_states';
const defined = new WeakSet<RedisClient>();

const WILL_RUN = 1;
const TAKEN = 2;

interface JobToAdd {
  name: string;
  data: JobData;
  opts: Record<string, unknown>;
}

/**
 * Enqueues a recovery scan's finds in a few commands however many there are: one MGET of their
 * deduplication keys, one script reading those jobs' states, one bulk add of the jobs missing.
 * Per task it decides as `dispatch` does: a job of this revision that will run is enough; a
 * taken one (maybe a dead worker's) gets another job at once; none gets a deduplicated one.
 */
export async function enqueueRecovered(
  client: RedisClient,
  queue: Queue<JobData>,
  tasks: readonly RecoveredTask[],
  jobId: (taskId: string) => string,
): Promise<void> {
  if (tasks.length === 0) return;
  const dedupeIds = tasks.map((task) => `${task.id}.${task.revision}`);
  const current = await client.mget(...dedupeIds.map((id) => `${queue.keys.de}:${id}`));
  const states = await jobStates(client, queue, current);
  const jobs: JobToAdd[] = [];
  tasks.forEach((task, i) => {
    const state = states[i];
    if (state === WILL_RUN) return;
    const unique = jobId(task.id);
    const retry = state === TAKEN;
    const dedupe = retry ? {} : { deduplication: { id: dedupeIds[i] } };
    jobs.push({
      name: 'run',
      data: { taskId: task.id },
      opts: { ...jobOptions(retry ? `${unique}.again` : unique), ...dedupe },
    });
  });
  if (jobs.length > 0) await queue.addBulk(jobs);
}

/** States of the jobs named (undefined where there is none), in one script call. */
async function jobStates(
  client: RedisClient,
  queue: Queue<JobData>,
  jobIds: (string | null)[],
): Promise<(number | undefined)[]> {
  const named = jobIds.flatMap((id) => (id === null ? [] : [id]));
  if (named.length === 0) return jobIds.map(() => undefined);
  const keys = [queue.keys.active ?? '', ...named.map((id) => queue.toKey(id))];
  if (!defined.has(client)) client.defineCommand(JOB_STATES_COMMAND, { lua: JOB_STATES_LUA });
  defined.add(client);
  const command = Reflect.get(client, JOB_STATES_COMMAND) as (...args: unknown[]) => unknown;
  const replies = (await command.call(client, keys.length, ...keys, ...named)) as number[];
  let next = 0;
  return jobIds.map((id) => (id === null ? undefined : replies[next++]));
}

/** The options every job of the executor gets. */
export function jobOptions(jobId: string): Record<string, unknown> {
  return { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 };
}
