/**
 * `--max-queued-per-principal` through real HTTP on a real `taskrail serve`, on SQLite, Redis
 * and PostgreSQL: the refusal is HTTP 429 with `Retry-After` and the JSON-RPC error on both
 * wires (a 2025-11-25 session's answer included), creates nothing, is exact when creates race
 * at the cap, and never stands in the way of a lost-reply retry of a task that exists.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import type { Child } from '../helpers/child.js';
import {
  assertQueueFull,
  call2025,
  open2025,
  post2026,
  postPlain2026,
  taskIdIn,
} from '../helpers/queue-cap-calls.js';
import { startServing } from '../helpers/taskrail.js';
import { dropSchema, POSTGRES_URL, uniqueSchema, urlWithSchema } from '../postgres/postgres-env.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';
const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob', 'tok-c': 'carol' };
const CAP = 2;

interface StoreUnderTest {
  name: string;
  url: string;
  /** Flags of a serve whose tasks stay `working` (nothing frees a place during a case). */
  flags: string[];
  drop(): Promise<void>;
}

function stores(dir: string): StoreUnderTest[] {
  const all: StoreUnderTest[] = [
    {
      name: 'SQLite',
      url: `sqlite:${join(dir, 'tasks.db')}`,
      flags: ['--concurrency', '1'],
      drop: async () => undefined,
    },
  ];
  if (REDIS_URL) {
    const prefix = uniquePrefix();
    const drop = async () => void (await deletePrefix(prefix));
    all.push({ name: 'Redis', url: urlWithPrefix(prefix), flags: ['--no-worker'], drop });
  } else process.stdout.write('# Redis part skipped: TASKRAIL_REDIS_URL is not set\n');
  if (POSTGRES_URL) {
    const schema = uniqueSchema();
    const drop = () => dropSchema(schema);
    all.push({ name: 'PostgreSQL', url: urlWithSchema(schema), flags: ['--no-worker'], drop });
  } else process.stdout.write('# PostgreSQL part skipped: TASKRAIL_POSTGRES_URL is not set\n');
  return all;
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-queue-cap-'));
const tokens = join(dir, 'tokens.json');
writeFileSync(tokens, JSON.stringify(TOKENS));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const store of stores(dir)) {
  describe(`--max-queued-per-principal ${CAP} on ${store.name} (real serve, real HTTP)`, () => {
    let url = '';
    let child: Child;
    let observer: TaskStore;
    before(async () => {
      const args = ['serve', '--port', '0', '--store', store.url, '--tools', TOOLS];
      const flags = ['--auth', `tokens:${tokens}`, '--log-level', 'warn', ...store.flags];
      const cap = ['--max-queued-per-principal', String(CAP)];
      ({ url, child } = await startServing([...args, ...flags, ...cap]));
      observer = await openStore(store.url);
    });
    after(async () => {
      await observer.close();
      await child.stop(30_000);
      await store.drop();
    });
    const tasksOf = async (principal: string) => (await observer.list({ principal })).tasks.length;

    let session = '';
    it('a lost-reply retry while its principal is at the cap gets its task, on both wires', async () => {
      session = await open2025(url, 'tok-a');
      const first2026 = await post2026(url, 'tok-a', 'k-2026');
      const first2025 = await call2025(url, 'tok-a', session, 'k-2025');
      assert.equal(first2026.status, 200, first2026.text);
      assert.equal(first2025.status, 200, first2025.text);
      const retried2026 = await post2026(url, 'tok-a', 'k-2026');
      assert.equal(retried2026.status, 200, retried2026.text);
      assert.equal(taskIdIn(retried2026), taskIdIn(first2026), 'the 2026-07-28 retry got its task');
      const retried2025 = await call2025(url, 'tok-a', session, 'k-2025');
      assert.equal(retried2025.status, 200, retried2025.text);
      assert.equal(taskIdIn(retried2025), taskIdIn(first2025), 'the 2025-11-25 retry got its task');
      assert.equal(await tasksOf('alice'), CAP);
    });

    it('a create past the cap is refused with 429 and Retry-After on both wires, creating nothing', async () => {
      assertQueueFull(await post2026(url, 'tok-a', 'k-new'), '2026-07-28');
      assertQueueFull(await call2025(url, 'tok-a', session, 'k-new'), '2025-11-25 session');
      assertQueueFull(await postPlain2026(url, 'tok-a'), '2026-07-28 plain call');
      assert.equal(await tasksOf('alice'), CAP, 'the refused creates made no task');
      assert.equal((await post2026(url, 'tok-b', 'k-bob')).status, 200, 'bob is still served');
    });

    it('creates racing at the cap make exactly the cap', async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => post2026(url, 'tok-c', `race-${i}`)),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429, 429, 429]);
      assert.equal(await tasksOf('carol'), CAP);
    });
  });
}

describe('--max-queued-per-principal flag', () => {
  it('refuses a value that is not a positive integer, with a clear error', async () => {
    for (const bad of ['0', '-1', 'ten']) {
      const args = ['serve', '--port', '0', '--store', `sqlite:${join(dir, 'flag.db')}`];
      const started = startServing([...args, '--max-queued-per-principal', bad]);
      await assert.rejects(started, /max-queued-per-principal.*whole number of at least 1/s);
    }
  });
});
