import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { TestTools, text } from '../runtime/tools.js';
import { waitFor } from '../helpers/wait.js';
import { BlackholeRelay } from './blackhole-relay.js';
import { POSTGRES_URL, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

/** Records every releaseLease call (and still makes it): the test heals once one is on its way. */
function watchReleases(store: TaskStore, calls: { abandoned: boolean }[]): TaskStore {
  const release = store.releaseLease.bind(store);
  store.releaseLease = (id, token, options) => {
    calls.push({ abandoned: options?.abandoned === true });
    return release(id, token, options);
  };
  return store;
}

/**
 * Issue 27's PostgreSQL double run: a worker alone and busy, cut off from PostgreSQL for longer
 * than its pool's connect time-out. Its outcome write fails ("timeout exceeded when trying to
 * connect": the pool's one connection is stuck in a renewal behind the cut), the run's end is
 * unknown, and the lease must keep the record of the attempt: after the heal the recovery scan
 * finds the task interrupted and a `retry: false` tool fails instead of starting again.
 */
if (!skipWithoutPostgres('a worker cut off from PostgreSQL')) {
  describe('a worker cut off from PostgreSQL', () => {
    let relay: BlackholeRelay;
    let dir: string;
    before(async () => {
      const server = new URL(POSTGRES_URL as string);
      relay = await BlackholeRelay.start({ host: server.hostname, port: Number(server.port) });
      dir = mkdtempSync(join(tmpdir(), 'taskrail-partition-'));
    });
    after(async () => {
      await relay.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('never starts a retry: false tool twice when its outcome write times out', async () => {
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
      const viaRelay = new URL(urlWithSchema(uniqueSchema()));
      viaRelay.port = String(relay.port);
      viaRelay.searchParams.set('pool', '1');
      const releases: { abandoned: boolean }[] = [];
      const store = watchReleases(
        await openPostgresStore(viaRelay.toString(), {
          connectTimeoutMs: 3000,
          onWarning: () => undefined,
        }),
        releases,
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
        relay.blackhole();
        // The pool's one connection is now stuck in a lease renewal behind the cut.
        await waitFor('a renewal caught by the cut', () => relay.heldBytes > 0);
        finishTool();
        await waitFor('the run to let go of its lease', () => releases.length > 0, {
          timeoutMs: 20_000,
        });
        relay.heal();
        const final = await waitFor(
          'the task to end',
          async () => {
            const current = await store.get(task.id);
            return current?.status === 'working' ? undefined : current;
          },
          { timeoutMs: 20_000 },
        );
        assert.equal(starts(), 1, 'the retry: false tool started exactly once');
        assert.equal(final?.status, 'failed');
        assert.match(JSON.stringify(final?.error), /interrupted/);
      } finally {
        finishTool();
        relay.heal();
        await runtime.stop(1000);
        await store.close();
      }
    });
  });
}
