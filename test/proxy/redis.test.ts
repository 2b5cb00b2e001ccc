import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/wait.js';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { rpc } from '../server/support.js';
import { callAsTask, CLI, EVERYTHING_STDIO, textOf, waitForTask } from './support.js';

/** `taskrail proxy --store redis://…`: the upstream's calls run through BullMQ in the proxy. */
if (!skipWithoutRedis('taskrail proxy on Redis')) {
  describe('taskrail proxy on a Redis store (server-everything on stdio)', () => {
    const prefix = uniquePrefix();
    let proxy: Child;
    let url: string;

    before(async () => {
      const args = [
        'proxy',
        '--port',
        '0',
        '--store',
        urlWithPrefix(prefix),
        '--log-level',
        'warn',
      ];
      ({ child: proxy, url } = await startServing([...args, ...EVERYTHING_STDIO], { main: CLI }));
    });
    after(async () => {
      await proxy?.kill('SIGTERM');
      await deletePrefix(prefix);
    });

    it('runs a sum and an elicitation round trip as tasks', async () => {
      const sum = await callAsTask(url, 'get-sum', { a: 30, b: 12 });
      assert.equal(
        textOf(await waitForTask(url, sum, ['completed', 'failed'])),
        'The sum of 30 and 12 is 42.',
      );
      await waitFor('the elicitation tool to be listed', async () => {
        const reply = await rpc(url, 'tools/list', {});
        return JSON.stringify(reply.body).includes('trigger-elicitation-request')
          ? true
          : undefined;
      });
      const asking = await callAsTask(url, 'trigger-elicitation-request', {});
      const parked = await waitForTask(url, asking, ['input_required', 'failed']);
      const key = Object.keys(parked['inputRequests'] as object)[0] as string;
      await rpc(url, 'tasks/update', {
        taskId: asking,
        inputResponses: { [key]: { action: 'decline' } },
      });
      const done = await waitForTask(url, asking, ['completed', 'failed']);
      assert.match(textOf(done), /User declined/);
    });
  });
}
