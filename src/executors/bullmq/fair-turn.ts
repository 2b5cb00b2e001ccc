import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '../../stores/redis/scripts.js';
import { peekDepth, type FairGate, type QuietLook } from '../shared/fair-gate.js';
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
 * and a principal alone in the queue is never held back (nor looked for at every job: `quiet`).
 * Returns true when `job` stood back (the processor then throws BullMQ's `WaitingError`).
 */
export async function standBack(
  queue: Queue<JobData>,
  client: RedisClient,
  fair: { gate: FairGate; quiet: QuietLook },
  job: Job<JobData>,
  token: string,
): Promise<boolean> {
  const { gate, quiet } = fair;
  if (!gate.isFull(job.data.fair)) return false;
  const full = gate.fullTags();
  if (quiet.foundNobodyLately(full)) return false;
  const other = await firstOtherJob(queue, client, peekDepth(gate.slots), full);
  if (other === undefined) quiet.foundNobody(full);
  // Judged again on the counts of now: a slot may have come free during the look.
  if (other === undefined || gate.standsBackFor(job.data.fair, [other.tag]) !== 0) return false;
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
 * Among the next `ARGV[1]` jobs BullMQ hands out (the wait list from its head, the right end,
 * then the prioritized ones in order), the first one of a principal that is not full here: its
 * id and tag, or nothing. ARGV[3..] are the full principals' tags. A job's tag is read from its
 * id (`…~<tag>`); only a job whose id carries none (recovered, or added by an older version) has
 * its hash read, named from the prefix in ARGV[2] as BullMQ's own scripts do (the queue's
 * `{bull}` slot on a Cluster). Untagged jobs are nobody's: never chosen.
 * KEYS[1] the wait list, KEYS[2] the prioritized set
 */
const FIRST_OTHER_JOB_LUA = `
local depth = tonumber(ARGV[1])
local full = {}
for i = 3, #ARGV do full[ARGV[i]] = true end
local ids = {}
local waiting = redis.call('LRANGE', KEYS[1], -depth, -1)
for i = #waiting, 1, -1 do ids[#ids + 1] = waiting[i] end
if #ids < depth then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, depth - #ids - 1)) do ids[#ids + 1] = id end
end
for _, id in ipairs(ids) do
  local tag = string.match(id, '${TAG_MARK}(%x+)$')
  if not tag then
    local data = redis.call('HGET', ARGV[2] .. id, 'data')
    tag = data and string.match(data, '"fair":"(%x+)"')
  end
  if tag and not full[tag] then return {id, tag} end
end
return false
`;

const FIRST_OTHER_JOB_COMMAND = 'taskrail_first_other_job';
const defined = new WeakSet<RedisClient>();

/** The first waiting job of a principal not in `full`, in one script call; undefined if none. */
async function firstOtherJob(
  queue: Queue<JobData>,
  client: RedisClient,
  depth: number,
  full: readonly string[],
): Promise<Waiting | undefined> {
  if (!defined.has(client)) {
    client.defineCommand(FIRST_OTHER_JOB_COMMAND, { lua: FIRST_OTHER_JOB_LUA });
  }
  defined.add(client);
  const command = Reflect.get(client, FIRST_OTHER_JOB_COMMAND) as (...args: unknown[]) => unknown;
  const keys = [queue.keys.wait ?? '', queue.keys.prioritized ?? ''];
  const reply = (await command.call(client, 2, ...keys, depth, queue.toKey(''), ...full)) as
    [string, string] | null;
  return reply === null ? undefined : { id: reply[0], tag: reply[1] };
}
