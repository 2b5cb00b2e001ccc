import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../../runtime/api.js';
import { parseRedisUrl } from '../../stores/redis/url.js';

/**
 * Replicas and workers sharing one Redis must serve the same tools: a worker that lacks a tool
 * fails every task of it, and a replica that lacks one refuses calls others accept. Each process
 * announces what it runs in `<prefix>:fleet` and compares itself with the live members at start.
 */
export interface FleetMember {
  role: 'serve' | 'worker';
  /** taskrail's version. */
  version: string;
  /** `name:mode` of every tool, sorted. */
  tools: string[];
  host: string;
  pid: number;
  seenAt: number;
}

/** Members older than this are taken as gone (a process that died without leaving). */
const STALE_MS = 60_000;
const REFRESH_MS = 20_000;

/** Human-readable differences between this process and the other live members. */
export function fleetMismatches(self: FleetMember, others: FleetMember[]): string[] {
  const problems: string[] = [];
  for (const other of others) {
    const who = `${other.role} ${other.host}:${other.pid}`;
    if (other.version !== self.version) {
      problems.push(
        `${who} runs taskrail ${other.version}, this ${self.role} runs ${self.version}`,
      );
    }
    const mine = new Set(self.tools);
    const theirs = new Set(other.tools);
    const onlyHere = self.tools.filter((tool) => !theirs.has(tool));
    const onlyThere = other.tools.filter((tool) => !mine.has(tool));
    if (onlyHere.length > 0 || onlyThere.length > 0) {
      const parts = [
        onlyHere.length > 0 ? `only here: ${onlyHere.join(', ')}` : '',
        onlyThere.length > 0 ? `only there: ${onlyThere.join(', ')}` : '',
      ].filter(Boolean);
      problems.push(
        `${who} serves other tools (${parts.join('; ')}); start both with the same --tools`,
      );
    }
  }
  return problems;
}

export interface FleetMembership {
  /** What was found at start: empty when every live member matches. */
  readonly mismatches: string[];
  /** Workers that announced themselves within the last minute (throws while Redis is down). */
  liveWorkers(): Promise<number>;
  leave(): Promise<void>;
}

/**
 * Without a listener an ioredis 'error' event is an "Unhandled error event" stack on every
 * reconnect attempt. One warning per outage and one line on recovery instead.
 */
function reportOutages(redis: Redis, logger: Logger): void {
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
  const redis = new Redis(location.connectUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
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

async function liveMembers(redis: Redis, key: string, selfField: string): Promise<FleetMember[]> {
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
