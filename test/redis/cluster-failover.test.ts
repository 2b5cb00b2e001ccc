import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { Child } from '../helpers/child.js';
import { createTask, deployment, statusOn } from '../helpers/deployment.js';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';
import { uniquePrefix } from './redis-env.js';

const TOOLS = '.build/test/redis/fixtures/e2e-tools.js';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * A real deployment on a Redis Cluster of 3 masters with a replica each: one `serve
 * --no-worker` replica and two `taskrail worker`s. While tasks run, the worker running a
 * `retry: false` task is SIGKILLed and the master holding the BullMQ queue fails over to its
 * replica (CLUSTER FAILOVER). Every task must end, the killed one as interrupted, and no
 * `retry: false` tool may start twice.
 */
if (!skipWithoutRedisServer('redis cluster failover')) {
  describe('redis cluster: a worker killed and a master failed over mid-run', () => {
    let cluster: LocalCluster;
    let processes: ReturnType<typeof deployment>;
    let workers: Child[] = [];
    let replica: RawDispatch;
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-cluster-e2e-'));

    before(async () => {
      cluster = await startCluster(3, 1);
      const store = `${cluster.url}&prefix=${uniquePrefix()}`;
      processes = deployment({ store, tools: TOOLS, logPath: join(dir, 'events.log') });
      [replica, ...workers] = await Promise.all([
        processes.replica(),
        processes.worker(),
        processes.worker(),
      ]);
    });

    after(async () => {
      await processes?.stopAll();
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const events = () => processes.events();
    const count = (event: string, taskId: string) =>
      events().filter((e) => e.event === event && e.taskId === taskId).length;

    async function createWave(size: number): Promise<{ once: string[]; durable: string[] }> {
      const once: string[] = [];
      const durable: string[] = [];
      for (let i = 0; i < size; i++) {
        once.push(await createTask(replica, 'once_job', { seconds: 2 }));
        durable.push(await createTask(replica, 'durable_job', { seconds: 1 }));
      }
      return { once, durable };
    }

    it('ends every task, runs no retry: false tool twice, and keeps taking work', async () => {
      const first = await createWave(4);
      const started = await waitFor(
        'a worker to start a retry: false task',
        () => events().find((e) => e.event === 'once-start' && first.once.includes(e.taskId)),
        { timeoutMs: 30_000 },
      );
      const victim = workers.find((worker) => worker.process.pid === started.pid);
      assert.ok(victim, `worker ${started.pid} runs ${started.taskId}`);
      const queueSlot = Number(
        cluster.cli(cluster.ports[0] as number, 'CLUSTER', 'KEYSLOT', '{bull}'),
      );
      const { master, replica: standby } = cluster.ownerOf(queueSlot);
      assert.ok(standby !== undefined, 'the queue master has a replica');
      await victim.kill('SIGKILL');
      cluster.cli(standby, 'CLUSTER', 'FAILOVER');
      await waitFor('the replica to take over the queue slot', () => {
        return cluster.ownerOf(queueSlot).master === standby;
      });
      process.stdout.write(
        `# queue slot ${queueSlot}: master ${master} failed over to ${standby}\n`,
      );

      const second = await createWave(2);
      const all = [...first.once, ...first.durable, ...second.once, ...second.durable];
      const finished = new Map<string, string>();
      await waitFor(
        'every task to end',
        async () => {
          for (const id of all) {
            if (finished.has(id)) continue;
            const status = await statusOn(replica, id);
            if (TERMINAL.has(status)) finished.set(id, status);
          }
          return finished.size === all.length;
        },
        { timeoutMs: 75_000, intervalMs: 250 },
      );

      for (const id of [...first.once, ...second.once]) {
        assert.ok(count('once-start', id) <= 1, `retry: false task ${id} started twice`);
      }
      assert.equal(finished.get(started.taskId), 'failed', 'the killed run ends interrupted');
      for (const id of [...first.once, ...second.once]) {
        if (id === started.taskId) continue;
        const status = finished.get(id);
        if (status === 'completed') assert.equal(count('once-done', id), 1);
        // Others of the killed worker (concurrency 2) end interrupted as well, never re-run.
        else assert.equal(status, 'failed', `${id} ended ${status}`);
      }
      for (const id of [...first.durable, ...second.durable]) {
        assert.equal(finished.get(id), 'completed', `durable task ${id}`);
      }
      for (const id of [...second.once, ...second.durable]) {
        assert.equal(finished.get(id), 'completed', `task ${id} created after the failover`);
      }
    });
  });
}
