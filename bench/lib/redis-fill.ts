/**
 * Fills a Redis task store with `count` completed tasks, fast enough for ten million, through
 * the store's own code: each record goes through `RedisTaskStore.create`, whose one script call
 * is captured (not sent) and written as an `EVALSHA` of the store's own create script into a
 * raw socket, thousands per write, as `redis-cli --pipe` would. So the keys, hashes and indexes
 * are exactly what the store writes, with no per-command client overhead. Task ids are derived
 * from a seed and the task's index, so any task can be named without asking Redis.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { RedisTaskStore } from '../../src/stores/redis/redis-store.js';
import { scriptSources, type RedisClient } from '../../src/stores/redis/scripts.js';

/** Long enough that a cached fill stays live for a year; every task has a ttl, as by default. */
export const FILL_TTL_MS = 365 * 24 * 3_600_000;
const CHUNK = 500;
const IN_FLIGHT_CHUNKS = 16;

/** The id of task `index`: 18 bytes of sha256(seed, index), base64url, as newTaskId's shape. */
export function taskIdAt(seed: string, index: number): string {
  const id = createHash('sha256').update(`${seed}:${index}`).digest().toString('base64url', 0, 18);
  return id.startsWith('-') ? `x${id.slice(1)}` : id;
}

/** Task `index` of a fill: a small completed task (a short argument, a one-line text result). */
export function filledTask(seed: string, index: number, firstCreatedAt: number): TaskRecord {
  const createdAt = firstCreatedAt + index;
  const input = {
    id: taskIdAt(seed, index),
    principal: 'anonymous',
    tool: 'noop',
    arguments: { i: index },
    ttlMs: FILL_TTL_MS,
    pollIntervalMs: 1,
  };
  return {
    ...newTaskRecord(input, createdAt),
    status: 'completed',
    updatedAt: createdAt + 1,
    revision: 2,
    result: { content: [{ type: 'text', text: `task ${index}` }] },
  };
}

/** One Redis command in RESP. */
function resp(args: readonly (string | number)[]): string {
  let out = `*${args.length}\r\n`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return out;
}

/**
 * A stand-in for the store's ioredis client that records the scripts the store defines and
 * turns each script call into the RESP of an EVALSHA, answering as Redis answers a create of a
 * new id without a lease or a cap. Any other command fails the fill: only `create` may run through it.
 */
function captureClient(commands: string[]): RedisClient {
  const shas = new Map<string, string>();
  const methods: Record<string, unknown> = {
    defineCommand(name: string, definition: { lua: string }) {
      shas.set(name, createHash('sha1').update(definition.lua).digest('hex'));
    },
  };
  return new Proxy(methods, {
    get(target, name) {
      if (typeof name !== 'string') return undefined;
      if (name in target) return target[name];
      const sha = shas.get(name);
      if (sha === undefined) throw new Error(`the fill cannot send ${name}`);
      return (...values: (string | number)[]) => {
        commands.push(resp(['EVALSHA', sha, ...values]));
        return Promise.resolve([1, 0, 0]);
      };
    },
  }) as unknown as RedisClient;
}

/** The store's own create, its Redis client replaced by the capture above. */
function capturingStore(prefix: string, commands: string[], clock = Date.now): RedisTaskStore {
  const client = captureClient(commands);
  return new RedisTaskStore({
    redis: client,
    subscriber: client,
    prefix,
    buckets: 1, // a single Redis, as openRedisStore sets it
    description: 'bench fill',
    clock,
    origin: 'bench-fill',
    expiryGraceMs: 10 * 60_000,
  });
}

// {1, 0, 0}: created, no lease, no place counted (no queue cap asked for)
const CREATED_REPLY = Buffer.from('*3\r\n:1\r\n:0\r\n:0\r\n');

/**
 * A raw connection that sends RESP in bulk and checks every reply is CREATED_REPLY (anything
 * else, e.g. `{-1}` for a taken id or a script error, fails the fill with Redis's words).
 */
class BulkConnection {
  readonly #socket: Socket;
  #received = 0;
  #waiting: { replies: number; resolve: () => void; reject: (error: Error) => void } | undefined;
  #failure: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#check(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('redis closed the connection')));
  }

  static open(port: number, host = '127.0.0.1'): Promise<BulkConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host, noDelay: true });
      socket.once('connect', () => resolve(new BulkConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends, then resolves once at most `behind` replies are still owed out of all sent. */
  async send(text: string, sentReplies: number, behind: number): Promise<void> {
    if (!this.#socket.write(text)) await new Promise((r) => this.#socket.once('drain', r));
    await this.waitFor(sentReplies - behind);
  }

  waitFor(replies: number): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#received >= replies * CREATED_REPLY.length) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiting = { replies, resolve, reject };
    });
  }

  close(): void {
    this.#failure ??= new Error('closed');
    this.#socket.destroy();
  }

  #check(chunk: Buffer): void {
    const size = CREATED_REPLY.length;
    for (let i = 0; i < chunk.length; i += 1) {
      if (chunk[i] !== CREATED_REPLY[(this.#received + i) % size]) {
        const text = chunk.toString('utf8', Math.max(0, i - 12), i + 200);
        return this.#fail(new Error(`a create did not answer {1, 0, 0}: ${JSON.stringify(text)}`));
      }
    }
    this.#received += chunk.length;
    const waiting = this.#waiting;
    if (waiting !== undefined && this.#received >= waiting.replies * size) {
      this.#waiting = undefined;
      waiting.resolve();
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#socket.destroy();
    this.#waiting?.reject(this.#failure);
    this.#waiting = undefined;
  }
}

export interface FillPlan {
  port: number;
  host?: string;
  prefix: string;
  seed: string;
  /** Tasks `from` (inclusive) to `to` (exclusive) are written. */
  from: number;
  to: number;
  firstCreatedAt: number;
}

/** Writes tasks `from`…`to - 1` of the plan; the store's create script must be loaded. */
export async function fillRedis(plan: FillPlan): Promise<void> {
  const commands: string[] = [];
  const store = capturingStore(plan.prefix, commands);
  const connection = await BulkConnection.open(plan.port, plan.host);
  try {
    for (let start = plan.from; start < plan.to; start += CHUNK) {
      const end = Math.min(plan.to, start + CHUNK);
      for (let i = start; i < end; i += 1) {
        await store.create(filledTask(plan.seed, i, plan.firstCreatedAt));
      }
      const text = commands.join('');
      commands.length = 0;
      await connection.send(text, end - plan.from, IN_FLIGHT_CHUNKS * CHUNK);
    }
    await connection.waitFor(plan.to - plan.from);
  } finally {
    connection.close();
  }
}

/**
 * The command a fill sends for `task` at time `now`: the script's SHA, the keys and the
 * arguments, so a change to any of them (script, key layout, codec) shows in a fingerprint.
 */
export async function createCommand(prefix: string, task: TaskRecord, now: number) {
  const commands: string[] = [];
  await capturingStore(prefix, commands, () => now).create(task);
  return commands.join('');
}

/** The store's create script, for SCRIPT LOAD before a fill (EVALSHA does not load it). */
export function createScriptSource(): string {
  return scriptSources().get('create') as string;
}
