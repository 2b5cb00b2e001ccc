import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

const NO_WORKER = /no taskrail worker is alive/;

if (!skipWithoutPostgres('serve --no-worker watch on postgres')) {
  /** The same watch as on Redis, read from the schema's fleet table. */
  describe('serve --no-worker watches for live workers on postgres', () => {
    it('warns once and shows taskrail_workers_alive 0 while no worker is alive, then 1', async () => {
      const schema = uniqueSchema();
      const store = urlWithSchema(schema);
      const dir = tempDir('taskrail-pg-noworker-');
      const tokens = join(dir.path, 'admin.json');
      writeFileSync(tokens, JSON.stringify({ 'adm-secret': 'ops' }));
      const children: Child[] = [];
      try {
        const { child: serve, url } = await startServing(
          [
            ...['serve', '--no-worker', '--port', '0', '--store', store],
            ...['--admin', `tokens:${tokens}`],
          ],
          { timeoutMs: 20_000 },
        );
        children.push(serve);
        const metricsUrl = url.replace(/\/mcp$/, '/metrics');
        const gauge = async (): Promise<string | undefined> => {
          const res = await fetch(metricsUrl, { headers: { authorization: 'Bearer adm-secret' } });
          return /^taskrail_workers_alive (\d+)$/m.exec(await res.text())?.[1];
        };
        await waitFor('the no-worker warning', () => NO_WORKER.test(serve.stderr()), {
          timeoutMs: 15_000,
        });
        assert.equal(await waitFor('the gauge', gauge), '0');
        children.push(await startWorker(['--store', store], { timeoutMs: 20_000 }));
        await waitFor('the gauge to count the worker', async () => (await gauge()) === '1', {
          timeoutMs: 15_000,
        });
        await waitFor('the recovery line', () => /worker is alive again/.test(serve.stderr()));
        assert.equal(serve.stderr().match(new RegExp(NO_WORKER, 'g'))?.length, 1, 'warned once');
      } finally {
        for (const child of children) await child.kill('SIGTERM');
        await dropSchema(schema);
        dir.remove();
      }
    });
  });
}
