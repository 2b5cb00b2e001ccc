import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../runtime/api.js';
import { COMMAND_TIMEOUT_MS, newRedisClient } from '../../stores/redis/connect.js';
import type { RedisClient } from '../../stores/redis/scripts.js';
import { parseRedisUrl } from '../../stores/redis/url.js';
import {
  fleetMismatches,
  REFRESH_MS,
  STALE_MS,
  type FleetMember,
  type FleetMembership,
} from '../shared/fleet-members.js';

export {
  fleetMismatches,
  type FleetMember,
  type FleetMembership,
} from '../shared/fleet-members.js';

/**
 * Without a listener an ioredis 'error' event is an "Unhandled error event" stack on every
 * reconnect attempt. One warning per outage and one line on recovery instead.
 */
function reportOutages(redis: RedisClient, logger: Logger): void {
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn('fleet: lost the redis connection (reconnecting)', { error: error.message });
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('fleet: redis connection restored');
  });
}

/** Announces this process under the store URL's prefix and warns about mismatched members. */
export async function joinFleet(
  storeUrl: string,
  member: Omit<FleetMember, 'host' | 'pid' | 'seenAt'>,
  logger: Logger,
): Promise<FleetMembership> {
  const location = parseRedisUrl(storeUrl);
  const key = `${location.prefix}:fleet`;
  const field = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // With a command time-out also on a Cluster: a refused refresh is retried 20 s later, and a
  // stop must not hang on leaving a store cut off by a link that drops packets.
  const redis = newRedisClient(location, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  reportOutages(redis, logger);
  await redis.connect();
  const self = (): FleetMember => ({
    ...member,
    host: hostname(),
    pid: process.pid,
    seenAt: Date.now(),
  });
  await redis.hset(key, field, JSON.stringify(self()));
  const others = await liveMembers(redis, key, field);
  const mismatches = fleetMismatches(self(), others);
  for (const problem of mismatches) logger.warn(`fleet mismatch: ${problem}`);
  const timer = setInterval(() => {
    redis.hset(key, field, JSON.stringify(self())).catch(() => undefined);
  }, REFRESH_MS);
  timer.unref();
  return {
    mismatches,
    async liveWorkers() {
      const members = await liveMembers(redis, key, field);
      return members.filter((other) => other.role === 'worker').length;
    },
    async leave() {
      clearInterval(timer);
      await redis.hdel(key, field).catch(() => undefined);
      redis.disconnect();
    },
  };
}

async function liveMembers(
  redis: RedisClient,
  key: string,
  selfField: string,
): Promise<FleetMember[]> {
  const all = await redis.hgetall(key);
  const now = Date.now();
  const live: FleetMember[] = [];
  for (const [field, text] of Object.entries(all)) {
    if (field === selfField) continue;
    const member = parseMember(text);
    if (member === undefined || now - member.seenAt > STALE_MS) {
      await redis.hdel(key, field);
      continue;
    }
    live.push(member);
  }
  return live;
}

function parseMember(text: string): FleetMember | undefined {
  try {
    const value = JSON.parse(text) as FleetMember;
    return Array.isArray(value.tools) && typeof value.seenAt === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}
