import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { stopReasonOf } from '../../src/runtime/abort-reasons.js';
import { TestTools, abortable, text } from '../runtime/tools.js';
import { startTcpRelay, type TcpRelay } from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';
import {
  POSTGRES_URL,
  dropSchema,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
  urlWithSchema,
} from './postgres-env.js';

/** Counts the outcome writes that failed with store trouble (and still makes every one). */
function watchFailedWrites(store: TaskStore, failed: { count: number }): TaskStore {
  const compareAndSet = store.compareAndSet.bind(store);
  store.compareAndSet = (next, revision, fence) =>
    compareAndSet(next, revision, fence).catch((error: unknown) => {
      failed.count += 1;
      throw error;
    });
  return store;
}

/**
 * Issue 27's PostgreSQL double run, and issue 36's outcome in hand: a worker alone and busy,
 * cut off from PostgreSQL for longer than its pool's connect time-out and its lease. Its
 * outcome write fails ("timeout exceeded when trying to connect": the pool's one connection is
 * stuck in a renewal behind the cut) until the heal, and is offered again until it lands:
 * nobody else claimed the task, so the `retry: false` tool that completed ends completed, and
 * its own process's recovery never starts it a second time.
 */
if (!skipWithoutPostgres('a worker cut off from PostgreSQL')) {
  describe('a worker cut off from PostgreSQL', () => {
    let relay: TcpRelay;
    let dir: string;
    before(async () => {
      const server = new URL(POSTGRES_URL as string);
      relay = await startTcpRelay({ host: server.hostname, port: Number(server.port) });
      dir = mkdtempSync(join(tmpdir(), 'taskrail-partition-'));
    });
    after(async () => {
      await relay.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('never starts a retry: false tool twice when its outcome write times out, and keeps its outcome', async () => {
      const journal = join(dir, 'starts.log');
      const starts = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean).length;
      let finishTool: () => void = () => undefined;
      const toolMayFinish = new Promise<void>((resolve) => (finishTool = resolve));
      const tools = new TestTools().add(
        'charge_once',
        async () => {
          appendFileSync(journal, 'start\n');
          await toolMayFinish;
          return text('charged');
        },
        { mode: 'optional', retry: false },
      );
      const doubleRunSchema = uniqueSchema();
      const viaRelay = new URL(relay.urlFor(urlWithSchema(doubleRunSchema)));
      viaRelay.searchParams.set('pool', '1');
      const failed = { count: 0 };
      const store = watchFailedWrites(
        await openPostgresStore(viaRelay.toString(), {
          connectTimeoutMs: 3000,
          onWarning: () => undefined,
        }),
        failed,
      );
      const silent = { info() {}, warn() {}, error() {} };
      const runtime = new TaskRuntime({ store, tools, logger: silent, leaseMs: 600 });
      try {
        const task = await runtime.createTask({
          tool: 'charge_once',
          arguments: {},
          principal: 'p',
        });
        await waitFor('the tool to start', () => starts() === 1);
        relay.setMode('blackhole');
        // The pool's one connection is now stuck in a lease renewal behind the cut.
        await waitFor('a renewal caught by the cut', () => relay.droppedBytes > 0);
        finishTool();
        await waitFor('the outcome write to fail', () => failed.count > 0, { timeoutMs: 20_000 });
        const [row] = await sql<{ until: number }>(
          `SELECT lease_expires_at AS until FROM "${doubleRunSchema}".tasks WHERE id = $1`,
          [task.id],
        );
        assert.ok(row !== undefined && Number(row.until) < Date.now(), 'the lease ran out');
        await runtime.recoverNow().catch(() => undefined); // its own scan, during the cut
        relay.setMode('pass');
        const final = await waitFor(
          'the task to end',
          async () => {
            await runtime.recoverNow().catch(() => undefined); // and after the heal
            const current = await store.get(task.id);
            return current?.status === 'working' ? undefined : current;
          },
          { timeoutMs: 20_000 },
        );
        assert.equal(starts(), 1, 'the retry: false tool started exactly once');
        assert.equal(final?.status, 'completed', JSON.stringify(final?.error));
        assert.deepEqual(final?.result, text('charged'));
        assert.equal(final?.attempt, 1);
      } finally {
        finishTool();
        relay.setMode('pass');
        await runtime.stop(1000);
        await store.close();
        await dropSchema(doubleRunSchema);
      }
    });

    it('stops a handler whose lease cannot be renewed before the lease runs out', async () => {
      const schema = uniqueSchema();
      let stop: { at: number; reason: unknown } | undefined;
      const tools = new TestTools().add('watch', async (_args, ctx) => {
        if (ctx.attempt > 1) return text('re-run');
        await abortable(ctx.signal).catch((reason: unknown) => {
          stop = { at: Date.now(), reason };
        });
        return text('late result, to be discarded');
      });
      const store = await openPostgresStore(relay.urlFor(urlWithSchema(schema)), {
        onWarning: () => undefined,
      });
      const silent = { info() {}, warn() {}, error() {} };
      const runtime = new TaskRuntime({ store, tools, logger: silent, leaseMs: 1500 });
      try {
        const task = await runtime.createTask({ tool: 'watch', arguments: {}, principal: 'p' });
        await waitFor('the handler to start', () => tools.calls.get('watch') === 1);
        relay.setMode('blackhole');
        const stopped = await waitFor('the handler to be stopped', () => stop);
        // The cut-off runner cannot have moved its lease since: the database still holds the
        // expiry it last granted (same machine, same clock as this process).
        const [row] = await sql<{ until: number }>(
          `SELECT lease_expires_at AS until FROM "${schema}".tasks WHERE id = $1`,
          [task.id],
        );
        assert.ok(row !== undefined && stopped.at < Number(row.until), 'stopped before expiry');
        assert.equal(stopReasonOf({ reason: stopped.reason }), 'lease-lost');
        assert.match(String((stopped.reason as Error).message), /could not be renewed/);
        relay.setMode('pass');
        const final = await waitFor(
          'the task to end',
          async () => {
            const current = await store.get(task.id);
            return current?.status === 'working' ? undefined : current;
          },
          { timeoutMs: 20_000 },
        );
        assert.deepEqual(final?.result, text('re-run'), 'the late result was not written');
        assert.equal(final?.attempt, 2, 'the stopped run counted as interrupted');
      } finally {
        relay.setMode('pass');
        await runtime.stop(1000);
        await store.close();
        await dropSchema(schema);
      }
    });
  });
}
