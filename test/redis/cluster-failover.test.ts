import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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

    /** Fails naming the tasks that did not end, as last seen (a missing one: `error …`). */
    async function endAll(ids: string[], timeoutMs: number): Promise<Map<string, string>> {
      const finished = new Map<string, string>();
      const pending = new Map<string, string>();
      await waitFor(
        'every task to end',
        async () => {
          for (const id of ids) {
            if (finished.has(id)) continue;
            const status = await statusOn(replica, id);
            if (TERMINAL.has(status)) finished.set(id, status);
            else pending.set(id, status);
          }
          return finished.size === ids.length;
        },
        { timeoutMs, intervalMs: 250 },
      ).catch((error: unknown) => {
        const left = [...pending].filter(([id]) => !finished.has(id));
        throw new Error(`${String(error)}; not ended: ${JSON.stringify(left)}`, { cause: error });
      });
      return finished;
    }

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
      const finished = await endAll(all, 75_000);

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

    // A stalled master that wakes after its replica took over executes and acknowledges the
    // commands queued meanwhile (claims, creates, results) before it learns it was replaced:
    // they are lost. Before creates and claims were confirmed on the replicas (replica-acks.ts),
    // a lost claim let a `retry: false` task start twice here (1 run of 4), and tasks created
    // during the freeze vanished (2 runs of 3).
    // A create could still vanish (1 of 2 CI runs): answered as stored but unconfirmed once it
    // came back from the frozen master past its 5 s budget; the task was never found again.
    // Time a master spends stalled no longer counts against that budget (replica-acks.ts).
    it('rides out a master that stops answering until its replica is promoted', async () => {
      const wave = await createWave(3);
      await waitFor(
        'the wave to be running',
        () => events().some((e) => e.event === 'once-start' && wave.once.includes(e.taskId)),
        { timeoutMs: 30_000 },
      );
      // A master frozen past the node timeout (1.5 s) is failed over by the cluster itself,
      // as after a crash.
      const queueSlot = Number(
        cluster.cli(cluster.ports[0] as number, 'CLUSTER', 'KEYSLOT', '{bull}'),
      );
      const queueMaster = cluster.ownerOf(queueSlot).master;
      const frozen = cluster.ports.find(
        (port) => port !== queueMaster && cluster.cli(port, 'ROLE').startsWith('master'),
      );
      assert.ok(frozen !== undefined, 'a master besides the queue one');
      const sleep = debugSleep(frozen, 8);
      // Created while the master is frozen: those of its slots wait on it, and it executes and
      // acknowledges them when it wakes, replaced already. Each must still exist and end.
      const during = Promise.all([
        createTask(replica, 'once_job', { seconds: 1 }),
        createTask(replica, 'once_job', { seconds: 1 }),
        createTask(replica, 'durable_job', { seconds: 1 }),
        createTask(replica, 'durable_job', { seconds: 1 }),
      ]);
      during.catch(() => undefined); // awaited below; a failure before then must not crash the run
      await waitFor(
        'the cluster to fail the frozen master over',
        () => !stillMaster(cluster, frozen),
        {
          timeoutMs: 20_000,
        },
      );
      const slept = await sleep;
      assert.equal(slept.code, 0, `DEBUG SLEEP: ${slept.output}`);
      process.stdout.write(`# master ${frozen} froze; its replica took over\n`);
      const createdDuring = await during;
      const [onceDuring, durableDuring] = [createdDuring.slice(0, 2), createdDuring.slice(2)];
      const later = await createWave(1);
      const all = [
        ...[...wave.once, ...wave.durable, ...later.once, ...later.durable],
        ...[...onceDuring, ...durableDuring],
      ];
      const finished = await endAll(all, 75_000);
      const tally = [...finished.values()].reduce<Record<string, number>>((counts, status) => {
        counts[status] = (counts[status] ?? 0) + 1;
        return counts;
      }, {});
      process.stdout.write(`# after the frozen master: ${JSON.stringify(tally)}\n`);
      for (const id of [...wave.once, ...later.once, ...onceDuring]) {
        assert.ok(count('once-start', id) <= 1, `retry: false task ${id} started twice`);
      }
      for (const id of all) {
        assert.ok(['completed', 'failed'].includes(finished.get(id) ?? ''), `${id}`);
      }
      for (const id of [...later.once, ...later.durable]) {
        assert.equal(finished.get(id), 'completed', `task ${id} created after the failover`);
      }
    });
  });
}

/** `DEBUG SLEEP` blocks the node's one thread: to the cluster it is down until it wakes. */
function debugSleep(
  port: number,
  seconds: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn('redis-cli', ['-p', String(port), 'DEBUG', 'SLEEP', String(seconds)]);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code: output.includes('ERR') ? -1 : code, output }));
  });
}

/** True while `port` is a master in good standing (asked of another node: it may be frozen). */
function stillMaster(cluster: LocalCluster, port: number): boolean {
  const other = cluster.ports.find((p) => p !== port) as number;
  const nodes = cluster.cli(other, 'CLUSTER', 'NODES');
  const line = nodes.split('\n').find((l) => l.includes(`:${port}@`)) ?? '';
  return line.includes('master') && !line.includes('fail');
}
