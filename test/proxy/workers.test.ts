import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
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

/**
 * `taskrail proxy --no-worker` only lists and enqueues; a `taskrail worker` given the same
 * upstream makes the calls. The worker reaches the upstream through a counting relay and the
 * proxy does not, so the relay's count says which process called.
 */
function suite(kind: string, storeUrl: () => string, cleanUp: () => Promise<unknown>): void {
  describe(`taskrail proxy --no-worker with a taskrail worker (${kind})`, () => {
    let upstream: Awaited<ReturnType<typeof startEverythingHttp>>;
    let relay: Relay;
    let proxy: Child;
    let worker: Child;
    let url: string;

    before(async () => {
      upstream = await startEverythingHttp();
      relay = await countingRelay(upstream.url);
      const common = ['--store', storeUrl(), '--log-level', 'warn'];
      const args = ['proxy', '--port', '0', '--no-worker', ...common, '--upstream', upstream.url];
      ({ child: proxy, url } = await startServing(args, { main: CLI }));
      worker = await startWorker([...common, '--upstream', relay.url], { main: CLI });
    });
    after(async () => {
      await worker?.kill('SIGTERM');
      await proxy?.kill('SIGTERM');
      await relay?.close();
      await upstream?.child.kill('SIGTERM');
      await cleanUp();
    });

    it('runs a sum in the worker, which calls the upstream once', async () => {
      const sum = await callAsTask(url, 'get-sum', { a: 30, b: 12 });
      const done = await waitForTask(url, sum, ['completed', 'failed']);
      assert.equal(textOf(done), 'The sum of 30 and 12 is 42.');
      assert.deepEqual(
        relay.toolCalls.filter((name) => name === 'get-sum'),
        ['get-sum'],
      );
    });

    it("parks on the upstream's elicitation and the worker sends the answer back", async () => {
      const asking = await callAsTask(url, 'trigger-elicitation-request', {});
      const parked = await waitForTask(url, asking, ['input_required', 'failed'], 60_000);
      assert.equal(parked['status'], 'input_required');
      const key = Object.keys(parked['inputRequests'] as object)[0] as string;
      await rpc(url, 'tasks/update', {
        taskId: asking,
        inputResponses: { [key]: { action: 'decline' } },
      });
      const done = await waitForTask(url, asking, ['completed', 'failed'], 60_000);
      assert.match(textOf(done), /User declined/);
      assert.equal(relay.toolCalls.filter((n) => n === 'trigger-elicitation-request').length, 1);
    });
  });
}

if (!skipWithoutRedis('taskrail proxy with workers on Redis')) {
  const prefix = uniquePrefix();
  suite(
    'redis',
    () => urlWithPrefix(prefix),
    () => deletePrefix(prefix),
  );
}
if (!skipWithoutPostgres('taskrail proxy with workers on Postgres')) {
  const schema = uniqueSchema();
  suite(
    'postgres',
    () => urlWithSchema(schema),
    () => dropSchema(schema),
  );
}
