import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';
import { TaskrailError } from '../../task/errors.js';

/** A single Redis or a Redis Cluster: the store speaks the same commands to both. */
export type RedisClient = Redis | Cluster;

/** The scripts in ./lua (copied next to the compiled code by scripts/copy-assets.mjs). */
const SCRIPT_NAMES = [
  'create',
  'reserve-idempotency',
  'forget-idempotency',
  'compare-and-set',
  'save-step',
  'append-text',
  'read-text',
  'claim',
  'renew-lease',
  'release-lease',
  'release-until',
  'acquire-permit',
  'release-permit',
  'cluster-permit',
  'lease-left',
  'lease-range',
  'read-tasks',
  'sweep-task',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];
type Arg = string | number;

let sources: Map<ScriptName, string> | undefined;

export function readLua(name: string): string {
  const url = new URL(`./lua/${name}.lua`, import.meta.url);
  try {
    return readFileSync(url, 'utf8');
  } catch (error) {
    throw new TaskrailError(
      'CONFIG',
      `taskrail's Lua script ${fileURLToPath(url)} is missing: the package is incomplete ` +
        '(reinstall it; in a checkout, run `npm run build`)',
      { cause: error },
    );
  }
}

/** Every script with the shared prelude in front, read once per process. */
export function scriptSources(): Map<ScriptName, string> {
  if (sources !== undefined) return sources;
  const prelude = readLua('prelude');
  sources = new Map(SCRIPT_NAMES.map((name) => [name, `${prelude}\n${readLua(name)}`]));
  return sources;
}

/** Each script's ioredis command name, made once: a store calls scripts several times a task. */
const COMMAND_NAMES = new Map<ScriptName, string>(
  SCRIPT_NAMES.map((name) => [name, `taskrail_${name.replaceAll('-', '_')}`]),
);

function commandName(name: ScriptName): string {
  return COMMAND_NAMES.get(name) as string;
}

/**
 * The store's scripts as ioredis commands (`defineCommand`: EVALSHA, and EVAL when the server
 * lost its script cache, e.g. after a restart or failover). Keys always travel in KEYS.
 */
export class RedisScripts {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
    for (const [name, lua] of scriptSources()) redis.defineCommand(commandName(name), { lua });
  }

  run(name: ScriptName, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return callScript(this.#redis, name, keys, args);
  }
}

/** Calls a defined script on a client or a pipeline of it. */
export function callScript<T>(
  target: object,
  name: ScriptName,
  keys: readonly string[],
  args: readonly Arg[],
): T {
  const command = Reflect.get(target, commandName(name)) as (...values: Arg[]) => T;
  return command.call(target, keys.length, ...keys, ...args);
}
