import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import {
  dropSchema,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
  urlWithSchema,
} from './postgres-env.js';

if (!skipWithoutPostgres('fleet check across processes on postgres')) {
  describe('fleet check across processes on postgres', () => {
    it('warns at start-up when a worker serves other tools than a replica, and leaves on exit', async () => {
      const schema = uniqueSchema();
      const url = urlWithSchema(schema);
      const children: Child[] = [];
      try {
        const serving = await startServing(
          ['serve', '--no-worker', '--port', '0', '--store', url],
          {
            timeoutMs: 20_000,
          },
        );
        const replica = serving.child;
        children.push(replica);
        const worker = await startWorker(
          ['--store', url, '--tools', '.build/examples/custom-tools.js'],
          { timeoutMs: 20_000 },
        );
        children.push(worker);
        const warning = await waitFor('a fleet warning', () =>
          worker
            .stderr()
            .split('\n')
            .find((line) => line.includes('fleet mismatch')),
        );
        assert.match(warning, /only here: count_words:optional/);
        assert.match(warning, /only there: .*slow_compute:optional/);
        assert.doesNotMatch(replica.stderr(), /fleet mismatch/);
        const members = async () => (await sql(`SELECT member FROM "${schema}".fleet`)).length;
        assert.equal(await members(), 2);
        await worker.kill('SIGTERM');
        await waitFor('the worker to leave the fleet', async () => (await members()) === 1);
      } finally {
        for (const child of children) await child.kill('SIGTERM');
        await dropSchema(schema);
      }
    });
  });
}
