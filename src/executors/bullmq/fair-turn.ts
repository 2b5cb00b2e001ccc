import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '../../stores/redis/scripts.js';
import { peekDepth, type FairGate } from '../shared/fair-gate.js';
import type { JobData } from './recovery.js';

interface Waiting {
  id: string;
  tag: string | undefined;
}

/**
 * Fair share's more-than-half rule on a BullMQ worker. BullMQ hands a worker the queue's next
 * job whoever's it is; when that job's principal already holds half of this worker's slots and
 * another principal's job waits among the next few, the job goes back in its place and the other
 * one to the head of the queue, for this worker (or whichever asks first) to take next. Each
 * step back moves one waiting job forward, so no job is bounced without another being served,
 * and a principal alone in the queue is never held back. Returns true when `job` stood back (the
 * processor then throws BullMQ's `WaitingError`).
 */
export async function standBack(
  queue: Queue<JobData>,
  client: RedisClient,
  gate: FairGate,
  job: Job<JobData>,
  token: string,
): Promise<boolean> {
  if (!gate.isFull(job.data.fair)) return false;
  const ahead = await nextJobs(queue, client, peekDepth(gate.slots));
  const index = gate.standsBackFor(
    job.data.fair,
    ahead.map((waiting) => waiting.tag),
  );
  const other = ahead[index];
  if (other === undefined) return false;
  await job.moveToWait(token);
  // Back in the queue, `job` must not run here whatever happens next. The other job is moved
  // unless another worker took it meanwhile; if the move fails it keeps its place by priority.
  await Job.fromId<JobData>(queue, other.id)
    .then((next) => next?.changePriority({ priority: 0, lifo: true }))
    .catch(() => undefined);
  return true;
}

/** Between a job id and the tag of its principal, which the executor appends to the id. */
export const TAG_MARK = '~';

/**
 * The ids and tags of the next `ARGV[1]` jobs BullMQ hands out: the wait list from its head (the
 * right end), then the prioritized ones in order. A job's tag is read from its id (`…~<tag>`);
 * only a job whose id carries none (recovered, or added by an older version) has its hash read,
 * named from the prefix in ARGV[2] as BullMQ's own scripts do (the queue's `{bull}` slot on a
 * Cluster). KEYS[1] the wait list, KEYS[2] the prioritized set
 */
const NEXT_JOBS_LUA = `
local depth = tonumber(ARGV[1])
local ids = {}
local waiting = redis.call('LRANGE', KEYS[1], -depth, -1)
for i = #waiting, 1, -1 do ids[#ids + 1] = waiting[i] end
if #ids < depth then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, depth - #ids - 1)) do ids[#ids + 1] = id end
end
local out = {}
for _, id in ipairs(ids) do
  local tag = string.match(id, '${TAG_MARK}(%x+)$')
  if not tag then
    local data = redis.call('HGET', ARGV[2] .. id, 'data')
    tag = data and string.match(data, '"fair":"(%x+)"')
  end
  out[#out + 1] = id
  out[#out + 1] = tag or ''
end
return out
`;

const NEXT_JOBS_COMMAND = 'taskrail_next_jobs';
const defined = new WeakSet<RedisClient>();

/** The next jobs BullMQ hands out, with their principals' tags, in one script call. */
async function nextJobs(
  queue: Queue<JobData>,
  client: RedisClient,
  depth: number,
): Promise<Waiting[]> {
  if (!defined.has(client)) client.defineCommand(NEXT_JOBS_COMMAND, { lua: NEXT_JOBS_LUA });
  defined.add(client);
  const command = Reflect.get(client, NEXT_JOBS_COMMAND) as (...args: unknown[]) => unknown;
  const keys = [queue.keys.wait ?? '', queue.keys.prioritized ?? ''];
  const reply = (await command.call(client, 2, ...keys, depth, queue.toKey(''))) as string[];
  const jobs: Waiting[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const tag = reply[i + 1];
    jobs.push({ id: reply[i] as string, tag: tag === '' ? undefined : tag });
  }
  return jobs;
}
