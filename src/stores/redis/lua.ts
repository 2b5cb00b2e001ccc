import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Helpers prepended to every script. */
const PRELUDE = `
local terminal = { completed = true, failed = true, cancelled = true }
-- A task hash is live when it exists (expiresAt field present) and has not expired.
local function isLive(expiresAt, now)
  return expiresAt ~= false and (expiresAt == '' or tonumber(expiresAt) > now)
end
-- Leases are judged on Redis's own clock (TIME), so workers whose clocks disagree cannot take
-- each other's live leases. A caller's time is used only when given (tests with a fake clock).
local function leaseNow(given)
  if given ~= nil and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * One Lua script, run with EVALSHA and loaded on first use (or after a SCRIPT FLUSH / failover).
 * Each script is one atomic state change; its header says which keys it reads and writes.
 */
export class LuaScript {
  readonly source: string;
  readonly #sha: string;

  constructor(
    readonly name: string,
    body: string,
  ) {
    this.source = PRELUDE + body;
    this.#sha = createHash('sha1').update(this.source).digest('hex');
  }

  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
