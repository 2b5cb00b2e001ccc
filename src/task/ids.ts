import { randomFillSync } from 'node:crypto';

// One CSPRNG call fills a pool that serves many ids: a call per id cost more than the rest of
// a task's bookkeeping together. Bytes are handed out once and never reused.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function randomBase64url(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}

const TIME_BYTES = 6;
const timeBytes = Buffer.alloc(TIME_BYTES);

/**
 * The creation time in ms (6 bytes), then 144 random bits from the CSPRNG, base64url: 32
 * URL-safe characters. The time first makes ids created together neighbours in a B-tree index:
 * with wholly random ids every insert dirtied its own page of the SQLite primary-key index,
 * each page one more WAL frame written per commit and copied by each checkpoint (measured: a
 * fifth of the server CPU per create at 32 connections). The random part alone is the
 * capability; the time it reveals is the task's `createdAt`, which its holder sees anyway.
 * Never starting with `-` (the time's first character is `A` until 2109), so that an id given
 * to the CLI (`taskrail admin cancel ID`) is not read as an option.
 */
export function newTaskId(): string {
  timeBytes.writeUIntBE(Date.now(), 0, TIME_BYTES);
  const id = timeBytes.toString('base64url') + randomBase64url(18);
  return id.startsWith('-') ? `x${id.slice(1)}` : id;
}

/** 128 random bits from the CSPRNG, base64url: 22 URL-safe characters. */
export function newToken(): string {
  return randomBase64url(16);
}

const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Ids arrive from the wire; anything that could not be one of ours is rejected early. */
export function isPlausibleTaskId(value: unknown): value is string {
  return typeof value === 'string' && TASK_ID_PATTERN.test(value);
}
