import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import {
  dropSchema,
  skipWithoutPostgres,
  uniqueSchema,
  urlWithSchema,
} from '../postgres/postgres-env.js';
import { rpc } from '../server/support.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import {
  callAsTask,
  CLI,
  countingRelay,
  startEverythingHttp,
  textOf,
  waitForTask,
  type Relay,
} from './support.js';

const ASKING = 'trigger-elicitation-request';
const HANDED_BACK = /run handed back/g;

/**
 * Two `taskrail worker`s behind `taskrail proxy --no-worker`. A plain upstream call (no
 * upstream task) that parked on an elicitation stays open in the worker that made it (the
 * holder); the re-run after the answer may be dispatched to the other worker. Worker A holds
 * every call here (B starts later); A is then paused (SIGSTOP) while the answers go in, so
 * B receives the re-runs and must hand them back rather than fail them; resumed, A takes them
 * back. Each worker reaches the upstream through its own counting relay.
 */
function suite(kind: string, storeUrl: () => string, cleanUp: () => Promise<unknown>): void {
  describe(`proxy workers: the re-run after an answer goes to the worker holding the call (${kind})`, () => {
    let upstream: Awaited<ReturnType<typeof startEverythingHttp>>;
    let relayA: Relay;
    let relayB: Relay;
    let proxy: Child;
    let workerA: Child;
    let workerB: Child;
    let url: string;
    const common = () => ['--store', storeUrl(), '--log-level', 'info'];
    const workerFor = (relay: Relay): Promise<Child> =>
      startWorker([...common(), '--upstream', relay.url], { main: CLI });
    const asked = () =>
      [...relayA.toolCalls, ...relayB.toolCalls].filter((n) => n === ASKING).length;
    const parkAll = async (count: number): Promise<{ taskId: string; key: string }[]> => {
      const ids = [];
      for (let i = 0; i < count; i += 1) ids.push(await callAsTask(url, ASKING, {}));
      return Promise.all(
        ids.map(async (taskId) => {
          const parked = await waitForTask(url, taskId, ['input_required', 'failed'], 60_000);
          assert.equal(parked['status'], 'input_required', JSON.stringify(parked));
          return { taskId, key: Object.keys(parked['inputRequests'] as object)[0] as string };
        }),
      );
    };
    const answer = (taskId: string, key: string) =>
      rpc(url, 'tasks/update', { taskId, inputResponses: { [key]: { action: 'decline' } } });

    before(async () => {
      upstream = await startEverythingHttp();
      relayA = await countingRelay(upstream.url);
      relayB = await countingRelay(upstream.url);
      const args = ['proxy', '--port', '0', '--no-worker', ...common(), '--upstream', upstream.url];
      ({ child: proxy, url } = await startServing(args, { main: CLI }));
      workerA = await workerFor(relayA);
    });
    after(async () => {
      workerA?.process.kill('SIGCONT');
      await workerA?.kill('SIGTERM');
      await workerB?.kill('SIGTERM');
      await proxy?.kill('SIGTERM');
      await relayA?.close();
      await relayB?.close();
      await upstream?.child.kill('SIGTERM');
      await cleanUp();
    });

    it('a re-run landing on the other worker is handed back and completes in the holder', async () => {
      const parked = await parkAll(3);
      assert.equal(relayA.toolCalls.filter((n) => n === ASKING).length, 3, 'A made every call');
      workerB = await workerFor(relayB);
      workerA.process.kill('SIGSTOP');
      for (const { taskId, key } of parked) await answer(taskId, key);
      await waitFor(
        'worker B to hand a re-run back',
        () => ((workerB.stderr().match(HANDED_BACK) ?? []).length > 0 ? true : undefined),
        { timeoutMs: 8_000, intervalMs: 50 },
      );
      workerA.process.kill('SIGCONT');
      for (const { taskId } of parked) {
        const done = await waitForTask(url, taskId, ['completed', 'failed'], 60_000);
        assert.equal(done['status'], 'completed', JSON.stringify(done));
        assert.match(textOf(done), /User declined/);
      }
      assert.equal(asked(), 3, 'the upstream was called once per task');
    });

    it('when the holder died, the answered call ends "interrupted" and is not called again', async () => {
      const before = asked();
      const madeByA = relayA.toolCalls.length;
      const [parked] = await parkAll(1);
      assert.equal(asked(), before + 1);
      const holder = relayA.toolCalls.length > madeByA ? workerA : workerB;
      await holder.kill('SIGKILL');
      const { taskId, key } = parked as { taskId: string; key: string };
      await answer(taskId, key);
      const done = await waitForTask(url, taskId, ['completed', 'failed'], 90_000);
      assert.equal(done['status'], 'failed', JSON.stringify(done));
      assert.match(JSON.stringify(done['error']), /interrupted/);
      assert.equal(asked(), before + 1, 'not called again');
    });
  });
}

if (!skipWithoutRedis('proxy workers resume routing on Redis')) {
  const prefix = uniquePrefix();
  suite(
    'redis',
    () => urlWithPrefix(prefix),
    () => deletePrefix(prefix),
  );
}
if (!skipWithoutPostgres('proxy workers resume routing on Postgres')) {
  const schema = uniqueSchema();
  suite(
    'postgres',
    () => urlWithSchema(schema),
    () => dropSchema(schema),
  );
}
